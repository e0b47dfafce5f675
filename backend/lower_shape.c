/* reshape and trans (through the op's shared scratch), cumsum (in the thread, warp
 * shuffles up, then one shared-memory round across warps), tensor descriptors with
 * tload/tstore (ordinary predicated loads and stores on every arch for now), print
 * (vprintf) and assert (--debug: vprintf + trap). */
#include "tb_internal.h"

#include <string.h>

/* shfl.sync.{up,idx,bfly} of any 8..64-bit value; c: the PTX clamp/segment operand. */
LLVMValueRef tb_shfl(TbLower *L, const char *kind, LLVMValueRef x, LLVMValueRef lane, int c) {
    char name[64];
    snprintf(name, sizeof name, "llvm.nvvm.shfl.sync.%s.i32", kind);
    LLVMTypeRef t = LLVMTypeOf(x);
    LLVMTypeKind k = LLVMGetTypeKind(t);
    unsigned bits = k == LLVMIntegerTypeKind  ? LLVMGetIntTypeWidth(t)
                    : k == LLVMDoubleTypeKind ? 64
                    : k == LLVMFloatTypeKind  ? 32
                                              : 16;
    LLVMTypeRef it = LLVMIntTypeInContext(L->c, bits);
    LLVMValueRef i = LLVMBuildBitCast(L->b, x, it, "");
    LLVMValueRef words[2];
    int nw = bits > 32 ? 2 : 1;
    for (int w = 0; w < nw; w++) {
        LLVMValueRef part =
            bits > 32   ? LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, i, LLVMConstInt(it, 32u * w, 0), ""), L->i32, "")
            : bits < 32 ? LLVMBuildZExt(L->b, i, L->i32, "")
                        : i;
        LLVMValueRef args[4] = {tb_i32(L, -1), part, lane, tb_i32(L, c)};
        words[w] = tb_call_intr(L, name, NULL, 0, args, 4);
    }
    LLVMValueRef r;
    if (nw == 2)
        r = LLVMBuildOr(L->b, LLVMBuildZExt(L->b, words[0], it, ""),
                        LLVMBuildShl(L->b, LLVMBuildZExt(L->b, words[1], it, ""), LLVMConstInt(it, 32, 0), ""), "");
    else
        r = bits < 32 ? LLVMBuildTrunc(L->b, words[0], it, "") : words[0];
    return LLVMBuildBitCast(L->b, r, t, "");
}

/* ---- reshape, trans: write at the element's place in the result, barrier, read ---- */

static int mem_bytes_of(TirType t) {
    return t.ptr ? 8 : tir_scalar_bytes((TirScalar)t.elem);
}

