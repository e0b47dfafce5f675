/* fe_driver FILE [-D NAME=V[,V...]]...
 *
 * The front end alone, for the golden tests of tests/frontend/sema: parse, check,
 * expand variants (the first value of each list), elaborate the first variant of
 * every kernel, verify the module, and print the IR, or every diagnostic, to stdout.
 * Exit 1 when there were errors, 2 on bad usage.
 *
 * Since the golden tests run without arguments, a case can carry its own:
 *   // fe_driver: -D N=64            more command-line arguments (defines)
 *   // launch: n=1000 cols=300       evaluate grid and runtime where clauses of every
 *                                    kernel's first variant on these scalar arguments */
#include "frontend.h"
#include "../common/read_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_sink(void *ud, const char *msg) {
    (void)ud;
    size_t n = strlen(msg);
    fputs(msg, stdout);
    if (n == 0 || msg[n - 1] != '\n')
        fputc('\n', stdout);
}

/* "NAME=V,W" -> a define with one value per comma-separated item. */
static bool parse_define(TirArena *a, const char *arg, TfDefine *d) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return false;
    d->name = tir_strndup(a, arg, (size_t)(eq - arg));
    int n = 1;
    for (const char *p = eq + 1; *p; p++)
        n += *p == ',';
    d->ivals = tir_alloc(a, sizeof(int64_t) * n);
    d->fvals = tir_alloc(a, sizeof(double) * n);
    d->is_float = tir_alloc(a, sizeof(bool) * n);
    d->nvals = 0;
    const char *p = eq + 1;
    for (int i = 0; i < n; i++) {
        char *end;
        long long iv = strtoll(p, &end, 0);
        if (end != p && (*end == ',' || *end == 0)) {
            d->ivals[i] = iv;
            d->fvals[i] = (double)iv;
        } else {
            double fv = strtod(p, &end);
            if (end == p || (*end != ',' && *end != 0))
                return false;
            d->fvals[i] = fv;
            d->ivals[i] = (int64_t)fv;
            d->is_float[i] = true;
        }
        d->nvals++;
        p = *end ? end + 1 : end;
    }
    return true;
}

/* The text after `tag` on a line of src that starts with it, up to the line's end. */
static char *directive(const char *src, const char *tag) {
    size_t tl = strlen(tag);
    for (const char *p = src; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, tag, tl))
            continue;
        const char *e = strchr(p + tl, '\n');
        size_t n = e ? (size_t)(e - p - tl) : strlen(p + tl);
        char *r = malloc(n + 1);
        memcpy(r, p + tl, n);
        r[n] = 0;
        return r;
    }
    return NULL;
}

/* Prints the launch-time clauses of kernel k for the arguments in `line`
 * ("name=value ..."): the grid and each runtime where clause's outcome. */
static void print_launch(const AstFile *f, int k, const TfVariant *v, const char *line) {
    const AstKernel *kn = &f->kernels[k];
    TfArgValue *args = calloc((size_t)kn->nparams + 1, sizeof *args);
    char *copy = strdup(line);
    for (char *tok = strtok(copy, " \t"); tok; tok = strtok(NULL, " \t")) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = 0;
        for (int i = 0; i < kn->nparams; i++)
            if (!strcmp(kn->params[i].name, tok)) {
                args[i].ival = strtoll(eq + 1, NULL, 0);
                args[i].fval = strtod(eq + 1, NULL);
            }
    }
    int64_t grid[3];
    int g = tf_eval_grid(f, k, v, args, grid);
    if (g == 0)
        printf("launch %s: grid (%lld, %lld, %lld)\n", kn->name, (long long)grid[0], (long long)grid[1],
               (long long)grid[2]);
    else if (g > 0)
        printf("launch %s: grid expression %d has no value\n", kn->name, g - 1);
    else
        printf("launch %s: no grid\n", kn->name);
    for (int i = 0; i < kn->nwheres; i++)
        printf("launch %s: where #%d is %s\n", kn->name, i,
               tf_where_is_runtime(f, k, i) ? "checked at launch" : "compile-time");
    int w = tf_eval_where(f, k, v, args);
    if (w < 0)
        printf("launch %s: every where clause holds\n", kn->name);
    else
        printf("launch %s: where #%d fails\n", kn->name, w);
    free(copy);
    free(args);
}

int main(int argc, char **argv) {
    const char *path = NULL;
    TirArena *arena = tir_arena_new();
    TfDefine *defs = tir_alloc(arena, sizeof(TfDefine) * (size_t)(argc + 64));
    int ndefs = 0;
    for (int i = 1; i < argc; i++) {
        const char *d = NULL;
        if (!strcmp(argv[i], "-D") && i + 1 < argc)
            d = argv[++i];
        else if (!strncmp(argv[i], "-D", 2) && argv[i][2])
            d = argv[i] + 2;
        else if (!path && argv[i][0] != '-') {
            path = argv[i];
            continue;
        }
        if (!d || !parse_define(arena, d, &defs[ndefs++])) {
            fprintf(stderr, "usage: fe_driver FILE [-D NAME=V[,V...]]...\n");
            tir_arena_free(arena);
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: fe_driver FILE [-D NAME=V[,V...]]...\n");
        tir_arena_free(arena);
        return 2;
    }
    size_t len = 0;
    char *src = read_file(path, &len);
    if (!src) {
        fprintf(stderr, "fe_driver: cannot read %s\n", path);
        tir_arena_free(arena);
        return 2;
    }
    char *extra = directive(src, "// fe_driver:");
    if (extra) {
        char *save = NULL;
        for (char *tok = strtok_r(extra, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
            const char *d = !strcmp(tok, "-D") ? strtok_r(NULL, " \t", &save) : !strncmp(tok, "-D", 2) ? tok + 2 : NULL;
            if (!d || ndefs >= argc + 63 || !parse_define(arena, d, &defs[ndefs++])) {
                fprintf(stderr, "fe_driver: bad '// fe_driver:' line in %s\n", path);
                return 2;
            }
        }
    }
    char *launch = directive(src, "// launch:");
    TfDiag diag;
    tf_diag_init(&diag, path, src, len, print_sink, NULL);
    int rc = 0;
    AstFile *file = tf_parse(arena, &diag);
    if (!file || tf_check(arena, file, &diag) > 0)
        rc = 1;
    TirModule *m = tir_module_new(arena);
    m->source_name = path;
    bool checked = rc == 0;
    TfVariant **first = calloc(file && checked ? (size_t)file->nkernels + 1 : 1, sizeof *first);
    for (int k = 0; checked && k < file->nkernels; k++) {
        TfVariant *vs;
        int n = tf_variants(arena, file, k, defs, ndefs, true, &vs, &diag);
        if (n <= 0 || !tf_elaborate(m, file, k, &vs[0], &diag))
            rc = 1;
        if (n > 0)
            first[k] = &vs[0];
    }
    if (diag.nerrors)
        rc = 1;
    if (rc == 0 && tir_verify_module(m, print_sink, NULL) != 0)
        rc = 1;
    if (rc == 0)
        tir_print_module(stdout, m);
    for (int k = 0; rc == 0 && launch && k < file->nkernels; k++)
        print_launch(file, k, first[k], launch);
    free(first);
    free(extra);
    free(launch);
    free(src);
    tir_arena_free(arena);
    return rc;
}
