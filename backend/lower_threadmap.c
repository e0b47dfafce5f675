/* The one file that turns a thread's view of a layout into LLVM values: the thread's part
 * of each coordinate (from its lane and warp), each register's constant part joined to
 * it, the owner predicates, and the offsets of shared-memory accesses.  The numbers come
 * from analysis/ (thread maps, blocked digits, stages); every lower_*.c asks here for a
 * coordinate instead of working one out.  Values that depend only on the thread are built
 * in the entry block (L->eb). */
#include "tb_internal.h"

#include <string.h>

int32_t tb_view_offset(const TbView *v, int d, int32_t j) {
    int rd = v->rdim[d];
    int32_t spt = v->bk.spt[rd];
    int32_t tile = (int32_t)v->bk.span[rd];
    return (j / spt) * tile + j % spt;
}

/* The digit of root dim rd in a lane or warp id: (id / stride) % extent. */
static LLVMValueRef comp(TbLower *L, LLVMValueRef id, int32_t stride, int32_t per) {
    LLVMValueRef x = LLVMBuildUDiv(L->eb, id, tb_i32(L, stride), "");
    return LLVMBuildURem(L->eb, x, tb_i32(L, per), "");
}

static LLVMValueRef lane_comp(TbLower *L, const AnaBlocked *bf, int rd) {
    return comp(L, L->lane, bf->lane_stride[rd], bf->tpw[rd]);
}

static LLVMValueRef warp_comp(TbLower *L, const AnaBlocked *bf, int rd) {
    return comp(L, L->warp, bf->warp_stride[rd], bf->wpc[rd]);
}

LLVMValueRef tb_view_lane_digit(TbLower *L, const TbView *v, int d) {
    return lane_comp(L, &v->bk, v->rdim[d]);
}

LLVMValueRef tb_view_warp_digit(TbLower *L, const TbView *v, int d) {
    return warp_comp(L, &v->bk, v->rdim[d]);
}

int32_t tb_view_spt(const TbView *v, int d) {
    return v->bk.spt[v->rdim[d]];
}

int32_t tb_view_wpc(const TbView *v, int d) {
    return v->bk.wpc[v->rdim[d]];
}

int32_t tb_view_lane_stride(const TbView *v, int d) {
    return v->bk.lane_stride[v->rdim[d]];
}

void tb_view_distinct(const TbView *v, int d, int *lanes, int *warps) {
    analysis_blocked_distinct(&v->bk, v->rdim[d], v->shape[d], lanes, warps);
}

/* The lane holding the last distinct position along d of this thread's lane group, from its
 * lane digit there (tb_view_lane_digit) and the distinct lanes along d. */
LLVMValueRef tb_view_last_lane(TbLower *L, const TbView *v, int d, LLVMValueRef digit, int lanes) {
    return LLVMBuildAdd(L->eb, L->lane,
                        LLVMBuildMul(L->eb, LLVMBuildSub(L->eb, tb_i32(L, lanes - 1), digit, ""),
                                     tb_i32(L, tb_view_lane_stride(v, d)), ""),
                        "");
}

/* Whether threads hold copies: a dim whose span is longer than the tile, or a sliced-away
 * dim spread over lanes or warps. */
bool tb_view_has_copies(const TbView *v) {
    const AnaBlocked *bf = &v->bk;
    for (int rd = 0; rd < bf->rank; rd++) {
        int d = bf->tile_dim[rd];
        if (d >= 0 && bf->span[rd] > v->shape[d])
            return true;
        if (d < 0 && bf->tpw[rd] * bf->wpc[rd] > 1)
            return true;
    }
    return false;
}

LLVMValueRef tb_view_base(TbLower *L, const TbView *v, int d) {
    const AnaBlocked *bf = &v->bk;
    int rd = v->rdim[d];
    LLVMValueRef w = warp_comp(L, bf, rd), ln = lane_comp(L, bf, rd);
    LLVMValueRef x = LLVMBuildMul(L->eb, w, tb_i32(L, bf->tpw[rd]), "");
    x = LLVMBuildAdd(L->eb, x, ln, "");
    x = LLVMBuildMul(L->eb, x, tb_i32(L, bf->spt[rd]), "");
    /* Threads past the shape hold copies: coordinates wrap. */
    return LLVMBuildAnd(L->eb, x, tb_i32(L, v->shape[d] - 1), "");
}

/* True in exactly one of the threads that hold each element: the one whose unwrapped
 * coordinates are in range and whose sliced-away components are zero. */
