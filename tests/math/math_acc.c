/* The math builtins' algorithms, exactly as the GPU and the interpreter run them (ir/fmath.c,
 * mirrored by backend/lower_math.c), against libm: the f32 functions against libm's double
 * result, the f64 ones against long double.  Samples: every f16 value, random bit patterns
 * over every binade, dense uniform sweeps of each function's interesting range, next to 1,
 * next to multiples of pi/2, the thresholds between branches, and the edges (0, subnormals,
 * overflow, inf, NaN).  Each function has a claimed bound; the test fails when a measured
 * error passes it or a special value is wrong.  `--table` prints docs/language.md's table. */
#include "math_consts.h"
#include "tmath.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}
static float float_of(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}
static float unif(float lo, float hi) {
    return lo + (hi - lo) * ((float)next32() / 4294967296.0f);
}

/* ---- references ---- */
static double r_sigmoid(double x) {
    return 1.0 / (1.0 + exp(-x));
}
static double r_rsqrt(double x) {
    return 1.0 / sqrt(x);
}
static double r_silu(double x) {
    return x / (1.0 + exp(-x));
}
static double r_gelu(double x) {
    return 0.5 * x * erfc(-x * 0.70710678118654752440);
}

/* SiLU and GELU as kernels write them (docs/language.md), in each mode */
static float silu_acc(float x) {
    return x * tir_m_sigmoid(x);
}
static float silu_fast(float x) {
    return x * tir_m_fsigmoid(x);
}
static float gelu_acc(float x) {
    return 0.5f * x * (1.0f + tir_m_erf(x * 0.707106769f));
}
static float gelu_fast(float x) {
    return 0.5f * x * (1.0f + tir_m_ferf(x * 0.707106769f));
}

typedef struct {
    const char *name;
    float (*acc)(float), (*fast)(float);
    double (*ref)(double);
    double bound;      /* accurate f32, ulp of the correctly rounded result (normal results); 0: none */
    double fast_bound; /* fast mode: error in f16 ulps (before the result's rounding) */
    float lo, hi;      /* the dense sweep's range (a composite: its whole domain) */
    /* measured */
    double err, sub, ferr_f16, ferr_bf16, ferr_rel;
    float err_x;
    bool composite;
} Fn;

static Fn fns[] = {
    {"exp", tir_m_exp, tir_m_fexp, exp, 2, 0.5, -105, 90, 0, 0, 0, 0, 0, 0, false},
    {"exp2", tir_m_exp2, tir_m_fexp2, exp2, 2, 0.5, -152, 130, 0, 0, 0, 0, 0, 0, false},
    {"log", tir_m_log, NULL, log, 2, 0, 0, 4, 0, 0, 0, 0, 0, 0, false},
    {"log2", tir_m_log2, NULL, log2, 2, 0, 0, 4, 0, 0, 0, 0, 0, 0, false},
    {"tanh", tir_m_tanh, tir_m_ftanh, tanh, 2, 0.5, -12, 12, 0, 0, 0, 0, 0, 0, false},
    {"sigmoid", tir_m_sigmoid, tir_m_fsigmoid, r_sigmoid, 2, 0.5, -110, 30, 0, 0, 0, 0, 0, 0, false},
    {"erf", tir_m_erf, tir_m_ferf, erf, 2, 0.5, -5, 5, 0, 0, 0, 0, 0, 0, false},
    {"sin", tir_m_sin, NULL, sin, 2, 0, -10, 10, 0, 0, 0, 0, 0, 0, false},
    {"cos", tir_m_cos, NULL, cos, 2, 0, -10, 10, 0, 0, 0, 0, 0, 0, false},
    {"rsqrt", tir_m_rsqrt, NULL, r_rsqrt, 2, 0, 0, 4, 0, 0, 0, 0, 0, 0, false},
    {"silu(x) = x * sigmoid(x), x in [-80, 80]", silu_acc, silu_fast, r_silu, 2.5, 0.5, -80, 80, 0, 0, 0, 0, 0, 0,
     false},
    {"gelu(x) = 0.5 x (1 + erf(x/sqrt 2)), x in [-3, 8]", gelu_acc, gelu_fast, r_gelu, 0, 0.5, -3, 8, 0, 0, 0, 0, 0, 0,
     false},
};
#define NFN   (int)(sizeof fns / sizeof fns[0])
#define NPRIM (NFN - 2) /* silu and gelu are compositions, measured on their domain only */

/* the ulp of the format (p significand bits, emin) at the value nearest ref */
static double ulp_at(double ref, int p, int emin) {
    int ex;
    frexp(ref, &ex);
    return ldexp(1.0, (ex - 1 < emin ? emin : ex - 1) - (p - 1));
}

