/* Constant evaluation of clause-style expressions: file constants, tune values,
 * `const` clause items, `where` and `grid`.  Integers are 64-bit and wrap; a
 * division by zero or an unsupported construct is a failure, never a crash. */
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
    for (int i = 0; i < f->nconsts; i++)
        if (strcmp(f->consts[i].name, name) == 0)
            return i;
    return -1;
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

static double as_f(TfConst c) {
    return c.is_float ? c.f : (double)c.i;
}

static TfConst mk_i(int64_t v) {
    return (TfConst){false, v, 0};
}
static TfConst mk_f(double v) {
    return (TfConst){true, 0, v};
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

static TfEvalStatus eval_binary(AstOp op, TfConst a, TfConst b, TfConst *out) {
    bool fl = a.is_float || b.is_float;
    uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
    switch (op) {
    case AST_OP_OROR: *out = mk_i(tf_const_truthy(a) || tf_const_truthy(b)); return TF_EV_OK;
    case AST_OP_ANDAND: *out = mk_i(tf_const_truthy(a) && tf_const_truthy(b)); return TF_EV_OK;
    case AST_OP_EQ: *out = mk_i(fl ? as_f(a) == as_f(b) : a.i == b.i); return TF_EV_OK;
    case AST_OP_NE: *out = mk_i(fl ? as_f(a) != as_f(b) : a.i != b.i); return TF_EV_OK;
    case AST_OP_LT: *out = mk_i(fl ? as_f(a) < as_f(b) : a.i < b.i); return TF_EV_OK;
    case AST_OP_LE: *out = mk_i(fl ? as_f(a) <= as_f(b) : a.i <= b.i); return TF_EV_OK;
    case AST_OP_GT: *out = mk_i(fl ? as_f(a) > as_f(b) : a.i > b.i); return TF_EV_OK;
    case AST_OP_GE: *out = mk_i(fl ? as_f(a) >= as_f(b) : a.i >= b.i); return TF_EV_OK;
    case AST_OP_ADD: *out = fl ? mk_f(as_f(a) + as_f(b)) : mk_i((int64_t)(ua + ub)); return TF_EV_OK;
    case AST_OP_SUB: *out = fl ? mk_f(as_f(a) - as_f(b)) : mk_i((int64_t)(ua - ub)); return TF_EV_OK;
    case AST_OP_MUL: *out = fl ? mk_f(as_f(a) * as_f(b)) : mk_i((int64_t)(ua * ub)); return TF_EV_OK;
    case AST_OP_DIV:
    case AST_OP_REM:
        if (fl) {
            *out = mk_f(op == AST_OP_DIV ? as_f(a) / as_f(b) : fmod(as_f(a), as_f(b)));
            return TF_EV_OK;
        }
        if (b.i == 0 || (a.i == INT64_MIN && b.i == -1))
            return TF_EV_FAIL;
        *out = mk_i(op == AST_OP_DIV ? a.i / b.i : a.i % b.i);
        return TF_EV_OK;
    default: break;
    }
    if (fl)
        return TF_EV_FAIL; /* bitwise ops on floats */
    switch (op) {
    case AST_OP_OR: *out = mk_i(a.i | b.i); return TF_EV_OK;
    case AST_OP_XOR: *out = mk_i(a.i ^ b.i); return TF_EV_OK;
    case AST_OP_AND: *out = mk_i(a.i & b.i); return TF_EV_OK;
    case AST_OP_SHL: *out = mk_i(b.i < 0 || b.i >= 64 ? 0 : (int64_t)(ua << b.i)); return TF_EV_OK;
    case AST_OP_SHR: *out = mk_i(b.i < 0 || b.i >= 64 ? (a.i < 0 ? -1 : 0) : a.i >> b.i); return TF_EV_OK;
    default: return TF_EV_FAIL;
    }
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
    switch (f) {
    case CF_CDIV:
        if (v[0].is_float || v[1].is_float)
            return fail(e, n, "'%s' needs integers", "cdiv");
        if (v[1].i == 0)
            return TF_EV_FAIL;
        *out = mk_i((int64_t)((uint64_t)v[0].i + (uint64_t)v[1].i - 1) / v[1].i);
        return TF_EV_OK;
    case CF_MINIMUM:
    case CF_MAXIMUM: {
        bool lt = (v[0].is_float || v[1].is_float) ? as_f(v[0]) < as_f(v[1]) : v[0].i < v[1].i;
        TfConst r = (f == CF_MINIMUM) == lt ? v[0] : v[1];
        if (v[0].is_float || v[1].is_float)
            r = mk_f(as_f(r));
        *out = r;
        return TF_EV_OK;
    }
    default:
        if (v[0].is_float)
            return fail(e, n, "'%s' needs an integer", "next_pow2");
        *out = mk_i(tf_next_pow2(v[0].i));
        return TF_EV_OK;
    }
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
    case AST_BOOL: *out = mk_i(n->ival != 0); return TF_EV_OK;
    case AST_FLOAT: *out = mk_f(n->fval); return TF_EV_OK;
    case AST_NAME: return eval_name(&sub, n, out);
    case AST_UNARY: {
        TfConst a;
        TfEvalStatus s = tf_const_eval(&sub, n->a, &a);
        if (s != TF_EV_OK)
            return s;
        if (n->op == AST_OP_NEG)
            *out = a.is_float ? mk_f(-a.f) : mk_i((int64_t)(0 - (uint64_t)a.i));
        else if (n->op == AST_OP_NOT)
            *out = mk_i(!tf_const_truthy(a));
        else if (!a.is_float)
            *out = mk_i(~a.i);
        else
            return fail(e, n, "'~' needs an integer", NULL);
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
        return eval_binary(n->op, a, b, out);
    }
    case AST_CAST: {
        TfConst a;
        TfEvalStatus s = tf_const_eval(&sub, n->a, &a);
        if (s != TF_EV_OK)
            return s;
        int t = tir_scalar_from_name(n->name, strlen(n->name));
        if (t < 0)
            return fail(e, n, "unknown type '%s'", n->name);
        if (tir_scalar_is_float((TirScalar)t))
            *out = mk_f(tir_round_to((TirScalar)t, as_f(a)));
        else if (t == TIR_I1)
            *out = mk_i(tf_const_truthy(a));
        else if (a.is_float)
            *out = mk_i(tf_float_to_int((TirScalar)t, a.f));
        else {
            int64_t iv = a.i;
            int bits = tir_scalar_bits((TirScalar)t);
            if (bits < 64) {
                uint64_t mask = ((uint64_t)1 << bits) - 1, u = (uint64_t)iv & mask;
                if (tir_scalar_is_signed((TirScalar)t) && (u >> (bits - 1)) & 1)
                    u |= ~mask;
                iv = (int64_t)u;
            }
            *out = mk_i(iv);
        }
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
        grid[i] = c.is_float ? (int64_t)c.f : c.i;
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
