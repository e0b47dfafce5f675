/* tb_compile: the backend tests' driver.  Reads a .tir file (runs layout + fuse and the
 * backend passes) or a .tile file (front end, every variant of every kernel, the whole
 * pass pipeline, the backend passes), then the backend; prints the result:
 *   tb_compile [--arch=sm_XX] [--emit=tir|llvm|ptx|cubin] [--report] [-O0] [--debug]
 *              [--passes=LIST] [--div16] [--lowering=N] [-D NAME=V1,V2,...] FILE.tir|FILE.tile
 * --lowering=N: the backend's lowering N alone (TbOptions.lowering, only_lowering; without
 * it: 0, then the next ones where a cubin spills, as tb_emit does for every caller).
 * --div16 (.tile): every pointer and integer parameter divisible by 16, as the runtime
 * specializes a launch with aligned buffers and sizes.
 * --emit=tir prints the IR after the passes; cubin prints nothing but the report.
 * --passes=a,b,c (.tir only): run exactly these passes, by name, instead of the default.
 * --report prints "KERNEL: regs=N smem=N spill_stores=N spill_loads=N stack=N threads=N
 * flops=N bytes=N codegen=none|less uncapped_regs=N" per kernel variant (uncapped_regs: the
 * registers of the uncapped cubin where the budget capped them, else -1).  Exit status 1 on any error. */
#include "backend.h"
#include "frontend.h"
#include "passes.h"
#include "../common/read_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void diag(void *ud, const char *msg) {
    (void)ud;
    fprintf(stderr, "%s\n", msg);
}

typedef struct Opts {
    TbOptions tb;
    const char *emit, *passes;
    bool report, div16;
} Opts;

/* The passes after the target-independent pipeline, in pipeline order: exactly what tilec
 * and the runtime run (passes/pipeline.c).  Passes outside the pipeline, such as
 * `schedule`, run only when named with --passes. */
static const char *const backend_passes[] = {"layout", "fuse", "smem_alloc", "barriers"};

static int run_named(TirModule *m, TirPassContext *ctx, const char *name) {
    const TirPassInfo *p = tir_pass_find(name);
    if (!p) {
        fprintf(stderr, "error: no pass named '%s'\n", name);
        return 1;
    }
    return tir_run_pass(m, ctx, p);
}

static int run_backend_passes(TirModule *m, TirPassContext *ctx) {
    for (size_t i = 0; i < sizeof backend_passes / sizeof backend_passes[0]; i++)
        if (run_named(m, ctx, backend_passes[i]))
            return 1;
    return 0;
}

static int emit_module(TirModule *m, const Opts *o, const char *suffix) {
    if (strcmp(o->emit, "tir") == 0) {
        tir_print_module(stdout, m);
        return 0;
    }
    TbOutput kind = strcmp(o->emit, "llvm") == 0    ? TB_OUT_LLVM
                    : strcmp(o->emit, "cubin") == 0 ? TB_OUT_CUBIN
                                                    : TB_OUT_PTX;
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next) {
        if (f->kind != TIR_FUNC_KERNEL)
            continue;
        char *out = NULL;
        size_t olen = 0;
        TbReport rep;
        TbAltCubin alt = {0};
        if (tb_emit(m, f, &o->tb, kind, &out, &olen, &rep, &alt, diag, NULL)) {
            fprintf(stderr, "%s%s: failed\n", f->name, suffix);
            errors++;
            continue;
        }
        if (kind != TB_OUT_CUBIN)
            fwrite(out, 1, olen, stdout);
        if (o->report)
            printf("%s%s: regs=%d smem=%d spill_stores=%d spill_loads=%d stack=%d threads=%d flops=%lld "
                   "bytes=%lld codegen=%s uncapped_regs=%d\n",
                   f->name, suffix, rep.regs, rep.smem_bytes, rep.spill_stores, rep.spill_loads, rep.stack_bytes,
                   rep.threads, (long long)rep.flops, (long long)rep.global_bytes, rep.codegen_none ? "none" : "less",
                   alt.cubin ? alt.regs : -1);
        free(out);
        free(alt.cubin);
    }
    return errors;
}

