/* Test runner for the IR text form and verifier.
 *
 *   tir_roundtrip roundtrip IN.tir [GOLDEN.tir]
 *       parse, verify, print (P1); parse P1, verify, print (P2); require P1 == P2 and,
 *       with GOLDEN, P1 == the golden text.
 *   tir_roundtrip verify-fail IN.tir EXPECTED.txt
 *       parse must succeed and the verifier must fail; every line of EXPECTED must be a
 *       substring of the diagnostics.
 *   tir_roundtrip parse-fail IN.tir EXPECTED.txt
 *       the parser must fail (without crashing); every line of EXPECTED must appear.
 *   tir_roundtrip print IN.tir      parse and print (for writing goldens by hand). */
#include "ir.h"
#include "../common/read_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *buf;
    size_t len, cap;
} Text;

static void collect(void *ud, const char *msg) {
    Text *t = ud;
    size_t n = strlen(msg);
    if (t->len + n + 2 > t->cap) {
        t->cap = (t->len + n + 2) * 2;
        t->buf = realloc(t->buf, t->cap);
        if (!t->buf)
            abort();
    }
    memcpy(t->buf + t->len, msg, n);
    t->len += n;
    t->buf[t->len++] = '\n';
    t->buf[t->len] = 0;
}

static char *parse_print(TirArena *a, const char *name, const char *text, size_t len, bool verify) {
    Text diags = {0};
    TirModule *m = tir_parse_module(a, name, text, len, collect, &diags);
    if (!m) {
        fprintf(stderr, "%s: parse failed:\n%s", name, diags.buf ? diags.buf : "(no message)\n");
        free(diags.buf);
        return NULL;
    }
    if (verify && tir_verify_module(m, collect, &diags)) {
        fprintf(stderr, "%s: verify failed:\n%s", name, diags.buf ? diags.buf : "(no message)\n");
        free(diags.buf);
        return NULL;
    }
    free(diags.buf);
    return tir_print_module_to_string(m);
}

/* Each non-empty line of `expected` must occur in `got`. */
static int check_substrings(const char *got, const char *expected) {
    int bad = 0;
    const char *p = expected;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n) {
            char *line = strndup(p, n);
            if (!strstr(got, line)) {
                fprintf(stderr, "expected diagnostic not found: %s\n", line);
                bad = 1;
            }
            free(line);
        }
        p += n + (e ? 1 : 0);
    }
    if (bad)
        fprintf(stderr, "diagnostics were:\n%s", got);
    return bad;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s roundtrip|verify-fail|parse-fail|print IN [EXPECTED]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *in = argv[2];
    size_t len;
    char *text = read_file(in, &len);
    if (!text) {
        fprintf(stderr, "cannot open %s\n", in);
        return 2;
    }
    TirArena *a = tir_arena_new();
    int rc = 0;
    if (strcmp(mode, "print") == 0) {
        char *p1 = parse_print(a, in, text, len, false);
        if (p1)
            fputs(p1, stdout);
        rc = p1 ? 0 : 1;
        free(p1);
    } else if (strcmp(mode, "roundtrip") == 0) {
        char *p1 = parse_print(a, in, text, len, true);
        char *p2 = p1 ? parse_print(a, "(first print)", p1, strlen(p1), true) : NULL;
        if (!p1 || !p2) {
            rc = 1;
        } else if (strcmp(p1, p2) != 0) {
            fprintf(stderr, "print(parse(print(parse(x)))) differs from print(parse(x)):\n--- first\n%s--- second\n%s",
                    p1, p2);
            rc = 1;
        } else if (argc > 3) {
            size_t glen;
            char *golden = read_file(argv[3], &glen);
            if (!golden)
                fprintf(stderr, "cannot open %s\n", argv[3]);
            if (!golden || strcmp(golden, p1) != 0) {
                fprintf(stderr, "print(parse(x)) differs from the golden %s:\n%s", argv[3], p1);
                rc = 1;
            }
            free(golden);
        }
        free(p1);
        free(p2);
    } else if (strcmp(mode, "verify-fail") == 0 || strcmp(mode, "parse-fail") == 0) {
        bool parse_mode = strcmp(mode, "parse-fail") == 0;
        size_t elen;
        char *expected = argc > 3 ? read_file(argv[3], &elen) : NULL;
        if (argc > 3 && !expected)
            fprintf(stderr, "cannot open %s\n", argv[3]);
        Text diags = {0};
        TirModule *m = tir_parse_module(a, in, text, len, collect, &diags);
        if (parse_mode) {
            if (m) {
                fprintf(stderr, "%s: parsed, but a parse error was expected\n", in);
                rc = 1;
            }
        } else if (!m) {
            fprintf(stderr, "%s: parse failed, but only the verifier should:\n%s", in, diags.buf ? diags.buf : "");
            rc = 1;
        } else if (tir_verify_module(m, collect, &diags) == 0) {
            fprintf(stderr, "%s: verified, but an error was expected\n", in);
            rc = 1;
        }
        if (!rc && expected)
            rc = check_substrings(diags.buf ? diags.buf : "", expected);
        if (!rc && !diags.buf) {
            fprintf(stderr, "%s: failed without a message\n", in);
            rc = 1;
        }
        free(expected);
        free(diags.buf);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        rc = 2;
    }
    tir_arena_free(a);
    free(text);
    return rc;
}
