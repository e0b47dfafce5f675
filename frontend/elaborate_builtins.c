/* The builtins of the language: one table entry each (name, positional arity, named
 * arguments, handler, opcode), checked for arity and named arguments before the
 * handler runs; each handler checks its own types and shapes and emits IR. */
#include "sema_internal.h"

#include <stdio.h>
#include <string.h>

#define MAX_NAMED 4

typedef struct BArgs {
    const AstNode *call;
    const AstNode *pos[6];
    int npos;
    const AstNode *named[MAX_NAMED]; /* by position in the builtin's named list */
    TirOpcode op;
    const char *name;
} BArgs;

typedef SVal (*BuiltinFn)(SemaCtx *c, BArgs *a);

#define DECL(fn) static SVal fn(SemaCtx *c, BArgs *a);
// clang-format off
DECL(bi_grid)
DECL(bi_arange)
DECL(bi_zeros)
DECL(bi_full)
DECL(bi_load)
DECL(bi_store)
DECL(bi_atomic)
DECL(bi_atomic_cas)
DECL(bi_dot)
DECL(bi_reduce)
DECL(bi_cumsum)
DECL(bi_where)
DECL(bi_minmax)
DECL(bi_abs)
DECL(bi_math)
DECL(bi_fma)
DECL(bi_trans)
DECL(bi_reshape)
DECL(bi_broadcast_to)
DECL(bi_cdiv)
DECL(bi_next_pow2)
DECL(bi_hint)
DECL(bi_tensor_desc)
DECL(bi_tload)
DECL(bi_tstore)
DECL(bi_print)
DECL(bi_assert)
// clang-format on
#undef DECL

/* X(name, min positional, max positional, "named,args", handler, opcode) */
#define TF_BUILTINS(X)                                                                \
    X("program_id", 1, 1, "", bi_grid, TIR_OP_PROGRAM_ID)                             \
    X("num_programs", 1, 1, "", bi_grid, TIR_OP_NUM_PROGRAMS)                         \
    X("arange", 2, 2, "", bi_arange, TIR_OP_ARANGE)                                   \
    X("zeros", 2, 2, "", bi_zeros, TIR_OP_CONSTANT)                                   \
    X("full", 3, 3, "", bi_full, TIR_OP_CONSTANT)                                     \
    X("load", 1, 1, "mask,other,cache", bi_load, TIR_OP_LOAD)                         \
    X("store", 2, 2, "mask", bi_store, TIR_OP_STORE)                                  \
    X("atomic_add", 2, 2, "mask,sem,scope", bi_atomic, TIR_OP_ATOMIC_ADD)             \
    X("atomic_max", 2, 2, "mask,sem,scope", bi_atomic, TIR_OP_ATOMIC_MAX)             \
    X("atomic_min", 2, 2, "mask,sem,scope", bi_atomic, TIR_OP_ATOMIC_MIN)             \
    X("atomic_xchg", 2, 2, "mask,sem,scope", bi_atomic, TIR_OP_ATOMIC_XCHG)           \
    X("atomic_cas", 3, 3, "sem,scope", bi_atomic_cas, TIR_OP_ATOMIC_CAS)              \
    X("dot", 2, 3, "acc,precision", bi_dot, TIR_OP_DOT)                               \
    X("sum", 1, 2, "axis", bi_reduce, TIR_OP_REDUCE_SUM)                              \
    X("max", 1, 2, "axis", bi_reduce, TIR_OP_REDUCE_MAX)                              \
    X("min", 1, 2, "axis", bi_reduce, TIR_OP_REDUCE_MIN)                              \
    X("argmax", 1, 2, "axis", bi_reduce, TIR_OP_ARGMAX)                               \
    X("argmin", 1, 2, "axis", bi_reduce, TIR_OP_ARGMIN)                               \
    X("cumsum", 1, 2, "axis", bi_cumsum, TIR_OP_CUMSUM)                               \
    X("where", 3, 3, "", bi_where, TIR_OP_SELECT)                                     \
    X("maximum", 2, 2, "", bi_minmax, TIR_OP_MAXIMUM)                                 \
    X("minimum", 2, 2, "", bi_minmax, TIR_OP_MINIMUM)                                 \
    X("abs", 1, 1, "", bi_abs, TIR_OP_ABS)                                            \
    X("exp", 1, 1, "fast", bi_math, TIR_OP_EXP)                                       \
    X("exp2", 1, 1, "fast", bi_math, TIR_OP_EXP2)                                     \
    X("log", 1, 1, "", bi_math, TIR_OP_LOG)                                           \
    X("log2", 1, 1, "", bi_math, TIR_OP_LOG2)                                         \
    X("sqrt", 1, 1, "", bi_math, TIR_OP_SQRT)                                         \
    X("rsqrt", 1, 1, "", bi_math, TIR_OP_RSQRT)                                       \
    X("sin", 1, 1, "", bi_math, TIR_OP_SIN)                                           \
    X("cos", 1, 1, "", bi_math, TIR_OP_COS)                                           \
    X("tanh", 1, 1, "fast", bi_math, TIR_OP_TANH)                                     \
    X("sigmoid", 1, 1, "fast", bi_math, TIR_OP_SIGMOID)                               \
    X("erf", 1, 1, "fast", bi_math, TIR_OP_ERF)                                       \
    X("floor", 1, 1, "", bi_math, TIR_OP_FLOOR)                                       \
    X("ceil", 1, 1, "", bi_math, TIR_OP_CEIL)                                         \
    X("fma", 3, 3, "", bi_fma, TIR_OP_FMA)                                            \
    X("trans", 1, 1, "", bi_trans, TIR_OP_TRANS)                                      \
    X("reshape", 2, 2, "", bi_reshape, TIR_OP_RESHAPE)                                \
    X("broadcast_to", 2, 2, "", bi_broadcast_to, TIR_OP_BROADCAST)                    \
    X("cdiv", 2, 2, "", bi_cdiv, TIR_OP_DIV)                                          \
    X("next_pow2", 1, 1, "", bi_next_pow2, TIR_OP_NEXT_POW2)                          \
    X("multiple_of", 2, 2, "", bi_hint, TIR_OP_HINT_MULTIPLE_OF)                      \
    X("max_contiguous", 2, 2, "", bi_hint, TIR_OP_HINT_MAX_CONTIGUOUS)                \
    X("tensor_desc", 1, 1, "shape,strides,block", bi_tensor_desc, TIR_OP_TENSOR_DESC) \
    X("tload", 2, 2, "", bi_tload, TIR_OP_TLOAD)                                      \
    X("tstore", 3, 3, "", bi_tstore, TIR_OP_TSTORE)                                   \
    X("print", 1, 6, "", bi_print, TIR_OP_PRINT)                                      \
    X("assert", 1, 2, "", bi_assert, TIR_OP_ASSERT)

