/* lanalysis.h — trace methods of the system-tier analyses (analysis-layer
 * spec §3.5, §3.6): the C walks of src/analysis/ returned as plain Lua
 * tables for lua/tracelens/multi_kernel.lua and fusion.lua to shape.
 * Durations keep the reference's number kind: a Lua integer when every
 * duration summed was a JSON integer (and for an empty sum), else a float. */
#ifndef TL_LANALYSIS_H
#define TL_LANALYSIS_H

#include <lua.h>

/* trace:multi_kernel_stats() */
int tl_l_trace_multi_kernel_stats(lua_State *L);
/* trace:fusion_modules() */
int tl_l_trace_fusion_modules(lua_State *L);
/* trace:fusion_siblings() */
int tl_l_trace_fusion_siblings(lua_State *L);
/* trace:fusion_diff_nodes(diff_stats, max_n1) */
int tl_l_trace_fusion_diff_nodes(lua_State *L);
/* trace:kernel_slices(nodes, from, lo, hi), trace:dur_us(uid): the GPU
 * events fusion candidates claim, and their durations */
int tl_l_trace_kernel_slices(lua_State *L);
int tl_l_trace_dur_us(lua_State *L);
/* tl.uid_repeats(lists), tl.uid_claims(lists): the GPU events fusion
 * candidates share (lua/tracelens/fusion/overlap.lua) */
int tl_l_uid_repeats(lua_State *L);
int tl_l_uid_claims(lua_State *L);
/* trace:durs_us(uids): trace:dur_us of each; tl.join_ints(list, sep) */
int tl_l_trace_durs_us(lua_State *L);
int tl_l_join_ints(lua_State *L);

#endif
