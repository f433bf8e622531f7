/* lmem_seq.h — trace:kernel_sequences(), trace:memcpy_summary() and
 * trace:memory_timeline(): trace/kernel_ngrams.h, trace/copies.h (judged as
 * report/sheets_mem_seq.h judges them) and trace/mem_timeline.h as Lua
 * tables (times in µs, bytes as integers). */
#ifndef TL_LMEM_SEQ_H
#define TL_LMEM_SEQ_H

#include <lua.h>

int tl_l_trace_kernel_sequences(lua_State *L);
int tl_l_trace_memcpy_summary(lua_State *L);
int tl_l_trace_memory_timeline(lua_State *L);

#endif
