#include "timeline.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/vec.h"
#include "../util/str.h"

int tl_name_is_comm(const char *name)
{
    return tl_contains_ci(name, "nccl") || tl_contains_ci(name, "rccl") || tl_contains_ci(name, "cross_device_reduce");
}

/* Strips an optional ".kd" suffix; returns the remaining length. */
static size_t base_len(const char *s)
{
    size_t n = strlen(s);
    if (n >= 3 && !strcmp(s + n - 3, ".kd")) n -= 3;
    return n;
}

static int eq_n(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && !strncmp(s, lit, n);
}

static int is_legacy_copy(const char *s)
{
    size_t n = base_len(s);
    return eq_n(s, n, "MEMORY_COPY_HOST_TO_DEVICE") || eq_n(s, n, "MEMORY_COPY_DEVICE_TO_HOST") ||
           eq_n(s, n, "MEMORY_COPY_DEVICE_TO_DEVICE") || eq_n(s, n, "__amd_rocclr_copyBuffer") ||
           eq_n(s, n, "__amd_rocclr_copyBufferRect") || eq_n(s, n, "__amd_rocclr_copyBufferAligned") ||
           eq_n(s, n, "__amd_rocclr_copyBufferRectAligned");
}

static int is_legacy_fill(const char *s)
{
    size_t n = base_len(s);
    return eq_n(s, n, "__amd_rocclr_fillBuffer") || eq_n(s, n, "__amd_rocclr_fillBufferAligned");
}

tl_bucket tl_gpu_bucket(uint8_t cat, const char *name)
{
    if (cat == TL_CAT_GPU_MEMCPY) return TL_B_MEMCPY;
    if (cat == TL_CAT_KERNEL && is_legacy_copy(name)) return TL_B_MEMCPY;
    if (cat == TL_CAT_KERNEL && is_legacy_fill(name)) return TL_B_COMP;
    if (tl_name_is_comm(name)) return TL_B_COMM;
    return TL_B_COMP;
}

/* Stable LSD radix sort by start would be overkill here: the lists are
 * per-bucket GPU events, sorted with a merge sort on (s, e). */
static void msort(tl_interval *a, tl_interval *tmp, size_t n)
{
    if (n < 2) return;
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            tl_interval x = a[i];
            size_t j = i;
            while (j > 0 && a[j - 1].s > x.s) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    msort(a, tmp, h);
    msort(a + h, tmp, n - h);
    if (a[h - 1].s <= a[h].s) return;
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = a[j].s < a[i].s ? a[j++] : a[i++];
    while (i < h) tmp[k++] = a[i++];
    while (j < n) tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

size_t tl_merge(tl_interval *iv, size_t n)
{
    if (!n) return 0;
    tl_interval *tmp = tl_xmalloc(n * sizeof *tmp);
    msort(iv, tmp, n);
    free(tmp);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[i].s <= iv[k].e) {
            if (iv[i].e > iv[k].e) iv[k].e = iv[i].e;
        } else {
            iv[++k] = iv[i];
        }
    }
    return k + 1;
}

size_t tl_subtract(const tl_interval *a, size_t na, const tl_interval *b, size_t nb, tl_interval *out)
{
    size_t o = 0, ai = 0;
    for (size_t bi = 0; bi < nb; bi++) {
        int64_t bs = b[bi].s, be = b[bi].e;
        while (ai < na && a[ai].e <= bs) ai++;
        int64_t cur = bs;
        for (size_t k = ai; k < na && a[k].s < be; k++) {
            if (a[k].s > cur) out[o++] = (tl_interval){cur, a[k].s < be ? a[k].s : be};
            if (a[k].e > cur) cur = a[k].e;
            if (cur >= be) break;
        }
        if (cur < be) out[o++] = (tl_interval){cur, be};
    }
    return o;
}

int64_t tl_length(const tl_interval *iv, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) s += iv[i].e - iv[i].s;
    return s;
}

