/* steps.c — see steps.h. */
#include "steps.h"
#include "launch_stats.h"

#include <stdlib.h>
#include <string.h>

#include "../util/hashmap.h"
#include "../util/idset.h"
#include "../util/vec.h"

/* N of "ProfilerStep#N", or -1. */
static long step_number(const char *name)
{
    if (strncmp(name, "ProfilerStep#", 13)) return -1;
    char *end;
    long n = strtol(name + 13, &end, 10);
    return end != name + 13 && *end == 0 && n >= 0 ? n : -1;
}

static int cmp_step(const void *a, const void *b)
{
    const tl_step *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->uid > y->uid) - (x->uid < y->uid);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The step holding time t (steps sorted by ts, may overlap: the last one
 * starting at or before t that still runs), or SIZE_MAX. */
static size_t step_at(const tl_step *v, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].ts <= t) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i-- > 0;) {
        if (t < v[i].ts + v[i].dur) return i;
        if (lo - i > 4) break; /* steps do not nest deeply */
    }
    return SIZE_MAX;
}

/* Sets each step's any_gpu_start / any_gpu_end from every GPU event of the
 * trace, and before_trace_ns from those launched before it (steps sorted by
 * ts; they may overlap, but do not nest deeply). */
static void any_gpu_in_windows(const tl_trace *t, tl_step *v, size_t n)
{
    const tl_event_store *es = &t->es;
    for (size_t i = 0; i < n; i++) v[i].any_gpu_start = v[i].any_gpu_end = INT64_MIN;
    for (size_t u = 0; u < es->n; u++) {
        if (!tl_is_gpu_cat(es->cat[u]) || !(es->flags[u] & TL_F_TS)) continue;
        int64_t a = es->ts[u], b = tl_es_end(es, u);
        /* the steps starting before b (at b too for an event of no duration), latest first */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (v[mid].ts < b || (v[mid].ts == b && a == b)) lo = mid + 1;
            else hi = mid;
        }
        int misses = 0;
        for (size_t i = lo; i-- > 0;) {
            int64_t end = v[i].ts + v[i].dur;
            if (end <= a) {
                if (++misses > 4) break;
                continue;
            }
            int64_t from = a > v[i].ts ? a : v[i].ts, to = b < end ? b : end;
            if (v[i].any_gpu_start == INT64_MIN || from < v[i].any_gpu_start) v[i].any_gpu_start = from;
            if (v[i].any_gpu_end == INT64_MIN || to > v[i].any_gpu_end) v[i].any_gpu_end = to;
            if (t->tree.in_tree && tl_tree_before_trace(&t->tree, es, u)) v[i].before_trace_ns += to - from;
        }
    }
}

size_t tl_steps_find(const tl_trace *t, tl_step **out)
{
    const tl_event_store *es = &t->es;
    TL_VEC(tl_step) steps = {0};
    /* the step number of each distinct name, read once */
    long *num = tl_xmalloc((es->names.n + 1) * sizeof *num);
    for (uint32_t i = 0; i < es->names.n; i++) num[i] = step_number(tl_strpool_get(&es->names, i));
    for (size_t u = 0; u < es->n; u++) {
        if (es->ph[u] != 'X' || !(es->flags[u] & TL_F_TS) || es->cat[u] == TL_CAT_GPU_USER_ANNOTATION) continue;
        long n = num[es->name[u]];
        if (n < 0) continue;
        tl_step s;
        memset(&s, 0, sizeof s);
        s.uid = (uint32_t)u;
        s.number = n;
        s.ts = es->ts[u];
        s.dur = es->dur[u];
        TL_PUSH(steps, s);
    }
    free(num);
    if (steps.n) qsort(steps.v, steps.n, sizeof *steps.v, cmp_step);
    /* one per N: the first in start order */
    tl_map seen;
    tl_map_init(&seen, steps.n + 1);
    size_t m = 0;
    for (size_t i = 0; i < steps.n; i++) {
        if (tl_map_get(&seen, (uint64_t)steps.v[i].number, 0) != UINT32_MAX) continue;
        tl_map_put(&seen, (uint64_t)steps.v[i].number, 0, 1);
        steps.v[m++] = steps.v[i];
    }
    tl_map_free(&seen);
    *out = steps.v;
    return m;
}

