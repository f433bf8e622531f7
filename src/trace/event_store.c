#include "event_store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"
#include "../util/str.h"
#include "../util/vec.h"

static const char *const well_known_keys[TL_K__COUNT] = {
    [TL_K_CORRELATION] = "correlation",
    [TL_K_EXTERNAL_ID] = "External id",
    [TL_K_SEQUENCE_NUMBER] = "Sequence number",
    [TL_K_STREAM] = "stream",
    [TL_K_INPUT_DIMS] = "Input Dims",
    [TL_K_INPUT_TYPE] = "Input type",
    [TL_K_INPUT_STRIDES] = "Input Strides",
    [TL_K_CONCRETE_INPUTS] = "Concrete Inputs",
    [TL_K_NAME] = "name",
    [TL_K_LABELS] = "labels",
    [TL_K_SORT_INDEX] = "sort_index",
    [TL_K_FWD_THREAD_ID] = "Fwd thread id",
    [TL_K_KERNEL_FILE] = "kernel_file",
    [TL_K_OUTPUT_TYPE] = "Output type",
    [TL_K_GRID] = "grid",
    [TL_K_BLOCK] = "block",
    [TL_K_BYTES] = "bytes",
};

void tl_es_init(tl_event_store *es)
{
    memset(es, 0, sizeof *es);
    tl_strpool_init(&es->names);
    tl_strpool_init(&es->cats);
    tl_strpool_init(&es->keys);
    tl_strpool_init(&es->values);
    for (int k = 0; k < TL_K__COUNT; k++)
        tl_strpool_intern(&es->keys, well_known_keys[k], strlen(well_known_keys[k]));
    tl_map_init(&es->thread_ix, 16);
    es->n_idval_slots = 256;
    es->idval_slots = tl_xcalloc(es->n_idval_slots, sizeof *es->idval_slots);
    es->args_off = tl_big_realloc(NULL, sizeof *es->args_off);
    es->args_off_bits = 32;
    /* tests: wrap the offsets early, as a blob over 4 GiB would */
    const char *bits = getenv("TRACELENS_ARGS_OFF_BITS");
    if (bits && atoi(bits) >= 4 && atoi(bits) < 32) es->args_off_bits = (uint8_t)atoi(bits);
    es->args_next_wrap = (uint64_t)1 << es->args_off_bits;
}

static size_t corr_big_find(const tl_event_store *es, size_t i)
{
    /* the first entry with uid >= i */
    size_t lo = 0, hi = es->n_corr_big;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (es->corr_big[mid].uid < i) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int64_t tl_es_corr_big(const tl_event_store *es, size_t i)
{
    size_t k = corr_big_find(es, i);
    return k < es->n_corr_big && es->corr_big[k].uid == i ? es->corr_big[k].v : TL_NONE;
}

void tl_es_set_corr_big(tl_event_store *es, size_t i, int64_t v)
{
    es->corr_lo[i] = TL_CORR_BIG;
    size_t k = corr_big_find(es, i);
    if (k < es->n_corr_big && es->corr_big[k].uid == i) {
        es->corr_big[k].v = v;
        return;
    }
    TL_GROW(es->corr_big, es->cap_corr_big, es->n_corr_big + 1);
    memmove(es->corr_big + k + 1, es->corr_big + k, (es->n_corr_big - k) * sizeof *es->corr_big);
    es->corr_big[k].uid = (uint32_t)i;
    es->corr_big[k].v = v;
    es->n_corr_big++;
}

void tl_es_copy_corr_big(tl_event_store *dst, size_t at, const tl_event_store *src, size_t from, size_t n)
{
    for (size_t k = corr_big_find(src, from); k < src->n_corr_big && src->corr_big[k].uid < from + n; k++) {
        uint32_t u = src->corr_big[k].uid;
        if (src->corr_lo[u] != TL_CORR_BIG) continue; /* since overwritten */
        TL_GROW(dst->corr_big, dst->cap_corr_big, dst->n_corr_big + 1);
        dst->corr_big[dst->n_corr_big].uid = (uint32_t)(at + (u - from));
        dst->corr_big[dst->n_corr_big].v = src->corr_big[k].v;
        dst->n_corr_big++;
    }
}

uint64_t tl_es_args_wrapped(const tl_event_store *es, size_t i)
{
    /* the number of wraps at indices <= i */
    uint32_t lo = 0, hi = es->n_args_wraps;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (es->args_wraps[mid] <= i) lo = mid + 1;
        else hi = mid;
    }
    return es->args_off[i] + ((uint64_t)lo << es->args_off_bits);
}

