/* records.c — per-rank extraction of collective-kernel records (records.h). */
#include "records.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../json/pyval.h"
#include "../util/msort.h"
#include "../util/sbuf.h"
#include "../util/vec.h"

const char *const tl_cm_names[TL_CM_N] = {"Process Group Name", "Process Group Ranks", "Collective name",
                                           "Group size",         "dtype",               "In msg nelems",
                                           "Out msg nelems",     "In split size",       "Out split size",
                                           "stream"};

void tl_coll_set_init(tl_coll_set *cs)
{
    memset(cs, 0, sizeof *cs);
    tl_strpool_init(&cs->pool);
    tl_strpool_init(&cs->keys);
}

void tl_coll_set_free(tl_coll_set *cs)
{
    free(cs->rec);
    free(cs->meta);
    tl_strpool_free(&cs->pool);
    tl_strpool_free(&cs->keys);
    memset(cs, 0, sizeof *cs);
}

/* The printed form of args[key] (a str cell as the reference writes it:
 * strings unquoted, arrays as tuples, ints in decimal) into the pool. */
static void arg_value(tl_coll_set *cs, const tl_event_store *es, size_t ev, uint32_t key, tl_sbuf *b,
                      uint32_t *text, int64_t *num)
{
    *text = UINT32_MAX;
    *num = TL_NONE;
    if (key == UINT32_MAX) return;
    int64_t iv;
    tl_sb_clear(b);
    if (tl_es_arg_int(es, ev, key, &iv)) {
        *num = iv;
        tl_sb_i64(b, iv);
    } else {
        int is_int;
        uint32_t vid = tl_es_arg_raw(es, ev, key, &is_int);
        if (vid == UINT32_MAX) return;
        tl_pv_arena *ar = tl_pv_arena_new();
        const tl_pv *pv = tl_pv_parse(ar, tl_strpool_get(&es->values, vid));
        int none = !pv || pv->kind == TL_PV_NULL;
        if (!none) {
            if (pv->kind == TL_PV_STR) tl_sb_putn(b, pv->s, pv->n);
            else if (pv->kind == TL_PV_INT) {
                *num = pv->i;
                tl_sb_i64(b, pv->i);
            } else tl_pv_str_tuple(b, pv);
        }
        tl_pv_arena_free(ar);
        if (none) return;
    }
    *text = tl_strpool_intern(&cs->pool, b->s ? b->s : "", b->len);
}

static uint32_t intern_meta(tl_coll_set *cs, const tl_coll_meta *m)
{
    char key[TL_CM_N * 9 + 1];
    size_t n = 0;
    for (int i = 0; i < TL_CM_N; i++) n += (size_t)snprintf(key + n, sizeof key - n, "%x,", m->text[i]);
    uint32_t before = cs->keys.n;
    uint32_t id = tl_strpool_intern(&cs->keys, key, n);
    if (id == before) {
        TL_GROW(cs->meta, cs->capmeta, cs->nmeta + 1);
        cs->meta[cs->nmeta++] = *m;
    }
    return id;
}

size_t tl_coll_extract(tl_coll_set *cs, const tl_trace *t, uint32_t rank)
{
    const tl_event_store *es = &t->es;
    uint32_t keys[TL_CM_N];
    for (int i = 0; i < TL_CM_N; i++) keys[i] = tl_strpool_find(&es->keys, tl_cm_names[i], strlen(tl_cm_names[i]));
    uint32_t ext = tl_strpool_find(&es->keys, "External id", 11);
    tl_sbuf b;
    tl_sb_init(&b);
    size_t added = 0;
    for (size_t k = 0; k < es->n; k++) {
        if (es->cat[k] != TL_CAT_KERNEL || !tl_tree_is_comm(&t->tree, es, (uint32_t)k)) continue;
        /* linked: args.correlation or args["External id"] not null */
        int linked = tl_es_corr(es, k) != TL_NONE;
        if (!linked && ext != UINT32_MAX) {
            int64_t iv;
            int is_int;
            uint32_t vid;
            if (tl_es_arg_int(es, k, ext, &iv)) linked = 1;
            else if ((vid = tl_es_arg_raw(es, k, ext, &is_int)) != UINT32_MAX)
                linked = strcmp(tl_strpool_get(&es->values, vid), "null") != 0;
        }
        if (!linked) continue;
        tl_coll_meta m;
        for (int i = 0; i < TL_CM_N; i++) arg_value(cs, es, k, keys[i], &b, &m.text[i], &m.num[i]);
        /* §3.3: the default custom rule infers allreduce from cross_device_reduce */
        if (m.text[TL_CM_COLL_NAME] == UINT32_MAX && strstr(tl_es_name(es, k), "cross_device_reduce"))
            m.text[TL_CM_COLL_NAME] = tl_strpool_intern(&cs->pool, "allreduce", 9);
        TL_GROW(cs->rec, cs->cap, cs->n + 1);
        tl_coll_rec *r = &cs->rec[cs->n++];
        r->ts = es->ts[k];
        r->dur = es->dur[k];
        r->rank = rank;
        r->pos = (uint32_t)added++;
        r->meta = intern_meta(cs, &m);
        r->index = 0;
    }
    tl_sb_free(&b);
    return added;
}

static const tl_top_entry *top_entry(const tl_trace *t, const char *name)
{
    uint32_t k = tl_strpool_find(&t->es.keys, name, strlen(name));
    if (k == UINT32_MAX) return NULL;
    for (size_t i = 0; i < t->es.n_top; i++)
        if (t->es.top[i].key == k) return &t->es.top[i];
    return NULL;
}

int tl_trace_distinfo_int(const tl_trace *t, const char *field, int64_t *out)
{
    const tl_top_entry *e = top_entry(t, "distributedInfo");
    if (!e) return 0;
    tl_pv_arena *ar = tl_pv_arena_new();
    const tl_pv *pv = tl_pv_parse(ar, e->raw);
    int found = 0;
    if (pv && pv->kind == TL_PV_DICT)
        for (size_t i = 0; i + 1 < pv->n; i += 2) {
            const char *k = tl_pv_cstr(&pv->items[i]);
            if (k && !strcmp(k, field) && pv->items[i + 1].kind == TL_PV_INT) {
                *out = pv->items[i + 1].i;
                found = 1;
            }
        }
    tl_pv_arena_free(ar);
    return found;
}

int tl_trace_device_count(const tl_trace *t)
{
    const tl_top_entry *e = top_entry(t, "deviceProperties");
    if (!e) return 0;
    tl_pv_arena *ar = tl_pv_arena_new();
    const tl_pv *pv = tl_pv_parse(ar, e->raw);
    int n = pv && pv->kind == TL_PV_LIST ? (int)pv->n : 0;
    tl_pv_arena_free(ar);
    return n;
}

static int cmp_rec_rank(void *v, size_t a, size_t b)
{
    const tl_coll_rec *r = v;
    return r[a].rank < r[b].rank ? -1 : r[a].rank > r[b].rank;
}

void tl_coll_set_sort_by_rank(tl_coll_set *cs)
{
    size_t *idx = tl_xmalloc((cs->n + 1) * sizeof *idx);
    for (size_t i = 0; i < cs->n; i++) idx[i] = i;
    tl_msort(idx, cs->n, cmp_rec_rank, cs->rec);
    tl_coll_rec *sorted = tl_xmalloc((cs->n + 1) * sizeof *sorted);
    for (size_t i = 0; i < cs->n; i++) sorted[i] = cs->rec[idx[i]];
    free(cs->rec);
    cs->rec = sorted;
    cs->cap = cs->n + 1;
    free(idx);
}
