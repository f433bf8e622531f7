/* json_text.h — helpers over JSON text that the scanner already validated
 * (raw args values, top-level values): decoding a string body, and walking
 * values without recursion limits of the C stack. Owns nothing. */
#ifndef TL_JSON_TEXT_H
#define TL_JSON_TEXT_H

#include <stddef.h>

/* Decodes the string whose body starts at p (after the opening quote) into
 * out (capacity >= body length + 4; decoded text is never longer than the
 * escaped text plus 3). Returns the decoded length; *after points past the
 * closing quote. Invalid UTF-8 becomes U+FFFD. */
size_t tl_json_decode_string(const char *p, char *out, const char **after);

/* Length of the string body starting at p (after the opening quote), up to
 * but excluding the closing quote. */
size_t tl_json_string_span(const char *p);

/* Skips one validated value at p (after leading whitespace); returns the
 * position after it. Iterative. */
const char *tl_json_skip(const char *p);

static inline const char *tl_json_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}

#endif
