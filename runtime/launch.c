/* Launching: argument checks, specialization facts, the choice of a variant (cached per
 * key; autotuned on a miss), the grid clause, and cuLaunchKernel.
 *
 * The hot path (a launch whose key was seen last) allocates nothing, hashes no string
 * and takes no lock: it checks the arguments into stack arrays, compares the key with
 * the last published choice (an immutable record read through an atomic pointer),
 * evaluates the grid bytecode and launches. */
#include "rt_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One launch's checked arguments, by param index. */
typedef struct LaunchArgs {
    RtValue vals[RT_MAX_PARAMS];
    RtFacts f; /* div8: multiples of 8 that are not multiples of 16 */
} LaunchArgs;

/* ---- argument checks -------------------------------------------------------------- */
static const char *kind_name(tile_rt_arg_kind k) {
    return k == TILE_RT_ARG_I64   ? "an integer"
           : k == TILE_RT_ARG_F64 ? "a float"
           : k == TILE_RT_ARG_PTR ? "a pointer"
                                  : "an unknown kind";
}

static bool int_in_range(tile_scalar t, int64_t v, int64_t *lo, uint64_t *hi) {
    size_t bits = tile_scalar_size(t) * 8;
    if (t == TILE_BOOL) {
        *lo = 0;
        *hi = 1;
    } else if (tile_scalar_is_signed(t)) {
        *lo = bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        *hi = bits >= 64 ? (uint64_t)INT64_MAX : ((uint64_t)1 << (bits - 1)) - 1;
    } else {
        *lo = 0;
        *hi = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    }
    if (t == TILE_U64) /* every int64 carries a u64 by its bits: 2^63 and up are negative */
        return true;
    return v >= *lo && (v < 0 || (uint64_t)v <= *hi);
}

static tile_rt_status check_args(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, LaunchArgs *la) {
    tile_rt *rt = k->m->rt;
    if (nargs != k->nrt || (!args && nargs))
        return rt_fail(rt, TILE_RT_ERR_ARGS, "kernel '%s' takes %d argument%s, got %d", k->name, k->nrt,
                       k->nrt == 1 ? "" : "s", nargs);
    la->f = (RtFacts){0, 0, 0};
    for (int i = 0; i < nargs; i++) {
        int pi = k->rt_param[i];
        const RtParam *p = &k->params[pi];
        const tile_rt_arg *a = &args[i];
        RtValue *v = &la->vals[pi];
        if (p->is_pointer) {
            if (a->kind != TILE_RT_ARG_PTR)
                return rt_fail(rt, TILE_RT_ERR_ARGS,
                               "kernel '%s': argument %d '%s' is a "
                               "pointer (*%s), got %s",
                               k->name, i + 1, p->name, tile_scalar_name(p->scalar), kind_name(a->kind));
            uintptr_t u = (uintptr_t)a->buf.ptr;
            size_t el = tile_scalar_size(p->scalar);
            if (u % el)
                return rt_fail(rt, TILE_RT_ERR_ARGS,
                               "kernel '%s': pointer '%s' (%p) is not "
                               "aligned to its element size %zu",
                               k->name, p->name, a->buf.ptr, el);
            *v = (RtValue){.i = (int64_t)u};
            if (u % 16 == 0)
                la->f.div16 |= 1ull << pi;
            else if (u % 8 == 0)
                la->f.div8 |= 1ull << pi;
        } else if (tile_scalar_is_float(p->scalar)) {
            if (a->kind == TILE_RT_ARG_F64)
                *v = (RtValue){.is_float = true, .f = a->f64};
            else if (a->kind == TILE_RT_ARG_I64)
                *v = (RtValue){.is_float = true, .f = (double)a->i64};
            else
                return rt_fail(rt, TILE_RT_ERR_ARGS,
                               "kernel '%s': argument %d '%s' is a "
                               "float (%s), got %s",
                               k->name, i + 1, p->name, tile_scalar_name(p->scalar), kind_name(a->kind));
        } else {
            if (a->kind != TILE_RT_ARG_I64)
                return rt_fail(rt, TILE_RT_ERR_ARGS,
                               "kernel '%s': argument %d '%s' is an "
                               "integer (%s), got %s",
                               k->name, i + 1, p->name, tile_scalar_name(p->scalar), kind_name(a->kind));
            int64_t lo;
            uint64_t hi;
            if (!int_in_range(p->scalar, a->i64, &lo, &hi))
                return rt_fail(rt, TILE_RT_ERR_ARGS,
                               "kernel '%s': argument '%s' = %" PRId64 " is out of range for %s [%" PRId64 ", %" PRIu64
                               "]",
                               k->name, p->name, a->i64, tile_scalar_name(p->scalar), lo, hi);
            *v = (RtValue){.i = a->i64};
            if (p->scalar != TILE_BOOL) {
                if (a->i64 % 16 == 0)
                    la->f.div16 |= 1ull << pi;
                else if (a->i64 % 8 == 0)
                    la->f.div8 |= 1ull << pi;
                if (a->i64 == 1)
                    la->f.eq1 |= 1ull << pi;
            }
        }
    }
    return TILE_RT_OK;
}

