/* lregex.c — tl.re, see lregex.h. */
#include "lregex.h"
#include "limits.h"

#include <lauxlib.h>
#include <pcre2.h>
#include <string.h>

#include "ltrace.h"

#define REGEX_MT "tracelens.regex"
#define MD_MT "tracelens.regex_match_data"
#define CACHE_KEY "tracelens.regex_cache"

typedef struct lregex {
    pcre2_code *code;
    uint32_t ncap; /* capture groups */
    pcre2_match_context *mctx; /* in a task state: the heap limit of its matches (rx_exec) */
} lregex;

static uint32_t parse_flags(lua_State *L, const char *flags)
{
    uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF;
    for (const char *f = flags; f && *f; f++) {
        switch (*f) {
        case 'i': opts |= PCRE2_CASELESS; break;
        case 'm': opts |= PCRE2_MULTILINE; break;
        case 's': opts |= PCRE2_DOTALL; break;
        case 'x': opts |= PCRE2_EXTENDED; break;
        default: luaL_error(L, "tl.re: unknown flag '%c' (use i, m, s, x)", *f);
        }
    }
    return opts;
}

static lregex *compile_push(lua_State *L, const char *pat, size_t len, const char *flags)
{
    uint32_t opts = parse_flags(L, flags);
    lregex *rx = lua_newuserdatauv(L, sizeof *rx, 0);
    rx->code = NULL;
    rx->mctx = NULL;
    luaL_setmetatable(L, REGEX_MT);
    int err;
    PCRE2_SIZE off;
    rx->code = pcre2_compile((PCRE2_SPTR)pat, len, opts, &err, &off, NULL);
    if (!rx->code) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        luaL_error(L, "tl.re: bad pattern at offset %d: %s: %s", (int)off, (const char *)msg, pat);
    }
    pcre2_pattern_info(rx->code, PCRE2_INFO_CAPTURECOUNT, &rx->ncap);
    size_t size = 0; /* a task's memory cap counts the compiled pattern (limits.h) */
    pcre2_pattern_info(rx->code, PCRE2_INFO_SIZE, &size);
    tl_limits_charge_object(L, -1, size, "a compiled regex");
    if (tl_limits_of(L) && !(rx->mctx = pcre2_match_context_create(NULL))) luaL_error(L, "tl.re: out of memory");
    return rx;
}

/* pcre2_match; in a task state, PCRE2's backtracking memory (malloc'd,
 * up to 20 GB by default) is held to what the task's memory cap leaves, and
 * running out of it leaves the task over its cap (limits.h). */
static int rx_exec(lua_State *L, lregex *rx, const char *s, size_t len, size_t start, uint32_t mopts,
                   pcre2_match_data *md)
{
    tl_limits *lim = rx->mctx ? tl_limits_of(L) : NULL;
    if (lim) {
        size_t kib = tl_limits_left(lim) / 1024;
        pcre2_set_heap_limit(rx->mctx, kib > UINT32_MAX ? UINT32_MAX : (uint32_t)kib);
    }
    int rc = pcre2_match(rx->code, (PCRE2_SPTR)s, len, start, mopts, md, lim ? rx->mctx : NULL);
    if (rc == PCRE2_ERROR_HEAPLIMIT && lim) lim->out_of_memory = 1;
    return rc;
}

typedef struct lmd {
    pcre2_match_data *md;
} lmd;

static int md_gc(lua_State *L)
{
    lmd *m = luaL_checkudata(L, 1, MD_MT);
    pcre2_match_data_free(m->md); /* NULL is a no-op */
    m->md = NULL;
    return 0;
}

/* Match data for rx in a userdata pushed on the stack, so that a Lua error
 * (out of memory pushing a capture, a gsub callback's error) cannot leak it;
 * md_done frees it at once on the normal path. */
static pcre2_match_data *md_new(lua_State *L, lregex *rx)
{
    lmd *m = lua_newuserdatauv(L, sizeof *m, 0);
    m->md = NULL;
    luaL_setmetatable(L, MD_MT);
    m->md = pcre2_match_data_create_from_pattern(rx->code, NULL);
    if (!m->md) luaL_error(L, "tl.re: out of memory");
    return m->md;
}

