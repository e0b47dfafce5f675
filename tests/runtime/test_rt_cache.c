/* The JIT's disk cache: a variant compiles once; loading the source again in a fresh
 * device reads the cubin back (a counted cache hit, no compile); a corrupted or truncated
 * entry is rejected and recompiled; other facts or another arch are other entries.
 * Runs without a GPU (the interpreter device; the compile targets sm_90a). */
#include "rt_internal.h"
#include "rt_test.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static tile_rt_stats compile_once(uint64_t div16, size_t *len_out)
{
    tile_rt_options o = {.cache_dir = dir, .tune = -1, .tune_log = -1};
    tile_rt *rt;
    tile_rt_stats st = {0};
    CHECK(tile_rt_open(TILE_RT_INTERP, &o, &rt) == TILE_RT_OK);
    tile_rt_module *m;
    CHECK(tile_rt_load_source_file(rt, TILEC_EXAMPLES_DIR "/vector_add.tile", &m) == TILE_RT_OK);
    tile_rt_kernel *k = &m->kernels[0];
    CHECK(rt_source_meta(k) == TILE_RT_OK);
    char *cubin = NULL;
    size_t len = 0;
    tile_rt_status s = rt_jit_compile(m, 0, 1, div16, 0, &cubin, &len);
    if (s != TILE_RT_OK)
        fprintf(stderr, "%s\n", tile_rt_last_error(rt));
    CHECK(s == TILE_RT_OK && len > 16);
    /* a cubin is an ELF file */
    CHECK(cubin && !memcmp(cubin, "\x7f" "ELF", 4));
    *len_out = len;
    free(cubin);
    tile_rt_get_stats(rt, &st);
    tile_rt_module_free(m);
    tile_rt_close(rt);
    return st;
}

/* The one entry file in dir/jit (there is exactly one after the first compile). */
static bool entry_path(char *path, size_t n)
{
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

static int count_entries(void)
{
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

int main(void)
{
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
    /* other specialization facts (n divisible by 16): another entry */
    st = compile_once(1ull << 3, &len);
    CHECK(st.jit_compiles == 1 && count_entries() == 2);

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_DONE();
}
