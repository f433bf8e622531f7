/* parallel.c — tl.parallel: tasks in their own sandboxed lua_State on a
 * pool of threads, each under the limits of limits.h (a deadline and a
 * memory cap; a task started by a task inherits what is left of its
 * caller's). One task's failure never stops the others.
 *
 * Values cross between states as a C graph (xgraph): nil, booleans,
 * numbers, strings, tables of those, trace handles and event views (which
 * carry a retained tl_trace*) and Tables (shared, retained). A table or
 * string reached twice is copied once (sharing and cycles are kept), and
 * every byte of a copy is charged to the memory cap of the task it is made
 * for (the caller's for task arguments, the task's for its result).
 *
 * The watchdog: the calling thread waits for the tasks and gives up on one
 * that is still running at its deadline plus a grace (limits.h: 10% of the
 * time limit, at least 1 s): Lua's count hook cannot stop a task inside one
 * C call that never returns. Such a task is reported as "time limit
 * exceeded (stuck in a C function; abandoned)" and its thread is detached
 * and left to itself; a replacement thread runs the tasks still waiting.
 * The pool (tasks, arguments, results) and the task's limits record are
 * reference-counted, so that thread never touches freed memory: if it ever
 * returns it cleans up after itself, and if it does not its state and the
 * pool are leaked on purpose (the thread keeps them reachable; a process
 * exit ends it with everything else). */
#include <errno.h>
#include <lauxlib.h>
#include <lualib.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chunk_cache.h"
#include "host.h"
#include "limits.h"
#include "ltable.h"
#include "ltrace.h"
#include "../util/vec.h"
#include "../util/clock.h"

enum { MAX_JOBS = 1024, CHECK_EVERY = 4096 };
/* memory_mb is below 2^44 (16 EiB in bytes: more than any size_t holds) */
#define MAX_MEMORY_MB 17592186044416.0

/* ------------------------------------------------------------ values */

enum { X_NIL, X_BOOL, X_INT, X_NUM, X_STR, X_TABLE, X_TRACE, X_EVENT, X_LIGHTNULL, X_SHEET };

typedef struct xval {
    int kind;
    union {
        int b;
        lua_Integer i;
        lua_Number n;
        size_t ref;        /* X_STR: index in strs; X_TABLE: index in nodes */
        struct { tl_trace *t; uint32_t uid; } tr;
        tl_table *sheet;   /* a Table userdata: shared, read-only */
    } u;
} xval;

typedef struct xnode {
    xval *kv;              /* kv[2k] key, kv[2k+1] value */
    size_t n, cap;         /* pairs */
} xnode;

typedef struct xstr {
    char *s;
    size_t len;
} xstr;

typedef struct xgraph {
    xval root;
    xnode *nodes;
    size_t nnodes, capnodes;
    xstr *strs;
    size_t nstrs, capstrs;
    size_t bytes;          /* C memory held, charged to lim */
    tl_limits *lim;        /* retained, or NULL */
} xgraph;

static void xval_release(xval *v)
{
    if (v->kind == X_TRACE || v->kind == X_EVENT) tl_trace_release(v->u.tr.t);
    else if (v->kind == X_SHEET) tl_table_free(v->u.sheet);
    v->kind = X_NIL;
}

static void xgraph_free(xgraph *g)
{
    xval_release(&g->root);
    for (size_t k = 0; k < g->nnodes; k++) {
        for (size_t i = 0; i < 2 * g->nodes[k].n; i++) xval_release(&g->nodes[k].kv[i]);
        free(g->nodes[k].kv);
    }
    for (size_t i = 0; i < g->nstrs; i++) free(g->strs[i].s);
    free(g->nodes);
    free(g->strs);
    tl_limits_uncharge(g->lim, g->bytes);
    tl_limits_release(g->lim);
    memset(g, 0, sizeof *g);
}

/* A copy in progress: the graph, and two tables on the source state's
 * stack: memo (table or string -> its index) and pending (node index + 1
 * -> the table whose pairs are still to copy). */
typedef struct xcopy {
    xgraph *g;
    int memo, pending;
    int over;              /* a memory cap refused */
    size_t steps;
} xcopy;

/* realloc for the graph: the growth is charged first (raises when a cap
 * or malloc says no; the graph is consistent at every call). */