void tl_es_args_wrap(tl_event_store *es, size_t i, uint64_t end)
{
    while (es->n_args_wraps < (end >> es->args_off_bits)) {
        TL_GROW(es->args_wraps, es->cap_args_wraps, es->n_args_wraps + 1);
        es->args_wraps[es->n_args_wraps++] = (uint32_t)i;
    }
    es->args_base = (uint64_t)es->n_args_wraps << es->args_off_bits;
    es->args_next_wrap = es->args_base + ((uint64_t)1 << es->args_off_bits);
    es->args_off[i] = (uint32_t)(end - es->args_base);
}

void tl_es_grow(tl_event_store *es, size_t nc)
{
    es->ts = tl_big_realloc(es->ts, nc * sizeof *es->ts);
    es->dur = tl_big_realloc(es->dur, nc * sizeof *es->dur);
    es->corr_lo = tl_big_realloc(es->corr_lo, nc * sizeof *es->corr_lo);
    es->name = tl_big_realloc(es->name, nc * sizeof *es->name);
    es->cat_id = tl_big_realloc(es->cat_id, nc * sizeof *es->cat_id);
    es->cat = tl_big_realloc(es->cat, nc * sizeof *es->cat);
    es->ph = tl_big_realloc(es->ph, nc * sizeof *es->ph);
    es->flags = tl_big_realloc(es->flags, nc * sizeof *es->flags);
    es->thr = tl_big_realloc(es->thr, nc * sizeof *es->thr);
    es->args_off = tl_big_realloc(es->args_off, (nc + 1) * sizeof *es->args_off);
    es->cap = nc;
}

void tl_es_trim(tl_event_store *es)
{
    size_t n = es->n;
    tl_big_trim(es->ts, n * sizeof *es->ts);
    tl_big_trim(es->dur, n * sizeof *es->dur);
    tl_big_trim(es->corr_lo, n * sizeof *es->corr_lo);
    tl_big_trim(es->name, n * sizeof *es->name);
    tl_big_trim(es->cat_id, n * sizeof *es->cat_id);
    tl_big_trim(es->cat, n);
    tl_big_trim(es->ph, n);
    tl_big_trim(es->flags, n);
    tl_big_trim(es->thr, n * sizeof *es->thr);
    tl_big_trim(es->args_off, (n + 1) * sizeof *es->args_off);
    tl_big_trim(es->blob, es->blob_len);
}

void tl_es_free(tl_event_store *es)
{
    tl_big_free(es->ts);
    tl_big_free(es->dur);
    tl_big_free(es->corr_lo);
    tl_big_free(es->name);
    tl_big_free(es->cat_id);
    tl_big_free(es->cat);
    tl_big_free(es->ph);
    tl_big_free(es->flags);
    tl_big_free(es->thr);
    tl_big_free(es->args_off);
    tl_big_free(es->blob);
    tl_strpool_free(&es->names);
    tl_strpool_free(&es->cats);
    tl_strpool_free(&es->keys);
    tl_strpool_free(&es->values);
    free(es->threads);
    tl_map_free(&es->thread_ix);
    free(es->idvals);
    free(es->idval_slots);
    free(es->args_wraps);
    free(es->corr_big);
    free(es->seq_pairs);
    free(es->meta);
    for (size_t i = 0; i < es->n_top; i++) free(es->top[i].raw);
    free(es->top);
    memset(es, 0, sizeof *es);
}

void tl_es_clear(tl_event_store *es)
{
    /* keep the columns and the blob (their pages stay mapped and warm) */
    void *keep[11] = {es->ts, es->dur, es->corr_lo, es->name, es->cat_id, es->cat,
                      es->ph, es->flags, es->thr, es->args_off, es->blob};
    size_t cap = es->cap, blob_cap = es->blob_cap;
    es->ts = NULL, es->dur = NULL, es->corr_lo = NULL, es->name = NULL, es->cat_id = NULL, es->cat = NULL;
    es->ph = NULL, es->flags = NULL, es->thr = NULL, es->args_off = NULL, es->blob = NULL;
    tl_es_free(es);
    tl_es_init(es);
    tl_big_free(es->args_off);
    es->ts = keep[0], es->dur = keep[1], es->corr_lo = keep[2], es->name = keep[3], es->cat_id = keep[4];
    es->cat = keep[5], es->ph = keep[6], es->flags = keep[7], es->thr = keep[8];
    es->args_off = keep[9], es->blob = keep[10];
    es->cap = cap;
    es->blob_cap = blob_cap;
    es->args_off[0] = 0;
}

