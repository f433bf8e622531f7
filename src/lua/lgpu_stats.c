/* lgpu_stats.c — see lgpu_stats.h. */
#include "lgpu_stats.h"

#include <lauxlib.h>

#include "../trace/annot_times.h"
#include "../trace/idle.h"
#include "../trace/launch_stats.h"
#include "lopts.h"
#include "lfields.h"
#include "ltrace.h"

static void push_stream(lua_State *L, const tl_idle_stream *s, int causes)
{
    lua_createtable(L, 0, 20);
    if (causes) {
        tl_lset_int(L, "device", s->device);
        tl_lset_int(L, "stream", s->stream);
        tl_lset_us(L, "host_wait_us", (double)s->host_wait);
        tl_lset_us(L, "kernel_wait_us", (double)s->kernel_wait);
        tl_lset_us(L, "other_wait_us", (double)s->other_wait);
        tl_lset_int(L, "host_wait_gaps", (lua_Integer)s->n_host_wait);
        tl_lset_int(L, "kernel_wait_gaps", (lua_Integer)s->n_kernel_wait);
        tl_lset_int(L, "other_wait_gaps", (lua_Integer)s->n_other_wait);
        tl_lset_us(L, "host_sync_wait_us", (double)s->host_sync_wait);
        tl_lset_int(L, "host_sync_wait_gaps", (lua_Integer)s->n_host_sync_wait);
    }
    tl_lset_int(L, "gpu_events", (lua_Integer)s->n_events);
    tl_lset_int(L, "gaps", (lua_Integer)s->n_gaps);
    tl_lset_us(L, "start", (double)s->start);
    tl_lset_us(L, "end", (double)s->end);
    tl_lset_us(L, "span_us", (double)(s->end - s->start));
    tl_lset_us(L, "busy_us", (double)s->busy);
    tl_lset_us(L, "idle_us", (double)(s->end - s->start - s->busy));
    tl_lset_us(L, "micro_idle_us", (double)s->micro_idle);
    tl_lset_us(L, "macro_idle_us", (double)s->macro_idle);
}