/* Frees the match data of the box at idx and removes the box. */
static void md_done(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    lmd *m = lua_touserdata(L, idx);
    pcre2_match_data_free(m->md);
    m->md = NULL;
    lua_remove(L, idx);
}

static lregex *check_rx(lua_State *L, int idx)
{
    lregex *rx = luaL_checkudata(L, idx, REGEX_MT);
    if (!rx->code) luaL_argerror(L, idx, "regex is freed");
    return rx;
}

/* The cached compiled form of (pattern, flags) in this state, on the stack top. */
static lregex *cached(lua_State *L, int pat_idx, const char *flags)
{
    size_t len;
    const char *pat = luaL_checklstring(L, pat_idx, &len);
    if (lua_getfield(L, LUA_REGISTRYINDEX, CACHE_KEY) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, CACHE_KEY);
    }
    /* key: flags \1 pattern (the whole pattern, NUL bytes included) */
    lua_pushstring(L, flags ? flags : "");
    lua_pushliteral(L, "\x01");
    lua_pushvalue(L, pat_idx);
    lua_concat(L, 3);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, -3) == LUA_TUSERDATA) { /* cache, key, rx */
        lua_remove(L, -2);
        lua_remove(L, -2);
        return lua_touserdata(L, -1);
    }
    lua_pop(L, 1);
    compile_push(L, pat, len, flags); /* cache, key, rx */
    lua_pushvalue(L, -2);
    lua_pushvalue(L, -2);
    lua_rawset(L, -5);
    lua_remove(L, -2);
    lua_remove(L, -2);
    return lua_touserdata(L, -1);
}

static void push_caps(lua_State *L, lregex *rx, const char *s, const PCRE2_SIZE *ov, int rc)
{
    for (uint32_t g = 1; g <= rx->ncap; g++) {
        if ((int)g < rc && ov[2 * g] != PCRE2_UNSET)
            lua_pushlstring(L, s + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
        else
            lua_pushnil(L);
    }
}

/* Shared body of search/match/fullmatch: rx at 1, subject at 2, init at 3. */
static int do_find(lua_State *L, lregex *rx, uint32_t mopts)
{
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);
    lua_Integer init = luaL_optinteger(L, 3, 1);
    if (init < 1) init = 1;
    if ((size_t)init > len + 1) {
        lua_pushnil(L);
        return 1;
    }
    pcre2_match_data *md = md_new(L, rx);
    int box = lua_gettop(L);
    int rc = rx_exec(L, rx, s, len, (size_t)init - 1, mopts, md);
    if (rc < 0) {
        md_done(L, box);
        if (rc == PCRE2_ERROR_NOMATCH) {
            lua_pushnil(L);
            return 1;
        }
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof msg);
        return luaL_error(L, "tl.re: %s", (const char *)msg);
    }
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    luaL_checkstack(L, (int)rx->ncap + 2, "too many captures");
    lua_pushinteger(L, (lua_Integer)ov[0] + 1);
    lua_pushinteger(L, (lua_Integer)ov[1]);
    push_caps(L, rx, s, ov, rc);
    md_done(L, box);
    return 2 + (int)rx->ncap;
}

/* rx:search(s [, init]) -> start, end (1-based, inclusive), captures... | nil */
static int rx_search(lua_State *L) { return do_find(L, check_rx(L, 1), 0); }
/* rx:match(s [, init]): anchored at init (Python re.match). */
static int rx_match(lua_State *L) { return do_find(L, check_rx(L, 1), PCRE2_ANCHORED); }
/* rx:fullmatch(s): the whole subject. */
static int rx_fullmatch(lua_State *L)
{
    return do_find(L, check_rx(L, 1), PCRE2_ANCHORED | PCRE2_ENDANCHORED);
}

static int rx_test(lua_State *L)
{
    int n = do_find(L, check_rx(L, 1), 0);
    lua_pushboolean(L, !lua_isnil(L, -n));
    return 1;
}

