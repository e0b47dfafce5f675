/* Compiling many variants at once, as the runtime's JIT does (bundles, --report, one
 * module per variant): a program and its context are not shared between threads, so each
 * worker compiles on a copy of the program, its source loaded again into a context like
 * the caller's.  Each job's messages are kept and replayed through the caller's context
 * in job order after the batch, so the output is the same, byte for byte and message for
 * message, whatever the number of threads. */
#include "driver.h"
#include "buf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Batch {
    tile_program *p; /* the caller's program (its thread only) */
    int n;
    DriverJobFn fn;
    void *ud;
    const char *what;
    bool stop_on_error;
    TirBuf *logs;
    tile_status *status;
    _Atomic int next, done, first_failed;
    pthread_mutex_t progress_lock;
} Batch;

typedef struct Worker {
    Batch *b;
    tile_ctx *ctx;                /* the worker's context, made like the caller's before any job */
    TirBuf *log;                  /* the job being run */
    double phase_s[TILE_NPHASES]; /* the worker's compile time, added by the caller */
} Worker;

/* A job's messages, in order: "msg\0msg\0..." (each with its terminator). */
static void log_add(void *ud, const char *msg) {
    Worker *w = ud;
    if (w->log)
        tir_buf_put(w->log, msg, strlen(msg) + 1);
}

