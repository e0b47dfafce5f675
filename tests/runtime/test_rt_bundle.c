/* The bundle reader against docs/bundle.md: a bundle written by hand with a tiny writer
 * (this file), every truncation and a flipped byte of it, a wrong magic or version, bad
 * bytecode; then the compiler's own metadata bundles of the examples, whose clause
 * bytecode must evaluate to what the language says. */
#include "rt_internal.h"
#include "cubin_regs.h"
#include "rt_test.h"

#include <stdint.h>

typedef struct W {
    uint8_t b[1 << 16];
    size_t n;
} W;

static void le(W *w, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++)
        w->b[w->n++] = (uint8_t)(v >> (8 * i));
}
static void str(W *w, const char *s) {
    le(w, strlen(s), 4);
    memcpy(w->b + w->n, s, strlen(s));
    w->n += strlen(s);
}
static void f64(W *w, double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    le(w, u, 8);
}
static void expr(W *w, const uint8_t *code, size_t n) {
    le(w, n, 4);
    memcpy(w->b + w->n, code, n);
    w->n += n;
}

/* The opcodes used here (docs/bundle.md). */
enum { PUSH_I = 0x01, ARG = 0x03, CONST = 0x04, CDIV = 0x16, GE = 0x25 };

/* The code kind of variant 1's object (2: PTX; 3 and others: what the reader makes of them). */
static int v1_kind = 2;

/* payload: one kernel `k(x: *f32, n: i32)`, grid(cdiv(n, BLOCK)), where BLOCK >= n,
 * consts BLOCK, warps, stages; variants BLOCK=256 and 1024, each with a PTX object. */
static void payload(W *w, const uint8_t *grid, size_t ngrid) {
    str(w, "test writer");
    le(w, 1, 4);
    str(w, "k");
    le(w, 0x1234, 8);
    le(w, 2, 4);
    str(w, "x"), le(w, 1, 1), le(w, TILE_F32, 1), le(w, 0, 1), le(w, 0, 1);
    str(w, "n"), le(w, 0, 1), le(w, TILE_I32, 1), le(w, 0, 1), le(w, 0, 1);
    le(w, 1, 4);
    expr(w, grid, ngrid);
    le(w, 1, 4);
    str(w, "BLOCK >= n");
    str(w, "k.tile:2:11");
    const uint8_t where[] = {CONST, 0, 0, ARG, 1, 0, GE};
    expr(w, where, sizeof where);
    le(w, 1, 4);
    le(w, 1, 2);
    le(w, 3, 4);
    str(w, "BLOCK"), str(w, "warps"), str(w, "stages");
    le(w, 2, 4);
    for (int v = 0; v < 2; v++) {
        f64(w, v ? 1024 : 256), f64(w, 4), f64(w, 2);
        le(w, 0, 1), le(w, 0, 1), le(w, 0, 1);
        le(w, 4, 4), le(w, 2, 4), le(w, 0, 4);
        le(w, v ? 1 : 0, 8); /* variant 1 assumes x is 16-byte aligned */
        le(w, 0, 8);
        le(w, 100, 8), le(w, 4096, 8);
        le(w, 1, 4);
        str(w, "sm_90a"), le(w, v ? (uint64_t)v1_kind : 2, 1), str(w, "k");
        le(w, 4, 8);
        memcpy(w->b + w->n, "ptx!", 4);
        w->n += 4;
    }
}

static void bundle(W *out, const W *body, uint32_t version) {
    out->n = 0;
    memcpy(out->b, "TILEBNDL", 8);
    out->n = 8;
    le(out, version, 4);
    le(out, 0, 4);
    le(out, body->n, 8);
    le(out, rt_fnv1a(RT_FNV_BASIS, body->b, body->n), 8);
    memcpy(out->b + out->n, body->b, body->n);
    out->n += body->n;
}

static tile_rt_status parse(const W *w, size_t len, char *err, RtBundle **b) {
    return rt_bundle_parse("x.tbundle", w->b, len, b, err, 600);
}

static W body, file, cut;
static const uint8_t good_grid[] = {ARG, 1, 0, CONST, 0, 0, CDIV};

