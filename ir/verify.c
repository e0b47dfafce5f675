/* The verifier: counts from the ops table, each op's type rule (docs/ir.md), region
 * shapes, terminators and dominance.  Messages: "@func: error: op 'x' (value %N): MSG". */
#include "tir_internal.h"
#include "layout.h"
#include "ptrmap.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Values defined so far: value -> state (absent: not defined yet). */
enum { VS_IN_SCOPE = 1, VS_OUT_OF_SCOPE = 2 };

typedef struct {
    const TirFunc *f;
    TirDiagFn diag;
    void *ud;
    int nerrors;
    TirPtrMap state;
    const TirValue **stack; /* definitions in order, to leave scopes */
    size_t nstack, capstack;
} Verifier;

static uintptr_t state_of(const Verifier *vf, const TirValue *v) {
    return (uintptr_t)tir_ptrmap_get(&vf->state, v);
}

static void set_state(Verifier *vf, const TirValue *v, uintptr_t s) {
    tir_ptrmap_put(&vf->state, v, (void *)s);
}

static void report(Verifier *vf, const TirOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(Verifier *vf, const TirOp *op, const char *fmt, ...) {
    vf->nerrors++;
    if (!vf->diag)
        return;
    char msg[768];
    int n;
    if (op && op->code < TIR_NOPS && op->nres > 0 && op->res[0])
        n = snprintf(msg, sizeof msg, "@%s: error: op '%s' (value %%%d): ", vf->f->name, tir_op_info[op->code].name,
                     op->res[0]->id);
    else if (op && op->code < TIR_NOPS)
        n = snprintf(msg, sizeof msg, "@%s: error: op '%s': ", vf->f->name, tir_op_info[op->code].name);
    else
        n = snprintf(msg, sizeof msg, "@%s: error: ", vf->f->name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    vf->diag(vf->ud, msg);
}

static void define(Verifier *vf, const TirOp *op, const TirValue *v) {
    if (state_of(vf, v)) {
        report(vf, op, "value %%%d is defined more than once", v->id);
        return;
    }
    set_state(vf, v, VS_IN_SCOPE);
    if (vf->nstack == vf->capstack) {
        vf->capstack = vf->capstack ? vf->capstack * 2 : 256;
        const TirValue **ns = realloc(vf->stack, vf->capstack * sizeof *ns);
        if (!ns)
            abort();
        vf->stack = ns;
    }
    vf->stack[vf->nstack++] = v;
}

static void leave_scope(Verifier *vf, size_t mark) {
    while (vf->nstack > mark)
        set_state(vf, vf->stack[--vf->nstack], VS_OUT_OF_SCOPE);
}

/* ---- type helpers ---- */

static const char *tstr(const Verifier *vf, TirType t, char *buf, size_t n) {
    tir_type_print(buf, n, vf->f->module, t);
    return buf;
}

static bool same_shape(TirType a, TirType b) {
    if (a.rank != b.rank)
        return false;
    for (int i = 0; i < a.rank; i++)
        if (a.shape[i] != b.shape[i])
            return false;
    return true;
}

static bool is_value(TirType t) {
    return t.kind == TIR_K_VALUE;
}
static bool is_int(TirType t) {
    return is_value(t) && !t.ptr && tir_scalar_is_int((TirScalar)t.elem);
}
static bool is_float(TirType t) {
    return is_value(t) && !t.ptr && tir_scalar_is_float((TirScalar)t.elem);
}
static bool is_i1(TirType t) {
    return is_value(t) && !t.ptr && t.elem == TIR_I1;
}
static bool is_scalar(TirType t) {
    return is_value(t) && t.rank == 0;
}

static bool type_valid(const Verifier *vf, TirType t, char *why, size_t n) {
    if (t.elem >= TIR_NSCALARS || t.rank > TIR_MAXRANK || t.kind > TIR_K_SMEM) {
        snprintf(why, n, "malformed type");
        return false;
    }
    if (t.kind == TIR_K_DESC && (t.rank < 2 || t.ptr)) {
        snprintf(why, n, "a descriptor needs a block of rank 2..5 and a scalar element");
        return false;
    }
    if (t.kind == TIR_K_SMEM && (t.rank < 2 || t.ptr || t.shape[0] < 1)) {
        snprintf(why, n, "a shared buffer needs a stage count, a tile shape and a scalar element");
        return false;
    }
    for (int i = t.kind == TIR_K_SMEM ? 1 : 0; i < t.rank; i++)
        if (t.shape[i] < 1 || (t.shape[i] & (t.shape[i] - 1))) {
            snprintf(why, n, "dimension %d is %d, not a power of two", i, t.shape[i]);
            return false;
        }
    if (t.layout) {
        const TirModule *m = vf->f->module;
        if (t.layout < 0 || t.layout >= m->nlayouts) {
            snprintf(why, n, "layout index %d not in the module's table", t.layout);
            return false;
        }
        int lrank = t.kind == TIR_K_SMEM ? t.rank - 1 : t.rank;
        if (tir_layout_rank(m, t.layout) != lrank) {
            snprintf(why, n, "layout of rank %d on a type of rank %d", tir_layout_rank(m, t.layout), lrank);
            return false;
        }
    }
    return true;
}

/* ---- per-op rules ---- */

#define FAIL(...)                    \
    do {                             \
        report(vf, op, __VA_ARGS__); \
        return;                      \
    } while (0)

static void check_elementwise_same(Verifier *vf, const TirOp *op, int from, bool ints_only, bool floats_only) {
    char b1[256], b2[256];
    TirType r = op->res[0]->ty;
    for (int i = from; i < op->nopnd; i++)
        if (!tir_type_eq(op->opnd[i]->ty, r))
            FAIL("operand %d has type %s, the result %s (elementwise operands share one type)", i,
                 tstr(vf, op->opnd[i]->ty, b1, sizeof b1), tstr(vf, r, b2, sizeof b2));
    if (!is_value(r))
        FAIL("operands must be scalars or tiles");
    if (ints_only && !is_int(r))
        FAIL("needs integer operands, got %s", tstr(vf, r, b1, sizeof b1));
    if (floats_only && !is_float(r))
        FAIL("needs float operands, got %s", tstr(vf, r, b1, sizeof b1));
    if (!ints_only && !floats_only && r.ptr)
        FAIL("does not take pointers (use addptr)");
}

static void check_memory(Verifier *vf, const TirOp *op) {
    char b1[256], b2[256];
    int code = op->code;
    int min = code == TIR_OP_LOAD ? 1 : 2, max = 3;
    if (code == TIR_OP_ATOMIC_CAS)
        min = 3;
    if (op->nopnd < min || op->nopnd > max)
        FAIL("takes %d to %d operands, got %d", min, max, op->nopnd);
    TirType p = op->opnd[0]->ty;
    if (!is_value(p) || !p.ptr)
        FAIL("operand 0 must be a pointer or a tile of pointers, got %s", tstr(vf, p, b1, sizeof b1));
    TirType pointee = tir_with_shape(tir_scalar_type((TirScalar)p.elem), p.rank, p.shape);
    int mask = -1;
    if (code == TIR_OP_LOAD) {
        TirType r = op->res[0]->ty;
        if (!tir_type_eq_nolayout(r, pointee))
            FAIL("result %s does not match the pointee tile %s", tstr(vf, r, b1, sizeof b1),
                 tstr(vf, pointee, b2, sizeof b2));
        if (op->nopnd >= 2)
            mask = 1;
        if (op->nopnd == 3 && !tir_type_eq_nolayout(op->opnd[2]->ty, r))
            FAIL("`other` has type %s, the result %s", tstr(vf, op->opnd[2]->ty, b1, sizeof b1),
                 tstr(vf, r, b2, sizeof b2));
    } else if (code == TIR_OP_ATOMIC_CAS) {
        for (int i = 1; i < 3; i++)
            if (!tir_type_eq_nolayout(op->opnd[i]->ty, pointee))
                FAIL("operand %d has type %s, the pointee tile %s", i, tstr(vf, op->opnd[i]->ty, b1, sizeof b1),
                     tstr(vf, pointee, b2, sizeof b2));
        if (!tir_type_eq(op->res[0]->ty, op->opnd[2]->ty))
            FAIL("result type differs from the value's");
    } else {
        if (!tir_type_eq_nolayout(op->opnd[1]->ty, pointee))
            FAIL("value has type %s, the pointee tile %s", tstr(vf, op->opnd[1]->ty, b1, sizeof b1),
                 tstr(vf, pointee, b2, sizeof b2));
        if (op->nopnd == 3)
            mask = 2;
        if (code != TIR_OP_STORE && !tir_type_eq(op->res[0]->ty, op->opnd[1]->ty))
            FAIL("result type differs from the value's");
    }
    if (mask >= 0) {
        TirType m = op->opnd[mask]->ty;
        if (!is_i1(m) || !same_shape(m, p))
            FAIL("mask has type %s; it must be i1 of the pointer's shape", tstr(vf, m, b1, sizeof b1));
    }
}

static void check_dot(Verifier *vf, const TirOp *op) {
    char b1[256], b2[256], b3[256];
    TirType a = op->opnd[0]->ty, b = op->opnd[1]->ty, c = op->opnd[2]->ty, r = op->res[0]->ty;
    if (a.rank != 2 || b.rank != 2 || c.rank != 2 || a.ptr || b.ptr || c.ptr)
        FAIL("needs 2-D tiles a[M,K], b[K,N], acc[M,N]");
    if (a.shape[1] != b.shape[0] || a.shape[0] != c.shape[0] || b.shape[1] != c.shape[1])
        FAIL("shapes do not agree: %s x %s + %s", tstr(vf, a, b1, sizeof b1), tstr(vf, b, b2, sizeof b2),
             tstr(vf, c, b3, sizeof b3));
    if (!tir_type_eq(r, c))
        FAIL("result type %s differs from the accumulator's %s", tstr(vf, r, b1, sizeof b1),
             tstr(vf, c, b2, sizeof b2));
    /* mixed f8 (e4m3 x e5m2) too: the front end refuses it and the backend lowers one
     * f8 type for both operands */
    if (a.elem != b.elem)
        FAIL("inputs have different element types %s and %s", tir_scalar_name((TirScalar)a.elem),
             tir_scalar_name((TirScalar)b.elem));
    int want;
    switch (a.elem) {
    case TIR_F16:
    case TIR_BF16:
    case TIR_F8E4M3:
    case TIR_F8E5M2:
    case TIR_F32: want = TIR_F32; break;
    case TIR_I8: want = TIR_I32; break;
    default: FAIL("no dot for %s inputs", tir_scalar_name((TirScalar)a.elem));
    }
    if (c.elem != want)
        FAIL("accumulator of %s inputs must be %s, got %s", tir_scalar_name((TirScalar)a.elem),
             tir_scalar_name((TirScalar)want), tir_scalar_name((TirScalar)c.elem));
    if (op->attr.i[0] && a.elem != TIR_F32)
        FAIL("tf32 needs f32 inputs");
}

/* Checks a region's terminator yield against `types`. */
static void check_yield(Verifier *vf, const TirOp *op, const TirBlock *blk, int ntypes, TirValue *const *vals,
                        const char *what) {
    char b1[256], b2[256];
    const TirOp *y = blk->last;
    if (!y || y->code != TIR_OP_YIELD)
        FAIL("%s does not end in yield", what);
    if (y->nopnd != ntypes)
        FAIL("%s yields %d values, expected %d", what, y->nopnd, ntypes);
    for (int i = 0; i < ntypes; i++)
        if (y->opnd[i] && !tir_type_eq(y->opnd[i]->ty, vals[i]->ty))
            FAIL("%s yields %s at %d, expected %s", what, tstr(vf, y->opnd[i]->ty, b1, sizeof b1), i,
                 tstr(vf, vals[i]->ty, b2, sizeof b2));
}

static void check_op_types(Verifier *vf, const TirOp *op) {
    char b1[256], b2[256];
    const TirModule *m = vf->f->module;
    TirType r = op->nres ? op->res[0]->ty : tir_scalar_type(TIR_I32);
    TirType x = op->nopnd ? op->opnd[0]->ty : r;
    unsigned traits = tir_op_info[op->code].traits;
    switch ((TirOpcode)op->code) {
    case TIR_OP_CONSTANT:
        if (!is_value(r) || r.ptr)
            FAIL("constants are integers, bools or floats, not %s", tstr(vf, r, b1, sizeof b1));
        return;
    case TIR_OP_ARANGE:
        if (r.rank != 1 || r.elem != TIR_I32 || r.ptr)
            FAIL("result must be a 1-D tile of i32");
        if (op->attr.i[1] - op->attr.i[0] != r.shape[0])
            FAIL("end - start = %lld but the result has %d elements", (long long)(op->attr.i[1] - op->attr.i[0]),
                 r.shape[0]);
        return;
    case TIR_OP_PROGRAM_ID:
    case TIR_OP_NUM_PROGRAMS:
        if (!tir_type_eq(r, tir_scalar_type(TIR_I32)))
            FAIL("result must be i32");
        if (op->attr.i[0] < 0 || op->attr.i[0] > 2)
            FAIL("axis %lld is not 0, 1 or 2", (long long)op->attr.i[0]);
        return;
    case TIR_OP_SPLAT:
        if (!is_scalar(x))
            FAIL("operand must be a scalar, got %s", tstr(vf, x, b1, sizeof b1));
        if (!tir_type_is_tile(r) || !tir_type_eq_nolayout(tir_elem_type(r), x))
            FAIL("result %s is not a tile of %s", tstr(vf, r, b1, sizeof b1), tstr(vf, x, b2, sizeof b2));
        return;
    case TIR_OP_BROADCAST:
        if (!is_value(x) || !tir_type_is_tile(r) || x.rank != r.rank || x.elem != r.elem || x.ptr != r.ptr)
            FAIL("broadcasts %s to %s: rank and element type must agree", tstr(vf, x, b1, sizeof b1),
                 tstr(vf, r, b2, sizeof b2));
        for (int i = 0; i < r.rank; i++)
            if (x.shape[i] != r.shape[i] && x.shape[i] != 1)
                FAIL("dimension %d: %d cannot broadcast to %d", i, x.shape[i], r.shape[i]);
        return;
    case TIR_OP_EXPAND_DIMS: {
        int64_t ax = op->attr.i[0];
        if (!is_value(x) || r.rank != x.rank + 1 || ax < 0 || ax > x.rank || x.elem != r.elem || x.ptr != r.ptr)
            FAIL("expands %s at axis %lld to %s", tstr(vf, x, b1, sizeof b1), (long long)ax,
                 tstr(vf, r, b2, sizeof b2));
        for (int i = 0, j = 0; i < r.rank; i++) {
            int want = i == ax ? 1 : x.shape[j++];
            if (r.shape[i] != want)
                FAIL("result dimension %d is %d, expected %d", i, r.shape[i], want);
        }
        return;
    }
    case TIR_OP_RESHAPE:
        if (!is_value(x) || !is_value(r) || x.elem != r.elem || x.ptr != r.ptr ||
            tir_type_numel(x) != tir_type_numel(r))
            FAIL("reshapes %s to %s: element type and count must agree", tstr(vf, x, b1, sizeof b1),
                 tstr(vf, r, b2, sizeof b2));
        return;
    case TIR_OP_TRANS: {
        if (!is_value(x) || x.rank != r.rank || x.elem != r.elem || x.ptr != r.ptr || x.rank < 1)
            FAIL("transposes %s to %s: rank and element type must agree", tstr(vf, x, b1, sizeof b1),
                 tstr(vf, r, b2, sizeof b2));
        unsigned seen = 0;
        for (int i = 0; i < r.rank; i++) {
            int64_t pi = op->attr.i[i];
            if (pi < 0 || pi >= r.rank || (seen & (1u << pi)))
                FAIL("perm is not a permutation of 0..%d", r.rank - 1);
            seen |= 1u << pi;
            if (r.shape[i] != x.shape[pi])
                FAIL("result dimension %d is %d, expected %d", i, r.shape[i], x.shape[pi]);
        }
        return;
    }
    case TIR_OP_CONVERT_LAYOUT:
        if (!tir_type_eq_nolayout(x, r))
            FAIL("may change only the layout");
        return;
    case TIR_OP_CAST:
        if (!is_value(x) || !is_value(r) || !same_shape(x, r))
            FAIL("operand and result shapes differ");
        if (x.ptr != r.ptr)
            FAIL("casts between pointers and numbers are not allowed");
        return;
    case TIR_OP_ADD:
    case TIR_OP_SUB:
    case TIR_OP_MUL:
    case TIR_OP_DIV:
    case TIR_OP_REM:
    case TIR_OP_MAXIMUM:
    case TIR_OP_MINIMUM:
    case TIR_OP_NEG:
    case TIR_OP_ABS: check_elementwise_same(vf, op, 0, false, false); return;
    case TIR_OP_AND:
    case TIR_OP_OR:
    case TIR_OP_XOR:
    case TIR_OP_SHL:
    case TIR_OP_SHR:
    case TIR_OP_NOT:
    case TIR_OP_NEXT_POW2: check_elementwise_same(vf, op, 0, true, false); return;
    case TIR_OP_FMA: check_elementwise_same(vf, op, 0, false, true); return;
    case TIR_OP_CMP:
        if (!tir_type_eq(op->opnd[0]->ty, op->opnd[1]->ty))
            FAIL("operands have types %s and %s", tstr(vf, op->opnd[0]->ty, b1, sizeof b1),
                 tstr(vf, op->opnd[1]->ty, b2, sizeof b2));
        if (!is_i1(r) || !same_shape(r, x))
            FAIL("result must be i1 of the operands' shape, got %s", tstr(vf, r, b1, sizeof b1));
        if (op->attr.i[0] < 0 || op->attr.i[0] > 5)
            FAIL("bad predicate %lld", (long long)op->attr.i[0]);
        return;
    case TIR_OP_SELECT:
        if (!is_i1(x) || !same_shape(x, r))
            FAIL("condition must be i1 of the result's shape, got %s", tstr(vf, x, b1, sizeof b1));
        check_elementwise_same(vf, op, 1, false, false);
        return;
    case TIR_OP_ADDPTR:
        if (!is_value(x) || !x.ptr)
            FAIL("operand 0 must be a pointer or a tile of pointers");
        if (!is_int(op->opnd[1]->ty) || !same_shape(op->opnd[1]->ty, x))
            FAIL("offset %s must be an integer of the pointer's shape %s", tstr(vf, op->opnd[1]->ty, b1, sizeof b1),
                 tstr(vf, x, b2, sizeof b2));
        if (!tir_type_eq(r, x))
            FAIL("result type must be the pointer operand's");
        return;
    case TIR_OP_HINT_MULTIPLE_OF:
    case TIR_OP_HINT_MAX_CONTIGUOUS:
        if (!tir_type_eq(r, x))
            FAIL("result type must be the operand's");
        if (!is_int(x) && !(is_value(x) && x.ptr))
            FAIL("hints apply to integers and pointers");
        if (op->attr.i[0] < 1)
            FAIL("n must be at least 1");
        return;
    case TIR_OP_REDUCE_SUM:
    case TIR_OP_REDUCE_MAX:
    case TIR_OP_REDUCE_MIN:
    case TIR_OP_ARGMAX:
    case TIR_OP_ARGMIN: {
        int64_t ax = op->attr.i[0];
        if (!tir_type_is_tile(x) || x.ptr)
            FAIL("reduces a tile of numbers, got %s", tstr(vf, x, b1, sizeof b1));
        if (ax < 0 || ax >= x.rank)
            FAIL("axis %lld out of range for rank %d", (long long)ax, x.rank);
        bool arg = op->code == TIR_OP_ARGMAX || op->code == TIR_OP_ARGMIN;
        int32_t shape[TIR_MAXRANK];
        for (int i = 0, j = 0; i < x.rank; i++)
            if (i != ax)
                shape[j++] = x.shape[i];
        TirType want = tir_with_shape(arg ? tir_scalar_type(TIR_I32) : tir_elem_type(x), x.rank - 1, shape);
        if (!tir_type_eq_nolayout(r, want))
            FAIL("result is %s, expected %s (axis %lld removed)", tstr(vf, r, b1, sizeof b1),
                 tstr(vf, want, b2, sizeof b2), (long long)ax);
        return;
    }
    case TIR_OP_CUMSUM:
        if (!tir_type_is_tile(x) || x.ptr)
            FAIL("scans a tile of numbers");
        if (op->attr.i[0] < 0 || op->attr.i[0] >= x.rank)
            FAIL("axis %lld out of range for rank %d", (long long)op->attr.i[0], x.rank);
        if (!tir_type_eq(r, x))
            FAIL("result type must be the operand's");
        return;
    case TIR_OP_DOT: check_dot(vf, op); return;
    case TIR_OP_LOAD:
    case TIR_OP_STORE:
    case TIR_OP_ATOMIC_ADD:
    case TIR_OP_ATOMIC_MAX:
    case TIR_OP_ATOMIC_MIN:
    case TIR_OP_ATOMIC_XCHG:
    case TIR_OP_ATOMIC_CAS: check_memory(vf, op); return;
    case TIR_OP_TENSOR_DESC: {
        if (r.kind != TIR_K_DESC)
            FAIL("result must be a descriptor type");
        if (op->nopnd != 1 + 2 * r.rank)
            FAIL("takes base, %d shapes and %d strides (%d operands), got %d", r.rank, r.rank, 1 + 2 * r.rank,
                 op->nopnd);
        if (!is_scalar(x) || !x.ptr || x.elem != r.elem)
            FAIL("base must be a ptr<%s>", tir_scalar_name((TirScalar)r.elem));
        for (int i = 1; i < op->nopnd; i++)
            if (!is_int(op->opnd[i]->ty) || !is_scalar(op->opnd[i]->ty))
                FAIL("operand %d must be an integer scalar", i);
        return;
    }
    case TIR_OP_TLOAD:
    case TIR_OP_TSTORE: {
        if (op->nopnd < 1 || x.kind != TIR_K_DESC)
            FAIL("operand 0 must be a descriptor");
        bool st = op->code == TIR_OP_TSTORE;
        int want = 1 + x.rank + (st ? 1 : 0);
        if (op->nopnd != want)
            FAIL("takes %d operands for a rank-%d descriptor, got %d", want, x.rank, op->nopnd);
        for (int i = 1; i <= x.rank; i++)
            if (!is_int(op->opnd[i]->ty) || !is_scalar(op->opnd[i]->ty))
                FAIL("offset %d must be an integer scalar", i - 1);
        TirType tile = x;
        tile.kind = TIR_K_VALUE;
        tile.layout = 0;
        TirType got = st ? op->opnd[want - 1]->ty : r;
        if (!tir_type_eq_nolayout(got, tile))
            FAIL("%s is %s, the descriptor's block is %s", st ? "stored tile" : "result", tstr(vf, got, b1, sizeof b1),
                 tstr(vf, tile, b2, sizeof b2));
        return;
    }
    case TIR_OP_PRINT: return;
    case TIR_OP_ASSERT:
        if (!is_i1(x))
            FAIL("condition must be i1, got %s", tstr(vf, x, b1, sizeof b1));
        return;
    case TIR_OP_FOR: {
        if (op->nopnd < 3)
            FAIL("takes lb, ub, step and the initial values");
        TirType iv = op->opnd[0]->ty;
        if (!is_int(iv) || !is_scalar(iv) || iv.elem == TIR_I1)
            FAIL("bounds must be integer scalars");
        if (!tir_type_eq(op->opnd[1]->ty, iv) || !tir_type_eq(op->opnd[2]->ty, iv))
            FAIL("lb, ub and step must have one type");
        int n = op->nopnd - 3;
        if (op->nres != n)
            FAIL("has %d results for %d carried values", op->nres, n);
        for (int i = 0; i < n; i++)
            if (!tir_type_eq(op->opnd[3 + i]->ty, op->res[i]->ty))
                FAIL("initial value %d is %s, the result %s", i, tstr(vf, op->opnd[3 + i]->ty, b1, sizeof b1),
                     tstr(vf, op->res[i]->ty, b2, sizeof b2));
        if (op->nregion != 1)
            FAIL("needs exactly one region, has %d", op->nregion);
        const TirBlock *body = op->region[0];
        if (body->nargs != n + 1)
            FAIL("body has %d block arguments, expected %d (iv and carried values)", body->nargs, n + 1);
        if (!tir_type_eq(body->args[0]->ty, iv))
            FAIL("the loop variable must have the bounds' type");
        for (int i = 0; i < n; i++)
            if (!tir_type_eq(body->args[1 + i]->ty, op->res[i]->ty))
                FAIL("block argument %d type differs from result %d", i + 1, i);
        check_yield(vf, op, body, n, op->res, "the body");
        return;
    }
    case TIR_OP_IF:
        if (!is_i1(x) || !is_scalar(x))
            FAIL("condition must be an i1 scalar, got %s", tstr(vf, x, b1, sizeof b1));
        if (op->nregion != 2)
            FAIL("needs two regions (then, else), has %d", op->nregion);
        for (int r2 = 0; r2 < 2; r2++) {
            if (op->region[r2]->nargs)
                FAIL("regions of if take no arguments");
            check_yield(vf, op, op->region[r2], op->nres, op->res, r2 ? "the else region" : "the then region");
        }
        return;
    case TIR_OP_YIELD: return; /* its types are checked by the owning op */
    case TIR_OP_CALL: {
        if (!op->attr.s)
            FAIL("has no callee");
        const TirFunc *g = tir_module_find((TirModule *)m, op->attr.s); /* through the name index */
        if (!g)
            FAIL("callee @%s does not exist", op->attr.s);
        if (g->kind != TIR_FUNC_DEVICE)
            FAIL("callee @%s is a kernel", op->attr.s);
        if (op->nopnd != g->body->nargs)
            FAIL("passes %d arguments, @%s takes %d", op->nopnd, g->name, g->body->nargs);
        for (int i = 0; i < op->nopnd; i++)
            if (!tir_type_eq(op->opnd[i]->ty, g->body->args[i]->ty))
                FAIL("argument %d is %s, @%s takes %s", i, tstr(vf, op->opnd[i]->ty, b1, sizeof b1), g->name,
                     tstr(vf, g->body->args[i]->ty, b2, sizeof b2));
        if (op->nres != g->nret)
            FAIL("has %d results, @%s returns %d", op->nres, g->name, g->nret);
        for (int i = 0; i < op->nres; i++)
            if (!tir_type_eq(op->res[i]->ty, g->ret[i]))
                FAIL("result %d type differs from @%s's", i, g->name);
        return;
    }
    case TIR_OP_FUNC_RETURN: {
        const TirFunc *f = vf->f;
        if (f->kind != TIR_FUNC_DEVICE)
            FAIL("only device functions return values");
        if (op->nopnd != f->nret)
            FAIL("returns %d values, the function declares %d", op->nopnd, f->nret);
        for (int i = 0; i < op->nopnd; i++)
            if (!tir_type_eq(op->opnd[i]->ty, f->ret[i]))
                FAIL("value %d is %s, the function returns %s", i, tstr(vf, op->opnd[i]->ty, b1, sizeof b1),
                     tstr(vf, f->ret[i], b2, sizeof b2));
        return;
    }
    case TIR_OP_RETURN:
        if (vf->f->kind != TIR_FUNC_KERNEL)
            FAIL("return ends a kernel; device functions use func_return");
        return;
    case TIR_OP_BARRIER:
        if (vf->f->kind != TIR_FUNC_KERNEL)
            FAIL("barrier is only in kernels");
        return;
    case TIR_OP_SMEM_ALLOC:
        if (!tir_type_is_smem(r))
            FAIL("result must be a shared buffer (smem<...>), got %s", tstr(vf, r, b1, sizeof b1));
        return;
    case TIR_OP_SMEM_STORE:
    case TIR_OP_SMEM_LOAD:
    case TIR_OP_ASYNC_COPY: {
        if (op->nopnd < 2 || !tir_type_is_smem(x))
            FAIL("operand 0 must be a shared buffer");
        TirType st = op->opnd[1]->ty;
        if (!is_int(st) || !is_scalar(st) || st.elem != TIR_I32)
            FAIL("the stage must be an i32 scalar");
        TirType tile = tir_smem_stage_type(x);
        if (op->code == TIR_OP_SMEM_LOAD) {
            if (!tir_type_eq_nolayout(r, tile))
                FAIL("result is %s, a stage holds %s", tstr(vf, r, b1, sizeof b1), tstr(vf, tile, b2, sizeof b2));
            return;
        }
        if (op->code == TIR_OP_SMEM_STORE) {
            if (!tir_type_eq_nolayout(op->opnd[2]->ty, tile))
                FAIL("stores %s, a stage holds %s", tstr(vf, op->opnd[2]->ty, b1, sizeof b1),
                     tstr(vf, tile, b2, sizeof b2));
            return;
        }
        if (op->nopnd < 3 || op->nopnd > 4)
            FAIL("takes buf, stage, pointers [, mask]");
        TirType pt = op->opnd[2]->ty, want = tile;
        want.ptr = 1;
        if (!tir_type_eq_nolayout(pt, want))
            FAIL("copies from %s, expected %s", tstr(vf, pt, b1, sizeof b1), tstr(vf, want, b2, sizeof b2));
        if (op->nopnd == 4) {
            TirType mt = op->opnd[3]->ty, mw = tile;
            mw.elem = TIR_I1;
            if (!tir_type_eq_nolayout(mt, mw))
                FAIL("mask is %s, expected %s", tstr(vf, mt, b1, sizeof b1), tstr(vf, mw, b2, sizeof b2));
            if (mt.layout != pt.layout)
                FAIL("mask and pointers have different layouts");
        }
        return;
    }
    case TIR_OP_ASYNC_COMMIT: return;
    case TIR_OP_ASYNC_WAIT:
        if (op->attr.i[0] < 0 || op->attr.i[0] > 64)
            FAIL("n is %lld, not 0..64", (long long)op->attr.i[0]);
        return;
    default:
        if (traits & TIR_T_MATH) {
            check_elementwise_same(vf, op, 0, false, true);
            return;
        }
        FAIL("no type rule for this op");
    }
}

#undef FAIL

static void verify_block(Verifier *vf, const TirBlock *blk, int depth);

static void verify_op(Verifier *vf, const TirOp *op, const TirBlock *blk, int depth) {
    if (op->code >= TIR_NOPS) {
        report(vf, NULL, "op with unknown opcode %d", op->code);
        return;
    }
    const TirOpInfo *info = &tir_op_info[op->code];
    bool ok = true;
    if (op->parent != blk)
        report(vf, op, "op's parent link is not its block"), ok = false;
    if (info->nopnd >= 0 && op->nopnd != info->nopnd)
        report(vf, op, "takes %d operand%s, got %d", info->nopnd, info->nopnd == 1 ? "" : "s", op->nopnd), ok = false;
    if (info->nres >= 0 && op->nres != info->nres)
        report(vf, op, "has %d result%s, got %d", info->nres, info->nres == 1 ? "" : "s", op->nres), ok = false;
    if (op->nregion && !(info->traits & TIR_T_REGIONS))
        report(vf, op, "takes no regions"), ok = false;
    for (int i = 0; i < op->nopnd; i++) {
        const TirValue *v = op->opnd[i];
        if (!v) {
            report(vf, op, "operand %d is missing", i);
            ok = false;
            continue;
        }
        uintptr_t s = state_of(vf, v);
        if (!s) {
            report(vf, op, "operand %d (%%%d) is used before its definition or not defined in this function", i, v->id);
            ok = false;
        } else if (s == VS_OUT_OF_SCOPE) {
            report(vf, op, "operand %d (%%%d) is used outside the region that defines it", i, v->id);
            ok = false;
        }
    }
    for (int i = 0; i < op->nres; i++)
        if (!op->res[i] || op->res[i]->def != op)
            report(vf, op, "result %d is missing or not linked to its op", i), ok = false;
    char why[128], tb[256];
    for (int i = 0; ok && i < op->nres; i++)
        if (!type_valid(vf, op->res[i]->ty, why, sizeof why))
            report(vf, op, "result %d type %s: %s", i, tstr(vf, op->res[i]->ty, tb, sizeof tb), why), ok = false;
    /* terminators close a block: yield in regions of for/if, func_return in a device body */
    if (op->code == TIR_OP_YIELD) {
        if (!blk->parent || (blk->parent->code != TIR_OP_FOR && blk->parent->code != TIR_OP_IF))
            report(vf, op, "yield outside the region of a for or if");
        else if (op != blk->last)
            report(vf, op, "yield must be the last op of its region");
    }
    if (op->code == TIR_OP_FUNC_RETURN && (blk->parent || op != blk->last))
        report(vf, op, "func_return must be the last op of a device function's body");
    if (ok)
        check_op_types(vf, op);
    for (int i = 0; i < op->nres; i++)
        if (op->res[i])
            define(vf, op, op->res[i]);
    if (depth > 256) {
        report(vf, op, "regions nested too deeply");
        return;
    }
    for (int r = 0; r < op->nregion; r++) {
        const TirBlock *rb = op->region[r];
        if (!rb) {
            report(vf, op, "region %d is missing", r);
            continue;
        }
        if (rb->parent != op)
            report(vf, op, "region %d's parent link is not this op", r);
        size_t mark = vf->nstack;
        verify_block(vf, rb, depth + 1);
        leave_scope(vf, mark);
    }
}

static void verify_block(Verifier *vf, const TirBlock *blk, int depth) {
    for (int i = 0; i < blk->nargs; i++) {
        char why[128];
        if (!type_valid(vf, blk->args[i]->ty, why, sizeof why))
            report(vf, blk->parent, "block argument %d: %s", i, why);
        define(vf, blk->parent, blk->args[i]);
    }
    for (const TirOp *op = blk->first; op; op = op->next)
        verify_op(vf, op, blk, depth);
}

int tir_verify_func(const TirFunc *f, TirDiagFn diag, void *ud) {
    Verifier vf;
    memset(&vf, 0, sizeof vf);
    vf.f = f;
    vf.diag = diag;
    vf.ud = ud;
    verify_block(&vf, f->body, 0);
    if (f->kind == TIR_FUNC_DEVICE && (!f->body->last || f->body->last->code != TIR_OP_FUNC_RETURN))
        report(&vf, NULL, "device function body does not end in func_return");
    for (int i = 0; i < f->nret; i++) {
        char why[128];
        if (!type_valid(&vf, f->ret[i], why, sizeof why))
            report(&vf, NULL, "result type %d: %s", i, why);
    }
    if (f->kind == TIR_FUNC_KERNEL && f->nret)
        report(&vf, NULL, "a kernel has no results");
    tir_ptrmap_free(&vf.state);
    free(vf.stack);
    return vf.nerrors;
}

int tir_verify_module(const TirModule *m, TirDiagFn diag, void *ud) {
    int n = 0;
    for (const TirFunc *f = m->first; f; f = f->next) {
        /* the name index finds the first function of a name: a later one is a duplicate */
        if (tir_module_find((TirModule *)m, f->name) != f) {
            if (diag) {
                char msg[300];
                snprintf(msg, sizeof msg, "@%s: error: function defined more than once", f->name);
                diag(ud, msg);
            }
            n++;
        }
        n += tir_verify_func(f, diag, ud);
    }
    return n;
}
