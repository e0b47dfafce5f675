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

/* ---- scratch.c ---- */

/* The bytes of shared memory `op` needs (0: none): the scratch of an op that exchanges
 * data between warps (cross-warp reductions and scans, layout conversions, trans,
 * reshape, the broadcast of a scalar atomic's old value), which the backend lowers as
 * its writes, one barrier, its reads; and a software-pipeline ring (smem_alloc), all its
 * stages.  passes/smem_alloc.c places these bytes (rounded up to 16), passes/barriers.c
 * checks that each op got them, and the backend refuses an op that did not. */
int32_t analysis_scratch_bytes(const TirModule *m, const TirOp *op);

#endif
