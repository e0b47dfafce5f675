/* Shared by sema.c, variants.c, clauses.c and elaborate*.c: constant evaluation over
 * clause-style expressions, and the elaboration context that lowers a kernel
 * body into tile IR.  Private to the front end. */
#ifndef TF_SEMA_INTERNAL_H
#define TF_SEMA_INTERNAL_H

#include "frontend.h"

/* ---- constant evaluation (clauses.c) ------------------------------------------ */
/* A compile-time scalar.  `typed`: a value of type `ty`, canonical for it (ints wrapped,
 * floats rounded); untyped: a literal's exact value, which takes a type where it meets
 * one (docs/language.md, typing rule 2). */
typedef struct TfConst {
    bool is_float;
    int64_t i;
    double f;
    bool typed;
    uint8_t ty; /* TirScalar, when typed */
} TfConst;

typedef enum {
    TF_EV_OK,      /* value in *out */
    TF_EV_RUNTIME, /* names a runtime argument and no argument values were given */
    TF_EV_FAIL,    /* not constant, unknown name, division by zero, ... (reported when diag) */
} TfEvalStatus;

typedef struct TfEvalEnv {
    const AstFile *file;
    const AstKernel *kernel;       /* NULL: file constants only */
    const TirConstBinding *consts; /* bound constants, looked up first */
    int32_t nconsts;
    const TfArgValue *args; /* runtime arguments by parameter index; NULL: unknown */
    TfDiag *diag;           /* NULL: silent */
    int32_t nfile_consts;   /* file constants visible: the first n (-1: all) */
    int depth;
} TfEvalEnv;

TfEvalStatus tf_const_eval(TfEvalEnv *e, const AstNode *n, TfConst *out);
bool tf_const_truthy(TfConst c);
int tf_find_file_const(const AstFile *f, const char *name);
/* The first top-level definition of `name`: an index over constants, then functions, then
 * kernels, or -1 (through the hash tf_check builds; a scan before it). */
int tf_find_top(const AstFile *f, const char *name);
int tf_find_param(const AstKernel *k, const char *name);
const TirConstBinding *tf_find_binding(const TirConstBinding *b, int n, const char *name);
/* The clause builtins: cdiv, minimum, maximum, next_pow2 (index, or -1). */
int tf_clause_fn(const char *name);
int64_t tf_next_pow2(int64_t x);
/* float -> integer as the IR's cast: truncates, saturates at the range of s, NaN: 0. */
int64_t tf_float_to_int(TirScalar s, double x);

/* ---- folding with run-time semantics (const_fold.c, over ir/fold.c) --------------- */
/* The type v's value is read as: its own, or for a literal the exact i64 / f64. */
TirScalar tf_const_source_type(TfConst v);
/* `v as to`, v read as `from` (a typed result). */
TfConst tf_const_convert(TfConst v, TirScalar from, TirScalar to);
/* A literal fits an integer type when its value is in the signed or the unsigned range of
 * the type's width (so 0xFFFF_FFFF fits i32 and -1 fits u32; 300 fits no 8-bit type). */
bool tf_const_fits(TfConst v, TirScalar t);
/* a op b on values of type t (converted to t first), as the run time computes it: the
 * result is typed (t, or i1 for comparisons).  False where ir/fold.c does not fold. */
bool tf_fold_binop(AstOp op, TirScalar t, TfConst a, TfConst b, TfConst *out);
/* The same for an IR op (maximum, minimum, ...; `pred`: cmp's). */
bool tf_fold_tir(TirOpcode code, int pred, TirScalar t, TfConst a, TfConst b, TfConst *out);
bool tf_fold_unop(TirOpcode code, TirScalar t, TfConst a, TfConst *out);
/* Two integer types promoted: the wider, signed if either is. */
TirScalar tf_promote_ints(TirScalar a, TirScalar b);

/* Tiles of the language have rank 1 to 3 (docs/language.md); the IR allows more
 * (TIR_MAXRANK) for the passes' own reshapes. */
enum { TF_MAX_TILE_RANK = 3 };

/* ---- elaboration (elaborate.c, elaborate_builtins.c) -------------------------------- */
/* A value during elaboration.  Compile-time scalars stay unmaterialized (`known`)
 * until an op needs them, so that shapes and static bounds fold; literals and tuned
 * constants are `untyped` and take the type of the operand they meet. */
