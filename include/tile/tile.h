/* tile.h: the public API of the tilec compiler library (and its CPU interpreter).
 *
 * Lua-style: opaque handles, every call returns a tile_status, nothing internal is
 * exposed, and the library never prints or exits on its own.  Every message (compile
 * errors formatted as "FILE:LINE:COL: error: MSG" with the source line and a caret,
 * argument errors, run-time errors of the interpreter) goes to the context's
 * diagnostics callback, and the last error is also kept for tile_ctx_last_error.
 *
 *   tile_ctx      options: arch, -O level, debug, defines, --print-after, diagnostics
 *   tile_program  one parsed and checked .tile file (from a path or from memory)
 *   kernels       enumerated by index: name, parameters, tune space
 *   emit          text IR; llvm / ptx / cubin when the GPU backend is built (else
 *                 TILE_ERR_UNSUPPORTED); several modules at once with tile_compile
 *   report        registers, shared memory, spills, bytes and flops per variant
 *   run           one launch on a device: today the interpreter; the device enum leaves
 *                 room for cuda without changing these signatures
 *
 * Handles are not thread-safe: use one context per thread. */
#ifndef TILE_TILE_H
#define TILE_TILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------------- */
#define TILE_STATUSES(X)                                             \
    X(TILE_OK, "success")                                            \
    X(TILE_ERR_INVALID, "invalid argument to the API")               \
    X(TILE_ERR_IO, "cannot read or write a file")                    \
    X(TILE_ERR_COMPILE, "compile error")                             \
    X(TILE_ERR_NOT_FOUND, "no such kernel")                          \
    X(TILE_ERR_ARGS, "kernel arguments do not match its parameters") \
    X(TILE_ERR_NO_VARIANT, "no variant admits these arguments")      \
    X(TILE_ERR_GRID, "no grid: give one or add a grid clause")       \
    X(TILE_ERR_RUN, "run-time error in the kernel")                  \
    X(TILE_ERR_UNSUPPORTED, "not supported in this build")

typedef enum tile_status {
#define X(id, text) id,
    TILE_STATUSES(X)
#undef X
        TILE_NSTATUS
} tile_status;

/* A static string describing the status ("compile error"). */
const char *tile_status_string(tile_status s);

/* ---- context ------------------------------------------------------------------- */
typedef struct tile_ctx tile_ctx;
typedef struct tile_program tile_program;

/* Receives each whole formatted message (several lines for a compile error). */
typedef void (*tile_diag_fn)(void *ud, const char *msg);

tile_ctx *tile_ctx_new(void); /* NULL only when out of memory */
void tile_ctx_free(tile_ctx *c);
void tile_ctx_set_diag(tile_ctx *c, tile_diag_fn fn, void *ud);
/* One of tile_arch_names() (default tile_arch_default()); others: TILE_ERR_INVALID. */
tile_status tile_ctx_set_arch(tile_ctx *c, const char *arch);
/* The architectures tilec compiles for, from its one target table: whether `arch` is one,
 * all of them space-separated ("sm_80 sm_86 sm_89 sm_90 sm_90a"), the default ("sm_90a"),
 * and the one to compile for on a device of compute capability major.minor (the 'a' arch
 * of exactly that capability, else the plain one, else the lowest of its major; the newest
 * plain arch, as PTX, on a newer device; NULL on an older one). */
bool tile_arch_is_known(const char *arch);
const char *tile_arch_names(void);
const char *tile_arch_default(void);
const char *tile_arch_for_device(int cc_major, int cc_minor);
tile_status tile_ctx_set_opt_level(tile_ctx *c, int level); /* 0 or 3 (default 3) */
void tile_ctx_set_debug(tile_ctx *c, bool debug);           /* check assert(), verify IR */
/* "NAME=V[,V...]": fixes a const parameter or a tuned constant; several values ask for
 * several variants.  Values: integers (decimal, 0x), floats, true/false.  A second
 * define of the same name replaces the first.  Bad syntax: TILE_ERR_INVALID. */