static uint32_t idval_hash(uint8_t kind, int64_t i)
{
    uint64_t h = ((uint64_t)i ^ ((uint64_t)kind << 62)) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32);
}

uint32_t tl_es_find_idval(const tl_event_store *es, uint8_t kind, int64_t i)
{
    uint32_t mask = es->n_idval_slots - 1, s = idval_hash(kind, i) & mask;
    while (es->idval_slots[s]) {
        const tl_idval *v = &es->idvals[es->idval_slots[s] - 1];
        if (v->kind == kind && v->i == i) return es->idval_slots[s] - 1;
        s = (s + 1) & mask;
    }
    return UINT32_MAX;
}

uint32_t tl_es_idval(tl_event_store *es, uint8_t kind, int64_t i)
{
    uint32_t found = tl_es_find_idval(es, kind, i);
    if (found != UINT32_MAX) return found;
    if ((es->n_idvals + 1) * 2 > es->n_idval_slots) {
        uint32_t ns = es->n_idval_slots * 2;
        uint32_t *slots = tl_xcalloc(ns, sizeof *slots);
        for (uint32_t k = 0; k < es->n_idvals; k++) {
            uint32_t s = idval_hash(es->idvals[k].kind, es->idvals[k].i) & (ns - 1);
            while (slots[s]) s = (s + 1) & (ns - 1);
            slots[s] = k + 1;
        }
        free(es->idval_slots);
        es->idval_slots = slots;
        es->n_idval_slots = ns;
    }
    TL_GROW(es->idvals, es->cap_idvals, es->n_idvals + 1);
    uint32_t id = es->n_idvals++;
    es->idvals[id].kind = kind;
    es->idvals[id].i = i;
    uint32_t mask = es->n_idval_slots - 1, s = idval_hash(kind, i) & mask;
    while (es->idval_slots[s]) s = (s + 1) & mask;
    es->idval_slots[s] = id + 1;
    return id;
}

uint32_t tl_es_thread_slow(tl_event_store *es, uint32_t pid, uint32_t tid)
{
    uint32_t id = tl_map_get(&es->thread_ix, pid, tid);
    if (id == UINT32_MAX) {
        TL_GROW(es->threads, es->cap_threads, es->n_threads + 1);
        id = es->n_threads++;
        es->threads[id].pid = pid;
        es->threads[id].tid = tid;
        tl_map_put(&es->thread_ix, pid, tid, id);
    }
    es->thread_hint = id;
    return id;
}

int tl_es_arg_int(const tl_event_store *es, size_t ev, uint32_t key, int64_t *out)
{
    if (key == TL_K_CORRELATION && tl_es_corr(es, ev) != TL_NONE && es->ph[ev] != 's' && es->ph[ev] != 'f') {
        *out = tl_es_corr(es, ev);
        return 1;
    }
    tl_arg_iter it;
    tl_arg a;
    tl_es_args_begin(es, ev, &it);
    int found = 0;
    while (tl_es_args_next(&it, &a))
        if (a.key == key) {
            found = a.tag == TL_AV_INT;
            if (found) *out = a.i;
        }
    return found;
}

uint32_t tl_es_arg_raw(const tl_event_store *es, size_t ev, uint32_t key, int *is_int)
{
    *is_int = 0;
    if (key == TL_K_CORRELATION && tl_es_corr(es, ev) != TL_NONE && es->ph[ev] != 's' && es->ph[ev] != 'f') {
        *is_int = 1;
        return UINT32_MAX;
    }
    tl_arg_iter it;
    tl_arg a;
    tl_es_args_begin(es, ev, &it);
    uint32_t found = UINT32_MAX;
    while (tl_es_args_next(&it, &a))
        if (a.key == key) {
            *is_int = a.tag == TL_AV_INT;
            found = *is_int ? UINT32_MAX : (uint32_t)a.i;
        }
    return found;
}

uint32_t tl_es_meta(const tl_event_store *es, uint32_t pid, uint32_t tid, const char *name)
{
    uint32_t nid = tl_strpool_find(&es->names, name, strlen(name));
    if (nid == UINT32_MAX) return UINT32_MAX;
    uint32_t found = UINT32_MAX;
    for (size_t i = 0; i < es->n_meta; i++)
        if (es->meta[i].pid == pid && es->meta[i].tid == tid && es->meta[i].name == nid)
            found = es->meta[i].value;
    return found;
}

