/* tilec check: runs every variant of a kernel that the tuner would consider (or the one
 * it chooses) on a device and on the interpreter with the same inputs, and compares.
 *
 *   tilec check FILE.tile --kernel NAME [--device=cuda|interp] [--variants=all|chosen]
 *               [--rtol=R] [--atol=A] [--grid=X[,Y[,Z]]] [-D NAME=V]... ARG...
 *
 * Per variant, two comparisons of every pointer buffer the kernel writes:
 *   device:    the device's run of the variant against the interpreter's run of the same
 *              variant (the code generator's errors);
 *   reference: the interpreter's run of the variant against its run of the reference
 *              variant, the first admissible one (a variant whose constants change the
 *              result: a tile too small for the data, a mask that depends on BLOCK).
 * The interpreter checks every access against its buffer and reports races between the
 * lanes of a store; such a report fails the variant.  Without a GPU the device is the
 * runtime's interpreter device, which runs the same IR, so only the reference comparison
 * can find a difference there: it says so.  Exit status 0 when every variant passes, 1
 * otherwise (for CI), 2 for a bad command line. */
#include "cli_args.h"
#include "compare.h"
#include "run_inputs.h"
#include "subcommands.h"
#include "tile/runtime.h"
#include "tile/tile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char check_help[] = "usage: tilec check FILE.tile --kernel NAME [OPTION]... ARG...\n"
                          "\nRun every variant of a kernel that the tuner would consider on the device and on the\n"
                          "interpreter with the same inputs, and compare every buffer the kernel writes:\n"
                          "  --device=DEV        cuda (default where a GPU is usable) or interp (the runtime's\n"
                          "                      interpreter device: then only the variants are compared)\n"
                          "  --variants=WHICH    all (default): every variant whose where clauses hold for these\n"
                          "                      arguments; chosen: only the one the tuner picks\n"
                          "  --rtol=R --atol=A   an element passes when |got - want| <= A + R * |want|; the\n"
                          "                      defaults depend on the element type (docs/tools.md)\n"
                          "  --grid, -D, --debug, -O0/-O3, -v and the arguments as for tilec run\n"
                          "Per variant: max abs and rel error, ulp distance, the first differing index, and any\n"
                          "out-of-bounds access or race the interpreter reports.  Exit status: 0 when every\n"
                          "variant passes, 1 when one fails, 2 for a bad command line.\n";

enum { EXIT_ERROR = 1, EXIT_USAGE = 2 };

static void check_usage(const char *msg) {
    fprintf(stderr, "tilec: error: %s\n%s", msg, check_help);
}

/* The last message of the compiler library, kept for the variant's report. */
typedef struct Diag {
    char last[2048];
    bool quiet; /* interpreter runs: keep, do not print */
} Diag;

static void diag_sink(void *ud, const char *msg) {
    Diag *d = ud;
    snprintf(d->last, sizeof d->last, "%s", msg);
    size_t n = strlen(d->last);
    while (n && d->last[n - 1] == '\n')
        d->last[--n] = 0;
    if (!d->quiet)
        fprintf(stderr, "%s%s\n", strncmp(msg, "error: ", 7) ? "" : "tilec: ", d->last);
}

/* One variant: its constants as defines ("BLOCK=1024") and its text. */
typedef struct Variant {
    char text[512];
    char **defs;
    const char **names;
    double *values;
    bool *is_float;
    int ndefs;
} Variant;

static void variant_free(Variant *v) {
    for (int j = 0; j < v->ndefs; j++) {
        free(v->defs[j]);
        free((char *)v->names[j]);
    }
    free(v->defs);
    free(v->names);
    free(v->values);
    free(v->is_float);
}

