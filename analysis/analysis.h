/* Analyses of the tile IR that the passes and the backend share: plain numbers, no
 * rewriting and no LLVM.  This folder links ir/ alone; passes/ and backend/ link it.
 *   axisinfo.c  divisibility, contiguity and constancy of integer and pointer values
 *   scratch.c   the shared bytes an op needs between warps (smem_alloc, barriers, backend)
 *   threadmap.c a thread's view of a layout's linear map: base coordinates from lane and
 *               warp bits, each register's constant part, owners, vectors, stage offsets */
#ifndef TIR_ANALYSIS_H
#define TIR_ANALYSIS_H

#include "ir.h"

/* ---- axisinfo.c ---- */

/* Per integer/pointer value, along each dimension, what the layout pass needs to widen
 * memory accesses (Triton's AxisInfo).  For a tile, along dimension d: runs of `contig`
 * consecutive values (pointers: consecutive elements), the first value of each run
 * divisible by `div` (pointers: the byte address), runs of `constancy` equal values.
 * Scalars use index 0.  All three are powers of two. */
typedef struct TirAxisInfo {
    int64_t div[TIR_MAXRANK];
    int32_t contig[TIR_MAXRANK];
    int32_t constancy[TIR_MAXRANK];
} TirAxisInfo;
/* Indexed by value id (f->next_id entries), allocated in the module's arena. */
TirAxisInfo *analysis_axisinfo(TirFunc *f);

#endif
