/* The reference interpreter: global memory (checked against the registered
 * buffers before every access), atomics, tensor descriptors, print and assert. */
#include "interp_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- elements in memory, as the GPU stores them ---------------------------------- */

static TiElem mem_read(TirScalar s, const unsigned char *p) {
    TiElem e;
    switch (s) {
    case TIR_I1: e.i = p[0] != 0; break;
    case TIR_I8: e.i = (int8_t)p[0]; break;
    case TIR_U8: e.i = p[0]; break;
    case TIR_I16: {
        int16_t v;
        memcpy(&v, p, 2);
        e.i = v;
        break;
    }
    case TIR_U16: {
        uint16_t v;
        memcpy(&v, p, 2);
        e.i = v;
        break;
    }
    case TIR_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        e.i = v;
        break;
    }
    case TIR_U32: {
        uint32_t v;
        memcpy(&v, p, 4);
        e.i = v;
        break;
    }
    case TIR_I64:
    case TIR_U64: memcpy(&e.u, p, 8); break;
    case TIR_F16: {
        uint16_t v;
        memcpy(&v, p, 2);
        e.f = tir_f16_to_f32(v);
        break;
    }
    case TIR_BF16: {
        uint16_t v;
        memcpy(&v, p, 2);
        e.f = tir_bf16_to_f32(v);
        break;
    }
    case TIR_F32: {
        float v;
        memcpy(&v, p, 4);
        e.f = v;
        break;
    }
    case TIR_F64: memcpy(&e.f, p, 8); break;
    case TIR_F8E4M3: e.f = tir_f8e4m3_to_f32(p[0]); break;
    case TIR_F8E5M2: e.f = tir_f8e5m2_to_f32(p[0]); break;
    default: e.u = 0; break;
    }
    return e;
}

/* Values in slots are already exact in their type, so these conversions never round. */
static void mem_write(TirScalar s, unsigned char *p, TiElem e) {
    switch (s) {
    case TIR_I1: p[0] = e.i != 0; break;
    case TIR_I8:
    case TIR_U8: p[0] = (uint8_t)e.u; break;
    case TIR_I16:
    case TIR_U16: {
        uint16_t v = (uint16_t)e.u;
        memcpy(p, &v, 2);
        break;
    }
    case TIR_I32:
    case TIR_U32: {
        uint32_t v = (uint32_t)e.u;
        memcpy(p, &v, 4);
        break;
    }
    case TIR_I64:
    case TIR_U64: memcpy(p, &e.u, 8); break;
    case TIR_F16: {
        uint16_t v = tir_f32_to_f16((float)e.f);
        memcpy(p, &v, 2);
        break;
    }
    case TIR_BF16: {
        uint16_t v = tir_f32_to_bf16((float)e.f);
        memcpy(p, &v, 2);
        break;
    }
    case TIR_F32: {
        float v = (float)e.f;
        memcpy(p, &v, 4);
        break;
    }
    case TIR_F64: memcpy(p, &e.f, 8); break;
    case TIR_F8E4M3: p[0] = tir_f32_to_f8e4m3((float)e.f); break;
    case TIR_F8E5M2: p[0] = tir_f32_to_f8e5m2((float)e.f); break;
    default: break;
    }
}

/* ---- the bounds check --------------------------------------------------------------- */

static bool in_buf(const TirBuffer *b, uint64_t addr, uint64_t size) {
    uint64_t lo = (uint64_t)(uintptr_t)b->base;
    return b->base && addr >= lo && size <= b->bytes && addr - lo <= b->bytes - size;
}

/* True when [addr, addr+size) lies in one registered buffer and is aligned; else
 * reports which access went where, and the nearest buffer. */
