/* Every `dot` example on the cuda device, on fresh random inputs, against a plain C reference
 * in double and, where it is fast enough, against the interpreter too.  One line per case,
 * then a summary.
 *
 *   gpu_dot [--seed=S] [--only=LABEL1,LABEL2] [--max-macs=N] [--self-check]
 *
 * --only runs the named kernels (the labels printed: matmul_f16, matmul_bf16, matmul_gelu,
 * batched_matmul, gemm_tf32, gemm_i8, gemm_f8, dot_chain); --max-macs skips the shapes of
 * more multiply-adds (the compute-sanitizer runs of tests/gpu/run.sh).
 *
 * Kernels: matmul (f16, and bf16: matmul.tile with its f16 pointer types and the output cast
 * replaced by bf16, loaded as source), matmul_gelu, batched_matmul, gemm_tf32, gemm_i8,
 * gemm_f8 (sm_89 and newer; below that the compile must fail with "needs sm_89 or later"),
 * dot_chain.
 * Shapes: M, N, K each take every value of {1, 16, 17, 100, 1000, 4095} (six triples, each
 * value once per dimension; dot_chain's L is a fourth rotation of the same list), plus
 * 256 x 128 x 64 with aligned strides (the div16 specialization) and, for matmul f16 and
 * bf16 only, 4096 x 4096 x 4096.  Operands and outputs are row-major or transposed through
 * their strides (rotating per case), rows padded by 0 or 3 elements, and one case of
 * 100 x 72 x 136 with every matrix strided both ways (every other column: no unit stride,
 * the generic form); batched_matmul runs
 * 3 batches (2 at the big shapes) with a gap between batches, or one B broadcast to all
 * (stride_bz = 0).
 * Outputs start poisoned (0xff bytes: NaN in f16/bf16/f32, -1 in i32): every element of the
 * matrix must be written and every other element of its buffer (row padding, gaps) must
 * still be poison.  Tuning is off (tile_rt_options.tune = 0, like TILE_TUNE=0): the first
 * variant of each kernel runs, so the run stays short (compiles, not trials).
 *
 * References.  The C reference (double, all elements; a sample of 2048 random elements plus
 * the corners at 4096^3) runs for every case; the interpreter runs too where the case has at
 * most 2^22 multiply-adds (above that it takes seconds per case) and the GPU result must
 * then also match it, within the sum of both tolerances (each is within its tolerance of the
 * exact value), or exactly for i8.
 * Tolerances against the exact value e, S = sum_k |a_k b_k| (the inputs as stored, tf32
 * inputs after rounding), from the accumulation order:
 *  - f32 accumulation of K products in any order (tensor-core blocks, then the K loop):
 *    each of the K additions is off by at most one f32 ulp of a partial sum <= S, so
 *    |acc - e| <= K 2^-23 S (2^-23, not 2^-24: the tensor cores' adders may truncate).
 *    f16, bf16, f8 products are exact in f32.
 *  - matmul, batched_matmul: one rounding to f16/bf16: + one ulp of e in that format.
 *  - gemm_tf32: the reference rounds the inputs to tf32 (nearest even, as the interpreter and
 *    the backend do) and adds 2^-24 |e|; i8: exact.
 *  - matmul_gelu: y = acc + bias (+2^-24 |y|), |gelu'| <= 1.13 carries y's error, erf and the
 *    products add <= 1e-6 (|y| + 1) (erf is 1.5e-7 absolute), then one f16 ulp.
 *  - gemm_f8: |scale_a scale_b| times the acc bound, + 2^-23 |e| for the two scale
 *    multiplies, + one f16 ulp.
 *  - dot_chain: T = A @ B rounded to f16 can land on either side of an f16 rounding boundary
 *    within T's bound eT: the reference rounds the exact T and allows dT = the larger distance
 *    of round(T -+ eT) to it (0 away from boundaries), carried through C as
 *    sum_l dT |C|; then the second accumulation's bound over L and one f16 ulp.
 * --self-check runs the interpreter as the device (cases within the interpreter's size only),
 * to check this harness on a machine without a GPU. */
#include "gpu_common.h"

#include <math.h>
#include <stdint.h>

