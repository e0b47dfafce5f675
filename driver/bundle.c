/* The bundle writer: every kernel's signature, launch-time clauses as postfix bytecode,
 * key, and its variants with their constants, specialization facts and code, in the
 * format of docs/bundle.md (the runtime's bundle_read.c is the reader). */
#include "bundle.h"

#ifdef TILEC_HAVE_BACKEND
#include "backend.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- little-endian fields ---------------------------------------------------------- */
static void put_u8(TirBuf *o, unsigned v) {
    tir_buf_put_le(o, v, 1);
}
static void put_u16(TirBuf *o, unsigned v) {
    tir_buf_put_le(o, v, 2);
}
static void put_u32(TirBuf *o, uint32_t v) {
    tir_buf_put_le(o, v, 4);
}
static void put_u64(TirBuf *o, uint64_t v) {
    tir_buf_put_le(o, v, 8);
}

static void put_f64(TirBuf *o, double d) {
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u64(o, v);
}

/* Strings longer than the format's BUNDLE_MAX_STR bytes are cut (only messages could be). */
static void put_strn(TirBuf *o, const char *s, size_t n) {
    if (n > BUNDLE_MAX_STR)
        n = BUNDLE_MAX_STR;
    put_u32(o, (uint32_t)n);
    tir_buf_put(o, s, n);
}

static void put_str(TirBuf *o, const char *s) {
    put_strn(o, s, strlen(s));
}

static void put_blob(TirBuf *o, const void *p, size_t n) {
    put_u64(o, n);
    tir_buf_put(o, p, n);
}

/* ---- the constants every variant names ---------------------------------------------- */
/* In the documented order: tuned names, const params, fixed consts, "warps", "stages". */
typedef struct ConstNames {
    const char **names;
    int n;
} ConstNames;

static void const_names_add(ConstNames *cn, const char *name) {
    for (int i = 0; i < cn->n; i++)
        if (!strcmp(cn->names[i], name))
            return;
    cn->names[cn->n++] = name;
}

static ConstNames const_names(TirArena *a, const AstKernel *kn) {
    ConstNames cn = {tir_alloc(a, (size_t)(kn->ntunes + kn->nparams + kn->nconsts + 2) * sizeof(const char *)), 0};
    for (int i = 0; i < kn->ntunes; i++)
        if (!tf_launch_shape(kn->tunes[i].name))
            const_names_add(&cn, kn->tunes[i].name);
    for (int i = 0; i < kn->nparams; i++)
        if (kn->params[i].is_const)
            const_names_add(&cn, kn->params[i].name);
    for (int i = 0; i < kn->nconsts; i++)
        if (!tf_launch_shape(kn->consts[i].name))
            const_names_add(&cn, kn->consts[i].name);
    const_names_add(&cn, "warps");
    const_names_add(&cn, "stages");
    return cn;
}

static int const_index(const ConstNames *cn, const char *name) {
    for (int i = 0; i < cn->n; i++)
        if (!strcmp(cn->names[i], name))
            return i;
    return -1;
}

/* ---- clause expressions as postfix bytecode ------------------------------------------ */
enum {
#define X(code, name, operand_bytes, pops, pushes) BC_##name = code,
    BUNDLE_OPS(X)
#undef X
};

/* The binary operators of the language, as bytecode. */
static const struct {
    AstOp op;
    uint8_t code;
} bc_binary[] = {
    {AST_OP_OROR, BC_LOR}, {AST_OP_ANDAND, BC_LAND}, {AST_OP_OR, BC_BOR},  {AST_OP_XOR, BC_BXOR}, {AST_OP_AND, BC_BAND},
    {AST_OP_EQ, BC_EQ},    {AST_OP_NE, BC_NE},       {AST_OP_LT, BC_LT},   {AST_OP_LE, BC_LE},    {AST_OP_GT, BC_GT},
    {AST_OP_GE, BC_GE},    {AST_OP_SHL, BC_SHL},     {AST_OP_SHR, BC_SHR}, {AST_OP_ADD, BC_ADD},  {AST_OP_SUB, BC_SUB},
    {AST_OP_MUL, BC_MUL},  {AST_OP_DIV, BC_DIV},     {AST_OP_REM, BC_MOD},
};

