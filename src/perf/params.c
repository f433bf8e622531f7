/* params.c — building a perf result: param values, errors, event accessors. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "perf_model.h"

void tl_perf_result_init(tl_perf_result *r)
{
    memset(r, 0, sizeof *r);
    r->arena = tl_pv_arena_new();
}

void tl_perf_result_free(tl_perf_result *r)
{
    tl_pv_arena_free(r->arena);
    memset(r, 0, sizeof *r);
}

int tl_perf_run(const tl_perf_class *c, const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    if (bwd && !c->has_bwd) return tl_perf_not_implemented(r);
    return c->fn(ev, bwd, r);
}

/* A tl_pv node inside the result's arena (parsed from a tiny JSON text is
 * the simplest way to get arena storage). */
static tl_pv *slot(tl_perf_result *r, const char *key)
{
    tl_perf_param *p = tl_pm_find(r, key);
    if (!p) {
        if (r->n_params >= TL_PERF_MAX_PARAMS) return NULL;
        p = &r->params[r->n_params++];
        p->key = key;
    }
    memset(&p->value, 0, sizeof p->value);
    return &p->value;
}

tl_perf_param *tl_pm_find(tl_perf_result *r, const char *key)
{
    for (int i = 0; i < r->n_params; i++)
        if (!strcmp(r->params[i].key, key)) return &r->params[i];
    return NULL;
}

void tl_pm_int(tl_perf_result *r, const char *key, int64_t v)
{
    tl_pv *s = slot(r, key);
    if (s) s->kind = TL_PV_INT, s->i = v;
}

void tl_pm_bool(tl_perf_result *r, const char *key, int v)
{
    tl_pv *s = slot(r, key);
    if (s) s->kind = TL_PV_BOOL, s->i = v != 0;
}

void tl_pm_float(tl_perf_result *r, const char *key, double v)
{
    tl_pv *s = slot(r, key);
    if (s) s->kind = TL_PV_FLOAT, s->f = v;
}

void tl_pm_none(tl_perf_result *r, const char *key) { slot(r, key); }

/* Copies JSON-ish text for a string into the arena via the parser. */
static const tl_pv *arena_string(tl_perf_result *r, const char *str)
{
    tl_sbuf b;
    tl_sb_init(&b);
    tl_sb_putc(&b, '"');
    for (const char *c = str; *c; c++) {
        if (*c == '"' || *c == '\\') tl_sb_putc(&b, '\\');
        tl_sb_putc(&b, *c);
    }
    tl_sb_putc(&b, '"');
    const tl_pv *v = tl_pv_parse(r->arena, b.s);
    tl_sb_free(&b);
    return v;
}

void tl_pm_str(tl_perf_result *r, const char *key, const char *str)
{
    tl_pv *s = slot(r, key);
    if (s && str) *s = *arena_string(r, str);
}

void tl_pm_pv(tl_perf_result *r, const char *key, const tl_pv *v)
{
    tl_pv *s = slot(r, key);
    if (!s || !v) return;
    tl_sbuf j; /* deep copy into the arena through its JSON text */
    tl_sb_init(&j);
    tl_pv_to_json(&j, v);
    *s = *tl_pv_parse(r->arena, j.s);
    tl_sb_free(&j);
    tl_pv_copy_marks(s, v);
}

void tl_pm_pylist(tl_perf_result *r, const char *key, const tl_pv *v)
{
    tl_pm_pv(r, key, v);
    tl_perf_param *p = tl_pm_find(r, key);
    if (p && p->value.kind == TL_PV_LIST) p->value.pylist = 1;
}

void tl_pm_str_tuple(tl_perf_result *r, const char *key, const char *const *items, size_t n)
{
    tl_pv *s = slot(r, key);
    if (!s) return;
    *s = *tl_pv_new_list(r->arena, n);
    for (size_t i = 0; i < n; i++)
        if (items[i]) s->items[i] = *arena_string(r, items[i]);
}

void tl_pm_int_tuple(tl_perf_result *r, const char *key, const int64_t *items, size_t n)
{
    tl_pv *s = slot(r, key);
    if (s) *s = *tl_pv_int_list(r->arena, items, n);
}

void tl_pm_bool_tuple(tl_perf_result *r, const char *key, const int *items, size_t n)
{
    tl_pv *s = slot(r, key);
    if (!s) return;
    *s = *tl_pv_new_list(r->arena, n);
    for (size_t i = 0; i < n; i++) s->items[i].kind = TL_PV_BOOL, s->items[i].i = items[i] != 0;
}

int tl_perf_error(tl_perf_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    r->status = TL_PERF_ERROR;
    return r->status;
}

int tl_perf_not_implemented(tl_perf_result *r)
{
    r->status = TL_PERF_NOT_IMPLEMENTED;
    return r->status;
}

const char *tl_pe_type(const tl_perf_event *e, size_t i) { return tl_pv_cstr(tl_pv_at(e->types, i)); }

const char *tl_pe_concrete(const tl_perf_event *e, size_t i) { return tl_pv_cstr(tl_pv_at(e->concrete, i)); }

int64_t tl_pe_dimv(const tl_perf_event *e, size_t i, size_t j, int *ok)
{
    int64_t v = 0;
    int good = tl_pv_int(tl_pv_at(tl_pv_at(e->dims, i), j), &v);
    if (ok) *ok = good;
    return good ? v : 0;
}
