/* rank_stats.c — the per-rank summary and the HTA-style sheets of the
 * multi-rank report (rank_stats.h; spec multi-rank.md §12). */
#include "rank_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/steps.h"
#include "../trace/timeline.h"
#include "../util/msort.h"
#include "../util/vec.h"

#define LATE_CANDIDATES 2 /* HTA's num_candidates */

/* ------------------------------------------------------ per-rank pass */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* The step (index into v, sorted by ts) holding time x: the last one
 * starting at or before x that still runs; SIZE_MAX when none. */
static size_t step_of(const tl_step *v, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].ts <= x) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i-- > 0 && lo - i <= 4;)
        if (x < v[i].ts + v[i].dur) return i;
    return SIZE_MAX;
}

int tl_rank_stats_compute(const tl_trace *t, uint32_t rank, tl_rank_stats *out, tl_error *err)
{
    (void)err;
    const tl_event_store *es = &t->es;
    memset(out, 0, sizeof *out);
    out->version = TL_RANK_STATS_VERSION;
    out->rank = rank;
    out->flags = TL_RS_PRESENT;
    /* temporal breakdown over every GPU event (timeline.h's buckets) */
    uint8_t *bk = tl_xmalloc(es->n ? es->n : 1);
    size_t cnt[3];
    size_t ngpu = tl_gpu_buckets(es, &t->tree, 1, NULL, 0, bk, cnt);
    /* HTA's classes: a memset is MEMORY (the perf report's timeline counts it as computation) */
    for (size_t u = 0; u < es->n; u++)
        if (bk[u] == TL_B_COMP && es->cat[u] == TL_CAT_GPU_MEMSET) bk[u] = TL_B_MEMCPY, cnt[TL_B_COMP]--, cnt[TL_B_MEMCPY]++;
    if (ngpu) {
        tl_unions u;
        tl_bucket_unions(es, bk, ngpu, -1, &u);
        out->flags |= TL_RS_HAS_GPU;
        out->busy = u.busy;
        out->compute = u.computation;
        out->comm = u.total_comm;
        out->memcpy_time = u.total_memcpy;
        out->exposed_comm = u.exposed_comm; /* U(COMM) - U(COMP) */
        out->overlap = u.total_comm - u.exposed_comm;
        out->n_gpu_events = (int64_t)ngpu;
        out->n_comm_kernels = (int64_t)cnt[TL_B_COMM];
        out->n_memcpy_events = (int64_t)cnt[TL_B_MEMCPY];
        int64_t first = INT64_MAX, last = INT64_MIN;
        for (size_t u2 = 0; u2 < es->n; u2++) {
            if (bk[u2] == 0xff) continue;
            if (es->ts[u2] < first) first = es->ts[u2];
            if (tl_es_end(es, u2) > last) last = tl_es_end(es, u2);
        }
        out->first_start = first;
        out->last_end = last;
    }
    /* the steps, and the GPU work each launched */
    tl_step *steps = NULL;
    size_t ns = tl_steps_find(t, &steps);
    out->n_steps_total = (uint32_t)ns;
    out->n_steps = (uint32_t)(ns < TL_RS_MAX_STEPS ? ns : TL_RS_MAX_STEPS);
    if (ns) {
        int64_t *gs = tl_xmalloc(ns * sizeof *gs), *ge = tl_xmalloc(ns * sizeof *ge);
        out->window_start = INT64_MAX;
        out->window_end = INT64_MIN;
        for (size_t s = 0; s < ns; s++) {
            gs[s] = INT64_MAX, ge[s] = INT64_MIN;
            if (steps[s].ts < out->window_start) out->window_start = steps[s].ts;
            if (steps[s].ts + steps[s].dur > out->window_end) out->window_end = steps[s].ts + steps[s].dur;
            out->step_dur_sum += steps[s].dur;
        }
        /* the distinct step numbers: steps holds one per N */
        size_t *of = tl_xmalloc((es->n ? es->n : 1) * sizeof *of);
        for (size_t u = 0; u < es->n; u++) {
            of[u] = SIZE_MAX;
            if (bk[u] == 0xff) { /* another event in a step ends the window too (HTA's last end) */
                if (es->ph[u] == 'X' && (es->flags[u] & TL_F_TS) && tl_es_end(es, u) > out->window_end &&
                    step_of(steps, ns, es->ts[u]) != SIZE_MAX)
                    out->window_end = tl_es_end(es, u);
                continue;
            }
            uint32_t rt = t->tree.parent[u];
            size_t s = step_of(steps, ns, rt == TL_NOUID ? es->ts[u] : es->ts[rt]);
            if (s == SIZE_MAX) continue;
            of[u] = s;
            if (es->ts[u] < gs[s]) gs[s] = es->ts[u];
            if (tl_es_end(es, u) > ge[s]) ge[s] = tl_es_end(es, u);
            if (tl_es_end(es, u) > out->window_end) out->window_end = tl_es_end(es, u);
        }
        for (size_t s = 0; s < out->n_steps; s++) {
            tl_rs_step *o = &out->steps[s];
            o->number = steps[s].number;
            o->ts = steps[s].ts;
            o->dur = steps[s].dur;
            if (ge[s] != INT64_MIN) o->gpu_start = gs[s], o->gpu_end = ge[s];
        }
        /* HTA's late-start candidates: per (step N > 0, stream > 0, kernel
           name) the last communication kernel of at least 1 % of the rank's
           mean iteration time */
        double mean_iter = (double)(out->window_end - out->window_start) / (double)ns;
        double min_dur = mean_iter * 0.01;
        for (size_t u = 0; u < es->n; u++) {
            if (bk[u] != TL_B_COMM || of[u] == SIZE_MAX || steps[of[u]].number <= 0) continue;
            int64_t stream;
            if (!tl_es_arg_int(es, u, TL_K_STREAM, &stream) || stream <= 0) continue;
            if ((double)es->dur[u] < min_dur) continue;
            uint64_t h = fnv1a(tl_es_name(es, u));
            uint32_t s = (uint32_t)of[u];
            tl_rs_late *slot = NULL;
            for (uint32_t k = 0; k < out->n_late && !slot; k++)
                if (out->late[k].step == s && out->late[k].stream == stream && out->late[k].name_hash == h)
                    slot = &out->late[k];
            if (!slot) {
                if (s >= TL_RS_MAX_STEPS || out->n_late == TL_RS_MAX_LATE) {
                    out->n_late_dropped++;
                    continue;
                }
                slot = &out->late[out->n_late++];
                slot->name_hash = h;
                for (int k = 0; k < TL_RS_MAX_NAMES; k++) {
                    if (out->late_name[k][0] && out->late_name_hash[k] != h) continue;
                    if (!out->late_name[k][0]) {
                        out->late_name_hash[k] = h;
                        snprintf(out->late_name[k], TL_RS_NAME_LEN, "%s", tl_es_name(es, u));
                    }
                    break;
                }
                slot->stream = stream;
                slot->step = s;
                slot->ts = INT64_MIN;
            }
            slot->n_kernels++;
            if (es->ts[u] >= slot->ts) slot->ts = es->ts[u], slot->dur = es->dur[u]; /* the last (ties: file order) */
        }
        free(of);
        free(gs);
        free(ge);
    }
    free(steps);
    free(bk);
    return 0;
}

