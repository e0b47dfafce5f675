/* Global memory: loads and stores (16-byte vectors where the layout pass proved the
 * addresses contiguous and aligned: op attr i[1] = elements per vector), predicated by
 * masks with inline PTX; atomics lane by lane. */
#include "tb_internal.h"
#include <llvm/Config/llvm-config.h> /* LLVM_VERSION_MAJOR */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *cache_mod(TbLower *L, const TirOp *op) {
    static const char *const ok[] = {".ca", ".cg", ".cs", ".lu", ".cv"};
    const char *s = op->attr.s;
    if (!s || !*s)
        return "";
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(s, ok[i]) == 0)
            return ok[i];
    tb_error(L, op, "unknown cache modifier '%s'", s);
    return "";
}

/* Elements per vector access: the layout pass's proof (attr i[1]), kept only when it
 * fits the thread's run of consecutive elements along the fastest dimension. */
static int vector_width(TbLower *L, const TirOp *op, const TbView *v, int elem_bytes) {
    int w = (int)op->attr.i[1];
    if (w <= 1 || !v || v->mma)
        return 1;
    int d0 = v->order[0];
    int spt = tb_view_spt(v, d0);
    while (w > 1 && (w * elem_bytes > 16 || v->n[d0] % w || spt % w || (w & (w - 1))))
        w >>= 1;
    return w < 1 ? 1 : w;
}

int tb_access_width(TbLower *L, const TirOp *op, const TbView *v, TirType et) {
    return vector_width(L, op, v, et.ptr ? 8 : tir_scalar_bytes((TirScalar)et.elem));
}

/* Register <-> memory form of one element (bools are bytes in memory). */
static LLVMValueRef to_reg(TbLower *L, LLVMValueRef x, TirType t) {
    if (!t.ptr && t.elem == TIR_I1)
        return LLVMBuildICmp(L->b, LLVMIntNE, x, LLVMConstNull(L->i8), "");
    return x;
}
static LLVMValueRef to_mem(TbLower *L, LLVMValueRef x, TirType t) {
    if (!t.ptr && t.elem == TIR_I1)
        return LLVMBuildZExt(L->b, x, L->i8, "");
    return x;
}

static LLVMTypeRef mem_elem(TbLower *L, TirType t) {
    return t.ptr ? L->gptr : tb_mem_type(L, (TirScalar)t.elem);
}
static int mem_bytes(TirType t) {
    return t.ptr ? 8 : tir_scalar_bytes((TirScalar)t.elem);
}

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

/* One access's slots in a larger array (its elements or its words) and how many there
 * are.  A write or read past them would take the next access's slot, or one nobody reads,
 * without any visible effect on the PTX: a compiler bug no output shows, so the helpers
 * below check every index and make it an internal error instead. */
typedef struct {
    LLVMValueRef *p;
    int n;
} Slots;

static Slots slots(LLVMValueRef *p, int n) {
    return (Slots){p, n};
}

static bool slot_ok(TbLower *L, Slots s, int i) {
    if (i >= 0 && i < s.n)
        return true;
    tb_error(L, NULL, "internal: slot %d of an access of %d slots", i, s.n);
    return false;
}
static void slot_put(TbLower *L, Slots s, int i, LLVMValueRef x) {
    if (slot_ok(L, s, i))
        s.p[i] = x;
}
static LLVMValueRef slot_get(TbLower *L, Slots s, int i) {
    return s.p[slot_ok(L, s, i) ? i : 0];
}

/* The group's words as its v elements: straight bitcasts where a word is one element,
 * else through a small vector (no vector at all for the common cases keeps the IR small). */
static void words_to_list(TbLower *L, Slots wv, Words w, int bytes, LLVMTypeRef et, int v, Slots out);
static LLVMValueRef words_to_elems(TbLower *L, Slots wv, Words w, int bytes, LLVMTypeRef et, int v);

static void words_to_list(TbLower *L, Slots wv, Words w, int bytes, LLVMTypeRef et, int v, Slots out) {
    bool isptr = LLVMGetTypeKind(et) == LLVMPointerTypeKind;
    if (!isptr && v == w.nw && bytes / v == (w.wt == L->i32 ? 4 : 2)) {
        for (int i = 0; i < v; i++)
            slot_put(L, out, i, LLVMBuildBitCast(L->b, slot_get(L, wv, i), et, ""));
        return;
    }
    if (!isptr && v == 1 && bytes == 1) {
        slot_put(L, out, 0, LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, slot_get(L, wv, 0), L->i8, ""), et, ""));
        return;
    }
    LLVMValueRef vec = words_to_elems(L, wv, w, bytes, et, v);
    for (int i = 0; i < v; i++)
        slot_put(L, out, i, LLVMBuildExtractElement(L->b, vec, tb_i32(L, i), ""));
}