void tb_lower_permute(TbLower *L, TirOp *op) {
    TirValue *in = op->opnd[0], *out = op->res[0];
    TbVal *x = tb_val(L, in);
    TbView sv, dv;
    if (!tb_view(L, in->ty, &sv, op) || !tb_view(L, out->ty, &dv, op))
        return;
    TirType et = tir_elem_type(in->ty);
    bool is_bool = !et.ptr && et.elem == TIR_I1;
    LLVMTypeRef mt = is_bool ? L->i8 : tb_elem_type(L, et);
    int eb = mem_bytes_of(et);
    LLVMValueRef base = tb_scratch(L, op);
    /* row-major strides of the result */
    int64_t ostride[TIR_MAXRANK], istride[TIR_MAXRANK];
    for (int d = dv.rank - 1, s = 1; d >= 0; d--)
        ostride[d] = s, s *= dv.shape[d];
    for (int d = sv.rank - 1, s = 1; d >= 0; d--)
        istride[d] = s, s *= sv.shape[d];
    for (int e = 0; e < sv.total; e++) {
        LLVMValueRef li = tb_i32(L, 0);
        if (op->code == TIR_OP_TRANS) {
            /* result dim i is operand dim perm[i] */
            for (int i = 0; i < dv.rank; i++) {
                int src = (int)op->attr.i[i];
                if (src < 0 || src >= sv.rank) {
                    tb_error(L, op, "bad permutation");
                    return;
                }
                li = LLVMBuildAdd(L->b, li,
                                  LLVMBuildMul(L->b, tb_view_coord(L, &sv, e, src), tb_i32(L, ostride[i]), ""), "");
            }
        } else {
            for (int d = 0; d < sv.rank; d++)
                li = LLVMBuildAdd(L->b, li, LLVMBuildMul(L->b, tb_view_coord(L, &sv, e, d), tb_i32(L, istride[d]), ""),
                                  "");
        }
        LLVMValueRef off = LLVMBuildMul(L->b, li, tb_i32(L, eb), "");
        LLVMValueRef v = is_bool ? LLVMBuildZExt(L->b, x->e[e], L->i8, "") : x->e[e];
        LLVMValueRef st = LLVMBuildStore(L->b, v, LLVMBuildGEP2(L->b, L->i8, base, &off, 1, ""));
        LLVMSetAlignment(st, (unsigned)eb);
    }
    tb_barrier(L);
    LLVMValueRef *r = tb_elems(L, dv.total);
    for (int e = 0; e < dv.total; e++) {
        LLVMValueRef li = tb_i32(L, 0);
        for (int d = 0; d < dv.rank; d++)
            li = LLVMBuildAdd(L->b, li, LLVMBuildMul(L->b, tb_view_coord(L, &dv, e, d), tb_i32(L, ostride[d]), ""), "");
        LLVMValueRef off = LLVMBuildMul(L->b, li, tb_i32(L, eb), "");
        LLVMValueRef v = LLVMBuildLoad2(L->b, mt, LLVMBuildGEP2(L->b, L->i8, base, &off, 1, ""), "");
        LLVMSetAlignment(v, (unsigned)eb);
        r[e] = is_bool ? LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstNull(L->i8), "") : v;
    }
    tb_set(L, out, dv.total, r);
}

/* ---- cumsum ---- */

static LLVMValueRef add(TbLower *L, bool fl, LLVMValueRef a, LLVMValueRef b) {
    return fl ? LLVMBuildFAdd(L->b, a, b, "") : LLVMBuildAdd(L->b, a, b, "");
}

