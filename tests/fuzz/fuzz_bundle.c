/* libFuzzer target for the bundle reader (runtime/bundle_read.c) and the clause
 * expressions it admits (runtime/expr.c): arbitrary bytes are parsed as a bundle twice,
 * as they are and with the header's payload length and checksum made to fit (so that
 * mutations get past the checksum into the kernel table).  A bundle that parses has
 * every grid and where expression of every kernel evaluated for its first variants with
 * a few sets of arguments (zeros, ones, 16, -1 and the i64 extremes), as a launch does.
 * Any crash, sanitizer report, leak or hang is a bug; a refused bundle must say why.
 * Seeds: bundles of examples (tests/fuzz/corpus_bundle, made by `tilec --emit=bundle`).
 * Build with -DTILEC_FUZZ=ON; without it, fuzz.bundle.corpus replays the seeds. */
#include "rt_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void evaluate(const RtBundle *b) {
    static const int64_t ints[] = {0, 1, 16, -1, INT64_MAX, INT64_MIN};
    RtValue args[RT_MAX_PARAMS + 1];
    char err[256];
    for (uint32_t ki = 0; ki < b->nkernels; ki++) {
        const RtKernelMeta *k = &b->kernels[ki];
        for (size_t s = 0; s < sizeof ints / sizeof *ints; s++) {
            for (uint32_t i = 0; i < k->nparams; i++) {
                bool f = !k->params[i].is_pointer && tile_scalar_is_float(k->params[i].scalar);
                args[i] = f ? (RtValue){.is_float = true, .f = (double)ints[s]} : (RtValue){.i = ints[s]};
            }
            for (uint32_t vi = 0; vi < k->nvariants && vi < 4; vi++) {
                const RtVariant *v = &k->variants[vi];
                if (!v->text)
                    __builtin_trap();
                RtValue r;
                err[0] = 0;
                for (uint32_t g = 0; g < k->ngrid; g++, err[0] = 0)
                    if (!rt_expr_eval(&k->grid[g], k, v, args, &r, err, sizeof err) && !err[0])
                        __builtin_trap();
                for (uint32_t w = 0; w < k->nwhere; w++, err[0] = 0)
                    if (!rt_expr_eval(&k->where[w].pred, k, v, args, &r, err, sizeof err) && !err[0])
                        __builtin_trap();
            }
        }
    }
}

static void parse(const uint8_t *data, size_t size) {
    RtBundle *b = NULL;
    char err[512];
    err[0] = 0;
    if (rt_bundle_parse("fuzz", data, size, &b, err, sizeof err) == TILE_RT_OK) {
        evaluate(b);
        rt_bundle_free(b);
    } else if (strncmp(err, "bundle 'fuzz': ", 15) || !err[15]) {
        __builtin_trap(); /* refused without saying why */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    parse(data, size);
    if (size < 32 || memcmp(data, "TILEBNDL", 8))
        return 0;
    /* the header's payload length (bytes 16..23) and checksum (24..31) made right */
    uint8_t *fixed = malloc(size);
    memcpy(fixed, data, size);
    uint64_t payload = size - 32, sum = rt_fnv1a(RT_FNV_BASIS, fixed + 32, size - 32);
    for (int i = 0; i < 8; i++) {
        fixed[16 + i] = (uint8_t)(payload >> (8 * i));
        fixed[24 + i] = (uint8_t)(sum >> (8 * i));
    }
    parse(fixed, size);
    free(fixed);
    return 0;
}
