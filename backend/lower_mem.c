/* Global memory: loads and stores (16-byte vectors where the layout pass proved the
 * addresses contiguous and aligned: op attr i[1] = elements per vector), predicated by
 * masks with inline PTX; atomics lane by lane. */
#include "tb_internal.h"

#include <stdio.h>
#include <string.h>

static const char *cache_mod(TbLower *L, const TirOp *op) {
    static const char *const ok[] = {".ca", ".cg", ".cs", ".lu", ".cv"};
    const char *s = op->attr.s;
    if (!s || !*s) return "";
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(s, ok[i]) == 0) return ok[i];
    tb_error(L, op, "unknown cache modifier '%s'", s);
    return "";
}

/* Elements per vector access: the layout pass's proof (attr i[1]), kept only when it
 * fits the thread's run of consecutive elements along the fastest dimension. */
static int vector_width(TbLower *L, const TirOp *op, const TbView *v, int elem_bytes) {
    int w = (int)op->attr.i[1];
    if (w <= 1 || !v) return 1;
    int d0 = v->order[0];
    int spt = v->root->size_per_thread[v->rdim[d0]];
    while (w > 1 && (w * elem_bytes > 16 || v->n[d0] % w || spt % w || (w & (w - 1)))) w >>= 1;
    return w < 1 ? 1 : w;
}

static bool view_has_copies(const TbView *v) {
    const TirLayout *l = v->root;
    for (int rd = 0; rd < l->rank; rd++) {
        bool kept = false;
        for (int d = 0; d < v->rank; d++)
            if (v->rdim[d] == rd) {
                kept = true;
                int64_t span = (int64_t)l->size_per_thread[rd] * l->threads_per_warp[rd] * l->warps_per_cta[rd];
                if (span > v->shape[d]) return true;
            }
        if (!kept && l->threads_per_warp[rd] * l->warps_per_cta[rd] > 1) return true;
    }
    return false;
}

bool tb_view_has_copies(const TbView *v) { return view_has_copies(v); }

/* Register <-> memory form of one element (bools are bytes in memory). */
static LLVMValueRef to_reg(TbLower *L, LLVMValueRef x, TirType t) {
    if (!t.ptr && t.elem == TIR_I1) return LLVMBuildICmp(L->b, LLVMIntNE, x, LLVMConstNull(L->i8), "");
    return x;
}
static LLVMValueRef to_mem(TbLower *L, LLVMValueRef x, TirType t) {
    if (!t.ptr && t.elem == TIR_I1) return LLVMBuildZExt(L->b, x, L->i8, "");
    return x;
}

static LLVMTypeRef mem_elem(TbLower *L, TirType t) {
    return t.ptr ? L->gptr : tb_mem_type(L, (TirScalar)t.elem);
}
static int mem_bytes(TirType t) { return t.ptr ? 8 : tir_scalar_bytes((TirScalar)t.elem); }

/* Access of `bytes` as PTX registers: nw words of 32 bits, or one 16-bit register. */
typedef struct {
    int nw;
    LLVMTypeRef wt;
    const char *cons, *ptxt, *vec;
} Words;

static Words words_for(TbLower *L, int bytes) {
    Words w;
    if (bytes >= 4) {
        w.nw = bytes / 4;
        w.wt = L->i32;
        w.cons = "r";
        w.ptxt = ".b32";
    } else {
        w.nw = 1;
        w.wt = L->i16;
        w.cons = "h";
        w.ptxt = bytes == 2 ? ".b16" : ".b8";
    }
    w.vec = w.nw == 4 ? ".v4" : w.nw == 2 ? ".v2" : "";
    return w;
}

/* The group's words as its v elements: straight bitcasts where a word is one element,
 * else through a small vector (no vector at all for the common cases keeps the IR small). */
static void words_to_list(TbLower *L, LLVMValueRef *wv, Words w, int bytes, LLVMTypeRef et, int v, LLVMValueRef *out);
static LLVMValueRef words_to_elems(TbLower *L, LLVMValueRef *wv, Words w, int bytes, LLVMTypeRef et, int v);

static void words_to_list(TbLower *L, LLVMValueRef *wv, Words w, int bytes, LLVMTypeRef et, int v, LLVMValueRef *out) {
    bool isptr = LLVMGetTypeKind(et) == LLVMPointerTypeKind;
    if (!isptr && v == w.nw && bytes / v == (w.wt == L->i32 ? 4 : 2)) {
        for (int i = 0; i < v; i++) out[i] = LLVMBuildBitCast(L->b, wv[i], et, "");
        return;
    }
    if (!isptr && v == 1 && bytes == 1) {
        out[0] = LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, wv[0], L->i8, ""), et, "");
        return;
    }
    LLVMValueRef vec = words_to_elems(L, wv, w, bytes, et, v);
    for (int i = 0; i < v; i++) out[i] = LLVMBuildExtractElement(L->b, vec, tb_i32(L, i), "");
}

