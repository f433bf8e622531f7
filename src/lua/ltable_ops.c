/* ltable_ops.c — Table methods that build new tables from whole tables:
 * t:group_by(keys [, opts]):agg(spec), t:join(other, on [, opts]) and
 * t:preview([n]); and the column lookup with ASCII aliases ("(us)" for
 * "(µs)"). Owns nothing beyond the calls (the results are new Tables). */
#include <lauxlib.h>
#include <string.h>

#include "lopts.h"
#include "ltable.h"

#define GROUPING_MT "tracelens.grouping"

long tl_ltable_col(const tl_table *t, const char *name)
{
    long c = tl_table_col(t, name);
    if (c >= 0) return c;
    /* "(us)" stands for "(µs)" (Kernel Time (us)_sum) */
    const char *us = strstr(name, "(us)");
    if (!us || strlen(name) > 1000) return -1;
    char alt[1024];
    snprintf(alt, sizeof alt, "%.*s(\xc2\xb5s)%s", (int)(us - name), name, us + 4);
    return tl_table_col(t, alt);
}

static tl_table *check_table(lua_State *L, int idx, const char *fn)
{
    tl_table *t = tl_ltable_test(L, idx);
    if (!t) luaL_error(L, "%s: argument %d must be a Table", fn, idx);
    return t;
}

/* The column names at idx (a string or an array of strings), checked
 * against t, as names of t's own columns (alive as long as t). */
static size_t column_list(lua_State *L, int idx, const tl_table *t, const char *fn, const char **out, size_t cap)
{
    if (lua_type(L, idx) == LUA_TSTRING) {
        long c = tl_ltable_col(t, lua_tostring(L, idx));
        if (c < 0) luaL_error(L, "%s: no column '%s' in table %s", fn, lua_tostring(L, idx), t->name);
        out[0] = t->cols[c].name;
        return 1;
    }
    luaL_argexpected(L, lua_type(L, idx) == LUA_TTABLE, idx, "a column name or an array of them");
    lua_Unsigned n = lua_rawlen(L, idx);
    if (n == 0 || n > cap) luaL_error(L, "%s: 1 to %d key columns", fn, (int)cap);
    for (lua_Unsigned i = 1; i <= n; i++) {
        if (lua_rawgeti(L, idx, (lua_Integer)i) != LUA_TSTRING)
            luaL_error(L, "%s: keys[%I] is a %s, not a column name", fn, (lua_Integer)i, luaL_typename(L, -1));
        long c = tl_ltable_col(t, lua_tostring(L, -1));
        if (c < 0) luaL_error(L, "%s: no column '%s' in table %s", fn, lua_tostring(L, -1), t->name);
        lua_pop(L, 1);
        out[i - 1] = t->cols[c].name;
    }
    return (size_t)n;
}

enum { MAX_KEYS = 32, MAX_AGGS = 256 };

/* t:group_by(keys [, {sort = true, dropna = true}]) -> a grouping; its
 * agg(spec) makes the table. */
int tl_l_table_group_by(lua_State *L)
{
    tl_table *t = check_table(L, 1, "group_by");
    const char *keys[MAX_KEYS];
    size_t nk = column_list(L, 2, t, "group_by", keys, MAX_KEYS);
    int sort = tl_lopt_bool(L, 3, "sort", 1), dropna = tl_lopt_bool(L, 3, "dropna", 1);
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "table");
    lua_createtable(L, (int)nk, 0);
    for (size_t k = 0; k < nk; k++) {
        lua_pushstring(L, keys[k]);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "keys");
    lua_pushboolean(L, sort);
    lua_setfield(L, -2, "sort");
    lua_pushboolean(L, dropna);
    lua_setfield(L, -2, "dropna");
    luaL_setmetatable(L, GROUPING_MT);
    return 1;
}

static const struct {
    const char *name;
    tl_aggfn fn;
    int numeric; /* needs a number column */
} AGG_FNS[] = {
    {"sum", TL_AGG_SUM, 1},   {"mean", TL_AGG_MEAN, 1}, {"median", TL_AGG_MEDIAN, 1}, {"std", TL_AGG_STD, 1},
    {"min", TL_AGG_MIN, 1},   {"max", TL_AGG_MAX, 1},   {"count", TL_AGG_COUNT, 0},   {"size", TL_AGG_SIZE, 0},
    {"first", TL_AGG_FIRST, 0}, {"set", TL_AGG_SET, 0},
};

/* grouping:agg{{col, fn [, as = name]}, ...} -> Table: the key columns,
 * then one column per entry (default name "<col>_<fn>"; col "*" with count
 * or size counts rows). */
