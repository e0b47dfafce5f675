/* The disk cache's trust model (docs/runtime.md, "Disk cache"): the cache holds code this
 * process will run, so whoever can write it can run code as this user.
 *
 * - The directory is trusted only when it, its jit/ and tune/ folders and every folder
 *   above it cannot be written by anyone but this user (root may own the folders above;
 *   a folder above that others can write must be sticky, as /tmp is): else tile_rt_open
 *   fails and says which folder and why.  A read-only cache (TILE_CACHE_READONLY=1) may
 *   belong to another user, the one whose cache is shared; then nobody else may write it.
 * - Each entry is bound to its key by a MAC: SipHash-2-4 under a 128-bit key kept in the
 *   cache (CACHE/key, made at random by the first process that uses the cache) over the
 *   entry's kind, its full key and its content, checked on every read.  An entry someone
 *   else made (a file of another cache copied in, another kernel's code put under this
 *   key with every unkeyed checksum recomputed) fails it and is never loaded.  Entries
 *   must also belong to the cache's owner and be writable by nobody else.
 *
 * SipHash (Aumasson and Bernstein, 2012) is written here from its definition: a MAC,
 * unlike FNV-1a, whose state a forger can run backwards from one known entry. */
#define _GNU_SOURCE
#include "rt_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- SipHash-2-4 ------------------------------------------------------------------ */
static uint64_t rotl(uint64_t x, int b) {
    return (x << b) | (x >> (64 - b));
}

static void sip_round(uint64_t v[4]) {
    v[0] += v[1], v[1] = rotl(v[1], 13), v[1] ^= v[0], v[0] = rotl(v[0], 32);
    v[2] += v[3], v[3] = rotl(v[3], 16), v[3] ^= v[2];
    v[0] += v[3], v[3] = rotl(v[3], 21), v[3] ^= v[0];
    v[2] += v[1], v[1] = rotl(v[1], 17), v[1] ^= v[2], v[2] = rotl(v[2], 32);
}

static uint64_t load_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void sip_block(RtMac *s, uint64_t m) {
    s->v[3] ^= m;
    sip_round(s->v);
    sip_round(s->v);
    s->v[0] ^= m;
}

void rt_mac_init(RtMac *s, const uint8_t key[16]) {
    uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    s->v[0] = k0 ^ 0x736f6d6570736575ull;
    s->v[1] = k1 ^ 0x646f72616e646f6dull;
    s->v[2] = k0 ^ 0x6c7967656e657261ull;
    s->v[3] = k1 ^ 0x7465646279746573ull;
    s->nbuf = 0;
    s->total = 0;
}

void rt_mac_update(RtMac *s, const void *data, size_t n) {
    const uint8_t *p = data;
    s->total += n;
    while (n) {
        size_t take = 8 - s->nbuf < n ? 8 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take, p += take, n -= take;
        if (s->nbuf == 8) {
            sip_block(s, load_le64(s->buf));
            s->nbuf = 0;
        }
    }
}

uint64_t rt_mac_final(RtMac *s) {
    uint8_t last[8] = {0};
    memcpy(last, s->buf, s->nbuf);
    last[7] = (uint8_t)s->total;
    sip_block(s, load_le64(last));
    s->v[2] ^= 0xff;
    for (int i = 0; i < 4; i++)
        sip_round(s->v);
    return s->v[0] ^ s->v[1] ^ s->v[2] ^ s->v[3];
}

/* ---- the directory ---------------------------------------------------------------- */
static bool readonly_asked(void) {
    const char *v = getenv("TILE_CACHE_READONLY");
    return v && *v && strcmp(v, "0") && strcmp(v, "off") && strcmp(v, "false");
}

/* mkdir -p dir (0755: nobody else may write; others may read, as with a shared cache). */
static bool make_dir_path(const char *dir) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return false;
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

static const char *HINT = "whoever can write a cache can make this process run their code";

/* A folder of the cache itself (the directory, jit/, tune/): a folder, owned by `owner`,
 * writable by nobody else. */
static bool check_cache_folder(const char *path, const struct stat *st, unsigned owner, char *err, size_t n) {
    if (!S_ISDIR(st->st_mode)) {
        snprintf(err, n, "cache directory '%s' is not a directory", path);
        return false;
    }
    if (st->st_uid != owner) {
        snprintf(err, n,
                 "cache directory '%s' belongs to uid %u, not to this user (uid %u): %s; use a "
                 "directory of your own (TILE_CACHE_DIR, tile_rt_options.cache_dir), or set "
                 "TILE_CACHE_READONLY=1 to read a cache its owner shares",
                 path, (unsigned)st->st_uid, owner, HINT);
        return false;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(err, n, "cache directory '%s' is writable by %s (mode %04o): %s; chmod go-w '%s'", path,
                 st->st_mode & S_IWGRP ? "its group" : "other users", (unsigned)(st->st_mode & 07777), HINT, path);
        return false;
    }
    return true;
}

/* Every folder above the cache: owned by root, this user or the cache's owner, and
 * writable by no one else unless sticky (then others cannot rename what is not theirs). */
