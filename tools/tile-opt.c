/* tile-opt: runs named passes on textual tile IR and prints the result, so each pass is
 * tested alone (tests/passes, with FileCheck), like triton-opt or mlir-opt.
 *
 *   tile-opt [--pass=NAME]... [--pipeline] [--verify] [--print-after=NAME|all] [-o OUT] FILE.tir
 *
 * Passes run in the order given; --pipeline runs the whole default pipeline (after any
 * --pass given before it, in order).  FILE "-" reads stdin.  Errors go to stderr and
 * exit 1; bad usage exits 2. */
#include "passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_STEPS = 64 };

static void usage(FILE *out) {
    fprintf(out, "usage: tile-opt [--pass=NAME]... [--pipeline] [--verify] [--print-after=NAME|all]\n"
                 "                [-o OUT] FILE.tir\n"
                 "passes:\n");
    for (int i = 0; i < tir_pipeline_len; i++)
        fprintf(out, "  %-14s %s\n", tir_pipeline[i].name, tir_pipeline[i].what);
}

static void diag_stderr(void *ud, const char *msg) {
    const char *file = ud;
    /* Parser messages start with LINE:COL; prefix the file so editors can jump there. */
    if (msg[0] >= '0' && msg[0] <= '9')
        fprintf(stderr, "%s:%s\n", file, msg);
    else
        fprintf(stderr, "%s\n", msg);
}

static char *read_all(FILE *in, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return NULL;
    for (;;) {
        if (n == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                return NULL;
            }
            buf = bigger;
        }
        size_t got = fread(buf + n, 1, cap - n, in);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(in)) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int main(int argc, char **argv) {
    /* A step is a pass, or NULL for "the whole pipeline". */
    const TirPassInfo *steps[MAX_STEPS];
    int nsteps = 0;
    bool verify = false;
    const char *out_path = NULL, *in_path = NULL, *print_after = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--pass=", 7) == 0) {
            const TirPassInfo *p = tir_pass_find(a + 7);
            if (!p) {
                fprintf(stderr, "tile-opt: error: no pass named '%s'\n", a + 7);
                usage(stderr);
                return 2;
            }
            if (nsteps == MAX_STEPS) {
                fprintf(stderr, "tile-opt: error: more than %d passes\n", MAX_STEPS);
                return 2;
            }
            steps[nsteps++] = p;
        } else if (strcmp(a, "--pipeline") == 0) {
            if (nsteps == MAX_STEPS) {
                fprintf(stderr, "tile-opt: error: more than %d passes\n", MAX_STEPS);
                return 2;
            }
            steps[nsteps++] = NULL;
        } else if (strcmp(a, "--verify") == 0) {
            verify = true;
        } else if (strncmp(a, "--print-after=", 14) == 0) {
            print_after = a + 14;
            if (strcmp(print_after, "all") != 0 && !tir_pass_find(print_after)) {
                fprintf(stderr, "tile-opt: error: no pass named '%s'\n", print_after);
                return 2;
            }
        } else if (strcmp(a, "-o") == 0) {
            if (i + 1 == argc) {
                fprintf(stderr, "tile-opt: error: -o needs a file name\n");
                usage(stderr);
                return 2;
            }
            out_path = argv[++i];
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "tile-opt: error: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (in_path) {
            fprintf(stderr, "tile-opt: error: more than one input file ('%s', '%s')\n", in_path, a);
            usage(stderr);
            return 2;
        } else {
            in_path = a;
        }
    }
    if (!in_path) {
        fprintf(stderr, "tile-opt: error: no input file\n");
        usage(stderr);
        return 2;
    }

    FILE *in = strcmp(in_path, "-") == 0 ? stdin : fopen(in_path, "rb");
    if (!in) {
        fprintf(stderr, "tile-opt: error: cannot open '%s'\n", in_path);
        return 1;
    }
    size_t len = 0;
    char *text = read_all(in, &len);
    if (in != stdin)
        fclose(in);
    if (!text) {
        fprintf(stderr, "tile-opt: error: cannot read '%s'\n", in_path);
        return 1;
    }

    int status = 0;
    TirArena *arena = tir_arena_new();
    TirModule *m = tir_parse_module(arena, in_path, text, len, diag_stderr, (void *)in_path);
    free(text);
    if (!m)
        status = 1;
    if (!status && verify && tir_verify_module(m, diag_stderr, (void *)in_path) != 0)
        status = 1;

    TirPassContext ctx = {
        .arch = TIR_TARGET_DEFAULT,
        .opt_level = 3,
        .verify_each = verify,
        .diag = diag_stderr,
        .ud = (void *)in_path,
        .print_after = print_after,
        .dump = stderr,
    };
    for (int i = 0; i < nsteps && !status; i++) {
        int errors = steps[i] ? tir_run_pass(m, &ctx, steps[i]) : tir_run_pipeline(m, &ctx, NULL);
        if (errors)
            status = 1;
    }

    if (!status) {
        FILE *out = out_path ? fopen(out_path, "w") : stdout;
        if (!out) {
            fprintf(stderr, "tile-opt: error: cannot write '%s'\n", out_path);
            status = 1;
        } else {
            tir_print_module(out, m);
            if (fflush(out) != 0 || (out != stdout && fclose(out) != 0)) {
                fprintf(stderr, "tile-opt: error: cannot write '%s'\n", out_path ? out_path : "stdout");
                status = 1;
            }
        }
    }
    tir_arena_free(arena);
    return status;
}
