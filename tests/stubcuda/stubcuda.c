/* The stub CUDA driver (stubcuda.h says what it answers and why).  Every entry point
 * checks its handles the way the driver would reject them (an unknown function, an
 * address outside any allocation, too much dynamic shared memory without the attribute),
 * so a runtime bug that the real driver would refuse fails here too. */
#define _GNU_SOURCE
#include "stubcuda.h"

#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define STUB_MAX_LAUNCHES 100000
#define STUB_MAX_OBJS     4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static StubLaunch *launches;
static int nlaunches;
static StubModule modules[STUB_MAX_OBJS];
static int nmodules;
static StubFunction functions[STUB_MAX_OBJS];
static int nfunctions;
static int nparams_read;
static StubCost cost_fn;
static void *cost_ud;
static int l2_bytes = 1 << 20;
static double clock_ms;
static int ctx_refs;
static int current_ctx; /* 0: none, 1: the primary context */

typedef struct Alloc {
    unsigned char *p;
    size_t n;
    struct Alloc *next;
} Alloc;
static Alloc *allocs;
static int nallocs;

typedef struct Event {
    double t;
    int recorded;
} Event;

/* Handles are 1 + an index, so 0 (NULL) is never valid. */
#define HANDLE(i) ((void *)(uintptr_t)((i) + 1))
#define INDEX(h)  ((int)(uintptr_t)(h) - 1)

/* ---- what tests read -------------------------------------------------------------- */
void stub_reset(void) {
    pthread_mutex_lock(&lock);
    nlaunches = 0;
    nparams_read = 0;
    cost_fn = NULL;
    cost_ud = NULL;
    l2_bytes = 1 << 20;
    pthread_mutex_unlock(&lock);
}
int stub_nlaunches(void) {
    return nlaunches;
}
const StubLaunch *stub_launch(int i) {
    return i >= 0 && i < nlaunches ? &launches[i] : NULL;
}
int stub_nmodules(void) {
    return nmodules;
}
const StubModule *stub_module(int i) {
    return i >= 0 && i < nmodules ? &modules[i] : NULL;
}
const StubFunction *stub_function(int i) {
    return i >= 0 && i < nfunctions ? &functions[i] : NULL;
}
void stub_set_nparams(int n) {
    nparams_read = n < 0 ? 0 : n > STUB_MAX_PARAMS ? STUB_MAX_PARAMS : n;
}
void stub_set_cost(StubCost fn, void *ud) {
    cost_fn = fn, cost_ud = ud;
}
void stub_set_l2(int bytes) {
    l2_bytes = bytes;
}
int stub_live_allocs(void) {
    return nallocs;
}

