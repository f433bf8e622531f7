/* lgpu_stats.h — trace:idle_breakdown(), trace:queue_length(),
 * trace:launch_stats() and trace:annotation_times(): trace/idle.h,
 * trace/launch_stats.h and trace/annot_times.h as Lua tables (times in µs). */
#ifndef TL_LGPU_STATS_H
#define TL_LGPU_STATS_H

#include <lua.h>

int tl_l_trace_idle_breakdown(lua_State *L);
int tl_l_trace_launch_stats(lua_State *L);
int tl_l_trace_annotation_times(lua_State *L);
int tl_l_trace_queue_length(lua_State *L);

#endif
