#include "tree.h"

#include <pthread.h>
#include <string.h>

#include "../util/bigmem.h"
#include "../util/hashmap.h"
#include "timeline.h"
#include "../util/vec.h"
#include "../util/str.h"

enum { BLEED_NS = 1000 };

typedef TL_VEC(uint32_t) u32vec;
typedef struct { uint32_t p, c; } edge;
typedef TL_VEC(edge) edgevec;

/* Stable LSD radix sort of uids by ts (ties keep UID order). */
static void radix_by_ts(uint32_t *u, size_t n, const int64_t *ts)
{
    if (n < 2) return;
    int64_t lo = ts[u[0]], hi = lo;
    for (size_t i = 1; i < n; i++) {
        if (ts[u[i]] < lo) lo = ts[u[i]];
        if (ts[u[i]] > hi) hi = ts[u[i]];
    }
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    uint32_t *tmp = tl_xmalloc(n * sizeof *tmp);
    size_t *cnt = tl_xmalloc(65536 * sizeof *cnt);
    for (int shift = 0; shift < 64 && (range >> shift) != 0; shift += 16) {
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[(((uint64_t)ts[u[i]] - (uint64_t)lo) >> shift) & 0xffff]++;
        size_t sum = 0;
        for (size_t b = 0; b < 65536; b++) {
            size_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) tmp[cnt[(((uint64_t)ts[u[i]] - (uint64_t)lo) >> shift) & 0xffff]++] = u[i];
        memcpy(u, tmp, n * sizeof *u);
    }
    free(cnt);
    free(tmp);
}

/* Sorts uids (given in increasing UID order) by ts, ties in UID order, as
 * a stable sort would. Traces list host events almost in time order, so the
 * events that come before the running maximum of ts are set aside, sorted
 * alone and merged back by (ts, UID) into the in-order rest: one pass and a
 * merge instead of a full sort in the common case. */
static void sort_by_ts(uint32_t *u, size_t n, const int64_t *ts)
{
    if (n < 2) return;
    uint32_t *rest = tl_xmalloc(n * sizeof *rest);
    size_t nm = 0, nr = 0;
    int64_t hi = ts[u[0]];
    for (size_t i = 0; i < n; i++) {
        int64_t t = ts[u[i]];
        if (t >= hi) {
            hi = t;
            u[nm++] = u[i];
        } else {
            rest[nr++] = u[i];
        }
    }
    if (nr) {
        radix_by_ts(rest, nr, ts);
        /* merge from the back into u (the in-order part is its prefix) */
        size_t i = nm, j = nr, k = n;
        while (j > 0) {
            uint32_t a = i ? u[i - 1] : 0, b = rest[j - 1];
            if (i && (ts[a] > ts[b] || (ts[a] == ts[b] && a > b))) u[--k] = a, i--;
            else u[--k] = b, j--;
        }
    }
    free(rest);
}

static int is_host_cat(uint8_t c, int with_python)
{
    return c == TL_CAT_CPU_OP || c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER ||
           (with_python && c == TL_CAT_PYTHON_FUNCTION);
}

/* Link id of an event under the chosen key; 0 when absent. */
static int link_of(const tl_tree *t, const tl_event_store *es, size_t i, int64_t *out)
{
    if (!t->link_by_external_id) {
        if (es->corr[i] == TL_NONE || es->ph[i] == 's' || es->ph[i] == 'f') return 0;
        *out = es->corr[i];
        return 1;
    }
    return tl_es_arg_int(es, i, TL_K_EXTERNAL_ID, out);
}

static void choose_link_key(tl_tree *t, const tl_event_store *es)
{
    t->link_by_external_id = 1;
    for (size_t i = 0; i < es->n; i++) {
        uint8_t c = es->cat[i];
        if (c != TL_CAT_CUDA_RUNTIME && c != TL_CAT_CUDA_DRIVER) continue;
        const char *nm = tl_es_name(es, i);
        int has_launch = 0;
        for (const char *q = nm; *q && !has_launch; q++)
            if ((q[0] | 32) == 'l' && strncasecmp(q, "launch", 6) == 0) has_launch = 1;
        if (!has_launch) continue;
        int64_t v;
        int isint;
        int has_corr = es->corr[i] != TL_NONE || tl_es_arg_raw(es, i, TL_K_CORRELATION, &isint) != UINT32_MAX ||
                       isint || tl_es_arg_int(es, i, TL_K_CORRELATION, &v);
        t->link_by_external_id = !has_corr;
        return;
    }
}

