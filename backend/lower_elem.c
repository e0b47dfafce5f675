/* Elementwise ops: arithmetic, comparisons, selects, pointer arithmetic, casts and math.
 * Narrow floats (f16, bf16, f8) compute in f32 and round once per op, as the
 * interpreter does (docs/ir.md). */
#include "tb_internal.h"
#include "math_consts.h"

#include <math.h>
#include <string.h>

static bool is_f8(TirScalar s) { return s == TIR_F8E4M3 || s == TIR_F8E5M2; }

/* Software f8 conversions for targets without cvt.*e4m3x2/e5m2x2 (before sm_89): exact
 * widening, and RNE with satfinite narrowing (NaN -> 0x7f, as docs/ir.md and the
 * interpreter's tir_f32_to_f8*). */
static LLVMValueRef c32(TbLower *L, uint32_t v) { return LLVMConstInt(L->i32, v, 0); }

static LLVMValueRef f8_to_f32_soft(TbLower *L, LLVMValueRef x, TirScalar s) {
    LLVMValueRef u = LLVMBuildZExt(L->b, x, L->i32, "");
    if (s == TIR_F8E5M2) {
        /* e5m2 is the high byte of an f16: exact */
        LLVMValueRef h = LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, LLVMBuildShl(L->b, u, c32(L, 8), ""), L->i16, ""), L->f16, "");
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
    LLVMValueRef sub = LLVMBuildBitCast(L->b, LLVMBuildFMul(L->b, LLVMBuildUIToFP(L->b, m, L->f32, ""),
                                                            LLVMConstReal(L->f32, 1.0 / 512), ""), L->i32, "");
    LLVMValueRef bits = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, e, c32(L, 0), ""), sub, normal, "");
    bits = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, mag, c32(L, 0x7f), ""), c32(L, 0x7fc00000), bits, "");
    return LLVMBuildBitCast(L->b, LLVMBuildOr(L->b, bits, sign, ""), L->f32, "");
}

static LLVMValueRef f32_to_f8_soft(TbLower *L, LLVMValueRef x, TirScalar s) {
    bool e4 = s == TIR_F8E4M3;
    int M = e4 ? 3 : 2, B = e4 ? 7 : 15;
    uint32_t maxcode = e4 ? 0x7e : 0x7b;
    LLVMValueRef u = LLVMBuildBitCast(L->b, x, L->i32, "");
    LLVMValueRef sign = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, LLVMBuildAnd(L->b, u, c32(L, 0x80000000u), ""), c32(L, 24), ""), L->i8, "");
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
    LLVMValueRef q = LLVMBuildLShr(L->b, LLVMBuildAdd(L->b, LLVMBuildAdd(L->b, v, c32(L, (1u << (sh - 1)) - 1), ""), odd, ""),
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
    if (L->cc < 89) return f8_to_f32_soft(L, x, s);
    /* cvt.rn.f16x2.e4m3x2 widens two packed f8 values exactly; take the low half. */
    LLVMValueRef w = LLVMBuildZExt(L->b, x, L->i16, "");
    const char *t = s == TIR_F8E4M3 ? "cvt.rn.f16x2.e4m3x2 $0, $1;" : "cvt.rn.f16x2.e5m2x2 $0, $1;";
    LLVMValueRef r = tb_asm(L, L->i32, t, "=r,h", &w, 1, false);
    LLVMValueRef h = LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, r, L->i16, ""), L->f16, "");
    return LLVMBuildFPExt(L->b, h, L->f32, "");
}

