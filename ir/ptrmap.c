/* The pointer map (ptrmap.h). */
#include "ptrmap.h"

#include <stdint.h>
#include <stdlib.h>

static size_t slot_of(const void *k, size_t cap) {
    uint64_t x = (uint64_t)(uintptr_t)k;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull; /* Fibonacci hashing: the high bits mix every address bit */
    return (size_t)(x >> 11) & (cap - 1);
}

static size_t find(const TirPtrMap *m, const void *k) {
    size_t i = slot_of(k, m->cap);
    while (m->key[i] && m->key[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void grow(TirPtrMap *m) {
    TirPtrMap n = {.cap = m->cap ? m->cap * 2 : 64};
    n.key = calloc(n.cap, sizeof *n.key);
    n.val = calloc(n.cap, sizeof *n.val);
    if (!n.key || !n.val)
        abort();
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i]) {
            size_t j = find(&n, m->key[i]);
            n.key[j] = m->key[i];
            n.val[j] = m->val[i];
        }
    n.n = m->n;
    free(m->key);
    free(m->val);
    *m = n;
}

void tir_ptrmap_put(TirPtrMap *m, const void *k, void *v) {
    if ((m->n + 1) * 2 > m->cap)
        grow(m);
    size_t i = find(m, k);
    if (!m->key[i]) {
        m->key[i] = k;
        m->n++;
    }
    m->val[i] = v;
}

void *tir_ptrmap_get(const TirPtrMap *m, const void *k) {
    if (!m->cap)
        return NULL;
    size_t i = find(m, k);
    return m->key[i] ? m->val[i] : NULL;
}

bool tir_ptrmap_has(const TirPtrMap *m, const void *k) {
    return m->cap && m->key[find(m, k)] != NULL;
}

void tir_ptrmap_free(TirPtrMap *m) {
    free(m->key);
    free(m->val);
    *m = (TirPtrMap){0};
}
