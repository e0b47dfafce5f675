/* Axis info: divisibility, contiguity and constancy of integer and pointer values along
 * each dimension, from arange, constants, hints and the runtime's argument facts, through
 * the arithmetic that builds addresses and masks.  The layout pass reads it to size
 * vector accesses; nothing is rewritten (passes/analysis_axisinfo.c prints it). */
#include "analysis.h"

#include <string.h>

#define AX_MAXDIV ((int64_t)1 << 30)

static int64_t pow2_div(int64_t c) {
    if (c == 0)
        return AX_MAXDIV;
    /* the lowest set bit of c is that of -c: no negation (INT64_MIN has none) */
    uint64_t u = (uint64_t)c, p = u & (0 - u);
    return p > (uint64_t)AX_MAXDIV ? AX_MAXDIV : (int64_t)p;
}
static int64_t min64(int64_t a, int64_t b) {
    return a < b ? a : b;
}
static int32_t min32(int32_t a, int32_t b) {
    return a < b ? a : b;
}
static int32_t max32(int32_t a, int32_t b) {
    return a > b ? a : b;
}

typedef struct {
    TirAxisInfo *info;
    int32_t n;
    TirAxisInfo none; /* per call (the runtime compiles variants on several threads) */
} AxState;

static TirAxisInfo *ax(AxState *s, const TirValue *v) {
    if (!v || v->id < 0 || v->id >= s->n) {
        for (int d = 0; d < TIR_MAXRANK; d++)
            s->none.div[d] = s->none.contig[d] = s->none.constancy[d] = 1;
        return &s->none;
    }
    return &s->info[v->id];
}

static int rank_of(const TirValue *v) {
    return v->ty.rank > 0 ? v->ty.rank : 1;
}
static int32_t dim_of(const TirValue *v, int d) {
    return v->ty.rank > 0 ? v->ty.shape[d] : 1;
}

/* Nothing known: div 1, contig 1, constancy 1. */
static void unknown(TirAxisInfo *a) {
    for (int d = 0; d < TIR_MAXRANK; d++)
        a->div[d] = a->contig[d] = a->constancy[d] = 1;
}

static int elem_bytes(const TirValue *v) {
    return tir_scalar_bytes((TirScalar)v->ty.elem);
}

