/* lfields.h — setting fields of the table on top of a Lua stack, for the
 * bindings that return C figures as Lua tables (times in µs from ns). */
#ifndef TL_LFIELDS_H
#define TL_LFIELDS_H

#include <lua.h>

static inline void tl_lset_int(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

static inline void tl_lset_str(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

static inline void tl_lset_num(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, (lua_Number)v);
    lua_setfield(L, -2, k);
}

/* ns -> µs */
static inline void tl_lset_us(lua_State *L, const char *k, double ns) { tl_lset_num(L, k, ns / 1000.0); }

#endif
