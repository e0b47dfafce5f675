/* The tuning log and the tuning policies.
 *
 * Every tuning run appends one record to $cache_dir/tune.log (text, one write(2) with
 * O_APPEND per record, so that processes tuning at once do not interleave lines):
 *
 *   run<TAB>kernel=K<TAB>key=KEY<TAB>device=DEV<TAB>policy=P<TAB>candidates=N
 *       <TAB>chosen=VARIANT<TAB>best_ms=T<TAB>trial_s=S
 *   cand<TAB>variant=VARIANT<TAB>options=O<TAB>regs=R<TAB>local=L<TAB>compile_ms=C
 *       <TAB>screen=T,T,...<TAB>final=T,...
 *   end
 *
 * One `cand` line per candidate timed, in the order timed: its variant text (facts and
 * "registers uncapped" included), the ptxas options its cubin was built with, registers
 * per thread and local memory per thread (spills and stack, bytes) as the driver reports
 * them, its compile time (a disk-cache hit's read time), the screening samples and, for the
 * finalists, the final round's samples, in milliseconds.  `tilec tune --replay` replays
 * search policies against these samples (docs/tools.md, "Tuning log and replay").
 *
 * Policies ($TILE_TUNE_POLICY): exhaustive (the default), random:K, model:K; they choose
 * which admissible variants a cold tuning compiles and times. */
#include "rt_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_NAME "tune.log"

/* mkdir -p dir */
static bool make_dir(const char *dir) {
    char buf[4200];
    snprintf(buf, sizeof buf, "%s", dir);
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

/* A growing text buffer. */
typedef struct Text {
    char *s;
    size_t len, cap;
} Text;

static void put(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Text *t, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < room && t->s) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = (t->cap + (size_t)n + 256) * 2;
        char *s = realloc(t->s, cap);
        if (!s)
            return;
        t->s = s;
        t->cap = cap;
    }
}

static void put_samples(Text *t, const char *name, const double *v, int n) {
    put(t, "\t%s=", name);
    for (int i = 0; i < n; i++)
        put(t, "%s%.6g", i ? "," : "", v[i]);
}

void rt_tune_log_append(tile_rt_kernel *k, const char *key, RtInstance *const *cands, const RtTrial *trials, int ncands,
                        const RtInstance *best, double best_ms, double trial_s) {
    tile_rt *rt = k->m->rt;
    if (!rt->cache_dir[0] || !make_dir(rt->cache_dir))
        return;
    Text t = {0};
    put(&t, "run\tkernel=%s\tkey=%s\tdevice=%s\tpolicy=%s\tcandidates=%d\tchosen=%s\tbest_ms=%.6g\ttrial_s=%.3f\n",
        k->name, key, rt->name, rt_tune_policy_name(), ncands, best ? best->text : "", best_ms, trial_s);
    for (int c = 0; c < ncands; c++) {
        const RtInstance *inst = cands[c];
        int regs = -1, local = -1;
#ifdef TILE_RT_HAVE_CUDA
        if (inst->fn) {
            rt->cu.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, inst->fn);
            rt->cu.cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, inst->fn);
        }
#endif
        char opts[160];
        const char *o = strstr(inst->ptxas, "-O");
        if (inst->ptxas[0])
            snprintf(opts, sizeof opts, "ptxas %s%s", o && o[2] >= '0' && o[2] <= '9' ? "" : "-O3 ", inst->ptxas);
        else
            snprintf(opts, sizeof opts, "%s",
                     inst->alt ? "ptxas -O3" : "ptxas -O3, registers capped for occupancy where that spills nothing");
        put(&t, "cand\tvariant=%s\toptions=%s\tregs=%d\tlocal=%d\tcompile_ms=%.1f", inst->text, opts, regs, local,
            inst->compile_s * 1e3);
        put_samples(&t, "screen", trials[c].screen, trials[c].nscreen);
        put_samples(&t, "final", trials[c].final, trials[c].nfinal);
        put(&t, "\n");
    }
    put(&t, "end\n");
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", rt->cache_dir, LOG_NAME);
    int fd = t.s ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
    if (fd >= 0) {
        if (write(fd, t.s, t.len) != (ssize_t)t.len)
            rt_log(rt, "tilert: could not append to the tuning log %s", path);
        close(fd);
    }
    free(t.s);
}

/* ---- policies ------------------------------------------------------------------------- */
typedef enum Policy { POLICY_EXHAUSTIVE, POLICY_RANDOM, POLICY_MODEL } Policy;

/* $TILE_TUNE_POLICY: the policy and its K (default 4); an unknown value is exhaustive. */
static Policy policy_from_env(int *kk) {
    const char *e = getenv("TILE_TUNE_POLICY");
    *kk = 4;
    if (!e)
        return POLICY_EXHAUSTIVE;
    Policy p = !strncmp(e, "random", 6) ? POLICY_RANDOM : !strncmp(e, "model", 5) ? POLICY_MODEL : POLICY_EXHAUSTIVE;
    const char *colon = strchr(e, ':');
    if (p != POLICY_EXHAUSTIVE && colon && atoi(colon + 1) > 0)
        *kk = atoi(colon + 1);
    return p;
}

