/* The JIT's disk cache: a variant compiles once; loading the source again in a fresh
 * device reads the cubin back (a counted cache hit, no compile); a corrupted or truncated
 * entry is rejected and recompiled; other facts, another arch or a forced lowering are
 * other entries.
 * A parallel batch (tile_rt_precompile) compiles every variant of softmax and of
 * vector_add on several threads into the same bytes as one thread does, then hits the
 * cache for all of them.  A compile whose registers the budget capped caches both of its
 * cubins (the capped one and the uncapped one the tuner also times).
 * Runs without a GPU (the interpreter device; the compile targets sm_90a). */
#include "rt_internal.h"
#include "cubin_regs.h"
#include "rt_test.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static tile_rt_stats compile_once(uint64_t div16, size_t *len_out) {
    tile_rt_options o = {.cache_dir = dir, .tune = -1, .tune_log = -1};
    tile_rt *rt;
    tile_rt_stats st = {0};
    CHECK(tile_rt_open(TILE_RT_INTERP, &o, &rt) == TILE_RT_OK);
    tile_rt_module *m;
    CHECK(tile_rt_load_source_file(rt, TILEC_EXAMPLES_DIR "/vector_add.tile", &m) == TILE_RT_OK);
    tile_rt_kernel *k = &m->kernels[0];
    CHECK(rt_source_meta(k) == TILE_RT_OK);
    char *cubin[RT_MAX_CUBINS];
    size_t len[RT_MAX_CUBINS];
    int n = 0;
    tile_rt_status s = rt_jit_compile(m, 0, 0, (RtFacts){div16, 0, 0}, cubin, len, &n);
    if (s != TILE_RT_OK)
        fprintf(stderr, "%s\n", tile_rt_last_error(rt));
    /* vector_add BLOCK=1024: 26 registers already let 16 programs share an SM: one cubin */
    CHECK(s == TILE_RT_OK && n == 1 && len[0] > 16);
    /* a cubin is an ELF file */
    CHECK(cubin[0] && !memcmp(cubin[0],
                              "\x7f"
                              "ELF",
                              4));
    *len_out = len[0];
    for (int i = 0; i < n; i++)
        free(cubin[i]);
    tile_rt_get_stats(rt, &st);
    tile_rt_module_free(m);
    tile_rt_close(rt);
    return st;
}

/* The one entry file in dir/jit (there is exactly one after the first compile). */
static bool entry_path(char *path, size_t n) {
    char sub[300];
    snprintf(sub, sizeof sub, "%s/jit", dir);
    DIR *d = opendir(sub);
    if (!d)
        return false;
    struct dirent *e;
    bool found = false;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".bin") && !strstr(e->d_name, ".tmp")) {
            snprintf(path, n, "%s/%s", sub, e->d_name);
            found = true;
        }
    closedir(d);
    return found;
}

static int count_entries(void) {
    char sub[300];
    snprintf(sub, sizeof sub, "%s/jit", dir);
    DIR *d = opendir(sub);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, ".bin") != NULL;
    if (d)
        closedir(d);
    return n;
}

/* Every variant of softmax and vector_add through tile_rt_precompile with `threads`
 * compile threads into cache directory d; the stats and the sorted entry names+sizes. */
static tile_rt_stats precompile_all(const char *d, const char *threads, int *nbuilt) {
    setenv("TILE_JIT_THREADS", threads, 1);
    tile_rt_options o = {.cache_dir = d, .tune = -1, .tune_log = -1};
    tile_rt *rt;
    tile_rt_stats st = {0};
    CHECK(tile_rt_open(TILE_RT_INTERP, &o, &rt) == TILE_RT_OK);
    tile_rt_module *m[2];
    CHECK(tile_rt_load_source_file(rt, TILEC_EXAMPLES_DIR "/softmax.tile", &m[0]) == TILE_RT_OK);
    CHECK(tile_rt_load_source_file(rt, TILEC_EXAMPLES_DIR "/vector_add.tile", &m[1]) == TILE_RT_OK);
    int nfailed = -1;
    tile_rt_status s = tile_rt_precompile(m, 2, TILE_RT_PRECOMPILE_ALL, nbuilt, &nfailed);
    if (s != TILE_RT_OK)
        fprintf(stderr, "precompile: %s\n", tile_rt_last_error(rt));
    CHECK(s == TILE_RT_OK && nfailed == 0);
    uint32_t want = m[0]->kernels[0].meta->nvariants + m[1]->kernels[0].meta->nvariants;
    CHECK(*nbuilt == (int)want && want > 4);
    /* variant 0 only: already there */
    int n0 = 0;
    CHECK(tile_rt_precompile(m, 2, 0, &n0, NULL) == TILE_RT_OK && n0 == 2);
    tile_rt_get_stats(rt, &st);
    tile_rt_module_free(m[0]);
    tile_rt_module_free(m[1]);
    tile_rt_close(rt);
    unsetenv("TILE_JIT_THREADS");
    return st;
}

