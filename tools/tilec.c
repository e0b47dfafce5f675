/* tilec: the command line of the tile compiler (docs/tools.md).
 *
 *   tilec FILE.tile [-o OUT] [--emit=KIND] [--arch=..] [-D NAME=V[,V...]]... [--kernel NAME]
 *                   [--print-after=PASS|all] [--debug] [-O0|-O3] [-v] [--report]
 *   tilec run FILE.tile --kernel NAME [--device=cuda|interp] [--grid=X[,Y[,Z]]]
 *                   [-D NAME=V]... [--bench[=N]] ARG... [--save NAME=PATH]...
 *
 * Exit status: 0 success, 1 a compile or run error, 2 a bad command line (with usage).
 * Only the public API (tile/tile.h) is used. */
#include "cli_args.h"
#include "subcommands.h"
#include "tile/tile.h"
#include "tile/runtime.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: tilec FILE.tile [-o OUT] [--emit=tir|llvm|ptx|cubin|bundle|header] [--arch=ARCH]\n"
    "             [-D NAME=V[,V...]]... [--kernel NAME] [--print-after=PASS|all] [--debug]\n"
    "             [-O0|-O3] [-v] [--report[=json]] [--div16] [--assume-div16=P,...]\n"
    "             [--assume-div8=P,...] [--assume-one=P,...] [--diagnostics=text|json]\n"
    "       tilec run FILE.tile --kernel NAME [--device=cuda|interp] [--grid=X[,Y[,Z]]]\n"
    "             [-D NAME=V]... [--bench[=N]] [--debug] [-v] [--diagnostics=text|json]\n"
    "             ARG... [--save NAME=PATH]...\n"
    "  ARG: name=VALUE (scalar), name=@PATH[:SHAPE] (a .npy file or raw little-endian\n"
    "       elements), name=zeros:COUNT, name=rand:COUNT[:SEED], name=randn:COUNT[:SEED]\n"
    "       tilec check|tune|report ...: every variant against the interpreter, tuning logs\n"
    "             replayed, launch counts and rooflines (tilec check --help, ...)\n"
    "  tilec --help, tilec run --help: every option; tilec --version\n";

/* tilec --help: the usage, then every option of the compile command (docs/tools.md). */
static const char compile_help[] =
    "\nCompile FILE.tile (every kernel, or --kernel NAME):\n"
    "  -o OUT              write the output to OUT (default: stdout; several modules go to\n"
    "                      OUT.KERNEL[.N].EXT, one per kernel variant)\n"
    "  --emit=KIND         tir: tile IR after canonicalize; llvm, ptx, cubin (default): one\n"
    "                      module per variant; bundle: every variant's cubin and PTX in one\n"
    "                      file for the runtime; header: a C header embedding the bundle\n"
    "  --arch=ARCH         %s (default %s)\n"
    "  -D NAME=V[,V...]    fix a tune list or a const parameter to these values\n"
    "  --kernel NAME       only this kernel\n"
    "  --print-after=PASS  dump the IR after that pass (or all) on stderr\n"
    "  --report            one line per variant: registers, shared memory, spills, flops and\n"
    "                      global bytes per program (the code itself only with -o);\n"
    "                      --report=json: one JSON object per variant\n"
    "  --diagnostics=json  each error and warning as one JSON object per line (file, line,\n"
    "                      column, span, message, notes, variant)\n"
    "  --div16             compile for launches whose pointers and integers are multiples of 16\n"
    "  --assume-div16=P,.. the same for the named parameters; --assume-div8=P,..: multiples\n"
    "                      of 8 (8-byte aligned); --assume-one=P,..: integers == 1\n"
    "  -O0, -O3            LLVM's and ptxas' optimisation off / on (default -O3)\n"
    "  --debug             keep assert() checks\n"
    "  -v                  the variants chosen and each compile phase's time on stderr\n"
    "  --version           the version of tilec and of the LLVM it was built with\n"
    "Variants compile in parallel ($TILE_JIT_THREADS threads, default: every CPU); a compile\n"
    "longer than a second shows its progress on stderr.  Exit status: 0, 1 for a compile\n"
    "error, 2 for a bad command line.  tilec run --help: running a kernel.\n";