static void hand_written(void) {
    char err[600];
    RtBundle *b;
    payload(&body, good_grid, sizeof good_grid);
    bundle(&file, &body, 1);
    CHECK(parse(&file, file.n, err, &b) == TILE_RT_OK);
    if (rt_test_failures) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    RtKernelMeta *k = &b->kernels[0];
    CHECK(b->nkernels == 1 && !strcmp(k->name, "k") && k->nparams == 2 && k->nvariants == 2);
    CHECK(k->params[0].is_pointer && k->params[0].scalar == TILE_F32);
    CHECK(k->nkey == 1 && k->key[0] == 1 && k->ncnames == 3);
    CHECK(!strcmp(k->variants[1].text, "BLOCK=1024, warps=4, stages=2"));
    CHECK(k->variants[1].div16 == 1 && k->variants[1].code[0].kind == RT_CODE_PTX);
    CHECK(k->variants[1].code[0].len == 4 && !memcmp(k->variants[1].code[0].bytes, "ptx!", 4));
    RtValue args[2] = {{0}, {.i = 5000}}, r;
    CHECK(rt_expr_eval(&k->grid[0], k, &k->variants[0], args, &r, err, 100) && r.i == 20);
    CHECK(rt_expr_eval(&k->grid[0], k, &k->variants[1], args, &r, err, 100) && r.i == 5);
    CHECK(rt_expr_eval(&k->where[0].pred, k, &k->variants[1], args, &r, err, 100) && r.i == 0);
    args[1].i = 1000;
    CHECK(rt_expr_eval(&k->where[0].pred, k, &k->variants[1], args, &r, err, 100) && r.i == 1);
    CHECK(rt_expr_eval(&k->where[0].pred, k, &k->variants[0], args, &r, err, 100) && r.i == 0);
    rt_bundle_free(b);

    /* Every truncation of the file fails cleanly, naming the header or the payload. */
    for (size_t n = 0; n < file.n; n++) {
        tile_rt_status s = parse(&file, n, err, &b);
        CHECK(s == TILE_RT_ERR_BUNDLE && strstr(err, "bundle 'x.tbundle': truncated at byte"));
        if (s == TILE_RT_OK)
            rt_bundle_free(b);
    }
    /* Every truncation of the payload, with a header that matches it (a writer bug, not
     * damage): the reader names the section it was in. */
    int kernel_table = 0, variant = 0;
    for (size_t n = 0; n < body.n; n++) {
        W part = body;
        part.n = n;
        bundle(&cut, &part, 1);
        tile_rt_status s = parse(&cut, cut.n, err, &b);
        CHECK(s == TILE_RT_ERR_BUNDLE);
        if (s == TILE_RT_OK)
            rt_bundle_free(b);
        kernel_table += strstr(err, "truncated at byte") && strstr(err, "(kernel table") != NULL;
        variant += strstr(err, "(variant 1 of 'k'") != NULL;
    }
    CHECK(kernel_table > 0 && variant > 0);
    /* A flipped byte anywhere in the payload: the checksum. */
    for (size_t i = 32; i < file.n; i += 7) {
        cut = file;
        cut.b[i] ^= 0x40;
        CHECK(parse(&cut, cut.n, err, &b) == TILE_RT_ERR_BUNDLE && strstr(err, "checksum mismatch"));
    }
    cut = file;
    cut.b[0] = 'X';
    CHECK(parse(&cut, cut.n, err, &b) == TILE_RT_ERR_BUNDLE && strstr(err, "bad magic"));
    bundle(&cut, &body, 4);
    CHECK(parse(&cut, cut.n, err, &b) == TILE_RT_ERR_BUNDLE && strstr(err, "version 4, this runtime reads 1 to 3"));
    bundle(&cut, &body, 0);
    CHECK(parse(&cut, cut.n, err, &b) == TILE_RT_ERR_BUNDLE && strstr(err, "version 0, this runtime reads 1 to 3"));
    cut = file;
    cut.b[cut.n++] = 0;
    CHECK(parse(&cut, cut.n, err, &b) == TILE_RT_ERR_BUNDLE && strstr(err, "trailing"));
    /* Bad bytecode behind a valid checksum: unknown opcode, an ARG naming the pointer,
     * a stack left with two values. */
    const uint8_t bad_op[] = {ARG, 1, 0, 0x7f};
    const uint8_t bad_arg[] = {ARG, 0, 0};
    const uint8_t two[] = {ARG, 1, 0, PUSH_I, 1, 0, 0, 0, 0, 0, 0, 0};
    const struct {
        const uint8_t *code;
        size_t n;
        const char *want;
    } bad[] = {
        {bad_op, sizeof bad_op, "unknown opcode 0x7f"},
        {bad_arg, sizeof bad_arg, "ARG 0 is not a runtime scalar"},
        {two, sizeof two, "leaves 2 values"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        W p = {0};
        payload(&p, bad[i].code, bad[i].n);
        bundle(&cut, &p, 1);
        CHECK_ERR(parse(&cut, cut.n, err, &b), TILE_RT_ERR_BUNDLE, err, bad[i].want);
        CHECK(strstr(err, "bad grid expression") != NULL);
    }
    /* Division by zero is found at evaluation, not a crash. */
    body.n = 0;
    payload(&body, good_grid, sizeof good_grid);
    bundle(&file, &body, 1);
    if (parse(&file, file.n, err, &b) != TILE_RT_OK) {
        CHECK(!"the bundle parses");
        return;
    }
    RtValue zero[2] = {{0}, {.i = 10}};
    RtVariant v0 = b->kernels[0].variants[0];
    double zc[3] = {0, 4, 2};
    v0.cvals = zc;
    CHECK(!rt_expr_eval(&b->kernels[0].grid[0], &b->kernels[0], &v0, zero, &r, err, 100) &&
          strstr(err, "division by zero"));
    rt_bundle_free(b);
    /* code kind 3 (an uncapped cubin) is read from version 2 on; kind 4 is not */
    v1_kind = 3;
    body.n = 0;
    payload(&body, good_grid, sizeof good_grid);
    bundle(&file, &body, 1);
    CHECK_ERR(parse(&file, file.n, err, &b), TILE_RT_ERR_BUNDLE, err,
              "code kind 3 is neither cubin (1), PTX (2) nor (from version 2 on) uncapped cubin (3)");
    bundle(&file, &body, 2);
    CHECK(parse(&file, file.n, err, &b) == TILE_RT_OK);
    if (b) {
        CHECK(b->kernels[0].variants[1].code[0].kind == RT_CODE_CUBIN_UNCAPPED);
        rt_bundle_free(b);
    }
    v1_kind = 4;
    body.n = 0;
    payload(&body, good_grid, sizeof good_grid);
    bundle(&file, &body, 2);
    CHECK_ERR(parse(&file, file.n, err, &b), TILE_RT_ERR_BUNDLE, err,
              "code kind 4 is neither cubin (1), PTX (2) nor uncapped cubin (3)");
    v1_kind = 2; /* the good bundle again, for what follows */
    body.n = 0;
    payload(&body, good_grid, sizeof good_grid);
    bundle(&file, &body, 1);
}

/* Through the public API: a damaged file is TILE_RT_ERR_BUNDLE naming the file. */
static void public_api(void) {
    tile_rt *rt;
    CHECK(tile_rt_open(TILE_RT_INTERP, NULL, &rt) == TILE_RT_OK);
    const char *path = "rt_bundle_test.tbundle";
    cut = file;
    cut.b[40] ^= 1;
    FILE *f = fopen(path, "wb");
    fwrite(cut.b, 1, cut.n, f);
    fclose(f);
    tile_rt_module *m = NULL;
    CHECK_ERR(tile_rt_load_bundle_file(rt, path, &m), TILE_RT_ERR_BUNDLE, tile_rt_last_error(rt),
              "bundle 'rt_bundle_test.tbundle': checksum mismatch");
    CHECK(m == NULL);
    remove(path);
    CHECK_ERR(tile_rt_load_bundle_file(rt, "/nonexistent.tbundle", &m), TILE_RT_ERR_IO, tile_rt_last_error(rt),
              "/nonexistent.tbundle");
    CHECK_ERR(tile_rt_load_bundle(rt, file.b, 10, &m), TILE_RT_ERR_BUNDLE, tile_rt_last_error(rt),
              "truncated at byte 10 (header)");
    /* a good bundle validates, then the interpreter says it cannot run GPU code */
    CHECK_ERR(tile_rt_load_bundle(rt, file.b, file.n, &m), TILE_RT_ERR_UNSUPPORTED, tile_rt_last_error(rt),
              "interpreter device runs .tile sources only");
    tile_rt_close(rt);
}

/* The compiler's metadata bundles parse, and their clauses mean what the source says. */
static void compiler_meta(void) {
    tile_ctx *c = tile_ctx_new();
    tile_program *p;
    CHECK(tile_program_load_file(c, TILEC_EXAMPLES_DIR "/softmax.tile", &p) == TILE_OK);
    char *data;
    size_t len;
    char err[600];
    RtBundle *b;
    CHECK(tile_emit_bundle_meta(p, 0, &data, &len) == TILE_OK);
    CHECK(rt_bundle_parse("softmax", data, len, &b, err, sizeof err) == TILE_RT_OK);
    free(data);
    if (rt_test_failures) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    RtKernelMeta *k = &b->kernels[0];
    tile_variants *vs;
    CHECK(tile_variants_get(p, 0, true, &vs) == TILE_OK);
    CHECK((int)k->nvariants == tile_variants_count(vs));
    tile_variants_free(vs);
    CHECK(!strcmp(k->name, "softmax") && k->nparams == 4 && k->ngrid == 1 && k->nwhere == 1);
    CHECK(!strcmp(k->where[0].text, "BLOCK >= cols") && strstr(k->where[0].loc, "softmax.tile:"));
    CHECK(k->nkey == 2 && k->key[0] == 2 && k->key[1] == 3);
    RtValue args[4] = {{0}, {0}, {.i = 7}, {.i = 1000}};
    int admissible = 0;
    for (uint32_t v = 0; v < k->nvariants; v++) {
        RtValue r;
        CHECK(rt_expr_eval(&k->grid[0], k, &k->variants[v], args, &r, err, 100) && r.i == 7);
        CHECK(rt_expr_eval(&k->where[0].pred, k, &k->variants[v], args, &r, err, 100));
        admissible += r.i != 0;
        int bi = -1;
        for (uint32_t j = 0; j < k->ncnames; j++)
            if (!strcmp(k->cnames[j], "BLOCK"))
                bi = (int)j;
        CHECK(bi >= 0 && (r.i != 0) == (k->variants[v].cvals[bi] >= 1000));
        CHECK(k->variants[v].ncode == 0);
    }
    CHECK(admissible > 0 && admissible < (int)k->nvariants);
    rt_bundle_free(b);
    tile_program_free(p);

    CHECK(tile_program_load_file(c, TILEC_EXAMPLES_DIR "/vector_add.tile", &p) == TILE_OK);
    CHECK(tile_emit_bundle_meta(p, 0, &data, &len) == TILE_OK);
    CHECK(rt_bundle_parse("vector_add", data, len, &b, err, sizeof err) == TILE_RT_OK);
    free(data);
    k = &b->kernels[0];
    RtValue va[4] = {{0}, {0}, {0}, {.i = 5000}};
    for (uint32_t v = 0; v < k->nvariants; v++) {
        RtValue r;
        double block = k->variants[v].cvals[0];
        CHECK(!strcmp(k->cnames[0], "BLOCK"));
        CHECK(rt_expr_eval(&k->grid[0], k, &k->variants[v], va, &r, err, 100) &&
              r.i == (5000 + (int64_t)block - 1) / (int64_t)block);
    }
    rt_bundle_free(b);
    tile_program_free(p);
    tile_ctx_free(c);
}

/* A compiled bundle (cubins through ptxas): a variant whose registers the budget capped
 * carries the capped cubin (kind 1) and the uncapped one (kind 3), both ELF, the capped one
 * with fewer registers, at most the budget of the next occupancy step (the counts read from
 * the cubins, not assumed).  layernorm BLOCK=4096 with 4 warps takes 76 registers uncapped
 * (LLVM 19 and 22 alike, now that both give the PTX its launch bounds), room for 6
 * programs an SM, and ptxas fits it in 64 without spilling, so it has a kind 3;
 * vector_add BLOCK=1024 (26 registers) already fits the most programs an SM takes (16 of
 * 128 threads: 32 registers or fewer), so no cap can help: no kind 3. */
static void compiled_bundle(void) {
    if (!tile_emit_supported(TILE_EMIT_BUNDLE)) {
        printf("compiled_bundle: no GPU backend in this build (skipped)\n");
        return;
    }
    const char *files[2] = {TILEC_EXAMPLES_DIR "/layernorm.tile", TILEC_EXAMPLES_DIR "/vector_add.tile"};
    const char *defs[2] = {"BLOCK=4096", "BLOCK=1024"};
    for (int f = 0; f < 2; f++) {
        tile_ctx *c = tile_ctx_new();
        CHECK(tile_ctx_define(c, defs[f]) == TILE_OK && tile_ctx_define(c, "warps=4") == TILE_OK);
        tile_program *p;
        CHECK(tile_program_load_file(c, files[f], &p) == TILE_OK);
        char *data = NULL;
        size_t len = 0;
        tile_status ts = tile_emit(p, 0, TILE_EMIT_BUNDLE, true, &data, &len);
        if (ts != TILE_OK)
            fprintf(stderr, "%s\n", tile_ctx_last_error(c));
        CHECK(ts == TILE_OK);
        char err[600];
        RtBundle *b = NULL;
        CHECK(rt_bundle_parse("compiled", data, len, &b, err, sizeof err) == TILE_RT_OK);
        int capped = 0, uncapped = 0;
        for (uint32_t v = 0; b && v < b->kernels[0].nvariants; v++) {
            int regs[4] = {-1, -1, -1, -1}; /* by code kind, per arch the same */
            for (uint32_t i = 0; i < b->kernels[0].variants[v].ncode; i++) {
                const RtCode *code = &b->kernels[0].variants[v].code[i];
                if (code->kind == RT_CODE_PTX)
                    continue;
                CHECK(code->len > 4 && !memcmp(code->bytes,
                                               "\x7f"
                                               "ELF",
                                               4));
                capped += code->kind == RT_CODE_CUBIN;
                uncapped += code->kind == RT_CODE_CUBIN_UNCAPPED;
                regs[code->kind] = cubin_regs(code->bytes, code->len);
                CHECK(regs[code->kind] > 0);
            }
            /* 128 threads: 16 programs an SM at 32 registers or fewer, the most it runs */
            if (regs[RT_CODE_CUBIN] <= 32)
                CHECK(regs[RT_CODE_CUBIN_UNCAPPED] < 0);
            if (regs[RT_CODE_CUBIN_UNCAPPED] > 0) {
                int u = regs[RT_CODE_CUBIN_UNCAPPED], progs = 65536 / (((u + 7) / 8 * 8) * 128);
                int budget = 65536 / ((progs + 1) * 128) / 8 * 8;
                if (regs[RT_CODE_CUBIN] >= u || regs[RT_CODE_CUBIN] > budget)
                    fprintf(stderr, "variant %u: capped %d registers, uncapped %d (budget %d)\n", v,
                            regs[RT_CODE_CUBIN], u, budget);
                CHECK(regs[RT_CODE_CUBIN] < u && regs[RT_CODE_CUBIN] <= budget);
            }
        }
        CHECK(capped > 0);
        CHECK(f == 0 ? uncapped > 0 : uncapped == 0);
        rt_bundle_free(b);
        free(data);
        tile_program_free(p);
        tile_ctx_free(c);
    }
}

int main(void) {
    hand_written();
    public_api();
    compiler_meta();
    compiled_bundle();
    TEST_DONE();
}
