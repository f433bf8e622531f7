/* utf8.h — the text check the report readers share: where the first NUL
 * byte or invalid UTF-8 sequence (overlong, surrogate, past U+10FFFF,
 * truncated) is. Owns nothing. */
#ifndef TL_COMPARE_UTF8_H
#define TL_COMPARE_UTF8_H

#include <stddef.h>

/* The offset of the first NUL byte or invalid UTF-8 sequence in s[0..n),
 * or n when the text is fine. */
size_t tl_utf8_bad_at(const char *s, size_t n);

#endif