/* ---- clauses ---------------------------------------------------------------------- */
/* -1: where clause i fails for variant v (or cannot be evaluated: err filled); else 1. */
static int where_holds(const RtKernelMeta *km, const RtVariant *v, const LaunchArgs *la, uint32_t *failed, char *err,
                       size_t n) {
    for (uint32_t i = 0; i < km->nwhere; i++) {
        RtValue r;
        if (!rt_expr_eval(&km->where[i].pred, km, v, la->vals, &r, err, n)) {
            *failed = i;
            return -2;
        }
        if (r.is_float ? r.f == 0 : r.i == 0) {
            *failed = i;
            return -1;
        }
    }
    return 1;
}

/* Whether variant v's constants agree with the const values set on k (bundles: a const
 * param is a constant name whose value each variant fixes). */
static bool consts_match(const tile_rt_kernel *k, const RtKernelMeta *km, const RtVariant *v) {
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (!k->params[i].is_const || !k->const_set[i])
            continue;
        for (uint32_t j = 0; j < km->ncnames; j++)
            if (!strcmp(km->cnames[j], k->params[i].name) &&
                v->cvals[j] != (v->cfloat[j] ? k->const_f[i] : (double)k->const_i[i]))
                return false;
    }
    for (int i = 0; i < k->npins; i++) {
        uint32_t j = 0;
        while (j < km->ncnames && strcmp(km->cnames[j], k->pin_name[i]))
            j++;
        if (j == km->ncnames || v->cvals[j] != (v->cfloat[j] ? k->pin_f[i] : (double)k->pin_i[i]))
            return false;
    }
    return true;
}

_Thread_local RtGridFn rt_grid_fn;

/* The grid of variant v from the launch's grid function: its constants by name. */
static tile_rt_status grid_from_fn(tile_rt_kernel *k, const RtVariant *v, int64_t g[3]) {
    const RtKernelMeta *km = k->meta;
    const char *names[RT_MAX_CONST_NAMES + 2];
    double values[RT_MAX_CONST_NAMES + 2];
    int n = 0;
    bool warps = false, stages = false;
    for (uint32_t i = 0; i < km->ncnames && n < RT_MAX_CONST_NAMES; i++, n++) {
        names[n] = km->cnames[i];
        values[n] = v->cvals[i];
        warps |= !strcmp(names[n], "warps");
        stages |= !strcmp(names[n], "stages");
    }
    if (!warps) {
        names[n] = "warps";
        values[n++] = v->warps;
    }
    if (!stages) {
        names[n] = "stages";
        values[n++] = v->stages;
    }
    if (rt_grid_fn.fn(rt_grid_fn.ud, n, names, values, g))
        return rt_fail(k->m->rt, TILE_RT_ERR_ARGS, "kernel '%s' (%s): the grid function failed", k->name, v->text);
    return TILE_RT_OK;
}

static tile_rt_status eval_grid(tile_rt_kernel *k, const RtVariant *v, const LaunchArgs *la, const int64_t *given,
                                int64_t g[3]) {
    const RtKernelMeta *km = k->meta;
    g[0] = g[1] = g[2] = 1;
    if (!given && rt_grid_fn.fn) {
        tile_rt_status s = grid_from_fn(k, v, g);
        if (s)
            return s;
    } else if (given) {
        for (int i = 0; i < 3; i++)
            g[i] = given[i] > 0 ? given[i] : (i == 0 ? given[0] : 1);
    } else if (!km->ngrid) {
        return rt_fail(k->m->rt, TILE_RT_ERR_ARGS,
                       "kernel '%s' has no grid clause: pass a "
                       "grid to the launch",
                       k->name);
    } else {
        for (uint32_t i = 0; i < km->ngrid; i++) {
            RtValue r;
            char err[160];
            if (!rt_expr_eval(&km->grid[i], km, v, la->vals, &r, err, sizeof err))
                return rt_fail(k->m->rt, TILE_RT_ERR_ARGS,
                               "kernel '%s': grid expression %u: "
                               "%s",
                               k->name, i, err);
            g[i] = r.is_float ? (int64_t)r.f : r.i;
        }
    }
    static const int64_t max[3] = {2147483647, 65535, 65535};
    for (int i = 0; i < 3; i++)
        if (g[i] < 0 || g[i] > max[i])
            return rt_fail(k->m->rt, TILE_RT_ERR_ARGS,
                           "kernel '%s' (%s): grid[%d] = %" PRId64 " is outside [0, %" PRId64 "]", k->name, v->text, i,
                           g[i], max[i]);
    return TILE_RT_OK;
}

/* ---- instances -------------------------------------------------------------------- */
/* Whether code for `arch` runs on the device: an 'a' arch only on its own; a cubin on the
 * same major with a minor no newer; PTX (JIT-compiled forward) on any device no older. */
static bool code_runs(const tile_rt *rt, const char *arch, bool is_ptx) {
    int maj, min;
    char suffix = 0;
    if (sscanf(arch, "sm_%1d%1d%c", &maj, &min, &suffix) < 2)
        return false;
    if (suffix == 'a')
        return maj == rt->cc_major && min == rt->cc_minor;
    if (is_ptx)
        return maj * 10 + min <= rt->cc_major * 10 + rt->cc_minor;
    return maj == rt->cc_major && min <= rt->cc_minor;
}

/* A bundle variant's uncapped cubin (code kind 3) that runs here, or NULL. */
static const RtCode *uncapped_code(tile_rt *rt, const RtVariant *v) {
    for (uint32_t i = 0; i < v->ncode; i++)
        if (v->code[i].kind == RT_CODE_CUBIN_UNCAPPED && code_runs(rt, v->code[i].arch, false))
            return &v->code[i];
    return NULL;
}

