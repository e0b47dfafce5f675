/* Modules: bundles (ahead of time) and .tile sources (just in time through the compiler
 * library), their kernels, and the const values set on them. */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the compiler's messages ----------------------------------------------------- */
typedef struct DiagBuf {
    char text[8192];
    size_t len;
} DiagBuf;

static void diag_collect(void *ud, const char *msg) {
    DiagBuf *d = ud;
    int w = snprintf(d->text + d->len, sizeof d->text - d->len, "%s%s", d->len ? "\n" : "", msg);
    if (w > 0)
        d->len = d->len + (size_t)w < sizeof d->text ? d->len + (size_t)w : sizeof d->text - 1;
}

/* ---- kernels ---------------------------------------------------------------------- */
static tile_rt_status init_kernel(tile_rt_module *m, tile_rt_kernel *k, int index, const char *name, RtParam *params,
                                  uint32_t nparams) {
    k->m = m;
    k->index = index;
    k->name = name;
    k->params = params;
    k->nparams = nparams;
    if (nparams > RT_MAX_PARAMS)
        return rt_fail(m->rt, TILE_RT_ERR_UNSUPPORTED,
                       "kernel '%s' has %u parameters; the "
                       "runtime takes at most %d",
                       name, nparams, RT_MAX_PARAMS);
    for (uint32_t i = 0; i < nparams; i++)
        if (!params[i].is_const)
            k->rt_param[k->nrt++] = (uint16_t)i;
    pthread_mutex_init(&k->lock, NULL);
    return TILE_RT_OK;
}

static void free_kernel(tile_rt_module *m, tile_rt_kernel *k) {
    RtInstance *inst = k->instances;
    while (inst) {
        RtInstance *next = inst->next;
#ifdef TILE_RT_HAVE_CUDA
        if (inst->mod && m->rt->kind == TILE_RT_CUDA) {
            rt_cuda_bind(m->rt);
            m->rt->cu.cuModuleUnload(inst->mod);
        }
#endif
        free(inst);
        inst = next;
    }
    RtChoice *c = k->choices;
    while (c) {
        RtChoice *next = c->next;
        free(c);
        c = next;
    }
    rt_bundle_free(k->meta_bundle);
    RtBundle *r = k->retired;
    while (r) {
        RtBundle *next = (RtBundle *)r->producer; /* chained through producer, see retire */
        rt_bundle_free(r);
        r = next;
    }
    for (int i = 0; i < k->npins; i++)
        free(k->pin_name[i]);
    pthread_mutex_destroy(&k->lock);
}

void tile_rt_module_free(tile_rt_module *m) {
    if (!m)
        return;
    for (int i = 0; i < m->nkernels; i++) {
        free_kernel(m, &m->kernels[i]);
        if (m->prog)
            free(m->kernels[i].params);
    }
    free(m->kernels);
    rt_bundle_free(m->bundle);
    tile_program_free(m->prog);
    tile_ctx_free(m->tctx);
    rt_jit_free_pool(m);
    pthread_mutex_destroy(&m->jit_lock);
    pthread_mutex_destroy(&m->pool_lock);
    free(m->source);
    free(m->name);
    free(m);
}

static tile_rt_module *module_new(tile_rt *rt, const char *name) {
    tile_rt_module *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->rt = rt;
    m->name = strdup(name ? name : "<memory>");
    pthread_mutex_init(&m->jit_lock, NULL);
    pthread_mutex_init(&m->pool_lock, NULL);
    return m;
}

/* ---- bundles --------------------------------------------------------------------- */
tile_rt_status tile_rt_load_bundle(tile_rt *rt, const void *data, size_t len, tile_rt_module **out) {
    if (!rt || !out)
        return TILE_RT_ERR_INVALID;
    return tile_rt_load_bundle_named(rt, "<memory>", data, len, out);
}

tile_rt_status tile_rt_load_bundle_named(tile_rt *rt, const char *name, const void *data, size_t len,
                                         tile_rt_module **out) {
    if (!rt || !out)
        return TILE_RT_ERR_INVALID;
    *out = NULL;
    char err[600];
    RtBundle *b;
    tile_rt_status s = rt_bundle_parse(name, data, len, &b, err, sizeof err);
    if (s != TILE_RT_OK)
        return rt_fail(rt, s, "%s", err);
    if (rt->kind == TILE_RT_INTERP) {
        rt_bundle_free(b);
        return rt_fail(rt, TILE_RT_ERR_UNSUPPORTED,
                       "bundle '%s': the interpreter device runs "
                       ".tile sources only (a bundle carries GPU code)",
                       name);
    }
    tile_rt_module *m = module_new(rt, name);
    if (!m || !(m->kernels = calloc(b->nkernels + 1, sizeof *m->kernels))) {
        rt_bundle_free(b);
        tile_rt_module_free(m);
        return rt_fail(rt, TILE_RT_ERR_INVALID, "out of memory");
    }
    m->bundle = b;
    for (uint32_t i = 0; i < b->nkernels; i++) {
        RtKernelMeta *km = &b->kernels[i];
        s = init_kernel(m, &m->kernels[i], (int)i, km->name, km->params, km->nparams);
        m->nkernels = (int)i + 1;
        m->kernels[i].meta = km;
        if (s != TILE_RT_OK) {
            tile_rt_module_free(m);
            return s;
        }
    }
    *out = m;
    return TILE_RT_OK;
}

