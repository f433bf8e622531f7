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
typedef tl_edge edge;
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
        int64_t c = tl_es_corr(es, i);
        if (c == TL_NONE || es->ph[i] == 's' || es->ph[i] == 'f') return 0;
        *out = c;
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
        int has_corr = tl_es_corr(es, i) != TL_NONE || tl_es_arg_raw(es, i, TL_K_CORRELATION, &isint) != UINT32_MAX ||
                       isint || tl_es_arg_int(es, i, TL_K_CORRELATION, &v);
        t->link_by_external_id = !has_corr;
        return;
    }
}

/* §3.3: per-thread stacks over host events sorted by ts. Returns in *kids
 * the host events given a parent, in the order they were (the order of
 * their parents' children lists). */
static void build_stacks(tl_tree *t, const tl_event_store *es, u32vec *kids)
{
    u32vec host = {0};
    for (size_t i = 0; i < es->n; i++)
        if (is_host_cat(es->cat[i], t->with_python) && (es->flags[i] & TL_F_TS)) TL_PUSH(host, (uint32_t)i);
    sort_by_ts(host.v, host.n, es->ts);

    /* a stack per thread: (pid, tid) pairs are the store's threads */
    u32vec *stacks = tl_xcalloc(es->n_threads + 1, sizeof *stacks);
    size_t nkids = 0;
    for (size_t k = 0; k < host.n; k++) {
        uint32_t u = host.v[k];
        t->in_tree[u] = 1;
        u32vec *st = &stacks[es->thr[u]];
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
            t->parent[u] = st->v[st->n - 1];
            host.v[nkids++] = u; /* behind k: host is read no further back */
        }
        TL_PUSH(*st, u);
    }
    for (size_t i = 0; i < es->n_threads; i++) free(stacks[i].v);
    free(stacks);
    host.n = nkids;
    *kids = host;
}

static int is_graph_launch(const char *nm)
{
    return !strcmp(nm, "cudaGraphLaunch") || !strcmp(nm, "hipGraphLaunch");
}

/* The (pid, tid) of event i as one key of the link map. */
static inline uint64_t thread_key(const tl_event_store *es, size_t i) { return es->thr[i]; }

/* How many events ahead link_gpu's loops start loading the map slots they
 * will use: its maps hold hundreds of thousands of ids, beyond the caches. */
enum { AHEAD = 16 };

/* Loads the slot the fill pass of link_gpu will insert event i at. */
static void prefetch_put(const tl_tree *t, const tl_event_store *es, size_t i, const tl_map64 *flow_s,
                         const tl_map64 *flow_f, const tl_map *pid_tid_link)
{
    if (t->link_by_external_id) return;
    int64_t id = tl_es_corr(es, i);
    if (id == TL_NONE) return;
    if (es->cat[i] == TL_CAT_AC2G) {
        if (es->ph[i] == 's') tl_map64_prefetch(flow_s, (uint64_t)id);
        else if (es->ph[i] == 'f') tl_map64_prefetch(flow_f, (uint64_t)id);
    } else {
        tl_map_prefetch(pid_tid_link, (uint64_t)id, thread_key(es, i));
    }
}

/* §3.4: runtime -> GPU work via ac2g flows and, for graph launches, the
 * shared correlation. Returns the (runtime, gpu) pairs in runtime-UID order
 * and sets the parent of each linked GPU event. It touches only GPU events'
 * entries, so it runs concurrently with build_stacks (host events). */
