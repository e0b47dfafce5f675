/* Per-thread views of distributed layouts (which elements a thread owns and where
 * they sit), and the shared-memory scratch buffer with its barriers. */
#include "tb_internal.h"

#include <string.h>

static int32_t clamp_pos(int64_t x) {
    return x < 1 ? 1 : (int32_t)x;
}

/* Also the mma accumulator and operand layouts, for the ops that lower them (constants,
 * conversions, dot, shared-buffer loads): their elements follow no blocked formula, so
 * every other op asks tb_view, which refuses them. */
bool tb_view_mma_ok(TbLower *L, TirType t, TbView *v, const TirOp *op) {
    TirLayoutKind kind = tir_type_is_tile(t) ? tir_layout_kind(L->m, t.layout) : TIR_LAYOUT_NONE;
    if (kind == TIR_LAYOUT_MMA || kind == TIR_LAYOUT_DOT_OPERAND)
        return tb_mma_view(L, t.layout, t, v, op);
    return tb_view(L, t, v, op);
}

static bool mma_family(TirLayoutKind k) {
    return k == TIR_LAYOUT_MMA || k == TIR_LAYOUT_DOT_OPERAND;
}

/* Whether the mma layout's instruction tiles fit in the shape (at least one m16n8 per
 * warp along M and N): the accumulator's fragment view applies. */
static bool mma_fills(TbLower *L, int32_t layout, TirType t) {
    int32_t wpc[TIR_MAXRANK] = {0}, instr[3] = {0};
    if (t.rank != 2 || !tir_layout_mma_params(L->m, layout, NULL, wpc, instr))
        return true; /* tb_mma_view says why */
    return t.shape[0] >= 16 * wpc[0] && t.shape[1] >= 8 * wpc[1];
}

/* The layout algebra's map as the whole view: a bias or scale vector in a slice of an
 * accumulator's layout (each thread holds the rows or columns its accumulator elements
 * are in), and its [M, 1] or [1, N] expand_dims in the mma layout itself. */
static bool lin_view(TbLower *L, TirType t, TbView *v, const TirOp *op) {
    memset(v, 0, sizeof *v);
    const char *why = NULL;
    if (!(v->lin = tir_layout_linear(L->m, t.layout, t.rank, t.shape, &why))) {
        char name[512];
        tir_layout_print(name, sizeof name, L->m, t.layout);
        tb_error(L, op, "%s (%s)", why, name);
        return false;
    }
    v->mma = TB_VIEW_LIN;
    v->rank = t.rank;
    for (int d = 0; d < t.rank; d++) {
        v->shape[d] = t.shape[d];
        v->order[d] = t.rank - 1 - d;
    }
    v->total = tir_lin_in_size(v->lin, tir_lin_in_dim(v->lin, TIR_LIN_REG));
    return true;
}

bool tb_view_lin_ok(TbLower *L, TirType t, TbView *v, const TirOp *op) {
    TirLayoutKind kind = tir_type_is_tile(t) ? tir_layout_kind(L->m, t.layout) : TIR_LAYOUT_NONE;
    int32_t root = t.layout;
    while (tir_layout_kind(L->m, root) == TIR_LAYOUT_SLICE)
        root = tir_layout_parent(L->m, root);
    if ((kind == TIR_LAYOUT_SLICE && mma_family(tir_layout_kind(L->m, root))) ||
        (kind == TIR_LAYOUT_MMA && !mma_fills(L, t.layout, t)))
        return lin_view(L, t, v, op);
    return tb_view_mma_ok(L, t, v, op);
}

bool tb_is_blocked(TbLower *L, TirType t) {
    TirBlockedForm bf;
    return tir_type_is_tile(t) && tir_layout_blocked_form(L->m, t.layout, t.rank, &bf, NULL);
}

