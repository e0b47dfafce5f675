/* The growable buffer (buf.h). */
#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the terminator; false (and the buffer failed) when there is none. */
static bool reserve(TirBuf *b, size_t n) {
    if (b->failed)
        return false;
    if (n > SIZE_MAX / 2 - b->len) {
        b->failed = true;
        return false;
    }
    if (b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *grown = realloc(b->s, cap);
    if (!grown) {
        b->failed = true;
        return false;
    }
    b->s = grown;
    b->cap = cap;
    return true;
}

void tir_buf_put(TirBuf *b, const void *p, size_t n) {
    if (!reserve(b, n))
        return;
    if (n)
        memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = 0;
}

void tir_buf_puts(TirBuf *b, const char *s) {
    tir_buf_put(b, s, strlen(s));
}

void tir_buf_putc(TirBuf *b, char c) {
    tir_buf_put(b, &c, 1);
}

void tir_buf_vprintf(TirBuf *b, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        b->failed = true;
    } else if ((size_t)n < sizeof small) {
        tir_buf_put(b, small, (size_t)n);
    } else if (reserve(b, (size_t)n)) {
        vsnprintf(b->s + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
}

void tir_buf_printf(TirBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tir_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void tir_buf_put_le(TirBuf *b, uint64_t v, int bytes) {
    unsigned char le[8];
    for (int i = 0; i < bytes && i < 8; i++)
        le[i] = (unsigned char)(v >> (8 * i));
    tir_buf_put(b, le, (size_t)(bytes < 8 ? bytes : 8));
}

char *tir_buf_take(TirBuf *b, size_t *len) {
    char *s = b->failed ? NULL : b->s;
    if (b->failed)
        free(b->s);
    else if (!s)
        s = calloc(1, 1); /* nothing was written: the empty string */
    if (len)
        *len = s ? b->len : 0;
    *b = (TirBuf){0};
    return s;
}

void tir_buf_free(TirBuf *b) {
    free(b->s);
    *b = (TirBuf){0};
}
