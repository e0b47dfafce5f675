/* Element-wise comparison for `tilec check` (compare.h). */
#include "compare.h"

#include <math.h>
#include <string.h>

CmpTol cmp_default_tol(tile_scalar t) {
    /* A few units of each format's epsilon, so that reductions summed in another order
     * by another variant (another BLOCK, another number of warps) still pass, and an
     * absolute floor for results near zero; integers and bool are exact. */
    switch (t) {
    case TILE_F64: return (CmpTol){1e-12, 1e-12};
    case TILE_F32: return (CmpTol){1e-5, 1e-6};
    case TILE_F16: return (CmpTol){2e-3, 1e-3};
    case TILE_BF16: return (CmpTol){1.6e-2, 1e-2};
    case TILE_F8E4M3: return (CmpTol){0.125, 1.0 / 64};
    case TILE_F8E5M2: return (CmpTol){0.25, 1.0 / 32};
    default: return (CmpTol){0, 0};
    }
}

/* Bits of one element of float type t, with where its sign bit is. */
static uint64_t float_bits(tile_scalar t, const void *p, int *sign_bit) {
    size_t sz = tile_scalar_size(t);
    uint64_t u = 0;
    memcpy(&u, p, sz); /* little-endian hosts, as the rest of tilec */
    *sign_bit = (int)(sz * 8 - 1);
    return u;
}

uint64_t cmp_ulp_distance(tile_scalar t, const void *a, const void *b) {
    double da, db;
    tile_load_elements(t, &da, a, 1);
    tile_load_elements(t, &db, b, 1);
    if (isnan(da) || isnan(db))
        return isnan(da) && isnan(db) ? 0 : UINT64_MAX;
    if (da == db)
        return 0; /* +0 and -0 too */
    int sb;
    uint64_t ua = float_bits(t, a, &sb), ub = float_bits(t, b, &sb);
    /* map sign-magnitude bits onto a line where neighbours differ by one */
    uint64_t mag = ((uint64_t)1 << sb) - 1;
    int64_t oa = (ua >> sb & 1) ? -(int64_t)(ua & mag) : (int64_t)(ua & mag);
    int64_t ob = (ub >> sb & 1) ? -(int64_t)(ub & mag) : (int64_t)(ub & mag);
    return oa > ob ? (uint64_t)(oa - ob) : (uint64_t)(ob - oa);
}

CmpResult cmp_buffers(tile_scalar t, const void *got, const void *want, size_t n, CmpTol tol) {
    CmpResult r = {.n = n};
    size_t sz = tile_scalar_size(t);
    bool is_float = tile_scalar_is_float(t);
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++) {
        double gv, wv;
        tile_load_elements(t, &gv, g + i * sz, 1);
        tile_load_elements(t, &wv, w + i * sz, 1);
        bool bad;
        uint64_t ulp;
        if (is_float) {
            ulp = cmp_ulp_distance(t, g + i * sz, w + i * sz);
            if (isnan(gv) || isnan(wv) || isinf(gv) || isinf(wv)) {
                bad = ulp != 0;
            } else {
                double d = fabs(gv - wv);
                double rel = wv != 0 ? d / fabs(wv) : (d != 0 ? INFINITY : 0);
                if (d > r.max_abs)
                    r.max_abs = d;
                if (rel > r.max_rel)
                    r.max_rel = rel;
                bad = !(d <= tol.atol + tol.rtol * fabs(wv));
            }
        } else {
            /* integers compare exactly: their bits (a u64 past 2^53 has no double) */
            uint64_t ug = 0, uw = 0;
            memcpy(&ug, g + i * sz, sz);
            memcpy(&uw, w + i * sz, sz);
            double d = fabs(gv - wv);
            ulp = ug == uw ? 0 : (uint64_t)(d > 0 ? d : 1);
            if (d > r.max_abs)
                r.max_abs = d;
            if (wv != 0 && d / fabs(wv) > r.max_rel)
                r.max_rel = d / fabs(wv);
            bad = ug != uw;
        }
        if (ulp > r.max_ulp)
            r.max_ulp = ulp;
        if (bad) {
            if (!r.nbad) {
                r.first_bad = i;
                r.got_first = gv;
                r.want_first = wv;
            }
            r.nbad++;
        }
    }
    return r;
}
