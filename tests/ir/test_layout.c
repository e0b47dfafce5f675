/* Unit tests of the layout algebra (ir/layout.h): every constructor against a brute-force
 * enumeration of its documented formula, inverse after apply, compose, conversion plans
 * run element by element on a simulated thread array, bank conflicts of known good and
 * bad pairs (checked against an access-by-access count), and the text form of each
 * constructor parsed back. */
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                   \
            failures++;                                                              \
            return;                                                                  \
        }                                                                            \
    } while (0)

static TirArena *arena;
static TirModule *mod;

static int64_t numel(int rank, const int32_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    return n;
}

/* Every (reg, lane, warp) of l goes where want() says; every coordinate is held; the
 * canonical holder maps back to its coordinate. */
typedef void (*Formula)(const void *ctx, int r, int lane, int w, int32_t *coord);

static void check_against(const char *what, const TirLinear *l, int rank, const int32_t *shape, int nregs, int nwarps,
                          Formula want, const void *ctx) {
    CHECK_MSG(l != NULL, "%s: no map", what);
    CHECK_MSG(tir_lin_in_size(l, 0) == nregs, "%s: %d registers, want %d", what, tir_lin_in_size(l, 0), nregs);
    CHECK_MSG(tir_lin_in_size(l, 1) == 32, "%s: lanes", what);
    CHECK_MSG(tir_lin_in_size(l, 2) == nwarps, "%s: %d warps, want %d", what, tir_lin_in_size(l, 2), nwarps);
    int64_t n = numel(rank, shape);
    uint8_t *seen = calloc((size_t)n, 1);
    for (int w = 0; w < nwarps; w++)
        for (int ln = 0; ln < 32; ln++)
            for (int r = 0; r < nregs; r++) {
                int32_t in[3] = {r, ln, w}, got[TIR_MAXRANK], exp[TIR_MAXRANK];
                tir_lin_apply_coords(l, in, got);
                want(ctx, r, ln, w, exp);
                int64_t flat = 0;
                for (int d = 0; d < rank; d++) {
                    if (got[d] != exp[d]) {
                        fprintf(stderr, "%s: reg %d lane %d warp %d dim %d: got %d, want %d\n", what, r, ln, w, d,
                                got[d], exp[d]);
                        failures++;
                        free(seen);
                        return;
                    }
                    flat = flat * shape[d] + got[d];
                }
                seen[flat] = 1;
            }
    for (int64_t i = 0; i < n; i++)
        if (!seen[i]) {
            fprintf(stderr, "%s: element %lld held by nobody\n", what, (long long)i);
            failures++;
            break;
        }
    free(seen);
    /* inverse after apply: the canonical holder of each coordinate holds it */
    TirLinear inv;
    CHECK_MSG(tir_lin_invert(l, &inv), "%s: not invertible", what);
    for (int64_t i = 0; i < n; i++) {
        int32_t c[TIR_MAXRANK], in[3], back[TIR_MAXRANK];
        int64_t x = i;
        for (int d = rank - 1; d >= 0; d--) {
            c[d] = (int32_t)(x % shape[d]);
            x /= shape[d];
        }
        CHECK_MSG(tir_lin_holder(l, c, in), "%s: no holder", what);
        tir_lin_apply_coords(l, in, back);
        CHECK_MSG(memcmp(back, c, (size_t)rank * sizeof *c) == 0, "%s: holder of element %lld", what, (long long)i);
        /* the holder has its free bits clear, and the inverse map gives the same one */
        for (int k = 0; k < 3; k++)
            CHECK_MSG(!(in[k] & (int32_t)tir_lin_free_mask(l, k)), "%s: holder free bits", what);
        int32_t in2[3];
        tir_lin_unpack(&inv, tir_lin_apply(&inv, c), in2);
        CHECK_MSG(in2[0] == in[0] && in2[1] == in[1] && in2[2] == in[2], "%s: inverse map", what);
    }
}

/* ---- blocked: TbView's formula, written out as backend/lower_layout.c computes it ---- */
typedef struct {
    int rank;
    int32_t spt[TIR_MAXRANK], tpw[TIR_MAXRANK], wpc[TIR_MAXRANK], order[TIR_MAXRANK], shape[TIR_MAXRANK];
    int32_t n[TIR_MAXRANK];
} Blocked;

static void blocked_formula(const void *ctx, int e, int lane, int warp, int32_t *coord) {
    const Blocked *b = ctx;
    int32_t j[TIR_MAXRANK];
    for (int i = 0; i < b->rank; i++) {
        int d = b->order[i];
        j[d] = e % b->n[d];
        e /= b->n[d];
    }
    for (int d = 0; d < b->rank; d++) {
        int32_t ls = 1, ws = 1;
        for (int i = 0; i < b->rank && b->order[i] != d; i++) {
            ls *= b->tpw[b->order[i]];
            ws *= b->wpc[b->order[i]];
        }
        int32_t ld = lane / ls % b->tpw[d], wd = warp / ws % b->wpc[d];
        int32_t tile = b->spt[d] * b->tpw[d] * b->wpc[d];
        int32_t base = ((wd * b->tpw[d] + ld) * b->spt[d]) & (b->shape[d] - 1);
        coord[d] = base + (j[d] / b->spt[d]) * tile + j[d] % b->spt[d];
    }
}

static void test_blocked_case(int rank, const int32_t *spt, const int32_t *tpw, const int32_t *wpc,
                              const int32_t *order, const int32_t *shape) {
    Blocked b = {.rank = rank};
    int total = 1, warps = 1;
    for (int d = 0; d < rank; d++) {
        b.spt[d] = spt[d], b.tpw[d] = tpw[d], b.wpc[d] = wpc[d], b.order[d] = order[d], b.shape[d] = shape[d];
        int32_t tile = spt[d] * tpw[d] * wpc[d];
        b.n[d] = shape[d] < spt[d] ? shape[d] : spt[d] * (shape[d] / tile < 1 ? 1 : shape[d] / tile);
        total *= b.n[d];
        warps *= wpc[d];
    }
    int32_t idx = tir_layout_blocked(mod, rank, spt, tpw, wpc, order);
    const char *why = NULL;
    const TirLinear *l = tir_layout_linear(mod, idx, rank, shape, &why);
    char name[256];
    tir_layout_print(name, sizeof name, mod, idx);
    if (!l) {
        fprintf(stderr, "%s: %s\n", name, why);
        failures++;
        return;
    }
    check_against(name, l, rank, shape, total, warps, blocked_formula, &b);
    CHECK(tir_layout_linear(mod, idx, rank, shape, NULL) == l); /* cached */
}

static void test_blocked(void) {
    /* 1-D: exact cover, wrap (shape larger), replication (smaller, and smaller than spt) */
    int32_t o1[1] = {0};
    int32_t shapes1[] = {1, 2, 8, 64, 512, 1024, 4096};
    for (size_t s = 0; s < sizeof shapes1 / sizeof *shapes1; s++) {
        int32_t sh[1] = {shapes1[s]};
        test_blocked_case(1, (int32_t[]){4}, (int32_t[]){32}, (int32_t[]){4}, o1, sh);
        test_blocked_case(1, (int32_t[]){1}, (int32_t[]){32}, (int32_t[]){8}, o1, sh);
        test_blocked_case(1, (int32_t[]){8}, (int32_t[]){32}, (int32_t[]){2}, o1, sh);
    }
    /* 2-D, both orders, shapes around the coverage */
    int32_t shapes2[][2] = {{1, 128}, {4, 4}, {16, 64}, {64, 16}, {128, 256}, {2, 1024}, {256, 1}};
    int32_t cfg[][4][2] = {
        {{1, 4}, {4, 8}, {4, 1}, {1, 0}},  {{1, 4}, {4, 8}, {4, 1}, {0, 1}},  {{2, 2}, {8, 4}, {2, 2}, {1, 0}},
        {{4, 1}, {32, 1}, {1, 4}, {0, 1}}, {{1, 8}, {1, 32}, {8, 1}, {1, 0}},
    };
    for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++)
        for (size_t s = 0; s < sizeof shapes2 / sizeof *shapes2; s++)
            test_blocked_case(2, cfg[c][0], cfg[c][1], cfg[c][2], cfg[c][3], shapes2[s]);
    /* 3-D */
    test_blocked_case(3, (int32_t[]){1, 2, 4}, (int32_t[]){2, 4, 4}, (int32_t[]){2, 1, 2}, (int32_t[]){2, 1, 0},
                      (int32_t[]){4, 16, 32});
    test_blocked_case(3, (int32_t[]){1, 2, 4}, (int32_t[]){2, 4, 4}, (int32_t[]){2, 1, 2}, (int32_t[]){0, 2, 1},
                      (int32_t[]){1, 2, 64});
}

