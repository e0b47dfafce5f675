/* tile_ctx_set_diag_json: a formatted message ("PATH:LINE:COL: KIND: MSG", the source
 * line, a caret line under the span; or "KIND: MSG" without a location) rewritten as one
 * JSON object on one line, for tools and agents that read diagnostics. */
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Json {
    char *s;
    size_t n, cap;
    bool failed;
} Json;

static void put(Json *j, const char *s, size_t n) {
    if (j->failed)
        return;
    if (j->n + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap * 2 : 512;
        while (cap < j->n + n + 1)
            cap *= 2;
        char *t = realloc(j->s, cap);
        if (!t) {
            j->failed = true;
            return;
        }
        j->s = t;
        j->cap = cap;
    }
    memcpy(j->s + j->n, s, n);
    j->n += n;
    j->s[j->n] = 0;
}

static void put_text(Json *j, const char *s) {
    put(j, s, strlen(s));
}

/* A JSON string of s[0..n): quotes, backslashes and control bytes escaped. */
static void put_string(Json *j, const char *s, size_t n) {
    put(j, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[8];
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            put(j, esc, 2);
        } else if (ch == '\n') {
            put(j, "\\n", 2);
        } else if (ch == '\t') {
            put(j, "\\t", 2);
        } else if (ch < 0x20 || ch == 0x7f) {
            snprintf(esc, sizeof esc, "\\u%04x", ch);
            put(j, esc, 6);
        } else {
            put(j, (const char *)&ch, 1);
        }
    }
    put(j, "\"", 1);
}

static void put_int(Json *j, long v) {
    char num[32];
    snprintf(num, sizeof num, "%ld", v);
    put_text(j, num);
}

/* The severity word at `s` ("error: ", "warning: ", "note: "), or NULL. */
static const char *severity_at(const char *s, size_t *len) {
    static const char *const kinds[] = {"error", "warning", "note"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(kinds[i]);
        if (!strncmp(s, kinds[i], n) && s[n] == ':' && s[n + 1] == ' ') {
            *len = n + 2;
            return kinds[i];
        }
    }
    return NULL;
}

/* "PATH:LINE:COL" in s[0..n): the path's length and the numbers, or false. */
static bool location(const char *s, size_t n, size_t *path_len, long *line, long *col) {
    size_t c2 = n;
    while (c2 > 0 && s[c2 - 1] != ':')
        c2--;
    if (c2 == 0 || c2 == n)
        return false;
    size_t c1 = c2 - 1;
    while (c1 > 0 && s[c1 - 1] != ':')
        c1--;
    if (c1 == 0 || c1 + 1 >= c2)
        return false;
    for (size_t i = c1; i < c2 - 1; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    for (size_t i = c2; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    *path_len = c1 - 1;
    *line = strtol(s + c1, NULL, 10);
    *col = strtol(s + c2, NULL, 10);
    return true;
}

/* Whether line [s, e) is a caret line (blanks, '^', then '~'s); *marks counts ^ and ~. */
static bool caret_line(const char *s, const char *e, long *marks) {
    const char *p = s;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    if (p == e || *p != '^')
        return false;
    *marks = 0;
    for (; p < e; p++) {
        if (*p != '^' && *p != '~')
            return false;
        ++*marks;
    }
    return true;
}

char *driver_diag_json(const char *msg, const char *variant) {
    const char *eol = strchr(msg, '\n');
    size_t first = eol ? (size_t)(eol - msg) : strlen(msg);
    /* the severity: the first ": KIND: " of the first line, or the line's start */
    const char *kind = NULL;
    size_t prefix = 0, klen = 0;
    if ((kind = severity_at(msg, &klen)) == NULL)
        for (size_t i = 0; i + 2 < first && !kind; i++)
            if (msg[i] == ':' && msg[i + 1] == ' ' && (kind = severity_at(msg + i + 2, &klen)))
                prefix = i;
    size_t path_len = 0;
    long line = 0, col = 0;
    bool located = kind && prefix && location(msg, prefix, &path_len, &line, &col);
    const char *text = kind ? msg + (prefix ? prefix + 2 : 0) + klen : msg;

    Json j = {0};
    put_text(&j, "{\"severity\":");
    put_string(&j, kind ? kind : "error", strlen(kind ? kind : "error"));
    put_text(&j, ",\"file\":");
    if (located)
        put_string(&j, msg, path_len);
    else
        put_text(&j, "null");
    /* the message: the first line's text (with what stood before the severity when that
     * was no location, a kernel's name), then any lines that are not the source excerpt */
    Json m = {0};
    if (kind && prefix && !located) {
        put(&m, msg, prefix);
        put(&m, ": ", 2);
    }
    put(&m, text, (size_t)(msg + first - text));
    const char *src = NULL, *src_end = NULL;
    long marks = 0;
    bool have_caret = false;
    for (const char *p = eol ? eol + 1 : NULL; p && *p;) {
        const char *e = strchr(p, '\n');
        if (!e)
            e = p + strlen(p);
        const char *next = *e ? e + 1 : e;
        const char *after = next;
        const char *e2 = *after ? strchr(after, '\n') : NULL;
        long mk;
        if (located && !src && *after && caret_line(after, e2 ? e2 : after + strlen(after), &mk)) {
            src = p;
            src_end = e;
            marks = mk;
            have_caret = true;
            p = e2 ? e2 + 1 : after + strlen(after);
            continue;
        }
        if (e > p) {
            put(&m, "\n", 1);
            put(&m, p, (size_t)(e - p));
        }
        p = next;
    }
    put_text(&j, ",\"line\":");
    if (located)
        put_int(&j, line);
    else
        put_text(&j, "null");
    put_text(&j, ",\"column\":");
    if (located)
        put_int(&j, col);
    else
        put_text(&j, "null");
    /* the span is on one line: its last character is marks - 1 past the first */
    put_text(&j, ",\"end_line\":");
    if (located)
        put_int(&j, line);
    else
        put_text(&j, "null");
    put_text(&j, ",\"end_column\":");
    if (located)
        put_int(&j, col + (have_caret && marks > 0 ? marks - 1 : 0));
    else
        put_text(&j, "null");
    put_text(&j, ",\"message\":");
    put_string(&j, m.s ? m.s : "", m.n);
    put_text(&j, ",\"source\":");
    if (src)
        put_string(&j, src, (size_t)(src_end - src));
    else
        put_text(&j, "null");
    put_text(&j, ",\"variant\":");
    if (variant && *variant)
        put_string(&j, variant, strlen(variant));
    else
        put_text(&j, "null");
    put_text(&j, ",\"notes\":[]}");
    bool failed = j.failed || m.failed;
    free(m.s);
    if (failed) {
        free(j.s);
        return NULL;
    }
    return j.s;
}