tile_status tile_ctx_define(tile_ctx *c, const char *name_eq_values);
void tile_ctx_clear_defines(tile_ctx *c);
/* --print-after=PASS|all: IR dumps after that pass (each pass for "all") go to `out`.
 * NULL pass: no dumps.  An unknown pass name is TILE_ERR_INVALID. */
tile_status tile_ctx_set_print_after(tile_ctx *c, const char *pass, FILE *out);
/* Launch facts the compiled code may assume, as the runtime specializes a launch (like
 * Triton): TILE_ASSUME_DIV16 for a pointer parameter means its address is 16-byte
 * aligned, for an integer parameter that its value is a multiple of 16;
 * TILE_ASSUME_DIV8 the same for 8 (an address 8-byte aligned, a multiple of 8: for 16-bit
 * elements a row stride of 8 keeps 16-byte rows, so a 3000-wide f16 matrix still gets
 * 16-byte accesses; DIV16 implies it);
 * TILE_ASSUME_ONE (integers only) that its value is 1.  `param` names a parameter (of
 * any kernel compiled with this context; a name no kernel has, or a fact that does not
 * fit the parameter's type, is an error when compiling), or "*" for every pointer and
 * integer parameter (TILE_ASSUME_DIV16 and TILE_ASSUME_DIV8 only).  Facts add up over calls for one name;
 * facts 0 removes the name's assumptions.  Code
 * compiled this way is only correct for launches that satisfy the facts. */
enum { TILE_ASSUME_DIV16 = 1, TILE_ASSUME_ONE = 2, TILE_ASSUME_DIV8 = 4 };
tile_status tile_ctx_assume(tile_ctx *c, const char *param, unsigned facts);
void tile_ctx_clear_assumptions(tile_ctx *c);
/* Added: more ptxas options for every cubin compiled through c, words separated by spaces
 * ("-O1", "--def-load-cache=cg", "--register-usage-level=10"; at most 8 words, 255 bytes);
 * a -O among them replaces the -O3.  NULL or "": none.  The runtime's tuner uses it for
 * its joint search over ptxas controls ($TILE_TUNE_PTXAS, docs/tools.md). */
tile_status tile_ctx_set_ptxas_options(tile_ctx *c, const char *options);
/* Collect the time spent in each compile phase (see tile_ctx_timings). */
void tile_ctx_set_timing(tile_ctx *c, bool on);
/* Added: progress of a compile of many variants (tile_compile, tile_report_get, bundles and
 * headers), which run on several threads ($TILE_JIT_THREADS, default: the online CPUs):
 * fn(ud, what, done, total) as each variant finishes, `what` the kernel's name or "" for
 * several kernels.  Called from the compiling threads, one call at a time.  NULL: none. */
typedef void (*tile_progress_fn)(void *ud, const char *what, int done, int total);
void tile_ctx_set_progress(tile_ctx *c, tile_progress_fn fn, void *ud);
/* Added: each message goes to the diagnostics callback as one JSON object on one line,
 * for tools and agents: {"severity": "error"|"warning"|"note", "file", "line", "column",
 * "end_line", "end_column" (the span's last character; null where a message has no
 * location), "message", "source" (the source line), "variant" (the constants of the
 * variant being compiled, "BLOCK=64, warps=4, stages=2", else null), "notes": []}.  A
 * note comes as its own object after the error it belongs to (a tool may move it into
 * that error's "notes").  tile_ctx_last_error keeps the text form. */
void tile_ctx_set_diag_json(tile_ctx *c, bool on);
/* The last error message reported through this context ("" when none). */
const char *tile_ctx_last_error(const tile_ctx *c);

/* ---- programs ------------------------------------------------------------------- */
/* Parse and check a whole file; every error goes to the diagnostics callback.
 * On failure *out is NULL and the status is TILE_ERR_IO or TILE_ERR_COMPILE. */