/* ---- slices: the parent's placement with the dim's coordinate dropped ---- */
static void test_slice(void) {
    int32_t spt[2] = {1, 4}, tpw[2] = {4, 8}, wpc[2] = {4, 1}, order[2] = {1, 0};
    int32_t par = tir_layout_blocked(mod, 2, spt, tpw, wpc, order);
    for (int dim = 0; dim < 2; dim++) {
        int32_t sl = tir_layout_slice(mod, par, dim);
        CHECK(tir_layout_kind(mod, sl) == TIR_LAYOUT_SLICE && tir_layout_rank(mod, sl) == 1);
        int32_t shape[1] = {128};
        const TirLinear *l = tir_layout_linear(mod, sl, 1, shape, NULL);
        int32_t pshape[2] = {dim == 0 ? 1 : 128, dim == 0 ? 128 : 1};
        const TirLinear *p = tir_layout_linear(mod, par, 2, pshape, NULL);
        CHECK(l && p);
        if (!l || !p)
            continue;
        CHECK(tir_lin_in_size(l, 0) == tir_lin_in_size(p, 0));
        for (int w = 0; w < 4; w++)
            for (int ln = 0; ln < 32; ln++)
                for (int r = 0; r < tir_lin_in_size(l, 0); r++) {
                    int32_t in[3] = {r, ln, w}, c[1], pc[2];
                    tir_lin_apply_coords(l, in, c);
                    tir_lin_apply_coords(p, in, pc);
                    CHECK(c[0] == pc[1 - dim]);
                }
        /* sliced-away lane or warp bits are free: replication */
        CHECK(dim == 1 ? tir_lin_free_mask(l, 1) == 0x7 && tir_lin_free_mask(l, 2) == 0
                       : tir_lin_free_mask(l, 1) == 0x18 && tir_lin_free_mask(l, 2) == 0x3);
    }
    /* a slice of an mma accumulator drops the registers that no longer move it */
    int32_t mwpc[2] = {2, 2}, instr[3] = {16, 8, 16};
    int32_t mma = tir_layout_mma(mod, 2, 2, mwpc, instr);
    int32_t row = tir_layout_slice(mod, mma, 1);
    const TirLinear *l = tir_layout_linear(mod, row, 1, (int32_t[]){64}, NULL);
    CHECK(l && tir_lin_in_size(l, 0) == 4); /* rows l/4 + 8 r1 + 32 rM: 2 x 2 registers */
    const char *why = NULL;
    int32_t sh = tir_layout_shared(mod, 2, (int32_t[]){1, 0}, 1, 1, 1, 0);
    CHECK(!tir_layout_linear(mod, tir_layout_slice(mod, sh, 0), 1, (int32_t[]){64}, &why) && why &&
          strstr(why, "#shared"));
    int32_t order1[1];
    tir_layout_order(mod, row, order1);
    CHECK(order1[0] == 0);
}

/* ---- the blocked form: the backend's numbers give the linear map's placement, and its
 * owner rule (tb_view_owner) picks the canonical holder (free bits zero) ---- */
static void check_form(int32_t idx, int rank, const int32_t *shape) {
    char name[256];
    tir_layout_print(name, sizeof name, mod, idx);
    TirBlockedForm bf;
    const TirLinear *l = tir_layout_linear(mod, idx, rank, shape, NULL);
    CHECK_MSG(l && tir_layout_blocked_form(mod, idx, rank, &bf, NULL), "%s: form", name);
    int32_t n[TIR_MAXRANK], order[TIR_MAXRANK];
    int total = 1, k = 0;
    for (int d = 0; d < rank; d++) {
        int rd = bf.root_dim[d];
        int64_t tile = tir_blocked_span(&bf, rd);
        n[d] = shape[d] < bf.spt[rd] ? shape[d] : bf.spt[rd] * (shape[d] / tile < 1 ? 1 : (int32_t)(shape[d] / tile));
        total *= n[d];
    }
    for (int i = 0; i < bf.rank; i++)
        if (bf.tile_dim[bf.order[i]] >= 0)
            order[k++] = bf.tile_dim[bf.order[i]];
    CHECK_MSG(tir_lin_in_size(l, 0) == total, "%s: %d registers, view %d", name, tir_lin_in_size(l, 0), total);
    int nw = tir_lin_in_size(l, 2);
    for (int w = 0; w < nw; w++)
        for (int ln = 0; ln < 32; ln++) {
            bool owner = true;
            for (int rd = 0; rd < bf.rank; rd++) {
                int32_t pos = (w / bf.warp_stride[rd] % bf.wpc[rd]) * bf.tpw[rd] + ln / bf.lane_stride[rd] % bf.tpw[rd];
                int d = bf.tile_dim[rd];
                if (d < 0)
                    owner &= pos == 0;
                else if (tir_blocked_span(&bf, rd) > shape[d])
                    owner &= pos * bf.spt[rd] < (shape[d] < bf.spt[rd] ? bf.spt[rd] : shape[d]);
            }
            bool canonical = !(ln & (int32_t)tir_lin_free_mask(l, 1)) && !(w & (int32_t)tir_lin_free_mask(l, 2));
            CHECK_MSG(owner == canonical, "%s: lane %d warp %d owner %d, canonical %d", name, ln, w, owner, canonical);
            for (int e = 0; e < total; e++) {
                int32_t j[TIR_MAXRANK], c[TIR_MAXRANK], x = e;
                for (int i = 0; i < rank; i++) {
                    j[order[i]] = x % n[order[i]];
                    x /= n[order[i]];
                }
                tir_lin_apply_coords(l, (int32_t[]){e, ln, w}, c);
                for (int d = 0; d < rank; d++) {
                    int rd = bf.root_dim[d];
                    int32_t pos =
                        (w / bf.warp_stride[rd] % bf.wpc[rd]) * bf.tpw[rd] + ln / bf.lane_stride[rd] % bf.tpw[rd];
                    int32_t want = ((pos * bf.spt[rd]) & (shape[d] - 1)) +
                                   (j[d] / bf.spt[rd]) * (int32_t)tir_blocked_span(&bf, rd) + j[d] % bf.spt[rd];
                    CHECK_MSG(c[d] == want, "%s: element %d of lane %d warp %d dim %d at %d, view %d", name, e, ln, w,
                              d, c[d], want);
                }
            }
        }
    /* the distinct lanes and warps along each dim are the map's non-free bits there */
    for (int d = 0; d < rank; d++) {
        int lanes, warps;
        tir_blocked_distinct(&bf, bf.root_dim[d], shape[d], &lanes, &warps);
        int bl = 0, bw = 0;
        for (int i = 0; i < 2; i++)
            for (int b = 0; b < l->inbits[1 + i]; b++) {
                int32_t in[3] = {0, 0, 0}, c[TIR_MAXRANK];
                in[1 + i] = 1 << b;
                tir_lin_apply_coords(l, in, c);
                if (c[d])
                    *(i ? &bw : &bl) += 1;
            }
        CHECK_MSG(lanes == 1 << bl && warps == 1 << bw, "%s: dim %d: %d lanes %d warps distinct, map %d %d", name, d,
                  lanes, warps, 1 << bl, 1 << bw);
    }
}

static void test_blocked_form(void) {
    int32_t cfg[][4][3] = {
        {{1, 4, 1}, {4, 8, 1}, {4, 1, 1}, {1, 0, 2}},
        {{2, 2, 1}, {2, 4, 4}, {2, 1, 2}, {2, 1, 0}},
        {{1, 1, 8}, {1, 1, 32}, {1, 2, 2}, {2, 0, 1}},
    };
    int32_t shapes[][3] = {{8, 64, 4}, {1, 2, 256}, {64, 4, 1}, {16, 16, 16}};
    for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
        int32_t b = tir_layout_blocked(mod, 3, cfg[c][0], cfg[c][1], cfg[c][2], cfg[c][3]);
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            check_form(b, 3, shapes[s]);
            for (int dim = 0; dim < 3; dim++) {
                int32_t s2[2];
                for (int d = 0, k = 0; d < 3; d++)
                    if (d != dim)
                        s2[k++] = shapes[s][d];
                int32_t sl = tir_layout_slice(mod, b, dim);
                check_form(sl, 2, s2);
                int32_t s1[1] = {s2[1]};
                check_form(tir_layout_slice(mod, sl, 0), 1, s1);
            }
        }
    }
    /* not blocked: refused with the reason the backend prints */
    TirBlockedForm bf;
    const char *why = NULL;
    int32_t mma = tir_layout_mma(mod, 2, 2, (int32_t[]){2, 2}, (int32_t[]){16, 8, 16});
    CHECK(!tir_layout_blocked_form(mod, mma, 2, &bf, &why) && why && strstr(why, "not supported"));
}

