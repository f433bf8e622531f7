/* critical_path.c — see critical_path.h. */
#include "critical_path.h"

#include <stdlib.h>
#include <string.h>

#include "steps.h"
#include "../util/hashmap.h"
#include "../util/msort.h"
#include "../util/numsort.h"
#include "../util/vec.h"

#define NONE32 UINT32_MAX

const char *tl_cp_edge_type_name(int type)
{
    static const char *const n[] = {"critical_path_operator", "critical_path_dependency",
                                    "critical_path_kernel_launch_delay", "critical_path_kernel_kernel_delay",
                                    "critical_path_sync_dependency"};
    return type >= 0 && type < TL_CPE__COUNT ? n[type] : "?";
}

const char *tl_cp_cat_name(int cat)
{
    static const char *const n[] = {"cpu_bound", "gpu_compute_bound", "gpu_communication_bound",
                                    "gpu_kernel_launch_overhead", "gpu_kernel_kernel_overhead"};
    return cat >= 0 && cat < TL_CPC__COUNT ? n[cat] : "?";
}

/* The kinds of event the graph knows. */
enum {
    K_OTHER = 0,   /* CPU-side, no node (annotations, ...) */
    K_OP,          /* cpu_op */
    K_RUNTIME,     /* cuda_runtime / cuda_driver */
    K_GPU,         /* kernel, memcpy, memset */
    K_SYNC,        /* cuda_sync */
};

/* cuda_sync kinds */
enum { SY_NONE = 0, SY_STREAM, SY_CONTEXT, SY_EVENT, SY_WAIT };

typedef struct cp {
    const tl_event_store *es;
    const tl_tree *tree;
    tl_error *err;
    uint8_t *kind;          /* per UID */
    uint32_t *partner;      /* per UID: runtime <-> GPU-side event of the same correlation */
    uint8_t *in_win;        /* per UID: in the clipped window */
    uint32_t *nstart, *nend;/* per UID: node indices */
    uint8_t *name_block, *name_lock, *name_sync; /* per names id */
    uint8_t *launch_kind;   /* per names id (tl_launch_kinds) */
    uint32_t k_wait_corr, k_wait_stream;
    tl_cp_node *nodes;
    size_t n_nodes;
    TL_VEC(tl_cp_edge) edges;
    tl_map edge_ix;         /* (from, to) -> edge index */
} cp;

/* ------------------------------------------------------------ helpers */

static int64_t arg_int(const cp *c, uint32_t e, uint32_t key, int64_t dflt)
{
    int64_t v;
    if (key == NONE32 || !tl_es_arg_int(c->es, e, key, &v)) return dflt;
    return v;
}

static int64_t stream_of(const cp *c, uint32_t e)
{
    return arg_int(c, e, TL_K_STREAM, -1);
}

/* A stream key: (GPU pid idval, stream). */
static uint64_t stream_key(const cp *c, uint32_t e)
{
    return ((uint64_t)tl_es_pid(c->es, e) << 32) ^ (uint64_t)(uint32_t)stream_of(c, e);
}

static void add_edge(cp *c, uint32_t from, uint32_t to, int type, int zero, uint32_t attr)
{
    if (from == to) return;
    int64_t w = (type == TL_CPE_DEPENDENCY || type == TL_CPE_SYNC || zero) ? 0 : c->nodes[to].ts - c->nodes[from].ts;
    if (w < 0) w = 0; /* HTA's validation zeroes negative weights */
    tl_cp_edge e = {.from = from, .to = to, .weight = w, .type = (uint8_t)type, .attr = attr};
    uint32_t ix = tl_map_get(&c->edge_ix, from, to);
    if (ix != NONE32) { /* networkx: a second add_edge updates the attributes, keeps the place */
        c->edges.v[ix] = e;
        return;
    }
    tl_map_put(&c->edge_ix, from, to, (uint32_t)c->edges.n);
    TL_PUSH(c->edges, e);
}

/* HTA's attribution of an operator / kernel-kernel edge. */
static uint32_t attribute(const cp *c, uint32_t from, uint32_t to, int type, uint32_t src_parent)
{
    if (type == TL_CPE_KERNEL_KERNEL) return c->nodes[from].ev;
    if (type != TL_CPE_OPERATOR) return TL_NOUID;
    if (c->nodes[from].is_start) return c->nodes[from].ev;
    if (!c->nodes[to].is_start) return c->nodes[to].ev;
    return src_parent;
}

static void add_attr_edge(cp *c, uint32_t from, uint32_t to, int type, int zero, uint32_t src_parent)
{
    add_edge(c, from, to, type, zero, attribute(c, from, to, type, src_parent));
}

static int has_nodes(const cp *c, uint32_t e)
{
    return c->nstart[e] != NONE32;
}

/* ------------------------------------------------------------ classes */

