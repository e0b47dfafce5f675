/* dot on the tensor cores: mma.sync over the accumulator and operand layouts.
 *
 * The layout pass gives a dot's result the mma layout (#mma: warps wm x wn over the
 * M x N tile, each warp's part a grid of m16n8 instruction tiles, warps interleaved at
 * instruction granularity) and its operands the matching operand layouts (#dot_op).
 * This file is the per-thread view of those layouts (which elements a thread holds, in
 * which order: the order mma.sync takes its fragments in) and the lowering of dot.
 *
 * Fragments, for lane l (g = l / 4, t = l % 4), kw elements of K per 32-bit register and
 * an instruction K of ik (f16/bf16: kw 2, ik 16; tf32: 1, 8; 8-bit: 4, 32):
 *   accumulator, 4 per instruction tile:  row g + 8 (c / 2),            col 2t + c % 2
 *   A, 4 kw per tile:                     row g + 8 ((i / kw) % 2),      k kw t + i % kw + ik/2 (i / 2kw)
 *   B, 2 kw per tile:                     k kw t + i % kw + ik/2 (i / kw), col g
 * Element numbers: accumulator ((mi tn + ni) 4 + c), A ((mi tk + ki) 4kw + i),
 * B ((ni tk + ki) 2kw + i); instruction tile mi of warp (w_m, w_n) starts at row
 * 16 (w_m + wm mi), tile ni at column 8 (w_n + wn ni).  With the N tiles grouped by ng
 * (tir_layout_mma_grouped) a column c = 8 wn hi ng + 8 wn j + lo (j = ni % ng) moves to
 * 8 wn hi ng + lo ng + j: the thread's part (lo's 8 w_n + 2t or g) times ng, the
 * constant part ni % ng + 8 wn ng (ni / ng) plus (c % 2) ng. */
#include "tb_internal.h"
#include "layout.h"

#include <string.h>

/* ---- packing fragments ---- */

/* v when x is element i of vector v (a constant index), else NULL. */
static LLVMValueRef element_of(LLVMValueRef x, unsigned i) {
    if (!LLVMIsAExtractElementInst(x))
        return NULL;
    LLVMValueRef ix = LLVMGetOperand(x, 1);
    return LLVMIsAConstantInt(ix) && LLVMConstIntGetZExtValue(ix) == i ? LLVMGetOperand(x, 0) : NULL;
}

/* n elements of `bits` bits each packed into one i32, the first in the low bits. */
static LLVMValueRef pack_i32(TbLower *L, LLVMValueRef *e, int n, int bits) {
    LLVMTypeRef it = LLVMIntTypeInContext(L->c, (unsigned)bits);
    /* elements 0..n-1 of one 32-bit vector (a register lower_smem built whole): itself */
    LLVMValueRef whole = element_of(e[0], 0);
    LLVMTypeRef wt = whole ? LLVMTypeOf(whole) : NULL;
    bool same = wt && LLVMGetTypeKind(wt) == LLVMVectorTypeKind && LLVMGetVectorSize(wt) == (unsigned)n &&
                (LLVMGetTypeKind(LLVMGetElementType(wt)) == LLVMIntegerTypeKind
                     ? LLVMGetIntTypeWidth(LLVMGetElementType(wt)) == (unsigned)bits
                     : bits == 16 && (LLVMGetTypeKind(LLVMGetElementType(wt)) == LLVMBFloatTypeKind ||
                                      LLVMGetTypeKind(LLVMGetElementType(wt)) == LLVMHalfTypeKind));
    for (int i = 1; same && i < n; i++)
        same = element_of(e[i], (unsigned)i) == whole;
    if (same)
        return LLVMBuildBitCast(L->b, whole, L->i32, "");
    LLVMValueRef r = NULL;
    for (int i = 0; i < n; i++) {
        LLVMValueRef x = e[i];
        if (LLVMGetTypeKind(LLVMTypeOf(x)) != LLVMIntegerTypeKind)
            x = LLVMBuildBitCast(L->b, x, it, "");
        x = LLVMBuildZExt(L->b, x, L->i32, "");
        if (i)
            x = LLVMBuildShl(L->b, x, tb_i32(L, i * bits), "");
        r = r ? LLVMBuildOr(L->b, r, x, "") : x;
    }
    return r;
}

