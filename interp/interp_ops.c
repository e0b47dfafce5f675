/* The reference interpreter: values, shapes, arithmetic, reductions and dot.
 * Each handler dispatches on the op and element kind once per tile, then loops. */
#include "interp_internal.h"
#include "tmath.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double ti_round_narrow(TirScalar s, float x) {
    switch (s) {
    case TIR_F16: return tir_f16_to_f32(tir_f32_to_f16(x));
    case TIR_BF16: return tir_bf16_to_f32(tir_f32_to_bf16(x));
    case TIR_F8E4M3: return tir_f8e4m3_to_f32(tir_f32_to_f8e4m3(x));
    case TIR_F8E5M2: return tir_f8e5m2_to_f32(tir_f32_to_f8e5m2(x));
    default: return (double)x;
    }
}

/* The result's elements, sized from its type. */
static TiElem *def_res(TiInterp *ip, TiFrame *fr, const TirOp *op, int64_t *n) {
    if (op->nres < 1 || !op->res[0]) {
        ti_error(ip, op, "interp: op has no result");
        return NULL;
    }
    *n = ti_numel(op->res[0]->ty);
    TiElem *r = ti_def(fr, op->res[0], *n);
    if (!r)
        ti_error(ip, op, "interp: value outside its function, or out of memory");
    return r;
}

/* An elementwise operand: `n` elements, or one that every lane shares (stride 0). */
static TiElem *ew_opnd(TiInterp *ip, TiFrame *fr, const TirOp *op, int i, int64_t n, int64_t *stride) {
    if (i >= op->nopnd) {
        ti_error(ip, op, "interp: missing operand %d", i);
        return NULL;
    }
    int64_t m;
    TiElem *e = ti_get(ip, fr, op, op->opnd[i], &m);
    if (!e)
        return NULL;
    if (m != n && m != 1) {
        ti_error(ip, op, "interp: operand %d has %lld elements, the result %lld", i, (long long)m, (long long)n);
        return NULL;
    }
    *stride = m == n ? 1 : 0;
    return e;
}

/* Splits a shape around `axis` into outer x len x inner. */
static bool split_axis(TirType t, int64_t axis, int64_t *outer, int64_t *len, int64_t *inner) {
    if (t.rank < 1 || axis < 0 || axis >= t.rank)
        return false;
    *outer = *inner = 1;
    for (int d = 0; d < axis; d++)
        *outer *= t.shape[d];
    *len = t.shape[axis];
    for (int d = (int)axis + 1; d < t.rank; d++)
        *inner *= t.shape[d];
    return true;
}

/* The one operand (`m` elements) and the result (`n`) of a shape op, a reduction or a
 * scan.  With `sp`, the operand's shape is also split around the axis attribute into
 * sp[0] outer x sp[1] len x sp[2] inner, checked before the result is made. */
static bool src_and_res(TiInterp *ip, TiFrame *fr, const TirOp *op, TiElem **x, int64_t *m, int64_t *sp, TiElem **r,
                        int64_t *n) {
    if (op->nopnd < 1) {
        ti_error(ip, op, "interp: missing operand");
        return false;
    }
    if (!(*x = ti_get(ip, fr, op, op->opnd[0], m)))
        return false;
    if (sp && !split_axis(op->opnd[0]->ty, op->attr.i[0], &sp[0], &sp[1], &sp[2])) {
        ti_error(ip, op, "interp: axis %lld out of range", (long long)op->attr.i[0]);
        return false;
    }
    return (*r = def_res(ip, fr, op, n)) != NULL;
}

/* ---- making values ------------------------------------------------------------------ */

int ti_op_constant(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n;
    TiElem *r = def_res(ip, fr, op, &n);
    if (!r)
        return TI_ERR;
    TirType t = op->res[0]->ty;
    TiElem e;
    if (ti_kind_float(ti_kind(t))) {
        /* An integer literal given to a float constant keeps its value. */
        double v = op->attr.fval == 0 && op->attr.ival != 0 ? (double)op->attr.ival : op->attr.fval;
        e.f = tir_round_to((TirScalar)t.elem, v);
    } else if (t.ptr) {
        e.u = (uint64_t)op->attr.ival;
    } else {
        int64_t v = op->attr.ival == 0 && op->attr.fval != 0 ? (int64_t)op->attr.fval : op->attr.ival;
        e.i = ti_norm((TirScalar)t.elem, (uint64_t)v);
    }
    for (int64_t i = 0; i < n; i++)
        r[i] = e;
    return TI_OK;
}

