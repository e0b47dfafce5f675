/* A stub of the CUDA driver for tests of libtilert's CUDA path without a GPU.
 *
 * libstubcuda.so exports cuGetProcAddress_v2 (the only symbol the runtime's loader looks
 * up: runtime/cuda_api.c) and answers every entry point of RT_CUDA_FUNCS: one device of
 * compute capability 9.0 ("Stub GPU"), host memory as device memory, modules that keep a
 * copy of their image, launches that are recorded (function, grid, block, shared memory,
 * the parameter values) instead of run, and a virtual clock: a launch advances it by the
 * cost the test's callback gives (default 1 ms), a memset by 0.01 ms, and an event reads
 * it, so cuEventElapsedTime and hence the tuner's choice are deterministic.
 *
 * A test links this library and points $TILE_LIBCUDA at the same file: the runtime's
 * dlopen then finds the copy already loaded, so the test reads what the runtime did through
 * the functions below. */
#ifndef STUBCUDA_H
#define STUBCUDA_H

#include <stddef.h>
#include <stdint.h>

#define STUB_MAX_PARAMS 32

typedef struct StubModule {
    unsigned char *image; /* a copy: the whole ELF file, or the PTX text */
    size_t len;
    int is_ptx;
    int unloaded;
} StubModule;

typedef struct StubFunction {
    int module; /* index of stub_module() */
    char name[128];
    int max_dynamic_smem; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0 unset */
} StubFunction;

typedef struct StubLaunch {
    int function; /* index of stub_function() */
    unsigned grid[3], block[3], smem;
    void *stream;
    int nparams;                      /* how many kernelParams were read: stub_set_nparams */
    uint64_t params[STUB_MAX_PARAMS]; /* each parameter's 8-byte slot (little-endian) */
    double start_ms;                  /* the virtual clock when it began */
} StubLaunch;

/* Forgets every record (modules stay loaded, their records stay valid) and resets the
 * callback and failure settings. */
void stub_reset(void);
int stub_nlaunches(void);
const StubLaunch *stub_launch(int i);
int stub_nmodules(void);
const StubModule *stub_module(int i);
const StubFunction *stub_function(int i);
/* How many 8-byte parameter slots the next launches read (the driver knows it from the
 * image; the stub is told by the test, which knows the kernel). */
void stub_set_nparams(int n);
/* A launch's cost in virtual ms; a negative cost fails the launch with
 * CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (nothing recorded). NULL: 1 ms each. */
typedef double (*StubCost)(const StubLaunch *l, void *ud);
void stub_set_cost(StubCost fn, void *ud);
/* The L2 size the device reports (the tuner's flush buffer is twice that); 0: no L2
 * attribute, so the tuner takes its batch fallback. */
void stub_set_l2(int bytes);
/* Device allocations live (cuMemAlloc minus cuMemFree). */
int stub_live_allocs(void);

#endif
