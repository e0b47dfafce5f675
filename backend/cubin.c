/* PTX -> cubin through the CUDA toolkit's ptxas, and the -v report it prints
 * (registers, shared memory, spills). */
#define _GNU_SOURCE /* memmem */
#include "tb_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool is_exec(const char *p) {
    return p && *p && access(p, X_OK) == 0;
}

/* $TILEC_PTXAS, then the path CMake found at configure time, then PATH. */
static const char *find_ptxas(const char *explicit_path, char *buf, size_t n) {
    if (is_exec(explicit_path))
        return explicit_path;
    const char *env = getenv("TILEC_PTXAS");
    if (is_exec(env))
        return env;
#ifdef TILEC_PTXAS_PATH
    if (is_exec(TILEC_PTXAS_PATH))
        return TILEC_PTXAS_PATH;
#endif
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *c = strchr(path, ':');
        size_t l = c ? (size_t)(c - path) : strlen(path);
        if (l > 0 && l + 7 < n) {
            memcpy(buf, path, l);
            memcpy(buf + l, "/ptxas", 7);
            if (is_exec(buf))
                return buf;
        }
        path = c ? c + 1 : NULL;
    }
    return NULL;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    if (s) {
        s[n] = 0;
        *len = (size_t)n;
    }
    return s;
}

static int field_before(const char *line, const char *end, const char *word) {
    /* "...  12 bytes spill stores" : the number just before `word` */
    const char *w = strstr(line, word);
    if (!w || w > end)
        return -1;
    const char *p = w;
    while (p > line && p[-1] == ' ')
        p--;
    while (p > line && p[-1] >= '0' && p[-1] <= '9')
        p--;
    return atoi(p);
}

void tb_parse_ptxas_info(const char *log, const char *kernel_name, TbReport *r) {
    /* ptxas -v: "Compiling entry function 'k' for 'sm_90a'", then
     * "Function properties for k" / "N bytes stack frame, N bytes spill stores, N bytes spill loads"
     * and "Used N registers, ... N bytes smem, ...". */
    bool mine = kernel_name == NULL;
    for (const char *line = log; line && *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        const char *q;
        if ((q = strstr(line, "entry function '")) && q < end) {
            q += strlen("entry function '");
            const char *e = strchr(q, '\'');
            mine = !kernel_name ||
                   (e && (size_t)(e - q) == strlen(kernel_name) && strncmp(q, kernel_name, (size_t)(e - q)) == 0);
        } else if (mine) {
            int v;
            if ((v = field_before(line, end, " registers")) >= 0)
                r->regs = v;
            if ((v = field_before(line, end, " bytes smem")) >= 0)
                r->smem_bytes = v;
            if ((v = field_before(line, end, " bytes stack frame")) >= 0)
                r->stack_bytes = v;
            if ((v = field_before(line, end, " bytes spill stores")) >= 0)
                r->spill_stores = v;
            if ((v = field_before(line, end, " bytes spill loads")) >= 0)
                r->spill_loads = v;
        }
        line = *end ? end + 1 : NULL;
    }
}

/* One ptxas run of `ptx` in `dir`, in two halves so that runs can overlap: ptxas_start
 * writes DIR/kTAG.ptx and starts ptxas on it (its -v log in DIR/logTAG.txt), ptxas_finish
 * waits for it and takes the cubin (malloc'd) and the report, or reports errors (diag NULL:
 * none).  Every ptxas process of this library counts in `ptxas_running`. */
typedef struct PtxasRun {
    char in[1100], out[1100], log[1100];
    pid_t pid;
    bool started;
} PtxasRun;

static _Atomic int ptxas_running;