/* Iterates the non-overlapping matches of rx in s (Python's finditer rules
 * for empty matches), calling fn for each; fn returns non-zero with an error
 * object on the stack to stop, which is then raised (the match data freed). */
typedef int (*match_fn)(lua_State *L, lregex *rx, const char *s, const PCRE2_SIZE *ov, int rc, void *ud);

static void each_match(lua_State *L, lregex *rx, const char *s, size_t len, lua_Integer limit, match_fn fn, void *ud)
{
    pcre2_match_data *md = md_new(L, rx);
    int box = lua_gettop(L);
    lua_insert(L, box - 1); /* under the caller's value on top (findall's list, gsub's buffer slot) */
    box--;
    size_t start = 0;
    uint32_t mopts = 0;
    lua_Integer count = 0;
    while (start <= len && (limit <= 0 || count < limit)) {
        int rc = rx_exec(L, rx, s, len, start, mopts, md);
        if (rc == PCRE2_ERROR_NOMATCH) {
            if (mopts == 0) break;
            /* empty match at start: advance one character and retry normally */
            start++;
            while (start < len && ((unsigned char)s[start] & 0xC0) == 0x80) start++;
            mopts = 0;
            continue;
        }
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            luaL_error(L, "tl.re: %s", (const char *)msg);
        }
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (fn(L, rx, s, ov, rc, ud)) lua_error(L);
        count++;
        start = ov[1];
        mopts = ov[0] == ov[1] ? (PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED) : 0;
    }
    md_done(L, box);
}

static int findall_one(lua_State *L, lregex *rx, const char *s, const PCRE2_SIZE *ov, int rc, void *ud)
{
    (void)ud;
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1) + 1;
    if (rx->ncap == 0) {
        lua_pushlstring(L, s + ov[0], ov[1] - ov[0]);
    } else if (rx->ncap == 1) {
        if (rc > 1 && ov[2] != PCRE2_UNSET)
            lua_pushlstring(L, s + ov[2], ov[3] - ov[2]);
        else
            lua_pushliteral(L, "");
    } else {
        lua_createtable(L, (int)rx->ncap, 0);
        for (uint32_t g = 1; g <= rx->ncap; g++) {
            if ((int)g < rc && ov[2 * g] != PCRE2_UNSET)
                lua_pushlstring(L, s + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
            else
                lua_pushliteral(L, "");
            lua_rawseti(L, -2, (lua_Integer)g);
        }
    }
    lua_rawseti(L, -2, n);
    return 0;
}

/* rx:findall(s) -> array, as Python re.findall (whole matches, the one group,
 * or arrays of groups; unmatched groups are ""). */
static int rx_findall(lua_State *L)
{
    lregex *rx = check_rx(L, 1);
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);
    lua_newtable(L);
    each_match(L, rx, s, len, 0, findall_one, NULL);
    return 1;
}

typedef struct gsub_state {
    luaL_Buffer *b;
    size_t last;
    int repl_idx;
} gsub_state;

static int gsub_one(lua_State *L, lregex *rx, const char *s, const PCRE2_SIZE *ov, int rc, void *ud)
{
    gsub_state *g = ud;
    luaL_addlstring(g->b, s + g->last, ov[0] - g->last);
    if (lua_type(L, g->repl_idx) == LUA_TFUNCTION) {
        lua_pushvalue(L, g->repl_idx);
        lua_pushlstring(L, s + ov[0], ov[1] - ov[0]);
        push_caps(L, rx, s, ov, rc);
        if (lua_pcall(L, 1 + (int)rx->ncap, 1, 0) != LUA_OK) return 1;
        if (lua_isstring(L, -1)) {
            luaL_addvalue(g->b);
        } else {
            lua_pop(L, 1);
            luaL_addlstring(g->b, s + ov[0], ov[1] - ov[0]); /* nil/false keeps the match */
        }
    } else {
        size_t rl;
        const char *r = lua_tolstring(L, g->repl_idx, &rl);
        luaL_addlstring(g->b, r, rl);
    }
    g->last = ov[1];
    return 0;
}