void tl_steps_compute(const tl_trace *t, tl_steps *out)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    memset(out, 0, sizeof *out);
    struct {
        tl_step *v;
        size_t n;
    } steps;
    steps.n = tl_steps_find(t, &steps.v);
    if (!steps.n) {
        free(steps.v);
        return;
    }
    uint8_t *kind = tl_launch_kinds(es);
    /* every GPU event to its step */
    uint8_t *bk = tl_xmalloc(es->n ? es->n : 1);
    size_t cnt[3];
    tl_gpu_buckets(es, tr, TL_UNLINKED_LAUNCHED, NULL, 0, bk, cnt); /* not the work launched before the trace */
    size_t *of = tl_xmalloc((es->n ? es->n : 1) * sizeof *of);
    size_t *count = tl_xcalloc(steps.n + 1, sizeof *count);
    TL_VEC(int64_t) corr_ids = {0}; /* the GPU events' correlations */
    for (size_t u = 0; u < es->n; u++) {
        of[u] = SIZE_MAX;
        if (bk[u] == 0xff) continue;
        int64_t c = tl_es_corr(es, u);
        if (c != TL_NONE) TL_PUSH(corr_ids, c);
        uint32_t rt = tr->parent[u];
        int64_t key = rt == TL_NOUID ? es->ts[u] : es->ts[rt];
        size_t s = step_at(steps.v, steps.n, key);
        if (s == SIZE_MAX) {
            out->n_gpu_outside++;
            out->gpu_outside_ns += es->dur[u];
            continue;
        }
        of[u] = s;
        count[s]++;
        steps.v[s].n_unlinked += rt == TL_NOUID;
    }
    /* launch calls whose GPU work is not in the trace */
    tl_idset corr;
    tl_idset_build(&corr, corr_ids.v, corr_ids.n);
    free(corr_ids.v);
    for (size_t u = 0; u < es->n; u++) {
        if ((es->cat[u] != TL_CAT_CUDA_RUNTIME && es->cat[u] != TL_CAT_CUDA_DRIVER) || tl_es_corr(es, u) == INT64_MIN ||
            tl_trace_is_copy(t, u)) /* a capture merge's copy: not a launch call of this trace */
            continue;
        uint8_t k = kind[es->name[u]];
        /* (a graph launch a capture merge grafted: its kernels took the captured calls' ids) */
        if ((k != TL_LAUNCH_GRAPH && k != TL_LAUNCH_WORK) || tl_idset_has(&corr, tl_es_corr(es, u)) ||
            tl_tree_has_gpus(tr, (uint32_t)u))
            continue;
        size_t s = step_at(steps.v, steps.n, es->ts[u]);
        if (s != SIZE_MAX) steps.v[s].n_launches_missing++;
    }
    /* the unions of each step's events: uids grouped by step */
    size_t *off = tl_xcalloc(steps.n + 1, sizeof *off);
    for (size_t s = 0; s < steps.n; s++) off[s + 1] = off[s] + count[s];
    uint32_t *uids = tl_xmalloc((off[steps.n] ? off[steps.n] : 1) * sizeof *uids);
    size_t *fill = tl_xcalloc(steps.n + 1, sizeof *fill);
    for (size_t u = 0; u < es->n; u++)
        if (of[u] != SIZE_MAX) uids[off[of[u]] + fill[of[u]]++] = (uint32_t)u;
    for (size_t s = 0; s < steps.n; s++) {
        tl_step *st = &steps.v[s];
        st->n_gpu = count[s];
        tl_unions_of(es, uids + off[s], bk, count[s], -1, &st->u);
        st->first_launch = st->last_launch = INT64_MIN;
        if (count[s]) {
            st->gpu_start = INT64_MAX;
            st->gpu_end = INT64_MIN;
            for (size_t k = off[s]; k < off[s + 1]; k++) {
                if (es->ts[uids[k]] < st->gpu_start) st->gpu_start = es->ts[uids[k]];
                if (tl_es_end(es, uids[k]) > st->gpu_end) st->gpu_end = tl_es_end(es, uids[k]);
                uint32_t rt = tr->parent[uids[k]];
                if (rt == TL_NOUID) continue;
                if (st->first_launch == INT64_MIN || es->ts[rt] < st->first_launch) st->first_launch = es->ts[rt];
                if (st->last_launch == INT64_MIN || es->ts[rt] > st->last_launch) st->last_launch = es->ts[rt];
            }
        }
        st->partial = st->n_launches_missing > 0;
    }
    any_gpu_in_windows(t, steps.v, steps.n);
    /* warm-up: leading steps slower than 1.5 x the median */
    int64_t *walls = tl_xmalloc(steps.n * sizeof *walls);
    for (size_t s = 0; s < steps.n; s++) walls[s] = steps.v[s].dur;
    qsort(walls, steps.n, sizeof *walls, cmp_i64);
    double median = tl_quantile_sorted(walls, steps.n, 0.5);
    for (size_t s = 0; s + 1 < steps.n && (double)steps.v[s].dur > 1.5 * median; s++) steps.v[s].warmup = 1;
    free(walls);
    free(fill);
    free(uids);
    free(off);
    free(count);
    free(of);
    free(bk);
    tl_idset_free(&corr);
    free(kind);
    out->v = steps.v;
    out->n = steps.n;
}

void tl_steps_free(tl_steps *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}
