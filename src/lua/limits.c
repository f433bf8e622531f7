#include "limits.h"

#include <lauxlib.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ltrace.h"
#include "../util/clock.h"

enum { HOOK_COUNT = 10000, MOVE_CHUNK = 8192 };

#define CHARGE_MT "tracelens.charge"
#define CHARGES_KEY "tracelens.charges"

/* ------------------------------------------------------------ records */

tl_limits *tl_limits_new(tl_limits *parent, double now, double timeout_s, size_t limit)
{
    tl_limits *lim = calloc(1, sizeof *lim);
    if (!lim) return NULL;
    atomic_init(&lim->used, 0);
    atomic_init(&lim->refs, 1);
    lim->limit = limit;
    double deadline = timeout_s > 0 ? now + timeout_s : 0;
    if (parent && parent->deadline > 0 && (deadline == 0 || parent->deadline < deadline)) deadline = parent->deadline;
    lim->deadline = deadline;
    if (deadline > 0) {
        double budget = deadline > now ? deadline - now : 0;
        double grace = TL_LIMITS_GRACE_FRACTION * budget;
        if (grace < TL_LIMITS_GRACE_MIN_S) grace = TL_LIMITS_GRACE_MIN_S;
        lim->abandon_at = deadline + grace;
        /* a nested task stuck in C is given up on before its caller is */
        if (parent && parent->abandon_at > 0) {
            double cap = parent->deadline + (parent->abandon_at - parent->deadline) / 2;
            if (cap < lim->abandon_at) lim->abandon_at = cap;
        }
    }
    if (parent) {
        tl_limits_retain(parent);
        lim->parent = parent;
    }
    return lim;
}

void tl_limits_retain(tl_limits *lim)
{
    if (lim) atomic_fetch_add(&lim->refs, 1);
}

void tl_limits_release(tl_limits *lim)
{
    while (lim && atomic_fetch_sub(&lim->refs, 1) == 1) {
        tl_limits *parent = lim->parent;
        free(lim);
        lim = parent;
    }
}

/* ------------------------------------------------------------ memory */

int tl_limits_charge(tl_limits *lim, size_t n)
{
    for (tl_limits *l = lim; l; l = l->parent) {
        size_t before = atomic_fetch_add(&l->used, n), after = before + n;
        if (l->limit && (after < before || after > l->limit)) {
            atomic_fetch_sub(&l->used, n);
            for (tl_limits *u = lim; u != l; u = u->parent) atomic_fetch_sub(&u->used, n);
            lim->hit = l->limit;
            return -1;
        }
    }
    return 0;
}

void tl_limits_uncharge(tl_limits *lim, size_t n)
{
    for (tl_limits *l = lim; l; l = l->parent) atomic_fetch_sub(&l->used, n);
}

size_t tl_limits_left(const tl_limits *lim)
{
    size_t left = SIZE_MAX;
    for (const tl_limits *l = lim; l; l = l->parent) {
        if (!l->limit) continue;
        size_t used = atomic_load(&l->used);
        size_t here = used >= l->limit ? 0 : l->limit - used;
        if (here < left) left = here;
    }
    return left;
}

void *tl_limits_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    tl_limits *lim = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        if (old) tl_limits_uncharge(lim, old);
        return NULL;
    }
    if (nsize > old) {
        if (tl_limits_charge(lim, nsize - old) != 0) return NULL;
        void *p = realloc(ptr, nsize);
        if (!p) tl_limits_uncharge(lim, nsize - old);
        return p;
    }
    /* shrinking: Lua takes it that this never fails; the old block stays
     * valid when realloc says no, and is counted at the size Lua knows */
    void *p = realloc(ptr, nsize);
    tl_limits_uncharge(lim, old - nsize);
    return p ? p : ptr;
}

tl_limits *tl_limits_of(lua_State *L)
{
    void *ud = NULL;
    return lua_getallocf(L, &ud) == tl_limits_alloc ? ud : NULL;
}

