/* The .npy header (NumPy's format.py documents it): "\x93NUMPY", the version (two bytes),
 * the header's length (2 bytes little-endian in 1.0, 4 in 2.0 and 3.0), then a Python
 * dict literal, {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }, padded with
 * spaces and a newline.  The dict is read by a small scanner that knows the three keys
 * and nothing else: any other text is an error naming its byte. */
#include "npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char npy_magic[6] = {(char)0x93, 'N', 'U', 'M', 'P', 'Y'};

bool npy_has_magic(const void *data, size_t len) {
    return len >= sizeof npy_magic && !memcmp(data, npy_magic, sizeof npy_magic);
}

/* The dtypes each tile scalar accepts: kind letter and size ("f4"), after the byte-order
 * character.  The first is what tilec writes.  NumPy has no bf16 or f8: ml_dtypes saves
 * them as voids of their size ('<V2', '<V1'; its float8_e5m2 once as '<f1'). */
static const struct {
    tile_scalar t;
    const char *kinds[3];
} npy_types[] = {
    {TILE_BOOL, {"b1"}}, {TILE_I8, {"i1"}},  {TILE_I16, {"i2"}},  {TILE_I32, {"i4"}},    {TILE_I64, {"i8"}},
    {TILE_U8, {"u1"}},   {TILE_U16, {"u2"}}, {TILE_U32, {"u4"}},  {TILE_U64, {"u8"}},    {TILE_F16, {"f2"}},
    {TILE_F32, {"f4"}},  {TILE_F64, {"f8"}}, {TILE_BF16, {"V2"}}, {TILE_F8E4M3, {"V1"}}, {TILE_F8E5M2, {"V1", "f1"}},
};

/* The byte order is little endian ('<'), native ('=': tilec runs on little-endian
 * hosts) or not applicable ('|'); a one-byte type may say anything. */
static const char *descr_kind(const char *d) {
    if (d[0] == '<' || d[0] == '=' || d[0] == '|')
        return d + 1;
    if (d[0] == '>' && d[1] && d[2] == '1' && !d[3])
        return d + 1;
    return NULL;
}

bool npy_descr_matches(const char *descr, tile_scalar t) {
    const char *k = descr_kind(descr);
    for (size_t i = 0; k && i < sizeof npy_types / sizeof *npy_types; i++)
        if (npy_types[i].t == t)
            for (int j = 0; j < 3 && npy_types[i].kinds[j]; j++)
                if (!strcmp(k, npy_types[i].kinds[j]))
                    return true;
    return false;
}

int npy_descr_scalar(const char *descr) {
    for (size_t i = 0; i < sizeof npy_types / sizeof *npy_types; i++)
        if (npy_descr_matches(descr, npy_types[i].t))
            return (int)npy_types[i].t;
    return -1;
}

const char *npy_descr_of(tile_scalar t) {
    static const char *const names[TILE_NSCALARS] = {
        [TILE_BOOL] = "|b1", [TILE_I8] = "|i1",  [TILE_I16] = "<i2", [TILE_I32] = "<i4",    [TILE_I64] = "<i8",
        [TILE_U8] = "|u1",   [TILE_U16] = "<u2", [TILE_U32] = "<u4", [TILE_U64] = "<u8",    [TILE_F16] = "<f2",
        [TILE_BF16] = "<V2", [TILE_F32] = "<f4", [TILE_F64] = "<f8", [TILE_F8E4M3] = "|V1", [TILE_F8E5M2] = "|V1",
    };
    return (unsigned)t < TILE_NSCALARS && names[t] ? names[t] : "|V1";
}

bool npy_count(const uint64_t *shape, int ndim, uint64_t *count) {
    uint64_t c = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] && c > UINT64_MAX / shape[i])
            return false;
        c *= shape[i];
    }
    *count = c;
    return true;
}

void npy_shape_text(const uint64_t *shape, int ndim, char *buf, size_t n) {
    size_t k = 0;
    int w = snprintf(buf, n, "(");
    for (int i = 0; i < ndim && w >= 0 && (k += (size_t)w) < n; i++)
        w = snprintf(buf + k, n - k, "%s%llu", i ? ", " : "", (unsigned long long)shape[i]);
    if (w >= 0 && (k += (size_t)w) < n)
        snprintf(buf + k, n - k, ndim == 1 ? ",)" : ")");
}

/* ---- the reader ------------------------------------------------------------------ */
typedef struct Scan {
    const char *s;         /* the dict text */
    size_t pos, end, base; /* base: the file offset of s[0], for messages */
    char *err;
    size_t errn;
    bool failed;
} Scan;

