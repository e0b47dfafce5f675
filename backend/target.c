/* NVPTX target: LLVM initialisation, one target machine per architecture, the optimisation
 * pipeline and PTX emission; and tb_emit, the backend's entry point. */
#include "tb_internal.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/Support.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The arch named in the options (NULL: the default), from the target table (ir/target.def). */
static const TirTarget *arch_find(const char *arch) {
    return arch ? tir_target_find(arch) : tir_target_default();
}

bool tb_arch_known(const char *arch) {
    return arch_find(arch) != NULL;
}

int tb_arch_cc(const char *arch) {
    const TirTarget *a = arch_find(arch);
    return a ? a->cc : 0;
}

static pthread_once_t tb_llvm_once = PTHREAD_ONCE_INIT;
static void llvm_init(void) {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    /* 32-bit pointers for shared (and local, const) memory: the data layout gets p3:32,
     * shared addresses are one register and their arithmetic 32-bit (with 64-bit ones,
     * every ldmatrix and cp.async address paid a sign extension and a 64-bit add).
     * LLVM's options are process-wide: set once, before any target machine.  LLVM 19's
     * NVPTX cannot select cp.async on 32-bit shared pointers (it aborts: "Cannot select
     * intrinsic %llvm.nvvm.cp.async.cg.shared.global.16.s"); LLVM 22 can, and is the one
     * measured, so older ones keep 64-bit shared pointers. */
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    if (major >= 22) {
        const char *argv[] = {"tilec", "-nvptx-short-ptr"};
        LLVMParseCommandLineOptions(2, argv, NULL);
    }
}

