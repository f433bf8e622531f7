#include "error.h"

#include <stdio.h>

void tl_error_set(tl_error *err, const char *fmt, ...)
{
    if (!err) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

int tl_usage_error(const char *cmd, const char *msg)
{
    fprintf(stderr, "tracelens: %s: %s (see `tracelens %s --help`)\n", cmd, msg, cmd);
    return TL_EXIT_USAGE;
}
