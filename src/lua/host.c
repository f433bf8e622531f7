#include "host.h"

#include <errno.h>
#include <limits.h>
#include <lauxlib.h>
#include <lua-cjson.h>
#include <lualib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunk_cache.h"
#include "lanalysis.h"
#include "lfs.h"
#include "ljson.h"
#include "literation.h"
#include "limits.h"
#include "lpattern.h"
#include "lregex.h"
#include "lrender.h"
#include "ldiff.h"
#include "lcompare.h"
#include "lranks.h"
#include "lreport.h"
#include "ltable.h"
#include "ltrace.h"
#include "repl.h"
#include "../io/outfile.h"
#include "../util/clock.h"
#include "../util/datadir.h"
#include "../util/pyfmt.h"
#include "../util/vec.h"

int luaopen_cjson(lua_State *L);

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int tl_host_lua_dir(char *buf, size_t cap)
{
    const char *env = getenv("TRACELENS_LUA_DIR");
    if (env && tl_is_dir(env)) {
        snprintf(buf, cap, "%s", env);
        return 0;
    }
    if (tl_installed_dir("lua", buf, cap)) return 0;
    if (tl_is_dir(TL_SOURCE_LUA_DIR)) {
        snprintf(buf, cap, "%s", TL_SOURCE_LUA_DIR);
        return 0;
    }
    if (tl_is_dir(TL_INSTALL_LUA_DIR)) {
        snprintf(buf, cap, "%s", TL_INSTALL_LUA_DIR);
        return 0;
    }
    return -1;
}

/* The directories searched by require, in order. */
static void module_dirs(const tl_state_opts *o, const char *dirs[3], char *luadir, size_t cap)
{
    int k = 0;
    if (o && o->script_dir) dirs[k++] = o->script_dir;
    if (tl_host_lua_dir(luadir, cap) == 0) dirs[k++] = luadir;
    dirs[k] = NULL;
}

/* ------------------------------------------------ the tracelens module */

static int l_version(lua_State *L)
{
    lua_pushstring(L, TL_VERSION);
    return 1;
}

/* tl.fs.mkdir(path): mkdir -p; raises on failure. */
static int l_mkdir(lua_State *L)
{
    tl_error err;
    if (tl_mkdirs(luaL_checkstring(L, 1), &err) != 0) return luaL_error(L, "%s", err.msg);
    return 0;
}

/* tl.fs.write_file(path, text): the whole file or nothing (temporary name, then
 * rename); parent directories are created. Raises on failure. */
static int l_write_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    size_t len;
    const char *text = luaL_checklstring(L, 2, &len);
    tl_outfile o;
    tl_error err;
    if (tl_outfile_open(&o, path, &err) != 0) return luaL_error(L, "%s", err.msg);
    if (fwrite(text, 1, len, o.f) != len) {
        tl_outfile_abort(&o);
        return luaL_error(L, "%s: write failed", path);
    }
    if (tl_outfile_commit(&o, &err) != 0) return luaL_error(L, "%s", err.msg);
    return 0;
}

/* tl.fs.read_file(path) -> the bytes of the file, or nil, "path: reason". */
static int l_read_file(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    FILE *f = fopen(path, "rb");
    if (!f) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: %s", path, strerror(errno));
        return 2;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) luaL_addlstring(&b, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: read error", path);
        return 2;
    }
    luaL_pushresult(&b);
    return 1;
}

/* tl.now(): seconds on the monotonic clock (the clock of tl.parallel's
 * started/finished times). */
static int l_now(lua_State *L)
{
    lua_pushnumber(L, tl_now_s());
    return 1;
}

/* tl.cores(): the number of online CPU cores (what "one per core" means for
 * tl.load's threads and tl.parallel's jobs). */
static int l_cores(lua_State *L)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    lua_pushinteger(L, n < 1 ? 1 : n);
    return 1;
}

