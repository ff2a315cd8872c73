/* jst_sfmt: snprintf that truncates on purpose (see sfmt.h). */
#include <stdarg.h>
#include <stdio.h>
#include "sfmt.h"

void jst_sfmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}
