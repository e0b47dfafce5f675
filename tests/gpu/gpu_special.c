/* Special values on the GPU against the interpreter (tests/gpu/kernels/special_values.tile):
 * every pair of special inputs of each type (NaN of both signs, +-0, +-inf, the smallest and
 * largest subnormals and normals, the type's limits, negative integers, shift counts at and
 * past the width, zero divisors, INT_MIN / -1) through each operation, compared bit for bit
 * where the language defines the result exactly (docs/language.md's conversions, IEEE add,
 * sub, mul, fma, sqrt, f64 division, comparisons, integer arithmetic with the GPU's answers
 * for division by zero and shifts), with two stated exceptions: any NaN equals any NaN (the
 * GPU's canonical NaN and the host's payloads differ), and maximum/minimum of two zeros may
 * give either zero.  f32math (the approximate functions) is compared with the examples'
 * tolerance, NaN, infinities and their signs exactly.  A mismatch prints the kernel, the
 * operation block, the inputs and both results' bits.
 *
 *   gpu_special [--self-check]      (--self-check: the interpreter against itself, for CI)
 *
 * Exits 77 (CTest: skipped) without a GPU. */
#include "gpu_common.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

#define NB 8 /* buffers per kernel at most */

typedef enum { EXACT, ZEROS_EQUAL, TOLERANT } Rule;

typedef struct Kernel {
    const char *name;
    int nin; /* input buffers first, then outputs */
    int nout;
    int blocks[NB];  /* per output: how many blocks of n results */
    const char *ops; /* the output blocks' names, for messages ("add sub ...") */
    Rule rule;
} Kernel;

static const Kernel kernels[] = {
    {"f32ops", 3, 1, {10}, "add sub mul fma sqrt abs floor ceil neg where", EXACT},
    {"f32minmax", 2, 1, {2}, "maximum minimum", ZEROS_EQUAL},
    {"f32cmp", 2, 1, {6}, "== != < <= > >=", EXACT},
    {"f32cast", 1, 6, {1, 1, 1, 1, 1, 1}, "as_i32 as_u8 as_i64 as_f16 as_bf16 as_f64", EXACT},
    {"f64ops", 3, 1, {7}, "add mul div fma sqrt != as_f32", EXACT},
    {"i32ops", 2, 1, {16}, "+ - * / % >> << & | ^ max min < abs neg ~", EXACT},
    {"u32ops", 2, 1, {6}, ">> / % < max *", EXACT},
    {"i32cast", 1, 5, {1, 1, 1, 1, 1}, "as_f32 as_i8 as_u16 as_i64 as_f16", EXACT},
    {"i8ops", 2, 1, {5}, "+ * / >> <", EXACT},
    {"i64ops", 2, 1, {6}, "+ * / % >> <", EXACT},
    {"f32math", 1, 1, {9}, "exp exp2 log log2 sin cos tanh sigmoid erf", TOLERANT},
};

