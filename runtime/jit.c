/* The JIT: one variant of a source kernel compiled to a cubin for the device's arch under
 * the launch's specialization facts, through a disk cache.
 *
 * Cache entries live in $cache_dir/jit/HEX.bin, HEX a 128-bit hash of (source, kernel,
 * const values, variant index and text, facts, arch, the compiler's identity).  An entry is
 * a 64-byte header (magic "TILECCH1", version, payload length, the MAC that binds kind,
 * key and payload under the cache's key (cache_trust.c), the key's 32 hex digits) then the
 * payload; it is written to a temporary file and renamed, so readers never see half an
 * entry, and anything that fails validation is removed (kept in a read-only cache) and
 * recompiled. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC   "TILECCH1"
#define CACHE_VERSION 3u /* 2: an entry holds a compile's cubins (pack_cubins); 3: MAC, full key */
#define CACHE_HEADER  64

#ifndef TILE_RT_VERSION
#define TILE_RT_VERSION "0"
#endif

/* The compiler's identity: its version plus the size and mtime of the file that holds
 * the compiler library (this program or libtilert.so), so a rebuilt compiler never
 * reuses another build's cubins. */
static uint64_t compiler_identity(void) {
    static _Atomic uint64_t id;
    uint64_t v = atomic_load(&id);
    if (v)
        return v;
    v = rt_fnv1a(RT_FNV_BASIS, TILE_RT_VERSION, strlen(TILE_RT_VERSION));
    Dl_info info;
    struct stat st;
    if (dladdr((void *)&tile_emit_variant, &info) && info.dli_fname && stat(info.dli_fname, &st) == 0) {
        int64_t f[2] = {(int64_t)st.st_size, (int64_t)st.st_mtime};
        v = rt_fnv1a(v, f, sizeof f);
        v = rt_fnv1a(v, info.dli_fname, strlen(info.dli_fname));
    }
    atomic_store(&id, v | 1);
    return v | 1;
}

void rt_cache_key(const tile_rt_module *m, int k, uint32_t vi, RtFacts f, const char *arch, char hex[33]) {
    const tile_rt_kernel *kn = &m->kernels[k];
    uint64_t h[2] = {RT_FNV_BASIS, 0x84222325cbf29ce4ull};
    /* a test's forced lowering (docs/backend.md): a value the compiler ignores changes no
     * compile, nor the key */
    int low = tile_forced_lowering();
    for (int i = 0; i < 2; i++) {
        uint64_t x = h[i];
        uint64_t ident = compiler_identity();
        x = rt_fnv1a(x, &ident, sizeof ident);
        x = rt_fnv1a(x, m->source, m->source_len);
        x = rt_fnv1a(x, kn->name, strlen(kn->name) + 1);
        if (kn->meta) {
            const RtVariant *v = &kn->meta->variants[vi];
            x = rt_fnv1a(x, v->text, strlen(v->text) + 1);
        }
        x = rt_fnv1a(x, &vi, sizeof vi);
        for (uint32_t p = 0; p < kn->nparams; p++)
            if (kn->params[p].is_const && kn->const_set[p]) {
                x = rt_fnv1a(x, &kn->const_i[p], sizeof kn->const_i[p]);
                x = rt_fnv1a(x, &kn->const_f[p], sizeof kn->const_f[p]);
            }
        x = rt_fnv1a(x, &f.div16, sizeof f.div16);
        if (f.div8) /* keys of compiles without div8 facts stay what they were */
            x = rt_fnv1a(x, &f.div8, sizeof f.div8);
        x = rt_fnv1a(x, &f.eq1, sizeof f.eq1);
        x = rt_fnv1a(x, arch, strlen(arch) + 1);
        if (low >= 0)
            x = rt_fnv1a(x, &low, sizeof low);
        if (m->rt->debug) /* assert() checks compiled in: other code, keys of others unchanged */
            x = rt_fnv1a(x, "debug", 6);
        h[i] = x;
    }
    snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
}

