/* The bundle reader (docs/bundle.md): validates the header, the checksum and every read
 * against the end of the payload before trusting a byte.  A bad bundle is
 * TILE_RT_ERR_BUNDLE with a message naming what is wrong and where, never a crash. */
#include "rt_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The format's constants are format/bundle_format.h's, shared with the writer. */
uint64_t rt_fnv1a(uint64_t h, const void *data, size_t n) {
    return bundle_fnv1a(h, data, n);
}

/* The reading cursor: `what` names the section being read, for "truncated at byte N
 * (what)". */
typedef struct Reader {
    const uint8_t *base; /* the file */
    size_t pos, end;
    const char *what;
    char section[160];
    bool failed;
    char *err;
    size_t errn;
    const char *name;
    RtBundle *b;
    uint32_t version;
} Reader;

static void fail(Reader *r, const char *fmt, ...) {
    if (r->failed)
        return;
    r->failed = true;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errn, "bundle '%s': %s", r->name, msg);
}

/* Allocation that lives as long as the bundle. */
static void *balloc(Reader *r, size_t n) {
    if (r->failed)
        return NULL;
    void **blk = calloc(1, sizeof(void *) + (n ? n : 1));
    if (!blk) {
        fail(r, "out of memory");
        return NULL;
    }
    blk[0] = r->b->mem;
    r->b->mem = blk;
    return blk + 1;
}

static bool need(Reader *r, size_t n) {
    if (r->failed)
        return false;
    if (n > r->end - r->pos) {
        fail(r, "truncated at byte %zu (%s)", r->end, r->section);
        return false;
    }
    return true;
}

