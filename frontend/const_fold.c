/* Folding of the front end's compile-time scalars (literals, constants, clause values)
 * through ir/fold.c, so that a constant expression stores what the same expression
 * stores on run-time values (docs/language.md, "Constant expressions").  Shared by the
 * clause evaluator (clauses.c) and elaboration (elaborate*.c). */
#include "sema_internal.h"

static const struct {
    TirOpcode code;
    int pred; /* TirCmp + 1 for comparisons */
} ast_to_tir[] = {
    [AST_OP_OROR] = {TIR_OP_OR, 0},
    [AST_OP_ANDAND] = {TIR_OP_AND, 0},
    [AST_OP_OR] = {TIR_OP_OR, 0},
    [AST_OP_XOR] = {TIR_OP_XOR, 0},
    [AST_OP_AND] = {TIR_OP_AND, 0},
    [AST_OP_EQ] = {TIR_OP_CMP, TIR_CMP_EQ + 1},
    [AST_OP_NE] = {TIR_OP_CMP, TIR_CMP_NE + 1},
    [AST_OP_LT] = {TIR_OP_CMP, TIR_CMP_LT + 1},
    [AST_OP_LE] = {TIR_OP_CMP, TIR_CMP_LE + 1},
    [AST_OP_GT] = {TIR_OP_CMP, TIR_CMP_GT + 1},
    [AST_OP_GE] = {TIR_OP_CMP, TIR_CMP_GE + 1},
    [AST_OP_SHL] = {TIR_OP_SHL, 0},
    [AST_OP_SHR] = {TIR_OP_SHR, 0},
    [AST_OP_ADD] = {TIR_OP_ADD, 0},
    [AST_OP_SUB] = {TIR_OP_SUB, 0},
    [AST_OP_MUL] = {TIR_OP_MUL, 0},
    [AST_OP_DIV] = {TIR_OP_DIV, 0},
    [AST_OP_REM] = {TIR_OP_REM, 0},
};

TirScalar tf_const_source_type(TfConst v) {
    if (v.typed)
        return (TirScalar)v.ty;
    return v.is_float ? TIR_F64 : TIR_I64;
}

TfConst tf_const_convert(TfConst v, TirScalar from, TirScalar to) {
    TirKonst in = tir_konst_norm(from, (TirKonst){v.is_float, v.i, v.f}), out;
    if (!tir_fold_elem(TIR_OP_CAST, 0, from, to, &in, &out)) /* an int -> bf16 beyond 2^53 */
        out =
            tir_konst_norm(to, (TirKonst){true, 0, tir_scalar_is_signed(from) ? (double)in.i : (double)(uint64_t)in.i});
    TfConst r = {out.is_float, out.i, out.is_float ? out.f : (double)out.i, true, (uint8_t)to};
    return r;
}

bool tf_const_fits(TfConst v, TirScalar t) {
    if (v.is_float || tir_scalar_is_float(t) || t == TIR_I1)
        return true;
    int bits = tir_scalar_bits(t);
    if (bits >= 64)
        return true; /* a literal is at most 64 bits: its bits are the value */
    return v.i >= -((int64_t)1 << (bits - 1)) && v.i < ((int64_t)1 << bits);
}

bool tf_fold_tir(TirOpcode code, int pred, TirScalar t, TfConst a, TfConst b, TfConst *out) {
    TirKonst in[2] = {tir_konst_norm(t, (TirKonst){a.is_float, a.i, a.f}),
                      tir_konst_norm(t, (TirKonst){b.is_float, b.i, b.f})};
    TirScalar rs = code == TIR_OP_CMP ? TIR_I1 : t;
    TirKonst r;
    if (!tir_fold_elem(code, pred, t, rs, in, &r))
        return false;
    *out = (TfConst){r.is_float, r.i, r.is_float ? r.f : (double)r.i, true, (uint8_t)rs};
    return true;
}

bool tf_fold_binop(AstOp op, TirScalar t, TfConst a, TfConst b, TfConst *out) {
    int pred = ast_to_tir[op].pred;
    return tf_fold_tir(ast_to_tir[op].code, pred ? pred - 1 : 0, t, a, b, out);
}

bool tf_fold_unop(TirOpcode code, TirScalar t, TfConst a, TfConst *out) {
    TirKonst in = tir_konst_norm(t, (TirKonst){a.is_float, a.i, a.f}), r;
    if (!tir_fold_elem(code, 0, t, t, &in, &r))
        return false;
    *out = (TfConst){r.is_float, r.i, r.is_float ? r.f : (double)r.i, true, (uint8_t)t};
    return true;
}

TirScalar tf_promote_ints(TirScalar a, TirScalar b) {
    int bits = tir_scalar_bits(a) > tir_scalar_bits(b) ? tir_scalar_bits(a) : tir_scalar_bits(b);
    bool sgn = tir_scalar_is_signed(a) || tir_scalar_is_signed(b);
    switch (bits) {
    case 1: return TIR_I1;
    case 8: return sgn ? TIR_I8 : TIR_U8;
    case 16: return sgn ? TIR_I16 : TIR_U16;
    case 32: return sgn ? TIR_I32 : TIR_U32;
    default: return sgn ? TIR_I64 : TIR_U64;
    }
}
