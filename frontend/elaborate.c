/* Elaboration (tf_elaborate): one kernel variant, with its constants bound, checked
 * for types and shapes and lowered into tile IR with the builder.  Compile-time
 * scalars stay folded until an op needs them; literals take the type of the
 * operand they meet; `var`s are carried through `for` and `if` as op results. */
#include "sema_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_NEST   400
#define MAX_UNROLL 4096
#define MAX_NUMEL  (1 << 20)

/* ---- small helpers ------------------------------------------------------------- */
void sema_err(SemaCtx *c, const AstNode *n, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tf_error(c->d, n->loc, n->end, "%s", buf);
}

SVal sv_bad(void) {
    return (SVal){.bad = true};
}

SVal sv_known_int(int64_t v, bool untyped, TirScalar s) {
    return (SVal){
        .ty = tir_scalar_type(s), .known = true, .untyped = untyped, .c = {false, v, (double)v, !untyped, (uint8_t)s}};
}

SVal sv_known_float(double v, bool untyped, TirScalar s) {
    return (SVal){.ty = tir_scalar_type(s), .known = true, .untyped = untyped, .c = {true, 0, v, !untyped, (uint8_t)s}};
}

SVal sv_value(TirValue *v) {
    return (SVal){.v = v, .ty = v->ty};
}

const char *sema_type_str(SemaCtx *c, TirType t) {
    char buf[128];
    tir_type_print(buf, sizeof buf, NULL, t);
    return tir_strdup(c->arena, buf);
}

static void at(SemaCtx *c, const AstNode *n) {
    c->b.loc = n->loc;
}

TfConst sema_convert_const(TfConst v, TirScalar to) {
    return tf_const_convert(v, tf_const_source_type(v), to);
}

static bool is_pow2(int64_t x) {
    return x > 0 && (x & (x - 1)) == 0;
}

bool sema_check_shape(SemaCtx *c, const AstNode *n, int rank, const int32_t *shape) {
    int64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        if (!is_pow2(shape[i])) {
            sema_err(c, n, "tile dimension %d is not a power of two", (int)shape[i]);
            return false;
        }
        numel *= shape[i];
        if (numel > MAX_NUMEL) {
            sema_err(c, n, "tile of more than %d elements (2^20)", MAX_NUMEL);
            return false;
        }
    }
    return true;
}

/* ---- materializing, typing and broadcasting ------------------------------------- */
TirValue *sema_mat(SemaCtx *c, SVal *s) {
    if (s->bad || s->is_void)
        return NULL;
    if (s->v)
        return s->v;
    if (!s->known)
        return NULL;
    TirScalar e = (TirScalar)s->ty.elem;
    if (tir_scalar_is_float(e))
        s->v = tir_const_float(&c->b, s->ty, s->c.is_float ? s->c.f : (double)s->c.i);
    else
        s->v = tir_const_int(&c->b, s->ty, tir_wrap_int(e, (uint64_t)s->c.i));
    return s->v;
}

bool sema_type_literal(SemaCtx *c, SVal *s, TirScalar elem, const AstNode *n) {
    if (!s->untyped)
        return true;
    if (s->c.is_float && !tir_scalar_is_float(elem)) {
        sema_err(c, n, "float literal %g cannot be used as %s; use `as`", s->c.f, tir_scalar_name(elem));
        return false;
    }
    if (!tf_const_fits(s->c, elem)) {
        sema_err(c, n, "integer constant %lld does not fit %s; use `as` to wrap it", (long long)s->c.i,
                 tir_scalar_name(elem));
        return false;
    }
    s->c = sema_convert_const(s->c, elem);
    s->ty = tir_scalar_type(elem);
    s->untyped = false;
    s->v = NULL;
    return true;
}

bool sema_cast(SemaCtx *c, SVal *s, TirScalar to) {
    if (s->bad)
        return false;
    if (s->known) {
        s->c = sema_convert_const(s->c, to);
        s->ty = tir_scalar_type(to);
        s->untyped = false;
        s->v = NULL;
        return true;
    }
    if (s->ty.elem == to && !s->ty.ptr)
        return true;
    TirType t = s->ty;
    t.elem = (uint8_t)to;
    t.ptr = 0;
    s->v = tir_cast(&c->b, s->v, t);
    s->ty = t;
    return true;
}

static void make_untyped_float(SVal *s) {
    if (!s->c.is_float)
        s->c = (TfConst){true, 0, (double)s->c.i, false, 0};
    s->ty = tir_scalar_type(TIR_F32);
}

bool sema_unify(SemaCtx *c, SVal *a, SVal *b, const AstNode *n) {
    if (a->bad || b->bad)
        return false;
    if (a->untyped && b->untyped) {
        if (a->c.is_float || b->c.is_float)
            make_untyped_float(a), make_untyped_float(b);
        return true;
    }
    if (a->ty.ptr || b->ty.ptr) {
        sema_err(c, n, "this operation cannot take a pointer (%s and %s)", sema_type_str(c, a->ty),
                 sema_type_str(c, b->ty));
        return false;
    }
    if (a->untyped)
        return sema_type_literal(c, a, (TirScalar)b->ty.elem, n);
    if (b->untyped)
        return sema_type_literal(c, b, (TirScalar)a->ty.elem, n);
    TirScalar ea = (TirScalar)a->ty.elem, eb = (TirScalar)b->ty.elem;
    if (ea == eb)
        return true;
    bool fa = tir_scalar_is_float(ea), fb = tir_scalar_is_float(eb);
    if (fa && fb) {
        sema_err(c, n, "mixed float types %s and %s need `as`", tir_scalar_name(ea), tir_scalar_name(eb));
        return false;
    }
    if (fa || fb) {
        sema_err(c, n, "cannot mix %s and %s without `as`", tir_scalar_name(ea), tir_scalar_name(eb));
        return false;
    }
    TirScalar r = tf_promote_ints(ea, eb);
    return sema_cast(c, a, r) && sema_cast(c, b, r);
}

bool sema_broadcast_shape(TirType a, TirType b, int *rank, int32_t *shape) {
    int r = a.rank > b.rank ? a.rank : b.rank;
    for (int i = 0; i < r; i++) {
        int32_t da = i < a.rank ? a.shape[a.rank - 1 - i] : 1;
        int32_t db = i < b.rank ? b.shape[b.rank - 1 - i] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        shape[r - 1 - i] = da == 1 ? db : da;
    }
    *rank = r;
    return true;
}

