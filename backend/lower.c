/* Tile IR -> LLVM IR: the kernel, value bookkeeping, structured control flow, and the
 * dispatch to the per-area lowerings (lower_elem.c, lower_mem.c, lower_reduce.c). */
#include "tb_internal.h"

#include <stdlib.h>
#include <string.h>

void tb_error(TbLower *L, const TirOp *op, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (op && op->loc != TIR_NOLOC && L->opt && L->opt->diag_at)
        L->opt->diag_at(L->opt->diag_at_ud, op->loc, msg);
    else if (op && op->loc != TIR_NOLOC)
        tb_diag(L->diag, L->ud, "%s: error: %s (op '%s' at offset %u)", L->f->name, msg, tir_op_info[op->code].name,
                op->loc);
    else if (op)
        tb_diag(L->diag, L->ud, "%s: error: %s (op '%s')", L->f->name, msg, tir_op_info[op->code].name);
    else
        tb_diag(L->diag, L->ud, "%s: error: %s", L->f->name, msg);
    L->errors++;
}

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
static void count_uses(TbLower *L, TirBlock *blk, int *count) {
    for (TirOp *op = blk->first; op; op = op->next) {
        for (int i = 0; i < op->nopnd; i++) {
            const TirValue *v = op->opnd[i];
            if (!v || v->id < 0 || v->id >= L->nvals)
                continue;
            count[v->id]++;
            L->sole_user[v->id] = op;
        }
        for (int r = 0; r < op->nregion; r++)
            count_uses(L, op->region[r], count);
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

LLVMValueRef tb_i32(TbLower *L, int64_t v) {
    return LLVMConstInt(L->i32, (unsigned long long)v, 1);
}

LLVMTypeRef tb_scalar_type(TbLower *L, TirScalar s) {
    switch (s) {
    case TIR_I1: return L->i1;
    case TIR_I8:
    case TIR_U8:
    case TIR_F8E4M3:
    case TIR_F8E5M2: return L->i8;
    case TIR_I16:
    case TIR_U16: return L->i16;
    case TIR_I32:
    case TIR_U32: return L->i32;
    case TIR_I64:
    case TIR_U64: return L->i64;
    case TIR_F16: return L->f16;
    case TIR_BF16: return L->bf16;
    case TIR_F32: return L->f32;
    case TIR_F64: return L->f64;
    default: return L->i32;
    }
}

LLVMTypeRef tb_mem_type(TbLower *L, TirScalar s) {
    return s == TIR_I1 ? L->i8 : tb_scalar_type(L, s);
}

LLVMTypeRef tb_elem_type(TbLower *L, TirType t) {
    return t.ptr ? L->gptr : tb_scalar_type(L, (TirScalar)t.elem);
}

LLVMValueRef tb_call_intr(TbLower *L, const char *name, LLVMTypeRef *ovl, int novl, LLVMValueRef *args, int nargs) {
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) {
        tb_error(L, NULL, "internal: LLVM has no intrinsic %s", name);
        return LLVMGetUndef(L->i32);
    }
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->mod, id, ovl, (size_t)novl);
    LLVMTypeRef fty = LLVMIntrinsicGetType(L->c, id, ovl, (size_t)novl);
    return LLVMBuildCall2(L->b, fty, fn, args, (unsigned)nargs, "");
}

LLVMValueRef tb_asm(TbLower *L, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, int nargs,
                    bool side_effect) {
    LLVMTypeRef at[64];
    if (nargs > 64) {
        tb_error(L, NULL, "internal: inline PTX with %d operands (at most 64)", nargs);
        return LLVMGetUndef(ret);
    }
    for (int i = 0; i < nargs; i++)
        at[i] = LLVMTypeOf(args[i]);
    LLVMTypeRef fty = LLVMFunctionType(ret, at, (unsigned)nargs, 0);
    LLVMValueRef a = LLVMGetInlineAsm(fty, (char *)text, strlen(text), (char *)cons, strlen(cons), side_effect, 0,
                                      LLVMInlineAsmDialectATT, 0);
    return LLVMBuildCall2(L->b, fty, a, args, (unsigned)nargs, "");
}

static LLVMValueRef sreg(TbLower *L, LLVMBuilderRef b, const char *name) {
    LLVMBuilderRef save = L->b;
    L->b = b;
    LLVMValueRef v = tb_call_intr(L, name, NULL, 0, NULL, 0);
    L->b = save;
    return v;
}

/* ---- ops that make values ---- */

