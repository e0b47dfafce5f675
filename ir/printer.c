/* The text form (docs/ir.md), written from the ops table.  What this prints, parser.c
 * reads back to the same IR, and printing that again gives the same text. */
#include "tir_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    FILE *out;
    const TirModule *m;
    const TirFunc *f;
} Printer;

static bool ends_in_number(const char *s) {
    const char *dot = strrchr(s, '.');
    if (!dot || !dot[1])
        return false;
    for (const char *p = dot + 1; *p; p++)
        if (!isdigit((unsigned char)*p))
            return false;
    return true;
}

/* A name hint the parser would read back as the same hint (letters, digits, _ and .). */
static void put_name(FILE *out, const char *name) {
    for (const char *p = name; *p; p++)
        fputc(isalnum((unsigned char)*p) || *p == '_' || *p == '.' ? *p : '_', out);
}

static bool name_ok_bare(const char *name) {
    if (!name || !*name || isdigit((unsigned char)name[0]) || ends_in_number(name))
        return false;
    for (const char *p = name; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '.'))
            return false;
    return true;
}

/* Parameters print as `%name` when that is unambiguous (docs/ir.md's kernel headers);
 * every other value as `%name.N` or `%N`. */
static bool param_prints_bare(const TirFunc *f, const TirValue *v) {
    if (!f || v->def || v->block != f->body || !name_ok_bare(v->name))
        return false;
    for (int i = 0; i < v->index && i < f->body->nargs; i++) {
        const char *o = f->body->args[i]->name;
        if (o && strcmp(o, v->name) == 0)
            return false;
    }
    return true;
}

static void put_value(Printer *p, const TirValue *v) {
    if (!v) {
        fputs("%<null>", p->out);
        return;
    }
    fputc('%', p->out);
    if (param_prints_bare(p->f, v)) {
        fputs(v->name, p->out);
        return;
    }
    if (v->name && *v->name) {
        put_name(p->out, v->name);
        fputc('.', p->out);
    }
    fprintf(p->out, "%d", v->id);
}

static void put_type(Printer *p, TirType t) {
    char buf[512];
    int n = tir_type_print(buf, sizeof buf, p->m, t);
    if (n < (int)sizeof buf) {
        fputs(buf, p->out);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big)
        return;
    tir_type_print(big, (size_t)n + 1, p->m, t);
    fputs(big, p->out);
    free(big);
}

void tir_print_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        default:
            if (*c < 0x20 || *c == 0x7f)
                fprintf(out, "\\x%02x", *c);
            else
                fputc(*c, out);
        }
    }
    fputc('"', out);
}

static void put_double(FILE *out, double v) {
    char buf[64];
    TirSb sb = {buf, sizeof buf, 0};
    tir_sb_double(&sb, v);
    fputs(buf, out);
}

/* vec=N: the per-access vector width the layout pass proved (attr i[1] of load and
 * store); printed so that a reparsed module keeps its vector accesses. */
static bool has_vec(const TirOp *op) {
    return (op->code == TIR_OP_LOAD || op->code == TIR_OP_STORE) && op->attr.i[1] > 1;
}

/* const=[..]: a cmp's proven constancy runs (layout pass), when any run is longer than 1. */
static bool has_constancy(const TirOp *op) {
    if (op->code != TIR_OP_CMP)
        return false;
    for (int d = 0; d < TIR_MAXRANK; d++)
        if (op->attr.constancy[d] > 1)
            return true;
    return false;
}

/* One attribute dictionary: the op's own attributes, then the facts passes record
 * (vec, const, smem), all inside one `{...}`. */
typedef struct {
    FILE *out;
    bool open;
} AttrOut;

static void key(AttrOut *o, const char *k) {
    fputs(o->open ? ", " : " {", o->out);
    o->open = true;
    fputs(k, o->out);
    fputc('=', o->out);
}

