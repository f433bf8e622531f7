#include "ltable.h"

#include <lauxlib.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "host.h"
#include "limits.h"
#include "lextension.h"
#include "lopts.h"
#include "lmem_seq.h"
#include "lreport.h"
#include "../diff/diff_beside.h"
#include "../io/outfile.h"
#include "../report/platform.h"
#include "../report/report.h"
#include "../trace/kernel_ngrams.h"
#include "../util/msort.h"
#include "../util/vec.h"
#include "ltrace.h"

typedef struct ltable {
    tl_table *t;
} ltable;

static tl_table *check(lua_State *L, int idx)
{
    ltable *u = luaL_checkudata(L, idx, TL_TABLE_MT);
    if (!u->t) luaL_error(L, "table is closed");
    return u->t;
}

tl_table *tl_ltable_test(lua_State *L, int idx)
{
    ltable *u = luaL_testudata(L, idx, TL_TABLE_MT);
    return u ? u->t : NULL;
}

/* A handle has one user value: the integer-`param:` flags of its table's
 * columns (param_ints), made on the first read. */
static int new_handle(lua_State *L)
{
    ltable *u = lua_newuserdatauv(L, sizeof *u, 1);
    u->t = NULL;
    luaL_setmetatable(L, TL_TABLE_MT);
    return 1;
}

/* The C memory of t, as charged to a task's memory cap (limits.h). */
static size_t table_bytes(const tl_table *t)
{
    size_t b = sizeof *t + t->capcols * sizeof *t->cols + t->pool.arena_cap + (size_t)t->pool.cap * 20 +
               (size_t)t->pool.nslots * 4;
    for (size_t c = 0; c < t->ncols; c++) b += t->caprows * (t->cols[c].type == TL_COL_STR ? 4 : 9);
    return b;
}

void tl_ltable_push(lua_State *L, tl_table *t)
{
    /* the handle is made in a protected call: when that fails (out of
     * memory under a task's cap) t is freed before the error goes on */
    if (!lua_checkstack(L, 2)) {
        tl_table_free(t);
        luaL_error(L, "stack overflow (a Table handle)");
    }
    lua_pushcfunction(L, new_handle);
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
        tl_table_free(t);
        lua_error(L);
    }
    ((ltable *)lua_touserdata(L, -1))->t = t;
    /* a Table no one else holds was made here: a task's memory cap counts it */
    if (atomic_load(&t->refs) == 1) tl_limits_charge_object(L, -1, table_bytes(t), "a Table");
}

/* Whether s is an integer as the reference writes one ("1024", "-3": an
 * optional minus, digits without a leading zero, within 64 bits); its value
 * in *v. */
static int plain_integer(const char *s, lua_Integer *v)
{
    int neg = *s == '-';
    const char *p = s + neg;
    if (*p < '0' || *p > '9' || (*p == '0' && (p[1] != '\0' || neg))) return 0;
    lua_Unsigned x = 0, lim = neg ? (lua_Unsigned)LUA_MAXINTEGER + 1 : (lua_Unsigned)LUA_MAXINTEGER;
    for (; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        unsigned d = (unsigned)(*p - '0');
        if (x > (lim - d) / 10) return 0;
        x = x * 10 + d;
    }
    *v = neg ? (lua_Integer)(0u - x) : (lua_Integer)x;
    return 1;
}

/* Whether column c is a `param: ` text column whose every non-empty value is
 * a plain integer: Lua reads its cells as integers. */
static int int_param_col(const tl_table *t, size_t c)
{
    const tl_col *col = &t->cols[c];
    if (col->type != TL_COL_STR || strncmp(col->name, "param: ", 7) != 0) return 0;
    lua_Integer v;
    for (size_t r = 0; r < t->nrows; r++) {
        if (tl_table_is_null(t, c, r)) continue;
        const char *s = tl_table_str(t, c, r);
        if (*s && !plain_integer(s, &v)) return 0;
    }
    return 1;
}

/* The integer-param flags (one byte per column) of the Table handle at idx,
 * kept as its user value: computed once per handle (a handle's table does
 * not change once Lua can read it). The handle keeps them alive. */