static void lower_constant(TbLower *L, TirOp *op) {
    TirValue *r = op->res[0];
    TbView v;
    int n = 1;
    if (tir_type_is_tile(r->ty)) {
        if (!tb_view_lin_ok(L, r->ty, &v, op))
            return;
        n = v.total;
    }
    LLVMTypeRef t = tb_elem_type(L, r->ty);
    LLVMValueRef c;
    TirScalar s = (TirScalar)r->ty.elem;
    if (r->ty.ptr) {
        c = LLVMConstNull(L->gptr);
    } else if (tir_scalar_is_float(s)) {
        if (s == TIR_F8E4M3 || s == TIR_F8E5M2) {
            c = LLVMConstInt(
                L->i8,
                s == TIR_F8E4M3 ? tir_f32_to_f8e4m3((float)op->attr.fval) : tir_f32_to_f8e5m2((float)op->attr.fval), 0);
        } else {
            c = LLVMConstReal(t, op->attr.fval);
        }
    } else {
        c = LLVMConstInt(t, (unsigned long long)op->attr.ival, 0);
    }
    LLVMValueRef *e = tb_elems(L, n);
    for (int i = 0; i < n; i++)
        e[i] = c;
    tb_set(L, r, n, e);
}

static void lower_arange(TbLower *L, TirOp *op) {
    TirValue *r = op->res[0];
    TbView v;
    if (!tb_view_lin_ok(L, r->ty, &v, op))
        return;
    if (v.mma) {
        /* from the map: the thread's part joined to each register's (added where no bit
         * of the two meets, which makes the affine form; else XORed) */
        LLVMValueRef base = tb_lin_thread_offset(L, v.lin);
        int32_t tbits = tb_lin_thread_bits(v.lin);
        bool affine = true;
        LLVMValueRef *e = tb_elems(L, v.total);
        int64_t *ao = tir_alloc(L->m->arena, (size_t)v.total * sizeof *ao);
        for (int i = 0; i < v.total; i++) {
            int32_t c = tb_lin_offset(v.lin, i, 0, 0);
            affine = affine && !(c & tbits);
            ao[i] = op->attr.i[0] + c;
            LLVMValueRef x = tb_lin_offset_plus(L, base, tbits, c);
            e[i] = op->attr.i[0] ? LLVMBuildAdd(L->b, x, tb_i32(L, op->attr.i[0]), "") : x;
        }
        if (affine)
            tb_set_affine(L, r, v.total, e, base, ao);
        else
            tb_set(L, r, v.total, e);
        return;
    }
    LLVMValueRef base = tb_view_base(L, &v, 0);
    LLVMValueRef *e = tb_elems(L, v.total);
    int64_t *ao = tir_alloc(L->m->arena, (size_t)v.total * sizeof *ao);
    for (int i = 0; i < v.total; i++) {
        int32_t j[TIR_MAXRANK];
        tb_view_multi(&v, i, j);
        ao[i] = op->attr.i[0] + tb_view_offset(&v, 0, j[0]);
        e[i] = ao[i] ? LLVMBuildAdd(L->b, base, tb_i32(L, ao[i]), "") : base;
    }
    tb_set_affine(L, r, v.total, e, base, ao);
}

static void lower_splat(TbLower *L, TirOp *op) {
    TbVal *x = tb_val(L, op->opnd[0]);
    TbView v;
    if (!x || !tb_view_lin_ok(L, op->res[0]->ty, &v, op))
        return;
    LLVMValueRef *e = tb_elems(L, v.total);
    for (int i = 0; i < v.total; i++)
        e[i] = x->e[0];
    tb_set(L, op->res[0], v.total, e);
}

static void lower_sreg(TbLower *L, TirOp *op, const char *const names[3]) {
    int axis = (int)op->attr.i[0];
    if (axis < 0 || axis > 2) {
        tb_error(L, op, "axis %d out of range (0..2)", axis);
        return;
    }
    LLVMValueRef *e = tb_elems(L, 1);
    static const char *const again[3] = {"mov.u32 $0, %ctaid.x;", "mov.u32 $0, %ctaid.y;", "mov.u32 $0, %ctaid.z;"};
    if (L->after_dot_loop && L->opt && (L->opt->lowering & 2) && op->code == TIR_OP_PROGRAM_ID)
        /* lowering 2: a program id after a dot loop (the remat pass's copies of the scalars
         * the epilogue needs) read again, opaque to LLVM, which would merge it with the
         * entry's read and keep what it feeds live through the loop */
        e[0] = tb_asm(L, L->i32, again[axis], "=r", NULL, 0, true);
    else
        e[0] = sreg(L, L->b, names[axis]);
    tb_set(L, op->res[0], 1, e);
}

