/* lcritical_path.h — trace:critical_path{step =, all =, overlay =}: the
 * critical path of a step (trace/critical_path.h) as Lua tables (times in
 * µs), optionally written as the overlaid trace (split.h). */
#ifndef TL_LCRITICAL_PATH_H
#define TL_LCRITICAL_PATH_H

#include <lua.h>

int tl_l_trace_critical_path(lua_State *L);

#endif