static const unsigned char *param_ints(lua_State *L, int idx, const tl_table *t)
{
    idx = lua_absindex(L, idx);
    if (lua_getiuservalue(L, idx, 1) == LUA_TUSERDATA) {
        const unsigned char *f = lua_touserdata(L, -1);
        lua_pop(L, 1);
        return f;
    }
    lua_pop(L, 1);
    unsigned char *f = lua_newuserdatauv(L, t->ncols + 1, 0);
    for (size_t c = 0; c < t->ncols; c++) f[c] = (unsigned char)int_param_col(t, c);
    lua_setiuservalue(L, idx, 1);
    return f;
}

/* Pushes cell (c, r); ints: the handle's param_ints flags (a non-empty cell
 * of a flagged column is pushed as an integer). */
static void push_cell(lua_State *L, const tl_table *t, const unsigned char *ints, size_t c, size_t r)
{
    if (tl_table_is_null(t, c, r)) {
        lua_pushnil(L);
        return;
    }
    const tl_col *col = &t->cols[c];
    lua_Integer v;
    switch (col->type) {
    case TL_COL_STR:
        if (ints[c] && plain_integer(tl_table_str(t, c, r), &v)) lua_pushinteger(L, v);
        else lua_pushstring(L, tl_table_str(t, c, r));
        break;
    case TL_COL_F64: lua_pushnumber(L, col->v.f[r]); break;
    case TL_COL_BOOL: lua_pushboolean(L, (int)col->v.i[r]); break;
    case TL_COL_I64: lua_pushinteger(L, col->v.i[r]); break;
    }
}

static void push_row(lua_State *L, const tl_table *t, const unsigned char *ints, size_t r)
{
    lua_createtable(L, 0, (int)t->ncols);
    for (size_t c = 0; c < t->ncols; c++) {
        push_cell(L, t, ints, c, r);
        lua_setfield(L, -2, t->cols[c].name);
    }
}

static size_t check_row(lua_State *L, const tl_table *t, int idx)
{
    lua_Integer i = luaL_checkinteger(L, idx);
    luaL_argcheck(L, i >= 1 && (size_t)i <= t->nrows, idx, "row out of range");
    return (size_t)i - 1;
}

static size_t check_col(lua_State *L, const tl_table *t, int idx)
{
    const char *name = luaL_checkstring(L, idx);
    long c = tl_ltable_col(t, name);
    if (c < 0) luaL_error(L, "no column '%s' in table %s", name, t->name);
    return (size_t)c;
}

static int t_columns(lua_State *L)
{
    tl_table *t = check(L, 1);
    lua_createtable(L, (int)t->ncols, 0);
    for (size_t c = 0; c < t->ncols; c++) {
        lua_pushstring(L, t->cols[c].name);
        lua_rawseti(L, -2, (lua_Integer)c + 1);
    }
    return 1;
}

static int t_nrows(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)check(L, 1)->nrows);
    return 1;
}

static int t_name(lua_State *L)
{
    lua_pushstring(L, check(L, 1)->name);
    return 1;
}

static int t_row(lua_State *L)
{
    tl_table *t = check(L, 1);
    size_t r = check_row(L, t, 2);
    push_row(L, t, param_ints(L, 1, t), r);
    return 1;
}

static int rows_iter(lua_State *L)
{
    tl_table *t = check(L, lua_upvalueindex(1));
    lua_Integer i = lua_tointeger(L, lua_upvalueindex(2));
    if ((size_t)i >= t->nrows) return 0;
    lua_pushinteger(L, i + 1);
    lua_replace(L, lua_upvalueindex(2));
    lua_pushinteger(L, i + 1);
    push_row(L, t, param_ints(L, lua_upvalueindex(1), t), (size_t)i);
    return 2;
}

static int t_rows(lua_State *L)
{
    check(L, 1);
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, rows_iter, 2);
    return 1;
}

static int t_get(lua_State *L)
{
    tl_table *t = check(L, 1);
    size_t r = check_row(L, t, 2), c = check_col(L, t, 3);
    push_cell(L, t, param_ints(L, 1, t), c, r);
    return 1;
}

static int t_column(lua_State *L)
{
    tl_table *t = check(L, 1);
    size_t c = check_col(L, t, 2);
    const unsigned char *ints = param_ints(L, 1, t);
    lua_createtable(L, (int)t->nrows, 0);
    for (size_t r = 0; r < t->nrows; r++) {
        push_cell(L, t, ints, c, r);
        lua_rawseti(L, -2, (lua_Integer)r + 1);
    }
    return 1;
}

/* A scratch array of n entries of size w in a userdata pushed on the stack:
 * charged to the state's memory cap and freed by the collector when a Lua
 * error unwinds (no C buffer to leak). */
