/* The reference interpreter: runs a kernel variant's tile IR (before layouts) on the CPU,
 * one program after another, on host buffers.  It is the meaning of every kernel and
 * the oracle every GPU test compares with, so it favours exactness over speed:
 * narrow floats are rounded exactly as the GPU stores them, `dot` accumulates in f32
 * (i32 for i8), masked-off lanes are never touched, and every memory access is checked
 * against the buffers the caller registered (an access outside them is an error that
 * names the op, the lane and the address, never a crash). */
#ifndef TIR_INTERP_H
#define TIR_INTERP_H

#include "ir.h"

typedef struct TirBuffer {
    void *base;
    size_t bytes;
    const char *name; /* for messages: the parameter's name */
} TirBuffer;

/* One runtime argument per kernel parameter: integers (and bool) in i, floats in f,
 * pointers in p (a host address inside a registered buffer, or NULL). */
typedef union TirArg {
    int64_t i;
    double f;
    void *p;
} TirArg;

typedef struct TirInterpOptions {
    int64_t grid[3];       /* programs per axis; 0 is taken as 1 */
    const TirBuffer *bufs; /* the memory the kernel may touch */
    int nbufs;
    TirDiagFn diag; /* run-time errors: out of bounds, failed assert */
    void *ud;
    FILE *print_out; /* where `print` writes; NULL: discarded */
    bool debug;      /* check `assert` */
} TirInterpOptions;

/* Runs `kernel` (device functions it calls must be in its module) over the grid.
 * Returns 0 on success, else the number of errors reported (it stops at the first
 * program that fails). */
int tir_interp_run(const TirFunc *kernel, const TirArg *args, const TirInterpOptions *o);

#endif
