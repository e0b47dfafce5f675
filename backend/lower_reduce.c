/* Ops that move data between threads or reshape a thread's view: reductions (in the
 * thread, then warp shuffles, then shared memory across warps), layout conversions
 * through shared memory, broadcast and expand_dims. */
#include "tb_internal.h"

#include <string.h>

/* ---- warp shuffles ---- */

static LLVMValueRef shfl32(TbLower *L, LLVMValueRef x, int lane_mask) {
    LLVMValueRef args[4] = {tb_i32(L, -1), x, tb_i32(L, lane_mask), tb_i32(L, 0x1f)};
    return tb_call_intr(L, "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0, args, 4);
}

static LLVMValueRef shfl_bfly(TbLower *L, LLVMValueRef x, int lane_mask) {
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMTypeKind k = LLVMGetTypeKind(t);
    if (k == LLVMFloatTypeKind)
        return LLVMBuildBitCast(L->b, shfl32(L, LLVMBuildBitCast(L->b, x, L->i32, ""), lane_mask), t, "");
    if (k == LLVMDoubleTypeKind || (k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) == 64)) {
        LLVMValueRef i = LLVMBuildBitCast(L->b, x, L->i64, "");
        LLVMValueRef lo = shfl32(L, LLVMBuildTrunc(L->b, i, L->i32, ""), lane_mask);
        LLVMValueRef hi = shfl32(
            L, LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, i, LLVMConstInt(L->i64, 32, 0), ""), L->i32, ""), lane_mask);
        LLVMValueRef r =
            LLVMBuildOr(L->b, LLVMBuildZExt(L->b, lo, L->i64, ""),
                        LLVMBuildShl(L->b, LLVMBuildZExt(L->b, hi, L->i64, ""), LLVMConstInt(L->i64, 32, 0), ""), "");
        return LLVMBuildBitCast(L->b, r, t, "");
    }
    if (k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) < 32)
        return LLVMBuildTrunc(L->b, shfl32(L, LLVMBuildZExt(L->b, x, L->i32, ""), lane_mask), t, "");
    return shfl32(L, x, lane_mask);
}

/* ---- reductions ---- */

typedef struct {
    LLVMValueRef v, i; /* value, and index for argmax/argmin */
} Acc;

typedef struct {
    TirOpcode code;
    TirScalar s; /* element type of the input */
    bool fl, sg;
} RedKind;

static Acc combine(TbLower *L, const RedKind *k, Acc a, Acc b, const TirOp *op) {
    Acc r = a;
    switch (k->code) {
    case TIR_OP_REDUCE_SUM: r.v = k->fl ? LLVMBuildFAdd(L->b, a.v, b.v, "") : LLVMBuildAdd(L->b, a.v, b.v, ""); break;
    case TIR_OP_REDUCE_MAX:
    case TIR_OP_REDUCE_MIN: {
        bool mx = k->code == TIR_OP_REDUCE_MAX;
        const char *n = k->fl   ? (mx ? "llvm.maxnum" : "llvm.minnum")
                        : k->sg ? (mx ? "llvm.smax" : "llvm.smin")
                                : (mx ? "llvm.umax" : "llvm.umin");
        LLVMTypeRef t = LLVMTypeOf(a.v);
        LLVMValueRef args[2] = {a.v, b.v};
        r.v = tb_call_intr(L, n, &t, 1, args, 2);
        break;
    }
    case TIR_OP_ARGMAX:
    case TIR_OP_ARGMIN: {
        bool mx = k->code == TIR_OP_ARGMAX;
        LLVMValueRef better, eq;
        if (k->fl) {
            better = LLVMBuildFCmp(L->b, mx ? LLVMRealOGT : LLVMRealOLT, b.v, a.v, "");
            /* a NaN in `a` loses to any number, as with fmax */
            LLVMValueRef anan = LLVMBuildFCmp(L->b, LLVMRealUNO, a.v, a.v, "");
            LLVMValueRef bnum = LLVMBuildFCmp(L->b, LLVMRealORD, b.v, b.v, "");
            better = LLVMBuildOr(L->b, better, LLVMBuildAnd(L->b, anan, bnum, ""), "");
            eq = LLVMBuildFCmp(L->b, LLVMRealOEQ, b.v, a.v, "");
        } else {
            better = LLVMBuildICmp(L->b, mx ? (k->sg ? LLVMIntSGT : LLVMIntUGT) : (k->sg ? LLVMIntSLT : LLVMIntULT),
                                   b.v, a.v, "");
            eq = LLVMBuildICmp(L->b, LLVMIntEQ, b.v, a.v, "");
        }
        LLVMValueRef tie = LLVMBuildAnd(L->b, eq, LLVMBuildICmp(L->b, LLVMIntSLT, b.i, a.i, ""), "");
        LLVMValueRef take = LLVMBuildOr(L->b, better, tie, "");
        r.v = LLVMBuildSelect(L->b, take, b.v, a.v, "");
        r.i = LLVMBuildSelect(L->b, take, b.i, a.i, "");
        break;
    }
    default: tb_error(L, op, "internal: not a reduction"); break;
    }
    return r;
}