static void classify(cp *c)
{
    const tl_event_store *es = c->es;
    size_t n = es->n;
    uint32_t sync_cat = tl_strpool_find(&es->cats, "cuda_sync", 9);
    c->kind = tl_xcalloc(n ? n : 1, 1);
    c->partner = tl_xmalloc((n ? n : 1) * sizeof *c->partner);
    for (size_t e = 0; e < n; e++) {
        c->partner[e] = NONE32;
        if (es->ph[e] != 'X' || !(es->flags[e] & TL_F_TS)) continue;
        uint8_t k = K_OTHER;
        switch (es->cat[e]) {
        case TL_CAT_CPU_OP: k = K_OP; break;
        case TL_CAT_CUDA_RUNTIME:
        case TL_CAT_CUDA_DRIVER: k = K_RUNTIME; break;
        case TL_CAT_KERNEL:
        case TL_CAT_GPU_MEMCPY:
        case TL_CAT_GPU_MEMSET: k = K_GPU; break;
        case TL_CAT_OTHER:
            if (sync_cat != NONE32 && es->cat_id[e] == sync_cat) k = K_SYNC;
            break;
        default: break;
        }
        c->kind[e] = k;
    }
    /* Partners by correlation id. The tree already links most GPU events to
     * their runtime call (the same pair when the correlation ids agree), so
     * a map is built only for the rest: cuda_sync events and GPU events the
     * tree left unlinked (or linked otherwise). First of each wins. */
    tl_map rest;
    tl_map_init(&rest, 256);
    for (size_t e = 0; e < n; e++) {
        uint8_t k = c->kind[e];
        if ((k != K_GPU && k != K_SYNC) || tl_es_corr(es, e) == TL_NONE) continue;
        uint32_t p = k == K_GPU && c->tree->parent ? c->tree->parent[e] : TL_NOUID;
        if (p != TL_NOUID && c->kind[p] == K_RUNTIME && tl_es_corr(es, p) == tl_es_corr(es, e)) {
            c->partner[e] = p;
            if (c->partner[p] == NONE32) c->partner[p] = (uint32_t)e;
        } else if (tl_map_get(&rest, (uint64_t)tl_es_corr(es, e), 0) == NONE32) {
            tl_map_put(&rest, (uint64_t)tl_es_corr(es, e), 0, (uint32_t)e);
        }
    }
    if (rest.n)
        for (size_t e = 0; e < n; e++) {
            if (c->kind[e] != K_RUNTIME || c->partner[e] != NONE32 || tl_es_corr(es, e) == TL_NONE) continue;
            uint32_t g = tl_map_get(&rest, (uint64_t)tl_es_corr(es, e), 0);
            if (g == NONE32) continue;
            c->partner[e] = g;
            if (c->partner[g] == NONE32) c->partner[g] = (uint32_t)e;
        }
    tl_map_free(&rest);

    size_t nn = es->names.n + 1;
    c->name_lock = tl_xcalloc(nn, 1);
    c->name_sync = tl_xcalloc(nn, 1);
    /* (HTA's blocking calls and their ROCm names: without hipDeviceSynchronize
     * a ROCm step's sync counted as 13 ms of host work on the path; MI300X
     * Qwen: "CPU-bound" at 91% GPU compute) */
    c->name_block = tl_blocking_calls(es);
    static const char *const lock[] = {"cudaHostAlloc",  "cudaLaunchKernel",  "cudaMemcpyAsync", "hipHostAlloc",
                                       "hipHostMalloc", "hipLaunchKernel", "hipExtLaunchKernel", "hipMemcpyAsync"};
    for (size_t i = 0; i < sizeof lock / sizeof *lock; i++) {
        uint32_t id = tl_strpool_find(&es->names, lock[i], strlen(lock[i]));
        if (id != NONE32) c->name_lock[id] = 1;
    }
    static const char *const sy[] = {"Stream Sync", "Context Sync", "Event Sync", "Stream Wait Event"};
    for (int i = 0; i < 4; i++) {
        uint32_t id = tl_strpool_find(&es->names, sy[i], strlen(sy[i]));
        if (id != NONE32) c->name_sync[id] = (uint8_t)(SY_STREAM + i);
    }
    c->launch_kind = tl_launch_kinds(es);
    c->k_wait_corr = tl_strpool_find(&es->keys, "wait_on_cuda_event_record_corr_id", 33);
    c->k_wait_stream = tl_strpool_find(&es->keys, "wait_on_stream", 14);
}

/* A runtime call that enqueues GPU work (HTA's runtime launch events). */
static int is_launch(const cp *c, uint32_t e)
{
    if (c->kind[e] != K_RUNTIME || c->partner[e] == NONE32 || c->kind[c->partner[e]] != K_GPU) return 0;
    uint8_t k = c->launch_kind[c->es->name[e]];
    return k == TL_LAUNCH_WORK || k == TL_LAUNCH_MEMSET;
}

/* ------------------------------------------------------------ window + nodes */

static int step_wall_cmp(void *ctx, size_t a, size_t b)
{
    const tl_step *s = ctx;
    return (s[a].dur > s[b].dur) - (s[a].dur < s[b].dur);
}

static int select_window(cp *c, const tl_trace *t, const tl_cp_opts *o, tl_cpath *out)
{
    const tl_event_store *es = c->es;
    out->step = -1;
    tl_step *st = NULL;
    size_t ns = o && o->whole ? 0 : tl_steps_find(t, &st);
    if (o && o->has_step) {
        size_t k = 0;
        while (k < ns && st[k].number != o->step) k++;
        if (k == ns) {
            tl_error_set(c->err, "no ProfilerStep#%ld in the trace (%zu step%s)", o->step, ns, ns == 1 ? "" : "s");
            free(st);
            return -1;
        }
        out->step = o->step;
        out->win_start = st[k].ts;
        out->win_end = st[k].ts + st[k].dur;
        free(st);
        return 0;
    }
    if (ns) { /* the step of median wall time (the upper median; equal walls in start order) */
        size_t *ix = tl_msort_order(ns, step_wall_cmp, st);
        size_t k = ix[ns / 2];
        free(ix);
        out->step = st[k].number;
        out->win_start = st[k].ts;
        out->win_end = st[k].ts + st[k].dur;
        free(st);
        return 0;
    }
    free(st);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t e = 0; e < es->n; e++) {
        if (es->ph[e] != 'X' || !(es->flags[e] & TL_F_TS)) continue;
        if (es->ts[e] < lo) lo = es->ts[e];
        if (tl_es_end(es, e) > hi) hi = tl_es_end(es, e);
    }
    if (lo > hi) {
        tl_error_set(c->err, "no complete events in the trace");
        return -1;
    }
    out->win_start = lo, out->win_end = hi;
    return 0;
}

/* HTA's clipping: CPU events starting in the window with dur > 0; GPU
 * events whose launch call does (and every Stream Wait Event). */
static void clip(cp *c, int64_t ws, int64_t we)
{
    const tl_event_store *es = c->es;
    c->in_win = tl_xcalloc(es->n ? es->n : 1, 1);
    for (size_t e = 0; e < es->n; e++) {
        uint8_t k = c->kind[e];
        if (es->ph[e] != 'X' || !(es->flags[e] & TL_F_TS)) continue;
        if (k == K_GPU || k == K_SYNC) {
            uint32_t r = c->partner[e];
            int ok = r != NONE32 && es->ts[r] >= ws && es->ts[r] <= we && es->dur[r] > 0;
            if (!ok && k == K_SYNC && c->name_sync[es->name[e]] == SY_WAIT) ok = 1;
            c->in_win[e] = (uint8_t)ok;
        } else if (es->cat[e] != TL_CAT_PYTHON_FUNCTION) {
            c->in_win[e] = es->ts[e] >= ws && es->ts[e] <= we && es->dur[e] > 0;
        }
    }
}

