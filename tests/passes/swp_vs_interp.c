/* The software-pipelining pass checked on the CPU: a matmul variant's IR (after
 * canonicalize, with the div16 facts of tilec --div16) is run by the interpreter before
 * the pipeline and after every pass through `barriers`, on the same random inputs; the
 * outputs must agree bit for bit (the ring only moves data; dot is computed the same
 * way), and the pipelined IR must contain the ring (smem_alloc, async copies, waits) so
 * the comparison is not vacuous.  Sizes cover masked M/N tails, K shorter than the
 * prologue (copies past the end), K = 0 (a loop that never runs) and several rounds of
 * the ring.  With barriers in the IR the interpreter also checks each read of a stage
 * follows the wait that lands it and a barrier, and each overwrite follows a barrier.
 * inputs/swp_matmul_narrow.tir is the same kernel without the strides' div16 facts: its
 * loads fill the ring through registers (load + smem_store) instead of cp.async.
 * Usage: swp_vs_interp FILE.tir */
#include "interp.h"
#include "passes.h"
#include "../common/parse_copies.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_fail;
static char g_diag[4096];

static void diag(void *ud, const char *msg) {
    (void)ud;
    size_t n = strlen(g_diag);
    snprintf(g_diag + n, sizeof g_diag - n, "%s\n", msg);
    fprintf(stderr, "diag: %s\n", msg);
}

static bool has_op(TirOp *op, void *ud) {
    int *want = ud;
    if (op->code == want[0])
        want[1]++;
    return true;
}

static int count_ops(TirFunc *f, int code) {
    int w[2] = {code, 0};
    tir_walk_func(f, has_op, w);
    return w[1];
}

static uint64_t g_rng = 12345;
static uint16_t rnd_f16(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    float x = (float)((g_rng >> 40) % 2001) / 1000.0f - 1.0f;
    return tir_f32_to_f16(x);
}

static int run(TirFunc *k, int M, int N, int K, uint16_t *a, uint16_t *b, uint16_t *c, size_t na, size_t nb,
               size_t nc) {
    TirBuffer bufs[3] = {{a, na * 2, "a"}, {b, nb * 2, "b"}, {c, nc * 2, "c"}};
    TirArg args[9] = {{.p = a}, {.p = b}, {.p = c}, {.i = M}, {.i = N}, {.i = K}, {.i = K}, {.i = N}, {.i = N}};
    int64_t bm = 64, bn = 64;
    for (int i = 0; i < k->nconsts; i++) {
        if (!strcmp(k->consts[i].name, "BM"))
            bm = k->consts[i].ival;
        if (!strcmp(k->consts[i].name, "BN"))
            bn = k->consts[i].ival;
    }
    TirInterpOptions o = {{((M + bm - 1) / bm) * ((N + bn - 1) / bn), 1, 1}, bufs, 3, diag, NULL, NULL, false};
    return tir_interp_run(k, args, &o);
}

int main(int argc, char **argv) {
    TirArena *ar = tir_arena_new();
    TirModule *mods[2];
    char *text;
    int rc = parse_copies(argc, argv, "swp_vs_interp", ar, diag, &text, mods, 2);
    if (rc)
        return rc;
    TirModule *ref = mods[0], *piped = mods[1];
    TirPassContext ctx = {.arch = "sm_80", .opt_level = 3, .verify_each = true, .diag = diag};
    if (tir_run_pipeline(piped, &ctx, "barriers") != 0) {
        fprintf(stderr, "the pipeline failed\n");
        return 1;
    }
    TirFunc *kr = ref->first, *kp = piped->first;
    int allocs = count_ops(kp, TIR_OP_SMEM_ALLOC), copies = count_ops(kp, TIR_OP_ASYNC_COPY),
        waits = count_ops(kp, TIR_OP_ASYNC_WAIT), loads = count_ops(kp, TIR_OP_SMEM_LOAD),
        stores = count_ops(kp, TIR_OP_SMEM_STORE);
    /* copies: cp.async, or (loads without an alignment fact) a load and a smem_store */
    if (allocs != 2 || copies + stores < 4 || waits < 2 || loads != 2) {
        fprintf(
            stderr,
            "the pipelined IR has %d rings, %d copies + %d stores, %d waits, %d ring loads (want 2, >= 4, >= 2, 2)\n",
            allocs, copies, stores, waits, loads);
        g_fail++;
    }
    static const int sizes[][3] = {{64, 64, 32}, {48, 80, 16},  {128, 64, 256},
                                   {16, 16, 0},  {64, 128, 96}, {112, 48, 160}};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int M = sizes[s][0], N = sizes[s][1], K = sizes[s][2];
        size_t na = (size_t)M * (K ? K : 1), nb = (size_t)(K ? K : 1) * N, nc = (size_t)M * N;
        uint16_t *a = malloc(na * 2), *b = malloc(nb * 2), *c1 = malloc(nc * 2), *c2 = malloc(nc * 2);
        for (size_t i = 0; i < na; i++)
            a[i] = rnd_f16();
        for (size_t i = 0; i < nb; i++)
            b[i] = rnd_f16();
        memset(c1, 0xff, nc * 2);
        memset(c2, 0xff, nc * 2);
        int e1 = run(kr, M, N, K, a, b, c1, na, nb, nc), e2 = run(kp, M, N, K, a, b, c2, na, nb, nc);
        if (e1 || e2) {
            fprintf(stderr, "M=%d N=%d K=%d: interpreter errors %d (reference) %d (pipelined)\n", M, N, K, e1, e2);
            g_fail++;
        } else if (memcmp(c1, c2, nc * 2) != 0) {
            size_t i = 0;
            while (c1[i] == c2[i])
                i++;
            fprintf(stderr, "M=%d N=%d K=%d: c[%zu] is %04x pipelined, %04x before\n", M, N, K, i, c2[i], c1[i]);
            g_fail++;
        }
        free(a);
        free(b);
        free(c1);
        free(c2);
    }
    tir_arena_free(ar);
    free(text);
    if (!g_fail)
        printf("software_pipeline: pipelined matmul equals the reference at every size\n");
    return g_fail ? 1 : 0;
}