/* v[0..n) combined pairwise, neighbours first: log2(n) dependent combines instead of n - 1
 * (the reduction order is unspecified, docs/language.md "Numerics"); the operand with the
 * lower indices stays on the left. Overwrites v.  Past RED_TREE_MAX elements, first
 * RED_CHAINS interleaved chains (element i into chain i % RED_CHAINS), then the chains
 * pairwise.  Measured on the H200: layernorm 4096x16384, BLOCK=16384, 16 warps (32 elements
 * a thread): one chain 3459-3484 GB/s, the pairwise tree 3567-3589 (Triton 3538-3559); on
 * 32 elements the four chains measured as fast there, but slower for layernorm 8192x8192 with
 * 8 warps (3641-3667 against Triton's 3725, where the tree had 3797-3829 against 3750-3774),
 * so up to 32 the tree stays.  Past it the tree made ptxas 50% slower (softmax BLOCK=16384
 * with 4 warps, 128 elements: 0.55 against 0.37 s for --emit=cubin); four chains cost nothing.
 * argmax/argmin stay one chain: as a tree their compare-and-select pairs took LLVM's
 * optimisation 10 ms longer (row_argmax BLOCK=1024: 41 against 31 ms for --emit=ptx). */
#define RED_TREE_MAX 32
#define RED_CHAINS   4
static Acc combine_tree(TbLower *L, const RedKind *k, Acc *v, int n, const TirOp *op) {
    int chains = k->code == TIR_OP_ARGMAX || k->code == TIR_OP_ARGMIN ? 1 : n > RED_TREE_MAX ? RED_CHAINS : n;
    if (n > chains) {
        for (int i = chains; i < n; i++)
            v[i % chains] = combine(L, k, v[i % chains], v[i], op);
        n = chains;
    }
    for (int w = n; w > 1; w = (w + 1) / 2) {
        for (int i = 0; i < w / 2; i++)
            v[i] = combine(L, k, v[2 * i], v[2 * i + 1], op);
        if (w % 2)
            v[w / 2] = v[w - 1];
    }
    return v[0];
}

/* The most warps a reduction along axis can combine from shared memory. */
static int wpc_max(const TbView *iv, int axis) {
    return tb_view_wpc(iv, axis);
}

static int type_bytes(TbLower *L, LLVMTypeRef t) {
    LLVMTypeKind k = LLVMGetTypeKind(t);
    if (k == LLVMFloatTypeKind)
        return 4;
    if (k == LLVMDoubleTypeKind)
        return 8;
    if (k == LLVMIntegerTypeKind)
        return (int)(LLVMGetIntTypeWidth(t) + 7) / 8;
    return 8;
}

static LLVMValueRef scratch_at(TbLower *L, LLVMValueRef base, LLVMValueRef byte_off) {
    return LLVMBuildGEP2(L->b, L->i8, base, &byte_off, 1, "");
}

