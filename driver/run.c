/* Running a kernel on the reference interpreter: argument checks, the choice of a
 * variant by the launch-time `where` clauses, the grid, the run. */
#include "driver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool tile_device_available(tile_device d) {
    /* The CUDA device arrives with the GPU backend and runtime (issue 4). */
    return d == TILE_DEVICE_INTERP;
}

/* Whether v fits the integer parameter type s.  A tile_arg carries integers as int64_t:
 * a u64 by its bits (2^63 and up arrive negative), so every value fits it. */
static bool int_fits(TirScalar s, int64_t v) {
    if (s == TIR_I1)
        return v == 0 || v == 1;
    int bits = tir_scalar_bits(s);
    if (!tir_scalar_is_signed(s) && bits >= 64)
        return true;
    if (tir_scalar_is_signed(s))
        return bits >= 64 || (v >= -(INT64_C(1) << (bits - 1)) && v < (INT64_C(1) << (bits - 1)));
    return v >= 0 && (bits >= 64 || v < (INT64_C(1) << bits));
}

static const char *arg_kind_text(tile_arg_kind k) {
    static const char *const text[] = {"nothing", "an integer", "a float", "a buffer"};
    return (unsigned)k < 4 ? text[k] : "an unknown argument kind";
}

/* Checks one argument against its parameter, filling the launch-time value.
 * Returns false after reporting an error that names the parameter. */
static bool check_arg(tile_ctx *c, const char *kname, const AstParam *ap, const tile_arg *a, TfArgValue *val) {
    int s = driver_param_scalar(ap);
    if (s < 0) {
        driver_error(c, "kernel '%s': parameter '%s' has an unknown type '%s'", kname, ap->name,
                     ap->type_name ? ap->type_name : "?");
        return false;
    }
    const char *tname = tir_scalar_name((TirScalar)s);
    if (ap->is_ptr) {
        if (a->kind != TILE_ARG_BUFFER) {
            driver_error(c, "kernel '%s': parameter '%s' is a pointer (*%s) but was given %s", kname, ap->name, tname,
                         arg_kind_text(a->kind));
            return false;
        }
        if (!a->buf.ptr && a->buf.bytes) {
            driver_error(c, "kernel '%s': parameter '%s': a NULL buffer of %zu bytes", kname, ap->name, a->buf.bytes);
            return false;
        }
        return true;
    }
    if (a->kind == TILE_ARG_NONE && ap->is_const)
        return true;
    if (a->kind == TILE_ARG_BUFFER || a->kind == TILE_ARG_NONE) {
        driver_error(c, "kernel '%s': parameter '%s' is a scalar (%s) but was given %s", kname, ap->name, tname,
                     arg_kind_text(a->kind));
        return false;
    }
    if (tir_scalar_is_float((TirScalar)s)) {
        val->fval = a->kind == TILE_ARG_FLOAT ? a->f64 : (double)a->i64;
        val->ival = (int64_t)val->fval;
        return true;
    }
    if (a->kind != TILE_ARG_INT) {
        driver_error(c, "kernel '%s': parameter '%s' is %s but was given a float (%g)", kname, ap->name, tname, a->f64);
        return false;
    }
    if (!int_fits((TirScalar)s, a->i64)) {
        driver_error(c, "kernel '%s': value %lld is out of range for parameter '%s' (%s)", kname, (long long)a->i64,
                     ap->name, tname);
        return false;
    }
    val->ival = a->i64;
    val->fval = (double)a->i64;
    return true;
}

/* The largest grid the GPU launches (x, y, z), so interpreter runs mean the same. */
static const int64_t grid_max[3] = {INT32_MAX, 65535, 65535};

/* Whether expression n names parameter `name`. */
static bool names_param(const AstNode *n, const char *name, int depth) {
    if (!n || depth > 200)
        return false;
    if (n->kind == AST_NAME && !strcmp(n->name, name))
        return true;
    if (names_param(n->a, name, depth + 1) || names_param(n->b, name, depth + 1))
        return true;
    for (int i = 0; i < n->nlist; i++)
        if (names_param(n->list[i], name, depth + 1))
            return true;
    return false;
}

/* " with n = 0, m = 3": the scalar arguments grid expression e names, so that its
 * error says which values made it fail. */
static void grid_arg_text(const AstKernel *kn, const AstNode *e, const TfArgValue *vals, char *buf, size_t size) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < kn->nparams && k < size; i++) {
        const AstParam *ap = &kn->params[i];
        if (ap->is_ptr || ap->is_const || !names_param(e, ap->name, 0))
            continue;
        int w = tir_scalar_is_float((TirScalar)driver_param_scalar(ap))
                    ? snprintf(buf + k, size - k, "%s %s = %g", k ? "," : " with", ap->name, vals[i].fval)
                    : snprintf(buf + k, size - k, "%s %s = %lld", k ? "," : " with", ap->name, (long long)vals[i].ival);
        if (w < 0)
            break;
        k += (size_t)w;
    }
}