static void *xrealloc(lua_State *L, xcopy *c, void *p, size_t oldb, size_t newb)
{
    if (newb > oldb && tl_limits_charge(c->g->lim, newb - oldb) != 0) {
        c->over = 1;
        luaL_error(L, "memory limit exceeded (copying a value between states: %zu bytes so far)", c->g->bytes);
    }
    void *q = realloc(p, newb);
    if (!q) {
        tl_limits_uncharge(c->g->lim, newb - oldb);
        luaL_error(L, "out of memory (copying a value between states)");
    }
    c->g->bytes += newb - oldb;
    return q;
}

/* Grows an array of elem-byte items to hold need (doubling). */
static void *xgrow(lua_State *L, xcopy *c, void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t nc = *cap ? *cap : 8;
    while (nc < need) nc *= 2;
    if (nc > SIZE_MAX / elem) luaL_error(L, "value too large to pass between states");
    p = xrealloc(L, c, p, *cap * elem, nc * elem);
    *cap = nc;
    return p;
}

/* The memo's index for the value at idx, or -1. */
static lua_Integer memo_get(lua_State *L, xcopy *c, int idx)
{
    lua_pushvalue(L, idx);
    lua_Integer r = lua_rawget(L, c->memo) == LUA_TNUMBER ? lua_tointeger(L, -1) : -1;
    lua_pop(L, 1);
    return r;
}

static void memo_set(lua_State *L, xcopy *c, int idx, size_t ref)
{
    lua_pushvalue(L, idx);
    lua_pushinteger(L, (lua_Integer)ref);
    lua_rawset(L, c->memo);
}

/* Copies the value at idx into *v (a new table only gets its node here;
 * its pairs are copied when the node's turn comes). Raises on error. */
static void x_value(lua_State *L, xcopy *c, int idx, xval *v)
{
    xgraph *g = c->g;
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
    case LUA_TNIL: v->kind = X_NIL; return;
    case LUA_TBOOLEAN: v->kind = X_BOOL, v->u.b = lua_toboolean(L, idx); return;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) v->kind = X_INT, v->u.i = lua_tointeger(L, idx);
        else v->kind = X_NUM, v->u.n = lua_tonumber(L, idx);
        return;
    case LUA_TSTRING: {
        lua_Integer r = memo_get(L, c, idx);
        if (r < 0) {
            size_t len;
            const char *s = lua_tolstring(L, idx, &len);
            if (len == SIZE_MAX) luaL_error(L, "string too long to pass between states");
            memo_set(L, c, idx, g->nstrs);
            g->strs = xgrow(L, c, g->strs, &g->capstrs, g->nstrs + 1, sizeof *g->strs);
            char *copy = xrealloc(L, c, NULL, 0, len + 1);
            memcpy(copy, s, len + 1);
            g->strs[g->nstrs].s = copy;
            g->strs[g->nstrs].len = len;
            r = (lua_Integer)g->nstrs++;
        }
        v->kind = X_STR;
        v->u.ref = (size_t)r;
        return;
    }
    case LUA_TTABLE: {
        lua_Integer r = memo_get(L, c, idx);
        if (r < 0) {
            memo_set(L, c, idx, g->nnodes);
            lua_pushvalue(L, idx);
            lua_rawseti(L, c->pending, (lua_Integer)g->nnodes + 1);
            g->nodes = xgrow(L, c, g->nodes, &g->capnodes, g->nnodes + 1, sizeof *g->nodes);
            memset(&g->nodes[g->nnodes], 0, sizeof *g->nodes);
            r = (lua_Integer)g->nnodes++;
        }
        v->kind = X_TABLE;
        v->u.ref = (size_t)r;
        return;
    }
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, idx) == NULL) {
            v->kind = X_LIGHTNULL;
            return;
        }
        luaL_error(L, "cannot pass a light userdata between states");
        return;
    case LUA_TUSERDATA: {
        tl_trace *t = tl_ltrace_test(L, idx);
        uint32_t uid;
        if (t) {
            tl_trace_retain(t);
            v->u.tr.t = t;
            v->kind = X_TRACE;
            return;
        }
        if (tl_lev_test(L, idx, &t, &uid)) {
            tl_trace_retain(t);
            v->u.tr.t = t;
            v->u.tr.uid = uid;
            v->kind = X_EVENT;
            return;
        }
        tl_table *sheet = tl_ltable_test(L, idx);
        if (sheet) {
            tl_table_retain(sheet);
            v->u.sheet = sheet;
            v->kind = X_SHEET;
            return;
        }
        luaL_error(L, "cannot pass this userdata between states (only traces, events and Tables)");
        return;
    }
    default: luaL_error(L, "cannot pass a function or thread between states");
    }
}