static LLVMValueRef f32_to_f8(TbLower *L, LLVMValueRef x, TirScalar s, const TirOp *op) {
    if (L->cc < 89) return f32_to_f8_soft(L, x, s);
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

/* sin/cos of f32 (the algorithm and its constants: backend/math_consts.h; the same steps in
 * C are checked against libm by tests/backend/sincos_ref.c: <= 1.5 ulp over the range).
 * The Cody-Waite reduction is straight-line; Payne-Hanek runs in a branch taken only by
 * elements with |x| > 2^17 (or inf/nan), so the common case pays one compare. */
static LLVMValueRef ffma(TbLower *L, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
    LLVMValueRef args[3] = {a, b, c};
    LLVMTypeRef t = LLVMTypeOf(a);
    return tb_call_intr(L, "llvm.fma", &t, 1, args, 3);
}
static LLVMValueRef c64(TbLower *L, uint64_t v) { return LLVMConstInt(L->i64, v, 0); }

/* x * 2/pi mod 4 for |x| > 2^17: *r the remainder in radians, *q the quadrant (i32) */
static void payne_hanek(TbLower *L, LLVMValueRef x, LLVMValueRef *r, LLVMValueRef *q) {
    LLVMBuilderRef b = L->b;
    LLVMValueRef bits = LLVMBuildBitCast(b, x, L->i32, "");
    LLVMValueRef e = LLVMBuildSub(b, LLVMBuildAnd(b, LLVMBuildLShr(b, bits, c32(L, 23), ""), c32(L, 0xff), ""),
                                  c32(L, 150), "");
    LLVMValueRef m = LLVMBuildZExt(b, LLVMBuildOr(b, LLVMBuildAnd(b, bits, c32(L, 0x7fffff), ""), c32(L, 0x800000), ""),
                                   L->i64, "");
    /* window start t0 = e + 30 >= 0 (e >= -6 here), word k <= 4, bit s */
    LLVMValueRef t0 = LLVMBuildAdd(b, e, c32(L, 30), "");
    LLVMValueRef k = LLVMBuildLShr(b, t0, c32(L, 5), "");
    LLVMValueRef sh = LLVMBuildZExt(b, LLVMBuildAnd(b, t0, c32(L, 31), ""), L->i64, "");
    /* table words k..k+3 by selects over the constants (no memory, no global) */
    LLVMValueRef tw[4];
    for (int i = 0; i < 4; i++) {
        tw[i] = c64(L, tb_two_over_pi_bits[i]);
        for (int kk = 1; kk + i + 1 < TB_TWO_OVER_PI_NWORDS && kk <= 4; kk++)
            tw[i] = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, k, c32(L, (uint32_t)kk), ""),
                                    c64(L, tb_two_over_pi_bits[kk + i]), tw[i], "");
    }
    LLVMValueRef p[3];
    for (int i = 0; i < 3; i++) {
        LLVMValueRef pair = LLVMBuildOr(b, LLVMBuildShl(b, tw[i], c64(L, 32), ""), tw[i + 1], "");
        LLVMValueRef w = LLVMBuildLShr(b, LLVMBuildShl(b, pair, sh, ""), c64(L, 32), "");
        p[i] = LLVMBuildMul(b, m, w, "");
    }
    LLVMValueRef lo = LLVMBuildAdd(b, p[2], LLVMBuildShl(b, p[1], c64(L, 32), ""), "");
    LLVMValueRef carry = LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntULT, lo, p[2], ""), L->i64, "");
    LLVMValueRef hi = LLVMBuildAdd(b, LLVMBuildAdd(b, p[0], LLVMBuildLShr(b, p[1], c64(L, 32), ""), ""), carry, "");
    LLVMValueRef u = LLVMBuildOr(b, LLVMBuildShl(b, hi, c64(L, 34), ""), LLVMBuildLShr(b, lo, c64(L, 30), ""), "");
    LLVMValueRef qq = LLVMBuildAdd(b, LLVMBuildAnd(b, LLVMBuildLShr(b, hi, c64(L, 30), ""), c64(L, 3), ""),
                                   LLVMBuildLShr(b, u, c64(L, 63), ""), "");
    qq = LLVMBuildTrunc(b, qq, L->i32, "");
    LLVMValueRef rd = LLVMBuildFMul(b, LLVMBuildSIToFP(b, u, L->f64, ""), LLVMConstReal(L->f64, TB_PIO2_2M64), "");
    LLVMValueRef rf = LLVMBuildFPTrunc(b, rd, L->f32, "");
    LLVMValueRef neg = LLVMBuildFCmp(b, LLVMRealOLT, x, LLVMConstReal(L->f32, 0.0), "");
    *r = LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, rf, ""), rf, "");
    *q = LLVMBuildSelect(b, neg, LLVMBuildNeg(b, qq, ""), qq, "");
}

/* One out-of-line copy of the Payne-Hanek reduction per module, called from every
 * element's cold branch: inlined per element it made posenc's LLVM opt + codegen ~8x slower. */