/* trace:idle_breakdown{kernel_wait_ns =, micro_idle_thresh_us =} -> streams, all */
int tl_l_trace_idle_breakdown(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    double kw = tl_lopt_range(L, 2, "kernel_wait_ns", TL_IDLE_KERNEL_WAIT_NS, 0, 1e15, "idle_breakdown");
    double mi = tl_lopt_range(L, 2, "micro_idle_thresh_us", TL_IDLE_MICRO_NS / 1000.0, 0, 1e12, "idle_breakdown");
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow (trace:idle_breakdown)");
    tl_idle b;
    tl_idle_compute(t, (int64_t)(kw + 0.5), (int64_t)(mi * 1000.0 + 0.5), &b);
    lua_createtable(L, (int)b.n, 0);
    for (size_t i = 0; i < b.n; i++) {
        push_stream(L, &b.v[i], 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    push_stream(L, &b.all, 0);
    tl_lset_us(L, "queued_idle_us", (double)b.queued_idle);
    if (b.longest_queued_uid != UINT32_MAX) {
        tl_lset_int(L, "longest_queued_uid", (lua_Integer)b.longest_queued_uid);
        tl_lset_str(L, "longest_queued", tl_strpool_get(&t->es.names, t->es.name[b.longest_queued_uid]));
        tl_lset_us(L, "longest_queued_idle_us", (double)b.longest_queued);
    }
    tl_lset_int(L, "kernel_wait_threshold_ns", b.kernel_wait_ns);
    tl_lset_us(L, "micro_idle_threshold_us", (double)b.micro_ns);
    tl_idle_free(&b);
    return 2;
}

/* trace:queue_length{full =, series =} -> array of streams */
int tl_l_trace_queue_length(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    lua_Integer full = (lua_Integer)tl_lopt_int(L, 2, "full", TL_QUEUE_FULL, 1, 1 << 30, "queue_length");
    int series = tl_lopt_bool(L, 2, "series", 0);
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow (trace:queue_length)");
    tl_queue q;
    tl_queue_compute(t, (size_t)full, series, &q);
    lua_createtable(L, (int)q.n, 0);
    for (size_t i = 0; i < q.n; i++) {
        const tl_queue_stream *x = &q.v[i];
        lua_createtable(L, 0, 12);
        tl_lset_int(L, "device", x->device);
        tl_lset_int(L, "stream", x->stream);
        tl_lset_int(L, "launches", (lua_Integer)x->n_launches);
        tl_lset_int(L, "max_length", (lua_Integer)x->max_len);
        tl_lset_num(L, "mean_length", x->mean_len);
        tl_lset_us(L, "start", (double)x->start);
        tl_lset_us(L, "end", (double)x->end);
        tl_lset_us(L, "full_queue_us", (double)x->full_ns);
        tl_lset_int(L, "blocked_launches", (lua_Integer)x->n_blocked);
        tl_lset_us(L, "blocked_launch_us", (double)x->blocked_ns);
        tl_lset_int(L, "full", (lua_Integer)q.full);
        if (series) {
            /* two arrays: times (µs) and the length from each on */
            lua_createtable(L, (int)x->n_series, 0);
            for (size_t k = 0; k < x->n_series; k++) {
                lua_pushnumber(L, (lua_Number)x->series[k].t / 1000.0);
                lua_rawseti(L, -2, (lua_Integer)k + 1);
            }
            lua_setfield(L, -2, "times");
            lua_createtable(L, (int)x->n_series, 0);
            for (size_t k = 0; k < x->n_series; k++) {
                lua_pushinteger(L, x->series[k].len);
                lua_rawseti(L, -2, (lua_Integer)k + 1);
            }
            lua_setfield(L, -2, "lengths");
        }
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    tl_queue_free(&q);
    return 1;
}

static void push_dist(lua_State *L, const char *k, const tl_dist *d)
{
    lua_createtable(L, 0, 6);
    tl_lset_us(L, "mean", d->mean);
    tl_lset_us(L, "median", d->median);
    tl_lset_us(L, "p95", d->p95);
    tl_lset_us(L, "min", (double)d->min);
    tl_lset_us(L, "max", (double)d->max);
    tl_lset_us(L, "sum", (double)d->sum);
    lua_setfield(L, -2, k);
}

static void push_group(lua_State *L, const tl_trace *t, const tl_launch_group *g)
{
    lua_createtable(L, 0, 6);
    if (g->name != UINT32_MAX) {
        tl_lset_str(L, "name", tl_strpool_get(&t->es.names, g->name));
    }
    tl_lset_int(L, "count", (lua_Integer)g->n);
    tl_lset_int(L, "outliers", (lua_Integer)g->n_outliers);
    push_dist(L, "cpu_launch", &g->cpu);
    push_dist(L, "launch_delay", &g->delay);
    push_dist(L, "gpu_dur", &g->gpu);
}

static void push_launch(lua_State *L, const tl_trace *t, const tl_launch *l)
{
    lua_createtable(L, 0, 7);
    tl_lset_int(L, "uid", l->gpu);
    tl_lset_int(L, "call", l->call);
    tl_lset_str(L, "name", tl_es_name(&t->es, l->gpu));
    tl_lset_us(L, "ts", (double)t->es.ts[l->gpu]);
    tl_lset_us(L, "cpu_launch_us", (double)l->cpu);
    tl_lset_us(L, "launch_delay_us", (double)l->delay);
    tl_lset_us(L, "gpu_dur_us", (double)l->gpu_dur);
}

/* trace:launch_stats{launches = bool} -> {all, kernels, outliers, outlier_threshold_us,
 * graph_kernels, unlinked_gpu_events[, launches]} */
int tl_l_trace_launch_stats(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    int with_all = tl_lopt_bool(L, 2, "launches", 0);
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow (trace:launch_stats)");
    tl_launch_stats ls;
    tl_launch_stats_compute(t, &ls);
    lua_createtable(L, 0, 8);
    push_group(L, t, &ls.all);
    lua_setfield(L, -2, "all");
    lua_createtable(L, (int)ls.ng, 0);
    for (size_t i = 0; i < ls.ng; i++) {
        push_group(L, t, &ls.g[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "kernels");
    /* outliers, in GPU event order */
    lua_createtable(L, (int)ls.all.n_outliers, 0);
    lua_Integer k = 0;
    for (size_t i = 0; i < ls.n; i++) {
        if (!((double)ls.v[i].delay > ls.all.delay.p95)) continue;
        push_launch(L, t, &ls.v[i]);
        lua_rawseti(L, -2, ++k);
    }
    lua_setfield(L, -2, "outliers");
    tl_lset_us(L, "outlier_threshold_us", ls.all.delay.p95);
    tl_lset_int(L, "graph_kernels", (lua_Integer)ls.n_multi);
    tl_lset_int(L, "unlinked_gpu_events", (lua_Integer)ls.n_unlinked);
    if (with_all) {
        lua_createtable(L, (int)ls.n, 0);
        for (size_t i = 0; i < ls.n; i++) {
            push_launch(L, t, &ls.v[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "launches");
    }
    tl_launch_stats_free(&ls);
    return 1;
}

/* trace:annotation_times() -> array of {name, cpu_count, cpu_us, gpu_annotation_count,
 * gpu_annotation_us, gpu_events_launched, gpu_launched_busy_us} */
int tl_l_trace_annotation_times(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow (trace:annotation_times)");
    tl_annot_times a;
    tl_annot_times_compute(t, &a);
    lua_createtable(L, (int)a.n, 0);
    for (size_t i = 0; i < a.n; i++) {
        const tl_annot_time *x = &a.v[i];
        lua_createtable(L, 0, 7);
        tl_lset_str(L, "name", tl_strpool_get(&t->es.names, x->name));
        tl_lset_int(L, "cpu_count", (lua_Integer)x->n_cpu);
        tl_lset_us(L, "cpu_us", (double)x->cpu_ns);
        tl_lset_int(L, "gpu_annotation_count", (lua_Integer)x->n_gpu_ann);
        tl_lset_us(L, "gpu_annotation_us", (double)x->gpu_ann_ns);
        tl_lset_int(L, "gpu_events_launched", (lua_Integer)x->n_launched);
        tl_lset_us(L, "gpu_launched_busy_us", (double)x->launched_busy_ns);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    tl_annot_times_free(&a);
    return 1;
}
