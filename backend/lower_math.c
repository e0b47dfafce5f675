/* The math builtins: the same operations in the same order as ir/fmath.c, which the
 * interpreter runs and tests/math measures against libm (constants: ir/math_consts.h).  Only
 * IEEE-exact operations are emitted (fma, +, -, *, div.rn, sqrt.rn, rint, integer work on
 * the bits; no contraction flags), so the GPU and the interpreter give the same bits.
 * f16/bf16/f8 compute in f32 and round once (lower_elem.c widens and narrows). */
#include "tb_internal.h"
#include "math_consts.h"

#include <math.h>

static LLVMValueRef c32(TbLower *L, uint32_t v) {
    return LLVMConstInt(L->i32, v, 0);
}
static LLVMValueRef intr1(TbLower *L, const char *name, LLVMValueRef x) {
    LLVMTypeRef t = LLVMTypeOf(x);
    return tb_call_intr(L, name, &t, 1, &x, 1);
}
static LLVMValueRef fconst(TbLower *L, LLVMValueRef like, double v) {
    return LLVMConstReal(LLVMTypeOf(like), v);
}

/* sin/cos of f32 (the algorithm and its constants: ir/math_consts.h; the same steps in
 * C are ir/fmath.c's, measured against libm by tests/math: <= 1.5 ulp over the range).
 * The Cody-Waite reduction is straight-line; Payne-Hanek runs in a branch taken only by
 * elements with |x| > 2^17 (or inf/nan), so the common case pays one compare. */
static LLVMValueRef ffma(TbLower *L, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
    LLVMValueRef args[3] = {a, b, c};
    LLVMTypeRef t = LLVMTypeOf(a);
    return tb_call_intr(L, "llvm.fma", &t, 1, args, 3);
}
static LLVMValueRef c64(TbLower *L, uint64_t v) {
    return LLVMConstInt(L->i64, v, 0);
}

/* x * 2/pi mod 4 for |x| > 2^17: *r the remainder in radians, *q the quadrant (i32) */
static void payne_hanek(TbLower *L, LLVMValueRef x, LLVMValueRef *r, LLVMValueRef *q) {
    LLVMBuilderRef b = L->b;
    LLVMValueRef bits = LLVMBuildBitCast(b, x, L->i32, "");
    LLVMValueRef e =
        LLVMBuildSub(b, LLVMBuildAnd(b, LLVMBuildLShr(b, bits, c32(L, 23), ""), c32(L, 0xff), ""), c32(L, 150), "");
    LLVMValueRef m =
        LLVMBuildZExt(b, LLVMBuildOr(b, LLVMBuildAnd(b, bits, c32(L, 0x7fffff), ""), c32(L, 0x800000), ""), L->i64, "");
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
    if (fn)
        return fn;
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
    for (int i = TB_SIN_NCOEF - 2; i >= 0; i--)
        ps = ffma(L, ps, r2, fconst(L, x, tb_sin_coef[i]));
    LLVMValueRef sn = ffma(L, LLVMBuildFMul(b, r, r2, ""), ps, r);
    LLVMValueRef pc = fconst(L, x, tb_cos_coef[TB_COS_NCOEF - 1]);
    for (int i = TB_COS_NCOEF - 2; i >= 0; i--)
        pc = ffma(L, pc, r2, fconst(L, x, tb_cos_coef[i]));
    LLVMValueRef cs = ffma(L, r2, pc, fconst(L, x, 1.0));
    if (cosine)
        q = LLVMBuildAdd(b, q, c32(L, 1), "");
    LLVMValueRef odd = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, c32(L, 1), ""), c32(L, 0), "");
    LLVMValueRef neg = LLVMBuildICmp(b, LLVMIntNE, LLVMBuildAnd(b, q, c32(L, 2), ""), c32(L, 0), "");
    LLVMValueRef y = LLVMBuildSelect(b, odd, cs, sn, "");
    y = LLVMBuildSelect(b, neg, LLVMBuildFNeg(b, y, ""), y, "");
    /* inf and nan give nan */
    LLVMValueRef special = LLVMBuildFCmp(b, LLVMRealUEQ, ax, fconst(L, x, INFINITY), "");
    special = LLVMBuildOr(b, special, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), "");
    return LLVMBuildSelect(b, special, LLVMBuildFSub(b, x, x, ""), y, "");
}

