/* Compiling variants to modules: the GPU kinds (llvm, ptx, cubin) through the backend
 * after the whole pass pipeline, one module per kernel variant; the --report figures;
 * and tile_emit for a single GPU module. */
#include "driver.h"

#ifdef TILEC_HAVE_BACKEND
#include "backend.h"
#endif

#include <stdlib.h>
#include <string.h>

int tile_forced_lowering(void) {
    const char *e = getenv("TILEC_LOWERING");
    if (!e || e[0] < '0' || e[0] > '3' || e[1])
        return -1;
    return e[0] - '0';
}

#ifdef TILEC_HAVE_BACKEND
void driver_lowering_options(TbOptions *o) {
    int l = tile_forced_lowering();
    if (l >= 0) {
        o->lowering = l;
        o->only_lowering = true;
    }
}
#endif

bool driver_have_backend(void) {
#ifdef TILEC_HAVE_BACKEND
    return true;
#else
    return false;
#endif
}

static void report_init(tile_report *r, const tile_program *p, int k, int vi, const TfVariant *v) {
    memset(r, 0, sizeof *r);
    r->kernel = k;
    r->variant = vi;
    snprintf(r->kernel_name, sizeof r->kernel_name, "%s", p->file->kernels[k].name);
    driver_variant_text(v, r->variant_text, sizeof r->variant_text);
    r->regs = r->smem_bytes = r->spill_stores = r->spill_loads = r->stack_bytes = -1;
    r->static_global_bytes = r->threads = -1;
    r->flops = r->global_bytes = -1;
}

#ifdef TILEC_HAVE_BACKEND
/* Backend errors about one op (a `dot`, say) are printed like the front end's:
 * FILE:LINE:COL, the source line and a caret. */
static void diag_at(void *ud, uint32_t loc, const char *msg) {
    tile_program *p = ud;
    tf_error(&p->diag, loc, loc, "%s", msg);
}

static const TbOutput tb_kind[TILE_NEMIT] = {
    [TILE_EMIT_LLVM] = TB_OUT_LLVM,
    [TILE_EMIT_PTX] = TB_OUT_PTX,
    [TILE_EMIT_CUBIN] = TB_OUT_CUBIN,
};
#endif

static char *print_tir(TirModule *m, size_t *len) {
    char *text = tir_print_module_to_string(m);
    if (text)
        *len = strlen(text);
    return text;
}

/* Compiles variant v (index vi in its set) of kernel k as `kind`; for cubins, alt (may be
 * NULL) gets the uncapped cubin where the register budget capped the registers. */
static tile_status compile_variant_named(tile_program *p, int k, const TfVariant *v, int vi, tile_emit_kind kind,
                                         char **out, size_t *len, tile_report *rep, tile_cubin *alt) {
    tile_ctx *c = p->ctx;
    *out = NULL;
    *len = 0;
    if (rep)
        report_init(rep, p, k, vi, v);
    TirArena *a = tir_arena_new();
    TirModule *m = driver_lower_to(p, a, k, v, kind != TILE_EMIT_TIR, NULL, 0);
    tile_status s = TILE_OK;
    if (!m) {
        s = TILE_ERR_COMPILE;
    } else if (kind == TILE_EMIT_TIR) {
        if (!(*out = print_tir(m, len)))
            s = TILE_ERR_INVALID;
    } else {
#ifdef TILEC_HAVE_BACKEND
        TirFunc *f = m->first;
        while (f && f->kind != TIR_FUNC_KERNEL)
            f = f->next;
        TbOptions o = {.arch = c->arch,
                       .opt_level = c->opt_level,
                       .debug = c->debug,
                       .diag_at = diag_at,
                       .diag_at_ud = p,
                       .ptxas_options = c->ptxas_options};
        driver_lowering_options(&o);
        TbReport tb;
        TbAltCubin ta = {0};
        int before = p->diag.nerrors;
        if (!f || tb_emit(m, f, &o, tb_kind[kind], out, len, &tb, alt ? &ta : NULL, driver_sink, c) ||
            p->diag.nerrors > before) {
            free(*out);
            *out = NULL;
            *len = 0;
            s = TILE_ERR_COMPILE;
        } else if (!*out) {
            s = TILE_ERR_INVALID;
        }
        if (alt && s == TILE_OK && ta.cubin) {
            alt->data = ta.cubin;
            alt->len = ta.len;
            alt->regs = ta.regs;
        } else {
            free(ta.cubin);
        }
        if (f) {
            driver_time(c, TILE_PHASE_LLVM_IR, tb.t_build);
            driver_time(c, TILE_PHASE_LLVM_OPT, tb.t_opt);
            driver_time(c, TILE_PHASE_CODEGEN, tb.t_codegen);
            driver_time(c, TILE_PHASE_PTXAS, tb.t_ptxas);
        }
        if (rep && f && s == TILE_OK) {
            rep->regs = tb.regs;
            rep->smem_bytes = tb.smem_bytes;
            rep->spill_stores = tb.spill_stores;
            rep->spill_loads = tb.spill_loads;
            rep->stack_bytes = tb.stack_bytes;
            rep->static_global_bytes = tb.static_global_bytes;
            rep->threads = tb.threads;
            rep->flops = tb.flops;
            rep->global_bytes = tb.global_bytes;
        }
#else
        driver_error(c, "--emit=%s is not supported yet in this build (no GPU backend)", tile_emit_kind_name(kind));
        s = TILE_ERR_UNSUPPORTED;
#endif
    }
    tir_arena_free(a);
    return s;
}