int ti_op_arange(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n;
    TiElem *r = def_res(ip, fr, op, &n);
    if (!r)
        return TI_ERR;
    if (op->attr.i[1] - op->attr.i[0] != n)
        return ti_error(ip, op, "interp: arange [%lld, %lld) does not give %lld elements", (long long)op->attr.i[0],
                        (long long)op->attr.i[1], (long long)n);
    for (int64_t i = 0; i < n; i++)
        r[i].i = ti_norm(TIR_I32, (uint64_t)(op->attr.i[0] + i));
    return TI_OK;
}

int ti_op_splat(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, s;
    TiElem *r = def_res(ip, fr, op, &n);
    if (!r)
        return TI_ERR;
    TiElem *x = ew_opnd(ip, fr, op, 0, n, &s);
    if (!x)
        return TI_ERR;
    for (int64_t i = 0; i < n; i++)
        r[i] = x[i * s];
    return TI_OK;
}

/* expand_dims, reshape, convert_layout and the hints keep every element in order. */
int ti_op_copy(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, m;
    TiElem *x, *r;
    if (!src_and_res(ip, fr, op, &x, &m, NULL, &r, &n))
        return TI_ERR;
    if (m != n)
        return ti_error(ip, op, "interp: %lld elements cannot become %lld", (long long)m, (long long)n);
    memcpy(r, x, (size_t)n * sizeof *r);
    return TI_OK;
}

/* Visits every index of `shape` in row-major order, with the source offset advancing
 * by `stride` per dimension: the one loop behind broadcast and trans. */
static void gather_strided(TiElem *r, const TiElem *x, int rank, const int32_t *shape, const int64_t *stride,
                           int64_t n) {
    int64_t idx[TIR_MAXRANK] = {0}, off = 0;
    for (int64_t i = 0; i < n; i++) {
        r[i] = x[off];
        for (int d = rank - 1; d >= 0; d--) {
            off += stride[d];
            if (++idx[d] < shape[d])
                break;
            off -= stride[d] * shape[d];
            idx[d] = 0;
        }
    }
}

int ti_op_broadcast(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, m;
    TiElem *x, *r;
    if (!src_and_res(ip, fr, op, &x, &m, NULL, &r, &n))
        return TI_ERR;
    TirType st = op->opnd[0]->ty, rt = op->res[0]->ty;
    if (rt.rank == 0 || m == 1) {
        for (int64_t i = 0; i < n; i++)
            r[i] = x[0];
        return TI_OK;
    }
    if (st.rank > rt.rank)
        return ti_error(ip, op, "interp: broadcast to a lower rank");
    /* Dimensions align at the right; a source dimension of 1 repeats. */
    int64_t stride[TIR_MAXRANK] = {0}, acc = 1;
    int lead = rt.rank - st.rank;
    for (int d = rt.rank - 1; d >= lead; d--) {
        int32_t sd = st.shape[d - lead];
        if (sd != 1 && sd != rt.shape[d])
            return ti_error(ip, op, "interp: dimension %d of size %d cannot broadcast to %d", d - lead, sd,
                            rt.shape[d]);
        stride[d] = sd == 1 ? 0 : acc;
        acc *= sd;
    }
    gather_strided(r, x, rt.rank, rt.shape, stride, n);
    return TI_OK;
}

int ti_op_trans(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, m;
    TiElem *x, *r;
    if (!src_and_res(ip, fr, op, &x, &m, NULL, &r, &n))
        return TI_ERR;
    TirType st = op->opnd[0]->ty, rt = op->res[0]->ty;
    int rank = rt.rank;
    if (st.rank != rank || m != n)
        return ti_error(ip, op, "interp: trans changes the rank or size");
    int64_t perm[TIR_MAXRANK];
    bool unset = true;
    for (int d = 0; d < rank; d++) {
        perm[d] = op->attr.i[d];
        if (perm[d])
            unset = false;
    }
    if (unset) /* no attribute: reverse the dimensions (2-D: the transpose) */
        for (int d = 0; d < rank; d++)
            perm[d] = rank - 1 - d;
    int64_t sstride[TIR_MAXRANK], acc = 1, stride[TIR_MAXRANK];
    for (int d = rank - 1; d >= 0; d--) {
        sstride[d] = acc;
        acc *= st.shape[d];
    }
    unsigned used = 0;
    for (int d = 0; d < rank; d++) {
        if (perm[d] < 0 || perm[d] >= rank || (used >> perm[d]) & 1 || rt.shape[d] != st.shape[perm[d]])
            return ti_error(ip, op, "interp: bad permutation for trans");
        used |= 1u << perm[d];
        stride[d] = sstride[perm[d]];
    }
    gather_strided(r, x, rank, rt.shape, stride, n);
    return TI_OK;
}

