/* Elementwise ops: arithmetic, comparisons, selects, pointer arithmetic, casts and math.
 * Narrow floats (f16, bf16, f8) compute in f32 and round once per op, as the
 * interpreter does (docs/ir.md). */
#include "tb_internal.h"

#include <string.h>

static bool is_f8(TirScalar s) { return s == TIR_F8E4M3 || s == TIR_F8E5M2; }

static LLVMValueRef f8_to_f32(TbLower *L, LLVMValueRef x, TirScalar s, const TirOp *op) {
    if (L->cc < 89) {
        tb_error(L, op, "f8 types need sm_89 or newer");
        return LLVMGetUndef(L->f32);
    }
    /* cvt.rn.f16x2.e4m3x2 widens two packed f8 values exactly; take the low half. */
    LLVMValueRef w = LLVMBuildZExt(L->b, x, L->i16, "");
    const char *t = s == TIR_F8E4M3 ? "cvt.rn.f16x2.e4m3x2 $0, $1;" : "cvt.rn.f16x2.e5m2x2 $0, $1;";
    LLVMValueRef r = tb_asm(L, L->i32, t, "=r,h", &w, 1, false);
    LLVMValueRef h = LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, r, L->i16, ""), L->f16, "");
    return LLVMBuildFPExt(L->b, h, L->f32, "");
}

static LLVMValueRef f32_to_f8(TbLower *L, LLVMValueRef x, TirScalar s, const TirOp *op) {
    if (L->cc < 89) {
        tb_error(L, op, "f8 types need sm_89 or newer");
        return LLVMGetUndef(L->i8);
    }
    LLVMValueRef args[2] = {LLVMConstReal(L->f32, 0.0), x};
    const char *t = s == TIR_F8E4M3 ? "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;"
                                    : "cvt.rn.satfinite.e5m2x2.f32 $0, $1, $2;";
    LLVMValueRef r = tb_asm(L, L->i16, t, "=h,f,f", args, 2, false);
    return LLVMBuildTrunc(L->b, r, L->i8, "");
}

/* float value of a narrow/f32/f64 element, widened to f32 (f64 stays). */
static LLVMValueRef widen(TbLower *L, LLVMValueRef x, TirScalar s, const TirOp *op) {
    if (is_f8(s)) return f8_to_f32(L, x, s, op);
    if (s == TIR_F16 || s == TIR_BF16) return LLVMBuildFPExt(L->b, x, L->f32, "");
    return x;
}

