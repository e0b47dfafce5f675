/* Shared buffers: smem_alloc, smem_store / smem_load, async_copy / commit / wait.
 *
 * A buffer is a byte range of the kernel's shared memory (its smem_alloc's placement) of
 * `stages` stages.  A stage of shape [.., C] with its layout's order[0] = cdim holds rows
 * (every other dimension, row-major) of 16-byte vectors along cdim; vector v of row r sits
 * at v ^ ((r / per_phase) % max_phase): the XOR swizzle that keeps both the copies (a
 * warp writing whole rows) and ldmatrix (8 rows of one 16-byte column) free of bank
 * conflicts.  16-bit operands of dot come out through ldmatrix (.trans where the stored
 * rows run along K's partner), K step by K step; other register tiles go in and out with
 * addresses from the layout algebra (ring_map), tf32, i8 and f8 operands K step by K step
 * too; element by element only where the maps do not apply. */
#include "tb_internal.h"
#include "layout.h"

#include <string.h>

typedef struct {
    int rank, cdim;
    int32_t shape[TIR_MAXRANK];
    int vec, per_phase, max_phase;
    int eb;
    int64_t numel;
    LLVMValueRef base; /* ptr addrspace(3) of stage 0 */
} Ring;

/* Address classes of one operand's ldmatrix: two ldmatrix whose element offsets differ by
 * the same constant in every lane of every warp share one address register, the other
 * one is that register plus an immediate.  Tiles that move by whole swizzle periods
 * (A's M tiles, B's K steps) fall in one class; the swizzle makes A's K steps and B's N
 * tiles classes of their own.  128x256x64, 8 warps: 8 address registers instead of 32,
 * each advanced to the stage once per iteration. */
enum { TB_LDM_CLASSES = 16, TB_LDM_THREADS = 32 * 16 };
typedef struct {
    int32_t *off;      /* the representative's offset per (warp, lane) */
    LLVMValueRef addr; /* its address in the stage */
} LdmClass;

/* A register tile's accesses to a stage, from the layout algebra: the stage's layout
 * inverted and composed with the tile's map gives (register, lane, warp) -> element
 * offset, the thread's part XOR the register's constant part c.  The bits of c that the
 * thread part can also set pick an address register (one per distinct value: thread part
 * XOR those bits, plus the stage); the rest are disjoint from it, so they are added, an
 * immediate of the access.  Element by element (elem_addr), each register had an address
 * of its own, loop-invariant and live through the K loop: the register-staged stores of a
 * generic-stride 128x256x64 GEMM (8 warps) held 96 of them.  vec registers go in one
 * access where they are consecutive in the stage. */
enum { RING_CLASSES = 32, KSTEPS_MAX = 64 };
typedef struct {
    TirLinear map;
    int32_t tbits;
    int vec, ncls;
    int tvec; /* vec 1, an operand's K steps: tvec tiles in one access */
    int32_t hi[RING_CLASSES];
    LLVMValueRef addr[RING_CLASSES]; /* the stage + (thread part ^ hi) */
    LLVMValueRef t, stage_bytes;
} RingMap;

/* A dot operand read K step by K step: through ldmatrix (lower_ldmatrix), or through the
 * ring map's plain loads (mapped: tf32, i8 and f8 operands). */
struct TbLdm {
    Ring ring;
    TbView view;
    const AnaStage *st; /* the stage's offsets, NULL: none */
    AnaThreadMap tm;    /* the operand's map */
    bool mapped;
    RingMap map;
    LLVMTypeRef mt; /* mapped: the loaded element type */
    LLVMValueRef stage, base2[2];
    TirScalar elem;
    LLVMValueRef *e;          /* the value's elements, filled step by step */
    uint8_t done[KSTEPS_MAX]; /* K steps emitted */
    int ncls;
    LdmClass *cls; /* [TB_LDM_CLASSES] */
};