int64_t tl_busy_time(const tl_event_store *es, const uint32_t *uids, size_t n)
{
    if (!n) return 0;
    tl_interval *iv = tl_xmalloc(n * sizeof *iv);
    for (size_t i = 0; i < n; i++) iv[i] = (tl_interval){es->ts[uids[i]], tl_es_end(es, uids[i])};
    size_t m = tl_merge(iv, n);
    int64_t len = tl_length(iv, m);
    free(iv);
    return len;
}

int tl_timeline_compute(const tl_event_store *es, const tl_tree *t, int include_unlinked,
                        int64_t micro_idle_thresh_ns, tl_timeline *out)
{
    return tl_timeline_compute_subset(es, t, include_unlinked, micro_idle_thresh_ns, NULL, 0, out);
}

size_t tl_gpu_buckets(const tl_event_store *es, const tl_tree *t, int include_unlinked, const uint8_t *flags,
                      uint8_t want, uint8_t *bk, size_t cnt[3])
{
    size_t n = 0;
    cnt[0] = cnt[1] = cnt[2] = 0;
    /* bucket per distinct kernel name, computed once */
    uint8_t *bucket_of_name = tl_xmalloc(es->names.n ? es->names.n : 1);
    memset(bucket_of_name, 0xff, es->names.n);
    for (size_t i = 0; i < es->n; i++) {
        bk[i] = 0xff;
        if (!tl_is_gpu_cat(es->cat[i]) || !(es->flags[i] & TL_F_TS)) continue;
        if (!tl_timeline_holds(es, t, include_unlinked, i)) continue;
        if (flags && flags[i] != want) continue;
        uint8_t b;
        if (es->cat[i] == TL_CAT_GPU_MEMCPY) {
            b = TL_B_MEMCPY;
        } else if (es->cat[i] == TL_CAT_KERNEL) {
            /* the legacy copy/fill names apply to kernels only */
            uint8_t *slot = &bucket_of_name[es->name[i]];
            if (*slot == 0xff) *slot = (uint8_t)tl_gpu_bucket(TL_CAT_KERNEL, tl_es_name(es, i));
            b = *slot;
        } else {
            b = (uint8_t)tl_gpu_bucket(es->cat[i], tl_es_name(es, i));
        }
        bk[i] = b;
        cnt[b]++;
        n++;
    }
    free(bucket_of_name);
    return n;
}

void tl_unions_of(const tl_event_store *es, const uint32_t *uids, const uint8_t *bk, size_t n,
                  int64_t micro_thresh_ns, tl_unions *u)
{
    memset(u, 0, sizeof *u);
    if (!n) return;
    size_t cnt[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) cnt[bk[uids[i]]]++;
    tl_interval *lists[3], *all = tl_xmalloc(n * sizeof *all);
    size_t fill[3] = {0, 0, 0};
    for (int b = 0; b < 3; b++) lists[b] = tl_xmalloc((cnt[b] ? cnt[b] : 1) * sizeof(tl_interval));
    for (size_t i = 0; i < n; i++) {
        uint32_t g = uids[i];
        tl_interval iv = {es->ts[g], tl_es_end(es, g)};
        lists[bk[g]][fill[bk[g]]++] = iv;
        all[i] = iv;
    }
    u->n_comp = tl_merge(lists[TL_B_COMP], cnt[TL_B_COMP]);
    u->n_comm = tl_merge(lists[TL_B_COMM], cnt[TL_B_COMM]);
    u->n_memcpy = tl_merge(lists[TL_B_MEMCPY], cnt[TL_B_MEMCPY]);
    size_t nall = tl_merge(all, n);
    size_t room = u->n_comp + u->n_comm + u->n_memcpy + 1;
    tl_interval *tmp1 = tl_xmalloc(room * sizeof *tmp1), *tmp2 = tl_xmalloc(room * 2 * sizeof *tmp2);
    u->computation = tl_length(lists[TL_B_COMP], u->n_comp);
    u->total_comm = tl_length(lists[TL_B_COMM], u->n_comm);
    u->total_memcpy = tl_length(lists[TL_B_MEMCPY], u->n_memcpy);
    /* exposed comm = U(comm) \ U(comp); exposed memcpy = (U(memcpy) \ U(comp)) \ U(comm) */
    u->n_exposed_comm = tl_subtract(lists[TL_B_COMP], u->n_comp, lists[TL_B_COMM], u->n_comm, tmp1);
    u->exposed_comm = tl_length(tmp1, u->n_exposed_comm);
    size_t n1 = tl_subtract(lists[TL_B_COMP], u->n_comp, lists[TL_B_MEMCPY], u->n_memcpy, tmp1);
    u->n_exposed_memcpy = tl_subtract(lists[TL_B_COMM], u->n_comm, tmp1, n1, tmp2);
    u->exposed_memcpy = tl_length(tmp2, u->n_exposed_memcpy);
    u->busy = tl_length(all, nall);
    u->total = all[nall - 1].e - all[0].s;
    u->n_events = n;
    if (micro_thresh_ns >= 0) {
        for (size_t i = 1; i < nall; i++) {
            int64_t gap = all[i].s - all[i - 1].e;
            if (gap < micro_thresh_ns) u->micro_idle += gap;
            else u->macro_idle += gap;
        }
    }
    free(tmp1);
    free(tmp2);
    free(all);
    for (int b = 0; b < 3; b++) free(lists[b]);
}