/* tilec run --help */
static const char run_help[] =
    "usage: tilec run FILE.tile --kernel NAME [OPTION]... ARG... [--save NAME=PATH]...\n"
    "\nRun one kernel on the GPU (where there is one) or the interpreter:\n"
    "  --kernel NAME       the kernel to run (required)\n"
    "  --device=DEV        cuda or interp (default: cuda when a GPU is usable, else interp,\n"
    "                      saying so on stderr)\n"
    "  --grid=X[,Y[,Z]]    the launch grid (default: the kernel's grid clause)\n"
    "  -D NAME=V           the value of a const parameter, or pin a tuned constant\n"
    "  --bench[=N]         autotune, then time N launches (default 20): median ms, GB/s\n"
    "  --save NAME=PATH    write buffer NAME to PATH after the run: raw elements, or a\n"
    "                      .npy file (its input's shape) when PATH ends in .npy\n"
    "  --debug             check assert()s; -O0/-O3 as for compiling; -v: variant and grid\n"
    "  --diagnostics=json  errors and warnings as JSON objects, one per line\n"
    "Arguments, one per parameter (NAME=V also sets a const parameter, or pins a tuned\n"
    "constant, warps or stages as -D NAME=V does):\n"
    "  name=VALUE          a scalar: an integer (range-checked), a float, true or false\n"
    "                      (or 1, 0)\n"
    "  name=@PATH          a buffer from a file: a .npy array whose dtype is the pointee\n"
    "                      type (C order), or raw little-endian elements of it\n"
    "  name=@PATH:SHAPE    the same, checked to hold SHAPE: N elements or a shape AxB...\n"
    "  name=zeros:COUNT    COUNT zeros\n"
    "  name=rand:COUNT[:SEED]   uniform: floats in [0, 1), signed in [-8, 7], unsigned [0, 15]\n"
    "  name=randn:COUNT[:SEED]  standard normal (float pointees)\n"
    "Exit status: 0, 1 for a compile or run error (out of bounds, assert), 2 for a bad\n"
    "command line.\n";

#ifndef TILEC_VERSION
#define TILEC_VERSION "0.1.0"
#endif
#ifndef TILEC_LLVM_VERSION
#define TILEC_LLVM_VERSION "none"
#endif

enum { EXIT_ERROR = 1, EXIT_USAGE = 2 };

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error("%s", msg);
    /* a likely typo gets its suggestion, not the whole usage in front of it */
    if (strstr(msg, "did you mean"))
        fputs("(tilec --help lists every option)\n", stderr);
    else
        fputs(usage_text, stderr);
    exit(EXIT_USAGE);
}

/* --diagnostics=json: the error or warning printed last, held until its notes are in
 * ("notes": [...]), then written as one line. */
static char *pending_json;

static void flush_json(void) {
    if (pending_json)
        fprintf(stderr, "%s\n", pending_json);
    free(pending_json);
    pending_json = NULL;
    fflush(stderr);
}

/* A JSON object of the library (tile_ctx_set_diag_json): a note goes into the held
 * error's "notes" (the object ends in "\"notes\":[...]}"); anything else is held. */
static void json_diag(const char *obj) {
    static const char note_head[] = "{\"severity\":\"note\"";
    bool note = !strncmp(obj, note_head, sizeof note_head - 1);
    size_t n = pending_json ? strlen(pending_json) : 0;
    if (note && n >= 2) {
        char *grown = realloc(pending_json, n + strlen(obj) + 2);
        if (grown) {
            bool empty = grown[n - 3] == '[';
            snprintf(grown + n - 2, strlen(obj) + 4, "%s%s]}", empty ? "" : ",", obj);
            pending_json = grown;
            return;
        }
    }
    flush_json();
    pending_json = strdup(obj);
}

/* The library's messages: located ones are printed as they are; the others get the
 * tool's name in front, as cc does. */
static void print_diag(void *ud, const char *msg) {
    (void)ud;
    if (msg[0] == '{') {
        json_diag(msg);
        return;
    }
    size_t n = strlen(msg);
    if (!strncmp(msg, "error: ", 7))
        fputs("tilec: ", stderr);
    fputs(msg, stderr);
    if (n == 0 || msg[n - 1] != '\n')
        fputc('\n', stderr);
}

/* Keeps `cand` in *best when it is the closest to `name` so far and close enough to be
 * a typo of it (one edit for short names, two otherwise). */
static void consider(const char **best, int *bestd, const char *name, const char *cand) {
    int d = tile_name_distance(name, cand);
    if (d < *bestd && d <= (strlen(name) > 3 ? 2 : 1)) {
        *best = cand;
        *bestd = d;
    }
}

/* "; did you mean 'X'?" for the best of `best`, or "". */
static const char *did_you_mean(const char *best, char *buf, size_t n) {
    if (!best)
        return "";
    snprintf(buf, n, "; did you mean '%s'?", best);
    return buf;
}

static tile_ctx *make_ctx(const CliCommon *c) {
    tile_ctx *ctx = tile_ctx_new();
    if (!ctx) {
        cli_error("out of memory");
        exit(EXIT_ERROR);
    }
    if (c->diag_json) {
        /* the tool's own errors too, and the last held one written at exit */
        tile_ctx_set_diag_json(ctx, true);
        cli_json = true;
        atexit(flush_json);
    }
    tile_ctx_set_diag(ctx, print_diag, NULL);
    tile_ctx_set_debug(ctx, c->debug);
    tile_ctx_set_opt_level(ctx, c->opt_level);
    /* Bad -D syntax is a command-line error: check it before any work. */
    tile_ctx_set_diag(ctx, NULL, NULL);
    for (int i = 0; i < c->ndefines; i++)
        if (tile_ctx_define(ctx, c->defines[i]) != TILE_OK)
            usage_error("%s", tile_ctx_last_error(ctx) + strlen("error: "));
    tile_ctx_set_diag(ctx, print_diag, NULL);
    return ctx;
}

