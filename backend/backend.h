/* The GPU backend's interface to the driver: tile IR (after the layout passes) ->
 * LLVM IR -> PTX -> cubin.  Internal to the compiler; only backend/ sees LLVM.
 *
 * Prefix tb_.  Errors go to the diag sink as whole messages ("KERNEL: error: MSG");
 * nothing here prints or exits. */
#ifndef TB_BACKEND_H
#define TB_BACKEND_H

#include "ir.h"

typedef enum { TB_OUT_LLVM, TB_OUT_PTX, TB_OUT_CUBIN } TbOutput;

typedef struct TbOptions {
    const char *arch;  /* a name of the target table, ir/target.def (NULL: TIR_TARGET_DEFAULT) */
    int opt_level;     /* 0: no LLVM optimisation (and ptxas -O0), else O3 */
    bool debug;        /* assert checks on */
    const char *ptxas; /* NULL: $TILEC_PTXAS, the configured path, then PATH */
    /* Optional: errors about one op that has a source location go here (loc: the byte
     * offset in the source file, msg: the bare message) instead of to diag, so the
     * caller can print FILE:LINE:COL with a caret.  NULL: diag with the byte offset. */
    void (*diag_at)(void *ud, uint32_t loc, const char *msg);
    void *diag_at_ud;
    int threads; /* threads per program, for the register budget (0: unknown) */
    /* Registers a thread holds at once somewhere in the kernel, a lower bound (0: unknown),
     * for tb_ptxas: the register budget tries no cap below it.  tb_emit computes it (the
     * largest `dot` accumulator's share plus one mma's operands), uses it for its own cubins
     * and returns it in TbReport.live_floor for a caller that runs tb_ptxas on the PTX. */
    int live_floor;
    /* Which lowering (0 .. TB_LOWERINGS - 1; callers leave it 0): tb_emit tries the next
     * ones where a cubin spills (backend/lower.c, fresh_ids, says what each changes). */
    int lowering;
    bool only_lowering; /* true: `lowering` alone, no retries (tests) */
    /* More ptxas options, words separated by spaces (NULL: none): the tuner's joint search
     * over ptxas controls (tile_ctx_set_ptxas_options).  A -O in them replaces the -O3. */
    const char *ptxas_options;
} TbOptions;

enum { TB_LOWERINGS = 4 };

/* What ptxas (and the lowering) says about one kernel variant. -1: unknown. */
typedef struct TbReport {
    int regs;
    int smem_bytes; /* static shared memory (scratch for reductions, conversions) */
    int spill_stores, spill_loads, stack_bytes;
    int static_global_bytes; /* global memory the module itself defines (none today) */
    int64_t flops;           /* floating-point element operations per program, from the IR */
    int64_t global_bytes;    /* bytes of global memory one program's loads, stores and atomics
                              * move (each op once: loop bodies are not multiplied) */
    int threads;             /* warps * 32 */
    int codegen_none;        /* 1: NVPTX codegen ran at CodeGenOpt::None (big modules), 0: Less */
    int live_floor;          /* TbOptions.live_floor for tb_ptxas of this kernel's PTX (any kind) */
    /* seconds spent in each phase of tb_emit (for -v timing; 0 when not reached) */
    double t_build;   /* tile IR -> LLVM IR, verification */
    double t_opt;     /* LLVM default<O3> */
    double t_codegen; /* NVPTX -> PTX text */
    double t_ptxas;   /* ptxas (cubin only) */
} TbReport;

/* The cubin ptxas made with every register the block size allows, kept where the register
 * budget (tb_ptxas) chose a tighter one.  Which of the two runs faster is measured, not
 * guessed: the runtime's tuner times both.  cubin NULL: the budget changed nothing. */
typedef struct TbAltCubin {
    char *cubin; /* malloc'd */
    size_t len;
    int regs;
} TbAltCubin;

/* Lowers `kernel` (a kernel of m whose tiles all carry layouts) and produces `kind`:
 * *out is malloc'd (NUL-terminated for text), *len its size without the NUL.
 * report may be NULL; regs/spills are filled for TB_OUT_CUBIN only; so is alt.  alt is
 * for a caller whose tuner times the cubins: with it the register budget runs (tb_ptxas);
 * NULL: one cubin, ptxas's own allocation, one ptxas run.  A cubin that spills is made again
 * from the next lowerings (TbOptions.lowering) and the one that spills least kept.
 * PTX and LLVM output is the first lowering's (no ptxas run says whether it spills).
 * Returns the number of errors (0: success). */
int tb_emit(TirModule *m, TirFunc *kernel, const TbOptions *opt, TbOutput kind, char **out, size_t *len,
            TbReport *report, TbAltCubin *alt, TirDiagFn diag, void *ud);

/* tb_emit to a cubin, with the PTX of the lowering it kept (*ptx malloc'd, NULL on error):
 * what a bundle stores beside the cubin. */
int tb_emit_cubin_ptx(TirModule *m, TirFunc *kernel, const TbOptions *opt, char **cubin, size_t *cubin_len, char **ptx,
                      size_t *ptx_len, TbReport *report, TbAltCubin *alt, TirDiagFn diag, void *ud);

/* Bytes of spill stores and loads in a report (0 when none or unknown). */
int tb_spill_bytes(const TbReport *report);

/* Whether arch is one the backend knows. */
bool tb_arch_known(const char *arch);

/* Runs ptxas on PTX text: the cubin in *cubin (malloc'd) and the -v figures in report;
 * alt (may be NULL: no register budget) as for tb_emit.  Returns 0 on success; errors (ptxas missing, ptxas'
 * own messages) go to diag. */
int tb_ptxas(const char *ptx, size_t ptx_len, const TbOptions *opt, const char *kernel_name, char **cubin,
             size_t *cubin_len, TbReport *report, TbAltCubin *alt, TirDiagFn diag, void *ud);

/* Fills report's regs/smem/spills from ptxas -v text for `kernel_name` (the last
 * function section wins when the name is NULL).  Exposed for tests. */
void tb_parse_ptxas_info(const char *log, const char *kernel_name, TbReport *report);

#endif
