/* The values of tilec's command line (cli_args.h): what each ARG of `tilec run` becomes,
 * and --save.  Files given as @PATH are raw little-endian elements, or .npy arrays whose
 * dtype and shape are checked against the parameter and the command line. */
#include "cli_args.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool cli_quiet, cli_json;

/* A message as the library's JSON objects, without a location. */
static void json_line(const char *severity, const char *fmt, va_list ap) {
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr,
            "{\"severity\":\"%s\",\"file\":null,\"line\":null,\"column\":null,\"end_line\":null,"
            "\"end_column\":null,\"message\":\"",
            severity);
    for (const char *p = msg; *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', stderr);
        if ((unsigned char)*p < 0x20)
            fprintf(stderr, "\\u%04x", (unsigned char)*p);
        else
            fputc(*p, stderr);
    }
    fputs("\",\"source\":null,\"variant\":null,\"notes\":[]}\n", stderr);
}

void cli_notice(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (cli_json) {
        json_line("warning", fmt, ap);
    } else {
        fputs("tilec: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputs("\n", stderr);
    }
    va_end(ap);
}

void cli_verror(const char *fmt, va_list ap) {
    if (cli_quiet)
        return;
    if (cli_json) {
        json_line("error", fmt, ap);
        return;
    }
    fputs("tilec: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
}

void cli_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    cli_verror(fmt, ap);
    va_end(ap);
}

/* Largest buffer `tilec run` creates: enough for any test, small enough that a typo
 * in a count fails cleanly instead of exhausting memory. */
uint64_t cli_max_buffer_bytes = (uint64_t)1 << 36;
/* The most read from an input that is not a regular file (a pipe, a device such as
 * /dev/zero): its size is not known up front, and /dev/zero never ends. */
#define MAX_STREAM_BYTES ((size_t)1 << 26)

bool cli_parse_i64(const char *s, int64_t *out) {
    char buf[80];
    size_t k = 0;
    for (; *s && k + 1 < sizeof buf; s++)
        if (*s != '_')
            buf[k++] = *s;
    if (*s || k == 0)
        return false;
    buf[k] = 0;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 0);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

bool cli_parse_u64(const char *s, uint64_t *out) {
    char buf[80];
    size_t k = 0;
    for (; *s && k + 1 < sizeof buf; s++)
        if (*s != '_')
            buf[k++] = *s;
    if (*s || k == 0 || buf[0] == '-' || buf[0] == '+')
        return false;
    buf[k] = 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 0);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

/* A count or a seed: a non-negative integer. */
static bool parse_u64(const char *s, size_t n, uint64_t *out) {
    char buf[32];
    if (n == 0 || n >= sizeof buf || s[0] == '-' || s[0] == '+')
        return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 0);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

bool cli_is_buffer_spec(const char *v) {
    return v[0] == '@' || !strncmp(v, "zeros:", 6) || !strncmp(v, "rand:", 5) || !strncmp(v, "randn:", 6);
}

/* The whole of file `path` for argument `pi`: malloc'ed, its length in *len. */
static char *read_input(const tile_param_info *pi, const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_error("argument '%s': cannot open '%s': %s", pi->name, path, strerror(errno));
        return NULL;
    }
    struct stat st;
    bool regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    /* a .npy header's bytes come on top of the data's */
    uint64_t most = cli_max_buffer_bytes + NPY_MAX_HEADER_BYTES + 16;
    if (regular && (uint64_t)st.st_size > most) {
        fclose(f);
        cli_error("argument '%s': '%s' has %lld bytes, more than the %llu a buffer may have", pi->name, path,
                  (long long)st.st_size, (unsigned long long)cli_max_buffer_bytes);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap && !regular && n >= MAX_STREAM_BYTES) {
            free(buf);
            fclose(f);
            cli_error("argument '%s': '%s' is not a regular file and gives more than %zu MiB; "
                      "save it to a file first",
                      pi->name, path, MAX_STREAM_BYTES >> 20);
            return NULL;
        }
        if (n == cap) {
            char *grown = cap < most ? realloc(buf, cap * 2) : NULL;
            if (!grown)
                free(buf);
            buf = grown;
            cap *= 2;
        }
    }
    bool bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        cli_error("argument '%s': cannot read '%s'", pi->name, path);
        return NULL;
    }
    *len = n;
    return buf;
}

