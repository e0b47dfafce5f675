/* layout: give every tile a distributed layout (the tiling pass).
 *
 * Values that must share a layout (operands and results of elementwise ops, broadcast,
 * the operands of a memory op, loop-carried values and their yields, if results) are
 * joined into classes.  Each class gets one blocked layout, anchored on its widest
 * provable memory access: elements per thread along the contiguous dimension is sized so a
 * thread moves 16 bytes, threads and warps fill the shape fastest dimension first.
 * Reduction results and expand_dims operands are classes of their own whose layout is
 * their parent's sliced at the axis.  Where a constraint still disagrees, a
 * convert_layout is inserted.  Each load/store/atomic records the vector width proven
 * for it in attr i[1] (elements; 0 or 1: scalar accesses), which the backend trusts. */
#include "analysis.h"
#include "passes.h"
#include "pass_util.h"

#include <string.h>

typedef struct {
    int32_t *parent;
    TirValue **val; /* by id */
    int32_t n;
} Uf;

static int32_t uf_find(Uf *u, int32_t x) {
    while (u->parent[x] != x) {
        u->parent[x] = u->parent[u->parent[x]];
        x = u->parent[x];
    }
    return x;
}

static void uf_join(Uf *u, const TirValue *a, const TirValue *b) {
    if (!a || !b || !tir_type_is_tile(a->ty) || !tir_type_is_tile(b->ty))
        return;
    if (a->ty.rank != b->ty.rank || a->id >= u->n || b->id >= u->n)
        return;
    int32_t x = uf_find(u, a->id), y = uf_find(u, b->id);
    if (x != y)
        u->parent[y] = x;
}

typedef struct {
    int32_t shape[TIR_MAXRANK];
    int64_t numel;
    int rank;
    int vec, cdim;        /* best memory anchor: vector width, contiguous dim (-1: none) */
    int contig;           /* its proven contiguity along cdim (elements) */
    int32_t slice_parent; /* value id of a parent-class member, or -1 */
    int slice_dim;
    int32_t layout;
    bool busy;
    TirOp *dot;     /* a dot whose result is in the class: the class is its accumulator */
    bool dot_load;  /* holds a load whose result is a dot operand, through a pointer
                              * tile a loop carries (what factor_ptrs factors) */
    bool dot_store; /* holds a store of an accumulator (a dot's epilogue) */
} ClassInfo;

typedef struct {
    TirPassContext *ctx;
    TirFunc *f;
    TirModule *m;
    TirAxisInfo *ax;
    int32_t nax; /* entries of ax: the value ids when it was computed */
    Uf uf;
    ClassInfo *cls; /* by root id */
    /* Accumulators of dot: the values a dot result flows to through loops and ifs only
     * (a union-find over that plumbing alone, and whether its class holds a dot result).
     * Elementwise ops outside such a class do not join it: they get the value through a
     * convert_layout, so that the mma layout stays on the accumulator. */
    Uf acc;
    bool *acc_dot; /* by acc root id */
    /* conversions of accumulators fix_acc_uses made, for the later uses in the same block */
    TirValue **cvt;
    int ncvt, cvt_cap;
    int errors;
} Lay;

static void record_value(Lay *L, TirValue *v) {
    if (v && v->id >= 0 && v->id < L->uf.n)
        L->uf.val[v->id] = v;
}

static bool collect(TirOp *op, void *ud) {
    Lay *L = ud;
    for (int i = 0; i < op->nres; i++)
        record_value(L, op->res[i]);
    for (int r = 0; r < op->nregion; r++)
        for (int i = 0; i < op->region[r]->nargs; i++)
            record_value(L, op->region[r]->args[i]);
    return true;
}

static bool is_mem(const TirOp *op) {
    switch (op->code) {
    case TIR_OP_LOAD:
    case TIR_OP_STORE:
    case TIR_OP_ATOMIC_ADD:
    case TIR_OP_ATOMIC_MAX:
    case TIR_OP_ATOMIC_MIN:
    case TIR_OP_ATOMIC_XCHG:
    case TIR_OP_ATOMIC_CAS: return true;
    default: return false;
    }
}

static TirOp *yield_of(TirBlock *b) {
    return b->last && b->last->code == TIR_OP_YIELD ? b->last : NULL;
}

