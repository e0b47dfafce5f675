/* The interpreter device through the runtime API: vector_add and softmax against C
 * references, then the argument checks (count, kind, range: each naming the parameter)
 * and a launch no variant admits (naming the predicate). */
#include "tile/runtime.h"
#include "tile/tile.h"
#include "rt_test.h"

#include <math.h>

static tile_rt_arg ptr(void *p, size_t bytes) {
    tile_rt_arg a = {.kind = TILE_RT_ARG_PTR};
    a.buf.ptr = p;
    a.buf.bytes = bytes;
    return a;
}
static tile_rt_arg i64(int64_t v) {
    tile_rt_arg a = {.kind = TILE_RT_ARG_I64};
    a.i64 = v;
    return a;
}
static tile_rt_arg f64(double v) {
    tile_rt_arg a = {.kind = TILE_RT_ARG_F64};
    a.f64 = v;
    return a;
}

static tile_rt_kernel *kernel(tile_rt *rt, const char *file, const char *name, tile_rt_module **m) {
    tile_rt_kernel *k = NULL;
    CHECK(tile_rt_load_source_file(rt, file, m) == TILE_RT_OK);
    if (*m)
        CHECK(tile_rt_get_kernel(*m, name, &k) == TILE_RT_OK);
    if (!k)
        fprintf(stderr, "%s\n", tile_rt_last_error(rt));
    return k;
}

static void vector_add(tile_rt *rt) {
    tile_rt_module *m;
    tile_rt_kernel *k = kernel(rt, TILEC_EXAMPLES_DIR "/vector_add.tile", "vector_add", &m);
    if (!k)
        return;
    CHECK(tile_rt_kernel_param_count(k) == 4);
    CHECK(!strcmp(tile_rt_kernel_param_name(k, 3), "n"));
    int sc;
    bool isp;
    CHECK(tile_rt_kernel_param_type(k, 0, &sc, &isp) == TILE_RT_OK && isp && sc == TILE_F32);
    const int n = 3001; /* ragged: not a multiple of any BLOCK */
    float *x = malloc(n * 4), *y = malloc(n * 4), *out = malloc(n * 4);
    tile_fill(TILE_F32, x, n, TILE_FILL_RANDN, 11);
    tile_fill(TILE_F32, y, n, TILE_FILL_RANDN, 12);
    memset(out, 0xFF, n * 4);
    tile_rt_arg args[4] = {ptr(x, n * 4), ptr(y, n * 4), ptr(out, n * 4), i64(n)};
    CHECK(tile_rt_launch(k, args, 4, NULL, NULL) == TILE_RT_OK);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += out[i] != x[i] + y[i];
    CHECK(bad == 0);
    CHECK(strstr(tile_rt_last_variant(k), "BLOCK=") != NULL);
    tile_rt_launch_info info;
    CHECK(tile_rt_last_launch_info(k, &info) == TILE_RT_OK && info.grid[0] >= 1);

    /* wrong count, kind, range: the message names the parameter */
    CHECK_ERR(tile_rt_launch(k, args, 3, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt),
              "takes 4 arguments, got 3");
    tile_rt_arg wrong[4] = {ptr(x, n * 4), i64(5), ptr(out, n * 4), i64(n)};
    CHECK_ERR(tile_rt_launch(k, wrong, 4, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt),
              "argument 2 'y' is a pointer (*f32), got an integer");
    tile_rt_arg range[4] = {ptr(x, n * 4), ptr(y, n * 4), ptr(out, n * 4), i64(1ll << 40)};
    CHECK_ERR(tile_rt_launch(k, range, 4, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt),
              "argument 'n' = 1099511627776 is out of range for i32");
    tile_rt_arg kind[4] = {ptr(x, n * 4), ptr(y, n * 4), ptr(out, n * 4), f64(3.5)};
    CHECK_ERR(tile_rt_launch(k, kind, 4, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt),
              "'n' is an integer (i32), got a float");
    tile_rt_arg nosize[4] = {ptr(x, n * 4), ptr(y, 0), ptr(out, n * 4), i64(n)};
    CHECK_ERR(tile_rt_launch(k, nosize, 4, NULL, NULL), TILE_RT_ERR_ARGS, tile_rt_last_error(rt),
              "pointer 'y' needs its size");
    /* out of bounds on the interpreter: a buffer smaller than n */
    tile_rt_arg small[4] = {ptr(x, n * 4), ptr(y, 100 * 4), ptr(out, n * 4), i64(n)};
    CHECK(tile_rt_launch(k, small, 4, NULL, NULL) == TILE_RT_ERR_RUN);
    /* a tuned constant pinned with set_const: only its variants run */
    CHECK(tile_rt_set_const(k, "BLOCK", 2048, 2048) == TILE_RT_OK);
    memset(out, 0xFF, n * 4);
    CHECK(tile_rt_launch(k, args, 4, NULL, NULL) == TILE_RT_OK);
    CHECK(strstr(tile_rt_last_variant(k), "BLOCK=2048") != NULL);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += out[i] != x[i] + y[i];
    CHECK(bad == 0);
    CHECK(tile_rt_set_const(k, "BLOCK", 4096, 4096) == TILE_RT_OK);
    CHECK(tile_rt_launch(k, args, 4, NULL, NULL) == TILE_RT_OK);
    CHECK(strstr(tile_rt_last_variant(k), "BLOCK=4096") != NULL);
    /* a pinned name that no variant has fails the next launch, naming it */
    CHECK(tile_rt_set_const(k, "BLOKC", 1, 1) == TILE_RT_OK);
    CHECK(tile_rt_launch(k, args, 4, NULL, NULL) != TILE_RT_OK);
    CHECK(strstr(tile_rt_last_error(rt), "BLOKC") != NULL);
    CHECK_ERR(tile_rt_get_kernel(m, "nope", &k), TILE_RT_ERR_NOT_FOUND, tile_rt_last_error(rt), "no kernel 'nope'");
    free(x), free(y), free(out);
    tile_rt_module_free(m);
}

