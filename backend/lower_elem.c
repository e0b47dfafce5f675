/* Elementwise ops: arithmetic, comparisons, selects, pointer arithmetic and casts (the math
 * functions: lower_math.c).
 * Narrow floats (f16, bf16, f8) compute in f32 and round once per op, as the
 * interpreter does (docs/ir.md). */
#include "tb_internal.h"

#include <math.h>
#include <string.h>

static bool is_f8(TirScalar s) {
    return s == TIR_F8E4M3 || s == TIR_F8E5M2;
}

/* Software f8 conversions for targets without cvt.*e4m3x2/e5m2x2 (before sm_89): exact
 * widening, and RNE with satfinite narrowing (NaN -> 0x7f, as docs/ir.md and the
 * interpreter's tir_f32_to_f8*). */
static LLVMValueRef c32(TbLower *L, uint32_t v) {
    return LLVMConstInt(L->i32, v, 0);
}

static LLVMValueRef f8_to_f32_soft(TbLower *L, LLVMValueRef x, TirScalar s) {
    LLVMValueRef u = LLVMBuildZExt(L->b, x, L->i32, "");
    if (s == TIR_F8E5M2) {
        /* e5m2 is the high byte of an f16: exact */
        LLVMValueRef h =
            LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, LLVMBuildShl(L->b, u, c32(L, 8), ""), L->i16, ""), L->f16, "");
        return LLVMBuildFPExt(L->b, h, L->f32, "");
    }
    /* e4m3: bias 7, no infinities, S.1111.111 is NaN */
    LLVMValueRef sign = LLVMBuildShl(L->b, LLVMBuildAnd(L->b, u, c32(L, 0x80), ""), c32(L, 24), "");
    LLVMValueRef mag = LLVMBuildAnd(L->b, u, c32(L, 0x7f), "");
    LLVMValueRef e = LLVMBuildLShr(L->b, mag, c32(L, 3), "");
    LLVMValueRef m = LLVMBuildAnd(L->b, mag, c32(L, 7), "");
    LLVMValueRef normal = LLVMBuildOr(L->b, LLVMBuildShl(L->b, LLVMBuildAdd(L->b, e, c32(L, 120), ""), c32(L, 23), ""),
                                      LLVMBuildShl(L->b, m, c32(L, 20), ""), "");
    /* subnormal: m * 2^-9, exact in f32 */
    LLVMValueRef sub = LLVMBuildBitCast(
        L->b, LLVMBuildFMul(L->b, LLVMBuildUIToFP(L->b, m, L->f32, ""), LLVMConstReal(L->f32, 1.0 / 512), ""), L->i32,
        "");
    LLVMValueRef bits = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, e, c32(L, 0), ""), sub, normal, "");
    bits = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, mag, c32(L, 0x7f), ""), c32(L, 0x7fc00000), bits, "");
    return LLVMBuildBitCast(L->b, LLVMBuildOr(L->b, bits, sign, ""), L->f32, "");
}

static LLVMValueRef f32_to_f8_soft(TbLower *L, LLVMValueRef x, TirScalar s) {
    bool e4 = s == TIR_F8E4M3;
    int M = e4 ? 3 : 2, B = e4 ? 7 : 15;
    uint32_t maxcode = e4 ? 0x7e : 0x7b;
    LLVMValueRef u = LLVMBuildBitCast(L->b, x, L->i32, "");
    LLVMValueRef sign = LLVMBuildTrunc(
        L->b, LLVMBuildLShr(L->b, LLVMBuildAnd(L->b, u, c32(L, 0x80000000u), ""), c32(L, 24), ""), L->i8, "");
    LLVMValueRef a = LLVMBuildAnd(L->b, u, c32(L, 0x7fffffff), "");
    LLVMValueRef af = LLVMBuildBitCast(L->b, a, L->f32, "");
    /* below the smallest normal: round |x| / 2^(1-B-M) to an integer (RNE) = the code */
    LLVMValueRef scaled = LLVMBuildFMul(L->b, af, LLVMConstReal(L->f32, (double)(1u << (B - 1 + M))), "");
    LLVMTypeRef ft = L->f32;
    LLVMValueRef rint = tb_call_intr(L, "llvm.rint", &ft, 1, &scaled, 1);
    LLVMValueRef subq = LLVMBuildFPToUI(L->b, rint, L->i32, "");
    /* normal: rebias, then round the mantissa to M bits (RNE; a carry bumps the exponent) */
    int sh = 23 - M;
    LLVMValueRef v = LLVMBuildSub(L->b, a, c32(L, (uint32_t)(127 - B) << 23), "");
    LLVMValueRef odd = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, v, c32(L, (uint32_t)sh), ""), c32(L, 1), "");
    LLVMValueRef q =
        LLVMBuildLShr(L->b, LLVMBuildAdd(L->b, LLVMBuildAdd(L->b, v, c32(L, (1u << (sh - 1)) - 1), ""), odd, ""),
                      c32(L, (uint32_t)sh), "");
    LLVMValueRef is_sub = LLVMBuildICmp(L->b, LLVMIntULT, a, c32(L, (uint32_t)(127 + 1 - B) << 23), "");
    LLVMValueRef code = LLVMBuildSelect(L->b, is_sub, subq, q, "");
    /* satfinite: overflow and infinity give the largest finite value */
    code = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntUGT, code, c32(L, maxcode), ""), c32(L, maxcode), code, "");
    LLVMValueRef r = LLVMBuildOr(L->b, LLVMBuildTrunc(L->b, code, L->i8, ""), sign, "");
    LLVMValueRef nan = LLVMBuildICmp(L->b, LLVMIntUGT, a, c32(L, 0x7f800000u), "");
    return LLVMBuildSelect(L->b, nan, LLVMConstInt(L->i8, 0x7f, 0), r, "");
}