static bool variant_from(const tile_variants *vs, int i, Variant *out) {
    int n = tile_variant_const_count(vs, i);
    *out = (Variant){.ndefs = n};
    out->defs = calloc((size_t)n + 1, sizeof *out->defs);
    out->names = calloc((size_t)n + 1, sizeof *out->names);
    out->values = calloc((size_t)n + 1, sizeof *out->values);
    out->is_float = calloc((size_t)n + 1, sizeof *out->is_float);
    if (!out->defs || !out->names || !out->values || !out->is_float)
        return false;
    size_t w = 0;
    for (int j = 0; j < n; j++) {
        const char *name;
        tile_variant_const(vs, i, j, &name, &out->values[j], &out->is_float[j]);
        /* a copy: a name may be a define's, which the defines of the next run replace */
        if (!(out->names[j] = strdup(name)))
            return false;
        char val[64];
        snprintf(val, sizeof val, out->is_float[j] ? "%.17g" : "%.0f", out->values[j]);
        size_t len = strlen(out->names[j]) + strlen(val) + 2;
        if (!(out->defs[j] = malloc(len)))
            return false;
        snprintf(out->defs[j], len, "%s=%s", out->names[j], val);
        if (w < sizeof out->text)
            w += (size_t)snprintf(out->text + w, sizeof out->text - w, "%s%s", j ? ", " : "", out->defs[j]);
    }
    return true;
}

/* ---- the interpreter's run of one variant ------------------------------------------ */
/* tile_status of the run; the outputs in *bufs (a copy of the inputs run on). */
static tile_status interp_run(tile_ctx *ctx, tile_program *p, int k, const Variant *v, const Inputs *in,
                              const int64_t grid[3], void ***bufs) {
    for (int j = 0; j < v->ndefs; j++)
        tile_ctx_define(ctx, v->defs[j]);
    *bufs = copy_buffers(in);
    if (!*bufs)
        return TILE_ERR_INVALID;
    tile_arg *args = calloc((size_t)in->np + 1, sizeof *args);
    if (!args)
        return TILE_ERR_INVALID;
    for (int j = 0; j < in->np; j++) {
        args[j] = in->args[j];
        if (in->pis[j].is_pointer)
            args[j].buf.ptr = (*bufs)[j];
        else if (in->pis[j].is_const)
            args[j].kind = TILE_ARG_NONE; /* the variant's define */
    }
    tile_run_options ro = {.device = TILE_DEVICE_INTERP, .grid = {grid[0], grid[1], grid[2]}, .print_out = NULL};
    tile_status st = tile_run(p, k, args, in->np, &ro);
    free(args);
    return st;
}

/* ---- the device's run of one variant ------------------------------------------------ */
/* Pins every constant of v (NULL: none, the tuner chooses) and launches once. */
static tile_rt_status device_run(tile_rt *rt, tile_rt_kernel *rk, const Variant *v, const Inputs *in,
                                 const int64_t grid[3], void ***bufs) {
    tile_rt_status s = TILE_RT_OK;
    for (int j = 0; v && j < v->ndefs && s == TILE_RT_OK; j++)
        s = tile_rt_set_const(rk, v->names[j], (int64_t)v->values[j], v->values[j]);
    for (int j = 0; !v && j < in->np && s == TILE_RT_OK; j++)
        if (in->pis[j].is_const && in->given[j])
            s = tile_rt_set_const(rk, in->pis[j].name, in->args[j].kind == TILE_ARG_INT ? in->args[j].i64 : 0,
                                  in->args[j].kind == TILE_ARG_FLOAT ? in->args[j].f64 : (double)in->args[j].i64);
    if (s != TILE_RT_OK)
        return s;
    *bufs = copy_buffers(in);
    void **dev = calloc((size_t)in->np + 1, sizeof *dev);
    tile_rt_arg *ra = calloc((size_t)in->np + 1, sizeof *ra);
    if (!*bufs || !dev || !ra) {
        free(dev);
        free(ra);
        return TILE_RT_ERR_INVALID;
    }
    int nr = 0;
    for (int j = 0; j < in->np && s == TILE_RT_OK; j++) {
        if (in->pis[j].is_const)
            continue;
        tile_rt_arg *a = &ra[nr++];
        if (in->pis[j].is_pointer) {
            size_t n = in->args[j].buf.bytes;
            a->kind = TILE_RT_ARG_PTR;
            s = tile_rt_alloc(rt, n ? n : 1, &dev[j]);
            if (s == TILE_RT_OK)
                s = tile_rt_copy_to_device(rt, dev[j], (*bufs)[j], n);
            a->buf.ptr = dev[j];
            a->buf.bytes = n;
        } else if (in->args[j].kind == TILE_ARG_FLOAT) {
            a->kind = TILE_RT_ARG_F64;
            a->f64 = in->args[j].f64;
        } else {
            a->kind = TILE_RT_ARG_I64;
            a->i64 = in->args[j].i64;
        }
    }
    if (s == TILE_RT_OK)
        s = tile_rt_launch(rk, ra, nr, NULL, grid[0] ? grid : NULL);
    if (s == TILE_RT_OK)
        s = tile_rt_synchronize(rt);
    for (int j = 0; j < in->np && s == TILE_RT_OK; j++)
        if (dev[j])
            s = tile_rt_copy_to_host(rt, (*bufs)[j], dev[j], in->args[j].buf.bytes);
    for (int j = 0; j < in->np; j++)
        if (dev[j])
            tile_rt_free(rt, dev[j]);
    free(dev);
    free(ra);
    return s;
}

