/* inline: every `call` of a device function is replaced by a copy of the callee's body.
 *
 * Why: the language promises that device functions are always inlined (docs/language.md), and
 * every later pass (axis analysis, layouts, fusion) reasons about one kernel body with no
 * calls in it.  Calls are inlined in rounds: a round inlines every call present, which
 * may bring in the callee's own calls; the round count is the call depth.  The front end
 * rejects recursion, but a hand-written .tir can still have it, so the depth and the size
 * of the grown body are bounded and exceeding them is a clear error rather than a hang.
 * Afterwards the device functions that nothing calls any more are removed from the module. */
#include "passes.h"
#include "pass_util.h"

#include <string.h>

enum {
    INLINE_MAX_DEPTH = 64,    /* rounds of inlining per function */
    INLINE_MAX_OPS = 1 << 20, /* ops copied into one function, all rounds together */
};

static bool collect_call(TirOp *op, void *ud) {
    if (op->code == TIR_OP_CALL)
        pass_opvec_push(ud, op);
    return true;
}

/* The values defined outside `op` that it (or an op in its regions) uses, mapped
 * through `map`; tir_op_clone needs only those, which keeps cloning linear. */
typedef struct {
    const TirPtrMap *map;
    TirPtrMap seen;
    TirValue **from, **to;
    int n, cap;
} FreeUses;

static void free_uses_add(FreeUses *u, TirValue *v) {
    TirValue *to = tir_ptrmap_get(u->map, v);
    if (!to || tir_ptrmap_get(&u->seen, v))
        return;
    tir_ptrmap_put(&u->seen, v, to);
    if (u->n == u->cap) {
        u->cap = u->cap ? u->cap * 2 : 16;
        u->from = realloc(u->from, (size_t)u->cap * sizeof *u->from);
        u->to = realloc(u->to, (size_t)u->cap * sizeof *u->to);
        if (!u->from || !u->to)
            abort();
    }
    u->from[u->n] = v;
    u->to[u->n] = to;
    u->n++;
}

static bool free_uses_op(TirOp *op, void *ud) {
    for (int i = 0; i < op->nopnd; i++)
        free_uses_add(ud, op->opnd[i]);
    return true;
}

static bool count_op(TirOp *op, void *ud) {
    (*(long *)ud)++;
    return true;
}

/* The uses of inlined calls' results, replaced once per round for all the round's calls:
 * a walk of the whole function per call made a chain of functions each calling the next
 * twice quadratic in the grown body (16 levels took minutes). */
static TirValue *resolve(const TirPtrMap *repl, TirValue *v) {
    for (TirValue *to; (to = tir_ptrmap_get(repl, v));)
        v = to; /* a result passed on */
    return v;
}

static bool replace_op_uses(TirOp *op, void *ud) {
    for (int i = 0; i < op->nopnd; i++)
        op->opnd[i] = resolve(ud, op->opnd[i]);
    return true;
}

/* Replaces one call by the callee's body; the call's results go into `repl` (their
 * replacements), for replace_op_uses after the round.  Returns the number of errors; past
 * the growth limit, *grown is left above INLINE_MAX_OPS. */