typedef struct Builtin {
    const char *name;
    int minpos, maxpos;
    const char *named;
    BuiltinFn fn;
    TirOpcode op;
} Builtin;

static const Builtin builtins[] = {
#define X(name, mn, mx, named, fn, op) {name, mn, mx, named, fn, op},
    TF_BUILTINS(X)
#undef X
};

const char *sema_builtin_name(int i) {
    return i >= 0 && i < (int)(sizeof builtins / sizeof builtins[0]) ? builtins[i].name : NULL;
}

bool sema_is_builtin(const char *name) {
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(builtins[i].name, name))
            return true;
    return false;
}

/* Index of `name` in a "a,b,c" list, or -1. */
static int named_index(const char *list, const char *name) {
    size_t n = strlen(name);
    int idx = 0;
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n))
            return idx;
        idx++;
        if (!e)
            break;
        p = e + 1;
    }
    return -1;
}

SVal sema_builtin(SemaCtx *c, const AstNode *call, bool *found) {
    const Builtin *bi = NULL;
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(builtins[i].name, call->name))
            bi = &builtins[i];
    *found = bi != NULL;
    /* a device function may not shadow a builtin (tf_check), so builtins win */
    if (!bi)
        return sv_bad();
    BArgs a = {.call = call, .op = bi->op, .name = bi->name};
    if (call->nlist < bi->minpos || call->nlist > bi->maxpos) {
        if (bi->minpos == bi->maxpos)
            sema_err(c, call, "'%s' takes %d positional argument%s, got %d", bi->name, bi->minpos,
                     bi->minpos == 1 ? "" : "s", (int)call->nlist);
        else
            sema_err(c, call, "'%s' takes %d to %d positional arguments, got %d", bi->name, bi->minpos, bi->maxpos,
                     (int)call->nlist);
        return sv_bad();
    }
    a.npos = call->nlist;
    for (int i = 0; i < call->nlist; i++)
        a.pos[i] = call->list[i];
    bool ok = true;
    for (int i = 0; i < call->nnamed; i++) {
        const AstNode *na = call->named[i];
        int idx = named_index(bi->named, na->name);
        if (idx < 0) {
            sema_err(c, na, "'%s' has no named argument '%s'", bi->name, na->name);
            ok = false;
        } else if (a.named[idx]) {
            sema_err(c, na, "named argument '%s' given twice", na->name);
            ok = false;
        } else
            a.named[idx] = na->a;
    }
    if (!ok)
        return sv_bad();
    c->b.loc = call->loc;
    SVal r = bi->fn(c, &a);
    return r;
}

/* ---- argument helpers ------------------------------------------------------------- */
static SVal arg_value(SemaCtx *c, const AstNode *n) {
    SVal v = sema_expr(c, n);
    if (v.is_void) {
        sema_err(c, n, "a call without a result used as a value");
        return sv_bad();
    }
    return v;
}

static bool arg_const_int(SemaCtx *c, const AstNode *n, const char *what, int64_t *out) {
    SVal v = arg_value(c, n);
    if (v.bad)
        return false;
    if (!v.known || v.c.is_float || v.ty.rank) {
        sema_err(c, n, "%s must be a compile-time integer constant", what);
        return false;
    }
    *out = v.c.i;
    return true;
}

static bool arg_shape(SemaCtx *c, const AstNode *n, int *rank, int32_t *shape) {
    if (n->kind != AST_LIST) {
        sema_err(c, n, "expected a shape like [64, 64]");
        return false;
    }
    if (n->nlist < 1 || n->nlist > TF_MAX_TILE_RANK) {
        sema_err(c, n, "a shape has 1 to %d dimensions, got %d", TF_MAX_TILE_RANK, (int)n->nlist);
        return false;
    }
    for (int i = 0; i < n->nlist; i++) {
        int64_t d;
        if (!arg_const_int(c, n->list[i], "a shape dimension", &d))
            return false;
        if (d <= 0 || d > (1 << 20) || (d & (d - 1))) {
            sema_err(c, n->list[i], "tile dimension %lld is not a power of two", (long long)d);
            return false;
        }
        shape[i] = (int32_t)d;
    }
    *rank = n->nlist;
    return sema_check_shape(c, n, *rank, shape);
}

static int arg_type(SemaCtx *c, const AstNode *n) {
    int s = n->kind == AST_NAME ? tir_scalar_from_name(n->name, strlen(n->name)) : -1;
    if (s < 0) {
        if (n->kind == AST_NAME)
            sema_err(c, n, "unknown type '%s'", n->name);
        else
            sema_err(c, n, "expected a type name such as f32");
    }
    return s;
}

static bool is_num(SVal v) {
    return !v.ty.ptr && v.ty.kind == TIR_K_VALUE && !v.is_void;
}
static bool is_bool(SVal v) {
    return is_num(v) && !v.untyped && v.ty.elem == TIR_I1;
}
static bool is_intv(SVal v) {
    return is_num(v) && (v.untyped ? !v.c.is_float : tir_scalar_is_int((TirScalar)v.ty.elem));
}

static TirType tile_of(TirScalar s, int rank, const int32_t *shape) {
    return rank ? tir_tile_type(tir_scalar_type(s), rank, shape) : tir_scalar_type(s);
}

/* Broadcasts up to 3 values together. */
static bool broadcast_all(SemaCtx *c, SVal **vs, int n, const AstNode *at) {
    int rank = 0;
    int32_t shape[TIR_MAXRANK];
    TirType acc = tir_scalar_type(TIR_I32);
    for (int i = 0; i < n; i++) {
        if (!vs[i])
            continue;
        if (!sema_broadcast_shape(acc, vs[i]->ty, &rank, shape)) {
            sema_err(c, at, "cannot broadcast %s and %s", sema_type_str(c, acc), sema_type_str(c, vs[i]->ty));
            return false;
        }
        acc = tile_of(TIR_I32, rank, shape);
        acc.rank = (uint8_t)rank;
    }
    for (int i = 0; i < n; i++)
        if (vs[i] && !sema_broadcast_to(c, vs[i], rank, shape, at))
            return false;
    return true;
}