static LLVMTargetMachineRef make_tm(const TirTarget *a, int opt_level, TirDiagFn diag, void *ud) {
    pthread_once(&tb_llvm_once, llvm_init);
    LLVMTargetRef t;
    char *err = NULL;
    if (LLVMGetTargetFromTriple(TB_TRIPLE, &t, &err)) {
        tb_diag(diag, ud, "error: LLVM has no NVPTX target: %s", err ? err : "?");
        LLVMDisposeMessage(err);
        return NULL;
    }
    /* Less, not Aggressive: over every example variant (sm_90a, 2026-11-30) the same
     * ptxas registers class and spills, 10 fewer PTX instructions in all (argmax,
     * col_sum, debug), and ~4 ms less codegen on layernorm BLOCK=16384.  Default gave
     * the same PTX as Less.  The PTX version is the table's: the oldest with every
     * instruction the backend emits for the arch, so older drivers load it. */
    char features[16];
    snprintf(features, sizeof features, "+ptx%d", a->ptx);
    return LLVMCreateTargetMachine(t, TB_TRIPLE, a->name, features,
                                   opt_level ? LLVMCodeGenLevelLess : LLVMCodeGenLevelNone, LLVMRelocDefault,
                                   LLVMCodeModelDefault);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *dup_mem(const char *p, size_t n) {
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

/* The LLVM optimisation pipeline.  The lowering emits straight-line per-element code with
 * the vector accesses the layout proved, so what it needs is folding, CSE, DCE, LICM and CFG
 * cleanup.  O3's extra passes (SLP vectorisation, GVN) cost ~15 ms on a 128-element-per-thread
 * kernel for the same PTX; default<O1> still runs the inliner, the loop pipeline and several
 * more instcombine rounds, which on such a kernel find nothing more to do.
 *
 * TB_LEAN_PIPELINE is the part of O1's function simplification that this IR needs; each pass
 * past the obvious ones earned its place against default<O1> on the example variants:
 * nvvm-intr-range (the tid.x range: instcombine drops masks of the thread index), reassociate
 * (operand order: ptxas gave tma_transpose 72 instead of 64 registers without it),
 * infer-alignment (the shared scratch reads merge into ld.shared.v4), globalopt and
 * function-attrs (the out-of-line Payne-Hanek call gets fastcc and memory(none): posenc 56
 * instead of 40 registers without them).  Over every example variant with at least
 * TB_LEAN_MIN_INSNS LLVM instructions before optimisation (sm_90a, plain and --div16,
 * 2026-11-30), the ptxas registers and spills are identical to default<O1>'s and so is the
 * PTX instruction count, except transpose 32x64 and 64x32 --div16 (208 instead of 219), at half
 * the optimisation time (layernorm BLOCK=16384: 20 -> 9 ms).  Smaller kernels keep
 * default<O1>: there its loop rotation and extra rounds save a few instructions or registers
 * on some (axpby, col_sum, debug, row_stats BC=256, transpose 16x16), and its cost is a few
 * milliseconds at most. */
#define TB_LEAN_PIPELINE                                                               \
    "globalopt,cgscc(function-attrs),function(nvvm-intr-range,sroa,early-cse<memssa>," \
    "simplifycfg,instcombine<no-verify-fixpoint>,reassociate,loop-mssa(licm),bdce,"    \
    "instcombine<no-verify-fixpoint>,adce,simplifycfg,infer-alignment)"
enum { TB_LEAN_MIN_INSNS = 800 };

static long count_insns(LLVMModuleRef mod) {
    long n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(mod); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
            for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
                n++;
    return n;
}

static const char *opt_pipeline(LLVMModuleRef mod) {
    return count_insns(mod) >= TB_LEAN_MIN_INSNS ? TB_LEAN_PIPELINE : "default<O1>";
}

/* NVPTX code generation level by size after optimisation.  Codegen is most of the compile
 * (instruction selection grows with the instruction count) and ptxas redoes the machine
 * optimisations anyway: on the biggest example variants (128 elements per thread, over
 * TB_NONE_MIN_INSNS instructions: layernorm and softmax BLOCK=16384 with 4 warps, plain
 * and --div16, sm_90a, 2026-11-30) CodeGenOpt::None gave ptxas code with the same
 * registers and spills and the same or 8 fewer SASS instructions, at 20 instead of 32 ms of
 * codegen.  Below it Less stays: there None cost registers (row_stats BC=1024, BR=4: 104
 * instead of 80) or SASS instructions (rmsnorm BLOCK=4096: 8 more). */
enum { TB_NONE_MIN_INSNS = 1400 };

/* A lower bound on the registers one thread of `kernel` holds at once, for the register
 * budget (tb_ptxas): the accumulator of its largest loop-carried `dot` (a dot in a `for`
 * body whose result the body yields), all live at the loop's back edge (each element held
 * by some thread: at least numel * bytes / 4 / threads registers), plus the A and B
 * fragments of one mma.sync (4 + 2 registers at every shape), the loop's counter and one
 * address.  A cap below it must spill: on matmul 128x256 and 256x128 with 8 warps (128
 * accumulator registers, cap 128) ptxas took as long as the uncapped compile to spill. */
enum { TB_DOT_LIVE_EXTRA = 4 + 2 + 2 };

static bool dot_acc_bytes(TirOp *op, void *ud) {
    if (op->code != TIR_OP_DOT || op->nres != 1 || !tir_type_is_tile(op->res[0]->ty))
        return true;
    TirBlock *body = op->parent;
    TirOp *y = body ? body->last : NULL;
    if (!body || !body->parent || body->parent->code != TIR_OP_FOR || !y || y->code != TIR_OP_YIELD)
        return true;
    bool carried = false;
    for (int i = 0; i < y->nopnd; i++)
        carried |= y->opnd[i] == op->res[0];
    TirType t = op->res[0]->ty;
    int64_t b = tir_type_numel(t) * tir_scalar_bytes((TirScalar)t.elem);
    int64_t *most = ud;
    if (carried && b > *most)
        *most = b;
    return true;
}

static int live_floor(TirFunc *kernel, int threads) {
    int64_t bytes = 0;
    tir_walk_func(kernel, dot_acc_bytes, &bytes);
    if (bytes == 0 || threads <= 0)
        return 0;
    return (int)((bytes + 4 * (int64_t)threads - 1) / (4 * (int64_t)threads)) + TB_DOT_LIVE_EXTRA;
}

/* One lowering to `kind`; for a cubin with ptx non-NULL, the PTX it came from too. */
static int emit_once(TirModule *m, TirFunc *kernel, const TbOptions *opt, TbOutput kind, char **out, size_t *len,
                     char **ptx_out, size_t *ptx_len, TbReport *report, TbAltCubin *alt, TirDiagFn diag, void *ud) {
    if (alt)
        *alt = (TbAltCubin){.cubin = NULL, .len = 0, .regs = -1};
    TbOptions defaults = {0};
    if (!opt)
        opt = &defaults;
    *out = NULL;
    *len = 0;
    const TirTarget *a = arch_find(opt->arch);
    if (!a) {
        tb_diag(diag, ud, "error: unknown architecture '%s' (known: %s)", opt->arch, tir_target_names());
        return 1;
    }
    if (report) {
        memset(report, 0, sizeof *report);
        report->regs = report->spill_loads = report->spill_stores = report->stack_bytes = -1;
    }
    TbReport times = {0};
    double t0 = now_s();
    LLVMTargetMachineRef tm = make_tm(a, opt->opt_level, diag, ud);
    if (!tm)
        return 1;
    LLVMContextRef ctx = LLVMContextCreate();
    TbLowerResult lr = {0};
    LLVMModuleRef mod = tb_lower_kernel(ctx, m, kernel, a->name, a->cc, opt, &lr, diag, ud);
    int errors = 0;
    if (!mod) {
        errors = 1;
        goto done;
    }
    LLVMSetTarget(mod, TB_TRIPLE);
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
    char *dl = LLVMCopyStringRepOfTargetData(td);
    LLVMSetDataLayout(mod, dl);
    LLVMDisposeMessage(dl);
    LLVMDisposeTargetData(td);
    char *verr = NULL;
    if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &verr)) {
        tb_diag(diag, ud, "%s: error: internal: the backend built invalid LLVM IR: %s", kernel->name,
                verr ? verr : "?");
        LLVMDisposeMessage(verr);
        errors = 1;
        goto done_mod;
    }
    LLVMDisposeMessage(verr);
    double t1 = now_s();
    times.t_build = t1 - t0;
    if (opt->opt_level) {
        LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
        LLVMErrorRef e = LLVMRunPasses(mod, opt_pipeline(mod), tm, po);
        LLVMDisposePassBuilderOptions(po);
        if (e) {
            char *msg = LLVMGetErrorMessage(e);
            tb_diag(diag, ud, "%s: error: LLVM optimisation failed: %s", kernel->name, msg);
            LLVMDisposeErrorMessage(msg);
            errors = 1;
            goto done_mod;
        }
    }
    bool none = !opt->opt_level;
    if (opt->opt_level && count_insns(mod) >= TB_NONE_MIN_INSNS) {
        LLVMTargetMachineRef big = make_tm(a, 0, diag, ud);
        if (big) {
            LLVMDisposeTargetMachine(tm);
            tm = big;
            none = true;
        }
    }
    int live = live_floor(kernel, kernel->warps * 32);
    if (report) {
        report->codegen_none = none;
        report->live_floor = live;
    }
    double t2 = now_s();
    times.t_opt = t2 - t1;
    if (report) {
        report->flops = lr.flops;
        report->global_bytes = lr.global_bytes;
        report->smem_bytes = lr.smem_bytes;
        report->threads = lr.threads;
    }
    if (kind == TB_OUT_LLVM) {
        char *s = LLVMPrintModuleToString(mod);
        *len = strlen(s);
        *out = dup_mem(s, *len);
        LLVMDisposeMessage(s);
        goto done_mod;
    }
    LLVMMemoryBufferRef buf = NULL;
    char *emsg = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &emsg, &buf)) {
        tb_diag(diag, ud, "%s: error: NVPTX code generation failed: %s", kernel->name, emsg ? emsg : "?");
        LLVMDisposeMessage(emsg);
        errors = 1;
        goto done_mod;
    }
    const char *ptx = LLVMGetBufferStart(buf);
    size_t plen = LLVMGetBufferSize(buf);
    double t3 = now_s();
    times.t_codegen = t3 - t2;
    if (kind == TB_OUT_PTX) {
        *out = dup_mem(ptx, plen);
        *len = plen;
    } else {
        TbOptions o = *opt;
        o.arch = a->name;
        o.threads = kernel->warps * 32;
        o.live_floor = live;
        errors = tb_ptxas(ptx, plen, &o, kernel->name, out, len, report, alt, diag, ud);
        times.t_ptxas = now_s() - t3;
        if (ptx_out && !errors) {
            *ptx_out = dup_mem(ptx, plen);
            *ptx_len = plen;
        }
    }
    LLVMDisposeMemoryBuffer(buf);
