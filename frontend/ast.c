/* Syntax-tree helpers: operator spellings, the builders the parser uses, the dumper. */
#include "syntax.h"
#include "ast_dump.h"

#include <stdlib.h>
#include <string.h>

const char *const ast_op_text[] = {
    [AST_OP_NONE] = "", [AST_OP_OROR] = "||",  [AST_OP_ANDAND] = "&&", [AST_OP_OR] = "|",   [AST_OP_XOR] = "^",
    [AST_OP_AND] = "&", [AST_OP_EQ] = "==",    [AST_OP_NE] = "!=",     [AST_OP_LT] = "<",   [AST_OP_LE] = "<=",
    [AST_OP_GT] = ">",  [AST_OP_GE] = ">=",    [AST_OP_SHL] = "<<",    [AST_OP_SHR] = ">>", [AST_OP_ADD] = "+",
    [AST_OP_SUB] = "-", [AST_OP_MUL] = "*",    [AST_OP_DIV] = "/",     [AST_OP_REM] = "%",  [AST_OP_NEG] = "-",
    [AST_OP_NOT] = "!", [AST_OP_BITNOT] = "~",
};

/* ---- builders ------------------------------------------------------------------ */

/* The depth rides behind the node so that ast.h stays what sema sees. */
typedef struct AstBox {
    AstNode node; /* first: an AstNode* of a builder node points at its box */
    int32_t depth;
} AstBox;

void tf_vec_push(TirArena *a, TfVec *vec, const void *elem, size_t size) {
    if (vec->n == vec->cap) {
        int32_t cap = vec->cap ? vec->cap * 2 : 8;
        void *v = tir_alloc(a, (size_t)cap * size);
        if (vec->n)
            memcpy(v, vec->v, (size_t)vec->n * size);
        vec->v = v;
        vec->cap = cap;
    }
    memcpy((char *)vec->v + (size_t)vec->n * size, elem, size);
    vec->n++;
}

AstNode *ast_new(TirArena *a, AstKind kind, uint32_t loc, uint32_t end) {
    AstBox *box = tir_alloc(a, sizeof *box);
    box->node.kind = kind;
    box->node.loc = loc;
    box->node.end = end;
    box->depth = 1;
    return &box->node;
}

int32_t ast_depth(const AstNode *n) {
    return n ? ((const AstBox *)n)->depth : 0;
}

static int32_t max_i32(int32_t x, int32_t y) {
    return x > y ? x : y;
}

void ast_fix_depth(AstNode *n) {
    int32_t d = max_i32(ast_depth(n->a), max_i32(ast_depth(n->b), ast_depth(n->body)));
    for (int32_t i = 0; i < n->nlist; i++)
        d = max_i32(d, ast_depth(n->list[i]));
    for (int32_t i = 0; i < n->nnamed; i++)
        d = max_i32(d, ast_depth(n->named[i]));
    ((AstBox *)n)->depth = d + 1;
}

AstNode *ast_unary(TirArena *a, AstOp op, AstNode *x, uint32_t loc, uint32_t end) {
    AstNode *n = ast_new(a, AST_UNARY, loc, end);
    n->op = op;
    n->a = x;
    ast_fix_depth(n);
    return n;
}

AstNode *ast_binary(TirArena *a, AstOp op, AstNode *x, AstNode *y) {
    AstNode *n = ast_new(a, AST_BINARY, x->loc, y->end);
    n->op = op;
    n->a = x;
    n->b = y;
    ast_fix_depth(n);
    return n;
}

void ast_set_list(AstNode *n, const TfVec *items) {
    n->list = items->v;
    n->nlist = items->n;
    ast_fix_depth(n);
}

/* ---- dumper -------------------------------------------------------------------- */
/* Recursion here is bounded by TF_MAX_AST_DEPTH, which the parser enforces. */

/* The shortest %g form that reads back to the same double, always with a '.' or an
 * exponent so that it reads as a float. */
static void dump_float(FILE *out, double v) {
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, out);
    if (!strpbrk(buf, ".eEni"))
        fputs(".0", out);
}

static const char *unary_name(AstOp op) {
    return op == AST_OP_NEG ? "neg" : ast_op_text[op];
}

static void dump_list(FILE *out, AstNode *const *v, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        fputc(' ', out);
        tf_dump_expr(out, v[i]);
    }
}

void tf_dump_expr(FILE *out, const AstNode *n) {
    if (!n) {
        fputs("<null>", out);
        return;
    }
    switch (n->kind) {
    case AST_INT: fprintf(out, "%lld", (long long)n->ival); break;
    case AST_FLOAT: dump_float(out, n->fval); break;
    case AST_BOOL: fputs(n->ival ? "true" : "false", out); break;
    case AST_STRING: tir_print_string(out, n->name); break;
    case AST_NAME: fputs(n->name, out); break;
    case AST_NONE: fputs("None", out); break;
    case AST_SLICE: fputc(':', out); break;
    case AST_UNARY:
        fprintf(out, "(%s ", unary_name(n->op));
        tf_dump_expr(out, n->a);
        fputc(')', out);
        break;
    case AST_BINARY:
        fprintf(out, "(%s ", ast_op_text[n->op]);
        tf_dump_expr(out, n->a);
        fputc(' ', out);
        tf_dump_expr(out, n->b);
        fputc(')', out);
        break;
    case AST_CAST:
        fprintf(out, "(as %s ", n->name);
        tf_dump_expr(out, n->a);
        fputc(')', out);
        break;
    case AST_CALL:
        fprintf(out, "(call %s", n->name);
        dump_list(out, n->list, n->nlist);
        dump_list(out, n->named, n->nnamed);
        fputc(')', out);
        break;
    case AST_NAMED_ARG:
        fprintf(out, "(= %s ", n->name);
        tf_dump_expr(out, n->a);
        fputc(')', out);
        break;
    case AST_INDEX:
        fputs("(index ", out);
        tf_dump_expr(out, n->a);
        dump_list(out, n->list, n->nlist);
        fputc(')', out);
        break;
    case AST_LIST:
        fputs("(list", out);
        dump_list(out, n->list, n->nlist);
        fputc(')', out);
        break;
    default: fprintf(out, "<statement %d>", (int)n->kind); break;
    }
}