bool tb_view(TbLower *L, TirType t, TbView *v, const TirOp *op) {
    memset(v, 0, sizeof *v);
    if (!tir_type_is_tile(t)) {
        tb_error(L, op, "internal: a scalar has no layout view");
        return false;
    }
    if (t.layout <= 0 || t.layout >= L->m->nlayouts) {
        tb_error(L, op, "a tile has no layout: run the 'layout' pass before the backend");
        return false;
    }
    const char *why = NULL;
    TirBlockedForm *bf = &v->bf;
    if (!tir_layout_blocked_form(L->m, t.layout, t.rank, bf, &why) ||
        !(v->lin = tir_layout_linear(L->m, t.layout, t.rank, t.shape, &why))) {
        char name[512];
        tir_layout_print(name, sizeof name, L->m, t.layout);
        tb_error(L, op, "%s (%s)", why, name);
        return false;
    }
    v->rank = t.rank;
    v->total = 1;
    for (int d = 0; d < t.rank; d++) {
        int rd = bf->root_dim[d];
        v->rdim[d] = rd;
        v->shape[d] = t.shape[d];
        int32_t spt = bf->spt[rd];
        int64_t tile = tir_blocked_span(bf, rd);
        v->n[d] = t.shape[d] < spt ? t.shape[d] : spt * clamp_pos(t.shape[d] / tile);
        v->total *= v->n[d];
    }
    /* order: the root's order restricted to the remaining dims */
    for (int i = 0, k = 0; i < bf->rank; i++)
        if (bf->tile_dim[bf->order[i]] >= 0)
            v->order[k++] = bf->tile_dim[bf->order[i]];
    /* the elements are the linear map's registers, in the same order */
    if (tir_lin_in_size(v->lin, tir_lin_in_dim(v->lin, TIR_LIN_REG)) != v->total) {
        tb_error(L, op, "internal: the layout's linear map has %d registers, its view %d",
                 tir_lin_in_size(v->lin, tir_lin_in_dim(v->lin, TIR_LIN_REG)), v->total);
        return false;
    }
    return true;
}

void tb_view_multi(const TbView *v, int e, int32_t *j) {
    for (int i = 0; i < v->rank; i++) {
        int d = v->order[i];
        j[d] = e % v->n[d];
        e /= v->n[d];
    }
}

int tb_view_index(const TbView *v, const int32_t *j) {
    int e = 0, stride = 1;
    for (int i = 0; i < v->rank; i++) {
        int d = v->order[i];
        e += j[d] * stride;
        stride *= v->n[d];
    }
    return e;
}

int32_t tb_view_offset(const TbView *v, int d, int32_t j) {
    int rd = v->rdim[d];
    int32_t spt = v->bf.spt[rd];
    int32_t tile = (int32_t)tir_blocked_span(&v->bf, rd);
    return (j / spt) * tile + j % spt;
}

/* The digit of root dim rd in a lane or warp id: (id / stride) % extent. */
static LLVMValueRef comp(TbLower *L, LLVMValueRef id, int32_t stride, int32_t per) {
    LLVMValueRef x = LLVMBuildUDiv(L->eb, id, tb_i32(L, stride), "");
    return LLVMBuildURem(L->eb, x, tb_i32(L, per), "");
}

LLVMValueRef tb_lane_comp(TbLower *L, const TirBlockedForm *bf, int rd) {
    return comp(L, L->lane, bf->lane_stride[rd], bf->tpw[rd]);
}

LLVMValueRef tb_warp_comp(TbLower *L, const TirBlockedForm *bf, int rd) {
    return comp(L, L->warp, bf->warp_stride[rd], bf->wpc[rd]);
}

LLVMValueRef tb_view_base(TbLower *L, const TbView *v, int d) {
    const TirBlockedForm *bf = &v->bf;
    int rd = v->rdim[d];
    LLVMValueRef w = tb_warp_comp(L, bf, rd), ln = tb_lane_comp(L, bf, rd);
    LLVMValueRef x = LLVMBuildMul(L->eb, w, tb_i32(L, bf->tpw[rd]), "");
    x = LLVMBuildAdd(L->eb, x, ln, "");
    x = LLVMBuildMul(L->eb, x, tb_i32(L, bf->spt[rd]), "");
    /* Threads past the shape hold copies: coordinates wrap. */
    return LLVMBuildAnd(L->eb, x, tb_i32(L, v->shape[d] - 1), "");
}

/* True in exactly one of the threads that hold each element: the one whose unwrapped
 * coordinates are in range and whose sliced-away components are zero. */
