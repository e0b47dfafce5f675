/* Tile IR -> LLVM IR: the kernel, structured control flow, and the dispatch of each op to
 * its lowering (lower_*.c).  The value table is lower_values.c, the LLVM helpers
 * lower_llvm.c, the thread coordinates lower_threadmap.c.
 * The one recursion between files: a for/if body is lowered by lower_block here, which
 * dispatches its ops back through tb_lower_op, and a chain (lower_chain.c) lowers its
 * members chunk by chunk through tb_lower_op too. */
#include "tb_internal.h"

#include <llvm/Config/llvm-config.h> /* LLVM_VERSION_MAJOR */
#include <stdlib.h>
#include <string.h>

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
/* --report's per-program counts: analysis_op_work's rule, each op once (a chain's later
 * chunks are counted with its first). */
static void count_work(TbLower *L, TirOp *op) {
    if (L->chain_lo)
        return;
    double flops = 0, bytes = 0;
    analysis_op_work(op, &flops, &bytes);
    L->flops += (int64_t)flops;
    L->global_bytes += (int64_t)bytes;
}

void tb_lower_op(TbLower *L, TirOp *op) {
    static const char *const ctaid[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
                                         "llvm.nvvm.read.ptx.sreg.ctaid.z"};
    static const char *const nctaid[3] = {"llvm.nvvm.read.ptx.sreg.nctaid.x", "llvm.nvvm.read.ptx.sreg.nctaid.y",
                                          "llvm.nvvm.read.ptx.sreg.nctaid.z"};
    count_work(L, op);
    if (op->code == TIR_OP_CAST && tb_cast_fused(L, op))
        return;
    switch ((TirOpcode)op->code) {
    case TIR_OP_CONSTANT: tb_lower_constant(L, op); return;
    case TIR_OP_ARANGE: tb_lower_arange(L, op); return;
    case TIR_OP_PROGRAM_ID: tb_lower_sreg(L, op, ctaid); return;
    case TIR_OP_NUM_PROGRAMS: tb_lower_sreg(L, op, nctaid); return;
    case TIR_OP_SPLAT: tb_lower_splat(L, op); return;
    case TIR_OP_BROADCAST: tb_lower_broadcast(L, op); return;
    case TIR_OP_EXPAND_DIMS: tb_lower_expand_dims(L, op); return;
    case TIR_OP_CONVERT_LAYOUT: tb_lower_convert_layout(L, op); return;
    case TIR_OP_HINT_MULTIPLE_OF:
    case TIR_OP_HINT_MAX_CONTIGUOUS: tb_lower_alias(L, op); return;
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

#if LLVM_VERSION_MAJOR < 21
/* Before LLVM 21 the NVPTX target reads launch bounds from !nvvm.annotations only, not
 * from the nvvm.maxntid / nvvm.minctasm attributes: without this their PTX had neither
 * .maxntid nor .minnctapersm, so ptxas planned for 1024 threads and the register budget
 * (tb_ptxas's capped compiles, which rewrite .minnctapersm) never applied. */
static void add_nvvm_annotation(TbLower *L, LLVMValueRef fn, const char *k, int v) {
    LLVMMetadataRef ops[3] = {
        LLVMValueAsMetadata(fn),
        LLVMMDStringInContext2(L->c, k, strlen(k)),
        LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(L->c), (unsigned long long)v, 0)),
    };
    LLVMAddNamedMetadataOperand(L->mod, "nvvm.annotations",
                                LLVMMetadataAsValue(L->c, LLVMMDNodeInContext2(L->c, ops, 3)));
}
#endif

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
    tb_count_uses(L, kernel->body, L->uses);
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
#if LLVM_VERSION_MAJOR < 21
    add_nvvm_annotation(L, L->fn, "maxntidx", L->threads);
    add_nvvm_annotation(L, L->fn, "minctasm", 1);
#endif
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
    L->tid = tb_sreg(L, L->eb, "llvm.nvvm.read.ptx.sreg.tid.x");
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
