/* base64.h — standard base64 (RFC 4648 §4: A-Z a-z 0-9 + /, '=' padding,
 * no line breaks). Owns nothing: the caller owns the buffers. */
#ifndef TL_BASE64_H
#define TL_BASE64_H

#include <stddef.h>

/* Length of the encoding of n bytes, without a terminating NUL. */
size_t tl_base64_len(size_t n);
/* Writes tl_base64_len(n) characters and a NUL to out (which holds at
 * least tl_base64_len(n) + 1 bytes); returns the length written. */
size_t tl_base64_encode(const void *data, size_t n, char *out);

#endif
