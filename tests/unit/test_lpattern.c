/* test_lpattern.c — differential test of src/lua/lpattern.c (the pattern
 * functions of sandboxed states) against Lua's own string library, in one
 * state that holds both:
 *  1. hand-written edge cases: Lua snippets run once with the real
 *     functions and once with ours (every feature of §6.4 / §6.4.1, the
 *     errors, the recursion limit);
 *  2. random cases from a seeded generator over a small alphabet (so that
 *     matches happen): find (plain or not), match, gmatch (every tuple),
 *     gsub (string/table/function/number/invalid replacements, max count),
 *     with random init values; results, captures, positions, counts and
 *     error messages must be identical (argument errors modulo the function
 *     name, which only Lua's lookup of the caller knows);
 *  3. installation (string table and the string metatable) and the time
 *     limit: a state with a deadline stops the backtracking attack.
 * Usage: test_lpattern [CASES [SEED]] (default 300000 cases, seed 1). */
#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/limits.h"
#include "lua/lpattern.h"
#include "test.h"
#include "util/clock.h"

tl_test_ctx tl_test_state;

/* --- a growable text buffer --------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void buf_add(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            fprintf(stderr, "test_lpattern: out of memory\n");
            exit(1);
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void buf_str(buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static void buf_fmt(buf *b, const char *fmt, long long v)
{
    char t[64];
    int n = snprintf(t, sizeof t, fmt, v);
    buf_add(b, t, (size_t)n);
}

/* A Lua-ish literal of bytes, for failure reports. */
static void buf_quote(buf *b, const char *s, size_t n)
{
    buf_str(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char t[2] = {'\\', (char)c};
            buf_add(b, t, 2);
        } else if (c >= 32 && c < 127) {
            buf_add(b, (const char *)&c, 1);
        } else {
            buf_fmt(b, "\\%lld", c);
        }
    }
    buf_str(b, "\"");
}

/* Values idx..top as text: type tag and exact content. */
static void ser_values(buf *b, lua_State *L, int from, int to)
{
    for (int i = from; i <= to; i++) {
        switch (lua_type(L, i)) {
        case LUA_TNIL: buf_str(b, "nil"); break;
        case LUA_TBOOLEAN: buf_str(b, lua_toboolean(L, i) ? "true" : "false"); break;
        case LUA_TNUMBER:
            if (lua_isinteger(L, i)) {
                buf_fmt(b, "i%lld", (long long)lua_tointeger(L, i));
            } else {
                char t[64];
                int n = snprintf(t, sizeof t, "f%.17g", lua_tonumber(L, i));
                buf_add(b, t, (size_t)n);
            }
            break;
        case LUA_TSTRING: {
            size_t n;
            const char *s = lua_tolstring(L, i, &n);
            buf_str(b, "s");
            buf_quote(b, s, n);
            break;
        }
        default: buf_str(b, luaL_typename(L, i)); break;
        }
        buf_str(b, ";");
    }
}

/* An error message; in "bad argument #n to 'NAME' (...)" the name is
 * dropped (Lua finds it by looking the function up in the loaded tables,
 * where only one of the two versions is). */
static void ser_error(buf *b, lua_State *L)
{
    size_t n;
    const char *m = lua_tolstring(L, -1, &n);
    if (!m) {
        buf_str(b, "E<non-string error>");
        return;
    }
    buf_str(b, "E");
    const char *to;
    if (strncmp(m, "bad argument #", 14) == 0 && (to = strstr(m, " to '")) != NULL) {
        const char *q = strchr(to + 5, '\'');
        if (q) {
            buf_add(b, m, (size_t)(to - m) + 5);
            buf_add(b, q, n - (size_t)(q - m));
            return;
        }
    }
    buf_add(b, m, n);
}

/* Calls the function below the nargs arguments on the top (pops them all)
 * and appends its results or its error. */
static void run_into(buf *b, lua_State *L, int nargs)
{
    int base = lua_gettop(L) - nargs - 1;
    if (lua_pcall(L, nargs, LUA_MULTRET, 0) != LUA_OK) ser_error(b, L);
    else ser_values(b, L, base + 1, lua_gettop(L));
    lua_settop(L, base);
}

/* gmatch: every tuple of the iteration (at most 1000), then the end or the
 * error. Arguments: gmatch function, then its arguments. */
static void run_gmatch_into(buf *b, lua_State *L, int nargs)
{
    int base = lua_gettop(L) - nargs - 1;
    if (lua_pcall(L, nargs, 1, 0) != LUA_OK) {
        ser_error(b, L);
        lua_settop(L, base);
        return;
    }
    int it = lua_gettop(L);
    for (int k = 0; k < 1000; k++) {
        lua_pushvalue(L, it);
        if (lua_pcall(L, 0, LUA_MULTRET, 0) != LUA_OK) {
            ser_error(b, L);
            break;
        }
        if (lua_gettop(L) == it || lua_isnil(L, it + 1)) {
            buf_str(b, "end");
            break;
        }
        ser_values(b, L, it + 1, lua_gettop(L));
        buf_str(b, "|");
        lua_settop(L, it);
    }
    lua_settop(L, base);
}

