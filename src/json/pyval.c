#include "pyval.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "json_text.h"
#include "../util/vec.h"

typedef struct block {
    struct block *next;
    size_t used, cap;
    char data[];
} block;

struct tl_pv_arena {
    block *head;
};

tl_pv_arena *tl_pv_arena_new(void) { return tl_xcalloc(1, sizeof(tl_pv_arena)); }

void tl_pv_arena_free(tl_pv_arena *a)
{
    if (!a) return;
    for (block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(a);
}

static void *alloc(tl_pv_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->used + n > a->head->cap) {
        size_t cap = n > 16384 ? n : 16384;
        block *b = tl_xmalloc(sizeof *b + cap);
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

/* Counts the elements of the container at p (at '[' or '{'). */
static size_t count_items(const char *p)
{
    p = tl_json_ws(p + 1);
    if (*p == ']' || *p == '}') return 0;
    size_t n = 0;
    for (;;) {
        p = tl_json_skip(p);
        n++;
        p = tl_json_ws(p);
        if (*p == ':') continue; /* a key: its value follows */
        if (*p != ',') break;
        p = tl_json_ws(p + 1);
    }
    return n;
}

static const char *parse(tl_pv_arena *a, const char *p, tl_pv *out, int depth)
{
    memset(out, 0, sizeof *out);
    p = tl_json_ws(p);
    if (*p == '"') {
        size_t span = tl_json_string_span(p + 1);
        char *s = alloc(a, span + 4);
        const char *after;
        out->n = tl_json_decode_string(p + 1, s, &after);
        s[out->n] = 0;
        out->kind = TL_PV_STR;
        out->s = s;
        return after;
    }
    if (*p == '[' || *p == '{') {
        int dict = *p == '{';
        if (depth > 200) { /* absurd nesting: keep the text */
            const char *end = tl_json_skip(p);
            char *s = alloc(a, (size_t)(end - p) + 1);
            memcpy(s, p, (size_t)(end - p));
            s[end - p] = 0;
            out->kind = TL_PV_STR;
            out->s = s;
            out->n = (size_t)(end - p);
            return end;
        }
        size_t n = count_items(p);
        out->kind = dict ? TL_PV_DICT : TL_PV_LIST;
        out->n = n;
        out->items = n ? alloc(a, n * sizeof(tl_pv)) : NULL;
        p = tl_json_ws(p + 1);
        for (size_t i = 0; i < n; i++) {
            p = parse(a, p, &out->items[i], depth + 1);
            p = tl_json_ws(p);
            if (*p == ',' || *p == ':') p = tl_json_ws(p + 1);
        }
        return p + 1;
    }
    if (!strncmp(p, "true", 4)) {
        out->kind = TL_PV_BOOL;
        out->i = 1;
        return p + 4;
    }
    if (!strncmp(p, "false", 5)) {
        out->kind = TL_PV_BOOL;
        return p + 5;
    }
    if (!strncmp(p, "null", 4)) return p + 4;
    const char *s = p;
    while (*p && !strchr(",]}: \t\r\n", *p)) p++;
    size_t len = (size_t)(p - s);
    char tmp[64];
    if (len < sizeof tmp) {
        memcpy(tmp, s, len);
        tmp[len] = 0;
        if (!strpbrk(tmp, ".eEIN")) {
            char *end;
            errno = 0;
            long long v = strtoll(tmp, &end, 10);
            if (*end == 0 && errno != ERANGE) {
                out->kind = TL_PV_INT;
                out->i = v;
                return p;
            }
            char *big = alloc(a, len + 1);
            memcpy(big, tmp, len + 1);
            out->kind = TL_PV_BIGINT;
            out->s = big;
            out->n = len;
            return p;
        }
        out->kind = TL_PV_FLOAT;
        out->f = strcmp(tmp, "NaN") == 0 ? 0.0 / 0.0 : strtod(tmp, NULL);
        return p;
    }
    out->kind = TL_PV_FLOAT;
    out->f = strtod(s, NULL);
    return p;
}

const tl_pv *tl_pv_parse(tl_pv_arena *a, const char *json)
{
    tl_pv *v = alloc(a, sizeof *v);
    parse(a, json, v, 0);
    return v;
}

tl_pv *tl_pv_new_list(tl_pv_arena *a, size_t n)
{
    tl_pv *v = alloc(a, sizeof *v);
    memset(v, 0, sizeof *v);
    v->kind = TL_PV_LIST;
    v->n = n;
    if (n) {
        v->items = alloc(a, n * sizeof *v->items);
        memset(v->items, 0, n * sizeof *v->items);
    }
    return v;
}

const tl_pv *tl_pv_int_list(tl_pv_arena *a, const int64_t *v, size_t n)
{
    tl_pv *l = tl_pv_new_list(a, n);
    for (size_t i = 0; i < n; i++) l->items[i].kind = TL_PV_INT, l->items[i].i = v[i];
    return l;
}

const tl_pv *tl_pv_at(const tl_pv *v, size_t i)
{
    if (!v || v->kind != TL_PV_LIST || i >= v->n) return NULL;
    return &v->items[i];
}

size_t tl_pv_len(const tl_pv *v) { return v && v->kind == TL_PV_LIST ? v->n : 0; }

int tl_pv_is_list(const tl_pv *v) { return v && v->kind == TL_PV_LIST; }

int tl_pv_nonempty(const tl_pv *v)
{
    if (!v) return 0;
    switch (v->kind) {
    case TL_PV_NULL: return 0;
    case TL_PV_BOOL:
    case TL_PV_INT: return v->i != 0;
    case TL_PV_FLOAT: return v->f != 0;
    case TL_PV_STR:
    case TL_PV_LIST:
    case TL_PV_DICT: return v->n != 0;
    default: return 1;
    }
}

int64_t tl_pv_prod(const tl_pv *shape)
{
    int64_t p = 1;
    for (size_t i = 0; i < tl_pv_len(shape); i++) {
        int64_t x;
        if (tl_pv_int(&shape->items[i], &x)) p *= x;
    }
    return p;
}

int tl_pv_int(const tl_pv *v, int64_t *out)
{
    if (!v || (v->kind != TL_PV_INT && v->kind != TL_PV_BOOL)) return 0;
    *out = v->i;
    return 1;
}

const char *tl_pv_cstr(const tl_pv *v) { return v && v->kind == TL_PV_STR ? v->s : NULL; }

static void render(tl_sbuf *b, const tl_pv *v, int tuple)
{
    if (!v) {
        tl_sb_puts(b, "None");
        return;
    }
    switch (v->kind) {
    case TL_PV_NULL: tl_sb_puts(b, "None"); break;
    case TL_PV_BOOL: tl_sb_puts(b, v->i ? "True" : "False"); break;
    case TL_PV_INT: tl_sb_printf(b, "%lld", (long long)v->i); break;
    case TL_PV_BIGINT: tl_sb_puts(b, v->s); break;
    case TL_PV_FLOAT: tl_sb_pyfloat(b, v->f); break;
    case TL_PV_STR: tl_sb_pystr(b, v->s, v->n); break;
    case TL_PV_LIST: {
        int paren = tuple && !v->pylist;
        tl_sb_putc(b, paren ? '(' : '[');
        for (size_t i = 0; i < v->n; i++) {
            if (i) tl_sb_puts(b, ", ");
            render(b, &v->items[i], tuple);
        }
        if (paren && v->n == 1) tl_sb_putc(b, ',');
        tl_sb_putc(b, paren ? ')' : ']');
        break;
    }
    case TL_PV_DICT:
        tl_sb_putc(b, '{');
        for (size_t i = 0; i + 1 < v->n; i += 2) {
            if (i) tl_sb_puts(b, ", ");
            render(b, &v->items[i], tuple);
            tl_sb_puts(b, ": ");
            render(b, &v->items[i + 1], tuple);
        }
        tl_sb_putc(b, '}');
        break;
    }
}

void tl_pv_str_tuple(tl_sbuf *b, const tl_pv *v) { render(b, v, 1); }
void tl_pv_str_list(tl_sbuf *b, const tl_pv *v) { render(b, v, 0); }

void tl_pv_copy_marks(tl_pv *dst, const tl_pv *src)
{
    if (!dst || !src || dst->kind != src->kind) return;
    if (dst->kind != TL_PV_LIST && dst->kind != TL_PV_DICT) return;
    if (dst->n != src->n) return;
    dst->pylist = src->pylist;
    for (size_t i = 0; i < dst->n; i++) tl_pv_copy_marks(&dst->items[i], &src->items[i]);
}

void tl_pv_to_json(tl_sbuf *b, const tl_pv *v)
{
    if (!v) {
        tl_sb_puts(b, "null");
        return;
    }
    switch (v->kind) {
    case TL_PV_NULL: tl_sb_puts(b, "null"); break;
    case TL_PV_BOOL: tl_sb_puts(b, v->i ? "true" : "false"); break;
    case TL_PV_INT: tl_sb_printf(b, "%lld", (long long)v->i); break;
    case TL_PV_BIGINT: tl_sb_puts(b, v->s); break;
    case TL_PV_FLOAT:
        if (v->f != v->f) tl_sb_puts(b, "NaN");
        else if (v->f > 1.7976931348623157e308) tl_sb_puts(b, "Infinity");
        else if (v->f < -1.7976931348623157e308) tl_sb_puts(b, "-Infinity");
        else tl_sb_printf(b, "%.17g", v->f);
        break;
    case TL_PV_STR:
        tl_sb_putc(b, '"');
        for (size_t i = 0; i < v->n; i++) {
            unsigned char c = (unsigned char)v->s[i];
            if (c == '"' || c == '\\') {
                tl_sb_putc(b, '\\');
                tl_sb_putc(b, (char)c);
            } else if (c < 0x20) {
                tl_sb_printf(b, "\\u%04x", c);
            } else {
                tl_sb_putc(b, (char)c);
            }
        }
        tl_sb_putc(b, '"');
        break;
    case TL_PV_LIST:
    case TL_PV_DICT:
        tl_sb_putc(b, v->kind == TL_PV_LIST ? '[' : '{');
        for (size_t i = 0; i < v->n; i++) {
            if (i) tl_sb_putc(b, v->kind == TL_PV_DICT && i % 2 ? ':' : ',');
            tl_pv_to_json(b, &v->items[i]);
        }
        tl_sb_putc(b, v->kind == TL_PV_LIST ? ']' : '}');
        break;
    }
}