/* §3.3: per-thread stacks over host events sorted by ts. */
static void build_stacks(tl_tree *t, const tl_event_store *es, edgevec *edges)
{
    u32vec host = {0};
    for (size_t i = 0; i < es->n; i++)
        if (is_host_cat(es->cat[i], t->with_python) && (es->flags[i] & TL_F_TS)) TL_PUSH(host, (uint32_t)i);
    sort_by_ts(host.v, host.n, es->ts);

    tl_map thread_ix;
    tl_map_init(&thread_ix, 64);
    TL_VEC(u32vec) stacks = {0};
    for (size_t k = 0; k < host.n; k++) {
        uint32_t u = host.v[k];
        t->in_tree[u] = 1;
        uint32_t th = tl_map_get(&thread_ix, es->pid[u], es->tid[u]);
        if (th == UINT32_MAX) {
            th = (uint32_t)stacks.n;
            tl_map_put(&thread_ix, es->pid[u], es->tid[u], th);
            u32vec empty = {0};
            TL_PUSH(stacks, empty);
        }
        u32vec *st = &stacks.v[th];
        int64_t ts = es->ts[u], te = tl_es_end(es, u);
        while (st->n && ts >= tl_es_end(es, st->v[st->n - 1])) st->n--;
        if (st->n && te > tl_es_end(es, st->v[st->n - 1])) {
            int64_t overlap = tl_es_end(es, st->v[st->n - 1]) - ts;
            if (overlap < BLEED_NS && st->n >= 2) {
                st->n--;
            } else {
                t->n_discarded++;
                t->in_tree[u] = 2; /* in the tree, but not pushed: never a parent nor a root */
                continue;
            }
        }
        if (st->n) {
            uint32_t p = st->v[st->n - 1];
            t->parent[u] = p;
            edge e = {p, u};
            TL_PUSH(*edges, e);
        }
        TL_PUSH(*st, u);
    }
    for (size_t i = 0; i < stacks.n; i++) free(stacks.v[i].v);
    free(stacks.v);
    tl_map_free(&thread_ix);
    free(host.v);
}

static int is_graph_launch(const char *nm)
{
    return !strcmp(nm, "cudaGraphLaunch") || !strcmp(nm, "hipGraphLaunch");
}

/* §3.4: runtime -> GPU work via ac2g flows and, for graph launches, the
 * shared correlation. Returns the (runtime, gpu) pairs in runtime-UID order
 * and sets the parent of each linked GPU event. It touches only GPU events'
 * entries, so it runs concurrently with build_stacks (host events). */