static bool ring_of(TbLower *L, const TirOp *op, Ring *R) {
    TirValue *buf = op->opnd[0];
    TirType t = buf->ty;
    memset(R, 0, sizeof *R);
    if (!tir_type_is_smem(t) || !tir_layout_shared_params(L->m, t.layout, &R->vec, &R->per_phase, &R->max_phase)) {
        tb_error(L, op, "a shared buffer without a shared layout: run the 'layout' and 'software_pipeline' passes");
        return false;
    }
    int32_t order[TIR_MAXRANK];
    tir_layout_order(L->m, t.layout, order);
    R->rank = t.rank - 1;
    for (int d = 0; d < R->rank; d++)
        R->shape[d] = t.shape[1 + d];
    R->cdim = order[0];
    if (R->vec < 1)
        R->vec = 1;
    if (R->per_phase < 1)
        R->per_phase = 1;
    if (R->max_phase < 1)
        R->max_phase = 1;
    R->eb = tir_scalar_bytes((TirScalar)t.elem);
    R->numel = tir_type_numel(tir_smem_stage_type(t));
    R->base = tb_val(L, buf)->e[0];
    return true;
}

/* The address of element offset `off` of stage `stage`. */
static LLVMValueRef ring_addr(TbLower *L, const Ring *R, LLVMValueRef stage, LLVMValueRef off) {
    /* the thread's loop-invariant address first, then the stage: one add per access in
     * the loop (scaling stage * numel + off instead cost a shift and two adds) */
    LLVMValueRef bytes = LLVMBuildNUWMul(L->b, off, tb_i32(L, R->eb), "");
    LLVMValueRef p = LLVMBuildGEP2(L->b, L->i8, R->base, &bytes, 1, "");
    LLVMValueRef sb = LLVMBuildNUWMul(L->b, stage, tb_i32(L, (int32_t)(R->numel * R->eb)), "");
    return LLVMBuildGEP2(L->b, L->i8, p, &sb, 1, "");
}

static LLVMValueRef ring_offset(TbLower *L, const Ring *R, LLVMValueRef *c) {
    TbSwizzle sw = {R->rank, R->cdim, R->vec, R->per_phase, R->max_phase, R->shape};
    return tb_stage_offset(L, &sw, c);
}

static LLVMValueRef elem_addr(TbLower *L, const Ring *R, const TbView *v, int e, LLVMValueRef stage) {
    LLVMValueRef c[TIR_MAXRANK];
    for (int d = 0; d < v->rank; d++)
        c[d] = tb_view_coord(L, v, e, d);
    return ring_addr(L, R, stage, ring_offset(L, R, c));
}

/* The stage layout's offsets (analysis_stage: the inverse of its map), once per buffer;
 * NULL where it has none (stages over 64 Ki elements are addressed element by element). */
static const AnaStage *ring_stage(TbLower *L, const TirOp *op, const Ring *R) {
    int id = op->opnd[0]->id;
    bool cache = id >= 0 && id < L->nvals;
    if (cache && L->ring_seen[id])
        return L->ring_stage[id];
    const TirLinear *s =
        R->numel > (1 << 16) ? NULL : tir_layout_linear(L->m, op->opnd[0]->ty.layout, R->rank, R->shape, NULL);
    AnaStage *st = tir_alloc(L->m->arena, sizeof *st);
    if (!s || !analysis_stage(s, st))
        st = NULL;
    if (cache) {
        L->ring_seen[id] = st ? 1 : 2;
        L->ring_stage[id] = st;
    }
    return st;
}

void tb_lower_smem_alloc(TbLower *L, TirOp *op) {
    LLVMValueRef *p = tb_elems(L, 1);
    p[0] = tb_scratch(L, op);
    tb_set(L, op->res[0], 1, p);
}

/* Registers of an operand's K step: per instruction tile (A's M tiles, B's N tiles) a run
 * of `per` consecutive registers (the operand's register order, lower_dot.c). */
static int kstep_per(const TbView *v) {
    return (v->mma == 2 ? 4 : 2) * v->kw;
}

/* Where an operand's elements are not consecutive along its registers (8-bit B stored
 * N-contiguous: a register's 4 bytes are 4 rows apart) but the same register of w
 * consecutive tiles is (B with its N tiles grouped, tir_layout_mma_grouped): w, the
 * tiles one access reads (a 4x4 byte transpose then builds the registers); else 1. */
static int tile_vec(const RingMap *A, const Ring *R, const TbView *v) {
    int tiles = v->mma == 2 ? v->tm : v->tn, stride = v->tk * kstep_per(v);
    for (int w = 4 / R->eb; w > 1; w /= 2) {
        bool ok = tiles % w == 0 && !(A->tbits & (w - 1)) && w <= R->vec;
        for (int t = 0; ok && t < tiles; t += w)
            for (int r = t * stride; ok && r < (t + 1) * stride; r++) {
                int32_t c0 = tb_lin_offset(&A->map, r, 0, 0);
                ok = c0 % w == 0;
                for (int q = 1; ok && q < w; q++)
                    ok = tb_lin_offset(&A->map, r + q * stride, 0, 0) == c0 + q;
            }
        if (ok)
            return w;
    }
    return 1;
}

