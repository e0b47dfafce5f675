/* The compile context: options, defines, diagnostics; plus the small tables of the
 * public API (statuses, scalar kinds, emit kinds, architectures). */
#include "driver.h"
#include "target.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The names of the public API's X-macro tables, by value. */
#define TEXT_OF(id, text) text,

static const char *const status_text[] = {TILE_STATUSES(TEXT_OF)};

const char *tile_status_string(tile_status s) {
    if ((unsigned)s >= TILE_NSTATUS)
        return "unknown status";
    return status_text[s];
}

/* The public scalar enum mirrors the IR's table (ir.h TIR_SCALARS) entry by entry,
 * so a kind converts by value; keep the two lists in the same order. */
_Static_assert((int)TILE_NSCALARS == (int)TIR_NSCALARS, "tile_scalar must mirror TirScalar");

static const char *const scalar_text[] = {TILE_SCALARS(TEXT_OF)};

const char *tile_scalar_name(tile_scalar s) {
    return (unsigned)s < TILE_NSCALARS ? scalar_text[s] : "?";
}

size_t tile_scalar_size(tile_scalar s) {
    return (unsigned)s < TILE_NSCALARS ? (size_t)tir_scalar_bytes((TirScalar)s) : 0;
}

bool tile_scalar_is_float(tile_scalar s) {
    return (unsigned)s < TILE_NSCALARS && tir_scalar_is_float((TirScalar)s);
}

bool tile_scalar_is_signed(tile_scalar s) {
    return (unsigned)s < TILE_NSCALARS && !tir_scalar_is_float((TirScalar)s) && tir_scalar_is_signed((TirScalar)s);
}

static const char *const emit_text[] = {TILE_EMIT_KINDS(TEXT_OF)};

int tile_emit_kind_from_name(const char *name) {
    for (int i = 0; name && i < TILE_NEMIT; i++)
        if (!strcmp(name, emit_text[i]))
            return i;
    return -1;
}

const char *tile_emit_kind_name(tile_emit_kind k) {
    return (unsigned)k < TILE_NEMIT ? emit_text[k] : "?";
}

/* The architectures are the target table's (ir/target.def); the runtime, which may not
 * include ir/, asks it through these. */
bool tile_arch_is_known(const char *arch) {
    return tir_target_find(arch) != NULL;
}

const char *tile_arch_names(void) {
    return tir_target_names();
}

const char *tile_arch_default(void) {
    return TIR_TARGET_DEFAULT;
}

const char *tile_arch_for_device(int cc_major, int cc_minor) {
    const TirTarget *t = tir_target_for_device(cc_major, cc_minor);
    return t ? t->name : NULL;
}

void tile_ctx_set_diag_json(tile_ctx *c, bool on) {
    if (c)
        c->diag_json = on;
}

void driver_sink(void *ud, const char *msg) {
    tile_ctx *c = ud;
    /* A compile thread's message comes back as JSON already (driver_jobs replays it). */
    if (msg[0] == '{') {
        if (c->diag)
            c->diag(c->diag_ud, msg);
        return;
    }
    /* Notes follow their error; keep the error as "the last error". */
    if (strstr(msg, ": note: ") == NULL || !c->last_error) {
        char *copy = strdup(msg);
        if (copy) {
            free(c->last_error);
            c->last_error = copy;
        }
    }
    if (c->diag && c->diag_json) {
        char *json = driver_diag_json(msg, c->variant);
        c->diag(c->diag_ud, json ? json : msg);
        free(json);
    } else if (c->diag) {
        c->diag(c->diag_ud, msg);
    }
}

void driver_error(tile_ctx *c, const char *fmt, ...) {
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "error: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - n, fmt, ap);
    va_end(ap);
    driver_sink(c, buf);
}

tile_ctx *tile_ctx_new(void) {
    tile_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    strcpy(c->arch, TIR_TARGET_DEFAULT);
    c->opt_level = 3;
    return c;
}

static void define_free(DriverDefine *d) {
    free(d->name);
    free(d->ivals);
    free(d->fvals);
    free(d->is_float);
}

void tile_ctx_clear_defines(tile_ctx *c) {
    for (int i = 0; i < c->ndefines; i++)
        define_free(&c->defines[i]);
    free(c->defines);
    c->defines = NULL;
    c->ndefines = 0;
}

void tile_ctx_free(tile_ctx *c) {
    if (!c)
        return;
    tile_ctx_clear_defines(c);
    tile_ctx_clear_assumptions(c);
    free(c->print_after);
    free(c->last_error);
    free(c->ptxas_options);
    free(c);
}

tile_status tile_ctx_set_ptxas_options(tile_ctx *c, const char *options) {
    if (!c)
        return TILE_ERR_INVALID;
    int words = 0;
    for (const char *p = options; p && *p;) {
        p += strspn(p, " ");
        words += *p != 0;
        p += strcspn(p, " ");
    }
    if (options && (strlen(options) > 255 || words > 8)) {
        driver_error(c, "ptxas options '%s': at most 8 words and 255 bytes", options);
        return TILE_ERR_INVALID;
    }
    free(c->ptxas_options);
    c->ptxas_options = words ? strdup(options) : NULL;
    return TILE_OK;
}