static bool check_parents(const char *real, unsigned owner, char *err, size_t n) {
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", real);
    for (char *slash = strrchr(buf, '/'); slash; slash = strrchr(buf, '/')) {
        if (slash == buf)
            slash[1] = 0; /* "/" itself */
        else
            *slash = 0;
        struct stat st;
        if (stat(buf, &st) != 0) {
            snprintf(err, n, "cache directory '%s': cannot stat the folder above it '%s': %s", real, buf,
                     strerror(errno));
            return false;
        }
        if (st.st_uid != 0 && st.st_uid != geteuid() && st.st_uid != owner) {
            snprintf(err, n, "cache directory '%s' lies in '%s', which belongs to uid %u: %s", real, buf,
                     (unsigned)st.st_uid, HINT);
            return false;
        }
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
            snprintf(err, n,
                     "cache directory '%s' lies in '%s', which is writable by %s and not sticky "
                     "(mode %04o): %s",
                     real, buf, st.st_mode & S_IWGRP ? "its group" : "other users", (unsigned)(st.st_mode & 07777),
                     HINT);
            return false;
        }
        if (slash == buf)
            break;
    }
    return true;
}

/* ---- the key ---------------------------------------------------------------------- */
static bool read_key(const char *path, unsigned owner, uint8_t key[16], char *err, size_t n) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, n, "cache key '%s': %s%s", path, strerror(errno),
                 errno == EACCES ? " (the cache's owner shares it with chmod go+r)" : "");
        return false;
    }
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 16;
    if (ok && (st.st_uid != owner || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
        snprintf(err, n,
                 "cache key '%s' belongs to uid %u (mode %04o): it must be the cache owner's (uid %u), "
                 "writable by nobody else",
                 path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), owner);
        close(fd);
        return false;
    }
    ok = ok && read(fd, key, 16) == 16;
    close(fd);
    if (!ok)
        snprintf(err, n, "cache key '%s' is not a 16-byte file: remove it (and the cache's entries)", path);
    return ok;
}

/* The cache's key: read, or made at random and published with link() so that two
 * processes starting at once agree on one (the loser of the race reads the winner's). */
static int make_key(const char *path, unsigned owner, uint8_t key[16], char *err, size_t n) {
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    uint8_t fresh[16];
    if (getrandom(fresh, sizeof fresh, 0) != (ssize_t)sizeof fresh)
        return snprintf(err, n, "cache key: no random bytes: %s", strerror(errno)), -1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd < 0)
        return 0; /* a folder this process cannot write: no cache */
    bool ok = write(fd, fresh, sizeof fresh) == (ssize_t)sizeof fresh;
    ok = close(fd) == 0 && ok;
    int linked = ok ? link(tmp, path) : -1;
    int link_errno = errno;
    unlink(tmp);
    if (!ok)
        return 0;
    if (linked == 0) {
        memcpy(key, fresh, 16);
        return 1;
    }
    if (link_errno != EEXIST)
        return 0;
    return read_key(path, owner, key, err, n) ? 1 : -1;
}

bool rt_cache_open(tile_rt *rt, char *err, size_t n) {
    rt->cache_readonly = readonly_asked();
    if (!rt->cache_dir[0])
        return true;
    const char *dir = rt->cache_dir;
    if (!rt->cache_readonly && !make_dir_path(dir)) {
        rt->cache_dir[0] = 0; /* a folder this process cannot make: no disk cache */
        return true;
    }
    char real[PATH_MAX];
    if (!realpath(dir, real)) {
        snprintf(err, n, "cache directory '%s': %s%s", dir, strerror(errno),
                 rt->cache_readonly ? " (TILE_CACHE_READONLY=1 reads an existing cache)" : "");
        return false;
    }
    struct stat st;
    if (stat(real, &st) != 0) {
        snprintf(err, n, "cache directory '%s': %s", real, strerror(errno));
        return false;
    }
    unsigned owner = rt->cache_readonly ? (unsigned)st.st_uid : (unsigned)geteuid();
    if (!check_cache_folder(real, &st, owner, err, n) || !check_parents(real, owner, err, n))
        return false;
    static const char *const subs[] = {"jit", "tune"};
    for (int i = 0; i < 2; i++) {
        char sub[PATH_MAX + 8];
        snprintf(sub, sizeof sub, "%s/%s", real, subs[i]);
        if (lstat(sub, &st) == 0 && !check_cache_folder(sub, &st, owner, err, n))
            return false;
    }
    rt->cache_owner = owner;
    snprintf(rt->cache_dir, sizeof rt->cache_dir, "%s", real);
    char key[PATH_MAX + 8];
    snprintf(key, sizeof key, "%s/key", real);
    if (rt->cache_readonly) {
        if (!read_key(key, owner, rt->cache_key, err, n))
            return false;
        return true;
    }
    if (access(key, F_OK) == 0 || errno != ENOENT)
        return read_key(key, owner, rt->cache_key, err, n);
    int made = make_key(key, owner, rt->cache_key, err, n);
    if (made < 0)
        return false;
    if (made == 0)
        rt->cache_dir[0] = 0; /* cannot write the key: no disk cache */
    return true;
}

bool rt_cache_entry_trusted(const tile_rt *rt, const struct stat *st) {
    return S_ISREG(st->st_mode) && st->st_uid == rt->cache_owner && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

uint64_t rt_cache_mac(const tile_rt *rt, const char *sub, const char *hex, const void *data, size_t len) {
    RtMac s;
    rt_mac_init(&s, rt->cache_key);
    rt_mac_update(&s, sub, strlen(sub) + 1);
    rt_mac_update(&s, hex, 32);
    uint8_t l[8];
    for (int i = 0; i < 8; i++)
        l[i] = (uint8_t)((uint64_t)len >> (8 * i));
    rt_mac_update(&s, l, 8);
    rt_mac_update(&s, data, len);
    return rt_mac_final(&s);
}
