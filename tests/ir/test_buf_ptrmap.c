/* Unit tests of the compiler's one growable buffer (ir/buf.h) and one pointer map
 * (ir/ptrmap.h): contents after many writes and growths, printf past the small stack
 * buffer, little-endian fields, take and free; the map against a brute-force list over
 * thousands of keys, overwrites, absent keys and NULL values. */
#include "buf.h"
#include "ptrmap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

static void test_buf_text(void) {
    TirBuf b = {0};
    size_t len = 99;
    char *empty = tir_buf_take(&b, &len);
    CHECK(empty && empty[0] == 0 && len == 0); /* nothing written: the empty string */
    free(empty);

    char want[20000];
    size_t n = 0;
    for (int i = 0; i < 2000; i++) {
        int k = snprintf(want + n, sizeof want - n, "%d,", i);
        n += (size_t)k;
        tir_buf_printf(&b, "%d,", i);
    }
    CHECK(b.len == n && !memcmp(b.s, want, n) && b.s[b.len] == 0);
    tir_buf_putc(&b, '!');
    tir_buf_puts(&b, "end");
    CHECK(b.len == n + 4 && !strcmp(b.s + n, "!end"));
    char *s = tir_buf_take(&b, &len);
    CHECK(s && len == n + 4 && strlen(s) == len);
    CHECK(b.s == NULL && b.len == 0 && b.cap == 0);
    free(s);

    /* a formatted piece longer than tir_buf_vprintf's stack buffer */
    char big[1000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    tir_buf_puts(&b, "<");
    tir_buf_printf(&b, "%s|%d", big, 42);
    CHECK(b.len == 1 + 999 + 3 && b.s[0] == '<' && b.s[1] == 'x' && !strcmp(b.s + 1000, "|42"));
    tir_buf_free(&b);
    CHECK(b.s == NULL && b.len == 0);
}

static void test_buf_bytes(void) {
    TirBuf b = {0};
    tir_buf_put_le(&b, 0x0102030405060708ull, 8);
    tir_buf_put_le(&b, 0xBEEF, 2);
    tir_buf_put_le(&b, 0x7F, 1);
    tir_buf_put(&b, "\0z", 2); /* embedded NUL bytes are data */
    tir_buf_put(&b, NULL, 0);
    const unsigned char want[] = {8, 7, 6, 5, 4, 3, 2, 1, 0xEF, 0xBE, 0x7F, 0, 'z'};
    CHECK(b.len == sizeof want && !memcmp(b.s, want, sizeof want));
    /* a failed buffer drops every later write and take gives NULL */
    b.failed = true;
    tir_buf_puts(&b, "lost");
    CHECK(b.len == sizeof want);
    size_t len = 5;
    CHECK(tir_buf_take(&b, &len) == NULL && len == 0 && b.s == NULL && !b.failed);
}

static void test_ptrmap(void) {
    enum { N = 5000 };
    static int keys[N];
    TirPtrMap m = {0};
    CHECK(tir_ptrmap_get(&m, &keys[0]) == NULL && !tir_ptrmap_has(&m, &keys[0]));
    for (int i = 0; i < N; i++)
        tir_ptrmap_put(&m, &keys[i], (void *)(uintptr_t)(i + 1));
    CHECK(m.n == N && m.cap >= 2 * N && (m.cap & (m.cap - 1)) == 0);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += tir_ptrmap_get(&m, &keys[i]) != (void *)(uintptr_t)(i + 1);
    CHECK(bad == 0);
    /* overwrite every third; the count stays */
    for (int i = 0; i < N; i += 3)
        tir_ptrmap_put(&m, &keys[i], (void *)(uintptr_t)(i + 100000));
    CHECK(m.n == N);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += tir_ptrmap_get(&m, &keys[i]) != (void *)(uintptr_t)(i % 3 ? i + 1 : i + 100000);
    CHECK(bad == 0);
    /* absent keys: other addresses, including ones next to present keys */
    int other[64];
    bad = 0;
    for (int i = 0; i < 64; i++)
        bad += tir_ptrmap_get(&m, &other[i]) != NULL || tir_ptrmap_has(&m, &other[i]);
    CHECK(bad == 0);
    /* a NULL value is present, though get cannot tell it from absence */
    tir_ptrmap_put(&m, &other[0], NULL);
    CHECK(tir_ptrmap_has(&m, &other[0]) && tir_ptrmap_get(&m, &other[0]) == NULL && m.n == N + 1);
    tir_ptrmap_free(&m);
    CHECK(m.cap == 0 && m.n == 0 && !tir_ptrmap_has(&m, &keys[0]));
}

int main(void) {
    test_buf_text();
    test_buf_bytes();
    test_ptrmap();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
