/* Analyses of the tile IR that the passes and the backend share: plain numbers, no
 * rewriting and no LLVM.  This folder links ir/ alone; passes/ and backend/ link it.
 *   axisinfo.c  divisibility, contiguity and constancy of integer and pointer values
 *   scratch.c   the shared bytes an op needs between warps (smem_alloc, barriers, backend)
 *   blocked.c   the digits of a blocked layout along each dimension
 *   threadmap.c a thread's view of a layout's linear map: base coordinates from lane and
 *               warp bits, each register's constant part, owners, vectors, stage offsets */
#ifndef TIR_ANALYSIS_H
#define TIR_ANALYSIS_H

#include "ir.h"
#include "layout.h"

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

/* Adds the work of one execution of `op` over its tile to *flops (floating-point
 * operations) and *bytes (global memory moved): analysis/work.c has the rule, which
 * --report (per program) and `tilec report` (per launch) share. */
void analysis_op_work(const TirOp *op, double *flops, double *bytes);

/* ---- threadmap.c ----
 * A thread's view of a distributed layout, from its linear map alone ((register, lane,
 * warp) -> tile coordinates, ir/layout.h).  The map is linear over GF(2), so coordinate
 * d of register r in thread (lane, warp) is
 *     base_d(lane, warp) XOR reg_d(r)
 * where base_d is the XOR of the bases of the set lane and warp bits (the thread's part,
 * computed once per thread) and reg_d(r) the register's constant part.  Where reg_d(r) has
 * no bit in common with thread_bits[d] (every bit base_d can set) the XOR is an add: an
 * immediate of the access.  Along d, the thread's part is also a sum of fields
 * ((id >> shift) & (2^bits - 1)) * mult where its bases are distinct powers of two (every
 * blocked and mma layout), the form the backend emits. */

typedef struct AnaThreadMap {
    const TirLinear *lin;
    int rank;                                         /* tile dims: the map's outputs */
    int reg_dim, lane_dim, warp_dim;                  /* input dims of lin, -1: none */
    int regs, lane_bits, warp_bits;                   /* registers a thread holds; lane and warp index bits */
    int32_t lane_basis[TIR_LIN_MAXBITS][TIR_MAXRANK]; /* coordinates lane bit k moves */
    int32_t warp_basis[TIR_LIN_MAXBITS][TIR_MAXRANK];
    int32_t thread_bits[TIR_MAXRANK]; /* along d, every bit the thread's part can set */
    /* the owner mask: the lane and warp bits that only copy what registers and lower bits
     * already hold (tir_lin_free_mask); the canonical holder of each element has them clear */
    uint32_t lane_copies, warp_copies;
    int32_t vec[TIR_MAXRANK]; /* consecutive registers from 0 at consecutive coordinates along d */
} AnaThreadMap;

/* False when lin is not a distributed map (register, lane and warp inputs). */
bool analysis_thread_map(const TirLinear *lin, AnaThreadMap *tm);
/* The thread's part of every coordinate, and register r's constant part. */
void analysis_thread_base(const AnaThreadMap *tm, int32_t lane, int32_t warp, int32_t *coord);
void analysis_reg_offset(const AnaThreadMap *tm, int32_t reg, int32_t *coord);
/* Coordinate d from the thread's part and a register's constant part: an add where no bit
 * overlaps, else the XOR. */
int32_t analysis_join(const AnaThreadMap *tm, int d, int32_t base, int32_t reg_off);
/* Whether (lane, warp) is the canonical holder of its elements, in a CTA of `warps` warps
 * (warps past the map's span hold copies). */
bool analysis_is_owner(const AnaThreadMap *tm, int32_t lane, int32_t warp, int warps);
/* The owner mask for a CTA of `warps` warps: a thread owns its elements when
 * lane & *lane_mask and warp & *warp_mask are both zero.  False: every thread owns. */
bool analysis_owner_mask(const AnaThreadMap *tm, int warps, uint32_t *lane_mask, uint32_t *warp_mask);