/* ---- casts -------------------------------------------------------------------------- */

static TiElem cast_elem(TiKind fk, TirScalar ts, TiKind tk, TiElem x) {
    TiElem r;
    bool from_float = ti_kind_float(fk);
    switch (tk) {
    case TI_BOOL:
        /* Like a comparison `!= 0`: NaN is true. */
        r.i = from_float ? x.f != 0 : x.u != 0;
        break;
    case TI_SINT:
    case TI_UINT: r.i = from_float ? tir_float_to_int(ts, x.f) : ti_norm(ts, x.u); break;
    case TI_PTR: r.u = from_float ? 0 : x.u; break;
    case TI_F32:
        if (from_float)
            r.f = (double)(float)x.f;
        else if (fk == TI_SINT)
            r.f = (double)(float)x.i;
        else
            r.f = (double)(float)x.u;
        break;
    case TI_F64:
        if (from_float)
            r.f = x.f;
        else if (fk == TI_SINT)
            r.f = (double)x.i;
        else
            r.f = (double)x.u;
        break;
    default: /* narrow: one rounding from the exact value (integers are exact in a
              * double up to 2^53, far beyond every narrow format's range) */
        if (from_float)
            r.f = tir_round_to(ts, x.f);
        else if (fk == TI_SINT)
            r.f = tir_round_to(ts, (double)x.i);
        else
            r.f = tir_round_to(ts, (double)x.u);
        break;
    }
    return r;
}

int ti_op_cast(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, s;
    TiElem *r = def_res(ip, fr, op, &n);
    if (!r)
        return TI_ERR;
    TiElem *x = ew_opnd(ip, fr, op, 0, n, &s);
    if (!x)
        return TI_ERR;
    TiKind fk = ti_kind(op->opnd[0]->ty), tk = ti_kind(op->res[0]->ty);
    TirScalar ts = (TirScalar)op->res[0]->ty.elem;
    for (int64_t i = 0; i < n; i++)
        r[i] = cast_elem(fk, ts, tk, x[i * s]);
    return TI_OK;
}

/* ---- binary arithmetic -------------------------------------------------------------- */

/* fmax / fmin: a NaN operand loses to a number; +0 is larger than -0. */
static inline double fmax_d(double a, double b) {
    if (a != a)
        return b;
    if (b != b)
        return a;
    if (a == b)
        return signbit(a) ? b : a;
    return a > b ? a : b;
}
static inline double fmin_d(double a, double b) {
    if (a != a)
        return b;
    if (b != b)
        return a;
    if (a == b)
        return signbit(a) ? a : b;
    return a < b ? a : b;
}

/* Integer binary op on 64-bit sign/zero-extended values, wrapped to s afterwards. */
static inline int64_t int_binop(int code, TirScalar s, bool sgn, int bits, TiElem a, TiElem b) {
    uint64_t r;
    switch (code) {
    case TIR_OP_ADD: r = a.u + b.u; break;
    case TIR_OP_SUB: r = a.u - b.u; break;
    case TIR_OP_MUL: r = a.u * b.u; break;
    case TIR_OP_DIV:
        if (b.u == 0)
            r = ~0ull; /* the GPU's answer; all bits set */
        else if (sgn)
            r = (b.i == -1) ? 0 - a.u : (uint64_t)(a.i / b.i);
        else
            r = a.u / b.u;
        break;
    case TIR_OP_REM:
        if (b.u == 0)
            r = a.u;
        else if (sgn)
            r = (b.i == -1) ? 0 : (uint64_t)(a.i % b.i);
        else
            r = a.u % b.u;
        break;
    case TIR_OP_AND: r = a.u & b.u; break;
    case TIR_OP_OR: r = a.u | b.u; break;
    case TIR_OP_XOR: r = a.u ^ b.u; break;
    case TIR_OP_SHL: {
        /* The amount is read unsigned in the operand's width: a negative amount is huge. */
        uint64_t amt = bits < 64 ? b.u & ((1ull << bits) - 1) : b.u;
        r = amt >= (uint64_t)bits ? 0 : a.u << amt;
        break;
    }
    case TIR_OP_SHR: {
        uint64_t amt = bits < 64 ? b.u & ((1ull << bits) - 1) : b.u;
        if (sgn)
            r = (uint64_t)(amt >= (uint64_t)bits ? (a.i < 0 ? -1 : 0) : a.i >> amt);
        else
            r = amt >= (uint64_t)bits ? 0 : a.u >> amt;
        break;
    }
    case TIR_OP_MAXIMUM: r = sgn ? (a.i > b.i ? a.u : b.u) : (a.u > b.u ? a.u : b.u); break;
    case TIR_OP_MINIMUM: r = sgn ? (a.i < b.i ? a.u : b.u) : (a.u < b.u ? a.u : b.u); break;
    default: r = 0; break;
    }
    return ti_norm(s, r);
}

