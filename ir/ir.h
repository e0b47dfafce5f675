/* The tile IR: types, values, ops with structured regions, functions and modules.
 *
 * Everything of one compilation lives in one arena (TirArena) and is freed at once;
 * nothing here is freed one by one.  Values are SSA: each has one definition, either
 * an op result or a block argument.  Control flow is structured: `for` and `if` ops
 * own regions of exactly one block, each ending in `yield`.  No CFG before LLVM.
 *
 * Prefixes: tir_ for every function of this library.  This header is internal to the
 * compiler (frontend, passes, backend, driver, tools' tests); the public API is
 * include/tile/tile.h.
 */
#ifndef TIR_IR_H
#define TIR_IR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include "target.h" /* the target table: passes and backend ask it per arch */

/* ---- arena ------------------------------------------------------------------- */
typedef struct TirArena TirArena;
TirArena *tir_arena_new(void);
void tir_arena_free(TirArena *a);
void *tir_alloc(TirArena *a, size_t n); /* zeroed, 16-byte aligned; aborts on OOM */
char *tir_strdup(TirArena *a, const char *s);
char *tir_strndup(TirArena *a, const char *s, size_t n);
void *tir_memdup(TirArena *a, const void *p, size_t n);

/* ---- scalar kinds -------------------------------------------------------------- */
/* SCALAR(ID, "text", bits, class)  class: 'b' bool, 's' signed int, 'u' unsigned int, 'f' float */
#define TIR_SCALARS(X)          \
    X(I1, "i1", 1, 'b')         \
    X(I8, "i8", 8, 's')         \
    X(I16, "i16", 16, 's')      \
    X(I32, "i32", 32, 's')      \
    X(I64, "i64", 64, 's')      \
    X(U8, "u8", 8, 'u')         \
    X(U16, "u16", 16, 'u')      \
    X(U32, "u32", 32, 'u')      \
    X(U64, "u64", 64, 'u')      \
    X(F16, "f16", 16, 'f')      \
    X(BF16, "bf16", 16, 'f')    \
    X(F32, "f32", 32, 'f')      \
    X(F64, "f64", 64, 'f')      \
    X(F8E4M3, "f8e4m3", 8, 'f') \
    X(F8E5M2, "f8e5m2", 8, 'f')

typedef enum {
#define X(id, text, bits, cls) TIR_##id,
    TIR_SCALARS(X)
#undef X
        TIR_NSCALARS
} TirScalar;

const char *tir_scalar_name(TirScalar s);
int tir_scalar_bits(TirScalar s);
int tir_scalar_bytes(TirScalar s); /* storage size: i1 is 1 byte */
bool tir_scalar_is_float(TirScalar s);
bool tir_scalar_is_int(TirScalar s);               /* includes i1 */
bool tir_scalar_is_signed(TirScalar s);            /* signed ints; floats are signed too */
int tir_scalar_from_name(const char *s, size_t n); /* -1 when unknown; "bool" gives I1 */

/* ---- types ------------------------------------------------------------------- */
struct TirModule; /* defined below; declared here so tir_type_print's parameter refers to it */
#define TIR_MAXRANK 5
enum { TIR_K_VALUE, TIR_K_DESC, TIR_K_SMEM };

/* A type is a small value, compared with tir_type_eq.
 *  - scalar:         kind VALUE, rank 0, ptr 0
 *  - pointer:        kind VALUE, rank 0, ptr 1 (points to `elem` in global memory)
 *  - tile:           kind VALUE, rank >= 1, elements are `elem` (ptr 1: a tile of pointers)
 *  - tensor desc:    kind DESC, elem and rank/shape give the element type and block shape
 *  - shared buffer:  kind SMEM, shape[0] stages of a tile of shape[1..rank-1]; layout the
 *                    shared layout of one stage (0 before the layout pass)
 * layout: 0 before the layout pass; else an index into the module's layout table. */
typedef struct TirType {
    uint8_t kind;
    uint8_t elem; /* TirScalar */
    uint8_t ptr;
    uint8_t rank;
    int32_t shape[TIR_MAXRANK];
    int32_t layout;
} TirType;