/* ---- comparing and reporting --------------------------------------------------------- */
typedef struct Tols {
    double rtol, atol; /* < 0: the element type's default */
} Tols;

/* Compares every pointer buffer of `got` with `want`; prints one line per buffer the
 * reference variant writes, and one per other buffer that differs (a variant writing
 * where the reference does not: into an input, say); false when one is out of
 * tolerance. */
static bool compare_all(const char *what, const Inputs *in, const bool *written, void **got, void **want,
                        const Tols *t) {
    bool ok = true;
    for (int j = 0; j < in->np; j++) {
        if (!in->pis[j].is_pointer)
            continue;
        tile_scalar ty = in->pis[j].type;
        CmpTol tol = cmp_default_tol(ty);
        if (t->rtol >= 0)
            tol.rtol = t->rtol;
        if (t->atol >= 0)
            tol.atol = t->atol;
        size_t n = in->args[j].buf.bytes / tile_scalar_size(ty);
        CmpResult r = cmp_buffers(ty, got[j], want[j], n, tol);
        if (!written[j] && !r.nbad)
            continue;
        char ulp[32];
        if (r.max_ulp == UINT64_MAX)
            snprintf(ulp, sizeof ulp, "NaN");
        else
            snprintf(ulp, sizeof ulp, "%llu", (unsigned long long)r.max_ulp);
        printf("    %s: %s: %s max abs %.3g, max rel %.3g, max ulp %s", what, in->pis[j].name, r.nbad ? "FAIL" : "ok",
               r.max_abs, r.max_rel, ulp);
        if (r.nbad) {
            printf("; %zu of %zu elements differ, first at [%zu]: %.9g, expected %.9g (rtol %g, atol %g)", r.nbad, r.n,
                   r.first_bad, r.got_first, r.want_first, tol.rtol, tol.atol);
            ok = false;
        }
        printf("\n");
    }
    return ok;
}

/* "--name=V" as a double >= 0 into *out; 1 matched, 0 not this option, -1 bad value. */
static int opt_double(const char *a, const char *name, double *out) {
    size_t n = strlen(name);
    if (strncmp(a, name, n) || a[n] != '=')
        return 0;
    char *end;
    *out = strtod(a + n + 1, &end);
    return *end || a[n + 1] == 0 || !(*out >= 0) || isinf(*out) ? -1 : 1;
}

/* Whether every constant of v appears as "NAME=V" in the runtime's variant text. */
static bool text_has_variant(const char *text, const Variant *v) {
    for (int j = 0; j < v->ndefs; j++) {
        const char *p = text;
        size_t n = strlen(v->defs[j]);
        bool found = false;
        while (!found && (p = strstr(p, v->defs[j]))) {
            found = (p == text || p[-1] == ' ') && (p[n] == 0 || p[n] == ',' || p[n] == ';');
            p += n;
        }
        if (!found)
            return false;
    }
    return true;
}

