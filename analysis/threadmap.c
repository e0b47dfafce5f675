/* Thread maps: a thread's view of a layout's linear map (analysis.h), as plain numbers the
 * backend turns into LLVM values (backend/lower_threadmap.c) and tests check against the
 * map element by element (tests/analysis). */
#include "analysis.h"

#include <string.h>

static void apply1(const TirLinear *l, int dim, int32_t idx, int32_t *coord) {
    int32_t in[TIR_LIN_MAXDIMS] = {0};
    memset(coord, 0, sizeof(int32_t) * TIR_MAXRANK);
    if (dim >= 0)
        in[dim] = idx;
    tir_lin_apply_coords(l, in, coord);
}

static int in_bits(const TirLinear *l, int dim) {
    int bits = 0;
    if (dim >= 0)
        while ((1 << bits) < tir_lin_in_size(l, dim))
            bits++;
    return bits;
}

bool analysis_thread_map(const TirLinear *lin, AnaThreadMap *tm) {
    memset(tm, 0, sizeof *tm);
    if (!lin || lin->nout > TIR_MAXRANK)
        return false;
    tm->lin = lin;
    tm->rank = lin->nout;
    tm->reg_dim = tir_lin_in_dim(lin, TIR_LIN_REG);
    tm->lane_dim = tir_lin_in_dim(lin, TIR_LIN_LANE);
    tm->warp_dim = tir_lin_in_dim(lin, TIR_LIN_WARP);
    if (tm->reg_dim < 0 || tm->lane_dim < 0)
        return false;
    tm->regs = tir_lin_in_size(lin, tm->reg_dim);
    tm->lane_bits = in_bits(lin, tm->lane_dim);
    tm->warp_bits = in_bits(lin, tm->warp_dim);
    for (int k = 0; k < tm->lane_bits; k++)
        apply1(lin, tm->lane_dim, 1 << k, tm->lane_basis[k]);
    for (int k = 0; k < tm->warp_bits; k++)
        apply1(lin, tm->warp_dim, 1 << k, tm->warp_basis[k]);
    for (int d = 0; d < tm->rank; d++) {
        for (int k = 0; k < tm->lane_bits; k++)
            tm->thread_bits[d] |= tm->lane_basis[k][d];
        for (int k = 0; k < tm->warp_bits; k++)
            tm->thread_bits[d] |= tm->warp_basis[k][d];
        tm->vec[d] = tir_lin_contig(lin, tm->reg_dim, d);
    }
    tm->lane_copies = tir_lin_free_mask(lin, tm->lane_dim);
    tm->warp_copies = tm->warp_dim >= 0 ? tir_lin_free_mask(lin, tm->warp_dim) : 0;
    return true;
}

void analysis_thread_base(const AnaThreadMap *tm, int32_t lane, int32_t warp, int32_t *coord) {
    for (int d = 0; d < tm->rank; d++) {
        int32_t c = 0;
        for (int k = 0; k < tm->lane_bits; k++)
            if (lane >> k & 1)
                c ^= tm->lane_basis[k][d];
        for (int k = 0; k < tm->warp_bits; k++)
            if (warp >> k & 1)
                c ^= tm->warp_basis[k][d];
        coord[d] = c;
    }
}

void analysis_reg_offset(const AnaThreadMap *tm, int32_t reg, int32_t *coord) {
    apply1(tm->lin, tm->reg_dim, reg, coord);
}

int32_t analysis_join(const AnaThreadMap *tm, int d, int32_t base, int32_t reg_off) {
    return reg_off & tm->thread_bits[d] ? base ^ reg_off : base + reg_off;
}

bool analysis_owner_mask(const AnaThreadMap *tm, int warps, uint32_t *lane_mask, uint32_t *warp_mask) {
    uint32_t wm = tm->warp_copies;
    int span = 1 << tm->warp_bits;
    if (warps > span)
        wm |= ~(uint32_t)(span - 1);
    *lane_mask = tm->lane_copies;
    *warp_mask = wm;
    return *lane_mask || *warp_mask;
}

bool analysis_is_owner(const AnaThreadMap *tm, int32_t lane, int32_t warp, int warps) {
    uint32_t lm, wm;
    analysis_owner_mask(tm, warps, &lm, &wm);
    return !((uint32_t)lane & lm) && !((uint32_t)warp & wm);
}

/* Whether x moves dim d alone: every other coordinate zero. */
static bool only_along(const AnaThreadMap *tm, const int32_t *c, int d) {
    for (int o = 0; o < tm->rank; o++)
        if (o != d && c[o])
            return false;
    return true;
}