void tb_lower_cumsum(TbLower *L, TirOp *op) {
    TirValue *in = op->opnd[0], *out = op->res[0];
    TbVal *x = tb_val(L, in);
    int axis = (int)op->attr.i[0];
    TbView v;
    if (!tb_view(L, in->ty, &v, op))
        return;
    if (in->ty.layout != out->ty.layout) {
        tb_error(L, op, "cumsum's operand and result layouts differ: run the 'layout' pass");
        return;
    }
    if (axis < 0 || axis >= v.rank) {
        tb_error(L, op, "cumsum axis %d out of range", axis);
        return;
    }
    TirScalar s = (TirScalar)in->ty.elem;
    bool fl = tir_scalar_is_float(s);
    TirScalar accs = fl && s != TIR_F64 ? TIR_F32 : s;
    LLVMTypeRef at = tb_scalar_type(L, accs);
    int lanes, warps;
    int spt = tb_view_spt(&v, axis);
    int S = v.shape[axis];
    tb_view_distinct(&v, axis, &lanes, &warps);
    int chunk = S < spt ? S : spt;
    int na = v.n[axis], reps = na / chunk;
    int lstride = tb_view_lane_stride(&v, axis);
    LLVMValueRef lane_a = tb_view_lane_digit(L, &v, axis), warp_a = tb_view_warp_digit(L, &v, axis);
    LLVMValueRef la = LLVMBuildAnd(L->eb, lane_a, tb_i32(L, lanes - 1), "");
    LLVMValueRef wa = LLVMBuildAnd(L->eb, warp_a, tb_i32(L, warps - 1), "");
    LLVMValueRef last_lane = tb_view_last_lane(L, &v, axis, lane_a, lanes);
    LLVMValueRef zero = LLVMConstNull(at);
    int nrows = v.total / na;
    LLVMValueRef *res = tb_elems(L, v.total);
    /* per row: element indices along the axis, in-thread prefix, lane exclusive, rep totals */
    LLVMValueRef **pref = tir_alloc(L->m->arena, (size_t)nrows * sizeof *pref);
    LLVMValueRef **excl = tir_alloc(L->m->arena, (size_t)nrows * sizeof *excl);
    LLVMValueRef **tot = tir_alloc(L->m->arena, (size_t)nrows * sizeof *tot);
    int **idx = tir_alloc(L->m->arena, (size_t)nrows * sizeof *idx);
    LLVMValueRef *rowlin = tb_elems(L, nrows);
    int row = 0;
    for (int e = 0; e < v.total; e++) {
        int32_t j[TIR_MAXRANK];
        tb_view_multi(&v, e, j);
        if (j[axis] != 0)
            continue;
        idx[row] = tir_alloc(L->m->arena, (size_t)na * sizeof(int));
        pref[row] = tb_elems(L, na);
        excl[row] = tb_elems(L, reps);
        tot[row] = tb_elems(L, reps);
        for (int t = 0; t < na; t++) {
            j[axis] = t;
            idx[row][t] = tb_view_index(&v, j);
        }
        /* the row's linear index over the other dims (for the cross-warp slots) */
        LLVMValueRef li = tb_i32(L, 0);
        for (int d = 0, st = 1; d < v.rank; d++) {
            int dd = v.rank - 1 - d;
            if (dd == axis)
                continue;
            li = LLVMBuildAdd(L->b, li, LLVMBuildMul(L->b, tb_view_coord(L, &v, e, dd), tb_i32(L, st), ""), "");
            st *= v.shape[dd];
        }
        rowlin[row] = li;
        for (int c = 0; c < reps; c++) {
            LLVMValueRef acc = NULL;
            for (int t = c * chunk; t < (c + 1) * chunk; t++) {
                LLVMValueRef xv = tb_convert(L, x->e[idx[row][t]], s, accs, op);
                acc = acc ? add(L, fl, acc, xv) : xv;
                pref[row][t] = acc;
            }
            /* inclusive scan of the chunk totals over the lanes along the axis */
            LLVMValueRef incl = acc;
            for (int off = 1; off < lanes; off *= 2) {
                LLVMValueRef y = tb_shfl(L, "up", incl, tb_i32(L, off * lstride), 0);
                LLVMValueRef ok = LLVMBuildICmp(L->b, LLVMIntUGE, la, tb_i32(L, off), "");
                incl = LLVMBuildSelect(L->b, ok, add(L, fl, incl, y), incl, "");
            }
            if (lanes > 1) {
                LLVMValueRef y = tb_shfl(L, "up", incl, tb_i32(L, lstride), 0);
                excl[row][c] = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, la, tb_i32(L, 0), ""), zero, y, "");
                tot[row][c] = tb_shfl(L, "idx", incl, last_lane, 0x1f);
            } else {
                excl[row][c] = zero;
                tot[row][c] = incl;
            }
        }
        row++;
    }
    /* carry into each (row, rep) from the earlier reps and, across warps, earlier warps */
    LLVMValueRef **carry = tir_alloc(L->m->arena, (size_t)nrows * sizeof *carry);
    for (int r = 0; r < nrows; r++)
        carry[r] = tb_elems(L, reps);
    if (warps > 1) {
        int ab = (int)(LLVMGetTypeKind(at) == LLVMDoubleTypeKind    ? 8
                       : LLVMGetTypeKind(at) == LLVMIntegerTypeKind ? (LLVMGetIntTypeWidth(at) + 7) / 8
                                                                    : 4);
        LLVMValueRef base = tb_scratch(L, op);
        int slot = ab < 4 ? 4 : ab;
        LLVMValueRef writer = LLVMBuildAnd(L->eb, LLVMBuildICmp(L->eb, LLVMIntEQ, lane_a, tb_i32(L, lanes - 1), ""),
                                           LLVMBuildICmp(L->eb, LLVMIntULT, warp_a, tb_i32(L, warps), ""), "");
        LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(L->c, L->fn, "scan.write");
        LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(L->c, L->fn, "scan.read");
        LLVMBuildCondBr(L->b, writer, wr, join);
        LLVMPositionBuilderAtEnd(L->b, wr);
        for (int r = 0; r < nrows; r++)
            for (int c = 0; c < reps; c++) {
                LLVMValueRef k = LLVMBuildAdd(
                    L->b,
                    LLVMBuildMul(
                        L->b, LLVMBuildAdd(L->b, LLVMBuildMul(L->b, rowlin[r], tb_i32(L, reps), ""), tb_i32(L, c), ""),
                        tb_i32(L, warps), ""),
                    wa, "");
                LLVMValueRef off = LLVMBuildMul(L->b, k, tb_i32(L, slot), "");
                LLVMValueRef st = LLVMBuildStore(L->b, tot[r][c], LLVMBuildGEP2(L->b, L->i8, base, &off, 1, ""));
                LLVMSetAlignment(st, (unsigned)slot);
            }
        LLVMBuildBr(L->b, join);
        LLVMPositionBuilderAtEnd(L->b, join);
        tb_barrier(L);
        for (int r = 0; r < nrows; r++) {
            LLVMValueRef run = zero;
            for (int c = 0; c < reps; c++) {
                LLVMValueRef here = run, all = run;
                for (int w = 0; w < warps; w++) {
                    LLVMValueRef k = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, rowlin[r], tb_i32(L, reps * warps), ""),
                                                  tb_i32(L, c * warps + w), "");
                    LLVMValueRef off = LLVMBuildMul(L->b, k, tb_i32(L, slot), "");
                    LLVMValueRef t = LLVMBuildLoad2(L->b, at, LLVMBuildGEP2(L->b, L->i8, base, &off, 1, ""), "");
                    LLVMSetAlignment(t, (unsigned)slot);
                    LLVMValueRef before = LLVMBuildICmp(L->b, LLVMIntULT, tb_i32(L, w), wa, "");
                    here = LLVMBuildSelect(L->b, before, add(L, fl, here, t), here, "");
                    all = add(L, fl, all, t);
                }
                carry[r][c] = here;
                run = all;
            }
        }
    } else {
        for (int r = 0; r < nrows; r++) {
            LLVMValueRef run = zero;
            for (int c = 0; c < reps; c++) {
                carry[r][c] = run;
                run = add(L, fl, run, tot[r][c]);
            }
        }
    }
    for (int r = 0; r < nrows; r++)
        for (int t = 0; t < na; t++) {
            int c = t / chunk;
            LLVMValueRef y = add(L, fl, add(L, fl, carry[r][c], excl[r][c]), pref[r][t]);
            res[idx[r][t]] = tb_convert(L, y, accs, s, op);
        }
    tb_set(L, out, v.total, res);
}

