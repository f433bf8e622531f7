/* lhealth.c — see lhealth.h. */
#include "lhealth.h"

#include <lauxlib.h>
#include <string.h>

#include "../trace/health.h"
#include "../trace/host_calls.h"
#include "lfields.h"
#include "ltrace.h"

int tl_l_trace_check(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    tl_health h;
    tl_health_compute(t, &h);
    lua_createtable(L, 0, 40);
    tl_lset_us(L, "t0", h.t0);
    tl_lset_us(L, "t1", h.t1);
    tl_lset_us(L, "span", h.t1 - h.t0);
    tl_lset_int(L, "events", (lua_Integer)h.n_events);
    tl_lset_int(L, "gpu_events", (lua_Integer)h.n_gpu);
    tl_lset_int(L, "gpu_unlinked", (lua_Integer)h.n_gpu_unlinked);
    tl_lset_us(L, "gpu_us", h.gpu_ns);
    tl_lset_us(L, "gpu_unlinked_us", h.gpu_unlinked_ns);
    tl_lset_int(L, "gpu_before_trace", (lua_Integer)h.n_gpu_before_trace);
    tl_lset_us(L, "gpu_before_trace_us", h.gpu_before_trace_ns);
    tl_lset_int(L, "gpu_before_trace_by_id", (lua_Integer)h.n_gpu_before_trace_by_id);
    tl_lset_us(L, "gpu_before_trace_by_id_us", h.gpu_before_trace_by_id_ns);
    tl_lset_int(L, "gpu_unlinked_launched", (lua_Integer)h.n_gpu_unlinked_launched);
    tl_lset_int(L, "flow_events", (lua_Integer)h.n_flows);
    tl_lset_int(L, "gpu_linked_by_correlation", (lua_Integer)h.n_gpu_linked_by_corr);
    tl_lset_us(L, "gpu_unlinked_launched_us", h.gpu_unlinked_launched_ns);
    tl_lset_int(L, "cpu_ops", (lua_Integer)h.n_cpu_ops);
    tl_lset_int(L, "cpu_ops_with_shapes", (lua_Integer)h.n_cpu_ops_shapes);
    tl_lset_int(L, "python_functions", (lua_Integer)h.n_python);
    tl_lset_int(L, "cuda_sync_calls", (lua_Integer)h.n_cuda_sync_calls);
    tl_lset_int(L, "cuda_sync_events", (lua_Integer)h.n_cuda_sync);
    tl_lset_int(L, "stream_waits_unlinked", (lua_Integer)h.n_stream_waits_unlinked);
    tl_lset_int(L, "graph_launches", (lua_Integer)h.n_graph_launches);
    tl_lset_int(L, "gpu_graph", (lua_Integer)h.n_gpu_graph);
    tl_lset_us(L, "gpu_graph_us", h.gpu_graph_ns);
    tl_lset_int(L, "steps", (lua_Integer)h.n_steps);
    tl_lset_us(L, "steps_t0", h.steps_t0);
    tl_lset_us(L, "steps_t1", h.steps_t1);
    tl_lset_int(L, "gpu_before_steps", (lua_Integer)h.n_gpu_before_steps);
    tl_lset_us(L, "gpu_before_steps_us", h.gpu_before_steps_ns);
    tl_lset_int(L, "gpu_after_steps", (lua_Integer)h.n_gpu_after_steps);
    tl_lset_us(L, "gpu_after_steps_us", h.gpu_after_steps_ns);
    tl_lset_int(L, "streams", (lua_Integer)h.n_streams);
    tl_lset_int(L, "stream_overlaps", (lua_Integer)h.n_stream_overlaps);
    tl_lset_us(L, "max_stream_overlap_us", h.max_stream_overlap_ns);
    tl_lset_int(L, "stream_overlaps_ex", (lua_Integer)h.n_stream_overlaps_ex);
    tl_lset_us(L, "max_stream_overlap_ex_us", h.max_stream_overlap_ex_ns);
    tl_lset_us(L, "stream_overlap_threshold_us", TL_HEALTH_OVERLAP_NS);
    tl_lset_int(L, "negative_durations", (lua_Integer)h.n_negative_dur);
    tl_lset_int(L, "zero_duration_gpu", (lua_Integer)h.n_zero_dur_gpu);
    tl_lset_int(L, "zero_duration_cpu_ops", (lua_Integer)h.n_zero_dur_cpu_ops);
    tl_lset_int(L, "gpu_before_launch", (lua_Integer)h.n_gpu_before_launch);
    tl_lset_us(L, "max_gpu_before_launch_us", h.max_gpu_before_launch_ns);
    tl_lset_us(L, "clock_threshold_us", TL_HEALTH_CLOCK_NS);
    tl_lset_int(L, "launches", (lua_Integer)h.n_launches);
    tl_lset_int(L, "launches_without_gpu", (lua_Integer)h.n_launches_orphan);
    tl_lset_int(L, "launches_without_gpu_at_end", (lua_Integer)h.n_launches_orphan_at_end);
    tl_lset_int(L, "launches_captured", (lua_Integer)h.n_launches_captured);
    tl_lset_int(L, "memset_calls", (lua_Integer)h.n_memsets);
    tl_lset_int(L, "memset_calls_without_gpu", (lua_Integer)h.n_memsets_orphan);
    return 1;
}

