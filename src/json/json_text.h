/* json_text.h — helpers over JSON text that the scanner already validated
 * (raw args values, top-level values): decoding a string body, and walking
 * values without recursion limits of the C stack, and the UTF-8 and
 * whitespace primitives the scanner shares. Owns nothing. */
#ifndef TL_JSON_TEXT_H
#define TL_JSON_TEXT_H

#include <stddef.h>
#include <stdint.h>

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

/* Writes code point cp as UTF-8 at o (room for 4 bytes); returns its length. */
static inline size_t tl_utf8_put(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static inline const char *tl_json_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}

#endif
