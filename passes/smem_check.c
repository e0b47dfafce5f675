/* The shared-memory placement check: no two buffers that are live at once share bytes.
 *
 * smem_alloc places two kinds of shared memory: the scratch of ops that exchange data
 * between warps (attr.smem_off/smem_bytes on the op; busy from its writes to the next
 * barrier) and the rings of the software pipeline (smem_alloc ops; live from the
 * smem_alloc to the first barrier after the last op that uses the buffer: the drain).
 * Scratch against scratch is the barriers proof's job (barriers.c: an overlap there needs
 * a barrier between).  This check covers what that proof does not see: a scratch op that
 * runs while a ring is live must not touch the ring's bytes (its writes would overwrite
 * stages that are still to be read), and two rings live at once must not share bytes.
 * The live ranges are taken in pre-order over the function, loops' bodies included, so a
 * scratch op anywhere in a pipelined loop is inside the ring's range.
 *
 * Called by the barriers proof (barriers and barriers_check), so every compile and every
 * `tile-opt --pass=barriers_check` runs it: an overlap is an error naming both. */
#include "pass_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct Order {
    const TirOp **op; /* every op, pre-order */
    int n, cap;
} Order;

static bool order_collect(TirOp *op, void *ud) {
    Order *O = ud;
    if (O->n == O->cap) {
        int cap = O->cap ? 2 * O->cap : 256;
        const TirOp **v = realloc(O->op, (size_t)cap * sizeof *v);
        if (!v)
            return false;
        O->op = v;
        O->cap = cap;
    }
    O->op[O->n++] = op;
    return true;
}

static bool bytes_overlap(const TirOp *a, const TirOp *b) {
    return a->attr.smem_bytes > 0 && b->attr.smem_bytes > 0 &&
           a->attr.smem_off < b->attr.smem_off + b->attr.smem_bytes &&
           b->attr.smem_off < a->attr.smem_off + a->attr.smem_bytes;
}

static void op_name(const TirOp *op, char *buf, size_t n) {
    if (op->nres)
        snprintf(buf, n, "'%s' %%%d", tir_op_info[op->code].name, op->res[0]->id);
    else
        snprintf(buf, n, "'%s'", tir_op_info[op->code].name);
}

int pass_smem_check_overlap(TirPassContext *ctx, const char *pass, TirModule *m, TirFunc *f) {
    (void)m;
    Order O = {0};
    tir_walk_func(f, order_collect, &O);
    int errors = 0;
    for (int r = 0; r < O.n; r++) {
        const TirOp *ring = O.op[r];
        if (ring->code != TIR_OP_SMEM_ALLOC || ring->nres != 1 || ring->attr.smem_bytes <= 0)
            continue;
        int last = r;
        for (int i = r + 1; i < O.n; i++)
            for (int j = 0; j < O.op[i]->nopnd; j++)
                if (O.op[i]->opnd[j] == ring->res[0])
                    last = i;
        int end = O.n;
        for (int i = last + 1; i < O.n; i++)
            if (O.op[i]->code == TIR_OP_BARRIER) {
                end = i;
                break;
            }
        for (int i = r + 1; i < end; i++) {
            const TirOp *o = O.op[i];
            if (!bytes_overlap(ring, o))
                continue;
            char a[64], b[64];
            op_name(ring, a, sizeof a);
            op_name(o, b, sizeof b);
            errors += pass_error(ctx, pass, f,
                                 "shared memory: %s [%d, %d) overlaps %s [%d, %d) while the ring is live (from "
                                 "its smem_alloc to the barrier after its last use)",
                                 b, (int)o->attr.smem_off, (int)(o->attr.smem_off + o->attr.smem_bytes), a,
                                 (int)ring->attr.smem_off, (int)(ring->attr.smem_off + ring->attr.smem_bytes));
        }
    }
    free(O.op);
    return errors;
}
