/* mem_timeline.c — see mem_timeline.h. */
#include "mem_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"

typedef struct mev {
    int64_t type, id, ts, alloc, reserved, bytes; /* reserved -1: absent */
    uint32_t uid;
} mev;

static int cmp_mev(const void *a, const void *b)
{
    const mev *x = a, *y = b;
    if (x->type != y->type) return x->type < y->type ? -1 : 1;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->uid > y->uid) - (x->uid < y->uid);
}

/* The order of v in cmp_mev order, as indices (so the records are not
 * copied): a stable split by device in (type, id) order, when each
 * device's events come in ts order in the file, as profilers write them;
 * otherwise (or with more than 64 devices, which no real trace has) v is
 * sorted in place and the order is the identity. */
#define MAX_SPLIT 64
static uint32_t *group_order(mev *v, size_t n)
{
    uint32_t *ord = tl_xmalloc(n * sizeof *ord);
    mev key[MAX_SPLIT];
    int64_t last[MAX_SPLIT];
    size_t cnt[MAX_SPLIT], nk = 0;
    int split = 1;
    for (size_t i = 0; i < n && split; i++) {
        size_t k = 0;
        while (k < nk && (key[k].type != v[i].type || key[k].id != v[i].id)) k++;
        if (k == nk) {
            if (nk == MAX_SPLIT) {
                split = 0;
                break;
            }
            key[nk] = v[i];
            last[nk] = v[i].ts;
            cnt[nk++] = 0;
        }
        if (v[i].ts < last[k]) split = 0;
        last[k] = v[i].ts;
        cnt[k]++;
    }
    if (!split) {
        qsort(v, n, sizeof *v, cmp_mev);
        for (size_t i = 0; i < n; i++) ord[i] = (uint32_t)i;
        return ord;
    }
    /* pos[k]: where device k starts in (type, id) order */
    size_t pos[MAX_SPLIT];
    for (size_t k = 0; k < nk; k++) {
        pos[k] = 0;
        for (size_t j = 0; j < nk; j++)
            if (cmp_mev(&key[j], &key[k]) < 0) pos[k] += cnt[j];
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (key[k].type != v[i].type || key[k].id != v[i].id) k++;
        ord[pos[k]++] = (uint32_t)i;
    }
    return ord;
}

static uint32_t key_of(const tl_event_store *es, const char *k) { return tl_strpool_find(&es->keys, k, strlen(k)); }

static int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

/* A peak whose op is looked up: its event and where the answer goes. */
typedef struct peak_ref {
    uint32_t pid, tid;
    int64_t ts;
    uint32_t ev;
    uint32_t *op;
} peak_ref;

static int cmp_peak(const void *a, const void *b)
{
    const peak_ref *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->ev > y->ev) - (x->ev < y->ev);
}

/* The innermost cpu_op of each peak's thread holding its ts, for every peak
 * at once: one pass over the store, each op checking only the peaks of its
 * thread inside its time (binary search over the peaks sorted by thread and
 * ts), so the work is the ops plus, per peak, the ops that hold it. */
static void ops_at(const tl_event_store *es, peak_ref *p, size_t n)
{
    for (size_t k = 0; k < n; k++) *p[k].op = TL_NOUID;
    if (!n) return;
    qsort(p, n, sizeof *p, cmp_peak);
    for (size_t u = 0; u < es->n; u++) {
        if (es->cat[u] != TL_CAT_CPU_OP || !(es->flags[u] & TL_F_TS)) continue;
        /* the first peak at or after (pid, tid, ts[u]) */
        peak_ref key = {tl_es_pid(es, u), tl_es_tid(es, u), es->ts[u], 0, NULL};
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_peak(&p[mid], &key) < 0) lo = mid + 1;
            else hi = mid;
        }
        int64_t end = tl_es_end(es, u);
        for (size_t k = lo; k < n && p[k].pid == key.pid && p[k].tid == key.tid && p[k].ts <= end; k++) {
            uint32_t o = *p[k].op;
            if (o == TL_NOUID || es->ts[u] > es->ts[o] || (es->ts[u] == es->ts[o] && es->dur[u] < es->dur[o]))
                *p[k].op = (uint32_t)u;
        }
    }
}