static void make_nodes(cp *c)
{
    const tl_event_store *es = c->es;
    TL_VEC(tl_cp_node) v = {0};
    for (size_t e = 0; e < es->n; e++) {
        if (!c->in_win[e]) continue;
        uint8_t k = c->kind[e];
        int node = k == K_OP || k == K_RUNTIME || (k == K_GPU && c->partner[e] != NONE32);
        if (!node) continue;
        tl_cp_node s = {.ev = (uint32_t)e, .is_start = 1, .ts = es->ts[e]};
        tl_cp_node f = {.ev = (uint32_t)e, .is_start = 0, .ts = tl_es_end(es, e)};
        TL_PUSH(v, s);
        TL_PUSH(v, f);
    }
    /* by (ts, event, start before end): node_cmp's order, without comparator calls */
    int64_t *k = tl_xmalloc(3 * (v.n ? v.n : 1) * sizeof *k);
    for (size_t i = 0; i < v.n; i++) {
        k[i] = v.v[i].ts;
        k[v.n + i] = v.v[i].ev;
        k[2 * v.n + i] = !v.v[i].is_start;
    }
    size_t *idx = tl_order_by_keys(v.n, k, k + v.n, k + 2 * v.n, NULL);
    free(k);
    c->nodes = tl_xmalloc((v.n ? v.n : 1) * sizeof *c->nodes);
    c->nstart = tl_xmalloc((es->n ? es->n : 1) * sizeof *c->nstart);
    c->nend = tl_xmalloc((es->n ? es->n : 1) * sizeof *c->nend);
    memset(c->nstart, 0xff, (es->n ? es->n : 1) * sizeof *c->nstart);
    memset(c->nend, 0xff, (es->n ? es->n : 1) * sizeof *c->nend);
    for (size_t i = 0; i < v.n; i++) {
        c->nodes[i] = v.v[idx[i]];
        if (c->nodes[i].is_start) c->nstart[c->nodes[i].ev] = (uint32_t)i;
        else c->nend[c->nodes[i].ev] = (uint32_t)i;
    }
    c->n_nodes = v.n;
    free(idx);
    free(v.v);
}

/* ------------------------------------------------------------ CUDA runtime lock */

static int lock_node(const cp *c, uint32_t nid)
{
    return c->name_lock[c->es->name[c->nodes[nid].ev]];
}

/* Two consecutive nodes share the lock unless they are (end, start). */
static int shares_lock(const cp *c, uint32_t a, uint32_t b)
{
    return lock_node(c, a) && lock_node(c, b) && (c->nodes[a].is_start || !c->nodes[b].is_start);
}

/* HTA: calls that take the CUDA runtime lock (cudaHostAlloc,
 * cudaLaunchKernel, cudaMemcpyAsync) progress one at a time, in the order
 * they end, on every thread. */
static void lock_edges(cp *c)
{
    TL_VEC(uint32_t) starts = {0};
    uint32_t last = NONE32;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        if (!lock_node(c, i)) continue;
        if (c->nodes[i].is_start) {
            TL_PUSH(starts, i);
        } else {
            while (starts.n) {
                uint32_t p = starts.v[--starts.n];
                if (c->nodes[p].ev == c->nodes[i].ev) add_attr_edge(c, p, i, TL_CPE_OPERATOR, 0, c->nodes[i].ev);
                else add_edge(c, p, i, TL_CPE_DEPENDENCY, 0, TL_NOUID);
            }
            if (last != NONE32 && !c->nodes[last].is_start) add_edge(c, last, i, TL_CPE_DEPENDENCY, 0, TL_NOUID);
        }
        last = i;
    }
    free(starts.v);
}

/* ------------------------------------------------------------ call stacks */

typedef struct bound {
    uint32_t ev;
    int64_t t, dur;
    int8_t type; /* +1 start, -1 end */
} bound;

/* HTA's compare_events (every event here has dur > 0). */
static int bound_cmp(void *ctx, size_t ia, size_t ib)
{
    const bound *x = (const bound *)ctx + ia, *y = (const bound *)ctx + ib;
    if (x->ev == y->ev) return x->type == 1 ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->type == y->type) {
        if (x->type == 1) {
            if (x->dur == y->dur) return x->ev < y->ev ? -1 : 1;
            return x->dur < y->dur ? 1 : -1;
        }
        if (x->dur == y->dur) return x->ev < y->ev ? 1 : -1;
        return x->dur < y->dur ? -1 : 1;
    }
    return x->type == 1 ? 1 : -1;
}

static int64_t idval_key(const tl_event_store *es, uint32_t id)
{
    return es->idvals[id].kind == 0 ? es->idvals[id].i : INT64_MAX - 1000 + es->idvals[id].kind;
}

typedef struct ev_thr {
    int64_t kp, kt;
    uint32_t pid, tid, ev;
} ev_thr;

static int evthr_cmp(void *ctx, size_t a, size_t b)
{
    const ev_thr *v = ctx;
    if (v[a].kp != v[b].kp) return v[a].kp < v[b].kp ? -1 : 1;
    if (v[a].pid != v[b].pid) return v[a].pid < v[b].pid ? -1 : 1;
    if (v[a].kt != v[b].kt) return v[a].kt < v[b].kt ? -1 : 1;
    if (v[a].tid != v[b].tid) return v[a].tid < v[b].tid ? -1 : 1;
    return v[a].ev < v[b].ev ? -1 : v[a].ev > v[b].ev;
}

/* One thread's call stack, traversed depth first with HTA's enter/exit
 * edge rules. evs: the thread's events (dur > 0). */
