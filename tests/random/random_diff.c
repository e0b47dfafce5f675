/* A random-program differential test of constant folding (issue 35).
 *
 * Each case is one expression over leaves $0..$n-1 of one scalar type T, written three
 * ways in one kernel:
 *     store(out + 0, E[(V as T)])     constants: the front end folds it
 *     store(out + 1, E[x_i])          run-time arguments x_i: T = V
 *     store(out + 2, E[V])            bare literals (T = i32 or f32 only: their default type)
 * The kernel runs on the interpreter straight from the front end, then again after the
 * pass pipeline up to `barriers` (inline, specialize, canonicalize, whose folder now sees
 * the constants, then layout, fuse, factor_ptrs, software_pipeline, smem_alloc, barriers for
 * sm_80); every stored slot must agree with slot 1 of the first run, bit for bit (any NaN
 * equals any NaN).
 *
 *     random_diff [COUNT [FIRST_SEED]]      default: the fixed cases and 2000 random ones
 * $TILE_RANDOM_COUNT overrides COUNT for longer runs.  A failure prints the seed and the
 * kernel's source. */
#include "frontend.h"
#include "interp.h"
#include "passes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_LEAVES = 6, SRC_CAP = 8192 };

static int failures, cases;

/* ---- random numbers (xorshift64*) ------------------------------------------------------ */
static uint64_t rng_state;
static uint64_t rnd(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static int rnd_below(int n) {
    return (int)(rnd() % (uint64_t)n);
}

/* ---- one case ------------------------------------------------------------------------------ */
typedef struct Case {
    TirScalar t;      /* the leaves' type */
    TirScalar rt;     /* the result's type */
    const char *expr; /* with $0..$9 for the leaves */
    int nleaves;
    double vals[MAX_LEAVES]; /* exact in T (ints: integral, in T's range) */
} Case;

static void put_number(char *buf, size_t n, TirScalar t, double v) {
    if (isnan(v))
        snprintf(buf, n, "nan");
    else if (isinf(v))
        snprintf(buf, n, v < 0 ? "(-inf)" : "inf");
    else if (!tir_scalar_is_float(t)) {
        /* the value's 64 bits as an i64 literal: `as T` wraps it back (u64 beyond 2^63) */
        int64_t iv = v >= 9223372036854775808.0 ? (int64_t)(uint64_t)v : (int64_t)v;
        if (iv == INT64_MIN)
            snprintf(buf, n, "(-9223372036854775807 - 1)");
        else if (iv < 0)
            snprintf(buf, n, "(%lld)", (long long)iv);
        else
            snprintf(buf, n, "%lld", (long long)iv);
        return;
    } else
        snprintf(buf, n, "%.17g", v);
    if (tir_scalar_is_float(t) && !isnan(v) && !isinf(v) && !strpbrk(buf, ".en"))
        strncat(buf, ".0", n - strlen(buf) - 1);
    if (v < 0 && !isinf(v)) { /* (-5): a literal, negated, in parentheses */
        char tmp[64];
        snprintf(tmp, sizeof tmp, "(%s)", buf);
        snprintf(buf, n, "%s", tmp);
    }
}

/* The expression with each $i replaced by leaf(i). */
static void expand(char *out, size_t cap, const Case *c, int form) {
    size_t o = 0;
    for (const char *p = c->expr; *p && o + 80 < cap; p++) {
        if (*p != '$') {
            out[o++] = *p;
            continue;
        }
        int i = *++p - '0';
        char num[64];
        put_number(num, sizeof num, c->t, c->vals[i]);
        if (form == 0)
            o += (size_t)snprintf(out + o, cap - o, "(%s as %s)", num, tir_scalar_name(c->t));
        else if (form == 1)
            o += (size_t)snprintf(out + o, cap - o, "x%d", i);
        else
            o += (size_t)snprintf(out + o, cap - o, "%s", num);
    }
    out[o] = 0;
}

static void diag_sink(void *ud, const char *msg) {
    (void)ud;
    fprintf(stderr, "%s\n", msg);
}

static bool same_elem(TirScalar t, const unsigned char *a, const unsigned char *b) {
    int n = tir_scalar_bytes(t);
    if (!memcmp(a, b, (size_t)n))
        return true;
    if (!tir_scalar_is_float(t))
        return false;
    /* two NaNs */
    double x = 0, y = 0;
    if (t == TIR_F32) {
        float u, v;
        memcpy(&u, a, 4), memcpy(&v, b, 4);
        x = u, y = v;
    } else if (t == TIR_F64) {
        memcpy(&x, a, 8), memcpy(&y, b, 8);
    } else if (t == TIR_F16) {
        uint16_t u, v;
        memcpy(&u, a, 2), memcpy(&v, b, 2);
        x = tir_f16_to_f32(u), y = tir_f16_to_f32(v);
    } else if (t == TIR_BF16) {
        uint16_t u, v;
        memcpy(&u, a, 2), memcpy(&v, b, 2);
        x = tir_bf16_to_f32(u), y = tir_bf16_to_f32(v);
    }
    return isnan(x) && isnan(y);
}

/* Runs kernel k of m into out (3 slots of 8 bytes); false on an interpreter error. */
static bool run(TirFunc *k, const Case *c, unsigned char *out) {
    memset(out, 0xAB, 24);
    TirBuffer buf = {out, 24, "out"};
    TirArg args[1 + MAX_LEAVES];
    args[0].p = out;
    for (int i = 0; i < c->nleaves; i++) {
        if (tir_scalar_is_float(c->t))
            args[1 + i].f = c->vals[i];
        else
            args[1 + i].i = c->vals[i] >= 9223372036854775808.0 ? (int64_t)(uint64_t)c->vals[i] : (int64_t)c->vals[i];
    }
    TirInterpOptions o = {.grid = {1, 1, 1}, .bufs = &buf, .nbufs = 1, .diag = diag_sink};
    return tir_interp_run(k, args, &o) == 0;
}

static void check_case(const Case *c, const char *what) {
    bool literals = c->t == TIR_I32 || c->t == TIR_F32;
    for (int i = 0; literals && i < c->nleaves; i++)
        if (!tir_scalar_is_float(c->t) && (c->vals[i] > INT32_MAX || c->vals[i] < INT32_MIN))
            literals = false;
    char src[SRC_CAP], e0[SRC_CAP / 4], e1[SRC_CAP / 4], e2[SRC_CAP / 4];
    expand(e0, sizeof e0, c, 0);
    expand(e1, sizeof e1, c, 1);
    expand(e2, sizeof e2, c, 2);
    int n = snprintf(src, sizeof src, "kernel k(out: *%s", tir_scalar_name(c->rt));
    for (int i = 0; i < c->nleaves; i++)
        n += snprintf(src + n, sizeof src - (size_t)n, ", x%d: %s", i, tir_scalar_name(c->t));
    n += snprintf(src + n, sizeof src - (size_t)n, ") grid(1) {\n    store(out, %s);\n    store(out + 1, %s);\n", e0,
                  e1);
    if (literals)
        n += snprintf(src + n, sizeof src - (size_t)n, "    store(out + 2, %s);\n", e2);
    snprintf(src + n, sizeof src - (size_t)n, "}\n");
    cases++;

    TirArena *a = tir_arena_new();
    TfDiag d;
    tf_diag_init(&d, "random.tile", src, strlen(src), diag_sink, NULL);
    AstFile *f = tf_parse(a, &d);
    TfVariant *v = NULL;
    TirModule *m = tir_module_new(a);
    TirFunc *k = NULL;
    if (f && tf_check(a, f, &d) == 0 && tf_variants(a, f, 0, NULL, 0, true, &v, &d) > 0)
        k = tf_elaborate(m, f, 0, v, &d);
    int nslots = literals ? 3 : 2, size = tir_scalar_bytes(c->rt);
    unsigned char before[24], after[24];
    if (!k || !run(k, c, before)) {
        fprintf(stderr, "FAIL %s: does not compile or run\n%s", what, src);
        failures++;
        tir_arena_free(a);
        return;
    }
    TirPassContext ctx = {.arch = "sm_80", .opt_level = 3, .diag = diag_sink, .verify_each = true};
    bool piped = tir_run_pipeline(m, &ctx, "barriers") == 0;
    k = tir_module_find(m, "k");
    if (!piped || !k || !run(k, c, after)) {
        fprintf(stderr, "FAIL %s: the kernel after the passes does not compile or run\n%s", what, src);
        failures++;
        tir_arena_free(a);
        return;
    }
    static const char *const slot_name[] = {"constants", "run-time values", "literals"};
    for (int s = 0; s < nslots; s++) {
        const unsigned char *ref = before + size; /* slot 1 before the passes: run-time values */
        if (!same_elem(c->rt, before + s * size, ref) || !same_elem(c->rt, after + s * size, ref)) {
            unsigned long long x = 0, y = 0, z = 0;
            memcpy(&x, before + s * size, (size_t)size);
            memcpy(&y, after + s * size, (size_t)size);
            memcpy(&z, ref, (size_t)size);
            fprintf(stderr, "FAIL %s: %s stores 0x%llx (0x%llx after the passes), run-time values 0x%llx\n%s", what,
                    slot_name[s], x, y, z, src);
            failures++;
            break;
        }
    }
    tir_arena_free(a);
}

/* ---- the cases issue 35 lists ------------------------------------------------------------------- */
static const Case fixed_cases[] = {
    {TIR_I32, TIR_I32, "maximum($0, $1 * $2)", 3, {0, 100, 2147483647}},
    {TIR_I32, TIR_I32, "($0 << $1) / $2", 3, {1, 32, 2}},
    {TIR_F32, TIR_F32, "($0 + $1) - $0", 2, {16777216.0, 1.0}},
    {TIR_F32, TIR_F32, "$0 * $0 / $0", 1, {1e30}},
    {TIR_F32, TIR_F32, "maximum($0, $1)", 2, {NAN, 1.0}},
    {TIR_F32, TIR_F32, "minimum($0, $1)", 2, {2.0, NAN}},
    {TIR_F32, TIR_F32, "maximum($0, minimum($1, $0))", 2, {-3.0, NAN}},
    {TIR_I64, TIR_F32, "($0 as u64) as f32", 1, {-1}},
    {TIR_I32, TIR_F32, "($0 as u64) as f32", 1, {-1}},
    {TIR_I32, TIR_I32, "$0 / $1", 2, {7, 0}},
    {TIR_I32, TIR_I32, "$0 % $1", 2, {7, 0}},
    {TIR_U32, TIR_U32, "$0 / $1", 2, {7, 0}},
    {TIR_I32, TIR_I32, "$0 / $1", 2, {-2147483648.0, -1}},
    {TIR_F32, TIR_F32, "$0 / $1", 2, {1.0, 0.0}},
    {TIR_F32, TIR_F32, "$0 % $1", 2, {5.5, 2.0}},
    {TIR_I8, TIR_I8, "$0 * $1 + $0", 2, {100, 3}},
    {TIR_F16, TIR_F16, "($0 + $1) - $0", 2, {2048.0, 1.0}},
    {TIR_BF16, TIR_BF16, "$0 * $1", 2, {3.0e38, 2.0}},
    {TIR_U64, TIR_F32, "$0 as f32", 1, {18446744073709549568.0}},
    {TIR_I32, TIR_I32, "$0 >> $1", 2, {-8, 40}},
    {TIR_U16, TIR_U16, "$0 - $1", 2, {0, 1}},
};

/* ---- random cases ---------------------------------------------------------------------------------- */
static const TirScalar rand_types[] = {TIR_I8,  TIR_U8,  TIR_I16, TIR_U16,  TIR_I32, TIR_U32,
                                       TIR_I64, TIR_U64, TIR_F16, TIR_BF16, TIR_F32, TIR_F64};

static double rand_value(TirScalar t) {
    static const double floats[] = {0.0,        -0.0,     1.0,       -1.0,   0.5,     3.0,       1e30,  -1e30,
                                    16777216.0, 1e-8,     65504.0,   3.0e38, 1.0e-40, 2.5,       -7.25, 448.0,
                                    NAN,        INFINITY, -INFINITY, 0.1,    1e10,    33554431.0};
    if (tir_scalar_is_float(t))
        return tir_round_to(t, floats[rnd_below((int)(sizeof floats / sizeof floats[0]))]);
    int bits = tir_scalar_bits(t);
    bool sgn = tir_scalar_is_signed(t);
    double lo = sgn ? -ldexp(1, bits - 1) : 0, hi = sgn ? ldexp(1, bits - 1) - 1 : ldexp(1, bits) - 1;
    switch (rnd_below(6)) {
    case 0: return lo;
    case 1: return bits == 64 ? (sgn ? 9223372036854774784.0 : 18446744073709549568.0) : hi; /* exact in a double */
    case 2: return (double)rnd_below(5) - (sgn ? 2 : 0);
    case 3: return (double)(rnd_below(70));
    default: {
        double r = (double)(rnd() >> 11) / 9007199254740992.0; /* [0, 1) */
        double v = floor(lo + r * (hi - lo));
        return v < lo ? lo : v > hi ? hi : v;
    }
    }
}

/* An expression of depth at most `depth` over leaves $0..$nleaves-1 into buf. */
static void rand_expr(char *buf, size_t cap, TirScalar t, int nleaves, int depth) {
    bool fl = tir_scalar_is_float(t);
    if (depth == 0 || rnd_below(4) == 0) {
        snprintf(buf, cap, "$%d", rnd_below(nleaves));
        return;
    }
    char a[1024], b[1024];
    rand_expr(a, sizeof a, t, nleaves, depth - 1);
    rand_expr(b, sizeof b, t, nleaves, depth - 1);
    static const char *const int_ops[] = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"};
    static const char *const float_ops[] = {"+", "-", "*", "/", "%"};
    int pick = rnd_below(fl ? 9 : 14);
    if (pick < (fl ? 5 : 10))
        snprintf(buf, cap, "(%s %s %s)", a, fl ? float_ops[pick] : int_ops[pick], b);
    else if (pick < (fl ? 7 : 12))
        snprintf(buf, cap, "%s(%s, %s)", (pick & 1) ? "maximum" : "minimum", a, b);
    else if (pick == (fl ? 7 : 12))
        snprintf(buf, cap, "(-%s)", a);
    else { /* a round trip through another type */
        TirScalar u = rand_types[rnd_below((int)(sizeof rand_types / sizeof rand_types[0]))];
        snprintf(buf, cap, "((%s as %s) as %s)", a, tir_scalar_name(u), tir_scalar_name(t));
    }
}

static void random_case(uint64_t seed) {
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    Case c = {0};
    c.t = c.rt = rand_types[rnd_below((int)(sizeof rand_types / sizeof rand_types[0]))];
    if (rnd_below(3) == 0)
        c.t = c.rt = rnd_below(2) ? TIR_I32 : TIR_F32; /* the literal form too */
    c.nleaves = 1 + rnd_below(MAX_LEAVES);
    for (int i = 0; i < c.nleaves; i++)
        c.vals[i] = rand_value(c.t);
    static char expr[4096];
    rand_expr(expr, sizeof expr, c.t, c.nleaves, 1 + rnd_below(4));
    c.expr = expr;
    char what[64];
    snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
    check_case(&c, what);
}

int main(int argc, char **argv) {
    long count = 2000;
    const char *env = getenv("TILE_RANDOM_COUNT");
    if (argc > 1)
        count = strtol(argv[1], NULL, 10);
    else if (env && *env)
        count = strtol(env, NULL, 10);
    uint64_t first = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    for (size_t i = 0; i < sizeof fixed_cases / sizeof fixed_cases[0]; i++) {
        char what[32];
        snprintf(what, sizeof what, "fixed case %zu", i);
        check_case(&fixed_cases[i], what);
    }
    for (long i = 0; i < count; i++)
        random_case(first + (uint64_t)i);
    printf("random_diff: %d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