static void link_gpu(tl_tree *t, const tl_event_store *es, edgevec *gpu_pairs)
{
    tl_map flow_s, flow_f, pid_tid_link;
    size_t nflow = 0, nlink = 0, ngraph = 0;
    for (size_t i = 0; i < es->n; i++) {
        if (es->cat[i] == TL_CAT_AC2G) nflow++;
        else if (es->corr[i] != TL_NONE) nlink++;
        if (es->cat[i] == TL_CAT_CUDA_RUNTIME && is_graph_launch(tl_es_name(es, i))) ngraph++;
    }
    tl_map_init(&flow_s, nflow / 2 + 1);
    tl_map_init(&flow_f, nflow / 2 + 1);
    tl_map_init(&pid_tid_link, nlink + 1);
    tl_map gpu_first;            /* link -> first GPU event with it (graph launches) */
    uint32_t *gpu_next = NULL;   /* next GPU event with the same link, UID order */
    tl_map gpu_last;
    if (ngraph) {
        tl_map_init(&gpu_first, nlink + 1);
        tl_map_init(&gpu_last, nlink + 1);
        gpu_next = tl_xmalloc(es->n * sizeof *gpu_next);
    }
    for (size_t i = 0; i < es->n; i++) {
        uint8_t c = es->cat[i];
        if (c == TL_CAT_AC2G) {
            if (es->corr[i] == TL_NONE) continue;
            if (es->ph[i] == 's') tl_map_put(&flow_s, (uint64_t)es->corr[i], 0, (uint32_t)i);
            else if (es->ph[i] == 'f') tl_map_put(&flow_f, (uint64_t)es->corr[i], 0, (uint32_t)i);
            continue;
        }
        if (!(es->flags[i] & TL_F_ARGS)) continue;
        int64_t link;
        if (!link_of(t, es, i, &link)) continue;
        if (es->idvals[es->pid[i]].kind != 2 && es->idvals[es->tid[i]].kind != 2)
            tl_map_put(&pid_tid_link, (uint64_t)link, ((uint64_t)es->pid[i] << 32) | es->tid[i], (uint32_t)i);
        if (ngraph && tl_is_gpu_cat(c)) {
            gpu_next[i] = TL_NOUID;
            uint32_t last = tl_map_get(&gpu_last, (uint64_t)link, 0);
            if (last == UINT32_MAX) tl_map_put(&gpu_first, (uint64_t)link, 0, (uint32_t)i);
            else gpu_next[last] = (uint32_t)i;
            tl_map_put(&gpu_last, (uint64_t)link, 0, (uint32_t)i);
        }
    }
    /* No ac2g flow in the whole trace (a sampled or filtered trace): a
     * kernel, copy or memset launch call is linked to the one GPU event
     * with its link id, when exactly one launch call and one GPU event
     * carry it (docs/compat.md, "GPU work linked by correlation"). */
    const uint32_t AMBIGUOUS = UINT32_MAX - 1; /* no event index reaches it */
    tl_map corr_gpu, corr_rt;
    uint8_t *kind = NULL;
    int by_corr = nflow == 0 && nlink > 0;
    if (by_corr) {
        kind = tl_launch_kinds(es);
        tl_map_init(&corr_gpu, nlink + 1);
        tl_map_init(&corr_rt, nlink + 1);
        for (size_t i = 0; i < es->n; i++) {
            uint8_t c = es->cat[i];
            int gpu = tl_is_gpu_cat(c);
            int launch = (c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) &&
                         (kind[es->name[i]] == TL_LAUNCH_WORK || kind[es->name[i]] == TL_LAUNCH_MEMSET);
            int64_t link;
            if ((!gpu && !launch) || !link_of(t, es, i, &link)) continue;
            tl_map *m = gpu ? &corr_gpu : &corr_rt;
            /* a second event with the id makes it ambiguous */
            tl_map_put(m, (uint64_t)link, 0, tl_map_get(m, (uint64_t)link, 0) == UINT32_MAX ? (uint32_t)i : AMBIGUOUS);
        }
    }
    for (size_t r = 0; r < es->n; r++) {
        uint8_t c = es->cat[r];
        if (c != TL_CAT_CUDA_RUNTIME && c != TL_CAT_CUDA_DRIVER) continue;
        int64_t link;
        if (!link_of(t, es, r, &link)) continue;
        if (ngraph && is_graph_launch(tl_es_name(es, r))) {
            for (uint32_t g = tl_map_get(&gpu_first, (uint64_t)link, 0); g != UINT32_MAX && g != TL_NOUID;
                 g = gpu_next[g]) {
                edge e = {(uint32_t)r, g};
                TL_PUSH(*gpu_pairs, e);
            }
            continue;
        }
        if (by_corr) {
            if (tl_map_get(&corr_rt, (uint64_t)link, 0) != (uint32_t)r) continue;
            uint32_t g = tl_map_get(&corr_gpu, (uint64_t)link, 0);
            if (g == UINT32_MAX || g == AMBIGUOUS) continue;
            edge e = {(uint32_t)r, g};
            TL_PUSH(*gpu_pairs, e);
            t->n_linked_by_corr++;
            continue;
        }
        if (tl_map_get(&flow_s, (uint64_t)link, 0) == UINT32_MAX) continue;
        uint32_t f = tl_map_get(&flow_f, (uint64_t)link, 0);
        if (f == UINT32_MAX) continue;
        if (es->idvals[es->pid[f]].kind == 2 || es->idvals[es->tid[f]].kind == 2) continue;
        uint32_t g = tl_map_get(&pid_tid_link, (uint64_t)es->corr[f], ((uint64_t)es->pid[f] << 32) | es->tid[f]);
        /* only GPU-set events are linked (the reference does not check;
         * linking anything else could make a cycle) */
        if (g == UINT32_MAX || !tl_is_gpu_cat(es->cat[g])) continue;
        edge e = {(uint32_t)r, g};
        TL_PUSH(*gpu_pairs, e);
    }
    for (size_t k = 0; k < gpu_pairs->n; k++) {
        edge e = gpu_pairs->v[k];
        t->parent[e.c] = e.p;
        t->in_tree[e.c] = 1;
    }
    tl_map_free(&flow_s);
    tl_map_free(&flow_f);
    tl_map_free(&pid_tid_link);
    if (by_corr) {
        tl_map_free(&corr_gpu);
        tl_map_free(&corr_rt);
        free(kind);
    }
    if (ngraph) {
        tl_map_free(&gpu_first);
        tl_map_free(&gpu_last);
        free(gpu_next);
    }
}