/* In a protected call: copy (light userdata) at 1, the value at 2. */
static int copy_main(lua_State *L)
{
    xcopy *c = lua_touserdata(L, 1);
    xgraph *g = c->g;
    lua_newtable(L);
    c->memo = lua_gettop(L);
    lua_newtable(L);
    c->pending = lua_gettop(L);
    x_value(L, c, 2, &g->root);
    /* breadth first, one node after the other: no recursion, so no depth
     * limit; each table's pairs are walked once whatever reaches it */
    for (size_t k = 0; k < g->nnodes; k++) {
        lua_rawgeti(L, c->pending, (lua_Integer)k + 1);
        int t = lua_gettop(L);
        lua_pushnil(L);
        while (lua_next(L, t)) {
            xnode *nd = &g->nodes[k];
            nd->kv = xgrow(L, c, nd->kv, &nd->cap, 2 * (nd->n + 1), sizeof *nd->kv);
            xval *kv = &nd->kv[2 * nd->n];
            kv[0].kind = kv[1].kind = X_NIL;
            nd->n++; /* counted before filled: a raise below leaves nils */
            x_value(L, c, -2, &kv[0]); /* may move g->nodes, not kv */
            x_value(L, c, -1, &kv[1]);
            lua_pop(L, 1);
            if (++c->steps % CHECK_EVERY == 0) tl_limits_check(L);
        }
        lua_pop(L, 1);
    }
    return 0;
}

/* Copies the value at idx of L into *g, charging the copy to lim (may be
 * NULL; retained by the graph). 0, or -1 with *g empty and the message in
 * err (*over set when a memory cap refused). */
static int xgraph_from_lua(lua_State *L, int idx, xgraph *g, tl_limits *lim, char *err, size_t errcap, int *over)
{
    memset(g, 0, sizeof *g);
    tl_limits_retain(lim);
    g->lim = lim;
    xcopy c = {.g = g};
    idx = lua_absindex(L, idx);
    if (!lua_checkstack(L, 8)) {
        snprintf(err, errcap, "stack overflow copying a value between states");
        xgraph_free(g);
        return -1;
    }
    lua_pushcfunction(L, copy_main);
    lua_pushlightuserdata(L, &c);
    lua_pushvalue(L, idx);
    int st = lua_pcall(L, 2, 0, 0);
    if (over) *over = c.over || st == LUA_ERRMEM;
    if (st == LUA_OK) return 0;
    const char *m = lua_tostring(L, -1);
    snprintf(err, errcap, "%s", st == LUA_ERRMEM ? "memory limit exceeded (copying a value between states)"
                                                 : (m ? m : "error copying a value between states"));
    lua_pop(L, 1);
    xgraph_free(g);
    return -1;
}

static void x_push(lua_State *L, const xval *v, int strs, int nodes)
{
    switch (v->kind) {
    case X_NIL: lua_pushnil(L); break;
    case X_BOOL: lua_pushboolean(L, v->u.b); break;
    case X_INT: lua_pushinteger(L, v->u.i); break;
    case X_NUM: lua_pushnumber(L, v->u.n); break;
    case X_STR: lua_rawgeti(L, strs, (lua_Integer)v->u.ref + 1); break;
    case X_TABLE: lua_rawgeti(L, nodes, (lua_Integer)v->u.ref + 1); break;
    case X_LIGHTNULL: lua_pushlightuserdata(L, NULL); break;
    case X_TRACE: tl_ltrace_push(L, v->u.tr.t); break;
    case X_EVENT: tl_lev_push(L, v->u.tr.t, v->u.tr.uid); break;
    case X_SHEET:
        tl_table_retain(v->u.sheet);
        tl_ltable_push(L, v->u.sheet);
        break;
    }
}

static int clamp_int(size_t n) { return n > INT32_MAX ? INT32_MAX : (int)n; }

