/* Internals of the reference interpreter, shared by ir/interp*.c only.
 *
 * Every value lives in a slot of its function's frame, indexed by value id.  A slot
 * holds `n` elements of 8 bytes each, whatever the element type, so shape ops move
 * elements without caring what they are:
 *   - integers (i1 included) as int64, sign-extended for signed types and
 *     zero-extended for unsigned ones (u64 keeps its bit pattern);
 *   - pointers as the host address (u);
 *   - floats as a double holding the exact value of the element type (f32, f16, ...
 *     values are all exact in a double); arithmetic on f32 and narrower happens in
 *     float so results match the GPU bit for bit;
 *   - a tensor descriptor as [base, shape..., strides...].
 * A slot keeps its buffer between executions of its op (loops, programs), so the
 * steady state allocates nothing. */
#ifndef TIR_INTERP_INTERNAL_H
#define TIR_INTERP_INTERNAL_H

#include "interp.h"

typedef union TiElem {
    int64_t i;
    uint64_t u;
    double f;
} TiElem;

typedef struct TiSlot {
    int64_t n;   /* elements currently held; 0: not defined in this program yet */
    int64_t cap; /* heap capacity; 0: the one inline element is used */
    TiElem *heap;
    TiElem inl;
} TiSlot;

static inline TiElem *ti_data(TiSlot *s) {
    return s->cap ? s->heap : &s->inl;
}

/* Per function: how its values map to slots (by id when ids are dense and unique,
 * else through a pointer hash), and a spare frame to reuse across calls. */
typedef struct TiFrame TiFrame;
typedef struct TiFuncInfo {
    const TirFunc *f;
    int32_t nslots;
    bool by_id;
    const TirValue **hkeys; /* open addressing, when !by_id */
    int32_t *hidx;
    uint32_t hcap;
    TiFrame *spare;
    struct TiFuncInfo *next;
} TiFuncInfo;

struct TiFrame {
    TiFuncInfo *fi;
    TiSlot *slots;
};

typedef struct TiInterp {
    const TirInterpOptions *o;
    const TirModule *m;
    int64_t pid[3], grid[3];
    int errors;
    int depth;
    TiFuncInfo *funcs;
    int last_buf; /* index of the buffer hit last: lanes mostly stay in one */
    /* Shared buffers (interp_mem.c): async copies in flight land at the async_wait that
     * covers their group; `epoch` counts barriers, so that a stage written and read (or
     * read and overwritten) with no barrier between is reported when check_sync. */
    int64_t ncommit, epoch;
    struct TiPending *pend;
    int npend, cappend;
    bool check_sync; /* the kernel has barriers (the barriers pass ran) */
    /* The global bytes this program stored, with the lane that stored each (interp_mem.c):
     * a load by another lane of the same program is a race on the GPU. */
    struct TiWritten *written;
    uint64_t nwritten_cap, nwritten, program_serial;
    /* The rings (smem_alloc) of this program, where smem_alloc placed them: a scratch op
     * placed on their bytes overwrites them (ti_smem_scratch_write). */
    struct TiRing *rings;
    int nrings, caprings;
} TiInterp;

/* Starts a program: forgets what the previous one stored (interp_mem.c). */
void ti_written_reset(TiInterp *ip);
void ti_written_free(TiInterp *ip);

/* A shared buffer's slot: stages x numel data, as many staged (in flight) elements, then
 * per stage a TiStage of 4 elements. */
typedef struct TiStage {
    TiElem group;             /* i: the group of its copy in flight, -1 none */
    TiElem copy_op;           /* u: that async_copy (a const TirOp *) */
    TiElem read_ep, write_ep; /* i: barrier epoch of its last read / last write (-1 none) */
} TiStage;
typedef struct TiPending {
    TiSlot *slot;
    int64_t stage, numel;
} TiPending;

enum { TI_OK, TI_RET, TI_ERR };

/* Element kinds: what arithmetic means for a value's elements. */
typedef enum { TI_BOOL, TI_SINT, TI_UINT, TI_F32, TI_F64, TI_NARROW, TI_PTR } TiKind;

static inline TiKind ti_kind(TirType t) {
    if (t.ptr)
        return TI_PTR;
    switch ((TirScalar)t.elem) {
    case TIR_I1: return TI_BOOL;
    case TIR_I8:
    case TIR_I16:
    case TIR_I32:
    case TIR_I64: return TI_SINT;
    case TIR_U8:
    case TIR_U16:
    case TIR_U32:
    case TIR_U64: return TI_UINT;
    case TIR_F32: return TI_F32;
    case TIR_F64: return TI_F64;
    default: return TI_NARROW;
    }
}
static inline bool ti_kind_float(TiKind k) {
    return k == TI_F32 || k == TI_F64 || k == TI_NARROW;
}