/* ---- mma accumulators ---- */
typedef struct {
    int32_t wm, wn, in, M, N;
} Mma;

/* The mma.sync accumulator's formula per warp (docs/layouts.md, v=2: row = l/4 + 8((r/2)%2),
 * col = 8(r/4) + 2(l%4) + r%2, r/4 < instr_n/8), warps along M then N, registers repeating
 * the CTA tile along N then M. */
static void mma_formula(const void *ctx, int r, int l, int w, int32_t *c) {
    const Mma *m = ctx;
    int per = m->in / 8 * 4; /* registers of one warp tile */
    int t = r % per, rep = r / per;
    int repn = m->N / (m->in * m->wn) < 1 ? 1 : m->N / (m->in * m->wn);
    int rn = rep % repn, rm = rep / repn;
    int wm = w % m->wm, wn = w / m->wm;
    int row = 16 * wm + l / 4 + 8 * ((t / 2) % 2) + 16 * m->wm * rm;
    int col = m->in * wn + 8 * (t / 4) + 2 * (l % 4) + t % 2 + m->in * m->wn * rn;
    c[0] = row & (m->M - 1);
    c[1] = col & (m->N - 1);
}

static void test_mma_case(int v, int wm, int wn, int in, int M, int N) {
    int32_t wpc[2] = {wm, wn}, instr[3] = {v == 2 ? 16 : 64, in, 16};
    int32_t idx = tir_layout_mma(mod, v, 2, wpc, instr);
    int32_t shape[2] = {M, N};
    char name[200];
    tir_layout_print(name, sizeof name, mod, idx);
    snprintf(name + strlen(name), sizeof name - strlen(name), " %dx%d", M, N);
    const TirLinear *l = tir_layout_linear(mod, idx, 2, shape, NULL);
    Mma m = {wm, wn, in, M, N};
    int64_t cover_m = 16 * wm, cover_n = (int64_t)in * wn;
    CHECK(l);
    if (!l)
        return;
    /* register count: the map's own; the formula checks what each register holds */
    int nregs = tir_lin_in_size(l, 0);
    if (M >= cover_m && N >= cover_n)
        CHECK(nregs == (int64_t)M * N / (32 * wm * wn));
    check_against(name, l, 2, shape, nregs, wm * wn, mma_formula, &m);
}

static void test_mma(void) {
    test_mma_case(2, 1, 1, 8, 16, 8); /* one m16n8 tile: 4 registers */
    test_mma_case(2, 2, 2, 8, 128, 64);
    test_mma_case(2, 4, 1, 8, 64, 64);
    test_mma_case(2, 2, 4, 8, 64, 256);
    test_mma_case(3, 4, 1, 64, 64, 64); /* wgmma m64n64: 32 accumulators per thread */
    test_mma_case(3, 4, 1, 128, 128, 128);
    test_mma_case(3, 8, 2, 64, 256, 256);
    /* wgmma m64nN per warp group: exactly the mma.sync formula with w the warp (docs/layouts.md, v=3) */
    int32_t wpc[2] = {4, 1}, instr[3] = {64, 256, 16};
    const TirLinear *l = tir_layout_linear(mod, tir_layout_mma(mod, 3, 2, wpc, instr), 2, (int32_t[]){64, 256}, NULL);
    CHECK(l && tir_lin_in_size(l, 0) == 128);
    for (int t = 0; l && t < 128; t++)
        for (int r = 0; r < 128; r++) {
            int32_t in[3] = {r, t % 32, t / 32}, c[2];
            tir_lin_apply_coords(l, in, c);
            int w = t / 32, ln = t % 32;
            if (c[0] != 16 * w + ln / 4 + 8 * ((r / 2) % 2) || c[1] != 8 * (r / 4) + 2 * (ln % 4) + r % 2) {
                failures++;
                fprintf(stderr, "wgmma m64n256: thread %d reg %d at (%d, %d)\n", t, r, c[0], c[1]);
                t = 128;
                break;
            }
        }
    /* the bases as text: one m16n8 tile */
    char buf[512];
    const TirLinear *one = tir_layout_linear(mod, tir_layout_mma(mod, 2, 2, (int32_t[]){1, 1}, (int32_t[]){16, 8, 16}),
                                             2, (int32_t[]){16, 8}, NULL);
    tir_lin_print(buf, sizeof buf, one);
    CHECK_MSG(strcmp(buf, "register=[(0, 1), (8, 0)] lane=[(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)] warp=[]") == 0, "%s",
              buf);
    /* contiguous along N: 2 (the r%2 pair) */
    CHECK(l && tir_lin_contig(l, 0, 1) == 2 && tir_lin_contig(l, 0, 0) == 1);
    /* a shape smaller than the CTA tile: warps along M past it replicate */
    test_mma_case(2, 2, 1, 8, 16, 8);
    const TirLinear *s = tir_layout_linear(mod, tir_layout_mma(mod, 2, 2, (int32_t[]){2, 1}, (int32_t[]){16, 8, 16}), 2,
                                           (int32_t[]){16, 8}, NULL);
    CHECK(s && tir_lin_free_mask(s, 2) == 1);
    /* bad numbers are refused with a reason */
    const char *why = NULL;
    CHECK(!tir_layout_linear(mod, tir_layout_mma(mod, 3, 2, (int32_t[]){2, 1}, (int32_t[]){64, 64, 16}), 2,
                             (int32_t[]){64, 64}, &why) &&
          why && strstr(why, "multiple of 4"));
    CHECK(!tir_layout_linear(mod, tir_layout_mma(mod, 2, 2, (int32_t[]){2, 1}, (int32_t[]){16, 8, 16}), 2,
                             (int32_t[]){48, 64}, &why) &&
          why && strstr(why, "power of two"));
}

/* ---- dot operands: the PTX ISA's fragment tables for one m16n8kK instruction ---- */
typedef struct {
    int op, kw;
} Frag;

/* ---- grouped N tiles (tir_layout_mma_grouped) ---- */
typedef struct {
    Mma m;
    int g; /* the group the shape allows: min(ngroup, N / (8 wn)) */
} Grouped;

/* The column move, written out digit by digit: column = hi S g + j S + lo -> hi S g + lo g + j. */
static int32_t grouped_col(int32_t c, int32_t S, int g) {
    int32_t lo = c % S, j = (c / S) % g, hi = c / (S * g);
    return hi * S * g + lo * g + j;
}

static void grouped_formula(const void *ctx, int r, int l, int w, int32_t *c) {
    const Grouped *q = ctx;
    mma_formula(&q->m, r, l, w, c);
    c[1] = grouped_col(c[1], 8 * q->m.wn, q->g);
}