static double mb(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

int tl_limits_raise(lua_State *L, const char *fmt, ...)
{
    char buf[5120]; /* room for a path (PATH_MAX) and the words around it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return luaL_error(L, "%s", buf);
}

void tl_limits_need(lua_State *L, size_t n, const char *what)
{
    tl_limits *lim = tl_limits_of(L);
    if (!lim) return;
    size_t left = tl_limits_left(lim);
    if (n > left) {
        lim->out_of_memory = 1;
        tl_limits_raise(L, "memory limit exceeded (%s needs %.1f MB, %.1f MB left)", what, mb(n), mb(left));
    }
}

/* A charge token: uncharges its bytes when collected. */
typedef struct charge {
    tl_limits *lim;
    size_t n;
} charge;

static int charge_gc(lua_State *L)
{
    charge *c = luaL_checkudata(L, 1, CHARGE_MT);
    if (c->lim && c->n) tl_limits_uncharge(c->lim, c->n);
    c->n = 0;
    return 0;
}

void tl_limits_charge_object(lua_State *L, int idx, size_t n, const char *what)
{
    tl_limits *lim = tl_limits_of(L);
    if (!lim) return;
    idx = lua_absindex(L, idx);
    luaL_checkstack(L, 4, "charging memory");
    /* the token is anchored before anything is charged (either step may
     * raise a memory error): charges[object] = token, a weak-keyed table,
     * so the token is collected, and uncharges, once the object is */
    if (lua_getfield(L, LUA_REGISTRYINDEX, CHARGES_KEY) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, CHARGES_KEY);
    }
    charge *c = tl_lua_new_box(L, sizeof *c, CHARGE_MT, charge_gc);
    c->lim = lim;
    lua_pushvalue(L, idx);
    lua_pushvalue(L, -2);
    lua_rawset(L, -4);
    lua_pop(L, 2);
    if (tl_limits_charge(lim, n) != 0) {
        lim->out_of_memory = 1;
        tl_limits_raise(L, "memory limit exceeded (%s, %.1f MB; cap %.1f MB)", what, mb(n), mb(lim->hit));
    }
    c->n = n;
}

/* -------------------------------------------------------------- time */

static void time_hook(lua_State *L, lua_Debug *ar);

/* Raises when the task is over a limit (sticky) or past its deadline. From
 * then on the hook runs before every instruction: the error unwinds through
 * the to-be-closed variables of every frame, and Lua runs each __close in
 * protected mode, the next one after the previous raised; each must stop
 * at its first instruction, before it calls a slow C function (with the
 * usual count each could run one, or 10000 instructions, past the limit). */
static void raise_if_over(lua_State *L, tl_limits *lim)
{
    if (lim->out_of_memory) {
        lua_sethook(L, time_hook, LUA_MASKCOUNT, 1);
        tl_limits_raise(L, "memory limit exceeded (%.1f MB)", mb(lim->hit ? lim->hit : lim->limit));
    }
    if (lim->timed_out || (lim->deadline > 0 && tl_now_s() > lim->deadline)) {
        lim->timed_out = 1;
        lua_sethook(L, time_hook, LUA_MASKCOUNT, 1);
        luaL_error(L, "time limit exceeded");
    }
}

void tl_limits_check(lua_State *L)
{
    tl_limits *lim = tl_limits_of(L);
    if (lim) raise_if_over(L, lim);
}

static void time_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    tl_limits_check(L);
}

void tl_limits_install_hook(lua_State *L)
{
    lua_sethook(L, time_hook, LUA_MASKCOUNT, HOOK_COUNT);
}

/* ------------------------------------------------------------ guards */

/* Lua's memory error: the status says so, or the message does where code
 * in between raised the same object again (a C function that pcalls a
 * callback and re-raises its error turns LUA_ERRMEM into LUA_ERRRUN). */
static int is_memory_error(lua_State *L, int status, int erridx)
{
    static const char text[] = "not enough memory";
    if (status == LUA_ERRMEM) return 1;
    if (lua_type(L, erridx) != LUA_TSTRING) return 0;
    size_t n, k = sizeof text - 1;
    const char *s = lua_tolstring(L, erridx, &n);
    return n >= k && memcmp(s + n - k, text, k) == 0;
}

