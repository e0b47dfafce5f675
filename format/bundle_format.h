/* The bundle format (docs/bundle.md) defined once, for its writer (driver/bundle.c) and its
 * readers (runtime/bundle_read.c, runtime/expr.c): magic, version, header size, limits,
 * code kinds, the clause bytecode's opcodes and the checksum.  Header only, and it includes
 * nothing of the compiler or the runtime, so both sides may include it (format/ is the one
 * folder both link; docs/design.md). */
#ifndef TILE_FORMAT_BUNDLE_FORMAT_H
#define TILE_FORMAT_BUNDLE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* ---- header ------------------------------------------------------------------------ */
#define BUNDLE_MAGIC       "TILEBNDL" /* 8 bytes, no terminator in the file */
#define BUNDLE_MAGIC_BYTES 8
/* 3 added div8 masks, 2 code kind 3; the readers read BUNDLE_VERSION_OLDEST to BUNDLE_VERSION */
#define BUNDLE_VERSION        3u
#define BUNDLE_VERSION_OLDEST 1u
#define BUNDLE_HEADER_BYTES   32 /* magic, u32 version, u32 flags, u64 payload_len, u64 checksum */

/* ---- limits (the reader rejects more; the writer never writes more) ------------------ */
#define BUNDLE_MAX_KERNELS     4096
#define BUNDLE_MAX_PARAMS      64
#define BUNDLE_MAX_GRID        3
#define BUNDLE_MAX_WHERE       64
#define BUNDLE_MAX_CONST_NAMES 256
#define BUNDLE_MAX_VARIANTS    65536
#define BUNDLE_MAX_CODE        16    /* code objects per variant */
#define BUNDLE_MAX_EXPR_BYTES  4096  /* bytecode per expression */
#define BUNDLE_MAX_STR         65535 /* bytes of a str */
#define BUNDLE_EXPR_STACK      64    /* an expression's deepest stack */

/* ---- code kinds ---------------------------------------------------------------------- */
/* 3: a cubin of the same variant with every register the block size allows, where kind 1
 * is register-capped for occupancy (the tuner times both; version 2 and later) */
enum { BUNDLE_CODE_CUBIN = 1, BUNDLE_CODE_PTX = 2, BUNDLE_CODE_CUBIN_UNCAPPED = 3 };

/* ---- clause bytecode ----------------------------------------------------------------- */
/* X(opcode, name, operand bytes, pops, pushes); each side makes its enum from it. */
// clang-format off
#define BUNDLE_OPS(X) \
    X(0x01, PUSH_I, 8, 0, 1) \
    X(0x02, PUSH_F, 8, 0, 1) \
    X(0x03, ARG, 2, 0, 1) \
    X(0x04, CONST, 2, 0, 1) \
    X(0x10, ADD, 0, 2, 1) \
    X(0x11, SUB, 0, 2, 1) \
    X(0x12, MUL, 0, 2, 1) \
    X(0x13, DIV, 0, 2, 1) \
    X(0x14, MOD, 0, 2, 1) \
    X(0x15, NEG, 0, 1, 1) \
    X(0x16, CDIV, 0, 2, 1) \
    X(0x17, MIN, 0, 2, 1) \
    X(0x18, MAX, 0, 2, 1) \
    X(0x19, NEXT_POW2, 0, 1, 1) \
    X(0x20, EQ, 0, 2, 1) \
    X(0x21, NE, 0, 2, 1) \
    X(0x22, LT, 0, 2, 1) \
    X(0x23, LE, 0, 2, 1) \
    X(0x24, GT, 0, 2, 1) \
    X(0x25, GE, 0, 2, 1) \
    X(0x26, LAND, 0, 2, 1) \
    X(0x27, LOR, 0, 2, 1) \
    X(0x28, LNOT, 0, 1, 1) \
    X(0x29, BAND, 0, 2, 1) \
    X(0x2A, BOR, 0, 2, 1) \
    X(0x2B, BXOR, 0, 2, 1) \
    X(0x2C, SHL, 0, 2, 1) \
    X(0x2D, SHR, 0, 2, 1) \
    X(0x2E, BNOT, 0, 1, 1) \
    X(0x30, CAST, 1, 1, 1)
// clang-format on

/* ---- checksum and hashes ------------------------------------------------------------- */
/* FNV-1a 64: the payload checksum and the kernels' source hash; `h` is the running hash
 * (start with BUNDLE_FNV_BASIS). */
#define BUNDLE_FNV_BASIS 0xcbf29ce484222325ull
#define BUNDLE_FNV_PRIME 0x100000001b3ull
static inline uint64_t bundle_fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= BUNDLE_FNV_PRIME;
    }
    return h;
}

#endif