tile_status tile_program_load_file(tile_ctx *c, const char *path, tile_program **out);
/* `name` is used in messages; `src` need not be NUL-terminated and is copied. */
tile_status tile_program_load_source(tile_ctx *c, const char *name, const char *src, size_t len, tile_program **out);
void tile_program_free(tile_program *p);

/* ---- kernels: names, parameters, tune space ------------------------------------- */
/* Scalar kinds, as in the language. */
// clang-format off
#define TILE_SCALARS(X) \
    X(TILE_BOOL, "bool") \
    X(TILE_I8, "i8") \
    X(TILE_I16, "i16") \
    X(TILE_I32, "i32") \
    X(TILE_I64, "i64") \
    X(TILE_U8, "u8") \
    X(TILE_U16, "u16") \
    X(TILE_U32, "u32") \
    X(TILE_U64, "u64") \
    X(TILE_F16, "f16") \
    X(TILE_BF16, "bf16") \
    X(TILE_F32, "f32") \
    X(TILE_F64, "f64") \
    X(TILE_F8E4M3, "f8e4m3") \
    X(TILE_F8E5M2, "f8e5m2")
// clang-format on

typedef enum tile_scalar {
#define X(id, text) id,
    TILE_SCALARS(X)
#undef X
        TILE_NSCALARS
} tile_scalar;

const char *tile_scalar_name(tile_scalar s);
size_t tile_scalar_size(tile_scalar s); /* bytes in memory; bool is 1 */
bool tile_scalar_is_float(tile_scalar s);
bool tile_scalar_is_signed(tile_scalar s); /* signed integers */

typedef struct tile_param_info {
    const char *name;
    tile_scalar type; /* the scalar, or the pointee of a pointer */
    bool is_pointer;
    bool is_const; /* `const NAME: T`: a specialization argument */
} tile_param_info;

int tile_program_kernel_count(const tile_program *p);
/* Index of the kernel named `name`, or -1. */
int tile_program_find_kernel(const tile_program *p, const char *name);
const char *tile_kernel_name(const tile_program *p, int k);
bool tile_kernel_has_grid(const tile_program *p, int k);
int tile_kernel_param_count(const tile_program *p, int k);
tile_status tile_kernel_param(const tile_program *p, int k, int i, tile_param_info *out);
/* The tune space: every `tune NAME in [...]` item in order.  Values are given as
 * doubles (integers exactly); TILE_ERR_UNSUPPORTED when an item is not a list of
 * literal numbers or file-level constants. */
int tile_kernel_tune_count(const tile_program *p, int k);
tile_status tile_kernel_tune(const tile_program *p, int k, int i, const char **name, const double **values,
                             int *nvalues);

/* ---- variants --------------------------------------------------------------------- */
/* A set of variants of one kernel for the context's defines (constant-only `where`
 * clauses already applied).  `all` false: only the first value of each tune list
 * not fixed by a define. */
typedef struct tile_variants tile_variants;
tile_status tile_variants_get(tile_program *p, int k, bool all, tile_variants **out);
void tile_variants_free(tile_variants *v);
int tile_variants_count(const tile_variants *v);
/* Constants of variant i (tuned names, const params, fixed consts, warps, stages). */
int tile_variant_const_count(const tile_variants *v, int i);
void tile_variant_const(const tile_variants *v, int i, int j, const char **name, double *value, bool *is_float);

/* ---- emit ----------------------------------------------------------------------- */
// clang-format off
#define TILE_EMIT_KINDS(X) \
    X(TILE_EMIT_TIR, "tir") \
    X(TILE_EMIT_LLVM, "llvm") \
    X(TILE_EMIT_PTX, "ptx") \
    X(TILE_EMIT_CUBIN, "cubin") \
    X(TILE_EMIT_BUNDLE, "bundle") \
    X(TILE_EMIT_HEADER, "header")
// clang-format on

typedef enum tile_emit_kind {
#define X(id, text) id,
    TILE_EMIT_KINDS(X)
#undef X
        TILE_NEMIT
} tile_emit_kind;

