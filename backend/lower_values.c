/* The value table: the LLVM values each thread holds for each IR value (TbVal: elements,
 * affine and limit forms), use counts and sole users. */
#include "tb_internal.h"

#include <string.h>

LLVMValueRef *tb_elems(TbLower *L, int n) {
    return tir_alloc(L->m->arena, (size_t)(n > 0 ? n : 1) * sizeof(LLVMValueRef));
}

static TbVal *val_slot(TbLower *L, const TirValue *v) {
    if (!v || v->id < 0 || v->id >= L->nvals)
        return NULL;
    TbVal *x = &L->vals[v->id];
    return x->e || x->lim ? x : NULL;
}

/* Compares lo[i] < lim for elements [first, first + n) of a limit-form mask, one per run
 * of equal lo[]. */
static LLVMValueRef *limit_elems(TbLower *L, const TbVal *x, int first, int n) {
    LLVMTypeRef it = LLVMTypeOf(x->lim);
    LLVMValueRef *e = tb_elems(L, n);
    for (int i = 0; i < n; i++)
        e[i] = i > 0 && x->lo[first + i] == x->lo[first + i - 1]
                   ? e[i - 1]
                   : LLVMBuildICmp(L->b, LLVMIntSGT, x->lim, LLVMConstInt(it, (unsigned long long)x->lo[first + i], 1),
                                   "");
    return e;
}

/* A chain's chunk of x (lower_chain.c); a limit form's compares are built for the chunk. */
static TbVal *chain_slice(TbLower *L, const TbVal *x) {
    TbVal *s = tir_alloc(L->m->arena, sizeof *s);
    int lo = L->chain_lo;
    s->n = L->chain_sub;
    s->e = x->lim ? limit_elems(L, x, lo, s->n) : x->e + lo;
    s->ab = x->ab;
    s->ao = x->ao ? x->ao + lo : NULL;
    return s;
}

/* A limit-form mask's elements are built where they are used, once per LLVM block:
 * compares issued at the definition would keep one predicate per element live until
 * the last use (layernorm BLOCK=16384: 128 of them, and spills). */
TbVal *tb_val(TbLower *L, const TirValue *v) {
    TbVal *x = val_slot(L, v);
    if (x && L->chain_sub && x->n == L->chain_n)
        return chain_slice(L, x);
    if (!x || !x->lim)
        return x;
    LLVMBasicBlockRef bb = LLVMGetInsertBlock(L->b);
    if (x->e && x->mat_bb == bb)
        return x;
    x->e = limit_elems(L, x, 0, x->n);
    x->mat_bb = bb;
    return x;
}

void tb_set(TbLower *L, const TirValue *v, int n, LLVMValueRef *e) {
    tb_set_affine(L, v, n, e, NULL, NULL);
}

void tb_set_affine(TbLower *L, const TirValue *v, int n, LLVMValueRef *e, LLVMValueRef ab, int64_t *ao) {
    if (v->id < 0 || v->id >= L->nvals)
        return;
    if (L->chain_sub && n == L->chain_sub && e) { /* a chunk of a chain member's elements */
        TbVal *x = &L->vals[v->id];
        if (!x->e || x->n != L->chain_n) {
            memset(x, 0, sizeof *x);
            x->n = L->chain_n;
            x->e = tb_elems(L, L->chain_n);
        }
        memcpy(x->e + L->chain_lo, e, (size_t)n * sizeof *e);
        return;
    }
    L->vals[v->id].n = n;
    L->vals[v->id].e = e;
    L->vals[v->id].ab = ao ? ab : NULL;
    L->vals[v->id].ao = ab ? ao : NULL;
    L->vals[v->id].lim = NULL;
    L->vals[v->id].lo = NULL;
}

void tb_set_limit(TbLower *L, const TirValue *v, int n, LLVMValueRef lim, int64_t *lo) {
    if (v->id < 0 || v->id >= L->nvals)
        return;
    tb_set(L, v, n, NULL);
    L->vals[v->id].lim = lim;
    L->vals[v->id].lo = lo;
    L->vals[v->id].mat_bb = NULL;
}

bool tb_lowered(TbLower *L, const TirValue *v) {
    return val_slot(L, v) != NULL;
}

TirOp *tb_sole_user(TbLower *L, const TirValue *v) {
    return v && v->id >= 0 && v->id < L->nvals ? L->sole_user[v->id] : NULL;
}

/* Uses of every value in blk and the blocks nested in it: count[id] and the last user. */
void tb_count_uses(TbLower *L, TirBlock *blk, int *count) {
    for (TirOp *op = blk->first; op; op = op->next) {
        for (int i = 0; i < op->nopnd; i++) {
            const TirValue *v = op->opnd[i];
            if (!v || v->id < 0 || v->id >= L->nvals)
                continue;
            count[v->id]++;
            L->sole_user[v->id] = op;
        }
        for (int r = 0; r < op->nregion; r++)
            tb_count_uses(L, op->region[r], count);
    }
}

bool tb_uniform(const TbVal *x) {
    for (int i = 1; i < x->n; i++)
        if (x->e[i] != x->e[0])
            return false;
    return true;
}

bool tb_affine(TbLower *L, const TbVal *x, int n, LLVMValueRef *ab, const int64_t **ao) {
    if (x->ab && x->n == n) {
        *ab = x->ab;
        *ao = x->ao;
        return true;
    }
    if (x->n != 1 && (x->n != n || !tb_uniform(x)))
        return false;
    *ab = x->e[0];
    *ao = tir_alloc(L->m->arena, (size_t)(n > 0 ? n : 1) * sizeof **ao); /* zeroed */
    return true;
}
