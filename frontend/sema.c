/* Whole-file checks (tf_check): what holds for every variant.  Names declared twice,
 * unknown parameter types, clause rules, and clause expressions limited to scalar
 * arithmetic over constants and scalar arguments.  Body checks that need types and
 * shapes happen per variant in elaborate.c. */
#include "sema_internal.h"

#include <string.h>

typedef struct Checker {
    const AstFile *f;
    TfDiag *d;
    int errors;
} Checker;

#define CHK_ERR(ck, loc, end, ...)                    \
    do {                                              \
        tf_error((ck)->d, (loc), (end), __VA_ARGS__); \
        (ck)->errors++;                               \
    } while (0)

static bool is_type_name(const char *s) {
    return tir_scalar_from_name(s, strlen(s)) >= 0;
}

/* Top-level names share one namespace: kernels, functions and file constants. */
/* The i-th top-level name (constants, then functions, then kernels) and its span. */
static const char *top_name(const AstFile *f, int i, uint32_t *loc, uint32_t *end) {
    if (i < f->nconsts) {
        *loc = f->consts[i].loc, *end = f->consts[i].end;
        return f->consts[i].name;
    }
    i -= f->nconsts;
    if (i < f->nfns) {
        *loc = f->fns[i].loc, *end = f->fns[i].end;
        return f->fns[i].name;
    }
    i -= f->nfns;
    *loc = f->kernels[i].loc, *end = f->kernels[i].end;
    return f->kernels[i].name;
}

static uint32_t top_name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Top-level names are unique.  A hash of the names seen so far finds the first
 * definition of a duplicate, so 100,000 kernels or functions check in linear time (a
 * comparison with every earlier name took seconds). */
static void check_top_names(TirArena *a, Checker *ck, AstFile *f) {
    int n = f->nconsts + f->nfns + f->nkernels;
    size_t nslots = 16;
    while (nslots < 2 * (size_t)n)
        nslots *= 2;
    int32_t *slots = tir_alloc(a, nslots * sizeof *slots);
    memset(slots, 0xff, nslots * sizeof *slots); /* every slot empty (-1) */
    for (int i = 0; i < n; i++) {
        uint32_t loc, end;
        const char *name = top_name(f, i, &loc, &end);
        if (i >= f->nconsts && i < f->nconsts + f->nfns && (sema_is_builtin(name) || tf_clause_fn(name) >= 0))
            CHK_ERR(ck, loc, end, "function '%s' has the name of a builtin", name);
        if (is_type_name(name))
            CHK_ERR(ck, loc, end, "'%s' is a type name", name);
        size_t h = top_name_hash(name) & (nslots - 1);
        for (; slots[h] >= 0; h = (h + 1) & (nslots - 1)) {
            uint32_t ploc, pend;
            if (strcmp(top_name(f, slots[h], &ploc, &pend), name) == 0) {
                CHK_ERR(ck, loc, end, "'%s' is defined twice", name);
                tf_note(ck->d, ploc, pend, "first defined here");
                break;
            }
        }
        if (slots[h] < 0)
            slots[h] = i;
    }
    f->top_index = slots;
    f->top_index_cap = (uint32_t)nslots;
}

int tf_find_top(const AstFile *f, const char *name) {
    if (!f->top_index) {
        int n = f->nconsts + f->nfns + f->nkernels;
        for (int i = 0; i < n; i++) {
            uint32_t loc, end;
            if (!strcmp(top_name(f, i, &loc, &end), name))
                return i;
        }
        return -1;
    }
    for (size_t h = top_name_hash(name) & (f->top_index_cap - 1); f->top_index[h] >= 0;
         h = (h + 1) & (f->top_index_cap - 1)) {
        uint32_t loc, end;
        if (!strcmp(top_name(f, f->top_index[h], &loc, &end), name))
            return f->top_index[h];
    }
    return -1;
}

/* Whether a clause expression gives a float, read from its form (float literals and
 * parameters, casts to floats, arithmetic on them), for the grid's check: a grid of
 * 1.5 programs is a mistake, not one program. */
