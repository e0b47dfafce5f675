/* Comparing a kernel's output buffer with a reference, element by element, as `tilec
 * check` reports it: the largest absolute and relative errors, the distance in units in
 * the last place, how many elements are out of tolerance and the first of them. */
#ifndef TILEC_COMPARE_H
#define TILEC_COMPARE_H

#include "tile/tile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An element is within tolerance when |got - want| <= atol + rtol * |want| (NumPy's
 * allclose), or both are the same NaN-ness and infinity. */
typedef struct CmpTol {
    double rtol, atol;
} CmpTol;

/* The default tolerances of each element type (docs/tools.md, "tilec check"). */
CmpTol cmp_default_tol(tile_scalar t);

typedef struct CmpResult {
    size_t n, nbad;
    size_t first_bad; /* index of the first element out of tolerance (nbad > 0) */
    double got_first, want_first;
    double max_abs, max_rel; /* over the elements that are finite in both */
    uint64_t max_ulp;        /* floats: ordered-bit distance; integers: |got - want| */
} CmpResult;

/* Compares n elements of type t. */
CmpResult cmp_buffers(tile_scalar t, const void *got, const void *want, size_t n, CmpTol tol);
/* The distance in representable values between two elements of float type t (0 for
 * equal values and for two NaNs; UINT64_MAX when only one is NaN). */
uint64_t cmp_ulp_distance(tile_scalar t, const void *a, const void *b);

#endif
