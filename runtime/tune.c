/* The autotuner: on the first launch for a new key, every admissible variant is timed with
 * device events (warm-up launches, then the median of several samples), the ones within 3%
 * of the fastest are timed again in more samples, interleaved, and the fastest of those is
 * kept, in memory and on disk.
 *
 * A sample is one launch after the L2 cache has been overwritten (a memset of twice its
 * size on the same stream), as triton.testing.do_bench times kernels and as a kernel runs
 * between other work: the memset also keeps the GPU busy while the host enqueues the
 * launch, so the host's launch gap stays outside the events.  A round's samples are all
 * enqueued before the host waits for any (like do_bench's): waiting after each left the GPU
 * idle between samples, and the tuner then picked layernorm 8192x8192's 16-warp variant
 * (0.988-0.999 of Triton in paired do_bench rounds) over its 4-warp one (1.017-1.018).
 * Back-to-back batches of launches (the fallback when the flush buffer cannot be
 * allocated) time a steady state that favoured the wrong cubin: layernorm 32768x2048
 * picked its uncapped cubin at 3779 GB/s in do_bench against 3885 for the capped one.
 *
 * Tuning never changes results: every pointer argument whose size is known
 * (tile_rt_arg.buf.bytes > 0) is copied aside before the trials and copied back after.
 * The runtime cannot know the size of a raw device pointer, so a buffer passed with
 * bytes = 0 is not restored: pass sizes for buffers the kernel both reads and writes
 * (in-place updates, accumulators), or tune with TILE_TUNE=0.
 *
 * The tuning cache: $cache_dir/tune/HEX.bin (same entry format as the JIT's), HEX a hash
 * of (device name, kernel name, kernel source hash, key hash); its payload is the chosen
 * variant's text, matched against the candidates when read back. */
#include "rt_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TUNE_WARMUP 2
#define TUNE_REPS   9
/* Without a flush buffer, a sample is a batch of back-to-back launches lasting at least
 * this long: with one launch per sample and nothing before it, the host's launch gap (3-4
 * us on the H200 machines) landed inside the events and made 70 us kernels look up to 6%
 * apart at random. */
#define TUNE_SAMPLE_MS 0.25
#define TUNE_MAX_BATCH 64
/* The final round: candidates within TUNE_CLOSE of the best screening time are timed again,
 * interleaved (one sample of each in turn, so clock and thermal drift hit all alike), and
 * the best median of those wins.  Screening alone picked layernorm 16384x4096's slower
 * cubin (3722 against 3784 GB/s) in one of two runs. */
#define TUNE_CLOSE      0.03
#define TUNE_FINALISTS  6
#define TUNE_FINAL_MS   1.0
#define TUNE_FINAL_REPS 21

#define TUNE_SLOTS (TUNE_FINALISTS * TUNE_FINAL_REPS)

/* What the samples need: a pair of events per sample slot, and the flush buffer (0: batches
 * instead). */
typedef struct Timer {
    CUevent ev[2 * TUNE_SLOTS];
    int nev;
    CUdeviceptr flush;
    size_t flush_words;
} Timer;

/* Makes slots [0, nslots) usable: creates the events not created yet. */
static tile_rt_status timer_slots(tile_rt_kernel *k, Timer *t, int nslots) {
    tile_rt *rt = k->m->rt;
    while (t->nev < 2 * nslots) {
        CUresult r = rt->cu.cuEventCreate(&t->ev[t->nev], CU_EVENT_DEFAULT);
        if (r != CUDA_SUCCESS)
            return rt_cuda_fail(rt, r, "cuEventCreate", "tuning '%s'", k->name);
        t->nev++;
    }
    return TILE_RT_OK;
}

/* Enqueues one sample of inst in slot: the L2 flush, an event, the launch (batch launches
 * without a flush), an event.  Nothing waits: a round's samples queue back to back on the
 * stream, as do_bench's do, so the GPU does not idle between them waiting for the host. */