TirType tir_scalar_type(TirScalar s);
TirType tir_ptr_type(TirScalar pointee);
TirType tir_tile_type(TirType elem, int rank, const int32_t *shape); /* elem: scalar or pointer */
TirType tir_elem_type(TirType t);                                    /* the scalar or pointer type of one element */
TirType tir_with_shape(TirType t, int rank, const int32_t *shape);
bool tir_type_eq(TirType a, TirType b); /* layouts included */
bool tir_type_eq_nolayout(TirType a, TirType b);
bool tir_type_is_tile(TirType t);
bool tir_type_is_smem(TirType t);
TirType tir_smem_type(TirScalar e, int stages, int rank, const int32_t *shape); /* stage shape */
TirType tir_smem_stage_type(TirType buf); /* the tile one stage holds (no layout) */
int64_t tir_type_numel(TirType t);        /* 1 for scalars */
/* snprintf-like: "i32", "ptr<f32>", "tile<128x64xf16>", "tile<64xptr<f16>>", "desc<64x64xf16>";
 * with m non-NULL and a layout set: "tile<1024xf32, #blocked<...>>". */
int tir_type_print(char *buf, size_t n, const struct TirModule *m, TirType t);

/* ---- values, ops, blocks --------------------------------------------------------- */
typedef struct TirOp TirOp;
typedef struct TirBlock TirBlock;
typedef struct TirFunc TirFunc;

typedef struct TirValue {
    TirType ty;
    TirOp *def;       /* defining op; NULL for a block argument */
    TirBlock *block;  /* for a block argument: its block */
    int32_t index;    /* result number, or argument number */
    int32_t id;       /* unique in its function: printer names, interpreter slots */
    const char *name; /* source name hint or NULL; printed as %name.id */
} TirValue;

typedef enum {
#define OP(id, text, nopnd, nres, traits) TIR_OP_##id,
#include "ops.def"
#undef OP
    TIR_NOPS
} TirOpcode;

enum {
    TIR_T_PURE = 1 << 0,        /* no side effect: may be CSE'd, hoisted, removed when unused */
    TIR_T_ELEMENTWISE = 1 << 1, /* result element i depends on operand elements i only */
    TIR_T_COMMUTATIVE = 1 << 2,
    TIR_T_SIDE_EFFECT = 1 << 3, /* writes memory, prints, or exits */
    TIR_T_READS = 1 << 4,       /* reads memory: not CSE'd across writes */
    TIR_T_TERMINATOR = 1 << 5,
    TIR_T_REGIONS = 1 << 6,   /* owns regions */
    TIR_T_REDUCTION = 1 << 7, /* removes attr axis i[0] */
    TIR_T_MATH = 1 << 8,      /* float-only math function */
};

typedef struct TirOpInfo {
    const char *name;
    int nopnd, nres; /* -1: varies */
    unsigned traits;
} TirOpInfo;
extern const TirOpInfo tir_op_info[TIR_NOPS];
int tir_opcode_from_name(const char *s, size_t n); /* -1 when unknown */
/* a math op in fast mode (attr i[0] = 1 on exp, exp2, tanh, sigmoid, erf: docs/language.md) */
bool tir_op_fast(const TirOp *op);

typedef enum { TIR_CMP_EQ, TIR_CMP_NE, TIR_CMP_LT, TIR_CMP_LE, TIR_CMP_GT, TIR_CMP_GE } TirCmp;
extern const char *const tir_cmp_names[6]; /* "eq" "ne" "lt" "le" "gt" "ge" */
/* Atomics' memory order (attr i[0]) and scope (attr i[1]); 0 is the default, as in
 * Triton: acq_rel at gpu scope (docs/language.md, "Memory model"). */
typedef enum { TIR_SEM_ACQ_REL, TIR_SEM_RELAXED, TIR_SEM_ACQUIRE, TIR_SEM_RELEASE, TIR_NSEMS } TirSem;
typedef enum { TIR_SCOPE_GPU, TIR_SCOPE_CTA, TIR_SCOPE_SYS, TIR_NSCOPES } TirScope;
extern const char *const tir_sem_names[TIR_NSEMS];     /* "acq_rel" "relaxed" "acquire" "release" */
extern const char *const tir_scope_names[TIR_NSCOPES]; /* "gpu" "cta" "sys" */

