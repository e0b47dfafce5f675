/* Chains: a store together with the loads and elementwise float ops that compute only its
 * value, lowered element chunk by element chunk (load, compute, store one chunk, then the
 * next) instead of op by op, when op by op would need more registers than a thread has.
 *
 * Op by op, every load of the chain is issued before the first store: ptxas may not move a
 * load above an earlier store to memory it cannot prove distinct, and it issues the loads
 * as early as it may, so all their destinations are live at once together with the chain's
 * other tile inputs.  Layernorm BLOCK=16384 with 4 warps, unaligned: 128 f32 `d` per thread
 * plus 128 + 128 scalar f16 loads of `w` and `b` (one register each), and ptxas spilled.
 * In chunks, each store sits between the loads of its chunk and those of the next, so at
 * most one chunk's loads are in flight.
 *
 * Why this order is allowed (docs/language.md "Memory"): the lanes of one program run in
 * parallel, so a store at one element and a load of the same chain at another element that
 * touch the same address are a race whatever the order; what the chunks keep is the order
 * the language promises, each element's loads before its own store.
 *
 * A second kind has no load: a store's pointer tile computed for the store alone (an
 * addptr of per-row and per-column parts) and the pure ops of its value, chunked when the
 * pointers (two registers each, a pointer per vector) would not fit with the value: a
 * 128x256 GEMM epilogue storing one element at a time (a generic form) computed 128
 * pointers a thread before the first store, next to the converted accumulators. */
#include "tb_internal.h"

#include <string.h>

/* Registers a thread may hold for the chain before it is lowered in chunks (a thread has
 * 255), and the most a chunk's loads plus the chain's other inputs should take. */
#define CHAIN_MAX_REGS   255
#define CHAIN_CHUNK_REGS 192

struct TbChain {
    TirOp *store;
    TirOp **ops; /* members in block order, the store last */
    int nops;
    int n;     /* elements per thread */
    int chunk; /* elements per chunk, divides n */
    TbChain *next;
};

static bool member_kind(const TirOp *op, const TirType *vt) {
    if (op->nres != 1 || op->nregion || !tir_type_is_tile(op->res[0]->ty))
        return false;
    TirType t = op->res[0]->ty;
    if (t.layout != vt->layout || t.rank != vt->rank)
        return false;
    for (int d = 0; d < t.rank; d++)
        if (t.shape[d] != vt->shape[d])
            return false;
    if (op->code == TIR_OP_LOAD)
        return !t.ptr && op->nopnd >= 1;
    if (!(tir_op_info[op->code].traits & TIR_T_ELEMENTWISE) || op->code == TIR_OP_ADDPTR || op->code == TIR_OP_CMP)
        return false;
    return !t.ptr && tir_scalar_is_float((TirScalar)t.elem);
}

/* A pointer tile of the store's shape and layout. */
static bool ptr_kind(const TirOp *op, const TirType *vt) {
    TirType t = op->res[0]->ty;
    if (!tir_type_is_tile(t) || !t.ptr || t.layout != vt->layout || t.rank != vt->rank)
        return false;
    for (int d = 0; d < t.rank; d++)
        if (t.shape[d] != vt->shape[d])
            return false;
    return true;
}

/* Registers one element of a value takes: bytes/4 when two or more share a word (vector
 * accesses), else a whole register. */
static int regs_x4(TirType t, int vec) {
    int b = t.ptr ? 8 : tir_scalar_bytes((TirScalar)t.elem);
    return vec >= 2 ? b : b < 4 ? 4 : b; /* in quarter registers */
}

/* A tile input of the chain that holds a register per element: not a pointer or a mask
 * (affine and limit forms), not the same in every element. */
static bool held_input(const TirValue *v) {
    if (!tir_type_is_tile(v->ty) || v->ty.ptr || v->ty.elem == TIR_I1)
        return false;
    const TirOp *d = v->def;
    return !d || (d->code != TIR_OP_SPLAT && d->code != TIR_OP_CONSTANT && d->code != TIR_OP_ARANGE &&
                  d->code != TIR_OP_BROADCAST);
}

static bool in_chain(const TbChain *ch, const TirOp *op) {
    for (int k = 0; k < ch->nops; k++)
        if (ch->ops[k] == op)
            return true;
    return false;
}