/* A whole bundle or source file: *data malloc'd, *len its size; errors name the file (a
 * bundle as "bundle 'PATH'").  A read error fails rather than giving a shorter file. */
static tile_rt_status read_whole_file(tile_rt *rt, const char *path, bool bundle, char **data_out, size_t *len_out) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return bundle ? rt_fail(rt, TILE_RT_ERR_IO, "bundle '%s': cannot open it", path)
                      : rt_fail(rt, TILE_RT_ERR_IO, "cannot open '%s'", path);
    const char *kind = bundle ? "bundle " : "";
    char *data = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            char *g = realloc(data, cap);
            if (!g) {
                free(data);
                fclose(f);
                return rt_fail(rt, TILE_RT_ERR_IO, "%s'%s': out of memory", kind, path);
            }
            data = g;
        }
        size_t n = fread(data + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    bool bad = ferror(f);
    fclose(f);
    if (bad) {
        free(data);
        return rt_fail(rt, TILE_RT_ERR_IO, "%s'%s': read error", kind, path);
    }
    *data_out = data;
    *len_out = len;
    return TILE_RT_OK;
}

tile_rt_status tile_rt_load_bundle_file(tile_rt *rt, const char *path, tile_rt_module **out) {
    if (!rt || !path || !out)
        return TILE_RT_ERR_INVALID;
    *out = NULL;
    char *data;
    size_t len;
    tile_rt_status s = read_whole_file(rt, path, true, &data, &len);
    if (s != TILE_RT_OK)
        return s;
    s = tile_rt_load_bundle_named(rt, path, data, len, out);
    free(data);
    return s;
}

/* ---- sources ---------------------------------------------------------------------- */
tile_rt_status tile_rt_load_source(tile_rt *rt, const char *name, const char *src, size_t len, tile_rt_module **out) {
    if (!rt || !out || (!src && len))
        return TILE_RT_ERR_INVALID;
    *out = NULL;
    if (!name)
        name = "<source>";
    tile_rt_module *m = module_new(rt, name);
    DiagBuf *d = calloc(1, sizeof *d);
    if (!m || !d || !(m->tctx = tile_ctx_new()) || !(m->source = malloc(len + 1))) {
        free(d);
        tile_rt_module_free(m);
        return rt_fail(rt, TILE_RT_ERR_INVALID, "out of memory");
    }
    memcpy(m->source, src, len);
    m->source[len] = 0;
    m->source_len = len;
    m->source_hash = rt_fnv1a(RT_FNV_BASIS, src, len);
    tile_ctx_set_diag(m->tctx, diag_collect, d);
    tile_ctx_set_debug(m->tctx, rt->debug);
    if (rt->arch[0])
        tile_ctx_set_arch(m->tctx, rt->arch);
    tile_status ts = tile_program_load_source(m->tctx, name, src, len, &m->prog);
    if (ts != TILE_OK) {
        tile_rt_status s = rt_fail(rt, ts == TILE_ERR_IO ? TILE_RT_ERR_IO : TILE_RT_ERR_COMPILE, "%s",
                                   d->len ? d->text : tile_status_string(ts));
        free(d);
        tile_rt_module_free(m);
        return s;
    }
    /* Later messages (JIT compiles) are read from tile_ctx_last_error. */
    tile_ctx_set_diag(m->tctx, NULL, NULL);
    free(d);
    int nk = tile_program_kernel_count(m->prog);
    m->kernels = calloc((size_t)nk + 1, sizeof *m->kernels);
    if (!m->kernels) {
        tile_rt_module_free(m);
        return rt_fail(rt, TILE_RT_ERR_INVALID, "out of memory");
    }
    for (int i = 0; i < nk; i++) {
        int np = tile_kernel_param_count(m->prog, i);
        RtParam *ps = calloc((size_t)np + 1, sizeof *ps);
        m->nkernels = i + 1;
        m->kernels[i].params = ps;
        if (!ps) {
            tile_rt_module_free(m);
            return rt_fail(rt, TILE_RT_ERR_INVALID, "out of memory");
        }
        for (int j = 0; j < np; j++) {
            tile_param_info pi;
            tile_kernel_param(m->prog, i, j, &pi);
            ps[j] = (RtParam){.name = pi.name, .is_pointer = pi.is_pointer, .is_const = pi.is_const, .scalar = pi.type};
        }
        tile_rt_status s = init_kernel(m, &m->kernels[i], i, tile_kernel_name(m->prog, i), ps, (uint32_t)np);
        if (s != TILE_RT_OK) {
            tile_rt_module_free(m);
            return s;
        }
    }
    *out = m;
    return TILE_RT_OK;
}

