/* literation.c — see literation.h. */
#include "literation.h"

#include <lauxlib.h>
#include <string.h>

#include "../trace/iteration.h"
#include "../util/vec.h"
#include "lfields.h"
#include "lopts.h"
#include "ltrace.h"

static void push_iteration(lua_State *L, const tl_trace *t, const tl_iteration *it)
{
    const tl_event_store *es = &t->es;
    const char *name = tl_es_name(es, it->uid);
    const tl_iter_ann *a = &it->ann;
    tl_iter_details d;
    tl_iter_details_of(a, &d);
    lua_createtable(L, 0, 32);
    tl_lset_str(L, "name", name);
    tl_lset_int(L, "uid", it->uid);
    tl_lset_int(L, "tier", it->tier);
    tl_lset_us(L, "ts_us", (double)it->ts);
    tl_lset_us(L, "dur_us", (double)it->dur);
    const char *f = tl_iter_format_name(a->format);
    if (f) {
        tl_lset_str(L, "format", f);
    }
    /* the request counts of iter_details (an unmatched annotation is one
     * decode-equivalent step), the aggregates of the annotation */
    tl_lset_int(L, "batch_size", d.batch_size);
    tl_lset_int(L, "num_requests", d.num_requests);
    tl_lset_int(L, "context_requests", d.context_requests);
    tl_lset_int(L, "context_sum", d.context_sum);
    tl_lset_int(L, "generation_requests", d.generation_requests);
    tl_lset_int(L, "generation_sum", d.generation_sum);
    const struct {
        const char *k;
        int64_t v;
    } agg[] = {{"c_sq", a->c_sq}, {"c_sk", a->c_sk}, {"c_sqsq", a->c_sqsq}, {"c_sqsk", a->c_sqsk},
               {"g_sq", a->g_sq}, {"g_sk", a->g_sk}, {"g_sqsq", a->g_sqsq}, {"g_sqsk", a->g_sqsk}};
    for (size_t i = 0; i < sizeof agg / sizeof *agg; i++) tl_lset_int(L, agg[i].k, agg[i].v);
    lua_pushboolean(L, a->has_sqsk);
    lua_setfield(L, -2, "has_sqsk");
    const char *ph = tl_phase_name(tl_iter_phase(&d));
    if (ph) {
        tl_lset_str(L, "phase", ph);
    }
    tl_lset_us(L, "gpu_busy_us", (double)it->gpu_busy);
    tl_lset_int(L, "num_gpu_events", (int64_t)it->n_gpu);
    if (it->n_gpu) {
        tl_lset_us(L, "gpu_start_us", (double)it->gpu_first);
        tl_lset_us(L, "gpu_end_us", (double)it->gpu_last);
    }
    lua_createtable(L, 0, 4);
    if (a->has_ctx) {
        lua_pushlstring(L, name + a->ctx_off, a->ctx_len);
        lua_setfield(L, -2, "ctx");
    }
    if (a->has_p) tl_lset_int(L, "p", a->p);
    if (a->has_d) tl_lset_int(L, "d", a->d);
    if (a->has_spec) tl_lset_int(L, "spec", a->spec);
    if (a->tbo) {
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "tbo");
    }
    if (a->has_resolution) {
        lua_pushlstring(L, name + a->res_off, a->res_len);
        lua_setfield(L, -2, "resolution");
    }
    lua_setfield(L, -2, "meta");
}