/* ------------------------------------------------------------- sheets */

/* Python's round(x, 2) of the binary value. */
static double round2(double x)
{
    if (!isfinite(x)) return x;
    char buf[512];
    snprintf(buf, sizeof buf, "%.2f", x);
    return strtod(buf, NULL);
}

static double pct(int64_t part, int64_t whole) { return whole > 0 ? round2(100.0 * (double)part / (double)whole) : NAN; }

static void set_f64_or_null(tl_table *t, size_t col, size_t row, double v)
{
    if (isnan(v)) tl_table_set_null(t, col, row);
    else tl_table_set_f64(t, col, row, v);
}

static void add_node_id(tl_table *t, int gpn)
{
    if (gpn <= 0 || !t->nrows) return;
    long rc = tl_table_col(t, "rank");
    size_t c = tl_table_add_col(t, "node_id", TL_COL_I64);
    for (size_t r = 0; r < t->nrows; r++) tl_table_set_i64(t, c, r, t->cols[rc].v.i[r] / gpn);
}

static void push(tl_sheets *s, tl_table *t)
{
    TL_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n].name = tl_xstrdup(t->name);
    s->v[s->n].table = t;
    s->v[s->n].write_empty_as_newline = 0;
    s->n++;
}

static int present(const tl_rank_stats *s) { return (s->flags & TL_RS_PRESENT) != 0; }