static LLVMValueRef pack_half2(TbLower *L, LLVMValueRef lo, LLVMValueRef hi) {
    LLVMTypeRef vt = LLVMVectorType(L->f16, 2);
    /* both halves of one <2 x half> (an ldmatrix register): itself, no rebuild for LLVM
     * to fold (128x256x64: 1536 insertelements fewer before the optimiser) */
    LLVMValueRef whole = element_of(lo, 0);
    if (whole && whole == element_of(hi, 1) && LLVMTypeOf(whole) == vt)
        return whole;
    LLVMValueRef r = LLVMGetUndef(vt);
    r = LLVMBuildInsertElement(L->b, r, lo, tb_i32(L, 0), "");
    return LLVMBuildInsertElement(L->b, r, hi, tb_i32(L, 1), "");
}

/* f32 -> tf32 bits, round to nearest even (the interpreter's rule), inf and NaN kept.
 * sm_90 has the instruction (cvt.rn.tf32.f32; below sm_90 only .rna, ties away from zero,
 * which is not the interpreter's rule): one instruction instead of six integer ops an
 * element, which on the 128x128x32 tile were 576 of the loop's ~1000 instructions for its
 * 64 mmas. */
static LLVMValueRef to_tf32(TbLower *L, LLVMValueRef x) {
    if (L->cc >= 90)
        return tb_asm(L, L->i32, "cvt.rn.tf32.f32 $0, $1;", "=r,f", &x, 1, false);
    LLVMValueRef u = LLVMBuildBitCast(L->b, x, L->i32, "");
    LLVMValueRef odd = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, u, tb_i32(L, 13), ""), tb_i32(L, 1), "");
    LLVMValueRef r = LLVMBuildAdd(L->b, u, LLVMBuildAdd(L->b, odd, tb_i32(L, 0xfff), ""), "");
    r = LLVMBuildAnd(L->b, r, tb_i32(L, (int32_t)~0x1fffu), "");
    LLVMValueRef special =
        LLVMBuildICmp(L->b, LLVMIntEQ, LLVMBuildAnd(L->b, u, tb_i32(L, 0x7f800000), ""), tb_i32(L, 0x7f800000), "");
    return LLVMBuildSelect(L->b, special, u, r, "");
}

/* The 32-bit registers of one instruction's fragment of an operand: nreg registers
 * from the elements at first.. (kw each). */
typedef enum { IN_F16, IN_BF16, IN_TF32, IN_TF32_HI, IN_TF32_LO, IN_8BIT, IN_BITS } InKind;

static void fragment(TbLower *L, LLVMValueRef *e, int nreg, int kw, InKind k, LLVMValueRef *out) {
    for (int r = 0; r < nreg; r++) {
        LLVMValueRef *x = e + r * kw;
        switch (k) {
        case IN_F16: out[r] = pack_half2(L, x[0], x[1]); break;
        case IN_BF16: out[r] = pack_i32(L, x, 2, 16); break;
        case IN_8BIT: out[r] = pack_i32(L, x, 4, 8); break;
        case IN_BITS: out[r] = x[0]; break; /* already a register (converted tf32) */
        case IN_TF32:
        case IN_TF32_HI: out[r] = to_tf32(L, x[0]); break;
        case IN_TF32_LO: {
            /* the part the high tf32 misses, itself rounded to tf32 (3xTF32) */
            LLVMValueRef hi = LLVMBuildBitCast(L->b, to_tf32(L, x[0]), L->f32, "");
            out[r] = to_tf32(L, LLVMBuildFSub(L->b, x[0], hi, ""));
            break;
        }
        }
    }
}

