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
    idx = lua_absindex(L, idx);
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

/* The array at idx: its length, 1 to max (else an error naming it). */
static lua_Integer array_len(lua_State *L, int idx, const char *what, lua_Integer max)
{
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    if (n < 1 || n > max) luaL_error(L, "stacked_bar: %s must hold 1 to %I entries", what, max);
    return n;
}

/* Reads the n entries {label =, value =, color =} of the array at idx into
 * out; what names the array in errors ("segments", "bars[2].segments").
 * With need_value 0 (a legend) value is not read. The label strings stay
 * referenced by the entries, which the spec (argument 2) holds. */
static void read_segments(lua_State *L, int idx, lua_Integer n, const char *what, int need_value,
                          tl_chart_segment *out)
{
    for (lua_Integer i = 1; i <= n; i++) {
        char where[96];
        snprintf(where, sizeof where, "%s[%lld].", what, (long long)i);
        if (lua_rawgeti(L, idx, i) != LUA_TTABLE) luaL_error(L, "stacked_bar: %s[%I] must be a table", what, i);
        int e = lua_gettop(L);
        tl_chart_segment *sg = &out[i - 1];
        sg->label = opt_string(L, e, "label", where);
        sg->value = 0;
        if (need_value) {
            if (field(L, e, "value") != LUA_TNUMBER) luaL_error(L, "stacked_bar: %svalue must be a number", where);
            sg->value = lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
        const char *col = opt_string(L, e, "color", where);
        if (!col || tl_rgb_parse(col, &sg->color) != 0)
            luaL_error(L, "stacked_bar: %scolor must be \"#rrggbb\"", where);
        lua_pop(L, 1);
    }
}

/* The array at idx (1 to TL_CHART_MAX_ENTRIES entries) read into a new
 * userdata left on the stack, so a Lua error frees it; *n its length. */
static tl_chart_segment *segment_array(lua_State *L, int idx, const char *what, int need_value, size_t *n)
{
    lua_Integer k = array_len(L, idx, what, TL_CHART_MAX_ENTRIES);
    tl_chart_segment *out = lua_newuserdatauv(L, (size_t)k * sizeof *out, 0);
    read_segments(L, idx, k, what, need_value, out);
    *n = (size_t)k;
    return out;
}

/* spec.bars = {{label =, segments = {...}}, ...}: read into sp (the arrays
 * live in userdata on the stack, so a Lua error frees them). */
static void read_bars(lua_State *L, int bars, tl_stacked_bar *sp)
{
    lua_Integer nb = array_len(L, bars, "bars", TL_CHART_MAX_BARS), total = 0;
    for (lua_Integer b = 1; b <= nb; b++) {
        if (lua_rawgeti(L, bars, b) != LUA_TTABLE) luaL_error(L, "stacked_bar: bars[%I] must be a table", b);
        if (field(L, -1, "segments") != LUA_TTABLE)
            luaL_error(L, "stacked_bar: bars[%I].segments must be an array", b);
        char what[48];
        snprintf(what, sizeof what, "bars[%lld].segments", (long long)b);
        total += array_len(L, -1, what, TL_CHART_MAX_ENTRIES);
        lua_pop(L, 2);
    }
    if (total > TL_CHART_MAX_ENTRIES)
        luaL_error(L, "stacked_bar: the bars hold %I segments; at most %d", total, TL_CHART_MAX_ENTRIES);
    tl_chart_bar *bar = lua_newuserdatauv(L, (size_t)nb * sizeof *bar, 0);
    tl_chart_segment *seg = lua_newuserdatauv(L, (size_t)total * sizeof *seg, 0);
    for (lua_Integer b = 1; b <= nb; b++) {
        lua_rawgeti(L, bars, b);
        int t = lua_gettop(L);
        char what[48];
        snprintf(what, sizeof what, "bars[%lld].", (long long)b);
        bar[b - 1].label = opt_string(L, t, "label", what);
        field(L, t, "segments");
        lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
        snprintf(what, sizeof what, "bars[%lld].segments", (long long)b);
        read_segments(L, lua_gettop(L), n, what, 1, seg);
        bar[b - 1].segments = seg;
        bar[b - 1].nsegments = (size_t)n;
        seg += n;
        lua_pop(L, 2);
    }
    sp->bars = bar;
    sp->nbars = (size_t)nb;
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

    /* the arrays live in userdata, so a Lua error below frees them */
    int tsegs = field(L, 2, "segments"), segs = lua_gettop(L);
    int tbars = field(L, 2, "bars"), bars = lua_gettop(L);
    if (tsegs != LUA_TNIL && tbars != LUA_TNIL) return luaL_error(L, "stacked_bar: give segments or bars, not both");
    if (tbars != LUA_TNIL) {
        if (tbars != LUA_TTABLE) return luaL_error(L, "stacked_bar: bars must be an array");
        read_bars(L, bars, &sp);
    } else {
        if (tsegs != LUA_TTABLE) return luaL_error(L, "stacked_bar: segments must be an array");
        sp.segments = segment_array(L, segs, "segments", 1, &sp.nsegments);
    }
    int tleg = field(L, 2, "legend"), leg = lua_gettop(L);
    if (tleg != LUA_TNIL) {
        if (tleg != LUA_TTABLE) return luaL_error(L, "stacked_bar: legend must be an array");
        sp.legend = segment_array(L, leg, "legend", 0, &sp.nlegend);
    }
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
