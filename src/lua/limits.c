#include "limits.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "../util/clock.h"

void *tl_limits_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    tl_limits *lim = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        lim->used -= old;
        return NULL;
    }
    if (lim->limit && nsize > old && lim->used + (nsize - old) > lim->limit) {
        lim->out_of_memory = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p) lim->used = lim->used - old + nsize;
    return p;
}

tl_limits *tl_limits_of(lua_State *L)
{
    void *ud = NULL;
    return lua_getallocf(L, &ud) == tl_limits_alloc ? ud : NULL;
}

void tl_limits_check(lua_State *L)
{
    tl_limits *lim = tl_limits_of(L);
    if (lim && lim->deadline > 0 && tl_now_s() > lim->deadline) {
        lim->timed_out = 1;
        luaL_error(L, "time limit exceeded");
    }
}

static void time_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    tl_limits_check(L);
}

void tl_limits_install_hook(lua_State *L)
{
    lua_sethook(L, time_hook, LUA_MASKCOUNT, 10000);
}