void tile_ctx_set_progress(tile_ctx *c, tile_progress_fn fn, void *ud) {
    c->progress = fn;
    c->progress_ud = ud;
}

void tile_ctx_set_diag(tile_ctx *c, tile_diag_fn fn, void *ud) {
    c->diag = fn;
    c->diag_ud = ud;
}

tile_status tile_ctx_set_arch(tile_ctx *c, const char *arch) {
    if (!tile_arch_is_known(arch)) {
        driver_error(c, "unknown architecture '%s' (known: %s)", arch ? arch : "(null)", tir_target_names());
        return TILE_ERR_INVALID;
    }
    strcpy(c->arch, arch);
    return TILE_OK;
}

tile_status tile_ctx_set_opt_level(tile_ctx *c, int level) {
    if (level != 0 && level != 3) {
        driver_error(c, "optimization level must be 0 or 3, not %d", level);
        return TILE_ERR_INVALID;
    }
    c->opt_level = level;
    return TILE_OK;
}

void tile_ctx_set_debug(tile_ctx *c, bool debug) {
    c->debug = debug;
}

const char *tile_ctx_last_error(const tile_ctx *c) {
    return c && c->last_error ? c->last_error : "";
}

/* Edit distance of two short names (a long one is no typo: a large number). */
int tile_name_distance(const char *a, const char *b) {
    return driver_name_distance(a, b);
}

int driver_name_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    int row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
        }
    }
    return row[lb];
}

tile_status tile_ctx_set_print_after(tile_ctx *c, const char *pass, FILE *out) {
    if (pass && strcmp(pass, "all") && !tir_pass_find(pass)) {
        /* the message names the closest pass (a typo's likely meaning) and lists them all */
        char list[1024];
        size_t n = 0;
        const char *best = NULL;
        int bestd = 3;
        list[0] = 0;
        for (int i = 0; i < tir_pipeline_len; i++) {
            int w = snprintf(list + n, sizeof list - n, "%s ", tir_pipeline[i].name);
            if (w > 0 && (size_t)w < sizeof list - n)
                n += (size_t)w;
            int d = driver_name_distance(pass, tir_pipeline[i].name);
            if (d < bestd && d <= (strlen(pass) > 3 ? 2 : 1)) {
                best = tir_pipeline[i].name;
                bestd = d;
            }
        }
        driver_error(c,
                     "unknown pass '%s' for --print-after%s%s%s (the passes, in order: %sor "
                     "all)",
                     pass, best ? "; did you mean '" : "", best ? best : "", best ? "'?" : "", list);
        return TILE_ERR_INVALID;
    }
    char *copy = NULL;
    if (pass && !(copy = strdup(pass)))
        return TILE_ERR_INVALID;
    free(c->print_after);
    c->print_after = copy;
    c->dump = out;
    return TILE_OK;
}

/* One define value: an integer (decimal or 0x, '_' separators), a float, or
 * true/false.  Returns false when the text is none of these. */
static bool parse_value(const char *s, size_t n, int64_t *iv, double *fv, bool *is_float) {
    char buf[64];
    size_t k = 0;
    if (n == 0 || n >= sizeof buf)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] != '_')
            buf[k++] = s[i];
    buf[k] = 0;
    if (!strcmp(buf, "true") || !strcmp(buf, "false")) {
        *iv = buf[0] == 't';
        *fv = (double)*iv;
        *is_float = false;
        return true;
    }
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 0);
    if (*end == 0 && errno == 0 && end != buf) {
        *iv = v;
        *fv = (double)v;
        *is_float = false;
        return true;
    }
    /* a u64 of 2^63 and up: carried by its bits, as a tile_arg carries it */
    errno = 0;
    unsigned long long u = buf[0] != '-' ? strtoull(buf, &end, 0) : 0;
    if (buf[0] != '-' && *end == 0 && errno == 0 && end != buf) {
        *iv = (int64_t)u;
        *fv = (double)u;
        *is_float = false;
        return true;
    }
    errno = 0;
    double d = strtod(buf, &end);
    if (*end == 0 && end != buf && errno == 0) {
        *fv = d;
        *iv = (int64_t)d;
        *is_float = true;
        return true;
    }
    return false;
}

