#include "sbuf.h"

#include <stdio.h>
#include <string.h>

#include "pyfmt.h"
#include "vec.h"

void tl_sb_init(tl_sbuf *b)
{
    b->s = NULL;
    b->len = b->cap = 0;
}

void tl_sb_free(tl_sbuf *b)
{
    free(b->s);
    tl_sb_init(b);
}

void tl_sb_clear(tl_sbuf *b)
{
    b->len = 0;
    if (b->s) b->s[0] = 0;
}

static void reserve(tl_sbuf *b, size_t more)
{
    TL_GROW(b->s, b->cap, b->len + more + 1);
}

void tl_sb_putn(tl_sbuf *b, const char *s, size_t n)
{
    reserve(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void tl_sb_puts(tl_sbuf *b, const char *s) { tl_sb_putn(b, s, strlen(s)); }

void tl_sb_putc_slow(tl_sbuf *b, char c) { tl_sb_putn(b, &c, 1); }

void tl_sb_i64(tl_sbuf *b, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[n++] = '-';
    reserve(b, (size_t)n);
    while (n) b->s[b->len++] = tmp[--n];
    b->s[b->len] = 0;
}

void tl_sb_printf(tl_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void tl_sb_pyfloat(tl_sbuf *b, double x)
{
    reserve(b, 40); /* the text in place (at most 24 bytes and its NUL) */
    b->len += (size_t)tl_pyfloat_repr(b->s + b->len, 40, x);
}

void tl_sb_pystr(tl_sbuf *b, const char *s, size_t n)
{
    int has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
    char q = has_sq && !has_dq ? '"' : '\'';
    tl_sb_putc(b, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\') tl_sb_puts(b, "\\\\");
        else if (c == (unsigned char)q) {
            tl_sb_putc(b, '\\');
            tl_sb_putc(b, (char)c);
        } else if (c == '\n') tl_sb_puts(b, "\\n");
        else if (c == '\r') tl_sb_puts(b, "\\r");
        else if (c == '\t') tl_sb_puts(b, "\\t");
        else if (c < 0x20 || c == 0x7f) tl_sb_printf(b, "\\x%02x", c);
        else tl_sb_putc(b, (char)c);
    }
    tl_sb_putc(b, q);
}

char *tl_sb_take(tl_sbuf *b)
{
    char *s = b->s ? b->s : tl_xstrdup("");
    tl_sb_init(b);
    return s;
}
