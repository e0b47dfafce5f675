/* tools_check: the C side of the tilec CLI tests.  It writes input files for
 * `tilec run ... x=@FILE`, checks the bytes that `--save` wrote against values
 * computed here, and tests the public data helpers (tile_fill, element conversions).
 * Exit 0 when the check holds; otherwise a message and exit 1. */
#include "tile/tile.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    return 1;
}

/* The whole file, or NULL; *n gets its size. */
static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = malloc(1 << 20);
    *n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

static int write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f))
        return fail("cannot write %s", path);
    return 0;
}

/* Elements of type t in the file (after `skip` bytes), compared exactly with want[]. */
static int expect_values_at(const char *path, size_t skip, tile_scalar t, const double *want, size_t n) {
    size_t bytes;
    unsigned char *whole = slurp(path, &bytes);
    if (!whole)
        return fail("cannot read %s", path);
    if (bytes < skip) {
        free(whole);
        return fail("%s: %zu bytes, fewer than its %zu-byte header", path, bytes, skip);
    }
    unsigned char *buf = malloc(bytes - skip + 1);
    memcpy(buf, whole + skip, bytes - skip);
    bytes -= skip;
    free(whole);
    if (bytes != n * tile_scalar_size(t)) {
        free(buf);
        return fail("%s: %zu bytes, expected %zu", path, bytes, n * tile_scalar_size(t));
    }
    double *got = malloc((n + 1) * sizeof *got);
    tile_load_elements(t, got, buf, n);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if (got[i] != want[i])
            rc = fail("%s element %zu: %.17g, expected %.17g", path, i, got[i], want[i]);
    free(got);
    free(buf);
    return rc;
}

static int expect_values(const char *path, tile_scalar t, const double *want, size_t n) {
    return expect_values_at(path, 0, t, want, n);
}

/* The .npy tests' files, written here rather than by tilec's own writer: the magic, the
 * version MAJOR.0, the header's length (2 bytes in 1.0, else 4), the dict as given
 * padded with spaces and '\n' to a multiple of 64 bytes, the values as type t, less
 * `trim` bytes (more when negative: zeros). */
