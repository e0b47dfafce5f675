/* Unit tests of analysis/threadmap.c: every number a thread map gives (the thread's part,
 * each register's constant part and how they join, the fields, the owner mask, vector
 * widths, stage offsets and their swizzle, stage accesses) against a brute-force
 * enumeration of the layout's linear map, for blocked layouts and slices of them, the
 * mma.sync accumulator (grouped too) and operands, the wgmma m64nNk16 accumulator, and
 * swizzled shared stages.  The wgmma case also checks the map against the fragment
 * formula of the PTX ISA: a layout added in ir/layout.c is usable through analysis/. */
#include "analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define FAIL(...)                                       \
    do {                                                \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                   \
        fprintf(stderr, "\n");                          \
        failures++;                                     \
    } while (0)

static TirModule *mod;

static void apply(const TirLinear *l, int r, int ln, int w, int32_t *c) {
    int32_t in[TIR_LIN_MAXDIMS] = {0};
    in[tir_lin_in_dim(l, TIR_LIN_REG)] = r;
    in[tir_lin_in_dim(l, TIR_LIN_LANE)] = ln;
    if (tir_lin_in_dim(l, TIR_LIN_WARP) >= 0)
        in[tir_lin_in_dim(l, TIR_LIN_WARP)] = w;
    memset(c, 0, sizeof(int32_t) * TIR_MAXRANK);
    tir_lin_apply_coords(l, in, c);
}

static int64_t flat(int rank, const int32_t *shape, const int32_t *c) {
    int64_t f = 0;
    for (int d = 0; d < rank; d++)
        f = f * shape[d] + c[d];
    return f;
}

/* Every number of tm against the map, element by element; `warps` the CTA's. */
static void check_map(const char *what, const TirLinear *l, int rank, const int32_t *shape, int warps) {
    AnaThreadMap tm;
    if (!l || !analysis_thread_map(l, &tm)) {
        FAIL("%s: no thread map", what);
        return;
    }
    int lanes = 1 << tm.lane_bits, nw = 1 << tm.warp_bits;
    if (tm.rank != rank || tm.regs != tir_lin_in_size(l, tir_lin_in_dim(l, TIR_LIN_REG))) {
        FAIL("%s: rank %d regs %d", what, tm.rank, tm.regs);
        return;
    }
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    int *owners = calloc((size_t)n, sizeof(int));
    int32_t thread_or[TIR_MAXRANK] = {0};
    AnaField fields[TIR_MAXRANK][2 * TIR_LIN_MAXBITS];
    int nf[TIR_MAXRANK];
    for (int d = 0; d < rank; d++)
        nf[d] = analysis_thread_fields(&tm, d, fields[d]);
    for (int w = 0; w < warps; w++)
        for (int ln = 0; ln < lanes; ln++) {
            int32_t base[TIR_MAXRANK];
            analysis_thread_base(&tm, ln, w % nw, base);
            bool owner = analysis_is_owner(&tm, ln, w, warps);
            for (int d = 0; d < rank; d++) {
                thread_or[d] |= base[d];
                if (nf[d] < 0)
                    continue;
                int32_t sum = 0;
                for (int i = 0; i < nf[d]; i++) {
                    const AnaField *f = &fields[d][i];
                    int32_t id = f->src == ANA_LANE ? ln : w % nw;
                    sum += ((id >> f->shift) & ((1 << f->bits) - 1)) * f->mult;
                }
                if (sum != base[d]) {
                    FAIL("%s: lane %d warp %d dim %d: fields give %d, the map %d", what, ln, w, d, sum, base[d]);
                    goto out;
                }
            }
            /* a thread holding one element in several registers writes it once per register */
            uint8_t *mine = owner ? calloc((size_t)n, 1) : NULL;
            for (int r = 0; r < tm.regs; r++) {
                int32_t want[TIR_MAXRANK], off[TIR_MAXRANK];
                apply(l, r, ln, w % nw, want);
                analysis_reg_offset(&tm, r, off);
                for (int d = 0; d < rank; d++) {
                    int32_t got = analysis_join(&tm, d, base[d], off[d]);
                    if (got != want[d] || (base[d] ^ off[d]) != want[d]) {
                        FAIL("%s: reg %d lane %d warp %d dim %d: %d, the map %d", what, r, ln, w, d, got, want[d]);
                        free(mine);
                        goto out;
                    }
                }
                int64_t e = flat(rank, shape, want);
                if (mine && !mine[e]) {
                    mine[e] = 1;
                    owners[e]++;
                }
            }
            free(mine);
        }
    for (int64_t e = 0; e < n; e++)
        if (owners[e] != 1) {
            FAIL("%s: element %lld has %d owners", what, (long long)e, owners[e]);
            break;
        }
    for (int d = 0; d < rank; d++) {
        if (thread_or[d] != tm.thread_bits[d])
            FAIL("%s: dim %d thread bits %#x, the map sets %#x", what, d, tm.thread_bits[d], thread_or[d]);
        /* vec: registers 0..w-1 at consecutive coordinates along d from register 0's */
        int w = 1;
        int32_t c0[TIR_MAXRANK];
        apply(l, 0, 0, 0, c0);
        for (;; w *= 2) {
            bool ok = 2 * w <= tm.regs;
            for (int r = 1; ok && r < 2 * w; r++) {
                int32_t c[TIR_MAXRANK];
                apply(l, r, 0, 0, c);
                for (int o = 0; o < rank; o++)
                    ok &= c[o] == c0[o] + (o == d ? r : 0);
            }
            if (!ok)
                break;
        }
        if (w != tm.vec[d])
            FAIL("%s: dim %d vec %d, the map %d", what, d, tm.vec[d], w);
    }
out:
    free(owners);
}