/* Interns every string of `from` into `into`; returns the id map. */
static uint32_t *remap_pool(tl_strpool *into, const tl_strpool *from)
{
    uint32_t *map = tl_xmalloc((from->n ? from->n : 1) * sizeof *map);
    for (uint32_t i = 0; i < from->n; i++)
        map[i] = tl_strpool_intern(into, tl_strpool_get(from, i), tl_strpool_len(from, i));
    return map;
}

/* Copies a column of n items after `at` items of dst; with `consume` the
 * source column is released at once (so joining parts keeps the peak
 * memory near the size of the result). */
static void move_column(void *dst, size_t at, void **src, size_t n, size_t width, int consume)
{
    memcpy((char *)dst + at * width, *src, n * width);
    if (consume) {
        tl_big_free(*src);
        *src = NULL;
    }
}

/* The fixed-width columns of an append: copied, or remapped to dst's ids
 * (names, categories, threads), each source column released once copied
 * when consuming. */
typedef struct column_job {
    tl_event_store *dst, *src;
    size_t base, n;
    int consume;
    const uint32_t *names, *cats, *threads;
} column_job;

static void *column_job_main(void *arg)
{
    column_job *j = arg;
    tl_event_store *dst = j->dst, *src = j->src;
    size_t base = j->base, n = j->n;
    int consume = j->consume;
    move_column(dst->ts, base, (void **)&src->ts, n, sizeof *dst->ts, consume);
    move_column(dst->dur, base, (void **)&src->dur, n, sizeof *dst->dur, consume);
    tl_es_copy_corr_big(dst, base, src, 0, n);
    move_column(dst->corr_lo, base, (void **)&src->corr_lo, n, sizeof *dst->corr_lo, consume);
    move_column(dst->cat, base, (void **)&src->cat, n, 1, consume);
    move_column(dst->ph, base, (void **)&src->ph, n, 1, consume);
    move_column(dst->flags, base, (void **)&src->flags, n, 1, consume);
    for (size_t i = 0; i < n; i++) dst->name[base + i] = j->names[src->name[i]];
    if (consume) tl_big_free(src->name), src->name = NULL;
    for (size_t i = 0; i < n; i++) dst->cat_id[base + i] = j->cats[src->cat_id[i]];
    if (consume) tl_big_free(src->cat_id), src->cat_id = NULL;
    for (size_t i = 0; i < n; i++) dst->thr[base + i] = j->threads[src->thr[i]];
    if (consume) tl_big_free(src->thr), src->thr = NULL;
    return NULL;
}

/* Appends every event of src after those of dst (ids remapped), with its
 * metadata and top-level keys; with `consume` src's columns are released as
 * they are copied and its top-level texts are taken over. */