static void visit(AxState *s, TirOp *op) {
    if (op->nres < 1)
        return;
    TirValue *r = op->res[0];
    TirAxisInfo *o = ax(s, r);
    unknown(o);
    int rank = rank_of(r);
    TirAxisInfo *a = op->nopnd > 0 ? ax(s, op->opnd[0]) : NULL;
    TirAxisInfo *b = op->nopnd > 1 ? ax(s, op->opnd[1]) : NULL;
    switch ((TirOpcode)op->code) {
    case TIR_OP_CONSTANT:
        for (int d = 0; d < rank; d++) {
            o->div[d] = tir_scalar_is_float((TirScalar)r->ty.elem) ? 1 : pow2_div(op->attr.ival);
            o->constancy[d] = dim_of(r, d);
        }
        break;
    case TIR_OP_ARANGE:
        o->div[0] = pow2_div(op->attr.i[0]);
        o->contig[0] = dim_of(r, 0);
        break;
    case TIR_OP_SPLAT:
        for (int d = 0; d < rank; d++) {
            o->div[d] = a->div[0];
            o->constancy[d] = dim_of(r, d);
        }
        break;
    case TIR_OP_BROADCAST:
        for (int d = 0; d < rank; d++) {
            bool stretched = dim_of(op->opnd[0], d) != dim_of(r, d);
            o->div[d] = a->div[d];
            o->contig[d] = stretched ? 1 : a->contig[d];
            o->constancy[d] = stretched ? dim_of(r, d) : a->constancy[d];
        }
        break;
    case TIR_OP_EXPAND_DIMS: {
        int axis = (int)op->attr.i[0];
        for (int d = 0, k = 0; d < rank; d++) {
            if (d == axis) {
                /* along the new dimension every element is a run of its own: what divides
                 * every element (inside a contiguous run only the first value is known) */
                int64_t all = AX_MAXDIV;
                for (int j = 0; j < rank - 1; j++)
                    all = min64(all, a->contig[j] > 1 ? 1 : a->div[j]);
                o->div[d] = rank > 1 ? all : a->div[0];
                continue;
            }
            o->div[d] = a->div[k];
            o->contig[d] = a->contig[k];
            o->constancy[d] = a->constancy[k];
            k++;
        }
        break;
    }
    case TIR_OP_CONVERT_LAYOUT:
    case TIR_OP_HINT_MULTIPLE_OF:
    case TIR_OP_HINT_MAX_CONTIGUOUS:
        *o = *a;
        if (op->code == TIR_OP_HINT_MULTIPLE_OF)
            /* the promise: a multiple of n, so of the largest power of two dividing n */
            for (int d = 0; d < rank; d++)
                if (pow2_div(op->attr.i[0]) > o->div[d] && op->attr.i[0] > 0)
                    o->div[d] = pow2_div(op->attr.i[0]);
        if (op->code == TIR_OP_HINT_MAX_CONTIGUOUS) {
            int d = rank - 1;
            int64_t n = op->attr.i[0];
            int32_t p = 1;
            while ((int64_t)p * 2 <= n && p < (1 << 30))
                p *= 2;
            o->contig[d] = max32(o->contig[d], min32(p, dim_of(r, d)));
        }
        break;
    case TIR_OP_ADD:
    case TIR_OP_SUB:
    case TIR_OP_ADDPTR: {
        int64_t scale = op->code == TIR_OP_ADDPTR ? elem_bytes(r) : 1;
        for (int d = 0; d < rank; d++) {
            int32_t c1 = min32(a->contig[d], b->constancy[d]);
            int32_t c2 = op->code == TIR_OP_SUB ? 1 : min32(b->contig[d], a->constancy[d]);
            o->contig[d] = max32(c1, c2);
            o->div[d] = min64(a->div[d], min64(AX_MAXDIV, b->div[d] * scale));
            o->constancy[d] = min32(a->constancy[d], b->constancy[d]);
        }
        break;
    }
    case TIR_OP_MUL:
        for (int d = 0; d < rank; d++) {
            /* div is the divisibility of each contiguous run's first value: the other
             * values of a run (x+1, x+2, ...) are divisible by nothing, and times a
             * factor each is its own run.  So a contiguous operand contributes 1 (x * 1
             * is folded away before this analysis runs). */
            int64_t da = a->contig[d] > 1 ? 1 : a->div[d], db = b->contig[d] > 1 ? 1 : b->div[d];
            o->div[d] = min64(AX_MAXDIV, da * db);
            o->constancy[d] = min32(a->constancy[d], b->constancy[d]);
        }
        break;
    case TIR_OP_DIV:
    case TIR_OP_REM:
    case TIR_OP_AND:
    case TIR_OP_OR:
    case TIR_OP_XOR:
    case TIR_OP_SELECT:
    case TIR_OP_MAXIMUM:
    case TIR_OP_MINIMUM:
    case TIR_OP_SHL:
    case TIR_OP_SHR:
        for (int d = 0; d < rank; d++) {
            int32_t c = min32(a->constancy[d], b->constancy[d]);
            if (op->code == TIR_OP_SELECT)
                c = min32(c, ax(s, op->opnd[2])->constancy[d]);
            o->constancy[d] = c;
        }
        break;
    case TIR_OP_CMP:
        /* `x < n` with x contiguous from a multiple of g and n a multiple of g is
         * constant over aligned groups of g: masks of ragged tails stay vectorisable. */
        for (int d = 0; d < rank; d++) {
            int32_t c = min32(a->constancy[d], b->constancy[d]);
            if (b->constancy[d] == dim_of(r, d) && a->contig[d] > 1) {
                int64_t g = min64(min64(a->div[d], b->div[d]), a->contig[d]);
                c = max32(c, (int32_t)g);
            }
            if (a->constancy[d] == dim_of(r, d) && b->contig[d] > 1) {
                int64_t g = min64(min64(a->div[d], b->div[d]), b->contig[d]);
                c = max32(c, (int32_t)g);
            }
            o->constancy[d] = c;
        }
        break;
    case TIR_OP_CAST:
    case TIR_OP_NOT:
        for (int d = 0; d < rank; d++)
            o->constancy[d] = a->constancy[d];
        if (op->code == TIR_OP_CAST && !r->ty.ptr && tir_scalar_is_int((TirScalar)r->ty.elem) &&
            tir_scalar_bits((TirScalar)r->ty.elem) >= tir_scalar_bits((TirScalar)op->opnd[0]->ty.elem))
            *o = *a;
        break;
    default: break;
    }
}