/* The float binary ops as expressions in a and b of the C type T.  fmod is exact and
 * fmax/fmin return an operand, so going through double changes no float result. */
#define TI_FLOAT_BINOPS(X, T) \
    X(ADD, a + b)             \
    X(SUB, a - b)             \
    X(MUL, a *b) X(DIV, a / b) X(REM, (T)fmod(a, b)) X(MAXIMUM, (T)fmax_d(a, b)) X(MINIMUM, (T)fmin_d(a, b))

#define F32_LOOP(EXPR)                                        \
    for (int64_t i = 0; i < n; i++) {                         \
        float a = (float)A[i * sa].f, b = (float)B[i * sb].f; \
        R[i].f = ti_fres(s, (EXPR));                          \
    }                                                         \
    break
#define F64_LOOP(EXPR)                           \
    for (int64_t i = 0; i < n; i++) {            \
        double a = A[i * sa].f, b = B[i * sb].f; \
        R[i].f = (EXPR);                         \
    }                                            \
    break
#define F32_CASE(OP, EXPR) \
    case TIR_OP_##OP: F32_LOOP(EXPR);
#define F64_CASE(OP, EXPR) \
    case TIR_OP_##OP: F64_LOOP(EXPR);

int ti_op_binary(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, sa, sb;
    TiElem *R = def_res(ip, fr, op, &n);
    if (!R)
        return TI_ERR;
    TiElem *A = ew_opnd(ip, fr, op, 0, n, &sa), *B = ew_opnd(ip, fr, op, 1, n, &sb);
    if (!A || !B)
        return TI_ERR;
    TirType t = op->res[0]->ty;
    TiKind k = ti_kind(t);
    TirScalar s = (TirScalar)t.elem;
    int code = op->code;
    if (k == TI_F32 || k == TI_NARROW) {
        switch (code) {
            TI_FLOAT_BINOPS(F32_CASE, float)
        default: return ti_error(ip, op, "interp: %s is not defined on floats", tir_op_info[code].name);
        }
        return TI_OK;
    }
    if (k == TI_F64) {
        switch (code) {
            TI_FLOAT_BINOPS(F64_CASE, double)
        default: return ti_error(ip, op, "interp: %s is not defined on floats", tir_op_info[code].name);
        }
        return TI_OK;
    }
    if (k == TI_PTR)
        return ti_error(ip, op, "interp: %s is not defined on pointers", tir_op_info[code].name);
    bool sgn = k == TI_SINT;
    int bits = tir_scalar_bits(s);
    /* The common cases get their own loops; the rest go through int_binop. */
    if (code == TIR_OP_ADD && sa && sb) {
        for (int64_t i = 0; i < n; i++)
            R[i].i = ti_norm(s, A[i].u + B[i].u);
    } else if (code == TIR_OP_MUL && sa && sb) {
        for (int64_t i = 0; i < n; i++)
            R[i].i = ti_norm(s, A[i].u * B[i].u);
    } else {
        for (int64_t i = 0; i < n; i++)
            R[i].i = int_binop(code, s, sgn, bits, A[i * sa], B[i * sb]);
    }
    return TI_OK;
}

int ti_op_cmp(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, sa, sb;
    TiElem *R = def_res(ip, fr, op, &n);
    if (!R)
        return TI_ERR;
    TiElem *A = ew_opnd(ip, fr, op, 0, n, &sa), *B = ew_opnd(ip, fr, op, 1, n, &sb);
    if (!A || !B)
        return TI_ERR;
    TiKind k = ti_kind(op->opnd[0]->ty);
    int pred = (int)op->attr.i[0];
    if (pred < 0 || pred > TIR_CMP_GE)
        return ti_error(ip, op, "interp: bad predicate %d", pred);
    /* Ordered comparisons: false with a NaN, except `ne`.  Doubles hold every
     * element type exactly, so one loop serves all float widths. */
#define CMP_LOOP(FIELD)                                                  \
    for (int64_t i = 0; i < n; i++) {                                    \
        __typeof__(A[0].FIELD) a = A[i * sa].FIELD, b = B[i * sb].FIELD; \
        bool c;                                                          \
        switch (pred) {                                                  \
        case TIR_CMP_EQ: c = a == b; break;                              \
        case TIR_CMP_NE: c = a != b; break;                              \
        case TIR_CMP_LT: c = a < b; break;                               \
        case TIR_CMP_LE: c = a <= b; break;                              \
        case TIR_CMP_GT: c = a > b; break;                               \
        default: c = a >= b; break;                                      \
        }                                                                \
        R[i].i = c;                                                      \
    }
    if (ti_kind_float(k)) {
        CMP_LOOP(f)
    } else if (k == TI_SINT) {
        CMP_LOOP(i)
    } else {
        CMP_LOOP(u)
    }
#undef CMP_LOOP
    return TI_OK;
}

