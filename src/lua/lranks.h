/* lranks.h — tl.ranks: the multi-rank collective report (src/ranks/) from
 * Lua, with the per-rank step and GPU-busy figures the orchestrator's
 * multi-rank section needs (docs/ranks.md "From Lua"). Owns nothing after
 * it returns. */
#ifndef TL_LRANKS_H
#define TL_LRANKS_H

#include <lua.h>

/* Sets tl.ranks on the table at the top of the stack. */
void tl_lranks_register(lua_State *L);

#endif