/* --- the state: both libraries ------------------------------------------ */

static const char *const FUNCS[] = {"find", "match", "gmatch", "gsub"};

/* Registry fields: "nat" and "ours", each a copy of the string library with
 * the real or our four functions; "pre" the snippet preamble helpers. */
static lua_State *new_state(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_getglobal(L, "string");
    lua_newtable(L); /* nat */
    lua_pushnil(L);
    while (lua_next(L, -3)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -4);
    }
    lua_setfield(L, LUA_REGISTRYINDEX, "nat");
    lua_pop(L, 1);
    tl_lpattern_install(L);
    lua_getglobal(L, "string");
    lua_newtable(L); /* ours */
    lua_pushnil(L);
    while (lua_next(L, -3)) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, -4);
    }
    lua_setfield(L, LUA_REGISTRYINDEX, "ours");
    lua_pop(L, 1);
    return L;
}

static int failures_shown;

static void report(const char *what, const buf *args, const buf *nat, const buf *ours)
{
    if (failures_shown++ >= 25) return;
    fprintf(stderr, "MISMATCH %s(%s)\n  lua:  %s\n  ours: %s\n", what, args->p ? args->p : "",
            nat->p ? nat->p : "", ours->p ? ours->p : "");
}

/* --- 1. edge cases ------------------------------------------------------- */

/* Each snippet is the body of a chunk that gets S (the library under test)
 * and G (S.gmatch's tuples as one string), and returns what to compare. */
static const char *const PREAMBLE =
    "local S = ...\n"
    "local function G(...)\n"
    "  local t = {}\n"
    "  for a, b, c in S.gmatch(...) do\n"
    "    t[#t + 1] = tostring(a) .. ',' .. tostring(b) .. ',' .. tostring(c) .. ':' .. math.type(a) ..\n"
    "      tostring(math.type(b))\n"
    "    if #t > 200 then break end\n"
    "  end\n"
    "  return table.concat(t, '|')\n"
    "end\n";