/* ---- device and context ---------------------------------------------------------- */
static CUresult s_cuInit(unsigned int flags) {
    return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
static CUresult s_cuDriverGetVersion(int *v) {
    *v = 12000;
    return CUDA_SUCCESS;
}
static CUresult s_cuDeviceGetCount(int *n) {
    *n = 1;
    return CUDA_SUCCESS;
}
static CUresult s_cuDeviceGet(CUdevice *d, int ordinal) {
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return CUDA_SUCCESS;
}
static CUresult s_cuDeviceGetAttribute(int *pi, CUdevice_attribute a, CUdevice d) {
    if (d != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
        if (!l2_bytes)
            return CUDA_ERROR_INVALID_VALUE;
        *pi = l2_bytes;
        break;
    default: *pi = 0; break;
    }
    return CUDA_SUCCESS;
}
static CUresult s_cuDeviceGetName(char *name, int len, CUdevice d) {
    if (d != 0 || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    strncpy(name, "Stub GPU", (size_t)len - 1);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}
static CUresult s_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    ctx_refs++;
    *c = (CUcontext)HANDLE(0);
    return CUDA_SUCCESS;
}
static CUresult s_cuDevicePrimaryCtxRelease(CUdevice d) {
    if (ctx_refs <= 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    ctx_refs--;
    return CUDA_SUCCESS;
}
static CUresult s_cuCtxSetCurrent(CUcontext c) {
    if (c && c != (CUcontext)HANDLE(0))
        return CUDA_ERROR_INVALID_CONTEXT;
    current_ctx = c != NULL;
    return CUDA_SUCCESS;
}
static CUresult s_cuCtxGetCurrent(CUcontext *c) {
    *c = current_ctx ? (CUcontext)HANDLE(0) : NULL;
    return CUDA_SUCCESS;
}
static CUresult s_cuCtxSynchronize(void) {
    return current_ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* ---- modules ---------------------------------------------------------------------- */
/* The length of an ELF64 image: its section header table ends it (cubins end so). */
static size_t elf_len(const unsigned char *p) {
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, p + 0x28, 8);
    memcpy(&shentsize, p + 0x3a, 2);
    memcpy(&shnum, p + 0x3c, 2);
    return (size_t)(shoff + (uint64_t)shentsize * shnum);
}

static CUresult s_cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int nopt, CUjit_option *opts,
                                     void **vals) {
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    const unsigned char *p = image;
    int is_elf = !memcmp(p,
                         "\x7f"
                         "ELF",
                         4);
    if (!is_elf && !strstr((const char *)p, ".entry"))
        return CUDA_ERROR_INVALID_IMAGE;
    size_t len = is_elf ? elf_len(p) : strlen((const char *)p) + 1;
    pthread_mutex_lock(&lock);
    if (nmodules == STUB_MAX_OBJS) {
        pthread_mutex_unlock(&lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    StubModule *sm = &modules[nmodules];
    sm->image = malloc(len);
    memcpy(sm->image, p, len);
    sm->len = len;
    sm->is_ptx = !is_elf;
    sm->unloaded = 0;
    *m = (CUmodule)HANDLE(nmodules++);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}
static CUresult s_cuModuleLoadData(CUmodule *m, const void *image) {
    return s_cuModuleLoadDataEx(m, image, 0, NULL, NULL);
}
static StubModule *module_of(CUmodule m) {
    int i = INDEX(m);
    return i >= 0 && i < nmodules && !modules[i].unloaded ? &modules[i] : NULL;
}
static CUresult s_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    StubModule *sm = module_of(m);
    if (!sm)
        return CUDA_ERROR_INVALID_HANDLE;
    /* the entry must be in the image: a symbol of the ELF file, an .entry of the PTX */
    size_t n = strlen(name);
    int found = 0;
    for (const unsigned char *q = sm->image; !found && q + n <= sm->image + sm->len; q++) {
        q = memmem(q, (size_t)(sm->image + sm->len - q), name, n);
        if (!q)
            break;
        found = (q + n == sm->image + sm->len || q[n] == 0 || (sm->is_ptx && q[n] == '(')) &&
                (q == sm->image || q[-1] == 0 || q[-1] == ' ');
    }
    if (!found || n >= sizeof functions[0].name)
        return CUDA_ERROR_NOT_FOUND;
    pthread_mutex_lock(&lock);
    if (nfunctions == STUB_MAX_OBJS) {
        pthread_mutex_unlock(&lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    StubFunction *sf = &functions[nfunctions];
    sf->module = INDEX(m);
    memcpy(sf->name, name, n + 1);
    sf->max_dynamic_smem = 0;
    *f = (CUfunction)HANDLE(nfunctions++);
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}
static CUresult s_cuModuleUnload(CUmodule m) {
    StubModule *sm = module_of(m);
    if (!sm)
        return CUDA_ERROR_INVALID_HANDLE;
    sm->unloaded = 1;
    return CUDA_SUCCESS;
}
static StubFunction *function_of(CUfunction f) {
    int i = INDEX(f);
    return i >= 0 && i < nfunctions && !modules[functions[i].module].unloaded ? &functions[i] : NULL;
}
static CUresult s_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int value) {
    StubFunction *sf = function_of(f);
    if (!sf)
        return CUDA_ERROR_INVALID_HANDLE;
    if (a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        if (value < 0 || value > 227 * 1024)
            return CUDA_ERROR_INVALID_VALUE;
        sf->max_dynamic_smem = value;
    }
    return CUDA_SUCCESS;
}
static CUresult s_cuFuncGetAttribute(int *pi, CUfunction_attribute a, CUfunction f) {
    StubFunction *sf = function_of(f);
    if (!sf)
        return CUDA_ERROR_INVALID_HANDLE;
    *pi = a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? sf->max_dynamic_smem : 0;
    return CUDA_SUCCESS;
}

/* ---- launches --------------------------------------------------------------------- */
static CUresult s_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned smem, CUstream stream, void **params, void **extra) {
    StubFunction *sf = function_of(f);
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!sf)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535 || (uint64_t)bx * by * bz > 1024 ||
        (nparams_read && !params) || extra)
        return CUDA_ERROR_INVALID_VALUE;
    if (smem > 48 * 1024 && (int)smem > sf->max_dynamic_smem)
        return CUDA_ERROR_INVALID_VALUE;
    StubLaunch l = {.function = INDEX(f),
                    .grid = {gx, gy, gz},
                    .block = {bx, by, bz},
                    .smem = smem,
                    .stream = stream,
                    .nparams = nparams_read};
    for (int i = 0; i < nparams_read; i++)
        memcpy(&l.params[i], params[i], 8);
    pthread_mutex_lock(&lock);
    l.start_ms = clock_ms;
    double c = cost_fn ? cost_fn(&l, cost_ud) : 1.0;
    if (c < 0 || nlaunches == STUB_MAX_LAUNCHES) {
        pthread_mutex_unlock(&lock);
        return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    }
    if (!launches)
        launches = malloc(STUB_MAX_LAUNCHES * sizeof *launches);
    launches[nlaunches++] = l;
    clock_ms += c;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

/* ---- memory ----------------------------------------------------------------------- */
static Alloc *find_alloc(CUdeviceptr p, size_t n) {
    for (Alloc *a = allocs; a; a = a->next)
        if ((uintptr_t)p >= (uintptr_t)a->p && (uintptr_t)p + n <= (uintptr_t)a->p + a->n)
            return a;
    return NULL;
}
static CUresult s_cuMemAlloc(CUdeviceptr *d, size_t n) {
    if (!current_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    Alloc *a = malloc(sizeof *a);
    a->n = n;
    a->p = aligned_alloc(256, (n + 255) / 256 * 256);
    if (!a->p) {
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&lock);
    a->next = allocs;
    allocs = a;
    nallocs++;
    pthread_mutex_unlock(&lock);
    *d = (CUdeviceptr)(uintptr_t)a->p;
    return CUDA_SUCCESS;
}
static CUresult s_cuMemFree(CUdeviceptr d) {
    pthread_mutex_lock(&lock);
    for (Alloc **pa = &allocs; *pa; pa = &(*pa)->next)
        if ((uintptr_t)(*pa)->p == (uintptr_t)d) {
            Alloc *a = *pa;
            *pa = a->next;
            nallocs--;
            pthread_mutex_unlock(&lock);
            free(a->p);
            free(a);
            return CUDA_SUCCESS;
        }
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_INVALID_VALUE;
}
static CUresult s_cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) {
    if (n && !find_alloc(d, n))
        return CUDA_ERROR_INVALID_VALUE;
    memcpy((void *)(uintptr_t)d, s, n);
    return CUDA_SUCCESS;
}
static CUresult s_cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) {
    if (n && !find_alloc(s, n))
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
static CUresult s_cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) {
    if (n && (!find_alloc(d, n) || !find_alloc(s, n)))
        return CUDA_ERROR_INVALID_VALUE;
    memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
static CUresult s_cuMemsetD8(CUdeviceptr d, unsigned char c, size_t n) {
    if (n && !find_alloc(d, n))
        return CUDA_ERROR_INVALID_VALUE;
    memset((void *)(uintptr_t)d, c, n);
    return CUDA_SUCCESS;
}
static CUresult s_cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream st) {
    if ((uintptr_t)d % 4 || (n && !find_alloc(d, 4 * n)))
        return CUDA_ERROR_INVALID_VALUE;
    unsigned int *p = (unsigned int *)(uintptr_t)d;
    for (size_t i = 0; i < n; i++)
        p[i] = v;
    pthread_mutex_lock(&lock);
    clock_ms += 0.01;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}
