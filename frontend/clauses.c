/* Constant evaluation of clause-style expressions: file constants, tune values,
 * `const` clause items, `where` and `grid`.  Values are typed as in a kernel body
 * (literals untyped until they meet a type, run-time arguments of their parameter's
 * type) and every op is folded by const_fold.c with the run-time semantics; an
 * unsupported construct is a failure, never a crash. */
#include "sema_internal.h"

#include <math.h>
#include <string.h>

static const char *const clause_fns[] = {"cdiv", "minimum", "maximum", "next_pow2"};
enum { CF_CDIV, CF_MINIMUM, CF_MAXIMUM, CF_NEXT_POW2, CF_COUNT };
static const int clause_fn_arity[CF_COUNT] = {2, 2, 2, 1};

int tf_clause_fn(const char *name) {
    for (int i = 0; i < CF_COUNT; i++)
        if (strcmp(name, clause_fns[i]) == 0)
            return i;
    return -1;
}

int64_t tf_next_pow2(int64_t x) {
    int64_t p = 1;
    while (p < x && p < ((int64_t)1 << 62))
        p <<= 1;
    return p;
}

int tf_find_file_const(const AstFile *f, const char *name) {
    int i = tf_find_top(f, name);
    return i < f->nconsts ? i : -1;
}

int tf_find_param(const AstKernel *k, const char *name) {
    for (int i = 0; i < k->nparams; i++)
        if (strcmp(k->params[i].name, name) == 0)
            return i;
    return -1;
}

const TirConstBinding *tf_find_binding(const TirConstBinding *b, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(b[i].name, name) == 0)
            return &b[i];
    return NULL;
}

bool tf_const_truthy(TfConst c) {
    return c.is_float ? c.f != 0.0 : c.i != 0;
}

static TfConst mk_i(int64_t v) {
    return (TfConst){false, v, (double)v, false, 0};
}
static TfConst mk_f(double v) {
    return (TfConst){true, 0, v, false, 0};
}
static TfConst mk_bool(bool v) {
    return (TfConst){false, v, v, true, TIR_I1};
}

/* float -> integer as the IR casts (docs/ir.md), the interpreter and the GPU compute it:
 * saturating.  (Wrapping here, `3e9 as i32` folded to -1294967296 where the run gives
 * 2147483647.) */
int64_t tf_float_to_int(TirScalar s, double x) {
    return tir_float_to_int(s, x);
}

static TfEvalStatus fail(TfEvalEnv *e, const AstNode *n, const char *msg, const char *name) {
    if (e->diag) {
        if (name)
            tf_error(e->diag, n->loc, n->end, msg, name);
        else
            tf_error(e->diag, n->loc, n->end, "%s", msg);
    }
    return TF_EV_FAIL;
}

