/* Constants of the math builtins: the GPU lowering (backend/lower_math.c) and the C
 * version of the same algorithms (ir/fmath.c, the interpreter's) run exactly the same steps.
 *
 * f32 sin/cos:
 *
 *   |x| <= TB_SINCOS_CW_LIMIT: j = rint(x * (float)(2/pi)), r = x - j*pi/2 by three fma with
 *       pi/2 = C1 + C2 + C3 (each the f32 rounding of what is left), quadrant q = j mod 4.
 *   otherwise (Payne-Hanek): x = m * 2^E (m the 24-bit significand); the bits of 2/pi above
 *       weight 2^(1-E) only add multiples of 4 to x*2/pi, so 96 bits of 2/pi from there on,
 *       times m, give x*2/pi mod 4: 2 bits of quadrant and a 64-bit fraction, rounded to
 *       nearest (fraction in [-1/2, 1/2)), r = fraction * pi/2 in f64, rounded to f32.
 *   sin r and cos r on [-pi/4, pi/4] by their Taylor polynomials (degree 9 and 10: the
 *   truncation error is below 0.05 ulp there), selected and negated by the quadrant.
 *
 * The other f32 functions: see ir/fmath.c (the algorithms, step by step) and
 * docs/language.md (their accuracy, measured by tests/math).  Only data lives here: no
 * LLVM, no libm. */
#ifndef TB_MATH_CONSTS_H
#define TB_MATH_CONSTS_H

#include <stdint.h>

/* 2/pi to the float nearest */
#define TB_TWO_OVER_PI_F 0.636619772367581343f
/* pi/2 = C1 + C2 + C3 + ~1e-23, each the f32 nearest to the rest */
#define TB_PIO2_C1 1.5707963705062866f
#define TB_PIO2_C2 -4.371138828673793e-08f
#define TB_PIO2_C3 -1.7151245100058819e-15f
/* Above this |x| (and for inf/nan) the Payne-Hanek path runs.  2^17: j has at most 17 bits,
 * so j*C1 and j*C2 lose nothing that the next fma does not restore. */
#define TB_SINCOS_CW_LIMIT 131072.0f
/* pi/2 * 2^-64: the 64-bit signed fraction to radians */
#define TB_PIO2_2M64 8.515303950216386e-20

/* The bits of 2/pi after the binary point, 32 per word, with one zero word in front so that
 * a window starting up to 31 bits before the binary point reads zeros.  Bit i of 2/pi
 * (weight 2^-i, i >= 1) is table bit i + 31 counting from the top of word 0. */
#define TB_TWO_OVER_PI_NWORDS 11
static const uint32_t tb_two_over_pi_bits[TB_TWO_OVER_PI_NWORDS] = {
    0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u,
    0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u,
};

/* sin r = r + r^3 (S[0] + r^2 (S[1] + ...)),  cos r = 1 + r^2 (C[0] + r^2 (C[1] + ...)) */
#define TB_SIN_NCOEF 4
#define TB_COS_NCOEF 5
static const float tb_sin_coef[TB_SIN_NCOEF] = {
    -1.0f / 6,
    1.0f / 120,
    -1.0f / 5040,
    1.0f / 362880,
};
static const float tb_cos_coef[TB_COS_NCOEF] = {
    -1.0f / 2, 1.0f / 24, -1.0f / 720, 1.0f / 40320, -1.0f / 3628800,
};

/* ln 2 = LN2_HI + LN2_LO (+ 1e-17), log2(e) = LOG2E_HI + LOG2E_LO, each the f32 nearest the rest */
#define TB_LN2_HI   0.693147182464599609375f
#define TB_LN2_LO   -1.9046542121259336e-09f
#define TB_LOG2E_F  1.44269502162933349609375f
#define TB_LOG2E_LO 1.925963033500011e-08f
#define TB_SQRT2_F  1.41421353816986083984375f
/* 1.5 * 2^23: t + SHIFTER rounds t to an integer k (|t| < 2^22), and the bits of the sum
 * minus those of SHIFTER are k as an integer (no conversion, and NaN stays NaN) */
#define TB_SHIFTER      12582912.0f
#define TB_SHIFTER_BITS 0x4b400000u
/* exp clamps x to [TB_EXP_LO, TB_EXP_HI] (NaN passes): e^89 overflows, e^-104 rounds to 0 */
#define TB_EXP_HI 89.0f
#define TB_EXP_LO -104.0f
/* tanh switches from its polynomial to 1 - 2/(e^2|x| + 1) here, erf from its polynomial to
 * 1 - e^P(|x|) (|x| clamped to TB_ERF_CLAMP, past which erf rounds to 1) */
#define TB_TANH_SMALL 0.625f
#define TB_ERF_SMALL  0.875f
#define TB_ERF_CLAMP  4.0f

/* Polynomial coefficients, c[0] + c[1] u + ..., from tests/math/fit.py (Chebyshev fits;
 * the fit error is in the polynomial's own units). */
/* exp_p on [-0.346574, 0.346574], degree 5, fit error 1.13e-08 */
#define TB_EXP_P_N 6
static const float tb_exp_p[TB_EXP_P_N] = {
    1.0f, 0.5f, 0.16666504740715027f, 0.04166646674275398f, 0.008369148708879948f, 0.0013933641603216529f};
/* exp2_p on [-0.5, 0.5], degree 5, fit error 7.8e-09 */
#define TB_EXP2_P_N 6
static const float tb_exp2_p[TB_EXP2_P_N] = {0.6931471824645996f,   0.24022650718688965f,   0.055503569543361664f,
                                             0.009618083015084267f, 0.0013390863314270973f, 0.00015453163359779865f};
/* log_q on [-0.292893, 0.414214], degree 9, fit error 4.96e-09 */
#define TB_LOG_Q_N 10
static const float tb_log_q[TB_LOG_Q_N] = {-0.5f,
                                           0.33333322405815125f,
                                           -0.25000011920928955f,
                                           0.20001447200775146f,
                                           -0.1666753739118576f,
                                           0.14232318103313446f,
                                           -0.12420814484357834f,
                                           0.11812136322259903f,
                                           -0.11557287722826004f,
                                           0.06769023835659027f};
/* tanh_p on [0, 0.390625], degree 5, fit error 1.6e-09 */
#define TB_TANH_P_N 6
static const float tb_tanh_p[TB_TANH_P_N] = {-0.3333333432674408f, 0.13333304226398468f,   -0.053959257900714874f,
                                             0.02176891826093197f, -0.008343945257365704f, 0.002292744815349579f};
/* erf_r on [0, 0.765625], degree 6, fit error 2.09e-10 */
#define TB_ERF_R_N 7
static const float tb_erf_r[TB_ERF_R_N] = {0.12837916612625122f,   -0.37612634897232056f, 0.11283735185861588f,
                                           -0.026861706748604774f, 0.00520704872906208f,  -0.0008214570698328316f,
                                           8.690368849784136e-05f};
/* erfc_lp on [0.875, 4], degree 11, fit error 7.98e-10 */
#define TB_ERFC_LP_N 12
static const float tb_erfc_lp[TB_ERFC_LP_N] = {
    9.155908628599718e-05f,  -1.128978967666626f,    -0.6348670125007629f,    -0.10578455775976181f,
    0.022494420409202576f,   -0.002320805797353387f, -0.0004533731553237885f, 0.0002675726427696645f,
    -6.204820238053799e-05f, 8.377630365430377e-06f, -6.427745802284335e-07f, 2.179486813247422e-08f};
/* fexp2_p on [-0.5, 0.5], degree 3, fit error 8.1e-05 */
#define TB_FEXP2_P_N 4
static const float tb_fexp2_p[TB_FEXP2_P_N] = {0.9999245405197144f, 0.6931367516517639f, 0.2426394820213318f,
                                               0.05583828315138817f};
/* ftanh_p on [0, 0.390625], degree 2, fit error 3.13e-05 */
#define TB_FTANH_P_N 3
static const float tb_ftanh_p[TB_FTANH_P_N] = {-0.33330079913139343f, 0.13182051479816437f, -0.04311765357851982f};
/* ferf_r on [0, 0.765625], degree 3, fit error 1.08e-05 */
#define TB_FERF_R_N 4
static const float tb_ferf_r[TB_FERF_R_N] = {0.12836818397045135f, -0.37566569447517395f, 0.10976355522871017f,
                                             -0.02008584327995777f};
/* ferfc_lp on [0.875, 4], degree 6, fit error 5.82e-06 */
#define TB_FERFC_LP_N 7
static const float tb_ferfc_lp[TB_FERFC_LP_N] = {
    -0.0035827807150781155f, -1.1152796745300293f,    -0.6553747057914734f, -0.09018412232398987f,
    0.016562053933739662f,   -0.0018310572486370802f, 9.02890315046534e-05f};

#endif
