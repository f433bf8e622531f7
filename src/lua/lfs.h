/* lfs.h — `tl.fs`: the little file-system access the Lua side needs that
 * plain Lua lacks (directory listings, whether a path is a file or a
 * directory). Only full states (`tracelens run`, the REPL) get it; sandboxed
 * tl.parallel tasks do not. */
#ifndef TL_LFS_H
#define TL_LFS_H

#include <lua.h>

/* Pushes the tl.fs table: listdir(path) -> sorted names | nil, message;
 * kind(path) -> "file" | "directory" | "other" | nil (stat, links followed);
 * lkind(path) -> the same or "link" (lstat); stage_open(parent) -> a new
 * private directory parent/.tracelens-XXXXXX; stage_commit(stage, name,
 * dest) moves stage/name to dest (replacing a directory there);
 * remove_tree(path) removes a tree without following links (src/io/outfile.h).
 * The last three raise on failure. */
void tl_lfs_push(lua_State *L);

#endif
