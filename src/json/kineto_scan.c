#include "kineto_scan.h"

#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/source.h"
#include "json_text.h"
#include "structix.h"
#include "../util/bigmem.h"
#include "../util/clock.h"
#include "../util/memstat.h"
#include "../util/vec.h"

enum { PAD = 64, INITIAL_BUF = 4 << 20, READ_CHUNK = 256 << 10, BRIDGE_CHUNK = 16 << 10, PROGRESS_STEP = 64 << 20 };

/* Parse status: OK, NEED (the unit runs past the buffered data: refill and
 * parse the unit again), ERR (err filled). */
enum { OK = 0, NEED = 1, ERR = 2 };

typedef struct scanner {
    tl_source *src;           /* NULL for an in-memory document */
    /* or the bytes come from this reader (gzip segments, below) */
    long (*read_fn)(void *ud, char *buf, size_t cap, tl_error *err);
    void *read_ud;
    /* and, when set, lends bytes in place (gzip segments): the bytes from
     * offset at up to the end of the reader's current stretch, when at lies
     * in it and it holds more than the bytes up to have_end; 0 otherwise */
    long (*borrow_fn)(void *ud, uint64_t at, uint64_t have_end, const char **data);
    const char *path;
    char *buf;                /* [0, len) data, then >= PAD zero bytes */
    size_t len, cap;
    /* buf is lent (borrow_fn, never written) while borrowed; the scanner's
     * own buffer is then own_buf, of own_cap bytes */
    int borrowed;
    char *own_buf;
    size_t own_cap;
    uint64_t base;            /* uncompressed offset of buf[0] */
    int eof;
    size_t max_value;         /* the largest single JSON value (bytes) */
    size_t max_cap;           /* the read buffer never grows past this */
    uint64_t dur_sum;         /* of the stored (non-negative) durations */
    tl_event_store *es;
    tl_error *err;
    uint64_t event_index;     /* index of the event being parsed */
    int in_events;

    /* the event being parsed */
    int64_t e_ts, e_dur, e_id, e_corr;
    uint32_t e_name, e_cat, e_pid, e_tid;
    uint8_t e_ph, e_flags, e_has_name, e_has_cat;
    uint8_t *tb;              /* args blob of this event */
    size_t tb_len, tb_cap;
    int64_t e_seq;
    int e_has_seq;

    char *sb;                 /* unescape buffer */
    size_t sb_cap;
    uint8_t *stack;           /* container stack for skip_value */
    size_t stack_cap;

    tl_icache names_cache, keys_cache, values_cache, cats_cache;
    /* integer pid/tid -> idval id, direct-mapped (a trace has few) */
    struct { int64_t v; uint32_t id; } idv_cache[16];
    uint16_t idv_valid;
    uint8_t *cat_map;         /* cats id -> tl_cat, | CAT_HOST for a host event's category */
    size_t cat_map_cap;
    int skip_host_args;       /* tl_scan_opts.skip_host_args */
    uint64_t next_progress;
    const tl_scan_opts *opts;

    /* the structured error (the message is also formatted into err) */
    const char *err_what;
    char err_what_buf[192];
    uint64_t err_off, err_event;
    uint64_t err_seen;        /* the byte that revealed the error (>= err_off) */
    int err_in_events;

    /* parallel parts: a part scanner stops when an event starts exactly at
     * one of `stops` (offsets of later parts), see tl_scan_file */
    const uint64_t *stops;
    size_t n_stops, stop_i;
    int landed;               /* stopped exactly at stops[landed_i] */
    size_t landed_i;
    int start_in_events;      /* begin inside traceEvents, at an event */

    /* stage figures (TRACELENS_SCAN_STAGES): seconds inside the source's
     * read (the read(2) of a plain file, or the wait for the inflater) and
     * in the whole scan of this scanner */
    double read_s, scan_s;

    /* stage 1: the classifier's masks of buf, one per 64-byte block, made
     * a chunk at a time just ahead of the parse (so the bytes are still in
     * cache when parsed) and dropped at each refill */
    tl_sx_path sx;
    tl_sx_scan_masks *ix;
    size_t ix_n, ix_cap;      /* blocks classified, allocated */
} scanner;

/* ------------------------------------------------------------------ errors */

static void format_error(const scanner *s, uint64_t event_base)
{
    if (s->err_in_events)
        tl_error_set(s->err, "%s: byte %llu (event %llu): %s", s->path, (unsigned long long)s->err_off,
                     (unsigned long long)(event_base + s->err_event), s->err_what);
    else
        tl_error_set(s->err, "%s: byte %llu: %s", s->path, (unsigned long long)s->err_off, s->err_what);
}

/* An error reported at p, revealed by the byte at seen (a value is checked
 * once it has been read whole). */
static int fail_seen(scanner *s, const char *p, const char *seen, const char *what)
{
    s->err_off = s->base + (uint64_t)(p - s->buf);
    s->err_seen = s->base + (uint64_t)(seen - s->buf);
    snprintf(s->err_what_buf, sizeof s->err_what_buf, "%s", what);
    s->err_what = s->err_what_buf;
    s->err_event = s->event_index;
    s->err_in_events = s->in_events;
    format_error(s, 0);
    return ERR;
}

static int fail(scanner *s, const char *p, const char *what) { return fail_seen(s, p, p, what); }

/* At a zero byte: either the end of the buffered data (NEED) or a NUL in
 * the input (an error). */
static int at_zero(scanner *s, const char *p, const char *what)
{
    if (p >= s->buf + s->len) return NEED;
    return fail(s, p, what);
}

/* ------------------------------------------------------------- primitives */

enum { IX_CHUNK = 64 }; /* blocks classified at a time: 4 KiB of input */

/* Classifies the blocks from ix_n up to at least block b (buf holds
 * len + PAD readable bytes, and b never passes the block of the zero
 * sentinel at len). */
__attribute__((noinline)) static void ix_extend(scanner *s, size_t b)
{
    size_t limit = (s->len + PAD) / 64, want = b + IX_CHUNK;
    if (want > limit) want = limit;
    if (want > s->ix_cap) {
        size_t c = s->ix_cap ? s->ix_cap : 1024;
        while (c < want) c *= 2;
        s->ix = tl_xrealloc(s->ix, c * sizeof *s->ix);
        s->ix_cap = c;
    }
    tl_sx_scan_blocks(s->sx, (const uint8_t *)s->buf + 64 * s->ix_n, want - s->ix_n, s->ix + s->ix_n);
    s->ix_n = want;
}

static inline const tl_sx_scan_masks *ix_block(scanner *s, size_t b)
{
    if (b >= s->ix_n) ix_extend(s, b);
    return &s->ix[b];
}

/* Finds the first '"', '\\', control byte (< 0x20, includes the zero
 * sentinel) or byte >= 0x80 at or after p, from the classifier's masks. */
static inline const char *scan_str(scanner *s, const char *p)
{
    size_t off = (size_t)(p - s->buf), b = off >> 6;
    uint64_t m = ix_block(s, b)->stop >> (off & 63);
    if (m) return p + __builtin_ctzll(m);
    for (;;) {
        m = ix_block(s, ++b)->stop;
        if (m) return s->buf + (b << 6) + __builtin_ctzll(m);
    }
}

/* Skips JSON whitespace at p (the zero sentinel stops it). */
static inline const char *sx_ws(scanner *s, const char *p)
{
    /* JSON whitespace is below 0x21; so are the other control bytes, which
     * the nonspace mask stops at */
    if ((unsigned char)*p > ' ') return p;
    size_t off = (size_t)(p - s->buf), b = off >> 6;
    uint64_t m = ix_block(s, b)->nonspace >> (off & 63);
    if (m) return p + __builtin_ctzll(m);
    for (;;) {
        m = ix_block(s, ++b)->nonspace;
        if (m) return s->buf + (b << 6) + __builtin_ctzll(m);
    }
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Length of a valid UTF-8 sequence at p (within n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return len;
}

/* Are the n bytes at p the start of a valid UTF-8 sequence, not yet
 * whole (so only the bytes after them can tell)? */
static int utf8_prefix(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n >= len) return 0;
    for (size_t i = 1; i < n; i++) {
        unsigned b = p[i];
        if (b < 0x80 || b > 0xBF) return 0;
        /* the second byte's narrower ranges: no overlong form, no surrogate, nothing past U+10FFFF */
        if (i == 1 && ((c == 0xE0 && b < 0xA0) || (c == 0xED && b > 0x9F) || (c == 0xF0 && b < 0x90) ||
                       (c == 0xF4 && b > 0x8F)))
            return 0;
    }
    return 1;
}

static void sb_reserve(scanner *s, size_t need)
{
    if (need > s->sb_cap) {
        size_t c = s->sb_cap ? s->sb_cap : 256;
        while (c < need) c *= 2;
        s->sb = tl_xrealloc(s->sb, c);
        s->sb_cap = c;
    }
}

/* Parses a string starting after its opening quote. On OK, *out and *outlen
 * hold its decoded bytes (invalid UTF-8 replaced by U+FFFD); *pp points
 * after the closing quote. Decoded text may live in s->sb. */
static int parse_string_slow(scanner *s, const char **pp, const char **out, size_t *outlen, const char *stop);

static inline int parse_string(scanner *s, const char **pp, const char **out, size_t *outlen)
{
    const char *start = *pp;
    const char *p = scan_str(s, start);
    if (__builtin_expect(*p == '"', 1)) { /* no escape and no byte >= 0x80 before it */
        *out = start;
        *outlen = (size_t)(p - start);
        *pp = p + 1;
        return OK;
    }
    return parse_string_slow(s, pp, out, outlen, p);
}

/* parse_string's slow path: stop is the first byte that is not plain ASCII
 * string text (an escape, a byte >= 0x80, a control byte or the end). */
__attribute__((noinline)) static int parse_string_slow(scanner *s, const char **pp, const char **out, size_t *outlen,
                                                       const char *stop)
{
    const char *start = *pp, *p = stop;
    if (*p == 0 && p >= s->buf + s->len) return NEED; /* no need to decode what is parsed again */
    /* escapes or non-ASCII bytes */
    size_t o = 0;
    p = start;
    for (;;) {
        sb_reserve(s, o + 8);
        unsigned char c = (unsigned char)*p;
        if (c == '"') break;
        if (c == 0) {
            int st = at_zero(s, p, "NUL byte inside a string");
            if (st == NEED) return NEED;
            return st;
        }
        if (c < 0x20) return fail(s, p, "control character inside a string (must be escaped)");
        if (c == '\\') {
            char e = p[1];
            if (e == 0 && p + 1 >= s->buf + s->len) return NEED;
            p += 2;
            switch (e) {
            case '"': s->sb[o++] = '"'; break;
            case '\\': s->sb[o++] = '\\'; break;
            case '/': s->sb[o++] = '/'; break;
            case 'b': s->sb[o++] = '\b'; break;
            case 'f': s->sb[o++] = '\f'; break;
            case 'n': s->sb[o++] = '\n'; break;
            case 'r': s->sb[o++] = '\r'; break;
            case 't': s->sb[o++] = '\t'; break;
            case 'u': {
                uint32_t cp = 0;
                for (int i = 0; i < 4; i++) {
                    int h = hexval((unsigned char)p[i]);
                    if (h < 0) {
                        if (p[i] == 0 && p + i >= s->buf + s->len) return NEED;
                        return fail(s, p + i, "invalid \\u escape in a string (expected 4 hex digits)");
                    }
                    cp = cp * 16 + (uint32_t)h;
                }
                p += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF && p[0] == '\\' && p[1] == 'u') {
                    uint32_t lo = 0;
                    int okhex = 1;
                    for (int i = 0; i < 4; i++) {
                        int h = hexval((unsigned char)p[2 + i]);
                        if (h < 0) {
                            if (p[2 + i] == 0 && p + 2 + i >= s->buf + s->len) return NEED;
                            okhex = 0;
                            break;
                        }
                        lo = lo * 16 + (uint32_t)h;
                    }
                    if (okhex && lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        p += 6;
                    }
                }
                if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD; /* lone surrogate */
                o += tl_utf8_put(s->sb + o, cp);
                break;
            }
            default:
                if (e == 0 && p - 1 >= s->buf + s->len) return NEED;
                return fail(s, p - 1, "invalid escape sequence in a string");
            }
            continue;
        }
        if (c < 0x80) {
            s->sb[o++] = (char)c;
            p++;
            continue;
        }
        /* non-ASCII: copy a valid sequence, or replace one bad byte */
        size_t avail = 0;
        while (avail < 4 && p[avail] != 0 && p[avail] != '"') avail++;
        size_t n = utf8_seq((const unsigned char *)p, avail);
        if (n == 0) {
            /* more data decides only a sequence cut short by the end of
             * the buffered bytes (else the scan would depend on where the
             * reads end: a value limit checked at a NEED, fuzz finding
             * regress_utf8_need.json) */
            if (avail < 4 && p[avail] == 0 && p + avail >= s->buf + s->len &&
                utf8_prefix((const unsigned char *)p, avail))
                return NEED;
            o += tl_utf8_put(s->sb + o, 0xFFFD);
            p++;
        } else {
            memcpy(s->sb + o, p, n);
            o += n;
            p += n;
        }
    }
    sb_reserve(s, o + 16); /* interning reads whole 8-byte words */
    *out = s->sb;
    *outlen = o;
    *pp = p + 1;
    return OK;
}