static int write_npy(const char *path, int major, const char *dict, tile_scalar t, const double *v, size_t n,
                     long trim) {
    size_t prefix = major == 1 ? 10 : 12, dlen = strlen(dict);
    size_t total = (prefix + dlen + 1 + 63) / 64 * 64, hlen = total - prefix;
    size_t esize = tile_scalar_size(t), data = n * esize;
    size_t bytes = total + data + (trim < 0 ? (size_t)-trim : 0);
    unsigned char *b = calloc(1, bytes + 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    for (size_t i = 0; i < prefix - 8; i++)
        b[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(b + prefix, dict, dlen);
    memset(b + prefix + dlen, ' ', total - prefix - dlen - 1);
    b[total - 1] = '\n';
    tile_store_elements(t, b + total, v, n);
    if (trim > 0)
        bytes -= (size_t)trim > data ? data : (size_t)trim;
    int rc = write_file(path, b, bytes);
    free(b);
    return rc;
}

/* A .npy file as tilec writes it: version 1.0, exactly this dict, padded to 64 bytes,
 * then the values. */
static int expect_npy(const char *path, const char *dict, tile_scalar t, const double *want, size_t n) {
    size_t bytes;
    unsigned char *b = slurp(path, &bytes);
    if (!b)
        return fail("cannot read %s", path);
    size_t dlen = strlen(dict), hlen = bytes >= 10 ? b[8] | (size_t)b[9] << 8 : 0;
    int rc = 0;
    if (bytes < 10 || memcmp(b, "\x93NUMPY\x01\x00", 8))
        rc = fail("%s: no .npy 1.0 magic", path);
    else if ((10 + hlen) % 64 || 10 + hlen > bytes || hlen < dlen + 1)
        rc = fail("%s: header of %zu bytes", path, hlen);
    else if (memcmp(b + 10, dict, dlen) || b[10 + hlen - 1] != '\n')
        rc = fail("%s: header '%.*s', expected '%s'", path, (int)hlen, (const char *)b + 10, dict);
    for (size_t i = 10 + dlen; !rc && i < 10 + hlen - 1; i++)
        if (b[i] != ' ')
            rc = fail("%s: byte %zu of the header padding is 0x%02x", path, i, b[i]);
    free(b);
    return rc ? rc : expect_values_at(path, 10 + hlen, t, want, n);
}

/* tile_fill and the element conversions: determinism, ranges, statistics, RNE. */
static int check_fill(void) {
    enum { N = 20000 };
    static float a[N], b[N];
    tile_fill(TILE_F32, a, N, TILE_FILL_RANDN, 7);
    tile_fill(TILE_F32, b, N, TILE_FILL_RANDN, 7);
    if (memcmp(a, b, sizeof a))
        return fail("randn with one seed differs between calls");
    tile_fill(TILE_F32, b, N, TILE_FILL_RANDN, 8);
    if (!memcmp(a, b, sizeof a))
        return fail("randn ignores the seed");
    double mean = 0, var = 0;
    for (int i = 0; i < N; i++)
        mean += a[i];
    mean /= N;
    for (int i = 0; i < N; i++)
        var += (a[i] - mean) * (a[i] - mean);
    var /= N;
    if (fabs(mean) > 0.05 || fabs(var - 1) > 0.05)
        return fail("randn mean %g variance %g", mean, var);
    tile_fill(TILE_F32, a, N, TILE_FILL_RAND, 3);
    for (int i = 0; i < N; i++)
        if (!(a[i] >= 0 && a[i] < 1))
            return fail("rand f32 value %g out of [0, 1)", a[i]);
    static int8_t i8[N];
    static uint16_t u16[N];
    tile_fill(TILE_I8, i8, N, TILE_FILL_RAND, 3);
    tile_fill(TILE_U16, u16, N, TILE_FILL_RAND, 3);
    int lo = 100, hi = -100;
    for (int i = 0; i < N; i++) {
        lo = i8[i] < lo ? i8[i] : lo;
        hi = i8[i] > hi ? i8[i] : hi;
        if (u16[i] > 15)
            return fail("rand u16 value %d out of [0, 15]", u16[i]);
    }
    if (lo != -8 || hi != 7)
        return fail("rand i8 range [%d, %d], expected [-8, 7]", lo, hi);
    if (tile_fill(TILE_I32, i8, 1, TILE_FILL_RANDN, 0) != TILE_ERR_INVALID)
        return fail("randn accepted an integer type");
    /* RNE into f16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10 (even: 1);
     * 1 + 3 * 2^-11 ties between 1 + 2^-10 and 1 + 2^-9 (even: 1 + 2^-9). */
    double in[2] = {1 + 0x1p-11, 1 + 3 * 0x1p-11}, out[2];
    uint16_t h[2];
    tile_store_elements(TILE_F16, h, in, 2);
    tile_load_elements(TILE_F16, out, h, 2);
    if (out[0] != 1.0 || out[1] != 1 + 0x1p-9)
        return fail("f16 rounding gave %.10g and %.10g", out[0], out[1]);
    return 0;
}

/* The public target-table queries (tile.h) that the runtime and the CLI ask. */
static int check_arch(void) {
    if (strcmp(tile_arch_names(), "sm_80 sm_86 sm_89 sm_90 sm_90a") || strcmp(tile_arch_default(), "sm_90a"))
        return fail("arch names '%s', default '%s'", tile_arch_names(), tile_arch_default());
    if (!tile_arch_is_known("sm_89") || tile_arch_is_known("sm_75") || tile_arch_is_known(NULL))
        return fail("tile_arch_is_known");
    static const struct {
        int major, minor;
        const char *arch; /* NULL: unsupported */
    } dev[] = {{9, 0, "sm_90a"}, {8, 0, "sm_80"},  {8, 6, "sm_86"},  {8, 9, "sm_89"},
               {8, 7, "sm_80"},  {10, 0, "sm_90"}, {12, 0, "sm_90"}, {7, 5, NULL}};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++) {
        const char *a = tile_arch_for_device(dev[i].major, dev[i].minor);
        if (dev[i].arch ? !a || strcmp(a, dev[i].arch) : a != NULL)
            return fail("compute capability %d.%d: arch %s, expected %s", dev[i].major, dev[i].minor, a ? a : "none",
                        dev[i].arch ? dev[i].arch : "none");
    }
    tile_ctx *c = tile_ctx_new();
    tile_status st = tile_ctx_set_arch(c, "sm_75");
    const char *msg = tile_ctx_last_error(c);
    bool listed = msg && strstr(msg, "(known: sm_80 sm_86 sm_89 sm_90 sm_90a)");
    bool ok = st == TILE_ERR_INVALID && listed && tile_ctx_set_arch(c, "sm_86") == TILE_OK;
    tile_ctx_free(c);
    return ok ? 0 : fail("tile_ctx_set_arch: status %d, message '%s'", st, msg ? msg : "(none)");
}

static int run_mode(int argc, char **argv, double *want);

int main(int argc, char **argv) {
    size_t n = argc >= 4 ? strtoull(argv[3], NULL, 10) : 0;
    double *want = calloc(n + 1, sizeof *want);
    int rc = run_mode(argc, argv, want);
    free(want);
    return rc;
}

static int run_mode(int argc, char **argv, double *want) {
    if (argc < 2)
        return fail("usage: tools_check MODE ...");
    const char *mode = argv[1];
    if (!strcmp(mode, "fill"))
        return check_fill();
    if (!strcmp(mode, "arch"))
        return check_arch();
    if (argc < 4)
        return fail("%s: missing arguments", mode);
    const char *path = argv[2];
    size_t n = strtoull(argv[3], NULL, 10);
    if (!strcmp(mode, "write-seq-f32")) { /* 1, 2, ..., n as f32 */
        float *v = malloc((n + 1) * sizeof *v);
        for (size_t i = 0; i < n; i++)
            v[i] = (float)(i + 1);
        int rc = write_file(path, v, n * sizeof *v);
        free(v);
        return rc;
    }
    if (!strcmp(mode, "write-bytes")) { /* n bytes of 0x11 */
        unsigned char *b = memset(malloc(n + 1), 0x11, n);
        int rc = write_file(path, b, n);
        free(b);
        return rc;
    }
    if (!strcmp(mode, "iota")) { /* i32: 3 * i */
        for (size_t i = 0; i < n; i++)
            want[i] = 3.0 * (double)i;
        return expect_values(path, TILE_I32, want, n);
    }
    if (!strcmp(mode, "axpy")) { /* f32: a * x + y, x = rand seed 1, y = rand seed 2 */
        double a = atof(argv[4]);
        float *x = malloc((n + 1) * 4), *y = malloc((n + 1) * 4);
        tile_fill(TILE_F32, x, n, TILE_FILL_RAND, 1);
        tile_fill(TILE_F32, y, n, TILE_FILL_RAND, 2);
        for (size_t i = 0; i < n; i++) {
            float p = (float)a * x[i]; /* rounded to f32 before the add, as the IR does */
            want[i] = (float)(p + y[i]);
        }
        free(x);
        free(y);
        return expect_values(path, TILE_F32, want, n);
    }
    /* write-npy PATH N TYPE MAJOR TRIM DICT V...: a .npy file of N values of TYPE */
    if (!strcmp(mode, "write-npy") || !strcmp(mode, "npy")) {
        bool w = mode[0] == 'w';
        int first = w ? 8 : 6;
        int t = 0;
        while (t < TILE_NSCALARS && (argc < 5 || strcmp(argv[4], tile_scalar_name((tile_scalar)t))))
            t++;
        if (t == TILE_NSCALARS || (size_t)argc < first + n)
            return fail("%s: expected PATH N TYPE %sDICT and N values", mode, w ? "MAJOR TRIM " : "");
        for (size_t i = 0; i < n; i++)
            want[i] = atof(argv[first + i]);
        if (w)
            return write_npy(path, atoi(argv[5]), argv[7], (tile_scalar)t, want, n, atol(argv[6]));
        /* npy PATH N TYPE DICT V...: tilec's .npy output holds these */
        return expect_npy(path, argv[5], (tile_scalar)t, want, n);
    }
    /* the given values, of the type named by the mode: "f32", "i64", "i32" */
    for (int t = 0; t < TILE_NSCALARS; t++)
        if (!strcmp(mode, tile_scalar_name((tile_scalar)t))) {
            if ((size_t)argc < 4 + n)
                return fail("%s: fewer values than %zu", mode, n);
            for (size_t i = 0; i < n; i++)
                want[i] = atof(argv[4 + i]);
            return expect_values(path, (tile_scalar)t, want, n);
        }
    return fail("unknown mode %s", mode);
}
