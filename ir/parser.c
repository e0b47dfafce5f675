/* The reader of the text form (docs/ir.md).  Hand-written recursive descent over the
 * bytes: the text is small and regular, and this way every error has an exact place.
 *
 * Errors are "LINE:COL: error: MSG"; after one, the parser skips the rest of the op
 * (its regions included) and goes on, so one run reports every independent error.
 * Values of an op that failed are "poisoned": their uses fail silently instead of
 * repeating the first error as "undefined value" everywhere.  Nesting (regions,
 * layouts) is bounded so that no input can exhaust the stack. */
#include "buf.h"
#include "tir_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NEST   64
#define MAX_ERRORS 100

typedef struct {
    const char *name; /* as written, without '%' */
    TirValue *v;      /* NULL: poisoned (its op failed) */
    int32_t want_id;  /* number written in the name, or -1 */
    bool visible;
} Sym;

typedef struct {
    TirArena *a;
    TirModule *m;
    const char *src;
    size_t len, pos;
    TirDiagFn diag;
    void *ud;
    int nerrors;
    bool silent_fail; /* the current op used a poisoned value */
    /* symbols of the current function: entries plus a hash of their names */
    Sym *syms;
    size_t nsyms, capsyms;
    int32_t *hash; /* index+1 into syms, 0 empty */
    size_t caphash;
    TirFunc *f;
    int depth;
} Parser;

/* ---- errors ---- */