static LLVMValueRef payne_hanek_fn(TbLower *L, LLVMTypeRef *fty) {
    LLVMTypeRef elts[2] = {L->f32, L->i32};
    LLVMTypeRef rt = LLVMStructTypeInContext(L->c, elts, 2, 0);
    *fty = LLVMFunctionType(rt, &L->f32, 1, 0);
    LLVMValueRef fn = LLVMGetNamedFunction(L->mod, "tilec_payne_hanek");
    if (fn) return fn;
    fn = LLVMAddFunction(L->mod, "tilec_payne_hanek", *fty);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    unsigned kind = LLVMGetEnumAttributeKindForName("noinline", 8);
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(L->c, kind, 0));
    LLVMBuilderRef saved = L->b;
    L->b = LLVMCreateBuilderInContext(L->c);
    LLVMPositionBuilderAtEnd(L->b, LLVMAppendBasicBlockInContext(L->c, fn, "entry"));
    LLVMValueRef r, q;
    payne_hanek(L, LLVMGetParam(fn, 0), &r, &q);
    LLVMValueRef agg = LLVMGetUndef(rt);
    agg = LLVMBuildInsertValue(L->b, agg, r, 0, "");
    agg = LLVMBuildInsertValue(L->b, agg, q, 1, "");
    LLVMBuildRet(L->b, agg);
    LLVMDisposeBuilder(L->b);
    L->b = saved;
    return fn;
}

static LLVMValueRef sin_cos(TbLower *L, LLVMValueRef x, bool cosine) {
    LLVMBuilderRef b = L->b;
    LLVMValueRef ax = intr1(L, "llvm.fabs", x);
    /* Cody-Waite by pi/2 */
    LLVMValueRef j = intr1(L, "llvm.rint", LLVMBuildFMul(b, x, fconst(L, x, TB_TWO_OVER_PI_F), ""));
    LLVMValueRef nj = LLVMBuildFNeg(b, j, "");
    LLVMValueRef r = ffma(L, nj, fconst(L, x, TB_PIO2_C1), x);
    r = ffma(L, nj, fconst(L, x, TB_PIO2_C2), r);
    r = ffma(L, nj, fconst(L, x, TB_PIO2_C3), r);
    LLVMTypeRef ovl[2] = {L->i32, L->f32};
    LLVMValueRef q = tb_call_intr(L, "llvm.fptosi.sat", ovl, 2, &j, 1);
    /* Payne-Hanek when |x| > 2^17 or x is inf/nan (fixed below) */
    LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealUGT, ax, fconst(L, x, TB_SINCOS_CW_LIMIT), "");
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(b);
    LLVMBasicBlockRef slow = LLVMAppendBasicBlockInContext(L->c, L->fn, "sincos.big");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(L->c, L->fn, "sincos.end");
    LLVMBuildCondBr(b, big, slow, join);
    LLVMPositionBuilderAtEnd(b, slow);
    LLVMTypeRef ft;
    LLVMValueRef fn = payne_hanek_fn(L, &ft);
    LLVMValueRef res = LLVMBuildCall2(b, ft, fn, &x, 1, "");
    LLVMValueRef rs = LLVMBuildExtractValue(b, res, 0, ""), qs = LLVMBuildExtractValue(b, res, 1, "");
    LLVMBasicBlockRef slow_end = LLVMGetInsertBlock(b);
    LLVMBuildBr(b, join);
    LLVMPositionBuilderAtEnd(b, join);
    LLVMValueRef rphi = LLVMBuildPhi(b, L->f32, ""), qphi = LLVMBuildPhi(b, L->i32, "");
    LLVMValueRef rin[2] = {r, rs}, qin[2] = {q, qs};
    LLVMBasicBlockRef from[2] = {pre, slow_end};
    LLVMAddIncoming(rphi, rin, from, 2);
    LLVMAddIncoming(qphi, qin, from, 2);
    r = rphi;
    q = qphi;
    /* polynomials on [-pi/4, pi/4] */
    LLVMValueRef r2 = LLVMBuildFMul(b, r, r, "");
    LLVMValueRef ps = fconst(L, x, tb_sin_coef[TB_SIN_NCOEF - 1]);
    for (int i = TB_SIN_NCOEF - 2; i >= 0; i--) ps = ffma(L, ps, r2, fconst(L, x, tb_sin_coef[i]));
    LLVMValueRef sn = ffma(L, LLVMBuildFMul(b, r, r2, ""), ps, r);
    LLVMValueRef pc = fconst(L, x, tb_cos_coef[TB_COS_NCOEF - 1]);
    for (int i = TB_COS_NCOEF - 2; i >= 0; i--) pc = ffma(L, pc, r2, fconst(L, x, tb_cos_coef[i]));
    LLVMValueRef cs = ffma(L, r2, pc, fconst(L, x, 1.0));
    if (cosine) q = LLVMBuildAdd(b, q, c32(L, 1), "");
    LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, c32(L, 1), ""), c32(L, 0), "");
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, c32(L, 2), ""), c32(L, 0), "");
    LLVMValueRef y = LLVMBuildSelect(b, odd, cs, sn, "");
    y = LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, y, ""), y, "");
    /* inf and nan give nan */
    LLVMValueRef special = LLVMBuildFCmp(b, LLVMRealUEQ, ax, fconst(L, x, INFINITY), "");
    special = LLVMBuildOr(b, special, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), "");
    return LLVMBuildSelect(b, special, LLVMBuildFSub(b, x, x, ""), y, "");
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

