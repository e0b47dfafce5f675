/* Compiling: variants of a kernel, lowering one variant to tile IR through the pass
 * pipeline, and emitting the result. */
#include "driver.h"
#include "bundle.h"

#include <stdlib.h>
#include <string.h>

/* The last pass the interpreter and `--emit=tir` need; layouts come after it. */
#define DRIVER_LAST_TIR_PASS "canonicalize"

static bool kernel_ok(const tile_program *p, int k) {
    return p && k >= 0 && k < p->file->nkernels;
}

/* Whether `name` is something a define can fix in kernel k. */
static bool kernel_has_constant(const AstKernel *kn, const char *name) {
    if (tf_launch_shape(name) != TF_LAUNCH_NONE)
        return true;
    for (int i = 0; i < kn->nparams; i++)
        if (kn->params[i].is_const && !strcmp(kn->params[i].name, name))
            return true;
    for (int i = 0; i < kn->ntunes; i++)
        if (!strcmp(kn->tunes[i].name, name))
            return true;
    for (int i = 0; i < kn->nconsts; i++)
        if (!strcmp(kn->consts[i].name, name))
            return true;
    return false;
}

/* Variants of kernel k.  `only_relevant`: drop the defines that name nothing in this
 * kernel (compiling every kernel of a file, where -D S=.. may concern one of them). */
tile_status driver_variants_get(tile_program *p, int k, bool all, bool only_relevant, tile_variants **out) {
    if (!out)
        return TILE_ERR_INVALID;
    *out = NULL;
    if (!kernel_ok(p, k))
        return TILE_ERR_NOT_FOUND;
    tile_variants *v = calloc(1, sizeof *v);
    if (!v)
        return TILE_ERR_INVALID;
    v->arena = tir_arena_new();
    int ndefs;
    TfDefine *defs = driver_defines(v->arena, p->ctx, NULL, 0, &ndefs);
    if (only_relevant) {
        int kept = 0;
        for (int i = 0; i < ndefs; i++)
            if (kernel_has_constant(&p->file->kernels[k], defs[i].name))
                defs[kept++] = defs[i];
        ndefs = kept;
    }
    int before = p->diag.nerrors;
    v->n =
        tf_variants_for(v->arena, p->file, k, defs, ndefs, !all, tir_target_smem_optin(p->ctx->arch), &v->v, &p->diag);
    if (v->n <= 0 || p->diag.nerrors > before) {
        tile_variants_free(v);
        return TILE_ERR_COMPILE;
    }
    *out = v;
    return TILE_OK;
}

tile_status tile_variants_get(tile_program *p, int k, bool all, tile_variants **out) {
    return driver_variants_get(p, k, all, false, out);
}

void tile_variants_free(tile_variants *v) {
    if (!v)
        return;
    tir_arena_free(v->arena);
    free(v);
}

int tile_variants_count(const tile_variants *v) {
    return v ? v->n : 0;
}

int tile_variant_const_count(const tile_variants *v, int i) {
    return v && i >= 0 && i < v->n ? v->v[i].nconsts : 0;
}

void tile_variant_const(const tile_variants *v, int i, int j, const char **name, double *value, bool *is_float) {
    if (!v || i < 0 || i >= v->n || j < 0 || j >= v->v[i].nconsts)
        return;
    const TirConstBinding *b = &v->v[i].consts[j];
    if (name)
        *name = b->name;
    if (value)
        *value = b->is_float ? b->fval : (double)b->ival;
    if (is_float)
        *is_float = b->is_float;
}