static void test_mma_grouped_case(int wm, int wn, int M, int N, int ngroup) {
    int32_t instr[3] = {16, 8, 32}, shape[2] = {M, N};
    int32_t plain = tir_layout_mma(mod, 2, 2, (int32_t[]){wm, wn}, instr);
    int32_t idx = tir_layout_mma_grouped(mod, plain, ngroup);
    char name[200];
    tir_layout_print(name, sizeof name, mod, idx);
    snprintf(name + strlen(name), sizeof name - strlen(name), " %dx%d", M, N);
    int g = ngroup;
    while (g > 1 && N < 8 * wn * g)
        g /= 2;
    Grouped q = {{wm, wn, 8, M, N}, g};
    const TirLinear *l = tir_layout_linear(mod, idx, 2, shape, NULL);
    CHECK_MSG(l != NULL, "%s: no map", name);
    if (!l)
        return;
    check_against(name, l, 2, shape, tir_lin_in_size(l, 0), wm * wn, grouped_formula, &q);
    CHECK_MSG(tir_layout_mma_ngroup(mod, idx) == (ngroup > 1 ? ngroup : 1), "%s: ngroup", name);
    /* B [K, N] moves its columns alike: every register of every thread, against the
     * plain operand's map with the column moved */
    int32_t ks[2] = {64, N};
    const TirLinear *bp = tir_layout_linear(mod, tir_layout_dot_operand(mod, plain, 1, 4), 2, ks, NULL);
    const TirLinear *bg = tir_layout_linear(mod, tir_layout_dot_operand(mod, idx, 1, 4), 2, ks, NULL);
    const TirLinear *ap = tir_layout_linear(mod, tir_layout_dot_operand(mod, plain, 0, 4), 2, (int32_t[]){M, 64}, NULL);
    const TirLinear *ag = tir_layout_linear(mod, tir_layout_dot_operand(mod, idx, 0, 4), 2, (int32_t[]){M, 64}, NULL);
    CHECK_MSG(bp && bg && ap && ag, "%s: operand maps", name);
    if (!bp || !bg || !ap || !ag)
        return;
    CHECK_MSG(tir_lin_equal(ap, ag), "%s: A does not move", name);
    int bad = 0;
    for (int w = 0; w < wm * wn; w++)
        for (int ln = 0; ln < 32; ln++)
            for (int r = 0; r < tir_lin_in_size(bp, 0); r++) {
                int32_t in[3] = {r, ln, w}, cp[2], cg[2];
                tir_lin_apply_coords(bp, in, cp);
                tir_lin_apply_coords(bg, in, cg);
                bad += cg[0] != cp[0] || cg[1] != grouped_col(cp[1], 8 * wn, g);
            }
    CHECK_MSG(bad == 0, "%s: %d B registers not at their moved columns", name, bad);
    /* g >= 4: the same register of tiles 4a..4a+3 is 4 adjacent columns (one 32-bit
     * load of an N-contiguous 8-bit B) */
    if (g >= 4) {
        int per = 2 * 4, tk = 64 / 32, stride = per * tk, tiles = tir_lin_in_size(bg, 0) / stride;
        int adj = 0, runs = 0;
        for (int t = 0; t + 4 <= tiles; t += 4)
            for (int r = t * stride; r < (t + 1) * stride; r++, runs++) {
                int32_t c0[2], in[3] = {r, 0, 0};
                tir_lin_apply_coords(bg, in, c0);
                int ok = c0[1] % 4 == 0;
                for (int j = 1; j < 4; j++) {
                    int32_t cj[2], ij[3] = {r + j * stride, 0, 0};
                    tir_lin_apply_coords(bg, ij, cj);
                    ok &= cj[0] == c0[0] && cj[1] == c0[1] + j;
                }
                adj += ok;
            }
        CHECK_MSG(runs > 0 && adj == runs, "%s: %d of %d 4-tile runs adjacent", name, adj, runs);
    }
}

static void test_mma_grouped(void) {
    test_mma_grouped_case(4, 1, 128, 64, 4);  /* gemm_f8's tile: 8 N tiles a warp, groups of 4 */
    test_mma_grouped_case(2, 4, 128, 256, 4); /* 8 warps, N tiles interleaved across 4 warps */
    test_mma_grouped_case(2, 2, 64, 128, 8);
    test_mma_grouped_case(2, 2, 64, 32, 4); /* N allows 2 of the 4 */
    test_mma_grouped_case(1, 4, 16, 32, 4); /* N allows none: the plain map */
    test_mma_grouped_case(2, 2, 64, 128, 1);
    /* a slice of the accumulator along N (row sums) keeps its map: no N bits */
    int32_t g = tir_layout_mma_grouped(mod, tir_layout_mma(mod, 2, 2, (int32_t[]){2, 2}, (int32_t[]){16, 8, 32}), 4);
    const TirLinear *rs = tir_layout_linear(mod, tir_layout_slice(mod, g, 1), 1, (int32_t[]){64}, NULL);
    CHECK(rs != NULL);
    /* wgmma layouts have no grouping */
    CHECK(tir_layout_mma_grouped(mod, tir_layout_mma(mod, 3, 2, (int32_t[]){4, 1}, (int32_t[]){64, 64, 16}), 4) == 0);
}

/* tir_lin_runs_first: a relabeling of the registers (the same elements at every thread,
 * perm a bijection) that puts the thread's consecutive columns in consecutive registers. */
static void runs_first_case(const char *what, const TirLinear *l, int want_run) {
    TirLinear out;
    int nr = tir_lin_in_size(l, 0);
    int32_t *perm = calloc((size_t)nr, sizeof *perm);
    uint8_t *hit = calloc((size_t)nr, 1);
    int run = tir_lin_runs_first(l, 0, l->nout - 1, &out, perm);
    CHECK_MSG(run == want_run, "%s: run %d, want %d", what, run, want_run);
    CHECK_MSG(tir_lin_contig(&out, 0, l->nout - 1) == run, "%s: contig of the result", what);
    int bad = 0;
    for (int r = 0; r < nr; r++) {
        if (perm[r] < 0 || perm[r] >= nr || hit[perm[r]]++)
            bad++;
        for (int ln = 0; ln < 32; ln += 5)
            for (int w = 0; w < tir_lin_in_size(l, 2); w++) {
                int32_t a[3] = {r, ln, w}, b[3] = {perm[r], ln, w};
                bad += tir_lin_apply(&out, a) != tir_lin_apply(l, b);
            }
    }
    CHECK_MSG(bad == 0, "%s: %d registers moved elements", what, bad);
    /* registers 0..run-1 of thread 0: consecutive columns of one row */
    for (int r = 1; r < run; r++) {
        int32_t i0[3] = {0, 0, 0}, ir[3] = {r, 0, 0}, c0[TIR_MAXRANK], cr[TIR_MAXRANK];
        tir_lin_apply_coords(&out, i0, c0);
        tir_lin_apply_coords(&out, ir, cr);
        CHECK_MSG(cr[l->nout - 1] == c0[l->nout - 1] + r && cr[0] == c0[0], "%s: register %d", what, r);
    }
    free(perm);
    free(hit);
}

/* The epilogue's row and column vectors: a slice of an accumulator's layout and its
 * expand_dims ([M, 1] or [1, N] in the mma layout itself) hold, in every thread, the
 * rows or columns of that thread's accumulator elements (what the backend's broadcast
 * from the maps relies on): lane and warp bases agree once projected, and every
 * accumulator register's column (or row) is one of the vector's registers. */
static void vector_of_acc_case(int32_t acc, int M, int N, int dim) {
    char name[200];
    tir_layout_print(name, sizeof name, mod, acc);
    snprintf(name + strlen(name), sizeof name - strlen(name), " %dx%d slice %d", M, N, dim);
    int32_t full[2] = {M, N}, one[2] = {dim == 0 ? 1 : M, dim == 1 ? 1 : N}, vec[1] = {dim == 0 ? N : M};
    const TirLinear *la = tir_layout_linear(mod, acc, 2, full, NULL);
    const TirLinear *lo = tir_layout_linear(mod, acc, 2, one, NULL);
    const TirLinear *lv = tir_layout_linear(mod, tir_layout_slice(mod, acc, dim), 1, vec, NULL);
    CHECK_MSG(la && lo && lv, "%s: maps", name);
    int keep = 1 - dim, bad = 0;
    for (int w = 0; w < tir_lin_in_size(la, 2); w++)
        for (int ln = 0; ln < 32; ln++)
            for (int r = 0; r < tir_lin_in_size(la, 0); r++) {
                int32_t in[3] = {r, ln, w}, c[2];
                tir_lin_apply_coords(la, in, c);
                int found = 0;
                for (int k = 0; k < tir_lin_in_size(lv, 0) && !found; k++) {
                    int32_t iv[3] = {k, ln, w}, cv[1];
                    tir_lin_apply_coords(lv, iv, cv);
                    found = cv[0] == c[keep];
                }
                for (int k = 0; k < tir_lin_in_size(lo, 0) && found == 1; k++) {
                    int32_t io[3] = {k, ln, w}, co[2];
                    tir_lin_apply_coords(lo, io, co);
                    if (co[keep] == c[keep] && co[dim] == 0)
                        found = 2;
                }
                bad += found != 2;
            }
    CHECK_MSG(bad == 0, "%s: %d accumulator elements without their vector element", name, bad);
}