static TfEvalStatus eval_name(TfEvalEnv *e, const AstNode *n, TfConst *out) {
    const char *name = n->name;
    const TirConstBinding *b = tf_find_binding(e->consts, e->nconsts, name);
    if (b) {
        *out = b->is_float ? mk_f(b->fval) : mk_i(b->ival);
        return TF_EV_OK;
    }
    if (e->kernel) {
        int p = tf_find_param(e->kernel, name);
        if (p >= 0) {
            const AstParam *pr = &e->kernel->params[p];
            if (pr->is_const)
                return TF_EV_RUNTIME; /* bound only per variant */
            if (pr->is_ptr)
                return fail(e, n, "pointer parameter '%s' has no value here", name);
            if (!e->args)
                return TF_EV_RUNTIME;
            int s = tir_scalar_from_name(pr->type_name, strlen(pr->type_name));
            if (s >= 0 && tir_scalar_is_float((TirScalar)s))
                *out = mk_f(e->args[p].fval);
            else
                *out = mk_i(e->args[p].ival);
            if (s >= 0)
                *out = tf_const_convert(*out, tf_const_source_type(*out), (TirScalar)s);
            return TF_EV_OK;
        }
        /* tuned and fixed constants are bound only per variant */
        for (int i = 0; i < e->kernel->ntunes; i++)
            if (!strcmp(e->kernel->tunes[i].name, name))
                return TF_EV_RUNTIME;
        for (int i = 0; i < e->kernel->nconsts; i++)
            if (!strcmp(e->kernel->consts[i].name, name))
                return TF_EV_RUNTIME;
    }
    int fc = tf_find_file_const(e->file, name);
    if (fc >= 0 && (e->nfile_consts < 0 || fc < e->nfile_consts)) {
        if (e->depth > 64)
            return fail(e, n, "constant '%s' is defined in terms of itself", name);
        TfEvalEnv sub = *e;
        sub.kernel = NULL;
        sub.consts = NULL;
        sub.nconsts = 0;
        sub.nfile_consts = fc; /* a file constant sees only the ones before it */
        sub.depth = e->depth + 1;
        sub.diag = NULL; /* its own errors were reported where it is defined */
        return tf_const_eval(&sub, e->file->consts[fc].value, out);
    }
    if (strcmp(name, "inf") == 0) {
        *out = mk_f(INFINITY);
        return TF_EV_OK;
    }
    if (strcmp(name, "nan") == 0) {
        *out = mk_f(NAN);
        return TF_EV_OK;
    }
    return fail(e, n, "unknown name '%s'", name);
}

/* The type a op b is computed in, as in a kernel body: a literal takes the other
 * operand's type; two literals are i32 (i64 for a value beyond i32, f32 for floats);
 * integers of two types promote to the wider.  Fails on float and integer mixed. */
static bool binary_type(TfConst a, TfConst b, TirScalar *t, const char **why) {
    if (!a.typed && !b.typed) {
        if (a.is_float || b.is_float)
            *t = TIR_F32;
        else {
            bool wide = a.i > INT32_MAX || a.i < INT32_MIN || b.i > INT32_MAX || b.i < INT32_MIN;
            *t = wide ? TIR_I64 : TIR_I32;
        }
        return true;
    }
    TirScalar ta = a.typed ? (TirScalar)a.ty : (TirScalar)b.ty, tb = b.typed ? (TirScalar)b.ty : ta;
    bool fa = a.typed ? tir_scalar_is_float(ta) : a.is_float, fb = b.typed ? tir_scalar_is_float(tb) : b.is_float;
    if (fa != fb && (a.typed && b.typed)) {
        *why = "cannot mix a float and an integer without `as`";
        return false;
    }
    if ((!a.typed && a.is_float && !tir_scalar_is_float(tb)) || (!b.typed && b.is_float && !tir_scalar_is_float(ta))) {
        *why = "a float literal cannot be used as an integer; use `as`";
        return false;
    }
    if (ta == tb) {
        *t = ta;
        return true;
    }
    if (tir_scalar_is_float(ta) || tir_scalar_is_float(tb)) {
        *why = "mixed float types need `as`";
        return false;
    }
    *t = tf_promote_ints(ta, tb);
    return true;
}

static TfEvalStatus eval_binary(TfEvalEnv *e, const AstNode *n, TfConst a, TfConst b, TfConst *out) {
    AstOp op = n->op;
    if (op == AST_OP_OROR || op == AST_OP_ANDAND) {
        bool x = tf_const_truthy(a), y = tf_const_truthy(b);
        *out = mk_bool(op == AST_OP_OROR ? x || y : x && y);
        return TF_EV_OK;
    }
    TirScalar t;
    const char *why = NULL;
    if (!binary_type(a, b, &t, &why))
        return fail(e, n, why, NULL);
    if ((!a.typed && !tf_const_fits(a, t)) || (!b.typed && !tf_const_fits(b, t)))
        return fail(e, n, "an integer constant does not fit the type it meets; use `as` to wrap it", NULL);
    if (!tf_fold_binop(op, t, a, b, out))
        return fail(e, n, "operator '%s' does not apply to these constants", ast_op_text[op]);
    if (!a.typed && !b.typed && out->ty != TIR_I1)
        out->typed = false; /* two literals give a literal */
    return TF_EV_OK;
}