static void sample(Fn *f, float x) {
    if (f->composite && !(x >= f->lo && x <= f->hi))
        return;
    double ref = f->ref((double)x);
    if (isnan(ref) || isinf(ref) || fabs(ref) > FLT_MAX)
        return; /* specials: checked below */
    float y = f->acc(x);
    double a = fabs(ref);
    double err = fabs((double)y - ref) / ulp_at(ref, 24, -126);
    if (a >= 0x1p-126) {
        if (!(err <= f->err))
            f->err = err, f->err_x = x;
    } else if (!(err <= f->sub)) {
        f->sub = err;
    }
    if (!f->fast)
        return;
    float z = f->fast(x);
    double d = fabs((double)z - ref);
    /* f16: its normal range; bf16: normal f32 range; relative: results above 2^-125 */
    if (a >= 0x1p-14 && a <= 65504) {
        double e16 = d / ulp_at(ref, 11, -14);
        if (!(e16 <= f->ferr_f16))
            f->ferr_f16 = e16;
    }
    if (a >= 0x1p-125) {
        double e = d / ulp_at(ref, 8, -126);
        if (!(e <= f->ferr_bf16))
            f->ferr_bf16 = e;
        double rel = d / a;
        if (!(rel <= f->ferr_rel))
            f->ferr_rel = rel;
    }
}

/* ---- f64: the GPU's algorithms against long double ---- */
typedef struct {
    const char *name;
    double (*fn)(double);
    long double (*ref)(long double);
    double bound, lo, hi;
    double err, sub;
} Fn64;
static long double r64_sigmoid(long double x) {
    return 1.0L / (1.0L + expl(-x));
}
static long double r64_rsqrt(long double x) {
    return 1.0L / sqrtl(x);
}
static Fn64 fns64[] = {
    {"exp", tir_m_exp64, expl, 2, -746, 710, 0, 0},
    {"exp2", tir_m_exp2_64, exp2l, 2, -1076, 1025, 0, 0},
    {"log", tir_m_log64, logl, 2, 0, 4, 0, 0},
    {"log2", tir_m_log2_64, log2l, 3, 0, 4, 0, 0},
    {"tanh", tir_m_tanh64, tanhl, 12, -20, 20, 0, 0},
    {"sigmoid", tir_m_sigmoid64, r64_sigmoid, 3, -40, 40, 0, 0},
    {"erf", tir_m_erf64, erfl, 32, -7, 7, 0, 0},
    {"sin, (abs(x) < 1e6)", tir_m_sin64, sinl, 4, -10, 10, 0, 0},
    {"cos, (abs(x) < 1e6)", tir_m_cos64, cosl, 4, -10, 10, 0, 0},
    {"rsqrt", tir_m_rsqrt64, r64_rsqrt, 2, 0, 4, 0, 0},
};
#define NFN64 (int)(sizeof fns64 / sizeof fns64[0])

static void sample64(Fn64 *f, double x) {
    long double ref = f->ref((long double)x);
    if (isnan(ref) || isinf(ref) || fabsl(ref) > DBL_MAX)
        return;
    if (f->fn == tir_m_sin64 || f->fn == tir_m_cos64) {
        if (!(fabs(x) < 1e6))
            return; /* the f64 reduction's domain (3-part Cody-Waite) */
    }
    double y = f->fn(x);
    int ex;
    frexpl(ref, &ex);
    long double ulp = ldexpl(1.0L, (ex - 1 < -1022 ? -1022 : ex - 1) - 52);
    double err = (double)(fabsl((long double)y - ref) / ulp);
    if (fabsl(ref) >= 0x1p-1022L) {
        if (!(err <= f->err))
            f->err = err;
    } else if (!(err <= f->sub)) {
        f->sub = err;
    }
}

static int bad;
#define EXPECT(cond, ...)                 \
    do {                                  \
        if (!(cond)) {                    \
            fprintf(stderr, __VA_ARGS__); \
            fputc('\n', stderr);          \
            bad = 1;                      \
        }                                 \
    } while (0)

