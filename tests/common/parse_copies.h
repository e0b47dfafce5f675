/* The vs-interpreter tests' start: `PROG FILE.tir` parsed into n independent copies of the
 * module (one kept as the reference, the others run through passes); *text is the file's
 * text, which the modules may point into: the caller frees it after them.  0 on success;
 * else the exit status (2: usage or an unreadable file, 1: the text does not parse), said
 * on stderr. */
#ifndef TESTS_PARSE_COPIES_H
#define TESTS_PARSE_COPIES_H

#include "ir.h"
#include "read_file.h"

#include <stdio.h>

static int parse_copies(int argc, char **argv, const char *prog, TirArena *ar, TirDiagFn diag, char **text,
                        TirModule **out, int n) {
    *text = NULL;
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.tir\n", prog);
        return 2;
    }
    size_t len;
    *text = read_file(argv[1], &len);
    if (!*text) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        out[i] = tir_parse_module(ar, argv[1], *text, len, diag, NULL);
        if (!out[i])
            rc = 1;
    }
    return rc;
}

#endif