#ifdef TILE_RT_HAVE_CUDA
/* Loads a cubin or PTX image and looks the entry up (rt_internal.h). */
tile_rt_status rt_load_image(tile_rt_kernel *k, RtInstance *inst, const void *img, size_t len, bool is_ptx,
                             const char *entry) {
    tile_rt *rt = k->m->rt;
    tile_rt_status s = rt_cuda_bind(rt);
    if (s)
        return s;
    char *copy = NULL;
    if (is_ptx) {
        /* the driver reads PTX as a NUL-terminated string */
        copy = malloc(len + 1);
        if (!copy)
            return rt_fail(rt, TILE_RT_ERR_INVALID, "out of memory");
        memcpy(copy, img, len);
        copy[len] = 0;
        img = copy;
    }
    char log[4096] = "";
    CUjit_option opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
    CUresult r = rt->cu.cuModuleLoadDataEx(&inst->mod, img, 2, opts, vals);
    free(copy);
    if (r != CUDA_SUCCESS) {
        inst->mod = NULL;
        return rt_cuda_fail(rt, r, "cuModuleLoadDataEx",
                            "kernel '%s' variant %s: loading its "
                            "%s%s%s",
                            k->name, inst->text, is_ptx ? "PTX" : "cubin", log[0] ? ": " : "", log);
    }
    r = rt->cu.cuModuleGetFunction(&inst->fn, inst->mod, entry);
    if (r != CUDA_SUCCESS)
        return rt_cuda_fail(rt, r, "cuModuleGetFunction", "kernel '%s' variant %s: entry '%s'", k->name, inst->text,
                            entry);
    /* Dynamic shared memory: what the variant's record says, or what the module itself
     * says in tilec_dynamic_smem (the backend defines it when its scratch is past the 48 KiB
     * of static shared memory: JIT compiles have no record of it). */
    inst->smem = inst->v->smem_bytes;
    CUdeviceptr dp;
    size_t dbytes = 0;
    if (rt->cu.cuModuleGetGlobal(&dp, &dbytes, inst->mod, "tilec_dynamic_smem") == CUDA_SUCCESS && dbytes == 4) {
        uint32_t dyn = 0;
        r = rt->cu.cuMemcpyDtoH(&dyn, dp, 4);
        if (r != CUDA_SUCCESS)
            return rt_cuda_fail(rt, r, "cuMemcpyDtoH", "kernel '%s' variant %s: reading its shared memory size",
                                k->name, inst->text);
        if (dyn > inst->smem)
            inst->smem = dyn;
    }
    if (inst->smem > 48 * 1024) {
        r = rt->cu.cuFuncSetAttribute(inst->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)inst->smem);
        if (r != CUDA_SUCCESS)
            return rt_cuda_fail(rt, r, "cuFuncSetAttribute",
                                "kernel '%s' variant %s: %u bytes "
                                "of dynamic shared memory",
                                k->name, inst->text, inst->smem);
    }
    return TILE_RT_OK;
}

/* job: the result of this instance's compile from a parallel batch, else NULL (compile
 * now). */
static tile_rt_status build_instance(tile_rt_kernel *k, RtInstance *inst, RtJitJob *job) {
    tile_rt *rt = k->m->rt;
    const RtVariant *v = inst->v;
    if (job) {
        if (job->s != TILE_RT_OK)
            return rt_fail(rt, job->s, "%s", job->err);
        if (inst->alt >= job->ncubin)
            return rt_fail(rt, TILE_RT_ERR_INVALID, "kernel '%s' variant %s: no cubin %d", k->name, inst->text,
                           inst->alt);
        return rt_load_image(k, inst, job->cubin[inst->alt], job->len[inst->alt], false, k->name);
    }
    if (k->m->prog) {
        char *cubin[RT_MAX_CUBINS];
        size_t len[RT_MAX_CUBINS];
        int n = 0;
        tile_rt_status s = rt_jit_compile(k->m, k->index, inst->variant, inst->f, cubin, len, &n);
        if (s == TILE_RT_OK && inst->alt >= n)
            s = rt_fail(rt, TILE_RT_ERR_INVALID, "kernel '%s' variant %s: no cubin %d", k->name, inst->text, inst->alt);
        if (s == TILE_RT_OK)
            s = rt_load_image(k, inst, cubin[inst->alt], len[inst->alt], false, k->name);
        for (int i = 0; i < n; i++)
            free(cubin[i]);
        return s;
    }
    /* the uncapped cubin for that instance; else a cubin, else PTX */
    const RtCode *best = inst->alt ? uncapped_code(rt, v) : NULL;
    for (uint32_t i = 0; i < v->ncode && !best && !inst->alt; i++)
        if (v->code[i].kind == RT_CODE_CUBIN && code_runs(rt, v->code[i].arch, false))
            best = &v->code[i];
    for (uint32_t i = 0; i < v->ncode && !best && !inst->alt; i++)
        if (v->code[i].kind == RT_CODE_PTX && code_runs(rt, v->code[i].arch, true))
            best = &v->code[i];
    if (!best)
        return rt_fail(rt, TILE_RT_ERR_UNSUPPORTED,
                       "kernel '%s' variant %s: the bundle has no "
                       "code for %s",
                       k->name, inst->text, rt->arch);
    return rt_load_image(k, inst, best->bytes, best->len, best->kind == RT_CODE_PTX, best->entry);
}
#endif

