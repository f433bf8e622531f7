/* idle.c — see idle.h. */
#include "idle.h"

#include <stdlib.h>
#include <string.h>

#include "args_walk.h"
#include "timeline.h"
#include "../util/numsort.h"
#include "../util/vec.h"

static void add_gap(tl_idle_stream *s, int64_t gap, int64_t micro_ns)
{
    s->n_gaps++;
    if (gap < micro_ns) s->micro_idle += gap;
    else s->macro_idle += gap;
}

void tl_idle_where(const tl_event_store *es, uint32_t dev_key, size_t u, int64_t *device, int64_t *stream)
{
    int has_dev, has_stream; /* both keys in one walk of the args */
    tl_args_int2(es, u, dev_key, device, &has_dev, TL_K_STREAM, stream, &has_stream);
    if (!has_dev) {
        const tl_idval *p = &es->idvals[tl_es_pid(es, u)];
        *device = p->kind == 0 ? p->i : -1;
    }
    if (!has_stream) *stream = -1;
}

tl_gpu_at *tl_idle_gpu_events(const tl_event_store *es, size_t *n)
{
    uint32_t dev_key = tl_strpool_find(&es->keys, "device", 6);
    TL_VEC(tl_gpu_at) g = {0};
    for (size_t u = 0; u < es->n; u++) {
        if (!tl_is_gpu_cat(es->cat[u]) || !(es->flags[u] & TL_F_TS)) continue;
        tl_gpu_at e = {-1, -1, es->ts[u], (uint32_t)u};
        tl_idle_where(es, dev_key, u, &e.device, &e.stream);
        TL_PUSH(g, e);
    }
    if (g.n > 1) {
        /* by (device, stream, ts), then uid: the order they were taken in */
        int64_t *k = tl_xmalloc(3 * g.n * sizeof *k);
        for (size_t i = 0; i < g.n; i++) {
            k[i] = g.v[i].device;
            k[g.n + i] = g.v[i].stream;
            k[2 * g.n + i] = g.v[i].ts;
        }
        tl_sort_rows_by_keys(g.v, g.n, sizeof *g.v, k, 3);
    }
    *n = g.n;
    return g.v;
}

/* The calls that can block the host until the GPU is done
 * (tl_blocking_calls), by (thread, start). */
typedef struct blk {
    uint32_t thr;
    int64_t s, e;
} blk;

static int blk_cmp(const void *a, const void *b)
{
    const blk *x = a, *y = b;
    if (x->thr != y->thr) return x->thr < y->thr ? -1 : 1;
    return (x->s > y->s) - (x->s < y->s);
}

static blk *blocking_calls(const tl_trace *t, size_t *n)
{
    const tl_event_store *es = &t->es;
    uint8_t *is = tl_blocking_calls(es);
    TL_VEC(blk) v = {0};
    for (size_t u = 0; u < es->n; u++) {
        uint8_t c = es->cat[u];
        if ((c != TL_CAT_CUDA_RUNTIME && c != TL_CAT_CUDA_DRIVER) || !(es->flags[u] & TL_F_TS) ||
            !tl_blocking_call(&t->tree, es, is, (uint32_t)u))
            continue;
        TL_PUSH(v, ((blk){es->thr[u], es->ts[u], tl_es_end(es, u)}));
    }
    free(is);
    if (v.n > 1) qsort(v.v, v.n, sizeof *v.v, blk_cmp);
    *n = v.n;
    return v.v;
}

/* Whether thread thr was blocked in such a call at `at` (it started at or
 * before and ended at or after) that returned by `by`: the last call on
 * the thread starting at or before `at` (a thread's calls do not overlap). */
static int blocked_at(const blk *b, size_t n, uint32_t thr, int64_t at, int64_t by)
{
    size_t lo = 0, hi = n; /* the first call after (thr, at) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid].thr < thr || (b[mid].thr == thr && b[mid].s <= at)) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0 || b[lo - 1].thr != thr) return 0;
    return b[lo - 1].e >= at && b[lo - 1].e <= by;
}

/* A GPU event's wait between the end of its launch call and its start. */
typedef struct queued_ev {
    int64_t s, e;
    uint32_t uid;
} queued_ev;

/* The union's idle time in [b[0].s, x) (b: the merged busy intervals,
 * before[i]: the idle time before b[i]). */
static int64_t idle_before(const tl_interval *b, size_t nb, const int64_t *before, int64_t x)
{
    if (x <= b[0].s) return 0;
    size_t lo = 0, hi = nb; /* the last i with b[i].s <= x */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid].s <= x) lo = mid;
        else hi = mid;
    }
    return before[lo] + (x > b[lo].e ? x - b[lo].e : 0);
}