/* Pushes the value of g onto L: each string and table once, so the copy
 * has the sharing (and cycles) of the original. May raise (memory). */
static void xgraph_push(lua_State *L, const xgraph *g)
{
    luaL_checkstack(L, 8, "copying a value");
    lua_createtable(L, clamp_int(g->nstrs), 0);
    int strs = lua_gettop(L);
    for (size_t i = 0; i < g->nstrs; i++) {
        lua_pushlstring(L, g->strs[i].s, g->strs[i].len);
        lua_rawseti(L, strs, (lua_Integer)i + 1);
    }
    lua_createtable(L, clamp_int(g->nnodes), 0);
    int nodes = lua_gettop(L);
    for (size_t k = 0; k < g->nnodes; k++) {
        const xnode *nd = &g->nodes[k];
        size_t narr = 0;
        for (size_t i = 0; i < nd->n; i++) {
            const xval *key = &nd->kv[2 * i];
            if (key->kind == X_INT && key->u.i >= 1 && (lua_Unsigned)key->u.i <= nd->n) narr++;
        }
        lua_createtable(L, clamp_int(narr), clamp_int(nd->n - narr));
        lua_rawseti(L, nodes, (lua_Integer)k + 1);
    }
    for (size_t k = 0; k < g->nnodes; k++) {
        const xnode *nd = &g->nodes[k];
        lua_rawgeti(L, nodes, (lua_Integer)k + 1);
        for (size_t i = 0; i < nd->n; i++) {
            x_push(L, &nd->kv[2 * i], strs, nodes);
            x_push(L, &nd->kv[2 * i + 1], strs, nodes);
            lua_rawset(L, -3);
        }
        lua_pop(L, 1);
    }
    x_push(L, &g->root, strs, nodes);
    lua_replace(L, strs);
    lua_settop(L, strs);
}

/* ------------------------------------------------------------- tasks */

enum { T_PENDING, T_RUNNING, T_DONE, T_ABANDONED };

typedef struct task {
    char *code, *script, *name;
    xgraph args;            /* an array table, or nil */
    /* results: written by the worker, read by the caller once T_DONE */
    int ok;
    xgraph value;
    char *error, *traceback;
    double finished;
    /* under the pool's lock */
    int state;
    size_t worker;
    double started, abandon_at, abandoned;
} task;

typedef struct pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int refs;        /* the caller and each worker thread */
    task *tasks;
    size_t n;
    size_t next, settled;   /* under mu: tasks claimed; tasks done or abandoned */
    size_t live;            /* under mu: workers that can still claim tasks */
    double timeout;         /* seconds, 0 = none (the caller's deadline still holds) */
    size_t mem_limit;       /* bytes, 0 = none (the caller's cap still holds) */
    tl_limits *caller;      /* the calling task's limits (retained), or NULL */
    tl_chunk_cache *chunks; /* the modules the tasks' states compiled (may be NULL) */
    char script_dir[4096];
} pool;

static void pool_release(pool *P)
{
    if (atomic_fetch_sub(&P->refs, 1) != 1) return;
    for (size_t i = 0; i < P->n; i++) {
        task *tk = &P->tasks[i];
        free(tk->code);
        free(tk->script);
        free(tk->name);
        free(tk->error);
        free(tk->traceback);
        xgraph_free(&tk->args);
        xgraph_free(&tk->value);
    }
    free(P->tasks);
    tl_chunk_cache_free(P->chunks); /* every state that used it is closed: the last reference */
    tl_limits_release(P->caller);
    pthread_cond_destroy(&P->cv);
    pthread_mutex_destroy(&P->mu);
    free(P);
}

/* Message handler: {message, traceback}. Over a limit, the error is raised
 * again in every __close the unwinding runs (thousands of frames can each
 * have one): the traceback of the first raise is kept and given to the
 * others, so each costs no stack walk. */
