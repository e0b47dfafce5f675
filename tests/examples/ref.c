/* Plain C references for the kernels of examples/, and the input generators the example
 * tests use.  Written independently of the compiler (its own number-format conversions,
 * double-precision math), so that a wrong op in the front end, the passes or the
 * interpreter shows up as a mismatch here.
 *
 *   example_ref gen ints COUNT SEED LO HI     i32 uniform in [LO, HI]          (stdout)
 *   example_ref gen bytes COUNT SEED LO HI    i8 uniform in [LO, HI]
 *   example_ref gen uniform COUNT SEED SCALE  f32 uniform in [-SCALE, SCALE]
 *   example_ref gen wide COUNT SEED           f32 over a wide range of exponents, with
 *                                             ties, zeros, infinities and NaNs mixed in
 *   example_ref gen fill32 COUNT HEX          COUNT copies of a 32-bit word
 *   example_ref gen poison BYTES              BYTES bytes of 0xff (NaN for every float type)
 *   example_ref check KERNEL DIR NAME=VALUE...
 *       reads DIR/<buffer>.bin (and DIR/<buffer>.in for the buffers a kernel updates:
 *       their contents before the run), computes the kernel's result and compares; on a
 *       mismatch prints the buffer, the first bad index, got, expected and the tolerance,
 *       and exits 1.
 *
 * Tolerances (per kernel, below) are stated as |got - expected| <= tol, with expected
 * computed in double from the exact inputs, unless the check mirrors the kernel's f32
 * steps, in which case it is exact. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arguments and files ------------------------------------------------------------ */
static const char *g_dir;
static int g_nkv;
static char **g_kv;

static const char *arg_text(const char *name) {
    size_t n = strlen(name);
    for (int i = 0; i < g_nkv; i++)
        if (!strncmp(g_kv[i], name, n) && g_kv[i][n] == '=')
            return g_kv[i] + n + 1;
    fprintf(stderr, "example_ref: missing argument %s=VALUE\n", name);
    exit(2);
}

static long argi(const char *name) {
    return strtol(arg_text(name), NULL, 0);
}
static double argf(const char *name) {
    return strtod(arg_text(name), NULL);
}

/* Reads DIR/NAME.EXT, which must hold exactly count elements of esize bytes. */
static void *read_buf(const char *name, const char *ext, size_t esize, size_t count) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s", g_dir, name, ext);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "example_ref: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len < 0 || (size_t)len != esize * count) {
        fprintf(stderr, "example_ref: %s holds %ld bytes, expected %zu (%zu elements of %zu)\n", path, len,
                esize * count, count, esize);
        exit(1);
    }
    void *p = malloc(len ? (size_t)len : 1);
    if (!p || fread(p, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "example_ref: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return p;
}
#define READ(T, name, count)    ((T *)read_buf(name, "bin", sizeof(T), (size_t)(count)))
#define READ_IN(T, name, count) ((T *)read_buf(name, "in", sizeof(T), (size_t)(count)))

static void *xcalloc(size_t n, size_t s) {
    void *p = calloc(n ? n : 1, s);
    if (!p) {
        fprintf(stderr, "example_ref: out of memory\n");
        exit(1);
    }
    return p;
}

/* ---- number formats -------------------------------------------------------------------- */
typedef struct Fmt {
    const char *name;
    int ebits, mbits, bias;
    bool ieee_special; /* all-ones exponent is inf/NaN (else: only all-ones is NaN, e4m3) */
    bool saturate;     /* conversions clamp to the largest finite value (f8: satfinite) */
} Fmt;
static const Fmt F16 = {"f16", 5, 10, 15, true, false};
static const Fmt BF16 = {"bf16", 8, 7, 127, true, false};
static const Fmt E5M2 = {"f8e5m2", 5, 2, 15, true, true};
static const Fmt E4M3 = {"f8e4m3", 4, 3, 7, false, true};

static double fmt_max(const Fmt *f) {
    int emax = (1 << f->ebits) - 1 - f->bias - (f->ieee_special ? 1 : 0);
    /* e4m3: the top exponent keeps all mantissas but the all-ones one (NaN) */
    double mant = f->ieee_special ? 2.0 - ldexp(1.0, -f->mbits) : 2.0 - ldexp(1.0, 1 - f->mbits);
    return ldexp(mant, emax);
}

static double fmt_decode(const Fmt *f, uint32_t bits) {
    uint32_t mmask = (1u << f->mbits) - 1, emask = (1u << f->ebits) - 1;
    uint32_t m = bits & mmask, e = (bits >> f->mbits) & emask;
    int neg = (bits >> (f->mbits + f->ebits)) & 1;
    double v;
    if (f->ieee_special && e == emask)
        v = m ? NAN : INFINITY;
    else if (!f->ieee_special && e == emask && m == mmask)
        v = NAN;
    else if (e == 0)
        v = ldexp((double)m, 1 - f->bias - f->mbits);
    else
        v = ldexp((double)(m | (mmask + 1)), (int)e - f->bias - f->mbits);
    return neg ? -v : v;
}

/* x (a double) rounded to the format, to nearest even; overflow to inf, or to the largest
 * finite value for saturating formats. Returns the rounded value as a double. */
static double fmt_round(const Fmt *f, double x) {
    if (isnan(x))
        return NAN;
    double mx = fmt_max(f);
    if (isinf(x))
        return f->saturate ? copysign(mx, x) : x;
    if (x == 0)
        return x;
    double ax = fabs(x);
    int e;
    frexp(ax, &e);
    int E = e - 1, emin = 1 - f->bias;
    if (E < emin)
        E = emin;
    double q = ldexp(1.0, E - f->mbits);
    double r = nearbyint(ax / q) * q;
    if (r > mx)
        r = f->saturate ? mx : INFINITY;
    return copysign(r, x);
}

static double ulp_f16(double x) {
    double ax = fabs(x);
    if (ax < ldexp(1.0, -14))
        return ldexp(1.0, -24);
    int e;
    frexp(ax, &e);
    return ldexp(1.0, e - 1 - 10);
}

/* float -> int conversion of the language: truncate, saturate, NaN gives 0 */
static int64_t f2i_sat(double x, int64_t lo, int64_t hi) {
    if (isnan(x))
        return 0;
    x = trunc(x);
    if (x <= (double)lo)
        return lo;
    if (x >= (double)hi)
        return hi;
    return (int64_t)x;
}

/* ---- comparisons ------------------------------------------------------------------------ */
/* Compares got against expected, |got - exp| <= tol[i] (tol NULL: exact). NaN matches NaN only;
 * an infinity matches only the same infinity. Prints the first mismatch and the count. */
static int check_close(const char *what, const double *got, const double *exp, const double *tol, size_t n) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], e = exp[i], t = tol ? tol[i] : 0.0;
        bool ok;
        if (isnan(e) || isnan(g))
            ok = isnan(e) && isnan(g);
        else if (isinf(e) || isinf(g))
            ok = g == e;
        else
            ok = fabs(g - e) <= t;
        if (!ok && bad++ == 0)
            first = i;
    }
    if (bad) {
        double t = tol ? tol[first] : 0.0;
        fprintf(stderr,
                "MISMATCH %s: %zu of %zu elements wrong; first at index %zu: got %.9g, expected "
                "%.9g (|diff| %.3g, tolerance %.3g)\n",
                what, bad, n, first, got[first], exp[first], fabs(got[first] - exp[first]), t);
        return 1;
    }
    return 0;
}