static const char *mma_name(TirScalar a, TirScalar b, bool tf32) {
    switch (a) {
    case TIR_F16: return "llvm.nvvm.mma.m16n8k16.row.col.f32.f32";
    case TIR_BF16: return "llvm.nvvm.mma.m16n8k16.row.col.bf16";
    case TIR_F32: return "llvm.nvvm.mma.m16n8k8.row.col.tf32";
    case TIR_I8: return "llvm.nvvm.mma.m16n8k32.row.col.s8";
    case TIR_F8E4M3:
        return b == TIR_F8E4M3 ? "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e4m3.f32"
                               : "llvm.nvvm.mma.m16n8k32.row.col.f32.e4m3.e5m2.f32";
    case TIR_F8E5M2:
        return b == TIR_F8E4M3 ? "llvm.nvvm.mma.m16n8k32.row.col.f32.e5m2.e4m3.f32"
                               : "llvm.nvvm.mma.m16n8k32.row.col.f32.e5m2.e5m2.f32";
    default: (void)tf32; return NULL;
    }
}

/* ---- 8-bit floats on sm_90: f16 mmas ----
 * sm_90 has no f8 mma.sync in hardware: ptxas turns each m16n8k32 e4m3 into two f16
 * m16n8k16 on zero accumulators and four FADDs into the real one (SASS: HMMA ..., RZ),
 * which on gemm_f8's 64x128x64 tile kept 64 partial sums live beside the accumulator
 * and spilled.  Every e4m3 and e5m2 value is exact in f16 (f16 is e5m10), so the
 * fragments are converted here (cvt.rn.f16x2.e{4m3,5m2}x2, one instruction per two
 * values) and the two f16 mmas accumulate in place: the same exact products, summed in
 * f32.  K order inside an instruction does not matter to a sum as long as A and B agree:
 * f8 register r of thread t holds K 4t..4t+3 (+16 for the second pair of registers);
 * its low two bytes are the f16 register at K 2t, 2t+1 of the first k16 mma and its high
 * two bytes the one at K 8+2t, 9+2t, for A and for B alike. */
static LLVMValueRef f8x2_to_f16x2(TbLower *L, LLVMValueRef x, bool hi, bool e5m2) {
    if (hi)
        x = LLVMBuildLShr(L->b, x, tb_i32(L, 16), "");
    LLVMValueRef h = LLVMBuildTrunc(L->b, x, LLVMInt16TypeInContext(L->c), "");
    LLVMValueRef r =
        tb_asm(L, L->i32, e5m2 ? "cvt.rn.f16x2.e5m2x2 $0, $1;" : "cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", &h, 1, false);
    return LLVMBuildBitCast(L->b, r, LLVMVectorType(L->f16, 2), "");
}

/* One m16n8k32 f8 operand fragment (4 registers of A or 2 of B) as the f16 fragments of
 * its two m16n8k16 halves: out[0..n-1] the first, out[n..2n-1] the second (n = 4 or 2). */
static void f8_halves(TbLower *L, const LLVMValueRef *f, int nreg, bool e5m2, LLVMValueRef *out) {
    if (nreg == 4)
        for (int h = 0; h < 2; h++) { /* A: rows g and g + 8, K low bytes then high */
            out[4 * h + 0] = f8x2_to_f16x2(L, f[2 * h], false, e5m2);
            out[4 * h + 1] = f8x2_to_f16x2(L, f[2 * h + 1], false, e5m2);
            out[4 * h + 2] = f8x2_to_f16x2(L, f[2 * h], true, e5m2);
            out[4 * h + 3] = f8x2_to_f16x2(L, f[2 * h + 1], true, e5m2);
        }
    else
        for (int h = 0; h < 2; h++) {
            out[2 * h + 0] = f8x2_to_f16x2(L, f[h], false, e5m2);
            out[2 * h + 1] = f8x2_to_f16x2(L, f[h], true, e5m2);
        }
}

static void mma(TbLower *L, const char *name, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *c) {
    LLVMValueRef args[10];
    for (int i = 0; i < 4; i++)
        args[i] = a[i];
    args[4] = b[0];
    args[5] = b[1];
    for (int i = 0; i < 4; i++)
        args[6 + i] = c[i];
    LLVMValueRef r = tb_call_intr(L, name, NULL, 0, args, 10);
    for (int i = 0; i < 4; i++)
        c[i] = LLVMBuildExtractValue(L->b, r, (unsigned)i, "");
}

