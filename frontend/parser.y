/* The grammar of .tile files (docs/language.md).  Actions only build AST nodes; every
 * check that needs more than the syntax lives in sema.  Locations are byte spans.
 *
 * Error recovery: a statement that fails to parse becomes `stmt: error`, a kernel
 * whose header fails resynchronizes at its body, and anything else at file level is
 * skipped up to the next declaration, so one mistake never hides the next. */
%require "3.8"
%define api.pure full
%define api.prefix {tfyy}
%define api.token.prefix {TOK_}
%define api.location.type {TfLoc}
%define parse.error custom
%define parse.lac full
%locations
%expect 0
%param {TfParser *p}

%code requires {
#include "syntax.h"
#include "frontend.h"

typedef struct TfLoc {
    uint32_t loc, end;
} TfLoc;

#define YYLLOC_DEFAULT(Cur, Rhs, N)                                                      \
    do {                                                                                 \
        if (N) {                                                                         \
            (Cur).loc = YYRHSLOC(Rhs, 1).loc;                                            \
            (Cur).end = YYRHSLOC(Rhs, N).end;                                            \
        } else {                                                                         \
            (Cur).loc = (Cur).end = YYRHSLOC(Rhs, 0).end;                                \
        }                                                                                \
    } while (0)

/* The re2c scanner's state (lexer.re). */
typedef struct TfLexer {
    const unsigned char *src;    /* a NUL-terminated copy of the file */
    const unsigned char *cur, *lim, *mark, *tok;
    int32_t brackets;            /* ( [ { open now */
    TfLoc last, prev;            /* the latest token and the one before it */
    bool has_prev;
    int64_t ntokens;
} TfLexer;

/* A kernel's clauses while they are collected, in any order. */
typedef struct TfClauses {
    TfVec tunes, consts, wheres, key;   /* AstBinding, AstBinding, AstNode*, AstNode* */
    TfVec grid;                         /* AstNode* */
    bool has_grid, has_key, has_const;
    uint32_t grid_loc;
    uint32_t repeated_loc[4];
    const char *repeated_name[4];
    int32_t nrepeated;
} TfClauses;

typedef struct TfCallArgs {
    TfVec pos, named;                   /* AstNode* each */
} TfCallArgs;

typedef struct TfParser {
    TirArena *arena;
    TfDiag *diag;
    TfLexer lex;
    bool stop;                          /* a fatal error was reported: say nothing more */
    TfVec consts, fns, kernels;         /* AstConst, AstFn, AstKernel */
} TfParser;
}

%code provides {
int tfyylex(TFYYSTYPE *lval, TfLoc *lloc, TfParser *p);
}

%code {
#include <string.h>

static void tfyyerror(TfLoc *loc, TfParser *p, const char *msg);

#define A (p->arena)

/* Trees deeper than this would make every later recursive walk risky. */
#define CHECK_DEPTH(node, span)                                                          \
    do {                                                                                 \
        if (ast_depth(node) > TF_MAX_AST_DEPTH) {                                        \
            tf_error(p->diag, (span).loc, (span).loc, "nesting too deep (more than %d levels)", \
                     TF_MAX_AST_DEPTH);                                                  \
            p->stop = true;                                                              \
            YYABORT;                                                                     \
        }                                                                                \
    } while (0)

static AstNode *leaf(TfParser *p, AstKind kind, TfLoc at) {
    return ast_new(p->arena, kind, at.loc, at.end);
}

static AstNode *named_leaf(TfParser *p, AstKind kind, const char *name, TfLoc at) {
    AstNode *n = leaf(p, kind, at);
    n->name = name;
    return n;
}

static AstNode *list_node(TfParser *p, AstKind kind, TfVec items, TfLoc at) {
    AstNode *n = leaf(p, kind, at);
    ast_set_list(n, &items);
    return n;
}

static TfVec vec1(TfParser *p, AstNode *n) {
    TfVec v = {0};
    TF_VEC_PUSH_PTR(p->arena, &v, n);
    return v;
}

static AstNode *call_node(TfParser *p, const char *callee, TfCallArgs args, TfLoc at) {
    AstNode *n = named_leaf(p, AST_CALL, callee, at);
    n->list = args.pos.v;
    n->nlist = args.pos.n;
    n->named = args.named.v;
    n->nnamed = args.named.n;
    ast_fix_depth(n);
    return n;
}

static AstNode *with_a(AstNode *n, AstNode *a) {
    n->a = a;
    ast_fix_depth(n);
    return n;
}

/* Clauses allowed once: the second one is kept for sema to report. */
static void note_repeated(TfClauses *c, const char *name, uint32_t loc) {
    if (c->nrepeated < 4) {
        c->repeated_loc[c->nrepeated] = loc;
        c->repeated_name[c->nrepeated] = name;
        c->nrepeated++;
    }
}

static AstBinding binding(const char *name, TfLoc at, AstNode *value) {
    return (AstBinding){.name = name, .loc = at.loc, .end = at.end, .value = value};
}

static AstKernel kernel_node(TfParser *p, const char *name, TfLoc at, TfVec params,
                             TfClauses *c, AstNode *body) {
    AstKernel k = {.name = name, .loc = at.loc, .end = at.end, .body = body};
    k.params = params.v;
    k.nparams = params.n;
    k.tunes = c->tunes.v;
    k.ntunes = c->tunes.n;
    k.consts = c->consts.v;
    k.nconsts = c->consts.n;
    k.wheres = c->wheres.v;
    k.nwheres = c->wheres.n;
    k.grid = c->grid.v;
    k.ngrid = c->grid.n;
    k.grid_loc = c->grid_loc;
    k.key = c->key.v;
    k.nkey = c->key.n;
    k.has_key = c->has_key;
    memcpy(k.repeated_clause_loc, c->repeated_loc, sizeof c->repeated_loc);
    memcpy(k.repeated_clause_name, c->repeated_name, sizeof c->repeated_name);
    k.nrepeated = c->nrepeated;
    return k;
}
}

