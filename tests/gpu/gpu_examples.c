/* Every example of examples/run.txt whose file uses no `dot`, on the cuda device and on the
 * interpreter with the same fresh random inputs, at the size run.txt gives and at a
 * smaller and a larger ragged size; outputs compared (integers exactly, floats within the
 * tolerances below).  One line per case, then a summary.
 *
 *   gpu_examples [RUN_TXT] [--seed=S] [--self-check] [--only=K1,K2] [--given-size]
 *
 * --only runs the named kernels only and --given-size only run.txt's size (for the
 * compute-sanitizer runs of tests/gpu/run.sh).
 *
 * Fresh inputs: the base seed is the clock unless --seed is given; it is printed so a
 * failure can be replayed.  Buffers given as zeros:N are poisoned with 0xFF bytes before
 * the run (so a kernel that forgets to write shows garbage), except in files that use
 * atomics, whose accumulators must start at zero.  Sizes: the integer arguments named
 * n, rows, cols, seq, batch are scaled (small: 1 + v/100; large: 3v + 5, cols capped at 1997 so a
 * row fits the BLOCKs the examples tune); a buffer whose count was a product of some of them (times 1
 * or 2) is resized to match, other buffers keep their size.
 *
 * Tolerances (docs/backend.md, "Math accuracy"): f32 and f64 outputs |gpu - ref| <=
 * 1e-5 + 2e-5 |ref| (exp/log/rsqrt use the approximate PTX instructions; sums reduce in
 * another order); f16/bf16 <= 1e-3 + 1e-2 |ref| (one rounding of the narrow format);
 * f8 <= 1.5e-1 |ref| + 1e-3 (one step of the format); NaN equals NaN; integers exactly.
 * Prefix sums (files using cumsum): element c of a row is a sum of c + 1 terms that the GPU
 * adds as a tree and the interpreter in sequence; the difference of two orders scales with
 * the sum of the terms' magnitudes S_c, not with the result (which may cancel to ~0), so a
 * float output also passes with |gpu - ref| <= (log2(c + 1) + sqrt(c + 1)) * 2^-23 * S_c,
 * S_c the prefix sum of |x| over the row of the input buffer of the same size (rows of
 * `cols` elements; the whole buffer when there is no `cols`).  A missing or wrong term
 * still fails (an error of one |x| is far above this).
 * Row sums (files using sum(), an output of `rows` elements beside an input of rows x cols):
 * the same argument for the sum of a whole row, so element r also passes with
 * |gpu - ref| <= (log2(cols) + sqrt(cols)) * 2^-23 * S_r, S_r the sum of |x| over row r
 * (row_stats' sums of ~2000 randn values cancel to ~0.5 while S_r is ~1600: the orders
 * differed by 2.8e-5 once, over the relative bound and far under this one).
 * Amplified arguments (add_posenc): y = x + sin(p * w) with w = exp2(-log2(base) * k / dim)
 * computed with the approximate exp2, lg2 and division (each within 2 ulp, docs/backend.md),
 * so w carries a relative error up to about 6 ulp and the angle p * w an absolute error up
 * to p * w * 6 * 2^-24 <= p * 2^-21 (w <= 1); sin and cos pass that on unchanged.  Element
 * i of y (row p = i / dim) also passes with |gpu - ref| <= 1e-5 + p * 2^-21.  A wrong
 * frequency or phase is off by far more.
 * --self-check runs the interpreter against itself (for machines without a GPU). */
#include "gpu_common.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>

#define MAX_TOK  48
#define MAX_ARGS 32

typedef struct Case {
    char file[256], kernel[64];
    char *tok[MAX_TOK];
    int ntok;
    int64_t grid[3];
    bool has_grid;
} Case;

static const char *scaled_names[] = {"n", "rows", "cols", "seq", "batch"};

static bool is_scaled(const char *name) {
    for (size_t i = 0; i < sizeof scaled_names / sizeof *scaled_names; i++)
        if (!strcmp(name, scaled_names[i]))
            return true;
    return false;
}

static int64_t scale(const char *name, int64_t v, int size) {
    if (size == 0)
        return v;
    int64_t r = size == 1 ? 1 + v / 100 : 3 * v + 5;
    if (!strcmp(name, "cols") && r > 2000)
        r = 2000 - 3;
    return r;
}

static bool file_has(const char *path, const char *needle) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