static void instance_text(const tile_rt_kernel *k, RtInstance *inst) {
    size_t n = (size_t)snprintf(inst->text, sizeof inst->text, "%s", inst->v->text);
    const char *tag[3] = {"div16", "div8", "eq1"};
    uint64_t masks[3] = {inst->f.div16, inst->f.div8, inst->f.eq1};
    for (int f = 0; f < 3; f++) {
        if (!masks[f] || n >= sizeof inst->text)
            continue;
        n += (size_t)snprintf(inst->text + n, sizeof inst->text - n, "; %s:", tag[f]);
        for (uint32_t i = 0; i < k->nparams && n < sizeof inst->text; i++)
            if (masks[f] >> i & 1)
                n += (size_t)snprintf(inst->text + n, sizeof inst->text - n, " %s", k->params[i].name);
    }
    if (inst->alt && n < sizeof inst->text)
        snprintf(inst->text + n, sizeof inst->text - n, "; registers uncapped");
}

/* The existing instance of variant vi under facts f from its compile's cubin alt, or
 * NULL.  Caller holds k->lock. */
static RtInstance *find_instance(tile_rt_kernel *k, uint32_t vi, RtFacts f, int alt) {
    for (RtInstance *i = k->instances; i; i = i->next)
        if (i->variant == vi && rt_facts_eq(i->f, f) && i->alt == alt && (i->epoch == k->meta_epoch || !k->m->prog))
            return i;
    return NULL;
}

/* The instance of variant vi under facts f from its compile's cubin alt, made and loaded
 * on first need (from job's cubins when a batch compiled it).  Caller holds k->lock. */
static tile_rt_status get_instance(tile_rt_kernel *k, uint32_t vi, RtFacts f, int alt, RtJitJob *job,
                                   RtInstance **out) {
    uint64_t epoch = k->meta_epoch;
    RtInstance *found = find_instance(k, vi, f, alt);
    if (found) {
        *out = found;
        return found->failed ? rt_fail(k->m->rt, TILE_RT_ERR_COMPILE,
                                       "kernel '%s' variant %s "
                                       "failed to build earlier",
                                       k->name, found->text)
                             : TILE_RT_OK;
    }
    RtInstance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return rt_fail(k->m->rt, TILE_RT_ERR_INVALID, "out of memory");
    inst->variant = vi;
    inst->f = f;
    inst->alt = alt;
    inst->epoch = epoch;
    inst->v = &k->meta->variants[vi];
    instance_text(k, inst);
    tile_rt_status s = TILE_RT_ERR_UNSUPPORTED;
#ifdef TILE_RT_HAVE_CUDA
    double t0 = rt_now();
    s = build_instance(k, inst, job);
    inst->compile_s = (job ? job->seconds : 0) + rt_now() - t0;
#else
    (void)job;
#endif
    inst->failed = s != TILE_RT_OK;
    inst->next = k->instances;
    k->instances = inst;
    *out = inst;
    return s;
}

/* ---- choosing ---------------------------------------------------------------------- */
static uint64_t key_of(const tile_rt_kernel *k, const LaunchArgs *la, int64_t *vals) {
    const RtKernelMeta *km = k->meta;
    uint64_t h = RT_FNV_BASIS;
    for (uint32_t i = 0; i < km->nkey; i++) {
        vals[i] = la->vals[km->key[i]].i;
        h = rt_fnv1a(h, &vals[i], sizeof vals[i]);
    }
    h = rt_fnv1a(h, &la->f.div16, sizeof la->f.div16);
    if (la->f.div8) /* keys without div8 facts hash as they did (the tuner's disk cache) */
        h = rt_fnv1a(h, &la->f.div8, sizeof la->f.div8);
    return rt_fnv1a(h, &la->f.eq1, sizeof la->f.eq1);
}

static bool choice_matches(const RtChoice *c, uint64_t keyhash, const tile_rt_kernel *k, const LaunchArgs *la,
                           const int64_t *keyvals, uint64_t epoch) {
    return c && c->keyhash == keyhash && c->epoch == epoch && rt_facts_eq(c->f, la->f) && c->nkey == k->meta->nkey &&
           !memcmp(c->keyvals, keyvals, c->nkey * sizeof *keyvals);
}

/* The message for "no variant": the first where clause that no variant passes, else
 * the first one variant 0 fails. */
static tile_rt_status no_variant(tile_rt_kernel *k, const LaunchArgs *la) {
    const RtKernelMeta *km = k->meta;
    char err[160] = "";
    for (uint32_t w = 0; w < km->nwhere; w++) {
        bool any = false;
        for (uint32_t vi = 0; vi < km->nvariants && !any; vi++) {
            RtValue r;
            if (consts_match(k, km, &km->variants[vi]) &&
                rt_expr_eval(&km->where[w].pred, km, &km->variants[vi], la->vals, &r, err, sizeof err))
                any = r.is_float ? r.f != 0 : r.i != 0;
        }
        if (!any)
            return rt_fail(k->m->rt, TILE_RT_ERR_NO_VARIANT,
                           "kernel '%s': no variant admits "
                           "these arguments: 'where %s' (%s) holds for none of its %u "
                           "variants%s%s",
                           k->name, km->where[w].text, km->where[w].loc, km->nvariants, err[0] ? ": " : "", err);
    }
    return rt_fail(k->m->rt, TILE_RT_ERR_NO_VARIANT,
                   "kernel '%s': no variant admits these "
                   "arguments (no variant matches the const values and specialization)",
                   k->name);
}