static const char *const EDGE[] = {
    /* find: init, plain, specials */
    "return S.find('hello world', 'o')",
    "return S.find('hello world', 'o', 6)",
    "return S.find('hello world', 'o', -3)",
    "return S.find('hello world', 'o', -100)",
    "return S.find('hello world', 'o', 0)",
    "return S.find('hello', '', 6)",
    "return S.find('hello', '', 7)",
    "return S.find('hello', '', 100)",
    "return S.find('hello', '', -1)",
    "return S.find('', '')",
    "return S.find('', '', 2)",
    "return S.find('', 'a')",
    "return S.find('hello', 'l', math.mininteger)",
    "return S.find('hello', 'l', math.maxinteger)",
    "return S.find('a.b', '.', 1, true)",
    "return S.find('a.b', '.', 1, false)",
    "return S.find('a.b', '.', 1, 0)",
    "return S.find('a+b', 'a+b', 1, true)",
    "return S.find('a+b', 'a+b')",
    "return S.find('x)y', ')')",
    "return S.find('x]y', ']')",
    "return S.find('x)y', ')', 1, true)",
    "return S.find('abc', 'b', '2')",
    "return S.find('abc', 'b', 1.0)",
    "return S.find('abc', 'b', 1.5)",
    "return S.find('abc', 'b', 'x')",
    "return S.find(12345, 34)",
    "return S.find('abc')",
    "return S.find(nil, 'a')",
    "return S.find({}, 'a')",
    "return S.find('a\\0b\\0c', '\\0c')",
    "return S.find('a\\0b\\0c', '%z')",
    "return S.find('a\\0b\\0c', '[\\0]')",
    "return S.find('a\\0b', '.\\0.')",
    "return S.find('abc', '^b')",
    "return S.find('abc', '^a')",
    "return S.find('abc', '^b', 2)",
    "return S.find('abc', 'c$')",
    "return S.find('abc', 'b$')",
    "return S.find('a$c', '$c')",
    "return S.find('a^c', 'a^c')",
    "return S.find('abc', '^')",
    "return S.find('abc', '$')",
    "return S.find('abc', '^$')",
    "return S.find('', '^$')",
    "return S.find('abc', '^abc$')",
    "return S.find('abc', '()')",
    "return S.find('abc', '()', 4)",
    "return S.find('abc', 'b()')",
    "return S.find('key = value', '(%w+)%s*=%s*(%w+)')",
    /* match */
    "return S.match('hello world', '%w+')",
    "return S.match('hello world', '(%w+) (%w+)')",
    "return S.match('hello world', '()ll()')",
    "return S.match('hello', '(h)(e)(l)(l)(o)')",
    "return S.match('  trim me  ', '^%s*(.-)%s*$')",
    "return S.match('2024-01-15', '(%d+)-(%d+)-(%d+)')",
    "return S.match('abc', '((a)(b))')",
    "return S.match('abc', '(a(b(c)))')",
    "return S.match('abc', 'a(.-)c')",
    "return S.match('abc', 'x')",
    "return S.match('abc', '')",
    "return S.match('abc', '', 10)",
    "return S.match('abc', '.', -1)",
    "return S.match('abc', '^(a)', 2)",
    /* classes */
    "return S.match('aZ9 _.\\t\\n', '%a+')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%a')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%A')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%c')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%d')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%g')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%l')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%p')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%s')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%u')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%w')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%x')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%X')",
    "return G('aZ9 _.\\t\\n\\1\\127\\200', '%W')",
    "return G('a.b%c(d)', '%.')",
    "return G('a.b%c(d)', '%%')",
    "return G('a.b%c(d)', '%(')",
    "return G('zZ', '%z')",
    "return G('zZ', '%Z')",
    "return G('a-b', '%-')",
    /* sets */
    "return G('abcxyz-]^', '[a-c]')",
    "return G('abcxyz-]^', '[^a-c]')",
    "return G('abcxyz-]^', '[]]')",
    "return G('abcxyz-]^', '[^]]')",
    "return G('abcxyz-]^', '[a-]')",
    "return G('abcxyz-]^', '[-a]')",
    "return G('abcxyz-]^', '[%-]')",
    "return G('abcxyz-]^', '[%]]')",
    "return G('abcxyz-]^', '[\\\\^]')",
    "return G('abcxyz-]^', '[%^]')",
    "return G('abcxyz-]^', '[a^]')",
    "return G('abcxyz-]^', '[c-a]')",
    "return G('abcxyz-]^', '[%a-]')",
    "return G('ab1 2_', '[%d_]')",
    "return G('ab1 2_', '[^%s%d]')",
    "return G('ab1 2_', '[%w%s]+')",
    "return G('a]b', '[]a]+')",
    "return G('x-y', '[x-]')",
    "return G('x-y', '[a%-z]')",
    "return G('abc', '[a-b-c]')",
    "return G('\\200\\255a', '[\\128-\\255]')",
    /* quantifiers */
    "return S.match('aaab', 'a*')",
    "return S.match('aaab', 'a+')",
    "return S.match('aaab', 'a-')",
    "return S.match('aaab', 'a-b')",
    "return S.match('aaab', 'a?')",
    "return S.match('aaab', 'a?a?a?a?b')",
    "return S.match('b', 'a+')",
    "return S.match('b', 'a*b')",
    "return S.match('<a><b>', '<(.-)>')",
    "return S.match('<a><b>', '<(.*)>')",
    "return S.match('aaa', '^(a-)a$')",
    "return S.match('aaa', '(a*)(a*)')",
    "return S.match('aaa', '(a-)(a*)')",
    "return S.match('xyz', '.-$')",
    "return S.match('a*b', 'a%*b')",
    "return S.match('*a', '*a')",
    "return S.match('+a', '+a')",
    "return S.match('-a', '-a')",
    "return S.match('?a', '?a')",
    "return S.match('a', 'a**')",
    "return S.match('a*', 'a?*')",
    "return S.match('[a]', '%[(.)%]')",
    /* back-references */
    "return S.match('abab', '(ab)%1')",
    "return S.match('abba', '(a)(b)%2%1')",
    "return S.match('say \"hi\" x', '([\"\\'])(.-)%1')",
    "return S.match('aa', '()a%1')",
    "return S.match('aa', '(a)%0')",
    "return S.match('aa', '(a)%2')",
    "return S.match('aa', '(a%1)')",
    "return S.match('aa', '%1(a)')",
    "return S.match('aaa', '(a*)%1')",
    /* %b */
    "return S.match('f(a(b)c)d)', '%b()')",
    "return S.match('f(a(b)c', '%b()')",
    "return S.match('[[x]]', '%b[]')",
    "return S.match('aXbXa', '%bXX')",
    "return S.match('xy', '%b')",
    "return S.match('xy', '%bx')",
    "return S.match('x(y)', 'x%b()$')",
    "return G('(a)(b)((c))', '%b()')",
    /* %f */
    "return G('THE (quick) fox', '%f[%a]%a+')",
    "return G('THE (quick) fox', '%f[%a]')",
    "return G('THE (quick) fox', '%f[%A]')",
    "return G('hello', '%f[%z]')",
    "return G('hello', '%f[^%z]')",
    "return G('ab', '%f[a-z]')",
    "return S.find('a', '%fa')",
    "return S.find('a', '%f')",
    "return S.find('a', '%f[a')",
    "return S.find('aa', '%f[]a]')",
    /* malformed patterns and bad captures */
    "return S.find('a', '%')",
    "return S.find('a', 'a%')",
    "return S.find('a', '[a')",
    "return S.find('a', '[')",
    "return S.find('a', '[^')",
    "return S.find('a', '[%')",
    "return S.find('a', '[]')",
    "return S.find('a', '[a%]')",
    "return S.find('a', '(')",
    "return S.find('a', '(a')",
    "return S.find('a', 'a)')",
    "return S.find('a', ')')",
    "return S.find('a', '())')",
    "return S.find('b', 'a)')",
    "return S.find('', '(()')",
    "return S.match('a', '(a')",
    "return S.match('a', '(()')",
    "return S.find('a', '%1')",
    "return S.find('a', '(a)%2')",
    "return S.find('a', '%0')",
    "return S.find('', '[a')",
    "return S.find('b', 'a[')",
    "return S.find('a', 'a[')",
    "return S.find('', '%')",
    "return S.match('abc', '%g%')",
    /* captures limit and recursion depth */
    "return S.match(string.rep('a', 40), string.rep('(a)', 32))",
    "return S.match(string.rep('a', 40), string.rep('(a)', 33))",
    "return S.match(string.rep('a', 40), string.rep('()', 33))",
    "return S.match(string.rep('a', 300), string.rep('a?', 198))",
    "return S.match(string.rep('a', 300), string.rep('a?', 199))",
    "return S.match(string.rep('a', 300), string.rep('a?', 200))",
    "return S.match(string.rep('a', 300), string.rep('a?', 201))",
    "return S.match(string.rep('b', 300), string.rep('a?', 300))",
    "return S.match(string.rep('a', 300), string.rep('a*', 199))",
    "return S.match(string.rep('a', 300), string.rep('a*', 200))",
    "return S.match(string.rep('a', 300), string.rep('a-', 250))",
    "return S.match(string.rep('a', 300), string.rep('a*', 250) .. 'b')",
    "return S.match(string.rep('a', 30), string.rep('(', 31) .. 'a' .. string.rep(')', 31))",
    /* the limit reached right where a try could be skipped (next item a plain character) */
    "return S.match(string.rep('a', 199) .. 'x', string.rep('a?', 199) .. 'x*c')",
    "return S.match(string.rep('a', 199) .. 'x', string.rep('a?', 199) .. 'x-c')",
    "return S.gsub(string.rep('a', 199) .. 'x', string.rep('a?', 199) .. 'x+c', '')",
    "return S.match(string.rep('a', 400), string.rep('a', 400))",
    "return S.match(string.rep('a', 5000), string.rep('a', 5000) .. '$')",
    "return S.match(string.rep('x', 100000), '.*x')",
    "return S.match(string.rep('x', 100000), '.-$')",
    "return S.find(string.rep('x', 100000) .. 'y', 'x*y')",
    "return S.gsub(string.rep('a', 300), string.rep('a?', 200), '')",
    "return G(string.rep('a', 300), string.rep('a?', 200))",
    /* gmatch */
    "return G('hello world from Lua', '%a+')",
    "return G('k=v, x=y', '(%w+)=(%w+)')",
    "return G('abc', '')",
    "return G('abc', '()')",
    "return G('abc', 'x*')",
    "return G('abc', '.-')",
    "return G('abc', 'b*')",
    "return G('aaa', 'a-')",
    "return G('a,b,,c', '([^,]*)')",
    "return G('abc', '^a')",
    "return G('^a^a', '^a')",
    "return G('abc', 'c$')",
    "return G('hello world', '%a+', 3)",
    "return G('hello world', '%a+', -5)",
    "return G('hello world', '%a+', 0)",
    "return G('hello world', '%a+', -100)",
    "return G('hello', '', 6)",
    "return G('hello', '', 7)",
    "return G('hello', '()', 100)",
    "return G('abc', '()(.)')",
    "return G('a1b2c3', '%a(%d)')",
    "return G('abc', '(')",
    "return G('abc', '%')",
    "return G('abc', '[')",
    "return S.gmatch('abc')",
    "return S.gmatch('abc', 'a', 'x')",
    "local it = S.gmatch('a b', '%a') return it(), it(), it(), it()",
    "local it = S.gmatch(123, '%d') return it(), it(), it(), it()",
    "local it = S.gmatch('a b c', '%a') local x = it() return x, it('ignored', 1), it()",
    /* gsub: string replacement */
    "return S.gsub('hello world', 'o', '0')",
    "return S.gsub('hello world', 'o', '0', 1)",
    "return S.gsub('hello world', 'o', '0', 0)",
    "return S.gsub('hello world', 'o', '0', -1)",
    "return S.gsub('hello world', 'o', '0', 1.0)",
    "return S.gsub('hello world', 'o', '0', 1.5)",
    "return S.gsub('hello world', 'o', '0', '2')",
    "return S.gsub('hello world', 'o', '0', math.maxinteger)",
    "return S.gsub('hello world', 'x', '0')",
    "return S.gsub('hello world', '(%w+)', '<%1>')",
    "return S.gsub('hello world', '%w+', '<%0>')",
    "return S.gsub('hello world', '%w+', '<%1>')",
    "return S.gsub('hello world', '%w+', '<%2>')",
    "return S.gsub('hello world', '(%w+) (%w+)', '%2 %1')",
    "return S.gsub('hello world', '(%w+)', '%%1')",
    "return S.gsub('hello world', '(%w+)', '100%')",
    "return S.gsub('hello world', '(%w+)', '%a')",
    "return S.gsub('hello world', '(%w+)', '%')",
    "return S.gsub('hello world', '(o)', '%9')",
    "return S.gsub('hello world', '()o', '%1')",
    "return S.gsub('hello world', '()o()', '[%1-%2]')",
    "return S.gsub('hello world', '(o', 'x')",
    "return S.gsub('hello world', '(o', '%1')",
    "return S.gsub('hello world', '(o', '%0')",
    "return S.gsub('hello', '', '-')",
    "return S.gsub('hello', 'x*', '-')",
    "return S.gsub('hello', 'l*', '-')",
    "return S.gsub('hello', '.-', '-')",
    "return S.gsub('abc', '%w', '%0%0')",
    "return S.gsub('abc', '^a', 'x')",
    "return S.gsub('abc', '^b', 'x')",
    "return S.gsub('abc', '^', 'x')",
    "return S.gsub('abc', '$', 'x')",
    "return S.gsub('abc', '^.', 'x', 5)",
    "return S.gsub('', '', 'x')",
    "return S.gsub('', 'a*', 'x')",
    "return S.gsub('abc', 'b', 42)",
    "return S.gsub('abc', 'b', 1.5)",
    "return S.gsub(123, 2, 9)",
    "return S.gsub('abc', 'b', true)",
    "return S.gsub('abc', 'b', nil)",
    "return S.gsub('abc', 'b')",
    "return S.gsub('abc', 'b', nil, 'x')",
    "return S.gsub('abc', 'b', 'x', 'y')",
    "return S.gsub('a\\0b', '%z', '<%0>')",
    "return S.gsub('a\\0b', '\\0', 'x\\0y')",
    /* gsub: table replacement */
    "return S.gsub('$name is $age', '%$(%w+)', {name = 'Bob', age = 42})",
    "return S.gsub('$name is $x', '%$(%w+)', {name = 'Bob'})",
    "return S.gsub('$name is $x', '%$(%w+)', {name = false})",
    "return S.gsub('$name', '%$(%w+)', {name = {}})",
    "return S.gsub('$name', '%$(%w+)', {name = true})",
    "return S.gsub('$name', '%$(%w+)', {name = 1.25})",
    "return S.gsub('abc', '%w', {a = 1, b = 2})",
    "return S.gsub('abc', '()b', {[2] = 'two'})",
    "return S.gsub('abc', 'b', setmetatable({}, {__index = function(_, k) return k:upper() end}))",
    "return S.gsub('abc', '(b', {b = 'x'})",
    /* gsub: function replacement */
    "return S.gsub('hello world', '%w+', function(w) return w:upper() end)",
    "return S.gsub('hello world', '(%w)(%w*)', function(a, b) return a:upper() .. b end)",
    "return S.gsub('hello world', '%w+', function() end)",
    "return S.gsub('hello world', '%w+', function() return false end)",
    "return S.gsub('hello world', '%w+', function() return 7 end)",
    "return S.gsub('hello world', '%w+', function() return {} end)",
    "return S.gsub('hello world', '%w+', function() error('boom') end)",
    "return S.gsub('hello world', '%w+', function() error({}) end)",
    "return S.gsub('abc', '()', function(p) return '[' .. p .. ']' end)",
    "return S.gsub('abc', '', function(...) return select('#', ...) end)",
    "return S.gsub('abc', '(a)(b)(c)', function(...) return table.concat({...}, '+') end)",
    "return S.gsub('abc', '.', function(c) return S.gsub(c, '.', '%0%0') end)",
    "local n = 0 local r = S.gsub('aaa', 'a', function() n = n + 1 end) return r, n",
    "return S.gsub('abc', '(a', function(x) return x end)",
    "return S.gsub('abc', 'a', {}, 0)",
    "return S.gsub('x = 1, y = 2', '(%w+) = (%w+)', '%2 = %1')",
    "return S.gsub('one two  three', '%s+', ' ')",
    "return S.gsub('  trim  ', '^%s*(.-)%s*$', '%1')",
    "return S.gsub('a.b.c', '%.', '/')",
    "return S.gsub('a.b.c', '.', '/')",
    "return S.gsub('camelCaseName', '(%u)', function(c) return '_' .. c:lower() end)",
    "return S.gsub('a,b,,c', ',', ';', 2)",
    "return S.gsub('abc', '%f[%w]%w+', 'W')",
    "return S.gsub('THE (quick) fox', '%f[%a]%a+', '<%0>')",
    "return S.gsub('x(a(b)c)y', '%b()', '')",
};