static bool clause_expr_is_float(const Checker *ck, const AstKernel *k, const AstNode *n, int depth) {
    if (!n || depth > 200)
        return false;
    switch (n->kind) {
    case AST_FLOAT: return true;
    case AST_NAME: {
        int p = tf_find_param(k, n->name);
        if (p >= 0) {
            const char *tn = k->params[p].type_name;
            int s = tn ? tir_scalar_from_name(tn, strlen(tn)) : -1;
            return !k->params[p].is_ptr && s >= 0 && tir_scalar_is_float((TirScalar)s);
        }
        int fc = tf_find_file_const(ck->f, n->name);
        if (fc >= 0) {
            TfEvalEnv e = {.file = ck->f, .nfile_consts = fc};
            TfConst c;
            return tf_const_eval(&e, ck->f->consts[fc].value, &c) == TF_EV_OK && c.is_float;
        }
        return !strcmp(n->name, "inf") || !strcmp(n->name, "nan");
    }
    case AST_UNARY: return n->op == AST_OP_NEG && clause_expr_is_float(ck, k, n->a, depth + 1);
    case AST_BINARY:
        if (n->op == AST_OP_OROR || n->op == AST_OP_ANDAND || (n->op >= AST_OP_EQ && n->op <= AST_OP_GE))
            return false;
        return clause_expr_is_float(ck, k, n->a, depth + 1) || clause_expr_is_float(ck, k, n->b, depth + 1);
    case AST_CAST: {
        int t = tir_scalar_from_name(n->name, strlen(n->name));
        return t >= 0 && tir_scalar_is_float((TirScalar)t);
    }
    case AST_CALL:
        if (n->name && (!strcmp(n->name, "minimum") || !strcmp(n->name, "maximum")) && n->nlist == 2)
            return clause_expr_is_float(ck, k, n->list[0], depth + 1) ||
                   clause_expr_is_float(ck, k, n->list[1], depth + 1);
        return false;
    default: return false;
    }
}

/* The constructs a clause expression may use.  `what` names the clause in messages. */
static void check_clause_expr(Checker *ck, const AstKernel *k, const AstNode *n, const char *what, int depth) {
    if (!n)
        return;
    if (depth > 200) {
        CHK_ERR(ck, n->loc, n->end, "expression too deeply nested");
        return;
    }
    switch (n->kind) {
    case AST_INT:
    case AST_FLOAT:
    case AST_BOOL: return;
    case AST_NAME: {
        const char *name = n->name;
        if (k) {
            int p = tf_find_param(k, name);
            if (p >= 0) {
                if (k->params[p].is_ptr)
                    CHK_ERR(ck, n->loc, n->end, "pointer parameter '%s' cannot be used in a %s clause", name, what);
                return;
            }
            for (int i = 0; i < k->ntunes; i++)
                if (strcmp(k->tunes[i].name, name) == 0)
                    return;
            for (int i = 0; i < k->nconsts; i++)
                if (strcmp(k->consts[i].name, name) == 0)
                    return;
        }
        if (tf_find_file_const(ck->f, name) >= 0)
            return;
        if (!strcmp(name, "inf") || !strcmp(name, "nan"))
            return;
        if (tf_launch_shape(name) != TF_LAUNCH_NONE)
            return;
        /* the target's shared memory per CTA, in bytes (constant where clauses) */
        if (!strcmp(name, "SMEM_MAX") && !strcmp(what, "where"))
            return;
        CHK_ERR(ck, n->loc, n->end, "unknown name '%s' in %s clause", name, what);
        return;
    }
    case AST_UNARY: check_clause_expr(ck, k, n->a, what, depth + 1); return;
    case AST_BINARY:
        check_clause_expr(ck, k, n->a, what, depth + 1);
        check_clause_expr(ck, k, n->b, what, depth + 1);
        return;
    case AST_CAST:
        if (!is_type_name(n->name))
            CHK_ERR(ck, n->loc, n->end, "unknown type '%s'", n->name);
        check_clause_expr(ck, k, n->a, what, depth + 1);
        return;
    case AST_CALL: {
        int f = tf_clause_fn(n->name);
        if (f < 0) {
            CHK_ERR(ck, n->loc, n->end,
                    "'%s' cannot be used in a %s clause; clause expressions allow cdiv, minimum, "
                    "maximum and next_pow2",
                    n->name, what);
            return;
        }
        int want = f == 3 ? 1 : 2;
        if (n->nlist != want || n->nnamed)
            CHK_ERR(ck, n->loc, n->end, "'%s' takes %d argument%s, got %d", n->name, want, want == 1 ? "" : "s",
                    n->nlist + n->nnamed);
        for (int i = 0; i < n->nlist; i++)
            check_clause_expr(ck, k, n->list[i], what, depth + 1);
        return;
    }
    case AST_INDEX:
    case AST_LIST: CHK_ERR(ck, n->loc, n->end, "a %s clause works on scalars; tiles are not allowed", what); return;
    default: CHK_ERR(ck, n->loc, n->end, "not allowed in a %s clause", what); return;
    }
}