%union {
    AstNode *node;
    const char *str;
    int64_t ival;
    double fval;
    AstOp op;
    TfVec vec;
    TfCallArgs args;
    AstParam param;
    AstBinding binding;
    TfClauses *clauses;
}

%token KERNEL "'kernel'" FN "'fn'" LET "'let'" VAR "'var'" CONST "'const'"
%token TUNE "'tune'" WHERE "'where'" GRID "'grid'" KEY "'key'" WARPS "'warps'"
%token STAGES "'stages'" FOR "'for'" IN "'in'" IF "'if'" ELSE "'else'"
%token RETURN "'return'" TRUE "'true'" FALSE "'false'" AS "'as'" NONE "'None'"
%token <str> IDENT "identifier"
%token <ival> INT "integer literal"
%token <fval> FLOAT "float literal"
%token <str> STRING "string literal"
%token OROR "'||'" ANDAND "'&&'" EQ "'=='" NE "'!='" LE "'<='" GE "'>='"
%token SHL "'<<'" SHR "'>>'"
%token ADD_ASSIGN "'+='" SUB_ASSIGN "'-='" MUL_ASSIGN "'*='" DIV_ASSIGN "'/='"

/* loosest first, exactly the table of docs/language.md; unary and postfix are their own
 * nonterminals below, tighter than all of these */
%left OROR
%left ANDAND
%left '|'
%left '^'
%left '&'
%left EQ NE
%left '<' LE '>' GE
%left SHL SHR
%left '+' '-'
%left '*' '/' '%'
%precedence AS

%type <node> expr unary postfix primary index_item block stmt if_stmt const_value
%type <node> named_arg
%type <vec> exprs index_items stmts kparams kparams_opt fn_params fn_params_opt grid_exprs
%type <vec> key_names key_names_opt tune_items const_items
%type <args> args named_args
%type <param> kparam
%type <binding> tune_item const_item
%type <clauses> clauses
%type <str> clause_name callee
%type <op> assign_op

%%

/* file: decl* */
file
    : %empty
    | file decl
    ;

decl
    /* const NAME = expr ; */
    : CONST IDENT '=' const_value ';' {
        AstConst c = {.name = $2, .loc = @2.loc, .end = @2.end, .value = $4};
        tf_vec_push(A, &p->consts, &c, sizeof c);
    }
    /* fn NAME ( a, b ) { ... } */
    | FN IDENT '(' fn_params_opt ')' block {
        AstFn f = {.name = $2, .loc = @2.loc, .end = @2.end, .body = $6};
        f.nparams = $4.n;
        f.params = tir_alloc(A, sizeof *f.params * ($4.n + 1));
        f.param_locs = tir_alloc(A, sizeof *f.param_locs * ($4.n + 1));
        for (int32_t i = 0; i < $4.n; i++) {
            const AstNode *pn = ((AstNode **)$4.v)[i];
            f.params[i] = pn->name;
            f.param_locs[i] = pn->loc;
        }
        tf_vec_push(A, &p->fns, &f, sizeof f);
    }
    /* kernel NAME ( params ) clauses { ... } */
    | KERNEL IDENT '(' kparams_opt ')' clauses block {
        AstKernel k = kernel_node(p, $2, @2, $4, $6, $7);
        tf_vec_push(A, &p->kernels, &k, sizeof k);
    }
    /* a broken header: skip to the body and still check it */
    | KERNEL error block
    | FN error block
    /* anything else: skip to the next declaration */
    | error
    ;