int ti_op_select(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, sc, sa, sb;
    TiElem *R = def_res(ip, fr, op, &n);
    if (!R)
        return TI_ERR;
    TiElem *C = ew_opnd(ip, fr, op, 0, n, &sc), *A = ew_opnd(ip, fr, op, 1, n, &sa),
           *B = ew_opnd(ip, fr, op, 2, n, &sb);
    if (!C || !A || !B)
        return TI_ERR;
    for (int64_t i = 0; i < n; i++)
        R[i] = C[i * sc].i ? A[i * sa] : B[i * sb];
    return TI_OK;
}

int ti_op_fma(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, sa, sb, sc;
    TiElem *R = def_res(ip, fr, op, &n);
    if (!R)
        return TI_ERR;
    TiElem *A = ew_opnd(ip, fr, op, 0, n, &sa), *B = ew_opnd(ip, fr, op, 1, n, &sb),
           *C = ew_opnd(ip, fr, op, 2, n, &sc);
    if (!A || !B || !C)
        return TI_ERR;
    TirType t = op->res[0]->ty;
    TiKind k = ti_kind(t);
    TirScalar s = (TirScalar)t.elem;
    if (k == TI_F64) {
        for (int64_t i = 0; i < n; i++)
            R[i].f = fma(A[i * sa].f, B[i * sb].f, C[i * sc].f);
    } else if (k == TI_F32 || k == TI_NARROW) {
        for (int64_t i = 0; i < n; i++)
            R[i].f = ti_fres(s, fmaf((float)A[i * sa].f, (float)B[i * sb].f, (float)C[i * sc].f));
    } else if (k == TI_PTR) {
        return ti_error(ip, op, "interp: fma is not defined on pointers");
    } else {
        for (int64_t i = 0; i < n; i++)
            R[i].i = ti_norm(s, A[i * sa].u * B[i * sb].u + C[i * sc].u);
    }
    return TI_OK;
}

int ti_op_addptr(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, sa, sb;
    TiElem *R = def_res(ip, fr, op, &n);
    if (!R)
        return TI_ERR;
    TiElem *P = ew_opnd(ip, fr, op, 0, n, &sa), *O = ew_opnd(ip, fr, op, 1, n, &sb);
    if (!P || !O)
        return TI_ERR;
    TirType pt = op->opnd[0]->ty;
    if (!pt.ptr)
        return ti_error(ip, op, "interp: addptr of a non-pointer");
    if (ti_kind_float(ti_kind(op->opnd[1]->ty)))
        return ti_error(ip, op, "interp: addptr by a float offset");
    /* Offsets are sign- or zero-extended already.  The GPU's 64-bit address math wraps, so
     * an offset past the address space (an i64 index times the element size) could land
     * back inside a buffer and pass the bounds check: it is reported instead. */
    uint64_t size = (uint64_t)tir_scalar_bytes((TirScalar)pt.elem);
    bool sgn = ti_kind(op->opnd[1]->ty) == TI_SINT;
    for (int64_t i = 0; i < n; i++) {
        __int128 off = sgn ? (__int128)O[i * sb].i : (__int128)O[i * sb].u;
        __int128 addr = (__int128)P[i * sa].u + off * (__int128)size;
        if (addr < 0 || addr > (__int128)UINT64_MAX) {
            char name[96];
            ti_value_name(name, sizeof name, op->res[0]);
            return ti_error(ip, op,
                            "lane %" PRId64 " of %s: 0x%" PRIx64 " + %s%" PRIu64 " elements of %" PRIu64
                            " bytes is past the 64-bit address space (it would wrap around), in program (%" PRId64
                            ",%" PRId64 ",%" PRId64 ")",
                            i, name, P[i * sa].u, sgn && O[i * sb].i < 0 ? "-" : "",
                            sgn && O[i * sb].i < 0 ? 0 - O[i * sb].u : O[i * sb].u, size, ip->pid[0], ip->pid[1],
                            ip->pid[2]);
        }
        R[i].u = (uint64_t)addr;
    }
    return TI_OK;
}

