/* Devices: opening the CUDA driver (or the interpreter), messages, memory helpers. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RT_STATUSES(X)                                                    \
    X(TILE_RT_OK, "success")                                              \
    X(TILE_RT_ERR_NO_DRIVER, "no CUDA driver or device")                  \
    X(TILE_RT_ERR_CUDA, "CUDA call failed")                               \
    X(TILE_RT_ERR_BUNDLE, "bad bundle")                                   \
    X(TILE_RT_ERR_COMPILE, "compile error")                               \
    X(TILE_RT_ERR_NOT_FOUND, "no such kernel")                            \
    X(TILE_RT_ERR_ARGS, "arguments do not match the kernel's parameters") \
    X(TILE_RT_ERR_NO_VARIANT, "no variant admits these arguments")        \
    X(TILE_RT_ERR_IO, "cannot read or write a file")                      \
    X(TILE_RT_ERR_INVALID, "invalid argument to the API")                 \
    X(TILE_RT_ERR_UNSUPPORTED, "not supported by this build or device")   \
    X(TILE_RT_ERR_RUN, "run-time error in the kernel")

const char *tile_rt_status_string(tile_rt_status s) {
    switch (s) {
#define X(id, text) \
    case id: return text;
        RT_STATUSES(X)
#undef X
    }
    return "unknown status";
}

/* ---- messages --------------------------------------------------------------------- */
static _Thread_local char open_error[1024];
static _Thread_local char last_error[4096];
static _Thread_local const tile_rt *last_error_rt;

const char *tile_rt_open_error(void) {
    return open_error;
}

const char *tile_rt_last_error(const tile_rt *rt) {
    return rt && rt == last_error_rt ? last_error : "";
}

tile_rt_status rt_fail(const tile_rt *rt, tile_rt_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    last_error_rt = rt;
    return s;
}

void rt_log(const tile_rt *rt, const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (rt->log)
        rt->log(rt->log_ud, line);
    else
        fprintf(stderr, "%s\n", line);
}

double rt_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- options ---------------------------------------------------------------------- */
static int env_flag(const char *name, int dflt) {
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    return !(v[0] == '0' || !strcmp(v, "off") || !strcmp(v, "false"));
}

