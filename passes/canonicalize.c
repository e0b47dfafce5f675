/* canonicalize: constant folding, algebraic simplification, CSE and DCE, to a fixed point.
 *
 * Why: the front end emits straightforward IR (a constant per literal, casts and splats
 * wherever types meet, every `if` of a compile-time condition, every inlined body's
 * arithmetic on specialized values).  Later passes and the backend want the small,
 * shared form: one value per distinct computation, no work whose result nobody uses,
 * constants where values are known.  Folding follows docs/ir.md exactly, so the folded
 * program computes what the interpreter and the GPU would have computed.
 *
 * One round is a forward walk of each function (fold, simplify, CSE; replaced values are
 * recorded in a map and every later operand is read through it, so there is no
 * replace-all-uses scan per rewrite) and a backward walk (DCE by use counts).  Rounds
 * repeat until nothing changes.  Ops are rewritten in place where they become a constant
 * or a simpler op of the same result, so their result values (and names) survive. */
#include "passes.h"
#include "pass_util.h"

#include <math.h>
#include <string.h>

enum {
    CANON_MAX_ROUNDS = 64,    /* every round that changes something removes or simplifies an op */
    CANON_MAX_NESTING = 1000, /* regions inside regions; deeper input is refused, not recursed */
};

/* ---- constants -------------------------------------------------------------------- */

typedef TirKonst Konst;

#define U(x) ((uint64_t)(x))

static bool ty_is_int(TirType t) {
    return t.kind == TIR_K_VALUE && !t.ptr && tir_scalar_is_int((TirScalar)t.elem);
}
static bool ty_is_float(TirType t) {
    return t.kind == TIR_K_VALUE && !t.ptr && tir_scalar_is_float((TirScalar)t.elem);
}
static bool ty_is_signed_int(TirType t) {
    return ty_is_int(t) && t.elem != TIR_I1 && tir_scalar_is_signed((TirScalar)t.elem);
}

static int64_t norm_int(TirScalar s, uint64_t u) {
    return tir_wrap_int(s, u);
}

static bool const_of(TirValue *v, Konst *k) {
    TirOp *d = v->def;
    if (!d || d->code != TIR_OP_CONSTANT || d->nres != 1)
        return false;
    if (ty_is_float(v->ty)) {
        *k = (Konst){true, 0, tir_round_to((TirScalar)v->ty.elem, d->attr.fval)};
        return true;
    }
    if (ty_is_int(v->ty)) {
        *k = (Konst){false, norm_int((TirScalar)v->ty.elem, (uint64_t)d->attr.ival), 0};
        return true;
    }
    return false;
}

/* Turns op into `constant` of its own result type: the result value stays, so no uses
 * need rewriting. */
static void become_const(TirOp *op, Konst k) {
    TirScalar s = (TirScalar)op->res[0]->ty.elem;
    op->code = TIR_OP_CONSTANT;
    op->nopnd = 0;
    op->nregion = 0;
    memset(&op->attr, 0, sizeof op->attr);
    if (tir_scalar_is_float(s)) {
        op->attr.fval = tir_round_to(s, k.f);
    } else {
        op->attr.ival = norm_int(s, (uint64_t)k.i);
        op->attr.fval = (double)op->attr.ival;
    }
}

/* ---- folding of elementwise ops ------------------------------------------------------ */

/* The arithmetic is ir/fold.c's, which the front end's constant expressions share: a
 * folded op computes what the interpreter computes for the same op on run-time values. */
static bool try_fold(TirOp *op) {
    if (op->nres != 1 || op->nopnd < 1 || op->nopnd > 3 || !(tir_op_info[op->code].traits & TIR_T_ELEMENTWISE))
        return false;
    TirType rt = op->res[0]->ty;
    if (!ty_is_int(rt) && !ty_is_float(rt))
        return false;
    Konst in[3];
    for (int i = 0; i < op->nopnd; i++) {
        if (!const_of(op->opnd[i], &in[i]))
            return false;
        /* Elementwise operands share one type (casts aside); anything else is left for
         * the verifier to report rather than folded into nonsense. */
        if (op->code != TIR_OP_CAST && op->opnd[i]->ty.elem != op->opnd[0]->ty.elem)
            return false;
    }
    Konst out;
    if (!tir_fold_elem((TirOpcode)op->code, op->attr.i[0], (TirScalar)op->opnd[0]->ty.elem, (TirScalar)rt.elem, in,
                       &out))
        return false;
    become_const(op, out);
    return true;
}