/* Whether the two cache directories hold the same jit entries, byte for byte after the
 * 64-byte header (whose MAC is under each cache's own key). */
static bool same_entries(const char *a, const char *b, int *n) {
    char sub[400];
    snprintf(sub, sizeof sub, "%s/jit", a);
    DIR *d = opendir(sub);
    struct dirent *e;
    bool same = d != NULL;
    *n = 0;
    while (d && (e = readdir(d))) {
        if (!strstr(e->d_name, ".bin"))
            continue;
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "cmp -s -i 64 '%s/jit/%s' '%s/jit/%s'", a, e->d_name, b, e->d_name);
        same = same && system(cmd) == 0;
        (*n)++;
    }
    if (d)
        closedir(d);
    return same;
}

static void parallel_batch(void) {
    char d1[300], d4[300];
    snprintf(d1, sizeof d1, "%s/p1", dir);
    snprintf(d4, sizeof d4, "%s/p4", dir);
    int n1 = 0, n4 = 0, n;
    tile_rt_stats s1 = precompile_all(d1, "1", &n1);
    tile_rt_stats s4 = precompile_all(d4, "4", &n4);
    CHECK(n1 == n4 && s1.jit_compiles == (uint64_t)n1 && s4.jit_compiles == (uint64_t)n4);
    CHECK(s4.cache_hits == 2); /* the second, variant-0 pass */
    CHECK(same_entries(d4, d1, &n) && n == n4);
    /* again: all from the cache */
    tile_rt_stats s = precompile_all(d4, "4", &n);
    CHECK(s.jit_compiles == 0 && s.cache_hits == (uint64_t)n + 2);
}

/* layernorm BLOCK=4096 with 4 warps, every parameter aligned (as launched on 16-byte
 * aligned rows): ptxas needs 75 registers (LLVM 19 and 22 alike: both PTX carry the launch
 * bounds), the budget caps it at 64 for occupancy, so the compile gives two cubins (capped
 * first, with fewer registers: read from the cubins), and the cache gives both back byte
 * for byte. */
static void uncapped_alternate(void) {
    char *first[RT_MAX_CUBINS] = {0};
    size_t flen[RT_MAX_CUBINS] = {0};
    int fn = 0;
    for (int round = 0; round < 2; round++) {
        tile_rt_options o = {.cache_dir = dir, .tune = -1, .tune_log = -1};
        tile_rt *rt;
        CHECK(tile_rt_open(TILE_RT_INTERP, &o, &rt) == TILE_RT_OK);
        tile_rt_module *m;
        CHECK(tile_rt_load_source_file(rt, TILEC_EXAMPLES_DIR "/layernorm.tile", &m) == TILE_RT_OK);
        tile_rt_kernel *k = &m->kernels[0];
        CHECK(rt_source_meta(k) == TILE_RT_OK);
        uint32_t vi = k->meta->nvariants;
        for (uint32_t i = 0; i < k->meta->nvariants; i++)
            if (!strncmp(k->meta->variants[i].text, "BLOCK=4096, warps=4,", 20))
                vi = i;
        CHECK(vi < k->meta->nvariants);
        char *cubin[RT_MAX_CUBINS];
        size_t len[RT_MAX_CUBINS];
        int n = 0;
        tile_rt_status s = rt_jit_compile(m, 0, vi, (RtFacts){0x3f, 0, 0}, cubin, len, &n);
        if (s != TILE_RT_OK)
            fprintf(stderr, "%s\n", tile_rt_last_error(rt));
        CHECK(s == TILE_RT_OK && n == 2);
        for (int i = 0; i < n; i++)
            CHECK(!memcmp(cubin[i],
                          "\x7f"
                          "ELF",
                          4));
        CHECK(len[0] != len[1] || memcmp(cubin[0], cubin[1], len[0]));
        if (n == 2)
            CHECK(cubin_regs(cubin[0], len[0]) > 0 && cubin_regs(cubin[0], len[0]) < cubin_regs(cubin[1], len[1]));
        tile_rt_stats st;
        tile_rt_get_stats(rt, &st);
        if (round == 0) {
            CHECK(st.jit_compiles == 1 && st.cache_hits == 0);
            for (int i = 0; i < n; i++) {
                first[i] = cubin[i];
                flen[i] = len[i];
            }
            fn = n;
        } else {
            CHECK(st.jit_compiles == 0 && st.cache_hits == 1 && n == fn);
            for (int i = 0; i < n; i++) {
                CHECK(len[i] == flen[i] && !memcmp(cubin[i], first[i], len[i]));
                free(cubin[i]);
            }
        }
        tile_rt_module_free(m);
        tile_rt_close(rt);
    }
    for (int i = 0; i < fn; i++)
        free(first[i]);
}