/* SHAPE of @PATH:SHAPE: N (an element count) or D0xD1x... (a shape). */
static bool parse_shape(const char *s, CliShape *shape) {
    shape->ndim = 0;
    for (;;) {
        if (*s < '0' || *s > '9' || shape->ndim == NPY_MAX_DIMS)
            return false;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno)
            return false;
        shape->dims[shape->ndim++] = v;
        if (!*end)
            return true;
        if (*end != 'x')
            return false;
        s = end + 1;
    }
}

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

/* A .npy file's data moved to the start of buf: checked against the parameter's type. */
static bool take_npy(const tile_param_info *pi, const char *path, char *buf, size_t *len, CliShape *shape) {
    NpyHeader h;
    char why[200];
    if (!npy_read_header(buf, *len, &h, why, sizeof why)) {
        cli_error("argument '%s': '%s': %s", pi->name, path, why);
        return false;
    }
    if (h.fortran_order) {
        cli_error("argument '%s': '%s' is in Fortran order; tilec reads C order (save "
                  "np.ascontiguousarray(a))",
                  pi->name, path);
        return false;
    }
    const char *tn = tile_scalar_name(pi->type);
    if (!npy_descr_matches(h.descr, pi->type)) {
        int t = npy_descr_scalar(h.descr);
        if (h.descr[0] == '>' && t < 0) {
            cli_error("argument '%s': '%s' holds dtype '%s', big-endian; tilec reads "
                      "little-endian data (save a.astype('%s'))",
                      pi->name, path, h.descr, npy_descr_of(pi->type));
            return false;
        }
        cli_error("argument '%s': '%s' holds dtype '%s' (%s), the parameter is *%s (dtype '%s')", pi->name, path,
                  h.descr, t >= 0 ? tile_scalar_name((tile_scalar)t) : "no tile type", tn, npy_descr_of(pi->type));
        return false;
    }
    uint64_t count, esize = tile_scalar_size(pi->type);
    char dims[NPY_MAX_DIMS * 24 + 8];
    npy_shape_text(h.shape, h.ndim, dims, sizeof dims);
    if (!npy_count(h.shape, h.ndim, &count) || count > cli_max_buffer_bytes / esize) {
        cli_error("argument '%s': '%s' has shape %s, more than the %llu bytes a buffer may have", pi->name, path, dims,
                  (unsigned long long)cli_max_buffer_bytes);
        return false;
    }
    size_t have = *len - h.data_offset, want = (size_t)(count * esize);
    if (have != want) {
        cli_error("argument '%s': '%s' has %zu bytes of data after its header (byte %zu), "
                  "shape %s of '%s' needs %zu%s",
                  pi->name, path, have, h.data_offset, dims, h.descr, want, have < want ? " (truncated)" : "");
        return false;
    }
    memmove(buf, buf + h.data_offset, want);
    *len = want;
    shape->ndim = h.ndim;
    memcpy(shape->dims, h.shape, (size_t)h.ndim * sizeof *h.shape);
    return true;
}

