/* smem_alloc: shared-memory scratch for the ops that exchange data between warps
 * (cross-warp reductions and scans, layout conversions, trans, reshape, the broadcast
 * of a scalar atomic's old value), placed by liveness.
 *
 * Every such op is lowered as: its writes, one barrier, its reads (backend/).  Its
 * bytes are therefore busy from its writes until the next barrier after its reads:
 * the internal barrier of the next scratch op, or an explicit `barrier`.  Two ops
 * interfere when the second's writes can come while the first's bytes are busy, i.e.
 * no scratch op lies between them on some path (a loop's back edge included).  Offsets
 * are assigned first-fit in program order, away from every interfering op placed
 * before: consecutive ops ping-pong between two regions and never need a barrier of
 * their own, while ops further apart reuse the same bytes.  What first-fit cannot
 * avoid (an op that interferes with itself around a loop) the barriers pass fixes. */
#include "analysis.h"
#include "pass_util.h"

#include <stdlib.h>
#include <string.h>

#define SMEM_ALLOC_MAX_OPS 8192

/* ---- interference: which scratch ops may write while another's bytes are busy ---- */

typedef struct Alloc {
    TirOp **ops; /* scratch ops in program order */
    int n, cap;
    uint8_t *edge; /* n x n, symmetric */
    TirModule *m;
} Alloc;

/* The set of ops whose bytes may be busy at a program point: a bit set over ops. */
typedef struct Busy {
    uint64_t *w;
    int nw;
} Busy;

static int op_index(const Alloc *A, const TirOp *op) {
    for (int i = 0; i < A->n; i++)
        if (A->ops[i] == op)
            return i;
    return -1;
}

static bool collect(TirOp *op, void *ud) {
    Alloc *A = ud;
    /* rings (smem_alloc ops) are placed apart: place_rings */
    int32_t need = op->code == TIR_OP_SMEM_ALLOC ? 0 : analysis_scratch_bytes(A->m, op);
    op->attr.smem_off = 0;
    op->attr.smem_bytes = 0;
    if (need > 0) {
        if (A->n == A->cap) {
            int cap = A->cap ? A->cap * 2 : 16;
            TirOp **n = tir_alloc(A->m->arena, (size_t)cap * sizeof *n);
            if (A->n)
                memcpy(n, A->ops, (size_t)A->n * sizeof *n);
            A->ops = n;
            A->cap = cap;
        }
        A->ops[A->n++] = op;
        op->attr.smem_bytes = (need + 15) & ~15;
    }
    return true;
}

/* Walks a block with the busy set, calling `at` for every scratch op and `bar` for
 * every barrier; shared with the barriers pass through the callbacks. */
typedef struct Flow {
    int nw;
    TirArena *arena;
    void *ud;
    int (*index)(void *ud, const TirOp *op);                        /* scratch op number, or -1 */
    void (*at)(void *ud, TirOp *op, int idx, const uint64_t *busy); /* before its writes */
} Flow;

static uint64_t *bs_new(const Flow *F) {
    return tir_alloc(F->arena, (size_t)(F->nw ? F->nw : 1) * 8);
}
static void bs_or(const Flow *F, uint64_t *a, const uint64_t *b) {
    for (int i = 0; i < F->nw; i++)
        a[i] |= b[i];
}
static bool bs_eq(const Flow *F, const uint64_t *a, const uint64_t *b) {
    return memcmp(a, b, (size_t)F->nw * 8) == 0;
}

static void flow_block(const Flow *F, TirBlock *blk, uint64_t *busy);

static void flow_op(const Flow *F, TirOp *op, uint64_t *busy) {
    if (op->code == TIR_OP_BARRIER) {
        memset(busy, 0, (size_t)F->nw * 8);
        return;
    }
    if (op->code == TIR_OP_FOR && op->nregion) {
        /* iterate to a fixed point: busy at the head = before the loop | end of the body */
        uint64_t *head = bs_new(F), *end = bs_new(F);
        memcpy(head, busy, (size_t)F->nw * 8);
        for (int it = 0; it < 64; it++) {
            memcpy(end, head, (size_t)F->nw * 8);
            flow_block(F, op->region[0], end);
            uint64_t *next = bs_new(F);
            memcpy(next, busy, (size_t)F->nw * 8);
            bs_or(F, next, end);
            if (bs_eq(F, next, head))
                break;
            memcpy(head, next, (size_t)F->nw * 8);
        }
        /* the loop may run zero times: the exit sees the head's set */
        memcpy(busy, head, (size_t)F->nw * 8);
        return;
    }
    if (op->code == TIR_OP_IF) {
        uint64_t *out = bs_new(F);
        for (int r = 0; r < op->nregion; r++) {
            uint64_t *b = bs_new(F);
            memcpy(b, busy, (size_t)F->nw * 8);
            flow_block(F, op->region[r], b);
            bs_or(F, out, b);
        }
        if (op->nregion < 2)
            bs_or(F, out, busy);
        memcpy(busy, out, (size_t)F->nw * 8);
        return;
    }
    int idx = F->index(F->ud, op);
    if (idx < 0)
        return;
    F->at(F->ud, op, idx, busy);
    /* its internal barrier ends every earlier op's reads; its own bytes are now busy */
    memset(busy, 0, (size_t)F->nw * 8);
    busy[idx / 64] |= 1ull << (idx % 64);
}

