/* lhealth.h — trace:check(): the health-check figures of a trace
 * (trace/health.h) as a Lua table (times in µs). */
#ifndef TL_LHEALTH_H
#define TL_LHEALTH_H

#include <lua.h>

int tl_l_trace_check(lua_State *L);

#endif
