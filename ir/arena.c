/* One arena per compilation: bump allocation in large chunks, freed all at once. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

typedef struct TirChunk {
    struct TirChunk *next;
    size_t cap, used;
    /* payload follows, 16-byte aligned because the header is padded to 32 bytes */
} TirChunk;

#define TIR_CHUNK_HDR ((sizeof(TirChunk) + 15) & ~(size_t)15)
#define TIR_CHUNK_MIN ((size_t)64 * 1024)

struct TirArena {
    TirChunk *head;
};

TirArena *tir_arena_new(void) {
    TirArena *a = calloc(1, sizeof *a);
    if (!a)
        abort();
    return a;
}

void tir_arena_free(TirArena *a) {
    if (!a)
        return;
    TirChunk *c = a->head;
    while (c) {
        TirChunk *n = c->next;
        free(c);
        c = n;
    }
    free(a);
}

void *tir_alloc(TirArena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    TirChunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > TIR_CHUNK_MIN ? n : TIR_CHUNK_MIN;
        c = malloc(TIR_CHUNK_HDR + cap);
        if (!c)
            abort(); /* the header's contract: out of memory is not recoverable here */
        c->cap = cap;
        c->used = 0;
        /* A big one-off block goes behind the current chunk so the current one keeps serving. */
        if (a->head && cap > TIR_CHUNK_MIN) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = (char *)c + TIR_CHUNK_HDR + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *tir_strndup(TirArena *a, const char *s, size_t n) {
    char *d = tir_alloc(a, n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *tir_strdup(TirArena *a, const char *s) {
    return tir_strndup(a, s, strlen(s));
}

void *tir_memdup(TirArena *a, const void *p, size_t n) {
    void *d = tir_alloc(a, n);
    if (n)
        memcpy(d, p, n);
    return d;
}