/* the group's bytes as a vector of its elements */
static LLVMValueRef words_to_elems(TbLower *L, Slots wv, Words w, int bytes, LLVMTypeRef et, int v) {
    LLVMValueRef packed;
    if (w.nw > 1) {
        packed = LLVMGetUndef(LLVMVectorType(w.wt, (unsigned)w.nw));
        for (int i = 0; i < w.nw; i++)
            packed = LLVMBuildInsertElement(L->b, packed, slot_get(L, wv, i), tb_i32(L, i), "");
    } else {
        packed = slot_get(L, wv, 0);
        if (bytes == 1)
            packed = LLVMBuildTrunc(L->b, packed, L->i8, "");
    }
    LLVMTypeRef vt = LLVMVectorType(et, (unsigned)v);
    if (LLVMGetTypeKind(et) == LLVMPointerTypeKind) {
        LLVMValueRef iv = LLVMBuildBitCast(L->b, packed, LLVMVectorType(L->i64, (unsigned)v), "");
        return LLVMBuildIntToPtr(L->b, iv, vt, "");
    }
    return LLVMBuildBitCast(L->b, packed, vt, "");
}

static void elems_to_words(TbLower *L, LLVMValueRef vec, Words w, int bytes, Slots out) {
    LLVMTypeRef et = LLVMGetElementType(LLVMTypeOf(vec));
    if (LLVMGetTypeKind(et) == LLVMPointerTypeKind)
        vec = LLVMBuildPtrToInt(L->b, vec, LLVMVectorType(L->i64, LLVMGetVectorSize(LLVMTypeOf(vec))), "");
    if (w.nw > 1) {
        LLVMValueRef p = LLVMBuildBitCast(L->b, vec, LLVMVectorType(w.wt, (unsigned)w.nw), "");
        for (int i = 0; i < w.nw; i++)
            slot_put(L, out, i, LLVMBuildExtractElement(L->b, p, tb_i32(L, i), ""));
    } else if (bytes == 1) {
        LLVMValueRef b = LLVMBuildBitCast(L->b, vec, L->i8, "");
        slot_put(L, out, 0, LLVMBuildZExt(L->b, b, L->i16, ""));
    } else {
        slot_put(L, out, 0, LLVMBuildBitCast(L->b, vec, w.wt, ""));
    }
}

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

/* Text appended to a fixed buffer; a statement that would not fit is a compiler bug
 * caught by the caller's length check. */
typedef struct {
    char s[4096];
    int k;
} Text;

static void put(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int room = (int)sizeof t->s - t->k;
    int m = room > 0 ? vsnprintf(t->s + t->k, (size_t)room, fmt, ap) : 0;
    va_end(ap);
    t->k += m;
}

static bool narrow_float(TirType t) {
    return !t.ptr && (t.elem == TIR_F16 || t.elem == TIR_BF16);
}

/* Scalar accesses from one base pointer share one inline PTX statement, up to this many:
 * an eighth of the calls for LLVM to select (the unaligned form of a 128-element-per-thread
 * kernel has hundreds of them; 1, 2, 4, 8 per statement: layernorm BLOCK=16384 with 4 warps
 * compiled in 54-66, 53, 49, 46 ms, docs/performance.md). */
enum { GROUP_MAX = 8, ASM_MAX = 4 * GROUP_MAX + 8 }; /* ASM_MAX: operands of a statement */

/* How many accesses of v elements from element g on can share one statement. */
static int group_size(int n, int g, int v, LLVMValueRef pb, const int64_t *po) {
    if (v != 1 || !pb || !po)
        return 1;
    int na = 0;
    for (; na < GROUP_MAX && g + na < n; na++) {
        int64_t imm;
        if (asm_addr(NULL, pb, po, g + na, &imm) != pb)
            break;
    }
    return na > 0 ? na : 1;
}

