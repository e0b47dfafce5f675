/* Narrow float formats, rounded exactly as the GPU's cvt.rn(.satfinite) does.
 *
 * One generic rounding routine works from a double (every f32 is exact in a double,
 * so f32 -> narrow rounds once, and tir_round_to never double-rounds). */
#include "ir.h"

#include <math.h>
#include <string.h>

typedef struct {
    int ebits, mbits, bias;
    bool ieee_inf;  /* exponent all-ones means inf/NaN (f16, bf16, e5m2) */
    bool satfinite; /* overflow and inf give the largest finite value (f8) */
    uint32_t nan;   /* the canonical NaN the GPU writes */
} TirNarrow;

static const TirNarrow fmt_f16 = {5, 10, 15, true, false, 0x7fff};
static const TirNarrow fmt_bf16 = {8, 7, 127, true, false, 0x7fff};
/* e4m3 is the "FN" variant: no inf; S.1111.111 is NaN, so 448 is the largest finite. */
static const TirNarrow fmt_e4m3 = {4, 3, 7, false, true, 0x7f};
static const TirNarrow fmt_e5m2 = {5, 2, 15, true, true, 0x7f};

/* Largest finite pattern without the sign. */
static uint32_t narrow_max_finite(const TirNarrow *f) {
    uint32_t emax = (1u << f->ebits) - 1;
    if (f->ieee_inf)
        return ((emax - 1) << f->mbits) | ((1u << f->mbits) - 1);
    return (emax << f->mbits) | ((1u << f->mbits) - 2);
}

static uint32_t narrow_from_double(double x, const TirNarrow *f) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    uint32_t sign = (uint32_t)(bits >> 63) << (f->ebits + f->mbits);
    int e = (int)((bits >> 52) & 0x7ff);
    uint64_t m = bits & ((1ull << 52) - 1);
    uint32_t emax = (1u << f->ebits) - 1;
    uint32_t inf = f->ieee_inf ? emax << f->mbits : 0;
    if (e == 0x7ff) {
        if (m)
            return f->nan;
        return sign | (f->satfinite ? narrow_max_finite(f) : inf);
    }
    if (e == 0 && m == 0)
        return sign;
    /* value = sig * 2^exp exactly */
    uint64_t sig;
    int exp;
    if (e == 0) {
        sig = m;
        exp = -1074;
    } else {
        sig = m | (1ull << 52);
        exp = e - 1075;
    }
    /* floor(log2(value)) */
    int top = 63 - __builtin_clzll(sig);
    int ue = exp + top;
    int emin = 1 - f->bias;
    int q = (ue > emin ? ue : emin) - f->mbits; /* exponent of the target's unit in the last place */
    int shift = q - exp;
    uint64_t r;
    if (shift <= 0) {
        r = sig << -shift; /* exact; only reachable for tiny sig, never overflows here */
    } else if (shift > 60) {
        r = 0;
    } else {
        uint64_t keep = sig >> shift;
        uint64_t rem = sig & ((1ull << shift) - 1);
        uint64_t half = 1ull << (shift - 1);
        r = keep;
        if (rem > half || (rem == half && (keep & 1)))
            r++;
    }
    uint64_t one = 1ull << f->mbits;
    if (r < one)
        return sign | (uint32_t)r; /* subnormal or zero */
    if (r >= (one << 1)) {
        r >>= 1;
        q++;
    }
    int64_t be = (int64_t)q + f->mbits + f->bias;
    uint32_t mant = (uint32_t)(r - one);
    bool overflow =
        f->ieee_inf ? be >= (int64_t)emax : (be > (int64_t)emax || (be == (int64_t)emax && mant == one - 1));
    if (overflow)
        return sign | (f->satfinite ? narrow_max_finite(f) : inf);
    return sign | ((uint32_t)be << f->mbits) | mant;
}

