/* Diagnostics: "PATH:LINE:COL: error: MSG", the source line, and a caret line under the
 * span, handed to the sink as one message.  Spans are byte offsets; lines and columns
 * (1-based, columns in bytes) are computed only here, when a message is printed. */
#include "frontend.h"
#include "syntax.h"
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    DEFAULT_MAX_ERRORS = 100,
    LINE_WINDOW = 200, /* longer source lines are shown as a window around the span */
    LINE_LEAD = 80,    /* bytes of that window before the span */
};

int tf_utf8_len(const unsigned char *s, const unsigned char *lim) {
    unsigned c = s[0];
    int n;
    uint32_t cp, min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, min = 0x80, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, min = 0x800, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, min = 0x10000, cp = c & 0x07;
    else
        return 0;
    if (lim - s < n)
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void tf_diag_init(TfDiag *d, const char *path, const char *src, size_t len, TirDiagFn sink, void *ud) {
    memset(d, 0, sizeof *d);
    d->path = path;
    d->src = src;
    d->len = len;
    d->sink = sink;
    d->ud = ud;
}

static uint32_t clamp(const TfDiag *d, uint32_t loc) {
    return !d->src ? 0 : loc > d->len ? (uint32_t)d->len : loc;
}

void tf_line_col(const TfDiag *d, uint32_t loc, int *line, int *col) {
    loc = clamp(d, loc);
    int l = 1;
    uint32_t line_start = 0;
    for (uint32_t i = 0; i < loc; i++) {
        if (d->src[i] == '\n') {
            l++;
            line_start = i + 1;
        }
    }
    *line = l;
    *col = (int)(loc - line_start) + 1;
}

/* The source line of loc (or a window of it) and the caret line under [loc, end).
 * Control bytes and bytes that are not UTF-8 show as '?'; tabs stay tabs so that the
 * caret line, which copies them, stays aligned. */
static void put_source(TirBuf *b, const TfDiag *d, uint32_t loc, uint32_t end) {
    const unsigned char *src = (const unsigned char *)d->src;
    uint32_t ls = loc, le = loc;
    while (ls > 0 && src[ls - 1] != '\n')
        ls--;
    while (le < d->len && src[le] != '\n')
        le++;
    if (le > ls && src[le - 1] == '\r')
        le--;
    if (loc > le)
        loc = le;

    uint32_t ws = ls, we = le;
    if (le - ls > LINE_WINDOW) {
        if (loc - ls > LINE_LEAD)
            ws = loc - LINE_LEAD;
        while (ws < loc && (src[ws] & 0xC0) == 0x80)
            ws++;
        we = ws + LINE_WINDOW < le ? ws + LINE_WINDOW : le;
    }
    const unsigned char *lim = src + we;

    for (uint32_t i = ws; i < we;) {
        bool control = src[i] != '\t' && (src[i] < 0x20 || src[i] == 0x7f);
        int n = control ? 0 : tf_utf8_len(src + i, lim);
        if (n == 0)
            tir_buf_putc(b, '?');
        else
            tir_buf_put(b, (const char *)src + i, (size_t)n);
        i += n ? (uint32_t)n : 1;
    }
    tir_buf_putc(b, '\n');

    uint32_t stop = end > loc ? (end < we ? end : we) : loc;
    bool first = true;
    for (uint32_t i = ws; i < we && (i < stop || first);) {
        int n = tf_utf8_len(src + i, lim);
        if (i < loc) {
            tir_buf_putc(b, src[i] == '\t' ? '\t' : ' ');
        } else {
            tir_buf_putc(b, first ? '^' : '~');
            first = false;
        }
        i += n ? (uint32_t)n : 1;
    }
    if (first)
        tir_buf_putc(b, '^'); /* the span starts at the line's end */
    tir_buf_putc(b, '\n');
}

static void report(TfDiag *d, const char *kind, uint32_t loc, uint32_t end, const char *fmt, va_list ap) {
    if (!d->sink)
        return;
    const char *path = d->path ? d->path : "<input>";
    TirBuf b = {0}; /* on allocation failure the message is dropped, never half-sent */
    if (d->src) {
        loc = clamp(d, loc);
        end = clamp(d, end);
        int line, col;
        tf_line_col(d, loc, &line, &col);
        tir_buf_printf(&b, "%s:%d:%d: %s: ", path, line, col, kind);
        tir_buf_vprintf(&b, fmt, ap);
        tir_buf_putc(&b, '\n');
        put_source(&b, d, loc, end);
    } else {
        tir_buf_printf(&b, "%s: %s: ", path, kind);
        tir_buf_vprintf(&b, fmt, ap);
        tir_buf_putc(&b, '\n');
    }
    if (!b.failed && b.s)
        d->sink(d->ud, b.s);
    tir_buf_free(&b);
}

static int max_errors(const TfDiag *d) {
    return d->max_errors > 0 ? d->max_errors : DEFAULT_MAX_ERRORS;
}

void tf_error(TfDiag *d, uint32_t loc, uint32_t end, const char *fmt, ...) {
    d->nerrors++;
    if (d->nerrors > max_errors(d)) {
        if (d->nerrors == max_errors(d) + 1 && d->sink) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s: error: too many errors (%d), the rest are not shown\n",
                     d->path ? d->path : "<input>", max_errors(d));
            d->sink(d->ud, msg);
        }
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    report(d, "error", loc, end, fmt, ap);
    va_end(ap);
}

void tf_note(TfDiag *d, uint32_t loc, uint32_t end, const char *fmt, ...) {
    if (d->nerrors > max_errors(d))
        return; /* its error was not shown either */
    va_list ap;
    va_start(ap, fmt);
    report(d, "note", loc, end, fmt, ap);
    va_end(ap);
}