const_value
    : expr { CHECK_DEPTH($1, @1); $$ = $1; }
    ;

fn_params_opt
    : %empty { $$ = (TfVec){0}; }
    | fn_params
    ;

fn_params
    : IDENT { $$ = vec1(p, named_leaf(p, AST_NAME, $1, @1)); }
    | fn_params ',' IDENT { $$ = $1; TF_VEC_PUSH_PTR(A, &$$, named_leaf(p, AST_NAME, $3, @3)); }
    ;

kparams_opt
    : %empty { $$ = (TfVec){0}; }
    | kparams
    ;

kparams
    : kparam { $$ = (TfVec){0}; tf_vec_push(A, &$$, &$1, sizeof $1); }
    | kparams ',' kparam { $$ = $1; tf_vec_push(A, &$$, &$3, sizeof $3); }
    ;

kparam
    /* name: T */
    : IDENT ':' IDENT {
        $$ = (AstParam){.name = $1, .loc = @1.loc, .end = @1.end, .type_name = $3,
                        .type_loc = @3.loc, .type_end = @3.end};
    }
    /* name: *T */
    | IDENT ':' '*' IDENT {
        $$ = (AstParam){.name = $1, .loc = @1.loc, .end = @1.end, .type_name = $4,
                        .type_loc = @3.loc, .type_end = @4.end, .is_ptr = true};
    }
    /* const NAME: T */
    | CONST IDENT ':' IDENT {
        $$ = (AstParam){.name = $2, .loc = @2.loc, .end = @2.end, .type_name = $4,
                        .type_loc = @4.loc, .type_end = @4.end, .is_const = true};
    }
    ;

/* clause*, in any order */
clauses
    : %empty { $$ = tir_alloc(A, sizeof *$$); }
    /* tune NAME in [v, ...], ... */
    | clauses TUNE tune_items {
        $$ = $1;
        for (int32_t i = 0; i < $3.n; i++)
            tf_vec_push(A, &$$->tunes, &((AstBinding *)$3.v)[i], sizeof(AstBinding));
    }
    /* const NAME = V, ... */
    | clauses CONST const_items {
        $$ = $1;
        if ($$->has_const) note_repeated($$, "const", @2.loc);
        $$->has_const = true;
        for (int32_t i = 0; i < $3.n; i++)
            tf_vec_push(A, &$$->consts, &((AstBinding *)$3.v)[i], sizeof(AstBinding));
    }
    /* where EXPR */
    | clauses WHERE expr {
        CHECK_DEPTH($3, @3);
        $$ = $1;
        TF_VEC_PUSH_PTR(A, &$$->wheres, $3);
    }
    /* grid(E0 [, E1 [, E2]]) */
    | clauses GRID '(' grid_exprs ')' {
        $$ = $1;
        if ($$->has_grid) {
            note_repeated($$, "grid", @2.loc);
        } else {
            $$->has_grid = true;
            $$->grid = $4;
            $$->grid_loc = @2.loc;
        }
    }
    /* key(a, b, ...) */
    | clauses KEY '(' key_names_opt ')' {
        $$ = $1;
        if ($$->has_key) {
            note_repeated($$, "key", @2.loc);
        } else {
            $$->has_key = true;
            $$->key = $4;
        }
    }
    ;

tune_items
    : tune_item { $$ = (TfVec){0}; tf_vec_push(A, &$$, &$1, sizeof $1); }
    | tune_items ',' tune_item { $$ = $1; tf_vec_push(A, &$$, &$3, sizeof $3); }
    ;

/* NAME in [v, ...] */
tune_item
    : clause_name IN '[' exprs ']' {
        AstNode *values = list_node(p, AST_LIST, $4, (TfLoc){@3.loc, @5.end});
        CHECK_DEPTH(values, @3);
        $$ = binding($1, @1, values);
    }
    ;