/* How specialized a set of facts is, to pick among a bundle's records: a div16 or eq1
 * fact counts twice a div8 one. */
static int facts_weight(RtFacts f) {
    return 2 * __builtin_popcountll(f.div16 | f.eq1) + __builtin_popcountll(f.div8);
}

/* $TILE_TUNE_POLICY (tune_log.c): which admissible variants a tuning compiles and times.
 * NULL: all of them (the default policy, or out of memory); else skip[vi]. */
static bool *policy_skips(tile_rt_kernel *k, const LaunchArgs *la) {
    const RtKernelMeta *km = k->meta;
    if (!strcmp(rt_tune_policy_name(), "exhaustive"))
        return NULL;
    uint32_t *vis = malloc(km->nvariants * sizeof *vis);
    bool *keep = calloc(km->nvariants, sizeof *keep), *skip = calloc(km->nvariants, sizeof *skip);
    int n = 0;
    for (uint32_t vi = 0; vis && keep && skip && vi < km->nvariants; vi++) {
        uint32_t failed;
        char err[160];
        if (consts_match(k, km, &km->variants[vi]) &&
            where_holds(km, &km->variants[vi], la, &failed, err, sizeof err) > 0)
            vis[n++] = vi;
    }
    if (vis && keep && skip) {
        rt_tune_policy_pick(k, vis, n, keep);
        for (int i = 0; i < n; i++)
            skip[vis[i]] = !keep[i];
    } else {
        free(skip);
        skip = NULL;
    }
    free(vis);
    free(keep);
    return skip;
}

/* Admissible variants for this launch, as instances; the bundle's masks must be implied
 * by the launch's facts; the JIT compiles under the launch's facts. */
static tile_rt_status candidates(tile_rt_kernel *k, const LaunchArgs *la, bool all, RtInstance ***out, int *n) {
    const RtKernelMeta *km = k->meta;
    /* each variant: its cubin, and for the JIT the uncapped one where there is one */
    RtInstance **c = calloc(RT_MAX_CUBINS * km->nvariants + 1, sizeof *c);
    if (!c)
        return rt_fail(k->m->rt, TILE_RT_ERR_INVALID, "out of memory");
    int nc = 0;
    bool jit = k->m->prog != NULL;
    tile_rt_status last = TILE_RT_OK;
    /* The JIT compiles every admissible variant not built yet in one parallel batch
     * first; the loop below then only loads the cubins. */
    RtJitJob *jobs = NULL;
    int *job_of = NULL, njobs = 0;
    bool *skip = all ? policy_skips(k, la) : NULL;
    if (jit && all) {
        jobs = calloc(km->nvariants, sizeof *jobs);
        job_of = malloc(km->nvariants * sizeof *job_of);
        for (uint32_t vi = 0; jobs && job_of && vi < km->nvariants; vi++) {
            uint32_t failed;
            char err[160];
            job_of[vi] = -1;
            if ((skip && skip[vi]) || where_holds(km, &km->variants[vi], la, &failed, err, sizeof err) < 0 ||
                find_instance(k, vi, la->f, 0))
                continue;
            job_of[vi] = njobs;
            jobs[njobs++] = (RtJitJob){.m = k->m, .k = k->index, .vi = vi, .f = la->f};
        }
        if (!jobs || !job_of)
            njobs = 0; /* out of memory: compile one by one below */
        rt_jit_compile_many(k->m->rt, jobs, njobs);
    }
    /* bundles: for each variant text keep only the most specialized admissible one */
    for (uint32_t vi = 0; vi < km->nvariants && (all || nc == 0 || !jit); vi++) {
        const RtVariant *v = &km->variants[vi];
        if (skip && skip[vi])
            continue;
        /* a div8 fact holds for an argument divisible by 16 too */
        if (!jit && (((v->div16 & ~la->f.div16) | (v->div8 & ~(la->f.div8 | la->f.div16)) | (v->eq1 & ~la->f.eq1)) ||
                     !consts_match(k, km, v)))
            continue;
        uint32_t failed;
        char err[160];
        if (where_holds(km, v, la, &failed, err, sizeof err) < 0)
            continue;
        int dup = -1;
        for (int j = 0; j < nc && !jit; j++)
            if (!strcmp(c[j]->v->text, v->text))
                dup = j;
        RtFacts f = jit ? la->f : (RtFacts){v->div16, v->div8, v->eq1};
        if (dup >= 0 && facts_weight(c[dup]->f) >= facts_weight(f))
            continue;
        RtInstance *inst = NULL;
        RtJitJob *job = njobs && job_of[vi] >= 0 ? &jobs[job_of[vi]] : NULL;
        tile_rt_status s = get_instance(k, vi, f, 0, job, &inst);
        if (s != TILE_RT_OK) {
            last = s; /* a variant that does not build is skipped, others may */
            continue;
        }
        if (dup >= 0)
            c[dup] = inst;
        else
            c[nc++] = inst;
        /* the JIT's uncapped cubin of the same compile, a candidate of its own */
        if (jit && all && ((job && job->ncubin > 1) || (!job && find_instance(k, vi, f, 1)))) {
            RtInstance *alt = NULL;
            if (get_instance(k, vi, f, 1, job, &alt) == TILE_RT_OK)
                c[nc++] = alt;
        }
    }
    /* bundles: a variant's uncapped cubin is a candidate of its own too */
    for (int j = 0, n0 = nc; j < n0 && !jit && all && k->m->rt->kind == TILE_RT_CUDA; j++) {
        RtInstance *alt = NULL;
        if (uncapped_code(k->m->rt, c[j]->v) && get_instance(k, c[j]->variant, c[j]->f, 1, NULL, &alt) == TILE_RT_OK)
            c[nc++] = alt;
    }
    for (int j = 0; j < njobs; j++)
        for (int i = 0; i < jobs[j].ncubin; i++)
            free(jobs[j].cubin[i]);
    free(jobs);
    free(job_of);
    free(skip);
    if (nc == 0) {
        free(c);
        *out = NULL;
        *n = 0;
        return last != TILE_RT_OK ? last : no_variant(k, la);
    }
    *out = c;
    *n = nc;
    return TILE_RT_OK;
}