/* dot's K steps for f8 operands on sm_90 (f8 register fragments -> f16 halves, two
 * m16n8k16 mmas each), accumulating into acc; tb_lower_dot does the rest. */
static void f8_ksteps(TbLower *L, const TirValue *av, const TirValue *bv, const TbView *va, const TbView *vb,
                      const TbView *vc, const TbVal *A, const TbVal *B, LLVMValueRef *acc) {
    const char *h16 = mma_name(TIR_F16, TIR_F16, false);
    bool a5 = av->ty.elem == TIR_F8E5M2, b5 = bv->ty.elem == TIR_F8E5M2;
    int kw = va->kw;
    LLVMValueRef *Ah = tb_elems(L, vc->tm * 8), *Bh = tb_elems(L, vc->tn * 4);
    for (int ki = 0; ki < va->tk; ki++) {
        tb_smem_kstep(L, av, ki + 1);
        tb_smem_kstep(L, bv, ki + 1);
        /* each fragment converted once per K step (an A fragment serves every N tile) */
        for (int mi = 0; mi < vc->tm; mi++) {
            LLVMValueRef fa[4];
            fragment(L, A->e + (mi * va->tk + ki) * 4 * kw, 4, kw, IN_8BIT, fa);
            f8_halves(L, fa, 4, a5, Ah + mi * 8);
        }
        for (int nj = 0; nj < vc->tn; nj++) {
            LLVMValueRef fb[2];
            fragment(L, B->e + (nj * vb->tk + ki) * 2 * kw, 2, kw, IN_8BIT, fb);
            f8_halves(L, fb, 2, b5, Bh + nj * 4);
        }
        for (int h = 0; h < 2; h++)
            for (int mi = 0; mi < vc->tm; mi++)
                for (int ni = 0; ni < vc->tn; ni++) {
                    int nj = mi % 2 ? vc->tn - 1 - ni : ni; /* serpentine, as below */
                    mma(L, h16, Ah + mi * 8 + 4 * h, Bh + nj * 4 + 2 * h, acc + (mi * vc->tn + nj) * 4);
                }
    }
}