static void link_gpu(tl_tree *t, const tl_event_store *es, edgevec *gpu_pairs)
{
    tl_map64 flow_s, flow_f;
    tl_map pid_tid_link;
    size_t nflow = 0, nflow_s = 0, nflow_f = 0, nlink = 0, ngraph = 0;
    /* The link of a flow's end is looked up at the end's (pid, tid) only,
     * and neither may be absent: the events on other threads are left out
     * of that map (they would never be found). f_thread: the threads where
     * a flow ends and both are present; links: events with a link per
     * thread. */
    uint32_t nt = es->n_threads;
    uint32_t *links = tl_xcalloc(nt + 1, sizeof *links);
    uint8_t *f_thread = tl_xcalloc(nt + 1, 1);
    /* the events the passes below look at, in UID order: flows and events
     * with a correlation (every event with args when linking by External
     * id), and the runtime calls; mapped at their largest, of which only
     * the pages written count */
    uint32_t *cand = tl_big_realloc(NULL, (es->n ? es->n : 1) * sizeof *cand);
    uint32_t *calls = tl_big_realloc(NULL, (es->n ? es->n : 1) * sizeof *calls);
    size_t n_cand = 0, n_calls = 0;
    for (size_t i = 0; i < es->n; i++) {
        uint8_t c = es->cat[i];
        if (c == TL_CAT_AC2G) {
            nflow++;
            if (es->ph[i] == 's') nflow_s++;
            else if (es->ph[i] == 'f') {
                nflow_f++;
                f_thread[es->thr[i]] = 1;
            }
            cand[n_cand++] = (uint32_t)i;
        } else if (tl_es_corr(es, i) != TL_NONE) {
            nlink++;
            links[es->thr[i]]++;
            cand[n_cand++] = (uint32_t)i;
        } else if (t->link_by_external_id && (es->flags[i] & TL_F_ARGS)) {
            cand[n_cand++] = (uint32_t)i;
        }
        if (c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) {
            calls[n_calls++] = (uint32_t)i;
            if (c == TL_CAT_CUDA_RUNTIME && is_graph_launch(tl_es_name(es, i))) ngraph++;
        }
    }
    size_t nlink_f = 0;
    for (uint32_t k = 0; k < nt; k++) {
        if (es->idvals[es->threads[k].pid].kind == 2 || es->idvals[es->threads[k].tid].kind == 2) f_thread[k] = 0;
        if (f_thread[k]) nlink_f += links[k];
    }
    free(links);
    tl_map64_init(&flow_s, nflow_s + 1);
    tl_map64_init(&flow_f, nflow_f + 1);
    tl_map_init(&pid_tid_link, nlink_f + 1);
    tl_map gpu_first;            /* link -> first GPU event with it (graph launches) */
    uint32_t *gpu_next = NULL;   /* next GPU event with the same link, UID order */
    tl_map gpu_last;
    if (ngraph) {
        tl_map_init(&gpu_first, nlink + 1);
        tl_map_init(&gpu_last, nlink + 1);
        gpu_next = tl_xmalloc(es->n * sizeof *gpu_next);
    }
    for (size_t k = 0; k < n_cand; k++) {
        if (k + AHEAD < n_cand) prefetch_put(t, es, cand[k + AHEAD], &flow_s, &flow_f, &pid_tid_link);
        size_t i = cand[k];
        uint8_t c = es->cat[i];
        if (c == TL_CAT_AC2G) {
            int64_t id = tl_es_corr(es, i);
            if (id == TL_NONE) continue;
            if (es->ph[i] == 's') tl_map64_put(&flow_s, (uint64_t)id, (uint32_t)i);
            else if (es->ph[i] == 'f') tl_map64_put(&flow_f, (uint64_t)id, (uint32_t)i);
            continue;
        }
        if (!(es->flags[i] & TL_F_ARGS)) continue;
        int64_t link;
        if (!link_of(t, es, i, &link)) continue;
        if (f_thread[es->thr[i]])
            tl_map_put(&pid_tid_link, (uint64_t)link, thread_key(es, i), (uint32_t)i);
        if (ngraph && tl_is_gpu_cat(c)) {
            gpu_next[i] = TL_NOUID;
            uint32_t last = tl_map_get(&gpu_last, (uint64_t)link, 0);
            if (last == UINT32_MAX) tl_map_put(&gpu_first, (uint64_t)link, 0, (uint32_t)i);
            else gpu_next[last] = (uint32_t)i;
            tl_map_put(&gpu_last, (uint64_t)link, 0, (uint32_t)i);
        }
    }
    tl_big_free(cand);
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
    for (size_t k = 0; k < n_calls; k++) {
        if (k + AHEAD < n_calls && !t->link_by_external_id) {
            int64_t ahead = tl_es_corr(es, calls[k + AHEAD]);
            if (ahead != TL_NONE) {
                tl_map64_prefetch(&flow_s, (uint64_t)ahead);
                tl_map64_prefetch(&flow_f, (uint64_t)ahead);
            }
        }
        size_t r = calls[k];
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
        if (tl_map64_get(&flow_s, (uint64_t)link) == UINT32_MAX) continue;
        uint32_t f = tl_map64_get(&flow_f, (uint64_t)link);
        if (f == UINT32_MAX) continue;
        if (!f_thread[es->thr[f]]) continue; /* its pid or tid is absent */
        uint32_t g = tl_map_get(&pid_tid_link, (uint64_t)tl_es_corr(es, f), thread_key(es, f));
        /* only GPU-set events are linked (the reference does not check;
         * linking anything else could make a cycle) */
        if (g == UINT32_MAX || !tl_is_gpu_cat(es->cat[g])) continue;
        edge e = {(uint32_t)r, g};
        TL_PUSH(*gpu_pairs, e);
    }
    /* the pairs' parent and in_tree entries are set by tl_tree_build once
     * this thread is done (it clears parent meanwhile) */
    tl_map64_free(&flow_s);
    tl_map64_free(&flow_f);
    tl_map_free(&pid_tid_link);
    tl_big_free(calls);
    free(f_thread);
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
    tl_csr_from_edges(&t->gpus, t->n, all.v, all.n);
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
                if (es->thr[u] == es->thr[bwd]) continue;
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

/* The children lists: the host events given a parent (in the order the
 * stacks gave them one), then the linked GPU events (a GPU event's runtime
 * parent comes from its pair: two runtime calls sharing a link both list
 * it). The edges are laid out only now, when the maps of the linking are
 * gone (the tree's peak memory was theirs). */
static void build_children(tl_tree *t, const u32vec *kids, const edgevec *gpu_pairs)
{
    size_t m = kids->n + gpu_pairs->n;
    edge *e = tl_xmalloc((m ? m : 1) * sizeof *e);
    for (size_t k = 0; k < kids->n; k++) e[k] = (edge){t->parent[kids->v[k]], kids->v[k]};
    if (gpu_pairs->n) memcpy(e + kids->n, gpu_pairs->v, gpu_pairs->n * sizeof *e);
    tl_csr_from_edges(&t->children, t->n, e, m);
    free(e);
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

typedef struct lists_job {
    tl_tree *t;
    const tl_event_store *es;
    const edgevec *gpu_pairs;
} lists_job;

static void *lists_job_main(void *arg)
{
    lists_job *j = arg;
    build_gpu_events(j->t, j->gpu_pairs);
    link_fwd_bwd(j->t, j->es);
    return NULL;
}

void tl_tree_build(tl_tree *t, const tl_event_store *es, const tl_tree_opts *opts)
{
    memset(t, 0, sizeof *t);
    t->n = es->n;
    t->with_python = opts && opts->with_python;
    t->parent = tl_big_realloc(NULL, (es->n ? es->n : 1) * sizeof *t->parent);
    t->in_tree = tl_big_realloc(NULL, es->n ? es->n : 1);
    choose_link_key(t, es);
    /* the GPU links on a thread of their own (the longer half); here,
     * meanwhile, what needs no link: parent cleared, the counts, the
     * communication names, the stacks */
    gpu_job job = {t, es, {0}};
    pthread_t th;
    int threaded = es->n >= 100000 && pthread_create(&th, NULL, gpu_job_main, &job) == 0;
    if (!threaded) gpu_job_main(&job);
    memset(t->parent, 0xff, es->n * sizeof *t->parent);
    t->gpu_only = 1;
    t->first_launch_ns = INT64_MAX;
    /* first_launch_corr: 0 once a launch call has no id above 0, or a pid of its own */
    int64_t min_corr = INT64_MAX;
    uint32_t launch_pid = UINT32_MAX;
    uint8_t *kind = tl_launch_kinds(es);
    for (size_t i = 0; i < es->n; i++) {
        uint8_t c = es->cat[i];
        if (c == TL_CAT_CPU_OP || c == TL_CAT_PYTHON_FUNCTION) t->gpu_only = 0;
        if (tl_is_gpu_cat(c)) t->n_gpu++;
        if ((c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) && kind[es->name[i]] != TL_LAUNCH_NONE &&
            (es->flags[i] & TL_F_TS)) {
            if (es->ts[i] < t->first_launch_ns) t->first_launch_ns = es->ts[i];
            int64_t id = tl_es_corr(es, i);
            uint32_t pid = tl_es_pid(es, i);
            if (id <= 0 || (launch_pid != UINT32_MAX && pid != launch_pid)) min_corr = 0;
            launch_pid = pid;
            if (id < min_corr) min_corr = id > 0 ? id : 0;
        }
    }
    t->first_launch_corr = min_corr != INT64_MAX && !t->link_by_external_id ? min_corr : 0;
    free(kind);
    t->name_comm = tl_xcalloc(es->names.n + 1, 1);
    for (uint32_t id = 0; id < es->names.n; id++)
        t->name_comm[id] = (uint8_t)tl_name_is_comm(tl_strpool_get(&es->names, id));
    u32vec kids = {0};
    build_stacks(t, es, &kids);
    if (threaded) pthread_join(th, NULL);
    edgevec gpu_pairs = job.pairs;
    t->n_linked_gpu = gpu_pairs.n;
    for (size_t k = 0; k < gpu_pairs.n; k++) { /* a linked GPU event's parent is its runtime call */
        t->parent[gpu_pairs.v[k].c] = gpu_pairs.v[k].p;
        t->in_tree[gpu_pairs.v[k].c] = 1;
    }
    /* the children lists here, the gpu_events lists and the fwd/bwd links
     * beside them (each writes its own arrays of t, reading parent) */
    lists_job lj = {t, es, &gpu_pairs};
    threaded = es->n >= 100000 && pthread_create(&th, NULL, lists_job_main, &lj) == 0;
    if (!threaded) lists_job_main(&lj);
    build_children(t, &kids, &gpu_pairs);
    if (threaded) pthread_join(th, NULL);
    free(kids.v);
    free(gpu_pairs.v);
    /* the rest of the huge pages each array ends in */
    size_t n = es->n;
    tl_big_trim(t->parent, n * sizeof *t->parent);
    tl_big_trim(t->in_tree, n);
}

void tl_tree_free(tl_tree *t)
{
    tl_big_free(t->parent);
    tl_csr_free(&t->children);
    tl_csr_free(&t->gpus);
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
    tl_csr_copy(&dst->children, &src->children);
    tl_csr_copy(&dst->gpus, &src->gpus);
    dst->name_comm = dup_or_null(src->name_comm, n_names + 1);
    dst->fwd_links = dup_or_null(src->fwd_links, src->n_links * sizeof *src->fwd_links);
    dst->bwd_links = dup_or_null(src->bwd_links, src->n_links * sizeof *src->bwd_links);
}

typedef struct relist_ctx {
    tl_tree_list_fn list;
    void *ctx;
    int which;
} relist_ctx;

static size_t relist_one(void *arg, uint32_t u, uint32_t *out)
{
    relist_ctx *r = arg;
    return r->list(r->ctx, u, r->which, out);
}

void tl_tree_relist(tl_tree *t, const tl_event_store *es, tl_tree_list_fn list, void *ctx)
{
    size_t n = es->n;
    tl_csr lists[2];
    for (int w = 0; w < 2; w++) {
        relist_ctx r = {list, ctx, w};
        tl_csr_from_fn(&lists[w], n, relist_one, &r);
    }
    tl_csr_free(&t->children);
    tl_csr_free(&t->gpus);
    t->children = lists[0];
    t->gpus = lists[1];
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
            tl_span ch = tl_tree_child_span(t, v);
            for (uint32_t k = ch.b; k < ch.e; k++) TL_PUSH(stack, t->children.v[k]);
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

uint8_t *tl_blocking_calls(const tl_event_store *es)
{
    /* HTA's lists are CUDA's; a ROCm trace names the same calls hip*
     * (hipMemcpyWithStream: PyTorch's blocking copy on ROCm) */
    static const char *const block[] = {
        "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",       "cudaEventSynchronize",
        "cudaMemcpy",            "cudaMemcpyAsync",       "hipDeviceSynchronize", "hipStreamSynchronize",
        "hipEventQuery",         "hipEventSynchronize",   "hipMemcpy",            "hipMemcpyAsync",
        "hipMemcpyWithStream"};
    uint8_t *b = tl_xcalloc(es->names.n + 1, 1);
    for (size_t i = 0; i < sizeof block / sizeof *block; i++) {
        uint32_t id = tl_strpool_find(&es->names, block[i], strlen(block[i]));
        if (id != UINT32_MAX) b[id] = 1;
    }
    return b;
}

int tl_blocking_call(const tl_tree *t, const tl_event_store *es, const uint8_t *block, uint32_t e)
{
    if (!block[es->name[e]]) return 0;
    if (!tl_contains_ci(tl_es_name(es, e), "memcpyasync")) return 1;
    size_t ng;
    const uint32_t *g = t->parent ? tl_tree_gpus(t, e, &ng) : NULL;
    for (size_t i = 0; g && i < ng; i++) {
        const char *copy = tl_es_name(es, g[i]);
        if (es->cat[g[i]] == TL_CAT_GPU_MEMCPY && (tl_contains_ci(copy, "dtoh") || tl_contains_ci(copy, "pageable")))
            return 1;
    }
    return 0;
}

uint8_t *tl_launch_kinds(const tl_event_store *es)
{
    uint8_t *k = tl_xcalloc(es->names.n + 1, 1);
    for (uint32_t i = 0; i < es->names.n; i++) k[i] = (uint8_t)tl_launch_call_kind(tl_strpool_get(&es->names, i));
    return k;
}