#define INTERP_MAX_MACS (1LL << 22)
#define INTERP_MAX_OUT  (1LL << 16)

typedef enum { K_MATMUL, K_GELU, K_BATCHED, K_TF32, K_I8, K_F8, K_CHAIN } Kind;

typedef struct Spec {
    const char *label, *file, *kernel;
    Kind kind;
    tile_scalar in, out;
    bool bf16_source; /* matmul.tile with its f16 types replaced by bf16 */
} Spec;

static const Spec specs[] = {
    {"matmul_f16", "matmul.tile", "matmul", K_MATMUL, TILE_F16, TILE_F16, false},
    {"matmul_bf16", "matmul.tile", "matmul", K_MATMUL, TILE_BF16, TILE_BF16, true},
    {"matmul_gelu", "matmul_gelu.tile", "matmul_gelu", K_GELU, TILE_F16, TILE_F16, false},
    {"batched_matmul", "batched_matmul.tile", "batched_matmul", K_BATCHED, TILE_F16, TILE_F16, false},
    {"gemm_tf32", "gemm_tf32.tile", "gemm_tf32", K_TF32, TILE_F32, TILE_F32, false},
    {"gemm_i8", "gemm_i8.tile", "gemm_i8", K_I8, TILE_I8, TILE_I32, false},
    {"gemm_f8", "gemm_f8.tile", "gemm_f8", K_F8, TILE_F8E4M3, TILE_F16, false},
    {"dot_chain", "dot_chain.tile", "dot_chain", K_CHAIN, TILE_F16, TILE_F16, false},
};
#define NSPECS (int)(sizeof specs / sizeof *specs)

