/* ptxas runs as a child process of the compiler, here a stand-in ($TILEC_PTXAS, a script
 * written by this test; no CUDA needed).
 * - A signal that arrives while the compiler waits for it (an application's interval timer,
 *   a profiler's SIGPROF) interrupts waitpid with EINTR: the wait must resume, neither give
 *   up (reading a cubin not written yet) nor spin on a child already reaped.  The stand-in
 *   takes 300 ms and writes known bytes; a 1 ms interval timer whose handler is installed
 *   without SA_RESTART interrupts the wait many times.  The compile runs in a child process
 *   so that a wait that never ends fails the test after 60 s instead of hanging it.
 * - A rejected kernel's log reaches the caller whole: the stand-in fails with a 6 KB log
 *   whose last line the error message must end with. */
#include "tile/tile.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char kernel_src[] = "kernel copy(x: *f32, out: *f32) {\n"
                                 "    let offs = arange(0, 128);\n"
                                 "    store(out + offs, load(x + offs));\n"
                                 "}\n";

static const char fake_cubin[] = "FAKE-CUBIN-FROM-THE-STAND-IN";

static volatile sig_atomic_t ticks;
static void on_alarm(int sig) {
    (void)sig;
    ticks++;
}

static char *diags; /* every message of the failing compile */
static void diag(void *ud, const char *msg) {
    (void)ud;
    fprintf(stderr, "%s\n", msg);
    size_t had = diags ? strlen(diags) : 0, n = strlen(msg);
    char *grown = realloc(diags, had + n + 2);
    if (!grown)
        return;
    memcpy(grown + had, msg, n);
    grown[had + n] = '\n';
    grown[had + n + 1] = 0;
    diags = grown;
}

static void write_script(const char *path, const char *body) {
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "#!/bin/sh\n%s", body);
    fclose(f);
    chmod(path, 0755);
}

/* The stand-in fails with a log of 100 lines of 60 characters and a last line: the
 * compile fails and the message carries the log to its end. */
static int long_log(void) {
    tile_ctx *c = tile_ctx_new();
    tile_ctx_set_diag(c, diag, NULL);
    tile_program *p = NULL;
    tile_status s = tile_program_load_source(c, "log.tile", kernel_src, sizeof kernel_src - 1, &p);
    char *out = NULL;
    size_t len = 0;
    if (s == TILE_OK)
        s = tile_emit(p, 0, TILE_EMIT_CUBIN, false, &out, &len);
    int rc = 0;
    if (s != TILE_ERR_COMPILE) {
        fprintf(stderr, "FAIL: a rejected kernel gave status %d, not TILE_ERR_COMPILE\n", (int)s);
        rc = 1;
    } else if (!diags || !strstr(diags, "ptxas fatal   : the last line of a long log")) {
        fprintf(stderr, "FAIL: the message lost the end of ptxas's %s log\n", diags ? "long" : "(no message)");
        rc = 1;
    }
    free(out);
    tile_program_free(p);
    tile_ctx_free(c);
    return rc;
}

/* The child: compile under the timer; exit 0 when the stand-in's bytes come back. */
static int compile_under_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: blocking calls fail with EINTR */
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGALRM, &sa, NULL) != 0)
        return 2;
    struct itimerval it = {{0, 1000}, {0, 1000}};
    if (setitimer(ITIMER_REAL, &it, NULL) != 0)
        return 2;

    tile_ctx *c = tile_ctx_new();
    tile_ctx_set_diag(c, diag, NULL);
    tile_program *p = NULL;
    tile_status s = tile_program_load_source(c, "signals.tile", kernel_src, sizeof kernel_src - 1, &p);
    char *out = NULL;
    size_t len = 0;
    if (s == TILE_OK)
        s = tile_emit(p, 0, TILE_EMIT_CUBIN, false, &out, &len);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    int rc = 0;
    if (s != TILE_OK) {
        fprintf(stderr, "FAIL: the compile failed under signals (status %d)\n", (int)s);
        rc = 1;
    } else if (len != sizeof fake_cubin - 1 || memcmp(out, fake_cubin, len) != 0) {
        fprintf(stderr, "FAIL: the cubin is not what ptxas wrote (%zu bytes)\n", len);
        rc = 1;
    } else if (ticks < 10) {
        fprintf(stderr, "FAIL: only %d timer signals during the compile: the test tested nothing\n", (int)ticks);
        rc = 1;
    }
    free(out);
    tile_program_free(p);
    tile_ctx_free(c);
    return rc;
}

int main(void) {
    if (!tile_emit_supported(TILE_EMIT_CUBIN)) {
        printf("skip: this build has no GPU backend\n");
        return 0;
    }
    char dir[] = "/tmp/tilec-ptxas-child-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char script[sizeof dir + 16], body[512];
    snprintf(script, sizeof script, "%s/ptxas", dir);
    /* what the compiler parses from ptxas -v goes to stdout (the log) */
    snprintf(body, sizeof body,
             "out=\n"
             "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
             "sleep 0.3\n"
             "printf '%%s' '%s' > \"$out\"\n"
             "echo \"ptxas info    : Compiling entry function 'copy' for 'sm_90a'\"\n"
             "echo \"ptxas info    : Used 8 registers\"\n",
             fake_cubin);
    write_script(script, body);
    setenv("TILEC_PTXAS", script, 1);

    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0)
        _exit(compile_under_signals());
    int status = 0, waited_ms = 0;
    pid_t r;
    while ((r = waitpid(pid, &status, WNOHANG)) == 0 && waited_ms < 60000) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        waited_ms += 10;
    }
    int rc;
    if (r == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        fprintf(stderr, "FAIL: the compile did not finish in 60 s under signals (a wait for ptxas that never ends)\n");
        rc = 1;
    } else {
        rc = r == pid && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    if (rc == 0)
        printf("ok: a compile whose wait for ptxas was interrupted by signals got ptxas's cubin\n");

    write_script(script, "i=0\n"
                         "while [ $i -lt 100 ]; do echo \"ptxas error   : line $i of a long log, padded to sixty "
                         "chars\"; i=$((i+1)); done\n"
                         "echo \"ptxas fatal   : the last line of a long log\"\n"
                         "exit 1\n");
    int rc2 = long_log();
    if (rc2 == 0)
        printf("ok: a rejected kernel's 6 KB ptxas log reached the caller whole\n");
    unlink(script);
    rmdir(dir);
    free(diags);
    return rc || rc2;
}