/* The operands of the call's op: the values of `vs` (NULL: absent) broadcast to one shape
 * at the call, the present ones gathered in order into `ops`.  Returns how many, or -1
 * after an error. */
static int call_operands(SemaCtx *c, BArgs *a, SVal *vs[3], TirValue *ops[3]) {
    c->b.loc = a->call->loc;
    if (!broadcast_all(c, vs, 3, a->call))
        return -1;
    int n = 0;
    for (int i = 0; i < 3; i++)
        if (vs[i])
            ops[n++] = vs[i]->v;
    return n;
}

static SVal untyped_default(SemaCtx *c, SVal v, const AstNode *n) {
    if (v.untyped)
        sema_type_literal(c, &v, v.c.is_float ? TIR_F32 : TIR_I32, n);
    return v;
}

/* ---- make -------------------------------------------------------------------------- */
static SVal bi_grid(SemaCtx *c, BArgs *a) {
    int64_t axis;
    if (!arg_const_int(c, a->pos[0], "the axis", &axis))
        return sv_bad();
    if (axis < 0 || axis > 2) {
        sema_err(c, a->pos[0], "axis %lld is out of range 0..2", (long long)axis);
        return sv_bad();
    }
    c->b.loc = a->call->loc;
    TirValue *v = tir_op1(&c->b, a->op, tir_scalar_type(TIR_I32), 0, NULL);
    v->def->attr.i[0] = axis;
    return sv_value(v);
}

static SVal bi_arange(SemaCtx *c, BArgs *a) {
    int64_t s, e;
    if (!arg_const_int(c, a->pos[0], "the start of arange", &s) ||
        !arg_const_int(c, a->pos[1], "the end of arange", &e))
        return sv_bad();
    /* its elements are i32: bounds outside that range (whose difference could overflow
     * even i64) are an error, not a wrapped tile */
    if (s < INT32_MIN || s > INT32_MAX || e < INT32_MIN || e > (int64_t)INT32_MAX + 1) {
        sema_err(c, a->call, "arange(%lld, %lld) is outside the range of i32", (long long)s, (long long)e);
        return sv_bad();
    }
    int64_t n = e - s;
    if (n <= 0 || (n & (n - 1))) {
        sema_err(c, a->call, "arange(%lld, %lld) has %lld elements, not a power of two", (long long)s, (long long)e,
                 (long long)n);
        return sv_bad();
    }
    if (n > (1 << 20)) {
        sema_err(c, a->call, "tile of more than %d elements (2^20)", 1 << 20);
        return sv_bad();
    }
    int32_t sh = (int32_t)n;
    c->b.loc = a->call->loc;
    TirValue *v = tir_op1(&c->b, TIR_OP_ARANGE, tile_of(TIR_I32, 1, &sh), 0, NULL);
    v->def->attr.i[0] = s;
    v->def->attr.i[1] = e;
    return sv_value(v);
}

static SVal make_full(SemaCtx *c, BArgs *a, const AstNode *shape_n, const AstNode *type_n, SVal val) {
    int rank;
    int32_t shape[TIR_MAXRANK];
    if (!arg_shape(c, shape_n, &rank, shape))
        return sv_bad();
    int t = arg_type(c, type_n);
    if (t < 0 || val.bad)
        return sv_bad();
    if (!is_num(val) || val.ty.rank) {
        sema_err(c, a->call, "the fill value must be a scalar number");
        return sv_bad();
    }
    c->b.loc = a->call->loc;
    if (val.untyped && val.c.is_float && !tir_scalar_is_float((TirScalar)t)) {
        sema_err(c, a->call, "float value %g cannot fill a tile of %s", val.c.f, tir_scalar_name(t));
        return sv_bad();
    }
    /* a literal fill value must fit the type (`full([4], 300, i8)` is an error); a typed
     * value converts as `as` does */
    if (val.untyped ? !sema_type_literal(c, &val, (TirScalar)t, a->call) : !sema_cast(c, &val, (TirScalar)t))
        return sv_bad();
    if (!sema_broadcast_to(c, &val, rank, shape, a->call))
        return sv_bad();
    return val;
}

static SVal bi_zeros(SemaCtx *c, BArgs *a) {
    return make_full(c, a, a->pos[0], a->pos[1], sv_known_int(0, true, TIR_I32));
}

static SVal bi_full(SemaCtx *c, BArgs *a) {
    return make_full(c, a, a->pos[0], a->pos[2], arg_value(c, a->pos[1]));
}

/* ---- memory ---------------------------------------------------------------------- */
static bool want_ptr(SemaCtx *c, SVal p, const AstNode *n) {
    if (p.bad)
        return false;
    if (!p.ty.ptr || p.ty.kind != TIR_K_VALUE) {
        sema_err(c, n, "'%s' needs a pointer, got %s", "this builtin", p.is_void ? "no value" : sema_type_str(c, p.ty));
        return false;
    }
    return true;
}

static bool want_mask(SemaCtx *c, SVal *m, const AstNode *n) {
    if (m->bad)
        return false;
    if (!is_bool(*m)) {
        sema_err(c, n, "a mask must be bool, got %s", sema_type_str(c, m->ty));
        return false;
    }
    return true;
}

/* The value stored through / compared with pointee type e. */
static bool want_elem(SemaCtx *c, SVal *v, TirScalar e, const AstNode *n, const char *what) {
    if (v->bad)
        return false;
    if (!is_num(*v)) {
        sema_err(c, n, "%s must be a number, got %s", what, v->is_void ? "no value" : sema_type_str(c, v->ty));
        return false;
    }
    if (v->untyped)
        return sema_type_literal(c, v, e, n);
    if (v->ty.elem != e) {
        sema_err(c, n, "%s of type %s does not match the pointee type %s; use `as`", what, sema_type_str(c, v->ty),
                 tir_scalar_name(e));
        return false;
    }
    return true;
}

static const char *cache_mod(SemaCtx *c, const AstNode *n) {
    static const char *const ok[] = {"", ".ca", ".cg", ".cs", ".lu", ".cv"};
    if (n->kind == AST_STRING) {
        const char *s = n->name;
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
            if (!strcmp(s, ok[i]) || (i > 0 && !strcmp(s, ok[i] + 1)))
                return ok[i];
    }
    sema_err(c, n, "cache= must be one of \".ca\", \".cg\", \".cs\", \".lu\", \".cv\"");
    return NULL;
}