/* ---- tensor descriptors: base, shapes and strides (elements), as i64 ---- */

void tb_lower_tensor_desc(TbLower *L, TirOp *op) {
    int n = op->nopnd;
    LLVMValueRef *e = tb_elems(L, n);
    for (int i = 0; i < n; i++) {
        TbVal *x = tb_val(L, op->opnd[i]);
        TirType t = op->opnd[i]->ty;
        if (i == 0) {
            e[0] = x->e[0];
            continue;
        }
        e[i] = tb_convert(L, x->e[0], (TirScalar)t.elem, TIR_I64, op);
    }
    tb_set(L, op->res[0], n, e);
}

/* Addresses and in-bounds predicates of a block at the op's offsets, in view order. */
static bool block_addrs(TbLower *L, TirOp *op, const TbView *v, LLVMValueRef *ptrs, LLVMValueRef *inb) {
    TirType dt = op->opnd[0]->ty;
    int r = dt.rank;
    TbVal *d = tb_val(L, op->opnd[0]);
    if (!d || d->n != 1 + 2 * r || v->rank != r) {
        tb_error(L, op, "internal: tensor descriptor of rank %d does not match the block", r);
        return false;
    }
    LLVMValueRef off[TIR_MAXRANK];
    for (int k = 0; k < r; k++) {
        TbVal *o = tb_val(L, op->opnd[1 + k]);
        off[k] = tb_convert(L, o->e[0], (TirScalar)op->opnd[1 + k]->ty.elem, TIR_I64, op);
    }
    LLVMTypeRef et = tb_mem_type(L, (TirScalar)dt.elem);
    for (int e = 0; e < v->total; e++) {
        LLVMValueRef lin = LLVMConstInt(L->i64, 0, 0), ok = LLVMConstInt(L->i1, 1, 0);
        for (int k = 0; k < r; k++) {
            LLVMValueRef c = LLVMBuildAdd(L->b, off[k], LLVMBuildZExt(L->b, tb_view_coord(L, v, e, k), L->i64, ""), "");
            /* unsigned: a negative coordinate is out of bounds too */
            ok = LLVMBuildAnd(L->b, ok, LLVMBuildICmp(L->b, LLVMIntULT, c, d->e[1 + k], ""), "");
            lin = LLVMBuildAdd(L->b, lin, LLVMBuildMul(L->b, c, d->e[1 + r + k], ""), "");
        }
        ptrs[e] = LLVMBuildGEP2(L->b, et, d->e[0], &lin, 1, "");
        inb[e] = ok;
    }
    return true;
}