static int inline_call(TirModule *m, TirFunc *f, TirOp *call, TirPassContext *ctx, int depth, long *grown,
                       TirPtrMap *repl) {
    const char *name = call->attr.s ? call->attr.s : "";
    TirFunc *callee = tir_module_find(m, name);
    if (!callee)
        return pass_error(ctx, "inline", f, "call of unknown function @%s", name);
    if (callee->kind != TIR_FUNC_DEVICE)
        return pass_error(ctx, "inline", f, "call of @%s, which is a kernel, not a device function", name);
    TirBlock *body = callee->body;
    TirOp *ret = body->last;
    if (!ret || ret->code != TIR_OP_FUNC_RETURN)
        return pass_error(ctx, "inline", f, "device function @%s does not end in func_return", name);
    if (call->nopnd != body->nargs || call->nres != ret->nopnd)
        return pass_error(
            ctx, "inline", f,
            "call of @%s passes %d argument%s and expects %d result%s; the function takes %d and returns %d", name,
            call->nopnd, call->nopnd == 1 ? "" : "s", call->nres, call->nres == 1 ? "" : "s", body->nargs, ret->nopnd);

    TirPtrMap map = {0};
    for (int i = 0; i < body->nargs; i++)
        tir_ptrmap_put(&map, body->args[i], call->opnd[i]);

    TirBuilder b;
    tir_builder_before(&b, call);
    b.loc = call->loc;
    for (TirOp *op = body->first; op && op != ret; op = op->next) {
        ++*grown;
        for (int r = 0; r < op->nregion; r++)
            tir_walk_block(op->region[r], count_op, grown);
        if (*grown > INLINE_MAX_OPS) {
            tir_ptrmap_free(&map);
            return pass_error_at(ctx, "inline", f, call->loc,
                                 "inlining @%s (level %d of inlining) grows the function past %d ops; "
                                 "is the call graph exponential?",
                                 name, depth + 1, INLINE_MAX_OPS);
        }
        FreeUses u = {.map = &map};
        free_uses_op(op, &u);
        for (int r = 0; r < op->nregion; r++)
            tir_walk_block(op->region[r], free_uses_op, &u);
        TirOp *copy = tir_op_clone(&b, op, u.from, u.to, u.n);
        free(u.from);
        free(u.to);
        tir_ptrmap_free(&u.seen);
        for (int i = 0; i < op->nres; i++)
            tir_ptrmap_put(&map, op->res[i], copy->res[i]);
    }
    for (int i = 0; i < call->nres; i++) {
        TirValue *v = ret->opnd[i];
        TirValue *mapped = tir_ptrmap_get(&map, v);
        /* A result that is neither an argument nor computed in the body would not
         * verify in the callee; keep the value itself rather than crash. */
        tir_ptrmap_put(repl, call->res[i], mapped ? mapped : v);
    }
    tir_ptrmap_free(&map);
    tir_op_erase(call);
    return 0;
}

/* Inlines every call in f.  Past the growth limit it stops at once: every later call of
 * the round would report the same error (an exponential graph left millions of them). */
static int inline_into(TirModule *m, TirFunc *f, TirPassContext *ctx, bool *too_big) {
    long grown = 0;
    for (int depth = 0;; depth++) {
        PassOpVec calls = {0};
        tir_walk_func(f, collect_call, &calls);
        if (calls.n == 0) {
            free(calls.v);
            return 0;
        }
        if (depth == INLINE_MAX_DEPTH) {
            const char *callee = calls.v[0]->attr.s ? calls.v[0]->attr.s : "";
            free(calls.v);
            return pass_error(ctx, "inline", f,
                              "calls are still left after %d levels of inlining (last: @%s); "
                              "device functions must not be recursive",
                              INLINE_MAX_DEPTH, callee);
        }
        int errors = 0;
        TirPtrMap repl = {0};
        for (size_t i = 0; i < calls.n && grown <= INLINE_MAX_OPS; i++)
            errors += inline_call(m, f, calls.v[i], ctx, depth, &grown, &repl);
        *too_big = grown > INLINE_MAX_OPS;
        tir_walk_func(f, replace_op_uses, &repl);
        tir_ptrmap_free(&repl);
        free(calls.v);
        if (errors)
            return errors;
    }
}

int pass_inline(TirModule *m, TirPassContext *ctx) {
    /* The growth limit ends the pass: the other functions of an exponential call graph
     * would each grow as far again, at a million copied ops apiece, to say the same. */
    int errors = 0;
    bool too_big = false;
    for (TirFunc *f = m->first; f && !too_big; f = f->next)
        errors += inline_into(m, f, ctx, &too_big);
    if (errors)
        return errors;

    /* Calls name their callee by string; compare by content, since the parser and the
     * front end each keep their own copies of names. */
    PassOpVec left = {0};
    for (TirFunc *f = m->first; f; f = f->next)
        tir_walk_func(f, collect_call, &left);
    for (TirFunc *f = m->first, *next; f; f = next) {
        next = f->next;
        if (f->kind != TIR_FUNC_DEVICE)
            continue;
        bool called = false;
        for (size_t i = 0; i < left.n && !called; i++)
            called = left.v[i]->attr.s && strcmp(left.v[i]->attr.s, f->name) == 0;
        if (!called)
            tir_module_remove(m, f);
    }
    free(left.v);
    return 0;
}
