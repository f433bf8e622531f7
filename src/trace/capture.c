/* capture.c — the merge of capture traces into a graph-replay trace
 * (inference spec §1.5; the capture index is capture_classify.c). See
 * capture.h.
 *
 * Shape: the merged trace starts as a copy of the replay (store and tree).
 * Each loaded capture trace gets its capture roots (a synthetic CaptureRoot
 * per StreamBegin/EndCapture pair over the window's top events), and each
 * root a template: its subtree in the order the copies take their UIDs
 * (BFS, then stable by ts), local parent and children arrays, and its
 * capture dispatches. A graft pairs the dispatches with the graph launch's
 * kernels (stream, greedy, positional or group alignment), then copies the
 * template's events after the store's last event: the first copy of a
 * template from the capture store (strings re-interned), later ones from
 * that first copy inside the merged store (a block copy). Parent pointers
 * are set as grafts go; the children and gpu_events CSR arrays are rebuilt
 * once at the end (tl_tree_relist). Every copy gets the graph launch's
 * ts/dur and fresh gpu_events [FIX]; the kernels' launchers become the
 * capture ops. No global state: the capture-trace cache (LRU, 8 entries, as
 * the reference) lives for one call. */
#include "capture.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "../json/json_text.h"
#include "../io/source.h"
#include "../json/kineto_scan.h"
#include "../util/bigmem.h"
#include "../util/hashmap.h"
#include "../util/msort.h"
#include "../util/sbuf.h"
#include "../util/vec.h"
#include "annotation.h"
#include "iteration.h"

enum { CACHE_MAX = 8, MAX_NOTES = 30 };
#define NONE UINT32_MAX
#define NOMATCH UINT32_MAX

typedef TL_VEC(uint32_t) u32vec;

enum { D_KERNEL = 1, D_MEMCPY = 2, D_MEMSET = 4 };  /* dispatch flags */
enum { K_MEMCPY = 1, K_MEMSET = 2 };                 /* kernel flags (Memset or fillBuffer) */

/* One capture root prepared for copying. */
typedef struct troot {
    uint32_t *src;              /* capture-store UIDs in copy order */
    size_t n;
    uint32_t root_pos;          /* the CaptureRoot's position */
    uint32_t *lparent;          /* local parent position, NONE */
    uint32_t *coff, *cidx;      /* local children (CSR over positions) */
    uint32_t *disp;             /* positions of the capture dispatches, in order */
    size_t nd;
    uint32_t *dkid;             /* per dispatch: merged-store names id of args.kernel (else its name), NOMATCH */
    uint8_t *dfl;               /* per dispatch: D_* */
    uint8_t *isdisp;            /* per position: 1 for a dispatch */
    uint32_t placed;            /* UID of its first copy in the merged store, NONE before */
    struct { uint32_t pos; int64_t seq; } *seqs; /* Sequence numbers of the copies (after the first copy) */
    size_t nseq;
    char *label;                /* "FILE (capture root K)" */
} troot;

/* A loaded capture trace (a cache entry). */
typedef struct ctree {
    char *key;                  /* "{bs}_{mode}" NUL path */
    tl_trace *ct;
    troot **roots;
    size_t nroots;
    unsigned long stamp;
} ctree;

typedef struct graft {
    uint32_t base;
    const troot *r;
} graft;

typedef struct edge {
    uint32_t p, c;
} edge;

typedef struct merge {
    const tl_trace *rp;
    tl_trace *out;
    tl_event_store *es;
    tl_tree *t;
    size_t n0, pcap;
    tl_map over;                /* uid -> its only child (graph launch -> CaptureRoot copy, dispatch -> kernel) */
    uint8_t *merged;            /* per replay event: a graph launch already merged */
    TL_VEC(graft) grafts;
    size_t gcur;                /* the graft list_fn looked at last */
    TL_VEC(edge) app;           /* gpu_events appended, in order */
    uint32_t *app_off, *app_v;  /* ... as CSR */
    TL_VEC(troot *) all_roots;  /* every template made (grafts point into them) */
    ctree cache[CACHE_MAX];
    size_t ncache;
    unsigned long clock;
    tl_capture_summary *sum;
    tl_sbuf notes;
    size_t n_notes;
    char *first_note;
    tl_error *err;
    uint64_t max_text;          /* the capture text the cache may hold at once (0 = no limit) */
} merge;

/* ----------------------------------------------------------- notes */