static SVal bi_load(SemaCtx *c, BArgs *a) {
    SVal p = arg_value(c, a->pos[0]);
    if (!want_ptr(c, p, a->pos[0]))
        return sv_bad();
    TirScalar e = (TirScalar)p.ty.elem;
    SVal m, o;
    SVal *vs[3] = {&p, NULL, NULL};
    if (a->named[0]) {
        m = arg_value(c, a->named[0]);
        if (!want_mask(c, &m, a->named[0]))
            return sv_bad();
        vs[1] = &m;
    }
    if (a->named[1]) {
        if (!a->named[0]) {
            sema_err(c, a->named[1], "other= needs mask=");
            return sv_bad();
        }
        o = arg_value(c, a->named[1]);
        if (!want_elem(c, &o, e, a->named[1], "other"))
            return sv_bad();
        vs[2] = &o;
    }
    const char *cache = "";
    if (a->named[2] && !(cache = cache_mod(c, a->named[2])))
        return sv_bad();
    TirValue *ops[3];
    int n = call_operands(c, a, vs, ops);
    if (n < 0)
        return sv_bad();
    TirType rt = tile_of(e, p.ty.rank, p.ty.shape);
    TirValue *v = tir_op1(&c->b, TIR_OP_LOAD, rt, n, ops);
    v->def->attr.s = cache;
    return sv_value(v);
}

/* sem= and scope= of an atomic, as Triton spells them: strings naming a TirSem and a
 * TirScope; absent, the defaults (acq_rel at gpu scope, like Triton's). */
static bool atomic_order(SemaCtx *c, const AstNode *sem, const AstNode *scope, TirAttr *attr) {
    static const struct {
        const char *key;
        const char *const *names;
        int n;
        const char *expect;
    } forms[2] = {
        {"sem", tir_sem_names, TIR_NSEMS, "\"acq_rel\", \"acquire\", \"release\" or \"relaxed\""},
        {"scope", tir_scope_names, TIR_NSCOPES, "\"gpu\", \"cta\" or \"sys\""},
    };
    const AstNode *given[2] = {sem, scope};
    for (int f = 0; f < 2; f++) {
        if (!given[f])
            continue;
        int v = -1;
        for (int j = 0; given[f]->kind == AST_STRING && j < forms[f].n; j++)
            if (!strcmp(given[f]->name, forms[f].names[j]))
                v = j;
        if (v < 0) {
            sema_err(c, given[f], "%s= must be %s", forms[f].key, forms[f].expect);
            return false;
        }
        attr->i[f] = v;
    }
    return true;
}

/* The element types the atomics run on, on the interpreter and the GPU alike: integers
 * other than bool, and f16, bf16, f32, f64 (atomic_cas: integers only, since it compares
 * bits and the GPU's compare-and-swap has no float form). */
static bool atomic_elem_ok(SemaCtx *c, const BArgs *a, TirScalar e, bool cas) {
    bool fl = tir_scalar_is_float(e);
    if (e == TIR_I1 || e == TIR_F8E4M3 || e == TIR_F8E5M2 || (cas && fl)) {
        sema_err(c, a->call, "'%s' does not support %s elements; it takes %s", a->name, tir_scalar_name(e),
                 cas ? "integers (i8 to u64)" : "integers (i8 to u64), f16, bf16, f32 and f64");
        return false;
    }
    return true;
}

static SVal store_like(SemaCtx *c, BArgs *a, bool has_result) {
    SVal p = arg_value(c, a->pos[0]);
    SVal v = arg_value(c, a->pos[1]);
    if (!want_ptr(c, p, a->pos[0]))
        return sv_bad();
    TirScalar e = (TirScalar)p.ty.elem;
    if (has_result && !atomic_elem_ok(c, a, e, false))
        return sv_bad();
    if (!want_elem(c, &v, e, a->pos[1], "the value"))
        return sv_bad();
    SVal m;
    SVal *vs[3] = {&p, &v, NULL};
    if (a->named[0]) {
        m = arg_value(c, a->named[0]);
        if (!want_mask(c, &m, a->named[0]))
            return sv_bad();
        vs[2] = &m;
    }
    TirValue *ops[3];
    int n = call_operands(c, a, vs, ops);
    if (n < 0)
        return sv_bad();
    if (!has_result) {
        tir_op_new(&c->b, a->op, n, ops, 0, NULL, 0);
        return (SVal){.is_void = true};
    }
    TirAttr order = {0};
    if (!atomic_order(c, a->named[1], a->named[2], &order))
        return sv_bad();
    TirValue *r = tir_op1(&c->b, a->op, tile_of(e, p.ty.rank, p.ty.shape), n, ops);
    r->def->attr.i[0] = order.i[0];
    r->def->attr.i[1] = order.i[1];
    return sv_value(r);
}

static SVal bi_store(SemaCtx *c, BArgs *a) {
    return store_like(c, a, false);
}
static SVal bi_atomic(SemaCtx *c, BArgs *a) {
    return store_like(c, a, true);
}

static SVal bi_atomic_cas(SemaCtx *c, BArgs *a) {
    SVal p = arg_value(c, a->pos[0]);
    SVal cmp = arg_value(c, a->pos[1]);
    SVal v = arg_value(c, a->pos[2]);
    if (!want_ptr(c, p, a->pos[0]))
        return sv_bad();
    TirScalar e = (TirScalar)p.ty.elem;
    if (!atomic_elem_ok(c, a, e, true))
        return sv_bad();
    if (!want_elem(c, &cmp, e, a->pos[1], "the compared value") || !want_elem(c, &v, e, a->pos[2], "the value"))
        return sv_bad();
    SVal *vs[3] = {&p, &cmp, &v};
    TirValue *ops[3];
    if (call_operands(c, a, vs, ops) < 0)
        return sv_bad();
    TirAttr order = {0};
    if (!atomic_order(c, a->named[0], a->named[1], &order))
        return sv_bad();
    TirValue *r = tir_op1(&c->b, TIR_OP_ATOMIC_CAS, tile_of(e, p.ty.rank, p.ty.shape), 3, ops);
    r->def->attr.i[0] = order.i[0];
    r->def->attr.i[1] = order.i[1];
    return sv_value(r);
}