/* The slow path: find or make the choice for this key.  Takes k->lock. */
static tile_rt_status choose(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, const LaunchArgs *la,
                             uint64_t keyhash, const int64_t *keyvals, void *stream, const int64_t *grid,
                             RtChoice **out) {
    tile_rt *rt = k->m->rt;
    pthread_mutex_lock(&k->lock);
    tile_rt_status s = TILE_RT_OK;
    if (k->m->prog)
        s = rt_source_meta(k);
    else
        k->meta_epoch = atomic_load(&k->epoch); /* bundles: the record never changes */
    uint64_t epoch = k->meta_epoch;
    for (RtChoice *c = k->choices; c && s == TILE_RT_OK; c = c->next)
        if (choice_matches(c, keyhash, k, la, keyvals, epoch)) {
            atomic_store(&k->last, c);
            *out = c;
            pthread_mutex_unlock(&k->lock);
            return TILE_RT_OK;
        }
    RtInstance **cands = NULL;
    int nc = 0;
    if (s == TILE_RT_OK)
        s = candidates(k, la, rt->tune, &cands, &nc);
    RtInstance *best = nc ? cands[0] : NULL;
    if (s == TILE_RT_OK && nc > 1 && rt->tune) {
        char text[320] = "";
        bool found = false;
        if (rt_tune_disk_get(k, keyhash, text, sizeof text))
            for (int i = 0; i < nc && !found; i++)
                if (!strcmp(cands[i]->text, text)) {
                    best = cands[i];
                    found = true;
                    atomic_fetch_add(&rt->stats.tune_disk_hits, 1);
                }
        /* a choice of the joint search over ptxas options: its instance made again */
        if (!found && rt_tune_ptxas_restore(k, cands, nc, text, &best)) {
            found = true;
            atomic_fetch_add(&rt->stats.tune_disk_hits, 1);
        }
        if (!found) {
            s = rt_tune(k, cands, nc, args, nargs, stream, grid, &best);
            if (s == TILE_RT_OK)
                s = rt_tune_ptxas(k, best, args, nargs, stream, grid, &best);
            if (s == TILE_RT_OK) {
                atomic_fetch_add(&rt->stats.tunings, 1);
                rt_tune_disk_put(k, keyhash, best->text);
            }
        }
    }
    free(cands);
    RtChoice *c = NULL;
    if (s == TILE_RT_OK && !(c = calloc(1, sizeof *c)))
        s = rt_fail(rt, TILE_RT_ERR_INVALID, "out of memory");
    if (s == TILE_RT_OK) {
        c->keyhash = keyhash;
        c->f = la->f;
        c->epoch = epoch;
        c->nkey = k->meta->nkey;
        memcpy(c->keyvals, keyvals, c->nkey * sizeof *keyvals);
        c->inst = best;
        c->next = k->choices;
        k->choices = c;
        atomic_store(&k->last, c);
        *out = c;
    }
    pthread_mutex_unlock(&k->lock);
    return s;
}

/* ---- precompiling ---------------------------------------------------------------- */
/* The facts a precompile assumes: every pointer 16-byte aligned (device allocations are),
 * nothing about integers. */
static uint64_t pointer_facts(const tile_rt_kernel *k) {
    uint64_t m = 0;
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->params[i].is_pointer)
            m |= 1ull << i;
    return m;
}

