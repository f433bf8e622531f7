/* lrender.h — the rendering functions of the tracelens module:
 * tl.chart.stacked_bar(path, spec) (render/png_chart.h) and tl.base64(s)
 * (render/base64.h). Owns no state; fonts are opened per call. Both exist in
 * every state, tl.parallel tasks included: stacked_bar writes the one file it
 * is given, like Table:write_csv. */
#ifndef TL_LRENDER_H
#define TL_LRENDER_H

#include <lua.h>

/* Adds `chart` and `base64` to the table at the top of the stack. */
void tl_lrender_register(lua_State *L);

#endif