static CUresult s_cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p) {
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- events and streams --------------------------------------------------------- */
static CUresult s_cuEventCreate(CUevent *e, unsigned int flags) {
    Event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *e = (CUevent)ev;
    return CUDA_SUCCESS;
}
static CUresult s_cuEventRecord(CUevent e, CUstream st) {
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    ((Event *)e)->t = clock_ms;
    ((Event *)e)->recorded = 1;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}
static CUresult s_cuEventSynchronize(CUevent e) {
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult s_cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
    if (!a || !b)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!((Event *)a)->recorded || !((Event *)b)->recorded)
        return CUDA_ERROR_INVALID_HANDLE;
    *ms = (float)(((Event *)b)->t - ((Event *)a)->t);
    return CUDA_SUCCESS;
}
static CUresult s_cuEventDestroy(CUevent e) {
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    free(e);
    return CUDA_SUCCESS;
}
static CUresult s_cuStreamSynchronize(CUstream st) {
    return CUDA_SUCCESS;
}

static CUresult s_cuGetErrorName(CUresult r, const char **s) {
    *s = r == CUDA_SUCCESS                         ? "CUDA_SUCCESS"
         : r == CUDA_ERROR_INVALID_VALUE           ? "CUDA_ERROR_INVALID_VALUE"
         : r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
         : r == CUDA_ERROR_NOT_FOUND               ? "CUDA_ERROR_NOT_FOUND"
                                                   : "CUDA_ERROR_STUB";
    return CUDA_SUCCESS;
}
static CUresult s_cuGetErrorString(CUresult r, const char **s) {
    *s = "stub driver error";
    return CUDA_SUCCESS;
}