void tl_mem_timeline_compute(const tl_trace *t, unsigned buckets, tl_mem_timeline *out)
{
    const tl_event_store *es = &t->es;
    memset(out, 0, sizeof *out);
    if (!buckets) buckets = TL_MEM_SAMPLES;
    uint32_t name = tl_strpool_find(&es->names, "[memory]", 8);
    uint32_t k_alloc = key_of(es, "Total Allocated");
    if (name == UINT32_MAX || k_alloc == UINT32_MAX) return;
    uint32_t k_res = key_of(es, "Total Reserved"), k_bytes = key_of(es, "Bytes");
    uint32_t k_type = key_of(es, "Device Type"), k_id = key_of(es, "Device Id");
    TL_VEC(mev) v = {0};
    for (size_t u = 0; u < es->n; u++) {
        if (es->name[u] != name || !(es->flags[u] & TL_F_TS) || !(es->flags[u] & TL_F_ARGS)) continue;
        /* one walk over the args (the last of a repeated key wins, as tl_es_arg_int) */
        int64_t val[5] = {0, -1, 0, -1, -1};
        const uint32_t key[5] = {k_alloc, k_res, k_bytes, k_type, k_id};
        const int64_t none[5] = {0, -1, 0, -1, -1};
        int have_alloc = 0;
        tl_arg_iter it;
        tl_arg ar;
        tl_es_args_begin(es, u, &it);
        while (tl_es_args_next(&it, &ar)) {
            for (int k = 0; k < 5; k++) {
                if (ar.key != key[k]) continue;
                val[k] = ar.tag == TL_AV_INT ? ar.i : none[k];
                if (!k) have_alloc = ar.tag == TL_AV_INT;
            }
        }
        if (!have_alloc) continue;
        mev e = {val[3], val[4], es->ts[u], val[0], val[1], val[2], (uint32_t)u};
        TL_PUSH(v, e);
    }
    if (!v.n) return;
    uint32_t *ord = group_order(v.v, v.n);
#define V(i) (&v.v[ord[i]])
    TL_VEC(tl_mem_device) dv = {0};
    TL_VEC(tl_mem_sample) sv = {0};
    for (size_t a = 0; a < v.n;) {
        size_t b = a;
        while (b < v.n && V(b)->type == V(a)->type && V(b)->id == V(a)->id) b++;
        tl_mem_device d;
        memset(&d, 0, sizeof d);
        d.type = V(a)->type;
        d.id = V(a)->id;
        d.n_events = b - a;
        d.first_ts = V(a)->ts;
        d.last_ts = V(b - 1)->ts;
        d.peak_alloc = V(a)->alloc;
        d.peak_alloc_ts = V(a)->ts;
        d.peak_alloc_uid = V(a)->uid;
        d.peak_reserved = -1;
        d.peak_reserved_uid = TL_NOUID;
        d.peak_alloc_op = d.peak_reserved_op = TL_NOUID;
        for (size_t i = a; i < b; i++) {
            const mev *e = V(i);
            if (e->bytes > 0) {
                d.n_alloc++;
                d.bytes_alloc = sat_add(d.bytes_alloc, e->bytes);
            } else if (e->bytes < 0) {
                d.n_free++;
                d.bytes_freed = sat_add(d.bytes_freed, e->bytes == INT64_MIN ? INT64_MAX : -e->bytes);
            }
            if (e->alloc > d.peak_alloc) {
                d.peak_alloc = e->alloc;
                d.peak_alloc_ts = e->ts;
                d.peak_alloc_uid = e->uid;
            }
            if (e->reserved > d.peak_reserved) {
                d.peak_reserved = e->reserved;
                d.peak_reserved_ts = e->ts;
                d.peak_reserved_uid = e->uid;
            }
        }
        d.end_alloc = V(b - 1)->alloc;
        d.end_reserved = V(b - 1)->reserved;
        /* samples */
        int64_t span = d.last_ts - d.first_ts + 1; /* >= 1: ts are bounded (architecture.md) */
        /* at most one sample per event (at least 16) and per ns: the samples stay
         * within a multiple of the events however many devices a trace names */
        size_t cap_ev = d.n_events > 16 ? d.n_events : 16;
        unsigned nb = buckets;
        if ((size_t)nb > cap_ev) nb = (unsigned)cap_ev;
        if ((int64_t)nb > span) nb = (unsigned)span;
        d.sample_off = sv.n;
        d.n_samples = nb;
        double w = (double)span / (double)nb;
        int64_t lvl_a = V(a)->alloc, lvl_r = V(a)->reserved;
        size_t i = a;
        for (unsigned k = 0; k < nb; k++) {
            tl_mem_sample s = {d.first_ts + (int64_t)((double)k * w), lvl_a, lvl_r};
            int64_t end = k + 1 == nb ? d.last_ts + 1 : d.first_ts + (int64_t)((double)(k + 1) * w);
            for (; i < b && V(i)->ts < end; i++) {
                lvl_a = V(i)->alloc;
                lvl_r = V(i)->reserved;
                if (lvl_a > s.allocated) s.allocated = lvl_a;
                if (lvl_r > s.reserved) s.reserved = lvl_r;
            }
            TL_PUSH(sv, s);
        }
        TL_PUSH(dv, d);
        a = b;
    }
#undef V
    free(ord);
    free(v.v);
    /* the ops at the peaks */
    peak_ref *pr = tl_xmalloc(2 * dv.n * sizeof *pr);
    size_t np = 0;
    for (size_t k = 0; k < dv.n; k++) {
        tl_mem_device *d = &dv.v[k];
        uint32_t e = d->peak_alloc_uid;
        pr[np++] = (peak_ref){tl_es_pid(es, e), tl_es_tid(es, e), es->ts[e], e, &d->peak_alloc_op};
        if ((e = d->peak_reserved_uid) != TL_NOUID)
            pr[np++] = (peak_ref){tl_es_pid(es, e), tl_es_tid(es, e), es->ts[e], e, &d->peak_reserved_op};
    }
    ops_at(es, pr, np);
    free(pr);
    out->v = dv.v;
    out->n = dv.n;
    out->s = sv.v;
    out->n_samples = sv.n;
}

void tl_mem_timeline_free(tl_mem_timeline *m)
{
    free(m->v);
    free(m->s);
    memset(m, 0, sizeof *m);
}