/* ---- unary ------------------------------------------------------------------------- */

static float neg_f(float x) {
    return -x;
}
static double neg_d(double x) {
    return -x;
}

typedef struct {
    int code;
    float (*f32)(float);
    double (*f64)(double);
} TiMathFn;

/* The element type decides the precision: f32 through the float functions, f64
 * through the double ones, narrow types through f32 then rounded.  The transcendental
 * functions are ir/fmath.c's, the GPU's algorithms (tir_m_f32/tir_m_f64); these are the
 * ones libm computes exactly as the GPU does (correctly rounded). */
static const TiMathFn ti_math_fns[] = {
    {TIR_OP_NEG, neg_f, neg_d},    {TIR_OP_ABS, fabsf, fabs},  {TIR_OP_SQRT, sqrtf, sqrt},
    {TIR_OP_FLOOR, floorf, floor}, {TIR_OP_CEIL, ceilf, ceil},
};

/* Smallest power of two >= x (1 for x <= 1); wraps to 0 past the type's range. */
static uint64_t next_pow2_u(uint64_t x) {
    if (x <= 1)
        return 1;
    if (x > (1ull << 63))
        return 0;
    return 1ull << (64 - __builtin_clzll(x - 1));
}

int ti_op_unary(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, sa;
    TiElem *R = def_res(ip, fr, op, &n);
    if (!R)
        return TI_ERR;
    TiElem *A = ew_opnd(ip, fr, op, 0, n, &sa);
    if (!A)
        return TI_ERR;
    TirType t = op->res[0]->ty;
    TiKind k = ti_kind(t);
    TirScalar s = (TirScalar)t.elem;
    int code = op->code;
    if (k == TI_PTR)
        return ti_error(ip, op, "interp: %s is not defined on pointers", tir_op_info[code].name);
    if (ti_kind_float(k)) {
        if (code == TIR_OP_NEXT_POW2) {
            for (int64_t i = 0; i < n; i++) {
                double x = A[i * sa].f;
                R[i].f = tir_round_to(s, x <= 1 ? 1 : exp2(ceil(log2(x))));
            }
            return TI_OK;
        }
        float (*f32)(float) = tir_m_f32(code, tir_op_fast(op));
        double (*f64)(double) = tir_m_f64(code);
        for (size_t j = 0; j < sizeof ti_math_fns / sizeof ti_math_fns[0]; j++)
            if (ti_math_fns[j].code == code)
                f32 = ti_math_fns[j].f32, f64 = ti_math_fns[j].f64;
        if (!f32 || !f64)
            return ti_error(ip, op, "interp: %s is not defined on floats", tir_op_info[code].name);
        if (k == TI_F64)
            for (int64_t i = 0; i < n; i++)
                R[i].f = f64(A[i * sa].f);
        else
            for (int64_t i = 0; i < n; i++)
                R[i].f = ti_fres(s, f32((float)A[i * sa].f));
        return TI_OK;
    }
    if (tir_op_info[code].traits & TIR_T_MATH && code != TIR_OP_ABS)
        return ti_error(ip, op, "interp: %s is only defined on floats", tir_op_info[code].name);
    for (int64_t i = 0; i < n; i++) {
        TiElem a = A[i * sa];
        uint64_t r;
        switch (code) {
        case TIR_OP_NEG: r = 0 - a.u; break;
        case TIR_OP_NOT: r = ~a.u; break;
        case TIR_OP_ABS: r = (k == TI_SINT && a.i < 0) ? 0 - a.u : a.u; break;
        case TIR_OP_NEXT_POW2: r = (k == TI_SINT && a.i < 1) ? 1 : next_pow2_u(a.u); break;
        default: return ti_error(ip, op, "interp: %s is not defined on integers", tir_op_info[code].name);
        }
        R[i].i = ti_norm(s, r);
    }
    return TI_OK;
}

/* ---- reductions and scans ------------------------------------------------------------ */

