/* perf_util.c — the helpers the perf model families share (perf_util.h). */
#include "perf_util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ===================================================================== */
/* args lookups                                                           */
/* ===================================================================== */

const tl_pv *tl_pv_dict_get(const tl_pv *dict, const char *key)
{
    if (!dict || dict->kind != TL_PV_DICT) return NULL;
    for (size_t i = dict->n & ~(size_t)1; i >= 2; i -= 2) { /* the last one wins */
        const char *k = tl_pv_cstr(&dict->items[i - 2]);
        if (k && !strcmp(k, key)) return &dict->items[i - 1];
    }
    return NULL;
}

const tl_pv *tl_pe_arg(const tl_perf_event *ev, const char *key) { return tl_pv_dict_get(ev->args, key); }

const tl_pv *tl_pv_item(const tl_pv *list, long i)
{
    if (!tl_pv_is_list(list)) return NULL;
    long n = (long)list->n;
    if (i < 0) i += n;
    if (i < 0 || i >= n) return NULL;
    return &list->items[i];
}

int tl_pv_int_text(const tl_pv *v, int64_t *out)
{
    if (tl_pv_int(v, out)) return 1;
    return tl_py_int(tl_pv_cstr(v), out);
}

int tl_pv_is_int64_list(const tl_pv *v)
{
    if (!tl_pv_is_list(v)) return 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->items[i].kind != TL_PV_INT) return 0;
    return 1;
}

/* ===================================================================== */
/* strict accessors                                                       */
/* ===================================================================== */

void tl_px_init(tl_px *p, const tl_perf_event *ev, tl_perf_result *r)
{
    memset(p, 0, sizeof *p);
    p->ev = ev;
    p->r = r;
}

int tl_px_fail(tl_px *p, const char *fmt, ...)
{
    if (p->bad) return 0;
    p->bad = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    return 0;
}

int tl_px_done(tl_px *p) { return p->bad ? tl_perf_error(p->r, "%s", p->why) : TL_PERF_OK; }

const tl_pv *tl_px_shape(tl_px *p, long i)
{
    if (p->bad) return NULL;
    const tl_pv *v = tl_pv_item(p->ev->dims, i);
    if (!tl_pv_is_list(v)) {
        tl_px_fail(p, "Input Dims[%ld] is missing", i);
        return NULL;
    }
    return v;
}

int64_t tl_px_dim(tl_px *p, long i, long j)
{
    const tl_pv *s = tl_px_shape(p, i);
    int64_t v = 0;
    if (s && !tl_pv_int(tl_pv_item(s, j), &v)) tl_px_fail(p, "Input Dims[%ld][%ld] is missing", i, j);
    return v;
}

void tl_px_unpack(tl_px *p, long i, int64_t *out, size_t n)
{
    memset(out, 0, n * sizeof *out);
    const tl_pv *s = tl_px_shape(p, i);
    if (!s) return;
    if (s->n != n) {
        tl_px_fail(p, "Input Dims[%ld] has %zu entries, expected %zu", i, s->n, n);
        return;
    }
    for (size_t j = 0; j < n; j++)
        if (!tl_pv_int(&s->items[j], &out[j])) tl_px_fail(p, "Input Dims[%ld][%zu] is not an int", i, j);
}

/* An entry of a per-argument list: a failure when the list or index is
 * missing; JSON null reads as None (NULL) without failing. */
static const char *text_at(tl_px *p, const tl_pv *list, long i, const char *what)
{
    if (p->bad) return NULL;
    const tl_pv *v = tl_pv_item(list, i);
    if (!v) {
        tl_px_fail(p, "%s[%ld] is missing", what, i);
        return NULL;
    }
    return tl_pv_cstr(v);
}

const char *tl_px_type(tl_px *p, long i) { return text_at(p, p->ev->types, i, "Input type"); }

const char *tl_px_concrete(tl_px *p, long i) { return text_at(p, p->ev->concrete, i, "Concrete Inputs"); }

const tl_pv *tl_px_stride(tl_px *p, long i) { return tl_pv_item(p->ev->strides, i); }

const char *tl_px_type_opt(const tl_perf_event *ev, long i)
{
    const char *s = tl_pv_cstr(tl_pv_item(ev->types, i));
    return s && *s ? s : NULL;
}

const tl_pv *tl_px_shape_opt(const tl_perf_event *ev, long i)
{
    const tl_pv *s = tl_pv_item(ev->dims, i);
    return tl_pv_is_list(s) && s->n ? s : NULL;
}