static uint64_t rd_le(Reader *r, int bytes) {
    if (!need(r, (size_t)bytes))
        return 0;
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)r->base[r->pos + i] << (8 * i);
    r->pos += (size_t)bytes;
    return v;
}
static uint8_t rd_u8(Reader *r) {
    return (uint8_t)rd_le(r, 1);
}
static uint16_t rd_u16(Reader *r) {
    return (uint16_t)rd_le(r, 2);
}
static uint32_t rd_u32(Reader *r) {
    return (uint32_t)rd_le(r, 4);
}
static uint64_t rd_u64(Reader *r) {
    return rd_le(r, 8);
}
static double rd_f64(Reader *r) {
    uint64_t u = rd_u64(r);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* A count bounded by `max`, named in the message when out of range. */
static uint32_t rd_count(Reader *r, uint32_t max, const char *what) {
    uint32_t n = rd_u32(r);
    if (!r->failed && n > max) {
        fail(r, "%s count %u exceeds the limit %u at byte %zu (%s)", what, n, max, r->pos - 4, r->section);
        return 0;
    }
    return n;
}

static const char *rd_str(Reader *r) {
    uint32_t n = rd_u32(r);
    if (!r->failed && n > RT_MAX_STR) {
        fail(r, "string of %u bytes at byte %zu (%s)", n, r->pos - 4, r->section);
        return "";
    }
    if (!need(r, n))
        return "";
    char *s = balloc(r, (size_t)n + 1);
    if (!s)
        return "";
    memcpy(s, r->base + r->pos, n);
    s[n] = 0;
    if (strlen(s) != n) {
        fail(r, "string with a NUL byte at byte %zu (%s)", r->pos, r->section);
        return "";
    }
    r->pos += n;
    return s;
}

static void rd_expr(Reader *r, RtExpr *e) {
    uint32_t n = rd_u32(r);
    if (!r->failed && (n == 0 || n > RT_MAX_EXPR_BYTES)) {
        fail(r, "expression of %u bytes at byte %zu (%s)", n, r->pos - 4, r->section);
        return;
    }
    if (!need(r, n))
        return;
    e->code = r->base + r->pos;
    e->len = n;
    r->pos += n;
}

static void check_expr(Reader *r, const RtExpr *e, const RtKernelMeta *k, const char *what) {
    char why[200];
    if (!r->failed && !rt_expr_check(e, k, why, sizeof why))
        fail(r, "kernel '%s': bad %s: %s", k->name, what, why);
}

/* "BLOCK=1024, warps=4, stages=2" then the facts, as tile_rt_last_variant shows it. */
static char *variant_text(Reader *r, const RtKernelMeta *k, const RtVariant *v) {
    char buf[1024];
    size_t n = 0;
    buf[0] = 0;
    for (uint32_t j = 0; j < k->ncnames && n < sizeof buf; j++) {
        int w = v->cfloat[j] ? snprintf(buf + n, sizeof buf - n, "%s%s=%g", j ? ", " : "", k->cnames[j], v->cvals[j])
                             : snprintf(buf + n, sizeof buf - n, "%s%s=%lld", j ? ", " : "", k->cnames[j],
                                        (long long)v->cvals[j]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    char *s = balloc(r, strlen(buf) + 1);
    if (s)
        strcpy(s, buf);
    return s ? s : "";
}

static void rd_variant(Reader *r, RtKernelMeta *k, RtVariant *v, uint32_t vi) {
    snprintf(r->section, sizeof r->section, "variant %u of '%s'", vi, k->name);
    v->cvals = balloc(r, (k->ncnames + 1) * sizeof *v->cvals);
    v->cfloat = balloc(r, k->ncnames + 1);
    if (r->failed)
        return;
    for (uint32_t j = 0; j < k->ncnames; j++)
        v->cvals[j] = rd_f64(r);
    for (uint32_t j = 0; j < k->ncnames; j++) {
        v->cfloat[j] = rd_u8(r);
        if (!r->failed && v->cfloat[j] > 1)
            fail(r, "bad float flag %u at byte %zu (%s)", v->cfloat[j], r->pos - 1, r->section);
    }
    /* an integer constant is an i64 written as a double: the runtime converts it back
     * (clauses, variant text), which for any other double is undefined */
    for (uint32_t j = 0; j < k->ncnames && !r->failed; j++) {
        double c = v->cvals[j];
        if (!v->cfloat[j] && !(c >= -0x1p63 && c < 0x1p63 && c == (double)(int64_t)c))
            fail(r, "integer constant '%s' has the value %g, not an i64 (%s)", k->cnames[j], c, r->section);
    }
    v->warps = rd_u32(r);
    v->stages = rd_u32(r);
    v->smem_bytes = rd_u32(r);
    if (!r->failed && (v->warps == 0 || v->warps > 32 || (v->warps & (v->warps - 1))))
        fail(r, "warps=%u is not a power of two up to 32 (%s)", v->warps, r->section);
    v->div16 = rd_u64(r);
    v->eq1 = rd_u64(r);
    v->div8 = r->version >= 3 ? rd_u64(r) : 0;
    v->flops = rd_u64(r);
    v->bytes = rd_u64(r);
    uint64_t valid = k->nparams >= 64 ? ~0ull : ((1ull << k->nparams) - 1);
    if (!r->failed && (v->div16 & v->div8))
        fail(r, "a parameter is both divisible by 16 and by 8 only (%s)", r->section);
    if (!r->failed && ((v->div16 | v->div8 | v->eq1) & ~valid))
        fail(r, "specialization facts name a parameter past the %u of '%s' (%s)", k->nparams, k->name, r->section);
    for (uint32_t i = 0; i < k->nparams && !r->failed; i++) {
        const RtParam *p = &k->params[i];
        bool is_int = !p->is_pointer && !tile_scalar_is_float(p->scalar);
        if ((v->eq1 >> i & 1) && !is_int)
            fail(r, "fact 'equals one' on non-integer parameter '%s' (%s)", p->name, r->section);
        if ((v->div16 >> i & 1) && !(is_int || p->is_pointer))
            fail(r, "fact 'divisible by 16' on float parameter '%s' (%s)", p->name, r->section);
        if ((v->div8 >> i & 1) && !(is_int || p->is_pointer))
            fail(r, "fact 'divisible by 8' on float parameter '%s' (%s)", p->name, r->section);
    }
    v->ncode = rd_count(r, RT_MAX_CODE, "code object");
    v->code = balloc(r, (v->ncode + 1) * sizeof *v->code);
    for (uint32_t c = 0; c < v->ncode && !r->failed; c++) {
        RtCode *o = &v->code[c];
        o->arch = rd_str(r);
        o->kind = rd_u8(r);
        o->entry = rd_str(r);
        if (!r->failed && o->kind != RT_CODE_CUBIN && o->kind != RT_CODE_PTX &&
            (o->kind != RT_CODE_CUBIN_UNCAPPED || r->version < 2))
            fail(r, "code kind %u is neither cubin (1), PTX (2) nor%s uncapped cubin (3) (%s)", o->kind,
                 r->version < 2 ? " (from version 2 on)" : "", r->section);
        uint64_t n = rd_u64(r);
        if (!r->failed && n > r->end - r->pos) {
            fail(r, "truncated at byte %zu (%s: code of %llu bytes)", r->end, r->section, (unsigned long long)n);
            break;
        }
        if (r->failed)
            break;
        o->bytes = r->base + r->pos;
        o->len = (size_t)n;
        r->pos += (size_t)n;
    }
    if (!r->failed)
        v->text = variant_text(r, k, v);
}

static void rd_kernel(Reader *r, RtKernelMeta *k, uint32_t ki) {
    snprintf(r->section, sizeof r->section, "kernel table, kernel %u", ki);
    k->name = rd_str(r);
    if (!r->failed && !*k->name)
        fail(r, "kernel %u has an empty name", ki);
    k->source_hash = rd_u64(r);
    snprintf(r->section, sizeof r->section, "parameters of '%s'", k->name);
    k->nparams = rd_count(r, RT_MAX_PARAMS, "parameter");
    k->params = balloc(r, (k->nparams + 1) * sizeof *k->params);
    for (uint32_t i = 0; i < k->nparams && !r->failed; i++) {
        RtParam *p = &k->params[i];
        p->name = rd_str(r);
        uint8_t isp = rd_u8(r), sc = rd_u8(r), isc = rd_u8(r);
        rd_u8(r);
        if (r->failed)
            break;
        if (isp > 1 || isc > 1 || sc >= TILE_NSCALARS || (isp && isc)) {
            fail(r, "parameter '%s' of '%s' has a bad kind/type byte at byte %zu", p->name, k->name, r->pos - 4);
            break;
        }
        p->is_pointer = isp;
        p->is_const = isc;
        p->scalar = (tile_scalar)sc;
    }
    snprintf(r->section, sizeof r->section, "clauses of '%s'", k->name);
    k->ngrid = rd_count(r, RT_MAX_GRID, "grid expression");
    for (uint32_t i = 0; i < k->ngrid && !r->failed; i++)
        rd_expr(r, &k->grid[i]);
    k->nwhere = rd_count(r, RT_MAX_WHERE, "where clause");
    k->where = balloc(r, (k->nwhere + 1) * sizeof *k->where);
    for (uint32_t i = 0; i < k->nwhere && !r->failed; i++) {
        k->where[i].text = rd_str(r);
        k->where[i].loc = rd_str(r);
        rd_expr(r, &k->where[i].pred);
    }
    k->nkey = rd_count(r, RT_MAX_PARAMS, "key");
    k->key = balloc(r, (k->nkey + 1) * sizeof *k->key);
    for (uint32_t i = 0; i < k->nkey && !r->failed; i++) {
        k->key[i] = rd_u16(r);
        if (!r->failed && (k->key[i] >= k->nparams || k->params[k->key[i]].is_pointer || k->params[k->key[i]].is_const))
            fail(r, "key of '%s' names parameter %u, not a runtime scalar", k->name, k->key[i]);
    }
    k->ncnames = rd_count(r, RT_MAX_CONST_NAMES, "constant name");
    k->cnames = balloc(r, (k->ncnames + 1) * sizeof *k->cnames);
    for (uint32_t i = 0; i < k->ncnames && !r->failed; i++)
        k->cnames[i] = rd_str(r);
    /* Expressions are checked once the names they index are known. */
    for (uint32_t i = 0; i < k->ngrid; i++)
        check_expr(r, &k->grid[i], k, "grid expression");
    for (uint32_t i = 0; i < k->nwhere; i++)
        check_expr(r, &k->where[i].pred, k, "where clause");
    k->nvariants = rd_count(r, RT_MAX_VARIANTS, "variant");
    if (!r->failed && k->nvariants == 0)
        fail(r, "kernel '%s' has no variants", k->name);
    k->variants = balloc(r, (k->nvariants + 1) * sizeof *k->variants);
    for (uint32_t i = 0; i < k->nvariants && !r->failed; i++)
        rd_variant(r, k, &k->variants[i], i);
}

tile_rt_status rt_bundle_parse(const char *name, const void *data, size_t len, RtBundle **out, char *err, size_t errn) {
    *out = NULL;
    RtBundle *b = calloc(1, sizeof *b);
    Reader r = {.err = err, .errn = errn, .name = name ? name : "<memory>", .b = b};
    if (!b) {
        snprintf(err, errn, "bundle '%s': out of memory", r.name);
        return TILE_RT_ERR_BUNDLE;
    }
    if (!data && len) {
        fail(&r, "no data");
        goto bad;
    }
    b->data = malloc(len ? len : 1);
    if (!b->data) {
        fail(&r, "out of memory");
        goto bad;
    }
    memcpy(b->data, data, len);
    b->len = len;
    r.base = b->data;
    r.end = len;
    snprintf(r.section, sizeof r.section, "header");
    if (len < BUNDLE_HEADER_BYTES) {
        fail(&r, "truncated at byte %zu (header)", len);
        goto bad;
    }
    if (memcmp(r.base, BUNDLE_MAGIC, BUNDLE_MAGIC_BYTES)) {
        fail(&r, "not a bundle (bad magic)");
        goto bad;
    }
    r.pos = 8;
    uint32_t version = rd_u32(&r), flags = rd_u32(&r);
    uint64_t payload = rd_u64(&r), sum = rd_u64(&r);
    if (version < BUNDLE_VERSION_OLDEST || version > BUNDLE_VERSION) {
        fail(&r, "version %u, this runtime reads %u to %u", version, BUNDLE_VERSION_OLDEST, BUNDLE_VERSION);
        goto bad;
    }
    r.version = version;
    if (flags) {
        fail(&r, "unknown flags 0x%x", flags);
        goto bad;
    }
    if (payload > len - BUNDLE_HEADER_BYTES) {
        fail(&r, "truncated at byte %zu (payload of %llu bytes)", len, (unsigned long long)payload);
        goto bad;
    }
    if (payload < len - BUNDLE_HEADER_BYTES) {
        fail(&r, "%llu trailing bytes after the payload", (unsigned long long)(len - BUNDLE_HEADER_BYTES - payload));
        goto bad;
    }
    if (rt_fnv1a(RT_FNV_BASIS, r.base + BUNDLE_HEADER_BYTES, (size_t)payload) != sum) {
        fail(&r, "checksum mismatch");
        goto bad;
    }
    snprintf(r.section, sizeof r.section, "kernel table");
    b->producer = rd_str(&r);
    b->nkernels = rd_count(&r, RT_MAX_KERNELS, "kernel");
    b->kernels = balloc(&r, (b->nkernels + 1) * sizeof *b->kernels);
    for (uint32_t i = 0; i < b->nkernels && !r.failed; i++) {
        rd_kernel(&r, &b->kernels[i], i);
        for (uint32_t j = 0; j < i && !r.failed; j++)
            if (!strcmp(b->kernels[j].name, b->kernels[i].name))
                fail(&r, "two kernels named '%s'", b->kernels[i].name);
    }
    if (!r.failed && r.pos != r.end)
        fail(&r, "%zu unread bytes at the end of the payload", r.end - r.pos);
    if (r.failed)
        goto bad;
    *out = b;
    return TILE_RT_OK;
bad:
    rt_bundle_free(b);
    return TILE_RT_ERR_BUNDLE;
}

void rt_bundle_free(RtBundle *b) {
    if (!b)
        return;
    void **blk = b->mem;
    while (blk) {
        void **next = blk[0];
        free(blk);
        blk = next;
    }
    free(b->data);
    free(b);
}
