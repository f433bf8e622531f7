/* parallel.c — tl.parallel: tasks in their own sandboxed lua_State on a
 * pool of threads. Values cross between states as a plain C tree (tl_xval):
 * nil, booleans, numbers, strings, tables of those, trace handles and event
 * views (which carry a retained tl_trace*). Each task has an instruction-
 * count hook enforcing a wall-clock limit and an allocator with a memory
 * cap; one task's failure never stops the others. */
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "limits.h"
#include "ltable.h"
#include "ltrace.h"
#include "../util/vec.h"
#include "../util/clock.h"

enum { X_NIL, X_BOOL, X_INT, X_NUM, X_STR, X_TABLE, X_TRACE, X_EVENT, X_LIGHTNULL, X_SHEET };
enum { MAX_XDEPTH = 100 };

typedef struct xval {
    int kind;
    union {
        int b;
        lua_Integer i;
        lua_Number n;
        struct { char *s; size_t len; } s;
        struct { struct xval *kv; size_t n; } t; /* kv[2k] key, kv[2k+1] value */
        struct { tl_trace *t; uint32_t uid; } tr;
        tl_table *sheet;   /* a Table userdata: shared, read-only */
    } u;
} xval;

static void xval_free(xval *v)
{
    switch (v->kind) {
    case X_STR: free(v->u.s.s); break;
    case X_TABLE:
        for (size_t i = 0; i < 2 * v->u.t.n; i++) xval_free(&v->u.t.kv[i]);
        free(v->u.t.kv);
        break;
    case X_TRACE:
    case X_EVENT: tl_trace_release(v->u.tr.t); break;
    case X_SHEET: tl_table_free(v->u.sheet); break;
    default: break;
    }
    v->kind = X_NIL;
}

/* Copies the Lua value at idx into *v. Returns NULL or an error message. */
static const char *xval_from_lua(lua_State *L, int idx, xval *v, int depth)
{
    idx = lua_absindex(L, idx);
    memset(v, 0, sizeof *v);
    switch (lua_type(L, idx)) {
    case LUA_TNIL: v->kind = X_NIL; return NULL;
    case LUA_TBOOLEAN: v->kind = X_BOOL; v->u.b = lua_toboolean(L, idx); return NULL;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) v->kind = X_INT, v->u.i = lua_tointeger(L, idx);
        else v->kind = X_NUM, v->u.n = lua_tonumber(L, idx);
        return NULL;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, idx, &n);
        v->kind = X_STR;
        v->u.s.s = tl_xmalloc(n + 1);
        memcpy(v->u.s.s, s, n + 1);
        v->u.s.len = n;
        return NULL;
    }
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, idx) == NULL) {
            v->kind = X_LIGHTNULL;
            return NULL;
        }
        return "cannot pass a light userdata between states";
    case LUA_TUSERDATA: {
        tl_trace *t = tl_ltrace_test(L, idx);
        uint32_t uid;
        if (t) {
            v->kind = X_TRACE;
            v->u.tr.t = t;
            tl_trace_retain(t);
            return NULL;
        }
        if (tl_lev_test(L, idx, &t, &uid)) {
            v->kind = X_EVENT;
            v->u.tr.t = t;
            v->u.tr.uid = uid;
            tl_trace_retain(t);
            return NULL;
        }
        tl_table *sheet = tl_ltable_test(L, idx);
        if (sheet) {
            v->kind = X_SHEET;
            v->u.sheet = sheet;
            tl_table_retain(sheet);
            return NULL;
        }
        return "cannot pass this userdata between states (only traces, events and Tables)";
    }
    case LUA_TTABLE: {
        if (depth >= MAX_XDEPTH) return "table nested too deeply (or cyclic) to pass between states";
        if (!lua_checkstack(L, 4)) return "stack overflow while copying a table";
        v->kind = X_TABLE;
        size_t cap = 0;
        lua_pushnil(L);
        while (lua_next(L, idx)) {
            TL_GROW(v->u.t.kv, cap, 2 * v->u.t.n + 2);
            xval *kv = &v->u.t.kv[2 * v->u.t.n];
            const char *e = xval_from_lua(L, -2, &kv[0], depth + 1);
            if (!e) {
                e = xval_from_lua(L, -1, &kv[1], depth + 1);
                if (e) xval_free(&kv[0]);
            }
            if (e) {
                lua_pop(L, 2);
                xval_free(v);
                return e;
            }
            v->u.t.n++;
            lua_pop(L, 1);
        }
        return NULL;
    }
    default: return "cannot pass a function or thread between states";
    }
}

