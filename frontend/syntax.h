/* What the lexer, the parser and the diagnostics share (private to the front end):
 * limits, UTF-8, and the builders for syntax-tree nodes that the parser's actions use.
 *
 * Every node built here also records its depth (1 + the deepest child), so the parser
 * can refuse trees deeper than TF_MAX_AST_DEPTH: everything that later walks the tree
 * recursively (sema, the dumper) then runs in bounded stack.  ast_depth() is only valid
 * on nodes that came from these builders. */
#ifndef TF_SYNTAX_H
#define TF_SYNTAX_H

#include "ast.h"

enum {
    TF_MAX_BRACKET_NESTING = 256, /* ( [ { open at once, counted by the lexer */
    TF_MAX_AST_DEPTH = 1024,      /* nodes on any root-to-leaf path */
};

/* Length of the valid UTF-8 sequence at s (not reading at or past lim), or 0. */
int tf_utf8_len(const unsigned char *s, const unsigned char *lim);

/* A growable array in the arena (old storage is abandoned on growth: amortized linear). */
typedef struct TfVec {
    void *v;
    int32_t n, cap;
} TfVec;
void tf_vec_push(TirArena *a, TfVec *vec, const void *elem, size_t size);
#define TF_VEC_PUSH_PTR(a, vec, p)                                   \
    do {                                                             \
        const void *tf_vec_elem_ = (p);                              \
        tf_vec_push((a), (vec), &tf_vec_elem_, sizeof tf_vec_elem_); \
    } while (0)

AstNode *ast_new(TirArena *a, AstKind kind, uint32_t loc, uint32_t end);
int32_t ast_depth(const AstNode *n); /* 0 for NULL */
/* Recomputes n's depth from a, b, body, list and named; call after filling them. */
void ast_fix_depth(AstNode *n);

AstNode *ast_unary(TirArena *a, AstOp op, AstNode *x, uint32_t loc, uint32_t end);
AstNode *ast_binary(TirArena *a, AstOp op, AstNode *x, AstNode *y);
/* Sets n->list / n->nlist from a vector of AstNode* and fixes the depth. */
void ast_set_list(AstNode *n, const TfVec *items);

#endif
