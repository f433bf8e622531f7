/* repl.c — the interactive Lua prompt of `tracelens repl` (see repl.h).
 * Owns: a growable C string (sbuf), the value pretty-printer, lua.c-style
 * chunk evaluation (expression first, then statement, multi-line while the
 * chunk is incomplete), the `:` commands, and the libedit glue (prompt,
 * history, TAB completion, Ctrl-C at the prompt and while a statement
 * runs). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "repl.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>
#include <lauxlib.h>
#include <lualib.h>

#include "../util/vec.h"
#include "host.h"
#include "ltable.h"
#include <sys/ioctl.h>

#ifndef TL_VERSION
#define TL_VERSION "dev"
#endif

enum {
    FMT_MAX_DEPTH = 3,      /* tables nested deeper print as {...} */
    FMT_MAX_ITEMS = 50,     /* items shown per table */
    HISTORY_MAX = 1000,     /* entries kept in the history file */
    COMPLETE_MAX_CHAIN = 4, /* __index tables followed while completing */
};

/* ------------------------------------------------------------------ sbuf */

/* A growable NUL-terminated C string; oom is sticky and drops further
 * appends, so callers check it once at the end. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static int sbuf_reserve(sbuf *b, size_t extra)
{
    if (b->oom) return 0;
    if (b->len + extra + 1 <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

static void sbuf_addlen(sbuf *b, const char *s, size_t n)
{
    if (!sbuf_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sbuf_adds(sbuf *b, const char *s) { sbuf_addlen(b, s, strlen(s)); }

static void sbuf_addc(sbuf *b, char c) { sbuf_addlen(b, &c, 1); }

static void sbuf_free(sbuf *b)
{
    free(b->p);
    *b = (sbuf){0};
}

/* Hands the string over (caller frees); NULL when an append failed. */
static char *sbuf_take(sbuf *b)
{
    if (!b->oom && !b->p) sbuf_reserve(b, 0);
    if (b->oom) {
        sbuf_free(b);
        return NULL;
    }
    if (b->len == 0) b->p[0] = '\0';
    char *p = b->p;
    *b = (sbuf){0};
    return p;
}

/* ------------------------------------------------------------- format */

static const char *const lua_keywords[] = {
    "and",  "break", "do",     "else", "elseif", "end",   "false", "for",
    "function", "goto", "if",  "in",   "local",  "nil",   "not",   "or",
    "repeat", "return", "then", "true", "until", "while", NULL};

static int is_keyword(const char *s, size_t n)
{
    for (int i = 0; lua_keywords[i]; i++)
        if (strlen(lua_keywords[i]) == n && memcmp(lua_keywords[i], s, n) == 0) return 1;
    return 0;
}

/* A Lua name usable after '.' or as `name = ` in a constructor. */
static int is_identifier(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return 0;
    return !is_keyword(s, n);
}

/* Appends s as a double-quoted Lua literal (%q style, but \n as "\n"). */
static void fmt_quoted(sbuf *b, const char *s, size_t n)
{
    sbuf_addc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        switch (c) {
        case '"': sbuf_adds(b, "\\\""); break;
        case '\\': sbuf_adds(b, "\\\\"); break;
        case '\n': sbuf_adds(b, "\\n"); break;
        case '\r': sbuf_adds(b, "\\r"); break;
        case '\t': sbuf_adds(b, "\\t"); break;
        default:
            if (c < 32 || c == 127) {
                snprintf(esc, sizeof esc, "\\%03u", (unsigned)c);
                sbuf_adds(b, esc);
            } else {
                sbuf_addc(b, (char)c);
            }
        }
    }
    sbuf_addc(b, '"');
}

static int tostring_cf(lua_State *L)
{
    luaL_tolstring(L, 1, NULL);
    return 1;
}

/* Appends tostring(value) — __tostring / __name aware, run protected. */
static void fmt_tostring(lua_State *L, sbuf *b, int idx)
{
    idx = lua_absindex(L, idx);
    lua_pushcfunction(L, tostring_cf);
    lua_pushvalue(L, idx);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK) {
        size_t n;
        const char *s = lua_tolstring(L, -1, &n);
        sbuf_addlen(b, s, n);
    } else {
        const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?";
        sbuf_adds(b, "<");
        sbuf_adds(b, luaL_typename(L, idx));
        sbuf_adds(b, ": __tostring failed: ");
        sbuf_adds(b, msg);
        sbuf_adds(b, ">");
    }
    lua_pop(L, 1);
}

typedef struct fmt_ctx {
    sbuf *out;
    const void *path[FMT_MAX_DEPTH]; /* tables being printed, outermost first */
    int depth;
} fmt_ctx;

/* One key of a table being printed; kind orders numbers < strings < others
 * (others by type, false before true, then in traversal order). */
typedef struct tkey {
    int kind, isint;
    int ltype, bval; /* other keys: lua type, boolean value */
    lua_Integer i;
    lua_Number n;
    const char *s;  /* string keys: bytes owned by the (unmodified) table */
    size_t len;
    int order;      /* traversal position; index into the anchor table */
} tkey;

enum { K_NUM = 0, K_STR = 1, K_OTHER = 2 };

static int cmp_num(const tkey *a, const tkey *b)
{
    if (a->isint && b->isint) return (a->i > b->i) - (a->i < b->i);
    lua_Number x = a->isint ? (lua_Number)a->i : a->n;
    lua_Number y = b->isint ? (lua_Number)b->i : b->n;
    return (x > y) - (x < y);
}