/* out->queued_idle: the length of the union's gaps (between the merged busy
 * intervals b) covered by the events' waits (their union); out->longest_queued:
 * the event whose own wait covers the most of them (the first of equals in
 * (device, stream, ts) order). */
static void queued_figures(const tl_interval *b, size_t nb, const queued_ev *q, size_t nq, tl_idle *out)
{
    int64_t *before = tl_xmalloc(nb * sizeof *before);
    before[0] = 0;
    for (size_t i = 1; i < nb; i++) before[i] = before[i - 1] + (b[i].s - b[i - 1].e);
    tl_interval *w = tl_xmalloc((nq + 1) * sizeof *w);
    out->longest_queued_uid = UINT32_MAX;
    for (size_t k = 0; k < nq; k++) {
        int64_t own = idle_before(b, nb, before, q[k].e) - idle_before(b, nb, before, q[k].s);
        if (own > out->longest_queued) out->longest_queued = own, out->longest_queued_uid = q[k].uid;
        w[k] = (tl_interval){q[k].s, q[k].e};
    }
    size_t nw = tl_merge(w, nq);
    for (size_t k = 0; k < nw; k++)
        out->queued_idle += idle_before(b, nb, before, w[k].e) - idle_before(b, nb, before, w[k].s);
    free(w);
    free(before);
}

void tl_idle_compute(const tl_trace *t, int64_t kernel_wait_ns, int64_t micro_ns, tl_idle *out)
{
    size_t ng;
    tl_gpu_at *g = tl_idle_gpu_events(&t->es, &ng);
    tl_idle_compute_with(t, kernel_wait_ns, micro_ns, g, ng, out);
    free(g);
}

void tl_idle_compute_with(const tl_trace *t, int64_t kernel_wait_ns, int64_t micro_ns, const tl_gpu_at *g, size_t ng,
                          tl_idle *out)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    memset(out, 0, sizeof *out);
    out->kernel_wait_ns = kernel_wait_ns;
    out->micro_ns = micro_ns;
    out->all.device = out->all.stream = -1;
    out->longest_queued_uid = UINT32_MAX;
    if (!ng) return;
    TL_VEC(tl_idle_stream) st = {0};
    tl_interval *all = tl_xmalloc(ng * sizeof *all);
    queued_ev *qev = tl_xmalloc(ng * sizeof *qev); /* launched, not started */
    size_t nq = 0;
    size_t nb;
    blk *blocking = blocking_calls(t, &nb);
    int64_t end = 0;
    tl_idle_stream *s = NULL;
    for (size_t i = 0; i < ng; i++) {
        const tl_gpu_at *e = &g[i];
        int64_t e_end = tl_es_end(es, e->uid);
        uint32_t rt = tr->parent[e->uid];
        int64_t launch_ts = rt != TL_NOUID ? es->ts[rt] : INT64_MIN; /* INT64_MIN: no launch */
        all[i].s = e->ts;
        all[i].e = e_end;
        if (rt != TL_NOUID) { /* queued from the end of its launch call: the host's part is done */
            int64_t issued = tl_es_end(es, rt);
            if (issued < e->ts) qev[nq++] = (queued_ev){issued, e->ts, e->uid};
        }
        if (!s || e->device != s->device || e->stream != s->stream) {
            tl_idle_stream z;
            memset(&z, 0, sizeof z);
            z.device = e->device;
            z.stream = e->stream;
            z.start = e->ts;
            z.end = e_end;
            TL_PUSH(st, z);
            s = &st.v[st.n - 1];
            s->n_events = 1;
            s->busy = e_end - e->ts;
            end = e_end;
            continue;
        }
        s->n_events++;
        int64_t gap = e->ts - end;
        if (gap > 0) {
            add_gap(s, gap, micro_ns);
            if (gap < kernel_wait_ns) {
                s->kernel_wait += gap;
                s->n_kernel_wait++;
            } else if (launch_ts != INT64_MIN && launch_ts >= end) {
                s->host_wait += gap;
                s->n_host_wait++;
                if (nb && blocked_at(blocking, nb, es->thr[rt], end, launch_ts)) {
                    s->host_sync_wait += gap;
                    s->n_host_sync_wait++;
                }
            } else {
                s->other_wait += gap;
                s->n_other_wait++;
            }
            s->busy += e_end - e->ts;
        } else if (e_end > end) {
            s->busy += e_end - end;
        }
        if (e_end > end) end = e_end;
        if (end > s->end) s->end = end;
    }
    /* the union of all streams */
    size_t m = tl_merge(all, ng);
    out->all.n_events = ng;
    out->all.start = all[0].s;
    out->all.end = all[m - 1].e;
    out->all.busy = tl_length(all, m);
    for (size_t i = 1; i < m; i++) add_gap(&out->all, all[i].s - all[i - 1].e, micro_ns);
    queued_figures(all, m, qev, nq, out);
    free(blocking);
    free(all);
    free(qev);
    out->v = st.v;
    out->n = st.n;
}