/* Counting-sort edges into CSR, keeping their order per parent. */
static void to_csr(size_t n, const edgevec *edges, uint32_t **off_out, uint32_t **arr_out)
{
    uint32_t *off = tl_big_realloc(NULL, (n + 1) * sizeof *off); /* zero-filled */
    for (size_t k = 0; k < edges->n; k++) off[edges->v[k].p + 1]++;
    for (size_t i = 0; i < n; i++) off[i + 1] += off[i];
    uint32_t *arr = tl_big_realloc(NULL, (edges->n ? edges->n : 1) * sizeof *arr);
    /* fill each bucket from its end (order kept): off[p + 1] walks down to
     * the start of bucket p; one shift makes off[] the start offsets */
    for (size_t k = edges->n; k-- > 0;) arr[--off[edges->v[k].p + 1]] = edges->v[k].c;
    memmove(off, off + 1, n * sizeof *off);
    off[n] = (uint32_t)edges->n;
    *off_out = off;
    *arr_out = arr;
}

/* gpu_events: each linked GPU event goes to its runtime and every ancestor,
 * in runtime-UID order. */
static void build_gpu_events(tl_tree *t, const edgevec *gpu_pairs)
{
    edgevec all = {0};
    for (size_t k = 0; k < gpu_pairs->n; k++) {
        uint32_t g = gpu_pairs->v[k].c;
        for (uint32_t a = gpu_pairs->v[k].p; a != TL_NOUID; a = t->parent[a]) {
            edge e = {a, g};
            TL_PUSH(all, e);
        }
    }
    to_csr(t->n, &all, &t->gpu_off, &t->gpu);
    free(all.v);
}

typedef struct { int64_t seq; uint32_t uid; } seqpair;

static int cmp_seq(const void *a, const void *b)
{
    const seqpair *x = a, *y = b;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static int cmp_link(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* §3.7: backward op = first "autograd::engine::evaluate_function:" of a
 * Sequence number; forward = latest-starting other-thread event of it. */
static void link_fwd_bwd(tl_tree *t, const tl_event_store *es)
{
    size_t n = es->n_seq;
    if (!n) return;
    seqpair *sp = tl_xmalloc(n * sizeof *sp);
    for (size_t i = 0; i < n; i++) sp[i] = (seqpair){es->seq_pairs[i].seq, es->seq_pairs[i].uid};
    qsort(sp, n, sizeof *sp, cmp_seq);
    t->fwd_links = tl_xmalloc(n * sizeof *t->fwd_links);
    t->bwd_links = tl_xmalloc(n * sizeof *t->bwd_links);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && sp[j].seq == sp[i].seq) j++;
        uint32_t bwd = TL_NOUID;
        for (size_t k = i; k < j && bwd == TL_NOUID; k++)
            if (tl_starts_with(tl_es_name(es, sp[k].uid), "autograd::engine::evaluate_function:")) bwd = sp[k].uid;
        if (bwd != TL_NOUID) {
            uint32_t fwd = TL_NOUID;
            int64_t best = 0;
            for (size_t k = i; k < j; k++) {
                uint32_t u = sp[k].uid;
                if (es->pid[u] == es->pid[bwd] && es->tid[u] == es->tid[bwd]) continue;
                if (fwd == TL_NOUID || es->ts[u] > best) {
                    fwd = u;
                    best = es->ts[u];
                }
            }
            if (fwd != TL_NOUID) {
                t->fwd_links[t->n_links].a = bwd;
                t->fwd_links[t->n_links].b = fwd;
                t->bwd_links[t->n_links].a = fwd;
                t->bwd_links[t->n_links].b = bwd;
                t->n_links++;
            }
        }
        i = j;
    }
    qsort(t->fwd_links, t->n_links, sizeof *t->fwd_links, cmp_link);
    qsort(t->bwd_links, t->n_links, sizeof *t->bwd_links, cmp_link);
    free(sp);
}

typedef struct gpu_job {
    tl_tree *t;
    const tl_event_store *es;
    edgevec pairs;
} gpu_job;

static void *gpu_job_main(void *arg)
{
    gpu_job *j = arg;
    link_gpu(j->t, j->es, &j->pairs);
    return NULL;
}

