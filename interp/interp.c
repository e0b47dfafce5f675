/* The reference interpreter: frames, control flow, calls and the grid.
 * Arithmetic lives in interp_ops.c, memory in interp_mem.c. */
#include "interp_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Device functions may call each other; a bound keeps runaway recursion an error
 * instead of a stack overflow. */
#define TI_MAX_CALL_DEPTH 64

/* ---- errors ---------------------------------------------------------------------- */

void ti_value_name(char *buf, size_t n, const TirValue *v) {
    if (!v)
        snprintf(buf, n, "%%?");
    else if (v->name)
        snprintf(buf, n, "%%%s.%d", v->name, (int)v->id);
    else
        snprintf(buf, n, "%%%d", (int)v->id);
}

int ti_error(TiInterp *ip, const TirOp *op, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (k < 0)
        k = 0;
    if ((size_t)k < sizeof msg && op) {
        const TirFunc *f = op->parent ? op->parent->func : NULL;
        snprintf(msg + k, sizeof msg - k, " [%s in @%s]", tir_op_info[op->code].name, f && f->name ? f->name : "?");
    }
    ip->errors++;
    if (ip->o->diag)
        ip->o->diag(ip->o->ud, msg);
    return TI_ERR;
}

/* ---- slots ----------------------------------------------------------------------- */

int64_t ti_numel(TirType t) {
    if (t.kind == TIR_K_DESC)
        return 1 + 2 * (int64_t)t.rank;
    if (t.kind == TIR_K_SMEM) {
        int64_t stage = 1;
        for (int i = 1; i < t.rank && i < TIR_MAXRANK; i++)
            stage *= t.shape[i] > 0 ? t.shape[i] : 0;
        int64_t s = t.shape[0] > 0 ? t.shape[0] : 0;
        return 2 * s * stage + (int64_t)(sizeof(TiStage) / sizeof(TiElem)) * s;
    }
    int64_t n = 1;
    for (int i = 0; i < t.rank && i < TIR_MAXRANK; i++)
        n *= t.shape[i] > 0 ? t.shape[i] : 0;
    return n;
}

static uint32_t ptr_hash(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (uint32_t)x;
}

TiSlot *ti_slot(TiFrame *fr, const TirValue *v) {
    TiFuncInfo *fi = fr->fi;
    if (fi->by_id)
        return (uint32_t)v->id < (uint32_t)fi->nslots ? &fr->slots[v->id] : NULL;
    for (uint32_t h = ptr_hash(v) & (fi->hcap - 1);; h = (h + 1) & (fi->hcap - 1)) {
        if (fi->hkeys[h] == v)
            return &fr->slots[fi->hidx[h]];
        if (!fi->hkeys[h])
            return NULL;
    }
}

static TiElem *slot_reserve(TiSlot *s, int64_t n) {
    if (n > 1 && n > s->cap) {
        TiElem *p = realloc(s->heap, (size_t)n * sizeof *p);
        if (!p)
            return NULL;
        s->heap = p;
        s->cap = n;
    }
    s->n = n;
    return ti_data(s);
}

TiElem *ti_def(TiFrame *fr, const TirValue *v, int64_t n) {
    TiSlot *s = ti_slot(fr, v);
    return s ? slot_reserve(s, n) : NULL;
}

TiElem *ti_get(TiInterp *ip, TiFrame *fr, const TirOp *op, const TirValue *v, int64_t *n) {
    TiSlot *s = v ? ti_slot(fr, v) : NULL;
    int64_t want = v ? ti_numel(v->ty) : 0;
    if (!s || s->n == 0 || s->n != want) {
        char name[96];
        ti_value_name(name, sizeof name, v);
        ti_error(ip, op, "interp: operand %s is used before it is defined", name);
        return NULL;
    }
    if (n)
        *n = s->n;
    return ti_data(s);
}