static void thread_stack(cp *c, const uint32_t *evs, size_t n)
{
    const tl_event_store *es = c->es;
    bound *b = tl_xmalloc((2 * n + 1) * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        uint32_t e = evs[i];
        b[2 * i] = (bound){e, es->ts[e], es->dur[e], 1};
        b[2 * i + 1] = (bound){e, tl_es_end(es, e), es->dur[e], -1};
    }
    size_t *ix = tl_msort_order(2 * n, bound_cmp, b);
    /* the tree: parent, children in order (as positions in evs) */
    uint32_t *parent = tl_xmalloc((n + 1) * sizeof *parent);
    uint32_t *first_child = tl_xmalloc((n + 1) * sizeof *first_child);
    uint32_t *last_child = tl_xmalloc((n + 1) * sizeof *last_child);
    uint32_t *next_sib = tl_xmalloc((n + 1) * sizeof *next_sib);
    for (size_t i = 0; i <= n; i++) first_child[i] = last_child[i] = next_sib[i] = NONE32;
    uint32_t root = (uint32_t)n;
    TL_VEC(uint32_t) st = {0};
    for (size_t k = 0; k < 2 * n; k++) {
        const bound *x = &b[ix[k]];
        uint32_t me = (uint32_t)(ix[k] / 2);
        if (x->type == 1) {
            uint32_t p = st.n ? st.v[st.n - 1] : root;
            parent[me] = p;
            if (last_child[p] == NONE32) first_child[p] = me;
            else next_sib[last_child[p]] = me;
            last_child[p] = me;
            TL_PUSH(st, me);
        } else if (st.n) {
            st.n--;
        }
    }
    /* depth-first traversal */
    uint32_t last = NONE32, last_parent = TL_NOUID;
    int depth = 0;
    uint32_t cur = first_child[root];
    /* iterative: enter cur, descend; on leaving, exit and go to the sibling */
    while (cur != NONE32) {
        /* enter */
        uint32_t e = evs[cur];
        uint32_t pe = parent[cur] == root ? TL_NOUID : evs[parent[cur]];
        if (has_nodes(c, e)) {
            uint32_t s = c->nstart[e];
            if (last != NONE32 && !shares_lock(c, last, s))
                add_attr_edge(c, last, s, depth == 0 ? TL_CPE_DEPENDENCY : TL_CPE_OPERATOR, 0, last_parent);
            last = s;
            last_parent = pe;
            depth++;
        }
        if (first_child[cur] != NONE32) {
            cur = first_child[cur];
            continue;
        }
        /* exit cur and every ancestor that has no next sibling */
        for (;;) {
            uint32_t x = evs[cur];
            uint32_t px = parent[cur] == root ? TL_NOUID : evs[parent[cur]];
            if (has_nodes(c, x)) {
                uint32_t f = c->nend[x];
                if (last != NONE32 && !shares_lock(c, last, f))
                    add_attr_edge(c, last, f, TL_CPE_OPERATOR, c->name_block[es->name[x]], last_parent);
                last = f;
                last_parent = px;
                depth--;
            }
            if (next_sib[cur] != NONE32) {
                cur = next_sib[cur];
                break;
            }
            cur = parent[cur];
            if (cur == root) {
                cur = NONE32;
                break;
            }
        }
    }
    free(st.v);
    free(b);
    free(ix);
    free(parent);
    free(first_child);
    free(last_child);
    free(next_sib);
}

static void call_stacks(cp *c)
{
    const tl_event_store *es = c->es;
    TL_VEC(ev_thr) v = {0};
    for (size_t e = 0; e < es->n; e++) {
        if (!c->in_win[e] || c->kind[e] == K_GPU || c->kind[e] == K_SYNC) continue;
        uint32_t pid = tl_es_pid(es, e), tid = tl_es_tid(es, e);
        ev_thr x = {idval_key(es, pid), idval_key(es, tid), pid, tid, (uint32_t)e};
        TL_PUSH(v, x);
    }
    size_t *ix = tl_msort_order(v.n, evthr_cmp, v.v);
    uint32_t *evs = tl_xmalloc((v.n ? v.n : 1) * sizeof *evs);
    for (size_t i = 0; i < v.n; i++) evs[i] = v.v[ix[i]].ev;
    for (size_t i = 0; i < v.n;) {
        size_t j = i;
        while (j < v.n && v.v[ix[j]].pid == v.v[ix[i]].pid && v.v[ix[j]].tid == v.v[ix[i]].tid) j++;
        thread_stack(c, evs + i, j - i);
        i = j;
    }
    free(evs);
    free(ix);
    free(v.v);
}

/* ------------------------------------------------------------ GPU side */

typedef struct launch {
    int64_t ts;
    uint32_t rt, gpu;
} launch;

typedef struct qitem {
    int64_t ts;
    uint64_t stream;
    uint32_t ev;
    int8_t d;
} qitem;

/* The order of the queue items by (stream, ts, launches first, event). */
static size_t *qitem_order(const qitem *v, size_t n)
{
    int64_t *k = tl_xmalloc((4 * n + 1) * sizeof *k);
    for (size_t i = 0; i < n; i++) {
        k[i] = (int64_t)(v[i].stream ^ ((uint64_t)1 << 63)); /* unsigned order as signed */
        k[n + i] = v[i].ts;
        k[2 * n + i] = -v[i].d;
        k[3 * n + i] = v[i].ev;
    }
    size_t *ix = tl_order_by_keys(n, k, k + n, k + 2 * n, k + 3 * n);
    free(k);
    return ix;
}

typedef struct gk {
    int64_t key;
    uint32_t ev;
} gk;

/* The order of the items by (key, ev); with in_ev_order (the items were
 * pushed by increasing ev) the stable order by key alone is that. */
static size_t *gk_order(const gk *v, size_t n, int in_ev_order)
{
    int64_t *k = tl_xmalloc((2 * n + 1) * sizeof *k);
    for (size_t i = 0; i < n; i++) {
        k[i] = v[i].key;
        k[n + i] = v[i].ev;
    }
    size_t *ix = tl_order_by_keys(n, k, in_ev_order ? NULL : k + n, NULL, NULL);
    free(k);
    return ix;
}

typedef struct last_on {
    uint64_t key;
    uint32_t node;
} last_on;

/* The launches of the whole trace (HTA's launch ids), by start: by
 * (ts, runtime call) from L, which holds them by increasing call. */