/* rank_temporal_breakdown and rank_comm_overlap (§12.1, §12.2) */
static void sheets_breakdown(const tl_rank_stats *st, size_t nranks, int gpn, tl_sheets *out)
{
    tl_table *b = tl_table_new("rank_temporal_breakdown");
    static const char *const bc[] = {"rank", "idle_time(ns)", "compute_time(ns)", "non_compute_time(ns)",
                                     "kernel_time(ns)", "idle_time_pctg", "compute_time_pctg",
                                     "non_compute_time_pctg", "comm_time(ns)", "memcpy_time(ns)",
                                     "exposed_comm_time(ns)"};
    for (size_t i = 0; i < sizeof bc / sizeof *bc; i++)
        tl_table_add_col(b, bc[i], i >= 5 && i <= 7 ? TL_COL_F64 : TL_COL_I64);
    tl_table *o = tl_table_new("rank_comm_overlap");
    static const char *const oc[] = {"rank", "comm_time(ns)", "overlapped_comm_time(ns)", "exposed_comm_time(ns)",
                                     "comp_comm_overlap_pctg"};
    for (size_t i = 0; i < sizeof oc / sizeof *oc; i++) tl_table_add_col(o, oc[i], i == 4 ? TL_COL_F64 : TL_COL_I64);
    for (size_t r = 0; r < nranks; r++) {
        const tl_rank_stats *s = &st[r];
        if (!present(s) || !(s->flags & TL_RS_HAS_GPU)) continue;
        int64_t kt = s->last_end - s->first_start, idle = kt - s->busy, nc = s->busy - s->compute;
        size_t row = tl_table_add_row(b);
        int64_t iv[] = {(int64_t)r, idle, s->compute, nc, kt};
        for (size_t i = 0; i < 5; i++) tl_table_set_i64(b, i, row, iv[i]);
        set_f64_or_null(b, 5, row, pct(idle, kt));
        set_f64_or_null(b, 6, row, pct(s->compute, kt));
        set_f64_or_null(b, 7, row, pct(nc, kt));
        tl_table_set_i64(b, 8, row, s->comm);
        tl_table_set_i64(b, 9, row, s->memcpy_time);
        tl_table_set_i64(b, 10, row, s->exposed_comm);
        row = tl_table_add_row(o);
        tl_table_set_i64(o, 0, row, (int64_t)r);
        tl_table_set_i64(o, 1, row, s->comm);
        tl_table_set_i64(o, 2, row, s->overlap);
        tl_table_set_i64(o, 3, row, s->exposed_comm);
        set_f64_or_null(o, 4, row, pct(s->overlap, s->comm));
    }
    add_node_id(b, gpn);
    add_node_id(o, gpn);
    push(out, b);
    push(out, o);
}