void tl_bucket_unions(const tl_event_store *es, const uint8_t *bk, size_t n,
                      int64_t micro_thresh_ns, tl_unions *u)
{
    uint32_t *uids = tl_xmalloc((n ? n : 1) * sizeof *uids);
    size_t m = 0;
    for (size_t i = 0; i < es->n && m < n; i++)
        if (bk[i] != 0xff) uids[m++] = (uint32_t)i;
    tl_unions_of(es, uids, bk, m, micro_thresh_ns, u);
    free(uids);
}

int tl_timeline_compute_subset(const tl_event_store *es, const tl_tree *t, int include_unlinked,
                               int64_t micro_idle_thresh_ns, const uint8_t *flags, uint8_t want, tl_timeline *out)
{
    memset(out, 0, sizeof *out);
    size_t cnt[3];
    uint8_t *bk = tl_xmalloc(es->n ? es->n : 1);
    size_t nall = tl_gpu_buckets(es, t, include_unlinked, flags, want, bk, cnt);
    if (!nall) {
        free(bk);
        return -1;
    }
    tl_unions u;
    tl_bucket_unions(es, bk, nall, micro_idle_thresh_ns, &u);
    free(bk);
    out->computation = u.computation;
    out->total_comm = u.total_comm;
    out->total_memcpy = u.total_memcpy;
    out->exposed_comm = u.exposed_comm;
    out->exposed_memcpy = u.exposed_memcpy;
    out->busy = u.busy;
    out->total = u.total;
    out->idle = u.total - u.busy;
    out->n_events = u.n_events;
    if (micro_idle_thresh_ns >= 0) {
        out->have_micro = 1;
        out->micro_idle = u.micro_idle;
        out->macro_idle = u.macro_idle;
    }
    return 0;
}

/* ------------------------------------------------------ overlap sweep */

typedef struct sweep_pt {
    int64_t time;
    uint32_t type; /* 0 end, 1 start: ends sort first, so touching is not overlapping */
    uint32_t idx;  /* index into the sweep set */
} sweep_pt;

static int pt_cmp(const void *a, const void *b)
{
    const sweep_pt *x = a, *y = b;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}


typedef struct pair {
    uint32_t a;    /* index into the sweep set */
    uint32_t ub;   /* the uid it overlaps */
    int64_t tsb;   /* and that event's ts */
} pair;

/* by a, then the overlapping event's (ts, uid) */
static int pair_cmp(const void *x, const void *y)
{
    const pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->tsb != q->tsb) return p->tsb < q->tsb ? -1 : 1;
    return (p->ub > q->ub) - (p->ub < q->ub);
}