int main(void) {
    snprintf(dir, sizeof dir, "%s/tilert-cache-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    size_t len;
    tile_rt_stats st = compile_once(0, &len);
    CHECK(st.jit_compiles == 1 && st.cache_hits == 0);
    CHECK(count_entries() == 1);
    st = compile_once(0, &len);
    CHECK(st.jit_compiles == 0 && st.cache_hits == 1);

    char path[600];
    CHECK(entry_path(path, sizeof path));
    /* flip a byte of the cubin: rejected, recompiled, rewritten */
    FILE *f = fopen(path, "r+b");
    fseek(f, 100, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 100, SEEK_SET);
    fputc(c ^ 0x55, f);
    fclose(f);
    st = compile_once(0, &len);
    CHECK(st.cache_corrupt == 1 && st.jit_compiles == 1 && st.cache_hits == 0);
    st = compile_once(0, &len);
    CHECK(st.cache_hits == 1 && st.jit_compiles == 0);
    /* truncate it */
    CHECK(truncate(path, 20) == 0);
    st = compile_once(0, &len);
    CHECK(st.cache_corrupt == 1 && st.jit_compiles == 1);
    /* garbage of the right length */
    f = fopen(path, "wb");
    for (size_t i = 0; i < len + 32; i++)
        fputc((int)(i * 7), f);
    fclose(f);
    st = compile_once(0, &len);
    CHECK(st.cache_corrupt == 1 && st.jit_compiles == 1);
    /* a FIFO in its place (opened for reading, it would block forever): not a cache
     * entry, replaced by a compile's file (the test's TIMEOUT guards the hang) */
    CHECK(unlink(path) == 0 && mkfifo(path, 0644) == 0);
    st = compile_once(0, &len);
    CHECK(st.cache_corrupt == 1 && st.jit_compiles == 1);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && S_ISREG(sb.st_mode));
    /* other specialization facts (n divisible by 16): another entry */
    st = compile_once(1ull << 3, &len);
    CHECK(st.jit_compiles == 1 && count_entries() == 2);

    /* $TILEC_LOWERING=N (0..3, a forced lowering) is another entry; a value the driver
     * ignores (docs/backend.md, "Lowerings") compiles the same cubin, and hits its entry */
    setenv("TILEC_LOWERING", "2", 1);
    st = compile_once(0, &len);
    CHECK(st.jit_compiles == 1 && st.cache_hits == 0 && count_entries() == 3);
    setenv("TILEC_LOWERING", "7", 1);
    st = compile_once(0, &len);
    CHECK(st.jit_compiles == 0 && st.cache_hits == 1 && count_entries() == 3);
    setenv("TILEC_LOWERING", "", 1);
    st = compile_once(0, &len);
    CHECK(st.jit_compiles == 0 && st.cache_hits == 1 && count_entries() == 3);
    unsetenv("TILEC_LOWERING");

    parallel_batch();
    uncapped_alternate();

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_DONE();
}
