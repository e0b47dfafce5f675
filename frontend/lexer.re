/* The scanner (re2c): bytes -> tokens for parser.y.  Its state lives in TfParser's
 * TfLexer; the text is a NUL-terminated copy, and the NUL sentinel plus YYLIMIT
 * tell the real end from a NUL byte inside the file (which is an error).
 *
 * Lexical errors are reported here and the scanner goes on, so the parser still
 * reports what follows: a bad character is skipped, a bad number becomes 0, an
 * unterminated string ends at its line. */
#include "parser.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OFF(lx, ptr) ((uint32_t)((ptr) - (lx)->src))

/* Inside comments and strings: text must be UTF-8 without NUL bytes.  Returns the
 * length of the character at s, or 0 for a bad byte. */
static int text_char_len(const unsigned char *s, const unsigned char *lim) {
    return s[0] == 0 ? 0 : tf_utf8_len(s, lim);
}

static void bad_text_byte(TfParser *p, const unsigned char *at, const char *where) {
    TfLexer *lx = &p->lex;
    tf_error(p->diag, OFF(lx, at), OFF(lx, at) + 1, "invalid byte 0x%02x in %s (not UTF-8 text)",
             at[0], where);
}

static void skip_line_comment(TfParser *p) {
    TfLexer *lx = &p->lex;
    bool reported = false;
    while (lx->cur < lx->lim && *lx->cur != '\n') {
        int n = text_char_len(lx->cur, lx->lim);
        if (n == 0) {
            if (!reported) bad_text_byte(p, lx->cur, "comment");
            reported = true;
            n = 1;
        }
        lx->cur += n;
    }
}

/* Returns false at an unterminated comment (reported; the rest of the file is gone). */
static bool skip_block_comment(TfParser *p) {
    TfLexer *lx = &p->lex;
    const unsigned char *open = lx->tok;
    bool reported = false;
    while (lx->cur < lx->lim) {
        if (lx->cur[0] == '*' && lx->cur + 1 < lx->lim && lx->cur[1] == '/') {
            lx->cur += 2;
            return true;
        }
        int n = text_char_len(lx->cur, lx->lim);
        if (n == 0) {
            if (!reported) bad_text_byte(p, lx->cur, "comment");
            reported = true;
            n = 1;
        }
        lx->cur += n;
    }
    tf_error(p->diag, OFF(lx, open), OFF(lx, open) + 2, "unterminated comment");
    p->stop = true;   /* it swallowed the rest of the file: "saw end of file" is no news */
    return false;
}

/* "..." with \n \t \r \\ \" \' escapes (no \0: the text becomes a C string);
 * the opening quote is at tok. */
static int string_literal(TfParser *p, TFYYSTYPE *lval) {
    TfLexer *lx = &p->lex;
    const unsigned char *s = lx->cur, *end = s;
    while (end < lx->lim && *end != '"' && *end != '\n') {
        if (*end == '\\' && end + 1 < lx->lim && end[1] != '\n') end++;
        end++;
    }
    char *out = tir_alloc(p->arena, (size_t)(end - s) + 1);
    size_t n = 0;
    bool reported = false;
    while (s < end) {
        if (*s == '\\') {
            static const char from[] = "ntr\\\"'", to[] = "\n\t\r\\\"'";
            const char *hit = s + 1 < end ? memchr(from, s[1], sizeof from - 1) : NULL;
            if (hit) {
                out[n++] = to[hit - from];
            } else if (s + 1 < end) {
                int len = tf_utf8_len(s + 1, end);
                tf_error(p->diag, OFF(lx, s), OFF(lx, s) + 1 + (len ? len : 1),
                         "unknown escape sequence '\\%.*s'", len ? len : 0, (const char *)s + 1);
            }
            s += 2;
            continue;
        }
        int len = text_char_len(s, end);
        if (len == 0) {
            if (!reported) bad_text_byte(p, s, "string");
            reported = true;
            s++;
            continue;
        }
        memcpy(out + n, s, (size_t)len);
        n += (size_t)len;
        s += len;
    }
    out[n] = 0;
    if (end < lx->lim && *end == '"') {
        lx->cur = end + 1;
    } else {
        tf_error(p->diag, OFF(lx, lx->tok), OFF(lx, end), "unterminated string");
        lx->cur = end;
    }
    lval->str = out;
    return TOK_STRING;
}

