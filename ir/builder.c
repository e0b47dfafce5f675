/* Modules, functions, ops: creation, editing, cloning and walking. */
#include "ptrmap.h"
#include "tir_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- modules and functions ---- */

TirModule *tir_module_new(TirArena *a) {
    TirModule *m = tir_alloc(a, sizeof *m);
    m->arena = a;
    m->caplayouts = 16;
    m->layouts = tir_alloc(a, (size_t)m->caplayouts * sizeof *m->layouts);
    m->nlayouts = 1; /* [0]: TIR_LAYOUT_NONE, zeroed */
    return m;
}

static TirBlock *block_new(TirFunc *f, TirOp *parent) {
    TirBlock *b = tir_alloc(f->module->arena, sizeof *b);
    b->func = f;
    b->parent = parent;
    return b;
}

/* ---- the module's functions by name ---- */
static TirFunc fn_removed; /* a tombstone in fn_index */

static uint32_t fn_name_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void fn_index_place(TirModule *m, TirFunc *f) {
    uint32_t h = fn_name_hash(f->name) & (m->fn_index_cap - 1);
    while (m->fn_index[h])
        h = (h + 1) & (m->fn_index_cap - 1);
    m->fn_index[h] = f;
    m->fn_index_used++;
}

/* Adds f; past half full (tombstones counted) the table is rebuilt twice as large from
 * the list (the arena keeps the old one: the sizes double, so the total stays linear). */
static void fn_index_add(TirModule *m, TirFunc *f) {
    if (2 * (m->fn_index_used + 1) > m->fn_index_cap) {
        uint32_t live = 0;
        for (TirFunc *g = m->first; g; g = g->next)
            live++;
        uint32_t cap = 64;
        while (cap < 4 * live)
            cap *= 2;
        m->fn_index = tir_alloc(m->arena, cap * sizeof *m->fn_index);
        memset(m->fn_index, 0, cap * sizeof *m->fn_index);
        m->fn_index_cap = cap;
        m->fn_index_used = 0;
        for (TirFunc *g = m->first; g; g = g->next)
            if (g != f)
                fn_index_place(m, g);
    }
    fn_index_place(m, f);
}

TirFunc *tir_func_new(TirModule *m, TirFuncKind kind, const char *name, int nparams, const TirType *ptypes,
                      const char *const *pnames) {
    TirArena *a = m->arena;
    TirFunc *f = tir_alloc(a, sizeof *f);
    f->kind = kind;
    f->name = tir_strdup(a, name ? name : "");
    f->module = m;
    f->loc = TIR_NOLOC;
    f->body = block_new(f, NULL);
    if (nparams < 0)
        nparams = 0;
    f->params = tir_alloc(a, (size_t)(nparams ? nparams : 1) * sizeof *f->params);
    for (int i = 0; i < nparams; i++) {
        TirValue *v = tir_block_add_arg(f->body, ptypes[i]);
        if (pnames && pnames[i]) {
            v->name = tir_strdup(a, pnames[i]);
            f->params[i].name = v->name;
        }
    }
    f->prev = m->last;
    if (m->last)
        m->last->next = f;
    else
        m->first = f;
    m->last = f;
    fn_index_add(m, f);
    return f;
}

TirFunc *tir_module_find(TirModule *m, const char *name) {
    if (!m->fn_index_cap)
        return NULL;
    for (uint32_t h = fn_name_hash(name) & (m->fn_index_cap - 1); m->fn_index[h]; h = (h + 1) & (m->fn_index_cap - 1))
        if (m->fn_index[h] != &fn_removed && strcmp(m->fn_index[h]->name, name) == 0)
            return m->fn_index[h];
    return NULL;
}

void tir_module_remove(TirModule *m, TirFunc *f) {
    if (f->module != m || (f->prev == NULL && m->first != f))
        return; /* not in this module's list */
    if (f->prev)
        f->prev->next = f->next;
    else
        m->first = f->next;
    if (f->next)
        f->next->prev = f->prev;
    else
        m->last = f->prev;
    f->next = f->prev = NULL;
    for (uint32_t h = fn_name_hash(f->name) & (m->fn_index_cap - 1); m->fn_index[h];
         h = (h + 1) & (m->fn_index_cap - 1))
        if (m->fn_index[h] == f) {
            m->fn_index[h] = &fn_removed;
            break;
        }
}

/* ---- values ---- */

TirValue *tir_value_new(TirFunc *f, TirType t) {
    TirValue *v = tir_alloc(f->module->arena, sizeof *v);
    v->ty = t;
    v->id = f->next_id++;
    return v;
}

TirValue *tir_block_add_arg(TirBlock *blk, TirType t) {
    TirArena *a = blk->func->module->arena;
    TirValue **args = tir_alloc(a, (size_t)(blk->nargs + 1) * sizeof *args);
    if (blk->nargs)
        memcpy(args, blk->args, (size_t)blk->nargs * sizeof *args);
    TirValue *v = tir_value_new(blk->func, t);
    v->block = blk;
    v->index = blk->nargs;
    args[blk->nargs++] = v;
    blk->args = args;
    return v;
}

