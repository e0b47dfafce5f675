/* GPU benchmarks of the runtime itself (not of kernels):
 *  1. launch overhead: host time per launch of a tiny kernel (vector_add, n = 1) through
 *     tile_rt_launch against a bare cuLaunchKernel of the same CUfunction and parameters.
 *     "host" figures: batches of 128 launches, the device drained between batches and only
 *     the launch loop timed, so the launch queue never fills and the figure is the host's
 *     cost; the median over batches, per launch.  "sustained": batches of 2000 back to back,
 *     which fill the queue: bounded by the GPU's launch throughput, not the host.
 *     Targets (host): <= 1.3x bare and < 4 us.
 *  2. softmax autotune: the first launch of a new key with an empty cache (parallel JIT of
 *     every admissible variant, then the timed trials), with the cubins cached (tuning
 *     cache removed), with the tuning cached on disk, and a second key (other facts);
 *     the compile wall time and the trials' time alone are printed apart.
 *  3. startup: load every example and tile_rt_precompile them (one parallel batch), every
 *     variant and variant 0 only, cold cache then warm cache.
 * Prints "SKIP: no CUDA device (...)" and exits 77 without a GPU. */
#include "gpu_common.h"
#include "rt_internal.h"

#include <dirent.h>
#include <unistd.h>

static char cache[256];

static void fresh_cache(void) {
    char cmd[400];
    if (cache[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", cache);
    }
    snprintf(cache, sizeof cache, "/tmp/tilert-bench-XXXXXX");
    if (!mkdtemp(cache))
        perror("mkdtemp");
}

static int launch_overhead(void) {
    tile_rt_options o = {.cache_dir = cache, .tune = 0, .tune_log = -1};
    tile_rt *rt = gpu_open(&o);
    if (!rt)
        return GPU_SKIP;
    tile_rt_module *m;
    tile_rt_kernel *k;
    if (tile_rt_load_source_file(rt, gpu_example("vector_add.tile"), &m) || tile_rt_get_kernel(m, "vector_add", &k)) {
        printf("FAIL launch overhead: %s\n", tile_rt_last_error(rt));
        return 1;
    }
    void *x, *y, *out;
    tile_rt_alloc(rt, 64, &x), tile_rt_alloc(rt, 64, &y), tile_rt_alloc(rt, 64, &out);
    tile_rt_arg a[4] = {
        {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_I64}};
    a[0].buf.ptr = x, a[1].buf.ptr = y, a[2].buf.ptr = out, a[3].i64 = 1;
    if (tile_rt_launch(k, a, 4, NULL, NULL) || tile_rt_synchronize(rt)) {
        printf("FAIL launch overhead: %s\n", tile_rt_last_error(rt));
        return 1;
    }
    RtChoice *c = atomic_load(&k->last);
    CUfunction fn = c->inst->fn;
    unsigned threads = c->inst->v->warps * 32;
    int n = 1;
    CUdeviceptr px = (CUdeviceptr)(uintptr_t)x, py = (CUdeviceptr)(uintptr_t)y, po = (CUdeviceptr)(uintptr_t)out;
    void *params[4] = {&px, &py, &po, &n};
    enum { NBATCH = 61 };
    static const int batch[2] = {128, 2000};
    double rt_us[2], bare_us[2];
    for (int mode = 0; mode < 2; mode++) {
        double t_rt[NBATCH], t_bare[NBATCH];
        int B = batch[mode], nb = mode ? 15 : NBATCH;
        for (int b = 0; b < nb; b++) {
            tile_rt_synchronize(rt);
            double t0 = gpu_now();
            for (int i = 0; i < B; i++)
                rt->cu.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, NULL, params, NULL);
            t_bare[b] = (gpu_now() - t0) / B * 1e6;
            tile_rt_synchronize(rt);
            t0 = gpu_now();
            for (int i = 0; i < B; i++)
                tile_rt_launch(k, a, 4, NULL, NULL);
            t_rt[b] = (gpu_now() - t0) / B * 1e6;
        }
        tile_rt_synchronize(rt);
        rt_us[mode] = gpu_median(t_rt, nb);
        bare_us[mode] = gpu_median(t_bare, nb);
    }
    double ratio = rt_us[0] / bare_us[0];
    printf("launch overhead (host, batches of %d, drained between): tile_rt_launch %.2f us, "
           "bare cuLaunchKernel %.2f us, ratio %.2f, runtime's own cost %.2f us "
           "(targets: <= 1.3x %s, < 4 us %s)\n",
           batch[0], rt_us[0], bare_us[0], ratio, rt_us[0] - bare_us[0], ratio <= 1.3 ? "met" : "MISSED",
           rt_us[0] < 4 ? "met" : "MISSED");
    printf("launch overhead (sustained, batches of %d back to back, GPU-throughput bound): "
           "tile_rt_launch %.2f us, bare cuLaunchKernel %.2f us\n",
           batch[1], rt_us[1], bare_us[1]);
    tile_rt_free(rt, x), tile_rt_free(rt, y), tile_rt_free(rt, out);
    tile_rt_module_free(m);
    tile_rt_close(rt);
    return 0;
}