static void note(merge *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(merge *m, const char *fmt, ...)
{
    char buf[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!m->first_note) m->first_note = tl_xstrdup(buf);
    if (++m->n_notes > MAX_NOTES) return;
    tl_sb_printf(&m->notes, "%s\n", buf);
}

/* ------------------------------------------------------ text helpers */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Python int() of text [s, e): whitespace, a sign, digits. */
static int py_int(const char *s, const char *e, long *out)
{
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')) s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r' || e[-1] == '\f' || e[-1] == '\v')) e--;
    int neg = 0;
    if (s < e && (*s == '+' || *s == '-')) neg = *s++ == '-';
    if (s >= e) return 0;
    long v = 0;
    for (const char *p = s; p < e; p++) {
        if (*p == '_' && p > s && p + 1 < e && is_digit(p[-1]) && is_digit(p[1])) continue;
        if (!is_digit(*p)) return 0;
        v = v > (LONG_MAX - 9) / 10 ? LONG_MAX : v * 10 + (*p - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

/* IterationAnnotation(name).batch_size when a grammar matches and parses,
 * else the second `_` token when it is an integer (the reference's
 * find_execution_details). */
static int iteration_batch(const tl_annotations *a, const char *name, long *out)
{
    tl_iter_ann ia;
    if (tl_iter_parse(&a->g, name, &ia) != TL_IT_NONE) {
        *out = ia.batch_size > LONG_MAX ? LONG_MAX : (long)ia.batch_size;
        return 1;
    }
    const char *u = strchr(name, '_');
    if (!u) return 0;
    const char *e = strchr(u + 1, '_');
    return py_int(u + 1, e ? e : u + 1 + strlen(u + 1), out);
}

/* ------------------------------------------------ copying events */

/* Appends copies of src's events uids[0..n) after dst's last event, its
 * strings interned into dst's pools (metadata and top-level keys are not
 * copied: the merged trace keeps the replay's). */
static void copy_events(tl_event_store *dst, const tl_event_store *src, const uint32_t *uids, size_t n)
{
    uint32_t *nmap = tl_xmalloc((src->names.n + 1) * sizeof *nmap), *cmap = tl_xmalloc((src->cats.n + 1) * sizeof *cmap);
    uint32_t *kmap = tl_xmalloc((src->keys.n + 1) * sizeof *kmap), *vmap = tl_xmalloc((src->values.n + 1) * sizeof *vmap);
    uint32_t *imap = tl_xmalloc((src->n_idvals + 1) * sizeof *imap);
    memset(nmap, 0xff, (src->names.n + 1) * sizeof *nmap);
    memset(cmap, 0xff, (src->cats.n + 1) * sizeof *cmap);
    memset(kmap, 0xff, (src->keys.n + 1) * sizeof *kmap);
    memset(vmap, 0xff, (src->values.n + 1) * sizeof *vmap);
    memset(imap, 0xff, (src->n_idvals + 1) * sizeof *imap);
#define MAPSTR(map, pool, id)                                                                                  \
    ((map)[id] != NONE ? (map)[id]                                                                             \
                       : ((map)[id] = tl_strpool_intern(&dst->pool, tl_strpool_get(&src->pool, id),             \
                                                        tl_strpool_len(&src->pool, id))))
    size_t base = dst->n, bytes = 64;
    for (size_t i = 0; i < n; i++) bytes += 2 * (tl_es_args_at(src, uids[i] + 1) - tl_es_args_at(src, uids[i]));
    if (base + n > dst->cap) tl_es_grow(dst, base + n > dst->cap + dst->cap / 2 ? base + n : dst->cap + dst->cap / 2);
    if (dst->blob_len + bytes > dst->blob_cap) {
        size_t nc = dst->blob_len + bytes > dst->blob_cap * 3 / 2 ? dst->blob_len + bytes : dst->blob_cap * 3 / 2;
        dst->blob = tl_big_realloc(dst->blob, nc);
        dst->blob_cap = nc;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t u = uids[i];
        size_t j = base + i;
        dst->ts[j] = src->ts[u];
        dst->dur[j] = src->dur[u];
        tl_es_set_corr(dst, j, tl_es_corr(src, u));
        dst->cat[j] = src->cat[u];
        dst->ph[j] = src->ph[u];
        dst->flags[j] = src->flags[u];
        dst->name[j] = MAPSTR(nmap, names, src->name[u]);
        dst->cat_id[j] = MAPSTR(cmap, cats, src->cat_id[u]);
        uint32_t ids[2] = {tl_es_pid(src, u), tl_es_tid(src, u)};
        for (int k = 0; k < 2; k++) {
            uint32_t id = ids[k];
            if (imap[id] == NONE) {
                tl_idval v = src->idvals[id];
                if (v.kind == 1 || v.kind == 3) v.i = MAPSTR(nmap, names, (uint32_t)v.i);
                imap[id] = tl_es_idval(dst, v.kind, v.i);
            }
            ids[k] = imap[id];
        }
        tl_es_set_thread(dst, j, ids[0], ids[1]);
        tl_arg_iter it;
        tl_arg a;
        tl_es_args_begin(src, u, &it);
        while (tl_es_args_next(&it, &a)) {
            uint8_t *o = dst->blob + dst->blob_len;
            size_t k = tl_put_varint(o, MAPSTR(kmap, keys, a.key));
            o[k++] = (uint8_t)a.tag;
            k += tl_put_varint(o + k, a.tag == TL_AV_INT ? tl_zigzag(a.i) : MAPSTR(vmap, values, (uint32_t)a.i));
            dst->blob_len += k;
            if (a.key == TL_K_SEQUENCE_NUMBER && a.tag == TL_AV_INT) {
                TL_GROW(dst->seq_pairs, dst->cap_seq, dst->n_seq + 1);
                dst->seq_pairs[dst->n_seq].seq = a.i;
                dst->seq_pairs[dst->n_seq].uid = (uint32_t)j;
                dst->n_seq++;
            }
        }
        tl_es_set_args_end(dst, j + 1, dst->blob_len);
    }
#undef MAPSTR
    dst->n = base + n;
    free(nmap);
    free(cmap);
    free(kmap);
    free(vmap);
    free(imap);
}

/* Appends a copy of the store's own events [from, from + n). */
static void copy_block(tl_event_store *es, uint32_t from, size_t n)
{
    size_t base = es->n;
    if (base + n > es->cap) tl_es_grow(es, base + n > es->cap + es->cap / 2 ? base + n : es->cap + es->cap / 2);
    uint64_t b0 = tl_es_args_at(es, from), b1 = tl_es_args_at(es, from + n);
    if (es->blob_len + (b1 - b0) > es->blob_cap) {
        size_t nc = es->blob_len + (b1 - b0);
        if (nc < es->blob_cap * 3 / 2) nc = es->blob_cap * 3 / 2;
        es->blob = tl_big_realloc(es->blob, nc);
        es->blob_cap = nc;
    }
#define COL(c) memcpy(es->c + base, es->c + from, n * sizeof *es->c)
    COL(ts);
    COL(dur);
    COL(corr_lo);
    COL(name);
    COL(cat_id);
    COL(cat);
    COL(ph);
    COL(flags);
    COL(thr);
#undef COL
    tl_es_copy_corr_big(es, base, es, from, n);
    uint64_t shift = es->blob_len - b0;
    memcpy(es->blob + es->blob_len, es->blob + b0, b1 - b0);
    for (size_t i = 0; i < n; i++) tl_es_set_args_end(es, base + i + 1, tl_es_args_at(es, from + i + 1) + shift);
    es->blob_len += b1 - b0;
    es->n = base + n;
}

/* ------------------------------------------------ capture roots */

static void troot_free(troot *r)
{
    if (!r) return;
    free(r->src);
    free(r->lparent);
    free(r->coff);
    free(r->cidx);
    free(r->disp);
    free(r->dkid);
    free(r->dfl);
    free(r->isdisp);
    free(r->seqs);
    free(r->label);
    free(r);
}

/* The children of u in the capture tree: the window roots for the synthetic
 * CaptureRoot croot, none for an event past the tree (*n = 0). */
static const uint32_t *children_of(const tl_tree *tr, uint32_t u, uint32_t croot, const u32vec *wroots, size_t *n)
{
    if (u == croot) {
        *n = wroots->n;
        return wroots->v;
    }
    if (u < tr->n) return tl_tree_children(tr, u, n);
    *n = 0;
    return NULL;
}

/* The template of the capture root whose CaptureRoot event is croot (with
 * children wroots). pos is scratch: es->n entries, all NONE on entry and
 * on return. */
static troot *make_template(merge *m, tl_trace *ct, uint32_t croot, const u32vec *wroots, uint32_t *pos,
                            uint8_t *seen, const char *label)
{
    const tl_event_store *es = &ct->es;
    const tl_tree *tr = &ct->tree;
    troot *r = tl_xcalloc(1, sizeof *r);
    r->placed = NONE;
    r->label = tl_xstrdup(label);
    /* BFS from the CaptureRoot */
    u32vec q = {0};
    TL_PUSH(q, croot);
    seen[croot] = 1;
    for (size_t h = 0; h < q.n; h++) {
        uint32_t u = q.v[h];
        size_t nc;
        const uint32_t *c = children_of(tr, u, croot, wroots, &nc);
        for (size_t k = 0; k < nc; k++)
            if (!seen[c[k]]) {
                seen[c[k]] = 1;
                TL_PUSH(q, c[k]);
            }
    }
    for (size_t h = 0; h < q.n; h++) seen[q.v[h]] = 0;
    size_t n = q.n;
    size_t *ix = tl_xmalloc(n * sizeof *ix);
    for (size_t i = 0; i < n; i++) ix[i] = q.v[i];
    tl_msort(ix, n, tl_idx_cmp_i64, (void *)es->ts);
    r->n = n;
    r->src = tl_xmalloc(n * sizeof *r->src);
    for (size_t i = 0; i < n; i++) r->src[i] = (uint32_t)ix[i];
    free(ix);
    free(q.v);
    for (size_t i = 0; i < n; i++) pos[r->src[i]] = (uint32_t)i;
    r->root_pos = pos[croot];
    r->lparent = tl_xmalloc(n * sizeof *r->lparent);
    r->coff = tl_xmalloc((n + 1) * sizeof *r->coff);
    u32vec ch = {0};
    uint32_t kkey = tl_strpool_find(&es->keys, "kernel", 6);
    TL_VEC(uint32_t) disp = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t u = r->src[i];
        uint32_t p = u == croot || u >= tr->n ? NONE : tr->parent[u];
        r->lparent[i] = p == NONE ? NONE : pos[p];
        r->coff[i] = (uint32_t)ch.n;
        size_t nc;
        const uint32_t *c = children_of(tr, u, croot, wroots, &nc);
        for (size_t k = 0; k < nc; k++)
            if (pos[c[k]] != NONE) TL_PUSH(ch, pos[c[k]]);
        uint8_t cat = es->cat[u];
        if ((cat == TL_CAT_CUDA_RUNTIME || cat == TL_CAT_CUDA_DRIVER) && u != croot) {
            const char *nm = tl_es_name(es, u);
            if (tl_launch_call_kind(nm) != TL_LAUNCH_NONE) /* Launch, Memcpy or Memset (§1.5) */
                TL_PUSH(disp, (uint32_t)i);
        }
    }
    r->coff[n] = (uint32_t)ch.n;
    r->cidx = ch.v ? ch.v : tl_xmalloc(sizeof *r->cidx);
    r->disp = disp.v ? disp.v : tl_xmalloc(sizeof *r->disp);
    r->nd = disp.n;
    r->isdisp = tl_xcalloc(n + 1, 1);
    for (size_t d = 0; d < r->nd; d++) r->isdisp[r->disp[d]] = 1;
    r->dkid = tl_xmalloc((r->nd + 1) * sizeof *r->dkid);
    r->dfl = tl_xmalloc(r->nd + 1);
    for (size_t d = 0; d < r->nd; d++) {
        uint32_t u = r->src[r->disp[d]];
        const char *nm = tl_es_name(es, u);
        uint8_t f = (uint8_t)((strstr(nm, "Memcpy") ? D_MEMCPY : 0) | (strstr(nm, "Memset") ? D_MEMSET : 0));
        int isint = 0;
        uint32_t vid = kkey == UINT32_MAX ? UINT32_MAX : tl_es_arg_raw(es, u, kkey, &isint);
        uint32_t id = NOMATCH;
        if (vid != UINT32_MAX || isint) {
            f |= D_KERNEL;
            const char *raw = vid == UINT32_MAX ? "" : tl_json_ws(tl_strpool_get(&es->values, vid));
            if (*raw == '"') {
                size_t span = tl_json_string_span(raw + 1);
                char *buf = tl_xmalloc(span + 4);
                const char *after;
                size_t len = tl_json_decode_string(raw + 1, buf, &after);
                id = tl_strpool_find(&m->es->names, buf, len);
                free(buf);
            }
        } else {
            id = tl_strpool_find(&m->es->names, nm, strlen(nm));
        }
        r->dkid[d] = id;
        r->dfl[d] = f;
    }
    for (size_t i = 0; i < n; i++) pos[r->src[i]] = NONE;
    return r;
}

/* find_capture_roots: the i-th StreamBeginCapture with the i-th
 * StreamEndCapture; a CaptureRoot event (cuda_runtime, the window's time)
 * is appended to the capture store for each, over the window's top
 * cpu_ops and python functions (those whose parent lies outside). */
static void find_capture_roots(merge *m, ctree *c, const char *file)
{
    tl_trace *ct = c->ct;
    tl_event_store *es = &ct->es;
    u32vec beg = {0}, end = {0};
    for (size_t u = 0; u < es->n; u++) {
        if (es->cat[u] != TL_CAT_CUDA_RUNTIME) continue;
        const char *nm = tl_es_name(es, u);
        if (strstr(nm, "StreamBeginCapture")) TL_PUSH(beg, (uint32_t)u);
        if (strstr(nm, "StreamEndCapture")) TL_PUSH(end, (uint32_t)u);
    }
    size_t npair = beg.n < end.n ? beg.n : end.n, n0 = es->n;
    uint8_t *inwin = tl_xcalloc(n0 + npair + 1, 1), *seen = tl_xcalloc(n0 + npair + 1, 1);
    uint32_t *pos = tl_xmalloc((n0 + npair + 1) * sizeof *pos);
    memset(pos, 0xff, (n0 + npair + 1) * sizeof *pos);
    uint32_t cat_rt = tl_strpool_intern(&es->cats, "cuda_runtime", 12);
    uint32_t nm_root = tl_strpool_intern(&es->names, "CaptureRoot", 11);
    uint32_t absent = tl_es_idval(es, 2, 0);
    c->roots = tl_xcalloc(npair + 1, sizeof *c->roots);
    for (size_t i = 0; i < npair; i++) {
        int64_t ws = tl_es_end(es, beg.v[i]), we = es->ts[end.v[i]];
        u32vec wr = {0};
        for (size_t u = 0; u < n0; u++)
            inwin[u] = (es->flags[u] & TL_F_TS) && es->ts[u] >= ws && tl_es_end(es, u) <= we;
        for (size_t u = 0; u < n0; u++) {
            if (!inwin[u] || (es->cat[u] != TL_CAT_CPU_OP && es->cat[u] != TL_CAT_PYTHON_FUNCTION)) continue;
            uint32_t p = u < ct->tree.n ? ct->tree.parent[u] : NONE;
            if (p != NONE && !inwin[p]) TL_PUSH(wr, (uint32_t)u);
        }
        /* the CaptureRoot */
        size_t r = es->n;
        if (r == es->cap) tl_es_grow(es, es->cap + 16);
        es->ts[r] = ws;
        es->dur[r] = we > ws ? we - ws : 0;
        tl_es_set_corr(es, r, TL_NONE);
        es->name[r] = nm_root;
        es->cat_id[r] = cat_rt;
        es->cat[r] = TL_CAT_CUDA_RUNTIME;
        es->ph[r] = 0;
        es->flags[r] = TL_F_TS | TL_F_DUR | TL_F_ARGS;
        tl_es_set_thread(es, r, absent, absent);
        tl_es_set_args_end(es, r + 1, es->blob_len);
        es->n = r + 1;
        for (size_t k = 0; k < wr.n; k++) ct->tree.parent[wr.v[k]] = (uint32_t)r;
        char label[600];
        snprintf(label, sizeof label, "%s (capture root %zu)", file, i + 1);
        troot *t = make_template(m, ct, (uint32_t)r, &wr, pos, seen, label);
        TL_PUSH(m->all_roots, t);
        c->roots[c->nroots++] = t;
        free(wr.v);
    }
    free(inwin);
    free(seen);
    free(pos);
    free(beg.v);
    free(end.v);
}

static void release_entry(ctree *c)
{
    tl_trace_release(c->ct);
    free(c->key);
    free(c->roots); /* the templates stay in all_roots */
}

/* The least recently used cache entry (the cache is not empty). */
static ctree *oldest(merge *m)
{
    ctree *c = &m->cache[0];
    for (size_t i = 1; i < m->ncache; i++)
        if (m->cache[i].stamp < c->stamp) c = &m->cache[i];
    return c;
}

/* Drops entry c from the cache (the last one takes its place). */
static void evict(merge *m, ctree *c)
{
    release_entry(c);
    *c = m->cache[--m->ncache];
}

/* The text (decompressed bytes) of the capture traces in the cache. */
static uint64_t cached_text(const merge *m)
{
    uint64_t b = 0;
    for (size_t i = 0; i < m->ncache; i++) b += m->cache[i].ct->es.bytes;
    return b;
}

/* The capture trace of (key, path), through the per-call LRU cache; NULL
 * with m->err set when it cannot be loaded. */
static ctree *capture_tree(merge *m, const char *key, const char *path, const char *file)
{
    size_t kl = strlen(key), pl = strlen(path);
    for (size_t i = 0; i < m->ncache; i++) {
        ctree *c = &m->cache[i];
        if (!strcmp(c->key, key) && !strcmp(c->key + kl + 1, path)) {
            c->stamp = ++m->clock;
            return c;
        }
    }
    tl_load_opts lo = {.with_python = 1};
    tl_trace *ct;
    if (m->max_text) {
        /* under a budget: the cached traces and the new one's text within it
         * (the oldest cached ones let go first; a template outlives its
         * trace), the new one read only up to what is left */
        while (m->ncache && cached_text(m) > m->max_text / 2) evict(m, oldest(m));
        lo.max_text_bytes = m->max_text - cached_text(m);
        ct = tl_trace_load(path, &lo, m->err);
        if (!ct && m->ncache && strstr(m->err->msg, TL_SOURCE_TOO_LARGE)) { /* all of it for this one */
            while (m->ncache) evict(m, &m->cache[0]);
            lo.max_text_bytes = m->max_text;
            ct = tl_trace_load(path, &lo, m->err);
        }
    } else {
        ct = tl_trace_load(path, &lo, m->err);
    }
    if (!ct) return NULL;
    ctree *c;
    if (m->ncache < CACHE_MAX) {
        c = &m->cache[m->ncache++];
    } else {
        c = oldest(m);
        release_entry(c);
    }
    memset(c, 0, sizeof *c);
    c->key = tl_xmalloc(kl + pl + 2);
    memcpy(c->key, key, kl + 1);
    memcpy(c->key + kl + 1, path, pl + 1);
    c->ct = ct;
    c->stamp = ++m->clock;
    find_capture_roots(m, c, file);
    return c;
}

/* ------------------------------------------------------- alignment */

typedef struct kinfo {
    uint32_t *k;       /* the graph launch's GPU events, by ts */
    uint8_t *fl;       /* K_* */
    size_t n;
} kinfo;

static int nmatch(const troot *r, size_t d, const tl_event_store *es, const kinfo *K, size_t i)
{
    uint8_t f = r->dfl[d];
    if ((f & D_MEMCPY) && (K->fl[i] & K_MEMCPY)) return 1;
    if ((f & D_MEMSET) && (K->fl[i] & K_MEMSET)) return 1;
    return r->dkid[d] != NOMATCH && r->dkid[d] == es->name[K->k[i]];
}

static int64_t stream_of(const tl_event_store *es, uint32_t k)
{
    int64_t v;
    if (tl_es_arg_int(es, k, TL_K_STREAM, &v)) return v == INT64_MIN ? INT64_MIN + 1 : v;
    int isint;
    uint32_t vid = tl_es_arg_raw(es, k, TL_K_STREAM, &isint);
    return vid == UINT32_MAX ? INT64_MIN : INT64_MIN + 2 + (int64_t)vid; /* absent / another JSON value */
}

/* Multistream: per-stream FIFO queues of kernels; each dispatch pairs with
 * the head it name-matches (the longest forward run on a tie). pd[i] = the
 * dispatch of kernel i. Returns 0 when a kernel stays unpaired. */
static int align_streams(const troot *r, const tl_event_store *es, const kinfo *K, uint32_t *pd)
{
    TL_VEC(int64_t) sv = {0};
    uint32_t *sid = tl_xmalloc(K->n * sizeof *sid);
    for (size_t i = 0; i < K->n; i++) {
        int64_t s = stream_of(es, K->k[i]);
        size_t j = 0;
        while (j < sv.n && sv.v[j] != s) j++;
        if (j == sv.n) TL_PUSH(sv, s);
        sid[i] = (uint32_t)j;
    }
    size_t ns = sv.n;
    /* queue of stream s: qv[qoff[s] .. qoff[s+1]), head qh[s] */
    uint32_t *qoff = tl_xcalloc(ns + 1, sizeof *qoff), *qv = tl_xmalloc(K->n * sizeof *qv), *qh = tl_xcalloc(ns, sizeof *qh);
    for (size_t i = 0; i < K->n; i++) qoff[sid[i] + 1]++;
    for (size_t s = 0; s < ns; s++) qoff[s + 1] += qoff[s];
    for (size_t i = 0; i < K->n; i++) qv[qoff[sid[i]] + qh[sid[i]]++] = (uint32_t)i;
    memset(qh, 0, ns * sizeof *qh);
    for (size_t i = 0; i < K->n; i++) pd[i] = NONE;
    uint32_t *cand = tl_xmalloc(ns * sizeof *cand);
    for (size_t ci = 0; ci < r->nd; ci++) {
        size_t nc = 0;
        for (size_t s = 0; s < ns; s++)
            if (qoff[s] + qh[s] < qoff[s + 1] && nmatch(r, ci, es, K, qv[qoff[s] + qh[s]])) cand[nc++] = (uint32_t)s;
        if (!nc) continue;
        uint32_t best = cand[0];
        if (nc > 1) {
            long best_run = -1;
            for (size_t c = 0; c < nc; c++) {
                uint32_t s = cand[c];
                size_t len = qoff[s + 1] - qoff[s] - qh[s], run = 0;
                while (run < len && ci + run < r->nd && nmatch(r, ci + run, es, K, qv[qoff[s] + qh[s] + run])) run++;
                if ((long)run > best_run) {
                    best_run = (long)run;
                    best = s;
                }
            }
        }
        pd[qv[qoff[best] + qh[best]++]] = (uint32_t)ci;
    }
    int ok = 1;
    for (size_t i = 0; i < K->n && ok; i++) ok = pd[i] != NONE;
    free(sid);
    free(sv.v);
    free(qoff);
    free(qv);
    free(qh);
    free(cand);
    return ok;
}

/* Group alignment (code 3): k-th dispatch of a name with the k-th kernel
 * of that name, in capture order. pk/pd: the pairs. */
static int align_groups(const troot *r, const tl_event_store *es, const kinfo *K, uint32_t *pk, uint32_t *pd)
{
    tl_map ix;
    tl_map_init(&ix, K->n + r->nd + 1);
    TL_VEC(size_t) gc = {0}, cc = {0};
    uint32_t *gkey = tl_xmalloc((K->n + 1) * sizeof *gkey);
    int ok = 1;
    for (size_t i = 0; i < K->n; i++) {
        uint32_t nm = es->name[K->k[i]], g = tl_map_get(&ix, nm, 0);
        if (g == UINT32_MAX) {
            g = (uint32_t)gc.n;
            tl_map_put(&ix, nm, 0, g);
            TL_PUSH(gc, 0);
            TL_PUSH(cc, 0);
        }
        gkey[i] = g;
        gc.v[g]++;
    }
    for (size_t d = 0; d < r->nd && ok; d++) {
        uint32_t g = r->dkid[d] == NOMATCH ? UINT32_MAX : tl_map_get(&ix, r->dkid[d], 0);
        if (g == UINT32_MAX) ok = 0;
        else cc.v[g]++;
    }
    for (size_t g = 0; g < gc.n && ok; g++) ok = gc.v[g] == cc.v[g];
    if (ok) {
        /* kernels of group g in order: gv[goff[g] ..] */
        uint32_t *goff = tl_xcalloc(gc.n + 1, sizeof *goff), *gv = tl_xmalloc((K->n + 1) * sizeof *gv);
        uint32_t *fill = tl_xcalloc(gc.n + 1, sizeof *fill);
        for (size_t g = 0; g < gc.n; g++) goff[g + 1] = goff[g] + (uint32_t)gc.v[g];
        for (size_t i = 0; i < K->n; i++) gv[goff[gkey[i]] + fill[gkey[i]]++] = (uint32_t)i;
        memset(fill, 0, (gc.n + 1) * sizeof *fill);
        for (size_t d = 0; d < r->nd; d++) {
            uint32_t g = tl_map_get(&ix, r->dkid[d], 0);
            pk[d] = gv[goff[g] + fill[g]++];
            pd[d] = (uint32_t)d;
        }
        free(goff);
        free(gv);
        free(fill);
    }
    free(gkey);
    free(gc.v);
    free(cc.v);
    tl_map_free(&ix);
    return ok;
}

/* Pairs the template's dispatches with the kernels: *np pairs (kernel
 * index pk[i], dispatch pd[i]) in the order they are connected. Returns
 * the reference's code (1 positional, 2 greedy, 3 group, 4 streams), 0 when
 * they cannot be aligned, -1 when the whole merge fails. */
static int align(merge *m, const troot *r, const kinfo *K, uint32_t *pk, uint32_t *pd, size_t *np, const char *what)
{
    const tl_event_store *es = m->es;
    int multi = 0;
    int64_t s0 = K->n ? stream_of(es, K->k[0]) : 0;
    for (size_t i = 1; i < K->n && !multi; i++) multi = stream_of(es, K->k[i]) != s0;
    if (multi) {
        for (size_t d = 0; d < r->nd; d++)
            if (!(r->dfl[d] & (D_KERNEL | D_MEMCPY | D_MEMSET))) {
                note(m, "%s: the graph uses several streams but capture dispatches carry no kernel names (args.kernel): "
                        "the merge fails",
                     what);
                return -1;
            }
        uint32_t *byk = tl_xmalloc((K->n + 1) * sizeof *byk);
        int ok = align_streams(r, es, K, byk);
        if (ok)
            for (size_t i = 0; i < K->n; i++) pk[i] = (uint32_t)i, pd[i] = byk[i];
        free(byk);
        *np = K->n;
        return ok ? 4 : 0;
    }
    if (r->nd != K->n) { /* greedy forward scan */
        size_t j = 0;
        for (size_t i = 0; i < K->n; i++) {
            while (j < r->nd && !nmatch(r, j, es, K, i)) j++;
            if (j == r->nd) return 0;
            pk[i] = (uint32_t)i;
            pd[i] = (uint32_t)j++;
        }
        *np = K->n;
        return 2;
    }
    int unverified = 0;
    for (size_t i = 0; i < K->n; i++) {
        if (!(r->dfl[i] & D_KERNEL)) {
            if (!(r->dfl[i] & (D_MEMCPY | D_MEMSET))) unverified = 1;
            continue;
        }
        if (r->dkid[i] != es->name[K->k[i]]) {
            *np = K->n;
            return align_groups(r, es, K, pk, pd) ? 3 : 0;
        }
    }
    if (unverified) note(m, "%s: a capture dispatch carries no kernel name: alignment not verified", what);
    for (size_t i = 0; i < K->n; i++) pk[i] = pd[i] = (uint32_t)i;
    *np = K->n;
    return 1;
}

/* ----------------------------------------------------------- grafts */

static void grow_tree(merge *m)
{
    size_t n = m->es->n;
    if (n <= m->pcap) return;
    size_t nc = n > m->pcap + m->pcap / 2 ? n : m->pcap + m->pcap / 2;
    m->t->parent = tl_big_realloc(m->t->parent, nc * sizeof *m->t->parent);
    m->t->in_tree = tl_big_realloc(m->t->in_tree, nc);
    m->pcap = nc;
}

/* Copies the template after the last event; returns the copy's base UID. */
static uint32_t place(merge *m, troot *r, const ctree *c, uint32_t g)
{
    tl_event_store *es = m->es;
    uint32_t base = (uint32_t)es->n;
    if (r->placed == NONE) {
        size_t s0 = es->n_seq;
        copy_events(es, &c->ct->es, r->src, r->n);
        r->placed = base;
        r->nseq = es->n_seq - s0;
        r->seqs = tl_xmalloc((r->nseq + 1) * sizeof *r->seqs);
        for (size_t i = 0; i < r->nseq; i++) {
            r->seqs[i].pos = es->seq_pairs[s0 + i].uid - base;
            r->seqs[i].seq = es->seq_pairs[s0 + i].seq;
        }
    } else {
        copy_block(es, r->placed, r->n);
        for (size_t i = 0; i < r->nseq; i++) {
            TL_GROW(es->seq_pairs, es->cap_seq, es->n_seq + 1);
            es->seq_pairs[es->n_seq].seq = r->seqs[i].seq;
            es->seq_pairs[es->n_seq].uid = base + r->seqs[i].pos;
            es->n_seq++;
        }
    }
    const uint8_t tmask = TL_F_TS | TL_F_DUR | TL_F_NEGDUR | TL_F_TS_INT | TL_F_DUR_INT;
    uint8_t gf = es->flags[g] & tmask;
    int64_t ts = es->ts[g], dur = es->dur[g];
    for (size_t i = 0; i < r->n; i++) {
        es->ts[base + i] = ts;
        es->dur[base + i] = dur;
        es->flags[base + i] = (uint8_t)((es->flags[base + i] & ~tmask) | gf);
    }
    grow_tree(m);
    for (size_t i = 0; i < r->n; i++) {
        m->t->parent[base + i] = r->lparent[i] == NONE ? NONE : base + r->lparent[i];
        m->t->in_tree[base + i] = 1;
    }
    return base;
}

/* Merges template r under graph launch g (one pair of the reference's loop). */
static int graft_pair(merge *m, troot *r, const ctree *c, uint32_t g)
{
    const tl_event_store *es = m->es;
    const tl_tree *rt = m->t; /* its CSR arrays are the replay's until the end */
    char what[900];
    snprintf(what, sizeof what, "%s -> graph launch %u (%s)", r->label, g, tl_es_name(es, g));
    if (m->merged[g]) {
        note(m, "%s: already merged (overlapping iteration annotations); skipped", what);
        m->sum->n_skipped++;
        return 0;
    }
    /* the launch's GPU events: BFS of its subtree, stable by ts */
    u32vec q = {0}, kv = {0};
    TL_PUSH(q, g);
    for (size_t h = 0; h < q.n; h++) {
        uint32_t u = q.v[h];
        if (tl_is_gpu_cat(es->cat[u])) TL_PUSH(kv, u);
        tl_span ch = tl_tree_child_span(rt, u);
        for (uint32_t k = ch.b; k < ch.e; k++) TL_PUSH(q, rt->children.v[k]);
    }
    free(q.v);
    if (!kv.n) {
        note(m, "%s: the graph launch has no kernels; skipped", what);
        m->sum->n_skipped++;
        free(kv.v);
        return 0;
    }
    size_t *ix = tl_xmalloc(kv.n * sizeof *ix);
    for (size_t i = 0; i < kv.n; i++) ix[i] = kv.v[i];
    tl_msort(ix, kv.n, tl_idx_cmp_i64, es->ts);
    kinfo K = {tl_xmalloc(kv.n * sizeof *K.k), tl_xmalloc(kv.n), kv.n};
    for (size_t i = 0; i < kv.n; i++) {
        K.k[i] = (uint32_t)ix[i];
        const char *nm = tl_es_name(es, K.k[i]);
        K.fl[i] = (uint8_t)((strstr(nm, "Memcpy") ? K_MEMCPY : 0) |
                            (strstr(nm, "Memset") || strstr(nm, "fillBuffer") ? K_MEMSET : 0));
    }
    free(ix);
    free(kv.v);
    size_t cap = (K.n > r->nd ? K.n : r->nd) + 1, np = 0;
    uint32_t *pk = tl_xmalloc(cap * sizeof *pk), *pd = tl_xmalloc(cap * sizeof *pd);
    int code = align(m, r, &K, pk, pd, &np, what), merged = 0;
    if (code <= 0) {
        if (code < 0) m->sum->failed = 1;
        else
            note(m, "%s: %zu capture dispatches do not align with %zu kernels; skipped", what, r->nd, K.n);
        m->sum->n_skipped++;
        goto done;
    }
    if (m->es->n + r->n >= (size_t)UINT32_MAX - 1) { /* UIDs are 32-bit */
        note(m, "%s: the merged trace would pass 4294967294 events; skipped", what);
        m->sum->n_skipped++;
        goto done;
    }
    uint32_t base = place(m, r, c, g);
    tl_event_store *mes = m->es;
    tl_tree *t = m->t;
    uint32_t croot = base + r->root_pos;
    t->parent[croot] = g;
    tl_map_put(&m->over, g, 0, croot);
    m->merged[g] = 1;
    graft gr = {base, r};
    TL_PUSH(m->grafts, gr);
    for (size_t i = 0; i < np; i++) {
        uint32_t k = K.k[pk[i]], d = base + r->disp[pd[i]];
        tl_map_put(&m->over, d, 0, k);
        t->parent[k] = d;
        tl_es_set_corr(mes, k, mes->ph[d] == 's' || mes->ph[d] == 'f' ? TL_NONE : tl_es_corr(mes, d));
        for (uint32_t a = d; a != NONE; a = t->parent[a]) {
            edge e = {a, k};
            TL_PUSH(m->app, e);
        }
    }
    m->sum->n_merged++;
    m->sum->n_kernels_linked += np;
    m->sum->n_events_added += r->n;
    merged = 1;
done:
    free(pk);
    free(pd);
    free(K.k);
    free(K.fl);
    return merged;
}

/* ------------------------------------------------------ final tree */

/* The graft that copied event u (u past the replay's events); list_fn asks
 * in UID order, so the last answer is tried first. */
static const graft *graft_of(merge *m, uint32_t u)
{
    const graft *g = m->grafts.v;
    size_t k = m->gcur;
    if (g[k].base <= u && (k + 1 == m->grafts.n || u < g[k + 1].base)) return &g[k];
    if (k + 1 < m->grafts.n && g[k + 1].base <= u && (k + 2 == m->grafts.n || u < g[k + 2].base)) {
        m->gcur = k + 1;
        return &g[k + 1];
    }
    size_t lo = 0, hi = m->grafts.n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (m->grafts.v[mid].base <= u) lo = mid;
        else hi = mid;
    }
    m->gcur = lo;
    return &m->grafts.v[lo];
}