const_items
    : const_item { $$ = (TfVec){0}; tf_vec_push(A, &$$, &$1, sizeof $1); }
    | const_items ',' const_item { $$ = $1; tf_vec_push(A, &$$, &$3, sizeof $3); }
    ;

/* NAME = V */
const_item
    : clause_name '=' const_value { $$ = binding($1, @1, $3); }
    ;

/* warps and stages are keywords, yet named like any constant in clauses */
clause_name
    : IDENT
    | WARPS { $$ = "warps"; }
    | STAGES { $$ = "stages"; }
    ;

grid_exprs
    : const_value { $$ = vec1(p, $1); }
    | const_value ',' const_value { $$ = vec1(p, $1); TF_VEC_PUSH_PTR(A, &$$, $3); }
    | const_value ',' const_value ',' const_value {
        $$ = vec1(p, $1);
        TF_VEC_PUSH_PTR(A, &$$, $3);
        TF_VEC_PUSH_PTR(A, &$$, $5);
    }
    ;

key_names_opt
    : %empty { $$ = (TfVec){0}; }
    | key_names
    ;

key_names
    : IDENT { $$ = vec1(p, named_leaf(p, AST_NAME, $1, @1)); }
    | key_names ',' IDENT { $$ = $1; TF_VEC_PUSH_PTR(A, &$$, named_leaf(p, AST_NAME, $3, @3)); }
    ;

/* { stmt* } */
block
    : '{' stmts '}' { $$ = list_node(p, AST_BLOCK, $2, @$); }
    ;

stmts
    : %empty { $$ = (TfVec){0}; }
    | stmts stmt {
        $$ = $1;
        if ($2) {
            CHECK_DEPTH($2, @2);
            TF_VEC_PUSH_PTR(A, &$$, $2);
            yyerrok;   /* a whole statement parsed: the last error is over */
        }
    }
    ;

stmt
    /* let NAME = expr ; */
    : LET IDENT '=' expr ';' { $$ = with_a(named_leaf(p, AST_LET, $2, @$), $4); }
    /* var NAME = expr ; */
    | VAR IDENT '=' expr ';' { $$ = with_a(named_leaf(p, AST_VAR, $2, @$), $4); }
    /* NAME = expr ;  NAME op= expr ; */
    | IDENT '=' expr ';' { $$ = with_a(named_leaf(p, AST_ASSIGN, $1, @$), $3); }
    | IDENT assign_op expr ';' {
        $$ = with_a(named_leaf(p, AST_ASSIGN, $1, @$), $3);
        $$->op = $2;
    }
    /* for NAME in range(a, b [, c]) { ... }   (or static_range) */
    | FOR IDENT IN IDENT '(' exprs ')' block {
        $$ = list_node(p, AST_FOR, $6, @$);
        $$->name = $2;
        $$->body = $8;
        if (strcmp($4, "static_range") == 0) {
            $$->ival = 1;
        } else if (strcmp($4, "range") != 0) {
            tf_error(p->diag, @4.loc, @4.end,
                     "expected 'range' or 'static_range' after 'in', saw '%s'", $4);
        }
        ast_fix_depth($$);
    }
    | if_stmt
    /* return [expr] ; */
    | RETURN ';' { $$ = leaf(p, AST_RETURN, @$); }
    | RETURN expr ';' { $$ = with_a(leaf(p, AST_RETURN, @$), $2); }
    /* expr ; */
    | expr ';' { $$ = with_a(leaf(p, AST_EXPR_STMT, @$), $1); }
    | block
    /* A broken statement ends at its ';' when it has one; from there on errors are
     * reported again at once.  Else it ends where the next statement can start. */
    | error ';' { $$ = NULL; yyerrok; }
    | error { $$ = NULL; }
    ;

assign_op
    : ADD_ASSIGN { $$ = AST_OP_ADD; }
    | SUB_ASSIGN { $$ = AST_OP_SUB; }
    | MUL_ASSIGN { $$ = AST_OP_MUL; }
    | DIV_ASSIGN { $$ = AST_OP_DIV; }
    ;

