/* lsteps.h — trace:steps(): the per-step breakdown (trace/steps.h) as Lua
 * tables (times in µs). */
#ifndef TL_LSTEPS_H
#define TL_LSTEPS_H

#include <lua.h>

int tl_l_trace_steps(lua_State *L);

#endif