static void flow_block(const Flow *F, TirBlock *blk, uint64_t *busy) {
    for (TirOp *op = blk->first; op; op = op->next)
        flow_op(F, op, busy);
}

static int alloc_index(void *ud, const TirOp *op) {
    return op->attr.smem_bytes > 0 ? op_index(ud, op) : -1;
}

static void alloc_at(void *ud, TirOp *op, int idx, const uint64_t *busy) {
    Alloc *A = ud;
    for (int j = 0; j < A->n; j++)
        if (busy[j / 64] >> (j % 64) & 1) {
            A->edge[idx * A->n + j] = 1;
            A->edge[j * A->n + idx] = 1;
        }
}

/* ---- rings: the shared buffers of the software pipeline ----
 * A buffer is busy from its smem_alloc to the first barrier after its last use (the
 * pipeline's drain).  Buffers take [0, R) one after another; scratch ops placed while a
 * buffer is busy move up by R, the others keep their places (the epilogue after the drain
 * reuses the ring's bytes). */
typedef struct Rings {
    PassOpVec allocs;
    TirOp **order; /* every op, pre-order */
    int n, cap;
    TirArena *arena;
} Rings;

static bool ring_collect(TirOp *op, void *ud) {
    Rings *R = ud;
    if (R->n == R->cap) {
        int cap = R->cap ? R->cap * 2 : 256;
        TirOp **o = tir_alloc(R->arena, (size_t)cap * sizeof *o);
        if (R->n)
            memcpy(o, R->order, (size_t)R->n * sizeof *o);
        R->order = o;
        R->cap = cap;
    }
    R->order[R->n++] = op;
    if (op->code == TIR_OP_SMEM_ALLOC && op->nres == 1)
        pass_opvec_push(&R->allocs, op);
    return true;
}

static int32_t ring_bytes(const TirModule *m, const TirOp *op) {
    int32_t b = analysis_scratch_bytes(m, op);
    return ((b > INT32_MAX - 15 ? INT32_MAX - 15 : b) + 15) & ~15;
}

static int32_t place_rings(TirFunc *f, TirModule *m, Alloc *A, int32_t top) {
    Rings R = {.arena = m->arena};
    tir_walk_func(f, ring_collect, &R);
    if (!R.allocs.n)
        return top;
    int32_t base = 0;
    int *lo = tir_alloc(m->arena, sizeof(int) * R.allocs.n), *hi = tir_alloc(m->arena, sizeof(int) * R.allocs.n);
    for (size_t k = 0; k < R.allocs.n; k++) {
        TirOp *a = R.allocs.v[k];
        a->attr.smem_off = base;
        a->attr.smem_bytes = ring_bytes(m, a);
        base += a->attr.smem_bytes;
        int first = -1, last = -1;
        for (int i = 0; i < R.n; i++) {
            if (R.order[i] == a)
                first = i;
            for (int j = 0; j < R.order[i]->nopnd; j++)
                if (R.order[i]->opnd[j] == a->res[0])
                    last = i;
        }
        int end = R.n;
        for (int i = last + 1; i < R.n; i++)
            if (R.order[i]->code == TIR_OP_BARRIER) {
                end = i;
                break;
            }
        lo[k] = first;
        hi[k] = end;
    }
    int32_t ntop = base;
    for (int i = 0; i < A->n; i++) {
        TirOp *op = A->ops[i];
        int pos = -1;
        for (int j = 0; j < R.n; j++)
            if (R.order[j] == op)
                pos = j;
        bool busy = false;
        for (size_t k = 0; k < R.allocs.n; k++)
            busy |= pos > lo[k] && pos < hi[k];
        if (busy)
            op->attr.smem_off += base;
        if (op->attr.smem_off + op->attr.smem_bytes > ntop)
            ntop = op->attr.smem_off + op->attr.smem_bytes;
    }
    free(R.allocs.v);
    return ntop > top ? ntop : top;
}