void tb_lower_dot(TbLower *L, TirOp *op) {
    TirValue *av = op->opnd[0], *bv = op->opnd[1], *cv = op->opnd[2], *out = op->res[0];
    TbView va, vb, vc;
    if (!tb_view_mma_ok(L, av->ty, &va, op) || !tb_view_mma_ok(L, bv->ty, &vb, op) ||
        !tb_view_mma_ok(L, cv->ty, &vc, op))
        return;
    if (va.mma != 2 || vb.mma != 3 || vc.mma != 1 || out->ty.layout != cv->ty.layout) {
        tb_error(L, op, "dot needs its operands in #dot_op layouts and its accumulator in #mma: run the 'layout' pass");
        return;
    }
    TirScalar ea = (TirScalar)av->ty.elem, eb = (TirScalar)bv->ty.elem;
    bool tf32 = op->attr.i[0] == 1;
    const char *name = mma_name(ea, eb, tf32);
    if (!name) {
        tb_error(L, op, "no tensor-core dot for %s inputs", tir_scalar_name(ea));
        return;
    }
    if ((ea == TIR_F8E4M3 || ea == TIR_F8E5M2) && L->cc < 89) {
        tb_error(L, op, "dot of %s x %s needs sm_89 or later (f8 mma.sync), this target is sm_%d", tir_scalar_name(ea),
                 tir_scalar_name(eb), L->cc);
        return;
    }
    /* f8 on sm_90 and up runs f16 mmas (f8_ksteps): only sm_89 needs LLVM's f8 mma */
    bool f8_as_f16 = (ea == TIR_F8E4M3 || ea == TIR_F8E5M2) && L->cc >= 90;
    if (f8_as_f16)
        name = mma_name(TIR_F16, TIR_F16, false);
    if (!LLVMLookupIntrinsicID(name, strlen(name))) {
        tb_error(L, op, "this LLVM has no %s: dot of %s inputs needs a newer LLVM", name, tir_scalar_name(ea));
        return;
    }
    InKind k = ea == TIR_F16 ? IN_F16 : ea == TIR_BF16 ? IN_BF16 : ea == TIR_F32 ? IN_TF32 : IN_8BIT;
    int kw = va.kw;
    TbVal *A = tb_val(L, av), *B = tb_val(L, bv), *C = tb_val(L, cv);
    if (A->n != va.total || B->n != vb.total || C->n != vc.total) {
        tb_error(L, op, "internal: dot operands hold %d/%d/%d elements, their layouts %d/%d/%d", A->n, B->n, C->n,
                 va.total, vb.total, vc.total);
        return;
    }
    LLVMValueRef *acc = tb_elems(L, vc.total);
    memcpy(acc, C->e, (size_t)vc.total * sizeof *acc);
    /* exact f32: three tf32 products (hi x hi + hi x lo + lo x hi) keep ~fp32 accuracy */
    int passes = ea == TIR_F32 && !tf32 ? 3 : 1;
    /* K step by K step, the operands of step ki + 1 read (ldmatrix) before the mmas of
     * step ki: one step's fragments are live at a time, and their shared-memory latency
     * overlaps the tensor cores' work */
    tb_smem_kstep(L, av, 0);
    tb_smem_kstep(L, bv, 0);
    /* tf32: each element converted once, at its K step (an A element serves BN/8 mmas, a
     * B element BM/16; the sm_90 conversion is an asm that LLVM does not merge) */
    bool once = passes == 1 && k == IN_TF32;
    InKind kin = once ? IN_BITS : k; /* what fragment() gets: the converted bits */
    LLVMValueRef *Ac = once ? tb_elems(L, va.total) : NULL, *Bc = once ? tb_elems(L, vb.total) : NULL;
    if (f8_as_f16)
        f8_ksteps(L, av, bv, &va, &vb, &vc, A, B, acc);
    for (int ki = 0; !f8_as_f16 && ki < va.tk; ki++) {
        tb_smem_kstep(L, av, ki + 1);
        tb_smem_kstep(L, bv, ki + 1);
        for (int mi = 0; once && mi < vc.tm; mi++)
            fragment(L, A->e + (mi * va.tk + ki) * 4 * kw, 4 * kw, 1, IN_TF32, Ac + (mi * va.tk + ki) * 4 * kw);
        for (int nj = 0; once && nj < vc.tn; nj++)
            fragment(L, B->e + (nj * vb.tk + ki) * 2 * kw, 2 * kw, 1, IN_TF32, Bc + (nj * vb.tk + ki) * 2 * kw);
        for (int mi = 0; mi < vc.tm; mi++)
            for (int ni = 0; ni < vc.tn; ni++) {
                /* serpentine over N: consecutive mmas share an A fragment */
                int nj = mi % 2 ? vc.tn - 1 - ni : ni;
                LLVMValueRef *c = acc + (mi * vc.tn + nj) * 4;
                LLVMValueRef *ae = (once ? Ac : A->e) + (mi * va.tk + ki) * 4 * kw;
                LLVMValueRef *be = (once ? Bc : B->e) + (nj * vb.tk + ki) * 2 * kw;
                for (int p = 0; p < passes; p++) {
                    LLVMValueRef fa[4], fb[2];
                    InKind ka = passes == 1 ? kin : p == 0 ? IN_TF32_LO : IN_TF32_HI;
                    InKind kb = passes == 1 ? kin : p == 1 ? IN_TF32_LO : IN_TF32_HI;
                    fragment(L, ae, 4, kw, ka, fa);
                    fragment(L, be, 2, kw, kb, fb);
                    /* the small products first: they are added to the accumulator before
                     * the large one rounds it */
                    mma(L, name, fa, fb, c);
                }
            }
    }
    tb_set(L, out, vc.total, acc);
}