/* ---- random numbers ------------------------------------------------------------------ */
static uint64_t g_rng;
static uint64_t rng_next(void) {
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double rng_unit(void) {
    return (double)(rng_next() >> 11) * 0x1p-53;
}
static double rng_normal(void) {
    double u1 = 1.0 - rng_unit(), u2 = rng_unit();
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* ---- number formats ------------------------------------------------------------------- */
static double round_to(tile_scalar t, double x) {
    unsigned char b[8];
    double r;
    tile_store_elements(t, b, &x, 1);
    tile_load_elements(t, &r, b, 1);
    return r;
}
/* one unit in the last place of x in a format of mbits mantissa bits and minimum normal
 * exponent emin */
static double ulp_of(double x, int mbits, int emin) {
    int e;
    frexp(fabs(x), &e);
    if (x == 0 || e - 1 < emin)
        e = emin + 1;
    return ldexp(1.0, e - 1 - mbits);
}
static double ulp_out(tile_scalar t, double x) {
    switch (t) {
    case TILE_F16: return ulp_of(x, 10, -14);
    case TILE_BF16: return ulp_of(x, 7, -126);
    default: return 0; /* f32 and i32 outputs: no final rounding in the tolerances */
    }
}
static double tf32_round(double x) {
    /* keep 10 mantissa bits of an f32, nearest even (the inputs are f32 already) */
    if (x == 0 || !isfinite(x))
        return x;
    int e;
    frexp(fabs(x), &e);
    double q = ldexp(1.0, e - 1 - 10);
    return nearbyint(x / q) * q;
}

/* ---- matrices given by strides ---------------------------------------------------------- */
typedef struct Mat {
    int64_t rows, cols, sr, sc, n; /* n: elements of one batch's storage */
} Mat;

/* rows x cols, row-major (t = 'n') or transposed storage (t = 't'), rows padded by pad;
 * 's': row-major with every other column (no unit stride, an odd row stride: the generic
 * form, whose stages the kernels fill through registers) */
static Mat mat_make(int64_t rows, int64_t cols, char t, int64_t pad) {
    if (t == 't')
        return (Mat){rows, cols, 1, rows + pad, cols * (rows + pad)};
    if (t == 's')
        return (Mat){rows, cols, 2 * cols + pad + 1, 2, rows * (2 * cols + pad + 1)};
    return (Mat){rows, cols, cols + pad, 1, rows * (cols + pad)};
}
static int64_t at(const Mat *m, int64_t i, int64_t j) {
    return i * m->sr + j * m->sc;
}

typedef struct Host {
    tile_scalar t;
    size_t count, bytes;
    void *data;
} Host;

static Host host_new(tile_scalar t, size_t count) {
    Host h = {t, count, count * tile_scalar_size(t), NULL};
    h.data = malloc(h.bytes + 1);
    return h;
}

/* fresh values for every element (padding included): normal for floats, uniform [0.25, 1)
 * for scales, the whole range for i8 */
static void host_fill(Host *h, bool scale) {
    double *v = malloc((h->count + 1) * sizeof *v);
    for (size_t i = 0; i < h->count; i++)
        v[i] = h->t == TILE_I8 ? (double)(int)(rng_next() % 256) - 128
               : scale         ? 0.25 + 0.75 * rng_unit()
                               : rng_normal();
    tile_store_elements(h->t, h->data, v, h->count);
    free(v);
}

/* Batch z of matrix m in buffer h as dense doubles (row-major rows x cols), batch z at
 * element z * zs. */
static double *dense(const Host *h, const Mat *m, int64_t z, int64_t zs) {
    double *all = malloc((h->count + 1) * sizeof *all);
    double *d = malloc((size_t)(m->rows * m->cols + 1) * sizeof *d);
    tile_load_elements(h->t, all, h->data, h->count);
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++)
            d[i * m->cols + j] = all[z * zs + at(m, i, j)];
    free(all);
    return d;
}

/* ---- one case ------------------------------------------------------------------------------ */
typedef struct Shape {
    int64_t M, N, K, L, Z;
    char lay[5]; /* a, b, c (and d) storage: n, t or s */
    int64_t pad;
} Shape;

typedef struct Arg {
    const char *name;
    int buf; /* index into bufs, or -1: an integer */
    int64_t value;
} Arg;

typedef struct Totals {
    int pass, fail, skip;
} Totals;

/* the exact products: e[i,j] = sum_k a[i,k] b[k,j], s = sum |a b|, for the elements listed
 * (sample: n pairs of (i, j); NULL: all) */
static void products(const double *a, const double *b, int64_t M, int64_t N, int64_t K, double *e, double *s,
                     const int64_t *sample, int64_t ns) {
    double *bt = malloc((size_t)(N * K + 1) * sizeof *bt);
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++)
            bt[j * K + k] = b[k * N + j];
    int64_t total = sample ? ns : M * N;
    for (int64_t x = 0; x < total; x++) {
        int64_t i = sample ? sample[2 * x] : x / N, j = sample ? sample[2 * x + 1] : x % N;
        const double *ar = a + i * K, *bc = bt + j * K;
        double acc = 0, sa = 0;
        for (int64_t k = 0; k < K; k++) {
            double p = ar[k] * bc[k];
            acc += p;
            sa += fabs(p);
        }
        e[x] = acc;
        s[x] = sa;
    }
    free(bt);
}

static double acc_bound(int64_t K, double s) {
    return (double)K * 0x1p-23 * s;
}

typedef struct Check {
    int64_t bad, checked;
    char first[320];
} Check;

static void check_value(Check *c, const char *what, int64_t z, int64_t i, int64_t j, double g, double e, double tol) {
    c->checked++;
    bool ok = !isnan(g) && fabs(g - e) <= tol;
    if (!ok && c->bad++ == 0)
        snprintf(c->first, sizeof c->first,
                 "%s[%lld][%lld, %lld]: got %.9g, expected %.9g "
                 "(|diff| %.3g, tolerance %.3g)",
                 what, (long long)z, (long long)i, (long long)j, g, e, fabs(g - e), tol);
}

