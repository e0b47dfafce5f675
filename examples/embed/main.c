/* embed_demo: calls kernels embedded with tilec_add_kernels through their generated,
 * typed launch functions, and checks every result against plain C.
 *
 * The device is $TILE_DEVICE: cuda (default) or interp.  Exit status: 0 all results
 * right, 1 a wrong result or a failed call, 77 the requested device cannot open here
 * (no GPU or driver), so a test can skip. */
#include "softmax.tile.h"
#include "vector_add.tile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(bool ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "embed_demo: FAIL: %s\n", what);
        failures++;
    }
}

/* Deterministic inputs in [-2, 2). */
static void fill(float *x, size_t n, uint32_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((double)(s >> 40) / (double)(1ull << 24) * 4.0 - 2.0);
    }
}

/* A device buffer holding `host` (or poison: NaN bits, so an unwritten output shows). */
static float *upload(tile_rt *rt, const float *host, size_t n) {
    void *d = NULL;
    if (tilec_alloc(rt, n * sizeof(float), &d) != TILE_RT_OK)
        return NULL;
    float *poison = NULL;
    if (!host) {
        poison = malloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++)
            poison[i] = NAN;
        host = poison;
    }
    tile_rt_status s = tile_rt_copy_to_device(rt, d, host, n * sizeof(float));
    free(poison);
    return s == TILE_RT_OK ? d : NULL;
}

static bool download(tile_rt *rt, float *host, const float *dev, size_t n) {
    return tile_rt_synchronize(rt) == TILE_RT_OK &&
           tile_rt_copy_to_host(rt, host, dev, n * sizeof(float)) == TILE_RT_OK;
}

static void test_vector_add(tile_rt *rt, int n) {
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    float *out = malloc(n * sizeof(float));
    fill(x, n, 1);
    fill(y, n, 2);
    float *dx = upload(rt, x, n), *dy = upload(rt, y, n), *dout = upload(rt, NULL, n);
    float *dout2 = upload(rt, NULL, n);
    check(dx && dy && dout && dout2, "allocating vector_add buffers");
    if (dx && dy && dout && dout2) {
        tile_rt_status s = vector_add_launch(NULL, dx, dy, dout, n);
        if (s != TILE_RT_OK)
            fprintf(stderr, "vector_add_launch: %s\n", vector_add_error());
        check(s == TILE_RT_OK, "vector_add_launch");
        check(download(rt, out, dout, n), "reading vector_add's output");
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += out[i] != x[i] + y[i]; /* one f32 add: exact */
        check(bad == 0, "vector_add: every out[i] == x[i] + y[i]");

        /* An explicit grid: programs of the largest BLOCK's width, more than needed;
         * the mask keeps the extra ones idle. */
        const int64_t grid[3] = {(n + 1023) / 1024, 1, 1};
        s = vector_add_launch_grid(NULL, dx, dy, dout2, n, grid);
        check(s == TILE_RT_OK, "vector_add_launch_grid");
        check(download(rt, out, dout2, n), "reading vector_add_launch_grid's output");
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += out[i] != x[i] + y[i];
        check(bad == 0, "vector_add_launch_grid: every out[i] == x[i] + y[i]");
        printf("vector_add n=%d: %s\n", n, bad ? "WRONG" : "ok");
    }
    tilec_free(rt, dx);
    tilec_free(rt, dy);
    tilec_free(rt, dout);
    tilec_free(rt, dout2);
    free(x);
    free(y);
    free(out);
}

static void test_softmax(tile_rt *rt, int rows, int cols) {
    size_t n = (size_t)rows * cols;
    float *x = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
    fill(x, n, 3);
    float *dx = upload(rt, x, n), *dout = upload(rt, NULL, n);
    check(dx && dout, "allocating softmax buffers");
    if (dx && dout) {
        tile_rt_status s = softmax_launch(NULL, dout, dx, rows, cols);
        if (s != TILE_RT_OK)
            fprintf(stderr, "softmax_launch: %s\n", softmax_error());
        check(s == TILE_RT_OK, "softmax_launch");
        check(download(rt, out, dout, n), "reading softmax's output");
        double worst = 0;
        for (int r = 0; r < rows; r++) {
            const float *xr = x + (size_t)r * cols;
            double m = -INFINITY, sum = 0;
            for (int c = 0; c < cols; c++)
                m = fmax(m, xr[c]);
            for (int c = 0; c < cols; c++)
                sum += exp(xr[c] - m);
            for (int c = 0; c < cols; c++) {
                double want = exp(xr[c] - m) / sum, got = out[(size_t)r * cols + c];
                double err = fabs(got - want) / fmax(want, 1e-30);
                if (!(err <= worst))
                    worst = isnan(err) ? INFINITY : err;
            }
        }
        check(worst < 1e-4, "softmax: relative error below 1e-4 everywhere");
        printf("softmax %dx%d: max relative error %.2e\n", rows, cols, worst);

        /* A row wider than every BLOCK: no variant admits it, and the error says why. */
        s = softmax_launch(NULL, dout, dx, 1, 1 << 20);
        check(s == TILE_RT_ERR_NO_VARIANT, "softmax with cols = 2^20 fails with NO_VARIANT");
        check(strstr(softmax_error(), "BLOCK >= cols") != NULL, "the NO_VARIANT message names the where clause");
    }
    tilec_free(rt, dx);
    tilec_free(rt, dout);
    free(x);
    free(out);
}

int main(void) {
    const char *dev = getenv("TILE_DEVICE");
    bool interp = dev && !strcmp(dev, "interp");
    if (dev && *dev && !interp && strcmp(dev, "cuda")) {
        fprintf(stderr, "embed_demo: TILE_DEVICE=%s: expected cuda or interp\n", dev);
        return 1;
    }
    tile_rt *rt = NULL;
    tile_rt_status s = tile_rt_open(interp ? TILE_RT_INTERP : TILE_RT_CUDA, NULL, &rt);
    if (s != TILE_RT_OK) {
        fprintf(stderr, "embed_demo: cannot open the %s device: %s\n", interp ? "interp" : "cuda",
                tile_rt_open_error());
        return s == TILE_RT_ERR_NO_DRIVER ? 77 : 1;
    }
    printf("device: %s\n", tile_rt_device_name(rt));
    /* Both headers share this device (else each would open its own on first launch). */
    check(vector_add_use_device(rt) == TILE_RT_OK, "vector_add_use_device");
    check(softmax_use_device(rt) == TILE_RT_OK, "softmax_use_device");
    if (failures) {
        fprintf(stderr, "embed_demo: %s %s\n", vector_add_error(), softmax_error());
        return 1;
    }
    tile_rt *got = NULL;
    check(vector_add_device(&got) == TILE_RT_OK && got == rt, "vector_add_device returns the shared device");

    /* The interpreter runs every program on the CPU: smaller shapes there. */
    test_vector_add(rt, interp ? 5003 : 1000003);
    test_softmax(rt, interp ? 3 : 1000, interp ? 1000 : 1000);
    if (!interp)
        test_softmax(rt, 64, 4096);

    tile_rt_close(rt);
    if (failures) {
        fprintf(stderr, "embed_demo: %d check%s failed\n", failures, failures == 1 ? "" : "s");
        return 1;
    }
    printf("embed_demo: all checks passed\n");
    return 0;
}