/* rank_step_times: one row per rank and step (the first TL_RS_MAX_STEPS) */
static void sheet_steps(const tl_rank_stats *st, size_t nranks, int gpn, tl_sheets *out)
{
    tl_table *t = tl_table_new("rank_step_times");
    tl_table_add_col(t, "rank", TL_COL_I64);
    tl_table_add_col(t, "step", TL_COL_I64);
    tl_table_add_col(t, "step_time(ns)", TL_COL_I64);
    tl_table_add_col(t, "gpu_time(ns)", TL_COL_I64);
    for (size_t r = 0; r < nranks; r++) {
        if (!present(&st[r])) continue;
        for (uint32_t k = 0; k < st[r].n_steps; k++) {
            const tl_rs_step *s = &st[r].steps[k];
            size_t row = tl_table_add_row(t);
            tl_table_set_i64(t, 0, row, (int64_t)r);
            tl_table_set_i64(t, 1, row, s->number);
            tl_table_set_i64(t, 2, row, s->dur);
            if (s->gpu_end > s->gpu_start) tl_table_set_i64(t, 3, row, s->gpu_end - s->gpu_start);
            else tl_table_set_null(t, 3, row);
        }
    }
    if (!t->nrows) {
        tl_table_free(t);
        return;
    }
    add_node_id(t, gpn);
    push(out, t);
}

/* ---- rank_stragglers: HTA's late-start detection (§12.3) */

typedef struct late_ent {
    int64_t stream;
    uint64_t hash;
    int64_t iter;
    uint32_t rank;
    int64_t ts, dur;
} late_ent;