LLVMValueRef tb_view_owner(TbLower *L, const TbView *v) {
    const AnaBlocked *bf = &v->bk;
    LLVMValueRef ok = LLVMConstInt(L->i1, 1, 0);
    for (int rd = 0; rd < bf->rank; rd++) {
        int d = bf->tile_dim[rd];
        int64_t span = bf->span[rd];
        LLVMValueRef w = warp_comp(L, bf, rd), ln = lane_comp(L, bf, rd);
        LLVMValueRef pos = LLVMBuildAdd(L->eb, LLVMBuildMul(L->eb, w, tb_i32(L, bf->tpw[rd]), ""), ln, "");
        LLVMValueRef c;
        if (d < 0) {
            c = LLVMBuildICmp(L->eb, LLVMIntEQ, pos, tb_i32(L, 0), "");
        } else if (span > v->shape[d]) {
            pos = LLVMBuildMul(L->eb, pos, tb_i32(L, bf->spt[rd]), "");
            int32_t lim = v->shape[d] < bf->spt[rd] ? bf->spt[rd] : v->shape[d];
            c = LLVMBuildICmp(L->eb, LLVMIntULT, pos, tb_i32(L, lim), "");
        } else {
            continue;
        }
        ok = LLVMBuildAnd(L->eb, ok, c, "");
    }
    return ok;
}

/* ---- the layout algebra's maps, for accesses computed from them ---- */

/* The layout algebra's map of a view: a blocked view's (its elements are the map's
 * registers), an mma view's (accumulator or operand: the fragment order is the map's
 * register order), a TB_VIEW_LIN view's.  NULL: none. */
const TirLinear *tb_view_linear(TbLower *L, TirType t, const TbView *v) {
    return v->lin;
}

/* Input dims (register, lane, warp) of a map to one output: its 1-D image. */
int32_t tb_lin_offset(const TirLinear *m, int32_t r, int32_t ln, int32_t w) {
    AnaThreadMap tm;
    int32_t base[TIR_MAXRANK] = {0}, c[TIR_MAXRANK] = {0};
    analysis_thread_map(m, &tm);
    analysis_thread_base(&tm, ln, w, base);
    analysis_reg_offset(&tm, r, c);
    return base[0] ^ c[0];
}

/* Coordinate d of the thread's part of a map: the XOR of the bases of its lane and warp
 * bits (built in the entry block), lane bits first. */
static LLVMValueRef thread_part(TbLower *L, const AnaThreadMap *tm, int d) {
    LLVMBuilderRef b = L->eb;
    LLVMValueRef t = tb_i32(L, 0);
    int nbits[2] = {tm->lane_bits, tm->warp_bits};
    const int32_t (*basis[2])[TIR_MAXRANK] = {tm->lane_basis, tm->warp_basis};
    LLVMValueRef ids[2] = {L->lane, L->warp};
    for (int k = 0; k < 2; k++)
        for (int bit = 0; bit < nbits[k]; bit++) {
            int32_t c = basis[k][bit][d];
            if (!c)
                continue;
            LLVMValueRef on = LLVMBuildAnd(b, LLVMBuildLShr(b, ids[k], tb_i32(L, bit), ""), tb_i32(L, 1), "");
            t = LLVMBuildXor(b, t, LLVMBuildMul(b, on, tb_i32(L, c), ""), "");
        }
    return t;
}

/* The thread's part of an offset map (its one output). */
LLVMValueRef tb_lin_thread_offset(TbLower *L, const TirLinear *m) {
    AnaThreadMap tm;
    analysis_thread_map(m, &tm);
    return thread_part(L, &tm, 0);
}

/* The bits the thread part of m can set: the OR of its lane and warp bases.  A register's
 * constant part without any of them is added, not XORed: an immediate of the access. */
int32_t tb_lin_thread_bits(const TirLinear *m) {
    AnaThreadMap tm;
    analysis_thread_map(m, &tm);
    return tm.thread_bits[0];
}

LLVMValueRef tb_lin_offset_plus(TbLower *L, LLVMValueRef t, int32_t tbits, int32_t c) {
    return c & tbits ? LLVMBuildXor(L->b, t, tb_i32(L, c), "") : LLVMBuildAdd(L->b, t, tb_i32(L, c), "");
}

/* Coordinate d of register e of a distributed map, for this thread: the thread's part
 * joined to the register's (analysis_join's rule). */
LLVMValueRef tb_lin_coord(TbLower *L, const TirLinear *m, int e, int d) {
    AnaThreadMap tm;
    int32_t c[TIR_MAXRANK] = {0};
    analysis_thread_map(m, &tm);
    LLVMValueRef t = thread_part(L, &tm, d);
    analysis_reg_offset(&tm, e, c);
    return tb_lin_offset_plus(L, t, tm.thread_bits[d], c[d]);
}