static LLVMValueRef narrow(TbLower *L, LLVMValueRef x, TirScalar s, const TirOp *op) {
    if (is_f8(s)) return f32_to_f8(L, x, s, op);
    if (s == TIR_F16 || s == TIR_BF16) return LLVMBuildFPTrunc(L->b, x, tb_scalar_type(L, s), "");
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

static LLVMValueRef fconst(TbLower *L, LLVMValueRef like, double v) {
    return LLVMConstReal(LLVMTypeOf(like), v);
}

/* The GPU's approximate ex2/lg2 (max 2 ulp over the range): what Triton's fast path uses. */
static LLVMValueRef ex2(TbLower *L, LLVMValueRef x) {
    return tb_asm(L, L->f32, "ex2.approx.ftz.f32 $0, $1;", "=f,f", &x, 1, false);
}
static LLVMValueRef lg2(TbLower *L, LLVMValueRef x) {
    return tb_asm(L, L->f32, "lg2.approx.f32 $0, $1;", "=f,f", &x, 1, false);
}
static LLVMValueRef expf_(TbLower *L, LLVMValueRef x) {
    return ex2(L, LLVMBuildFMul(L->b, x, fconst(L, x, 1.4426950408889634), ""));
}

/* sin/cos: reduce by 2*pi in three parts (Cody-Waite) so sin.approx sees |x| <= pi,
 * where its absolute error is below 2^-20.9. */
static LLVMValueRef sin_cos(TbLower *L, LLVMValueRef x, bool cosine) {
    LLVMValueRef k = intr1(L, "llvm.rint", LLVMBuildFMul(L->b, x, fconst(L, x, 0.15915494309189535), ""));
    LLVMValueRef r = x;
    const double parts[3] = {6.28125, 0.0019353071693331003, 1.0253131677018246e-11};
    for (int i = 0; i < 3; i++) {
        LLVMValueRef nk = LLVMBuildFNeg(L->b, k, "");
        LLVMValueRef a[3] = {nk, fconst(L, x, parts[i]), r};
        LLVMTypeRef t = L->f32;
        r = tb_call_intr(L, "llvm.fma", &t, 1, a, 3);
    }
    return tb_asm(L, L->f32, cosine ? "cos.approx.f32 $0, $1;" : "sin.approx.f32 $0, $1;", "=f,f",
                  &r, 1, false);
}

/* erf: Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7. */
static LLVMValueRef erf_(TbLower *L, LLVMValueRef x) {
    LLVMValueRef ax = intr1(L, "llvm.fabs", x);
    LLVMValueRef t = LLVMBuildFDiv(L->b, fconst(L, x, 1.0),
                                   LLVMBuildFAdd(L->b, fconst(L, x, 1.0),
                                                 LLVMBuildFMul(L->b, ax, fconst(L, x, 0.3275911), ""), ""),
                                   "");
    static const double a[5] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
    LLVMValueRef p = fconst(L, x, a[4]);
    for (int i = 3; i >= 0; i--)
        p = LLVMBuildFAdd(L->b, LLVMBuildFMul(L->b, p, t, ""), fconst(L, x, a[i]), "");
    p = LLVMBuildFMul(L->b, p, t, "");
    LLVMValueRef e = expf_(L, LLVMBuildFNeg(L->b, LLVMBuildFMul(L->b, ax, ax, ""), ""));
    LLVMValueRef y = LLVMBuildFSub(L->b, fconst(L, x, 1.0), LLVMBuildFMul(L->b, p, e, ""), "");
    LLVMTypeRef ft = L->f32;
    LLVMValueRef args[2] = {y, x};
    return tb_call_intr(L, "llvm.copysign", &ft, 1, args, 2);
}

static LLVMValueRef math_f32(TbLower *L, TirOpcode code, LLVMValueRef x, const TirOp *op) {
    LLVMValueRef one = fconst(L, x, 1.0);
    switch (code) {
    case TIR_OP_EXP: return expf_(L, x);
    case TIR_OP_EXP2: return ex2(L, x);
    case TIR_OP_LOG: return LLVMBuildFMul(L->b, lg2(L, x), fconst(L, x, 0.6931471805599453), "");
    case TIR_OP_LOG2: return lg2(L, x);
    case TIR_OP_SQRT: return intr1(L, "llvm.sqrt", x);
    case TIR_OP_RSQRT: return tb_asm(L, L->f32, "rsqrt.approx.f32 $0, $1;", "=f,f", &x, 1, false);
    case TIR_OP_SIN: return sin_cos(L, x, false);
    case TIR_OP_COS: return sin_cos(L, x, true);
    case TIR_OP_TANH: {
        /* 1 - 2 / (e^{2x} + 1): exact limits at +-inf; absolute error ~1e-7 near 0 */
        LLVMValueRef e = expf_(L, LLVMBuildFMul(L->b, x, fconst(L, x, 2.0), ""));
        LLVMValueRef q = LLVMBuildFDiv(L->b, fconst(L, x, 2.0), LLVMBuildFAdd(L->b, e, one, ""), "");
        return LLVMBuildFSub(L->b, one, q, "");
    }
    case TIR_OP_SIGMOID: {
        LLVMValueRef e = expf_(L, LLVMBuildFNeg(L->b, x, ""));
        return LLVMBuildFDiv(L->b, one, LLVMBuildFAdd(L->b, one, e, ""), "");
    }
    case TIR_OP_ERF: return erf_(L, x);
    case TIR_OP_FLOOR: return intr1(L, "llvm.floor", x);
    case TIR_OP_CEIL: return intr1(L, "llvm.ceil", x);
    default: tb_error(L, op, "internal: not a math op"); return x;
    }
}

static LLVMValueRef math_f64(TbLower *L, TirOpcode code, LLVMValueRef x, const TirOp *op) {
    switch (code) {
    case TIR_OP_SQRT: return intr1(L, "llvm.sqrt", x);
    case TIR_OP_RSQRT: return LLVMBuildFDiv(L->b, fconst(L, x, 1.0), intr1(L, "llvm.sqrt", x), "");
    case TIR_OP_FLOOR: return intr1(L, "llvm.floor", x);
    case TIR_OP_CEIL: return intr1(L, "llvm.ceil", x);
    default:
        tb_error(L, op, "'%s' on f64 is not supported by the GPU backend yet", tir_op_info[code].name);
        return x;
    }
}

/* shift counts at or past the width give 0 (and -1 for shr of a negative signed value) */
static LLVMValueRef shift(TbLower *L, bool left, bool sgn, LLVMValueRef a, LLVMValueRef b) {
    LLVMTypeRef t = LLVMTypeOf(a);
    unsigned w = LLVMGetIntTypeWidth(t);
    LLVMValueRef big = LLVMBuildICmp(L->b, LLVMIntUGE, b, LLVMConstInt(t, w, 0), "");
    LLVMValueRef sb = LLVMBuildSelect(L->b, big, LLVMConstInt(t, w - 1, 0), b, "");
    if (left) return LLVMBuildSelect(L->b, big, LLVMConstNull(t), LLVMBuildShl(L->b, a, sb, ""), "");
    if (sgn) return LLVMBuildAShr(L->b, a, sb, "");
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
        fix = LLVMBuildSelect(L->b, zero, a, LLVMConstNull(t), "");       /* INT_MIN % -1 = 0 */
    } else {
        LLVMValueRef neg = LLVMBuildNeg(L->b, a, "");                       /* INT_MIN / -1 wraps */
        fix = LLVMBuildSelect(L->b, zero, LLVMConstAllOnes(t), neg, "");
    }
    return LLVMBuildSelect(L->b, bad, fix, q, "");
}

