/* Interpreter tests of shared buffers and async copies: a ring of stages filled ahead
 * by async_copy runs right, and each pipelining mistake (a read before the wait that
 * lands its copy, a write over a copy in flight, a missing barrier, a stage out of
 * range) is an error that names the ops, never a wrong result.
 * Usage: interp_smem CASE  (or no argument: every case). */
#include "harness.h"

/* A 1-D copy of 4 chunks of 16 floats through a `stages`-deep ring: the prologue fills
 * stages 0..S-2, iteration i waits for chunk i, reads stage i % S, then issues chunk
 * i + S - 1 into the stage read in iteration i - 1.  `variant` breaks one rule. */
enum {
    RING_OK,
    RING_NO_WAIT,
    RING_NO_BARRIER,
    RING_BAD_STAGE,
    RING_WAIT_TOO_LOOSE,
    RING_SCRATCH_ON,
    RING_SCRATCH_ABOVE
};

static const char *ring_ir(int stages, int variant) {
    static SB b;
    free(b.s);
    b = (SB){0};
    sb(&b, "kernel @ring (%%x: ptr<f32>, %%out: ptr<f32>) {\n");
    /* the scratch variants: the ring at [0, 64 * stages) as smem_alloc places it, and a
     * layout conversion in the loop (scratch [off, off + 64)) on top of stage 0 or above */
    bool scratch = variant == RING_SCRATCH_ON || variant == RING_SCRATCH_ABOVE;
    if (scratch)
        sb(&b, "  %%buf = smem_alloc {smem=[0, %d]} : smem<%dx16xf32>\n", 64 * stages, stages);
    else
        sb(&b, "  %%buf = smem_alloc : smem<%dx16xf32>\n", stages);
    sb(&b, "  %%c0 = constant {value=0} : i32\n  %%c1 = constant {value=1} : i32\n");
    sb(&b, "  %%c4 = constant {value=4} : i32\n  %%c16 = constant {value=16} : i32\n");
    sb(&b, "  %%cs = constant {value=%d} : i32\n", variant == RING_BAD_STAGE ? stages + 1 : stages);
    sb(&b, "  %%cs1 = constant {value=%d} : i32\n", stages - 1);
    sb(&b, "  %%r = arange {start=0, end=16} : tile<16xi32>\n");
    sb(&b, "  %%xs = splat %%x : tile<16xptr<f32>>\n  %%os = splat %%out : tile<16xptr<f32>>\n");
    for (int p = 0; p < stages - 1; p++) {
        sb(&b, "  %%st%d = constant {value=%d} : i32\n", p, p);
        sb(&b, "  %%o%d = constant {value=%d} : tile<16xi32>\n", p, 16 * p);
        sb(&b, "  %%i%d = add %%o%d, %%r : tile<16xi32>\n", p, p);
        sb(&b, "  %%p%d = addptr %%xs, %%i%d : tile<16xptr<f32>>\n", p, p);
        sb(&b, "  async_copy %%buf, %%st%d, %%p%d\n  async_commit\n", p, p);
    }
    sb(&b, "  for %%c0, %%c4, %%c1 {\n  ^(%%i: i32):\n");
    if (variant == RING_NO_WAIT)
        sb(&b, "    async_commit\n"); /* in place of the wait */
    else
        sb(&b, "    async_wait {n=%d}\n", variant == RING_WAIT_TOO_LOOSE ? stages - 1 : stages - 2);
    if (variant != RING_NO_BARRIER)
        sb(&b, "    barrier\n");
    if (scratch)
        sb(&b, "    %%cv = convert_layout {smem=[%d, 64]} %%r : tile<16xi32>\n",
           variant == RING_SCRATCH_ON ? 0 : 64 * stages);
    sb(&b, "    %%s = rem %%i, %%cs : i32\n");
    sb(&b, "    %%v = smem_load %%buf, %%s : tile<16xf32>\n");
    sb(&b, "    %%io = mul %%i, %%c16 : i32\n    %%ios = splat %%io : tile<16xi32>\n");
    sb(&b, "    %%oi = add %%ios, %%r : tile<16xi32>\n    %%op = addptr %%os, %%oi : tile<16xptr<f32>>\n");
    sb(&b, "    store %%op, %%v\n");
    sb(&b, "    %%n = add %%i, %%cs1 : i32\n    %%ns = rem %%n, %%cs : i32\n");
    sb(&b, "    %%more = cmp {pred=lt} %%n, %%c4 : i1\n    %%mk = splat %%more : tile<16xi1>\n");
    sb(&b, "    %%no = mul %%n, %%c16 : i32\n    %%nos = splat %%no : tile<16xi32>\n");
    sb(&b, "    %%ni = add %%nos, %%r : tile<16xi32>\n    %%np = addptr %%xs, %%ni : tile<16xptr<f32>>\n");
    sb(&b, "    async_copy %%buf, %%ns, %%np, %%mk\n    async_commit\n    yield\n  }\n");
    /* a barrier elsewhere keeps the barrier rules on in RING_NO_BARRIER */
    sb(&b, "  async_wait {n=0}\n  barrier\n}\n");
    return b.s;
}

static int run_ring(int stages, int variant, float *x, float *out) {
    TirModule *m = parse_ir(ring_ir(stages, variant));
    if (!m)
        return -1;
    Run r = {{1, 1, 1},
             .expect_error = variant != RING_OK && variant != RING_SCRATCH_ON && variant != RING_SCRATCH_ABOVE};
    add_buf(&r, x, sizeof(float) * 64, "x");
    add_buf(&r, out, sizeof(float) * 64, "out");
    TirArg args[2] = {{.p = x}, {.p = out}};
    return run_kernel(m, "ring", args, &r);
}

