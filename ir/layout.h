/* The layout algebra: every layout is a linear map over GF(2).
 *
 * A layout says which hardware index holds which tile coordinate.  Inputs are hardware
 * indices split into named dimensions (register, lane, warp for a tile spread over
 * threads; one `offset` dimension, in elements, for shared memory); outputs are the
 * tile's dimensions.  Every extent is a power of two, so an index is a bit vector and
 * the map is linear over GF(2): input bit k of dimension i has a basis vector
 * basis[i][k] (a tile coordinate), and an index maps to the XOR of the bases of its set
 * bits.  A zero basis means the bit does not move the coordinate: the element is
 * replicated (broadcast) over that bit.  Triton's LinearLayout is the idea; this is
 * our own, smaller, C version: coordinates are packed into one 64-bit word so that
 * apply, compose and inverse are XORs and a Gaussian elimination.
 *
 * Packing: output dimension o occupies bits [pos_o, pos_o + outbits[o]) of a packed
 * coordinate, pos_o = sum of outbits[p] for p < o (dimension 0 in the low bits).  The
 * same packing is used for inputs where a map's inputs are another map's outputs
 * (tir_lin_invert, tir_lin_compose).
 *
 * TirLayout (ir.h) stays the interned constructor descriptor: what the text form
 * prints and parses.  tir_layout_linear turns a layout index and a tile shape into its
 * TirLinear; nothing outside ir/layout.c reads TirLayout's fields.
 */
#ifndef TIR_LAYOUT_H
#define TIR_LAYOUT_H

#include "ir.h"

#define TIR_LIN_MAXDIMS 5  /* >= TIR_MAXRANK and >= 3 (register, lane, warp) */
#define TIR_LIN_MAXBITS 32 /* per input dimension */

/* What an input or output dimension names. */
typedef enum {
    TIR_LIN_REG,    /* register index of one thread */
    TIR_LIN_LANE,   /* lane in the warp */
    TIR_LIN_WARP,   /* warp in the CTA */
    TIR_LIN_OFFSET, /* element offset in shared memory */
    TIR_LIN_DIM0,   /* tile dimension d is TIR_LIN_DIM0 + d */
} TirLinDim;

typedef struct TirLinear {
    int nin, nout;
    uint8_t in_kind[TIR_LIN_MAXDIMS], out_kind[TIR_LIN_MAXDIMS]; /* TirLinDim */
    uint8_t inbits[TIR_LIN_MAXDIMS], outbits[TIR_LIN_MAXDIMS];
    uint64_t basis[TIR_LIN_MAXDIMS][TIR_LIN_MAXBITS]; /* packed outputs */
} TirLinear;

/* ---- building maps by hand (tests, and constructors of new layouts) ---- */
void tir_lin_init(TirLinear *l, int nin, const uint8_t *in_kind, int nout, const uint8_t *out_kind,
                  const int32_t *out_extent);
/* Appends one input bit to input dimension i with basis `coord` (one value per output). */
void tir_lin_add_bit(TirLinear *l, int i, const int32_t *coord);

/* ---- queries ---- */
int tir_lin_in_dim(const TirLinear *l, TirLinDim kind); /* index of an input dim, -1: none */
int32_t tir_lin_in_size(const TirLinear *l, int i);     /* 1 << inbits[i] */
int tir_lin_total_outbits(const TirLinear *l);
uint64_t tir_lin_pack(const TirLinear *l, const int32_t *coord);          /* outputs -> packed */
void tir_lin_unpack(const TirLinear *l, uint64_t packed, int32_t *coord); /* packed -> outputs */
uint64_t tir_lin_pack_in(const TirLinear *l, const int32_t *in);
void tir_lin_unpack_in(const TirLinear *l, uint64_t packed, int32_t *in);
/* apply: in[i] the index along input dim i; returns the packed output. */
uint64_t tir_lin_apply(const TirLinear *l, const int32_t *in);
void tir_lin_apply_coords(const TirLinear *l, const int32_t *in, int32_t *coord);
bool tir_lin_equal(const TirLinear *a, const TirLinear *b);
/* The inverse map: inputs are l's outputs, outputs are l's inputs.  Where several
 * indices hold one coordinate (replication), the canonical holder: the one whose
 * free bits (tir_lin_free_mask) are zero, the free bits chosen by eliminating register
 * bits first, then lanes, then warps.  False when l does not reach every coordinate. */
