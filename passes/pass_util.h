/* Helpers private to the passes: error reporting through the context's sink, a growable
 * op array and rematerialization's rule (the pointer map for value rewrites and use counts
 * is ir/ptrmap.h's).  Header-only so each pass file stays self-contained; nothing here is
 * part of passes.h. */
#ifndef PASS_UTIL_H
#define PASS_UTIL_H

#include "passes.h"
#include "layout.h"
#include "ptrmap.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Reports one error "PASS: error: MSG" (or "PASS: @FUNC: error: MSG") to ctx->diag.
 * Returns 1 so callers can write `return pass_error(...)` or `errors += pass_error(...)`. */
static inline int pass_error(TirPassContext *ctx, const char *pass, const TirFunc *f, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int pass_error(TirPassContext *ctx, const char *pass, const TirFunc *f, const char *fmt, ...) {
    if (!ctx || !ctx->diag)
        return 1;
    char msg[512];
    int n = f ? snprintf(msg, sizeof msg, "%s: @%s: error: ", pass, f->name)
              : snprintf(msg, sizeof msg, "%s: error: ", pass);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    ctx->diag(ctx->ud, msg);
    return 1;
}

/* pass_error at a source location (an op's or a function's loc): through ctx->diag_at
 * when the caller gave one and loc is known, else as pass_error. */
static inline int pass_error_at(TirPassContext *ctx, const char *pass, const TirFunc *f, uint32_t loc, const char *fmt,
                                ...) __attribute__((format(printf, 5, 6)));
static inline int pass_error_at(TirPassContext *ctx, const char *pass, const TirFunc *f, uint32_t loc, const char *fmt,
                                ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (ctx && ctx->diag_at && loc != TIR_NOLOC) {
        char full[600];
        snprintf(full, sizeof full, "%s (%s of @%s)", msg, pass, f ? f->name : "?");
        ctx->diag_at(ctx->diag_at_ud, loc, full);
        return 1;
    }
    return pass_error(ctx, pass, f, "%s", msg);
}

/* Growable array of op pointers. */
typedef struct PassOpVec {
    TirOp **v;
    size_t n, cap;
} PassOpVec;

static inline void pass_opvec_push(PassOpVec *a, TirOp *op) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 32;
        TirOp **v = realloc(a->v, cap * sizeof *v);
        if (!v)
            abort();
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = op;
}

static inline bool pass_op_has(const TirOp *op, unsigned trait) {
    return (tir_op_info[op->code].traits & trait) != 0;
}

/* Rematerialization's one rule for an op cheap enough to compute again where its value is
 * needed instead of keeping or moving the value: layout.c gives each broadcast its own copy
 * of its operand's cheap producers, fuse.c recomputes a chain in the layout a convert_layout
 * wants.  Cheap: pure, reads no memory, owns no regions, one result, and a few instructions
 * per element: constants, arange, splat and the elementwise ops other than the math
 * functions (exp, sin, erf, ...: tens of instructions each, more than a shared-memory
 * round trip saves).  The shape ops broadcast and expand_dims are as cheap; `shape_ops`
 * admits them for a caller that keeps each copy's own layout (layout.c copies before there
 * are layouts; fuse.c gives every copy the one layout of the conversion, right only for ops
 * that keep the shape). */
static inline bool pass_remat_cheap(const TirOp *op, bool shape_ops) {
    if (!op || op->nres != 1)
        return false;
    unsigned t = tir_op_info[op->code].traits;
    if (!(t & TIR_T_PURE) || (t & (TIR_T_MATH | TIR_T_READS | TIR_T_REGIONS)))
        return false;
    if ((t & TIR_T_ELEMENTWISE) || op->code == TIR_OP_CONSTANT || op->code == TIR_OP_ARANGE || op->code == TIR_OP_SPLAT)
        return true;
    return shape_ops && (op->code == TIR_OP_BROADCAST || op->code == TIR_OP_EXPAND_DIMS);
}

#endif