void tl_idle_free(tl_idle *b)
{
    free(b->v);
    memset(b, 0, sizeof *b);
}

/* one change of a stream's queue: +1 at a call's start, -1 at a GPU end */
typedef struct qev {
    int64_t device, stream, t;
    int delta;
    uint32_t call;           /* +1: the launch call */
} qev;

void tl_queue_compute(const tl_trace *t, size_t full, int with_series, tl_queue *out)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    memset(out, 0, sizeof *out);
    out->full = full;
    uint32_t dev_key = tl_strpool_find(&es->keys, "device", 6);
    TL_VEC(qev) q = {0};
    for (size_t u = 0; u < es->n; u++) {
        if (!tl_is_gpu_cat(es->cat[u]) || !(es->flags[u] & TL_F_TS) || tr->parent[u] == TL_NOUID) continue;
        uint32_t rt = tr->parent[u];
        qev a = {0, 0, es->ts[rt], 1, rt}, b;
        tl_idle_where(es, dev_key, u, &a.device, &a.stream);
        b = a;
        b.t = tl_es_end(es, u);
        b.delta = -1;
        b.call = 0;
        TL_PUSH(q, a);
        TL_PUSH(q, b);
    }
    if (!q.n) return;
    {
        /* by (device, stream, t), the ends first, then the call (the rest
         * keep their order) */
        int64_t *k = tl_xmalloc(4 * q.n * sizeof *k);
        for (size_t i = 0; i < q.n; i++) {
            k[i] = q.v[i].device;
            k[q.n + i] = q.v[i].stream;
            k[2 * q.n + i] = q.v[i].t;
            k[3 * q.n + i] = q.v[i].delta > 0 ? ((int64_t)1 << 32) | q.v[i].call : 0;
        }
        tl_sort_rows_by_keys(q.v, q.n, sizeof *q.v, k, 4);
    }
    TL_VEC(tl_queue_stream) st = {0};
    TL_VEC(tl_queue_point) pts = {0};
    for (size_t a = 0; a < q.n;) {
        size_t b = a;
        while (b < q.n && q.v[b].device == q.v[a].device && q.v[b].stream == q.v[a].stream) b++;
        tl_queue_stream s;
        memset(&s, 0, sizeof s);
        s.device = q.v[a].device;
        s.stream = q.v[a].stream;
        s.start = q.v[a].t;
        s.end = q.v[b - 1].t;
        pts.n = 0;
        size_t len = 0;
        double area = 0;
        uint32_t last_call = TL_NOUID;
        for (size_t i = a; i < b; i++) {
            const qev *e = &q.v[i];
            if (e->delta > 0) {
                s.n_launches++;
                /* a graph launch enqueues all its kernels: one call, blocked once */
                if (len >= full && e->call != last_call) {
                    s.n_blocked++;
                    s.blocked_ns += es->dur[e->call];
                }
                last_call = e->call;
                len++;
            } else {
                len--;
            }
            if (len > s.max_len) s.max_len = len;
            /* the length holds from here to the next change */
            int64_t next = i + 1 < b ? q.v[i + 1].t : e->t;
            area += (double)len * (double)(next - e->t);
            if (len >= full) s.full_ns += next - e->t;
            if (with_series) {
                if (pts.n && pts.v[pts.n - 1].t == e->t) pts.v[pts.n - 1].len = (uint32_t)len;
                else {
                    tl_queue_point p = {e->t, (uint32_t)len};
                    TL_PUSH(pts, p);
                }
            }
        }
        s.mean_len = s.end > s.start ? area / (double)(s.end - s.start) : 0.0;
        if (with_series) {
            s.n_series = pts.n;
            s.series = tl_xmalloc((pts.n ? pts.n : 1) * sizeof *s.series);
            memcpy(s.series, pts.v, pts.n * sizeof *s.series);
        }
        TL_PUSH(st, s);
        a = b;
    }
    free(pts.v);
    free(q.v);
    out->v = st.v;
    out->n = st.n;
}

void tl_queue_free(tl_queue *q)
{
    for (size_t i = 0; i < q->n; i++) free(q->v[i].series);
    free(q->v);
    memset(q, 0, sizeof *q);
}