static int compile_tir(const char *path, const char *text, size_t len, const Opts *o) {
    TirArena *a = tir_arena_new();
    TirModule *m = tir_parse_module(a, path, text, len, diag, NULL);
    if (!m)
        return 1;
    TirPassContext ctx = {.arch = o->tb.arch, .opt_level = 3, .verify_each = true, .diag = diag};
    int err = 0;
    if (o->passes) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", o->passes);
        for (char *s = strtok(buf, ","); s && !err; s = strtok(NULL, ","))
            err = run_named(m, &ctx, s);
    } else {
        err = run_backend_passes(m, &ctx);
    }
    if (!err)
        err = emit_module(m, o, "");
    tir_arena_free(a);
    return err ? 1 : 0;
}

/* "-D NAME=1,2,3": integer or float values (a '.', 'e' or "inf" makes a float). */
static bool parse_define(TirArena *a, const char *arg, TfDefine *d) {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return false;
    d->name = tir_strndup(a, arg, (size_t)(eq - arg));
    int n = 1;
    for (const char *p = eq + 1; *p; p++)
        n += *p == ',';
    d->ivals = tir_alloc(a, (size_t)n * sizeof *d->ivals);
    d->fvals = tir_alloc(a, (size_t)n * sizeof *d->fvals);
    d->is_float = tir_alloc(a, (size_t)n * sizeof *d->is_float);
    d->nvals = 0;
    for (const char *p = eq + 1; *p;) {
        char *end;
        size_t l = strcspn(p, ",");
        char tok[64];
        snprintf(tok, sizeof tok, "%.*s", (int)(l < 63 ? l : 63), p);
        bool fl = strpbrk(tok, ".eEn") != NULL;
        if (fl)
            d->fvals[d->nvals] = strtod(tok, &end);
        else
            d->ivals[d->nvals] = strtoll(tok, &end, 0);
        if (*end || !*tok)
            return false;
        d->is_float[d->nvals++] = fl;
        p += l;
        if (*p == ',')
            p++;
    }
    return d->nvals > 0;
}

