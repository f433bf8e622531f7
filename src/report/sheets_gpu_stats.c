/* sheets_gpu_stats.c — see sheets_gpu_stats.h. */
#include "sheets_gpu_stats.h"

#include <stdio.h>
#include <stdlib.h>

#include "../trace/annot_times.h"
#include "../trace/idle.h"
#include "../trace/launch_stats.h"

static double ms(int64_t ns) { return (double)ns / 1e6; }
static double us(double ns) { return ns / 1e3; }

tl_table *tl_sheet_idle_breakdown(const tl_trace *t, int64_t micro_ns)
{
    size_t ng;
    tl_gpu_at *g = tl_idle_gpu_events(&t->es, &ng);
    tl_table *tb = tl_sheet_idle_breakdown_with(t, micro_ns, g, ng);
    free(g);
    return tb;
}

tl_table *tl_sheet_idle_breakdown_with(const tl_trace *t, int64_t micro_ns, const tl_gpu_at *g, size_t ng)
{
    tl_idle b;
    tl_idle_compute_with(t, TL_IDLE_KERNEL_WAIT_NS, micro_ns >= 0 ? micro_ns : TL_IDLE_MICRO_NS, g, ng, &b);
    if (!b.all.n_events) {
        tl_idle_free(&b);
        return NULL;
    }
    tl_table *tb = tl_table_new("idle_breakdown");
    size_t c_dev = tl_table_add_col(tb, "device", TL_COL_I64);
    size_t c_str = tl_table_add_col(tb, "stream", TL_COL_STR);
    size_t c_n = tl_table_add_col(tb, "gpu_events", TL_COL_I64);
    size_t c_span = tl_table_add_col(tb, "span_ms", TL_COL_F64);
    size_t c_busy = tl_table_add_col(tb, "busy_time_ms", TL_COL_F64);
    size_t c_idle = tl_table_add_col(tb, "idle_time_ms", TL_COL_F64);
    size_t c_pct = tl_table_add_col(tb, "idle_percent", TL_COL_F64);
    size_t c_host = tl_table_add_col(tb, "host_wait_ms", TL_COL_F64);
    size_t c_kern = tl_table_add_col(tb, "kernel_wait_ms", TL_COL_F64);
    size_t c_oth = tl_table_add_col(tb, "other_wait_ms", TL_COL_F64);
    size_t c_nh = tl_table_add_col(tb, "host_wait_gaps", TL_COL_I64);
    size_t c_nk = tl_table_add_col(tb, "kernel_wait_gaps", TL_COL_I64);
    size_t c_no = tl_table_add_col(tb, "other_wait_gaps", TL_COL_I64);
    size_t c_mi = tl_table_add_col(tb, "micro_idle_ms", TL_COL_F64);
    size_t c_ma = tl_table_add_col(tb, "macro_idle_ms", TL_COL_F64);
    size_t c_kt = tl_table_add_col(tb, "kernel_wait_threshold_ns", TL_COL_I64);
    size_t c_mt = tl_table_add_col(tb, "micro_idle_threshold_us", TL_COL_F64);
    size_t c_hs = tl_table_add_col(tb, "host_sync_wait_ms", TL_COL_F64);
    size_t c_nhs = tl_table_add_col(tb, "host_sync_wait_gaps", TL_COL_I64);
    size_t c_qmax = tl_table_add_col(tb, "max_queue_length", TL_COL_I64);
    size_t c_qmean = tl_table_add_col(tb, "mean_queue_length", TL_COL_F64);
    size_t c_qfull = tl_table_add_col(tb, "full_queue_ms", TL_COL_F64);
    size_t c_qnb = tl_table_add_col(tb, "blocked_launches", TL_COL_I64);
    size_t c_qb = tl_table_add_col(tb, "blocked_launch_ms", TL_COL_F64);
    size_t c_qt = tl_table_add_col(tb, "queue_full_threshold", TL_COL_I64);
    size_t c_qi = tl_table_add_col(tb, "queued_idle_ms", TL_COL_F64);
    size_t c_qtn = tl_table_add_col(tb, "longest_queued", TL_COL_STR);
    size_t c_qtm = tl_table_add_col(tb, "longest_queued_idle_ms", TL_COL_F64);
    tl_queue q;
    tl_queue_compute(t, TL_QUEUE_FULL, 0, &q);
    size_t qi = 0;
    for (size_t i = 0; i <= b.n; i++) {
        const tl_idle_stream *s = i < b.n ? &b.v[i] : &b.all;
        size_t r = tl_table_add_row(tb);
        int64_t span = s->end - s->start, idle = span - s->busy;
        if (i < b.n) {
            char buf[32];
            snprintf(buf, sizeof buf, "%lld", (long long)s->stream);
            tl_table_set_i64(tb, c_dev, r, s->device);
            tl_table_set_str(tb, c_str, r, buf);
            tl_table_set_f64(tb, c_host, r, ms(s->host_wait));
            tl_table_set_f64(tb, c_kern, r, ms(s->kernel_wait));
            tl_table_set_f64(tb, c_oth, r, ms(s->other_wait));
            tl_table_set_i64(tb, c_nh, r, (int64_t)s->n_host_wait);
            tl_table_set_i64(tb, c_nk, r, (int64_t)s->n_kernel_wait);
            tl_table_set_i64(tb, c_no, r, (int64_t)s->n_other_wait);
            tl_table_set_f64(tb, c_hs, r, ms(s->host_sync_wait));
            tl_table_set_i64(tb, c_nhs, r, (int64_t)s->n_host_sync_wait);
            /* both are by (device, stream); a stream without launches has no queue */
            while (qi < q.n && (q.v[qi].device < s->device ||
                                (q.v[qi].device == s->device && q.v[qi].stream < s->stream)))
                qi++;
            if (qi < q.n && q.v[qi].device == s->device && q.v[qi].stream == s->stream) {
                const tl_queue_stream *x = &q.v[qi];
                tl_table_set_i64(tb, c_qmax, r, (int64_t)x->max_len);
                tl_table_set_f64(tb, c_qmean, r, x->mean_len);
                tl_table_set_f64(tb, c_qfull, r, ms(x->full_ns));
                tl_table_set_i64(tb, c_qnb, r, (int64_t)x->n_blocked);
                tl_table_set_f64(tb, c_qb, r, ms(x->blocked_ns));
                tl_table_set_i64(tb, c_qt, r, (int64_t)q.full);
            }
        } else {
            tl_table_set_str(tb, c_str, r, "all");
            tl_table_set_f64(tb, c_qi, r, ms(b.queued_idle));
            if (b.longest_queued_uid != UINT32_MAX) {
                tl_table_set_str(tb, c_qtn, r, tl_strpool_get(&t->es.names, t->es.name[b.longest_queued_uid]));
                tl_table_set_f64(tb, c_qtm, r, ms(b.longest_queued));
            }
        }
        tl_table_set_i64(tb, c_n, r, (int64_t)s->n_events);
        tl_table_set_f64(tb, c_span, r, ms(span));
        tl_table_set_f64(tb, c_busy, r, ms(s->busy));
        tl_table_set_f64(tb, c_idle, r, ms(idle));
        tl_table_set_f64(tb, c_pct, r, span > 0 ? (double)idle / (double)span * 100.0 : 0.0);
        tl_table_set_f64(tb, c_mi, r, ms(s->micro_idle));
        tl_table_set_f64(tb, c_ma, r, ms(s->macro_idle));
        tl_table_set_i64(tb, c_kt, r, b.kernel_wait_ns);
        tl_table_set_f64(tb, c_mt, r, us((double)b.micro_ns));
    }
    tl_queue_free(&q);
    tl_idle_free(&b);
    return tb;
}

