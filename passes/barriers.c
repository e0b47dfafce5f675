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
#include "analysis.h"
#include "pass_util.h"

#include <string.h>

typedef void (*PassSmemVisit)(void *ud, TirOp *op, TirOp *const *busy_ops, int nbusy);
void pass_smem_flow(TirModule *m, TirFunc *f, PassSmemVisit fn, void *ud);
/* smem_check.c: scratch against live rings, ring against ring */
int pass_smem_check_overlap(TirPassContext *ctx, const char *pass, TirModule *m, TirFunc *f);

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
    for (int i = 0; i < nbusy && !race; i++)
        race = overlap(op, busy[i]);
    if (!race)
        return;
    for (int i = 0; i < N->n; i++)
        if (N->ops[i] == op)
            return;
    if (N->n == N->cap) {
        int cap = N->cap ? N->cap * 2 : 8;
        TirOp **o = tir_alloc(N->arena, (size_t)cap * sizeof *o);
        if (N->n)
            memcpy(o, N->ops, (size_t)N->n * sizeof *o);
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
        snprintf(buf, n, "'%s' (%%%d, bytes %d..%d)", tir_op_info[op->code].name, op->res[0]->id, op->attr.smem_off,
                 op->attr.smem_off + op->attr.smem_bytes);
    else
        snprintf(buf, n, "'%s' (bytes %d..%d)", tir_op_info[op->code].name, op->attr.smem_off,
                 op->attr.smem_off + op->attr.smem_bytes);
}