static void tune_log(void *ud, const char *line) {
    (void)ud;
    printf("  %s\n", line);
}

/* One timed first launch of softmax (rows x cols) on a fresh device handle. */
static double softmax_first_launch(int rows, int cols, tile_rt_stats *st) {
    *st = (tile_rt_stats){0};
    tile_rt_options o = {.cache_dir = cache, .tune = 1, .tune_log = 1, .log = tune_log};
    tile_rt *rt = NULL;
    if (tile_rt_open(TILE_RT_CUDA, &o, &rt))
        return -1;
    tile_rt_module *m;
    tile_rt_kernel *k;
    double t = -1;
    if (tile_rt_load_source_file(rt, gpu_example("softmax.tile"), &m) == TILE_RT_OK &&
        tile_rt_get_kernel(m, "softmax", &k) == TILE_RT_OK) {
        size_t bytes = (size_t)rows * cols * 4;
        void *x, *out;
        tile_rt_alloc(rt, bytes, &x), tile_rt_alloc(rt, bytes, &out);
        tile_rt_arg a[4] = {
            {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_I64}, {.kind = TILE_RT_ARG_I64}};
        a[0].buf.ptr = out, a[0].buf.bytes = bytes, a[1].buf.ptr = x, a[1].buf.bytes = bytes;
        a[2].i64 = rows, a[3].i64 = cols;
        double t0 = gpu_now();
        if (tile_rt_launch(k, a, 4, NULL, NULL) == TILE_RT_OK && tile_rt_synchronize(rt) == TILE_RT_OK)
            t = gpu_now() - t0;
        else
            printf("FAIL softmax tune: %s\n", tile_rt_last_error(rt));
        printf("  chose [%s]\n", tile_rt_last_variant(k));
        tile_rt_free(rt, x), tile_rt_free(rt, out);
        tile_rt_module_free(m);
    }
    tile_rt_get_stats(rt, st);
    tile_rt_close(rt);
    return t;
}

static void print_tune(const char *what, double t, const tile_rt_stats *st) {
    printf("softmax %s: %.3f s (%llu JIT compiles in %.3f s wall, %llu cache hits, %llu "
           "tunings, trials alone %.3f s, %llu tuning-cache hits)\n",
           what, t, (unsigned long long)st->jit_compiles, st->jit_wall_ns * 1e-9, (unsigned long long)st->cache_hits,
           (unsigned long long)st->tunings, st->tune_trial_ns * 1e-9, (unsigned long long)st->tune_disk_hits);
}

static void remove_tune_cache(void) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/tune'", cache);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s/tune\n", cache);
}