static int cmp_tkey(const void *pa, const void *pb)
{
    const tkey *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind - b->kind;
    int c = 0;
    if (a->kind == K_NUM) c = cmp_num(a, b);
    if (a->kind == K_OTHER) c = a->ltype != b->ltype ? a->ltype - b->ltype : a->bval - b->bval;
    if (a->kind == K_STR) {
        c = memcmp(a->s, b->s, a->len < b->len ? a->len : b->len);
        if (c == 0) c = (a->len > b->len) - (a->len < b->len);
    }
    return c ? c : a->order - b->order;
}

static size_t count_keys(lua_State *L, int t)
{
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        n++;
        lua_pop(L, 1);
    }
    return n;
}

/* Fills keys[0..n) from table t (no allocation but the anchoring: string
 * keys stay owned by t); non-number, non-string keys are anchored in the
 * table at index anchor under their traversal position. Returns the count. */
static size_t collect_keys(lua_State *L, int t, tkey *keys, size_t n, int anchor)
{
    size_t k = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (k == n) continue;
        tkey *e = &keys[k++];
        *e = (tkey){.order = (int)k};
        if (lua_type(L, -1) == LUA_TNUMBER) {
            e->kind = K_NUM;
            e->isint = lua_isinteger(L, -1);
            if (e->isint) e->i = lua_tointeger(L, -1);
            else e->n = lua_tonumber(L, -1);
        } else if (lua_type(L, -1) == LUA_TSTRING) {
            e->kind = K_STR;
            e->s = lua_tolstring(L, -1, &e->len);
        } else {
            e->kind = K_OTHER;
            e->ltype = lua_type(L, -1);
            e->bval = lua_toboolean(L, -1);
            lua_pushvalue(L, -1);
            lua_rawseti(L, anchor, e->order);
        }
    }
    return k;
}

static void push_key(lua_State *L, const tkey *e, int anchor)
{
    if (e->kind == K_NUM && e->isint) lua_pushinteger(L, e->i);
    else if (e->kind == K_NUM) lua_pushnumber(L, e->n);
    else if (e->kind == K_STR) lua_pushlstring(L, e->s, e->len);
    else lua_rawgeti(L, anchor, e->order);
}

static void fmt_value(lua_State *L, fmt_ctx *c, int idx, int nested);

/* Appends `name = `, `["str"] = ` or `[key] = ` for the key at the top. */
static void fmt_key(lua_State *L, fmt_ctx *c, const tkey *e)
{
    size_t n;
    if (e->kind == K_STR) {
        const char *s = lua_tolstring(L, -1, &n);
        if (is_identifier(s, n)) {
            sbuf_addlen(c->out, s, n);
            sbuf_adds(c->out, " = ");
            return;
        }
    }
    sbuf_addc(c->out, '[');
    if (e->kind == K_OTHER) fmt_tostring(L, c->out, -1);
    else fmt_value(L, c, -1, 1);
    sbuf_adds(c->out, "] = ");
}

