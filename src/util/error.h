/* error.h — the one-line error record passed explicitly through the core.
 * Owns nothing global: every function that can fail takes a tl_error* and
 * fills it with "FILE: byte OFFSET (event N): what was expected" style text. */
#ifndef TL_ERROR_H
#define TL_ERROR_H

#include <stdarg.h>

typedef struct tl_error {
    char msg[1024];
} tl_error;

/* The commands' exit statuses: 0 success, 1 bad input, 2 bad usage. */
enum { TL_EXIT_INPUT = 1, TL_EXIT_USAGE = 2 };

/* A subcommand's usage error on stderr, one line pointing to its --help
 * ("tracelens: CMD: MSG (see `tracelens CMD --help`)"); returns
 * TL_EXIT_USAGE. */
int tl_usage_error(const char *cmd, const char *msg);

/* printf-style; always NUL-terminates, truncates long messages. */
void tl_error_set(tl_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