int cmd_check(int argc, char **argv) {
    /* check's own options out, the rest parsed as tilec run's */
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    Tols tols = {-1, -1};
    bool chosen_only = false;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (i >= 2 && (r = opt_double(a, "--rtol", &tols.rtol)) != 0) {
            if (r < 0) {
                check_usage("bad --rtol: expected a number >= 0");
                return EXIT_USAGE;
            }
        } else if (i >= 2 && (r = opt_double(a, "--atol", &tols.atol)) != 0) {
            if (r < 0) {
                check_usage("bad --atol: expected a number >= 0");
                return EXIT_USAGE;
            }
        } else if (i >= 2 && !strncmp(a, "--variants=", 11)) {
            if (strcmp(a + 11, "all") && strcmp(a + 11, "chosen")) {
                check_usage("bad --variants: expected all or chosen");
                return EXIT_USAGE;
            }
            chosen_only = !strcmp(a + 11, "chosen");
        } else {
            rest[nrest++] = argv[i];
        }
    }
    CliRun o;
    char err[512];
    if (!cli_parse_run(nrest, rest, &o, err, sizeof err)) {
        check_usage(!strcmp(err, "tilec run needs --kernel NAME") ? "tilec check needs --kernel NAME" : err);
        return EXIT_USAGE;
    }
    if (o.bench || o.nsaves) {
        check_usage(o.bench ? "tilec check takes no --bench" : "tilec check takes no --save");
        return EXIT_USAGE;
    }
    if (!o.c.file) {
        check_usage("no input file");
        return EXIT_USAGE;
    }
    Diag diag = {.quiet = false};
    tile_ctx *ctx = tile_ctx_new();
    tile_ctx_set_diag(ctx, diag_sink, &diag);
    tile_ctx_set_debug(ctx, o.c.debug);
    tile_ctx_set_opt_level(ctx, o.c.opt_level);
    for (int i = 0; i < o.c.ndefines; i++)
        if (tile_ctx_define(ctx, o.c.defines[i]) != TILE_OK)
            return EXIT_USAGE;
    int rc = EXIT_ERROR;
    tile_program *p = NULL;
    tile_rt *rt = NULL;
    tile_rt_module *rm = NULL;
    tile_variants *vs = NULL;
    Inputs in = {0};
    Variant *var = NULL;
    int nv = 0;
    if (tile_program_load_file(ctx, o.c.file, &p) != TILE_OK)
        goto out;
    int k = tile_program_find_kernel(p, o.c.kernel);
    if (k < 0) {
        cli_error("no kernel '%s' in '%s'", o.c.kernel, o.c.file);
        goto out;
    }
    if (!make_inputs(ctx, p, k, &o, &in))
        goto out;
    if (tile_variants_get(p, k, true, &vs) != TILE_OK)
        goto out;
    nv = tile_variants_count(vs);
    var = calloc((size_t)nv + 1, sizeof *var);
    for (int i = 0; var && i < nv; i++)
        if (!variant_from(vs, i, &var[i]))
            goto out;

    /* the device */
    const char *device = o.device;
    bool on_gpu = false;
    tile_rt_options ropt = {.tune = chosen_only ? -1 : 0, .tune_log = -1};
    if (!device || !strcmp(device, "cuda")) {
        on_gpu = tile_rt_open(TILE_RT_CUDA, &ropt, &rt) == TILE_RT_OK;
        if (!on_gpu && device) {
            cli_error("--device=cuda: %s", tile_rt_open_error());
            goto out;
        }
        if (!on_gpu)
            fprintf(stderr,
                    "tilec: no CUDA device (%s); checking on the runtime's interpreter device, "
                    "which runs the interpreter's own IR: only the variants are compared\n",
                    tile_rt_open_error());
    }
    if (!rt && tile_rt_open(TILE_RT_INTERP, &ropt, &rt) != TILE_RT_OK) {
        cli_error("%s", tile_rt_open_error());
        goto out;
    }
    tile_rt_kernel *rk = NULL;
    if (tile_rt_load_source_file(rt, o.c.file, &rm) != TILE_RT_OK ||
        tile_rt_get_kernel(rm, o.c.kernel, &rk) != TILE_RT_OK) {
        fprintf(stderr, "tilec: error: %s\n", tile_rt_last_error(rt));
        goto out;
    }

    /* --variants=chosen: the tuner's pick, found among the compiler's variants */
    int only = -1;
    if (chosen_only) {
        void **b = NULL;
        tile_rt_status s = device_run(rt, rk, NULL, &in, o.grid, &b);
        free_buffers(&in, b);
        if (s != TILE_RT_OK) {
            fprintf(stderr, "tilec: error: %s\n", tile_rt_last_error(rt));
            goto out;
        }
        const char *text = tile_rt_last_variant(rk);
        for (int i = 0; i < nv && only < 0; i++)
            if (text_has_variant(text, &var[i]))
                only = i;
        if (only < 0) {
            cli_error("the tuner chose [%s], which is none of the compiler's variants", text);
            goto out;
        }
    }

    printf("check %s: kernel '%s' on %s, %d variant%s\n", o.c.file, o.c.kernel, tile_rt_device_name(rt),
           only >= 0 ? 1 : nv, only >= 0 || nv == 1 ? "" : "s");
    void **ref = NULL;
    bool *written = calloc((size_t)in.np + 1, sizeof *written);
    int nok = 0, nfail = 0, nskip = 0, ref_index = -1;
    diag.quiet = true;
    for (int i = 0; i < nv; i++) {
        if (only >= 0 && i != only)
            continue;
        Variant *v = &var[i];
        void **mine = NULL, **dev = NULL;
        diag.last[0] = 0;
        tile_status st = interp_run(ctx, p, k, v, &in, o.grid, &mine);
        if (st == TILE_ERR_NO_VARIANT) {
            /* the tuner would not consider it for these arguments */
            printf("  [%s]: skipped: its where clauses do not hold for these arguments\n", v->text);
            nskip++;
            free_buffers(&in, mine);
            continue;
        }
        if (st != TILE_OK) {
            printf("  [%s]: FAIL on the interpreter: %s\n", v->text, diag.last);
            nfail++;
            free_buffers(&in, mine);
            continue;
        }
        bool ok = true;
        if (!ref) {
            /* the reference: the first variant that runs; what it writes is what is compared */
            ref = copy_buffers(&in);
            for (int j = 0; j < in.np; j++)
                if (in.pis[j].is_pointer) {
                    memcpy(ref[j], mine[j], in.args[j].buf.bytes);
                    written[j] = memcmp(mine[j], in.args[j].buf.ptr, in.args[j].buf.bytes) != 0;
                }
            ref_index = i;
        }
        printf("  [%s]:\n", v->text);
        tile_rt_status s = device_run(rt, rk, v, &in, o.grid, &dev);
        if (s != TILE_RT_OK) {
            printf("    device: FAIL: %s\n", tile_rt_last_error(rt));
            ok = false;
        } else {
            ok &= compare_all("device against the interpreter", &in, written, dev, mine, &tols);
        }
        if (i != ref_index)
            ok &= compare_all("interpreter against the reference variant", &in, written, mine, ref, &tols);
        ok ? nok++ : nfail++;
        free_buffers(&in, mine);
        free_buffers(&in, dev);
    }
    if (ref_index >= 0)
        printf("reference variant: [%s]\n", var[ref_index].text);
    printf("check: %d passed, %d failed, %d skipped\n", nok, nfail, nskip);
    if (!nok && !nfail)
        cli_error("no variant of '%s' admits these arguments", o.c.kernel);
    rc = nfail || !nok ? EXIT_ERROR : 0;
    free_buffers(&in, ref);
    free(written);
out:
    for (int i = 0; var && i < nv; i++)
        variant_free(&var[i]);
    free(var);
    tile_variants_free(vs);
    inputs_free(&in);
    tile_rt_module_free(rm);
    tile_rt_close(rt);
    tile_program_free(p);
    tile_ctx_free(ctx);
    cli_run_free(&o);
    free(rest);
    return rc;
}