/* ---- simplification -------------------------------------------------------------------- */

static bool same_type(TirValue *a, TirValue *b) {
    return tir_type_eq(a->ty, b->ty);
}

/* Shape ops and reductions whose operand is a constant (every element equal). */
static bool fold_uniform(TirOp *op) {
    Konst k;
    if (op->nopnd != 1 || op->nres != 1 || !const_of(op->opnd[0], &k))
        return false;
    TirType in_ty = op->opnd[0]->ty, rt = op->res[0]->ty;
    if (in_ty.elem != rt.elem || in_ty.ptr != rt.ptr) {
        if (op->code == TIR_OP_ARGMAX || op->code == TIR_OP_ARGMIN) {
            /* argmax of equal ints: the smallest index, 0 (floats: NaNs make it unclear) */
            if (k.is_float || !ty_is_int(rt))
                return false;
            become_const(op, (Konst){false, 0, 0});
            return true;
        }
        return false;
    }
    switch ((TirOpcode)op->code) {
    case TIR_OP_SPLAT:
    case TIR_OP_BROADCAST:
    case TIR_OP_EXPAND_DIMS:
    case TIR_OP_RESHAPE:
    case TIR_OP_TRANS:
    case TIR_OP_CONVERT_LAYOUT:
    case TIR_OP_REDUCE_MAX:
    case TIR_OP_REDUCE_MIN: become_const(op, k); return true;
    case TIR_OP_REDUCE_SUM: {
        /* ints only: a float sum of n equal values depends on the order of additions */
        int64_t axis = op->attr.i[0];
        if (k.is_float || axis < 0 || axis >= in_ty.rank)
            return false;
        become_const(op, (Konst){false, (int64_t)(U(k.i) * U(in_ty.shape[axis])), 0});
        return true;
    }
    default: return false;
    }
}

/* One rewrite of op, if any applies.  Returns true when something changed: either op
 * was rewritten in place or *rep was set to the value that replaces op's result. */