static void resolve_cache_dir(tile_rt *rt, const char *given) {
    const char *env = getenv("TILE_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (given)
        snprintf(rt->cache_dir, sizeof rt->cache_dir, "%s", given);
    else if (env && *env)
        snprintf(rt->cache_dir, sizeof rt->cache_dir, "%s", env);
    else if (xdg && *xdg)
        snprintf(rt->cache_dir, sizeof rt->cache_dir, "%s/tilec", xdg);
    else if (home && *home)
        snprintf(rt->cache_dir, sizeof rt->cache_dir, "%s/.cache/tilec", home);
    else
        rt->cache_dir[0] = 0;
}

/* ---- CUDA ------------------------------------------------------------------------- */
#ifdef TILE_RT_HAVE_CUDA
tile_rt_status rt_cuda_fail(const tile_rt *rt, CUresult r, const char *call, const char *fmt, ...) {
    char what[1024], cuda[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    rt_cuda_error_text(&rt->cu, call, r, cuda, sizeof cuda);
    return rt_fail(rt, TILE_RT_ERR_CUDA, "%s: %s", what, cuda);
}

tile_rt_status rt_cuda_bind(tile_rt *rt) {
    CUcontext cur = NULL;
    if (rt->cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == rt->ctx)
        return TILE_RT_OK;
    CUresult r = rt->cu.cuCtxSetCurrent(rt->ctx);
    if (r != CUDA_SUCCESS)
        return rt_cuda_fail(rt, r, "cuCtxSetCurrent", "binding the device's context");
    return TILE_RT_OK;
}

/* The arch tilec compiles for on compute capability major.minor; "" when unsupported.  The
 * compiler's target table decides (tile.h), so the runtime holds no list of its own. */
static void arch_for(int major, int minor, char *arch, size_t n) {
    const char *name = tile_arch_for_device(major, minor);
    snprintf(arch, n, "%s", name ? name : "");
}

static tile_rt_status open_cuda(tile_rt *rt, int ordinal) {
    if (!rt_cuda_load(&rt->cu, open_error, sizeof open_error))
        return TILE_RT_ERR_NO_DRIVER;
    CUresult r = rt->cu.cuInit(0);
    int count = 0;
    if (r == CUDA_SUCCESS)
        r = rt->cu.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count == 0) {
        char why[400];
        if (r != CUDA_SUCCESS)
            rt_cuda_error_text(&rt->cu, "cuInit", r, why, sizeof why);
        else
            snprintf(why, sizeof why, "the driver sees no device");
        snprintf(open_error, sizeof open_error, "no usable CUDA device: %s", why);
        rt_cuda_unload(&rt->cu);
        return TILE_RT_ERR_NO_DRIVER;
    }
    if (ordinal < 0 || ordinal >= count) {
        snprintf(open_error, sizeof open_error, "CUDA device %d does not exist (%d device%s)", ordinal, count,
                 count == 1 ? "" : "s");
        rt_cuda_unload(&rt->cu);
        return TILE_RT_ERR_INVALID;
    }
    char why[400];
    const char *call = "cuDeviceGet";
    r = rt->cu.cuDeviceGet(&rt->dev, ordinal);
    if (r == CUDA_SUCCESS) {
        call = "cuDeviceGetAttribute";
        r = rt->cu.cuDeviceGetAttribute(&rt->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, rt->dev);
    }
    if (r == CUDA_SUCCESS)
        r = rt->cu.cuDeviceGetAttribute(&rt->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, rt->dev);
    char dname[128] = "CUDA device";
    if (r == CUDA_SUCCESS) {
        call = "cuDeviceGetName";
        r = rt->cu.cuDeviceGetName(dname, (int)sizeof dname, rt->dev);
    }
    if (r == CUDA_SUCCESS) {
        call = "cuDevicePrimaryCtxRetain";
        r = rt->cu.cuDevicePrimaryCtxRetain(&rt->ctx, rt->dev);
    }
    if (r == CUDA_SUCCESS) {
        call = "cuCtxSetCurrent";
        r = rt->cu.cuCtxSetCurrent(rt->ctx);
    }
    if (r != CUDA_SUCCESS) {
        rt_cuda_error_text(&rt->cu, call, r, why, sizeof why);
        snprintf(open_error, sizeof open_error, "opening CUDA device %d: %s", ordinal, why);
        if (rt->ctx)
            rt->cu.cuDevicePrimaryCtxRelease(rt->dev);
        rt_cuda_unload(&rt->cu);
        return TILE_RT_ERR_CUDA;
    }
    arch_for(rt->cc_major, rt->cc_minor, rt->arch, sizeof rt->arch);
    if (!rt->arch[0]) {
        snprintf(open_error, sizeof open_error,
                 "%s has compute capability %d.%d, older than any of tilec's architectures (%s)", dname, rt->cc_major,
                 rt->cc_minor, tile_arch_names());
        rt->cu.cuDevicePrimaryCtxRelease(rt->dev);
        rt_cuda_unload(&rt->cu);
        return TILE_RT_ERR_UNSUPPORTED;
    }
    snprintf(rt->name, sizeof rt->name, "%s (%s)", dname, rt->arch);
    return TILE_RT_OK;
}
#endif

tile_rt_status tile_rt_open(tile_rt_device_kind kind, const tile_rt_options *opt, tile_rt **out) {
    open_error[0] = 0;
    if (!out) {
        snprintf(open_error, sizeof open_error, "tile_rt_open: out is NULL");
        return TILE_RT_ERR_INVALID;
    }
    *out = NULL;
    if (kind != TILE_RT_CUDA && kind != TILE_RT_INTERP) {
        snprintf(open_error, sizeof open_error, "tile_rt_open: unknown device kind %d", (int)kind);
        return TILE_RT_ERR_INVALID;
    }
    tile_rt *rt = calloc(1, sizeof *rt);
    if (!rt) {
        snprintf(open_error, sizeof open_error, "out of memory");
        return TILE_RT_ERR_INVALID;
    }
    rt->kind = kind;
    resolve_cache_dir(rt, opt ? opt->cache_dir : NULL);
    /* the cache holds code this process runs: refused unless only its owner can write it */
    if (!rt_cache_open(rt, open_error, sizeof open_error)) {
        free(rt);
        return TILE_RT_ERR_INVALID;
    }
    int tune = opt ? opt->tune : -1, tune_log = opt ? opt->tune_log : -1;
    rt->tune = tune >= 0 ? !!tune : env_flag("TILE_TUNE", 1);
    rt->tune_log = tune_log >= 0 ? !!tune_log : env_flag("TILE_TUNE_LOG", 0);
    /* 0 is the default of a zeroed options struct: the environment decides, then off */
    rt->debug = opt && opt->debug > 0 ? true : env_flag("TILE_DEBUG", 0);
    bool fallback = opt && opt->interp_fallback > 0 ? true : env_flag("TILE_INTERP_FALLBACK", 0);
    if (opt) {
        rt->log = opt->log;
        rt->log_ud = opt->log_ud;
    }
    if (kind == TILE_RT_INTERP) {
        snprintf(rt->name, sizeof rt->name, "interpreter");
        *out = rt;
        return TILE_RT_OK;
    }
#ifdef TILE_RT_HAVE_CUDA
    tile_rt_status s = open_cuda(rt, opt ? opt->device_ordinal : 0);
#else
    snprintf(open_error, sizeof open_error,
             "this libtilert was built without cuda.h: the cuda device is not available");
    tile_rt_status s = TILE_RT_ERR_UNSUPPORTED;
#endif
    if (s != TILE_RT_OK && fallback && (s == TILE_RT_ERR_NO_DRIVER || s == TILE_RT_ERR_UNSUPPORTED)) {
        /* interp_fallback: the same program runs, slowly, where there is no GPU */
        rt_log(rt, "tilert: no GPU (%s): running on the interpreter (interp_fallback)", open_error);
        rt->kind = TILE_RT_INTERP;
        snprintf(rt->name, sizeof rt->name, "interpreter");
        rt->arch[0] = 0;
        *out = rt;
        return TILE_RT_OK;
    }
    if (s != TILE_RT_OK) {
        free(rt);
        return s;
    }
    *out = rt;
    return TILE_RT_OK;
}

tile_rt_device_kind tile_rt_kind(const tile_rt *rt) {
    return rt ? rt->kind : TILE_RT_INTERP;
}

void tile_rt_close(tile_rt *rt) {
    if (!rt)
        return;
#ifdef TILE_RT_HAVE_CUDA
    if (rt->kind == TILE_RT_CUDA) {
        rt->cu.cuDevicePrimaryCtxRelease(rt->dev);
        rt_cuda_unload(&rt->cu);
    }
#endif
    if (last_error_rt == rt)
        last_error_rt = NULL;
    free(rt);
}

const char *tile_rt_device_name(const tile_rt *rt) {
    return rt ? rt->name : "";
}

void tile_rt_get_stats(const tile_rt *rt, tile_rt_stats *out) {
    if (!rt || !out)
        return;
    out->jit_compiles = atomic_load(&((tile_rt *)rt)->stats.jit_compiles);
    out->cache_hits = atomic_load(&((tile_rt *)rt)->stats.cache_hits);
    out->cache_corrupt = atomic_load(&((tile_rt *)rt)->stats.cache_corrupt);
    out->tunings = atomic_load(&((tile_rt *)rt)->stats.tunings);
    out->tune_disk_hits = atomic_load(&((tile_rt *)rt)->stats.tune_disk_hits);
    out->jit_wall_ns = atomic_load(&((tile_rt *)rt)->stats.jit_wall_ns);
    out->tune_trial_ns = atomic_load(&((tile_rt *)rt)->stats.tune_trial_ns);
}

/* ---- memory ----------------------------------------------------------------------- */
tile_rt_status tile_rt_alloc(tile_rt *rt, size_t bytes, void **out) {
    if (!rt || !out)
        return TILE_RT_ERR_INVALID;
    *out = NULL;
    if (rt->kind == TILE_RT_INTERP) {
        *out = malloc(bytes ? bytes : 1);
        return *out ? TILE_RT_OK
                    : rt_fail(rt, TILE_RT_ERR_INVALID,
                              "out of host memory "
                              "(%zu bytes)",
                              bytes);
    }
#ifdef TILE_RT_HAVE_CUDA
    tile_rt_status s = rt_cuda_bind(rt);
    if (s)
        return s;
    CUdeviceptr p = 0;
    CUresult r = rt->cu.cuMemAlloc(&p, bytes ? bytes : 1);
    if (r != CUDA_SUCCESS)
        return rt_cuda_fail(rt, r, "cuMemAlloc", "allocating %zu bytes", bytes);
    *out = (void *)(uintptr_t)p;
    return TILE_RT_OK;
#else
    return TILE_RT_ERR_UNSUPPORTED;
#endif
}

tile_rt_status tile_rt_free(tile_rt *rt, void *p) {
    if (!rt)
        return TILE_RT_ERR_INVALID;
    if (!p)
        return TILE_RT_OK;
    if (rt->kind == TILE_RT_INTERP) {
        free(p);
        return TILE_RT_OK;
    }
#ifdef TILE_RT_HAVE_CUDA
    tile_rt_status s = rt_cuda_bind(rt);
    if (s)
        return s;
    CUresult r = rt->cu.cuMemFree((CUdeviceptr)(uintptr_t)p);
    return r == CUDA_SUCCESS ? TILE_RT_OK : rt_cuda_fail(rt, r, "cuMemFree", "freeing %p", p);
#else
    return TILE_RT_ERR_UNSUPPORTED;
#endif
}

/* Both copy directions: the interpreter's device memory is host memory. */
static tile_rt_status rt_copy(tile_rt *rt, void *dst, const void *src, size_t bytes, bool to_device) {
    if (!rt || ((!dst || !src) && bytes))
        return rt ? rt_fail(rt, TILE_RT_ERR_INVALID, "copy to %s: NULL pointer", to_device ? "device" : "host")
                  : TILE_RT_ERR_INVALID;
    if (rt->kind == TILE_RT_INTERP) {
        memmove(dst, src, bytes);
        return TILE_RT_OK;
    }
#ifdef TILE_RT_HAVE_CUDA
    tile_rt_status s = rt_cuda_bind(rt);
    if (s)
        return s;
    CUresult r = to_device ? rt->cu.cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, bytes)
                           : rt->cu.cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, bytes);
    return r == CUDA_SUCCESS
               ? TILE_RT_OK
               : rt_cuda_fail(rt, r, to_device ? "cuMemcpyHtoD" : "cuMemcpyDtoH", "copying %zu bytes", bytes);
#else
    return TILE_RT_ERR_UNSUPPORTED;
#endif
}

tile_rt_status tile_rt_copy_to_device(tile_rt *rt, void *dst, const void *src, size_t bytes) {
    return rt_copy(rt, dst, src, bytes, true);
}

tile_rt_status tile_rt_copy_to_host(tile_rt *rt, void *dst, const void *src, size_t bytes) {
    return rt_copy(rt, dst, src, bytes, false);
}

tile_rt_status tile_rt_synchronize(tile_rt *rt) {
    if (!rt)
        return TILE_RT_ERR_INVALID;
    if (rt->kind == TILE_RT_INTERP)
        return TILE_RT_OK;
#ifdef TILE_RT_HAVE_CUDA
    tile_rt_status s = rt_cuda_bind(rt);
    if (s)
        return s;
    CUresult r = rt->cu.cuCtxSynchronize();
    return r == CUDA_SUCCESS ? TILE_RT_OK : rt_cuda_fail(rt, r, "cuCtxSynchronize", "waiting for the device");
#else
    return TILE_RT_ERR_UNSUPPORTED;
#endif
}