/* ---- f64 math: range reduction and polynomials in f64 (no approximate hardware
 * instructions exist for f64).  Accuracy: exp/exp2/log/log2 within a few ulp; sin/cos a few
 * ulp for |x| < 1e6 (3-part Cody-Waite by pi/2); tanh and sigmoid from exp (series near 0
 * for tanh); erf: Taylor series below 2.5 and erfc's continued fraction above (absolute
 * error ~1e-13). ---- */

static LLVMValueRef d(TbLower *L, double v) { return LLVMConstReal(L->f64, v); }
static LLVMValueRef dfma(TbLower *L, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
    LLVMValueRef args[3] = {a, b, c};
    LLVMTypeRef t = L->f64;
    return tb_call_intr(L, "llvm.fma", &t, 1, args, 3);
}
static LLVMValueRef dsel(TbLower *L, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(L->b, c, a, b, "");
}
static LLVMValueRef dcmp(TbLower *L, LLVMRealPredicate p, LLVMValueRef a, double b) {
    return LLVMBuildFCmp(L->b, p, a, d(L, b), "");
}
/* Horner: c[0] + r*(c[1] + r*(...)) */
static LLVMValueRef horner(TbLower *L, LLVMValueRef r, const double *c, int n) {
    LLVMValueRef p = d(L, c[n - 1]);
    for (int i = n - 2; i >= 0; i--) p = dfma(L, p, r, d(L, c[i]));
    return p;
}
/* 2^k for an integer-valued double k in [-1100, 1100], as two normal factors. */
static LLVMValueRef scale2(TbLower *L, LLVMValueRef p, LLVMValueRef k) {
    LLVMTypeRef ovl[2] = {L->i64, L->f64};
    LLVMValueRef ki = tb_call_intr(L, "llvm.fptosi.sat", ovl, 2, &k, 1);
    LLVMTypeRef it = L->i64;
    LLVMValueRef mm[2] = {ki, LLVMConstInt(L->i64, (unsigned long long)-1100, 1)};
    ki = tb_call_intr(L, "llvm.smax", &it, 1, mm, 2);
    mm[0] = ki;
    mm[1] = LLVMConstInt(L->i64, 1100, 1);
    ki = tb_call_intr(L, "llvm.smin", &it, 1, mm, 2);
    LLVMValueRef k1 = LLVMBuildSDiv(L->b, ki, LLVMConstInt(L->i64, 2, 0), "");
    LLVMValueRef k2 = LLVMBuildSub(L->b, ki, k1, "");
    LLVMValueRef bias = LLVMConstInt(L->i64, 1023, 0), sh = LLVMConstInt(L->i64, 52, 0);
    LLVMValueRef f1 = LLVMBuildBitCast(L->b, LLVMBuildShl(L->b, LLVMBuildAdd(L->b, k1, bias, ""), sh, ""), L->f64, "");
    LLVMValueRef f2 = LLVMBuildBitCast(L->b, LLVMBuildShl(L->b, LLVMBuildAdd(L->b, k2, bias, ""), sh, ""), L->f64, "");
    return LLVMBuildFMul(L->b, LLVMBuildFMul(L->b, p, f1, ""), f2, "");
}
static const double exp_taylor[14] = {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                                      1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800,
                                      1.0 / 479001600, 1.0 / 6227020800.0};
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10