static int compile_tile(const char *path, const char *text, size_t len, const Opts *o, const char **defargs,
                        int ndefargs) {
    TirArena *fa = tir_arena_new();
    TfDiag d;
    tf_diag_init(&d, path, text, len, diag, NULL);
    AstFile *file = tf_parse(fa, &d);
    if (!file || tf_check(fa, file, &d))
        return 1;
    TfDefine *defs = tir_alloc(fa, (size_t)(ndefargs + 1) * sizeof *defs);
    for (int i = 0; i < ndefargs; i++)
        if (!parse_define(fa, defargs[i], &defs[i])) {
            fprintf(stderr, "error: bad -D %s\n", defargs[i]);
            return 1;
        }
    int errors = 0, nvariants = 0;
    for (int k = 0; k < file->nkernels; k++) {
        /* only the defines this kernel has a constant for */
        TfDefine *mine = tir_alloc(fa, (size_t)(ndefargs + 1) * sizeof *mine);
        int nmine = 0;
        const AstKernel *K = &file->kernels[k];
        for (int i = 0; i < ndefargs; i++) {
            bool has = false;
            for (int j = 0; j < K->nparams; j++)
                has |= K->params[j].name && strcmp(K->params[j].name, defs[i].name) == 0;
            for (int j = 0; j < K->ntunes; j++)
                has |= strcmp(K->tunes[j].name, defs[i].name) == 0;
            if (has)
                mine[nmine++] = defs[i];
        }
        TfVariant *vs = NULL;
        int nv = tf_variants_for(fa, file, k, mine, nmine, false, tir_target_smem_optin(o->tb.arch), &vs, &d);
        if (nv <= 0) {
            errors++;
            continue;
        }
        for (int v = 0; v < nv; v++) {
            char suffix[256] = "";
            size_t sl = 0;
            for (int c = 0; c < vs[v].nconsts && sl < sizeof suffix - 1; c++) {
                const TirConstBinding *b = &vs[v].consts[c];
                int w = b->is_float
                            ? snprintf(suffix + sl, sizeof suffix - sl, "%s%s=%g", c ? "," : "[", b->name, b->fval)
                            : snprintf(suffix + sl, sizeof suffix - sl, "%s%s=%lld", c ? "," : "[", b->name,
                                       (long long)b->ival);
                if (w > 0)
                    sl += (size_t)w;
            }
            if (sl && sl < sizeof suffix - 1)
                snprintf(suffix + sl, sizeof suffix - sl, "]");
            TirArena *a = tir_arena_new();
            TirModule *m = tir_module_new(a);
            m->source_name = path;
            TirPassContext ctx = {.arch = o->tb.arch, .opt_level = 3, .verify_each = true, .diag = diag};
            int before = d.nerrors;
            bool ok = tf_elaborate(m, file, k, &vs[v], &d) && d.nerrors == before;
            /* --div16: what the runtime promises for 16-byte aligned pointers and sizes
             * divisible by 16 (the common launch), so the PTX is the one a real launch gets */
            for (TirFunc *f = ok && o->div16 ? m->first : NULL; f; f = f->next)
                for (int i = 0; f->kind == TIR_FUNC_KERNEL && f->params && i < f->body->nargs; i++)
                    if (!tir_type_is_tile(f->body->args[i]->ty) &&
                        (f->body->args[i]->ty.ptr || tir_scalar_is_int((TirScalar)f->body->args[i]->ty.elem)))
                        f->params[i].divisibility = 16;
            if (!ok || tir_verify_module(m, diag, NULL) || tir_run_pipeline(m, &ctx, NULL)) {
                fprintf(stderr, "%s%s: failed before the backend\n", K->name, suffix);
                errors++;
            } else {
                errors += emit_module(m, o, suffix);
            }
            nvariants++;
            tir_arena_free(a);
        }
    }
    if (o->report)
        printf("variants=%d\n", nvariants);
    tir_arena_free(fa);
    return errors ? 1 : 0;
}

int main(int argc, char **argv) {
    Opts o = {.tb = {.arch = "sm_90a", .opt_level = 3}, .emit = "ptx"};
    const char *path = NULL;
    const char **defargs = calloc((size_t)argc, sizeof *defargs);
    int ndef = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--arch=", 7) == 0)
            o.tb.arch = argv[i] + 7;
        else if (strncmp(argv[i], "--emit=", 7) == 0)
            o.emit = argv[i] + 7;
        else if (strncmp(argv[i], "--passes=", 9) == 0)
            o.passes = argv[i] + 9;
        else if (strcmp(argv[i], "--report") == 0)
            o.report = true;
        else if (strcmp(argv[i], "--div16") == 0)
            o.div16 = true;
        else if (strncmp(argv[i], "--lowering=", 11) == 0) {
            o.tb.lowering = atoi(argv[i] + 11);
            o.tb.only_lowering = true;
        } else if (strcmp(argv[i], "-O0") == 0)
            o.tb.opt_level = 0;
        else if (strcmp(argv[i], "--debug") == 0)
            o.tb.debug = true;
        else if (strcmp(argv[i], "-D") == 0 && i + 1 < argc)
            defargs[ndef++] = argv[++i];
        else if (strncmp(argv[i], "-D", 2) == 0)
            defargs[ndef++] = argv[i] + 2;
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: tb_compile [--arch=sm_XX] [--emit=tir|llvm|ptx|cubin] [--report] [--passes=a,b]"
                        " [-D NAME=V,...] FILE.tir|FILE.tile\n");
        return 2;
    }
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "%s: cannot read\n", path);
        return 1;
    }
    size_t pl = strlen(path);
    int rc = pl > 5 && strcmp(path + pl - 5, ".tile") == 0 ? compile_tile(path, text, len, &o, defargs, ndef)
                                                           : compile_tir(path, text, len, &o);
    free(text);
    free(defargs);
    return rc;
}
