/* Atomics on the GPU (issue 10, item 12): a Triton-style spin lock over 200 programs.
 * Each program takes the lock with atomic_cas, increments a counter with a plain load and
 * store, and releases the lock with atomic_xchg.  With acq_rel atomics (the default, as in
 * Triton) every increment sees the previous one and the counter ends at 200; with relaxed
 * atomics the H200 counted 20-31.  The interpreter runs programs one by one, so only the
 * GPU can show this.  A program that spins `spins` times without the lock gives up and
 * counts itself in count[1] (so a broken lock cannot hang the test); that must stay 0.
 * Runs ROUNDS times from a fresh counter.  Exit 77 (skip) without a GPU; --interp runs
 * the harness once on the interpreter. */
#include "gpu_common.h"

#define PROGRAMS 200
#define ROUNDS   20

static const char source[] = "kernel lock(L: *i32, count: *i32, spins: i32) grid(200) {\n"
                             "    for k in range(0, spins) {\n"
                             "        if atomic_cas(L, 0, 1) == 0 {\n"
                             "            store(count, load(count) + 1);\n"
                             "            atomic_xchg(L, 0);\n"
                             "            return;\n"
                             "        }\n"
                             "    }\n"
                             "    atomic_add(count + 1, 1);\n"
                             "}\n";

static tile_rt_arg ptr_arg(void *p, size_t bytes) {
    tile_rt_arg a = {.kind = TILE_RT_ARG_PTR};
    a.buf.ptr = p;
    a.buf.bytes = bytes;
    return a;
}

int main(int argc, char **argv) {
    tile_rt_options o = {.tune = 0, .tune_log = -1};
    /* --interp: the harness itself, on the interpreter (which counts 200 in any case) */
    bool interp = argc > 1 && !strcmp(argv[1], "--interp");
    tile_rt *rt = NULL;
    if (interp && tile_rt_open(TILE_RT_INTERP, &o, &rt) != TILE_RT_OK) {
        printf("FAIL: no interpreter: %s\n", tile_rt_open_error());
        return 1;
    }
    if (!interp && !(rt = gpu_open(&o)))
        return GPU_SKIP;
    tile_rt_module *m = NULL;
    tile_rt_kernel *k = NULL;
    void *lock = NULL, *count = NULL;
    int failures = 0;
    if (tile_rt_load_source(rt, "gpu_atomics.tile", source, sizeof source - 1, &m) ||
        tile_rt_get_kernel(m, "lock", &k) || tile_rt_alloc(rt, 4, &lock) || tile_rt_alloc(rt, 8, &count)) {
        printf("FAIL setup: %s\n", tile_rt_last_error(rt));
        return 1;
    }
    for (int r = 0; r < (interp ? 1 : ROUNDS); r++) {
        int32_t zero[2] = {0, 0}, got[2] = {-1, -1};
        tile_rt_arg args[3] = {ptr_arg(lock, 4), ptr_arg(count, 8), {.kind = TILE_RT_ARG_I64}};
        args[2].i64 = interp ? 4 : 1 << 26;
        if (tile_rt_copy_to_device(rt, lock, zero, 4) || tile_rt_copy_to_device(rt, count, zero, 8) ||
            tile_rt_launch(k, args, 3, NULL, NULL) || tile_rt_synchronize(rt) ||
            tile_rt_copy_to_host(rt, got, count, 8)) {
            printf("FAIL round %d: %s\n", r, tile_rt_last_error(rt));
            return 1;
        }
        if (got[0] != PROGRAMS || got[1] != 0) {
            printf("FAIL round %d: the lock counted %d of %d programs (%d gave up)\n", r, got[0], PROGRAMS, got[1]);
            failures++;
        }
    }
    if (!failures)
        printf("PASS spin lock: %d of %d programs counted, %d round%s on %s\n", PROGRAMS, PROGRAMS, interp ? 1 : ROUNDS,
               interp ? "" : "s", tile_rt_device_name(rt));
    tile_rt_free(rt, lock);
    tile_rt_free(rt, count);
    tile_rt_module_free(m);
    tile_rt_close(rt);
    return failures ? 1 : 0;
}