/* ---- f32: ir/fmath.c step for step ---- */

static LLVMValueRef F(TbLower *L, float v) {
    return LLVMConstReal(L->f32, v);
}
static LLVMValueRef fmul(TbLower *L, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFMul(L->b, a, b, "");
}
static LLVMValueRef fadd(TbLower *L, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFAdd(L->b, a, b, "");
}
static LLVMValueRef fsub(TbLower *L, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFSub(L->b, a, b, "");
}
static LLVMValueRef fdiv(TbLower *L, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildFDiv(L->b, a, b, "");
}
static LLVMValueRef fneg(TbLower *L, LLVMValueRef a) {
    return LLVMBuildFNeg(L->b, a, "");
}
static LLVMValueRef sel(TbLower *L, LLVMValueRef c, LLVMValueRef a, LLVMValueRef b) {
    return LLVMBuildSelect(L->b, c, a, b, "");
}
static LLVMValueRef fcmp(TbLower *L, LLVMRealPredicate p, LLVMValueRef a, float b) {
    return LLVMBuildFCmp(L->b, p, a, F(L, b), "");
}
static LLVMValueRef isnan_(TbLower *L, LLVMValueRef x) {
    return LLVMBuildFCmp(L->b, LLVMRealUNO, x, x, "");
}
static LLVMValueRef copysign_(TbLower *L, LLVMValueRef y, LLVMValueRef x) {
    LLVMTypeRef ft = L->f32;
    LLVMValueRef args[2] = {y, x};
    return tb_call_intr(L, "llvm.copysign", &ft, 1, args, 2);
}
/* c[0] + u (c[1] + u (...)) */
static LLVMValueRef hornerf(TbLower *L, const float *c, int n, LLVMValueRef u) {
    LLVMValueRef p = F(L, c[n - 1]);
    for (int i = n - 2; i >= 0; i--)
        p = ffma(L, p, u, F(L, c[i]));
    return p;
}
/* k as an i32 from s = t + SHIFTER: the bits of s minus SHIFTER's (fmath.c's shifted_int) */
static LLVMValueRef shifted_int(TbLower *L, LLVMValueRef s) {
    return LLVMBuildSub(L->b, LLVMBuildBitCast(L->b, s, L->i32, ""), c32(L, TB_SHIFTER_BITS), "");
}
static LLVMValueRef pow2_bits(TbLower *L, LLVMValueRef k) {
    return LLVMBuildBitCast(L->b, LLVMBuildShl(L->b, LLVMBuildAdd(L->b, k, c32(L, 127), ""), c32(L, 23), ""), L->f32,
                            "");
}
/* y * 2^k (k an i32 in [-252, 254]): exact, then one rounding (fmath.c's scale2) */
static LLVMValueRef scale2f(TbLower *L, LLVMValueRef y, LLVMValueRef k) {
    LLVMValueRef k1 = LLVMBuildAShr(L->b, k, c32(L, 1), "");
    LLVMValueRef k2 = LLVMBuildSub(L->b, k, k1, "");
    return fmul(L, fmul(L, y, pow2_bits(L, k1)), pow2_bits(L, k2));
}
/* x clamped to [lo, hi], NaN passing: fmath.c's compare-selects, as min.NaN/max.NaN
 * (llvm.minimum/maximum propagate NaN; the bounds are not zeros, so the signed-zero rule
 * does not matter) */
static LLVMValueRef clampf_(TbLower *L, LLVMValueRef x, float lo, float hi) {
    LLVMTypeRef ft = L->f32;
    LLVMValueRef a[2] = {x, F(L, hi)};
    x = tb_call_intr(L, "llvm.minimum", &ft, 1, a, 2);
    LLVMValueRef b[2] = {x, F(L, lo)};
    return tb_call_intr(L, "llvm.maximum", &ft, 1, b, 2);
}