/* ---- matrix -------------------------------------------------------------------------- */
static SVal bi_dot(SemaCtx *c, BArgs *a) {
    SVal x = arg_value(c, a->pos[0]);
    SVal y = arg_value(c, a->pos[1]);
    if (x.bad || y.bad)
        return sv_bad();
    if (!is_num(x) || !is_num(y) || x.ty.rank != 2 || y.ty.rank != 2) {
        sema_err(c, a->call, "dot needs two 2-D tiles, got %s and %s", sema_type_str(c, x.ty), sema_type_str(c, y.ty));
        return sv_bad();
    }
    int32_t M = x.ty.shape[0], K = x.ty.shape[1], N = y.ty.shape[1];
    if (y.ty.shape[0] != K) {
        sema_err(c, a->call, "dot: inner dimensions differ: %s x %s", sema_type_str(c, x.ty), sema_type_str(c, y.ty));
        return sv_bad();
    }
    if (M < 16 || N < 16 || K < 16) {
        sema_err(c, a->call, "dot needs M, N and K of at least 16, got M=%d, N=%d, K=%d", (int)M, (int)N, (int)K);
        return sv_bad();
    }
    TirScalar e = (TirScalar)x.ty.elem;
    if (y.ty.elem != e) {
        sema_err(c, a->call, "dot operands have different types %s and %s", tir_scalar_name(e),
                 tir_scalar_name((TirScalar)y.ty.elem));
        return sv_bad();
    }
    TirScalar acc_t;
    switch (e) {
    case TIR_F16:
    case TIR_BF16:
    case TIR_F8E4M3:
    case TIR_F8E5M2:
    case TIR_F32: acc_t = TIR_F32; break;
    case TIR_I8: acc_t = TIR_I32; break;
    default:
        sema_err(c, a->call, "dot does not take %s operands (f16, bf16, f8, i8 or f32)", tir_scalar_name(e));
        return sv_bad();
    }
    int32_t mn[2] = {M, N};
    TirType at = tir_tile_type(tir_scalar_type(acc_t), 2, mn);
    const AstNode *acc_n = a->npos == 3 ? a->pos[2] : a->named[0];
    if (a->npos == 3 && a->named[0]) {
        sema_err(c, a->named[0], "acc given twice");
        return sv_bad();
    }
    int64_t tf32 = 0;
    if (a->named[1]) {
        const AstNode *p = a->named[1];
        if (p->kind != AST_STRING || (strcmp(p->name, "tf32") && strcmp(p->name, "ieee"))) {
            sema_err(c, p, "precision= must be \"tf32\" or \"ieee\"");
            return sv_bad();
        }
        tf32 = !strcmp(p->name, "tf32");
        if (tf32 && e != TIR_F32) {
            sema_err(c, p, "precision=\"tf32\" applies to f32 operands only");
            return sv_bad();
        }
    }
    c->b.loc = a->call->loc;
    TirValue *accv;
    if (acc_n) {
        SVal acc = arg_value(c, acc_n);
        if (acc.bad)
            return acc;
        if (!tir_type_eq_nolayout(acc.ty, at) || acc.untyped) {
            sema_err(c, acc_n, "the accumulator of dot must be %s, got %s", sema_type_str(c, at),
                     sema_type_str(c, acc.ty));
            return sv_bad();
        }
        accv = sema_mat(c, &acc);
        c->b.loc = a->call->loc;
    } else if (acc_t == TIR_F32)
        accv = tir_const_float(&c->b, at, 0.0);
    else
        accv = tir_const_int(&c->b, at, 0);
    TirValue *ops[3] = {x.v, y.v, accv};
    TirValue *r = tir_op1(&c->b, TIR_OP_DOT, at, 3, ops);
    r->def->attr.i[0] = tf32;
    return sv_value(r);
}

/* ---- reductions -------------------------------------------------------------------- */
static bool axis_arg(SemaCtx *c, BArgs *a, SVal x, int64_t *axis, bool *given) {
    const AstNode *n = a->npos == 2 ? a->pos[1] : a->named[0];
    if (a->npos == 2 && a->named[0]) {
        sema_err(c, a->named[0], "axis given twice");
        return false;
    }
    *given = n != NULL;
    if (!n)
        return true;
    if (!arg_const_int(c, n, "the axis", axis))
        return false;
    if (*axis < 0 || *axis >= x.ty.rank) {
        sema_err(c, n, "axis %lld is out of range for %s", (long long)*axis, sema_type_str(c, x.ty));
        return false;
    }
    return true;
}

static bool want_tile(SemaCtx *c, SVal x, const AstNode *n, const char *name) {
    if (x.bad)
        return false;
    if (!is_num(x) || x.ty.rank == 0) {
        sema_err(c, n, "'%s' needs a tile, got %s", name, x.is_void ? "no value" : sema_type_str(c, x.ty));
        return false;
    }
    return true;
}

/* Sums and scans of bool and of integers narrower than 32 bits accumulate in 32 bits, as
 * in Triton: `sum(mask)` counts (a bool sum was the count mod 2, an i8 sum wrapped at 128).
 * Signed and bool go to i32, unsigned to u32; the operand is widened first. */
static TirValue *widen_for_sum(SemaCtx *c, TirValue *v) {
    TirScalar e = (TirScalar)v->ty.elem;
    if (tir_scalar_is_float(e) || (e != TIR_I1 && tir_scalar_bits(e) >= 32))
        return v;
    TirType t = v->ty;
    t.elem = (uint8_t)(e == TIR_I1 || tir_scalar_is_signed(e) ? TIR_I32 : TIR_U32);
    return tir_cast(&c->b, v, t);
}

static SVal bi_reduce(SemaCtx *c, BArgs *a) {
    SVal x = arg_value(c, a->pos[0]);
    if (!want_tile(c, x, a->pos[0], a->name))
        return sv_bad();
    int64_t axis = 0;
    bool given;
    if (!axis_arg(c, a, x, &axis, &given))
        return sv_bad();
    c->b.loc = a->call->loc;
    TirValue *v = x.v;
    TirType t = x.ty;
    if (!given && t.rank > 1) { /* over all elements: flatten first */
        int32_t n = (int32_t)tir_type_numel(t);
        t = tir_tile_type(tir_elem_type(t), 1, &n);
        v = tir_op1(&c->b, TIR_OP_RESHAPE, t, 1, &v);
    }
    if (a->op == TIR_OP_REDUCE_SUM) {
        v = widen_for_sum(c, v);
        t = v->ty;
    }
    TirScalar e = a->op == TIR_OP_ARGMAX || a->op == TIR_OP_ARGMIN ? TIR_I32 : (TirScalar)t.elem;
    int32_t sh[TIR_MAXRANK];
    for (int i = 0, j = 0; i < t.rank; i++)
        if (i != axis)
            sh[j++] = t.shape[i];
    TirValue *r = tir_op1(&c->b, a->op, tile_of(e, t.rank - 1, sh), 1, &v);
    r->def->attr.i[0] = axis;
    return sv_value(r);
}