static int msgh_table(lua_State *L)
{
    static const char key[] = "tracelens.limit_traceback";
    const char *m = tl_lua_error_text(L);
    lua_createtable(L, 2, 0);
    lua_pushstring(L, m);
    lua_rawseti(L, -2, 1);
    const tl_limits *lim = tl_limits_of(L);
    int over = lim && (lim->timed_out || lim->out_of_memory);
    if (over && lua_getfield(L, LUA_REGISTRYINDEX, key) == LUA_TSTRING) {
        lua_rawseti(L, -2, 2);
        return 1;
    }
    if (over) lua_pop(L, 1);
    luaL_traceback(L, L, NULL, 1);
    if (over) {
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, key);
    }
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
    /* the name a sandboxed print prefixes its lines with (host.c) */
    lua_pushstring(L, tk->name ? tk->name : tk->script ? tk->script : "task");
    lua_setfield(L, LUA_REGISTRYINDEX, "tracelens.task_name");
    int st = tk->code ? luaL_loadbufferx(L, tk->code, strlen(tk->code), tk->name ? tk->name : "=task", "t")
                      : luaL_loadfilex(L, tk->script, "t");
    if (st != LUA_OK) return lua_error(L);
    int nargs = 0;
    if (tk->args.root.kind == X_TABLE) {
        /* positional values 1..n as `...`, the table as the global `arg` */
        xgraph_push(L, &tk->args);
        lua_pushvalue(L, -1);
        lua_setglobal(L, "arg");
        lua_Unsigned n = lua_rawlen(L, -1);
        if (n > INT32_MAX / 2) return luaL_error(L, "too many task arguments");
        luaL_checkstack(L, (int)n + 4, "too many task arguments");
        int t = lua_gettop(L);
        for (lua_Unsigned j = 1; j <= n; j++) lua_rawgeti(L, t, (lua_Integer)j);
        lua_remove(L, t);
        nargs = (int)n;
    }
    lua_call(L, nargs, 1);
    char err[256];
    int over = 0;
    if (xgraph_from_lua(L, -1, &tk->value, tl_limits_of(L), err, sizeof err, &over) != 0) {
        if (over) tl_limits_of(L)->out_of_memory = 1;
        return luaL_error(L, "task result: %s", err);
    }
    tk->ok = 1;
    return 0;
}

static int contains(const char *s, const char *what) { return s && strstr(s, what) != NULL; }

/* The error of a failed task, as the caller reads it. */
static void set_error(task *tk, const tl_limits *lim, int status, const char *msg)
{
    char buf[256];
    if ((lim->out_of_memory || status == LUA_ERRMEM) && !contains(msg, "memory limit exceeded")) {
        size_t cap = lim->hit ? lim->hit : lim->limit;
        if (cap)
            snprintf(buf, sizeof buf, "memory limit exceeded (%.1f MB)", (double)cap / (1024.0 * 1024.0));
        else
            snprintf(buf, sizeof buf, "out of memory");
        msg = buf;
    } else if (lim->timed_out && !contains(msg, "time limit exceeded")) {
        msg = "time limit exceeded";
    }
    tk->error = tl_xstrdup(msg ? msg : "error");
}

static void run_task(pool *P, task *tk, tl_limits *lim)
{
    if (!lim) {
        tk->error = tl_xstrdup("out of memory (starting a task)");
        tk->finished = tl_now_s();
        return;
    }
    if (lim->deadline > 0 && tk->started >= lim->deadline) {
        tk->error = tl_xstrdup("time limit exceeded (the caller's time ran out before the task started)");
        tk->finished = tl_now_s();
        tl_limits_release(lim);
        return;
    }
    const char *outer = tl_oom_context_set(tk->name ? tk->name : tk->script ? tk->script : "(unnamed)");
    tl_state_opts so = {.sandboxed = 1, .script_dir = P->script_dir[0] ? P->script_dir : NULL, .chunks = P->chunks};
    lua_State *L = lua_newstate(tl_limits_alloc, lim);
    if (!L) {
        tk->error = tl_xstrdup("cannot create a Lua state (memory limit too small?)");
        tk->finished = tl_now_s();
        tl_limits_release(lim);
        tl_oom_context_set(outer);
        return;
    }
    tl_limits_install_hook(L);
    lua_pushcfunction(L, msgh_table);
    lua_pushcfunction(L, task_main);
    lua_pushlightuserdata(L, tk);
    lua_pushlightuserdata(L, &so);
    int st = lua_pcall(L, 2, 0, 1);
    if (st != LUA_OK) {
        if (tk->ok) xgraph_free(&tk->value);
        tk->ok = 0;
        const char *m = NULL;
        if (lua_istable(L, -1)) {
            lua_rawgeti(L, -1, 1);
            lua_rawgeti(L, -2, 2);
            m = lua_tostring(L, -2);
            if (lua_tostring(L, -1)) tk->traceback = tl_xstrdup(lua_tostring(L, -1));
        } else {
            m = lua_tostring(L, -1);
        }
        if (st != LUA_ERRMEM && m && contains(m, "not enough memory")) st = LUA_ERRMEM;
        set_error(tk, lim, st, m);
    }
    lua_close(L);
    tl_limits_release(lim); /* the result's graph holds its own reference */
    tk->finished = tl_now_s();
    tl_oom_context_set(outer);
}