/* @PATH[:SHAPE]: the file's elements, raw or .npy, checked against SHAPE when given. */
static bool file_buffer(const tile_param_info *pi, const char *spec, tile_arg *out, CliShape *shape) {
    size_t esize = tile_scalar_size(pi->type);
    const char *tn = tile_scalar_name(pi->type);
    char *path = strdup(spec);
    if (!path) {
        cli_error("argument '%s': out of memory", pi->name);
        return false;
    }
    /* the text after the last ':' is a SHAPE unless the whole names a file */
    CliShape want = {0};
    char *colon = strrchr(path, ':');
    if (colon && parse_shape(colon + 1, &want) && access(path, F_OK) != 0)
        *colon = 0;
    else
        want.ndim = 0;
    size_t len;
    char *buf = read_input(pi, path, &len);
    bool ok = buf != NULL;
    shape->ndim = 0;
    if (ok && npy_has_magic(buf, len)) {
        ok = take_npy(pi, path, buf, &len, shape);
    } else if (ok && ends_with(path, ".npy")) {
        cli_error("argument '%s': '%s': byte 0: not a .npy file (it does not start with "
                  "\\x93NUMPY); a file of raw elements needs another name",
                  pi->name, path);
        ok = false;
    } else if (ok && len % esize) {
        cli_error("argument '%s': '%s' has %zu bytes, not a multiple of %zu (the size of %s)", pi->name, path, len,
                  esize, tn);
        ok = false;
    }
    if (ok && want.ndim) {
        uint64_t n = len / esize, wn;
        char got_text[NPY_MAX_DIMS * 24 + 8], want_text[sizeof got_text];
        npy_shape_text(want.dims, want.ndim, want_text, sizeof want_text);
        if (want.ndim == 1 && n != want.dims[0]) {
            cli_error("argument '%s': '%s' has %llu elements of %s, the command line says %llu", pi->name, path,
                      (unsigned long long)n, tn, (unsigned long long)want.dims[0]);
            ok = false;
        } else if (want.ndim > 1 && shape->ndim) {
            npy_shape_text(shape->dims, shape->ndim, got_text, sizeof got_text);
            if (strcmp(got_text, want_text)) {
                cli_error("argument '%s': '%s' has shape %s, the command line says %s", pi->name, path, got_text,
                          want_text);
                ok = false;
            }
        } else if (want.ndim > 1 && (!npy_count(want.dims, want.ndim, &wn) || wn != n)) {
            cli_error("argument '%s': '%s' has %llu elements of %s, the command line says shape "
                      "%s",
                      pi->name, path, (unsigned long long)n, tn, want_text);
            ok = false;
        }
        if (ok && want.ndim > 1)
            *shape = want;
    }
    free(path);
    if (!ok) {
        free(buf);
        return false;
    }
    *out = tile_arg_buffer(buf, len);
    return true;
}

bool cli_make_buffer(const tile_param_info *pi, const char *v, tile_arg *out, CliShape *shape) {
    size_t esize = tile_scalar_size(pi->type);
    const char *tn = tile_scalar_name(pi->type);
    shape->ndim = 0;
    if (v[0] == '@')
        return file_buffer(pi, v + 1, out, shape);
    tile_fill_kind kind = v[0] == 'z' ? TILE_FILL_ZEROS : !strncmp(v, "randn:", 6) ? TILE_FILL_RANDN : TILE_FILL_RAND;
    const char *spec = strchr(v, ':') + 1;
    const char *colon = strchr(spec, ':');
    uint64_t count, seed = 0;
    if (!parse_u64(spec, colon ? (size_t)(colon - spec) : strlen(spec), &count) ||
        (colon && (kind == TILE_FILL_ZEROS || !parse_u64(colon + 1, strlen(colon + 1), &seed)))) {
        cli_error("argument '%s': bad buffer '%s' (zeros:COUNT, rand:COUNT[:SEED], "
                  "randn:COUNT[:SEED])",
                  pi->name, v);
        return false;
    }
    if (count > cli_max_buffer_bytes / esize) {
        cli_error("argument '%s': %llu elements is too many", pi->name, (unsigned long long)count);
        return false;
    }
    if (kind == TILE_FILL_RANDN && !tile_scalar_is_float(pi->type)) {
        cli_error("argument '%s': randn needs a float pointee, not %s (use rand:)", pi->name, tn);
        return false;
    }
    void *buf = malloc(count > 0 ? count * esize : 1);
    if (!buf) {
        cli_error("argument '%s': out of memory for %llu elements", pi->name, (unsigned long long)count);
        return false;
    }
    tile_fill(pi->type, buf, count, kind, seed);
    *out = tile_arg_buffer(buf, count * esize);
    return true;
}