static void set_dist(tl_table *tb, size_t c0, size_t r, const tl_dist *d)
{
    tl_table_set_f64(tb, c0, r, us(d->mean));
    tl_table_set_f64(tb, c0 + 1, r, us(d->median));
    tl_table_set_f64(tb, c0 + 2, r, us(d->p95));
    tl_table_set_f64(tb, c0 + 3, r, us((double)d->max));
}

static size_t add_dist_cols(tl_table *tb, const char *what)
{
    static const char *const stat[] = {"mean", "median", "p95", "max"};
    size_t c0 = 0;
    for (int k = 0; k < 4; k++) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s_%s_us", what, stat[k]);
        size_t c = tl_table_add_col(tb, nm, TL_COL_F64);
        if (!k) c0 = c;
    }
    return c0;
}

tl_table *tl_sheet_launch_stats(const tl_trace *t)
{
    tl_launch_stats ls;
    tl_launch_stats_compute(t, &ls);
    if (!ls.n) {
        tl_launch_stats_free(&ls);
        return NULL;
    }
    tl_table *tb = tl_table_new("launch_stats");
    size_t c_name = tl_table_add_col(tb, "name", TL_COL_STR);
    size_t c_n = tl_table_add_col(tb, "count", TL_COL_I64);
    size_t c_cpu = add_dist_cols(tb, "cpu_launch");
    size_t c_del = add_dist_cols(tb, "launch_delay");
    size_t c_gpu = add_dist_cols(tb, "gpu_dur");
    size_t c_sum = tl_table_add_col(tb, "gpu_dur_sum_us", TL_COL_F64);
    size_t c_out = tl_table_add_col(tb, "delay_outliers", TL_COL_I64);
    size_t c_thr = tl_table_add_col(tb, "outlier_threshold_us", TL_COL_F64);
    for (size_t i = 0; i <= ls.ng; i++) {
        const tl_launch_group *g = i ? &ls.g[i - 1] : &ls.all;
        size_t r = tl_table_add_row(tb);
        tl_table_set_str(tb, c_name, r, i ? tl_strpool_get(&t->es.names, g->name) : "(all launches)");
        tl_table_set_i64(tb, c_n, r, (int64_t)g->n);
        set_dist(tb, c_cpu, r, &g->cpu);
        set_dist(tb, c_del, r, &g->delay);
        set_dist(tb, c_gpu, r, &g->gpu);
        tl_table_set_f64(tb, c_sum, r, us((double)g->gpu.sum));
        tl_table_set_i64(tb, c_out, r, (int64_t)g->n_outliers);
        tl_table_set_f64(tb, c_thr, r, us(ls.all.delay.p95));
    }
    tl_launch_stats_free(&ls);
    return tb;
}