static void edge_cases(lua_State *L)
{
    int n = (int)(sizeof EDGE / sizeof *EDGE), bad = 0;
    for (int i = 0; i < n; i++) {
        buf code = {0}, res[2] = {{0}, {0}};
        buf_str(&code, PREAMBLE);
        buf_str(&code, EDGE[i]);
        for (int k = 0; k < 2; k++) {
            if (luaL_loadbuffer(L, code.p, code.n, "=edge") != LUA_OK) {
                fprintf(stderr, "edge case %d does not compile: %s\n", i, lua_tostring(L, -1));
                exit(1);
            }
            lua_getfield(L, LUA_REGISTRYINDEX, k == 0 ? "nat" : "ours");
            run_into(&res[k], L, 1);
        }
        int same = strcmp(res[0].p, res[1].p) == 0;
        CHECK(same);
        if (!same) {
            bad++;
            buf what = {0};
            buf_str(&what, EDGE[i]);
            report("edge", &what, &res[0], &res[1]);
            free(what.p);
        }
        free(code.p);
        free(res[0].p);
        free(res[1].p);
    }
    printf("edge cases: %d, %d different\n", n, bad);
}

/* --- 2. random cases ----------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng;

static uint32_t rnd(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 2685821657736338717ULL) >> 32);
}

static int below(rng *r, int n) { return (int)(rnd(r) % (uint32_t)n); }
static int chance(rng *r, int percent) { return below(r, 100) < percent; }

static const char SUBJECT_CHARS[] = "aaaaabbbbcccab  ()(%-.^$1_A\n]";

static void gen_subject(rng *r, buf *s)
{
    if (chance(r, 6)) { /* any bytes, NUL included */
        int n = below(r, 14);
        for (int i = 0; i < n; i++) {
            char c = (char)below(r, 256);
            buf_add(s, &c, 1);
        }
        return;
    }
    int n = chance(r, 10) ? below(r, 60) : below(r, 21);
    for (int i = 0; i < n; i++) buf_add(s, &SUBJECT_CHARS[below(r, (int)sizeof SUBJECT_CHARS - 1)], 1);
}