static int check_exact_int(const char *what, const int64_t *got, const int64_t *exp, size_t n) {
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != exp[i] && bad++ == 0)
            first = i;
    if (bad) {
        fprintf(stderr,
                "MISMATCH %s: %zu of %zu elements wrong; first at index %zu: got %" PRId64 ", expected %" PRId64 "\n",
                what, bad, n, first, got[first], exp[first]);
        return 1;
    }
    return 0;
}

/* Converting helpers: buffers to double / int64 arrays. */
static double *f32_to_d(const float *p, size_t n) {
    double *d = xcalloc(n, sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = p[i];
    return d;
}

static double *fmt_to_d(const Fmt *f, const void *p, size_t esize, size_t n) {
    double *d = xcalloc(n, sizeof *d);
    for (size_t i = 0; i < n; i++) {
        uint32_t b = esize == 1 ? ((const uint8_t *)p)[i] : ((const uint16_t *)p)[i];
        d[i] = fmt_decode(f, b);
    }
    return d;
}

static int64_t *i32_to_l(const int32_t *p, size_t n) {
    int64_t *d = xcalloc(n, sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = p[i];
    return d;
}

/* Output buffer NAME, n elements of f32 (i32), against exp: the last step of most checks. */
static int check_f32(const char *name, size_t n, const double *exp, const double *tol) {
    return check_close(name, f32_to_d(READ(float, name, n), n), exp, tol, n);
}

static int check_i32(const char *name, size_t n, const int64_t *exp) {
    return check_exact_int(name, i32_to_l(READ(int32_t, name, n), n), exp, n);
}

/* f16 results: within one f16 ulp of the exact value, plus rel * scale[i] for the
 * rounding noise of f32 intermediates in cancellations. */
static int check_f16_ulp(const char *what, const uint16_t *got, const double *exp, const double *scale, double rel,
                         size_t n) {
    double *g = fmt_to_d(&F16, got, 2, n), *tol = xcalloc(n, sizeof *tol);
    for (size_t i = 0; i < n; i++)
        tol[i] = ulp_f16(exp[i]) + rel * scale[i];
    int r = check_close(what, g, exp, tol, n);
    free(g);
    free(tol);
    return r;
}

/* ---- the kernels' references ------------------------------------------------------------- */
/* vector_add: f32 addition is exact against C's float addition. */
static int ref_vector_add(void) {
    long n = argi("n");
    float *x = READ(float, "x", n), *y = READ(float, "y", n), *out = READ(float, "out", n);
    double *g = f32_to_d(out, n), *e = xcalloc(n, sizeof *e);
    for (long i = 0; i < n; i++)
        e[i] = (float)(x[i] + y[i]);
    return check_close("out", g, e, NULL, n);
}

/* softmax: rel 1e-5 (f32 exp and a sum of up to 4096 positive terms). */
static int ref_softmax(void) {
    long rows = argi("rows"), cols = argi("cols"), n = rows * cols;
    float *x = READ(float, "x", n), *out = READ(float, "out", n);
    double *e = xcalloc(n, sizeof *e), *tol = xcalloc(n, sizeof *tol);
    for (long r = 0; r < rows; r++) {
        const float *xr = x + r * cols;
        double mx = -INFINITY, s = 0;
        for (long c = 0; c < cols; c++)
            mx = fmax(mx, xr[c]);
        for (long c = 0; c < cols; c++)
            s += exp(xr[c] - mx);
        for (long c = 0; c < cols; c++) {
            e[r * cols + c] = exp(xr[c] - mx) / s;
            tol[r * cols + c] = 1e-5 * e[r * cols + c];
        }
    }
    return check_close("out", f32_to_d(out, n), e, tol, n);
}

/* layernorm: f16 output within 1 ulp, plus 1e-5 * (|normalised * w| + |b|) where the
 * affine step cancels. */
static int ref_layernorm(void) {
    long rows = argi("rows"), cols = argi("cols"), n = rows * cols;
    double eps = (float)argf("eps");
    uint16_t *x = READ(uint16_t, "x", n), *w = READ(uint16_t, "w", cols), *b = READ(uint16_t, "b", cols),
             *y = READ(uint16_t, "y", n);
    double *e = xcalloc(n, sizeof *e), *scale = xcalloc(n, sizeof *scale);
    for (long r = 0; r < rows; r++) {
        double mean = 0, var = 0;
        for (long c = 0; c < cols; c++)
            mean += fmt_decode(&F16, x[r * cols + c]);
        mean /= cols;
        for (long c = 0; c < cols; c++) {
            double d = fmt_decode(&F16, x[r * cols + c]) - mean;
            var += d * d;
        }
        double rstd = 1.0 / sqrt(var / cols + eps);
        for (long c = 0; c < cols; c++) {
            double t = (fmt_decode(&F16, x[r * cols + c]) - mean) * rstd * fmt_decode(&F16, w[c]);
            double bb = fmt_decode(&F16, b[c]);
            e[r * cols + c] = t + bb;
            scale[r * cols + c] = fabs(t) + fabs(bb);
        }
    }
    return check_f16_ulp("y", y, e, scale, 1e-5, n);
}

/* row_stats: sums within 1e-5 * sum|x|; max, min exact; norms rel 1e-5. */
static int ref_row_stats(void) {
    long rows = argi("rows"), cols = argi("cols");
    float *x = READ(float, "x", rows *cols);
    double *s = xcalloc(rows, 8), *st = xcalloc(rows, 8), *mx = xcalloc(rows, 8), *mn = xcalloc(rows, 8),
           *nr = xcalloc(rows, 8), *nt = xcalloc(rows, 8);
    for (long r = 0; r < rows; r++) {
        double sum = 0, sabs = 0, sq = 0, hi = -INFINITY, lo = INFINITY;
        for (long c = 0; c < cols; c++) {
            double v = x[r * cols + c];
            sum += v;
            sabs += fabs(v);
            sq += v * v;
            hi = fmax(hi, v);
            lo = fmin(lo, v);
        }
        s[r] = sum;
        st[r] = 1e-5 * sabs;
        mx[r] = hi;
        mn[r] = lo;
        nr[r] = sqrt(sq);
        nt[r] = 1e-5 * nr[r];
    }
    return check_f32("sums", rows, s, st) | check_f32("maxs", rows, mx, NULL) | check_f32("mins", rows, mn, NULL) |
           check_f32("norms", rows, nr, nt);
}

/* col_sum: within 1e-5 * sum_r |x[r, c]|. */
static int ref_col_sum(void) {
    long rows = argi("rows"), cols = argi("cols");
    float *x = READ(float, "x", rows *cols);
    double *e = xcalloc(cols, 8), *t = xcalloc(cols, 8);
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++) {
            e[c] += x[r * cols + c];
            t[c] += 1e-5 * fabs(x[r * cols + c]);
        }
    return check_f32("out", cols, e, t);
}

/* logsumexp: within 1e-5 + 1e-6 * |lse| (f32 exp2 arguments and the running sum). */
static int ref_logsumexp(void) {
    long rows = argi("rows"), cols = argi("cols");
    float *x = READ(float, "x", rows *cols);
    double *e = xcalloc(rows, 8), *t = xcalloc(rows, 8);
    for (long r = 0; r < rows; r++) {
        double mx = -INFINITY, s = 0;
        for (long c = 0; c < cols; c++)
            mx = fmax(mx, x[r * cols + c]);
        for (long c = 0; c < cols; c++)
            s += exp(x[r * cols + c] - mx);
        e[r] = mx + log(s);
        t[r] = 1e-5 + 1e-6 * fabs(e[r]);
    }
    return check_f32("out", rows, e, t);
}

/* cumsum_rows: within 1e-5 * sum_{j <= c} |x[r, j]|; exclusive_scan: exact. */
static int ref_cumsum_rows(void) {
    long rows = argi("rows"), cols = argi("cols"), n = rows * cols;
    float *x = READ(float, "x", n);
    double *e = xcalloc(n, 8), *t = xcalloc(n, 8);
    for (long r = 0; r < rows; r++) {
        double s = 0, sa = 0;
        for (long c = 0; c < cols; c++) {
            s += x[r * cols + c];
            sa += fabs(x[r * cols + c]);
            e[r * cols + c] = s;
            t[r * cols + c] = 1e-5 * sa;
        }
    }
    return check_f32("out", n, e, t);
}

static int ref_exclusive_scan(void) {
    long rows = argi("rows"), cols = argi("cols"), n = rows * cols;
    int32_t *x = READ(int32_t, "counts", n);
    int64_t *e = xcalloc(n, 8);
    for (long r = 0; r < rows; r++) {
        int32_t s = 0;
        for (long c = 0; c < cols; c++) {
            e[r * cols + c] = s;
            s = (int32_t)((uint32_t)s + (uint32_t)x[r * cols + c]);
        }
    }
    return check_i32("offs", n, e);
}

/* row_argmax: indices and the maximum exact (first index on ties). */
static int ref_row_argmax(void) {
    long rows = argi("rows"), cols = argi("cols");
    float *x = READ(float, "x", rows *cols);
    int64_t *imax = xcalloc(rows, 8), *imin = xcalloc(rows, 8);
    double *vmax = xcalloc(rows, 8);
    for (long r = 0; r < rows; r++) {
        long bi = 0, si = 0;
        for (long c = 1; c < cols; c++) {
            if (x[r * cols + c] > x[r * cols + bi])
                bi = c;
            if (x[r * cols + c] < x[r * cols + si])
                si = c;
        }
        imax[r] = bi;
        imin[r] = si;
        vmax[r] = x[r * cols + bi];
    }
    return check_i32("idx_max", rows, imax) | check_i32("idx_min", rows, imin) | check_f32("vmax", rows, vmax, NULL);
}

/* histogram: exact counts and bounds, from the initial hist and bounds (the .in files). */
static int ref_histogram(void) {
    long n = argi("n"), nbins = argi("nbins");
    int32_t *x = READ(int32_t, "x", n), *h0 = READ_IN(int32_t, "hist", nbins), *b0 = READ_IN(int32_t, "bounds", 2);
    int64_t *h = i32_to_l(h0, nbins), *b = i32_to_l(b0, 2);
    for (long i = 0; i < n; i++) {
        h[((x[i] % nbins) + nbins) % nbins]++;
        if (x[i] > b[0])
            b[0] = x[i];
        if (x[i] < b[1])
            b[1] = x[i];
    }
    return check_i32("hist", nbins, h) | check_i32("bounds", 2, b);
}

/* hist_drain: out is the old hist, hist is zero afterwards. */
static int ref_hist_drain(void) {
    long nbins = argi("nbins");
    int64_t *old = i32_to_l(READ_IN(int32_t, "hist", nbins), nbins), *zero = xcalloc(nbins, 8);
    return check_i32("out", nbins, old) |
           check_exact_int("hist (after the drain)", i32_to_l(READ(int32_t, "hist", nbins), nbins), zero, nbins);
}

/* distinct: exact count, first positions and seen flags. */
static int ref_distinct(void) {
    long n = argi("n"), nv = argi("nvals");
    int32_t *x = READ(int32_t, "x", n);
    int64_t *first = i32_to_l(READ_IN(int32_t, "first", nv), nv), count = 0;
    int64_t *seen = xcalloc(nv, 8);
    for (long i = 0; i < n; i++) {
        long v = ((x[i] % nv) + nv) % nv;
        if (!seen[v]++)
            count++;
        if (i < first[v])
            first[v] = i;
    }
    for (long v = 0; v < nv; v++)
        seen[v] = seen[v] != 0;
    int64_t c0 = READ_IN(int32_t, "count", 1)[0];
    count += c0;
    return check_i32("count", 1, &count) | check_i32("first", nv, first) |
           check_exact_int("seen", i32_to_l(READ(int32_t, "seen", nv + 1), nv), seen, nv);
}

/* transpose, tma_transpose: exact. */
static int ref_transpose(void) {
    long rows = argi("rows"), cols = argi("cols"), n = rows * cols;
    float *x = READ(float, "x", n);
    double *e = xcalloc(n, 8);
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < cols; j++)
            e[j * rows + i] = x[i * cols + j];
    return check_f32("y", n, e, NULL);
}

