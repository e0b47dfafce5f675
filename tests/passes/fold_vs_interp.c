/* The folder in canonicalize must compute exactly what the interpreter computes.
 *
 * For every op the folder knows, every element type and a set of edge values (zeros of
 * both signs, ±1, extremes, NaN, inf, values that round or wrap), this builds a kernel
 * `out = OP(constant a, constant b)`, runs it in the interpreter, canonicalizes it, runs
 * it again and compares the stored bits.  It also checks that folding happened wherever
 * it should (division by zero, float rem and casts to i1 included; ints beyond 2^53 to
 * bf16 excepted), so a folder that
 * silently stopped folding fails too. */
#include "interp.h"
#include "passes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures, cases, folded;

static void diag_print(void *ud, const char *msg) {
    (void)ud;
    fprintf(stderr, "  diag: %s\n", msg);
}

/* The stored element, read back as a number so that NaNs compare equal. */
static bool same_bits(TirScalar s, const unsigned char *a, const unsigned char *b) {
    int n = tir_scalar_bytes(s);
    if (memcmp(a, b, (size_t)n) == 0)
        return true;
    double x, y;
    switch (s) {
    case TIR_F16: {
        uint16_t u, v;
        memcpy(&u, a, 2), memcpy(&v, b, 2);
        x = tir_f16_to_f32(u), y = tir_f16_to_f32(v);
        break;
    }
    case TIR_BF16: {
        uint16_t u, v;
        memcpy(&u, a, 2), memcpy(&v, b, 2);
        x = tir_bf16_to_f32(u), y = tir_bf16_to_f32(v);
        break;
    }
    case TIR_F32: {
        float u, v;
        memcpy(&u, a, 4), memcpy(&v, b, 4);
        x = u, y = v;
        break;
    }
    case TIR_F64: memcpy(&x, a, 8), memcpy(&y, b, 8); break;
    case TIR_F8E4M3: x = tir_f8e4m3_to_f32(a[0]), y = tir_f8e4m3_to_f32(b[0]); break;
    case TIR_F8E5M2: x = tir_f8e5m2_to_f32(a[0]), y = tir_f8e5m2_to_f32(b[0]); break;
    default: return false;
    }
    return isnan(x) && isnan(y);
}

static TirValue *make_const(TirBuilder *b, TirScalar s, double v) {
    TirType t = tir_scalar_type(s);
    if (tir_scalar_is_float(s))
        return tir_const_float(b, t, tir_round_to(s, v));
    return tir_const_int(b, t, (int64_t)tir_round_to(s, v));
}

static bool run(TirFunc *k, TirScalar rs, unsigned char out[8]) {
    memset(out, 0xAB, 8);
    TirBuffer buf = {out, 8, "out"};
    TirArg arg = {.p = out};
    TirInterpOptions o = {.grid = {1, 1, 1}, .bufs = &buf, .nbufs = 1, .diag = diag_print};
    (void)rs;
    return tir_interp_run(k, &arg, &o) == 0;
}

/* One case: OP over constants of type s (operands) giving rs.  must_fold: the folder is
 * expected to turn it into a constant. */
static void check(TirOpcode code, int64_t pred, TirScalar s, TirScalar rs, int n, const double *v, bool must_fold) {
    TirArena *a = tir_arena_new();
    TirModule *m = tir_module_new(a);
    TirType pt = tir_ptr_type(rs);
    const char *pname = "out";
    TirFunc *k = tir_func_new(m, TIR_FUNC_KERNEL, "k", 1, &pt, &pname);
    TirBuilder b = {0};
    tir_builder_at_end(&b, k->body);
    TirValue *opnd[3];
    for (int i = 0; i < n; i++)
        opnd[i] = make_const(&b, s, v[i]);
    TirType rt = tir_scalar_type(rs);
    TirOp *op = tir_op_new(&b, code, n, opnd, 1, &rt, 0);
    op->attr.i[0] = pred;
    TirValue *st[2] = {k->body->args[0], op->res[0]};
    tir_op_new(&b, TIR_OP_STORE, 2, st, 0, NULL, 0);

    char desc[160];
    snprintf(desc, sizeof desc, "%s%s%s %s->%s (%.17g, %.17g, %.17g)", tir_op_info[code].name,
             code == TIR_OP_CMP ? "." : "", code == TIR_OP_CMP ? tir_cmp_names[pred] : "", tir_scalar_name(s),
             tir_scalar_name(rs), v[0], n > 1 ? v[1] : 0.0, n > 2 ? v[2] : 0.0);
    cases++;
    unsigned char before[8], after[8];
    if (!run(k, rs, before)) {
        /* the interpreter refuses it (e.g. division by zero reported): nothing to compare */
        tir_arena_free(a);
        return;
    }
    TirPassContext ctx = {.diag = diag_print};
    if (pass_canonicalize(m, &ctx) != 0 || tir_verify_module(m, diag_print, NULL) != 0) {
        fprintf(stderr, "FAIL %s: canonicalize or verify failed\n", desc);
        failures++;
    } else {
        TirOp *store = k->body->last;
        bool is_const =
            store && store->nopnd == 2 && store->opnd[1]->def && store->opnd[1]->def->code == TIR_OP_CONSTANT;
        folded += is_const;
        if (must_fold && !is_const) {
            fprintf(stderr, "FAIL %s: not folded\n", desc);
            failures++;
        }
        if (!run(k, rs, after)) {
            fprintf(stderr, "FAIL %s: the canonicalized kernel does not run\n", desc);
            failures++;
        } else if (!same_bits(rs, before, after)) {
            fprintf(stderr, "FAIL %s: interpreter %02x%02x%02x%02x.., folded %02x%02x%02x%02x..\n", desc, before[3],
                    before[2], before[1], before[0], after[3], after[2], after[1], after[0]);
            failures++;
        }
    }
    tir_arena_free(a);
}