void tb_lower_reduce(TbLower *L, TirOp *op) {
    TirValue *in = op->opnd[0], *out = op->res[0];
    int axis = (int)op->attr.i[0];
    TbVal *x = tb_val(L, in);
    TbView iv, ov;
    if (!tb_view(L, in->ty, &iv, op))
        return;
    if (axis < 0 || axis >= iv.rank) {
        tb_error(L, op, "reduction axis %d out of range", axis);
        return;
    }
    bool scalar_out = !tir_type_is_tile(out->ty);
    if (!scalar_out) {
        if (!tb_view(L, out->ty, &ov, op))
            return;
        if (tir_layout_kind(L->m, out->ty.layout) != TIR_LAYOUT_SLICE ||
            tir_layout_slice_dim(L->m, out->ty.layout) != axis ||
            tir_layout_parent(L->m, out->ty.layout) != in->ty.layout) {
            tb_error(L, op, "the result's layout must be the input's sliced at the axis: run the 'layout' pass");
            return;
        }
    }
    RedKind k = {(TirOpcode)op->code, (TirScalar)in->ty.elem, false, false};
    k.fl = tir_scalar_is_float(k.s);
    k.sg = tir_scalar_is_signed(k.s) && k.s != TIR_I1;
    bool arg = k.code == TIR_OP_ARGMAX || k.code == TIR_OP_ARGMIN;
    /* narrow floats accumulate in f32 */
    TirScalar accs = (k.fl && k.s != TIR_F64) ? TIR_F32 : k.s;
    if (k.s == TIR_I1 && k.code == TIR_OP_REDUCE_SUM)
        accs = TIR_I32;
    int nout = scalar_out ? 1 : ov.total;
    int axis_n = iv.n[axis];
    LLVMValueRef axis_base = arg ? tb_view_base(L, &iv, axis) : NULL;
    Acc *acc = tir_alloc(L->m->arena, (size_t)nout * sizeof *acc);
    int nitems = axis_n > wpc_max(&iv, axis) ? axis_n : wpc_max(&iv, axis);
    Acc *items = tir_alloc(L->m->arena, (size_t)nitems * sizeof *items);
    for (int eo = 0; eo < nout; eo++) {
        int32_t jo[TIR_MAXRANK] = {0}, j[TIR_MAXRANK];
        if (!scalar_out)
            tb_view_multi(&ov, eo, jo);
        for (int d = 0, dd = 0; d < iv.rank; d++)
            j[d] = d == axis ? 0 : jo[dd++];
        for (int t = 0; t < axis_n; t++) {
            j[axis] = t;
            items[t].v = tb_convert(L, x->e[tb_view_index(&iv, j)], k.s, accs, op);
            items[t].i = arg ? LLVMBuildAdd(L->b, axis_base, tb_i32(L, tb_view_offset(&iv, axis, t)), "") : NULL;
        }
        acc[eo] = combine_tree(L, &k, items, axis_n, op);
    }
    /* across lanes: the lanes along the axis that hold distinct data */
    int lanes, warps;
    tb_view_distinct(&iv, axis, &lanes, &warps);
    int lstride = tb_view_lane_stride(&iv, axis);
    for (int off = 1; off < lanes; off *= 2)
        for (int eo = 0; eo < nout; eo++) {
            Acc b = {shfl_bfly(L, acc[eo].v, off * lstride), arg ? shfl_bfly(L, acc[eo].i, off * lstride) : NULL};
            acc[eo] = combine(L, &k, acc[eo], b, op);
        }
    if (warps > 1) {
        /* across warps: lane 0 of each warp along the axis writes its partial; all read */
        int64_t numel = scalar_out ? 1 : tir_type_numel(out->ty);
        LLVMTypeRef at = LLVMTypeOf(acc[0].v);
        int ab = type_bytes(L, at);
        int64_t vbytes = numel * warps * ab;
        int64_t bytes = analysis_scratch_bytes(L->m, op);
        if (bytes > 48 * 1024) {
            tb_error(L, op, "reduction needs %lld bytes of shared memory (more than 48 KiB)", (long long)bytes);
            return;
        }
        LLVMValueRef base = tb_scratch(L, op);
        LLVMValueRef wk = tb_view_warp_digit(L, &iv, axis);
        LLVMValueRef lk = tb_view_lane_digit(L, &iv, axis);
        LLVMValueRef writer = LLVMBuildAnd(L->eb, LLVMBuildICmp(L->eb, LLVMIntEQ, lk, tb_i32(L, 0), ""),
                                           LLVMBuildICmp(L->eb, LLVMIntULT, wk, tb_i32(L, warps), ""), "");
        LLVMValueRef *lin = tir_alloc(L->m->arena, (size_t)nout * sizeof *lin);
        for (int eo = 0; eo < nout; eo++) {
            LLVMValueRef li = tb_i32(L, 0);
            if (!scalar_out) {
                int32_t jo[TIR_MAXRANK];
                tb_view_multi(&ov, eo, jo);
                int64_t stride = 1;
                for (int d = ov.rank - 1; d >= 0; d--) {
                    LLVMValueRef c =
                        LLVMBuildAdd(L->b, tb_view_base(L, &ov, d), tb_i32(L, tb_view_offset(&ov, d, jo[d])), "");
                    li = LLVMBuildAdd(L->b, li, LLVMBuildMul(L->b, c, tb_i32(L, stride), ""), "");
                    stride *= ov.shape[d];
                }
            }
            lin[eo] = LLVMBuildMul(L->b, li, tb_i32(L, warps), "");
        }
        LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(L->c, L->fn, "red.write");
        LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(L->c, L->fn, "red.read");
        LLVMBuildCondBr(L->b, writer, wr, join);
        LLVMPositionBuilderAtEnd(L->b, wr);
        for (int eo = 0; eo < nout; eo++) {
            LLVMValueRef slot = LLVMBuildAdd(L->b, lin[eo], wk, "");
            LLVMValueRef st =
                LLVMBuildStore(L->b, acc[eo].v, scratch_at(L, base, LLVMBuildMul(L->b, slot, tb_i32(L, ab), "")));
            LLVMSetAlignment(st, (unsigned)ab);
            if (arg) {
                LLVMValueRef o = LLVMBuildAdd(L->b, tb_i32(L, vbytes), LLVMBuildMul(L->b, slot, tb_i32(L, 4), ""), "");
                LLVMBuildStore(L->b, acc[eo].i, scratch_at(L, base, o));
            }
        }
        LLVMBuildBr(L->b, join);
        LLVMPositionBuilderAtEnd(L->b, join);
        tb_barrier(L);
        for (int eo = 0; eo < nout; eo++) {
            for (int w = 0; w < warps; w++) {
                LLVMValueRef slot = LLVMBuildAdd(L->b, lin[eo], tb_i32(L, w), "");
                Acc *a = &items[w];
                a->v = LLVMBuildLoad2(L->b, at, scratch_at(L, base, LLVMBuildMul(L->b, slot, tb_i32(L, ab), "")), "");
                LLVMSetAlignment(a->v, (unsigned)ab);
                a->i = NULL;
                if (arg) {
                    LLVMValueRef o =
                        LLVMBuildAdd(L->b, tb_i32(L, vbytes), LLVMBuildMul(L->b, slot, tb_i32(L, 4), ""), "");
                    a->i = LLVMBuildLoad2(L->b, L->i32, scratch_at(L, base, o), "");
                }
            }
            acc[eo] = combine_tree(L, &k, items, warps, op);
        }
    }
    LLVMValueRef *e = tb_elems(L, nout);
    TirScalar rs = (TirScalar)out->ty.elem;
    for (int eo = 0; eo < nout; eo++)
        e[eo] = arg ? acc[eo].i : tb_convert(L, acc[eo].v, accs, rs, op);
    tb_set(L, out, nout, e);
}