static void test_ring(void) {
    for (int stages = 2; stages <= 4; stages++) {
        float x[64], out[64];
        for (int i = 0; i < 64; i++) {
            x[i] = rndf(-1, 1);
            out[i] = -99;
        }
        CHECK(run_ring(stages, RING_OK, x, out) == 0);
        for (int i = 0; i < 64; i++)
            CHECK(same_f32(out[i], x[i]));
    }
}

static void expect_ring_error(int stages, int variant, const char *want) {
    float x[64] = {0}, out[64] = {0};
    CHECK(run_ring(stages, variant, x, out) > 0);
    if (!strstr(g_diag, want)) {
        fprintf(stderr, "expected a diagnostic with '%s', got:\n%s", want, g_diag);
        g_fail++;
    }
}

static void test_ring_no_wait(void) {
    expect_ring_error(3, RING_NO_WAIT, "before the async_copy on %buf");
}

static void test_ring_wait_too_loose(void) {
    /* waiting for all but S-1 groups leaves this iteration's copy in flight */
    expect_ring_error(3, RING_WAIT_TOO_LOOSE, "no async_wait covers its group");
}

static void test_ring_no_barrier(void) {
    expect_ring_error(3, RING_NO_BARRIER, "no barrier");
}

/* The interpreter runs IR with the offsets smem_alloc gave: a scratch op placed on a
 * live ring overwrites stage 0 there, as on the GPU, so the copy comes out wrong; placed
 * above the ring it changes nothing. */
static void test_ring_scratch(void) {
    float x[64], out[64];
    for (int i = 0; i < 64; i++)
        x[i] = rndf(-1, 1), out[i] = -99;
    CHECK(run_ring(3, RING_SCRATCH_ABOVE, x, out) == 0);
    for (int i = 0; i < 64; i++)
        CHECK(same_f32(out[i], x[i]));
    for (int i = 0; i < 64; i++)
        out[i] = -99;
    CHECK(run_ring(3, RING_SCRATCH_ON, x, out) == 0);
    int wrong = 0;
    for (int i = 0; i < 64; i++)
        wrong += !same_f32(out[i], x[i]);
    /* chunks 0 and 3 are read from stage 0 after the conversion overwrote it */
    if (wrong != 32)
        fprintf(stderr, "scratch on the ring: %d of 64 outputs differ from x, want 32\n", wrong), g_fail++;
}

static void test_ring_bad_stage(void) {
    expect_ring_error(2, RING_BAD_STAGE, "outside its 2 stages");
}

/* smem_store then smem_load with and without a barrier between */
static void test_store_load(void) {
    const char *ok = "kernel @sl (%x: ptr<f32>, %out: ptr<f32>) {\n"
                     "  %buf = smem_alloc : smem<1x8xf32>\n"
                     "  %c0 = constant {value=0} : i32\n"
                     "  %r = arange {start=0, end=8} : tile<8xi32>\n"
                     "  %xs = splat %x : tile<8xptr<f32>>\n"
                     "  %xp = addptr %xs, %r : tile<8xptr<f32>>\n"
                     "  %v = load %xp : tile<8xf32>\n"
                     "  smem_store %buf, %c0, %v\n"
                     "  barrier\n"
                     "  %w = smem_load %buf, %c0 : tile<8xf32>\n"
                     "  %os = splat %out : tile<8xptr<f32>>\n"
                     "  %op = addptr %os, %r : tile<8xptr<f32>>\n"
                     "  store %op, %w\n"
                     "  barrier\n"
                     "  smem_store %buf, %c0, %v\n"
                     "}\n";
    float x[8], out[8];
    for (int i = 0; i < 8; i++) {
        x[i] = (float)i - 3.5f;
        out[i] = 0;
    }
    TirModule *m = parse_ir(ok);
    Run r = {{1, 1, 1}};
    add_buf(&r, x, sizeof x, "x");
    add_buf(&r, out, sizeof out, "out");
    TirArg args[2] = {{.p = x}, {.p = out}};
    CHECK(run_kernel(m, "sl", args, &r) == 0);
    for (int i = 0; i < 8; i++)
        CHECK(same_f32(out[i], x[i]));
    /* without the first barrier the read races the other threads' writes; without the
     * second the last store overwrites what they may still read */
    for (int which = 0; which < 2; which++) {
        char text[2048];
        snprintf(text, sizeof text, "%s", ok);
        char *bar = strstr(text, "  barrier\n");
        if (which)
            bar = strstr(bar + 1, "  barrier\n");
        memmove(bar, bar + 10, strlen(bar + 10) + 1);
        m = parse_ir(text);
        Run e = {{1, 1, 1}, .expect_error = true};
        add_buf(&e, x, sizeof x, "x");
        add_buf(&e, out, sizeof out, "out");
        int errs = run_kernel(m, "sl", args, &e);
        /* with no barrier at all the rules are off (the IR before the barriers pass) */
        CHECK(errs > 0);
        CHECK(strstr(g_diag, which ? "may still read" : "written with no barrier") != NULL);
    }
}

#define CASES(X) \
    X(ring) X(ring_no_wait) X(ring_wait_too_loose) X(ring_no_barrier) X(ring_bad_stage) X(ring_scratch) X(store_load)

HARNESS_MAIN(CASES)