static int ptxas_start(PtxasRun *r, const char *ptxas, const char *dir, int tag, const char *ptx, size_t ptx_len,
                       const TbOptions *opt, TirDiagFn diag, void *ud) {
    snprintf(r->in, sizeof r->in, "%s/k%d.ptx", dir, tag);
    snprintf(r->out, sizeof r->out, "%s/k%d.cubin", dir, tag);
    snprintf(r->log, sizeof r->log, "%s/log%d.txt", dir, tag);
    r->started = false;
    FILE *f = fopen(r->in, "wb");
    if (!f || fwrite(ptx, 1, ptx_len, f) != ptx_len) {
        tb_diag(diag, ud, "error: cannot write %s", r->in);
        if (f)
            fclose(f);
        unlink(r->in);
        return 1;
    }
    fclose(f);
    char archopt[64];
    snprintf(archopt, sizeof archopt, "-arch=%s", opt && opt->arch ? opt->arch : TIR_TARGET_DEFAULT);
    enum { MAX_EXTRA = 8 };
    char *argv[8 + MAX_EXTRA] = {(char *)ptxas, archopt, "-v"}, extra[256] = "";
    int na = 3;
    bool own_level = false;
    if (opt && opt->ptxas_options) {
        snprintf(extra, sizeof extra, "%s", opt->ptxas_options);
        char *save = NULL; /* strtok_r: compiles run ptxas from several threads */
        for (char *w = strtok_r(extra, " ", &save); w && na < 3 + MAX_EXTRA; w = strtok_r(NULL, " ", &save)) {
            own_level |= !strncmp(w, "-O", 2) && w[2] >= '0' && w[2] <= '9';
            argv[na++] = w;
        }
    }
    if (!own_level)
        argv[na++] = (opt && opt->opt_level == 0) ? "-O0" : "-O3";
    argv[na++] = "-o";
    argv[na++] = r->out;
    argv[na++] = r->in;
    argv[na] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, r->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    int rc = posix_spawn(&r->pid, ptxas, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        tb_diag(diag, ud, "error: cannot run %s: %s", ptxas, strerror(rc));
        unlink(r->in);
        unlink(r->log);
        return 1;
    }
    r->started = true;
    atomic_fetch_add(&ptxas_running, 1);
    return 0;
}

static int ptxas_finish(PtxasRun *r, const char *kernel_name, char **cubin, size_t *cubin_len, TbReport *report,
                        TirDiagFn diag, void *ud) {
    int errors = 0;
    if (!r->started)
        return 1;
    int status = 0;
    while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR) {}
    atomic_fetch_sub(&ptxas_running, 1);
    r->started = false;
    size_t loglen = 0;
    char *log = read_file(r->log, &loglen);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        tb_diag(diag, ud, "%s: error: ptxas rejected the PTX:\n%s", kernel_name ? kernel_name : "?",
                log ? log : "(no output)");
        errors = 1;
    } else {
        if (log)
            tb_parse_ptxas_info(log, kernel_name, report);
        *cubin = read_file(r->out, cubin_len);
        if (!*cubin) {
            tb_diag(diag, ud, "error: ptxas wrote no cubin");
            errors = 1;
        }
    }
    free(log);
    unlink(r->in);
    unlink(r->out);
    unlink(r->log);
    return errors;
}

/* A TirDiagFn keeping the last message in ud (char[512]). */
static void keep_message(void *ud, const char *msg) {
    snprintf(ud, 512, "%s", msg);
}

static int ptxas_once(const char *ptxas, const char *dir, const char *ptx, size_t ptx_len, const TbOptions *opt,
                      const char *kernel_name, char **cubin, size_t *cubin_len, TbReport *report, TirDiagFn diag,
                      void *ud) {
    PtxasRun r;
    if (ptxas_start(&r, ptxas, dir, 0, ptx, ptx_len, opt, diag, ud))
        return 1;
    return ptxas_finish(&r, kernel_name, cubin, cubin_len, report, diag, ud);
}

/* Programs of `threads` threads using `regs` registers each that fit on one SM (65536
 * registers, allocated per warp in units of 256, i.e. 8 per thread; at most 2048
 * threads and 32 programs). */
static int programs_per_sm(int regs, int threads) {
    int per_thread = (regs + 7) / 8 * 8;
    int by_regs = per_thread > 0 ? 65536 / (per_thread * threads) : 32;
    int by_threads = 2048 / threads;
    int n = by_regs < by_threads ? by_regs : by_threads;
    return n < 32 ? n : 32;
}

/* The PTX with its `.minnctapersm 1` (the backend's "every register the block size
 * allows") replaced by `.maxnreg cap`; NULL when the directive is not there. */