static bool ring_map(TbLower *L, const TirOp *op, const Ring *R, TirType t, const TbView *v, LLVMValueRef stage,
                     RingMap *A) {
    memset(A, 0, sizeof *A);
    const TirLinear *reg = tb_view_linear(L, t, v);
    const AnaStage *st = reg ? ring_stage(L, op, R) : NULL;
    if (!st || !analysis_stage_access(st, reg, &A->map))
        return false;
    A->tbits = tb_lin_thread_bits(&A->map);
    for (int i = 0; i < v->total; i++) {
        int32_t hi = tb_lin_offset(&A->map, i, 0, 0) & A->tbits, k = 0;
        while (k < A->ncls && A->hi[k] != hi)
            k++;
        if (k == RING_CLASSES)
            return false;
        if (k == A->ncls)
            A->hi[A->ncls++] = hi;
    }
    A->vec = 1;
    for (int w = 16 / R->eb; w > 1; w /= 2) {
        bool ok = v->total % w == 0 && !(A->tbits & (w - 1)) && w <= R->vec;
        for (int r0 = 0; ok && r0 < v->total; r0 += w) {
            int32_t c0 = tb_lin_offset(&A->map, r0, 0, 0);
            ok = c0 % w == 0;
            for (int i = 1; ok && i < w; i++)
                ok = tb_lin_offset(&A->map, r0 + i, 0, 0) == c0 + i;
        }
        if (ok) {
            A->vec = w;
            break;
        }
    }
    A->tvec = A->vec == 1 && v->mma >= 2 ? tile_vec(A, R, v) : 1;
    A->t = tb_lin_thread_offset(L, &A->map);
    A->stage_bytes = LLVMBuildNUWMul(L->b, stage, tb_i32(L, (int32_t)(R->numel * R->eb)), "");
    for (int k = 0; k < A->ncls; k++) {
        LLVMValueRef off = A->hi[k] ? LLVMBuildXor(L->b, A->t, tb_i32(L, A->hi[k]), "") : A->t;
        LLVMValueRef bytes = LLVMBuildNUWMul(L->b, off, tb_i32(L, R->eb), "");
        LLVMValueRef p = LLVMBuildGEP2(L->b, L->i8, R->base, &bytes, 1, "");
        /* the stage in the class's register, which every access of the class uses: LICM
         * moves a constant offset out of the loop only past a one-use GEP (hoistGEP), so
         * the immediates stay immediates */
        A->addr[k] = LLVMBuildGEP2(L->b, L->i8, p, &A->stage_bytes, 1, "");
    }
    return true;
}

/* The address of register r's access (the first of its vector). */
static LLVMValueRef ring_map_addr(TbLower *L, const Ring *R, const RingMap *A, int r) {
    int32_t c = tb_lin_offset(&A->map, r, 0, 0), hi = c & A->tbits;
    int k = 0;
    while (A->hi[k] != hi)
        k++;
    int32_t lo = c & ~A->tbits;
    if (!lo)
        return A->addr[k];
    LLVMValueRef bytes = tb_i32(L, lo * R->eb);
    return LLVMBuildGEP2(L->b, L->i8, A->addr[k], &bytes, 1, "");
}

