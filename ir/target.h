/* The target table (target.def): what each GPU architecture tilec compiles for has, and
 * the queries every folder asks of it.  Plain data, no LLVM. */
#ifndef TILE_IR_TARGET_H
#define TILE_IR_TARGET_H

#include <stdbool.h>

/* The arch a compile uses when none is named. */
#define TIR_TARGET_DEFAULT "sm_90a"

/* What an arch's PTX may use. */
typedef enum {
    TIR_TARGET_CP_ASYNC = 1 << 0, /* cp.async (global -> shared, sm_80+) */
    TIR_TARGET_LDMATRIX = 1 << 1, /* ldmatrix */
    TIR_TARGET_F8_MMA = 1 << 2,   /* mma.sync with e4m3/e5m2 inputs */
    TIR_TARGET_WGMMA = 1 << 3,    /* wgmma.mma_async (warpgroup mma) */
    TIR_TARGET_TMA = 1 << 4,      /* cp.async.bulk.tensor and mbarriers (the tensor memory accelerator) */
} TirTargetFeature;

typedef struct TirTarget {
    const char *name;   /* "sm_90a" */
    int cc;             /* compute capability x 10 */
    int ptx;            /* PTX ISA version x 10 */
    int smem_optin;     /* bytes of shared memory a CTA may opt in to */
    bool arch_specific; /* an 'a' arch: its code runs only on its own compute capability */
    unsigned features;  /* TirTargetFeature bits */
} TirTarget;

/* The table's entry named `name`; NULL for NULL or an unknown name. */
const TirTarget *tir_target_find(const char *name);
/* TIR_TARGET_DEFAULT's entry. */
const TirTarget *tir_target_default(void);
/* The table's entries in order, *n of them. */
const TirTarget *tir_targets(int *n);
/* The known names, space-separated in table order ("sm_80 ... sm_90a"), for messages. */
const char *tir_target_names(void);
/* Whether t's PTX may use feature f. */
bool tir_target_has(const TirTarget *t, TirTargetFeature f);
/* The shared memory a CTA may opt in to on arch, in bytes: smem_alloc's limit and SMEM_MAX
 * in `where` clauses.  NULL or an unknown name: sm_80's (the rule before any arch is named). */
int tir_target_smem_optin(const char *arch);
/* The arch tilec compiles for on a device of compute capability major.minor: the 'a' arch of
 * exactly that capability, else the plain one; a device of a known major without its own
 * entry gets that major's lowest arch (its cubins run on every later minor); a device newer
 * than the table gets the newest plain arch (its PTX is compiled forward by the driver).
 * NULL for a device older than the table. */
const TirTarget *tir_target_for_device(int major, int minor);

#endif