tile_status tile_ctx_define(tile_ctx *c, const char *text) {
    const char *eq = text ? strchr(text, '=') : NULL;
    bool name_ok = eq && eq > text && (isalpha((unsigned char)text[0]) || text[0] == '_');
    for (const char *q = text; name_ok && q < eq; q++)
        name_ok = isalnum((unsigned char)*q) || *q == '_';
    if (!name_ok || !eq[1]) {
        driver_error(c, "bad define '%s': expected NAME=VALUE[,VALUE...]", text ? text : "");
        return TILE_ERR_INVALID;
    }
    DriverDefine d = {0};
    int cap = 1;
    for (const char *q = eq + 1; *q; q++)
        cap += *q == ',';
    d.name = strndup(text, (size_t)(eq - text));
    d.ivals = calloc(cap, sizeof *d.ivals);
    d.fvals = calloc(cap, sizeof *d.fvals);
    d.is_float = calloc(cap, sizeof *d.is_float);
    if (!d.name || !d.ivals || !d.fvals || !d.is_float) {
        define_free(&d);
        return TILE_ERR_INVALID;
    }
    const char *v = eq + 1;
    for (;;) {
        const char *comma = strchr(v, ',');
        size_t len = comma ? (size_t)(comma - v) : strlen(v);
        if (!parse_value(v, len, &d.ivals[d.nvals], &d.fvals[d.nvals], &d.is_float[d.nvals])) {
            driver_error(c,
                         "bad value '%.*s' in define '%s': expected an integer, a float, "
                         "true or false",
                         (int)len, v, text);
            define_free(&d);
            return TILE_ERR_INVALID;
        }
        d.nvals++;
        if (!comma)
            break;
        v = comma + 1;
    }
    for (int i = 0; i < c->ndefines; i++)
        if (!strcmp(c->defines[i].name, d.name)) {
            define_free(&c->defines[i]);
            c->defines[i] = d;
            return TILE_OK;
        }
    DriverDefine *grown = realloc(c->defines, (c->ndefines + 1) * sizeof *grown);
    if (!grown) {
        define_free(&d);
        return TILE_ERR_INVALID;
    }
    c->defines = grown;
    c->defines[c->ndefines++] = d;
    return TILE_OK;
}

TfDefine *driver_defines(TirArena *a, const tile_ctx *c, const TfDefine *extra, int nextra, int *n) {
    TfDefine *out = tir_alloc(a, (c->ndefines + nextra + 1) * sizeof *out);
    int k = 0;
    for (int i = 0; i < nextra; i++)
        out[k++] = extra[i];
    /* A value given as an argument wins over a define of the same name. */
    for (int i = 0; i < c->ndefines; i++) {
        bool shadowed = false;
        for (int j = 0; j < nextra; j++)
            shadowed |= !strcmp(extra[j].name, c->defines[i].name);
        if (shadowed)
            continue;
        out[k].name = c->defines[i].name;
        out[k].ivals = c->defines[i].ivals;
        out[k].fvals = c->defines[i].fvals;
        out[k].is_float = c->defines[i].is_float;
        out[k].nvals = c->defines[i].nvals;
        k++;
    }
    *n = k;
    return out;
}

/* ---- launch assumptions ------------------------------------------------------------ */
tile_status tile_ctx_assume(tile_ctx *c, const char *param, unsigned facts) {
    if (!c || !param || !*param || (facts & ~(unsigned)(TILE_ASSUME_DIV16 | TILE_ASSUME_ONE | TILE_ASSUME_DIV8)))
        return TILE_ERR_INVALID;
    if (!strcmp(param, "*") && (facts & TILE_ASSUME_ONE)) {
        driver_error(c, "only a named integer parameter can be assumed equal to 1");
        return TILE_ERR_INVALID;
    }
    for (int i = 0; i < c->nassumes; i++)
        if (!strcmp(c->assumes[i].name, param)) {
            c->assumes[i].facts = facts ? c->assumes[i].facts | facts : 0;
            return TILE_OK;
        }
    if (!facts)
        return TILE_OK;
    DriverAssume *grown = realloc(c->assumes, (size_t)(c->nassumes + 1) * sizeof *grown);
    if (!grown)
        return TILE_ERR_INVALID;
    c->assumes = grown;
    if (!(c->assumes[c->nassumes].name = strdup(param)))
        return TILE_ERR_INVALID;
    c->assumes[c->nassumes++].facts = facts;
    return TILE_OK;
}

void tile_ctx_clear_assumptions(tile_ctx *c) {
    if (!c)
        return;
    for (int i = 0; i < c->nassumes; i++)
        free(c->assumes[i].name);
    free(c->assumes);
    c->assumes = NULL;
    c->nassumes = 0;
}

/* ---- timing ------------------------------------------------------------------------ */
static const char *const phase_text[] = {TILE_PHASES(TEXT_OF)};

const char *tile_phase_name(tile_phase ph) {
    return (unsigned)ph < TILE_NPHASES ? phase_text[ph] : "?";
}

void tile_ctx_set_timing(tile_ctx *c, bool on) {
    if (!c)
        return;
    c->timing = on;
    memset(c->phase_s, 0, sizeof c->phase_s);
}

double tile_ctx_phase_seconds(const tile_ctx *c, tile_phase ph) {
    return c && (unsigned)ph < TILE_NPHASES ? c->phase_s[ph] : 0;
}

double driver_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void driver_time(tile_ctx *c, tile_phase ph, double seconds) {
    if (c && c->timing && (unsigned)ph < TILE_NPHASES)
        c->phase_s[ph] += seconds;
}