TirValue *sema_broadcast_to(SemaCtx *c, SVal *s, int rank, const int32_t *shape, const AstNode *n) {
    if (s->bad)
        return NULL;
    if (rank == 0)
        return sema_mat(c, s);
    TirType et = tir_elem_type(s->ty);
    TirType full = tir_tile_type(et, rank, shape);
    if (s->ty.rank == 0) {
        if (s->known && !s->v) {
            SVal t = *s;
            t.ty = full;
            s->v = sema_mat(c, &t);
        } else {
            TirValue *v = sema_mat(c, s);
            s->v = tir_op1(&c->b, TIR_OP_SPLAT, full, 1, &v);
        }
        s->ty = full;
        s->known = false;
        return s->v;
    }
    TirValue *v = s->v;
    TirType t = s->ty;
    while (t.rank < rank) {
        int32_t sh[TIR_MAXRANK];
        sh[0] = 1;
        for (int i = 0; i < t.rank; i++)
            sh[i + 1] = t.shape[i];
        t = tir_tile_type(et, t.rank + 1, sh);
        v = tir_op1(&c->b, TIR_OP_EXPAND_DIMS, t, 1, &v);
        v->def->attr.i[0] = 0;
    }
    if (!tir_type_eq_nolayout(t, full)) {
        for (int i = 0; i < rank; i++)
            if (t.shape[i] != shape[i] && t.shape[i] != 1) {
                sema_err(c, n, "cannot broadcast %s to %s", sema_type_str(c, s->ty), sema_type_str(c, full));
                s->bad = true;
                return NULL;
            }
        v = tir_op1(&c->b, TIR_OP_BROADCAST, full, 1, &v);
    }
    s->v = v;
    s->ty = full;
    return v;
}

/* Broadcasts a and b to one shape, naming both shapes when they do not agree. */
static bool broadcast_pair(SemaCtx *c, SVal *a, SVal *b, const AstNode *n) {
    int rank;
    int32_t shape[TIR_MAXRANK];
    if (!sema_broadcast_shape(a->ty, b->ty, &rank, shape)) {
        sema_err(c, n, "cannot broadcast %s and %s", sema_type_str(c, a->ty), sema_type_str(c, b->ty));
        return false;
    }
    if (rank == 0)
        return sema_mat(c, a) && sema_mat(c, b);
    return sema_broadcast_to(c, a, rank, shape, n) && sema_broadcast_to(c, b, rank, shape, n);
}

/* ---- operators -------------------------------------------------------------------- */
static const struct {
    TirOpcode code;
    int cmp; /* TirCmp + 1 for comparisons */
    bool int_only;
} binop_table[] = {
    [AST_OP_OROR] = {TIR_OP_OR, 0, true},
    [AST_OP_ANDAND] = {TIR_OP_AND, 0, true},
    [AST_OP_OR] = {TIR_OP_OR, 0, true},
    [AST_OP_XOR] = {TIR_OP_XOR, 0, true},
    [AST_OP_AND] = {TIR_OP_AND, 0, true},
    [AST_OP_EQ] = {TIR_OP_CMP, TIR_CMP_EQ + 1, false},
    [AST_OP_NE] = {TIR_OP_CMP, TIR_CMP_NE + 1, false},
    [AST_OP_LT] = {TIR_OP_CMP, TIR_CMP_LT + 1, false},
    [AST_OP_LE] = {TIR_OP_CMP, TIR_CMP_LE + 1, false},
    [AST_OP_GT] = {TIR_OP_CMP, TIR_CMP_GT + 1, false},
    [AST_OP_GE] = {TIR_OP_CMP, TIR_CMP_GE + 1, false},
    [AST_OP_SHL] = {TIR_OP_SHL, 0, true},
    [AST_OP_SHR] = {TIR_OP_SHR, 0, true},
    [AST_OP_ADD] = {TIR_OP_ADD, 0, false},
    [AST_OP_SUB] = {TIR_OP_SUB, 0, false},
    [AST_OP_MUL] = {TIR_OP_MUL, 0, false},
    [AST_OP_DIV] = {TIR_OP_DIV, 0, false},
    [AST_OP_REM] = {TIR_OP_REM, 0, false},
};

/* Folds a op b on two compile-time scalars as the run time computes it.  Two literals
 * are computed in their default type (i32, i64 for a value beyond i32, f32 for floats)
 * and the result is again a literal; otherwise in the operands' unified type e. */
static bool fold_binary(SemaCtx *c, AstOp op, SVal a, SVal b, TirScalar e, const AstNode *n, SVal *out) {
    if (a.untyped) {
        TirScalar t = a.c.is_float ? TIR_F32 : tf_promote_ints((TirScalar)a.ty.elem, (TirScalar)b.ty.elem);
        if (!sema_type_literal(c, &a, t, n) || !sema_type_literal(c, &b, t, n))
            return false;
        e = t;
    }
    TfConst r;
    if (!tf_fold_binop(op, e, a.c, b.c, &r)) {
        sema_err(c, n, "internal: operator '%s' on constants of %s did not fold", ast_op_text[op], tir_scalar_name(e));
        return false;
    }
    if (binop_table[op].cmp) {
        *out = sv_known_int(r.i, false, TIR_I1);
        return true;
    }
    *out = r.is_float ? sv_known_float(r.f, a.untyped, e) : sv_known_int(r.i, a.untyped, e);
    return true;
}

static SVal pointer_arith(SemaCtx *c, AstOp op, SVal p, SVal off, const AstNode *n) {
    if (off.ty.ptr) {
        sema_err(c, n, "cannot combine two pointers with '%s'", ast_op_text[op]);
        return sv_bad();
    }
    if (off.untyped && !sema_type_literal(c, &off, off.c.i > INT32_MAX || off.c.i < INT32_MIN ? TIR_I64 : TIR_I32, n))
        return sv_bad();
    TirScalar oe = (TirScalar)off.ty.elem;
    if (!tir_scalar_is_int(oe) || oe == TIR_I1) {
        sema_err(c, n, "a pointer offset must be an integer, got %s", sema_type_str(c, off.ty));
        return sv_bad();
    }
    if (op == AST_OP_SUB) {
        if (off.known)
            tf_fold_unop(TIR_OP_NEG, oe, off.c, &off.c), off.v = NULL;
        else {
            at(c, n);
            off.v = tir_unary(&c->b, TIR_OP_NEG, off.v);
        }
    }
    if (!broadcast_pair(c, &p, &off, n))
        return sv_bad();
    at(c, n);
    TirValue *o[2] = {p.v, off.v};
    return sv_value(tir_op1(&c->b, TIR_OP_ADDPTR, p.ty, 2, o));
}

