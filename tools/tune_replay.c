/* tilec tune --replay LOG: replays tuning policies offline against the samples a tuning
 * log recorded (the runtime appends one record per tuning run to $cache_dir/tune.log;
 * runtime/tune_log.c describes the format), and reports per policy and run which
 * candidate it would have chosen, how close that is to the best, and what it spent.
 *
 * A policy sees a candidate's screening samples (every candidate has them) and, in the
 * exhaustive search's final round, its final samples.  How good a choice is (its quality:
 * the best time / its time) is judged on each candidate's best-measured time: the median
 * of its final samples where the log has them, else of its screening ones.
 * Policies:
 *   exhaustive  the runtime's own search: every candidate screened; those within 3% of the
 *               best screened again in the final round (its samples, where recorded), the
 *               best final median wins; it reproduces the recorded choice
 *   random-k    K candidates drawn at random (the mean over 200 seeded draws)
 *   halving     successive halving: every candidate one sample, the better half two more,
 *               and so on until one is left or the samples run out
 *   model       the K candidates whose times relative to their run's best were lowest in
 *               the log's other runs of the same kernel on the same device (leave one out)
 * Budget: candidates timed, their compile time as recorded (a variant's capped and uncapped
 * cubins come from one compile, counted once), and GPU time (the samples and warm-up
 * launches a policy would have run, each at its recorded time). */
#include "subcommands.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char tune_help[] = "usage: tilec tune --replay LOG [--policy P[,P...]] [--k K] [--kernel NAME]\n"
                         "\nReplay tuning policies against the measurements of a tuning log (the runtime\n"
                         "appends one record per tuning run to $TILE_CACHE_DIR/tune.log):\n"
                         "  --policy P          exhaustive, random-k, halving, model (default: every one)\n"
                         "  --k K               candidates random-k and model time (default 4)\n"
                         "  --kernel NAME       only the runs of this kernel\n"
                         "Per run and policy: the candidate chosen, its quality (best time / its time: 1 is\n"
                         "the best), and the budget (candidates timed, compile seconds, GPU milliseconds);\n"
                         "then each policy's mean and worst quality and total budget.  The runtime uses a\n"
                         "policy for cold tuning with TILE_TUNE_POLICY=random:K or model:K.\n";

enum { EXIT_ERROR = 1, EXIT_USAGE = 2 };
enum { MAX_SAMPLES = 64 };

/* Constants of the runtime's tuner (runtime/tune.c). */
#define WARMUP    2
#define CLOSE     0.03
#define FINALISTS 6
#define DRAWS     200

typedef struct Cand {
    char *variant, *options;
    int regs, local;
    double compile_ms;
    double screen[MAX_SAMPLES], final[MAX_SAMPLES];
    int nscreen, nfinal;
    double med; /* screening median */
} Cand;

typedef struct Run {
    char *kernel, *key, *device, *policy, *chosen;
    Cand *c;
    int n;
} Run;

static char *field(const char *line, const char *name) {
    size_t len = strlen(name);
    for (const char *p = line; p; p = strchr(p, '\t')) {
        if (*p == '\t')
            p++;
        if (!strncmp(p, name, len) && p[len] == '=') {
            const char *v = p + len + 1;
            size_t m = strcspn(v, "\t\n");
            return strndup(v, m);
        }
    }
    return NULL;
}

