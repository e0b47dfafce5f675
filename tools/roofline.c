/* tilec report --roofline OUT.svg: a roofline figure (log-log: arithmetic intensity in
 * FLOP per byte against achieved FLOP/s) of measured kernels against one GPU's ceilings:
 * its memory bandwidth and its compute peaks, one roof per peak.
 *
 *   tilec report --roofline OUT.svg [--gpu h100|h200] [--title TEXT] POINTS
 *
 * POINTS (a file, or - for stdin) has one measured launch per line, comma- or
 * tab-separated: LABEL,FLOPS,BYTES,MS (the launch's floating-point operations and global
 * bytes, as `tilec run --bench` and bench/bench.py report them, and its median time);
 * blank lines and lines starting with # are skipped.  Also prints each point's achieved
 * TFLOP/s and GB/s and the fraction of its roof it reached.
 *
 *   tilec report FILE.tile --kernel NAME [-D NAME=V]... [--grid=..] [--ms MS] ARG...
 *
 * counts one launch on the tile IR (tile_run_options.count_only): the points' FLOPS and
 * BYTES. */
#include "run_inputs.h"
#include "subcommands.h"
#include "tile/tile.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char report_help[] = "usage: tilec report --roofline OUT.svg [--gpu h100|h200] [--title TEXT] POINTS\n"
                           "\nDraw measured kernels on a roofline of the GPU's ceilings (an SVG file):\n"
                           "  POINTS              a file (- for stdin), one launch per line: LABEL,FLOPS,BYTES,MS\n"
                           "                      (comma or tab separated; # starts a comment line)\n"
                           "  --gpu GPU           h200 (default) or h100: the SXM parts' data-sheet ceilings\n"
                           "  --title TEXT        the figure's title\n"
                           "Prints each point's FLOP/byte, TFLOP/s, GB/s and the fraction of its roof.\n";

enum { EXIT_ERROR = 1, EXIT_USAGE = 2 };

/* ---- the ceilings: the one table of them ------------------------------------------- */
/* Dense (no sparsity) peaks of the SXM parts, from NVIDIA's data sheets:
 *   H100: https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM column; the tensor
 *         figures there are with sparsity, halved here)
 *   H200: https://www.nvidia.com/en-us/data-center/h200/ (H200 SXM column, likewise)
 * The H200 has the H100's compute and a faster memory (HBM3e). */
typedef struct Peak {
    const char *what;
    double tflops;
} Peak;
typedef struct Gpu {
    const char *id, *name;
    double gbps;
    Peak peaks[4];
} Gpu;
static const Gpu gpus[] = {
    {"h100",
     "H100 SXM",
     3350,
     {{"FP32 (CUDA cores)", 66.9}, {"TF32 tensor", 494.7}, {"FP16/BF16 tensor", 989.4}, {"FP8/INT8 tensor", 1978.9}}},
    {"h200",
     "H200 SXM",
     4800,
     {{"FP32 (CUDA cores)", 66.9}, {"TF32 tensor", 494.7}, {"FP16/BF16 tensor", 989.4}, {"FP8/INT8 tensor", 1978.9}}},
};

typedef struct Point {
    char label[128];
    double flops, bytes, ms;
} Point;

static void usage(const char *msg) {
    fprintf(stderr, "tilec: error: %s\n%s", msg, report_help);
}

/* Reads POINTS; false after an error naming the file and line. */
static bool read_points(const char *path, Point **out, int *n) {
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f) {
        fprintf(stderr, "tilec: error: cannot open '%s': %s\n", path, strerror(errno));
        return false;
    }
    char line[1024];
    int lineno = 0, cap = 0;
    bool ok = true;
    *out = NULL;
    *n = 0;
    while (ok && fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == 0)
            continue;
        char *fields[4];
        int nf = 0;
        for (char *s = p; nf < 4 && s; nf++) {
            fields[nf] = s;
            s = strpbrk(s, ",\t");
            if (s)
                *s++ = 0;
        }
        Point pt;
        memset(&pt, 0, sizeof pt);
        char *end = NULL;
        if (nf == 4) {
            snprintf(pt.label, sizeof pt.label, "%s", fields[0]);
            pt.flops = strtod(fields[1], &end);
            ok = *end == 0 || strchr(" \n", *end);
            pt.bytes = ok ? strtod(fields[2], &end) : 0;
            ok = ok && (*end == 0 || strchr(" \n", *end));
            pt.ms = ok ? strtod(fields[3], &end) : 0;
            ok = ok && (*end == 0 || strchr(" \r\n", *end));
        }
        if (nf != 4 || !ok || !(pt.flops > 0) || !(pt.bytes > 0) || !(pt.ms > 0) ||
            !isfinite(pt.flops + pt.bytes + pt.ms)) {
            fprintf(stderr, "tilec: error: %s:%d: expected LABEL,FLOPS,BYTES,MS with positive numbers\n", path, lineno);
            ok = false;
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            Point *np = realloc(*out, (size_t)cap * sizeof *np);
            if (!np) {
                ok = false;
                break;
            }
            *out = np;
        }
        (*out)[(*n)++] = pt;
    }
    if (f != stdin)
        fclose(f);
    if (ok && *n == 0) {
        fprintf(stderr, "tilec: error: '%s' has no points\n", path);
        ok = false;
    }
    return ok;
}

