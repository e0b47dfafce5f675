/* The disk cache's trust model (docs/runtime.md, "Disk cache"), through the stub driver:
 * - a forged entry, kernel B's code put under kernel A's key with the key field and every
 *   unkeyed checksum rewritten, or with a MAC made under another cache's key, is rejected
 *   (cache_corrupt), A compiles again and the module the driver loads is A's code;
 * - an entry file that others can write is not read;
 * - a cache directory that its group or others can write, that lies in a folder others can
 *   write (not sticky), or that belongs to another user makes tile_rt_open fail with the
 *   reason; a sticky folder above is fine;
 * - TILE_CACHE_READONLY=1 reads a cache another user shares (as root: the tree chowned to
 *   another uid) and writes and removes nothing in it;
 * - SipHash-2-4 against the vectors of its paper.
 * Needs the JIT (the backend and ptxas): the cubins are real, only their runs are not. */
#include "rt_internal.h"
#include "rt_test.h"
#include "stubcuda.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SRC(factor)                                                       \
    "kernel fill(out: *f32, n: i32)\n"                                    \
    "    grid(cdiv(n, 128))\n"                                            \
    "{\n"                                                                 \
    "    let offs = program_id(0) * 128 + arange(0, 128);\n"              \
    "    store(out + offs, (offs as f32) * " factor ", mask=offs < n);\n" \
    "}\n"

static const char *const srcs[3] = {SRC("2.0"), SRC("3.0"), SRC("5.0")};
static char cache[128];

typedef struct Run {
    tile_rt_status open, launch;
    tile_rt_stats st;
    unsigned char *image; /* the module the driver loaded last (malloc'd), or NULL */
    size_t len;
} Run;

/* Opens the stub device on `dir`, launches fill of source s, reads the stats and the
 * module image back, closes. */
static Run run_source(const char *dir, int s) {
    Run r = {0};
    tile_rt_options o = {.cache_dir = dir, .tune = 0, .tune_log = -1};
    tile_rt *rt = NULL;
    if ((r.open = tile_rt_open(TILE_RT_CUDA, &o, &rt)) != TILE_RT_OK)
        return r;
    tile_rt_module *m = NULL;
    tile_rt_kernel *k = NULL;
    CHECK(tile_rt_load_source(rt, "fill.tile", srcs[s], strlen(srcs[s]), &m) == TILE_RT_OK);
    CHECK(tile_rt_get_kernel(m, "fill", &k) == TILE_RT_OK);
    void *out = NULL;
    CHECK(tile_rt_alloc(rt, 4096, &out) == TILE_RT_OK);
    tile_rt_arg a[2] = {{.kind = TILE_RT_ARG_PTR, .buf = {out, 4096}}, {.kind = TILE_RT_ARG_I64, .i64 = 1024}};
    stub_reset();
    stub_set_nparams(2);
    r.launch = tile_rt_launch(k, a, 2, NULL, NULL);
    if (r.launch != TILE_RT_OK)
        fprintf(stderr, "launch: %s\n", tile_rt_last_error(rt));
    tile_rt_get_stats(rt, &r.st);
    int nm = stub_nmodules();
    if (nm > 0) {
        const StubModule *sm = stub_module(nm - 1);
        r.image = malloc(sm->len);
        memcpy(r.image, sm->image, sm->len);
        r.len = sm->len;
    }
    tile_rt_free(rt, out);
    tile_rt_module_free(m);
    tile_rt_close(rt);
    return r;
}

static bool same_image(const Run *r, const Run *want) {
    return r->image && want->image && r->len == want->len && !memcmp(r->image, want->image, r->len);
}

/* The entry names in dir/jit (sorted is not needed: the caller looks for a new one). */
static int list_entries(const char *dir, char names[][300], int max) {
    char sub[700];
    snprintf(sub, sizeof sub, "%s/jit", dir);
    DIR *d = opendir(sub);
    int n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max)
        if (strstr(e->d_name, ".bin") && !strstr(e->d_name, ".tmp"))
            snprintf(names[n++], 300, "%s", e->d_name);
    closedir(d);
    return n;
}

/* The entry of dir/jit that is not in `old` (exactly one), its name in `name`. */
static bool new_entry(const char *dir, char old[][300], int nold, char name[300]) {
    char now[16][300];
    int n = list_entries(dir, now, 16), found = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < nold; j++)
            seen |= !strcmp(now[i], old[j]);
        if (!seen) {
            snprintf(name, 300, "%.200s", now[i]);
            found++;
        }
    }
    return found == 1;
}

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(n > 0 ? (size_t)n : 1);
    *len = b && fread(b, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return b;
}