static launch *launches_by_start(const launch *L, size_t nl)
{
    int64_t *lts = tl_xmalloc((nl + 1) * sizeof *lts);
    for (size_t i = 0; i < nl; i++) lts[i] = L[i].ts;
    size_t *lix = tl_order_by_keys(nl, lts, NULL, NULL, NULL);
    free(lts);
    launch *ls = tl_xmalloc((nl ? nl : 1) * sizeof *ls);
    for (size_t i = 0; i < nl; i++) ls[i] = L[lix[i]];
    free(lix);
    return ls;
}

/* HTA's queue length per stream (+1 at each launch, -1 at each GPU start,
 * in (stream, ts, launches first, event) order) into ql, for the events
 * from `from` to `to` (ns). A launch whose call and GPU start both come
 * before `from` adds 1 and takes 1 before any of those: it is left out;
 * a step after `to` comes after all of them on its stream: it is left out
 * too. So the sort is of the window's neighbourhood, not of the trace. */
static void queue_lengths(const cp *c, const launch *L, size_t nl, int64_t from, int64_t to, int32_t *ql)
{
    const tl_event_store *es = c->es;
    qitem *q = tl_xmalloc((2 * nl + 1) * sizeof *q);
    size_t nq = 0;
    for (size_t i = 0; i < nl; i++) {
        int64_t rts = es->ts[L[i].rt], gts = es->ts[L[i].gpu];
        if ((rts < from && gts < from) || (rts > to && gts > to)) continue;
        uint64_t sk = stream_key(c, L[i].gpu);
        if (rts <= to) q[nq++] = (qitem){rts, sk, L[i].rt, 1};
        if (gts <= to) q[nq++] = (qitem){gts, sk, L[i].gpu, -1};
    }
    size_t *qi = qitem_order(q, nq);
    int32_t run = 0;
    for (size_t k = 0; k < nq; k++) {
        const qitem *x = &q[qi[k]];
        if (k == 0 || q[qi[k - 1]].stream != x->stream) run = 0;
        run += x->d;
        ql[x->ev] = run;
    }
    free(q);
    free(qi);
}