static const char *const ATOMS[] = {
    "a", "a", "a", "b", "b", "c", ".", ".", " ", "(", ")", "%a", "%d", "%s", "%w", "%l", "%u", "%p", "%x",
    "%c", "%g", "%A", "%D", "%S", "%W", "%%", "%.", "%(", "%)", "%-", "%[", "%]", "%z", "%Z", "%^", "%$",
    "[ab]", "[^a]", "[a-c]", "[%a-]", "[^%s]", "[]a]", "[a-]", "[%]]", "[^]b]", "[%w_]", "[b-a]", "[-a]",
    "[a%-c]", "[^%a%d]", "[%(%)]", "[.]", "[^.]", "]", "-", "*", "+", "?", "^", "$", "1", "_", "\n"};
static const char *const QUANTS[] = {"*", "+", "-", "?"};
static const char *const SPECIALS[] = {"%b()", "%bab", "%b((", "%bc ", "%f[%a]", "%f[^a]", "%f[a-c]",
                                        "%f[%s]", "%f[%z]", "%f[^%z]", "%f[%w]", "%f[.]"};
static const char *const MALFORMED[] = {"(", ")", "[", "%", "[a", "%f", "%fa", "%b", "%ba", "[^", "%9",
                                         "%0", "[%", "(()", "%f[", "[]"};