static bool check_access(TiInterp *ip, const TirOp *op, const char *what, uint64_t addr, uint64_t size, int64_t lane,
                         const TirValue *ptrv) {
    const TirInterpOptions *o = ip->o;
    bool found = false;
    if (ip->last_buf < o->nbufs && in_buf(&o->bufs[ip->last_buf], addr, size)) {
        found = true;
    } else {
        for (int i = 0; i < o->nbufs; i++)
            if (in_buf(&o->bufs[i], addr, size)) {
                ip->last_buf = i;
                found = true;
                break;
            }
    }
    if (found && addr % size == 0)
        return true;
    char name[96], where[160];
    ti_value_name(name, sizeof name, ptrv);
    snprintf(where, sizeof where, "(lane %" PRId64 " of %s in program (%" PRId64 ",%" PRId64 ",%" PRId64 "))", lane,
             name, ip->pid[0], ip->pid[1], ip->pid[2]);
    if (found) {
        ti_error(ip, op, "misaligned %s of %" PRIu64 " bytes at 0x%" PRIx64 " %s", what, size, addr, where);
        return false;
    }
    int best = -1;
    uint64_t best_d = UINT64_MAX;
    for (int i = 0; i < o->nbufs; i++) {
        uint64_t lo = (uint64_t)(uintptr_t)o->bufs[i].base, hi = lo + o->bufs[i].bytes;
        uint64_t d = addr < lo ? lo - addr : addr >= hi ? addr - hi : 0;
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    if (best < 0) {
        ti_error(ip, op, "out-of-bounds %s of %" PRIu64 " bytes at 0x%" PRIx64 " %s; no buffers are registered", what,
                 size, addr, where);
    } else {
        const TirBuffer *b = &o->bufs[best];
        uint64_t lo = (uint64_t)(uintptr_t)b->base;
        ti_error(ip, op,
                 "out-of-bounds %s of %" PRIu64 " bytes at 0x%" PRIx64 " %s; buffer '%s' is [0x%" PRIx64 ",0x%" PRIx64
                 ")",
                 what, size, addr, where, b->name ? b->name : "?", lo, lo + b->bytes);
    }
    return false;
}

/* ---- operands -------------------------------------------------------------------------- */

/* An operand shared by all n lanes (stride 0) or one per lane. */
static TiElem *lane_opnd(TiInterp *ip, TiFrame *fr, const TirOp *op, int i, int64_t n, int64_t *stride) {
    int64_t m;
    TiElem *e = ti_get(ip, fr, op, op->opnd[i], &m);
    if (!e)
        return NULL;
    if (m != n && m != 1) {
        ti_error(ip, op, "interp: operand %d has %" PRId64 " elements for %" PRId64 " lanes", i, m, n);
        return NULL;
    }
    *stride = m == n ? 1 : 0;
    return e;
}

static bool ptr_operand(TiInterp *ip, const TirOp *op, int i) {
    if (op->nopnd <= i || !op->opnd[i]->ty.ptr) {
        ti_error(ip, op, "interp: operand %d is not a pointer", i);
        return false;
    }
    return true;
}

/* ---- a program's stores, by lane (docs/language.md, "Lanes run in parallel") ------------ */

/* A store that the same program reads back by another lane is undefined: on the GPU the
 * lanes are threads, and the load may run before the store or see it.  Every byte a
 * program stores is kept in an open-addressing table with the lane and the store; entries
 * of earlier programs are stale by their serial, so a new program costs nothing. */
typedef struct TiWritten {
    uint64_t addr, serial;
    int64_t lane;
    const TirOp *store;
} TiWritten;

void ti_written_reset(TiInterp *ip) {
    ip->program_serial++;
    ip->nwritten = 0;
}

void ti_written_free(TiInterp *ip) {
    free(ip->written);
    ip->written = NULL;
    ip->nwritten_cap = ip->nwritten = 0;
}

static uint64_t addr_hash(uint64_t a) {
    a ^= a >> 33;
    a *= 0xff51afd7ed558ccdull;
    return a ^ (a >> 33);
}

static TiWritten *written_find(const TiInterp *ip, uint64_t addr) {
    if (!ip->nwritten_cap)
        return NULL;
    for (uint64_t h = addr_hash(addr) & (ip->nwritten_cap - 1);; h = (h + 1) & (ip->nwritten_cap - 1)) {
        TiWritten *w = &ip->written[h];
        if (w->serial != ip->program_serial)
            return NULL;
        if (w->addr == addr)
            return w;
    }
}

static bool written_put(TiInterp *ip, uint64_t addr, int64_t lane, const TirOp *store) {
    if (2 * (ip->nwritten + 1) > ip->nwritten_cap) {
        uint64_t cap = ip->nwritten_cap ? 2 * ip->nwritten_cap : 1024;
        TiWritten *old = ip->written, *nw = calloc(cap, sizeof *nw);
        if (!nw)
            return false;
        uint64_t oldcap = ip->nwritten_cap;
        ip->written = nw;
        ip->nwritten_cap = cap;
        ip->nwritten = 0;
        for (uint64_t i = 0; i < oldcap; i++)
            if (old[i].serial == ip->program_serial)
                written_put(ip, old[i].addr, old[i].lane, old[i].store);
        free(old);
    }
    uint64_t h = addr_hash(addr) & (ip->nwritten_cap - 1);
    for (; ip->written[h].serial == ip->program_serial; h = (h + 1) & (ip->nwritten_cap - 1))
        if (ip->written[h].addr == addr)
            break;
    TiWritten *w = &ip->written[h];
    if (w->serial != ip->program_serial)
        ip->nwritten++;
    *w = (TiWritten){addr, ip->program_serial, lane, store};
    return true;
}

/* Reports lane `lane` of load op reading [a, a+size) that this program stored, by another
 * lane or by the same one: the store's tile and the load's may get different layouts, so
 * on the GPU the element can sit in different threads for the two ops, with nothing
 * ordering them (docs/language.md: what the same program reads back later is undefined). */
static bool check_read_back(TiInterp *ip, const TirOp *op, uint64_t a, uint64_t size, int64_t lane) {
    for (uint64_t b = 0; b < size; b++) {
        const TiWritten *w = written_find(ip, a + b);
        if (!w)
            continue;
        char sname[96], lname[96];
        ti_value_name(sname, sizeof sname, w->store->opnd[0]);
        ti_value_name(lname, sizeof lname, op->res[0]);
        ti_error(ip, op,
                 "lane %" PRId64 " of this load (%s) reads 0x%" PRIx64 ", which lane %" PRId64
                 " of the store to %s wrote earlier in program (%" PRId64 ",%" PRId64 ",%" PRId64
                 "): %s, so on the GPU this load may see the store or not "
                 "(docs/language.md, \"Lanes run in parallel\")",
                 lane, lname, a + b, w->lane, sname, ip->pid[0], ip->pid[1], ip->pid[2],
                 w->lane == lane ? "the GPU may give that element to different threads in the store and the load"
                                 : "lanes run in parallel");
        return false;
    }
    return true;
}

/* Reports lane `lane` of store op writing [a, a+size) that another lane of this program
 * stored: which write lands last is not defined on the GPU. */
static bool check_overwrite(TiInterp *ip, const TirOp *op, uint64_t a, uint64_t size, int64_t lane) {
    for (uint64_t b = 0; b < size; b++) {
        const TiWritten *w = written_find(ip, a + b);
        if (!w || w->lane == lane)
            continue;
        char sname[96], wname[96];
        ti_value_name(sname, sizeof sname, op->opnd[0]);
        ti_value_name(wname, sizeof wname, w->store->opnd[0]);
        ti_error(ip, op,
                 "lane %" PRId64 " of this store (to %s) writes 0x%" PRIx64 ", which lane %" PRId64
                 " of the store to %s wrote earlier in program (%" PRId64 ",%" PRId64 ",%" PRId64
                 "): lanes run in parallel, so on the GPU either write may land last "
                 "(docs/language.md, \"Lanes run in parallel\")",
                 lane, sname, a + b, w->lane, wname, ip->pid[0], ip->pid[1], ip->pid[2]);
        return false;
    }
    return true;
}

int ti_op_load(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    if (op->nopnd < 1 || op->nopnd > 3 || op->nres != 1)
        return ti_error(ip, op, "interp: load takes ptr [, mask [, other]]");
    if (!ptr_operand(ip, op, 0))
        return TI_ERR;
    int64_t n = ti_numel(op->res[0]->ty), sp, sm = 0, so = 0;
    TiElem *P = lane_opnd(ip, fr, op, 0, n, &sp);
    TiElem *M = op->nopnd > 1 ? lane_opnd(ip, fr, op, 1, n, &sm) : NULL;
    TiElem *O = op->nopnd > 2 ? lane_opnd(ip, fr, op, 2, n, &so) : NULL;
    if (!P || (op->nopnd > 1 && !M) || (op->nopnd > 2 && !O))
        return TI_ERR;
    TiElem *R = ti_def(fr, op->res[0], n);
    if (!R)
        return ti_error(ip, op, "interp: value outside its function, or out of memory");
    TirScalar s = (TirScalar)op->opnd[0]->ty.elem;
    uint64_t size = (uint64_t)tir_scalar_bytes(s);
    for (int64_t i = 0; i < n; i++) {
        if (M && !M[i * sm].i) {
            if (O)
                R[i] = O[i * so];
            else
                R[i].u = 0; /* zero of every kind: 0, 0.0 and NULL are all-zero bits */
            continue;
        }
        uint64_t a = P[i * sp].u;
        if (!check_access(ip, op, "load", a, size, i, op->opnd[0]))
            return TI_ERR;
        if (ip->nwritten && !check_read_back(ip, op, a, size, i))
            return TI_ERR;
        R[i] = mem_read(s, (const unsigned char *)(uintptr_t)a);
    }
    return TI_OK;
}

/* ---- lanes of one store (docs/language.md, "Lanes run in parallel") --------------------- */

/* Lanes are ordered only within one store's value: each element's loads before that
 * element's store.  The GPU may write some lanes of a store before it reads other lanes of
 * the loads that compute it (backend/lower_chain.c), so a store lane that writes what another
 * lane of those loads read is a race there; the interpreter reports it. */

static bool same_shape(TirType a, TirType b) {
    if (a.rank != b.rank)
        return false;
    for (int d = 0; d < a.rank; d++)
        if (a.shape[d] != b.shape[d])
            return false;
    return true;
}

/* The loads whose values reach st's value through elementwise ops of its shape, in its block
 * (at most max; 0 when there are more, which only skips the check). */
static int chain_loads(const TirOp *st, const TirOp **loads, int max) {
    enum { OPS = 64 };
    const TirOp *stack[OPS], *seen[OPS];
    int sp = 0, nseen = 0, nl = 0;
    TirType vt = st->opnd[1]->ty;
    if (st->opnd[1]->def)
        stack[sp++] = st->opnd[1]->def;
    while (sp) {
        const TirOp *x = stack[--sp];
        bool dup = false;
        for (int i = 0; i < nseen && !dup; i++)
            dup = seen[i] == x;
        if (dup || x->parent != st->parent || x->nres != 1 || !same_shape(x->res[0]->ty, vt))
            continue;
        if (nseen == OPS)
            return 0;
        seen[nseen++] = x;
        if (x->code == TIR_OP_LOAD) {
            if (nl == max)
                return 0;
            loads[nl++] = x;
            continue;
        }
        if (!(tir_op_info[x->code].traits & TIR_T_ELEMENTWISE))
            continue;
        for (int i = 0; i < x->nopnd; i++)
            if (x->opnd[i]->def) {
                if (sp == OPS)
                    return 0;
                stack[sp++] = x->opnd[i]->def;
            }
    }
    return nl;
}

typedef struct {
    uint64_t lo, hi;
    int64_t lane;
    const TirOp *load;
} LoadSpan;

static int span_cmp(const void *a, const void *b) {
    uint64_t x = ((const LoadSpan *)a)->lo, y = ((const LoadSpan *)b)->lo;
    return x < y ? -1 : x > y;
}

static int check_lanes(TiInterp *ip, TiFrame *fr, const TirOp *st, const TiElem *P, int64_t sp, const TiElem *M,
                       int64_t sm, int64_t n, uint64_t size) {
    const TirOp *loads[8];
    int nl = n > 1 ? chain_loads(st, loads, 8) : 0;
    if (!nl)
        return TI_OK;
    LoadSpan *spans = malloc((size_t)nl * (size_t)n * sizeof *spans);
    if (!spans)
        return ti_error(ip, st, "interp: out of memory");
    int64_t ns = 0;
    uint64_t maxlen = 1;
    for (int k = 0; k < nl; k++) {
        const TirOp *ld = loads[k];
        int64_t lp, lm = 0;
        TiElem *LP = lane_opnd(ip, fr, ld, 0, n, &lp);
        TiElem *LM = ld->nopnd > 1 ? lane_opnd(ip, fr, ld, 1, n, &lm) : NULL;
        if (!LP || (ld->nopnd > 1 && !LM)) {
            free(spans);
            return TI_ERR;
        }
        uint64_t len = (uint64_t)tir_scalar_bytes((TirScalar)ld->opnd[0]->ty.elem);
        if (len > maxlen)
            maxlen = len;
        for (int64_t j = 0; j < n; j++)
            if (!LM || LM[j * lm].i)
                spans[ns++] = (LoadSpan){LP[j * lp].u, LP[j * lp].u + len, j, ld};
    }
    qsort(spans, (size_t)ns, sizeof *spans, span_cmp);
    for (int64_t i = 0; i < n; i++) {
        if (M && !M[i * sm].i)
            continue;
        uint64_t a = P[i * sp].u, from = a >= maxlen ? a - maxlen + 1 : 0;
        int64_t lo = 0, hi = ns;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (spans[mid].lo < from)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (int64_t k = lo; k < ns && spans[k].lo < a + size; k++) {
            if (spans[k].hi <= a || spans[k].lane == i)
                continue;
            char sname[96], lname[96];
            ti_value_name(sname, sizeof sname, st->opnd[0]);
            ti_value_name(lname, sizeof lname, spans[k].load->res[0]);
            int64_t other = spans[k].lane;
            free(spans);
            return ti_error(ip, st,
                            "lane %" PRId64 " of this store writes 0x%" PRIx64 " (%s), which lane %" PRId64
                            " of the load %s read, in program (%" PRId64 ",%" PRId64 ",%" PRId64
                            "): lanes run in parallel, so on the GPU that load may see the store or not "
                            "(docs/language.md, \"Lanes run in parallel\")",
                            i, a, sname, other, lname, ip->pid[0], ip->pid[1], ip->pid[2]);
        }
    }
    free(spans);
    return TI_OK;
}

int ti_op_store(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    if (op->nopnd < 2 || op->nopnd > 3)
        return ti_error(ip, op, "interp: store takes ptr, value [, mask]");
    if (!ptr_operand(ip, op, 0))
        return TI_ERR;
    int64_t n = ti_numel(op->opnd[0]->ty), sp, sv, sm = 0;
    TiElem *P = lane_opnd(ip, fr, op, 0, n, &sp);
    TiElem *V = lane_opnd(ip, fr, op, 1, n, &sv);
    TiElem *M = op->nopnd > 2 ? lane_opnd(ip, fr, op, 2, n, &sm) : NULL;
    if (!P || !V || (op->nopnd > 2 && !M))
        return TI_ERR;
    TirScalar s = (TirScalar)op->opnd[0]->ty.elem;
    uint64_t size = (uint64_t)tir_scalar_bytes(s);
    if (check_lanes(ip, fr, op, P, sp, M, sm, n, size) != TI_OK)
        return TI_ERR;
    for (int64_t i = 0; i < n; i++) {
        if (M && !M[i * sm].i)
            continue;
        uint64_t a = P[i * sp].u;
        if (!check_access(ip, op, "store", a, size, i, op->opnd[0]))
            return TI_ERR;
        if (ip->nwritten && !check_overwrite(ip, op, a, size, i))
            return TI_ERR;
        mem_write(s, (unsigned char *)(uintptr_t)a, V[i * sv]);
        for (uint64_t b = 0; b < size; b++)
            if (!written_put(ip, a + b, i, op))
                return ti_error(ip, op, "interp: out of memory");
    }
    return TI_OK;
}

static bool elem_greater(TiKind k, TiElem a, TiElem b) {
    if (k == TI_SINT)
        return a.i > b.i;
    if (ti_kind_float(k))
        return a.f > b.f;
    return a.u > b.u;
}

/* The new memory value of one atomic lane. */
static TiElem atomic_apply(int code, TiKind k, TirScalar s, TiElem old, TiElem v) {
    TiElem r = v;
    switch (code) {
    case TIR_OP_ATOMIC_ADD:
        if (k == TI_F64)
            r.f = old.f + v.f;
        else if (ti_kind_float(k))
            r.f = ti_fres(s, (float)old.f + (float)v.f);
        else
            r.i = ti_norm(s, old.u + v.u);
        break;
    case TIR_OP_ATOMIC_MAX:
    case TIR_OP_ATOMIC_MIN: {
        /* Floats: a NaN loses to a number, as in maximum/minimum. */
        bool want_max = code == TIR_OP_ATOMIC_MAX;
        if (ti_kind_float(k) && old.f != old.f)
            r = v;
        else if (ti_kind_float(k) && v.f != v.f)
            r = old;
        else
            r = (want_max ? elem_greater(k, v, old) : elem_greater(k, old, v)) ? v : old;
        break;
    }
    default: break; /* xchg */
    }
    return r;
}

int ti_op_atomic(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    bool cas = op->code == TIR_OP_ATOMIC_CAS;
    if (op->nres != 1 || (cas ? op->nopnd != 3 : (op->nopnd < 2 || op->nopnd > 3)))
        return ti_error(ip, op, "interp: %s takes ptr, %s", tir_op_info[op->code].name,
                        cas ? "cmp, value" : "value [, mask]");
    if (!ptr_operand(ip, op, 0))
        return TI_ERR;
    int64_t n = ti_numel(op->res[0]->ty), sp, sv, sm = 0, sc = 0;
    TiElem *P = lane_opnd(ip, fr, op, 0, n, &sp);
    TiElem *Cmp = cas ? lane_opnd(ip, fr, op, 1, n, &sc) : NULL;
    TiElem *V = lane_opnd(ip, fr, op, cas ? 2 : 1, n, &sv);
    TiElem *M = !cas && op->nopnd > 2 ? lane_opnd(ip, fr, op, 2, n, &sm) : NULL;
    if (!P || !V || (cas && !Cmp) || (!cas && op->nopnd > 2 && !M))
        return TI_ERR;
    TiElem *R = ti_def(fr, op->res[0], n);
    if (!R)
        return ti_error(ip, op, "interp: value outside its function, or out of memory");
    TirScalar s = (TirScalar)op->opnd[0]->ty.elem;
    TiKind k = ti_kind(tir_scalar_type(s));
    uint64_t size = (uint64_t)tir_scalar_bytes(s);
    const char *what = tir_op_info[op->code].name;
    /* Lanes apply one after another in row-major order, each seeing the ones before. */
    for (int64_t i = 0; i < n; i++) {
        if (M && !M[i * sm].i) {
            R[i].u = 0;
            continue;
        }
        uint64_t a = P[i * sp].u;
        if (!check_access(ip, op, what, a, size, i, op->opnd[0]))
            return TI_ERR;
        unsigned char *p = (unsigned char *)(uintptr_t)a;
        TiElem old = mem_read(s, p);
        R[i] = old;
        if (cas) {
            /* Compares bit patterns, as atom.cas does. */
            unsigned char want[8];
            mem_write(s, want, Cmp[i * sc]);
            if (memcmp(want, p, size) == 0)
                mem_write(s, p, V[i * sv]);
        } else {
            mem_write(s, p, atomic_apply(op->code, k, s, old, V[i * sv]));
        }
    }
    return TI_OK;
}

/* ---- tensor descriptors ---------------------------------------------------------------- */

int ti_op_tensor_desc(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    if (op->nres != 1)
        return ti_error(ip, op, "interp: tensor_desc has one result");
    TirType dt = op->res[0]->ty;
    int r = dt.rank;
    if (dt.kind != TIR_K_DESC || r < 1 || r > TIR_MAXRANK || op->nopnd != 1 + 2 * r)
        return ti_error(ip, op, "interp: tensor_desc takes base, %d shapes and %d strides", r, r);
    if (!ptr_operand(ip, op, 0))
        return TI_ERR;
    TiElem *D = ti_def(fr, op->res[0], 1 + 2 * r);
    if (!D)
        return ti_error(ip, op, "interp: value outside its function, or out of memory");
    for (int i = 0; i < 1 + 2 * r; i++) {
        int64_t m;
        TiElem *e = ti_get(ip, fr, op, op->opnd[i], &m);
        if (!e)
            return TI_ERR;
        if (m != 1)
            return ti_error(ip, op, "interp: tensor_desc operands are scalars");
        D[i] = e[0];
    }
    return TI_OK;
}

/* Shared by tload and tstore: walks the block at `offsets`, calling back per element
 * with its address, or 0 when it lies outside the tensor. */
typedef struct {
    uint64_t base;
    int rank;
    int64_t shape[TIR_MAXRANK], stride[TIR_MAXRANK], off[TIR_MAXRANK];
    int32_t block[TIR_MAXRANK];
    int64_t n;
    TirScalar s;
} TiBlockWalk;

static bool block_walk_init(TiInterp *ip, TiFrame *fr, const TirOp *op, TiBlockWalk *w, int ntile) {
    if (op->nopnd < 1 || op->opnd[0]->ty.kind != TIR_K_DESC) {
        ti_error(ip, op, "interp: first operand is not a tensor descriptor");
        return false;
    }
    TirType dt = op->opnd[0]->ty;
    int r = dt.rank;
    if (r < 1 || r > TIR_MAXRANK || op->nopnd != 1 + r + ntile) {
        ti_error(ip, op, "interp: expected %d offsets", r);
        return false;
    }
    TiElem *D = ti_get(ip, fr, op, op->opnd[0], NULL);
    if (!D)
        return false;
    w->base = D[0].u;
    w->rank = r;
    w->s = (TirScalar)dt.elem;
    w->n = 1;
    for (int d = 0; d < r; d++) {
        w->shape[d] = D[1 + d].i;
        w->stride[d] = D[1 + r + d].i;
        w->block[d] = dt.shape[d];
        w->n *= dt.shape[d];
        int64_t m;
        TiElem *e = ti_get(ip, fr, op, op->opnd[1 + d], &m);
        if (!e)
            return false;
        if (m != 1) {
            ti_error(ip, op, "interp: offsets are scalars");
            return false;
        }
        w->off[d] = e[0].i;
    }
    return true;
}

/* The address of block element `idx` (a row-major counter), or false when outside. */
static bool block_addr(const TiBlockWalk *w, const int64_t *idx, uint64_t *addr) {
    uint64_t a = w->base, size = (uint64_t)tir_scalar_bytes(w->s);
    for (int d = 0; d < w->rank; d++) {
        int64_t c = w->off[d] + idx[d];
        if (c < 0 || c >= w->shape[d])
            return false;
        a += (uint64_t)c * (uint64_t)w->stride[d] * size;
    }
    *addr = a;
    return true;
}

static void block_next(const TiBlockWalk *w, int64_t *idx) {
    for (int d = w->rank - 1; d >= 0; d--) {
        if (++idx[d] < w->block[d])
            return;
        idx[d] = 0;
    }
}

int ti_op_tload(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    TiBlockWalk w;
    if (op->nres != 1 || !block_walk_init(ip, fr, op, &w, 0))
        return op->nres != 1 ? ti_error(ip, op, "interp: tload has one result") : TI_ERR;
    if (ti_numel(op->res[0]->ty) != w.n)
        return ti_error(ip, op, "interp: tload result is not the block shape");
    TiElem *R = ti_def(fr, op->res[0], w.n);
    if (!R)
        return ti_error(ip, op, "interp: value outside its function, or out of memory");
    int64_t idx[TIR_MAXRANK] = {0};
    for (int64_t i = 0; i < w.n; i++, block_next(&w, idx)) {
        uint64_t a;
        if (!block_addr(&w, idx, &a)) {
            R[i].u = 0;
            continue;
        }
        if (!check_access(ip, op, "load", a, (uint64_t)tir_scalar_bytes(w.s), i, op->opnd[0]))
            return TI_ERR;
        R[i] = mem_read(w.s, (const unsigned char *)(uintptr_t)a);
    }
    return TI_OK;
}

int ti_op_tstore(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    TiBlockWalk w;
    if (!block_walk_init(ip, fr, op, &w, 1))
        return TI_ERR;
    int64_t sv;
    TiElem *V = lane_opnd(ip, fr, op, op->nopnd - 1, w.n, &sv);
    if (!V)
        return TI_ERR;
    int64_t idx[TIR_MAXRANK] = {0};
    for (int64_t i = 0; i < w.n; i++, block_next(&w, idx)) {
        uint64_t a;
        if (!block_addr(&w, idx, &a))
            continue;
        if (!check_access(ip, op, "store", a, (uint64_t)tir_scalar_bytes(w.s), i, op->opnd[0]))
            return TI_ERR;
        mem_write(w.s, (unsigned char *)(uintptr_t)a, V[i * sv]);
    }
    return TI_OK;
}

/* ---- debug --------------------------------------------------------------------------- */

static void print_elem(FILE *out, TirType t, TiElem e) {
    switch (ti_kind(t)) {
    case TI_PTR: fprintf(out, "0x%" PRIx64, e.u); break;
    case TI_BOOL:
    case TI_SINT: fprintf(out, "%" PRId64, e.i); break;
    case TI_UINT: fprintf(out, "%" PRIu64, e.u); break;
    case TI_F64: fprintf(out, "%.17g", e.f); break;
    default: fprintf(out, "%.9g", e.f); break;
    }
}

/* One line per program: "pid (x,y,z) LABEL: v v [v, v, ...]". */
int ti_op_print(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    FILE *out = ip->o->print_out;
    for (int i = 0; i < op->nopnd; i++)
        if (!ti_get(ip, fr, op, op->opnd[i], NULL))
            return TI_ERR;
    if (!out)
        return TI_OK;
    fprintf(out, "pid (%" PRId64 ",%" PRId64 ",%" PRId64 ") %s:", ip->pid[0], ip->pid[1], ip->pid[2],
            op->attr.s ? op->attr.s : "");
    for (int i = 0; i < op->nopnd; i++) {
        int64_t n;
        TiElem *e = ti_get(ip, fr, op, op->opnd[i], &n);
        TirType t = op->opnd[i]->ty;
        bool tile = t.rank > 0 && t.kind == TIR_K_VALUE;
        fputs(tile ? " [" : " ", out);
        for (int64_t j = 0; j < n; j++) {
            if (j)
                fputs(", ", out);
            print_elem(out, t, e[j]);
        }
        if (tile)
            fputc(']', out);
    }
    fputc('\n', out);
    return TI_OK;
}

int ti_op_assert(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    if (!ip->o->debug)
        return TI_OK;
    if (op->nopnd != 1)
        return ti_error(ip, op, "interp: assert takes one condition");
    int64_t n;
    TiElem *c = ti_get(ip, fr, op, op->opnd[0], &n);
    if (!c)
        return TI_ERR;
    for (int64_t i = 0; i < n; i++)
        if (!c[i].i)
            return ti_error(ip, op,
                            "assertion failed in program (%" PRId64 ",%" PRId64 ",%" PRId64 "), lane %" PRId64 ": %s",
                            ip->pid[0], ip->pid[1], ip->pid[2], i, op->attr.s ? op->attr.s : "");
    return TI_OK;
}

/* ---- shared buffers and async copies ----------------------------------------------------
 * A buffer's slot holds its stages, the staged data of copies in flight and a TiStage per
 * stage (interp_internal.h).  An async_copy reads global memory when it is issued (a race
 * with a later global write is the program's, as on the GPU) and lands when an async_wait
 * covers its group: reading the stage before that is an error naming both ops, so a
 * pipelining mistake shows on the CPU.  With barriers in the kernel, a stage written and
 * then read, or read and then written, with no barrier between is an error too: on the GPU
 * other threads would see the old contents or overwrite what they still read. */

typedef struct {
    TiElem *data, *staged;
    TiStage *st;
    int64_t stages, numel;
} TiBuf;

static void op_desc(char *buf, size_t n, const TirOp *op) {
    char v[96] = "";
    if (op && op->nopnd)
        ti_value_name(v, sizeof v, op->opnd[0]);
    snprintf(buf, n, "%s%s%s", op ? tir_op_info[op->code].name : "?", *v ? " on " : "", v);
}

static bool smem_buf(TiInterp *ip, TiFrame *fr, const TirOp *op, TiBuf *b, int64_t *stage) {
    TirType t = op->opnd[0]->ty;
    if (!tir_type_is_smem(t)) {
        ti_error(ip, op, "interp: operand 0 is not a shared buffer");
        return false;
    }
    int64_t n;
    TiElem *e = ti_get(ip, fr, op, op->opnd[0], &n);
    if (!e)
        return false;
    b->stages = t.shape[0];
    b->numel = tir_type_numel(tir_smem_stage_type(t));
    b->data = e;
    b->staged = e + b->stages * b->numel;
    b->st = (TiStage *)(e + 2 * b->stages * b->numel);
    int64_t m;
    TiElem *s = ti_get(ip, fr, op, op->opnd[1], &m);
    if (!s)
        return false;
    if (s->i < 0 || s->i >= b->stages) {
        char v[96];
        ti_value_name(v, sizeof v, op->opnd[0]);
        ti_error(ip, op, "stage %" PRId64 " of %s is outside its %" PRId64 " stages", s->i, v, b->stages);
        return false;
    }
    *stage = s->i;
    return true;
}

/* The rings of the program with the bytes smem_alloc gave them (attr.smem_off/bytes;
 * none before that pass ran). */
typedef struct TiRing {
    TiSlot *slot;
    const TirOp *op;
} TiRing;

/* A scratch op's writes (it ran: op's bytes [smem_off, +smem_bytes)) overwrite the
 * elements of every ring whose bytes they share, so that a scratch op placed on a ring
 * still to be read shows as a wrong result, as on the GPU.  A ring's elements are taken
 * in stage-major order from its offset (the swizzle permutes bytes within a stage's
 * rows; which elements an overlap hits may differ from the GPU's, not whether some do). */
void ti_smem_scratch_write(TiInterp *ip, const TirOp *op) {
    int64_t lo = op->attr.smem_off, hi = lo + op->attr.smem_bytes;
    for (int r = 0; r < ip->nrings; r++) {
        const TirOp *a = ip->rings[r].op;
        TiSlot *s = ip->rings[r].slot;
        TirType t = a->res[0]->ty;
        int64_t esize = tir_scalar_bytes((TirScalar)t.elem), off = a->attr.smem_off;
        int64_t n = t.shape[0] * tir_type_numel(tir_smem_stage_type(t));
        if (esize < 1 || s->n < n || hi <= off || lo >= off + n * esize)
            continue;
        TiElem *e = s->cap ? s->heap : &s->inl;
        int64_t first = lo > off ? (lo - off) / esize : 0, last = (hi - off + esize - 1) / esize;
        for (int64_t i = first; i < last && i < n; i++)
            e[i].u = 0x7ff4dead7ff4deadull;
    }
}

int ti_op_smem_alloc(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    TirType t = op->res[0]->ty;
    if (!tir_type_is_smem(t))
        return ti_error(ip, op, "interp: smem_alloc makes a shared buffer");
    TiElem *e = ti_def(fr, op->res[0], ti_numel(t));
    if (!e)
        return ti_error(ip, op, "interp: value outside its function, or out of memory");
    if (op->attr.smem_bytes > 0) {
        if (ip->nrings == ip->caprings) {
            int cap = ip->caprings ? 2 * ip->caprings : 8;
            TiRing *nr = realloc(ip->rings, (size_t)cap * sizeof *nr);
            if (!nr)
                return ti_error(ip, op, "interp: out of memory");
            ip->rings = nr;
            ip->caprings = cap;
        }
        ip->rings[ip->nrings++] = (TiRing){ti_slot(fr, op->res[0]), op};
    }
    int64_t stages = t.shape[0], numel = tir_type_numel(tir_smem_stage_type(t));
    /* Fresh shared memory holds garbage: NaN-like bits, so a read before any write shows. */
    for (int64_t i = 0; i < 2 * stages * numel; i++)
        e[i].u = 0x7ff4dead7ff4deadull;
    TiStage *st = (TiStage *)(e + 2 * stages * numel);
    for (int64_t s = 0; s < stages; s++) {
        st[s].group.i = -1;
        st[s].copy_op.u = 0;
        st[s].read_ep.i = -1;
        st[s].write_ep.i = -1;
    }
    return TI_OK;
}

/* A write to stage s (smem_store, or async_copy when issued): not while a copy is in
 * flight to it, nor after a read with no barrier since. */
static bool stage_writable(TiInterp *ip, const TirOp *op, const TiBuf *b, int64_t s) {
    char d[128], v[96];
    ti_value_name(v, sizeof v, op->opnd[0]);
    if (b->st[s].group.i >= 0) {
        op_desc(d, sizeof d, (const TirOp *)(uintptr_t)b->st[s].copy_op.u);
        ti_error(ip, op,
                 "writes stage %" PRId64 " of %s while the %s issued before it is still in flight "
                 "(no async_wait covers its group)",
                 s, v, d);
        return false;
    }
    if (ip->check_sync && b->st[s].read_ep.i == ip->epoch) {
        ti_error(ip, op,
                 "overwrites stage %" PRId64 " of %s that other threads may still read: no barrier "
                 "since its last smem_load",
                 s, v);
        return false;
    }
    return true;
}

int ti_op_smem_store(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    TiBuf b;
    int64_t s, n;
    if (!smem_buf(ip, fr, op, &b, &s))
        return TI_ERR;
    TiElem *x = ti_get(ip, fr, op, op->opnd[2], &n);
    if (!x)
        return TI_ERR;
    if (n != b.numel)
        return ti_error(ip, op, "interp: smem_store of %" PRId64 " elements into a stage of %" PRId64, n, b.numel);
    if (!stage_writable(ip, op, &b, s))
        return TI_ERR;
    memcpy(b.data + s * b.numel, x, (size_t)n * sizeof *x);
    b.st[s].write_ep.i = ip->epoch;
    return TI_OK;
}

int ti_op_smem_load(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    TiBuf b;
    int64_t s;
    if (!smem_buf(ip, fr, op, &b, &s))
        return TI_ERR;
    char d[128], v[96];
    ti_value_name(v, sizeof v, op->opnd[0]);
    if (b.st[s].group.i >= 0) {
        op_desc(d, sizeof d, (const TirOp *)(uintptr_t)b.st[s].copy_op.u);
        return ti_error(ip, op,
                        "reads stage %" PRId64 " of %s before the %s filling it has landed "
                        "(no async_wait covers its group%s)",
                        s, v, d, b.st[s].group.i >= ip->ncommit ? ", which is not committed" : "");
    }
    if (ip->check_sync && b.st[s].write_ep.i == ip->epoch)
        return ti_error(ip, op,
                        "reads stage %" PRId64 " of %s written with no barrier since: other threads' "
                        "parts may not be there yet",
                        s, v);
    TiElem *r = ti_def(fr, op->res[0], b.numel);
    if (!r)
        return ti_error(ip, op, "interp: value outside its function, or out of memory");
    memcpy(r, b.data + s * b.numel, (size_t)b.numel * sizeof *r);
    b.st[s].read_ep.i = ip->epoch;
    return TI_OK;
}

int ti_op_async_copy(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    TiBuf b;
    int64_t s, sp, sm = 0;
    if (op->nopnd < 3 || op->nopnd > 4)
        return ti_error(ip, op, "interp: async_copy takes buf, stage, ptrs [, mask]");
    if (!smem_buf(ip, fr, op, &b, &s))
        return TI_ERR;
    if (!ptr_operand(ip, op, 2))
        return TI_ERR;
    TiElem *P = lane_opnd(ip, fr, op, 2, b.numel, &sp);
    TiElem *M = op->nopnd > 3 ? lane_opnd(ip, fr, op, 3, b.numel, &sm) : NULL;
    if (!P || (op->nopnd > 3 && !M))
        return TI_ERR;
    if (!stage_writable(ip, op, &b, s))
        return TI_ERR;
    TirScalar e = (TirScalar)op->opnd[0]->ty.elem;
    uint64_t size = (uint64_t)tir_scalar_bytes(e);
    TiElem *dst = b.staged + s * b.numel;
    for (int64_t i = 0; i < b.numel; i++) {
        if (M && !M[i * sm].i) {
            dst[i].u = 0;
            continue;
        }
        uint64_t a = P[i * sp].u;
        if (!check_access(ip, op, "async copy", a, size, i, op->opnd[2]))
            return TI_ERR;
        dst[i] = mem_read(e, (const unsigned char *)(uintptr_t)a);
    }
    if (ip->npend == ip->cappend) {
        int cap = ip->cappend ? 2 * ip->cappend : 16;
        TiPending *np = realloc(ip->pend, (size_t)cap * sizeof *np);
        if (!np)
            return ti_error(ip, op, "interp: out of memory");
        ip->pend = np;
        ip->cappend = cap;
    }
    ip->pend[ip->npend++] = (TiPending){ti_slot(fr, op->opnd[0]), s, b.numel};
    b.st[s].group.i = ip->ncommit; /* the open group: closed by the next commit */
    b.st[s].copy_op.u = (uint64_t)(uintptr_t)op;
    return TI_OK;
}

int ti_op_async_commit(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    (void)fr;
    (void)op;
    ip->ncommit++;
    return TI_OK;
}

int ti_op_async_wait(TiInterp *ip, TiFrame *fr, const TirOp *op) {
    (void)fr;
    int64_t landed = ip->ncommit - op->attr.i[0]; /* groups below this one are complete */
    int k = 0;
    for (int i = 0; i < ip->npend; i++) {
        TiPending *p = &ip->pend[i];
        TiElem *e = ti_data(p->slot);
        int64_t stages = (p->slot->n) / (2 * p->numel + (int64_t)(sizeof(TiStage) / sizeof(TiElem)));
        TiStage *st = (TiStage *)(e + 2 * stages * p->numel);
        if (st[p->stage].group.i < landed) {
            memcpy(e + p->stage * p->numel, e + (stages + p->stage) * p->numel, (size_t)p->numel * sizeof *e);
            st[p->stage].group.i = -1;
            st[p->stage].write_ep.i = ip->epoch;
        } else {
            ip->pend[k++] = *p;
        }
    }
    ip->npend = k;
    return TI_OK;
}