/* tl.float_repr(x): Python's repr of a float (util/pyfmt.h), e.g. "0.1",
 * "1e-05", "1e+16", as tracelens.json writes one; nil for 0, NaN, the
 * infinities and the powers of two (the fraction bits all zero), which
 * tracelens.json writes itself: its printf search gives a longer text than
 * the shortest at some powers of two (2^-24), and outputs keep that text. */
static int l_float_repr(lua_State *L)
{
    double x = luaL_checknumber(L, 1);
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    if (x == 0 || x != x || x - x != 0 || (bits & ((UINT64_C(1) << 52) - 1)) == 0) {
        lua_pushnil(L);
        return 1;
    }
    char buf[64];
    int n = tl_pyfloat_repr(buf, sizeof buf, x);
    lua_pushlstring(L, buf, (size_t)n);
    return 1;
}

static const luaL_Reg tl_funcs[] = {{"load", tl_l_load}, {"parallel", tl_l_parallel}, {"version", l_version},
                                    {"now", l_now},      {"cores", l_cores},
                                    {"steady_state", tl_l_steady_state},         {"uid_repeats", tl_l_uid_repeats},
                                    {"uid_claims", tl_l_uid_claims},             {"join_ints", tl_l_join_ints},
                                    {"float_repr", l_float_repr},                {"json_decode", tl_l_json_decode},
                                    {NULL, NULL}};

/* Added to tl.fs in full states only (sandboxed tasks touch no files). */
static const luaL_Reg fs_funcs[] = {
    {"mkdir", l_mkdir}, {"write_file", l_write_file}, {"read_file", l_read_file}, {NULL, NULL}};

int luaopen_tracelens(lua_State *L)
{
    tl_ltrace_register(L);
    tl_ltable_register(L);
    luaL_newlib(L, tl_funcs);
    lua_pushstring(L, TL_VERSION);
    lua_setfield(L, -2, "VERSION");
    tl_lregex_push(L);
    lua_setfield(L, -2, "re");
    tl_lrender_register(L);
    tl_ldiff_register(L);
    tl_lreport_register(L);
    tl_lcompare_register(L);
    tl_lranks_register(L);
    return 1;
}

/* ----------------------------------------------------- sandbox require */

/* require for task states: only modules already loaded or preloaded, and
 * Lua source files (text mode) found in the module directories. */
static int sandbox_require(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    lua_settop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE); /* index 2 */
    lua_getfield(L, -1, name);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_getfield(L, -1, name);
    if (lua_isfunction(L, -1)) {
        lua_pushstring(L, name);
        lua_call(L, 1, 1);
    } else {
        lua_pop(L, 1);
        if (strstr(name, "..") || strchr(name, '/')) return luaL_error(L, "module '%s' not allowed", name);
        char rel[512];
        snprintf(rel, sizeof rel, "%s", name);
        for (char *c = rel; *c; c++)
            if (*c == '.') *c = '/';
        lua_getfield(L, LUA_REGISTRYINDEX, "tracelens.module_dirs");
        int found = 0;
        for (lua_Integer i = 1; !found; i++) {
            if (lua_rawgeti(L, -1, i) != LUA_TSTRING) {
                lua_pop(L, 1);
                break;
            }
            const char *dir = lua_tostring(L, -1);
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.lua", dir, rel);
            if (!is_file(path)) snprintf(path, sizeof path, "%s/%s/init.lua", dir, rel);
            lua_pop(L, 1);
            if (is_file(path)) {
                lua_getfield(L, LUA_REGISTRYINDEX, "tracelens.chunk_cache");
                tl_chunk_cache *cache = lua_touserdata(L, -1);
                lua_pop(L, 1);
                if (tl_chunk_cache_load(cache, L, path) != LUA_OK) return lua_error(L);
                lua_pushstring(L, name);
                lua_pushstring(L, path);
                lua_call(L, 2, 1);
                found = 1;
            }
        }
        if (!found) return luaL_error(L, "module '%s' not found in the tracelens module directories", name);
        lua_remove(L, -2); /* the dirs table */
    }
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, 2, name); /* LOADED[name]: a second require gets the same module */
    return 1;
}