/* ---- building ---- */

void tir_builder_at_end(TirBuilder *b, TirBlock *blk) {
    b->func = blk->func;
    b->block = blk;
    b->before = NULL;
}

void tir_builder_before(TirBuilder *b, TirOp *op) {
    b->block = op->parent;
    b->func = op->parent ? op->parent->func : b->func;
    b->before = op;
}

void tir_op_insert_before(TirOp *pos, TirOp *op) {
    TirBlock *blk = pos->parent;
    op->parent = blk;
    op->next = pos;
    op->prev = pos->prev;
    if (pos->prev)
        pos->prev->next = op;
    else
        blk->first = op;
    pos->prev = op;
}

void tir_op_insert_at_end(TirBlock *blk, TirOp *op) {
    op->parent = blk;
    op->next = NULL;
    op->prev = blk->last;
    if (blk->last)
        blk->last->next = op;
    else
        blk->first = op;
    blk->last = op;
}

void tir_op_detach(TirOp *op) {
    TirBlock *blk = op->parent;
    if (!blk)
        return;
    if (op->prev)
        op->prev->next = op->next;
    else
        blk->first = op->next;
    if (op->next)
        op->next->prev = op->prev;
    else
        blk->last = op->prev;
    op->prev = op->next = NULL;
    op->parent = NULL;
}

void tir_op_erase(TirOp *op) {
    tir_op_detach(op);
}

static void builder_insert(TirBuilder *b, TirOp *op) {
    if (b->before)
        tir_op_insert_before(b->before, op);
    else if (b->block)
        tir_op_insert_at_end(b->block, op);
}

TirOp *tir_op_new(TirBuilder *b, TirOpcode code, int nopnd, TirValue *const *opnd, int nres, const TirType *rtypes,
                  int nregion) {
    TirFunc *f = b->func ? b->func : b->block->func;
    TirArena *a = f->module->arena;
    TirOp *op = tir_alloc(a, sizeof *op);
    op->code = (uint16_t)code;
    op->loc = b->loc;
    op->nopnd = nopnd;
    op->opnd = tir_alloc(a, (size_t)(nopnd ? nopnd : 1) * sizeof *op->opnd);
    for (int i = 0; i < nopnd; i++)
        op->opnd[i] = opnd[i];
    op->nres = nres;
    op->res = tir_alloc(a, (size_t)(nres ? nres : 1) * sizeof *op->res);
    for (int i = 0; i < nres; i++) {
        TirValue *v = tir_value_new(f, rtypes[i]);
        v->def = op;
        v->index = i;
        op->res[i] = v;
    }
    op->nregion = nregion;
    op->region = tir_alloc(a, (size_t)(nregion ? nregion : 1) * sizeof *op->region);
    for (int i = 0; i < nregion; i++)
        op->region[i] = block_new(f, op);
    builder_insert(b, op);
    return op;
}

TirValue *tir_op1(TirBuilder *b, TirOpcode code, TirType rtype, int nopnd, TirValue *const *opnd) {
    return tir_op_new(b, code, nopnd, opnd, 1, &rtype, 0)->res[0];
}

TirValue *tir_const_int(TirBuilder *b, TirType t, int64_t v) {
    TirOp *op = tir_op_new(b, TIR_OP_CONSTANT, 0, NULL, 1, &t, 0);
    op->attr.ival = v;
    op->attr.fval = (double)v;
    return op->res[0];
}

TirValue *tir_const_float(TirBuilder *b, TirType t, double v) {
    TirOp *op = tir_op_new(b, TIR_OP_CONSTANT, 0, NULL, 1, &t, 0);
    op->attr.fval = v;
    return op->res[0];
}

TirValue *tir_unary(TirBuilder *b, TirOpcode code, TirValue *x) {
    return tir_op1(b, code, x->ty, 1, &x);
}

TirValue *tir_binary(TirBuilder *b, TirOpcode code, TirValue *x, TirValue *y) {
    TirValue *o[2] = {x, y};
    return tir_op1(b, code, x->ty, 2, o);
}

TirValue *tir_cmp(TirBuilder *b, TirCmp pred, TirValue *x, TirValue *y) {
    TirValue *o[2] = {x, y};
    TirType t = tir_with_shape(tir_scalar_type(TIR_I1), x->ty.rank, x->ty.shape);
    t.layout = x->ty.layout;
    TirOp *op = tir_op_new(b, TIR_OP_CMP, 2, o, 1, &t, 0);
    op->attr.i[0] = pred;
    return op->res[0];
}

TirValue *tir_cast(TirBuilder *b, TirValue *x, TirType to) {
    return tir_op1(b, TIR_OP_CAST, to, 1, &x);
}