static TbChain *plan(TbLower *L, TirBlock *blk, TirOp *st, uint8_t *cand, bool with_ptr) {
    const TirValue *val = st->opnd[1];
    TbView view;
    if (!tb_view(L, val->ty, &view, st))
        return NULL;
    int n = view.total;
    /* candidates: the value's defining ops, backwards through elementwise float ops */
    TirOp *stack[256];
    int sp = 0, ncand = 0;
    TirOp *all[256];
    if (val->def && val->def->parent == blk && member_kind(val->def, &val->ty))
        stack[sp++] = val->def;
    /* the store's pointer tile too, when it is computed for the store alone as an addptr
     * of per-row and per-column parts (two broadcasts): a pointer per element is two
     * registers, and computed ahead of the store they are all live at once (a 128x256
     * GEMM epilogue with scalar stores: 128 pointers a thread next to the accumulators) */
    TirOp *pd = with_ptr ? st->opnd[0]->def : NULL;
    bool ptr_member = pd && pd->parent == blk && pd->code == TIR_OP_ADDPTR && pd->nres == 1 && pd->nopnd == 2 &&
                      ptr_kind(pd, &val->ty) && L->uses[pd->res[0]->id] == 1 && pd->opnd[0]->def &&
                      pd->opnd[0]->def->code == TIR_OP_BROADCAST && pd->opnd[1]->def &&
                      pd->opnd[1]->def->code == TIR_OP_BROADCAST;
    if (ptr_member) {
        cand[pd->res[0]->id] = 1;
        all[ncand++] = pd;
    }
    bool overflow = false;
    while (sp && !overflow) {
        TirOp *x = stack[--sp];
        if (cand[x->res[0]->id])
            continue;
        if (ncand == 256) {
            overflow = true; /* too big a chain to plan: lowered op by op */
            break;
        }
        cand[x->res[0]->id] = 1;
        all[ncand++] = x;
        if (x->code == TIR_OP_LOAD)
            continue;
        for (int i = 0; i < x->nopnd; i++) {
            TirOp *d = x->opnd[i]->def;
            if (d && d->parent == blk && member_kind(d, &val->ty) && !cand[d->res[0]->id]) {
                if (sp == 256) {
                    overflow = true;
                    break;
                }
                stack[sp++] = d;
            }
        }
    }
    if (overflow) {
        for (int k = 0; k < ncand; k++)
            cand[all[k]->res[0]->id] = 0;
        return NULL;
    }
    /* keep only ops whose every use is in the chain */
    for (bool changed = true; changed;) {
        changed = false;
        for (int k = 0; k < ncand; k++) {
            TirOp *x = all[k];
            int id = x->res[0]->id, refs = (st->opnd[1] == x->res[0]) + (st->opnd[0] == x->res[0]);
            if (!cand[id])
                continue;
            for (int j = 0; j < ncand; j++)
                if (cand[all[j]->res[0]->id])
                    for (int i = 0; i < all[j]->nopnd; i++)
                        refs += all[j]->opnd[i] == x->res[0];
            if (refs != L->uses[id]) {
                cand[id] = 0;
                changed = true;
            }
        }
    }
    /* the members in block order; between the first and the store only pure ops and
     * loads that need no barrier */
    TbChain *ch = tir_alloc(L->m->arena, sizeof *ch);
    ch->ops = tir_alloc(L->m->arena, (size_t)(ncand + 1) * sizeof *ch->ops);
    bool inside = false, ok = true;
    int nloads = 0;
    for (TirOp *op = blk->first; op && op != st; op = op->next) {
        bool mem = op->nres == 1 && cand[op->res[0]->id];
        if (mem) {
            inside = true;
            ch->ops[ch->nops++] = op;
            nloads += op->code == TIR_OP_LOAD;
        } else if (inside) {
            unsigned t = tir_op_info[op->code].traits;
            if (!(t & (TIR_T_PURE | TIR_T_READS)) || op->nregion || op->attr.smem_bytes)
                ok = false;
        }
    }
    for (int k = 0; k < ncand; k++)
        cand[all[k]->res[0]->id] = 0;
    /* with the pointer: pure members alone (no load), which may move past anything to
     * the store; without it, the chains of loads */
    bool has_ptr = false;
    for (int k = 0; k < ch->nops; k++)
        has_ptr = has_ptr || (pd && ch->ops[k] == pd);
    if (with_ptr ? nloads || !has_ptr : !ok || !nloads)
        return NULL;
    ch->ops[ch->nops++] = st;
    ch->store = st;
    ch->n = n;
    /* registers: the chain's held tile inputs, and its loads' destinations */
    int in_x4 = 0, load_x4 = 0, align = 1;
    for (int k = 0; k < ch->nops; k++) {
        TirOp *x = ch->ops[k];
        if (x->code == TIR_OP_LOAD || x->code == TIR_OP_STORE) {
            TirType et = tir_elem_type(x->code == TIR_OP_LOAD ? x->res[0]->ty : val->ty);
            int vec = tb_access_width(L, x, &view, et);
            if (vec > align)
                align = vec;
            if (x->code == TIR_OP_LOAD)
                load_x4 += regs_x4(et, vec);
            continue;
        }
        if (x == pd) {
            /* per chunk, like a load's destinations: a pointer per vector the store writes */
            int vec = tb_access_width(L, st, &view, tir_elem_type(val->ty));
            load_x4 += regs_x4(x->res[0]->ty, 1) / (vec > 1 ? vec : 1);
            continue;
        }
        for (int i = 0; i < x->nopnd; i++) {
            const TirValue *v = x->opnd[i];
            if (v->def && in_chain(ch, v->def))
                continue;
            bool seen = false;
            for (int j = 0; j < k && !seen; j++)
                for (int q = 0; q < ch->ops[j]->nopnd; q++)
                    seen = seen || ch->ops[j]->opnd[q] == v;
            for (int q = 0; q < i; q++)
                seen = seen || x->opnd[q] == v;
            if (!seen && held_input(v))
                in_x4 += regs_x4(v->ty, 1);
        }
    }
    if ((int64_t)n * (in_x4 + load_x4) <= 4 * CHAIN_MAX_REGS)
        return NULL;
    int c = n;
    /* halving keeps c a divisor of n; each chunk holds whole vector accesses */
    while (c % 2 == 0 && (c / 2) % align == 0 && (int64_t)n * in_x4 + (int64_t)c * load_x4 > 4 * CHAIN_CHUNK_REGS)
        c /= 2;
    if (c == n)
        return NULL;
    ch->chunk = c;
    return ch;
}