/* compile_variant_named, the variant's name cleared after it (JSON's "variant"). */
static tile_status compile_variant(tile_program *p, int k, const TfVariant *v, int vi, tile_emit_kind kind, char **out,
                                   size_t *len, tile_report *rep, tile_cubin *alt) {
    tile_status s = compile_variant_named(p, k, v, vi, kind, out, len, rep, alt);
    p->ctx->variant[0] = 0; /* later messages are no longer this variant's */
    return s;
}

void tile_outputs_free(tile_output *outs, int nouts) {
    for (int i = 0; outs && i < nouts; i++)
        free(outs[i].data);
    free(outs);
}

/* The checks tile_compile and tile_emit_variant (named `fn`) share: kernel k exists
 * (-1, every kernel, where `all_ok`), `kind` makes one module per variant, and the
 * request holds.  Clears the error count first, as each public call starts afresh. */
static tile_status check_emit(tile_program *p, int k, bool all_ok, tile_emit_kind kind, const char *fn) {
    if (k >= p->file->nkernels || k < (all_ok ? -1 : 0)) {
        driver_error(p->ctx, "no kernel number %d in '%s'", k, p->file->path);
        return TILE_ERR_NOT_FOUND;
    }
    if (!tile_emit_supported(kind) || kind == TILE_EMIT_BUNDLE || kind == TILE_EMIT_HEADER) {
        driver_error(p->ctx, "--emit=%s is not supported by %s in this build", tile_emit_kind_name(kind), fn);
        return TILE_ERR_UNSUPPORTED;
    }
    p->diag.nerrors = 0;
    return driver_check_request(p, k);
}

/* One module of a tile_compile batch: variant `variant` of kernel `kernel`, on whichever
 * copy of the program the worker has (the variants of every copy are the same list). */
typedef struct CompileJobs {
    tile_output *outs;
    tile_emit_kind kind;
    bool all, only_relevant;
} CompileJobs;

static tile_status compile_job(tile_program *q, int job, void *ud) {
    CompileJobs *cj = ud;
    tile_output *o = &cj->outs[job];
    tile_variants *vs;
    tile_status s = driver_variants_get(q, o->kernel, cj->all, cj->only_relevant, &vs);
    if (s != TILE_OK)
        return s;
    if (o->variant < vs->n)
        s = compile_variant(q, o->kernel, &vs->v[o->variant], o->variant, cj->kind, &o->data, &o->len, &o->report,
                            NULL);
    else
        s = TILE_ERR_INVALID;
    tile_variants_free(vs);
    return s;
}

tile_status tile_compile(tile_program *p, int k, tile_emit_kind kind, bool all_variants, tile_output **outs,
                         int *nouts) {
    if (!p || !outs || !nouts || (unsigned)kind >= TILE_NEMIT)
        return TILE_ERR_INVALID;
    *outs = NULL;
    *nouts = 0;
    tile_status s = check_emit(p, k, true, kind, "tile_compile");
    if (s != TILE_OK)
        return s;
    tile_output *list = NULL;
    int n = 0, cap = 0;
    /* The list of modules first; then every one is compiled (in parallel), even after one
     * fails, so that all errors are reported. */
    for (int i = k < 0 ? 0 : k; i < (k < 0 ? p->file->nkernels : k + 1); i++) {
        tile_variants *vs;
        tile_status si = driver_variants_get(p, i, all_variants, k < 0, &vs);
        for (int j = 0; si == TILE_OK && j < vs->n; j++) {
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                tile_output *grown = realloc(list, (size_t)cap * sizeof *grown);
                if (!grown) {
                    si = TILE_ERR_INVALID;
                    break;
                }
                list = grown;
            }
            tile_output *o = &list[n++];
            memset(o, 0, sizeof *o);
            o->kernel = i;
            o->variant = j;
            if (vs->n == 1)
                snprintf(o->name, sizeof o->name, "%s", p->file->kernels[i].name);
            else
                snprintf(o->name, sizeof o->name, "%s.%d", p->file->kernels[i].name, j);
        }
        tile_variants_free(vs);
        if (s == TILE_OK)
            s = si;
    }
    if (s == TILE_OK) {
        CompileJobs cj = {list, kind, all_variants, k < 0};
        s = driver_run_jobs(p, n, compile_job, &cj, k < 0 ? "" : p->file->kernels[k].name, false);
    }
    if (s != TILE_OK) {
        tile_outputs_free(list, n);
        return s;
    }
    *outs = list;
    *nouts = n;
    return TILE_OK;
}