int64_t tl_px_concrete_int(tl_px *p, long i)
{
    const char *c = tl_px_concrete(p, i);
    int64_t v = 0;
    if (!p->bad && !tl_py_int(c, &v)) tl_px_fail(p, "Concrete Inputs[%ld] is not an int", i);
    return v;
}

/* ===================================================================== */
/* Python texts                                                           */
/* ===================================================================== */

int tl_py_int(const char *s, int64_t *out)
{
    if (!s) return 0;
    while (isspace((unsigned char)*s)) s++;
    int neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    if (!isdigit((unsigned char)*s)) return 0;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s == '_') {
            if (!isdigit((unsigned char)s[1])) return 0;
            continue;
        }
        if (!isdigit((unsigned char)*s)) break;
        if (v > (UINT64_C(1) << 63) / 10) return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    while (isspace((unsigned char)*s)) s++;
    if (*s || v > (UINT64_C(1) << 63) - (neg ? 0 : 1)) return 0;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

/* Copies s without surrounding ASCII whitespace into buf; 0 if too long. */
static int trimmed(const char *s, char *buf, size_t cap)
{
    if (!s) return 0;
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    if (n >= cap) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    return 1;
}

/* Removes '_' between two digits (Python numeric strings); 0 on a misplaced one. */
static int drop_underscores(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (*p != '_') {
            *o++ = *p;
            continue;
        }
        if (p == s || !isdigit((unsigned char)p[-1]) || !isdigit((unsigned char)p[1])) return 0;
    }
    *o = 0;
    return 1;
}

/* digits [. digits] [e [sign] digits], at least one mantissa digit. */
static int decimal_syntax(const char *p)
{
    int digits = 0;
    while (isdigit((unsigned char)*p)) p++, digits++;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!isdigit((unsigned char)*p)) return 0;
        while (isdigit((unsigned char)*p)) p++;
    }
    return *p == 0;
}

int tl_py_float(const char *s, double *out)
{
    char buf[128];
    if (!trimmed(s, buf, sizeof buf) || !drop_underscores(buf)) return 0;
    const char *p = buf + (buf[0] == '+' || buf[0] == '-');
    double sign = buf[0] == '-' ? -1.0 : 1.0;
    if (!strcasecmp(p, "inf") || !strcasecmp(p, "infinity")) {
        *out = sign * INFINITY;
        return 1;
    }
    if (!strcasecmp(p, "nan")) {
        *out = NAN;
        return 1;
    }
    if (!decimal_syntax(p)) return 0;
    *out = strtod(buf, NULL);
    return 1;
}

/* Inside of a bracketed literal: is there anything but whitespace? */
static int has_content(const char *open, size_t len)
{
    for (size_t i = 1; i + 1 < len; i++)
        if (!isspace((unsigned char)open[i])) return 1;
    return 0;
}

int tl_py_truth(const char *s, int *truth)
{
    char buf[256];
    if (!trimmed(s, buf, sizeof buf) || !*buf) return 0;
    size_t n = strlen(buf);
    if (!strcmp(buf, "True")) return *truth = 1, 1;
    if (!strcmp(buf, "False") || !strcmp(buf, "None")) return *truth = 0, 1;
    char o = buf[0], c = buf[n - 1];
    if (n >= 2 && ((o == '[' && c == ']') || (o == '(' && c == ')') || (o == '{' && c == '}'))) {
        *truth = has_content(buf, n);
        if (o == '(' && *truth) { /* "(x)" is x itself: a parenthesised scalar */
            buf[n - 1] = 0;
            if (!strchr(buf + 1, ',')) return tl_py_truth(buf + 1, truth);
        }
        return 1;
    }
    if (n >= 2 && (o == '\'' || o == '"') && c == o) return *truth = n > 2, 1;
    const char *p = buf + (o == '+' || o == '-');
    if (!isdigit((unsigned char)*p) && *p != '.') return 0;
    double v;
    if (!tl_py_float(buf, &v)) return 0;
    *truth = v != 0;
    return 1;
}

int tl_py_int_tuple(const char *s, int64_t *v, size_t max, size_t *n)
{
    char outer[512], buf[512];
    *n = 0;
    if (!trimmed(s, outer, sizeof outer)) return 0;
    char *p = outer, *end = outer + strlen(outer);
    if (p < end && (*p == '[' || *p == '(')) p++;
    if (end > p && (end[-1] == ']' || end[-1] == ')')) *--end = 0;
    if (!trimmed(p, buf, sizeof buf)) return 0;
    if (!*buf) return 1;
    for (char *piece = buf;;) {
        char *comma = strchr(piece, ',');
        if (comma) *comma = 0;
        char tmp[64];
        int trailing = !comma && *n > 0 && trimmed(piece, tmp, sizeof tmp) && !*tmp;
        if (!trailing) { /* "(2,)": a trailing comma ends the tuple */
            if (*n >= max || !tl_py_int(piece, &v[*n])) return 0;
            (*n)++;
        }
        if (!comma) return 1;
        piece = comma + 1;
    }
}

