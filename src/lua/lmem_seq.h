/* lmem_seq.h — trace:kernel_sequences(), trace:memcpy_summary() and
 * trace:memory_timeline(): trace/kernel_ngrams.h, trace/copies.h (judged as
 * report/sheets_mem_seq.h judges them) and trace/mem_timeline.h as Lua
 * tables (times in µs, bytes as integers). */
#ifndef TL_LMEM_SEQ_H
#define TL_LMEM_SEQ_H

#include <lua.h>

int tl_l_trace_kernel_sequences(lua_State *L);
/* Pushes the array trace:kernel_sequences() returns for sequences k of t
 * (the report's, job:kernel_sequences(): ltable.c). */
struct tl_trace;
struct tl_kernel_ngrams;
void tl_l_push_kernel_ngrams(lua_State *L, const struct tl_trace *t, const struct tl_kernel_ngrams *k);
int tl_l_trace_memcpy_summary(lua_State *L);
int tl_l_trace_memory_timeline(lua_State *L);

#endif
