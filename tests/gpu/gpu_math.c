/* The math builtins on the GPU against the interpreter, bit for bit (docs/language.md,
 * "Accuracy, and the fast mode"): each f32 function, accurate and fast, on 10^7 inputs
 * (every f16 value, random bit patterns of every binade, uniform sweeps, the specials),
 * each f64 function on 2*10^6, every f16 and every bf16 value through the f16/bf16 forms.
 * The same kernel and inputs run on the CUDA device and on the interpreter device; any result
 * whose bits differ (NaN: any NaN) fails.  Exit 77 (SKIP) without a GPU.
 *   gpu_math [--n=N]      N f32 inputs per function (default 10000000)
 *   gpu_math --self-check the harness without a GPU: the interpreter on both sides, N = 200000 */
#include "gpu_common.h"

#include <math.h>
#include <stdint.h>

static const char *src = "kernel m(y: *T, x: *T, n: i32, const FN: i32, const FAST: bool)\n"
                         "    const BLOCK = 1024\n"
                         "    grid(cdiv(n, BLOCK))\n"
                         "{\n"
                         "    let i = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                         "    let msk = i < n;\n"
                         "    let v = load(x + i, mask=msk);\n"
                         "    var r = v;\n"
                         "    if FN == 0 { r = exp(v, fast=FAST); }\n"
                         "    else if FN == 1 { r = exp2(v, fast=FAST); }\n"
                         "    else if FN == 2 { r = log(v); }\n"
                         "    else if FN == 3 { r = log2(v); }\n"
                         "    else if FN == 4 { r = tanh(v, fast=FAST); }\n"
                         "    else if FN == 5 { r = sigmoid(v, fast=FAST); }\n"
                         "    else if FN == 6 { r = erf(v, fast=FAST); }\n"
                         "    else if FN == 7 { r = sin(v); }\n"
                         "    else if FN == 8 { r = cos(v); }\n"
                         "    else if FN == 9 { r = rsqrt(v); }\n"
                         "    else { r = sqrt(v); }\n"
                         "    store(y + i, r, mask=msk);\n"
                         "}\n";

static const char *fn_names[] = {"exp", "exp2", "log", "log2", "tanh", "sigmoid", "erf", "sin", "cos", "rsqrt", "sqrt"};
static const bool fn_has_fast[] = {1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0};
#define NFN 11