/* The clause builtins: name, arity, opcode. */
static const struct {
    const char *name;
    int arity;
    uint8_t code;
} bc_calls[] = {
    {"cdiv", 2, BC_CDIV},
    {"minimum", 2, BC_MIN},
    {"maximum", 2, BC_MAX},
    {"next_pow2", 1, BC_NEXT_POW2},
};

typedef struct Bc {
    TirBuf code;
    int depth, max_depth;
    const AstFile *file;
    const AstKernel *kn; /* NULL inside a file constant's definition */
    const ConstNames *cn;
    int nfile_consts;  /* file constants visible (a constant sees those before it) */
    const char *error; /* first failure, for the message */
    const AstNode *at;
} Bc;

static bool bc_fail(Bc *b, const AstNode *n, const char *why) {
    if (!b->error) {
        b->error = why;
        b->at = n;
    }
    return false;
}

/* Emits one instruction that pops `pops` values and pushes one. */
static bool bc_op(Bc *b, const AstNode *n, uint8_t code, int pops) {
    b->depth += 1 - pops;
    if (b->depth > b->max_depth)
        b->max_depth = b->depth;
    if (b->max_depth > BUNDLE_EXPR_STACK)
        return bc_fail(b, n, "the expression is too deep for the bundle's evaluator");
    put_u8(&b->code, code);
    return true;
}

static bool bc_expr(Bc *b, const AstNode *n, int depth);

static bool bc_name(Bc *b, const AstNode *n, int depth) {
    const char *name = n->name;
    /* As the compiler's own evaluator looks names up: the variant's constants, then
     * runtime parameters, then file constants, then inf and nan. */
    if (b->kn) {
        int j = const_index(b->cn, name);
        if (j >= 0) {
            bc_op(b, n, BC_CONST, 0);
            put_u16(&b->code, (unsigned)j);
            return true;
        }
        for (int i = 0; i < b->kn->nparams; i++) {
            const AstParam *ap = &b->kn->params[i];
            if (strcmp(ap->name, name))
                continue;
            if (ap->is_ptr || ap->is_const)
                return bc_fail(b, n, "a pointer or const parameter has no value in a clause");
            bc_op(b, n, BC_ARG, 0);
            put_u16(&b->code, (unsigned)i);
            return true;
        }
    }
    for (int i = 0; i < b->nfile_consts; i++) {
        if (strcmp(b->file->consts[i].name, name))
            continue;
        Bc sub = *b;
        sub.kn = NULL;
        sub.nfile_consts = i;
        bool ok = bc_expr(&sub, b->file->consts[i].value, depth + 1);
        b->code = sub.code;
        b->depth = sub.depth;
        b->max_depth = sub.max_depth;
        b->error = sub.error;
        b->at = sub.at;
        return ok;
    }
    if (!strcmp(name, "inf") || !strcmp(name, "nan")) {
        bc_op(b, n, BC_PUSH_F, 0);
        put_f64(&b->code, !strcmp(name, "inf") ? (double)INFINITY : (double)NAN);
        return true;
    }
    return bc_fail(b, n, "unknown name in a clause");
}

