/* The pass pipeline: one table, in order.  Adding a pass is one line here (and its
 * declaration in passes.h); tile-opt, tilec --print-after and the docs all read this
 * table, so nothing else lists the passes. */
#include "passes.h"
#include "pass_util.h"

#include <string.h>

const TirPassInfo tir_pipeline[] = {
    {"inline", pass_inline, "inline every call of a device function; drop the uncalled ones"},
    {"specialize", pass_specialize,
     "use the runtime's argument facts: params equal to 1 become constants, divisible ones get multiple_of"},
    {"canonicalize", pass_canonicalize,
     "fold constants, simplify algebra and control flow, CSE, DCE, to a fixed point"},
    {"layout", pass_layout,
     "give every tile a distributed layout: 16-byte blocked layouts, slices for reductions, converts where needed"},
    {"fuse", pass_fuse, "rematerialize cheap elementwise chains instead of converting layouts"},
    {"factor_ptrs", pass_factor_ptrs,
     "carry a loop's scalar-access pointer tile as one offset, rebuilt from its factors at the top of the body"},
    {"software_pipeline", pass_software_pipeline,
     "stream the loads that feed dot in a loop through a ring of `stages` shared buffers filled ahead by async copies"},
    {"smem_alloc", pass_smem_alloc,
     "place shared-memory scratch of cross-warp ops by liveness (reuse across non-overlapping lifetimes)"},
    {"barriers", pass_barriers, "insert the fewest barriers, then prove every shared-memory write/read pair ordered"},
    {"remat", pass_remat,
     "compute again after a dot loop the cheap values it does not read, instead of keeping them live through it"},
};
const int tir_pipeline_len = (int)(sizeof tir_pipeline / sizeof tir_pipeline[0]);

/* Passes that tir_pass_find knows but the default pipeline does not run (debugging
 * aids, passes under test).  The empty entry keeps the array valid C while it is empty. */
static const TirPassInfo tir_extra_passes[] = {
    {"analysis_axisinfo", pass_analysis_axisinfo,
     "divisibility, contiguity and constancy of int/pointer values (printed to the dump)"},
    /* measured slower on the H200 (docs/passes.md, schedule): kept for experiments */
    {"schedule", pass_schedule,
     "issue global loads early: move each load (and its address/mask ops) up past reductions to just after its "
     "operands"},
    {"barriers_check", pass_barriers_check, "prove shared-memory ordering without inserting barriers"},
    {NULL, NULL, NULL},
};

const TirPassInfo *tir_pass_find(const char *name) {
    if (!name)
        return NULL;
    for (int i = 0; i < tir_pipeline_len; i++)
        if (strcmp(tir_pipeline[i].name, name) == 0)
            return &tir_pipeline[i];
    for (const TirPassInfo *p = tir_extra_passes; p->name; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

int tir_run_pass(TirModule *m, TirPassContext *ctx, const TirPassInfo *p) {
    int errors = p->run(m, ctx);
    if (errors)
        return errors;
    if (ctx->verify_each) {
        errors = tir_verify_module(m, ctx->diag, ctx->ud);
        if (errors) {
            pass_error(ctx, p->name, NULL, "the IR does not verify after this pass (%d error%s above)", errors,
                       errors == 1 ? "" : "s");
            return errors;
        }
    }
    if (ctx->print_after && (strcmp(ctx->print_after, "all") == 0 || strcmp(ctx->print_after, p->name) == 0)) {
        /* --print-after is an explicit request for output; without a stream it goes to
         * stderr so that it never mixes with a tool's result on stdout. */
        FILE *out = ctx->dump ? ctx->dump : stderr;
        fprintf(out, "// -----// IR after %s //----- //\n", p->name);
        tir_print_module(out, m);
        fflush(out);
    }
    return 0;
}

int tir_run_pipeline(TirModule *m, TirPassContext *ctx, const char *last) {
    if (last) {
        int found = 0;
        for (int i = 0; i < tir_pipeline_len; i++)
            if (strcmp(tir_pipeline[i].name, last) == 0)
                found = 1;
        if (!found)
            return pass_error(ctx, "pipeline", NULL, "no pass named '%s' in the pipeline", last);
    }
    for (int i = 0; i < tir_pipeline_len; i++) {
        int errors = tir_run_pass(m, ctx, &tir_pipeline[i]);
        if (errors)
            return errors;
        if (last && strcmp(tir_pipeline[i].name, last) == 0)
            break;
    }
    return 0;
}
