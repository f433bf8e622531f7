/* lhealth.c — see lhealth.h. */
#include "lhealth.h"

#include <lauxlib.h>

#include "../trace/health.h"
#include "ltrace.h"

static void set_n(lua_State *L, const char *k, size_t v)
{
    lua_pushinteger(L, (lua_Integer)v);
    lua_setfield(L, -2, k);
}

static void set_us(lua_State *L, const char *k, int64_t ns)
{
    lua_pushnumber(L, (lua_Number)ns / 1000.0);
    lua_setfield(L, -2, k);
}

int tl_l_trace_check(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    tl_health h;
    tl_health_compute(t, &h);
    lua_createtable(L, 0, 40);
    set_us(L, "t0", h.t0);
    set_us(L, "t1", h.t1);
    set_us(L, "span", h.t1 - h.t0);
    set_n(L, "events", h.n_events);
    set_n(L, "gpu_events", h.n_gpu);
    set_n(L, "gpu_unlinked", h.n_gpu_unlinked);
    set_us(L, "gpu_us", h.gpu_ns);
    set_us(L, "gpu_unlinked_us", h.gpu_unlinked_ns);
    set_n(L, "gpu_unlinked_launched", h.n_gpu_unlinked_launched);
    set_n(L, "flow_events", h.n_flows);
    set_us(L, "gpu_unlinked_launched_us", h.gpu_unlinked_launched_ns);
    set_n(L, "cpu_ops", h.n_cpu_ops);
    set_n(L, "cpu_ops_with_shapes", h.n_cpu_ops_shapes);
    set_n(L, "python_functions", h.n_python);
    set_n(L, "graph_launches", h.n_graph_launches);
    set_n(L, "gpu_graph", h.n_gpu_graph);
    set_us(L, "gpu_graph_us", h.gpu_graph_ns);
    set_n(L, "steps", h.n_steps);
    set_us(L, "steps_t0", h.steps_t0);
    set_us(L, "steps_t1", h.steps_t1);
    set_n(L, "gpu_before_steps", h.n_gpu_before_steps);
    set_us(L, "gpu_before_steps_us", h.gpu_before_steps_ns);
    set_n(L, "gpu_after_steps", h.n_gpu_after_steps);
    set_us(L, "gpu_after_steps_us", h.gpu_after_steps_ns);
    set_n(L, "streams", h.n_streams);
    set_n(L, "stream_overlaps", h.n_stream_overlaps);
    set_us(L, "max_stream_overlap_us", h.max_stream_overlap_ns);
    set_us(L, "stream_overlap_threshold_us", TL_HEALTH_OVERLAP_NS);
    set_n(L, "negative_durations", h.n_negative_dur);
    set_n(L, "zero_duration_gpu", h.n_zero_dur_gpu);
    set_n(L, "zero_duration_cpu_ops", h.n_zero_dur_cpu_ops);
    set_n(L, "gpu_before_launch", h.n_gpu_before_launch);
    set_us(L, "max_gpu_before_launch_us", h.max_gpu_before_launch_ns);
    set_us(L, "clock_threshold_us", TL_HEALTH_CLOCK_NS);
    set_n(L, "launches", h.n_launches);
    set_n(L, "launches_without_gpu", h.n_launches_orphan);
    set_n(L, "launches_without_gpu_at_end", h.n_launches_orphan_at_end);
    set_n(L, "memset_calls", h.n_memsets);
    set_n(L, "memset_calls_without_gpu", h.n_memsets_orphan);
    return 1;
}