static int ref_interleave(void) {
    long n = argi("n");
    float *re = READ(float, "re", n), *im = READ(float, "im", n);
    double *e = xcalloc(2 * n, 8);
    for (long i = 0; i < n; i++) {
        e[2 * i] = re[i];
        e[2 * i + 1] = im[i];
    }
    return check_f32("out", 2 * n, e, NULL);
}

/* activation: within 1e-5 * |f(x)| + 1e-6 (f32 transcendental functions). */
static double act_ref(int act, double x) {
    switch (act) {
    case 0: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case 1: return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case 2: return x / (1.0 + exp(-x));
    case 3: return fmax(x, 0.0) + log1p(exp(-fabs(x)));
    default: return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    }
}

static int ref_activation(void) {
    long n = argi("n"), act = argi("ACT");
    float *x = READ(float, "x", n);
    double *e = xcalloc(n, 8), *t = xcalloc(n, 8);
    for (long i = 0; i < n; i++) {
        e[i] = act_ref((int)act, x[i]);
        t[i] = 1e-5 * fabs(e[i]) + 1e-6;
    }
    return check_f32("y", n, e, t);
}

/* add_posenc: the frequency w_j follows the kernel's f32 steps (each correctly rounded),
 * the sine in double; within 1e-6 * (1 + |x|) + 2.5e-7 * |angle| (an ulp of w moves the
 * angle by that much). */
static int ref_add_posenc(void) {
    long seq = argi("seq"), dim = argi("dim"), n = seq * dim;
    float base = (float)argf("base");
    float *x = READ(float, "x", n);
    double *e = xcalloc(n, 8), *t = xcalloc(n, 8);
    float l2 = (float)log2((double)base);
    for (long j = 0; j < dim; j++) {
        float pair = (float)(j - j % 2);
        float arg = (-l2 * pair) / (float)dim;
        float w = (float)exp2((double)arg);
        for (long p = 0; p < seq; p++) {
            float angle = (float)p * w;
            double pe = j % 2 == 0 ? sin((double)angle) : cos((double)angle);
            e[p * dim + j] = x[p * dim + j] + pe;
            t[p * dim + j] = 1e-6 * (1.0 + fabs(x[p * dim + j])) + 2.5e-7 * fabs(angle);
        }
    }
    return check_f32("y", n, e, t);
}

