/* Variant expansion (tf_variants): the product of the tune lists, with -D values
 * replacing lists and fixing const parameters, then pruned by the `where` clauses
 * that name constants only. */
#include "sema_internal.h"

#include <string.h>

#define MAX_VARIANTS 65536

/* One dimension of the product: a name and its candidate values. */
typedef struct Axis {
    const char *name;
    TfConst *vals;
    int32_t nvals;
} Axis;

static const TfDefine *find_define(const TfDefine *defs, int ndefs, const char *name) {
    for (int i = 0; i < ndefs; i++)
        if (strcmp(defs[i].name, name) == 0)
            return &defs[i];
    return NULL;
}

static TfConst define_value(const TfDefine *d, int i) {
    bool fl = d->is_float && d->is_float[i];
    return (TfConst){fl, fl ? 0 : d->ivals[i], fl ? d->fvals[i] : (double)d->ivals[i], false, 0};
}

static Axis axis_from_define(TirArena *a, const TfDefine *def) {
    Axis ax = {def->name, tir_alloc(a, sizeof(TfConst) * (def->nvals ? def->nvals : 1)), def->nvals};
    for (int i = 0; i < def->nvals; i++)
        ax.vals[i] = define_value(def, i);
    return ax;
}

static bool known_name(const AstKernel *k, const char *name) {
    if (tf_find_param(k, name) >= 0) {
        return k->params[tf_find_param(k, name)].is_const;
    }
    for (int i = 0; i < k->ntunes; i++)
        if (!strcmp(k->tunes[i].name, name))
            return true;
    for (int i = 0; i < k->nconsts; i++)
        if (!strcmp(k->consts[i].name, name))
            return true;
    return tf_launch_shape(name) != TF_LAUNCH_NONE;
}

TfLaunchShape tf_launch_shape(const char *name) {
    if (!strcmp(name, "warps"))
        return TF_LAUNCH_WARPS;
    if (!strcmp(name, "stages"))
        return TF_LAUNCH_STAGES;
    return TF_LAUNCH_NONE;
}

/* warps and stages take the values every path runs (the interpreter, the compiler, the
 * runtime alike): warps a power of two from 1 to 32 (a program is at most 1024 threads),
 * stages 1 to 32.  The error points at the tune or const item that gave the value (the
 * kernel when a -D or a launch option gave it). */
static bool launch_shape_ok(TfDiag *d, const AstKernel *kn, const char *name, int64_t v) {
    bool warps = !strcmp(name, "warps");
    bool ok = warps ? v >= 1 && v <= 32 && (v & (v - 1)) == 0 : v >= 1 && v <= 32;
    if (ok)
        return true;
    uint32_t loc = kn->loc, end = kn->end;
    for (int i = 0; i < kn->ntunes + kn->nconsts; i++) {
        const AstBinding *b = i < kn->ntunes ? &kn->tunes[i] : &kn->consts[i - kn->ntunes];
        if (!strcmp(b->name, name)) {
            loc = b->loc, end = b->end;
            break;
        }
    }
    tf_error(d, loc, end, "kernel '%s': %s=%lld; %s", kn->name, name, (long long)v,
             warps ? "warps must be a power of two from 1 to 32" : "stages must be from 1 to 32");
    return false;
}

static void set_binding(TirConstBinding *b, const char *name, TfConst c, bool want_float) {
    b->name = name;
    b->is_float = c.is_float || want_float;
    b->ival = c.is_float ? (int64_t)c.f : c.i;
    b->fval = c.is_float ? c.f : (double)c.i;
}

int tf_variants(TirArena *a, const AstFile *f, int k, const TfDefine *defs, int ndefs, bool first_only, TfVariant **out,
                TfDiag *d) {
    return tf_variants_for(a, f, k, defs, ndefs, first_only, TF_SMEM_MAX_DEFAULT, out, d);
}