static void gpu_edges(cp *c)
{
    const tl_event_store *es = c->es;
    size_t n = es->n;
    /* the launches of the whole trace, by runtime call */
    TL_VEC(launch) L = {0};
    for (size_t e = 0; e < n; e++)
        if (is_launch(c, (uint32_t)e)) TL_PUSH(L, ((launch){es->ts[e], (uint32_t)e, c->partner[e]}));
    size_t nl = L.n;

    /* the GPU events and sync records of the window, by start (syncs by end) */
    TL_VEC(gk) K = {0};
    for (size_t e = 0; e < n; e++) {
        if (!c->in_win[e] || c->partner[e] == NONE32) continue;
        if (c->kind[e] == K_GPU) TL_PUSH(K, ((gk){es->ts[e], (uint32_t)e}));
        else if (c->kind[e] == K_SYNC && c->name_sync[es->name[e]]) TL_PUSH(K, ((gk){tl_es_end(es, e), (uint32_t)e}));
    }
    size_t *kix = gk_order(K.v, K.n, 1);

    /* queue lengths are read at the window's GPU events and their launch calls */
    int64_t from = INT64_MAX, to = INT64_MIN;
    for (size_t k = 0; k < K.n; k++) {
        uint32_t e = K.v[k].ev;
        if (c->kind[e] != K_GPU) continue;
        int64_t a = es->ts[e], b = es->ts[c->partner[e]];
        if (a > b) { int64_t x = a; a = b; b = x; }
        if (a < from) from = a;
        if (b > to) to = b;
    }
    int32_t *ql = tl_xcalloc(n ? n : 1, sizeof *ql);
    queue_lengths(c, L.v, nl, from, to, ql);

    /* by start, for the records and waits below (when there are any) */
    launch *ls = NULL;
    /* cudaEventRecord -> the launch before it on the recorded stream */
    tl_map rec_prev; /* record correlation -> launch index (in ls) */
    tl_map_init(&rec_prev, 64);
    uint32_t rec_name = tl_strpool_find(&es->names, "cudaEventRecord", 15);
    if (rec_name != NONE32 && c->k_wait_corr != NONE32 && c->k_wait_stream != NONE32) {
        tl_map rec_stream; /* record correlation -> sync event carrying its stream */
        tl_map_init(&rec_stream, 64);
        for (size_t e = 0; e < n; e++) {
            if (c->kind[e] != K_SYNC) continue;
            int64_t ws = arg_int(c, (uint32_t)e, c->k_wait_stream, -1);
            int64_t rc = arg_int(c, (uint32_t)e, c->k_wait_corr, -1);
            if (ws > -1 && rc > -1 && tl_map_get(&rec_stream, (uint64_t)rc, 0) == NONE32)
                tl_map_put(&rec_stream, (uint64_t)rc, 0, (uint32_t)e);
        }
        TL_VEC(gk) recs = {0}; /* the records some sync event names, by start */
        for (size_t e = 0; e < n; e++) {
            if (es->name[e] != rec_name || c->kind[e] != K_RUNTIME || tl_es_corr(es, e) == TL_NONE) continue;
            if (tl_map_get(&rec_stream, (uint64_t)tl_es_corr(es, e), 0) != NONE32)
                TL_PUSH(recs, ((gk){es->ts[e], (uint32_t)e}));
        }
        if (recs.n && !ls) ls = launches_by_start(L.v, nl);
        size_t *rix = gk_order(recs.v, recs.n, 1);
        tl_map last_on_stream; /* (GPU pid, stream) -> the latest launch so far */
        tl_map_init(&last_on_stream, 64);
        size_t li = 0;
        for (size_t k = 0; k < recs.n; k++) {
            uint32_t e = recs.v[rix[k]].ev;
            for (; li < nl && ls[li].ts <= es->ts[e]; li++)
                tl_map_put(&last_on_stream, tl_es_pid(es, ls[li].gpu), (uint64_t)stream_of(c, ls[li].gpu),
                           (uint32_t)li);
            uint32_t s = tl_map_get(&rec_stream, (uint64_t)tl_es_corr(es, e), 0);
            uint32_t best =
                tl_map_get(&last_on_stream, tl_es_pid(es, s), (uint64_t)arg_int(c, s, c->k_wait_stream, -1));
            if (best != NONE32) tl_map_put(&rec_prev, (uint64_t)tl_es_corr(es, e), 0, best);
        }
        tl_map_free(&last_on_stream);
        free(rix);
        free(recs.v);
        tl_map_free(&rec_stream);
    }

    /* each Stream Wait Event of the window -> the GPU event of the first
     * launch at or after its cudaStreamWaitEvent, on that call's thread, to
     * the waiting stream */
    tl_map wait_next;
    tl_map_init(&wait_next, 64);
    {
        TL_VEC(gk) W = {0};
        for (size_t k = 0; k < K.n; k++) {
            uint32_t e = K.v[k].ev;
            if (c->kind[e] == K_SYNC && c->name_sync[es->name[e]] == SY_WAIT)
                TL_PUSH(W, ((gk){es->ts[c->partner[e]], e}));
        }
        if (W.n && !ls) ls = launches_by_start(L.v, nl);
        size_t *wix = gk_order(W.v, W.n, 0);
        tl_map next_on; /* (thread, stream) -> the earliest launch from the sweep point on */
        tl_map_init(&next_on, 64);
        size_t lj = nl;
        for (size_t k = W.n; k-- > 0;) {
            uint32_t e = W.v[wix[k]].ev, r = c->partner[e];
            for (; lj > 0 && ls[lj - 1].ts >= es->ts[r]; lj--) {
                uint32_t rt = ls[lj - 1].rt;
                uint64_t key = es->thr[rt]; /* the thread (pid, tid) */
                tl_map_put(&next_on, key, (uint64_t)stream_of(c, ls[lj - 1].gpu), ls[lj - 1].gpu);
            }
            uint32_t dst = tl_map_get(&next_on, es->thr[r], (uint64_t)stream_of(c, e));
            if (dst != NONE32) tl_map_put(&wait_next, e, 0, dst);
        }
        tl_map_free(&next_on);
        free(wix);
        free(W.v);
    }

    TL_VEC(last_on) last = {0}; /* in first-seen order, as HTA's dict */
    tl_map ksync; /* destination GPU event -> source GPU event */
    tl_map_init(&ksync, 64);
    for (size_t k = 0; k < K.n; k++) {
        uint32_t e = K.v[kix[k]].ev;
        uint32_t r = c->partner[e];
        if (c->kind[e] == K_SYNC) {
            int sy = c->name_sync[es->name[e]];
            if (sy == SY_WAIT || sy == SY_EVENT) {
                int64_t rc = arg_int(c, e, c->k_wait_corr, -1);
                uint32_t li = rc > -1 ? tl_map_get(&rec_prev, (uint64_t)rc, 0) : NONE32;
                if (li == NONE32) continue;
                uint32_t src = ls[li].gpu;
                if (sy == SY_WAIT) {
                    uint32_t dst = tl_map_get(&wait_next, e, 0);
                    if (dst != NONE32) tl_map_put(&ksync, dst, 0, src);
                } else if (has_nodes(c, src) && has_nodes(c, r)) {
                    add_edge(c, c->nend[src], c->nend[r], TL_CPE_SYNC, 0, TL_NOUID);
                }
                continue;
            }
            if (!has_nodes(c, r)) continue;
            uint64_t sk = stream_key(c, e);
            for (size_t i = 0; i < last.n; i++)
                if (sy == SY_CONTEXT || last.v[i].key == sk)
                    add_edge(c, last.v[i].node, c->nend[r], TL_CPE_SYNC, 0, TL_NOUID);
            continue;
        }
        uint32_t s = c->nstart[e], f = c->nend[e];
        add_attr_edge(c, s, f, TL_CPE_OPERATOR, 0, TL_NOUID);
        uint32_t ks = tl_map_get(&ksync, e, 0);
        uint32_t ks_end = NONE32;
        if (ks != NONE32) {
            if (has_nodes(c, ks)) {
                ks_end = c->nend[ks];
                add_edge(c, ks_end, s, TL_CPE_SYNC, 0, TL_NOUID);
            }
            tl_map_put(&ksync, e, 0, NONE32);
        }
        uint64_t sk = stream_key(c, e);
        size_t li = 0;
        while (li < last.n && last.v[li].key != sk) li++;
        uint32_t prev = li < last.n ? last.v[li].node : NONE32;
        int64_t rts = es->ts[r];
        if (ql[r] == 1 && ql[e] == 0 && (prev == NONE32 || c->nodes[prev].ts < rts) &&
            (ks_end == NONE32 || c->nodes[ks_end].ts < rts) && has_nodes(c, r)) {
            add_edge(c, c->nstart[r], s, TL_CPE_LAUNCH, 0, TL_NOUID);
        } else if (prev != NONE32 && c->nodes[prev].ts >= rts &&
                   (ks_end == NONE32 || c->nodes[ks_end].ts < c->nodes[prev].ts)) {
            /* a kernel-kernel delay only when the previous event still ran at
             * the launch: one that ended before the call began gets no edge
             * (inferred from HTA's overlaid simple_add trace; docs/compat.md) */
            add_attr_edge(c, prev, s, TL_CPE_KERNEL_KERNEL, 0, TL_NOUID);
        }
        if (li < last.n) last.v[li].node = f;
        else TL_PUSH(last, ((last_on){sk, f}));
    }
    tl_map_free(&ksync);
    tl_map_free(&wait_next);
    tl_map_free(&rec_prev);
    free(last.v);
    free(kix);
    free(K.v);
    free(ql);
    free(ls);
    free(L.v);
}

/* ------------------------------------------------------------ longest path */

/* networkx's dag_longest_path on the graph as HTA builds it: nodes in the
 * order the edges first name them, predecessors and successors in edge
 * order, the topological order of Kahn's generations. */
