/* Passes over the tile IR: one pass per file, one signature, one pipeline table
 * (pipeline.c).  A pass rewrites a module in place and returns the number of errors
 * it reported (0: success).  Analyses are named analysis_* and change nothing. */
#ifndef TIR_PASSES_H
#define TIR_PASSES_H

#include "ir.h"

typedef struct TirPassContext {
    const char *arch; /* "sm_90a", ... (backend passes) */
    int opt_level;    /* 0 or 3 */
    bool verify_each; /* run the verifier after every pass */
    TirDiagFn diag;
    void *ud;
    /* --print-after: the named pass ("all": each), printed to dump */
    const char *print_after;
    FILE *dump;
    /* Errors about a place in the source (an op's or a function's loc) go here when set,
     * so the caller can print FILE:LINE:COL and a caret; others go to diag. */
    void (*diag_at)(void *ud, uint32_t loc, const char *msg);
    void *diag_at_ud;
} TirPassContext;

typedef int (*TirPassFn)(TirModule *m, TirPassContext *ctx);

typedef struct TirPassInfo {
    const char *name;
    TirPassFn run;
    const char *what; /* one line for --help and docs */
} TirPassInfo;

/* The pipeline in order (pipeline.c).  tir_pass_find also knows passes outside the
 * default pipeline. */
extern const TirPassInfo tir_pipeline[];
extern const int tir_pipeline_len;
const TirPassInfo *tir_pass_find(const char *name);

/* Runs the pipeline up to and including `last` (NULL: all). */
int tir_run_pipeline(TirModule *m, TirPassContext *ctx, const char *last);
int tir_run_pass(TirModule *m, TirPassContext *ctx, const TirPassInfo *p);

/* the passes */
int pass_inline(TirModule *m, TirPassContext *ctx);
int pass_specialize(TirModule *m, TirPassContext *ctx);
int pass_canonicalize(TirModule *m, TirPassContext *ctx);

/* analysis_axisinfo.c: prints analysis/axisinfo.c's facts (tile-opt) */
int pass_analysis_axisinfo(TirModule *m, TirPassContext *ctx); /* prints to ctx->dump */
int pass_layout(TirModule *m, TirPassContext *ctx);
int pass_fuse(TirModule *m, TirPassContext *ctx);
int pass_factor_ptrs(TirModule *m, TirPassContext *ctx);
/* software_pipeline.c: loads feeding dot in a loop go through a ring of `stages` shared
 * buffers filled ahead by async copies (prologue, steady state, drain). */
int pass_software_pipeline(TirModule *m, TirPassContext *ctx);
/* schedule.c: global loads move up to just after their operands (past reductions), so
 * their latency overlaps earlier work; never past a store, atomic, barrier or region. */
int pass_schedule(TirModule *m, TirPassContext *ctx);
/* smem_alloc.c: shared-memory scratch offsets (attr.smem_off/smem_bytes) by liveness.
 * barriers.c: explicit `barrier` ops where a scratch write could race with an earlier
 * read, then the proof that every shared-memory write/read pair is ordered;
 * barriers_check: the proof alone (a failure is an error). */
int pass_smem_alloc(TirModule *m, TirPassContext *ctx);
int pass_barriers(TirModule *m, TirPassContext *ctx);
int pass_barriers_check(TirModule *m, TirPassContext *ctx);
/* remat.c: after a dot loop, its epilogue's cheap values made again (last: nothing may merge them back) */
int pass_remat(TirModule *m, TirPassContext *ctx);
#endif
