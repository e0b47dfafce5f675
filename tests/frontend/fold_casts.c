/* The front end folds casts of constants (`3e9 as i32`, `const C = 1e30 as i16`); the
 * result must be what the interpreter computes for the same cast of a run-time value
 * (docs/ir.md: float -> int truncates and saturates, NaN gives 0; int -> int wraps).
 *
 * For every integer type and bool, and every value at or next to a boundary of some
 * integer type (and 3e9, ±1e30, ±inf, NaN), this runs
 *     const C = V as T;
 *     kernel k(out: *T, x: SRC) grid(1) { store(out, V as T); store(out + 1, C); store(out + 2, x as T); }
 * with x = V on the interpreter and compares the three stored elements. */
#include "tile/tile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures, cases;

static const char *const int_types[] = {"bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"};

static void put_value(char *buf, size_t n, double v) {
    if (isnan(v))
        snprintf(buf, n, "nan");
    else if (isinf(v))
        snprintf(buf, n, v < 0 ? "-inf" : "inf");
    else
        snprintf(buf, n, "%.17g", v);
    if (!isnan(v) && !isinf(v) && !strpbrk(buf, ".e"))
        strncat(buf, ".0", n - strlen(buf) - 1); /* a float literal, not an integer */
}

static tile_scalar scalar_named(const char *name) {
    for (int s = 0; s < TILE_NSCALARS; s++)
        if (!strcmp(tile_scalar_name((tile_scalar)s), name))
            return (tile_scalar)s;
    return TILE_NSCALARS;
}

/* One case: `text` is V as the source spells it, `src` the type of x, `xv` its value. */
static void check(const char *type, const char *text, const char *src, tile_arg x) {
    char source[1024];
    snprintf(source, sizeof source,
             "const C = %s as %s;\n"
             "kernel k(out: *%s, x: %s) grid(1) {\n"
             "    store(out, %s as %s);\n"
             "    store(out + 1, C);\n"
             "    store(out + 2, x as %s);\n"
             "}\n",
             text, type, type, src, text, type, type);
    cases++;
    tile_ctx *c = tile_ctx_new();
    tile_program *p = NULL;
    unsigned char out[3 * 8];
    memset(out, 0xAB, sizeof out);
    tile_arg args[2] = {tile_arg_buffer(out, sizeof out), x};
    tile_run_options o = {.device = TILE_DEVICE_INTERP};
    if (tile_program_load_source(c, "fold_casts.tile", source, strlen(source), &p) != TILE_OK ||
        tile_run(p, 0, args, 2, &o) != TILE_OK) {
        fprintf(stderr, "FAIL %s as %s: %s\n%s", text, type, tile_ctx_last_error(c), source);
        failures++;
    } else {
        int size = (int)tile_scalar_size(scalar_named(type));
        bool folded = !memcmp(out, out + 2 * size, (size_t)size);
        bool constant = !memcmp(out + size, out + 2 * size, (size_t)size);
        if (!folded || !constant) {
            long long v[3] = {0, 0, 0};
            for (int i = 0; i < 3; i++)
                memcpy(&v[i], out + i * size, (size_t)size); /* little-endian */
            fprintf(stderr, "FAIL (%s) %s as %s: folded 0x%llx, const 0x%llx, run 0x%llx\n", src, text, type, v[0],
                    v[1], v[2]);
            failures++;
        }
    }
    tile_program_free(p);
    tile_ctx_free(c);
}

int main(void) {
    double vals[128];
    int n = 0;
    /* the boundaries of every integer type, and next to them */
    for (int bits = 8; bits <= 64; bits *= 2) {
        double hi = ldexp(1, bits), half = ldexp(1, bits - 1);
        const double around[] = {half - 1,  half - 0.5,  half,   half + 1, -half,
                                 -half - 1, -half - 0.5, hi - 1, hi,       hi + 1};
        for (size_t i = 0; i < sizeof around / sizeof *around; i++)
            vals[n++] = around[i];
    }
    const double extra[] = {0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.9, -2.9, 3e9, 1e30, -1e30, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++)
        vals[n++] = extra[i];

    for (size_t t = 0; t < sizeof int_types / sizeof *int_types; t++) {
        for (int i = 0; i < n; i++) {
            char text[64];
            put_value(text, sizeof text, vals[i]);
            check(int_types[t], text, "f64", tile_arg_float(vals[i]));
        }
        /* integer sources wrap: the same boundaries as i64 values */
        const long long ints[] = {
            127,   128,   -129,       255,          256,           -1,           32767,        32768,
            65535, 65536, 2147483647, 2147483648LL, -2147483649LL, 4294967295LL, 4294967296LL, 9223372036854775807LL};
        for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
            char text[64];
            snprintf(text, sizeof text, "(%lld as i64)", ints[i]);
            check(int_types[t], text, "i64", tile_arg_int(ints[i]));
        }
    }
    printf("fold_casts: %d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