static void check_layout(int32_t layout, int rank, const int32_t *shape, int warps) {
    char what[256];
    int k = tir_layout_print(what, sizeof what, mod, layout);
    for (int d = 0; d < rank && k > 0 && (size_t)k < sizeof what; d++)
        k += snprintf(what + k, sizeof what - (size_t)k, "%s%d", d ? "x" : " ", shape[d]);
    check_map(what, tir_layout_linear(mod, layout, rank, shape, NULL), rank, shape, warps);
}

/* The blocked digits (analysis_blocked) place a thread's first element where the map does:
 * ((warp digit tpw + lane digit) spt) mod the extent along each tile dim. */
static void check_blocked_digits(int32_t layout, int rank, const int32_t *shape, int warps) {
    AnaBlocked b;
    AnaThreadMap tm;
    const TirLinear *l = tir_layout_linear(mod, layout, rank, shape, NULL);
    if (!analysis_blocked(mod, layout, rank, &b, NULL) || !l || !analysis_thread_map(l, &tm)) {
        FAIL("blocked digits: no form or map (rank %d)", rank);
        return;
    }
    for (int w = 0; w < warps; w++)
        for (int ln = 0; ln < 32; ln++) {
            int32_t base[TIR_MAXRANK];
            analysis_thread_base(&tm, ln, w, base);
            for (int d = 0; d < rank; d++) {
                int rd = b.root_dim[d];
                int32_t ld = ln / b.lane_stride[rd] % b.tpw[rd], wd = w / b.warp_stride[rd] % b.wpc[rd];
                int32_t c = ((wd * b.tpw[rd] + ld) * b.spt[rd]) & (shape[d] - 1);
                if (c != base[d]) {
                    FAIL("blocked digits: lane %d warp %d dim %d: %d, the map %d", ln, w, d, c, base[d]);
                    return;
                }
            }
        }
}

static void test_blocked(void) {
    struct {
        int32_t spt[2], tpw[2], wpc[2], order[2], shape[2];
    } c[] = {
        {{1, 4}, {8, 4}, {4, 1}, {1, 0}, {64, 64}},   {{1, 8}, {4, 8}, {2, 2}, {1, 0}, {16, 256}},
        {{4, 1}, {8, 4}, {1, 4}, {0, 1}, {128, 32}},  {{1, 4}, {8, 4}, {4, 1}, {1, 0}, {8, 8}}, /* copies */
        {{2, 2}, {2, 16}, {8, 1}, {1, 0}, {1, 1024}},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        int32_t b = tir_layout_blocked(mod, 2, c[i].spt, c[i].tpw, c[i].wpc, c[i].order);
        int warps = c[i].wpc[0] * c[i].wpc[1];
        check_layout(b, 2, c[i].shape, warps);
        check_layout(b, 2, c[i].shape, 2 * warps); /* a CTA wider than the layout: copies */
        check_blocked_digits(b, 2, c[i].shape, warps);
        for (int d = 0; d < 2; d++) {
            check_layout(tir_layout_slice(mod, b, d), 1, &c[i].shape[1 - d], warps);
            check_blocked_digits(tir_layout_slice(mod, b, d), 1, &c[i].shape[1 - d], warps);
        }
    }
    /* the fields of a blocked layout: lane and warp digits, as TirBlockedForm had them */
    int32_t b = tir_layout_blocked(mod, 2, (int32_t[]){1, 4}, (int32_t[]){8, 4}, (int32_t[]){4, 1}, (int32_t[]){1, 0});
    AnaThreadMap tm;
    AnaField f[2 * TIR_LIN_MAXBITS];
    if (!analysis_thread_map(tir_layout_linear(mod, b, 2, (int32_t[]){64, 64}, NULL), &tm))
        FAIL("blocked: no thread map");
    else if (analysis_thread_fields(&tm, 1, f) != 1 || f[0].src != ANA_LANE || f[0].shift != 0 || f[0].bits != 2 ||
             f[0].mult != 4)
        FAIL("blocked: the column field is not lane bits 0..1 times 4");
    else if (analysis_thread_fields(&tm, 0, f) != 2 || f[1].src != ANA_WARP || f[1].bits != 2 || f[1].mult != 8)
        FAIL("blocked: the row fields are not lane bits 2..4 and warp bits 0..1 times 8");
    else if (tm.vec[1] != 4 || tm.vec[0] != 1)
        FAIL("blocked: vec %d %d", tm.vec[0], tm.vec[1]);
}