/* False on a value outside its function (malformed IR) or when memory runs out. */
static bool copy_value(TiSlot *dst, TiSlot *src) {
    if (!dst || !src)
        return false;
    TiElem *d = slot_reserve(dst, src->n);
    if (!d)
        return false;
    memcpy(d, ti_data(src), (size_t)src->n * sizeof *d);
    return true;
}

/* ---- per-function numbering -------------------------------------------------------- */

typedef struct {
    const TirValue **vals;
    int32_t n, cap;
    bool oom;
} ValList;

static void vals_push(ValList *l, const TirValue *v) {
    if (l->n == l->cap) {
        int32_t c = l->cap ? l->cap * 2 : 64;
        const TirValue **p = realloc(l->vals, (size_t)c * sizeof *p);
        if (!p) {
            l->oom = true;
            return;
        }
        l->vals = p;
        l->cap = c;
    }
    l->vals[l->n++] = v;
}

static void collect_block(ValList *l, const TirBlock *b) {
    for (int i = 0; i < b->nargs; i++)
        vals_push(l, b->args[i]);
    for (const TirOp *op = b->first; op; op = op->next) {
        for (int i = 0; i < op->nres; i++)
            vals_push(l, op->res[i]);
        for (int r = 0; r < op->nregion; r++)
            if (op->region[r])
                collect_block(l, op->region[r]);
    }
}

static TiFuncInfo *func_info(TiInterp *ip, const TirFunc *f) {
    for (TiFuncInfo *fi = ip->funcs; fi; fi = fi->next)
        if (fi->f == f)
            return fi;
    TiFuncInfo *fi = calloc(1, sizeof *fi);
    if (!fi)
        return NULL;
    fi->f = f;
    ValList l = {0};
    collect_block(&l, f->body);
    /* Ids are usable as slot indices when each is in [0, next_id) and used once. */
    bool ok = !l.oom && f->next_id >= 0;
    uint8_t *seen = ok ? calloc((size_t)f->next_id + 1, 1) : NULL;
    if (!seen)
        ok = false;
    for (int32_t i = 0; ok && i < l.n; i++) {
        int32_t id = l.vals[i] ? l.vals[i]->id : -1;
        if (id < 0 || id >= f->next_id || seen[id])
            ok = false;
        else
            seen[id] = 1;
    }
    free(seen);
    if (ok) {
        fi->by_id = true;
        fi->nslots = f->next_id;
    } else if (!l.oom) {
        uint32_t cap = 16;
        while (cap < 2u * (uint32_t)l.n)
            cap *= 2;
        fi->hcap = cap;
        fi->hkeys = calloc(cap, sizeof *fi->hkeys);
        fi->hidx = calloc(cap, sizeof *fi->hidx);
        if (!fi->hkeys || !fi->hidx) {
            free(fi->hkeys);
            free(fi->hidx);
            free(fi);
            free(l.vals);
            return NULL;
        }
        for (int32_t i = 0; i < l.n; i++) {
            if (!l.vals[i])
                continue;
            uint32_t h = ptr_hash(l.vals[i]) & (cap - 1);
            while (fi->hkeys[h] && fi->hkeys[h] != l.vals[i])
                h = (h + 1) & (cap - 1);
            if (!fi->hkeys[h]) {
                fi->hkeys[h] = l.vals[i];
                fi->hidx[h] = fi->nslots++;
            }
        }
    } else {
        free(fi);
        free(l.vals);
        return NULL;
    }
    free(l.vals);
    fi->next = ip->funcs;
    ip->funcs = fi;
    return fi;
}

static void frame_free(TiFrame *fr) {
    if (!fr)
        return;
    for (int32_t i = 0; i < fr->fi->nslots; i++)
        free(fr->slots[i].heap);
    free(fr->slots);
    free(fr);
}