int tl_l_trace_unlinked_gpu(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const tl_event_store *es = &t->es;
    tl_unlinked_gpu u;
    tl_unlinked_gpu_compute(t, &u);
    lua_createtable(L, 0, 4);
    tl_lset_int(L, "total_ns", u.total_ns);
    tl_lset_int(L, "unlinked_ns", u.unlinked_ns);
    tl_lset_int(L, "count", (lua_Integer)u.count);
    tl_lset_int(L, "before_trace_ns", u.before_trace_ns);
    tl_lset_int(L, "before_trace_count", (lua_Integer)u.n_before_trace);
    lua_createtable(L, (int)u.ng, 0);
    for (size_t i = 0; i < u.ng; i++) {
        const tl_unlinked_group *g = &u.g[i];
        lua_createtable(L, 0, 7);
        tl_lset_int(L, "first", g->first);
        tl_lset_str(L, "name", tl_strpool_get(&es->names, g->name));
        tl_lset_str(L, "cat", tl_strpool_get(&es->cats, g->cat_id));
        tl_lset_int(L, "count", (lua_Integer)g->count);
        tl_lset_int(L, "sum_ns", g->sum_ns);
        tl_lset_int(L, "min_ns", g->min_ns);
        tl_lset_int(L, "max_ns", g->max_ns);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "groups");
    tl_unlinked_gpu_free(&u);
    return 1;
}

int tl_l_trace_host_calls(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const tl_event_store *es = &t->es;
    /* opts.names: the op names that count (a list of strings; names the trace lacks match nothing) */
    uint8_t *only = NULL;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        if (lua_getfield(L, 2, "names") != LUA_TNIL) {
            luaL_checktype(L, -1, LUA_TTABLE);
            lua_Integer n = (lua_Integer)lua_rawlen(L, -1); /* raw: no __len of a rule's table */
            only = lua_newuserdatauv(L, es->names.n + 1, 0); /* freed with the stack */
            memset(only, 0, es->names.n + 1);
            for (lua_Integer i = 1; i <= n; i++) {
                if (lua_rawgeti(L, -2, i) != LUA_TSTRING)
                    luaL_error(L, "host_calls: names[%d] is not a string", (int)i);
                size_t len;
                const char *s = lua_tolstring(L, -1, &len);
                uint32_t id = tl_strpool_find(&es->names, s, len);
                if (id != UINT32_MAX) only[id] = 1;
                lua_pop(L, 1);
            }
        }
    }
    tl_host_calls h;
    tl_host_calls_compute(t, only, &h);
    static const char *const names[TL_HC_KINDS] = {"sync", "copy", "launch", "setup"};
    lua_createtable(L, 0, 3);
    tl_lset_int(L, "factor", TL_HC_FACTOR);
    for (int k = 0; k < TL_HC_KINDS; k++) {
        lua_createtable(L, 0, 6);
        tl_lset_int(L, "calls", (lua_Integer)h.n[k]);
        tl_lset_us(L, "us", (double)h.ns[k]);
        if (h.longest[k] != TL_NOUID) {
            tl_lset_str(L, "longest", tl_strpool_get(&es->names, es->name[h.longest[k]]));
            tl_lset_int(L, "longest_uid", h.longest[k]);
            tl_lset_us(L, "longest_us", (double)h.longest_ns[k]);
            tl_lset_str(L, "longest_op", tl_strpool_get(&es->names, es->name[h.longest_op[k]]));
        }
        lua_setfield(L, -2, names[k]);
    }
    return 1;
}