/* e^(k ln2 + r) for |r| <= ln2/2, with the limits and NaN of x */
static LLVMValueRef exp_tail(TbLower *L, LLVMValueRef x, LLVMValueRef k, LLVMValueRef r, double hi, double lo) {
    LLVMValueRef y = scale2(L, horner(L, r, exp_taylor, 14), k);
    y = dsel(L, dcmp(L, LLVMRealOGT, x, hi), d(L, INFINITY), y);
    y = dsel(L, dcmp(L, LLVMRealOLT, x, lo), d(L, 0.0), y);
    return dsel(L, LLVMBuildFCmp(L->b, LLVMRealUNO, x, x, ""), x, y);
}
static LLVMValueRef exp64(TbLower *L, LLVMValueRef x) {
    LLVMValueRef k = intr1(L, "llvm.rint", LLVMBuildFMul(L->b, x, d(L, 1.4426950408889634), ""));
    LLVMValueRef nk = LLVMBuildFNeg(L->b, k, "");
    LLVMValueRef r = dfma(L, nk, d(L, LN2_HI), x);
    r = dfma(L, nk, d(L, LN2_LO), r);
    return exp_tail(L, x, k, r, 709.782712893384, -745.2);
}
static LLVMValueRef exp2_64(TbLower *L, LLVMValueRef x) {
    LLVMValueRef k = intr1(L, "llvm.rint", x);
    LLVMValueRef f = LLVMBuildFSub(L->b, x, k, ""); /* exact */
    LLVMValueRef r = dfma(L, f, d(L, LN2_HI), LLVMBuildFMul(L->b, f, d(L, LN2_LO), ""));
    return exp_tail(L, x, k, r, 1024.0, -1075.0);
}
/* log(m) for m in [sqrt(1/2), sqrt(2)) by 2 atanh((m-1)/(m+1)); e the binary exponent. */
static void log_parts(TbLower *L, LLVMValueRef x, LLVMValueRef *e, LLVMValueRef *lm) {
    LLVMValueRef tiny = dcmp(L, LLVMRealOLT, x, 2.2250738585072014e-308);
    LLVMValueRef xs = dsel(L, tiny, LLVMBuildFMul(L->b, x, d(L, 18014398509481984.0), ""), x); /* 2^54 */
    LLVMValueRef bits = LLVMBuildBitCast(L->b, xs, L->i64, "");
    LLVMValueRef ex = LLVMBuildSub(L->b, LLVMBuildLShr(L->b, bits, LLVMConstInt(L->i64, 52, 0), ""), LLVMConstInt(L->i64, 1023, 0), "");
    LLVMValueRef mb = LLVMBuildOr(L->b, LLVMBuildAnd(L->b, bits, LLVMConstInt(L->i64, (1ull << 52) - 1, 0), ""),
                                  LLVMConstInt(L->i64, 1023ull << 52, 0), "");
    LLVMValueRef m = LLVMBuildBitCast(L->b, mb, L->f64, "");
    LLVMValueRef big = dcmp(L, LLVMRealOGT, m, 1.4142135623730951);
    m = dsel(L, big, LLVMBuildFMul(L->b, m, d(L, 0.5), ""), m);
    LLVMValueRef ef = LLVMBuildSIToFP(L->b, ex, L->f64, "");
    ef = LLVMBuildFAdd(L->b, ef, dsel(L, big, d(L, 1.0), d(L, 0.0)), "");
    ef = LLVMBuildFSub(L->b, ef, dsel(L, tiny, d(L, 54.0), d(L, 0.0)), "");
    LLVMValueRef f = LLVMBuildFDiv(L->b, LLVMBuildFSub(L->b, m, d(L, 1.0), ""), LLVMBuildFAdd(L->b, m, d(L, 1.0), ""), "");
    LLVMValueRef s2 = LLVMBuildFMul(L->b, f, f, "");
    double c[12];
    for (int i = 0; i < 12; i++) c[i] = 1.0 / (2 * i + 1);
    *lm = LLVMBuildFMul(L->b, LLVMBuildFMul(L->b, d(L, 2.0), f, ""), horner(L, s2, c, 12), "");
    *e = ef;
}
static LLVMValueRef log_limits(TbLower *L, LLVMValueRef x, LLVMValueRef y) {
    y = dsel(L, dcmp(L, LLVMRealOEQ, x, 0.0), d(L, -INFINITY), y);
    y = dsel(L, dcmp(L, LLVMRealOLT, x, 0.0), d(L, NAN), y);
    y = dsel(L, dcmp(L, LLVMRealOEQ, x, INFINITY), x, y);
    return dsel(L, LLVMBuildFCmp(L->b, LLVMRealUNO, x, x, ""), x, y);
}
static LLVMValueRef log64(TbLower *L, LLVMValueRef x, bool base2) {
    LLVMValueRef e, lm;
    log_parts(L, x, &e, &lm);
    LLVMValueRef y = base2 ? dfma(L, lm, d(L, 1.4426950408889634), e)
                           : dfma(L, e, d(L, LN2_HI), dfma(L, e, d(L, LN2_LO), lm));
    return log_limits(L, x, y);
}
static LLVMValueRef sincos64(TbLower *L, LLVMValueRef x, bool cosine) {
    LLVMValueRef k = intr1(L, "llvm.rint", LLVMBuildFMul(L->b, x, d(L, 0.63661977236758134), ""));
    LLVMValueRef nk = LLVMBuildFNeg(L->b, k, "");
    LLVMValueRef r = dfma(L, nk, d(L, 1.57079632673412561417e+00), x);
    r = dfma(L, nk, d(L, 6.07710050630396597660e-11), r);
    r = dfma(L, nk, d(L, 2.02226624871116645580e-21), r);
    LLVMValueRef r2 = LLVMBuildFMul(L->b, r, r, "");
    double sc[10], cc[11];
    double f = 1;
    for (int i = 0; i < 10; i++) { /* sin: r * sum (-1)^i r^2i / (2i+1)! */
        if (i) f *= (double)(2 * i) * (2 * i + 1);
        sc[i] = (i & 1 ? -1.0 : 1.0) / f;
    }
    f = 1;
    for (int i = 0; i < 11; i++) {
        if (i) f *= (double)(2 * i - 1) * (2 * i);
        cc[i] = (i & 1 ? -1.0 : 1.0) / f;
    }
    LLVMValueRef sn = LLVMBuildFMul(L->b, r, horner(L, r2, sc, 10), "");
    LLVMValueRef cs = horner(L, r2, cc, 11);
    LLVMTypeRef ovl[2] = {L->i64, L->f64};
    LLVMValueRef q = LLVMBuildAnd(L->b, tb_call_intr(L, "llvm.fptosi.sat", ovl, 2, &k, 1), LLVMConstInt(L->i64, 3, 0), "");
    if (cosine) q = LLVMBuildAnd(L->b, LLVMBuildAdd(L->b, q, LLVMConstInt(L->i64, 1, 0), ""), LLVMConstInt(L->i64, 3, 0), "");
    /* quadrant q: sin(x) = sin r, cos r, -sin r, -cos r; cos(x) = sin(x + pi/2) */
    LLVMValueRef odd = LLVMBuildTrunc(L->b, q, L->i1, "");
    LLVMValueRef neg = LLVMBuildICmp(L->b, LLVMIntUGE, q, LLVMConstInt(L->i64, 2, 0), "");
    LLVMValueRef y = dsel(L, odd, cs, sn);
    y = dsel(L, neg, LLVMBuildFNeg(L->b, y, ""), y);
    return dsel(L, dcmp(L, LLVMRealUEQ, intr1(L, "llvm.fabs", x), INFINITY), d(L, NAN), y);
}
static LLVMValueRef tanh64(TbLower *L, LLVMValueRef x) {
    LLVMValueRef ax = intr1(L, "llvm.fabs", x);
    LLVMValueRef t = exp64(L, LLVMBuildFMul(L->b, ax, d(L, 2.0), ""));
    LLVMValueRef y = LLVMBuildFSub(L->b, d(L, 1.0), LLVMBuildFDiv(L->b, d(L, 2.0), LLVMBuildFAdd(L->b, t, d(L, 1.0), ""), ""), "");
    /* near 0: the series, x (1 - x^2/3 + 2x^4/15 - ...) */
    static const double c[8] = {1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835, -1382.0 / 155925,
                                21844.0 / 6081075, -929569.0 / 638512875};
    LLVMValueRef small = LLVMBuildFMul(L->b, ax, horner(L, LLVMBuildFMul(L->b, ax, ax, ""), c, 8), "");
    y = dsel(L, dcmp(L, LLVMRealOLT, ax, 0.125), small, y);
    y = dsel(L, dcmp(L, LLVMRealOGT, ax, 40.0), d(L, 1.0), y);
    LLVMValueRef args[2] = {y, x};
    LLVMTypeRef ft = L->f64;
    return tb_call_intr(L, "llvm.copysign", &ft, 1, args, 2);
}
static LLVMValueRef erf64(TbLower *L, LLVMValueRef x) {
    LLVMValueRef ax = intr1(L, "llvm.fabs", x);
    LLVMValueRef x2 = LLVMBuildFMul(L->b, ax, ax, "");
    /* erf = 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)) */
    double c[60];
    double f = 1;
    for (int n = 0; n < 60; n++) {
        if (n) f *= n;
        c[n] = (n & 1 ? -1.0 : 1.0) / (f * (2 * n + 1));
    }
    LLVMValueRef taylor = LLVMBuildFMul(L->b, LLVMBuildFMul(L->b, ax, horner(L, x2, c, 60), ""), d(L, 1.1283791670955126), "");
    /* erfc = e^-x^2 / sqrt(pi) / (x + 1/2 / (x + 1 / (x + 3/2 / (x + ...)))) */
    LLVMValueRef cf = ax;
    for (int k = 80; k >= 1; k--) cf = LLVMBuildFAdd(L->b, ax, LLVMBuildFDiv(L->b, d(L, k * 0.5), cf, ""), "");
    LLVMValueRef erfc = LLVMBuildFDiv(L->b, LLVMBuildFMul(L->b, exp64(L, LLVMBuildFNeg(L->b, x2, "")), d(L, 0.5641895835477563), ""), cf, "");
    LLVMValueRef y = dsel(L, dcmp(L, LLVMRealOLT, ax, 2.5), taylor, LLVMBuildFSub(L->b, d(L, 1.0), erfc, ""));
    y = dsel(L, dcmp(L, LLVMRealOGE, ax, 6.0), d(L, 1.0), y);
    y = dsel(L, LLVMBuildFCmp(L->b, LLVMRealUNO, x, x, ""), x, y);
    LLVMValueRef args[2] = {y, x};
    LLVMTypeRef ft = L->f64;
    return tb_call_intr(L, "llvm.copysign", &ft, 1, args, 2);
}