static LLVMValueRef f8_to_f32(TbLower *L, LLVMValueRef x, TirScalar s, const TirOp *op) {
    if (L->cc < 89)
        return f8_to_f32_soft(L, x, s);
    /* cvt.rn.f16x2.e4m3x2 widens two packed f8 values exactly; take the low half. */
    LLVMValueRef w = LLVMBuildZExt(L->b, x, L->i16, "");
    const char *t = s == TIR_F8E4M3 ? "cvt.rn.f16x2.e4m3x2 $0, $1;" : "cvt.rn.f16x2.e5m2x2 $0, $1;";
    LLVMValueRef r = tb_asm(L, L->i32, t, "=r,h", &w, 1, false);
    LLVMValueRef h = LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, r, L->i16, ""), L->f16, "");
    return LLVMBuildFPExt(L->b, h, L->f32, "");
}

static LLVMValueRef f32_to_f8(TbLower *L, LLVMValueRef x, TirScalar s, const TirOp *op) {
    if (L->cc < 89)
        return f32_to_f8_soft(L, x, s);
    LLVMValueRef args[2] = {LLVMConstReal(L->f32, 0.0), x};
    const char *t =
        s == TIR_F8E4M3 ? "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;" : "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;";
    LLVMValueRef r = tb_asm(L, L->i16, t, "=h,f,f", args, 2, false);
    return LLVMBuildTrunc(L->b, r, L->i8, "");
}

/* float value of a narrow/f32/f64 element, widened to f32 (f64 stays). */
static LLVMValueRef widen(TbLower *L, LLVMValueRef x, TirScalar s, const TirOp *op) {
    if (is_f8(s))
        return f8_to_f32(L, x, s, op);
    if (s == TIR_F16 || s == TIR_BF16)
        return LLVMBuildFPExt(L->b, x, L->f32, "");
    return x;
}

static LLVMValueRef narrow(TbLower *L, LLVMValueRef x, TirScalar s, const TirOp *op) {
    if (is_f8(s))
        return f32_to_f8(L, x, s, op);
    if (s == TIR_F16 || s == TIR_BF16)
        return LLVMBuildFPTrunc(L->b, x, tb_scalar_type(L, s), "");
    return x;
}

static LLVMValueRef intr1(TbLower *L, const char *name, LLVMValueRef x) {
    LLVMTypeRef t = LLVMTypeOf(x);
    return tb_call_intr(L, name, &t, 1, &x, 1);
}
static LLVMValueRef intr2(TbLower *L, const char *name, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef args[2] = {a, b};
    return tb_call_intr(L, name, &t, 1, args, 2);
}

/* shift counts at or past the width give 0 (and -1 for shr of a negative signed value) */
static LLVMValueRef shift(TbLower *L, bool left, bool sgn, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef t = LLVMTypeOf(a);
    unsigned w = LLVMGetIntTypeWidth(t);
    LLVMValueRef big = LLVMBuildICmp(L->b, LLVMIntUGE, b, LLVMConstInt(t, w, 0), "");
    LLVMValueRef sb = LLVMBuildSelect(L->b, big, LLVMConstInt(t, w - 1, 0), b, "");
    if (left)
        return LLVMBuildSelect(L->b, big, LLVMConstNull(t), LLVMBuildShl(L->b, a, sb, ""), "");
    if (sgn)
        return LLVMBuildAShr(L->b, a, sb, "");
    return LLVMBuildSelect(L->b, big, LLVMConstNull(t), LLVMBuildLShr(L->b, a, sb, ""), "");
}

/* div by zero gives -1, rem by zero the dividend (what the GPU returns); INT_MIN / -1
 * wraps.  LLVM makes both undefined, so the divisor is made safe first. */