/* Runs spec sp at shape sh on dev (and on cpu for the interpreter check); prints one line. */
static void run_case(tile_rt *dev, tile_rt *cpu, tile_rt_kernel *kd, tile_rt_kernel *kc, const Spec *sp,
                     const Shape *sh, bool sampled, bool self, int arch, int64_t max_macs, Totals *t) {
    char label[200];
    int n0 = snprintf(label, sizeof label, "%s %lldx%lldx%lld", sp->label, (long long)sh->M, (long long)sh->N,
                      (long long)sh->K);
    if (sp->kind == K_CHAIN)
        n0 += snprintf(label + n0, sizeof label - (size_t)n0, " L=%lld", (long long)sh->L);
    if (sp->kind == K_BATCHED)
        n0 += snprintf(label + n0, sizeof label - (size_t)n0, " batch=%lld", (long long)sh->Z);
    snprintf(label + n0, sizeof label - (size_t)n0, " %s pad=%lld", sh->lay, (long long)sh->pad);
    int64_t M = sh->M, N = sh->N, K = sh->K, L = sh->L, Z = sh->Z;
    bool chain = sp->kind == K_CHAIN;
    int64_t macs = chain ? M * L * K + M * N * L : Z * M * N * K;
    bool interp = macs <= INTERP_MAX_MACS && Z * M * N <= INTERP_MAX_OUT;
    if (max_macs > 0 && macs > max_macs) {
        printf("SKIP %s: over --max-macs\n", label);
        t->skip++;
        return;
    }
    if (self && !interp) {
        printf("SKIP %s: too big for the interpreter as the device (--self-check)\n", label);
        t->skip++;
        return;
    }
    /* the operands: a (M x K), b (K x N or K x L), c (output, or chain's L x N), d (chain's
     * output); batches of batched_matmul at a stride of n + gap, B broadcast when gap < 0 */
    Mat ma = mat_make(M, K, sh->lay[0], sh->pad);
    Mat mb = mat_make(K, chain ? L : N, sh->lay[1], sh->pad);
    Mat mc = mat_make(chain ? L : M, N, sh->lay[2], sh->pad);
    Mat md = mat_make(M, N, sh->lay[3] ? sh->lay[3] : 'n', sh->pad);
    Mat *mout = chain ? &md : &mc;
    int64_t gap = sh->pad, za = ma.n + gap, zb = sh->lay[3] == 'b' ? 0 : mb.n + gap, zc = mc.n + gap;
    enum { BA, BB, BC, BD, BBIAS, BSA, BSB, NB };
    Host h[NB] = {0};
    h[BA] = host_new(sp->in, (size_t)(Z * za));
    h[BB] = host_new(sp->in, (size_t)(zb ? Z * zb : mb.n));
    h[BC] = host_new(chain ? sp->in : sp->out, (size_t)(chain ? mc.n : Z * zc));
    if (chain)
        h[BD] = host_new(sp->out, (size_t)md.n);
    if (sp->kind == K_GELU)
        h[BBIAS] = host_new(TILE_F16, (size_t)N);
    if (sp->kind == K_F8) {
        h[BSA] = host_new(TILE_F32, (size_t)M);
        h[BSB] = host_new(TILE_F32, (size_t)N);
    }
    int out = chain ? BD : BC;
    for (int i = 0; i < NB; i++)
        if (h[i].data) {
            if (i == out)
                memset(h[i].data, 0xff, h[i].bytes);
            else
                host_fill(&h[i], i == BSA || i == BSB);
        }
    Arg args[] = {
        {"a", BA, 0},
        {"b", BB, 0},
        {"c", BC, 0},
        {"d", BD, 0},
        {"bias", BBIAS, 0},
        {"scale_a", BSA, 0},
        {"scale_b", BSB, 0},
        {"M", -1, M},
        {"N", -1, N},
        {"K", -1, K},
        {"L", -1, L},
        {"batch", -1, Z},
        {"stride_am", -1, ma.sr},
        {"stride_ak", -1, ma.sc},
        {"stride_bk", -1, mb.sr},
        {"stride_bn", -1, mb.sc},
        {"stride_bl", -1, mb.sc},
        {"stride_cm", -1, mc.sr},
        {"stride_cn", -1, mc.sc},
        {"stride_cl", -1, mc.sr},
        {"stride_dm", -1, md.sr},
        {"stride_dn", -1, md.sc},
        {"stride_az", -1, za},
        {"stride_bz", -1, zb},
        {"stride_cz", -1, zc},
    };
    /* device buffers and the argument lists of both devices, in parameter order */
    void *dbuf[NB] = {0};
    Host ref_out = {0};
    tile_rt_arg ad[32], ac[32];
    int np = tile_rt_kernel_param_count(kd);
    bool ok = np <= 32;
    for (int i = 0; i < NB && ok; i++)
        if (h[i].data &&
            (tile_rt_alloc(dev, h[i].bytes, &dbuf[i]) || tile_rt_copy_to_device(dev, dbuf[i], h[i].data, h[i].bytes))) {
            printf("FAIL %s: %s\n", label, tile_rt_last_error(dev));
            ok = false;
        }
    if (ok && interp) {
        ref_out = host_new(h[out].t, h[out].count);
        memcpy(ref_out.data, h[out].data, h[out].bytes);
    }
    for (int p = 0; p < np && ok; p++) {
        const char *name = tile_rt_kernel_param_name(kd, p);
        const Arg *a = NULL;
        for (size_t i = 0; i < sizeof args / sizeof *args; i++)
            if (!strcmp(args[i].name, name))
                a = &args[i];
        if (!a || (a->buf >= 0 && !h[a->buf].data)) {
            printf("FAIL %s: no value for parameter '%s'\n", label, name);
            ok = false;
            break;
        }
        if (a->buf < 0) {
            ad[p] = ac[p] = (tile_rt_arg){.kind = TILE_RT_ARG_I64, .i64 = a->value};
            continue;
        }
        ad[p] = (tile_rt_arg){.kind = TILE_RT_ARG_PTR};
        ad[p].buf.ptr = dbuf[a->buf];
        ad[p].buf.bytes = h[a->buf].bytes;
        ac[p] = (tile_rt_arg){.kind = TILE_RT_ARG_PTR};
        ac[p].buf.ptr = a->buf == out ? ref_out.data : h[a->buf].data;
        ac[p].buf.bytes = h[a->buf].bytes;
    }
    double t0 = gpu_now();
    if (ok) {
        tile_rt_status s = tile_rt_launch(kd, ad, np, NULL, NULL);
        if (s == TILE_RT_OK)
            s = tile_rt_synchronize(dev);
        const char *err = tile_rt_last_error(dev);
        if (sp->kind == K_F8 && arch > 0 && arch < 89) {
            /* below sm_89 the compiler must refuse f8 dot cleanly */
            if (s != TILE_RT_OK && err && strstr(err, "needs sm_89 or later")) {
                printf("PASS %s: refused below sm_89 as it must: %s\n", label, err);
                t->pass++;
            } else {
                printf("FAIL %s: sm_%d must refuse f8 dot with \"needs sm_89 or later\", got "
                       "%s: %s\n",
                       label, arch, tile_rt_status_string(s), err ? err : "");
                t->fail++;
            }
            ok = false;
            goto done;
        }
        if (s != TILE_RT_OK) {
            printf("FAIL %s: launch: %s: %s\n", label, tile_rt_status_string(s), err);
            ok = false;
        } else if (tile_rt_copy_to_host(dev, h[out].data, dbuf[out], h[out].bytes)) {
            printf("FAIL %s: %s\n", label, tile_rt_last_error(dev));
            ok = false;
        }
    }
    double t_dev = gpu_now() - t0;
    if (ok && interp && tile_rt_launch(kc, ac, np, NULL, NULL)) {
        printf("FAIL %s: interpreter: %s\n", label, tile_rt_last_error(cpu));
        ok = false;
    }
    if (!ok) {
        t->fail++;
        goto done;
    }
    {
        /* the output buffer as doubles (device, interpreter), and which elements are inside */
        size_t n = h[out].count;
        double *g = malloc((n + 1) * sizeof *g), *r = interp ? malloc((n + 1) * sizeof *r) : NULL;
        tile_load_elements(h[out].t, g, h[out].data, n);
        if (r)
            tile_load_elements(h[out].t, r, ref_out.data, n);
        bool *inside = calloc(n + 1, 1);
        int64_t ns = sampled ? 2048 + 4 : 0, *sample = NULL;
        if (sampled) {
            sample = malloc((size_t)ns * 2 * sizeof *sample);
            for (int64_t x = 0; x < 2048; x++) {
                sample[2 * x] = (int64_t)(rng_next() % (uint64_t)M);
                sample[2 * x + 1] = (int64_t)(rng_next() % (uint64_t)N);
            }
            int64_t corners[4][2] = {{0, 0}, {0, N - 1}, {M - 1, 0}, {M - 1, N - 1}};
            memcpy(sample + 2 * 2048, corners, sizeof corners);
        }
        int64_t per = sampled ? ns : M * N;
        double *e = malloc((size_t)(per + 1) * sizeof *e), *s = malloc((size_t)(per + 1) * sizeof *s);
        double *tol = malloc((size_t)(per + 1) * sizeof *tol);
        Check cr = {0}, ci = {0};
        int64_t unwritten = 0;
        for (int64_t z = 0; z < Z; z++) {
            double *a = dense(&h[BA], &ma, z, za), *b = dense(&h[BB], &mb, z, zb);
            if (sp->kind == K_TF32) {
                for (int64_t i = 0; i < M * K; i++)
                    a[i] = tf32_round(a[i]);
                for (int64_t i = 0; i < K * mb.cols; i++)
                    b[i] = tf32_round(b[i]);
            }
            if (!chain) {
                products(a, b, M, N, K, e, s, sample, ns);
            } else {
                double *c = dense(&h[BC], &mc, 0, 0);
                double *tt = malloc((size_t)(M * L + 1) * sizeof *tt), *st = malloc((size_t)(M * L + 1) * sizeof *st),
                       *dt = malloc((size_t)(M * L + 1) * sizeof *dt);
                products(a, b, M, L, K, tt, st, NULL, 0);
                for (int64_t x = 0; x < M * L; x++) {
                    double eT = acc_bound(K, st[x]), rt = round_to(TILE_F16, tt[x]);
                    dt[x] = fmax(fabs(round_to(TILE_F16, tt[x] - eT) - rt), fabs(round_to(TILE_F16, tt[x] + eT) - rt));
                    tt[x] = rt;
                }
                products(tt, c, M, N, L, e, s, NULL, 0);
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double carried = 0;
                        for (int64_t l = 0; l < L; l++)
                            carried += dt[i * L + l] * fabs(c[l * N + j]);
                        tol[i * N + j] =
                            ulp_out(sp->out, e[i * N + j]) + acc_bound(L, s[i * N + j] + carried) + carried;
                    }
                free(c);
                free(tt);
                free(st);
                free(dt);
            }
            double *bias = NULL, *sa = NULL, *sb = NULL;
            if (sp->kind == K_GELU)
                bias = dense(&h[BBIAS], &(Mat){1, N, N, 1, N}, 0, 0);
            if (sp->kind == K_F8) {
                sa = dense(&h[BSA], &(Mat){1, M, M, 1, M}, 0, 0);
                sb = dense(&h[BSB], &(Mat){1, N, N, 1, N}, 0, 0);
            }
            for (int64_t x = 0; x < per; x++) {
                int64_t i = sampled ? sample[2 * x] : x / N, j = sampled ? sample[2 * x + 1] : x % N;
                double ev = e[x], tv = 0;
                switch (sp->kind) {
                case K_MATMUL:
                case K_BATCHED: tv = ulp_out(sp->out, ev) + acc_bound(K, s[x]); break;
                case K_TF32: tv = acc_bound(K, s[x]) + 0x1p-24 * fabs(ev); break;
                case K_I8: tv = 0; break;
                case K_GELU: {
                    double y = ev + bias[j];
                    ev = 0.5 * y * (1.0 + erf(y / sqrt(2.0)));
                    tv =
                        ulp_out(sp->out, ev) + 1.13 * (acc_bound(K, s[x]) + 0x1p-24 * fabs(y)) + 1e-6 * (fabs(y) + 1.0);
                    break;
                }
                case K_F8: {
                    double sc = sa[i] * sb[j];
                    ev *= sc;
                    tv = ulp_out(sp->out, ev) + fabs(sc) * acc_bound(K, s[x]) + 0x1p-23 * fabs(ev);
                    break;
                }
                case K_CHAIN: tv = tol[x]; break;
                }
                int64_t pos = (sp->kind == K_BATCHED ? z * zc : 0) + at(mout, i, j);
                check_value(&cr, "device vs C", z, i, j, g[pos], ev, tv);
                if (r)
                    check_value(&ci, "device vs interpreter", z, i, j, g[pos], r[pos], 2 * tv);
            }
            /* every element of the matrix written (not NaN poison; i32 poison is -1, a
             * possible value, so there the full comparison above is the check) */
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    int64_t pos = (sp->kind == K_BATCHED ? z * zc : 0) + at(mout, i, j);
                    inside[pos] = true;
                    if (isnan(g[pos]))
                        unwritten++;
                }
            free(a);
            free(b);
            free(bias);
            free(sa);
            free(sb);
        }
        /* outside the matrices: still poison */
        size_t es = tile_scalar_size(h[out].t), stray = 0;
        for (size_t x = 0; x < n; x++)
            if (!inside[x])
                for (size_t k = 0; k < es; k++)
                    if (((unsigned char *)h[out].data)[x * es + k] != 0xff) {
                        stray++;
                        break;
                    }
        if (cr.bad || ci.bad || unwritten || stray) {
            printf("FAIL %s: %lld of %lld wrong vs C%s%s; %lld of %lld vs interpreter%s%s; %lld "
                   "unwritten; %zu written outside (variant %s)\n",
                   label, (long long)cr.bad, (long long)cr.checked, cr.bad ? ": " : "", cr.first, (long long)ci.bad,
                   (long long)ci.checked, ci.bad ? ": " : "", ci.first, (long long)unwritten, stray,
                   tile_rt_last_variant(kd));
            t->fail++;
        } else {
            printf("PASS %s: %lld elements vs C%s%s, %.2fs on the device (variant %s)\n", label, (long long)cr.checked,
                   sampled ? " (sampled)" : "", interp ? " and the interpreter" : "", t_dev, tile_rt_last_variant(kd));
            t->pass++;
        }
        free(g);
        free(r);
        free(inside);
        free(sample);
        free(e);
        free(s);
        free(tol);
    }
