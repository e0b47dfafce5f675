/* The runtime's CUDA path without a GPU: tile_rt_open(TILE_RT_CUDA) loads the stub driver
 * (tests/stubcuda, through $TILE_LIBCUDA) and the test reads back what the runtime asked of
 * it: the argument-count check before anything reaches the driver, the packed parameters,
 * grid and block of each launch, the specialization facts (div16 for multiples of 16, div8
 * for multiples of 8 only; eq1; a pointer off 16 bytes), one module per distinct set of
 * facts, a bundle's records chosen by the same facts (argv[1]: tilec, to build it), the
 * autotuner's choice under deterministic virtual timings (the fastest variant, a failing
 * variant skipped, the final round between close ones), the in-memory choice per key, and
 * the tuning cache on disk keyed by the const parameters' values.
 * Needs the JIT (the backend and ptxas): the cubins are real, only their runs are not. */
#include "tile/runtime.h"
#include "rt_test.h"
#include "stubcuda.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char src[] = "kernel scale(x: *f32, out: *f32, n: i32, const K: i32)\n"
                          "    tune BLOCK in [128, 256], warps in [1, 2]\n"
                          "    grid(cdiv(n, BLOCK))\n"
                          "{\n"
                          "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                          "    let m = offs < n;\n"
                          "    store(out + offs, load(x + offs, mask=m) * (K as f32), mask=m);\n"
                          "}\n";

static char cache[64];

static tile_rt *open_stub(int tune) {
    tile_rt_options o = {.cache_dir = cache, .tune = tune, .tune_log = -1};
    tile_rt *rt = NULL;
    tile_rt_status s = tile_rt_open(TILE_RT_CUDA, &o, &rt);
    if (s != TILE_RT_OK) {
        fprintf(stderr, "opening the stub driver: %s\n", tile_rt_open_error());
        exit(1);
    }
    return rt;
}

static tile_rt_kernel *load(tile_rt *rt, tile_rt_module **m, int64_t kval) {
    tile_rt_kernel *k = NULL;
    CHECK(tile_rt_load_source(rt, "scale.tile", src, sizeof src - 1, m) == TILE_RT_OK);
    CHECK(tile_rt_get_kernel(*m, "scale", &k) == TILE_RT_OK);
    CHECK(tile_rt_set_const(k, "K", kval, 0) == TILE_RT_OK);
    return k;
}

static void set_args(tile_rt_arg a[3], void *x, void *out, int64_t n) {
    a[0] = (tile_rt_arg){.kind = TILE_RT_ARG_PTR, .buf = {x, 0}};
    a[1] = (tile_rt_arg){.kind = TILE_RT_ARG_PTR, .buf = {out, 0}};
    a[2] = (tile_rt_arg){.kind = TILE_RT_ARG_I64, .i64 = n};
}

/* What each test starts from: the stub runtime, the kernel with const K = kval, buffers x
 * and out of `bytes` each and the arguments for n, the stub's records cleared. */
typedef struct Fix {
    tile_rt *rt;
    tile_rt_module *m;
    tile_rt_kernel *k;
    void *x, *out;
    tile_rt_arg a[3];
} Fix;

static void fix_open(Fix *f, int tune, int64_t kval, size_t bytes, int64_t n) {
    f->rt = open_stub(tune);
    f->k = load(f->rt, &f->m, kval);
    CHECK(tile_rt_alloc(f->rt, bytes, &f->x) == TILE_RT_OK);
    CHECK(tile_rt_alloc(f->rt, bytes, &f->out) == TILE_RT_OK);
    set_args(f->a, f->x, f->out, n);
    stub_reset();
    stub_set_nparams(3);
}

static void fix_close(Fix *f) {
    tile_rt_free(f->rt, f->x);
    tile_rt_free(f->rt, f->out);
    tile_rt_module_free(f->m);
    tile_rt_close(f->rt);
}