/* Strings the core keeps as C strings (names, categories, pid/tid text,
 * keys) may not hold a \u0000 escape: it would cut them short downstream.
 * Only a decoded string (in s->sb) can hold a NUL (a raw one is an error).
 * q: the opening quote, for the message; end: after the closing quote. */
__attribute__((noinline, cold)) static int nul_error(scanner *s, const char *q, const char *end, const char *what)
{
    char msg[192];
    snprintf(msg, sizeof msg, "a \\u0000 escape in %s (names and keys cannot hold a NUL character)", what);
    return fail_seen(s, q, end - 1, msg);
}

static inline int nul_free(scanner *s, const char *q, const char *end, const char *str, size_t n, const char *what)
{
    return str != s->sb || !memchr(str, 0, n) ? OK : nul_error(s, q, end, what);
}

/* Validates the string at p (after the opening quote) without decoding. */
static int skip_string(scanner *s, const char **pp)
{
    const char *p = *pp;
    for (;;) {
        p = scan_str(s, p);
        if ((unsigned char)*p >= 0x80) { /* checked where strings are decoded */
            p++;
            continue;
        }
        if (*p == '"') {
            *pp = p + 1;
            return OK;
        }
        if (*p == '\\') {
            char e = p[1];
            if (e == 'u') {
                for (int i = 2; i < 6; i++)
                    if (hexval((unsigned char)p[i]) < 0) {
                        if (p[i] == 0 && p + i >= s->buf + s->len) return NEED;
                        return fail(s, p + i, "invalid \\u escape in a string (expected 4 hex digits)");
                    }
                p += 6;
            } else if (e && strchr("\"\\/bfnrt", e)) {
                p += 2;
            } else {
                if (e == 0 && p + 1 >= s->buf + s->len) return NEED;
                return fail(s, p + 1, "invalid escape sequence in a string");
            }
            continue;
        }
        if (*p == 0) return at_zero(s, p, "NUL byte inside a string");
        return fail(s, p, "control character inside a string (must be escaped)");
    }
}

/* Matches literal lit at *pp (true, false, null, NaN, Infinity). */
static int expect_lit(scanner *s, const char **pp, const char *lit)
{
    const char *p = *pp;
    for (size_t i = 0; lit[i]; i++)
        if (p[i] != lit[i]) {
            if (p[i] == 0 && p + i >= s->buf + s->len) return NEED;
            return fail(s, p + i, "invalid literal (expected a JSON value)");
        }
    *pp = p + strlen(lit);
    return OK;
}

/* The run of up to 8 decimal digits at p (8 bytes readable) and its value,
 * a word at a time: a byte is a digit when its high nibble is 3 and its low
 * nibble at most 9; the digits, moved to the top of the word (zeros, that
 * is leading zeros, below), are combined in pairs, fours and eights. */
__attribute__((always_inline)) static inline size_t digit_run8(const char *p, uint64_t *val)
{
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t nondigit = ((w & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull) |
                        (((w & 0x0F0F0F0F0F0F0F0Full) + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull);
    size_t n = nondigit ? (size_t)__builtin_ctzll(nondigit) >> 3 : 8;
    if (n == 0) {
        *val = 0;
        return 0;
    }
    uint64_t d = (w & 0x0F0F0F0F0F0F0F0Full) << (8 * (8 - n));
    d = (d * 10 + (d >> 8)) & 0x00FF00FF00FF00FFull;
    d = (d * 100 + (d >> 16)) & 0x0000FFFF0000FFFFull;
    d = (d * 10000 + (d >> 32)) & 0xFFFFFFFFull;
    *val = d;
    return n;
}

static int scan_number_slow(scanner *s, const char **pp, int *is_int, int64_t *iv);

/* Number token: validates JSON grammar (plus NaN/Infinity/-Infinity, which
 * Python's reader accepts). Sets *is_int when it is a plain integer that
 * fits int64, with the value in *iv. */
static inline int scan_number(scanner *s, const char **pp, int *is_int, int64_t *iv)
{
    /* fast path: an integer of 1 to 18 digits without a leading zero,
     * followed by a byte that cannot continue a number; anything else
     * (and every error) takes the general path */
    const char *p = *pp, *q = p + (*p == '-'), *d0 = q;
    if ((unsigned)(*q - '1') < 9) {
        uint64_t v;
        q += digit_run8(q, &v);
        while ((unsigned)(*q - '0') < 10) v = v * 10 + (unsigned)(*q++ - '0');
        char c = *q;
        if (q - d0 <= 18 && c != '.' && c != 'e' && c != 'E' && c != 0) {
            *is_int = 1;
            *iv = *p == '-' ? -(int64_t)v : (int64_t)v;
            *pp = q;
            return OK;
        }
    }
    return scan_number_slow(s, pp, is_int, iv);
}

__attribute__((noinline)) static int scan_number_slow(scanner *s, const char **pp, int *is_int, int64_t *iv)
{
    const char *p = *pp;
    int neg = 0;
    *is_int = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (*p == 'I' || *p == 'N') {
        const char *lit = p;
        int st = expect_lit(s, &p, *p == 'I' ? "Infinity" : "NaN");
        if (st != OK) return st;
        if (neg && *lit == 'N') return fail_seen(s, lit, p - 1, "invalid number");
        *pp = p;
        return OK;
    }
    if (!(*p >= '0' && *p <= '9')) {
        if (*p == 0 && p >= s->buf + s->len) return NEED;
        return fail(s, p, "invalid number (expected a digit)");
    }
    uint64_t v = 0;
    int ovf = 0;
    if (*p == '0') {
        p++;
    } else {
        /* up to 19 digits cannot overflow; 20 or more (no leading zero)
         * are past INT64_MAX, so never an integer here */
        const char *d0 = p;
        while ((unsigned)(*p - '0') < 10) {
            v = v * 10 + (unsigned)(*p - '0');
            p++;
        }
        if (p - d0 > 19) ovf = 1;
    }
    int integral = 1;
    if (*p == '.') {
        integral = 0;
        p++;
        if (!(*p >= '0' && *p <= '9')) {
            if (*p == 0 && p >= s->buf + s->len) return NEED;
            return fail(s, p, "invalid number (expected a digit after '.')");
        }
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        integral = 0;
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) {
            if (*p == 0 && p >= s->buf + s->len) return NEED;
            return fail(s, p, "invalid number (expected exponent digits)");
        }
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 0 && p >= s->buf + s->len && !s->eof) return NEED; /* the number may go on */
    if (integral && !ovf) {
        if (!neg && v <= (uint64_t)INT64_MAX) {
            *is_int = 1;
            *iv = (int64_t)v;
        } else if (neg && v <= (uint64_t)INT64_MAX) {
            /* INT64_MIN itself stays text: it is the typed columns' "absent" */
            *is_int = 1;
            *iv = -(int64_t)v;
        }
    }
    *pp = p;
    return OK;
}

/* An array holding only integers, plain strings (no escape, no byte
 * >= 0x80) and arrays of them, without whitespace (Kineto's "Input Dims",
 * "Input Strides", "Input type", "Concrete Inputs"), skipped in one tight
 * loop that checks the grammar as it goes. p is at '['. Returns the end, or
 * NULL for the general path: any other content (escapes, fractions, spaces,
 * objects, deep nesting), every error and the end of the buffered data (the
 * zero sentinel matches nothing, and ends a string's fast scan). */
static const char *skip_simple_array(scanner *s, const char *p)
{
    int depth = 0;
    for (;;) {
        /* a value starts at p */
        if (*p == '[') {
            if (++depth > 64) return NULL;
            p++;
            if (*p != ']') continue;
            p++;
            depth--;
        } else if (*p == '"') {
            p = scan_str(s, p + 1);
            if (*p != '"') return NULL;
            p++;
        } else {
            if (*p == '-') p++;
            if ((unsigned)(*p - '1') < 9) {
                do p++;
                while ((unsigned)(*p - '0') < 10);
            } else if (*p == '0') {
                p++;
                if ((unsigned)(*p - '0') < 10) return NULL;
            } else {
                return NULL;
            }
            if (*p == '.' || *p == 'e' || *p == 'E') return NULL;
        }
        /* after a value: close arrays, or a comma before the next value */
        for (;;) {
            if (depth == 0) return p;
            if (*p == ',') {
                p++;
                break;
            }
            if (*p != ']') return NULL;
            p++;
            depth--;
        }
    }
}

/* Skips (and validates) one JSON value of any depth, iteratively. */
static int skip_value(scanner *s, const char **pp)
{
    const char *p = *pp;
    size_t depth = 0;
    int st;
    for (;;) {
        /* a value starts here */
        p = sx_ws(s, p);
        switch (*p) {
        case '"':
            p++;
            if ((st = skip_string(s, &p)) != OK) return st;
            break;
        case '[': {
            const char *end = skip_simple_array(s, p);
            if (end) {
                p = end;
                break;
            }
        }
            /* fall through */
        case '{': {
            char open = *p++;
            if (depth == s->stack_cap) {
                s->stack_cap = s->stack_cap ? s->stack_cap * 2 : 64;
                s->stack = tl_xrealloc(s->stack, s->stack_cap);
            }
            s->stack[depth++] = (uint8_t)open;
            p = sx_ws(s, p);
            if ((open == '[' && *p == ']') || (open == '{' && *p == '}')) {
                p++;
                depth--;
                break;
            }
            if (open == '{') {
                if (*p != '"') {
                    if (*p == 0) return at_zero(s, p, "expected a key string");
                    return fail(s, p, "expected a key string or '}'");
                }
                p++;
                if ((st = skip_string(s, &p)) != OK) return st;
                p = sx_ws(s, p);
                if (*p != ':') {
                    if (*p == 0) return at_zero(s, p, "expected ':'");
                    return fail(s, p, "expected ':' after an object key");
                }
                p++;
            }
            continue; /* parse the first element */
        }
        case 't': if ((st = expect_lit(s, &p, "true")) != OK) return st; break;
        case 'f': if ((st = expect_lit(s, &p, "false")) != OK) return st; break;
        case 'n': if ((st = expect_lit(s, &p, "null")) != OK) return st; break;
        case 0: return at_zero(s, p, "NUL byte where a value was expected");
        default: {
            int isint;
            int64_t iv;
            if (*p == '-' || (*p >= '0' && *p <= '9') || *p == 'N' || *p == 'I') {
                if ((st = scan_number(s, &p, &isint, &iv)) != OK) return st;
            } else {
                return fail(s, p, "unexpected character (expected a JSON value)");
            }
        }
        }
        /* after a value: close containers or move to the next element */
        for (;;) {
            if (depth == 0) {
                *pp = p;
                return OK;
            }
            p = sx_ws(s, p);
            uint8_t top = s->stack[depth - 1];
            if (*p == ',') {
                p = sx_ws(s, p + 1);
                if (top == '{') {
                    if (*p != '"') {
                        if (*p == 0) return at_zero(s, p, "expected a key string");
                        return fail(s, p, "expected a key string after ','");
                    }
                    p++;
                    if ((st = skip_string(s, &p)) != OK) return st;
                    p = sx_ws(s, p);
                    if (*p != ':') {
                        if (*p == 0) return at_zero(s, p, "expected ':'");
                        return fail(s, p, "expected ':' after an object key");
                    }
                    p++;
                }
                break; /* next value */
            }
            if ((*p == ']' && top == '[') || (*p == '}' && top == '{')) {
                p++;
                depth--;
                continue;
            }
            if (*p == 0) return at_zero(s, p, "unexpected end inside a value");
            return fail(s, p, top == '[' ? "expected ',' or ']' in an array" : "expected ',' or '}' in an object");
        }
    }
}

/* ------------------------------------------------------- exact us -> ns */

static const uint64_t pow10u[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                    10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                    100000000000ull, 1000000000000ull, 10000000000000ull,
                                    100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                    100000000000000000ull, 1000000000000000000ull,
                                    10000000000000000000ull};

int tl_parse_us_to_ns(const char *p, size_t len, int64_t *out)
{
    const char *end = p + len;
    int neg = 0;
    if (p < end && *p == '-') neg = 1, p++;
    if (p >= end || !(*p >= '0' && *p <= '9')) return -1;
    /* fast path: up to 15 integer digits, up to 3 fraction digits */
    uint64_t mant = 0;
    int nd = 0;          /* significant digits kept in mant */
    int exp10 = 0;       /* value = mant * 10^exp10 (us) */
    int sticky = 0;      /* non-zero digits were dropped */
    while (p < end && *p >= '0' && *p <= '9') {
        if (nd < 19) {
            mant = mant * 10 + (uint64_t)(*p - '0');
            if (mant) nd++;
        } else {
            exp10++;
            sticky |= *p != '0';
        }
        p++;
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !(*p >= '0' && *p <= '9')) return -1;
        while (p < end && *p >= '0' && *p <= '9') {
            if (nd < 19) {
                mant = mant * 10 + (uint64_t)(*p - '0');
                if (mant) nd++;
                exp10--;
            } else {
                sticky |= *p != '0';
            }
            p++;
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p == '-', p++;
        if (p >= end || !(*p >= '0' && *p <= '9')) return -1;
        long e = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            if (e < 100000) e = e * 10 + (*p - '0');
            p++;
        }
        exp10 += (int)(eneg ? -e : e);
    }
    if (p != end) return -1;
    int k = exp10 + 3; /* ns = mant * 10^k */
    uint64_t ns;
    if (mant == 0) {
        ns = 0;
    } else if (k >= 0) {
        if (k > 19) return -1;
        if (mant > UINT64_MAX / pow10u[k]) return -1;
        ns = mant * pow10u[k];
    } else {
        int d = -k;
        if (d > 19) {
            ns = 0; /* far below half a nanosecond */
        } else {
            uint64_t div = pow10u[d], q = mant / div, r = mant % div, half = div / 2;
            /* div is a power of ten >= 10, so it is even and half is exact */
            if (r > half || (r == half && (sticky || (q & 1)))) q++;
            ns = q;
        }
    }
    if (!neg && ns > (uint64_t)INT64_MAX) return -1;
    if (neg && ns > (uint64_t)INT64_MAX) return -1;
    *out = neg ? -(int64_t)ns : (int64_t)ns;
    return 0;
}