typedef struct Buf {
    void *host, *ref; /* gpu result (copied back), interpreter result */
    size_t bytes;
    int scalar;
} Buf;

/* A new count for a buffer of `count` elements, from the scalar args' old and new values. */
static uint64_t resize(uint64_t count, const int64_t *oldv, const int64_t *newv, const bool *sc, int n) {
    for (int mul = 1; mul <= 2; mul++)
        for (int i = 0; i < n; i++) {
            if (!sc[i])
                continue;
            if ((uint64_t)(mul * oldv[i]) == count)
                return (uint64_t)(mul * newv[i]);
            for (int j = 0; j < n; j++)
                if (j != i && oldv[j] > 0 && (uint64_t)(mul * oldv[i] * oldv[j]) == count)
                    return (uint64_t)(mul * newv[i] * newv[j]);
        }
    return count;
}

static bool close_enough(int scalar, double g, double r) {
    if (isnan(g) || isnan(r))
        return isnan(g) && isnan(r);
    if (isinf(g) || isinf(r))
        return g == r;
    if (!tile_scalar_is_float((tile_scalar)scalar))
        return g == r;
    double d = fabs(g - r), a = fabs(r);
    switch (scalar) {
    case TILE_F16:
    case TILE_BF16: return d <= 1e-3 + 1e-2 * a;
    case TILE_F8E4M3:
    case TILE_F8E5M2: return d <= 1e-3 + 1.5e-1 * a;
    default: return d <= 1e-5 + 2e-5 * a;
    }
}

/* The prefix-sum allowance of output buffer j (see the tolerances above), per element;
 * NULL when j is not a float buffer or no other float buffer of its size is its input. */
static double *scan_bounds(const Buf *bufs, int np, int j, int64_t row, size_t n) {
    const Buf *b = &bufs[j];
    if (!b->host || (b->scalar != TILE_F32 && b->scalar != TILE_F64))
        return NULL;
    const Buf *in = NULL;
    for (int k = 0; k < np && !in; k++)
        if (k != j && bufs[k].host && bufs[k].scalar == b->scalar && bufs[k].bytes == b->bytes)
            in = &bufs[k];
    double *x = in ? malloc((n + 1) * sizeof *x) : NULL;
    if (!x)
        return NULL;
    tile_load_elements((tile_scalar)in->scalar, x, in->ref, n);
    double u = b->scalar == TILE_F32 ? 0x1p-23 : 0x1p-52, acc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t c = row > 0 ? i % (size_t)row : i;
        acc = c == 0 ? fabs(x[i]) : acc + fabs(x[i]);
        x[i] = (log2((double)c + 1) + sqrt((double)c + 1)) * u * acc;
    }
    return x;
}

/* The row-sum allowance of output buffer j (see the tolerances above): an output of `rows`
 * float elements and an input float buffer of the same scalar with rows * cols; NULL when
 * j is not such an output. */
static double *row_sum_bounds(const Buf *bufs, int np, int j, int64_t rows, int64_t cols, size_t n) {
    const Buf *b = &bufs[j];
    if (!b->host || (b->scalar != TILE_F32 && b->scalar != TILE_F64) || rows <= 0 || cols <= 0 || n != (size_t)rows)
        return NULL;
    size_t es = tile_scalar_size((tile_scalar)b->scalar), want = (size_t)rows * (size_t)cols * es;
    const Buf *in = NULL;
    for (int k = 0; k < np && !in; k++)
        if (k != j && bufs[k].host && bufs[k].scalar == b->scalar && bufs[k].bytes == want)
            in = &bufs[k];
    double *x = in ? malloc((size_t)rows * (size_t)cols * sizeof *x) : NULL;
    double *bound = x ? malloc(n * sizeof *bound) : NULL;
    if (!bound) {
        free(x);
        return NULL;
    }
    tile_load_elements((tile_scalar)in->scalar, x, in->ref, (size_t)rows * (size_t)cols);
    double u = b->scalar == TILE_F32 ? 0x1p-23 : 0x1p-52;
    for (int64_t r = 0; r < rows; r++) {
        double acc = 0;
        for (int64_t c = 0; c < cols; c++)
            acc += fabs(x[r * cols + c]);
        bound[r] = (log2((double)cols) + sqrt((double)cols)) * u * acc;
    }
    free(x);
    return bound;
}

typedef struct Totals {
    int pass, fail, skip;
} Totals;