static bool same(float a, float b) {
    return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

static void specials(void) {
    float inf = INFINITY, nan = NAN;
    struct {
        const char *what;
        float (*fn)(float);
        float x, want;
    } t[] = {
        {"exp", tir_m_exp, inf, inf},
        {"exp", tir_m_exp, -inf, 0},
        {"exp", tir_m_exp, nan, nan},
        {"exp", tir_m_exp, 0, 1},
        {"exp", tir_m_exp, 89, inf},
        {"exp", tir_m_exp, -104, 0},
        {"exp2", tir_m_exp2, -149, 0x1p-149f},
        {"exp2", tir_m_exp2, 128, inf},
        {"exp2", tir_m_exp2, -inf, 0},
        {"exp2", tir_m_exp2, nan, nan},
        {"exp2", tir_m_exp2, 127, 0x1p127f},
        {"log", tir_m_log, 0, -inf},
        {"log", tir_m_log, -0.0f, -inf},
        {"log", tir_m_log, -1, nan},
        {"log", tir_m_log, inf, inf},
        {"log", tir_m_log, nan, nan},
        {"log", tir_m_log, 1, 0},
        {"log2", tir_m_log2, 0x1p-149f, -149},
        {"log2", tir_m_log2, 1, 0},
        {"log2", tir_m_log2, -inf, nan},
        {"tanh", tir_m_tanh, inf, 1},
        {"tanh", tir_m_tanh, -inf, -1},
        {"tanh", tir_m_tanh, -0.0f, -0.0f},
        {"tanh", tir_m_tanh, nan, nan},
        {"tanh", tir_m_tanh, 1e-20f, 1e-20f},
        {"sigmoid", tir_m_sigmoid, inf, 1},
        {"sigmoid", tir_m_sigmoid, -inf, 0},
        {"sigmoid", tir_m_sigmoid, nan, nan},
        {"sigmoid", tir_m_sigmoid, 0, 0.5f},
        {"erf", tir_m_erf, inf, 1},
        {"erf", tir_m_erf, -inf, -1},
        {"erf", tir_m_erf, -0.0f, -0.0f},
        {"erf", tir_m_erf, nan, nan},
        {"sin", tir_m_sin, inf, nan},
        {"sin", tir_m_sin, 0.0f, 0.0f},
        {"cos", tir_m_cos, nan, nan},
        {"fast exp", tir_m_fexp, inf, inf},
        {"fast exp", tir_m_fexp, -inf, 0},
        {"fast exp", tir_m_fexp, nan, nan},
        {"fast exp", tir_m_fexp, -100, 0},
        {"fast exp2", tir_m_fexp2, 200, inf},
        {"fast tanh", tir_m_ftanh, inf, 1},
        {"fast tanh", tir_m_ftanh, -inf, -1},
        {"fast tanh", tir_m_ftanh, nan, nan},
        {"fast tanh", tir_m_ftanh, -0.0f, -0.0f},
        {"fast sigmoid", tir_m_fsigmoid, inf, 1},
        {"fast sigmoid", tir_m_fsigmoid, -inf, 0},
        {"fast sigmoid", tir_m_fsigmoid, nan, nan},
        {"fast erf", tir_m_ferf, inf, 1},
        {"fast erf", tir_m_ferf, -inf, -1},
        {"fast erf", tir_m_ferf, nan, nan},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        float y = t[i].fn(t[i].x);
        EXPECT(same(y, t[i].want), "%s(%g) = %g, want %g", t[i].what, (double)t[i].x, (double)y, (double)t[i].want);
    }
    /* the values issue 11 and issue 10 reported */
    EXPECT((double)tir_m_sigmoid(-100) > 3.6e-44 && (double)tir_m_sigmoid(-100) < 3.9e-44, "sigmoid(-100) = %g",
           (double)tir_m_sigmoid(-100));
    EXPECT(tir_m_exp(-87.34f) > 1.1e-38f, "exp(-87.34) = %g", (double)tir_m_exp(-87.34f));
    EXPECT(tir_m_erf(1e-20f) > 1.128e-20f && tir_m_erf(1e-20f) < 1.1285e-20f, "erf(1e-20) = %g",
           (double)tir_m_erf(1e-20f));
}

static void sweep(void) {
    for (int i = 0; i < NFN; i++) {
        Fn *f = &fns[i];
        /* every f16 value, and random bit patterns of every binade, both signs */
        for (uint32_t h = 0; h < 65536; h++)
            sample(f, tir_f16_to_f32((uint16_t)h));
        for (int j = 0; j < 200000; j++) {
            float x = float_of(next32() ^ (next32() << 16));
            if (!isnan(x))
                sample(f, x);
        }
        /* dense over the range that matters */
        for (int j = 0; j < 200000; j++)
            sample(f, unif(f->lo, f->hi));
        /* near 0 and near 1, every branch threshold */
        float edges[] = {0x1p-149f,    0x1p-127f,    0x1p-126f, 1e-30f, 1e-7f,  1,     TB_TANH_SMALL,
                         TB_ERF_SMALL, TB_ERF_CLAMP, 88.72f,    87.33f, 103.9f, 16.6f, 126,
                         128,          149,          150,       0.5f,   2};
        for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++) {
            float x = edges[e], y = edges[e];
            for (int j = 0; j < 3000; j++) {
                sample(f, x), sample(f, -x), sample(f, y), sample(f, -y);
                x = nextafterf(x, INFINITY);
                y = nextafterf(y, 0);
            }
        }
    }
    /* sin/cos next to multiples of pi/2 and around the switch to Payne-Hanek */
    for (int c = 7; c <= 8; c++)
        for (int j = 1; j < 100000; j++) {
            float x = (float)(j * 1.5707963267948966);
            sample(&fns[c], x), sample(&fns[c], nextafterf(x, 0)), sample(&fns[c], nextafterf(x, INFINITY));
        }
    for (int c = 7; c <= 8; c++) {
        float x = TB_SINCOS_CW_LIMIT, y = TB_SINCOS_CW_LIMIT;
        for (int j = 0; j < 20000; j++) {
            sample(&fns[c], x), sample(&fns[c], -y);
            x = nextafterf(x, 0), y = nextafterf(y, INFINITY);
        }
    }
    for (int i = 0; i < NFN64; i++) {
        Fn64 *f = &fns64[i];
        for (int j = 0; j < 100000; j++) {
            uint64_t u = (uint64_t)next32() << 32 | next32();
            double x;
            memcpy(&x, &u, 8);
            if (!isnan(x))
                sample64(f, x);
        }
        for (int j = 0; j < 100000; j++)
            sample64(f, f->lo + (f->hi - f->lo) * ((double)next32() / 4294967296.0));
        double x = 1, y = 1;
        for (int j = 0; j < 3000; j++) {
            sample64(f, x), sample64(f, y), sample64(f, 0x1p-1060 * j);
            x = nextafter(x, INFINITY), y = nextafter(y, 0);
        }
    }
}