/* The PTX names of access a's words: its operands $N (numbered from 0 in access order),
 * or, when the statement converts, its own registers tw (32-bit words) or th (one 16-bit
 * element). */
static void word_names(TbLower *L, Words w, int a, bool temps, char names[4][16]) {
    for (int i = 0; i < w.nw; i++) {
        if (!temps)
            snprintf(names[i], sizeof names[i], "$%d", a * w.nw + i);
        else if (w.wt == L->i32)
            snprintf(names[i], sizeof names[i], "tw%d", a * w.nw + i);
        else
            snprintf(names[i], sizeof names[i], "th%d", a);
    }
}

/* One inline PTX statement loading na accesses of v elements each (elements g..), the
 * access a predicated by maskv[g + a*v] (the layout proved masks constant over a vector);
 * masked-off registers hold zero.  With widen the memory elements are f16 or bf16 and
 * xs[] are their f32 values, converted inside the statement. */
static void load_group(TbLower *L, TirType et, int v, int na, LLVMValueRef *ptrs, LLVMValueRef pb, const int64_t *po,
                       int g, LLVMValueRef *maskv, const char *cache, bool widen, LLVMValueRef *xs) {
    int bytes = v * mem_bytes(et);
    Words w = words_for(L, bytes);
    int nout = widen ? na * v : na * w.nw;
    LLVMValueRef args[ASM_MAX];
    int nargs = 0, addr_op[GROUP_MAX], pred_op[GROUP_MAX];
    int64_t imm[GROUP_MAX];
    for (int a = 0; a < na; a++) {
        LLVMValueRef ad = asm_addr(ptrs, pb, po, g + a * v, &imm[a]);
        if (a > 0 && ad == args[addr_op[0] - nout]) {
            addr_op[a] = addr_op[0];
        } else {
            addr_op[a] = nout + nargs;
            args[nargs++] = ad;
        }
    }
    for (int a = 0; a < na && maskv; a++) {
        pred_op[a] = nout + nargs;
        args[nargs++] = maskv[g + a * v];
    }
    const char *zero = w.wt == L->i32 ? ".b32" : ".b16";
    bool bf = et.elem == TIR_BF16;
    Text t = {.k = 0};
    put(&t, "{\n\t");
    if (widen) {
        put(&t, ".reg .b16 th<%d>;\n\t", na * v);
        if (w.wt == L->i32)
            put(&t, ".reg .b32 tw<%d>;\n\t", na * w.nw);
        if (bf)
            put(&t, ".reg .b16 tz;\n\tmov.b16 tz, 0;\n\t");
    }
    for (int a = 0; a < na; a++) {
        char dst[4][16];
        word_names(L, w, a, widen, dst);
        /* zero the destinations first so masked-off lanes never read undefined registers */
        for (int i = 0; i < w.nw && maskv; i++)
            put(&t, "mov%s %s, 0;\n\t", zero, dst[i]);
        if (maskv)
            put(&t, "@$%d ", pred_op[a]);
        put(&t, "ld.global%s%s%s ", cache, w.vec, w.ptxt);
        put(&t, w.nw > 1 ? "{" : "");
        for (int i = 0; i < w.nw; i++)
            put(&t, i ? ", %s" : "%s", dst[i]);
        put(&t, w.nw > 1 ? "}" : "");
        if (imm[a])
            put(&t, ", [$%d+%lld];\n\t", addr_op[a], (long long)imm[a]);
        else
            put(&t, ", [$%d];\n\t", addr_op[a]);
        if (!widen)
            continue;
        for (int i = 0; i < w.nw && w.wt == L->i32; i++)
            put(&t, "mov.b32 {th%d, th%d}, tw%d;\n\t", a * v + 2 * i, a * v + 2 * i + 1, a * w.nw + i);
        for (int e = 0; e < v; e++) {
            if (bf)
                put(&t, "mov.b32 $%d, {tz, th%d};\n\t", a * v + e, a * v + e);
            else
                put(&t, "cvt.f32.f16 $%d, th%d;\n\t", a * v + e, a * v + e);
        }
    }
    put(&t, "}");
    char cons[256];
    int c = 0;
    for (int i = 0; i < nout; i++)
        c += snprintf(cons + c, sizeof cons - (size_t)c, "=%s,", widen ? "f" : w.cons);
    for (int i = 0; i < nargs; i++)
        c += snprintf(cons + c, sizeof cons - (size_t)c, "%s,", LLVMTypeOf(args[i]) == L->i1 ? "b" : "l");
    cons[c - 1] = 0;
    LLVMTypeRef ot = widen ? L->f32 : w.wt, rt = ot;
    if (t.k >= (int)sizeof t.s) {
        tb_error(L, NULL, "internal: a load's inline PTX is too long");
        for (int i = 0; i < na * v; i++)
            xs[i] = LLVMGetUndef(widen ? L->f32 : mem_elem(L, et));
        return;
    }
    if (nout > 1) {
        LLVMTypeRef fields[ASM_MAX];
        for (int i = 0; i < nout; i++)
            fields[i] = ot;
        rt = LLVMStructTypeInContext(L->c, fields, (unsigned)nout, 0);
    }
    LLVMValueRef call = tb_asm(L, rt, t.s, cons, args, nargs, true);
    LLVMValueRef outs[ASM_MAX];
    for (int i = 0; i < nout; i++)
        outs[i] = nout > 1 ? LLVMBuildExtractValue(L->b, call, (unsigned)i, "") : call;
    if (widen) {
        for (int i = 0; i < nout; i++)
            xs[i] = outs[i];
        return;
    }
    for (int a = 0; a < na; a++)
        words_to_list(L, slots(outs + a * w.nw, w.nw), w, bytes, mem_elem(L, et), v, slots(xs + a * v, v));
}

