/* lopts.h — reading the fields of a Lua options table (the opts argument of
 * trace:report, tl.write_report, tl.compare, ...). Owns nothing. */
#ifndef TL_LOPTS_H
#define TL_LOPTS_H

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

#endif