tile_rt_status tile_rt_load_source_file(tile_rt *rt, const char *path, tile_rt_module **out) {
    if (!rt || !path || !out)
        return TILE_RT_ERR_INVALID;
    *out = NULL;
    char *data;
    size_t len;
    tile_rt_status s = read_whole_file(rt, path, false, &data, &len);
    if (s != TILE_RT_OK)
        return s;
    s = tile_rt_load_source(rt, path, data, len, out);
    free(data);
    return s;
}

static tile_rt_status define_one(const tile_rt_kernel *k, tile_ctx *ctx, const char *name, bool is_float, int64_t iv,
                                 double fv, bool is_u64) {
    char def[256];
    if (is_float)
        snprintf(def, sizeof def, "%s=%.17g", name, fv);
    else if (is_u64) /* the int64 carries a u64 by its bits */
        snprintf(def, sizeof def, "%s=%llu", name, (unsigned long long)iv);
    else
        snprintf(def, sizeof def, "%s=%lld", name, (long long)iv);
    if (tile_ctx_define(ctx, def) != TILE_OK)
        return rt_fail(k->m->rt, TILE_RT_ERR_ARGS, "kernel '%s': '%s': %s", k->name, name, tile_ctx_last_error(ctx));
    return TILE_RT_OK;
}

tile_rt_status rt_kernel_defines(const tile_rt_kernel *k, tile_ctx *ctx, bool pins_only) {
    tile_ctx_clear_defines(ctx);
    tile_rt_status s = TILE_RT_OK;
    for (uint32_t i = 0; i < k->nparams && !pins_only && s == TILE_RT_OK; i++)
        if (k->params[i].is_const && k->const_set[i])
            s = define_one(k, ctx, k->params[i].name, tile_scalar_is_float(k->params[i].scalar), k->const_i[i],
                           k->const_f[i], k->params[i].scalar == TILE_U64);
    for (int i = 0; i < k->npins && s == TILE_RT_OK; i++)
        s = define_one(k, ctx, k->pin_name[i], k->pin_f[i] != (double)k->pin_i[i], k->pin_i[i], k->pin_f[i], false);
    return s;
}

tile_rt_status rt_source_meta(tile_rt_kernel *k) {
    uint64_t epoch = atomic_load(&k->epoch);
    if (k->meta && k->meta_epoch == epoch)
        return TILE_RT_OK;
    tile_rt_module *m = k->m;
    for (uint32_t i = 0; i < k->nparams; i++)
        if (k->params[i].is_const && !k->const_set[i])
            return rt_fail(m->rt, TILE_RT_ERR_ARGS,
                           "kernel '%s': const parameter '%s' has no "
                           "value: set it with tile_rt_set_const",
                           k->name, k->params[i].name);
    pthread_mutex_lock(&m->jit_lock);
    tile_rt_status s = rt_kernel_defines(k, m->tctx, false);
    char *data = NULL;
    size_t len = 0;
    if (s == TILE_RT_OK) {
        tile_status ts = tile_emit_bundle_meta(m->prog, k->index, &data, &len);
        if (ts != TILE_OK)
            s = rt_fail(m->rt, TILE_RT_ERR_COMPILE, "kernel '%s': %s", k->name, tile_ctx_last_error(m->tctx));
    }
    pthread_mutex_unlock(&m->jit_lock);
    if (s != TILE_RT_OK)
        return s;
    RtBundle *b;
    char err[600];
    s = rt_bundle_parse(m->name, data, len, &b, err, sizeof err);
    free(data);
    if (s != TILE_RT_OK)
        return rt_fail(m->rt, TILE_RT_ERR_COMPILE, "the compiler's metadata of '%s': %s", k->name, err);
    if (b->nkernels != 1 || strcmp(b->kernels[0].name, k->name) || b->kernels[0].nparams != k->nparams) {
        rt_bundle_free(b);
        return rt_fail(m->rt, TILE_RT_ERR_COMPILE,
                       "the compiler's metadata of '%s' describes "
                       "another kernel",
                       k->name);
    }
    if (k->meta_bundle) {
        /* Older instances keep pointing into it: retire, free with the module. */
        k->meta_bundle->producer = (const char *)k->retired;
        k->retired = k->meta_bundle;
    }
    k->meta_bundle = b;
    k->meta = &b->kernels[0];
    k->meta_epoch = epoch;
    return TILE_RT_OK;
}