/* if COND { ... } [else { ... } | else if ...] */
if_stmt
    : IF expr block { $$ = with_a(leaf(p, AST_IF, @$), $2); $$->body = $3; ast_fix_depth($$); }
    | IF expr block ELSE block {
        $$ = with_a(leaf(p, AST_IF, @$), $2);
        $$->body = $3;
        $$->b = $5;
        ast_fix_depth($$);
    }
    | IF expr block ELSE if_stmt {
        $$ = with_a(leaf(p, AST_IF, @$), $2);
        $$->body = $3;
        $$->b = $5;
        ast_fix_depth($$);
    }
    ;

expr
    : expr OROR expr { $$ = ast_binary(A, AST_OP_OROR, $1, $3); }
    | expr ANDAND expr { $$ = ast_binary(A, AST_OP_ANDAND, $1, $3); }
    | expr '|' expr { $$ = ast_binary(A, AST_OP_OR, $1, $3); }
    | expr '^' expr { $$ = ast_binary(A, AST_OP_XOR, $1, $3); }
    | expr '&' expr { $$ = ast_binary(A, AST_OP_AND, $1, $3); }
    | expr EQ expr { $$ = ast_binary(A, AST_OP_EQ, $1, $3); }
    | expr NE expr { $$ = ast_binary(A, AST_OP_NE, $1, $3); }
    | expr '<' expr { $$ = ast_binary(A, AST_OP_LT, $1, $3); }
    | expr LE expr { $$ = ast_binary(A, AST_OP_LE, $1, $3); }
    | expr '>' expr { $$ = ast_binary(A, AST_OP_GT, $1, $3); }
    | expr GE expr { $$ = ast_binary(A, AST_OP_GE, $1, $3); }
    | expr SHL expr { $$ = ast_binary(A, AST_OP_SHL, $1, $3); }
    | expr SHR expr { $$ = ast_binary(A, AST_OP_SHR, $1, $3); }
    | expr '+' expr { $$ = ast_binary(A, AST_OP_ADD, $1, $3); }
    | expr '-' expr { $$ = ast_binary(A, AST_OP_SUB, $1, $3); }
    | expr '*' expr { $$ = ast_binary(A, AST_OP_MUL, $1, $3); }
    | expr '/' expr { $$ = ast_binary(A, AST_OP_DIV, $1, $3); }
    | expr '%' expr { $$ = ast_binary(A, AST_OP_REM, $1, $3); }
    /* expr as TYPE: tighter than * and /, looser than unary minus */
    | expr AS IDENT { $$ = with_a(named_leaf(p, AST_CAST, $3, @$), $1); }
    | unary
    ;

/* - ! ~ */
unary
    : '-' unary { $$ = ast_unary(A, AST_OP_NEG, $2, @$.loc, @$.end); }
    | '!' unary { $$ = ast_unary(A, AST_OP_NOT, $2, @$.loc, @$.end); }
    | '~' unary { $$ = ast_unary(A, AST_OP_BITNOT, $2, @$.loc, @$.end); }
    | postfix
    ;

/* x[:, None] */
postfix
    : primary
    | postfix '[' index_items ']' {
        $$ = list_node(p, AST_INDEX, $3, @$);
        $$->a = $1;
        ast_fix_depth($$);
    }
    ;

index_items
    : index_item { $$ = vec1(p, $1); }
    | index_items ',' index_item { $$ = $1; TF_VEC_PUSH_PTR(A, &$$, $3); }
    ;

index_item
    : ':' { $$ = leaf(p, AST_SLICE, @$); }
    | NONE { $$ = leaf(p, AST_NONE, @$); }
    ;

primary
    : IDENT { $$ = named_leaf(p, AST_NAME, $1, @$); }
    /* the reserved constants read like any other name: `where BLOCK <= warps * 2048` */
    | WARPS { $$ = named_leaf(p, AST_NAME, "warps", @$); }
    | STAGES { $$ = named_leaf(p, AST_NAME, "stages", @$); }
    | INT { $$ = leaf(p, AST_INT, @$); $$->ival = $1; }
    | FLOAT { $$ = leaf(p, AST_FLOAT, @$); $$->fval = $1; }
    | TRUE { $$ = leaf(p, AST_BOOL, @$); $$->ival = 1; }
    | FALSE { $$ = leaf(p, AST_BOOL, @$); }
    | STRING { $$ = named_leaf(p, AST_STRING, $1, @$); }
    | '(' expr ')' { $$ = $2; }
    /* [a, b, ...] */
    | '[' exprs ']' { $$ = list_node(p, AST_LIST, $2, @$); }
    /* f(positional..., name=value...) */
    | callee '(' args ')' { $$ = call_node(p, $1, $3, @$); }
    ;