/* Prints the first m sorted keys of table t with their values. */
static void fmt_entries(lua_State *L, fmt_ctx *c, int t, const tkey *keys, size_t m, int anchor)
{
    int sel = lua_gettop(L) + 1;
    lua_createtable(L, (int)m, 0); /* pins the shown keys against __tostring side effects */
    for (size_t j = 0; j < m; j++) {
        push_key(L, &keys[j], anchor);
        lua_rawseti(L, sel, (lua_Integer)j + 1);
    }
    int in_array = 1;
    for (size_t j = 0; j < m; j++) {
        const tkey *e = &keys[j];
        if (j) sbuf_adds(c->out, ", ");
        lua_rawgeti(L, sel, (lua_Integer)j + 1);
        in_array = in_array && e->kind == K_NUM && e->isint && e->i == (lua_Integer)j + 1;
        if (!in_array) fmt_key(L, c, e);
        lua_rawget(L, t);
        fmt_value(L, c, -1, 1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* Appends the constructor-like form of the table at t. */
static void fmt_table(lua_State *L, fmt_ctx *c, int t)
{
    const void *p = lua_topointer(L, t);
    for (int i = 0; i < c->depth; i++)
        if (c->path[i] == p) {
            sbuf_adds(c->out, "<cycle>");
            return;
        }
    if (c->depth >= FMT_MAX_DEPTH) {
        sbuf_adds(c->out, "{...}");
        return;
    }
    luaL_checkstack(L, 8, "formatting a table");
    size_t n = count_keys(L, t);
    tkey *keys = lua_newuserdatauv(L, (n ? n : 1) * sizeof *keys, 0);
    lua_newtable(L);
    int anchor = lua_gettop(L);
    n = collect_keys(L, t, keys, n, anchor);
    qsort(keys, n, sizeof *keys, cmp_tkey);
    size_t m = n < FMT_MAX_ITEMS ? n : FMT_MAX_ITEMS;
    c->path[c->depth++] = p;
    sbuf_addc(c->out, '{');
    fmt_entries(L, c, t, keys, m, anchor);
    if (n > m) {
        char more[48];
        snprintf(more, sizeof more, ", ... (%zu more)", n - m);
        sbuf_adds(c->out, more);
    }
    sbuf_addc(c->out, '}');
    c->depth--;
    lua_pop(L, 2);
}

/* The terminal's width (COLUMNS, else the tty's, else 120). */
static size_t term_width(void)
{
    const char *cols = getenv("COLUMNS");
    long w = cols ? strtol(cols, NULL, 10) : 0;
    struct winsize ws;
    if (w <= 0 && isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0) w = ws.ws_col;
    return w >= 20 && w <= 10000 ? (size_t)w : 120;
}

/* A record (only identifier-like string keys, at least 4, no table values)
 * as an aligned block, one `key  value` per line, keys sorted. Returns 0
 * (nothing written) for any other table. */
static int fmt_record(lua_State *L, fmt_ctx *c, int t)
{
    enum { MIN_KEYS = 4, MAX_KEYS = 200 };
    size_t n = 0, w = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        int ok = lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) != LUA_TTABLE && n < MAX_KEYS;
        if (ok) {
            size_t len;
            lua_tolstring(L, -2, &len);
            if (len > w) w = len;
        }
        lua_pop(L, 1);
        if (!ok) {
            lua_pop(L, 1);
            return 0;
        }
        n++;
    }
    if (n < MIN_KEYS) return 0;
    tkey *keys = lua_newuserdatauv(L, n * sizeof *keys, 0);
    lua_newtable(L);
    int anchor = lua_gettop(L);
    n = collect_keys(L, t, keys, n, anchor);
    qsort(keys, n, sizeof *keys, cmp_tkey);
    for (size_t j = 0; j < n; j++) {
        if (j) sbuf_addc(c->out, '\n');
        sbuf_addlen(c->out, keys[j].s, keys[j].len);
        for (size_t k = keys[j].len; k < w + 2; k++) sbuf_addc(c->out, ' ');
        push_key(L, &keys[j], anchor);
        lua_rawget(L, t);
        fmt_value(L, c, -1, 1);
        lua_pop(L, 1);
    }
    lua_pop(L, 2);
    return 1;
}

/* Display width of UTF-8 text (continuation bytes do not count). */
static size_t text_width(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

/* One cell of a record list: a scalar as the REPL prints it, a table as
 * "{…}", cut to REC_CELL display columns (at a character boundary). */
enum { REC_ROWS = 10, REC_COLS = 64, REC_CELL = 32 };

static char *rec_cell(lua_State *L, int idx)
{
    char tmp[64];
    const char *s;
    size_t n;
    switch (lua_type(L, idx)) {
    case LUA_TNIL: s = "", n = 0; break;
    case LUA_TTABLE: s = "{...}", n = 5; break;
    case LUA_TSTRING: s = lua_tolstring(L, idx, &n); break;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) snprintf(tmp, sizeof tmp, LUA_INTEGER_FMT, lua_tointeger(L, idx));
        else snprintf(tmp, sizeof tmp, "%.10g", (double)lua_tonumber(L, idx));
        s = tmp, n = strlen(tmp);
        break;
    case LUA_TBOOLEAN: s = lua_toboolean(L, idx) ? "true" : "false", n = strlen(s); break;
    default: s = luaL_typename(L, idx), n = strlen(s); break;
    }
    size_t cut = n, w = 0;
    if (text_width(s, n) > REC_CELL) {
        for (cut = 0; cut < n; cut++) {
            if (((unsigned char)s[cut] & 0xC0) != 0x80 && ++w > REC_CELL - 3) break;
        }
    }
    char *out = tl_xmalloc(cut + 4);
    memcpy(out, s, cut);
    if (cut < n) memcpy(out + cut, "...", 3), cut += 3;
    out[cut] = 0;
    return out;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A list of records (t[1..n], each a table with identifier-like string
 * keys, n >= 2) as an aligned table: the keys of the first rows as
 * columns (sorted), the first REC_ROWS rows, cells cut to REC_CELL, as many
 * columns as fit the terminal. Returns 0 (nothing written) otherwise. */
static int fmt_records(lua_State *L, fmt_ctx *c, int t)
{
    size_t n = lua_rawlen(L, t), count = 0;
    if (n < 2) return 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        int ok = lua_isinteger(L, -2) && lua_tointeger(L, -2) >= 1 && (size_t)lua_tointeger(L, -2) <= n &&
                 lua_type(L, -1) == LUA_TTABLE;
        if (ok && lua_getmetatable(L, -1)) { /* a userdata-like object: not a record */
            lua_pop(L, 1);
            ok = 0;
        }
        lua_pop(L, 1);
        if (!ok) {
            lua_pop(L, 1);
            return 0;
        }
        count++;
    }
    if (count != n) return 0;
    size_t rows = n < REC_ROWS ? n : REC_ROWS, ncol = 0;
    char *col[REC_COLS];
    for (size_t r = 1; r <= rows; r++) {
        lua_rawgeti(L, t, (lua_Integer)r);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pop(L, 1);
            size_t len;
            const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
            int ident = k && len > 0 && len < 64 && (isalpha((unsigned char)k[0]) || k[0] == '_');
            for (size_t i = 0; ident && i < len; i++) ident = isalnum((unsigned char)k[i]) || k[i] == '_';
            if (!ident) {
                lua_pop(L, 2);
                for (size_t i = 0; i < ncol; i++) free(col[i]);
                return 0;
            }
            int seen = 0;
            for (size_t i = 0; i < ncol && !seen; i++) seen = !strcmp(col[i], k);
            if (!seen && ncol < REC_COLS) col[ncol++] = tl_xstrdup(k);
        }
        lua_pop(L, 1);
    }
    if (ncol < 2) {
        for (size_t i = 0; i < ncol; i++) free(col[i]);
        return 0;
    }
    qsort(col, ncol, sizeof *col, cmp_cstr);
    char **cell = tl_xcalloc(rows * ncol, sizeof *cell);
    size_t width[REC_COLS];
    for (size_t j = 0; j < ncol; j++) width[j] = strlen(col[j]);
    for (size_t r = 0; r < rows; r++) {
        lua_rawgeti(L, t, (lua_Integer)r + 1);
        for (size_t j = 0; j < ncol; j++) {
            lua_pushstring(L, col[j]);
            lua_rawget(L, -2);
            cell[r * ncol + j] = rec_cell(L, -1);
            lua_pop(L, 1);
            size_t w = text_width(cell[r * ncol + j], strlen(cell[r * ncol + j]));
            if (w > width[j]) width[j] = w;
        }
        lua_pop(L, 1);
    }
    /* the columns that fit the terminal (at least one) */
    size_t shown = 0, used = 0, tw = term_width();
    while (shown < ncol && (shown == 0 || used + 2 + width[shown] <= tw)) {
        used += (shown ? 2 : 0) + width[shown];
        shown++;
    }
    for (size_t r = 0; r <= rows; r++) {
        if (r) sbuf_addc(c->out, '\n');
        for (size_t j = 0; j < shown; j++) {
            const char *v = r ? cell[(r - 1) * ncol + j] : col[j];
            size_t w = text_width(v, strlen(v));
            if (j) sbuf_adds(c->out, "  ");
            sbuf_adds(c->out, v);
            for (size_t k = w; j + 1 < shown && k < width[j]; k++) sbuf_addc(c->out, ' ');
        }
    }
    char more[96];
    if (n > rows || shown < ncol) {
        snprintf(more, sizeof more, "\n(%zu records", n);
        sbuf_adds(c->out, more);
        if (n > rows) {
            snprintf(more, sizeof more, ", the first %zu shown", rows);
            sbuf_adds(c->out, more);
        }
        if (shown < ncol) {
            snprintf(more, sizeof more, "; %zu more columns", ncol - shown);
            sbuf_adds(c->out, more);
        }
        sbuf_addc(c->out, ')');
    }
    for (size_t i = 0; i < rows * ncol; i++) free(cell[i]);
    free(cell);
    for (size_t i = 0; i < ncol; i++) free(col[i]);
    return 1;
}

