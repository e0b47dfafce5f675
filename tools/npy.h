/* NumPy .npy files for `tilec run`: the header's reader and writer (docs/tools.md).
 * Format versions 1.0, 2.0 and 3.0; C order only; the dtypes that match a tile scalar.
 * Everything is checked against the bytes given: a bad header is an error naming the
 * byte, never a read past the end. */
#ifndef TILEC_NPY_H
#define TILEC_NPY_H

#include "tile/tile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most dimensions and header bytes read (NumPy's own reader stops at 10,000 bytes by
 * default; a header of 64 dimensions fits in 1,500). */
#define NPY_MAX_DIMS         64
#define NPY_MAX_HEADER_BYTES 16384

typedef struct NpyHeader {
    int major, minor; /* format version */
    char descr[48];   /* the dtype as written, e.g. "<f4" */
    bool fortran_order;
    int ndim;
    uint64_t shape[NPY_MAX_DIMS];
    size_t data_offset; /* the first byte of the data */
} NpyHeader;

/* True when the bytes start with the .npy magic ("\x93NUMPY"). */
bool npy_has_magic(const void *data, size_t len);

/* Parses the header at the start of `data` (len bytes: the whole file or more than the
 * header).  False with "byte N: WHAT" in err. */
bool npy_read_header(const void *data, size_t len, NpyHeader *h, char *err, size_t errn);

/* Whether dtype `descr` holds elements of tile scalar t: the same kind and size, little
 * endian (or one byte); a void of the right size ('<V2', what ml_dtypes writes for its
 * bfloat16) is taken as bf16 or f8 bits. */
bool npy_descr_matches(const char *descr, tile_scalar t);
/* The tile scalar a dtype holds most naturally (for messages), or -1. */
int npy_descr_scalar(const char *descr);
/* The dtype written for tile scalar t ("<f4"; "<V2" for bf16, "|V1" for f8). */
const char *npy_descr_of(tile_scalar t);

/* The number of elements of a shape (1 for no dimensions); false when it overflows. */
bool npy_count(const uint64_t *shape, int ndim, uint64_t *count);
/* "(3, 4)" as NumPy prints a shape ("(3,)" for one dimension). */
void npy_shape_text(const uint64_t *shape, int ndim, char *buf, size_t n);

/* A version 1.0 header (2.0 if it does not fit) for a C-order array of t with this
 * shape, padded to a multiple of 64 bytes: malloc'ed, its length in *len; NULL when
 * out of memory. */
char *npy_make_header(tile_scalar t, const uint64_t *shape, int ndim, size_t *len);

#endif