static LLVMValueRef exp_acc(TbLower *L, LLVMValueRef x) {
    x = clampf_(L, x, TB_EXP_LO, TB_EXP_HI);
    LLVMValueRef s = ffma(L, x, F(L, TB_LOG2E_F), F(L, TB_SHIFTER));
    LLVMValueRef nk = fneg(L, fsub(L, s, F(L, TB_SHIFTER)));
    LLVMValueRef r = ffma(L, nk, F(L, TB_LN2_HI), x);
    r = ffma(L, nk, F(L, TB_LN2_LO), r);
    LLVMValueRef y = ffma(L, hornerf(L, tb_exp_p, TB_EXP_P_N, r), r, F(L, 1.0f));
    return scale2f(L, y, shifted_int(L, s));
}
static LLVMValueRef exp2_acc(TbLower *L, LLVMValueRef x) {
    x = clampf_(L, x, -151.0f, 129.0f);
    LLVMValueRef s = fadd(L, x, F(L, TB_SHIFTER));
    LLVMValueRef f = fsub(L, x, fsub(L, s, F(L, TB_SHIFTER)));
    LLVMValueRef y = ffma(L, hornerf(L, tb_exp2_p, TB_EXP2_P_N, f), f, F(L, 1.0f));
    return scale2f(L, y, shifted_int(L, s));
}
static LLVMValueRef log1p_core(TbLower *L, LLVMValueRef x, LLVMValueRef *ef) {
    LLVMBuilderRef b = L->b;
    LLVMValueRef tiny = fcmp(L, LLVMRealOLT, x, 0x1p-126f);
    LLVMValueRef xs = sel(L, tiny, fmul(L, x, F(L, 0x1p23f)), x);
    LLVMValueRef bits = LLVMBuildBitCast(b, xs, L->i32, "");
    LLVMValueRef e =
        LLVMBuildSub(b, LLVMBuildAnd(b, LLVMBuildLShr(b, bits, c32(L, 23), ""), c32(L, 0xff), ""), c32(L, 127), "");
    LLVMValueRef m = LLVMBuildBitCast(
        b, LLVMBuildOr(b, LLVMBuildAnd(b, bits, c32(L, 0x7fffff), ""), c32(L, 0x3f800000), ""), L->f32, "");
    LLVMValueRef big = fcmp(L, LLVMRealOGT, m, TB_SQRT2_F);
    m = sel(L, big, fmul(L, m, F(L, 0.5f)), m);
    e = LLVMBuildAdd(b, e, sel(L, big, c32(L, 1), c32(L, 0)), "");
    e = LLVMBuildSub(b, e, sel(L, tiny, c32(L, 23), c32(L, 0)), "");
    LLVMValueRef f = fsub(L, m, F(L, 1.0f));
    *ef = LLVMBuildSIToFP(b, e, L->f32, "");
    return ffma(L, fmul(L, f, f), hornerf(L, tb_log_q, TB_LOG_Q_N, f), f);
}
static LLVMValueRef log_limits_f(TbLower *L, LLVMValueRef x, LLVMValueRef y) {
    y = sel(L, fcmp(L, LLVMRealOEQ, x, 0.0f), F(L, -INFINITY), y);
    y = sel(L, fcmp(L, LLVMRealOLT, x, 0.0f), F(L, NAN), y);
    y = sel(L, fcmp(L, LLVMRealOEQ, x, INFINITY), x, y);
    return sel(L, isnan_(L, x), x, y);
}
static LLVMValueRef log_acc(TbLower *L, LLVMValueRef x, bool base2) {
    LLVMValueRef e, l = log1p_core(L, x, &e);
    LLVMValueRef y = base2 ? ffma(L, l, F(L, TB_LOG2E_F), fadd(L, e, fmul(L, l, F(L, TB_LOG2E_LO))))
                           : ffma(L, e, F(L, TB_LN2_HI), ffma(L, e, F(L, TB_LN2_LO), l));
    return log_limits_f(L, x, y);
}
static LLVMValueRef tanh_f(TbLower *L, LLVMValueRef x, bool fast) {
    LLVMValueRef ax = intr1(L, "llvm.fabs", x);
    LLVMValueRef u = fmul(L, x, x);
    LLVMValueRef small = fast ? ffma(L, fmul(L, x, u), hornerf(L, tb_ftanh_p, TB_FTANH_P_N, u), x)
                              : ffma(L, fmul(L, x, u), hornerf(L, tb_tanh_p, TB_TANH_P_N, u), x);
    LLVMValueRef ax2 = fmul(L, ax, F(L, 2.0f));
    LLVMValueRef e = fast ? tb_math_fexp(L, ax2, false) : exp_acc(L, ax2);
    LLVMValueRef big = fsub(L, F(L, 1.0f), fdiv(L, F(L, 2.0f), fadd(L, e, F(L, 1.0f))));
    return copysign_(L, sel(L, fcmp(L, LLVMRealOLT, ax, TB_TANH_SMALL), small, big), x);
}
static LLVMValueRef sigmoid_acc(TbLower *L, LLVMValueRef x) {
    LLVMValueRef one = F(L, 1.0f);
    LLVMValueRef E = exp_acc(L, fneg(L, intr1(L, "llvm.fabs", x)));
    LLVMValueRef d = fadd(L, one, E);
    LLVMValueRef err = fsub(L, E, fsub(L, d, one));
    LLVMValueRef r = fdiv(L, one, d);
    LLVMValueRef N = sel(L, fcmp(L, LLVMRealOLT, x, 0.0f), E, one);
    LLVMValueRef y0 = fmul(L, N, r);
    LLVMValueRef res = fsub(L, ffma(L, fneg(L, y0), d, N), fmul(L, y0, err));
    return ffma(L, res, r, y0);
}
static LLVMValueRef erf_f(TbLower *L, LLVMValueRef x, bool fast) {
    LLVMValueRef ax = intr1(L, "llvm.fabs", x);
    LLVMValueRef u = fmul(L, x, x);
    LLVMValueRef small = fast ? ffma(L, x, hornerf(L, tb_ferf_r, TB_FERF_R_N, u), x)
                              : ffma(L, x, hornerf(L, tb_erf_r, TB_ERF_R_N, u), x);
    LLVMValueRef t = sel(L, fcmp(L, LLVMRealOGT, ax, TB_ERF_CLAMP), F(L, TB_ERF_CLAMP), ax);
    LLVMValueRef p = fast ? hornerf(L, tb_ferfc_lp, TB_FERFC_LP_N, t) : hornerf(L, tb_erfc_lp, TB_ERFC_LP_N, t);
    LLVMValueRef e = fast ? tb_math_fexp(L, p, false) : exp_acc(L, p);
    LLVMValueRef big = copysign_(L, fsub(L, F(L, 1.0f), e), x);
    return sel(L, fcmp(L, LLVMRealOLT, ax, TB_ERF_SMALL), small, big);
}

