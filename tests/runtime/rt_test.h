/* Tiny assertion helpers shared by the runtime tests. */
#ifndef RT_TEST_H
#define RT_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rt_test_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            rt_test_failures++;                                                      \
        }                                                                            \
    } while (0)

/* The status is `st` and the message contains `needle`. */
#define CHECK_ERR(call, st, msg, needle)                                                                             \
    do {                                                                                                             \
        int s_ = (int)(call);                                                                                        \
        const char *m_ = (msg);                                                                                      \
        if (s_ != (int)(st) || !strstr(m_ ? m_ : "", (needle))) {                                                    \
            fprintf(stderr, "%s:%d: %s: got status %d message '%s', want %d with '%s'\n", __FILE__, __LINE__, #call, \
                    s_, m_ ? m_ : "", (int)(st), (needle));                                                          \
            rt_test_failures++;                                                                                      \
        }                                                                                                            \
    } while (0)

#define TEST_DONE()                                                    \
    do {                                                               \
        if (rt_test_failures) {                                        \
            fprintf(stderr, "%d check(s) failed\n", rt_test_failures); \
            return 1;                                                  \
        }                                                              \
        printf("ok\n");                                                \
        return 0;                                                      \
    } while (0)

#endif