SVal sema_binop(SemaCtx *c, AstOp op, SVal a, SVal b, const AstNode *n) {
    if (a.bad || b.bad)
        return sv_bad();
    if (a.is_void || b.is_void) {
        sema_err(c, n, "a call without a result used as a value");
        return sv_bad();
    }
    if (a.ty.kind == TIR_K_DESC || b.ty.kind == TIR_K_DESC) {
        sema_err(c, n, "operator '%s' cannot take a tensor descriptor", ast_op_text[op]);
        return sv_bad();
    }
    if (a.ty.ptr && (op == AST_OP_ADD || op == AST_OP_SUB))
        return pointer_arith(c, op, a, b, n);
    if (b.ty.ptr && op == AST_OP_ADD)
        return pointer_arith(c, op, b, a, n);
    if (a.ty.ptr || b.ty.ptr) {
        sema_err(c, n, "operator '%s' cannot take a pointer (%s %s %s)", ast_op_text[op], sema_type_str(c, a.ty),
                 ast_op_text[op], sema_type_str(c, b.ty));
        return sv_bad();
    }
    if (op == AST_OP_ANDAND || op == AST_OP_OROR) {
        if (a.untyped || b.untyped || a.ty.elem != TIR_I1 || b.ty.elem != TIR_I1) {
            sema_err(c, n, "operator '%s' needs bool operands, got %s and %s", ast_op_text[op], sema_type_str(c, a.ty),
                     sema_type_str(c, b.ty));
            return sv_bad();
        }
    }
    if (!sema_unify(c, &a, &b, n))
        return sv_bad();
    TirScalar e = (TirScalar)a.ty.elem;
    if (binop_table[op].int_only && (a.untyped ? a.c.is_float : tir_scalar_is_float(e))) {
        sema_err(c, n, "operator '%s' needs integer operands, got %s", ast_op_text[op], sema_type_str(c, a.ty));
        return sv_bad();
    }
    bool cmp = binop_table[op].cmp != 0;
    if (a.known && b.known && a.ty.rank == 0 && b.ty.rank == 0) {
        SVal r;
        return fold_binary(c, op, a, b, e, n, &r) ? r : sv_bad();
    }
    if (a.untyped && !sema_type_literal(c, &a, a.c.is_float ? TIR_F32 : TIR_I32, n))
        return sv_bad();
    if (b.untyped && !sema_type_literal(c, &b, b.c.is_float ? TIR_F32 : TIR_I32, n))
        return sv_bad();
    if (!broadcast_pair(c, &a, &b, n))
        return sv_bad();
    at(c, n);
    if (cmp)
        return sv_value(tir_cmp(&c->b, (TirCmp)(binop_table[op].cmp - 1), a.v, b.v));
    return sv_value(tir_binary(&c->b, binop_table[op].code, a.v, b.v));
}

static SVal ev_unary(SemaCtx *c, const AstNode *n) {
    SVal a = sema_expr(c, n->a);
    if (a.bad)
        return a;
    if (a.is_void || a.ty.ptr || a.ty.kind == TIR_K_DESC) {
        sema_err(c, n, "operator '%s' cannot take %s", ast_op_text[n->op],
                 a.is_void ? "a call without a result" : sema_type_str(c, a.ty));
        return sv_bad();
    }
    bool fl = a.untyped ? a.c.is_float : tir_scalar_is_float((TirScalar)a.ty.elem);
    bool is_bool = !a.untyped && a.ty.elem == TIR_I1;
    if (n->op == AST_OP_NOT && !is_bool) {
        sema_err(c, n, "operator '!' needs a bool, got %s", sema_type_str(c, a.ty));
        return sv_bad();
    }
    if (n->op == AST_OP_BITNOT && fl) {
        sema_err(c, n, "operator '~' needs an integer, got %s", sema_type_str(c, a.ty));
        return sv_bad();
    }
    if (a.known && a.ty.rank == 0) {
        /* A literal stays a literal (`-1` takes the type of what it meets), negated in its
         * default type as at run time; a float's negation is exact in any format. */
        TirScalar t = a.untyped ? (a.c.is_float ? TIR_F64 : (TirScalar)a.ty.elem) : (TirScalar)a.ty.elem;
        TfConst r;
        if (is_bool)
            r = (TfConst){false, !a.c.i, !a.c.i, true, TIR_I1};
        else
            tf_fold_unop(n->op == AST_OP_NEG ? TIR_OP_NEG : TIR_OP_NOT, t, a.c, &r);
        if (a.untyped) {
            r.typed = false;
            if (!r.is_float)
                a.ty = tir_scalar_type(r.i > INT32_MAX || r.i < INT32_MIN ? TIR_I64 : TIR_I32);
        }
        a.c = r;
        a.v = NULL;
        return a;
    }
    at(c, n);
    if (n->op == AST_OP_NEG)
        return sv_value(tir_unary(&c->b, TIR_OP_NEG, a.v));
    if (is_bool)
        return sv_value(tir_unary(&c->b, TIR_OP_NOT, a.v));
    TirValue *ones = tir_const_int(&c->b, a.ty, -1);
    return sv_value(tir_binary(&c->b, TIR_OP_XOR, a.v, ones));
}

static SVal ev_cast(SemaCtx *c, const AstNode *n) {
    SVal a = sema_expr(c, n->a);
    int t = tir_scalar_from_name(n->name, strlen(n->name));
    if (t < 0) {
        sema_err(c, n, "unknown type '%s'", n->name);
        return sv_bad();
    }
    if (a.bad)
        return a;
    if (a.is_void || a.ty.ptr || a.ty.kind == TIR_K_DESC) {
        sema_err(c, n, "cannot convert %s to %s", a.is_void ? "a call without a result" : sema_type_str(c, a.ty),
                 n->name);
        return sv_bad();
    }
    at(c, n);
    sema_cast(c, &a, (TirScalar)t);
    return a;
}

static SVal ev_index(SemaCtx *c, const AstNode *n) {
    SVal a = sema_expr(c, n->a);
    if (a.bad)
        return a;
    if (a.is_void || a.ty.kind == TIR_K_DESC) {
        sema_err(c, n, "only tiles and scalars can be indexed with [:, None]");
        return sv_bad();
    }
    int slices = 0;
    for (int i = 0; i < n->nlist; i++) {
        if (n->list[i]->kind == AST_SLICE)
            slices++;
        else if (n->list[i]->kind != AST_NONE) {
            sema_err(c, n->list[i], "only ':' and 'None' are allowed in an index");
            return sv_bad();
        }
    }
    if (slices != a.ty.rank) {
        sema_err(c, n, "index has %d ':' for a value of rank %d (%s)", slices, (int)a.ty.rank, sema_type_str(c, a.ty));
        return sv_bad();
    }
    if (n->nlist > TF_MAX_TILE_RANK) {
        sema_err(c, n, "index gives %d dimensions; tiles have 1 to %d", (int)n->nlist, TF_MAX_TILE_RANK);
        return sv_bad();
    }
    if (a.untyped && !sema_type_literal(c, &a, a.c.is_float ? TIR_F32 : TIR_I32, n))
        return sv_bad();
    at(c, n);
    TirValue *v = sema_mat(c, &a);
    TirType t = a.ty;
    if (t.rank == 0) {
        int32_t one = 1;
        t = tir_tile_type(tir_elem_type(a.ty), 1, &one);
        v = tir_op1(&c->b, TIR_OP_SPLAT, t, 1, &v); /* the first None */
    }
    int start = a.ty.rank == 0 ? 1 : 0;
    for (int i = start; i < n->nlist; i++) {
        if (n->list[i]->kind != AST_NONE)
            continue;
        int32_t sh[TIR_MAXRANK];
        for (int j = 0, k = 0; j <= t.rank; j++)
            sh[j] = j == i ? 1 : t.shape[k++];
        t = tir_tile_type(tir_elem_type(t), t.rank + 1, sh);
        v = tir_op1(&c->b, TIR_OP_EXPAND_DIMS, t, 1, &v);
        v->def->attr.i[0] = i;
    }
    return sv_value(v);
}

