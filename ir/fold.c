/* Constant folding of one element, with the IR's run-time semantics (docs/ir.md).
 *
 * Why one file: the front end folds expressions of constants (literals, `const`
 * parameters, tuned values, clauses) and `canonicalize` folds ops whose operands became
 * constants.  Each used to have its own arithmetic (the front end's in 64 bits and
 * doubles), so the same expression stored one value when folded and another when its
 * operands were run-time values.  Both now call tir_fold_elem, whose answers are the
 * interpreter's: integers wrap at their width, f32 and narrower floats round after every
 * op, division by zero gives all bits set (`rem`: the dividend), `maximum`/`minimum`
 * let a number win over a NaN.  tests/random checks it against the interpreter on
 * run-time values. */
#include "ir.h"

#include <math.h>

#define U(x) ((uint64_t)(x))

int64_t tir_wrap_int(TirScalar s, uint64_t u) {
    if (s == TIR_I1)
        return (int64_t)(u & 1);
    int bits = tir_scalar_bits(s);
    if (bits < 64) {
        uint64_t mask = (1ull << bits) - 1;
        u &= mask;
        if (tir_scalar_is_signed(s) && ((u >> (bits - 1)) & 1))
            u |= ~mask;
    }
    return (int64_t)u;
}

TirKonst tir_konst_norm(TirScalar s, TirKonst k) {
    if (tir_scalar_is_float(s))
        return (TirKonst){true, 0, tir_round_to(s, k.is_float ? k.f : (double)k.i)};
    return (TirKonst){false, tir_wrap_int(s, U(k.i)), 0};
}

static bool is_signed_int(TirScalar s) {
    return s != TIR_I1 && tir_scalar_is_signed(s);
}

/* A float op of type s on a and b: f64 in double; f32 and the narrow formats in f32,
 * then rounded to s (one rounding per op, as the interpreter and the GPU compute). */
static double float_binop(TirOpcode code, TirScalar s, double a, double b) {
    if (s == TIR_F64) {
        switch (code) {
        case TIR_OP_ADD: return a + b;
        case TIR_OP_SUB: return a - b;
        case TIR_OP_MUL: return a * b;
        case TIR_OP_DIV: return a / b;
        default: return fmod(a, b); /* exact */
        }
    }
    float x = (float)a, y = (float)b, r;
    switch (code) {
    case TIR_OP_ADD: r = x + y; break;
    case TIR_OP_SUB: r = x - y; break;
    case TIR_OP_MUL: r = x * y; break;
    case TIR_OP_DIV: r = x / y; break;
    default: r = (float)fmod(x, y); break;
    }
    return tir_round_to(s, r);
}

/* fmax / fmin: a NaN operand loses to a number; +0 is larger than -0. */
static double float_max(double a, double b, bool want_max) {
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    if (a == 0 && b == 0)
        return (signbit(a) != 0) == want_max ? b : a;
    return (a > b) == want_max ? a : b;
}

static bool int_less(TirScalar s, int64_t a, int64_t b) {
    return is_signed_int(s) ? a < b : U(a) < U(b);
}

static uint64_t shift_amount(TirScalar s, int64_t b) {
    int bits = tir_scalar_bits(s);
    uint64_t n = U(b);
    return bits < 64 ? n & ((1ull << bits) - 1) : n; /* read unsigned: a negative amount is huge */
}

static bool fold_int_binop(TirOpcode code, TirScalar s, int64_t a, int64_t b, int64_t *out) {
    int bits = tir_scalar_bits(s);
    bool sgn = is_signed_int(s);
    switch (code) {
    case TIR_OP_ADD: *out = (int64_t)(U(a) + U(b)); return true;
    case TIR_OP_SUB: *out = (int64_t)(U(a) - U(b)); return true;
    case TIR_OP_MUL: *out = (int64_t)(U(a) * U(b)); return true;
    case TIR_OP_DIV:
        if (b == 0)
            *out = -1; /* all bits set, what the GPU returns */
        else if (sgn)
            *out = b == -1 ? (int64_t)(0 - U(a)) : a / b; /* INT_MIN / -1 wraps */
        else
            *out = (int64_t)(U(a) / U(b));
        return true;
    case TIR_OP_REM:
        if (b == 0)
            *out = a;
        else if (sgn)
            *out = b == -1 ? 0 : a % b;
        else
            *out = (int64_t)(U(a) % U(b));
        return true;
    case TIR_OP_AND: *out = a & b; return true;
    case TIR_OP_OR: *out = a | b; return true;
    case TIR_OP_XOR: *out = a ^ b; return true;
    case TIR_OP_SHL: {
        uint64_t n = shift_amount(s, b);
        *out = n >= (uint64_t)bits ? 0 : (int64_t)(U(a) << n);
        return true;
    }
    case TIR_OP_SHR: {
        uint64_t n = shift_amount(s, b);
        if (sgn)
            *out = n >= (uint64_t)bits ? (a < 0 ? -1 : 0) : (a < 0 ? ~(int64_t)(~U(a) >> n) : (int64_t)(U(a) >> n));
        else
            *out = n >= (uint64_t)bits ? 0 : (int64_t)(U(a) >> n);
        return true;
    }
    case TIR_OP_MAXIMUM: *out = int_less(s, a, b) ? b : a; return true;
    case TIR_OP_MINIMUM: *out = int_less(s, b, a) ? b : a; return true;
    default: return false;
    }
}