/* A frame whose slots all read as undefined; reuses the function's spare one. */
static TiFrame *frame_take(TiFuncInfo *fi) {
    TiFrame *fr = fi->spare;
    if (fr) {
        fi->spare = NULL;
    } else {
        fr = calloc(1, sizeof *fr);
        if (!fr)
            return NULL;
        fr->fi = fi;
        fr->slots = calloc((size_t)fi->nslots + 1, sizeof *fr->slots);
        if (!fr->slots) {
            free(fr);
            return NULL;
        }
    }
    for (int32_t i = 0; i < fi->nslots; i++)
        fr->slots[i].n = 0;
    return fr;
}

static void frame_give(TiFrame *fr) {
    if (!fr->fi->spare)
        fr->fi->spare = fr;
    else
        frame_free(fr);
}

static void interp_free(TiInterp *ip) {
    free(ip->pend);
    ti_written_free(ip);
    free(ip->rings);
    TiFuncInfo *fi = ip->funcs;
    while (fi) {
        TiFuncInfo *next = fi->next;
        frame_free(fi->spare);
        free(fi->hkeys);
        free(fi->hidx);
        free(fi);
        fi = next;
    }
}

/* ---- control flow ------------------------------------------------------------------ */

static int exec_op(TiInterp *ip, TiFrame *fr, const TirOp *op);

/* Runs a block's ops up to its terminator (returned in *term, NULL if none). */
static int exec_block(TiInterp *ip, TiFrame *fr, const TirBlock *b, const TirOp **term) {
    *term = NULL;
    for (const TirOp *op = b->first; op; op = op->next) {
        if (op->code < TIR_NOPS && (tir_op_info[op->code].traits & TIR_T_TERMINATOR)) {
            *term = op;
            return TI_OK;
        }
        int st = exec_op(ip, fr, op);
        if (st != TI_OK)
            return st;
    }
    return TI_OK;
}

/* The scalar operand as a 64-bit integer. */
static bool scalar_int(TiInterp *ip, TiFrame *fr, const TirOp *op, const TirValue *v, int64_t *out) {
    int64_t n;
    TiElem *e = ti_get(ip, fr, op, v, &n);
    if (!e)
        return false;
    if (n != 1 || ti_kind_float(ti_kind(v->ty))) {
        ti_error(ip, op, "interp: expected an integer scalar operand");
        return false;
    }
    *out = e[0].i;
    return true;
}