static bool cache_path(const tile_rt *rt, const char *sub, const char *name, char *path, size_t n) {
    if (!rt->cache_dir[0])
        return false;
    int w = snprintf(path, n, "%s/%s/%s", rt->cache_dir, sub, name);
    return w > 0 && (size_t)w < n;
}

/* mkdir -p of the directory part of path. */
static bool make_dirs(const char *path) {
    char buf[4400];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    if (!slash)
        return true;
    *slash = 0;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) && errno != EEXIST)
            return false;
        *p = '/';
    }
    return !mkdir(buf, 0755) || errno == EEXIST;
}

static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

bool rt_cache_read(tile_rt *rt, const char *sub, const char *hex, char **data, size_t *len) {
    char path[4200], name[64];
    snprintf(name, sizeof name, "%s.bin", hex);
    if (!cache_path(rt, sub, name, path, sizeof path))
        return false;
    /* Only a regular file is an entry: opening a FIFO (or a device) someone left in the
     * cache would block or read forever.  O_NONBLOCK keeps the open itself from waiting. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
        return false;
    struct stat st;
    FILE *f = NULL;
    /* an entry of another user, or one another can write, is not trusted (cache_trust.c) */
    if (fstat(fd, &st) != 0 || !rt_cache_entry_trusted(rt, &st) || !(f = fdopen(fd, "rb"))) {
        close(fd);
        atomic_fetch_add(&rt->stats.cache_corrupt, 1);
        if (!rt->cache_readonly)
            unlink(path);
        return false;
    }
    uint8_t head[CACHE_HEADER];
    bool ok = fread(head, 1, CACHE_HEADER, f) == CACHE_HEADER && !memcmp(head, CACHE_MAGIC, 8) &&
              (head[8] | head[9] << 8 | head[10] << 16 | (uint32_t)head[11] << 24) == CACHE_VERSION;
    uint64_t n = ok ? get64(head + 16) : 0, mac = ok ? get64(head + 24) : 0;
    ok = ok && n <= (1ull << 31);
    char *buf = ok ? malloc(n ? n : 1) : NULL;
    ok = ok && buf && fread(buf, 1, n, f) == n && fgetc(f) == EOF;
    fclose(f);
    /* the entry is this key's (all 32 digits) and the MAC under the cache's key holds:
     * content from elsewhere, even with every unkeyed checksum recomputed, fails it */
    ok = ok && !memcmp(head + 32, hex, 32) && rt_cache_mac(rt, sub, hex, buf, n) == mac;
    if (!ok) {
        free(buf);
        atomic_fetch_add(&rt->stats.cache_corrupt, 1);
        if (!rt->cache_readonly)
            unlink(path);
        return false;
    }
    *data = buf;
    *len = n;
    return true;
}