/* Replaces path's content as a forger would: a new file renamed over it, mode 0644. */
static void write_entry(const char *path, const char *data, size_t len) {
    char tmp[2200];
    snprintf(tmp, sizeof tmp, "%s.forge", path);
    FILE *f = fopen(tmp, "wb");
    CHECK(f && fwrite(data, 1, len, f) == len);
    if (f)
        fclose(f);
    chmod(tmp, 0644);
    CHECK(rename(tmp, path) == 0);
}

static uint64_t get64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}
static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* B's entry made to pass as A's: the key field set to A's key and the checksum
 * recomputed in whichever entry format the runtime writes (version 2: FNV-1a of the payload
 * and the key's first 4 digits; version 3 on: the full key, and the MAC either kept (the
 * forger cannot compute it) or, with foreign_key, computed under another cache's key). */
static char *forge(const char *entry_b, size_t len, const char *hex_a, const uint8_t *foreign_key) {
    char *f = malloc(len);
    memcpy(f, entry_b, len);
    unsigned char *h = (unsigned char *)f;
    uint32_t version = h[8] | h[9] << 8 | h[10] << 16 | (uint32_t)h[11] << 24;
    if (version == 2) {
        put64(h + 20, rt_fnv1a(RT_FNV_BASIS, f + 32, get64(h + 12)));
        memcpy(h + 28, hex_a, 4);
    } else {
        memcpy(h + 32, hex_a, 32);
        if (foreign_key) {
            tile_rt other;
            memcpy(other.cache_key, foreign_key, 16);
            put64(h + 24, rt_cache_mac(&other, "jit", hex_a, f + 64, get64(h + 16)));
        }
    }
    return f;
}

static void forged_entries(void) {
    Run a = run_source(cache, 0);
    CHECK(a.open == TILE_RT_OK && a.launch == TILE_RT_OK && a.st.jit_compiles == 1 && a.st.cache_hits == 0);
    char names[16][300], name_a[300], name_b[300], path_a[2048], path_b[2048];
    int n0 = list_entries(cache, names, 16);
    CHECK(n0 == 1);
    snprintf(name_a, sizeof name_a, "%s", names[0]);
    Run b = run_source(cache, 1);
    CHECK(b.launch == TILE_RT_OK && b.st.jit_compiles == 1);
    CHECK(new_entry(cache, names, n0, name_b));
    CHECK(!same_image(&a, &b)); /* two kernels, two codes */
    snprintf(path_a, sizeof path_a, "%s/jit/%s", cache, name_a);
    snprintf(path_b, sizeof path_b, "%s/jit/%s", cache, name_b);
    /* the cache works: A again is a hit, A's code */
    Run again = run_source(cache, 0);
    CHECK(again.st.cache_hits == 1 && again.st.jit_compiles == 0 && same_image(&again, &a));

    size_t len_b = 0;
    char *entry_b = read_all(path_b, &len_b);
    CHECK(entry_b && len_b > 64);
    char hex_a[33];
    snprintf(hex_a, sizeof hex_a, "%.32s", name_a);
    /* a second cache: its key is another's secret */
    char other_dir[200], key_path[260];
    snprintf(other_dir, sizeof other_dir, "%s/other", cache);
    tile_rt_options o = {.cache_dir = other_dir, .tune = 0, .tune_log = -1};
    tile_rt *rt = NULL;
    CHECK(tile_rt_open(TILE_RT_CUDA, &o, &rt) == TILE_RT_OK);
    tile_rt_close(rt);
    snprintf(key_path, sizeof key_path, "%s/key", other_dir);
    size_t klen = 0;
    char *foreign = read_all(key_path, &klen);
    CHECK(foreign && klen == 16);

    for (int attempt = 0; attempt < 2 && entry_b && foreign; attempt++) {
        char *f = forge(entry_b, len_b, hex_a, attempt ? (const uint8_t *)foreign : NULL);
        write_entry(path_a, f, len_b);
        free(f);
        Run r = run_source(cache, 0);
        /* before the MAC: hits=1 and B's code launched under A's name */
        if (r.st.cache_hits != 0 || !same_image(&r, &a))
            fprintf(stderr, "forged entry (attempt %d) was loaded: hits=%llu, %s code\n", attempt,
                    (unsigned long long)r.st.cache_hits, same_image(&r, &b) ? "kernel B's" : "some other");
        CHECK(r.launch == TILE_RT_OK && r.st.cache_hits == 0 && r.st.cache_corrupt == 1 && r.st.jit_compiles == 1);
        CHECK(same_image(&r, &a));
        free(r.image);
    }
    free(entry_b);
    free(foreign);

    /* an entry file others can write is not read (and is replaced by a good one) */
    CHECK(chmod(path_a, 0666) == 0);
    Run w = run_source(cache, 0);
    CHECK(w.st.cache_hits == 0 && w.st.cache_corrupt == 1 && w.st.jit_compiles == 1 && same_image(&w, &a));
    Run w2 = run_source(cache, 0);
    CHECK(w2.st.cache_hits == 1 && w2.st.jit_compiles == 0);
    free(w.image), free(w2.image), free(a.image), free(b.image), free(again.image);
}

