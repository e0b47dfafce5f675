/* barriers: the fewest explicit `barrier` ops that order every shared-memory access,
 * then the proof that they do.
 *
 * Model (what the backend emits, backend/lower_reduce.c): a scratch op (attr.smem_bytes
 * > 0, placed by smem_alloc) writes its bytes, waits at one barrier of its own, then
 * reads them.  Read-after-write inside an op is ordered by that barrier.  What is left
 * is write-after-read between ops: op B's writes must not start while another thread
 * may still read op A's overlapping bytes, i.e. some barrier must lie between A's reads
 * and B's writes on every path (loop back edges included).  The busy-set dataflow of
 * smem_alloc.c gives, before each scratch op, the ops whose bytes may still be read;
 * an overlap there needs a barrier.
 *
 * `barriers` inserts a barrier right before each op whose writes would race (only
 * where first-fit could not keep the bytes apart: an op alone in a loop body reusing
 * its own bytes), then runs the proof.  `barriers_check` runs the proof alone; a failed
 * proof is an error naming both ops, never a silent race. */
#include "pass_util.h"

#include <string.h>

typedef void (*PassSmemVisit)(void *ud, TirOp *op, TirOp *const *busy_ops, int nbusy);
void pass_smem_flow(TirModule *m, TirFunc *f, PassSmemVisit fn, void *ud);

static bool overlap(const TirOp *a, const TirOp *b) {
    return a->attr.smem_off < b->attr.smem_off + b->attr.smem_bytes &&
           b->attr.smem_off < a->attr.smem_off + a->attr.smem_bytes;
}

/* ---- insertion ---- */

typedef struct Need {
    TirOp **ops;
    int n, cap;
    TirArena *arena;
} Need;

static void mark(void *ud, TirOp *op, TirOp *const *busy, int nbusy) {
    Need *N = ud;
    bool race = false;
    for (int i = 0; i < nbusy && !race; i++) race = overlap(op, busy[i]);
    if (!race) return;
    for (int i = 0; i < N->n; i++)
        if (N->ops[i] == op) return;
    if (N->n == N->cap) {
        int cap = N->cap ? N->cap * 2 : 8;
        TirOp **o = tir_alloc(N->arena, (size_t)cap * sizeof *o);
        if (N->n) memcpy(o, N->ops, (size_t)N->n * sizeof *o);
        N->ops = o;
        N->cap = cap;
    }
    N->ops[N->n++] = op;
}

/* ---- the proof ---- */

typedef struct Proof {
    TirPassContext *ctx;
    const char *pass;
    TirFunc *f;
    TirModule *m;
    int errors;
} Proof;

static void describe(char *buf, size_t n, const TirOp *op) {
    if (op->nres && op->res[0])
        snprintf(buf, n, "'%s' (%%%d, bytes %d..%d)", tir_op_info[op->code].name, op->res[0]->id,
                 op->attr.smem_off, op->attr.smem_off + op->attr.smem_bytes);
    else
        snprintf(buf, n, "'%s' (bytes %d..%d)", tir_op_info[op->code].name, op->attr.smem_off,
                 op->attr.smem_off + op->attr.smem_bytes);
}

static void prove(void *ud, TirOp *op, TirOp *const *busy, int nbusy) {
    Proof *P = ud;
    for (int i = 0; i < nbusy; i++) {
        if (!overlap(op, busy[i])) continue;
        char a[128], b[128];
        describe(a, sizeof a, op);
        describe(b, sizeof b, busy[i]);
        /* a loop's fixed point can visit an op more than once: one message per pair */
        if (P->errors < 1000)
            pass_error(P->ctx, P->pass, P->f,
                       "shared-memory race: the writes of %s may overlap reads of %s by other threads "
                       "with no barrier between them",
                       a, b);
        P->errors++;
    }
}

static bool check_alloc(TirOp *op, void *ud) {
    Proof *P = ud;
    int32_t need = pass_smem_need(P->m, op);
    if (need > op->attr.smem_bytes) {
        pass_error(P->ctx, P->pass, P->f, "'%s' needs %d bytes of shared scratch but has %d: run smem_alloc",
                   tir_op_info[op->code].name, (int)need, (int)op->attr.smem_bytes);
        P->errors++;
    }
    return true;
}

static int prove_func(TirPassContext *ctx, const char *pass, TirModule *m, TirFunc *f) {
    Proof P = {ctx, pass, f, m, 0};
    tir_walk_func(f, check_alloc, &P);
    if (P.errors) return P.errors;
    pass_smem_flow(m, f, prove, &P);
    return P.errors;
}

int pass_barriers(TirModule *m, TirPassContext *ctx) {
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next) {
        if (f->kind != TIR_FUNC_KERNEL) continue;
        Need N = {.arena = m->arena};
        pass_smem_flow(m, f, mark, &N);
        for (int i = 0; i < N.n; i++) {
            TirBuilder b;
            tir_builder_before(&b, N.ops[i]);
            b.loc = N.ops[i]->loc;
            tir_op_new(&b, TIR_OP_BARRIER, 0, NULL, 0, NULL, 0);
        }
        errors += prove_func(ctx, "barriers", m, f);
    }
    return errors;
}

int pass_barriers_check(TirModule *m, TirPassContext *ctx) {
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next)
        if (f->kind == TIR_FUNC_KERNEL) errors += prove_func(ctx, "barriers_check", m, f);
    return errors;
}