/* ---- layout conversion through shared memory ---- */

static LLVMValueRef linear_coord(TbLower *L, const TbView *v, int e) {
    LLVMValueRef li = tb_i32(L, 0);
    int64_t stride = 1;
    for (int d = v->rank - 1; d >= 0; d--) {
        LLVMValueRef c = tb_view_coord(L, v, e, d);
        li = LLVMBuildAdd(L->b, li, LLVMBuildMul(L->b, c, tb_i32(L, stride), ""), "");
        stride *= v->shape[d];
    }
    return li;
}

/* Where threads hold copies of an element, only its first holder writes it: the same value
 * from several threads is still a write-write race to compute-sanitizer.  The writes that
 * follow go into a block only holders enter; the join block to end it with (owners_done),
 * or NULL when every thread holds distinct elements. */
static LLVMBasicBlockRef owners_only(TbLower *L, const TbView *sv) {
    LLVMValueRef own = tb_owner(L, sv);
    if (!own)
        return NULL;
    LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(L->c, L->fn, "cvt.write");
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(L->c, L->fn, "cvt.join");
    LLVMBuildCondBr(L->b, own, wr, join);
    LLVMPositionBuilderAtEnd(L->b, wr);
    return join;
}

static void owners_done(TbLower *L, LLVMBasicBlockRef join) {
    if (!join)
        return;
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
}

