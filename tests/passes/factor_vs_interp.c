/* factor_ptrs checked on the CPU: matmul's generic form (inputs/factor_matmul_generic.tir:
 * tilec examples/matmul.tile --emit=tir, BM=BN=64, BK=32, 4 warps, no facts about the
 * arguments) is run by the interpreter as it is, after the pipeline through factor_ptrs,
 * and after the whole pipeline (software_pipeline, smem_alloc, barriers on top), on the
 * same random inputs; C must agree bit for bit (the rebuilt pointers are the carried ones,
 * element by element).  The factored IR must carry no pointer tile in its loop and at
 * least two i64 offsets, so the comparison is not vacuous.  The strides cover row-major
 * operands, transposed A and B (a stride of 1 across rows), padded leading dimensions and
 * a strided C; sizes cover masked M/N/K tails, K = 0 and several K steps.
 * inputs/factor_matmul_unit.tir is the unit form (tilec --emit=tir --assume-one=stride_ak,
 * stride_bn,stride_cn --assume-div16=a,b,c: unit strides, no alignment of the rows): its
 * loads have a unit stride but move one element at a time, factored since session 10.
 * Usage: factor_vs_interp FILE.tir */
#include "interp.h"
#include "passes.h"
#include "../common/parse_copies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_fail;

static void diag(void *ud, const char *msg) {
    (void)ud;
    fprintf(stderr, "diag: %s\n", msg);
}

/* [0]: for-carried tiles of pointers, [1]: for-carried i64 scalars */
static bool count_carried(TirOp *op, void *ud) {
    int *n = ud;
    if (op->code != TIR_OP_FOR || op->nregion != 1)
        return true;
    TirBlock *body = op->region[0];
    for (int i = 1; i < body->nargs; i++) {
        TirType t = body->args[i]->ty;
        if (tir_type_is_tile(t) && t.ptr)
            n[0]++;
        if (!tir_type_is_tile(t) && !t.ptr && t.elem == TIR_I64)
            n[1]++;
    }
    return true;
}

static uint64_t g_rng = 777;
static uint16_t rnd_f16(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    float x = (float)((g_rng >> 40) % 2001) / 1000.0f - 1.0f;
    return tir_f32_to_f16(x);
}

typedef struct {
    int M, N, K;
    int64_t am, ak, bk, bn, cm, cn; /* strides in elements */
} Case;

static int run(TirFunc *k, const Case *c, uint16_t *a, uint16_t *b, uint16_t *out, size_t na, size_t nb, size_t nc) {
    TirBuffer bufs[3] = {{a, na * 2, "a"}, {b, nb * 2, "b"}, {out, nc * 2, "c"}};
    TirArg args[12] = {{.p = a},     {.p = b},     {.p = out},   {.i = c->M},  {.i = c->N},  {.i = c->K},
                       {.i = c->am}, {.i = c->ak}, {.i = c->bk}, {.i = c->bn}, {.i = c->cm}, {.i = c->cn}};
    TirInterpOptions o = {{((c->M + 63) / 64) * ((c->N + 63) / 64), 1, 1}, bufs, 3, diag, NULL, NULL, false};
    return tir_interp_run(k, args, &o);
}

/* Elements a matrix of R x C with strides (sr, sc) spans. */
static size_t span(int R, int C, int64_t sr, int64_t sc) {
    if (R == 0 || C == 0)
        return 1;
    return (size_t)((R - 1) * sr + (C - 1) * sc + 1);
}