static int op_for(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    if (op->nopnd < 3 || op->nregion < 1 || !op->region[0])
        return ti_error(ip, op, "interp: malformed for");
    int ncarry = op->nopnd - 3;
    const TirBlock *body = op->region[0];
    if (body->nargs != ncarry + 1 || op->nres != ncarry)
        return ti_error(ip, op, "interp: for carries %d values but its body takes %d and it gives %d", ncarry,
                        body->nargs - 1, op->nres);
    int64_t lb, ub, step;
    if (!scalar_int(ip, fr, op, op->opnd[0], &lb) || !scalar_int(ip, fr, op, op->opnd[1], &ub) ||
        !scalar_int(ip, fr, op, op->opnd[2], &step))
        return TI_ERR;
    TirType ivt = op->opnd[0]->ty;
    bool uns = ti_kind(ivt) == TI_UINT || ti_kind(ivt) == TI_BOOL;
    for (int i = 0; i < ncarry; i++) {
        if (!ti_get(ip, fr, op, op->opnd[3 + i], NULL))
            return TI_ERR;
        if (!copy_value(ti_slot(fr, body->args[1 + i]), ti_slot(fr, op->opnd[3 + i])))
            return ti_error(ip, op, "interp: value outside its function, or out of memory");
    }
    bool more = uns ? (uint64_t)lb < (uint64_t)ub : lb < ub;
    if (more && (uns ? step == 0 : step <= 0))
        return ti_error(ip, op, "interp: for step %lld is not positive", (long long)step);
    for (int64_t iv = lb; more;) {
        TiElem *ive = ti_def(fr, body->args[0], 1);
        if (!ive)
            return ti_error(ip, op, "interp: malformed for body");
        ive->i = iv;
        const TirOp *term;
        int st = exec_block(ip, fr, body, &term);
        if (st != TI_OK)
            return st;
        if (!term || term->code != TIR_OP_YIELD || term->nopnd != ncarry)
            return ti_error(ip, op, "interp: for body must end in yield of %d values", ncarry);
        /* The for's own result slots are free while it runs: yielded values go there
         * first, then swap into the carried arguments, so `yield %b, %a` works. */
        for (int i = 0; i < ncarry; i++) {
            if (!ti_get(ip, fr, term, term->opnd[i], NULL))
                return TI_ERR;
            if (!copy_value(ti_slot(fr, op->res[i]), ti_slot(fr, term->opnd[i])))
                return ti_error(ip, op, "interp: value outside its function, or out of memory");
        }
        for (int i = 0; i < ncarry; i++) {
            TiSlot *a = ti_slot(fr, op->res[i]), *b = ti_slot(fr, body->args[1 + i]);
            if (!a || !b)
                return ti_error(ip, op, "interp: malformed for");
            TiSlot t = *a;
            *a = *b;
            *b = t;
        }
        /* Advance without wrapping: a loop near the type's maximum must still end. */
        if (uns) {
            uint64_t next = (uint64_t)iv + (uint64_t)step;
            more = next > (uint64_t)iv && next < (uint64_t)ub;
            iv = (int64_t)next;
        } else {
            int64_t next;
            more = !__builtin_add_overflow(iv, step, &next) && next < ub;
            iv = next;
        }
        /* The loop variable's type may be narrower than 64 bits. */
        if (more && ti_norm((TirScalar)ivt.elem, (uint64_t)iv) != iv)
            more = false;
    }
    for (int i = 0; i < ncarry; i++)
        if (!copy_value(ti_slot(fr, op->res[i]), ti_slot(fr, body->args[1 + i])))
            return ti_error(ip, op, "interp: value outside its function, or out of memory");
    return TI_OK;
}

static int op_if(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t c;
    if (op->nopnd != 1 || op->nregion != 2)
        return ti_error(ip, op, "interp: malformed if");
    if (!scalar_int(ip, fr, op, op->opnd[0], &c))
        return TI_ERR;
    const TirBlock *b = op->region[c ? 0 : 1];
    if (!b)
        return op->nres ? ti_error(ip, op, "interp: if without a region") : TI_OK;
    const TirOp *term;
    int st = exec_block(ip, fr, b, &term);
    if (st != TI_OK)
        return st;
    if (op->nres == 0)
        return TI_OK;
    if (!term || term->code != TIR_OP_YIELD || term->nopnd != op->nres)
        return ti_error(ip, op, "interp: if region must yield %d values", op->nres);
    for (int i = 0; i < op->nres; i++) {
        if (!ti_get(ip, fr, term, term->opnd[i], NULL))
            return TI_ERR;
        if (!copy_value(ti_slot(fr, op->res[i]), ti_slot(fr, term->opnd[i])))
            return ti_error(ip, op, "interp: value outside its function, or out of memory");
    }
    return TI_OK;
}