done:
    for (int i = 0; i < NB; i++) {
        free(h[i].data);
        if (dbuf[i])
            tile_rt_free(dev, dbuf[i]);
    }
    free(ref_out.data);
}

/* The source of spec sp: the file, or matmul.tile made bf16 (NULL after printing FAIL). */
static tile_rt_module *load(tile_rt *rt, const Spec *sp) {
    tile_rt_module *m = NULL;
    const char *path = gpu_example(sp->file);
    if (!sp->bf16_source) {
        if (tile_rt_load_source_file(rt, path, &m)) {
            printf("FAIL %s: load %s: %s\n", sp->label, path, tile_rt_last_error(rt));
            return NULL;
        }
        return m;
    }
    FILE *f = fopen(path, "rb");
    static char src[1 << 16], outb[1 << 17];
    size_t len = f ? fread(src, 1, sizeof src - 1, f) : 0;
    if (f)
        fclose(f);
    src[len] = 0;
    /* "*f16" -> "*bf16" (the three pointers), "as f16" -> "as bf16" (the output cast) */
    int nptr = 0, ncast = 0;
    char *o = outb;
    for (const char *p = src; *p;) {
        if (!strncmp(p, "*f16", 4)) {
            o += sprintf(o, "*bf16");
            p += 4;
            nptr++;
        } else if (!strncmp(p, "as f16", 6)) {
            o += sprintf(o, "as bf16");
            p += 6;
            ncast++;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    if (nptr != 3 || ncast != 1) {
        printf("FAIL %s: %s no longer has three *f16 pointers and one `as f16` (found %d, %d): "
               "update gpu_dot.c's bf16 rewrite\n",
               sp->label, path, nptr, ncast);
        return NULL;
    }
    if (tile_rt_load_source(rt, "matmul_bf16.tile", outb, strlen(outb), &m)) {
        printf("FAIL %s: load: %s\n", sp->label, tile_rt_last_error(rt));
        return NULL;
    }
    return m;
}

int main(int argc, char **argv) {
    uint64_t seed = (uint64_t)time(NULL) * 2654435761u;
    bool self = false;
    const char *only = NULL;
    int64_t max_macs = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--only=", 7))
            only = argv[i] + 7;
        else if (!strncmp(argv[i], "--seed=", 7))
            seed = strtoull(argv[i] + 7, NULL, 0);
        else if (!strncmp(argv[i], "--max-macs=", 11))
            max_macs = strtoll(argv[i] + 11, NULL, 0);
        else if (!strcmp(argv[i], "--self-check"))
            self = true;
        else {
            fprintf(stderr, "usage: gpu_dot [--seed=S] [--only=L1,L2] [--max-macs=N] "
                            "[--self-check]\n");
            return 2;
        }
    }
    tile_rt_options o = {.device_ordinal = 0, .tune = 0, .tune_log = -1};
    tile_rt *dev = NULL, *cpu = NULL;
    if (self)
        tile_rt_open(TILE_RT_INTERP, &o, &dev);
    else if (!(dev = gpu_open(&o)))
        return GPU_SKIP;
    tile_rt_open(TILE_RT_INTERP, &o, &cpu);
    if (!dev || !cpu) {
        printf("FAIL: cannot open the interpreter: %s\n", tile_rt_open_error());
        return 1;
    }
    /* "NVIDIA H200 (sm_90a)": the arch number, for gemm_f8's expected refusal */
    int arch = 0;
    const char *sm = strstr(tile_rt_device_name(dev), "(sm_");
    if (sm)
        arch = atoi(sm + 4);
    printf("seed: %llu (replay with --seed=%llu)\n", (unsigned long long)seed, (unsigned long long)seed);
    g_rng = seed;
    static const int64_t vals[6] = {1, 16, 17, 100, 1000, 4095};
    static const char *lays[6] = {"nnn", "tnn", "ntn", "ttt", "nnt", "tnt"};
    Totals t = {0};
    double start = gpu_now();
    for (int si = 0; si < NSPECS; si++) {
        const Spec *sp = &specs[si];
        if (only) {
            char list[512], want[80];
            snprintf(list, sizeof list, ",%s,", only);
            snprintf(want, sizeof want, ",%s,", sp->label);
            if (!strstr(list, want))
                continue;
        }
        tile_rt_module *md = load(dev, sp), *mc = load(cpu, sp);
        tile_rt_kernel *kd = NULL, *kc = NULL;
        if (!md || !mc || tile_rt_get_kernel(md, sp->kernel, &kd) || tile_rt_get_kernel(mc, sp->kernel, &kc)) {
            if (md && mc)
                printf("FAIL %s: no kernel %s\n", sp->label, sp->kernel);
            t.fail++;
            tile_rt_module_free(md);
            tile_rt_module_free(mc);
            continue;
        }
        for (int c = 0; c < 9; c++) {
            Shape sh = {0};
            bool sampled = false;
            if (c < 6) {
                sh.M = vals[c];
                sh.N = vals[(c + 1) % 6];
                sh.K = vals[(c + 2) % 6];
                sh.L = vals[(c + 3) % 6];
                snprintf(sh.lay, sizeof sh.lay, "%s%c", lays[c], "ntnnbt"[c]);
                sh.pad = c % 2 ? 3 : 0;
            } else if (c == 6) {
                sh = (Shape){256, 128, 64, 128, 0, "nnnn", 0};
            } else if (c == 8) {
                sh = (Shape){100, 72, 136, 64, 0, "ssss", 2};
            } else {
                if (sp->kind != K_MATMUL)
                    continue;
                sh = (Shape){4096, 4096, 4096, 0, 0, "nnnn", 0};
                sampled = true;
            }
            /* the 4th letter: dot_chain's D storage; for batched_matmul 'b' broadcasts B */
            if (sp->kind != K_CHAIN && sp->kind != K_BATCHED)
                sh.lay[3] = 0;
            if (sp->kind == K_BATCHED && sh.lay[3] != 'b')
                sh.lay[3] = 0;
            if (sp->kind == K_CHAIN && sh.lay[3] == 'b')
                sh.lay[3] = 'n';
            sh.Z = sp->kind == K_BATCHED ? (sh.M * sh.N * sh.K > (1LL << 24) ? 2 : 3) : 1;
            run_case(dev, cpu, kd, kc, sp, &sh, sampled, self, arch, max_macs, &t);
            fflush(stdout);
        }
        tile_rt_module_free(md);
        tile_rt_module_free(mc);
    }
    printf("summary: %d passed, %d failed, %d skipped in %.1fs (seed %llu)\n", t.pass, t.fail, t.skip,
           gpu_now() - start, (unsigned long long)seed);
    tile_rt_close(dev);
    tile_rt_close(cpu);
    return t.fail ? 1 : 0;
}