int main(int argc, char **argv) {
    TirArena *ar = tir_arena_new();
    TirModule *mods[3];
    char *text;
    int rc = parse_copies(argc, argv, "factor_vs_interp", ar, diag, &text, mods, 3);
    if (rc)
        return rc;
    TirModule *ref = mods[0], *fac = mods[1], *all = mods[2];
    TirPassContext ctx = {.arch = "sm_80", .opt_level = 3, .verify_each = true, .diag = diag};
    if (tir_run_pipeline(fac, &ctx, "factor_ptrs") != 0 || tir_run_pipeline(all, &ctx, "barriers") != 0) {
        fprintf(stderr, "the pipeline failed\n");
        return 1;
    }
    int before[2] = {0, 0}, after[2] = {0, 0};
    tir_walk_func(ref->first, count_carried, before);
    tir_walk_func(fac->first, count_carried, after);
    if (before[0] < 2 || after[0] != 0 || after[1] < 2) {
        fprintf(stderr, "carried pointer tiles %d -> %d, i64 offsets %d -> %d (want >= 2 -> 0, >= 2)\n", before[0],
                after[0], before[1], after[1]);
        g_fail++;
    }
    static const Case cases[] = {
        {64, 64, 32, 32, 1, 64, 1, 64, 1},        /* row-major */
        {48, 80, 40, 40, 1, 80, 1, 80, 1},        /* masked tails in M, N and K */
        {100, 70, 96, 1, 100, 70, 1, 70, 1},      /* A transposed */
        {64, 50, 70, 70, 1, 1, 70, 50, 1},        /* B transposed */
        {70, 64, 33, 37, 1, 67, 1, 1, 70},        /* padded rows, C column-major */
        {16, 16, 0, 1, 1, 16, 1, 16, 1},          /* K = 0: the loop never runs */
        {128, 64, 160, 3, 384, 64 * 2, 2, 64, 1}, /* strides > 1 in both dimensions */
    };
    /* The unit form (the parameters marked {one}: row-major operands, pointers aligned,
     * sizes anything) runs row-major cases with odd leading dimensions only. */
    static const Case unit_cases[] = {
        {64, 64, 32, 33, 1, 65, 1, 67, 1},    /* row-major, padded rows */
        {48, 80, 40, 41, 1, 81, 1, 83, 1},    /* masked tails in M, N and K */
        {100, 70, 95, 97, 1, 71, 1, 71, 1},   /* K not a multiple of 8 */
        {16, 16, 0, 17, 1, 16, 1, 16, 1},     /* K = 0: the loop never runs */
        {128, 64, 161, 161, 1, 65, 1, 65, 1}, /* several K steps and a tail */
    };
    bool unit = strstr(text, "{one}") != NULL;
    const Case *cs = unit ? unit_cases : cases;
    size_t ncases = unit ? sizeof unit_cases / sizeof unit_cases[0] : sizeof cases / sizeof cases[0];
    for (size_t s = 0; s < ncases; s++) {
        const Case *c = &cs[s];
        size_t na = span(c->M, c->K, c->am, c->ak), nb = span(c->K, c->N, c->bk, c->bn),
               nc = span(c->M, c->N, c->cm, c->cn);
        uint16_t *a = malloc(na * 2), *b = malloc(nb * 2), *out[3];
        for (size_t i = 0; i < na; i++)
            a[i] = rnd_f16();
        for (size_t i = 0; i < nb; i++)
            b[i] = rnd_f16();
        TirFunc *k[3] = {ref->first, fac->first, all->first};
        const char *what[3] = {"reference", "factored", "whole pipeline"};
        for (int v = 0; v < 3; v++) {
            out[v] = malloc(nc * 2);
            memset(out[v], 0xff, nc * 2);
            int e = run(k[v], c, a, b, out[v], na, nb, nc);
            size_t written = 0;
            for (size_t i = 0; i < nc; i++)
                written += out[v][i] != 0xffff;
            if (e) {
                fprintf(stderr, "case %zu: interpreter errors %d (%s)\n", s, e, what[v]);
                g_fail++;
            } else if (written < (size_t)c->M * (size_t)c->N / 2) {
                fprintf(stderr, "case %zu: only %zu elements of C written (%s)\n", s, written, what[v]);
                g_fail++;
            } else if (v && memcmp(out[0], out[v], nc * 2) != 0) {
                size_t i = 0;
                while (out[0][i] == out[v][i])
                    i++;
                fprintf(stderr, "case %zu (M=%d N=%d K=%d): c[%zu] is %04x %s, %04x before\n", s, c->M, c->N, c->K, i,
                        out[v][i], what[v], out[0][i]);
                g_fail++;
            }
        }
        free(a);
        free(b);
        for (int v = 0; v < 3; v++)
            free(out[v]);
    }
    tir_arena_free(ar);
    free(text);
    if (!g_fail)
        printf("factor_ptrs: the factored matmul equals the reference at every size and stride\n");
    return g_fail ? 1 : 0;
}