static void walk_block(AxState *s, TirBlock *blk);

static void visit_region_op(AxState *s, TirOp *op) {
    if (op->code == TIR_OP_FOR && op->nregion > 0 && op->nopnd >= 3) {
        TirBlock *body = op->region[0];
        /* the loop variable: lb + k * step */
        if (body->nargs > 0) {
            TirAxisInfo *iv = ax(s, body->args[0]);
            unknown(iv);
            iv->div[0] = min64(ax(s, op->opnd[0])->div[0], ax(s, op->opnd[2])->div[0]);
        }
        /* carried values: what holds for the initial value and for every yielded one.
         * Start from the initial values and meet with the yields until nothing changes
         * (each step only lowers powers of two); after a few rounds, nothing is known. */
        TirOp *y = body->last && body->last->code == TIR_OP_YIELD ? body->last : NULL;
        int ncar = body->nargs - 1;
        for (int i = 1; i < body->nargs; i++) {
            TirAxisInfo *a = ax(s, body->args[i]);
            if (y && 2 + i < op->nopnd && i - 1 < y->nopnd)
                *a = *ax(s, op->opnd[2 + i]);
            else
                unknown(a);
        }
        for (int round = 0;; round++) {
            walk_block(s, body);
            bool changed = false;
            for (int c = 0; y && c < ncar && c < y->nopnd; c++) {
                TirAxisInfo *a = ax(s, body->args[1 + c]);
                const TirAxisInfo *b = ax(s, y->opnd[c]);
                for (int d = 0; d < TIR_MAXRANK; d++) {
                    TirAxisInfo m = {{min64(a->div[d], b->div[d])}, {0}, {0}};
                    int32_t ct = a->contig[d] < b->contig[d] ? a->contig[d] : b->contig[d];
                    int32_t cs = a->constancy[d] < b->constancy[d] ? a->constancy[d] : b->constancy[d];
                    if (m.div[0] != a->div[d] || ct != a->contig[d] || cs != a->constancy[d])
                        changed = true;
                    a->div[d] = m.div[0];
                    a->contig[d] = ct;
                    a->constancy[d] = cs;
                }
            }
            if (!changed)
                break;
            if (round == 4) {
                for (int i = 1; i < body->nargs; i++)
                    unknown(ax(s, body->args[i]));
                walk_block(s, body);
                break;
            }
        }
        for (int i = 0; i < op->nres; i++) {
            if (1 + i < body->nargs)
                *ax(s, op->res[i]) = *ax(s, body->args[1 + i]);
            else
                unknown(ax(s, op->res[i]));
        }
        return;
    }
    for (int r = 0; r < op->nregion; r++)
        walk_block(s, op->region[r]);
    for (int i = 0; i < op->nres; i++)
        unknown(ax(s, op->res[i]));
}

static void walk_block(AxState *s, TirBlock *blk) {
    for (TirOp *op = blk->first; op; op = op->next) {
        if (op->nregion > 0)
            visit_region_op(s, op);
        else
            visit(s, op);
    }
}

TirAxisInfo *analysis_axisinfo(TirFunc *f) {
    AxState s;
    s.n = f->next_id;
    s.info = tir_alloc(f->module->arena, (size_t)(s.n > 0 ? s.n : 1) * sizeof *s.info);
    for (int i = 0; i < s.n; i++)
        unknown(&s.info[i]);
    TirBlock *body = f->body;
    for (int i = 0; i < body->nargs; i++) {
        TirValue *p = body->args[i];
        TirAxisInfo *a = ax(&s, p);
        int32_t div = f->params ? f->params[i].divisibility : 0;
        if (p->ty.ptr)
            a->div[0] = div > 1 ? pow2_div(div) : tir_scalar_bytes((TirScalar)p->ty.elem);
        else if (f->params && f->params[i].equals_one)
            a->div[0] = 1;
        else if (div > 1)
            a->div[0] = pow2_div(div);
    }
    walk_block(&s, body);
    return s.info;
}
