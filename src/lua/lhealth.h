/* lhealth.h — trace:check(): the health-check figures of a trace
 * (trace/health.h) as a Lua table (times in µs); trace:unlinked_gpu();
 * trace:host_calls(). */
#ifndef TL_LHEALTH_H
#define TL_LHEALTH_H

#include <lua.h>

int tl_l_trace_check(lua_State *L);
/* trace:unlinked_gpu(): the GPU events no launch links to, grouped by
 * (category, name) (trace/health.h tl_unlinked_gpu; times in ns). */
int tl_l_trace_unlinked_gpu(lua_State *L);
/* trace:host_calls(): the runtime calls inside the ops that take more than
 * 5x their GPU time on the host, by kind (trace/host_calls.h; times in µs). */
int tl_l_trace_host_calls(lua_State *L);

#endif
