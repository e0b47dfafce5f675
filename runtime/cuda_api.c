/* Loading the CUDA driver at run time (see cuda_api.h for why through cuGetProcAddress). */
#include "cuda_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cuGetProcAddress_v2 as of CUDA 12.0: the symbol status tells "not found" apart from
 * "found, but not at the version you asked". */
typedef CUresult(CUDAAPI *RtGetProcAddress)(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult *status);

bool rt_cuda_load(RtCuda *cu, char *why, size_t n) {
    memset(cu, 0, sizeof *cu);
    /* $TILE_LIBCUDA lets tests point at a library that is not the driver, to check that
     * a wrong library is refused cleanly, or at tests/stubcuda's stub driver, which runs
     * the CUDA path without a GPU (docs/runtime.md). */
    const char *path = getenv("TILE_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";
    cu->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!cu->lib) {
        snprintf(why, n, "%s not found: no NVIDIA driver on this machine", path);
        return false;
    }
    RtGetProcAddress gpa = (RtGetProcAddress)dlsym(cu->lib, "cuGetProcAddress_v2");
    if (!gpa) {
        snprintf(why, n,
                 "%s has no cuGetProcAddress_v2: not the NVIDIA driver, or one older "
                 "than CUDA 12.0",
                 path);
        dlclose(cu->lib);
        cu->lib = NULL;
        return false;
    }
#define X(name, params)                                                                                        \
    {                                                                                                          \
        void *fn = NULL;                                                                                       \
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;                                       \
        CUresult r = gpa(#name, &fn, RT_CUDA_ABI_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st);                   \
        if (r != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS || !fn) {                                   \
            snprintf(why, n, "the NVIDIA driver has no %s for CUDA 12.0 (error %d, status %d)", #name, (int)r, \
                     (int)st);                                                                                 \
            dlclose(cu->lib);                                                                                  \
            memset(cu, 0, sizeof *cu);                                                                         \
            return false;                                                                                      \
        }                                                                                                      \
        memcpy(&cu->name, &fn, sizeof fn);                                                                     \
    }
    RT_CUDA_FUNCS(X)
#undef X
    return true;
}

void rt_cuda_unload(RtCuda *cu) {
    if (cu->lib)
        dlclose(cu->lib);
    memset(cu, 0, sizeof *cu);
}

void rt_cuda_error_text(const RtCuda *cu, const char *call, CUresult r, char *buf, size_t n) {
    const char *name = NULL, *text = NULL;
    if (cu->cuGetErrorName)
        cu->cuGetErrorName(r, &name);
    if (cu->cuGetErrorString)
        cu->cuGetErrorString(r, &text);
    snprintf(buf, n, "%s: %s (%s)", call, name ? name : "CUDA error", text ? text : "no description");
}
