/* The generated header on its own: built in-tree with tilec_add_kernels and -Werror,
 * run on the interpreter with the device opened lazily from $TILE_DEVICE.  Checks
 * typed f16 pointers, a float scalar, a const parameter passed as an argument, a kernel
 * without a grid clause (_launch_grid), a renamed parameter, and the error path. */
#include "header_kernels.tile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                         \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                  \
        }                                                                \
    } while (0)

/* f16 bits of small integers and halves (exact), and back. */
static tilec_f16 to_f16(float f) {
    if (f == 0)
        return 0;
    uint16_t sign = f < 0 ? 0x8000 : 0;
    f = fabsf(f);
    int e = 0;
    while (f >= 2) {
        f /= 2;
        e++;
    }
    while (f < 1) {
        f *= 2;
        e--;
    }
    return (tilec_f16)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)lroundf((f - 1) * 1024));
}

static float from_f16(tilec_f16 h) {
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e ? ldexpf(1 + m / 1024.0f, e - 15) : ldexpf(m / 1024.0f, -14);
    return h & 0x8000 ? -v : v;
}

/* `header_test no-driver`, without $TILE_DEVICE: where no GPU driver is, the error says how
 * to run on the interpreter (exit 77 where the GPU opens: nothing to check there). */
static int check_no_driver(void) {
    tile_rt *rt = NULL;
    if (header_kernels_device(&rt) == TILE_RT_OK) {
        printf("header test: a GPU opened; the no-driver message is not checked here\n");
        return 77;
    }
    const char *e = header_kernels_error();
    printf("header test: %s\n", e);
    CHECK(strstr(e, "opening the cuda device") && strstr(e, "set TILE_DEVICE=interp") &&
          strstr(e, "TILE_INTERP_FALLBACK=1"));
    if (!failures)
        printf("header test: the no-driver message is right\n");
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "no-driver"))
        return check_no_driver();
    tile_rt *rt = NULL;
    CHECK(header_kernels_device(&rt) == TILE_RT_OK && rt); /* opens lazily ($TILE_DEVICE) */
    if (!rt) {
        fprintf(stderr, "%s\n", header_kernels_error());
        return 1;
    }
    enum { N = 1000 };
    tilec_f16 hx[N], hy[N];
    void *x, *y, *a, *b;
    CHECK(tilec_alloc(rt, sizeof hx, &x) == TILE_RT_OK && tilec_alloc(rt, sizeof hy, &y) == TILE_RT_OK);
    CHECK(tilec_buffer_bytes(x) == sizeof hx && tilec_buffer_bytes((char *)x + 10) == sizeof hx - 10);
    for (int i = 0; i < N; i++)
        hx[i] = to_f16((float)(i % 64) - 32);
    CHECK(tile_rt_copy_to_device(rt, x, hx, sizeof hx) == TILE_RT_OK);
    const int64_t grid[3] = {(N + 255) / 256, 1, 1};
    for (int mode = 0; mode < 2; mode++) {
        tile_rt_status s = scale_launch_grid(NULL, y, x, N, 0.5f, mode, grid);
        if (s != TILE_RT_OK)
            fprintf(stderr, "scale: %s\n", header_kernels_error());
        CHECK(s == TILE_RT_OK);
        CHECK(tile_rt_synchronize(rt) == TILE_RT_OK);
        CHECK(tile_rt_copy_to_host(rt, hy, y, sizeof hy) == TILE_RT_OK);
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += from_f16(hy[i]) != ((float)(i % 64) - 32) * 0.5f + mode;
        CHECK(bad == 0);
    }
    /* A pointer the header cannot size (not from tilec_alloc) fails on the interpreter
     * with a message naming the parameter. */
    int32_t host_in[N], host_out[N];
    CHECK(tilec_alloc(rt, sizeof host_in, &a) == TILE_RT_OK && tilec_alloc(rt, sizeof host_out, &b) == TILE_RT_OK);
    for (int i = 0; i < N; i++)
        host_in[i] = i - 500;
    CHECK(tile_rt_copy_to_device(rt, a, host_in, sizeof host_in) == TILE_RT_OK);
    CHECK(copy_launch(NULL, (int32_t *)a, (int32_t *)b, N) == TILE_RT_OK);
    CHECK(tile_rt_synchronize(rt) == TILE_RT_OK);
    CHECK(tile_rt_copy_to_host(rt, host_out, b, sizeof host_out) == TILE_RT_OK);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += host_out[i] != 2 * (i - 500);
    CHECK(bad == 0);
    if (!strcmp(tile_rt_device_name(rt), "interpreter")) {
        CHECK(copy_launch(NULL, host_in, host_out, N) == TILE_RT_ERR_ARGS);
        CHECK(strstr(header_kernels_error(), "stream") != NULL);
    }
    CHECK(header_kernels_use_device(rt) == TILE_RT_OK); /* the same device: fine */
    tilec_free(rt, x);
    tilec_free(rt, y);
    tilec_free(rt, a);
    tilec_free(rt, b);
    CHECK(tilec_buffer_bytes(x) == 0);
    if (failures)
        return 1;
    printf("header test: all checks passed\n");
    return 0;
}
