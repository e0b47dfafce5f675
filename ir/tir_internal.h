/* Helpers shared by the files of the IR library only (not part of ir.h). */
#ifndef TIR_INTERNAL_H
#define TIR_INTERNAL_H

#include "ir.h"

#include <stdarg.h>

/* snprintf-style appender: counts what would be written even past the end of buf. */
typedef struct TirSb {
    char *buf;
    size_t cap;
    size_t len;
} TirSb;

void tir_sb_printf(TirSb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tir_sb_type(TirSb *sb, const TirModule *m, TirType t);
void tir_sb_layout(TirSb *sb, const TirModule *m, int32_t layout);
/* A double printed so that strtod gives it back exactly: "inf", "-inf", "nan" included. */
void tir_sb_double(TirSb *sb, double v);

/* Attribute layout of an op as the text form writes it: which TirAttr field means what. */
typedef enum {
    TIR_A_NONE,
    TIR_A_VALUE,  /* constant: value= (ival or fval by the result's element type) */
    TIR_A_RANGE,  /* arange: start=, end= */
    TIR_A_AXIS,   /* axis= */
    TIR_A_PRED,   /* cmp: pred= */
    TIR_A_N,      /* hints: n= */
    TIR_A_CACHE,  /* load: cache="..." (optional) */
    TIR_A_TF32,   /* dot: tf32=1 (optional) */
    TIR_A_PERM,   /* trans: perm=[...] */
    TIR_A_LABEL,  /* print: label="..." */
    TIR_A_MSG,    /* assert: msg="..." */
    TIR_A_CALLEE, /* call: callee=@name */
    TIR_A_FAST,   /* exp, exp2, tanh, sigmoid, erf: fast=1 (optional; i[0]) */
    TIR_A_ORDER,  /* atomics: sem=NAME, scope=NAME (optional; default acq_rel, gpu) */
} TirAttrKind;
TirAttrKind tir_attr_kind(TirOpcode code);

#endif