/* The most constants a grid function is shown (a variant has far fewer). */
enum { TILE_MAX_GRID_CONSTS = 64 };

static tile_status pick_grid(tile_program *p, int k, const TfVariant *v, const TfArgValue *vals,
                             const tile_run_options *o, int64_t grid[3]) {
    tile_ctx *c = p->ctx;
    const AstKernel *kn = &p->file->kernels[k];
    const char *kname = kn->name;
    bool given = o->grid[0] || o->grid[1] || o->grid[2] || o->grid_fn;
    int r = 0;
    if (given && o->grid_fn) {
        const char *names[TILE_MAX_GRID_CONSTS];
        double values[TILE_MAX_GRID_CONSTS];
        int n = 0;
        for (int i = 0; i < v->nconsts && n < TILE_MAX_GRID_CONSTS; i++, n++) {
            names[n] = v->consts[i].name;
            values[n] = v->consts[i].is_float ? v->consts[i].fval : (double)v->consts[i].ival;
        }
        grid[0] = grid[1] = grid[2] = 1;
        if (o->grid_fn(o->grid_ud, n, names, values, grid)) {
            driver_error(c, "kernel '%s': the grid function failed", kname);
            return TILE_ERR_GRID;
        }
    } else if (given) {
        for (int i = 0; i < 3; i++)
            grid[i] = o->grid[i] ? o->grid[i] : 1;
    } else if ((r = tf_eval_grid(p->file, k, v, vals, grid)) < 0) {
        driver_error(c, "kernel '%s' has no grid clause: give the grid (--grid=X[,Y[,Z]])", kname);
        return TILE_ERR_GRID;
    }
    char args[512];
    if (r > 0) {
        /* A clause with no value (a division by zero) is the clause's fault, not a missing
         * clause: the error points at it and gives the arguments it read. */
        const AstNode *e = kn->grid[r - 1];
        grid_arg_text(kn, e, vals, args, sizeof args);
        tf_error(&p->diag, e->loc, e->end,
                 "grid expression `%.*s` of kernel '%s' cannot be "
                 "evaluated%s (a division by zero or overflow)",
                 (int)(e->end - e->loc), p->file->src + e->loc, kname, args);
        return TILE_ERR_GRID;
    }
    for (int i = 0; i < 3; i++) {
        if (grid[i] >= 1 && grid[i] <= grid_max[i])
            continue;
        if (!given && i < kn->ngrid) {
            /* A grid of 0 or less runs nothing: almost always a wrong argument, so it is an
             * error naming the expression and its value rather than a silent success. */
            const AstNode *e = kn->grid[i];
            grid_arg_text(kn, e, vals, args, sizeof args);
            tf_error(&p->diag, e->loc, e->end,
                     "grid expression `%.*s` of kernel '%s' is "
                     "%lld%s; the grid needs 1..%lld programs on axis %d",
                     (int)(e->end - e->loc), p->file->src + e->loc, kname, (long long)grid[i], args,
                     (long long)grid_max[i], i);
        } else {
            driver_error(c,
                         "kernel '%s': grid size %lld on axis %d is out of range "
                         "(1..%lld)",
                         kname, (long long)grid[i], i, (long long)grid_max[i]);
        }
        return TILE_ERR_GRID;
    }
    return TILE_OK;
}

/* The interpreter's run-time errors carry no severity; the API's messages do. */
static void run_error_sink(void *ud, const char *msg) {
    char buf[2048];
    snprintf(buf, sizeof buf, "error: %s", msg);
    driver_sink(ud, buf);
}