/* n elements of type et from ptrs[], in groups of v (one access each), predicated by
 * mask[] (NULL: none; with v > 1 the mask is constant over a group), masked-off lanes
 * giving other[] (NULL: zero).  With widen, et is f16 or bf16 and e[] are f32. */
void tb_emit_loads(TbLower *L, TirType et, int n, int v, LLVMValueRef *ptrs, LLVMValueRef pb, const int64_t *po,
                   LLVMValueRef *maskv, LLVMValueRef *otherv, const char *cache, bool widen, LLVMValueRef *e) {
    int eb = mem_bytes(et);
    LLVMTypeRef mt = mem_elem(L, et);
    if (widen && !narrow_float(et))
        widen = false;
    for (int g = 0; g < n;) {
        int bytes = v * eb, na = 1;
        LLVMValueRef xs[ASM_MAX];
        if (!maskv && !*cache && !widen) {
            LLVMTypeRef vt = v > 1 ? LLVMVectorType(mt, (unsigned)v) : mt;
            LLVMValueRef vec = LLVMBuildLoad2(L->b, vt, ptrs[g], "");
            LLVMSetAlignment(vec, (unsigned)(v > 1 ? bytes : eb));
            for (int i = 0; i < v; i++)
                slot_put(L, slots(xs, v), i, v > 1 ? LLVMBuildExtractElement(L->b, vec, tb_i32(L, i), "") : vec);
        } else {
            na = group_size(n, g, v, pb, po);
            load_group(L, et, v, na, ptrs, pb, po, g, maskv, cache, widen, xs);
        }
        for (int i = 0; i < na * v; i++) {
            LLVMValueRef x = widen ? xs[i] : to_reg(L, xs[i], et);
            /* The asm zeroed masked-off registers (zero is what a missing `other` gives);
             * with a vector, the layout pass proved the mask constant over the group, so
             * its first lane speaks for all. */
            if (maskv && otherv && !LLVMIsNull(otherv[g + i])) {
                LLVMValueRef o = otherv[g + i];
                if (widen)
                    o = tb_convert(L, o, (TirScalar)et.elem, TIR_F32, NULL);
                x = LLVMBuildSelect(L->b, maskv[v > 1 ? g + i - i % v : g + i], x, o, "");
            }
            e[g + i] = x;
        }
        g += na * v;
    }
}

/* The words of one access of v elements vals[0..v-1] (memory form of et). */
static void store_words(TbLower *L, TirType et, int v, Slots vals, Words w, int bytes, Slots out) {
    int eb = mem_bytes(et);
    LLVMTypeRef mt = mem_elem(L, et);
    if (v == w.nw && !et.ptr && eb == (w.wt == L->i32 ? 4 : 2)) {
        /* one element per register: no vector in between */
        for (int i = 0; i < v; i++)
            slot_put(L, out, i, LLVMBuildBitCast(L->b, to_mem(L, slot_get(L, vals, i), et), w.wt, ""));
        return;
    }
    LLVMValueRef vec = LLVMGetUndef(LLVMVectorType(mt, (unsigned)v));
    for (int i = 0; i < v; i++)
        vec = LLVMBuildInsertElement(L->b, vec, to_mem(L, slot_get(L, vals, i), et), tb_i32(L, i), "");
    elems_to_words(L, vec, w, bytes, out);
}