/* Joins what loops and ifs carry: init, block argument, result and yielded value. */
static void join_plumbing(Uf *u, TirOp *op) {
    if (op->code == TIR_OP_FOR && op->nregion) {
        TirBlock *body = op->region[0];
        TirOp *y = yield_of(body);
        for (int c = 0; c < op->nres; c++) {
            if (3 + c < op->nopnd)
                uf_join(u, op->res[c], op->opnd[3 + c]);
            if (1 + c < body->nargs)
                uf_join(u, op->res[c], body->args[1 + c]);
            if (y && c < y->nopnd)
                uf_join(u, op->res[c], y->opnd[c]);
        }
    } else if (op->code == TIR_OP_IF) {
        for (int r = 0; r < op->nregion; r++) {
            TirOp *y = yield_of(op->region[r]);
            for (int c = 0; y && c < op->nres && c < y->nopnd; c++)
                uf_join(u, op->res[c], y->opnd[c]);
        }
    }
}

static bool join_acc_op(TirOp *op, void *ud) {
    join_plumbing(&((Lay *)ud)->acc, op);
    return true;
}

static bool in_acc(Lay *L, const TirValue *v) {
    return v && tir_type_is_tile(v->ty) && v->id >= 0 && v->id < L->acc.n && L->acc_dot[uf_find(&L->acc, v->id)];
}

/* Whether v is made from a reduction (or a scan, or a dot) within *budget producers. */
static bool from_reduction(const TirValue *v, int *budget) {
    const TirOp *d = v->def;
    if (!d || !tir_type_is_tile(v->ty) || --*budget < 0)
        return false;
    if ((d->code >= TIR_OP_REDUCE_SUM && d->code <= TIR_OP_ARGMIN) || d->code == TIR_OP_CUMSUM || d->code == TIR_OP_DOT)
        return true;
    for (int i = 0; i < d->nopnd; i++)
        if (from_reduction(d->opnd[i], budget))
            return true;
    return false;
}

/* A row or column vector broadcast over the tile (bias[None, :], scale[:, None]): a
 * broadcast whose operand has extent 1 along some dimension the result spans, and that
 * is not made from a reduction (a row max of the accumulator itself, as softmax over a
 * dot takes it: the backend reduces blocked layouts only, so such a vector would cost
 * conversions of its own; within 32 producers). */
static bool vector_broadcast(const TirValue *v) {
    if (!v->def || v->def->code != TIR_OP_BROADCAST || v->def->nopnd != 1)
        return false;
    const TirType *in = &v->def->opnd[0]->ty;
    if (!tir_type_is_tile(*in) || in->rank != v->ty.rank)
        return false;
    int budget = 32;
    if (from_reduction(v->def->opnd[0], &budget) || budget < 0)
        return false;
    for (int d = 0; d < in->rank; d++)
        if (in->shape[d] == 1 && v->ty.shape[d] > 1)
            return true;
    return false;
}

/* The epilogue stays in the accumulator's layout: an elementwise op of an accumulator
 * whose other operands are splats, constants or row / column vectors broadcast over it
 * (a cast, an activation, a scale, a bias, per-row and per-column scales) joins the
 * accumulator's class, so that the one conversion a store needs moves the final values
 * (f16 after a cast: half the shared memory of the f32 accumulator).  A vector joins
 * through its broadcast: it is loaded in a slice of the mma layout, each thread reading
 * the rows or columns it holds. */
static bool extend_acc_op(TirOp *op, void *ud) {
    Lay *L = ud;
    unsigned t = tir_op_info[op->code].traits;
    if (!(t & TIR_T_ELEMENTWISE) || is_mem(op) || op->nres != 1 || !tir_type_is_tile(op->res[0]->ty))
        return true;
    TirValue *acc = NULL;
    for (int i = 0; i < op->nopnd; i++) {
        TirValue *v = op->opnd[i];
        if (!tir_type_is_tile(v->ty))
            continue;
        if (in_acc(L, v)) {
            if (!acc)
                acc = v;
            continue;
        }
        if (!v->def || (v->def->code != TIR_OP_SPLAT && v->def->code != TIR_OP_CONSTANT && !vector_broadcast(v)))
            return true;
    }
    if (acc && acc->ty.rank == op->res[0]->ty.rank)
        uf_join(&L->acc, acc, op->res[0]);
    return true;
}

static bool join_op(TirOp *op, void *ud) {
    Lay *L = ud;
    unsigned t = tir_op_info[op->code].traits;
    if ((t & TIR_T_ELEMENTWISE) || op->code == TIR_OP_BROADCAST || op->code == TIR_OP_HINT_MULTIPLE_OF ||
        op->code == TIR_OP_HINT_MAX_CONTIGUOUS || op->code == TIR_OP_CUMSUM || is_mem(op)) {
        TirValue *anchor = op->nres ? op->res[0] : (op->nopnd ? op->opnd[0] : NULL);
        bool anchor_acc = in_acc(L, anchor);
        for (int i = 0; i < op->nopnd; i++)
            if (anchor_acc || !in_acc(L, op->opnd[i]))
                uf_join(&L->uf, anchor, op->opnd[i]);
    } else {
        join_plumbing(&L->uf, op);
    }
    return true;
}

