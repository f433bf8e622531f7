/* lfs.c — tl.fs.listdir, tl.fs.kind / lkind, and the staging-directory
 * calls of the orchestrator (see lfs.h). */
#include "lfs.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lauxlib.h>

#include "../io/outfile.h"

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* tl.fs.listdir(path): the entry names but "." and "..", sorted bytewise
 * (Python's sorted() of UTF-8 names); nil, "path: reason" when unreadable. */
static int l_listdir(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    DIR *d = opendir(path);
    if (!d) {
        luaL_pushfail(L);
        lua_pushfstring(L, "%s: %s", path, strerror(errno));
        return 2;
    }
    /* names are collected in a Lua table first (so an error cannot leak
     * them), then sorted through a C array of pointers into those strings */
    lua_newtable(L);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        lua_pushstring(L, e->d_name);
        lua_rawseti(L, -2, ++n);
    }
    closedir(d);
    const char **names = lua_newuserdatauv(L, (size_t)n * sizeof *names + 1, 0);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, -2, i + 1);
        names[i] = lua_tostring(L, -1);
        lua_pop(L, 1); /* still referenced by the table */
    }
    qsort(names, (size_t)n, sizeof *names, cmp_names);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, names[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* tl.fs.kind(path): "file", "directory", "other", or nil when it does not exist. */
static int l_kind(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (stat(path, &st) != 0) {
        luaL_pushfail(L);
        return 1;
    }
    lua_pushstring(L, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "directory" : "other");
    return 1;
}

/* tl.fs.lkind(path): as kind, but a symbolic link is "link" (lstat). */
static int l_lkind(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (lstat(path, &st) != 0) {
        luaL_pushfail(L);
        return 1;
    }
    lua_pushstring(L, S_ISLNK(st.st_mode)   ? "link"
                      : S_ISREG(st.st_mode) ? "file"
                      : S_ISDIR(st.st_mode) ? "directory"
                                            : "other");
    return 1;
}

/* tl.fs.stage_open(parent) -> a new private directory parent/.tracelens-XXXXXX
 * (parent created as needed); raises on failure. */
static int l_stage_open(lua_State *L)
{
    tl_stage st;
    tl_error err;
    if (tl_stage_open(&st, luaL_checkstring(L, 1), &err) != 0) return luaL_error(L, "%s", err.msg);
    /* copied out and freed before anything can raise (no leak on a memory error) */
    char path[4096];
    int fits = strlen(st.dir) < sizeof path;
    if (fits) memcpy(path, st.dir, strlen(st.dir) + 1);
    else tl_stage_close(&st);
    free(st.dir);
    if (!fits) return luaL_error(L, "staging directory path too long");
    lua_pushstring(L, path);
    return 1;
}

/* tl.fs.stage_commit(stage, name, dest): moves stage/name to dest, a
 * directory replacing the directory there (which is left in the stage);
 * raises on failure. */
static int l_stage_commit(lua_State *L)
{
    tl_stage st = {.dir = (char *)luaL_checkstring(L, 1)};
    tl_error err;
    if (tl_stage_commit(&st, luaL_checkstring(L, 2), luaL_checkstring(L, 3), &err) != 0)
        return luaL_error(L, "%s", err.msg);
    return 0;
}

/* tl.fs.remove_tree(path): removes path and, for a directory, everything
 * under it, never following a symbolic link; raises on failure. */
static int l_remove_tree(lua_State *L)
{
    tl_error err;
    if (tl_remove_tree(luaL_checkstring(L, 1), &err) != 0) return luaL_error(L, "%s", err.msg);
    return 0;
}

void tl_lfs_push(lua_State *L)
{
    static const luaL_Reg funcs[] = {{"listdir", l_listdir},         {"kind", l_kind},
                                     {"lkind", l_lkind},             {"stage_open", l_stage_open},
                                     {"stage_commit", l_stage_commit}, {"remove_tree", l_remove_tree},
                                     {NULL, NULL}};
    luaL_newlib(L, funcs);
}
