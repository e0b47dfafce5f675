/* libtilert: load tilec kernels (bundles ahead of time, or .tile sources just in time),
 * launch them with checked arguments, autotune their variants, cache the results.
 *
 * Opaque handles, status codes, no global state beyond what tile_rt_open returns, no
 * printing (messages go to tile_rt_last_error and the optional log callback) but a
 * kernel's own print(), which goes to stdout as a GPU's printf does.
 * Launches are thread-safe. */
#ifndef TILE_RUNTIME_H
#define TILE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tile_rt_status {
    TILE_RT_OK = 0,
    TILE_RT_ERR_NO_DRIVER,  /* libcuda could not be loaded, or has no usable device */
    TILE_RT_ERR_CUDA,       /* a CUDA call failed: the message names it and the error string */
    TILE_RT_ERR_BUNDLE,     /* a bundle is truncated, corrupted, or of another version */
    TILE_RT_ERR_COMPILE,    /* JIT compilation failed (the message holds the diagnostics) */
    TILE_RT_ERR_NOT_FOUND,  /* no kernel of that name */
    TILE_RT_ERR_ARGS,       /* wrong argument count, kind or range: names the parameter */
    TILE_RT_ERR_NO_VARIANT, /* no variant admits these arguments: names the predicate */
    TILE_RT_ERR_IO,
    TILE_RT_ERR_INVALID,     /* a NULL handle or a bad option */
    TILE_RT_ERR_UNSUPPORTED, /* this build or device cannot do it */
    TILE_RT_ERR_RUN,         /* the interpreter device stopped: out of bounds, assert */
} tile_rt_status;
const char *tile_rt_status_string(tile_rt_status s);

typedef enum tile_rt_device_kind { TILE_RT_CUDA, TILE_RT_INTERP } tile_rt_device_kind;

typedef struct tile_rt tile_rt;               /* an open device: CUDA context or interpreter */
typedef struct tile_rt_module tile_rt_module; /* a loaded bundle or source */
typedef struct tile_rt_kernel tile_rt_kernel;

/* ---- devices ------------------------------------------------------------------- */
typedef struct tile_rt_options {
    int device_ordinal;    /* CUDA device, default 0 */
    const char *cache_dir; /* NULL: $TILE_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec */
    int tune;              /* -1: from $TILE_TUNE (default on); 0 off; 1 on */
    int tune_log;          /* -1: from $TILE_TUNE_LOG; 1: one line per trial to the log */
    void (*log)(void *ud, const char *line); /* trial lines, progress; NULL: stderr for those only */
    void *log_ud;
    /* Added: 1: compile source kernels with assert() checked (as tilec --debug), on the
     * interpreter and the GPU; 0 (the default) or -1: from $TILE_DEBUG (default off). */
    int debug;
    /* Added: 1: tile_rt_open(TILE_RT_CUDA, ...) opens the interpreter where no GPU opens
     * (no driver, no device), saying why through the log; 0 (the default) or -1: from
     * $TILE_INTERP_FALLBACK (default off).  tile_rt_kind says which device opened. */
    int interp_fallback;
} tile_rt_options;

/* Opens a device.  On a machine without a driver, returns TILE_RT_ERR_NO_DRIVER and
 * *out stays NULL; the reason is in tile_rt_open_error(). */
tile_rt_status tile_rt_open(tile_rt_device_kind kind, const tile_rt_options *opt, tile_rt **out);
const char *tile_rt_open_error(void); /* thread-local message of the last failed open */
void tile_rt_close(tile_rt *rt);
const char *tile_rt_last_error(const tile_rt *rt); /* per-thread message of the last failure */
/* "NVIDIA H200 (sm_90a)" or "interpreter" */
const char *tile_rt_device_name(const tile_rt *rt);
/* Added: the kind of device rt is (TILE_RT_INTERP after an interp_fallback). */
tile_rt_device_kind tile_rt_kind(const tile_rt *rt);

/* ---- modules ------------------------------------------------------------------- */
tile_rt_status tile_rt_load_bundle_file(tile_rt *rt, const char *path, tile_rt_module **out);
tile_rt_status tile_rt_load_bundle(tile_rt *rt, const void *data, size_t len, tile_rt_module **out);
/* Just in time: parses and checks now; each variant compiles on first need and is
 * cached on disk keyed by source hash, variant, arch and compiler version. */
tile_rt_status tile_rt_load_source_file(tile_rt *rt, const char *path, tile_rt_module **out);
tile_rt_status tile_rt_load_source(tile_rt *rt, const char *name, const char *src, size_t len, tile_rt_module **out);
void tile_rt_module_free(tile_rt_module *m);

/* The kernel of that name: every call for one name returns the same handle, so the const
 * values set on it (tile_rt_set_const) hold for every user of the module; load the module
 * again for a second set of values at the same time. */
tile_rt_status tile_rt_get_kernel(tile_rt_module *m, const char *name, tile_rt_kernel **out);
/* The launch arguments (runtime parameters, `const` ones excluded), in order. */
int tile_rt_kernel_param_count(const tile_rt_kernel *k);
const char *tile_rt_kernel_param_name(const tile_rt_kernel *k, int i);
/* Added: the type of launch argument i: its scalar (a tile.h tile_scalar value; for a
 * pointer, the pointee) and whether it is a pointer.  TILE_RT_ERR_INVALID for a bad i. */
tile_rt_status tile_rt_kernel_param_type(const tile_rt_kernel *k, int i, int *scalar, bool *is_pointer);