static void *scratch(lua_State *L, size_t n, size_t w)
{
    if (n > (SIZE_MAX - w) / w) luaL_error(L, "too many entries (%I)", (lua_Integer)n);
    return lua_newuserdatauv(L, (n + 1) * w, 0);
}

/* The raw length of the array argument at idx (a __len metamethod is not
 * consulted: it could claim any size). */
static size_t array_len(lua_State *L, int idx, const char *fn)
{
    luaL_argexpected(L, lua_type(L, idx) == LUA_TTABLE, idx, "table");
    lua_Unsigned n = lua_rawlen(L, idx);
    if (n > (lua_Unsigned)LUA_MAXINTEGER) luaL_error(L, "%s: the array is too long", fn);
    return (size_t)n;
}

/* t:filter(function(row) return bool end) -> new table */
static int t_filter(lua_State *L)
{
    tl_table *t = check(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    const unsigned char *ints = param_ints(L, 1, t);
    size_t *keep = scratch(L, t->nrows, sizeof *keep), n = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        lua_pushvalue(L, 2);
        push_row(L, t, ints, r);
        lua_call(L, 1, 1);
        if (lua_toboolean(L, -1)) keep[n++] = r;
        lua_pop(L, 1);
    }
    tl_ltable_push(L, tl_table_take(t, t->name, keep, n));
    return 1;
}

/* A copy of t (a Table Lua shares is never changed in place). */
static tl_table *copy_all(const tl_table *t)
{
    size_t *all = tl_xmalloc((t->nrows + 1) * sizeof *all);
    for (size_t r = 0; r < t->nrows; r++) all[r] = r;
    tl_table *out = tl_table_take(t, t->name, all, t->nrows);
    free(all);
    return out;
}

/* t:take(indices) -> new table of those rows (1-based), in that order. The
 * array's raw length counts (not __len); each entry must be an integer row
 * number (an integral float is one). */
