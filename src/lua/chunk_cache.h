/* chunk_cache.h — compiled Lua modules shared by the states of one
 * tl.parallel call. The analyzers run each in a Lua state of its own and
 * require the same modules (findings, prose, report helpers): compiling
 * their source in every state was most of a short analyzer's time. The
 * first state to load a module file compiles it from source (text mode,
 * as before) and keeps its bytecode (lua_dump, debug information kept, so
 * tracebacks are unchanged); the others load that bytecode. Only bytecode
 * made here from a source file, in this process, is ever loaded: user code
 * still loads text chunks only. Keyed by path, size and modification time.
 * Owns its entries; thread-safe (one mutex); freed by its owner once every
 * state that used it is closed. */
#ifndef TL_CHUNK_CACHE_H
#define TL_CHUNK_CACHE_H

#include <lua.h>

typedef struct tl_chunk_cache tl_chunk_cache;

tl_chunk_cache *tl_chunk_cache_new(void);
void tl_chunk_cache_free(tl_chunk_cache *c);

/* luaL_loadfilex(L, path, "t") through the cache (c may be NULL: no
 * cache). Pushes the chunk (status LUA_OK) or the error message. */
int tl_chunk_cache_load(tl_chunk_cache *c, lua_State *L, const char *path);

#endif
