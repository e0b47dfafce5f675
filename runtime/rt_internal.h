/* Internals of libtilert shared by the files of runtime/.  Nothing here is public:
 * include/tile/runtime.h is the interface.  Prefix rt_ (internal), tile_rt_ (public). */
#ifndef TILE_RT_INTERNAL_H
#define TILE_RT_INTERNAL_H

#include "bundle_format.h"
#include "tile/runtime.h"
#include "tile/tile.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef TILE_RT_HAVE_CUDA
#include "cuda_api.h"
#endif

/* Limits of the bundle format (format/bundle_format.h, docs/bundle.md); also the runtime's
 * own array bounds. */
#define RT_MAX_KERNELS     BUNDLE_MAX_KERNELS
#define RT_MAX_PARAMS      BUNDLE_MAX_PARAMS
#define RT_MAX_PINS        16
#define RT_MAX_GRID        BUNDLE_MAX_GRID
#define RT_MAX_WHERE       BUNDLE_MAX_WHERE
#define RT_MAX_CONST_NAMES BUNDLE_MAX_CONST_NAMES
#define RT_MAX_VARIANTS    BUNDLE_MAX_VARIANTS
#define RT_MAX_CODE        BUNDLE_MAX_CODE
#define RT_MAX_EXPR_BYTES  BUNDLE_MAX_EXPR_BYTES
#define RT_MAX_STR         BUNDLE_MAX_STR
#define RT_EXPR_STACK      BUNDLE_EXPR_STACK

/* FNV-1a 64 (the bundle checksum's hash), for every hash of the runtime's */
#define RT_FNV_BASIS BUNDLE_FNV_BASIS
uint64_t rt_fnv1a(uint64_t h, const void *data, size_t n);

/* ---- bundle records (docs/bundle.md) --------------------------------------------- */
typedef struct RtExpr {
    const uint8_t *code;
    uint32_t len;
} RtExpr;

typedef struct RtParam {
    const char *name;
    bool is_pointer, is_const;
    tile_scalar scalar;
} RtParam;

typedef struct RtWhere {
    const char *text, *loc;
    RtExpr pred;
} RtWhere;

/* The bundle's code kinds (format/bundle_format.h) */
enum {
    RT_CODE_CUBIN = BUNDLE_CODE_CUBIN,
    RT_CODE_PTX = BUNDLE_CODE_PTX,
    RT_CODE_CUBIN_UNCAPPED = BUNDLE_CODE_CUBIN_UNCAPPED
};
typedef struct RtCode {
    const char *arch, *entry;
    uint8_t kind;
    const uint8_t *bytes;
    size_t len;
} RtCode;

/* Specialization facts about a launch's arguments, by param index: divisible by 16
 * (pointers: 16-byte aligned), by 8 but not by 16, equal to 1. */
typedef struct RtFacts {
    uint64_t div16, div8, eq1;
} RtFacts;
static inline bool rt_facts_eq(RtFacts a, RtFacts b) {
    return a.div16 == b.div16 && a.div8 == b.div8 && a.eq1 == b.eq1;
}

typedef struct RtVariant {
    double *cvals; /* per const name */
    uint8_t *cfloat;
    uint32_t warps, stages, smem_bytes;
    uint64_t div16, eq1;   /* specialization facts this code assumes, by param index */
    uint64_t div8;         /* divisible by 8 (not by 16), bundle version 3 */
    uint64_t flops, bytes; /* per program; 0 unknown */
    RtCode *code;
    uint32_t ncode;
    char *text; /* "BLOCK=1024, warps=4, stages=2" (facts appended) */
} RtVariant;

typedef struct RtKernelMeta {
    const char *name;
    uint64_t source_hash;
    RtParam *params;
    uint32_t nparams;
    RtExpr grid[RT_MAX_GRID];
    uint32_t ngrid;
    RtWhere *where;
    uint32_t nwhere;
    uint16_t *key;
    uint32_t nkey;
    const char **cnames;
    uint32_t ncnames;
    RtVariant *variants;
    uint32_t nvariants;
} RtKernelMeta;