/* fast mode's 2^t (fmath.c's fast_pow2): a cubic, 2^k added to the exponent bits */
static LLVMValueRef fast_pow2(TbLower *L, LLVMValueRef x, LLVMValueRef t, LLVMValueRef s, LLVMValueRef f) {
    LLVMValueRef p = hornerf(L, tb_fexp2_p, TB_FEXP2_P_N, f);
    LLVMValueRef sh = LLVMBuildShl(L->b, shifted_int(L, s), c32(L, 23), "");
    LLVMValueRef y =
        LLVMBuildBitCast(L->b, LLVMBuildAdd(L->b, LLVMBuildBitCast(L->b, p, L->i32, ""), sh, ""), L->f32, "");
    y = sel(L, fcmp(L, LLVMRealOLT, t, -125.5f), F(L, 0.0f), y);
    y = sel(L, fcmp(L, LLVMRealOGE, t, 128.0f), F(L, INFINITY), y);
    return sel(L, isnan_(L, x), x, y);
}
LLVMValueRef tb_math_fexp(TbLower *L, LLVMValueRef x, bool base2) {
    LLVMValueRef t = base2 ? x : fmul(L, x, F(L, TB_LOG2E_F));
    LLVMValueRef s = fadd(L, clampf_(L, t, -126.0f, 128.0f), F(L, TB_SHIFTER));
    LLVMValueRef k = fsub(L, s, F(L, TB_SHIFTER));
    LLVMValueRef f = base2 ? fsub(L, x, k) : ffma(L, x, F(L, TB_LOG2E_F), fneg(L, k));
    return fast_pow2(L, x, t, s, f);
}