/* ---- names ---------------------------------------------------------------------------- */
static uint32_t name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static Binding *lookup(SemaCtx *c, const char *name) {
    if (!c->buckets)
        return NULL;
    uint32_t h = name_hash(name);
    for (Binding *b = c->buckets[h % SEMA_NBUCKETS]; b; b = b->hnext)
        if (b->hash == h && b->serial >= c->floor && strcmp(b->name, name) == 0)
            return b;
    return NULL;
}

static Binding *bind(SemaCtx *c, const char *name, SVal v, BindKind kind, uint32_t loc) {
    if (!c->buckets)
        c->buckets = tir_alloc(c->arena, SEMA_NBUCKETS * sizeof *c->buckets);
    Binding *b = tir_alloc(c->arena, sizeof *b);
    b->name = name;
    b->val = v;
    b->kind = kind;
    b->loc = loc;
    b->prev = c->scope;
    b->hash = name_hash(name);
    b->serial = c->nbind++;
    Binding **head = &c->buckets[b->hash % SEMA_NBUCKETS];
    b->hnext = *head;
    *head = b;
    c->scope = b;
    return b;
}

/* Leaves the bindings made since `saved` (a scope chain's earlier head): each is the newest
 * of its bucket when its turn comes, as bindings end in the reverse order of their making. */
static void scope_restore(SemaCtx *c, Binding *saved) {
    while (c->scope && c->scope != saved) {
        Binding *b = c->scope;
        c->buckets[b->hash % SEMA_NBUCKETS] = b->hnext;
        c->scope = b->prev;
    }
    c->scope = saved;
}

static SVal const_sval(TfConst v, bool untyped, TirScalar s) {
    return v.is_float
               ? sv_known_float(v.f, untyped, untyped ? TIR_F32 : s)
               : sv_known_int(v.i, untyped, untyped ? (v.i > INT32_MAX || v.i < INT32_MIN ? TIR_I64 : TIR_I32) : s);
}

/* Edit distance of a and b, or a number above `limit` as soon as it exceeds it (names are
 * short; the rows are bounded so a long name costs nothing). */
static int edit_distance(const char *a, const char *b, int limit) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return limit + 1;
    int row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0], best = row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best)
                best = v;
        }
        if (best > limit)
            return limit + 1;
    }
    return row[lb];
}

static void consider(const char **best, int *bestd, const char *name, const char *cand) {
    int d = edit_distance(name, cand, 2);
    if (d < *bestd && d <= (strlen(name) > 3 ? 2 : 1)) {
        *best = cand;
        *bestd = d;
    }
}

/* The visible name closest to `name` (a typo's likely meaning), or NULL. */
static const char *closest_name(SemaCtx *c, const char *name) {
    const char *best = NULL;
    int bestd = 3;
    for (Binding *b = c->scope; b; b = b->prev)
        consider(&best, &bestd, name, b->name);
    if (!c->fn && c->variant)
        for (int i = 0; i < c->variant->nconsts; i++)
            consider(&best, &bestd, name, c->variant->consts[i].name);
    for (int i = 0; i < c->file->nconsts; i++)
        consider(&best, &bestd, name, c->file->consts[i].name);
    return best;
}

static SVal ev_name(SemaCtx *c, const AstNode *n) {
    Binding *b = lookup(c, n->name);
    if (b)
        return b->val;
    if (!c->fn && c->variant) {
        const TirConstBinding *cb = tf_find_binding(c->variant->consts, c->variant->nconsts, n->name);
        if (cb) {
            TfConst v = {cb->is_float, cb->ival, cb->fval, false, 0};
            int p = tf_find_param(c->kernel, n->name);
            if (p >= 0) {
                const char *tn = c->kernel->params[p].type_name;
                int s = tir_scalar_from_name(tn, strlen(tn));
                if (s >= 0)
                    return const_sval(sema_convert_const(v, (TirScalar)s), false, (TirScalar)s);
            }
            return const_sval(v, true, TIR_I32);
        }
    }
    int fc = tf_find_file_const(c->file, n->name);
    if (fc >= 0) {
        TfEvalEnv e = {.file = c->file, .nfile_consts = fc};
        TfConst v;
        if (tf_const_eval(&e, c->file->consts[fc].value, &v) != TF_EV_OK)
            return sv_bad();
        return const_sval(v, true, TIR_I32);
    }
    if (!strcmp(n->name, "inf"))
        return sv_known_float(INFINITY, true, TIR_F32);
    if (!strcmp(n->name, "nan"))
        return sv_known_float(NAN, true, TIR_F32);
    if (tir_scalar_from_name(n->name, strlen(n->name)) >= 0) {
        sema_err(c, n, "type '%s' used as a value", n->name);
        return sv_bad();
    }
    const char *near = closest_name(c, n->name);
    if (near)
        sema_err(c, n, "unknown name '%s'; did you mean '%s'?", n->name, near);
    else
        sema_err(c, n, "unknown name '%s'", n->name);
    return sv_bad();
}