/* the group's bytes as a vector of its elements */
static LLVMValueRef words_to_elems(TbLower *L, LLVMValueRef *wv, Words w, int bytes, LLVMTypeRef et, int v) {
    LLVMValueRef packed;
    if (w.nw > 1) {
        packed = LLVMGetUndef(LLVMVectorType(w.wt, (unsigned)w.nw));
        for (int i = 0; i < w.nw; i++) packed = LLVMBuildInsertElement(L->b, packed, wv[i], tb_i32(L, i), "");
    } else {
        packed = wv[0];
        if (bytes == 1) packed = LLVMBuildTrunc(L->b, packed, L->i8, "");
    }
    LLVMTypeRef vt = LLVMVectorType(et, (unsigned)v);
    if (LLVMGetTypeKind(et) == LLVMPointerTypeKind) {
        LLVMValueRef iv = LLVMBuildBitCast(L->b, packed, LLVMVectorType(L->i64, (unsigned)v), "");
        return LLVMBuildIntToPtr(L->b, iv, vt, "");
    }
    return LLVMBuildBitCast(L->b, packed, vt, "");
}

static void elems_to_words(TbLower *L, LLVMValueRef vec, Words w, int bytes, LLVMValueRef *out) {
    LLVMTypeRef et = LLVMGetElementType(LLVMTypeOf(vec));
    if (LLVMGetTypeKind(et) == LLVMPointerTypeKind)
        vec = LLVMBuildPtrToInt(L->b, vec, LLVMVectorType(L->i64, LLVMGetVectorSize(LLVMTypeOf(vec))), "");
    if (w.nw > 1) {
        LLVMValueRef p = LLVMBuildBitCast(L->b, vec, LLVMVectorType(w.wt, (unsigned)w.nw), "");
        for (int i = 0; i < w.nw; i++) out[i] = LLVMBuildExtractElement(L->b, p, tb_i32(L, i), "");
    } else if (bytes == 1) {
        LLVMValueRef b = LLVMBuildBitCast(L->b, vec, L->i8, "");
        out[0] = LLVMBuildZExt(L->b, b, L->i16, "");
    } else {
        out[0] = LLVMBuildBitCast(L->b, vec, w.wt, "");
    }
}

/* n elements of type et from ptrs[], in groups of v (one access each), predicated by
 * mask[] (NULL: none; with v > 1 the mask is constant over a group), masked-off lanes
 * giving other[] (NULL: zero). */
/* The address operand of group g's inline PTX: `[$k+off]` from the base when the offset
 * fits PTX's 32-bit immediate, else the element's own pointer. */
static LLVMValueRef asm_addr(LLVMValueRef *ptrs, LLVMValueRef pb, const int64_t *po, int g, int64_t *imm) {
    *imm = 0;
    if (pb && po && po[g] > -((int64_t)1 << 31) && po[g] < ((int64_t)1 << 31)) {
        *imm = po[g];
        return pb;
    }
    return ptrs[g];
}

static int addr_text(char *buf, size_t cap, int arg, int64_t imm) {
    if (imm) return snprintf(buf, cap, "[$%d+%lld]", arg, (long long)imm);
    return snprintf(buf, cap, "[$%d]", arg);
}