/* load() in task states: text chunks only. load catches the errors of a
 * reader function: one that leaves the task over a limit goes on up. */
static int sandbox_load(lua_State *L)
{
    int nargs = lua_gettop(L);
    lua_settop(L, 4); /* absent arguments are nils (not what is pushed next) */
    lua_getfield(L, LUA_REGISTRYINDEX, "tracelens.rawload");
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_pushliteral(L, "t");
    if (nargs >= 4) lua_pushvalue(L, 4);
    lua_call(L, nargs >= 4 ? 4 : 3, 2);
    if (lua_isnil(L, -2)) tl_limits_after_catch(L, LUA_ERRRUN, -1);
    return 2;
}

/* print and warn of a sandboxed state: to standard error, each line
 * prefixed with "[NAME] " (the task's name, the registry's
 * tracelens.task_name, else "task") and every control byte written as \xNN,
 * so that what a rule prints cannot pass for tracelens's own output on
 * stdout nor move the terminal's cursor. warn adds "warning: ". */
static void sandbox_emit(lua_State *L, const char *tag)
{
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b); /* the string on top, as the buffer requires */
        if (i < n) luaL_addchar(&b, '\t');
    }
    luaL_pushresult(&b);
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    lua_getfield(L, LUA_REGISTRYINDEX, "tracelens.task_name");
    const char *name = lua_isstring(L, -1) ? lua_tostring(L, -1) : "task";
    int at_line_start = 1;
    for (size_t i = 0; i <= len; i++) {
        if (at_line_start) {
            fprintf(stderr, "[%s] %s", name, tag ? tag : "");
            at_line_start = 0;
        }
        if (i == len) break;
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') {
            fputc('\n', stderr);
            at_line_start = 1;
        } else if (c < 0x20 && c != '\t') {
            fprintf(stderr, "\\x%02x", c);
        } else if (c == 0x7f) {
            fputs("\\x7f", stderr);
        } else {
            fputc(c, stderr);
        }
    }
    if (!at_line_start) fputc('\n', stderr);
    fflush(stderr);
    lua_pop(L, 2);
}

static int sandbox_print(lua_State *L)
{
    sandbox_emit(L, NULL);
    return 0;
}

/* warn(msg1, ...): its pieces joined with nothing, as Lua's; control
 * messages ("@on", "@off") are ignored */
static int sandbox_warn(lua_State *L)
{
    const char *first = luaL_checkstring(L, 1);
    if (lua_gettop(L) == 1 && first[0] == '@') return 0;
    for (int i = 1; i <= lua_gettop(L); i++) luaL_checkstring(L, i);
    lua_concat(L, lua_gettop(L));
    sandbox_emit(L, "warning: ");
    return 0;
}

static void open_sandbox_libs(lua_State *L)
{
    static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},   {LUA_TABLIBNAME, luaopen_table},
                                    {LUA_STRLIBNAME, luaopen_string}, {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_UTF8LIBNAME, luaopen_utf8}, {LUA_OSLIBNAME, luaopen_os},
                                    {NULL, NULL}};
    for (const luaL_Reg *l = libs; l->func; l++) {
        luaL_requiref(L, l->name, l->func, 1);
        lua_pop(L, 1);
    }
    tl_lpattern_install(L); /* string.find/match/gmatch/gsub that honour the time limit */
    /* os: only the clock and dates */
    lua_getglobal(L, "os");
    static const char *const keep[] = {"clock", "time", "date", "difftime", NULL};
    lua_newtable(L);
    for (int i = 0; keep[i]; i++) {
        lua_getfield(L, -2, keep[i]);
        lua_setfield(L, -2, keep[i]);
    }
    lua_setglobal(L, "os");
    lua_pop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getglobal(L, "os");
    lua_setfield(L, -2, "os");
    lua_pop(L, 1);
    static const char *const drop[] = {"dofile", "loadfile", NULL};
    for (int i = 0; drop[i]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, drop[i]);
    }
    lua_getglobal(L, "load");
    lua_setfield(L, LUA_REGISTRYINDEX, "tracelens.rawload");
    lua_register(L, "load", sandbox_load);
    lua_register(L, "require", sandbox_require);
    lua_register(L, "print", sandbox_print);
    lua_register(L, "warn", sandbox_warn);
    tl_limits_install_guards(L); /* pcall, xpcall, table.move, set/getmetatable: limits.h */
}