/* ---- expressions -------------------------------------------------------------------- */
SVal sema_expr(SemaCtx *c, const AstNode *n) {
    if (++c->depth > MAX_NEST) {
        c->depth--;
        sema_err(c, n, "expression nested too deeply");
        return sv_bad();
    }
    SVal r;
    switch (n->kind) {
    case AST_INT:
        r = sv_known_int(n->ival, true, n->ival > INT32_MAX || n->ival < INT32_MIN ? TIR_I64 : TIR_I32);
        break;
    case AST_FLOAT: r = sv_known_float(n->fval, true, TIR_F32); break;
    case AST_BOOL: r = sv_known_int(n->ival != 0, false, TIR_I1); break;
    case AST_NAME: r = ev_name(c, n); break;
    case AST_UNARY: r = ev_unary(c, n); break;
    case AST_BINARY: {
        SVal a = sema_expr(c, n->a);
        SVal b = sema_expr(c, n->b);
        r = sema_binop(c, n->op, a, b, n);
        break;
    }
    case AST_CAST: r = ev_cast(c, n); break;
    case AST_INDEX: r = ev_index(c, n); break;
    case AST_CALL: {
        bool found;
        r = sema_builtin(c, n, &found);
        if (!found)
            r = sema_call_fn(c, n);
        break;
    }
    case AST_STRING:
        sema_err(c, n, "a string is allowed only as the label of print or the message of assert");
        r = sv_bad();
        break;
    case AST_LIST:
        sema_err(c, n, "a list is allowed only as a shape or offsets argument");
        r = sv_bad();
        break;
    default:
        sema_err(c, n, "not an expression");
        r = sv_bad();
        break;
    }
    c->depth--;
    return r;
}

/* ---- device functions ------------------------------------------------------------ */
static const AstFn *find_fn(const AstFile *f, const char *name) {
    int i = tf_find_top(f, name) - f->nconsts;
    return i >= 0 && i < f->nfns ? &f->fns[i] : NULL;
}

/* "f32", "f32x1024", "pf16x64x64": one argument's part of an instance name. */
static void type_mangle(char *buf, size_t n, TirType t) {
    int len = snprintf(buf, n, "%s%s", t.ptr ? "p" : "", tir_scalar_name((TirScalar)t.elem));
    for (int i = 0; i < t.rank && len < (int)n; i++)
        len += snprintf(buf + len, n - len, "x%d", (int)t.shape[i]);
}

static void sema_block(SemaCtx *c, const AstNode *blk);
static void sema_stmt(SemaCtx *c, const AstNode *n);

/* ---- what a compile may cost ---------------------------------------------------------- */
typedef struct FnSize {
    const TirFunc *f;
    int64_t size;
    struct FnSize *next;
} FnSize;

/* The ops of the function being built, once every call in it is inlined. */
static int64_t grown_size(const SemaCtx *c) {
    return (int64_t)c->b.func->next_id + c->inlined_extra;
}

static int64_t instance_size(const SemaCtx *c, const TirFunc *f) {
    for (const FnSize *s = c->sizes; s; s = s->next)
        if (s->f == f)
            return s->size;
    return f->next_id;
}

/* Reports, once, that the function being built grew past TF_MAX_KERNEL_OPS at n. */
static bool check_growth(SemaCtx *c, const AstNode *n, const char *how, const char *advice) {
    if (c->too_big)
        return false;
    int64_t size = grown_size(c);
    if (size <= TF_MAX_KERNEL_OPS)
        return true;
    c->too_big = true;
    sema_err(c, n, "%s grows %s '%s' past %d ops (2^20) once unrolled and inlined; %s", how,
             c->fn ? "function" : "kernel", c->fn ? c->fn->name : c->kernel->name, TF_MAX_KERNEL_OPS, advice);
    return false;
}

static void elaborate_fn(SemaCtx *c, const AstFn *fn, TirFunc *f) {
    /* only the per-function state is saved: failures found inside stay recorded */
    int64_t saved_extra = c->inlined_extra;
    c->inlined_extra = 0;
    Binding *saved_scope = c->scope;
    const AstFn *saved_fn = c->fn;
    SVal saved_result = c->fn_result;
    bool saved_has = c->fn_has_result;
    TirBuilder saved_b = c->b;
    int saved_depth = c->nfn_stack;
    uint32_t saved_floor = c->floor;
    c->scope = NULL;
    c->floor = c->nbind; /* the caller's names are not the function's */
    c->fn = fn;
    c->fn_has_result = false;
    c->fn_result = (SVal){0};
    c->fn_stack[c->nfn_stack++] = fn->name;
    tir_builder_at_end(&c->b, f->body);
    for (int i = 0; i < fn->nparams; i++)
        bind(c, fn->params[i], sv_value(f->body->args[i]), BIND_LET, fn->param_locs ? fn->param_locs[i] : fn->loc);
    const AstNode *body = fn->body;
    for (int i = 0; body && i < body->nlist; i++) {
        const AstNode *s = body->list[i];
        if (s->kind != AST_RETURN) {
            sema_stmt(c, s);
            continue;
        }
        if (i != body->nlist - 1) {
            sema_err(c, s, "'return' must be the last statement of function '%s'", fn->name);
            continue;
        }
        if (s->a) {
            SVal r = sema_expr(c, s->a);
            if (r.untyped)
                sema_type_literal(c, &r, r.c.is_float ? TIR_F32 : TIR_I32, s->a);
            if (r.is_void)
                sema_err(c, s->a, "a call without a result used as a value");
            else if (!r.bad) {
                at(c, s);
                c->fn_result = r;
                c->fn_has_result = sema_mat(c, &c->fn_result) != NULL;
            }
        }
    }
    c->b.loc = fn->loc;
    TirValue *rv = c->fn_has_result ? c->fn_result.v : NULL;
    tir_op_new(&c->b, TIR_OP_FUNC_RETURN, rv ? 1 : 0, &rv, 0, NULL, 0);
    if (rv) {
        f->ret = tir_alloc(c->arena, sizeof(TirType));
        f->ret[0] = rv->ty;
        f->nret = 1;
    }
    FnSize *sz = tir_alloc(c->arena, sizeof *sz);
    *sz = (FnSize){f, grown_size(c), c->sizes};
    c->sizes = sz;
    c->inlined_extra = saved_extra;
    scope_restore(c, NULL);
    c->scope = saved_scope;
    c->floor = saved_floor;
    c->fn = saved_fn;
    c->fn_result = saved_result;
    c->fn_has_result = saved_has;
    c->b = saved_b;
    c->nfn_stack = saved_depth;
}