static float narrow_to_f32(uint32_t v, const TirNarrow *f) {
    uint32_t emax = (1u << f->ebits) - 1;
    bool neg = (v >> (f->ebits + f->mbits)) & 1;
    uint32_t e = (v >> f->mbits) & emax;
    uint32_t m = v & ((1u << f->mbits) - 1);
    float r;
    if (f->ieee_inf && e == emax)
        r = m ? NAN : INFINITY;
    else if (!f->ieee_inf && e == emax && m == (1u << f->mbits) - 1)
        r = NAN;
    else if (e == 0)
        r = ldexpf((float)m, 1 - f->bias - f->mbits);
    else
        r = ldexpf((float)(m | (1u << f->mbits)), (int)e - f->bias - f->mbits);
    return neg ? -r : r;
}

uint16_t tir_f32_to_f16(float x) {
    return (uint16_t)narrow_from_double(x, &fmt_f16);
}
float tir_f16_to_f32(uint16_t h) {
    return narrow_to_f32(h, &fmt_f16);
}
uint16_t tir_f32_to_bf16(float x) {
    return (uint16_t)narrow_from_double(x, &fmt_bf16);
}
float tir_bf16_to_f32(uint16_t h) {
    return narrow_to_f32(h, &fmt_bf16);
}
uint8_t tir_f32_to_f8e4m3(float x) {
    return (uint8_t)narrow_from_double(x, &fmt_e4m3);
}
float tir_f8e4m3_to_f32(uint8_t v) {
    return narrow_to_f32(v, &fmt_e4m3);
}
uint8_t tir_f32_to_f8e5m2(float x) {
    return (uint8_t)narrow_from_double(x, &fmt_e5m2);
}
float tir_f8e5m2_to_f32(uint8_t v) {
    return narrow_to_f32(v, &fmt_e5m2);
}

/* Integers wrap modulo 2^bits; the double is truncated toward zero first. */
static double wrap_int(TirScalar s, double x) {
    if (isnan(x))
        return 0;
    double t = trunc(x);
    uint64_t u;
    if (fabs(t) < 9223372036854775808.0) {
        u = (uint64_t)(int64_t)t;
    } else {
        double md = fmod(t, 18446744073709551616.0);
        if (md < 0)
            md += 18446744073709551616.0;
        u = md >= 18446744073709551616.0 ? 0 : (uint64_t)md;
    }
    int bits = tir_scalar_bits(s);
    if (bits < 64)
        u &= (1ull << bits) - 1;
    if (s == TIR_I1)
        return (double)u;
    if (tir_scalar_is_signed(s) && bits < 64 && (u >> (bits - 1)) & 1)
        u |= ~((1ull << bits) - 1);
    if (tir_scalar_is_signed(s))
        return (double)(int64_t)u;
    return (double)u;
}

double tir_round_to(TirScalar s, double x) {
    switch (s) {
    case TIR_F64: return x;
    case TIR_F32: return (double)(float)x;
    case TIR_F16: return narrow_to_f32(narrow_from_double(x, &fmt_f16), &fmt_f16);
    case TIR_BF16: return narrow_to_f32(narrow_from_double(x, &fmt_bf16), &fmt_bf16);
    case TIR_F8E4M3: return narrow_to_f32(narrow_from_double(x, &fmt_e4m3), &fmt_e4m3);
    case TIR_F8E5M2: return narrow_to_f32(narrow_from_double(x, &fmt_e5m2), &fmt_e5m2);
    default: return wrap_int(s, x);
    }
}

/* float -> integer as the IR casts: truncate toward zero, saturate, NaN gives 0. */
int64_t tir_float_to_int(TirScalar s, double x) {
    if (isnan(x))
        return 0;
    double t = trunc(x);
    int bits = tir_scalar_bits(s);
    if (tir_scalar_is_signed(s)) {
        double lim = ldexp(1.0, bits - 1);
        if (t >= lim)
            return bits == 64 ? INT64_MAX : (int64_t)(lim - 1);
        if (t < -lim)
            return bits == 64 ? INT64_MIN : (int64_t)-lim;
        return (int64_t)t;
    }
    if (t <= 0)
        return 0;
    double lim = ldexp(1.0, bits);
    if (t >= lim)
        return bits == 64 ? (int64_t)UINT64_MAX : (int64_t)((1ull << bits) - 1);
    return (int64_t)(uint64_t)t;
}