static int cmp_late(void *v, size_t a, size_t b)
{
    const late_ent *x = (const late_ent *)v + a, *y = (const late_ent *)v + b;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    if (x->iter != y->iter) return x->iter < y->iter ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_i64v(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_desc_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* sample standard deviation (ddof 1); NaN below two values */
static double sample_std(const double *v, size_t n)
{
    if (n < 2) return NAN;
    double m = 0;
    for (size_t i = 0; i < n; i++) m += v[i];
    m /= (double)n;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m);
    return sqrt(s / (double)(n - 1));
}

/* "Collective name" of rank r's collective record at (ts, dur), or NULL. */
static const char *coll_name_at(const tl_coll_set *cs, uint32_t r, int64_t ts, int64_t dur)
{
    for (size_t i = 0; i < cs->n; i++) {
        const tl_coll_rec *x = &cs->rec[i];
        if (x->rank != r || x->ts != ts || x->dur != dur) continue;
        uint32_t id = cs->meta[x->meta].text[TL_CM_COLL_NAME];
        return id == UINT32_MAX ? NULL : tl_strpool_get(&cs->pool, id);
    }
    return NULL;
}

static void sheet_late(const tl_coll_set *cs, const tl_rank_stats *st, size_t nranks, int gpn, tl_sheets *out)
{
    /* the window over every rank: HTA's t_min, its last end, the iterations */
    int64_t t_min = INT64_MAX, t_max = INT64_MIN;
    TL_VEC(int64_t) iters = {0};
    for (size_t r = 0; r < nranks; r++) {
        if (!present(&st[r]) || !st[r].n_steps_total) continue;
        if (st[r].window_start < t_min) t_min = st[r].window_start;
        if (st[r].window_end > t_max) t_max = st[r].window_end;
        for (uint32_t k = 0; k < st[r].n_steps; k++) TL_PUSH(iters, st[r].steps[k].number);
    }
    size_t n_iters = 0;
    if (iters.n) {
        qsort(iters.v, iters.n, sizeof *iters.v, cmp_i64v);
        for (size_t i = 0; i < iters.n; i++) n_iters += !i || iters.v[i] != iters.v[i - 1];
    }
    free(iters.v);
    if (!n_iters || t_max <= t_min) return;
    double mean_iter = (double)(t_max - t_min) / (double)n_iters, min_dur = mean_iter * 0.01;
    TL_VEC(late_ent) e = {0};
    for (size_t r = 0; r < nranks; r++) {
        if (!present(&st[r])) continue;
        for (uint32_t k = 0; k < st[r].n_late; k++) {
            const tl_rs_late *l = &st[r].late[k];
            if ((double)l->dur < min_dur || l->step >= st[r].n_steps) continue;
            late_ent x = {l->stream, l->name_hash, st[r].steps[l->step].number, (uint32_t)r, l->ts, l->dur};
            TL_PUSH(e, x);
        }
    }
    if (!e.n) {
        free(e.v);
        return;
    }
    size_t *ix = tl_xmalloc(e.n * sizeof *ix);
    for (size_t i = 0; i < e.n; i++) ix[i] = i;
    tl_msort(ix, e.n, cmp_late, e.v);
    late_ent *v = tl_xmalloc(e.n * sizeof *v);
    for (size_t i = 0; i < e.n; i++) v[i] = e.v[ix[i]];
    free(e.v);
    free(ix);
    size_t n = e.n;
    double *buf = tl_xmalloc(n * sizeof *buf);
    /* the (stream, name) whose normalized duration has the largest mean over
       iterations of the across-rank standard deviation (ties: the first) */
    size_t best = SIZE_MAX, best_end = 0;
    double best_val = NAN;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double sum = 0;
        size_t cnt = 0;
        while (j < n && v[j].stream == v[i].stream && v[j].hash == v[i].hash) {
            size_t a = j, m = 0;
            while (j < n && v[j].stream == v[a].stream && v[j].hash == v[a].hash && v[j].iter == v[a].iter)
                buf[m++] = (double)v[j++].dur / mean_iter;
            double sd = sample_std(buf, m);
            if (!isnan(sd)) sum += sd, cnt++;
        }
        if (cnt) {
            double mv = sum / (double)cnt;
            if (best == SIZE_MAX || isnan(best_val) || mv > best_val) best = i, best_end = j, best_val = mv;
        }
        i = j;
    }
    if (best == SIZE_MAX) {
        free(v);
        free(buf);
        return;
    }
    /* per iteration: ranks at or above the LATE_CANDIDATES-th latest normalized start */
    int64_t *flag = tl_xcalloc(nranks + 1, sizeof *flag), *seen = tl_xcalloc(nranks + 1, sizeof *seen);
    double *sum_ns = tl_xcalloc(nranks + 1, sizeof *sum_ns);
    for (size_t i = best; i < best_end;) {
        size_t j = i, m = 0;
        while (j < best_end && v[j].iter == v[i].iter) buf[m++] = (double)(v[j++].ts - t_min) / mean_iter;
        double *sorted = tl_xmalloc(m * sizeof *sorted);
        memcpy(sorted, buf, m * sizeof *sorted);
        qsort(sorted, m, sizeof *sorted, cmp_desc_d);
        double thr = sorted[(m < LATE_CANDIDATES ? m : LATE_CANDIDATES) - 1];
        free(sorted);
        for (size_t k = i; k < j; k++) {
            flag[v[k].rank] += buf[k - i] >= thr;
            seen[v[k].rank]++;
            sum_ns[v[k].rank] += buf[k - i];
        }
        i = j;
    }
    const char *cname = coll_name_at(cs, v[best].rank, v[best].ts, v[best].dur), *kname = NULL;
    for (size_t r = 0; r < nranks && !kname; r++)
        for (int k = 0; k < TL_RS_MAX_NAMES && !kname; k++)
            if (st[r].late_name[k][0] && st[r].late_name_hash[k] == v[best].hash) kname = st[r].late_name[k];
    tl_table *t = tl_table_new("rank_stragglers");
    static const char *const cols[] = {"rank", "times_flagged", "iterations", "mean_normalized_start",
                                       "potential_straggler", "stream", "kernel", "Collective name"};
    static const tl_coltype ty[] = {TL_COL_I64, TL_COL_I64, TL_COL_I64, TL_COL_F64,
                                    TL_COL_STR, TL_COL_I64, TL_COL_STR, TL_COL_STR};
    for (size_t i = 0; i < 8; i++) tl_table_add_col(t, cols[i], ty[i]);
    for (size_t r = 0; r < nranks; r++) {
        if (!seen[r]) continue;
        size_t row = tl_table_add_row(t);
        tl_table_set_i64(t, 0, row, (int64_t)r);
        tl_table_set_i64(t, 1, row, flag[r]);
        tl_table_set_i64(t, 2, row, seen[r]);
        tl_table_set_f64(t, 3, row, sum_ns[r] / (double)seen[r]);
        tl_table_set_i64(t, 5, row, v[best].stream);
        tl_table_set_str(t, 6, row, kname);
        tl_table_set_str(t, 7, row, cname);
    }
    tl_sortkey sk[2] = {{"times_flagged", 1}, {"rank", 0}};
    tl_table_sort(t, sk, 2);
    /* the stragglers: the top LATE_CANDIDATES ranks by count, flagged at least once */
    for (size_t row = 0; row < t->nrows; row++)
        tl_table_set_str(t, 4, row, row < LATE_CANDIDATES && t->cols[1].v.i[row] > 0 ? "Yes" : "No");
    add_node_id(t, gpn);
    push(out, t);
    free(flag);
    free(seen);
    free(sum_ns);
    free(v);
    free(buf);
}