bool cli_make_scalar(const tile_param_info *pi, const char *v, tile_arg *out) {
    const char *tn = tile_scalar_name(pi->type);
    if (pi->type == TILE_BOOL) {
        /* as -D takes them: true, false, 1 or 0 */
        bool t = !strcmp(v, "true") || !strcmp(v, "1");
        if (!t && strcmp(v, "false") && strcmp(v, "0")) {
            cli_error("argument '%s': expected true or false (or 1, 0) for bool, got '%s'", pi->name, v);
            return false;
        }
        *out = tile_arg_int(t);
        return true;
    }
    if (tile_scalar_is_float(pi->type)) {
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (!*v || *end || (errno && d != 0)) {
            cli_error("argument '%s': expected a number for %s, got '%s'", pi->name, tn, v);
            return false;
        }
        *out = tile_arg_float(d);
        return true;
    }
    int64_t i;
    uint64_t u;
    if (pi->type == TILE_U64 && cli_parse_u64(v, &u)) {
        *out = tile_arg_int((int64_t)u); /* a u64 travels by its bits */
        return true;
    }
    if (!cli_parse_i64(v, &i)) {
        cli_error("argument '%s': expected an integer for %s, got '%s'", pi->name, tn, v);
        return false;
    }
    int bits = (int)tile_scalar_size(pi->type) * 8;
    bool fits = tile_scalar_is_signed(pi->type)
                    ? bits >= 64 || (i >= -(INT64_C(1) << (bits - 1)) && i < (INT64_C(1) << (bits - 1)))
                    : i >= 0 && (bits >= 64 || i < (INT64_C(1) << bits));
    if (!fits) {
        cli_error("argument '%s': %s is out of range for %s", pi->name, v, tn);
        return false;
    }
    *out = tile_arg_int(i);
    return true;
}

bool cli_parse_grid(const char *s, int64_t grid[3]) {
    int n = 0;
    while (n < 3) {
        char *end;
        errno = 0;
        if (*s < '0' || *s > '9')
            return false;
        long long v = strtoll(s, &end, 10);
        if (errno || v <= 0 || v > INT32_MAX)
            return false;
        grid[n++] = v;
        if (*end == 0)
            return true;
        if (*end != ',')
            return false;
        s = end + 1;
    }
    return false;
}

bool cli_save_buffer(const char *path, const tile_arg *a, tile_scalar t, const CliShape *shape) {
    char *header = NULL;
    size_t hlen = 0;
    if (ends_with(path, ".npy")) {
        uint64_t flat = a->buf.bytes / tile_scalar_size(t);
        header =
            shape->ndim ? npy_make_header(t, shape->dims, shape->ndim, &hlen) : npy_make_header(t, &flat, 1, &hlen);
        if (!header) {
            cli_error("cannot write '%s': out of memory", path);
            return false;
        }
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        cli_error("cannot write '%s': %s", path, strerror(errno));
        free(header);
        return false;
    }
    bool ok =
        fwrite(header ? header : "", 1, hlen, f) == hlen && fwrite(a->buf.ptr, 1, a->buf.bytes, f) == a->buf.bytes;
    ok &= fclose(f) == 0;
    if (!ok)
        cli_error("cannot write '%s'", path);
    free(header);
    return ok;
}

/* ---- the options ----------------------------------------------------------------- */
typedef struct Args {
    int argc;
    char **argv;
    char *err;
    size_t errn;
    bool failed;
} Args;

static bool args_fail(Args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool args_fail(Args *a, const char *fmt, ...) {
    if (a->failed)
        return false;
    a->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->err, a->errn, fmt, ap);
    va_end(ap);
    return false;
}

/* "-X VALUE" or "-XVALUE" or "--x=VALUE" / "--x VALUE": the option's value, or NULL
 * when argv[*i] is not this option (or it lacks its value: a->failed). */
static const char *opt_value(Args *g, int *i, const char *name) {
    const char *a = g->argv[*i];
    size_t n = strlen(name);
    if (g->failed || strncmp(a, name, n))
        return NULL;
    if (a[n] == '=' && name[1] == '-')
        return a + n + 1;
    if (a[n] == 0) {
        if (*i + 1 >= g->argc) {
            args_fail(g, "option '%s' needs a value", name);
            return NULL;
        }
        return g->argv[++*i];
    }
    if (name[1] != '-') /* short options take their value attached: -DNAME=V, -oOUT */
        return a + n;
    return NULL;
}

/* Every option of each command, for "did you mean" on a mistyped one. */
static const char *const common_options[] = {"-v", "--debug",       "-O0",    "-O3",      "--kernel",
                                             "-D", "--diagnostics", "--help", "--version"};
static const char *const compile_options[] = {"--emit",         "--arch",        "--print-after",
                                              "--assume-div16", "--assume-div8", "--assume-one",
                                              "--div16",        "--report",      "-o"};
