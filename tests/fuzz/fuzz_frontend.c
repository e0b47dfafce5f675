/* libFuzzer target for the front end: arbitrary bytes go through parse, check,
 * variants, elaborate, the verifier and the passes up to canonicalize.  Any crash,
 * sanitizer report, leak or hang is a bug: the front end must answer every input
 * with diagnostics.  Build with -DTILEC_FUZZ=ON -DCMAKE_C_COMPILER=clang-14. */
#include "frontend.h"
#include "passes.h"

#include <string.h>

static void quiet(void *ud, const char *msg) {
    (void)ud;
    (void)msg;
}

/* Const parameters get a value so that kernels with them are elaborated too. */
static TfDefine *const_defines(TirArena *a, const AstKernel *k, int *n) {
    TfDefine *d = tir_alloc(a, (k->nparams + 1) * sizeof *d);
    *n = 0;
    for (int i = 0; i < k->nparams; i++) {
        if (!k->params[i].is_const)
            continue;
        TfDefine *x = &d[(*n)++];
        x->name = k->params[i].name;
        x->ivals = tir_alloc(a, sizeof *x->ivals);
        x->fvals = tir_alloc(a, sizeof *x->fvals);
        x->is_float = tir_alloc(a, sizeof *x->is_float);
        bool is_float = k->params[i].type_name && k->params[i].type_name[0] == 'f';
        x->ivals[0] = 16;
        x->fvals[0] = is_float ? 0.5 : 16;
        x->is_float[0] = is_float;
        x->nvals = 1;
    }
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    TirArena *a = tir_arena_new();
    char *src = tir_alloc(a, size + 1);
    memcpy(src, data, size);
    TfDiag d;
    tf_diag_init(&d, "fuzz.tile", src, size, quiet, NULL);
    AstFile *f = tf_parse(a, &d);
    if (f && tf_check(a, f, &d) == 0) {
        for (int k = 0; k < f->nkernels; k++) {
            int ndefs;
            TfDefine *defs = const_defines(a, &f->kernels[k], &ndefs);
            TfVariant *vs;
            int nv = tf_variants(a, f, k, defs, ndefs, false, &vs, &d);
            /* a few variants: enough to reach shape checks that depend on constants */
            for (int v = 0; v < nv && v < 3; v++) {
                TirModule *m = tir_module_new(a);
                if (!tf_elaborate(m, f, k, &vs[v], &d))
                    continue;
                if (tir_verify_module(m, quiet, NULL) != 0)
                    __builtin_trap(); /* the front end produced invalid IR */
                TirPassContext pc = {.arch = "sm_90a", .opt_level = 3, .verify_each = true, .diag = quiet};
                tir_run_pipeline(m, &pc, "canonicalize");
            }
        }
    }
    tir_arena_free(a);
    return 0;
}