static int t_take(lua_State *L)
{
    tl_table *t = check(L, 1);
    size_t n = array_len(L, 2, "take");
    size_t *rows = scratch(L, n, sizeof *rows);
    for (size_t i = 0; i < n; i++) {
        int isint = 0;
        lua_Integer r = lua_rawgeti(L, 2, (lua_Integer)i + 1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
        lua_pop(L, 1);
        if (!isint) return luaL_error(L, "take: indices[%I] is not an integer row number", (lua_Integer)i + 1);
        if (r < 1 || (lua_Unsigned)r > t->nrows)
            return luaL_error(L, "take: row %I out of range 1..%I", r, (lua_Integer)t->nrows);
        rows[i] = (size_t)r - 1;
    }
    tl_ltable_push(L, tl_table_take(t, t->name, rows, n));
    return 1;
}

/* t:select{col, ...} -> new table with those columns, in that order (the
 * array's raw length counts; a column named twice is kept once). */
static int t_select(lua_State *L)
{
    tl_table *t = check(L, 1);
    size_t n = array_len(L, 2, "select");
    const char **names = scratch(L, n, sizeof *names);
    for (size_t i = 0; i < n; i++) {
        /* strings only (a number converted here would not be kept alive by
         * the argument table) */
        if (lua_rawgeti(L, 2, (lua_Integer)i + 1) != LUA_TSTRING)
            return luaL_error(L, "select: columns[%I] is a %s, not a column name", (lua_Integer)i + 1,
                              luaL_typename(L, -1));
        names[i] = lua_tostring(L, -1);
        lua_pop(L, 1); /* the argument table keeps the string alive */
        if (tl_table_col(t, names[i]) < 0) return luaL_error(L, "select: no column '%s'", names[i]);
    }
    tl_table *out = copy_all(t);
    tl_table_select(out, names, n);
    tl_ltable_push(L, out);
    return 1;
}

/* The type of a column holding the Lua values at the top of the stack
 * (checked for each row by value_at): the narrowest of int, float, bool, text. */
static tl_coltype infer_type(lua_State *L, int values, size_t nrows)
{
    int is_const = !lua_istable(L, values);
    int ints = 1, nums = 1, bools = 1, any = 0;
    for (size_t r = 0; r < (is_const ? 1 : nrows); r++) {
        if (!is_const) lua_rawgeti(L, values, (lua_Integer)r + 1);
        else lua_pushvalue(L, values);
        int ty = lua_type(L, -1);
        if (ty != LUA_TNIL) {
            any = 1;
            if (ty != LUA_TNUMBER) ints = nums = 0;
            else if (!lua_isinteger(L, -1)) ints = 0;
            if (ty != LUA_TBOOLEAN) bools = 0;
        }
        lua_pop(L, 1);
    }
    if (!any) return TL_COL_STR;
    if (ints && nums) return TL_COL_I64;
    if (nums) return TL_COL_F64;
    if (bools) return TL_COL_BOOL;
    return TL_COL_STR;
}

/* t:with_column(name, values) -> new table with a column appended (or
 * replaced): values is an array of one value per row (nil = missing) or one
 * value for every row. */
static int t_with_column(lua_State *L)
{
    tl_table *t = check(L, 1);
    const char *name = luaL_checkstring(L, 2);
    luaL_checkany(L, 3);
    lua_settop(L, 3);
    /* #values (a __len may declare trailing nils) is only compared with the
     * row count, never used as a size: the values are read raw, one per row */
    if (lua_istable(L, 3)) {
        lua_Integer n = luaL_len(L, 3);
        if (n != (lua_Integer)t->nrows)
            return luaL_error(L, "with_column: %I values for %I rows", n, (lua_Integer)t->nrows);
    }
    tl_coltype type = infer_type(L, 3, t->nrows);
    tl_table *out = copy_all(t);
    tl_ltable_push(L, out); /* owned by Lua from here: a __tostring below may raise */
    if (tl_table_col(out, name) >= 0) tl_table_drop(out, name);
    size_t c = tl_table_add_col(out, name, type);
    for (size_t r = 0; r < out->nrows; r++) {
        if (lua_istable(L, 3)) lua_rawgeti(L, 3, (lua_Integer)r + 1);
        else lua_pushvalue(L, 3);
        if (lua_isnil(L, -1)) tl_table_set_null(out, c, r);
        else if (type == TL_COL_I64) tl_table_set_i64(out, c, r, lua_tointeger(L, -1));
        else if (type == TL_COL_F64) tl_table_set_f64(out, c, r, lua_tonumber(L, -1));
        else if (type == TL_COL_BOOL) tl_table_set_bool(out, c, r, lua_toboolean(L, -1));
        else tl_table_set_str(out, c, r, luaL_tolstring(L, -1, NULL)), lua_pop(L, 1);
        lua_pop(L, 1);
    }
    return 1;
}

/* t:sort(col [, desc]) or t:sort{{col, desc}, ...} -> new table (stable) */
static int t_sort(lua_State *L)
{
    tl_table *t = check(L, 1);
    tl_sortkey keys[16];
    size_t nk = 0;
    if (lua_istable(L, 2)) {
        size_t n = array_len(L, 2, "sort");
        if (n < 1 || n > 16) return luaL_error(L, "sort: 1 to 16 keys {{col, desc}, ...}, not %I", (lua_Integer)n);
        for (size_t i = 1; i <= n; i++) {
            /* raw reads of strings the key tables keep alive */
            if (lua_rawgeti(L, 2, (lua_Integer)i) != LUA_TTABLE || lua_rawgeti(L, -1, 1) != LUA_TSTRING)
                return luaL_error(L, "sort: key %I must be {column name, desc}", (lua_Integer)i);
            lua_rawgeti(L, -2, 2);
            keys[nk].col = lua_tostring(L, -2);
            keys[nk].desc = lua_toboolean(L, -1);
            check_col(L, t, -2);
            nk++;
            lua_pop(L, 3);
        }
    } else {
        keys[0].col = luaL_checkstring(L, 2);
        keys[0].desc = lua_toboolean(L, 3);
        check_col(L, t, 2);
        nk = 1;
    }
    size_t *all = tl_xmalloc((t->nrows + 1) * sizeof *all);
    for (size_t r = 0; r < t->nrows; r++) all[r] = r;
    tl_table *c = tl_table_take(t, t->name, all, t->nrows);
    free(all);
    tl_table_sort(c, keys, nk);
    tl_ltable_push(L, c);
    return 1;
}

static int t_write_csv(lua_State *L)
{
    tl_lua_refuse_in_sandbox(L, "Table:write_csv");
    tl_table *t = check(L, 1);
    const char *path = luaL_checkstring(L, 2);
    tl_outfile of;
    tl_error err;
    if (tl_outfile_open(&of, path, &err) != 0) return luaL_error(L, "%s", err.msg);
    tl_table_write_csv(t, of.f);
    if (tl_outfile_commit(&of, &err) != 0) return luaL_error(L, "%s", err.msg);
    return 0;
}

static int t_gc(lua_State *L)
{
    ltable *u = luaL_checkudata(L, 1, TL_TABLE_MT);
    tl_table_free(u->t);
    u->t = NULL;
    return 0;
}

static int t_tostring(lua_State *L)
{
    ltable *u = luaL_checkudata(L, 1, TL_TABLE_MT);
    if (!u->t) lua_pushliteral(L, "table (closed)");
    else lua_pushfstring(L, "table %s (%d rows x %d columns)", u->t->name, (int)u->t->nrows, (int)u->t->ncols);
    return 1;
}

static const luaL_Reg methods[] = {{"columns", t_columns}, {"nrows", t_nrows},   {"name", t_name},
                                   {"row", t_row},         {"rows", t_rows},     {"get", t_get},
                                   {"column", t_column},   {"filter", t_filter}, {"sort", t_sort},
                                   {"with_column", t_with_column}, {"take", t_take},
                                   {"select", t_select},
                                   {"group_by", tl_l_table_group_by}, {"join", tl_l_table_join},
                                   {"preview", tl_l_table_preview},
                                   {"write_csv", t_write_csv}, {NULL, NULL}};

void tl_ltable_register(lua_State *L)
{
    tl_lua_handle_class(L, TL_TABLE_MT, methods, t_gc, t_nrows, t_tostring);
    tl_ltable_ops_register(L);
}

/* ------------------------------------------------- trace:report/table */

/* trace:platform([opts]) -> {name=, path=, how=, host_link=, host_link_gbps=}
 * (the arch a report with these options would use: opts.platform, opts.arch,
 * else detection; the host link fields when the file has them), or {how=}
 * when there is none. */
int tl_l_trace_platform(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    lua_settop(L, 2);
    const char *platform = tl_lopt_str(L, 2, "platform", "platform");
    const char *arch_path = tl_lopt_str(L, 2, "arch", "platform");
    tl_arch arch;
    memset(&arch, 0, sizeof arch);
    tl_platform_choice pc;
    tl_error err;
    if (tl_platform_resolve(t, platform, arch_path, &arch, &pc, &err) != 0) return luaL_error(L, "%s", err.msg);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, pc.how);
    lua_setfield(L, -2, "how");
    if (pc.have_arch) {
        lua_pushstring(L, arch.name ? arch.name : (platform ? platform : ""));
        lua_setfield(L, -2, "name");
        lua_pushstring(L, pc.path);
        lua_setfield(L, -2, "path");
        if (arch.host_link) {
            lua_pushstring(L, arch.host_link);
            lua_setfield(L, -2, "host_link");
        }
        if (arch.has_host_link_bw) {
            lua_pushnumber(L, arch.host_link_gbps);
            lua_setfield(L, -2, "host_link_gbps");
        }
        tl_arch_free(&arch);
    }
    return 1;
}

