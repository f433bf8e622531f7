/* ltable.h — the Lua Table userdata ("tracelens.table"): a view owning one
 * tl_table (a report sheet or a derived table) with columns, rows, cells,
 * filter, sort and CSV output (group_by/agg, join and preview in
 * ltable_ops.c). */
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

/* The column of t named name, also under its ASCII alias ("(us)" for
 * "(µs)"); -1 when none. */
long tl_ltable_col(const tl_table *t, const char *name);
/* Methods of ltable_ops.c (registered with the Table class). */
int tl_l_table_group_by(lua_State *L);
int tl_l_table_join(lua_State *L);
int tl_l_table_preview(lua_State *L);
void tl_ltable_ops_register(lua_State *L);

/* trace:table(name [, opts]) and trace:report([opts]) (ltrace.c binds them). */
int tl_l_trace_table(lua_State *L);
int tl_l_trace_report(lua_State *L);
int tl_l_trace_platform(lua_State *L);

#endif