/* Runs one case at one size on both devices and compares. */
static void run_case(tile_rt *gpu, tile_rt *cpu, const Case *c, int size, uint64_t seed, Totals *t) {
    static const char *size_name[] = {"given", "small", "large"};
    tile_rt_module *mg = NULL, *mc = NULL;
    tile_rt_kernel *kg = NULL, *kc = NULL;
    char label[400];
    snprintf(label, sizeof label, "%s %s [%s]", c->file, c->kernel, size_name[size]);
    if (tile_rt_load_source_file(gpu, c->file, &mg) || tile_rt_get_kernel(mg, c->kernel, &kg) ||
        tile_rt_load_source_file(cpu, c->file, &mc) || tile_rt_get_kernel(mc, c->kernel, &kc)) {
        printf("FAIL %s: load: %s%s\n", label, tile_rt_last_error(gpu), tile_rt_last_error(cpu));
        t->fail++;
        tile_rt_module_free(mg);
        tile_rt_module_free(mc);
        return;
    }
    bool atomics = file_has(c->file, "atomic");
    int np = tile_rt_kernel_param_count(kg);
    int64_t oldv[MAX_ARGS] = {0}, newv[MAX_ARGS] = {0};
    bool sc[MAX_ARGS] = {0};
    const char *val[MAX_ARGS] = {0};
    /* scalar values and which are scaled; -D NAME=V sets a const */
    for (int i = 0; i < c->ntok; i++) {
        const char *tk = c->tok[i];
        if (!strcmp(tk, "-D") && i + 1 < c->ntok) {
            const char *eq = strchr(c->tok[i + 1], '=');
            if (eq) {
                char name[64];
                snprintf(name, sizeof name, "%.*s", (int)(eq - c->tok[i + 1]), c->tok[i + 1]);
                tile_rt_set_const(kg, name, atoll(eq + 1), atof(eq + 1));
                tile_rt_set_const(kc, name, atoll(eq + 1), atof(eq + 1));
            }
            i++;
            continue;
        }
        const char *eq = strchr(tk, '=');
        if (!eq || tk[0] == '-')
            continue;
        for (int j = 0; j < np; j++)
            if (strlen(tile_rt_kernel_param_name(kg, j)) == (size_t)(eq - tk) &&
                !strncmp(tile_rt_kernel_param_name(kg, j), tk, (size_t)(eq - tk)))
                val[j] = eq + 1;
    }
    for (int j = 0; j < np; j++) {
        int s;
        bool isp;
        tile_rt_kernel_param_type(kg, j, &s, &isp);
        if (!isp && val[j] && !tile_scalar_is_float((tile_scalar)s)) {
            oldv[j] = atoll(val[j]);
            sc[j] = is_scaled(tile_rt_kernel_param_name(kg, j));
            newv[j] = sc[j] ? scale(tile_rt_kernel_param_name(kg, j), oldv[j], size) : oldv[j];
        }
    }
    Buf bufs[MAX_ARGS] = {0};
    tile_rt_arg ag[MAX_ARGS] = {0}, ac[MAX_ARGS] = {0};
    void *dev[MAX_ARGS] = {0};
    bool ok = true;
    for (int j = 0; j < np && ok; j++) {
        int s;
        bool isp;
        tile_rt_kernel_param_type(kg, j, &s, &isp);
        if (!val[j]) {
            printf("FAIL %s: run.txt gives no '%s'\n", label, tile_rt_kernel_param_name(kg, j));
            ok = false;
            break;
        }
        if (!isp) {
            if (tile_scalar_is_float((tile_scalar)s)) {
                ag[j] = ac[j] = (tile_rt_arg){.kind = TILE_RT_ARG_F64, .f64 = atof(val[j])};
            } else {
                int64_t v = !strcmp(val[j], "true") ? 1 : !strcmp(val[j], "false") ? 0 : newv[j];
                ag[j] = ac[j] = (tile_rt_arg){.kind = TILE_RT_ARG_I64, .i64 = v};
            }
            continue;
        }
        const char *colon = strchr(val[j], ':');
        uint64_t count = colon ? strtoull(colon + 1, NULL, 10) : 0;
        count = resize(count, oldv, newv, sc, np);
        size_t es = tile_scalar_size((tile_scalar)s);
        Buf *b = &bufs[j];
        b->scalar = s;
        b->bytes = count * es;
        b->host = malloc(b->bytes + 1);
        b->ref = malloc(b->bytes + 1);
        tile_fill_kind fk = !strncmp(val[j], "randn", 5)  ? TILE_FILL_RANDN
                            : !strncmp(val[j], "rand", 4) ? TILE_FILL_RAND
                                                          : TILE_FILL_ZEROS;
        if (fk == TILE_FILL_ZEROS && !atomics)
            memset(b->host, 0xFF, b->bytes);
        else
            tile_fill((tile_scalar)s, b->host, count, fk, seed + (uint64_t)j * 1000003u);
        memcpy(b->ref, b->host, b->bytes);
        if (tile_rt_alloc(gpu, b->bytes, &dev[j]) || tile_rt_copy_to_device(gpu, dev[j], b->host, b->bytes)) {
            printf("FAIL %s: %s\n", label, tile_rt_last_error(gpu));
            ok = false;
        }
        ag[j] = (tile_rt_arg){.kind = TILE_RT_ARG_PTR};
        ag[j].buf.ptr = dev[j];
        ag[j].buf.bytes = b->bytes;
        ac[j] = (tile_rt_arg){.kind = TILE_RT_ARG_PTR};
        ac[j].buf.ptr = b->ref;
        ac[j].buf.bytes = b->bytes;
    }
    const int64_t *grid = c->has_grid ? c->grid : NULL;
    if (ok) {
        char ec[600] = "", eg[600] = "";
        tile_rt_status sr = tile_rt_launch(kc, ac, np, NULL, grid);
        snprintf(ec, sizeof ec, "%s", tile_rt_last_error(cpu));
        tile_rt_status sg = tile_rt_launch(kg, ag, np, NULL, grid);
        if (sg == TILE_RT_OK)
            sg = tile_rt_synchronize(gpu);
        snprintf(eg, sizeof eg, "%s", tile_rt_last_error(gpu));
        if (sr != TILE_RT_OK && sr == sg) {
            printf("SKIP %s: both devices refuse: %s\n", label, ec);
            t->skip++;
            ok = false;
        } else if (sr != TILE_RT_OK || sg != TILE_RT_OK) {
            printf("FAIL %s: interp %s (%s) / gpu %s (%s)\n", label, tile_rt_status_string(sr), sr ? ec : "",
                   tile_rt_status_string(sg), sg ? eg : "");
            t->fail++;
            ok = false;
        }
    }
    if (ok) {
        int bad = 0;
        char first[300] = "";
        bool scans = file_has(c->file, "cumsum(");
        bool sums = file_has(c->file, "sum(");
        bool posenc = !strcmp(c->kernel, "add_posenc");
        int64_t row = 0, dim = 0, rows = 0;
        for (int j = 0; j < np; j++) {
            if (!strcmp(tile_rt_kernel_param_name(kg, j), "cols"))
                row = newv[j];
            if (!strcmp(tile_rt_kernel_param_name(kg, j), "rows"))
                rows = newv[j];
            if (!strcmp(tile_rt_kernel_param_name(kg, j), "dim"))
                dim = newv[j];
        }
        size_t total = 0;
        for (int j = 0; j < np && ok; j++) {
            Buf *b = &bufs[j];
            if (!b->host)
                continue;
            if (tile_rt_copy_to_host(gpu, b->host, dev[j], b->bytes)) {
                printf("FAIL %s: %s\n", label, tile_rt_last_error(gpu));
                ok = false;
                break;
            }
            size_t n = b->bytes / tile_scalar_size((tile_scalar)b->scalar);
            double *g = malloc((n + 1) * sizeof *g), *r = malloc((n + 1) * sizeof *r);
            tile_load_elements((tile_scalar)b->scalar, g, b->host, n);
            tile_load_elements((tile_scalar)b->scalar, r, b->ref, n);
            double *bound = scans ? scan_bounds(bufs, np, j, row, n) : NULL;
            double *rbound = sums ? row_sum_bounds(bufs, np, j, rows, row, n) : NULL;
            for (size_t i = 0; i < n; i++)
                if (!close_enough(b->scalar, g[i], r[i]) && !(bound && fabs(g[i] - r[i]) <= bound[i]) &&
                    !(rbound && fabs(g[i] - r[i]) <= rbound[i]) &&
                    !(posenc && dim > 0 && fabs(g[i] - r[i]) <= 1e-5 + (double)(i / (size_t)dim) * 0x1p-21) &&
                    bad++ == 0)
                    snprintf(first, sizeof first, "%s[%zu]: gpu %.9g, interp %.9g", tile_rt_kernel_param_name(kg, j), i,
                             g[i], r[i]);
            total += n;
            free(bound);
            free(rbound);
            free(g);
            free(r);
        }
        if (ok && bad) {
            printf("FAIL %s: %d of %zu elements differ; first %s (variant %s)\n", label, bad, total, first,
                   tile_rt_last_variant(kg));
            t->fail++;
        } else if (ok) {
            printf("PASS %s: %zu elements (variant %s)\n", label, total, tile_rt_last_variant(kg));
            t->pass++;
        } else {
            t->fail++;
        }
    }
    for (int j = 0; j < np; j++) {
        free(bufs[j].host);
        free(bufs[j].ref);
        if (dev[j])
            tile_rt_free(gpu, dev[j]);
    }
    tile_rt_module_free(mg);
    tile_rt_module_free(mc);
}