/* ---- collective_skew_outliers */

/* pandas' quantile (linear interpolation) of sorted v */
static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    if (lo + 1 >= n) return v[n - 1];
    return v[lo] + (v[lo + 1] - v[lo]) * (pos - (double)lo);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const char *meta_text(const tl_coll_set *cs, uint32_t meta, int field)
{
    uint32_t id = cs->meta[meta].text[field];
    return id == UINT32_MAX ? NULL : tl_strpool_get(&cs->pool, id);
}

static const char *span_of(const tl_ranks_coll *c, int gpn)
{
    return c->min_rank / (uint32_t)gpn == c->max_rank / (uint32_t)gpn ? "intra_node" : "inter_node";
}

static void sheet_skew(const tl_coll_set *cs, const tl_ranks_coll *c, size_t nc, int gpn, tl_sheets *out)
{
    double *sk = tl_xmalloc((nc + 1) * sizeof *sk);
    size_t m = 0;
    for (size_t i = 0; i < nc; i++)
        if (c[i].n >= 2) sk[m++] = (double)(c[i].lstart - c[i].estart) / 1000.0;
    if (m < 4) {
        free(sk);
        return;
    }
    qsort(sk, m, sizeof *sk, cmp_d);
    double q1 = quantile(sk, m, 0.25), q3 = quantile(sk, m, 0.75), med = quantile(sk, m, 0.5);
    double fence = q3 + 1.5 * (q3 - q1);
    free(sk);
    tl_table *t = tl_table_new("collective_skew_outliers");
    static const char *const cols[] = {"collective_id", "Process Group Name", "Collective name", "num_ranks",
                                       "skew in start time", "skew in end time", "median skew in start time",
                                       "skew_ratio", "earliest arrival rank", "last arrival rank", "comm_latency"};
    static const tl_coltype ty[] = {TL_COL_STR, TL_COL_STR, TL_COL_STR, TL_COL_I64, TL_COL_F64, TL_COL_F64,
                                    TL_COL_F64, TL_COL_F64, TL_COL_I64, TL_COL_I64, TL_COL_F64};
    for (size_t i = 0; i < 11; i++) tl_table_add_col(t, cols[i], ty[i]);
    size_t cspan = gpn > 0 ? tl_table_add_col(t, "node_span", TL_COL_STR) : 0;
    for (size_t i = 0; i < nc; i++) {
        double s = (double)(c[i].lstart - c[i].estart) / 1000.0;
        if (c[i].n < 2 || !(s > fence) || s <= 0) continue;
        size_t row = tl_table_add_row(t);
        tl_table_set_str(t, 0, row, c[i].cid);
        tl_table_set_str(t, 1, row, c[i].pg);
        tl_table_set_str(t, 2, row, meta_text(cs, c[i].meta, TL_CM_COLL_NAME));
        tl_table_set_i64(t, 3, row, c[i].n);
        tl_table_set_f64(t, 4, row, s);
        tl_table_set_f64(t, 5, row, (double)(c[i].lend - c[i].eend) / 1000.0);
        tl_table_set_f64(t, 6, row, med);
        set_f64_or_null(t, 7, row, med > 0 ? s / med : NAN);
        tl_table_set_i64(t, 8, row, c[i].earliest_rank);
        tl_table_set_i64(t, 9, row, c[i].last_rank);
        tl_table_set_f64(t, 10, row, (double)c[i].lat / 1000.0);
        if (gpn > 0) tl_table_set_str(t, cspan, row, span_of(&c[i], gpn));
    }
    if (!t->nrows) {
        tl_table_free(t);
        return;
    }
    tl_sortkey k = {"skew in start time", 1};
    tl_table_sort(t, &k, 1);
    push(out, t);
}