void tb_lower_tload(TbLower *L, TirOp *op) {
    TirValue *r = op->res[0];
    TbView v;
    if (!tb_view(L, r->ty, &v, op))
        return;
    LLVMValueRef *ptrs = tb_elems(L, v.total), *inb = tb_elems(L, v.total), *e = tb_elems(L, v.total);
    if (!block_addrs(L, op, &v, ptrs, inb))
        return;
    tb_emit_loads(L, tir_elem_type(r->ty), v.total, 1, ptrs, NULL, NULL, inb, NULL, "", false, e);
    tb_set(L, r, v.total, e);
}

void tb_lower_tstore(TbLower *L, TirOp *op) {
    TirValue *val = op->opnd[op->nopnd - 1];
    TbVal *x = tb_val(L, val);
    TbView v;
    if (!tb_view(L, val->ty, &v, op))
        return;
    LLVMValueRef *ptrs = tb_elems(L, v.total), *inb = tb_elems(L, v.total);
    if (!block_addrs(L, op, &v, ptrs, inb))
        return;
    LLVMValueRef owner = tb_owner(L, &v);
    tb_emit_stores(L, tir_elem_type(val->ty), v.total, 1, ptrs, NULL, NULL, x->e, inb, owner, "", false);
}

/* ---- print and assert: vprintf, the CUDA runtime's device printf ---- */

static LLVMValueRef vprintf_fn(TbLower *L, LLVMTypeRef *fty) {
    LLVMTypeRef gp = LLVMPointerTypeInContext(L->c, 0);
    LLVMTypeRef args[2] = {gp, gp};
    *fty = LLVMFunctionType(L->i32, args, 2, 0);
    LLVMValueRef f = LLVMGetNamedFunction(L->mod, "vprintf");
    return f ? f : LLVMAddFunction(L->mod, "vprintf", *fty);
}

/* vprintf(fmt, args): args packed in a local buffer, each 8 bytes (ints as i64,
 * floats as double: what C's varargs promotion would give). */