static void gen_seq(rng *r, buf *p, int depth, int *quants)
{
    int n = 1 + below(r, depth == 0 ? 6 : 3);
    for (int i = 0; i < n; i++) {
        int k = below(r, 100);
        if (k < 62) {
            buf_str(p, ATOMS[below(r, (int)(sizeof ATOMS / sizeof *ATOMS))]);
            if (*quants < 4 && chance(r, 35)) {
                buf_str(p, QUANTS[below(r, 4)]);
                ++*quants;
            }
        } else if (k < 76 && depth < 2) {
            buf_str(p, "(");
            gen_seq(r, p, depth + 1, quants);
            buf_str(p, ")");
        } else if (k < 80) {
            buf_str(p, "()");
        } else if (k < 86) {
            char t[3] = {'%', (char)('1' + below(r, 3)), 0};
            buf_str(p, t);
        } else if (k < 94) {
            buf_str(p, SPECIALS[below(r, (int)(sizeof SPECIALS / sizeof *SPECIALS))]);
        } else if (k < 97) {
            buf_str(p, MALFORMED[below(r, (int)(sizeof MALFORMED / sizeof *MALFORMED))]);
        } else {
            char c = (char)below(r, 256);
            buf_add(p, &c, 1);
        }
    }
}

static void gen_pattern(rng *r, buf *p)
{
    int quants = 0;
    if (chance(r, 20)) buf_str(p, "^");
    gen_seq(r, p, 0, &quants);
    if (chance(r, 20)) buf_str(p, "$");
    if (chance(r, 3) && p->n > 0) p->n = (size_t)below(r, (int)p->n); /* cut anywhere */
    if (p->p) p->p[p->n] = '\0';
}

static const char *const TEMPLATE_PARTS[] = {"x", "%0", "%1", "%2", "%3", "%%", "<", ">", "-", "%1%1", "%",
                                             "%a", "%9", "\xc3\xa9", ""};