int main(int argc, char **argv) {
    const char *runtxt = gpu_example("run.txt");
    uint64_t seed = (uint64_t)time(NULL) * 2654435761u;
    bool self = false, given_only = false;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--only=", 7))
            only = argv[i] + 7;
        else if (!strcmp(argv[i], "--given-size"))
            given_only = true;
        else if (!strncmp(argv[i], "--seed=", 7))
            seed = strtoull(argv[i] + 7, NULL, 0);
        else if (!strcmp(argv[i], "--self-check"))
            self = true;
        else
            runtxt = argv[i];
    }
    tile_rt *gpu = NULL, *cpu = NULL;
    if (self) {
        tile_rt_open(TILE_RT_INTERP, NULL, &gpu);
    } else if (!(gpu = gpu_open(NULL))) {
        return GPU_SKIP;
    }
    tile_rt_open(TILE_RT_INTERP, NULL, &cpu);
    printf("seed: %llu (replay with --seed=%llu)\n", (unsigned long long)seed, (unsigned long long)seed);
    FILE *f = fopen(runtxt, "r");
    if (!f) {
        printf("FAIL: cannot open %s\n", runtxt);
        return 1;
    }
    Totals t = {0};
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        Case c = {0};
        char *save = NULL;
        for (char *tk = strtok_r(line, " \t\r\n", &save); tk && c.ntok < MAX_TOK; tk = strtok_r(NULL, " \t\r\n", &save))
            c.tok[c.ntok++] = tk;
        if (c.ntok < 2 || c.tok[0][0] == '#')
            continue;
        /* paths in run.txt are relative to the repository root */
        snprintf(c.file, sizeof c.file, "%s/../%s", gpu_examples_dir(), c.tok[0]);
        snprintf(c.kernel, sizeof c.kernel, "%s", c.tok[1]);
        memmove(c.tok, c.tok + 2, (size_t)(c.ntok - 2) * sizeof *c.tok);
        c.ntok -= 2;
        for (int i = 0; i < c.ntok; i++)
            if (!strncmp(c.tok[i], "--grid=", 7)) {
                c.has_grid = true;
                c.grid[0] = c.grid[1] = c.grid[2] = 1;
                sscanf(c.tok[i] + 7, "%lld,%lld,%lld", (long long *)&c.grid[0], (long long *)&c.grid[1],
                       (long long *)&c.grid[2]);
            }
        if (only) {
            char list[512];
            snprintf(list, sizeof list, ",%s,", only);
            char want[80];
            snprintf(want, sizeof want, ",%s,", c.kernel);
            if (!strstr(list, want))
                continue;
        }
        if (file_has(c.file, "dot(")) {
            printf("SKIP %s %s: uses dot\n", c.tok[0] ? c.file : "", c.kernel);
            t.skip++;
            continue;
        }
        for (int size = 0; size < (given_only ? 1 : 3); size++)
            run_case(gpu, cpu, &c, size, seed + (uint64_t)lineno * 7919u + (uint64_t)size, &t);
    }
    fclose(f);
    printf("summary: %d passed, %d failed, %d skipped (seed %llu)\n", t.pass, t.fail, t.skip, (unsigned long long)seed);
    tile_rt_close(gpu);
    tile_rt_close(cpu);
    return t.fail ? 1 : 0;
}
