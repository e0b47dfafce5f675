/* One GEMM cubin timed through the CUDA driver API: tilec's matmul (examples/matmul.tile, one
 * variant compiled with `tilec --emit=cubin --div16 --assume-one=stride_ak,stride_bn,stride_cn
 * -D BM=.. -D BN=.. -D BK=.. -D warps=.. -D stages=..`) or Triton's _tr_matmul (bench/gemm.py's
 * kernel, its cubin from triton.compile with DISABLE_MMA_V3=1).  Same f16 inputs, 64 sampled
 * outputs checked against a double-precision dot product, median of 15 batches of 10 launches
 * (no L2 flush).  Where bench/gemm.py compares tuned kernels, this compares two cubins.
 *
 *   gcc -O2 -I/usr/local/cuda/include bench/cubin_gemm.c -o cubin_gemm -lcuda -lm
 *   ./cubin_gemm CUBIN matmul tilec N BM BN THREADS SMEM_BYTES
 *   ./cubin_gemm CUBIN _tr_matmul triton N BM BN THREADS SMEM_BYTES */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#define CK(x)                                                             \
    do {                                                                  \
        CUresult r_ = (x);                                                \
        if (r_) {                                                         \
            const char *s;                                                \
            cuGetErrorString(r_, &s);                                     \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s); \
            exit(1);                                                      \
        }                                                                 \
    } while (0)
static unsigned short f2h(float f) { /* round to nearest f16 (normal range) */
    unsigned u;
    memcpy(&u, &f, 4);
    unsigned s = (u >> 16) & 0x8000;
    int e = ((u >> 23) & 0xff) - 127 + 15;
    unsigned m = u & 0x7fffff;
    if (e <= 0)
        return s;
    if (e >= 31)
        return s | 0x7c00;
    unsigned h = s | (e << 10) | (m >> 13);
    if ((m >> 12) & 1)
        h++;
    return h;
}
static float h2f(unsigned short h) {
    unsigned s = (h & 0x8000) << 16, e = (h >> 10) & 31, m = h & 1023, u;
    if (!e)
        u = s;
    else
        u = s | ((e - 15 + 127) << 23) | (m << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: cubench CUBIN NAME tilec|triton N BM BN THREADS [SMEM]\n");
        return 2;
    }
    const char *path = argv[1], *name = argv[2];
    int triton = !strcmp(argv[3], "triton");
    int n = atoi(argv[4]), bm = atoi(argv[5]), bn = atoi(argv[6]), thr = atoi(argv[7]);
    unsigned smem = argc > 8 ? (unsigned)atoi(argv[8]) : 0;
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CK(cuModuleLoad(&mod, path));
    CUfunction fn;
    CK(cuModuleGetFunction(&fn, mod, name));
    int st = 0;
    CK(cuFuncGetAttribute(&st, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
    if (smem)
        CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem));
    size_t ne = (size_t)n * n;
    unsigned short *ha = malloc(ne * 2), *hb = malloc(ne * 2), *hc = malloc(ne * 2);
    srand(1);
    for (size_t i = 0; i < ne; i++) {
        ha[i] = f2h((float)rand() / RAND_MAX - 0.5f);
        hb[i] = f2h((float)rand() / RAND_MAX - 0.5f);
    }
    CUdeviceptr a, b, c, scratch;
    CK(cuMemAlloc(&a, ne * 2));
    CK(cuMemAlloc(&b, ne * 2));
    CK(cuMemAlloc(&c, ne * 2));
    CK(cuMemAlloc(&scratch, 1 << 20));
    CK(cuMemcpyHtoD(a, ha, ne * 2));
    CK(cuMemcpyHtoD(b, hb, ne * 2));
    CK(cuMemsetD8(c, 0xff, ne * 2));
    int M = n, N = n, K = n, one = 1, ld = n;
    void *pt[] = {&a, &b, &c, &M, &N, &K, &ld, &one, &ld, &one, &ld, &one};
    void *pr[] = {&a, &b, &c, &M, &N, &K, &ld, &ld, &ld, &scratch, &scratch};
    void **args = triton ? pr : pt;
    unsigned grid = (unsigned)(((n + bm - 1) / bm) * ((n + bn - 1) / bn));
    CK(cuLaunchKernel(fn, grid, 1, 1, thr, 1, 1, smem, 0, args, 0));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(hc, c, ne * 2));
    double maxerr = 0;
    for (int t = 0; t < 64; t++) {
        int i = (t * 2654435761u) % n, j = (t * 40503u + 7) % n;
        double s = 0;
        for (int k = 0; k < K; k++)
            s += (double)h2f(ha[(size_t)i * n + k]) * h2f(hb[(size_t)k * n + j]);
        double e = fabs(h2f(hc[(size_t)i * n + j]) - s);
        if (e > maxerr)
            maxerr = e;
    }
    CUevent e0, e1;
    CK(cuEventCreate(&e0, 0));
    CK(cuEventCreate(&e1, 0));
    float ts[15];
    for (int r = 0; r < 15; r++) {
        CK(cuEventRecord(e0, 0));
        for (int it = 0; it < 10; it++)
            CK(cuLaunchKernel(fn, grid, 1, 1, thr, 1, 1, smem, 0, args, 0));
        CK(cuEventRecord(e1, 0));
        CK(cuEventSynchronize(e1));
        CK(cuEventElapsedTime(&ts[r], e0, e1));
        ts[r] /= 10;
    }
    for (int i = 0; i < 15; i++)
        for (int j = i + 1; j < 15; j++)
            if (ts[j] < ts[i]) {
                float x = ts[i];
                ts[i] = ts[j];
                ts[j] = x;
            }
    double tf = 2.0 * n * n * (double)n / (ts[7] * 1e-3) / 1e12;
    printf("%-28s n=%d median %.4f ms  %.1f TFLOP/s  (min %.4f)  maxerr %.3g%s\n", path, n, ts[7], tf, ts[0], maxerr,
           maxerr > 0.5 ? " WRONG" : "");
    return 0;
}
