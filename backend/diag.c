/* tb_diag: the backend's one way to report, used by every file that can fail (lowering,
 * the LLVM target, ptxas); a leaf, so that reporting ties no two backend files together. */
#include "tb_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* The message goes out whole: a rejected kernel's ptxas log can run to many kilobytes
 * (it was cut at 1 KB), so one that does not fit the stack buffer is formatted again. */
void tb_diag(TirDiagFn diag, void *ud, const char *fmt, ...) {
    if (!diag)
        return;
    char buf[1024], *big = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof buf && (big = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    diag(ud, big ? big : buf);
    free(big);
}