static void check_file(const char *path) {
    if (!path)
        usage_error("no input file");
    FILE *f = fopen(path, "rb");
    if (!f)
        usage_error("cannot open '%s': %s", path, strerror(errno));
    fclose(f);
}

static int find_kernel(tile_program *p, const char *name, const char *file) {
    int k = tile_program_find_kernel(p, name);
    if (k < 0) {
        const char *best = NULL;
        int bestd = 99;
        for (int i = 0; i < tile_program_kernel_count(p); i++)
            consider(&best, &bestd, name, tile_kernel_name(p, i));
        char hint[160];
        cli_error("no kernel '%s' in '%s'%s", name, file, did_you_mean(best, hint, sizeof hint));
        int n = tile_program_kernel_count(p);
        if (n) {
            fputs("  kernels:", stderr);
            for (int i = 0; i < n; i++)
                fprintf(stderr, " %s", tile_kernel_name(p, i));
            fputs("\n", stderr);
        }
    }
    return k;
}

/* With -v: which constants the first variant took, since without -D the first value
 * of each tune list is used. */
static void describe_first_variant(tile_program *p, int k) {
    tile_variants *vs;
    if (tile_variants_get(p, k, false, &vs) != TILE_OK)
        return;
    fprintf(stderr, "tilec: kernel '%s': variant [", tile_kernel_name(p, k));
    for (int j = 0; j < tile_variant_const_count(vs, 0); j++) {
        const char *name;
        double value;
        bool is_float;
        tile_variant_const(vs, 0, j, &name, &value, &is_float);
        fprintf(stderr, is_float ? "%s%s=%g" : "%s%s=%.0f", j ? ", " : "", name, value);
    }
    fprintf(stderr, "]%s\n",
            tile_kernel_tune_count(p, k) ? " (the first value of each tune list not fixed by -D)" : "");
    tile_variants_free(vs);
}

/* ---- tilec FILE.tile ------------------------------------------------------------- */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* A compile of many variants that runs past a second ($TILEC_PROGRESS_MS) says how far
 * it is on stderr: on a terminal one line rewritten in place (at most ten times a
 * second); elsewhere (a log, a pipe) a plain line at each quarter done, so that a long
 * compile (a bundle of matmul.tile: minutes) writes a few lines, not one a second. */
typedef struct Progress {
    double start, last, after_ms;
    int next_quarter; /* not a terminal: the quarter whose line comes next (1..4) */
    bool shown, tty;
} Progress;

static void show_progress(void *ud, const char *what, int done, int total) {
    Progress *pr = ud;
    double t = now_ms();
    if (t - pr->start < pr->after_ms)
        return;
    if (pr->tty && done < total && pr->shown && t - pr->last < 100)
        return;
    if (!pr->tty) {
        if (done < total && (int64_t)done * 4 < (int64_t)total * pr->next_quarter)
            return;
        while (pr->next_quarter <= 4 && (int64_t)done * 4 >= (int64_t)total * pr->next_quarter)
            pr->next_quarter++;
        if (done == total)
            pr->next_quarter = 1; /* the next batch (another kernel) starts again */
    }
    pr->last = t;
    pr->shown = true;
    /* \033[K clears what a longer line left on the terminal */
    fprintf(stderr, "%stilec: compiled %d of %d variants%s%s%s%s%s", pr->tty ? "\r" : "", done, total,
            *what ? " of '" : "", what, *what ? "'" : "", pr->tty ? "\033[K" : "",
            !pr->tty || done == total ? "\n" : "");
    fflush(stderr);
}

/* -v: where the compile's time went, like -ftime-report. */
static void print_timing(const tile_ctx *ctx, double total_ms) {
    fputs("tilec: time:", stderr);
    for (int ph = 0; ph < TILE_NPHASES; ph++)
        fprintf(stderr, " %s %.2f ms%s", tile_phase_name((tile_phase)ph),
                tile_ctx_phase_seconds(ctx, (tile_phase)ph) * 1e3, ph + 1 < TILE_NPHASES ? "," : "");
    fprintf(stderr, "; total %.2f ms\n", total_ms);
}

/* --report: one line per kernel variant, `key=value` fields; --report=json: one JSON
 * object per line with the same fields (and the variant's text). */
