#include "lcompare.h"

#include <lauxlib.h>
#include <string.h>

#include "host.h"
#include "lopts.h"
#include "lreport.h"
#include "../compare/compare.h"
#include "../util/sbuf.h"
#include "../util/vec.h"

/* The strings of the array at idx (raw length and raw reads: kept alive by
 * the array), in a userdata pushed on the stack (freed by the collector,
 * whatever error comes next); NULL, nothing pushed, when nil. */
static const char **strings_of(lua_State *L, int idx, const char *what, size_t *n)
{
    *n = 0;
    if (lua_isnoneornil(L, idx)) return NULL;
    if (!lua_istable(L, idx)) luaL_error(L, "compare: %s must be a list of strings", what);
    idx = lua_absindex(L, idx);
    lua_Unsigned len = lua_rawlen(L, idx);
    if (len > 100000) luaL_error(L, "compare: %s has %I entries (at most 100000)", what, (lua_Integer)len);
    const char **v = lua_newuserdatauv(L, ((size_t)len + 1) * sizeof *v, 0);
    for (size_t i = 0; i < (size_t)len; i++) {
        if (lua_rawgeti(L, idx, (lua_Integer)i + 1) != LUA_TSTRING)
            luaL_error(L, "compare: %s[%I] is not a string", what, (lua_Integer)i + 1);
        v[i] = lua_tostring(L, -1);
        lua_pop(L, 1); /* the list keeps the string */
    }
    *n = (size_t)len;
    return v;
}

/* tl.compare({R1, R2, ...} [, {names = {...}, sheets = {"gpu_timeline", ...},
 * write = DIR, xlsx = true, quiet = true}]) -> the comparison sheets, as
 * trace:report returns a report's: {sheet = Table, ..., __order = {...}}.
 * With write = DIR they are also written as `tracelens compare -o DIR` writes
 * them (DIR/comparison.xlsx unless xlsx = false, DIR/comparison_csvs/). */
static int l_compare(lua_State *L)
{
    /* it reads report files from any path and can write them: not for
     * rules and analyzers */
    tl_lua_refuse_in_sandbox(L, "tl.compare");
    lua_settop(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    int opts = lua_istable(L, 2) ? 2 : 0;
    unsigned sheets = TL_CMP_ALL;
    const char *write_dir = NULL;
    int xlsx = 1, quiet = 1;
    if (opts) {
        lua_getfield(L, opts, "names");
        lua_getfield(L, opts, "sheets");
        if (lua_getfield(L, opts, "write") != LUA_TNIL && !lua_isstring(L, -1))
            return luaL_error(L, "compare: write must be a directory");
        write_dir = lua_tostring(L, -1); /* names, sheets, write stay at 3, 4, 5 */
        xlsx = tl_lopt_bool(L, opts, "xlsx", 1);
        quiet = tl_lopt_bool(L, opts, "quiet", 1);
        if (!lua_isnil(L, 4)) {
            size_t ns;
            const char **words = strings_of(L, 4, "sheets", &ns);
            sheets = 0;
            for (size_t i = 0; i < ns; i++) {
                unsigned bit = tl_compare_sheet_bit(words[i]);
                if (!bit)
                    return luaL_error(L, "compare: unknown sheet group '%s' (gpu_timeline, ops_summary, "
                                         "kernel_summary, ops_all, roofline, all)", words[i]);
                sheets |= bit;
            }
        }
    }
    size_t nr, nn = 0;
    const char **reports = strings_of(L, 1, "reports", &nr);
    if (nr < 2) return luaL_error(L, "compare: at least two reports are needed (the first is the baseline)");
    const char **names = opts ? strings_of(L, 3, "names", &nn) : NULL;
    if (names && nn != nr) return luaL_error(L, "compare: %d names for %d reports", (int)nn, (int)nr);
    tl_compare_opts o = {reports, nr, names, sheets, quiet};
    tl_sheets s;
    tl_error err;
    int rc = tl_compare_build(&o, &s, &err);
    if (rc != 0) return luaL_error(L, "%s", err.msg);
    if (write_dir) {
        tl_sbuf xp, cp;
        tl_sb_init(&xp);
        tl_sb_init(&cp);
        tl_sb_printf(&xp, "%s/comparison.xlsx", write_dir);
        tl_sb_printf(&cp, "%s/comparison_csvs", write_dir);
        tl_compare_out co = {xlsx ? xp.s : NULL, cp.s, 1};
        rc = tl_compare_write(&s, &co, &err);
        tl_sb_free(&xp);
        tl_sb_free(&cp);
        if (rc != 0) {
            tl_sheets_free(&s);
            return luaL_error(L, "%s", err.msg);
        }
    }
    tl_lreport_push_sheets(L, &s);
    return 1;
}

void tl_lcompare_register(lua_State *L)
{
    lua_pushcfunction(L, l_compare);
    lua_setfield(L, -2, "compare");
}
