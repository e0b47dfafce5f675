/* specialize: use what the runtime promises about a kernel's arguments.
 *
 * Why: like Triton, the runtime compiles a variant per pattern of runtime facts about
 * integer and pointer arguments: an integer equal to 1 (a stride of 1 is the common case,
 * and knowing it makes an access contiguous), and a value or address divisible by 16
 * (which lets loads and stores use 16-byte vectors).  The facts sit in the kernel's
 * TirParamInfo (`one`, `div=N` in the text form).  This pass turns them into IR:
 *   - `one`: every use of the parameter uses `constant {value=1}` of its type instead,
 *     so canonicalize folds the arithmetic it feeds;
 *   - `div=N` (N > 1): `multiple_of {n=N}` of the parameter is inserted at the top of
 *     the body and every other use goes through it, so analysis_axisinfo sees the promise
 *     wherever the value flows.
 * Compile-time constants (`const` parameters, tuned values) need nothing here: the front
 * end emits them as constants of each variant directly.  The pass is idempotent: a
 * parameter already routed through its hint, or with no uses left, is left alone. */
#include "passes.h"
#include "pass_util.h"

#include <string.h>

typedef struct {
    TirValue *arg;
    int uses;
    TirOp *hint; /* an existing multiple_of {n=div} of arg at the top level, if any */
    int32_t div;
} ParamUses;

/* A hint is reused only when it comes before every other use at the top level, so
 * that routing the uses through it keeps definitions ahead of uses. */
static bool scan_param(TirOp *op, void *ud) {
    ParamUses *p = ud;
    if (!p->hint && p->uses == 0 && op->code == TIR_OP_HINT_MULTIPLE_OF && op->nopnd == 1 && op->opnd[0] == p->arg &&
        op->attr.i[0] == p->div && op->parent == p->arg->block)
        p->hint = op;
    for (int i = 0; i < op->nopnd; i++)
        if (op->opnd[i] == p->arg)
            p->uses++;
    return true;
}

static bool is_int_scalar(TirType t) {
    return t.kind == TIR_K_VALUE && t.rank == 0 && !t.ptr && tir_scalar_is_int((TirScalar)t.elem) && t.elem != TIR_I1;
}

static int specialize_kernel(TirFunc *f, TirPassContext *ctx) {
    int errors = 0;
    TirBlock *body = f->body;
    /* New ops go before the body's original first op, so they appear in parameter order. */
    TirOp *anchor = body->first;
    for (int i = 0; i < body->nargs; i++) {
        TirParamInfo *pi = &f->params[i];
        TirValue *arg = body->args[i];
        bool one = pi->equals_one;
        int32_t div = pi->divisibility;
        if (!one && div <= 1)
            continue;
        if (one && !is_int_scalar(arg->ty)) {
            char ty[64];
            tir_type_print(ty, sizeof ty, f->module, arg->ty);
            errors += pass_error(ctx, "specialize", f, "parameter %%%s is marked `one` but has type %s, not an integer",
                                 pi->name ? pi->name : "?", ty);
            continue;
        }
        ParamUses p = {arg, 0, NULL, div};
        tir_walk_func(f, scan_param, &p);
        if (p.uses == 0 || (!one && p.hint && p.uses == 1))
            continue;

        TirBuilder b;
        if (anchor)
            tir_builder_before(&b, anchor);
        else
            tir_builder_at_end(&b, body);
        b.loc = TIR_NOLOC;
        if (one) {
            TirValue *c = tir_const_int(&b, arg->ty, 1);
            tir_replace_all_uses(f, arg, c);
            continue;
        }
        TirOp *hint = p.hint;
        if (!hint) {
            hint = tir_op_new(&b, TIR_OP_HINT_MULTIPLE_OF, 1, &arg, 1, &arg->ty, 0);
            hint->attr.i[0] = div;
            hint->res[0]->name = arg->name;
        }
        tir_replace_all_uses(f, arg, hint->res[0]);
        hint->opnd[0] = arg; /* the hint itself keeps reading the parameter */
    }
    return errors;
}

int pass_specialize(TirModule *m, TirPassContext *ctx) {
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next)
        if (f->kind == TIR_FUNC_KERNEL && f->params)
            errors += specialize_kernel(f, ctx);
    return errors;
}