/* One inline PTX statement storing na accesses of v elements each (elements g..), access
 * a predicated by preds[a] (NULL: always).  With narrow, vals[] are f32 and the memory
 * elements f16 or bf16, rounded to nearest even inside the statement. */
static void store_group(TbLower *L, TirType et, int v, int na, LLVMValueRef *ptrs, LLVMValueRef pb, const int64_t *po,
                        int g, LLVMValueRef *vals, LLVMValueRef *preds, const char *cache, bool narrow) {
    int bytes = v * mem_bytes(et);
    Words w = words_for(L, bytes);
    int nin = narrow ? na * v : na * w.nw;
    LLVMValueRef args[ASM_MAX];
    if (narrow) {
        for (int i = 0; i < nin; i++)
            args[i] = vals[g + i];
    } else {
        for (int a = 0; a < na; a++)
            store_words(L, et, v, slots(vals + g + a * v, v), w, bytes, slots(args + a * w.nw, w.nw));
    }
    int nargs = nin, addr_op[GROUP_MAX], pred_op[GROUP_MAX];
    int64_t imm[GROUP_MAX];
    for (int a = 0; a < na; a++) {
        LLVMValueRef ad = asm_addr(ptrs, pb, po, g + a * v, &imm[a]);
        if (a > 0 && ad == args[addr_op[0]]) {
            addr_op[a] = addr_op[0];
        } else {
            addr_op[a] = nargs;
            args[nargs++] = ad;
        }
    }
    for (int a = 0; a < na; a++) {
        pred_op[a] = preds[a] ? nargs : -1;
        if (preds[a])
            args[nargs++] = preds[a];
    }
    const char *ty = et.elem == TIR_BF16 ? "bf16" : "f16";
    Text t = {.k = 0};
    put(&t, "{\n\t");
    if (narrow) {
        if (w.wt == L->i32)
            put(&t, ".reg .b32 tw<%d>;\n\t", na * w.nw);
        else
            put(&t, ".reg .b16 th<%d>;\n\t", na);
    }
    for (int a = 0; a < na; a++) {
        char src[4][16];
        word_names(L, w, a, narrow, src);
        if (narrow && w.wt == L->i32) {
            /* cvt.rn.f16x2.f32 d, a, b puts a in the upper half: the odd element */
            for (int i = 0; i < w.nw; i++)
                put(&t, "cvt.rn.%sx2.f32 %s, $%d, $%d;\n\t", ty, src[i], a * v + 2 * i + 1, a * v + 2 * i);
        } else if (narrow) {
            put(&t, "cvt.rn.%s.f32 %s, $%d;\n\t", ty, src[0], a);
        }
        if (pred_op[a] >= 0)
            put(&t, "@$%d ", pred_op[a]);
        put(&t, "st.global%s%s%s ", cache, w.vec, w.ptxt);
        if (imm[a])
            put(&t, "[$%d+%lld], ", addr_op[a], (long long)imm[a]);
        else
            put(&t, "[$%d], ", addr_op[a]);
        put(&t, w.nw > 1 ? "{" : "");
        for (int i = 0; i < w.nw; i++)
            put(&t, i ? ", %s" : "%s", src[i]);
        put(&t, w.nw > 1 ? "};\n\t" : ";\n\t");
    }
    put(&t, "}");
    char cons[256];
    int c = 0;
    for (int i = 0; i < nin; i++)
        c += snprintf(cons + c, sizeof cons - (size_t)c, "%s,", narrow ? "f" : w.cons);
    for (int i = nin; i < nargs; i++)
        c += snprintf(cons + c, sizeof cons - (size_t)c, "%s,", LLVMTypeOf(args[i]) == L->i1 ? "b" : "l");
    cons[c - 1] = 0;
    if (t.k >= (int)sizeof t.s) {
        tb_error(L, NULL, "internal: a store's inline PTX is too long");
        return;
    }
    tb_asm(L, L->voidt, t.s, cons, args, nargs, true);
}

