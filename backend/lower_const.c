/* Ops that make values from nothing but constants and the thread's place: constant,
 * arange, splat, program_id / num_programs, and aliases. */
#include "tb_internal.h"

#include <string.h>

void tb_lower_constant(TbLower *L, TirOp *op) {
    TirValue *r = op->res[0];
    TbView v;
    int n = 1;
    if (tir_type_is_tile(r->ty)) {
        if (!tb_view_lin_ok(L, r->ty, &v, op))
            return;
        n = v.total;
    }
    LLVMTypeRef t = tb_elem_type(L, r->ty);
    LLVMValueRef c;
    TirScalar s = (TirScalar)r->ty.elem;
    if (r->ty.ptr) {
        c = LLVMConstNull(L->gptr);
    } else if (tir_scalar_is_float(s)) {
        if (s == TIR_F8E4M3 || s == TIR_F8E5M2) {
            c = LLVMConstInt(
                L->i8,
                s == TIR_F8E4M3 ? tir_f32_to_f8e4m3((float)op->attr.fval) : tir_f32_to_f8e5m2((float)op->attr.fval), 0);
        } else {
            c = LLVMConstReal(t, op->attr.fval);
        }
    } else {
        c = LLVMConstInt(t, (unsigned long long)op->attr.ival, 0);
    }
    LLVMValueRef *e = tb_elems(L, n);
    for (int i = 0; i < n; i++)
        e[i] = c;
    tb_set(L, r, n, e);
}

void tb_lower_arange(TbLower *L, TirOp *op) {
    TirValue *r = op->res[0];
    TbView v;
    if (!tb_view_lin_ok(L, r->ty, &v, op))
        return;
    if (v.mma) {
        /* from the map: the thread's part joined to each register's (added where no bit
         * of the two meets, which makes the affine form; else XORed) */
        LLVMValueRef base = tb_lin_thread_offset(L, v.lin);
        int32_t tbits = tb_lin_thread_bits(v.lin);
        bool affine = true;
        LLVMValueRef *e = tb_elems(L, v.total);
        int64_t *ao = tir_alloc(L->m->arena, (size_t)v.total * sizeof *ao);
        for (int i = 0; i < v.total; i++) {
            int32_t c = tb_lin_offset(v.lin, i, 0, 0);
            affine = affine && !(c & tbits);
            ao[i] = op->attr.i[0] + c;
            LLVMValueRef x = tb_lin_offset_plus(L, base, tbits, c);
            e[i] = op->attr.i[0] ? LLVMBuildAdd(L->b, x, tb_i32(L, op->attr.i[0]), "") : x;
        }
        if (affine)
            tb_set_affine(L, r, v.total, e, base, ao);
        else
            tb_set(L, r, v.total, e);
        return;
    }
    LLVMValueRef base = tb_view_base(L, &v, 0);
    LLVMValueRef *e = tb_elems(L, v.total);
    int64_t *ao = tir_alloc(L->m->arena, (size_t)v.total * sizeof *ao);
    for (int i = 0; i < v.total; i++) {
        int32_t j[TIR_MAXRANK];
        tb_view_multi(&v, i, j);
        ao[i] = op->attr.i[0] + tb_view_offset(&v, 0, j[0]);
        e[i] = ao[i] ? LLVMBuildAdd(L->b, base, tb_i32(L, ao[i]), "") : base;
    }
    tb_set_affine(L, r, v.total, e, base, ao);
}

void tb_lower_splat(TbLower *L, TirOp *op) {
    TbVal *x = tb_val(L, op->opnd[0]);
    TbView v;
    if (!x || !tb_view_lin_ok(L, op->res[0]->ty, &v, op))
        return;
    LLVMValueRef *e = tb_elems(L, v.total);
    for (int i = 0; i < v.total; i++)
        e[i] = x->e[0];
    tb_set(L, op->res[0], v.total, e);
}

void tb_lower_sreg(TbLower *L, TirOp *op, const char *const names[3]) {
    int axis = (int)op->attr.i[0];
    if (axis < 0 || axis > 2) {
        tb_error(L, op, "axis %d out of range (0..2)", axis);
        return;
    }
    LLVMValueRef *e = tb_elems(L, 1);
    static const char *const again[3] = {"mov.u32 $0, %ctaid.x;", "mov.u32 $0, %ctaid.y;", "mov.u32 $0, %ctaid.z;"};
    if (L->after_dot_loop && L->opt && (L->opt->lowering & 2) && op->code == TIR_OP_PROGRAM_ID)
        /* lowering 2: a program id after a dot loop (the remat pass's copies of the scalars
         * the epilogue needs) read again, opaque to LLVM, which would merge it with the
         * entry's read and keep what it feeds live through the loop */
        e[0] = tb_asm(L, L->i32, again[axis], "=r", NULL, 0, true);
    else
        e[0] = tb_sreg(L, L->b, names[axis]);
    tb_set(L, op->res[0], 1, e);
}

/* Identity ops: hints; reshape/trans where the layouts make them free are not done yet. */
void tb_lower_alias(TbLower *L, TirOp *op) {
    TbVal *x = tb_val(L, op->opnd[0]);
    if (x)
        tb_set(L, op->res[0], x->n, x->e);
}