static bool bc_expr(Bc *b, const AstNode *n, int depth) {
    if (!n)
        return bc_fail(b, n, "missing expression");
    if (depth > 200)
        return bc_fail(b, n, "expression too deeply nested");
    if (b->code.len > BUNDLE_MAX_EXPR_BYTES)
        return bc_fail(b, n, "the expression is too long for a bundle (4096 bytes)");
    switch (n->kind) {
    case AST_INT:
    case AST_BOOL:
        bc_op(b, n, BC_PUSH_I, 0);
        put_u64(&b->code, (uint64_t)(n->kind == AST_BOOL ? n->ival != 0 : n->ival));
        return true;
    case AST_FLOAT:
        bc_op(b, n, BC_PUSH_F, 0);
        put_f64(&b->code, n->fval);
        return true;
    case AST_NAME: return bc_name(b, n, depth);
    case AST_UNARY:
        if (!bc_expr(b, n->a, depth + 1))
            return false;
        return bc_op(b, n, n->op == AST_OP_NEG ? BC_NEG : n->op == AST_OP_NOT ? BC_LNOT : BC_BNOT, 1);
    case AST_BINARY:
        for (size_t i = 0; i < sizeof bc_binary / sizeof bc_binary[0]; i++)
            if (bc_binary[i].op == n->op)
                return bc_expr(b, n->a, depth + 1) && bc_expr(b, n->b, depth + 1) && bc_op(b, n, bc_binary[i].code, 2);
        return bc_fail(b, n, "operator not allowed in a clause");
    case AST_CAST: {
        int t = n->name ? tir_scalar_from_name(n->name, strlen(n->name)) : -1;
        if (t < 0)
            return bc_fail(b, n, "unknown type in a cast");
        if (!bc_expr(b, n->a, depth + 1) || !bc_op(b, n, BC_CAST, 1))
            return false;
        put_u8(&b->code, (unsigned)t);
        return true;
    }
    case AST_CALL:
        for (size_t i = 0; i < sizeof bc_calls / sizeof bc_calls[0]; i++) {
            if (!n->name || strcmp(n->name, bc_calls[i].name))
                continue;
            if (n->nlist != bc_calls[i].arity || n->nnamed)
                return bc_fail(b, n, "wrong number of arguments");
            for (int j = 0; j < n->nlist; j++)
                if (!bc_expr(b, n->list[j], depth + 1))
                    return false;
            return bc_op(b, n, bc_calls[i].code, bc_calls[i].arity);
        }
        return bc_fail(b, n, "only cdiv, minimum, maximum and next_pow2 are allowed in a clause");
    default: return bc_fail(b, n, "not a clause expression");
    }
}

/* Appends `expr` (u32 nbytes, code) to o; reports and returns false on failure. */
static bool put_expr(tile_program *p, int k, const ConstNames *cn, const AstNode *e, const char *clause, TirBuf *o) {
    Bc b = {.file = p->file, .kn = &p->file->kernels[k], .cn = cn, .nfile_consts = p->file->nconsts};
    bool ok = bc_expr(&b, e, 0) && b.depth == 1 && !b.code.failed;
    if (ok && b.code.len > BUNDLE_MAX_EXPR_BYTES)
        ok = bc_fail(&b, e, "the expression is too long for a bundle (4096 bytes)");
    if (!ok) {
        const AstNode *at = b.at ? b.at : e;
        if (at)
            tf_error(&p->diag, at->loc, at->end,
                     "cannot write the %s clause of '%s' to a "
                     "bundle: %s",
                     clause, p->file->kernels[k].name, b.error ? b.error : "out of memory");
        else
            driver_error(p->ctx, "cannot write the %s clause of '%s' to a bundle", clause, p->file->kernels[k].name);
    } else {
        put_u32(o, (uint32_t)b.code.len);
        tir_buf_put(o, b.code.s, b.code.len);
    }
    tir_buf_free(&b.code);
    return ok;
}

/* ---- specialization facts ----------------------------------------------------------- */
static bool param_is_int(const AstParam *ap) {
    int s = driver_param_scalar(ap);
    return !ap->is_ptr && s >= 0 && s != TIR_I1 && !tir_scalar_is_float((TirScalar)s);
}

/* The facts the context's assumptions and the nextra assumptions `extra` give kernel k's
 * parameters, as the masks of docs/bundle.md (bit i: parameter i in declaration order,
 * const params counted). */
static void assumed_masks(const tile_ctx *c, const DriverAssume *extra, int nextra, const AstKernel *kn,
                          uint64_t *div16, uint64_t *div8, uint64_t *eq1) {
    *div16 = *div8 = *eq1 = 0;
    for (int i = 0; i < kn->nparams && i < 64; i++) {
        const AstParam *ap = &kn->params[i];
        if (ap->is_const)
            continue;
        for (int j = 0; j < c->nassumes + nextra; j++) {
            const DriverAssume *as = j < c->nassumes ? &c->assumes[j] : &extra[j - c->nassumes];
            bool all = !strcmp(as->name, "*");
            if (!all && strcmp(as->name, ap->name))
                continue;
            if ((as->facts & TILE_ASSUME_DIV16) && (ap->is_ptr || param_is_int(ap)))
                *div16 |= 1ull << i;
            if ((as->facts & TILE_ASSUME_DIV8) && (ap->is_ptr || param_is_int(ap)))
                *div8 |= 1ull << i;
            if ((as->facts & TILE_ASSUME_ONE) && param_is_int(ap) && !all)
                *eq1 |= 1ull << i;
        }
    }
    *div8 &= ~*div16; /* divisible by 16 says more; the masks are disjoint */
}