static tile_rt_status enqueue_sample(tile_rt_kernel *k, RtInstance *inst, const tile_rt_arg *args, const RtValue *vals,
                                     void *stream, const int64_t *grid_given, const Timer *t, int slot, int batch) {
    tile_rt *rt = k->m->rt;
    RtCuda *cu = &rt->cu;
    tile_rt_status ls = TILE_RT_OK;
    if (t->flush) {
        CUresult r = cu->cuMemsetD32Async(t->flush, 0, t->flush_words, (CUstream)stream);
        if (r != CUDA_SUCCESS)
            return rt_cuda_fail(rt, r, "cuMemsetD32Async", "tuning '%s': flushing the L2", k->name);
    }
    cu->cuEventRecord(t->ev[2 * slot], (CUstream)stream);
    for (int i = 0; i < batch && ls == TILE_RT_OK; i++)
        ls = rt_launch_instance(k, inst, args, vals, stream, grid_given);
    cu->cuEventRecord(t->ev[2 * slot + 1], (CUstream)stream);
    return ls;
}

/* Waits for the sample in slot: *ms per launch. */
static tile_rt_status read_sample(tile_rt_kernel *k, RtInstance *inst, const Timer *t, int slot, int batch,
                                  double *ms) {
    tile_rt *rt = k->m->rt;
    RtCuda *cu = &rt->cu;
    const char *call = "cuEventSynchronize";
    CUresult er = cu->cuEventSynchronize(t->ev[2 * slot + 1]);
    float f = 0;
    if (er == CUDA_SUCCESS) {
        call = "cuEventElapsedTime";
        er = cu->cuEventElapsedTime(&f, t->ev[2 * slot], t->ev[2 * slot + 1]);
    }
    if (er != CUDA_SUCCESS)
        return rt_cuda_fail(rt, er, call, "kernel '%s' variant %s", k->name, inst->text);
    *ms = f / batch;
    return TILE_RT_OK;
}

static void tune_key(const tile_rt_kernel *k, uint64_t keyhash, char hex[33]) {
    const tile_rt *rt = k->m->rt;
    uint64_t h[2] = {RT_FNV_BASIS, 0x84222325cbf29ce4ull};
    uint64_t src = k->m->prog ? k->m->source_hash : k->meta->source_hash;
    for (int i = 0; i < 2; i++) {
        uint64_t x = h[i];
        x = rt_fnv1a(x, rt->name, strlen(rt->name) + 1);
        x = rt_fnv1a(x, k->name, strlen(k->name) + 1);
        x = rt_fnv1a(x, &src, sizeof src);
        x = rt_fnv1a(x, &keyhash, sizeof keyhash);
        for (uint32_t p = 0; p < k->nparams; p++)
            if (k->params[p].is_const && k->const_set[p])
                x = rt_fnv1a(x, &k->const_i[p], sizeof k->const_i[p]);
        for (int p = 0; p < k->npins; p++) {
            x = rt_fnv1a(x, k->pin_name[p], strlen(k->pin_name[p]) + 1);
            x = rt_fnv1a(x, &k->pin_f[p], sizeof k->pin_f[p]);
        }
        h[i] = x;
    }
    snprintf(hex, 33, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
}

bool rt_tune_disk_get(tile_rt_kernel *k, uint64_t keyhash, char *text, size_t n) {
    char hex[33], *data;
    size_t len;
    tune_key(k, keyhash, hex);
    if (!rt_cache_read(k->m->rt, "tune", hex, &data, &len))
        return false;
    bool ok = len < n && memchr(data, 0, len) == NULL;
    if (ok) {
        memcpy(text, data, len);
        text[len] = 0;
    }
    free(data);
    return ok;
}

void rt_tune_disk_put(tile_rt_kernel *k, uint64_t keyhash, const char *text) {
    char hex[33];
    tune_key(k, keyhash, hex);
    rt_cache_write(k->m->rt, "tune", hex, text, strlen(text));
}

#ifdef TILE_RT_HAVE_CUDA
typedef struct Saved {
    void *dev, *copy;
    size_t bytes;
} Saved;

/* The launch's values by param index, for rt_launch_instance. */
static void arg_values(const tile_rt_kernel *k, const tile_rt_arg *args, RtValue *vals) {
    for (int i = 0; i < k->nrt; i++) {
        int pi = k->rt_param[i];
        const tile_rt_arg *a = &args[i];
        if (a->kind == TILE_RT_ARG_PTR)
            vals[pi] = (RtValue){.i = (int64_t)(uintptr_t)a->buf.ptr};
        else if (a->kind == TILE_RT_ARG_F64)
            vals[pi] = (RtValue){.is_float = true, .f = a->f64};
        else if (tile_scalar_is_float(k->params[pi].scalar))
            vals[pi] = (RtValue){.is_float = true, .f = (double)a->i64};
        else
            vals[pi] = (RtValue){.i = a->i64};
    }
}

/* "rows=3, cols=1000": the key's values, for log lines. */
static void key_text(const tile_rt_kernel *k, const RtValue *vals, char *buf, size_t n) {
    size_t w = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < k->meta->nkey && w < n; i++) {
        int pi = k->meta->key[i];
        int c = snprintf(buf + w, n - w, "%s%s=%" PRId64, i ? ", " : "", k->params[pi].name, vals[pi].i);
        if (c > 0)
            w += (size_t)c;
    }
}