static void put_own_attrs(AttrOut *o, const TirOp *op) {
    FILE *out = o->out;
    const TirAttr *a = &op->attr;
    switch (tir_attr_kind((TirOpcode)op->code)) {
    case TIR_A_NONE: return;
    case TIR_A_VALUE: {
        TirType t = op->nres ? op->res[0]->ty : tir_scalar_type(TIR_I32);
        key(o, "value");
        if (!t.ptr && tir_scalar_is_float((TirScalar)t.elem))
            put_double(out, a->fval);
        else if (!t.ptr && t.elem == TIR_U64)
            fprintf(out, "%llu", (unsigned long long)a->ival);
        else
            fprintf(out, "%lld", (long long)a->ival);
        return;
    }
    case TIR_A_RANGE:
        key(o, "start");
        fprintf(out, "%lld", (long long)a->i[0]);
        key(o, "end");
        fprintf(out, "%lld", (long long)a->i[1]);
        return;
    case TIR_A_AXIS:
        key(o, "axis");
        fprintf(out, "%lld", (long long)a->i[0]);
        return;
    case TIR_A_PRED:
        key(o, "pred");
        if (a->i[0] >= 0 && a->i[0] < 6)
            fputs(tir_cmp_names[a->i[0]], out);
        else
            fprintf(out, "%lld", (long long)a->i[0]);
        return;
    case TIR_A_N:
        key(o, "n");
        fprintf(out, "%lld", (long long)a->i[0]);
        return;
    case TIR_A_CACHE:
        if (a->s && *a->s) {
            key(o, "cache");
            tir_print_string(out, a->s);
        }
        return;
    case TIR_A_ORDER:
        /* the defaults (acq_rel, gpu) are not written */
        if (a->i[0] > 0 && a->i[0] < TIR_NSEMS) {
            key(o, "sem");
            fputs(tir_sem_names[a->i[0]], out);
        }
        if (a->i[1] > 0 && a->i[1] < TIR_NSCOPES) {
            key(o, "scope");
            fputs(tir_scope_names[a->i[1]], out);
        }
        return;
    case TIR_A_TF32:
        if (a->i[0]) {
            key(o, "tf32");
            fprintf(out, "%lld", (long long)a->i[0]);
        }
        return;
    case TIR_A_FAST:
        if (a->i[0]) {
            key(o, "fast");
            fprintf(out, "%lld", (long long)a->i[0]);
        }
        return;
    case TIR_A_PERM: {
        int rank = op->nres ? op->res[0]->ty.rank : 0;
        key(o, "perm");
        fputc('[', out);
        for (int i = 0; i < rank; i++)
            fprintf(out, i ? ", %lld" : "%lld", (long long)a->i[i]);
        fputc(']', out);
        return;
    }
    case TIR_A_LABEL:
    case TIR_A_MSG:
        key(o, tir_attr_kind((TirOpcode)op->code) == TIR_A_LABEL ? "label" : "msg");
        tir_print_string(out, a->s);
        return;
    case TIR_A_CALLEE:
        key(o, "callee");
        fputc('@', out);
        put_name(out, a->s ? a->s : "");
        return;
    }
}

static void put_attrs(Printer *p, const TirOp *op) {
    AttrOut o = {p->out, false};
    const TirAttr *a = &op->attr;
    put_own_attrs(&o, op);
    if (has_vec(op)) {
        key(&o, "vec");
        fprintf(o.out, "%lld", (long long)a->i[1]);
    }
    if (has_constancy(op)) {
        int rank = op->nres && op->res[0]->ty.rank > 0 ? op->res[0]->ty.rank : 1;
        key(&o, "const");
        fputc('[', o.out);
        for (int d = 0; d < rank; d++)
            fprintf(o.out, d ? ", %d" : "%d", a->constancy[d] > 1 ? a->constancy[d] : 1);
        fputc(']', o.out);
    }
    if (a->smem_bytes > 0) {
        key(&o, "smem");
        fprintf(o.out, "[%d, %d]", a->smem_off, a->smem_bytes);
    }
    if (o.open)
        fputc('}', o.out);
}

static void indent(FILE *out, int depth) {
    for (int i = 0; i < depth; i++)
        fputs("  ", out);
}

static void print_block_body(Printer *p, const TirBlock *blk, int depth);