static bool scan_fail(Scan *sc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool scan_fail(Scan *sc, const char *fmt, ...) {
    if (sc->failed)
        return false;
    sc->failed = true;
    int w = snprintf(sc->err, sc->errn, "byte %zu: ", sc->base + sc->pos);
    va_list ap;
    va_start(ap, fmt);
    if (w >= 0 && (size_t)w < sc->errn)
        vsnprintf(sc->err + w, sc->errn - (size_t)w, fmt, ap);
    va_end(ap);
    return false;
}

static void skip_ws(Scan *sc) {
    while (sc->pos < sc->end && strchr(" \t\r\n", sc->s[sc->pos]) && sc->s[sc->pos])
        sc->pos++;
}

static int peek(Scan *sc) {
    skip_ws(sc);
    return sc->pos < sc->end ? (unsigned char)sc->s[sc->pos] : -1;
}

/* "what the scanner saw" for messages: the character, or the end */
static const char *seen(Scan *sc, char *buf, size_t n) {
    int c = peek(sc);
    if (c < 0)
        return "the end of the header";
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, n, "'%c'", c);
    else
        snprintf(buf, n, "byte 0x%02x", (unsigned)c);
    return buf;
}

static bool expect(Scan *sc, char want, const char *what) {
    char b[16];
    if (peek(sc) != (unsigned char)want)
        return scan_fail(sc, "expected %s, saw %s", what, seen(sc, b, sizeof b));
    sc->pos++;
    return true;
}

/* A quoted string without escapes, into buf. */
static bool scan_string(Scan *sc, char *buf, size_t n, const char *what) {
    char b[16];
    int q = peek(sc);
    if (q != '\'' && q != '"')
        return scan_fail(sc, "expected %s (a quoted string), saw %s", what, seen(sc, b, sizeof b));
    size_t start = ++sc->pos, k = 0;
    while (sc->pos < sc->end && sc->s[sc->pos] != q) {
        unsigned char c = (unsigned char)sc->s[sc->pos];
        if (c == '\\' || c < 0x20 || c >= 0x7f)
            return scan_fail(sc, "unexpected byte 0x%02x in a string", c);
        if (k + 1 >= n) {
            sc->pos = start;
            return scan_fail(sc, "%s longer than %zu characters", what, n - 1);
        }
        buf[k++] = (char)c;
        sc->pos++;
    }
    if (sc->pos >= sc->end) {
        sc->pos = start - 1;
        return scan_fail(sc, "unterminated string");
    }
    sc->pos++;
    buf[k] = 0;
    return true;
}

/* A non-negative integer (Python 2's files wrote 3L). */
static bool scan_int(Scan *sc, uint64_t *out) {
    char b[16];
    int c = peek(sc);
    if (c < '0' || c > '9')
        return scan_fail(sc, "expected a dimension (a non-negative integer), saw %s", seen(sc, b, sizeof b));
    uint64_t v = 0;
    size_t start = sc->pos;
    while (sc->pos < sc->end && sc->s[sc->pos] >= '0' && sc->s[sc->pos] <= '9') {
        unsigned d = (unsigned)(sc->s[sc->pos] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            sc->pos = start;
            return scan_fail(sc, "dimension out of range");
        }
        v = v * 10 + d;
        sc->pos++;
    }
    if (sc->pos < sc->end && sc->s[sc->pos] == 'L')
        sc->pos++;
    *out = v;
    return true;
}

/* (D0, D1, ...): "()" for a scalar, "(3,)" and "(3)" for one dimension */
static bool scan_shape(Scan *sc, NpyHeader *h) {
    if (!expect(sc, '(', "'(' starting the shape"))
        return false;
    h->ndim = 0;
    while (peek(sc) != ')') {
        if (h->ndim == NPY_MAX_DIMS)
            return scan_fail(sc, "more than %d dimensions", NPY_MAX_DIMS);
        if (!scan_int(sc, &h->shape[h->ndim++]))
            return false;
        if (peek(sc) == ',')
            sc->pos++;
        else if (peek(sc) != ')')
            return expect(sc, ',', "',' or ')' in the shape");
    }
    sc->pos++;
    return true;
}

static bool scan_bool(Scan *sc, bool *out) {
    char b[16];
    skip_ws(sc);
    size_t left = sc->end - sc->pos;
    if (left >= 4 && !memcmp(sc->s + sc->pos, "True", 4)) {
        sc->pos += 4;
        *out = true;
        return true;
    }
    if (left >= 5 && !memcmp(sc->s + sc->pos, "False", 5)) {
        sc->pos += 5;
        *out = false;
        return true;
    }
    return scan_fail(sc, "expected True or False for 'fortran_order', saw %s", seen(sc, b, sizeof b));
}