/* -1 when unknown. */
int tile_emit_kind_from_name(const char *name);
const char *tile_emit_kind_name(tile_emit_kind k);
/* Whether this build can produce `kind` (tir always; the others with a GPU backend). */
bool tile_emit_supported(tile_emit_kind kind);
/* The backend lowering $TILEC_LOWERING forces on every cubin (0..3, a test hook:
 * docs/backend.md, "Lowerings"), or -1 (unset or another value: the usual choice). */
int tile_forced_lowering(void);

/* Emits kernel `k` (-1: every kernel of the file), its first variant or all variants
 * for the context's defines, as `kind`.  *out is malloc'd (NUL-terminated for text
 * kinds), the caller frees it; *len excludes the terminator.  For TILE_EMIT_TIR the
 * pass pipeline runs up to and including `canonicalize` and the modules of several
 * variants are concatenated; llvm, ptx and cubin run the whole pipeline and make one
 * module: when the request is several variants or kernels it is TILE_ERR_INVALID (use
 * tile_compile, or fix the kernel and the tune values). */
tile_status tile_emit(tile_program *p, int k, tile_emit_kind kind, bool all_variants, char **out, size_t *len);
/* Text IR of the first variant of every kernel (or of kernel k >= 0). */
tile_status tile_emit_tir(tile_program *p, int k, char **out);
/* A metadata-only bundle (docs/bundle.md) of kernel k (-1: every kernel): signatures,
 * grid and where bytecode, key, and every variant for the context's defines with
 * ncode = 0 — what the runtime's JIT needs to choose a variant before compiling it
 * (with tile_emit_variant).  Needs no GPU backend.  *out is malloc'd, *len its size. */
tile_status tile_emit_bundle_meta(tile_program *p, int k, char **out, size_t *len);

/* What ptxas and the compiler say about one compiled kernel variant; -1: unknown. */
typedef struct tile_report {
    int kernel;  /* index in the program */
    int variant; /* index in tile_variants_get(p, kernel, all, ...) */
    char kernel_name[128];
    char variant_text[256];        /* "BLOCK=1024, warps=4, stages=2" */
    int regs;                      /* registers per thread */
    int smem_bytes;                /* static shared memory */
    int spill_stores, spill_loads; /* bytes, from ptxas -v */
    int stack_bytes;
    int static_global_bytes; /* global memory the module itself defines */
    int threads;             /* per program (warps * 32) */
    int64_t flops;           /* floating-point element operations per program (static) */
    int64_t global_bytes;    /* bytes one program's loads, stores and atomics move (static;
                                * loop bodies counted once) */
} tile_report;

/* One compiled module: one variant of one kernel. */
typedef struct tile_output {
    int kernel, variant; /* as in tile_report */
    /* "KERNEL" when the set has one variant of that kernel, else "KERNEL.N" (N: the
     * variant's index in the set); what tilec appends to -o OUT for several modules */
    char name[160];
    char *data;         /* malloc'd; NUL-terminated for text kinds */
    size_t len;         /* excluding the NUL */
    tile_report report; /* ptxas figures for TILE_EMIT_CUBIN; else -1 there */
} tile_output;

/* Compiles kernel k (-1: every kernel) to one module per variant (all_variants false:
 * the first variant of each tune list not fixed by a define), as llvm, ptx or cubin
 * (tir: one text module per variant too).  The whole pass pipeline runs for the GPU
 * kinds.  *outs is an array of *nouts entries; free it with tile_outputs_free. */
tile_status tile_compile(tile_program *p, int k, tile_emit_kind kind, bool all_variants, tile_output **outs,
                         int *nouts);
void tile_outputs_free(tile_output *outs, int nouts);
/* Compiles variant `variant` of tile_variants_get(p, k, true, ...) (every variant for
 * the context's defines), as the runtime does for the variant it launches; a cubin is
 * one ptxas run with ptxas's own register allocation (tile_emit_variant_cubins adds the
 * register budget's candidates).  Same ownership as tile_emit; report may be NULL. */
