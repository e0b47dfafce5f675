/* The math lowering (backend/lower_math.c) against the interpreter's math (ir/fmath.c), bit
 * for bit, without a GPU: each builtin's LLVM IR, as the backend emits it for the GPU, is
 * compiled for this machine (MCJIT) and run on ~1.4 million inputs per function (every f16
 * value, random bit patterns of every binade, uniform sweeps, the specials); every result
 * must have the bits ir/fmath.c gives (NaN: any NaN).  The lowering uses only IEEE-exact
 * operations (fma, +, -, *, /, sqrt, rint, integer work), which this CPU computes as the GPU
 * does; tests/gpu/gpu_math.c runs the same comparison on the GPU. */
#include "tb_internal.h"
#include "tmath.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/Target.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t next64(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

typedef struct {
    const char *name;
    TirOpcode code;
    bool fast;
    float (*ref)(float);
    double (*ref64)(double);
} Case;

static const Case cases[] = {
    {"exp", TIR_OP_EXP, false, tir_m_exp, tir_m_exp64},
    {"exp2", TIR_OP_EXP2, false, tir_m_exp2, tir_m_exp2_64},
    {"log", TIR_OP_LOG, false, tir_m_log, tir_m_log64},
    {"log2", TIR_OP_LOG2, false, tir_m_log2, tir_m_log2_64},
    {"tanh", TIR_OP_TANH, false, tir_m_tanh, tir_m_tanh64},
    {"sigmoid", TIR_OP_SIGMOID, false, tir_m_sigmoid, tir_m_sigmoid64},
    {"erf", TIR_OP_ERF, false, tir_m_erf, tir_m_erf64},
    {"sin", TIR_OP_SIN, false, tir_m_sin, tir_m_sin64},
    {"cos", TIR_OP_COS, false, tir_m_cos, tir_m_cos64},
    {"rsqrt", TIR_OP_RSQRT, false, tir_m_rsqrt, tir_m_rsqrt64},
    {"fast exp", TIR_OP_EXP, true, tir_m_fexp, NULL},
    {"fast exp2", TIR_OP_EXP2, true, tir_m_fexp2, NULL},
    {"fast tanh", TIR_OP_TANH, true, tir_m_ftanh, NULL},
    {"fast sigmoid", TIR_OP_SIGMOID, true, tir_m_fsigmoid, NULL},
    {"fast erf", TIR_OP_ERF, true, tir_m_ferf, NULL},
};
#define NCASE (int)(sizeof cases / sizeof cases[0])

static void diag(void *ud, const char *msg) {
    (void)ud;
    fprintf(stderr, "%s\n", msg);
}

/* float f(float) (or double f(double)) whose body is the backend's lowering of one builtin */
static void build(TbLower *L, const Case *c, bool f64, const char *name) {
    LLVMTypeRef t = f64 ? L->f64 : L->f32;
    LLVMValueRef fn = LLVMAddFunction(L->mod, name, LLVMFunctionType(t, &t, 1, 0));
    L->fn = fn;
    LLVMPositionBuilderAtEnd(L->b, LLVMAppendBasicBlockInContext(L->c, fn, "entry"));
    LLVMValueRef x = LLVMGetParam(fn, 0);
    LLVMValueRef y = f64 ? tb_math_f64(L, c->code, x, NULL) : tb_math_f32(L, c->code, x, c->fast, NULL);
    LLVMBuildRet(L->b, y);
}

static uint32_t fbits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static uint64_t dbits(double x) {
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}