static void test_runs_first(void) {
    int32_t instr[3] = {16, 8, 32}, s1[2] = {128, 64}, s2[2] = {64, 64};
    int32_t plain = tir_layout_mma(mod, 2, 2, (int32_t[]){4, 1}, instr);
    int32_t g = tir_layout_mma_grouped(mod, plain, 4);
    /* grouped: columns 1, 2 from the first two N tile bits, 4 from the pair bit */
    runs_first_case("grouped #mma 128x64", tir_layout_linear(mod, g, 2, s1, NULL), 8);
    runs_first_case("plain #mma 128x64", tir_layout_linear(mod, plain, 2, s1, NULL), 2);
    int32_t b = tir_layout_blocked(mod, 2, (int32_t[]){1, 8}, (int32_t[]){4, 8}, (int32_t[]){4, 1}, (int32_t[]){1, 0});
    runs_first_case("blocked spt 8", tir_layout_linear(mod, b, 2, s2, NULL), 8);
    /* by hand: register bits at columns 4, 2, 1 (reversed) */
    TirLinear h;
    uint8_t ik[3] = {TIR_LIN_REG, TIR_LIN_LANE, TIR_LIN_WARP}, ok[2] = {TIR_LIN_DIM0, TIR_LIN_DIM0 + 1};
    tir_lin_init(&h, 3, ik, 2, ok, (int32_t[]){32, 64});
    tir_lin_add_bit(&h, 0, (int32_t[]){0, 4});
    tir_lin_add_bit(&h, 0, (int32_t[]){16, 0});
    tir_lin_add_bit(&h, 0, (int32_t[]){0, 2});
    tir_lin_add_bit(&h, 0, (int32_t[]){0, 1});
    for (int k = 0; k < 5; k++)
        tir_lin_add_bit(&h, 1, (int32_t[]){k < 3 ? 0 : 1 << (k - 3), k < 3 ? 8 << k : 0});
    runs_first_case("reversed by hand", &h, 8);
    vector_of_acc_case(g, 128, 64, 0);
    vector_of_acc_case(g, 128, 64, 1);
    vector_of_acc_case(tir_layout_mma(mod, 2, 2, (int32_t[]){2, 4}, (int32_t[]){16, 8, 16}), 128, 256, 0);
    vector_of_acc_case(tir_layout_mma(mod, 2, 2, (int32_t[]){2, 4}, (int32_t[]){16, 8, 16}), 128, 256, 1);
}

static void frag_formula(const void *ctx, int i, int l, int w, int32_t *c) {
    const Frag *f = ctx;
    (void)w;
    int g = l / 4, t = l % 4;
    if (f->op == 0) { /* A: 16 x 8kw */
        if (f->kw == 2)
            c[0] = g + 8 * ((i / 2) % 2), c[1] = 2 * t + i % 2 + 8 * (i / 4);
        if (f->kw == 4)
            c[0] = g + 8 * ((i / 4) % 2), c[1] = 4 * t + i % 4 + 16 * (i / 8);
        if (f->kw == 1)
            c[0] = g + 8 * (i % 2), c[1] = t + 4 * (i / 2);
    } else { /* B: 8kw x 8 */
        if (f->kw == 2)
            c[0] = 2 * t + i % 2 + 8 * (i / 2), c[1] = g;
        if (f->kw == 4)
            c[0] = 4 * t + i % 4 + 16 * (i / 4), c[1] = g;
        if (f->kw == 1)
            c[0] = t + 4 * i, c[1] = g;
    }
}

static void test_dot_operands(void) {
    int32_t wpc[2] = {1, 1}, instr[3] = {16, 8, 16};
    int32_t mma = tir_layout_mma(mod, 2, 2, wpc, instr);
    for (int op = 0; op < 2; op++)
        for (int kw = 1; kw <= 4; kw *= 2) {
            int32_t idx = tir_layout_dot_operand(mod, mma, op, kw);
            int32_t shape[2] = {op == 0 ? 16 : 8 * kw, op == 0 ? 8 * kw : 8};
            char name[200];
            tir_layout_print(name, sizeof name, mod, idx);
            Frag f = {op, kw};
            check_against(name, tir_layout_linear(mod, idx, 2, shape, NULL), 2, shape, op == 0 ? 4 * kw : 2 * kw, 1,
                          frag_formula, &f);
        }
    /* with warps: A is replicated over the warps along N, B over those along M; registers
     * repeat along K first */
    int32_t mma22 = tir_layout_mma(mod, 2, 2, (int32_t[]){2, 2}, instr);
    const TirLinear *a = tir_layout_linear(mod, tir_layout_dot_operand(mod, mma22, 0, 2), 2, (int32_t[]){64, 32}, NULL);
    const TirLinear *b = tir_layout_linear(mod, tir_layout_dot_operand(mod, mma22, 1, 2), 2, (int32_t[]){32, 32}, NULL);
    CHECK(a && b);
    if (!a || !b)
        return;
    CHECK(tir_lin_free_mask(a, 2) == 0x2 && tir_lin_free_mask(b, 2) == 0x1);
    CHECK(tir_lin_in_size(a, 0) == 8 * 2 * 2); /* 8 per fragment x 2 along K x 2 along M */
    for (int r = 0; r < 32; r++) {
        int32_t in[3] = {r, 5, 1}, c[2];
        tir_lin_apply_coords(a, in, c);
        int frag = r % 8, kr = (r / 8) % 2, mr = r / 16;
        CHECK(c[0] == 16 + 1 + 8 * ((frag / 2) % 2) + 32 * mr && c[1] == 2 + frag % 2 + 8 * (frag / 4) + 16 * kr);
    }
    CHECK(tir_lin_contig(a, 0, 1) == 2 && tir_lin_contig(b, 0, 0) == 2);
}

/* ---- shared layouts: the swizzle formula ---- */
static int64_t swizzle_offset(int32_t r, int32_t c, int32_t R, int32_t C, int vec, int pp, int mp, int atom) {
    int32_t cw = atom && atom < C ? atom : C;
    int32_t blk = c / cw, cc = c % cw;
    int32_t phase = (r / pp) % mp;
    int32_t sc = (((cc / vec) ^ phase) & (cw / vec - 1)) * vec + cc % vec;
    return (int64_t)blk * R * cw + (int64_t)r * cw + sc;
}

static void test_shared_case(int vec, int pp, int mp, int atom, int32_t R, int32_t C, int32_t idx) {
    int32_t shape[2] = {R, C};
    char name[200];
    tir_layout_print(name, sizeof name, mod, idx);
    const TirLinear *l = tir_layout_linear(mod, idx, 2, shape, NULL);
    CHECK_MSG(l && l->nin == 1 && tir_lin_in_size(l, 0) == R * C, "%s: map", name);
    for (int32_t r = 0; r < R; r++)
        for (int32_t c = 0; c < C; c++) {
            int64_t off = swizzle_offset(r, c, R, C, vec, pp, mp, atom);
            int32_t in[1] = {(int32_t)off}, got[2], h[1];
            tir_lin_apply_coords(l, in, got);
            CHECK_MSG(got[0] == r && got[1] == c, "%s %dx%d: offset %lld holds (%d, %d), want (%d, %d)", name, R, C,
                      (long long)off, got[0], got[1], r, c);
            CHECK_MSG(tir_lin_holder(l, (int32_t[]){r, c}, h) && h[0] == off, "%s: inverse", name);
        }
}

static void test_shared(void) {
    int32_t order[2] = {1, 0};
    int v[][5] = {{1, 1, 1, 0, 0}, {8, 1, 8, 0, 0}, {4, 2, 4, 0, 0}, {2, 4, 2, 0, 0}, {8, 1, 8, 0, 1}};
    int32_t shapes[][2] = {{64, 64}, {128, 32}, {16, 128}, {8, 8}};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            test_shared_case(v[i][0], v[i][1], v[i][2], 0, shapes[s][0], shapes[s][1],
                             tir_layout_shared(mod, 2, order, v[i][0], v[i][1], v[i][2], 0));
    /* wgmma/TMA swizzles: 16-byte vectors, atoms as wide as the swizzle */
    struct {
        int bytes, bits, vec, pp, mp, atom;
    } nv[] = {
        {128, 16, 8, 1, 8, 64},  {64, 16, 8, 2, 4, 32},  {32, 16, 8, 4, 2, 16},
        {128, 8, 16, 1, 8, 128}, {128, 32, 4, 1, 8, 32},
    };
    for (size_t i = 0; i < sizeof nv / sizeof *nv; i++) {
        int32_t idx = tir_layout_shared_nvmma(mod, 2, order, nv[i].bytes, nv[i].bits);
        CHECK(idx == tir_layout_shared(mod, 2, order, nv[i].vec, nv[i].pp, nv[i].mp, nv[i].atom));
        test_shared_case(nv[i].vec, nv[i].pp, nv[i].mp, nv[i].atom, 64, 256, idx);
        test_shared_case(nv[i].vec, nv[i].pp, nv[i].mp, nv[i].atom, 32, nv[i].atom, idx);
    }
    /* column-contiguous (order [0, 1]): the formula with the dims exchanged */
    int32_t o01[2] = {0, 1};
    const TirLinear *l =
        tir_layout_linear(mod, tir_layout_shared(mod, 2, o01, 4, 1, 8, 0), 2, (int32_t[]){32, 16}, NULL);
    for (int32_t r = 0; l && r < 32; r++)
        for (int32_t c = 0; c < 16; c++) {
            int32_t h[1];
            CHECK(tir_lin_holder(l, (int32_t[]){r, c}, h) && h[0] == swizzle_offset(c, r, 16, 32, 4, 1, 8, 0));
        }
}