static void append_events(tl_event_store *dst, tl_event_store *src, int consume)
{
    uint32_t *names = remap_pool(&dst->names, &src->names);
    uint32_t *cats = remap_pool(&dst->cats, &src->cats);
    uint32_t *keys = remap_pool(&dst->keys, &src->keys);
    uint32_t *values = remap_pool(&dst->values, &src->values);
    uint32_t *idv = tl_xmalloc((src->n_idvals ? src->n_idvals : 1) * sizeof *idv);
    for (uint32_t i = 0; i < src->n_idvals; i++) {
        tl_idval v = src->idvals[i];
        if (v.kind == 1 || v.kind == 3) v.i = names[v.i];
        idv[i] = tl_es_idval(dst, v.kind, v.i);
    }
    uint32_t *threads = tl_xmalloc((src->n_threads ? src->n_threads : 1) * sizeof *threads);
    for (uint32_t i = 0; i < src->n_threads; i++)
        threads[i] = tl_es_thread(dst, idv[src->threads[i].pid], idv[src->threads[i].tid]);
    size_t base = dst->n, n = src->n;
    /* geometric, for the many small appends of a segmented scan */
    if (base + n > dst->cap) tl_es_grow(dst, base + n > dst->cap + dst->cap / 4 ? base + n : dst->cap + dst->cap / 4);
    /* args blobs: re-encoded, as key and value ids may change width; an
     * argument takes >= 3 bytes and grows by <= 2, so 2x is a safe bound
     * (untouched reserve costs address space, not memory) */
    size_t need = dst->blob_len + 2 * src->blob_len + 64;
    if (need > dst->blob_cap) {
        if (need < dst->blob_cap + dst->blob_cap / 4) need = dst->blob_cap + dst->blob_cap / 4;
        dst->blob = tl_big_realloc(dst->blob, need);
        dst->blob_cap = need;
    }
    /* the columns and the args touch disjoint memory: a large append does
     * them at once, the columns in a second thread */
    column_job cj = {dst, src, base, n, consume, names, cats, threads};
    pthread_t th;
    int threaded = n >= 100000 && pthread_create(&th, NULL, column_job_main, &cj) == 0;
    if (!threaded) column_job_main(&cj);
    /* one walk over src's blob (its events' args lie end to end): keys and
     * string ids remapped, integers copied as they are encoded */
    const uint8_t *sp = src->blob ? src->blob + tl_es_args_at(src, 0) : NULL;
    uint8_t *o = dst->blob + dst->blob_len;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *end = src->blob ? src->blob + tl_es_args_at(src, i + 1) : NULL;
        while (sp < end) {
            uint64_t k = *sp < 0x80 ? *sp++ : tl_get_varint(&sp);
            o += tl_put_varint(o, keys[k]);
            uint8_t tag = *sp++;
            *o++ = tag;
            if (tag == TL_AV_INT) {
                while (*sp & 0x80) *o++ = *sp++;
                *o++ = *sp++;
            } else {
                uint64_t v = *sp < 0x80 ? *sp++ : tl_get_varint(&sp);
                o += tl_put_varint(o, values[v]);
            }
        }
        dst->blob_len = (size_t)(o - dst->blob);
        tl_es_set_args_end(dst, base + i + 1, dst->blob_len);
        /* what is re-encoded is given back as the copy goes (the peak of a
         * join stays near the size of its result) */
        if (consume && (i & 0xffff) == 0xffff) {
            tl_big_release_front(src->blob, tl_es_args_at(src, i + 1));
            tl_big_release_front(src->args_off, (i + 1) * sizeof *src->args_off);
        }
    }
    if (consume) {
        tl_big_free(src->blob), src->blob = NULL;
        tl_big_free(src->args_off), src->args_off = NULL;
    }
    if (threaded) pthread_join(th, NULL);
    dst->n = base + n;

    for (size_t i = 0; i < src->n_seq; i++) {
        TL_GROW(dst->seq_pairs, dst->cap_seq, dst->n_seq + 1);
        dst->seq_pairs[dst->n_seq].seq = src->seq_pairs[i].seq;
        dst->seq_pairs[dst->n_seq].uid = (uint32_t)(src->seq_pairs[i].uid + base);
        dst->n_seq++;
    }
    for (size_t i = 0; i < src->n_meta; i++) {
        tl_meta_entry m = src->meta[i];
        m.pid = idv[m.pid];
        m.tid = idv[m.tid];
        m.name = names[m.name];
        m.value = values[m.value];
        TL_GROW(dst->meta, dst->cap_meta, dst->n_meta + 1);
        dst->meta[dst->n_meta++] = m;
    }
    for (size_t i = 0; i < src->n_top; i++) {
        TL_GROW(dst->top, dst->cap_top, dst->n_top + 1);
        dst->top[dst->n_top] = src->top[i];
        dst->top[dst->n_top].key = keys[src->top[i].key];
        if (consume) {
            src->top[i].raw = NULL;
        } else {
            dst->top[dst->n_top].raw = tl_xmalloc(src->top[i].len + 1);
            memcpy(dst->top[dst->n_top].raw, src->top[i].raw, src->top[i].len);
            dst->top[dst->n_top].raw[src->top[i].len] = 0;
        }
        dst->n_top++;
    }
    dst->dropped_metadata |= src->dropped_metadata;
    free(names);
    free(cats);
    free(keys);
    free(values);
    free(idv);
    free(threads);
}

void tl_es_append(tl_event_store *dst, tl_event_store *src)
{
    append_events(dst, src, 1);
    tl_es_free(src);
}

void tl_es_append_clear(tl_event_store *dst, tl_event_store *src)
{
    append_events(dst, src, 0);
    tl_es_clear(src);
}

void tl_es_copy(tl_event_store *dst, const tl_event_store *src)
{
    tl_es_init(dst);
    /* an empty store interns the same strings in the same order, so every
     * id (names, keys, values, pid/tid) of the copy equals the source's */
    append_events(dst, (tl_event_store *)src, 0);
    dst->bare_array = src->bare_array;
    dst->dropped_metadata = src->dropped_metadata;
    dst->parts_joined = src->parts_joined;
    dst->bytes = src->bytes;
    dst->file_bytes = src->file_bytes;
    dst->gzip = src->gzip;
}