static void xval_push(lua_State *L, const xval *v)
{
    luaL_checkstack(L, 4, "copying a value");
    switch (v->kind) {
    case X_NIL: lua_pushnil(L); break;
    case X_BOOL: lua_pushboolean(L, v->u.b); break;
    case X_INT: lua_pushinteger(L, v->u.i); break;
    case X_NUM: lua_pushnumber(L, v->u.n); break;
    case X_STR: lua_pushlstring(L, v->u.s.s, v->u.s.len); break;
    case X_LIGHTNULL: lua_pushlightuserdata(L, NULL); break;
    case X_TRACE: tl_ltrace_push(L, v->u.tr.t); break;
    case X_EVENT: tl_lev_push(L, v->u.tr.t, v->u.tr.uid); break;
    case X_SHEET:
        tl_table_retain(v->u.sheet);
        tl_ltable_push(L, v->u.sheet);
        break;
    case X_TABLE:
        lua_createtable(L, 0, (int)v->u.t.n);
        for (size_t i = 0; i < v->u.t.n; i++) {
            xval_push(L, &v->u.t.kv[2 * i]);
            xval_push(L, &v->u.t.kv[2 * i + 1]);
            lua_rawset(L, -3);
        }
        break;
    }
}

/* ------------------------------------------------------------- tasks */

typedef struct task {
    char *code, *script, *name;
    xval args;          /* array table, or nil */
    /* results */
    int ok;
    xval value;
    char *error, *traceback;
    double seconds, started, finished; /* monotonic clock */
} task;

typedef struct pool {
    task *tasks;
    size_t n;
    atomic_size_t next;
    double timeout;     /* seconds, 0 = none */
    size_t mem_limit;   /* bytes, 0 = none */
    char script_dir[4096];
} pool;

/* Message handler: {message, traceback}. */
static int msgh_table(lua_State *L)
{
    const char *m = tl_lua_error_text(L);
    lua_createtable(L, 2, 0);
    lua_pushstring(L, m);
    lua_rawseti(L, -2, 1);
    luaL_traceback(L, L, NULL, 1);
    lua_rawseti(L, -2, 2);
    return 1;
}

/* Runs inside lua_pcall: builds the sandbox, loads and calls the task. */
static int task_main(lua_State *L)
{
    task *tk = lua_touserdata(L, 1);
    const tl_state_opts *so = lua_touserdata(L, 2);
    lua_settop(L, 0);
    tl_host_fill_state(L, so);
    int st = tk->code ? luaL_loadbufferx(L, tk->code, strlen(tk->code), tk->name ? tk->name : "=task", "t")
                      : luaL_loadfilex(L, tk->script, "t");
    if (st != LUA_OK) return lua_error(L);
    int nargs = 0;
    if (tk->args.kind == X_TABLE) {
        /* positional values 1..n as `...`, the table as the global `arg` */
        xval_push(L, &tk->args);
        lua_pushvalue(L, -1);
        lua_setglobal(L, "arg");
        lua_Integer n = (lua_Integer)luaL_len(L, -1);
        luaL_checkstack(L, (int)n + 4, "too many task arguments");
        int t = lua_gettop(L);
        for (lua_Integer j = 1; j <= n; j++) lua_rawgeti(L, t, j);
        lua_remove(L, t);
        nargs = (int)n;
    }
    lua_call(L, nargs, 1);
    const char *e = xval_from_lua(L, -1, &tk->value, 0);
    if (e) return luaL_error(L, "task result: %s", e);
    tk->ok = 1;
    return 0;
}

static void run_task(pool *P, task *tk)
{
    double t0 = tl_now_s();
    tk->started = t0;
    tl_limits lim = {0, P->mem_limit, P->timeout > 0 ? t0 + P->timeout : 0, 0, 0};
    tl_state_opts so = {.sandboxed = 1, .script_dir = P->script_dir[0] ? P->script_dir : NULL};
    lua_State *L = lua_newstate(tl_limits_alloc, &lim);
    if (!L) {
        tk->error = tl_xstrdup("cannot create a Lua state (memory limit too small?)");
        return;
    }
    tl_limits_install_hook(L);
    lua_pushcfunction(L, msgh_table);
    lua_pushcfunction(L, task_main);
    lua_pushlightuserdata(L, tk);
    lua_pushlightuserdata(L, &so);
    int st = lua_pcall(L, 2, 0, 1);
    if (st != LUA_OK) {
        if (tk->ok) xval_free(&tk->value);
        tk->ok = 0;
        if (lua_istable(L, -1)) {
            lua_rawgeti(L, -1, 1);
            lua_rawgeti(L, -2, 2);
            tk->error = tl_xstrdup(lua_tostring(L, -2) ? lua_tostring(L, -2) : "error");
            tk->traceback = lua_tostring(L, -1) ? tl_xstrdup(lua_tostring(L, -1)) : NULL;
        } else {
            const char *m = lua_tostring(L, -1);
            tk->error = tl_xstrdup(m ? m : "error");
        }
        if (lim.out_of_memory) {
            free(tk->error);
            char buf[128];
            snprintf(buf, sizeof buf, "memory limit exceeded (%zu MB)", lim.limit >> 20);
            tk->error = tl_xstrdup(buf);
        }
    }
    lua_close(L);
    tk->finished = tl_now_s();
    tk->seconds = tk->finished - t0;
}