/* ---- the figure ---------------------------------------------------------------------- */
/* Plot area in pixels, and the decades it spans: FLOP/byte 10^-2..10^4, FLOP/s 10^10..10^16. */
enum { W = 960, H = 600, LEFT = 90, RIGHT = 250, TOP = 50, BOTTOM = 70 };
static const double X_LO = -2, X_HI = 4, Y_LO = 10, Y_HI = 16;

static double px(double ai) {
    return LEFT + (log10(ai) - X_LO) / (X_HI - X_LO) * (W - LEFT - RIGHT);
}
static double py(double flops_per_s) {
    return TOP + (Y_HI - log10(flops_per_s)) / (Y_HI - Y_LO) * (H - TOP - BOTTOM);
}

static void xml_text(FILE *f, const char *s) {
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            if ((unsigned char)*s >= 0x20)
                fputc(*s, f);
        }
}

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};

static bool write_svg(const char *path, const Gpu *g, const char *title, const Point *pts, int n) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tilec: error: cannot write '%s': %s\n", path, strerror(errno));
        return false;
    }
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
            W, H, W, H, W, H);
    fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"16\">", LEFT);
    xml_text(f, title);
    fputs("</text>\n", f);
    /* grid and tick labels at each decade */
    fputs("<g id=\"grid\" stroke=\"#dddddd\">\n", f);
    for (int d = (int)X_LO; d <= (int)X_HI; d++)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", px(pow(10, d)), TOP, px(pow(10, d)),
                H - BOTTOM);
    for (int d = (int)Y_LO; d <= (int)Y_HI; d++)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", LEFT, py(pow(10, d)), W - RIGHT,
                py(pow(10, d)));
    fputs("</g>\n<g id=\"ticks\">\n", f);
    for (int d = (int)X_LO; d <= (int)X_HI; d++)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", px(pow(10, d)), H - BOTTOM + 18,
                pow(10, d));
    static const char *const ylab[] = {"10 G", "100 G", "1 T", "10 T", "100 T", "1 P", "10 P"};
    for (int d = (int)Y_LO; d <= (int)Y_HI; d++)
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", LEFT - 6, py(pow(10, d)) + 4,
                ylab[d - (int)Y_LO]);
    fprintf(f,
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">arithmetic intensity (FLOP per byte of global "
            "memory)</text>\n",
            (LEFT + W - RIGHT) / 2, H - 25);
    fprintf(f, "<text transform=\"translate(22 %d) rotate(-90)\" text-anchor=\"middle\">FLOP/s</text>\n",
            (TOP + H - BOTTOM) / 2);
    fputs("</g>\n", f);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"black\"/>\n", LEFT, TOP,
            W - LEFT - RIGHT, H - TOP - BOTTOM);
    /* the roofs: bandwidth * intensity up to each compute peak */
    fputs("<g id=\"ceilings\" fill=\"none\" stroke=\"black\" stroke-width=\"1.5\">\n", f);
    double bw = g->gbps * 1e9;
    for (int i = 0; i < 4; i++) {
        double peak = g->peaks[i].tflops * 1e12;
        double x0 = pow(10, X_LO), knee = peak / bw, x1 = pow(10, X_HI);
        double y0 = bw * x0;
        fprintf(f, "<polyline class=\"roof\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"%s/>\n", px(x0),
                y0 > pow(10, Y_LO) ? py(y0) : py(pow(10, Y_LO)), px(knee), py(peak), px(x1), py(peak),
                i == 2 ? "" : " stroke-dasharray=\"5,4\"");
        fprintf(f,
                "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" fill=\"black\" font-size=\"11\">%s %.0f TFLOP/s</text>\n",
                px(x1) + 4, py(peak) + 4, g->peaks[i].what, g->peaks[i].tflops);
    }
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" fill=\"black\" font-size=\"11\" "
            "transform=\"rotate(-%.1f %.1f %.1f)\">%s HBM %.0f GB/s</text>\n",
            px(0.1), py(bw * 0.1) - 6, atan2(py(bw * 0.1) - py(bw * 1), px(1) - px(0.1)) * 180 / M_PI, px(0.1),
            py(bw * 0.1) - 6, g->name, g->gbps);
    fputs("</g>\n<g id=\"points\">\n", f);
    for (int i = 0; i < n; i++) {
        double ai = pts[i].flops / pts[i].bytes, fs = pts[i].flops / (pts[i].ms * 1e-3);
        double x = px(ai), y = py(fs);
        /* points outside the axes are drawn on its edge */
        x = x < LEFT ? LEFT : x > W - RIGHT ? W - RIGHT : x;
        y = y < TOP ? TOP : y > H - BOTTOM ? H - BOTTOM : y;
        const char *c = colours[i % (sizeof colours / sizeof colours[0])];
        fprintf(f, "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>", x, y, c);
        xml_text(f, pts[i].label);
        fprintf(f, ": %.3g FLOP/byte, %.2f TFLOP/s, %.0f GB/s</title></circle>\n", ai, fs * 1e-12,
                pts[i].bytes / (pts[i].ms * 1e-3) * 1e-9);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"%s\">", x + 7, y - 6 + 12 * (i % 2), c);
        xml_text(f, pts[i].label);
        fputs("</text>\n", f);
    }
    fputs("</g>\n</svg>\n", f);
    bool ok = !ferror(f);
    ok &= fclose(f) == 0;
    if (!ok)
        fprintf(stderr, "tilec: error: cannot write '%s'\n", path);
    return ok;
}

