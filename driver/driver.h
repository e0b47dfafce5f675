/* Internals of the compiler library shared by the files of driver/.  Nothing here is
 * public: include/tile/tile.h is the only interface users see. */
#ifndef TILE_DRIVER_H
#define TILE_DRIVER_H

#include "tile/tile.h"
#include "ir.h"
#include "frontend.h"
#include "passes.h"
#include "interp.h"

typedef struct DriverDefine {
    char *name;
    int64_t *ivals;
    double *fvals;
    bool *is_float;
    int32_t nvals;
} DriverDefine;

/* tile_ctx_assume: a launch fact for the parameters named `name` ("*": all). */
typedef struct DriverAssume {
    char *name;
    unsigned facts; /* TILE_ASSUME_* */
} DriverAssume;

struct tile_ctx {
    tile_diag_fn diag;
    void *diag_ud;
    char arch[16];
    int opt_level;
    bool debug;
    DriverDefine *defines;
    int ndefines;
    char *print_after; /* NULL: no dumps */
    FILE *dump;
    char *last_error; /* malloc'd; NULL: none */
    DriverAssume *assumes;
    int nassumes;
    bool timing;
    double phase_s[TILE_NPHASES];
    tile_progress_fn progress; /* NULL: none */
    void *progress_ud;
    bool diag_json;      /* messages to `diag` as JSON objects (tile_ctx_set_diag_json) */
    char variant[256];   /* the variant being lowered or compiled ("" none): JSON's "variant" */
    char *ptxas_options; /* tile_ctx_set_ptxas_options; NULL: none */
};

/* The tune space of one kernel, evaluated once at load. */
typedef struct DriverTune {
    const char *name;
    double *values;
    int nvalues;
    bool ok; /* false: not a list of literal numbers */
} DriverTune;

struct tile_program {
    tile_ctx *ctx;
    TirArena *arena; /* the AST and everything of the file */
    TfDiag diag;
    AstFile *file;
    DriverTune **tunes; /* per kernel: file->kernels[k].ntunes entries */
};

struct tile_variants {
    TirArena *arena;
    TfVariant *v;
    int n;
};

/* The largest source file tile_program_load_file reads (a power of two times 64 KiB). */
#define DRIVER_MAX_SOURCE_BYTES (64 << 20)

/* The sink every library message goes through: remembers it as the last error and
 * hands it to the user's callback. */
void driver_sink(void *ud, const char *msg);

#ifdef TILEC_HAVE_BACKEND
struct TbOptions;
/* Sets o's lowering (alone) where $TILEC_LOWERING names one. */
void driver_lowering_options(struct TbOptions *o);
#endif
/* A printf-style error without a source location ("error: MSG"). */
void driver_error(tile_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The context's defines plus `extra`, as the front end wants them (in arena a). */
TfDefine *driver_defines(TirArena *a, const tile_ctx *c, const TfDefine *extra, int nextra, int *n);
/* The parameter's scalar kind; -1 when the type name is unknown. */
int driver_param_scalar(const AstParam *p);
/* Elaborates variant v of kernel k into a new module in `a`, applies the context's
 * launch assumptions and runs the pipeline up to `canonicalize` (the interpreter and
 * --emit=tir) or, with `full`, to its end (the GPU backend).  NULL after reporting
 * errors.  driver_lower_to also applies the nextra assumptions `extra` (a bundle
 * record's facts), after the context's, for this compile only: the context is not
 * touched, so compiles on other threads that copy it never see them. */
TirModule *driver_lower(tile_program *p, TirArena *a, int k, const TfVariant *v);
/* counts.c: one launch's flops and global bytes counted on kernel f's IR with these
 * arguments (by body argument) and grid; *per_iteration: loops counted once (tile.h,
 * tile_run_options). */
void driver_count_launch(const TirFunc *f, const TirArg *args, const int64_t grid[3], double *flops, double *bytes,
                         int *per_iteration);
TirModule *driver_lower_to(tile_program *p, TirArena *a, int k, const TfVariant *v, bool full,
                           const DriverAssume *extra, int nextra);
/* Reports assumptions that name no parameter of kernel `only` (-1: of any kernel) or
 * do not fit its type; false when there was one. */
bool driver_check_assumptions(tile_program *p, int only);
/* Variants of kernel k; `only_relevant` drops defines that name nothing in it. */
tile_status driver_variants_get(tile_program *p, int k, bool all, bool only_relevant, tile_variants **out);
/* Checks what a compile of kernel k (-1: all) needs of the context: every define names
 * something (k < 0), the assumptions fit.  Reports and returns TILE_ERR_COMPILE. */
tile_status driver_check_request(tile_program *p, int k);
/* emit.c: whether the GPU backend is linked, and tile_emit for llvm/ptx/cubin. */
bool driver_have_backend(void);
tile_status driver_emit_one(tile_program *p, int k, tile_emit_kind kind, bool all, char **out, size_t *len);

/* jobs.c: runs fn(q, j, ud) for every job j in [0, n) on worker threads, q the caller's
 * program or a copy of it (a context like p's, the source loaded again), as many threads
 * as $TILE_JIT_THREADS or the CPUs; one thread or --print-after: in order on p.  Each
 * job's messages reach p's context after the batch, in job order; with stop_on_error,
 * only up to the first failed job's (later jobs may be skipped).  Returns the first
 * failure in job order.  `what` names the batch in progress reports. */
typedef tile_status (*DriverJobFn)(tile_program *q, int job, void *ud);
tile_status driver_run_jobs(tile_program *p, int n, DriverJobFn fn, void *ud, const char *what, bool stop_on_error);

/* Edit distance of two names, for "did you mean" (99 for names over 64 characters). */
int driver_name_distance(const char *a, const char *b);

/* Monotonic seconds, and adding a phase's time when timing is on. */
double driver_now(void);
void driver_time(tile_ctx *c, tile_phase ph, double seconds);
/* "BLOCK=1024, warps=4, stages=2" into buf. */
void driver_variant_text(const TfVariant *v, char *buf, size_t n);
/* A formatted message ("PATH:LINE:COL: error: MSG", source line, caret line; or "error:
 * MSG") as the one-line JSON object of tile_ctx_set_diag_json; malloc'd, NULL when out
 * of memory.  variant: "" for none. */
char *driver_diag_json(const char *msg, const char *variant);

#endif
