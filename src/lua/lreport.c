#include "lreport.h"

#include <lauxlib.h>
#include <string.h>

#include "host.h"
#include "lopts.h"
#include "ltable.h"
#include "ltrace.h"
#include "../report/report.h"
#include "../report/write_job.h"
#include "../util/vec.h"

#define JOB_MT "tracelens.report_job"
#define SHEETS_MT "tracelens.sheets_box"

typedef struct ljob {
    tl_write_job *j;
} ljob;

static int sheets_box_gc(lua_State *L)
{
    tl_sheets_free(luaL_checkudata(L, 1, SHEETS_MT));
    return 0;
}

/* A userdata owning a tl_sheets (emptied), pushed: what it holds is freed
 * when a Lua error unwinds past it. */
static tl_sheets *sheets_box(lua_State *L)
{
    return tl_lua_new_box(L, sizeof(tl_sheets), SHEETS_MT, sheets_box_gc);
}

static int new_sheets_box(lua_State *L)
{
    sheets_box(L);
    return 1;
}

/* The sheets of a trace:report table at idx, in report order (each table
 * retained), into a sheets box pushed on the stack. Raw reads only: the
 * list's raw length, the sheets' raw fields. */
static tl_sheets *sheets_from_lua(lua_State *L, int idx)
{
    if (!lua_istable(L, idx) || lua_getfield(L, idx, "__order") != LUA_TTABLE)
        luaL_error(L, "write_report: expected the table trace:report returns");
    int order = lua_gettop(L);
    lua_getfield(L, idx, "__empty_as_newline");
    int newline = lua_gettop(L);
    lua_Unsigned n = lua_rawlen(L, order);
    if (n > 100000) luaL_error(L, "write_report: %I sheets (at most 100000)", (lua_Integer)n);
    tl_sheets *s = sheets_box(L);
    s->v = tl_xcalloc((size_t)n + 1, sizeof *s->v);
    s->cap = (size_t)n + 1;
    for (lua_Integer i = 1; i <= (lua_Integer)n; i++) {
        if (lua_rawgeti(L, order, i) != LUA_TSTRING) luaL_error(L, "write_report: __order[%I] is not a sheet name", i);
        const char *name = lua_tostring(L, -1);
        lua_pushvalue(L, -1);
        tl_table *t = lua_rawget(L, idx) == LUA_TUSERDATA ? tl_ltable_test(L, -1) : NULL;
        if (!t) luaL_error(L, "write_report: sheet %s is not a Table", name);
        tl_table_retain(t);
        s->v[s->n++] = (tl_sheet){tl_xstrdup(name), t, 0};
        if (lua_istable(L, newline)) {
            lua_pushvalue(L, -2);
            lua_rawget(L, newline);
            s->v[s->n - 1].write_empty_as_newline = lua_toboolean(L, -1);
            lua_pop(L, 1);
        }
        lua_pop(L, 2);
    }
    lua_replace(L, order); /* the box where __order was */
    lua_pop(L, 1);
    return s;
}

void tl_lreport_push_sheets(lua_State *L, tl_sheets *in)
{
    /* moved into a box first (made in a protected call), so a memory error
     * anywhere below frees the sheets */
    if (!lua_checkstack(L, 8)) {
        tl_sheets_free(in);
        luaL_error(L, "stack overflow (report sheets)");
    }
    lua_pushcfunction(L, new_sheets_box);
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
        tl_sheets_free(in);
        lua_error(L);
    }
    tl_sheets *s = lua_touserdata(L, -1);
    *s = *in;
    memset(in, 0, sizeof *in);
    int box = lua_gettop(L);
    lua_createtable(L, 0, (int)s->n + 2);
    lua_createtable(L, (int)s->n, 0); /* order */
    for (size_t i = 0; i < s->n; i++) {
        lua_pushstring(L, s->v[i].name);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
        tl_table *t = s->v[i].table;
        s->v[i].table = NULL; /* owned by Lua now (or freed by a failed push) */
        tl_ltable_push(L, t);
        lua_setfield(L, -3, s->v[i].name);
    }
    lua_setfield(L, -2, "__order");
    lua_newtable(L); /* sheets whose CSV is a bare newline when empty */
    for (size_t i = 0; i < s->n; i++) {
        if (!s->v[i].write_empty_as_newline) continue;
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, s->v[i].name);
    }
    lua_setfield(L, -2, "__empty_as_newline");
    tl_sheets_free(s);
    lua_remove(L, box);
}

/* tl.write_report(sheets, dir [, {name = BASE, csv = true, xlsx = true,
 * background = false}]): DIR/BASE_csvs/ and DIR/BASE.xlsx (BASE defaults
 * to perf_report). In the background it returns a job at once; job:wait()
 * returns true when the files are in place and raises the write's error
 * otherwise (a job never waited for is waited for when collected). */
static int l_write_report(lua_State *L)
{
    tl_lua_refuse_in_sandbox(L, "tl.write_report");
    const char *dir = luaL_checkstring(L, 2);
    lua_settop(L, 3);
    tl_report_opts o;
    tl_report_opts_default(&o);
    if (lua_istable(L, 3)) {
        int ty = lua_getfield(L, 3, "name"); /* index 4: stays on the stack */
        if (ty != LUA_TNIL && ty != LUA_TSTRING) return luaL_error(L, "write_report: name must be a string");
        o.name = lua_tostring(L, -1);
    }
    o.csv = tl_lopt_bool(L, 3, "csv", 1);
    o.xlsx = tl_lopt_bool(L, 3, "xlsx", 1);
    int background = tl_lopt_bool(L, 3, "background", 0);
    tl_sheets *s = sheets_from_lua(L, 1);
    tl_error err;
    if (!background) {
        int rc = tl_report_write(s, dir, &o, &err);
        tl_sheets_free(s);
        if (rc != 0) return luaL_error(L, "%s", err.msg);
        return 0;
    }
    ljob *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->j = NULL;
    luaL_setmetatable(L, JOB_MT);
    u->j = tl_write_job_start(s, dir, &o, &err);
    if (!u->j) return luaL_error(L, "%s", err.msg);
    return 1;
}

static int job_wait(lua_State *L)
{
    ljob *u = luaL_checkudata(L, 1, JOB_MT);
    if (!u->j) return luaL_error(L, "write_report: the job is closed");
    tl_error err;
    if (tl_write_job_wait(u->j, &err) != 0) return luaL_error(L, "%s", err.msg);
    lua_pushboolean(L, 1);
    return 1;
}

static int job_gc(lua_State *L)
{
    ljob *u = luaL_checkudata(L, 1, JOB_MT);
    tl_write_job_free(u->j);
    u->j = NULL;
    return 0;
}

void tl_lreport_register(lua_State *L)
{
    if (luaL_newmetatable(L, JOB_MT)) {
        static const luaL_Reg methods[] = {{"wait", job_wait}, {NULL, NULL}};
        luaL_newlib(L, methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, job_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, job_gc);
        lua_setfield(L, -2, "__close");
        tl_lua_protect_metatable(L, JOB_MT);
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, l_write_report);
    lua_setfield(L, -2, "write_report");
}
