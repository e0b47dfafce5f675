/* The work of one op, summed over its tile: the one rule that --report's per-program counts
 * (backend/lower.c) and `tilec report`'s per-launch counts (driver/counts.c) both apply.
 * A float elementwise or reduction op counts its elements (fma two, casts none), a dot
 * 2*M*N*K; loads, stores, tload and tstore move their elements' bytes, atomics twice theirs
 * (a read and a write). */
#include "analysis.h"

void analysis_op_work(const TirOp *op, double *flops, double *bytes) {
    TirType t;
    int factor = 1;
    switch ((TirOpcode)op->code) {
    case TIR_OP_LOAD:
    case TIR_OP_TLOAD: t = op->res[0]->ty; break;
    case TIR_OP_STORE:
        if (op->nopnd < 2)
            return;
        t = op->opnd[1]->ty;
        break;
    case TIR_OP_TSTORE: t = op->opnd[op->nopnd - 1]->ty; break;
    case TIR_OP_ATOMIC_ADD:
    case TIR_OP_ATOMIC_MAX:
    case TIR_OP_ATOMIC_MIN:
    case TIR_OP_ATOMIC_XCHG:
    case TIR_OP_ATOMIC_CAS:
        t = op->res[0]->ty;
        factor = 2;
        break;
    case TIR_OP_DOT:
        /* C[M, N] += A[M, K] B[K, N]: a multiply and an add per term */
        *flops += 2.0 * (double)tir_type_numel(op->res[0]->ty) * (double)op->opnd[0]->ty.shape[1];
        return;
    default: {
        unsigned tr = tir_op_info[op->code].traits;
        if (op->nres < 1 || !(tr & (TIR_T_ELEMENTWISE | TIR_T_REDUCTION)))
            return;
        TirType ty = (tr & TIR_T_REDUCTION) || op->code == TIR_OP_CMP ? op->opnd[0]->ty : op->res[0]->ty;
        if (ty.ptr || !tir_scalar_is_float((TirScalar)ty.elem) || op->code == TIR_OP_CAST)
            return;
        *flops += (double)tir_type_numel(ty) * (op->code == TIR_OP_FMA ? 2 : 1);
        return;
    }
    }
    int eb = t.ptr ? 8 : tir_scalar_bytes((TirScalar)t.elem);
    *bytes += (double)tir_type_numel(t) * eb * factor;
}