SVal sema_call_fn(SemaCtx *c, const AstNode *call) {
    const AstFn *fn = find_fn(c->file, call->name);
    if (!fn) {
        /* a typo of a builtin or of one of the file's functions: name it */
        const char *near = NULL;
        int neard = 3;
        for (int i = 0; sema_builtin_name(i); i++)
            consider(&near, &neard, call->name, sema_builtin_name(i));
        for (int i = 0; i < c->file->nfns; i++)
            consider(&near, &neard, call->name, c->file->fns[i].name);
        if (near)
            sema_err(c, call, "unknown function '%s'; did you mean '%s'?", call->name, near);
        else
            sema_err(c, call, "unknown function '%s'", call->name);
        return sv_bad();
    }
    if (call->nnamed) {
        sema_err(c, call->named[0], "function '%s' takes no named arguments", fn->name);
        return sv_bad();
    }
    if (call->nlist != fn->nparams) {
        sema_err(c, call, "function '%s' takes %d argument%s, got %d", fn->name, (int)fn->nparams,
                 fn->nparams == 1 ? "" : "s", (int)call->nlist);
        return sv_bad();
    }
    int n = call->nlist;
    TirValue **args = tir_alloc(c->arena, sizeof(TirValue *) * (n ? n : 1));
    TirType *types = tir_alloc(c->arena, sizeof(TirType) * (n ? n : 1));
    char name[512];
    int len = snprintf(name, sizeof name, "%s", fn->name);
    bool ok = true;
    for (int i = 0; i < n; i++) {
        SVal a = sema_expr(c, call->list[i]);
        if (a.bad || a.is_void) {
            if (a.is_void)
                sema_err(c, call->list[i], "a call without a result used as a value");
            ok = false;
            continue;
        }
        if (a.untyped && !sema_type_literal(c, &a, a.c.is_float ? TIR_F32 : TIR_I32, call->list[i])) {
            ok = false;
            continue;
        }
        at(c, call->list[i]);
        args[i] = sema_mat(c, &a);
        types[i] = a.ty;
        char part[96];
        type_mangle(part, sizeof part, a.ty);
        if (len < (int)sizeof name)
            len += snprintf(name + len, sizeof name - len, "%s%s", i ? "_" : ".", part);
    }
    if (!ok)
        return sv_bad();
    for (int i = 0; i < c->nfn_stack; i++)
        if (!strcmp(c->fn_stack[i], fn->name)) {
            sema_err(c, call, "recursive call to '%s'; recursion is not supported", fn->name);
            return sv_bad();
        }
    for (int i = 0; i < c->nfailed; i++)
        if (!strcmp(c->failed[i], name))
            return sv_bad(); /* reported at its first call */
    TirFunc *f = tir_module_find(c->m, name);
    if (!f) {
        if (c->nfn_stack >= (int)(sizeof c->fn_stack / sizeof c->fn_stack[0])) {
            sema_err(c, call, "device functions nested too deeply");
            return sv_bad();
        }
        int errors = c->d->nerrors;
        f = tir_func_new(c->m, TIR_FUNC_DEVICE, name, n, types, fn->params);
        f->loc = fn->loc;
        elaborate_fn(c, fn, f);
        if (c->d->nerrors != errors) {
            if (c->nfailed < (int)(sizeof c->failed / sizeof c->failed[0]))
                c->failed[c->nfailed++] = f->name;
            return sv_bad();
        }
    }
    c->inlined_extra += instance_size(c, f);
    char how[600];
    snprintf(how, sizeof how, "inlining '%s' here", fn->name);
    if (!check_growth(c, call, how, "call it from a loop instead of unrolling its calls"))
        return sv_bad();
    at(c, call);
    TirOp *op = tir_op_new(&c->b, TIR_OP_CALL, n, args, f->nret, f->ret, 0);
    op->attr.s = f->name;
    if (f->nret == 0)
        return (SVal){.is_void = true};
    return sv_value(op->res[0]);
}

/* ---- statements -------------------------------------------------------------------- */
/* Names assigned anywhere inside n (nested blocks included). */
static void collect_assigned(SemaCtx *c, const AstNode *n, Binding ***out, int *nout, int *cap, int depth) {
    if (!n || depth > MAX_NEST)
        return;
    if (n->kind == AST_ASSIGN) {
        Binding *b = lookup(c, n->name);
        if (b && b->kind == BIND_VAR) {
            for (int i = 0; i < *nout; i++)
                if ((*out)[i] == b)
                    return;
            if (*nout == *cap) {
                int nc = *cap ? *cap * 2 : 8;
                Binding **nb = tir_alloc(c->arena, sizeof(Binding *) * nc);
                if (*nout)
                    memcpy(nb, *out, sizeof(Binding *) * *nout);
                *out = nb;
                *cap = nc;
            }
            (*out)[(*nout)++] = b;
        }
        return;
    }
    if (n->kind == AST_BLOCK)
        for (int i = 0; i < n->nlist; i++)
            collect_assigned(c, n->list[i], out, nout, cap, depth + 1);
    if (n->kind == AST_FOR || n->kind == AST_IF) {
        collect_assigned(c, n->body, out, nout, cap, depth + 1);
        if (n->kind == AST_IF)
            collect_assigned(c, n->b, out, nout, cap, depth + 1);
    }
}

static void stmt_let(SemaCtx *c, const AstNode *n, bool is_var) {
    SVal v = sema_expr(c, n->a);
    if (v.is_void) {
        sema_err(c, n->a, "a call without a result used as a value");
        v = sv_bad();
    }
    if (is_var && !v.bad) {
        if (v.untyped)
            sema_type_literal(c, &v, v.c.is_float ? TIR_F32 : TIR_I32, n->a);
        at(c, n);
        sema_mat(c, &v);
        v.known = false;
    }
    if (!v.bad && v.v && !v.v->name && v.v->def)
        v.v->name = n->name;
    bind(c, n->name, v, is_var ? BIND_VAR : BIND_LET, n->loc);
}

static void stmt_assign(SemaCtx *c, const AstNode *n) {
    Binding *b = lookup(c, n->name);
    SVal rhs = sema_expr(c, n->a);
    if (!b) {
        bool is_const = (!c->fn && c->variant && tf_find_binding(c->variant->consts, c->variant->nconsts, n->name)) ||
                        tf_find_file_const(c->file, n->name) >= 0;
        if (is_const)
            sema_err(c, n, "cannot assign to '%s': it is a constant", n->name);
        else
            sema_err(c, n, "unknown name '%s'", n->name);
        return;
    }
    if (b->kind != BIND_VAR) {
        sema_err(c, n,
                 b->kind == BIND_LET ? "cannot assign to '%s': it is a let binding; use var"
                                     : "cannot assign to '%s': it is a parameter",
                 n->name);
        return;
    }
    if (rhs.bad || b->val.bad)
        return;
    if (n->op != AST_OP_NONE)
        rhs = sema_binop(c, n->op, b->val, rhs, n);
    if (rhs.bad)
        return;
    if (rhs.is_void) {
        sema_err(c, n->a, "a call without a result used as a value");
        return;
    }
    TirType want = b->val.ty;
    if (rhs.untyped && !want.ptr && want.kind == TIR_K_VALUE && !sema_type_literal(c, &rhs, (TirScalar)want.elem, n->a))
        return;
    bool same_elem = rhs.ty.kind == want.kind && rhs.ty.elem == want.elem && rhs.ty.ptr == want.ptr;
    int rank;
    int32_t shape[TIR_MAXRANK];
    bool fits = same_elem && sema_broadcast_shape(rhs.ty, want, &rank, shape) && rank == want.rank;
    for (int i = 0; fits && i < rank; i++)
        fits = shape[i] == want.shape[i];
    if (!fits) {
        sema_err(c, n, "cannot assign %s to '%s' of type %s", sema_type_str(c, rhs.ty), n->name,
                 sema_type_str(c, want));
        return;
    }
    at(c, n);
    TirValue *v = sema_broadcast_to(c, &rhs, want.rank, want.shape, n);
    if (!v)
        return;
    if (!v->name && v->def)
        v->name = n->name;
    b->val = sv_value(v);
}