int analysis_thread_fields(const AnaThreadMap *tm, int d, AnaField *f) {
    int n = 0;
    int32_t seen = 0;
    for (int src = ANA_LANE; src <= ANA_WARP; src++) {
        int bits = src == ANA_LANE ? tm->lane_bits : tm->warp_bits;
        const int32_t (*basis)[TIR_MAXRANK] = src == ANA_LANE ? tm->lane_basis : tm->warp_basis;
        for (int k = 0; k < bits;) {
            int32_t b = basis[k][d];
            if (!b) {
                k++;
                continue;
            }
            if ((b & (b - 1)) || (b & seen) || !only_along(tm, basis[k], d))
                return -1;
            int run = 1;
            while (k + run < bits && basis[k + run][d] == b << run && !(seen & b << run) &&
                   only_along(tm, basis[k + run], d))
                run++;
            for (int i = 0; i < run; i++)
                seen |= b << i;
            f[n++] = (AnaField){(uint8_t)src, (uint8_t)k, (uint8_t)run, b};
            k += run;
        }
    }
    return n;
}

/* ---- shared-memory stages ---- */

static int32_t swizzle_offset(const AnaStage *st, const int32_t *coord);

/* The swizzle of analysis.h read off the map: false where it is not that form. */
static bool read_swizzle(const TirLinear *smem, AnaStage *st) {
    int off = tir_lin_in_dim(smem, TIR_LIN_OFFSET), rank = smem->nout;
    /* cdim: the dim offset bit 0 moves (rank 1: dim 0) */
    int32_t c[TIR_MAXRANK];
    apply1(smem, off, 1, c);
    st->cdim = 0;
    for (int d = 0; d < rank; d++)
        if (c[d])
            st->cdim = d;
    int cbits = smem->outbits[st->cdim], obits = in_bits(smem, off);
    /* rows: the offset bits above the column; the swizzle's phase bits set column bits too */
    st->vec = 1;
    st->per_phase = 1;
    st->max_phase = 1;
    int first = -1, nphase = 0;
    for (int k = cbits; k < obits; k++) {
        apply1(smem, off, 1 << k, c);
        if (c[st->cdim]) {
            if (first < 0)
                first = k;
            nphase++;
        }
    }
    if (first >= 0) {
        apply1(smem, off, 1 << first, c);
        st->vec = c[st->cdim];
        st->per_phase = 1 << (first - cbits);
        st->max_phase = 1 << nphase;
    }
    /* the formula at every offset, against the map */
    for (int64_t o = 0; o < st->numel; o++) {
        apply1(smem, off, (int32_t)o, c);
        if (swizzle_offset(st, c) != (int32_t)o) {
            st->vec = st->per_phase = st->max_phase = 1;
            return false;
        }
    }
    return true;
}

/* The formula of the swizzle, for the check above. */
static int32_t swizzle_offset(const AnaStage *st, const int32_t *coord) {
    int rank = st->inv.nin;
    int32_t row = 0;
    for (int d = 0; d < rank; d++)
        if (d != st->cdim)
            row = (row << st->inv.inbits[d]) + coord[d];
    int lv = __builtin_ctz((unsigned)st->vec);
    int32_t col = coord[st->cdim], chunk = col >> lv;
    chunk ^= (row >> __builtin_ctz((unsigned)st->per_phase)) & (st->max_phase - 1);
    return (row << st->inv.inbits[st->cdim]) + (chunk << lv) + (col & (st->vec - 1));
}

bool analysis_stage(const TirLinear *smem, AnaStage *st) {
    memset(st, 0, sizeof *st);
    if (!smem || tir_lin_in_dim(smem, TIR_LIN_OFFSET) < 0 || smem->nout > TIR_MAXRANK ||
        !tir_lin_invert(smem, &st->inv))
        return false;
    st->numel = (int64_t)1 << tir_lin_total_outbits(smem);
    st->vec = st->per_phase = st->max_phase = 1;
    st->swizzle_ok = st->numel <= (1 << 20) && read_swizzle(smem, st);
    return true;
}

int32_t analysis_stage_offset(const AnaStage *st, const int32_t *coord) {
    int32_t o[TIR_LIN_MAXDIMS] = {0};
    tir_lin_apply_coords(&st->inv, coord, o);
    return o[0];
}

bool analysis_stage_access(const AnaStage *st, const TirLinear *dist, TirLinear *access) {
    return tir_lin_compose(&st->inv, dist, access);
}

int analysis_access_vec(const AnaThreadMap *a, int max) {
    for (int w = max; w > 1; w /= 2) {
        bool ok = a->regs % w == 0 && !(a->thread_bits[0] & (w - 1));
        for (int r0 = 0; ok && r0 < a->regs; r0 += w) {
            int32_t c0[TIR_MAXRANK], c[TIR_MAXRANK];
            analysis_reg_offset(a, r0, c0);
            ok = c0[0] % w == 0;
            for (int i = 1; ok && i < w; i++) {
                analysis_reg_offset(a, r0 + i, c);
                ok = c[0] == c0[0] + i;
            }
        }
        if (ok)
            return w;
    }
    return 1;
}