void tl_limits_after_catch(lua_State *L, int status, int erridx)
{
    tl_limits *lim = tl_limits_of(L);
    if (!lim) return;
    if (status != LUA_OK && status != LUA_YIELD && is_memory_error(L, status, lua_absindex(L, erridx)))
        lim->out_of_memory = 1;
    raise_if_over(L, lim);
}

/* The end of a guarded pcall/xpcall (also its continuation after a yield):
 * `extra` values below the results are not returned. */
static int pcall_done(lua_State *L, int status, lua_KContext extra)
{
    if (status != LUA_OK && status != LUA_YIELD) {
        tl_limits_after_catch(L, status, -1);
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

/* pcall(f, ...): as Lua's, but an error that leaves the task over a limit
 * goes on up. */
static int guard_pcall(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1); /* the first result on success */
    lua_insert(L, 1);
    int status = lua_pcallk(L, lua_gettop(L) - 2, LUA_MULTRET, 0, 0, pcall_done);
    return pcall_done(L, status, 0);
}

/* The message handler of a guarded xpcall: the user's (upvalue 1), unless
 * the task is over a limit. Lua calls a message handler where the error was
 * raised, and the time limit's error is raised by the count hook, inside
 * which hooks are off: a handler run there would loop past any deadline. */
static int guard_handler(lua_State *L)
{
    tl_limits *lim = tl_limits_of(L);
    if (lim && (lim->out_of_memory || lim->timed_out || (lim->deadline > 0 && tl_now_s() > lim->deadline))) {
        if (!lim->out_of_memory) lim->timed_out = 1;
        return 1; /* the error as it is */
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/* xpcall(f, msgh, ...): the same, msgh run only while within the limits. */
static int guard_xpcall(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guard_handler, 1);
    lua_replace(L, 2);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2); /* f, msgh, true, f, args... */
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, pcall_done);
    return pcall_done(L, status, 2);
}

/* setmetatable(t, mt): refuses a metatable with a __gc field (finalizers
 * run with hooks off: a loop there would outlive any deadline). Lua marks
 * a table for finalization only when its metatable has __gc at this call,
 * so adding the field later gives no finalizer. */
static int guard_setmetatable(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        int has = lua_rawget(L, 2) != LUA_TNIL;
        lua_pop(L, 1);
        if (has)
            return luaL_error(L, "setmetatable: __gc metamethods are not allowed in sandboxed states "
                                 "(rules and analyzers run no finalizers)");
    }
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 2, 1);
    return 1;
}

/* getmetatable(v): nil for a userdata whose metatable would come back as a
 * table (one without a __metatable field): the metatables of the C types
 * are not the task's to change (a __gc put there would run with hooks off
 * when the state closes). */
static int guard_getmetatable(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    if (lua_type(L, 1) == LUA_TUSERDATA && lua_istable(L, -1)) lua_pushnil(L);
    return 1;
}

/* table.move(a1, f, e, t [, a2]): Lua's, run a chunk at a time with the
 * time limit checked in between (one call could otherwise loop over 2^62
 * absent elements without allocating anything). */
static int guard_move(lua_State *L)
{
    lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3), t = luaL_checkinteger(L, 4);
    int dst = lua_isnoneornil(L, 5) ? 1 : 5;
    lua_settop(L, 5);
    if (e < f || (lua_Unsigned)e - (lua_Unsigned)f < MOVE_CHUNK) { /* small: one call does it all */
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_insert(L, 1);
        lua_call(L, 5, 1);
        return 1;
    }
    luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
    luaL_argcheck(L, t <= LUA_MAXINTEGER - (e - f), 4, "destination wrap around");
    /* the same table with the destination inside the source, after its
     * start: elements must go last first, so the chunks do too */
    int backward = t > f && t <= e && (dst == 1 || lua_compare(L, 1, dst, LUA_OPEQ));
    lua_Integer count = e - f + 1, done = 0; /* count >= MOVE_CHUNK: no overflow (checked above) */
    while (done < count) {
        lua_Integer k = count - done < MOVE_CHUNK ? count - done : MOVE_CHUNK;
        lua_Integer from = backward ? e - done - k + 1 : f + done;
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_pushvalue(L, 1);
        lua_pushinteger(L, from);
        lua_pushinteger(L, from + k - 1);
        lua_pushinteger(L, t + (from - f));
        lua_pushvalue(L, dst);
        lua_call(L, 5, 0);
        done += k;
        tl_limits_check(L);
    }
    lua_pushvalue(L, dst);
    return 1;
}