/* ===================================================================== */
/* Python literals -> JSON text -> tl_pv                                  */
/* ===================================================================== */

/* A strict recursive-descent reader of the literal subset Concrete Inputs
 * hold (numbers, strings, True/False/None, lists, tuples). It writes JSON
 * text that tl_pv_parse then turns into values, so the output must be
 * well-formed: every failure aborts the whole parse. */
typedef struct lit_reader {
    const char *p;
    tl_sbuf *out;
} lit_reader;

enum { LIT_MAX_DEPTH = 64 };

static void lit_ws(lit_reader *l)
{
    while (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r') l->p++;
}

static int lit_value(lit_reader *l, int depth);

static int lit_word(lit_reader *l, const char *word, const char *json)
{
    size_t n = strlen(word);
    if (strncmp(l->p, word, n) != 0) return 0;
    char next = l->p[n];
    if (isalnum((unsigned char)next) || next == '_') return 0;
    l->p += n;
    tl_sb_puts(l->out, json);
    return 1;
}

/* Decimal digits with Python's single '_' separators, copied to buf. */
static const char *lit_digits(const char *s, char *buf, size_t *n, size_t cap, int *any)
{
    while (isdigit((unsigned char)*s)) {
        if (*n + 2 >= cap) return NULL;
        buf[(*n)++] = *s++;
        *any = 1;
        if (*s == '_' && isdigit((unsigned char)s[1])) s++;
    }
    return s;
}

/* [+-] int | float: "12", "-1", "0.", ".5", "1e-05", "1_000". */
static int lit_number(lit_reader *l)
{
    const char *s = l->p;
    int neg = 0;
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        s++;
        while (*s == ' ' || *s == '\t') s++;
    }
    char num[400];
    size_t n = 0;
    int is_float = 0, any = 0;
    if (!(s = lit_digits(s, num, &n, sizeof num, &any))) return 0;
    size_t int_len = n;
    if (*s == '.') {
        is_float = 1;
        num[n++] = '.';
        if (!(s = lit_digits(s + 1, num, &n, sizeof num, &any))) return 0;
    }
    if (!any) return 0;
    if (*s == 'e' || *s == 'E') {
        int exp_digits = 0;
        num[n++] = 'e';
        s++;
        if (*s == '+' || *s == '-') num[n++] = *s++;
        if (!(s = lit_digits(s, num, &n, sizeof num, &exp_digits)) || !exp_digits) return 0;
        is_float = 1;
    }
    num[n] = 0;
    if (isalnum((unsigned char)*s) || *s == '_' || *s == '.') return 0; /* 0x10, 1j, 1.2.3 */
    l->p = s;
    if (!is_float) {
        const char *d = num;
        while (int_len > 1 && *d == '0') d++, int_len--;
        if (*d != '0' && d != num) return 0; /* "007": Python has no leading zeros */
        if (neg) tl_sb_putc(l->out, '-');
        tl_sb_putn(l->out, d, int_len);
        return 1;
    }
    double v = strtod(num, NULL);
    if (neg) v = -v;
    if (isinf(v)) {
        tl_sb_puts(l->out, v > 0 ? "Infinity" : "-Infinity");
        return 1;
    }
    char text[40];
    snprintf(text, sizeof text, "%.17g", v);
    tl_sb_puts(l->out, text);
    if (!strpbrk(text, ".eE")) tl_sb_puts(l->out, ".0"); /* stays a float */
    return 1;
}

/* '...' or "..." (adjacent literals concatenate, as in Python). */
static int lit_string(lit_reader *l)
{
    char q = *l->p++;
    tl_sb_putc(l->out, '"');
    for (;;) {
        char c = *l->p++;
        if (!c || c == '\n') return 0;
        if (c == q) {
            const char *next = l->p;
            while (*next == ' ' || *next == '\t') next++;
            if (*next != '\'' && *next != '"') break;
            q = *next;
            l->p = next + 1;
            continue;
        }
        if (c == '\\') {
            char e = *l->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '\\': case '\'': case '"': c = e; break;
            default: return 0; /* \x, \u, \N{...}: not needed here */
            }
        }
        if (c == '"' || c == '\\') {
            tl_sb_putc(l->out, '\\');
            tl_sb_putc(l->out, c);
        } else if ((unsigned char)c < 0x20) {
            tl_sb_printf(l->out, "\\u%04x", (unsigned char)c);
        } else {
            tl_sb_putc(l->out, c);
        }
    }
    tl_sb_putc(l->out, '"');
    return 1;
}