/* The specializations written for every variant with code: the runtime picks the most
 * specialized admissible one.  Pointers from cudaMalloc/PyTorch are 256-byte aligned and
 * row lengths are usually multiples of 16, so pointers and integers divisible by 16 cover
 * most launches; integers divisible by 8 (a 4000x3000x5000 GEMM's sizes) keep 16-byte rows
 * of 2-byte elements; the generic one (the context's own assumptions only) always exists. */
enum { FACTS_NONE, FACTS_POINTERS, FACTS_POINTERS_INTS8, FACTS_POINTERS_INTS, FACTS_COUNT };

typedef struct FactSet {
    uint64_t div16, div8; /* extra facts of one specialization, by parameter */
} FactSet;

/* Set `set`'s facts; parameters the context assumes equal to 1 (eq1) get none: 1 is a
 * multiple of neither, so such a record could never be launched. */
static FactSet facts_set(const AstKernel *kn, int set, uint64_t eq1) {
    FactSet m = {0, 0};
    for (int i = 0; i < kn->nparams && i < 64; i++) {
        const AstParam *ap = &kn->params[i];
        if (ap->is_const || (eq1 >> i & 1))
            continue;
        if (set >= FACTS_POINTERS && ap->is_ptr)
            m.div16 |= 1ull << i;
        else if (set == FACTS_POINTERS_INTS && param_is_int(ap))
            m.div16 |= 1ull << i;
        else if (set == FACTS_POINTERS_INTS8 && param_is_int(ap))
            m.div8 |= 1ull << i;
    }
    return m;
}

/* ---- variants ------------------------------------------------------------------------ */
/* The variant's value of const name `name`; *is_float says whether it is a float. */
static double variant_value(const TfVariant *v, const char *name, bool *is_float) {
    *is_float = false;
    for (int i = 0; i < v->nconsts; i++) {
        const TirConstBinding *b = &v->consts[i];
        if (!strcmp(b->name, name)) {
            *is_float = b->is_float;
            return b->is_float ? b->fval : (double)b->ival;
        }
    }
    TfLaunchShape ls = tf_launch_shape(name);
    return ls == TF_LAUNCH_WARPS ? v->warps : ls == TF_LAUNCH_STAGES ? v->stages : 0;
}

static void put_variant_head(TirBuf *o, const ConstNames *cn, const TfVariant *v, uint32_t smem, uint64_t div16,
                             uint64_t div8, uint64_t eq1, uint64_t flops, uint64_t bytes) {
    bool fl;
    for (int j = 0; j < cn->n; j++)
        put_f64(o, variant_value(v, cn->names[j], &fl));
    for (int j = 0; j < cn->n; j++) {
        variant_value(v, cn->names[j], &fl);
        put_u8(o, fl);
    }
    put_u32(o, (uint32_t)v->warps);
    put_u32(o, (uint32_t)v->stages);
    put_u32(o, smem);
    put_u64(o, div16);
    put_u64(o, eq1);
    put_u64(o, div8); /* version 3 */
    put_u64(o, flops);
    put_u64(o, bytes);
}

#ifdef TILEC_HAVE_BACKEND
static void bundle_diag_at(void *ud, uint32_t loc, const char *msg) {
    tile_program *p = ud;
    tf_error(&p->diag, loc, loc, "%s", msg);
}

/* Compiles variant v of kernel k under the context's assumptions plus `extra` (a DIV16
 * or DIV8 assumption per parameter whose bit is set) and appends the variant record with
 * its cubin and PTX. */
