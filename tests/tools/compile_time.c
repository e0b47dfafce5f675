/* compile_time: the wall time of `tilec FILE --emit=ptx -o /dev/null` for every variant
 * of every kernel of the given files, each the median of RUNS runs (whole processes, as a
 * user sees them: loading, LLVM initialisation and all).
 *
 *   compile_time TILEC LIMIT_MS RUNS [-D NAME=V,...]... FILE.tile...
 *
 * Prints one line per variant ("FILE KERNEL [VARIANT]: median M ms (min m)") and the
 * slowest; exits 1 when a median exceeds LIMIT_MS or a compile fails.  The variants come
 * from the compiler library (tile_variants_get with every tune value); each is compiled
 * alone by fixing all its constants with -D. */
#include "tile/tile.h"

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs argv once; its wall time in ms, or -1 when it fails. */
static double run_once(char **argv) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1 /* O_WRONLY */, 0);
    pid_t pid;
    double t0 = now_ms();
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) < 0)
        return -1;
    double t = now_ms() - t0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: compile_time TILEC LIMIT_MS RUNS [-D NAME=V,...]... FILE.tile...\n");
        return 2;
    }
    const char *tilec = argv[1];
    double limit = atof(argv[2]);
    int runs = atoi(argv[3]);
    if (runs < 1 || runs > 1000 || limit <= 0) {
        fprintf(stderr, "compile_time: bad LIMIT_MS or RUNS\n");
        return 2;
    }
    tile_ctx *ctx = tile_ctx_new();
    int first_file = 4;
    for (; first_file + 1 < argc && !strcmp(argv[first_file], "-D"); first_file += 2)
        if (tile_ctx_define(ctx, argv[first_file + 1]) != TILE_OK) {
            fprintf(stderr, "compile_time: bad define '%s'\n", argv[first_file + 1]);
            return 2;
        }
    double worst = 0;
    char worst_name[512] = "";
    int failures = 0, nvariants = 0;
    double *times = calloc((size_t)runs, sizeof *times);
    for (int fi = first_file; fi < argc; fi++) {
        const char *file = argv[fi];
        tile_program *p;
        if (tile_program_load_file(ctx, file, &p) != TILE_OK) {
            fprintf(stderr, "compile_time: %s: %s\n", file, tile_ctx_last_error(ctx));
            failures++;
            continue;
        }
        for (int k = 0; k < tile_program_kernel_count(p); k++) {
            tile_variants *vs;
            if (tile_variants_get(p, k, true, &vs) != TILE_OK) {
                fprintf(stderr, "compile_time: %s: kernel %s: %s\n", file, tile_kernel_name(p, k),
                        tile_ctx_last_error(ctx));
                failures++;
                continue;
            }
            for (int v = 0; v < tile_variants_count(vs); v++) {
                /* tilec FILE --emit=ptx -o /dev/null --kernel K (-D NAME=V)... */
                int nc = tile_variant_const_count(vs, v);
                char **args = calloc((size_t)(10 + 2 * nc), sizeof *args);
                char (*defs)[96] = calloc((size_t)(nc ? nc : 1), sizeof *defs);
                char text[400] = "";
                int na = 0;
                args[na++] = (char *)tilec;
                args[na++] = (char *)file;
                args[na++] = "--emit=ptx";
                args[na++] = "-o";
                args[na++] = "/dev/null";
                args[na++] = "--kernel";
                args[na++] = (char *)tile_kernel_name(p, k);
                for (int j = 0; j < nc; j++) {
                    const char *name;
                    double value;
                    bool is_float;
                    tile_variant_const(vs, v, j, &name, &value, &is_float);
                    if (is_float)
                        snprintf(defs[j], sizeof defs[j], "%s=%.17g", name, value);
                    else
                        snprintf(defs[j], sizeof defs[j], "%s=%.0f", name, value);
                    args[na++] = "-D";
                    args[na++] = defs[j];
                    size_t tl = strlen(text);
                    snprintf(text + tl, sizeof text - tl, "%s%s", j ? ", " : "", defs[j]);
                }
                bool ok = true;
                for (int r = 0; r < runs && ok; r++)
                    ok = (times[r] = run_once(args)) >= 0;
                char name[512];
                snprintf(name, sizeof name, "%s %s [%s]", file, tile_kernel_name(p, k), text);
                if (!ok) {
                    printf("%s: tilec failed\n", name);
                    failures++;
                } else {
                    qsort(times, (size_t)runs, sizeof *times, cmp_double);
                    double med = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2;
                    printf("%s: median %.1f ms (min %.1f)%s\n", name, med, times[0],
                           med > limit ? "  OVER THE LIMIT" : "");
                    if (med > limit)
                        failures++;
                    if (med > worst) {
                        worst = med;
                        snprintf(worst_name, sizeof worst_name, "%s", name);
                    }
                }
                nvariants++;
                free(args);
                free(defs);
            }
            tile_variants_free(vs);
        }
        tile_program_free(p);
    }
    printf("%d variants; slowest: %s: median %.1f ms; limit %.0f ms\n", nvariants, worst_name, worst, limit);
    free(times);
    tile_ctx_free(ctx);
    return failures ? 1 : 0;
}