static void check_file_consts(Checker *ck) {
    const AstFile *f = ck->f;
    for (int i = 0; i < f->nconsts; i++) {
        int before = ck->d->nerrors;
        check_clause_expr(ck, NULL, f->consts[i].value, "const", 0);
        if (ck->d->nerrors != before)
            continue;
        TfEvalEnv e = {.file = f, .diag = ck->d, .nfile_consts = i};
        TfConst c;
        TfEvalStatus s = tf_const_eval(&e, f->consts[i].value, &c);
        if (s != TF_EV_OK && ck->d->nerrors == before)
            CHK_ERR(ck, f->consts[i].value->loc, f->consts[i].value->end, "constant '%s' is not a constant expression",
                    f->consts[i].name);
        else if (s != TF_EV_OK)
            ck->errors++;
    }
}

static void check_fn(Checker *ck, const AstFn *fn) {
    for (int i = 0; i < fn->nparams; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(fn->params[i], fn->params[j]) == 0) {
                uint32_t loc = fn->param_locs ? fn->param_locs[i] : fn->loc;
                CHK_ERR(ck, loc, loc + (uint32_t)strlen(fn->params[i]),
                        "parameter '%s' of function '%s' is declared twice", fn->params[i], fn->name);
                break;
            }
}

/* A clause constant (tune or const item, or warps/stages) must not clash with a
 * parameter or another constant of the kernel. */
static void check_clause_name(Checker *ck, const AstKernel *k, const AstBinding *b, int idx, bool is_tune) {
    int p = tf_find_param(k, b->name);
    if (p >= 0) {
        CHK_ERR(ck, b->loc, b->end, "%s constant '%s' clashes with parameter '%s'", is_tune ? "tune" : "const", b->name,
                b->name);
        tf_note(ck->d, k->params[p].loc, k->params[p].end, "parameter declared here");
        return;
    }
    int total = is_tune ? idx : k->ntunes + idx;
    for (int j = 0; j < total; j++) {
        const AstBinding *o = j < k->ntunes ? &k->tunes[j] : &k->consts[j - k->ntunes];
        if (strcmp(o->name, b->name) == 0) {
            CHK_ERR(ck, b->loc, b->end, "constant '%s' is defined twice in kernel '%s'", b->name, k->name);
            tf_note(ck->d, o->loc, o->end, "first defined here");
            return;
        }
    }
}

/* Values of warps/stages must be positive integers; other values must be constant. */
static void check_clause_value(Checker *ck, const AstKernel *k, const AstBinding *b, const AstNode *v) {
    bool launch = tf_launch_shape(b->name) != TF_LAUNCH_NONE;
    TfEvalEnv e = {.file = ck->f, .kernel = k, .diag = ck->d, .nfile_consts = -1};
    TfConst c;
    int before = ck->d->nerrors;
    TfEvalStatus s = tf_const_eval(&e, v, &c);
    if (s == TF_EV_RUNTIME) {
        /* const items may name tuned constants or const params: checked per variant */
        return;
    }
    if (s == TF_EV_FAIL) {
        if (ck->d->nerrors == before)
            CHK_ERR(ck, v->loc, v->end, "the value of '%s' is not a constant expression", b->name);
        else
            ck->errors++;
        return;
    }
    if (launch && (c.is_float || c.i <= 0))
        CHK_ERR(ck, v->loc, v->end, "'%s' must be a positive integer", b->name);
}