static bool simplify(TirOp *op, TirValue **rep) {
    if (try_fold(op) || fold_uniform(op))
        return true;
    TirOpcode code = (TirOpcode)op->code;
    if (op->nres != 1)
        return false;
    TirValue *r = op->res[0];
    TirValue *x = op->nopnd > 0 ? op->opnd[0] : NULL;
    TirValue *y = op->nopnd > 1 ? op->opnd[1] : NULL;
    Konst ky;
    bool y_const = y && const_of(y, &ky);

    /* Commutative ops keep a constant on the right, so the rules below and CSE see one form. */
    if ((tir_op_info[code].traits & TIR_T_COMMUTATIVE) && op->nopnd == 2) {
        Konst kx;
        if (const_of(x, &kx) && !y_const) {
            op->opnd[0] = y;
            op->opnd[1] = x;
            return true;
        }
    }

#define REPLACE_WITH(v)         \
    do {                        \
        if (!same_type((v), r)) \
            return false;       \
        *rep = (v);             \
        return true;            \
    } while (0)
#define BECOME_INT(v)                             \
    do {                                          \
        become_const(op, (Konst){false, (v), 0}); \
        return true;                              \
    } while (0)

    bool int_op = ty_is_int(r->ty);
    bool y_int_zero = y_const && !ky.is_float && ky.i == 0;
    bool y_one = y_const && (ky.is_float ? ky.f == 1.0 : ky.i == 1);
    switch (code) {
    case TIR_OP_ADD: /* x + 0; for floats only x + (-0) is x for every x (-0 + +0 is +0) */
        if (y_int_zero || (y_const && ky.is_float && ky.f == 0 && signbit(ky.f)))
            REPLACE_WITH(x);
        break;
    case TIR_OP_SUB:
        if (y_int_zero || (y_const && ky.is_float && ky.f == 0 && !signbit(ky.f)))
            REPLACE_WITH(x);
        if (int_op && x == y)
            BECOME_INT(0);
        break;
    case TIR_OP_MUL:
        if (y_one)
            REPLACE_WITH(x);
        if (int_op && y_int_zero)
            BECOME_INT(0); /* floats: x * 0 is NaN or -0 for some x */
        break;
    case TIR_OP_DIV:
        if (y_one)
            REPLACE_WITH(x);
        break;
    case TIR_OP_AND:
        if (x == y)
            REPLACE_WITH(x);
        if (int_op && y_int_zero)
            BECOME_INT(0);
        break;
    case TIR_OP_OR:
        if (x == y || y_int_zero)
            REPLACE_WITH(x);
        break;
    case TIR_OP_XOR:
        if (y_int_zero)
            REPLACE_WITH(x);
        if (int_op && x == y)
            BECOME_INT(0);
        break;
    case TIR_OP_SHL:
    case TIR_OP_SHR:
        if (y_int_zero)
            REPLACE_WITH(x);
        break;
    case TIR_OP_MAXIMUM:
    case TIR_OP_MINIMUM:
        if (x == y)
            REPLACE_WITH(x);
        break;
    case TIR_OP_SELECT: {
        Konst kc;
        TirValue *z = op->opnd[2];
        if (const_of(x, &kc) && !kc.is_float)
            REPLACE_WITH(kc.i ? y : z);
        if (y == z)
            REPLACE_WITH(y);
        break;
    }
    case TIR_OP_CAST: {
        if (same_type(x, r))
            REPLACE_WITH(x);
        /* A widening int cast and back: the value comes back unchanged. */
        TirOp *d = x->def;
        if (d && d->code == TIR_OP_CAST && d->nopnd == 1) {
            TirValue *src = d->opnd[0];
            if (same_type(src, r) && ty_is_int(src->ty) && ty_is_int(x->ty) && src->ty.elem != TIR_I1 &&
                x->ty.elem != TIR_I1 &&
                tir_scalar_bits((TirScalar)x->ty.elem) >= tir_scalar_bits((TirScalar)src->ty.elem))
                REPLACE_WITH(src);
        }
        break;
    }
    case TIR_OP_BROADCAST:
    case TIR_OP_EXPAND_DIMS:
    case TIR_OP_RESHAPE:
    case TIR_OP_TRANS:
    case TIR_OP_CONVERT_LAYOUT: {
        if (code != TIR_OP_TRANS && same_type(x, r))
            REPLACE_WITH(x);
        /* Of a splat: every element is the scalar, so it is a splat of the new shape. */
        TirOp *d = x->def;
        if (d && d->code == TIR_OP_SPLAT && d->nopnd == 1 && code != TIR_OP_CONVERT_LAYOUT) {
            op->code = TIR_OP_SPLAT;
            op->opnd[0] = d->opnd[0];
            memset(&op->attr, 0, sizeof op->attr);
            return true;
        }
        break;
    }
    case TIR_OP_ADDPTR:
        if (y_int_zero)
            REPLACE_WITH(x);
        break;
    default: break;
    }
#undef REPLACE_WITH
#undef BECOME_INT
    return false;
}

/* ---- the rewrite state ----------------------------------------------------------------- */

/* CSE entries form a scoped hash table: an entry is pushed at the head of its bucket's
 * chain, and leaving a region pops the entries pushed inside it, newest first, so each
 * is still at its chain's head when it goes.  Values of a parent block are visible in
 * its regions; nothing of one region is visible in a sibling or after it. */
typedef struct CseEntry {
    TirOp *op;
    uint64_t hash;
    uint64_t memgen; /* loads: the memory generation they read */
    int32_t next;
} CseEntry;

typedef struct Canon {
    TirFunc *f;
    TirPassContext *ctx;
    TirPtrMap repl; /* replaced value -> its replacement */
    CseEntry *ents;
    size_t nents, capents;
    int32_t *buckets;
    size_t nbuckets; /* a power of two */
    uint64_t memgen; /* bumped by every op that may write memory */
    bool changed;
    int errors;
} Canon;

static TirValue *resolve(Canon *c, TirValue *v) {
    for (TirValue *t; (t = tir_ptrmap_get(&c->repl, v));)
        v = t;
    return v;
}

static bool has_effect_op(TirOp *op, void *ud) {
    if (!pass_op_has(op, TIR_T_SIDE_EFFECT))
        return true;
    *(bool *)ud = true;
    return false;
}