int tl_lua_sandboxed(lua_State *L)
{
    int t = lua_getfield(L, LUA_REGISTRYINDEX, "tracelens.sandboxed");
    int s = t == LUA_TNIL ? 0 : lua_toboolean(L, -1);
    lua_pop(L, 1);
    return s;
}

void tl_lua_refuse_in_sandbox(lua_State *L, const char *what)
{
    if (tl_lua_sandboxed(L))
        luaL_error(L, "%s is not allowed in a sandboxed state (rules and analyzers write no files and load no code)",
                   what);
}

void tl_host_fill_state(lua_State *L, const tl_state_opts *o)
{
    if (o && o->sandboxed) {
        lua_pushboolean(L, 1);
        lua_setfield(L, LUA_REGISTRYINDEX, "tracelens.sandboxed");
        open_sandbox_libs(L);
    } else {
        luaL_openlibs(L);
    }

    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, luaopen_cjson);
    lua_setfield(L, -2, "cjson");
    lua_pushcfunction(L, luaopen_tracelens);
    lua_setfield(L, -2, "tracelens");
    lua_pop(L, 1);

    const char *dirs[3];
    char luadir[4096];
    module_dirs(o, dirs, luadir, sizeof luadir);
    lua_newtable(L);
    for (int i = 0; dirs[i]; i++) {
        lua_pushstring(L, dirs[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, LUA_REGISTRYINDEX, "tracelens.module_dirs");
    if (o && o->script_dir) {
        lua_pushstring(L, o->script_dir);
        lua_setfield(L, LUA_REGISTRYINDEX, "tracelens.script_dir");
    }
    if (o && o->jobs > 0) {
        lua_pushinteger(L, o->jobs);
        lua_setfield(L, LUA_REGISTRYINDEX, "tracelens.jobs");
    }
    if (o && o->chunks) {
        lua_pushlightuserdata(L, o->chunks);
        lua_setfield(L, LUA_REGISTRYINDEX, "tracelens.chunk_cache");
    }
    if (!(o && o->sandboxed)) {
        /* package.path: script dir, then the shipped lua/ directory */
        luaL_Buffer b;
        lua_getglobal(L, "package");
        luaL_buffinit(L, &b);
        for (int i = 0; dirs[i]; i++) {
            luaL_addstring(&b, dirs[i]);
            luaL_addstring(&b, "/?.lua;");
            luaL_addstring(&b, dirs[i]);
            luaL_addstring(&b, "/?/init.lua;");
        }
        lua_getfield(L, -2, "path");
        luaL_addvalue(&b);
        luaL_pushresult(&b);
        lua_setfield(L, -2, "path");
        lua_pop(L, 1);
    }
    luaL_requiref(L, "tracelens", luaopen_tracelens, 0);
    if (!(o && o->sandboxed)) {
        tl_lfs_push(L);
        luaL_setfuncs(L, fs_funcs, 0);
        lua_setfield(L, -2, "fs");
    }
    lua_setglobal(L, "tl");
}

lua_State *tl_host_new_state(const tl_state_opts *o)
{
    lua_State *L = luaL_newstate();
    if (!L) return NULL;
    tl_host_fill_state(L, o);
    return L;
}

/* --------------------------------------------------------------- run */

const char *tl_lua_error_text(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg) return msg;
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return lua_tostring(L, -1);
    return lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
}