typedef struct wstart {
    pool *P;
    size_t id;
} wstart;

static void *worker(void *arg)
{
    wstart ws = *(wstart *)arg;
    free(arg);
    pool *P = ws.P;
    int abandoned = 0;
    pthread_mutex_lock(&P->mu);
    while (P->next < P->n) {
        task *tk = &P->tasks[P->next++];
        tk->state = T_RUNNING;
        tk->worker = ws.id;
        tk->started = tl_now_s();
        tl_limits *lim = tl_limits_new(P->caller, tk->started, P->timeout, P->mem_limit);
        tk->abandon_at = lim ? lim->abandon_at : 0;
        pthread_cond_broadcast(&P->cv); /* the watchdog learns the new abandon time */
        pthread_mutex_unlock(&P->mu);
        run_task(P, tk, lim);
        pthread_mutex_lock(&P->mu);
        if (tk->state == T_ABANDONED) { /* given up on: this thread is detached and stops here */
            abandoned = 1;
            break;
        }
        tk->state = T_DONE;
        P->settled++;
        pthread_cond_broadcast(&P->cv);
    }
    if (!abandoned) P->live--; /* (the watchdog counted an abandoned one out already) */
    pthread_mutex_unlock(&P->mu);
    pool_release(P);
    return NULL;
}

/* Starts worker id (under mu); 0 or -1. */
static int start_worker(pool *P, pthread_t *th, size_t id)
{
    wstart *ws = malloc(sizeof *ws);
    if (!ws) return -1;
    ws->P = P;
    ws->id = id;
    atomic_fetch_add(&P->refs, 1);
    if (pthread_create(th, NULL, worker, ws) != 0) {
        atomic_fetch_sub(&P->refs, 1);
        free(ws);
        return -1;
    }
    P->live++;
    return 0;
}

/* Settles the tasks no thread will run (under mu). */
static void fail_pending(pool *P, const char *why)
{
    while (P->next < P->n) {
        task *tk = &P->tasks[P->next++];
        tk->started = tk->finished = tl_now_s();
        tk->error = tl_xstrdup(why);
        tk->state = T_DONE;
        P->settled++;
    }
}

/* Runs the tasks on `jobs` threads and watches them; returns once each is
 * done or abandoned (the threads of abandoned ones detached, the others
 * joined). */
static void run_pool(pool *P, int jobs)
{
    size_t cap = (size_t)jobs + 4, nth = 0, lo = 0;
    pthread_t *th = malloc(cap * sizeof *th);
    unsigned char *stuck = calloc(cap, 1);
    pthread_mutex_lock(&P->mu);
    for (int j = 0; j < jobs && th && stuck; j++, nth++)
        if (start_worker(P, &th[nth], nth) != 0) break;
    while (P->settled < P->n) {
        double now = tl_now_s(), wake = now + 1.0;
        while (lo < P->next && (P->tasks[lo].state == T_DONE || P->tasks[lo].state == T_ABANDONED)) lo++;
        for (size_t i = lo; i < P->next; i++) {
            task *tk = &P->tasks[i];
            if (tk->state != T_RUNNING || tk->abandon_at <= 0) continue;
            if (now < tk->abandon_at) {
                if (tk->abandon_at < wake) wake = tk->abandon_at;
                continue;
            }
            tk->state = T_ABANDONED;
            tk->abandoned = now;
            P->settled++;
            P->live--;
            stuck[tk->worker] = 1;
            if (P->next < P->n && nth == cap) { /* a replacement runs the tasks still waiting */
                pthread_t *th2 = realloc(th, 2 * cap * sizeof *th);
                if (th2) th = th2;
                unsigned char *stuck2 = th2 ? realloc(stuck, 2 * cap) : NULL;
                if (stuck2) {
                    stuck = stuck2;
                    memset(stuck + cap, 0, cap);
                    cap *= 2;
                }
            }
            if (P->next < P->n && nth < cap && start_worker(P, &th[nth], nth) == 0) nth++;
        }
        if (P->live == 0) fail_pending(P, "cannot start a thread to run the task");
        if (P->settled >= P->n) break;
        struct timespec ts;
        ts.tv_sec = (time_t)wake;
        ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
        if (ts.tv_nsec < 0) ts.tv_nsec = 0;
        pthread_cond_timedwait(&P->cv, &P->mu, &ts);
    }
    pthread_mutex_unlock(&P->mu);
    for (size_t j = 0; j < nth; j++) {
        if (stuck[j]) pthread_detach(th[j]);
        else pthread_join(th[j], NULL);
    }
    free(th);
    free(stuck);
}

