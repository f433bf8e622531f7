#include "ltable.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lopts.h"
#include "lreport.h"
#include "../report/outfile.h"
#include "../report/platform.h"
#include "../report/report.h"
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

void tl_ltable_push(lua_State *L, tl_table *t)
{
    ltable *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->t = t;
    luaL_setmetatable(L, TL_TABLE_MT);
}

static void push_cell(lua_State *L, const tl_table *t, size_t c, size_t r)
{
    if (tl_table_is_null(t, c, r)) {
        lua_pushnil(L);
        return;
    }
    const tl_col *col = &t->cols[c];
    switch (col->type) {
    case TL_COL_STR: lua_pushstring(L, tl_table_str(t, c, r)); break;
    case TL_COL_F64: lua_pushnumber(L, col->v.f[r]); break;
    case TL_COL_BOOL: lua_pushboolean(L, (int)col->v.i[r]); break;
    case TL_COL_I64: lua_pushinteger(L, col->v.i[r]); break;
    }
}

static void push_row(lua_State *L, const tl_table *t, size_t r)
{
    lua_createtable(L, 0, (int)t->ncols);
    for (size_t c = 0; c < t->ncols; c++) {
        push_cell(L, t, c, r);
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
    long c = tl_table_col(t, name);
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
    push_row(L, t, check_row(L, t, 2));
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
    push_row(L, t, (size_t)i);
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
    size_t r = check_row(L, t, 2);
    push_cell(L, t, check_col(L, t, 3), r);
    return 1;
}

static int t_column(lua_State *L)
{
    tl_table *t = check(L, 1);
    size_t c = check_col(L, t, 2);
    lua_createtable(L, (int)t->nrows, 0);
    for (size_t r = 0; r < t->nrows; r++) {
        push_cell(L, t, c, r);
        lua_rawseti(L, -2, (lua_Integer)r + 1);
    }
    return 1;
}

/* t:filter(function(row) return bool end) -> new table */
static int t_filter(lua_State *L)
{
    tl_table *t = check(L, 1);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    size_t *keep = tl_xmalloc((t->nrows + 1) * sizeof *keep), n = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        lua_pushvalue(L, 2);
        push_row(L, t, r);
        if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
            free(keep);
            return lua_error(L);
        }
        if (lua_toboolean(L, -1)) keep[n++] = r;
        lua_pop(L, 1);
    }
    tl_ltable_push(L, tl_table_take(t, t->name, keep, n));
    free(keep);
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

/* t:take(indices) -> new table of those rows (1-based), in that order. */
static int t_take(lua_State *L)
{
    tl_table *t = check(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t n = (size_t)luaL_len(L, 2);
    size_t *rows = tl_xmalloc((n + 1) * sizeof *rows);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        lua_Integer r = lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (r < 1 || (size_t)r > t->nrows) {
            free(rows);
            return luaL_error(L, "take: row %d out of range 1..%d", (int)r, (int)t->nrows);
        }
        rows[i] = (size_t)r - 1;
    }
    tl_ltable_push(L, tl_table_take(t, t->name, rows, n));
    free(rows);
    return 1;
}

/* t:select{col, ...} -> new table with those columns, in that order. */
static int t_select(lua_State *L)
{
    tl_table *t = check(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t n = (size_t)luaL_len(L, 2);
    const char **names = tl_xmalloc((n + 1) * sizeof *names);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        names[i] = lua_tostring(L, -1);
        lua_pop(L, 1); /* the argument table keeps the string alive */
        if (!names[i] || tl_table_col(t, names[i]) < 0) {
            const char *bad = names[i] ? names[i] : "?";
            free(names);
            return luaL_error(L, "select: no column '%s'", bad);
        }
    }
    tl_table *out = copy_all(t);
    tl_table_select(out, names, n);
    free(names);
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
    if (lua_istable(L, 3) && luaL_len(L, 3) != (lua_Integer)t->nrows)
        return luaL_error(L, "with_column: %d values for %d rows", (int)luaL_len(L, 3), (int)t->nrows);
    tl_coltype type = infer_type(L, 3, t->nrows);
    tl_table *out = copy_all(t);
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
    tl_ltable_push(L, out);
    return 1;
}