/* $TILE_JIT_THREADS, else the online CPUs; at most 64. */
static int job_threads(void) {
    const char *e = getenv("TILE_JIT_THREADS");
    long n = e && *e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* A context that compiles as c does: arch, optimisation, debug, defines, assumptions,
 * timing.  No messages until the worker points it at a job's log. */
static tile_ctx *ctx_like(const tile_ctx *c) {
    tile_ctx *d = tile_ctx_new();
    if (!d)
        return NULL;
    memcpy(d->arch, c->arch, sizeof d->arch);
    d->opt_level = c->opt_level;
    d->debug = c->debug;
    d->diag_json = c->diag_json;
    d->timing = c->timing;
    d->defines = calloc((size_t)c->ndefines + 1, sizeof *d->defines);
    bool ok = d->defines != NULL;
    for (int i = 0; ok && i < c->ndefines; i++) {
        const DriverDefine *s = &c->defines[i];
        DriverDefine *t = &d->defines[d->ndefines++];
        size_t nv = (size_t)(s->nvals > 0 ? s->nvals : 1);
        t->name = strdup(s->name);
        t->ivals = malloc(nv * sizeof *t->ivals);
        t->fvals = malloc(nv * sizeof *t->fvals);
        t->is_float = malloc(nv * sizeof *t->is_float);
        t->nvals = s->nvals;
        ok = t->name && t->ivals && t->fvals && t->is_float;
        if (ok && s->nvals > 0) {
            memcpy(t->ivals, s->ivals, (size_t)s->nvals * sizeof *t->ivals);
            memcpy(t->fvals, s->fvals, (size_t)s->nvals * sizeof *t->fvals);
            memcpy(t->is_float, s->is_float, (size_t)s->nvals * sizeof *t->is_float);
        }
    }
    for (int i = 0; ok && i < c->nassumes; i++)
        ok = tile_ctx_assume(d, c->assumes[i].name, c->assumes[i].facts) == TILE_OK;
    if (!ok) {
        tile_ctx_free(d);
        return NULL;
    }
    return d;
}

static void progress(Batch *b) {
    int done = atomic_fetch_add(&b->done, 1) + 1;
    tile_ctx *c = b->p->ctx;
    if (!c->progress)
        return;
    pthread_mutex_lock(&b->progress_lock);
    c->progress(c->progress_ud, b->what, done, b->n);
    pthread_mutex_unlock(&b->progress_lock);
}

/* Takes jobs until none is left; a job after the first failure of a stop_on_error batch
 * is skipped (its result would be thrown away). */
static void take_jobs(Batch *b, tile_program *q, Worker *w) {
    for (int j; (j = atomic_fetch_add(&b->next, 1)) < b->n;) {
        if (b->stop_on_error && j > atomic_load(&b->first_failed)) {
            b->status[j] = TILE_ERR_COMPILE;
            progress(b);
            continue;
        }
        w->log = &b->logs[j];
        if (!q)
            log_add(w, "error: out of memory loading the program again for a compile thread");
        b->status[j] = q ? b->fn(q, j, b->ud) : TILE_ERR_INVALID;
        if (b->status[j] != TILE_OK) {
            b->logs[j].failed = true;
            int f = atomic_load(&b->first_failed);
            while (j < f && !atomic_compare_exchange_weak(&b->first_failed, &f, j))
                ;
        }
        w->log = NULL;
        progress(b);
    }
}

static void *worker_main(void *arg) {
    Worker *w = arg;
    Batch *b = w->b;
    const tile_program *p = b->p;
    tile_ctx *c = w->ctx;
    tile_program *q = NULL;
    if (c && tile_program_load_source(c, p->file->path, p->file->src, p->file->len, &q) != TILE_OK)
        q = NULL;
    if (c) {
        /* the copy's load is the caller's load again: its time is not the batch's */
        memset(c->phase_s, 0, sizeof c->phase_s);
        tile_ctx_set_diag(c, log_add, w);
    }
    take_jobs(b, q, w);
    if (c)
        memcpy(w->phase_s, c->phase_s, sizeof w->phase_s);
    tile_program_free(q);
    tile_ctx_free(c);
    return NULL;
}

tile_status driver_run_jobs(tile_program *p, int n, DriverJobFn fn, void *ud, const char *what, bool stop_on_error) {
    if (n <= 0)
        return TILE_OK;
    tile_ctx *c = p->ctx;
    int nt = job_threads();
    nt = nt > n ? n : nt;
    Batch b = {.p = p,
               .n = n,
               .fn = fn,
               .ud = ud,
               .what = what,
               .stop_on_error = stop_on_error,
               .logs = calloc((size_t)n, sizeof *b.logs),
               .status = calloc((size_t)n, sizeof *b.status)};
    atomic_init(&b.next, 0);
    atomic_init(&b.done, 0);
    atomic_init(&b.first_failed, n);
    pthread_mutex_init(&b.progress_lock, NULL);
    /* One thread, or IR dumps (--print-after, which go to one stream in order): the
     * caller's program, directly. */
    if (nt == 1 || c->print_after || !b.logs || !b.status) {
        tile_status s = TILE_OK;
        for (int j = 0; j < n; j++) {
            tile_status sj = fn(p, j, ud);
            if (s == TILE_OK)
                s = sj;
            atomic_store(&b.next, j + 1);
            progress(&b);
            if (sj != TILE_OK && stop_on_error)
                break;
        }
        free(b.logs);
        free(b.status);
        pthread_mutex_destroy(&b.progress_lock);
        return s;
    }
    /* The workers' contexts are copied here, before any job runs.  Until session 10 a
     * bundle record's compile added its facts to the caller's context for its time, and a
     * worker that copied the context then compiled all its jobs under them
     * (tools.parallel_bundle_same failed so under load: a generic record compiled with
     * pointers assumed aligned).  The records' facts are now the compile's own
     * (driver_lower_to's `extra`); copying first still keeps the workers apart from
     * anything a job might do to the caller's context. */
    Worker *ws = calloc((size_t)nt, sizeof *ws);
    pthread_t th[64];
    int started = 0;
    for (int i = 1; ws && i < nt; i++) {
        ws[i].b = &b;
        ws[i].ctx = ctx_like(c);
    }
    for (int i = 1; ws && i < nt; i++) {
        if (pthread_create(&th[started], NULL, worker_main, &ws[i]) == 0)
            started++;
        else
            tile_ctx_free(ws[i].ctx);
    }
    /* The calling thread works too, on the caller's program, its messages kept like the
     * workers' (a thread that could not start leaves its share to it). */
    Worker self = {.b = &b};
    tile_diag_fn saved = c->diag;
    void *saved_ud = c->diag_ud;
    tile_ctx_set_diag(c, log_add, &self);
    take_jobs(&b, p, &self);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    tile_ctx_set_diag(c, saved, saved_ud);
    /* summed over the threads: each phase's CPU time, as a sequential compile reports */
    for (int i = 1; ws && c->timing && i < nt; i++)
        for (int ph = 0; ph < TILE_NPHASES; ph++)
            c->phase_s[ph] += ws[i].phase_s[ph];
    free(ws);

    tile_status s = TILE_OK;
    int last = stop_on_error ? atomic_load(&b.first_failed) : n - 1;
    for (int j = 0; j < n; j++) {
        TirBuf *l = &b.logs[j];
        if (j <= last)
            for (size_t at = 0; at < l->len; at += strlen(l->s + at) + 1)
                driver_sink(c, l->s + at);
        if (s == TILE_OK && j <= last && b.status[j] != TILE_OK)
            s = b.status[j];
        tir_buf_free(l);
    }
    free(b.logs);
    free(b.status);
    pthread_mutex_destroy(&b.progress_lock);
    return s;
}