TbChain *tb_find_chains(TbLower *L, TirBlock *blk) {
    TbChain *first = NULL, **tail = &first;
    uint8_t *cand = NULL;
    for (TirOp *op = blk->first; op; op = op->next) {
        if (op->code != TIR_OP_STORE || op->nopnd < 2 || !tir_type_is_tile(op->opnd[1]->ty))
            continue;
        if (!cand)
            cand = tir_alloc(L->m->arena, (size_t)(L->nvals > 0 ? L->nvals : 1));
        TbChain *ch = plan(L, blk, op, cand, false);
        if (!ch)
            ch = plan(L, blk, op, cand, true);
        if (!ch)
            continue;
        for (int k = 0; k + 1 < ch->nops; k++)
            L->deferred[ch->ops[k]->res[0]->id] = 1;
        *tail = ch;
        tail = &ch->next;
    }
    return first;
}

bool tb_lower_chain(TbLower *L, TbChain *chains, TirOp *store) {
    TbChain *ch = chains;
    while (ch && ch->store != store)
        ch = ch->next;
    if (!ch)
        return false;
    for (int k = 0; k < ch->nops; k++)
        for (int i = 0; i < ch->ops[k]->nopnd; i++) {
            const TirValue *v = ch->ops[k]->opnd[i];
            if (!(v->def && in_chain(ch, v->def)) && !tb_lowered(L, v)) {
                if (!L->errors)
                    tb_error(L, ch->ops[k], "internal: an operand has no lowered value");
                return true;
            }
        }
    L->chain_n = ch->n;
    L->chain_sub = ch->chunk;
    for (L->chain_lo = 0; L->chain_lo < ch->n && !L->errors; L->chain_lo += ch->chunk)
        for (int k = 0; k < ch->nops; k++)
            tb_lower_op(L, ch->ops[k]);
    L->chain_n = L->chain_sub = L->chain_lo = 0;
    return true;
}