static tile_status put_variant_code(tile_program *p, int k, const ConstNames *cn, const TfVariant *v, FactSet extra,
                                    TirBuf *o) {
    tile_ctx *c = p->ctx;
    const AstKernel *kn = &p->file->kernels[k];
    /* The extra facts go in as assumptions of this compile alone, applied after the
     * user's exactly as the user's are; the context itself is not touched. */
    DriverAssume tmp[64];
    int n = 0;
    for (int i = 0; i < kn->nparams && i < 64; i++)
        if ((extra.div16 | extra.div8) >> i & 1)
            tmp[n++] =
                (DriverAssume){(char *)kn->params[i].name, extra.div16 >> i & 1 ? TILE_ASSUME_DIV16 : TILE_ASSUME_DIV8};
    uint64_t div16, div8, eq1;
    assumed_masks(c, tmp, n, kn, &div16, &div8, &eq1);

    TirArena *a = tir_arena_new();
    TirModule *m = driver_lower_to(p, a, k, v, true, tmp, n);
    TirFunc *f = m ? m->first : NULL;
    while (f && f->kind != TIR_FUNC_KERNEL)
        f = f->next;
    tile_status s = TILE_OK;
    char *ptx = NULL, *cubin = NULL;
    size_t ptx_len = 0, cubin_len = 0;
    TbReport rep = {0};
    TbAltCubin alt = {0};
    if (!f) {
        s = TILE_ERR_COMPILE;
    } else {
        TbOptions opt = {.arch = c->arch,
                         .opt_level = c->opt_level,
                         .debug = c->debug,
                         .diag_at = bundle_diag_at,
                         .diag_at_ud = p,
                         .ptxas_options = c->ptxas_options};
        driver_lowering_options(&opt);
        int before = p->diag.nerrors;
        /* the cubin with the register budget (alt), the lowering that spills least, and
         * that lowering's PTX, as the JIT's compiles (tb_emit) get */
        if (tb_emit_cubin_ptx(m, f, &opt, &cubin, &cubin_len, &ptx, &ptx_len, &rep, &alt, driver_sink, c) ||
            p->diag.nerrors > before || !cubin || !ptx)
            s = TILE_ERR_COMPILE;
        driver_time(c, TILE_PHASE_PTXAS, rep.t_ptxas);
        driver_time(c, TILE_PHASE_LLVM_IR, rep.t_build);
        driver_time(c, TILE_PHASE_LLVM_OPT, rep.t_opt);
        driver_time(c, TILE_PHASE_CODEGEN, rep.t_codegen);
    }
    if (s == TILE_OK) {
        /* The backend's shared scratch is static (in the cubin), so no dynamic bytes. */
        put_variant_head(o, cn, v, 0, div16, div8, eq1, rep.flops > 0 ? (uint64_t)rep.flops : 0,
                         rep.global_bytes > 0 ? (uint64_t)rep.global_bytes : 0);
        put_u32(o, alt.cubin ? 3 : 2);
        put_str(o, c->arch);
        put_u8(o, BUNDLE_CODE_CUBIN);
        put_str(o, f->name);
        put_blob(o, cubin, cubin_len);
        put_str(o, c->arch);
        put_u8(o, BUNDLE_CODE_PTX);
        put_str(o, f->name);
        put_blob(o, ptx, ptx_len);
        if (alt.cubin) {
            /* where the register budget capped the registers: the uncapped cubin too, a
             * candidate of its own for the runtime's tuner (docs/backend.md) */
            put_str(o, c->arch);
            put_u8(o, BUNDLE_CODE_CUBIN_UNCAPPED);
            put_str(o, f->name);
            put_blob(o, alt.cubin, alt.len);
        }
    }
    free(ptx);
    free(cubin);
    free(alt.cubin);
    tir_arena_free(a);
    c->variant[0] = 0;
    return s;
}

/* The code records of one kernel as a batch of jobs: job j is variant j / nsets under
 * fact set j % nsets, written to bufs[j], on whichever copy of the program the worker
 * has (each copy lists the same variants and constant names). */
typedef struct CodeJobs {
    int k;
    bool all, only_relevant;
    const FactSet *sets;
    int nsets;
    TirBuf *bufs;
} CodeJobs;

