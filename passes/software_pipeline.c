/* software_pipeline: loads that feed `dot` in a loop are streamed through a ring of
 * `stages` shared-memory buffers filled ahead by async copies (cp.async on sm_80+).
 *
 * A load qualifies when it sits in the body of a `for` (not nested deeper), its result
 * goes only to a convert_layout into a dot-operand layout (what the layout pass puts in
 * front of every dot operand) and its `other` is absent or +0.  Each thread moving at least 4
 * contiguous bytes copies with cp.async (4, 8 or 16 bytes); a narrower load (no
 * alignment fact) fills its stage through registers: an ordinary load and a smem_store
 * in the copy's place.  The ops computing its pointers and mask (the "address slice")
 * must be pure and depend only on the induction variable, loop-invariant values and
 * carried values whose next value is itself computed that way (the usual `pa += BK`).
 * The loop step must be a positive constant.
 *
 * The loop becomes, with S = stages:
 *     barrier                                   (earlier shared reads are done)
 *     prologue: for p in 0..S-2: copy iteration p into stage p, masked by lb + p*step < ub
 *     for iv ... carrying also the address slice's values S-1 iterations ahead and the
 *                 read and write stages (0 and S-1):
 *         async_wait {n=S-2}; barrier          (iteration iv's stage has landed, and
 *                                               every thread is done with the stage
 *                                               the copy below overwrites)
 *         ... body, the operand read from the ring: smem_load %buf, %read
 *         copy iteration iv + (S-1)*step into stage %write, masked by iv' < ub; commit
 *     async_wait {n=0}; barrier                 (drain: the ring is free after the loop)
 * Copies past the end are fully masked: they read nothing and only zero their stage.
 * `stages` 1 (or a loop without such loads) leaves the loop alone. */
#include "passes.h"
#include "pass_util.h"
#include "layout.h"

#include <math.h>
#include <string.h>

typedef struct {
    TirPassContext *ctx;
    TirFunc *f;
    TirModule *m;
    int stages;
    int errors;
    PassOpVec bypassed; /* and_valid's: ops its masks no longer read (erased if unused) */
} Swp;

typedef struct {
    TirOp *load, *convert; /* the load and its convert_layout into the operand layout */
    TirValue *buf;
    bool narrow; /* under 4 bytes per thread: load + smem_store, not cp.async */
    bool bytes;  /* narrow, of 1-byte elements (ring_cdim, and_valid) */
} Piped;

/* ---- the address slice ---- */

typedef struct {
    TirBlock *body;
    PassOpVec ops; /* the slice, in body order */
    TirPtrMap in;  /* op -> 1 */
    bool ok;
} Slice;

static bool in_body(const TirBlock *body, const TirOp *op) {
    return op && op->parent == body;
}

static void slice_add(Slice *s, TirValue *v) {
    if (!s->ok || !v->def || !in_body(s->body, v->def) || tir_ptrmap_get(&s->in, v->def))
        return;
    TirOp *op = v->def;
    if (!pass_op_has(op, TIR_T_PURE) || op->nregion) {
        s->ok = false;
        return;
    }
    tir_ptrmap_put(&s->in, op, (void *)1);
    for (int i = 0; i < op->nopnd; i++)
        slice_add(s, op->opnd[i]);
}

/* The slice's ops in body order (the body is already in dominance order). */
static void slice_order(Slice *s) {
    s->ops.n = 0;
    for (TirOp *op = s->body->first; op; op = op->next)
        if (tir_ptrmap_get(&s->in, op))
            pass_opvec_push(&s->ops, op);
}

/* Block arguments (carried values, index >= 1) the slice or the loads read. */
static void mark_arg(const TirBlock *body, const TirValue *v, bool *used) {
    if (v && !v->def && v->block == body && v->index >= 1 && v->index < 64)
        used[v->index] = true;
}