static void fmt_value(lua_State *L, fmt_ctx *c, int idx, int nested)
{
    idx = lua_absindex(L, idx);
    if (!nested && lua_type(L, idx) == LUA_TUSERDATA) {
        tl_table *tt = tl_ltable_test(L, idx);
        if (tt) { /* a Table: its preview */
            tl_sbuf b;
            tl_sb_init(&b);
            tl_table_preview(tt, 10, term_width(), &b);
            if (b.len && b.s[b.len - 1] == '\n') b.len--;
            sbuf_addlen(c->out, b.s ? b.s : "", b.len);
            tl_sb_free(&b);
            return;
        }
    }
    if (!nested && lua_type(L, idx) == LUA_TTABLE && luaL_getmetafield(L, idx, "__tostring") == LUA_TNIL) {
        luaL_checkstack(L, 8, "formatting a table");
        if (fmt_record(L, c, idx) || fmt_records(L, c, idx)) return;
    } else if (!nested && lua_type(L, idx) == LUA_TTABLE) {
        lua_pop(L, 1);
    }
    size_t n;
    const char *s;
    switch (lua_type(L, idx)) {
    case LUA_TSTRING:
        s = lua_tolstring(L, idx, &n);
        if (nested) fmt_quoted(c->out, s, n);
        else sbuf_addlen(c->out, s, n);
        return;
    case LUA_TTABLE:
        if (luaL_getmetafield(L, idx, "__tostring") == LUA_TNIL) {
            fmt_table(L, c, idx);
            return;
        }
        lua_pop(L, 1);
        break;
    default:
        break;
    }
    fmt_tostring(L, c->out, idx);
}

static int format_cf(lua_State *L)
{
    fmt_ctx c = {.out = lua_touserdata(L, 1)};
    fmt_value(L, &c, 2, 0);
    return 0;
}

char *tl_repl_format(lua_State *L, int idx)
{
    sbuf out = {0};
    idx = lua_absindex(L, idx);
    if (!lua_checkstack(L, 4)) return NULL;
    lua_pushcfunction(L, format_cf);
    lua_pushlightuserdata(L, &out);
    lua_pushvalue(L, idx);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
        const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?";
        out.len = 0;
        out.oom = 0;
        sbuf_adds(&out, "<cannot format value: ");
        sbuf_adds(&out, msg);
        sbuf_adds(&out, ">");
        lua_pop(L, 1);
    }
    return sbuf_take(&out);
}

/* ------------------------------------------------------------ globals */

/* The state completion and SIGINT work on: libedit's callbacks take no user
 * pointer. Set only while tl_repl_run runs interactively (see repl.h). */
static lua_State *repl_L;

/* ---------------------------------------------------------- evaluation */

