/* tb_compile: the backend tests' driver.  Reads a .tir file, runs the layout passes
 * and the backend, prints the result:
 *   tb_compile [--arch=sm_XX] [--emit=tir|llvm|ptx|cubin] [--report] [-O0] FILE.tir
 * --emit=tir prints the IR after the layout passes; cubin prints nothing but the
 * report.  --report prints "KERNEL: regs=N smem=N spill_stores=N spill_loads=N
 * stack=N threads=N flops=N" per kernel.  Exit status 1 on any error. */
#include "backend.h"
#include "passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void diag(void *ud, const char *msg) {
    (void)ud;
    fprintf(stderr, "%s\n", msg);
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    if (s) s[n] = 0;
    *len = (size_t)n;
    return s;
}

int main(int argc, char **argv) {
    TbOptions opt = {.arch = "sm_90a", .opt_level = 3};
    const char *emit = "ptx", *path = NULL;
    bool report = false;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--arch=", 7) == 0) opt.arch = argv[i] + 7;
        else if (strncmp(argv[i], "--emit=", 7) == 0) emit = argv[i] + 7;
        else if (strcmp(argv[i], "--report") == 0) report = true;
        else if (strcmp(argv[i], "-O0") == 0) opt.opt_level = 0;
        else if (strcmp(argv[i], "--debug") == 0) opt.debug = true;
        else path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: tb_compile [--arch=sm_XX] [--emit=tir|llvm|ptx|cubin] [--report] FILE.tir\n");
        return 2;
    }
    size_t len;
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "%s: cannot read\n", path);
        return 1;
    }
    TirArena *a = tir_arena_new();
    TirModule *m = tir_parse_module(a, path, text, len, diag, NULL);
    if (!m) return 1;
    TirPassContext ctx = {.arch = opt.arch, .opt_level = 3, .verify_each = true, .diag = diag};
    const TirPassInfo layout = {"layout", pass_layout, ""}, fuse = {"fuse", pass_fuse, ""};
    if (tir_run_pass(m, &ctx, &layout) || tir_run_pass(m, &ctx, &fuse)) return 1;
    if (strcmp(emit, "tir") == 0) {
        tir_print_module(stdout, m);
        return 0;
    }
    TbOutput kind = strcmp(emit, "llvm") == 0 ? TB_OUT_LLVM : strcmp(emit, "cubin") == 0 ? TB_OUT_CUBIN : TB_OUT_PTX;
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next) {
        if (f->kind != TIR_FUNC_KERNEL) continue;
        char *out = NULL;
        size_t olen = 0;
        TbReport rep;
        if (tb_emit(m, f, &opt, kind, &out, &olen, &rep, diag, NULL)) {
            errors++;
            continue;
        }
        if (kind != TB_OUT_CUBIN) fwrite(out, 1, olen, stdout);
        if (report)
            printf("%s: regs=%d smem=%d spill_stores=%d spill_loads=%d stack=%d threads=%d flops=%lld\n",
                   f->name, rep.regs, rep.smem_bytes, rep.spill_stores, rep.spill_loads, rep.stack_bytes,
                   rep.threads, (long long)rep.flops);
        free(out);
    }
    free(text);
    tir_arena_free(a);
    return errors ? 1 : 0;
}
