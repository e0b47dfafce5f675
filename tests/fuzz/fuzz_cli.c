/* libFuzzer target for tilec's command line (tools/cli_args.c): the input's bytes up to
 * the first NUL are the command line, split into words at spaces and newlines; the
 * bytes after it are the file that every `@PATH` argument reads (PATH's `.npy` ending and
 * `:SHAPE` are kept).  Both commands' options are parsed as tilec parses them; then, as
 * tilec does, -D goes to a context, --assume-* lists to the context, and each run
 * argument becomes a scalar or a buffer of the parameter its name names (the table below:
 * `f32` is a scalar f32, `pf32` a *f32).  Any crash, sanitizer report, leak or hang is a
 * bug.  Properties checked: a refused command line has a message; a buffer is whole
 * elements and holds its shape; a buffer saved as .npy reads back the same bytes and
 * shape.  Build with -DTILEC_FUZZ=ON (README: "Fuzzing"); without it, fuzz.cli.corpus
 * replays the seeds (replay.c). */
#include "cli_args.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static FILE *devnull;

/* the scratch folder goes at exit (CTest replays the seeds on every test run) */
static void cleanup(void) {
    static const char *const names[] = {"in", "in.npy", "out.npy"};
    char path[96];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

static void setup(void) {
    if (dir[0])
        return;
    snprintf(dir, sizeof dir, "/tmp/fuzz_cli.XXXXXX");
    if (!mkdtemp(dir))
        abort();
    atexit(cleanup);
    devnull = fopen("/dev/null", "w");
    cli_quiet = true;
    cli_max_buffer_bytes = 1 << 20; /* generated buffers stay small */
}

static void write_bytes(const char *path, const uint8_t *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f))
        abort();
}

/* @X -> @DIR/in[.npy][:SUFFIX]: the input's file, named as X is. */
static char *rewrite_path(const char *v) {
    const char *colon = strrchr(v, ':');
    size_t stem = colon ? (size_t)(colon - v) : strlen(v);
    bool npy = stem >= 4 && !memcmp(v + stem - 4, ".npy", 4);
    size_t n = strlen(dir) + strlen(v) + 16;
    char *out = malloc(n);
    snprintf(out, n, "@%s/in%s%s", dir, npy ? ".npy" : "", colon ? colon : "");
    return out;
}

static void check(bool ok) {
    if (!ok)
        __builtin_trap();
}

static void run_arg(const char *text) {
    const char *eq = strchr(text, '=');
    if (!eq)
        return;
    size_t nlen = (size_t)(eq - text);
    bool ptr = nlen > 0 && text[0] == 'p';
    tile_param_info pi = {.name = "x", .is_pointer = ptr};
    int t = 0;
    while (t < TILE_NSCALARS && (strlen(tile_scalar_name((tile_scalar)t)) != nlen - ptr ||
                                 strncmp(tile_scalar_name((tile_scalar)t), text + ptr, nlen - ptr)))
        t++;
    if (t == TILE_NSCALARS)
        return;
    pi.type = (tile_scalar)t;
    const char *v = eq + 1;
    tile_arg a;
    if (!ptr) {
        if (!cli_is_buffer_spec(v))
            cli_make_scalar(&pi, v, &a);
        return;
    }
    if (!cli_is_buffer_spec(v))
        return;
    char *spec = v[0] == '@' ? rewrite_path(v) : NULL;
    CliShape shape;
    bool ok = cli_make_buffer(&pi, spec ? spec : v, &a, &shape);
    free(spec);
    if (!ok)
        return;
    size_t esize = tile_scalar_size(pi.type);
    check(a.buf.bytes % esize == 0);
    uint64_t count;
    if (shape.ndim)
        check(npy_count(shape.dims, shape.ndim, &count) && count * esize == a.buf.bytes);
    /* the .npy writer and the reader agree */
    char path[96], back[100];
    snprintf(path, sizeof path, "%s/out.npy", dir);
    snprintf(back, sizeof back, "@%s", path);
    if (cli_save_buffer(path, &a, pi.type, &shape)) {
        tile_arg b;
        CliShape bs;
        check(cli_make_buffer(&pi, back, &b, &bs));
        check(b.buf.bytes == a.buf.bytes && !memcmp(b.buf.ptr, a.buf.ptr, a.buf.bytes));
        check(bs.ndim == (shape.ndim ? shape.ndim : 1));
        check(!shape.ndim ? bs.dims[0] == a.buf.bytes / esize
                          : !memcmp(bs.dims, shape.dims, (size_t)shape.ndim * sizeof *bs.dims));
        free(b.buf.ptr);
    }
    free(a.buf.ptr);
}

static void defines(tile_ctx *ctx, const CliCommon *c) {
    for (int i = 0; i < c->ndefines; i++)
        tile_ctx_define(ctx, c->defines[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    setup();
    const uint8_t *nul = memchr(data, 0, size);
    size_t clen = nul ? (size_t)(nul - data) : size;
    char in[96];
    snprintf(in, sizeof in, "%s/in", dir);
    const uint8_t *file = nul ? nul + 1 : data + size;
    size_t flen = nul ? size - clen - 1 : 0;
    write_bytes(in, file, flen);
    snprintf(in, sizeof in, "%s/in.npy", dir);
    write_bytes(in, file, flen);

    char *text = malloc(clen + 1);
    memcpy(text, data, clen);
    text[clen] = 0;
    char **argv = malloc((clen / 2 + 3) * sizeof *argv);
    int argc = 0;
    argv[argc++] = "tilec";
    for (char *w = strtok(text, " \n"); w; w = strtok(NULL, " \n"))
        argv[argc++] = w;
    argv[argc] = NULL;

    char err[512];
    err[0] = 0;
    tile_ctx *ctx = tile_ctx_new();
    tile_ctx_set_diag(ctx, NULL, NULL);
    if (argc >= 2 && !strcmp(argv[1], "run")) {
        CliRun o;
        if (cli_parse_run(argc, argv, &o, err, sizeof err)) {
            defines(ctx, &o.c);
            for (int i = 0; i < o.nargs; i++)
                run_arg(o.args[i]);
        } else {
            check(err[0] != 0);
        }
        cli_run_free(&o);
    } else {
        CliCompile o;
        if (cli_parse_compile(argc, argv, &o, err, sizeof err)) {
            defines(ctx, &o.c);
            if (o.print_after)
                tile_ctx_set_print_after(ctx, o.print_after, devnull);
            for (int i = 0; i < o.ndiv16; i++)
                cli_assume_list(ctx, o.div16[i], TILE_ASSUME_DIV16, "--assume-div16", err, sizeof err);
            for (int i = 0; i < o.none; i++)
                cli_assume_list(ctx, o.one[i], TILE_ASSUME_ONE, "--assume-one", err, sizeof err);
        } else {
            check(err[0] != 0);
        }
        cli_compile_free(&o);
    }
    tile_ctx_free(ctx);
    free(argv);
    free(text);
    return 0;
}