/* A conversion through shared memory as the layout algebra plans it (tir_conv_plan): the
 * swizzled layout with the fewest wavefronts over both sides, each side moving its
 * longest runs of consecutive registers as one vector access.  The accumulator of a
 * 128x256 f16 GEMM epilogue (8 warps) went from 128 scalar 16-bit stores with 8-way bank
 * conflicts and 128 scalar loads a thread to 64 32-bit stores and 16 128-bit loads.
 * False (nothing built) where the plan does not apply; the caller then converts element
 * by element. */
static bool convert_planned(TbLower *L, TirOp *op, TbVal *x, TirType it, const TbView *sv, const TbView *dv) {
    TirValue *out = op->res[0];
    TirType et = tir_elem_type(it);
    if (et.ptr)
        return false;
    const TirLinear *a0 = tb_view_linear(L, it, sv), *b0 = tb_view_linear(L, out->ty, dv);
    if (!a0 || !b0)
        return false;
    /* registers relabeled so that a thread's elements at consecutive columns are
     * consecutive registers (an accumulator with grouped N tiles holds 8 adjacent columns
     * in registers 4 apart): x's register pa[r] is a's r, the result's pb[r] is bm's r */
    TirLinear a1, b1;
    const TirLinear *a = &a1, *bm = &b1;
    int32_t *pa = tir_alloc(L->m->arena, (size_t)sv->total * sizeof *pa);
    int32_t *pb = tir_alloc(L->m->arena, (size_t)dv->total * sizeof *pb);
    int ra = tir_lin_in_dim(a0, TIR_LIN_REG), rb = tir_lin_in_dim(b0, TIR_LIN_REG);
    if (ra < 0 || rb < 0 || tir_lin_in_size(a0, ra) != sv->total || tir_lin_in_size(b0, rb) != dv->total)
        return false;
    /* the fastest dim: the last (row-major tiles) */
    tir_lin_runs_first(a0, ra, sv->rank - 1, &a1, pa);
    tir_lin_runs_first(b0, rb, dv->rank - 1, &b1, pb);
    int eb = et.elem == TIR_I1 ? 1 : tir_scalar_bytes((TirScalar)et.elem);
    TirConvPlan plan;
    if (!tir_conv_plan(L->m->arena, a, bm, eb, &plan))
        return false;
    LLVMTypeRef rt = tb_elem_type(L, et);
    bool is_bool = et.elem == TIR_I1;
    LLVMTypeRef mt = is_bool ? L->i8 : rt;
    if (plan.kind == TIR_CONV_NONE || plan.kind == TIR_CONV_REGS) {
        /* every thread holds what it needs already */
        LLVMValueRef *r = tb_elems(L, dv->total);
        for (int e = 0; e < dv->total; e++)
            r[pb[e]] = x->e[pa[plan.kind == TIR_CONV_NONE ? e : plan.perm[e]]];
        tb_set(L, out, dv->total, r);
        return true;
    }
    if (plan.kind != TIR_CONV_SMEM || plan.smem_elems != tir_type_numel(it))
        return false;
    TirLinear inv, wmap, rmap;
    if (!tir_lin_invert(&plan.smem, &inv) || !tir_lin_compose(&inv, a, &wmap) || !tir_lin_compose(&inv, bm, &rmap))
        return false;
    int wv = plan.write_vec, rv = plan.read_vec;
    int32_t twb = tb_lin_thread_bits(&wmap), trb = tb_lin_thread_bits(&rmap);
    /* vectors stay aligned whatever the thread: no thread bit inside one */
    if (wv < 1 || rv < 1 || sv->total % wv || dv->total % rv || (twb & (wv - 1)) || (trb & (rv - 1)))
        return false;
    LLVMValueRef base = tb_scratch(L, op);
    LLVMBasicBlockRef join = owners_only(L, sv);
    LLVMValueRef tw = tb_lin_thread_offset(L, &wmap);
    LLVMTypeRef wvt = wv > 1 ? LLVMVectorType(mt, (unsigned)wv) : mt;
    for (int r0 = 0; r0 < sv->total; r0 += wv) {
        LLVMValueRef off = tb_lin_offset_plus(L, tw, twb, tb_lin_offset(&wmap, r0, 0, 0));
        LLVMValueRef v = wv > 1 ? LLVMGetUndef(wvt) : NULL;
        for (int i = 0; i < wv; i++) {
            LLVMValueRef xe = x->e[pa[r0 + i]];
            LLVMValueRef e = is_bool ? LLVMBuildZExt(L->b, xe, L->i8, "") : xe;
            v = wv > 1 ? LLVMBuildInsertElement(L->b, v, e, tb_i32(L, i), "") : e;
        }
        LLVMValueRef st = LLVMBuildStore(L->b, v, scratch_at(L, base, LLVMBuildMul(L->b, off, tb_i32(L, eb), "")));
        LLVMSetAlignment(st, (unsigned)(wv * eb));
    }
    owners_done(L, join);
    tb_barrier(L);
    LLVMValueRef tr = tb_lin_thread_offset(L, &rmap);
    LLVMTypeRef rvt = rv > 1 ? LLVMVectorType(mt, (unsigned)rv) : mt;
    LLVMValueRef *r = tb_elems(L, dv->total);
    for (int r0 = 0; r0 < dv->total; r0 += rv) {
        LLVMValueRef off = tb_lin_offset_plus(L, tr, trb, tb_lin_offset(&rmap, r0, 0, 0));
        LLVMValueRef v = LLVMBuildLoad2(L->b, rvt, scratch_at(L, base, LLVMBuildMul(L->b, off, tb_i32(L, eb), "")), "");
        LLVMSetAlignment(v, (unsigned)(rv * eb));
        for (int i = 0; i < rv; i++) {
            LLVMValueRef e = rv > 1 ? LLVMBuildExtractElement(L->b, v, tb_i32(L, i), "") : v;
            r[pb[r0 + i]] = is_bool ? LLVMBuildICmp(L->b, LLVMIntNE, e, LLVMConstNull(L->i8), "") : e;
        }
    }
    tb_set(L, out, dv->total, r);
    return true;
}