void rt_cache_write(tile_rt *rt, const char *sub, const char *hex, const void *data, size_t len) {
    char path[4200], tmp[4300], name[64];
    snprintf(name, sizeof name, "%s.bin", hex);
    if (rt->cache_readonly || !cache_path(rt, sub, name, path, sizeof path) || !make_dirs(path))
        return;
    static _Atomic unsigned serial;
    /* unique per process and call: compiles of one key may race in several threads */
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
    if (fd < 0)
        return;
    uint8_t head[CACHE_HEADER] = {0};
    memcpy(head, CACHE_MAGIC, 8);
    head[8] = CACHE_VERSION;
    put64(head + 16, len);
    put64(head + 24, rt_cache_mac(rt, sub, hex, data, len));
    memcpy(head + 32, hex, 32);
    bool ok = write(fd, head, CACHE_HEADER) == CACHE_HEADER && write(fd, data, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}

/* ---- compiler instances ---------------------------------------------------------- */
/* An idle compiler instance of m, or a new one (the module's source parsed again into a
 * context of its own). NULL with a message when out of memory or the load fails. */
static RtCompiler *compiler_get(tile_rt_module *m) {
    pthread_mutex_lock(&m->pool_lock);
    RtCompiler *c = m->pool;
    if (c)
        m->pool = c->next;
    pthread_mutex_unlock(&m->pool_lock);
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (!c || !(c->tctx = tile_ctx_new())) {
        free(c);
        rt_fail(m->rt, TILE_RT_ERR_INVALID, "out of memory");
        return NULL;
    }
    if (m->rt->arch[0])
        tile_ctx_set_arch(c->tctx, m->rt->arch);
    tile_ctx_set_debug(c->tctx, m->rt->debug);
    if (tile_program_load_source(c->tctx, m->name, m->source, m->source_len, &c->prog) != TILE_OK) {
        rt_fail(m->rt, TILE_RT_ERR_COMPILE, "'%s': loading the source again for the JIT: %s", m->name,
                tile_ctx_last_error(c->tctx));
        tile_ctx_free(c->tctx);
        free(c);
        return NULL;
    }
    return c;
}

static void compiler_put(tile_rt_module *m, RtCompiler *c) {
    pthread_mutex_lock(&m->pool_lock);
    c->next = m->pool;
    m->pool = c;
    pthread_mutex_unlock(&m->pool_lock);
}

void rt_jit_free_pool(tile_rt_module *m) {
    RtCompiler *c = m->pool;
    while (c) {
        RtCompiler *next = c->next;
        tile_program_free(c->prog);
        tile_ctx_free(c->tctx);
        free(c);
        c = next;
    }
    m->pool = NULL;
}

/* The assumptions of a compile: one tile_ctx_assume per parameter with facts. */
static tile_rt_status assume_facts(tile_rt *rt, tile_ctx *tctx, const tile_rt_kernel *k, RtFacts f) {
    tile_ctx_clear_assumptions(tctx);
    for (uint32_t i = 0; i < k->nparams; i++) {
        unsigned a = (f.div16 >> i & 1 ? TILE_ASSUME_DIV16 : 0) | (f.div8 >> i & 1 ? TILE_ASSUME_DIV8 : 0) |
                     (f.eq1 >> i & 1 ? TILE_ASSUME_ONE : 0);
        if (a && tile_ctx_assume(tctx, k->params[i].name, a) != TILE_OK)
            return rt_fail(rt, TILE_RT_ERR_COMPILE, "kernel '%s': assuming facts of '%s': %s", k->name,
                           k->params[i].name, tile_ctx_last_error(tctx));
    }
    return TILE_RT_OK;
}

/* A jit cache entry: u32 n, then n times (u64 len, len bytes). */
static char *pack_cubins(char *const *cubin, const size_t *len, int n, size_t *out_len) {
    size_t total = 4;
    for (int i = 0; i < n; i++)
        total += 8 + len[i];
    uint8_t *b = malloc(total);
    if (!b)
        return NULL;
    size_t o = 4;
    for (int j = 0; j < 4; j++)
        b[j] = (uint8_t)((uint32_t)n >> (8 * j));
    for (int i = 0; i < n; i++) {
        put64(b + o, len[i]);
        memcpy(b + o + 8, cubin[i], len[i]);
        o += 8 + len[i];
    }
    *out_len = total;
    return (char *)b;
}

static bool unpack_cubins(const char *data, size_t dlen, char **cubin, size_t *len, int *n) {
    const uint8_t *b = (const uint8_t *)data;
    if (dlen < 4)
        return false;
    uint32_t cnt = b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
    if (cnt < 1 || cnt > RT_MAX_CUBINS)
        return false;
    size_t o = 4;
    int got = 0;
    for (uint32_t i = 0; i < cnt; i++) {
        if (dlen - o < 8)
            break;
        uint64_t l = get64(b + o);
        if (l == 0 || l > dlen - o - 8)
            break;
        if (!(cubin[i] = malloc(l)))
            break;
        memcpy(cubin[i], b + o + 8, l);
        len[i] = l;
        o += 8 + l;
        got++;
    }
    if (got != (int)cnt || o != dlen) {
        for (int i = 0; i < got; i++)
            free(cubin[i]);
        return false;
    }
    *n = got;
    return true;
}

tile_rt_status rt_jit_compile(tile_rt_module *m, int k, uint32_t vi, RtFacts f, char *cubin[RT_MAX_CUBINS],
                              size_t len[RT_MAX_CUBINS], int *n) {
    return rt_jit_compile_opts(m, k, vi, f, NULL, cubin, len, n);
}

tile_rt_status rt_jit_compile_opts(tile_rt_module *m, int k, uint32_t vi, RtFacts f, const char *ptxas_options,
                                   char *cubin[RT_MAX_CUBINS], size_t len[RT_MAX_CUBINS], int *n) {
    tile_rt *rt = m->rt;
    tile_rt_kernel *kn = &m->kernels[k];
    const char *arch = rt->arch[0] ? rt->arch : tile_arch_default();
    for (int i = 0; i < RT_MAX_CUBINS; i++) {
        cubin[i] = NULL;
        len[i] = 0;
    }
    *n = 0;
    char hex[33];
    rt_cache_key(m, k, vi, f, arch, hex);
    if (ptxas_options && *ptxas_options) {
        /* the same key with the options hashed in (compiles without keep their keys) */
        uint64_t h = rt_fnv1a(RT_FNV_BASIS, hex, 32);
        h = rt_fnv1a(h, ptxas_options, strlen(ptxas_options) + 1);
        snprintf(hex + 16, 17, "%016llx", (unsigned long long)h);
    }
    char *entry = NULL;
    size_t elen = 0;
    if (rt_cache_read(rt, "jit", hex, &entry, &elen)) {
        bool ok = unpack_cubins(entry, elen, cubin, len, n);
        free(entry);
        if (ok) {
            atomic_fetch_add(&rt->stats.cache_hits, 1);
            return TILE_RT_OK;
        }
        atomic_fetch_add(&rt->stats.cache_corrupt, 1);
    }
    RtCompiler *c = compiler_get(m);
    if (!c)
        return TILE_RT_ERR_COMPILE;
    tile_ctx *tctx = c->tctx;
    tile_rt_status s = TILE_RT_OK;
    s = rt_kernel_defines(kn, tctx, false);
    if (s == TILE_RT_OK)
        s = assume_facts(rt, tctx, kn, f);
    if (s == TILE_RT_OK && tile_ctx_set_arch(tctx, arch) != TILE_OK)
        s = rt_fail(rt, TILE_RT_ERR_UNSUPPORTED, "the compiler does not know arch %s", arch);
    if (s == TILE_RT_OK && tile_ctx_set_ptxas_options(tctx, ptxas_options) != TILE_OK)
        s = rt_fail(rt, TILE_RT_ERR_INVALID, "%s", tile_ctx_last_error(tctx));
    if (s == TILE_RT_OK) {
        tile_cubin out[2];
        tile_status ts = tile_emit_variant_cubins(c->prog, k, (int)vi, out, n, NULL);
        if (ts != TILE_OK) {
            s = rt_fail(rt, ts == TILE_ERR_UNSUPPORTED ? TILE_RT_ERR_UNSUPPORTED : TILE_RT_ERR_COMPILE,
                        "kernel '%s' variant %u (%s): %s", kn->name, vi, kn->meta ? kn->meta->variants[vi].text : "?",
                        tile_ctx_last_error(tctx));
            *n = 0;
        }
        for (int i = 0; i < *n && i < RT_MAX_CUBINS; i++) {
            cubin[i] = out[i].data;
            len[i] = out[i].len;
        }
    }
    tile_ctx_clear_assumptions(tctx);
    tile_ctx_set_ptxas_options(tctx, NULL);
    compiler_put(m, c);
    if (s != TILE_RT_OK)
        return s;
    atomic_fetch_add(&rt->stats.jit_compiles, 1);
    size_t plen = 0;
    char *packed = pack_cubins(cubin, len, *n, &plen);
    if (packed)
        rt_cache_write(rt, "jit", hex, packed, plen);
    free(packed);
    return TILE_RT_OK;
}

/* ---- compile batches ------------------------------------------------------------- */
int rt_jit_threads(void) {
    const char *env = getenv("TILE_JIT_THREADS");
    long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

typedef struct Batch {
    tile_rt *rt;
    RtJitJob *jobs;
    int *order; /* jobs by estimated cost, biggest first (NULL: as given) */
    int n;
    _Atomic int next;
} Batch;

/* A compile's expected cost, to start the biggest first (a batch's wall time is at least
 * its slowest compile: layernorm BLOCK=16384 with 4 warps spends ~0.7 s in ptxas, and
 * started last it set the whole batch's time).  Elements per thread grow with the tuned
 * sizes and shrink with the warps: the product of the variant's integer constants of 2
 * or more over its warps. */
static double job_cost(const RtJitJob *j) {
    const RtKernelMeta *km = j->m->kernels[j->k].meta;
    if (!km || j->vi >= km->nvariants)
        return 0;
    const RtVariant *v = &km->variants[j->vi];
    double c = 1;
    for (uint32_t i = 0; i < km->ncnames; i++)
        if (!v->cfloat[i] && v->cvals[i] >= 2 && strcmp(km->cnames[i], "warps") && strcmp(km->cnames[i], "stages"))
            c *= v->cvals[i];
    return c / (v->warps ? v->warps : 1);
}

typedef struct {
    double cost;
    int job;
} JobCost;

static int by_cost(const void *a, const void *b) {
    const JobCost *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost > y->cost ? -1 : 1;
    return x->job - y->job; /* ties keep the given order */
}

static void run_job(tile_rt *rt, RtJitJob *j) {
    double t0 = rt_now();
    j->s = rt_jit_compile(j->m, j->k, j->vi, j->f, j->cubin, j->len, &j->ncubin);
    j->seconds = rt_now() - t0;
    j->err[0] = 0;
    if (j->s != TILE_RT_OK)
        snprintf(j->err, sizeof j->err, "%s", tile_rt_last_error(rt));
}

static void *batch_worker(void *arg) {
    Batch *b = arg;
    for (int i; (i = atomic_fetch_add(&b->next, 1)) < b->n;)
        run_job(b->rt, &b->jobs[b->order ? b->order[i] : i]);
    return NULL;
}

void rt_jit_compile_many(tile_rt *rt, RtJitJob *jobs, int n) {
    if (n <= 0)
        return;
    double t0 = rt_now();
    Batch b = {.rt = rt, .jobs = jobs, .n = n};
    JobCost *jc = malloc((size_t)n * sizeof *jc);
    int *order = malloc((size_t)n * sizeof *order);
    if (jc && order) { /* out of memory: the given order */
        for (int i = 0; i < n; i++)
            jc[i] = (JobCost){job_cost(&jobs[i]), i};
        qsort(jc, (size_t)n, sizeof *jc, by_cost);
        for (int i = 0; i < n; i++)
            order[i] = jc[i].job;
        b.order = order;
    }
    free(jc);
    atomic_init(&b.next, 0);
    int nt = rt_jit_threads();
    nt = nt > n ? n : nt;
    pthread_t th[64];
    int started = 0;
    /* the calling thread works too; a thread that cannot start leaves its share to it */
    for (int i = 1; i < nt; i++)
        if (pthread_create(&th[started], NULL, batch_worker, &b) == 0)
            started++;
    batch_worker(&b);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(order);
    atomic_fetch_add(&rt->stats.jit_wall_ns, (uint64_t)((rt_now() - t0) * 1e9));
}