static SVal range_bound(SemaCtx *c, const AstNode *n) {
    SVal v = sema_expr(c, n);
    if (v.bad)
        return v;
    if (v.is_void || v.ty.rank || v.ty.ptr || v.ty.kind != TIR_K_VALUE ||
        (v.untyped ? v.c.is_float : !tir_scalar_is_int((TirScalar)v.ty.elem) || v.ty.elem == TIR_I1)) {
        sema_err(c, n, "range bounds must be integer scalars");
        return sv_bad();
    }
    return v;
}

static void stmt_static_for(SemaCtx *c, const AstNode *n) {
    int64_t b[3] = {0, 0, 1};
    int nb = n->nlist;
    if (nb < 1 || nb > 3) {
        sema_err(c, n, "static_range takes 1 to 3 arguments, got %d", nb);
        return;
    }
    for (int i = 0; i < nb; i++) {
        SVal v = range_bound(c, n->list[i]);
        if (v.bad)
            return;
        if (!v.known) {
            sema_err(c, n->list[i], "static_range bounds must be compile-time constants");
            return;
        }
        b[nb == 1 ? 1 : i] = v.c.i;
    }
    if (b[2] <= 0) {
        sema_err(c, n, "static_range step must be positive");
        return;
    }
    uint64_t span = b[1] > b[0] ? (uint64_t)b[1] - (uint64_t)b[0] : 0; /* exact, even across the whole range */
    uint64_t trips = span / (uint64_t)b[2] + (span % (uint64_t)b[2] != 0);
    if (trips > MAX_UNROLL) {
        sema_err(c, n, "static_range unrolls more than %d iterations", MAX_UNROLL);
        return;
    }
    int64_t outer = c->unroll_product ? c->unroll_product : 1;
    if (trips && (uint64_t)outer * trips > TF_MAX_UNROLL_TOTAL) {
        sema_err(c, n,
                 "this static_range inside others unrolls %llu iterations in all, more than %d (2^20); "
                 "use range() for the outer loops",
                 (unsigned long long)((uint64_t)outer * trips), TF_MAX_UNROLL_TOTAL);
        return;
    }
    c->unroll_product = outer * (int64_t)trips;
    for (uint64_t t = 0; t < trips; t++) {
        int64_t i = (int64_t)((uint64_t)b[0] + t * (uint64_t)b[2]);
        if (!check_growth(c, n, "unrolling this static_range", "unroll less or use range()")) {
            c->unroll_product = outer;
            return;
        }
        Binding *saved = c->scope;
        bind(c, n->name, sv_known_int(i, true, i > INT32_MAX || i < INT32_MIN ? TIR_I64 : TIR_I32), BIND_LET, n->loc);
        int errs = c->d->nerrors;
        sema_block(c, n->body);
        scope_restore(c, saved);
        if (c->d->nerrors != errs)
            break; /* the same error in every iteration is noise */
    }
    c->unroll_product = outer;
}

static void stmt_for(SemaCtx *c, const AstNode *n) {
    if (n->ival) {
        stmt_static_for(c, n);
        return;
    }
    int nb = n->nlist;
    if (nb < 1 || nb > 3) {
        sema_err(c, n, "range takes 1 to 3 arguments, got %d", nb);
        return;
    }
    SVal b[3];
    bool ok = true;
    for (int i = 0; i < nb; i++)
        ok &= !(b[nb == 1 ? 1 : i] = range_bound(c, n->list[i])).bad;
    if (!ok)
        return;
    if (nb == 1)
        b[0] = sv_known_int(0, true, TIR_I32);
    if (nb < 3)
        b[2] = sv_known_int(1, true, TIR_I32);
    if (b[2].known && b[2].c.i <= 0) {
        sema_err(c, n->list[nb - 1], "range step must be positive");
        return;
    }
    if (!sema_unify(c, &b[0], &b[1], n) || !sema_unify(c, &b[1], &b[2], n) || !sema_unify(c, &b[0], &b[1], n))
        return;
    at(c, n);
    for (int i = 0; i < 3; i++) {
        if (b[i].untyped)
            sema_type_literal(c, &b[i], TIR_I32, n);
        sema_mat(c, &b[i]);
    }
    Binding **carried = NULL;
    int ncarried = 0, cap = 0;
    collect_assigned(c, n->body, &carried, &ncarried, &cap, 0);
    int nop = 3 + ncarried;
    TirValue **opnd = tir_alloc(c->arena, sizeof(TirValue *) * nop);
    TirType *rt = tir_alloc(c->arena, sizeof(TirType) * (ncarried ? ncarried : 1));
    for (int i = 0; i < 3; i++)
        opnd[i] = b[i].v;
    for (int i = 0; i < ncarried; i++) {
        if (carried[i]->val.bad)
            return;
        opnd[3 + i] = sema_mat(c, &carried[i]->val);
        rt[i] = carried[i]->val.ty;
    }
    TirOp *op = tir_op_new(&c->b, TIR_OP_FOR, nop, opnd, ncarried, rt, 1);
    TirBlock *body = op->region[0];
    TirValue *iv = tir_block_add_arg(body, b[0].ty);
    iv->name = n->name;
    for (int i = 0; i < ncarried; i++) {
        TirValue *arg = tir_block_add_arg(body, rt[i]);
        arg->name = carried[i]->name;
        carried[i]->val = sv_value(arg);
    }
    TirBuilder outer = c->b;
    tir_builder_at_end(&c->b, body);
    Binding *saved = c->scope;
    bind(c, n->name, sv_value(iv), BIND_LET, n->loc);
    sema_block(c, n->body);
    scope_restore(c, saved);
    TirValue **ys = tir_alloc(c->arena, sizeof(TirValue *) * (ncarried ? ncarried : 1));
    for (int i = 0; i < ncarried; i++)
        ys[i] = carried[i]->val.bad ? NULL : carried[i]->val.v;
    bool yok = true;
    for (int i = 0; i < ncarried; i++)
        yok &= ys[i] != NULL;
    at(c, n);
    if (yok)
        tir_op_new(&c->b, TIR_OP_YIELD, ncarried, ys, 0, NULL, 0);
    c->b = outer;
    for (int i = 0; i < ncarried; i++) {
        op->res[i]->name = carried[i]->name;
        carried[i]->val = sv_value(op->res[i]);
    }
}