static ClassInfo *class_of(Lay *L, const TirValue *v) {
    return &L->cls[uf_find(&L->uf, v->id)];
}

/* The widest access this memory op can make: elements per thread along its most
 * contiguous dimension, bounded by 16 bytes, alignment and mask constancy. */
static int mem_vec(Lay *L, const TirOp *op, int *cdim) {
    TirValue *p = op->opnd[0];
    *cdim = -1;
    if (!tir_type_is_tile(p->ty))
        return 1;
    const TirAxisInfo *a = &L->ax[p->id];
    int rank = p->ty.rank, d = rank - 1;
    for (int k = rank - 1; k >= 0; k--)
        if (a->contig[k] > a->contig[d])
            d = k;
    *cdim = d;
    int eb = tir_scalar_bytes((TirScalar)p->ty.elem);
    int64_t v = 16 / (eb ? eb : 1);
    if (a->contig[d] < v)
        v = a->contig[d];
    int64_t align = a->div[d] / eb;
    if (align < v)
        v = align;
    int mask_at = -1;
    if (op->code == TIR_OP_LOAD && op->nopnd > 1)
        mask_at = 1;
    if (op->code != TIR_OP_LOAD && op->code != TIR_OP_ATOMIC_CAS && op->nopnd > 2)
        mask_at = 2;
    if (mask_at > 0) {
        const TirAxisInfo *mk = &L->ax[op->opnd[mask_at]->id];
        if (mk->constancy[d] < v)
            v = mk->constancy[d];
    }
    if (p->ty.shape[d] < v)
        v = p->ty.shape[d];
    if (is_mem(op) && op->code != TIR_OP_LOAD && op->code != TIR_OP_STORE)
        v = 1; /* atomics */
    return v < 1 ? 1 : (int)v;
}

/* A value a `for` carries (its body's block argument). */
static bool carried(const TirValue *v) {
    return !v->def && v->block && v->block->parent && v->block->parent->code == TIR_OP_FOR;
}

static bool anchor_op(TirOp *op, void *ud) {
    Lay *L = ud;
    if (op->code == TIR_OP_DOT && op->nres == 1) {
        ClassInfo *c = class_of(L, op->res[0]);
        if (!c->dot)
            c->dot = op;
        for (int i = 0; i < 2 && i < op->nopnd; i++)
            if (op->opnd[i]->def && op->opnd[i]->def->code == TIR_OP_LOAD && carried(op->opnd[i]->def->opnd[0]))
                class_of(L, op->opnd[i])->dot_load = true;
        return true;
    }
    if (is_mem(op) && op->nopnd > 0 && tir_type_is_tile(op->opnd[0]->ty)) {
        if (op->code == TIR_OP_STORE && op->nopnd > 1 && in_acc(L, op->opnd[1]))
            class_of(L, op->opnd[0])->dot_store = true;
        int cdim;
        int v = mem_vec(L, op, &cdim);
        ClassInfo *c = class_of(L, op->opnd[0]);
        if (c->cdim < 0 || v > c->vec) {
            c->vec = v;
            c->cdim = cdim;
            c->contig = L->ax[op->opnd[0]->id].contig[cdim];
        }
    } else if (op->code >= TIR_OP_REDUCE_SUM && op->code <= TIR_OP_ARGMIN && op->nres &&
               tir_type_is_tile(op->res[0]->ty)) {
        ClassInfo *c = class_of(L, op->res[0]);
        /* an accumulator is reduced from a blocked copy (fix_acc_uses), not in #mma */
        if (c->slice_parent < 0 && !in_acc(L, op->opnd[0])) {
            c->slice_parent = op->opnd[0]->id;
            c->slice_dim = (int)op->attr.i[0];
        }
    } else if (op->code == TIR_OP_EXPAND_DIMS && tir_type_is_tile(op->opnd[0]->ty)) {
        ClassInfo *c = class_of(L, op->opnd[0]);
        if (c->slice_parent < 0) {
            c->slice_parent = op->res[0]->id;
            c->slice_dim = (int)op->attr.i[0];
        }
    }
    return true;
}

/* elements per thread x threads per warp x warps per CTA, fastest dimension first; at
 * most lane_cap lanes along the contiguous dimension (32: no cap). */
