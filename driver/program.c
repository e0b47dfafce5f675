/* Programs: loading (parse + check), and what a file declares: kernels, their
 * parameters and tune spaces. */
#include "driver.h"

#include <stdlib.h>
#include <string.h>

int driver_param_scalar(const AstParam *p) {
    return p->type_name ? tir_scalar_from_name(p->type_name, strlen(p->type_name)) : -1;
}

/* Evaluates a tune value: a literal number, a negation, simple arithmetic, or a
 * file-level constant (depth-limited, so a cycle cannot recurse forever). */
static bool eval_literal(const AstFile *f, const AstNode *e, int depth, double *out) {
    if (!e || depth > 32)
        return false;
    double x, y;
    switch (e->kind) {
    case AST_INT:
    case AST_BOOL: *out = (double)e->ival; return true;
    case AST_FLOAT: *out = e->fval; return true;
    case AST_UNARY:
        if (e->op != AST_OP_NEG || !eval_literal(f, e->a, depth + 1, &x))
            return false;
        *out = -x;
        return true;
    case AST_BINARY:
        if (!eval_literal(f, e->a, depth + 1, &x) || !eval_literal(f, e->b, depth + 1, &y))
            return false;
        switch (e->op) {
        case AST_OP_ADD: *out = x + y; return true;
        case AST_OP_SUB: *out = x - y; return true;
        case AST_OP_MUL: *out = x * y; return true;
        default: return false;
        }
    case AST_NAME:
        for (int i = 0; i < f->nconsts; i++)
            if (e->name && !strcmp(f->consts[i].name, e->name))
                return eval_literal(f, f->consts[i].value, depth + 1, out);
        return false;
    default: return false;
    }
}

static void collect_tunes(tile_program *p) {
    const AstFile *f = p->file;
    p->tunes = tir_alloc(p->arena, (f->nkernels + 1) * sizeof *p->tunes);
    for (int k = 0; k < f->nkernels; k++) {
        const AstKernel *kn = &f->kernels[k];
        p->tunes[k] = tir_alloc(p->arena, (kn->ntunes + 1) * sizeof **p->tunes);
        for (int i = 0; i < kn->ntunes; i++) {
            DriverTune *t = &p->tunes[k][i];
            const AstNode *list = kn->tunes[i].value;
            t->name = kn->tunes[i].name;
            t->ok = list && list->kind == AST_LIST;
            if (!t->ok)
                continue;
            t->values = tir_alloc(p->arena, (list->nlist + 1) * sizeof *t->values);
            for (int j = 0; j < list->nlist && t->ok; j++)
                t->ok = eval_literal(f, list->list[j], 0, &t->values[j]);
            t->nvalues = t->ok ? list->nlist : 0;
        }
    }
}

tile_status tile_program_load_source(tile_ctx *c, const char *name, const char *src, size_t len, tile_program **out) {
    if (!out)
        return TILE_ERR_INVALID;
    *out = NULL;
    if (!c || (!src && len))
        return TILE_ERR_INVALID;
    tile_program *p = calloc(1, sizeof *p);
    if (!p)
        return TILE_ERR_INVALID;
    p->ctx = c;
    p->arena = tir_arena_new();
    /* The lexer may look one byte past the end: keep a NUL there. */
    char *copy = tir_alloc(p->arena, len + 1);
    if (len)
        memcpy(copy, src, len);
    const char *path = tir_strdup(p->arena, name ? name : "<source>");
    tf_diag_init(&p->diag, path, copy, len, driver_sink, c);
    double t0 = driver_now();
    p->file = tf_parse(p->arena, &p->diag);
    double t1 = driver_now();
    driver_time(c, TILE_PHASE_PARSE, t1 - t0);
    if (p->file)
        tf_check(p->arena, p->file, &p->diag);
    driver_time(c, TILE_PHASE_SEMA, driver_now() - t1);
    if (!p->file || p->diag.nerrors) {
        tile_program_free(p);
        return TILE_ERR_COMPILE;
    }
    collect_tunes(p);
    *out = p;
    return TILE_OK;
}

tile_status tile_program_load_file(tile_ctx *c, const char *path, tile_program **out) {
    if (!out)
        return TILE_ERR_INVALID;
    *out = NULL;
    if (!c || !path)
        return TILE_ERR_INVALID;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        driver_error(c, "cannot open '%s'", path);
        return TILE_ERR_IO;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap && len >= DRIVER_MAX_SOURCE_BYTES) {
            /* /dev/zero or a runaway pipe: stop instead of eating all memory */
            free(buf);
            fclose(fp);
            driver_error(c, "'%s' is larger than %d MiB, the most a source file may hold", path,
                         DRIVER_MAX_SOURCE_BYTES >> 20);
            return TILE_ERR_IO;
        }
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            char *grown = realloc(buf, cap);
            if (!grown) {
                free(buf);
                fclose(fp);
                driver_error(c, "'%s' is too large to read", path);
                return TILE_ERR_IO;
            }
            buf = grown;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0)
            break;
    }
    bool failed = ferror(fp);
    fclose(fp);
    if (failed) {
        free(buf);
        driver_error(c, "cannot read '%s'", path);
        return TILE_ERR_IO;
    }
    tile_status s = tile_program_load_source(c, path, buf, len, out);
    free(buf);
    return s;
}

void tile_program_free(tile_program *p) {
    if (!p)
        return;
    tir_arena_free(p->arena);
    free(p);
}

int tile_program_kernel_count(const tile_program *p) {
    return p ? p->file->nkernels : 0;
}

int tile_program_find_kernel(const tile_program *p, const char *name) {
    for (int k = 0; p && name && k < p->file->nkernels; k++)
        if (!strcmp(p->file->kernels[k].name, name))
            return k;
    return -1;
}

static bool kernel_ok(const tile_program *p, int k) {
    return p && k >= 0 && k < p->file->nkernels;
}

const char *tile_kernel_name(const tile_program *p, int k) {
    return kernel_ok(p, k) ? p->file->kernels[k].name : NULL;
}

bool tile_kernel_has_grid(const tile_program *p, int k) {
    return kernel_ok(p, k) && p->file->kernels[k].ngrid > 0;
}

int tile_kernel_param_count(const tile_program *p, int k) {
    return kernel_ok(p, k) ? p->file->kernels[k].nparams : 0;
}

tile_status tile_kernel_param(const tile_program *p, int k, int i, tile_param_info *out) {
    if (!kernel_ok(p, k) || i < 0 || i >= p->file->kernels[k].nparams || !out)
        return TILE_ERR_INVALID;
    const AstParam *ap = &p->file->kernels[k].params[i];
    int s = driver_param_scalar(ap);
    out->name = ap->name;
    out->type = s < 0 ? TILE_I32 : (tile_scalar)s;
    out->is_pointer = ap->is_ptr;
    out->is_const = ap->is_const;
    return TILE_OK;
}

int tile_kernel_tune_count(const tile_program *p, int k) {
    return kernel_ok(p, k) ? p->file->kernels[k].ntunes : 0;
}

tile_status tile_kernel_tune(const tile_program *p, int k, int i, const char **name, const double **values,
                             int *nvalues) {
    if (!kernel_ok(p, k) || i < 0 || i >= p->file->kernels[k].ntunes)
        return TILE_ERR_INVALID;
    const DriverTune *t = &p->tunes[k][i];
    if (name)
        *name = t->name;
    if (values)
        *values = t->values;
    if (nvalues)
        *nvalues = t->nvalues;
    return t->ok ? TILE_OK : TILE_ERR_UNSUPPORTED;
}
