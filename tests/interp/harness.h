/* A small harness for the interpreter tests: parse IR text, run a kernel on
 * registered buffers, collect diagnostics, and check results.  Each case is a
 * function named on the command line, so CTest reports them one by one. */
#ifndef INTERP_HARNESS_H
#define INTERP_HARNESS_H

#include "interp.h"
#include "ir.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_fail;
#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            g_fail++;                                                             \
        }                                                                         \
    } while (0)
#define CHECKF(c, ...)                                                            \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #c); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                  \
            g_fail++;                                                             \
        }                                                                         \
    } while (0)

/* ---- text building ------------------------------------------------------------------ */
typedef struct {
    char *s;
    size_t n, cap;
} SB;

__attribute__((format(printf, 2, 3))) static void sb(SB *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (b->s && (size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s)
            abort();
        if (b->n == 0)
            b->s[0] = 0;
    }
}

/* Pointers %T.p (tile<SHAPE x ptr<ELEM>>) to BASE + the i32 offsets %OFF. */
static inline void ir_ptrs(SB *b, const char *tag, const char *base, const char *elem, const char *shape,
                           const char *off) {
    sb(b, "  %%%s.s = splat %%%s : tile<%sxptr<%s>>\n", tag, base, shape, elem);
    sb(b, "  %%%s.p = addptr %%%s.s, %%%s : tile<%sxptr<%s>>\n", tag, tag, off, shape, elem);
}

/* %T = r * ld + c over an R x C tile (row-major offsets). */
static inline void ir_off2d(SB *b, const char *tag, int R, int C, int ld) {
    sb(b, "  %%%s.r = arange {start=0, end=%d} : tile<%dxi32>\n", tag, R, R);
    sb(b, "  %%%s.r2 = expand_dims {axis=1} %%%s.r : tile<%dx1xi32>\n", tag, tag, R);
    sb(b, "  %%%s.ld = constant {value=%d} : tile<%dx1xi32>\n", tag, ld, R);
    sb(b, "  %%%s.rs = mul %%%s.r2, %%%s.ld : tile<%dx1xi32>\n", tag, tag, tag, R);
    sb(b, "  %%%s.rb = broadcast %%%s.rs : tile<%dx%dxi32>\n", tag, tag, R, C);
    sb(b, "  %%%s.c = arange {start=0, end=%d} : tile<%dxi32>\n", tag, C, C);
    sb(b, "  %%%s.c2 = expand_dims {axis=0} %%%s.c : tile<1x%dxi32>\n", tag, tag, C);
    sb(b, "  %%%s.cb = broadcast %%%s.c2 : tile<%dx%dxi32>\n", tag, tag, R, C);
    sb(b, "  %%%s = add %%%s.rb, %%%s.cb : tile<%dx%dxi32>\n", tag, tag, tag, R, C);
}

/* ---- parsing and running -------------------------------------------------------------- */
static TirArena *g_arena;
static char g_diag[8192];
static int g_ndiag;
static bool g_quiet;

static void test_diag(void *ud, const char *msg) {
    (void)ud;
    g_ndiag++;
    size_t n = strlen(g_diag);
    snprintf(g_diag + n, sizeof g_diag - n, "%s\n", msg);
    if (!g_quiet)
        fprintf(stderr, "diag: %s\n", msg);
}

static TirModule *parse_ir(const char *text) {
    if (!g_arena)
        g_arena = tir_arena_new();
    g_diag[0] = 0;
    g_ndiag = 0;
    TirModule *m = tir_parse_module(g_arena, "test.tir", text, strlen(text), test_diag, NULL);
    if (!m) {
        fprintf(stderr, "parse failed for:\n%s\n", text);
        g_fail++;
        return NULL;
    }
    if (tir_verify_module(m, test_diag, NULL) != 0) {
        fprintf(stderr, "verify failed for:\n%s\n", text);
        g_fail++;
        return NULL;
    }
    return m;
}

typedef struct {
    int64_t grid[3];
    TirBuffer bufs[8];
    int nbufs;
    bool debug;
    bool expect_error; /* keep diagnostics quiet; the test checks them */
    FILE *print_out;
} Run;

static void add_buf(Run *r, void *base, size_t bytes, const char *name) {
    r->bufs[r->nbufs++] = (TirBuffer){base, bytes, name};
}

/* Runs @name of the module; returns the interpreter's error count (-1: no module). */
static int run_kernel(TirModule *m, const char *name, const TirArg *args, Run *r) {
    if (!m)
        return -1;
    TirFunc *k = tir_module_find(m, name);
    if (!k) {
        fprintf(stderr, "no kernel @%s\n", name);
        g_fail++;
        return -1;
    }
    TirInterpOptions o = {
        {r->grid[0], r->grid[1], r->grid[2]}, r->bufs, r->nbufs, test_diag, NULL, r->print_out, r->debug};
    g_diag[0] = 0;
    g_ndiag = 0;
    g_quiet = r->expect_error;
    int e = tir_interp_run(k, args, &o);
    g_quiet = false;
    if (!r->expect_error && e != 0) {
        fprintf(stderr, "run of @%s failed (%d errors)\n", name, e);
        g_fail++;
    }
    return e;
}

/* ---- data ------------------------------------------------------------------------------ */
static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}
static float rndf(float lo, float hi) {
    return lo + (hi - lo) * (float)((rnd() >> 40) * (1.0 / 16777216.0));
}

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
/* Same bits, or both NaN. */
static bool same_f32(float a, float b) {
    return (a != a && b != b) || fbits(a) == fbits(b);
}
static inline float f16f(uint16_t h) {
    return tir_f16_to_f32(h);
}
static inline uint16_t h16(float f) {
    return tir_f32_to_f16(f);
}

/* ---- the cases -------------------------------------------------------------------------- */
/* A test file lists its cases as CASES(X), X(name) for each function test_name, and ends
 * with HARNESS_MAIN(CASES): `PROG NAME` runs that case (one CTest test each), `PROG` every
 * case.  Exit 0 when every check held, 1 when one failed, 2 for a name no case has. */
typedef struct {
    const char *name;
    void (*fn)(void);
} HarnessCase;

static int harness_main(int argc, char **argv, const HarnessCase *cases, size_t ncases) {
    int ran = 0;
    for (size_t i = 0; i < ncases; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
            continue;
        int before = g_fail;
        cases[i].fn();
        fprintf(stderr, "%s: %s\n", cases[i].name, g_fail == before ? "ok" : "FAILED");
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "no case named %s\n", argc > 1 ? argv[1] : "?");
        return 2;
    }
    if (g_arena)
        tir_arena_free(g_arena);
    return g_fail ? 1 : 0;
}

#define HARNESS_CASE(n) {#n, test_##n},
#define HARNESS_MAIN(CASES)                                                                           \
    static const HarnessCase harness_cases[] = {CASES(HARNESS_CASE)};                                 \
    int main(int argc, char **argv) {                                                                 \
        return harness_main(argc, argv, harness_cases, sizeof harness_cases / sizeof *harness_cases); \
    }

#endif