void tl_tree_build(tl_tree *t, const tl_event_store *es, const tl_tree_opts *opts)
{
    memset(t, 0, sizeof *t);
    t->n = es->n;
    t->with_python = opts && opts->with_python;
    t->parent = tl_big_realloc(NULL, (es->n ? es->n : 1) * sizeof *t->parent);
    memset(t->parent, 0xff, es->n * sizeof *t->parent);
    t->in_tree = tl_big_realloc(NULL, es->n ? es->n : 1);
    t->gpu_only = 1;
    for (size_t i = 0; i < es->n; i++) {
        if (es->cat[i] == TL_CAT_CPU_OP || es->cat[i] == TL_CAT_PYTHON_FUNCTION) t->gpu_only = 0;
        if (tl_is_gpu_cat(es->cat[i])) t->n_gpu++;
    }
    t->name_comm = tl_xcalloc(es->names.n + 1, 1);
    for (uint32_t id = 0; id < es->names.n; id++)
        t->name_comm[id] = (uint8_t)tl_name_is_comm(tl_strpool_get(&es->names, id));
    choose_link_key(t, es);
    edgevec edges = {0};
    gpu_job job = {t, es, {0}};
    pthread_t th;
    int threaded = es->n >= 100000 && pthread_create(&th, NULL, gpu_job_main, &job) == 0;
    if (!threaded) gpu_job_main(&job);
    build_stacks(t, es, &edges);
    if (threaded) pthread_join(th, NULL);
    edgevec gpu_pairs = job.pairs;
    for (size_t k = 0; k < gpu_pairs.n; k++) TL_PUSH(edges, gpu_pairs.v[k]); /* GPU children come last */
    t->n_linked_gpu = gpu_pairs.n;
    to_csr(es->n, &edges, &t->child_off, &t->child);
    build_gpu_events(t, &gpu_pairs);
    free(edges.v);
    free(gpu_pairs.v);
    link_fwd_bwd(t, es);
    /* the rest of the huge pages each array ends in */
    size_t n = es->n;
    tl_big_trim(t->parent, n * sizeof *t->parent);
    tl_big_trim(t->in_tree, n);
    tl_big_trim(t->child_off, (n + 1) * sizeof *t->child_off);
    tl_big_trim(t->child, t->child_off[n] * sizeof *t->child);
    tl_big_trim(t->gpu_off, (n + 1) * sizeof *t->gpu_off);
    tl_big_trim(t->gpu, t->gpu_off[n] * sizeof *t->gpu);
}

void tl_tree_free(tl_tree *t)
{
    tl_big_free(t->parent);
    tl_big_free(t->child_off);
    tl_big_free(t->child);
    tl_big_free(t->gpu_off);
    tl_big_free(t->gpu);
    tl_big_free(t->in_tree);
    free(t->name_comm);
    free(t->fwd_links);
    free(t->bwd_links);
    memset(t, 0, sizeof *t);
}

static void *big_dup(const void *p, size_t bytes)
{
    void *d = tl_big_realloc(NULL, bytes ? bytes : 1);
    if (bytes) memcpy(d, p, bytes);
    return d;
}

static void *dup_or_null(const void *p, size_t bytes)
{
    if (!p) return NULL;
    void *d = tl_xmalloc(bytes ? bytes : 1);
    if (bytes) memcpy(d, p, bytes);
    return d;
}

void tl_tree_copy(tl_tree *dst, const tl_tree *src, size_t n_names)
{
    *dst = *src;
    size_t n = src->n;
    dst->parent = big_dup(src->parent, n * sizeof *src->parent);
    dst->in_tree = big_dup(src->in_tree, n);
    dst->child_off = big_dup(src->child_off, (n + 1) * sizeof *src->child_off);
    dst->child = big_dup(src->child, src->child_off[n] * sizeof *src->child);
    dst->gpu_off = big_dup(src->gpu_off, (n + 1) * sizeof *src->gpu_off);
    dst->gpu = big_dup(src->gpu, src->gpu_off[n] * sizeof *src->gpu);
    dst->name_comm = dup_or_null(src->name_comm, n_names + 1);
    dst->fwd_links = dup_or_null(src->fwd_links, src->n_links * sizeof *src->fwd_links);
    dst->bwd_links = dup_or_null(src->bwd_links, src->n_links * sizeof *src->bwd_links);
}