/* Identity ops: hints; reshape/trans where the layouts make them free are not done yet. */
static void lower_alias(TbLower *L, TirOp *op) {
    TbVal *x = tb_val(L, op->opnd[0]);
    if (x)
        tb_set(L, op->res[0], x->n, x->e);
}

/* ---- structured control flow ---- */

static void lower_block(TbLower *L, TirBlock *blk);

/* The flattened LLVM values of a list of IR values (for phis). */
static int flat_count(TbLower *L, TirValue *const *vs, int n) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        TbVal *x = tb_val(L, vs[i]);
        k += x ? x->n : 0;
    }
    return k;
}

static TirOp *block_terminator(TirBlock *blk) {
    return blk->last && blk->last->code == TIR_OP_YIELD ? blk->last : NULL;
}

/* After a loop of the kernel's body that holds a dot: the thread id read again, and the
 * entry builder moved to this point, so that the code after the loop builds its
 * thread-dependent values (the remat pass's copies: the epilogue's rows, columns, masks)
 * from here and they are not kept live through the loop.  A plain second read of %tid.x
 * is not enough: ptxas hoisted it and the values made from it above the loop again
 * (matmul 256x128x32 on 8 warps, div16: 4 bytes of spills), so the id comes from a
 * shuffle of the entry's id from the thread's own lane (the same value; every lane is
 * here, after a loop of the body), which ptxas does not move; the entry's id alone stays
 * live.  Program ids are not read again: ptxas merges every read of %ctaid into one
 * (passes/remat.c keeps scalars).  The exit block dominates everything after the loop in
 * the body, so the values built here do. */
static void fresh_ids(TbLower *L) {
    LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(L->c, L->fn, "after.loop");
    LLVMValueRef tid = L->tid;
    L->after_dot_loop = true;
    if (L->opt && (L->opt->lowering & 1))
        /* tb_emit's lowerings 1 and 2: %tid.x read again inside the shuffle, so that not
         * even the entry's id need live through the loop (ptxas may still place the read
         * above it: on some variants this spills where lowering 0 does not, on others the
         * other way round) */
        L->tid = tb_asm(L, L->i32,
                        "{ .reg .u32 ln, t; mov.u32 ln, %laneid; mov.u32 t, %tid.x; "
                        "shfl.sync.idx.b32 $0, t, ln, 31, -1; }",
                        "=r", NULL, 0, true);
    else
        L->tid = tb_asm(L, L->i32, "{ .reg .u32 ln; mov.u32 ln, %laneid; shfl.sync.idx.b32 $0, $1, ln, 31, -1; }",
                        "=r,r", &tid, 1, true);
    L->lane = LLVMBuildAnd(L->b, L->tid, tb_i32(L, 31), "lane");
    L->warp = LLVMBuildLShr(L->b, L->tid, tb_i32(L, 5), "warp");
    bool params_again = L->opt && (L->opt->lowering & 2);
    for (int i = 0; params_again && i < L->f->body->nargs; i++) {
        /* lowering 2: the integer parameters too, through inline PTX that LLVM does not
         * look through, so that what the remat pass copied after the loop from them
         * (cdiv(M, BM) in the GROUP swizzle) is made here and not merged with the
         * values made before the loop; ptxas reads the parameter from the constant bank */
        TirValue *a = L->f->body->args[i];
        if (tir_type_is_tile(a->ty) || a->ty.ptr || (a->ty.elem != TIR_I32 && a->ty.elem != TIR_I64))
            continue;
        TbVal *x = tb_val(L, a);
        if (!x || x->n != 1)
            continue;
        bool wide = a->ty.elem == TIR_I64;
        LLVMValueRef *e = tb_elems(L, 1);
        e[0] = tb_asm(L, wide ? L->i64 : L->i32, wide ? "mov.b64 $0, $1;" : "mov.b32 $0, $1;", wide ? "=l,l" : "=r,r",
                      &x->e[0], 1, true);
        tb_set(L, a, 1, e);
    }
    LLVMValueRef br = LLVMBuildBr(L->b, after);
    LLVMPositionBuilderBefore(L->eb, br);
    LLVMPositionBuilderAtEnd(L->b, after);
}