int main(void) {
    LLVMLinkInMCJIT();
    if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
        printf("SKIP: no native LLVM target to run the lowering on\n");
        return 77;
    }
    static TirFunc dummy_fn = {.name = "math_jit"};
    TbLower L = {0};
    L.c = LLVMContextCreate();
    L.mod = LLVMModuleCreateWithNameInContext("math_jit", L.c);
    L.b = LLVMCreateBuilderInContext(L.c);
    L.f = &dummy_fn;
    L.diag = diag;
    L.cc = 90;
    L.i1 = LLVMInt1TypeInContext(L.c);
    L.i8 = LLVMInt8TypeInContext(L.c);
    L.i16 = LLVMInt16TypeInContext(L.c);
    L.i32 = LLVMInt32TypeInContext(L.c);
    L.i64 = LLVMInt64TypeInContext(L.c);
    L.f16 = LLVMHalfTypeInContext(L.c);
    L.bf16 = LLVMBFloatTypeInContext(L.c);
    L.f32 = LLVMFloatTypeInContext(L.c);
    L.f64 = LLVMDoubleTypeInContext(L.c);
    char name[64];
    for (int i = 0; i < NCASE; i++) {
        snprintf(name, sizeof name, "f32_%d", i);
        build(&L, &cases[i], false, name);
        if (cases[i].ref64) {
            snprintf(name, sizeof name, "f64_%d", i);
            build(&L, &cases[i], true, name);
        }
    }
    char *err = NULL;
    if (L.errors || LLVMVerifyModule(L.mod, LLVMReturnStatusAction, &err)) {
        fprintf(stderr, "lowering failed: %s\n", err ? err : "");
        return 1;
    }
    LLVMDisposeMessage(err);
    LLVMExecutionEngineRef ee;
    struct LLVMMCJITCompilerOptions opt;
    LLVMInitializeMCJITCompilerOptions(&opt, sizeof opt);
    opt.OptLevel = 2;
    if (LLVMCreateMCJITCompilerForModule(&ee, L.mod, &opt, sizeof opt, &err)) {
        printf("SKIP: MCJIT: %s\n", err);
        return 77;
    }
    /* inputs */
    enum { NRAND = 1000000, NUNI = 300000 };
    int nin = 65536 + NRAND + NUNI + 64;
    float *in = malloc(sizeof(float) * (size_t)nin);
    int n = 0;
    for (uint32_t h = 0; h < 65536; h++)
        in[n++] = tir_f16_to_f32((uint16_t)h);
    for (int j = 0; j < NRAND; j++) {
        uint32_t u = (uint32_t)(next64() >> 32);
        memcpy(&in[n++], &u, 4);
    }
    for (int j = 0; j < NUNI; j++)
        in[n++] = -120.0f + 240.0f * (float)(next64() >> 40) / 16777216.0f;
    const float special[] = {0.0f,
                             -0.0f,
                             INFINITY,
                             -INFINITY,
                             NAN,
                             0x1p-149f,
                             -0x1p-149f,
                             0x1p-126f,
                             0x1.fffffep127f,
                             -0x1.fffffep127f,
                             88.72283935546875f,
                             -87.33654f,
                             -103.97208f,
                             89.0f,
                             -104.0f,
                             128.0f,
                             -126.0f,
                             -149.0f,
                             -150.0f,
                             1.0f,
                             0.625f,
                             0.875f,
                             4.0f};
    for (size_t j = 0; j < sizeof special / sizeof special[0]; j++)
        in[n++] = special[j];
    int bad = 0;
    for (int i = 0; i < NCASE; i++) {
        snprintf(name, sizeof name, "f32_%d", i);
        float (*f)(float) = (float (*)(float))LLVMGetFunctionAddress(ee, name);
        long mism = 0;
        for (int j = 0; j < n; j++) {
            float a = f(in[j]), b = cases[i].ref(in[j]);
            if (fbits(a) != fbits(b) && !(isnan(a) && isnan(b))) {
                if (mism++ < 5)
                    fprintf(stderr, "%s(%a): lowering %a, fmath.c %a\n", cases[i].name, (double)in[j], (double)a,
                            (double)b);
            }
        }
        long mism64 = 0;
        if (cases[i].ref64) {
            snprintf(name, sizeof name, "f64_%d", i);
            double (*g)(double) = (double (*)(double))LLVMGetFunctionAddress(ee, name);
            for (int j = 0; j < 400000; j++) {
                uint64_t u = next64();
                double x;
                memcpy(&x, &u, 8);
                if (j & 1)
                    x = -800.0 + 1600.0 * (double)(u >> 11) / 9007199254740992.0;
                if (j < n && j % 3 == 0)
                    x = in[j];
                double a = g(x), b = cases[i].ref64(x);
                if (dbits(a) != dbits(b) && !(isnan(a) && isnan(b))) {
                    if (mism64++ < 5)
                        fprintf(stderr, "f64 %s(%a): lowering %a, fmath.c %a\n", cases[i].name, x, a, b);
                }
            }
        }
        printf("%-14s %d f32 inputs: %ld differ%s", cases[i].name, n, mism, cases[i].ref64 ? "" : "\n");
        if (cases[i].ref64)
            printf("; 400000 f64 inputs: %ld differ\n", mism64);
        if (mism || mism64)
            bad = 1;
    }
    free(in);
    return bad;
}