bool tir_lin_invert(const TirLinear *l, TirLinear *inv);
/* Which index holds coordinate `coord` (canonical holder); false when none does. */
bool tir_lin_holder(const TirLinear *l, const int32_t *coord, int32_t *in);
/* out = outer o inner: inner's outputs must be outer's inputs (same kinds and bits). */
bool tir_lin_compose(const TirLinear *outer, const TirLinear *inner, TirLinear *out);
/* The bits of input dim i that carry no new coordinate (zero bases, or bases that
 * earlier bits already span): the replicated bits. */
uint32_t tir_lin_free_mask(const TirLinear *l, int i);
/* How many consecutive elements along output dim `dim` sit in consecutive registers,
 * starting at register 0 (a power of two; the vector width of the layout along dim). */
int tir_lin_contig(const TirLinear *l, int in_dim, int dim);
/* The same map with input dim i's bits reordered so that those with bases 1, 2, 4.. along
 * output dim `dim` come first, in that order, the others after them as they were: the
 * elements a thread holds at consecutive coordinates become consecutive indices (a
 * vector), wherever its bits sit.  perm[j] (1 << inbits[i] entries): the index of l that
 * index j of *out is.  Returns the run length now at bit 0 (tir_lin_contig of *out). */
int tir_lin_runs_first(const TirLinear *l, int i, int dim, TirLinear *out, int32_t *perm);
/* Input dim i's bits k..: when bits [k, k+n) have bases 1, 2, 4.. times `mult` along
 * output dim `dim` and nothing else, the run length n (0: bit k is not such a run). */
int tir_lin_run(const TirLinear *l, int i, int k, int dim, int32_t *mult);

/* snprintf-like: the bases per input dim, for diagnostics and tests:
 * "register=[(0, 1), (8, 0)] lane=[(0, 2), ...] warp=[]" (coordinates per output dim). */
int tir_lin_print(char *buf, size_t n, const TirLinear *l);

/* ---- layouts of the IR: constructors that intern a TirLayout ---- */
int32_t tir_layout_blocked(TirModule *m, int rank, const int32_t *spt, const int32_t *tpw, const int32_t *wpc,
                           const int32_t *order);
int32_t tir_layout_slice(TirModule *m, int32_t parent, int dim);
/* version 2: mma.sync m16n8 (instr n 8); version 3: wgmma m64nN (instr n = N, wpc[rank-2]
 * a multiple of 4).  wpc: warps along each dim (the last two are M and N). */
int32_t tir_layout_mma(TirModule *m, int version, int rank, const int32_t *wpc, const int32_t instr[3]);
/* The mma.sync layout `mma` with its N tiles grouped: of the N columns that one warp
 * column strip of S = 8 wpc[N] covers per register repeat, a thread's `ngroup`
 * consecutive repeats j (a power of two, 1..8) sit at adjacent columns:
 *   column hi S g + j S + lo  (lo < S, j < g)  moves to  hi S g + lo g + j,
 * g = min(ngroup, N / S) (1 where N <= S).  The accumulator and the B operand move
 * alike, so the products are the same; what changes is which bytes of a row-major B a
 * thread reads together (8-bit B: 4 adjacent bytes, one 32-bit shared load, for 4 mmas).
 * 1 gives `mma` back; 0 where `mma` is not a version 2 #mma. */
