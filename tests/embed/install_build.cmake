# cmake -DBUILD_DIR=.. -DSOURCE_DIR=.. -DWORK=.. -DC_COMPILER=.. -P install_build.cmake
# Installs BUILD_DIR into WORK/prefix, builds examples/embed against it in WORK/build,
# and compiles and runs a program with the flags of the pkg-config files.
foreach(v BUILD_DIR SOURCE_DIR WORK C_COMPILER)
  if(NOT ${v})
    message(FATAL_ERROR "install_build.cmake: -D${v}= is required")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(prefix ${WORK}/prefix)
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# What the package must hold.
foreach(f include/tile/tile.h include/tile/runtime.h lib/cmake/tilec/tilecConfig.cmake
          lib/cmake/tilec/tilecConfigVersion.cmake lib/cmake/tilec/tilecTargets.cmake
          lib/cmake/tilec/tilecKernels.cmake lib/pkgconfig/tilec-runtime.pc
          lib/pkgconfig/tilec-compiler.pc bin/tilec)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "the installed package lacks ${f}")
  endif()
endforeach()

run("configuring examples/embed" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/embed -B ${WORK}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_BUILD_TYPE=Release)
run("building examples/embed" ${CMAKE_COMMAND} --build ${WORK}/build)
foreach(h vector_add softmax)
  set(hdr ${WORK}/build/tilec_kernels/embed_demo/${h}.tile.h)
  if(NOT EXISTS ${hdr})
    message(FATAL_ERROR "tilec_add_kernels did not generate ${hdr}")
  endif()
  file(STRINGS ${hdr} decl REGEX "^tile_rt_status ${h}_launch\\(void \\*stream")
  if(NOT decl)
    message(FATAL_ERROR "${hdr} declares no typed ${h}_launch")
  endif()
endforeach()

# pkg-config: a program that uses both libraries, built only from the .pc files' flags.
find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
  run("pkg-config" ${PKG_CONFIG} --cflags --libs tilec-runtime tilec-compiler)
  string(STRIP "${run_out}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  file(WRITE ${WORK}/pc_check.c [=[
#include <stdio.h>
#include <string.h>
#include <tile/runtime.h>
#include <tile/tile.h>
int main(void)
{
    tile_ctx *c = tile_ctx_new();
    tile_program *p;
    static const char src[] = "kernel k(x: *f32) grid(1) { store(x + arange(0, 16), zeros([16], f32)); }";
    tile_rt *rt = NULL;
    int ok = c && tile_program_load_source(c, "k.tile", src, sizeof src - 1, &p) == TILE_OK &&
             tile_program_kernel_count(p) == 1 && !strcmp(tile_kernel_name(p, 0), "k") &&
             tile_rt_open(TILE_RT_INTERP, NULL, &rt) == TILE_RT_OK &&
             !strcmp(tile_rt_device_name(rt), "interpreter");
    printf("%s\n", ok ? "pkg-config program ok" : "pkg-config program FAILED");
    return !ok;
}
]=])
  run("compiling with pkg-config flags" ${C_COMPILER} -std=c17 ${WORK}/pc_check.c -o ${WORK}/pc_check ${flags})
  run("running the pkg-config program" ${WORK}/pc_check)
else()
  message(STATUS "pkg-config not found: the .pc files were installed but not tried")
endif()
message(STATUS "installed, built examples/embed in ${WORK}/build")