/* `where` is a clause keyword and also the elementwise select */
callee
    : IDENT
    | WHERE { $$ = "where"; }
    ;

exprs
    : expr { $$ = vec1(p, $1); }
    | exprs ',' expr { $$ = $1; TF_VEC_PUSH_PTR(A, &$$, $3); }
    ;

args
    : %empty { $$ = (TfCallArgs){0}; }
    | exprs { $$ = (TfCallArgs){.pos = $1}; }
    | exprs ',' named_args { $$ = $3; $$.pos = $1; }
    | named_args
    ;

named_args
    : named_arg { $$ = (TfCallArgs){.named = vec1(p, $1)}; }
    | named_args ',' named_arg { $$ = $1; TF_VEC_PUSH_PTR(A, &$$.named, $3); }
    ;

/* name=value */
named_arg
    : IDENT '=' expr { $$ = with_a(named_leaf(p, AST_NAMED_ARG, $1, @$), $3); }
    ;

%%

/* ---- syntax errors ------------------------------------------------------------------ */

/* Groups of expected tokens that read better as one word ("expected expression");
 * operators after a complete expression are left out ("after expression"). */
static const int expr_start_chars[] = {'(', '[', '-', '!', '~'};
static const yysymbol_kind_t expr_start_kinds[] = {
    YYSYMBOL_IDENT, YYSYMBOL_INT, YYSYMBOL_FLOAT, YYSYMBOL_STRING,
    YYSYMBOL_TRUE,  YYSYMBOL_FALSE, YYSYMBOL_WHERE, YYSYMBOL_WARPS, YYSYMBOL_STAGES,
};
static const int operator_chars[] = {'|', '^', '&', '<', '>', '+', '-', '*', '/', '%', '['};
static const yysymbol_kind_t operator_kinds[] = {
    YYSYMBOL_OROR, YYSYMBOL_ANDAND, YYSYMBOL_EQ,  YYSYMBOL_NE, YYSYMBOL_LE,
    YYSYMBOL_GE,   YYSYMBOL_SHL,    YYSYMBOL_SHR, YYSYMBOL_AS,
};
static const yysymbol_kind_t stmt_start_kinds[] = {
    YYSYMBOL_LET, YYSYMBOL_VAR, YYSYMBOL_FOR, YYSYMBOL_IF, YYSYMBOL_RETURN,
};
static const yysymbol_kind_t compound_assign_kinds[] = {
    YYSYMBOL_ADD_ASSIGN, YYSYMBOL_SUB_ASSIGN, YYSYMBOL_MUL_ASSIGN, YYSYMBOL_DIV_ASSIGN,
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Removes the group from set (n entries) when all of it is there; returns whether it was. */
static bool take_group(bool *set, const yysymbol_kind_t *kinds, int nkinds, const int *chars,
                       int nchars) {
    for (int i = 0; i < nkinds; i++)
        if (!set[kinds[i]]) return false;
    for (int i = 0; i < nchars; i++)
        if (!set[YYTRANSLATE(chars[i])]) return false;
    for (int i = 0; i < nkinds; i++) set[kinds[i]] = false;
    for (int i = 0; i < nchars; i++) set[YYTRANSLATE(chars[i])] = false;
    return true;
}

/* A token as the message names it: its spelling, or its class and text. */
static void describe_token(TfParser *p, yysymbol_kind_t k, TfLoc at, char *buf, size_t size) {
    const char *src = (const char *)p->lex.src;
    int len = (int)(at.end - at.loc);
    const char *dots = "";
    if (len > 24) {
        len = 24;
        dots = "...";
    }
    switch (k) {
    case YYSYMBOL_YYEOF: snprintf(buf, size, "end of file"); break;
    case YYSYMBOL_IDENT:
        snprintf(buf, size, "identifier '%.*s%s'", len, src + at.loc, dots);
        break;
    case YYSYMBOL_INT:
    case YYSYMBOL_FLOAT: snprintf(buf, size, "number '%.*s%s'", len, src + at.loc, dots); break;
    case YYSYMBOL_STRING: snprintf(buf, size, "string %.*s%s", len, src + at.loc, dots); break;
    default: snprintf(buf, size, "%s", yysymbol_name(k)); break;
    }
}

static int yyreport_syntax_error(const yypcontext_t *ctx, TfParser *p) {
    if (p->stop) return 0;
    yysymbol_kind_t seen = yypcontext_token(ctx);
    TfLoc at = *yypcontext_location(ctx);
    yysymbol_kind_t expected[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
    if (n < 0) return n;

    bool set[YYNTOKENS] = {0};
    for (int i = 0; i < n; i++) set[expected[i]] = true;
    bool after_expr =
        take_group(set, operator_kinds, COUNT(operator_kinds), operator_chars,
                   COUNT(operator_chars));
    /* A name could still become a call, a named argument or an assignment target; once
     * it reads as a complete expression, those are noise. */
    if (after_expr) {
        take_group(set, compound_assign_kinds, COUNT(compound_assign_kinds), NULL, 0);
        set[YYTRANSLATE('(')] = set[YYTRANSLATE('=')] = false;
    }
    bool expr = take_group(set, expr_start_kinds, COUNT(expr_start_kinds), expr_start_chars,
                           COUNT(expr_start_chars));
    bool stmt = expr && set[YYTRANSLATE('{')] &&
                take_group(set, stmt_start_kinds, COUNT(stmt_start_kinds), NULL, 0);
    if (stmt) set[YYTRANSLATE('{')] = false;

    const char *names[8];
    int nnames = 0;
    if (stmt) names[nnames++] = "statement";
    else if (expr) names[nnames++] = "expression";
    int rest = 0;
    for (int k = 0; k < YYNTOKENS; k++) {
        if (!set[k] || k == YYSYMBOL_YYerror || k == YYSYMBOL_YYUNDEF) continue;
        rest++;
        if (nnames < COUNT(names)) names[nnames++] = yysymbol_name((yysymbol_kind_t)k);
    }

    char what[96], ctxt[80] = "", list[256] = "";
    describe_token(p, seen, at, what, sizeof what);
    if (after_expr) {
        snprintf(ctxt, sizeof ctxt, " after expression");
    } else if (p->lex.has_prev) {
        TfLoc prev = p->lex.prev;
        int len = (int)(prev.end - prev.loc);
        snprintf(ctxt, sizeof ctxt, " after '%.*s%s'", len > 24 ? 24 : len,
                 (const char *)p->lex.src + prev.loc, len > 24 ? "..." : "");
    }
    if (nnames == 0 || nnames > 4 || rest + (stmt || expr) > 4) {
        tf_error(p->diag, at.loc, at.end, "unexpected %s%s", what, ctxt);
        return 0;
    }
    size_t used = 0;
    for (int i = 0; i < nnames; i++) {
        const char *sep = i == 0 ? "" : i == nnames - 1 ? " or " : ", ";
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", sep, names[i]);
        if (used >= sizeof list) break;
    }
    tf_error(p->diag, at.loc, at.end, "expected %s%s, saw %s", list, ctxt, what);
    return 0;
}

/* In custom mode Bison calls this only when its stack would pass YYMAXDEPTH. */
static void tfyyerror(TfLoc *loc, TfParser *p, const char *msg) {
    (void)msg;
    if (p->stop) return;
    tf_error(p->diag, loc->loc, loc->loc, "nesting too deep (the parser's stack is full)");
    p->stop = true;
}

/* ---- entry ---------------------------------------------------------------------------- */

AstFile *tf_parse(TirArena *a, TfDiag *d) {
    if (d->len >= UINT32_MAX) {
        tf_error(d, 0, 0, "file is too large (4 GiB or more)");
        return NULL;
    }
    TfParser p = {.arena = a, .diag = d};
    /* re2c's end-of-input check wants a sentinel byte after the text */
    unsigned char *text = tir_alloc(a, d->len + 1);
    if (d->len) memcpy(text, d->src, d->len);
    p.lex.src = p.lex.cur = p.lex.tok = p.lex.mark = text;
    p.lex.lim = text + d->len;

    int errors_before = d->nerrors;
    int rc = tfyyparse(&p);
    if (rc != 0 || d->nerrors != errors_before) return NULL;

    AstFile *f = tir_alloc(a, sizeof *f);
    f->path = d->path;
    f->src = d->src;
    f->len = d->len;
    f->consts = p.consts.v;
    f->nconsts = p.consts.n;
    f->fns = p.fns.v;
    f->nfns = p.fns.n;
    f->kernels = p.kernels.v;
    f->nkernels = p.kernels.n;
    return f;
}