int tf_variants_for(TirArena *a, const AstFile *f, int k, const TfDefine *defs, int ndefs, bool first_only,
                    int64_t smem_max, TfVariant **out, TfDiag *d) {
    const AstKernel *kn = &f->kernels[k];
    int errors = d->nerrors;
    *out = NULL;
    for (int i = 0; i < ndefs; i++)
        if (!known_name(kn, defs[i].name))
            tf_error(d, kn->loc, kn->end, "-D %s names no const parameter or tuned constant of kernel '%s'",
                     defs[i].name, kn->name);

    /* the axes: const params, then tune items in order, then warps/stages defaults */
    int maxaxes = kn->nparams + kn->ntunes + 2;
    Axis *axes = tir_alloc(a, sizeof(Axis) * maxaxes);
    int naxes = 0;
    for (int i = 0; i < kn->nparams; i++) {
        const AstParam *p = &kn->params[i];
        if (!p->is_const)
            continue;
        const TfDefine *def = find_define(defs, ndefs, p->name);
        if (!def || def->nvals == 0) {
            tf_error(d, p->loc, p->end, "kernel '%s' needs a value for const parameter '%s' (use -D %s=...)", kn->name,
                     p->name, p->name);
            continue;
        }
        int s = tir_scalar_from_name(p->type_name, strlen(p->type_name));
        for (int j = 0; j < def->nvals; j++)
            if (s >= 0 && !tir_scalar_is_float((TirScalar)s) && def->is_float && def->is_float[j])
                tf_error(d, p->loc, p->end, "const parameter '%s' of type %s given a float value", p->name,
                         p->type_name);
        axes[naxes++] = axis_from_define(a, def);
    }
    TfEvalEnv env = {.file = f, .diag = d, .nfile_consts = -1};
    for (int i = 0; i < kn->ntunes; i++) {
        const AstBinding *b = &kn->tunes[i];
        const TfDefine *def = find_define(defs, ndefs, b->name);
        if (def && def->nvals > 0) {
            axes[naxes++] = axis_from_define(a, def);
            continue;
        }
        if (!b->value || b->value->kind != AST_LIST || b->value->nlist == 0)
            continue;
        Axis ax = {b->name, tir_alloc(a, sizeof(TfConst) * b->value->nlist), 0};
        int take = first_only ? 1 : b->value->nlist;
        for (int j = 0; j < take; j++)
            if (tf_const_eval(&env, b->value->list[j], &ax.vals[ax.nvals]) == TF_EV_OK)
                ax.nvals++;
        if (ax.nvals)
            axes[naxes++] = ax;
    }
    for (int w = 0; w < 2; w++) {
        const char *name = w == 0 ? "warps" : "stages";
        bool have = false;
        for (int i = 0; i < naxes; i++)
            have |= !strcmp(axes[i].name, name);
        for (int i = 0; i < kn->nconsts; i++)
            have |= !strcmp(kn->consts[i].name, name);
        if (have)
            continue;
        const TfDefine *def = find_define(defs, ndefs, name);
        if (def && def->nvals > 0) {
            axes[naxes++] = axis_from_define(a, def);
            continue;
        }
        Axis ax = {name, tir_alloc(a, sizeof(TfConst)), 1};
        ax.vals[0] = (TfConst){false, w == 0 ? 4 : 2, 0, false, 0};
        axes[naxes++] = ax;
    }
    if (d->nerrors != errors)
        return 0;

    int64_t total = 1;
    for (int i = 0; i < naxes; i++) {
        total *= axes[i].nvals;
        if (total > MAX_VARIANTS) {
            tf_error(d, kn->loc, kn->end, "kernel '%s' has more than %d variants", kn->name, MAX_VARIANTS);
            return 0;
        }
    }
    int nbind = naxes + kn->nconsts;
    TfVariant *vs = tir_alloc(a, sizeof(TfVariant) * (total ? total : 1));
    int nv = 0;
    int32_t *idx = tir_alloc(a, sizeof(int32_t) * (naxes + 1));
    TirConstBinding *wb = tir_alloc(a, sizeof(TirConstBinding) * (size_t)(nbind + 1));
    for (int64_t n = 0; n < total; n++) {
        TirConstBinding *bs = tir_alloc(a, sizeof(TirConstBinding) * nbind);
        int nb = 0;
        for (int i = 0; i < naxes; i++) {
            int pi = tf_find_param(kn, axes[i].name);
            bool want_float = false;
            if (pi >= 0) {
                const char *tn = kn->params[pi].type_name;
                int s = tir_scalar_from_name(tn, strlen(tn));
                want_float = s >= 0 && tir_scalar_is_float((TirScalar)s);
            }
            set_binding(&bs[nb++], axes[i].name, axes[i].vals[idx[i]], want_float);
        }
        /* const clause items see the constants bound so far; a define overrides them */
        bool ok = true;
        for (int i = 0; i < kn->nconsts; i++) {
            const AstBinding *b = &kn->consts[i];
            const TfDefine *def = find_define(defs, ndefs, b->name);
            TfConst c;
            if (def && def->nvals > 0)
                c = define_value(def, 0);
            else {
                TfEvalEnv ce = {.file = f,
                                .kernel = kn,
                                .consts = bs,
                                .nconsts = nb,
                                .diag = n == 0 ? d : NULL,
                                .nfile_consts = -1};
                TfEvalStatus s = tf_const_eval(&ce, b->value, &c);
                if (s != TF_EV_OK) {
                    if (n == 0 && s == TF_EV_RUNTIME)
                        tf_error(d, b->value->loc, b->value->end, "the value of '%s' must be a compile-time constant",
                                 b->name);
                    ok = false;
                    break;
                }
            }
            set_binding(&bs[nb++], b->name, c, false);
        }
        if (!ok)
            return 0;
        for (int i = naxes - 1; i >= 0; i--) { /* mixed-radix increment, last axis fastest */
            if (++idx[i] < axes[i].nvals)
                break;
            idx[i] = 0;
        }
        TfVariant v = {bs, nb, 4, 2};
        for (int i = 0; i < nb; i++) {
            TfLaunchShape ls = tf_launch_shape(bs[i].name);
            if (ls == TF_LAUNCH_WARPS)
                v.warps = (int32_t)bs[i].ival;
            else if (ls == TF_LAUNCH_STAGES)
                v.stages = (int32_t)bs[i].ival;
        }
        if (!launch_shape_ok(d, kn, "warps", v.warps) || !launch_shape_ok(d, kn, "stages", v.stages))
            return 0;
        /* warps and stages last, as the IR header prints them */
        for (int w = 0; w < 2; w++) {
            const char *name = w == 0 ? "warps" : "stages";
            for (int i = 0; i < nb; i++)
                if (!strcmp(bs[i].name, name)) {
                    TirConstBinding t = bs[i];
                    memmove(&bs[i], &bs[i + 1], sizeof(TirConstBinding) * (nb - i - 1));
                    bs[nb - 1] = t;
                    break;
                }
        }
        bool keep = true;
        /* the variant's constants and the target's SMEM_MAX (for the where clauses only:
         * it is not one of the variant's constants) */
        memcpy(wb, bs, sizeof(TirConstBinding) * (size_t)nb);
        wb[nb] = (TirConstBinding){.name = "SMEM_MAX", .ival = smem_max, .fval = (double)smem_max};
        for (int i = 0; i < kn->nwheres && keep; i++) {
            if (tf_where_is_runtime(f, k, i))
                continue;
            TfEvalEnv we = {.file = f, .kernel = kn, .consts = wb, .nconsts = nb + 1, .nfile_consts = -1};
            TfConst c;
            /* a constant where that cannot be evaluated (division by zero) prunes */
            keep = tf_const_eval(&we, kn->wheres[i], &c) == TF_EV_OK && tf_const_truthy(c);
        }
        if (keep)
            vs[nv++] = v;
    }
    if (nv == 0) {
        tf_error(d, kn->loc, kn->end, "every variant of kernel '%s' is pruned by its where clauses", kn->name);
        return 0;
    }
    *out = vs;
    return nv;
}