/* Calls upvalue 1 (Lua's function) with the arguments as they are. */
static int call_original(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* table.insert(t, pos, v): Lua's, with the time limit checked while the
 * elements above pos are shifted up: a __len can claim 2^62 of them, and
 * Lua's loop over absent elements allocates nothing and runs no Lua code
 * (no hook). Other forms (no pos: no loop; not a table: Lua's checks)
 * are Lua's own. */
static int guard_insert(lua_State *L)
{
    if (lua_gettop(L) != 3 || lua_type(L, 1) != LUA_TTABLE) return call_original(L);
    lua_Integer e = (lua_Integer)((lua_Unsigned)luaL_len(L, 1) + 1u); /* first empty element */
    lua_Integer pos = luaL_checkinteger(L, 2);
    luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2, "position out of bounds");
    lua_Integer steps = 0;
    for (lua_Integer i = e; i > pos; i--) {
        lua_geti(L, 1, i - 1);
        lua_seti(L, 1, i); /* t[i] = t[i - 1] */
        if (++steps % MOVE_CHUNK == 0) tl_limits_check(L);
    }
    lua_seti(L, 1, pos); /* t[pos] = v */
    return 0;
}

/* table.remove(t [, pos]): Lua's, with the time limit checked while the
 * elements above pos are shifted down (the same loop as insert's). */
static int guard_remove(lua_State *L)
{
    if (lua_type(L, 1) != LUA_TTABLE) return call_original(L);
    lua_Integer size = luaL_len(L, 1);
    lua_Integer pos = luaL_optinteger(L, 2, size);
    if (pos != size) /* a pos given: in [1, size + 1] (Lua 5.4 names argument 1) */
        luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 1, "position out of bounds");
    lua_geti(L, 1, pos); /* the result: t[pos] */
    lua_Integer steps = 0;
    for (; pos < size; pos++) {
        lua_geti(L, 1, pos + 1);
        lua_seti(L, 1, pos); /* t[pos] = t[pos + 1] */
        if (++steps % MOVE_CHUNK == 0) tl_limits_check(L);
    }
    lua_pushnil(L);
    lua_seti(L, 1, pos); /* t[pos] = nil */
    return 1;
}

/* string.rep(s, n [, sep]): Lua's, except that an empty result (s and sep
 * empty) is returned at once: Lua's loop would run n times (up to 2^63)
 * copying nothing, without a look at the clock. A longer result is
 * allocated first (the memory cap bounds it), so its loop is bounded too. */
static int guard_rep(lua_State *L)
{
    size_t l, lsep = 0;
    luaL_checklstring(L, 1, &l);
    luaL_checkinteger(L, 2);
    luaL_optlstring(L, 3, "", &lsep);
    if (l == 0 && lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    return call_original(L);
}

/* Replaces tbl[name] (tbl at idx) by fn with the old value as upvalue 1. */
static void wrap_field(lua_State *L, int idx, const char *name, lua_CFunction fn)
{
    idx = lua_absindex(L, idx);
    lua_getfield(L, idx, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, idx, name);
}

void tl_limits_install_guards(lua_State *L)
{
    lua_pushglobaltable(L);
    lua_pushcfunction(L, guard_pcall);
    lua_setfield(L, -2, "pcall");
    lua_pushcfunction(L, guard_xpcall);
    lua_setfield(L, -2, "xpcall");
    wrap_field(L, -1, "setmetatable", guard_setmetatable);
    wrap_field(L, -1, "getmetatable", guard_getmetatable);
    lua_pop(L, 1);
    if (lua_getglobal(L, "table") == LUA_TTABLE) {
        wrap_field(L, -1, "move", guard_move);
        wrap_field(L, -1, "insert", guard_insert);
        wrap_field(L, -1, "remove", guard_remove);
    }
    lua_pop(L, 1);
    if (lua_getglobal(L, "string") == LUA_TTABLE) wrap_field(L, -1, "rep", guard_rep); /* also ("x"):rep */
    lua_pop(L, 1);
}