static const TirFunc *find_func(const TirModule *m, const char *name) {
    if (!m || !name)
        return NULL;
    for (const TirFunc *f = m->first; f; f = f->next)
        if (f->name && strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

static int op_call(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    const char *name = op->attr.s;
    if (name && name[0] == '@')
        name++;
    const TirFunc *callee = find_func(ip->m, name);
    if (!callee || !callee->body)
        return ti_error(ip, op, "interp: call of unknown function @%s", name ? name : "?");
    if (callee->body->nargs != op->nopnd)
        return ti_error(ip, op, "interp: @%s takes %d arguments, given %d", name, callee->body->nargs, op->nopnd);
    if (ip->depth >= TI_MAX_CALL_DEPTH)
        return ti_error(ip, op, "interp: calls nested deeper than %d (recursion?)", TI_MAX_CALL_DEPTH);
    TiFuncInfo *fi = func_info(ip, callee);
    TiFrame *cf = fi ? frame_take(fi) : NULL;
    if (!cf)
        return ti_error(ip, op, "interp: value outside its function, or out of memory");
    int st = TI_OK;
    for (int i = 0; i < op->nopnd && st == TI_OK; i++) {
        if (!ti_get(ip, fr, op, op->opnd[i], NULL))
            st = TI_ERR;
        else if (!copy_value(ti_slot(cf, callee->body->args[i]), ti_slot(fr, op->opnd[i])))
            st = ti_error(ip, op, "interp: value outside its function, or out of memory");
    }
    const TirOp *term = NULL;
    if (st == TI_OK) {
        ip->depth++;
        st = exec_block(ip, cf, callee->body, &term);
        ip->depth--;
    }
    if (st == TI_OK) {
        if (!term || term->code != TIR_OP_FUNC_RETURN || term->nopnd != op->nres) {
            st = ti_error(ip, op, "interp: @%s must end in func_return of %d values", name, op->nres);
        } else {
            for (int i = 0; i < op->nres && st == TI_OK; i++) {
                if (!ti_get(ip, cf, term, term->opnd[i], NULL))
                    st = TI_ERR;
                else if (!copy_value(ti_slot(fr, op->res[i]), ti_slot(cf, term->opnd[i])))
                    st = ti_error(ip, op, "interp: value outside its function, or out of memory");
            }
        }
    }
    frame_give(cf);
    return st;
}

static int op_program_id(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t axis = op->attr.i[0];
    if (axis < 0 || axis > 2 || op->nres != 1)
        return ti_error(ip, op, "interp: axis %lld is not 0, 1 or 2", (long long)axis);
    TiElem *r = ti_def(fr, op->res[0], 1);
    if (!r)
        return ti_error(ip, op, "interp: malformed op");
    r->i = ti_norm(TIR_I32, (uint64_t)(op->code == TIR_OP_PROGRAM_ID ? ip->pid[axis] : ip->grid[axis]));
    return TI_OK;
}

static int op_return(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    return TI_RET;
}

/* Programs run one at a time here, so an intra-program barrier orders nothing. */
static int op_barrier(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    ip->epoch++;
    return TI_OK;
}

static int op_stray_terminator(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    return ti_error(ip, op, "interp: terminator in the middle of a block");
}

static const TiOpFn ti_handlers[TIR_NOPS] = {
    [TIR_OP_CONSTANT] = ti_op_constant,
    [TIR_OP_ARANGE] = ti_op_arange,
    [TIR_OP_PROGRAM_ID] = op_program_id,
    [TIR_OP_NUM_PROGRAMS] = op_program_id,
    [TIR_OP_SPLAT] = ti_op_splat,
    [TIR_OP_BROADCAST] = ti_op_broadcast,
    [TIR_OP_EXPAND_DIMS] = ti_op_copy,
    [TIR_OP_RESHAPE] = ti_op_copy,
    [TIR_OP_TRANS] = ti_op_trans,
    [TIR_OP_CONVERT_LAYOUT] = ti_op_copy,
    [TIR_OP_CAST] = ti_op_cast,
    [TIR_OP_ADD] = ti_op_binary,
    [TIR_OP_SUB] = ti_op_binary,
    [TIR_OP_MUL] = ti_op_binary,
    [TIR_OP_DIV] = ti_op_binary,
    [TIR_OP_REM] = ti_op_binary,
    [TIR_OP_AND] = ti_op_binary,
    [TIR_OP_OR] = ti_op_binary,
    [TIR_OP_XOR] = ti_op_binary,
    [TIR_OP_SHL] = ti_op_binary,
    [TIR_OP_SHR] = ti_op_binary,
    [TIR_OP_MAXIMUM] = ti_op_binary,
    [TIR_OP_MINIMUM] = ti_op_binary,
    [TIR_OP_CMP] = ti_op_cmp,
    [TIR_OP_SELECT] = ti_op_select,
    [TIR_OP_FMA] = ti_op_fma,
    [TIR_OP_ADDPTR] = ti_op_addptr,
    [TIR_OP_NEG] = ti_op_unary,
    [TIR_OP_NOT] = ti_op_unary,
    [TIR_OP_ABS] = ti_op_unary,
    [TIR_OP_EXP] = ti_op_unary,
    [TIR_OP_EXP2] = ti_op_unary,
    [TIR_OP_LOG] = ti_op_unary,
    [TIR_OP_LOG2] = ti_op_unary,
    [TIR_OP_SQRT] = ti_op_unary,
    [TIR_OP_RSQRT] = ti_op_unary,
    [TIR_OP_SIN] = ti_op_unary,
    [TIR_OP_COS] = ti_op_unary,
    [TIR_OP_TANH] = ti_op_unary,
    [TIR_OP_SIGMOID] = ti_op_unary,
    [TIR_OP_ERF] = ti_op_unary,
    [TIR_OP_FLOOR] = ti_op_unary,
    [TIR_OP_CEIL] = ti_op_unary,
    [TIR_OP_NEXT_POW2] = ti_op_unary,
    [TIR_OP_HINT_MULTIPLE_OF] = ti_op_copy,
    [TIR_OP_HINT_MAX_CONTIGUOUS] = ti_op_copy,
    [TIR_OP_REDUCE_SUM] = ti_op_reduce,
    [TIR_OP_REDUCE_MAX] = ti_op_reduce,
    [TIR_OP_REDUCE_MIN] = ti_op_reduce,
    [TIR_OP_ARGMAX] = ti_op_reduce,
    [TIR_OP_ARGMIN] = ti_op_reduce,
    [TIR_OP_CUMSUM] = ti_op_cumsum,
    [TIR_OP_DOT] = ti_op_dot,
    [TIR_OP_LOAD] = ti_op_load,
    [TIR_OP_STORE] = ti_op_store,
    [TIR_OP_ATOMIC_ADD] = ti_op_atomic,
    [TIR_OP_ATOMIC_MAX] = ti_op_atomic,
    [TIR_OP_ATOMIC_MIN] = ti_op_atomic,
    [TIR_OP_ATOMIC_XCHG] = ti_op_atomic,
    [TIR_OP_ATOMIC_CAS] = ti_op_atomic,
    [TIR_OP_TENSOR_DESC] = ti_op_tensor_desc,
    [TIR_OP_TLOAD] = ti_op_tload,
    [TIR_OP_TSTORE] = ti_op_tstore,
    [TIR_OP_PRINT] = ti_op_print,
    [TIR_OP_ASSERT] = ti_op_assert,
    [TIR_OP_FOR] = op_for,
    [TIR_OP_IF] = op_if,
    [TIR_OP_YIELD] = op_stray_terminator,
    [TIR_OP_CALL] = op_call,
    [TIR_OP_FUNC_RETURN] = op_stray_terminator,
    [TIR_OP_RETURN] = op_return,
    [TIR_OP_BARRIER] = op_barrier,
    [TIR_OP_SMEM_ALLOC] = ti_op_smem_alloc,
    [TIR_OP_SMEM_STORE] = ti_op_smem_store,
    [TIR_OP_SMEM_LOAD] = ti_op_smem_load,
    [TIR_OP_ASYNC_COPY] = ti_op_async_copy,
    [TIR_OP_ASYNC_COMMIT] = ti_op_async_commit,
    [TIR_OP_ASYNC_WAIT] = ti_op_async_wait,
};

static bool has_barrier(TirOp *op, void *ud) {
    (void)ud;
    return op->code != TIR_OP_BARRIER;
}

static int exec_op(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    TiOpFn fn = op->code < TIR_NOPS ? ti_handlers[op->code] : NULL;
    if (!fn)
        return ti_error(ip, NULL, "interp: unknown op code %d", (int)op->code);
    int st = fn(ip, fr, op);
    /* scratch placed by smem_alloc: its writes land on whatever ring shares its bytes */
    if (st == TI_OK && op->attr.smem_bytes > 0 && op->code != TIR_OP_SMEM_ALLOC && ip->nrings)
        ti_smem_scratch_write(ip, op);
    return st;
}

/* ---- the grid ---------------------------------------------------------------------- */

static bool set_kernel_args(TiInterp *ip, TiFrame *fr, const TirFunc *k, const TirArg *args) {
    const TirBlock *b = k->body;
    for (int i = 0; i < b->nargs; i++) {
        const TirValue *v = b->args[i];
        TirType t = v->ty;
        if (t.kind != TIR_K_VALUE || t.rank != 0) {
            ti_error(ip, NULL, "interp: kernel parameter %d of @%s is not a scalar or pointer", i,
                     k->name ? k->name : "?");
            return false;
        }
        TiElem *e = ti_def(fr, v, 1);
        if (!e) {
            ti_error(ip, NULL, "interp: malformed kernel parameters");
            return false;
        }
        switch (ti_kind(t)) {
        case TI_PTR: e->u = (uint64_t)(uintptr_t)args[i].p; break;
        case TI_F32:
        case TI_F64:
        case TI_NARROW: e->f = tir_round_to((TirScalar)t.elem, args[i].f); break;
        default: e->i = ti_norm((TirScalar)t.elem, (uint64_t)args[i].i); break;
        }
    }
    return true;
}

int tir_interp_run(const TirFunc *kernel, const TirArg *args, const TirInterpOptions *o) {
    TirInterpOptions none = {0};
    TiInterp ip = {.o = o ? o : &none};
    if (!kernel || !kernel->body) {
        ti_error(&ip, NULL, "interp: no kernel to run");
        return ip.errors;
    }
    if (kernel->body->nargs > 0 && !args) {
        ti_error(&ip, NULL, "interp: @%s takes %d arguments, none given", kernel->name ? kernel->name : "?",
                 kernel->body->nargs);
        return ip.errors;
    }
    ip.m = kernel->module;
    ip.check_sync = !tir_walk_func((TirFunc *)kernel, has_barrier, NULL);
    for (int a = 0; a < 3; a++)
        ip.grid[a] = ip.o->grid[a] > 0 ? ip.o->grid[a] : 1;
    TiFuncInfo *fi = func_info(&ip, kernel);
    TiFrame *fr = fi ? frame_take(fi) : NULL;
    if (!fr) {
        ti_error(&ip, NULL, "interp: value outside its function, or out of memory");
        interp_free(&ip);
        return ip.errors;
    }
    bool stop = false;
    for (int64_t z = 0; z < ip.grid[2] && !stop; z++)
        for (int64_t y = 0; y < ip.grid[1] && !stop; y++)
            for (int64_t x = 0; x < ip.grid[0] && !stop; x++) {
                ip.pid[0] = x;
                ip.pid[1] = y;
                ip.pid[2] = z;
                for (int32_t i = 0; i < fi->nslots; i++)
                    fr->slots[i].n = 0;
                ip.npend = 0;
                ip.ncommit = 0;
                ti_written_reset(&ip);
                ip.nrings = 0;
                if (!set_kernel_args(&ip, fr, kernel, args)) {
                    stop = true;
                    break;
                }
                const TirOp *term;
                int st = exec_block(&ip, fr, kernel->body, &term);
                if (st == TI_OK && term)
                    st = ti_error(&ip, term, "interp: a kernel body has no terminator");
                if (st == TI_ERR)
                    stop = true;
            }
    frame_give(fr);
    interp_free(&ip);
    return ip.errors;
}