/* The canonical holders (analysis_owner_mask: lane and warp bits that only copy what the
 * registers and lower bits hold are clear, and warps past the map's span). */
LLVMValueRef tb_lin_owner(TbLower *L, const TirLinear *m) {
    LLVMBuilderRef b = L->eb;
    AnaThreadMap tm;
    uint32_t mask[2];
    analysis_thread_map(m, &tm);
    int warps = L->threads / 32 > 0 ? L->threads / 32 : L->f->warps;
    if (!analysis_owner_mask(&tm, warps, &mask[0], &mask[1]))
        return NULL;
    LLVMValueRef ids[2] = {L->lane, L->warp};
    LLVMValueRef ok = LLVMConstInt(L->i1, 1, 0);
    for (int k = 0; k < 2; k++)
        if (mask[k])
            ok = LLVMBuildAnd(
                b, ok,
                LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, ids[k], tb_i32(L, (int32_t)mask[k]), ""), tb_i32(L, 0), ""),
                "");
    return ok;
}

/* The thread's part of coordinate d as the sum of its fields (analysis_thread_fields:
 * (id >> shift) & (2^bits - 1), times mult), warp fields first: the form of an mma
 * fragment's 16 w_m + g, 8 w_n + 2t, kw t.  NULL where the part is no sum of fields. */
static LLVMValueRef field_part(TbLower *L, const AnaThreadMap *tm, int d) {
    LLVMBuilderRef b = L->eb;
    AnaField f[2 * TIR_LIN_MAXBITS];
    int n = analysis_thread_fields(tm, d, f);
    if (n < 0)
        return NULL;
    LLVMValueRef x = NULL;
    for (int src = ANA_WARP; src >= ANA_LANE; src--)
        for (int i = 0; i < n; i++) {
            if (f[i].src != src)
                continue;
            LLVMValueRef y = src == ANA_LANE ? L->lane : L->warp;
            if (f[i].shift)
                y = LLVMBuildLShr(b, y, tb_i32(L, f[i].shift), "");
            if (src == ANA_WARP || f[i].shift + f[i].bits < tm->lane_bits)
                y = LLVMBuildAnd(b, y, tb_i32(L, (1 << f[i].bits) - 1), "");
            if (f[i].mult != 1)
                y = LLVMBuildMul(b, y, tb_i32(L, f[i].mult), "");
            x = x ? LLVMBuildAdd(b, x, y, "") : y;
        }
    return x ? x : tb_i32(L, 0);
}

/* i1: this thread is the first holder of its elements (warps past wm x wn hold copies, and
 * the operands are copied across the warps of the other dimension), or NULL: no copies. */
LLVMValueRef tb_mma_owner(TbLower *L, const TbView *v) {
    int warps = L->threads / 32 > 0 ? L->threads / 32 : L->f->warps;
    bool extra = warps > v->wm * v->wn;
    bool across = (v->mma == 2 && v->wn > 1) || (v->mma == 3 && v->wm > 1);
    if (!extra && !across)
        return NULL;
    LLVMBuilderRef b = L->eb;
    LLVMValueRef ok = LLVMConstInt(L->i1, 1, 0);
    if (extra)
        ok = LLVMBuildICmp(b, LLVMIntULT, L->warp, tb_i32(L, v->wm * v->wn), "");
    if (across) {
        LLVMValueRef w = LLVMBuildURem(b, L->warp, tb_i32(L, v->wm * v->wn), "");
        LLVMValueRef part = v->mma == 2 ? LLVMBuildUDiv(b, w, tb_i32(L, v->wm), "")  /* w_n */
                                        : LLVMBuildURem(b, w, tb_i32(L, v->wm), ""); /* w_m */
        ok = LLVMBuildAnd(b, ok, LLVMBuildICmp(b, LLVMIntEQ, part, tb_i32(L, 0), ""), "");
    }
    return ok;
}

/* The thread's part from the map's fields, the register's constant part from the map. */
LLVMValueRef tb_mma_coord(TbLower *L, const TbView *v, int e, int d) {
    AnaThreadMap tm;
    analysis_thread_map(v->lin, &tm);
    int32_t c[TIR_MAXRANK];
    analysis_reg_offset(&tm, e, c);
    LLVMValueRef t = field_part(L, &tm, d);
    return t ? tb_lin_offset_plus(L, t, tm.thread_bits[d], c[d]) : tb_lin_coord(L, v->lin, e, d);
}

LLVMValueRef tb_view_coord(TbLower *L, const TbView *v, int e, int d) {
    if (v->mma == TB_VIEW_LIN)
        return tb_lin_coord(L, v->lin, e, d);
    if (v->mma)
        return tb_mma_coord(L, v, e, d);
    int32_t j[TIR_MAXRANK];
    tb_view_multi(v, e, j);
    return LLVMBuildAdd(L->b, tb_view_base(L, v, d), tb_i32(L, tb_view_offset(v, d, j[d])), "");
}

