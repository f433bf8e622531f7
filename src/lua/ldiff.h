/* ldiff.h — tl.diff(trace1, trace2 [, opts]): TraceDiff of two loaded traces
 * (diff/trace_diff.h) as a Lua table of Tables and texts. Owns a userdata
 * ("tracelens.diff") holding the diff and both traces (retained) for the
 * merged_uid_map lookups. */
#ifndef TL_LDIFF_H
#define TL_LDIFF_H

#include <lua.h>

/* Adds `diff` to the table at the top of the stack. */
void tl_ldiff_register(lua_State *L);

#endif