static int longest_path(cp *c, tl_cpath *out)
{
    size_t nn = c->n_nodes, ne = c->edges.n;
    const tl_cp_edge *E = c->edges.v;
    uint32_t *order = tl_xmalloc((nn ? nn : 1) * sizeof *order); /* graph node order */
    uint8_t *seen = tl_xcalloc(nn ? nn : 1, 1);
    size_t ng = 0;
    uint32_t *indeg = tl_xcalloc(nn ? nn : 1, sizeof *indeg);
    uint32_t *so = tl_xcalloc(nn + 1, sizeof *so), *po = tl_xcalloc(nn + 1, sizeof *po);
    for (size_t i = 0; i < ne; i++) {
        if (!seen[E[i].from]) seen[E[i].from] = 1, order[ng++] = E[i].from;
        if (!seen[E[i].to]) seen[E[i].to] = 1, order[ng++] = E[i].to;
        indeg[E[i].to]++;
        so[E[i].from + 1]++;
        po[E[i].to + 1]++;
    }
    for (size_t i = 0; i < nn; i++) so[i + 1] += so[i], po[i + 1] += po[i];
    uint32_t *succ = tl_xmalloc((ne ? ne : 1) * sizeof *succ), *pred = tl_xmalloc((ne ? ne : 1) * sizeof *pred);
    uint32_t *sf = tl_xmalloc((nn + 1) * sizeof *sf), *pf = tl_xmalloc((nn + 1) * sizeof *pf);
    memcpy(sf, so, (nn + 1) * sizeof *sf);
    memcpy(pf, po, (nn + 1) * sizeof *pf);
    for (size_t i = 0; i < ne; i++) {
        succ[sf[E[i].from]++] = (uint32_t)i;
        pred[pf[E[i].to]++] = (uint32_t)i;
    }
    /* Kahn's generations */
    uint32_t *topo = tl_xmalloc((ng ? ng : 1) * sizeof *topo);
    size_t nt = 0;
    for (size_t i = 0; i < ng; i++)
        if (indeg[order[i]] == 0) topo[nt++] = order[i];
    for (size_t h = 0; h < nt; h++) {
        uint32_t u = topo[h];
        for (uint32_t k = so[u]; k < so[u + 1]; k++) {
            uint32_t v = E[succ[k]].to;
            if (--indeg[v] == 0) topo[nt++] = v;
        }
    }
    int rc = 0;
    if (nt != ng) {
        rc = -1;
    } else if (ng) {
        int64_t *dist = tl_xmalloc(nn * sizeof *dist);
        uint32_t *from = tl_xmalloc(nn * sizeof *from); /* edge index, NONE32: none */
        for (size_t h = 0; h < nt; h++) {
            uint32_t v = topo[h];
            int64_t best = 0;
            uint32_t be = NONE32;
            for (uint32_t k = po[v]; k < po[v + 1]; k++) {
                const tl_cp_edge *x = &E[pred[k]];
                int64_t d = dist[x->from] + x->weight;
                if (be == NONE32 || d > best) best = d, be = pred[k];
            }
            if (be != NONE32 && best < 0) be = NONE32, best = 0;
            dist[v] = be == NONE32 ? 0 : best;
            from[v] = be;
        }
        uint32_t end = topo[0];
        for (size_t h = 1; h < nt; h++)
            if (dist[topo[h]] > dist[end]) end = topo[h];
        size_t len = 1;
        for (uint32_t v = end; from[v] != NONE32; v = E[from[v]].from) len++;
        out->path = tl_xmalloc(len * sizeof *out->path);
        out->path_edges = tl_xmalloc(len * sizeof *out->path_edges);
        out->n_path = len;
        size_t k = len;
        for (uint32_t v = end;; v = E[from[v]].from) {
            out->path[--k] = v;
            if (from[v] == NONE32) break;
            out->path_edges[k - 1] = E[from[v]];
        }
        out->length = dist[end];
        free(dist);
        free(from);
    }
    free(order);
    free(seen);
    free(indeg);
    free(so);
    free(po);
    free(succ);
    free(pred);
    free(sf);
    free(pf);
    free(topo);
    return rc;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* bound_by of each weighted path edge, the events of the path. */
static void summarise(cp *c, tl_cpath *p)
{
    const tl_event_store *es = c->es;
    for (size_t i = 0; i + 1 < p->n_path; i++) {
        tl_cp_edge *e = &p->path_edges[i];
        int cat = TL_CPC_CPU;
        if (e->type == TL_CPE_KERNEL_KERNEL) cat = TL_CPC_KERNEL_GAP;
        else if (e->type == TL_CPE_LAUNCH) cat = TL_CPC_LAUNCH;
        else if (e->type == TL_CPE_OPERATOR && e->attr != TL_NOUID && c->kind[e->attr] == K_GPU)
            cat = tl_tree_is_comm(c->tree, es, e->attr) ? TL_CPC_COMM : TL_CPC_GPU_COMPUTE;
        e->cat = (uint8_t)cat;
        if (e->type != TL_CPE_DEPENDENCY && e->type != TL_CPE_SYNC) p->by_cat[cat] += e->weight;
        if (cat == TL_CPC_GPU_COMPUTE && (es->cat[e->attr] == TL_CAT_GPU_MEMCPY || es->cat[e->attr] == TL_CAT_GPU_MEMSET))
            p->copies += e->weight;
        if (cat == TL_CPC_CPU && e->type == TL_CPE_OPERATOR && e->attr != TL_NOUID && c->kind[e->attr] == K_RUNTIME &&
            tl_blocking_call(c->tree, es, c->name_block, e->attr))
            p->blocking += e->weight;
        if (e->type == TL_CPE_SYNC) {
            uint32_t ev = c->nodes[e->to].ev;
            if (c->kind[ev] == K_RUNTIME) p->sync_wait += es->dur[ev];
        }
    }
    uint32_t *ev = tl_xmalloc((p->n_path ? p->n_path : 1) * sizeof *ev);
    for (size_t i = 0; i < p->n_path; i++) ev[i] = c->nodes[p->path[i]].ev;
    /* the CPU threads the path passes through, and those of the window's CPU nodes */
    uint8_t *on = tl_xcalloc(es->n_threads + 1, 2);
    for (size_t i = 0; i < p->n_path; i++) {
        uint8_t k = c->kind[ev[i]];
        if ((k == K_OP || k == K_RUNTIME) && !on[es->thr[ev[i]]]) on[es->thr[ev[i]]] = 1, p->path_threads++;
    }
    for (size_t i = 0; i < c->n_nodes; i++) {
        uint32_t e = c->nodes[i].ev;
        uint8_t k = c->kind[e];
        uint8_t *w = on + es->n_threads + 1 + es->thr[e];
        if ((k == K_OP || k == K_RUNTIME) && !*w) *w = 1, p->window_threads++;
    }
    free(on);
    qsort(ev, p->n_path, sizeof *ev, u32_cmp);
    size_t k = 0;
    for (size_t i = 0; i < p->n_path; i++)
        if (k == 0 || ev[k - 1] != ev[i]) ev[k++] = ev[i];
    p->events = ev;
    p->n_events = k;
}

/* The busiest stream of the window's GPU events (those with nodes): the
 * union of its events' [ts, end) over each (GPU pid, stream), the largest
 * (the first in (pid, stream) order of equals); and the blocking calls of
 * the window that lasted (the host waited for the GPU). */
static void stream_work(const cp *c, tl_cpath *p)
{
    const tl_event_store *es = c->es;
    p->busy_stream = -1;
    size_t n = 0;
    for (size_t e = 0; e < es->n; e++) {
        if (c->kind[e] == K_GPU && has_nodes(c, (uint32_t)e)) {
            n++;
            /* replayed by a graph launch: HTA gives it no launch edge (its issue #290) */
            p->gpu_ns += es->dur[e];
            if (c->launch_kind[es->name[c->partner[e]]] == TL_LAUNCH_GRAPH) p->graph_gpu_ns += es->dur[e];
        }
        if (c->kind[e] == K_RUNTIME && has_nodes(c, (uint32_t)e) && es->dur[e] > 0 &&
            tl_blocking_call(c->tree, es, c->name_block, (uint32_t)e))
            p->n_waits++;
    }
    if (!n) return;
    uint32_t *ev = tl_xmalloc(n * sizeof *ev);
    int64_t *k = tl_xmalloc(3 * n * sizeof *k);
    size_t m = 0;
    for (size_t e = 0; e < es->n; e++) {
        if (c->kind[e] != K_GPU || !has_nodes(c, (uint32_t)e)) continue;
        ev[m] = (uint32_t)e;
        k[m] = tl_es_pid(es, e);
        k[n + m] = stream_of(c, (uint32_t)e);
        k[2 * n + m] = es->ts[e];
        m++;
    }
    size_t *ord = tl_order_by_keys(n, k, k + n, k + 2 * n, NULL);
    int64_t busy = 0, end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        size_t a = ord[i];
        int first = i == 0 || k[a] != k[ord[i - 1]] || k[n + a] != k[n + ord[i - 1]];
        if (first) busy = 0, end = INT64_MIN;
        int64_t ts = es->ts[ev[a]], te = tl_es_end(es, ev[a]);
        if (ts < end) ts = end; /* the part not already counted */
        if (te > ts) busy += te - ts;
        if (te > end) end = te;
        int last = i + 1 == n || k[a] != k[ord[i + 1]] || k[n + a] != k[n + ord[i + 1]];
        if (last && busy > p->stream_busy) p->stream_busy = busy, p->busy_stream = k[n + a];
    }
    free(ord);
    free(k);
    free(ev);
}

