/* GPU benchmarks of the runtime itself (not of kernels):
 *  1. launch overhead: host time per launch of a tiny kernel (vector_add, n = 1) through
 *     tile_rt_launch against a bare cuLaunchKernel of the same CUfunction; the median over
 *     batches of launches, in µs.  Targets: ≤ 1.3x bare and < 4 µs.
 *  2. softmax autotune: time of the first launch of a new key with an empty cache (JIT of
 *     every admissible variant, then the timed trials), then with the cubins cached, then
 *     a second process-like load that finds the tuning result on disk.
 *  3. startup: JIT-compile every variant of every kernel of the examples (time to ready),
 *     cold cache then warm cache.
 * Prints "SKIP: no CUDA device (...)" and exits 77 without a GPU. */
#include "gpu_common.h"
#include "rt_internal.h"

#include <dirent.h>
#include <unistd.h>

static char cache[256];

static void fresh_cache(void)
{
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

static int launch_overhead(void)
{
    tile_rt_options o = {.cache_dir = cache, .tune = 0, .tune_log = -1};
    tile_rt *rt = gpu_open(&o);
    if (!rt)
        return GPU_SKIP;
    tile_rt_module *m;
    tile_rt_kernel *k;
    if (tile_rt_load_source_file(rt, gpu_example("vector_add.tile"), &m) ||
        tile_rt_get_kernel(m, "vector_add", &k)) {
        printf("FAIL launch overhead: %s\n", tile_rt_last_error(rt));
        return 1;
    }
    void *x, *y, *out;
    tile_rt_alloc(rt, 64, &x), tile_rt_alloc(rt, 64, &y), tile_rt_alloc(rt, 64, &out);
    tile_rt_arg a[4] = {{.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_PTR},
                        {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_I64}};
    a[0].buf.ptr = x, a[1].buf.ptr = y, a[2].buf.ptr = out, a[3].i64 = 1;
    if (tile_rt_launch(k, a, 4, NULL, NULL) || tile_rt_synchronize(rt)) {
        printf("FAIL launch overhead: %s\n", tile_rt_last_error(rt));
        return 1;
    }
    RtChoice *c = atomic_load(&k->last);
    CUfunction fn = c->inst->fn;
    unsigned threads = c->inst->v->warps * 32;
    enum { BATCH = 2000, NBATCH = 15 };
    double t_rt[NBATCH], t_bare[NBATCH];
    int n = 1;
    CUdeviceptr px = (CUdeviceptr)(uintptr_t)x, py = (CUdeviceptr)(uintptr_t)y,
                po = (CUdeviceptr)(uintptr_t)out;
    void *params[4] = {&px, &py, &po, &n};
    for (int b = 0; b < NBATCH; b++) {
        double t0 = gpu_now();
        for (int i = 0; i < BATCH; i++)
            rt->cu.cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, NULL, params, NULL);
        t_bare[b] = (gpu_now() - t0) / BATCH * 1e6;
        tile_rt_synchronize(rt);
        t0 = gpu_now();
        for (int i = 0; i < BATCH; i++)
            tile_rt_launch(k, a, 4, NULL, NULL);
        t_rt[b] = (gpu_now() - t0) / BATCH * 1e6;
        tile_rt_synchronize(rt);
    }
    double rt_us = gpu_median(t_rt, NBATCH), bare_us = gpu_median(t_bare, NBATCH);
    printf("launch overhead: tile_rt_launch %.2f us, bare cuLaunchKernel %.2f us, ratio %.2f "
           "(targets: <= 1.3x, < 4 us)\n", rt_us, bare_us, rt_us / bare_us);
    tile_rt_free(rt, x), tile_rt_free(rt, y), tile_rt_free(rt, out);
    tile_rt_module_free(m);
    tile_rt_close(rt);
    return 0;
}

static void tune_log(void *ud, const char *line)
{
    (void)ud;
    printf("  %s\n", line);
}