static void table(void) {
    puts("| function | f32 bound (ulp) | f32 max measured | f32 subnormal results, max (ulp of 2^-149) | "
         "fast: max error, f16 ulp | fast: bf16 ulp | fast: relative | f64 bound (ulp) | f64 max measured |");
    puts("|---|---|---|---|---|---|---|---|---|");
    for (int i = 0; i < NFN; i++) {
        Fn *f = &fns[i];
        Fn64 *g = NULL;
        for (int j = 0; j < NFN64; j++)
            if (!strncmp(fns64[j].name, f->name,
                         strlen(fns64[j].name) -
                             strlen(strchr(fns64[j].name, ',') ? strchr(fns64[j].name, ',') : "")) &&
                (f->name[strcspn(fns64[j].name, ",")] == 0 || f->name[strcspn(fns64[j].name, ",")] == ' '))
                g = &fns64[j];
        if (f->bound)
            printf("| `%s` | %g | %.2f | %.2f | ", f->name, f->bound, f->err, f->sub);
        else
            printf("| `%s` | - | %.0f | %.2f | ", f->name, f->err, f->sub);
        if (f->fast)
            printf("%.3f | %.3f | %.1e | ", f->ferr_f16, f->ferr_bf16, f->ferr_rel);
        else
            printf("- | - | - | ");
        if (g)
            printf("%g%s | %.2f |\n", g->bound, strchr(g->name, ',') ? strchr(g->name, ',') + 1 : "", g->err);
        else
            printf("- | - |\n");
    }
}

int main(int argc, char **argv) {
    bool print_table = argc > 1 && !strcmp(argv[1], "--table");
    for (int i = NPRIM; i < NFN; i++)
        fns[i].composite = true;
    specials();
    sweep();
    for (int i = 0; i < NFN; i++) {
        Fn *f = &fns[i];
        EXPECT(!f->bound || f->err <= f->bound, "%s: %.3f ulp at x = %.9g, bound %g", f->name, f->err, (double)f->err_x,
               f->bound);
        EXPECT(f->sub <= 1.0, "%s: subnormal result %.3f ulp of 2^-149 off", f->name, f->sub);
        if (f->fast)
            EXPECT(f->ferr_f16 < f->fast_bound && f->ferr_bf16 < f->fast_bound,
                   "fast %s: %.3f f16 ulp, %.3f bf16 ulp (bound %g)", f->name, f->ferr_f16, f->ferr_bf16,
                   f->fast_bound);
    }
    for (int i = 0; i < NFN64; i++)
        EXPECT(fns64[i].err <= fns64[i].bound, "f64 %s: %.3f ulp, bound %g", fns64[i].name, fns64[i].err,
               fns64[i].bound);
    if (print_table) {
        table();
    } else {
        for (int i = 0; i < NFN; i++)
            printf("%-40s f32 %.3f ulp (x = %.9g), subnormal %.3f; fast f16 %.3f bf16 %.3f rel %.2e\n", fns[i].name,
                   fns[i].err, (double)fns[i].err_x, fns[i].sub, fns[i].ferr_f16, fns[i].ferr_bf16, fns[i].ferr_rel);
        for (int i = 0; i < NFN64; i++)
            printf("f64 %-10s %.3f ulp, subnormal %.3f\n", fns64[i].name, fns64[i].err, fns64[i].sub);
    }
    return bad;
}