static void print_reports(const tile_report *r, int n, bool json) {
    for (int i = 0; i < n && json; i++)
        printf("{\"kernel\":\"%s\",\"variant\":\"%s\",\"regs\":%d,\"smem\":%d,\"spill_stores\":%d,"
               "\"spill_loads\":%d,\"stack\":%d,\"static_global\":%d,\"threads\":%d,\"flops\":%lld,"
               "\"global_bytes\":%lld}\n",
               r[i].kernel_name, r[i].variant_text, r[i].regs, r[i].smem_bytes, r[i].spill_stores, r[i].spill_loads,
               r[i].stack_bytes, r[i].static_global_bytes, r[i].threads, (long long)r[i].flops,
               (long long)r[i].global_bytes);
    for (int i = 0; i < n && !json; i++)
        printf("%s [%s]: regs=%d smem=%d spill_stores=%d spill_loads=%d stack=%d "
               "static_global=%d threads=%d flops=%lld global_bytes=%lld\n",
               r[i].kernel_name, r[i].variant_text, r[i].regs, r[i].smem_bytes, r[i].spill_stores, r[i].spill_loads,
               r[i].stack_bytes, r[i].static_global_bytes, r[i].threads, (long long)r[i].flops,
               (long long)r[i].global_bytes);
}

/* Writes `data` to `path` ("-" or NULL: stdout).  A regular file (or a new one) is
 * written to a temporary file beside it and renamed over it, so that a reader (the JIT,
 * a build's next step) sees the old file or the whole new one, never half of it; a
 * device such as /dev/null is written in place. */
static bool write_file(const char *path, const char *data, size_t len) {
    if (!path || !strcmp(path, "-")) {
        bool ok = fwrite(data, 1, len, stdout) == len && fflush(stdout) == 0;
        if (!ok)
            cli_error("cannot write 'standard output'");
        return ok;
    }
    struct stat st;
    bool in_place = !stat(path, &st) && !S_ISREG(st.st_mode);
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp) {
        cli_error("cannot write '%s': out of memory", path);
        return false;
    }
    if (in_place)
        snprintf(tmp, n, "%s", path);
    else
        snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    FILE *out = fopen(tmp, "wb");
    if (!out) {
        cli_error("cannot write '%s': %s", path, strerror(errno));
        free(tmp);
        return false;
    }
    bool ok = fwrite(data, 1, len, out) == len;
    ok &= fclose(out) == 0;
    if (ok && !in_place && rename(tmp, path) != 0) {
        cli_error("cannot write '%s': renaming '%s' over it: %s", path, tmp, strerror(errno));
        unlink(tmp);
        free(tmp);
        return false;
    }
    if (!ok) {
        cli_error("cannot write '%s'", path);
        if (!in_place)
            unlink(tmp);
    }
    free(tmp);
    return ok;
}

/* Where module `name` of several goes for -o OUT: ".NAME" before OUT's extension
 * (out.ptx -> out.vector_add.0.ptx); a device (/dev/null) takes them all. */
