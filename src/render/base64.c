#include "base64.h"

#include <stdint.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t tl_base64_len(size_t n) { return (n + 2) / 3 * 4; }

size_t tl_base64_encode(const void *data, size_t n, char *out)
{
    const unsigned char *p = data;
    char *o = out;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        *o++ = alphabet[v >> 18];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = alphabet[v >> 6 & 63];
        *o++ = alphabet[v & 63];
    }
    if (i < n) { /* one or two bytes left */
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        *o++ = alphabet[v >> 18];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
        *o++ = '=';
    }
    *o = 0;
    return (size_t)(o - out);
}