/* ------------------------------------------------------------ the event */

__attribute__((noinline)) static void tb_grow(scanner *s, size_t more)
{
    TL_GROW(s->tb, s->tb_cap, s->tb_len + more);
}

static inline void tb_reserve(scanner *s, size_t more)
{
    if (__builtin_expect(s->tb_len + more > s->tb_cap, 0)) tb_grow(s, more);
}

__attribute__((always_inline)) static inline void tb_put_int(scanner *s, uint32_t key, int64_t v)
{
    tb_reserve(s, 24);
    s->tb_len += tl_put_varint(s->tb + s->tb_len, key);
    s->tb[s->tb_len++] = TL_AV_INT;
    s->tb_len += tl_put_varint(s->tb + s->tb_len, tl_zigzag(v));
}

static void tb_put_raw(scanner *s, uint32_t key, uint32_t vid)
{
    tb_reserve(s, 16);
    s->tb_len += tl_put_varint(s->tb + s->tb_len, key);
    s->tb[s->tb_len++] = TL_AV_RAW;
    s->tb_len += tl_put_varint(s->tb + s->tb_len, vid);
}

/* Drops every entry of `key` from the current event's blob (duplicate keys:
 * the last one wins). */
static void tb_remove_key(scanner *s, uint32_t key)
{
    if (!s->tb) return;
    size_t o = 0;
    tl_arg_iter it = {s->tb, s->tb + s->tb_len};
    tl_arg a;
    for (const uint8_t *start = it.p; tl_es_args_next(&it, &a); start = it.p) {
        if (a.key == key) continue;
        memmove(s->tb + o, start, (size_t)(it.p - start));
        o += (size_t)(it.p - start);
    }
    s->tb_len = o;
}

static uint8_t classify_cat(const char *c, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(c, lit, n) == 0)
    if (IS("cpu_op")) return TL_CAT_CPU_OP;
    if (IS("cuda_runtime")) return TL_CAT_CUDA_RUNTIME;
    if (IS("cuda_driver")) return TL_CAT_CUDA_DRIVER;
    if (IS("python_function")) return TL_CAT_PYTHON_FUNCTION;
    if (IS("kernel")) return TL_CAT_KERNEL;
    if (IS("gpu_memcpy")) return TL_CAT_GPU_MEMCPY;
    if (IS("gpu_memset")) return TL_CAT_GPU_MEMSET;
    if (IS("ac2g")) return TL_CAT_AC2G;
    if (IS("user_annotation")) return TL_CAT_USER_ANNOTATION;
    if (IS("gpu_user_annotation")) return TL_CAT_GPU_USER_ANNOTATION;
    return TL_CAT_OTHER;
#undef IS
}

/* cat_map's flag of the categories whose args tl_scan_opts.skip_host_args
 * skips: the host's own events, which no launch, kernel or copy refers to
 * by their args. */
#define CAT_HOST 0x40
static int host_cat(uint8_t cat, const char *c, size_t n)
{
    return cat == TL_CAT_CPU_OP || cat == TL_CAT_PYTHON_FUNCTION || cat == TL_CAT_USER_ANNOTATION ||
           (n == 17 && memcmp(c, "cpu_instant_event", 17) == 0);
}

static uint32_t intern_cat(scanner *s, const char *c, size_t n)
{
    uint32_t id = tl_strpool_intern_cached(&s->es->cats, &s->cats_cache, c, n);
    if (id >= s->cat_map_cap) {
        size_t old = s->cat_map_cap;
        TL_GROW(s->cat_map, s->cat_map_cap, (size_t)id + 1);
        memset(s->cat_map + old, 0xff, s->cat_map_cap - old);
    }
    if (s->cat_map[id] == 0xff) {
        uint8_t cat = classify_cat(c, n);
        s->cat_map[id] = (uint8_t)(cat | (host_cat(cat, c, n) ? CAT_HOST : 0));
    }
    return id;
}

static int parse_idval_slow(scanner *s, const char **pp, uint32_t *out);

static inline unsigned idv_slot(int64_t iv) { return (unsigned)((uint64_t)iv * 0x9E3779B97F4A7C15ull >> 60); }

/* pid / tid: int, string or null (7 and "7" are different identities).
 * Inline: a positive integer of up to 8 digits already in the cache. */
static inline int parse_idval(scanner *s, const char **pp, uint32_t *out)
{
    const char *p = *pp;
    if ((unsigned)(*p - '1') < 9) {
        uint64_t v;
        const char *q = p + digit_run8(p, &v);
        char c = *q;
        unsigned slot = idv_slot((int64_t)v);
        if (!((unsigned)(c - '0') < 10) && c != '.' && c != 'e' && c != 'E' && c != 0 && (s->idv_valid >> slot & 1) &&
            s->idv_cache[slot].v == (int64_t)v) {
            *out = s->idv_cache[slot].id;
            *pp = q;
            return OK;
        }
    }
    return parse_idval_slow(s, pp, out);
}

__attribute__((noinline)) static int parse_idval_slow(scanner *s, const char **pp, uint32_t *out)
{
    const char *p = *pp;
    int st;
    if (*p == '"') {
        const char *str;
        size_t n;
        const char *q = p++;
        if ((st = parse_string(s, &p, &str, &n)) != OK || (st = nul_free(s, q, p, str, n, "a pid or tid")) != OK)
            return st;
        *out = tl_es_idval(s->es, 1, tl_strpool_intern(&s->es->names, str, n));
    } else if (*p == 'n') {
        if ((st = expect_lit(s, &p, "null")) != OK) return st;
        *out = tl_es_idval(s->es, 2, 0);
    } else {
        const char *start = p;
        int isint = 0;
        int64_t iv = 0;
        if (*p == '-' || (*p >= '0' && *p <= '9')) st = scan_number(s, &p, &isint, &iv);
        else st = skip_value(s, &p);
        if (st != OK) return st;
        if (isint) {
            unsigned slot = idv_slot(iv);
            if ((s->idv_valid >> slot & 1) && s->idv_cache[slot].v == iv) {
                *out = s->idv_cache[slot].id;
            } else {
                *out = tl_es_idval(s->es, 0, iv);
                s->idv_cache[slot].v = iv;
                s->idv_cache[slot].id = *out;
                s->idv_valid |= (uint16_t)(1u << slot);
            }
        } else {
            /* other values (floats, big ints, booleans, containers) are a
             * kind of their own, so 1.5 and "1.5" stay different; numbers
             * are canonicalised (1.50 is 1.5) */
            char canon[40];
            size_t len = (size_t)(p - start);
            const char *text = start;
            if ((*start == '-' || (*start >= '0' && *start <= '9')) && len < 64 && (memchr(start, '.', len) || memchr(start, 'e', len) || memchr(start, 'E', len))) {
                char tmp[64];
                memcpy(tmp, start, len);
                tmp[len] = 0;
                len = (size_t)snprintf(canon, sizeof canon, "%.17g", strtod(tmp, NULL));
                text = canon;
            }
            *out = tl_es_idval(s->es, 3, tl_strpool_intern(&s->es->names, text, len));
        }
    }
    *pp = p;
    return OK;
}

/* Kineto's form of a time: up to 15 integer digits (no leading zero), up to
 * 3 fraction digits, then a delimiter. Returns 1 with the value in ns, the
 * end and whether it was a plain integer; 0 for anything else (the general
 * path decides). */
