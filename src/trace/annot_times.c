/* annot_times.c — see annot_times.h. */
#include "annot_times.h"

#include <stdlib.h>
#include <string.h>

#include "timeline.h"
#include "../util/vec.h"

typedef struct rng {
    uint32_t name;
    uint64_t thr;          /* the process (pid idval id) */
    int64_t s, e;
} rng;

typedef struct lkey {
    uint64_t thr;
    int64_t ts;            /* the launch call's start */
    uint32_t gpu;
} lkey;

static int cmp_rng(const void *a, const void *b)
{
    const rng *x = a, *y = b;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    if (x->thr != y->thr) return x->thr < y->thr ? -1 : 1;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return (x->e > y->e) - (x->e < y->e);
}

static int cmp_lkey(const void *a, const void *b)
{
    const lkey *x = a, *y = b;
    if (x->thr != y->thr) return x->thr < y->thr ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

/* first launch at or after (thr, ts) */
static size_t lower(const lkey *k, size_t n, uint64_t thr, int64_t ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (k[mid].thr < thr || (k[mid].thr == thr && k[mid].ts < ts)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

typedef struct srt {
    tl_annot_time a;
    const char *name;
} srt;

static int cmp_srt(const void *p, const void *q)
{
    const srt *x = p, *y = q;
    if (x->a.cpu_ns != y->a.cpu_ns) return x->a.cpu_ns > y->a.cpu_ns ? -1 : 1;
    if (x->a.gpu_ann_ns != y->a.gpu_ann_ns) return x->a.gpu_ann_ns > y->a.gpu_ann_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

void tl_annot_times_compute(const tl_trace *t, tl_annot_times *out)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    memset(out, 0, sizeof *out);
    TL_VEC(rng) r = {0};
    TL_VEC(rng) ga = {0};
    TL_VEC(lkey) k = {0};
    for (size_t u = 0; u < es->n; u++) {
        uint8_t c = es->cat[u];
        if (es->ph[u] != 'X' || !(es->flags[u] & TL_F_TS)) continue;
        if (c == TL_CAT_USER_ANNOTATION || c == TL_CAT_GPU_USER_ANNOTATION) {
            rng x = {es->name[u], tl_es_pid(es, u), es->ts[u], tl_es_end(es, u)};
            if (c == TL_CAT_USER_ANNOTATION) TL_PUSH(r, x);
            else TL_PUSH(ga, x);
        } else if (tl_is_gpu_cat(c) && tr->parent[u] != TL_NOUID) {
            uint32_t rt = tr->parent[u];
            lkey x = {tl_es_pid(es, rt), es->ts[rt], (uint32_t)u};
            TL_PUSH(k, x);
        }
    }
    if (!r.n && !ga.n) {
        free(k.v);
        return;
    }
    if (r.n) qsort(r.v, r.n, sizeof *r.v, cmp_rng);
    if (ga.n) qsort(ga.v, ga.n, sizeof *ga.v, cmp_rng);
    if (k.n) qsort(k.v, k.n, sizeof *k.v, cmp_lkey);
    TL_VEC(srt) res = {0};
    TL_VEC(tl_interval) iv = {0};
    size_t i = 0, j = 0;
    while (i < r.n || j < ga.n) {
        uint32_t name = i < r.n && (j >= ga.n || r.v[i].name <= ga.v[j].name) ? r.v[i].name : ga.v[j].name;
        srt x;
        memset(&x, 0, sizeof x);
        x.a.name = name;
        x.name = tl_strpool_get(&es->names, name);
        iv.n = 0;
        /* CPU ranges of the name: merged per process, then the launches inside */
        size_t a = i;
        while (i < r.n && r.v[i].name == name) {
            x.a.n_cpu++;
            x.a.cpu_ns += r.v[i].e - r.v[i].s;
            i++;
        }
        for (size_t p = a; p < i;) {
            uint64_t thr = r.v[p].thr;
            int64_t s = r.v[p].s, e = r.v[p].e;
            p++;
            while (p < i && r.v[p].thr == thr && r.v[p].s <= e) {
                if (r.v[p].e > e) e = r.v[p].e;
                p++;
            }
            for (size_t q = lower(k.v, k.n, thr, s); q < k.n && k.v[q].thr == thr && k.v[q].ts < e; q++) {
                uint32_t g = k.v[q].gpu;
                tl_interval gi = {es->ts[g], tl_es_end(es, g)};
                TL_PUSH(iv, gi);
            }
        }
        x.a.n_launched = iv.n;
        if (iv.n) x.a.launched_busy_ns = tl_length(iv.v, tl_merge(iv.v, iv.n));
        while (j < ga.n && ga.v[j].name == name) {
            x.a.n_gpu_ann++;
            x.a.gpu_ann_ns += ga.v[j].e - ga.v[j].s;
            j++;
        }
        TL_PUSH(res, x);
    }
    qsort(res.v, res.n, sizeof *res.v, cmp_srt);
    out->v = tl_xmalloc(res.n * sizeof *out->v);
    for (size_t q = 0; q < res.n; q++) out->v[q] = res.v[q].a;
    out->n = res.n;
    free(res.v);
    free(iv.v);
    free(k.v);
    free(ga.v);
    free(r.v);
}

void tl_annot_times_free(tl_annot_times *a)
{
    free(a->v);
    memset(a, 0, sizeof *a);
}