/* trace:report{background = true}: the report built on a thread of its
 * own (it only reads the trace, which the job keeps alive) while the
 * caller's Lua state goes on; job:wait() returns what trace:report would,
 * or raises its error. */
#define REPORT_JOB_MT "tracelens.report_build_job"

/* What a report build is charged in a capped task while it runs (a
 * background one until its sheets are taken or the job is collected): the
 * build's working memory is made in C, outside the Lua heap, and a
 * background one has a thread of its own (its stack, its malloc arena), so
 * that a task cannot run more builds at once than its cap allows. */
enum { REPORT_BUILD_BASE = 4 << 20 };
static size_t report_build_bytes(const tl_trace *t) { return REPORT_BUILD_BASE + tl_ltrace_bytes(t) / 8; }

/* Charges a report build to L's limits (none: nothing); raises when over. */
static size_t reserve_build(lua_State *L, const tl_trace *t, tl_limits **limp)
{
    tl_limits *lim = tl_limits_of(L);
    *limp = lim;
    if (!lim) return 0;
    size_t n = report_build_bytes(t);
    if (tl_limits_charge(lim, n) != 0) {
        lim->out_of_memory = 1;
        tl_limits_raise(L, "memory limit exceeded (a report build, %.1f MB; cap %.1f MB)", n / 1048576.0,
                        lim->hit / 1048576.0);
    }
    return n;
}

