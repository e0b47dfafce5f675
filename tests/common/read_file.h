/* The test programs' one way to read a whole file: malloc'd, NUL-terminated (so text can be
 * used as a C string), its length in *len without the terminator.  NULL when the file
 * cannot be opened or read, or memory runs out.  Reads until EOF, so pipes work too. */
#ifndef TESTS_READ_FILE_H
#define TESTS_READ_FILE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *bigger = realloc(buf, cap *= 2);
        if (!bigger)
            free(buf);
        buf = bigger;
    }
    bool failed = ferror(f);
    fclose(f);
    if (!buf || failed) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

#endif