/* ---- lookups ---------------------------------------------------------------------- */
tile_rt_status tile_rt_get_kernel(tile_rt_module *m, const char *name, tile_rt_kernel **out) {
    if (!m || !name || !out)
        return TILE_RT_ERR_INVALID;
    *out = NULL;
    for (int i = 0; i < m->nkernels; i++)
        if (!strcmp(m->kernels[i].name, name)) {
            *out = &m->kernels[i];
            return TILE_RT_OK;
        }
    char names[512];
    size_t n = 0;
    names[0] = 0;
    for (int i = 0; i < m->nkernels && n < sizeof names; i++) {
        int w = snprintf(names + n, sizeof names - n, "%s'%s'", i ? ", " : "", m->kernels[i].name);
        if (w > 0)
            n += (size_t)w;
    }
    return rt_fail(m->rt, TILE_RT_ERR_NOT_FOUND, "no kernel '%s' in '%s' (it has %s)", name, m->name,
                   m->nkernels ? names : "none");
}

int tile_rt_kernel_param_count(const tile_rt_kernel *k) {
    return k ? k->nrt : 0;
}

const char *tile_rt_kernel_param_name(const tile_rt_kernel *k, int i) {
    return k && i >= 0 && i < k->nrt ? k->params[k->rt_param[i]].name : NULL;
}

tile_rt_status tile_rt_kernel_param_type(const tile_rt_kernel *k, int i, int *scalar, bool *is_pointer) {
    if (!k || i < 0 || i >= k->nrt)
        return TILE_RT_ERR_INVALID;
    const RtParam *p = &k->params[k->rt_param[i]];
    if (scalar)
        *scalar = (int)p->scalar;
    if (is_pointer)
        *is_pointer = p->is_pointer;
    return TILE_RT_OK;
}

tile_rt_status tile_rt_set_const(tile_rt_kernel *k, const char *name, int64_t ival, double fval) {
    if (!k || !name)
        return TILE_RT_ERR_INVALID;
    for (uint32_t i = 0; i < k->nparams; i++) {
        if (strcmp(k->params[i].name, name))
            continue;
        if (!k->params[i].is_const)
            return rt_fail(k->m->rt, TILE_RT_ERR_ARGS,
                           "kernel '%s': '%s' is not a const "
                           "parameter (pass it at launch)",
                           k->name, name);
        pthread_mutex_lock(&k->lock);
        bool fl = tile_scalar_is_float(k->params[i].scalar);
        if (!k->const_set[i] || (fl ? k->const_f[i] != fval : k->const_i[i] != ival)) {
            k->const_set[i] = true;
            k->const_i[i] = fl ? (int64_t)fval : ival;
            k->const_f[i] = fl ? fval : (double)ival;
            atomic_fetch_add(&k->epoch, 1);
        }
        pthread_mutex_unlock(&k->lock);
        return TILE_RT_OK;
    }
    /* Not a parameter: a tuned constant (or warps, stages) pinned to one value.  A name
     * that no variant has is reported when the variants are next listed. */
    pthread_mutex_lock(&k->lock);
    int i = 0;
    while (i < k->npins && strcmp(k->pin_name[i], name))
        i++;
    if (i == k->npins) {
        char *copy = i < RT_MAX_PINS ? strdup(name) : NULL;
        if (!copy) {
            pthread_mutex_unlock(&k->lock);
            return rt_fail(k->m->rt, TILE_RT_ERR_INVALID,
                           "kernel '%s': cannot pin '%s' (at "
                           "most %d pinned constants)",
                           k->name, name, RT_MAX_PINS);
        }
        k->pin_name[k->npins++] = copy;
    }
    k->pin_i[i] = ival;
    k->pin_f[i] = fval;
    atomic_fetch_add(&k->epoch, 1);
    pthread_mutex_unlock(&k->lock);
    return TILE_RT_OK;
}

const char *tile_rt_last_variant(const tile_rt_kernel *k) {
    if (!k)
        return "";
    const char *s = atomic_load(&((tile_rt_kernel *)k)->last_variant);
    return s ? s : "";
}

tile_rt_status tile_rt_last_launch_info(const tile_rt_kernel *k, tile_rt_launch_info *out) {
    if (!k || !out)
        return TILE_RT_ERR_INVALID;
    *out = k->last_info;
    return TILE_RT_OK;
}