/* A parsed bundle.  Every string and array lives in `mem` blocks freed together;
 * code bytes point into `data`, the bundle's own copy. */
typedef struct RtBundle {
    const char *producer;
    RtKernelMeta *kernels;
    uint32_t nkernels;
    uint8_t *data;
    size_t len;
    void *mem; /* linked list of allocations */
} RtBundle;

/* Validates and parses a bundle (copied).  On failure: TILE_RT_ERR_BUNDLE and `err`
 * holds "bundle 'NAME': WHAT". */
tile_rt_status rt_bundle_parse(const char *name, const void *data, size_t len, RtBundle **out, char *err, size_t errn);
void rt_bundle_free(RtBundle *b);

/* ---- clause expressions ----------------------------------------------------------- */
typedef struct RtValue {
    bool is_float;
    int64_t i;
    double f;
} RtValue;

/* Static check of one expression against its kernel (opcodes, operands, indices, depth);
 * false with a reason. */
bool rt_expr_check(const RtExpr *e, const RtKernelMeta *k, char *err, size_t n);
/* Evaluates with runtime arguments by param index (`args`, const params unused) and the
 * constants of variant v.  false with a reason (division by zero, ...). */
bool rt_expr_eval(const RtExpr *e, const RtKernelMeta *k, const RtVariant *v, const RtValue *args, RtValue *out,
                  char *err, size_t n);

/* ---- devices ---------------------------------------------------------------------- */
typedef struct RtStats {
    _Atomic uint64_t jit_compiles;   /* variants compiled by the compiler library */
    _Atomic uint64_t cache_hits;     /* cubins read back from the disk cache */
    _Atomic uint64_t cache_corrupt;  /* cache entries rejected on read */
    _Atomic uint64_t tunings;        /* keys tuned */
    _Atomic uint64_t tune_disk_hits; /* keys whose choice came from the tuning cache */
    _Atomic uint64_t jit_wall_ns;    /* wall time of compile batches (rt_jit_compile_many) */
    _Atomic uint64_t tune_trial_ns;  /* wall time of tuning trials (compiles excluded) */
} RtStats;

struct tile_rt {
    tile_rt_device_kind kind;
    char name[192]; /* "NVIDIA H200 (sm_90a)" */
    char arch[16];  /* sm_90a ...; interp: "" */
    int cc_major, cc_minor;
    char cache_dir[4096];  /* "" : no disk cache; else its real path, trusted (rt_cache_open) */
    int cache_readonly;    /* TILE_CACHE_READONLY: read a shared cache, write nothing */
    unsigned cache_owner;  /* the uid whose entries are trusted */
    uint8_t cache_key[16]; /* the cache's MAC key (CACHE/key) */
    int tune, tune_log;
    bool debug; /* source kernels compiled with assert() checked */
    void (*log)(void *ud, const char *line);
    void *log_ud;
    RtStats stats;
#ifdef TILE_RT_HAVE_CUDA
    RtCuda cu;
    CUdevice dev;
    CUcontext ctx;
#endif
};