static void slice_args(const Slice *s, const TirOp *const *loads, int nloads, bool *used) {
    for (size_t k = 0; k < s->ops.n; k++)
        for (int i = 0; i < s->ops.v[k]->nopnd; i++)
            mark_arg(s->body, s->ops.v[k]->opnd[i], used);
    for (int j = 0; j < nloads; j++)
        for (int i = 0; i < loads[j]->nopnd; i++)
            mark_arg(s->body, loads[j]->opnd[i], used);
}

/* ---- cloning a slice with some values replaced ---- */

typedef struct {
    TirPtrMap map; /* old value -> new value */
} Env;

static TirValue *env_get(Env *e, TirValue *v) {
    TirValue *n = tir_ptrmap_get(&e->map, v);
    return n ? n : v;
}

static void clone_slice(TirBuilder *b, const Slice *s, Env *e) {
    for (size_t k = 0; k < s->ops.n; k++) {
        TirOp *op = s->ops.v[k];
        TirValue *from[16], *to[16];
        int n = 0;
        for (int i = 0; i < op->nopnd && n < 16; i++) {
            TirValue *m = tir_ptrmap_get(&e->map, op->opnd[i]);
            if (m) {
                from[n] = op->opnd[i];
                to[n++] = m;
            }
        }
        TirOp *c = tir_op_clone(b, op, from, to, n);
        for (int i = 0; i < op->nres; i++)
            tir_ptrmap_put(&e->map, op->res[i], c->res[i]);
    }
}

/* ---- building blocks ---- */

static TirValue *i32c(TirBuilder *b, int64_t v) {
    return tir_const_int(b, tir_scalar_type(TIR_I32), v);
}

static TirOp *emit0(TirBuilder *b, TirOpcode code, int nopnd, TirValue *const *opnd) {
    return tir_op_new(b, code, nopnd, opnd, 0, NULL, 0);
}

/* mask & splat(valid), or splat(valid) when the load had no mask.  For a byte-wide stage
 * filled through registers (Piped.bytes) whose mask is the usual and of two broadcasts (a GEMM operand's rows and columns), valid goes into the narrower
 * of the two before its broadcast: one and a row or column, not one an element (a
 * 64x128x64 int8 tile: 96 fewer predicate ands a stage, and no spill).  Not for wider
 * elements: matmul's f16 128x256x64 on 8 warps (sm_90a, pointers-only form, its stages
 * filled through registers) then spilled 8-20 bytes where it spilled none.  The and of the
 * two broadcasts and the broadcast replaced go into `bypassed`: the pass erases them at its
 * end where nothing else reads them. */
static TirValue *and_valid(TirBuilder *b, TirValue *mask, TirValue *valid, TirType like, bool bytes,
                           PassOpVec *bypassed) {
    TirType mt = like;
    mt.elem = TIR_I1;
    mt.ptr = 0;
    TirOp *d = mask && bytes ? mask->def : NULL;
    if (d && d->code == TIR_OP_AND && d->nopnd == 2 && d->opnd[0]->def && d->opnd[1]->def &&
        d->opnd[0]->def->code == TIR_OP_BROADCAST && d->opnd[1]->def->code == TIR_OP_BROADCAST) {
        TirValue *x = d->opnd[0]->def->opnd[0], *y = d->opnd[1]->def->opnd[0];
        int s = tir_type_numel(y->ty) < tir_type_numel(x->ty) ? 1 : 0; /* the smaller one */
        TirValue *n = s ? y : x;
        if (tir_type_is_tile(n->ty) && n->ty.elem == TIR_I1) {
            TirValue *sp = tir_op1(b, TIR_OP_SPLAT, n->ty, 1, &valid);
            TirValue *nv = tir_binary(b, TIR_OP_AND, n, sp);
            TirValue *bn = tir_op1(b, TIR_OP_BROADCAST, d->opnd[s]->ty, 1, &nv);
            TirValue *other = d->opnd[1 - s];
            pass_opvec_push(bypassed, d);
            pass_opvec_push(bypassed, d->opnd[s]->def);
            return s ? tir_binary(b, TIR_OP_AND, other, bn) : tir_binary(b, TIR_OP_AND, bn, other);
        }
    }
    TirValue *sp = tir_op1(b, TIR_OP_SPLAT, mt, 1, &valid);
    if (!mask)
        return sp;
    return tir_binary(b, TIR_OP_AND, mask, sp);
}