/* Comma-separated items up to `close` ('\0': a bare top-level tuple such
 * as "1, 2"), written as a JSON list. With tuple_rule, one item and no
 * comma is that item itself: "(x)" and "x" are x. */
static int lit_items(lit_reader *l, int depth, char close, int tuple_rule)
{
    size_t mark = l->out->len;
    tl_sb_putc(l->out, '[');
    size_t n = 0;
    int comma = 0;
    for (;;) {
        lit_ws(l);
        if (*l->p == close) break;
        if (n && !comma) return 0;
        if (n) tl_sb_putc(l->out, ',');
        if (!lit_value(l, depth + 1)) return 0;
        n++;
        lit_ws(l);
        comma = *l->p == ',';
        if (comma) l->p++;
        else if (*l->p != close) return 0;
    }
    if (!close && !n) return 0; /* empty text */
    if (tuple_rule && n == 1 && !comma) {
        memmove(l->out->s + mark, l->out->s + mark + 1, l->out->len - mark - 1);
        l->out->len--;
        l->out->s[l->out->len] = 0;
        return 1;
    }
    tl_sb_putc(l->out, ']');
    return 1;
}

static int lit_sequence(lit_reader *l, int depth)
{
    char close = *l->p == '[' ? ']' : ')';
    l->p++;
    if (!lit_items(l, depth, close, close == ')')) return 0;
    l->p++;
    return 1;
}

static int lit_value(lit_reader *l, int depth)
{
    if (depth > LIT_MAX_DEPTH) return 0;
    lit_ws(l);
    char c = *l->p;
    if (c == '[' || c == '(') return lit_sequence(l, depth);
    if (c == '\'' || c == '"') return lit_string(l);
    if (c == 'T') return lit_word(l, "True", "true");
    if (c == 'F') return lit_word(l, "False", "false");
    if (c == 'N') return lit_word(l, "None", "null");
    return lit_number(l);
}

const tl_pv *tl_py_literal(tl_perf_result *r, const char *text)
{
    if (!text) return NULL;
    tl_sbuf json;
    tl_sb_init(&json);
    lit_reader l = {text, &json};
    int ok = lit_items(&l, 0, '\0', 1);
    const tl_pv *v = ok ? tl_pv_parse(r->arena, json.s) : NULL;
    tl_sb_free(&json);
    return v;
}

const tl_pv *tl_pe_literal(tl_perf_result *r, const tl_perf_event *ev, size_t i)
{
    return tl_py_literal(r, tl_pe_concrete(ev, i));
}

int tl_py_is_int(const tl_pv *v) { return v && (v->kind == TL_PV_INT || v->kind == TL_PV_BIGINT); }

int tl_py_is_int_list(const tl_pv *v)
{
    if (!tl_pv_is_list(v)) return 0;
    for (size_t i = 0; i < v->n; i++)
        if (!tl_py_is_int(&v->items[i])) return 0;
    return 1;
}

int tl_py_literal_truth(tl_perf_result *r, const char *text)
{
    if (!text) return 0;
    const tl_pv *v = tl_py_literal(r, text);
    return v ? tl_pv_nonempty(v) : text[0] != 0;
}

int tl_py_literal_int(tl_perf_result *r, const char *text, int64_t *out)
{
    const tl_pv *v = tl_py_literal(r, text);
    if (!v || v->kind != TL_PV_INT) return 0;
    *out = v->i;
    return 1;
}

int tl_py_literal_bools(tl_perf_result *r, const char *text, int *out, size_t max, size_t *n)
{
    const tl_pv *v = tl_py_literal(r, text);
    if (!tl_pv_is_list(v)) return 0;
    *n = v->n;
    for (size_t i = 0; i < v->n && i < max; i++) out[i] = tl_pv_nonempty(&v->items[i]);
    return 1;
}

/* ===================================================================== */
/* Python numbers                                                         */
/* ===================================================================== */

