/* lcompare.h — tl.compare: perf reports (CSV directories or .xlsx
 * workbooks) compared with the first, as `tracelens compare` does
 * (compare.h), the sheets returned as Tables and, when asked, written. */
#ifndef TL_LCOMPARE_H
#define TL_LCOMPARE_H

#include <lua.h>

/* Sets tl.compare on the table at the top of the stack. */
void tl_lcompare_register(lua_State *L);

#endif