static void softmax(tile_rt *rt) {
    tile_rt_module *m;
    tile_rt_kernel *k = kernel(rt, TILEC_EXAMPLES_DIR "/softmax.tile", "softmax", &m);
    if (!k)
        return;
    const int rows = 5, cols = 777;
    float *x = malloc(rows * cols * 4), *out = malloc(rows * cols * 4);
    tile_fill(TILE_F32, x, rows * cols, TILE_FILL_RANDN, 21);
    memset(out, 0xFF, rows * cols * 4);
    tile_rt_arg args[4] = {ptr(out, rows * cols * 4), ptr(x, rows * cols * 4), i64(rows), i64(cols)};
    CHECK(tile_rt_launch(k, args, 4, NULL, NULL) == TILE_RT_OK);
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < cols; c++)
            mx = fmax(mx, x[r * cols + c]);
        for (int c = 0; c < cols; c++)
            sum += exp(x[r * cols + c] - mx);
        for (int c = 0; c < cols; c++) {
            double want = exp(x[r * cols + c] - mx) / sum;
            worst = fmax(worst, fabs(out[r * cols + c] - want) / want);
        }
    }
    CHECK(worst < 1e-5);
    /* cols wider than every BLOCK: no variant; the message names the predicate */
    tile_rt_arg wide[4] = {ptr(out, rows * cols * 4), ptr(x, rows * cols * 4), i64(1), i64(100000)};
    CHECK_ERR(tile_rt_launch(k, wide, 4, NULL, NULL), TILE_RT_ERR_NO_VARIANT, tile_rt_last_error(rt), "BLOCK >= cols");
    free(x), free(out);
    tile_rt_module_free(m);
}

/* An explicit grid replaces the grid clause, every dimension of it: 2 programs of 1024
 * write the first 2048 elements and nothing else. */
static void explicit_grid(tile_rt *rt) {
    tile_rt_module *m;
    tile_rt_kernel *k = kernel(rt, TILEC_EXAMPLES_DIR "/vector_add.tile", "vector_add", &m);
    if (!k)
        return;
    const int n = 3001;
    float *x = malloc(n * 4), *y = malloc(n * 4), *out = malloc(n * 4);
    tile_fill(TILE_F32, x, n, TILE_FILL_RANDN, 31);
    tile_fill(TILE_F32, y, n, TILE_FILL_RANDN, 32);
    memset(out, 0xFF, n * 4);
    CHECK(tile_rt_set_const(k, "BLOCK", 1024, 1024) == TILE_RT_OK);
    tile_rt_arg args[4] = {ptr(x, n * 4), ptr(y, n * 4), ptr(out, n * 4), i64(n)};
    const int64_t grid[3] = {2, 1, 1};
    CHECK(tile_rt_launch(k, args, 4, NULL, grid) == TILE_RT_OK);
    tile_rt_launch_info info;
    CHECK(tile_rt_last_launch_info(k, &info) == TILE_RT_OK && info.grid[0] == 2 && info.grid[1] == 1 &&
          info.grid[2] == 1);
    int bad = 0, touched = 0;
    for (int i = 0; i < 2048; i++)
        bad += out[i] != x[i] + y[i];
    uint32_t ff;
    memset(&ff, 0xFF, 4);
    for (int i = 2048; i < n; i++)
        touched += memcmp(&out[i], &ff, 4) != 0;
    CHECK(bad == 0 && touched == 0);
    free(x), free(y), free(out);
    tile_rt_module_free(m);
}

static void compile_error(tile_rt *rt) {
    const char *src = "kernel k(x: *f32) { let y = ; }\n";
    tile_rt_module *m = NULL;
    CHECK_ERR(tile_rt_load_source(rt, "bad.tile", src, strlen(src), &m), TILE_RT_ERR_COMPILE, tile_rt_last_error(rt),
              "bad.tile:1:");
    CHECK(m == NULL);
}

int main(void) {
    tile_rt *rt;
    CHECK(tile_rt_open(TILE_RT_INTERP, NULL, &rt) == TILE_RT_OK);
    vector_add(rt);
    softmax(rt);
    explicit_grid(rt);
    compile_error(rt);
    tile_rt_close(rt);
    TEST_DONE();
}