static int softmax_tune(void) {
    fresh_cache();
    tile_rt_stats st;
    int rc = 0;
    double t = softmax_first_launch(16384, 4096, &st);
    print_tune("16384x4096 first launch, empty cache (target < 0.5 s)", t, &st);
    rc |= t < 0;
    remove_tune_cache();
    t = softmax_first_launch(16384, 4096, &st);
    print_tune("16384x4096 again, cubins cached, tuning cache removed", t, &st);
    /* the same key and facts: every cubin must come from the cache */
    if (st.jit_compiles != 0) {
        printf("FAIL softmax: %llu compiles with every cubin cached\n", (unsigned long long)st.jit_compiles);
        rc = 1;
    }
    t = softmax_first_launch(16384, 4096, &st);
    print_tune("16384x4096 again, tuning cached on disk", t, &st);
    rc |= t < 0 || st.tunings != 0;
    /* cols = 1000 is not divisible by 16: other specialization facts, so other cubins
     * (and more variants pass 'where BLOCK >= cols') */
    t = softmax_first_launch(16384, 1000, &st);
    print_tune("16384x1000 (new key, other facts: compiles expected)", t, &st);
    remove_tune_cache();
    t = softmax_first_launch(16384, 1000, &st);
    print_tune("16384x1000 again, cubins cached, tuning cache removed", t, &st);
    if (st.jit_compiles != 0) {
        printf("FAIL softmax: %llu compiles with every cubin cached\n", (unsigned long long)st.jit_compiles);
        rc = 1;
    }
    return rc | (t < 0);
}

/* Loads every example and precompiles them in one batch on a fresh device handle;
 * returns seconds (load + compile + module load), -1 when the device does not open. */
static double startup_once(unsigned flags, int *nbuilt, int *nfailed, tile_rt_stats *st) {
    tile_rt_options o = {.cache_dir = cache, .tune = 0, .tune_log = -1};
    tile_rt *rt = NULL;
    if (tile_rt_open(TILE_RT_CUDA, &o, &rt))
        return -1;
    double t0 = gpu_now();
    tile_rt_module *mods[512];
    int nm = 0, nload_failed = 0;
    DIR *d = opendir(gpu_examples_dir());
    struct dirent *e;
    while (d && (e = readdir(d)) && nm < 512) {
        size_t L = strlen(e->d_name);
        if (L < 6 || strcmp(e->d_name + L - 5, ".tile"))
            continue;
        if (tile_rt_load_source_file(rt, gpu_example(e->d_name), &mods[nm])) {
            printf("  %s: %s\n", e->d_name, tile_rt_last_error(rt));
            nload_failed++;
            continue;
        }
        /* kernels with const parameters: one value (0) each, so they compile too */
        for (int ki = 0; ki < mods[nm]->nkernels; ki++) {
            tile_rt_kernel *k = &mods[nm]->kernels[ki];
            for (uint32_t p = 0; p < k->nparams; p++)
                if (k->params[p].is_const)
                    tile_rt_set_const(k, k->params[p].name, 0, 0);
        }
        nm++;
    }
    if (d)
        closedir(d);
    if (tile_rt_precompile(mods, nm, flags, nbuilt, nfailed) != TILE_RT_OK)
        printf("  first failure: %s\n", tile_rt_last_error(rt));
    double t = gpu_now() - t0;
    *nfailed += nload_failed;
    tile_rt_get_stats(rt, st);
    for (int i = 0; i < nm; i++)
        tile_rt_module_free(mods[i]);
    tile_rt_close(rt);
    return t;
}

static int startup(void) {
    static const struct {
        unsigned flags;
        const char *what;
    } modes[2] = {
        {TILE_RT_PRECOMPILE_ALL, "every variant of every example kernel"},
        {0, "variant 0 of every example kernel (what an untuned program needs)"},
    };
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        fresh_cache();
        for (int warm = 0; warm < 2; warm++) {
            int nb = 0, nf = 0;
            tile_rt_stats st;
            double t = startup_once(modes[i].flags, &nb, &nf, &st);
            printf("startup, %s, %s cache (target < 1 s): %.3f s (%d ready, %d failed; %llu "
                   "compiles in %.3f s wall on %d threads, %llu cache hits)\n",
                   modes[i].what, warm ? "warm" : "cold", t, nb, nf, (unsigned long long)st.jit_compiles,
                   st.jit_wall_ns * 1e-9, rt_jit_threads(), (unsigned long long)st.cache_hits);
            rc |= t < 0;
        }
    }
    return rc;
}

int main(void) {
    fresh_cache();
    int rc = launch_overhead();
    if (rc == GPU_SKIP)
        return GPU_SKIP;
    rc |= softmax_tune();
    rc |= startup();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", cache);
    printf("%s\n", rc ? "gpu_bench: some parts failed" : "gpu_bench: done");
    return rc ? 1 : 0;
}