/* quant_f8: scale must be the smallest power of two >= amax/448 (either neighbour where
 * amax/448 is within 1e-6 of a power of two: f32 log2 may round onto the integer);
 * q must equal x / scale rounded to e4m3 (nearest even, saturating) exactly. */
static int ref_quant_f8(void) {
    long rows = argi("rows"), cols = argi("cols"), n = rows * cols;
    float *x = READ(float, "x", n), *sc = READ(float, "scales", rows);
    uint8_t *q = READ(uint8_t, "q", n);
    double *e = xcalloc(n, 8), *g = fmt_to_d(&E4M3, q, 1, n);
    int bad_scale = 0;
    for (long r = 0; r < rows; r++) {
        double amax = 0;
        for (long c = 0; c < cols; c++)
            amax = fmax(amax, fabs(x[r * cols + c]));
        amax = fmax(amax, (float)1e-30);
        double ratio = amax / 448.0, s0 = ldexp(1.0, (int)ceil(log2(ratio)));
        double s = sc[r];
        int ex;
        bool pow2 = s > 0 && frexp(s, &ex) == 0.5;
        bool near_pow2 = fabs(ratio / ldexp(1.0, (int)lround(log2(ratio))) - 1.0) < 1e-6;
        bool ok = pow2 && (s == s0 || (near_pow2 && (s == 2 * s0 || s == s0 / 2)));
        if (!ok && !bad_scale++)
            fprintf(stderr,
                    "MISMATCH scales: row %ld: got %.9g, expected the power of two %.9g "
                    "(amax %.9g)\n",
                    r, s, s0, amax);
        for (long c = 0; c < cols; c++)
            e[r * cols + c] = fmt_round(&E4M3, (float)(x[r * cols + c] / (float)s));
    }
    return (bad_scale != 0) | check_close("q (e4m3)", g, e, NULL, n);
}

/* quant_i8: mirrors the kernel's f32 steps, so exact. */
static int ref_quant_i8(void) {
    long rows = argi("rows"), cols = argi("cols"), n = rows * cols;
    float *x = READ(float, "x", n);
    int8_t *q = READ(int8_t, "q", n);
    int64_t *e = xcalloc(n, 8), *g = xcalloc(n, 8);
    double *es = xcalloc(rows, 8);
    for (long r = 0; r < rows; r++) {
        float amax = 0;
        for (long c = 0; c < cols; c++)
            amax = fmaxf(amax, fabsf(x[r * cols + c]));
        amax = fmaxf(amax, 1e-30f);
        float inv = 127.0f / amax;
        for (long c = 0; c < cols; c++) {
            float t = x[r * cols + c] * inv;
            t = t + 0.5f;
            float v = fminf(fmaxf(floorf(t), -127.0f), 127.0f);
            e[r * cols + c] = (int64_t)v;
            g[r * cols + c] = q[r * cols + c];
        }
        es[r] = amax / 127.0f;
    }
    return check_exact_int("q (i8)", g, e, n) | check_f32("scales", rows, es, NULL);
}

/* convert: every format exact (value and sign of zero through the decoded value). */
static int ref_convert(void) {
    long n = argi("n");
    float *x = READ(float, "x", n);
    double *eh = xcalloc(n, 8), *eb = xcalloc(n, 8), *e5 = xcalloc(n, 8), *e4 = xcalloc(n, 8);
    int64_t *ei = xcalloc(n, 8), *eu = xcalloc(n, 8), *gi, *gu = xcalloc(n, 8);
    for (long i = 0; i < n; i++) {
        eh[i] = fmt_round(&F16, x[i]);
        eb[i] = fmt_round(&BF16, x[i]);
        e5[i] = fmt_round(&E5M2, x[i]);
        e4[i] = fmt_round(&E4M3, eh[i]);
        ei[i] = f2i_sat(x[i], INT32_MIN, INT32_MAX);
        eu[i] = f2i_sat(x[i], 0, 255);
    }
    uint8_t *bytes = READ(uint8_t, "bytes", n);
    for (long i = 0; i < n; i++)
        gu[i] = bytes[i];
    gi = i32_to_l(READ(int32_t, "ints", n), n);
    /* signed zeros: compare 1/x too, so -0 and +0 differ */
    int r = check_close("h (f16)", fmt_to_d(&F16, READ(uint16_t, "h", n), 2, n), eh, NULL, n) |
            check_close("b (bf16)", fmt_to_d(&BF16, READ(uint16_t, "b", n), 2, n), eb, NULL, n) |
            check_close("e5 (f8e5m2)", fmt_to_d(&E5M2, READ(uint8_t, "e5", n), 1, n), e5, NULL, n) |
            check_close("e4 (f8e4m3)", fmt_to_d(&E4M3, READ(uint8_t, "e4", n), 1, n), e4, NULL, n) |
            check_close("back (f16 -> f32)", f32_to_d(READ(float, "back", n), n), eh, NULL, n) |
            check_exact_int("ints (f32 -> i32)", gi, ei, n) | check_exact_int("bytes (f32 -> u8)", gu, eu, n);
    uint16_t *h = READ(uint16_t, "h", n);
    for (long i = 0; i < n && !r; i++)
        if (eh[i] == 0 && (h[i] >> 15) != (signbit(eh[i]) != 0)) {
            fprintf(stderr, "MISMATCH h (f16): index %ld: sign of zero wrong (x = %g)\n", i, x[i]);
            r = 1;
        }
    return r;
}

/* hash_keys: exact; C semantics on int32_t / uint32_t. */
static int ref_hash_keys(void) {
    long n = argi("n");
    int32_t nb = (int32_t)argi("nb"), d = (int32_t)argi("d");
    int32_t *k = READ(int32_t, "keys", n);
    int64_t *eh = xcalloc(n, 8), *eb = xcalloc(n, 8), *eq = xcalloc(n, 8), *er = xcalloc(n, 8), *ef = xcalloc(n, 8),
            *ex = xcalloc(n, 8), *gh = xcalloc(n, 8);
    uint32_t *hash = READ(uint32_t, "hash", n);
    for (long i = 0; i < n; i++) {
        uint32_t h = (uint32_t)k[i];
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
        h ^= h >> 16;
        eh[i] = h;
        gh[i] = hash[i];
        eb[i] = (int32_t)(h % (uint32_t)nb);
        eq[i] = k[i] / d;
        er[i] = k[i] % d;
        ef[i] = ((k[i] % d) + d) % d;
        ex[i] = (int32_t)((~(uint32_t)k[i] ^ ((uint32_t)k[i] << 3)) | ((uint32_t)(k[i] >> 2) & 0xffu));
    }
    return check_exact_int("hash", gh, eh, n) | check_i32("bucket", n, eb) | check_i32("quot", n, eq) |
           check_i32("rem", n, er) | check_i32("fmod", n, ef) | check_i32("bits", n, ex);
}