typedef struct TirAttr {
    int64_t i[TIR_MAXRANK]; /* integer attributes, meaning per op (ops.def) */
    int64_t ival;           /* integer / bool constant */
    double fval;            /* float constant (inf and nan allowed) */
    const char *s;          /* string attribute or NULL */
    /* Shared-memory scratch of an op that exchanges data between warps (reductions,
     * scans, layout conversions, trans/reshape): byte offset and size, set by the
     * smem_alloc pass; smem_bytes 0: none.  Printed as `smem=[OFF, BYTES]`. */
    int32_t smem_off, smem_bytes;
    /* cmp: along dimension d the result is equal over aligned runs of constancy[d]
     * elements (a power of two; 0 or 1: nothing known).  Recorded by the layout pass
     * from analysis_axisinfo so that the backend can share one predicate per run
     * without running the analysis itself.  Printed as `const=[1, 8]`. */
    int32_t constancy[TIR_MAXRANK];
} TirAttr;

struct TirOp {
    uint16_t code; /* TirOpcode */
    int32_t nopnd, nres, nregion;
    TirValue **opnd;
    TirValue **res;
    TirBlock **region; /* each region is one block */
    TirAttr attr;
    uint32_t loc; /* byte offset in the source file, or TIR_NOLOC */
    TirOp *prev, *next;
    TirBlock *parent;
};
#define TIR_NOLOC 0xffffffffu

struct TirBlock {
    int32_t nargs;
    TirValue **args;
    TirOp *first, *last;
    TirOp *parent; /* owning op; NULL for a function body */
    TirFunc *func;
};

/* ---- functions and modules ------------------------------------------------------- */
typedef enum { TIR_FUNC_KERNEL, TIR_FUNC_DEVICE } TirFuncKind;

/* One (name, value) pair: a specialization constant of a kernel variant, or a hint
 * about a runtime argument (divisibility, equal-to-one). */
typedef struct TirConstBinding {
    const char *name;
    int64_t ival;
    double fval;
    bool is_float;
} TirConstBinding;

typedef struct TirParamInfo {
    const char *name;
    int32_t divisibility; /* runtime promise: value (or address) divisible by this; 0/1 none */
    bool equals_one;      /* runtime specialization: integer argument is 1 */
} TirParamInfo;

struct TirFunc {
    TirFuncKind kind;
    const char *name;     /* kernel variant: "softmax" ; device fn instance: "silu.f32x1024" */
    TirBlock *body;       /* arguments = the runtime parameters */
    TirParamInfo *params; /* nparams = body->nargs */
    TirType *ret;         /* device functions: result types */
    int32_t nret;
    int32_t warps, stages; /* launch shape of this variant (kernels) */
    int32_t nconsts;       /* the constants that made this variant, for naming and lookups */
    TirConstBinding *consts;
    int32_t next_id; /* next free value id */
    TirFunc *next;   /* in the module's list */
    TirFunc *prev;
    uint32_t loc; /* where the source defines it (kernel, device function), or TIR_NOLOC */
    struct TirModule *module;
};

/* ---- layouts: how a tile is spread over threads (set by the layout pass) ------------- */
typedef enum {
    TIR_LAYOUT_NONE,        /* index 0 of every module's table: no layout yet */
    TIR_LAYOUT_BLOCKED,     /* size_per_thread x threads_per_warp x warps_per_cta, `order` fastest first */
    TIR_LAYOUT_SLICE,       /* the `parent` layout with dimension `dim` removed (reductions) */
    TIR_LAYOUT_MMA,         /* accumulator of mma.sync (version 2) or wgmma (version 3) */
    TIR_LAYOUT_DOT_OPERAND, /* operand `op_idx` (0: A, 1: B) of the `parent` MMA layout, k_width */
    TIR_LAYOUT_SHARED,      /* shared memory: vec, per_phase, max_phase swizzle, `order` */
} TirLayoutKind;

