/* Inputs too big or too random for golden files: every one must end in a clear error
 * (or a clean parse), never a crash, a stack overflow or quadratic time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

typedef struct Capture {
    int messages;
    char first[512];
    bool saw_too_many;
} Capture;

static void capture(void *ud, const char *msg) {
    Capture *c = ud;
    if (c->messages++ == 0)
        snprintf(c->first, sizeof c->first, "%s", msg);
    if (strstr(msg, "too many errors"))
        c->saw_too_many = true;
}

typedef struct Text {
    char *s;
    size_t n, cap;
} Text;

static void put(Text *t, const char *s) {
    size_t n = strlen(s);
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->s = realloc(t->s, t->cap);
        if (!t->s)
            abort();
    }
    memcpy(t->s + t->n, s, n + 1);
    t->n += n;
}

static void repeat(Text *t, const char *s, int times) {
    for (int i = 0; i < times; i++)
        put(t, s);
}

static int failures;

/* Parses text; checks success/failure and that the first message contains `want`. */
static void expect(const char *what, const char *src, size_t len, bool ok, const char *want, int max_errors) {
    TirArena *a = tir_arena_new();
    Capture c = {0};
    TfDiag d;
    tf_diag_init(&d, "stress.tile", src, len, capture, &c);
    d.max_errors = max_errors;
    AstFile *f = tf_parse(a, &d);
    bool pass = (f != NULL) == ok && (!want || strstr(c.first, want));
    if (!pass) {
        printf("FAIL %s: parse %s, %d messages, first:\n%s\n", what, f ? "succeeded" : "failed", c.messages, c.first);
        failures++;
    }
    tir_arena_free(a);
}

static void expect_text(const char *what, Text *t, bool ok, const char *want) {
    expect(what, t->s, t->n, ok, want, 0);
    t->n = 0;
    if (t->s)
        t->s[0] = 0;
}

static const char *const matmul_src = "kernel matmul(a: *f16, b: *f16, c: *f16, M: i32, N: i32, K: i32)\n"
                                      "    tune BM in [64, 128], BN in [64, 128, 256], BK in [32, 64]\n"
                                      "    const GROUP = 8\n"
                                      "    grid(cdiv(M, BM) * cdiv(N, BN))\n"
                                      "{\n"
                                      "    let rm = program_id(0) * BM + arange(0, BM);\n"
                                      "    var pa = a + (rm[:, None] as i64) * K;\n"
                                      "    var acc = zeros([BM, BN], f32);\n"
                                      "    for k in range(0, K, BK) {\n"
                                      "        acc = dot(load(pa, mask=rm[:, None] < M), load(b), acc=acc);\n"
                                      "        pa += BK; /* step */\n"
                                      "    }\n"
                                      "    if M > 0 { return; } else if N > 0 { print(\"x\\n\", M); } else { }\n"
                                      "}\n";

int main(void) {
    Text t = {0};
    enum { DEEP = 100000 };

    put(&t, "const X = ");
    repeat(&t, "(", DEEP);
    expect_text("deep parentheses", &t, false, "nesting too deep");

    put(&t, "kernel k() { let x = ");
    repeat(&t, "[", DEEP);
    expect_text("deep brackets", &t, false, "nesting too deep");

    put(&t, "kernel k() ");
    repeat(&t, "{", DEEP);
    expect_text("deep braces", &t, false, "nesting too deep");

    put(&t, "kernel k() { let x = ");
    repeat(&t, "- ", DEEP);
    put(&t, "y; }");
    expect_text("deep unary minus", &t, false, "nesting too deep");

    put(&t, "kernel k() { let x = ");
    repeat(&t, "!~", DEEP);
    put(&t, "y; }");
    expect_text("deep unary not", &t, false, "nesting too deep");

    put(&t, "kernel k() { ");
    repeat(&t, "if a { } else ", DEEP / 10);
    put(&t, "{ } }");
    expect_text("long else-if chain", &t, false, "nesting too deep");

    put(&t, "kernel k() { let x = a");
    repeat(&t, " + a", DEEP);
    put(&t, "; }");
    expect_text("long left-deep sum", &t, false, "nesting too deep");

    put(&t, "kernel k() { let x = a");
    repeat(&t, " as f32", DEEP);
    put(&t, "; }");
    expect_text("long cast chain", &t, false, "nesting too deep");

    /* wide is fine: huge argument lists and blocks, in linear time */
    put(&t, "kernel k() { f(0");
    repeat(&t, ", 1", DEEP);
    put(&t, "); }");
    expect_text("wide call", &t, true, NULL);

    for (int i = 0; i < 2000; i++)
        put(&t, matmul_src);
    expect_text("2000 kernels", &t, true, NULL);

    put(&t, "kernel k() {");
    repeat(&t, "let x = a + b * c; x += 1; ", 5 * DEEP);
    put(&t, "}");
    expect_text("a million statements", &t, true, NULL);

    /* every error counts, only max_errors are shown, then one line says so */
    {
        repeat(&t, "$", 500);
        TirArena *a = tir_arena_new();
        Capture c = {0};
        TfDiag d;
        tf_diag_init(&d, "stress.tile", t.s, t.n, capture, &c);
        AstFile *f = tf_parse(a, &d);
        if (f || d.nerrors != 500 || c.messages != 101 || !c.saw_too_many) {
            printf("FAIL too many errors: %d errors, %d messages\n", d.nerrors, c.messages);
            failures++;
        }
        tir_arena_free(a);
        t.n = 0;
    }

    /* NUL bytes and a text without a terminating NUL */
    expect("NUL byte", "kernel k() {\0}", 14, false, "unexpected byte 0x00", 0);
    expect("unterminated buffer", "kernel k() { }XXXX", 14, true, NULL, 0);

    /* random bytes, and the matmul kernel with random bytes changed: no crash, no hang */
    uint32_t seed = 12345;
    size_t mlen = strlen(matmul_src);
    static const char mutations[] = "(){}[];,=+-*/<>!~&|^:.\"'$\0\xff\xc3 \nax1";
    char *buf = malloc(8192);
    if (!buf)
        abort();
    for (int round = 0; round < 3000; round++) {
        size_t len;
        if (round % 2 == 0) {
            seed = seed * 1103515245u + 12345u;
            len = (seed >> 8) % 4096;
            for (size_t i = 0; i < len; i++) {
                seed = seed * 1103515245u + 12345u;
                buf[i] = (char)(seed >> 16);
            }
        } else {
            memcpy(buf, matmul_src, mlen);
            len = mlen;
            for (int m = 0; m < 1 + round % 5; m++) {
                seed = seed * 1103515245u + 12345u;
                size_t at = (seed >> 8) % mlen;
                seed = seed * 1103515245u + 12345u;
                buf[at] = mutations[(seed >> 16) % sizeof mutations];
            }
        }
        TirArena *a = tir_arena_new();
        TfDiag d;
        tf_diag_init(&d, "fuzz.tile", buf, len, NULL, NULL);
        tf_parse(a, &d);
        tir_arena_free(a);
    }
    free(buf);
    free(t.s);
    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
