/* factor_ptrs: a loop-carried pointer tile kept as its factors.
 *
 * The dot loops of the language advance their operand pointers by a splat:
 *     pa = a + rows[:, None] * s0 + cols[None, :] * s1;  for k ... { load(pa); pa += d }
 * Carried as a tile, every element is a 64-bit pointer in registers across the loop:
 * with no vector access proven (a stride known only at run time) a thread holds one per
 * element (a 64x64 f16 tile on 4 warps: 32 pointers, 64 registers, next to the
 * accumulators), and the dot examples spilled.  Here such a pointer is carried as one
 * scalar i64 offset o (o += d); the tile is rebuilt at the top of the body from its
 * factors: the ops between the tile and the scalar base (splat, broadcast, expand_dims,
 * addptr of an offset tile computed before the loop) are cloned with the base moved by o
 * first, so what varies is innermost and the loop-invariant offset tiles (a thread's
 * distinct rows and columns, which layout's dot_scalar_layout keeps few) are what stays
 * live.  The result is the same pointer, element by element: addptr adds offset x size
 * modulo 2^64, so (a + o) + r + c = (a + r + c) + o, and o accumulates the sign- or
 * zero-extended offsets in 64 bits as addptr extends them.
 *
 * Only carried pointers whose every use in the body is the pointer of a load or store
 * that moves one element at a time (vec <= 1) or the one advance `addptr p, splat d`
 * feeding the yield, and whose loop result is unused: a vector access needs one pointer
 * per vector only, and there the tile costs no more than its factors.  That includes a
 * tile with a unit stride but no alignment (an unaligned row-major operand: scalar
 * accesses), left alone until session 10: carried whole it was one pointer per element,
 * 32 rows by one column of a thread with the layout's 32 lanes along the unit stride, and
 * matmul spilled up to 2.6 KB (layout's dot_scalar_layout). */
#include "passes.h"
#include "pass_util.h"

#include <string.h>

enum { SPINE_MAX = 16 };

/* The pointer spine of v back to the splat of a scalar pointer: ops[0] is that splat,
 * ops[n-1] defines v.  Each op but the splat takes its pointer in operand 0; the other
 * operands (the offsets of addptr) are defined before the loop, as v is. */
static int spine(TirValue *v, TirOp **ops) {
    TirOp *chain[SPINE_MAX];
    int n = 0;
    for (TirValue *x = v; x && x->def && n < SPINE_MAX; x = x->def->opnd[0]) {
        TirOp *d = x->def;
        chain[n++] = d;
        if (d->code == TIR_OP_SPLAT) {
            if (!d->opnd[0]->ty.ptr || tir_type_is_tile(d->opnd[0]->ty))
                return 0;
            for (int i = 0; i < n; i++)
                ops[i] = chain[n - 1 - i];
            return n;
        }
        if (d->code != TIR_OP_ADDPTR && d->code != TIR_OP_BROADCAST && d->code != TIR_OP_EXPAND_DIMS)
            return 0;
        if (d->nres != 1 || d->nopnd < 1)
            return 0;
    }
    return 0;
}

/* Uses of every value in f, by value id. */
typedef struct {
    int *uses;
    int32_t n;
} Uses;

static bool count_uses(TirOp *op, void *ud) {
    Uses *u = ud;
    for (int i = 0; i < op->nopnd; i++)
        if (op->opnd[i]->id >= 0 && op->opnd[i]->id < u->n)
            u->uses[op->opnd[i]->id]++;
    return true;
}

static bool is_access(const TirOp *op) {
    return op->code == TIR_OP_LOAD || op->code == TIR_OP_STORE;
}

typedef struct {
    TirFunc *f;
    TirModule *m;
    Uses u;
    int changed;
} Fp;

/* The advance of arg in body: `addptr arg, splat d` (or of a constant tile) whose only use
 * is operand c of the yield; NULL if arg has any use other than that and scalar accesses. */
static TirOp *advance_of(Fp *F, TirBlock *body, TirValue *arg, TirOp *yield, int c) {
    TirOp *adv = NULL;
    int seen = 0;
    for (TirOp *op = body->first; op; op = op->next) {
        for (int i = 0; i < op->nopnd; i++) {
            if (op->opnd[i] != arg)
                continue;
            seen++;
            if (is_access(op) && i == 0 && op->attr.i[1] <= 1)
                continue;
            const TirOp *d = op->code == TIR_OP_ADDPTR && op->nopnd == 2 ? op->opnd[1]->def : NULL;
            bool by_splat = d && (d->code == TIR_OP_SPLAT ||
                                  (d->code == TIR_OP_CONSTANT && tir_scalar_is_int((TirScalar)d->res[0]->ty.elem)));
            if (i == 0 && !adv && by_splat && yield->opnd[c] == op->res[0] && F->u.uses[op->res[0]->id] == 1) {
                adv = op;
                continue;
            }
            return NULL;
        }
    }
    /* uses in nested regions are not seen by the walk above: every use must be */
    return adv && seen == F->u.uses[arg->id] ? adv : NULL;
}