static void check_open_fails(const char *dir, const char *needle) {
    tile_rt_options o = {.cache_dir = dir, .tune = 0, .tune_log = -1};
    tile_rt *rt = NULL;
    CHECK_ERR(tile_rt_open(TILE_RT_CUDA, &o, &rt), TILE_RT_ERR_INVALID, tile_rt_open_error(), needle);
    CHECK(rt == NULL);
    CHECK_ERR(tile_rt_open(TILE_RT_INTERP, &o, &rt), TILE_RT_ERR_INVALID, tile_rt_open_error(), needle);
    CHECK(rt == NULL);
}

static bool opens(const char *dir) {
    tile_rt_options o = {.cache_dir = dir, .tune = 0, .tune_log = -1};
    tile_rt *rt = NULL;
    tile_rt_status s = tile_rt_open(TILE_RT_INTERP, &o, &rt);
    if (s != TILE_RT_OK)
        fprintf(stderr, "open '%s': %s\n", dir, tile_rt_open_error());
    tile_rt_close(rt);
    return s == TILE_RT_OK;
}

static void untrusted_directories(void) {
    char d[600], want[2048];
    snprintf(d, sizeof d, "%s/perm", cache);
    CHECK(mkdir(d, 0700) == 0 && opens(d));
    CHECK(chmod(d, 0770) == 0);
    snprintf(want, sizeof want, "cache directory '%s' is writable by its group (mode 0770)", d);
    check_open_fails(d, want);
    CHECK(chmod(d, 0702) == 0);
    snprintf(want, sizeof want, "cache directory '%s' is writable by other users (mode 0702)", d);
    check_open_fails(d, want);
    CHECK(chmod(d, 0700) == 0 && opens(d));
    /* jit/ is checked as the cache itself */
    char jit[700];
    snprintf(jit, sizeof jit, "%s/jit", d);
    CHECK(mkdir(jit, 0700) == 0 && chmod(jit, 0777) == 0);
    snprintf(want, sizeof want, "cache directory '%s' is writable by its group", jit);
    check_open_fails(d, want);
    CHECK(chmod(jit, 0755) == 0 && opens(d));

    /* a folder above that others can write: they could rename the cache away */
    char up[600], in[700];
    snprintf(up, sizeof up, "%s/open", cache);
    snprintf(in, sizeof in, "%s/cache", up);
    CHECK(mkdir(up, 0700) == 0 && mkdir(in, 0700) == 0 && chmod(up, 0777) == 0);
    snprintf(want, sizeof want, "cache directory '%s' lies in '%s', which is writable by its group and not sticky", in,
             up);
    check_open_fails(in, want);
    CHECK(chmod(up, 01777) == 0 && opens(in)); /* sticky, as /tmp */

    /* a key that is not 16 bytes */
    char key[700];
    snprintf(key, sizeof key, "%s/key", d);
    FILE *f = fopen(key, "w");
    CHECK(f && fputs("short", f) >= 0);
    if (f)
        fclose(f);
    check_open_fails(d, "is not a 16-byte file");

    /* read-only on a cache that does not exist */
    setenv("TILE_CACHE_READONLY", "1", 1);
    snprintf(want, sizeof want, "%s/none", cache);
    check_open_fails(want, "TILE_CACHE_READONLY=1 reads an existing cache");
    unsetenv("TILE_CACHE_READONLY");
}