/* n elements to ptrs[] in groups of v, where owner (NULL: everywhere) and mask[] hold.
 * With narrow, vals[] are f32 and et is f16 or bf16. */
void tb_emit_stores(TbLower *L, TirType et, int n, int v, LLVMValueRef *ptrs, LLVMValueRef pb, const int64_t *po,
                    LLVMValueRef *vals, LLVMValueRef *maskv, LLVMValueRef owner, const char *cache, bool narrow) {
    int eb = mem_bytes(et);
    LLVMTypeRef mt = mem_elem(L, et);
    if (narrow && !narrow_float(et))
        narrow = false;
    for (int g = 0; g < n;) {
        int bytes = v * eb;
        if (!owner && !maskv && !*cache && !narrow) {
            LLVMValueRef vec;
            if (v == 1) {
                vec = to_mem(L, vals[g], et);
            } else {
                vec = LLVMGetUndef(LLVMVectorType(mt, (unsigned)v));
                for (int i = 0; i < v; i++)
                    vec = LLVMBuildInsertElement(L->b, vec, to_mem(L, vals[g + i], et), tb_i32(L, i), "");
            }
            LLVMValueRef st = LLVMBuildStore(L->b, vec, ptrs[g]);
            LLVMSetAlignment(st, (unsigned)(v > 1 ? bytes : eb));
            g += v;
            continue;
        }
        int na = group_size(n, g, v, pb, po);
        LLVMValueRef preds[GROUP_MAX];
        for (int a = 0; a < na; a++) {
            LLVMValueRef p = owner;
            if (maskv)
                p = p ? LLVMBuildAnd(L->b, p, maskv[g + a * v], "") : maskv[g + a * v];
            preds[a] = p;
        }
        store_group(L, et, v, na, ptrs, pb, po, g, vals, preds, cache, narrow);
        g += na * v;
    }
}

/* A cast between f16/bf16 and f32 next to a load or store is done inside the access's
 * inline PTX (cvt.f32.f16 after ld, cvt.rn.f16x2.f32 before st): the same instructions,
 * a third fewer LLVM instructions for f16 kernels (codegen time grows with their count).
 * Where it applies is decided here, for the access and the cast alike. */

/* The `as f32` that is the only use of a f16/bf16 load's result. */
static TirOp *widening_cast(TbLower *L, const TirOp *load) {
    const TirValue *r = load->res[0];
    if (!narrow_float(r->ty))
        return NULL;
    TirOp *u = tb_sole_user(L, r);
    if (!u || u->code != TIR_OP_CAST || u->opnd[0] != r)
        return NULL;
    TirType t = u->res[0]->ty;
    if (t.ptr || t.elem != TIR_F32)
        return NULL;
    t.elem = r->ty.elem;
    return tir_type_eq(t, r->ty) ? u : NULL;
}

/* The store that is the only use of cast (f32 -> f16/bf16), storing it as its value. */
static TirOp *narrowing_store(TbLower *L, const TirOp *cast) {
    const TirValue *r = cast->res[0];
    TirType t = cast->opnd[0]->ty;
    if (!narrow_float(r->ty) || t.ptr || t.elem != TIR_F32)
        return NULL;
    t.elem = r->ty.elem;
    if (!tir_type_eq(t, r->ty))
        return NULL;
    TirOp *u = tb_sole_user(L, r);
    if (!u || u->code != TIR_OP_STORE || u->nopnd < 2 || u->opnd[1] != r)
        return NULL;
    return u;
}

bool tb_cast_fused(TbLower *L, TirOp *cast) {
    const TirOp *d = cast->opnd[0]->def;
    if (d && d->code == TIR_OP_LOAD && widening_cast(L, d) == cast)
        return true; /* its load converts */
    if (!narrowing_store(L, cast))
        return false;
    /* the store converts: the cast's value is its operand's f32 elements */
    TbVal *x = tb_val(L, cast->opnd[0]);
    if (x)
        tb_set(L, cast->res[0], x->n, x->e);
    return true;
}

