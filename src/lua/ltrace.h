/* ltrace.h — Lua userdata types over a loaded trace: the trace handle
 * ("tracelens.trace") and event views ("tracelens.event"). They hold a
 * retained tl_trace* and never copy event data into Lua tables except on
 * request (ev.args, trace:info()). */
#ifndef TL_LTRACE_H
#define TL_LTRACE_H

#include <lauxlib.h>
#include <lua.h>

#include "../trace/trace.h"

#define TL_TRACE_MT "tracelens.trace"
#define TL_EVENT_MT "tracelens.event"

/* Registers metatable mt (once) for a handle type: methods as __index, gc
 * as __gc, len as __len, tostring as __tostring, and a protected metatable.
 * There is no __close: a handle is released only when collected, so a C
 * function holding its pointer while Lua code runs (a callback, an option
 * table's __index) never sees it freed. */
/* Sets __metatable of the metatable on top of the stack: getmetatable()
 * then returns name, so Lua code cannot reach (and call) __gc, nor change
 * the methods the C functions rely on. */
void tl_lua_protect_metatable(lua_State *L, const char *name);
/* A new userdata of size bytes (zeroed) whose metatable mt (made once per
 * state: __gc = gc, protected) frees what it owns when Lua collects it or an
 * error unwinds past it; left on the stack. */
void *tl_lua_new_box(lua_State *L, size_t size, const char *mt, lua_CFunction gc);
void tl_lua_handle_class(lua_State *L, const char *mt, const luaL_Reg *methods, lua_CFunction gc, lua_CFunction len,
                         lua_CFunction tostring);
/* Registers both metatables in L (idempotent). */
void tl_ltrace_register(lua_State *L);
/* Pushes a handle to t (retains it). */
void tl_ltrace_push(lua_State *L, tl_trace *t);
void tl_lev_push(lua_State *L, tl_trace *t, uint32_t uid);
/* The trace of a handle at idx, or NULL when it is not one. */
tl_trace *tl_ltrace_test(lua_State *L, int idx);
/* The C memory of a loaded trace (columns, args, names, tree): what a task
 * that loads it is charged. */
size_t tl_ltrace_bytes(const tl_trace *t);
/* The trace of the handle at idx; a Lua error when it is not one or is closed. */
tl_trace *tl_ltrace_check(lua_State *L, int idx);
/* The event at idx, or 0 when it is not one. */
int tl_lev_test(lua_State *L, int idx, tl_trace **t, uint32_t *uid);

/* Pushes the Lua value of validated JSON text (objects -> tables, null ->
 * cjson.null, integers beyond int64 -> their decimal string). Nesting
 * deeper than 200 levels is returned as the raw JSON text. When redact is
 * set, values under keys that look like secrets become "<redacted>". */
void tl_push_json(lua_State *L, const char *text, int redact);

/* tl.load, trace:timeline and friends live in ltrace.c; tl.parallel in
 * parallel.c. */
int tl_l_load(lua_State *L);
int tl_l_parallel(lua_State *L);

#endif