/* One timed first launch of softmax (rows x cols) on a fresh device handle. */
static double softmax_first_launch(int rows, int cols, tile_rt_stats *st)
{
    tile_rt_options o = {.cache_dir = cache, .tune = 1, .tune_log = 0, .log = tune_log};
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
        tile_rt_arg a[4] = {{.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_PTR},
                            {.kind = TILE_RT_ARG_I64}, {.kind = TILE_RT_ARG_I64}};
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

static int softmax_tune(void)
{
    fresh_cache();
    tile_rt_stats st;
    double cold = softmax_first_launch(16384, 4096, &st);
    printf("softmax 16384x4096 first launch, empty cache: %.3f s (%llu JIT compiles, %llu "
           "tunings)\n", cold, (unsigned long long)st.jit_compiles, (unsigned long long)st.tunings);
    double warm = softmax_first_launch(16384, 1000, &st);
    printf("softmax 16384x1000 (new key), cubins cached: %.3f s (%llu compiles, %llu cache hits, "
           "%llu tunings)\n", warm, (unsigned long long)st.jit_compiles,
           (unsigned long long)st.cache_hits, (unsigned long long)st.tunings);
    double disk = softmax_first_launch(16384, 4096, &st);
    printf("softmax 16384x4096 again (tuning cached on disk): %.3f s (%llu tuning-cache hits, "
           "%llu tunings)\n", disk, (unsigned long long)st.tune_disk_hits,
           (unsigned long long)st.tunings);
    return cold < 0 || warm < 0 || disk < 0 || st.tunings != 0;
}

/* Compiles every variant of every kernel of every example; returns seconds. */
static double compile_all(tile_rt *rt, int *nvariants, int *nfail)
{
    DIR *d = opendir(gpu_examples_dir());
    struct dirent *e;
    double t0 = gpu_now();
    *nvariants = *nfail = 0;
    while (d && (e = readdir(d))) {
        size_t L = strlen(e->d_name);
        if (L < 6 || strcmp(e->d_name + L - 5, ".tile"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", gpu_examples_dir(), e->d_name);
        tile_rt_module *m;
        if (tile_rt_load_source_file(rt, path, &m)) {
            printf("  %s: %s\n", e->d_name, tile_rt_last_error(rt));
            (*nfail)++;
            continue;
        }
        for (int ki = 0; ki < m->nkernels; ki++) {
            tile_rt_kernel *k = &m->kernels[ki];
            for (uint32_t p = 0; p < k->nparams; p++)
                if (k->params[p].is_const)
                    tile_rt_set_const(k, k->params[p].name, 0, 0);
            if (rt_source_meta(k)) {
                printf("  %s %s: %s\n", e->d_name, k->name, tile_rt_last_error(rt));
                (*nfail)++;
                continue;
            }
            for (uint32_t v = 0; v < k->meta->nvariants; v++) {
                char *cubin;
                size_t len;
                if (rt_jit_compile(m, ki, v, 0, 0, &cubin, &len)) {
                    (*nfail)++;
                    printf("  %s %s variant %u: %s\n", e->d_name, k->name, v,
                           tile_rt_last_error(rt));
                } else {
                    free(cubin);
                }
                (*nvariants)++;
            }
        }
        tile_rt_module_free(m);
    }
    if (d)
        closedir(d);
    return gpu_now() - t0;
}

static int startup(void)
{
    fresh_cache();
    tile_rt_options o = {.cache_dir = cache, .tune = 0, .tune_log = -1};
    tile_rt *rt = NULL;
    if (tile_rt_open(TILE_RT_CUDA, &o, &rt))
        return 1;
    int nv, nf;
    double cold = compile_all(rt, &nv, &nf);
    printf("startup: JIT of all %d example variants, cold cache: %.2f s (%d failed)\n", nv, cold, nf);
    double warm = compile_all(rt, &nv, &nf);
    tile_rt_stats st;
    tile_rt_get_stats(rt, &st);
    printf("startup: the same, warm cache: %.3f s (%llu cache hits)\n", warm,
           (unsigned long long)st.cache_hits);
    tile_rt_close(rt);
    return nf != 0;
}

int main(void)
{
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