static SVal bi_cumsum(SemaCtx *c, BArgs *a) {
    SVal x = arg_value(c, a->pos[0]);
    if (!want_tile(c, x, a->pos[0], a->name))
        return sv_bad();
    int64_t axis = 0;
    bool given;
    if (!axis_arg(c, a, x, &axis, &given))
        return sv_bad();
    if (!given && x.ty.rank > 1) {
        sema_err(c, a->call, "cumsum of a %d-D tile needs an axis", (int)x.ty.rank);
        return sv_bad();
    }
    c->b.loc = a->call->loc;
    TirValue *v = widen_for_sum(c, x.v);
    TirValue *r = tir_op1(&c->b, TIR_OP_CUMSUM, v->ty, 1, &v);
    r->def->attr.i[0] = axis;
    return sv_value(r);
}

/* ---- elementwise -------------------------------------------------------------------- */
static SVal bi_where(SemaCtx *c, BArgs *a) {
    SVal cond = arg_value(c, a->pos[0]);
    SVal x = arg_value(c, a->pos[1]);
    SVal y = arg_value(c, a->pos[2]);
    if (cond.bad || x.bad || y.bad)
        return sv_bad();
    if (!is_bool(cond)) {
        sema_err(c, a->pos[0], "the condition of where must be bool, got %s", sema_type_str(c, cond.ty));
        return sv_bad();
    }
    if (!x.ty.ptr && !y.ty.ptr && !sema_unify(c, &x, &y, a->call))
        return sv_bad();
    if (x.ty.ptr != y.ty.ptr || (x.ty.ptr && x.ty.elem != y.ty.elem)) {
        sema_err(c, a->call, "where needs values of one type, got %s and %s", sema_type_str(c, x.ty),
                 sema_type_str(c, y.ty));
        return sv_bad();
    }
    if (cond.known && cond.ty.rank == 0 && x.ty.rank == y.ty.rank) {
        if (x.ty.rank == 0 || tir_type_eq_nolayout(x.ty, y.ty))
            return cond.c.i ? x : y;
    }
    x = untyped_default(c, x, a->pos[1]);
    y = untyped_default(c, y, a->pos[2]);
    SVal *vs[3] = {&cond, &x, &y};
    TirValue *ops[3];
    if (call_operands(c, a, vs, ops) < 0)
        return sv_bad();
    return sv_value(tir_op1(&c->b, TIR_OP_SELECT, x.ty, 3, ops));
}

static SVal bi_minmax(SemaCtx *c, BArgs *a) {
    SVal x = arg_value(c, a->pos[0]);
    SVal y = arg_value(c, a->pos[1]);
    if (x.bad || y.bad || !sema_unify(c, &x, &y, a->call))
        return sv_bad();
    if (x.known && y.known && x.ty.rank == 0 && y.ty.rank == 0) {
        /* as at run time: a NaN loses to a number; two literals compare in their default type */
        bool lit = x.untyped;
        TirScalar t = lit ? (x.c.is_float ? TIR_F32 : tf_promote_ints((TirScalar)x.ty.elem, (TirScalar)y.ty.elem))
                          : (TirScalar)x.ty.elem;
        if (lit && (!sema_type_literal(c, &x, t, a->call) || !sema_type_literal(c, &y, t, a->call)))
            return sv_bad();
        TfConst r;
        if (!tf_fold_tir(a->op, 0, t, x.c, y.c, &r)) {
            sema_err(c, a->call, "internal: '%s' of constants did not fold", a->name);
            return sv_bad();
        }
        return r.is_float ? sv_known_float(r.f, lit, t) : sv_known_int(r.i, lit, t);
    }
    x = untyped_default(c, x, a->pos[0]);
    y = untyped_default(c, y, a->pos[1]);
    SVal *vs[3] = {&x, &y, NULL};
    TirValue *ops[3];
    if (call_operands(c, a, vs, ops) < 0)
        return sv_bad();
    return sv_value(tir_binary(&c->b, a->op, ops[0], ops[1]));
}

static SVal bi_abs(SemaCtx *c, BArgs *a) {
    SVal x = untyped_default(c, arg_value(c, a->pos[0]), a->pos[0]);
    if (x.bad)
        return x;
    if (!is_num(x)) {
        sema_err(c, a->pos[0], "'abs' needs a number, got %s", sema_type_str(c, x.ty));
        return sv_bad();
    }
    c->b.loc = a->call->loc;
    return sv_value(tir_unary(&c->b, TIR_OP_ABS, sema_mat(c, &x)));
}

static SVal bi_math(SemaCtx *c, BArgs *a) {
    SVal x = arg_value(c, a->pos[0]);
    if (x.bad)
        return x;
    if (x.untyped && x.c.is_float)
        sema_type_literal(c, &x, TIR_F32, a->pos[0]);
    if (!is_num(x) || x.untyped || !tir_scalar_is_float((TirScalar)x.ty.elem)) {
        sema_err(c, a->pos[0], "'%s' needs a float argument, got %s; use `as`", a->name, sema_type_str(c, x.ty));
        return sv_bad();
    }
    /* fast=: a compile-time bool (a const parameter picks the mode per launch) */
    int64_t fast = 0;
    if (a->named[0] && !arg_const_int(c, a->named[0], "fast=", &fast))
        return sv_bad();
    if (fast != 0 && fast != 1) {
        sema_err(c, a->named[0], "fast= must be true or false, got %lld", (long long)fast);
        return sv_bad();
    }
    c->b.loc = a->call->loc;
    TirValue *v = tir_unary(&c->b, a->op, sema_mat(c, &x));
    v->def->attr.i[0] = fast;
    return sv_value(v);
}

static SVal bi_fma(SemaCtx *c, BArgs *a) {
    SVal x = arg_value(c, a->pos[0]), y = arg_value(c, a->pos[1]), z = arg_value(c, a->pos[2]);
    if (x.bad || y.bad || z.bad)
        return sv_bad();
    if (!sema_unify(c, &x, &y, a->call) || !sema_unify(c, &y, &z, a->call) || !sema_unify(c, &x, &y, a->call))
        return sv_bad();
    if (x.untyped)
        x = untyped_default(c, x, a->pos[0]), y = untyped_default(c, y, a->pos[1]),
        z = untyped_default(c, z, a->pos[2]);
    if (!tir_scalar_is_float((TirScalar)x.ty.elem)) {
        sema_err(c, a->call, "'fma' needs float arguments, got %s", sema_type_str(c, x.ty));
        return sv_bad();
    }
    SVal *vs[3] = {&x, &y, &z};
    TirValue *ops[3];
    if (call_operands(c, a, vs, ops) < 0)
        return sv_bad();
    return sv_value(tir_op1(&c->b, TIR_OP_FMA, x.ty, 3, ops));
}