tile_rt_status tile_rt_precompile(tile_rt_module *const *mods, int nmods, unsigned flags, int *nbuilt, int *nfailed) {
    if (nbuilt)
        *nbuilt = 0;
    if (nfailed)
        *nfailed = 0;
    if (nmods < 0 || (!mods && nmods))
        return TILE_RT_ERR_INVALID;
    if (!nmods)
        return TILE_RT_OK;
    tile_rt *rt = mods[0] ? mods[0]->rt : NULL;
    if (!rt)
        return TILE_RT_ERR_INVALID;
    int cap = 0;
    for (int i = 0; i < nmods; i++) {
        if (!mods[i] || mods[i]->rt != rt)
            return rt_fail(rt, TILE_RT_ERR_INVALID,
                           "tile_rt_precompile: the modules must be "
                           "non-NULL and of one device");
        if (mods[i]->prog)
            for (int j = 0; j < mods[i]->nkernels; j++)
                cap += (flags & TILE_RT_PRECOMPILE_ALL) ? 0 : 1;
    }
    tile_rt_status first = TILE_RT_OK;
    /* the metadata of every kernel whose const values are all set, then the jobs */
    for (int i = 0; i < nmods; i++)
        for (int j = 0; mods[i]->prog && j < mods[i]->nkernels; j++) {
            tile_rt_kernel *k = &mods[i]->kernels[j];
            bool consts = true;
            for (uint32_t p = 0; p < k->nparams; p++)
                consts = consts && (!k->params[p].is_const || k->const_set[p]);
            if (!consts)
                continue;
            pthread_mutex_lock(&k->lock);
            tile_rt_status s = rt_source_meta(k);
            if (s == TILE_RT_OK && (flags & TILE_RT_PRECOMPILE_ALL))
                cap += (int)k->meta->nvariants;
            pthread_mutex_unlock(&k->lock);
            if (s != TILE_RT_OK && first == TILE_RT_OK)
                first = s;
        }
    RtJitJob *jobs = calloc((size_t)cap + 1, sizeof *jobs);
    if (!jobs)
        return rt_fail(rt, TILE_RT_ERR_INVALID, "out of memory");
    int n = 0;
    for (int i = 0; i < nmods; i++)
        for (int j = 0; mods[i]->prog && j < mods[i]->nkernels; j++) {
            tile_rt_kernel *k = &mods[i]->kernels[j];
            pthread_mutex_lock(&k->lock);
            if (k->meta && k->meta_epoch == atomic_load(&k->epoch)) {
                uint32_t nv = (flags & TILE_RT_PRECOMPILE_ALL) ? k->meta->nvariants : 1;
                uint64_t d16 = pointer_facts(k);
                for (uint32_t vi = 0; vi < nv && vi < k->meta->nvariants && n < cap; vi++)
                    if (!find_instance(k, vi, (RtFacts){d16, 0, 0}, 0))
                        jobs[n++] = (RtJitJob){.m = mods[i], .k = j, .vi = vi, .f = {d16, 0, 0}};
            }
            pthread_mutex_unlock(&k->lock);
        }
    rt_jit_compile_many(rt, jobs, n);
    int built = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        RtJitJob *job = &jobs[i];
        tile_rt_kernel *k = &job->m->kernels[job->k];
        tile_rt_status s = job->s;
        if (s == TILE_RT_OK && rt->kind == TILE_RT_CUDA) {
            /* load it now, so the first launch under these facts finds it */
            RtInstance *inst;
            pthread_mutex_lock(&k->lock);
            for (int a = 0; a < job->ncubin && s == TILE_RT_OK; a++)
                s = get_instance(k, job->vi, job->f, a, job, &inst);
            pthread_mutex_unlock(&k->lock);
        } else if (s != TILE_RT_OK) {
            rt_fail(rt, s, "%s", job->err);
        }
        if (s == TILE_RT_OK) {
            built++;
        } else {
            failed++;
            if (first == TILE_RT_OK)
                first = s;
        }
        for (int a = 0; a < job->ncubin; a++)
            free(job->cubin[a]);
    }
    free(jobs);
    if (nbuilt)
        *nbuilt = built;
    if (nfailed)
        *nfailed = failed;
    return first;
}

/* ---- launching ------------------------------------------------------------------- */
/* Packs one argument as the kernel's parameter type into an 8-byte slot. */
static void pack(const RtParam *p, const RtValue *v, uint64_t *slot) {
    *slot = 0;
    if (!tile_scalar_is_float(p->scalar) || p->is_pointer) {
        memcpy(slot, &v->i, sizeof v->i); /* little-endian: the low bytes are the value */
    } else if (p->scalar == TILE_F64) {
        memcpy(slot, &v->f, sizeof v->f);
    } else if (p->scalar == TILE_F32) {
        float f = (float)v->f;
        memcpy(slot, &f, sizeof f);
    } else {
        tile_store_elements(p->scalar, slot, &v->f, 1);
    }
}

tile_rt_status rt_launch_instance(tile_rt_kernel *k, RtInstance *inst, const tile_rt_arg *args, const RtValue *vals,
                                  void *stream, const int64_t *grid_given) {
#ifdef TILE_RT_HAVE_CUDA
    tile_rt *rt = k->m->rt;
    LaunchArgs la;
    memcpy(la.vals, vals, k->nparams * sizeof *vals);
    int64_t g[3];
    tile_rt_status s = eval_grid(k, inst->v, &la, grid_given, g);
    if (s)
        return s;
    k->last_info = (tile_rt_launch_info){.grid = {g[0], g[1], g[2]},
                                         .threads = (int)inst->v->warps * 32,
                                         .flops_per_program = inst->v->flops,
                                         .bytes_per_program = inst->v->bytes};
    atomic_store(&k->last_variant, inst->text);
    if (!g[0] || !g[1] || !g[2])
        return TILE_RT_OK;
    uint64_t slots[RT_MAX_PARAMS];
    void *ptrs[RT_MAX_PARAMS];
    for (int i = 0; i < k->nrt; i++) {
        int pi = k->rt_param[i];
        pack(&k->params[pi], &vals[pi], &slots[i]);
        ptrs[i] = &slots[i];
    }
    if ((s = rt_cuda_bind(rt)))
        return s;
    CUresult r = rt->cu.cuLaunchKernel(inst->fn, (unsigned)g[0], (unsigned)g[1], (unsigned)g[2], inst->v->warps * 32, 1,
                                       1, inst->smem, (CUstream)stream, ptrs, NULL);
    if (r != CUDA_SUCCESS)
        return rt_cuda_fail(rt, r, "cuLaunchKernel",
                            "kernel '%s' variant %s, grid (%" PRId64 ", %" PRId64 ", %" PRId64 ")", k->name, inst->text,
                            g[0], g[1], g[2]);
    return TILE_RT_OK;
#else
    (void)k, (void)inst, (void)args, (void)vals, (void)stream, (void)grid_given;
    return TILE_RT_ERR_UNSUPPORTED;
#endif
}

