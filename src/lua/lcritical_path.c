/* lcritical_path.c — see lcritical_path.h. */
#include "lcritical_path.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "../split/split.h"
#include "../trace/critical_path.h"
#include "../util/vec.h"
#include "host.h"
#include "lfields.h"
#include "lopts.h"
#include "ltrace.h"

/* by_category keys, in tl_cp_cat order */
static const char *const CAT_KEY[TL_CPC__COUNT] = {"cpu", "gpu_compute", "communication", "launch_delay",
                                                   "kernel_gap"};

typedef struct cp_box {
    tl_cpath p;
    uint8_t *mark;
    tl_cp_flow *flows;
} cp_box;

static int cp_box_gc(lua_State *L)
{
    cp_box *b = lua_touserdata(L, 1);
    tl_cpath_free(&b->p);
    free(b->mark);
    free(b->flows);
    b->mark = NULL, b->flows = NULL;
    return 0;
}

static void push_node_end(lua_State *L, tl_trace *t, const tl_cpath *p, uint32_t node, const char *ev_key,
                          const char *start_key, const char *ts_key)
{
    tl_lev_push(L, t, p->nodes[node].ev);
    lua_setfield(L, -2, ev_key);
    lua_pushboolean(L, p->nodes[node].is_start);
    lua_setfield(L, -2, start_key);
    tl_lset_us(L, ts_key, (double)p->nodes[node].ts);
}

/* A new table for edge e (nrec: its size hint): from, to, their start flags
 * and times, type, weight_us. */
static void push_edge(lua_State *L, tl_trace *t, const tl_cpath *p, const tl_cp_edge *e, int nrec)
{
    lua_createtable(L, 0, nrec);
    push_node_end(L, t, p, e->from, "from", "from_start", "from_ts");
    push_node_end(L, t, p, e->to, "to", "to_start", "to_ts");
    tl_lset_str(L, "type", tl_cp_edge_type_name(e->type));
    tl_lset_us(L, "weight_us", (double)e->weight);
}