/* An integer result wrapped to the width and signedness of s. */
static inline int64_t ti_norm(TirScalar s, uint64_t v) {
    switch (s) {
    case TIR_I1: return (int64_t)(v & 1);
    case TIR_I8: return (int8_t)v;
    case TIR_I16: return (int16_t)v;
    case TIR_I32: return (int32_t)v;
    case TIR_U8: return (uint8_t)v;
    case TIR_U16: return (uint16_t)v;
    case TIR_U32: return (uint32_t)v;
    default: return (int64_t)v;
    }
}

/* A float computed in f32, rounded to the element type s (f32 or narrower). */
double ti_round_narrow(TirScalar s, float x);
static inline double ti_fres(TirScalar s, float x) {
    return s == TIR_F32 ? (double)x : ti_round_narrow(s, x);
}

/* Slots and errors (interp.c). */
TiSlot *ti_slot(TiFrame *fr, const TirValue *v);
/* The data of an operand, checked to be defined with the element count its type says. */
TiElem *ti_get(TiInterp *ip, TiFrame *fr, const TirOp *op, const TirValue *v, int64_t *n);
/* Makes v's slot hold n elements (contents undefined) and returns them. */
TiElem *ti_def(TiFrame *fr, const TirValue *v, int64_t n);
int ti_error(TiInterp *ip, const TirOp *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ti_value_name(char *buf, size_t n, const TirValue *v);
int64_t ti_numel(TirType t);

/* Op handlers: TI_OK, TI_RET or TI_ERR. */
typedef int (*TiOpFn)(TiInterp *ip, TiFrame *fr, const TirOp *op);
int ti_op_constant(TiInterp *, TiFrame *, const TirOp *);
int ti_op_arange(TiInterp *, TiFrame *, const TirOp *);
int ti_op_splat(TiInterp *, TiFrame *, const TirOp *);
int ti_op_broadcast(TiInterp *, TiFrame *, const TirOp *);
int ti_op_copy(TiInterp *, TiFrame *, const TirOp *);
int ti_op_trans(TiInterp *, TiFrame *, const TirOp *);
int ti_op_cast(TiInterp *, TiFrame *, const TirOp *);
int ti_op_binary(TiInterp *, TiFrame *, const TirOp *);
int ti_op_cmp(TiInterp *, TiFrame *, const TirOp *);
int ti_op_select(TiInterp *, TiFrame *, const TirOp *);
int ti_op_fma(TiInterp *, TiFrame *, const TirOp *);
int ti_op_addptr(TiInterp *, TiFrame *, const TirOp *);
int ti_op_unary(TiInterp *, TiFrame *, const TirOp *);
int ti_op_reduce(TiInterp *, TiFrame *, const TirOp *);
int ti_op_cumsum(TiInterp *, TiFrame *, const TirOp *);
int ti_op_dot(TiInterp *, TiFrame *, const TirOp *);
/* Memory (interp_mem.c). */
int ti_op_load(TiInterp *, TiFrame *, const TirOp *);
int ti_op_store(TiInterp *, TiFrame *, const TirOp *);
int ti_op_atomic(TiInterp *, TiFrame *, const TirOp *);
int ti_op_tensor_desc(TiInterp *, TiFrame *, const TirOp *);
int ti_op_tload(TiInterp *, TiFrame *, const TirOp *);
int ti_op_tstore(TiInterp *, TiFrame *, const TirOp *);
int ti_op_print(TiInterp *, TiFrame *, const TirOp *);
int ti_op_assert(TiInterp *, TiFrame *, const TirOp *);
int ti_op_smem_alloc(TiInterp *, TiFrame *, const TirOp *);
/* A scratch op (attr.smem_bytes > 0) ran: its bytes overwrite the rings that share them. */
void ti_smem_scratch_write(TiInterp *ip, const TirOp *op);
int ti_op_smem_store(TiInterp *, TiFrame *, const TirOp *);
int ti_op_smem_load(TiInterp *, TiFrame *, const TirOp *);
int ti_op_async_copy(TiInterp *, TiFrame *, const TirOp *);
int ti_op_async_commit(TiInterp *, TiFrame *, const TirOp *);
int ti_op_async_wait(TiInterp *, TiFrame *, const TirOp *);

#endif
