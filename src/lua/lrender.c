#include "lrender.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "host.h"
#include "../render/base64.h"
#include "../render/png_chart.h"

/* tl.base64(s): standard base64, no line breaks. */
static int l_base64(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    luaL_Buffer b;
    char *out = luaL_buffinitsize(L, &b, tl_base64_len(n) + 1);
    luaL_pushresultsize(&b, tl_base64_encode(s, n, out));
    return 1;
}

/* Field k of the table at idx (raw access, so the value stays referenced by
 * the table while C holds its string) */
static int field(lua_State *L, int idx, const char *k)
{
    lua_pushstring(L, k);
    return lua_rawget(L, idx);
}

static const char *opt_string(lua_State *L, int idx, const char *k, const char *what)
{
    int t = field(L, idx, k);
    const char *s = t == LUA_TNIL ? NULL : t == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (t != LUA_TNIL && t != LUA_TSTRING) luaL_error(L, "stacked_bar: %s%s must be a string", what, k);
    lua_pop(L, 1);
    return s;
}

static double opt_number(lua_State *L, int idx, const char *k, double dflt, const char *what)
{
    int t = field(L, idx, k);
    if (t != LUA_TNIL && t != LUA_TNUMBER) luaL_error(L, "stacked_bar: %s%s must be a number", what, k);
    double v = t == LUA_TNIL ? dflt : lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

/* tl.chart.stacked_bar(path, spec) -> {width =, height =} */
static int l_stacked_bar(lua_State *L)
{
    tl_lua_refuse_in_sandbox(L, "tl.chart.stacked_bar");
    const char *path = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    tl_stacked_bar sp = {0};
    sp.title = opt_string(L, 2, "title", "");
    sp.xlabel = opt_string(L, 2, "xlabel", "");
    if (field(L, 2, "xmax") != LUA_TNUMBER) return luaL_error(L, "stacked_bar: xmax must be a number");
    sp.xmax = lua_tonumber(L, -1);
    lua_pop(L, 1);
    double cols = opt_number(L, 2, "legend_cols", 0, "");
    if (!(cols >= 0 && cols <= 64 && cols == (int)cols))
        return luaL_error(L, "stacked_bar: legend_cols must be an integer from 1 to 64");
    sp.legend_cols = (int)cols;
    sp.width_in = opt_number(L, 2, "width_in", 12, "");
    sp.height_in = opt_number(L, 2, "height_in", 3, "");
    sp.dpi = opt_number(L, 2, "dpi", 150, "");
    if (sp.width_in <= 0 || sp.height_in <= 0 || sp.dpi <= 0)
        return luaL_error(L, "stacked_bar: width_in, height_in and dpi must be > 0");

    if (field(L, 2, "segments") != LUA_TTABLE) return luaL_error(L, "stacked_bar: segments must be an array");
    int segs = lua_gettop(L);
    lua_Integer n = (lua_Integer)lua_rawlen(L, segs);
    if (n < 1 || n > 4096) return luaL_error(L, "stacked_bar: segments must hold 1 to 4096 entries");
    /* the array lives in a userdata, so a Lua error below frees it */
    tl_chart_segment *seg = lua_newuserdatauv(L, (size_t)n * sizeof *seg, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        char what[48];
        snprintf(what, sizeof what, "segments[%lld].", (long long)i);
        if (lua_rawgeti(L, segs, i) != LUA_TTABLE) return luaL_error(L, "stacked_bar: segments[%I] must be a table", i);
        int e = lua_gettop(L);
        seg[i - 1].label = opt_string(L, e, "label", what);
        if (field(L, e, "value") != LUA_TNUMBER) return luaL_error(L, "stacked_bar: %svalue must be a number", what);
        seg[i - 1].value = lua_tonumber(L, -1);
        lua_pop(L, 1);
        const char *col = opt_string(L, e, "color", what);
        if (!col || tl_rgb_parse(col, &seg[i - 1].color) != 0)
            return luaL_error(L, "stacked_bar: %scolor must be \"#rrggbb\"", what);
        lua_pop(L, 1); /* the entry: its strings stay referenced by segments */
    }
    sp.segments = seg;
    sp.nsegments = (size_t)n;
    tl_error err;
    tl_chart_geometry geo;
    if (tl_chart_stacked_bar_png(&sp, path, &geo, &err) != 0) return luaL_error(L, "%s", err.msg);
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, geo.width);
    lua_setfield(L, -2, "width");
    lua_pushinteger(L, geo.height);
    lua_setfield(L, -2, "height");
    return 1;
}

void tl_lrender_register(lua_State *L)
{
    lua_pushcfunction(L, l_base64);
    lua_setfield(L, -2, "base64");
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, l_stacked_bar);
    lua_setfield(L, -2, "stacked_bar");
    lua_setfield(L, -2, "chart");
}
