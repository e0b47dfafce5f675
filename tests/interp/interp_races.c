/* What the interpreter reports that the GPU would not compute reliably (issue 35):
 *   read_back        a program loads what another of its lanes stored: a race on the GPU,
 *                    where the lanes are threads (docs/language.md, "Lanes run in
 *                    parallel"); the error names the load, the store and both lanes
 *   read_back_same   the same lane reading back its own store: reported too (the store's
 *                    and the load's layouts may give the element to different threads)
 *   overwrite        two lanes of a program storing to one address: which lands last is
 *                    not defined on the GPU
 *   offset_overflow  an i64 element offset whose byte offset wraps the 64-bit address
 *                    space back into a buffer: reported, not wrapped into bounds */
#include "harness.h"

static const char *const read_back_ir = "kernel @k (%x: ptr<f32>, %rev: i1) {\n"
                                        "  %r = arange {start=0, end=4} : tile<4xi32>\n"
                                        "  %v = cast %r : tile<4xf32>\n"
                                        "  %xs = splat %x : tile<4xptr<f32>>\n"
                                        "  %xp = addptr %xs, %r : tile<4xptr<f32>>\n"
                                        "  store %xp, %v\n"
                                        "  %three = constant {value=3} : tile<4xi32>\n"
                                        "  %back = sub %three, %r : tile<4xi32>\n"
                                        "  %revs = splat %rev : tile<4xi1>\n"
                                        "  %idx = select %revs, %back, %r : tile<4xi32>\n"
                                        "  %yp = addptr %xs, %idx : tile<4xptr<f32>>\n"
                                        "  %y = load %yp : tile<4xf32>\n"
                                        "  %four = constant {value=4} : tile<4xi32>\n"
                                        "  %r4 = add %r, %four : tile<4xi32>\n"
                                        "  %zp = addptr %xs, %r4 : tile<4xptr<f32>>\n"
                                        "  store %zp, %y\n"
                                        "}\n";

static void test_read_back(void) {
    TirModule *m = parse_ir(read_back_ir);
    float x[8] = {0};
    Run r = {{1, 1, 1}, .expect_error = true};
    add_buf(&r, x, sizeof x, "x");
    TirArg args[2] = {{.p = x}, {.i = 1}};
    int e = run_kernel(m, "k", args, &r);
    CHECK(e == 1);
    CHECKF(strstr(g_diag, "lane 0 of this load (%y.11) reads 0x") != NULL, "%s", g_diag);
    CHECKF(strstr(g_diag, "which lane 3 of the store to %xp.5 wrote earlier in program (0,0,0)") != NULL, "%s", g_diag);
    CHECKF(strstr(g_diag, "lanes run in parallel") != NULL, "%s", g_diag);
    CHECK(x[4] == 0); /* stopped before the second store */
}

static void test_read_back_same(void) {
    TirModule *m = parse_ir(read_back_ir);
    float x[8] = {0};
    Run r = {{1, 1, 1}, .expect_error = true};
    add_buf(&r, x, sizeof x, "x");
    TirArg args[2] = {{.p = x}, {.i = 0}};
    CHECK(run_kernel(m, "k", args, &r) == 1);
    CHECKF(strstr(g_diag, "lane 0 of this load (%y.11) reads 0x") != NULL, "%s", g_diag);
    CHECKF(strstr(g_diag, "which lane 0 of the store to %xp.5 wrote earlier in program (0,0,0)") != NULL, "%s", g_diag);
    CHECKF(strstr(g_diag, "different threads in the store and the load") != NULL, "%s", g_diag);
    CHECK(x[4] == 0); /* stopped before the second store */
}

static void test_overwrite(void) {
    TirModule *m = parse_ir("kernel @k (%x: ptr<f32>) {\n"
                            "  %r = arange {start=0, end=4} : tile<4xi32>\n"
                            "  %v = cast %r : tile<4xf32>\n"
                            "  %two = constant {value=2} : tile<4xi32>\n"
                            "  %half = div %r, %two : tile<4xi32>\n"
                            "  %xs = splat %x : tile<4xptr<f32>>\n"
                            "  %xp = addptr %xs, %half : tile<4xptr<f32>>\n"
                            "  store %xp, %v\n"
                            "}\n");
    float x[4] = {0};
    Run r = {{1, 1, 1}, .expect_error = true};
    add_buf(&r, x, sizeof x, "x");
    TirArg args[1] = {{.p = x}};
    int e = run_kernel(m, "k", args, &r);
    CHECK(e == 1);
    CHECKF(strstr(g_diag, "lane 1 of this store (to %xp.6) writes 0x") != NULL, "%s", g_diag);
    CHECKF(strstr(g_diag, "which lane 0 of the store to %xp.6 wrote earlier in program (0,0,0)") != NULL, "%s", g_diag);
}

static void test_offset_overflow(void) {
    /* 2^62 f32 elements are 2^64 bytes: the address wraps to %x itself */
    TirModule *m = parse_ir("kernel @k (%x: ptr<f32>, %off: i64) {\n"
                            "  %p = addptr %x, %off : ptr<f32>\n"
                            "  %v = load %p : f32\n"
                            "  store %x, %v\n"
                            "}\n");
    float x[4] = {1, 2, 3, 4};
    Run r = {{1, 1, 1}, .expect_error = true};
    add_buf(&r, x, sizeof x, "x");
    TirArg args[2] = {{.p = x}, {.i = (int64_t)1 << 62}};
    int e = run_kernel(m, "k", args, &r);
    CHECK(e == 1);
    CHECKF(strstr(g_diag, "4611686018427387904 elements of 4 bytes is past the 64-bit address space") != NULL, "%s",
           g_diag);
    /* a negative offset below address 0 too */
    TirArg args2[2] = {{.p = x}, {.i = INT64_MIN / 2}};
    e = run_kernel(m, "k", args2, &r);
    CHECK(e == 1);
    CHECKF(strstr(g_diag, "+ -4611686018427387904 elements") != NULL, "%s", g_diag);
    /* an in-range offset still works */
    Run ok = {{1, 1, 1}};
    add_buf(&ok, x, sizeof x, "x");
    TirArg args3[2] = {{.p = x}, {.i = 3}};
    CHECK(run_kernel(m, "k", args3, &ok) == 0);
    CHECK(x[0] == 4);
}

#define CASES(X) X(read_back) X(read_back_same) X(overwrite) X(offset_overflow)

HARNESS_MAIN(CASES)
