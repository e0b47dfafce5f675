/* Scratch: the shared bytes an op needs, the one answer smem_alloc places, barriers
 * checks and the backend asks before it writes them. */
#include "analysis.h"

/* Warps along `axis` that hold distinct data (the others hold copies): the warps a
 * reduction or scan combines through shared memory. */
static int warps_along(const TirModule *m, TirType t, int axis) {
    AnaBlocked b;
    if (axis < 0 || axis >= t.rank || !analysis_blocked(m, t.layout, t.rank, &b, NULL))
        return 1;
    int w;
    analysis_blocked_distinct(&b, b.root_dim[axis], t.shape[axis], NULL, &w);
    return w;
}

static int elem_bytes(TirType t) {
    if (t.ptr)
        return 8;
    int b = tir_scalar_bytes((TirScalar)t.elem);
    return b < 1 ? 1 : b;
}

/* Accumulators: narrow floats in f32, bools summed in i32; at least 4 bytes a slot. */
static int acc_bytes(TirType t) {
    int b = elem_bytes(t);
    return b < 4 ? 4 : b;
}

int32_t analysis_scratch_bytes(const TirModule *m, const TirOp *op) {
    switch (op->code) {
    case TIR_OP_SMEM_ALLOC: {
        /* a ring of the software pipeline: its stages, whole */
        if (op->nres != 1)
            return 0;
        TirType t = op->res[0]->ty;
        int64_t b = tir_type_numel(t) * elem_bytes(t);
        return (int32_t)(b > INT32_MAX ? INT32_MAX : b);
    }
    case TIR_OP_REDUCE_SUM:
    case TIR_OP_REDUCE_MAX:
    case TIR_OP_REDUCE_MIN:
    case TIR_OP_ARGMAX:
    case TIR_OP_ARGMIN: {
        TirType in = op->opnd[0]->ty;
        if (!tir_type_is_tile(in))
            return 0;
        int w = warps_along(m, in, (int)op->attr.i[0]);
        if (w <= 1)
            return 0;
        int64_t numel = op->nres && tir_type_is_tile(op->res[0]->ty) ? tir_type_numel(op->res[0]->ty) : 1;
        bool arg = op->code == TIR_OP_ARGMAX || op->code == TIR_OP_ARGMIN;
        int64_t b = numel * w * acc_bytes(in) + (arg ? numel * w * 4 : 0);
        return (int32_t)(b > INT32_MAX ? INT32_MAX : b);
    }
    case TIR_OP_CUMSUM: {
        TirType in = op->opnd[0]->ty;
        if (!tir_type_is_tile(in))
            return 0;
        int axis = (int)op->attr.i[0];
        int w = warps_along(m, in, axis);
        if (w <= 1)
            return 0;
        /* one total per (row, repetition, warp): at most numel / (lanes * spt) per warp */
        int64_t rows = tir_type_numel(in) / (axis >= 0 && axis < in.rank ? in.shape[axis] : 1);
        AnaBlocked bl;
        int64_t span = analysis_blocked(m, in.layout, in.rank, &bl, NULL) ? bl.span[bl.root_dim[axis]] : 1;
        int64_t reps = in.shape[axis] / span;
        if (reps < 1)
            reps = 1;
        int64_t b = rows * reps * w * acc_bytes(in);
        return (int32_t)(b > INT32_MAX ? INT32_MAX : b);
    }
    case TIR_OP_CONVERT_LAYOUT:
        if (!tir_type_is_tile(op->opnd[0]->ty) || op->opnd[0]->ty.layout == op->res[0]->ty.layout)
            return 0;
        /* fall through */
    case TIR_OP_TRANS:
    case TIR_OP_RESHAPE: {
        TirType in = op->opnd[0]->ty;
        if (!tir_type_is_tile(in))
            return 0;
        int64_t b = tir_type_numel(in) * elem_bytes(in);
        return (int32_t)(b > INT32_MAX ? INT32_MAX : b);
    }
    case TIR_OP_ATOMIC_ADD:
    case TIR_OP_ATOMIC_MAX:
    case TIR_OP_ATOMIC_MIN:
    case TIR_OP_ATOMIC_XCHG:
    case TIR_OP_ATOMIC_CAS:
        /* a scalar atomic: one thread does it, the old value goes to all through smem */
        return op->nres && !tir_type_is_tile(op->res[0]->ty) ? 8 : 0;
    default: return 0;
    }
}