/* Counts a use the pass adds (of a value that existed before it ran). */
static void use(Fp *F, const TirValue *v) {
    if (v->id >= 0 && v->id < F->u.n)
        F->u.uses[v->id]++;
}

static void drop_dead(Fp *F, TirValue *v) {
    TirOp *op = v->def;
    if (v->id < 0 || v->id >= F->u.n)
        return;
    if (!op || !op->parent || op->nres != 1 || F->u.uses[v->id] > 0 || !pass_op_has(op, TIR_T_PURE))
        return;
    if (pass_op_has(op, TIR_T_REGIONS))
        return;
    tir_op_erase(op);
    for (int i = 0; i < op->nopnd; i++) {
        if (op->opnd[i]->id < F->u.n)
            F->u.uses[op->opnd[i]->id]--;
        drop_dead(F, op->opnd[i]);
    }
}

static void factor_carried(Fp *F, TirOp *loop, int c) {
    TirBlock *body = loop->region[0];
    TirOp *yield = body->last;
    TirValue *init = loop->opnd[3 + c], *arg = body->args[1 + c], *res = loop->res[c];
    if (!tir_type_is_tile(arg->ty) || !arg->ty.ptr || F->u.uses[res->id] != 0)
        return;
    TirOp *sp[SPINE_MAX];
    int n = spine(init, sp);
    if (n < 2)
        return; /* a bare splat: nothing to keep apart */
    TirOp *adv = advance_of(F, body, arg, yield, c);
    if (!adv)
        return;
    TirType i64 = tir_scalar_type(TIR_I64);

    TirBuilder b;
    tir_builder_before(&b, loop);
    b.func = F->f;
    b.loc = loop->loc;
    TirValue *zero = tir_const_int(&b, i64, 0);
    loop->opnd[3 + c] = zero;
    F->u.uses[init->id]--;
    arg->ty = i64;
    res->ty = i64;

    /* the tile, rebuilt at the top of the body with the base moved first */
    tir_builder_before(&b, body->first);
    TirValue *base = sp[0]->opnd[0];
    TirValue *ops2[2] = {base, arg};
    TirValue *moved = tir_op1(&b, TIR_OP_ADDPTR, base->ty, 2, ops2);
    use(F, base);
    TirValue *from[SPINE_MAX], *to[SPINE_MAX];
    from[0] = base;
    to[0] = moved;
    TirValue *cur = NULL;
    for (int i = 0; i < n; i++) {
        TirOp *cl = tir_op_clone(&b, sp[i], from, to, i == 0 ? 1 : 0);
        if (i > 0)
            cl->opnd[0] = cur;
        for (int k = 0; k < cl->nopnd; k++)
            use(F, cl->opnd[k]);
        cur = cl->res[0];
    }
    for (TirOp *op = body->first; op; op = op->next)
        if (is_access(op) && op->opnd[0] == arg)
            op->opnd[0] = cur;

    /* the advance: o + d in 64 bits, extended as addptr extends it (a constant tile's
     * value is its one element's, already extended) */
    tir_builder_before(&b, adv);
    const TirOp *dd = adv->opnd[1]->def;
    TirValue *d64;
    if (dd->code == TIR_OP_CONSTANT) {
        d64 = tir_const_int(&b, i64, dd->attr.ival);
    } else {
        TirValue *d = dd->opnd[0];
        d64 = d->ty.elem == TIR_I64 ? d : tir_cast(&b, d, i64);
        use(F, d);
    }
    TirValue *next = tir_binary(&b, TIR_OP_ADD, arg, d64);
    yield->opnd[c] = next;
    F->u.uses[adv->res[0]->id] = 0;
    TirValue *off = adv->opnd[1];
    tir_op_erase(adv);
    if (off->id < F->u.n)
        F->u.uses[off->id]--;
    drop_dead(F, off);
    drop_dead(F, init);
    F->changed++;
}

static bool factor_op(TirOp *op, void *ud) {
    Fp *F = ud;
    if (op->code != TIR_OP_FOR || op->nregion != 1)
        return true;
    TirBlock *body = op->region[0];
    if (!body->last || body->last->code != TIR_OP_YIELD)
        return true;
    for (int c = 0; c < op->nres && 3 + c < op->nopnd && 1 + c < body->nargs && c < body->last->nopnd; c++)
        factor_carried(F, op, c);
    return true;
}

int pass_factor_ptrs(TirModule *m, TirPassContext *ctx) {
    (void)ctx;
    for (TirFunc *f = m->first; f; f = f->next) {
        if (f->kind != TIR_FUNC_KERNEL)
            continue;
        Fp F = {.f = f, .m = m};
        /* room for the values this pass adds: a handful per carried pointer */
        F.u.n = f->next_id;
        F.u.uses = calloc((size_t)F.u.n + 1, sizeof *F.u.uses);
        if (!F.u.uses)
            abort();
        tir_walk_func(f, count_uses, &F.u);
        tir_walk_func(f, factor_op, &F);
        free(F.u.uses);
    }
    return 0;
}