static void blocked_fill(int rank, const int32_t *shape, int vec, int cdim, int warps, int lane_cap, int32_t *spt,
                         int32_t *tpw, int32_t *wpc, int32_t *order) {
    if (cdim < 0 || cdim >= rank)
        cdim = rank - 1;
    order[0] = cdim;
    for (int d = rank - 1, k = 1; d >= 0; d--)
        if (d != cdim)
            order[k++] = d;
    for (int d = 0; d < rank; d++)
        spt[d] = 1;
    spt[cdim] = vec < shape[cdim] ? vec : shape[cdim];
    int lanes = 32, ws = warps;
    for (int i = 0; i < rank; i++) {
        int d = order[i];
        int want = shape[d] / spt[d];
        if (want < 1)
            want = 1;
        if (i == 0 && want > lane_cap)
            want = lane_cap;
        tpw[d] = want < lanes ? want : lanes;
        lanes /= tpw[d];
    }
    tpw[order[0]] *= lanes; /* left-over lanes hold copies */
    for (int i = 0; i < rank; i++) {
        int d = order[i];
        int want = shape[d] / (spt[d] * tpw[d]);
        if (want < 1)
            want = 1;
        wpc[d] = want < ws ? want : ws;
        ws /= wpc[d];
    }
    wpc[order[rank - 1]] *= ws;
}

static int32_t blocked_layout(TirModule *m, int rank, const int32_t *shape, int vec, int cdim, int warps) {
    int32_t spt[TIR_MAXRANK], tpw[TIR_MAXRANK], wpc[TIR_MAXRANK], order[TIR_MAXRANK];
    blocked_fill(rank, shape, vec, cdim, warps, 32, spt, tpw, wpc, order);
    return tir_layout_blocked(m, rank, spt, tpw, wpc, order);
}

/* A scalar load that feeds a dot through a loop-carried pointer tile, with no vector
 * access and no unit stride proven (a generic stride), needs an address per element, and
 * factor_ptrs keeps such a tile as its factors, base + rows[:, None] + cols[None, :]:
 * what stays live through the loop is a thread's distinct row and column offsets.  The
 * split of lanes and warps over the 2-D tile (one element a thread per position) is the
 * one with the fewest, the most lanes along cdim among equals (the widest runs a warp
 * reads), every lane and warp holding distinct elements.  64x64 f16 with 4 warps: 32
 * lanes along K give a thread 32 rows x 1 column (33 offsets), 4 lanes along K and the
 * warps along M 4 x 8 (12).
 * A dot's epilogue stores its accumulator through such a tile too (c + rows * stride_cm +
 * cols * stride_cn, scalar in a generic form): 128x256 on 8 warps had 128 rows x 1
 * column a thread, 128 row pointers live next to the 128 accumulators; 16 x 8 now.
 * A unit stride proven but no alignment (an unaligned row-major operand: a GEMM whose
 * sizes are not multiples of 8) takes the same split with at least min_tc =
 * UNIT_STRIDE_MIN_LANES lanes along the unit stride (8: runs of 16 bytes of f16 a warp
 * row).  Until session 10 such a tile kept
 * the blocked layout, 32 lanes along K, whole (session 7, before factor_ptrs and the
 * in-loop offset products: 123 TFLOP/s on the 4000x3000x5000 GEMM, 114 with 16 lanes
 * along K, 80 with 2), and matmul spilled in 16 of its 42 variants on sm_90a, up to
 * 2.6 KB.  Measured on the H200 at 4095^3, the tuner's best variant: 132.3 TFLOP/s so;
 * factored with at least 32 / 16 / 8 lanes along K, 139.0 / 136.7 / 157.8 (spilling
 * variants 7 / 4 / 2, docs/backend.md "dot"). */
enum { UNIT_STRIDE_MIN_LANES = 8 };

static int32_t dot_scalar_layout(TirModule *m, const int32_t *shape, int cdim, int warps, int min_tc) {
    int rdim = 1 - cdim;
    int64_t best = -1;
    int32_t bt = 32, bw = 1;
    for (int32_t tc = 32; tc >= min_tc; tc /= 2)
        for (int32_t wc = 1; wc <= warps; wc *= 2) {
            int64_t tr = 32 / tc, wr = warps / wc;
            int64_t ec = shape[cdim] / ((int64_t)tc * wc), er = shape[rdim] / (tr * wr);
            if (ec < 1 || er < 1)
                continue; /* copies */
            if (best < 0 || er + ec < best) {
                best = er + ec;
                bt = tc;
                bw = wc;
            }
        }
    if (best < 0)
        return 0;
    int32_t spt[2] = {1, 1}, tpw[2], wpc[2], order[2] = {cdim, rdim};
    tpw[cdim] = bt;
    tpw[rdim] = 32 / bt;
    wpc[cdim] = bw;
    wpc[rdim] = warps / bw;
    return tir_layout_blocked(m, 2, spt, tpw, wpc, order);
}

static int32_t slice_layout(TirModule *m, int32_t parent, int dim) {
    return tir_layout_slice(m, parent, dim);
}