static void indent(FILE *out, int depth) {
    fprintf(out, "%*s", depth * 2, "");
}

static void dump_stmt(FILE *out, const AstNode *n, int depth);

static void dump_block(FILE *out, const AstNode *blk, int depth) {
    fputs("(block", out);
    for (int32_t i = 0; i < blk->nlist; i++) {
        fputc('\n', out);
        indent(out, depth + 1);
        dump_stmt(out, blk->list[i], depth + 1);
    }
    fputc(')', out);
}

static void dump_stmt(FILE *out, const AstNode *n, int depth) {
    switch (n->kind) {
    case AST_LET:
    case AST_VAR:
        fprintf(out, "(%s %s ", n->kind == AST_LET ? "let" : "var", n->name);
        tf_dump_expr(out, n->a);
        fputc(')', out);
        break;
    case AST_ASSIGN:
        fprintf(out, "(%s= %s ", ast_op_text[n->op], n->name);
        tf_dump_expr(out, n->a);
        fputc(')', out);
        break;
    case AST_FOR:
        fprintf(out, "(for %s (%s", n->name, n->ival ? "static_range" : "range");
        dump_list(out, n->list, n->nlist);
        fputs(")\n", out);
        indent(out, depth + 1);
        dump_block(out, n->body, depth + 1);
        fputc(')', out);
        break;
    case AST_IF:
        fputs("(if ", out);
        tf_dump_expr(out, n->a);
        fputc('\n', out);
        indent(out, depth + 1);
        dump_block(out, n->body, depth + 1);
        if (n->b) {
            fputc('\n', out);
            indent(out, depth + 1);
            dump_stmt(out, n->b, depth + 1);
        }
        fputc(')', out);
        break;
    case AST_RETURN:
        fputs("(return", out);
        if (n->a) {
            fputc(' ', out);
            tf_dump_expr(out, n->a);
        }
        fputc(')', out);
        break;
    case AST_EXPR_STMT:
        fputs("(expr ", out);
        tf_dump_expr(out, n->a);
        fputc(')', out);
        break;
    case AST_BLOCK: dump_block(out, n, depth); break;
    default: tf_dump_expr(out, n); break;
    }
}

static void dump_binding(FILE *out, const char *clause, const AstBinding *b) {
    fprintf(out, "\n    (%s %s ", clause, b->name);
    tf_dump_expr(out, b->value);
    fputc(')', out);
}

static void dump_kernel(FILE *out, const AstKernel *k) {
    fprintf(out, "  (kernel %s\n    (params", k->name);
    for (int32_t i = 0; i < k->nparams; i++) {
        const AstParam *p = &k->params[i];
        fprintf(out, " (%s%s %s%s)", p->is_const ? "const " : "", p->name, p->is_ptr ? "*" : "", p->type_name);
    }
    fputc(')', out);
    for (int32_t i = 0; i < k->ntunes; i++)
        dump_binding(out, "tune", &k->tunes[i]);
    for (int32_t i = 0; i < k->nconsts; i++)
        dump_binding(out, "const", &k->consts[i]);
    for (int32_t i = 0; i < k->nwheres; i++) {
        fputs("\n    (where ", out);
        tf_dump_expr(out, k->wheres[i]);
        fputc(')', out);
    }
    if (k->ngrid) {
        fputs("\n    (grid", out);
        dump_list(out, k->grid, k->ngrid);
        fputc(')', out);
    }
    if (k->has_key) {
        fputs("\n    (key", out);
        dump_list(out, k->key, k->nkey);
        fputc(')', out);
    }
    for (int32_t i = 0; i < k->nrepeated; i++)
        fprintf(out, "\n    (repeated %s)", k->repeated_clause_name[i]);
    fputs("\n    ", out);
    dump_block(out, k->body, 2);
    fputc(')', out);
}

void tf_dump_ast(FILE *out, const AstFile *f) {
    fputs("(file", out);
    for (int32_t i = 0; i < f->nconsts; i++) {
        fprintf(out, "\n  (const %s ", f->consts[i].name);
        tf_dump_expr(out, f->consts[i].value);
        fputc(')', out);
    }
    for (int32_t i = 0; i < f->nfns; i++) {
        const AstFn *fn = &f->fns[i];
        fprintf(out, "\n  (fn %s (", fn->name);
        for (int32_t j = 0; j < fn->nparams; j++)
            fprintf(out, "%s%s", j ? " " : "", fn->params[j]);
        fputs(")\n    ", out);
        dump_block(out, fn->body, 2);
        fputc(')', out);
    }
    for (int32_t i = 0; i < f->nkernels; i++) {
        fputc('\n', out);
        dump_kernel(out, &f->kernels[i]);
    }
    fputs(")\n", out);
}
