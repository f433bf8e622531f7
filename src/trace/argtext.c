/* argtext.c — the rendered text of event args (argtext.h). */
#include "argtext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../json/pyval.h"
#include "../util/vec.h"

void tl_argtext_init(tl_argtext *a, const tl_trace *t)
{
    a->t = t;
    tl_strpool_init(&a->text);
    size_t n = t->es.values.n ? t->es.values.n : 1;
    a->tuple_of_value = tl_xmalloc(n * sizeof *a->tuple_of_value);
    a->list_of_value = tl_xmalloc(n * sizeof *a->list_of_value);
    memset(a->tuple_of_value, 0xff, n * sizeof *a->tuple_of_value);
    memset(a->list_of_value, 0xff, n * sizeof *a->list_of_value);
    tl_map_init(&a->meta, 64);
    a->meta_ids = NULL;
    a->n_meta = a->cap_meta = 0;
}

void tl_argtext_free(tl_argtext *a)
{
    tl_strpool_free(&a->text);
    free(a->tuple_of_value);
    free(a->list_of_value);
    tl_map_free(&a->meta);
    free(a->meta_ids);
}

/* Text id of an integer arg: its str() is its decimal text. */
static uint32_t int_text_id(tl_argtext *a, int64_t v)
{
    char num[32];
    int n = snprintf(num, sizeof num, "%lld", (long long)v);
    return tl_strpool_intern(&a->text, num, (size_t)n);
}

/* Text id of a raw (non-integer) value, rendered once per value id. */
static uint32_t value_text_id(tl_argtext *a, uint32_t vid, int tuple)
{
    const tl_event_store *es = &a->t->es;
    uint32_t *cache = tuple ? a->tuple_of_value : a->list_of_value;
    if (cache[vid] == UINT32_MAX) {
        tl_pv_arena *ar = tl_pv_arena_new();
        const tl_pv *v = tl_pv_parse(ar, tl_strpool_get(&es->values, vid));
        tl_sbuf b;
        tl_sb_init(&b);
        if (tuple) tl_pv_str_tuple(&b, v);
        else tl_pv_str_list(&b, v);
        cache[vid] = tl_strpool_intern(&a->text, b.s ? b.s : "", b.len);
        tl_sb_free(&b);
        tl_pv_arena_free(ar);
    }
    return cache[vid];
}

/* Text id of args[key] (UINT32_MAX when absent). */
static uint32_t argtext_id(tl_argtext *a, uint32_t ev, uint32_t key, int tuple)
{
    const tl_event_store *es = &a->t->es;
    int isint;
    uint32_t vid = tl_es_arg_raw(es, ev, key, &isint);
    if (vid == UINT32_MAX) {
        if (!isint) return UINT32_MAX;
        int64_t v = 0;
        tl_es_arg_int(es, ev, key, &v);
        return int_text_id(a, v);
    }
    return value_text_id(a, vid, tuple);
}

static const char *argtext(tl_argtext *a, uint32_t ev, uint32_t key, int tuple)
{
    uint32_t id = argtext_id(a, ev, key, tuple);
    return id == UINT32_MAX ? NULL : tl_strpool_get(&a->text, id);
}

const char *tl_argtext_tuple(tl_argtext *a, uint32_t ev, uint32_t key) { return argtext(a, ev, key, 1); }
const char *tl_argtext_list(tl_argtext *a, uint32_t ev, uint32_t key) { return argtext(a, ev, key, 0); }

/* The value of an M event as text (strings unquoted), or "Unknown". */
static const char *meta_text(const tl_trace *t, uint32_t pid, uint32_t tid, const char *name, tl_sbuf *buf)
{
    tl_sb_clear(buf);
    uint32_t v = tid == UINT32_MAX ? UINT32_MAX : tl_es_meta(&t->es, pid, tid, name);
    if (v == UINT32_MAX) {
        tl_sb_puts(buf, "Unknown");
        return buf->s;
    }
    tl_pv_arena *ar = tl_pv_arena_new();
    const tl_pv *pv = tl_pv_parse(ar, tl_strpool_get(&t->es.values, v));
    if (pv->kind == TL_PV_STR) tl_sb_putn(buf, pv->s, pv->n);
    else tl_pv_str_tuple(buf, pv);
    tl_pv_arena_free(ar);
    return buf->s ? buf->s : "";
}

/* process_name and process_labels are per process (the M event of tid 0),
 * thread_name per (pid, tid). */
static const char *meta_of(const tl_trace *t, uint32_t ev, int which, tl_sbuf *buf)
{
    static const char *const key[3] = {"process_name", "process_labels", "thread_name"};
    uint32_t tid = which == TL_META_THREAD_NAME ? tl_es_tid(&t->es, ev) : tl_es_find_idval(&t->es, 0, 0);
    return meta_text(t, tl_es_pid(&t->es, ev), tid, key[which], buf);
}

/* Text id of a metadata name (see tl_argtext_meta; argtext.h). */
uint32_t tl_argtext_meta_id(tl_argtext *a, uint32_t ev, int which)
{
    const tl_event_store *es = &a->t->es;
    uint32_t i = tl_map_get(&a->meta, tl_es_pid(es, ev), tl_es_tid(es, ev));
    if (i == UINT32_MAX) {
        tl_sbuf b;
        tl_sb_init(&b);
        TL_GROW(a->meta_ids, a->cap_meta, 3 * (a->n_meta + 1));
        for (int k = 0; k < 3; k++) {
            const char *s = meta_of(a->t, ev, k, &b);
            a->meta_ids[3 * a->n_meta + (size_t)k] = tl_strpool_intern(&a->text, s, strlen(s));
        }
        tl_sb_free(&b);
        i = (uint32_t)a->n_meta++;
        tl_map_put(&a->meta, tl_es_pid(es, ev), tl_es_tid(es, ev), i);
    }
    return a->meta_ids[3 * i + (size_t)which];
}

const char *tl_argtext_meta(tl_argtext *a, uint32_t ev, int which)
{
    return tl_strpool_get(&a->text, tl_argtext_meta_id(a, ev, which));
}

void tl_argtext_shape_ids(tl_argtext *a, uint32_t ev, int tuple, uint32_t ids[4])
{
    /* one pass over the event's args for the four keys (the last
     * occurrence of a key wins, as in tl_es_arg_raw) */
    _Static_assert(TL_K_INPUT_TYPE == TL_K_INPUT_DIMS + 1 && TL_K_INPUT_STRIDES == TL_K_INPUT_DIMS + 2 &&
                       TL_K_CONCRETE_INPUTS == TL_K_INPUT_DIMS + 3,
                   "the four shape keys are consecutive ids");
    tl_arg found[4];
    int have[4] = {0, 0, 0, 0};
    tl_arg_iter it;
    tl_arg arg;
    tl_es_args_begin(&a->t->es, ev, &it);
    while (tl_es_args_next(&it, &arg)) {
        uint32_t k = arg.key - (uint32_t)TL_K_INPUT_DIMS;
        if (k < 4) {
            found[k] = arg;
            have[k] = 1;
        }
    }
    for (int k = 0; k < 4; k++) {
        ids[k] = UINT32_MAX;
        if (have[k])
            ids[k] = found[k].tag == TL_AV_INT ? int_text_id(a, found[k].i) : value_text_id(a, (uint32_t)found[k].i, tuple);
    }
}
