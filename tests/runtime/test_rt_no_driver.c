/* Opening the cuda device where there is no driver: TILE_RT_ERR_NO_DRIVER with a message
 * that says why, never a crash.  $TILE_LIBCUDA (read by the loader) points at a path
 * that does not exist, then at a library that is not the driver. */
#include "tile/runtime.h"
#include "rt_test.h"

static void expect_no_driver(const char *libcuda, const char *want) {
    setenv("TILE_LIBCUDA", libcuda, 1);
    tile_rt *rt = (tile_rt *)1;
    CHECK_ERR(tile_rt_open(TILE_RT_CUDA, NULL, &rt), TILE_RT_ERR_NO_DRIVER, tile_rt_open_error(), want);
    CHECK(rt == NULL);
}

int main(void) {
    expect_no_driver("/nonexistent/libcuda.so.1",
                     "/nonexistent/libcuda.so.1 not found: no NVIDIA driver on this machine");
    expect_no_driver("libc.so.6", "has no cuGetProcAddress_v2");
    /* The real name: on a machine without a driver (CI) the exact message of the
     * contract; where a driver exists the open may succeed, which is fine too. */
    unsetenv("TILE_LIBCUDA");
    tile_rt *rt = NULL;
    tile_rt_status s = tile_rt_open(TILE_RT_CUDA, NULL, &rt);
    if (s == TILE_RT_ERR_NO_DRIVER && strstr(tile_rt_open_error(), "libcuda.so.1 not found"))
        CHECK(!strcmp(tile_rt_open_error(), "libcuda.so.1 not found: no NVIDIA driver on this machine"));
    else if (s == TILE_RT_OK)
        tile_rt_close(rt);
    else
        CHECK(rt == NULL && tile_rt_open_error()[0]);
    /* The interpreter opens everywhere; NULL handles are errors, not crashes. */
    CHECK(tile_rt_open(TILE_RT_INTERP, NULL, &rt) == TILE_RT_OK && rt);
    CHECK(!strcmp(tile_rt_device_name(rt), "interpreter"));
    tile_rt_close(rt);
    CHECK(tile_rt_open(TILE_RT_INTERP, NULL, NULL) == TILE_RT_ERR_INVALID);
    CHECK(tile_rt_launch(NULL, NULL, 0, NULL, NULL) == TILE_RT_ERR_INVALID);
    CHECK(tile_rt_get_kernel(NULL, "x", NULL) == TILE_RT_ERR_INVALID);
    tile_rt_close(NULL);
    tile_rt_module_free(NULL);
    TEST_DONE();
}
