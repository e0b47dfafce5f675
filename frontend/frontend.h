/* The front end's interface: source text -> checked program -> tile IR per variant.
 *
 *   tf_parse       lex (re2c) and parse (Bison) one file into an AstFile
 *   tf_check       sema over the whole file: names, clause expressions, parameters;
 *                  everything that holds for every variant
 *   tf_variants    expand tune lists and -D values into variants, pruned by
 *                  constant-only `where` clauses
 *   tf_elaborate   one variant -> a TirFunc (kernel) plus device-function instances,
 *                  with every type and shape checked for those constants
 *   tf_eval_*      the launch-time clauses (grid, runtime `where`) on actual arguments
 *
 * Errors go to a TfDiag that formats "FILE:LINE:COL: error: MSG", the source line and
 * a caret under the span, and hands each whole message to the caller's sink.
 * Nothing here prints or exits. */
#ifndef TF_FRONTEND_H
#define TF_FRONTEND_H

#include "ir.h"
#include "ast.h"

/* ---- diagnostics --------------------------------------------------------------- */
typedef struct TfDiag {
    const char *path;
    const char *src;
    size_t len;
    TirDiagFn sink; /* receives each formatted message (with caret lines) */
    void *ud;
    int nerrors;
    int max_errors; /* after this many, one "too many errors" and silence; 0 = 100 */
} TfDiag;

void tf_diag_init(TfDiag *d, const char *path, const char *src, size_t len, TirDiagFn sink, void *ud);
/* Reports an error at [loc, end) (end <= loc: a single caret). printf-style message. */
void tf_error(TfDiag *d, uint32_t loc, uint32_t end, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A "note:" line attached to the previous error. */
void tf_note(TfDiag *d, uint32_t loc, uint32_t end, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* line and column (1-based) of a byte offset */
void tf_line_col(const TfDiag *d, uint32_t loc, int *line, int *col);

/* ---- parsing and checking ------------------------------------------------------- */
/* Returns the file's AST, or NULL when there were syntax errors (all reported). */
AstFile *tf_parse(TirArena *a, TfDiag *d);
/* Whole-file checks; returns the number of errors. */
int tf_check(TirArena *a, AstFile *f, TfDiag *d);

/* ---- variants ------------------------------------------------------------------ */
/* A value given with -D or at launch for a `const` parameter or a tuned constant. */
typedef struct TfDefine {
    const char *name;
    int64_t *ivals; /* several values: several variants */
    double *fvals;
    bool *is_float;
    int32_t nvals;
} TfDefine;

typedef struct TfVariant {
    TirConstBinding *consts; /* every const parameter, tuned name, fixed const, warps, stages */
    int32_t nconsts;
    int32_t warps, stages;
} TfVariant;

/* Fills *out (arena) with every variant of kernel `k`: the product of the tune lists
 * (or the -D values that replace them), pruned by the constant-only `where` clauses.
 * `first_only`: just the first value of each list not fixed by a define.
 * Const parameters without a define are an error ("needs -D NAME=..."), as are defines
 * naming nothing.  Returns the count (0 with errors reported, or with a note when
 * every variant was pruned). */
int tf_variants(TirArena *a, const AstFile *f, int k, const TfDefine *defs, int ndefs, bool first_only, TfVariant **out,
                TfDiag *d);
/* The same for a target whose CTAs may have `smem_max` bytes of shared memory: the value of
 * SMEM_MAX in constant `where` clauses (tf_variants: TF_SMEM_MAX_DEFAULT, sm_90's). */
enum { TF_SMEM_MAX_DEFAULT = 227 * 1024 };
int tf_variants_for(TirArena *a, const AstFile *f, int k, const TfDefine *defs, int ndefs, bool first_only,
                    int64_t smem_max, TfVariant **out, TfDiag *d);

/* The constants that shape the launch rather than the code: "warps" and "stages".  A kernel
 * tunes or fixes them like any constant, and they are always defined (4 and 2 by default).
 * The one place that recognizes their names. */
typedef enum { TF_LAUNCH_NONE, TF_LAUNCH_WARPS, TF_LAUNCH_STAGES } TfLaunchShape;
TfLaunchShape tf_launch_shape(const char *name);

/* Lowers kernel `k` for one variant into `m`: the kernel as TirFunc named by the
 * kernel, device functions instanced per call signature as TIR_FUNC_DEVICE funcs
 * called with `call`.  Returns NULL after reporting errors. */
TirFunc *tf_elaborate(TirModule *m, const AstFile *f, int k, const TfVariant *v, TfDiag *d);

/* ---- launch-time clauses ---------------------------------------------------------- */
/* Runtime scalar arguments by parameter index (pointers ignored); values of
 * integer params in ival, float params in fval. */
typedef struct TfArgValue {
    int64_t ival;
    double fval;
} TfArgValue;

/* Evaluates the grid clause: 0 when it did, -1 when the kernel has none, i + 1 when
 * expression i has no value for these arguments (a division by zero). */
int tf_eval_grid(const AstFile *f, int k, const TfVariant *v, const TfArgValue *args, int64_t grid[3]);
/* Checks the runtime `where` clauses; returns -1 when all hold, else the index in
 * kernels[k].wheres of the first that fails. */
int tf_eval_where(const AstFile *f, int k, const TfVariant *v, const TfArgValue *args);
/* Whether `where` clause i names a runtime argument (is checked at launch). */
bool tf_where_is_runtime(const AstFile *f, int k, int i);

#endif