static const char CHUNK_PREFIX[] = "return ";
enum { PREFIX_LEN = sizeof CHUNK_PREFIX - 1 };

typedef struct repl {
    lua_State *L;
    int interactive, had_error, quit;
    sbuf chunk;      /* "return " + the lines of the statement being read */
    char *last_hist; /* last line added to the history */
    char *saved_locale;
} repl;

static int chunk_empty(const repl *r) { return r->chunk.len <= PREFIX_LEN; }

static void chunk_reset(repl *r)
{
    sbuf_free(&r->chunk);
    sbuf_adds(&r->chunk, CHUNK_PREFIX);
}

/* Prints msg to stderr as `error: msg` (one line unless interactive). */
static void report_error(repl *r, const char *msg)
{
    fflush(stdout);
    fputs("error: ", stderr);
    for (const char *p = msg; *p; p++) {
        if (!r->interactive && (*p == '\n' || *p == '\r')) fputc(' ', stderr);
        else fputc(*p, stderr);
    }
    fputc('\n', stderr);
    fflush(stderr);
    r->had_error = 1;
}

static void report_top(repl *r)
{
    const char *msg = lua_tostring(r->L, -1);
    report_error(r, msg ? msg : "(error object is not a string)");
    lua_pop(r->L, 1);
}

static int msgh_line(lua_State *L)
{
    lua_pushstring(L, tl_lua_error_text(L));
    return 1;
}

/* Hook set from the SIGINT handler: raises at the next Lua instruction. */
static void interrupt_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted!");
}

/* Ctrl-C: set the hook (as lua.c does; lua_sethook is signal-safe), which
 * both stops a running statement and tells the line reader to give up the
 * line. A second Ctrl-C, e.g. while stuck in C code, gets the default
 * action. */
static void on_sigint(int sig)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (repl_L) lua_sethook(repl_L, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* Installs on_sigint (no SA_RESTART: a blocked read must return EINTR). */
static void sigint_catch(struct sigaction *old)
{
    struct sigaction sa = {.sa_handler = on_sigint};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, old);
}

/* Whether Ctrl-C came since the last clear_interrupt. */
static int interrupted(lua_State *L) { return L && lua_gethook(L) == interrupt_hook; }

static void clear_interrupt(lua_State *L)
{
    if (interrupted(L)) lua_sethook(L, NULL, 0, 0);
}

/* Calls the function on top with the message handler; SIGINT interrupts it
 * in interactive mode. Leaves the results (or the message) on the stack. */
static int call_chunk(repl *r)
{
    lua_State *L = r->L;
    int base = lua_gettop(L);
    lua_pushcfunction(L, r->interactive ? tl_lua_traceback_msgh : msgh_line);
    lua_insert(L, base);
    struct sigaction old;
    if (r->interactive) sigint_catch(&old);
    int st = lua_pcall(L, 0, LUA_MULTRET, base);
    if (r->interactive) sigaction(SIGINT, &old, NULL);
    clear_interrupt(L);
    lua_remove(L, base);
    return st;
}

static void print_results(lua_State *L, int first)
{
    int top = lua_gettop(L);
    for (int i = first; i <= top; i++) {
        char *s = tl_repl_format(L, i);
        if (i > first) fputc('\t', stdout);
        fputs(s ? s : "<out of memory>", stdout);
        free(s);
    }
    if (top >= first) fputc('\n', stdout);
    fflush(stdout);
}

/* Runs the compiled chunk on top of the stack and prints what it returns. */
static void run_chunk(repl *r)
{
    lua_State *L = r->L;
    int first = lua_gettop(L);
    if (call_chunk(r) != LUA_OK) {
        report_top(r);
        return;
    }
    print_results(L, first);
    lua_settop(L, first - 1);
}

/* Compiles the chunk, as an expression (with "return ") or a statement. */
static int load_chunk(repl *r, int as_expr)
{
    const char *code = r->chunk.p + (as_expr ? 0 : PREFIX_LEN);
    size_t len = r->chunk.len - (as_expr ? 0 : PREFIX_LEN);
    return luaL_loadbuffer(r->L, code, len, "=stdin");
}

/* A syntax error that more input could fix (message ends in "<eof>"). */
static int is_incomplete(lua_State *L, int status)
{
    size_t n;
    const char *msg = lua_tolstring(L, -1, &n);
    return status == LUA_ERRSYNTAX && msg && n >= 5 && strcmp(msg + n - 5, "<eof>") == 0;
}

/* Evaluates the chunk read so far. Returns 1 when it needs more lines;
 * at_eof reports an incomplete chunk as the error it is. */
static int eval_chunk(repl *r, int at_eof)
{
    lua_State *L = r->L;
    int st = load_chunk(r, 1);
    if (st == LUA_OK) {
        run_chunk(r);
        return 0;
    }
    int expr_more = is_incomplete(L, st);
    st = load_chunk(r, 0);
    if (st == LUA_OK) {
        lua_remove(L, -2);
        run_chunk(r);
        return 0;
    }
    int stat_more = is_incomplete(L, st);
    if ((expr_more || stat_more) && !at_eof) {
        lua_pop(L, 2);
        return 1;
    }
    if (expr_more && !stat_more) lua_pop(L, 1); /* report the <eof> one */
    else lua_remove(L, -2);
    report_top(r);
    return 0;
}

/* ------------------------------------------------------------ commands */