static void lower_for(TbLower *L, TirOp *op) {
    TbVal *lb = tb_val(L, op->opnd[0]), *ub = tb_val(L, op->opnd[1]), *st = tb_val(L, op->opnd[2]);
    if (!lb || !ub || !st)
        return;
    TirBlock *body = op->region[0];
    int ncarry = op->nopnd - 3;
    if (body->nargs != ncarry + 1 || op->nres != ncarry) {
        tb_error(L, op, "malformed for: %d carried values, %d block arguments", ncarry, body->nargs);
        return;
    }
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
    LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.head");
    LLVMBasicBlockRef bodyb = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.body");
    LLVMBasicBlockRef exitb = LLVMAppendBasicBlockInContext(L->c, L->fn, "for.exit");
    LLVMBuildBr(L->b, head);
    LLVMPositionBuilderAtEnd(L->b, head);
    /* loop variable and one phi per carried element */
    LLVMValueRef iv = LLVMBuildPhi(L->b, LLVMTypeOf(lb->e[0]), "iv");
    LLVMValueRef lbv = lb->e[0];
    LLVMAddIncoming(iv, &lbv, &pre, 1);
    LLVMValueRef *ive = tb_elems(L, 1);
    ive[0] = iv;
    tb_set(L, body->args[0], 1, ive);
    for (int c = 0; c < ncarry; c++) {
        TbVal *init = tb_val(L, op->opnd[3 + c]);
        if (!init)
            return;
        LLVMValueRef *e = tb_elems(L, init->n);
        for (int i = 0; i < init->n; i++) {
            e[i] = LLVMBuildPhi(L->b, LLVMTypeOf(init->e[i]), "");
            LLVMAddIncoming(e[i], &init->e[i], &pre, 1);
        }
        tb_set(L, body->args[1 + c], init->n, e);
    }
    bool signed_iv = tir_scalar_is_signed((TirScalar)op->opnd[0]->ty.elem);
    LLVMValueRef cond = LLVMBuildICmp(L->b, signed_iv ? LLVMIntSLT : LLVMIntULT, iv, ub->e[0], "");
    LLVMBuildCondBr(L->b, cond, bodyb, exitb);
    LLVMPositionBuilderAtEnd(L->b, bodyb);
    lower_block(L, body);
    TirOp *y = block_terminator(body);
    if (!y || y->nopnd != ncarry) {
        tb_error(L, op, "for body must end in yield of %d values", ncarry);
        return;
    }
    LLVMValueRef next = LLVMBuildAdd(L->b, iv, st->e[0], "iv.next");
    LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
    LLVMBuildBr(L->b, head);
    LLVMAddIncoming(iv, &next, &latch, 1);
    for (int c = 0; c < ncarry; c++) {
        TbVal *phi = tb_val(L, body->args[1 + c]), *yv = tb_val(L, y->opnd[c]);
        if (!phi || !yv || yv->n != phi->n) {
            /* a missing value is the trace of an error already reported */
            if (!L->errors)
                tb_error(L, op, "internal: yielded value %d does not match the carried value", c);
            return;
        }
        for (int i = 0; i < phi->n; i++)
            LLVMAddIncoming(phi->e[i], &yv->e[i], &latch, 1);
        tb_set(L, op->res[c], phi->n, phi->e);
    }
    LLVMPositionBuilderAtEnd(L->b, exitb);
    /* the loops passes/remat.c copies after (the same test) */
    if (op->parent == L->f->body && tir_op_holds(op, TIR_OP_DOT))
        fresh_ids(L);
    (void)flat_count;
}