static void test_mma(void) {
    int32_t instr[3] = {16, 8, 16};
    int32_t wpc[][2] = {{1, 1}, {2, 2}, {4, 1}, {2, 4}};
    int32_t shapes[][2] = {{16, 8}, {64, 64}, {128, 256}, {16, 16}}; /* 16x16 over 2x4 warps: copies */
    for (size_t i = 0; i < sizeof wpc / sizeof *wpc; i++) {
        int32_t mma = tir_layout_mma(mod, 2, 2, wpc[i], instr);
        int warps = wpc[i][0] * wpc[i][1];
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
            check_layout(mma, 2, shapes[s], warps);
            check_layout(tir_layout_slice(mod, mma, 0), 1, &shapes[s][1], warps);
            check_layout(tir_layout_slice(mod, mma, 1), 1, &shapes[s][0], warps);
            for (int g = 2; g <= 4; g *= 2)
                check_layout(tir_layout_mma_grouped(mod, mma, g), 2, shapes[s], warps);
        }
        for (int kw = 1; kw <= 4; kw *= 2) {
            int32_t a[2] = {64, 8 * kw * 2}, b[2] = {8 * kw * 2, 64};
            check_layout(tir_layout_dot_operand(mod, mma, 0, kw), 2, a, warps);
            check_layout(tir_layout_dot_operand(mod, mma, 1, kw), 2, b, warps);
        }
    }
}

/* The wgmma m64nNk16 accumulator (mma version 3) as the PTX ISA draws it: warp w of a
 * warpgroup holds rows 16 (w % 4) + lane / 4 + 8 ((r / 2) % 2), columns 8 (r / 4) +
 * 2 (lane % 4) + r % 2 of its 64 x N tile; warpgroups along M, then N. */
static void test_wgmma(void) {
    int32_t N[] = {8, 64, 128, 256};
    for (size_t i = 0; i < sizeof N / sizeof *N; i++)
        for (int wg = 1; wg <= 2; wg++) {
            int32_t wpc[2] = {4 * wg, 1}, instr[3] = {64, N[i], 16};
            int32_t acc = tir_layout_mma(mod, 3, 2, wpc, instr);
            int32_t shape[2] = {64 * wg, N[i]};
            check_layout(acc, 2, shape, 4 * wg);
            const TirLinear *l = tir_layout_linear(mod, acc, 2, shape, NULL);
            AnaThreadMap tm;
            if (!l || !analysis_thread_map(l, &tm) || tm.regs != N[i] / 2) {
                FAIL("wgmma m64n%dk16: %d registers, want %d", N[i], l ? tm.regs : -1, N[i] / 2);
                continue;
            }
            for (int w = 0; w < 4 * wg; w++)
                for (int ln = 0; ln < 32; ln++) {
                    int32_t base[TIR_MAXRANK];
                    analysis_thread_base(&tm, ln, w, base);
                    for (int r = 0; r < tm.regs; r++) {
                        int32_t off[TIR_MAXRANK];
                        analysis_reg_offset(&tm, r, off);
                        int32_t row = 16 * w + ln / 4 + 8 * ((r / 2) % 2), col = 8 * (r / 4) + 2 * (ln % 4) + r % 2;
                        if (analysis_join(&tm, 0, base[0], off[0]) != row ||
                            analysis_join(&tm, 1, base[1], off[1]) != col) {
                            FAIL("wgmma m64n%dk16 warp %d lane %d reg %d: (%d, %d), want (%d, %d)", N[i], w, ln, r,
                                 analysis_join(&tm, 0, base[0], off[0]), analysis_join(&tm, 1, base[1], off[1]), row,
                                 col);
                            return;
                        }
                    }
                }
        }
}

