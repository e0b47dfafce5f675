/* schedule: issue global loads early.  A load whose address, mask and `other` are
 * available before the ops that precede it (typically reductions, which end in a barrier)
 * moves up to just after the last of: its operands' defining ops, the last op that may
 * write memory or synchronise (store, atomic, print, assert, barrier, call, any op with
 * regions), and the previous load (loads keep their order).  The pure address/mask ops
 * that feed it move up with it, each to just after its own operands.  So in layernorm the
 * loads of w and b are in flight while x is reduced, instead of waiting behind the second
 * cross-warp reduction (what Triton's scheduler does too).
 *
 * Register pressure: a hoisted load's values live across everything it jumps over.  The
 * loads hoisted in one block may hold at most SCHED_BUDGET bytes per thread together
 * (32 registers), counting only loads that jump over more than address arithmetic; larger
 * ones stay where they are (layernorm BLOCK=16384 on 4 warps would
 * otherwise add 128 registers per thread and spill).
 *
 * Runs after layout/fuse (loads have their layouts and vector widths) and before
 * smem_alloc (which places scratch by program order, so it sees the final order). */
#include "passes.h"
#include "pass_util.h"

#define SCHED_BUDGET 128

static bool is_clobber(const TirOp *op) {
    unsigned t = tir_op_info[op->code].traits;
    if (op->nregion > 0 || (t & TIR_T_REGIONS))
        return true;
    return !(t & (TIR_T_PURE | TIR_T_READS));
}

/* Pure ops cheap and local enough to move with a load: elementwise arithmetic, shape
 * broadcasts, constants and ids, hints.  Not the ones with shared scratch (reductions,
 * scans, convert_layout, trans, reshape): their placement is smem_alloc's business. */
static bool movable(const TirOp *op) {
    unsigned t = tir_op_info[op->code].traits;
    if (!(t & TIR_T_PURE) || op->nregion > 0 || op->nres != 1)
        return false;
    if (t & TIR_T_ELEMENTWISE)
        return true;
    switch ((TirOpcode)op->code) {
    case TIR_OP_CONSTANT:
    case TIR_OP_ARANGE:
    case TIR_OP_PROGRAM_ID:
    case TIR_OP_NUM_PROGRAMS:
    case TIR_OP_SPLAT:
    case TIR_OP_BROADCAST:
    case TIR_OP_EXPAND_DIMS:
    case TIR_OP_HINT_MULTIPLE_OF:
    case TIR_OP_HINT_MAX_CONTIGUOUS: return true;
    default: return false;
    }
}

/* Position of op in its block (NULL: -1, before the first op). */
static int pos(const TirOp *op) {
    if (!op)
        return -1;
    int n = 0;
    for (const TirOp *o = op->parent->first; o && o != op; o = o->next)
        n++;
    return n;
}

static void move_after(TirBlock *blk, TirOp *op, TirOp *anchor) {
    TirOp *at = anchor ? anchor->next : blk->first;
    if (at == op)
        return;
    tir_op_detach(op);
    tir_op_insert_before(at, op);
}

/* Moves op (and first its movable operand chain after `floor`) to just after the latest
 * of floor and its operands' definitions in blk.  depth bounds the recursion. */
static void hoist(TirBlock *blk, TirOp *op, TirOp *floor, int depth) {
    int fp = pos(floor);
    for (int i = 0; i < op->nopnd; i++) {
        TirOp *d = op->opnd[i] ? op->opnd[i]->def : NULL;
        if (d && d->parent == blk && depth < 32 && movable(d) && pos(d) > fp)
            hoist(blk, d, floor, depth + 1);
    }
    TirOp *anchor = floor;
    int ap = fp;
    for (int i = 0; i < op->nopnd; i++) {
        TirOp *d = op->opnd[i] ? op->opnd[i]->def : NULL;
        if (!d || d->parent != blk)
            continue;
        int p = pos(d);
        if (p > ap) {
            ap = p;
            anchor = d;
        }
    }
    move_after(blk, op, anchor);
}

static int64_t bytes_per_thread(const TirFunc *f, const TirValue *v) {
    int64_t n = 1;
    for (int d = 0; d < v->ty.rank; d++)
        n *= v->ty.shape[d];
    int64_t threads = (int64_t)(f->warps > 0 ? f->warps : 4) * 32;
    int64_t per = n / threads > 0 ? n / threads : 1;
    int eb = v->ty.ptr ? 8 : tir_scalar_bytes((TirScalar)v->ty.elem);
    return per * (eb > 0 ? eb : 4);
}

static int schedule_block(TirFunc *f, TirBlock *blk) {
    int moved = 0;
    int64_t used = 0;
    for (TirOp *op = blk->first, *next; op; op = next) {
        next = op->next;
        for (int r = 0; r < op->nregion; r++)
            moved += schedule_block(f, op->region[r]);
        if (op->code != TIR_OP_LOAD || op->nres != 1)
            continue;
        TirOp *floor = NULL;
        for (TirOp *o = op->prev; o; o = o->prev)
            if (is_clobber(o) || o->code == TIR_OP_LOAD || o->code == TIR_OP_TLOAD) {
                floor = o;
                break;
            }
        if (floor == op->prev)
            continue;
        int64_t b = bytes_per_thread(f, op->res[0]);
        if (used + b > SCHED_BUDGET)
            continue;
        TirOp *was_before = op->next;
        hoist(blk, op, floor, 0);
        /* charge the budget only when the load jumped over real work (a reduction, a
         * conversion through scratch, another load), not just over address arithmetic */
        bool jumped = false;
        for (TirOp *o = op->next; o && o != was_before; o = o->next)
            jumped |= !movable(o);
        if (jumped) {
            used += b;
            moved++;
        }
    }
    return moved;
}

int pass_schedule(TirModule *m, TirPassContext *ctx) {
    (void)ctx;
    for (TirFunc *f = m->first; f; f = f->next)
        if (f->kind == TIR_FUNC_KERNEL && f->body)
            schedule_block(f, f->body);
    return 0;
}
