#include "json_text.h"

#include <stdint.h>
#include <string.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 0;
}

static uint32_t hex4(const char *p)
{
    return (uint32_t)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
}

size_t tl_json_string_span(const char *p)
{
    const char *s = p;
    while (*p != '"') p += (*p == '\\') ? 2 : 1;
    return (size_t)(p - s);
}

size_t tl_json_decode_string(const char *p, char *out, const char **after)
{
    size_t o = 0;
    while (*p != '"') {
        if (*p != '\\') {
            out[o++] = *p++;
            continue;
        }
        char e = p[1];
        p += 2;
        switch (e) {
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'u': {
            uint32_t cp = hex4(p);
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && p[0] == '\\' && p[1] == 'u') {
                uint32_t lo = hex4(p + 2);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
            o += tl_utf8_put(out + o, cp);
            break;
        }
        default: out[o++] = e; break; /* " \ / */
        }
    }
    *after = p + 1;
    return o;
}

const char *tl_json_skip(const char *p)
{
    size_t depth = 0;
    p = tl_json_ws(p);
    for (;;) {
        char c = *p;
        if (c == '"') {
            p += 2 + tl_json_string_span(p + 1);
        } else if (c == '[' || c == '{') {
            depth++;
            p++;
            continue;
        } else if (c == ']' || c == '}') {
            depth--;
            p++;
        } else if (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            p++;
            continue;
        } else if (c == 0) {
            return p;
        } else {
            while (*p && !strchr(",]}: \t\r\n", *p)) p++;
        }
        if (depth == 0) return p;
    }
}