/* ---- shape ------------------------------------------------------------------------- */
static SVal bi_trans(SemaCtx *c, BArgs *a) {
    SVal x = arg_value(c, a->pos[0]);
    if (x.bad)
        return x;
    if (!is_num(x) && !x.ty.ptr)
        return sv_bad();
    if (x.ty.rank != 2) {
        sema_err(c, a->pos[0], "trans needs a 2-D tile, got %s", sema_type_str(c, x.ty));
        return sv_bad();
    }
    int32_t sh[2] = {x.ty.shape[1], x.ty.shape[0]};
    c->b.loc = a->call->loc;
    TirValue *r = tir_op1(&c->b, TIR_OP_TRANS, tir_with_shape(x.ty, 2, sh), 1, &x.v);
    r->def->attr.i[0] = 1;
    r->def->attr.i[1] = 0;
    return sv_value(r);
}

static SVal bi_reshape(SemaCtx *c, BArgs *a) {
    SVal x = untyped_default(c, arg_value(c, a->pos[0]), a->pos[0]);
    int rank;
    int32_t shape[TIR_MAXRANK];
    if (x.bad || !arg_shape(c, a->pos[1], &rank, shape))
        return sv_bad();
    if (x.is_void || x.ty.kind != TIR_K_VALUE)
        return sv_bad();
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= shape[i];
    if (n != tir_type_numel(x.ty)) {
        sema_err(c, a->call, "cannot reshape %s (%lld elements) to %lld elements", sema_type_str(c, x.ty),
                 (long long)tir_type_numel(x.ty), (long long)n);
        return sv_bad();
    }
    c->b.loc = a->call->loc;
    TirValue *v = sema_mat(c, &x);
    TirType t = tir_tile_type(tir_elem_type(x.ty), rank, shape);
    if (x.ty.rank == 0)
        return sv_value(tir_op1(&c->b, TIR_OP_SPLAT, t, 1, &v));
    if (tir_type_eq_nolayout(t, x.ty))
        return x;
    return sv_value(tir_op1(&c->b, TIR_OP_RESHAPE, t, 1, &v));
}

static SVal bi_broadcast_to(SemaCtx *c, BArgs *a) {
    SVal x = untyped_default(c, arg_value(c, a->pos[0]), a->pos[0]);
    int rank;
    int32_t shape[TIR_MAXRANK];
    if (x.bad || !arg_shape(c, a->pos[1], &rank, shape))
        return sv_bad();
    if (x.is_void || x.ty.kind != TIR_K_VALUE)
        return sv_bad();
    if (x.ty.rank > rank) {
        sema_err(c, a->call, "cannot broadcast %s to a rank-%d shape", sema_type_str(c, x.ty), rank);
        return sv_bad();
    }
    c->b.loc = a->call->loc;
    if (!sema_broadcast_to(c, &x, rank, shape, a->call))
        return sv_bad();
    return x;
}

/* ---- scalar ------------------------------------------------------------------------ */
static SVal bi_cdiv(SemaCtx *c, BArgs *a) {
    SVal x = arg_value(c, a->pos[0]), y = arg_value(c, a->pos[1]);
    if (x.bad || y.bad)
        return sv_bad();
    if (!is_intv(x) || !is_intv(y)) {
        sema_err(c, a->call, "'cdiv' needs integers, got %s and %s", sema_type_str(c, x.ty), sema_type_str(c, y.ty));
        return sv_bad();
    }
    /* (x + y - 1) / y, folded when both are constants */
    SVal t = sema_binop(c, AST_OP_ADD, x, y, a->call);
    t = sema_binop(c, AST_OP_SUB, t, sv_known_int(1, true, TIR_I32), a->call);
    return sema_binop(c, AST_OP_DIV, t, y, a->call);
}

static SVal bi_next_pow2(SemaCtx *c, BArgs *a) {
    SVal x = arg_value(c, a->pos[0]);
    if (x.bad)
        return x;
    if (!is_intv(x)) {
        sema_err(c, a->pos[0], "'next_pow2' needs an integer, got %s", sema_type_str(c, x.ty));
        return sv_bad();
    }
    if (x.known) {
        x.c.i = tf_next_pow2(x.c.i);
        if (!x.untyped)
            x.c = sema_convert_const(x.c, (TirScalar)x.ty.elem);
        x.v = NULL;
        return x;
    }
    c->b.loc = a->call->loc;
    return sv_value(tir_unary(&c->b, TIR_OP_NEXT_POW2, x.v));
}

static SVal bi_hint(SemaCtx *c, BArgs *a) {
    SVal x = untyped_default(c, arg_value(c, a->pos[0]), a->pos[0]);
    int64_t n;
    if (x.bad || !arg_const_int(c, a->pos[1], "the hint value", &n))
        return sv_bad();
    if (n <= 0) {
        sema_err(c, a->pos[1], "the hint value must be positive, got %lld", (long long)n);
        return sv_bad();
    }
    if (x.is_void || x.ty.kind != TIR_K_VALUE ||
        (!x.ty.ptr && (!tir_scalar_is_int((TirScalar)x.ty.elem) || x.ty.elem == TIR_I1))) {
        sema_err(c, a->pos[0], "'%s' needs integers or pointers, got %s", a->name, sema_type_str(c, x.ty));
        return sv_bad();
    }
    c->b.loc = a->call->loc;
    TirValue *r = tir_unary(&c->b, a->op, sema_mat(c, &x));
    r->def->attr.i[0] = n;
    return sv_value(r);
}

