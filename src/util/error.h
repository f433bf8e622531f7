/* error.h — the one-line error record passed explicitly through the core.
 * Owns nothing global: every function that can fail takes a tl_error* and
 * fills it with "FILE: byte OFFSET (event N): what was expected" style text. */
#ifndef TL_ERROR_H
#define TL_ERROR_H

#include <stdarg.h>

typedef struct tl_error {
    char msg[1024];
} tl_error;

/* printf-style; always NUL-terminates, truncates long messages. */
void tl_error_set(tl_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