/* ----------------------------------------------------------- options */

/* opts[k] when it is not nil: a number, else a usage error. */
static int opt_number(lua_State *L, const char *k, double *v)
{
    if (!lua_istable(L, 2)) return 0;
    int ty = lua_getfield(L, 2, k);
    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (ty != LUA_TNUMBER) luaL_error(L, "tl.parallel: %s must be a number (got a %s)", k, lua_typename(L, ty));
    *v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return 1;
}

static int opt_jobs(lua_State *L)
{
    double v;
    if (opt_number(L, "jobs", &v)) {
        if (!(v >= 1 && v <= MAX_JOBS) || v != floor(v))
            luaL_error(L, "tl.parallel: jobs must be an integer from 1 to %d (got %f)", MAX_JOBS, v);
        return (int)v;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "tracelens.jobs");
    lua_Integer jobs = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (jobs <= 0) jobs = sysconf(_SC_NPROCESSORS_ONLN);
    if (jobs <= 0) jobs = 1;
    return jobs > MAX_JOBS ? MAX_JOBS : (int)jobs;
}

/* Seconds, 0 = none given. */
static double opt_timeout(lua_State *L)
{
    double v;
    if (!opt_number(L, "timeout", &v)) return 0;
    if (!(v > 0) || isinf(v))
        luaL_error(L, "tl.parallel: timeout must be a positive, finite number of seconds (got %f)", v);
    return v;
}

/* Bytes, 0 = none given. */
static size_t opt_memory(lua_State *L)
{
    double v;
    if (!opt_number(L, "memory_mb", &v)) return 0;
    double bytes = ceil(v * 1048576.0);
    if (!(v > 0) || !(v < MAX_MEMORY_MB) || !(bytes < 0x1p63) || !(bytes < (double)SIZE_MAX))
        luaL_error(L, "tl.parallel: memory_mb must be a positive number of megabytes below 2^43 (got %f)", v);
    return (size_t)bytes;
}

static char *opt_string(lua_State *L, int idx, const char *field)
{
    lua_getfield(L, idx, field);
    char *s = lua_isstring(L, -1) ? tl_xstrdup(lua_tostring(L, -1)) : NULL;
    lua_pop(L, 1);
    return s;
}

/* ------------------------------------------------------------ the call */

#define POOL_MT "tracelens.parallel_pool"

/* The caller's reference to the pool, released by the __gc of a userdata
 * when a Lua error leaves tl.parallel early (before or after the run:
 * nothing raises while the tasks run). */
typedef struct pbox {
    pool *P;
} pbox;

static int pbox_gc(lua_State *L)
{
    pbox *b = luaL_checkudata(L, 1, POOL_MT);
    if (b->P) pool_release(b->P);
    b->P = NULL;
    return 0;
}