static TfEvalStatus eval_call(TfEvalEnv *e, const AstNode *n, TfConst *out) {
    int f = tf_clause_fn(n->name);
    if (f < 0)
        return fail(e, n,
                    "'%s' cannot be used here; clause expressions allow cdiv, minimum, "
                    "maximum and next_pow2",
                    n->name);
    if (n->nlist != clause_fn_arity[f] || n->nnamed)
        return fail(e, n, "wrong number of arguments to '%s'", n->name);
    TfConst v[2];
    TfEvalStatus worst = TF_EV_OK;
    for (int i = 0; i < n->nlist; i++) {
        TfEvalStatus s = tf_const_eval(e, n->list[i], &v[i]);
        if (s == TF_EV_FAIL)
            return s;
        if (s == TF_EV_RUNTIME)
            worst = s;
    }
    if (worst != TF_EV_OK)
        return worst;
    TirScalar t = TIR_I32;
    const char *why = NULL;
    if (f != CF_NEXT_POW2 && !binary_type(v[0], v[1], &t, &why))
        return fail(e, n, why, NULL);
    bool literal = !v[0].typed && (f == CF_NEXT_POW2 || !v[1].typed);
    switch (f) {
    case CF_CDIV: {
        if (v[0].is_float || v[1].is_float || tir_scalar_is_float(t))
            return fail(e, n, "'%s' needs integers", "cdiv");
        /* (a + b - 1) / b, as the kernel body computes it */
        TfConst s1, s2;
        if (!tf_fold_binop(AST_OP_ADD, t, v[0], v[1], &s1) || !tf_fold_binop(AST_OP_SUB, t, s1, mk_i(1), &s2) ||
            !tf_fold_binop(AST_OP_DIV, t, s2, v[1], out))
            return TF_EV_FAIL;
        break;
    }
    case CF_MINIMUM:
    case CF_MAXIMUM: {
        TfConst in[2] = {tf_const_convert(v[0], tf_const_source_type(v[0]), t),
                         tf_const_convert(v[1], tf_const_source_type(v[1]), t)};
        TirKonst k[2] = {{in[0].is_float, in[0].i, in[0].f}, {in[1].is_float, in[1].i, in[1].f}}, r;
        if (!tir_fold_elem(f == CF_MINIMUM ? TIR_OP_MINIMUM : TIR_OP_MAXIMUM, 0, t, t, k, &r))
            return TF_EV_FAIL;
        *out = (TfConst){r.is_float, r.i, r.is_float ? r.f : (double)r.i, true, (uint8_t)t};
        break;
    }
    default:
        if (v[0].is_float || (v[0].typed && tir_scalar_is_float((TirScalar)v[0].ty)))
            return fail(e, n, "'%s' needs an integer", "next_pow2");
        *out = mk_i(tf_next_pow2(v[0].i));
        if (v[0].typed)
            *out = tf_const_convert(*out, TIR_I64, (TirScalar)v[0].ty);
        break;
    }
    if (literal)
        out->typed = false;
    return TF_EV_OK;
}