/* The copies of one iteration: each piped load's slice evaluated in env, copied into
 * `stage`, masked by `valid`, then one commit. */
static void emit_copies(TirBuilder *b, Piped *pp, int np, const Slice *s, Env *e, TirValue *stage, TirValue *valid,
                        PassOpVec *bypassed) {
    clone_slice(b, s, e);
    for (int i = 0; i < np; i++) {
        TirOp *ld = pp[i].load;
        TirValue *ptr = env_get(e, ld->opnd[0]);
        TirValue *mask = ld->nopnd > 1 ? env_get(e, ld->opnd[1]) : NULL;
        TirValue *m = and_valid(b, mask, valid, ptr->ty, pp[i].bytes, bypassed);
        if (pp[i].narrow) {
            /* under 4 bytes a thread (no alignment fact): an ordinary load into registers
             * and a store into the stage.  The load's address is known at the top of the
             * body, so the scheduler issues it there and its latency overlaps the mmas */
            TirValue *lo[2] = {ptr, m};
            TirValue *v = tir_op1(b, TIR_OP_LOAD, ld->res[0]->ty, 2, lo);
            v->def->attr = ld->attr;
            TirValue *so[3] = {pp[i].buf, stage, v};
            emit0(b, TIR_OP_SMEM_STORE, 3, so);
            continue;
        }
        TirValue *ops[4] = {pp[i].buf, stage, ptr, m};
        TirOp *c = emit0(b, TIR_OP_ASYNC_COPY, 4, ops);
        c->attr.i[1] = ld->attr.i[1]; /* the load's proven vector width */
    }
    emit0(b, TIR_OP_ASYNC_COMMIT, 0, NULL);
}

/* (x + 1) % S as a compare and select: the ring index without a division */
static TirValue *next_stage(TirBuilder *b, TirValue *x, int S) {
    TirValue *n = tir_binary(b, TIR_OP_ADD, x, i32c(b, 1));
    TirValue *wrap = tir_cmp(b, TIR_CMP_GE, n, i32c(b, S));
    TirValue *ops[3] = {wrap, i32c(b, 0), n};
    return tir_op1(b, TIR_OP_SELECT, n->ty, 3, ops);
}

/* ---- one loop ---- */

/* An `other` that is +0 (what masked lanes give by default, and what a masked async copy
 * writes) changes nothing: `load(p, mask=m, other=0.0)` streams like `load(p, mask=m)`. */
static bool other_is_default(const TirOp *ld) {
    if (ld->nopnd < 3)
        return true;
    const TirOp *c = ld->opnd[2]->def;
    if (!c || c->code != TIR_OP_CONSTANT)
        return false;
    if (tir_scalar_is_float((TirScalar)ld->opnd[2]->ty.elem))
        return c->attr.fval == 0.0 && !signbit(c->attr.fval);
    return c->attr.ival == 0;
}

static bool qualifies(Swp *W, TirBlock *body, TirOp *ld, TirOp **conv, bool *narrow) {
    if (ld->code != TIR_OP_LOAD || ld->nopnd > 3 || !other_is_default(ld) || ld->nres != 1 ||
        !tir_type_is_tile(ld->res[0]->ty))
        return false;
    TirOp *user = NULL;
    int uses = 0;
    for (TirOp *op = body->first; op; op = op->next)
        for (int i = 0; i < op->nopnd; i++)
            if (op->opnd[i] == ld->res[0]) {
                user = op;
                uses++;
            }
    if (uses != 1 || user->code != TIR_OP_CONVERT_LAYOUT)
        return false;
    if (tir_layout_kind(W->m, user->res[0]->ty.layout) != TIR_LAYOUT_DOT_OPERAND)
        return false;
    int eb = tir_scalar_bytes((TirScalar)ld->res[0]->ty.elem);
    int vec = ld->attr.i[1] > 1 ? (int)ld->attr.i[1] : 1;
    *narrow = vec * eb < 4;
    *conv = user;
    return true;
}

