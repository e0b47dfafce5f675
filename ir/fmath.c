/* The math builtins, step for step as the GPU runs them (backend/lower_math.c emits the
 * same operations in the same order, with the constants of ir/math_consts.h), so
 * that the interpreter and the GPU give the same bits.  Only IEEE operations the GPU has
 * correctly rounded are used: +, -, *, /, fma, sqrt, rint, and integer work on the bits;
 * this file is compiled with -ffp-contract=off so that C does not fuse what PTX keeps apart.
 *
 * Accurate mode (the default): within 2 ulp of the correctly rounded result for normal
 * results, relative error near 0 and near 1 included; subnormal results are not flushed
 * (see each function).  Fast mode (`fast=true`): short polynomials whose error is below
 * half an f16 or bf16 ulp (docs/language.md has the measured table, from tests/math). */
#include "tmath.h"
#include "tir_internal.h"

#include "math_consts.h"

#include <math.h>
#include <string.h>

static uint32_t bits_of(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static float float_of(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* c[0] + u (c[1] + u (...)), one fma per step */
static float horner(const float *c, int n, float u) {
    float p = c[n - 1];
    for (int i = n - 2; i >= 0; i--)
        p = fmaf(p, u, c[i]);
    return p;
}

/* y * 2^k for y in [0.7, 1.5] and k in [-252, 254]: y * 2^k1 is exact (normal), the
 * second multiplication rounds once, into the subnormals or to inf where it must. */
static float scale2(float y, int k) {
    int k1 = k >> 1, k2 = k - k1; /* arithmetic shift, as the GPU's shr.s32 */
    return y * float_of((uint32_t)(k1 + 127) << 23) * float_of((uint32_t)(k2 + 127) << 23);
}

/* x clamped to [lo, hi]; NaN passes (the compare is false) */
static float clampf_(float x, float lo, float hi) {
    x = x > hi ? hi : x;
    return x < lo ? lo : x;
}

/* ---- accurate f32 ---------------------------------------------------------------------- */

/* k as an integer from s = t + SHIFTER (k = s - SHIFTER) */
static int shifted_int(float s) {
    return (int)(bits_of(s) - TB_SHIFTER_BITS);
}

/* e^x = 2^k e^r, k = x log2 e rounded to an integer (one fma with SHIFTER), r = x - k ln2
 * by two fma (ln2 = HI + LO); e^r = 1 + r P(r).  NaN flows through r.  Subnormal results:
 * y rounded once more by the scaling (within 1 ulp of the subnormal grid, never flushed). */
float tir_m_exp(float x) {
    x = clampf_(x, TB_EXP_LO, TB_EXP_HI);
    float s = fmaf(x, TB_LOG2E_F, TB_SHIFTER);
    float k = s - TB_SHIFTER;
    float r = fmaf(-k, TB_LN2_HI, x);
    r = fmaf(-k, TB_LN2_LO, r);
    float y = fmaf(horner(tb_exp_p, TB_EXP_P_N, r), r, 1.0f);
    return scale2(y, shifted_int(s));
}

/* 2^x = 2^k 2^f, k = x rounded to an integer, f = x - k exact; 2^f = 1 + f P(f) */
float tir_m_exp2(float x) {
    x = clampf_(x, -151.0f, 129.0f);
    float s = x + TB_SHIFTER;
    float f = x - (s - TB_SHIFTER);
    float y = fmaf(horner(tb_exp2_p, TB_EXP2_P_N, f), f, 1.0f);
    return scale2(y, shifted_int(s));
}

/* x = m 2^e, m in [sqrt(1/2), sqrt(2)) (subnormal x scaled by 2^23 first); f = m - 1
 * (exact); log(1 + f) = f + f^2 Q(f), so that near 1 the error is relative to f. */
static float log1p_core(float x, float *ef) {
    bool tiny = x < 0x1p-126f;
    float xs = tiny ? x * 0x1p23f : x;
    uint32_t b = bits_of(xs);
    int e = (int)((b >> 23) & 0xff) - 127;
    float m = float_of((b & 0x7fffffu) | 0x3f800000u);
    bool big = m > TB_SQRT2_F;
    m = big ? m * 0.5f : m;
    e = e + (big ? 1 : 0) - (tiny ? 23 : 0);
    float f = m - 1.0f;
    *ef = (float)e;
    return fmaf(f * f, horner(tb_log_q, TB_LOG_Q_N, f), f);
}
static float log_limits(float x, float y) {
    y = x == 0 ? -INFINITY : y;
    y = x < 0 ? NAN : y;
    y = x == INFINITY ? x : y;
    return x != x ? x : y;
}
float tir_m_log(float x) {
    float e;
    float l = log1p_core(x, &e);
    return log_limits(x, fmaf(e, TB_LN2_HI, fmaf(e, TB_LN2_LO, l)));
}
float tir_m_log2(float x) {
    float e;
    float l = log1p_core(x, &e);
    return log_limits(x, fmaf(l, TB_LOG2E_F, e + l * TB_LOG2E_LO));
}

/* |x| < 0.625: x + x^3 P(x^2); above, 1 - 2 / (e^2|x| + 1) with the sign of x (e^2|x| is
 * inf past 44: the result is exactly 1); the sign of x last, so tanh(-0) = -0.  Subnormal x:
 * tanh x = x. */
float tir_m_tanh(float x) {
    float ax = fabsf(x);
    float u = x * x;
    float small = fmaf(x * u, horner(tb_tanh_p, TB_TANH_P_N, u), x);
    float e = tir_m_exp(ax * 2.0f);
    float big = 1.0f - 2.0f / (e + 1.0f);
    return copysignf(ax < TB_TANH_SMALL ? small : big, x);
}

/* E = e^-|x| in (0, 1]; d = 1 + E and its rounding error (Fast2Sum); the quotient N / d
 * (N = 1 for x >= 0, E below) and one correction step, so that only E's error and the last
 * rounding remain.  Subnormal results (x < -87.3): E's, as for exp. */
float tir_m_sigmoid(float x) {
    float E = tir_m_exp(-fabsf(x));
    float d = 1.0f + E;
    float err = E - (d - 1.0f);
    float r = 1.0f / d;
    float N = x < 0 ? E : 1.0f;
    float y0 = N * r;
    float res = fmaf(-y0, d, N) - y0 * err;
    return fmaf(res, r, y0);
}

/* |x| < 0.875: x + x R(x^2); above, 1 - e^P(t), t = min(|x|, 4), with the sign of x.
 * Subnormal x: 1.128 x rounded once. */
float tir_m_erf(float x) {
    float ax = fabsf(x);
    float u = x * x;
    float small = fmaf(x, horner(tb_erf_r, TB_ERF_R_N, u), x);
    float t = ax > TB_ERF_CLAMP ? TB_ERF_CLAMP : ax;
    float big = copysignf(1.0f - tir_m_exp(horner(tb_erfc_lp, TB_ERFC_LP_N, t)), x);
    return ax < TB_ERF_SMALL ? small : big;
}

/* 1 / sqrt(x), both correctly rounded (<= 1 ulp together) */
float tir_m_rsqrt(float x) {
    return 1.0f / sqrtf(x);
}

/* sin/cos: the reduction and polynomials described in ir/math_consts.h */
static float sincos_reduce(float x, int *q) {
    float ax = fabsf(x);
    if (ax <= TB_SINCOS_CW_LIMIT) {
        float j = rintf(x * TB_TWO_OVER_PI_F);
        float r = fmaf(-j, TB_PIO2_C1, x);
        r = fmaf(-j, TB_PIO2_C2, r);
        r = fmaf(-j, TB_PIO2_C3, r);
        *q = (int)j & 3;
        return r;
    }
    /* Payne-Hanek: 96 bits of 2/pi from the window that matters, times the significand */
    uint32_t b = bits_of(x);
    int e = (int)((b >> 23) & 0xff) - 150;
    uint32_t m = (b & 0x7fffffu) | 0x800000u;
    int t0 = e + 30;
    int k = t0 >> 5, s = t0 & 31;
    uint32_t w[3];
    for (int i = 0; i < 3; i++) {
        uint64_t pair = ((uint64_t)tb_two_over_pi_bits[k + i] << 32) | tb_two_over_pi_bits[k + i + 1];
        w[i] = (uint32_t)((pair << s) >> 32);
    }
    uint64_t p0 = (uint64_t)m * w[0], p1 = (uint64_t)m * w[1], p2 = (uint64_t)m * w[2];
    uint64_t lo = p2 + (p1 << 32);
    uint64_t hi = p0 + (p1 >> 32) + (lo < p2);
    uint64_t u = (hi << 34) | (lo >> 30);
    int qq = (int)((hi >> 30) & 3) + (int)(u >> 63);
    float r = (float)((double)(int64_t)u * TB_PIO2_2M64);
    if (x < 0) {
        r = -r;
        qq = -qq;
    }
    *q = qq & 3;
    return r;
}
static float sincos_f(float x, int cosine) {
    if (isnan(x) || isinf(x))
        return x - x;
    int q;
    float r = sincos_reduce(x, &q);
    float r2 = r * r;
    float sn = fmaf(r * r2, horner(tb_sin_coef, TB_SIN_NCOEF, r2), r);
    float cs = fmaf(r2, horner(tb_cos_coef, TB_COS_NCOEF, r2), 1.0f);
    q = (q + cosine) & 3;
    float y = (q & 1) ? cs : sn;
    return (q & 2) ? -y : y;
}
float tir_m_sin(float x) {
    return sincos_f(x, 0);
}
float tir_m_cos(float x) {
    return sincos_f(x, 1);
}

/* ---- fast f32 -------------------------------------------------------------------------- */

/* 2^t from s = clamp(t) + SHIFTER (k = s - SHIFTER) and f ~ t - k in [-1/2, 1/2]: 2^f by a
 * cubic, k added to the exponent bits.  Results below 2^-125.5 flush to 0, 2^128 and above
 * give inf. */
static float fast_pow2(float x, float t, float s, float f) {
    float p = horner(tb_fexp2_p, TB_FEXP2_P_N, f);
    float y = float_of(bits_of(p) + ((uint32_t)shifted_int(s) << 23));
    y = t < -125.5f ? 0.0f : y;
    y = t >= 128.0f ? INFINITY : y;
    return x != x ? x : y;
}
/* t = x log2 e rounded; f = fma(x, log2 e, -k) keeps the product's low bits */
float tir_m_fexp(float x) {
    float t = x * TB_LOG2E_F;
    float s = clampf_(t, -126.0f, 128.0f) + TB_SHIFTER;
    return fast_pow2(x, t, s, fmaf(x, TB_LOG2E_F, -(s - TB_SHIFTER)));
}
float tir_m_fexp2(float x) {
    float s = clampf_(x, -126.0f, 128.0f) + TB_SHIFTER;
    return fast_pow2(x, x, s, x - (s - TB_SHIFTER));
}

/* 1 / (1 + e^-x) with the fast exp: e^-x = inf gives 0 */
float tir_m_fsigmoid(float x) {
    return 1.0f / (1.0f + tir_m_fexp(-x));
}

/* |x| < 0.625: x + x^3 P(x^2) (degree 2); above, 1 - 2 / (e^2|x| + 1) with the fast exp */
float tir_m_ftanh(float x) {
    float ax = fabsf(x);
    float u = x * x;
    float small = fmaf(x * u, horner(tb_ftanh_p, TB_FTANH_P_N, u), x);
    float big = 1.0f - 2.0f / (tir_m_fexp(ax * 2.0f) + 1.0f);
    return copysignf(ax < TB_TANH_SMALL ? small : big, x);
}

/* erf's two branches with shorter polynomials and the fast exp */
float tir_m_ferf(float x) {
    float ax = fabsf(x);
    float u = x * x;
    float small = fmaf(x, horner(tb_ferf_r, TB_FERF_R_N, u), x);
    float t = ax > TB_ERF_CLAMP ? TB_ERF_CLAMP : ax;
    float big = copysignf(1.0f - tir_m_fexp(horner(tb_ferfc_lp, TB_FERFC_LP_N, t)), x);
    return ax < TB_ERF_SMALL ? small : big;
}

float (*tir_m_f32(int code, bool fast))(float) {
    static const struct {
        int code;
        float (*acc)(float), (*fast)(float);
    } tab[] = {
        {TIR_OP_EXP, tir_m_exp, tir_m_fexp},    {TIR_OP_EXP2, tir_m_exp2, tir_m_fexp2},
        {TIR_OP_LOG, tir_m_log, tir_m_log},     {TIR_OP_LOG2, tir_m_log2, tir_m_log2},
        {TIR_OP_TANH, tir_m_tanh, tir_m_ftanh}, {TIR_OP_SIGMOID, tir_m_sigmoid, tir_m_fsigmoid},
        {TIR_OP_ERF, tir_m_erf, tir_m_ferf},    {TIR_OP_RSQRT, tir_m_rsqrt, tir_m_rsqrt},
        {TIR_OP_SIN, tir_m_sin, tir_m_sin},     {TIR_OP_COS, tir_m_cos, tir_m_cos},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i].code == code)
            return fast ? tab[i].fast : tab[i].acc;
    return NULL;
}

/* ---- f64: range reduction and polynomials in f64 (no approximate f64 hardware
 * instructions exist); the bounds are docs/language.md's table ---- */

static double horner64(const double *c, int n, double u) {
    double p = c[n - 1];
    for (int i = n - 2; i >= 0; i--)
        p = fma(p, u, c[i]);
    return p;
}
/* the GPU's fptosi.sat to i64 */
static int64_t to_i64(double k) {
    if (k != k)
        return 0;
    if (k >= 9223372036854775807.0)
        return INT64_MAX;
    if (k <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)k;
}
static double double_of(uint64_t u) {
    double x;
    memcpy(&x, &u, 8);
    return x;
}
/* p * 2^k, k clamped to [-1100, 1100], as two normal factors */
static double scale2_64(double p, double k) {
    int64_t ki = to_i64(k);
    ki = ki < -1100 ? -1100 : ki;
    ki = ki > 1100 ? 1100 : ki;
    int64_t k1 = ki / 2, k2 = ki - k1;
    return p * double_of((uint64_t)(k1 + 1023) << 52) * double_of((uint64_t)(k2 + 1023) << 52);
}
static const double exp_taylor[14] = {
    1.0,        1.0,         1.0 / 2,      1.0 / 6,       1.0 / 24,       1.0 / 120,       1.0 / 720,
    1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0};
#define LN2_HI64 6.93147180369123816490e-01
#define LN2_LO64 1.90821492927058770002e-10

static double exp_tail(double x, double k, double r, double hi, double lo) {
    double y = scale2_64(horner64(exp_taylor, 14, r), k);
    y = x > hi ? INFINITY : y;
    y = x < lo ? 0.0 : y;
    return x != x ? x : y;
}
double tir_m_exp64(double x) {
    double k = rint(x * 1.4426950408889634);
    double r = fma(-k, LN2_HI64, x);
    r = fma(-k, LN2_LO64, r);
    return exp_tail(x, k, r, 709.782712893384, -745.2);
}
double tir_m_exp2_64(double x) {
    double k = rint(x);
    double f = x - k;
    double r = fma(f, LN2_HI64, f * LN2_LO64);
    return exp_tail(x, k, r, 1024.0, -1075.0);
}
/* log(m) for m in [sqrt(1/2), sqrt(2)) by 2 atanh((m-1)/(m+1)); *e the binary exponent */
static double log_parts64(double x, double *e) {
    bool tiny = x < 2.2250738585072014e-308;
    double xs = tiny ? x * 18014398509481984.0 : x; /* 2^54 */
    uint64_t bits;
    memcpy(&bits, &xs, 8);
    int64_t ex = (int64_t)(bits >> 52) - 1023;
    double m = double_of((bits & ((1ull << 52) - 1)) | (1023ull << 52));
    bool big = m > 1.4142135623730951;
    m = big ? m * 0.5 : m;
    double ef = (double)ex;
    ef = ef + (big ? 1.0 : 0.0);
    ef = ef - (tiny ? 54.0 : 0.0);
    double f = (m - 1.0) / (m + 1.0);
    double s2 = f * f;
    double c[12];
    for (int i = 0; i < 12; i++)
        c[i] = 1.0 / (2 * i + 1);
    *e = ef;
    return 2.0 * f * horner64(c, 12, s2);
}
static double log_limits64(double x, double y) {
    y = x == 0.0 ? -INFINITY : y;
    y = x < 0.0 ? NAN : y;
    y = x == INFINITY ? x : y;
    return x != x ? x : y;
}
double tir_m_log64(double x) {
    double e, lm = log_parts64(x, &e);
    return log_limits64(x, fma(e, LN2_HI64, fma(e, LN2_LO64, lm)));
}
double tir_m_log2_64(double x) {
    double e, lm = log_parts64(x, &e);
    return log_limits64(x, fma(lm, 1.4426950408889634, e));
}
static double sincos64(double x, bool cosine) {
    double k = rint(x * 0.63661977236758134);
    double r = fma(-k, 1.57079632673412561417e+00, x);
    r = fma(-k, 6.07710050630396597660e-11, r);
    r = fma(-k, 2.02226624871116645580e-21, r);
    double r2 = r * r;
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
    double sn = r * horner64(sc, 10, r2);
    double cs = horner64(cc, 11, r2);
    int64_t q = to_i64(k) & 3;
    if (cosine)
        q = (q + 1) & 3;
    /* quadrant q: sin(x) = sin r, cos r, -sin r, -cos r; cos(x) = sin(x + pi/2) */
    double y = (q & 1) ? cs : sn;
    y = q >= 2 ? -y : y;
    double ax = fabs(x);
    return (ax != ax || ax == INFINITY) ? NAN : y;
}
double tir_m_sin64(double x) {
    return sincos64(x, false);
}
double tir_m_cos64(double x) {
    return sincos64(x, true);
}
double tir_m_tanh64(double x) {
    double ax = fabs(x);
    double t = tir_m_exp64(ax * 2.0);
    double y = 1.0 - 2.0 / (t + 1.0);
    /* near 0: the series, x (1 - x^2/3 + 2x^4/15 - ...) */
    static const double c[8] = {1.0,         -1.0 / 3,         2.0 / 15,          -17.0 / 315,
                                62.0 / 2835, -1382.0 / 155925, 21844.0 / 6081075, -929569.0 / 638512875};
    double small = ax * horner64(c, 8, ax * ax);
    y = ax < 0.125 ? small : y;
    y = ax > 40.0 ? 1.0 : y;
    return copysign(y, x);
}
double tir_m_sigmoid64(double x) {
    return 1.0 / (1.0 + tir_m_exp64(-x));
}
double tir_m_erf64(double x) {
    double ax = fabs(x);
    double x2 = ax * ax;
    /* erf = 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)) */
    double c[60];
    double f = 1;
    for (int n = 0; n < 60; n++) {
        if (n)
            f *= n;
        c[n] = (n & 1 ? -1.0 : 1.0) / (f * (2 * n + 1));
    }
    double taylor = ax * horner64(c, 60, x2) * 1.1283791670955126;
    /* erfc = e^-x^2 / sqrt(pi) / (x + 1/2 / (x + 1 / (x + 3/2 / (x + ...)))) */
    double cf = ax;
    for (int k = 80; k >= 1; k--)
        cf = ax + k * 0.5 / cf;
    double erfc = tir_m_exp64(-x2) * 0.5641895835477563 / cf;
    double y = ax < 2.5 ? taylor : 1.0 - erfc;
    y = ax >= 6.0 ? 1.0 : y;
    y = x != x ? x : y;
    return copysign(y, x);
}
double tir_m_rsqrt64(double x) {
    return 1.0 / sqrt(x);
}

double (*tir_m_f64(int code))(double) {
    static const struct {
        int code;
        double (*fn)(double);
    } tab[] = {
        {TIR_OP_EXP, tir_m_exp64},    {TIR_OP_EXP2, tir_m_exp2_64},  {TIR_OP_LOG, tir_m_log64},
        {TIR_OP_LOG2, tir_m_log2_64}, {TIR_OP_TANH, tir_m_tanh64},   {TIR_OP_SIGMOID, tir_m_sigmoid64},
        {TIR_OP_ERF, tir_m_erf64},    {TIR_OP_RSQRT, tir_m_rsqrt64}, {TIR_OP_SIN, tir_m_sin64},
        {TIR_OP_COS, tir_m_cos64},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i].code == code)
            return tab[i].fn;
    return NULL;
}

bool tir_op_fast(const TirOp *op) {
    return tir_attr_kind((TirOpcode)op->code) == TIR_A_FAST && op->attr.i[0] == 1;
}