tile_status tile_run(tile_program *p, int k, const tile_arg *args, int nargs, tile_run_options *o) {
    if (!p || !o || (nargs && !args))
        return TILE_ERR_INVALID;
    tile_ctx *c = p->ctx;
    o->chosen[0] = 0;
    memset(o->grid_used, 0, sizeof o->grid_used);
    o->launch_flops = o->launch_bytes = 0;
    o->loops_per_iteration = 0;
    if (k < 0 || k >= p->file->nkernels) {
        driver_error(c, "no kernel number %d in '%s'", k, p->file->path);
        return TILE_ERR_NOT_FOUND;
    }
    if (o->device != TILE_DEVICE_INTERP) {
        driver_error(c, "no CUDA device backend in this build; use the interpreter");
        return TILE_ERR_UNSUPPORTED;
    }
    const AstKernel *kn = &p->file->kernels[k];
    if (nargs != kn->nparams) {
        driver_error(c, "kernel '%s' takes %d arguments, %d given", kn->name, kn->nparams, nargs);
        return TILE_ERR_ARGS;
    }
    p->diag.nerrors = 0;

    /* Check every argument before anything runs, reporting each bad one. */
    TirArena *a = tir_arena_new();
    TfArgValue *vals = tir_alloc(a, (kn->nparams + 1) * sizeof *vals);
    TfDefine *extra = tir_alloc(a, (kn->nparams + 1) * sizeof *extra);
    int nextra = 0, bad = 0;
    for (int i = 0; i < kn->nparams; i++) {
        const AstParam *ap = &kn->params[i];
        if (!check_arg(c, kn->name, ap, &args[i], &vals[i])) {
            bad++;
            continue;
        }
        if (ap->is_const && args[i].kind != TILE_ARG_NONE) {
            TfDefine *d = &extra[nextra++];
            d->name = ap->name;
            d->ivals = tir_memdup(a, &vals[i].ival, sizeof vals[i].ival);
            d->fvals = tir_memdup(a, &vals[i].fval, sizeof vals[i].fval);
            bool is_float = tir_scalar_is_float((TirScalar)driver_param_scalar(ap));
            d->is_float = tir_memdup(a, &is_float, sizeof is_float);
            d->nvals = 1;
        }
    }
    tile_status st = TILE_OK;
    if (bad) {
        st = TILE_ERR_ARGS;
        goto done;
    }

    int ndefs;
    TfDefine *defs = driver_defines(a, c, extra, nextra, &ndefs);
    TfVariant *vs;
    int nv = tf_variants_for(a, p->file, k, defs, ndefs, false, tir_target_smem_optin(c->arch), &vs, &p->diag);
    if (nv <= 0 || p->diag.nerrors) {
        st = TILE_ERR_COMPILE;
        goto done;
    }

    /* The first variant whose launch-time `where` clauses all hold. */
    int chosen = -1, failed_where = -1;
    for (int i = 0; i < nv && chosen < 0; i++) {
        int w = tf_eval_where(p->file, k, &vs[i], vals);
        if (w < 0)
            chosen = i;
        else
            failed_where = w;
    }
    if (chosen < 0) {
        const AstNode *pred = kn->wheres[failed_where];
        char last[256];
        driver_variant_text(&vs[nv - 1], last, sizeof last);
        tf_error(&p->diag, pred->loc, pred->end,
                 "no variant of kernel '%s' admits these arguments: `where %.*s` does not "
                 "hold (last variant tried: %s)",
                 kn->name, (int)(pred->end - pred->loc), p->file->src + pred->loc, last);
        st = TILE_ERR_NO_VARIANT;
        goto done;
    }
    const TfVariant *v = &vs[chosen];
    driver_variant_text(v, o->chosen, sizeof o->chosen);

    int64_t grid[3];
    if ((st = pick_grid(p, k, v, vals, o, grid)) != TILE_OK)
        goto done;
    memcpy(o->grid_used, grid, sizeof grid);

    TirModule *m = driver_lower(p, a, k, v);
    TirFunc *f = m ? tir_module_find(m, kn->name) : NULL;
    if (!f) {
        if (m)
            driver_error(c, "internal: kernel '%s' missing after lowering", kn->name);
        st = TILE_ERR_COMPILE;
        goto done;
    }

    /* The IR kernel's parameters are the runtime ones, in declaration order. */
    int nrt = 0;
    for (int i = 0; i < kn->nparams; i++)
        nrt += !kn->params[i].is_const;
    if (f->body->nargs != nrt) {
        driver_error(c, "internal: kernel '%s' lowered with %d parameters, expected %d", kn->name, f->body->nargs, nrt);
        st = TILE_ERR_COMPILE;
        goto done;
    }
    TirArg *targs = tir_alloc(a, (nrt + 1) * sizeof *targs);
    TirBuffer *bufs = tir_alloc(a, (kn->nparams + 1) * sizeof *bufs);
    int nbufs = 0;
    for (int i = 0, r = 0; i < kn->nparams; i++) {
        const AstParam *ap = &kn->params[i];
        if (ap->is_const)
            continue;
        TirScalar s = (TirScalar)driver_param_scalar(ap);
        if (ap->is_ptr) {
            targs[r].p = args[i].buf.ptr;
            if (args[i].buf.ptr)
                bufs[nbufs++] = (TirBuffer){args[i].buf.ptr, args[i].buf.bytes, ap->name};
        } else if (tir_scalar_is_float(s)) {
            targs[r].f = tir_round_to(s, vals[i].fval);
        } else {
            targs[r].i = vals[i].ival;
        }
        r++;
    }
    driver_count_launch(f, targs, grid, &o->launch_flops, &o->launch_bytes, &o->loops_per_iteration);
    if (o->count_only)
        goto done;
    TirInterpOptions io = {
        .grid = {grid[0], grid[1], grid[2]},
        .bufs = bufs,
        .nbufs = nbufs,
        .diag = run_error_sink,
        .ud = c,
        .print_out = o->print_out,
        .debug = c->debug,
    };
    if (tir_interp_run(f, targs, &io))
        st = TILE_ERR_RUN;
done:
    c->variant[0] = 0;
    tir_arena_free(a);
    return st;
}