static const char *const run_options[] = {"--device", "--grid", "--save", "--bench"};

/* "unknown option 'A'", with the closest option of `extra` or the common ones when A (up
 * to its '=') is a typo of it: one edit for short names, two otherwise. */
static bool unknown_option(Args *g, const char *a, const char *const *extra, size_t nextra) {
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(a, "="), a);
    const char *best = NULL;
    int bestd = 99, most = strlen(name) > 4 ? 2 : 1;
    for (size_t i = 0; i < nextra + sizeof common_options / sizeof *common_options; i++) {
        const char *cand = i < nextra ? extra[i] : common_options[i - nextra];
        int d = tile_name_distance(name, cand);
        if (d < bestd && d <= most) {
            best = cand;
            bestd = d;
        }
    }
    if (best)
        return args_fail(g, "unknown option '%s'; did you mean '%s'?", a, best);
    return args_fail(g, "unknown option '%s'", a);
}

static bool parse_common(Args *g, int *i, CliCommon *c) {
    const char *v;
    const char *a = g->argv[*i];
    if (!strcmp(a, "-v"))
        c->verbose = true;
    else if (!strcmp(a, "--debug"))
        c->debug = true;
    else if (!strcmp(a, "-O0"))
        c->opt_level = 0;
    else if (!strcmp(a, "-O3"))
        c->opt_level = 3;
    else if ((v = opt_value(g, i, "--kernel")))
        c->kernel = v;
    else if ((v = opt_value(g, i, "--diagnostics"))) {
        if (strcmp(v, "json") && strcmp(v, "text"))
            return args_fail(g, "bad --diagnostics '%s': expected text or json", v), true;
        c->diag_json = !strcmp(v, "json");
    } else if ((v = opt_value(g, i, "-D")))
        c->defines[c->ndefines++] = v;
    else
        return g->failed;
    return true;
}

bool cli_parse_compile(int argc, char **argv, CliCompile *o, char *err, size_t errn) {
    Args g = {.argc = argc, .argv = argv, .err = err, .errn = errn};
    *o = (CliCompile){.c = {.opt_level = 3, .defines = calloc(argc + 1, sizeof(char *))},
                      .emit = "cubin",
                      .arch = tile_arch_default(),
                      .div16 = calloc(argc + 1, sizeof(char *)),
                      .div8 = calloc(argc + 1, sizeof(char *)),
                      .one = calloc(argc + 1, sizeof(char *))};
    if (!o->c.defines || !o->div16 || !o->div8 || !o->one)
        return args_fail(&g, "out of memory");
    for (int i = 1; i < argc && !g.failed; i++) {
        const char *a = argv[i], *v;
        if (parse_common(&g, &i, &o->c))
            continue;
        else if ((v = opt_value(&g, &i, "--emit")))
            o->emit = v;
        else if ((v = opt_value(&g, &i, "--arch")))
            o->arch = v;
        else if ((v = opt_value(&g, &i, "--print-after")))
            o->print_after = v;
        else if ((v = opt_value(&g, &i, "--assume-div16")))
            o->div16[o->ndiv16++] = v;
        else if ((v = opt_value(&g, &i, "--assume-div8")))
            o->div8[o->ndiv8++] = v;
        else if ((v = opt_value(&g, &i, "--assume-one")))
            o->one[o->none++] = v;
        else if (!strcmp(a, "--div16"))
            o->all_div16 = true;
        else if (!strcmp(a, "--report") || !strcmp(a, "--report=text"))
            o->report = true;
        else if (!strcmp(a, "--report=json"))
            o->report = o->report_json = true;
        else if (!strncmp(a, "--report=", 9))
            args_fail(&g, "bad --report '%s': expected --report, --report=text or --report=json", a + 9);
        else if ((v = opt_value(&g, &i, "-o")))
            o->out_path = v;
        else if (g.failed)
            break;
        else if (a[0] == '-' && a[1])
            unknown_option(&g, a, compile_options, sizeof compile_options / sizeof *compile_options);
        else if (o->c.file)
            args_fail(&g, "more than one input file ('%s' and '%s')", o->c.file, a);
        else
            o->c.file = a;
    }
    if (g.failed)
        return false;
    o->emit_kind = tile_emit_kind_from_name(o->emit);
    if (o->emit_kind < 0)
        return args_fail(&g, "unknown --emit kind '%s' (tir llvm ptx cubin bundle header)", o->emit);
    if (!tile_arch_is_known(o->arch))
        return args_fail(&g, "unknown architecture '%s' (%s)", o->arch, tile_arch_names());
    return true;
}

