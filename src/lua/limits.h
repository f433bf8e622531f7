/* limits.h — the resource limits of a sandboxed Lua state (a tl.parallel
 * task): a wall-clock deadline and a memory cap.
 * Owns: the per-state limits record (reached through the state's allocator
 * userdata), the capped allocator, the time hook, and tl_limits_check, the
 * one call C code makes in long loops so a task over its time is stopped. */
#ifndef TL_LIMITS_H
#define TL_LIMITS_H

#include <lua.h>
#include <stddef.h>

typedef struct tl_limits {
    size_t used, limit;       /* bytes; limit 0 = none */
    double deadline;          /* tl_now_s() value; 0 = none */
    int timed_out, out_of_memory;
} tl_limits;

/* The lua_Alloc of capped states; ud is a tl_limits*. */
void *tl_limits_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
/* The limits of L, or NULL when L is not a capped (task) state. */
tl_limits *tl_limits_of(lua_State *L);
/* Installs the count hook that enforces the deadline. */
void tl_limits_install_hook(lua_State *L);
/* Raises "time limit exceeded" when L's deadline has passed (marking it
 * timed out); returns otherwise. A no-op in states without limits. Cheap:
 * call it every few thousand steps of any long C loop run for a task. */
void tl_limits_check(lua_State *L);

#endif