/* axpby: beta = 0: alpha * x exactly (y not read); else fma(alpha, x, beta * y) within one
 * f32 ulp (an fma evaluated through double may round twice). */
static int ref_axpby(void) {
    long n = argi("n");
    float alpha = (float)argf("alpha"), beta = (float)argf("beta");
    float *x = READ(float, "x", n), *y0 = READ_IN(float, "y", n);
    double *e = xcalloc(n, 8), *t = xcalloc(n, 8);
    for (long i = 0; i < n; i++) {
        float v = beta == 0.0f ? alpha * x[i] : fmaf(alpha, x[i], beta * y0[i]);
        e[i] = v;
        t[i] = beta == 0.0f ? 0.0 : nextafterf(fabsf(v), INFINITY) - fabsf(v);
    }
    return check_f32("y", n, e, t);
}

/* rmsnorm: rel 1e-5. */
static int ref_rmsnorm(void) {
    long rows = argi("rows"), cols = argi("cols"), n = rows * cols;
    double eps = (float)argf("eps");
    float *x = READ(float, "x", n), *w = READ(float, "w", cols);
    double *e = xcalloc(n, 8), *t = xcalloc(n, 8);
    for (long r = 0; r < rows; r++) {
        double ms = 0;
        for (long c = 0; c < cols; c++)
            ms += (double)x[r * cols + c] * x[r * cols + c];
        double rs = 1.0 / sqrt(ms / cols + eps);
        for (long c = 0; c < cols; c++) {
            e[r * cols + c] = x[r * cols + c] * rs * w[c];
            t[r * cols + c] = 1e-5 * fabs(e[r * cols + c]);
        }
    }
    return check_f32("y", n, e, t);
}

/* bmm32*: within rel * sum_k |a b| per element: 1e-5 for f16 and f32 inputs (f32
 * accumulation), 2^-9 + 1e-5 for tf32 (each input keeps 10 mantissa bits); tf32 must also
 * really round: some element must differ from the exact-f32 result by more than 1e-5 * sum. */
static int ref_bmm(int kind) {
    enum { T = 32 };
    long batch = argi("batch"), n = batch * T * T;
    double *a = xcalloc(n, 8), *b = xcalloc(n, 8), *e = xcalloc(n, 8), *t = xcalloc(n, 8);
    if (kind == 0) {
        uint16_t *ah = READ(uint16_t, "a", n), *bh = READ(uint16_t, "b", n);
        for (long i = 0; i < n; i++) {
            a[i] = fmt_decode(&F16, ah[i]);
            b[i] = fmt_decode(&F16, bh[i]);
        }
    } else {
        float *af = READ(float, "a", n), *bf = READ(float, "b", n);
        for (long i = 0; i < n; i++) {
            a[i] = af[i];
            b[i] = bf[i];
        }
    }
    double rel = kind == 2 ? ldexp(1.0, -9) + 1e-5 : 1e-5;
    for (long z = 0; z < batch; z++)
        for (long i = 0; i < T; i++)
            for (long j = 0; j < T; j++) {
                double s = 0, sa = 0;
                for (long k = 0; k < T; k++) {
                    double p = a[z * T * T + i * T + k] * b[z * T * T + k * T + j];
                    s += p;
                    sa += fabs(p);
                }
                e[z * T * T + i * T + j] = s;
                t[z * T * T + i * T + j] = rel * sa;
            }
    double *g = f32_to_d(READ(float, "c", n), n);
    int r = check_close("c", g, e, t, n);
    if (kind == 2 && !r) {
        long rounded = 0;
        for (long i = 0; i < n; i++)
            if (fabs(g[i] - e[i]) > t[i] / rel * 1e-5)
                rounded++;
        if (!rounded) {
            fprintf(stderr, "MISMATCH c: precision=\"tf32\" gave the exact fp32 result "
                            "everywhere; the inputs were not rounded to tf32\n");
            r = 1;
        }
    }
    return r;
}
static int ref_bmm32(void) {
    return ref_bmm(0);
}
static int ref_bmm32_f32(void) {
    return ref_bmm(1);
}
static int ref_bmm32_tf32(void) {
    return ref_bmm(2);
}

/* ---- the dot examples: matrices given by strides -------------------------------------- */
/* Element types of the dot examples' buffers. */
typedef enum { T_F16, T_F32, T_I8, T_I32, T_E4M3 } ElemT;
static const size_t elem_size[] = {2, 4, 1, 4, 1};
/* the bytes of a poisoned element (0xff...) read back as this, for the padding check */
static double elem_get(ElemT t, const void *p, size_t i) {
    switch (t) {
    case T_F16: return fmt_decode(&F16, ((const uint16_t *)p)[i]);
    case T_F32: return ((const float *)p)[i];
    case T_I8: return ((const int8_t *)p)[i];
    case T_I32: return ((const int32_t *)p)[i];
    case T_E4M3: return fmt_decode(&E4M3, ((const uint8_t *)p)[i]);
    }
    return 0;
}

/* A whole buffer DIR/NAME.bin, however long; *count gets its element count. */
static void *read_all(const char *name, size_t esize, size_t *count) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", g_dir, name);
    FILE *f = fopen(path, "rb");
    long len = -1;
    if (f && !fseek(f, 0, SEEK_END))
        len = ftell(f);
    if (f)
        fclose(f);
    if (len < 0 || len % (long)esize) {
        fprintf(stderr, "example_ref: cannot read %s (or its size is not a multiple of %zu)\n", path, esize);
        exit(1);
    }
    *count = (size_t)len / esize;
    return read_buf(name, "bin", esize, *count);
}

/* A rows x cols matrix at element base + i * sr + j * sc of buffer `buf`. */
typedef struct Mat {
    const char *buf;
    ElemT t;
    long base, rows, cols, sr, sc;
} Mat;

static Mat mat(const char *buf, ElemT t, long rows, long cols, const char *sr, const char *sc) {
    return (Mat){buf, t, 0, rows, cols, argi(sr), argi(sc)};
}

static long mat_index(const Mat *m, long i, long j) {
    return m->base + i * m->sr + j * m->sc;
}

/* The matrix as doubles, dense row-major; every element must lie inside the buffer. */
static double *mat_read(const Mat *m) {
    size_t n;
    void *p = read_all(m->buf, elem_size[m->t], &n);
    double *d = xcalloc((size_t)(m->rows * m->cols), sizeof *d);
    for (long i = 0; i < m->rows; i++)
        for (long j = 0; j < m->cols; j++) {
            long x = mat_index(m, i, j);
            if (x < 0 || (size_t)x >= n) {
                fprintf(stderr, "example_ref: %s[%ld, %ld] at %ld is outside its %zu elements\n", m->buf, i, j, x, n);
                exit(1);
            }
            d[i * m->cols + j] = elem_get(m->t, p, (size_t)x);
        }
    free(p);
    return d;
}

/* Output matrices m[0..nm) (batches of one buffer) against exp/tol (dense, m[k]'s block at
 * k * rows * cols; tol NULL: exact); every element of the buffer outside them must still
 * hold its poison (all bits set): a store that strays past the matrix fails. */