/* ---- counting one launch -------------------------------------------------------------- */
static int count_launch(int argc, char **argv) {
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    double ms = 0;
    for (int i = 0; i < argc; i++) {
        if (i >= 2 && !strncmp(argv[i], "--ms=", 5)) {
            char *end;
            ms = strtod(argv[i] + 5, &end);
            if (*end || !(ms > 0) || !isfinite(ms)) {
                usage("bad --ms: expected a positive time in milliseconds");
                free(rest);
                return EXIT_USAGE;
            }
        } else {
            rest[nrest++] = argv[i];
        }
    }
    CliRun o;
    char err[512];
    if (!cli_parse_run(nrest, rest, &o, err, sizeof err) || o.bench || o.nsaves || o.device) {
        usage(!strcmp(err, "tilec run needs --kernel NAME") ? "tilec report FILE.tile needs --kernel NAME"
              : o.bench || o.nsaves || o.device             ? "tilec report takes no --bench, --save or --device"
                                                            : err);
        cli_run_free(&o);
        free(rest);
        return EXIT_USAGE;
    }
    tile_ctx *ctx = tile_ctx_new();
    tile_ctx_set_debug(ctx, o.c.debug);
    int rc = EXIT_ERROR;
    tile_program *p = NULL;
    Inputs in = {0};
    for (int i = 0; i < o.c.ndefines; i++)
        if (tile_ctx_define(ctx, o.c.defines[i]) != TILE_OK) {
            usage(tile_ctx_last_error(ctx));
            rc = EXIT_USAGE;
            goto out;
        }
    if (tile_program_load_file(ctx, o.c.file, &p) != TILE_OK) {
        fprintf(stderr, "%s\n", tile_ctx_last_error(ctx));
        goto out;
    }
    int k = tile_program_find_kernel(p, o.c.kernel);
    if (k < 0) {
        fprintf(stderr, "tilec: error: no kernel '%s' in '%s'\n", o.c.kernel, o.c.file);
        goto out;
    }
    if (!make_inputs(ctx, p, k, &o, &in))
        goto out;
    tile_run_options ro = {.device = TILE_DEVICE_INTERP, .grid = {o.grid[0], o.grid[1], o.grid[2]}, .count_only = true};
    if (tile_run(p, k, in.args, in.np, &ro) != TILE_OK) {
        fprintf(stderr, "%s\n", tile_ctx_last_error(ctx));
        goto out;
    }
    printf("%s [%s] on grid (%lld, %lld, %lld): flops=%.0f global_bytes=%.0f per launch\n", o.c.kernel, ro.chosen,
           (long long)ro.grid_used[0], (long long)ro.grid_used[1], (long long)ro.grid_used[2], ro.launch_flops,
           ro.launch_bytes);
    if (ro.loops_per_iteration)
        printf("note: %d loop%s counted once (per iteration): %s bounds depend on values the arguments do not fix\n",
               ro.loops_per_iteration, ro.loops_per_iteration == 1 ? "" : "s",
               ro.loops_per_iteration == 1 ? "its" : "their");
    if (ms > 0)
        printf("point: %s,%.0f,%.0f,%g\n", o.c.kernel, ro.launch_flops, ro.launch_bytes, ms);
    rc = 0;
out:
    inputs_free(&in);
    tile_program_free(p);
    tile_ctx_free(ctx);
    cli_run_free(&o);
    free(rest);
    return rc;
}