void tb_lower_smem_store(TbLower *L, TirOp *op) {
    Ring R;
    TbView v;
    if (!ring_of(L, op, &R) || !tb_view_mma_ok(L, op->opnd[2]->ty, &v, op))
        return;
    LLVMValueRef stage = tb_val(L, op->opnd[1])->e[0];
    TbVal *x = tb_val(L, op->opnd[2]);
    bool is_bool = op->opnd[2]->ty.elem == TIR_I1;
    RingMap A;
    if (ring_map(L, op, &R, op->opnd[2]->ty, &v, stage, &A)) {
        LLVMTypeRef mt = is_bool ? L->i8 : tb_elem_type(L, tir_elem_type(op->opnd[2]->ty));
        for (int r0 = 0; r0 < v.total; r0 += A.vec) {
            LLVMValueRef val = A.vec > 1 ? LLVMGetUndef(LLVMVectorType(mt, (unsigned)A.vec)) : NULL;
            for (int i = 0; i < A.vec; i++) {
                LLVMValueRef e = is_bool ? LLVMBuildZExt(L->b, x->e[r0 + i], L->i8, "") : x->e[r0 + i];
                val = A.vec > 1 ? LLVMBuildInsertElement(L->b, val, e, tb_i32(L, i), "") : e;
            }
            LLVMValueRef st = LLVMBuildStore(L->b, val, ring_map_addr(L, &R, &A, r0));
            LLVMSetAlignment(st, (unsigned)(R.eb * A.vec));
        }
        return;
    }
    for (int e = 0; e < v.total; e++) {
        LLVMValueRef val = is_bool ? LLVMBuildZExt(L->b, x->e[e], L->i8, "") : x->e[e];
        LLVMValueRef st = LLVMBuildStore(L->b, val, elem_addr(L, &R, &v, e, stage));
        LLVMSetAlignment(st, (unsigned)R.eb);
    }
}

/* ---- ldmatrix ---- */

/* The element offset an ldmatrix lane of a warp reads (ldmatrix below, numerically):
 * lane l gives the address of row l % 8 of matrix l / 8, at the operand's warp part (its
 * map's, analysis_thread_base) plus the matrix's origin. */
static int32_t ldmatrix_lane_offset(const TbLdm *dl, int32_t org[4][2], int n, int lane, int warp) {
    int j = lane >> 3;
    if (n == 2)
        j &= 1;
    int32_t b2[TIR_MAXRANK], c[TIR_MAXRANK] = {0};
    analysis_thread_base(&dl->tm, 0, warp, b2);
    int rdim = 1 - dl->ring.cdim;
    for (int d = 0; d < 2; d++)
        c[d] = org[j][d] + b2[d] + (d == rdim ? (lane & 7) : 0);
    return analysis_stage_offset(dl->st, c);
}

/* One ldmatrix (x4, or x2 for a lone B tile) of the 8x8 matrices whose origins are
 * org[j] (tile coordinates), rows running along the stage's non-contiguous dim. */
