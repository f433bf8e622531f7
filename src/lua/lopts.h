/* lopts.h — reading the fields of a Lua options table (the opts argument of
 * trace:report, tl.write_report, tl.compare, ...). Owns nothing. */
#ifndef TL_LOPTS_H
#define TL_LOPTS_H

#include <lauxlib.h>
#include <lua.h>

/* opts[k] as a flag: dflt when nil (or when idx is not a table). */
static inline int tl_lopt_bool(lua_State *L, int idx, const char *k, int dflt)
{
    if (!lua_istable(L, idx)) return dflt;
    lua_getfield(L, idx, k);
    int v = lua_isnil(L, -1) ? dflt : lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

/* opts[k] as a number: dflt when it is not one (or when idx is not a table). */
static inline double tl_lopt_num(lua_State *L, int idx, const char *k, double dflt)
{
    if (!lua_istable(L, idx)) return dflt;
    lua_getfield(L, idx, k);
    double v = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : dflt;
    lua_pop(L, 1);
    return v;
}

/* opts[k] as a number in [lo, hi] (NaN never is): dflt when nil (or when idx
 * is not a table); otherwise a Lua error "FN: K must be a number from LO to
 * HI". */
static inline double tl_lopt_range(lua_State *L, int idx, const char *k, double dflt, double lo, double hi,
                                   const char *fn)
{
    if (!lua_istable(L, idx)) return dflt;
    int ty = lua_getfield(L, idx, k);
    double v = dflt;
    if (ty != LUA_TNIL) {
        v = lua_tonumber(L, -1);
        if (ty != LUA_TNUMBER || !(v >= lo && v <= hi))
            luaL_error(L, "%s: %s must be a number from %f to %f", fn, k, lo, hi);
    }
    lua_pop(L, 1);
    return v;
}

/* opts[k] as an integer in [lo, hi] (a float with an exact integer value is
 * one): dflt when nil (or when idx is not a table); otherwise a Lua error
 * "FN: K must be an integer from LO to HI" (fractions, NaN, infinities and
 * out-of-range values included). */
static inline lua_Integer tl_lopt_int(lua_State *L, int idx, const char *k, lua_Integer dflt, lua_Integer lo,
                                      lua_Integer hi, const char *fn)
{
    if (!lua_istable(L, idx)) return dflt;
    int ty = lua_getfield(L, idx, k);
    lua_Integer v = dflt;
    if (ty != LUA_TNIL) {
        int isint = 0;
        v = ty == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
        if (!isint || v < lo || v > hi) luaL_error(L, "%s: %s must be an integer from %I to %I", fn, k, lo, hi);
    }
    lua_pop(L, 1);
    return v;
}

/* opts[k] (idx a table, or not) as an optional string, left on the stack so
 * that it stays alive (an __index metamethod may return a fresh string):
 * NULL when nil; a Lua error "FN: K must be a string" otherwise. */
static inline const char *tl_lopt_str(lua_State *L, int idx, const char *k, const char *fn)
{
    if (!lua_istable(L, idx)) {
        lua_pushnil(L);
        return NULL;
    }
    int ty = lua_getfield(L, idx, k);
    if (ty == LUA_TNIL) return NULL;
    if (ty != LUA_TSTRING) luaL_error(L, "%s: %s must be a string, not a %s", fn, k, lua_typename(L, ty));
    return lua_tostring(L, -1);
}

#endif