/* Module globals (the runtime asks for tilec_dynamic_smem): none is modelled, so the
 * launch passes what the variant's record says. */
static CUresult s_cuModuleGetGlobal(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name) {
    (void)p;
    (void)bytes;
    (void)name;
    return module_of(m) ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
}

/* ---- the loader's one entry point ---------------------------------------------- */
static const struct {
    const char *name;
    void *fn;
} table[] = {
#define E(n) {#n, (void *)s_##n}
    E(cuInit),
    E(cuDriverGetVersion),
    E(cuDeviceGetCount),
    E(cuDeviceGet),
    E(cuDeviceGetAttribute),
    E(cuDeviceGetName),
    E(cuDevicePrimaryCtxRetain),
    E(cuDevicePrimaryCtxRelease),
    E(cuCtxSetCurrent),
    E(cuCtxGetCurrent),
    E(cuCtxSynchronize),
    E(cuModuleLoadData),
    E(cuModuleLoadDataEx),
    E(cuModuleGetFunction),
    E(cuModuleUnload),
    E(cuModuleGetGlobal),
    E(cuLaunchKernel),
    E(cuFuncSetAttribute),
    E(cuFuncGetAttribute),
    E(cuMemAlloc),
    E(cuMemFree),
    E(cuMemcpyHtoD),
    E(cuMemcpyDtoH),
    E(cuMemcpyDtoD),
    E(cuMemsetD8),
    E(cuMemsetD32Async),
    E(cuEventCreate),
    E(cuEventRecord),
    E(cuEventSynchronize),
    E(cuEventElapsedTime),
    E(cuEventDestroy),
    E(cuStreamSynchronize),
    E(cuGetErrorString),
    E(cuGetErrorName),
    E(cuPointerGetAttribute),
#undef E
};

/* The runtime asks for the CUDA 12.0 ABI of each name; another version is refused, so a
 * loader that asked for a newer ABI fails the tests. */
__attribute__((visibility("default"))) CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                                                    cuuint64_t flags,
                                                                    CUdriverProcAddressQueryResult *status) {
    *pfn = NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(table[i].name, symbol)) {
            if (version != 12000 || flags != CU_GET_PROC_ADDRESS_DEFAULT) {
                if (status)
                    *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
                return CUDA_ERROR_NOT_FOUND;
            }
            *pfn = table[i].fn;
            if (status)
                *status = CU_GET_PROC_ADDRESS_SUCCESS;
            return CUDA_SUCCESS;
        }
    if (status)
        *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}