static const char HELP_TEXT[] =
    "Commands (on a line of their own):\n"
    "  :help       this text\n"
    "  :quit, :q   leave the prompt (Ctrl-D does too)\n"
    "  :history    list the lines typed so far\n"
    "Type Lua 5.4 statements or expressions; the values of expressions are\n"
    "printed, and a statement may span several lines (prompt `..> `).\n"
    "The global `trace` is bound to the loaded trace, and `tl` to the\n"
    "tracelens module. Type `trace:` then TAB to list its methods; TAB also\n"
    "completes global names and the fields after `name.` or `name:`.\n"
    "Examples:\n"
    "  trace:info()\n"
    "  trace:timeline()\n"
    "  for ev in trace:events{cat=\"kernel\"} do print(ev.name, ev.dur) end\n";

static int is_command(const char *line)
{
    while (*line == ' ' || *line == '\t') line++;
    return line[0] == ':' && isalpha((unsigned char)line[1]);
}

static void show_history(void)
{
    HIST_ENTRY **list = history_list();
    for (int i = 0; list && list[i]; i++) printf("%5d  %s\n", i + 1, list[i]->line);
    fflush(stdout);
}

static void run_command(repl *r, const char *line)
{
    char word[32];
    size_t n = 0;
    while (*line == ' ' || *line == '\t') line++;
    for (line++; isalpha((unsigned char)*line) && n + 1 < sizeof word; line++) word[n++] = *line;
    word[n] = '\0';
    while (*line == ' ' || *line == '\t') line++;
    if (*line) {
        report_error(r, "commands take no arguments (try :help)");
    } else if (!strcmp(word, "help") || !strcmp(word, "h")) {
        fputs(HELP_TEXT, stdout);
        fflush(stdout);
    } else if (!strcmp(word, "quit") || !strcmp(word, "q") || !strcmp(word, "exit")) {
        r->quit = 1;
    } else if (!strcmp(word, "history")) {
        if (r->interactive) show_history();
    } else {
        char msg[96];
        snprintf(msg, sizeof msg, "unknown command ':%s' (try :help)", word);
        report_error(r, msg);
    }
}

/* ---------------------------------------------------------- completion */

typedef struct cand {
    char *name;
    char append;
    size_t seq;
} cand;

typedef struct completion {
    const char *text; /* the word being completed */
    size_t base;      /* length of `expr.` / `expr:` before the key */
    int methods;      /* after ':' — functions only */
    cand *v;
    size_t n, cap;
    int oom;
} completion;

static void cand_add(completion *c, const char *name, size_t len, char append)
{
    if (c->oom) return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        cand *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            c->oom = 1;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    char *s = malloc(c->base + len + 1);
    if (!s) {
        c->oom = 1;
        return;
    }
    memcpy(s, c->text, c->base);
    memcpy(s + c->base, name, len);
    s[c->base + len] = '\0';
    c->v[c->n] = (cand){s, append, c->n};
    c->n++;
}

static void cands_free(completion *c)
{
    for (size_t i = 0; i < c->n; i++) free(c->v[i].name);
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}

/* Whether key `s` (len n) is offered for the typed prefix. */
static int key_wanted(const completion *c, const char *s, size_t n)
{
    const char *prefix = c->text + c->base;
    size_t plen = strlen(prefix);
    if (n < plen || memcmp(s, prefix, plen) != 0 || !is_identifier(s, n)) return 0;
    return !(n >= 2 && s[0] == '_' && s[1] == '_' && prefix[0] != '_');
}

/* The character typed after a unique completion, from the value on top. */
static char append_for(lua_State *L, int methods)
{
    int t = lua_type(L, -1);
    if (t == LUA_TFUNCTION) return '(';
    if (methods) return '\0';
    if (t == LUA_TTABLE && !lua_getmetatable(L, -1)) return '.';
    if (t == LUA_TTABLE) lua_pop(L, 1);
    return '\0';
}

static void add_table_keys(lua_State *L, completion *c, int t)
{
    lua_pushnil(L);
    while (lua_next(L, t)) {
        size_t n;
        if (lua_type(L, -2) == LUA_TSTRING) {
            const char *s = lua_tolstring(L, -2, &n);
            if (key_wanted(c, s, n) && (!c->methods || lua_type(L, -1) == LUA_TFUNCTION))
                cand_add(c, s, n, append_for(L, c->methods));
        }
        lua_pop(L, 1);
    }
}

/* Replaces the value on top with its metatable's __index when that is a
 * table, else with the metatable's `methods` table if any (the convention of
 * types whose __index is a function, e.g. tracelens.event). Raw lookups,
 * nothing called; returns 0, stack unchanged, when there is neither. */
static int next_index_table(lua_State *L)
{
    if (!lua_getmetatable(L, -1)) return 0;
    lua_pushliteral(L, "__index");
    if (lua_rawget(L, -2) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_pushliteral(L, "methods");
        if (lua_rawget(L, -2) != LUA_TTABLE) {
            lua_pop(L, 2);
            return 0;
        }
    }
    lua_remove(L, -2);
    lua_remove(L, -2);
    return 1;
}

/* Field names a userdata type computes in its __index function, listed by
 * its metatable as `__fields` (e.g. tracelens.event: name, ts, args, ...). */
