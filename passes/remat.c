/* remat: what the code after a dot loop needs but the loop does not, computed again after
 * the loop instead of kept in registers through it.
 *
 * A GEMM's epilogue stores C with the rows and columns it computed at the top, from the
 * program id (rm = pm * BM + arange, pm from the GROUP swizzle's divisions), and so do its
 * masks and pointer products.  Made before the loop, they are live through it, next to
 * the accumulators, the stages in flight and the fragments.  ptxas keeps them in local
 * memory there: over the dot examples' spilling variants on sm_80..sm_90a (2026-12-02,
 * ptxas 13.0), 60 of 86 spilled only such values, stored before the loop and loaded after
 * it.
 *
 * For each `for` in a kernel's body (not nested) holding a dot, each operand of an op after
 * it (at any depth) whose value (a tile or a scalar) is made before the loop, is not read
 * inside it (nor as its bound or step), and comes from a chain of cheap ops
 * (pass_remat_cheap with the shape ops, plus the hints and program_id; at most
 * REMAT_MAX_OPS copies a loop) is replaced by a copy of that chain, placed just before the
 * top-level op after the loop that first needs it (the same spills as all of them right
 * after the loop, measured; the IR reads better).  The chain's leaves are kept as they are:
 * the kernel's parameters and constants, which cost no register (ptxas reads parameters
 * from the constant bank where they are used).  Values read inside the loop stay too: they
 * are live through it anyway.
 *
 * The copies compute the same values, so LLVM would merge them with the originals; the
 * backend takes the thread id again after such a loop (lower.c, fresh_ids: the entry's id
 * shuffled from the thread's own lane, which neither LLVM nor ptxas merges with it or
 * moves above the loop), and the copies' per-thread terms (arange's lane and warp parts)
 * follow from it.  The scalars' copies (the GROUP swizzle's pm * BM from the program id and
 * cdiv(M, BM)) are merged with their originals in the backend's first lowering: ptxas
 * merges every read of a program id into one, and copying them with the id read as it is
 * made the id and the division's terms live through the loop instead.  They come apart in
 * the lowerings that read the program ids and the integer parameters again after the loop
 * (lower.c, lower_sreg and fresh_ids; tb_emit tries them where a cubin spills).  Runs last:
 * nothing after it may hoist or merge the copies. */
#include "passes.h"
#include "pass_util.h"

#define REMAT_MAX_OPS  256
#define REMAT_MAX_OPND 8

typedef struct {
    TirFunc *f;
    TirBlock *body;
    TirPtrMap read_in; /* values the loop reads (its bounds and anything inside it) */
    TirPtrMap before;  /* ops of the body before the loop */
    TirPtrMap copy;    /* value made before the loop -> its copy after it */
    TirPtrMap bad;     /* values whose chain is not cheap (memo) */
    TirBuilder b;
} Remat;

/* Kept as they are: parameters and constants (see above). */
static bool leaf(const TirValue *v) {
    return !v->def || v->def->code == TIR_OP_CONSTANT;
}

static bool copyable_op(const TirOp *op) {
    if (op->nres != 1 || op->nopnd > REMAT_MAX_OPND)
        return false;
    switch ((TirOpcode)op->code) {
    case TIR_OP_HINT_MULTIPLE_OF:
    case TIR_OP_HINT_MAX_CONTIGUOUS:
    case TIR_OP_PROGRAM_ID: return true;
    default: return pass_remat_cheap(op, true);
    }
}

/* Whether v's chain can be copied after the loop (each op counted once per loop). */
static bool chain_ok(Remat *R, TirValue *v, int *budget) {
    if (leaf(v) || tir_ptrmap_get(&R->copy, v))
        return true;
    if (tir_ptrmap_get(&R->bad, v))
        return false;
    TirOp *d = v->def;
    bool ok = d->parent == R->body && tir_ptrmap_get(&R->before, d) && copyable_op(d) && --*budget >= 0;
    for (int i = 0; ok && i < d->nopnd; i++)
        ok = chain_ok(R, d->opnd[i], budget);
    if (!ok)
        tir_ptrmap_put(&R->bad, v, (void *)1);
    return ok;
}

/* v's copy after the loop (chain_ok said it has one). */
static TirValue *copy_of(Remat *R, TirValue *v) {
    if (leaf(v))
        return v;
    TirValue *c = tir_ptrmap_get(&R->copy, v);
    if (c)
        return c;
    TirOp *d = v->def;
    TirValue *from[REMAT_MAX_OPND], *to[REMAT_MAX_OPND];
    for (int i = 0; i < d->nopnd; i++) {
        from[i] = d->opnd[i];
        to[i] = copy_of(R, d->opnd[i]);
    }
    TirOp *n = tir_op_clone(&R->b, d, from, to, d->nopnd);
    tir_ptrmap_put(&R->copy, v, n->res[0]);
    return n->res[0];
}

static bool mark_read(TirOp *op, void *ud) {
    Remat *R = ud;
    for (int i = 0; i < op->nopnd; i++)
        if (op->opnd[i])
            tir_ptrmap_put(&R->read_in, op->opnd[i], (void *)1);
    return true;
}

typedef struct {
    Remat *R;
    int budget;
} Use;

static bool rewrite_uses(TirOp *op, void *ud) {
    Use *u = ud;
    Remat *R = u->R;
    for (int i = 0; i < op->nopnd; i++) {
        TirValue *v = op->opnd[i];
        /* chain_ok refuses what is not made before the loop in the body */
        if (v && !leaf(v) && !tir_ptrmap_get(&R->read_in, v) && chain_ok(R, v, &u->budget))
            op->opnd[i] = copy_of(R, v);
    }
    return true;
}

static void remat_loop(TirFunc *f, TirOp *loop) {
    if (!tir_op_holds(loop, TIR_OP_DOT) || !loop->next)
        return;
    Remat R = {.f = f, .body = loop->parent};
    for (TirOp *op = R.body->first; op && op != loop; op = op->next)
        tir_ptrmap_put(&R.before, op, (void *)1);
    /* the loop reads its bound and step every iteration; its initial values only once */
    for (int i = 1; i < 3 && i < loop->nopnd; i++)
        tir_ptrmap_put(&R.read_in, loop->opnd[i], (void *)1);
    for (int r = 0; r < loop->nregion; r++)
        tir_walk_block(loop->region[r], mark_read, &R);
    R.b.loc = loop->loc;
    Use u = {&R, REMAT_MAX_OPS};
    for (TirOp *op = loop->next, *next; op; op = next) {
        next = op->next; /* the copies go before op: never visited here */
        tir_builder_before(&R.b, op);
        rewrite_uses(op, &u);
        for (int r = 0; r < op->nregion; r++)
            tir_walk_block(op->region[r], rewrite_uses, &u);
    }
    tir_ptrmap_free(&R.read_in);
    tir_ptrmap_free(&R.before);
    tir_ptrmap_free(&R.copy);
    tir_ptrmap_free(&R.bad);
}

int pass_remat(TirModule *m, TirPassContext *ctx) {
    (void)ctx;
    for (TirFunc *f = m->first; f; f = f->next) {
        if (f->kind != TIR_FUNC_KERNEL || !f->body)
            continue;
        for (TirOp *op = f->body->first; op; op = op->next)
            if (op->code == TIR_OP_FOR)
                remat_loop(f, op);
    }
    return 0;
}