typedef struct TirLayout {
    uint8_t kind; /* TirLayoutKind */
    uint8_t rank;
    int32_t size_per_thread[TIR_MAXRANK];
    int32_t threads_per_warp[TIR_MAXRANK];
    int32_t warps_per_cta[TIR_MAXRANK];
    int32_t order[TIR_MAXRANK];        /* dimensions, fastest-varying first */
    int32_t parent;                    /* SLICE, DOT_OPERAND: layout index of the parent */
    int32_t dim;                       /* SLICE: removed dimension */
    int32_t version;                   /* MMA: 2 mma.sync, 3 wgmma */
    int32_t instr[3];                  /* MMA: instruction shape m, n, k */
    int32_t ngroup;                    /* MMA v2: 0, or a thread's ngroup consecutive N tiles hold adjacent columns */
    int32_t op_idx, k_width;           /* DOT_OPERAND */
    int32_t vec, per_phase, max_phase; /* SHARED swizzle */
    int32_t atom;                      /* SHARED: 0, or the width of the column blocks a TMA box stores apart */
} TirLayout;
/* Constructors, queries and the linear maps of layouts: ir/layout.h.  Only ir/layout.c,
 * the text form and interning read these fields. */

typedef struct TirModule {
    TirArena *arena;
    TirFunc *first, *last;
    const char *source_name; /* for locations; may be NULL */
    TirLayout *layouts;      /* interned; [0] is TIR_LAYOUT_NONE */
    int32_t nlayouts, caplayouts;
    struct TirLinCache *lincache; /* ir/layout.c: linear maps by (layout, shape) */
    /* Functions by name (builder.c), so that finding a callee costs the same with 100,000
     * functions as with one: open addressing, removed ones left as tombstones. */
    TirFunc **fn_index;
    uint32_t fn_index_cap, fn_index_used;
} TirModule;

/* Returns the index of an equal layout in m's table, adding it when new. */
int32_t tir_layout_intern(TirModule *m, const TirLayout *l);
/* Text form used inside types: "#blocked<spt=[4], tpw=[32], wpc=[4], order=[0]>" etc. */
int tir_layout_print(char *buf, size_t n, const TirModule *m, int32_t layout);

TirModule *tir_module_new(TirArena *a);
TirFunc *tir_func_new(TirModule *m, TirFuncKind kind, const char *name, int nparams, const TirType *ptypes,
                      const char *const *pnames);
TirFunc *tir_module_find(TirModule *m, const char *name);
void tir_module_remove(TirModule *m, TirFunc *f);

/* ---- building ------------------------------------------------------------------ */
/* A builder inserts new ops before `before` in `block` (at the end when before is NULL). */
typedef struct TirBuilder {
    TirFunc *func;
    TirBlock *block;
    TirOp *before;
    uint32_t loc; /* stamped on every new op */
} TirBuilder;

void tir_builder_at_end(TirBuilder *b, TirBlock *blk);
void tir_builder_before(TirBuilder *b, TirOp *op);

/* The general constructor: an op with the given operands and result types and
 * nregion empty regions (each a fresh block with no arguments). */
TirOp *tir_op_new(TirBuilder *b, TirOpcode code, int nopnd, TirValue *const *opnd, int nres, const TirType *rtypes,
                  int nregion);
TirValue *tir_block_add_arg(TirBlock *blk, TirType t);
TirValue *tir_value_new(TirFunc *f, TirType t); /* fresh numbered value (rarely needed) */

/* Helpers that build one common op and return its (first) result. */
TirValue *tir_const_int(TirBuilder *b, TirType t, int64_t v); /* t scalar or tile (splat) */
TirValue *tir_const_float(TirBuilder *b, TirType t, double v);
TirValue *tir_unary(TirBuilder *b, TirOpcode code, TirValue *x);               /* result type = x's */
TirValue *tir_binary(TirBuilder *b, TirOpcode code, TirValue *x, TirValue *y); /* = x's type */
TirValue *tir_cmp(TirBuilder *b, TirCmp pred, TirValue *x, TirValue *y);       /* i1, x's shape */
TirValue *tir_cast(TirBuilder *b, TirValue *x, TirType to);
TirValue *tir_op1(TirBuilder *b, TirOpcode code, TirType rtype, int nopnd, TirValue *const *opnd);

/* Editing. */
void tir_op_insert_before(TirOp *pos, TirOp *op); /* op must be detached */
void tir_op_insert_at_end(TirBlock *blk, TirOp *op);
void tir_op_detach(TirOp *op);
void tir_op_erase(TirOp *op); /* detach; results must be unused */
void tir_replace_all_uses(TirFunc *f, TirValue *from, TirValue *to);
int tir_count_uses(TirFunc *f, TirValue *v);
TirOp *tir_op_clone(TirBuilder *b, TirOp *op, TirValue **map_from, TirValue **map_to, int nmap);
void tir_func_renumber(TirFunc *f); /* ids 0.. in print order */