LLVMValueRef tb_math_f32(TbLower *L, TirOpcode code, LLVMValueRef x, bool fast, const TirOp *op) {
    LLVMValueRef one = F(L, 1.0f);
    switch (code) {
    case TIR_OP_EXP: return fast ? tb_math_fexp(L, x, false) : exp_acc(L, x);
    case TIR_OP_EXP2: return fast ? tb_math_fexp(L, x, true) : exp2_acc(L, x);
    case TIR_OP_LOG: return log_acc(L, x, false);
    case TIR_OP_LOG2: return log_acc(L, x, true);
    case TIR_OP_SQRT: return intr1(L, "llvm.sqrt", x);
    case TIR_OP_RSQRT: return fdiv(L, one, intr1(L, "llvm.sqrt", x));
    case TIR_OP_SIN: return sin_cos(L, x, false);
    case TIR_OP_COS: return sin_cos(L, x, true);
    case TIR_OP_TANH: return tanh_f(L, x, fast);
    case TIR_OP_SIGMOID:
        return fast ? fdiv(L, one, fadd(L, one, tb_math_fexp(L, fneg(L, x), false))) : sigmoid_acc(L, x);
    case TIR_OP_ERF: return erf_f(L, x, fast);
    case TIR_OP_FLOOR: return intr1(L, "llvm.floor", x);
    case TIR_OP_CEIL: return intr1(L, "llvm.ceil", x);
    default: tb_error(L, op, "internal: not a math op"); return x;
    }
}

/* ---- f64 math: range reduction and polynomials in f64 (no approximate hardware
 * instructions exist for f64), the same steps as ir/fmath.c's tir_m_*64; accuracy:
 * docs/language.md's table (sin/cos: |x| < 1e6, 3-part Cody-Waite by pi/2). ---- */