static int g_agg(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "table");
    tl_table *t = check_table(L, lua_gettop(L), "agg");
    int keys_idx = lua_getfield(L, 1, "keys") == LUA_TTABLE ? lua_gettop(L) : 0;
    if (!keys_idx) return luaL_error(L, "agg: not a grouping (t:group_by(keys))");
    const char *keys[MAX_KEYS];
    size_t nk = column_list(L, keys_idx, t, "agg", keys, MAX_KEYS);
    lua_getfield(L, 1, "sort");
    lua_getfield(L, 1, "dropna");
    int sort = lua_toboolean(L, -2), dropna = lua_toboolean(L, -1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Unsigned n = lua_rawlen(L, 2);
    if (n == 0 || n > MAX_AGGS) return luaL_error(L, "agg: 1 to %d aggregations", MAX_AGGS);
    tl_agg aggs[MAX_AGGS];
    memset(aggs, 0, sizeof aggs);
    int names = lua_gettop(L) + 1; /* the output names stay alive in this table */
    lua_createtable(L, (int)n, 0);
    for (lua_Unsigned i = 1; i <= n; i++) {
        if (lua_rawgeti(L, 2, (lua_Integer)i) != LUA_TTABLE)
            return luaL_error(L, "agg: spec[%I] must be {column, function [, as = name]}", (lua_Integer)i);
        int e = lua_gettop(L);
        if (lua_rawgeti(L, e, 1) != LUA_TSTRING || lua_rawgeti(L, e, 2) != LUA_TSTRING)
            return luaL_error(L, "agg: spec[%I] must be {column, function [, as = name]}", (lua_Integer)i);
        const char *col = lua_tostring(L, -2), *fname = lua_tostring(L, -1);
        size_t f = 0;
        while (f < sizeof AGG_FNS / sizeof *AGG_FNS && strcmp(AGG_FNS[f].name, fname)) f++;
        if (f == sizeof AGG_FNS / sizeof *AGG_FNS)
            return luaL_error(L, "agg: spec[%I]: unknown function '%s' (sum, mean, median, std, min, max, count, "
                              "size, first, set)", (lua_Integer)i, fname);
        tl_agg *a = &aggs[i - 1];
        a->fn = AGG_FNS[f].fn;
        if (!strcmp(col, "*")) {
            if (a->fn != TL_AGG_COUNT && a->fn != TL_AGG_SIZE)
                return luaL_error(L, "agg: spec[%I]: column '*' goes with count or size", (lua_Integer)i);
            a->fn = TL_AGG_SIZE;
            a->col = t->cols[0].name;
        } else {
            long c = tl_ltable_col(t, col);
            if (c < 0) return luaL_error(L, "agg: no column '%s' in table %s", col, t->name);
            if (AGG_FNS[f].numeric && t->cols[c].type == TL_COL_STR)
                return luaL_error(L, "agg: %s of '%s' needs a number column (it holds text)", fname, col);
            if (a->fn == TL_AGG_SET && t->cols[c].type != TL_COL_STR)
                return luaL_error(L, "agg: set of '%s' needs a text column", col);
            a->col = t->cols[c].name;
        }
        if (lua_getfield(L, e, "as") == LUA_TSTRING) {
            lua_pushvalue(L, -1);
        } else {
            lua_pop(L, 1);
            lua_pushfstring(L, "%s_%s", col, fname);
            lua_pushvalue(L, -1);
        }
        lua_rawseti(L, names, (lua_Integer)i);
        a->out = lua_tostring(L, -1); /* alive in `names` */
        lua_settop(L, names);
    }
    for (lua_Unsigned i = 0; i < n; i++)
        for (size_t k = 0; k < nk; k++)
            if (!strcmp(aggs[i].out, keys[k]))
                return luaL_error(L, "agg: output column '%s' is also a key (use as = ...)", aggs[i].out);
    tl_groupby g = {keys, nk, sort, dropna, aggs, (size_t)n};
    tl_ltable_push(L, tl_table_group(t, t->name, &g));
    return 1;
}

/* t:join(other, on [, {how = "inner" | "left"}]) -> Table */
int tl_l_table_join(lua_State *L)
{
    tl_table *l = check_table(L, 1, "join");
    tl_table *r = check_table(L, 2, "join");
    const char *on[MAX_KEYS];
    size_t non = column_list(L, 3, l, "join", on, MAX_KEYS);
    int left = 0;
    if (lua_istable(L, 4)) {
        lua_getfield(L, 4, "how");
        const char *how = lua_isnil(L, -1) ? "inner" : lua_tostring(L, -1);
        if (!how || (strcmp(how, "inner") && strcmp(how, "left")))
            return luaL_error(L, "join: how must be \"inner\" or \"left\"");
        left = !strcmp(how, "left");
        lua_pop(L, 1);
    }
    const char *bad = NULL;
    tl_table *out = tl_table_join(l, r, l->name, on, non, left, &bad);
    if (!out)
        return luaL_error(L, "join: key column '%s' is missing from table %s or of another type there", bad, r->name);
    tl_ltable_push(L, out);
    return 1;
}

/* t:preview([n = 10 [, width = 120]]) -> text */
int tl_l_table_preview(lua_State *L)
{
    tl_table *t = check_table(L, 1, "preview");
    lua_Integer n = luaL_optinteger(L, 2, 10), w = luaL_optinteger(L, 3, 120);
    luaL_argcheck(L, n >= 0 && n <= 100000, 2, "0 to 100000 rows");
    luaL_argcheck(L, w >= 20 && w <= 100000, 3, "a width of 20 to 100000");
    tl_sbuf b;
    tl_sb_init(&b);
    tl_table_preview(t, (size_t)n, (size_t)w, &b);
    lua_pushlstring(L, b.s ? b.s : "", b.len);
    tl_sb_free(&b);
    return 1;
}

void tl_ltable_ops_register(lua_State *L)
{
    if (luaL_newmetatable(L, GROUPING_MT)) {
        lua_createtable(L, 0, 1);
        lua_pushcfunction(L, g_agg);
        lua_setfield(L, -2, "agg");
        lua_setfield(L, -2, "__index");
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
}