static int mat_check(const Mat *m, int nm, const double *exp, const double *tol) {
    size_t n;
    void *p = read_all(m[0].buf, elem_size[m[0].t], &n);
    long per = m[0].rows * m[0].cols;
    double *g = xcalloc((size_t)(per * nm), sizeof *g);
    bool *inside = xcalloc(n, sizeof *inside);
    for (int k = 0; k < nm; k++)
        for (long i = 0; i < m[k].rows; i++)
            for (long j = 0; j < m[k].cols; j++) {
                long x = mat_index(&m[k], i, j);
                if (x < 0 || (size_t)x >= n) {
                    fprintf(stderr, "example_ref: %s[%ld, %ld] at %ld is outside its %zu elements\n", m[k].buf, i, j, x,
                            n);
                    exit(1);
                }
                inside[x] = true;
                g[k * per + i * m[k].cols + j] = elem_get(m[k].t, p, (size_t)x);
            }
    int r = check_close(m[0].buf, g, exp, tol, (size_t)(per * nm));
    size_t es = elem_size[m[0].t], stray = 0, first = 0;
    for (size_t x = 0; x < n; x++) {
        if (inside[x])
            continue;
        for (size_t b = 0; b < es; b++)
            if (((const uint8_t *)p)[x * es + b] != 0xff) {
                if (stray++ == 0)
                    first = x;
                break;
            }
    }
    if (stray) {
        fprintf(stderr, "MISMATCH %s: %zu elements outside the matrix were written; first at %zu\n", m[0].buf, stray,
                first);
        r = 1;
    }
    free(p);
    free(g);
    free(inside);
    return r;
}

/* The exact product of dense a (M x K) and b (K x N), and sum_k |a b| per element. */
static void exact_product(const double *a, const double *b, long M, long N, long K, double *e, double *s) {
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            double acc = 0, sa = 0;
            for (long k = 0; k < K; k++) {
                double p = a[i * K + k] * b[k * N + j];
                acc += p;
                sa += fabs(p);
            }
            e[i * N + j] = acc;
            s[i * N + j] = sa;
        }
}

/* Bound of an f32 sum of K terms in any order against the exact sum: K * 2^-24 * sum |terms|
 * (each of the K - 1 additions rounds by at most 2^-24 of a partial sum <= sum |terms|). */
static double f32_sum_bound(long K, double s) {
    return (double)K * 0x1p-24 * s;
}

/* matmul, batched_matmul: f16 C within one f16 ulp of the exact product plus the f32
 * accumulation bound; C's buffer outside the matrices untouched. */
static int ref_matmul(void) {
    long M = argi("M"), N = argi("N"), K = argi("K");
    Mat ma = mat("a", T_F16, M, K, "stride_am", "stride_ak"), mb = mat("b", T_F16, K, N, "stride_bk", "stride_bn"),
        mc = mat("c", T_F16, M, N, "stride_cm", "stride_cn");
    double *a = mat_read(&ma), *b = mat_read(&mb);
    double *e = xcalloc(M * N, 8), *s = xcalloc(M * N, 8), *t = xcalloc(M * N, 8);
    exact_product(a, b, M, N, K, e, s);
    for (long i = 0; i < M * N; i++)
        t[i] = ulp_f16(e[i]) + f32_sum_bound(K, s[i]);
    return mat_check(&mc, 1, e, t);
}

static int ref_batched_matmul(void) {
    long Z = argi("batch"), M = argi("M"), N = argi("N"), K = argi("K");
    long za = argi("stride_az"), zb = argi("stride_bz"), zc = argi("stride_cz");
    double *e = xcalloc(Z * M * N, 8), *t = xcalloc(Z * M * N, 8), *s = xcalloc(M * N, 8);
    Mat *mc = xcalloc(Z, sizeof *mc);
    for (long z = 0; z < Z; z++) {
        Mat ma = mat("a", T_F16, M, K, "stride_am", "stride_ak"), mb = mat("b", T_F16, K, N, "stride_bk", "stride_bn");
        mc[z] = mat("c", T_F16, M, N, "stride_cm", "stride_cn");
        ma.base = z * za;
        mb.base = z * zb;
        mc[z].base = z * zc;
        double *a = mat_read(&ma), *b = mat_read(&mb), *ez = e + z * M * N;
        exact_product(a, b, M, N, K, ez, s);
        for (long i = 0; i < M * N; i++)
            t[z * M * N + i] = ulp_f16(ez[i]) + f32_sum_bound(K, s[i]);
        free(a);
        free(b);
    }
    return mat_check(mc, (int)Z, e, t);
}

/* matmul_gelu: y = acc + bias in f32 (acc within the accumulation bound, the add rounds
 * by 2^-24 |y|), gelu in f32 (|gelu'| <= 1.13 carries the error of y; erf and the
 * products add a few f32 ulps, bounded by 1e-6 (|y| + 1)), then one f16 rounding. */
static int ref_matmul_gelu(void) {
    long M = argi("M"), N = argi("N"), K = argi("K");
    Mat ma = mat("a", T_F16, M, K, "stride_am", "stride_ak"), mb = mat("b", T_F16, K, N, "stride_bk", "stride_bn"),
        mc = mat("c", T_F16, M, N, "stride_cm", "stride_cn");
    double *a = mat_read(&ma), *b = mat_read(&mb);
    double *bias = fmt_to_d(&F16, READ(uint16_t, "bias", N), 2, N);
    double *e = xcalloc(M * N, 8), *s = xcalloc(M * N, 8), *t = xcalloc(M * N, 8);
    exact_product(a, b, M, N, K, e, s);
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            long x = i * N + j;
            double y = e[x] + bias[j];
            double ey = f32_sum_bound(K, s[x]) + 0x1p-24 * fabs(y);
            e[x] = 0.5 * y * (1.0 + erf(y / sqrt(2.0)));
            t[x] = ulp_f16(e[x]) + 1.13 * ey + 1e-6 * (fabs(y) + 1.0);
        }
    return mat_check(&mc, 1, e, t);
}

/* f32 -> tf32, round to nearest even (what precision="tf32" does to each input). */
static double tf32_round(double x) {
    static const Fmt TF32 = {"tf32", 8, 10, 127, true, false};
    return fmt_round(&TF32, x);
}

/* gemm_tf32: the inputs rounded to tf32 here too, so only the f32 accumulation bound is
 * left; and the rounding must really happen: some element must differ from the product
 * of the unrounded inputs by more than that bound (else the inputs went in as f32). */
