/* lreport.h — tl.write_report: the sheets of a report (the table
 * trace:report returns) written as CSVs and an xlsx, at once or on a thread
 * of their own (a job userdata, "tracelens.report_job", whose :wait() says
 * how the write went). */
#ifndef TL_LREPORT_H
#define TL_LREPORT_H

#include <lua.h>

/* Sets tl.write_report on the table at the top of the stack. */
void tl_lreport_register(lua_State *L);

#endif
