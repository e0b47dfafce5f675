/* tilec's command line: the options of both commands, and the values: integers, grids,
 * `tilec run`'s arguments (scalars, buffers from files or generators) and saved buffers.
 * Kept out of tilec.c so that a fuzz target (tests/fuzz/fuzz_cli.c) calls them as tilec
 * does.  Nothing here exits: a bad command line is a message in `err` (tilec prints it
 * with the usage and exits 2); a bad value is printed (cli_error); both return false. */
#ifndef TILEC_CLI_ARGS_H
#define TILEC_CLI_ARGS_H

#include "npy.h"
#include "tile/tile.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* cli_error writes "tilec: error: MESSAGE\n" on stderr, or nothing when cli_quiet. */
extern bool cli_quiet;
/* --diagnostics=json: cli_error writes a JSON object (as tile_ctx_set_diag_json's). */
extern bool cli_json;
void cli_verror(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "tilec: MESSAGE" on stderr (a JSON warning with --diagnostics=json). */
void cli_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The largest buffer `tilec run` creates (2^36 bytes; the fuzz target lowers it). */
extern uint64_t cli_max_buffer_bytes;

/* An integer as C writes it (decimal, 0x, 0 octal), '_' between digits allowed. */
bool cli_parse_i64(const char *s, int64_t *out);
/* The same for 0 .. 2^64-1 (no sign). */
bool cli_parse_u64(const char *s, uint64_t *out);
/* --grid=X[,Y[,Z]]: positive 32-bit integers; unset axes stay as they are. */
bool cli_parse_grid(const char *s, int64_t grid[3]);
/* @PATH, zeros:, rand:, randn: */
bool cli_is_buffer_spec(const char *v);

/* The shape of a buffer argument: from its .npy header or the command line's
 * @PATH:SHAPE; ndim 0 when only the element count is known. */
typedef struct CliShape {
    int ndim;
    uint64_t dims[NPY_MAX_DIMS];
} CliShape;

/* The argument of pointer parameter `pi` from its spec: a file (raw or .npy), or
 * generated; *shape gets its shape where one is known. */
bool cli_make_buffer(const tile_param_info *pi, const char *v, tile_arg *out, CliShape *shape);
/* The argument of scalar parameter `pi`: range-checked integers, floats, true/false. */
bool cli_make_scalar(const tile_param_info *pi, const char *v, tile_arg *out);
/* --save: the buffer's bytes to PATH; a .npy file (with its shape, else one dimension)
 * when PATH ends in .npy. */
bool cli_save_buffer(const char *path, const tile_arg *a, tile_scalar t, const CliShape *shape);

/* ---- the options ---------------------------------------------------------------- */
/* Options shared by both commands; the arrays point into argv. */
typedef struct CliCommon {
    const char *file;
    const char *kernel;
    bool verbose, debug;
    bool diag_json; /* --diagnostics=json: one JSON object per line for each message */
    int opt_level;
    const char **defines;
    int ndefines;
} CliCommon;

/* tilec FILE.tile ... */
typedef struct CliCompile {
    CliCommon c;
    const char *out_path, *emit, *arch, *print_after;
    int emit_kind;                     /* tile_emit_kind */
    const char **div16, **div8, **one; /* --assume-div16=, --assume-div8=, --assume-one= lists */
    int ndiv16, ndiv8, none;
    bool report, report_json, all_div16;
} CliCompile;

/* tilec run FILE.tile ... */
typedef struct CliRun {
    CliCommon c;
    const char *device; /* NULL, "cuda" or "interp" */
    int64_t grid[3];    /* 0: from the grid clause */
    bool bench;
    int bench_reps;
    const char **args, **saves; /* "name=VALUE", "NAME=PATH" */
    int nargs, nsaves;
} CliRun;

/* Parse argv (argv[0] the program; for run, argv[1] is "run").  False with the message
 * in err; the arrays are allocated either way (cli_*_free). */
bool cli_parse_compile(int argc, char **argv, CliCompile *o, char *err, size_t errn);
bool cli_parse_run(int argc, char **argv, CliRun *o, char *err, size_t errn);
void cli_compile_free(CliCompile *o);
void cli_run_free(CliRun *o);

/* --assume-div16=a,b / --assume-one=n: each name of `list` gets `facts` in ctx; false
 * with the message in err. */
bool cli_assume_list(tile_ctx *ctx, const char *list, unsigned facts, const char *opt, char *err, size_t errn);

#endif