/* an f16 value widened (exact) */
static float f16_to_f32(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexpf((float)(m | 1024), e - 25) : ldexpf((float)m, -24);
    return h >> 15 ? -v : v;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next64(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* the source with *T replaced by *type */
static char *source_for(const char *t) {
    size_t n = strlen(src) * 2;
    char *out = malloc(n), *o = out;
    for (const char *p = src; *p; p++) {
        if (*p == 'T' && p > src && p[-1] == '*') {
            strcpy(o, t);
            o += strlen(t);
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return out;
}

typedef struct {
    tile_rt *rt;
    tile_rt_kernel *k;
    void *x, *y;
} Dev;

static bool dev_open(Dev *d, tile_rt *rt, const char *type, size_t bytes) {
    d->rt = rt;
    char *s = source_for(type);
    tile_rt_module *m;
    bool ok = tile_rt_load_source(rt, "gpu_math.tile", s, strlen(s), &m) == TILE_RT_OK &&
              tile_rt_get_kernel(m, "m", &d->k) == TILE_RT_OK && tile_rt_alloc(rt, bytes, &d->x) == TILE_RT_OK &&
              tile_rt_alloc(rt, bytes, &d->y) == TILE_RT_OK;
    free(s);
    if (!ok)
        printf("FAIL setup (%s): %s\n", type, tile_rt_last_error(rt));
    return ok;
}

/* runs FN/FAST on n elements of `in`, result in `out` */
static bool dev_run(Dev *d, int fn, int fast, const void *in, void *out, int n, size_t esize) {
    size_t bytes = (size_t)n * esize;
    tile_rt_arg a[3] = {{.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_I64}};
    a[0].buf.ptr = d->y, a[0].buf.bytes = bytes;
    a[1].buf.ptr = d->x, a[1].buf.bytes = bytes;
    a[2].i64 = n;
    if (tile_rt_copy_to_device(d->rt, d->x, in, bytes) || tile_rt_set_const(d->k, "FN", fn, 0) ||
        tile_rt_set_const(d->k, "FAST", fast, 0) || tile_rt_launch(d->k, a, 3, NULL, NULL) ||
        tile_rt_synchronize(d->rt) || tile_rt_copy_to_host(d->rt, out, d->y, bytes)) {
        printf("FAIL %s: %s\n", fn_names[fn], tile_rt_last_error(d->rt));
        return false;
    }
    return true;
}

static bool is_nan_bits(uint64_t u, size_t esize) {
    switch (esize) {
    case 2: return (u & 0x7fff) > 0x7c00; /* f16; bf16 is checked with its own mask below */
    case 4: return (u & 0x7fffffffu) > 0x7f800000u;
    default: return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    }
}

static int failures;

static void compare(const char *what, const void *in, const void *a, const void *b, int n, size_t esize, bool bf16) {
    long diff = 0;
    for (int i = 0; i < n; i++) {
        uint64_t u = 0, v = 0, x = 0;
        memcpy(&u, (const char *)a + (size_t)i * esize, esize);
        memcpy(&v, (const char *)b + (size_t)i * esize, esize);
        memcpy(&x, (const char *)in + (size_t)i * esize, esize);
        if (u == v)
            continue;
        bool nu = bf16 ? (u & 0x7fff) > 0x7f80 : is_nan_bits(u, esize);
        bool nv = bf16 ? (v & 0x7fff) > 0x7f80 : is_nan_bits(v, esize);
        if (nu && nv)
            continue;
        if (diff++ < 5)
            printf("  %s: input bits %#llx: GPU %#llx, interpreter %#llx\n", what, (unsigned long long)x,
                   (unsigned long long)u, (unsigned long long)v);
    }
    printf("%s %s: %d inputs, %ld differ\n", diff ? "FAIL" : "ok  ", what, n, diff);
    if (diff)
        failures++;
}

int main(int argc, char **argv) {
    int n = 10000000;
    bool self = false;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--n=", 4))
            n = atoi(argv[i] + 4);
        if (!strcmp(argv[i], "--self-check"))
            self = true, n = 200000;
    }
    if (n < 1000)
        n = 1000;
    tile_rt_options o = {.tune = 0, .tune_log = -1};
    tile_rt *gpu = NULL;
    if (self) {
        if (tile_rt_open(TILE_RT_INTERP, &o, &gpu) != TILE_RT_OK) {
            printf("FAIL interpreter: %s\n", tile_rt_open_error());
            return 1;
        }
    } else if (!(gpu = gpu_open(&o))) {
        return GPU_SKIP;
    }
    tile_rt *interp;
    if (tile_rt_open(TILE_RT_INTERP, &o, &interp) != TILE_RT_OK) {
        printf("FAIL interpreter: %s\n", tile_rt_open_error());
        return 1;
    }
    /* f32 */
    float *in = malloc(sizeof(float) * (size_t)n), *ga = malloc(sizeof(float) * (size_t)n),
          *ia = malloc(sizeof(float) * (size_t)n);
    int k = 0;
    for (uint32_t h = 0; h < 65536 && k < n; h++)
        in[k++] = f16_to_f32((uint16_t)h);
    const float special[] = {0.0f,
                             -0.0f,
                             INFINITY,
                             -INFINITY,
                             NAN,
                             0x1p-149f,
                             -0x1p-149f,
                             0x1p-126f,
                             0x1.fffffep127f,
                             88.72283935546875f,
                             -87.33654f,
                             -103.97208f,
                             89.0f,
                             -104.0f,
                             128.0f,
                             -126.0f,
                             -149.0f,
                             -150.0f,
                             1.0f,
                             0.625f,
                             0.875f,
                             4.0f,
                             -100.0f};
    for (size_t j = 0; j < sizeof special / sizeof special[0] && k < n; j++)
        in[k++] = special[j];
    while (k < n) {
        uint64_t r = next64();
        uint32_t u = (uint32_t)(r >> 32);
        float x;
        switch (r & 3) {
        case 0: memcpy(&x, &u, 4); break;                                    /* every binade */
        case 1: x = -10.0f + 20.0f * (float)(u >> 8) / 16777216.0f; break;   /* the core range */
        case 2: x = -120.0f + 240.0f * (float)(u >> 8) / 16777216.0f; break; /* exp's whole range */
        default: x = 1.0f + (float)(int32_t)(u >> 16) * 0x1p-23f; break;     /* next to 1 */
        }
        in[k++] = x;
    }
    Dev dg, di;
    if (!dev_open(&dg, gpu, "f32", sizeof(float) * (size_t)n) ||
        !dev_open(&di, interp, "f32", sizeof(float) * (size_t)n))
        return 1;
    char what[64];
    for (int fn = 0; fn < NFN; fn++)
        for (int fast = 0; fast <= fn_has_fast[fn]; fast++) {
            if (!dev_run(&dg, fn, fast, in, ga, n, 4) || !dev_run(&di, fn, fast, in, ia, n, 4)) {
                failures++;
                continue;
            }
            snprintf(what, sizeof what, "f32 %s%s", fast ? "fast " : "", fn_names[fn]);
            compare(what, in, ga, ia, n, 4, false);
        }
    /* f64 */
    int n64 = n / 5;
    double *din = malloc(sizeof(double) * (size_t)n64), *dga = malloc(sizeof(double) * (size_t)n64),
           *dia = malloc(sizeof(double) * (size_t)n64);
    for (int j = 0; j < n64; j++) {
        uint64_t r = next64();
        if (j & 1)
            memcpy(&din[j], &r, 8);
        else
            din[j] = -800.0 + 1600.0 * (double)(r >> 11) / 9007199254740992.0;
    }
    Dev eg, ei;
    if (dev_open(&eg, gpu, "f64", sizeof(double) * (size_t)n64) &&
        dev_open(&ei, interp, "f64", sizeof(double) * (size_t)n64))
        for (int fn = 0; fn < NFN; fn++) {
            if (!dev_run(&eg, fn, 0, din, dga, n64, 8) || !dev_run(&ei, fn, 0, din, dia, n64, 8)) {
                failures++;
                continue;
            }
            snprintf(what, sizeof what, "f64 %s", fn_names[fn]);
            compare(what, din, dga, dia, n64, 8, false);
        }
    else
        failures++;
    /* f16 and bf16: every value */
    uint16_t hin[65536], hga[65536], hia[65536];
    for (int j = 0; j < 65536; j++)
        hin[j] = (uint16_t)j;
    for (int t = 0; t < 2; t++) {
        Dev hg, hi;
        const char *ty = t ? "bf16" : "f16";
        if (!dev_open(&hg, gpu, ty, sizeof hin) || !dev_open(&hi, interp, ty, sizeof hin)) {
            failures++;
            continue;
        }
        for (int fn = 0; fn < NFN; fn++)
            for (int fast = 0; fast <= fn_has_fast[fn]; fast++) {
                if (!dev_run(&hg, fn, fast, hin, hga, 65536, 2) || !dev_run(&hi, fn, fast, hin, hia, 65536, 2)) {
                    failures++;
                    continue;
                }
                snprintf(what, sizeof what, "%s %s%s", ty, fast ? "fast " : "", fn_names[fn]);
                compare(what, hin, hga, hia, 65536, 2, t == 1);
            }
    }
    printf("%s: %d comparison(s) failed\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