/* ---- uses ---- */

typedef struct {
    TirValue *from, *to;
    int count;
} UseCtx;

static bool replace_in_op(TirOp *op, void *ud) {
    UseCtx *c = ud;
    for (int i = 0; i < op->nopnd; i++)
        if (op->opnd[i] == c->from)
            op->opnd[i] = c->to;
    return true;
}

static bool count_in_op(TirOp *op, void *ud) {
    UseCtx *c = ud;
    for (int i = 0; i < op->nopnd; i++)
        if (op->opnd[i] == c->from)
            c->count++;
    return true;
}

void tir_replace_all_uses(TirFunc *f, TirValue *from, TirValue *to) {
    UseCtx c = {from, to, 0};
    tir_walk_func(f, replace_in_op, &c);
}

int tir_count_uses(TirFunc *f, TirValue *v) {
    UseCtx c = {v, NULL, 0};
    tir_walk_func(f, count_in_op, &c);
    return c.count;
}

/* ---- cloning ---- */

/* Old value -> new value; values from outside the cloned op stay as they are. */
static TirValue *vm_get(const TirPtrMap *m, TirValue *k) {
    TirValue *v = tir_ptrmap_get(m, k);
    return v ? v : k;
}

static TirOp *clone_rec(TirBuilder *b, TirOp *op, TirPtrMap *map) {
    TirFunc *f = b->func ? b->func : b->block->func;
    TirArena *a = f->module->arena;
    TirValue **opnd = tir_alloc(a, (size_t)(op->nopnd ? op->nopnd : 1) * sizeof *opnd);
    TirType *rt = tir_alloc(a, (size_t)(op->nres ? op->nres : 1) * sizeof *rt);
    for (int i = 0; i < op->nopnd; i++)
        opnd[i] = vm_get(map, op->opnd[i]);
    for (int i = 0; i < op->nres; i++)
        rt[i] = op->res[i]->ty;
    TirOp *n = tir_op_new(b, (TirOpcode)op->code, op->nopnd, opnd, op->nres, rt, op->nregion);
    n->attr = op->attr;
    n->loc = op->loc;
    for (int i = 0; i < op->nres; i++) {
        n->res[i]->name = op->res[i]->name;
        tir_ptrmap_put(map, op->res[i], n->res[i]);
    }
    for (int r = 0; r < op->nregion; r++) {
        TirBlock *src = op->region[r], *dst = n->region[r];
        for (int i = 0; i < src->nargs; i++) {
            TirValue *v = tir_block_add_arg(dst, src->args[i]->ty);
            v->name = src->args[i]->name;
            tir_ptrmap_put(map, src->args[i], v);
        }
        TirBuilder inner = {f, dst, NULL, b->loc};
        for (TirOp *o = src->first; o; o = o->next)
            clone_rec(&inner, o, map);
    }
    return n;
}

TirOp *tir_op_clone(TirBuilder *b, TirOp *op, TirValue **map_from, TirValue **map_to, int nmap) {
    TirPtrMap map = {0};
    for (int i = 0; i < nmap; i++)
        tir_ptrmap_put(&map, map_from[i], map_to[i]);
    TirOp *n = clone_rec(b, op, &map);
    tir_ptrmap_free(&map);
    return n;
}

/* ---- walking and numbering ---- */

bool tir_walk_block(TirBlock *blk, TirWalkFn fn, void *ud) {
    for (TirOp *op = blk->first, *next; op; op = next) {
        next = op->next; /* fn may detach or erase op */
        if (!fn(op, ud))
            return false;
        for (int r = 0; r < op->nregion; r++)
            if (!tir_walk_block(op->region[r], fn, ud))
                return false;
    }
    return true;
}

bool tir_walk_func(TirFunc *f, TirWalkFn fn, void *ud) {
    return tir_walk_block(f->body, fn, ud);
}

typedef struct {
    int code;
    bool found;
} Holds;

static bool holds_op(TirOp *op, void *ud) {
    Holds *h = ud;
    h->found = op->code == h->code;
    return !h->found;
}

bool tir_op_holds(TirOp *op, int code) {
    Holds h = {code, false};
    for (int r = 0; r < op->nregion && !h.found; r++)
        tir_walk_block(op->region[r], holds_op, &h);
    return h.found;
}

static void renumber_block(TirFunc *f, TirBlock *blk) {
    for (int i = 0; i < blk->nargs; i++)
        blk->args[i]->id = f->next_id++;
    for (TirOp *op = blk->first; op; op = op->next) {
        for (int i = 0; i < op->nres; i++)
            op->res[i]->id = f->next_id++;
        for (int r = 0; r < op->nregion; r++)
            renumber_block(f, op->region[r]);
    }
}

void tir_func_renumber(TirFunc *f) {
    f->next_id = 0;
    renumber_block(f, f->body);
}
