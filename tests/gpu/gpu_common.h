/* Shared by the GPU tests: open the cuda device or say why not (exit code 77, which CTest
 * reads as SKIP), and small helpers. */
#ifndef GPU_COMMON_H
#define GPU_COMMON_H

#include "tile/runtime.h"
#include "tile/tile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GPU_SKIP 77

/* The examples folder: $TILEC_EXAMPLES_DIR (a build carried to another machine), else the
 * source tree's at build time. */
static inline const char *gpu_examples_dir(void) {
    const char *e = getenv("TILEC_EXAMPLES_DIR");
    return e && *e ? e : TILEC_EXAMPLES_DIR;
}

/* "DIR/name" in one of a few rotating buffers. */
static inline const char *gpu_example(const char *name) {
    static char buf[4][1024];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", gpu_examples_dir(), name);
    return buf[i];
}

/* The cuda device, or NULL after printing "SKIP: no CUDA device (reason)". */
static inline tile_rt *gpu_open(const tile_rt_options *o) {
    tile_rt *rt = NULL;
    if (tile_rt_open(TILE_RT_CUDA, o, &rt) != TILE_RT_OK) {
        printf("SKIP: no CUDA device (%s)\n", tile_rt_open_error());
        return NULL;
    }
    printf("device: %s\n", tile_rt_device_name(rt));
    return rt;
}

static inline double gpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int gpu_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double gpu_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, gpu_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