void tb_lower_convert_layout(TbLower *L, TirOp *op) {
    TirValue *in = op->opnd[0], *out = op->res[0];
    TbVal *x = tb_val(L, in);
    if (!tir_type_is_tile(in->ty) || in->ty.layout == out->ty.layout) {
        tb_set(L, out, x->n, x->e);
        return;
    }
    TbView sv, dv;
    if (!tb_view_lin_ok(L, in->ty, &sv, op) || !tb_view_lin_ok(L, out->ty, &dv, op))
        return;
    /* a constant splat (the zeros an accumulator starts from): no exchange.  Only a
     * constant: a thread whose elements share one value (a row vector broadcast along its
     * row) still holds another row than the thread that needs them. */
    if (tb_uniform(x) && LLVMIsConstant(x->e[0])) {
        LLVMValueRef *r = tb_elems(L, dv.total);
        for (int e = 0; e < dv.total; e++)
            r[e] = x->e[0];
        tb_set(L, out, dv.total, r);
        return;
    }
    if (convert_planned(L, op, x, in->ty, &sv, &dv))
        return;
    TirType et = tir_elem_type(in->ty);
    LLVMTypeRef rt = tb_elem_type(L, et);
    bool is_bool = !et.ptr && et.elem == TIR_I1;
    LLVMTypeRef mt = is_bool ? L->i8 : rt;
    int eb = et.ptr ? 8 : tir_scalar_bytes((TirScalar)et.elem);
    LLVMValueRef base = tb_scratch(L, op);
    LLVMBasicBlockRef join = owners_only(L, &sv);
    for (int e = 0; e < sv.total; e++) {
        LLVMValueRef off = LLVMBuildMul(L->b, linear_coord(L, &sv, e), tb_i32(L, eb), "");
        LLVMValueRef v = is_bool ? LLVMBuildZExt(L->b, x->e[e], L->i8, "") : x->e[e];
        LLVMValueRef st = LLVMBuildStore(L->b, v, scratch_at(L, base, off));
        LLVMSetAlignment(st, (unsigned)eb);
    }
    owners_done(L, join);
    tb_barrier(L);
    LLVMValueRef *r = tb_elems(L, dv.total);
    for (int e = 0; e < dv.total; e++) {
        LLVMValueRef off = LLVMBuildMul(L->b, linear_coord(L, &dv, e), tb_i32(L, eb), "");
        LLVMValueRef v = LLVMBuildLoad2(L->b, mt, scratch_at(L, base, off), "");
        LLVMSetAlignment(v, (unsigned)eb);
        r[e] = is_bool ? LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstNull(L->i8), "") : v;
    }
    tb_set(L, out, dv.total, r);
}