void tl_overlap_sweep(const tl_event_store *es, const tl_tree *t, int include_unlinked, const uint8_t *block,
                      tl_overlaps *out)
{
    memset(out, 0, sizeof *out);
    /* the set: the timeline's GPU events, ascending uid */
    TL_VEC(uint32_t) set = {0};
    for (size_t i = 0; i < es->n; i++) {
        if (!tl_is_gpu_cat(es->cat[i]) || !(es->flags[i] & TL_F_TS)) continue;
        if (!tl_timeline_holds(es, t, include_unlinked, i)) continue;
        TL_PUSH(set, (uint32_t)i);
    }
    size_t n = set.n;
    /* points of the events with t_end > ts */
    sweep_pt *pts = tl_xmalloc((2 * n + 1) * sizeof *pts);
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t u = set.v[i];
        int64_t s = es->ts[u], e = tl_es_end(es, u);
        if (e <= s) continue;
        pts[np++] = (sweep_pt){s, 1, (uint32_t)i};
        pts[np++] = (sweep_pt){e, 0, (uint32_t)i};
    }
    qsort(pts, np, sizeof *pts, pt_cmp);
    /* stream of each event (has, value) */
    int64_t *stream = tl_xmalloc((n + 1) * sizeof *stream);
    uint8_t *has_stream = tl_xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) has_stream[i] = (uint8_t)tl_es_arg_int(es, set.v[i], TL_K_STREAM, &stream[i]);
    /* the active set, with each member's position for O(1) removal */
    uint32_t *active = tl_xmalloc((n + 1) * sizeof *active), *pos = tl_xmalloc((n + 1) * sizeof *pos);
    size_t nact = 0;
    TL_VEC(pair) pairs = {0};
    for (size_t p = 0; p < np; p++) {
        uint32_t x = pts[p].idx;
        if (!pts[p].type) {
            uint32_t last = active[--nact];
            active[pos[x]] = last;
            pos[last] = pos[x];
            continue;
        }
        uint32_t ux = set.v[x];
        int64_t xs = es->ts[ux], xe = tl_es_end(es, ux);
        for (size_t a = 0; a < nact; a++) {
            uint32_t y = active[a], uy = set.v[y];
            if (has_stream[x] && has_stream[y] && stream[x] == stream[y]) continue;
            if (block && block[ux] != block[uy]) continue;
            int64_t ys = es->ts[uy], ye = tl_es_end(es, uy);
            int64_t lo = xs > ys ? xs : ys, hi = xe < ye ? xe : ye;
            if (hi - lo < 1000) continue; /* at least 1 us in common */
            pair pa = {x, uy, ys}, pb = {y, ux, xs};
            TL_PUSH(pairs, pa);
            TL_PUSH(pairs, pb);
        }
        pos[x] = (uint32_t)nact;
        active[nact++] = x;
    }
    free(pts);
    free(stream);
    free(has_stream);
    free(active);
    free(pos);
    if (pairs.n) qsort(pairs.v, pairs.n, sizeof *pairs.v, pair_cmp);
    out->n = n;
    out->uid = set.v ? set.v : tl_xmalloc(sizeof *out->uid);
    out->off = tl_xcalloc(n + 1, sizeof *out->off);
    out->adj = tl_xmalloc((pairs.n + 1) * sizeof *out->adj);
    out->n_pairs = pairs.n / 2;
    for (size_t k = 0; k < pairs.n; k++) {
        out->off[pairs.v[k].a + 1]++;
        out->adj[k] = pairs.v[k].ub;
    }
    for (size_t i = 0; i < n; i++) out->off[i + 1] += out->off[i];
    free(pairs.v);
}

void tl_overlaps_free(tl_overlaps *o)
{
    free(o->uid);
    free(o->off);
    free(o->adj);
    memset(o, 0, sizeof *o);
}

size_t tl_overlaps_of(const tl_overlaps *o, uint32_t g, const uint32_t **list)
{
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (o->uid[mid] < g) lo = mid + 1;
        else hi = mid;
    }
    if (lo >= o->n || o->uid[lo] != g) {
        *list = NULL;
        return 0;
    }
    *list = o->adj + o->off[lo];
    return o->off[lo + 1] - o->off[lo];
}
