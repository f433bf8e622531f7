/* limits.h — the resource limits of a sandboxed Lua state (a tl.parallel
 * task): a wall-clock deadline and a memory cap.
 *
 * Owns: the per-task limits record (heap-allocated, reference-counted,
 * reached through the state's allocator userdata), the capped allocator,
 * the time hook, tl_limits_check (the one call C code makes in long loops),
 * the charging of C memory made for a task (a loaded trace, a Table, a
 * compiled regex, the copy of a task's result) to its cap, and the guards
 * that keep a task over its limits from carrying on (pcall, xpcall, load,
 * and table.move, table.insert, table.remove and string.rep, Lua's C loops
 * that could run 2^62 times without allocating; no __gc metamethods there,
 * nor access to the metatables of C types).
 *
 * Inheritance: a task started by a task (nested tl.parallel) has a record
 * whose parent is its caller's. Its deadline is never later than the
 * caller's, and every byte it allocates counts against its own cap and the
 * cap of every task above it (the counters are atomic: inner tasks run on
 * threads of their own). Once over a limit, a task stays over it (the flags
 * are sticky): a caught "time limit exceeded" or memory error is raised
 * again by the guards until it reaches the task's top level. */
#ifndef TL_LIMITS_H
#define TL_LIMITS_H

#include <lua.h>
#include <stdatomic.h>
#include <stddef.h>

/* A task still inside one C call this long after its deadline is given up
 * on by tl.parallel's watchdog: 10% of its time limit, at least 1 s (a
 * nested task: at most half of its caller's grace). */
#define TL_LIMITS_GRACE_MIN_S 1.0
#define TL_LIMITS_GRACE_FRACTION 0.1

typedef struct tl_limits {
    atomic_size_t used;       /* bytes: the state's allocations, C memory charged to the
                               * task, and the same of the tasks it started */
    size_t limit;             /* own cap in bytes; 0 = none (the callers' caps still apply) */
    double deadline;          /* tl_now_s() value; 0 = none */
    double abandon_at;        /* deadline + grace (the watchdog); 0 = never */
    size_t hit;               /* the cap that refused an allocation (own or a caller's) */
    int timed_out, out_of_memory; /* sticky; touched by the task's own thread only */
    struct tl_limits *parent; /* the calling task's record (retained), or NULL */
    atomic_int refs;
} tl_limits;

/* A record for a task starting at `now` (tl_now_s()) with at most timeout_s
 * seconds (<= 0: only the parent's deadline) and limit bytes (0: only the
 * parents' caps); parent may be NULL. refs = 1; NULL when out of memory. */
tl_limits *tl_limits_new(tl_limits *parent, double now, double timeout_s, size_t limit);
void tl_limits_retain(tl_limits *lim);
/* Drops a reference; the last one frees the record (and drops its parent). */
void tl_limits_release(tl_limits *lim);

/* The lua_Alloc of capped states; ud is a tl_limits*. */
void *tl_limits_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
/* The limits of L, or NULL when L is not a capped (task) state. */
tl_limits *tl_limits_of(lua_State *L);
/* Installs the count hook that enforces the deadline. */
void tl_limits_install_hook(lua_State *L);
/* Raises "time limit exceeded" when L's deadline has passed (marking it
 * timed out), or again when L is already over a limit; returns otherwise.
 * A no-op in states without limits. Cheap: call it every few thousand steps
 * of any long C loop run for a task. */
void tl_limits_check(lua_State *L);

/* Counts n bytes of C memory made for a task against lim and the records
 * above it: 0, or -1 (nothing counted) when a cap would be passed. lim may
 * be NULL (always 0). */
int tl_limits_charge(tl_limits *lim, size_t n);
void tl_limits_uncharge(tl_limits *lim, size_t n);
/* Bytes that may still be charged to lim before a cap is reached
 * (SIZE_MAX when no cap applies). */
size_t tl_limits_left(const tl_limits *lim);
/* In a task state: raises "memory limit exceeded (WHAT needs N MB, M MB
 * left)" when n more bytes would pass a cap, a check before a large C
 * allocation (the size of a file about to be loaded). A no-op elsewhere. */
void tl_limits_need(lua_State *L, size_t n, const char *what);

/* luaL_error with printf's formats (lua_pushfstring takes no precision:
 * "%.1f" would raise "invalid conversion" instead of the message); the
 * message is cut at 5119 bytes. Does not return. */
int tl_limits_raise(lua_State *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* In a task state: charges n bytes to the task for as long as the object at
 * idx (a userdata holding C memory) lives; raises "memory limit exceeded
 * (WHAT, N MB)" when that passes a cap. A no-op elsewhere. */
void tl_limits_charge_object(lua_State *L, int idx, size_t n, const char *what);

/* Where an error was caught in a task state (status of the protected call,
 * the error object at erridx): marks the task out of memory when it is a
 * memory error, then raises again when the task is over a limit. */
void tl_limits_after_catch(lua_State *L, int status, int erridx);
/* Replaces pcall, xpcall, table.move, table.insert, table.remove and
 * string.rep of a sandboxed state with guarded ones (see above); setmetatable refuses metatables with a __gc field (Lua
 * runs finalizers with hooks off, where no deadline holds) and
 * getmetatable gives no userdata's metatable table. */
void tl_limits_install_guards(lua_State *L);

#endif