/* t:sort(col [, desc]) or t:sort{{col, desc}, ...} -> new table (stable) */
static int t_sort(lua_State *L)
{
    tl_table *t = check(L, 1);
    tl_sortkey keys[16];
    size_t nk = 0;
    if (lua_istable(L, 2)) {
        for (lua_Integer i = 1; nk < 16 && lua_rawgeti(L, 2, i) == LUA_TTABLE; i++) {
            lua_rawgeti(L, -1, 1);
            lua_rawgeti(L, -2, 2);
            keys[nk].col = luaL_checkstring(L, -2);
            keys[nk].desc = lua_toboolean(L, -1);
            check_col(L, t, -2);
            nk++;
            lua_pop(L, 3);
        }
        lua_pop(L, 1);
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
                                   {"write_csv", t_write_csv}, {NULL, NULL}};

void tl_ltable_register(lua_State *L)
{
    tl_lua_handle_class(L, TL_TABLE_MT, methods, t_gc, t_nrows, t_tostring);
}

/* ------------------------------------------------- trace:report/table */

/* trace:platform([opts]) -> {name=, path=, how=} (the arch a report with
 * these options would use: opts.platform, opts.arch, else detection), or
 * {how=} when there is none. */
int tl_l_trace_platform(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const char *platform = NULL, *arch_path = NULL;
    if (lua_istable(L, 2)) {
        lua_getfield(L, 2, "platform");
        platform = lua_tostring(L, -1);
        lua_getfield(L, 2, "arch");
        arch_path = lua_tostring(L, -1);
        lua_pop(L, 2);
    }
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
        tl_arch_free(&arch);
    }
    return 1;
}

/* Builds every sheet with the options at idx (a table or nil); returns a
 * Lua table name -> Table, plus the platform description. */
static int build_report(lua_State *L, tl_trace *t, int idx)
{
    tl_report_opts o;
    tl_report_opts_default(&o);
    const char *platform = NULL, *arch_path = NULL, *write_dir = NULL;
    if (lua_istable(L, idx)) {
        /* write = DIR: also write DIR/perf_report_csvs/ and (xlsx ~= false) DIR/perf_report.xlsx */
        lua_getfield(L, idx, "write");
        write_dir = lua_tostring(L, -1);
        lua_pop(L, 1);
        o.xlsx = tl_lopt_bool(L, idx, "xlsx", 1);
        /* name = BASE: DIR/BASE_csvs/ and DIR/BASE.xlsx (default perf_report) */
        lua_getfield(L, idx, "name");
        o.name = lua_tostring(L, -1);
        lua_pop(L, 1);
        o.include_unlinked = tl_lopt_bool(L, idx, "include_unlinked", 0);
        double micro = tl_lopt_num(L, idx, "micro_idle_thresh_us", -1);
        o.micro_idle_ns = micro >= 0 ? (int64_t)(micro * 1000.0 + 0.5) : -1;
        o.kernel_summary = tl_lopt_bool(L, idx, "kernel_summary", 1);
        o.short_kernel_study = tl_lopt_bool(L, idx, "short_kernel_study", 1);
        o.short_threshold_us = tl_lopt_num(L, idx, "short_kernel_threshold_us", 10);
        o.short_bins = (int)tl_lopt_num(L, idx, "short_kernel_histogram_bins", 100);
        o.group_by_num_kernels = tl_lopt_bool(L, idx, "group_by_num_kernels", 0);
        o.coll_analysis = tl_lopt_bool(L, idx, "coll_analysis", 1);
        o.topk_ops = (long)tl_lopt_num(L, idx, "topk_ops", 0);
        o.topk_roofline_ops = (long)tl_lopt_num(L, idx, "topk_roofline_ops", 0);
        o.detect_recompute = tl_lopt_bool(L, idx, "detect_recompute", 0);
        o.include_overlap_info = tl_lopt_bool(L, idx, "include_overlap_info", 0);
        /* call-stack columns: default when the trace has python functions */
        o.call_stack = tl_lopt_bool(L, idx, "include_call_stack", -1);
        /* pseudo ops: default as the trace was loaded; true on a trace loaded
         * without them: this report runs on a private copy that has them */
        o.pseudo_ops = tl_lopt_bool(L, idx, "enable_pseudo_ops", -1);
        lua_getfield(L, idx, "platform");
        platform = lua_tostring(L, -1);
        lua_getfield(L, idx, "arch");
        arch_path = lua_tostring(L, -1);
        if (lua_getfield(L, idx, "extension") != LUA_TNIL && !lua_isstring(L, -1))
            return luaL_error(L, "report: extension must be the path of a Lua module");
        o.extension_path = lua_tostring(L, -1);
        lua_pop(L, 3); /* the options table keeps the strings alive */
        /* compare = trace2: TraceDiff columns and the diff_stats sheet (the
         * options table keeps the handle, and so the trace, alive) */
        if (lua_getfield(L, idx, "compare") != LUA_TNIL) {
            o.compare = tl_ltrace_test(L, -1);
            if (!o.compare) return luaL_error(L, "report: compare must be a trace (tl.load)");
        }
        lua_pop(L, 1);
    }
    tl_arch arch;
    memset(&arch, 0, sizeof arch);
    tl_platform_choice pc;
    tl_error err;
    if (tl_platform_resolve(t, platform, arch_path, &arch, &pc, &err) != 0) return luaL_error(L, "%s", err.msg);
    o.arch = pc.have_arch ? &arch : NULL;
    tl_sheets s;
    int rc = tl_report_build(t, &o, &s, &err);
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