static bool is_tile_file(const char *a) {
    size_t n = strlen(a);
    return a[0] != '-' && n > 5 && !strcmp(a + n - 5, ".tile");
}

int cmd_report(int argc, char **argv) {
    for (int i = 2; i < argc; i++)
        if (is_tile_file(argv[i]))
            return count_launch(argc, argv);
    const char *out = NULL, *in = NULL, *gpu = "h200", *title = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = !strcmp(a, "--roofline") ? &out
                           : !strcmp(a, "--gpu")    ? &gpu
                           : !strcmp(a, "--title")  ? &title
                                                    : NULL;
        if (dst) {
            if (i + 1 >= argc) {
                char m[96];
                snprintf(m, sizeof m, "option '%s' needs a value", a);
                usage(m);
                return EXIT_USAGE;
            }
            *dst = argv[++i];
        } else if (!strncmp(a, "--roofline=", 11)) {
            out = a + 11;
        } else if (!strncmp(a, "--gpu=", 6)) {
            gpu = a + 6;
        } else if (!strncmp(a, "--title=", 8)) {
            title = a + 8;
        } else if (a[0] == '-' && a[1]) {
            char m[160];
            snprintf(m, sizeof m, "unknown option '%s'", a);
            usage(m);
            return EXIT_USAGE;
        } else if (in) {
            usage("more than one POINTS file");
            return EXIT_USAGE;
        } else {
            in = a;
        }
    }
    if (!out) {
        usage("tilec report needs --roofline OUT.svg");
        return EXIT_USAGE;
    }
    if (!in) {
        usage("no POINTS file (LABEL,FLOPS,BYTES,MS per line; - for stdin)");
        return EXIT_USAGE;
    }
    const Gpu *g = NULL;
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
        if (!strcmp(gpus[i].id, gpu))
            g = &gpus[i];
    if (!g) {
        char m[160];
        snprintf(m, sizeof m, "unknown GPU '%s' (h100 or h200)", gpu);
        usage(m);
        return EXIT_USAGE;
    }
    Point *pts;
    int n;
    if (!read_points(in, &pts, &n))
        return EXIT_ERROR;
    char t[256];
    snprintf(t, sizeof t, "%s", title ? title : "");
    if (!title)
        snprintf(t, sizeof t, "roofline: %s (%.0f GB/s; dense peaks from the data sheet)", g->name, g->gbps);
    bool ok = write_svg(out, g, t, pts, n);
    printf("%-40s %10s %10s %10s %8s\n", "kernel", "FLOP/byte", "TFLOP/s", "GB/s", "of roof");
    for (int i = 0; i < n; i++) {
        double ai = pts[i].flops / pts[i].bytes, fs = pts[i].flops / (pts[i].ms * 1e-3);
        /* the roof of the peak it is compared with: the tensor FP16 one (the solid line) */
        double roof = fmin(g->gbps * 1e9 * ai, g->peaks[2].tflops * 1e12);
        printf("%-40s %10.3g %10.2f %10.0f %7.1f%%\n", pts[i].label, ai, fs * 1e-12,
               pts[i].bytes / (pts[i].ms * 1e-3) * 1e-9, 100 * fs / roof);
    }
    free(pts);
    return ok ? 0 : EXIT_ERROR;
}
