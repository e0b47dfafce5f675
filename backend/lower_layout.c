/* Per-thread views of distributed layouts (which elements a thread owns and where
 * they sit), and the shared-memory scratch buffer with its barriers. */
#include "tb_internal.h"

#include <string.h>

static int32_t clamp_pos(int64_t x) {
    return x < 1 ? 1 : (int32_t)x;
}

/* The view of an mma accumulator or operand layout: instruction tiles per warp and the
 * fragment numbers lower_dot.c's mma.sync takes (its comment has the fragments); the
 * elements are the layout's map's registers. */
bool tb_mma_view(TbLower *L, int32_t idx, TirType t, TbView *v, const TirOp *op) {
    int32_t parent = idx, wpc[TIR_MAXRANK] = {0}, instr[3] = {0};
    int which = 1, kw = 1, op_idx = 0, version = 0;
    if (tir_layout_dot_params(L->m, idx, &op_idx, &kw)) {
        parent = tir_layout_parent(L->m, idx);
        which = 2 + op_idx;
    }
    if (!tir_layout_mma_params(L->m, parent, &version, wpc, instr)) {
        tb_error(L, op, "internal: a dot operand layout without an mma parent");
        return false;
    }
    if (t.rank != 2 || tir_layout_rank(L->m, parent) != 2 || version != 2) {
        tb_error(L, op, "the GPU backend lowers 2-D mma.sync layouts only (rank %d, version %d)", t.rank, version);
        return false;
    }
    memset(v, 0, sizeof *v);
    v->rank = 2;
    v->shape[0] = t.shape[0];
    v->shape[1] = t.shape[1];
    v->order[0] = 1;
    v->order[1] = 0;
    v->mma = (uint8_t)which;
    v->wm = wpc[0];
    v->wn = wpc[1];
    v->ik = instr[2];
    v->kw = kw;
    int32_t rows = which == 3 ? 0 : t.shape[0], cols = which == 2 ? 0 : t.shape[1];
    int32_t kdim = which == 2 ? t.shape[1] : which == 3 ? t.shape[0] : 0;
    v->tm = rows ? rows / (16 * v->wm) : 0;
    v->tn = cols ? cols / (8 * v->wn) : 0;
    v->tk = kdim ? kdim / v->ik : 0;
    v->ng = 1;
    for (int g = tir_layout_mma_ngroup(L->m, parent); which != 2 && g > 1 && v->ng == 1; g /= 2)
        if (v->tn % g == 0)
            v->ng = g;
    if ((rows && v->tm < 1) || (cols && v->tn < 1) || (kdim && v->tk < 1) || (which > 1 && kw * 4 * 2 != v->ik)) {
        tb_error(L, op, "a %dx%d tile does not fill the m16n8k%d instructions of its mma layout (%d x %d warps)",
                 t.shape[0], t.shape[1], v->ik, v->wm, v->wn);
        return false;
    }
    v->total = which == 1 ? v->tm * v->tn * 4 : which == 2 ? v->tm * v->tk * 4 * kw : v->tn * v->tk * 2 * kw;
    /* the map is the view: its registers are the fragments in mma.sync's order */
    const char *why = NULL;
    v->lin = tir_layout_linear(L->m, idx, t.rank, t.shape, &why);
    if (!v->lin || tir_lin_in_size(v->lin, tir_lin_in_dim(v->lin, TIR_LIN_REG)) != v->total) {
        tb_error(L, op, "internal: the mma layout's map has no %d registers per thread (%s)", v->total,
                 why ? why : "register count");
        return false;
    }
    return true;
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
    AnaBlocked bk;
    return tir_type_is_tile(t) && analysis_blocked(L->m, t.layout, t.rank, &bk, NULL);
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
    AnaBlocked *bf = &v->bk;
    if (!analysis_blocked(L->m, t.layout, t.rank, bf, &why) ||
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
        int64_t tile = bf->span[rd];
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