/* Per-thread last error (tile_rt_last_error) for rt; returns s for chaining. */
tile_rt_status rt_fail(const tile_rt *rt, tile_rt_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rt_log(const tile_rt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double rt_now(void);                /* monotonic seconds */
double rt_median(double *v, int n); /* sorts v */
#ifdef TILE_RT_HAVE_CUDA
/* A failed CUDA call as TILE_RT_ERR_CUDA: "WHAT: cuCall: CUDA_ERROR_X (text)". */
tile_rt_status rt_cuda_fail(const tile_rt *rt, CUresult r, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Makes rt's context current on this thread (cheap when it already is). */
tile_rt_status rt_cuda_bind(tile_rt *rt);
#endif

/* ---- modules and kernels --------------------------------------------------------- */
/* One compiled, loaded instance of a variant (for the JIT: of a variant under a set of
 * specialization facts). */
typedef struct RtInstance {
    uint32_t variant;
    RtFacts f;      /* the facts its code assumes */
    int alt;        /* which of the compile's cubins (JIT): 0, or 1 uncapped */
    uint64_t epoch; /* the kernel's const epoch it was made for */
    bool failed;    /* compile or load failed: not tried again */
#ifdef TILE_RT_HAVE_CUDA
    CUmodule mod;
    CUfunction fn;
#endif
    char text[320];     /* variant text with facts, for tile_rt_last_variant */
    const RtVariant *v; /* its record (inside the kernel's meta of that epoch) */
    uint32_t smem;      /* dynamic shared memory its launches pass */
    double compile_s;   /* its compile (or cache read) and load, for the tuning log */
    char ptxas[72];     /* the joint search's ptxas options of its cubin ("": none) */
    struct RtInstance *next;
} RtInstance;

/* What one key chose; immutable once published (readers take it without a lock). */
typedef struct RtChoice {
    uint64_t keyhash, epoch;
    RtFacts f;
    int64_t keyvals[RT_MAX_PARAMS];
    uint32_t nkey;
    RtInstance *inst;
    struct RtChoice *next;
} RtChoice;

struct tile_rt_kernel {
    tile_rt_module *m;
    int index; /* in the module's metadata and program */
    const char *name;
    RtParam *params; /* every parameter, const ones included */
    uint32_t nparams;
    /* bundles: the module's record; sources: built from the compiler library for the
     * current const values (meta_epoch), NULL until the first launch needs it */
    RtKernelMeta *meta;
    RtBundle *meta_bundle; /* sources: owns meta */
    RtBundle *retired;     /* sources: metas of older epochs (instances may point in) */
    uint64_t meta_epoch;
    tile_rt_launch_info last_info;
    char interp_chosen[256];          /* interpreter: the variant tile_run chose last */
    int nrt;                          /* runtime (non-const) params: what a launch passes */
    uint16_t rt_param[RT_MAX_PARAMS]; /* launch argument i -> param index */
    /* const params: values set with tile_rt_set_const */
    bool const_set[RT_MAX_PARAMS];
    int64_t const_i[RT_MAX_PARAMS];
    double const_f[RT_MAX_PARAMS];
    /* tuned constants (and warps, stages) pinned with tile_rt_set_const: only variants
     * with these values are admissible (tilec run -D BLOCK=1024 on the GPU) */
    char *pin_name[RT_MAX_PINS];
    int64_t pin_i[RT_MAX_PINS];
    double pin_f[RT_MAX_PINS];
    int npins;
    _Atomic uint64_t epoch; /* bumped by set_const: choices of older epochs are stale */
    pthread_mutex_t lock;   /* instances, choices */
    RtInstance *instances;
    RtChoice *choices;
    _Atomic(RtChoice *) last;
    _Atomic(const char *) last_variant;
};

/* One compiler instance of a source module: its own context and program, so compiles
 * of the same module run in parallel (the compiler library keeps no global state besides
 * LLVM's one-time initialization; ptxas is a subprocess). */
typedef struct RtCompiler {
    tile_ctx *tctx;
    tile_program *prog;
    struct RtCompiler *next;
} RtCompiler;

struct tile_rt_module {
    tile_rt *rt;
    char *name;
    RtBundle *bundle; /* the kernel records (metadata-only for sources) */
    /* sources: the program the JIT and the interpreter compile from (tile_ctx is not
     * thread-safe: jit_lock serializes its use) */
    tile_ctx *tctx;
    tile_program *prog;
    char *source;
    size_t source_len;
    uint64_t source_hash;
    pthread_mutex_t jit_lock;
    pthread_mutex_t pool_lock; /* guards pool */
    RtCompiler *pool;          /* idle compiler instances for JIT compiles */
    tile_rt_kernel *kernels;
    int nkernels;
};

/* A bundle from memory, named in messages. */
tile_rt_status tile_rt_load_bundle_named(tile_rt *rt, const char *name, const void *data, size_t len,
                                         tile_rt_module **out);

/* Sources: makes k->meta current for the const values set (compiler library). */
/* Puts k's const-parameter values and pinned constants (only the pins: pins_only) into
 * ctx as defines, so the compiler's variants are those the launch may use (the metadata
 * and every JIT compile of k must see the same list, or variant indices would disagree). */
tile_rt_status rt_kernel_defines(const tile_rt_kernel *k, tile_ctx *ctx, bool pins_only);
tile_rt_status rt_source_meta(tile_rt_kernel *k);

/* The interpreter device: one launch through tile_run. */
/* The grid function of the launch this thread is making (tile_rt_launch_grid_fn), or NULL. */
typedef struct RtGridFn {
    tile_rt_grid_fn fn;
    void *ud;
} RtGridFn;
extern _Thread_local RtGridFn rt_grid_fn;
tile_rt_status rt_interp_launch(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, const int64_t *grid);

/* ---- the JIT and its disk cache -------------------------------------------------- */
/* Compiles variant vi of a source kernel for rt's arch with the given facts, through the
 * disk cache: its cubins (tile_emit_variant_cubins: [0] registers capped for occupancy,
 * [1] where that cap applied, uncapped), each malloc'd, *n of them (1 or 2). */
enum { RT_MAX_CUBINS = 2 };
tile_rt_status rt_jit_compile(tile_rt_module *m, int k, uint32_t vi, RtFacts f, char *cubin[RT_MAX_CUBINS],
                              size_t len[RT_MAX_CUBINS], int *n);
/* The same with more ptxas options (tile_ctx_set_ptxas_options; NULL: none), cached apart. */
tile_rt_status rt_jit_compile_opts(tile_rt_module *m, int k, uint32_t vi, RtFacts f, const char *ptxas_options,
                                   char *cubin[RT_MAX_CUBINS], size_t len[RT_MAX_CUBINS], int *n);
/* One compile of a batch: inputs (m, k, vi, facts), then the result: the cubins or the
 * status and its message. */
typedef struct RtJitJob {
    tile_rt_module *m;
    int k;
    uint32_t vi;
    RtFacts f;
    char *cubin[RT_MAX_CUBINS];
    size_t len[RT_MAX_CUBINS];
    int ncubin;
    tile_rt_status s;
    char err[1024];
    double seconds; /* the compile's wall time (a cache hit's read) */
} RtJitJob;
/* Runs the jobs on up to rt_jit_threads() threads (each job through rt_jit_compile, cache
 * included).  The caller keeps the kernels' const values unchanged meanwhile. */
void rt_jit_compile_many(tile_rt *rt, RtJitJob *jobs, int n);
/* Threads for compile batches: $TILE_JIT_THREADS, else the online CPUs (at most 64). */
int rt_jit_threads(void);
/* Frees the module's compiler instances. */
void rt_jit_free_pool(tile_rt_module *m);
/* The cache key of a compile, hex in `hex` (33 bytes). */
void rt_cache_key(const tile_rt_module *m, int k, uint32_t vi, RtFacts f, const char *arch, char hex[33]);
/* Reads an entry: true with *data malloc'd when present and valid; a corrupt entry is
 * counted, removed and reported as absent. */
bool rt_cache_read(tile_rt *rt, const char *sub, const char *hex, char **data, size_t *len);
/* Writes atomically (temporary file, then rename); failures are ignored (a cache). */
void rt_cache_write(tile_rt *rt, const char *sub, const char *hex, const void *data, size_t len);

/* ---- the cache's trust model (cache_trust.c) ------------------------------------- */
/* At tile_rt_open: makes rt->cache_dir (unless read-only), checks that nobody but its
 * owner can write it or the folders above, reads or makes its MAC key.  false with the
 * reason in err: the device does not open.  A cache that cannot be made or written
 * (a read-only file system) turns the disk cache off. */
bool rt_cache_open(tile_rt *rt, char *err, size_t n);
struct stat;
/* An entry file may be read: a regular file of the cache's owner, writable by no other. */
bool rt_cache_entry_trusted(const tile_rt *rt, const struct stat *st);
/* The MAC that binds an entry to its kind (sub), its key (32 hex digits) and content. */
uint64_t rt_cache_mac(const tile_rt *rt, const char *sub, const char *hex, const void *data, size_t len);
/* SipHash-2-4, incremental. */
typedef struct RtMac {
    uint64_t v[4];
    uint8_t buf[8];
    size_t nbuf;
    uint64_t total;
} RtMac;
void rt_mac_init(RtMac *s, const uint8_t key[16]);
void rt_mac_update(RtMac *s, const void *data, size_t n);
uint64_t rt_mac_final(RtMac *s);

/* ---- tuning ---------------------------------------------------------------------- */
/* Chooses among `cands` (instances of admissible variants) for a launch by timing each.
 * args/nargs are the launch's; *best on success. */
tile_rt_status rt_tune(tile_rt_kernel *k, RtInstance **cands, int ncands, const tile_rt_arg *args, int nargs,
                       void *stream, const int64_t *grid_given, RtInstance **best);
/* Loads/stores a key's choice on disk: the variant text. */
bool rt_tune_disk_get(tile_rt_kernel *k, uint64_t keyhash, char *text, size_t n);
void rt_tune_disk_put(tile_rt_kernel *k, uint64_t keyhash, const char *text);

/* The tuning log (tune_log.c): one record per tuning run appended to $cache_dir/tune.log,
 * for `tilec tune --replay`.  A candidate's samples as timed, in order. */
enum { RT_LOG_MAX_SAMPLES = 32 };
typedef struct RtTrial {
    double screen[RT_LOG_MAX_SAMPLES], final[RT_LOG_MAX_SAMPLES];
    int nscreen, nfinal;
} RtTrial;
void rt_tune_log_append(tile_rt_kernel *k, const char *key, RtInstance *const *cands, const RtTrial *trials, int ncands,
                        const RtInstance *best, double best_ms, double trial_s);
/* Tuning policies (tune_log.c): $TILE_TUNE_POLICY, "exhaustive" (every admissible variant,
 * the default), "random:K" or "model:K" (K of them: at random, or the K that ran best
 * relative to their run's best in the log's earlier runs of the kernel on this device).
 * keep[i] says whether admissible variant vis[i] is compiled and timed; at least one is. */
void rt_tune_policy_pick(tile_rt_kernel *k, const uint32_t *vis, int n, bool *keep);
const char *rt_tune_policy_name(void);

/* The joint search over ptxas options (tune_ptxas.c): with $TILE_TUNE_PTXAS set, the
 * variant the tuner chose (*best) is compiled again with each option set and timed against
 * itself (rt_tune), *best the fastest; without, nothing.  _restore: a tuning cache text of
 * such a choice ("...; ptxas OPTS") made into its instance from the candidate it names. */
tile_rt_status rt_tune_ptxas(tile_rt_kernel *k, RtInstance *chosen, const tile_rt_arg *args, int nargs, void *stream,
                             const int64_t *grid_given, RtInstance **best);
bool rt_tune_ptxas_restore(tile_rt_kernel *k, RtInstance **cands, int ncands, const char *text, RtInstance **best);
#ifdef TILE_RT_HAVE_CUDA
/* Loads a cubin or PTX image into inst (launch.c): module, function, shared memory. */
tile_rt_status rt_load_image(tile_rt_kernel *k, RtInstance *inst, const void *img, size_t len, bool is_ptx,
                             const char *entry);
#endif

/* Launches instance inst with already checked args (used by launch and the tuner). */
tile_rt_status rt_launch_instance(tile_rt_kernel *k, RtInstance *inst, const tile_rt_arg *args, const RtValue *vals,
                                  void *stream, const int64_t *grid_given);

#endif