/* Stages: the offset of every coordinate, the swizzle read off the map, and a tile's
 * accesses (their offsets and vector width) against the map. */
static void check_stage(int32_t smem, int32_t dist, const int32_t *shape, int vec, int pp, int mp, bool formula,
                        int want_vec) {
    char what[256];
    tir_layout_print(what, sizeof what, mod, smem);
    const TirLinear *s = tir_layout_linear(mod, smem, 2, shape, NULL);
    AnaStage st;
    if (!s || !analysis_stage(s, &st)) {
        FAIL("%s: no stage", what);
        return;
    }
    if (st.numel != (int64_t)shape[0] * shape[1] || st.swizzle_ok != formula ||
        (formula && (st.vec != vec || st.per_phase != pp || st.max_phase != mp || st.cdim != 1)))
        FAIL("%s %dx%d: numel %lld swizzle %d vec %d per_phase %d max_phase %d cdim %d", what, shape[0], shape[1],
             (long long)st.numel, st.swizzle_ok, st.vec, st.per_phase, st.max_phase, st.cdim);
    for (int32_t o = 0; o < (int32_t)st.numel; o++) {
        int32_t in[1] = {o}, c[TIR_MAXRANK] = {0};
        tir_lin_apply_coords(s, in, c);
        if (analysis_stage_offset(&st, c) != o) {
            FAIL("%s: (%d, %d) at %d, the map says %d", what, c[0], c[1], analysis_stage_offset(&st, c), o);
            return;
        }
    }
    const TirLinear *d = tir_layout_linear(mod, dist, 2, shape, NULL);
    TirLinear acc;
    AnaThreadMap tm;
    if (!d || !analysis_stage_access(&st, d, &acc) || !analysis_thread_map(&acc, &tm)) {
        FAIL("%s: no access map", what);
        return;
    }
    for (int w = 0; w < 1 << tm.warp_bits; w++)
        for (int ln = 0; ln < 32; ln++)
            for (int r = 0; r < tm.regs; r++) {
                int32_t off[TIR_MAXRANK], c[TIR_MAXRANK], want[TIR_MAXRANK];
                apply(&acc, r, ln, w, off);
                apply(d, r, ln, w, want);
                int32_t in[1] = {off[0]};
                tir_lin_apply_coords(s, in, c);
                if (c[0] != want[0] || c[1] != want[1]) {
                    FAIL("%s: reg %d lane %d warp %d reads offset %d = (%d, %d), holds (%d, %d)", what, r, ln, w,
                         off[0], c[0], c[1], want[0], want[1]);
                    return;
                }
            }
    /* the access map's own numbers: its register parts overlap the swizzled thread part */
    int32_t numel = (int32_t)st.numel;
    check_map(what, &acc, 1, &numel, 1 << tm.warp_bits);
    int got = analysis_access_vec(&tm, 8);
    if (got != want_vec)
        FAIL("%s: access vec %d, want %d", what, got, want_vec);
}

static void test_stages(void) {
    int32_t order[2] = {1, 0};
    int32_t rows = tir_layout_blocked(mod, 2, (int32_t[]){1, 8}, (int32_t[]){4, 8}, (int32_t[]){4, 1}, order);
    int32_t mma = tir_layout_mma(mod, 2, 2, (int32_t[]){2, 2}, (int32_t[]){16, 8, 16});
    int32_t a = tir_layout_dot_operand(mod, mma, 0, 2);
    int32_t sh[2] = {64, 64};
    check_stage(tir_layout_shared(mod, 2, order, 8, 1, 8, 0), rows, sh, 8, 1, 8, true, 8);
    check_stage(tir_layout_shared(mod, 2, order, 4, 2, 4, 0), rows, sh, 4, 2, 4, true, 4);
    check_stage(tir_layout_shared(mod, 2, order, 1, 1, 1, 0), rows, sh, 1, 1, 1, true, 8);
    /* the operand's registers: 2 consecutive elements of K, the swizzle keeps pairs */
    check_stage(tir_layout_shared(mod, 2, order, 8, 1, 8, 0), a, sh, 8, 1, 8, true, 2);
    /* an nvmma atom narrower than the tile: no row-swizzle formula, the map alone */
    check_stage(tir_layout_shared_nvmma(mod, 2, order, 32, 16), rows, sh, 0, 0, 0, false, 8);
}

int main(void) {
    TirArena *arena = tir_arena_new();
    mod = tir_module_new(arena);
    test_blocked();
    test_mma();
    test_wgmma();
    test_stages();
    tir_arena_free(arena);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