static void lower_if(TbLower *L, TirOp *op) {
    TbVal *c = tb_val(L, op->opnd[0]);
    if (!c)
        return;
    if (c->n != 1) {
        tb_error(L, op, "the condition of if must be a scalar");
        return;
    }
    LLVMBasicBlockRef thb = LLVMAppendBasicBlockInContext(L->c, L->fn, "if.then");
    LLVMBasicBlockRef elb = LLVMAppendBasicBlockInContext(L->c, L->fn, "if.else");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(L->c, L->fn, "if.end");
    LLVMBuildCondBr(L->b, c->e[0], thb, elb);
    LLVMBasicBlockRef from[2];
    TirOp *ys[2] = {NULL, NULL};
    for (int r = 0; r < 2; r++) {
        LLVMPositionBuilderAtEnd(L->b, r ? elb : thb);
        if (r < op->nregion)
            lower_block(L, op->region[r]);
        ys[r] = r < op->nregion ? block_terminator(op->region[r]) : NULL;
        from[r] = LLVMGetInsertBlock(L->b);
        LLVMBuildBr(L->b, join);
    }
    LLVMPositionBuilderAtEnd(L->b, join);
    for (int k = 0; k < op->nres; k++) {
        TbVal *a = ys[0] && k < ys[0]->nopnd ? tb_val(L, ys[0]->opnd[k]) : NULL;
        TbVal *b = ys[1] && k < ys[1]->nopnd ? tb_val(L, ys[1]->opnd[k]) : NULL;
        if (!a || !b || a->n != b->n) {
            tb_error(L, op, "if branches must yield matching values");
            return;
        }
        LLVMValueRef *e = tb_elems(L, a->n);
        for (int i = 0; i < a->n; i++) {
            e[i] = LLVMBuildPhi(L->b, LLVMTypeOf(a->e[i]), "");
            LLVMValueRef in[2] = {a->e[i], b->e[i]};
            LLVMAddIncoming(e[i], in, from, 2);
        }
        tb_set(L, op->res[k], a->n, e);
    }
}

static void lower_return(TbLower *L, TirOp *op) {
    LLVMBuildBr(L->b, L->exit_bb);
    /* What follows in this block is dead; give it a block of its own. */
    LLVMBasicBlockRef dead = LLVMAppendBasicBlockInContext(L->c, L->fn, "after.return");
    LLVMPositionBuilderAtEnd(L->b, dead);
}

/* Global bytes one program moves: loads, stores, atomics (read and write), tload/tstore. */
static void count_bytes(TbLower *L, TirOp *op) {
    TirType t;
    int factor = 1;
    switch (op->code) {
    case TIR_OP_LOAD:
    case TIR_OP_TLOAD: t = op->res[0]->ty; break;
    case TIR_OP_STORE:
        if (op->nopnd < 2)
            return;
        t = op->opnd[1]->ty;
        break;
    case TIR_OP_TSTORE: t = op->opnd[op->nopnd - 1]->ty; break;
    case TIR_OP_ATOMIC_ADD:
    case TIR_OP_ATOMIC_MAX:
    case TIR_OP_ATOMIC_MIN:
    case TIR_OP_ATOMIC_XCHG:
    case TIR_OP_ATOMIC_CAS:
        t = op->res[0]->ty;
        factor = 2;
        break;
    default: return;
    }
    int eb = t.ptr ? 8 : tir_scalar_bytes((TirScalar)t.elem);
    L->global_bytes += tir_type_numel(t) * eb * factor;
}

static void count_flops(TbLower *L, TirOp *op) {
    if (L->chain_lo)
        return; /* a chain's later chunks: counted with its first */
    count_bytes(L, op);
    unsigned t = tir_op_info[op->code].traits;
    if (op->nres < 1 || !(t & (TIR_T_ELEMENTWISE | TIR_T_REDUCTION)))
        return;
    TirType ty = (t & TIR_T_REDUCTION) ? op->opnd[0]->ty : op->res[0]->ty;
    if (op->code == TIR_OP_CMP)
        ty = op->opnd[0]->ty;
    if (ty.ptr || !tir_scalar_is_float((TirScalar)ty.elem) || op->code == TIR_OP_CAST)
        return;
    L->flops += tir_type_numel(ty) * (op->code == TIR_OP_FMA ? 2 : 1);
}