static int ref_gemm_tf32(void) {
    long M = argi("M"), N = argi("N"), K = argi("K");
    Mat ma = mat("a", T_F32, M, K, "stride_am", "stride_ak"), mb = mat("b", T_F32, K, N, "stride_bk", "stride_bn"),
        mc = mat("c", T_F32, M, N, "stride_cm", "stride_cn");
    double *a = mat_read(&ma), *b = mat_read(&mb);
    double *e = xcalloc(M * N, 8), *s = xcalloc(M * N, 8), *t = xcalloc(M * N, 8);
    double *ex = xcalloc(M * N, 8), *sx = xcalloc(M * N, 8);
    exact_product(a, b, M, N, K, ex, sx);
    for (long i = 0; i < M * K; i++)
        a[i] = tf32_round(a[i]);
    for (long i = 0; i < K * N; i++)
        b[i] = tf32_round(b[i]);
    exact_product(a, b, M, N, K, e, s);
    for (long i = 0; i < M * N; i++)
        t[i] = f32_sum_bound(K, s[i]) + 0x1p-24 * fabs(e[i]);
    int r = mat_check(&mc, 1, e, t);
    if (!r) {
        size_t n;
        float *c = read_all("c", 4, &n);
        long rounded = 0;
        for (long i = 0; i < M; i++)
            for (long j = 0; j < N; j++) {
                double v = c[mat_index(&mc, i, j)];
                if (fabs(v - ex[i * N + j]) > f32_sum_bound(K, sx[i * N + j]) + 0x1p-24 * fabs(ex[i * N + j]))
                    rounded++;
            }
        /* a 1 x 1 x 1 product whose inputs happen to be tf32 already is no evidence */
        if (!rounded && M * N * K >= 64) {
            fprintf(stderr, "MISMATCH c: precision=\"tf32\" gave the exact fp32 result "
                            "everywhere; the inputs were not rounded to tf32\n");
            r = 1;
        }
        free(c);
    }
    return r;
}

/* gemm_i8: exact (i32 sums of i8 products). */
static int ref_gemm_i8(void) {
    long M = argi("M"), N = argi("N"), K = argi("K");
    Mat ma = mat("a", T_I8, M, K, "stride_am", "stride_ak"), mb = mat("b", T_I8, K, N, "stride_bk", "stride_bn"),
        mc = mat("c", T_I32, M, N, "stride_cm", "stride_cn");
    double *a = mat_read(&ma), *b = mat_read(&mb);
    double *e = xcalloc(M * N, 8), *s = xcalloc(M * N, 8);
    exact_product(a, b, M, N, K, e, s); /* |sums| < 2^53: exact in double */
    return mat_check(&mc, 1, e, NULL);
}

/* matmul_naive: the same sums as matmul (f32 accumulation, then one f16 rounding). */
static int ref_matmul_naive(void) {
    return ref_matmul();
}

/* gemm_i8_scaled: the exact i32 product times 2^ea[i] * 2^eb[j], exact in f32 (|sums| < 2^24). */
static int ref_gemm_i8_scaled(void) {
    long M = argi("M"), N = argi("N"), K = argi("K");
    Mat ma = mat("a", T_I8, M, K, "stride_am", "stride_ak"), mb = mat("b", T_I8, K, N, "stride_bk", "stride_bn"),
        mc = mat("c", T_F32, M, N, "stride_cm", "stride_cn");
    double *a = mat_read(&ma), *b = mat_read(&mb);
    int8_t *ea = READ(int8_t, "ea", M), *eb = READ(int8_t, "eb", N);
    double *e = xcalloc(M * N, 8), *s = xcalloc(M * N, 8);
    exact_product(a, b, M, N, K, e, s);
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++)
            e[i * N + j] = ldexp(e[i * N + j], ea[i] + eb[j]);
    return mat_check(&mc, 1, e, NULL);
}

/* attention: softmax(Q K^T * scale) V per head, in double.  The kernel rounds P to f16
 * before its second dot (relative 2^-11 an element) while its row sum keeps P in f32, so
 * each output may differ by that much of sum_j p_j |v_j| / l, plus one f16 rounding. */
static int ref_attention(void) {
    long heads = argi("heads"), S = argi("S"), D = argi("D"), n = heads * S * D;
    double scale = (float)argf("scale");
    uint16_t *q = READ(uint16_t, "q", n), *k = READ(uint16_t, "k", n), *v = READ(uint16_t, "v", n),
             *o = READ(uint16_t, "o", n);
    double *e = xcalloc(n, 8), *mag = xcalloc(n, 8), *p = xcalloc(S, 8);
    for (long h = 0; h < heads; h++)
        for (long i = 0; i < S; i++) {
            const uint16_t *qi = q + (h * S + i) * D;
            double mx = -INFINITY, l = 0;
            for (long j = 0; j < S; j++) {
                const uint16_t *kj = k + (h * S + j) * D;
                double dotv = 0;
                for (long d = 0; d < D; d++)
                    dotv += fmt_decode(&F16, qi[d]) * fmt_decode(&F16, kj[d]);
                p[j] = dotv * scale;
                mx = fmax(mx, p[j]);
            }
            for (long j = 0; j < S; j++)
                l += p[j] = exp(p[j] - mx);
            for (long d = 0; d < D; d++) {
                double acc = 0, am = 0;
                for (long j = 0; j < S; j++) {
                    double vj = fmt_decode(&F16, v[(h * S + j) * D + d]);
                    acc += p[j] * vj;
                    am += p[j] * fabs(vj);
                }
                e[(h * S + i) * D + d] = acc / l;
                mag[(h * S + i) * D + d] = am / l;
            }
        }
    free(p);
    return check_f16_ulp("o", o, e, mag, 1.5e-3, n);
}

/* gemm_f8: e4m3 products are exact in f32, the sum within the accumulation bound; the two
 * scale multiplies in f32 round by 2^-24 each; then one f16 rounding. */
static int ref_gemm_f8(void) {
    long M = argi("M"), N = argi("N"), K = argi("K");
    Mat ma = mat("a", T_E4M3, M, K, "stride_am", "stride_ak"), mb = mat("b", T_E4M3, K, N, "stride_bk", "stride_bn"),
        mc = mat("c", T_F16, M, N, "stride_cm", "stride_cn");
    double *a = mat_read(&ma), *b = mat_read(&mb);
    float *sa = READ(float, "scale_a", M), *sb = READ(float, "scale_b", N);
    double *e = xcalloc(M * N, 8), *s = xcalloc(M * N, 8), *t = xcalloc(M * N, 8);
    exact_product(a, b, M, N, K, e, s);
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            long x = i * N + j;
            double sc = fabs((double)sa[i] * sb[j]);
            e[x] *= (double)sa[i] * sb[j];
            t[x] = ulp_f16(e[x]) + sc * f32_sum_bound(K, s[x]) + 0x1p-23 * fabs(e[x]);
        }
    return mat_check(&mc, 1, e, t);
}

/* dot_chain: T = A @ B rounded to f16, D = T @ C.  The kernel's f32 T is within
 * eT = bound(K) of the exact one, so its f16 rounding is one of round(T - eT),
 * round(T + eT): the reference takes round(T) and allows the larger distance to those
 * (0 unless T sits next to an f16 rounding boundary) times |C| in D; then D's own f32
 * accumulation bound over L and one f16 rounding. */