typedef struct report_job {
    tl_trace *t; /* retained */
    tl_limits *lim; /* retained, or NULL: charged `reserved` bytes while the job holds them */
    size_t reserved;
    tl_report_opts o;
    tl_arch arch;
    int have_arch;
    char how[sizeof ((tl_platform_choice *)0)->how];
    pthread_t th;
    int threaded, done, rc, handed; /* handed: the sheets went to Lua */
    tl_error err;
    tl_sheets s;
    tl_kernel_ngrams ngrams; /* the kernel_sequences sheet's sequences (job:kernel_sequences()) */
} report_job;

typedef struct lreport_job {
    report_job *j;
} lreport_job;

static void *report_job_main(void *arg)
{
    report_job *j = arg;
    j->rc = tl_report_build(j->t, &j->o, &j->s, &j->err);
    return NULL;
}

/* Waits for the build (once). */
static void report_job_join(report_job *j)
{
    if (j->done) return;
    if (j->threaded) pthread_join(j->th, NULL);
    j->done = 1;
}

/* Gives back the job's charge (once). */
static void report_job_unreserve(report_job *j)
{
    if (j->lim) tl_limits_uncharge(j->lim, j->reserved);
    tl_limits_release(j->lim);
    j->lim = NULL;
    j->reserved = 0;
}

static void report_job_free(report_job *j)
{
    if (!j) return;
    report_job_join(j);
    report_job_unreserve(j);
    if (j->rc == 0 && !j->handed) tl_sheets_free(&j->s);
    tl_kernel_ngrams_free(&j->ngrams);
    if (j->have_arch) tl_arch_free(&j->arch);
    tl_trace_release(j->t);
    free(j);
}

static int report_job_gc(lua_State *L)
{
    lreport_job *u = luaL_checkudata(L, 1, REPORT_JOB_MT);
    report_job_free(u->j);
    u->j = NULL;
    return 0;
}

/* job:wait() -> the sheets table (the same table on every call). */
static int report_job_wait(lua_State *L)
{
    lreport_job *u = luaL_checkudata(L, 1, REPORT_JOB_MT);
    if (lua_getiuservalue(L, 1, 1) == LUA_TTABLE) return 1;
    lua_pop(L, 1);
    report_job *j = u->j;
    if (!j) return luaL_error(L, "report: the job is closed");
    report_job_join(j);
    if (j->rc != 0) return luaL_error(L, "%s", j->err.msg);
    if (j->handed) return luaL_error(L, "report: the job's sheets are gone (out of memory)");
    j->handed = 1; /* tl_lreport_push_sheets frees them, also when it fails */
    report_job_unreserve(j); /* the Tables are charged as they are pushed */
    tl_lreport_push_sheets(L, &j->s);
    lua_pushstring(L, j->how);
    lua_setfield(L, -2, "__platform");
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, 1, 1);
    return 1;
}

/* job:kernel_sequences() -> what trace:kernel_sequences() (default options)
 * returns, from the sequences the report computed for its sheet (computed
 * here when it did not: the sheet turned off). Waits for the build; raises
 * its error. */
static int report_job_kernel_sequences(lua_State *L)
{
    lreport_job *u = luaL_checkudata(L, 1, REPORT_JOB_MT);
    report_job *j = u->j;
    if (!j) return luaL_error(L, "report: the job is closed");
    report_job_join(j);
    if (j->rc != 0) return luaL_error(L, "%s", j->err.msg);
    if (!j->ngrams.opts.min_len) tl_kernel_ngrams_compute(j->t, NULL, &j->ngrams);
    tl_l_push_kernel_ngrams(L, j->t, &j->ngrams);
    return 1;
}

/* Pushes a job box (its job allocated, not started): what it holds is
 * freed by the collector, also when a Lua error comes before the start. */
static report_job *new_report_job(lua_State *L)
{
    lreport_job *u = lua_newuserdatauv(L, sizeof *u, 1);
    u->j = NULL;
    if (luaL_newmetatable(L, REPORT_JOB_MT)) {
        static const luaL_Reg methods[] = {
            {"wait", report_job_wait}, {"kernel_sequences", report_job_kernel_sequences}, {NULL, NULL}};
        luaL_newlib(L, methods);
        lua_setfield(L, -2, "__index");
        lua_pushcfunction(L, report_job_gc);
        lua_setfield(L, -2, "__gc");
        tl_lua_protect_metatable(L, REPORT_JOB_MT);
    }
    lua_setmetatable(L, -2);
    u->j = tl_xcalloc(1, sizeof *u->j);
    return u->j;
}