static size_t list_fn(void *ctx, uint32_t u, int which, uint32_t *out)
{
    merge *m = ctx;
    const tl_tree *t = m->t;
    if (which == 0) {
        const graft *g = u < m->n0 ? NULL : graft_of(m, u);
        uint32_t j = g ? u - g->base : 0;
        if (g ? g->r->isdisp[j] : m->merged[u]) { /* a merged launch or a copied dispatch */
            uint32_t o = tl_map_get(&m->over, u, 0);
            if (o != UINT32_MAX) {
                if (out) out[0] = o;
                return 1;
            }
        }
        if (!g) {
            size_t n;
            const uint32_t *ch = tl_tree_children(t, u, &n);
            if (out && n) memcpy(out, ch, n * sizeof *out);
            return n;
        }
        size_t n = g->r->coff[j + 1] - g->r->coff[j];
        if (out)
            for (size_t k = 0; k < n; k++) out[k] = g->base + g->r->cidx[g->r->coff[j] + k];
        return n;
    }
    size_t n = 0;
    if (u < m->n0) {
        const uint32_t *gv = tl_tree_gpus(t, u, &n);
        if (out && n) memcpy(out, gv, n * sizeof *out);
    }
    size_t a = m->app_off[u + 1] - m->app_off[u];
    if (out && a) memcpy(out + n, m->app_v + m->app_off[u], a * sizeof *out);
    return n + a;
}