/* ---- node_bandwidth */

typedef struct bw_ent {
    int64_t node;     /* -1: all nodes */
    int inter;
    uint32_t name;    /* Collective name pool id (UINT32_MAX: None) */
    uint32_t coll;
} bw_ent;

typedef struct bw_ctx {
    const bw_ent *e;
    const tl_strpool *pool;
} bw_ctx;

static int cmp_bw(void *vc, size_t a, size_t b)
{
    const bw_ctx *c = vc;
    const bw_ent *x = c->e + a, *y = c->e + b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    if (x->inter != y->inter) return x->inter < y->inter ? -1 : 1;
    if (x->name != y->name) { /* None last */
        if (x->name == UINT32_MAX || y->name == UINT32_MAX) return x->name == UINT32_MAX ? 1 : -1;
        return strcmp(tl_strpool_get(c->pool, x->name), tl_strpool_get(c->pool, y->name));
    }
    return x->coll < y->coll ? -1 : x->coll > y->coll;
}

static void sheet_bandwidth(const tl_coll_set *cs, const tl_ranks_coll *c, size_t nc, const uint32_t *coll_of_rec,
                            int gpn, tl_sheets *out)
{
    if (gpn <= 0) return;
    TL_VEC(bw_ent) e = {0};
    for (size_t i = 0; i < nc; i++) {
        if (isnan(c[i].algo_bw)) continue;
        bw_ent x = {-1, c[i].min_rank / (uint32_t)gpn != c[i].max_rank / (uint32_t)gpn,
                    cs->meta[c[i].meta].text[TL_CM_COLL_NAME], (uint32_t)i};
        TL_PUSH(e, x);
    }
    /* per node: each collective once per node holding a member (records are rank-major) */
    int64_t *stamp = tl_xmalloc((nc + 1) * sizeof *stamp);
    for (size_t i = 0; i < nc; i++) stamp[i] = -1;
    for (size_t i = 0; i < cs->n; i++) {
        uint32_t k = coll_of_rec[i];
        int64_t node = cs->rec[i].rank / gpn;
        if (isnan(c[k].algo_bw) || stamp[k] == node) continue;
        stamp[k] = node;
        bw_ent x = {node, c[k].min_rank / (uint32_t)gpn != c[k].max_rank / (uint32_t)gpn,
                    cs->meta[c[k].meta].text[TL_CM_COLL_NAME], k};
        TL_PUSH(e, x);
    }
    free(stamp);
    if (!e.n) {
        free(e.v);
        return;
    }
    size_t *ix = tl_xmalloc(e.n * sizeof *ix);
    for (size_t i = 0; i < e.n; i++) ix[i] = i;
    bw_ctx bc = {e.v, &cs->pool};
    tl_msort(ix, e.n, cmp_bw, &bc);
    tl_table *t = tl_table_new("node_bandwidth");
    static const char *const cols[] = {"node_id", "node_span", "Collective name", "count", "Total msg size (MB)",
                                       "Total comm latency (ms)", "algo bw (GB/s)", "bus bw (GB/s)_mean",
                                       "bus bw (GB/s)_min", "bus bw (GB/s)_max"};
    static const tl_coltype ty[] = {TL_COL_I64, TL_COL_STR, TL_COL_STR, TL_COL_I64, TL_COL_F64,
                                    TL_COL_F64, TL_COL_F64, TL_COL_F64, TL_COL_F64, TL_COL_F64};
    for (size_t i = 0; i < 10; i++) tl_table_add_col(t, cols[i], ty[i]);
    for (size_t i = 0; i < e.n;) {
        const bw_ent *a = &e.v[ix[i]];
        size_t j = i, cnt = 0, nb = 0;
        double mb = 0, lat_ns = 0, bsum = 0, bmin = INFINITY, bmax = -INFINITY;
        for (; j < e.n; j++) {
            const bw_ent *x = &e.v[ix[j]];
            if (x->node != a->node || x->inter != a->inter || x->name != a->name) break;
            const tl_ranks_coll *k = &c[x->coll];
            cnt++;
            mb += k->full_mb;
            lat_ns += (double)k->lat;
            if (!isnan(k->bus_bw)) {
                nb++;
                bsum += k->bus_bw;
                if (k->bus_bw < bmin) bmin = k->bus_bw;
                if (k->bus_bw > bmax) bmax = k->bus_bw;
            }
        }
        size_t row = tl_table_add_row(t);
        if (a->node >= 0) tl_table_set_i64(t, 0, row, a->node);
        else tl_table_set_null(t, 0, row);
        tl_table_set_str(t, 1, row, a->inter ? "inter_node" : "intra_node");
        tl_table_set_str(t, 2, row, a->name == UINT32_MAX ? NULL : tl_strpool_get(&cs->pool, a->name));
        tl_table_set_i64(t, 3, row, (int64_t)cnt);
        tl_table_set_f64(t, 4, row, mb);
        tl_table_set_f64(t, 5, row, lat_ns / 1e6);
        set_f64_or_null(t, 6, row, lat_ns > 0 ? (mb / 1024.0) / (lat_ns / 1e9) : NAN);
        set_f64_or_null(t, 7, row, nb ? bsum / (double)nb : NAN);
        set_f64_or_null(t, 8, row, nb ? bmin : NAN);
        set_f64_or_null(t, 9, row, nb ? bmax : NAN);
        i = j;
    }
    free(ix);
    free(e.v);
    push(out, t);
}

