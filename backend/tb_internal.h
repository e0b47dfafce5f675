/* Shared by the backend's files: the lowering state, per-thread views of layouts,
 * and helpers.  Nothing outside backend/ includes this (it pulls in llvm-c). */
#ifndef TB_INTERNAL_H
#define TB_INTERNAL_H

#include "analysis.h"
#include "backend.h"
#include "layout.h"

#include <llvm-c/Core.h>
#include <stdarg.h>

#define TB_TRIPLE      "nvptx64-nvidia-cuda"
#define TB_GLOBAL_AS   1
#define TB_SHARED_AS   3
#define TB_STATIC_SMEM (48 * 1024) /* the most static shared memory a kernel may declare */

typedef struct TbLowerResult {
    int64_t flops, global_bytes;
    int smem_bytes;
    int threads;
} TbLowerResult;

void tb_diag(TirDiagFn diag, void *ud, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int tb_arch_cc(const char *arch);

/* The LLVM values one thread holds for one IR value: n == 1 for scalars, else the
 * elements the thread owns in its layout's element order (TbView).
 * Affine form (ab != NULL): every element is the thread's base plus a compile-time
 * constant, e[i] == ab + ao[i] for integers (wrapping in the element type) and
 * e[i] == ab + ao[i] bytes for pointers.  Address arithmetic built from it is one base
 * per thread and immediate offsets (small LLVM IR, `[%rd+2048]` in the PTX). */
typedef struct TbVal {
    int n;
    LLVMValueRef *e;
    LLVMValueRef ab;
    int64_t *ao;
    /* Limit form of a mask (lim != NULL): e[i] is `lo[i] < lim` (signed, lim's type), one
     * per-thread limit against compile-time constants; tb_val builds e[] at first use,
     * one compare per run of equal lo[] (testing it inside each access's inline PTX
     * instead measured slower on the H200: softmax 4096x16384 3944 against 4033 GB/s). */
    LLVMValueRef lim;
    int64_t *lo;
    LLVMBasicBlockRef mat_bb; /* where e[] of a limit form was built (tb_val) */
} TbVal;

/* How a tile of a given shape and layout is spread over the threads, seen from one
 * thread: the layout algebra's blocked form (ir/layout.h) of a BLOCKED root, possibly
 * with dimensions sliced away.  Each tile dimension d maps to root dimension rdim[d].  A
 * thread owns n[d] positions j along d; element j is at coordinate
 *     ((warp_d * tpw_d + lane_d) * spt_d  mod  shape_d)  +  (j / spt_d) * tile_d + j % spt_d
 * where tile_d = spt_d * tpw_d * wpc_d.  Elements are numbered with order[0] fastest.
 * This is the placement of the layout's linear map `lin` (its register index is the
 * element number), which tb_view checks. */
typedef struct TbView {
    int rank;
    int32_t shape[TIR_MAXRANK];
    int32_t n[TIR_MAXRANK];
    int32_t order[TIR_MAXRANK]; /* tile dims, fastest first */
    int32_t rdim[TIR_MAXRANK];  /* root dim of each tile dim */
    int total;                  /* elements per thread */
    AnaBlocked bk;              /* the blocked digits (analysis_blocked) */
    const TirLinear *lin;
    /* mma layouts (lower_dot.c): 0 blocked; 1 accumulator, 2 operand A, 3 operand B.
     * Warps wm x wn, instruction tiles per warp tm x tn (x tk along K, of ik elements),
     * kw elements of K per 32-bit register; ng: N tiles grouped (tir_layout_mma_grouped:
     * the accumulator's and B's ng consecutive N tiles of a thread at adjacent columns). */
    uint8_t mma;
    int32_t wm, wn, tm, tn, tk, ik, kw, ng;
} TbView;
/* TbView.mma of a view that is the layout algebra's map alone (tb_view_lin_ok): element e
 * is the map's register e; no blocked form, no fragment formula. */
enum { TB_VIEW_LIN = 4 };

typedef struct TbLower {
    LLVMContextRef c;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMBuilderRef eb; /* at the end of the entry block: thread-invariant values
                                      * (after a dot loop of the kernel's body: at that loop's
                                      * exit; lower.c, fresh_ids) */
    LLVMBuilderRef ab; /* in the entry block, for allocas */
    LLVMValueRef fn;
    LLVMBasicBlockRef entry, exit_bb;
    TirModule *m;
    TirFunc *f;
    int cc;
    bool debug;
    TbVal *vals;        /* by TirValue id */
    TirOp **sole_user;  /* by TirValue id: the only op using it, else NULL */
    int *uses;          /* by TirValue id: how many operands name it */
    uint8_t *deferred;  /* by TirValue id: its op is lowered with its chain's store */
    struct TbLdm **ldm; /* by TirValue id: a dot operand ldmatrix reads per K step */
    /* by shared buffer id: its stage's offsets (lower_smem.c ring_stage); ring_seen 1:
     * known, 2: none */
    const AnaStage **ring_stage;
    uint8_t *ring_seen;
    /* Lowering a chain (lower_chain.c) chunk by chunk: while chain_sub > 0, tb_val shows a
     * value of chain_n elements as its elements [chain_lo, chain_lo + chain_sub), and
     * tb_set of chain_sub elements writes them there. */
    int chain_n, chain_lo, chain_sub;
    int nvals;
    LLVMValueRef tid, lane, warp; /* i32 */
    bool after_dot_loop;          /* past a dot loop of the kernel's body (fresh_ids) */
    LLVMValueRef scratch;         /* ptr addrspace(3), sized at the end */
    int scratch_bytes;
    int errors;
    TirDiagFn diag;
    void *ud;
    const TbOptions *opt; /* diag_at for located errors; may be NULL */
    int64_t flops, global_bytes;
    int threads;
    /* types */
    LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, gptr, sptr, voidt;
} TbLower;

LLVMModuleRef tb_lower_kernel(LLVMContextRef c, TirModule *m, TirFunc *kernel, const char *arch, int cc,
                              const TbOptions *opt, TbLowerResult *res, TirDiagFn diag, void *ud);

/* lower_llvm.c: located errors, types, constants, intrinsics, inline PTX, special registers */
void tb_error(TbLower *L, const TirOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
LLVMTypeRef tb_scalar_type(TbLower *L, TirScalar s); /* register type */
LLVMTypeRef tb_mem_type(TbLower *L, TirScalar s);    /* storage type (i1 -> i8) */
LLVMTypeRef tb_elem_type(TbLower *L, TirType t);     /* register type of one element */
LLVMValueRef tb_call_intr(TbLower *L, const char *name, LLVMTypeRef *ovl, int novl, LLVMValueRef *args, int nargs);
LLVMValueRef tb_asm(TbLower *L, LLVMTypeRef ret, const char *text, const char *cons, LLVMValueRef *args, int nargs,
                    bool side_effect);
LLVMValueRef tb_i32(TbLower *L, int64_t v);
LLVMValueRef tb_sreg(TbLower *L, LLVMBuilderRef b, const char *name); /* a special register, built at b */

/* lower_values.c: the value table */
TbVal *tb_val(TbLower *L, const TirValue *v);
void tb_set(TbLower *L, const TirValue *v, int n, LLVMValueRef *e);
void tb_set_affine(TbLower *L, const TirValue *v, int n, LLVMValueRef *e, LLVMValueRef ab, int64_t *ao);
void tb_set_limit(TbLower *L, const TirValue *v, int n, LLVMValueRef lim, int64_t *lo);
/* The affine form of x viewed as n elements: its own, or (a scalar, or all elements the
 * same LLVM value) the value itself with zero offsets.  False when it has none. */
bool tb_affine(TbLower *L, const TbVal *x, int n, LLVMValueRef *ab, const int64_t **ao);
bool tb_uniform(const TbVal *x);                    /* every element is the same LLVM value */
bool tb_lowered(TbLower *L, const TirValue *v);     /* v has its LLVM values already */
TirOp *tb_sole_user(TbLower *L, const TirValue *v); /* the one op using v, or NULL */
LLVMValueRef *tb_elems(TbLower *L, int n);
void tb_count_uses(TbLower *L, TirBlock *blk, int *count); /* operands naming each value, by id */

/* lower_const.c: constant, arange, splat, program_id / num_programs (names: the three
 * special registers), the hint ops (aliases of their operand) */
void tb_lower_constant(TbLower *L, TirOp *op);
void tb_lower_arange(TbLower *L, TirOp *op);
void tb_lower_splat(TbLower *L, TirOp *op);
void tb_lower_sreg(TbLower *L, TirOp *op, const char *const names[3]);
void tb_lower_alias(TbLower *L, TirOp *op);

/* lower_math.c: the math builtins (ir/fmath.c's algorithms); fast: the op's fast=true */
LLVMValueRef tb_math_f32(TbLower *L, TirOpcode code, LLVMValueRef x, bool fast, const TirOp *op);
LLVMValueRef tb_math_f64(TbLower *L, TirOpcode code, LLVMValueRef x, const TirOp *op);
LLVMValueRef tb_math_fexp(TbLower *L, LLVMValueRef x, bool base2); /* fast-mode e^x or 2^x */

/* lower_layout.c: per-thread views of layouts, the scratch buffer, barriers */
bool tb_view(TbLower *L, TirType t, TbView *v, const TirOp *op);
bool tb_view_mma_ok(TbLower *L, TirType t, TbView *v, const TirOp *op);
bool tb_mma_view(TbLower *L, int32_t layout, TirType t, TbView *v, const TirOp *op);
/* tb_view_mma_ok, and also slices of the mma family and mma layouts over a shape their
 * instruction tiles do not fill (a TB_VIEW_LIN view): for the ops that lower from the map
 * (constants, splats, arange, loads, broadcast, expand_dims, convert_layout). */
bool tb_view_lin_ok(TbLower *L, TirType t, TbView *v, const TirOp *op);
bool tb_is_blocked(TbLower *L, TirType t);              /* a blocked root, maybe sliced */
void tb_view_multi(const TbView *v, int e, int32_t *j); /* element index -> j per dim */
int tb_view_index(const TbView *v, const int32_t *j);   /* j per dim -> element index */
void tb_barrier(TbLower *L);
/* The op's shared scratch (its smem_alloc placement, analysis_scratch_bytes of it); the
 * caller writes it, calls tb_barrier, then reads: the one barrier of every scratch op
 * (passes/barriers.c). */
LLVMValueRef tb_scratch(TbLower *L, const TirOp *op);

/* lower_threadmap.c: the only file that turns a thread's view into LLVM values (the
 * numbers come from analysis/).
 * The layout algebra's map of a view ((register, lane, warp) -> tile coordinates), NULL
 * when it has none; and offset maps built from it (the inverse of a shared layout composed
 * with it): a register's constant part, the thread's part (lane and warp bits), the bits
 * that part can set, and a register's constant part joined to it (added where no bit
 * overlaps). */
const TirLinear *tb_view_linear(TbLower *L, TirType t, const TbView *v);
int32_t tb_lin_offset(const TirLinear *m, int32_t r, int32_t ln, int32_t w);
LLVMValueRef tb_lin_thread_offset(TbLower *L, const TirLinear *m);
int32_t tb_lin_thread_bits(const TirLinear *m);
LLVMValueRef tb_lin_offset_plus(TbLower *L, LLVMValueRef t, int32_t tbits, int32_t c);
LLVMValueRef tb_lin_coord(TbLower *L, const TirLinear *m, int e, int d); /* coordinate d of register e */
LLVMValueRef tb_lin_owner(TbLower *L, const TirLinear *m);               /* i1 first holder, NULL: no copies */
LLVMValueRef tb_view_coord(TbLower *L, const TbView *v, int e, int d);   /* coordinate d of element e */
LLVMValueRef tb_view_base(TbLower *L, const TbView *v, int d);           /* thread part of coordinate d */
int32_t tb_view_offset(const TbView *v, int d, int32_t j);               /* constant part */
LLVMValueRef tb_view_owner(TbLower *L, const TbView *v);                 /* i1: the first holder */
LLVMValueRef tb_owner(TbLower *L, const TbView *v); /* any view's owner predicate, NULL: no copies */
bool tb_view_has_copies(const TbView *v);
/* Blocked views along tile dim d: the lane and warp digits (values), elements per thread
 * in one run, warps along d, the lane distance of neighbours along d, and the lanes and
 * warps that hold distinct data (the others hold copies). */
LLVMValueRef tb_view_lane_digit(TbLower *L, const TbView *v, int d);
LLVMValueRef tb_view_warp_digit(TbLower *L, const TbView *v, int d);
int32_t tb_view_spt(const TbView *v, int d);
int32_t tb_view_wpc(const TbView *v, int d);
int32_t tb_view_lane_stride(const TbView *v, int d);
void tb_view_distinct(const TbView *v, int d, int *lanes, int *warps);
LLVMValueRef tb_view_last_lane(TbLower *L, const TbView *v, int d, LLVMValueRef digit, int lanes);
/* mma views: a coordinate, the owner predicate (NULL: no copies), an operand's warp part
 * (rows 16 w_m of A, columns 8 w_n of B) */
LLVMValueRef tb_mma_coord(TbLower *L, const TbView *v, int e, int d);
LLVMValueRef tb_mma_owner(TbLower *L, const TbView *v);
void tb_mma_warp_base(TbLower *L, const TbView *v, LLVMValueRef *b2);
/* A stage's swizzle (its shared layout's: column cdim in vectors of vec elements, vector
 * v of row r at v ^ ((r / per_phase) % max_phase), rows row-major over the other dims):
 * the element offset of coordinates c; and the coordinates an ldmatrix lane addresses. */
typedef struct TbSwizzle {
    int rank, cdim, vec, per_phase, max_phase;
    const int32_t *shape;
} TbSwizzle;
LLVMValueRef tb_stage_offset(TbLower *L, const TbSwizzle *sw, LLVMValueRef *c);
void tb_ldmatrix_coords(TbLower *L, int32_t org[4][2], int n, int rdim, LLVMValueRef *base2, LLVMValueRef *c);

/* lower.c: the dispatcher (one op to its lowering; for/if bodies through it again) */
void tb_lower_op(TbLower *L, TirOp *op);

/* lower_chain.c */
typedef struct TbChain TbChain;
/* The chains of blk's stores that need chunks, their members marked in L->deferred. */
TbChain *tb_find_chains(TbLower *L, TirBlock *blk);
/* Lowers store's chain if it has one (false: it has none). */
bool tb_lower_chain(TbLower *L, TbChain *chains, TirOp *store);

/* lower_elem.c */
void tb_lower_elementwise(TbLower *L, TirOp *op);
LLVMValueRef tb_convert(TbLower *L, LLVMValueRef x, TirScalar from, TirScalar to, const TirOp *op);
LLVMValueRef tb_binop(TbLower *L, TirOpcode code, TirScalar s, LLVMValueRef a, LLVMValueRef b, const TirOp *op);

/* lower_mem.c */
void tb_lower_load(TbLower *L, TirOp *op);
void tb_lower_store(TbLower *L, TirOp *op);
void tb_lower_atomic(TbLower *L, TirOp *op);
/* ptrs[] the element addresses; pb/po (NULL: none) the same as base + byte offsets,
 * which inline PTX uses as `[base+off]`. */
void tb_emit_loads(TbLower *L, TirType et, int n, int v, LLVMValueRef *ptrs, LLVMValueRef pb, const int64_t *po,
                   LLVMValueRef *mask, LLVMValueRef *other, const char *cache, bool widen, LLVMValueRef *out);
void tb_emit_stores(TbLower *L, TirType et, int n, int v, LLVMValueRef *ptrs, LLVMValueRef pb, const int64_t *po,
                    LLVMValueRef *vals, LLVMValueRef *mask, LLVMValueRef owner, const char *cache, bool narrow);
/* A cast f16/bf16 <-> f32 done by its load or store (nothing left to lower). */
bool tb_cast_fused(TbLower *L, TirOp *cast);
/* Elements per access of a load or store of element type et (1: scalar accesses). */
int tb_access_width(TbLower *L, const TirOp *op, const TbView *v, TirType et);

/* lower_shape.c */
void tb_lower_permute(TbLower *L, TirOp *op); /* reshape, trans */
void tb_lower_cumsum(TbLower *L, TirOp *op);
void tb_lower_tensor_desc(TbLower *L, TirOp *op);
void tb_lower_tload(TbLower *L, TirOp *op);
void tb_lower_tstore(TbLower *L, TirOp *op);
void tb_lower_print(TbLower *L, TirOp *op);
void tb_lower_assert(TbLower *L, TirOp *op);
LLVMValueRef tb_shfl(TbLower *L, const char *kind, LLVMValueRef x, LLVMValueRef lane_or_delta, int c);

/* lower_dot.c */
void tb_lower_dot(TbLower *L, TirOp *op);

/* lower_smem.c */
void tb_lower_smem_alloc(TbLower *L, TirOp *op);
void tb_lower_smem_store(TbLower *L, TirOp *op);
void tb_lower_smem_load(TbLower *L, TirOp *op);
typedef struct TbLdm TbLdm;
/* Emits K step ki of a dot operand whose ldmatrix waits for its dot (no-op otherwise). */
void tb_smem_kstep(TbLower *L, const TirValue *v, int ki);
void tb_lower_async_copy(TbLower *L, TirOp *op);
void tb_lower_async_commit(TbLower *L, TirOp *op);
void tb_lower_async_wait(TbLower *L, TirOp *op);

/* lower_reduce.c */
void tb_lower_reduce(TbLower *L, TirOp *op);
void tb_lower_convert_layout(TbLower *L, TirOp *op);
void tb_lower_broadcast(TbLower *L, TirOp *op);
void tb_lower_expand_dims(TbLower *L, TirOp *op);

#endif