/* The shared layout of a ring stage: 16-byte vectors along the contiguous dimension,
 * XOR-swizzled by row so that neither the copies nor ldmatrix conflict on banks. */
static int32_t ring_layout(TirModule *m, TirType t, int cdim) {
    int eb = tir_scalar_bytes((TirScalar)t.elem);
    int vec = 16 / eb;
    int64_t row_bytes = (int64_t)t.shape[cdim] * eb;
    int per_phase = row_bytes >= 128 ? 1 : (int)(128 / row_bytes);
    int chunks = (int)(row_bytes / 16);
    int max_phase = chunks >= 8 ? 8 : chunks < 1 ? 1 : chunks;
    int32_t order[TIR_MAXRANK];
    order[0] = cdim;
    for (int d = t.rank - 1, k = 1; d >= 0; d--)
        if (d != cdim)
            order[k++] = d;
    return tir_layout_shared(m, t.rank, order, vec, per_phase, max_phase, 0);
}

static int blocked_cdim(const TirModule *m, int32_t lay, int rank) {
    if (tir_layout_kind(m, lay) != TIR_LAYOUT_BLOCKED)
        return rank - 1;
    int32_t order[TIR_MAXRANK];
    tir_layout_order(m, lay, order);
    return order[0];
}

/* The ring's contiguous dimension: the load's, except for a narrow fill of a byte-wide
 * operand.  Its stores go element by element whatever the ring's order, but an 8-bit
 * operand register holds 4 consecutive K elements (mma.sync's k-width 4, and ldmatrix
 * cannot transpose bytes): with K contiguous in the stage the operand reads are 32-bit
 * loads, 4 bytes each, not 4 byte loads and the shifts that pack them (in a 64x128x64
 * e4m3 tile, B's byte reads were 192 values a thread in flight, and it spilled). */
static int ring_cdim(const TirModule *m, const Piped *p, TirType lt) {
    int cdim = blocked_cdim(m, lt.layout, lt.rank), op_idx, kw;
    if (!p->bytes || lt.rank < 2)
        return cdim;
    if (!tir_layout_dot_params(m, p->convert->res[0]->ty.layout, &op_idx, &kw) || kw != 4)
        return cdim;
    return op_idx == 0 ? lt.rank - 1 : lt.rank - 2;
}