int tl_lua_traceback_msgh(lua_State *L)
{
    luaL_traceback(L, L, tl_lua_error_text(L), 1);
    return 1;
}

/* Finds SCRIPT: as given, else in the shipped lua/ directory. */
static int resolve_script(const char *script, char *out, size_t cap)
{
    if (is_file(script)) {
        snprintf(out, cap, "%s", script);
        return 0;
    }
    if (!strchr(script, '/')) {
        char dir[2048];
        if (tl_host_lua_dir(dir, sizeof dir) == 0) {
            int n = snprintf(out, cap, "%s/%s", dir, script);
            if (n > 0 && (size_t)n < cap && is_file(out)) return 0;
        }
    }
    return -1;
}

int tl_host_run_script(const char *script, int argc, char **argv, const tl_host_opts *opts)
{
    char path[4096];
    if (resolve_script(script, path, sizeof path) != 0) {
        fprintf(stderr, "tracelens: %s: script not found (looked in the current directory and the tracelens lua/ directory)\n",
                script);
        return 1;
    }
    /* the script's directory as an absolute path: modules found through it
     * then know where they are (the orchestrator finds agents/ next to its
     * lua/ directory), whatever the current directory */
    char dir[PATH_MAX];
    if (!realpath(path, dir)) snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    tl_state_opts so = {.sandboxed = 0, .jobs = opts ? opts->jobs : 0, .script_dir = dir};
    lua_State *L = tl_host_new_state(&so);
    if (!L) {
        fprintf(stderr, "tracelens: cannot create a Lua state\n");
        return 1;
    }
    /* arg table as in `lua`: arg[0] = script, arg[1..] = args */
    lua_createtable(L, argc, 1);
    lua_pushstring(L, path);
    lua_rawseti(L, -2, 0);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setglobal(L, "arg");
    lua_pushcfunction(L, tl_lua_traceback_msgh);
    int rc = 0;
    if (luaL_loadfilex(L, path, "t") != LUA_OK) {
        fprintf(stderr, "tracelens: %s\n", lua_tostring(L, -1));
        rc = 1;
    } else {
        luaL_checkstack(L, argc + 2, "too many arguments");
        for (int i = 0; i < argc; i++) lua_pushstring(L, argv[i]);
        if (lua_pcall(L, argc, 1, 1) != LUA_OK) {
            const char *m = lua_tostring(L, -1);
            fprintf(stderr, "tracelens: %s\n", m ? m : "error");
            rc = 1;
        } else if (lua_isinteger(L, -1)) {
            /* a script may return its exit status */
            rc = (int)lua_tointeger(L, -1);
        } else if (lua_isboolean(L, -1) && !lua_toboolean(L, -1)) {
            rc = 1;
        }
    }
    lua_close(L);
    fflush(stdout);
    return rc;
}

/* -------------------------------------------------------------- repl */

int tl_host_repl(const char *trace_path, const tl_host_opts *opts)
{
    tl_state_opts so = {.sandboxed = 0, .jobs = opts ? opts->jobs : 0, .script_dir = NULL};
    lua_State *L = tl_host_new_state(&so);
    if (!L) return 1;
    if (trace_path) {
        tl_load_opts lo = {.progress = 1};
        tl_error err = {{0}};
        tl_trace *t = tl_trace_load(trace_path, &lo, &err);
        if (!t) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            lua_close(L);
            return 1;
        }
        tl_ltrace_push(L, t);
        tl_trace_release(t);
        lua_setglobal(L, "trace");
    }
    char hist[4096] = {0};
    const char *home = getenv("HOME");
    if (home) snprintf(hist, sizeof hist, "%s/.tracelens_history", home);
    tl_repl_opts ro = {.history_path = home ? hist : NULL, .force_interactive = 0};
    int rc = tl_repl_run(L, &ro);
    lua_close(L);
    return rc;
}