static char *with_register_cap(const char *ptx, size_t len, int cap, size_t *out_len) {
    static const char dir[] = ".minnctapersm 1";
    const char *p = memmem(ptx, len, dir, sizeof dir - 1);
    if (!p)
        return NULL;
    char repl[32];
    int rl = snprintf(repl, sizeof repl, ".maxnreg %d", cap);
    size_t head = (size_t)(p - ptx), tail = len - head - (sizeof dir - 1);
    char *s = malloc(head + (size_t)rl + tail + 1);
    if (!s)
        return NULL;
    memcpy(s, ptx, head);
    memcpy(s + head, repl, (size_t)rl);
    memcpy(s + head + rl, p + sizeof dir - 1, tail);
    s[head + rl + tail] = 0;
    *out_len = head + (size_t)rl + tail;
    return s;
}

/* The register budget, for a caller that times what it gets (alt non-NULL: the runtime's
 * JIT, bundles).  ptxas first compiles with every register the block size
 * allows; when that spills nothing and a tighter budget would fit more programs on an
 * SM, ptxas compiles again at the budget of the next one or two occupancy steps, and
 * the tighter cubin is kept when it still spills nothing.  Memory-bound kernels hide
 * latency with resident programs (H200, layernorm 8192x8192, BLOCK=8192, 8 warps:
 * 3613 GB/s at 78 registers, 3804 GB/s at 64), but not always: layernorm 16384x4096,
 * BLOCK=4096, 4 warps ran 3779-3789 GB/s uncapped at 75 registers against 3728-3750 at
 * 64.  So the uncapped cubin goes back in *alt too, and the runtime's tuner times both.
 *
 * A capped compile costs as much as the uncapped one (on matmul 128x256x64 with 8 warps,
 * ~0.6 s of a 0.85 s compile), so caps that cannot work are not tried.  Above the kernel's
 * floor (opt->live_floor: its largest dot accumulator, live through the K loop, plus one
 * mma's operands) ptxas can shrink what is left, but over every variant of the examples
 * (sm_90a, plain, --div16 and div16+unit, 2026-12-01: 440 capped compiles, 232 spilled)
 * none of the 33 asked to keep 0.306 of it or less avoided spilling, while 0.308 did on
 * matmul 128x128x32 with 8 warps (254 -> 128 registers, floor 72).  The cut is a quarter,
 * away from that edge: it drops 14 capped compiles of dot variants, all of which spilled
 * (128x256 and 256x128 with 8 warps: cap 128 at floor 136; the 8-warp tiles of 64
 * accumulators a thread at cap 80 after 128), and no other.  Without a floor (no dot) it
 * asks for cap < regs / 4, which an occupancy step never does (the lowest ratio there was
 * 0.60): those kernels' budget is unchanged.
 *
 * The second step's cap is taken from the first's (the registers it leaves at most), so
 * both caps are known once the uncapped run is done, and the two capped runs go at once
 * when the machine has a CPU free for each (matmul 64x64x32 on 4 warps, 2 cores: ptxas
 * 235-285 ms in all for its three runs one after the other, 130-215 with the two capped
 * ones side by side).  The second is kept only when the first is, as one after the other.
 *
 * Without alt (one cubin: tilec --emit=cubin, tile_emit_variant) nothing can choose
 * between the candidates by timing them, and neither wins everywhere, so ptxas runs once
 * with its own allocation: a matmul variant's cubin is then one ptxas run (64x64x32 on 4
 * warps, 2 cores: 50-78 ms of ptxas instead of 106-160 for three).  The capped cubins are tuning
 * candidates, like the tune lists' values, compiled where a tuner times them. */
