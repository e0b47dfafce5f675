/* One growable buffer of bytes or text for the whole compiler (the IR, the front end's
 * messages, the driver's bundles, headers and logs).  malloc'd, not in an arena: what it
 * builds usually leaves the compiler (tir_buf_take).  A failed allocation marks the buffer
 * failed and drops every later write, so a caller checks once at the end, never half-way. */
#ifndef TILE_IR_BUF_H
#define TILE_IR_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct TirBuf {
    char *s; /* the bytes; after any write, s[len] == 0 (not counted) */
    size_t len, cap;
    bool failed; /* out of memory: the contents are incomplete */
} TirBuf;

void tir_buf_put(TirBuf *b, const void *p, size_t n);
void tir_buf_puts(TirBuf *b, const char *s);
void tir_buf_putc(TirBuf *b, char c);
void tir_buf_printf(TirBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tir_buf_vprintf(TirBuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Little-endian integers of `bytes` bytes (1 to 8), as binary formats write them. */
void tir_buf_put_le(TirBuf *b, uint64_t v, int bytes);
/* The contents (NUL-terminated; *len without the NUL when len is not NULL), which the caller
 * frees; NULL when the buffer failed (its memory freed then).  The buffer is empty after. */
char *tir_buf_take(TirBuf *b, size_t *len);
void tir_buf_free(TirBuf *b);

#endif