int tl_critical_path(const tl_trace *t, const tl_cp_opts *o, tl_cpath *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    cp c = {.es = &t->es, .tree = &t->tree, .err = err};
    int rc = -1;
    classify(&c);
    if (select_window(&c, t, o, out) != 0) goto done;
    clip(&c, out->win_start, out->win_end);
    make_nodes(&c);
    tl_map_init(&c.edge_ix, c.n_nodes * 2 + 16);
    lock_edges(&c);
    call_stacks(&c);
    gpu_edges(&c);
    if (c.edges.n == 0) {
        tl_error_set(err, "no CPU ops, runtime calls or GPU events to build a critical path from in the window");
        goto done;
    }
    if (longest_path(&c, out) != 0) {
        tl_error_set(err, "the critical-path graph has a cycle (overlapping events on one thread?)");
        goto done;
    }
    summarise(&c, out);
    stream_work(&c, out);
    out->nodes = c.nodes;
    c.nodes = NULL;
    out->n_nodes = c.n_nodes;
    for (size_t i = 0; i < c.edges.n; i++) out->n_by_type[c.edges.v[i].type]++;
    out->edges = c.edges.v;
    out->n_edges = c.edges.n;
    c.edges.v = NULL;
    rc = 0;
done:
    if (rc != 0) tl_cpath_free(out);
    free(c.kind);
    free(c.partner);
    free(c.in_win);
    free(c.nstart);
    free(c.nend);
    free(c.name_block);
    free(c.name_lock);
    free(c.name_sync);
    free(c.launch_kind);
    free(c.nodes);
    free(c.edges.v);
    if (c.edge_ix.cap) tl_map_free(&c.edge_ix);
    return rc;
}

void tl_cpath_free(tl_cpath *p)
{
    free(p->nodes);
    free(p->path);
    free(p->path_edges);
    free(p->edges);
    free(p->events);
    memset(p, 0, sizeof *p);
}

tl_cp_flow *tl_cpath_flows(const tl_cpath *p, const tl_event_store *es, size_t *n)
{
    uint32_t k_device = tl_strpool_find(&es->keys, "device", 6);
    tl_cp_flow *f = tl_xmalloc((2 * p->n_path + 1) * sizeof *f);
    size_t m = 0;
    uint32_t id = 0;
    for (size_t i = 0; i + 1 < p->n_path; i++) {
        const tl_cp_edge *e = &p->path_edges[i];
        if (e->type != TL_CPE_DEPENDENCY && e->type != TL_CPE_LAUNCH && e->type != TL_CPE_SYNC) continue;
        for (int end = 0; end < 2; end++) {
            const tl_cp_node *nd = &p->nodes[end ? e->to : e->from];
            uint32_t ev = nd->ev;
            int64_t ts = es->ts[ev];
            if (!nd->is_start) {
                ts = tl_es_end(es, ev);
                int64_t dev;
                if (k_device != NONE32 && tl_es_arg_int(es, ev, k_device, &dev) && dev >= 0)
                    ts -= es->dur[ev] < 1000 ? es->dur[ev] : 1000;
            }
            f[m++] = (tl_cp_flow){.ev = ev, .ts = ts, .id = id, .is_start = (uint8_t)!end, .type = e->type,
                                  .weight = e->weight};
        }
        id++;
    }
    *n = m;
    return f;
}