/* Walks every op of a block and its regions, pre-order. Return false from fn to stop. */
typedef bool (*TirWalkFn)(TirOp *op, void *ud);
bool tir_walk_block(TirBlock *blk, TirWalkFn fn, void *ud);
bool tir_walk_func(TirFunc *f, TirWalkFn fn, void *ud);
/* Whether an op with opcode `code` sits in op's regions, at any depth. */
bool tir_op_holds(TirOp *op, int code);

/* ---- text form ----------------------------------------------------------------- */
void tir_print_module(FILE *out, const TirModule *m);
void tir_print_func(FILE *out, const TirFunc *f);
char *tir_print_module_to_string(const TirModule *m); /* malloc'd */
/* A string literal as the text form (and the front end's AST dump) writes it: quoted,
 * with \" \\ \n \t \r and \xNN escapes. */
void tir_print_string(FILE *out, const char *s);

/* Errors of the IR parser and verifier go to a sink: "LINE:COL: error: MSG" or
 * "FUNC: error: MSG" for the verifier.  Each call gets one whole message. */
typedef void (*TirDiagFn)(void *ud, const char *msg);

/* Parses the text form; returns NULL (after reporting every error it found) on failure. */
TirModule *tir_parse_module(TirArena *a, const char *name, const char *text, size_t len, TirDiagFn diag, void *ud);

/* Checks types, operand counts, dominance, terminators, region shapes. Returns the
 * number of errors (0: valid). */
int tir_verify_module(const TirModule *m, TirDiagFn diag, void *ud);
int tir_verify_func(const TirFunc *f, TirDiagFn diag, void *ud);

/* ---- numbers stored as the GPU stores them ----------------------------------------- */
/* Round-to-nearest-even conversions between float and the narrow formats.
 * Narrow values are kept as their bit patterns. */
uint16_t tir_f32_to_f16(float x);
float tir_f16_to_f32(uint16_t h);
uint16_t tir_f32_to_bf16(float x);
float tir_bf16_to_f32(uint16_t h);
uint8_t tir_f32_to_f8e4m3(float x); /* saturates to the finite max (448), NaN stays NaN */
float tir_f8e4m3_to_f32(uint8_t v);
uint8_t tir_f32_to_f8e5m2(float x); /* saturates to the finite max (57344), as cvt.rn.satfinite */
float tir_f8e5m2_to_f32(uint8_t v);
/* float -> integer s as the IR's cast: truncate toward zero, saturate at s's range, NaN
 * gives 0 (the interpreter, the folder and the front end's constants share it). */
int64_t tir_float_to_int(TirScalar s, double x);
/* Rounds a double to what `s` can hold (floats: RNE to the format; ints: wrap). */
double tir_round_to(TirScalar s, double x);

/* ---- constant folding (fold.c) -------------------------------------------------------- */
/* One element's value: integers canonical for their type (signed: sign-extended, unsigned
 * and i1: zero-extended), floats rounded to their type. */
typedef struct TirKonst {
    bool is_float;
    int64_t i;
    double f;
} TirKonst;
/* Integer bits u wrapped to s's width and extended by its signedness. */
int64_t tir_wrap_int(TirScalar s, uint64_t u);
/* k (an int or a float) made a canonical value of s: wrapped or rounded, not converted
 * (an int for a float type is read as its value, exactly then rounded once). */
TirKonst tir_konst_norm(TirScalar s, TirKonst k);
/* Folds one element of the elementwise op `code` (`pred`: cmp's predicate) on canonical
 * operands of type s into a canonical value of the result type rs, as the interpreter
 * computes it at run time (docs/ir.md, "Semantics"): integer wrap-around, division by
 * zero giving all bits set (rem: the dividend), f32 and narrower rounded after every op,
 * maximum/minimum ignoring a NaN.  False for ops it does not fold: the approximate math
 * functions, bitwise ops on floats, an int -> bf16 cast beyond 2^53, non-elementwise ops. */
bool tir_fold_elem(TirOpcode code, int64_t pred, TirScalar s, TirScalar rs, const TirKonst *in, TirKonst *out);

#endif