/* The mma.sync instruction shape for dot inputs of type e: m16n8k16 for 16-bit types,
 * m16n8k8 for f32 (tf32, and the 3xTF32 form of exact f32), m16n8k32 for 8-bit ones. */
static int mma_k(int e) {
    switch (e) {
    case TIR_F32: return 8;
    case TIR_I8:
    case TIR_F8E4M3:
    case TIR_F8E5M2: return 32;
    default: return 16;
    }
}

/* Elements of K in one 32-bit register of an operand. */
static int k_width(int e) {
    return e == TIR_F32 ? 1 : tir_scalar_bits((TirScalar)e) == 8 ? 4 : 2;
}

/* Warps over the M x N accumulator: each warp's part as square as possible, never
 * smaller than one m16n8 instruction (left-over warps hold copies). */
static int32_t mma_layout(TirModule *m, const TirOp *dot, int warps) {
    TirType r = dot->res[0]->ty;
    int rank = r.rank;
    int64_t M = r.shape[rank - 2], N = r.shape[rank - 1];
    int wm = 1, wn = 1;
    while (wm * wn < warps) {
        bool can_m = M / (wm * 2) >= 16, can_n = N / (wn * 2) >= 8;
        if (can_m && (M / wm >= N / wn || !can_n))
            wm *= 2;
        else if (can_n)
            wn *= 2;
        else
            break;
    }
    int32_t wpc[TIR_MAXRANK], instr[3] = {16, 8, mma_k(dot->opnd[0]->ty.elem)};
    for (int d = 0; d < rank; d++)
        wpc[d] = 1;
    wpc[rank - 2] = wm;
    wpc[rank - 1] = wn;
    return tir_layout_mma(m, 2, rank, wpc, instr);
}

/* 8-bit B loaded N-contiguous (row-major K x N): its mma fragment takes 4 K-consecutive
 * bytes of one column, 4 rows apart in the stage, so each register is 4 one-byte shared
 * loads.  With 4 N tiles of a thread grouped at adjacent columns
 * (tir_layout_mma_grouped) the same register of the 4 tiles is one 32-bit load and a
 * byte transpose: 4 loads for 4 registers instead of 16. */
static int n_group(Lay *L, const TirOp *dot, int32_t mma) {
    const TirValue *b = dot->opnd[1];
    int rank = b->ty.rank;
    int32_t wpc[TIR_MAXRANK];
    if (tir_scalar_bits((TirScalar)b->ty.elem) != 8 || rank != 2 || !tir_layout_mma_params(L->m, mma, NULL, wpc, NULL))
        return 1;
    const ClassInfo *c = class_of(L, b);
    if (c->cdim != rank - 1 || c->contig < 4)
        return 1;
    return b->ty.shape[rank - 1] / (8 * wpc[rank - 1]) >= 4 ? 4 : 1;
}

static int32_t dot_operand_layout(TirModule *m, int32_t parent, int op_idx, int elem) {
    return tir_layout_dot_operand(m, parent, op_idx, k_width(elem));
}

static int32_t class_layout(Lay *L, int32_t root, int depth) {
    ClassInfo *c = &L->cls[root];
    if (c->layout > 0)
        return c->layout;
    int warps = L->f->warps > 0 ? L->f->warps : 4;
    if (c->dot) {
        c->layout = mma_layout(L->m, c->dot, warps);
        int g = n_group(L, c->dot, c->layout);
        if (g > 1)
            c->layout = tir_layout_mma_grouped(L->m, c->layout, g);
        return c->layout;
    }
    if (c->slice_parent >= 0 && !c->busy && depth < 16) {
        c->busy = true;
        int32_t pr = uf_find(&L->uf, c->slice_parent);
        int32_t pl = class_layout(L, pr, depth + 1);
        c->busy = false;
        if (pl > 0 && tir_layout_rank(L->m, pl) == c->rank + 1) {
            c->layout = slice_layout(L->m, pl, c->slice_dim);
            return c->layout;
        }
    }
    int vec = c->cdim >= 0 ? c->vec : 1;
    if ((c->dot_load || c->dot_store) && vec <= 1 && c->rank == 2 && c->cdim >= 0)
        c->layout = dot_scalar_layout(L->m, c->shape, c->cdim, warps, c->contig > 1 ? UNIT_STRIDE_MIN_LANES : 1);
    if (c->layout <= 0)
        c->layout = blocked_layout(L->m, c->rank, c->shape, vec, c->cdim, warps);
    return c->layout;
}

static TirValue *insert_convert(Lay *L, TirOp *before, TirValue *v, int32_t layout) {
    TirBuilder b;
    tir_builder_before(&b, before);
    TirType t = v->ty;
    t.layout = layout;
    return tir_op1(&b, TIR_OP_CONVERT_LAYOUT, t, 1, &v);
}

