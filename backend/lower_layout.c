/* Per-thread views of distributed layouts (which elements a thread owns and where
 * they sit), and the shared-memory scratch buffer with its barriers. */
#include "tb_internal.h"

#include <string.h>

static int32_t clamp_pos(int64_t x) { return x < 1 ? 1 : (int32_t)x; }

bool tb_view(TbLower *L, TirType t, TbView *v, const TirOp *op) {
    memset(v, 0, sizeof *v);
    int32_t idx = t.layout;
    if (!tir_type_is_tile(t)) {
        tb_error(L, op, "internal: a scalar has no layout view");
        return false;
    }
    if (idx <= 0 || idx >= L->m->nlayouts) {
        tb_error(L, op, "a tile has no layout: run the 'layout' pass before the backend");
        return false;
    }
    int kind = L->m->layouts[idx].kind;
    if (kind == TIR_LAYOUT_MMA || kind == TIR_LAYOUT_DOT_OPERAND) return tb_mma_view(L, idx, t, v, op);
    /* Walk slices down to the blocked root, marking removed root dims. */
    bool removed[TIR_MAXRANK] = {0};
    int depth = 0;
    const TirLayout *l = &L->m->layouts[idx];
    int32_t slices[TIR_MAXRANK];
    int nslices = 0;
    while (l->kind == TIR_LAYOUT_SLICE && depth++ < TIR_MAXRANK) {
        slices[nslices++] = l->dim;
        if (l->parent <= 0 || l->parent >= L->m->nlayouts) break;
        idx = l->parent;
        l = &L->m->layouts[idx];
    }
    if (l->kind != TIR_LAYOUT_BLOCKED) {
        tb_error(L, op, "layout kind %d is not supported by the GPU backend yet", l->kind);
        return false;
    }
    /* Slices name dims of their parent, outermost last: apply from the root up. */
    int32_t map[TIR_MAXRANK]; /* current dims -> root dims */
    int cur = l->rank;
    for (int i = 0; i < cur; i++) map[i] = i;
    for (int s = nslices - 1; s >= 0; s--) {
        int d = slices[s];
        if (d < 0 || d >= cur) {
            tb_error(L, op, "internal: bad slice dimension %d", d);
            return false;
        }
        removed[map[d]] = true;
        for (int i = d; i < cur - 1; i++) map[i] = map[i + 1];
        cur--;
    }
    if (cur != t.rank) {
        tb_error(L, op, "internal: layout rank %d does not match the tile's rank %d", cur, t.rank);
        return false;
    }
    v->rank = t.rank;
    v->root = l;
    v->root_idx = idx;
    memcpy(v->sliced, removed, sizeof removed);
    v->total = 1;
    for (int d = 0; d < t.rank; d++) {
        int rd = map[d];
        v->rdim[d] = rd;
        v->shape[d] = t.shape[d];
        int32_t spt = l->size_per_thread[rd];
        int64_t tile = (int64_t)spt * l->threads_per_warp[rd] * l->warps_per_cta[rd];
        v->n[d] = t.shape[d] < spt ? t.shape[d] : spt * clamp_pos(t.shape[d] / tile);
        v->total *= v->n[d];
    }
    /* order: the root's order restricted to the remaining dims */
    int k = 0;
    for (int i = 0; i < l->rank; i++) {
        int rd = l->order[i];
        for (int d = 0; d < t.rank; d++)
            if (map[d] == rd) v->order[k++] = d;
    }
    if (k != t.rank) {
        tb_error(L, op, "internal: layout order is not a permutation");
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
    const TirLayout *l = v->root;
    int rd = v->rdim[d];
    int32_t spt = l->size_per_thread[rd];
    int32_t tile = spt * l->threads_per_warp[rd] * l->warps_per_cta[rd];
    return (j / spt) * tile + j % spt;
}

/* lane = sum over root dims (in order) of lane_d * (product of earlier tpw). */
static LLVMValueRef comp(TbLower *L, const TirLayout *root, int rd, LLVMValueRef id,
                         const int32_t *per) {
    int32_t stride = 1;
    for (int i = 0; i < root->rank; i++) {
        int d = root->order[i];
        if (d == rd) break;
        stride *= per[d];
    }
    LLVMValueRef x = LLVMBuildUDiv(L->eb, id, tb_i32(L, stride), "");
    return LLVMBuildURem(L->eb, x, tb_i32(L, per[rd]), "");
}

LLVMValueRef tb_lane_comp(TbLower *L, const TirLayout *root, int rd) {
    return comp(L, root, rd, L->lane, root->threads_per_warp);
}

LLVMValueRef tb_warp_comp(TbLower *L, const TirLayout *root, int rd) {
    return comp(L, root, rd, L->warp, root->warps_per_cta);
}

LLVMValueRef tb_view_base(TbLower *L, const TbView *v, int d) {
    const TirLayout *l = v->root;
    int rd = v->rdim[d];
    LLVMValueRef w = tb_warp_comp(L, l, rd), ln = tb_lane_comp(L, l, rd);
    LLVMValueRef x = LLVMBuildMul(L->eb, w, tb_i32(L, l->threads_per_warp[rd]), "");
    x = LLVMBuildAdd(L->eb, x, ln, "");
    x = LLVMBuildMul(L->eb, x, tb_i32(L, l->size_per_thread[rd]), "");
    /* Threads past the shape hold copies: coordinates wrap. */
    return LLVMBuildAnd(L->eb, x, tb_i32(L, v->shape[d] - 1), "");
}

/* True in exactly one of the threads that hold each element: the one whose unwrapped
 * coordinates are in range and whose sliced-away components are zero. */
LLVMValueRef tb_view_owner(TbLower *L, const TbView *v) {
    const TirLayout *l = v->root;
    LLVMValueRef ok = LLVMConstInt(L->i1, 1, 0);
    for (int rd = 0; rd < l->rank; rd++) {
        int d = -1;
        for (int k = 0; k < v->rank; k++)
            if (v->rdim[k] == rd) d = k;
        int64_t span = (int64_t)l->size_per_thread[rd] * l->threads_per_warp[rd] * l->warps_per_cta[rd];
        LLVMValueRef w = tb_warp_comp(L, l, rd), ln = tb_lane_comp(L, l, rd);
        LLVMValueRef pos = LLVMBuildAdd(L->eb, LLVMBuildMul(L->eb, w, tb_i32(L, l->threads_per_warp[rd]), ""),
                                        ln, "");
        LLVMValueRef c;
        if (d < 0) {
            c = LLVMBuildICmp(L->eb, LLVMIntEQ, pos, tb_i32(L, 0), "");
        } else if (span > v->shape[d]) {
            pos = LLVMBuildMul(L->eb, pos, tb_i32(L, l->size_per_thread[rd]), "");
            int32_t lim = v->shape[d] < l->size_per_thread[rd] ? l->size_per_thread[rd] : v->shape[d];
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