static int samples(const char *line, const char *name, double *out) {
    char *v = field(line, name);
    int n = 0;
    for (char *p = v; p && *p && n < MAX_SAMPLES;) {
        char *end;
        double d = strtod(p, &end);
        if (end == p)
            break;
        out[n++] = d;
        p = *end == ',' ? end + 1 : end;
    }
    free(v);
    return n;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n) {
    if (n <= 0)
        return 0;
    double t[MAX_SAMPLES];
    memcpy(t, v, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Reads every complete record of the log; a record cut short (a process killed while
 * writing) is dropped.  Returns the count, -1 when the file cannot be read. */
static int read_log(const char *path, const char *only_kernel, Run **out) {
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    Run *runs = NULL, cur = {0};
    int nruns = 0, cap = 0;
    bool in_run = false;
    char *line = NULL;
    size_t lcap = 0;
    while (getline(&line, &lcap, f) > 0) {
        if (!strncmp(line, "run\t", 4)) {
            for (int i = 0; in_run && i < cur.n; i++)
                free(cur.c[i].variant), free(cur.c[i].options);
            free(cur.c);
            cur = (Run){.kernel = field(line, "kernel"),
                        .key = field(line, "key"),
                        .device = field(line, "device"),
                        .policy = field(line, "policy"),
                        .chosen = field(line, "chosen")};
            in_run = cur.kernel && cur.chosen;
        } else if (in_run && !strncmp(line, "cand\t", 5)) {
            Cand *c = realloc(cur.c, (size_t)(cur.n + 1) * sizeof *c);
            if (!c)
                break;
            cur.c = c;
            Cand *x = &cur.c[cur.n++];
            *x = (Cand){.variant = field(line, "variant"), .options = field(line, "options")};
            char *v;
            x->regs = (v = field(line, "regs")) ? atoi(v) : -1;
            free(v);
            x->local = (v = field(line, "local")) ? atoi(v) : -1;
            free(v);
            x->compile_ms = (v = field(line, "compile_ms")) ? atof(v) : 0;
            free(v);
            x->nscreen = samples(line, "screen", x->screen);
            x->nfinal = samples(line, "final", x->final);
            x->med = median(x->screen, x->nscreen);
            if (!x->variant || x->nscreen == 0)
                cur.n--, free(x->variant), free(x->options);
        } else if (in_run && !strncmp(line, "end", 3)) {
            if (cur.n > 0 && (!only_kernel || !strcmp(only_kernel, cur.kernel))) {
                if (nruns == cap) {
                    cap = cap ? 2 * cap : 16;
                    runs = realloc(runs, (size_t)cap * sizeof *runs);
                }
                runs[nruns++] = cur;
            } else {
                for (int i = 0; i < cur.n; i++)
                    free(cur.c[i].variant), free(cur.c[i].options);
                free(cur.c);
            }
            cur = (Run){0};
            in_run = false;
        }
    }
    free(line);
    fclose(f);
    *out = runs;
    return nruns;
}

/* ---- policies --------------------------------------------------------------------- */
typedef struct Outcome {
    int chosen;   /* candidate index */
    int compiled; /* candidates timed (each compiled, or read from the cache) */
    double compile_s;
    double gpu_ms;
} Outcome;

/* Whether candidates a and b came from one compile: a variant's register-capped cubin and
 * its uncapped one ("; registers uncapped") share it, and the log gives both its time. */
static bool same_compile(const Cand *a, const Cand *b) {
    static const char unc[] = "; registers uncapped";
    size_t la = strlen(a->variant), lb = strlen(b->variant), n = sizeof unc - 1;
    if (la >= n && !strcmp(a->variant + la - n, unc))
        la -= n;
    if (lb >= n && !strcmp(b->variant + lb - n, unc))
        lb -= n;
    return la == lb && !strncmp(a->variant, b->variant, la);
}

/* The compile seconds of the candidates set[0..n), each compile counted once. */
static double compile_seconds(const Run *r, const int *set, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = same_compile(&r->c[set[i]], &r->c[set[j]]);
        if (!seen)
            s += r->c[set[i]].compile_ms * 1e-3;
    }
    return s;
}

/* A candidate's screening cost: warm-up launches and its samples. */
static double screen_ms(const Cand *c) {
    return (WARMUP + c->nscreen) * c->med;
}

/* The runtime's search over the candidates of `set` (indices into r->c). */
static Outcome search(const Run *r, const int *set, int n) {
    Outcome o = {.chosen = -1};
    double best = 0;
    for (int i = 0; i < n; i++) {
        const Cand *c = &r->c[set[i]];
        o.compiled++;
        o.gpu_ms += screen_ms(c);
        if (o.chosen < 0 || c->med < best) {
            o.chosen = set[i];
            best = c->med;
        }
    }
    o.compile_s = compile_seconds(r, set, n);
    int fin[FINALISTS], nfin = 0;
    for (int i = 0; i < n && nfin < FINALISTS; i++)
        if (r->c[set[i]].med <= best * (1 + CLOSE))
            fin[nfin++] = set[i];
    if (nfin > 1) {
        double fbest = 0;
        int fwin = -1;
        for (int f = 0; f < nfin; f++) {
            const Cand *c = &r->c[fin[f]];
            /* the final round's samples where the log has them, else the screening ones */
            double m = c->nfinal ? median(c->final, c->nfinal) : c->med;
            o.gpu_ms += (c->nfinal ? c->nfinal : c->nscreen) * m;
            if (fwin < 0 || m < fbest) {
                fwin = fin[f];
                fbest = m;
            }
        }
        o.chosen = fwin;
    }
    return o;
}

static Outcome exhaustive(const Run *r) {
    int *all = malloc((size_t)r->n * sizeof *all);
    for (int i = 0; i < r->n; i++)
        all[i] = i;
    Outcome o = search(r, all, r->n);
    free(all);
    return o;
}

static Outcome random_k(const Run *r, int k, uint64_t seed) {
    int *order = malloc((size_t)r->n * sizeof *order);
    for (int i = 0; i < r->n; i++)
        order[i] = i;
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    int m = k < r->n ? k : r->n;
    for (int i = 0; i < m; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int j = i + (int)((x >> 33) % (uint64_t)(r->n - i));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    Outcome o = search(r, order, m);
    free(order);
    return o;
}

static Outcome halving(const Run *r) {
    Outcome o = {.compiled = r->n};
    int *alive = malloc((size_t)r->n * sizeof *alive);
    double *score = malloc((size_t)r->n * sizeof *score);
    int n = r->n, used = 0, step = 1;
    for (int i = 0; i < r->n; i++) {
        alive[i] = i;
        o.gpu_ms += WARMUP * r->c[i].med;
    }
    o.compile_s = compile_seconds(r, alive, r->n);
    while (n > 1) {
        int take = used + step;
        for (int i = 0; i < n; i++) {
            const Cand *c = &r->c[alive[i]];
            int upto = take < c->nscreen ? take : c->nscreen;
            for (int s = used; s < upto; s++)
                o.gpu_ms += c->screen[s];
            score[alive[i]] = median(c->screen, upto);
        }
        bool more = false;
        for (int i = 0; i < n; i++)
            more |= take < r->c[alive[i]].nscreen;
        used = take;
        /* keep the better half (sorted by score, ties in log order) */
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && score[alive[j]] < score[alive[j - 1]]; j--) {
                int t = alive[j];
                alive[j] = alive[j - 1];
                alive[j - 1] = t;
            }
        n = more ? (n + 1) / 2 : 1;
        step *= 2;
    }
    o.chosen = alive[0];
    free(alive);
    free(score);
    return o;
}

/* The variant text without its facts ("; div16: ..."), so runs of other keys compare;
 * the "registers uncapped" mark stays. */
static void base_text(const char *v, char *out, size_t n) {
    const char *semi = strchr(v, ';');
    const char *unc = strstr(v, "registers uncapped");
    snprintf(out, n, "%.*s%s", (int)(semi ? (size_t)(semi - v) : strlen(v)), v, unc ? "; registers uncapped" : "");
}

static Outcome model(const Run *runs, int nruns, int which, int k) {
    const Run *r = &runs[which];
    double *score = malloc((size_t)r->n * sizeof *score);
    int *order = malloc((size_t)r->n * sizeof *order);
    char a[512], b[512];
    for (int i = 0; i < r->n; i++) {
        double sum = 0;
        int cnt = 0;
        base_text(r->c[i].variant, a, sizeof a);
        for (int q = 0; q < nruns; q++) {
            const Run *o = &runs[q];
            if (q == which || strcmp(o->kernel, r->kernel) || strcmp(o->device, r->device))
                continue;
            double best = 0;
            for (int j = 0; j < o->n; j++)
                if (best == 0 || o->c[j].med < best)
                    best = o->c[j].med;
            for (int j = 0; j < o->n && best > 0; j++) {
                base_text(o->c[j].variant, b, sizeof b);
                if (!strcmp(a, b)) {
                    sum += o->c[j].med / best;
                    cnt++;
                }
            }
        }
        score[i] = cnt ? sum / cnt : INFINITY;
        order[i] = i;
    }
    for (int i = 1; i < r->n; i++)
        for (int j = i; j > 0 && score[order[j]] < score[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    Outcome o = search(r, order, k < r->n ? k : r->n);
    free(score);
    free(order);
    return o;
}

/* ---- the command ------------------------------------------------------------------ */
enum { P_EXHAUSTIVE, P_RANDOM, P_HALVING, P_MODEL, NPOLICIES };
static const char *const policy_names[NPOLICIES] = {"exhaustive", "random-k", "halving", "model"};

static void usage(const char *msg) {
    fprintf(stderr, "tilec: error: %s\n%s", msg, tune_help);
}

/* The candidate's best-measured time: its final round's median, else its screening one. */
static double true_ms(const Cand *c) {
    return c->nfinal ? median(c->final, c->nfinal) : c->med;
}

static double best_true(const Run *r) {
    double b = 0;
    for (int i = 0; i < r->n; i++)
        if (b == 0 || true_ms(&r->c[i]) < b)
            b = true_ms(&r->c[i]);
    return b;
}

int cmd_tune(int argc, char **argv) {
    const char *log = NULL, *only = NULL;
    bool want[NPOLICIES] = {false};
    bool any = false;
    int k = 4;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        bool takes = !strcmp(a, "--replay") || !strcmp(a, "--policy") || !strcmp(a, "--k") || !strcmp(a, "--kernel");
        const char *eq = strchr(a, '=');
        char name[32] = "";
        if (takes) {
            if (i + 1 >= argc) {
                char m[96];
                snprintf(m, sizeof m, "option '%s' needs a value", a);
                usage(m);
                return EXIT_USAGE;
            }
            snprintf(name, sizeof name, "%s", a);
            v = argv[++i];
        } else if (!strncmp(a, "--", 2) && eq) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
            v = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        if (!strcmp(name, "--replay") && v) {
            log = v;
        } else if (!strcmp(name, "--kernel") && v) {
            only = v;
        } else if (!strcmp(name, "--k") && v) {
            char *end;
            long kv = strtol(v, &end, 10);
            if (*end || kv < 1 || kv > 100000) {
                usage("bad --k: expected a positive count");
                return EXIT_USAGE;
            }
            k = (int)kv;
        } else if (!strcmp(name, "--policy") && v) {
            for (const char *p = v; *p;) {
                size_t len = strcspn(p, ",");
                int found = -1;
                for (int q = 0; q < NPOLICIES; q++)
                    if (strlen(policy_names[q]) == len && !strncmp(p, policy_names[q], len))
                        found = q;
                if (found < 0) {
                    char m[160];
                    snprintf(m, sizeof m, "unknown policy '%.*s' (exhaustive, random-k, halving, model)", (int)len, p);
                    usage(m);
                    return EXIT_USAGE;
                }
                want[found] = any = true;
                p += len + (p[len] == ',');
            }
        } else {
            char m[160];
            snprintf(m, sizeof m, "unknown option '%s'", a);
            usage(m);
            return EXIT_USAGE;
        }
    }
    if (!log) {
        usage("tilec tune needs --replay LOG");
        return EXIT_USAGE;
    }
    for (int q = 0; q < NPOLICIES && !any; q++)
        want[q] = true;
    Run *runs = NULL;
    int nruns = read_log(log, only, &runs);
    if (nruns < 0) {
        fprintf(stderr, "tilec: error: cannot read the tuning log '%s'\n", log);
        return EXIT_ERROR;
    }
    if (nruns == 0) {
        fprintf(stderr, "tilec: error: no complete tuning run%s%s%s in '%s'\n", only ? " of kernel '" : "",
                only ? only : "", only ? "'" : "", log);
        return EXIT_ERROR;
    }
    double qsum[NPOLICIES] = {0}, qmin[NPOLICIES], csum[NPOLICIES] = {0}, gsum[NPOLICIES] = {0};
    int nsum[NPOLICIES] = {0}, same[NPOLICIES] = {0};
    for (int q = 0; q < NPOLICIES; q++)
        qmin[q] = 1;
    for (int ri = 0; ri < nruns; ri++) {
        const Run *r = &runs[ri];
        double best = best_true(r);
        printf("run %d: %s [%s] on %s: %d candidates; recorded (policy %s): %s\n", ri + 1, r->kernel, r->key, r->device,
               r->n, r->policy ? r->policy : "?", r->chosen);
        for (int q = 0; q < NPOLICIES; q++) {
            if (!want[q])
                continue;
            Outcome o;
            double quality;
            if (q == P_RANDOM) {
                /* the mean over seeded draws; the first draw's choice shown */
                Outcome first = random_k(r, k, 1);
                double qs = 0, cs = 0, gs = 0;
                int nc = 0;
                for (int d = 1; d <= DRAWS; d++) {
                    Outcome x = d == 1 ? first : random_k(r, k, (uint64_t)d);
                    qs += best / true_ms(&r->c[x.chosen]);
                    cs += x.compile_s;
                    gs += x.gpu_ms;
                    nc += x.compiled;
                }
                o = first;
                o.compile_s = cs / DRAWS;
                o.gpu_ms = gs / DRAWS;
                o.compiled = (nc + DRAWS / 2) / DRAWS;
                quality = qs / DRAWS;
            } else {
                o = q == P_EXHAUSTIVE ? exhaustive(r) : q == P_HALVING ? halving(r) : model(runs, nruns, ri, k);
                quality = best / true_ms(&r->c[o.chosen]);
            }
            bool is_same = !strcmp(r->c[o.chosen].variant, r->chosen);
            char label[32];
            snprintf(label, sizeof label, q == P_RANDOM || q == P_MODEL ? "%s (k=%d)" : "%s", policy_names[q], k);
            printf("  %-18s chose %s%s; quality %.3f; %d timed, %.2f s compile, %.2f ms GPU\n", label,
                   r->c[o.chosen].variant,
                   q == P_RANDOM ? " (first draw; quality: mean of 200)"
                   : is_same     ? " (as recorded)"
                                 : "",
                   quality, o.compiled, o.compile_s, o.gpu_ms);
            qsum[q] += quality;
            if (quality < qmin[q])
                qmin[q] = quality;
            csum[q] += o.compile_s;
            gsum[q] += o.gpu_ms;
            nsum[q]++;
            same[q] += is_same;
        }
    }
    printf("summary over %d run%s:\n", nruns, nruns == 1 ? "" : "s");
    for (int q = 0; q < NPOLICIES; q++)
        if (want[q])
            printf("  %-10s mean quality %.3f, worst %.3f, %d of %d choices as recorded; %.2f s compile, %.2f ms GPU\n",
                   policy_names[q], qsum[q] / nsum[q], qmin[q], same[q], nsum[q], csum[q], gsum[q]);
    for (int ri = 0; ri < nruns; ri++) {
        for (int i = 0; i < runs[ri].n; i++)
            free(runs[ri].c[i].variant), free(runs[ri].c[i].options);
        free(runs[ri].c);
        free(runs[ri].kernel), free(runs[ri].key), free(runs[ri].device), free(runs[ri].policy), free(runs[ri].chosen);
    }
    free(runs);
    return 0;
}
