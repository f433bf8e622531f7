/* literation.h — the Lua face of iteration.h: trace:iterations([{generic =
 * true}]) (the iteration annotations of a serving trace, parsed, with their
 * GPU busy time; with generic, the repeating blocks of the call tree when
 * there is no annotation) and tl.steady_state(iterations, opts) (the splitter's steady-state
 * regions and window). Owns nothing beyond the Lua values it returns. */
#ifndef TL_LITERATION_H
#define TL_LITERATION_H

#include <lua.h>

int tl_l_trace_iterations(lua_State *L);
int tl_l_steady_state(lua_State *L);

#endif