/* ---- compose ---- */
static uint32_t rng = 12345;
static uint32_t rnd(void) {
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

static void test_compose(void) {
    /* random maps: (outer o inner)(x) = outer(inner(x)) */
    for (int t = 0; t < 50; t++) {
        uint8_t k3[3] = {TIR_LIN_REG, TIR_LIN_LANE, TIR_LIN_WARP}, k2[2] = {TIR_LIN_DIM0, TIR_LIN_DIM0 + 1};
        uint8_t k1[1] = {TIR_LIN_OFFSET};
        TirLinear inner, outer, comp;
        int32_t ext2[2] = {16, 32}, ext1[1] = {1 << 9};
        tir_lin_init(&inner, 3, k3, 2, k2, ext2);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++)
                tir_lin_add_bit(&inner, i, (int32_t[]){(int32_t)(rnd() % 16), (int32_t)(rnd() % 32)});
        tir_lin_init(&outer, 2, k2, 1, k1, ext1);
        outer.inbits[0] = 4;
        outer.inbits[1] = 5;
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < outer.inbits[i]; k++)
                outer.basis[i][k] = rnd() % 512;
        CHECK(tir_lin_compose(&outer, &inner, &comp));
        for (int x = 0; x < 512; x++) {
            int32_t in[3] = {x & 7, (x >> 3) & 7, x >> 6}, mid[2];
            tir_lin_apply_coords(&inner, in, mid);
            CHECK(tir_lin_apply(&comp, in) == tir_lin_apply(&outer, mid));
        }
        /* dims that do not match are refused */
        CHECK(!tir_lin_compose(&inner, &outer, &comp));
    }
    /* inverse o layout is the identity on the bits that are not free */
    const TirLinear *l = tir_layout_linear(
        mod, tir_layout_blocked(mod, 2, (int32_t[]){1, 4}, (int32_t[]){4, 8}, (int32_t[]){4, 1}, (int32_t[]){1, 0}), 2,
        (int32_t[]){8, 64}, NULL);
    TirLinear inv, id;
    CHECK(l && tir_lin_invert(l, &inv) && tir_lin_compose(&inv, l, &id));
    for (int i = 0; l && i < 3; i++)
        for (int k = 0; k < l->inbits[i]; k++) {
            int32_t in[3] = {0, 0, 0}, out[3];
            in[i] = 1 << k;
            tir_lin_unpack(&id, tir_lin_apply(&id, in), out);
            bool free_bit = tir_lin_free_mask(l, i) >> k & 1;
            CHECK(free_bit ? (out[0] | out[1] | out[2]) == 0
                           : (out[i] == in[i] && (out[0] | out[1] | out[2]) == in[i]));
        }
}

/* ---- conversion plans on a simulated CTA ---- */
static int64_t flat_of(const TirLinear *l, const int32_t *in) {
    int32_t c[TIR_MAXRANK];
    tir_lin_apply_coords(l, in, c);
    int64_t f = 0;
    for (int d = 0; d < l->nout; d++)
        f = (f << l->outbits[d]) | c[d];
    return f;
}

static TirConvKind run_plan(const char *what, const TirLinear *a, const TirLinear *b, int eb) {
    TirConvPlan p;
    if (!tir_conv_plan(arena, a, b, eb, &p)) {
        fprintf(stderr, "%s: no plan\n", what);
        failures++;
        return TIR_CONV_NONE;
    }
    int ra = tir_lin_in_size(a, 0), rb = tir_lin_in_size(b, 0), nw = tir_lin_in_size(a, 2);
    int64_t *src = malloc(sizeof(int64_t) * (size_t)ra * 32 * nw),
            *dst = malloc(sizeof(int64_t) * (size_t)rb * 32 * nw);
    for (int w = 0; w < nw; w++)
        for (int l = 0; l < 32; l++)
            for (int r = 0; r < ra; r++)
                src[((int64_t)w * 32 + l) * ra + r] = flat_of(a, (int32_t[]){r, l, w});
    for (int64_t i = 0; i < (int64_t)rb * 32 * nw; i++)
        dst[i] = -1;
    if (p.kind == TIR_CONV_NONE) {
        for (int64_t i = 0; i < (int64_t)rb * 32 * nw; i++)
            dst[i] = src[i];
    } else if (p.kind == TIR_CONV_REGS) {
        for (int w = 0; w < nw; w++)
            for (int l = 0; l < 32; l++)
                for (int r = 0; r < rb; r++)
                    dst[((int64_t)w * 32 + l) * rb + r] = src[((int64_t)w * 32 + l) * ra + p.perm[r]];
    } else if (p.kind == TIR_CONV_SHUFFLE) {
        int rounds = 0;
        for (int w = 0; w < nw; w++)
            for (int r = 0; r < rb; r++) {
                int64_t sent[32];
                if (p.one_round) {
                    for (int l = 0; l < 32; l++)
                        sent[l] = src[((int64_t)w * 32 + l) * ra + p.send_reg[r * 32 + l]];
                    for (int l = 0; l < 32; l++)
                        dst[((int64_t)w * 32 + l) * rb + r] = sent[p.src_lane[r * 32 + l]];
                    rounds += w == 0;
                    continue;
                }
                /* receiver side: a round per source register, each lane keeps its own */
                for (int k = 0; k < ra; k++) {
                    bool used = false;
                    for (int l = 0; l < 32; l++)
                        used |= p.src_reg[r * 32 + l] == k;
                    if (!used)
                        continue;
                    rounds += w == 0;
                    for (int l = 0; l < 32; l++)
                        sent[l] = src[((int64_t)w * 32 + l) * ra + k];
                    for (int l = 0; l < 32; l++)
                        if (p.src_reg[r * 32 + l] == k)
                            dst[((int64_t)w * 32 + l) * rb + r] = sent[p.src_lane[r * 32 + l]];
                }
            }
        if (rounds != p.shuffles) {
            fprintf(stderr, "%s: %d shuffles run, the plan says %d\n", what, rounds, p.shuffles);
            failures++;
        }
    } else {
        int64_t *smem = malloc(sizeof(int64_t) * (size_t)p.smem_elems);
        for (int64_t i = 0; i < p.smem_elems; i++)
            smem[i] = -1;
        TirLinear sinv;
        CHECK(tir_lin_invert(&p.smem, &sinv));
        for (int w = 0; w < nw; w++)
            for (int l = 0; l < 32; l++)
                for (int r = 0; r < ra; r++) {
                    int32_t c[TIR_MAXRANK], off[1];
                    tir_lin_apply_coords(a, (int32_t[]){r, l, w}, c);
                    tir_lin_unpack(&sinv, tir_lin_apply(&sinv, c), off);
                    smem[off[0]] = src[((int64_t)w * 32 + l) * ra + r];
                }
        for (int w = 0; w < nw; w++)
            for (int l = 0; l < 32; l++)
                for (int r = 0; r < rb; r++) {
                    int32_t c[TIR_MAXRANK], off[1];
                    tir_lin_apply_coords(b, (int32_t[]){r, l, w}, c);
                    tir_lin_unpack(&sinv, tir_lin_apply(&sinv, c), off);
                    dst[((int64_t)w * 32 + l) * rb + r] = smem[off[0]];
                }
        free(smem);
    }
    int bad = 0;
    for (int w = 0; w < nw; w++)
        for (int l = 0; l < 32; l++)
            for (int r = 0; r < rb; r++)
                if (dst[((int64_t)w * 32 + l) * rb + r] != flat_of(b, (int32_t[]){r, l, w}))
                    bad++;
    if (bad) {
        fprintf(stderr, "%s: plan kind %d leaves %d registers wrong\n", what, p.kind, bad);
        failures++;
    }
    free(src);
    free(dst);
    return p.kind;
}