int32_t tir_layout_mma_grouped(TirModule *m, int32_t mma, int ngroup);
int tir_layout_mma_ngroup(const TirModule *m, int32_t layout); /* 1 but for grouped #mma */
/* Operand op_idx (0: A [.., M, K], 1: B [.., K, N]) of an mma parent; k_width elements
 * of K per 32-bit register: 2 for 16-bit, 4 for 8-bit types, 1 for tf32. */
int32_t tir_layout_dot_operand(TirModule *m, int32_t parent, int op_idx, int k_width);
/* Swizzled shared memory (ldmatrix-friendly form): the vec-element groups of row r
 * along order[0] are XORed with (r / per_phase) % max_phase.  atom: 0, or the width in
 * elements of the column blocks a TMA box stores separately (tir_layout_shared_nvmma). */
int32_t tir_layout_shared(TirModule *m, int rank, const int32_t *order, int vec, int per_phase, int max_phase,
                          int atom);
/* The 0/32/64/128-byte swizzles wgmma and TMA read, for elements of elem_bits. */
int32_t tir_layout_shared_nvmma(TirModule *m, int rank, const int32_t *order, int swizzle_bytes, int elem_bits);

/* ---- descriptors: what a layout index is ---- */
TirLayoutKind tir_layout_kind(const TirModule *m, int32_t layout); /* NONE for 0 or out of range */
int tir_layout_rank(const TirModule *m, int32_t layout);
bool tir_layout_is_distributed(const TirModule *m, int32_t layout); /* blocked, slice, mma, dot_op */
int32_t tir_layout_parent(const TirModule *m, int32_t layout);      /* slice / dot_op; else 0 */
int tir_layout_slice_dim(const TirModule *m, int32_t layout);       /* slice; else -1 */
int tir_layout_warps(const TirModule *m, int32_t layout);           /* warps the layout spans */
/* Order of the tile dims, fastest first, as the layout numbers elements (blocked: its
 * order; slices: the parent's with the dim removed; mma and operands: last dim first). */
void tir_layout_order(const TirModule *m, int32_t layout, int32_t *order);
/* The constructor arguments of an mma, dot-operand or shared layout (false: another kind).
 * Any output pointer may be NULL. */
bool tir_layout_mma_params(const TirModule *m, int32_t layout, int *version, int32_t *wpc, int32_t *instr);
bool tir_layout_dot_params(const TirModule *m, int32_t layout, int *op_idx, int *k_width);
bool tir_layout_shared_params(const TirModule *m, int32_t layout, int *vec, int *per_phase, int *max_phase);

/* The linear map of a layout index over a tile shape: (register, lane, warp) -> tile
 * coordinates for distributed layouts, offset -> tile coordinates for shared ones.
 * Cached per module: the pointer stays valid as long as the module.  NULL (and *why set
 * when why is non-NULL) when the shape does not fit the layout: rank differs, an extent
 * is not a power of two, or a parameter is not one. */
const TirLinear *tir_layout_linear(TirModule *m, int32_t layout, int rank, const int32_t *shape, const char **why);

/* The blocked form of a #blocked layout or of slices of one: the numbers the backend's
 * blocked lowering (TbView, reductions, scans) emits its index arithmetic from.  The
 * placement they give is tir_layout_linear's (tests/ir/test_layout.c checks both).
 * lane_d = lane / lane_stride[d] % tpw[d], warp_d = warp / warp_stride[d] % wpc[d] for
 * each root dim d; tile_dim[d] is -1 for a root dim a slice removed. */
typedef struct TirBlockedForm {
    int rank;     /* the blocked root's */
    int32_t root; /* its layout index */
    int32_t spt[TIR_MAXRANK], tpw[TIR_MAXRANK], wpc[TIR_MAXRANK];
    int32_t order[TIR_MAXRANK]; /* root dims, fastest first */
    int32_t lane_stride[TIR_MAXRANK], warp_stride[TIR_MAXRANK];
    int32_t tile_dim[TIR_MAXRANK]; /* root dim -> tile dim or -1 */
    int32_t root_dim[TIR_MAXRANK]; /* tile dim -> root dim */
} TirBlockedForm;