static char *module_path(const char *out, const char *name) {
    struct stat st;
    if (!stat(out, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return strdup(out);
    const char *slash = strrchr(out, '/');
    const char *dot = strrchr(slash ? slash + 1 : out, '.');
    size_t stem = dot && dot != (slash ? slash + 1 : out) ? (size_t)(dot - out) : strlen(out);
    size_t n = strlen(out) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%.*s.%s%s", (int)stem, out, name, out + stem);
    return p;
}

/* --emit=llvm|ptx|cubin: one module per kernel variant. */
static bool emit_modules(tile_program *p, int k, tile_emit_kind kind, const char *out_path, bool verbose) {
    tile_output *outs;
    int n;
    if (tile_compile(p, k, kind, false, &outs, &n) != TILE_OK)
        return false;
    bool ok = true;
    if (n == 1) {
        if (kind == TILE_EMIT_CUBIN && (!out_path || !strcmp(out_path, "-")) && isatty(1)) {
            cli_error("not writing a cubin to a terminal: give -o OUT");
            ok = false;
        } else {
            ok = write_file(out_path, outs[0].data, outs[0].len);
        }
    } else if (!out_path || !strcmp(out_path, "-")) {
        cli_error("%d modules (kernel variants) for --emit=%s: pick one with --kernel NAME and -D "
                  "NAME=V for each tune list, or give -o OUT to write each to OUT.KERNEL[.N].EXT",
                  n, tile_emit_kind_name(kind));
        ok = false;
    } else {
        for (int i = 0; i < n && ok; i++) {
            char *path = module_path(out_path, outs[i].name);
            ok = path && write_file(path, outs[i].data, outs[i].len);
            if (ok && verbose)
                fprintf(stderr, "tilec: wrote %s (%s [%s])\n", path, outs[i].report.kernel_name,
                        outs[i].report.variant_text);
            free(path);
        }
    }
    tile_outputs_free(outs, n);
    return ok;
}

static int cmd_compile(int argc, char **argv) {
    double t0 = now_ms();
    CliCompile o;
    char err[512];
    if (!cli_parse_compile(argc, argv, &o, err, sizeof err))
        usage_error("%s", err);
    const CliCommon c = o.c;
    const char *out_path = o.out_path, *emit = o.emit;
    int kind = o.emit_kind;
    bool report = o.report, report_json = o.report_json;
    check_file(c.file);
    tile_ctx *ctx = make_ctx(&c);
    const char *after = getenv("TILEC_PROGRESS_MS");
    Progress progress = {
        .start = t0, .after_ms = after && *after ? atof(after) : 1000, .next_quarter = 1, .tty = isatty(2)};
    tile_ctx_set_progress(ctx, show_progress, &progress);
    tile_ctx_set_arch(ctx, o.arch);
    tile_ctx_set_timing(ctx, c.verbose);
    tile_ctx_set_diag(ctx, NULL, NULL);
    /* the library's message (with the list of passes) once, as a command-line error */
    if (o.print_after && tile_ctx_set_print_after(ctx, o.print_after, stderr) != TILE_OK)
        usage_error("%s", tile_ctx_last_error(ctx) + strlen("error: "));
    if (o.all_div16)
        tile_ctx_assume(ctx, "*", TILE_ASSUME_DIV16);
    for (int i = 0; i < o.ndiv16; i++)
        if (!cli_assume_list(ctx, o.div16[i], TILE_ASSUME_DIV16, "--assume-div16", err, sizeof err))
            usage_error("%s", err);
    for (int i = 0; i < o.ndiv8; i++)
        if (!cli_assume_list(ctx, o.div8[i], TILE_ASSUME_DIV8, "--assume-div8", err, sizeof err))
            usage_error("%s", err);
    for (int i = 0; i < o.none; i++)
        if (!cli_assume_list(ctx, o.one[i], TILE_ASSUME_ONE, "--assume-one", err, sizeof err))
            usage_error("%s", err);
    tile_ctx_set_diag(ctx, print_diag, NULL);
    cli_compile_free(&o);

    if (report && !tile_emit_supported(TILE_EMIT_CUBIN)) {
        cli_error("--report is not supported yet in this build (no GPU backend)");
        return EXIT_ERROR;
    }
    if (!tile_emit_supported((tile_emit_kind)kind)) {
        cli_error("--emit=%s is not supported yet in this build%s", emit,
                  kind == TILE_EMIT_BUNDLE || kind == TILE_EMIT_HEADER ? "" : " (no GPU backend); use --emit=tir");
        return EXIT_ERROR;
    }
    tile_program *p;
    if (tile_program_load_file(ctx, c.file, &p) != TILE_OK)
        return EXIT_ERROR;
    int k = -1;
    if (c.kernel && (k = find_kernel(p, c.kernel, c.file)) < 0)
        return EXIT_ERROR;
    if (c.verbose && !report) {
        /* Errors of these variants are reported by the compile that follows (once). */
        tile_ctx_set_diag(ctx, NULL, NULL);
        for (int i = k < 0 ? 0 : k; i < (k < 0 ? tile_program_kernel_count(p) : k + 1); i++)
            describe_first_variant(p, i);
        tile_ctx_set_diag(ctx, print_diag, NULL);
    }
    bool ok = true;
    if (report) {
        /* Every variant the defines leave, like a bundle; the code itself only with -o. */
        tile_report *reps;
        int nreps;
        ok = tile_report_get(p, k, true, &reps, &nreps) == TILE_OK;
        if (ok) {
            print_reports(reps, nreps, report_json);
            fflush(stdout);
        }
        free(reps);
    }
    if (ok && (!report || out_path)) {
        if (kind == TILE_EMIT_TIR || kind == TILE_EMIT_BUNDLE || kind == TILE_EMIT_HEADER) {
            /* one output: the text IR of each kernel, or one bundle/header of every variant */
            bool all = kind != TILE_EMIT_TIR;
            char *text = NULL;
            size_t len;
            ok = tile_emit(p, k, (tile_emit_kind)kind, all, &text, &len) == TILE_OK && write_file(out_path, text, len);
            free(text);
        } else {
            ok = emit_modules(p, k, (tile_emit_kind)kind, out_path, c.verbose);
        }
    }
    if (c.verbose)
        print_timing(ctx, now_ms() - t0);
    tile_program_free(p);
    tile_ctx_free(ctx);
    return ok ? 0 : EXIT_ERROR;
}

/* ---- tilec run -------------------------------------------------------------------- */

/* ---- tilec run on the GPU (and --bench) through the runtime --------------------------- */
/* The runtime's message of a failed load (compile errors are already "FILE:LINE:COL:
 * error: ..."): as it is, or one JSON error with --diagnostics=json. */
static void runtime_error(const tile_rt *rt) {
    if (cli_json)
        cli_error("%s", tile_rt_last_error(rt));
    else
        fprintf(stderr, "%s\n", tile_rt_last_error(rt));
}

/* Runs kernel `kname` of `file` on rt: device buffers made from the host arguments, -D
 * values for const parameters, one launch (or --bench: autotune, then time `reps`
 * launches), and the pointer buffers copied back into `args` for --save. */
static int run_on_runtime(tile_rt *rt, const char *file, const char *kname, bool verbose, const char **defines,
                          int ndefines, const tile_param_info *pis, tile_arg *args, int np, const int64_t grid[3],
                          int reps) {
    tile_rt_module *m = NULL;
    tile_rt_kernel *k = NULL;
    if (tile_rt_load_source_file(rt, file, &m) != TILE_RT_OK || tile_rt_get_kernel(m, kname, &k) != TILE_RT_OK) {
        runtime_error(rt);
        tile_rt_module_free(m);
        return EXIT_ERROR;
    }
    int rc = EXIT_ERROR;
    for (int i = 0; i < ndefines; i++) {
        const char *eq = strchr(defines[i], '=');
        int j = 0;
        while (eq && j < np &&
               (strlen(pis[j].name) != (size_t)(eq - defines[i]) ||
                strncmp(pis[j].name, defines[i], (size_t)(eq - defines[i]))))
            j++;
        /* -D fixes one value: of a const parameter, or of a tuned constant (the
         * runtime then admits only the variants with that value) */
        if (!eq || (j < np && !pis[j].is_const) || strchr(eq, ',')) {
            cli_error("-D %s: a run takes one value, of a const parameter or a tuned constant", defines[i]);
            tile_rt_module_free(m);
            return EXIT_ERROR;
        }
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq - defines[i]), defines[i]);
        double d = strtod(eq + 1, NULL);
        uint64_t u;
        int64_t iv = !strcmp(eq + 1, "true")    ? 1
                     : !strcmp(eq + 1, "false") ? 0
                     : d >= -9e18 && d <= 9e18  ? (int64_t)d
                                                : 0;
        if (!cli_parse_i64(eq + 1, &iv) && cli_parse_u64(eq + 1, &u))
            iv = (int64_t)u; /* a u64 of 2^63 and up, by its bits */
        if (tile_rt_set_const(k, name, iv, d) != TILE_RT_OK) {
            runtime_error(rt);
            tile_rt_module_free(m);
            return EXIT_ERROR;
        }
    }
    tile_rt_arg *rargs = calloc((size_t)np + 1, sizeof *rargs);
    void **dev = calloc((size_t)np + 1, sizeof *dev);
    int nr = 0;
    size_t bytes_total = 0;
    tile_rt_status s = TILE_RT_OK;
    for (int j = 0; j < np && s == TILE_RT_OK; j++) {
        if (pis[j].is_const)
            continue;
        tile_rt_arg *a = &rargs[nr++];
        if (pis[j].is_pointer) {
            a->kind = TILE_RT_ARG_PTR;
            s = tile_rt_alloc(rt, args[j].buf.bytes, &dev[j]);
            if (s == TILE_RT_OK)
                s = tile_rt_copy_to_device(rt, dev[j], args[j].buf.ptr, args[j].buf.bytes);
            a->buf.ptr = dev[j];
            a->buf.bytes = args[j].buf.bytes;
            bytes_total += args[j].buf.bytes;
        } else if (args[j].kind == TILE_ARG_FLOAT) {
            a->kind = TILE_RT_ARG_F64;
            a->f64 = args[j].f64;
        } else {
            a->kind = TILE_RT_ARG_I64;
            a->i64 = args[j].i64;
        }
    }
    const int64_t *g = grid[0] ? grid : NULL;
    double ms = 0;
    if (s == TILE_RT_OK && reps > 0)
        s = tile_rt_bench(k, rargs, nr, g, 3, reps, &ms);
    else if (s == TILE_RT_OK)
        s = tile_rt_launch(k, rargs, nr, NULL, g);
    if (s == TILE_RT_OK)
        s = tile_rt_synchronize(rt);
    for (int j = 0; j < np && s == TILE_RT_OK; j++)
        if (pis[j].is_pointer && !pis[j].is_const)
            s = tile_rt_copy_to_host(rt, args[j].buf.ptr, dev[j], args[j].buf.bytes);
    tile_rt_launch_info info = {0};
    tile_rt_last_launch_info(k, &info);
    if (s != TILE_RT_OK) {
        cli_error("%s", tile_rt_last_error(rt));
    } else {
        rc = 0;
        if (verbose)
            fprintf(stderr, "tilec: ran kernel '%s' variant [%s] on grid (%lld, %lld, %lld) on %s\n", kname,
                    tile_rt_last_variant(k), (long long)info.grid[0], (long long)info.grid[1], (long long)info.grid[2],
                    tile_rt_device_name(rt));
        if (reps > 0) {
            /* GB/s: every pointer argument's buffer counted once (what the kernel must at
             * least read or write); TFLOP/s: the variant's static flops per program times
             * the programs launched, when the compiler reports them. */
            double sec = ms * 1e-3;
            double programs = (double)info.grid[0] * (double)info.grid[1] * (double)info.grid[2];
            printf("%s: best variant [%s] on %s\n", kname, tile_rt_last_variant(k), tile_rt_device_name(rt));
            printf("  median %.4f ms over %d runs, %.1f GB/s", ms, reps,
                   sec > 0 ? (double)bytes_total / sec * 1e-9 : 0.0);
            if (info.flops_per_program && sec > 0)
                printf(", %.2f TFLOP/s", (double)info.flops_per_program * programs / sec * 1e-12);
            printf("\n");
        }
    }
    for (int j = 0; j < np; j++)
        if (dev[j])
            tile_rt_free(rt, dev[j]);
    free(dev);
    free(rargs);
    tile_rt_module_free(m);
    return rc;
}