/* Starts the build of o on t (j->arch resolved when have_arch). */
static void start_report_job(report_job *j, tl_trace *t, const tl_report_opts *o, int have_arch, const char *how)
{
    j->t = t;
    tl_trace_retain(t);
    j->o = *o;
    j->have_arch = have_arch;
    j->o.arch = have_arch ? &j->arch : NULL;
    j->o.ngrams_out = &j->ngrams;
    snprintf(j->how, sizeof j->how, "%s", how);
    j->threaded = pthread_create(&j->th, NULL, report_job_main, j) == 0;
    if (!j->threaded) report_job_main(j);
}

/* Builds every sheet with the options at idx (a table or nil); returns a
 * Lua table name -> Table, plus the platform description; with
 * background = true, a job whose :wait() returns them. */
static int build_report(lua_State *L, tl_trace *t, int idx)
{
    tl_report_opts o;
    tl_report_opts_default(&o);
    const tl_trace *compare = NULL;
    lua_settop(L, idx);
    /* the string options stay on the stack (idx + 1 ..) while they are used */
    const char *write_dir = tl_lopt_str(L, idx, "write", "report");
    const char *platform = tl_lopt_str(L, idx, "platform", "report");
    const char *arch_path = tl_lopt_str(L, idx, "arch", "report");
    o.extension_path = tl_lopt_str(L, idx, "extension", "report");
    o.load_extension = tl_lua_extension_load;
    /* name = BASE: DIR/BASE_csvs/ and DIR/BASE.xlsx (default perf_report) */
    o.name = tl_lopt_str(L, idx, "name", "report");
    /* an extension runs in a Lua state of its own with every library, and
     * write = DIR writes files: neither from a rule or an analyzer */
    if (o.extension_path) tl_lua_refuse_in_sandbox(L, "trace:report{extension = ...}");
    if (write_dir) tl_lua_refuse_in_sandbox(L, "trace:report{write = ...}");
    int background = 0;
    if (lua_istable(L, idx)) {
        background = tl_lopt_bool(L, idx, "background", 0);
        /* write = DIR: also write DIR/perf_report_csvs/ and (xlsx ~= false) DIR/perf_report.xlsx */
        o.xlsx = tl_lopt_bool(L, idx, "xlsx", 1);
        o.include_unlinked = tl_lopt_bool(L, idx, "include_unlinked", 0);
        /* µs -> ns: bounded so the product fits int64 */
        double micro = tl_lopt_range(L, idx, "micro_idle_thresh_us", -1, 0, 1e12, "report");
        o.micro_idle_ns = micro >= 0 ? (int64_t)(micro * 1000.0 + 0.5) : -1;
        /* inference = true: the inference report (kernel_summary and the
         * short-kernel sheets then off unless asked); group_by_parent_module
         * needs python functions in the tree */
        o.inference = tl_lopt_bool(L, idx, "inference", 0);
        o.group_by_parent_module = tl_lopt_bool(L, idx, "group_by_parent_module", 0);
        o.kernel_summary = tl_lopt_bool(L, idx, "kernel_summary", !o.inference);
        o.step_breakdown = tl_lopt_bool(L, idx, "step_breakdown", 1);
        o.idle_breakdown = tl_lopt_bool(L, idx, "idle_breakdown", 1);
        o.launch_stats = tl_lopt_bool(L, idx, "launch_stats", 1);
        o.user_annotations = tl_lopt_bool(L, idx, "user_annotations", 1);
        o.kernel_sequences = tl_lopt_bool(L, idx, "kernel_sequences", 1);
        o.memcpy_summary = tl_lopt_bool(L, idx, "memcpy_summary", 1);
        o.memory_timeline = tl_lopt_bool(L, idx, "memory_timeline", 1);
        o.short_kernel_study = tl_lopt_bool(L, idx, "short_kernel_study", !o.inference);
        o.short_threshold_us = tl_lopt_range(L, idx, "short_kernel_threshold_us", 10, 0, 1e12, "report");
        o.short_bins = (int)tl_lopt_int(L, idx, "short_kernel_histogram_bins", 100, 1, 1000000, "report");
        o.group_by_num_kernels = tl_lopt_bool(L, idx, "group_by_num_kernels", 0);
        o.coll_analysis = tl_lopt_bool(L, idx, "coll_analysis", 1);
        o.topk_ops = (long)tl_lopt_int(L, idx, "topk_ops", 0, 0, LUA_MAXINTEGER, "report");
        o.topk_roofline_ops = (long)tl_lopt_int(L, idx, "topk_roofline_ops", 0, 0, LUA_MAXINTEGER, "report");
        o.detect_recompute = tl_lopt_bool(L, idx, "detect_recompute", 0);
        o.include_overlap_info = tl_lopt_bool(L, idx, "include_overlap_info", 0);
        /* call-stack columns: default when the trace has python functions */
        o.call_stack = tl_lopt_bool(L, idx, "include_call_stack", -1);
        /* pseudo ops: default as the trace was loaded; true on a trace loaded
         * without them: this report runs on a private copy that has them */
        o.pseudo_ops = tl_lopt_bool(L, idx, "enable_pseudo_ops", -1);
        /* compare = trace2: TraceDiff columns and the diff_stats sheet (the
         * handle stays on the stack, and so the trace alive) */
        if (lua_getfield(L, idx, "compare") != LUA_TNIL) {
            compare = tl_ltrace_test(L, -1);
            if (!compare) return luaL_error(L, "report: compare must be a trace (tl.load)");
        }
    }
    /* the job holds no Lua string: nothing that writes, loads a module or
     * builds a second trace's TraceDiff */
    if (background && (write_dir || o.extension_path || compare))
        return luaL_error(L, "report: background cannot be combined with write, extension or compare");
    tl_platform_choice pc;
    tl_error err;
    if (background) {
        report_job *j = new_report_job(L);
        tl_limits *lim;
        j->reserved = reserve_build(L, t, &lim); /* the job gives it back (its __gc too, after a raise below) */
        j->lim = lim;
        tl_limits_retain(lim);
        if (tl_platform_resolve(t, platform, arch_path, &j->arch, &pc, &err) != 0) return luaL_error(L, "%s", err.msg);
        o.name = NULL;
        start_report_job(j, t, &o, pc.have_arch, pc.how);
        return 1;
    }
    tl_limits *lim;
    size_t reserved = reserve_build(L, t, &lim); /* raises before anything is made */
    tl_arch arch;
    memset(&arch, 0, sizeof arch);
    if (tl_platform_resolve(t, platform, arch_path, &arch, &pc, &err) != 0) {
        if (lim) tl_limits_uncharge(lim, reserved);
        return luaL_error(L, "%s", err.msg);
    }
    o.arch = pc.have_arch ? &arch : NULL;
    tl_sheets s;
    /* compare = t2: TraceDiff beside the report build adds its columns to
     * unified_perf_summary and the diff_stats sheet */
    tl_diff_beside db;
    if (compare) {
        tl_diff_beside_init(&db, compare, o.pseudo_ops);
        o.unified_hook = (tl_report_unified_hook){&db, tl_diff_beside_begin, tl_diff_beside_end, "diff_stats"};
    }
    int rc = tl_report_build(t, &o, &s, &err);
    if (lim) tl_limits_uncharge(lim, reserved);
    if (compare) tl_diff_beside_free(&db);
    if (pc.have_arch) tl_arch_free(&arch);
    if (rc != 0) return luaL_error(L, "%s", err.msg);
    if (write_dir && tl_report_write(&s, write_dir, &o, &err) != 0) {
        tl_sheets_free(&s);
        return luaL_error(L, "%s", err.msg);
    }
    tl_lreport_push_sheets(L, &s);
    lua_pushstring(L, pc.how);
    lua_setfield(L, -2, "__platform");
    return 1;
}

/* The report with options at idx; without options it is built once per
 * trace handle and cached (its Tables are never modified in place). */
static int report_of(lua_State *L, tl_trace *t, int idx)
{
    if (!lua_isnoneornil(L, idx)) return build_report(L, t, idx);
    if (lua_getiuservalue(L, 1, 1) == LUA_TTABLE) return 1;
    lua_pop(L, 1);
    build_report(L, t, idx);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, 1, 1);
    return 1;
}

int tl_l_trace_report(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    return report_of(L, t, 2);
}

int tl_l_trace_table(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const char *name = luaL_checkstring(L, 2);
    report_of(L, t, 3);
    lua_getfield(L, -1, name);
    if (lua_isnil(L, -1)) return luaL_error(L, "no sheet '%s' in this trace's report", name);
    return 1;
}
