/* One map from pointers to pointers for the whole compiler (value rewrites, use counts,
 * per-value states): open addressing on the key's address, grown at half full.  Keys are
 * never removed: a user builds a map, asks it, and frees it.  NULL keys are not allowed.
 * Out of memory aborts, as tir_alloc does (a compile cannot go on without its maps). */
#ifndef TILE_IR_PTRMAP_H
#define TILE_IR_PTRMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct TirPtrMap {
    const void **key;
    void **val;
    size_t cap, n; /* cap: 0 or a power of two; n: keys present */
} TirPtrMap;

/* Sets k's value (adding k when absent). */
void tir_ptrmap_put(TirPtrMap *m, const void *k, void *v);
/* k's value; NULL when k is absent (or its value is NULL). */
void *tir_ptrmap_get(const TirPtrMap *m, const void *k);
/* Whether k is present. */
bool tir_ptrmap_has(const TirPtrMap *m, const void *k);
void tir_ptrmap_free(TirPtrMap *m);

#endif