TfEvalStatus tf_const_eval(TfEvalEnv *e, const AstNode *n, TfConst *out) {
    if (!n)
        return TF_EV_FAIL;
    if (e->depth > 200)
        return fail(e, n, "expression too deeply nested", NULL);
    TfEvalEnv sub = *e;
    sub.depth = e->depth + 1;
    switch (n->kind) {
    case AST_INT: *out = mk_i(n->ival); return TF_EV_OK;
    case AST_BOOL: *out = mk_bool(n->ival != 0); return TF_EV_OK;
    case AST_FLOAT: *out = mk_f(n->fval); return TF_EV_OK;
    case AST_NAME: return eval_name(&sub, n, out);
    case AST_UNARY: {
        TfConst a;
        TfEvalStatus s = tf_const_eval(&sub, n->a, &a);
        if (s != TF_EV_OK)
            return s;
        if (n->op == AST_OP_NOT) {
            *out = mk_bool(!tf_const_truthy(a));
            return TF_EV_OK;
        }
        if (a.is_float && n->op != AST_OP_NEG)
            return fail(e, n, "'~' needs an integer", NULL);
        TirScalar t = tf_const_source_type(a);
        tf_fold_unop(n->op == AST_OP_NEG ? TIR_OP_NEG : TIR_OP_NOT, t, a, out);
        out->typed = a.typed;
        return TF_EV_OK;
    }
    case AST_BINARY: {
        TfConst a, b;
        TfEvalStatus sa = tf_const_eval(&sub, n->a, &a);
        if (sa == TF_EV_FAIL)
            return sa;
        TfEvalStatus sb = tf_const_eval(&sub, n->b, &b);
        if (sb == TF_EV_FAIL)
            return sb;
        if (sa != TF_EV_OK || sb != TF_EV_OK)
            return TF_EV_RUNTIME;
        return eval_binary(e, n, a, b, out);
    }
    case AST_CAST: {
        TfConst a;
        TfEvalStatus s = tf_const_eval(&sub, n->a, &a);
        if (s != TF_EV_OK)
            return s;
        int t = tir_scalar_from_name(n->name, strlen(n->name));
        if (t < 0)
            return fail(e, n, "unknown type '%s'", n->name);
        *out = tf_const_convert(a, tf_const_source_type(a), (TirScalar)t);
        return TF_EV_OK;
    }
    case AST_CALL: return eval_call(&sub, n, out);
    default: return fail(e, n, "not a constant expression", NULL);
    }
}

/* ---- launch-time clauses ---------------------------------------------------------- */
static TfEvalEnv launch_env(const AstFile *f, int k, const TfVariant *v, const TfArgValue *args) {
    return (TfEvalEnv){.file = f,
                       .kernel = &f->kernels[k],
                       .consts = v ? v->consts : NULL,
                       .nconsts = v ? v->nconsts : 0,
                       .args = args,
                       .nfile_consts = -1};
}

int tf_eval_grid(const AstFile *f, int k, const TfVariant *v, const TfArgValue *args, int64_t grid[3]) {
    const AstKernel *kn = &f->kernels[k];
    if (kn->ngrid == 0)
        return -1;
    TfEvalEnv e = launch_env(f, k, v, args);
    for (int i = 0; i < 3; i++)
        grid[i] = 1;
    for (int i = 0; i < kn->ngrid && i < 3; i++) {
        TfConst c;
        if (tf_const_eval(&e, kn->grid[i], &c) != TF_EV_OK)
            return i + 1;
        if (c.is_float)
            return i + 1; /* sema refuses a float grid value; a define can still give one */
        grid[i] = c.i;
    }
    return 0;
}

int tf_eval_where(const AstFile *f, int k, const TfVariant *v, const TfArgValue *args) {
    const AstKernel *kn = &f->kernels[k];
    TfEvalEnv e = launch_env(f, k, v, args);
    for (int i = 0; i < kn->nwheres; i++) {
        if (!tf_where_is_runtime(f, k, i))
            continue;
        TfConst c;
        if (tf_const_eval(&e, kn->wheres[i], &c) != TF_EV_OK || !tf_const_truthy(c))
            return i;
    }
    return -1;
}

static bool names_runtime_param(const AstKernel *k, const AstNode *n, int depth) {
    if (!n || depth > 200)
        return false;
    if (n->kind == AST_NAME) {
        int p = tf_find_param(k, n->name);
        return p >= 0 && !k->params[p].is_const;
    }
    if (names_runtime_param(k, n->a, depth + 1) || names_runtime_param(k, n->b, depth + 1))
        return true;
    for (int i = 0; i < n->nlist; i++)
        if (names_runtime_param(k, n->list[i], depth + 1))
            return true;
    return false;
}

bool tf_where_is_runtime(const AstFile *f, int k, int i) {
    const AstKernel *kn = &f->kernels[k];
    if (i < 0 || i >= kn->nwheres)
        return false;
    return names_runtime_param(kn, kn->wheres[i], 0);
}