LLVMValueRef tb_binop(TbLower *L, TirOpcode code, TirScalar s, LLVMValueRef a, LLVMValueRef b,
                      const TirOp *op) {
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
        default:
            tb_error(L, op, "'%s' does not apply to floats", tir_op_info[code].name);
            return a;
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
    default:
        tb_error(L, op, "internal: '%s' is not a binary op", tir_op_info[code].name);
        return a;
    }
}

static LLVMValueRef cmp(TbLower *L, TirCmp p, TirType t, LLVMValueRef a, LLVMValueRef b,
                        const TirOp *op) {
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
    if (from == to) return x;
    LLVMTypeRef tt = tb_scalar_type(L, to);
    bool ff = tir_scalar_is_float(from), tf = tir_scalar_is_float(to);
    if (ff && tf) {
        if (from == TIR_F64 || to == TIR_F64) {
            if (from == TIR_F64) return narrow(L, LLVMBuildFPTrunc(L->b, x, L->f32, ""), to, op);
            return LLVMBuildFPExt(L->b, widen(L, x, from, op), L->f64, "");
        }
        /* f32 -> f16/bf16 rounds once (cvt.rn); narrow -> narrow goes through f32, exact. */
        return narrow(L, widen(L, x, from, op), to, op);
    }
    if (ff) { /* float -> int: truncate, saturate, NaN -> 0 */
        LLVMValueRef w = widen(L, x, from, op);
        if (to == TIR_I1) return LLVMBuildFCmp(L->b, LLVMRealUNE, w, LLVMConstReal(LLVMTypeOf(w), 0), "");
        LLVMTypeRef ovl[2] = {tt, LLVMTypeOf(w)};
        return tb_call_intr(L, tir_scalar_is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ovl, 2,
                            &w, 1);
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
    if (to == TIR_I1) return LLVMBuildICmp(L->b, LLVMIntNE, x, LLVMConstNull(LLVMTypeOf(x)), "");
    unsigned wf = LLVMGetIntTypeWidth(LLVMTypeOf(x)), wt = LLVMGetIntTypeWidth(tt);
    if (wt < wf) return LLVMBuildTrunc(L->b, x, tt, "");
    if (wt > wf) return sgn ? LLVMBuildSExt(L->b, x, tt, "") : LLVMBuildZExt(L->b, x, tt, "");
    return x;
}

static LLVMValueRef cast_elem(TbLower *L, TirType from, TirType to, LLVMValueRef x, const TirOp *op) {
    if (from.ptr && to.ptr) return x;
    if (from.ptr) return tb_convert(L, LLVMBuildPtrToInt(L->b, x, L->i64, ""), TIR_I64, (TirScalar)to.elem, op);
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
        if (fl) return narrow(L, LLVMBuildFNeg(L->b, widen(L, x, s, op), ""), s, op);
        return LLVMBuildNeg(L->b, x, "");
    }
    if (code == TIR_OP_NOT) return LLVMBuildNot(L->b, x, "");
    if (code == TIR_OP_ABS) {
        if (fl) return narrow(L, intr1(L, "llvm.fabs", widen(L, x, s, op)), s, op);
        if (!tir_scalar_is_signed(s)) return x;
        LLVMTypeRef tt = LLVMTypeOf(x);
        LLVMValueRef args[2] = {x, LLVMConstInt(L->i1, 0, 0)};
        return tb_call_intr(L, "llvm.abs", &tt, 1, args, 2);
    }
    if (code == TIR_OP_NEXT_POW2) return next_pow2(L, x);
    if (!fl) {
        tb_error(L, op, "'%s' needs a float operand", tir_op_info[code].name);
        return x;
    }
    if (s == TIR_F64) return math_f64(L, code, x, op);
    return narrow(L, math_f32(L, code, widen(L, x, s, op), op), s, op);
}

