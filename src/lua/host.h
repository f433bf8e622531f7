/* host.h — the embedded Lua 5.4 host.
 * Owns the creation of Lua states (full for `tracelens run`/repl, sandboxed
 * for tl.parallel tasks), the script search path, and the `tracelens` module
 * (preloaded as require "tracelens" and bound to the global `tl`); cjson is
 * linked statically and preloaded as "cjson" in every state. */
#ifndef TL_HOST_H
#define TL_HOST_H

#include <lua.h>

typedef struct tl_host_opts {
    int jobs;                 /* tl.parallel threads; 0 = number of cores */
} tl_host_opts;

typedef struct tl_chunk_cache tl_chunk_cache;

typedef struct tl_state_opts {
    int sandboxed;            /* task state: no io, os.execute, dofile, ... */
    int jobs;
    const char *script_dir;   /* added to the module path, may be NULL */
    tl_chunk_cache *chunks;   /* modules compiled once for the states of a
                                 tl.parallel call (chunk_cache.h), may be NULL */
} tl_state_opts;

lua_State *tl_host_new_state(const tl_state_opts *opts);
/* Opens the libraries and the tracelens module in an existing state (may
 * raise a Lua error, e.g. under a memory cap). */
void tl_host_fill_state(lua_State *L, const tl_state_opts *opts);

/* `tracelens run SCRIPT ARGS...`: returns the exit status. */
int tl_host_run_script(const char *script, int argc, char **argv, const tl_host_opts *opts);
/* `tracelens repl [TRACE]`. */
int tl_host_repl(const char *trace_path, const tl_host_opts *opts);

/* Directory of the shipped Lua files (lua/), found next to the binary's
 * source tree or install prefix; writes into buf, returns 0 when found. */
int tl_host_lua_dir(char *buf, size_t cap);

/* The error object at index 1 as text: the string, its __tostring, or
 * "(error object is a T value)" (may push the text). */
const char *tl_lua_error_text(lua_State *L);
/* Message handler for lua_pcall: that text with a traceback. */
int tl_lua_traceback_msgh(lua_State *L);

/* 1 when L is a sandboxed state (a tl.parallel task: rules, analyzers):
 * C functions that touch files or open other states refuse there. */
int tl_lua_sandboxed(lua_State *L);
/* Raises "NAME is not allowed in a sandboxed state (...)" when L is one. */
void tl_lua_refuse_in_sandbox(lua_State *L, const char *what);

/* The module opener (exported for tests and tasks). */
int luaopen_tracelens(lua_State *L);

#endif