done_mod:
    LLVMDisposeModule(mod);
    if (report) {
        report->t_build = times.t_build;
        report->t_opt = times.t_opt;
        report->t_codegen = times.t_codegen;
        report->t_ptxas = times.t_ptxas;
    }
done:
    LLVMContextDispose(ctx);
    LLVMDisposeTargetMachine(tm);
    return errors;
}

int tb_spill_bytes(const TbReport *r) {
    return (r->spill_stores > 0 ? r->spill_stores : 0) + (r->spill_loads > 0 ? r->spill_loads : 0);
}

/* A cubin that spills is made again from the next lowerings (TbOptions.lowering), until
 * one does not, and the one that spills least is kept (the earliest on a tie).  ptxas
 * decides where values live, and a small change of the PTX moves its spills: over the dot
 * examples' variants (docs/backend.md, "Lowerings") each lowering spills on some where
 * another does not.  Only kernels with a loop-carried dot (live_floor > 0) differ between
 * them, and only cubins that spill pay the further compiles.  The further compiles say
 * nothing (no diag, no diag_at): one that fails is not kept, and the first one's messages
 * are the ones that count. */
static int emit_best(TirModule *m, TirFunc *kernel, const TbOptions *opt, TbOutput kind, char **out, size_t *len,
                     char **ptx, size_t *ptx_len, TbReport *report, TbAltCubin *alt, TirDiagFn diag, void *ud) {
    TbReport own, *rep = report ? report : &own;
    int errors = emit_once(m, kernel, opt, kind, out, len, ptx, ptx_len, rep, alt, diag, ud);
    if (errors || kind != TB_OUT_CUBIN || !opt || !opt->opt_level || opt->lowering || opt->only_lowering ||
        rep->live_floor <= 0)
        return errors;
    for (int l = 1; l < TB_LOWERINGS && tb_spill_bytes(rep) > 0; l++) {
        TbOptions o2 = *opt;
        o2.lowering = l;
        o2.diag_at = NULL;
        char *out2 = NULL, *ptx2 = NULL;
        size_t len2 = 0, ptx2_len = 0;
        TbReport rep2;
        TbAltCubin alt2 = {0};
        bool better = emit_once(m, kernel, &o2, kind, &out2, &len2, ptx ? &ptx2 : NULL, &ptx2_len, &rep2,
                                alt ? &alt2 : NULL, NULL, NULL) == 0 &&
                      tb_spill_bytes(&rep2) < tb_spill_bytes(rep);
        TbReport *keep = better ? &rep2 : rep, *drop = better ? rep : &rep2;
        keep->t_build += drop->t_build;
        keep->t_opt += drop->t_opt;
        keep->t_codegen += drop->t_codegen;
        keep->t_ptxas += drop->t_ptxas;
        if (better) {
            free(*out);
            *out = out2;
            *len = len2;
            if (ptx) {
                free(*ptx);
                *ptx = ptx2;
                *ptx_len = ptx2_len;
            }
            *rep = rep2;
            if (alt) {
                free(alt->cubin);
                *alt = alt2;
            }
        } else {
            free(out2);
            free(ptx2);
            free(alt2.cubin);
        }
    }
    return 0;
}

int tb_emit(TirModule *m, TirFunc *kernel, const TbOptions *opt, TbOutput kind, char **out, size_t *len,
            TbReport *report, TbAltCubin *alt, TirDiagFn diag, void *ud) {
    return emit_best(m, kernel, opt, kind, out, len, NULL, NULL, report, alt, diag, ud);
}

int tb_emit_cubin_ptx(TirModule *m, TirFunc *kernel, const TbOptions *opt, char **cubin, size_t *cubin_len, char **ptx,
                      size_t *ptx_len, TbReport *report, TbAltCubin *alt, TirDiagFn diag, void *ud) {
    *ptx = NULL;
    *ptx_len = 0;
    return emit_best(m, kernel, opt, TB_OUT_CUBIN, cubin, cubin_len, ptx, ptx_len, report, alt, diag, ud);
}