void tb_emit_loads(TbLower *L, TirType et, int n, int v, LLVMValueRef *ptrs, LLVMValueRef pb,
                   const int64_t *po, LLVMValueRef *maskv, LLVMValueRef *otherv, const char *cache,
                   LLVMValueRef *e) {
    int eb = mem_bytes(et);
    LLVMTypeRef mt = mem_elem(L, et);
    for (int g = 0; g < n; g += v) {
        int bytes = v * eb;
        LLVMValueRef xs[16];
        if (!maskv && !*cache) {
            LLVMTypeRef vt = v > 1 ? LLVMVectorType(mt, (unsigned)v) : mt;
            LLVMValueRef vec = LLVMBuildLoad2(L->b, vt, ptrs[g], "");
            LLVMSetAlignment(vec, (unsigned)(v > 1 ? bytes : eb));
            for (int i = 0; i < v; i++) xs[i] = v > 1 ? LLVMBuildExtractElement(L->b, vec, tb_i32(L, i), "") : vec;
        } else {
            Words w = words_for(L, bytes);
            char text[512], cons[128];
            int k = 0, c = 0;
            /* zero the outputs first so masked-off lanes never read undefined registers */
            for (int i = 0; i < w.nw; i++)
                k += snprintf(text + k, sizeof text - (size_t)k, "mov%s $%d, 0;\n\t",
                              w.nw > 1 || bytes >= 4 ? ".b32" : ".b16", i);
            int ai = w.nw, pi = w.nw + 1;
            if (maskv) k += snprintf(text + k, sizeof text - (size_t)k, "@$%d ", pi);
            k += snprintf(text + k, sizeof text - (size_t)k, "ld.global%s%s%s ", cache, w.vec, w.ptxt);
            if (w.nw > 1) k += snprintf(text + k, sizeof text - (size_t)k, "{");
            for (int i = 0; i < w.nw; i++)
                k += snprintf(text + k, sizeof text - (size_t)k, i ? ", $%d" : "$%d", i);
            if (w.nw > 1) k += snprintf(text + k, sizeof text - (size_t)k, "}");
            int64_t imm;
            LLVMValueRef addr = asm_addr(ptrs, pb, po, g, &imm);
            k += snprintf(text + k, sizeof text - (size_t)k, ", ");
            k += addr_text(text + k, sizeof text - (size_t)k, ai, imm);
            snprintf(text + k, sizeof text - (size_t)k, ";");
            for (int i = 0; i < w.nw; i++) c += snprintf(cons + c, sizeof cons - (size_t)c, "=%s,", w.cons);
            c += snprintf(cons + c, sizeof cons - (size_t)c, "l");
            if (maskv) snprintf(cons + c, sizeof cons - (size_t)c, ",b");
            LLVMValueRef args[2] = {addr, maskv ? maskv[g] : NULL};
            LLVMTypeRef rt = w.wt;
            if (w.nw > 1) {
                LLVMTypeRef fields[4] = {w.wt, w.wt, w.wt, w.wt};
                rt = LLVMStructTypeInContext(L->c, fields, (unsigned)w.nw, 0);
            }
            LLVMValueRef call = tb_asm(L, rt, text, cons, args, maskv ? 2 : 1, true);
            LLVMValueRef wv[4];
            for (int i = 0; i < w.nw; i++)
                wv[i] = w.nw > 1 ? LLVMBuildExtractValue(L->b, call, (unsigned)i, "") : call;
            words_to_list(L, wv, w, bytes, mt, v, xs);
        }
        for (int i = 0; i < v; i++) {
            LLVMValueRef x = to_reg(L, xs[i], et);
            /* The asm zeroed masked-off registers (zero is what a missing `other` gives);
             * with a vector, the layout pass proved the mask constant over the group, so
             * its first lane speaks for all. */
            if (maskv && otherv && !LLVMIsNull(otherv[g + i]))
                x = LLVMBuildSelect(L->b, maskv[v > 1 ? g : g + i], x, otherv[g + i], "");
            e[g + i] = x;
        }
    }
}

void tb_lower_load(TbLower *L, TirOp *op) {
    TirValue *r = op->res[0];
    TbVal *p = tb_val(L, op->opnd[0]);
    TbVal *mask = op->nopnd > 1 ? tb_val(L, op->opnd[1]) : NULL;
    TbVal *other = op->nopnd > 2 ? tb_val(L, op->opnd[2]) : NULL;
    if (!p) return;
    TbView view, *vp = NULL;
    int n = 1;
    if (tir_type_is_tile(r->ty)) {
        if (!tb_view(L, r->ty, &view, op)) return;
        vp = &view;
        n = view.total;
    }
    if (p->n != n || (mask && mask->n != n) || (other && other->n != n)) {
        tb_error(L, op, "internal: load operands do not match the result's layout");
        return;
    }
    TirType et = tir_elem_type(r->ty);
    int v = vector_width(L, op, vp, mem_bytes(et));
    LLVMValueRef *e = tb_elems(L, n);
    tb_emit_loads(L, et, n, v, p->e, p->ab, p->ao, mask ? mask->e : NULL, other ? other->e : NULL,
                  cache_mod(L, op), e);
    tb_set(L, r, n, e);
}