int64_t tl_floor_div(int64_t a, int64_t b)
{
    if (b == -1) return (int64_t)(0 - (uint64_t)a); /* INT64_MIN // -1 wraps instead of trapping (SIGFPE) */
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t tl_ceil_div(int64_t a, int64_t b) { return -tl_floor_div(-a, b); }

static const __int128 PN_MAX = (__int128)(((unsigned __int128)1 << 127) - 1);

tl_pn tl_pn_int(int64_t v) { return (tl_pn){.i = v}; }
tl_pn tl_pn_float(double v) { return (tl_pn){.f = v, .is_f = 1}; }
double tl_pn_double(tl_pn a) { return a.is_f ? a.f : (double)a.i; }

static __int128 abs128(__int128 a) { return a < 0 ? -a : a; } /* |a| <= PN_MAX: see below */

tl_pn tl_pn_mul(tl_pn a, tl_pn b)
{
    /* ints stay within (-PN_MAX, PN_MAX], so abs128 cannot overflow */
    if (!a.is_f && !b.is_f && (b.i == 0 || abs128(a.i) <= PN_MAX / abs128(b.i))) return (tl_pn){.i = a.i * b.i};
    return tl_pn_float(tl_pn_double(a) * tl_pn_double(b));
}

tl_pn tl_pn_add(tl_pn a, tl_pn b)
{
    if (!a.is_f && !b.is_f && (b.i >= 0 ? a.i <= PN_MAX - b.i : a.i >= -PN_MAX - b.i)) return (tl_pn){.i = a.i + b.i};
    return tl_pn_float(tl_pn_double(a) + tl_pn_double(b));
}

tl_pn tl_pn_sub(tl_pn a, tl_pn b)
{
    if (!b.is_f) b.i = -b.i; /* b.i > -PN_MAX always holds */
    else b.f = -b.f;
    return tl_pn_add(a, b);
}

int tl_pn_eq(tl_pn a, tl_pn b) { return a.is_f || b.is_f ? tl_pn_double(a) == tl_pn_double(b) : a.i == b.i; }

int tl_pn_floordiv(tl_pn a, tl_pn b, tl_pn *out)
{
    if (!a.is_f && !b.is_f) {
        if (b.i == 0) return 0;
        __int128 q = a.i / b.i;
        if (a.i % b.i != 0 && (a.i < 0) != (b.i < 0)) q--;
        *out = (tl_pn){.i = q};
        return 1;
    }
    double x = tl_pn_double(a), y = tl_pn_double(b), fl;
    if (y == 0) return 0;
    double mod = fmod(x, y), div = (x - mod) / y; /* CPython's float floor division */
    if (mod != 0 && (y < 0) != (mod < 0)) div -= 1.0;
    if (div != 0) {
        fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
    } else {
        fl = copysign(0.0, x / y);
    }
    *out = tl_pn_float(fl);
    return 1;
}

int tl_pn_int64(tl_pn a, int64_t *out)
{
    if (a.is_f || a.i > INT64_MAX || a.i < INT64_MIN) return 0;
    *out = (int64_t)a.i;
    return 1;
}

/* ===================================================================== */
/* shapes and results                                                     */
/* ===================================================================== */

int tl_shape_size_ok(const tl_pv *v) { return v && v->kind == TL_PV_INT && v->i >= 0 && v->i <= TL_SHAPE_MAX_DIM; }

int tl_shape_numel(const tl_pv *shape, int64_t *out)
{
    if (!tl_pv_is_list(shape)) return 0;
    int64_t p = 1;
    for (size_t i = 0; i < shape->n; i++) {
        const tl_pv *d = &shape->items[i];
        if (!tl_shape_size_ok(d) || __builtin_mul_overflow(p, d->i, &p)) return 0;
    }
    *out = p;
    return 1;
}

int tl_shape_dim(const tl_pv *shape, long i, int64_t *out)
{
    size_t n = tl_pv_len(shape);
    if (i < 0) i += (long)n;
    if (i < 0 || (size_t)i >= n || !tl_shape_size_ok(&shape->items[i])) return 0;
    *out = shape->items[i].i;
    return 1;
}

int tl_dtype_bpe_or(const char *dtype, int dflt)
{
    int b = tl_dtype_bpe(dtype);
    return b ? b : dflt;
}

void tl_perf_set_bytes(tl_perf_result *r, double bytes)
{
    r->has_bytes = 1;
    r->bytes = bytes;
}

int tl_perf_ok(tl_perf_result *r, const char *maf, const char *dtype)
{
    r->maf = maf;
    r->precision = tl_dtype_precision(dtype);
    return r->status = TL_PERF_OK;
}

void tl_pm_unary(tl_perf_result *r, const tl_pv *shape, const char *din, const char *dout, const tl_pv *stride_in,
                 const tl_pv *stride_out)
{
    const char *dtypes[2] = {din, dout};
    tl_pm_pv(r, "op_shape", shape);
    tl_pm_str_tuple(r, "dtype_in_out", dtypes, 2);
    tl_pm_pv(r, "stride_input", stride_in);
    tl_pm_pv(r, "stride_output", stride_out);
}
