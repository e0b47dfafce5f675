/* The tuning log recorded through the stub CUDA driver (tests/stubcuda), whose virtual
 * clock makes every sample deterministic, and the runtime's tuning policies.
 *
 *   tune_log_stub CACHE_DIR FILE.tile
 *
 * FILE.tile is examples/vector_add.tile (BLOCK in [1024, 2048, 4096]); a launch costs
 * by its BLOCK (n / programs): 2048 fastest.  Three processes' worth of tuning, each a
 * fresh tile_rt on the same cache directory:
 *   1. exhaustive (the default), n = 8192: every variant timed; BLOCK=2048 chosen;
 *   2. TILE_TUNE_POLICY=model:1, n = 16384: the log ranks BLOCK=2048 first, so only it
 *      is compiled and timed (its two cubins, capped and uncapped, in its record);
 *   3. TILE_TUNE_POLICY=random:2, n = 32768: two variants (four cubins);
 *   4. TILE_TUNE_PTXAS, n = 65536: the joint search over ptxas options (below);
 *   5. the same key in a new runtime: the joint choice restored from the tuning cache.
 * The log the script then replays (check_tune.cmake) is CACHE_DIR/tune.log. */
#include "stubcuda.h"
#include "tile/runtime.h"

#include "../runtime/rt_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int64_t cur_n;
/* The joint search's phase: modules loaded from this index on are the chosen variant
 * compiled with $TILE_TUNE_PTXAS's option sets, in order (-1: no such phase; -2: the
 * next launch sets it, every module loaded before being the variants' own). */
static int ptxas_from = -1;

static double cost(const StubLaunch *l, void *ud) {
    (void)ud;
    if (ptxas_from == -2)
        ptxas_from = stub_nmodules();
    int mod = stub_function(l->function)->module;
    if (ptxas_from >= 0 && mod >= ptxas_from)
        return mod == ptxas_from ? 0.3 : 0.25; /* the first option set, then the second */
    int64_t block = cur_n / (int64_t)l->grid[0];
    return block == 2048 ? 0.5 : block == 4096 ? 0.8 : 1.0;
}

/* One tuned launch of vector_add for n in a fresh runtime; the variant it chose. */
static void tune(const char *cache, const char *file, int64_t n, const char *want, int want_launches,
                 int want_tunings) {
    tile_rt_options o = {.cache_dir = cache, .tune = 1, .tune_log = 0};
    tile_rt *rt = NULL;
    CHECK(tile_rt_open(TILE_RT_CUDA, &o, &rt) == TILE_RT_OK);
    if (!rt)
        return;
    tile_rt_module *m = NULL;
    tile_rt_kernel *k = NULL;
    CHECK(tile_rt_load_source_file(rt, file, &m) == TILE_RT_OK);
    CHECK(tile_rt_get_kernel(m, "vector_add", &k) == TILE_RT_OK);
    void *x, *y, *out;
    size_t bytes = (size_t)n * 4;
    CHECK(tile_rt_alloc(rt, bytes, &x) == TILE_RT_OK && tile_rt_alloc(rt, bytes, &y) == TILE_RT_OK &&
          tile_rt_alloc(rt, bytes, &out) == TILE_RT_OK);
    tile_rt_arg a[4] = {
        {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_PTR}, {.kind = TILE_RT_ARG_I64}};
    a[0].buf.ptr = x;
    a[1].buf.ptr = y;
    a[2].buf.ptr = out;
    a[2].buf.bytes = bytes;
    a[3].i64 = n;
    cur_n = n;
    stub_set_nparams(4);
    stub_set_cost(cost, NULL);
    int before = stub_nlaunches();
    CHECK(tile_rt_launch(k, a, 4, NULL, NULL) == TILE_RT_OK);
    const char *got = tile_rt_last_variant(k);
    if (strncmp(got, want, strlen(want)))
        fprintf(stderr, "n=%lld: chose '%s', want '%s'\n", (long long)n, got, want), rt_test_failures++;
    /* each candidate cubin (a variant's capped and uncapped ones): 2 warm-up launches and 9
     * samples; 21 more each for the finalists; then the launch itself */
    int launched = stub_nlaunches() - before;
    if (want_launches >= 0 && launched != want_launches)
        fprintf(stderr, "n=%lld: %d launches, want %d\n", (long long)n, launched, want_launches), rt_test_failures++;
    tile_rt_stats st;
    tile_rt_get_stats(rt, &st);
    if (st.tunings != (uint64_t)want_tunings || st.tune_disk_hits != (uint64_t)!want_tunings)
        fprintf(stderr, "n=%lld: %llu tunings, %llu disk hits, want %d and %d\n", (long long)n,
                (unsigned long long)st.tunings, (unsigned long long)st.tune_disk_hits, want_tunings, !want_tunings),
            rt_test_failures++;
    tile_rt_free(rt, x);
    tile_rt_free(rt, y);
    tile_rt_free(rt, out);
    tile_rt_module_free(m);
    tile_rt_close(rt);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: tune_log_stub CACHE_DIR FILE.tile\n");
        return 2;
    }
    unsetenv("TILE_TUNE_POLICY");
    tune(argv[1], argv[2], 8192, "BLOCK=2048", 5 * 11 + 2 * 21 + 1, 1);
    setenv("TILE_TUNE_POLICY", "model:1", 1);
    tune(argv[1], argv[2], 16384, "BLOCK=2048", 2 * 11 + 2 * 21 + 1, 1);
    setenv("TILE_TUNE_POLICY", "random:2", 1);
    tune(argv[1], argv[2], 32768, "BLOCK=", 4 * 11 + 2 * 21 + 1, 1);
    /* 4. the joint search: the chosen variant again with each ptxas option set (the
     *    second cheapest here), one bad set skipped; then 5. a new process on the same
     *    cache restores that choice, compiling the same cubin again, without timing */
    unsetenv("TILE_TUNE_POLICY");
    setenv("TILE_TUNE_PTXAS", "-O1 | --def-load-cache=cg|--no-such-ptxas-option", 1);
    ptxas_from = -2;
    tune(argv[1], argv[2], 65536, "BLOCK=2048, warps=4, stages=2; div16: x y out n; ptxas --def-load-cache=cg", -1, 1);
    ptxas_from = -2;
    tune(argv[1], argv[2], 65536, "BLOCK=2048, warps=4, stages=2; div16: x y out n; ptxas --def-load-cache=cg", 1, 0);
    unsetenv("TILE_TUNE_PTXAS");
    TEST_DONE();
}
