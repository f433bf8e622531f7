/* launch_stats.c — see launch_stats.h. */
#include "launch_stats.h"

#include <stdlib.h>
#include <string.h>

#include "../util/numsort.h"
#include "../util/vec.h"

double tl_quantile_sorted(const int64_t *v, size_t n, double q)
{
    if (!n) return 0;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n) return (double)v[n - 1];
    double frac = pos - (double)lo;
    return (double)v[lo] + ((double)v[lo + 1] - (double)v[lo]) * frac;
}

/* sorts v in place */
static void dist_of(int64_t *v, size_t n, tl_dist *d)
{
    memset(d, 0, sizeof *d);
    if (!n) return;
    tl_sort_i64(v, n);
    for (size_t i = 0; i < n; i++) d->sum += v[i];
    d->mean = (double)d->sum / (double)n;
    d->median = tl_quantile_sorted(v, n, 0.5);
    d->p95 = tl_quantile_sorted(v, n, 0.95);
    d->min = v[0];
    d->max = v[n - 1];
}

/* the three distributions of launches idx[0..n) (scratch: n entries) */
static void group_of(const tl_launch *v, const uint32_t *idx, size_t n, int64_t *scratch, tl_launch_group *g)
{
    g->n = n;
    for (size_t i = 0; i < n; i++) scratch[i] = v[idx[i]].cpu;
    dist_of(scratch, n, &g->cpu);
    for (size_t i = 0; i < n; i++) scratch[i] = v[idx[i]].delay;
    dist_of(scratch, n, &g->delay);
    for (size_t i = 0; i < n; i++) scratch[i] = v[idx[i]].gpu_dur;
    dist_of(scratch, n, &g->gpu);
}

typedef struct name_idx {
    uint32_t name, i;
} name_idx;

static int cmp_name_idx(const void *a, const void *b)
{
    const name_idx *x = a, *y = b;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* qsort has no context: the names pool travels in a wrapper */
typedef struct grp_sort {
    tl_launch_group g;
    const char *name;
} grp_sort;

static int cmp_grp(const void *a, const void *b)
{
    const grp_sort *x = a, *y = b;
    if (x->g.gpu.sum != y->g.gpu.sum) return x->g.gpu.sum > y->g.gpu.sum ? -1 : 1;
    return strcmp(x->name, y->name);
}

void tl_launch_stats_compute(const tl_trace *t, tl_launch_stats *out)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    memset(out, 0, sizeof *out);
    out->all.name = UINT32_MAX;
    TL_VEC(tl_launch) v = {0};
    for (size_t u = 0; u < es->n; u++) {
        if (!tl_is_gpu_cat(es->cat[u]) || !(es->flags[u] & TL_F_TS)) continue;
        uint32_t rt = tr->parent[u];
        if (rt == TL_NOUID) {
            out->n_unlinked++;
            continue;
        }
        /* a graph launch's kernels: from the one call, or (a capture merge)
         * from its copied capture calls, which carry the graph launch's ts */
        if (tl_csr_len(&tr->gpus, rt) > 1 || tl_trace_is_copy(t, rt)) {
            out->n_multi++;
            continue;
        }
        tl_launch l = {(uint32_t)u, rt, es->dur[rt], es->ts[u] - es->ts[rt], es->dur[u]};
        TL_PUSH(v, l);
    }
    out->v = v.v;
    out->n = v.n;
    if (!v.n) return;
    uint32_t *idx = tl_xmalloc(v.n * sizeof *idx);
    int64_t *scratch = tl_xmalloc(v.n * sizeof *scratch);
    for (size_t i = 0; i < v.n; i++) idx[i] = (uint32_t)i;
    group_of(v.v, idx, v.n, scratch, &out->all);
    double p95 = out->all.delay.p95;
    /* per name */
    name_idx *ni = tl_xmalloc(v.n * sizeof *ni);
    for (size_t i = 0; i < v.n; i++) {
        ni[i].name = es->name[v.v[i].gpu];
        ni[i].i = (uint32_t)i;
    }
    qsort(ni, v.n, sizeof *ni, cmp_name_idx);
    TL_VEC(grp_sort) gs = {0};
    for (size_t a = 0; a < v.n;) {
        size_t b = a;
        while (b < v.n && ni[b].name == ni[a].name) b++;
        grp_sort x;
        memset(&x, 0, sizeof x);
        x.g.name = ni[a].name;
        x.name = tl_strpool_get(&es->names, ni[a].name);
        for (size_t k = a; k < b; k++) {
            idx[k - a] = ni[k].i;
            if ((double)v.v[ni[k].i].delay > p95) x.g.n_outliers++;
        }
        group_of(v.v, idx, b - a, scratch, &x.g);
        out->all.n_outliers += x.g.n_outliers;
        TL_PUSH(gs, x);
        a = b;
    }
    qsort(gs.v, gs.n, sizeof *gs.v, cmp_grp);
    out->g = tl_xmalloc(gs.n * sizeof *out->g);
    for (size_t i = 0; i < gs.n; i++) out->g[i] = gs.v[i].g;
    out->ng = gs.n;
    free(gs.v);
    free(ni);
    free(scratch);
    free(idx);
}

void tl_launch_stats_free(tl_launch_stats *s)
{
    free(s->v);
    free(s->g);
    memset(s, 0, sizeof *s);
}