typedef enum { ANA_LANE, ANA_WARP } AnaSource;
typedef struct AnaField {
    uint8_t src;         /* AnaSource */
    uint8_t shift, bits; /* the field (id >> shift) & (2^bits - 1) */
    int32_t mult;        /* times mult along the dim */
} AnaField;
/* The thread's part along d as fields (at most 2 * TIR_LIN_MAXBITS): how many, or -1 when
 * it is not a sum of fields (bases that are not distinct powers of two along d, or that
 * move other dims too). */
int analysis_thread_fields(const AnaThreadMap *tm, int d, AnaField *f);

/* ---- blocked.c: the digits of a blocked layout ----
 * A #blocked layout (or a slice of one) as per-dimension digits: along root dim rd a
 * thread's lane digit is lane / lane_stride[rd] % tpw[rd], its warp digit warp /
 * warp_stride[rd] % wpc[rd], and its first coordinate ((warp digit tpw + lane digit) spt)
 * mod the extent; registers repeat every span[rd] = spt tpw wpc.  The same placement as
 * the layout's map (tests/analysis checks both); the backend emits a blocked tile's
 * reductions and scans from these digits, which name the lanes and warps along one dim
 * even where the map has wrapped them away (shapes smaller than the span).  tile_dim[rd]
 * is -1 for a root dim a slice removed. */
typedef struct AnaBlocked {
    int rank; /* the blocked root's */
    int32_t spt[TIR_MAXRANK], tpw[TIR_MAXRANK], wpc[TIR_MAXRANK];
    int32_t order[TIR_MAXRANK]; /* root dims, fastest first */
    int32_t lane_stride[TIR_MAXRANK], warp_stride[TIR_MAXRANK];
    int64_t span[TIR_MAXRANK];
    int32_t tile_dim[TIR_MAXRANK]; /* root dim -> tile dim or -1 */
    int32_t root_dim[TIR_MAXRANK]; /* tile dim -> root dim */
} AnaBlocked;

/* False (and *why) when the layout is not blocked or a slice of one, or its rank is not
 * tile_rank. */
bool analysis_blocked(const TirModule *m, int32_t layout, int tile_rank, AnaBlocked *b, const char **why);
/* Along root dim rd of a tile `extent` long there: the lanes and warps that hold distinct
 * data (the others hold copies). */
void analysis_blocked_distinct(const AnaBlocked *b, int rd, int64_t extent, int *lanes, int *warps);

/* ---- shared-memory stages ----
 * A stage's layout maps an element offset to tile coordinates (swizzle included); its
 * inverse gives the offset of a coordinate, and composed with a distributed map, the
 * offset each (register, lane, warp) reads or writes: a one-output map, so its thread
 * map's dim 0 is the offset (thread part XOR register part, as above). */
typedef struct AnaStage {
    TirLinear inv; /* tile coordinates -> element offset */
    int64_t numel; /* elements of one stage */
    /* the swizzle read off the map: column `cdim` in vectors of `vec` elements, vector v of
     * row r (every other dim, row-major) at v ^ ((r / per_phase) % max_phase) */
    int cdim, vec, per_phase, max_phase;
    bool swizzle_ok; /* the formula gives inv's offsets (checked at every offset); false: an
                      * nvmma atom or another map of no such form, inv alone describes it */
} AnaStage;

/* False when smem is not an offset -> coordinates map that reaches every coordinate. */
bool analysis_stage(const TirLinear *smem, AnaStage *st);
int32_t analysis_stage_offset(const AnaStage *st, const int32_t *coord);
/* (register, lane, warp) -> element offset of dist's elements in the stage. */
bool analysis_stage_access(const AnaStage *st, const TirLinear *dist, TirLinear *access);
/* The most registers (a power of two, <= max) that go in one access: every aligned group
 * of w registers at w consecutive offsets, aligned to w, none of them set by the thread's
 * part.  1: element by element. */
int analysis_access_vec(const AnaThreadMap *access, int max);

#endif