static bool fold_cmp(TirCmp pred, TirScalar s, TirKonst a, TirKonst b) {
    bool lt, eq;
    if (a.is_float) {
        if (isnan(a.f) || isnan(b.f))
            return pred == TIR_CMP_NE;
        lt = a.f < b.f, eq = a.f == b.f;
    } else {
        lt = int_less(s, a.i, b.i), eq = a.i == b.i;
    }
    switch (pred) {
    case TIR_CMP_EQ: return eq;
    case TIR_CMP_NE: return !eq;
    case TIR_CMP_LT: return lt;
    case TIR_CMP_LE: return lt || eq;
    case TIR_CMP_GT: return !lt && !eq;
    default: return !lt;
    }
}

/* Conversions (docs/ir.md): int -> int wraps (extending by the source's signedness),
 * int -> float rounds to nearest even once, float -> int truncates and saturates (NaN:
 * 0), float -> float rounds to nearest even (f8: satfinite), anything -> i1 is `!= 0`. */
static bool fold_cast(TirScalar s, TirScalar d, TirKonst a, TirKonst *o) {
    bool src_f = tir_scalar_is_float(s), dst_f = tir_scalar_is_float(d);
    if (d == TIR_I1) {
        *o = (TirKonst){false, src_f ? a.f != 0 : a.i != 0, 0};
        return true;
    }
    if (!src_f && !dst_f) {
        *o = (TirKonst){false, a.i, 0};
        return true;
    }
    if (src_f && !dst_f) {
        *o = (TirKonst){false, tir_float_to_int(d, a.f), 0};
        return true;
    }
    if (src_f) {
        *o = (TirKonst){true, 0, a.f};
        return true;
    }
    bool sgn = is_signed_int(s);
    bool exact = sgn ? (a.i >= -(1ll << 53) && a.i <= (1ll << 53)) : U(a.i) <= (1ull << 53);
    double x;
    if (exact || d == TIR_F64)
        x = sgn ? (double)a.i : (double)U(a.i); /* then rounded once to d below */
    else if (d == TIR_F32)
        x = sgn ? (double)(float)a.i : (double)(float)U(a.i);
    else if (d == TIR_BF16)
        return false; /* in range, and rounding through a double could round twice */
    else
        x = sgn ? (double)a.i : (double)U(a.i); /* beyond 2^53 f16 and f8 overflow either way */
    *o = (TirKonst){true, 0, x};
    return true;
}

bool tir_fold_elem(TirOpcode code, int64_t pred, TirScalar s, TirScalar rs, const TirKonst *in, TirKonst *out) {
    TirKonst a = in[0], r = {tir_scalar_is_float(rs), 0, 0};
    bool fl = tir_scalar_is_float(s);
    switch (code) {
    case TIR_OP_ADD:
    case TIR_OP_SUB:
    case TIR_OP_MUL:
    case TIR_OP_DIV:
    case TIR_OP_REM:
        if (fl)
            r.f = float_binop(code, s, a.f, in[1].f);
        else
            fold_int_binop(code, s, a.i, in[1].i, &r.i);
        break;
    case TIR_OP_AND:
    case TIR_OP_OR:
    case TIR_OP_XOR:
    case TIR_OP_SHL:
    case TIR_OP_SHR:
        if (fl || !fold_int_binop(code, s, a.i, in[1].i, &r.i))
            return false;
        break;
    case TIR_OP_MAXIMUM:
    case TIR_OP_MINIMUM:
        if (fl)
            r.f = float_max(a.f, in[1].f, code == TIR_OP_MAXIMUM);
        else
            fold_int_binop(code, s, a.i, in[1].i, &r.i);
        break;
    case TIR_OP_CMP:
        if (pred < TIR_CMP_EQ || pred > TIR_CMP_GE)
            return false;
        r = (TirKonst){false, fold_cmp((TirCmp)pred, s, a, in[1]), 0};
        break;
    case TIR_OP_FMA:
        if (!fl)
            r.i = (int64_t)(U(a.i) * U(in[1].i) + U(in[2].i));
        else if (s == TIR_F64)
            r.f = fma(a.f, in[1].f, in[2].f);
        else
            r.f = fmaf((float)a.f, (float)in[1].f, (float)in[2].f); /* narrow: in f32, then rounded */
        break;
    case TIR_OP_NEG:
        if (fl)
            r.f = -a.f;
        else
            r.i = (int64_t)(0 - U(a.i));
        break;
    case TIR_OP_NOT:
        if (fl)
            return false;
        r.i = ~a.i;
        break;
    case TIR_OP_ABS:
        if (fl)
            r.f = fabs(a.f);
        else
            r.i = is_signed_int(s) && a.i < 0 ? (int64_t)(0 - U(a.i)) : a.i;
        break;
    /* Of the math functions only the exact ones fold; exp, sin, ... on the GPU are
     * approximations that a libm result would not match bit for bit. */
    case TIR_OP_FLOOR:
    case TIR_OP_CEIL:
        if (!fl)
            return false;
        r.f = code == TIR_OP_FLOOR ? floor(a.f) : ceil(a.f);
        break;
    case TIR_OP_CAST:
        if (!fold_cast(s, rs, a, &r))
            return false;
        break;
    default: return false;
    }
    *out = tir_konst_norm(rs, r);
    return true;
}