int tl_l_trace_iterations(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    int generic = tl_lopt_bool(L, 2, "generic", 0);
    tl_iteration *v;
    size_t n = generic ? tl_trace_split_roots(t, &v) : tl_trace_iterations(t, &v);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        push_iteration(L, t, &v[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    free(v);
    return 1;
}

/* field k of the table at idx as a non-negative integer (dflt when nil) */
static int64_t count_field(lua_State *L, int idx, lua_Integer i, const char *k, int64_t dflt)
{
    int ty = lua_getfield(L, idx, k);
    int64_t v = dflt;
    if (ty != LUA_TNIL) {
        int ok = 0;
        v = ty == LUA_TNUMBER ? (int64_t)lua_tointegerx(L, -1, &ok) : 0;
        if (!ok || v < 0 || v > INT64_MAX / 4)
            luaL_error(L, "tl.steady_state: iterations[%d].%s must be a non-negative integer", (int)i, k);
    }
    lua_pop(L, 1);
    return v;
}

static void push_region(lua_State *L, tl_region r)
{
    lua_createtable(L, 0, 2);
    tl_lset_int(L, "first", (int64_t)r.start + 1);
    tl_lset_int(L, "last", (int64_t)r.end);
    tl_lset_int(L, "num_steps", (int64_t)(r.end - r.start));
}

/* tl.steady_state(iterations, {num_steps = 32, mode = "mixed" |
 * "decode_only" | "max_prefilldecode", conc =, osl =, r =}) */
int tl_l_steady_state(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    tl_ss_opts o = {0};
    o.num_steps = (size_t)tl_lopt_int(L, 2, "num_steps", 32, 1, 1000000000, "tl.steady_state");
    const char *mode = "mixed";
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "mode");
        if (!lua_isnil(L, -1)) mode = luaL_checkstring(L, -1);
        lua_pop(L, 1);
    }
    if (!strcmp(mode, "mixed")) o.mode = TL_SS_MIXED;
    else if (!strcmp(mode, "decode_only")) o.mode = TL_SS_DECODE_ONLY;
    else if (!strcmp(mode, "max_prefilldecode")) o.mode = TL_SS_MAX_PREFILLDECODE;
    else return luaL_error(L, "tl.steady_state: mode must be mixed, decode_only or max_prefilldecode");
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "conc");
        o.have_conc = !lua_isnil(L, -1);
        lua_getfield(L, 2, "osl");
        o.have_osl = !lua_isnil(L, -1);
        lua_getfield(L, 2, "r");
        o.have_r = !lua_isnil(L, -1);
        lua_pop(L, 3);
        if (o.have_conc) o.conc = tl_lopt_int(L, 2, "conc", 0, 1, INT64_MAX / 4, "tl.steady_state");
        if (o.have_osl) o.osl = tl_lopt_range(L, 2, "osl", 0, 1e-9, 1e15, "tl.steady_state");
        if (o.have_r) o.r = tl_lopt_range(L, 2, "r", 0, -1e15, 1e15, "tl.steady_state");
    }
    size_t n = (size_t)luaL_len(L, 1);
    if (n > SIZE_MAX / sizeof(tl_iter_details) - 1) return luaL_error(L, "tl.steady_state: too many iterations");
    /* a userdata: freed by Lua when a bad field raises an error */
    tl_iter_details *d = lua_newuserdatauv(L, (n ? n : 1) * sizeof *d, 0);
    for (size_t i = 0; i < n; i++) {
        lua_Integer li = (lua_Integer)i + 1;
        if (lua_geti(L, 1, li) != LUA_TTABLE)
            return luaL_error(L, "tl.steady_state: iterations[%d] is not a table", (int)li);
        int top = lua_gettop(L);
        tl_iter_details x;
        x.context_requests = count_field(L, top, li, "context_requests", 0);
        x.generation_requests = count_field(L, top, li, "generation_requests", 0);
        x.num_requests = count_field(L, top, li, "num_requests", x.context_requests + x.generation_requests);
        x.batch_size = count_field(L, top, li, "batch_size", 0);
        x.context_sum = count_field(L, top, li, "context_sum", 0);
        x.generation_sum = count_field(L, top, li, "generation_sum", 0);
        d[i] = x;
        lua_pop(L, 1);
    }
    tl_region *reg;
    int64_t gmax;
    int fallback;
    size_t nr = tl_steady_state_regions(d, n, o.num_steps, &reg, &gmax, &fallback);
    tl_region win = {0, 0};
    tl_ss_info info;
    int found = tl_steady_state_window(d, n, reg, nr, &o, &win, &info);
    lua_createtable(L, 0, 12);
    tl_lset_str(L, "mode", mode);
    lua_createtable(L, (int)nr, 0);
    for (size_t i = 0; i < nr; i++) {
        push_region(L, reg[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "regions");
    lua_pushboolean(L, fallback); /* no region near the peak: the middle of the iterations */
    lua_setfield(L, -2, "fallback");
    tl_lset_int(L, "global_max", gmax);
    if (found >= 0) {
        tl_lset_num(L, "reference_ratio", info.reference_ratio);
        tl_lset_int(L, "num_steps", (int64_t)info.num_steps);
        if (info.ideal_ratio >= 0) tl_lset_num(L, "ideal_ratio", info.ideal_ratio);
        if (nr) {
            push_region(L, info.largest);
            lua_setfield(L, -2, "largest_region");
        }
        lua_pushboolean(L, info.conc_mismatch);
        lua_setfield(L, -2, "conc_mismatch");
        lua_pushboolean(L, info.r_clamped);
        lua_setfield(L, -2, "r_clamped");
    }
    if (found > 0) {
        push_region(L, win);
        tl_phase_window pw;
        tl_phase_from_window(d + win.start, win.end - win.start, &pw);
        tl_lset_int(L, "num_prefill", (int64_t)pw.num_prefill);
        tl_lset_int(L, "num_prefilldecode", (int64_t)pw.num_prefilldecode);
        tl_lset_int(L, "num_decode", (int64_t)pw.num_decode);
        tl_lset_int(L, "avg_bs", pw.avg_bs);
        tl_lset_int(L, "avg_conc", pw.avg_conc);
        lua_setfield(L, -2, "window");
    }
    free(reg);
    if (found < 0) return luaL_error(L, "tl.steady_state: conc, osl and r give no P/D ratio (conc * 2 / (osl * (1 + r)))");
    return 1;
}