static void chown_tree(const char *dir, uid_t uid) {
    char p[2048], names[16][300];
    CHECK(chown(dir, uid, (gid_t)-1) == 0);
    snprintf(p, sizeof p, "%s/key", dir);
    CHECK(chown(p, uid, (gid_t)-1) == 0);
    snprintf(p, sizeof p, "%s/jit", dir);
    CHECK(chown(p, uid, (gid_t)-1) == 0);
    int n = list_entries(dir, names, 16);
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%.600s/jit/%.200s", dir, names[i]);
        CHECK(chown(p, uid, (gid_t)-1) == 0);
    }
}

/* Another user's cache, shared: refused as a cache of one's own; read with
 * TILE_CACHE_READONLY=1, nothing written or removed. */
static void shared_readonly(void) {
    char d[600], want[2048], names[16][300];
    snprintf(d, sizeof d, "%s/shared", cache);
    Run a = run_source(d, 0);
    CHECK(a.launch == TILE_RT_OK && a.st.jit_compiles == 1);
    if (geteuid() != 0) {
        printf("shared_readonly: not root, the cache cannot be given to another user (owner checks skipped)\n");
        free(a.image);
        return;
    }
    uid_t other = 4242;
    chown_tree(d, other);
    snprintf(want, sizeof want, "cache directory '%s' belongs to uid 4242, not to this user (uid 0)", d);
    check_open_fails(d, want);
    setenv("TILE_CACHE_READONLY", "1", 1);
    Run r = run_source(d, 0);
    CHECK(r.open == TILE_RT_OK && r.st.cache_hits == 1 && r.st.jit_compiles == 0 && same_image(&r, &a));
    int before = list_entries(d, names, 16);
    Run c = run_source(d, 2); /* not in the shared cache: compiled, not written */
    CHECK(c.launch == TILE_RT_OK && c.st.jit_compiles == 1 && list_entries(d, names, 16) == before);
    /* a corrupt entry is rejected but left where it is */
    char path[2048];
    snprintf(path, sizeof path, "%s/jit/%s", d, names[0]);
    size_t len = 0;
    char *e = read_all(path, &len);
    CHECK(e && len > 64);
    if (e) {
        e[len - 1] ^= 1;
        write_entry(path, e, len);
        CHECK(chown(path, other, (gid_t)-1) == 0);
    }
    Run bad = run_source(d, 0);
    CHECK(bad.st.cache_hits == 0 && bad.st.cache_corrupt == 1 && bad.st.jit_compiles == 1);
    CHECK(access(path, F_OK) == 0);
    /* an entry of a third user in the shared cache is not the owner's: not read */
    if (e) {
        e[len - 1] ^= 1;
        write_entry(path, e, len);
        CHECK(chown(path, 4343, (gid_t)-1) == 0);
        Run third = run_source(d, 0);
        CHECK(third.st.cache_hits == 0 && third.st.cache_corrupt == 1);
        free(third.image);
    }
    unsetenv("TILE_CACHE_READONLY");
    chown_tree(d, 0);
    free(e);
    free(a.image), free(r.image), free(c.image), free(bad.image);
}

/* SipHash-2-4 with the key 00..0f: the paper's example (message 00..0e) and the first
 * two of its reference vectors (the empty message, and 00). */
static void siphash_vectors(void) {
    uint8_t key[16], msg[15];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 15; i++)
        msg[i] = (uint8_t)i;
    RtMac s;
    rt_mac_init(&s, key);
    CHECK(rt_mac_final(&s) == 0x726fdb47dd0e0e31ull);
    rt_mac_init(&s, key);
    rt_mac_update(&s, msg, 1);
    CHECK(rt_mac_final(&s) == 0x74f839c593dc67fdull);
    rt_mac_init(&s, key);
    rt_mac_update(&s, msg, 15);
    CHECK(rt_mac_final(&s) == 0xa129ca6149be45e5ull);
    /* in pieces: the same */
    rt_mac_init(&s, key);
    rt_mac_update(&s, msg, 3);
    rt_mac_update(&s, msg + 3, 9);
    rt_mac_update(&s, msg + 12, 3);
    CHECK(rt_mac_final(&s) == 0xa129ca6149be45e5ull);
}

int main(void) {
    snprintf(cache, sizeof cache, "/tmp/tilec-trust-XXXXXX");
    if (!mkdtemp(cache))
        return 1;
    unsetenv("TILE_CACHE_READONLY");
    siphash_vectors();
    forged_entries();
    untrusted_directories();
    shared_readonly();
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", cache);
    TEST_DONE();
}
