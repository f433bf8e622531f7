/* sbuf.h — a growable byte string for building text (CSV cells, Python
 * reprs). Owns its buffer; always NUL-terminated. */
#ifndef TL_SBUF_H
#define TL_SBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct tl_sbuf {
    char *s;
    size_t len, cap;
} tl_sbuf;

void tl_sb_init(tl_sbuf *b);
void tl_sb_free(tl_sbuf *b);
void tl_sb_clear(tl_sbuf *b);
void tl_sb_putn(tl_sbuf *b, const char *s, size_t n);
void tl_sb_puts(tl_sbuf *b, const char *s);
void tl_sb_putc_slow(tl_sbuf *b, char c);
static inline void tl_sb_putc(tl_sbuf *b, char c)
{
    if (b->len + 1 < b->cap) {
        b->s[b->len++] = c;
        b->s[b->len] = 0;
    } else {
        tl_sb_putc_slow(b, c);
    }
}
/* Decimal text of an integer (as %lld). */
void tl_sb_i64(tl_sbuf *b, long long v);
void tl_sb_printf(tl_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Python repr of a float (shortest round trip). */
void tl_sb_pyfloat(tl_sbuf *b, double x);
/* Python repr of a str: single quotes unless the text has ' and no ". */
void tl_sb_pystr(tl_sbuf *b, const char *s, size_t n);
/* Takes the buffer (caller frees); b is reset. */
char *tl_sb_take(tl_sbuf *b);

#endif
