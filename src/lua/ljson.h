/* ljson.h — tl.json_decode(text, obj_mt, arr_mt, key_lists, null): the
 * decoder of tracelens.json (lua/tracelens/json.lua) in C. It builds what
 * json.lua's own decoder builds, table for table: objects with the metatable
 * obj_mt and their key order in key_lists[object] = {list =, set =}, arrays
 * with arr_mt, null as the value `null`, integers as Lua integers (a
 * float beyond int64) and other numbers as floats, NaN / Infinity /
 * -Infinity. It returns nil, and leaves the text to json.lua (which gives
 * the error, or the value), for anything it does not take: an error, a
 * \u escape it does not decode the same way, a number of 256 bytes or
 * more, nesting deeper than 200. Owns nothing. */
#ifndef TL_LJSON_H
#define TL_LJSON_H

#include <lua.h>

int tl_l_json_decode(lua_State *L);

#endif