static int alloc_func(TirPassContext *ctx, TirModule *m, TirFunc *f) {
    Alloc A = {.m = m};
    tir_walk_func(f, collect, &A);
    if (!A.n) {
        int32_t top = place_rings(f, m, &A, 0);
        int limit = tir_target_smem_optin(ctx->arch);
        if (top > limit)
            return pass_error_at(ctx, "smem_alloc", f, f->loc,
                                 "the kernel needs %d bytes of shared memory, more than the %d KiB "
                                 "a CTA can have on %s: use smaller blocks or fewer stages",
                                 (int)top, limit / 1024, ctx->arch ? ctx->arch : "sm_80");
        return 0;
    }
    /* The interference matrix is n x n bytes: bound n so that a kernel of many unrolled
     * reductions is a located error, not gigabytes (27,000 such ops asked for 729 MB). */
    if (A.n > SMEM_ALLOC_MAX_OPS)
        return pass_error_at(ctx, "smem_alloc", f, f->loc,
                             "the kernel has %d ops that exchange data through shared memory "
                             "(reductions, scans, layout conversions), more than the %d a kernel may have: "
                             "unroll less (static_range) or reduce once after a loop",
                             A.n, SMEM_ALLOC_MAX_OPS);
    A.edge = tir_alloc(m->arena, (size_t)A.n * (size_t)A.n);
    Flow F = {.nw = (A.n + 63) / 64, .arena = m->arena, .ud = &A, .index = alloc_index, .at = alloc_at};
    uint64_t *busy = bs_new(&F);
    flow_block(&F, f->body, busy);
    /* first fit in program order, away from the interfering ops already placed */
    int32_t top = 0;
    for (int i = 0; i < A.n; i++) {
        TirOp *op = A.ops[i];
        int32_t size = op->attr.smem_bytes, off = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (int j = 0; j < i; j++) {
                if (!A.edge[i * A.n + j])
                    continue;
                int32_t o = A.ops[j]->attr.smem_off, s = A.ops[j]->attr.smem_bytes;
                if (off < o + s && o < off + size) {
                    off = o + s;
                    moved = true;
                }
            }
        }
        op->attr.smem_off = off;
        if (off + size > top)
            top = off + size;
    }
    top = place_rings(f, m, &A, top);
    /* Past 48 KiB the backend uses dynamic shared memory, which the runtime opts in to;
     * the limit is the architecture's per-CTA maximum. */
    int limit = tir_target_smem_optin(ctx->arch);
    if (top > limit)
        return pass_error_at(ctx, "smem_alloc", f, f->loc,
                             "the kernel needs %d bytes of shared memory, more than the %d KiB "
                             "a CTA can have on %s: use smaller blocks or fewer stages",
                             (int)top, limit / 1024, ctx->arch ? ctx->arch : "sm_80");
    return 0;
}

int pass_smem_alloc(TirModule *m, TirPassContext *ctx) {
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next)
        if (f->kind == TIR_FUNC_KERNEL)
            errors += alloc_func(ctx, m, f);
    return errors;
}

/* ---- shared with barriers.c ---- */

/* Runs the busy-set dataflow over f: `at` sees each scratch op (ops with smem_bytes)
 * with the set of scratch ops whose bytes may be busy before its writes. */
typedef void (*PassSmemVisit)(void *ud, TirOp *op, TirOp *const *busy_ops, int nbusy);

typedef struct Visit {
    Alloc A;
    PassSmemVisit fn;
    void *ud;
    TirOp **tmp;
} Visit;

static int visit_index(void *ud, const TirOp *op) {
    Visit *V = ud;
    return op->attr.smem_bytes > 0 ? op_index(&V->A, op) : -1;
}

static void visit_at(void *ud, TirOp *op, int idx, const uint64_t *busy) {
    Visit *V = ud;
    int k = 0;
    for (int j = 0; j < V->A.n; j++)
        if (busy[j / 64] >> (j % 64) & 1)
            V->tmp[k++] = V->A.ops[j];
    V->fn(V->ud, op, V->tmp, k);
}

static bool collect_placed(TirOp *op, void *ud) {
    Alloc *A = ud;
    if (op->attr.smem_bytes <= 0)
        return true;
    if (A->n == A->cap) {
        int cap = A->cap ? A->cap * 2 : 16;
        TirOp **n = tir_alloc(A->m->arena, (size_t)cap * sizeof *n);
        if (A->n)
            memcpy(n, A->ops, (size_t)A->n * sizeof *n);
        A->ops = n;
        A->cap = cap;
    }
    A->ops[A->n++] = op;
    return true;
}

void pass_smem_flow(TirModule *m, TirFunc *f, PassSmemVisit fn, void *ud);
void pass_smem_flow(TirModule *m, TirFunc *f, PassSmemVisit fn, void *ud) {
    Visit V = {.A = {.m = m}, .fn = fn, .ud = ud};
    tir_walk_func(f, collect_placed, &V.A);
    if (!V.A.n)
        return;
    V.tmp = tir_alloc(m->arena, (size_t)V.A.n * sizeof *V.tmp);
    Flow F = {.nw = (V.A.n + 63) / 64, .arena = m->arena, .ud = &V, .index = visit_index, .at = visit_at};
    uint64_t *busy = bs_new(&F);
    flow_block(&F, f->body, busy);
}