/* ---- broadcast and expand_dims: same threads, a different view ---- */

/* Coordinates of out's image of (r, lane, warp) as in's: dim `axis` dropped (expand_dims;
 * -1: none) and the dims where in has extent 1 zeroed (broadcast). */
static void project(const TirLinear *out, int out_rank, const TirType *it, int axis, const int32_t *in, int32_t *c) {
    int32_t oc[TIR_LIN_MAXDIMS] = {0};
    tir_lin_apply_coords(out, in, oc);
    for (int d = 0, k = 0; d < out_rank; d++) {
        if (d == axis)
            continue;
        c[k] = it->shape[k] == 1 ? 0 : oc[d];
        k++;
    }
}

/* Where either side has no blocked form (an mma accumulator and the bias or scale vector
 * broadcast over it): from the layout algebra's maps.  Each thread must hold the same
 * coordinates through its lane and warp bits on both sides; out's register i then reads
 * in's register with the coordinates of i, projected. */
static void shape_from_maps(TbLower *L, TirOp *op, int axis, TbVal *x, const TbView *iv, const TbView *ov) {
    TirValue *in = op->opnd[0], *out = op->res[0];
    const TirLinear *li = tb_view_linear(L, in->ty, iv), *lo = tb_view_linear(L, out->ty, ov);
    if (!li || !lo) {
        tb_error(L, op, "internal: '%s' of a layout without a map", tir_op_info[op->code].name);
        return;
    }
    AnaThreadMap ti, to;
    if (!analysis_thread_map(li, &ti) || !analysis_thread_map(lo, &to)) {
        tb_error(L, op, "internal: '%s' of a layout without a thread map", tir_op_info[op->code].name);
        return;
    }
    int R[2] = {ti.reg_dim, to.reg_dim};
    int dims[2][2] = {{ti.lane_dim, ti.warp_dim}, {to.lane_dim, to.warp_dim}};
    int ibits[2] = {ti.lane_bits, ti.warp_bits}, obits[2] = {to.lane_bits, to.warp_bits};
    for (int k = 0; k < 2; k++) {
        int bits = ibits[k] > obits[k] ? ibits[k] : obits[k];
        for (int b = 0; b < bits; b++) {
            int32_t ii[3] = {0}, io[3] = {0}, ci[TIR_LIN_MAXDIMS] = {0}, co[TIR_LIN_MAXDIMS] = {0};
            if (b < ibits[k])
                ii[dims[0][k]] = 1 << b;
            if (b < obits[k])
                io[dims[1][k]] = 1 << b;
            tir_lin_apply_coords(li, ii, ci);
            project(lo, to.rank, &in->ty, axis, io, co);
            if (memcmp(ci, co, (size_t)ti.rank * sizeof *ci)) {
                tb_error(L, op, "internal: '%s' between layouts whose threads hold different coordinates",
                         tir_op_info[op->code].name);
                return;
            }
        }
    }
    LLVMValueRef *e = tb_elems(L, ov->total);
    int64_t *ao = x->ab ? tir_alloc(L->m->arena, (size_t)ov->total * sizeof *ao) : NULL;
    for (int i = 0; i < ov->total; i++) {
        int32_t io[3] = {0}, co[TIR_LIN_MAXDIMS] = {0};
        io[R[1]] = i;
        project(lo, to.rank, &in->ty, axis, io, co);
        int k = -1;
        for (int j = 0; j < iv->total && k < 0; j++) {
            int32_t ii[3] = {0}, ci[TIR_LIN_MAXDIMS] = {0};
            ii[R[0]] = j;
            tir_lin_apply_coords(li, ii, ci);
            if (!memcmp(ci, co, (size_t)ti.rank * sizeof *ci))
                k = j;
        }
        if (k < 0) {
            tb_error(L, op, "internal: '%s': no register of the operand holds an element of the result",
                     tir_op_info[op->code].name);
            return;
        }
        e[i] = x->e[k];
        if (ao)
            ao[i] = x->ao[k];
    }
    tb_set_affine(L, out, ov->total, e, x->ab, ao);
}

