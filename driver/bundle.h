/* The bundle writer (docs/bundle.md) and the C header generator (--emit=header), for
 * the emit dispatch in compile.c.  Internal to the compiler library. */
#ifndef TILE_DRIVER_BUNDLE_H
#define TILE_DRIVER_BUNDLE_H

#include "buf.h"
#include "bundle_format.h"
#include "driver.h"

/* The version written into bundles and headers; the build may pass the project's. */
#ifndef TILEC_VERSION_STRING
#define TILEC_VERSION_STRING "0.1.0"
#endif

/* A bundle of kernel k (-1: every kernel of the file): every variant (`all`) or the
 * first of each, for the context's defines.  `with_code`: each variant compiled to PTX
 * and a cubin for the context's arch, once generic and once per specialization set
 * (aligned pointers; aligned pointers and integers divisible by 16); otherwise one
 * metadata-only record per variant (ncode = 0) for the runtime's JIT.  *out is
 * malloc'd, *len its size. */
tile_status driver_emit_bundle(tile_program *p, int k, bool all, bool with_code, char **out, size_t *len);

/* A C header that embeds the bundle of kernel k (-1: all) and the source, and declares
 * one typed launch function per kernel (docs/embedding.md).  *out is malloc'd text. */
tile_status driver_emit_header(tile_program *p, int k, bool all, char **out, size_t *len);

#endif
