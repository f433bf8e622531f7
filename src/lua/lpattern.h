/* lpattern.h — Lua 5.4 pattern matching for sandboxed states (tl.parallel
 * tasks: analyzers and user rules) that honours the task's time limit.
 *
 * Lua's own matcher runs inside one C call, where the count hook that
 * enforces --timeout never fires: a backtracking pattern such as
 * ("a"):rep(3000):find(("a-"):rep(12).."b") would run for hours. These
 * string.find, string.match, string.gmatch and string.gsub have the
 * semantics of the Lua 5.4 reference manual (§6.4, §6.4.1: the same
 * results, captures, positions and errors, tests/unit/test_lpattern.c
 * compares them with the real ones) and call tl_limits_check every few
 * thousand matching steps. Recursion is bounded (200 nested matcher calls,
 * "pattern too complex"), as in Lua, so no pattern can exhaust the C stack.
 *
 * Owns: the four functions, and their installation in a state. */
#ifndef TL_LPATTERN_H
#define TL_LPATTERN_H

#include <lua.h>

/* Replaces find, match, gmatch and gsub in L's string library table
 * (package.loaded.string, which is also the global `string` and the string
 * metatable's __index, so s:find(...) uses them too). Call it once the
 * string library is open. */
void tl_lpattern_install(lua_State *L);

#endif