void driver_variant_text(const TfVariant *v, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < v->nconsts && k < n; i++) {
        const TirConstBinding *b = &v->consts[i];
        int w = b->is_float ? snprintf(buf + k, n - k, "%s%s=%g", i ? ", " : "", b->name, b->fval)
                            : snprintf(buf + k, n - k, "%s%s=%lld", i ? ", " : "", b->name, (long long)b->ival);
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

/* Whether kernel function f has a runtime parameter `name`; its type in *ty. */
static bool kernel_param(const AstKernel *kn, const char *name, const AstParam **out) {
    for (int i = 0; i < kn->nparams; i++)
        if (!kn->params[i].is_const && !strcmp(kn->params[i].name, name)) {
            *out = &kn->params[i];
            return true;
        }
    return false;
}

/* Whether fact `facts` fits parameter `ap`: div16 and div8 for pointers and integers,
 * one for integers. */
static const char *assumption_misfit(const AstParam *ap, unsigned facts) {
    int s = driver_param_scalar(ap);
    bool is_int = !ap->is_ptr && s >= 0 && s != TIR_I1 && !tir_scalar_is_float((TirScalar)s);
    if ((facts & TILE_ASSUME_ONE) && !is_int)
        return "only an integer parameter can be assumed equal to 1";
    if ((facts & (TILE_ASSUME_DIV16 | TILE_ASSUME_DIV8)) && !ap->is_ptr && !is_int)
        return facts & TILE_ASSUME_DIV16 ? "only pointer and integer parameters can be assumed divisible by 16"
                                         : "only pointer and integer parameters can be assumed divisible by 8";
    return NULL;
}

bool driver_check_assumptions(tile_program *p, int only) {
    const tile_ctx *c = p->ctx;
    bool ok = true;
    /* Facts belong to the kernel they are given for: compiling one kernel, another
     * kernel's parameter of the same name (of another type) is none of their business. */
    int first = only < 0 ? 0 : only, end = only < 0 ? p->file->nkernels : only + 1;
    for (int i = 0; i < c->nassumes; i++) {
        const DriverAssume *as = &c->assumes[i];
        if (!as->facts || !strcmp(as->name, "*"))
            continue;
        bool found = false;
        for (int k = first; k < end; k++) {
            const AstParam *ap;
            if (!kernel_param(&p->file->kernels[k], as->name, &ap))
                continue;
            found = true;
            const char *why = assumption_misfit(ap, as->facts);
            if (why) {
                driver_error(p->ctx, "assumption on '%s' of kernel '%s': %s", as->name, p->file->kernels[k].name, why);
                ok = false;
            }
        }
        if (!found && only >= 0) {
            driver_error(p->ctx, "assumption on '%s': kernel '%s' has no parameter of that name", as->name,
                         p->file->kernels[only].name);
            ok = false;
        } else if (!found) {
            driver_error(p->ctx,
                         "assumption on '%s': no kernel in '%s' has a parameter of that "
                         "name",
                         as->name, p->file->path);
            ok = false;
        }
    }
    return ok;
}

/* Copies launch facts (the n assumptions `as`) onto the kernel's parameter infos, which
 * the specialize pass turns into multiple_of hints and constants. */
static void apply_assumptions(const DriverAssume *as_list, int n, TirModule *m) {
    for (TirFunc *f = m->first; f; f = f->next) {
        if (f->kind != TIR_FUNC_KERNEL || !f->params)
            continue;
        for (int i = 0; i < f->body->nargs; i++) {
            TirType t = f->body->args[i]->ty;
            if (tir_type_is_tile(t))
                continue;
            bool is_int = !t.ptr && t.elem != TIR_I1 && !tir_scalar_is_float((TirScalar)t.elem);
            for (int j = 0; j < n; j++) {
                const DriverAssume *as = &as_list[j];
                bool all = !strcmp(as->name, "*");
                if (!all && (!f->params[i].name || strcmp(as->name, f->params[i].name)))
                    continue;
                if ((as->facts & TILE_ASSUME_DIV16) && (t.ptr || is_int))
                    f->params[i].divisibility = 16;
                else if ((as->facts & TILE_ASSUME_DIV8) && (t.ptr || is_int) && f->params[i].divisibility < 8)
                    f->params[i].divisibility = 8;
                if ((as->facts & TILE_ASSUME_ONE) && is_int && !all)
                    f->params[i].equals_one = true;
            }
        }
    }
}

/* A pass's error about a place in the source: FILE:LINE:COL, the line and a caret, as the
 * front end prints its own. */
static void pass_diag_at(void *ud, uint32_t loc, const char *msg) {
    tile_program *p = ud;
    tf_error(&p->diag, loc, loc, "%s", msg);
}

TirModule *driver_lower_to(tile_program *p, TirArena *a, int k, const TfVariant *v, bool full,
                           const DriverAssume *extra, int nextra) {
    tile_ctx *c = p->ctx;
    TirModule *m = tir_module_new(a);
    m->source_name = p->file->path;
    int before = p->diag.nerrors;
    /* messages from here to the end of this variant's compile name it (JSON's "variant") */
    driver_variant_text(v, c->variant, sizeof c->variant);
    double t0 = driver_now();
    if (!tf_elaborate(m, p->file, k, v, &p->diag) || p->diag.nerrors > before)
        return NULL;
    /* The front end's output is checked before any pass sees it, so that a front-end
     * bug shows as a verifier message rather than a pass misbehaving. */
    if (tir_verify_module(m, driver_sink, c))
        return NULL;
    apply_assumptions(c->assumes, c->nassumes, m);
    apply_assumptions(extra, nextra, m);
    double t1 = driver_now();
    driver_time(c, TILE_PHASE_IRGEN, t1 - t0);
    TirPassContext pc = {
        .arch = c->arch,
        .opt_level = c->opt_level,
        .verify_each = c->debug,
        .diag = driver_sink,
        .ud = c,
        .print_after = c->print_after,
        .dump = c->print_after ? c->dump : NULL,
        .diag_at = pass_diag_at,
        .diag_at_ud = p,
    };
    int errors = tir_run_pipeline(m, &pc, full ? NULL : DRIVER_LAST_TIR_PASS);
    driver_time(c, TILE_PHASE_PASSES, driver_now() - t1);
    return errors ? NULL : m;
}

TirModule *driver_lower(tile_program *p, TirArena *a, int k, const TfVariant *v) {
    return driver_lower_to(p, a, k, v, false, NULL, 0);
}

bool tile_emit_supported(tile_emit_kind kind) {
    return kind == TILE_EMIT_TIR ||
           (driver_have_backend() && (kind == TILE_EMIT_LLVM || kind == TILE_EMIT_PTX || kind == TILE_EMIT_CUBIN ||
                                      kind == TILE_EMIT_BUNDLE || kind == TILE_EMIT_HEADER));
}

tile_status driver_check_request(tile_program *p, int k) {
    tile_status s = TILE_OK;
    if (k < 0) {
        /* Compiling every kernel: a define must concern at least one of them. */
        const tile_ctx *c = p->ctx;
        for (int i = 0; i < c->ndefines; i++) {
            bool used = false;
            for (int j = 0; j < p->file->nkernels && !used; j++)
                used = kernel_has_constant(&p->file->kernels[j], c->defines[i].name);
            if (!used) {
                /* the closest const parameter or tuned constant: a typo's likely meaning */
                const char *name = c->defines[i].name, *best = NULL;
                int bestd = strlen(name) > 3 ? 3 : 2;
                for (int j = 0; j < p->file->nkernels; j++) {
                    const AstKernel *kn = &p->file->kernels[j];
                    for (int q = 0; q < kn->nparams + kn->ntunes; q++) {
                        const char *cand = q < kn->nparams ? (kn->params[q].is_const ? kn->params[q].name : NULL)
                                                           : kn->tunes[q - kn->nparams].name;
                        int d = cand ? driver_name_distance(name, cand) : 99;
                        if (d < bestd) {
                            best = cand;
                            bestd = d;
                        }
                    }
                }
                driver_error(p->ctx, "-D %s names no constant of any kernel in '%s'%s%s%s", name, p->file->path,
                             best ? "; did you mean '" : "", best ? best : "", best ? "'?" : "");
                s = TILE_ERR_COMPILE;
            }
        }
    }
    if (!driver_check_assumptions(p, k))
        s = TILE_ERR_COMPILE;
    return s;
}

static tile_status emit_kernel_tir(tile_program *p, int k, bool all, bool only_relevant, TirBuf *t) {
    tile_variants *vs;
    tile_status s = driver_variants_get(p, k, all, only_relevant, &vs);
    if (s != TILE_OK)
        return s;
    for (int i = 0; i < vs->n && s == TILE_OK; i++) {
        TirArena *a = tir_arena_new();
        TirModule *m = driver_lower(p, a, k, &vs->v[i]);
        if (!m) {
            s = TILE_ERR_COMPILE;
        } else {
            char *text = tir_print_module_to_string(m);
            if (text) {
                if (t->len)
                    tir_buf_putc(t, '\n');
                tir_buf_puts(t, text);
                free(text);
            } else {
                t->failed = true;
            }
        }
        tir_arena_free(a);
    }
    p->ctx->variant[0] = 0;
    tile_variants_free(vs);
    return s;
}

tile_status tile_emit(tile_program *p, int k, tile_emit_kind kind, bool all_variants, char **out, size_t *len) {
    if (!p || !out)
        return TILE_ERR_INVALID;
    *out = NULL;
    if (len)
        *len = 0;
    if (k >= p->file->nkernels || k < -1) {
        driver_error(p->ctx, "no kernel number %d in '%s'", k, p->file->path);
        return TILE_ERR_NOT_FOUND;
    }
    if (!tile_emit_supported(kind)) {
        driver_error(p->ctx,
                     "--emit=%s is not supported yet in this build (no GPU backend); "
                     "use --emit=tir",
                     tile_emit_kind_name(kind));
        return TILE_ERR_UNSUPPORTED;
    }
    /* A bundle and a header hold every variant the defines leave (docs/tools.md). */
    size_t n;
    if (kind == TILE_EMIT_BUNDLE || kind == TILE_EMIT_HEADER) {
        tile_status sb = kind == TILE_EMIT_BUNDLE ? driver_emit_bundle(p, k, true, true, out, &n)
                                                  : driver_emit_header(p, k, true, out, &n);
        if (len)
            *len = sb == TILE_OK ? n : 0;
        return sb;
    }
    if (kind != TILE_EMIT_TIR)
        return driver_emit_one(p, k, kind, all_variants, out, len);
    p->diag.nerrors = 0;
    TirBuf t = {0}; /* the emitted modules, one after another */
    tile_status s = driver_check_request(p, k);
    if (s != TILE_OK)
        return s;
    /* Every kernel is compiled even after one fails, so all errors are reported. */
    for (int i = k < 0 ? 0 : k; i < (k < 0 ? p->file->nkernels : k + 1); i++) {
        tile_status si = emit_kernel_tir(p, i, all_variants, k < 0, &t);
        if (s == TILE_OK)
            s = si;
    }
    if (s == TILE_OK && t.failed)
        s = TILE_ERR_INVALID;
    if (s != TILE_OK) {
        tir_buf_free(&t);
        return s;
    }
    *out = tir_buf_take(&t, len);
    return *out ? TILE_OK : TILE_ERR_INVALID;
}

tile_status tile_emit_tir(tile_program *p, int k, char **out) {
    return tile_emit(p, k, TILE_EMIT_TIR, false, out, NULL);
}