/* Whether anything in op's regions may write memory, print, call or exit. */
static bool regions_have_effects(TirOp *op) {
    bool found = false;
    for (int r = 0; r < op->nregion && !found; r++)
        tir_walk_block(op->region[r], has_effect_op, &found);
    return found;
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t hash_type(uint64_t h, TirType t) {
    h = mix(h, (uint64_t)t.kind | (uint64_t)t.elem << 8 | (uint64_t)t.ptr << 16 | (uint64_t)t.rank << 24);
    for (int i = 0; i < t.rank && i < TIR_MAXRANK; i++)
        h = mix(h, (uint64_t)(uint32_t)t.shape[i]);
    return mix(h, (uint64_t)(uint32_t)t.layout);
}

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t double_bits(double d) {
    if (isnan(d))
        return 0x7ff8000000000000ull; /* every NaN the same value for CSE */
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* A constant's value as one number: ival normalized for ints, fval's bits for floats
 * (the front end, the parser and this pass need not agree on the unused field). */
static bool const_key(TirOp *op, uint64_t *key) {
    Konst k;
    if (op->code != TIR_OP_CONSTANT || !const_of(op->res[0], &k))
        return false;
    *key = k.is_float ? double_bits(k.f) : (uint64_t)k.i;
    return true;
}

static uint64_t hash_op(TirOp *op) {
    uint64_t h = mix(op->code, (uint64_t)op->nopnd << 32 | (uint32_t)op->nres);
    uint64_t key;
    if (const_key(op, &key)) {
        h = mix(h, key);
    } else {
        h = mix(h, (uint64_t)op->attr.ival);
        h = mix(h, double_bits(op->attr.fval));
    }
    for (int i = 0; i < TIR_MAXRANK; i++)
        h = mix(h, (uint64_t)op->attr.i[i]);
    h = mix(h, hash_str(op->attr.s));
    for (int i = 0; i < op->nres; i++)
        h = hash_type(h, op->res[i]->ty);
    bool comm = pass_op_has(op, TIR_T_COMMUTATIVE) && op->nopnd == 2;
    uint64_t sum = 0;
    for (int i = 0; i < op->nopnd; i++) {
        uint64_t v = mix(0, (uint64_t)(uintptr_t)op->opnd[i]);
        if (comm)
            sum += v;
        else
            h = mix(h, v);
    }
    h = comm ? mix(h, sum) : h;
    /* mix() moves high bits down only two places per call, and the buckets take the low
     * bits: the constants 1.0, 2.0, ... (which differ only in high bits) all fell in one
     * bucket, and 100,000 `s += 1.0;` took minutes.  The finalizer of splitmix64 makes every
     * bit of h depend on every bit of the key. */
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

static bool attrs_equal(const TirAttr *a, const TirAttr *b) {
    if (a->ival != b->ival || double_bits(a->fval) != double_bits(b->fval))
        return false;
    if (memcmp(a->i, b->i, sizeof a->i) != 0)
        return false;
    if (!a->s || !b->s)
        return a->s == b->s;
    return strcmp(a->s, b->s) == 0;
}

static bool ops_equal(TirOp *a, TirOp *b) {
    if (a->code != b->code || a->nopnd != b->nopnd || a->nres != b->nres)
        return false;
    for (int i = 0; i < a->nres; i++)
        if (!tir_type_eq(a->res[i]->ty, b->res[i]->ty))
            return false;
    uint64_t ka, kb;
    if (const_key(a, &ka) && const_key(b, &kb))
        return ka == kb;
    if (!attrs_equal(&a->attr, &b->attr))
        return false;
    bool same = true;
    for (int i = 0; i < a->nopnd && same; i++)
        same = a->opnd[i] == b->opnd[i];
    if (same)
        return true;
    return pass_op_has(a, TIR_T_COMMUTATIVE) && a->nopnd == 2 && a->opnd[0] == b->opnd[1] && a->opnd[1] == b->opnd[0];
}

/* Pure ops, and loads (they only read) within one memory generation. */
static bool cse_candidate(TirOp *op) {
    if (op->nregion || op->nres < 1)
        return false;
    unsigned t = tir_op_info[op->code].traits;
    if (t & (TIR_T_SIDE_EFFECT | TIR_T_TERMINATOR))
        return false;
    return (t & (TIR_T_PURE | TIR_T_READS)) != 0;
}

static TirOp *cse_find_or_add(Canon *c, TirOp *op) {
    uint64_t h = hash_op(op);
    bool reads = pass_op_has(op, TIR_T_READS);
    size_t slot = (size_t)h & (c->nbuckets - 1);
    for (int32_t e = c->buckets[slot]; e >= 0; e = c->ents[e].next) {
        CseEntry *ent = &c->ents[e];
        if (ent->hash == h && (!reads || ent->memgen == c->memgen) && ops_equal(ent->op, op))
            return ent->op;
    }
    if (c->nents == c->capents) {
        c->capents = c->capents ? c->capents * 2 : 256;
        c->ents = realloc(c->ents, c->capents * sizeof *c->ents);
        if (!c->ents)
            abort();
    }
    c->ents[c->nents] = (CseEntry){op, h, c->memgen, c->buckets[slot]};
    c->buckets[slot] = (int32_t)c->nents++;
    return NULL;
}

static void cse_pop(Canon *c, size_t mark) {
    while (c->nents > mark) {
        CseEntry *e = &c->ents[--c->nents];
        c->buckets[(size_t)e->hash & (c->nbuckets - 1)] = e->next;
    }
}

static void replace_op(Canon *c, TirOp *op, TirValue *const *with) {
    for (int i = 0; i < op->nres; i++)
        tir_ptrmap_put(&c->repl, op->res[i], with[i]);
    tir_op_detach(op);
    c->changed = true;
}

/* ---- the forward walk: fold, simplify, CSE -------------------------------------------------- */

static void canon_block(Canon *c, TirBlock *blk, int depth);

/* `if` of a constant condition: the taken region's ops move in front of the if, and the
 * if's results become what that region yields.  Returns the next op to visit. */
static TirOp *inline_taken_region(Canon *c, TirOp *op, bool cond) {
    TirBlock *taken = op->region[cond ? 0 : 1];
    TirOp *yield = taken->last;
    if (!yield || yield->code != TIR_OP_YIELD || yield->nopnd != op->nres)
        return op->next;
    TirOp *first = NULL;
    for (TirOp *o = taken->first, *next; o && o != yield; o = next) {
        next = o->next;
        tir_op_detach(o);
        tir_op_insert_before(op, o);
        if (!first)
            first = o;
    }
    TirOp *after = op->next;
    replace_op(c, op, yield->opnd);
    return first ? first : after;
}

/* A `for` runs zero times when ub <= lb (in the bounds' signedness), known here. */
static bool for_never_runs(TirOp *op) {
    if (op->nopnd < 3)
        return false;
    TirValue *lb = op->opnd[0], *ub = op->opnd[1];
    if (lb == ub)
        return true;
    Konst a, b;
    if (!const_of(lb, &a) || !const_of(ub, &b) || a.is_float || b.is_float)
        return false;
    return ty_is_signed_int(lb->ty) ? b.i <= a.i : U(b.i) <= U(a.i);
}

static TirOp *canon_region_op(Canon *c, TirOp *op, int depth) {
    Konst k;
    if (op->code == TIR_OP_IF && op->nregion == 2 && op->nopnd == 1 && const_of(op->opnd[0], &k) && !k.is_float)
        return inline_taken_region(c, op, k.i != 0);
    if (op->code == TIR_OP_FOR && for_never_runs(op) && op->nopnd - 3 == op->nres) {
        TirOp *next = op->next;
        replace_op(c, op, op->opnd + 3);
        return next;
    }
    /* A loop body runs again after its own writes, so an op with writes inside starts a
     * new memory generation on entry as well as after it. */
    bool effects = regions_have_effects(op);
    if (effects)
        c->memgen++;
    for (int r = 0; r < op->nregion; r++)
        canon_block(c, op->region[r], depth + 1);
    if (effects)
        c->memgen++;
    return op->next;
}

/* A constant holds exactly what its type can: ints wrapped, floats rounded (an f16
 * `0.1` is 0.0999755859375), so the text shows the value the program computes with. */
static void normalize_const(Canon *c, TirOp *op) {
    Konst k;
    if (op->nres != 1 || !const_of(op->res[0], &k))
        return;
    TirAttr before = op->attr;
    become_const(op, k);
    if (k.is_float ? double_bits(before.fval) != double_bits(op->attr.fval) : before.ival != op->attr.ival)
        c->changed = true;
}

static TirOp *canon_op(Canon *c, TirOp *op, int depth) {
    TirOp *next = op->next;
    for (int i = 0; i < op->nopnd; i++) {
        TirValue *v = resolve(c, op->opnd[i]);
        if (v != op->opnd[i]) {
            op->opnd[i] = v;
            c->changed = true;
        }
    }
    if (op->nregion)
        return canon_region_op(c, op, depth);
    if (pass_op_has(op, TIR_T_SIDE_EFFECT)) {
        c->memgen++;
        return next;
    }
    if (pass_op_has(op, TIR_T_TERMINATOR))
        return next;
    if (op->code == TIR_OP_CONSTANT)
        normalize_const(c, op);
    /* Each rewrite makes op simpler, so a few steps reach the op's final form. */
    for (int step = 0; step < 16; step++) {
        TirValue *rep = NULL;
        if (!simplify(op, &rep))
            break;
        c->changed = true;
        if (rep) {
            replace_op(c, op, &rep);
            return next;
        }
    }
    if (cse_candidate(op)) {
        TirOp *same = cse_find_or_add(c, op);
        if (same)
            replace_op(c, op, same->res);
    }
    return next;
}

static void canon_block(Canon *c, TirBlock *blk, int depth) {
    if (depth > CANON_MAX_NESTING) {
        if (!c->errors)
            c->errors +=
                pass_error(c->ctx, "canonicalize", c->f, "regions nested more than %d deep", CANON_MAX_NESTING);
        return;
    }
    size_t mark = c->nents;
    for (TirOp *op = blk->first; op;)
        op = canon_op(c, op, depth);
    cse_pop(c, mark);
}

/* ---- the backward walk: DCE ---------------------------------------------------------------- */

typedef struct Dce {
    TirPtrMap uses; /* value -> number of operand slots naming it */
    bool changed;
} Dce;

static size_t uses_of(Dce *d, TirValue *v) {
    return (size_t)(uintptr_t)tir_ptrmap_get(&d->uses, v);
}

static bool count_op_uses(TirOp *op, void *ud) {
    Dce *d = ud;
    for (int i = 0; i < op->nopnd; i++)
        tir_ptrmap_put(&d->uses, op->opnd[i], (void *)(uintptr_t)(uses_of(d, op->opnd[i]) + 1));
    return true;
}

static bool drop_op_uses(TirOp *op, void *ud) {
    Dce *d = ud;
    for (int i = 0; i < op->nopnd; i++) {
        size_t n = uses_of(d, op->opnd[i]);
        if (n)
            tir_ptrmap_put(&d->uses, op->opnd[i], (void *)(uintptr_t)(n - 1));
    }
    return true;
}

/* Loads only read, so an unused one goes; stores, atomics, calls, prints, asserts and
 * `return` stay, and so does any `for`/`if` that holds one of them. */
static bool removable(TirOp *op) {
    unsigned t = tir_op_info[op->code].traits;
    if (t & (TIR_T_SIDE_EFFECT | TIR_T_TERMINATOR))
        return false;
    if (op->nregion)
        return !regions_have_effects(op);
    return (t & (TIR_T_PURE | TIR_T_READS)) != 0;
}

static void dce_block(Dce *d, TirBlock *blk) {
    for (TirOp *op = blk->last, *prev; op; op = prev) {
        prev = op->prev;
        bool unused = true;
        for (int i = 0; i < op->nres && unused; i++)
            unused = uses_of(d, op->res[i]) == 0;
        if (unused && removable(op)) {
            drop_op_uses(op, d);
            for (int r = 0; r < op->nregion; r++)
                tir_walk_block(op->region[r], drop_op_uses, d);
            tir_op_detach(op);
            d->changed = true;
            continue;
        }
        for (int r = 0; r < op->nregion; r++)
            dce_block(d, op->region[r]);
    }
}

/* ---- driver ------------------------------------------------------------------------------- */

static bool count_one(TirOp *op, void *ud) {
    (*(size_t *)ud)++;
    return true;
}

static int canonicalize_func(TirFunc *f, TirPassContext *ctx) {
    size_t nops = 0;
    tir_walk_func(f, count_one, &nops);
    Canon c = {.f = f, .ctx = ctx};
    c.nbuckets = 256;
    while (c.nbuckets < 2 * nops)
        c.nbuckets *= 2;
    c.buckets = malloc(c.nbuckets * sizeof *c.buckets);
    if (!c.buckets)
        abort();
    for (int round = 0; round < CANON_MAX_ROUNDS; round++) {
        memset(c.buckets, 0xff, c.nbuckets * sizeof *c.buckets); /* every chain empty (-1) */
        c.nents = 0;
        c.changed = false;
        tir_ptrmap_free(&c.repl);
        canon_block(&c, f->body, 0);
        if (c.errors)
            break;
        Dce d = {0};
        tir_walk_func(f, count_op_uses, &d);
        dce_block(&d, f->body);
        tir_ptrmap_free(&d.uses);
        if (!c.changed && !d.changed)
            break;
    }
    tir_ptrmap_free(&c.repl);
    free(c.ents);
    free(c.buckets);
    return c.errors;
}

int pass_canonicalize(TirModule *m, TirPassContext *ctx) {
    int errors = 0;
    for (TirFunc *f = m->first; f; f = f->next)
        errors += canonicalize_func(f, ctx);
    return errors;
}