static void stmt_if(SemaCtx *c, const AstNode *n) {
    SVal cond = sema_expr(c, n->a);
    if (cond.bad)
        return;
    if (cond.is_void || cond.ty.rank != 0 || cond.ty.ptr || cond.untyped || cond.ty.elem != TIR_I1) {
        sema_err(c, n->a, "an if condition must be a scalar bool, got %s",
                 cond.is_void ? "no value" : sema_type_str(c, cond.ty));
        return;
    }
    if (cond.known) { /* decided at compile time: only the taken branch exists */
        Binding *saved = c->scope;
        if (cond.c.i)
            sema_block(c, n->body);
        else if (n->b) {
            if (n->b->kind == AST_IF)
                stmt_if(c, n->b);
            else
                sema_block(c, n->b);
        }
        scope_restore(c, saved);
        return;
    }
    Binding **vars = NULL;
    int nvars = 0, cap = 0;
    collect_assigned(c, n->body, &vars, &nvars, &cap, 0);
    collect_assigned(c, n->b, &vars, &nvars, &cap, 0);
    SVal *orig = tir_alloc(c->arena, sizeof(SVal) * (nvars ? nvars : 1));
    TirType *rt = tir_alloc(c->arena, sizeof(TirType) * (nvars ? nvars : 1));
    for (int i = 0; i < nvars; i++) {
        if (vars[i]->val.bad)
            return;
        orig[i] = vars[i]->val;
        rt[i] = orig[i].ty;
    }
    at(c, n);
    TirValue *cv = sema_mat(c, &cond);
    TirOp *op = tir_op_new(&c->b, TIR_OP_IF, 1, &cv, nvars, rt, 2);
    TirBuilder outer = c->b;
    bool ok = true;
    for (int r = 0; r < 2; r++) {
        tir_builder_at_end(&c->b, op->region[r]);
        Binding *saved = c->scope;
        const AstNode *branch = r == 0 ? n->body : n->b;
        if (branch) {
            if (branch->kind == AST_IF)
                stmt_if(c, branch);
            else
                sema_block(c, branch);
        }
        scope_restore(c, saved);
        TirValue **ys = tir_alloc(c->arena, sizeof(TirValue *) * (nvars ? nvars : 1));
        for (int i = 0; i < nvars; i++) {
            ys[i] = vars[i]->val.bad ? NULL : vars[i]->val.v;
            ok &= ys[i] != NULL;
            vars[i]->val = orig[i];
        }
        at(c, n);
        if (ok)
            tir_op_new(&c->b, TIR_OP_YIELD, nvars, ys, 0, NULL, 0);
    }
    c->b = outer;
    for (int i = 0; i < nvars; i++) {
        op->res[i]->name = vars[i]->name;
        vars[i]->val = sv_value(op->res[i]);
    }
}

static void sema_stmt(SemaCtx *c, const AstNode *n) {
    if (++c->depth > MAX_NEST) {
        c->depth--;
        sema_err(c, n, "statements nested too deeply");
        return;
    }
    switch (n->kind) {
    case AST_LET: stmt_let(c, n, false); break;
    case AST_VAR: stmt_let(c, n, true); break;
    case AST_ASSIGN: stmt_assign(c, n); break;
    case AST_FOR: stmt_for(c, n); break;
    case AST_IF: stmt_if(c, n); break;
    case AST_BLOCK: {
        Binding *saved = c->scope;
        sema_block(c, n);
        scope_restore(c, saved);
        break;
    }
    case AST_RETURN:
        if (c->fn)
            sema_err(c, n, "'return' must be the last statement of function '%s'", c->fn->name);
        else if (n->a)
            sema_err(c, n, "kernels return nothing; use 'return;'");
        else {
            at(c, n);
            tir_op_new(&c->b, TIR_OP_RETURN, 0, NULL, 0, NULL, 0);
        }
        break;
    case AST_EXPR_STMT: sema_expr(c, n->a); break;
    default: sema_err(c, n, "not a statement"); break;
    }
    c->depth--;
}

static void sema_block(SemaCtx *c, const AstNode *blk) {
    if (!blk)
        return;
    Binding *saved = c->scope;
    if (blk->kind != AST_BLOCK)
        sema_stmt(c, blk);
    else
        for (int i = 0; i < blk->nlist; i++)
            sema_stmt(c, blk->list[i]);
    scope_restore(c, saved);
}

/* ---- the kernel ------------------------------------------------------------------- */
TirFunc *tf_elaborate(TirModule *m, const AstFile *f, int k, const TfVariant *v, TfDiag *d) {
    const AstKernel *kn = &f->kernels[k];
    int errors = d->nerrors;
    TirFunc *last = m->last;
    int np = 0;
    for (int i = 0; i < kn->nparams; i++)
        np += !kn->params[i].is_const;
    TirType *types = tir_alloc(m->arena, sizeof(TirType) * (np ? np : 1));
    const char **names = tir_alloc(m->arena, sizeof(char *) * (np ? np : 1));
    for (int i = 0, j = 0; i < kn->nparams; i++) {
        const AstParam *p = &kn->params[i];
        if (p->is_const)
            continue;
        int s = tir_scalar_from_name(p->type_name, strlen(p->type_name));
        if (s < 0) {
            tf_error(d, p->type_loc, p->type_end, "unknown type '%s'", p->type_name);
            return NULL;
        }
        types[j] = p->is_ptr ? tir_ptr_type((TirScalar)s) : tir_scalar_type((TirScalar)s);
        names[j++] = p->name;
    }
    TirFunc *fn = tir_func_new(m, TIR_FUNC_KERNEL, kn->name, np, types, names);
    fn->loc = kn->loc;
    fn->warps = v->warps;
    fn->stages = v->stages;
    /* the header prints warps and stages from their own fields */
    fn->consts = tir_alloc(m->arena, sizeof(TirConstBinding) * (v->nconsts ? v->nconsts : 1));
    for (int i = 0; i < v->nconsts; i++)
        if (tf_launch_shape(v->consts[i].name) == TF_LAUNCH_NONE)
            fn->consts[fn->nconsts++] = v->consts[i];
    SemaCtx c = {.m = m, .arena = m->arena, .file = f, .kernel = kn, .variant = v, .d = d};
    tir_builder_at_end(&c.b, fn->body);
    for (int i = 0; i < np; i++)
        bind(&c, names[i], sv_value(fn->body->args[i]), BIND_PARAM, kn->loc);
    sema_block(&c, kn->body);
    if (d->nerrors != errors) {
        /* drop the kernel and any device functions made for it */
        TirFunc *g = last ? last->next : m->first;
        while (g) {
            TirFunc *next = g->next;
            tir_module_remove(m, g);
            g = next;
        }
        return NULL;
    }
    return fn;
}
