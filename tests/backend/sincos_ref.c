/* The f32 sin/cos algorithm of backend/lower_elem.c, step for step in C with the same
 * constants (backend/math_consts.h), against libm's double sin/cos: max error in ulp of the
 * correctly rounded f32 result over a sweep of 10^6+ arguments (small, around multiples of
 * pi/2, the Cody-Waite/Payne-Hanek boundary, huge, every binade up to FLT_MAX), plus the
 * special values.  Fails when any error exceeds the bound the docs promise (2 ulp). */
#include "math_consts.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t bits_of(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static float float_of(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

/* r and quadrant of x (the GPU code's reduction) */
static float reduce(float x, int *q) {
    float ax = fabsf(x);
    if (ax <= TB_SINCOS_CW_LIMIT) {
        float j = rintf(x * TB_TWO_OVER_PI_F);
        float r = fmaf(-j, TB_PIO2_C1, x);
        r = fmaf(-j, TB_PIO2_C2, r);
        r = fmaf(-j, TB_PIO2_C3, r);
        *q = (int)j & 3;
        return r;
    }
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

static float sincos_ref(float x, int cosine) {
    if (isnan(x) || isinf(x)) return x - x;
    int q;
    float r = reduce(x, &q);
    float r2 = r * r;
    float ps = tb_sin_coef[TB_SIN_NCOEF - 1];
    for (int i = TB_SIN_NCOEF - 2; i >= 0; i--) ps = fmaf(ps, r2, tb_sin_coef[i]);
    float sn = fmaf(r * r2, ps, r);
    float pc = tb_cos_coef[TB_COS_NCOEF - 1];
    for (int i = TB_COS_NCOEF - 2; i >= 0; i--) pc = fmaf(pc, r2, tb_cos_coef[i]);
    float cs = fmaf(r2, pc, 1.0f);
    q = (q + cosine) & 3;
    float y = (q & 1) ? cs : sn;
    return (q & 2) ? -y : y;
}

static double worst[2];
static float worst_x[2];

static void check(float x) {
    for (int c = 0; c < 2; c++) {
        double ref = c ? cos((double)x) : sin((double)x);
        float y = sincos_ref(x, c);
        /* ulp of the f32 result nearest ref (2^-149 at least) */
        int ex;
        frexp(ref, &ex);
        double ulp = ldexp(1.0, (ex - 24 < -149) ? -149 : ex - 24);
        double err = fabs((double)y - ref) / ulp;
        if (!(err <= worst[c])) {
            worst[c] = err;
            worst_x[c] = x;
        }
    }
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

int main(void) {
    long n = 0;
    /* uniform over [-2^k, 2^k] for k = 0..20 */
    for (int k = 0; k <= 20; k++)
        for (int i = 0; i < 20000; i++, n++)
            check(ldexpf((float)next32() / 4294967296.0f * 2.0f - 1.0f, k));
    /* random bit patterns: every binade up to FLT_MAX, both signs */
    for (int i = 0; i < 400000; i++, n++) {
        float x = float_of((next32() & 0xff7fffffu) | (next32() & 0x80000000u));
        if (isfinite(x)) check(x);
    }
    /* next to multiples of pi/2 (the cancellation the reduction must survive) */
    for (int j = 1; j < 100000; j += 1, n += 3) {
        float x = (float)(j * 1.5707963267948966);
        check(x);
        check(nextafterf(x, 0));
        check(nextafterf(x, INFINITY));
    }
    /* around the switch between the two reductions */
    float x = TB_SINCOS_CW_LIMIT;
    for (int i = 0; i < 20000; i++, n += 2) {
        check(x);
        check(-x);
        x = nextafterf(x, 0);
    }
    x = TB_SINCOS_CW_LIMIT;
    for (int i = 0; i < 20000; i++, n++) {
        x = nextafterf(x, INFINITY);
        check(x);
    }
    /* special values */
    int bad = 0;
    if (!isnan(sincos_ref(INFINITY, 0)) || !isnan(sincos_ref(-INFINITY, 1)) || !isnan(sincos_ref(NAN, 0))) {
        fprintf(stderr, "sin/cos of inf or nan is not nan\n");
        bad = 1;
    }
    if (sincos_ref(0.0f, 0) != 0.0f || sincos_ref(0.0f, 1) != 1.0f || sincos_ref(1e-30f, 0) != 1e-30f) {
        fprintf(stderr, "sin/cos of tiny arguments wrong\n");
        bad = 1;
    }
    printf("%ld arguments: sin max %.3f ulp (x = %.9g), cos max %.3f ulp (x = %.9g)\n", n, worst[0],
           (double)worst_x[0], worst[1], (double)worst_x[1]);
    if (worst[0] > 2.0 || worst[1] > 2.0) {
        fprintf(stderr, "error above 2 ulp\n");
        bad = 1;
    }
    return bad;
}