tile_rt_status tile_rt_launch(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, void *stream,
                              const int64_t *grid) {
    if (!k)
        return TILE_RT_ERR_INVALID;
    tile_rt *rt = k->m->rt;
    LaunchArgs la;
    tile_rt_status s = check_args(k, args, nargs, &la);
    if (s)
        return s;
    if (rt->kind == TILE_RT_INTERP)
        return rt_interp_launch(k, args, nargs, grid);
    uint64_t epoch = atomic_load(&k->epoch);
    RtChoice *c = atomic_load(&k->last);
    int64_t keyvals[RT_MAX_PARAMS];
    uint64_t keyhash = 0;
    if (c && k->meta && c->epoch == epoch)
        keyhash = key_of(k, &la, keyvals);
    if (!c || !k->meta || !choice_matches(c, keyhash, k, &la, keyvals, epoch)) {
        if (k->m->prog) {
            pthread_mutex_lock(&k->lock);
            s = rt_source_meta(k);
            pthread_mutex_unlock(&k->lock);
            if (s)
                return s;
        }
        keyhash = key_of(k, &la, keyvals);
        if ((s = choose(k, args, nargs, &la, keyhash, keyvals, stream, grid, &c)))
            return s;
    }
    RtInstance *inst = c->inst;
    /* The key need not cover every argument a where clause reads: re-check the chosen
     * variant, and take the first admissible one for this launch when it fails. */
    if (k->meta->nwhere) {
        uint32_t failed;
        char err[160];
        if (where_holds(k->meta, inst->v, &la, &failed, err, sizeof err) < 0) {
            RtInstance **cands;
            int nc;
            pthread_mutex_lock(&k->lock);
            s = candidates(k, &la, false, &cands, &nc);
            pthread_mutex_unlock(&k->lock);
            if (s)
                return s;
            inst = cands[0];
            free(cands);
        }
    }
    return rt_launch_instance(k, inst, args, la.vals, stream, grid);
}

tile_rt_status tile_rt_launch_grid_fn(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, void *stream,
                                      tile_rt_grid_fn fn, void *ud) {
    if (!k || !fn)
        return TILE_RT_ERR_INVALID;
    RtGridFn saved = rt_grid_fn;
    rt_grid_fn = (RtGridFn){fn, ud};
    tile_rt_status s = tile_rt_launch(k, args, nargs, stream, NULL);
    rt_grid_fn = saved;
    return s;
}

/* ---- benchmarking ---------------------------------------------------------------- */
static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double rt_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

tile_rt_status tile_rt_bench(tile_rt_kernel *k, const tile_rt_arg *args, int nargs, const int64_t *grid, int warmup,
                             int reps, double *median_ms) {
    if (!k || !median_ms || reps <= 0 || warmup < 0)
        return k ? rt_fail(k->m->rt, TILE_RT_ERR_INVALID, "tile_rt_bench: bad reps/warmup") : TILE_RT_ERR_INVALID;
    tile_rt *rt = k->m->rt;
    double *t = calloc((size_t)reps, sizeof *t);
    if (!t)
        return rt_fail(rt, TILE_RT_ERR_INVALID, "out of memory");
    tile_rt_status s = TILE_RT_OK;
    for (int i = 0; i < warmup + 1 && s == TILE_RT_OK; i++)
        s = tile_rt_launch(k, args, nargs, NULL, grid);
    if (rt->kind == TILE_RT_INTERP) {
        for (int i = 0; i < reps && s == TILE_RT_OK; i++) {
            double t0 = rt_now();
            s = tile_rt_launch(k, args, nargs, NULL, grid);
            t[i] = (rt_now() - t0) * 1e3;
        }
    }
#ifdef TILE_RT_HAVE_CUDA
    else if (s == TILE_RT_OK) {
        CUevent e0 = NULL, e1 = NULL;
        CUresult r = rt->cu.cuEventCreate(&e0, CU_EVENT_DEFAULT);
        if (r == CUDA_SUCCESS)
            r = rt->cu.cuEventCreate(&e1, CU_EVENT_DEFAULT);
        if (r != CUDA_SUCCESS)
            s = rt_cuda_fail(rt, r, "cuEventCreate", "benchmarking '%s'", k->name);
        for (int i = 0; i < reps && s == TILE_RT_OK; i++) {
            float ms = 0;
            rt->cu.cuEventRecord(e0, NULL);
            s = tile_rt_launch(k, args, nargs, NULL, grid);
            rt->cu.cuEventRecord(e1, NULL);
            if (s == TILE_RT_OK && (r = rt->cu.cuEventSynchronize(e1)) != CUDA_SUCCESS)
                s = rt_cuda_fail(rt, r, "cuEventSynchronize", "kernel '%s' variant %s", k->name,
                                 tile_rt_last_variant(k));
            if (s == TILE_RT_OK)
                rt->cu.cuEventElapsedTime(&ms, e0, e1);
            t[i] = ms;
        }
        if (e0)
            rt->cu.cuEventDestroy(e0);
        if (e1)
            rt->cu.cuEventDestroy(e1);
    }
#endif
    if (s == TILE_RT_OK)
        *median_ms = rt_median(t, reps);
    free(t);
    return s;
}
