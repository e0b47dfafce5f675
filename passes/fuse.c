/* fuse (first part): rematerialize instead of converting.  A convert_layout whose
 * operand is made by a chain of cheap ops (pass_remat_cheap in pass_util.h, the rule
 * layout.c's rematerialization uses too, without the shape ops: every copy here takes the
 * conversion's one layout) is replaced by a copy of the chain built directly in the target
 * layout: recomputing a few integer ops per element costs less than a round trip through
 * shared memory and two barriers. */
#include "passes.h"
#include "pass_util.h"

#include <string.h>

#define FUSE_MAX_OPS 16

/* Collects the chain feeding v (post-order); false when it is not cheap. */
static bool chain(TirValue *v, TirOp **ops, int *n) {
    TirOp *d = v->def;
    if (!tir_type_is_tile(v->ty))
        return true; /* scalars keep their value */
    if (!d || *n >= FUSE_MAX_OPS)
        return false;
    for (int i = 0; i < *n; i++)
        if (ops[i] == d)
            return true;
    if (!pass_remat_cheap(d, false))
        return false;
    for (int i = 0; i < d->nopnd; i++)
        if (!chain(d->opnd[i], ops, n))
            return false;
    ops[(*n)++] = d;
    return true;
}

typedef struct {
    TirFunc *f;
    int changed;
} Fuse;

static bool fuse_op(TirOp *op, void *ud) {
    Fuse *F = ud;
    if (op->code != TIR_OP_CONVERT_LAYOUT)
        return true;
    TirOp *ops[FUSE_MAX_OPS];
    int n = 0;
    if (!chain(op->opnd[0], ops, &n) || n == 0)
        return true;
    int32_t layout = op->res[0]->ty.layout;
    TirValue *from[FUSE_MAX_OPS], *to[FUSE_MAX_OPS];
    TirBuilder b;
    tir_builder_before(&b, op);
    for (int i = 0; i < n; i++) {
        TirOp *c = tir_op_clone(&b, ops[i], from, to, i);
        c->res[0]->ty.layout = layout;
        from[i] = ops[i]->res[0];
        to[i] = c->res[0];
    }
    tir_replace_all_uses(F->f, op->res[0], to[n - 1]);
    tir_op_erase(op);
    F->changed++;
    return true;
}

int pass_fuse(TirModule *m, TirPassContext *ctx) {
    for (TirFunc *f = m->first; f; f = f->next) {
        if (f->kind != TIR_FUNC_KERNEL)
            continue;
        Fuse F = {f, 0};
        tir_walk_func(f, fuse_op, &F);
        (void)ctx;
    }
    return 0;
}
