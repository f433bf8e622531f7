#include "ldiff.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "../diff/trace_diff.h"
#include "limits.h"
#include "ltable.h"
#include "ltrace.h"

#define TL_DIFF_MT "tracelens.diff"

typedef struct ldiff {
    tl_trace_diff *d;
} ldiff;

static int diff_gc(lua_State *L)
{
    ldiff *u = luaL_checkudata(L, 1, TL_DIFF_MT);
    if (u->d) {
        tl_trace *t1 = (tl_trace *)u->d->t[0], *t2 = (tl_trace *)u->d->t[1];
        tl_trace_diff_free(u->d);
        free(u->d);
        u->d = NULL;
        tl_trace_release(t1);
        tl_trace_release(t2);
    }
    return 0;
}

/* merged_uid(tree, uid): merged_uid_map[(tree, uid)], nil when absent */
static int l_merged_uid(lua_State *L)
{
    ldiff *u = luaL_checkudata(L, lua_upvalueindex(1), TL_DIFF_MT);
    lua_Integer tree = luaL_checkinteger(L, 1), uid = luaL_checkinteger(L, 2);
    luaL_argcheck(L, tree == 1 || tree == 2, 1, "tree must be 1 or 2");
    if (!u->d || uid < 0 || uid > UINT32_MAX) {
        lua_pushnil(L);
        return 1;
    }
    int64_t o = tl_trace_diff_other_uid(u->d, (int)tree, (uint32_t)uid);
    if (o == -2) lua_pushnil(L);
    else lua_pushinteger(L, o);
    return 1;
}

/* __index of the result: merged_tree, made once and stored in the table */
static int l_lazy_tree(lua_State *L)
{
    const char *k = lua_tostring(L, 2);
    if (!k || strcmp(k, "merged_tree")) return 0;
    ldiff *u = luaL_checkudata(L, lua_upvalueindex(1), TL_DIFF_MT);
    if (!u->d) return 0;
    tl_sbuf b;
    tl_sb_init(&b);
    tl_error err;
    if (tl_trace_diff_tree_text(u->d, lua_toboolean(L, lua_upvalueindex(2)), &b, &err) != 0) {
        tl_sb_free(&b);
        lua_pushstring(L, err.msg); /* no position: the message is the reason */
        return lua_error(L);
    }
    lua_pushlstring(L, b.s ? b.s : "", b.len);
    tl_sb_free(&b);
    lua_pushvalue(L, -1);
    lua_setfield(L, 1, "merged_tree");
    return 1;
}

static void push_table_or_nil(lua_State *L, tl_table *t)
{
    if (!t) {
        lua_pushnil(L);
        return;
    }
    tl_table_retain(t);
    tl_ltable_push(L, t);
}

static void push_text(lua_State *L, const char *s)
{
    if (s) lua_pushstring(L, s);
    else lua_pushnil(L);
}

/* tl.diff(trace1, trace2 [, {prune_non_gpu = bool}]) */
static int l_diff(lua_State *L)
{
    tl_trace *t1 = tl_ltrace_check(L, 1), *t2 = tl_ltrace_check(L, 2);
    int prune = 0;
    if (lua_istable(L, 3)) {
        lua_getfield(L, 3, "prune_non_gpu");
        prune = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    ldiff *u = tl_lua_new_box(L, sizeof *u, TL_DIFF_MT, diff_gc);
    int ud = lua_gettop(L);
    tl_trace_diff *d = calloc(1, sizeof *d);
    if (!d) return luaL_error(L, "diff: out of memory");
    tl_error err;
    if (tl_trace_diff_run(d, t1, t2, 0, &err) != 0) {
        free(d);
        return luaL_error(L, "%s", err.msg);
    }
    tl_trace_retain(t1);
    tl_trace_retain(t2);
    u->d = d;
    /* a task's memory cap counts the diff it holds (freed with the handle) */
    tl_limits_charge_object(L, ud, tl_trace_diff_bytes(d), "a TraceDiff");

    lua_createtable(L, 0, 12);
    push_table_or_nil(L, d->diff_stats);
    lua_setfield(L, -2, "diff_stats");
    push_table_or_nil(L, d->summary);
    lua_setfield(L, -2, "diff_stats_unique_args_summary");
    push_text(L, d->cpu_op_map_trace1);
    lua_setfield(L, -2, "cpu_op_map_trace1");
    push_text(L, d->cpu_op_map_trace2);
    lua_setfield(L, -2, "cpu_op_map_trace2");
    push_text(L, d->cpu_op_map);
    lua_setfield(L, -2, "cpu_op_map");
    lua_pushboolean(L, d->identical);
    lua_setfield(L, -2, "identical");
    lua_pushinteger(L, (lua_Integer)d->n_nodes);
    lua_setfield(L, -2, "merged_nodes");
    lua_pushinteger(L, (lua_Integer)d->n_roots);
    lua_setfield(L, -2, "merged_roots");
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)d->wf_runs);
    lua_setfield(L, -2, "wf_runs");
    lua_pushinteger(L, (lua_Integer)d->wf_memo_hits);
    lua_setfield(L, -2, "wf_memo_hits");
    lua_pushinteger(L, (lua_Integer)d->disambiguations);
    lua_setfield(L, -2, "disambiguations");
    lua_pushnumber(L, d->seconds_merge);
    lua_setfield(L, -2, "seconds_merge");
    lua_pushnumber(L, d->seconds_stats);
    lua_setfield(L, -2, "seconds_stats");
    lua_pushnumber(L, d->seconds_tables);
    lua_setfield(L, -2, "seconds_tables");
    lua_setfield(L, -2, "stats");
    lua_pushvalue(L, ud);
    lua_pushcclosure(L, l_merged_uid, 1);
    lua_setfield(L, -2, "merged_uid");
    /* merged_tree: the text is made on first use (it can be large) */
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, ud);
    lua_pushboolean(L, prune);
    lua_pushcclosure(L, l_lazy_tree, 2);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    return 1;
}

void tl_ldiff_register(lua_State *L)
{
    lua_pushcfunction(L, l_diff);
    lua_setfield(L, -2, "diff");
}