int tb_ptxas(const char *ptx, size_t ptx_len, const TbOptions *opt, const char *kernel_name, char **cubin,
             size_t *cubin_len, TbReport *report, TbAltCubin *alt, TirDiagFn diag, void *ud) {
    *cubin = NULL;
    *cubin_len = 0;
    if (alt)
        *alt = (TbAltCubin){.cubin = NULL, .len = 0, .regs = -1};
    char pbuf[4096];
    const char *ptxas = find_ptxas(opt ? opt->ptxas : NULL, pbuf, sizeof pbuf);
    if (!ptxas) {
        tb_diag(diag, ud,
                "error: ptxas not found: install the CUDA toolkit, put ptxas on PATH or set "
                "TILEC_PTXAS (or use --emit=ptx)");
        return 1;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tilec-ptxas-XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        tb_diag(diag, ud, "error: cannot create a temporary folder for ptxas: %s", strerror(errno));
        return 1;
    }
    TbReport rep = {.regs = -1};
    if (report)
        rep = *report;
    int errors = ptxas_once(ptxas, dir, ptx, ptx_len, opt, kernel_name, cubin, cubin_len, &rep, diag, ud);
    int threads = opt ? opt->threads : 0;
    bool tune = alt && !errors && threads > 0 && rep.regs > 0 && rep.spill_stores == 0 && rep.spill_loads == 0 &&
                !(opt && opt->opt_level == 0);
    /* the caps of the next one or two occupancy steps, the second one's from the first
     * (what it leaves at most), so that both are known before either runs */
    int caps[2], ncap = 0;
    for (int est = rep.regs; tune && ncap < 2;) {
        int want = programs_per_sm(est, threads) + 1;
        if (want > 32 || want > 2048 / threads)
            break;
        int cap = 65536 / (want * threads) / 8 * 8;
        if (cap > 255)
            cap = 255;
        if (cap < 32 || cap >= est)
            break;
        /* Not tried: a cap that leaves the registers above the floor less than a quarter
         * of what they took at est (see above; below the floor itself it must spill). */
        int floor = opt ? opt->live_floor : 0;
        if (4 * (cap - floor) < est - floor)
            break;
        caps[ncap++] = est = cap;
    }
    char *cptx[2] = {NULL, NULL};
    size_t cptx_len[2] = {0, 0};
    for (int i = 0; i < ncap; i++)
        if (!(cptx[i] = with_register_cap(ptx, ptx_len, caps[i], &cptx_len[i])))
            ncap = i;
    char *cc[2] = {NULL, NULL};
    size_t cc_len[2] = {0, 0};
    TbReport cr[2] = {rep, rep};
    int ce[2] = {1, 1};
    bool ran[2] = {false, false};
    /* Both at once when the machine has a CPU free for each (a compile alone, as tilec -D
     * or one JIT variant does); in a batch that already fills the CPUs, one after the
     * other, the second only when the first is kept.  Either way the same cubins. */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncap == 2 && atomic_load(&ptxas_running) + 2 <= ncpu) {
        PtxasRun pr[2];
        int se[2];
        for (int i = 0; i < 2; i++)
            se[i] = ptxas_start(&pr[i], ptxas, dir, 1 + i, cptx[i], cptx_len[i], opt, NULL, NULL);
        for (int i = 0; i < 2; i++) {
            ce[i] = se[i] ? 1 : ptxas_finish(&pr[i], kernel_name, &cc[i], &cc_len[i], &cr[i], NULL, NULL);
            ran[i] = true;
        }
    }
    TbAltCubin natural = {.cubin = NULL, .len = 0, .regs = rep.regs};
    for (int i = 0; i < ncap; i++) {
        /* ptxas accepted this PTX uncapped, so a capped run that fails did not run (a
         * process the machine could not start or that was killed, under load): tried again,
         * so that the cubins chosen do not depend on the machine's load */
        char why[512] = "";
        for (int attempt = ran[i] ? 1 : 0; attempt < 4 && ce[i]; attempt++) {
            if (attempt > 0)
                usleep(25000u << attempt); /* 50, 100, 200 ms: let the load pass */
            free(cc[i]);
            cc[i] = NULL;
            cr[i] = rep;
            ce[i] = ptxas_once(ptxas, dir, cptx[i], cptx_len[i], opt, kernel_name, &cc[i], &cc_len[i], &cr[i],
                               keep_message, why);
        }
        if (ce[i])
            tb_diag(diag, ud,
                    "warning: %s: ptxas failed four times on the register-capped compile "
                    "(cap %d; last: %.300s); the uncapped cubin is kept",
                    kernel_name ? kernel_name : "?", caps[i], why);
        if (ce[i] || cr[i].spill_stores != 0 || cr[i].spill_loads != 0 || cr[i].stack_bytes > rep.stack_bytes)
            break;
        if (!natural.cubin) {
            natural.cubin = *cubin;
            natural.len = *cubin_len;
        } else {
            free(*cubin);
        }
        *cubin = cc[i];
        *cubin_len = cc_len[i];
        cc[i] = NULL;
        rep = cr[i];
    }
    for (int i = 0; i < 2; i++) {
        free(cc[i]);
        free(cptx[i]);
    }
    if (report)
        *report = rep;
    if (alt && natural.cubin)
        *alt = natural;
    else
        free(natural.cubin);
    rmdir(dir);
    return errors;
}