/* False (and *why) when the layout is not blocked or a slice of one, or its rank is not
 * tile_rank. */
bool tir_layout_blocked_form(const TirModule *m, int32_t layout, int tile_rank, TirBlockedForm *bf, const char **why);
/* Along root dim rd of a tile `extent` long there: the lanes and warps that hold distinct
 * data (the others hold copies), and the elements one pass of all threads covers. */
void tir_blocked_distinct(const TirBlockedForm *bf, int rd, int64_t extent, int *lanes, int *warps);
int64_t tir_blocked_span(const TirBlockedForm *bf, int rd);

/* ---- conversions ---- */
typedef enum {
    TIR_CONV_NONE,    /* the same map: nothing to do */
    TIR_CONV_REGS,    /* each thread already holds what it needs: dst reg r = src reg perm[r] */
    TIR_CONV_SHUFFLE, /* data moves inside warps: dst reg r of lane l is src reg
                          src_reg[r][l] of lane src_lane[r][l] (see TirConvPlan) */
    TIR_CONV_SMEM,    /* through shared memory laid out as `smem` */
} TirConvKind;

typedef struct TirConvPlan {
    TirConvKind kind;
    int nregs_dst, nregs_src, lanes;
    /* dst (reg, lane, warp) -> src (reg, lane, warp) canonical holder: the plan as a map */
    TirLinear dst_to_src;
    int32_t *perm; /* REGS: [nregs_dst] */
    /* SHUFFLE, each [nregs_dst * lanes]: the source of dst reg r in lane l is register
     * src_reg[r*lanes+l] of lane src_lane[r*lanes+l].  one_round: each lane sends one
     * register per dst reg, send_reg[r*lanes+sender] (one shfl.idx per dst register).
     * Otherwise, per dst reg, one shfl.idx per distinct src_reg (all lanes send that
     * register; a lane keeps the value when it is its own src_reg): `shuffles` in all. */
    int32_t *src_lane, *src_reg, *send_reg;
    bool one_round;
    int shuffles;
    /* SMEM: offset -> tile coordinates, its swizzle, the access widths of both sides
     * (elements, consecutive registers along smem_order[0]), and the wavefronts. */
    TirLinear smem;
    int32_t smem_order[TIR_MAXRANK];
    int smem_vec, smem_per_phase, smem_max_phase;
    int write_vec, read_vec;
    int64_t smem_elems;
    int64_t write_wavefronts, read_wavefronts;
} TirConvPlan;

/* The plan from distributed map a to distributed map b (same tile shape); arrays come
 * from arena ar.  False when the maps do not cover the same tile. */
bool tir_conv_plan(TirArena *ar, const TirLinear *a, const TirLinear *b, int elem_bytes, TirConvPlan *p);

/* ---- shared-memory bank conflicts ---- */
typedef enum {
    TIR_ACCESS_VECTOR,   /* ld/st.shared of `vec` consecutive registers per lane */
    TIR_ACCESS_LDMATRIX, /* ldmatrix: one 8x8 b16 matrix (a 32-bit register word) per phase */
} TirAccessKind;

typedef struct TirBankCount {
    int64_t accesses;   /* instructions (per warp, all warps) */
    int64_t wavefronts; /* shared-memory wavefronts they take */
    int64_t ideal;      /* wavefronts without conflicts */
    bool ok;            /* false: the access is not possible (vec registers not contiguous) */
} TirBankCount;

/* Distributed map `dist` reading or writing shared map `smem` (same tile), elements of
 * elem_bytes.  conflicts = wavefronts - ideal. */
TirBankCount tir_lin_bank_conflicts(const TirLinear *dist, const TirLinear *smem, int elem_bytes, TirAccessKind kind,
                                    int vec);

#endif