void tb_lower_op(TbLower *L, TirOp *op) {
    static const char *const ctaid[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
                                         "llvm.nvvm.read.ptx.sreg.ctaid.z"};
    static const char *const nctaid[3] = {"llvm.nvvm.read.ptx.sreg.nctaid.x", "llvm.nvvm.read.ptx.sreg.nctaid.y",
                                          "llvm.nvvm.read.ptx.sreg.nctaid.z"};
    count_flops(L, op);
    if (op->code == TIR_OP_CAST && tb_cast_fused(L, op))
        return;
    switch ((TirOpcode)op->code) {
    case TIR_OP_CONSTANT: lower_constant(L, op); return;
    case TIR_OP_ARANGE: lower_arange(L, op); return;
    case TIR_OP_PROGRAM_ID: lower_sreg(L, op, ctaid); return;
    case TIR_OP_NUM_PROGRAMS: lower_sreg(L, op, nctaid); return;
    case TIR_OP_SPLAT: lower_splat(L, op); return;
    case TIR_OP_BROADCAST: tb_lower_broadcast(L, op); return;
    case TIR_OP_EXPAND_DIMS: tb_lower_expand_dims(L, op); return;
    case TIR_OP_CONVERT_LAYOUT: tb_lower_convert_layout(L, op); return;
    case TIR_OP_HINT_MULTIPLE_OF:
    case TIR_OP_HINT_MAX_CONTIGUOUS: lower_alias(L, op); return;
    case TIR_OP_REDUCE_SUM:
    case TIR_OP_REDUCE_MAX:
    case TIR_OP_REDUCE_MIN:
    case TIR_OP_ARGMAX:
    case TIR_OP_ARGMIN: tb_lower_reduce(L, op); return;
    case TIR_OP_LOAD: tb_lower_load(L, op); return;
    case TIR_OP_STORE: tb_lower_store(L, op); return;
    case TIR_OP_ATOMIC_ADD:
    case TIR_OP_ATOMIC_MAX:
    case TIR_OP_ATOMIC_MIN:
    case TIR_OP_ATOMIC_XCHG:
    case TIR_OP_ATOMIC_CAS: tb_lower_atomic(L, op); return;
    case TIR_OP_FOR: lower_for(L, op); return;
    case TIR_OP_IF: lower_if(L, op); return;
    case TIR_OP_YIELD: return; /* read by the parent */
    case TIR_OP_RETURN: lower_return(L, op); return;
    case TIR_OP_ASSERT:
        if (!L->debug)
            return; /* asserts are checked in --debug builds only */
        tb_lower_assert(L, op);
        return;
    case TIR_OP_BARRIER: tb_barrier(L); return;
    case TIR_OP_RESHAPE:
    case TIR_OP_TRANS: tb_lower_permute(L, op); return;
    case TIR_OP_CUMSUM: tb_lower_cumsum(L, op); return;
    case TIR_OP_TENSOR_DESC: tb_lower_tensor_desc(L, op); return;
    case TIR_OP_TLOAD: tb_lower_tload(L, op); return;
    case TIR_OP_TSTORE: tb_lower_tstore(L, op); return;
    case TIR_OP_PRINT: tb_lower_print(L, op); return;
    case TIR_OP_DOT: tb_lower_dot(L, op); return;
    case TIR_OP_SMEM_ALLOC: tb_lower_smem_alloc(L, op); return;
    case TIR_OP_SMEM_STORE: tb_lower_smem_store(L, op); return;
    case TIR_OP_SMEM_LOAD: tb_lower_smem_load(L, op); return;
    case TIR_OP_ASYNC_COPY: tb_lower_async_copy(L, op); return;
    case TIR_OP_ASYNC_COMMIT: tb_lower_async_commit(L, op); return;
    case TIR_OP_ASYNC_WAIT: tb_lower_async_wait(L, op); return;
    case TIR_OP_CALL: tb_error(L, op, "calls must be inlined before the backend (run the 'inline' pass)"); return;
    case TIR_OP_FUNC_RETURN:
        tb_error(L, op, "'%s' is not supported by the GPU backend yet", tir_op_info[op->code].name);
        return;
    default:
        if (tir_op_info[op->code].traits & TIR_T_ELEMENTWISE) {
            tb_lower_elementwise(L, op);
            return;
        }
        tb_error(L, op, "'%s' is not supported by the GPU backend yet", tir_op_info[op->code].name);
        return;
    }
}

static void lower_block(TbLower *L, TirBlock *blk) {
    TbChain *chains = tb_find_chains(L, blk);
    for (TirOp *op = blk->first; op && L->errors < 20; op = op->next) {
        if (op->nres == 1 && L->deferred[op->res[0]->id])
            continue; /* with its store */
        if (chains && tb_lower_chain(L, chains, op))
            continue;
        /* operands must have been lowered (an earlier error leaves holes) */
        bool ok = true;
        for (int i = 0; i < op->nopnd; i++)
            if (!tb_val(L, op->opnd[i]))
                ok = false;
        if (!ok) {
            if (!L->errors)
                tb_error(L, op, "internal: an operand has no lowered value");
            return;
        }
        tb_lower_op(L, op);
    }
}

static void init_types(TbLower *L) {
    LLVMContextRef c = L->c;
    L->i1 = LLVMInt1TypeInContext(c);
    L->i8 = LLVMInt8TypeInContext(c);
    L->i16 = LLVMInt16TypeInContext(c);
    L->i32 = LLVMInt32TypeInContext(c);
    L->i64 = LLVMInt64TypeInContext(c);
    L->f16 = LLVMHalfTypeInContext(c);
    L->bf16 = LLVMBFloatTypeInContext(c);
    L->f32 = LLVMFloatTypeInContext(c);
    L->f64 = LLVMDoubleTypeInContext(c);
    L->gptr = LLVMPointerTypeInContext(c, TB_GLOBAL_AS);
    L->sptr = LLVMPointerTypeInContext(c, TB_SHARED_AS);
    L->voidt = LLVMVoidTypeInContext(c);
}