tile_status driver_emit_one(tile_program *p, int k, tile_emit_kind kind, bool all, char **out, size_t *len) {
    tile_output *outs;
    int n;
    tile_status s = tile_compile(p, k, kind, all, &outs, &n);
    if (s != TILE_OK)
        return s;
    if (n != 1) {
        driver_error(p->ctx,
                     "--emit=%s makes one module per kernel variant and this asks for "
                     "%d (%s%s): pick one kernel with --kernel and one value per tune "
                     "list with -D, or give -o OUT for one file per module",
                     tile_emit_kind_name(kind), n, outs[0].name, n > 1 ? ", ..." : "");
        tile_outputs_free(outs, n);
        return TILE_ERR_INVALID;
    }
    *out = outs[0].data;
    if (len)
        *len = outs[0].len;
    outs[0].data = NULL;
    tile_outputs_free(outs, n);
    return TILE_OK;
}

/* Variant `variant` of kernel k (public entry point `fn`) as `kind`; alt as for
 * compile_variant. */
static tile_status emit_variant(tile_program *p, int k, int variant, tile_emit_kind kind, char **out, size_t *len,
                                tile_report *report, tile_cubin *alt, const char *fn) {
    *out = NULL;
    *len = 0;
    tile_status s = check_emit(p, k, false, kind, fn);
    if (s != TILE_OK)
        return s;
    tile_variants *vs;
    if ((s = driver_variants_get(p, k, true, false, &vs)) != TILE_OK)
        return s;
    if (variant < 0 || variant >= vs->n) {
        driver_error(p->ctx, "kernel '%s' has %d variant%s, not variant %d", p->file->kernels[k].name, vs->n,
                     vs->n == 1 ? "" : "s", variant);
        s = TILE_ERR_NOT_FOUND;
    } else {
        s = compile_variant(p, k, &vs->v[variant], variant, kind, out, len, report, alt);
    }
    tile_variants_free(vs);
    return s;
}

tile_status tile_emit_variant(tile_program *p, int k, int variant, tile_emit_kind kind, char **out, size_t *len,
                              tile_report *report) {
    if (!p || !out || !len || (unsigned)kind >= TILE_NEMIT)
        return TILE_ERR_INVALID;
    return emit_variant(p, k, variant, kind, out, len, report, NULL, "tile_emit_variant");
}

tile_status tile_emit_variant_cubins(tile_program *p, int k, int variant, tile_cubin out[2], int *n,
                                     tile_report *report) {
    if (!p || !out || !n)
        return TILE_ERR_INVALID;
    memset(out, 0, 2 * sizeof *out);
    out[0].regs = out[1].regs = -1;
    *n = 0;
    tile_report rep;
    tile_status s = emit_variant(p, k, variant, TILE_EMIT_CUBIN, &out[0].data, &out[0].len, &rep, &out[1],
                                 "tile_emit_variant_cubins");
    if (s == TILE_OK) {
        out[0].regs = rep.regs;
        *n = out[1].data ? 2 : 1;
        if (report)
            *report = rep;
    }
    return s;
}

tile_status tile_report_get(tile_program *p, int k, bool all_variants, tile_report **reps, int *nreps) {
    if (!reps || !nreps)
        return TILE_ERR_INVALID;
    *reps = NULL;
    *nreps = 0;
    if (p && !driver_have_backend()) {
        driver_error(p->ctx, "--report is not supported yet in this build (no GPU backend)");
        return TILE_ERR_UNSUPPORTED;
    }
    tile_output *outs;
    int n;
    tile_status s = tile_compile(p, k, TILE_EMIT_CUBIN, all_variants, &outs, &n);
    if (s != TILE_OK)
        return s;
    tile_report *r = malloc((size_t)(n ? n : 1) * sizeof *r);
    if (!r) {
        tile_outputs_free(outs, n);
        return TILE_ERR_INVALID;
    }
    for (int i = 0; i < n; i++)
        r[i] = outs[i].report;
    tile_outputs_free(outs, n);
    *reps = r;
    *nreps = n;
    return TILE_OK;
}
