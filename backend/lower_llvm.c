/* LLVM helpers shared by the lowerings: located errors, types, constants, intrinsic
 * calls, inline PTX and special registers. */
#include "tb_internal.h"

#include <string.h>

void tb_error(TbLower *L, const TirOp *op, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (op && op->loc != TIR_NOLOC && L->opt && L->opt->diag_at)
        L->opt->diag_at(L->opt->diag_at_ud, op->loc, msg);
    else if (op && op->loc != TIR_NOLOC)
        tb_diag(L->diag, L->ud, "%s: error: %s (op '%s' at offset %u)", L->f->name, msg, tir_op_info[op->code].name,
                op->loc);
    else if (op)
        tb_diag(L->diag, L->ud, "%s: error: %s (op '%s')", L->f->name, msg, tir_op_info[op->code].name);
    else
        tb_diag(L->diag, L->ud, "%s: error: %s", L->f->name, msg);
    L->errors++;
}

LLVMValueRef tb_i32(TbLower *L, int64_t v) {
    return LLVMConstInt(L->i32, (unsigned long long)v, 1);
}

LLVMTypeRef tb_scalar_type(TbLower *L, TirScalar s) {
    switch (s) {
    case TIR_I1: return L->i1;
    case TIR_I8:
    case TIR_U8:
    case TIR_F8E4M3:
    case TIR_F8E5M2: return L->i8;
    case TIR_I16:
    case TIR_U16: return L->i16;
    case TIR_I32:
    case TIR_U32: return L->i32;
    case TIR_I64:
    case TIR_U64: return L->i64;
    case TIR_F16: return L->f16;
    case TIR_BF16: return L->bf16;
    case TIR_F32: return L->f32;
    case TIR_F64: return L->f64;
    default: return L->i32;
    }
}

LLVMTypeRef tb_mem_type(TbLower *L, TirScalar s) {
    return s == TIR_I1 ? L->i8 : tb_scalar_type(L, s);
}

LLVMTypeRef tb_elem_type(TbLower *L, TirType t) {
    return t.ptr ? L->gptr : tb_scalar_type(L, (TirScalar)t.elem);
}

LLVMValueRef tb_call_intr(TbLower *L, const char *name, LLVMTypeRef *ovl, int novl, LLVMValueRef *args, int nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        tb_error(L, NULL, "internal: LLVM has no intrinsic %s", name);
        return LLVMGetUndef(L->i32);
    }
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->mod, id, ovl, (size_t)novl);
    LLVMTypeRef fty = LLVMIntrinsicGetType(L->c, id, ovl, (size_t)novl);
    return LLVMBuildCall2(L->b, fty, fn, args, (unsigned)nargs, "");
}

LLVMValueRef tb_asm(TbLower *L, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, int nargs,
                    bool side_effect) {
    LLVMTypeRef at[64];
    if (nargs > 64) {
        tb_error(L, NULL, "internal: inline PTX with %d operands (at most 64)", nargs);
        return LLVMGetUndef(ret);
    }
    for (int i = 0; i < nargs; i++)
        at[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, at, (unsigned)nargs, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons, strlen(cons), side_effect, 0,
                                      LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(L->b, fty, a, args, (unsigned)nargs, "");
}

LLVMValueRef tb_sreg(TbLower *L, LLVMBuilderRef b, const char *name) {
    LLVMBuilderRef save = L->b;
    L->b = b;
    LLVMValueRef v = tb_call_intr(L, name, NULL, 0, NULL, 0);
    L->b = save;
    return v;
}