static const TirLinear *blk(int rank, const int32_t *spt, const int32_t *tpw, const int32_t *wpc, const int32_t *order,
                            const int32_t *shape) {
    return tir_layout_linear(mod, tir_layout_blocked(mod, rank, spt, tpw, wpc, order), rank, shape, NULL);
}

static void test_conversions(void) {
    int32_t sh[2] = {64, 64};
    const TirLinear *a = blk(2, (int32_t[]){1, 4}, (int32_t[]){4, 8}, (int32_t[]){4, 1}, (int32_t[]){1, 0}, sh);
    CHECK(run_plan("same", a, a, 4) == TIR_CONV_NONE);
    /* only the register order differs */
    const TirLinear *r1 = blk(2, (int32_t[]){2, 2}, (int32_t[]){1, 32}, (int32_t[]){4, 1}, (int32_t[]){1, 0}, sh);
    const TirLinear *r2 = blk(2, (int32_t[]){2, 2}, (int32_t[]){1, 32}, (int32_t[]){4, 1}, (int32_t[]){0, 1}, sh);
    CHECK(run_plan("register order", r1, r2, 4) == TIR_CONV_REGS);
    /* a replicated source: every lane already holds everything it needs */
    const TirLinear *rep = blk(1, (int32_t[]){8}, (int32_t[]){32}, (int32_t[]){1}, (int32_t[]){0}, (int32_t[]){8});
    const TirLinear *one = blk(1, (int32_t[]){1}, (int32_t[]){32}, (int32_t[]){1}, (int32_t[]){0}, (int32_t[]){8});
    CHECK(run_plan("from replicated", rep, one, 4) == TIR_CONV_SHUFFLE); /* each lane picks its own register */
    /* a lane permutation inside the warp: one shuffle */
    const TirLinear *s1 =
        blk(2, (int32_t[]){1, 1}, (int32_t[]){8, 4}, (int32_t[]){1, 1}, (int32_t[]){1, 0}, (int32_t[]){8, 4});
    const TirLinear *s2 =
        blk(2, (int32_t[]){1, 1}, (int32_t[]){8, 4}, (int32_t[]){1, 1}, (int32_t[]){0, 1}, (int32_t[]){8, 4});
    CHECK(run_plan("lane permutation", s1, s2, 4) == TIR_CONV_SHUFFLE);
    /* a transpose inside one warp: each of the 8 dst registers needs all 8 src registers
     * (64 shuffles against 16 shared-memory accesses): shared memory */
    const TirLinear *t1 =
        blk(2, (int32_t[]){1, 1}, (int32_t[]){1, 32}, (int32_t[]){1, 1}, (int32_t[]){1, 0}, (int32_t[]){8, 32});
    const TirLinear *t2 =
        blk(2, (int32_t[]){1, 1}, (int32_t[]){8, 4}, (int32_t[]){1, 1}, (int32_t[]){0, 1}, (int32_t[]){8, 32});
    CHECK(run_plan("warp transpose", t1, t2, 4) == TIR_CONV_SMEM);
    /* the split of a 64-element row over lanes: each dst register needs two src registers */
    const TirLinear *x1 = blk(1, (int32_t[]){1}, (int32_t[]){32}, (int32_t[]){1}, (int32_t[]){0}, (int32_t[]){64});
    const TirLinear *x2 = blk(1, (int32_t[]){2}, (int32_t[]){32}, (int32_t[]){1}, (int32_t[]){0}, (int32_t[]){64});
    CHECK(run_plan("pairs to lanes", x1, x2, 4) == TIR_CONV_SHUFFLE);
    TirConvPlan px;
    CHECK(tir_conv_plan(arena, x1, x2, 4, &px) && !px.one_round && px.shuffles == 4);
    /* across warps: shared memory */
    const TirLinear *w1 = blk(2, (int32_t[]){1, 4}, (int32_t[]){4, 8}, (int32_t[]){4, 1}, (int32_t[]){1, 0}, sh);
    const TirLinear *w2 = blk(2, (int32_t[]){4, 1}, (int32_t[]){8, 4}, (int32_t[]){1, 4}, (int32_t[]){0, 1}, sh);
    CHECK(run_plan("across warps", w1, w2, 4) == TIR_CONV_SMEM);
    CHECK(run_plan("across warps back", w2, w1, 2) == TIR_CONV_SMEM);
    /* mma accumulator <-> blocked, and to a dot operand */
    int32_t mma = tir_layout_mma(mod, 2, 2, (int32_t[]){2, 2}, (int32_t[]){16, 8, 16});
    const TirLinear *acc = tir_layout_linear(mod, mma, 2, sh, NULL);
    run_plan("mma to blocked", acc, w1, 4);
    run_plan("blocked to mma", w1, acc, 2);
    const TirLinear *opa = tir_layout_linear(mod, tir_layout_dot_operand(mod, mma, 0, 2), 2, sh, NULL);
    run_plan("blocked to operand A", w1, opa, 2);
    run_plan("mma to operand A", acc, opa, 2);
    int32_t wg = tir_layout_mma(mod, 3, 2, (int32_t[]){4, 1}, (int32_t[]){64, 64, 16});
    run_plan("wgmma to blocked", tir_layout_linear(mod, wg, 2, sh, NULL), w1, 4);

    /* a transpose through shared memory: f32, rows written, columns read.  Unswizzled,
     * the reads are 32-way conflicts; the plan's swizzle makes both sides conflict-free. */
    int32_t t32[2] = {32, 32};
    const TirLinear *rows = blk(2, (int32_t[]){1, 1}, (int32_t[]){1, 32}, (int32_t[]){1, 1}, (int32_t[]){1, 0}, t32);
    const TirLinear *cols = blk(2, (int32_t[]){1, 1}, (int32_t[]){32, 1}, (int32_t[]){1, 1}, (int32_t[]){0, 1}, t32);
    TirConvPlan p;
    CHECK(tir_conv_plan(arena, rows, cols, 4, &p) && p.kind == TIR_CONV_SMEM);
    run_plan("transpose", rows, cols, 4);
    const TirLinear *plain =
        tir_layout_linear(mod, tir_layout_shared(mod, 2, (int32_t[]){1, 0}, 1, 1, 1, 0), 2, t32, NULL);
    TirBankCount rd = tir_lin_bank_conflicts(cols, plain, 4, TIR_ACCESS_VECTOR, 1);
    CHECK(rd.ok && rd.wavefronts == 32 * 32 && rd.ideal == 32);
    CHECK(p.write_wavefronts == 32 && p.read_wavefronts == 32);
}

/* ---- bank conflicts ---- */

/* The count access by access, all warps, all phases: what the function's XOR argument
 * shortcuts. */
static int64_t brute_wavefronts(const TirLinear *dist, const TirLinear *smem, int eb, TirAccessKind kind, int vec) {
    TirLinear inv;
    tir_lin_invert(smem, &inv);
    int nr = tir_lin_in_size(dist, 0), nw = tir_lin_in_size(dist, 2);
    int per = kind == TIR_ACCESS_LDMATRIX ? 4 / eb : vec, bytes = per * eb;
    int nph = kind == TIR_ACCESS_LDMATRIX || bytes <= 4 ? 1 : bytes / 4, lph = 32 / nph;
    int64_t total = 0;
    for (int w = 0; w < nw; w++)
        for (int g = 0; g < nr / per; g++)
            for (int ph = 0; ph < nph; ph++) {
                int64_t words[128];
                int n = 0;
                for (int l = ph * lph; l < (ph + 1) * lph; l++)
                    for (int r = g * per; r < (g + 1) * per; r++) {
                        int32_t c[TIR_MAXRANK], off[1];
                        tir_lin_apply_coords(dist, (int32_t[]){r, l, w}, c);
                        tir_lin_unpack(&inv, tir_lin_apply(&inv, c), off);
                        int64_t word = (int64_t)off[0] * eb / 4;
                        bool seen = false;
                        for (int j = 0; j < n; j++)
                            seen |= words[j] == word;
                        if (!seen)
                            words[n++] = word;
                    }
                int64_t worst = 0;
                for (int b = 0; b < 32; b++) {
                    int64_t k = 0;
                    for (int j = 0; j < n; j++)
                        k += (words[j] & 31) == b;
                    if (k > worst)
                        worst = k;
                }
                total += worst;
            }
    return total;
}