static LLVMValueRef divrem(TbLower *L, bool rem, bool sgn, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef zero = LLVMBuildICmp(L->b, LLVMIntEQ, b, LLVMConstNull(t), "");
    LLVMValueRef bad = zero;
    if (sgn) {
        unsigned w = LLVMGetIntTypeWidth(t);
        LLVMValueRef minv = LLVMConstInt(t, 1ULL << (w - 1), 0);
        LLVMValueRef ovf = LLVMBuildAnd(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, a, minv, ""),
                                        LLVMBuildICmp(L->b, LLVMIntEQ, b, LLVMConstAllOnes(t), ""), "");
        bad = LLVMBuildOr(L->b, zero, ovf, "");
    }
    LLVMValueRef sb = LLVMBuildSelect(L->b, bad, LLVMConstInt(t, 1, 0), b, "");
    LLVMValueRef q = rem ? (sgn ? LLVMBuildSRem(L->b, a, sb, "") : LLVMBuildURem(L->b, a, sb, ""))
                         : (sgn ? LLVMBuildSDiv(L->b, a, sb, "") : LLVMBuildUDiv(L->b, a, sb, ""));
    /* a / 1 = a and a % 1 = 0 were computed for the bad cases: fix them up */
    LLVMValueRef fix;
    if (rem) {
        fix = LLVMBuildSelect(L->b, zero, a, LLVMConstNull(t), ""); /* INT_MIN % -1 = 0 */
    } else {
        LLVMValueRef neg = LLVMBuildNeg(L->b, a, ""); /* INT_MIN / -1 wraps */
        fix = LLVMBuildSelect(L->b, zero, LLVMConstAllOnes(t), neg, "");
    }
    return LLVMBuildSelect(L->b, bad, fix, q, "");
}

LLVMValueRef tb_binop(TbLower *L, TirOpcode code, TirScalar s, LLVMValueRef a, LLVMValueRef b, const TirOp *op) {
    if (tir_scalar_is_float(s)) {
        LLVMValueRef x = widen(L, a, s, op), y = widen(L, b, s, op), r;
        switch (code) {
        case TIR_OP_ADD: r = LLVMBuildFAdd(L->b, x, y, ""); break;
        case TIR_OP_SUB: r = LLVMBuildFSub(L->b, x, y, ""); break;
        case TIR_OP_MUL: r = LLVMBuildFMul(L->b, x, y, ""); break;
        case TIR_OP_DIV: r = LLVMBuildFDiv(L->b, x, y, ""); break;
        case TIR_OP_REM: r = LLVMBuildFRem(L->b, x, y, ""); break;
        case TIR_OP_MAXIMUM: r = intr2(L, "llvm.maxnum", x, y); break;
        case TIR_OP_MINIMUM: r = intr2(L, "llvm.minnum", x, y); break;
        default: tb_error(L, op, "'%s' does not apply to floats", tir_op_info[code].name); return a;
        }
        return narrow(L, r, s, op);
    }
    bool sgn = tir_scalar_is_signed(s);
    switch (code) {
    case TIR_OP_ADD: return LLVMBuildAdd(L->b, a, b, "");
    case TIR_OP_SUB: return LLVMBuildSub(L->b, a, b, "");
    case TIR_OP_MUL: return LLVMBuildMul(L->b, a, b, "");
    case TIR_OP_DIV: return divrem(L, false, sgn, a, b);
    case TIR_OP_REM: return divrem(L, true, sgn, a, b);
    case TIR_OP_AND: return LLVMBuildAnd(L->b, a, b, "");
    case TIR_OP_OR: return LLVMBuildOr(L->b, a, b, "");
    case TIR_OP_XOR: return LLVMBuildXor(L->b, a, b, "");
    case TIR_OP_SHL: return shift(L, true, sgn, a, b);
    case TIR_OP_SHR: return shift(L, false, sgn, a, b);
    case TIR_OP_MAXIMUM: return intr2(L, sgn ? "llvm.smax" : "llvm.umax", a, b);
    case TIR_OP_MINIMUM: return intr2(L, sgn ? "llvm.smin" : "llvm.umin", a, b);
    default: tb_error(L, op, "internal: '%s' is not a binary op", tir_op_info[code].name); return a;
    }
}