static void *worker(void *arg)
{
    pool *P = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&P->next, 1);
        if (i >= P->n) break;
        run_task(P, &P->tasks[i]);
    }
    return NULL;
}

static char *opt_string(lua_State *L, int idx, const char *field)
{
    lua_getfield(L, idx, field);
    char *s = lua_isstring(L, -1) ? tl_xstrdup(lua_tostring(L, -1)) : NULL;
    lua_pop(L, 1);
    return s;
}

int tl_l_parallel(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    pool P;
    memset(&P, 0, sizeof P);
    int jobs = 0;
    P.timeout = 0;
    P.mem_limit = 0;
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "jobs");
        jobs = (int)luaL_optinteger(L, -1, 0);
        lua_getfield(L, 2, "timeout");
        P.timeout = luaL_optnumber(L, -1, 0);
        lua_getfield(L, 2, "memory_mb");
        P.mem_limit = (size_t)luaL_optinteger(L, -1, 0) << 20;
        lua_pop(L, 3);
    }
    if (jobs <= 0) {
        lua_getfield(L, LUA_REGISTRYINDEX, "tracelens.jobs");
        jobs = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    if (jobs <= 0) jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (jobs <= 0) jobs = 1;
    lua_getfield(L, LUA_REGISTRYINDEX, "tracelens.script_dir");
    if (lua_isstring(L, -1)) snprintf(P.script_dir, sizeof P.script_dir, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);

    P.n = lua_rawlen(L, 1);
    P.tasks = tl_xcalloc(P.n ? P.n : 1, sizeof *P.tasks);
    const char *err = NULL;
    for (size_t i = 0; i < P.n && !err; i++) {
        task *tk = &P.tasks[i];
        lua_rawgeti(L, 1, (lua_Integer)i + 1);
        if (!lua_istable(L, -1)) {
            err = "each task must be a table {code=STRING | script=PATH, args={...}}";
        } else {
            tk->code = opt_string(L, -1, "code");
            tk->script = opt_string(L, -1, "script");
            tk->name = opt_string(L, -1, "name");
            if (!tk->code == !tk->script) err = "each task needs exactly one of code= or script=";
            lua_getfield(L, -1, "args");
            if (!err && !lua_isnil(L, -1)) {
                if (!lua_istable(L, -1)) err = "task args must be a table";
                else err = xval_from_lua(L, -1, &tk->args, 0);
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    if (!err) {
        if ((size_t)jobs > P.n) jobs = (int)(P.n ? P.n : 1);
        pthread_t *th = tl_xmalloc((size_t)jobs * sizeof *th);
        atomic_init(&P.next, 0);
        int started = 0;
        for (int j = 0; j < jobs; j++)
            if (pthread_create(&th[j], NULL, worker, &P) == 0) started++;
            else break;
        if (!started) worker(&P);
        for (int j = 0; j < started; j++) pthread_join(th[j], NULL);
        free(th);

        lua_createtable(L, (int)P.n, 0);
        for (size_t i = 0; i < P.n; i++) {
            task *tk = &P.tasks[i];
            lua_createtable(L, 0, 4);
            lua_pushboolean(L, tk->ok);
            lua_setfield(L, -2, "ok");
            if (tk->ok) {
                xval_push(L, &tk->value);
                lua_setfield(L, -2, "value");
            } else {
                lua_pushstring(L, tk->error ? tk->error : "error");
                lua_setfield(L, -2, "error");
                if (tk->traceback) {
                    lua_pushstring(L, tk->traceback);
                    lua_setfield(L, -2, "traceback");
                }
            }
            lua_pushnumber(L, tk->seconds);
            lua_setfield(L, -2, "seconds");
            lua_pushnumber(L, tk->started);
            lua_setfield(L, -2, "started");
            lua_pushnumber(L, tk->finished);
            lua_setfield(L, -2, "finished");
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
    }
    for (size_t i = 0; i < P.n; i++) {
        task *tk = &P.tasks[i];
        free(tk->code);
        free(tk->script);
        free(tk->name);
        free(tk->error);
        free(tk->traceback);
        xval_free(&tk->args);
        xval_free(&tk->value);
    }
    free(P.tasks);
    if (err) return luaL_error(L, "tl.parallel: %s", err);
    return 1;
}