void tb_lower_load(TbLower *L, TirOp *op) {
    TirValue *r = op->res[0];
    TbVal *p = tb_val(L, op->opnd[0]);
    TbVal *mask = op->nopnd > 1 ? tb_val(L, op->opnd[1]) : NULL;
    TbVal *other = op->nopnd > 2 ? tb_val(L, op->opnd[2]) : NULL;
    if (!p)
        return;
    TbView view, *vp = NULL;
    int n = 1;
    if (tir_type_is_tile(r->ty)) {
        if (!tb_view_lin_ok(L, r->ty, &view, op))
            return;
        vp = &view;
        n = L->chain_sub ? L->chain_sub : view.total;
    }
    if (p->n != n || (mask && mask->n != n) || (other && other->n != n)) {
        tb_error(L, op, "internal: load operands do not match the result's layout");
        return;
    }
    TirType et = tir_elem_type(r->ty);
    int v = vector_width(L, op, vp, mem_bytes(et));
    TirOp *cast = widening_cast(L, op);
    LLVMValueRef *e = tb_elems(L, n);
    tb_emit_loads(L, et, n, v, p->e, p->ab, p->ao, mask ? mask->e : NULL, other ? other->e : NULL, cache_mod(L, op),
                  cast != NULL, e);
    /* with the cast done here, the load's own value (read by nothing else) stands for it */
    tb_set(L, r, n, e);
    if (cast)
        tb_set(L, cast->res[0], n, e);
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
        if (!tb_view(L, vt, &view, op))
            return;
        vp = &view;
        n = L->chain_sub ? L->chain_sub : view.total;
        owner = tb_owner(L, &view);
    } else {
        owner = LLVMBuildICmp(L->eb, LLVMIntEQ, L->tid, tb_i32(L, 0), "");
    }
    if (p->n != n || x->n != n || (mask && mask->n != n)) {
        tb_error(L, op, "internal: store operands do not match the value's layout");
        return;
    }
    TirType et = tir_elem_type(vt);
    int v = vector_width(L, op, vp, mem_bytes(et));
    const TirOp *def = op->opnd[1]->def;
    bool narrow = def && def->code == TIR_OP_CAST && narrowing_store(L, def) == op;
    tb_emit_stores(L, et, n, v, p->e, p->ab, p->ao, x->e, mask ? mask->e : NULL, owner, cache_mod(L, op), narrow);
}

/* The LLVM orderings of a compare-and-swap for each TirSem: on success and on failure (a
 * failed cas only reads: no release part). */
static const struct {
    LLVMAtomicOrdering success, failure;
} atomic_orders[TIR_NSEMS] = {
    [TIR_SEM_ACQ_REL] = {LLVMAtomicOrderingAcquireRelease, LLVMAtomicOrderingAcquire},
    [TIR_SEM_RELAXED] = {LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic},
    [TIR_SEM_ACQUIRE] = {LLVMAtomicOrderingAcquire, LLVMAtomicOrderingAcquire},
    [TIR_SEM_RELEASE] = {LLVMAtomicOrderingRelease, LLVMAtomicOrderingMonotonic},
};
/* NVPTX's sync scopes: gpu is LLVM's "device", cta "block", sys the default (""). */
static const char *const atomic_scopes[TIR_NSCOPES] = {
    [TIR_SCOPE_GPU] = "device",
    [TIR_SCOPE_CTA] = "block",
    [TIR_SCOPE_SYS] = "",
};

/* An atomic at the op's order and scope.  A compare-and-swap carries its orders itself
 * (atom.acq_rel.gpu.cas; not with LLVM 19, below).  NVPTX (LLVM 22) drops the order of an atomicrmw (it emits a
 * relaxed atom.exch whatever it is asked), so a read-modify-write is a relaxed atomic
 * between fences at its scope: a fence before it for release, after it for acquire (the
 * PTX memory model's release and acquire patterns).  LLVM before 20 has no sync scopes in
 * its C API: the atomic and its fences are then at system scope, stronger than asked. */
