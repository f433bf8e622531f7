/* ltable.h — the Lua Table userdata ("tracelens.table"): a view owning one
 * tl_table (a report sheet or a derived table) with columns, rows, cells,
 * filter, sort and CSV output. */
#ifndef TL_LTABLE_H
#define TL_LTABLE_H

#include <lua.h>

#include "../table/table.h"

#define TL_TABLE_MT "tracelens.table"

void tl_ltable_register(lua_State *L);
/* Pushes a userdata owning t (it takes over one reference; when the push
 * fails, out of memory, that reference is dropped before the error). */
void tl_ltable_push(lua_State *L, tl_table *t);
/* The table of a Table userdata at idx, or NULL. */
tl_table *tl_ltable_test(lua_State *L, int idx);

/* trace:table(name [, opts]) and trace:report([opts]) (ltrace.c binds them). */
int tl_l_trace_table(lua_State *L);
int tl_l_trace_report(lua_State *L);
int tl_l_trace_platform(lua_State *L);

#endif