static tile_status code_job(tile_program *q, int job, void *ud) {
    CodeJobs *cj = ud;
    tile_variants *vs;
    tile_status s = driver_variants_get(q, cj->k, cj->all, cj->only_relevant, &vs);
    if (s != TILE_OK)
        return s;
    TirArena *a = tir_arena_new();
    ConstNames cn = const_names(a, &q->file->kernels[cj->k]);
    int vi = job / cj->nsets;
    s = vi < vs->n ? put_variant_code(q, cj->k, &cn, &vs->v[vi], cj->sets[job % cj->nsets], &cj->bufs[job])
                   : TILE_ERR_INVALID;
    tir_arena_free(a);
    tile_variants_free(vs);
    return s;
}
#endif

/* ---- kernels --------------------------------------------------------------------------- */
static tile_status put_kernel(tile_program *p, int k, bool all, bool only_relevant, bool with_code, TirBuf *o) {
    const AstFile *file = p->file;
    const AstKernel *kn = &file->kernels[k];
    tile_variants *vs;
    tile_status s = driver_variants_get(p, k, all, only_relevant, &vs);
    if (s != TILE_OK)
        return s;
    TirArena *a = tir_arena_new();
    ConstNames cn = const_names(a, kn);

    put_str(o, kn->name);
    uint64_t h = bundle_fnv1a(BUNDLE_FNV_BASIS, file->src, file->len);
    put_u64(o, bundle_fnv1a(h, kn->name, strlen(kn->name)));
    put_u32(o, (uint32_t)kn->nparams);
    for (int i = 0; i < kn->nparams; i++) {
        const AstParam *ap = &kn->params[i];
        int sc = driver_param_scalar(ap);
        put_str(o, ap->name);
        put_u8(o, ap->is_ptr);
        put_u8(o, sc < 0 ? 0 : (unsigned)sc);
        put_u8(o, ap->is_const);
        put_u8(o, 0);
    }
    bool ok = true;
    put_u32(o, (uint32_t)kn->ngrid);
    for (int i = 0; i < kn->ngrid; i++)
        ok &= put_expr(p, k, &cn, kn->grid[i], "grid", o);

    uint32_t nwhere = 0;
    for (int i = 0; i < kn->nwheres; i++)
        nwhere += tf_where_is_runtime(file, k, i);
    put_u32(o, nwhere);
    for (int i = 0; i < kn->nwheres; i++) {
        if (!tf_where_is_runtime(file, k, i))
            continue;
        const AstNode *w = kn->wheres[i];
        put_strn(o, file->src + w->loc, w->end > w->loc ? w->end - w->loc : 0);
        int line, col;
        tf_line_col(&p->diag, w->loc, &line, &col);
        char loc[512];
        snprintf(loc, sizeof loc, "%s:%d:%d", file->path, line, col);
        put_str(o, loc);
        ok &= put_expr(p, k, &cn, w, "where", o);
    }

    /* key: the clause's names, else every integer or bool scalar runtime parameter */
    uint16_t key[64];
    int nkey = 0;
    if (kn->has_key) {
        for (int i = 0; i < kn->nkey && nkey < 64; i++)
            for (int j = 0; j < kn->nparams; j++)
                if (kn->key[i]->name && !strcmp(kn->params[j].name, kn->key[i]->name))
                    key[nkey++] = (uint16_t)j;
    } else {
        for (int j = 0; j < kn->nparams && nkey < 64; j++) {
            const AstParam *ap = &kn->params[j];
            int sc = driver_param_scalar(ap);
            if (!ap->is_ptr && !ap->is_const && sc >= 0 && !tir_scalar_is_float((TirScalar)sc))
                key[nkey++] = (uint16_t)j;
        }
    }
    put_u32(o, (uint32_t)nkey);
    for (int i = 0; i < nkey; i++)
        put_u16(o, key[i]);

    put_u32(o, (uint32_t)cn.n);
    for (int i = 0; i < cn.n; i++)
        put_str(o, cn.names[i]);

    if (!with_code) {
        put_u32(o, (uint32_t)vs->n);
        for (int i = 0; i < vs->n; i++) {
            put_variant_head(o, &cn, &vs->v[i], 0, 0, 0, 0, 0, 0);
            put_u32(o, 0);
        }
    } else {
#ifdef TILEC_HAVE_BACKEND
        /* Count first: the sets that add nothing (no pointer, no integer) are skipped. */
        FactSet sets[FACTS_COUNT];
        int nsets = 0;
        uint64_t d16, d8, eq1;
        assumed_masks(p->ctx, NULL, 0, kn, &d16, &d8, &eq1);
        for (int f = 0; f < FACTS_COUNT; f++) {
            FactSet m = facts_set(kn, f, eq1);
            if (nsets == 0 || m.div16 != sets[nsets - 1].div16 || m.div8 != sets[nsets - 1].div8)
                sets[nsets++] = m;
        }
        put_u32(o, (uint32_t)(vs->n * nsets));
        /* each (variant, facts) record compiled on its own (in parallel), then appended
         * in order; the first failure stops the bundle, as one at a time would */
        int n = vs->n * nsets;
        CodeJobs cj = {k, all, only_relevant, sets, nsets, calloc((size_t)n + 1, sizeof(TirBuf))};
        ok = cj.bufs && driver_run_jobs(p, n, code_job, &cj, kn->name, true) == TILE_OK;
        for (int j = 0; cj.bufs && j < n; j++) {
            if (ok)
                tir_buf_put(o, cj.bufs[j].s, cj.bufs[j].len);
            ok &= !cj.bufs[j].failed;
            tir_buf_free(&cj.bufs[j]);
        }
        free(cj.bufs);
#else
        driver_error(p->ctx, "--emit=bundle needs the GPU backend, which this build lacks");
        s = TILE_ERR_UNSUPPORTED;
#endif
    }
    if (s == TILE_OK && !ok)
        s = TILE_ERR_COMPILE;
    tir_arena_free(a);
    tile_variants_free(vs);
    return s;
}