/* An accumulator used outside its class: the op gets it converted to the layout its
 * own class has (elementwise and memory ops), or to a plain blocked layout; one
 * conversion serves every later use in its block that wants the same layout (a row max
 * and a column sum of one accumulator read one blocked copy). */
static void fix_acc_uses(Lay *L, TirOp *op) {
    unsigned t = tir_op_info[op->code].traits;
    bool joined = (t & TIR_T_ELEMENTWISE) || op->code == TIR_OP_BROADCAST || op->code == TIR_OP_HINT_MULTIPLE_OF ||
                  op->code == TIR_OP_HINT_MAX_CONTIGUOUS || op->code == TIR_OP_CUMSUM || is_mem(op);
    TirValue *anchor = op->nres ? op->res[0] : (op->nopnd ? op->opnd[0] : NULL);
    if (joined && in_acc(L, anchor))
        return;
    int warps = L->f->warps > 0 ? L->f->warps : 4;
    for (int i = 0; i < op->nopnd; i++) {
        TirValue *v = op->opnd[i];
        if (!in_acc(L, v) || v == anchor)
            continue;
        int32_t want = joined && anchor && tir_type_is_tile(anchor->ty) && anchor->ty.rank == v->ty.rank
                           ? anchor->ty.layout
                           : blocked_layout(L->m, v->ty.rank, v->ty.shape, 1, -1, warps);
        if (v->ty.layout == want)
            continue;
        TirValue *c = NULL;
        for (int k = 0; k < L->ncvt && !c; k++)
            if (L->cvt[k]->def->opnd[0] == v && L->cvt[k]->ty.layout == want && L->cvt[k]->def->parent == op->parent)
                c = L->cvt[k];
        if (!c) {
            c = insert_convert(L, op, v, want);
            if (L->ncvt < L->cvt_cap)
                L->cvt[L->ncvt++] = c;
        }
        op->opnd[i] = c;
    }
}

/* Whether v is defined inside op's regions (at any depth). */
static bool defined_within(const TirValue *v, const TirOp *op) {
    const TirBlock *b = v->def ? v->def->parent : v->block;
    for (; b && b->parent; b = b->parent->parent)
        if (b->parent == op)
            return true;
    return false;
}

/* Where a dot operand's conversion goes: before the dot, or, for an operand made before the
 * loops around the dot (attention's Q), before the outermost of those loops that does not
 * make it, so that the conversion (a shared-memory round trip) runs once, not per iteration. */
static TirOp *operand_convert_point(TirOp *dot, const TirValue *v) {
    TirOp *at = dot;
    for (TirOp *loop = dot->parent ? dot->parent->parent : NULL; loop;
         loop = loop->parent ? loop->parent->parent : NULL) {
        if (loop->code != TIR_OP_FOR || defined_within(v, loop))
            break;
        at = loop;
    }
    return at;
}

/* Constraints the classes cannot express: slices of reductions and expand_dims, the
 * operand layouts of dot, accumulators leaving their class. */
static bool fix_op(TirOp *op, void *ud) {
    Lay *L = ud;
    if (op->code == TIR_OP_DOT && op->nres == 1) {
        int32_t parent = op->res[0]->ty.layout;
        for (int i = 0; i < 2; i++) {
            int32_t want = dot_operand_layout(L->m, parent, i, op->opnd[i]->ty.elem);
            if (op->opnd[i]->ty.layout != want)
                op->opnd[i] = insert_convert(L, operand_convert_point(op, op->opnd[i]), op->opnd[i], want);
        }
        if (op->opnd[2]->ty.layout != parent)
            op->opnd[2] = insert_convert(L, op, op->opnd[2], parent);
        return true;
    }
    if (op->code != TIR_OP_FOR && op->code != TIR_OP_IF && op->code != TIR_OP_YIELD)
        fix_acc_uses(L, op);
    if (op->code >= TIR_OP_REDUCE_SUM && op->code <= TIR_OP_ARGMIN && op->nres && tir_type_is_tile(op->res[0]->ty)) {
        TirValue *r = op->res[0];
        int32_t want = slice_layout(L->m, op->opnd[0]->ty.layout, (int)op->attr.i[0]);
        if (r->ty.layout != want) {
            int32_t have = r->ty.layout;
            r->ty.layout = want;
            if (op->next && tir_count_uses(L->f, r) > 0) {
                TirValue *c = insert_convert(L, op->next, r, have);
                TirOp *conv = c->def;
                tir_replace_all_uses(L->f, r, c);
                conv->opnd[0] = r;
            }
        }
    } else if (op->code == TIR_OP_EXPAND_DIMS && tir_type_is_tile(op->opnd[0]->ty)) {
        int32_t want = slice_layout(L->m, op->res[0]->ty.layout, (int)op->attr.i[0]);
        if (op->opnd[0]->ty.layout != want)
            op->opnd[0] = insert_convert(L, op, op->opnd[0], want);
    }
    return true;
}