void tb_lower_elementwise(TbLower *L, TirOp *op) {
    TirValue *r = op->res[0];
    TbVal *o[3] = {NULL, NULL, NULL};
    int n = 1;
    for (int i = 0; i < op->nopnd && i < 3; i++) {
        o[i] = tb_val(L, op->opnd[i]);
        if (!o[i]) return;
        if (o[i]->n > n) n = o[i]->n;
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
    LLVMValueRef *e = tb_elems(L, n);
#define EL(k) (o[k]->e[o[k]->n == 1 ? 0 : i])
    for (int i = 0; i < n; i++) {
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
            LLVMValueRef off = EL(1);
            if (LLVMGetIntTypeWidth(LLVMTypeOf(off)) < 64)
                off = tir_scalar_is_signed(os) && os != TIR_I1 ? LLVMBuildSExt(L->b, off, L->i64, "")
                                                              : LLVMBuildZExt(L->b, off, L->i64, "");
            LLVMTypeRef et = tb_mem_type(L, (TirScalar)t0.elem);
            e[i] = LLVMBuildGEP2(L->b, et, EL(0), &off, 1, "");
            break;
        }
        default:
            if (op->nopnd == 1) e[i] = unary(L, op, t0, EL(0));
            else if (op->nopnd == 2) e[i] = tb_binop(L, (TirOpcode)op->code, s, EL(0), EL(1), op);
            else {
                tb_error(L, op, "'%s' is not supported by the GPU backend yet", tir_op_info[op->code].name);
                return;
            }
        }
        if (L->errors) return;
    }
#undef EL
    tb_set(L, r, n, e);
}
