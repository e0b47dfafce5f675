/* The CUDA driver API as libtilert uses it: loaded at run time with dlopen and every entry
 * point fetched through cuGetProcAddress_v2 at the CUDA version this file was written
 * against (12.0), so a newer driver never binds us to a newer ABI of the same name
 * (plain dlsym of cuCtxSynchronize once bound the _v2 that takes a context).
 *
 * Types come from the toolkit's cuda.h (only runtime/ includes it); the prototypes are
 * written here by hand, as of CUDA 12.0, instead of taken from the header, whose macros
 * name the newest ABI of each function. */
#ifndef TILE_RT_CUDA_API_H
#define TILE_RT_CUDA_API_H

#include <cuda.h>
#include <stdbool.h>

/* The CUDA version whose ABIs we ask cuGetProcAddress for. */
#define RT_CUDA_ABI_VERSION 12000

/* X(name, return-less parameter list): every entry point libtilert calls.  The name is
 * the one cuGetProcAddress takes (without _v2: the version argument picks the ABI). */
#define RT_CUDA_FUNCS(X)                                                                                           \
    X(cuInit, (unsigned int flags))                                                                                \
    X(cuDriverGetVersion, (int *version))                                                                          \
    X(cuDeviceGetCount, (int *count))                                                                              \
    X(cuDeviceGet, (CUdevice * dev, int ordinal))                                                                  \
    X(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev))                                    \
    X(cuDeviceGetName, (char *name, int len, CUdevice dev))                                                        \
    X(cuDevicePrimaryCtxRetain, (CUcontext * pctx, CUdevice dev))                                                  \
    X(cuDevicePrimaryCtxRelease, (CUdevice dev))                                                                   \
    X(cuCtxSetCurrent, (CUcontext ctx))                                                                            \
    X(cuCtxGetCurrent, (CUcontext * pctx))                                                                         \
    X(cuCtxSynchronize, (void))                                                                                    \
    X(cuModuleLoadData, (CUmodule * module, const void *image))                                                    \
    X(cuModuleLoadDataEx,                                                                                          \
      (CUmodule * module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues)) \
    X(cuModuleGetFunction, (CUfunction * hfunc, CUmodule hmod, const char *name))                                  \
    X(cuModuleUnload, (CUmodule hmod))                                                                             \
    X(cuModuleGetGlobal, (CUdeviceptr * dptr, size_t *bytes, CUmodule hmod, const char *name))                     \
    X(cuLaunchKernel, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,          \
                       unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                     \
                       unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra))          \
    X(cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value))                              \
    X(cuFuncGetAttribute, (int *pi, CUfunction_attribute attrib, CUfunction hfunc))                                \
    X(cuMemAlloc, (CUdeviceptr * dptr, size_t bytesize))                                                           \
    X(cuMemFree, (CUdeviceptr dptr))                                                                               \
    X(cuMemcpyHtoD, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount))                                \
    X(cuMemcpyDtoH, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount))                                      \
    X(cuMemcpyDtoD, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount))                              \
    X(cuMemsetD8, (CUdeviceptr dstDevice, unsigned char uc, size_t N))                                             \
    X(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream))                      \
    X(cuEventCreate, (CUevent * phEvent, unsigned int Flags))                                                      \
    X(cuEventRecord, (CUevent hEvent, CUstream hStream))                                                           \
    X(cuEventSynchronize, (CUevent hEvent))                                                                        \
    X(cuEventElapsedTime, (float *pMilliseconds, CUevent hStart, CUevent hEnd))                                    \
    X(cuEventDestroy, (CUevent hEvent))                                                                            \
    X(cuStreamSynchronize, (CUstream hStream))                                                                     \
    X(cuGetErrorString, (CUresult error, const char **pStr))                                                       \
    X(cuGetErrorName, (CUresult error, const char **pStr))                                                         \
    X(cuPointerGetAttribute, (void *data, CUpointer_attribute attribute, CUdeviceptr ptr))

typedef struct RtCuda {
    void *lib; /* dlopen handle of libcuda.so.1 */
    int driver_version;
#define X(name, params) CUresult(CUDAAPI *name) params;
    RT_CUDA_FUNCS(X)
#undef X
} RtCuda;

/* Loads libcuda.so.1 and every entry point.  false: `why` says what is missing (the
 * library, cuGetProcAddress_v2, an entry point) and nothing is left open. */
bool rt_cuda_load(RtCuda *cu, char *why, size_t n);
void rt_cuda_unload(RtCuda *cu);
/* "cuModuleLoadData: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)" */
void rt_cuda_error_text(const RtCuda *cu, const char *call, CUresult r, char *buf, size_t n);

#endif