/* ---- special values --------------------------------------------------------------- */
static float f32bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static double f64bits(uint64_t u) {
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static float f32s[24];
static double f64s[20];
static const int32_t i32s[] = {0,
                               1,
                               -1,
                               2,
                               -2,
                               7,
                               -7,
                               15,
                               16,
                               31,
                               32,
                               33,
                               63,
                               100000,
                               -100000,
                               0x55555555,
                               INT32_MAX,
                               INT32_MIN,
                               INT32_MIN + 1,
                               INT32_MAX - 1,
                               16777217,
                               -16777217,
                               65535,
                               65536};
static const int8_t i8s[] = {0, 1, -1, 2, -2, 7, -7, 15, 16, 63, 64, 127, -128, -127, 100, -100};
static const int64_t i64s[] = {0,
                               1,
                               -1,
                               2,
                               -2,
                               31,
                               32,
                               63,
                               64,
                               65,
                               (int64_t)1 << 53,
                               ((int64_t)1 << 53) + 1,
                               INT64_MAX,
                               INT64_MIN,
                               INT64_MIN + 1,
                               -((int64_t)1 << 40),
                               4294967296LL,
                               4294967295LL};

static void init_specials(void) {
    const uint32_t f32b[24] = {
        0x00000000, 0x80000000, /* +0 -0 */
        0x3f800000, 0xbf800000, /* 1 -1 */
        0x3f000000, 0xc0e80000, /* 0.5 -7.25 */
        0x00800000, 0x80800000, /* +-FLT_MIN (smallest normal) */
        0x00000001, 0x80000001, /* +-smallest subnormal */
        0x007fffff, 0x80400000, /* largest subnormal, -2^-127 */
        0x7f7fffff, 0xff7fffff, /* +-FLT_MAX */
        0x7f800000, 0xff800000, /* +-inf */
        0x7fc00000, 0xffc00000, /* NaN, -NaN */
        0x4b800001, 0xcb7fffff, /* 16777218, -16777215: near 2^24 */
        0x4f000000, 0xcf000001, /* 2^31, just below -2^31 */
        0x477fe000, 0x43800000, /* 65504 (f16 max), 256 */
    };
    for (int i = 0; i < 24; i++)
        f32s[i] = f32bits(f32b[i]);
    const uint64_t f64b[20] = {
        0,
        0x8000000000000000ull,
        0x3ff0000000000000ull,
        0xbff0000000000000ull,
        0x0010000000000000ull,
        0x0000000000000001ull,
        0x800fffffffffffffull,
        0x7fefffffffffffffull,
        0xffefffffffffffffull,
        0x7ff0000000000000ull,
        0xfff0000000000000ull,
        0x7ff8000000000000ull,
        0xfff8000000000000ull,
        0x3fb999999999999aull /* 0.1 */,
        0xc00921fb54442d18ull /* -pi */,
        0x36a0000000000000ull /* 2^-149 as double */,
        0x47efffffe0000000ull /* FLT_MAX */,
        0x3ff0000000000001ull,
        0x4340000000000001ull,
        0x0008000000000000ull,
    };
    for (int i = 0; i < 20; i++)
        f64s[i] = f64bits(f64b[i]);
}

/* Input buffer k (0, 1, 2) of every pair (i, j) of the nv values: a = v[i], b = v[j],
 * c = v[(i * 7 + j) % nv]. */
static void fill_pairs(void *dst, const void *vals, int nv, size_t es, int k) {
    for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) {
            int src = k == 0 ? i : k == 1 ? j : (i * 7 + j) % nv;
            memcpy((char *)dst + (size_t)(i * nv + j) * es, (const char *)vals + (size_t)src * es, es);
        }
}

/* ---- comparing -------------------------------------------------------------------- */
static bool is_nan(int sc, const void *p) {
    uint64_t u = 0;
    switch (sc) {
    case TILE_F32: memcpy(&u, p, 4); return (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu);
    case TILE_F64:
        memcpy(&u, p, 8);
        return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0xfffffffffffffull);
    case TILE_F16: memcpy(&u, p, 2); return (u & 0x7c00) == 0x7c00 && (u & 0x3ff);
    case TILE_BF16: memcpy(&u, p, 2); return (u & 0x7f80) == 0x7f80 && (u & 0x7f);
    default: return false;
    }
}

static bool same(Rule rule, int sc, const void *g, const void *r, size_t es) {
    if (is_nan(sc, g) || is_nan(sc, r))
        return is_nan(sc, g) && is_nan(sc, r);
    if (!memcmp(g, r, es))
        return true;
    if (!tile_scalar_is_float((tile_scalar)sc) || rule == EXACT)
        return false;
    double gd, rd;
    tile_load_elements((tile_scalar)sc, &gd, g, 1);
    tile_load_elements((tile_scalar)sc, &rd, r, 1);
    if (rule == ZEROS_EQUAL)
        return gd == 0 && rd == 0;
    if (isinf(gd) || isinf(rd))
        return gd == rd;
    return fabs(gd - rd) <= 1e-5 + 2e-5 * fabs(rd);
}

static void hex(char *buf, const void *p, size_t es) {
    uint64_t u = 0;
    memcpy(&u, p, es);
    snprintf(buf, 24, "0x%0*llx", (int)(2 * es), (unsigned long long)u);
}

/* ---- running ---------------------------------------------------------------------- */
typedef struct Dev {
    tile_rt *rt;
    tile_rt_module *m;
} Dev;

