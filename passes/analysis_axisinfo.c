/* The pass wrapper of the axis analysis (analysis/axisinfo.c): prints its facts for
 * tile-opt --pass=analysis_axisinfo and FileCheck; the layout pass calls the analysis
 * itself. */
#include "analysis.h"
#include "passes.h"

#include <stdio.h>

static int rank_of(const TirValue *v) {
    return v->ty.rank > 0 ? v->ty.rank : 1;
}

typedef struct {
    FILE *out;
    TirAxisInfo *info;
    TirFunc *f;
} AxPrint;

static void print_list64(FILE *o, const char *k, const int64_t *v, int n) {
    fprintf(o, " %s=[", k);
    for (int i = 0; i < n; i++)
        fprintf(o, i ? ", %lld" : "%lld", (long long)v[i]);
    fprintf(o, "]");
}
static void print_list32(FILE *o, const char *k, const int32_t *v, int n) {
    fprintf(o, " %s=[", k);
    for (int i = 0; i < n; i++)
        fprintf(o, i ? ", %d" : "%d", v[i]);
    fprintf(o, "]");
}

static void print_value(AxPrint *p, const TirValue *v) {
    if (v->ty.kind != TIR_K_VALUE)
        return;
    if (!v->ty.ptr && !tir_scalar_is_int((TirScalar)v->ty.elem))
        return;
    const TirAxisInfo *a = &p->info[v->id];
    int rank = rank_of(v);
    fprintf(p->out, "// axisinfo @%s %%%d:", p->f->name, v->id);
    print_list64(p->out, "div", a->div, rank);
    print_list32(p->out, "contig", a->contig, rank);
    print_list32(p->out, "const", a->constancy, rank);
    fprintf(p->out, "\n");
}

static bool print_op(TirOp *op, void *ud) {
    AxPrint *p = ud;
    for (int r = 0; r < op->nregion; r++)
        for (int i = 0; i < op->region[r]->nargs; i++)
            print_value(p, op->region[r]->args[i]);
    for (int i = 0; i < op->nres; i++)
        print_value(p, op->res[i]);
    return true;
}

int pass_analysis_axisinfo(TirModule *m, TirPassContext *ctx) {
    for (TirFunc *f = m->first; f; f = f->next) {
        TirAxisInfo *info = analysis_axisinfo(f);
        if (!ctx || !ctx->dump)
            continue;
        AxPrint p = {ctx->dump, info, f};
        for (int i = 0; i < f->body->nargs; i++)
            print_value(&p, f->body->args[i]);
        tir_walk_func(f, print_op, &p);
    }
    return 0;
}
