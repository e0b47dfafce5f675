/* What one launch of a kernel variant computes and moves, counted on its tile IR with the
 * launch's arguments: floating-point operations and global-memory bytes (the figures of a
 * roofline).  The rules per op are the backend's static ones (backend/lower.c: an
 * elementwise or reduction float op counts its elements, fma two, a dot 2*M*N*K; loads,
 * stores and tload/tstore their bytes, atomics twice theirs), and on top of them:
 *   - a `for` counts its body times its trip count when its bounds follow from the
 *     arguments, constants and program ids (integer arithmetic on them); otherwise once,
 *     and the loop is reported as counted per iteration;
 *   - every program of the grid is counted with its own program ids (loops bounded by
 *     program_id, as in causal attention, differ); past 65536 programs, program 0's counts
 *     times the programs;
 *   - both branches of an `if` count (an upper bound), and masked-off lanes count (the
 *     traffic a tile moves, as the backend counts it). */
#include "driver.h"
#include "analysis.h"

#include <string.h>

enum { MAX_EXACT_PROGRAMS = 65536, EVAL_DEPTH = 64 };

typedef struct Counter {
    const TirFunc *f;
    const TirArg *args; /* by body argument */
    int64_t pid[3], npid[3];
    double flops, bytes;
    int per_iteration; /* loops whose trip count was not known */
} Counter;

/* The integer value of scalar v, when the arguments and program ids determine it. */
static bool eval_int(const Counter *c, const TirValue *v, int64_t *out, int depth) {
    if (depth > EVAL_DEPTH || v->ty.rank != 0 || v->ty.ptr || tir_scalar_is_float((TirScalar)v->ty.elem))
        return false;
    if (!v->def) {
        if (v->block != c->f->body)
            return false; /* a loop variable or a carried value */
        *out = c->args[v->index].i;
        return true;
    }
    const TirOp *op = v->def;
    int64_t a = 0, b = 0;
    switch ((TirOpcode)op->code) {
    case TIR_OP_CONSTANT: *out = op->attr.ival; return true;
    case TIR_OP_PROGRAM_ID:
    case TIR_OP_NUM_PROGRAMS:
        /* attr i[0]: the axis */
        if (op->attr.i[0] < 0 || op->attr.i[0] > 2)
            return false;
        *out = op->code == TIR_OP_PROGRAM_ID ? c->pid[op->attr.i[0]] : c->npid[op->attr.i[0]];
        return true;
    case TIR_OP_CAST: return eval_int(c, op->opnd[0], out, depth + 1);
    case TIR_OP_ADD:
    case TIR_OP_SUB:
    case TIR_OP_MUL:
    case TIR_OP_DIV:
    case TIR_OP_REM:
    case TIR_OP_MAXIMUM:
    case TIR_OP_MINIMUM:
        if (!eval_int(c, op->opnd[0], &a, depth + 1) || !eval_int(c, op->opnd[1], &b, depth + 1))
            return false;
        switch ((TirOpcode)op->code) {
        case TIR_OP_ADD: *out = a + b; return true;
        case TIR_OP_SUB: *out = a - b; return true;
        case TIR_OP_MUL: *out = a * b; return true;
        case TIR_OP_DIV: *out = b ? a / b : 0; return b != 0;
        case TIR_OP_REM: *out = b ? a % b : 0; return b != 0;
        case TIR_OP_MAXIMUM: *out = a > b ? a : b; return true;
        default: *out = a < b ? a : b; return true;
        }
    default: return false;
    }
}

static void count_op(Counter *c, const TirOp *op) {
    analysis_op_work(op, &c->flops, &c->bytes);
}

/* Counts block b `times` times over. */
static void count_block(Counter *c, const TirBlock *b, double times) {
    for (const TirOp *op = b->first; op; op = op->next) {
        double before_f = c->flops, before_b = c->bytes;
        if (op->code == TIR_OP_FOR && op->nregion == 1) {
            int64_t lb, ub, step;
            double trips = 1;
            if (eval_int(c, op->opnd[0], &lb, 0) && eval_int(c, op->opnd[1], &ub, 0) &&
                eval_int(c, op->opnd[2], &step, 0) && step > 0)
                trips = ub > lb ? (double)((ub - lb + step - 1) / step) : 0;
            else
                c->per_iteration++;
            count_block(c, op->region[0], trips);
        } else {
            for (int r = 0; r < op->nregion; r++)
                count_block(c, op->region[r], 1);
            count_op(c, op);
        }
        /* what this op (and its regions) added, `times` times over */
        c->flops = before_f + (c->flops - before_f) * times;
        c->bytes = before_b + (c->bytes - before_b) * times;
    }
}

void driver_count_launch(const TirFunc *f, const TirArg *args, const int64_t grid[3], double *flops, double *bytes,
                         int *per_iteration) {
    Counter c = {.f = f, .args = args, .npid = {grid[0], grid[1], grid[2]}};
    double programs = (double)grid[0] * (double)grid[1] * (double)grid[2];
    int most = 0;
    if (programs <= MAX_EXACT_PROGRAMS) {
        for (c.pid[2] = 0; c.pid[2] < grid[2]; c.pid[2]++)
            for (c.pid[1] = 0; c.pid[1] < grid[1]; c.pid[1]++)
                for (c.pid[0] = 0; c.pid[0] < grid[0]; c.pid[0]++) {
                    c.per_iteration = 0;
                    count_block(&c, f->body, 1);
                    most = c.per_iteration > most ? c.per_iteration : most;
                }
    } else {
        count_block(&c, f->body, programs);
        most = c.per_iteration;
    }
    *flops = c.flops;
    *bytes = c.bytes;
    *per_iteration = most;
}