/* ---- shared-memory stages and ldmatrix ---- */

/* The element offset of coordinate c in a stage (swizzled). */
LLVMValueRef tb_stage_offset(TbLower *L, const TbSwizzle *R, LLVMValueRef *c) {
    LLVMBuilderRef b = L->b;
    LLVMValueRef row = tb_i32(L, 0);
    for (int d = 0; d < R->rank; d++) {
        if (d == R->cdim)
            continue;
        row = LLVMBuildAdd(b, LLVMBuildMul(b, row, tb_i32(L, R->shape[d]), ""), c[d], "");
    }
    LLVMValueRef col = c[R->cdim];
    LLVMValueRef chunk = LLVMBuildLShr(b, col, tb_i32(L, __builtin_ctz((unsigned)R->vec)), "");
    LLVMValueRef within = LLVMBuildAnd(b, col, tb_i32(L, R->vec - 1), "");
    LLVMValueRef phase = LLVMBuildAnd(b, LLVMBuildLShr(b, row, tb_i32(L, __builtin_ctz((unsigned)R->per_phase)), ""),
                                      tb_i32(L, R->max_phase - 1), "");
    chunk = LLVMBuildXor(b, chunk, phase, "");
    LLVMValueRef off = LLVMBuildMul(b, row, tb_i32(L, R->shape[R->cdim]), "");
    off = LLVMBuildAdd(b, off, LLVMBuildShl(b, chunk, tb_i32(L, __builtin_ctz((unsigned)R->vec)), ""), "");
    return LLVMBuildAdd(b, off, within, "");
}

/* The warp part of an operand's coordinates: rows 16 w_m (A) / columns 8 w_n (B). */
void tb_mma_warp_base(TbLower *L, const TbView *v, LLVMValueRef *b2) {
    LLVMValueRef w = LLVMBuildURem(L->eb, L->warp, tb_i32(L, v->wm * v->wn), "");
    LLVMValueRef w_m = LLVMBuildURem(L->eb, w, tb_i32(L, v->wm), "");
    LLVMValueRef w_n = LLVMBuildUDiv(L->eb, w, tb_i32(L, v->wm), "");
    b2[0] = v->mma == 2 ? LLVMBuildMul(L->eb, w_m, tb_i32(L, 16), "") : tb_i32(L, 0);
    b2[1] = v->mma == 3 ? LLVMBuildMul(L->eb, w_n, tb_i32(L, 8), "") : tb_i32(L, 0);
}

/* The coordinates an ldmatrix lane gives the address of: row l % 8 of matrix l / 8 (of n),
 * whose origins are org[j] plus the warp part base2, rows along rdim. */
void tb_ldmatrix_coords(TbLower *L, int32_t org[4][2], int n, int rdim, LLVMValueRef *base2, LLVMValueRef *c) {
    LLVMValueRef l = L->lane;
    LLVMValueRef r8 = LLVMBuildAnd(L->b, l, tb_i32(L, 7), "");
    LLVMValueRef j = LLVMBuildLShr(L->b, l, tb_i32(L, 3), "");
    if (n == 2)
        j = LLVMBuildAnd(L->b, j, tb_i32(L, 1), "");
    for (int d = 0; d < 2; d++) {
        /* origin of matrix j: a select chain over the four (constants plus the thread's
         * warp part base2[d]) */
        LLVMValueRef o = tb_i32(L, org[0][d]);
        for (int q = 1; q < n; q++)
            o = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, j, tb_i32(L, q), ""), tb_i32(L, org[q][d]), o, "");
        o = LLVMBuildAdd(L->b, o, base2[d], "");
        c[d] = d == rdim ? LLVMBuildAdd(L->b, o, r8, "") : o;
    }
}

/* i1: this thread is the first holder of its elements (it alone writes them where threads
 * hold copies), NULL where no thread holds a copy.  A map view's rule is the map's owner
 * mask (tb_lin_owner); blocked and mma views keep the blocked digits' and the mma warps'
 * rules, which select the same threads but emit a different predicate (the mask form
 * changes the PTX of col_sum, row_stats, debug and reduce2d: docs/backend.md). */
LLVMValueRef tb_owner(TbLower *L, const TbView *v) {
    if (v->mma == TB_VIEW_LIN)
        return tb_lin_owner(L, v->lin);
    if (v->mma)
        return tb_mma_owner(L, v);
    return tb_view_has_copies(v) ? tb_view_owner(L, v) : NULL;
}