typedef struct SVal {
    TirValue *v;
    TirType ty; /* for untyped values: the default i32 / f32 */
    bool known;
    bool untyped;
    bool is_void; /* a call without a result */
    bool bad;     /* an error was reported; suppress follow-on errors */
    TfConst c;
} SVal;

typedef enum { BIND_LET, BIND_VAR, BIND_PARAM } BindKind;

typedef struct Binding {
    const char *name;
    SVal val;
    BindKind kind;
    uint32_t loc;
    struct Binding *prev;  /* the scope chain: the binding made before this one */
    struct Binding *hnext; /* the next older binding in this one's hash bucket */
    uint32_t hash, serial; /* serial: order of binding, never reused */
} Binding;

/* Names are found through a hash of buckets (newest binding first in each), so that a
 * kernel of 100,000 statements binds and looks up in constant time (a walk of the scope
 * chain made the front end quadratic).  Bindings older than `floor` (a device function's
 * caller's) are invisible. */
enum { SEMA_NBUCKETS = 1024 };

typedef struct SemaCtx {
    TirModule *m;
    TirArena *arena;
    const AstFile *file;
    const AstKernel *kernel;
    const TfVariant *variant;
    TfDiag *d;
    TirBuilder b;
    Binding *scope;
    Binding **buckets; /* SEMA_NBUCKETS, allocated at the first bind */
    uint32_t nbind, floor;
    const AstFn *fn;          /* device function being elaborated, or NULL */
    const char *fn_stack[64]; /* functions being elaborated, for recursion */
    int nfn_stack;
    const char *failed[64]; /* device function instances whose elaboration failed */
    int nfailed;
    SVal fn_result;
    bool fn_has_result;
    int depth;
    /* What a compile may cost (docs/language.md, "Limits"): the ops the function being
     * built will have once its calls are inlined (its own values plus each callee's
     * size), the device function instances' sizes, and the product of the trip counts
     * of the static_range loops being unrolled. */
    int64_t inlined_extra;
    struct FnSize *sizes;
    int64_t unroll_product;
    bool too_big; /* the size limit was reported: the rest is not elaborated */
} SemaCtx;

/* The most ops a kernel may have once unrolled and inlined, and the most iterations
 * nested static_range loops may unroll in all; as passes/inline.c's growth limit. */
enum { TF_MAX_KERNEL_OPS = 1 << 20, TF_MAX_UNROLL_TOTAL = 1 << 20 };

void sema_err(SemaCtx *c, const AstNode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
SVal sv_bad(void);
SVal sv_known_int(int64_t v, bool untyped, TirScalar s);
SVal sv_known_float(double v, bool untyped, TirScalar s);
SVal sv_value(TirValue *v);
const char *sema_type_str(SemaCtx *c, TirType t);
SVal sema_expr(SemaCtx *c, const AstNode *n);
TirValue *sema_mat(SemaCtx *c, SVal *s);
/* Gives an untyped value a type: the element type `elem` (error when a float literal
 * meets an integer type). */
bool sema_type_literal(SemaCtx *c, SVal *s, TirScalar elem, const AstNode *n);
/* Makes two values share one element type by the promotion rules. */
bool sema_unify(SemaCtx *c, SVal *a, SVal *b, const AstNode *n);
/* The numpy broadcast of two shapes; false when incompatible. */
bool sema_broadcast_shape(TirType a, TirType b, int *rank, int32_t *shape);
/* Materializes s with the given shape (splat / expand_dims / broadcast). */
TirValue *sema_broadcast_to(SemaCtx *c, SVal *s, int rank, const int32_t *shape, const AstNode *n);
/* Checks the dims of a tile shape; reports at n. */
bool sema_check_shape(SemaCtx *c, const AstNode *n, int rank, const int32_t *shape);
SVal sema_binop(SemaCtx *c, AstOp op, SVal a, SVal b, const AstNode *n);
bool sema_cast(SemaCtx *c, SVal *s, TirScalar to);
TfConst sema_convert_const(TfConst v, TirScalar to);
SVal sema_call_fn(SemaCtx *c, const AstNode *call);
/* Calls a builtin; *found is false when `name` is no builtin. */
SVal sema_builtin(SemaCtx *c, const AstNode *call, bool *found);
bool sema_is_builtin(const char *name);
/* The name of builtin i, or NULL past the last (for "did you mean"). */
const char *sema_builtin_name(int i);

#endif