LLVMValueRef tb_view_owner(TbLower *L, const TbView *v) {
    const TirBlockedForm *bf = &v->bf;
    LLVMValueRef ok = LLVMConstInt(L->i1, 1, 0);
    for (int rd = 0; rd < bf->rank; rd++) {
        int d = bf->tile_dim[rd];
        int64_t span = tir_blocked_span(bf, rd);
        LLVMValueRef w = tb_warp_comp(L, bf, rd), ln = tb_lane_comp(L, bf, rd);
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

/* A CTA barrier through the NVVM intrinsic, which LLVM knows to be convergent: it is never
 * duplicated into both sides of a thread-dependent branch (inline asm was: `bar.sync` is
 * .aligned, so lanes of one warp waiting at different copies hang).  LLVM 21 and later
 * name it barrier.cta.sync.aligned.all; earlier ones barrier0. */
void tb_barrier(TbLower *L) {
    static const char *const names[] = {"llvm.nvvm.barrier.cta.sync.aligned.all", "llvm.nvvm.barrier0"};
    for (int i = 0; i < 2; i++) {
        unsigned id = LLVMLookupIntrinsicID(names[i], strlen(names[i]));
        if (!id)
            continue;
        LLVMValueRef zero = tb_i32(L, 0);
        tb_call_intr(L, names[i], NULL, 0, i == 0 ? &zero : NULL, i == 0 ? 1 : 0);
        return;
    }
    tb_error(L, NULL, "internal: LLVM has no CTA barrier intrinsic");
}

/* The op's scratch bytes, placed by the smem_alloc pass (attr.smem_off/smem_bytes); the
 * barriers pass proved that no other thread still reads them when this op writes. */
LLVMValueRef tb_scratch(TbLower *L, const TirOp *op) {
    int32_t bytes = analysis_scratch_bytes(L->m, op);
    if (op->attr.smem_bytes < bytes) {
        tb_error(L, op,
                 "internal: %d bytes of shared scratch reserved, %d needed: run the 'smem_alloc' and "
                 "'barriers' passes before the backend",
                 op->attr.smem_bytes, bytes);
        return LLVMGetUndef(L->sptr);
    }
    if (!L->scratch)
        L->scratch = LLVMAddGlobalInAddressSpace(L->mod, L->i8, "tilec_scratch.tmp", TB_SHARED_AS);
    int end = op->attr.smem_off + op->attr.smem_bytes;
    if (end > L->scratch_bytes)
        L->scratch_bytes = end;
    LLVMValueRef idx = tb_i32(L, op->attr.smem_off);
    return op->attr.smem_off ? LLVMBuildGEP2(L->b, L->i8, L->scratch, &idx, 1, "") : L->scratch;
}

/* ---- the layout algebra's maps, for accesses computed from them ---- */

/* The layout algebra's map of a view: a blocked view's (its elements are the map's
 * registers), or an mma view's (accumulator or operand), checked against the view's
 * fragment formula (element e of thread (lane, warp) at mma_base + mma_offset): every
 * register at thread 0 and register 0 at every thread, and no coordinate bit set by both,
 * so that the formula's sum is the map's XOR on every element.  NULL: none. */
const TirLinear *tb_view_linear(TbLower *L, TirType t, const TbView *v) {
    if (!v->mma || v->mma == TB_VIEW_LIN)
        return v->lin;
    if (t.rank != 2)
        return NULL;
    const TirLinear *l = tir_layout_linear(L->m, t.layout, t.rank, t.shape, NULL);
    int R = l ? tir_lin_in_dim(l, TIR_LIN_REG) : -1, LN = l ? tir_lin_in_dim(l, TIR_LIN_LANE) : -1,
        W = l ? tir_lin_in_dim(l, TIR_LIN_WARP) : -1;
    if (R < 0 || LN < 0 || W < 0 || tir_lin_in_size(l, R) != v->total)
        return NULL;
    int32_t regbits[2] = {0, 0}, thrbits[2] = {0, 0};
    for (int e = 0; e < v->total; e++) {
        int32_t in[3] = {0}, c[TIR_MAXRANK];
        in[R] = e;
        tir_lin_apply_coords(l, in, c);
        for (int d = 0; d < 2; d++) {
            if (c[d] != tb_mma_offset(v, e, d))
                return NULL;
            regbits[d] |= c[d];
        }
    }
    for (int w = 0; w < tir_lin_in_size(l, W); w++)
        for (int ln = 0; ln < 32; ln++) {
            int32_t in[3] = {0}, c[TIR_MAXRANK], b[2];
            in[LN] = ln;
            in[W] = w;
            tir_lin_apply_coords(l, in, c);
            tb_mma_base_at(v, ln, w, b);
            for (int d = 0; d < 2; d++) {
                if (c[d] != b[d])
                    return NULL;
                thrbits[d] |= c[d];
            }
        }
    if ((regbits[0] & thrbits[0]) || (regbits[1] & thrbits[1]))
        return NULL;
    return l;
}

/* Input dims (register, lane, warp) of a map to one output: its 1-D image. */
int32_t tb_lin_offset(const TirLinear *m, int32_t r, int32_t ln, int32_t w) {
    int32_t in[3] = {0}, c[TIR_LIN_MAXDIMS] = {0};
    in[tir_lin_in_dim(m, TIR_LIN_REG)] = r;
    in[tir_lin_in_dim(m, TIR_LIN_LANE)] = ln;
    in[tir_lin_in_dim(m, TIR_LIN_WARP)] = w;
    tir_lin_apply_coords(m, in, c);
    return c[0];
}

/* Coordinate d of the basis of bit `bit` of input dim `in_dim` (lane or warp). */
static int32_t basis_coord(const TirLinear *m, int in_dim, int bit, int d) {
    int32_t in[3] = {0}, c[TIR_LIN_MAXDIMS] = {0};
    in[in_dim] = 1 << bit;
    tir_lin_apply_coords(m, in, c);
    return c[d];
}

/* Coordinate d of the thread's part of a map: the XOR of the bases of its lane and warp
 * bits (built in the entry block); *bits: the bits that part can set. */
static LLVMValueRef thread_part(TbLower *L, const TirLinear *m, int d, int32_t *bits) {
    LLVMBuilderRef b = L->eb;
    LLVMValueRef t = tb_i32(L, 0);
    int dims[2] = {tir_lin_in_dim(m, TIR_LIN_LANE), tir_lin_in_dim(m, TIR_LIN_WARP)};
    LLVMValueRef ids[2] = {L->lane, L->warp};
    *bits = 0;
    for (int k = 0; k < 2; k++)
        for (int bit = 0; dims[k] >= 0 && bit < m->inbits[dims[k]]; bit++) {
            int32_t basis = basis_coord(m, dims[k], bit, d);
            if (!basis)
                continue;
            *bits |= basis;
            LLVMValueRef on = LLVMBuildAnd(b, LLVMBuildLShr(b, ids[k], tb_i32(L, bit), ""), tb_i32(L, 1), "");
            t = LLVMBuildXor(b, t, LLVMBuildMul(b, on, tb_i32(L, basis), ""), "");
        }
    return t;
}

/* The thread's part of an offset map (its one output). */
LLVMValueRef tb_lin_thread_offset(TbLower *L, const TirLinear *m) {
    int32_t bits;
    return thread_part(L, m, 0, &bits);
}

/* The bits the thread part of m can set: the OR of its lane and warp bases.  A register's
 * constant part without any of them is added, not XORed: an immediate of the access. */
int32_t tb_lin_thread_bits(const TirLinear *m) {
    int dims[2] = {tir_lin_in_dim(m, TIR_LIN_LANE), tir_lin_in_dim(m, TIR_LIN_WARP)};
    int32_t bits = 0;
    for (int k = 0; k < 2; k++)
        for (int bit = 0; dims[k] >= 0 && bit < m->inbits[dims[k]]; bit++)
            bits |= basis_coord(m, dims[k], bit, 0);
    return bits;
}

LLVMValueRef tb_lin_offset_plus(TbLower *L, LLVMValueRef t, int32_t tbits, int32_t c) {
    return c & tbits ? LLVMBuildXor(L->b, t, tb_i32(L, c), "") : LLVMBuildAdd(L->b, t, tb_i32(L, c), "");
}

/* Coordinate d of register e of a distributed map, for this thread: the thread's part
 * joined to the register's. */
LLVMValueRef tb_lin_coord(TbLower *L, const TirLinear *m, int e, int d) {
    int32_t tbits, in[3] = {0}, c[TIR_LIN_MAXDIMS] = {0};
    LLVMValueRef t = thread_part(L, m, d, &tbits);
    in[tir_lin_in_dim(m, TIR_LIN_REG)] = e;
    tir_lin_apply_coords(m, in, c);
    return tb_lin_offset_plus(L, t, tbits, c[d]);
}

/* The canonical holders (tir_lin_free_mask: lane and warp bits that only copy what the
 * registers and lower bits hold are clear), in a warp the map spans. */
LLVMValueRef tb_lin_owner(TbLower *L, const TirLinear *m) {
    LLVMBuilderRef b = L->eb;
    int dims[2] = {tir_lin_in_dim(m, TIR_LIN_LANE), tir_lin_in_dim(m, TIR_LIN_WARP)};
    LLVMValueRef ids[2] = {L->lane, L->warp};
    int32_t mask[2] = {(int32_t)tir_lin_free_mask(m, dims[0]), (int32_t)tir_lin_free_mask(m, dims[1])};
    int warps = L->threads / 32 > 0 ? L->threads / 32 : L->f->warps;
    int span = dims[1] >= 0 ? tir_lin_in_size(m, dims[1]) : 1;
    if (warps > span)
        mask[1] |= ~(span - 1);
    if (!mask[0] && !mask[1])
        return NULL;
    LLVMValueRef ok = LLVMConstInt(L->i1, 1, 0);
    for (int k = 0; k < 2; k++)
        if (mask[k])
            ok = LLVMBuildAnd(
                b, ok, LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, ids[k], tb_i32(L, mask[k]), ""), tb_i32(L, 0), ""),
                "");
    return ok;
}