/* Pushes a random init argument (or nothing); returns how many pushed. */
static int push_init(lua_State *L, rng *r, buf *desc)
{
    if (chance(r, 55)) return 0;
    lua_Integer v;
    int k = below(r, 100);
    if (k < 85) v = below(r, 51) - 25;
    else if (k < 90) v = LUA_MININTEGER;
    else if (k < 95) v = LUA_MAXINTEGER;
    else v = 1000;
    lua_pushinteger(L, v);
    buf_fmt(desc, ", %lld", (long long)v);
    return 1;
}

static void random_cases(lua_State *L, long cases, uint64_t seed)
{
    rng r = {seed * 0x9E3779B97F4A7C15ULL + 1};
    const char *lua_side =
        "local fa = function(...)\n"
        "  local n = select('#', ...) local t = {...}\n"
        "  for i = 1, n do t[i] = tostring(t[i]) end\n"
        "  local a = ...\n"
        "  if a == '' then return nil end\n"
        "  if a == 'b' then return false end\n"
        "  if a == 'c' then return 7 end\n"
        "  return '<' .. n .. ':' .. table.concat(t, ',') .. '>'\n"
        "end\n"
        "local fb = function(a)\n"
        "  if a == 'ab' then return {} end\n"
        "  if a == 'c' then return 1.5 end\n"
        "  if a == 'a' then return true end\n"
        "  return a .. a\n"
        "end\n"
        "local ta = {a = 'A', b = false, ab = 12, c = 2.5, [1] = 'one', [2] = 'two', [' '] = '_', ['()'] = 'P'}\n"
        "local tb = setmetatable({a = {}}, {__index = function(t, k) return type(k) == 'string' and k:upper() or nil end})\n"
        "return {fa, fb, ta, tb}\n";
    if (luaL_dostring(L, lua_side) != LUA_OK) {
        fprintf(stderr, "test_lpattern: %s\n", lua_tostring(L, -1));
        exit(1);
    }
    int repls = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, "nat");
    lua_getfield(L, LUA_REGISTRYINDEX, "ours");
    int libs[2] = {repls + 1, repls + 2};
    long diffs = 0, errors = 0, matched = 0;
    for (long c = 0; c < cases; c++) {
        buf s = {0}, p = {0}, t = {0};
        gen_subject(&r, &s);
        gen_pattern(&r, &p);
        int fn = below(&r, 4);
        /* the arguments, pushed once per library from the same choices */
        uint64_t saved = r.s;
        buf res[2] = {{0}, {0}}, desc = {0};
        for (int k = 0; k < 2; k++) {
            r.s = saved;
            desc.n = 0;
            lua_getfield(L, libs[k], FUNCS[fn]);
            lua_pushlstring(L, s.p ? s.p : "", s.n);
            lua_pushlstring(L, p.p ? p.p : "", p.n);
            buf_quote(&desc, s.p ? s.p : "", s.n);
            buf_str(&desc, ", ");
            buf_quote(&desc, p.p ? p.p : "", p.n);
            int nargs = 2;
            if (fn == 3) { /* gsub: replacement, max */
                int kind = below(&r, 100);
                if (kind < 50) {
                    t.n = 0;
                    int parts = below(&r, 5);
                    for (int i = 0; i < parts; i++)
                        buf_str(&t, TEMPLATE_PARTS[below(&r, (int)(sizeof TEMPLATE_PARTS / sizeof *TEMPLATE_PARTS))]);
                    lua_pushlstring(L, t.p ? t.p : "", t.n);
                    buf_str(&desc, ", ");
                    buf_quote(&desc, t.p ? t.p : "", t.n);
                } else if (kind < 90) {
                    int which = below(&r, 4);
                    lua_rawgeti(L, repls, which + 1);
                    buf_str(&desc, (const char *[]){", fa", ", fb", ", ta", ", tb"}[which]);
                } else if (kind < 95) {
                    lua_pushinteger(L, 7);
                    buf_str(&desc, ", 7");
                } else {
                    if (chance(&r, 50)) lua_pushboolean(L, 1);
                    else lua_pushnil(L);
                    buf_str(&desc, ", true|nil");
                }
                nargs++;
                if (chance(&r, 30)) {
                    lua_Integer m = below(&r, 6) - 1;
                    lua_pushinteger(L, m);
                    buf_fmt(&desc, ", %lld", (long long)m);
                    nargs++;
                }
                run_into(&res[k], L, nargs);
            } else if (fn == 2) {
                nargs += push_init(L, &r, &desc);
                run_gmatch_into(&res[k], L, nargs);
            } else {
                int ni = push_init(L, &r, &desc);
                nargs += ni;
                if (fn == 0 && chance(&r, 20)) {
                    if (!ni) {
                        lua_pushinteger(L, 1);
                        buf_str(&desc, ", 1");
                        nargs++;
                    }
                    int plain = chance(&r, 50);
                    lua_pushboolean(L, plain);
                    buf_str(&desc, plain ? ", true" : ", false");
                    nargs++;
                }
                run_into(&res[k], L, nargs);
            }
        }
        int same = strcmp(res[0].p ? res[0].p : "", res[1].p ? res[1].p : "") == 0;
        CHECK(same);
        if (!same) {
            diffs++;
            report(FUNCS[fn], &desc, &res[0], &res[1]);
        }
        if (res[0].p && res[0].p[0] == 'E') errors++;
        else if (res[0].p && strncmp(res[0].p, "nil;", 4) != 0 && strcmp(res[0].p, "end") != 0) matched++;
        free(s.p);
        free(p.p);
        free(t.p);
        free(desc.p);
        free(res[0].p);
        free(res[1].p);
    }
    lua_settop(L, repls - 1);
    printf("random cases: %ld (seed %llu), %ld with a result, %ld errors, %ld different\n", cases,
           (unsigned long long)seed, matched, errors, diffs);
    /* the generator must reach both outcomes, or the comparison says little */
    CHECK(matched > cases / 4);
    CHECK(errors > cases / 100);
}