static const double int_vals[] = {
    0, 1, -1, 2, -7, 7, 31, 32, 127, -128, 255, 65535, 2147483647, -2147483648.0, 4294967295.0, 1e15, -1e15};
static const double float_vals[] = {0.0,   -0.0,    1.0,  -1.5,  0.1,      3.0,       2.5, -2.5,
                                    448.0, 65504.0, 1e10, -1e-8, INFINITY, -INFINITY, NAN};
/* Casts also see every integer type's boundaries and the values next to them (a cast
 * from a float saturates there, one from an integer wraps). */
static const double cast_float_vals[] = {127.0,
                                         127.5,
                                         128.0,
                                         -128.5,
                                         -129.0,
                                         255.5,
                                         256.0,
                                         32767.5,
                                         32768.0,
                                         -32769.0,
                                         65535.5,
                                         65536.0,
                                         2147483647.5,
                                         2147483648.0,
                                         -2147483649.0,
                                         3e9,
                                         4294967295.5,
                                         4294967296.0,
                                         9223372036854775807.0,
                                         -9223372036854775808.0,
                                         -9.3e18,
                                         18446744073709551615.0,
                                         3.7e19,
                                         1e30,
                                         -1e30};
static const double cast_int_vals[] = {128,
                                       -129,
                                       256,
                                       32767,
                                       32768,
                                       -32769,
                                       65536,
                                       2147483648.0,
                                       -2147483649.0,
                                       4294967296.0,
                                       9007199254740993.0,
                                       -9007199254740993.0,
                                       9223372036854775807.0,
                                       -9223372036854775808.0};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void check_casts(TirScalar s, const double *vals, int nv) {
    bool fl = tir_scalar_is_float(s);
    for (int i = 0; i < nv; i++)
        for (int d = 0; d < TIR_NSCALARS; d++) {
            if (d == (int)s)
                continue;
            /* ints beyond 2^53 to bf16 are left alone: in range, and a double rounding
             * could differ from the one rounding the semantics asks for */
            double iv = fl ? 0 : tir_round_to(s, vals[i]);
            bool huge = !fl && (iv < 0 ? -iv : iv) > 9007199254740992.0;
            check(TIR_OP_CAST, 0, s, (TirScalar)d, 1, &vals[i], !(huge && d == TIR_BF16));
        }
}

int main(void) {
    static const TirOpcode int_bin[] = {TIR_OP_ADD, TIR_OP_SUB, TIR_OP_MUL, TIR_OP_DIV, TIR_OP_REM,     TIR_OP_AND,
                                        TIR_OP_OR,  TIR_OP_XOR, TIR_OP_SHL, TIR_OP_SHR, TIR_OP_MAXIMUM, TIR_OP_MINIMUM};
    static const TirOpcode float_bin[] = {TIR_OP_ADD, TIR_OP_SUB,     TIR_OP_MUL,    TIR_OP_DIV,
                                          TIR_OP_REM, TIR_OP_MAXIMUM, TIR_OP_MINIMUM};
    static const TirOpcode unary[] = {TIR_OP_NEG, TIR_OP_NOT, TIR_OP_ABS, TIR_OP_FLOOR, TIR_OP_CEIL};

    for (int s = 0; s < TIR_NSCALARS; s++) {
        if (s == TIR_I1)
            continue;
        bool fl = tir_scalar_is_float((TirScalar)s);
        const double *vals = fl ? float_vals : int_vals;
        int nv = fl ? COUNT(float_vals) : COUNT(int_vals);
        const TirOpcode *bins = fl ? float_bin : int_bin;
        int nb = fl ? COUNT(float_bin) : COUNT(int_bin);
        for (int i = 0; i < nv; i++) {
            for (int j = 0; j < nv; j++) {
                double v[3] = {vals[i], vals[j], vals[(i + j) % nv]};
                for (int o = 0; o < nb; o++)
                    check(bins[o], 0, (TirScalar)s, (TirScalar)s, 2, v, true);
                for (int p = 0; p < 6; p++)
                    check(TIR_OP_CMP, p, (TirScalar)s, TIR_I1, 2, v, true);
                if (fl)
                    check(TIR_OP_FMA, 0, (TirScalar)s, (TirScalar)s, 3, v, true);
            }
            for (int o = 0; o < COUNT(unary); o++) {
                bool applies = fl ? unary[o] != TIR_OP_NOT : (unary[o] != TIR_OP_FLOOR && unary[o] != TIR_OP_CEIL);
                if (applies)
                    check(unary[o], 0, (TirScalar)s, (TirScalar)s, 1, &vals[i], true);
            }
        }
        check_casts((TirScalar)s, vals, nv);
        if (fl)
            check_casts((TirScalar)s, cast_float_vals, COUNT(cast_float_vals));
        else
            check_casts((TirScalar)s, cast_int_vals, COUNT(cast_int_vals));
    }
    printf("fold_vs_interp: %d cases, %d folded, %d failures\n", cases, folded, failures);
    return failures ? 1 : 0;
}