/* ---- launches and facts ------------------------------------------------------------ */
static void test_launch(void) {
    tile_rt *rt = open_stub(0);
    CHECK(!strcmp(tile_rt_device_name(rt), "Stub GPU (sm_90a)"));
    tile_rt_module *m;
    tile_rt_kernel *k = load(rt, &m, 2);
    CHECK(tile_rt_kernel_param_count(k) == 3);
    void *x, *out;
    CHECK(tile_rt_alloc(rt, 8192, &x) == TILE_RT_OK);
    CHECK(tile_rt_alloc(rt, 8192, &out) == TILE_RT_OK);
    tile_rt_arg a[4];
    set_args(a, x, out, 1000);
    a[3] = a[2];
    stub_reset();
    stub_set_nparams(3);
    /* the count is checked before anything compiles or reaches the driver */
    CHECK_ERR(tile_rt_launch(k, a, 2, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt),
              "kernel 'scale' takes 3 arguments, got 2");
    CHECK_ERR(tile_rt_launch(k, a, 4, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt),
              "kernel 'scale' takes 3 arguments, got 4");
    CHECK_ERR(tile_rt_launch(k, NULL, 3, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt),
              "takes 3 arguments, got 3");
    CHECK(stub_nlaunches() == 0 && stub_nmodules() == 0);

    /* n = 1000: a multiple of 8, not of 16: a div8 fact for n; both pointers have div16 */
    CHECK(tile_rt_launch(k, a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(stub_nlaunches() == 1 && stub_nmodules() == 1);
    const StubLaunch *l = stub_launch(0);
    CHECK(!strcmp(tile_rt_last_variant(k), "BLOCK=128, K=2, warps=1, stages=2; div16: x out; div8: n"));
    /* untuned: variant 0 (BLOCK=128, warps=1): cdiv(1000, 128) programs of 32 threads */
    CHECK(l && l->grid[0] == 8 && l->grid[1] == 1 && l->grid[2] == 1);
    CHECK(l && l->block[0] == 32 && l->block[1] == 1 && l->block[2] == 1 && l->smem == 0);
    CHECK(l && l->params[0] == (uintptr_t)x && l->params[1] == (uintptr_t)out);
    CHECK(l && (uint32_t)l->params[2] == 1000);
    CHECK(l && !strcmp(stub_function(l->function)->name, "scale"));
    /* the module is the compiler's cubin */
    CHECK(!stub_module(0)->is_ptx && !memcmp(stub_module(0)->image,
                                             "\x7f"
                                             "ELF",
                                             4));

    /* n = 1024: div16 for n too: a module of its own */
    set_args(a, x, out, 1024);
    CHECK(tile_rt_launch(k, a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(!strcmp(tile_rt_last_variant(k), "BLOCK=128, K=2, warps=1, stages=2; div16: x out n"));
    CHECK(stub_nlaunches() == 2 && stub_nmodules() == 2 && stub_launch(1)->grid[0] == 8);
    /* n = 1: eq1 */
    set_args(a, x, out, 1);
    CHECK(tile_rt_launch(k, a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(!strcmp(tile_rt_last_variant(k), "BLOCK=128, K=2, warps=1, stages=2; div16: x out; eq1: n"));
    CHECK(stub_nmodules() == 3 && stub_launch(2)->grid[0] == 1);
    /* n = 8: no multiple of 16, a multiple of 8 */
    set_args(a, x, out, 8);
    CHECK(tile_rt_launch(k, a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(!strcmp(tile_rt_last_variant(k), "BLOCK=128, K=2, warps=1, stages=2; div16: x out; div8: n"));
    CHECK(stub_nmodules() == 3); /* the facts of n = 1000 again: that module */
    /* n = 1004: a multiple of neither */
    set_args(a, x, out, 1004);
    CHECK(tile_rt_launch(k, a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(!strcmp(tile_rt_last_variant(k), "BLOCK=128, K=2, warps=1, stages=2; div16: x out"));
    CHECK(stub_nmodules() == 4);
    /* x 4 bytes past an allocation's start: aligned to its f32 elements, not to 8 or 16 */
    set_args(a, (char *)x + 4, out, 1000);
    CHECK(tile_rt_launch(k, a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(!strcmp(tile_rt_last_variant(k), "BLOCK=128, K=2, warps=1, stages=2; div16: out; div8: n"));
    CHECK(stub_nmodules() == 5 && stub_launch(5)->params[0] == (uintptr_t)x + 4);
    /* x 8 bytes past: 8-byte aligned, not 16 */
    set_args(a, (char *)x + 8, out, 1000);
    CHECK(tile_rt_launch(k, a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(!strcmp(tile_rt_last_variant(k), "BLOCK=128, K=2, warps=1, stages=2; div16: out; div8: x n"));
    CHECK(stub_nmodules() == 6);
    /* x 2 bytes off: not aligned to f32, refused before the driver */
    set_args(a, (char *)x + 2, out, 1000);
    CHECK_ERR(tile_rt_launch(k, a, 3, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt), "pointer 'x'");
    /* n out of i32's range: refused */
    set_args(a, x, out, (int64_t)1 << 31);
    CHECK_ERR(tile_rt_launch(k, a, 3, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt), "out of range for i32");
    /* i32's minimum is in range, but cdiv of it is a negative grid: refused, not launched */
    set_args(a, x, out, -((int64_t)1 << 31));
    CHECK_ERR(tile_rt_launch(k, a, 3, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt),
              "is outside [0, 2147483647]");
    CHECK(stub_nlaunches() == 7);
    /* a grid given by the caller: zeros mean 1 */
    set_args(a, x, out, 1000);
    int64_t g[3] = {5, 0, 3};
    CHECK(tile_rt_launch(k, a, 3, NULL, g) == TILE_RT_OK);
    l = stub_launch(stub_nlaunches() - 1);
    CHECK(l && l->grid[0] == 5 && l->grid[1] == 1 && l->grid[2] == 3);
    int64_t g0[3] = {0, 1, 1};
    int before = stub_nlaunches();
    CHECK(tile_rt_launch(k, a, 3, NULL, g0) == TILE_RT_OK); /* nothing to run */
    CHECK(stub_nlaunches() == before);
    /* a stream is passed through */
    CHECK(tile_rt_launch(k, a, 3, (void *)0x1234, NULL) == TILE_RT_OK);
    CHECK(stub_launch(stub_nlaunches() - 1)->stream == (void *)0x1234);
    tile_rt_free(rt, x);
    tile_rt_free(rt, out);
    CHECK(stub_live_allocs() == 0);
    tile_rt_module_free(m);
    tile_rt_close(rt);
}

/* ---- tuning ------------------------------------------------------------------------ */
/* Virtual costs by (programs, threads) for n = 4096: BLOCK=128 -> 32 programs, 256 -> 16;
 * warps=1 -> 32 threads, 2 -> 64. */
typedef struct Costs {
    double b128w1, b128w2, b256w1, b256w2;
} Costs;

static double cost(const StubLaunch *l, void *ud) {
    const Costs *c = ud;
    bool b128 = l->grid[0] == 32;
    bool w1 = l->block[0] == 32;
    return b128 ? (w1 ? c->b128w1 : c->b128w2) : (w1 ? c->b256w1 : c->b256w2);
}

static int launches_with(int from, unsigned programs, unsigned threads) {
    int n = 0;
    for (int i = from; i < stub_nlaunches(); i++)
        n += stub_launch(i)->grid[0] == programs && stub_launch(i)->block[0] == threads;
    return n;
}

static void tune_once(int64_t kval, const Costs *c, const char *want, int want_tunings, int want_disk_hits,
                      int want_launches) {
    Fix f;
    fix_open(&f, 1, kval, 4 * 8192, 4096);
    int allocs = stub_live_allocs();
    f.a[0].buf.bytes = 4 * 8192; /* saved and restored around the trials */
    stub_set_cost(cost, (void *)c);
    CHECK(tile_rt_launch(f.k, f.a, 3, NULL, NULL) == TILE_RT_OK);
    if (strncmp(tile_rt_last_variant(f.k), want, strlen(want)))
        fprintf(stderr, "tuned K=%lld: got '%s', want '%s'\n", (long long)kval, tile_rt_last_variant(f.k), want),
            rt_test_failures++;
    tile_rt_stats st;
    tile_rt_get_stats(f.rt, &st);
    CHECK(st.tunings == (uint64_t)want_tunings && st.tune_disk_hits == (uint64_t)want_disk_hits);
    if (want_launches >= 0 && stub_nlaunches() != want_launches)
        fprintf(stderr, "K=%lld: %d launches, want %d\n", (long long)kval, stub_nlaunches(), want_launches),
            rt_test_failures++;
    /* the trials' copies and the flush buffer are freed */
    CHECK(stub_live_allocs() == allocs);
    /* the same key again: the choice in memory, one launch, no trials */
    int n0 = stub_nlaunches();
    CHECK(tile_rt_launch(f.k, f.a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(stub_nlaunches() == n0 + 1);
    tile_rt_get_stats(f.rt, &st);
    CHECK(st.tunings == (uint64_t)want_tunings);
    fix_close(&f);
}

static void test_tuning(void) {
    /* BLOCK=256 warps=2 fastest by far: each of the 4 candidates gets 2 warm-up launches and
     * 9 samples, no final round (none within 3%), then the real launch */
    Costs fast_b256w2 = {1.0, 1.0, 1.0, 0.5};
    tune_once(2, &fast_b256w2, "BLOCK=256, K=2, warps=2, stages=2; div16: x out n", 1, 0, 4 * 11 + 1);
    /* a later process: the choice comes from the tuning cache, no trial */
    Costs other = {0.1, 1.0, 1.0, 1.0};
    tune_once(2, &other, "BLOCK=256, K=2, warps=2, stages=2", 0, 1, 1);
    /* another value of the const parameter is another key: tuned again, here to the
     * variant the new costs favour */
    tune_once(3, &other, "BLOCK=128, K=3, warps=1, stages=2", 1, 0, 4 * 11 + 1);
    /* and its own entry: K=2's choice is still on disk (one shared entry would now hold
     * K=3's choice, which names no K=2 candidate, and K=2 would be tuned again) */
    tune_once(2, &other, "BLOCK=256, K=2, warps=2, stages=2", 0, 1, 1);
    /* a variant that fails to launch is skipped; two within 3% of each other are timed
     * again, 21 samples each, and the faster of those wins */
    Costs fail_close = {-1, 1.0, 0.50, 0.51};
    Fix f;
    fix_open(&f, 1, 4, 4 * 8192, 4096);
    stub_set_cost(cost, &fail_close);
    CHECK(tile_rt_launch(f.k, f.a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(!strncmp(tile_rt_last_variant(f.k), "BLOCK=256, K=4, warps=1,", 24));
    CHECK(launches_with(0, 32, 32) == 0);
    CHECK(launches_with(0, 32, 64) == 11);
    CHECK(launches_with(0, 16, 32) == 11 + 21 + 1);
    CHECK(launches_with(0, 16, 64) == 11 + 21);
    /* a new key (n = 8192: 64 and 32 programs) is tuned again */
    set_args(f.a, f.x, f.out, 8192);
    stub_reset();
    stub_set_nparams(3);
    CHECK(tile_rt_launch(f.k, f.a, 3, NULL, NULL) == TILE_RT_OK);
    tile_rt_stats st;
    tile_rt_get_stats(f.rt, &st);
    CHECK(st.tunings == 2 && stub_nlaunches() > 4 * 11);
    fix_close(&f);
}

/* Without an L2 size (no flush buffer) a sample is a batch of back-to-back launches of at
 * least 0.25 ms (1 ms in the final round), sized from each candidate's own time. */
static void test_tuning_batches(void) {
    Costs fail_close = {-1, 1.0, 0.50, 0.51};
    Fix f;
    fix_open(&f, 1, 5, 4 * 8192, 4096);
    stub_set_cost(cost, &fail_close);
    stub_set_l2(0);
    CHECK(tile_rt_launch(f.k, f.a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(!strncmp(tile_rt_last_variant(f.k), "BLOCK=256, K=5, warps=1,", 24));
    /* screening: 2 warm-ups, 1 launch that sizes the batch, 9 batches of
     * (int)(0.25 / t) + 1 = 1 launch; final round: 21 batches of (int)(1 / t) + 1 */
    CHECK(launches_with(0, 32, 32) == 0);
    CHECK(launches_with(0, 32, 64) == 12);
    CHECK(launches_with(0, 16, 32) == 12 + 21 * 3 + 1);
    CHECK(launches_with(0, 16, 64) == 12 + 21 * 2);
    fix_close(&f);
}

/* tile_rt_bench: warm-up launches (the first one tunes when needed), then `reps` timed
 * ones; the median of their event times. */
/* An in-place kernel under tuning, on the data: each launch (trial or real) adds 1 to
 * every element of x (the cost callback plays the kernel, on the stub's host memory) and
 * counts itself in out[0].  x is passed with its size, so the tuner saves it before the
 * trials and restores it after them: x ends as it was plus one launch's update.  out is
 * passed with bytes = 0 (not restored, as documented): it shows how many launches ran. */
static double inplace_cost(const StubLaunch *l, void *ud) {
    (void)ud;
    float *x = (float *)(uintptr_t)l->params[0];
    float *out = (float *)(uintptr_t)l->params[1];
    int n = (int)(uint32_t)l->params[2];
    for (int i = 0; i < n; i++)
        x[i] += 1.0f;
    out[0] += 1.0f;
    /* BLOCK=256 warps=2 (16 programs of 64 threads) the fastest: a choice, no final round */
    return l->grid[0] == 16 && l->block[0] == 64 ? 0.5 : 1.0;
}

static void test_tune_restores_data(void) {
    enum { N = 4096 };
    Fix f;
    fix_open(&f, 1, 17, 4 * N, N); /* K=17: a key no other test tunes */
    float *host = malloc(4 * N);
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    CHECK(tile_rt_copy_to_device(f.rt, f.x, host, 4 * N) == TILE_RT_OK);
    memset(host, 0, 4 * N);
    CHECK(tile_rt_copy_to_device(f.rt, f.out, host, 4 * N) == TILE_RT_OK);
    f.a[0].buf.bytes = 4 * N; /* read and written: saved and restored around the trials */
    stub_set_cost(inplace_cost, NULL);
    CHECK(tile_rt_launch(f.k, f.a, 3, NULL, NULL) == TILE_RT_OK);
    tile_rt_stats st;
    tile_rt_get_stats(f.rt, &st);
    CHECK(st.tunings == 1 && stub_nlaunches() > 4);
    CHECK(!strncmp(tile_rt_last_variant(f.k), "BLOCK=256, K=17, warps=2", 24));
    CHECK(tile_rt_copy_to_host(f.rt, host, f.x, 4 * N) == TILE_RT_OK);
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += host[i] != (float)i + 1.0f;
    if (wrong)
        fprintf(stderr, "after tuning, %d of %d elements of x are not the input plus one launch (x[0] = %g)\n", wrong,
                N, host[0]);
    CHECK(wrong == 0);
    CHECK(tile_rt_copy_to_host(f.rt, host, f.out, 4 * N) == TILE_RT_OK);
    CHECK(host[0] == (float)stub_nlaunches()); /* every launch ran on out, none restored it */
    free(host);
    fix_close(&f);
}

static void test_bench(void) {
    Fix f;
    fix_open(&f, 0, 2, 8192, 1000);
    Costs c = {0.25, 1, 1, 1};
    stub_set_cost(cost, &c);
    double ms = -1;
    CHECK(tile_rt_bench(f.k, f.a, 3, NULL, 2, 5, &ms) == TILE_RT_OK);
    CHECK(stub_nlaunches() == 1 + 2 + 5);
    /* variant 0 (BLOCK=128: 8 programs for n = 1000, not the 32 of the cost table): 1 ms */
    CHECK(ms == 1.0);
    CHECK(tile_rt_bench(f.k, f.a, 3, NULL, 0, 1, &ms) == TILE_RT_OK && stub_nlaunches() == 10);
    CHECK(tile_rt_bench(f.k, f.a, 3, NULL, 0, 0, &ms) == TILE_RT_ERR_INVALID);
    CHECK(tile_rt_bench(f.k, f.a, 3, NULL, -1, 1, &ms) == TILE_RT_ERR_INVALID);
    fix_close(&f);
}

/* ---- a bundle's specializations ---------------------------------------------------- */
/* Kernel `name` of a bundle tilec builds (with `flags`) from `text`, written to the cache
 * folder; NULL (a check failed) when that does not work. */
static tile_rt_kernel *bundle_kernel(tile_rt *rt, const char *tilec, const char *name, const char *text,
                                     const char *flags, tile_rt_module **m) {
    char tile[160], tb[160], cmd[640];
    snprintf(tile, sizeof tile, "%s/%s.tile", cache, name);
    snprintf(tb, sizeof tb, "%s/%s.tb", cache, name);
    FILE *f = fopen(tile, "w");
    CHECK(f && fputs(text, f) >= 0);
    if (f)
        fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' '%s' --emit=bundle %s -o '%s'", tilec, tile, flags, tb);
    CHECK(system(cmd) == 0);
    tile_rt_kernel *k = NULL;
    *m = NULL;
    CHECK(tile_rt_load_bundle_file(rt, tb, m) == TILE_RT_OK);
    CHECK(*m && tile_rt_get_kernel(*m, name, &k) == TILE_RT_OK);
    return k;
}

/* One launch of k, which must run the record `want` (its variant text with facts). */
static void launch_runs(tile_rt_kernel *k, const tile_rt_arg *a, int nargs, const char *want) {
    CHECK(tile_rt_launch(k, a, nargs, NULL, NULL) == TILE_RT_OK);
    const char *got = tile_rt_last_variant(k);
    CHECK(got && !strcmp(got, want));
    if (got && strcmp(got, want))
        fprintf(stderr, "  got '%s', want '%s'\n", got, want);
}

/* tilec writes each variant under four sets of facts (none; pointers div16; pointers div16
 * and integers div8; pointers and integers div16): a launch gets the most specialized record
 * its arguments satisfy. */
static void test_bundle_facts(const char *tilec) {
    tile_rt *rt = open_stub(0);
    tile_rt_module *m;
    tile_rt_kernel *k = bundle_kernel(rt, tilec, "scale", src, "-D K=2", &m);
    void *x, *out;
    CHECK(tile_rt_alloc(rt, 8192, &x) == TILE_RT_OK);
    CHECK(tile_rt_alloc(rt, 8192, &out) == TILE_RT_OK);
    stub_reset();
    stub_set_nparams(3);
    tile_rt_arg a[4];
    static const struct {
        int64_t off, n;
        const char *want;
    } cases[] = {
        {0, 1000, "BLOCK=128, K=2, warps=1, stages=2; div16: x out; div8: n"},
        {0, 1024, "BLOCK=128, K=2, warps=1, stages=2; div16: x out n"},
        {0, 1004, "BLOCK=128, K=2, warps=1, stages=2; div16: x out"},
        {0, 8, "BLOCK=128, K=2, warps=1, stages=2; div16: x out; div8: n"},
        /* x 8 bytes off: no record assumes less than div16 of a pointer but the generic one */
        {8, 1000, "BLOCK=128, K=2, warps=1, stages=2"},
    };
    for (size_t i = 0; k && i < sizeof cases / sizeof cases[0]; i++) {
        set_args(a, (char *)x + cases[i].off, out, cases[i].n);
        launch_runs(k, a, 3, cases[i].want);
    }
    tile_rt_module_free(m);
    /* a parameter assumed equal to 1 at build time (a unit stride) gets no divisibility
     * form, so the integer forms stay launchable with it */
    static const char src2[] = "kernel gather(x: *f32, out: *f32, n: i32, s: i32)\n"
                               "    tune BLOCK in [128, 256]\n"
                               "    grid(cdiv(n, BLOCK))\n"
                               "{\n"
                               "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                               "    let m = offs < n;\n"
                               "    store(out + offs, load(x + offs * s, mask=m), mask=m);\n"
                               "}\n";
    k = bundle_kernel(rt, tilec, "gather", src2, "--assume-one=s", &m);
    stub_set_nparams(4);
    static const struct {
        int64_t n;
        const char *want;
    } cases2[] = {
        {1000, "BLOCK=128, warps=4, stages=2; div16: x out; div8: n; eq1: s"},
        {1024, "BLOCK=128, warps=4, stages=2; div16: x out n; eq1: s"},
    };
    for (size_t i = 0; k && i < sizeof cases2 / sizeof cases2[0]; i++) {
        set_args(a, x, out, cases2[i].n);
        a[3] = (tile_rt_arg){.kind = TILE_RT_ARG_I64, .i64 = 1};
        launch_runs(k, a, 4, cases2[i].want);
    }
    tile_rt_free(rt, x);
    tile_rt_free(rt, out);
    tile_rt_module_free(m);
    tile_rt_close(rt);
}

/* ---- tile_rt_launch_grid_fn: the grid from each variant's constants --------------- */
typedef struct GridSeen {
    int calls, fail;
    bool block128, block256, k7, warps;
} GridSeen;

/* cdiv(n, BLOCK) + 7 programs: not what the grid clause gives, so the launches show it */
static int grid_of_variant(void *ud, int n, const char *const *names, const double *values, int64_t grid[3]) {
    GridSeen *g = ud;
    g->calls++;
    int64_t block = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(names[i], "BLOCK"))
            block = (int64_t)values[i];
        g->k7 |= !strcmp(names[i], "K") && values[i] == 7;
        g->warps |= !strcmp(names[i], "warps") && (values[i] == 1 || values[i] == 2);
    }
    g->block128 |= block == 128;
    g->block256 |= block == 256;
    if (g->fail || !block)
        return 1;
    grid[0] = (4096 + block - 1) / block + 7;
    return 0;
}

static void test_grid_fn(void) {
    Fix f;
    fix_open(&f, 1, 7, 4 * 8192, 4096); /* K=7: a key no earlier test tuned (nor cached) */
    f.a[0].buf.bytes = 4 * 8192;
    GridSeen g = {0};
    CHECK(tile_rt_launch_grid_fn(f.k, f.a, 3, NULL, grid_of_variant, &g) == TILE_RT_OK);
    /* every variant the tuner timed got its own grid: 4096/128 + 7 and 4096/256 + 7 */
    CHECK(g.block128 && g.block256 && g.k7 && g.warps);
    CHECK(launches_with(0, 39, 32) > 0 && launches_with(0, 23, 32) > 0);
    CHECK(launches_with(0, 32, 32) == 0 && launches_with(0, 16, 32) == 0); /* not the clause's */
    const StubLaunch *last = stub_launch(stub_nlaunches() - 1);
    bool chose128 = !strncmp(tile_rt_last_variant(f.k), "BLOCK=128", 9);
    CHECK(last->grid[0] == (chose128 ? 39u : 23u));
    /* a failing function fails the launch, naming the variant */
    g.fail = 1;
    CHECK_ERR(tile_rt_launch_grid_fn(f.k, f.a, 3, NULL, grid_of_variant, &g), TILE_RT_ERR_ARGS,
              tile_rt_last_error(f.rt), "the grid function failed");
    /* a plain launch afterwards takes the grid clause again */
    int n0 = stub_nlaunches();
    CHECK(tile_rt_launch(f.k, f.a, 3, NULL, NULL) == TILE_RT_OK);
    CHECK(stub_nlaunches() == n0 + 1 && stub_launch(n0)->grid[0] == (chose128 ? 32u : 16u));
    fix_close(&f);
}

int main(int argc, char **argv) {
    if (!getenv("TILE_LIBCUDA")) {
        fprintf(stderr, "set TILE_LIBCUDA to libstubcuda.so (CTest does)\n");
        return 1;
    }
    snprintf(cache, sizeof cache, "/tmp/tilec-stub-XXXXXX");
    if (!mkdtemp(cache))
        return 1;
    setenv("TILE_TUNE_LOG", "0", 1);
    test_launch();
    test_tuning();
    test_tuning_batches();
    test_tune_restores_data();
    test_bench();
    test_grid_fn();
    if (argc > 1)
        test_bundle_facts(argv[1]);
    else
        fprintf(stderr, "no tilec given: the bundle's facts are not tested\n");
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", cache);
    TEST_DONE();
}
