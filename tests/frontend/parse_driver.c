/* parse_driver FILE [--dump-ast]: parses FILE, prints its diagnostics (or, with
 * --dump-ast, the syntax tree) to stdout for the golden tests; exit 1 on errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ast_dump.h"
#include "frontend.h"
#include "../common/read_file.h"

static void print_diag(void *ud, const char *msg) {
    (void)ud;
    fputs(msg, stdout);
}

int main(int argc, char **argv) {
    const char *path = NULL;
    bool dump = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dump-ast") == 0)
            dump = true;
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: parse_driver FILE [--dump-ast]\n");
        return 2;
    }
    size_t len = 0;
    char *src = read_file(path, &len);
    if (!src) {
        fprintf(stderr, "parse_driver: cannot read %s\n", path);
        return 2;
    }
    TirArena *arena = tir_arena_new();
    TfDiag diag;
    tf_diag_init(&diag, path, src, len, print_diag, NULL);
    AstFile *file = tf_parse(arena, &diag);
    if (file && dump)
        tf_dump_ast(stdout, file);
    tir_arena_free(arena);
    free(src);
    return file ? 0 : 1;
}
