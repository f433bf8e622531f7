/* lreport.h — tl.write_report: the sheets of a report (the table
 * trace:report returns) written as CSVs and an xlsx, at once or on a thread
 * of their own (a job userdata, "tracelens.report_job", whose :wait() says
 * how the write went); the Lua form of a sheet list (trace:report,
 * tl.compare). */
#ifndef TL_LREPORT_H
#define TL_LREPORT_H

#include <lua.h>

#include "../report/report.h"

/* Sets tl.write_report on the table at the top of the stack. */
void tl_lreport_register(lua_State *L);

/* Pushes the Lua form of a sheet list, {name = Table, ..., __order = {names},
 * __empty_as_newline = {name = true}}, taking the tables over (s is freed,
 * also when a Lua error, out of memory, is raised). */
void tl_lreport_push_sheets(lua_State *L, tl_sheets *s);

#endif