static void ldmatrix(TbLower *L, TbLdm *dl, int32_t org[4][2], int n, bool trans, LLVMValueRef *out) {
    const Ring *R = &dl->ring;
    /* its class: the same offsets up to a constant in every thread */
    int nthr = 32 * dl->view.wm * dl->view.wn, k = dl->ncls;
    int32_t *off = NULL, delta = 0;
    if (nthr <= TB_LDM_THREADS && dl->st) {
        off = tir_alloc(L->m->arena, sizeof(int32_t) * (size_t)nthr);
        for (int t = 0; t < nthr; t++)
            off[t] = ldmatrix_lane_offset(dl, org, n, t & 31, t >> 5);
        for (k = 0; k < dl->ncls; k++) {
            delta = off[0] - dl->cls[k].off[0];
            int t = 1;
            while (t < nthr && off[t] - dl->cls[k].off[t] == delta)
                t++;
            if (t == nthr)
                break;
        }
    }
    LLVMValueRef addr;
    if (k < dl->ncls) {
        LLVMValueRef db = tb_i32(L, delta * R->eb);
        addr = delta ? LLVMBuildGEP2(L->b, L->i8, dl->cls[k].addr, &db, 1, "") : dl->cls[k].addr;
    } else {
        LLVMValueRef c[2];
        tb_ldmatrix_coords(L, org, n, 1 - R->cdim, dl->base2, c);
        addr = ring_addr(L, R, dl->stage, ring_offset(L, R, c));
        if (off && dl->ncls < TB_LDM_CLASSES) {
            dl->cls[dl->ncls].off = off;
            dl->cls[dl->ncls++].addr = addr;
        }
    }
    char name[96];
    snprintf(name, sizeof name, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x%d%s.b16", n, trans ? ".trans" : "");
    LLVMTypeRef pt = LLVMTypeOf(addr); /* overloaded on the pointer type */
    LLVMValueRef r = tb_call_intr(L, name, &pt, 1, &addr, 1);
    for (int q = 0; q < n; q++)
        out[q] = LLVMBuildExtractValue(L->b, r, (unsigned)q, "");
}

/* Splits a 32-bit register into its two 16-bit elements of type t. */
static void split2(TbLower *L, LLVMValueRef w, LLVMTypeRef t, LLVMValueRef *out) {
    LLVMValueRef v = LLVMBuildBitCast(L->b, w, LLVMVectorType(t, 2), "");
    out[0] = LLVMBuildExtractElement(L->b, v, tb_i32(L, 0), "");
    out[1] = LLVMBuildExtractElement(L->b, v, tb_i32(L, 1), "");
}

/* Whether the ldmatrix path can read this operand: 16-bit elements, 16-byte swizzle
 * vectors, a 2-D stage; or 8-bit elements stored K-contiguous (ldmatrix without .trans:
 * an 8x8 matrix of b16 is 8 rows of 16 bytes, and thread t's word is row t/4, bytes
 * 4 (t%4)..+3, exactly an m16n8k32 register; .trans would move byte pairs, not bytes). */
static bool ldmatrix_ok(TirOp *op, const Ring *R, const TbView *v) {
    TirScalar s = (TirScalar)op->res[0]->ty.elem;
    if (R->rank != 2 || v->ng != 1)
        return false;
    if (tir_scalar_bits(s) == 8 && R->eb == 1)
        return v->kw == 4 && R->vec == 16 && R->cdim == (v->mma == 2 ? 1 : 0);
    return (s == TIR_F16 || s == TIR_BF16) && v->kw == 2 && R->vec == 8;
}

/* A 32-bit register as its four 8-bit elements (pack_i32 in lower_dot.c sees them whole). */
static void split4(TbLower *L, LLVMValueRef w, LLVMValueRef *out) {
    LLVMValueRef v = LLVMBuildBitCast(L->b, w, LLVMVectorType(L->i8, 4), "");
    for (int i = 0; i < 4; i++)
        out[i] = LLVMBuildExtractElement(L->b, v, tb_i32(L, i), "");
}

/* ldmatrix_kstep for 8-bit operands: matrix j of A's M tile is rows 8 (j & 1), K 16 (j >> 1)
 * (registers a0..a3), of B's N tile pair K 16 (j & 1) of tile ni + (j >> 1) (b0, b1 of each). */
static void ldmatrix_kstep8(TbLower *L, TbLdm *d, int ki) {
    const TbView *v = &d->view;
    LLVMValueRef *e = d->e;
    if (v->mma == 2) {
        for (int mi = 0; mi < v->tm; mi++) {
            int32_t org[4][2];
            for (int j = 0; j < 4; j++) {
                org[j][0] = mi * 16 * v->wm + 8 * (j & 1);
                org[j][1] = ki * 32 + 16 * (j >> 1);
            }
            LLVMValueRef r[4];
            ldmatrix(L, d, org, 4, false, r);
            for (int k = 0; k < 4; k++)
                split4(L, r[k], e + (mi * v->tk + ki) * 16 + 4 * k);
        }
        return;
    }
    for (int ni = 0; ni < v->tn; ni += 2) {
        int n = ni + 1 < v->tn ? 4 : 2;
        int32_t org[4][2];
        for (int j = 0; j < 4; j++) {
            org[j][0] = ki * 32 + 16 * (j & 1);
            org[j][1] = (ni + (j >> 1)) * 8 * v->wn;
        }
        LLVMValueRef r[4];
        ldmatrix(L, d, org, n, false, r);
        for (int k = 0; k < n; k++)
            split4(L, r[k], e + ((ni + k / 2) * v->tk + ki) * 8 + 4 * (k % 2));
    }
}

/* The fragments of K step ki (all M tiles of A, or all N tiles of B) into e. */
static void ldmatrix_kstep(TbLower *L, TbLdm *d, int ki) {
    const Ring *R = &d->ring;
    const TbView *v = &d->view;
    bool A = v->mma == 2;
    bool trans = A ? R->cdim == 0 : R->cdim == 1;
    if (R->eb == 1) {
        ldmatrix_kstep8(L, d, ki);
        return;
    }
    LLVMTypeRef et = d->elem == TIR_F16 ? L->f16 : L->bf16;
    LLVMValueRef *e = d->e;
    if (A) {
        for (int mi = 0; mi < v->tm; mi++) {
            int32_t org[4][2];
            for (int j = 0; j < 4; j++) {
                org[j][0] = mi * 16 * v->wm + 8 * (j & 1);
                org[j][1] = ki * 16 + 8 * (j >> 1);
            }
            LLVMValueRef r[4];
            ldmatrix(L, d, org, 4, trans, r);
            LLVMValueRef *o = e + (mi * v->tk + ki) * 8;
            for (int k = 0; k < 4; k++)
                split2(L, r[k], et, o + 2 * k);
        }
        return;
    }
    for (int ni = 0; ni < v->tn; ni += 2) {
        int n = ni + 1 < v->tn ? 4 : 2;
        int32_t org[4][2];
        for (int j = 0; j < 4; j++) {
            org[j][0] = ki * 16 + 8 * (j & 1);
            org[j][1] = (ni + (j >> 1)) * 8 * v->wn;
        }
        LLVMValueRef r[4];
        ldmatrix(L, d, org, n, trans, r);
        for (int k = 0; k < n; k++) {
            int t = ni + k / 2; /* which n tile, then b0 / b1 */
            split2(L, r[k], et, e + (t * v->tk + ki) * 4 + 2 * (k % 2));
        }
    }
}

/* Whether the load can wait for its dot: the dot is its only user, in the same block, and
 * nothing between them but other shared loads and arithmetic (no store, copy, wait or
 * barrier that would change what the buffer holds). */
static bool can_defer(TbLower *L, TirOp *op) {
    TirOp *u = tb_sole_user(L, op->res[0]);
    if (!u || u->code != TIR_OP_DOT || u->parent != op->parent)
        return false;
    for (TirOp *x = op->next; x && x != u; x = x->next) {
        unsigned t = tir_op_info[x->code].traits;
        if (x->code != TIR_OP_SMEM_LOAD && x->code != TIR_OP_CONSTANT && !(t & TIR_T_ELEMENTWISE))
            return false;
        if (x->code == TIR_OP_SMEM_LOAD && tb_sole_user(L, x->res[0]) != u)
            return false;
    }
    return true;
}

/* A dot operand read K step by K step from ring R: its result's elements, empty until
 * each step fills them (ldmatrix_kstep, mapped_kstep). */
static TbLdm *ldm_new(TbLower *L, TirOp *op, const Ring *R, const TbView *v) {
    TbLdm *d = tir_alloc(L->m->arena, sizeof *d);
    memset(d, 0, sizeof *d);
    d->ring = *R;
    d->view = *v;
    d->st = ring_stage(L, op, R);
    analysis_thread_map(v->lin, &d->tm);
    LLVMValueRef *e = tb_elems(L, v->total);
    memset(e, 0, (size_t)v->total * sizeof *e);
    tb_set(L, op->res[0], v->total, e);
    d->e = tb_val(L, op->res[0])->e;
    return d;
}

static bool lower_ldmatrix(TbLower *L, TirOp *op, const Ring *R, const TbView *v, LLVMValueRef stage) {
    if (!ldmatrix_ok(op, R, v))
        return false;
    TbLdm *d = ldm_new(L, op, R, v);
    d->stage = stage;
    d->elem = (TirScalar)op->res[0]->ty.elem;
    tb_mma_warp_base(L, v, d->base2);
    d->cls = tir_alloc(L->m->arena, sizeof(LdmClass) * TB_LDM_CLASSES);
    if (v->tk <= KSTEPS_MAX && can_defer(L, op)) {
        /* the dot asks for each K step just before its mmas (tb_smem_kstep): the
         * fragments of one step live in registers, not the whole K tile's */
        L->ldm[op->res[0]->id] = d;
        return true;
    }
    for (int ki = 0; ki < v->tk; ki++)
        ldmatrix_kstep(L, d, ki);
    return true;
}

/* Registers r.. r + A->vec - 1 of a tile from the stage, one access (ring_map_addr) of
 * elements of type mt. */
static void mapped_load(TbLower *L, const Ring *R, RingMap *A, LLVMTypeRef mt, int r, LLVMValueRef *e) {
    int w = A->vec;
    LLVMValueRef x = LLVMBuildLoad2(L->b, w > 1 ? LLVMVectorType(mt, (unsigned)w) : mt, ring_map_addr(L, R, A, r), "");
    LLVMSetAlignment(x, (unsigned)(R->eb * w));
    for (int i = 0; i < w; i++)
        e[r + i] = w > 1 ? LLVMBuildExtractElement(L->b, x, tb_i32(L, i), "") : x;
}

static LLVMValueRef shuffle4(TbLower *L, LLVMValueRef a, LLVMValueRef b, const int *m) {
    LLVMValueRef k[4];
    for (int i = 0; i < 4; i++)
        k[i] = tb_i32(L, m[i]);
    return LLVMBuildShuffleVector(L->b, a, b, LLVMConstVector(k, 4), "");
}

/* x[j][q] -> x[q][j] for four <4 x i8>: eight two-input byte shuffles (prmt), pairs
 * first ({x0[0], x1[0], x0[1], x1[1]}), then pairs of pairs. */
static void transpose4x4(TbLower *L, LLVMValueRef *x) {
    static const int lo[4] = {0, 4, 1, 5}, hi[4] = {2, 6, 3, 7}, p0[4] = {0, 1, 4, 5}, p1[4] = {2, 3, 6, 7};
    LLVMValueRef a0 = shuffle4(L, x[0], x[1], lo), a1 = shuffle4(L, x[0], x[1], hi);
    LLVMValueRef b0 = shuffle4(L, x[2], x[3], lo), b1 = shuffle4(L, x[2], x[3], hi);
    x[0] = shuffle4(L, a0, b0, p0);
    x[1] = shuffle4(L, a0, b0, p1);
    x[2] = shuffle4(L, a1, b1, p0);
    x[3] = shuffle4(L, a1, b1, p1);
}

/* A mapped operand's loads of K step ki (vectors of map.vec registers). */
static void mapped_kstep(TbLower *L, TbLdm *d, int ki) {
    const TbView *v = &d->view;
    int per = kstep_per(v), tiles = v->mma == 2 ? v->tm : v->tn, tw = d->map.tvec;
    if (tw > 1) {
        /* register r of tiles t..t+tw-1 in one access: element q of it is tile t+q's */
        int stride = v->tk * per;
        LLVMTypeRef vt = LLVMVectorType(d->mt, (unsigned)tw);
        for (int t = 0; t < tiles; t += tw)
            for (int r = (t * v->tk + ki) * per; r < (t * v->tk + ki + 1) * per; r += tw) {
                LLVMValueRef x[4];
                for (int j = 0; j < tw; j++) {
                    x[j] = LLVMBuildLoad2(L->b, vt, ring_map_addr(L, &d->ring, &d->map, r + j), "");
                    LLVMSetAlignment(x[j], (unsigned)(d->ring.eb * tw));
                }
                /* x[j] holds element r + j of tiles t..t+tw-1; tile t+q's register (its
                 * elements r..r+tw-1, one per x) is column q of that tw x tw block */
                if (tw == 4 && v->kw == 4)
                    transpose4x4(L, x);
                for (int j = 0; j < tw; j++)
                    for (int q = 0; q < tw; q++)
                        d->e[r + (tw == 4 && v->kw == 4 ? q + j * stride : j + q * stride)] =
                            LLVMBuildExtractElement(L->b, x[j], tb_i32(L, q), "");
            }
        return;
    }
    for (int t = 0; t < tiles; t++)
        for (int r = (t * v->tk + ki) * per; r < (t * v->tk + ki + 1) * per; r += d->map.vec)
            mapped_load(L, &d->ring, &d->map, d->mt, r, d->e);
}

void tb_smem_kstep(TbLower *L, const TirValue *v, int ki) {
    if (!v || v->id < 0 || v->id >= L->nvals || !L->ldm[v->id])
        return;
    TbLdm *d = L->ldm[v->id];
    if (ki < 0 || ki >= d->view.tk || d->done[ki])
        return;
    d->done[ki] = 1;
    if (d->mapped)
        mapped_kstep(L, d, ki);
    else
        ldmatrix_kstep(L, d, ki);
}

void tb_lower_smem_load(TbLower *L, TirOp *op) {
    Ring R;
    TbView v;
    if (!ring_of(L, op, &R) || !tb_view_mma_ok(L, op->res[0]->ty, &v, op))
        return;
    LLVMValueRef stage = tb_val(L, op->opnd[1])->e[0];
    if (v.mma >= 2 && lower_ldmatrix(L, op, &R, &v, stage))
        return;
    TirType et = tir_elem_type(op->res[0]->ty);
    bool is_bool = et.elem == TIR_I1;
    LLVMTypeRef mt = is_bool ? L->i8 : tb_elem_type(L, et);
    LLVMValueRef *e = tb_elems(L, v.total);
    RingMap A;
    if (ring_map(L, op, &R, op->res[0]->ty, &v, stage, &A)) {
        if (v.mma >= 2 && !is_bool && v.tk <= KSTEPS_MAX && kstep_per(&v) % A.vec == 0 && can_defer(L, op)) {
            /* an operand of its dot alone: read K step by K step, like ldmatrix's */
            TbLdm *d = ldm_new(L, op, &R, &v);
            d->mapped = true;
            d->map = A;
            d->mt = mt;
            L->ldm[op->res[0]->id] = d;
            return;
        }
        for (int r0 = 0; r0 < v.total; r0 += A.vec)
            mapped_load(L, &R, &A, mt, r0, e);
        for (int i = 0; is_bool && i < v.total; i++)
            e[i] = LLVMBuildICmp(L->b, LLVMIntNE, e[i], LLVMConstNull(L->i8), "");
        tb_set(L, op->res[0], v.total, e);
        return;
    }
    for (int i = 0; i < v.total; i++) {
        LLVMValueRef x = LLVMBuildLoad2(L->b, mt, elem_addr(L, &R, &v, i, stage), "");
        LLVMSetAlignment(x, (unsigned)R.eb);
        e[i] = is_bool ? LLVMBuildICmp(L->b, LLVMIntNE, x, LLVMConstNull(L->i8), "") : x;
    }
    tb_set(L, op->res[0], v.total, e);
}

/* ---- async copies ---- */

void tb_lower_async_copy(TbLower *L, TirOp *op) {
    Ring R;
    TbView v;
    if (!ring_of(L, op, &R) || !tb_view_mma_ok(L, op->opnd[2]->ty, &v, op))
        return;
    LLVMValueRef stage = tb_val(L, op->opnd[1])->e[0];
    TbVal *P = tb_val(L, op->opnd[2]);
    TbVal *M = op->nopnd > 3 ? tb_val(L, op->opnd[3]) : NULL;
    int vec = op->attr.i[1] > 1 ? (int)op->attr.i[1] : 1;
    int bytes = vec * R.eb;
    bool contiguous = !v.mma && v.order[0] == R.cdim && v.n[R.cdim] % vec == 0;
    if (!contiguous || (bytes != 4 && bytes != 8 && bytes != 16) || vec > R.vec) {
        tb_error(L, op,
                 "async_copy of %d-byte vectors (elements %d, layout order %d): cp.async copies 4, 8 or 16 "
                 "contiguous bytes",
                 bytes, vec, v.order[0]);
        return;
    }
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.cp.async.%s.shared.global.%d.s", bytes == 16 ? "cg" : "ca", bytes);
    /* the destinations through the ring map's address classes where it applies: element
     * by element, each copy of a thread kept its own loop-invariant address (the 48 4-byte
     * copies a stage of a strided tf32 GEMM, 64x128x32 on 4 warps: 31 registers) */
    RingMap A;
    bool mapped = ring_map(L, op, &R, op->opnd[2]->ty, &v, stage, &A);
    for (int e = 0; e < v.total; e += vec) {
        LLVMValueRef dst = mapped ? ring_map_addr(L, &R, &A, e) : elem_addr(L, &R, &v, e, stage);
        LLVMValueRef src = P->e[e];
        LLVMValueRef size = tb_i32(L, bytes);
        if (M)
            size = LLVMBuildSelect(L->b, M->e[e], size, tb_i32(L, 0), "");
        LLVMValueRef args[3] = {dst, src, size};
        tb_call_intr(L, name, NULL, 0, args, 3);
    }
    L->global_bytes += tir_type_numel(tir_smem_stage_type(op->opnd[0]->ty)) * R.eb;
}

void tb_lower_async_commit(TbLower *L, TirOp *op) {
    (void)op;
    tb_call_intr(L, "llvm.nvvm.cp.async.commit.group", NULL, 0, NULL, 0);
}

void tb_lower_async_wait(TbLower *L, TirOp *op) {
    LLVMValueRef n = tb_i32(L, op->attr.i[0]);
    tb_call_intr(L, "llvm.nvvm.cp.async.wait.group", NULL, 0, &n, 1);
}