static void error_at(Parser *p, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void error_at(Parser *p, size_t off, const char *fmt, ...) {
    p->nerrors++;
    if (p->nerrors > MAX_ERRORS)
        return;
    if (off > p->len)
        off = p->len;
    int line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (p->src[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    char msg[600];
    int n = snprintf(msg, sizeof msg, "%d:%d: error: ", line, col);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    if (p->nerrors == MAX_ERRORS)
        snprintf(msg + n, sizeof msg - (size_t)n, "too many errors, stopping");
    if (p->diag)
        p->diag(p->ud, msg);
}

/* ---- characters ---- */

static int peekc(Parser *p) {
    return p->pos < p->len ? (unsigned char)p->src[p->pos] : -1;
}
static int peekc_at(Parser *p, size_t k) {
    return p->pos + k < p->len ? (unsigned char)p->src[p->pos + k] : -1;
}

/* Skips blanks and `//` comments; stops at a newline unless cross_lines. Returns whether a
 * newline was crossed. */
static bool skip_ws(Parser *p, bool cross_lines) {
    bool nl = false;
    while (p->pos < p->len) {
        char c = p->src[p->pos];
        if (c == '\n') {
            if (!cross_lines)
                break;
            nl = true;
            p->pos++;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            p->pos++;
        } else if (c == '/' && peekc_at(p, 1) == '/') {
            while (p->pos < p->len && p->src[p->pos] != '\n')
                p->pos++;
        } else {
            break;
        }
    }
    return nl;
}

static void ws(Parser *p) {
    skip_ws(p, true);
}

/* Next significant char on this line, or -1 (end of line or input). */
static int peek_same_line(Parser *p) {
    skip_ws(p, false);
    int c = peekc(p);
    return c == '\n' ? -1 : c;
}

static bool accept(Parser *p, char c) {
    ws(p);
    if (peekc(p) == (unsigned char)c) {
        p->pos++;
        return true;
    }
    return false;
}

/* A ',' continuing a list on the op's own line (a newline ends the op). */
static bool accept_on_line(Parser *p, char c) {
    skip_ws(p, false);
    if (peekc(p) == (unsigned char)c) {
        p->pos++;
        return true;
    }
    return false;
}

static const char *describe_here(Parser *p, char *buf, size_t n) {
    int c = peekc(p);
    if (c < 0)
        return "end of input";
    if (c == '\n')
        return "end of line";
    if (isprint(c))
        snprintf(buf, n, "'%c'", c);
    else
        snprintf(buf, n, "byte 0x%02x", c);
    return buf;
}

static bool expect(Parser *p, char c, const char *what) {
    if (accept(p, c))
        return true;
    char b[32];
    error_at(p, p->pos, "expected '%c' %s, saw %s", c, what, describe_here(p, b, sizeof b));
    return false;
}

static bool is_ident_start(int c) {
    return c >= 0 && (isalpha(c) || c == '_');
}
static bool is_ident_char(int c) {
    return c >= 0 && (isalnum(c) || c == '_' || c == '.');
}

/* IDENT := [A-Za-z_][A-Za-z0-9_.]*  (no leading whitespace skip) */
static size_t ident_len(Parser *p) {
    size_t k = 0;
    if (!is_ident_start(peekc(p)))
        return 0;
    while (is_ident_char(peekc_at(p, k)))
        k++;
    return k;
}

static bool at_word(Parser *p, const char *w) {
    size_t n = strlen(w);
    return p->pos + n <= p->len && memcmp(p->src + p->pos, w, n) == 0 && !is_ident_char(peekc_at(p, n));
}

static bool accept_word(Parser *p, const char *w) {
    ws(p);
    if (!at_word(p, w))
        return false;
    p->pos += strlen(w);
    return true;
}

/* INT := '-'? [0-9]+ */
static bool parse_int(Parser *p, int64_t *out, const char *what) {
    ws(p);
    size_t start = p->pos, k = 0;
    if (peekc(p) == '-')
        k++;
    if (!(peekc_at(p, k) >= 0 && isdigit(peekc_at(p, k)))) {
        char b[32];
        error_at(p, start, "expected an integer for %s, saw %s", what, describe_here(p, b, sizeof b));
        return false;
    }
    while (peekc_at(p, k) >= 0 && isdigit(peekc_at(p, k)))
        k++;
    char buf[40];
    if (k >= sizeof buf) {
        error_at(p, start, "integer too large for %s", what);
        p->pos += k;
        return false;
    }
    memcpy(buf, p->src + start, k);
    buf[k] = 0;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    p->pos += k;
    if (errno == ERANGE) {
        error_at(p, start, "integer too large for %s", what);
        return false;
    }
    *out = v;
    return true;
}

static bool parse_int32(Parser *p, int32_t *out, const char *what, int64_t lo, int64_t hi) {
    size_t start = (ws(p), p->pos);
    int64_t v;
    if (!parse_int(p, &v, what))
        return false;
    if (v < lo || v > hi) {
        error_at(p, start, "%s %lld out of range [%lld, %lld]", what, (long long)v, (long long)lo, (long long)hi);
        return false;
    }
    *out = (int32_t)v;
    return true;
}

/* NUMBER := INT | '-'? [0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)? | '-'? 'inf' | 'nan'
 * Sets *is_float when the literal is written as a float. */
static bool parse_number(Parser *p, int64_t *iv, double *fv, bool *is_float, const char *what) {
    ws(p);
    size_t start = p->pos, k = 0;
    if (peekc(p) == '-')
        k++;
    if (p->pos + k + 3 <= p->len && memcmp(p->src + p->pos + k, "inf", 3) == 0 && !is_ident_char(peekc_at(p, k + 3))) {
        *fv = k ? -INFINITY : INFINITY;
        *iv = 0;
        *is_float = true;
        p->pos += k + 3;
        return true;
    }
    if (!k && at_word(p, "nan")) {
        *fv = NAN;
        *iv = 0;
        *is_float = true;
        p->pos += 3;
        return true;
    }
    if (!k && (at_word(p, "true") || at_word(p, "false"))) {
        bool t = at_word(p, "true");
        p->pos += t ? 4 : 5;
        *iv = t;
        *fv = t;
        *is_float = false;
        return true;
    }
    if (!(peekc_at(p, k) >= 0 && isdigit(peekc_at(p, k)))) {
        char b[32];
        error_at(p, start, "expected a number for %s, saw %s", what, describe_here(p, b, sizeof b));
        return false;
    }
    bool flt = false;
    while (peekc_at(p, k) >= 0 && isdigit(peekc_at(p, k)))
        k++;
    if (peekc_at(p, k) == '.') {
        flt = true;
        k++;
        while (peekc_at(p, k) >= 0 && isdigit(peekc_at(p, k)))
            k++;
    }
    if (peekc_at(p, k) == 'e' || peekc_at(p, k) == 'E') {
        size_t j = k + 1;
        if (peekc_at(p, j) == '+' || peekc_at(p, j) == '-')
            j++;
        if (peekc_at(p, j) >= 0 && isdigit(peekc_at(p, j))) {
            flt = true;
            k = j;
            while (peekc_at(p, k) >= 0 && isdigit(peekc_at(p, k)))
                k++;
        }
    }
    char buf[512];
    if (k >= sizeof buf) {
        error_at(p, start, "number too long for %s", what);
        p->pos += k;
        return false;
    }
    memcpy(buf, p->src + start, k);
    buf[k] = 0;
    p->pos += k;
    *is_float = flt;
    if (flt) {
        *fv = strtod(buf, NULL); /* overflow gives inf, as a float literal means */
        *iv = 0;
        return true;
    }
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE) {
        /* u64 constants above INT64_MAX keep their bits */
        errno = 0;
        unsigned long long u = buf[0] == '-' ? 0 : strtoull(buf, NULL, 10);
        if (buf[0] == '-' || errno == ERANGE) {
            error_at(p, start, "integer too large for %s", what);
            return false;
        }
        v = (long long)u;
    }
    *iv = v;
    *fv = (double)v;
    return true;
}

/* STRING := '"' (char | '\' ('"' | '\' | 'n' | 't' | 'r' | 'x' HEX HEX))* '"' */
static bool parse_string(Parser *p, const char **out, const char *what) {
    ws(p);
    size_t start = p->pos;
    if (peekc(p) != '"') {
        char b[32];
        error_at(p, start, "expected a string for %s, saw %s", what, describe_here(p, b, sizeof b));
        return false;
    }
    p->pos++;
    TirBuf buf = {0};
    for (;;) {
        int c = peekc(p);
        if (c < 0 || c == '\n') {
            error_at(p, start, "unterminated string");
            tir_buf_free(&buf);
            return false;
        }
        p->pos++;
        if (c == '"')
            break;
        if (c == '\\') {
            int e = peekc(p);
            p->pos++;
            switch (e) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'x': {
                int h1 = peekc(p), h2 = peekc_at(p, 1);
                if (h1 < 0 || h2 < 0 || !isxdigit(h1) || !isxdigit(h2)) {
                    error_at(p, p->pos - 2, "bad \\x escape in string");
                    tir_buf_free(&buf);
                    return false;
                }
                char hx[3] = {(char)h1, (char)h2, 0};
                c = (int)strtol(hx, NULL, 16);
                p->pos += 2;
                if (c == 0) {
                    error_at(p, p->pos - 4, "NUL byte in string");
                    tir_buf_free(&buf);
                    return false;
                }
                break;
            }
            default:
                error_at(p, p->pos - 2, "unknown escape in string");
                tir_buf_free(&buf);
                return false;
            }
        }
        tir_buf_putc(&buf, (char)c);
    }
    if (buf.failed)
        abort(); /* out of memory, as tir_alloc */
    *out = tir_strndup(p->a, buf.s ? buf.s : "", buf.len);
    tir_buf_free(&buf);
    return true;
}

/* ---- types and layouts ---- */

static bool parse_int_list(Parser *p, int32_t *out, int *n, int max, const char *what) {
    if (!expect(p, '[', what))
        return false;
    *n = 0;
    if (accept(p, ']'))
        return true;
    do {
        if (*n >= max) {
            error_at(p, p->pos, "too many entries in %s (at most %d)", what, max);
            return false;
        }
        if (!parse_int32(p, &out[*n], what, INT32_MIN, INT32_MAX))
            return false;
        (*n)++;
    } while (accept(p, ','));
    return expect(p, ']', what);
}

static int32_t parse_layout(Parser *p, int depth);

/* The fields any layout may have; each kind then says which it needs. */
typedef struct {
    int32_t list[6][TIR_MAXRANK];
    int nlist[6];
    int32_t num[9];
    int32_t parent;
    unsigned have;
} LayoutFields;

enum { LF_SPT, LF_TPW, LF_WPC, LF_ORDER, LF_INSTR, LF_UNUSED };
enum { LN_DIM, LN_V, LN_IDX, LN_K, LN_VEC, LN_PHASE, LN_MAXPHASE, LN_ATOM, LN_NGROUP };
#define LF_PARENT_BIT (1u << 20)

static const struct {
    const char *key;
    int list; /* index into list[] or -1 */
    int num;  /* index into num[] or -1 */
} layout_keys[] = {
    {"spt", LF_SPT, -1},     {"tpw", LF_TPW, -1},   {"wpc", LF_WPC, -1},       {"order", LF_ORDER, -1},
    {"instr", LF_INSTR, -1}, {"dim", -1, LN_DIM},   {"v", -1, LN_V},           {"idx", -1, LN_IDX},
    {"k", -1, LN_K},         {"vec", -1, LN_VEC},   {"phase", -1, LN_PHASE},   {"max_phase", -1, LN_MAXPHASE},
    {"parent", -1, -1},      {"atom", -1, LN_ATOM}, {"ngroup", -1, LN_NGROUP},
};
#define NLAYOUT_KEYS (sizeof layout_keys / sizeof layout_keys[0])

static unsigned key_bit(int i) {
    return 1u << i;
}

/* LAYOUT := '#' KIND '<' KEY '=' (INT | '[' INT,... ']' | LAYOUT) (',' ...)* '>' */
static int32_t parse_layout(Parser *p, int depth) {
    ws(p);
    size_t start = p->pos;
    if (depth > 8) {
        error_at(p, start, "layouts nested too deeply");
        return -1;
    }
    if (!expect(p, '#', "to start a layout"))
        return -1;
    size_t n = ident_len(p);
    static const char *const kinds[] = {NULL, "blocked", "slice", "mma", "dot_op", "shared"};
    int kind = 0;
    for (int i = 1; i < 6; i++)
        if (n == strlen(kinds[i]) && memcmp(p->src + p->pos, kinds[i], n) == 0)
            kind = i;
    if (!kind) {
        error_at(p, start, "unknown layout '#%.*s' (expected blocked, slice, mma, dot_op or shared)", (int)n,
                 p->src + p->pos);
        return -1;
    }
    p->pos += n;
    if (!expect(p, '<', "after the layout kind"))
        return -1;
    LayoutFields lf;
    memset(&lf, 0, sizeof lf);
    do {
        ws(p);
        size_t kstart = p->pos, kn = ident_len(p);
        int ki = -1;
        for (size_t i = 0; i < NLAYOUT_KEYS; i++)
            if (kn == strlen(layout_keys[i].key) && memcmp(p->src + p->pos, layout_keys[i].key, kn) == 0)
                ki = (int)i;
        if (ki < 0) {
            error_at(p, kstart, "unknown layout field '%.*s' in #%s", (int)kn, p->src + p->pos, kinds[kind]);
            return -1;
        }
        p->pos += kn;
        if (lf.have & key_bit(ki)) {
            error_at(p, kstart, "duplicate layout field '%s'", layout_keys[ki].key);
            return -1;
        }
        lf.have |= key_bit(ki);
        if (!expect(p, '=', "after a layout field"))
            return -1;
        if (layout_keys[ki].list >= 0) {
            int li = layout_keys[ki].list;
            if (!parse_int_list(p, lf.list[li], &lf.nlist[li], li == LF_INSTR ? 3 : TIR_MAXRANK, layout_keys[ki].key))
                return -1;
        } else if (layout_keys[ki].num >= 0) {
            if (!parse_int32(p, &lf.num[layout_keys[ki].num], layout_keys[ki].key, 0, 1 << 20))
                return -1;
        } else {
            lf.parent = parse_layout(p, depth + 1);
            if (lf.parent < 0)
                return -1;
        }
    } while (accept(p, ','));
    if (!expect(p, '>', "to close the layout"))
        return -1;

    /* required fields per kind, as key indices */
    static const int need[6][5] = {
        {-1},
        {0, 1, 2, 3, -1},  /* blocked: spt tpw wpc order */
        {5, 12, -1},       /* slice: dim parent */
        {6, 2, 4, -1},     /* mma: v wpc instr */
        {7, 8, 12, -1},    /* dot_op: idx k parent */
        {9, 10, 11, 3, -1} /* shared: vec phase max_phase order */
    };
    /* optional fields per kind: #shared's atom (TMA column blocks), #mma's ngroup */
    unsigned allowed = kind == TIR_LAYOUT_SHARED ? key_bit(13) : kind == TIR_LAYOUT_MMA ? key_bit(14) : 0;
    for (int i = 0; need[kind][i] >= 0; i++) {
        allowed |= key_bit(need[kind][i]);
        if (!(lf.have & key_bit(need[kind][i]))) {
            error_at(p, start, "#%s needs field '%s'", kinds[kind], layout_keys[need[kind][i]].key);
            return -1;
        }
    }
    if (lf.have & ~allowed) {
        for (size_t i = 0; i < NLAYOUT_KEYS; i++)
            if (lf.have & ~allowed & key_bit((int)i)) {
                error_at(p, start, "#%s has no field '%s'", kinds[kind], layout_keys[i].key);
                return -1;
            }
    }
    TirLayout l;
    memset(&l, 0, sizeof l);
    l.kind = (uint8_t)kind;
    switch (kind) {
    case TIR_LAYOUT_BLOCKED: {
        int r = lf.nlist[LF_SPT];
        if (r < 1 || lf.nlist[LF_TPW] != r || lf.nlist[LF_WPC] != r || lf.nlist[LF_ORDER] != r) {
            error_at(p, start, "#blocked fields spt, tpw, wpc, order need the same length (1..%d)", TIR_MAXRANK);
            return -1;
        }
        l.rank = (uint8_t)r;
        memcpy(l.size_per_thread, lf.list[LF_SPT], sizeof l.size_per_thread);
        memcpy(l.threads_per_warp, lf.list[LF_TPW], sizeof l.threads_per_warp);
        memcpy(l.warps_per_cta, lf.list[LF_WPC], sizeof l.warps_per_cta);
        memcpy(l.order, lf.list[LF_ORDER], sizeof l.order);
        break;
    }
    case TIR_LAYOUT_SLICE: {
        int pr = p->m->layouts[lf.parent].rank;
        if (lf.num[LN_DIM] >= pr || pr < 2) {
            error_at(p, start, "#slice dim %d out of range for a parent of rank %d", lf.num[LN_DIM], pr);
            return -1;
        }
        l.rank = (uint8_t)(pr - 1);
        l.dim = lf.num[LN_DIM];
        l.parent = lf.parent;
        break;
    }
    case TIR_LAYOUT_MMA:
        if (lf.nlist[LF_WPC] < 1 || lf.nlist[LF_INSTR] != 3) {
            error_at(p, start, "#mma needs wpc of rank >= 1 and instr of 3 numbers");
            return -1;
        }
        l.rank = (uint8_t)lf.nlist[LF_WPC];
        l.version = lf.num[LN_V];
        memcpy(l.warps_per_cta, lf.list[LF_WPC], sizeof l.warps_per_cta);
        memcpy(l.instr, lf.list[LF_INSTR], sizeof l.instr);
        l.ngroup = lf.num[LN_NGROUP] > 1 ? lf.num[LN_NGROUP] : 0;
        break;
    case TIR_LAYOUT_DOT_OPERAND:
        if (p->m->layouts[lf.parent].kind != TIR_LAYOUT_MMA || lf.num[LN_IDX] > 1) {
            error_at(p, start, "#dot_op needs idx 0 or 1 and an #mma parent");
            return -1;
        }
        l.rank = p->m->layouts[lf.parent].rank;
        l.op_idx = lf.num[LN_IDX];
        l.k_width = lf.num[LN_K];
        l.parent = lf.parent;
        break;
    case TIR_LAYOUT_SHARED:
        if (lf.nlist[LF_ORDER] < 1) {
            error_at(p, start, "#shared needs a non-empty order");
            return -1;
        }
        l.rank = (uint8_t)lf.nlist[LF_ORDER];
        memcpy(l.order, lf.list[LF_ORDER], sizeof l.order);
        l.vec = lf.num[LN_VEC];
        l.per_phase = lf.num[LN_PHASE];
        l.max_phase = lf.num[LN_MAXPHASE];
        l.atom = lf.num[LN_ATOM];
        break;
    }
    return tir_layout_intern(p->m, &l);
}

/* ELEM := SCALAR | 'ptr' '<' SCALAR '>' */
static bool parse_elem(Parser *p, TirType *t) {
    ws(p);
    size_t start = p->pos, n = ident_len(p);
    if (n == 3 && memcmp(p->src + p->pos, "ptr", 3) == 0) {
        p->pos += 3;
        if (!expect(p, '<', "after 'ptr'"))
            return false;
        ws(p);
        size_t s2 = p->pos, n2 = ident_len(p);
        int s = tir_scalar_from_name(p->src + p->pos, n2);
        if (s < 0) {
            error_at(p, s2, "unknown pointee type '%.*s'", (int)n2, p->src + p->pos);
            return false;
        }
        p->pos += n2;
        *t = tir_ptr_type((TirScalar)s);
        return expect(p, '>', "to close 'ptr<'");
    }
    int s = tir_scalar_from_name(p->src + p->pos, n);
    if (s < 0) {
        if (n)
            error_at(p, start, "unknown type '%.*s'", (int)n, p->src + p->pos);
        else {
            char b[32];
            error_at(p, start, "expected a type, saw %s", describe_here(p, b, sizeof b));
        }
        return false;
    }
    p->pos += n;
    *t = tir_scalar_type((TirScalar)s);
    return true;
}

/* TYPE := ELEM | ('tile' | 'desc' | 'smem') '<' (INT 'x')+ ELEM (',' LAYOUT)? '>'
 * (smem: the first dimension is the stage count, the layout is one stage's) */
static bool parse_type(Parser *p, TirType *t) {
    ws(p);
    size_t start = p->pos;
    bool tile = at_word(p, "tile"), desc = at_word(p, "desc"), smem = at_word(p, "smem");
    if (!tile && !desc && !smem)
        return parse_elem(p, t);
    p->pos += 4;
    if (!expect(p, '<', tile ? "after 'tile'" : desc ? "after 'desc'" : "after 'smem'"))
        return false;
    ws(p);
    int32_t shape[TIR_MAXRANK];
    int rank = 0;
    while (peekc(p) >= 0 && isdigit(peekc(p))) {
        size_t ds = p->pos;
        int64_t d = 0;
        while (peekc(p) >= 0 && isdigit(peekc(p))) {
            d = d * 10 + (peekc(p) - '0');
            if (d > INT32_MAX)
                d = INT64_MAX / 16; /* keeps growing past the limit without overflow */
            p->pos++;
        }
        if (d < 1 || d > INT32_MAX) {
            error_at(p, ds, "tile dimension out of range");
            return false;
        }
        if (rank == TIR_MAXRANK) {
            error_at(p, ds, "tile rank exceeds %d", TIR_MAXRANK);
            return false;
        }
        shape[rank++] = (int32_t)d;
        if (peekc(p) != 'x') {
            error_at(p, p->pos, "expected 'x' after a tile dimension");
            return false;
        }
        p->pos++;
    }
    if (rank == 0) {
        error_at(p, p->pos, "expected the dimensions of a %s", tile ? "tile" : "descriptor");
        return false;
    }
    TirType e;
    if (!parse_elem(p, &e))
        return false;
    *t = tir_tile_type(e, rank, shape);
    if (desc)
        t->kind = TIR_K_DESC;
    if (smem)
        t->kind = TIR_K_SMEM;
    if (smem && rank < 2) {
        error_at(p, start, "a shared buffer needs a stage count and a tile shape (smem<SxMxNxT>)");
        return false;
    }
    if (accept_on_line(p, ',')) {
        int32_t l = parse_layout(p, 0);
        if (l < 0)
            return false;
        int lrank = smem ? rank - 1 : rank;
        if (p->m->layouts[l].rank != lrank) {
            error_at(p, start, "layout of rank %d on a type of rank %d", p->m->layouts[l].rank, lrank);
            return false;
        }
        t->layout = l;
    }
    if (accept_on_line(p, '>'))
        return true;
    char b[32];
    error_at(p, p->pos, "expected '>' to close the type, saw %s", describe_here(p, b, sizeof b));
    return false;
}

/* ---- symbols ---- */

static size_t name_hash(const char *s, size_t n) {
    size_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static Sym *sym_find(Parser *p, const char *s, size_t n) {
    if (!p->caphash)
        return NULL;
    size_t i = name_hash(s, n) & (p->caphash - 1);
    while (p->hash[i]) {
        Sym *e = &p->syms[p->hash[i] - 1];
        if (strlen(e->name) == n && memcmp(e->name, s, n) == 0)
            return e;
        i = (i + 1) & (p->caphash - 1);
    }
    return NULL;
}

static void sym_rehash(Parser *p, size_t cap) {
    free(p->hash);
    p->hash = calloc(cap, sizeof *p->hash);
    if (!p->hash)
        abort();
    p->caphash = cap;
    for (size_t k = 0; k < p->nsyms; k++) {
        size_t i = name_hash(p->syms[k].name, strlen(p->syms[k].name)) & (cap - 1);
        while (p->hash[i])
            i = (i + 1) & (cap - 1);
        p->hash[i] = (int32_t)(k + 1);
    }
}

static Sym *sym_add(Parser *p, const char *name, TirValue *v) {
    if (p->nsyms == p->capsyms) {
        p->capsyms = p->capsyms ? p->capsyms * 2 : 64;
        Sym *ns = realloc(p->syms, p->capsyms * sizeof *ns);
        if (!ns)
            abort();
        p->syms = ns;
    }
    Sym *e = &p->syms[p->nsyms++];
    e->name = name;
    e->v = v;
    e->visible = true;
    e->want_id = -1;
    if ((p->nsyms + 1) * 2 > p->caphash)
        sym_rehash(p, p->caphash ? p->caphash * 2 : 128);
    else {
        size_t i = name_hash(name, strlen(name)) & (p->caphash - 1);
        while (p->hash[i])
            i = (i + 1) & (p->caphash - 1);
        p->hash[i] = (int32_t)p->nsyms;
    }
    return e;
}

/* VALNAME := '%' [A-Za-z0-9_.]+ ; returns its offset and length (without '%'). */
static bool parse_valname(Parser *p, size_t *off, size_t *n) {
    ws(p);
    if (peekc(p) != '%') {
        char b[32];
        error_at(p, p->pos, "expected a value name, saw %s", describe_here(p, b, sizeof b));
        return false;
    }
    size_t k = 1;
    while (is_ident_char(peekc_at(p, k)))
        k++;
    if (k == 1) {
        error_at(p, p->pos, "expected a value name after '%%'");
        return false;
    }
    *off = p->pos + 1;
    *n = k - 1;
    p->pos += k;
    return true;
}

/* Defines a value under its written name: "%x.7" gives hint "x" and number 7, "%7"
 * number 7, "%x" hint "x". */
static bool define_value(Parser *p, size_t off, size_t n, TirValue *v) {
    const char *s = p->src + off;
    Sym *old = sym_find(p, s, n);
    if (old) {
        error_at(p, off - 1, "redefinition of '%%%.*s'", (int)n, s);
        return false;
    }
    char *name = tir_strndup(p->a, s, n);
    Sym *e = sym_add(p, name, v);
    size_t d = n;
    while (d > 0 && isdigit((unsigned char)s[d - 1]))
        d--;
    bool numbered = d < n && (d == 0 || s[d - 1] == '.') && n - d <= 9;
    if (numbered) {
        e->want_id = (int32_t)strtol(name + d, NULL, 10);
        if (v)
            v->name = d ? tir_strndup(p->a, s, d - 1) : NULL;
    } else if (v) {
        v->name = name;
    }
    return true;
}

static TirValue *use_value(Parser *p, bool *ok) {
    size_t off, n;
    if (!parse_valname(p, &off, &n)) {
        *ok = false;
        return NULL;
    }
    Sym *e = sym_find(p, p->src + off, n);
    if (!e || !e->visible) {
        error_at(p, off - 1, "undefined value '%%%.*s'", (int)n, p->src + off);
        *ok = false;
        return NULL;
    }
    if (!e->v) {
        p->silent_fail = true;
        *ok = false;
    }
    return e->v;
}

/* ---- ops ---- */

typedef struct {
    size_t off, n;
} NameRef;

static bool parse_block_ops(Parser *p, TirBlock *blk);

/* Skips a failed op from its start: the rest of its line and, when that line opens a
 * region, everything up to the matching '}'. */
static void skip_op(Parser *p) {
    int open = 0;
    bool in_str = false, in_region = false;
    int last_sig = 0;
    while (p->pos < p->len) {
        char c = p->src[p->pos];
        if (c == '\n') {
            in_str = false;
            if (open <= 0)
                return;
            if (last_sig == '{')
                in_region = true;
            if (!in_region)
                return;
        } else if (in_str) {
            if (c == '\\')
                p->pos++;
            else if (c == '"')
                in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{') {
            open++;
        } else if (c == '}') {
            if (open == 0)
                return; /* closes the enclosing block: leave it */
            open--;
        } else if (c == '/' && p->pos + 1 < p->len && p->src[p->pos + 1] == '/') {
            while (p->pos < p->len && p->src[p->pos] != '\n')
                p->pos++;
            continue;
        }
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
            last_sig = (unsigned char)c;
        p->pos++;
    }
}

typedef struct {
    const char *key;
    TirAttrKind kind;
} AttrKey;

static const struct {
    TirAttrKind kind;
    const char *keys[2];
    bool required;
} attr_forms[] = {
    {TIR_A_VALUE, {"value"}, true},
    {TIR_A_RANGE, {"start", "end"}, true},
    {TIR_A_AXIS, {"axis"}, true},
    {TIR_A_PRED, {"pred"}, true},
    {TIR_A_N, {"n"}, true},
    {TIR_A_CACHE, {"cache"}, false},
    {TIR_A_TF32, {"tf32"}, false},
    {TIR_A_PERM, {"perm"}, true},
    {TIR_A_LABEL, {"label"}, false},
    {TIR_A_MSG, {"msg"}, false},
    {TIR_A_CALLEE, {"callee"}, true},
    {TIR_A_FAST, {"fast"}, false},
    {TIR_A_ORDER, {"sem", "scope"}, false},
};

/* ATTRS := '{' KEY '=' VALUE (',' KEY '=' VALUE)* '}' ; which keys each op takes is data. */
/* Keys any op of a kind may carry besides its own: facts that passes record. */
static bool parse_pass_attr(Parser *p, TirOpcode code, TirAttr *a, size_t ks, size_t kn, int *nconst, bool *handled) {
    *handled = true;
    if ((code == TIR_OP_LOAD || code == TIR_OP_STORE) && kn == 3 && memcmp(p->src + ks, "vec", 3) == 0) {
        /* the per-access vector width: elements per ld/st, a power of two */
        p->pos += kn;
        if (!expect(p, '=', "after an attribute name") || !parse_int(p, &a->i[1], "vec"))
            return false;
        if (a->i[1] < 1 || a->i[1] > 16 || (a->i[1] & (a->i[1] - 1))) {
            error_at(p, ks, "vec must be a power of two from 1 to 16");
            return false;
        }
        return true;
    }
    if (code == TIR_OP_CMP && kn == 5 && memcmp(p->src + ks, "const", 5) == 0) {
        /* constancy runs per dimension (layout pass), powers of two */
        p->pos += kn;
        if (!expect(p, '=', "after an attribute name") ||
            !parse_int_list(p, a->constancy, nconst, TIR_MAXRANK, "const"))
            return false;
        for (int d = 0; d < *nconst; d++)
            if (a->constancy[d] < 1 || a->constancy[d] > (1 << 30) || (a->constancy[d] & (a->constancy[d] - 1))) {
                error_at(p, ks, "const entries must be powers of two from 1 to 2^30");
                return false;
            }
        return true;
    }
    if (kn == 4 && memcmp(p->src + ks, "smem", 4) == 0) {
        /* shared scratch placement (smem_alloc): [offset, bytes] */
        int32_t v[2];
        int nv = 0;
        p->pos += kn;
        if (!expect(p, '=', "after an attribute name") || !parse_int_list(p, v, &nv, 2, "smem"))
            return false;
        if (nv != 2 || v[0] < 0 || v[1] <= 0 || v[0] > INT32_MAX - v[1]) {
            error_at(p, ks, "smem must be [OFFSET, BYTES] with OFFSET >= 0 and BYTES > 0");
            return false;
        }
        a->smem_off = v[0];
        a->smem_bytes = v[1];
        return true;
    }
    *handled = false;
    return true;
}

static bool parse_attrs(Parser *p, TirOpcode code, TirAttr *a, bool *const_float, int *nperm, int *nconst) {
    TirAttrKind kind = tir_attr_kind(code);
    int form = -1;
    for (size_t i = 0; i < sizeof attr_forms / sizeof attr_forms[0]; i++)
        if (attr_forms[i].kind == kind)
            form = (int)i;
    bool seen[2] = {false, false};
    size_t open = p->pos;
    bool has_dict = false;
    skip_ws(p, false);
    if (peekc(p) == '{') {
        /* `{ KEY =` opens attributes; any other `{` is a region */
        size_t save = p->pos;
        p->pos++;
        ws(p);
        size_t k = ident_len(p);
        p->pos += k;
        ws(p);
        has_dict = k > 0 && peekc(p) == '=';
        p->pos = save;
    }
    if (has_dict) {
        p->pos++;
        do {
            ws(p);
            size_t ks = p->pos, kn = ident_len(p);
            int which = -1;
            bool handled;
            if (!parse_pass_attr(p, code, a, ks, kn, nconst, &handled))
                return false;
            if (handled) {
                ws(p);
                continue;
            }
            for (int j = 0; form >= 0 && j < 2; j++) {
                const char *key = attr_forms[form].keys[j];
                if (key && strlen(key) == kn && memcmp(key, p->src + ks, kn) == 0)
                    which = j;
            }
            if (which < 0) {
                error_at(p, ks, "unknown attribute '%.*s' for op '%s'", (int)kn, p->src + ks, tir_op_info[code].name);
                return false;
            }
            if (seen[which]) {
                error_at(p, ks, "duplicate attribute '%.*s'", (int)kn, p->src + ks);
                return false;
            }
            seen[which] = true;
            p->pos += kn;
            if (!expect(p, '=', "after an attribute name"))
                return false;
            const char *key = attr_forms[form].keys[which];
            switch (kind) {
            case TIR_A_VALUE:
                if (!parse_number(p, &a->ival, &a->fval, const_float, "value"))
                    return false;
                break;
            case TIR_A_RANGE:
            case TIR_A_AXIS:
            case TIR_A_N:
            case TIR_A_TF32:
                if (!parse_int(p, &a->i[which], key))
                    return false;
                break;
            case TIR_A_FAST:
                if (!parse_int(p, &a->i[0], key))
                    return false;
                if (a->i[0] != 0 && a->i[0] != 1) {
                    error_at(p, ks, "fast must be 0 or 1");
                    return false;
                }
                break;
            case TIR_A_PRED: {
                ws(p);
                size_t ps = p->pos, pn = ident_len(p);
                int pred = -1;
                for (int j = 0; j < 6; j++)
                    if (pn == 2 && memcmp(tir_cmp_names[j], p->src + ps, 2) == 0)
                        pred = j;
                if (pred < 0) {
                    error_at(p, ps, "unknown predicate '%.*s' (expected eq ne lt le gt ge)", (int)pn, p->src + ps);
                    return false;
                }
                p->pos += pn;
                a->i[0] = pred;
                break;
            }
            case TIR_A_ORDER: {
                ws(p);
                size_t ns = p->pos, nn = ident_len(p);
                const char *const *names = which ? tir_scope_names : tir_sem_names;
                int count = which ? TIR_NSCOPES : TIR_NSEMS, v = -1;
                for (int j = 0; j < count; j++)
                    if (strlen(names[j]) == nn && memcmp(names[j], p->src + ns, nn) == 0)
                        v = j;
                if (v < 0) {
                    error_at(p, ns,
                             which ? "unknown scope '%.*s' (expected gpu cta sys)"
                                   : "unknown sem '%.*s' (expected acq_rel relaxed acquire release)",
                             (int)nn, p->src + ns);
                    return false;
                }
                p->pos += nn;
                a->i[which] = v;
                break;
            }
            case TIR_A_PERM: {
                int32_t perm[TIR_MAXRANK];
                if (!parse_int_list(p, perm, nperm, TIR_MAXRANK, "perm"))
                    return false;
                for (int j = 0; j < *nperm; j++)
                    a->i[j] = perm[j];
                break;
            }
            case TIR_A_CACHE:
            case TIR_A_LABEL:
            case TIR_A_MSG:
                if (!parse_string(p, &a->s, key))
                    return false;
                break;
            case TIR_A_CALLEE: {
                if (!expect(p, '@', "before the callee name"))
                    return false;
                size_t cn = ident_len(p);
                if (!cn) {
                    error_at(p, p->pos, "expected a function name after '@'");
                    return false;
                }
                a->s = tir_strndup(p->a, p->src + p->pos, cn);
                p->pos += cn;
                break;
            }
            case TIR_A_NONE: break;
            }
        } while (accept(p, ','));
        if (!expect(p, '}', "to close the attributes"))
            return false;
    }
    if (form >= 0 && attr_forms[form].required)
        for (int j = 0; j < 2; j++)
            if (attr_forms[form].keys[j] && !seen[j]) {
                error_at(p, open, "op '%s' needs attribute '%s'", tir_op_info[code].name, attr_forms[form].keys[j]);
                return false;
            }
    return true;
}

/* OP := (VALNAME (',' VALNAME)* '=')? OPNAME ATTRS? (VALUE (',' VALUE)*)? (':' TYPE (',' TYPE)*)? REGION*
 * Operands, types and the first region's '{' are on the op's line. */
static bool parse_op(Parser *p, TirBlock *blk, NameRef **resbuf, size_t *rescap) {
    ws(p);
    size_t start = p->pos;
    size_t nres = 0;
    p->silent_fail = false;
    if (peekc(p) == '%') {
        do {
            if (nres == *rescap) {
                *rescap = *rescap ? *rescap * 2 : 8;
                NameRef *nb = realloc(*resbuf, *rescap * sizeof *nb);
                if (!nb)
                    abort();
                *resbuf = nb;
            }
            if (!parse_valname(p, &(*resbuf)[nres].off, &(*resbuf)[nres].n))
                return false;
            nres++;
        } while (accept(p, ','));
        if (!expect(p, '=', "after the result names"))
            goto poison;
    }
    ws(p);
    size_t name_off = p->pos, nn = ident_len(p);
    int code = nn ? tir_opcode_from_name(p->src + name_off, nn) : -1;
    if (code < 0) {
        if (nn)
            error_at(p, name_off, "unknown op '%.*s'", (int)nn, p->src + name_off);
        else {
            char b[32];
            error_at(p, name_off, "expected an op name, saw %s", describe_here(p, b, sizeof b));
        }
        goto poison;
    }
    p->pos += nn;
    TirAttr attr;
    memset(&attr, 0, sizeof attr);
    bool const_float = false;
    int nperm = 0, nconst = 0;
    if (!parse_attrs(p, (TirOpcode)code, &attr, &const_float, &nperm, &nconst))
        goto poison;

    /* operands */
    size_t nopnd = 0, capopnd = 8;
    TirValue **opnd = malloc(capopnd * sizeof *opnd);
    TirType *rtypes = NULL;
    if (!opnd)
        abort();
    bool ok = true;
    if (peek_same_line(p) == '%') {
        do {
            if (nopnd == capopnd) {
                capopnd *= 2;
                TirValue **nb = realloc(opnd, capopnd * sizeof *nb);
                if (!nb)
                    abort();
                opnd = nb;
            }
            bool vok = true;
            opnd[nopnd++] = use_value(p, &vok);
            if (!vok) {
                ok = false;
                if (!p->silent_fail)
                    goto fail;
            }
        } while (accept_on_line(p, ','));
    }
    /* result types */
    size_t ntypes = 0;
    if (peek_same_line(p) == ':') {
        p->pos++;
        rtypes = malloc((nres ? nres : 1) * sizeof *rtypes);
        if (!rtypes)
            abort();
        do {
            TirType t;
            if (!parse_type(p, &t))
                goto fail;
            if (ntypes < nres)
                rtypes[ntypes] = t;
            ntypes++;
        } while (accept_on_line(p, ','));
    }
    if (ntypes != nres) {
        error_at(p, start, "op '%s' names %zu result%s but gives %zu type%s", tir_op_info[code].name, nres,
                 nres == 1 ? "" : "s", ntypes, ntypes == 1 ? "" : "s");
        goto fail;
    }
    if (code == TIR_OP_CONSTANT && nres == 1 && const_float &&
        (rtypes[0].ptr || !tir_scalar_is_float((TirScalar)rtypes[0].elem))) {
        error_at(p, name_off, "float value for a constant of integer type");
        goto fail;
    }
    if (code == TIR_OP_CMP && nres == 1 && nconst && nconst != (rtypes[0].rank > 0 ? rtypes[0].rank : 1)) {
        error_at(p, name_off, "const has %d entries for a result of rank %d", nconst, rtypes[0].rank);
        goto fail;
    }
    if (code == TIR_OP_TRANS && nres == 1 && nperm != rtypes[0].rank) {
        error_at(p, name_off, "perm has %d entries for a result of rank %d", nperm, rtypes[0].rank);
        goto fail;
    }
    if (!ok)
        goto fail; /* a poisoned operand: its op already reported */

    /* regions */
    int nregion = 0;
    size_t rstart = (skip_ws(p, false), p->pos);
    bool want_regions = peekc(p) == '{';
    if (want_regions && !(tir_op_info[code].traits & TIR_T_REGIONS)) {
        error_at(p, rstart, "op '%s' takes no regions", tir_op_info[code].name);
        goto fail;
    }
    TirBuilder b = {blk->func, blk, NULL, (uint32_t)start};
    TirOp *op = tir_op_new(&b, (TirOpcode)code, (int)nopnd, opnd, (int)nres, rtypes, 0);
    op->attr = attr;
    if (code == TIR_OP_CONSTANT && !const_float)
        op->attr.fval = (double)attr.ival;
    if (code == TIR_OP_CONSTANT && const_float)
        op->attr.ival = 0;
    free(opnd);
    free(rtypes);
    opnd = NULL;
    rtypes = NULL;
    for (size_t i = 0; i < nres; i++)
        if (!define_value(p, (*resbuf)[i].off, (*resbuf)[i].n, op->res[i]))
            return false;

    /* REGION := '{' ('^' '(' VALNAME ':' TYPE, ... ')' ':')? OP* '}' */
    TirBlock *regions[8];
    while (want_regions) {
        if (nregion == 8) {
            error_at(p, p->pos, "too many regions");
            return false;
        }
        if (p->depth >= MAX_NEST) {
            error_at(p, p->pos, "regions nested too deeply (more than %d)", MAX_NEST);
            return false;
        }
        p->pos++; /* '{' */
        TirBlock *r = tir_alloc(p->a, sizeof *r);
        r->func = blk->func;
        r->parent = op;
        regions[nregion++] = r;
        size_t first_sym = p->nsyms;
        if (accept(p, '^')) {
            if (!expect(p, '(', "after '^'"))
                return false;
            if (!accept(p, ')')) {
                do {
                    size_t off, n;
                    TirType t;
                    if (!parse_valname(p, &off, &n))
                        return false;
                    if (!expect(p, ':', "after a block argument"))
                        return false;
                    if (!parse_type(p, &t))
                        return false;
                    TirValue *v = tir_block_add_arg(r, t);
                    if (!define_value(p, off, n, v))
                        return false;
                } while (accept(p, ','));
                if (!expect(p, ')', "to close the block arguments"))
                    return false;
            }
            if (!expect(p, ':', "after the block arguments"))
                return false;
        }
        p->depth++;
        bool rok = parse_block_ops(p, r);
        p->depth--;
        for (size_t i = first_sym; i < p->nsyms; i++)
            p->syms[i].visible = false;
        if (!rok)
            return false;
        skip_ws(p, false);
        want_regions = peekc(p) == '{';
    }
    if (nregion) {
        op->nregion = nregion;
        op->region = tir_memdup(p->a, regions, (size_t)nregion * sizeof *regions);
    }
    int c = peek_same_line(p);
    if (c >= 0 && c != '}') {
        char bb[32];
        error_at(p, p->pos, "unexpected %s after op '%s'", describe_here(p, bb, sizeof bb), tir_op_info[code].name);
        skip_op(p);
    }
    return true;

fail:
    free(opnd);
    free(rtypes);
poison:
    for (size_t i = 0; i < nres; i++)
        if (!sym_find(p, p->src + (*resbuf)[i].off, (*resbuf)[i].n))
            sym_add(p, tir_strndup(p->a, p->src + (*resbuf)[i].off, (*resbuf)[i].n), NULL);
    return false;
}

/* BLOCK := OP* '}' ; consumes the closing brace. */
static bool parse_block_ops(Parser *p, TirBlock *blk) {
    NameRef *resbuf = NULL;
    size_t rescap = 0;
    bool ok = true;
    for (;;) {
        ws(p);
        int c = peekc(p);
        if (c == '}') {
            p->pos++;
            break;
        }
        if (c < 0) {
            error_at(p, p->pos, "unexpected end of input: missing '}'");
            ok = false;
            break;
        }
        if (at_word(p, "kernel") || at_word(p, "func")) {
            /* a missing '}' most likely: let the module level take the next function */
            error_at(p, p->pos, "expected '}' before the next function");
            ok = false;
            break;
        }
        size_t before = p->pos;
        if (!parse_op(p, blk, &resbuf, &rescap)) {
            ok = false;
            if (p->nerrors > MAX_ERRORS)
                break;
            p->pos = before;
            skip_op(p);
            if (p->pos == before)
                p->pos++; /* always make progress */
        }
    }
    free(resbuf);
    return ok;
}

/* ---- functions ---- */

static void reset_syms(Parser *p) {
    p->nsyms = 0;
    if (p->hash)
        memset(p->hash, 0, p->caphash * sizeof *p->hash);
}

/* Keeps the numbers written in the text when they are unique, so print(parse(x)) == x;
 * otherwise numbers everything afresh. */
static void assign_ids(Parser *p, TirFunc *f) {
    int32_t max = -1;
    for (size_t i = 0; i < p->nsyms; i++)
        if (p->syms[i].v && p->syms[i].want_id > max)
            max = p->syms[i].want_id;
    bool unique = max < (1 << 24);
    uint8_t *seen = unique ? calloc((size_t)max + 2, 1) : NULL;
    for (size_t i = 0; unique && i < p->nsyms; i++) {
        int32_t w = p->syms[i].want_id;
        if (!p->syms[i].v || w < 0)
            continue;
        if (seen[w])
            unique = false;
        seen[w] = 1;
    }
    free(seen);
    if (!unique) {
        tir_func_renumber(f);
        return;
    }
    int32_t next = max + 1;
    for (size_t i = 0; i < p->nsyms; i++) {
        if (!p->syms[i].v)
            continue;
        p->syms[i].v->id = p->syms[i].want_id >= 0 ? p->syms[i].want_id : next++;
    }
    f->next_id = next;
}

/* FUNC := ('kernel' | 'func') '@' NAME ('[' BINDING (',' BINDING)* ']')?
 *         '(' (PARAM (',' PARAM)*)? ')' ('->' (TYPE | '(' TYPE, ... ')'))? '{' BLOCK
 * PARAM := VALNAME ':' TYPE ('{' ('div' '=' INT | 'one') (',' ...)* '}')? */
static bool parse_func(Parser *p, bool *in_body) {
    ws(p);
    size_t start = p->pos;
    TirFuncKind kind;
    if (accept_word(p, "kernel"))
        kind = TIR_FUNC_KERNEL;
    else if (accept_word(p, "func"))
        kind = TIR_FUNC_DEVICE;
    else {
        char b[32];
        error_at(p, p->pos, "expected 'kernel' or 'func', saw %s", describe_here(p, b, sizeof b));
        return false;
    }
    if (!expect(p, '@', "before the function name"))
        return false;
    size_t nn = ident_len(p);
    if (!nn) {
        error_at(p, p->pos, "expected a function name after '@'");
        return false;
    }
    char *name = tir_strndup(p->a, p->src + p->pos, nn);
    if (tir_module_find(p->m, name)) {
        error_at(p, p->pos, "redefinition of function '@%s'", name);
        return false;
    }
    p->pos += nn;

    TirConstBinding consts[64];
    int nconsts = 0;
    int32_t warps = 0, stages = 0;
    if (accept(p, '[')) {
        do {
            ws(p);
            size_t ks = p->pos, kn = ident_len(p);
            if (!kn) {
                error_at(p, ks, "expected a constant name");
                return false;
            }
            p->pos += kn;
            if (!expect(p, '=', "after a constant name"))
                return false;
            int64_t iv;
            double fv;
            bool isf;
            if (!parse_number(p, &iv, &fv, &isf, "a constant"))
                return false;
            if (kn == 5 && memcmp(p->src + ks, "warps", 5) == 0 && !isf) {
                warps = (int32_t)(iv > 0 && iv <= 1024 ? iv : 0);
                if (!warps)
                    error_at(p, ks, "warps must be in 1..1024");
            } else if (kn == 6 && memcmp(p->src + ks, "stages", 6) == 0 && !isf) {
                stages = (int32_t)(iv > 0 && iv <= 64 ? iv : 0);
                if (!stages)
                    error_at(p, ks, "stages must be in 1..64");
            } else {
                if (nconsts == 64) {
                    error_at(p, ks, "too many constants (at most 64)");
                    return false;
                }
                consts[nconsts].name = tir_strndup(p->a, p->src + ks, kn);
                consts[nconsts].ival = iv;
                consts[nconsts].fval = fv;
                consts[nconsts].is_float = isf;
                nconsts++;
            }
        } while (accept(p, ','));
        if (!expect(p, ']', "to close the constants"))
            return false;
    }

    if (!expect(p, '(', "to open the parameters"))
        return false;
    size_t cap = 8, np = 0;
    TirType *pt = malloc(cap * sizeof *pt);
    NameRef *pn = malloc(cap * sizeof *pn);
    TirParamInfo *pi = malloc(cap * sizeof *pi);
    bool ok = pt && pn && pi;
    if (!ok)
        abort();
    if (!accept(p, ')')) {
        do {
            if (np == cap) {
                cap *= 2;
                TirType *a1 = realloc(pt, cap * sizeof *pt);
                NameRef *a2 = realloc(pn, cap * sizeof *pn);
                TirParamInfo *a3 = realloc(pi, cap * sizeof *pi);
                if (!a1 || !a2 || !a3)
                    abort();
                pt = a1, pn = a2, pi = a3;
            }
            memset(&pi[np], 0, sizeof pi[np]);
            if (!parse_valname(p, &pn[np].off, &pn[np].n) || !expect(p, ':', "after a parameter name") ||
                !parse_type(p, &pt[np])) {
                ok = false;
                break;
            }
            if (accept(p, '{')) {
                do {
                    ws(p);
                    if (accept_word(p, "one")) {
                        pi[np].equals_one = true;
                    } else if (accept_word(p, "div")) {
                        if (!expect(p, '=', "after 'div'") ||
                            !parse_int32(p, &pi[np].divisibility, "div", 1, 1 << 30)) {
                            ok = false;
                            break;
                        }
                    } else {
                        size_t kn = ident_len(p);
                        error_at(p, p->pos, "unknown parameter attribute '%.*s' (expected div=N or one)", (int)kn,
                                 p->src + p->pos);
                        ok = false;
                        break;
                    }
                } while (accept(p, ','));
                if (!ok || !expect(p, '}', "to close the parameter attributes")) {
                    ok = false;
                    break;
                }
            }
            np++;
        } while (accept(p, ','));
        if (ok && !expect(p, ')', "to close the parameters"))
            ok = false;
    }
    TirType rets[16];
    int nret = 0;
    if (ok && accept(p, '-')) {
        if (!expect(p, '>', "in '->'"))
            ok = false;
        else if (accept(p, '(')) {
            if (!accept(p, ')')) {
                do {
                    if (nret == 16) {
                        error_at(p, p->pos, "too many results (at most 16)");
                        ok = false;
                        break;
                    }
                    if (!parse_type(p, &rets[nret])) {
                        ok = false;
                        break;
                    }
                    nret++;
                } while (accept(p, ','));
                if (ok && !expect(p, ')', "to close the result types"))
                    ok = false;
            }
        } else if (!parse_type(p, &rets[nret++])) {
            ok = false;
        }
    }
    if (ok && nret && kind == TIR_FUNC_KERNEL) {
        error_at(p, start, "a kernel has no results");
        ok = false;
    }
    if (ok && !expect(p, '{', "to open the function body"))
        ok = false;
    if (!ok) {
        free(pt);
        free(pn);
        free(pi);
        return false;
    }

    TirFunc *f = tir_func_new(p->m, kind, name, 0, NULL, NULL);
    f->warps = warps;
    f->stages = stages;
    f->nconsts = nconsts;
    f->consts = tir_memdup(p->a, consts, (size_t)(nconsts ? nconsts : 1) * sizeof *consts);
    f->nret = nret;
    f->ret = tir_memdup(p->a, rets, (size_t)(nret ? nret : 1) * sizeof *rets);
    p->f = f;
    reset_syms(p);
    bool fok = true;
    for (size_t i = 0; i < np; i++) {
        TirValue *v = tir_block_add_arg(f->body, pt[i]);
        if (!define_value(p, pn[i].off, pn[i].n, v))
            fok = false;
    }
    f->params = tir_alloc(p->a, (np ? np : 1) * sizeof *f->params);
    for (size_t i = 0; i < np; i++) {
        f->params[i] = pi[i];
        f->params[i].name = f->body->args[i]->name;
    }
    free(pt);
    free(pn);
    free(pi);
    p->depth = 0;
    *in_body = true;
    if (!parse_block_ops(p, f->body))
        fok = false;
    assign_ids(p, f);
    return fok;
}

/* Skips to the next line that starts a function. */
static void skip_to_next_func(Parser *p) {
    while (p->pos < p->len) {
        while (p->pos < p->len && p->src[p->pos] != '\n')
            p->pos++;
        if (p->pos < p->len)
            p->pos++;
        if (at_word(p, "kernel") || at_word(p, "func"))
            return;
    }
}

/* MODULE := FUNC* */
TirModule *tir_parse_module(TirArena *a, const char *name, const char *text, size_t len, TirDiagFn diag, void *ud) {
    Parser p;
    memset(&p, 0, sizeof p);
    p.a = a;
    p.m = tir_module_new(a);
    p.m->source_name = name ? tir_strdup(a, name) : NULL;
    p.src = text ? text : "";
    p.len = text ? len : 0;
    p.diag = diag;
    p.ud = ud;
    for (;;) {
        ws(&p);
        if (p.pos >= p.len || p.nerrors > MAX_ERRORS)
            break;
        size_t before = p.pos;
        int errs = p.nerrors;
        bool in_body = false;
        /* a bad header: resume at the next function; a bad body has already been skipped */
        if (!parse_func(&p, &in_body)) {
            if (p.nerrors == errs)
                error_at(&p, before, "malformed function");
            if (!in_body || p.pos == before)
                skip_to_next_func(&p);
        }
    }
    free(p.syms);
    free(p.hash);
    return p.nerrors ? NULL : p.m;
}