static LLVMValueRef math_f64(TbLower *L, TirOpcode code, LLVMValueRef x, const TirOp *op) {
    switch (code) {
    case TIR_OP_SQRT: return intr1(L, "llvm.sqrt", x);
    case TIR_OP_RSQRT: return LLVMBuildFDiv(L->b, fconst(L, x, 1.0), intr1(L, "llvm.sqrt", x), "");
    case TIR_OP_FLOOR: return intr1(L, "llvm.floor", x);
    case TIR_OP_CEIL: return intr1(L, "llvm.ceil", x);
    case TIR_OP_EXP: return exp64(L, x);
    case TIR_OP_EXP2: return exp2_64(L, x);
    case TIR_OP_LOG: return log64(L, x, false);
    case TIR_OP_LOG2: return log64(L, x, true);
    case TIR_OP_SIN: return sincos64(L, x, false);
    case TIR_OP_COS: return sincos64(L, x, true);
    case TIR_OP_TANH: return tanh64(L, x);
    case TIR_OP_SIGMOID:
        return LLVMBuildFDiv(L->b, d(L, 1.0), LLVMBuildFAdd(L->b, d(L, 1.0), exp64(L, LLVMBuildFNeg(L->b, x, "")), ""), "");
    case TIR_OP_ERF: return erf64(L, x);
    default:
        tb_error(L, op, "internal: '%s' is not an f64 math op", tir_op_info[code].name);
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

/* ---- address arithmetic in affine form (TbVal.ab/ao) ----
 * add, sub and multiplication by a constant keep integer tiles affine exactly (they are
 * ring operations in the wrapping type).  addptr turns an affine offset into one base
 * pointer per thread plus byte offsets: exact for 64-bit offsets; for i32 offsets it
 * assumes that base + offset does not overflow i32 within one thread's elements (the
 * offsets differ by less than the tile's size; a program whose i32 index expression
 * wraps addresses 2^31 elements away in the interpreter as well). */
static LLVMValueRef iconst(LLVMTypeRef t, int64_t v) { return LLVMConstInt(t, (unsigned long long)v, 1); }

static bool lower_affine(TbLower *L, TirOp *op, TbVal **o, int n) {
    TirValue *r = op->res[0];
    if (op->nopnd != 2 || n < 2) return false;
    LLVMValueRef ab[2];
    const int64_t *ao[2];
    for (int k = 0; k < 2; k++)
        if (!tb_affine(L, o[k], n, &ab[k], &ao[k])) return false;
    int64_t *ro = tir_alloc(L->m->arena, (size_t)n * sizeof *ro);
    LLVMValueRef rb;
    LLVMValueRef *e = tb_elems(L, n);
    switch ((TirOpcode)op->code) {
    case TIR_OP_ADD:
    case TIR_OP_SUB:
    case TIR_OP_MUL: {
        if (r->ty.ptr || !tir_scalar_is_int((TirScalar)r->ty.elem) || r->ty.elem == TIR_I1) return false;
        bool add = op->code == TIR_OP_ADD;
        if (op->code == TIR_OP_MUL) {
            /* one side a constant splat: scale the other */
            int c = LLVMIsAConstantInt(ab[1]) && !o[1]->ab ? 1 : LLVMIsAConstantInt(ab[0]) && !o[0]->ab ? 0 : -1;
            if (c < 0) return false;
            for (int i = 0; i < n; i++)
                if (ao[c][i]) return false;
            int64_t f = LLVMConstIntGetSExtValue(ab[c]);
            rb = LLVMBuildMul(L->b, ab[1 - c], ab[c], "");
            for (int i = 0; i < n; i++) ro[i] = (int64_t)((uint64_t)ao[1 - c][i] * (uint64_t)f);
        } else {
            rb = add ? LLVMBuildAdd(L->b, ab[0], ab[1], "") : LLVMBuildSub(L->b, ab[0], ab[1], "");
            for (int i = 0; i < n; i++)
                ro[i] = (int64_t)(add ? (uint64_t)ao[0][i] + (uint64_t)ao[1][i] : (uint64_t)ao[0][i] - (uint64_t)ao[1][i]);
        }
        LLVMTypeRef t = LLVMTypeOf(rb);
        for (int i = 0; i < n; i++) e[i] = ro[i] ? LLVMBuildAdd(L->b, rb, iconst(t, ro[i]), "") : rb;
        break;
    }
    case TIR_OP_ADDPTR: {
        TirScalar os = (TirScalar)op->opnd[1]->ty.elem;
        int bits = tir_scalar_bits(os);
        bool wide = bits == 64;
        if (!(wide || (os == TIR_I32))) return false;
        TirScalar ps = (TirScalar)op->opnd[0]->ty.elem;
        int64_t eb = ps == TIR_I1 ? 1 : tir_scalar_bytes(ps); /* bools are bytes in memory */
        for (int i = 0; i < n; i++) {
            if (!wide && (ao[1][i] > (1 << 24) || ao[1][i] < -(1 << 24))) return false;
            ro[i] = (int64_t)((uint64_t)ao[0][i] + (uint64_t)ao[1][i] * (uint64_t)eb);
        }
        LLVMValueRef off = ab[1];
        if (!wide) off = LLVMBuildSExt(L->b, off, L->i64, "");
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

/* Elements of a comparison proven equal (aligned groups along the fastest dimension
 * inside one thread's run: the cmp's `const` attribute, which the layout pass records
 * from the axis analysis) share the first one's compare: fewer predicates live at
 * once.  leader[i] is the element whose value element i takes. */
static int *cmp_groups(TbLower *L, const TirOp *op, int n) {
    const TirValue *r = op->res[0];
    if (!tir_type_is_tile(r->ty)) return NULL;
    TbView v;
    if (!tb_view(L, r->ty, &v, NULL) || v.total != n) return NULL;
    int d0 = v.order[0];
    int64_t c = op->attr.constancy[d0];
    int spt = tb_view_spt(&v, d0);
    if (c > spt) c = spt;
    if (c > v.n[d0]) c = v.n[d0];
    if (c < 2 || (c & (c - 1)) || spt % c) return NULL;
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
    if (t.ptr || (s != TIR_I32 && s != TIR_I64)) return false;
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
    if (!x->ab || x->n != n || !tb_uniform(lim_v)) return false;
    LLVMTypeRef it = LLVMTypeOf(x->ab);
    if (LLVMTypeOf(lim_v->e[0]) != it) return false;
    LLVMValueRef args[2] = {lim_v->e[0], x->ab};
    LLVMValueRef lim = tb_call_intr(L, "llvm.ssub.sat", &it, 1, args, 2);
    int64_t *lo = tir_alloc(L->m->arena, (size_t)n * sizeof *lo);
    for (int i = 0; i < n; i++) lo[i] = x->ao[lead ? lead[i] : i] - (le ? 1 : 0);
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
    if (op->res[0]->ty.ptr || !tir_scalar_is_float(s) || s == TIR_F64) return false;
    LLVMValueRef *e = tb_elems(L, n);
    bool uni = tb_uniform(o[1]);
    LLVMValueRef rcp = NULL;
    if (uni) rcp = LLVMBuildFDiv(L->b, LLVMConstReal(L->f32, 1.0), widen(L, o[1]->e[0], s, op), "");
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
    if (lower_affine(L, op, o, n)) return;
    if (op->code == TIR_OP_DIV && n > 1 && lower_fdiv(L, op, o, n)) return;
    /* Operands the same in every element (splats, per-thread scalars): one computation. */
    bool uniform = n > 1;
    for (int k = 0; k < op->nopnd && k < 3; k++) uniform = uniform && tb_uniform(o[k]);
    int *lead = op->code == TIR_OP_CMP && n > 1 ? cmp_groups(L, op, n) : NULL;
    if (op->code == TIR_OP_CMP && n > 1 && !uniform && lower_cmp_limit(L, op, o, n, lead)) return;
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