int ti_op_reduce(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, m, sp[3];
    TiElem *X, *R;
    if (!src_and_res(ip, fr, op, &X, &m, sp, &R, &n))
        return TI_ERR;
    const int64_t outer = sp[0], len = sp[1], inner = sp[2];
    TirType xt = op->opnd[0]->ty;
    if (n != outer * inner || len < 1)
        return ti_error(ip, op, "interp: result shape does not match the reduction");
    TiKind k = ti_kind(xt);
    TirScalar s = (TirScalar)xt.elem;
    int code = op->code;
    bool arg = code == TIR_OP_ARGMAX || code == TIR_OP_ARGMIN;
    bool want_max = code == TIR_OP_REDUCE_MAX || code == TIR_OP_ARGMAX;
    if (k == TI_PTR)
        return ti_error(ip, op, "interp: reduction of pointers");
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            const TiElem *x = X + o * len * inner + in;
            TiElem *r = &R[o * inner + in];
            if (ti_kind_float(k) && code == TIR_OP_REDUCE_SUM) {
                /* Narrow floats accumulate in f32 and round once at the end. */
                if (k == TI_F64) {
                    double acc = 0;
                    for (int64_t j = 0; j < len; j++)
                        acc += x[j * inner].f;
                    r->f = acc;
                } else {
                    float acc = 0;
                    for (int64_t j = 0; j < len; j++)
                        acc += (float)x[j * inner].f;
                    r->f = ti_fres(s, acc);
                }
            } else if (ti_kind_float(k)) {
                /* NaNs lose to numbers (fmax); the first best index wins ties. */
                int64_t best = -1;
                double bv = NAN;
                for (int64_t j = 0; j < len; j++) {
                    double v = x[j * inner].f;
                    if (v != v)
                        continue;
                    if (best < 0 || (want_max ? v > bv : v < bv) ||
                        (!arg && v == bv && (want_max ? !signbit(v) : signbit(v)))) {
                        best = j;
                        bv = v;
                    }
                }
                if (arg)
                    r->i = best < 0 ? 0 : best;
                else
                    r->f = bv;
            } else if (code == TIR_OP_REDUCE_SUM) {
                uint64_t acc = 0;
                for (int64_t j = 0; j < len; j++)
                    acc += x[j * inner].u;
                r->i = ti_norm(s, acc);
            } else {
                bool sgn = k == TI_SINT;
                int64_t best = 0;
                TiElem bv = x[0];
                for (int64_t j = 1; j < len; j++) {
                    TiElem v = x[j * inner];
                    bool better = sgn ? (want_max ? v.i > bv.i : v.i < bv.i) : (want_max ? v.u > bv.u : v.u < bv.u);
                    if (better) {
                        best = j;
                        bv = v;
                    }
                }
                if (arg)
                    r->i = best;
                else
                    *r = bv;
            }
        }
    return TI_OK;
}

int ti_op_cumsum(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    int64_t n, m, sp[3];
    TiElem *X, *R;
    if (!src_and_res(ip, fr, op, &X, &m, sp, &R, &n))
        return TI_ERR;
    const int64_t outer = sp[0], len = sp[1], inner = sp[2];
    TirType xt = op->opnd[0]->ty;
    if (n != m)
        return ti_error(ip, op, "interp: cumsum changes the size");
    TiKind k = ti_kind(xt);
    TirScalar s = (TirScalar)xt.elem;
    if (k == TI_PTR)
        return ti_error(ip, op, "interp: cumsum of pointers");
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = o * len * inner + in;
            if (k == TI_F64) {
                double acc = 0;
                for (int64_t j = 0; j < len; j++)
                    R[base + j * inner].f = acc += X[base + j * inner].f;
            } else if (ti_kind_float(k)) {
                float acc = 0;
                for (int64_t j = 0; j < len; j++) {
                    acc += (float)X[base + j * inner].f;
                    R[base + j * inner].f = ti_fres(s, acc);
                }
            } else {
                uint64_t acc = 0;
                for (int64_t j = 0; j < len; j++) {
                    acc += X[base + j * inner].u;
                    R[base + j * inner].i = ti_norm(s, acc);
                }
            }
        }
    return TI_OK;
}

/* ---- dot --------------------------------------------------------------------------- */

/* f32 -> tf32: keep 10 mantissa bits, round to nearest even (inf and NaN pass). */
static float round_tf32(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0xfffu + ((u >> 13) & 1);
        u &= ~0x1fffu;
    }
    memcpy(&x, &u, 4);
    return x;
}