static LLVMValueRef d(TbLower *L, double v) {
    return LLVMConstReal(L->f64, v);
}
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
    for (int i = n - 2; i >= 0; i--)
        p = dfma(L, p, r, d(L, c[i]));
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
static const double exp_taylor[14] = {
    1.0,        1.0,         1.0 / 2,      1.0 / 6,       1.0 / 24,       1.0 / 120,       1.0 / 720,
    1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0};
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
    LLVMValueRef ex = LLVMBuildSub(L->b, LLVMBuildLShr(L->b, bits, LLVMConstInt(L->i64, 52, 0), ""),
                                   LLVMConstInt(L->i64, 1023, 0), "");
    LLVMValueRef mb = LLVMBuildOr(L->b, LLVMBuildAnd(L->b, bits, LLVMConstInt(L->i64, (1ull << 52) - 1, 0), ""),
                                  LLVMConstInt(L->i64, 1023ull << 52, 0), "");
    LLVMValueRef m = LLVMBuildBitCast(L->b, mb, L->f64, "");
    LLVMValueRef big = dcmp(L, LLVMRealOGT, m, 1.4142135623730951);
    m = dsel(L, big, LLVMBuildFMul(L->b, m, d(L, 0.5), ""), m);
    LLVMValueRef ef = LLVMBuildSIToFP(L->b, ex, L->f64, "");
    ef = LLVMBuildFAdd(L->b, ef, dsel(L, big, d(L, 1.0), d(L, 0.0)), "");
    ef = LLVMBuildFSub(L->b, ef, dsel(L, tiny, d(L, 54.0), d(L, 0.0)), "");
    LLVMValueRef f =
        LLVMBuildFDiv(L->b, LLVMBuildFSub(L->b, m, d(L, 1.0), ""), LLVMBuildFAdd(L->b, m, d(L, 1.0), ""), "");
    LLVMValueRef s2 = LLVMBuildFMul(L->b, f, f, "");
    double c[12];
    for (int i = 0; i < 12; i++)
        c[i] = 1.0 / (2 * i + 1);
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
    LLVMValueRef y =
        base2 ? dfma(L, lm, d(L, 1.4426950408889634), e) : dfma(L, e, d(L, LN2_HI), dfma(L, e, d(L, LN2_LO), lm));
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
        if (i)
            f *= (double)(2 * i) * (2 * i + 1);
        sc[i] = (i & 1 ? -1.0 : 1.0) / f;
    }
    f = 1;
    for (int i = 0; i < 11; i++) {
        if (i)
            f *= (double)(2 * i - 1) * (2 * i);
        cc[i] = (i & 1 ? -1.0 : 1.0) / f;
    }
    LLVMValueRef sn = LLVMBuildFMul(L->b, r, horner(L, r2, sc, 10), "");
    LLVMValueRef cs = horner(L, r2, cc, 11);
    LLVMTypeRef ovl[2] = {L->i64, L->f64};
    LLVMValueRef q =
        LLVMBuildAnd(L->b, tb_call_intr(L, "llvm.fptosi.sat", ovl, 2, &k, 1), LLVMConstInt(L->i64, 3, 0), "");
    if (cosine)
        q = LLVMBuildAnd(L->b, LLVMBuildAdd(L->b, q, LLVMConstInt(L->i64, 1, 0), ""), LLVMConstInt(L->i64, 3, 0), "");
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
    LLVMValueRef y =
        LLVMBuildFSub(L->b, d(L, 1.0), LLVMBuildFDiv(L->b, d(L, 2.0), LLVMBuildFAdd(L->b, t, d(L, 1.0), ""), ""), "");
    /* near 0: the series, x (1 - x^2/3 + 2x^4/15 - ...) */
    static const double c[8] = {1.0,         -1.0 / 3,         2.0 / 15,          -17.0 / 315,
                                62.0 / 2835, -1382.0 / 155925, 21844.0 / 6081075, -929569.0 / 638512875};
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
        if (n)
            f *= n;
        c[n] = (n & 1 ? -1.0 : 1.0) / (f * (2 * n + 1));
    }
    LLVMValueRef taylor =
        LLVMBuildFMul(L->b, LLVMBuildFMul(L->b, ax, horner(L, x2, c, 60), ""), d(L, 1.1283791670955126), "");
    /* erfc = e^-x^2 / sqrt(pi) / (x + 1/2 / (x + 1 / (x + 3/2 / (x + ...)))) */
    LLVMValueRef cf = ax;
    for (int k = 80; k >= 1; k--)
        cf = LLVMBuildFAdd(L->b, ax, LLVMBuildFDiv(L->b, d(L, k * 0.5), cf, ""), "");
    LLVMValueRef erfc = LLVMBuildFDiv(
        L->b, LLVMBuildFMul(L->b, exp64(L, LLVMBuildFNeg(L->b, x2, "")), d(L, 0.5641895835477563), ""), cf, "");
    LLVMValueRef y = dsel(L, dcmp(L, LLVMRealOLT, ax, 2.5), taylor, LLVMBuildFSub(L->b, d(L, 1.0), erfc, ""));
    y = dsel(L, dcmp(L, LLVMRealOGE, ax, 6.0), d(L, 1.0), y);
    y = dsel(L, LLVMBuildFCmp(L->b, LLVMRealUNO, x, x, ""), x, y);
    LLVMValueRef args[2] = {y, x};
    LLVMTypeRef ft = L->f64;
    return tb_call_intr(L, "llvm.copysign", &ft, 1, args, 2);
}

LLVMValueRef tb_math_f64(TbLower *L, TirOpcode code, LLVMValueRef x, const TirOp *op) {
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
        return LLVMBuildFDiv(L->b, d(L, 1.0), LLVMBuildFAdd(L->b, d(L, 1.0), exp64(L, LLVMBuildFNeg(L->b, x, "")), ""),
                             "");
    case TIR_OP_ERF: return erf64(L, x);
    default: tb_error(L, op, "internal: '%s' is not an f64 math op", tir_op_info[code].name); return x;
    }
}