tile_rt_status rt_tune(tile_rt_kernel *k, RtInstance **cands, int ncands, const tile_rt_arg *args, int nargs,
                       void *stream, const int64_t *grid_given, RtInstance **best) {
    tile_rt *rt = k->m->rt;
    RtCuda *cu = &rt->cu;
    RtValue vals[RT_MAX_PARAMS];
    arg_values(k, args, vals);
    char key[512];
    key_text(k, vals, key, sizeof key);
    Saved saved[RT_MAX_PARAMS];
    int nsaved = 0;
    tile_rt_status s = rt_cuda_bind(rt);
    for (int i = 0; i < nargs && s == TILE_RT_OK; i++) {
        const tile_rt_arg *a = &args[i];
        if (a->kind != TILE_RT_ARG_PTR || !a->buf.ptr || !a->buf.bytes)
            continue;
        Saved *sv = &saved[nsaved];
        sv->dev = a->buf.ptr;
        sv->bytes = a->buf.bytes;
        if ((s = tile_rt_alloc(rt, sv->bytes, &sv->copy)))
            break;
        nsaved++;
        CUresult r = cu->cuMemcpyDtoD((CUdeviceptr)(uintptr_t)sv->copy, (CUdeviceptr)(uintptr_t)sv->dev, sv->bytes);
        if (r != CUDA_SUCCESS)
            s = rt_cuda_fail(rt, r, "cuMemcpyDtoD", "kernel '%s': saving '%s' before tuning", k->name,
                             tile_rt_kernel_param_name(k, i));
    }
    Timer tm = {.nev = 0};
    if (s == TILE_RT_OK)
        s = timer_slots(k, &tm, TUNE_REPS);
    int l2 = 0;
    if (s == TILE_RT_OK && cu->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, rt->dev) == CUDA_SUCCESS &&
        l2 > 0) {
        size_t bytes = 2 * (size_t)l2;
        if (cu->cuMemAlloc(&tm.flush, bytes) == CUDA_SUCCESS)
            tm.flush_words = bytes / 4;
        else
            tm.flush = 0;
    }
    if (rt->tune_log && s == TILE_RT_OK)
        rt_log(rt, "tune %s: %s", k->name,
               tm.flush ? "one launch per sample after an L2 flush" : "batches of launches (no flush buffer)");
    double t_start = rt_now(), best_ms = 0;
    bool progress = false;
    int nran = 0;
    *best = NULL;
    double *screen = calloc((size_t)(ncands > 0 ? ncands : 1), sizeof *screen);
    double *per_launch = calloc((size_t)(ncands > 0 ? ncands : 1), sizeof *per_launch);
    /* every sample as timed, for the tuning log (tune_log.c) */
    RtTrial *trials = calloc((size_t)(ncands > 0 ? ncands : 1), sizeof *trials);
    if (!screen || !per_launch || !trials)
        s = rt_fail(rt, TILE_RT_ERR_INVALID, "out of memory");
    for (int c = 0; c < ncands && s == TILE_RT_OK; c++) {
        RtInstance *inst = cands[c];
        double times[TUNE_REPS];
        tile_rt_status ls = TILE_RT_OK;
        for (int w = 0; w < TUNE_WARMUP && ls == TILE_RT_OK; w++)
            ls = rt_launch_instance(k, inst, args, vals, stream, grid_given);
        /* without a flush, one launch timed first sizes the batches */
        int batch = 1;
        if (!tm.flush && ls == TILE_RT_OK) {
            double ms = 0;
            ls = enqueue_sample(k, inst, args, vals, stream, grid_given, &tm, 0, 1);
            if (ls == TILE_RT_OK)
                ls = read_sample(k, inst, &tm, 0, 1, &ms);
            batch = (int)(TUNE_SAMPLE_MS / (ms > 0 ? ms : 1e-3)) + 1;
            if (batch > TUNE_MAX_BATCH)
                batch = TUNE_MAX_BATCH;
        }
        for (int r = 0; r < TUNE_REPS && ls == TILE_RT_OK; r++)
            ls = enqueue_sample(k, inst, args, vals, stream, grid_given, &tm, r, batch);
        for (int r = 0; r < TUNE_REPS && ls == TILE_RT_OK; r++)
            ls = read_sample(k, inst, &tm, r, batch, &times[r]);
        if (ls != TILE_RT_OK) {
            /* A variant that cannot launch (too many resources for its block, say) is
             * skipped; a sticky error shows when the buffers are restored below. */
            if (rt->tune_log)
                rt_log(rt, "tune %s [%s]: %s: failed: %s", k->name, key, inst->text, tile_rt_last_error(rt));
            continue;
        }
        memcpy(trials[c].screen, times, sizeof times);
        trials[c].nscreen = TUNE_REPS;
        double med = rt_median(times, TUNE_REPS);
        screen[c] = med;
        per_launch[c] = med > 0 ? med : 1e-3;
        nran++;
        if (rt->tune_log)
            rt_log(rt, "tune %s [%s]: %s: %.4f ms", k->name, key, inst->text, med);
        if (!*best || med < best_ms) {
            *best = inst;
            best_ms = med;
        }
        double el = rt_now() - t_start;
        if (el > 1.0 && !progress) {
            progress = true;
            rt_log(rt, "tilert: tuning %s [%s]: %d of %d variants timed after %.1f s", k->name, key, c + 1, ncands, el);
        }
    }
    /* the final round among the close ones */
    int fin[TUNE_FINALISTS], nfin = 0;
    for (int c = 0; c < ncands && s == TILE_RT_OK && *best && nfin < TUNE_FINALISTS; c++)
        if (screen[c] > 0 && screen[c] <= best_ms * (1 + TUNE_CLOSE))
            fin[nfin++] = c;
    if (nfin > 1) {
        double ftimes[TUNE_FINALISTS][TUNE_FINAL_REPS];
        int fbatch[TUNE_FINALISTS];
        bool ok[TUNE_FINALISTS];
        for (int f = 0; f < nfin; f++) {
            fbatch[f] = tm.flush ? 1 : (int)(TUNE_FINAL_MS / per_launch[fin[f]]) + 1;
            if (fbatch[f] > 16 * TUNE_MAX_BATCH)
                fbatch[f] = 16 * TUNE_MAX_BATCH;
            ok[f] = true;
        }
        if (timer_slots(k, &tm, nfin * TUNE_FINAL_REPS) != TILE_RT_OK)
            nfin = 0; /* no events: the screening's choice stands */
        for (int r = 0; r < TUNE_FINAL_REPS; r++)
            for (int f = 0; f < nfin; f++)
                if (ok[f] && enqueue_sample(k, cands[fin[f]], args, vals, stream, grid_given, &tm,
                                            f * TUNE_FINAL_REPS + r, fbatch[f]) != TILE_RT_OK)
                    ok[f] = false;
        for (int f = 0; f < nfin; f++)
            for (int r = 0; r < TUNE_FINAL_REPS && ok[f]; r++)
                if (read_sample(k, cands[fin[f]], &tm, f * TUNE_FINAL_REPS + r, fbatch[f], &ftimes[f][r]) != TILE_RT_OK)
                    ok[f] = false;
        double fbest = 0;
        RtInstance *fwin = NULL;
        for (int f = 0; f < nfin; f++) {
            if (!ok[f])
                continue;
            memcpy(trials[fin[f]].final, ftimes[f], sizeof ftimes[f]);
            trials[fin[f]].nfinal = TUNE_FINAL_REPS;
            double med = rt_median(ftimes[f], TUNE_FINAL_REPS);
            if (rt->tune_log)
                rt_log(rt, "tune %s [%s]: final: %s: %.4f ms", k->name, key, cands[fin[f]]->text, med);
            if (!fwin || med < fbest) {
                fwin = cands[fin[f]];
                fbest = med;
            }
        }
        if (fwin) {
            *best = fwin;
            best_ms = fbest;
        }
    }
    free(screen);
    free(per_launch);
    atomic_fetch_add(&rt->stats.tune_trial_ns, (uint64_t)((rt_now() - t_start) * 1e9));
    for (int i = 0; i < tm.nev; i++)
        cu->cuEventDestroy(tm.ev[i]);
    if (tm.flush)
        cu->cuMemFree(tm.flush);
    for (int i = 0; i < nsaved; i++) {
        CUresult r = cu->cuMemcpyDtoD((CUdeviceptr)(uintptr_t)saved[i].dev, (CUdeviceptr)(uintptr_t)saved[i].copy,
                                      saved[i].bytes);
        if (r != CUDA_SUCCESS && s == TILE_RT_OK)
            s = rt_cuda_fail(rt, r, "cuMemcpyDtoD",
                             "kernel '%s': restoring a buffer after "
                             "tuning",
                             k->name);
        tile_rt_free(rt, saved[i].copy);
    }
    if (s == TILE_RT_OK && !*best)
        s = rt_fail(rt, TILE_RT_ERR_RUN,
                    "kernel '%s': none of its %d admissible variants "
                    "launched: %s",
                    k->name, ncands, tile_rt_last_error(rt));
    if (s == TILE_RT_OK)
        rt_tune_log_append(k, key, cands, trials, ncands, *best, best_ms, rt_now() - t_start);
    free(trials);
    if (s == TILE_RT_OK && (progress || rt->tune_log))
        rt_log(rt, "tilert: tuned %s [%s]: %s (%.4f ms; %d variants, %.2f s)", k->name, key, (*best)->text, best_ms,
               nran, rt_now() - t_start);
    return s;
}
#else
tile_rt_status rt_tune(tile_rt_kernel *k, RtInstance **cands, int ncands, const tile_rt_arg *args, int nargs,
                       void *stream, const int64_t *grid_given, RtInstance **best) {
    (void)cands, (void)ncands, (void)args, (void)nargs, (void)stream, (void)grid_given;
    *best = NULL;
    return rt_fail(k->m->rt, TILE_RT_ERR_UNSUPPORTED, "tuning needs the cuda device");
}
#endif
