/* The syntax tree as an S-expression, one declaration or statement per line:
 * what the parser golden tests compare.  Expressions print on one line with
 * operators first: `a + b * c` is `(+ a (* b c))`, `-x` is `(neg x)`, `x as f32` is
 * `(as f32 x)`, `x[:, None]` is `(index x : None)`. */
#ifndef TF_AST_DUMP_H
#define TF_AST_DUMP_H

#include <stdio.h>

#include "ast.h"

void tf_dump_ast(FILE *out, const AstFile *f);
void tf_dump_expr(FILE *out, const AstNode *n);

#endif