/* ---- tensor maps ---------------------------------------------------------------------- */
static bool int_list(SemaCtx *c, const AstNode *n, TirScalar to, TirValue **out, int *count, const char *what) {
    if (n->kind != AST_LIST) {
        sema_err(c, n, "%s must be a list like [a, b]", what);
        return false;
    }
    if (n->nlist > TIR_MAXRANK) {
        sema_err(c, n, "%s has more than %d entries", what, TIR_MAXRANK);
        return false;
    }
    for (int i = 0; i < n->nlist; i++) {
        SVal v = arg_value(c, n->list[i]);
        if (v.bad)
            return false;
        if (!is_intv(v) || v.ty.rank) {
            sema_err(c, n->list[i], "%s must be integer scalars", what);
            return false;
        }
        c->b.loc = n->list[i]->loc;
        if (v.untyped)
            sema_type_literal(c, &v, to, n->list[i]);
        sema_cast(c, &v, to);
        out[i] = sema_mat(c, &v);
    }
    *count = n->nlist;
    return true;
}

static SVal bi_tensor_desc(SemaCtx *c, BArgs *a) {
    SVal base = arg_value(c, a->pos[0]);
    if (base.bad)
        return base;
    if (!base.ty.ptr || base.ty.rank) {
        sema_err(c, a->pos[0], "tensor_desc needs a scalar pointer, got %s", sema_type_str(c, base.ty));
        return sv_bad();
    }
    if (!a->named[0] || !a->named[1] || !a->named[2]) {
        sema_err(c, a->call, "tensor_desc needs shape=, strides= and block=");
        return sv_bad();
    }
    TirValue *ops[1 + 2 * TIR_MAXRANK];
    int ns, nt, rank;
    int32_t block[TIR_MAXRANK];
    if (!int_list(c, a->named[0], TIR_I64, ops + 1, &ns, "shape") ||
        !int_list(c, a->named[1], TIR_I64, ops + 1 + ns, &nt, "strides") || !arg_shape(c, a->named[2], &rank, block))
        return sv_bad();
    if (ns != rank || nt != rank || rank < 2) {
        sema_err(c, a->call, "tensor_desc needs shape, strides and block of one rank from 2 to 5");
        return sv_bad();
    }
    ops[0] = sema_mat(c, &base);
    TirType t = tir_tile_type(tir_scalar_type((TirScalar)base.ty.elem), rank, block);
    t.kind = TIR_K_DESC;
    c->b.loc = a->call->loc;
    return sv_value(tir_op1(&c->b, TIR_OP_TENSOR_DESC, t, 1 + 2 * rank, ops));
}

static bool want_desc(SemaCtx *c, SVal d, const AstNode *n) {
    if (d.bad)
        return false;
    if (d.is_void || d.ty.kind != TIR_K_DESC) {
        sema_err(c, n, "expected a tensor descriptor, got %s", d.is_void ? "no value" : sema_type_str(c, d.ty));
        return false;
    }
    return true;
}

/* tload's and tstore's descriptor (pos[0]) and its offsets (pos[1]), one per dimension:
 * ops[0] the descriptor, ops[1..n] the offsets. */
static bool desc_offsets(SemaCtx *c, BArgs *a, SVal *d, TirValue **ops, int *n) {
    *d = arg_value(c, a->pos[0]);
    if (!want_desc(c, *d, a->pos[0]))
        return false;
    if (!int_list(c, a->pos[1], TIR_I32, ops + 1, n, "offsets"))
        return false;
    if (*n != d->ty.rank) {
        sema_err(c, a->pos[1], "%d offsets for a %d-D descriptor", *n, (int)d->ty.rank);
        return false;
    }
    ops[0] = d->v;
    return true;
}

static SVal bi_tload(SemaCtx *c, BArgs *a) {
    SVal d;
    TirValue *ops[1 + TIR_MAXRANK];
    int n;
    if (!desc_offsets(c, a, &d, ops, &n))
        return sv_bad();
    TirType t = d.ty;
    t.kind = TIR_K_VALUE;
    c->b.loc = a->call->loc;
    return sv_value(tir_op1(&c->b, TIR_OP_TLOAD, t, 1 + n, ops));
}

static SVal bi_tstore(SemaCtx *c, BArgs *a) {
    SVal d;
    TirValue *ops[2 + TIR_MAXRANK];
    int n;
    if (!desc_offsets(c, a, &d, ops, &n))
        return sv_bad();
    SVal v = arg_value(c, a->pos[2]);
    TirType t = d.ty;
    t.kind = TIR_K_VALUE;
    if (!want_elem(c, &v, (TirScalar)t.elem, a->pos[2], "the stored tile"))
        return sv_bad();
    if (v.ty.rank && !tir_type_eq_nolayout(v.ty, t)) {
        sema_err(c, a->pos[2], "tstore of %s through a descriptor of %s", sema_type_str(c, v.ty), sema_type_str(c, t));
        return sv_bad();
    }
    c->b.loc = a->call->loc;
    ops[1 + n] = sema_broadcast_to(c, &v, t.rank, t.shape, a->call);
    tir_op_new(&c->b, TIR_OP_TSTORE, 2 + n, ops, 0, NULL, 0);
    return (SVal){.is_void = true};
}

/* ---- debug ------------------------------------------------------------------------ */
static SVal bi_print(SemaCtx *c, BArgs *a) {
    if (a->pos[0]->kind != AST_STRING) {
        sema_err(c, a->pos[0], "print needs a string label first");
        return sv_bad();
    }
    TirValue *ops[6];
    int n = 0;
    for (int i = 1; i < a->npos; i++) {
        SVal v = untyped_default(c, arg_value(c, a->pos[i]), a->pos[i]);
        if (v.bad)
            return v;
        c->b.loc = a->call->loc;
        ops[n++] = sema_mat(c, &v);
    }
    c->b.loc = a->call->loc;
    TirOp *op = tir_op_new(&c->b, TIR_OP_PRINT, n, ops, 0, NULL, 0);
    op->attr.s = a->pos[0]->name;
    return (SVal){.is_void = true};
}

static SVal bi_assert(SemaCtx *c, BArgs *a) {
    SVal cond = arg_value(c, a->pos[0]);
    if (cond.bad)
        return cond;
    if (!is_bool(cond)) {
        sema_err(c, a->pos[0], "assert needs a bool condition, got %s", sema_type_str(c, cond.ty));
        return sv_bad();
    }
    const char *msg = "";
    if (a->npos == 2) {
        if (a->pos[1]->kind != AST_STRING) {
            sema_err(c, a->pos[1], "the message of assert must be a string");
            return sv_bad();
        }
        msg = a->pos[1]->name;
    }
    c->b.loc = a->call->loc;
    TirValue *v = sema_mat(c, &cond);
    TirOp *op = tir_op_new(&c->b, TIR_OP_ASSERT, 1, &v, 0, NULL, 0);
    op->attr.s = msg;
    return (SVal){.is_void = true};
}