/* --- 3. installation and the time limit --------------------------------- */

static void installation(lua_State *L)
{
    int top = lua_gettop(L);
    CHECK(luaL_dostring(L, "local nat = ...\n"
                           "return string.find ~= nil and getmetatable('').__index == string")
          == LUA_OK);
    CHECK(lua_toboolean(L, -1));
    lua_settop(L, top);
    for (int i = 0; i < 4; i++) {
        lua_getfield(L, LUA_REGISTRYINDEX, "nat");
        lua_getfield(L, -1, FUNCS[i]);
        lua_getglobal(L, "string");
        lua_getfield(L, -1, FUNCS[i]);
        CHECK(!lua_rawequal(L, -1, -3)); /* string.X is ours now */
        lua_pushliteral(L, "");
        lua_getmetatable(L, -1);
        lua_getfield(L, -1, "__index");
        lua_getfield(L, -1, FUNCS[i]);
        CHECK(lua_rawequal(L, -1, -5)); /* so is ("").X */
        lua_settop(L, top);
    }
}

/* A capped state whose deadline is near: the attack of issue 10 item 6
 * (and a gsub and a gmatch that backtrack as hard, and calls where each
 * step is slow) stop with "time limit exceeded" soon after it, where Lua's
 * matcher would run for minutes or hours. */
static void time_limit(void)
{
    static const char *const ATTACKS[] = {
        "return (\"a\"):rep(3000):find((\"a-\"):rep(12)..\"b\")",
        "return (\"a\"):rep(3000):gsub((\"a*\"):rep(12)..\"b\", \"x\")",
        "for x in (\"a\"):rep(3000):gmatch((\"a-\"):rep(12)..\"b\") do end",
        "return (\"(\"):rep(300000):find(\"%b()\")",
        "return (\"a\"):rep(3000):match((\"a?\"):rep(40)..(\"a\"):rep(40)..\"b\")",
        /* few matcher calls, each slow: a huge set, a huge replacement string */
        "return (\"b\"):rep(200000):find(\"[\"..(\"a\"):rep(100000)..\"]\")",
        "return (\"a\"):rep(100000):find(\"[\"..(\"b\"):rep(100000)..\"a]*$\")",
        "return (\"a\"):rep(200000):gsub(\"(x*)\", (\"%1\"):rep(100000))",
    };
    for (size_t i = 0; i < sizeof ATTACKS / sizeof *ATTACKS; i++) {
        tl_limits lim = {0}; /* every field zero: no cap, no deadline yet */
        lua_State *L = lua_newstate(tl_limits_alloc, &lim);
        luaL_openlibs(L);
        tl_lpattern_install(L);
        /* before the deadline, ordinary calls work */
        CHECK(luaL_dostring(L, "return ('key=val'):match('(%w+)=(%w+)')") == LUA_OK);
        lim.deadline = tl_now_s() + 0.3;
        double t0 = tl_now_s();
        int st = luaL_dostring(L, ATTACKS[i]);
        double dt = tl_now_s() - t0;
        CHECK(st != LUA_OK);
        const char *msg = st != LUA_OK ? lua_tostring(L, -1) : "(finished)";
        CHECK(msg && strstr(msg, "time limit exceeded"));
        CHECK(dt < 2.0);
        CHECK(lim.timed_out);
        if (!(msg && strstr(msg, "time limit exceeded")) || dt >= 2.0)
            fprintf(stderr, "attack %zu: %s after %.2f s\n", i, msg ? msg : "?", dt);
        lua_close(L);
    }
}

int main(int argc, char **argv)
{
    long cases = argc > 1 ? atol(argv[1]) : 300000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    lua_State *L = new_state();
    installation(L);
    edge_cases(L);
    random_cases(L, cases, seed);
    lua_close(L);
    time_limit();
    int failed = tl_test_state.failures;
    printf("%d checks, %d failed\n", tl_test_state.checks, failed);
    printf("%d passed, %d failed\n", failed ? 0 : 1, failed ? 1 : 0);
    return failed ? 1 : 0;
}