/* Whether NAME (its first n bytes) is a tuned constant of kernel k, warps or stages. */
static bool names_tuned_constant(tile_program *p, int k, const char *name, size_t n) {
    static const char *const shape[] = {"warps", "stages"};
    for (int i = 0; i < 2; i++)
        if (strlen(shape[i]) == n && !strncmp(shape[i], name, n))
            return true;
    for (int i = 0; i < tile_kernel_tune_count(p, k); i++) {
        const char *t = NULL;
        if (tile_kernel_tune(p, k, i, &t, NULL, NULL) != TILE_ERR_INVALID && t && strlen(t) == n &&
            !strncmp(t, name, n))
            return true;
    }
    return false;
}

static int cmd_run(int argc, char **argv) {
    CliRun o;
    char err[512];
    if (!cli_parse_run(argc, argv, &o, err, sizeof err))
        usage_error("%s", err);
    const CliCommon c = o.c;
    const char *device = o.device;
    const char **saves = o.saves;
    int nsaves = o.nsaves;
    bool bench = o.bench;
    const int64_t *grid = o.grid;
    check_file(c.file);
    tile_ctx *ctx = make_ctx(&c);

    /* cuda where the runtime opens a GPU (else, by default, the interpreter, saying why);
     * --bench on the interpreter times CPU runs through the runtime's interp device. */
    tile_device dev = TILE_DEVICE_INTERP;
    tile_rt *rt = NULL;
    if (!device || !strcmp(device, "cuda")) {
        if (tile_rt_open(TILE_RT_CUDA, NULL, &rt) != TILE_RT_OK) {
            if (device) {
                cli_error("--device=cuda: %s", tile_rt_open_error());
                return EXIT_ERROR;
            }
            cli_notice("no CUDA device (%s); running on the interpreter", tile_rt_open_error());
        }
    }
    if (!rt && bench && tile_rt_open(TILE_RT_INTERP, NULL, &rt) != TILE_RT_OK) {
        cli_error("%s", tile_rt_open_error());
        return EXIT_ERROR;
    }

    tile_program *p;
    if (tile_program_load_file(ctx, c.file, &p) != TILE_OK)
        return EXIT_ERROR;
    int k = find_kernel(p, c.kernel, c.file);
    if (k < 0)
        return EXIT_ERROR;

    /* Match every ARG to a parameter, then check that each runtime parameter has one;
     * report every problem before giving up, and run nothing on any. */
    int np = tile_kernel_param_count(p, k);
    tile_arg *args = calloc(np + 1, sizeof *args);
    tile_param_info *pis = calloc(np + 1, sizeof *pis);
    bool *given = calloc(np + 1, sizeof *given);
    CliShape *shapes = calloc(np + 1, sizeof *shapes);
    int bad = 0;
    for (int j = 0; j < np; j++)
        tile_kernel_param(p, k, j, &pis[j]);
    for (int i = 0; i < o.nargs; i++) {
        const char *eq = strchr(o.args[i], '=');
        size_t nlen = (size_t)(eq - o.args[i]);
        int j = 0;
        while (j < np && (strlen(pis[j].name) != nlen || strncmp(pis[j].name, o.args[i], nlen)))
            j++;
        if (j == np && names_tuned_constant(p, k, o.args[i], nlen)) {
            /* NAME=V of a tuned constant (or warps, stages) pins it, as -D NAME=V does
             * and as Python's keyword does */
            o.c.defines[o.c.ndefines++] = o.args[i];
            if (tile_ctx_define(ctx, o.args[i]) != TILE_OK)
                bad++;
            continue;
        }
        if (j == np) {
            char name[128], hint[160];
            snprintf(name, sizeof name, "%.*s", (int)nlen, o.args[i]);
            const char *best = NULL;
            int bestd = 99;
            for (int q = 0; q < np; q++)
                consider(&best, &bestd, name, pis[q].name);
            for (int q = 0; q < tile_kernel_tune_count(p, k); q++) {
                const char *t = NULL;
                tile_kernel_tune(p, k, q, &t, NULL, NULL);
                if (t)
                    consider(&best, &bestd, name, t);
            }
            cli_error("kernel '%s' has no parameter '%s'%s", c.kernel, name, did_you_mean(best, hint, sizeof hint));
            bad++;
            continue;
        }
        const tile_param_info *pi = &pis[j];
        const char *v = eq + 1;
        if (given[j]) {
            cli_error("argument '%s' given twice", pi->name);
            bad++;
            continue;
        }
        given[j] = true;
        if (pi->is_pointer && !cli_is_buffer_spec(v)) {
            cli_error("argument '%s' is a pointer (*%s): give @PATH, zeros:COUNT, rand:COUNT[:SEED] "
                      "or randn:COUNT[:SEED], not '%s'",
                      pi->name, tile_scalar_name(pi->type), v);
            bad++;
        } else if (!pi->is_pointer && cli_is_buffer_spec(v)) {
            cli_error("argument '%s' is a scalar (%s%s), not a buffer ('%s')", pi->name, pi->is_const ? "const " : "",
                      tile_scalar_name(pi->type), v);
            bad++;
        } else if (!(pi->is_pointer ? cli_make_buffer(pi, v, &args[j], &shapes[j])
                                    : cli_make_scalar(pi, v, &args[j]))) {
            bad++;
        }
    }
    for (int j = 0; j < np; j++)
        if (!given[j] && !pis[j].is_const) {
            cli_error("missing argument '%s' (%s%s) of kernel '%s'", pis[j].name, pis[j].is_pointer ? "*" : "",
                      tile_scalar_name(pis[j].type), c.kernel);
            bad++;
        }
    for (int i = 0; i < nsaves; i++) {
        const char *eq = strchr(saves[i], '=');
        size_t nlen = (size_t)(eq - saves[i]);
        int j = 0;
        while (j < np && (strlen(pis[j].name) != nlen || strncmp(pis[j].name, saves[i], nlen)))
            j++;
        if (j == np || !pis[j].is_pointer) {
            cli_error("--save '%.*s': kernel '%s' has no pointer parameter of that name", (int)nlen, saves[i],
                      c.kernel);
            bad++;
        }
    }
    int rc = EXIT_ERROR;
    if (bad)
        goto done;

    if (rt) {
        if (run_on_runtime(rt, c.file, c.kernel, c.verbose, o.c.defines, o.c.ndefines, pis, args, np, grid,
                           bench ? o.bench_reps : 0) != 0)
            goto done;
        rc = 0;
        goto save;
    }
    tile_run_options ro = {.device = dev, .grid = {grid[0], grid[1], grid[2]}, .print_out = stdout};
    tile_status st = tile_run(p, k, args, np, &ro);
    fflush(stdout);
    if (c.verbose && ro.chosen[0])
        fprintf(stderr,
                "tilec: ran kernel '%s' variant [%s] on grid (%lld, %lld, %lld) on the "
                "interpreter\n",
                c.kernel, ro.chosen, (long long)ro.grid_used[0], (long long)ro.grid_used[1],
                (long long)ro.grid_used[2]);
    if (st != TILE_OK)
        goto done;
    rc = 0;
save:
    for (int i = 0; i < nsaves; i++) {
        const char *eq = strchr(saves[i], '=');
        size_t nlen = (size_t)(eq - saves[i]);
        for (int j = 0; j < np; j++)
            if (strlen(pis[j].name) == nlen && !strncmp(pis[j].name, saves[i], nlen) &&
                !cli_save_buffer(eq + 1, &args[j], pis[j].type, &shapes[j]))
                rc = EXIT_ERROR;
    }
done:
    for (int j = 0; j < np; j++)
        if (args[j].kind == TILE_ARG_BUFFER)
            free(args[j].buf.ptr);
    free(args);
    free(pis);
    free(given);
    free(shapes);
    cli_run_free(&o);
    tile_program_free(p);
    tile_ctx_free(ctx);
    tile_rt_close(rt);
    return rc;
}