void tb_lower_broadcast(TbLower *L, TirOp *op) {
    TirValue *in = op->opnd[0], *out = op->res[0];
    TbVal *x = tb_val(L, in);
    TbView iv, ov;
    if (!tir_type_is_tile(in->ty)) {
        if (!tb_view_lin_ok(L, out->ty, &ov, op))
            return;
        LLVMValueRef *e = tb_elems(L, ov.total);
        for (int i = 0; i < ov.total; i++)
            e[i] = x->e[0];
        tb_set(L, out, ov.total, e);
        return;
    }
    if (in->ty.layout != out->ty.layout) {
        tb_error(L, op, "broadcast's operand and result layouts differ: run the 'layout' pass");
        return;
    }
    if (!tb_view_lin_ok(L, in->ty, &iv, op) || !tb_view_lin_ok(L, out->ty, &ov, op))
        return;
    if (iv.mma || ov.mma) {
        shape_from_maps(L, op, -1, x, &iv, &ov);
        return;
    }
    LLVMValueRef *e = tb_elems(L, ov.total);
    int64_t *ao = x->ab ? tir_alloc(L->m->arena, (size_t)ov.total * sizeof *ao) : NULL;
    for (int i = 0; i < ov.total; i++) {
        int32_t j[TIR_MAXRANK];
        tb_view_multi(&ov, i, j);
        for (int d = 0; d < ov.rank; d++)
            if (iv.shape[d] != ov.shape[d])
                j[d] = 0;
        int k = tb_view_index(&iv, j);
        e[i] = x->e[k];
        if (ao)
            ao[i] = x->ao[k];
    }
    tb_set_affine(L, out, ov.total, e, x->ab, ao);
}

void tb_lower_expand_dims(TbLower *L, TirOp *op) {
    TirValue *in = op->opnd[0], *out = op->res[0];
    TbVal *x = tb_val(L, in);
    int axis = (int)op->attr.i[0];
    TbView iv, ov;
    if (!tb_view_lin_ok(L, out->ty, &ov, op))
        return;
    if (!tir_type_is_tile(in->ty)) {
        LLVMValueRef *e = tb_elems(L, ov.total);
        for (int i = 0; i < ov.total; i++)
            e[i] = x->e[0];
        tb_set(L, out, ov.total, e);
        return;
    }
    if (tir_layout_kind(L->m, in->ty.layout) != TIR_LAYOUT_SLICE || tir_layout_slice_dim(L->m, in->ty.layout) != axis ||
        tir_layout_parent(L->m, in->ty.layout) != out->ty.layout) {
        tb_error(L, op,
                 "expand_dims needs its operand in the result's layout sliced at the axis: run the 'layout' pass");
        return;
    }
    if (!tb_view_lin_ok(L, in->ty, &iv, op))
        return;
    if (iv.mma || ov.mma) {
        shape_from_maps(L, op, axis, x, &iv, &ov);
        return;
    }
    LLVMValueRef *e = tb_elems(L, ov.total);
    int64_t *ao = x->ab ? tir_alloc(L->m->arena, (size_t)ov.total * sizeof *ao) : NULL;
    for (int i = 0; i < ov.total; i++) {
        int32_t j[TIR_MAXRANK], ji[TIR_MAXRANK];
        tb_view_multi(&ov, i, j);
        for (int d = 0, k = 0; d < ov.rank; d++)
            if (d != axis)
                ji[k++] = j[d];
        int k = tb_view_index(&iv, ji);
        e[i] = x->e[k];
        if (ao)
            ao[i] = x->ao[k];
    }
    tb_set_affine(L, out, ov.total, e, x->ab, ao);
}
