/* The syntax tree of a .tile file, as the parser builds it.  The parser's actions
 * only build these nodes; every check lives in sema.  Nodes live in the
 * compilation's arena.  Spans are byte offsets into the source [loc, end). */
#ifndef TF_AST_H
#define TF_AST_H

#include "ir.h"

typedef enum {
    /* expressions */
    AST_INT,       /* ival */
    AST_FLOAT,     /* fval */
    AST_BOOL,      /* ival 0/1 */
    AST_STRING,    /* name = the unquoted text, escapes resolved */
    AST_NAME,      /* name: variable, constant, type name (f32), inf, nan */
    AST_NONE,      /* `None` in an index */
    AST_SLICE,     /* `:` in an index */
    AST_UNARY,     /* op, a */
    AST_BINARY,    /* op, a, b */
    AST_CAST,      /* a as type_name (name = "f16", ...) */
    AST_CALL,      /* name = callee; list = positional args; named = AST_NAMED_ARG nodes */
    AST_NAMED_ARG, /* name = value: a */
    AST_INDEX,     /* a[list...] where each element is AST_SLICE or AST_NONE */
    AST_LIST,      /* [list...]: shapes, tune value lists, tensor_desc lists */
    /* statements */
    AST_LET,       /* let name = a */
    AST_VAR,       /* var name = a */
    AST_ASSIGN,    /* name op= a; op is AST_OP_NONE for plain `=` */
    AST_FOR,       /* for name in range(list...) / static_range(list...) { body }; ival=1 static */
    AST_IF,        /* if a { body } else { b: AST_BLOCK or AST_IF } */
    AST_RETURN,    /* return [a] */
    AST_EXPR_STMT, /* a; */
    AST_BLOCK,     /* { list... } */
} AstKind;

typedef enum {
    AST_OP_NONE,
    AST_OP_OROR,
    AST_OP_ANDAND,
    AST_OP_OR,
    AST_OP_XOR,
    AST_OP_AND,
    AST_OP_EQ,
    AST_OP_NE,
    AST_OP_LT,
    AST_OP_LE,
    AST_OP_GT,
    AST_OP_GE,
    AST_OP_SHL,
    AST_OP_SHR,
    AST_OP_ADD,
    AST_OP_SUB,
    AST_OP_MUL,
    AST_OP_DIV,
    AST_OP_REM,
    AST_OP_NEG,
    AST_OP_NOT,
    AST_OP_BITNOT,
} AstOp;
extern const char *const ast_op_text[]; /* "||", "&&", ... for messages */

typedef struct AstNode AstNode;
struct AstNode {
    AstKind kind;
    AstOp op;
    uint32_t loc, end; /* byte span in the source */
    const char *name;
    int64_t ival;
    double fval;
    AstNode *a, *b;
    AstNode *body;  /* AST_FOR, AST_IF: the block */
    AstNode **list; /* call args, list elements, index entries, block statements */
    int32_t nlist;
    AstNode **named; /* call named args (AST_NAMED_ARG) */
    int32_t nnamed;
};

/* `name: T`, `name: *T`, `const NAME: T` */
typedef struct AstParam {
    const char *name;
    uint32_t loc, end;
    const char *type_name; /* scalar name as written: "f32", "bool" */
    uint32_t type_loc, type_end;
    bool is_ptr;
    bool is_const;
} AstParam;

/* One clause item: `tune NAME in [..]` (values in list), `const NAME = expr`. */
typedef struct AstBinding {
    const char *name;
    uint32_t loc, end;
    AstNode *value; /* tune: AST_LIST of expressions; const: the expression */
} AstBinding;

typedef struct AstKernel {
    const char *name;
    uint32_t loc, end;
    AstParam *params;
    int32_t nparams;
    AstBinding *tunes; /* every `tune` item of every tune clause, in order */
    int32_t ntunes;
    AstBinding *consts; /* every `const NAME = V` clause item */
    int32_t nconsts;
    AstNode **wheres; /* every `where` expression */
    int32_t nwheres;
    AstNode **grid; /* grid(...) expressions; ngrid = 0 when absent */
    int32_t ngrid;
    uint32_t grid_loc; /* span of the grid clause, for "repeated clause" errors */
    AstNode **key;     /* AST_NAME nodes */
    int32_t nkey;
    bool has_key;
    /* clauses that the grammar allows only once, seen more than once: sema reports */
    uint32_t repeated_clause_loc[4];
    const char *repeated_clause_name[4];
    int32_t nrepeated;
    AstNode *body; /* AST_BLOCK */
} AstKernel;

typedef struct AstFn {
    const char *name;
    uint32_t loc, end;
    const char **params;
    uint32_t *param_locs;
    int32_t nparams;
    AstNode *body; /* AST_BLOCK */
} AstFn;

typedef struct AstConst {
    const char *name;
    uint32_t loc, end;
    AstNode *value;
} AstConst;

typedef struct AstFile {
    const char *path;
    const char *src;
    size_t len;
    AstConst *consts;
    int32_t nconsts;
    AstFn *fns;
    int32_t nfns;
    AstKernel *kernels;
    int32_t nkernels;
    /* The top-level names hashed (sema.c, by tf_check): open addressing over the indices
     * that number constants, then functions, then kernels; -1 empty.  NULL before the
     * check, when lookups scan. */
    int32_t *top_index;
    uint32_t top_index_cap;
} AstFile;

#endif