static void check_banks(const char *what, const TirLinear *dist, const TirLinear *smem, int eb, TirAccessKind kind,
                        int vec, int64_t want_per_access) {
    TirBankCount bc = tir_lin_bank_conflicts(dist, smem, eb, kind, vec);
    CHECK_MSG(bc.ok, "%s: access refused", what);
    CHECK_MSG(bc.wavefronts == brute_wavefronts(dist, smem, eb, kind, vec), "%s: %lld wavefronts, counted %lld", what,
              (long long)bc.wavefronts, (long long)brute_wavefronts(dist, smem, eb, kind, vec));
    int nph = kind == TIR_ACCESS_LDMATRIX || vec * eb <= 4 ? 1 : vec * eb / 4;
    CHECK_MSG(bc.wavefronts == want_per_access * bc.accesses, "%s: %lld wavefronts over %lld accesses, want %lld each",
              what, (long long)bc.wavefronts, (long long)bc.accesses, (long long)want_per_access);
    CHECK_MSG(bc.ideal == nph * bc.accesses, "%s: ideal", what);
}

static void test_banks(void) {
    int32_t o10[2] = {1, 0};
    /* f32 rows, 16-byte vectors: 4 phases of 8 lanes, each 128 contiguous bytes */
    int32_t sh[2] = {64, 64};
    const TirLinear *v4 = blk(2, (int32_t[]){1, 4}, (int32_t[]){2, 16}, (int32_t[]){4, 1}, o10, sh);
    const TirLinear *plain = tir_layout_linear(mod, tir_layout_shared(mod, 2, o10, 1, 1, 1, 0), 2, sh, NULL);
    check_banks("f32 x4 rows", v4, plain, 4, TIR_ACCESS_VECTOR, 4, 4);
    check_banks("f32 scalar rows", v4, plain, 4, TIR_ACCESS_VECTOR, 1, 4); /* lanes 8 apart share a bank, 2 rows */
    /* f16 operand A through ldmatrix: 16 f16 per row is 32 bytes: rows 4 apart share banks */
    int32_t mma = tir_layout_mma(mod, 2, 2, (int32_t[]){1, 1}, (int32_t[]){16, 8, 16});
    int32_t opa = tir_layout_dot_operand(mod, mma, 0, 2);
    const TirLinear *a16 = tir_layout_linear(mod, opa, 2, (int32_t[]){16, 16}, NULL);
    const TirLinear *p16 =
        tir_layout_linear(mod, tir_layout_shared(mod, 2, o10, 1, 1, 1, 0), 2, (int32_t[]){16, 16}, NULL);
    check_banks("ldmatrix 32 B rows", a16, p16, 2, TIR_ACCESS_LDMATRIX, 0, 2);
    /* 64 f16 per row (128 B): every row of a matrix in the same banks, 8-way */
    int32_t k64[2] = {64, 64};
    const TirLinear *a64 = tir_layout_linear(mod, opa, 2, k64, NULL);
    const TirLinear *p64 = tir_layout_linear(mod, tir_layout_shared(mod, 2, o10, 1, 1, 1, 0), 2, k64, NULL);
    check_banks("ldmatrix 128 B rows unswizzled", a64, p64, 2, TIR_ACCESS_LDMATRIX, 0, 8);
    /* the 128-byte swizzle wgmma and TMA use, and the ldmatrix one: conflict-free */
    const TirLinear *s128 = tir_layout_linear(mod, tir_layout_shared_nvmma(mod, 2, o10, 128, 16), 2, k64, NULL);
    check_banks("ldmatrix 128 B swizzle", a64, s128, 2, TIR_ACCESS_LDMATRIX, 0, 1);
    const TirLinear *sw = tir_layout_linear(mod, tir_layout_shared(mod, 2, o10, 8, 1, 8, 0), 2, k64, NULL);
    check_banks("ldmatrix vec 8 swizzle", a64, sw, 2, TIR_ACCESS_LDMATRIX, 0, 1);
    /* operand B [K, N] from N-contiguous memory is the .trans case: 8 rows of 16 B too */
    const TirLinear *b64 = tir_layout_linear(mod, tir_layout_dot_operand(mod, mma, 1, 2), 2, k64, NULL);
    check_banks("ldmatrix.trans B unswizzled", b64, p64, 2, TIR_ACCESS_LDMATRIX, 0, 8);
    check_banks("ldmatrix.trans B swizzled", b64, sw, 2, TIR_ACCESS_LDMATRIX, 0, 1);
    /* accesses that are not possible are refused: 4 registers that are not adjacent */
    TirBankCount bad = tir_lin_bank_conflicts(a64, p64, 2, TIR_ACCESS_VECTOR, 4);
    CHECK(!bad.ok);
}

/* ---- text form ---- */
static void test_text(void) {
    TirArena *a = tir_arena_new();
    TirModule *m = tir_module_new(a);
    int32_t bl = tir_layout_blocked(m, 2, (int32_t[]){1, 4}, (int32_t[]){4, 8}, (int32_t[]){4, 1}, (int32_t[]){1, 0});
    int32_t mma = tir_layout_mma(m, 2, 2, (int32_t[]){2, 2}, (int32_t[]){16, 8, 16});
    int32_t idx[] = {
        bl,
        tir_layout_slice(m, bl, 1),
        mma,
        tir_layout_mma(m, 3, 2, (int32_t[]){4, 1}, (int32_t[]){64, 128, 16}),
        tir_layout_dot_operand(m, mma, 0, 2),
        tir_layout_dot_operand(m, mma, 1, 4),
        tir_layout_shared(m, 2, (int32_t[]){1, 0}, 8, 1, 8, 0),
        tir_layout_shared_nvmma(m, 2, (int32_t[]){1, 0}, 128, 16),
        tir_layout_mma_grouped(m, mma, 4),
    };
    const char *want[] = {
        "#blocked<spt=[1, 4], tpw=[4, 8], wpc=[4, 1], order=[1, 0]>",
        "#slice<dim=1, parent=#blocked<spt=[1, 4], tpw=[4, 8], wpc=[4, 1], order=[1, 0]>>",
        "#mma<v=2, wpc=[2, 2], instr=[16, 8, 16]>",
        "#mma<v=3, wpc=[4, 1], instr=[64, 128, 16]>",
        "#dot_op<idx=0, k=2, parent=#mma<v=2, wpc=[2, 2], instr=[16, 8, 16]>>",
        "#dot_op<idx=1, k=4, parent=#mma<v=2, wpc=[2, 2], instr=[16, 8, 16]>>",
        "#shared<vec=8, phase=1, max_phase=8, order=[1, 0]>",
        "#shared<vec=8, phase=1, max_phase=8, order=[1, 0], atom=64>",
        "#mma<v=2, wpc=[2, 2], instr=[16, 8, 16], ngroup=4>",
    };
    for (size_t i = 0; i < sizeof idx / sizeof *idx; i++) {
        char buf[256], src[512];
        tir_layout_print(buf, sizeof buf, m, idx[i]);
        CHECK_MSG(strcmp(buf, want[i]) == 0, "printed %s, want %s", buf, want[i]);
        /* parse it back inside a type and compare the printed form and the map */
        int rank = tir_layout_rank(m, idx[i]);
        snprintf(src, sizeof src, "kernel @k () {\n  %%0 = constant {value=0.0} : tile<%sf32, %s>\n}\n",
                 rank == 1 ? "64x" : "64x64x", buf);
        TirModule *pm = tir_parse_module(a, "t", src, strlen(src), NULL, NULL);
        CHECK_MSG(pm != NULL, "parse %s", src);
        int32_t pl = pm->first->body->first->res[0]->ty.layout;
        char back[256];
        tir_layout_print(back, sizeof back, pm, pl);
        CHECK_MSG(strcmp(back, buf) == 0, "round trip %s -> %s", buf, back);
        int32_t shape[2] = {64, 64};
        const TirLinear *x = tir_layout_linear(m, idx[i], rank, shape, NULL),
                        *y = tir_layout_linear(pm, pl, rank, shape, NULL);
        CHECK_MSG(x && y && tir_lin_equal(x, y), "map after round trip of %s", buf);
    }
    tir_arena_free(a);
}

int main(void) {
    arena = tir_arena_new();
    mod = tir_module_new(arena);
    test_blocked();
    test_slice();
    test_blocked_form();
    test_mma();
    test_mma_grouped();
    test_runs_first();
    test_dot_operands();
    test_shared();
    test_compose();
    test_conversions();
    test_banks();
    test_text();
    tir_arena_free(arena);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
