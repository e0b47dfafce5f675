# Installing tilec as a package: the `tilec` CLI, the public headers, the compiler
# library (libtilec.so, the whole compiler behind include/tile/tile.h) and the runtime
# (libtilert.so), with a CMake package (find_package(tilec): tilec::tilec,
# tilec::compiler, tilec::runtime and tilec_add_kernels) and pkg-config files.
# Included last from the top-level CMakeLists, once every target exists.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TILEC_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilec)
set(_tilec_exported)

# Installed binaries find the libraries relative to themselves ($ORIGIN), so a prefix
# can be moved or copied to another machine whole.
file(RELATIVE_PATH _tilec_bin_to_lib ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR})

# The compiler library, libtilec.so: built in driver/ (the one copy of the compiler and
# LLVM); its own INSTALL_RPATH names a shared libLLVM's folder when there is one.
if(TARGET tilec_compiler)
  list(APPEND _tilec_exported tilec_compiler)
endif()

# The runtime, libtilert.so (runtime/).
set(TILEC_RUNTIME_TARGET "")
if(TARGET tilert)
  set(TILEC_RUNTIME_TARGET tilert)
endif()
if(TILEC_RUNTIME_TARGET)
  # The installed package must not point into the source tree.
  set_property(TARGET ${TILEC_RUNTIME_TARGET} PROPERTY INTERFACE_INCLUDE_DIRECTORIES
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  # libtilec.so lies next to it.
  set_target_properties(${TILEC_RUNTIME_TARGET} PROPERTIES EXPORT_NAME runtime
    INSTALL_RPATH "\$ORIGIN")
  if(NOT TARGET tilec::runtime)
    add_library(tilec::runtime ALIAS ${TILEC_RUNTIME_TARGET})
  endif()
  list(APPEND _tilec_exported ${TILEC_RUNTIME_TARGET})
else()
  message(STATUS "tilec: no shared runtime library target yet: the package exports no tilec::runtime")
endif()

if(TARGET tilec)
  set_target_properties(tilec PROPERTIES EXPORT_NAME tilec
    INSTALL_RPATH "\$ORIGIN/${_tilec_bin_to_lib}")
  if(NOT TARGET tilec::tilec)
    add_executable(tilec::tilec ALIAS tilec)
  endif()
  list(APPEND _tilec_exported tilec)
endif()

install(TARGETS ${_tilec_exported} EXPORT tilecTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/tile/tile.h ${PROJECT_SOURCE_DIR}/include/tile/runtime.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tile)
install(EXPORT tilecTargets NAMESPACE tilec:: DESTINATION ${TILEC_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tilecConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tilecConfig.cmake INSTALL_DESTINATION ${TILEC_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tilecConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tilecConfig.cmake ${PROJECT_BINARY_DIR}/tilecConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/tilecKernels.cmake DESTINATION ${TILEC_INSTALL_CMAKEDIR})

# pkg-config: relocatable (paths from ${pcfiledir}), so `cmake --install --prefix` anywhere works.
file(RELATIVE_PATH TILEC_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
set(TILEC_RUNTIME_LIBNAME tilert)
if(TILEC_RUNTIME_TARGET)
  get_target_property(_out ${TILEC_RUNTIME_TARGET} OUTPUT_NAME)
  set(TILEC_RUNTIME_LIBNAME ${TILEC_RUNTIME_TARGET})
  if(_out)
    set(TILEC_RUNTIME_LIBNAME ${_out})
  endif()
endif()
foreach(_pc compiler runtime)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/tilec-${_pc}.pc.in ${PROJECT_BINARY_DIR}/tilec-${_pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/tilec-${_pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# The ctypes module for Python users (not a build product: copied as is).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/tilec DESTINATION ${CMAKE_INSTALL_DATADIR}/tilec/python
  OPTIONAL PATTERN "__pycache__" EXCLUDE)

# In the build tree, tilec_add_kernels works too (the targets above have tilec:: aliases).
include(${CMAKE_CURRENT_LIST_DIR}/tilecKernels.cmake)