bool npy_read_header(const void *data, size_t len, NpyHeader *h, char *err, size_t errn) {
    const unsigned char *p = data;
    memset(h, 0, sizeof *h);
    if (!npy_has_magic(data, len)) {
        snprintf(err, errn, "byte 0: not a .npy file (it does not start with \\x93NUMPY)");
        return false;
    }
    if (len < 8) {
        snprintf(err, errn, "byte %zu: truncated in the version", len);
        return false;
    }
    h->major = p[6];
    h->minor = p[7];
    if (h->major < 1 || h->major > 3 || h->minor != 0) {
        snprintf(err, errn, "byte 6: format version %d.%d; tilec reads 1.0, 2.0 and 3.0", h->major, h->minor);
        return false;
    }
    size_t lbytes = h->major == 1 ? 2 : 4;
    if (len < 8 + lbytes) {
        snprintf(err, errn, "byte %zu: truncated in the header length", len);
        return false;
    }
    uint32_t hlen = 0;
    for (size_t i = 0; i < lbytes; i++)
        hlen |= (uint32_t)p[8 + i] << (8 * i);
    size_t start = 8 + lbytes;
    if (hlen > NPY_MAX_HEADER_BYTES) {
        snprintf(err, errn, "byte 8: a header of %u bytes, more than the %d read", hlen, NPY_MAX_HEADER_BYTES);
        return false;
    }
    if (hlen > len - start) {
        snprintf(err, errn, "byte %zu: truncated in the header (%u bytes from byte %zu)", len, hlen, start);
        return false;
    }
    h->data_offset = start + hlen;
    Scan sc = {.s = (const char *)p + start, .end = hlen, .base = start, .err = err, .errn = errn};
    bool have_descr = false, have_fortran = false, have_shape = false;
    if (!expect(&sc, '{', "'{' starting the header's dict"))
        return false;
    while (peek(&sc) != '}') {
        char key[32];
        size_t key_pos = sc.pos;
        if (!scan_string(&sc, key, sizeof key, "a key") || !expect(&sc, ':', "':' after the key"))
            return false;
        bool *have = !strcmp(key, "descr")           ? &have_descr
                     : !strcmp(key, "fortran_order") ? &have_fortran
                     : !strcmp(key, "shape")         ? &have_shape
                                                     : NULL;
        if (!have || *have) {
            sc.pos = key_pos;
            skip_ws(&sc);
            return scan_fail(&sc, have ? "key '%s' given twice" : "unknown key '%s' (descr, fortran_order and shape)",
                             key);
        }
        *have = true;
        bool ok;
        if (have == &have_descr) {
            if (peek(&sc) == '[')
                return scan_fail(&sc, "a structured dtype (a list of fields); tilec reads "
                                      "arrays of one scalar type");
            ok = scan_string(&sc, h->descr, sizeof h->descr, "the dtype");
        } else if (have == &have_fortran) {
            ok = scan_bool(&sc, &h->fortran_order);
        } else {
            ok = scan_shape(&sc, h);
        }
        if (!ok)
            return false;
        if (peek(&sc) == ',')
            sc.pos++;
        else if (peek(&sc) != '}')
            return expect(&sc, ',', "',' or '}' in the header's dict");
    }
    sc.pos++;
    if (peek(&sc) >= 0) {
        char b[16];
        return scan_fail(&sc, "%s after the header's dict", seen(&sc, b, sizeof b));
    }
    if (!have_descr || !have_fortran || !have_shape) {
        snprintf(err, errn, "byte %zu: the header has no '%s'", start,
                 !have_descr     ? "descr"
                 : !have_fortran ? "fortran_order"
                                 : "shape");
        return false;
    }
    return true;
}

/* ---- the writer ------------------------------------------------------------------ */
char *npy_make_header(tile_scalar t, const uint64_t *shape, int ndim, size_t *len) {
    char dims[NPY_MAX_DIMS * 24 + 8];
    npy_shape_text(shape, ndim, dims, sizeof dims);
    char dict[sizeof dims + 96];
    int n =
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", npy_descr_of(t), dims);
    if (n < 0)
        return NULL;
    /* magic, version, length, the dict, spaces, '\n': a multiple of 64 bytes */
    size_t prefix = (size_t)n + 1 + 10 > 65535 ? 12 : 10;
    size_t total = (prefix + (size_t)n + 1 + 63) / 64 * 64;
    char *h = malloc(total);
    if (!h)
        return NULL;
    size_t hlen = total - prefix;
    memcpy(h, npy_magic, sizeof npy_magic);
    h[6] = prefix == 10 ? 1 : 2;
    h[7] = 0;
    for (size_t i = 0; i < prefix - 8; i++)
        h[8 + i] = (char)(hlen >> (8 * i) & 0xff);
    memcpy(h + prefix, dict, (size_t)n);
    memset(h + prefix + n, ' ', total - prefix - (size_t)n - 1);
    h[total - 1] = '\n';
    *len = total;
    return h;
}