tile_status driver_emit_bundle(tile_program *p, int k, bool all, bool with_code, char **out, size_t *len) {
    *out = NULL;
    *len = 0;
    p->diag.nerrors = 0;
    tile_status s = driver_check_request(p, k);
    if (s != TILE_OK)
        return s;
    TirBuf body = {0};
    char producer[64];
    snprintf(producer, sizeof producer, "tilec %s", TILEC_VERSION_STRING);
    put_str(&body, producer);
    int first = k < 0 ? 0 : k, end = k < 0 ? p->file->nkernels : k + 1;
    put_u32(&body, (uint32_t)(end - first));
    /* Every kernel is written even after one fails, so all errors are reported. */
    for (int i = first; i < end; i++) {
        tile_status si = put_kernel(p, i, all, k < 0, with_code, &body);
        if (s == TILE_OK)
            s = si;
    }
    if (s == TILE_OK && body.failed) {
        driver_error(p->ctx, "out of memory writing the bundle");
        s = TILE_ERR_INVALID;
    }
    if (s != TILE_OK) {
        tir_buf_free(&body);
        return s;
    }
    TirBuf file = {0};
    tir_buf_put(&file, BUNDLE_MAGIC, BUNDLE_MAGIC_BYTES);
    put_u32(&file, BUNDLE_VERSION);
    put_u32(&file, 0);
    put_u64(&file, body.len);
    put_u64(&file, bundle_fnv1a(BUNDLE_FNV_BASIS, body.s, body.len));
    tir_buf_put(&file, body.s, body.len);
    tir_buf_free(&body);
    *out = tir_buf_take(&file, len);
    if (!*out) {
        driver_error(p->ctx, "out of memory writing the bundle");
        return TILE_ERR_INVALID;
    }
    return TILE_OK;
}

tile_status tile_emit_bundle_meta(tile_program *p, int k, char **out, size_t *len) {
    if (!p || !out || !len)
        return TILE_ERR_INVALID;
    *out = NULL;
    *len = 0;
    if (k >= p->file->nkernels || k < -1) {
        driver_error(p->ctx, "no kernel number %d in '%s'", k, p->file->path);
        return TILE_ERR_NOT_FOUND;
    }
    return driver_emit_bundle(p, k, true, false, out, len);
}