static LLVMValueRef cmp(TbLower *L, TirCmp p, TirType t, LLVMValueRef a, LLVMValueRef b, const TirOp *op) {
    TirScalar s = (TirScalar)t.elem;
    if (!t.ptr && tir_scalar_is_float(s)) {
        static const LLVMRealPredicate fp[6] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT,
                                                LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
        return LLVMBuildFCmp(L->b, fp[p], widen(L, a, s, op), widen(L, b, s, op), "");
    }
    static const LLVMIntPredicate sp[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
    static const LLVMIntPredicate up[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
    bool sgn = !t.ptr && s != TIR_I1 && tir_scalar_is_signed(s);
    return LLVMBuildICmp(L->b, sgn ? sp[p] : up[p], a, b, "");
}

LLVMValueRef tb_convert(TbLower *L, LLVMValueRef x, TirScalar from, TirScalar to, const TirOp *op) {
    if (from == to)
        return x;
    LLVMTypeRef tt = tb_scalar_type(L, to);
    bool ff = tir_scalar_is_float(from), tf = tir_scalar_is_float(to);
    if (ff && tf) {
        if (from == TIR_F64 || to == TIR_F64) {
            if (from == TIR_F64)
                return narrow(L, LLVMBuildFPTrunc(L->b, x, L->f32, ""), to, op);
            return LLVMBuildFPExt(L->b, widen(L, x, from, op), L->f64, "");
        }
        /* f32 -> f16/bf16 rounds once (cvt.rn); narrow -> narrow goes through f32, exact. */
        return narrow(L, widen(L, x, from, op), to, op);
    }
    if (ff) { /* float -> int: truncate, saturate, NaN -> 0 */
        LLVMValueRef w = widen(L, x, from, op);
        if (to == TIR_I1)
            return LLVMBuildFCmp(L->b, LLVMRealUNE, w, LLVMConstReal(LLVMTypeOf(w), 0), "");
        LLVMTypeRef ovl[2] = {tt, LLVMTypeOf(w)};
        return tb_call_intr(L, tir_scalar_is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ovl, 2, &w, 1);
    }
    bool sgn = from != TIR_I1 && tir_scalar_is_signed(from);
    if (tf) { /* int -> float: round to nearest even */
        LLVMTypeRef mid = (to == TIR_F64) ? L->f64 : L->f32;
        LLVMValueRef r = sgn ? LLVMBuildSIToFP(L->b, x, mid, "") : LLVMBuildUIToFP(L->b, x, mid, "");
        if (to == TIR_F16 || to == TIR_BF16) {
            /* int -> f32 may round already; go straight to the narrow type instead */
            return sgn ? LLVMBuildSIToFP(L->b, x, tt, "") : LLVMBuildUIToFP(L->b, x, tt, "");
        }
        return narrow(L, r, to, op);
    }
    if (to == TIR_I1)
        return LLVMBuildICmp(L->b, LLVMIntNE, x, LLVMConstNull(LLVMTypeOf(x)), "");
    unsigned wf = LLVMGetIntTypeWidth(LLVMTypeOf(x)), wt = LLVMGetIntTypeWidth(tt);
    if (wt < wf)
        return LLVMBuildTrunc(L->b, x, tt, "");
    if (wt > wf)
        return sgn ? LLVMBuildSExt(L->b, x, tt, "") : LLVMBuildZExt(L->b, x, tt, "");
    return x;
}

static LLVMValueRef cast_elem(TbLower *L, TirType from, TirType to, LLVMValueRef x, const TirOp *op) {
    if (from.ptr && to.ptr)
        return x;
    if (from.ptr)
        return tb_convert(L, LLVMBuildPtrToInt(L->b, x, L->i64, ""), TIR_I64, (TirScalar)to.elem, op);
    if (to.ptr) {
        LLVMValueRef i = tb_convert(L, x, (TirScalar)from.elem, TIR_I64, op);
        return LLVMBuildIntToPtr(L->b, i, L->gptr, "");
    }
    return tb_convert(L, x, (TirScalar)from.elem, (TirScalar)to.elem, op);
}

static LLVMValueRef next_pow2(TbLower *L, LLVMValueRef x) {
    LLVMTypeRef t = LLVMTypeOf(x);
    unsigned w = LLVMGetIntTypeWidth(t);
    LLVMValueRef one = LLVMConstInt(t, 1, 0);
    LLVMValueRef m1 = LLVMBuildSub(L->b, x, one, "");
    LLVMValueRef args[2] = {m1, LLVMConstInt(L->i1, 0, 0)};
    LLVMValueRef lz = tb_call_intr(L, "llvm.ctlz", &t, 1, args, 2);
    LLVMValueRef sh = LLVMBuildSub(L->b, LLVMConstInt(t, w, 0), lz, "");
    LLVMValueRef r = shift(L, true, false, one, sh);
    LLVMValueRef small = LLVMBuildICmp(L->b, LLVMIntSLE, x, one, "");
    return LLVMBuildSelect(L->b, small, one, r, "");
}

static LLVMValueRef unary(TbLower *L, TirOp *op, TirType t, LLVMValueRef x) {
    TirScalar s = (TirScalar)t.elem;
    TirOpcode code = (TirOpcode)op->code;
    bool fl = !t.ptr && tir_scalar_is_float(s);
    if (code == TIR_OP_NEG) {
        if (fl)
            return narrow(L, LLVMBuildFNeg(L->b, widen(L, x, s, op), ""), s, op);
        return LLVMBuildNeg(L->b, x, "");
    }
    if (code == TIR_OP_NOT)
        return LLVMBuildNot(L->b, x, "");
    if (code == TIR_OP_ABS) {
        if (fl)
            return narrow(L, intr1(L, "llvm.fabs", widen(L, x, s, op)), s, op);
        if (!tir_scalar_is_signed(s))
            return x;
        LLVMTypeRef tt = LLVMTypeOf(x);
        LLVMValueRef args[2] = {x, LLVMConstInt(L->i1, 0, 0)};
        return tb_call_intr(L, "llvm.abs", &tt, 1, args, 2);
    }
    if (code == TIR_OP_NEXT_POW2)
        return next_pow2(L, x);
    if (!fl) {
        tb_error(L, op, "'%s' needs a float operand", tir_op_info[code].name);
        return x;
    }
    if (s == TIR_F64)
        return tb_math_f64(L, code, x, op);
    return narrow(L, tb_math_f32(L, code, widen(L, x, s, op), tir_op_fast(op), op), s, op);
}

/* ---- address arithmetic in affine form (TbVal.ab/ao) ----
 * add, sub and multiplication by a constant keep integer tiles affine exactly (they are
 * ring operations in the wrapping type).  addptr turns an affine offset into one base
 * pointer per thread plus byte offsets: exact for 64-bit offsets; for i32 offsets it
 * assumes that base + offset does not overflow i32 within one thread's elements (the
 * offsets differ by less than the tile's size; a program whose i32 index expression
 * wraps addresses 2^31 elements away in the interpreter as well). */
static LLVMValueRef iconst(LLVMTypeRef t, int64_t v) {
    return LLVMConstInt(t, (unsigned long long)v, 1);
}

static bool lower_affine(TbLower *L, TirOp *op, TbVal **o, int n) {
    TirValue *r = op->res[0];
    if (op->nopnd != 2 || n < 2)
        return false;
    LLVMValueRef ab[2];
    const int64_t *ao[2];
    for (int k = 0; k < 2; k++)
        if (!tb_affine(L, o[k], n, &ab[k], &ao[k]))
            return false;
    int64_t *ro = tir_alloc(L->m->arena, (size_t)n * sizeof *ro);
    LLVMValueRef rb;
    LLVMValueRef *e = tb_elems(L, n);
    switch ((TirOpcode)op->code) {
    case TIR_OP_ADD:
    case TIR_OP_SUB:
    case TIR_OP_MUL: {
        if (r->ty.ptr || !tir_scalar_is_int((TirScalar)r->ty.elem) || r->ty.elem == TIR_I1)
            return false;
        bool add = op->code == TIR_OP_ADD;
        if (op->code == TIR_OP_MUL) {
            /* one side a constant splat: scale the other */
            int c = LLVMIsAConstantInt(ab[1]) && !o[1]->ab ? 1 : LLVMIsAConstantInt(ab[0]) && !o[0]->ab ? 0 : -1;
            if (c < 0)
                return false;
            for (int i = 0; i < n; i++)
                if (ao[c][i])
                    return false;
            int64_t f = LLVMConstIntGetSExtValue(ab[c]);
            rb = LLVMBuildMul(L->b, ab[1 - c], ab[c], "");
            for (int i = 0; i < n; i++)
                ro[i] = (int64_t)((uint64_t)ao[1 - c][i] * (uint64_t)f);
        } else {
            rb = add ? LLVMBuildAdd(L->b, ab[0], ab[1], "") : LLVMBuildSub(L->b, ab[0], ab[1], "");
            for (int i = 0; i < n; i++)
                ro[i] =
                    (int64_t)(add ? (uint64_t)ao[0][i] + (uint64_t)ao[1][i] : (uint64_t)ao[0][i] - (uint64_t)ao[1][i]);
        }
        LLVMTypeRef t = LLVMTypeOf(rb);
        for (int i = 0; i < n; i++)
            e[i] = ro[i] ? LLVMBuildAdd(L->b, rb, iconst(t, ro[i]), "") : rb;
        break;
    }
    case TIR_OP_ADDPTR: {
        TirScalar os = (TirScalar)op->opnd[1]->ty.elem;
        int bits = tir_scalar_bits(os);
        bool wide = bits == 64;
        if (!(wide || (os == TIR_I32)))
            return false;
        TirScalar ps = (TirScalar)op->opnd[0]->ty.elem;
        int64_t eb = ps == TIR_I1 ? 1 : tir_scalar_bytes(ps); /* bools are bytes in memory */
        for (int i = 0; i < n; i++) {
            if (!wide && (ao[1][i] > (1 << 24) || ao[1][i] < -(1 << 24)))
                return false;
            ro[i] = (int64_t)((uint64_t)ao[0][i] + (uint64_t)ao[1][i] * (uint64_t)eb);
        }
        LLVMValueRef off = ab[1];
        if (!wide)
            off = LLVMBuildSExt(L->b, off, L->i64, "");
        LLVMTypeRef et = tb_mem_type(L, (TirScalar)op->opnd[0]->ty.elem);
        rb = LLVMBuildGEP2(L->b, et, ab[0], &off, 1, "");
        for (int i = 0; i < n; i++) {
            LLVMValueRef c = LLVMConstInt(L->i64, (unsigned long long)ro[i], 1);
            e[i] = ro[i] ? LLVMBuildGEP2(L->b, L->i8, rb, &c, 1, "") : rb;
        }
        break;
    }
    default: return false;
    }
    tb_set_affine(L, r, n, e, rb, ro);
    return true;
}

/* ---- offsets products inside loops ----
 * A loop's pointer tile rebuilt from its factors (factor_ptrs) adds offsets defined before
 * the loop, each `(x as i64) * (s as i64)` of 32-bit x and s: LLVM hoists those products,
 * and their 64-bit values (two registers each, one per distinct row or column of the
 * thread) stay live across the whole loop next to the accumulators, which is what spills
 * (matmul 64x128x64 on 4 warps, strided operands: 28 such offsets, 44 bytes of spills;
 * 12 with the products made here, docs/backend.md "dot").
 * Inside the loop the product is instead one mul.wide.s32 of the 32-bit values at each
 * use, in inline PTX that LLVM cannot hoist: the same value (sext(x) * sext(s) is what
 * mul.wide.s32 computes), one register per row kept instead of two.  A product made inside
 * the loop from values that do not change over it is the same case (LLVM hoists it too):
 * dot_chain's load of C in its L loop, `(rn as i64) * stride_cn`, 33 64-bit values through
 * the inner K loop and 40 bytes of spills on sm_86 (64x64x32, 4 warps, div16); none now. */
static const TirOp *enclosing_loop(const TirOp *op) {
    for (const TirBlock *b = op->parent; b && b->parent; b = b->parent->parent)
        if (b->parent->code == TIR_OP_FOR)
            return b->parent;
    return NULL;
}

static bool inside(const TirOp *op, const TirOp *loop) {
    for (const TirBlock *b = op->parent; b && b->parent; b = b->parent->parent)
        if (b->parent == loop)
            return true;
    return false;
}

/* Whether v has one value through every iteration of loop: made before it, or inside it
 * by pure ops of such values (a few levels deep). */
static bool invariant_in(const TirValue *v, const TirOp *loop, int depth) {
    const TirOp *d = v->def;
    if (!d) { /* a block argument: the loop's own (its counter, carried values) vary */
        for (const TirBlock *b = v->block; b && b->parent; b = b->parent->parent)
            if (b->parent == loop)
                return false;
        return true;
    }
    if (!inside(d, loop))
        return true;
    if (depth == 0 || d->nregion || !(tir_op_info[d->code].traits & TIR_T_PURE))
        return false;
    for (int i = 0; i < d->nopnd; i++)
        if (!invariant_in(d->opnd[i], loop, depth - 1))
            return false;
    return true;
}

/* The signed 32-bit value v is cast from (through a splat), lowered already; else NULL. */
static TbVal *sext32_source(TbLower *L, const TirValue *v) {
    const TirOp *d = v->def;
    if (d && d->code == TIR_OP_SPLAT)
        d = d->opnd[0]->def;
    if (!d || d->code != TIR_OP_CAST || d->opnd[0]->ty.ptr || d->opnd[0]->ty.elem != TIR_I32 ||
        d->res[0]->ty.elem != TIR_I64 || !tb_lowered(L, d->opnd[0]))
        return NULL;
    return tb_val(L, d->opnd[0]);
}

/* The offsets operand `off` (n elements, lowered as ov) of addptr `op` as products made
 * here, or NULL.  `off` may be a broadcast of the product: its elements are the product's
 * registers (the same LLVM values), matched by identity. */
static LLVMValueRef *loop_wide_offsets(TbLower *L, const TirOp *op, const TirValue *off, const TbVal *ov, int n) {
    const TirOp *loop = enclosing_loop(op), *m = off->def;
    if (m && m->code == TIR_OP_BROADCAST)
        m = m->opnd[0]->def;
    if (!loop || !m || m->code != TIR_OP_MUL || !invariant_in(m->res[0], loop, 6) || off->ty.elem != TIR_I64 ||
        !tb_lowered(L, m->res[0]))
        return NULL;
    TbVal *x = sext32_source(L, m->opnd[0]), *y = sext32_source(L, m->opnd[1]);
    TbVal *mv = tb_val(L, m->res[0]);
    if (!x || !y || !mv || ov->n != n || (x->n != mv->n && x->n != 1) || (y->n != mv->n && y->n != 1) ||
        (x->n == 1 && y->n == 1))
        return NULL;
    int *src = tir_alloc(L->m->arena, (size_t)n * sizeof *src);
    for (int i = 0; i < n; i++) { /* all matched before any code is made */
        int j = 0;
        while (j < mv->n && mv->e[j] != ov->e[i])
            j++;
        if (j == mv->n || !x->e[x->n == 1 ? 0 : j] || !y->e[y->n == 1 ? 0 : j])
            return NULL;
        src[i] = j;
    }
    LLVMValueRef *e = tb_elems(L, n);
    LLVMValueRef *made = tb_elems(L, mv->n);
    for (int j = 0; j < mv->n; j++)
        made[j] = NULL;
    for (int i = 0; i < n; i++) {
        int j = src[i];
        if (!made[j]) {
            LLVMValueRef a[2] = {x->e[x->n == 1 ? 0 : j], y->e[y->n == 1 ? 0 : j]};
            made[j] = tb_asm(L, L->i64, "mul.wide.s32 $0, $1, $2;", "=l,r,r", a, 2, true);
        }
        e[i] = made[j];
    }
    return e;
}

/* Elements of a comparison proven equal (aligned groups along the fastest dimension
 * inside one thread's run: the cmp's `const` attribute, which the layout pass records
 * from the axis analysis) share the first one's compare: fewer predicates live at
 * once.  leader[i] is the element whose value element i takes. */
static int *cmp_groups(TbLower *L, const TirOp *op, int n) {
    const TirValue *r = op->res[0];
    if (!tir_type_is_tile(r->ty))
        return NULL;
    TbView v;
    if (!tb_is_blocked(L, r->ty) || !tb_view(L, r->ty, &v, NULL) || v.total != n)
        return NULL;
    int d0 = v.order[0];
    int64_t c = op->attr.constancy[d0];
    int spt = tb_view_spt(&v, d0);
    if (c > spt)
        c = spt;
    if (c > v.n[d0])
        c = v.n[d0];
    if (c < 2 || (c & (c - 1)) || spt % c)
        return NULL;
    int *lead = tir_alloc(L->m->arena, (size_t)n * sizeof *lead);
    for (int i = 0; i < n; i++) {
        int32_t j[TIR_MAXRANK];
        tb_view_multi(&v, i, j);
        j[d0] -= j[d0] % (int32_t)c;
        lead[i] = tb_view_index(&v, j);
    }
    return lead;
}

/* `x < n` (or <=, or mirrored) of a signed affine x (base + constant offsets) and a
 * per-thread n, as one limit per thread: lim = sat(n - base), element i is
 * `lo[i] < lim` with lo[i] the offset (minus one for <=).  Exact wherever base + offset
 * does not overflow (the affine form's assumption); the saturating subtraction keeps the
 * answer right when n - base does not fit.  Elements of one proven-constant run share
 * their leader's compare.  >, >= and unsigned compares keep the general path. */
static bool lower_cmp_limit(TbLower *L, TirOp *op, TbVal **o, int n, const int *lead) {
    TirType t = op->opnd[0]->ty;
    TirScalar s = (TirScalar)t.elem;
    if (t.ptr || (s != TIR_I32 && s != TIR_I64))
        return false;
    TirCmp p = (TirCmp)op->attr.i[0];
    int xi;
    bool le;
    if (p == TIR_CMP_LT || p == TIR_CMP_LE) {
        xi = 0;
        le = p == TIR_CMP_LE;
    } else if (p == TIR_CMP_GT || p == TIR_CMP_GE) {
        xi = 1; /* n > x  is  x < n */
        le = p == TIR_CMP_GE;
    } else {
        return false;
    }
    TbVal *x = o[xi], *lim_v = o[1 - xi];
    if (!x->ab || x->n != n || !tb_uniform(lim_v))
        return false;
    LLVMTypeRef it = LLVMTypeOf(x->ab);
    if (LLVMTypeOf(lim_v->e[0]) != it)
        return false;
    LLVMValueRef args[2] = {lim_v->e[0], x->ab};
    LLVMValueRef lim = tb_call_intr(L, "llvm.ssub.sat", &it, 1, args, 2);
    int64_t *lo = tir_alloc(L->m->arena, (size_t)n * sizeof *lo);
    for (int i = 0; i < n; i++)
        lo[i] = x->ao[lead ? lead[i] : i] - (le ? 1 : 0);
    tb_set_limit(L, op->res[0], n, lim, lo);
    return true;
}

/* Float division of a tile (f32, and narrow floats computed in f32).  By a value the same
 * in every element (a scalar, a splat): one IEEE reciprocal per thread, then a multiply
 * per element (relative error below 2^-23 where 1/y is normal, |y| < 2^126).  Otherwise
 * div.full.f32 per element (at most 2 ulp), as Triton does: IEEE div.rn is a long
 * sequence per element.  Scalars and f64 keep IEEE division. */
static bool lower_fdiv(TbLower *L, TirOp *op, TbVal **o, int n) {
    TirScalar s = (TirScalar)op->res[0]->ty.elem;
    if (op->res[0]->ty.ptr || !tir_scalar_is_float(s) || s == TIR_F64)
        return false;
    LLVMValueRef *e = tb_elems(L, n);
    bool uni = tb_uniform(o[1]);
    LLVMValueRef rcp = NULL;
    if (uni)
        rcp = LLVMBuildFDiv(L->b, LLVMConstReal(L->f32, 1.0), widen(L, o[1]->e[0], s, op), "");
    for (int i = 0; i < n; i++) {
        LLVMValueRef x = o[0]->e[o[0]->n == 1 ? 0 : i];
        if (i > 0 && o[0]->n == 1 && uni) {
            e[i] = e[0];
            continue;
        }
        LLVMValueRef xw = widen(L, x, s, op), r;
        if (uni) {
            r = LLVMBuildFMul(L->b, xw, rcp, "");
        } else {
            LLVMValueRef args[2] = {xw, widen(L, o[1]->e[i], s, op)};
            r = tb_asm(L, L->f32, "div.full.f32 $0, $1, $2;", "=f,f,f", args, 2, false);
        }
        e[i] = narrow(L, r, s, op);
    }
    tb_set(L, op->res[0], n, e);
    return true;
}

void tb_lower_elementwise(TbLower *L, TirOp *op) {
    TirValue *r = op->res[0];
    TbVal *o[3] = {NULL, NULL, NULL};
    int n = 1;
    for (int i = 0; i < op->nopnd && i < 3; i++) {
        o[i] = tb_val(L, op->opnd[i]);
        if (!o[i])
            return;
        if (o[i]->n > n)
            n = o[i]->n;
    }
    for (int i = 0; i < op->nopnd && i < 3; i++) {
        if (o[i]->n != n && o[i]->n != 1) {
            tb_error(L, op, "internal: operands of an elementwise op have different layouts");
            return;
        }
        if (op->opnd[i]->ty.layout != op->res[0]->ty.layout && tir_type_is_tile(op->opnd[i]->ty)) {
            tb_error(L, op, "operand %d's layout differs from the result's: run the 'layout' pass", i);
            return;
        }
    }
    TirType t0 = op->nopnd ? op->opnd[0]->ty : r->ty;
    TirScalar s = (TirScalar)t0.elem;
    if (lower_affine(L, op, o, n))
        return;
    if (op->code == TIR_OP_DIV && n > 1 && lower_fdiv(L, op, o, n))
        return;
    /* Operands the same in every element (splats, per-thread scalars): one computation. */
    bool uniform = n > 1;
    for (int k = 0; k < op->nopnd && k < 3; k++)
        uniform = uniform && tb_uniform(o[k]);
    int *lead = op->code == TIR_OP_CMP && n > 1 ? cmp_groups(L, op, n) : NULL;
    if (op->code == TIR_OP_CMP && n > 1 && !uniform && lower_cmp_limit(L, op, o, n, lead))
        return;
    LLVMValueRef *wide = op->code == TIR_OP_ADDPTR && !uniform ? loop_wide_offsets(L, op, op->opnd[1], o[1], n) : NULL;
    LLVMValueRef *e = tb_elems(L, n);
#define EL(k) (o[k]->e[o[k]->n == 1 ? 0 : i])
    for (int i = 0; i < n; i++) {
        if ((uniform && i > 0) || (lead && lead[i] != i)) {
            e[i] = e[uniform ? 0 : lead[i]];
            continue;
        }
        switch ((TirOpcode)op->code) {
        case TIR_OP_CAST: e[i] = cast_elem(L, t0, r->ty, EL(0), op); break;
        case TIR_OP_CMP: e[i] = cmp(L, (TirCmp)op->attr.i[0], t0, EL(0), EL(1), op); break;
        case TIR_OP_SELECT: e[i] = LLVMBuildSelect(L->b, EL(0), EL(1), EL(2), ""); break;
        case TIR_OP_FMA: {
            TirScalar fs = (TirScalar)r->ty.elem;
            if (!tir_scalar_is_float(fs)) {
                e[i] = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, EL(0), EL(1), ""), EL(2), "");
                break;
            }
            LLVMValueRef a[3] = {widen(L, EL(0), fs, op), widen(L, EL(1), fs, op), widen(L, EL(2), fs, op)};
            LLVMTypeRef ft = LLVMTypeOf(a[0]);
            e[i] = narrow(L, tb_call_intr(L, "llvm.fma", &ft, 1, a, 3), fs, op);
            break;
        }
        case TIR_OP_ADDPTR: {
            TirScalar os = (TirScalar)op->opnd[1]->ty.elem;
            LLVMValueRef off = wide ? wide[i] : EL(1);
            if (LLVMGetIntTypeWidth(LLVMTypeOf(off)) < 64)
                off = tir_scalar_is_signed(os) && os != TIR_I1 ? LLVMBuildSExt(L->b, off, L->i64, "")
                                                               : LLVMBuildZExt(L->b, off, L->i64, "");
            LLVMTypeRef et = tb_mem_type(L, (TirScalar)t0.elem);
            e[i] = LLVMBuildGEP2(L->b, et, EL(0), &off, 1, "");
            break;
        }
        default:
            if (op->nopnd == 1)
                e[i] = unary(L, op, t0, EL(0));
            else if (op->nopnd == 2)
                e[i] = tb_binop(L, (TirOpcode)op->code, s, EL(0), EL(1), op);
            else {
                tb_error(L, op, "'%s' is not supported by the GPU backend yet", tir_op_info[op->code].name);
                return;
            }
        }
        if (L->errors)
            return;
    }
#undef EL
    tb_set(L, r, n, e);
}