/* Runs kernel kn on d with host buffers in[]/out[] (sizes bytes[]); false on an error
 * (printed). */
static bool run_on(Dev *d, const Kernel *kn, void **host, const size_t *bytes, int nb, int n) {
    tile_rt_kernel *k;
    if (tile_rt_get_kernel(d->m, kn->name, &k) != TILE_RT_OK) {
        printf("FAIL %s: %s\n", kn->name, tile_rt_last_error(d->rt));
        return false;
    }
    void *dev[NB] = {0};
    tile_rt_arg args[NB + 1];
    bool ok = true;
    for (int b = 0; b < nb && ok; b++) {
        ok = tile_rt_alloc(d->rt, bytes[b], &dev[b]) == TILE_RT_OK &&
             tile_rt_copy_to_device(d->rt, dev[b], host[b], bytes[b]) == TILE_RT_OK;
        args[b] = (tile_rt_arg){.kind = TILE_RT_ARG_PTR, .buf = {dev[b], bytes[b]}};
    }
    args[nb] = (tile_rt_arg){.kind = TILE_RT_ARG_I64, .i64 = n};
    ok = ok && tile_rt_launch(k, args, nb + 1, NULL, NULL) == TILE_RT_OK;
    for (int b = kn->nin; b < nb && ok; b++)
        ok = tile_rt_copy_to_host(d->rt, host[b], dev[b], bytes[b]) == TILE_RT_OK;
    if (!ok)
        printf("FAIL %s on %s: %s\n", kn->name, tile_rt_device_name(d->rt), tile_rt_last_error(d->rt));
    for (int b = 0; b < nb; b++)
        tile_rt_free(d->rt, dev[b]);
    return ok;
}

/* The values of the kernel's element type (its first parameter's). */
static const void *values_of(int sc, int *nv) {
    switch (sc) {
    case TILE_F32: *nv = 24; return f32s;
    case TILE_F64: *nv = 20; return f64s;
    case TILE_I32:
    case TILE_U32: *nv = (int)(sizeof i32s / sizeof *i32s); return i32s;
    case TILE_I8: *nv = (int)(sizeof i8s / sizeof *i8s); return i8s;
    case TILE_I64: *nv = (int)(sizeof i64s / sizeof *i64s); return i64s;
    default: *nv = 0; return NULL;
    }
}