bool cli_parse_run(int argc, char **argv, CliRun *o, char *err, size_t errn) {
    Args g = {.argc = argc, .argv = argv, .err = err, .errn = errn};
    *o = (CliRun){.c = {.opt_level = 3, .defines = calloc(argc + 1, sizeof(char *))},
                  .saves = calloc(argc + 1, sizeof(char *)),
                  .args = calloc(argc + 1, sizeof(char *))};
    if (!o->c.defines || !o->saves || !o->args)
        return args_fail(&g, "out of memory");
    const char *grid_text = NULL;
    for (int i = 2; i < argc && !g.failed; i++) {
        const char *a = argv[i], *v;
        if (parse_common(&g, &i, &o->c))
            continue;
        else if ((v = opt_value(&g, &i, "--device")))
            o->device = v;
        else if ((v = opt_value(&g, &i, "--grid")))
            grid_text = v;
        else if ((v = opt_value(&g, &i, "--save")))
            o->saves[o->nsaves++] = v;
        else if (g.failed)
            break;
        else if (!strcmp(a, "--bench") || !strncmp(a, "--bench=", 8)) {
            o->bench = true;
            int64_t n = 20;
            if (a[7] == '=' && (!cli_parse_i64(a + 8, &n) || n <= 0 || n > 1000000))
                args_fail(&g, "bad --bench '%s': expected --bench[=N], N a positive count", a);
            o->bench_reps = (int)n;
        } else if (a[0] == '-' && a[1])
            unknown_option(&g, a, run_options, sizeof run_options / sizeof *run_options);
        else if (!o->c.file)
            o->c.file = a;
        else if (!strchr(a, '=') || a[0] == '=')
            args_fail(&g, "bad argument '%s': expected name=VALUE", a);
        else
            o->args[o->nargs++] = a;
    }
    if (g.failed)
        return false;
    if (o->device && strcmp(o->device, "cuda") && strcmp(o->device, "interp"))
        return args_fail(&g, "unknown device '%s' (cuda or interp)", o->device);
    if (grid_text && !cli_parse_grid(grid_text, o->grid))
        return args_fail(&g, "bad --grid '%s': expected X[,Y[,Z]], each a positive integer", grid_text);
    for (int i = 0; i < o->nsaves; i++) {
        const char *eq = strchr(o->saves[i], '=');
        if (!eq || eq == o->saves[i] || !eq[1])
            return args_fail(&g, "bad --save '%s': expected NAME=PATH", o->saves[i]);
    }
    if (!o->c.kernel)
        return args_fail(&g, "tilec run needs --kernel NAME");
    return true;
}

void cli_compile_free(CliCompile *o) {
    free(o->c.defines);
    free(o->div16);
    free(o->div8);
    free(o->one);
    o->c.defines = o->div16 = o->div8 = o->one = NULL;
}

void cli_run_free(CliRun *o) {
    free(o->c.defines);
    free(o->saves);
    free(o->args);
    o->c.defines = o->saves = o->args = NULL;
}

bool cli_assume_list(tile_ctx *ctx, const char *list, unsigned facts, const char *opt, char *err, size_t errn) {
    char buf[256];
    for (const char *p = list; *p;) {
        size_t l = strcspn(p, ",");
        if (l == 0 || l >= sizeof buf) {
            snprintf(err, errn, "bad %s '%s': expected NAME[,NAME...]", opt, list);
            return false;
        }
        memcpy(buf, p, l);
        buf[l] = 0;
        if (tile_ctx_assume(ctx, buf, facts) != TILE_OK) {
            snprintf(err, errn, "bad %s '%s'", opt, list);
            return false;
        }
        p += l;
        if (*p == ',' && !*++p) {
            snprintf(err, errn, "bad %s '%s': expected NAME[,NAME...]", opt, list);
            return false;
        }
    }
    return true;
}