static int ref_dot_chain(void) {
    long M = argi("M"), N = argi("N"), K = argi("K"), L = argi("L");
    Mat ma = mat("a", T_F16, M, K, "stride_am", "stride_ak"), mb = mat("b", T_F16, K, L, "stride_bk", "stride_bl"),
        mc = mat("c", T_F16, L, N, "stride_cl", "stride_cn"), md = mat("d", T_F16, M, N, "stride_dm", "stride_dn");
    double *a = mat_read(&ma), *b = mat_read(&mb), *c = mat_read(&mc);
    double *tt = xcalloc(M * L, 8), *st = xcalloc(M * L, 8), *dt = xcalloc(M * L, 8);
    exact_product(a, b, M, L, K, tt, st);
    for (long x = 0; x < M * L; x++) {
        double eT = f32_sum_bound(K, st[x]), r = fmt_round(&F16, tt[x]);
        dt[x] = fmax(fabs(fmt_round(&F16, tt[x] - eT) - r), fabs(fmt_round(&F16, tt[x] + eT) - r));
        tt[x] = r;
    }
    double *e = xcalloc(M * N, 8), *s = xcalloc(M * N, 8), *t = xcalloc(M * N, 8);
    exact_product(tt, c, M, N, L, e, s);
    for (long i = 0; i < M; i++)
        for (long j = 0; j < N; j++) {
            double carried = 0;
            for (long l = 0; l < L; l++)
                carried += dt[i * L + l] * fabs(c[l * N + j]);
            t[i * N + j] = ulp_f16(e[i * N + j]) + f32_sum_bound(L, s[i * N + j] + carried) + carried;
        }
    return mat_check(&md, 1, e, t);
}

/* gather: exact; negative indices count from the end. */
static int ref_gather(void) {
    long n = argi("n"), size = argi("size");
    float *table = READ(float, "table", size);
    int32_t *idx = READ(int32_t, "idx", n);
    double *e = xcalloc(n, 8);
    for (long i = 0; i < n; i++)
        e[i] = table[idx[i] < 0 ? idx[i] + size : idx[i]];
    return check_f32("out", n, e, NULL);
}

// clang-format off
#define REFS(X) \
    X(vector_add) \
    X(softmax) \
    X(layernorm) \
    X(matmul) \
    X(row_stats) \
    X(col_sum) \
    X(logsumexp) \
    X(cumsum_rows) \
    X(exclusive_scan) \
    X(row_argmax) \
    X(histogram) \
    X(hist_drain) \
    X(distinct) \
    X(transpose) \
    X(interleave) \
    X(activation) \
    X(add_posenc) \
    X(quant_f8) \
    X(quant_i8) \
    X(convert) \
    X(hash_keys) \
    X(axpby) \
    X(rmsnorm) \
    X(bmm32) \
    X(bmm32_f32) \
    X(bmm32_tf32) \
    X(gather) \
    X(batched_matmul) \
    X(matmul_gelu) \
    X(gemm_tf32) \
    X(gemm_i8) \
    X(gemm_i8_scaled) \
    X(matmul_naive) \
    X(gemm_f8) \
    X(dot_chain) \
    X(attention)
// clang-format on

static const struct {
    const char *name;
    int (*fn)(void);
} refs[] = {
#define X(n) {#n, ref_##n},
    REFS(X)
#undef X
        {"tma_transpose", ref_transpose},
};

/* ---- input generators ------------------------------------------------------------------- */
static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void put32(uint32_t w) {
    fwrite(&w, 4, 1, stdout);
}

/* A float that exercises conversions: specials, exact ties of the narrow formats, and
 * values spread over 2^-30 .. 2^40 with random mantissas. */
static float wide_value(uint64_t *s) {
    uint64_t r = rng_next(s);
    float sign = (r & 1) ? -1.0f : 1.0f;
    switch ((r >> 1) % 16) {
    case 0: {
        static const float special[] = {0.0f,     INFINITY,   NAN,      65504.0f, 65520.0f,      448.0f,
                                        464.0f,   57344.0f,   61440.0f, 255.5f,   2147483648.0f, 0x1p-24f,
                                        0x1p-25f, 0x1.8p-24f, 0x1p-10f, 1.0f};
        return sign * special[(r >> 8) % 16];
    }
    case 1: /* halfway between two f16 (and so f8) neighbours */
        return sign * ldexpf(1.0f + (float)(((r >> 8) % 1024) * 2 + 1) / 2048.0f, (int)((r >> 20) % 30) - 15);
    case 2: /* halfway between two bf16 neighbours */
        return sign * ldexpf(1.0f + (float)(((r >> 8) % 128) * 2 + 1) / 256.0f, (int)((r >> 20) % 60) - 30);
    default: {
        float m = 1.0f + (float)((r >> 8) & 0x7fffff) / 8388608.0f;
        return sign * ldexpf(m, (int)((r >> 32) % 71) - 30);
    }
    }
}

static int gen(int argc, char **argv) {
    if (argc < 3)
        return 2;
    const char *kind = argv[2];
    if (!strcmp(kind, "poison") && argc == 4) {
        long n = strtol(argv[3], NULL, 0);
        for (long i = 0; i < n; i++)
            putchar(0xff);
        return 0;
    }
    if (argc < 5)
        return 2;
    long n = strtol(argv[3], NULL, 0);
    uint64_t s = strtoull(argv[4], NULL, 0) * 0x9e3779b97f4a7c15ull + 12345;
    if (!strcmp(kind, "ints") && argc == 7) {
        int64_t lo = strtoll(argv[5], NULL, 0), hi = strtoll(argv[6], NULL, 0);
        for (long i = 0; i < n; i++)
            put32((uint32_t)(int32_t)(lo + (int64_t)(rng_next(&s) % (uint64_t)(hi - lo + 1))));
    } else if (!strcmp(kind, "bytes") && argc == 7) {
        int64_t lo = strtoll(argv[5], NULL, 0), hi = strtoll(argv[6], NULL, 0);
        for (long i = 0; i < n; i++)
            putchar((int)(uint8_t)(int8_t)(lo + (int64_t)(rng_next(&s) % (uint64_t)(hi - lo + 1))));
    } else if (!strcmp(kind, "uniform") && argc == 6) {
        double scale = strtod(argv[5], NULL);
        for (long i = 0; i < n; i++) {
            float f = (float)(scale * ((double)(rng_next(&s) >> 11) * 0x1p-52 - 1.0));
            fwrite(&f, 4, 1, stdout);
        }
    } else if (!strcmp(kind, "wide") && argc == 5) {
        for (long i = 0; i < n; i++) {
            float f = wide_value(&s);
            fwrite(&f, 4, 1, stdout);
        }
    } else if (!strcmp(kind, "fill32") && argc == 5) {
        uint32_t w = (uint32_t)strtoul(argv[4], NULL, 0);
        for (long i = 0; i < n; i++)
            put32(w);
    } else {
        return 2;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "gen")) {
        int r = gen(argc, argv);
        if (r == 2)
            fprintf(stderr,
                    "usage: example_ref gen ints COUNT SEED LO HI | bytes COUNT SEED LO HI | uniform COUNT SEED "
                    "SCALE | wide COUNT SEED | fill32 COUNT HEX | poison BYTES\n");
        return r;
    }
    if (argc >= 4 && !strcmp(argv[1], "check")) {
        g_dir = argv[3];
        g_kv = argv + 4;
        g_nkv = argc - 4;
        for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++)
            if (!strcmp(refs[i].name, argv[2]))
                return refs[i].fn() ? 1 : 0;
        fprintf(stderr, "example_ref: no reference for kernel '%s'\n", argv[2]);
        return 2;
    }
    fprintf(stderr, "usage: example_ref gen ... | check KERNEL DIR NAME=VALUE...\n");
    return 2;
}
