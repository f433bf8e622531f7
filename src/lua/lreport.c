#include "lreport.h"

#include <lauxlib.h>
#include <string.h>

#include "lopts.h"
#include "ltable.h"
#include "../report/report.h"
#include "../report/write_job.h"
#include "../util/vec.h"

#define JOB_MT "tracelens.report_job"

typedef struct ljob {
    tl_write_job *j;
} ljob;

/* The sheets of a trace:report table at idx, in report order (each table
 * retained). */
static void sheets_from_lua(lua_State *L, int idx, tl_sheets *s)
{
    memset(s, 0, sizeof *s);
    if (!lua_istable(L, idx) || lua_getfield(L, idx, "__order") != LUA_TTABLE)
        luaL_error(L, "write_report: expected the table trace:report returns");
    int order = lua_gettop(L);
    lua_getfield(L, idx, "__empty_as_newline");
    int newline = lua_gettop(L);
    lua_Integer n = luaL_len(L, order);
    s->v = tl_xcalloc((size_t)n + 1, sizeof *s->v);
    s->cap = (size_t)n + 1;
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, order, i);
        const char *name = lua_tostring(L, -1);
        tl_table *t = name && lua_getfield(L, idx, name) ? tl_ltable_test(L, -1) : NULL;
        if (!t) {
            tl_sheets_free(s);
            luaL_error(L, "write_report: sheet %s is not a Table", name ? name : "?");
        }
        tl_table_retain(t);
        int nl = 0;
        if (lua_istable(L, newline)) {
            lua_getfield(L, newline, name);
            nl = lua_toboolean(L, -1);
            lua_pop(L, 1);
        }
        s->v[s->n++] = (tl_sheet){tl_xstrdup(name), t, nl};
        lua_pop(L, 2);
    }
    lua_pop(L, 2);
}

void tl_lreport_push_sheets(lua_State *L, tl_sheets *s)
{
    lua_createtable(L, 0, (int)s->n + 2);
    lua_createtable(L, (int)s->n, 0); /* order */
    for (size_t i = 0; i < s->n; i++) {
        lua_pushstring(L, s->v[i].name);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
        tl_ltable_push(L, s->v[i].table);
        lua_setfield(L, -3, s->v[i].name);
        s->v[i].table = NULL; /* owned by Lua now */
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
}

/* tl.write_report(sheets, dir [, {name = BASE, csv = true, xlsx = true,
 * background = false}]): DIR/BASE_csvs/ and DIR/BASE.xlsx (BASE defaults
 * to perf_report). In the background it returns a job at once; job:wait()
 * returns true when the files are in place and raises the write's error
 * otherwise (a job never waited for is waited for when collected). */
static int l_write_report(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 2);
    tl_report_opts o;
    tl_report_opts_default(&o);
    if (lua_istable(L, 3)) {
        lua_getfield(L, 3, "name");
        o.name = lua_tostring(L, -1); /* kept alive by the options table */
        lua_pop(L, 1);
    }
    o.csv = tl_lopt_bool(L, 3, "csv", 1);
    o.xlsx = tl_lopt_bool(L, 3, "xlsx", 1);
    int background = tl_lopt_bool(L, 3, "background", 0);
    tl_sheets s;
    sheets_from_lua(L, 1, &s);
    tl_error err;
    if (!background) {
        int rc = tl_report_write(&s, dir, &o, &err);
        tl_sheets_free(&s);
        if (rc != 0) return luaL_error(L, "%s", err.msg);
        return 0;
    }
    ljob *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->j = NULL;
    luaL_setmetatable(L, JOB_MT);
    u->j = tl_write_job_start(&s, dir, &o, &err);
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
    }
    lua_pop(L, 1);
    lua_pushcfunction(L, l_write_report);
    lua_setfield(L, -2, "write_report");
}