/* ---- missing_ranks */
static void sheet_missing(const tl_rank_stats *st, size_t nranks, tl_sheets *out)
{
    tl_table *t = NULL;
    for (size_t r = 0; r < nranks; r++) {
        if (present(&st[r])) continue;
        if (!t) {
            t = tl_table_new("missing_ranks");
            tl_table_add_col(t, "rank", TL_COL_I64);
            tl_table_add_col(t, "reason", TL_COL_STR);
        }
        size_t row = tl_table_add_row(t);
        tl_table_set_i64(t, 0, row, (int64_t)r);
        tl_table_set_str(t, 1, row, st[r].flags & TL_RS_FAILED ? "trace unreadable" : "no trace file");
    }
    if (t) push(out, t);
}

int tl_rank_stats_sheets(tl_coll_set *cs, const tl_rank_stats *st, size_t nranks, const tl_ranks_opts *o,
                         tl_sheets *out, tl_error *err)
{
    (void)err;
    int gpn = o->gpus_per_node;
    sheets_breakdown(st, nranks, gpn, out);
    sheet_steps(st, nranks, gpn, out);
    sheet_late(cs, st, nranks, gpn, out);
    tl_ranks_coll *c = NULL;
    uint32_t *cor = NULL;
    size_t nc = tl_ranks_collectives(cs, o, &c, &cor);
    sheet_skew(cs, c, nc, gpn, out);
    sheet_bandwidth(cs, c, nc, cor, gpn, out);
    tl_ranks_colls_free(c, nc);
    free(cor);
    sheet_missing(st, nranks, out);
    return 0;
}