static bool is_help(const char *a) {
    return !strcmp(a, "--help") || !strcmp(a, "-h");
}

/* tilec check, tune and report (subcommands.h): each its own --help. */
static int subcommand(int argc, char **argv) {
    static const struct {
        const char *name, *help;
        int (*fn)(int, char **);
    } subs[] = {{"check", check_help, cmd_check}, {"tune", tune_help, cmd_tune}, {"report", report_help, cmd_report}};
    for (size_t s = 0; argc >= 2 && s < sizeof subs / sizeof subs[0]; s++) {
        if (strcmp(argv[1], subs[s].name))
            continue;
        for (int i = 2; i < argc; i++)
            if (is_help(argv[i])) {
                fputs(subs[s].help, stdout);
                return 0;
            }
        return subs[s].fn(argc, argv);
    }
    return -1;
}

int main(int argc, char **argv) {
    int sub = subcommand(argc, argv);
    if (sub >= 0)
        return sub;
    bool run = argc >= 2 && !strcmp(argv[1], "run");
    /* --help or --version anywhere answers at once, as the rest may be half-typed */
    for (int i = run ? 2 : 1; i < argc; i++) {
        if (is_help(argv[i])) {
            if (run) {
                fputs(run_help, stdout);
            } else {
                fputs(usage_text, stdout);
                printf(compile_help, tile_arch_names(), tile_arch_default());
            }
            return 0;
        }
        if (!strcmp(argv[i], "--version")) {
            printf("tilec %s (LLVM %s)\n", TILEC_VERSION, TILEC_LLVM_VERSION);
            return 0;
        }
    }
    return run ? cmd_run(argc, argv) : cmd_compile(argc, argv);
}
