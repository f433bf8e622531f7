/* ljson.c — see ljson.h. */
#include "ljson.h"

#include <lauxlib.h>
#include <math.h>
#include <string.h>

#include "../json/json_text.h"

/* What the decoder is given (stack indices) and where it is. */
typedef struct jdec {
    lua_State *L;
    const char *s;
    size_t n, pos;
    int obj_mt, arr_mt, key_lists, null;
} jdec;

enum { MAX_DEPTH = 200, MAX_NUMBER = 256 };

static void skip_ws(jdec *d)
{
    while (d->pos < d->n) {
        char c = d->s[d->pos];
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') break;
        d->pos++;
    }
}

static int is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

/* The string at d->pos (its opening quote) pushed; 0 when the Lua decoder
 * must decide (an error, or a form this one does not take). */
static int dec_string(jdec *d)
{
    const char *s = d->s;
    size_t i = d->pos + 1, n = d->n;
    size_t j = i;
    while (j < n && s[j] != '"' && s[j] != '\\') j++;
    if (j >= n) return 0;
    if (s[j] == '"') { /* no escape: one slice */
        lua_pushlstring(d->L, s + i, j - i);
        d->pos = j + 1;
        return 1;
    }
    luaL_Buffer b;
    luaL_buffinit(d->L, &b);
    for (;;) {
        j = i;
        while (j < n && s[j] != '"' && s[j] != '\\') j++;
        if (j >= n) return 0;
        luaL_addlstring(&b, s + i, j - i);
        if (s[j] == '"') {
            luaL_pushresult(&b);
            d->pos = j + 1;
            return 1;
        }
        if (j + 1 >= n) return 0;
        char e = s[j + 1], out;
        switch (e) {
        case 'b': out = '\b'; break;
        case 'f': out = '\f'; break;
        case 'n': out = '\n'; break;
        case 'r': out = '\r'; break;
        case 't': out = '\t'; break;
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case '/': out = '/'; break;
        case 'u': out = 0; break;
        default: return 0;
        }
        if (e != 'u') {
            luaL_addchar(&b, out);
            i = j + 2;
            continue;
        }
        if (j + 6 > n || !is_hex(s[j + 2]) || !is_hex(s[j + 3]) || !is_hex(s[j + 4]) || !is_hex(s[j + 5])) return 0;
        unsigned c = (unsigned)hex4(s + j + 2);
        i = j + 6;
        if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && s[i] == '\\' && s[i + 1] == 'u') {
            /* a low surrogate after it: one code point (other texts there
             * are the Lua decoder's: tonumber(text, 16) takes signs and
             * spaces) */
            if (i + 6 > n || !is_hex(s[i + 2]) || !is_hex(s[i + 3]) || !is_hex(s[i + 4]) || !is_hex(s[i + 5]))
                return 0;
            unsigned lo = (unsigned)hex4(s + i + 2);
            if (lo >= 0xdc00 && lo < 0xe000) {
                c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
                i += 6;
            }
        }
        char u[4];
        luaL_addlstring(&b, u, tl_utf8_put(u, c));
    }
}

static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* A value that is not an array or an object, pushed (decode_scalar). */
static int dec_scalar(jdec *d)
{
    lua_State *L = d->L;
    const char *s = d->s;
    size_t p = d->pos, n = d->n;
    if (p < n && s[p] == '"') return dec_string(d);
    size_t w = p;
    while (w < n && is_alpha(s[w])) w++;
    if (w > p) {
        size_t len = w - p;
        if (len == 4 && !memcmp(s + p, "true", 4)) lua_pushboolean(L, 1);
        else if (len == 5 && !memcmp(s + p, "false", 5)) lua_pushboolean(L, 0);
        else if (len == 4 && !memcmp(s + p, "null", 4)) lua_pushvalue(L, d->null);
        else if (len == 3 && !memcmp(s + p, "NaN", 3)) {
            volatile lua_Number zero = 0; /* 0 / 0 as Lua computes it (the same NaN bits) */
            lua_pushnumber(L, zero / zero);
        }
        else if (len == 8 && !memcmp(s + p, "Infinity", 8)) lua_pushnumber(L, (lua_Number)HUGE_VAL);
        else return 0;
        d->pos = w;
        return 1;
    }
    if (n - p >= 9 && !memcmp(s + p, "-Infinity", 9)) {
        lua_pushnumber(L, -(lua_Number)HUGE_VAL);
        d->pos = p + 9;
        return 1;
    }
    /* ^-?%d+%.?%d*[eE]?[-+]?%d* */
    size_t q = p;
    if (q < n && s[q] == '-') q++;
    size_t digits = q;
    while (q < n && is_digit(s[q])) q++;
    if (q == digits) return 0;
    int is_float = 0;
    if (q < n && s[q] == '.') q++, is_float = 1;
    while (q < n && is_digit(s[q])) q++;
    if (q < n && (s[q] == 'e' || s[q] == 'E')) q++, is_float = 1;
    if (q < n && (s[q] == '-' || s[q] == '+')) q++;
    while (q < n && is_digit(s[q])) q++;
    size_t len = q - p;
    if (len >= MAX_NUMBER) return 0;
    char num[MAX_NUMBER];
    memcpy(num, s + p, len);
    num[len] = 0;
    if (lua_stringtonumber(L, num) == 0) return 0; /* tonumber(num) is nil: the Lua decoder's error */
    if (is_float) {
        lua_Number f = lua_tonumber(L, -1);
        lua_pop(L, 1);
        lua_pushnumber(L, f + 0.0); /* v + 0.0, as json.lua: -0.0 becomes 0.0 */
    } else if (!lua_isinteger(L, -1)) {
        /* math.tointeger(tonumber(num)) or tonumber(num .. ".0"): an
         * integer beyond int64 read as a float, an integer again when that
         * float is one (-2^63) */
        lua_Number f = lua_tonumber(L, -1);
        if (f >= -9223372036854775808.0 && f < 9223372036854775808.0 && f == floor(f)) {
            lua_pop(L, 1);
            lua_pushinteger(L, (lua_Integer)f);
        }
    }
    d->pos = q;
    return 1;
}