static void add_declared_fields(lua_State *L, completion *c)
{
    if (c->methods || !lua_getmetatable(L, -1)) return;
    lua_pushliteral(L, "__fields");
    if (lua_rawget(L, -2) == LUA_TTABLE) {
        for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; i++) {
            size_t n;
            const char *s = lua_tolstring(L, -1, &n);
            if (key_wanted(c, s, n)) cand_add(c, s, n, '\0');
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 2);
}

/* Keys of the value on top, then of its metatables' __index tables. */
static void add_value_keys(lua_State *L, completion *c)
{
    add_declared_fields(L, c);
    lua_pushvalue(L, -1);
    for (int i = 0; i < COMPLETE_MAX_CHAIN; i++) {
        if (lua_type(L, -1) == LUA_TTABLE) add_table_keys(L, c, lua_gettop(L));
        if (!next_index_table(L)) break;
    }
    lua_pop(L, 1);
}

/* Replaces the value on top with value[k] without calling anything: raw
 * lookups, following __index only while it is a table; nil if not found. */
static void index_raw(lua_State *L, const char *k, size_t n)
{
    for (int i = 0; i < COMPLETE_MAX_CHAIN; i++) {
        if (lua_type(L, -1) == LUA_TTABLE) {
            lua_pushlstring(L, k, n);
            if (lua_rawget(L, -2) != LUA_TNIL) {
                lua_remove(L, -2);
                return;
            }
            lua_pop(L, 1);
        }
        if (!next_index_table(L)) break;
    }
    lua_pop(L, 1);
    lua_pushnil(L);
}

/* Pushes the value of the dotted name text[0..len) or returns 0. */
static int push_dotted(lua_State *L, const char *text, size_t len)
{
    if (len == 0) return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && text[j] != '.') j++;
        if (!is_identifier(text + i, j - i)) return 0;
        index_raw(L, text + i, j - i);
        i = j + 1;
        if (j + 1 == len) return 0; /* trailing '.' */
    }
    return 1;
}

static int complete_cf(lua_State *L)
{
    completion *c = lua_touserdata(L, 1);
    const char *sep = NULL;
    for (const char *p = c->text; *p; p++)
        if (*p == '.' || *p == ':') sep = p;
    if (!sep) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
        add_value_keys(L, c);
        for (int i = 0; lua_keywords[i]; i++)
            if (!strncmp(lua_keywords[i], c->text, strlen(c->text)))
                cand_add(c, lua_keywords[i], strlen(lua_keywords[i]), ' ');
        return 0;
    }
    c->base = (size_t)(sep - c->text) + 1;
    c->methods = *sep == ':';
    for (const char *p = c->text; p < sep; p++)
        if (*p == ':') return 0;
    if (!push_dotted(L, c->text, c->base - 1)) return 0;
    add_value_keys(L, c);
    return 0;
}

static void complete_commands(completion *c)
{
    static const char *const cmds[] = {":help", ":history", ":quit", NULL};
    for (int i = 0; cmds[i]; i++)
        if (!strncmp(cmds[i], c->text, strlen(c->text))) cand_add(c, cmds[i], strlen(cmds[i]), '\0');
}

static int cmp_cand(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

/* Sorts and drops duplicates, the first found winning (own keys shadow
 * __index ones); returns the new count. */
static size_t cands_unique(completion *c)
{
    qsort(c->v, c->n, sizeof *c->v, cmp_cand);
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (n && !strcmp(c->v[n - 1].name, c->v[i].name)) free(c->v[i].name);
        else c->v[n++] = c->v[i];
    }
    return c->n = n;
}

static size_t common_prefix(const cand *v, size_t n)
{
    size_t lcp = strlen(v[0].name);
    for (size_t i = 1; i < n; i++)
        for (size_t k = 0; k < lcp; k++)
            if (v[i].name[k] != v[0].name[k]) lcp = k;
    return lcp;
}

/* The readline matches array: common prefix, the candidates, NULL (plus
 * spare NULLs: libedit peeks at m[2]). Consumes the candidate list. */
static char **build_matches(completion *c)
{
    size_t n = c->n ? cands_unique(c) : 0;
    char **m = n ? calloc(n + 3, sizeof *m) : NULL;
    if (m) m[0] = strndup(c->v[0].name, common_prefix(c->v, n));
    if (!m || !m[0]) {
        free(m);
        cands_free(c);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) m[i + 1] = c->v[i].name;
    rl_completion_append_character = n == 1 ? c->v[0].append : '\0';
    free(c->v);
    return m;
}

static char **complete_cb(const char *text, int start, int end)
{
    (void)start;
    (void)end;
    rl_attempted_completion_over = 1; /* never fall back to file names */
    completion c = {.text = text};
    if (text[0] == ':') {
        complete_commands(&c);
    } else if (repl_L && lua_checkstack(repl_L, 3)) {
        lua_pushcfunction(repl_L, complete_cf);
        lua_pushlightuserdata(repl_L, &c);
        if (lua_pcall(repl_L, 1, 0, 0) != LUA_OK) {
            lua_pop(repl_L, 1);
            c.oom = 1;
        }
    }
    if (c.oom) {
        cands_free(&c);
        return NULL;
    }
    return build_matches(&c);
}

/* ---------------------------------------------------------- the loop */

/* One byte from fd; 0 at EOF, on error, or when Ctrl-C interrupted. */
static int read_byte(int fd, unsigned char *c)
{
    for (;;) {
        ssize_t n = read(fd, c, 1);
        if (n == 1) return 1;
        if (n == 0 || errno != EINTR || interrupted(repl_L)) return 0;
    }
}