static void emit_printf(TbLower *L, const char *fmt, LLVMValueRef *vals, int n) {
    LLVMTypeRef fty;
    LLVMValueRef fn = vprintf_fn(L, &fty);
    LLVMTypeRef gp = LLVMPointerTypeInContext(L->c, 0);
    LLVMValueRef str = LLVMBuildGlobalStringPtr(L->b, fmt, "fmt");
    LLVMValueRef buf = LLVMConstNull(gp);
    if (n > 0) {
        LLVMTypeRef at = LLVMArrayType2(L->i64, (uint64_t)n);
        LLVMValueRef a = LLVMBuildAlloca(L->ab, at, "printf.args");
        LLVMSetAlignment(a, 8);
        for (int i = 0; i < n; i++) {
            LLVMValueRef idx[2] = {tb_i32(L, 0), tb_i32(L, i)};
            LLVMValueRef p = LLVMBuildGEP2(L->b, at, a, idx, 2, "");
            LLVMBuildStore(L->b, vals[i], p);
        }
        buf = LLVMGetPointerAddressSpace(LLVMTypeOf(a)) ? LLVMBuildAddrSpaceCast(L->b, a, gp, "") : a;
    }
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(str)))
        str = LLVMBuildAddrSpaceCast(L->b, str, gp, "");
    LLVMValueRef args[2] = {str, buf};
    LLVMBuildCall2(L->b, fty, fn, args, 2, "");
}

/* One printf argument and its conversion, in the interpreter's format. */
static LLVMValueRef print_arg(TbLower *L, TirType t, LLVMValueRef x, const char **conv, const TirOp *op) {
    if (t.ptr) {
        *conv = "0x%llx";
        return LLVMBuildPtrToInt(L->b, x, L->i64, "");
    }
    TirScalar s = (TirScalar)t.elem;
    if (tir_scalar_is_float(s)) {
        *conv = s == TIR_F64 ? "%.17g" : "%.9g";
        return s == TIR_F64 ? x : LLVMBuildFPExt(L->b, tb_convert(L, x, s, TIR_F32, op), L->f64, "");
    }
    bool sg = s == TIR_I1 || tir_scalar_is_signed(s);
    *conv = sg ? "%lld" : "%llu";
    if (s == TIR_I1)
        return LLVMBuildZExt(L->b, x, L->i64, "");
    if (s == TIR_I64 || s == TIR_U64)
        return x;
    return sg ? LLVMBuildSExt(L->b, x, L->i64, "") : LLVMBuildZExt(L->b, x, L->i64, "");
}

static void pid_args(TbLower *L, LLVMValueRef *v) {
    static const char *const ctaid[3] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
                                         "llvm.nvvm.read.ptx.sreg.ctaid.z"};
    for (int i = 0; i < 3; i++)
        v[i] = LLVMBuildZExt(L->b, tb_call_intr(L, ctaid[i], NULL, 0, NULL, 0), L->i64, "");
}

/* Guards the code emitted by `body` with cond: returns the join block's builder position. */
static LLVMBasicBlockRef begin_if(TbLower *L, LLVMValueRef cond, const char *name) {
    LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(L->c, L->fn, name);
    LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(L->c, L->fn, "join");
    LLVMBuildCondBr(L->b, cond, then, join);
    LLVMPositionBuilderAtEnd(L->b, then);
    return join;
}
static void end_if(TbLower *L, LLVMBasicBlockRef join) {
    LLVMBuildBr(L->b, join);
    LLVMPositionBuilderAtEnd(L->b, join);
}

/* Scalars only: one line per program from thread 0, "pid (x,y,z) LABEL: v v".  With
 * tiles: one line per element, from the one thread that owns it,
 * "pid (x,y,z) LABEL[i,j]: v v" (tiles of one shape; scalars repeat on each line).
 * Lines of different threads come in no particular order. */