/* Record the proven vector width where the final layout lets the access use it. */
static bool vec_op(TirOp *op, void *ud) {
    Lay *L = ud;
    if (!is_mem(op) || !op->nopnd || !tir_type_is_tile(op->opnd[0]->ty))
        return true;
    int cdim;
    int v = mem_vec(L, op, &cdim);
    int32_t layout = op->opnd[0]->ty.layout;
    AnaBlocked bf;
    int w = 1;
    if (tir_layout_kind(L->m, layout) == TIR_LAYOUT_BLOCKED && cdim >= 0 &&
        analysis_blocked(L->m, layout, op->opnd[0]->ty.rank, &bf, NULL) && bf.order[0] == cdim) {
        w = bf.spt[cdim];
        if (v < w)
            w = v;
    }
    op->attr.i[1] = w > 1 ? w : 0;
    return true;
}

/* Record what the backend needs from the axis analysis in the IR itself (it links no
 * passes): a comparison's constancy runs, so that one predicate serves each run. */
static bool constancy_op(TirOp *op, void *ud) {
    Lay *L = ud;
    if (op->code != TIR_OP_CMP || op->nres != 1)
        return true;
    TirValue *r = op->res[0];
    memset(op->attr.constancy, 0, sizeof op->attr.constancy);
    if (!tir_type_is_tile(r->ty) || r->id < 0 || r->id >= L->nax)
        return true;
    for (int d = 0; d < r->ty.rank; d++)
        op->attr.constancy[d] = L->ax[r->id].constancy[d];
    return true;
}

/* ---- rematerialization ----
 * A broadcast joins its operand's class to its result's: rm[:, None] shared by the loads
 * of A (BM x BK) and the store of C (BM x BN) would put both in one class whose layout,
 * sized for the larger tile, copies the smaller one several times over (each element
 * loaded by several threads).  So each broadcast gets its own copy of its operand's
 * producers where they are cheap (pass_remat_cheap in pass_util.h, shape ops included:
 * index arithmetic) and shared with other users, as Triton rematerializes them instead of
 * converting. */
enum { REMAT_MAX = 64 };

static bool remat_cheap(const TirOp *op) {
    return pass_remat_cheap(op, true);
}

/* Whether v's cheap producer tree (at most *budget ops) has a value used more than once. */
static bool remat_shared(const TirValue *v, const int *uses, int *budget) {
    if (!tir_type_is_tile(v->ty) || !remat_cheap(v->def) || --*budget < 0)
        return false;
    if (uses[v->id] > 1)
        return true;
    for (int i = 0; i < v->def->nopnd; i++)
        if (remat_shared(v->def->opnd[i], uses, budget))
            return true;
    return false;
}

/* A copy of v's cheap producer tree, each op placed right after its original. */
static TirValue *remat_clone(TirFunc *f, TirValue *v, int *uses, int *budget) {
    if (!tir_type_is_tile(v->ty) || !remat_cheap(v->def) || --*budget < 0)
        return v;
    TirOp *op = v->def;
    TirValue *from[8], *to[8];
    int n = 0;
    for (int i = 0; i < op->nopnd && n < 8; i++) {
        from[n] = op->opnd[i];
        to[n] = remat_clone(f, op->opnd[i], uses, budget);
        n++;
    }
    TirBuilder b;
    if (op->next)
        tir_builder_before(&b, op->next);
    else
        tir_builder_at_end(&b, op->parent);
    b.func = f;
    b.loc = op->loc;
    TirOp *c = tir_op_clone(&b, op, from, to, n);
    for (int i = 0; i < c->nopnd; i++)
        uses[c->opnd[i]->id]++;
    return c->res[0];
}

/* Erases v's def if nothing uses it any more, then its operands' likewise. */
static void remat_drop(TirValue *v, int *uses) {
    TirOp *op = v->def;
    if (!remat_cheap(op) || uses[v->id] > 0 || !op->parent)
        return;
    tir_op_erase(op);
    for (int i = 0; i < op->nopnd; i++) {
        uses[op->opnd[i]->id]--;
        remat_drop(op->opnd[i], uses);
    }
}

typedef struct {
    TirFunc *f;
    int *uses;
    TirOp **bcast;
    int nbcast, cap;
} Remat;