int ti_op_dot(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    if (op->nopnd != 3)
        return ti_error(ip, op, "interp: dot takes a, b, acc");
    int64_t na, nb, nc, n;
    TiElem *A = ti_get(ip, fr, op, op->opnd[0], &na), *B = ti_get(ip, fr, op, op->opnd[1], &nb),
           *C = ti_get(ip, fr, op, op->opnd[2], &nc);
    if (!A || !B || !C)
        return TI_ERR;
    TirType at = op->opnd[0]->ty, bt = op->opnd[1]->ty, ct = op->opnd[2]->ty;
    int rank = at.rank;
    if (rank < 2 || rank > 3 || bt.rank != rank || ct.rank != rank)
        return ti_error(ip, op, "interp: dot takes 2-D (or batched 3-D) tiles");
    int64_t batch = rank == 3 ? at.shape[0] : 1;
    int64_t M = at.shape[rank - 2], K = at.shape[rank - 1], N = bt.shape[rank - 1];
    if (bt.shape[rank - 2] != K || ct.shape[rank - 2] != M || ct.shape[rank - 1] != N ||
        (rank == 3 && (bt.shape[0] != batch || ct.shape[0] != batch)))
        return ti_error(ip, op, "interp: dot shapes do not agree");
    TiElem *R = def_res(ip, fr, op, &n);
    if (!R)
        return TI_ERR;
    if (n != nc)
        return ti_error(ip, op, "interp: dot result shape differs from acc");
    TiKind ka = ti_kind(at), kc = ti_kind(op->res[0]->ty);
    TirScalar rs = (TirScalar)op->res[0]->ty.elem;
    if (ka == TI_PTR || kc == TI_PTR)
        return ti_error(ip, op, "interp: dot of pointers");
    if (!ti_kind_float(ka)) {
        /* Integer inputs (i8) accumulate in the accumulator's integer type, wrapping. */
        for (int64_t bi = 0; bi < batch; bi++) {
            const TiElem *a = A + bi * M * K, *b = B + bi * K * N, *c = C + bi * M * N;
            TiElem *r = R + bi * M * N;
            for (int64_t i = 0; i < M * N; i++)
                r[i].u = c[i].u;
            for (int64_t i = 0; i < M; i++)
                for (int64_t kk = 0; kk < K; kk++) {
                    uint64_t av = a[i * K + kk].u;
                    for (int64_t j = 0; j < N; j++)
                        r[i * N + j].u += av * b[kk * N + j].u;
                }
            for (int64_t i = 0; i < M * N; i++)
                r[i].i = ti_norm(rs, r[i].u);
        }
        return TI_OK;
    }
    if (ka == TI_F64) {
        for (int64_t bi = 0; bi < batch; bi++) {
            const TiElem *a = A + bi * M * K, *b = B + bi * K * N, *c = C + bi * M * N;
            TiElem *r = R + bi * M * N;
            for (int64_t i = 0; i < M * N; i++)
                r[i].f = c[i].f;
            for (int64_t i = 0; i < M; i++)
                for (int64_t kk = 0; kk < K; kk++)
                    for (int64_t j = 0; j < N; j++)
                        r[i * N + j].f = fma(a[i * K + kk].f, b[kk * N + j].f, r[i * N + j].f);
        }
        return TI_OK;
    }
    /* Float inputs: products of narrow values are exact in f32; the sum runs along k
     * in order, one fused multiply-add per step, as an f32 MMA chain does. */
    bool tf32 = op->attr.i[0] == 1 && ka == TI_F32;
    float *fa = malloc((size_t)(M * K + K * N + M * N) * sizeof(float));
    if (!fa)
        return ti_error(ip, op, "interp: out of memory");
    float *fb = fa + M * K, *fc = fb + K * N;
    for (int64_t bi = 0; bi < batch; bi++) {
        const TiElem *a = A + bi * M * K, *b = B + bi * K * N, *c = C + bi * M * N;
        TiElem *r = R + bi * M * N;
        for (int64_t i = 0; i < M * K; i++)
            fa[i] = tf32 ? round_tf32((float)a[i].f) : (float)a[i].f;
        for (int64_t i = 0; i < K * N; i++)
            fb[i] = tf32 ? round_tf32((float)b[i].f) : (float)b[i].f;
        for (int64_t i = 0; i < M * N; i++)
            fc[i] = (float)c[i].f;
        for (int64_t i = 0; i < M; i++)
            for (int64_t kk = 0; kk < K; kk++) {
                float av = fa[i * K + kk];
                float *crow = fc + i * N;
                const float *brow = fb + kk * N;
                for (int64_t j = 0; j < N; j++)
                    crow[j] = fmaf(av, brow[j], crow[j]);
            }
        for (int64_t i = 0; i < M * N; i++)
            r[i].f = kc == TI_F64 ? (double)fc[i] : ti_fres(rs, fc[i]);
    }
    free(fa);
    return TI_OK;
}