/* 42, 1_000_000, 0x2A: decimal up to INT64_MAX, hexadecimal up to 64 bits. */
static int int_literal(TfParser *p, TFYYSTYPE *lval, int base) {
    TfLexer *lx = &p->lex;
    const unsigned char *s = lx->tok + (base == 16 ? 2 : 0);
    uint64_t v = 0, max = base == 16 ? UINT64_MAX : (uint64_t)INT64_MAX;
    bool overflow = false;
    for (; s < lx->cur; s++) {
        unsigned c = *s, digit;
        if (c == '_') continue;
        if (c >= '0' && c <= '9') digit = c - '0';
        else digit = (c | 0x20) - 'a' + 10;
        if (v > (max - digit) / (uint64_t)base) overflow = true;
        else v = v * (uint64_t)base + digit;
    }
    if (overflow) {
        int len = (int)(lx->cur - lx->tok);
        tf_error(p->diag, OFF(lx, lx->tok), OFF(lx, lx->cur),
                 "integer literal '%.*s%s' is too large (the limit is %s)", len > 40 ? 40 : len,
                 (const char *)lx->tok, len > 40 ? "..." : "",
                 base == 16 ? "64 bits" : "9223372036854775807");
        v = 0;
    }
    lval->ival = (int64_t)v;
    return TOK_INT;
}

static int float_literal(TfParser *p, TFYYSTYPE *lval) {
    TfLexer *lx = &p->lex;
    size_t len = (size_t)(lx->cur - lx->tok);
    /* the text is followed by a non-number byte, so strtod stops where re2c did */
    errno = 0;
    double v = strtod((const char *)lx->tok, NULL);
    if (errno == ERANGE && isinf(v)) {
        tf_error(p->diag, OFF(lx, lx->tok), OFF(lx, lx->cur),
                 "float literal '%.*s%s' is out of range", len > 40 ? 40 : (int)len,
                 (const char *)lx->tok, len > 40 ? "..." : "");
        v = 0;
    }
    lval->fval = v;
    return TOK_FLOAT;
}

static int bad_number(TfParser *p, TFYYSTYPE *lval) {
    TfLexer *lx = &p->lex;
    int len = (int)(lx->cur - lx->tok);
    tf_error(p->diag, OFF(lx, lx->tok), OFF(lx, lx->cur), "invalid number '%.*s%s'",
             len > 40 ? 40 : len, (const char *)lx->tok, len > 40 ? "..." : "");
    lval->ival = 0;
    return TOK_INT;
}

/* The catch-all: name the character (or byte) and skip it. */
static void bad_char(TfParser *p) {
    TfLexer *lx = &p->lex;
    const unsigned char *s = lx->tok;
    uint32_t at = OFF(lx, s);
    if (*s >= 0x80) {
        int n = tf_utf8_len(s, lx->lim);
        if (n) {
            lx->cur = s + n;
            tf_error(p->diag, at, at + (uint32_t)n, "unexpected character '%.*s'", n,
                     (const char *)s);
        } else {
            tf_error(p->diag, at, at + 1, "invalid UTF-8 byte 0x%02x", *s);
        }
    } else if (*s < 0x20 || *s == 0x7f) {
        tf_error(p->diag, at, at + 1, "unexpected byte 0x%02x", *s);
    } else {
        tf_error(p->diag, at, at + 1, "unexpected character '%c'", *s);
    }
}

/* Brackets are counted here so that absurd nesting stops before anything recurses. */
static int open_bracket(TfParser *p, int tok) {
    TfLexer *lx = &p->lex;
    if (++lx->brackets > TF_MAX_BRACKET_NESTING) {
        tf_error(p->diag, OFF(lx, lx->tok), OFF(lx, lx->cur),
                 "nesting too deep (more than %d open brackets)", TF_MAX_BRACKET_NESTING);
        p->stop = true;
        return TOK_YYEOF;
    }
    return tok;
}