void tb_lower_store(TbLower *L, TirOp *op) {
    if (op->nopnd < 2) {
        tb_error(L, op, "store needs a pointer and a value");
        return;
    }
    TbVal *p = tb_val(L, op->opnd[0]), *x = tb_val(L, op->opnd[1]);
    TbVal *mask = op->nopnd > 2 ? tb_val(L, op->opnd[2]) : NULL;
    TirType vt = op->opnd[1]->ty;
    TbView view, *vp = NULL;
    int n = 1;
    LLVMValueRef owner = NULL;
    if (tir_type_is_tile(vt)) {
        if (!tb_view(L, vt, &view, op)) return;
        vp = &view;
        n = view.total;
        if (view_has_copies(&view)) owner = tb_view_owner(L, &view);
    } else {
        owner = LLVMBuildICmp(L->eb, LLVMIntEQ, L->tid, tb_i32(L, 0), "");
    }
    if (p->n != n || x->n != n || (mask && mask->n != n)) {
        tb_error(L, op, "internal: store operands do not match the value's layout");
        return;
    }
    TirType et = tir_elem_type(vt);
    int v = vector_width(L, op, vp, mem_bytes(et));
    tb_emit_stores(L, et, n, v, p->e, p->ab, p->ao, x->e, mask ? mask->e : NULL, owner, cache_mod(L, op));
}

/* n elements to ptrs[] in groups of v, where owner (NULL: everywhere) and mask[] hold. */
void tb_emit_stores(TbLower *L, TirType et, int n, int v, LLVMValueRef *ptrs, LLVMValueRef pb,
                    const int64_t *po, LLVMValueRef *vals, LLVMValueRef *maskv, LLVMValueRef owner,
                    const char *cache) {
    int eb = mem_bytes(et);
    LLVMTypeRef mt = mem_elem(L, et);
    for (int g = 0; g < n; g += v) {
        int bytes = v * eb;
        LLVMValueRef pred = owner;
        if (maskv) pred = pred ? LLVMBuildAnd(L->b, pred, maskv[g], "") : maskv[g];
        bool plain = !pred && !*cache;
        Words w = words_for(L, bytes);
        LLVMValueRef args[6], vec = NULL;
        if (!plain && v == w.nw && !et.ptr && eb == (w.wt == L->i32 ? 4 : 2)) {
            /* one element per register: no vector in between */
            for (int i = 0; i < v; i++) args[i] = LLVMBuildBitCast(L->b, to_mem(L, vals[g + i], et), w.wt, "");
        } else if (v == 1) {
            vec = to_mem(L, vals[g], et);
            if (!plain) {
                vec = LLVMBuildInsertElement(L->b, LLVMGetUndef(LLVMVectorType(mt, 1)), vec, tb_i32(L, 0), "");
                elems_to_words(L, vec, w, bytes, args);
            }
        } else {
            vec = LLVMGetUndef(LLVMVectorType(mt, (unsigned)v));
            for (int i = 0; i < v; i++)
                vec = LLVMBuildInsertElement(L->b, vec, to_mem(L, vals[g + i], et), tb_i32(L, i), "");
            if (!plain) elems_to_words(L, vec, w, bytes, args);
        }
        if (plain) {
            LLVMValueRef st = LLVMBuildStore(L->b, vec, ptrs[g]);
            LLVMSetAlignment(st, (unsigned)(v > 1 ? bytes : eb));
            continue;
        }
        int64_t imm;
        args[w.nw] = asm_addr(ptrs, pb, po, g, &imm);
        int na = w.nw + 1;
        if (pred) args[na++] = pred;
        char text[256], cons[128];
        int k = 0, c = 0;
        if (pred) k += snprintf(text + k, sizeof text - (size_t)k, "@$%d ", w.nw + 1);
        k += snprintf(text + k, sizeof text - (size_t)k, "st.global%s%s%s ", cache, w.vec, w.ptxt);
        k += addr_text(text + k, sizeof text - (size_t)k, w.nw, imm);
        k += snprintf(text + k, sizeof text - (size_t)k, ", ");
        if (w.nw > 1) k += snprintf(text + k, sizeof text - (size_t)k, "{");
        for (int i = 0; i < w.nw; i++) k += snprintf(text + k, sizeof text - (size_t)k, i ? ", $%d" : "$%d", i);
        if (w.nw > 1) k += snprintf(text + k, sizeof text - (size_t)k, "}");
        snprintf(text + k, sizeof text - (size_t)k, ";");
        for (int i = 0; i < w.nw; i++) c += snprintf(cons + c, sizeof cons - (size_t)c, "%s,", w.cons);
        c += snprintf(cons + c, sizeof cons - (size_t)c, "l");
        if (pred) snprintf(cons + c, sizeof cons - (size_t)c, ",b");
        tb_asm(L, L->voidt, text, cons, args, na, true);
    }
}