static void print_op(Printer *p, const TirOp *op, int depth) {
    FILE *out = p->out;
    indent(out, depth);
    for (int i = 0; i < op->nres; i++) {
        if (i)
            fputs(", ", out);
        put_value(p, op->res[i]);
    }
    if (op->nres)
        fputs(" = ", out);
    fputs(op->code < TIR_NOPS ? tir_op_info[op->code].name : "<bad-op>", out);
    put_attrs(p, op);
    for (int i = 0; i < op->nopnd; i++) {
        fputs(i ? ", " : " ", out);
        put_value(p, op->opnd[i]);
    }
    for (int i = 0; i < op->nres; i++) {
        fputs(i ? ", " : " : ", out);
        put_type(p, op->res[i]->ty);
    }
    for (int r = 0; r < op->nregion; r++) {
        const TirBlock *blk = op->region[r];
        fputs(" {\n", out);
        if (blk->nargs) {
            indent(out, depth);
            fputs("^(", out);
            for (int i = 0; i < blk->nargs; i++) {
                if (i)
                    fputs(", ", out);
                put_value(p, blk->args[i]);
                fputs(": ", out);
                put_type(p, blk->args[i]->ty);
            }
            fputs("):\n", out);
        }
        print_block_body(p, blk, depth + 1);
        indent(out, depth);
        fputc('}', out);
    }
    fputc('\n', out);
}

static void print_block_body(Printer *p, const TirBlock *blk, int depth) {
    for (const TirOp *op = blk->first; op; op = op->next)
        print_op(p, op, depth);
}

void tir_print_func(FILE *out, const TirFunc *f) {
    Printer p = {out, f->module, f};
    fprintf(out, "%s @", f->kind == TIR_FUNC_KERNEL ? "kernel" : "func");
    put_name(out, f->name);
    if (f->nconsts || f->warps || f->stages) {
        fputs(" [", out);
        int n = 0;
        for (int i = 0; i < f->nconsts; i++, n++) {
            const TirConstBinding *c = &f->consts[i];
            fputs(n ? ", " : "", out);
            put_name(out, c->name ? c->name : "_");
            fputc('=', out);
            if (c->is_float)
                put_double(out, c->fval);
            else
                fprintf(out, "%lld", (long long)c->ival);
        }
        if (f->warps)
            fprintf(out, "%swarps=%d", n++ ? ", " : "", f->warps);
        if (f->stages)
            fprintf(out, "%sstages=%d", n++ ? ", " : "", f->stages);
        fputc(']', out);
    }
    fputs(" (", out);
    for (int i = 0; i < f->body->nargs; i++) {
        if (i)
            fputs(", ", out);
        put_value(&p, f->body->args[i]);
        fputs(": ", out);
        put_type(&p, f->body->args[i]->ty);
        const TirParamInfo *pi = f->params ? &f->params[i] : NULL;
        if (pi && (pi->divisibility > 1 || pi->equals_one)) {
            fputs(" {", out);
            if (pi->divisibility > 1)
                fprintf(out, "div=%d", pi->divisibility);
            if (pi->equals_one)
                fputs(pi->divisibility > 1 ? ", one" : "one", out);
            fputc('}', out);
        }
    }
    fputc(')', out);
    if (f->kind == TIR_FUNC_DEVICE) {
        if (f->nret == 1) {
            fputs(" -> ", out);
            put_type(&p, f->ret[0]);
        } else if (f->nret > 1) {
            fputs(" -> (", out);
            for (int i = 0; i < f->nret; i++) {
                if (i)
                    fputs(", ", out);
                put_type(&p, f->ret[i]);
            }
            fputc(')', out);
        }
    }
    fputs(" {\n", out);
    print_block_body(&p, f->body, 1);
    fputs("}\n", out);
}

void tir_print_module(FILE *out, const TirModule *m) {
    for (const TirFunc *f = m->first; f; f = f->next) {
        tir_print_func(out, f);
        if (f->next)
            fputc('\n', out);
    }
}

char *tir_print_module_to_string(const TirModule *m) {
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return NULL;
    tir_print_module(out, m);
    fclose(out);
    return buf;
}
