/* lregex.h — `tl.re`: Python-`re`-style regular expressions for Lua, on PCRE2.
 * Owns the "tracelens.regex" userdata (a compiled pcre2_code, freed by __gc)
 * and the per-state cache of tl.re.search/find's compiled patterns. Patterns
 * are UTF-8 with Unicode \d \w \b (as Python's str patterns); invalid UTF-8 in
 * a subject never matches inside the bad bytes but is not an error. */
#ifndef TL_LREGEX_H
#define TL_LREGEX_H

#include <lua.h>

/* Pushes the tl.re table (compile, search, test, findall, gsub, escape). */
void tl_lregex_push(lua_State *L);

#endif