static bool remat_count(TirOp *op, void *ud) {
    Remat *r = ud;
    for (int i = 0; i < op->nopnd; i++)
        if (op->opnd[i]->id >= 0 && op->opnd[i]->id < r->cap)
            r->uses[op->opnd[i]->id]++;
    if (op->code == TIR_OP_BROADCAST && op->nopnd == 1 && r->nbcast < r->cap)
        r->bcast[r->nbcast++] = op;
    return true;
}

static void rematerialize(TirModule *m, TirFunc *f) {
    Remat r = {.f = f, .cap = f->next_id};
    /* clones add values: at most REMAT_MAX per broadcast (each cheap op has one result),
     * and there are fewer broadcasts than values */
    int room = f->next_id * (REMAT_MAX + 2) + 16;
    r.uses = tir_alloc(m->arena, (size_t)room * sizeof *r.uses);
    r.bcast = tir_alloc(m->arena, (size_t)(f->next_id + 1) * sizeof *r.bcast);
    tir_walk_func(f, remat_count, &r);
    for (int i = 0; i < r.nbcast; i++) {
        TirOp *bc = r.bcast[i];
        TirValue *x = bc->opnd[0];
        int budget = REMAT_MAX;
        if (!remat_shared(x, r.uses, &budget) || budget < 0)
            continue;
        budget = REMAT_MAX;
        TirValue *c = remat_clone(f, x, r.uses, &budget);
        if (c == x)
            continue;
        bc->opnd[0] = c;
        r.uses[c->id]++;
        r.uses[x->id]--;
        remat_drop(x, r.uses);
    }
}

static int layout_func(TirPassContext *ctx, TirModule *m, TirFunc *f) {
    Lay L;
    memset(&L, 0, sizeof L);
    L.ctx = ctx;
    L.f = f;
    L.m = m;
    rematerialize(m, f);
    L.ax = analysis_axisinfo(f);
    L.nax = f->next_id;
    L.uf.n = f->next_id;
    int32_t n = L.uf.n > 0 ? L.uf.n : 1;
    L.uf.parent = tir_alloc(m->arena, (size_t)n * sizeof *L.uf.parent);
    L.uf.val = tir_alloc(m->arena, (size_t)n * sizeof *L.uf.val);
    L.cls = tir_alloc(m->arena, (size_t)n * sizeof *L.cls);
    for (int32_t i = 0; i < L.uf.n; i++)
        L.uf.parent[i] = i;
    for (int i = 0; i < f->body->nargs; i++)
        record_value(&L, f->body->args[i]);
    tir_walk_func(f, collect, &L);
    L.acc.n = L.uf.n;
    L.acc.parent = tir_alloc(m->arena, (size_t)n * sizeof *L.acc.parent);
    L.acc.val = L.uf.val;
    L.acc_dot = tir_alloc(m->arena, (size_t)n * sizeof *L.acc_dot);
    for (int32_t i = 0; i < L.acc.n; i++)
        L.acc.parent[i] = i;
    tir_walk_func(f, join_acc_op, &L);
    for (int32_t i = 0; i < L.uf.n; i++) {
        TirValue *v = L.uf.val[i];
        if (v && v->def && v->def->code == TIR_OP_DOT)
            L.acc_dot[uf_find(&L.acc, i)] = true;
    }
    tir_walk_func(f, extend_acc_op, &L);
    tir_walk_func(f, join_op, &L);
    for (int32_t i = 0; i < L.uf.n; i++) {
        L.cls[i].cdim = -1;
        L.cls[i].slice_parent = -1;
    }
    for (int32_t i = 0; i < L.uf.n; i++) {
        TirValue *v = L.uf.val[i];
        if (!v || !tir_type_is_tile(v->ty))
            continue;
        ClassInfo *c = &L.cls[uf_find(&L.uf, i)];
        int64_t ne = tir_type_numel(v->ty);
        if (ne > c->numel) {
            c->numel = ne;
            c->rank = v->ty.rank;
            memcpy(c->shape, v->ty.shape, sizeof c->shape);
        }
    }
    tir_walk_func(f, anchor_op, &L);
    for (int32_t i = 0; i < L.uf.n; i++) {
        TirValue *v = L.uf.val[i];
        if (!v || !tir_type_is_tile(v->ty))
            continue;
        v->ty.layout = class_layout(&L, uf_find(&L.uf, i), 0);
    }
    L.cvt_cap = 64;
    L.cvt = tir_alloc(m->arena, (size_t)L.cvt_cap * sizeof *L.cvt);
    tir_walk_func(f, fix_op, &L);
    tir_walk_func(f, vec_op, &L);
    tir_walk_func(f, constancy_op, &L);
    return L.errors;
}

int pass_layout(TirModule *m, TirPassContext *ctx) {
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next)
        if (f->kind == TIR_FUNC_KERNEL)
            errors += layout_func(ctx, m, f);
    return errors;
}