void tb_lower_atomic(TbLower *L, TirOp *op) {
    bool cas = op->code == TIR_OP_ATOMIC_CAS;
    if (op->nopnd < (cas ? 3 : 2)) {
        tb_error(L, op, "atomic needs a pointer and a value");
        return;
    }
    TirValue *r = op->res[0];
    TbVal *p = tb_val(L, op->opnd[0]);
    TbVal *x = tb_val(L, op->opnd[1]);
    TbVal *y = cas ? tb_val(L, op->opnd[2]) : NULL;
    TbVal *mask = !cas && op->nopnd > 2 ? tb_val(L, op->opnd[2]) : NULL;
    TirType et = tir_elem_type(r->ty);
    if (et.ptr || et.elem == TIR_I1 || (tir_scalar_is_float((TirScalar)et.elem) && et.elem != TIR_F32 &&
                                        et.elem != TIR_F64 && et.elem != TIR_F16 && et.elem != TIR_BF16)) {
        tb_error(L, op, "atomics on this element type are not supported by the GPU backend");
        return;
    }
    bool fl = tir_scalar_is_float((TirScalar)et.elem), sg = tir_scalar_is_signed((TirScalar)et.elem);
    LLVMAtomicRMWBinOp bop = LLVMAtomicRMWBinOpXchg;
    switch (op->code) {
    case TIR_OP_ATOMIC_ADD: bop = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd; break;
    case TIR_OP_ATOMIC_MAX: bop = fl ? LLVMAtomicRMWBinOpFMax : sg ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax; break;
    case TIR_OP_ATOMIC_MIN: bop = fl ? LLVMAtomicRMWBinOpFMin : sg ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin; break;
    default: break;
    }
    bool scalar = !tir_type_is_tile(r->ty);
    TbView view;
    int n = 1;
    LLVMValueRef owner = NULL;
    if (!scalar) {
        if (!tb_view(L, r->ty, &view, op)) return;
        n = view.total;
        if (view_has_copies(&view)) owner = tb_view_owner(L, &view);
    } else {
        owner = LLVMBuildICmp(L->eb, LLVMIntEQ, L->tid, tb_i32(L, 0), "");
    }
    LLVMTypeRef rt = tb_elem_type(L, et);
    LLVMValueRef *e = tb_elems(L, n);
    for (int i = 0; i < n; i++) {
        LLVMValueRef pred = owner;
        if (mask) pred = pred ? LLVMBuildAnd(L->b, pred, mask->e[i], "") : mask->e[i];
        LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b), doit = NULL, join = NULL;
        if (pred) {
            doit = LLVMAppendBasicBlockInContext(L->c, L->fn, "atomic");
            join = LLVMAppendBasicBlockInContext(L->c, L->fn, "atomic.end");
            LLVMBuildCondBr(L->b, pred, doit, join);
            LLVMPositionBuilderAtEnd(L->b, doit);
        }
        LLVMValueRef old;
        if (cas) {
            LLVMValueRef c = LLVMBuildAtomicCmpXchg(L->b, p->e[i], x->e[i], y->e[i],
                                                    LLVMAtomicOrderingMonotonic,
                                                    LLVMAtomicOrderingMonotonic, 0);
            old = LLVMBuildExtractValue(L->b, c, 0, "");
        } else {
            old = LLVMBuildAtomicRMW(L->b, bop, p->e[i], x->e[i], LLVMAtomicOrderingMonotonic, 0);
        }
        if (pred) {
            LLVMBasicBlockRef last = LLVMGetInsertBlock(L->b);
            LLVMBuildBr(L->b, join);
            LLVMPositionBuilderAtEnd(L->b, join);
            LLVMValueRef phi = LLVMBuildPhi(L->b, rt, "");
            LLVMValueRef in[2] = {old, LLVMConstNull(rt)};
            LLVMBasicBlockRef bb[2] = {last, from};
            LLVMAddIncoming(phi, in, bb, 2);
            old = phi;
        }
        e[i] = old;
    }
    if (scalar) {
        /* One thread did it; everyone gets the old value through shared memory. */
        int sbytes = tir_scalar_bytes((TirScalar)et.elem) > 4 ? 8 : 4;
        LLVMValueRef s = tb_scratch(L, op, sbytes);
        LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(L->c, L->fn, "bcast.write");
        LLVMBasicBlockRef j = LLVMAppendBasicBlockInContext(L->c, L->fn, "bcast.end");
        LLVMBuildCondBr(L->b, owner, wr, j);
        LLVMPositionBuilderAtEnd(L->b, wr);
        LLVMBuildStore(L->b, e[0], s);
        LLVMBuildBr(L->b, j);
        LLVMPositionBuilderAtEnd(L->b, j);
        tb_barrier(L);
        e[0] = LLVMBuildLoad2(L->b, rt, s, "");
    }
    tb_set(L, r, n, e);
}