static void prove(void *ud, TirOp *op, TirOp *const *busy, int nbusy) {
    Proof *P = ud;
    for (int i = 0; i < nbusy; i++) {
        if (!overlap(op, busy[i]))
            continue;
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
    int32_t need = analysis_scratch_bytes(P->m, op);
    if (need > op->attr.smem_bytes) {
        pass_error(P->ctx, P->pass, P->f, "'%s' needs %d bytes of shared scratch but has %d: run smem_alloc",
                   tir_op_info[op->code].name, (int)need, (int)op->attr.smem_bytes);
        P->errors++;
    }
    return true;
}

/* ---- rings (software_pipeline) ----
 * The proof for a loop reading a ring buffer B with smem_load: in the body, in order,
 *   an async_wait {n} then a barrier before the first read of B (the stage has landed and
 *   every thread's copies are visible);  n <= G - 1, G the commits before the loop since
 *   B's smem_alloc (so the group of the stage read is complete: one commit per iteration);
 *   every async_copy into B after that barrier (last iteration's reads are done), into a
 *   stage other than the one read (a different value);  exactly one commit in the body
 *   after its last async_wait {0} (a nested pipeline's drain completes what came before);
 * and after the loop an async_wait {0} then a barrier (the ring is free for what follows).
 * Reads of B outside a loop need a wait and a barrier after B's last copy. */

static void ring_fail(Proof *P, const TirOp *op, const TirValue *buf, const char *why) {
    char b[32];
    snprintf(b, sizeof b, "%%%d", buf ? buf->id : -1);
    pass_error(P->ctx, P->pass, P->f, "ring %s: '%s' %s", b, tir_op_info[op->code].name, why);
    P->errors++;
}

static bool uses(const TirOp *op, const TirValue *v) {
    for (int i = 0; i < op->nopnd; i++)
        if (op->opnd[i] == v)
            return true;
    return false;
}

static bool block_uses(const TirBlock *blk, const TirValue *v) {
    for (const TirOp *op = blk->first; op; op = op->next) {
        if (uses(op, v))
            return true;
        for (int r = 0; r < op->nregion; r++)
            if (block_uses(op->region[r], v))
                return true;
    }
    return false;
}

static void prove_ring_loop(Proof *P, const TirValue *buf, const TirOp *alloc, const TirOp *loop) {
    int commits = 0;
    for (const TirOp *op = alloc->next; op && op != loop; op = op->next)
        commits += op->code == TIR_OP_ASYNC_COMMIT;
    const TirBlock *body = loop->region[0];
    const TirOp *wait = NULL, *bar = NULL;
    const TirValue *read_stage = NULL;
    int body_commits = 0;
    for (const TirOp *op = body->first; op; op = op->next) {
        if (op->code == TIR_OP_ASYNC_WAIT && !read_stage)
            wait = op, bar = NULL;
        if (op->code == TIR_OP_BARRIER && wait && !bar)
            bar = op;
        /* a full wait later in the body (a nested pipeline's drain) completes every group
         * committed before it, ours included: count the commits after it */
        if (op->code == TIR_OP_ASYNC_WAIT && op->attr.i[0] == 0)
            body_commits = 0;
        body_commits += op->code == TIR_OP_ASYNC_COMMIT;
        if (op->code == TIR_OP_SMEM_LOAD && op->opnd[0] == buf) {
            if (!wait)
                ring_fail(P, op, buf, "reads a stage with no async_wait before it in the loop body");
            else if (!bar)
                ring_fail(P, op, buf, "reads a stage with no barrier between the async_wait and it");
            else if (wait->attr.i[0] > commits - 1)
                ring_fail(P, op, buf,
                          "reads a stage whose group the async_wait does not cover (n larger than "
                          "the prologue's commits - 1)");
            read_stage = op->opnd[1];
        }
        if (op->code == TIR_OP_ASYNC_COPY && op->opnd[0] == buf) {
            if (!bar)
                ring_fail(P, op, buf, "overwrites a stage with no barrier since the last iteration's reads");
            if (op->opnd[1] == read_stage)
                ring_fail(P, op, buf, "overwrites the stage this iteration reads");
        }
    }
    if (body_commits != 1)
        ring_fail(P, loop, buf, "body must commit its copies exactly once");
    const TirOp *d = loop->next, *db = d ? d->next : NULL;
    if (!d || d->code != TIR_OP_ASYNC_WAIT || d->attr.i[0] != 0 || !db || db->code != TIR_OP_BARRIER)
        ring_fail(P, loop, buf, "is not followed by async_wait {n=0} and a barrier (the drain)");
}

static bool prove_rings(TirOp *op, void *ud) {
    Proof *P = ud;
    if (op->code != TIR_OP_SMEM_ALLOC || op->nres != 1)
        return true;
    const TirValue *buf = op->res[0];
    bool copied = false, waited = false, synced = false;
    for (const TirOp *o = op->next; o; o = o->next) {
        if (o->code == TIR_OP_FOR && o->nregion == 1 && block_uses(o->region[0], buf)) {
            prove_ring_loop(P, buf, op, o);
            copied = false;
            continue;
        }
        if (o->code == TIR_OP_ASYNC_COPY && o->opnd[0] == buf)
            copied = true, waited = synced = false;
        if (o->code == TIR_OP_ASYNC_WAIT && o->attr.i[0] == 0)
            waited = true, synced = false;
        if (o->code == TIR_OP_BARRIER && waited)
            synced = true;
        if (o->code == TIR_OP_SMEM_LOAD && o->opnd[0] == buf && copied && !synced)
            ring_fail(P, o, buf, "reads a buffer filled by async copies without async_wait {n=0} and a barrier");
    }
    return true;
}

static int prove_func(TirPassContext *ctx, const char *pass, TirModule *m, TirFunc *f) {
    Proof P = {ctx, pass, f, m, 0};
    tir_walk_func(f, check_alloc, &P);
    if (P.errors)
        return P.errors;
    pass_smem_flow(m, f, prove, &P);
    tir_walk_func(f, prove_rings, &P);
    return P.errors + pass_smem_check_overlap(ctx, pass, m, f);
}

int pass_barriers(TirModule *m, TirPassContext *ctx) {
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next) {
        if (f->kind != TIR_FUNC_KERNEL)
            continue;
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
        if (f->kind == TIR_FUNC_KERNEL)
            errors += prove_func(ctx, "barriers_check", m, f);
    return errors;
}