static int dec_value(jdec *d, int depth);

/* A new ordered object (json.obj()): its metatable and its key list. */
static void new_object(jdec *d)
{
    lua_State *L = d->L;
    lua_newtable(L);
    lua_pushvalue(L, d->obj_mt);
    lua_setmetatable(L, -2);
    lua_createtable(L, 0, 2); /* key_lists[o] = {list = {}, set = {}} */
    lua_newtable(L);
    lua_setfield(L, -2, "list");
    lua_newtable(L);
    lua_setfield(L, -2, "set");
    lua_pushvalue(L, -2);
    lua_pushvalue(L, -2);
    lua_rawset(L, d->key_lists);
    /* stack: o, ks */
}

/* The object at d->pos ('{'), pushed. */
static int dec_object(jdec *d, int depth)
{
    lua_State *L = d->L;
    new_object(d);
    lua_getfield(L, -1, "list");
    lua_getfield(L, -2, "set");
    lua_remove(L, -3); /* stack: o, list, set */
    int o = lua_gettop(L) - 2, list = o + 1, set = o + 2;
    lua_Integer nkeys = 0;
    d->pos++;
    skip_ws(d);
    if (d->pos < d->n && d->s[d->pos] == '}') {
        d->pos++;
        lua_settop(L, o);
        return 1;
    }
    for (;;) {
        skip_ws(d);
        if (d->pos >= d->n || d->s[d->pos] != '"' || !dec_string(d)) return 0;
        skip_ws(d);
        if (d->pos >= d->n || d->s[d->pos] != ':') return 0;
        d->pos++;
        if (!dec_value(d, depth + 1)) return 0;
        /* stack: o, list, set, key, value: con[k] = v through the
         * metatable's __newindex (a new key joins the list) */
        lua_pushvalue(L, -2);
        if (lua_rawget(L, o) == LUA_TNIL) {
            lua_pushvalue(L, -3);
            lua_pushboolean(L, 1);
            lua_rawset(L, set);
            lua_pushvalue(L, -3);
            lua_rawseti(L, list, ++nkeys);
        }
        lua_pop(L, 1);
        lua_rawset(L, o);
        skip_ws(d);
        if (d->pos >= d->n) return 0;
        char c = d->s[d->pos++];
        if (c == '}') break;
        if (c != ',') return 0;
    }
    lua_settop(L, o);
    return 1;
}

/* The array at d->pos ('['), pushed. */
static int dec_array(jdec *d, int depth)
{
    lua_State *L = d->L;
    lua_newtable(L);
    lua_pushvalue(L, d->arr_mt);
    lua_setmetatable(L, -2);
    int a = lua_gettop(L);
    lua_Integer len = 0;
    d->pos++;
    skip_ws(d);
    if (d->pos < d->n && d->s[d->pos] == ']') {
        d->pos++;
        return 1;
    }
    for (;;) {
        if (!dec_value(d, depth + 1)) return 0;
        lua_rawseti(L, a, ++len);
        skip_ws(d);
        if (d->pos >= d->n) return 0;
        char c = d->s[d->pos++];
        if (c == ']') break;
        if (c != ',') return 0;
    }
    return 1;
}

static int dec_value(jdec *d, int depth)
{
    if (depth > MAX_DEPTH || !lua_checkstack(d->L, 8)) return 0;
    skip_ws(d);
    if (d->pos < d->n && d->s[d->pos] == '{') return dec_object(d, depth);
    if (d->pos < d->n && d->s[d->pos] == '[') return dec_array(d, depth);
    return dec_scalar(d);
}

int tl_l_json_decode(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    luaL_checktype(L, 4, LUA_TTABLE);
    luaL_checkany(L, 5);
    lua_settop(L, 5);
    jdec d = {L, s, n, 0, 2, 3, 4, 5};
    if (dec_value(&d, 0)) {
        skip_ws(&d);
        if (d.pos >= d.n) return 1;
    }
    lua_settop(L, 5);
    lua_pushnil(L);
    return 1;
}