tl_table *tl_sheet_user_annotations(const tl_trace *t)
{
    tl_annot_times a;
    tl_annot_times_compute(t, &a);
    if (!a.n) {
        tl_annot_times_free(&a);
        return NULL;
    }
    tl_table *tb = tl_table_new("user_annotations");
    size_t c_name = tl_table_add_col(tb, "name", TL_COL_STR);
    size_t c_nc = tl_table_add_col(tb, "cpu_count", TL_COL_I64);
    size_t c_cpu = tl_table_add_col(tb, "cpu_time_ms", TL_COL_F64);
    size_t c_ng = tl_table_add_col(tb, "gpu_annotation_count", TL_COL_I64);
    size_t c_gpu = tl_table_add_col(tb, "gpu_annotation_time_ms", TL_COL_F64);
    size_t c_nl = tl_table_add_col(tb, "gpu_events_launched", TL_COL_I64);
    size_t c_bl = tl_table_add_col(tb, "gpu_launched_busy_ms", TL_COL_F64);
    tl_str_memo memo = {0};
    for (size_t i = 0; i < a.n; i++) {
        const tl_annot_time *x = &a.v[i];
        size_t r = tl_table_add_row(tb);
        tl_table_set_str_memo(tb, c_name, r, &memo, &t->es.names, x->name);
        tl_table_set_i64(tb, c_nc, r, (int64_t)x->n_cpu);
        tl_table_set_i64(tb, c_ng, r, (int64_t)x->n_gpu_ann);
        if (x->n_cpu) {
            tl_table_set_f64(tb, c_cpu, r, ms(x->cpu_ns));
            tl_table_set_i64(tb, c_nl, r, (int64_t)x->n_launched);
            tl_table_set_f64(tb, c_bl, r, ms(x->launched_busy_ns));
        }
        if (x->n_gpu_ann) tl_table_set_f64(tb, c_gpu, r, ms(x->gpu_ann_ns));
    }
    tl_str_memo_free(&memo);
    tl_annot_times_free(&a);
    return tb;
}