tile_status tile_emit_variant(tile_program *p, int k, int variant, tile_emit_kind kind, char **out, size_t *len,
                              tile_report *report);
/* One cubin of a variant and the registers per thread ptxas gave it (-1: unknown). */
typedef struct tile_cubin {
    char *data; /* malloc'd; the caller frees it */
    size_t len;
    int regs;
} tile_cubin;
/* The cubins of variant `variant` (numbered as for tile_emit_variant) worth timing
 * against each other: out[0] has the registers capped where that fits more programs on
 * an SM and spills nothing (the register budget: up to two more ptxas runs); out[1], only
 * where that cap applied, is ptxas's cubin with every register the block size allows,
 * which is what tile_emit_variant makes for TILE_EMIT_CUBIN.  Which runs faster depends
 * on the kernel and the GPU, so the runtime's tuner times both.  *n is 1 or 2; report
 * (may be NULL) describes out[0]. */
tile_status tile_emit_variant_cubins(tile_program *p, int k, int variant, tile_cubin out[2], int *n,
                                     tile_report *report);
/* --report: compiles every variant (all_variants true) or the first of kernel k (-1:
 * every kernel) to a cubin and returns one report per variant in *reps (malloc'd; the
 * caller frees it).  Needs ptxas: TILE_ERR_UNSUPPORTED without a GPU backend. */
tile_status tile_report_get(tile_program *p, int k, bool all_variants, tile_report **reps, int *nreps);

/* Seconds spent per compile phase since tile_ctx_set_timing(c, true), summed over every
 * compile through the context. */
// clang-format off
#define TILE_PHASES(X) \
    X(TILE_PHASE_PARSE, "parse") \
    X(TILE_PHASE_SEMA, "sema") \
    X(TILE_PHASE_IRGEN, "irgen") \
    X(TILE_PHASE_PASSES, "passes") \
    X(TILE_PHASE_LLVM_IR, "llvm-ir") \
    X(TILE_PHASE_LLVM_OPT, "llvm-opt") \
    X(TILE_PHASE_CODEGEN, "codegen") \
    X(TILE_PHASE_PTXAS, "ptxas")
// clang-format on
typedef enum tile_phase {
#define X(id, text) id,
    TILE_PHASES(X)
#undef X
        TILE_NPHASES
} tile_phase;
const char *tile_phase_name(tile_phase ph);
double tile_ctx_phase_seconds(const tile_ctx *c, tile_phase ph);

/* ---- host data ------------------------------------------------------------------ */
/* Element conversions as the GPU stores values: floats round to nearest even into
 * the format (f8 saturates to its largest finite value), integers wrap at their width,
 * bool stores 0 or 1. */
void tile_store_elements(tile_scalar t, void *dst, const double *src, size_t n);
void tile_load_elements(tile_scalar t, double *dst, const void *src, size_t n);

typedef enum tile_fill_kind {
    TILE_FILL_ZEROS,
    /* uniform: floats in [0, 1); signed integers in [-8, 7]; unsigned in [0, 15];
     * bool 0 or 1.  Small integers keep sums and products exact in tests. */
    TILE_FILL_RAND,
    /* standard normal (floats only; integers: TILE_ERR_INVALID) */
    TILE_FILL_RANDN,
} tile_fill_kind;

/* Fills n elements of type t deterministically from `seed`, the same on every
 * machine: splitmix64 gives 64-bit words; a uniform double is the top 53 bits times
 * 2^-53; normals come from Box-Muller on pairs of uniforms (u1 = 1 - u, so log(u1) is
 * finite), both outputs used; each value is computed in double and stored with
 * tile_store_elements (round to nearest even).  Integer `rand` values are
 * (word >> 60) - 8 for signed types and word >> 60 for unsigned ones. */
tile_status tile_fill(tile_scalar t, void *dst, size_t n, tile_fill_kind kind, uint64_t seed);