/* trace:critical_path{step = N | all = true, overlay = PATH, graph = true, summary = true} -> table */
int tl_l_trace_critical_path(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    tl_cp_opts o = {0};
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "step");
        int has = !lua_isnil(L, -1);
        lua_pop(L, 1);
        if (has) {
            o.has_step = 1;
            o.step = (long)tl_lopt_int(L, 2, "step", 0, 0, (lua_Integer)0x7fffffff, "critical_path");
        }
        o.whole = tl_lopt_bool(L, 2, "all", 0);
    }
    if (o.has_step && o.whole) return luaL_error(L, "critical_path: step and all exclude each other");
    /* summary: the figures only, without the path's events and edges (a
     * Lua object each: most of the call's time on a large step) */
    int summary = lua_istable(L, 2) && tl_lopt_bool(L, 2, "summary", 0);
    const char *overlay = NULL;
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "overlay");
        if (!lua_isnil(L, -1)) {
            if (!lua_isstring(L, -1)) return luaL_error(L, "critical_path: overlay must be a file name");
            overlay = lua_tostring(L, -1);
        }
        lua_pop(L, 1); /* the string stays alive: opts holds it */
    }
    if (overlay) tl_lua_refuse_in_sandbox(L, "trace:critical_path{overlay = ...}");
    cp_box *b = tl_lua_new_box(L, sizeof *b, "tracelens.critical_path_box", cp_box_gc);
    tl_error err = {{0}};
    if (tl_critical_path(t, &o, &b->p, &err) != 0) return luaL_error(L, "critical_path: %s", err.msg);
    const tl_cpath *p = &b->p;
    if (overlay) {
        b->mark = tl_xcalloc(t->es.n ? t->es.n : 1, 1);
        for (size_t i = 0; i < p->n_events; i++) b->mark[p->events[i]] = 1;
        size_t nf = 0;
        b->flows = tl_cpath_flows(p, &t->es, &nf);
        if (tl_split_write_overlay(&t->es, b->mark, b->flows, nf, overlay, &err) != 0)
            return luaL_error(L, "critical_path: %s", err.msg);
    }
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow (trace:critical_path)");
    lua_createtable(L, 0, 21);
    if (p->step >= 0) tl_lset_int(L, "step", p->step);
    tl_lset_us(L, "window_start", (double)p->win_start);
    tl_lset_us(L, "window_end", (double)p->win_end);
    tl_lset_us(L, "wall_us", (double)(p->win_end - p->win_start));
    tl_lset_us(L, "length_us", (double)p->length);
    tl_lset_int(L, "nodes", (lua_Integer)p->n_nodes);
    tl_lset_int(L, "graph_edges", (lua_Integer)p->n_edges);
    lua_createtable(L, 0, TL_CPE__COUNT);
    for (int k = 0; k < TL_CPE__COUNT; k++) tl_lset_int(L, tl_cp_edge_type_name(k), (lua_Integer)p->n_by_type[k]);
    lua_setfield(L, -2, "graph_edges_by_type");
    tl_lset_int(L, "n_events", (lua_Integer)p->n_events);
    if (!summary) {
        lua_createtable(L, (int)p->n_events, 0);
        for (size_t i = 0; i < p->n_events; i++) {
            tl_lev_push(L, t, p->events[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "events");
        lua_createtable(L, p->n_path ? (int)p->n_path - 1 : 0, 0);
        for (size_t i = 0; i + 1 < p->n_path; i++) {
            const tl_cp_edge *e = &p->path_edges[i];
            push_edge(L, t, p, e, 10);
            if (e->type != TL_CPE_DEPENDENCY && e->type != TL_CPE_SYNC) {
                tl_lset_str(L, "category", CAT_KEY[e->cat]);
            }
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "edges");
    }
    if (lua_istable(L, 2) && tl_lopt_bool(L, 2, "graph", 0)) {
        lua_createtable(L, (int)p->n_edges, 0);
        for (size_t i = 0; i < p->n_edges; i++) {
            push_edge(L, t, p, &p->edges[i], 8);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "graph");
    }
    lua_createtable(L, 0, TL_CPC__COUNT + 1);
    for (int c = 0; c < TL_CPC__COUNT; c++) tl_lset_us(L, CAT_KEY[c], (double)p->by_cat[c]);
    tl_lset_us(L, "sync", (double)p->sync_wait);
    lua_setfield(L, -2, "by_category");
    tl_lset_us(L, "blocking_us", (double)p->blocking);
    tl_lset_us(L, "copies_us", (double)p->copies);
    tl_lset_us(L, "gpu_us", (double)p->gpu_ns);
    tl_lset_us(L, "graph_gpu_us", (double)p->graph_gpu_ns);
    tl_lset_int(L, "path_threads", (lua_Integer)p->path_threads);
    tl_lset_int(L, "window_threads", (lua_Integer)p->window_threads);
    /* the bound: GPU when the GPU's own work (compute + communication) holds
     * at least as much of the path as the CPU ops and runtime calls */
    int64_t gpu = p->by_cat[TL_CPC_GPU_COMPUTE] + p->by_cat[TL_CPC_COMM];
    tl_lset_str(L, "bound", gpu >= p->by_cat[TL_CPC_CPU] && gpu > 0 ? "GPU" : "CPU");
    lua_pushboolean(L, tl_cpath_blind(p));
    lua_setfield(L, -2, "blind");
    /* the busiest stream's serial GPU work in the window: a shorter path is
     * not the critical path, and no bound follows from it */
    tl_lset_us(L, "stream_busy_us", (double)p->stream_busy);
    if (p->busy_stream >= 0) tl_lset_int(L, "busy_stream", (lua_Integer)p->busy_stream);
    lua_pushboolean(L, tl_cpath_below_stream(p));
    lua_setfield(L, -2, "below_stream");
    tl_lset_int(L, "waits", (lua_Integer)p->n_waits);
    lua_pushboolean(L, tl_cpath_host_missing(p));
    lua_setfield(L, -2, "host_missing");
    return 1;
}