static void add_str_attr(TbLower *L, LLVMValueRef fn, const char *k, const char *v) {
    LLVMAttributeRef a = LLVMCreateStringAttribute(L->c, k, (unsigned)strlen(k), v, (unsigned)strlen(v));
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, a);
}

/* The scratch buffer is made once its size is known: every use reaches it through
 * L->scratch, a placeholder global replaced here. */
/* tilec_dynamic_smem: the dynamic shared memory a launch must pass (0 when the scratch is
 * static or absent), for a runtime that has only the cubin (JIT compiles).  Every module
 * defines it, so looking it up never fails. */
static void define_dynamic_smem(TbLower *L, int bytes) {
    LLVMValueRef sz = LLVMAddGlobalInAddressSpace(L->mod, L->i32, "tilec_dynamic_smem", 4);
    LLVMSetInitializer(sz, tb_i32(L, bytes));
    LLVMSetGlobalConstant(sz, 1);
    LLVMSetAlignment(sz, 4);
}

static void finish_scratch(TbLower *L) {
    if (!L->scratch) {
        define_dynamic_smem(L, 0);
        return;
    }
    /* Past 48 KiB, static shared memory is not allowed: the buffer is the dynamic shared
     * memory the launch provides (the runtime passes the variant's smem bytes and raises
     * the function's limit). */
    bool dynamic = L->scratch_bytes > TB_STATIC_SMEM;
    LLVMTypeRef at = LLVMArrayType2(L->i8, dynamic ? 0 : (uint64_t)L->scratch_bytes);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(L->mod, at, "tilec_scratch", TB_SHARED_AS);
    if (dynamic) {
        LLVMSetLinkage(g, LLVMExternalLinkage);
    } else {
        LLVMSetLinkage(g, LLVMInternalLinkage);
        LLVMSetInitializer(g, LLVMGetUndef(at));
    }
    LLVMSetAlignment(g, 16);
    define_dynamic_smem(L, dynamic ? L->scratch_bytes : 0);
    LLVMReplaceAllUsesWith(L->scratch, g);
    LLVMDeleteGlobal(L->scratch);
    L->scratch = g;
}