/* ---- run ------------------------------------------------------------------------ */
typedef enum tile_device { TILE_DEVICE_INTERP, TILE_DEVICE_CUDA } tile_device;
/* Whether `d` can run in this build on this machine. */
bool tile_device_available(tile_device d);

typedef enum tile_arg_kind {
    TILE_ARG_NONE,   /* const parameters: take the value from the defines */
    TILE_ARG_INT,    /* integer and bool parameters */
    TILE_ARG_FLOAT,  /* float parameters */
    TILE_ARG_BUFFER, /* pointer parameters: a host buffer of `bytes` bytes */
} tile_arg_kind;

typedef struct tile_arg {
    tile_arg_kind kind;
    union {
        int64_t i64;
        double f64;
        struct {
            void *ptr;
            size_t bytes;
        } buf;
    };
} tile_arg;

static inline tile_arg tile_arg_int(int64_t v) {
    tile_arg a = {.kind = TILE_ARG_INT};
    a.i64 = v;
    return a;
}
static inline tile_arg tile_arg_float(double v) {
    tile_arg a = {.kind = TILE_ARG_FLOAT};
    a.f64 = v;
    return a;
}
static inline tile_arg tile_arg_buffer(void *p, size_t bytes) {
    tile_arg a = {.kind = TILE_ARG_BUFFER};
    a.buf.ptr = p;
    a.buf.bytes = bytes;
    return a;
}

/* A grid computed from the constants of the variant that runs (as a Triton grid callable
 * sees its config): names[i] = values[i] for each of the variant's constants (const
 * parameters, tuned names, warps, stages); fills grid[0..2] (axes it leaves stay 1) and
 * returns 0, or nonzero to fail the launch. */
typedef int (*tile_grid_fn)(void *ud, int n, const char *const *names, const double *values, int64_t grid[3]);

typedef struct tile_run_options {
    tile_device device; /* TILE_DEVICE_INTERP; cuda: TILE_ERR_UNSUPPORTED until built */
    int64_t grid[3];    /* all 0: from grid_fn when set, else the kernel's grid clause */
    FILE *print_out;    /* where print() writes; NULL: discarded */
    /* filled in by tile_run: the variant and grid that ran, for -v */
    char chosen[256]; /* "BLOCK=1024, warps=4, stages=2" */
    int64_t grid_used[3];
    /* Added: the grid from the chosen variant's constants (grid all 0); NULL: none */
    tile_grid_fn grid_fn;
    void *grid_ud;
    /* Added: true: only count (below), nothing runs */
    bool count_only;
    /* Added, filled in by tile_run: what this launch computes and moves, counted on the
     * tile IR of the variant with these arguments: floating-point operations and global
     * bytes of every program, each `for` times its trip count where the arguments and
     * program ids fix its bounds, else once (loops_per_iteration counts those loops, the
     * most of any program); both branches of an `if`; masked lanes included, as --report
     * counts them per program (docs/tools.md, "Counts per launch") */
    double launch_flops, launch_bytes;
    int loops_per_iteration;
} tile_run_options;

/* Runs kernel k once.  args: one per parameter in declaration order (nargs must equal
 * the parameter count); const parameters take TILE_ARG_NONE (their value comes from
 * the defines) or TILE_ARG_INT / TILE_ARG_FLOAT (their value).  Every argument is
 * checked (kind, integer range) before anything runs; a mismatch is TILE_ERR_ARGS with
 * a message naming the parameter.  The first variant whose launch-time `where`
 * clauses hold runs; when none does, TILE_ERR_NO_VARIANT with a message naming the
 * failing predicate and its location.  Memory accesses are checked against the
 * buffers; a violation or a failed assert is TILE_ERR_RUN. */
tile_status tile_run(tile_program *p, int k, const tile_arg *args, int nargs, tile_run_options *o);

/* The edit distance of two short names, for "did you mean" (99 when either is longer
 * than 64 bytes: a long name is no typo). */
int tile_name_distance(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif
