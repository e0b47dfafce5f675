/* Constants of the f32 sin/cos lowering (backend/lower_elem.c), shared with its C reference
 * test (tests/backend/sincos_ref.c) so both run exactly the same algorithm:
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
 * Only data lives here: no LLVM, no libm. */
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
    -1.0f / 6, 1.0f / 120, -1.0f / 5040, 1.0f / 362880,
};
static const float tb_cos_coef[TB_COS_NCOEF] = {
    -1.0f / 2, 1.0f / 24, -1.0f / 720, 1.0f / 40320, -1.0f / 3628800,
};

#endif