static pool *pool_new(lua_State *L, size_t n)
{
    pbox *b = tl_lua_new_box(L, sizeof *b, POOL_MT, pbox_gc);
    pool *P = calloc(1, sizeof *P);
    task *tasks = P ? calloc(n ? n : 1, sizeof *tasks) : NULL;
    pthread_condattr_t ca;
    int ok = tasks && pthread_condattr_init(&ca) == 0;
    if (ok) {
        ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&P->cv, &ca) == 0;
        pthread_condattr_destroy(&ca);
    }
    if (ok && pthread_mutex_init(&P->mu, NULL) != 0) {
        pthread_cond_destroy(&P->cv);
        ok = 0;
    }
    if (!ok) {
        free(tasks);
        free(P);
        luaL_error(L, "tl.parallel: out of memory");
    }
    P->tasks = tasks;
    P->n = n;
    P->chunks = n > 1 ? tl_chunk_cache_new() : NULL; /* NULL (no cache) when it cannot be made */
    atomic_init(&P->refs, 1);
    b->P = P;
    return P;
}

int tl_l_parallel(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    int jobs = opt_jobs(L);
    double timeout = opt_timeout(L);
    size_t mem_limit = opt_memory(L);
    size_t n = lua_rawlen(L, 1);
    pool *P = pool_new(L, n); /* at 3 */
    P->timeout = timeout;
    P->mem_limit = mem_limit;
    P->caller = tl_limits_of(L); /* a task's tasks: what is left of its limits holds for them */
    tl_limits_retain(P->caller);
    lua_getfield(L, LUA_REGISTRYINDEX, "tracelens.script_dir");
    if (lua_isstring(L, -1)) snprintf(P->script_dir, sizeof P->script_dir, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);

    char err[512] = "";
    for (size_t i = 0; i < n && !err[0]; i++) {
        task *tk = &P->tasks[i];
        lua_rawgeti(L, 1, (lua_Integer)i + 1);
        if (!lua_istable(L, -1)) {
            snprintf(err, sizeof err, "each task must be a table {code=STRING | script=PATH, args={...}}");
        } else {
            tk->code = opt_string(L, -1, "code");
            tk->script = opt_string(L, -1, "script");
            tk->name = opt_string(L, -1, "name");
            if (!tk->code == !tk->script) snprintf(err, sizeof err, "each task needs exactly one of code= or script=");
            /* a sandboxed state runs no Lua file from a path it chose (nor
             * sees part of an arbitrary file in a syntax error) */
            else if (tk->script && tl_lua_sandboxed(L))
                snprintf(err, sizeof err, "script= is not allowed in a sandboxed state (pass code=)");
            lua_getfield(L, -1, "args");
            if (!err[0] && !lua_isnil(L, -1)) {
                char e[400];
                if (!lua_istable(L, -1))
                    snprintf(err, sizeof err, "task args must be a table");
                else if (xgraph_from_lua(L, -1, &tk->args, P->caller, e, sizeof e, NULL) != 0)
                    snprintf(err, sizeof err, "task %zu args: %s", i + 1, e);
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    if (err[0]) return luaL_error(L, "tl.parallel: %s", err); /* the pool goes with the box */

    if ((size_t)jobs > n) jobs = (int)(n ? n : 1);
    if (n) run_pool(P, jobs);

    lua_createtable(L, clamp_int(n), 0);
    for (size_t i = 0; i < n; i++) {
        task *tk = &P->tasks[i];
        int abandoned = tk->state == T_ABANDONED;
        double finished = abandoned ? tk->abandoned : tk->finished;
        lua_createtable(L, 0, 6);
        lua_pushboolean(L, !abandoned && tk->ok);
        lua_setfield(L, -2, "ok");
        if (abandoned) {
            lua_pushliteral(L, "time limit exceeded (stuck in a C function; abandoned)");
            lua_setfield(L, -2, "error");
        } else if (tk->ok) {
            xgraph_push(L, &tk->value);
            lua_setfield(L, -2, "value");
            xgraph_free(&tk->value); /* early: its bytes count against a capped caller */
        } else {
            lua_pushstring(L, tk->error ? tk->error : "error");
            lua_setfield(L, -2, "error");
            if (tk->traceback) {
                lua_pushstring(L, tk->traceback);
                lua_setfield(L, -2, "traceback");
            }
        }
        lua_pushnumber(L, finished - tk->started);
        lua_setfield(L, -2, "seconds");
        lua_pushnumber(L, tk->started);
        lua_setfield(L, -2, "started");
        lua_pushnumber(L, finished);
        lua_setfield(L, -2, "finished");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    pbox *b = lua_touserdata(L, 3);
    b->P = NULL;
    pool_release(P);
    tl_limits_check(L); /* a caller past its own deadline stops here */
    return 1;
}