static LLVMValueRef build_atomic(TbLower *L, const TirOp *op, LLVMAtomicRMWBinOp bop, LLVMValueRef p, LLVMValueRef x,
                                 LLVMValueRef y) {
    int sem = op->attr.i[0] >= 0 && op->attr.i[0] < TIR_NSEMS ? (int)op->attr.i[0] : 0;
    int scope = op->attr.i[1] >= 0 && op->attr.i[1] < TIR_NSCOPES ? (int)op->attr.i[1] : 0;
    bool release = sem == TIR_SEM_ACQ_REL || sem == TIR_SEM_RELEASE;
    bool acquire = sem == TIR_SEM_ACQ_REL || sem == TIR_SEM_ACQUIRE;
    LLVMValueRef old;
#if LLVM_VERSION_MAJOR >= 20
    const char *sn = atomic_scopes[scope];
    unsigned ssid = LLVMGetSyncScopeID(L->c, sn, strlen(sn));
    if (y) {
        LLVMValueRef c = LLVMBuildAtomicCmpXchgSyncScope(L->b, p, x, y, atomic_orders[sem].success,
                                                         atomic_orders[sem].failure, ssid);
        return LLVMBuildExtractValue(L->b, c, 0, "");
    }
    if (release)
        LLVMBuildFenceSyncScope(L->b, LLVMAtomicOrderingRelease, ssid, "");
    old = LLVMBuildAtomicRMWSyncScope(L->b, bop, p, x, LLVMAtomicOrderingMonotonic, ssid);
    if (acquire)
        LLVMBuildFenceSyncScope(L->b, LLVMAtomicOrderingAcquire, ssid, "");
#else
    (void)scope;
    (void)atomic_scopes;
    (void)atomic_orders;
    /* LLVM 19's NVPTX drops a compare-and-swap's order too (a plain atom.cas, relaxed), and
     * cannot select a fence instruction (it aborts): every atomic is relaxed between PTX
     * fences written out */
    if (release)
        tb_asm(L, L->voidt, "fence.acq_rel.sys;", "~{memory}", NULL, 0, true);
    if (y) {
        LLVMValueRef c =
            LLVMBuildAtomicCmpXchg(L->b, p, x, y, LLVMAtomicOrderingMonotonic, LLVMAtomicOrderingMonotonic, 0);
        old = LLVMBuildExtractValue(L->b, c, 0, "");
    } else {
        old = LLVMBuildAtomicRMW(L->b, bop, p, x, LLVMAtomicOrderingMonotonic, 0);
    }
    if (acquire)
        tb_asm(L, L->voidt, "fence.acq_rel.sys;", "~{memory}", NULL, 0, true);
#endif
    return old;
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
    if (et.ptr || et.elem == TIR_I1 ||
        (tir_scalar_is_float((TirScalar)et.elem) && et.elem != TIR_F32 && et.elem != TIR_F64 && et.elem != TIR_F16 &&
         et.elem != TIR_BF16)) {
        tb_error(L, op, "atomics on this element type are not supported by the GPU backend");
        return;
    }
    bool fl = tir_scalar_is_float((TirScalar)et.elem), sg = tir_scalar_is_signed((TirScalar)et.elem);
    LLVMAtomicRMWBinOp bop = LLVMAtomicRMWBinOpXchg;
    switch (op->code) {
    case TIR_OP_ATOMIC_ADD: bop = fl ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd; break;
    case TIR_OP_ATOMIC_MAX:
        bop = fl ? LLVMAtomicRMWBinOpFMax : sg ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax;
        break;
    case TIR_OP_ATOMIC_MIN:
        bop = fl ? LLVMAtomicRMWBinOpFMin : sg ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin;
        break;
    default: break;
    }
    bool scalar = !tir_type_is_tile(r->ty);
    TbView view;
    int n = 1;
    LLVMValueRef owner = NULL;
    if (!scalar) {
        if (!tb_view(L, r->ty, &view, op))
            return;
        n = view.total;
        owner = tb_owner(L, &view);
    } else {
        owner = LLVMBuildICmp(L->eb, LLVMIntEQ, L->tid, tb_i32(L, 0), "");
    }
    LLVMTypeRef rt = tb_elem_type(L, et);
    LLVMValueRef *e = tb_elems(L, n);
    for (int i = 0; i < n; i++) {
        LLVMValueRef pred = owner;
        if (mask)
            pred = pred ? LLVMBuildAnd(L->b, pred, mask->e[i], "") : mask->e[i];
        LLVMBasicBlockRef from = LLVMGetInsertBlock(L->b), doit = NULL, join = NULL;
        if (pred) {
            doit = LLVMAppendBasicBlockInContext(L->c, L->fn, "atomic");
            join = LLVMAppendBasicBlockInContext(L->c, L->fn, "atomic.end");
            LLVMBuildCondBr(L->b, pred, doit, join);
            LLVMPositionBuilderAtEnd(L->b, doit);
        }
        LLVMValueRef old = build_atomic(L, op, bop, p->e[i], x->e[i], cas ? y->e[i] : NULL);
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
        LLVMValueRef s = tb_scratch(L, op);
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
