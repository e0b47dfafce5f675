/* Per-thread views of distributed layouts (which elements a thread owns and where
 * they sit), and the shared-memory scratch buffer with its barriers. */
#include "tb_internal.h"

#include <string.h>

static int32_t clamp_pos(int64_t x) { return x < 1 ? 1 : (int32_t)x; }

/* Also the mma accumulator and operand layouts, for the ops that lower them (constants,
 * conversions, dot, shared-buffer loads): their elements follow no blocked formula, so
 * every other op asks tb_view, which refuses them. */
bool tb_view_mma_ok(TbLower *L, TirType t, TbView *v, const TirOp *op) {
    TirLayoutKind kind = tir_type_is_tile(t) ? tir_layout_kind(L->m, t.layout) : TIR_LAYOUT_NONE;
    if (kind == TIR_LAYOUT_MMA || kind == TIR_LAYOUT_DOT_OPERAND) return tb_mma_view(L, t.layout, t, v, op);
    return tb_view(L, t, v, op);
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
        if (bf->tile_dim[bf->order[i]] >= 0) v->order[k++] = bf->tile_dim[bf->order[i]];
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
        LLVMValueRef pos = LLVMBuildAdd(L->eb, LLVMBuildMul(L->eb, w, tb_i32(L, bf->tpw[rd]), ""),
                                        ln, "");
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
        if (!id) continue;
        LLVMValueRef zero = tb_i32(L, 0);
        tb_call_intr(L, names[i], NULL, 0, i == 0 ? &zero : NULL, i == 0 ? 1 : 0);
        return;
    }
    tb_error(L, NULL, "internal: LLVM has no CTA barrier intrinsic");
}

/* The op's scratch bytes, placed by the smem_alloc pass (attr.smem_off/smem_bytes); the
 * barriers pass proved that no other thread still reads them when this op writes. */
LLVMValueRef tb_scratch(TbLower *L, const TirOp *op, int bytes) {
    if (op->attr.smem_bytes < bytes) {
        tb_error(L, op, "internal: %d bytes of shared scratch reserved, %d needed: run the 'smem_alloc' and "
                 "'barriers' passes before the backend", op->attr.smem_bytes, bytes);
        return LLVMGetUndef(L->sptr);
    }
    if (!L->scratch) L->scratch = LLVMAddGlobalInAddressSpace(L->mod, L->i8, "tilec_scratch.tmp", TB_SHARED_AS);
    int end = op->attr.smem_off + op->attr.smem_bytes;
    if (end > L->scratch_bytes) L->scratch_bytes = end;
    LLVMValueRef idx = tb_i32(L, op->attr.smem_off);
    return op->attr.smem_off ? LLVMBuildGEP2(L->b, L->i8, L->scratch, &idx, 1, "") : L->scratch;
}