static int check_kernel(Dev *gpu, Dev *ref, const Kernel *kn, int *ncompared) {
    tile_rt_kernel *k;
    if (tile_rt_get_kernel(ref->m, kn->name, &k) != TILE_RT_OK) {
        printf("FAIL %s: no such kernel\n", kn->name);
        return 1;
    }
    int nb = kn->nin + kn->nout, sc[NB];
    bool isp;
    for (int b = 0; b < nb; b++)
        tile_rt_kernel_param_type(k, b, &sc[b], &isp);
    int nv;
    const void *vals = values_of(sc[0], &nv);
    int n = nv * nv;
    void *g[NB], *r[NB];
    size_t bytes[NB], es[NB];
    for (int b = 0; b < nb; b++) {
        es[b] = tile_scalar_size((tile_scalar)sc[b]);
        size_t cnt = (size_t)n * (b < kn->nin ? 1 : (size_t)kn->blocks[b - kn->nin]);
        bytes[b] = cnt * es[b];
        g[b] = malloc(bytes[b]);
        r[b] = malloc(bytes[b]);
        if (b < kn->nin)
            fill_pairs(g[b], vals, nv, es[b], b);
        else
            memset(g[b], 0xff, bytes[b]); /* poisoned: an unwritten result shows */
        memcpy(r[b], g[b], bytes[b]);
    }
    int bad = 0;
    if (!run_on(gpu, kn, g, bytes, nb, n) || !run_on(ref, kn, r, bytes, nb, n))
        bad = 1;
    /* every block of every output was written by the interpreter (else two poisoned
     * buffers would compare equal) */
    for (int b = kn->nin; b < nb && !bad; b++)
        for (int blk = 0; blk < kn->blocks[b - kn->nin] && !bad; blk++) {
            const unsigned char *p = (const unsigned char *)r[b] + (size_t)blk * n * es[b];
            size_t e = 0;
            while (e < (size_t)n * es[b] && p[e] == 0xff)
                e++;
            if (e == (size_t)n * es[b]) {
                printf("FAIL %s: the interpreter left block %d of output %d unwritten\n", kn->name, blk, b - kn->nin);
                bad = 1;
            }
        }
    char ops[256];
    for (int b = kn->nin; b < nb && !bad; b++) {
        size_t cnt = bytes[b] / es[b];
        int shown = 0, wrong = 0;
        for (size_t e = 0; e < cnt; e++) {
            const char *gp = (const char *)g[b] + e * es[b], *rp = (const char *)r[b] + e * es[b];
            (*ncompared)++;
            if (same(kn->rule, sc[b], gp, rp, es[b]))
                continue;
            wrong++;
            if (shown++ >= 8)
                continue;
            /* which operation block, and the inputs of that element */
            int blk = (int)(e / (size_t)n), idx = (int)(e % (size_t)n);
            snprintf(ops, sizeof ops, "%s", kn->ops);
            char *op = strtok(ops, " ");
            int skip = blk;
            for (int o = kn->nin; o < b; o++)
                skip += kn->blocks[o - kn->nin];
            for (int s = 0; s < skip && op; s++)
                op = strtok(NULL, " ");
            char in[3][24], gh[24], rh[24];
            for (int a = 0; a < kn->nin; a++)
                hex(in[a], (const char *)g[a] + (size_t)idx * es[a], es[a]);
            hex(gh, gp, es[b]);
            hex(rh, rp, es[b]);
            printf("FAIL %s %s: inputs %s%s%s%s%s: gpu %s, interpreter %s\n", kn->name, op ? op : "?", in[0],
                   kn->nin > 1 ? " " : "", kn->nin > 1 ? in[1] : "", kn->nin > 2 ? " " : "", kn->nin > 2 ? in[2] : "",
                   gh, rh);
        }
        if (wrong) {
            printf("FAIL %s: %d of %zu results of output %d differ\n", kn->name, wrong, cnt, b - kn->nin);
            bad = 1;
        }
    }
    if (!bad)
        printf("ok   %s (%d pairs)\n", kn->name, n);
    for (int b = 0; b < nb; b++)
        free(g[b]), free(r[b]);
    return bad;
}

static bool load_dev(Dev *d, const char *path) {
    if (tile_rt_load_source_file(d->rt, path, &d->m) != TILE_RT_OK) {
        printf("FAIL loading %s: %s\n", path, tile_rt_last_error(d->rt));
        return false;
    }
    return true;
}

int main(int argc, char **argv) {
    bool self = argc > 1 && !strcmp(argv[1], "--self-check");
    init_specials();
    /* untuned: one variant each, and no trial launches on these tiny inputs */
    tile_rt_options o = {.tune = 0, .tune_log = -1};
    Dev gpu = {0}, ref = {0};
    if (self) {
        if (tile_rt_open(TILE_RT_INTERP, &o, &gpu.rt) != TILE_RT_OK)
            return 1;
    } else if (!(gpu.rt = gpu_open(&o))) {
        return GPU_SKIP;
    }
    if (tile_rt_open(TILE_RT_INTERP, &o, &ref.rt) != TILE_RT_OK)
        return 1;
    /* $TILEC_SPECIAL_KERNEL: the kernels' file where the build was carried elsewhere */
    const char *env = getenv("TILEC_SPECIAL_KERNEL");
    const char *path = env && *env ? env : TILEC_SPECIAL_KERNEL;
    if (!load_dev(&gpu, path) || !load_dev(&ref, path))
        return 1;
    int failed = 0, compared = 0;
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        failed += check_kernel(&gpu, &ref, &kernels[i], &compared);
    printf("%s: %d of %zu kernels differ (%d results compared)\n", failed ? "FAIL" : "ok", failed,
           sizeof kernels / sizeof *kernels, compared);
    tile_rt_module_free(gpu.m);
    tile_rt_module_free(ref.m);
    tile_rt_close(gpu.rt);
    tile_rt_close(ref.rt);
    return failed ? 1 : 0;
}
