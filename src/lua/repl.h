/* repl.h — the interactive Lua prompt of `tracelens repl`.
 * Owns the read-eval-print loop over an existing lua_State (which the caller
 * creates, fills and closes): line editing, history file and TAB completion
 * through libedit's readline-compatible API (link -ledit) when stdin is a
 * terminal, a plain line reader with lua.c-style evaluation when it is not,
 * the `:help` / `:quit` / `:history` commands, and the pretty-printer of
 * results (tl_repl_format).
 *
 * Global state: libedit's callbacks take no user pointer, so the module
 * keeps one file-static lua_State pointer, set on entry to tl_repl_run in
 * interactive mode and cleared before it returns. For the same span it also
 * sets LC_CTYPE from the environment (libedit needs it for non-ASCII input)
 * and, around each prompt and each statement, a SIGINT handler: Ctrl-C stops
 * a running statement ("interrupted!") or drops the line being typed; the
 * caller's locale and handler are restored. It calls rl_initialize() and
 * leaves rl_getc_function set (libedit calls it without a NULL check).
 * tl_repl_run is therefore not reentrant and must not run in two threads at
 * once; tl_repl_format has no global state. */
#ifndef TL_REPL_H
#define TL_REPL_H

#include <lua.h>

typedef struct tl_repl_opts {
    const char *history_path;   /* NULL = no history file */
    int force_interactive;      /* tests: behave as on a terminal */
} tl_repl_opts;

/* Runs the prompt on L until EOF or :quit. Returns the process exit status:
   0, or 1 when stdin was not a terminal (and force_interactive was not set)
   and some statement or command raised an error. opts may be NULL. */
int tl_repl_run(lua_State *L, const tl_repl_opts *opts);

/* Pretty-prints value at stack index idx to a luaL_Buffer-free C string
   (malloc'd, caller frees; NULL only when out of memory); tables nested up to
   depth 3 and 50 items per table, keys sorted (numbers ascending then
   strings, then other keys), cycles shown as <cycle>, userdata via
   __tostring when present. Strings are raw at top level and quoted inside
   tables. Metamethods run protected; the Lua stack is left as found. */
char *tl_repl_format(lua_State *L, int idx);

#endif