LLVMModuleRef tb_lower_kernel(LLVMContextRef c, TirModule *m, TirFunc *kernel, const char *arch, int cc,
                              const TbOptions *opt, TbLowerResult *res, TirDiagFn diag, void *ud) {
    TbLower Ls = {0}, *L = &Ls;
    L->c = c;
    L->m = m;
    L->f = kernel;
    L->cc = cc;
    L->opt = opt;
    L->debug = opt && opt->debug;
    L->diag = diag;
    L->ud = ud;
    if (!kernel || kernel->kind != TIR_FUNC_KERNEL) {
        tb_diag(diag, ud, "error: the backend lowers kernels only");
        return NULL;
    }
    int warps = kernel->warps > 0 ? kernel->warps : 4;
    if (warps > 32 || (warps & (warps - 1))) {
        tb_diag(diag, ud, "%s: error: warps=%d must be a power of two up to 32", kernel->name, warps);
        return NULL;
    }
    L->threads = warps * 32;
    /* facts the layout pass also used: masks constant over groups share one compare */
    init_types(L);
    L->mod = LLVMModuleCreateWithNameInContext(kernel->name, c);
    L->nvals = kernel->next_id;
    L->vals = tir_alloc(m->arena, (size_t)(L->nvals > 0 ? L->nvals : 1) * sizeof *L->vals);
    L->sole_user = tir_alloc(m->arena, (size_t)(L->nvals > 0 ? L->nvals : 1) * sizeof *L->sole_user);
    L->uses = tir_alloc(m->arena, (size_t)(L->nvals > 0 ? L->nvals : 1) * sizeof *L->uses);
    L->deferred = tir_alloc(m->arena, (size_t)(L->nvals > 0 ? L->nvals : 1));
    L->ldm = tir_alloc(m->arena, (size_t)(L->nvals > 0 ? L->nvals : 1) * sizeof *L->ldm);
    L->ring_stage = tir_alloc(m->arena, (size_t)(L->nvals > 0 ? L->nvals : 1) * sizeof *L->ring_stage);
    L->ring_seen = tir_alloc(m->arena, (size_t)(L->nvals > 0 ? L->nvals : 1));
    count_uses(L, kernel->body, L->uses);
    for (int i = 0; i < L->nvals; i++)
        if (L->uses[i] != 1)
            L->sole_user[i] = NULL;

    TirBlock *body = kernel->body;
    LLVMTypeRef *pt = tir_alloc(m->arena, (size_t)(body->nargs + 1) * sizeof *pt);
    for (int i = 0; i < body->nargs; i++) {
        TirType t = body->args[i]->ty;
        if (tir_type_is_tile(t) || t.kind != TIR_K_VALUE) {
            tb_diag(diag, ud,
                    "%s: error: parameter %d: only scalars and pointers can be kernel "
                    "parameters in the GPU backend",
                    kernel->name, i);
            LLVMDisposeModule(L->mod);
            return NULL;
        }
        pt[i] = tb_elem_type(L, t);
    }
    LLVMTypeRef fty = LLVMFunctionType(L->voidt, pt, (unsigned)body->nargs, 0);
    L->fn = LLVMAddFunction(L->mod, kernel->name, fty);
    LLVMSetFunctionCallConv(L->fn, 71 /* PTX_Kernel */);
    char nt[32];
    snprintf(nt, sizeof nt, "%d", L->threads);
    add_str_attr(L, L->fn, "nvvm.maxntid", nt);
    /* one resident program per SM is enough: lets ptxas use every register the block
     * size allows instead of spilling to fit a second one */
    add_str_attr(L, L->fn, "nvvm.minctasm", "1");
    for (int i = 0; i < body->nargs; i++) {
        LLVMValueRef p = LLVMGetParam(L->fn, (unsigned)i);
        const char *nm = kernel->params && kernel->params[i].name ? kernel->params[i].name : "";
        LLVMSetValueName2(p, nm, strlen(nm));
        LLVMValueRef *e = tb_elems(L, 1);
        e[0] = p;
        tb_set(L, body->args[i], 1, e);
        int div = kernel->params ? kernel->params[i].divisibility : 0;
        if (body->args[i]->ty.ptr && div > 1) {
            unsigned k = LLVMGetEnumAttributeKindForName("align", 5);
            LLVMAddAttributeAtIndex(L->fn, (unsigned)i + 1, LLVMCreateEnumAttribute(c, k, (uint64_t)div));
        }
    }
    L->b = LLVMCreateBuilderInContext(c);
    L->eb = LLVMCreateBuilderInContext(c);
    L->ab = LLVMCreateBuilderInContext(c);
    L->entry = LLVMAppendBasicBlockInContext(c, L->fn, "entry");
    LLVMBasicBlockRef start = LLVMAppendBasicBlockInContext(c, L->fn, "start");
    L->exit_bb = LLVMAppendBasicBlockInContext(c, L->fn, "exit");
    LLVMPositionBuilderAtEnd(L->eb, L->entry);
    L->tid = sreg(L, L->eb, "llvm.nvvm.read.ptx.sreg.tid.x");
    L->lane = LLVMBuildAnd(L->eb, L->tid, tb_i32(L, 31), "lane");
    L->warp = LLVMBuildLShr(L->eb, L->tid, tb_i32(L, 5), "warp");
    LLVMPositionBuilderBefore(L->ab, LLVMGetFirstInstruction(L->entry));
    LLVMPositionBuilderAtEnd(L->b, start);
    lower_block(L, body);
    if (!LLVMGetBasicBlockTerminator(LLVMGetInsertBlock(L->b)))
        LLVMBuildBr(L->b, L->exit_bb);
    LLVMPositionBuilderAtEnd(L->eb, L->entry);
    LLVMBuildBr(L->eb, start);
    LLVMPositionBuilderAtEnd(L->b, L->exit_bb);
    LLVMBuildRetVoid(L->b);
    finish_scratch(L);
    LLVMDisposeBuilder(L->b);
    LLVMDisposeBuilder(L->eb);
    LLVMDisposeBuilder(L->ab);
    if (L->errors) {
        LLVMDisposeModule(L->mod);
        return NULL;
    }
    if (res) {
        res->flops = L->flops;
        res->global_bytes = L->global_bytes;
        res->smem_bytes = L->scratch_bytes;
        res->threads = L->threads;
    }
    return L->mod;
}