static int close_bracket(TfParser *p, int tok) {
    if (p->lex.brackets > 0) p->lex.brackets--;
    return tok;
}

static int scan(TfParser *p, TFYYSTYPE *lval) {
    TfLexer *lx = &p->lex;
    if (p->stop) return TOK_YYEOF;
    for (;;) {
        lx->tok = lx->cur;
        /*!re2c
            re2c:api:style = free-form;
            re2c:define:YYCTYPE = "unsigned char";
            re2c:define:YYCURSOR = "lx->cur";
            re2c:define:YYMARKER = "lx->mark";
            re2c:define:YYLIMIT = "lx->lim";
            re2c:yyfill:enable = 0;
            re2c:eof = 0;

            dec = [0-9][0-9_]*;
            hex = "0" [xX] [0-9a-fA-F_]+;
            exp = [eE] [+-]? [0-9]+;
            flt = [0-9]+ "." [0-9]+ exp? | "." [0-9]+ exp? | [0-9]+ exp;
            id  = [A-Za-z_][A-Za-z0-9_]*;

            $                 { return TOK_YYEOF; }
            [ \t\r\n\v\f]+    { continue; }
            "//"              { skip_line_comment(p); continue; }
            "/*"              { if (!skip_block_comment(p)) return TOK_YYEOF; continue; }

            "kernel"          { return TOK_KERNEL; }
            "fn"              { return TOK_FN; }
            "let"             { return TOK_LET; }
            "var"             { return TOK_VAR; }
            "const"           { return TOK_CONST; }
            "tune"            { return TOK_TUNE; }
            "where"           { return TOK_WHERE; }
            "grid"            { return TOK_GRID; }
            "key"             { return TOK_KEY; }
            "warps"           { return TOK_WARPS; }
            "stages"          { return TOK_STAGES; }
            "for"             { return TOK_FOR; }
            "in"              { return TOK_IN; }
            "if"              { return TOK_IF; }
            "else"            { return TOK_ELSE; }
            "return"          { return TOK_RETURN; }
            "true"            { return TOK_TRUE; }
            "false"           { return TOK_FALSE; }
            "as"              { return TOK_AS; }
            "None"            { return TOK_NONE; }

            hex               { return int_literal(p, lval, 16); }
            dec               { return int_literal(p, lval, 10); }
            flt               { return float_literal(p, lval); }
            (dec | flt) id    { return bad_number(p, lval); }
            id                {
                size_t len = (size_t)(lx->cur - lx->tok);
                lval->str = tir_strndup(p->arena, (const char *)lx->tok, len);
                return TOK_IDENT;
            }
            ["]               { return string_literal(p, lval); }

            "||"              { return TOK_OROR; }
            "&&"              { return TOK_ANDAND; }
            "=="              { return TOK_EQ; }
            "!="              { return TOK_NE; }
            "<="              { return TOK_LE; }
            ">="              { return TOK_GE; }
            "<<"              { return TOK_SHL; }
            ">>"              { return TOK_SHR; }
            "+="              { return TOK_ADD_ASSIGN; }
            "-="              { return TOK_SUB_ASSIGN; }
            "*="              { return TOK_MUL_ASSIGN; }
            "/="              { return TOK_DIV_ASSIGN; }
            "(" | "[" | "{"   { return open_bracket(p, lx->tok[0]); }
            ")" | "]" | "}"   { return close_bracket(p, lx->tok[0]); }
            [-+*/%<>=!~&|^,;:] { return lx->tok[0]; }

            *                 { bad_char(p); continue; }
        */
    }
}

int tfyylex(TFYYSTYPE *lval, TfLoc *lloc, TfParser *p) {
    TfLexer *lx = &p->lex;
    int tok = scan(p, lval);
    lloc->loc = OFF(lx, lx->tok);
    lloc->end = OFF(lx, lx->cur);
    if (tok == TOK_YYEOF) lloc->loc = lloc->end = OFF(lx, lx->cur);
    lx->prev = lx->last;
    lx->has_prev = lx->ntokens++ > 0;
    lx->last = *lloc;
    return tok;
}