__attribute__((always_inline)) static inline int time_kineto_form(const char *p, int64_t *v, const char **end, int *isint)
{
    const char *q = p + (*p == '-');
    const char *d0 = q;
    uint64_t ip, fp = 0;
    size_t ni = digit_run8(q, &ip), nf = 0;
    q += ni;
    if (ni == 8) {
        uint64_t more;
        size_t n2 = digit_run8(q, &more);
        ip = ip * pow10u[n2] + more;
        ni += n2;
        q += n2;
    }
    *isint = 1;
    if (*q == '.') {
        nf = digit_run8(++q, &fp);
        q += nf;
        *isint = 0;
    }
    char c = *q;
    if (!(ni >= 1 && ni <= 15 && !(ni > 1 && *d0 == '0') && (*isint || (nf >= 1 && nf <= 3)) &&
          (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t')))
        return 0;
    static const uint64_t scale[4] = {1000, 100, 10, 1};
    *v = (int64_t)(ip * 1000 + fp * scale[nf]);
    if (*p == '-') *v = -*v;
    *end = q;
    return 1;
}

static int parse_time_slow(scanner *s, const char **pp, int is_dur, int64_t *out, int *present);

/* ts / dur: exact microseconds -> int64 ns, within the bounds of
 * kineto_scan.h. Non-numbers leave the field absent (the value is still
 * validated). *present: 0 absent, 1 a number, 2 a plain JSON integer (the
 * reference then computes with Python ints). */
/* Kineto's form in range inline; the rest (and every error) out of line. */
__attribute__((always_inline)) static inline int parse_time(scanner *s, const char **pp, int is_dur, int64_t *out, int *present)
{
    int64_t v;
    const char *end;
    int isint;
    if (time_kineto_form(*pp, &v, &end, &isint) &&
        (is_dur ? v >= -TL_DUR_MAX_NS && v <= TL_DUR_MAX_NS : v >= TL_TS_MIN_NS && v <= TL_TS_MAX_NS)) {
        *out = v;
        *present = isint ? 2 : 1;
        *pp = end;
        return OK;
    }
    return parse_time_slow(s, pp, is_dur, out, present);
}

__attribute__((noinline)) static int parse_time_slow(scanner *s, const char **pp, int is_dur, int64_t *out,
                                                     int *present)
{
    const char *start = *pp, *p = start;
    int st;
    *present = 0;
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
        int isint;
        int64_t iv;
        if ((st = scan_number(s, &p, &isint, &iv)) != OK) return st;
        if (tl_parse_us_to_ns(start, (size_t)(p - start), out) != 0)
            return fail_seen(s, start, p, "timestamp out of range (does not fit int64 nanoseconds)");
        if (is_dur ? *out < -TL_DUR_MAX_NS || *out > TL_DUR_MAX_NS : *out < TL_TS_MIN_NS || *out > TL_TS_MAX_NS)
            return fail_seen(s, start, p,
                        is_dur ? "dur out of range (a duration must lie within -1e15..1e15 us)"
                               : "ts out of range (a timestamp must lie within -1e15..4e15 us)");
        *present = isint ? 2 : 1;
    } else {
        if ((st = skip_value(s, &p)) != OK) return st;
    }
    *pp = p;
    return OK;
}

static inline int key_is(const char *k, size_t n, const char *lit, size_t litn)
{
    return n == litn && memcmp(k, lit, n) == 0;
}

/* A key literal of 1 to 4 bytes as parse_event's word, a constant. */
#define KEY_WORD(lit)                                                                                    \
    ((uint64_t)(unsigned char)(lit)[0] | (sizeof(lit) > 2 ? (uint64_t)(unsigned char)(lit)[1] << 8 : 0) | \
     (sizeof(lit) > 3 ? (uint64_t)(unsigned char)(lit)[2] << 16 : 0) |                                   \
     (sizeof(lit) > 4 ? (uint64_t)(unsigned char)(lit)[3] << 24 : 0))

static int parse_args(scanner *s, const char **pp)
{
    const char *p = *pp;
    int st;
    if (*p != '{') {
        /* args that are not an object: keep nothing, but validate */
        if ((st = skip_value(s, &p)) != OK) return st;
        *pp = p;
        return OK;
    }
    s->e_flags |= TL_F_ARGS;
    p = sx_ws(s, p + 1);
    if (*p == '}') {
        *pp = p + 1;
        return OK;
    }
    for (;;) {
        if (*p != '"') {
            if (*p == 0) return at_zero(s, p, "expected a key string in args");
            return fail(s, p, "expected a key string in args");
        }
        const char *q = p++;
        const char *key;
        size_t klen;
        if ((st = parse_string(s, &p, &key, &klen)) != OK || (st = nul_free(s, q, p, key, klen, "an args key")) != OK)
            return st;
        uint32_t kid = tl_strpool_intern_cached(&s->es->keys, &s->keys_cache, key, klen);
        p = sx_ws(s, p);
        if (*p != ':') {
            if (*p == 0) return at_zero(s, p, "expected ':' in args");
            return fail(s, p, "expected ':' after a key in args");
        }
        p = sx_ws(s, p + 1);
        const char *vstart = p;
        int isint = 0;
        int64_t iv = 0;
        if (*p == '-' || (*p >= '0' && *p <= '9')) {
            if ((st = scan_number(s, &p, &isint, &iv)) != OK) return st;
        } else {
            if ((st = skip_value(s, &p)) != OK) return st;
        }
        if (isint) {
            if (kid == TL_K_CORRELATION) {
                tb_remove_key(s, TL_K_CORRELATION); /* an earlier non-integer duplicate */
                s->e_corr = iv;
            } else {
                tb_put_int(s, kid, iv);
                if (kid == TL_K_SEQUENCE_NUMBER) {
                    s->e_seq = iv;
                    s->e_has_seq = 1;
                }
            }
        } else {
            if (kid == TL_K_CORRELATION) s->e_corr = TL_NONE;
            if (kid == TL_K_SEQUENCE_NUMBER) s->e_has_seq = 0; /* the last duplicate wins */
            tb_put_raw(s, kid, tl_strpool_intern_cached(&s->es->values, &s->values_cache, vstart, (size_t)(p - vstart)));
        }
        p = sx_ws(s, p);
        if (*p == ',') {
            p = sx_ws(s, p + 1);
            continue;
        }
        if (*p == '}') {
            *pp = p + 1;
            return OK;
        }
        if (*p == 0) return at_zero(s, p, "expected ',' or '}' in args");
        return fail(s, p, "expected ',' or '}' in args");
    }
}

static void reset_event(scanner *s)
{
    s->e_ts = s->e_dur = s->e_id = s->e_corr = TL_NONE;
    s->e_name = s->e_cat = 0;
    s->e_pid = s->e_tid = UINT32_MAX;
    s->e_ph = s->e_flags = s->e_has_name = s->e_has_cat = 0;
    s->tb_len = 0;
    s->e_has_seq = 0;
}

static uint32_t label_value(scanner *s, uint32_t want_key)
{
    /* raw JSON text of args[want_key] of the current event (ints as text) */
    uint32_t found = UINT32_MAX;
    if (!s->tb) return found;
    tl_arg_iter it = {s->tb, s->tb + s->tb_len};
    tl_arg a;
    while (tl_es_args_next(&it, &a)) {
        if (a.key != want_key) continue;
        if (a.tag == TL_AV_RAW) {
            found = (uint32_t)a.i;
        } else {
            char num[32];
            int n = snprintf(num, sizeof num, "%lld", (long long)a.i);
            found = tl_strpool_intern(&s->es->values, num, (size_t)n);
        }
    }
    return found;
}

static void commit_event(scanner *s)
{
    tl_event_store *es = s->es;
    if (es->n == es->cap) tl_es_grow(es, es->cap ? es->cap * 2 : 4096);
    size_t i = es->n;
    uint8_t flags = s->e_flags;
    int64_t dur = s->e_dur;
    if (dur != TL_NONE) {
        flags |= TL_F_DUR;
        if (dur < 0) {
            flags |= TL_F_NEGDUR;
            dur = 0;
        }
    } else {
        dur = 0;
    }
    s->dur_sum += (uint64_t)dur; /* each <= TL_DUR_MAX_NS: checked once the scan ends */
    if (s->dur_sum > (uint64_t)TL_DUR_MAX_NS) s->dur_sum = (uint64_t)TL_DUR_MAX_NS + 1;
    if (s->e_ts != TL_NONE) flags |= TL_F_TS;
    es->ts[i] = s->e_ts == TL_NONE ? 0 : s->e_ts;
    es->dur[i] = dur;
    es->name[i] = s->e_has_name ? s->e_name : tl_strpool_intern(&es->names, "", 0);
    if (!s->e_has_cat) s->e_cat = intern_cat(s, "", 0);
    es->cat_id[i] = s->e_cat;
    es->cat[i] = s->e_has_cat ? (uint8_t)(s->cat_map[s->e_cat] & ~CAT_HOST) : TL_CAT_NONE;
    es->ph[i] = s->e_ph;
    es->flags[i] = flags;
    if (s->e_pid == UINT32_MAX) s->e_pid = tl_es_idval(es, 2, 0);
    if (s->e_tid == UINT32_MAX) s->e_tid = tl_es_idval(es, 2, 0);
    tl_es_set_thread(es, i, s->e_pid, s->e_tid);
    if (s->e_ph == 's' || s->e_ph == 'f') {
        tl_es_set_corr(es, i, s->e_id);
        if (s->e_corr != TL_NONE) tb_put_int(s, TL_K_CORRELATION, s->e_corr);
    } else {
        tl_es_set_corr(es, i, s->e_corr);
    }
    if (s->e_has_seq) {
        if (es->n_seq == es->cap_seq) {
            es->cap_seq = es->cap_seq ? es->cap_seq * 2 : 1024;
            es->seq_pairs = tl_xrealloc(es->seq_pairs, es->cap_seq * sizeof *es->seq_pairs);
        }
        es->seq_pairs[es->n_seq].seq = s->e_seq;
        es->seq_pairs[es->n_seq].uid = (uint32_t)i;
        es->n_seq++;
    }
    if (s->e_ph == 'M' && s->e_has_name) {
        const char *nm = tl_strpool_get(&es->names, s->e_name);
        uint32_t label = UINT32_MAX;
        if (!strcmp(nm, "process_name") || !strcmp(nm, "thread_name")) label = TL_K_NAME;
        else if (!strcmp(nm, "process_labels")) label = TL_K_LABELS;
        else if (!strcmp(nm, "process_sort_index") || !strcmp(nm, "thread_sort_index")) label = TL_K_SORT_INDEX;
        if (label != UINT32_MAX) {
            uint32_t v = label_value(s, label);
            if (v != UINT32_MAX) {
                TL_GROW(es->meta, es->cap_meta, es->n_meta + 1);
                es->meta[es->n_meta++] = (tl_meta_entry){s->e_pid, s->e_tid, s->e_name, v};
            }
        }
    }
    if (es->blob_len + s->tb_len > es->blob_cap) {
        size_t nc = es->blob_cap ? es->blob_cap * 2 : (1 << 20);
        while (nc < es->blob_len + s->tb_len) nc *= 2;
        es->blob = tl_big_realloc(es->blob, nc);
        es->blob_cap = nc;
    }
    if (s->tb_len) {
        memcpy(es->blob + es->blob_len, s->tb, s->tb_len);
        es->blob_len += s->tb_len;
    }
    tl_es_set_args_end(es, i + 1, es->blob_len);
    es->n++;
}

/* Kept out of line: inlined into its one caller, the event loop of scan(),
 * it made the whole scan about 12% slower. */
__attribute__((noinline)) static int parse_event(scanner *s, const char **pp)
{
    const char *p = *pp;
    int st;
    reset_event(s);
    if (*p != '{') {
        if (*p == 0) return at_zero(s, p, "expected an event object");
        return fail(s, p, "expected an event object '{' in traceEvents");
    }
    p = sx_ws(s, p + 1);
    if (*p == '}') goto done;
    for (;;) {
        if (*p != '"') {
            if (*p == 0) return at_zero(s, p, "expected a key string");
            return fail(s, p, "expected a key string in an event");
        }
        p++;
        const char *key;
        size_t klen;
        if ((st = parse_string(s, &p, &key, &klen)) != OK) return st;
        /* the key's bytes in one word when it has 1 to 8 (8 bytes are
         * readable at key: the buffer's padding, or s->sb's spare room) */
        uint64_t kw = 0;
        if (klen - 1 < 8) {
            memcpy(&kw, key, 8);
            kw &= ~0ull >> (64 - 8 * klen);
        }
        p = sx_ws(s, p);
        if (*p != ':') {
            if (*p == 0) return at_zero(s, p, "expected ':'");
            return fail(s, p, "expected ':' after a key");
        }
        p = sx_ws(s, p + 1);
#define K(lit) (klen == sizeof(lit) - 1 && kw == KEY_WORD(lit))
        if (K("ph")) {
            const char *str;
            size_t n;
            if (*p == '"') {
                p++;
                if ((st = parse_string(s, &p, &str, &n)) != OK) return st;
                s->e_ph = n ? (uint8_t)str[0] : 0;
            } else if ((st = skip_value(s, &p)) != OK) {
                return st;
            }
        } else if (K("name")) {
            if (*p == '"') {
                const char *str, *q = p;
                size_t n;
                p++;
                if ((st = parse_string(s, &p, &str, &n)) != OK || (st = nul_free(s, q, p, str, n, "an event name")) != OK)
                    return st;
                s->e_name = tl_strpool_intern_cached(&s->es->names, &s->names_cache, str, n);
                s->e_has_name = 1;
            } else {
                const char *start = p;
                if ((st = skip_value(s, &p)) != OK) return st;
                s->e_name = tl_strpool_intern(&s->es->names, start, (size_t)(p - start));
                s->e_has_name = 1;
            }
        } else if (K("cat")) {
            if (*p == '"') {
                const char *str, *q = p;
                size_t n;
                p++;
                if ((st = parse_string(s, &p, &str, &n)) != OK || (st = nul_free(s, q, p, str, n, "a category")) != OK)
                    return st;
                s->e_cat = intern_cat(s, str, n);
                s->e_has_cat = 1;
            } else if ((st = skip_value(s, &p)) != OK) {
                return st;
            }
        } else if (K("ts")) {
            int present;
            if ((st = parse_time(s, &p, 0, &s->e_ts, &present)) != OK) return st;
            if (!present) s->e_ts = TL_NONE;
            s->e_flags = (uint8_t)((s->e_flags & ~TL_F_TS_INT) | (present == 2 ? TL_F_TS_INT : 0));
        } else if (K("dur")) {
            int present;
            if ((st = parse_time(s, &p, 1, &s->e_dur, &present)) != OK) return st;
            if (!present) s->e_dur = TL_NONE;
            s->e_flags = (uint8_t)((s->e_flags & ~TL_F_DUR_INT) | (present == 2 ? TL_F_DUR_INT : 0));
        } else if (K("pid")) {
            if ((st = parse_idval(s, &p, &s->e_pid)) != OK) return st;
        } else if (K("tid")) {
            if ((st = parse_idval(s, &p, &s->e_tid)) != OK) return st;
        } else if (K("args")) {
            s->tb_len = 0;
            s->e_corr = TL_NONE;
            s->e_has_seq = 0;
            if (s->skip_host_args && s->e_has_cat && (s->cat_map[s->e_cat] & CAT_HOST)) {
                if (*p == '{') s->e_flags |= TL_F_ARGS;
                st = skip_value(s, &p); /* validated, not kept */
            } else {
                st = parse_args(s, &p);
            }
            if (st != OK) return st;
        } else if (K("id")) {
            int isint = 0;
            int64_t iv = 0;
            if (*p == '-' || (*p >= '0' && *p <= '9')) {
                if ((st = scan_number(s, &p, &isint, &iv)) != OK) return st;
            } else if ((st = skip_value(s, &p)) != OK) {
                return st;
            }
            s->e_id = isint ? iv : TL_NONE;
        } else {
            if ((st = skip_value(s, &p)) != OK) return st;
        }
#undef K
        p = sx_ws(s, p);
        if (*p == ',') {
            p = sx_ws(s, p + 1);
            continue;
        }
        if (*p == '}') break;
        if (*p == 0) return at_zero(s, p, "expected ',' or '}' in an event");
        return fail(s, p, "expected ',' or '}' in an event");
    }
done:
    *pp = p + 1;
    commit_event(s);
    return OK;
}

/* ------------------------------------------------------------ buffering */

/* The size of the own buffer that keeps rest bytes: cap, doubled (up to
 * max_cap) while less than a quarter of it would be left to read into.
 * Kept is at most max_value (scan checks it first), so a buffer of max_cap
 * always has room to read on. */
static size_t own_cap_for(const scanner *s, size_t cap, size_t rest)
{
    while (rest + PAD + cap / 4 > cap && cap < s->max_cap) cap = cap * 2 < s->max_cap ? cap * 2 : s->max_cap;
    return cap;
}

/* Keeps buf[keep..len), reads more. Returns OK, or ERR (read error or end
 * of data when more was needed: the caller decides which). */
static int refill(scanner *s, size_t keep, int *got_more)
{
    *got_more = 0;
    if (s->eof) return OK;
    if (s->borrow_fn) {
        const char *d;
        long n = s->borrow_fn(s->read_ud, s->base + keep, s->base + s->len, &d);
        if (n > 0) { /* the kept bytes and what follows them, in place */
            if (!s->borrowed) {
                s->own_buf = s->buf;
                s->own_cap = s->cap;
                s->borrowed = 1;
            }
            s->buf = (char *)d; /* read only */
            s->base += keep;
            s->len = (size_t)n;
            s->ix_n = 0;
            *got_more = 1;
            return OK;
        }
    }
    size_t rest = s->len - keep;
    int was_borrowed = s->borrowed;
    if (was_borrowed) { /* back to the own buffer, with the kept bytes */
        size_t cap = own_cap_for(s, s->own_cap, rest);
        if (cap != s->own_cap) {
            free(s->own_buf);
            s->own_buf = tl_xmalloc(cap);
        }
        memcpy(s->own_buf, s->buf + keep, rest);
        s->buf = s->own_buf;
        s->cap = cap;
        s->borrowed = 0;
    } else {
        memmove(s->buf, s->buf + keep, rest);
        size_t cap = own_cap_for(s, s->cap, rest);
        if (cap != s->cap) {
            s->cap = cap;
            s->buf = tl_xrealloc(s->buf, cap);
        }
    }
    s->base += keep;
    s->len = rest;
    s->ix_n = 0; /* the bytes moved: classify again */
    double t0 = tl_now_s();
    /* read a cache-sized chunk at a time: the bytes are still in the core's
     * cache when classified and parsed (4 MiB reads made the scan ~30%
     * slower); past the end of a lent stretch only what bridges to the
     * next one, which is lent again at the next refill */
    size_t room = s->cap - s->len - PAD;
    if (room > READ_CHUNK) room = READ_CHUNK;
    if (was_borrowed && room > BRIDGE_CHUNK) room = BRIDGE_CHUNK;
    long n = s->read_fn ? s->read_fn(s->read_ud, s->buf + s->len, room, s->err)
                        : tl_source_read(s->src, s->buf + s->len, room, s->err);
    s->read_s += tl_now_s() - t0;
    if (n < 0) return ERR;
    if (n == 0) s->eof = 1;
    s->len += (size_t)n;
    memset(s->buf + s->len, 0, PAD);
    *got_more = n > 0;
    if (s->opts && s->opts->progress && s->base + s->len >= s->next_progress) {
        s->opts->progress(s->opts->progress_ud, s->base + s->len, tl_source_file_size(s->src),
                          tl_source_is_gzip(s->src));
        s->next_progress = s->base + s->len + PROGRESS_STEP;
    }
    return OK;
}

static int truncated(scanner *s, const char *p, const char *where)
{
    char msg[160];
    snprintf(msg, sizeof msg, "unexpected end of data %s (truncated file?)", where);
    return fail(s, p, msg);
}

/* ------------------------------------------------ values too large */

enum { TK_NONE, TK_STRING, TK_NUMBER, TK_SPACE };

static int is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
static int is_num_char(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

/* The token of the (validated) text buf[u..] that holds byte x: a string
 * (from its opening quote), a number, a run of whitespace, or none (a
 * structural character or a literal). */
static int token_at(const char *b, size_t len, size_t u, size_t x, size_t *start)
{
    size_t i = u;
    while (i <= x && i < len) {
        char c = b[i];
        size_t t = i;
        int kind = TK_NONE;
        if (c == '"') {
            for (i++; i < len && b[i] != '"'; i++)
                if (b[i] == '\\') i++;
            i++; /* past the closing quote */
            kind = TK_STRING;
        } else if (is_space(c)) {
            while (i < len && is_space(b[i])) i++;
            kind = TK_SPACE;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            while (i < len && is_num_char(b[i])) i++;
            kind = TK_NUMBER;
        } else {
            i++;
        }
        if (x < i) {
            *start = t;
            return kind;
        }
    }
    return TK_NONE;
}

/* Is the token of `kind` that starts at buf[at] longer than max_value
 * bytes? Reads on (keeping only the token) when it goes past the buffered
 * data, so memory stays bounded. -1 on a read error (err filled). */
static int token_too_long(scanner *s, int kind, size_t at)
{
    size_t i = at, j = at + (kind == TK_STRING);
    for (;;) {
        const char *b = s->buf;
        while (j < s->len) {
            char c = b[j];
            if (kind == TK_STRING) {
                if (c == '"') return j + 1 - i > s->max_value;
                if (c == '\\') {
                    if (j + 1 >= s->len) break;
                    j += 2;
                    continue;
                }
            } else if (kind == TK_SPACE ? !is_space(c) : !is_num_char(c)) {
                return j - i > s->max_value;
            }
            j++;
        }
        if (s->len - i > s->max_value) return 1;
        if (s->eof) return 0; /* it ends with the data */
        int more;
        if (refill(s, i, &more) != OK) return -1;
        j -= i;
        i = 0;
    }
}

static void limit_text(const scanner *s, char *out, size_t cap)
{
    if (s->max_value % (1u << 20) == 0) snprintf(out, cap, "%zu MB", s->max_value >> 20);
    else snprintf(out, cap, "%zu bytes", s->max_value);
}

/* The value at buf[u] (an event, a top-level key or value) spans more than
 * max_value bytes: name the string, number or whitespace that holds its
 * first byte past the limit when that token alone is longer than the limit,
 * else the value. Depends only on the bytes, not on how they were read. */
static int too_big(scanner *s, size_t u, const char *value)
{
    char lim[48];
    limit_text(s, lim, sizeof lim);
    uint64_t at = s->base + u;
    size_t t = 0;
    int kind = token_at(s->buf, s->len, u, u + s->max_value, &t);
    if (kind != TK_NONE) {
        uint64_t tok = s->base + t;
        int r = token_too_long(s, kind, t);
        if (r < 0) return ERR;
        if (r) {
            at = tok;
            value = kind == TK_STRING ? "a string" : kind == TK_NUMBER ? "a number" : "a run of whitespace";
        }
    }
    s->err_off = at;
    snprintf(s->err_what_buf, sizeof s->err_what_buf,
             "%s of more than %s (the limit for one JSON value; max_value_mb raises it)", value, lim);
    s->err_what = s->err_what_buf;
    s->err_event = s->event_index;
    s->err_in_events = s->in_events;
    format_error(s, 0);
    return ERR;
}

/* The top level: { ... "traceEvents": [ events ] ... } or [ events ].
 * Whitespace between values is consumed as it comes (a unit that needs more
 * data is parsed again from its start after a refill, and units start after
 * whitespace), so only one value at a time is ever held in the buffer. */
static int scan(scanner *s)
{
    enum {
        T_START,        /* before the document */
        T_OBJ_FIRST,    /* after '{': a key or '}' */
        T_OBJ_KEY,      /* a top-level key */
        T_OBJ_COLON,
        T_OBJ_VALUE,
        T_OBJ_AFTER,    /* ',' or '}' */
        T_EVENTS_FIRST, /* after '[': an event or ']' */
        T_EVENT,        /* an event */
        T_EVENTS_NEXT,  /* after an event: ',' or ']' */
        T_END
    } state = T_START;
    int seen_events = 0, is_events = 0, is_metadata = 0;
    uint32_t kid = 0;
    if (s->start_in_events) {
        state = T_EVENTS_FIRST;
        s->in_events = 1;
        seen_events = 1;
    }
    size_t pos = 0; /* committed position in buf */
    int st;
    for (;;) {
        const char *p = s->buf + pos;
        if (state != T_START) p = sx_ws(s, p);
        const char *mark = p; /* the start of the unit parsed now */
        st = OK;
        switch (state) {
        case T_START:
            if (s->base == 0 && pos == 0 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB &&
                (unsigned char)p[2] == 0xBF)
                p += 3;
            mark = p = sx_ws(s, p);
            if (*p == '{') {
                p++;
                state = T_OBJ_FIRST;
            } else if (*p == '[') {
                s->es->bare_array = 1;
                seen_events = 1;
                s->in_events = 1;
                p++;
                state = T_EVENTS_FIRST;
            } else if (*p == 0 && p >= s->buf + s->len) {
                st = NEED;
            } else {
                return fail(s, p, "the top level is not a JSON object (expected '{' with a traceEvents array)");
            }
            break;
        case T_OBJ_FIRST:
            if (*p == '}') {
                p++;
                state = T_END;
            } else if (*p == 0 && p >= s->buf + s->len) {
                st = NEED;
            } else {
                state = T_OBJ_KEY; /* a key, or the error of one */
            }
            break;
        case T_OBJ_KEY: {
            if (*p != '"') {
                if (*p == 0 && p >= s->buf + s->len) {
                    st = NEED;
                    break;
                }
                return fail(s, p, "expected a key string in the top-level object");
            }
            p++;
            const char *key;
            size_t klen;
            if ((st = parse_string(s, &p, &key, &klen)) != OK) break;
            if ((size_t)(p - mark) > s->max_value) {
                too_big(s, (size_t)(mark - s->buf), "a top-level key");
                return -1;
            }
            if ((st = nul_free(s, mark, p, key, klen, "a top-level key")) != OK) break;
            is_events = key_is(key, klen, "traceEvents", 11);
            /* a non-Kineto `metadata` block may dump the capture host's
             * environment (tokens, keys): it is never kept */
            is_metadata = key_is(key, klen, "metadata", 8);
            kid = tl_strpool_intern(&s->es->keys, key, klen);
            state = T_OBJ_COLON;
            break;
        }
        case T_OBJ_COLON:
            if (*p != ':') {
                if (*p == 0 && p >= s->buf + s->len) {
                    st = NEED;
                    break;
                }
                return fail(s, p, "expected ':' in the top-level object");
            }
            p++;
            state = T_OBJ_VALUE;
            break;
        case T_OBJ_VALUE:
            if (is_events) {
                if (*p == 0 && p >= s->buf + s->len) {
                    st = NEED;
                    break;
                }
                if (seen_events) return fail(s, p, "duplicate traceEvents key");
                if (*p != '[') return fail(s, p, "traceEvents is not an array");
                seen_events = 1;
                s->in_events = 1;
                p++;
                state = T_EVENTS_FIRST;
            } else {
                if ((st = skip_value(s, &p)) != OK) break;
                if ((size_t)(p - mark) > s->max_value) {
                    too_big(s, (size_t)(mark - s->buf), "a top-level value");
                    return -1;
                }
                tl_event_store *es = s->es;
                if (is_metadata) {
                    es->dropped_metadata = 1;
                } else {
                    TL_GROW(es->top, es->cap_top, es->n_top + 1);
                    tl_top_entry *t = &es->top[es->n_top++];
                    t->key = kid;
                    t->len = (size_t)(p - mark);
                    t->raw = tl_xmalloc(t->len + 1);
                    memcpy(t->raw, mark, t->len);
                    t->raw[t->len] = 0;
                }
                state = T_OBJ_AFTER;
            }
            break;
        case T_OBJ_AFTER:
            if (*p == ',') {
                p++;
                state = T_OBJ_KEY;
            } else if (*p == '}') {
                p++;
                state = T_END;
            } else if (*p == 0 && p >= s->buf + s->len) {
                st = NEED;
            } else {
                return fail(s, p, "expected ',' or '}' in the top-level object");
            }
            break;
        case T_EVENTS_FIRST:
            if (*p == ']') {
                p++;
                s->in_events = 0;
                state = s->es->bare_array ? T_END : T_OBJ_AFTER;
            } else if (*p == 0 && p >= s->buf + s->len) {
                st = NEED;
            } else {
                state = T_EVENT;
            }
            break;
        case T_EVENT:
        case T_EVENTS_NEXT:
            /* the common case: loop over events without leaving */
            for (;;) {
                if (state == T_EVENTS_NEXT) {
                    if (*p == ',') {
                        p = sx_ws(s, p + 1);
                        mark = p;
                        state = T_EVENT;
                    } else if (*p == ']') {
                        p++;
                        s->in_events = 0;
                        state = s->es->bare_array ? T_END : T_OBJ_AFTER;
                        break;
                    } else if (*p == 0 && p >= s->buf + s->len) {
                        st = NEED;
                        break;
                    } else {
                        return fail(s, p, "expected ',' or ']' after an event in traceEvents");
                    }
                }
                /* an event starts at p (== mark) */
                if (s->stop_i < s->n_stops) {
                    uint64_t off = s->base + (uint64_t)(p - s->buf);
                    while (s->stop_i < s->n_stops && off > s->stops[s->stop_i]) s->stop_i++;
                    if (s->stop_i < s->n_stops && off == s->stops[s->stop_i]) {
                        s->landed = 1;
                        s->landed_i = s->stop_i;
                        return 0;
                    }
                }
                if ((st = parse_event(s, &p)) != OK) break;
                if ((size_t)(p - mark) > s->max_value) {
                    too_big(s, (size_t)(mark - s->buf), "an event");
                    return -1;
                }
                s->event_index++;
                state = T_EVENTS_NEXT;
                mark = p = sx_ws(s, p);
            }
            break;
        case T_END:
            if (*p == 0 && p >= s->buf + s->len) {
                if (s->eof) {
                    if (!seen_events) {
                        s->in_events = 0;
                        return fail(s, p, "no traceEvents array in the top-level object");
                    }
                    return OK;
                }
                st = NEED;
                break;
            }
            return fail(s, p, "unexpected data after the end of the JSON document");
        }
        /* a value longer than the limit is that error, wherever its bytes
         * past the limit would reveal another one (or more data is needed
         * to go on): the same whatever the read buffer */
        if ((st == ERR && s->err_seen > s->base + (uint64_t)(mark - s->buf) + s->max_value) ||
            (st == NEED && s->len - (size_t)(mark - s->buf) > s->max_value)) {
            too_big(s, (size_t)(mark - s->buf),
                    state == T_EVENT ? "an event" : state == T_OBJ_KEY ? "a top-level key" : "a top-level value");
            return -1;
        }
        if (st == ERR) return -1;
        if (st == NEED) {
            size_t keep = (size_t)(mark - s->buf);
            int more;
            if (!s->src && !s->read_fn) s->eof = 1;
            if (refill(s, keep, &more) != OK) return -1;
            pos = 0;
            if (!more) {
                p = s->buf + s->len;
                if (state == T_START && s->len == 0 && s->base == 0) {
                    return fail(s, p, "the file is empty (expected a JSON object with a traceEvents array)");
                }
                if (state == T_END) continue;
                truncated(s, p, s->in_events ? "inside traceEvents" : "in the top-level object");
                return -1;
            }
            continue;
        }
        pos = (size_t)(p - s->buf);
    }
}

static void scanner_free(scanner *s)
{
    free(s->borrowed ? s->own_buf : s->buf);
    free(s->tb);
    free(s->sb);
    free(s->stack);
    free(s->cat_map);
    free(s->ix);
}

/* The durations together (each stored one is in 0..TL_DUR_MAX_NS) stay at
 * most TL_DUR_MAX_NS, so that no sum of durations overflows. sum saturates
 * at TL_DUR_MAX_NS + 1; on failure the event where the running sum passes
 * the bound is found again for the message. */
static int check_dur_sum(const char *path, const tl_event_store *es, uint64_t sum, tl_error *err)
{
    if (sum <= (uint64_t)TL_DUR_MAX_NS) return 0;
    uint64_t acc = 0;
    size_t i = 0;
    for (; i < es->n; i++) {
        acc += (uint64_t)es->dur[i];
        if (acc > (uint64_t)TL_DUR_MAX_NS) break;
    }
    tl_error_set(err, "%s: event %zu: the durations of the events add up to more than 1e15 us (out of range)", path,
                 i);
    return -1;
}

static int finish(scanner *s, int rc)
{
    if (rc == 0) {
        s->es->bytes = s->base + s->len;
        s->es->args_off[0] = 0;
        rc = check_dur_sum(s->path, s->es, s->dur_sum, s->err);
    }
    scanner_free(s);
    return rc;
}

/* ------------------------------------------------- parallel parts */

/* A plain file is cut into parts at likely event starts (`}` `,` `{` `"`
 * with optional whitespace); each part is scanned on its own thread into its
 * own store, and each scanner stops when an event starts exactly at a later
 * cut. Part 0 starts at the top of the document, so it is right; a later
 * part is right exactly when a right part stopped at its start (its first
 * byte is then a real event start, and scanning is deterministic from
 * there). Parts nobody landed on (a cut inside a string, say) are dropped
 * and the part before them simply scanned on. The result is the same as a
 * sequential scan, errors included. */

enum { MAX_PARTS = 16, CUT_WINDOW = 1 << 18 };
#define PARALLEL_MIN_BYTES ((uint64_t)64 << 20)

typedef struct part {
    scanner s;
    tl_event_store es;
    tl_error err;
    uint64_t start;
    int rc;
    pthread_t thread;
    int started, appended;
} part;

static void scanner_setup_fields(scanner *s, const char *path, tl_event_store *es, const tl_scan_opts *opts,
                                 tl_error *err, tl_sx_path sx)
{
    memset(s, 0, sizeof *s); /* also empties the intern caches */
    s->sx = sx;
    s->path = path;
    s->es = es;
    s->err = err;
    s->opts = opts;
    s->cap = opts && opts->buffer_bytes ? opts->buffer_bytes + PAD : INITIAL_BUF;
    uint64_t mv = opts && opts->max_value_bytes ? opts->max_value_bytes : TL_SCAN_MAX_VALUE_DEFAULT;
    s->max_value = mv < SIZE_MAX / 4 ? (size_t)mv : SIZE_MAX / 4;
    s->max_cap = s->max_value + 1 + INITIAL_BUF + PAD;
    if (s->max_cap < s->cap) s->max_cap = s->cap;
    s->next_progress = PROGRESS_STEP;
    s->skip_host_args = opts && opts->skip_host_args;
}

static void scanner_setup(scanner *s, const char *path, tl_event_store *es, const tl_scan_opts *opts,
                          tl_error *err, tl_sx_path sx)
{
    scanner_setup_fields(s, path, es, opts, err, sx);
    s->buf = tl_xmalloc(s->cap);
    memset(s->buf, 0, PAD);
}

static int run_scanner(scanner *s)
{
    int more;
    double t0 = tl_now_s();
    int rc = refill(s, 0, &more) == OK && scan(s) == 0 ? 0 : -1;
    s->scan_s = tl_now_s() - t0;
    if (s->borrowed) { /* the lent bytes go back with their segment */
        s->buf = s->own_buf;
        s->cap = s->own_cap;
        s->len = 0;
        s->borrowed = 0;
    }
    return rc;
}

/* TRACELENS_SCAN_STAGES=1: one stderr line per scanner (bench/README.md,
 * "Stage figures"). */
static int stages_wanted(void)
{
    const char *v = getenv("TRACELENS_SCAN_STAGES");
    return v && *v && strcmp(v, "0") != 0;
}

static void stage_line(const scanner *s, int part, uint64_t from, uint64_t to, size_t events)
{
    double mb = (double)(to - from) / 1e6, sc = s->scan_s - s->read_s;
    fprintf(stderr, "tracelens: stage scan part %d: bytes %llu..%llu (%.1f MB), %zu events, read/inflate wait %.3f s, "
            "scan %.3f s (%.0f MB/s)\n", part, (unsigned long long)from, (unsigned long long)to, mb, events, s->read_s,
            sc, sc > 0 ? mb / sc : 0.0);
}
static void *part_main(void *arg)
{
    part *pt = arg;
    pt->rc = run_scanner(&pt->s);
    return NULL;
}

static long skip_blank(const char *w, long j, long n)
{
    while (j < n && (w[j] == ' ' || w[j] == '\n' || w[j] == '\r' || w[j] == '\t')) j++;
    return j;
}

/* Does w[j..n) look like a run of objects separated by commas (at least 8,
 * or up to the end of the window)? Tracks strings and nesting only. */
static int plausible_run(const char *w, long j, long n)
{
    for (int objs = 0; objs < 8; objs++) {
        if (j >= n) return 1;
        if (w[j] != '{') return 0;
        long depth = 0;
        for (; j < n; j++) {
            char c = w[j];
            if (c == '"') {
                for (j++; j < n && w[j] != '"'; j++)
                    if (w[j] == '\\') j++;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth == 0) break;
            }
        }
        j = skip_blank(w, j + 1, n);
        if (j >= n) return 1;
        if (w[j] != ',') return w[j] == ']' && objs > 0;
        j = skip_blank(w, j + 1, n);
    }
    return 1;
}

/* Index of a likely event start in win[0..n), or -1: a `{"` after `},`
 * whose continuation looks like a run of events. */
static long find_cut_mem(const char *win, long n)
{
    for (long i = 0; i + 4 < n; i++) {
        if (win[i] != '}') continue;
        long j = skip_blank(win, i + 1, n);
        if (j >= n || win[j] != ',') continue;
        j = skip_blank(win, j + 1, n);
        if (j >= n || win[j] != '{') continue;
        long k = skip_blank(win, j + 1, n);
        if (k < n && win[k] == '"' && plausible_run(win, j, n)) return j;
    }
    return -1;
}

/* Offset of a likely event start in [from, from + CUT_WINDOW), or 0. */
static uint64_t find_cut(tl_source *src, uint64_t from, char *win)
{
    long n = tl_source_pread(src, win, CUT_WINDOW, from);
    long j = find_cut_mem(win, n);
    return j < 0 ? 0 : from + (uint64_t)j;
}

/* Is the document a bare array of events (first byte after BOM/space)? */
static int peek_bare_array(tl_source *src)
{
    char b[4096];
    long n = tl_source_pread(src, b, sizeof b, 0);
    long i = 0;
    if (n >= 3 && (unsigned char)b[0] == 0xEF && (unsigned char)b[1] == 0xBB && (unsigned char)b[2] == 0xBF) i = 3;
    while (i < n && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) i++;
    return i < n && b[i] == '[';
}

static int plan_parts(tl_source *src, uint64_t size, int nparts, uint64_t *cuts)
{
    char *win = tl_xmalloc(CUT_WINDOW);
    int n = 1;
    cuts[0] = 0;
    for (int k = 1; k < nparts; k++) {
        uint64_t c = find_cut(src, size / (uint64_t)nparts * (uint64_t)k, win);
        if (c > cuts[n - 1]) cuts[n++] = c;
    }
    free(win);
    return n;
}

static int scan_parallel(const char *path, tl_event_store *es, const tl_scan_opts *opts, tl_error *err,
                         tl_source *src0, int nparts, uint64_t *dur_sum, tl_sx_path sx)
{
    uint64_t cuts[MAX_PARTS];
    nparts = plan_parts(src0, tl_source_file_size(src0), nparts, cuts);
    int bare = peek_bare_array(src0);
    part *parts = tl_xcalloc((size_t)nparts, sizeof *parts);
    tl_scan_opts quiet = {0};
    if (opts) {
        quiet.buffer_bytes = opts->buffer_bytes;
        quiet.max_value_bytes = opts->max_value_bytes;
        quiet.skip_host_args = opts->skip_host_args;
    }
    for (int k = 0; k < nparts; k++) {
        part *pt = &parts[k];
        tl_event_store *pes = k == 0 ? es : &pt->es;
        if (k) {
            tl_es_init(pes);
            pes->bare_array = bare;
        }
        scanner_setup(&pt->s, path, pes, k == 0 ? opts : &quiet, &pt->err, sx);
        pt->start = cuts[k];
        pt->s.stops = cuts + k + 1;
        pt->s.n_stops = (size_t)(nparts - k - 1);
        pt->s.start_in_events = k > 0;
        pt->s.base = cuts[k];
        if (k == 0) {
            pt->s.src = src0;
        } else {
            pt->s.src = tl_source_open(path, &pt->err);
            if (!pt->s.src || tl_source_seek(pt->s.src, cuts[k], &pt->err) != 0) {
                pt->rc = -1;
                continue;
            }
            pt->started = pthread_create(&pt->thread, NULL, part_main, pt) == 0;
            if (!pt->started) pt->rc = -1;
        }
    }
    parts[0].rc = run_scanner(&parts[0].s);
    for (int k = 1; k < nparts; k++)
        if (parts[k].started) pthread_join(parts[k].thread, NULL);

    if (stages_wanted())
        for (int j = 0; j < nparts; j++) {
            const scanner *ps = &parts[j].s;
            uint64_t to = ps->landed ? cuts[j + 1 + ps->landed_i] : ps->base + ps->len;
            stage_line(ps, j, cuts[j], to, j ? parts[j].es.n : es->n);
        }
    double t_join = tl_now_s();

    /* follow the chain of right parts */
    int rc = 0, k = 0;
    *dur_sum = parts[0].s.dur_sum;
    for (;;) {
        part *pt = &parts[k];
        if (pt->rc != 0) {
            /* event numbers of a later part follow those joined so far */
            if (pt->s.err_what) format_error(&pt->s, k ? es->n : 0);
            *err = pt->err;
            rc = -1;
            break;
        }
        if (!pt->s.landed) break;
        k = k + 1 + (int)pt->s.landed_i;
        if (parts[k].rc == 0) {
            *dur_sum += parts[k].s.dur_sum; /* at most 16 saturated sums */
            tl_es_append(es, &parts[k].es);
            parts[k].appended = 1;
            es->parts_joined++;
        }
    }
    if (rc == 0) es->bytes = tl_source_file_size(src0);
    if (stages_wanted())
    {
        double rss, peak;
        tl_mem_status(&rss, &peak);
        fprintf(stderr, "tracelens: stage join parts: %.3f s (%d parts joined), RSS %.1f MB, peak so far %.1f MB\n",
                tl_now_s() - t_join, es->parts_joined, rss, peak);
    }
    for (int j = 0; j < nparts; j++) {
        part *pt = &parts[j];
        if (j) {
            if (pt->s.src) tl_source_close(pt->s.src);
            if (!pt->appended) tl_es_free(&pt->es);
        }
        scanner_free(&pt->s);
    }
    free(parts);
    return rc;
}

/* ------------------------------------------------- gzip in segments */

/* A gzip file cannot be read from the middle, so its decompressed bytes are
 * cut into segments of SEG_BYTES as they come (one worker at a time takes
 * the next chunk the source's own thread inflated, whole: a segment is such a
 * chunk, not a copy of it), and each segment is scanned from a
 * likely event start in it (find_cut_mem) by whichever worker claims it,
 * into a store of its own, until an event starts exactly at the cut of a
 * later segment: the rule of the parts of a plain file, so the joined result
 * (events, errors and their event numbers) is that of a sequential scan.
 * SEG_POOL segments are held at once, more only while a single stretch
 * without a usable cut (one long value) is longer than the pool: a segment
 * goes back to the source (tl_source_give) once no worker can read it
 * again, and a worker that needs a segment while SEG_POOL are held waits
 * for one to go back, unless every other worker is waiting too (then
 * nothing would: it takes one more). Memory stays bounded by the pool, the
 * source's ring and the longest value, whatever the size of the file. */
enum { SEG_BYTES = 2 << 20, SEG_POOL = 8 };
#define GZ_PARALLEL_MIN_BYTES ((uint64_t)8 << 20) /* compressed */

typedef struct seg_info {
    char *data;       /* NULL once released */
    size_t len;
    uint64_t start;   /* uncompressed offset of data[0] */
    long cut;         /* index in data of the likely event start (0 in segment 0), -1 none */
} seg_info;

typedef struct seg_result {
    tl_event_store *es; /* a spare store (segment 0: the caller's) */
    tl_error err;
    int rc, appended, done;
    size_t landed;     /* the segment at whose cut the scan stopped, SIZE_MAX none */
    uint64_t dur_sum;
    /* the structured error, for its event number once joined */
    int has_what, in_events;
    char what[192];
    uint64_t off, event;
} seg_result;

struct seg_pool;

typedef struct seg_worker {
    struct seg_pool *P;
    scanner s;
    int active;
    size_t cur, off;  /* reading segment cur at byte off */
    uint64_t *stops;  /* cuts of the segments entered, and their segment */
    size_t *stop_seg, n_stops, cap_stops;
    pthread_t thread;
    int started;
    double read_s, scan_s;
    size_t instances;
} seg_worker;

typedef struct seg_pool {
    tl_source *src;
    const char *path;
    tl_scan_opts quiet;
    const tl_scan_opts *opts; /* for the progress callback */
    tl_sx_path sx;
    tl_event_store *es0;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    seg_info *segs;
    size_t n_segs, cap_segs;
    int filling, eof, failed, bare;
    tl_error read_err;         /* the source's error */
    size_t seg_bytes;
    int held;                 /* segments holding their buffer (from tl_source_take) */
    int live, waiting;        /* workers in seg_worker_run, and of them waiting for a buffer */
    size_t next_claim, low;
    seg_worker *w;
    int nw;
    seg_result **res;
    size_t cap_res;
    tl_event_store **spare;   /* emptied stores, kept for their memory */
    size_t n_spare, cap_spare;
    uint64_t next_progress;
    /* the join, done as the chain's segments finish (one joiner at a time,
     * under join_mu): the next segment of the chain, whether the chain has
     * ended (its last segment, or an error), the result */
    pthread_mutex_t join_mu;
    size_t chain_next;
    int chain_ended, rc;
    uint64_t dur_sum;
    tl_error *err;
} seg_pool;

/* Joins the finished segments of the chain, in order, into the caller's
 * store (which segment 0 scanned into): a right segment's scan ends where
 * an event starts exactly at a later cut, and that segment is the next
 * right one. Called by the workers after each segment (skipped when another
 * joins) and at the end. Results are freed once joined or left behind. */
static void seg_join(seg_pool *P, int wait)
{
    if (wait) pthread_mutex_lock(&P->join_mu);
    else if (pthread_mutex_trylock(&P->join_mu) != 0) return;
    tl_event_store *es = P->es0;
    while (!P->chain_ended) {
        pthread_mutex_lock(&P->mu);
        size_t k = P->chain_next;
        seg_result *r = k < P->cap_res ? P->res[k] : NULL;
        int done = r && r->done;
        pthread_mutex_unlock(&P->mu);
        if (!done) break;
        if (r->rc != 0) {
            if (r->has_what) {
                scanner tmp;
                memset(&tmp, 0, sizeof tmp);
                tmp.path = P->path;
                tmp.err = &r->err;
                tmp.err_what = r->what;
                tmp.err_off = r->off;
                tmp.err_event = r->event;
                tmp.err_in_events = r->in_events;
                format_error(&tmp, k ? es->n : 0); /* event numbers follow those joined */
            }
            *P->err = r->err;
            P->rc = -1;
            P->chain_ended = 1;
            break;
        }
        P->dur_sum += r->dur_sum; /* each saturates at TL_DUR_MAX_NS + 1, so does the sum */
        if (P->dur_sum > (uint64_t)TL_DUR_MAX_NS) P->dur_sum = (uint64_t)TL_DUR_MAX_NS + 1;
        if (k) {
            tl_es_append_clear(es, r->es);
            r->appended = 1;
            es->parts_joined++;
            pthread_mutex_lock(&P->mu);
            TL_GROW(P->spare, P->cap_spare, P->n_spare + 1);
            P->spare[P->n_spare++] = r->es;
            r->es = NULL;
            pthread_mutex_unlock(&P->mu);
        }
        if (r->landed == SIZE_MAX) P->chain_ended = 1;
        else P->chain_next = r->landed;
    }
    pthread_mutex_unlock(&P->join_mu);
}

/* With mu held: segments below every worker's position (and below the next
 * claim) go back to the pool. */
static void seg_release(seg_pool *P)
{
    size_t low = P->next_claim;
    for (int k = 0; k < P->nw; k++)
        if (P->w[k].active && P->w[k].cur < low) low = P->w[k].cur;
    for (; P->low < low && P->low < P->n_segs; P->low++) {
        seg_info *g = &P->segs[P->low];
        if (g->data) {
            tl_source_give(P->src, g->data); /* for the inflating thread to fill again */
            P->held--;
        }
        g->data = NULL;
    }
    pthread_cond_broadcast(&P->cv);
}

/* With mu held: 1 when segment j is filled, reading it from the source
 * (in order, one reader at a time) when it is next; 0 past the end of the
 * data or after a read error. */
static int seg_ensure(seg_pool *P, size_t j)
{
    while (j >= P->n_segs) {
        if (P->failed || P->eof) return 0;
        if (P->filling || (P->held >= SEG_POOL && P->waiting + 1 < P->live)) {
            int counted = !P->filling; /* waits for a buffer, not for the reader */
            P->waiting += counted;
            pthread_cond_wait(&P->cv, &P->mu);
            P->waiting -= counted;
            continue;
        }
        P->filling = 1;
        /* SEG_POOL segments held and every other worker waits for one to
         * come back: one more (released like the others) */
        size_t k = P->n_segs;
        uint64_t start = k ? P->segs[k - 1].start + P->segs[k - 1].len : 0;
        pthread_mutex_unlock(&P->mu);
        tl_error e;
        char *buf; /* the inflating thread's chunk, taken whole: no copy */
        long n = tl_source_take(P->src, &buf, &e);
        long cut = n > 0 && k > 0 ? find_cut_mem(buf, n) : 0;
        int bare = 0;
        if (n > 0 && k == 0) {
            long i = n >= 3 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB &&
                             (unsigned char)buf[2] == 0xBF ? 3 : 0;
            i = skip_blank(buf, i, n);
            bare = i < n && buf[i] == '[';
        }
        if (n > 0 && P->opts && P->opts->progress && start + (uint64_t)n >= P->next_progress) {
            P->opts->progress(P->opts->progress_ud, start + (uint64_t)n, tl_source_file_size(P->src), 1);
            P->next_progress = start + (uint64_t)n + PROGRESS_STEP;
        }
        pthread_mutex_lock(&P->mu);
        P->filling = 0;
        if (n <= 0) {
            tl_source_give(P->src, buf);
            if (n < 0) {
                P->failed = 1;
                P->read_err = e;
            }
            P->eof = 1;
        } else {
            TL_GROW(P->segs, P->cap_segs, k + 1);
            P->segs[k] = (seg_info){buf, (size_t)n, start, cut};
            P->held++;
            P->n_segs = k + 1;
            if (k == 0) P->bare = bare;
            /* a short chunk is the last data, but the source may have an
             * error to tell after it: the next take says which */
        }
        pthread_cond_broadcast(&P->cv);
    }
    return 1;
}

/* The scanner's reader: the bytes of segment cur from off, then of the
 * following segments; entering a segment adds its cut to the stops. */
static long seg_read(void *ud, char *buf, size_t cap, tl_error *err)
{
    seg_worker *w = ud;
    seg_pool *P = w->P;
    pthread_mutex_lock(&P->mu);
    for (;;) {
        if (!seg_ensure(P, w->cur)) {
            long r = P->failed ? -1 : 0;
            if (r < 0) *err = P->read_err;
            pthread_mutex_unlock(&P->mu);
            return r;
        }
        seg_info *g = &P->segs[w->cur];
        if (w->off < g->len) {
            size_t n = g->len - w->off < cap ? g->len - w->off : cap;
            const char *from = g->data + w->off; /* kept: cur is not released while this worker reads it */
            pthread_mutex_unlock(&P->mu);
            memcpy(buf, from, n);
            w->off += n;
            return (long)n;
        }
        w->cur++;
        w->off = 0;
        seg_release(P);
        if (seg_ensure(P, w->cur) && P->segs[w->cur].cut >= 0) {
            if (w->n_stops == w->cap_stops) {
                w->cap_stops = w->cap_stops ? 2 * w->cap_stops : 64;
                w->stops = tl_xrealloc(w->stops, w->cap_stops * sizeof *w->stops);
                w->stop_seg = tl_xrealloc(w->stop_seg, w->cap_stops * sizeof *w->stop_seg);
            }
            w->stops[w->n_stops] = P->segs[w->cur].start + (uint64_t)P->segs[w->cur].cut;
            w->stop_seg[w->n_stops++] = w->cur;
            w->s.stops = w->stops;
            w->s.n_stops = w->n_stops;
        }
    }
}

/* The scanner's lender: the rest of segment cur from offset at, in place,
 * when at lies in it and it holds bytes past have_end (the end of what the
 * worker has read of it); the worker's position moves to the segment's end.
 * Segment buffers end in PAD zero bytes (tl_source_set_chunk). */
static long seg_borrow(void *ud, uint64_t at, uint64_t have_end, const char **data)
{
    seg_worker *w = ud;
    seg_pool *P = w->P;
    long n = 0;
    pthread_mutex_lock(&P->mu);
    if (w->cur < P->n_segs) {
        const seg_info *g = &P->segs[w->cur];
        uint64_t end = g->start + g->len;
        if (g->data && at >= g->start && at <= have_end && end > have_end) {
            *data = g->data + (at - g->start); /* kept: cur is not released while this worker reads it */
            n = (long)(end - at);
            w->off = g->len;
        }
    }
    pthread_mutex_unlock(&P->mu);
    return n;
}

/* A scanner for another store, keeping the buffers of the last one. */
static void scanner_reuse(scanner *s, const char *path, tl_event_store *es, const tl_scan_opts *opts, tl_error *err,
                          tl_sx_path sx)
{
    if (!s->buf) {
        scanner_setup(s, path, es, opts, err, sx);
        return;
    }
    scanner old = *s;
    scanner_setup_fields(s, path, es, opts, err, sx);
    s->buf = old.buf;
    s->cap = old.cap > s->cap ? old.cap : s->cap;
    if (s->max_cap < s->cap) s->max_cap = s->cap;
    memset(s->buf, 0, PAD);
    s->tb = old.tb, s->tb_cap = old.tb_cap;
    s->sb = old.sb, s->sb_cap = old.sb_cap;
    s->stack = old.stack, s->stack_cap = old.stack_cap;
    s->ix = old.ix, s->ix_cap = old.ix_cap;
    s->cat_map = old.cat_map, s->cat_map_cap = old.cat_map_cap; /* ids of another store: */
    if (s->cat_map) memset(s->cat_map, 0xff, s->cat_map_cap);
}

static void seg_worker_run(seg_worker *w)
{
    seg_pool *P = w->P;
    pthread_mutex_lock(&P->mu);
    P->live++;
    for (;;) {
        size_t i = P->next_claim++;
        w->cur = i;
        w->off = 0;
        w->active = 1;
        /* segment 0 is scanned even when there is no data (an empty
         * file, a read error: the scanner says which) */
        int have = seg_ensure(P, i);
        if (i > 0 && (!have || P->segs[i].cut < 0)) {
            w->active = 0;
            seg_release(P);
            if (have) continue; /* no likely event start in it */
            break;
        }
        w->off = i ? (size_t)P->segs[i].cut : 0;
        uint64_t start = i ? P->segs[i].start + w->off : 0;
        if (i >= P->cap_res) {
            size_t old = P->cap_res;
            TL_GROW(P->res, P->cap_res, i + 1);
            memset(P->res + old, 0, (P->cap_res - old) * sizeof *P->res);
        }
        seg_result *r = tl_xcalloc(1, sizeof *r);
        P->res[i] = r;
        int bare = P->bare;
        tl_event_store *es = i == 0 ? P->es0 : P->n_spare ? P->spare[--P->n_spare] : NULL;
        pthread_mutex_unlock(&P->mu);
        if (!es) {
            es = tl_xmalloc(sizeof *es);
            tl_es_init(es);
        }
        if (i) {
            r->es = es;
            es->bare_array = bare;
        }
        scanner_reuse(&w->s, P->path, es, &P->quiet, &r->err, P->sx);
        w->s.read_fn = seg_read;
        w->s.borrow_fn = seg_borrow;
        w->s.read_ud = w;
        w->s.base = start;
        w->s.start_in_events = i > 0;
        w->n_stops = 0;
        w->s.stops = w->stops;
        r->rc = run_scanner(&w->s);
        r->landed = w->s.landed ? w->stop_seg[w->s.landed_i] : SIZE_MAX;
        r->dur_sum = w->s.dur_sum;
        if (w->s.err_what) {
            r->has_what = 1;
            snprintf(r->what, sizeof r->what, "%s", w->s.err_what);
            r->off = w->s.err_off;
            r->event = w->s.err_event;
            r->in_events = w->s.err_in_events;
        }
        w->read_s += w->s.read_s;
        w->scan_s += w->s.scan_s;
        w->instances++;

        pthread_mutex_lock(&P->mu);
        r->done = 1;
        w->active = 0;
        seg_release(P);
        pthread_mutex_unlock(&P->mu);
        seg_join(P, 0);
        pthread_mutex_lock(&P->mu);
    }
    P->live--;
    pthread_cond_broadcast(&P->cv); /* one fewer to wait for */
    pthread_mutex_unlock(&P->mu);
}

static void *seg_worker_main(void *arg)
{
    seg_worker_run(arg);
    return NULL;
}

static int scan_gzip_segments(const char *path, tl_event_store *es, const tl_scan_opts *opts, tl_error *err,
                              tl_source *src, int nw, uint64_t *dur_sum, tl_sx_path sx)
{
    seg_pool P;
    memset(&P, 0, sizeof P);
    P.src = src;
    P.path = path;
    P.opts = opts;
    P.sx = sx;
    P.es0 = es;
    if (opts) {
        P.quiet.buffer_bytes = opts->buffer_bytes;
        P.quiet.max_value_bytes = opts->max_value_bytes;
        P.quiet.skip_host_args = opts->skip_host_args;
    }
    P.next_progress = PROGRESS_STEP;
    P.err = err;
    pthread_mutex_init(&P.join_mu, NULL);
    pthread_mutex_init(&P.mu, NULL);
    pthread_cond_init(&P.cv, NULL);
    P.seg_bytes = opts && opts->segment_bytes ? opts->segment_bytes : SEG_BYTES;
    tl_source_set_chunk(src, P.seg_bytes, PAD); /* a segment is one chunk of the inflating thread */
    P.nw = nw;
    P.w = tl_xcalloc((size_t)nw, sizeof *P.w);
    for (int k = 0; k < nw; k++) P.w[k].P = &P;
    for (int k = 1; k < nw; k++) P.w[k].started = pthread_create(&P.w[k].thread, NULL, seg_worker_main, &P.w[k]) == 0;
    seg_worker_run(&P.w[0]);
    for (int k = 1; k < nw; k++)
        if (P.w[k].started) pthread_join(P.w[k].thread, NULL);

    if (stages_wanted())
        for (int k = 0; k < nw; k++)
            fprintf(stderr, "tracelens: stage scan worker %d: %zu segments, read/inflate wait %.3f s, scan %.3f s\n", k,
                    P.w[k].instances, P.w[k].read_s, P.w[k].scan_s - P.w[k].read_s);
    double t_join = tl_now_s();
    seg_join(&P, 1); /* what the workers left */
    int rc = P.rc;
    *dur_sum = P.dur_sum;
    if (rc == 0) es->bytes = P.n_segs ? P.segs[P.n_segs - 1].start + P.segs[P.n_segs - 1].len : 0;
    if (stages_wanted()) {
        double rss, peak;
        tl_mem_status(&rss, &peak);
        fprintf(stderr, "tracelens: stage join segments: %.3f s after the scan (%d joined, most while scanning), "
                "RSS %.1f MB, peak so far %.1f MB\n", tl_now_s() - t_join, es->parts_joined, rss, peak);
    }
    for (size_t j = 0; j < P.cap_res; j++) {
        seg_result *r = P.res[j];
        if (!r) continue;
        if (j && r->es) {
            tl_es_free(r->es);
            free(r->es);
        }
        free(r);
    }
    free(P.res);
    for (size_t j = 0; j < P.n_spare; j++) {
        tl_es_free(P.spare[j]);
        free(P.spare[j]);
    }
    free(P.spare);
    for (int j = 0; j < nw; j++) {
        scanner_free(&P.w[j].s);
        free(P.w[j].stops);
        free(P.w[j].stop_seg);
    }
    free(P.w);
    for (size_t j = 0; j < P.n_segs; j++) free(P.segs[j].data);
    free(P.segs);
    pthread_mutex_destroy(&P.mu);
    pthread_mutex_destroy(&P.join_mu);
    pthread_cond_destroy(&P.cv);
    return rc;
}

static int cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_PARTS ? MAX_PARTS : (int)n;
}

/* The classifier of opts (or TRACELENS_SCAN, or the CPU's best). */
static int resolve_sx(const tl_scan_opts *opts, tl_sx_path *sx, tl_error *err)
{
    char msg[160];
    if (tl_sx_resolve(opts ? (tl_sx_path)opts->scan_path : TL_SX_AUTO, sx, msg, sizeof msg) == 0) return 0;
    tl_error_set(err, "%s", msg);
    return -1;
}

int tl_scan_file(const char *path, tl_event_store *es, const tl_scan_opts *opts, tl_error *err)
{
    tl_sx_path sx;
    if (resolve_sx(opts, &sx, err) != 0) return -1;
    if (stages_wanted()) fprintf(stderr, "tracelens: stage scan: classifier %s\n", tl_sx_name(sx));
    tl_source *src = tl_source_open(path, err);
    if (!src) return -1;
    es->file_bytes = tl_source_file_size(src);
    es->gzip = tl_source_is_gzip(src);
    if (opts && opts->max_text_bytes) {
        if (!es->gzip && es->file_bytes > opts->max_text_bytes) {
            tl_error_set(err, "%s: %llu bytes, past %llu bytes, " TL_SOURCE_TOO_LARGE, path,
                         (unsigned long long)es->file_bytes, (unsigned long long)opts->max_text_bytes);
            tl_source_close(src);
            return -1;
        }
        tl_source_set_max_bytes(src, opts->max_text_bytes);
    }
    int nparts = opts && opts->parts ? opts->parts
                 : (es->file_bytes >= (es->gzip ? GZ_PARALLEL_MIN_BYTES : PARALLEL_MIN_BYTES) ? cores() : 1);
    if (nparts > MAX_PARTS) nparts = MAX_PARTS;
    int rc;
    if (es->gzip && nparts > 1) {
        uint64_t dur_sum = 0;
        rc = scan_gzip_segments(path, es, opts, err, src, nparts, &dur_sum, sx);
        if (rc == 0) {
            es->args_off[0] = 0;
            rc = check_dur_sum(path, es, dur_sum, err);
        }
    } else if (nparts > 1) {
        uint64_t dur_sum = 0;
        rc = scan_parallel(path, es, opts, err, src, nparts, &dur_sum, sx);
        if (rc == 0) {
            es->args_off[0] = 0;
            rc = check_dur_sum(path, es, dur_sum, err);
        }
    } else {
        scanner s;
        scanner_setup(&s, path, es, opts, err, sx);
        s.src = src;
        rc = run_scanner(&s);
        if (rc == 0 && stages_wanted()) stage_line(&s, 0, 0, s.base + s.len, es->n);
        rc = finish(&s, rc);
    }
    tl_source_close(src);
    if (rc == 0) tl_es_trim(es);
    return rc;
}

int tl_scan_buffer(const char *name, const char *data, size_t len, tl_event_store *es, tl_error *err)
{
    return tl_scan_buffer_opts(name, data, len, NULL, es, err);
}

int tl_scan_buffer_opts(const char *name, const char *data, size_t len, const tl_scan_opts *opts,
                        tl_event_store *es, tl_error *err)
{
    scanner s;
    const tl_scan_opts whole = {.buffer_bytes = len ? len : 1, /* one buffer holds it all */
                                .max_value_bytes = opts ? opts->max_value_bytes : 0,
                                .skip_host_args = opts && opts->skip_host_args};
    tl_sx_path sx;
    if (resolve_sx(opts, &sx, err) != 0) return -1;
    scanner_setup(&s, name, es, &whole, err, sx);
    memcpy(s.buf, data, len);
    memset(s.buf + len, 0, PAD);
    s.len = len;
    s.eof = 1;
    es->file_bytes = len;
    return finish(&s, scan(&s) == 0 ? 0 : -1);
}