static void pipeline_loop(Swp *W, TirOp *loop) {
    int S = W->stages;
    TirBlock *body = loop->region[0];
    TirValue *step = loop->opnd[2];
    if (!step->def || step->def->code != TIR_OP_CONSTANT || step->def->attr.ival <= 0)
        return;
    Piped pp[8];
    int np = 0;
    for (TirOp *op = body->first; op && np < 8; op = op->next) {
        TirOp *conv;
        bool narrow;
        if (qualifies(W, body, op, &conv, &narrow))
            pp[np++] = (Piped){op, conv, NULL, narrow, narrow && tir_scalar_bytes((TirScalar)op->res[0]->ty.elem) == 1};
    }
    if (!np)
        return;
    /* the address slice of every piped load, then the carried values it reads, and the
     * slices of their next values: all must close over iv, carried and outer values */
    Slice s = {body, {0}, {0}, true};
    for (int i = 0; i < np; i++)
        for (int k = 0; k < pp[i].load->nopnd; k++)
            slice_add(&s, pp[i].load->opnd[k]);
    TirOp *y = body->last;
    int ncar = loop->nres;
    bool used[64] = {0};
    if (ncar + 1 > 64 || !y || y->code != TIR_OP_YIELD)
        goto out;
    const TirOp *loads[8];
    for (int i = 0; i < np; i++)
        loads[i] = pp[i].load;
    slice_order(&s);
    slice_args(&s, loads, np, used);
    for (bool grew = true; grew && s.ok;) {
        grew = false;
        for (int c = 0; c < ncar; c++)
            if (used[1 + c])
                slice_add(&s, y->opnd[c]);
        slice_order(&s);
        bool u2[64] = {0};
        slice_args(&s, loads, np, u2);
        for (int c = 0; c < ncar; c++)
            if (used[1 + c])
                mark_arg(body, y->opnd[c], u2);
        for (int k = 0; k < 64; k++)
            if (u2[k] && !used[k])
                used[k] = grew = true;
    }
    if (!s.ok)
        goto out;
    for (size_t k = 0; k < s.ops.n; k++)
        for (int i = 0; i < np; i++)
            if (s.ops.v[k] == pp[i].load || s.ops.v[k] == pp[i].convert)
                goto out; /* loads feeding addresses */

    TirBuilder b;
    tir_builder_before(&b, loop);
    b.loc = loop->loc;
    TirValue *lb = loop->opnd[0], *ub = loop->opnd[1];
    /* the ring buffers */
    for (int i = 0; i < np; i++) {
        TirType lt = pp[i].load->res[0]->ty;
        TirType bt = tir_smem_type((TirScalar)lt.elem, S, lt.rank, lt.shape);
        bt.layout = ring_layout(W->m, lt, ring_cdim(W->m, &pp[i], lt));
        TirOp *a = tir_op_new(&b, TIR_OP_SMEM_ALLOC, 0, NULL, 1, &bt, 0);
        pp[i].buf = a->res[0];
    }
    emit0(&b, TIR_OP_BARRIER, 0, NULL);
    /* prologue */
    TirValue *cur[64] = {0};
    for (int c = 0; c < ncar; c++)
        cur[c] = loop->opnd[3 + c];
    for (int p = 0; p < S - 1; p++) {
        TirValue *iv = tir_binary(&b, TIR_OP_ADD, lb, tir_const_int(&b, lb->ty, p * step->def->attr.ival));
        TirValue *valid = tir_cmp(&b, TIR_CMP_LT, iv, ub);
        Env e = {{0}};
        tir_ptrmap_put(&e.map, body->args[0], iv);
        for (int c = 0; c < ncar; c++)
            if (used[1 + c])
                tir_ptrmap_put(&e.map, body->args[1 + c], cur[c]);
        emit_copies(&b, pp, np, &s, &e, i32c(&b, p), valid, &W->bypassed);
        /* stages filled through registers: one stage's loads in flight at a time.  Nothing
         * else orders them, and ptxas issued every prologue stage's loads before the first
         * store (a 64x128x64 tile on 4 warps, 4 stages: 288 values a thread, and spills);
         * a barrier is the one thing it does not move a global load above */
        bool narrow = false;
        for (int i = 0; i < np; i++)
            narrow = narrow || pp[i].narrow;
        if (narrow && p + 2 < S)
            emit0(&b, TIR_OP_BARRIER, 0, NULL);
        TirValue *nxt[64];
        for (int c = 0; c < ncar; c++)
            nxt[c] = used[1 + c] ? env_get(&e, y->opnd[c]) : cur[c];
        memcpy(cur, nxt, sizeof(TirValue *) * (size_t)ncar);
        tir_ptrmap_free(&e.map);
    }
    /* the new loop: the old carried values still needed, the ahead ones, and the read
     * and write stages.  A carried value only the address slice reads (the usual
     * pointer tile) is dropped: its ahead copy replaces it. */
    int nahead = 0, nkeep = 0;
    int ahead_of[64], keep_of[64], ahead_idx[64];
    for (int c = 0; c < ncar; c++) {
        bool drop = false;
        if (used[1 + c]) {
            ahead_idx[c] = nahead;
            ahead_of[nahead++] = c;
            drop = tir_count_uses(W->f, loop->res[c]) == 0;
            for (TirOp *op = body->first; op && drop; op = op->next) {
                if (tir_ptrmap_get(&s.in, op))
                    continue;
                for (int i = 0; i < op->nopnd; i++) {
                    bool piped_load = false;
                    for (int j = 0; j < np; j++)
                        piped_load |= op == pp[j].load;
                    if (op->opnd[i] == body->args[1 + c] && !piped_load && !(op == y && i == c))
                        drop = false;
                }
            }
        }
        if (!drop)
            keep_of[nkeep++] = c;
    }
    int nn = nkeep + nahead + 2;
    TirValue **ops = tir_alloc(W->m->arena, sizeof(TirValue *) * (size_t)(3 + nn));
    TirType *rt = tir_alloc(W->m->arena, sizeof(TirType) * (size_t)nn);
    ops[0] = lb;
    ops[1] = ub;
    ops[2] = step;
    for (int k = 0; k < nkeep; k++) {
        ops[3 + k] = loop->opnd[3 + keep_of[k]];
        rt[k] = loop->res[keep_of[k]]->ty;
    }
    for (int a = 0; a < nahead; a++) {
        ops[3 + nkeep + a] = cur[ahead_of[a]];
        rt[nkeep + a] = loop->res[ahead_of[a]]->ty;
    }
    ops[3 + nkeep + nahead] = i32c(&b, 0);
    ops[3 + nkeep + nahead + 1] = i32c(&b, S - 1);
    rt[nkeep + nahead] = rt[nkeep + nahead + 1] = tir_scalar_type(TIR_I32);
    TirOp *nl = tir_op_new(&b, TIR_OP_FOR, 3 + nn, ops, nn, rt, 1);
    TirBlock *nb = nl->region[0];
    TirValue *niv = tir_block_add_arg(nb, body->args[0]->ty);
    niv->name = body->args[0]->name;
    TirValue *nargs[64 + 64 + 2];
    for (int k = 0; k < nn; k++) {
        nargs[k] = tir_block_add_arg(nb, rt[k]);
        if (k < nkeep)
            nargs[k]->name = body->args[1 + keep_of[k]]->name;
        else if (k < nkeep + nahead)
            nargs[k]->name = body->args[1 + ahead_of[k - nkeep]]->name;
    }
    /* move the body over */
    while (body->first) {
        TirOp *op = body->first;
        tir_op_detach(op);
        tir_op_insert_at_end(nb, op);
    }
    tir_replace_all_uses(W->f, body->args[0], niv);
    TirValue *arg_now[64];
    for (int c = 0; c < ncar; c++)
        arg_now[c] = used[1 + c] ? nargs[nkeep + ahead_idx[c]] : NULL;
    for (int k = 0; k < nkeep; k++) {
        tir_replace_all_uses(W->f, body->args[1 + keep_of[k]], nargs[k]);
        tir_replace_all_uses(W->f, loop->res[keep_of[k]], nl->res[k]);
        arg_now[keep_of[k]] = nargs[k];
    }
    for (int a = 0; a < nahead; a++) /* dropped ones: only dead slice ops still read them */
        if (arg_now[ahead_of[a]] == nargs[nkeep + a])
            tir_replace_all_uses(W->f, body->args[1 + ahead_of[a]], nargs[nkeep + a]);
    TirValue *rd = nargs[nkeep + nahead], *wr = nargs[nkeep + nahead + 1];
    /* top of the body: wait for this iteration's stage, then one barrier */
    TirBuilder tb;
    tir_builder_before(&tb, nb->first);
    tb.loc = loop->loc;
    TirOp *w = emit0(&tb, TIR_OP_ASYNC_WAIT, 0, NULL);
    w->attr.i[0] = S - 2;
    emit0(&tb, TIR_OP_BARRIER, 0, NULL);
    /* the operands from the ring */
    for (int i = 0; i < np; i++) {
        TirBuilder lbld;
        tir_builder_before(&lbld, pp[i].convert);
        lbld.loc = pp[i].convert->loc;
        TirValue *bo[2] = {pp[i].buf, rd};
        TirValue *v = tir_op1(&lbld, TIR_OP_SMEM_LOAD, pp[i].convert->res[0]->ty, 2, bo);
        tir_replace_all_uses(W->f, pp[i].convert->res[0], v);
        tir_op_erase(pp[i].convert);
        tir_op_erase(pp[i].load);
    }
    /* end of the body: the copies S-1 iterations ahead, the ahead values advanced */
    TirOp *ny = nb->last;
    TirBuilder eb;
    tir_builder_before(&eb, ny);
    eb.loc = loop->loc;
    TirValue *ivn = tir_binary(&eb, TIR_OP_ADD, niv, tir_const_int(&eb, niv->ty, (S - 1) * step->def->attr.ival));
    TirValue *valid = tir_cmp(&eb, TIR_CMP_LT, ivn, ub);
    Env e = {{0}};
    tir_ptrmap_put(&e.map, niv, ivn);
    for (int a = 0; a < nahead; a++) {
        TirValue *now = arg_now[ahead_of[a]];
        if (now != nargs[nkeep + a])
            tir_ptrmap_put(&e.map, now, nargs[nkeep + a]);
    }
    /* the slice now names the moved ops, whose operands are the new block args */
    emit_copies(&eb, pp, np, &s, &e, wr, valid, &W->bypassed);
    TirValue **yv = tir_alloc(W->m->arena, sizeof(TirValue *) * (size_t)nn);
    for (int k = 0; k < nkeep; k++)
        yv[k] = ny->opnd[keep_of[k]];
    for (int a = 0; a < nahead; a++)
        yv[nkeep + a] = env_get(&e, ny->opnd[ahead_of[a]]);
    yv[nkeep + nahead] = next_stage(&eb, rd, S);
    yv[nkeep + nahead + 1] = next_stage(&eb, wr, S);
    tir_ptrmap_free(&e.map);
    tir_op_new(&eb, TIR_OP_YIELD, nn, yv, 0, NULL, 0);
    tir_op_erase(ny);
    /* what only the dropped values and the replaced loads needed is dead now */
    for (bool again = true; again;) {
        again = false;
        for (TirOp *op = nb->last, *prev; op; op = prev) {
            prev = op->prev;
            if (!pass_op_has(op, TIR_T_PURE) || op->nregion || !op->nres)
                continue;
            bool dead = true;
            for (int i = 0; i < op->nres && dead; i++)
                dead = tir_count_uses(W->f, op->res[i]) == 0;
            if (dead) {
                tir_op_erase(op);
                again = true;
            }
        }
    }
    /* drain */
    TirBuilder ab;
    tir_builder_before(&ab, loop);
    ab.loc = loop->loc;
    tir_op_detach(nl);
    tir_op_insert_before(loop, nl);
    tir_op_erase(loop);
    if (nl->next) {
        tir_builder_before(&ab, nl->next);
    } else {
        tir_builder_at_end(&ab, nl->parent);
    }
    TirOp *dw = emit0(&ab, TIR_OP_ASYNC_WAIT, 0, NULL);
    dw->attr.i[0] = 0;
    emit0(&ab, TIR_OP_BARRIER, 0, NULL);
out:
    free(s.ops.v);
    tir_ptrmap_free(&s.in);
}

static bool collect_loops(TirOp *op, void *ud) {
    if (op->code == TIR_OP_FOR && op->nregion == 1)
        pass_opvec_push(ud, op);
    return true;
}

int pass_software_pipeline(TirModule *m, TirPassContext *ctx) {
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next) {
        if (f->kind != TIR_FUNC_KERNEL || f->stages <= 1)
            continue;
        Swp W = {ctx, f, m, f->stages, 0, {0}};
        PassOpVec loops = {0};
        tir_walk_func(f, collect_loops, &loops);
        for (size_t i = 0; i < loops.n; i++)
            pipeline_loop(&W, loops.v[i]);
        free(loops.v);
        /* in push order: an and before the broadcast it read (two loads of one mask push
         * the same ops twice: the second finds them detached) */
        for (size_t i = 0; i < W.bypassed.n; i++) {
            TirOp *op = W.bypassed.v[i];
            if (op->parent && tir_count_uses(f, op->res[0]) == 0)
                tir_op_erase(op);
        }
        free(W.bypassed.v);
        errors += W.errors;
    }
    return errors;
}