/* ---- launching ----------------------------------------------------------------- */
typedef enum tile_rt_arg_kind {
    TILE_RT_ARG_I64, /* any integer or bool parameter (range-checked) */
    TILE_RT_ARG_F64, /* any float parameter */
    TILE_RT_ARG_PTR, /* a pointer parameter: a device address (CUDA) or host buffer (interp) */
} tile_rt_arg_kind;

typedef struct tile_rt_arg {
    tile_rt_arg_kind kind;
    union {
        int64_t i64;
        double f64;
        struct {
            void *ptr;
            size_t bytes;
        } buf; /* bytes: size of the allocation if known, else 0 */
    };
} tile_rt_arg;

/* One argument per runtime parameter, in declaration order; `const` parameters are not
 * passed here but fixed by tile_rt_set_const (or by the bundle's variants).
 * stream: a CUstream (NULL: the default stream); grid: NULL to use the grid clause.
 * Chooses (autotuning on first use of a new key) the variant, specializes on
 * arguments divisible by 16 and integers equal to 1, and launches asynchronously. */
tile_rt_status tile_rt_launch(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, void *stream, const int64_t *grid);
/* Added: a launch whose grid comes from the constants of the variant that runs (as a
 * Triton grid callable sees its config), asked of `fn` for each variant the launch
 * times or runs: names[i] = values[i] for its constants (const parameters, tuned names,
 * warps, stages); fn fills grid[0..2] (axes it leaves stay 1) and returns 0, or nonzero
 * to fail the launch (TILE_RT_ERR_ARGS).  Otherwise as tile_rt_launch with grid NULL. */
typedef int (*tile_rt_grid_fn)(void *ud, int n, const char *const *names, const double *values, int64_t grid[3]);
tile_rt_status tile_rt_launch_grid_fn(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, void *stream,
                                      tile_rt_grid_fn fn, void *ud);
/* Sets a const parameter's value for later launches of k.  Naming a tuned constant
 * (or warps, stages) instead pins it: only variants with that value are admissible,
 * like -D NAME=V ahead of time; a name no variant has makes the next launch fail. */
tile_rt_status tile_rt_set_const(tile_rt_kernel *k, const char *name, int64_t ival, double fval);
/* The variant chosen for the last launch: "BLOCK=1024, warps=4, stages=2" */
const char *tile_rt_last_variant(const tile_rt_kernel *k);

/* Added: what the last launch of k ran: the grid, threads per program, and the variant's
 * static flops and global bytes per program (0: unknown), for roofline figures. */
typedef struct tile_rt_launch_info {
    int64_t grid[3];
    int threads;
    uint64_t flops_per_program, bytes_per_program;
} tile_rt_launch_info;
tile_rt_status tile_rt_last_launch_info(const tile_rt_kernel *k, tile_rt_launch_info *out);

/* Added: counters of an open device, for tests and tools (cache behaviour, tuning). */
typedef struct tile_rt_stats {
    uint64_t jit_compiles;   /* variants compiled by the compiler library */
    uint64_t cache_hits;     /* compiled variants read back from the disk cache */
    uint64_t cache_corrupt;  /* disk cache entries rejected (then recompiled) */
    uint64_t tunings;        /* keys autotuned by timing variants */
    uint64_t tune_disk_hits; /* keys whose choice came from the tuning cache on disk */
    /* Added: wall time (ns) of parallel compile batches, and of tuning trials alone */
    uint64_t jit_wall_ns, tune_trial_ns;
} tile_rt_stats;
void tile_rt_get_stats(const tile_rt *rt, tile_rt_stats *out);

/* Added: compiles source kernels before their first launch, every module's kernels in one
 * parallel batch (threads: $TILE_JIT_THREADS, else the online CPUs).  Per kernel whose const
 * values are all set: variant 0 (what a launch without tuning takes first), or every variant
 * with TILE_RT_PRECOMPILE_ALL (what a tuning launch compiles), each under the facts "every
 * pointer 16-byte aligned, nothing known of the integers"; a launch whose integer arguments
 * add facts (divisible by 16, equal to 1) compiles its own specialization then.  On CUDA
 * the cubins are also loaded; elsewhere they only fill the disk cache.  Modules of bundles
 * need nothing.  Returns the first failure (its message in tile_rt_last_error) after
 * trying everything; *nbuilt / *nfailed (optional) count the compiles. */
enum { TILE_RT_PRECOMPILE_ALL = 1u };
tile_rt_status tile_rt_precompile(tile_rt_module *const *mods, int nmods, unsigned flags, int *nbuilt, int *nfailed);

/* Device memory helpers for tools and tests (CUDA: cuMemAlloc; interp: malloc). */
tile_rt_status tile_rt_alloc(tile_rt *rt, size_t bytes, void **out);
tile_rt_status tile_rt_free(tile_rt *rt, void *p);
tile_rt_status tile_rt_copy_to_device(tile_rt *rt, void *dst, const void *src, size_t bytes);
tile_rt_status tile_rt_copy_to_host(tile_rt *rt, void *dst, const void *src, size_t bytes);
tile_rt_status tile_rt_synchronize(tile_rt *rt);

/* Times `reps` launches with device events after `warmup` launches; median in ms. */
tile_rt_status tile_rt_bench(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, const int64_t *grid, int warmup,
                             int reps, double *median_ms);

#ifdef __cplusplus
}
#endif
#endif