const char *rt_tune_policy_name(void) {
    static _Thread_local char buf[32];
    int kk;
    Policy p = policy_from_env(&kk);
    if (p == POLICY_EXHAUSTIVE)
        return "exhaustive";
    snprintf(buf, sizeof buf, "%s:%d", p == POLICY_RANDOM ? "random" : "model", kk);
    return buf;
}

/* The value of field `name` in a log line (tab-separated name=value), copied into out. */
static bool field(const char *line, const char *name, char *out, size_t n) {
    size_t len = strlen(name);
    for (const char *p = line; p; p = strchr(p, '\t')) {
        if (*p == '\t')
            p++;
        if (!strncmp(p, name, len) && p[len] == '=') {
            const char *v = p + len + 1, *end = strpbrk(v, "\t\n");
            size_t m = end ? (size_t)(end - v) : strlen(v);
            snprintf(out, n, "%.*s", (int)(m < n ? m : n - 1), v);
            return true;
        }
    }
    return false;
}

static double median_of(const char *list) {
    double v[RT_LOG_MAX_SAMPLES];
    int n = 0;
    for (const char *p = list; *p && n < RT_LOG_MAX_SAMPLES;) {
        char *end;
        v[n++] = strtod(p, &end);
        p = *end == ',' ? end + 1 : end + strlen(end);
    }
    return n ? rt_median(v, n) : 0;
}

/* model: each admissible variant's score is its mean over the log's runs of this kernel on
 * this device of (its screening median / that run's best screening median); variants the
 * log has not seen score after every seen one, in their order. */
static void model_scores(tile_rt_kernel *k, const uint32_t *vis, int n, double *score) {
    tile_rt *rt = k->m->rt;
    double *sum = calloc((size_t)n + 1, sizeof *sum);
    int *cnt = calloc((size_t)n + 1, sizeof *cnt);
    double *run_rel = calloc((size_t)n + 1, sizeof *run_rel);
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", rt->cache_dir, LOG_NAME);
    FILE *f = rt->cache_dir[0] && sum && cnt && run_rel ? fopen(path, "r") : NULL;
    char *line = NULL;
    size_t cap = 0;
    bool in_run = false;
    double run_best = 0;
    char v[512], s[4096];
    /* a run's candidates: medians first, then relative to the run's best at its end */
    while (f && getline(&line, &cap, f) > 0) {
        if (!strncmp(line, "run\t", 4)) {
            char kn[256], dev[256];
            in_run = field(line, "kernel", kn, sizeof kn) && !strcmp(kn, k->name) &&
                     field(line, "device", dev, sizeof dev) && !strcmp(dev, rt->name);
            run_best = 0;
            for (int i = 0; i < n; i++)
                run_rel[i] = 0;
        } else if (in_run && !strncmp(line, "cand\t", 5) && field(line, "variant", v, sizeof v) &&
                   field(line, "screen", s, sizeof s)) {
            double med = median_of(s);
            if (med <= 0)
                continue;
            if (run_best == 0 || med < run_best)
                run_best = med;
            char *semi = strchr(v, ';');
            if (semi)
                *semi = 0;
            for (int i = 0; i < n; i++)
                if (!strcmp(k->meta->variants[vis[i]].text, v) && (run_rel[i] == 0 || med < run_rel[i]))
                    run_rel[i] = med; /* the faster of its capped and uncapped cubins */
        } else if (in_run && !strncmp(line, "end", 3)) {
            for (int i = 0; i < n && run_best > 0; i++)
                if (run_rel[i] > 0) {
                    sum[i] += run_rel[i] / run_best;
                    cnt[i]++;
                }
            in_run = false;
        }
    }
    if (f)
        fclose(f);
    free(line);
    for (int i = 0; i < n; i++)
        score[i] = cnt && cnt[i] ? sum[i] / cnt[i] : INFINITY;
    free(sum);
    free(cnt);
    free(run_rel);
}

void rt_tune_policy_pick(tile_rt_kernel *k, const uint32_t *vis, int n, bool *keep) {
    int kk;
    Policy p = policy_from_env(&kk);
    for (int i = 0; i < n; i++)
        keep[i] = p == POLICY_EXHAUSTIVE || n <= kk;
    if (p == POLICY_EXHAUSTIVE || n <= kk)
        return;
    int *order = malloc((size_t)n * sizeof *order);
    double *score = malloc((size_t)n * sizeof *score);
    if (!order || !score) {
        for (int i = 0; i < n; i++)
            keep[i] = true;
        free(order);
        free(score);
        return;
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (p == POLICY_RANDOM) {
        /* the same K for the same kernel and variant count in every process */
        uint64_t x = rt_fnv1a(RT_FNV_BASIS, k->name, strlen(k->name));
        x = rt_fnv1a(x, &n, sizeof n);
        for (int i = 0; i < kk; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            int j = i + (int)((x >> 33) % (uint64_t)(n - i));
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    } else {
        model_scores(k, vis, n, score);
        /* stable insertion sort by score: unseen variants keep their order at the end */
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && score[order[j]] < score[order[j - 1]]; j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
    }
    for (int i = 0; i < kk; i++)
        keep[order[i]] = true;
    free(order);
    free(score);
}