void tb_lower_print(TbLower *L, TirOp *op) {
    const char *label = op->attr.s ? op->attr.s : "";
    int tile_at = -1;
    for (int i = 0; i < op->nopnd; i++)
        if (tir_type_is_tile(op->opnd[i]->ty)) {
            if (tile_at >= 0 && !tir_type_eq(op->opnd[i]->ty, op->opnd[tile_at]->ty) &&
                (op->opnd[i]->ty.rank != op->opnd[tile_at]->ty.rank ||
                 memcmp(op->opnd[i]->ty.shape, op->opnd[tile_at]->ty.shape, sizeof(int32_t) * op->opnd[i]->ty.rank) ||
                 op->opnd[i]->ty.layout != op->opnd[tile_at]->ty.layout)) {
                tb_error(L, op, "print of tiles of different shapes or layouts: print them separately");
                return;
            }
            if (tile_at < 0)
                tile_at = i;
        }
    char fmt[1024];
    LLVMValueRef args[64];
    if (op->nopnd + 3 + TIR_MAXRANK > 64) {
        tb_error(L, op, "print takes at most %d values", 64 - 3 - TIR_MAXRANK);
        return;
    }
    if (tile_at < 0) {
        LLVMValueRef join = NULL;
        LLVMBasicBlockRef jb = begin_if(L, LLVMBuildICmp(L->b, LLVMIntEQ, L->tid, tb_i32(L, 0), ""), "print");
        (void)join;
        int k = snprintf(fmt, sizeof fmt, "pid (%%lld,%%lld,%%lld) %s:", label);
        pid_args(L, args);
        for (int i = 0; i < op->nopnd; i++) {
            const char *conv;
            args[3 + i] = print_arg(L, op->opnd[i]->ty, tb_val(L, op->opnd[i])->e[0], &conv, op);
            k += snprintf(fmt + k, sizeof fmt - (size_t)k, " %s", conv);
        }
        snprintf(fmt + k, sizeof fmt - (size_t)k, "\n");
        emit_printf(L, fmt, args, 3 + op->nopnd);
        end_if(L, jb);
        return;
    }
    TbView v;
    if (!tb_view(L, op->opnd[tile_at]->ty, &v, op))
        return;
    LLVMValueRef owner = tb_owner(L, &v);
    LLVMBasicBlockRef jb = owner ? begin_if(L, owner, "print") : NULL;
    for (int e = 0; e < v.total; e++) {
        int k = snprintf(fmt, sizeof fmt, "pid (%%lld,%%lld,%%lld) %s[", label);
        pid_args(L, args);
        int na = 3;
        for (int d = 0; d < v.rank; d++) {
            args[na++] = LLVMBuildZExt(L->b, tb_view_coord(L, &v, e, d), L->i64, "");
            k += snprintf(fmt + k, sizeof fmt - (size_t)k, d ? ",%%lld" : "%%lld");
        }
        k += snprintf(fmt + k, sizeof fmt - (size_t)k, "]:");
        for (int i = 0; i < op->nopnd; i++) {
            const char *conv;
            TbVal *x = tb_val(L, op->opnd[i]);
            args[na++] = print_arg(L, tir_elem_type(op->opnd[i]->ty), x->e[x->n == 1 ? 0 : e], &conv, op);
            k += snprintf(fmt + k, sizeof fmt - (size_t)k, " %s", conv);
        }
        snprintf(fmt + k, sizeof fmt - (size_t)k, "\n");
        emit_printf(L, fmt, args, na);
    }
    if (jb)
        end_if(L, jb);
}

/* --debug: any false element prints "pid (x,y,z) thread T: assertion failed: MSG" and
 * traps (the launch fails with an error, as CUDA's assert does). */
void tb_lower_assert(TbLower *L, TirOp *op) {
    TbVal *c = tb_val(L, op->opnd[0]);
    LLVMValueRef bad = LLVMConstInt(L->i1, 0, 0);
    for (int i = 0; i < c->n; i++)
        bad = LLVMBuildOr(L->b, bad, LLVMBuildNot(L->b, c->e[i], ""), "");
    LLVMBasicBlockRef jb = begin_if(L, bad, "assert.fail");
    char fmt[600];
    snprintf(fmt, sizeof fmt, "pid (%%lld,%%lld,%%lld) thread %%lld: assertion failed: %s\n",
             op->attr.s ? op->attr.s : "");
    LLVMValueRef args[4];
    pid_args(L, args);
    args[3] = LLVMBuildZExt(L->b, L->tid, L->i64, "");
    emit_printf(L, fmt, args, 4);
    tb_call_intr(L, "llvm.trap", NULL, 0, NULL, 0);
    end_if(L, jb);
}