void tl_tree_relist(tl_tree *t, const tl_event_store *es, tl_tree_list_fn list, void *ctx)
{
    size_t n = es->n, total[2] = {0, 0};
    for (size_t u = 0; u < n; u++)
        for (int w = 0; w < 2; w++) total[w] += list(ctx, (uint32_t)u, w, NULL);
    uint32_t *off[2], *arr[2];
    for (int w = 0; w < 2; w++) {
        off[w] = tl_big_realloc(NULL, (n + 1) * sizeof *off[w]);
        arr[w] = tl_big_realloc(NULL, (total[w] ? total[w] : 1) * sizeof *arr[w]);
        size_t k = 0;
        for (size_t u = 0; u < n; u++) {
            off[w][u] = (uint32_t)k;
            k += list(ctx, (uint32_t)u, w, arr[w] + k);
        }
        off[w][n] = (uint32_t)k;
    }
    tl_big_free(t->child_off);
    tl_big_free(t->child);
    tl_big_free(t->gpu_off);
    tl_big_free(t->gpu);
    t->child_off = off[0];
    t->child = arr[0];
    t->gpu_off = off[1];
    t->gpu = arr[1];
    t->n = n;
    uint8_t *flags = tl_xcalloc(es->names.n + 1, 1);
    for (uint32_t id = 0; id < es->names.n; id++) flags[id] = (uint8_t)tl_name_is_comm(tl_strpool_get(&es->names, id));
    free(t->name_comm);
    t->name_comm = flags;
}

uint32_t tl_tree_launcher(const tl_tree *t, const tl_event_store *es, uint32_t g)
{
    uint32_t rt = t->parent[g];
    if (rt == TL_NOUID) return TL_NOUID;
    for (uint32_t cur = t->parent[rt]; cur != TL_NOUID; cur = t->parent[cur]) {
        uint8_t c = es->cat[cur];
        if (c == TL_CAT_CPU_OP) {
            if (strcmp(tl_es_name(es, cur), "execute") == 0) continue;
            return cur;
        }
        if (c != TL_CAT_PYTHON_FUNCTION) break;
    }
    return rt;
}

static uint32_t find_link(const void *links, size_t n, uint32_t key)
{
    const uint32_t *l = links;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l[2 * mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && l[2 * lo] == key ? l[2 * lo + 1] : TL_NOUID;
}

uint32_t tl_tree_fwd_of(const tl_tree *t, uint32_t bwd) { return find_link(t->fwd_links, t->n_links, bwd); }
uint32_t tl_tree_bwd_of(const tl_tree *t, uint32_t fwd) { return find_link(t->bwd_links, t->n_links, fwd); }

uint8_t *tl_tree_recompute_flags(const tl_tree *t, const tl_event_store *es, size_t *n_roots)
{
    uint8_t *flag = tl_xcalloc(es->n + 1, 1);
    /* the name test once per distinct name */
    uint8_t *root_name = tl_xcalloc(es->names.n + 1, 1);
    for (uint32_t id = 0; id < es->names.n; id++) {
        const char *nm = tl_strpool_get(&es->names, id);
        root_name[id] = strstr(nm, "torch/utils/checkpoint.py") && strstr(nm, "recompute_fn");
    }
    size_t roots = 0;
    u32vec stack = {0};
    for (size_t u = 0; u < es->n; u++) {
        if (es->cat[u] != TL_CAT_PYTHON_FUNCTION || !root_name[es->name[u]]) continue;
        roots++;
        TL_PUSH(stack, (uint32_t)u);
        while (stack.n) {
            uint32_t v = stack.v[--stack.n];
            if (flag[v]) continue; /* already inside an outer recompute region */
            flag[v] = 1;
            if (v >= t->n) continue;
            for (uint32_t k = t->child_off[v]; k < t->child_off[v + 1]; k++) TL_PUSH(stack, t->child[k]);
        }
    }
    free(stack.v);
    free(root_name);
    if (n_roots) *n_roots = roots;
    return flag;
}

tl_launch_kind tl_launch_call_kind(const char *name)
{
    if (tl_contains_ci(name, "graphlaunch")) return TL_LAUNCH_GRAPH;
    if (tl_contains_ci(name, "launch") || tl_contains_ci(name, "memcpy")) return TL_LAUNCH_WORK;
    if (tl_contains_ci(name, "memset")) return TL_LAUNCH_MEMSET;
    return TL_LAUNCH_NONE;
}

uint8_t *tl_launch_kinds(const tl_event_store *es)
{
    uint8_t *k = tl_xcalloc(es->names.n + 1, 1);
    for (uint32_t i = 0; i < es->names.n; i++) k[i] = (uint8_t)tl_launch_call_kind(tl_strpool_get(&es->names, i));
    return k;
}