static void check_kernel(Checker *ck, const AstKernel *k) {
    for (int i = 0; i < k->nparams; i++) {
        const AstParam *p = &k->params[i];
        if (!is_type_name(p->type_name))
            CHK_ERR(ck, p->type_loc, p->type_end, "unknown type '%s'", p->type_name);
        else if (p->is_const && p->is_ptr)
            CHK_ERR(ck, p->loc, p->end, "const parameter '%s' cannot be a pointer", p->name);
        for (int j = 0; j < i; j++)
            if (strcmp(k->params[j].name, p->name) == 0) {
                CHK_ERR(ck, p->loc, p->end, "parameter '%s' of kernel '%s' is declared twice", p->name, k->name);
                tf_note(ck->d, k->params[j].loc, k->params[j].end, "first declared here");
                break;
            }
    }
    for (int i = 0; i < k->nrepeated; i++)
        CHK_ERR(ck, k->repeated_clause_loc[i], k->repeated_clause_loc[i], "the '%s' clause may be given only once",
                k->repeated_clause_name[i]);
    for (int i = 0; i < k->ntunes; i++) {
        const AstBinding *b = &k->tunes[i];
        check_clause_name(ck, k, b, i, true);
        if (!b->value || b->value->kind != AST_LIST || b->value->nlist == 0) {
            CHK_ERR(ck, b->loc, b->end, "tune '%s' needs a non-empty list of values", b->name);
            continue;
        }
        for (int j = 0; j < b->value->nlist; j++) {
            int before = ck->d->nerrors;
            check_clause_expr(ck, NULL, b->value->list[j], "tune", 0);
            if (ck->d->nerrors == before)
                check_clause_value(ck, k, b, b->value->list[j]);
        }
    }
    for (int i = 0; i < k->nconsts; i++) {
        const AstBinding *b = &k->consts[i];
        check_clause_name(ck, k, b, i, false);
        int before = ck->d->nerrors;
        check_clause_expr(ck, k, b->value, "const", 0);
        if (ck->d->nerrors == before)
            check_clause_value(ck, k, b, b->value);
    }
    for (int i = 0; i < k->nwheres; i++)
        check_clause_expr(ck, k, k->wheres[i], "where", 0);
    if (k->ngrid > 3)
        CHK_ERR(ck, k->grid_loc, k->grid_loc, "a grid has at most 3 dimensions, got %d", k->ngrid);
    for (int i = 0; i < k->ngrid; i++) {
        int before = ck->d->nerrors;
        check_clause_expr(ck, k, k->grid[i], "grid", 0);
        if (ck->d->nerrors == before && clause_expr_is_float(ck, k, k->grid[i], 0))
            CHK_ERR(ck, k->grid[i]->loc, k->grid[i]->end,
                    "a grid dimension counts programs: it must be an integer, not a float (use `as i32`)");
    }
    for (int i = 0; i < k->nkey; i++) {
        const AstNode *n = k->key[i];
        int p = n->kind == AST_NAME ? tf_find_param(k, n->name) : -1;
        if (p < 0) {
            CHK_ERR(ck, n->loc, n->end, "key '%s' is not a parameter of kernel '%s'",
                    n->kind == AST_NAME ? n->name : "?", k->name);
            continue;
        }
        const AstParam *pr = &k->params[p];
        int s = tir_scalar_from_name(pr->type_name, strlen(pr->type_name));
        if (pr->is_ptr || pr->is_const || s < 0 || !tir_scalar_is_int((TirScalar)s))
            CHK_ERR(ck, n->loc, n->end, "key '%s' must be an integer scalar parameter", n->name);
    }
}

int tf_check(TirArena *a, AstFile *f, TfDiag *d) {
    Checker ck = {f, d, 0};
    int before = d->nerrors;
    check_top_names(a, &ck, f);
    check_file_consts(&ck);
    for (int i = 0; i < f->nfns; i++)
        check_fn(&ck, &f->fns[i]);
    for (int i = 0; i < f->nkernels; i++)
        check_kernel(&ck, &f->kernels[i]);
    return d->nerrors - before;
}