/* rl_getc_function: one key for libedit — a byte, or in a multibyte locale
 * one UTF-8 sequence as its code point; -1 (libedit's end of input) at EOF
 * or after Ctrl-C, so readline() returns instead of dying. */
static int getc_cb(FILE *in)
{
    int fd = in ? fileno(in) : STDIN_FILENO;
    unsigned char c, cc;
    if (!read_byte(fd, &c)) return -1;
    if (MB_CUR_MAX == 1 || c < 0xC2 || c > 0xF4) return c;
    int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
    int cp = c & (0x3F >> more);
    for (int i = 0; i < more; i++) {
        if (!read_byte(fd, &cc)) return -1;
        if ((cc & 0xC0) != 0x80) return 0xFFFD;
        cp = (cp << 6) | (cc & 0x3F);
    }
    return cp;
}

static void interactive_begin(repl *r, const tl_repl_opts *opts)
{
    repl_L = r->L;
    const char *loc = setlocale(LC_CTYPE, NULL);
    r->saved_locale = loc ? strdup(loc) : NULL;
    setlocale(LC_CTYPE, ""); /* libedit needs it for non-ASCII input */
    rl_readline_name = "tracelens";
    rl_getc_function = getc_cb;
    rl_initialize(); /* samples rl_getc_function; drops earlier history */
    rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{}()[]+-*/%^~#,\\";
    rl_attempted_completion_function = complete_cb;
    using_history();
    stifle_history(HISTORY_MAX);
    if (opts->history_path) read_history(opts->history_path);
    printf("tracelens %s (%s) - type :help for help, Ctrl-D to quit\n", TL_VERSION, LUA_RELEASE);
    fflush(stdout);
}

static void interactive_end(repl *r, const tl_repl_opts *opts)
{
    if (opts->history_path) write_history(opts->history_path);
    rl_attempted_completion_function = NULL;
    /* rl_getc_function stays: libedit calls it without a NULL check */
    if (r->saved_locale) setlocale(LC_CTYPE, r->saved_locale);
    free(r->saved_locale);
    free(r->last_hist);
    r->saved_locale = r->last_hist = NULL;
    repl_L = NULL;
}

/* readline() with Ctrl-C giving up the line: returns the line, NULL at
 * EOF; *cancelled tells an interrupted line from EOF. */
static char *read_interactive(repl *r, const char *prompt, int *cancelled)
{
    struct sigaction old;
    sigint_catch(&old);
    char *line = readline(prompt);
    sigaction(SIGINT, &old, NULL);
    *cancelled = interrupted(r->L);
    clear_interrupt(r->L);
    if (*cancelled) {
        free(line);
        line = NULL;
    }
    return line;
}

static char *read_piped_line(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    return line;
}

static void remember_line(repl *r, const char *line)
{
    if (!*line || (r->last_hist && !strcmp(r->last_hist, line))) return;
    add_history(line);
    free(r->last_hist);
    r->last_hist = strdup(line);
}

static int is_blank(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return *s == '\0';
}

/* A statement goes into the history once it is complete, as one entry
 * (its lines joined by newlines), so up-arrow recalls all of it. */
static void handle_line(repl *r, const char *line)
{
    if (is_command(line)) {
        if (r->interactive) remember_line(r, line);
        run_command(r, line);
        return;
    }
    if (chunk_empty(r) && is_blank(line)) return;
    if (!chunk_empty(r)) sbuf_addc(&r->chunk, '\n');
    sbuf_adds(&r->chunk, line);
    if (r->chunk.oom) report_error(r, "not enough memory");
    char *stmt = r->interactive && !r->chunk.oom ? strdup(r->chunk.p + PREFIX_LEN) : NULL;
    if (r->chunk.oom || !eval_chunk(r, 0)) {
        if (stmt) remember_line(r, stmt);
        chunk_reset(r);
    }
    free(stmt);
}

/* Ctrl-C at the prompt: drop the line and any unfinished statement. */
static void cancel_input(repl *r)
{
    fputc('\n', stdout);
    fflush(stdout);
    chunk_reset(r);
}

static void repl_loop(repl *r)
{
    int eof = 0;
    while (!r->quit && !eof) {
        const char *prompt = chunk_empty(r) ? "tl> " : "..> ";
        int cancelled = 0;
        char *line = r->interactive ? read_interactive(r, prompt, &cancelled) : read_piped_line();
        if (cancelled) cancel_input(r);
        else if (!line) eof = 1;
        else handle_line(r, line);
        free(line);
    }
    if (eof && !chunk_empty(r)) eval_chunk(r, 1);
    if (eof && r->interactive) {
        fputc('\n', stdout);
        fflush(stdout);
    }
}

int tl_repl_run(lua_State *L, const tl_repl_opts *opts)
{
    static const tl_repl_opts no_opts = {0};
    if (!opts) opts = &no_opts;
    repl r = {.L = L, .interactive = opts->force_interactive || isatty(0)};
    chunk_reset(&r);
    if (r.interactive) interactive_begin(&r, opts);
    repl_loop(&r);
    if (r.interactive) interactive_end(&r, opts);
    sbuf_free(&r.chunk);
    return !r.interactive && r.had_error ? 1 : 0;
}