/* rx:gsub(s, repl [, count]) -> new string, n. repl is literal text or a
 * function(match, caps...) whose string result replaces the match. */
static int rx_gsub(lua_State *L)
{
    lregex *rx = check_rx(L, 1);
    size_t len;
    const char *s = luaL_checklstring(L, 2, &len);
    luaL_argexpected(L, lua_isstring(L, 3) || lua_isfunction(L, 3), 3, "string or function");
    lua_Integer limit = luaL_optinteger(L, 4, 0);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    gsub_state g = {&b, 0, 3};
    each_match(L, rx, s, len, limit, gsub_one, &g);
    luaL_addlstring(&b, s + g.last, len - g.last);
    luaL_pushresult(&b);
    return 1;
}

static int rx_gc(lua_State *L)
{
    lregex *rx = luaL_checkudata(L, 1, REGEX_MT);
    if (rx->code) pcre2_code_free(rx->code);
    pcre2_match_context_free(rx->mctx); /* NULL is a no-op */
    rx->code = NULL;
    rx->mctx = NULL;
    return 0;
}

static int rx_tostring(lua_State *L)
{
    lregex *rx = luaL_checkudata(L, 1, REGEX_MT);
    lua_pushfstring(L, "regex (%d groups)", rx->code ? (int)rx->ncap : -1);
    return 1;
}

/* tl.re.compile(pattern [, flags]) */
static int re_compile(lua_State *L)
{
    size_t len;
    const char *pat = luaL_checklstring(L, 1, &len);
    compile_push(L, pat, len, luaL_optstring(L, 2, NULL));
    return 1;
}

/* tl.re.search(pattern, s [, flags [, init]]): as rx:search with a cached pattern. */
static int re_search(lua_State *L)
{
    const char *flags = luaL_optstring(L, 3, NULL);
    lua_Integer init = luaL_optinteger(L, 4, 1);
    lregex *rx = cached(L, 1, flags);
    lua_replace(L, 1);
    lua_settop(L, 2);
    lua_pushinteger(L, init);
    return do_find(L, rx, 0);
}

static int re_test(lua_State *L)
{
    int n = re_search(L);
    lua_pushboolean(L, !lua_isnil(L, -n));
    return 1;
}

static int re_findall(lua_State *L)
{
    const char *flags = luaL_optstring(L, 3, NULL);
    cached(L, 1, flags);
    lua_replace(L, 1);
    lua_settop(L, 2);
    return rx_findall(L);
}

/* tl.re.escape(s): s with every regex metacharacter escaped. */
static int re_escape(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < len; i++) {
        if (strchr("\\^$.|?*+()[]{}-#/ ", s[i]) && s[i]) luaL_addchar(&b, '\\');
        luaL_addchar(&b, s[i]);
    }
    luaL_pushresult(&b);
    return 1;
}

void tl_lregex_push(lua_State *L)
{
    static const luaL_Reg methods[] = {{"search", rx_search}, {"match", rx_match}, {"fullmatch", rx_fullmatch},
                                       {"test", rx_test},     {"findall", rx_findall}, {"gsub", rx_gsub},
                                       {NULL, NULL}};
    if (luaL_newmetatable(L, REGEX_MT)) {
        luaL_newlib(L, methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, rx_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, rx_tostring);
        lua_setfield(L, -2, "__tostring");
        tl_lua_protect_metatable(L, REGEX_MT);
    }
    lua_pop(L, 1);
    if (luaL_newmetatable(L, MD_MT)) {
        lua_pushcfunction(L, md_gc);
        lua_setfield(L, -2, "__gc");
        tl_lua_protect_metatable(L, MD_MT);
    }
    lua_pop(L, 1);
    static const luaL_Reg funcs[] = {{"compile", re_compile}, {"search", re_search}, {"test", re_test},
                                     {"findall", re_findall}, {"escape", re_escape}, {NULL, NULL}};
    luaL_newlib(L, funcs);
}