static void finish_tree(merge *m)
{
    size_t n = m->es->n;
    m->app_off = tl_xcalloc(n + 2, sizeof *m->app_off);
    m->app_v = tl_xmalloc((m->app.n + 1) * sizeof *m->app_v);
    for (size_t i = 0; i < m->app.n; i++) m->app_off[m->app.v[i].p + 2]++;
    for (size_t u = 0; u < n; u++) m->app_off[u + 2] += m->app_off[u + 1];
    for (size_t i = 0; i < m->app.n; i++) m->app_v[m->app_off[m->app.v[i].p + 1]++] = m->app.v[i].c;
    tl_tree_relist(m->t, m->es, list_fn, m);
    /* counts the tree keeps */
    tl_tree *t = m->t;
    t->gpu_only = 0;
    for (size_t u = m->n0; u < n; u++)
        if (tl_is_gpu_cat(m->es->cat[u])) {
            t->n_gpu++;
            if (t->parent[u] != NONE) t->n_linked_gpu++;
        }
}

/* ------------------------------------------------------------ entry */

static void merge_free(merge *m)
{
    for (size_t i = 0; i < m->ncache; i++) {
        tl_trace_release(m->cache[i].ct);
        free(m->cache[i].key);
        free(m->cache[i].roots);
    }
    for (size_t i = 0; i < m->all_roots.n; i++) troot_free(m->all_roots.v[i]);
    free(m->all_roots.v);
    tl_map_free(&m->over);
    free(m->merged);
    free(m->grafts.v);
    free(m->app.v);
    free(m->app_off);
    free(m->app_v);
    tl_sb_free(&m->notes);
    free(m->first_note);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* One usable entry of the index (§1.5 step 3, [FIX] only existing files). */
typedef struct centry {
    long bs;
    int piecewise;
    char *path;
    const char *file;
} centry;

tl_trace *tl_trace_merge_capture(const tl_trace *replay, const char *dir, const tl_capture_index *idx,
                                 int pseudo_ops, tl_capture_summary *sum, tl_error *err)
{
    memset(sum, 0, sizeof *sum);
    if (replay->opts.pseudo_ops) {
        tl_error_set(err, "%s: load the replay trace without pseudo ops for the capture merge (they run after it)",
                     replay->path);
        return NULL;
    }
    double t0 = now_s();
    merge m = {0};
    m.rp = replay;
    m.sum = sum;
    m.err = err;
    /* the replay's text is part of the budget: what is left of it for the cache */
    if (idx->max_text_bytes)
        m.max_text = idx->max_text_bytes > replay->es.bytes ? idx->max_text_bytes - replay->es.bytes : 1;
    tl_sb_init(&m.notes);
    tl_map_init(&m.over, 1024);

    /* the capture map: key -> path (last wins), batch sizes of existing files */
    TL_VEC(centry) ce = {0};
    for (size_t i = 0; i < idx->n; i++) {
        const tl_capture_entry *e = &idx->v[i];
        int full = e->mode && !strcmp(e->mode, "FULL"), pw = e->mode && !strcmp(e->mode, "PIECEWISE");
        if ((!full && !pw) || e->batch_size < 0) {
            note(&m, "%s: capture entry skipped (batch size %ld, mode %s)", e->file, e->batch_size,
                 e->mode ? e->mode : "null");
            continue;
        }
        size_t pl = strlen(dir) + strlen(e->file) + 2;
        char *path = tl_xmalloc(pl);
        snprintf(path, pl, "%s/%s", dir, e->file);
        if (!is_file(path)) {
            note(&m, "%s: capture file not found; skipped", path);
            free(path);
            continue;
        }
        centry c = {e->batch_size, pw, path, e->file};
        TL_PUSH(ce, c);
    }

    /* the merged trace: a private copy of the replay */
    tl_trace *T = tl_xcalloc(1, sizeof *T);
    T->opts = replay->opts;
    T->opts.progress = 0;
    T->opts.with_python = 1;
    T->path = tl_xstrdup(replay->path);
    tl_es_copy(&T->es, &replay->es);
    if (replay->tree.with_python) {
        tl_tree_copy(&T->tree, &replay->tree, replay->es.names.n);
    } else {
        tl_tree_opts to = {.with_python = 1};
        tl_tree_build(&T->tree, &T->es, &to);
    }
    atomic_init(&T->refs, 1);
    m.out = T;
    m.es = &T->es;
    m.t = &T->tree;
    m.n0 = m.pcap = T->es.n;
    m.merged = tl_xcalloc(m.n0 + 1, 1);
    const tl_event_store *es = &T->es;

    /* graph launches, by ts */
    uint8_t *kind = tl_launch_kinds(es);
    TL_VEC(size_t) gl = {0};
    for (size_t u = 0; u < es->n; u++)
        if (kind[es->name[u]] == TL_LAUNCH_GRAPH && (es->flags[u] & TL_F_TS)) TL_PUSH(gl, u);
    free(kind);
    tl_msort(gl.v, gl.n, tl_idx_cmp_i64, es->ts);
    sum->n_graph_launches = gl.n;

    /* execution roots: tier-1 annotations, else tier-2, by ts */
    tl_annotations ann;
    tl_annotations_init(&ann, T);
    u32vec roots[2] = {{0}, {0}};
    for (size_t i = 0; i < ann.n; i++) {
        int tier = tl_annotation_tier(&ann, tl_es_name(es, ann.cands[i]));
        if (tier) TL_PUSH(roots[tier - 1], ann.cands[i]);
    }
    const u32vec *ex = roots[0].n ? &roots[0] : &roots[1];
    sum->n_exec_roots = ex->n;
    if (!ex->n && gl.n)
        note(&m, "no iteration annotation (execute_..., step[...], prefill[...] / decode[...], execute_diffusion_...) "
                 "in the replay trace: its graph launches cannot be matched to a capture batch size");
    int rc = 0;
    for (size_t x = 0; x < ex->n && rc == 0; x++) {
        uint32_t e = ex->v[x];
        const char *ename = tl_es_name(es, e);
        int64_t ets = es->ts[e], ete = tl_es_end(es, e);
        size_t lo = 0, hi = gl.n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (es->ts[gl.v[mid]] < ets) lo = mid + 1;
            else hi = mid;
        }
        u32vec gr = {0};
        for (size_t k = lo; k < gl.n && es->ts[gl.v[k]] <= ete; k++)
            if (tl_es_end(es, gl.v[k]) <= ete) TL_PUSH(gr, (uint32_t)gl.v[k]);
        if (!gr.n) continue;
        long batch;
        if (!iteration_batch(&ann, ename, &batch)) {
            note(&m, "iteration annotation %.200s: no batch size in its name; skipped", ename);
            sum->n_skipped++;
            free(gr.v);
            continue;
        }
        const centry *best = NULL;
        for (size_t i = 0; i < ce.n; i++)
            if (ce.v[i].bs >= batch && (!best || ce.v[i].bs < best->bs)) best = &ce.v[i];
        if (!best) {
            note(&m, "iteration annotation %.200s: no capture batch size >= %ld; skipped", ename, batch);
            sum->n_skipped++;
            free(gr.v);
            continue;
        }
        const centry *full = NULL, *pw = NULL; /* last wins */
        for (size_t i = 0; i < ce.n; i++)
            if (ce.v[i].bs == best->bs) *(ce.v[i].piecewise ? &pw : &full) = &ce.v[i];
        const centry *use = full && pw ? (gr.n != 1 ? pw : full) : full ? full : pw;
        char key[64];
        snprintf(key, sizeof key, "%ld_%s", use->bs, use->piecewise ? "PIECEWISE" : "FULL");
        ctree *c = capture_tree(&m, key, use->path, use->file);
        if (!c) {
            rc = -1;
            free(gr.v);
            break;
        }
        if (c->nroots == 1) {
            for (size_t k = 0; k < gr.n; k++) graft_pair(&m, c->roots[0], c, gr.v[k]);
        } else if (c->nroots == gr.n) {
            for (size_t k = 0; k < gr.n; k++) graft_pair(&m, c->roots[k], c, gr.v[k]);
        } else {
            note(&m, "iteration annotation %.200s: %zu capture roots in %s for %zu graph launches; skipped", ename,
                 c->nroots, use->file, gr.n);
            sum->n_skipped++;
        }
        free(gr.v);
    }
    tl_annotations_free(&ann);
    free(roots[0].v);
    free(roots[1].v);
    free(gl.v);
    for (size_t i = 0; i < ce.n; i++) free(ce.v[i].path);
    free(ce.v);

    if (rc == 0 && sum->failed) {
        tl_error_set(err, "%s: capture merge failed: %s", dir, m.first_note ? m.first_note : "");
        rc = -1;
    }
    if (rc == 0 && sum->n_graph_launches && !sum->n_merged) {
        tl_error_set(err, "%s: no capture trace matched a graph launch of %s (%zu graph launches, %zu iteration "
                          "annotations)%s%s",
                     dir, replay->path, sum->n_graph_launches, sum->n_exec_roots, m.first_note ? ": " : "",
                     m.first_note ? m.first_note : "");
        rc = -1;
    }
    if (rc == 0 && !sum->n_graph_launches) note(&m, "the replay trace has no graph launches: nothing to merge");
    if (rc == 0) {
        /* the durations together stay within the loader's bound (every copy repeats its launch's) */
        uint64_t acc = 0;
        for (size_t u = 0; u < T->es.n && acc <= (uint64_t)TL_DUR_MAX_NS; u++) acc += (uint64_t)T->es.dur[u];
        if (acc > (uint64_t)TL_DUR_MAX_NS) {
            tl_error_set(err, "%s: the merged trace's durations add up to more than 1e15 us (out of range)", dir);
            rc = -1;
        }
    }
    if (rc != 0) {
        merge_free(&m);
        tl_trace_release(T);
        memset(sum, 0, sizeof *sum);
        return NULL;
    }
    if (m.n_notes > MAX_NOTES) tl_sb_printf(&m.notes, "%zu more notes not shown\n", m.n_notes - MAX_NOTES);
    if (T->es.n > m.n0) finish_tree(&m);
    T->copied_from = (uint32_t)m.n0; /* the pseudo-op pass below appends after them */
    T->copied_to = (uint32_t)T->es.n;
    sum->notes = m.notes.len ? tl_sb_take(&m.notes) : NULL;
    sum->seconds = now_s() - t0;
    merge_free(&m);
    T->tree_seconds = replay->tree_seconds + (now_s() - t0);
    T->load_seconds = replay->load_seconds;
    if (pseudo_ops) tl_trace_apply_pseudo_ops(T);
    T->capture = tl_xmalloc(sizeof *T->capture);
    tl_capture_summary_copy(T->capture, sum);
    return T;
}

void tl_capture_summary_copy(tl_capture_summary *dst, const tl_capture_summary *src)
{
    *dst = *src;
    dst->notes = src->notes ? tl_xstrdup(src->notes) : NULL;
}

void tl_capture_summary_free(tl_capture_summary *s)
{
    free(s->notes);
    s->notes = NULL;
}
