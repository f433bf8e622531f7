#include "lanalysis.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/fusion.h"
#include "../analysis/multi_kernel.h"
#include "../report/perf_eval.h"
#include "../report/sheets_perf.h"
#include "../util/bigmem.h"
#include "../util/hashmap.h"
#include "../util/vec.h"
#include "lfields.h"
#include "ltable.h"
#include "ltrace.h"

/* A duration in µs: an integer when the file had a JSON integer. */
static void push_dur(lua_State *L, const tl_event_store *es, uint32_t u)
{
    if (es->flags[u] & TL_F_DUR_INT) lua_pushinteger(L, es->dur[u] / 1000);
    else lua_pushnumber(L, (double)es->dur[u] / 1000.0);
}

static void push_sum(lua_State *L, size_t count, int all_int, int64_t ns, double us)
{
    if (!count) lua_pushinteger(L, 0);
    else if (all_int) lua_pushinteger(L, ns / 1000);
    else lua_pushnumber(L, us);
}

/* count, total, max of a set of durations into the table on top */
static void set_durs(lua_State *L, const tl_event_store *es, const tl_mk_durs *d)
{
    tl_lset_int(L, "count", (lua_Integer)d->count);
    push_sum(L, d->count, d->all_int, d->sum_ns, d->sum_us);
    lua_setfield(L, -2, "total");
    if (d->max_uid != TL_NOUID) {
        push_dur(L, es, d->max_uid);
        lua_setfield(L, -2, "max");
    }
}

/* An interval union's length: 0 (an integer) when empty. */
static void set_len(lua_State *L, const char *k, const tl_mk_len *v, int all_int)
{
    if (!v->n_iv || all_int) lua_pushinteger(L, v->ns / 1000);
    else lua_pushnumber(L, (double)v->ns / 1000.0);
    lua_setfield(L, -2, k);
}

/* args[key] of an event: integer, decoded JSON value, or nil */
static void push_arg(lua_State *L, const tl_event_store *es, uint32_t u, uint32_t key)
{
    int64_t v;
    int is_int;
    if (!(es->flags[u] & TL_F_ARGS)) lua_pushnil(L);
    else if (tl_es_arg_int(es, u, key, &v)) lua_pushinteger(L, v);
    else {
        uint32_t raw = tl_es_arg_raw(es, u, key, &is_int);
        if (raw == UINT32_MAX) lua_pushnil(L);
        else tl_push_json(L, tl_strpool_get(&es->values, raw), 0);
    }
}

int tl_l_trace_multi_kernel_stats(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const tl_event_store *es = &t->es;
    tl_multi_kernel m;
    tl_multi_kernel_compute(t, &m);
    lua_createtable(L, 0, 6);
    tl_lset_int(L, "n_gpu", (lua_Integer)m.n_gpu);
    lua_pushboolean(L, m.all_int);
    lua_setfield(L, -2, "all_int");

    static const char *const dirs[TL_MK_NDIR] = {"D2H", "H2D", "D2D", "other"};
    lua_createtable(L, 0, 2);
    tl_lset_int(L, "count", (lua_Integer)m.n_memcpy);
    lua_createtable(L, TL_MK_NDIR, 0);
    int nd = 0;
    for (int d = 0; d < TL_MK_NDIR; d++) {
        const tl_mk_dir *dir = &m.dir[d];
        if (!dir->d.count) continue;
        lua_createtable(L, 0, 6);
        lua_pushstring(L, dirs[d]);
        lua_setfield(L, -2, "direction");
        set_durs(L, es, &dir->d);
        if (dir->bytes_float) lua_pushnumber(L, (double)dir->bytes_i + dir->bytes_f);
        else lua_pushinteger(L, dir->bytes_i);
        lua_setfield(L, -2, "bytes");
        lua_pushboolean(L, dir->any_bytes);
        lua_setfield(L, -2, "any_bytes");
        tl_lset_int(L, "bytes_count", (lua_Integer)dir->n_bytes);
        tl_lset_int(L, "bytes_time_ns", (lua_Integer)dir->bytes_ns);
        lua_rawseti(L, -2, ++nd);
    }
    lua_setfield(L, -2, "directions");
    lua_setfield(L, -2, "memcpy");

    lua_createtable(L, 0, 4);
    set_durs(L, es, &m.comm);
    lua_createtable(L, (int)m.n_top, 0);
    for (size_t i = 0; i < m.n_top; i++) {
        uint32_t u = m.top[i];
        lua_createtable(L, 0, 4);
        lua_pushstring(L, tl_es_name(es, u));
        lua_setfield(L, -2, "name");
        push_dur(L, es, u);
        lua_setfield(L, -2, "dur");
        push_arg(L, es, u, TL_K_STREAM);
        lua_setfield(L, -2, "stream");
        tl_lset_int(L, "uid", u);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "top");
    lua_setfield(L, -2, "comm");

    if (m.n_gpu) {
        lua_createtable(L, 0, 6);
        if (m.all_int) lua_pushinteger(L, m.total_ns / 1000);
        else lua_pushnumber(L, (double)m.total_ns / 1000.0);
        lua_setfield(L, -2, "total");
        set_len(L, "computation", &m.computation, m.all_int);
        set_len(L, "total_comm", &m.total_comm, m.all_int);
        set_len(L, "exposed_comm", &m.exposed_comm, m.all_int);
        set_len(L, "total_memcpy", &m.total_memcpy, m.all_int);
        set_len(L, "exposed_memcpy", &m.exposed_memcpy, m.all_int);
        lua_setfield(L, -2, "overlap");
    }
    return 1;
}

static void push_time(lua_State *L, const tl_fusion_time *tm, size_t count)
{
    push_sum(L, count, tm->all_int, tm->ns, tm->us);
}

/* The walk's records live in a userdata until the tables are built, so a
 * Lua error (a memory cap) in between frees them. */
typedef struct fbox {
    tl_fusion f;
    uint32_t *idx;
} fbox;

static int fbox_gc(lua_State *L)
{
    fbox *b = lua_touserdata(L, 1);
    tl_fusion_free(&b->f);
    free(b->idx);
    b->idx = NULL;
    return 0;
}

static fbox *fbox_new(lua_State *L, const tl_event_store *es)
{
    fbox *b = tl_lua_new_box(L, sizeof *b, "tracelens.fusion_walk", fbox_gc);
    tl_fusion_init(&b->f);
    b->idx = tl_xcalloc(es->names.n + 1, sizeof(uint32_t));
    return b;
}

/* Kernel names are returned once each: names[i], referenced by index. */
typedef struct name_index {
    uint32_t *idx; /* per names id: index + 1 */
    int table;     /* stack index of the names table */
    int n;
} name_index;

static void push_name_ref(lua_State *L, name_index *ni, const tl_event_store *es, uint32_t u)
{
    uint32_t nm = es->name[u];
    if (!ni->idx[nm]) {
        lua_pushstring(L, tl_es_name(es, u));
        lua_rawseti(L, ni->table, ++ni->n);
        ni->idx[nm] = (uint32_t)ni->n;
    }
    lua_pushinteger(L, ni->idx[nm]);
}

int tl_l_trace_fusion_modules(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const tl_event_store *es = &t->es;
    fbox *box = fbox_new(L, es);
    tl_fusion *fp = &box->f;
    tl_fusion_modules(fp, t);
    const tl_fusion f = *fp;
    lua_createtable(L, (int)f.modules.n, 0);
    lua_newtable(L);
    name_index ni = {box->idx, lua_gettop(L), 0};
    for (size_t i = 0; i < f.modules.n; i++) {
        const tl_fusion_module *m = &f.modules.v[i];
        lua_createtable(L, 0, 10);
        tl_lset_int(L, "uid", m->uid);
        lua_pushlstring(L, tl_strpool_get(&f.bases, m->base), tl_strpool_len(&f.bases, m->base));
        lua_setfield(L, -2, "base");
        tl_lset_int(L, "instances", m->instances);
        push_time(L, &m->total, m->nk);
        lua_setfield(L, -2, "total");
        lua_pushboolean(L, m->has_fused);
        lua_setfield(L, -2, "has_fused");
        tl_lset_int(L, "eligible", (lua_Integer)m->eligible);
        lua_createtable(L, (int)m->nk, 0);
        lua_createtable(L, (int)m->nk, 0);
        lua_createtable(L, (int)m->nk, 0);
        for (size_t k = 0; k < m->nk; k++) {
            uint32_t g = f.kernels.v[m->k_first + k];
            lua_pushinteger(L, g);
            lua_rawseti(L, -4, (lua_Integer)k + 1);
            push_name_ref(L, &ni, es, g);
            lua_rawseti(L, -3, (lua_Integer)k + 1);
            push_dur(L, es, g);
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -4, "durs");
        lua_setfield(L, -3, "names");
        lua_setfield(L, -2, "kernels");
        if (m->ni > 1) { /* every instance's node (one instance: uid) */
            lua_createtable(L, (int)m->ni, 0);
            for (size_t k = 0; k < m->ni; k++) {
                lua_pushinteger(L, f.inst.v[m->i_first + k]);
                lua_rawseti(L, -2, (lua_Integer)k + 1);
            }
            lua_setfield(L, -2, "nodes");
        }
        lua_rawseti(L, -3, (lua_Integer)i + 1);
    }
    return 2;
}

int tl_l_trace_fusion_siblings(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const tl_event_store *es = &t->es;
    fbox *box = fbox_new(L, es);
    tl_perf_eval pe;
    tl_perf_eval_init(&pe, t, NULL);
    tl_unified_row *rows;
    size_t nrows = tl_unified_collect(&pe, &rows);
    tl_perf_eval_free(&pe);
    tl_fusion_siblings(&box->f, t, rows, nrows);
    free(rows);
    const tl_fusion f = box->f;
    lua_createtable(L, (int)f.sequences.n, 0);
    lua_newtable(L);
    name_index ni = {box->idx, lua_gettop(L), 0};
    for (size_t i = 0; i < f.sequences.n; i++) {
        const tl_fusion_sequence *s = &f.sequences.v[i];
        lua_createtable(L, 0, 6);
        tl_lset_int(L, "parent", s->parent);
        lua_pushlstring(L, tl_strpool_get(&f.bases, s->base), tl_strpool_len(&f.bases, s->base));
        lua_setfield(L, -2, "base");
        tl_lset_int(L, "instances", s->instances);
        push_time(L, &s->total, s->n);
        lua_setfield(L, -2, "total");
        lua_createtable(L, (int)s->n, 0);
        for (size_t k = 0; k < s->n; k++) {
            const tl_fusion_op *op = &f.ops.v[s->first + k];
            lua_createtable(L, 0, 4);
            if (op->synthetic)
                lua_pushfstring(L, "%s->%s (Synthetic Op)", tl_es_name(es, op->ev), tl_es_name(es, op->kernel));
            else
                lua_pushstring(L, tl_es_name(es, op->ev));
            lua_setfield(L, -2, "op");
            tl_lset_int(L, "kernel", op->kernel);
            push_name_ref(L, &ni, es, op->kernel);
            lua_setfield(L, -2, "name");
            push_dur(L, es, op->kernel);
            lua_setfield(L, -2, "dur");
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -2, "ops");
        if (s->instances > 1) { /* every instance's kernels (one instance: ops) */
            size_t nk = 0;
            lua_createtable(L, (int)s->instances, 0);
            for (size_t k = 0; k < s->instances; k++) {
                nk += f.inst_len.v[s->i_first + k];
                lua_pushinteger(L, f.inst_len.v[s->i_first + k]);
                lua_rawseti(L, -2, (lua_Integer)k + 1);
            }
            lua_setfield(L, -2, "inst_len");
            lua_createtable(L, (int)nk, 0);
            for (size_t k = 0; k < nk; k++) {
                lua_pushinteger(L, f.inst_kernels.v[s->k_first + k]);
                lua_rawseti(L, -2, (lua_Integer)k + 1);
            }
            lua_setfield(L, -2, "inst_kernels");
        }
        lua_rawseti(L, -3, (lua_Integer)i + 1);
    }
    return 2;
}

/* The comparative walk's inputs and records live in a userdata until the
 * tables are built, so a Lua error in between frees them. */
typedef struct dbox {
    tl_fusion_diff d;
    double *lca;
    uint8_t *source;
    uint32_t *uid;
    uint32_t *kid;            /* per diff_stats row: its index in the returned rows + 1, 0 = not returned */
    uint8_t *kind;            /* per pool id of the source column: TL_FUSION_SRC_* + 1, 0 = not known yet */
    TL_VEC(uint32_t) krow;    /* the returned rows, first-reference order */
} dbox;

static int dbox_gc(lua_State *L)
{
    dbox *b = lua_touserdata(L, 1);
    tl_fusion_diff_free(&b->d);
    tl_big_free(b->lca);
    tl_big_free(b->source);
    tl_big_free(b->uid);
    tl_big_free(b->kid);
    free(b->kind);
    free(b->krow.v);
    memset(b, 0, sizeof *b);
    return 0;
}

static size_t need_col(lua_State *L, const tl_table *t, const char *name)
{
    long c = tl_table_col(t, name);
    if (c < 0) luaL_error(L, "no column '%s' in table %s", name, t->name);
    return (size_t)c;
}

/* A cell read as a number, as Lua's comparative code read t:get(r, col):
 * a number but NaN, or a string tonumber() accepts; else none (0). Returns
 * 1 with *i for an integer, 2 with *f for a float. */
static int cell_number(lua_State *L, const tl_table *t, size_t c, size_t r, lua_Integer *i, double *f)
{
    if (tl_table_is_null(t, c, r)) return 0;
    const tl_col *col = &t->cols[c];
    switch (col->type) {
    case TL_COL_I64: *i = col->v.i[r]; return 1;
    case TL_COL_F64: *f = col->v.f[r]; return isnan(*f) ? 0 : 2;
    case TL_COL_BOOL: return 0;
    case TL_COL_STR: break;
    }
    const char *s = tl_table_str(t, c, r);
    if (!s || !lua_stringtonumber(L, s)) return 0;
    int kind = lua_isinteger(L, -1) ? 1 : 2;
    if (kind == 1) *i = lua_tointeger(L, -1);
    else *f = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return kind;
}

/* The source cell of row r: "trace1", "trace2" or other (each distinct
 * text compared once). */
static uint8_t source_kind(dbox *b, const tl_table *ds, size_t cs, size_t r)
{
    const tl_col *col = &ds->cols[cs];
    if (col->type != TL_COL_STR || col->v.s[r] == TL_NULL_STR) return TL_FUSION_SRC_OTHER;
    uint32_t id = col->v.s[r];
    if (!b->kind) b->kind = tl_xcalloc((size_t)ds->pool.n + 1, 1);
    if (!b->kind[id]) {
        const char *s = tl_strpool_get(&ds->pool, id);
        b->kind[id] = (uint8_t)(1 + (!strcmp(s, "trace1") ? TL_FUSION_SRC_T1
                                     : !strcmp(s, "trace2") ? TL_FUSION_SRC_T2
                                                            : TL_FUSION_SRC_OTHER));
    }
    return (uint8_t)(b->kind[id] - 1);
}

/* The index (1-based) of diff_stats row r among the returned rows. */
static lua_Integer row_ref(dbox *b, uint32_t r)
{
    if (!b->kid[r]) {
        TL_PUSH(b->krow, r);
        b->kid[r] = (uint32_t)b->krow.n;
    }
    return b->kid[r];
}

/* The returned rows' name cells as t:get(row, "name") gives them; a text
 * cell's string is pushed once and shared (kernel names are long and
 * repeat). The Table is at stack index 2. */
static void set_names(lua_State *L, const dbox *b, const tl_table *ds, size_t cn)
{
    const tl_col *col = &ds->cols[cn];
    lua_newtable(L); /* pool id + 1 -> string */
    int cache = lua_gettop(L);
    lua_createtable(L, (int)b->krow.n, 0);
    for (size_t k = 0; k < b->krow.n; k++) {
        uint32_t r = b->krow.v[k];
        if (col->type != TL_COL_STR) {
            lua_getfield(L, 2, "get");
            lua_pushvalue(L, 2);
            lua_pushinteger(L, (lua_Integer)r + 1);
            lua_pushstring(L, "name");
            lua_call(L, 3, 1);
        } else {
            uint32_t id = col->v.s[r];
            if (id == TL_NULL_STR) continue;
            if (lua_rawgeti(L, cache, (lua_Integer)id + 1) == LUA_TNIL) {
                lua_pop(L, 1);
                lua_pushstring(L, tl_strpool_get(&ds->pool, id));
                lua_pushvalue(L, -1);
                lua_rawseti(L, cache, (lua_Integer)id + 1);
            }
        }
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -3, "name");
    lua_pop(L, 1);
}

/* trace:fusion_diff_nodes(diff_stats, max_n1) -> nodes, rows (analysis-layer
 * §3.6 Case A, tl_fusion_diff_nodes; docs/lua-api.md). The nodes as columns
 * (n, uid, and CSR lists t1/t1_off, t2/t2_off: few large tables instead of
 * three per node) whose entries index the rows, each referenced diff_stats
 * row once: n, row (1-based), name (the cell), kernel_time (the cell as a
 * number or nil), and for trace-1 rows lca_id (a float) and gpu_op_uid. A
 * cell is a number when it is one (not NaN) or a string tonumber accepts,
 * as the Lua extraction read it. */
int tl_l_trace_fusion_diff_nodes(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    const tl_table *ds = tl_ltable_test(L, 2);
    if (!ds) return luaL_typeerror(L, 2, "Table");
    lua_Integer max = luaL_checkinteger(L, 3);
    luaL_argcheck(L, max <= 1 << 20, 3, "max_n1 too large");
    size_t cn = need_col(L, ds, "name"), cl = need_col(L, ds, "lowest_common_ancestor_id"),
           ct = need_col(L, ds, "kernel_time"), cs = need_col(L, ds, "source"), cu = need_col(L, ds, "gpu_op_uid");
    dbox *b = tl_lua_new_box(L, sizeof *b, "tracelens.fusion_diff", dbox_gc);
    tl_fusion_diff_init(&b->d);
    size_t n = ds->nrows;
    /* per-row arrays from mmap (huge pages): a comparison has ~10^5-10^6 rows */
    b->lca = tl_big_realloc(NULL, (n + 1) * sizeof *b->lca);
    b->source = tl_big_realloc(NULL, n + 1);
    b->uid = tl_big_realloc(NULL, (n + 1) * sizeof *b->uid);
    for (size_t r = 0; r < n; r++) {
        lua_Integer i = 0;
        double f = 0;
        int k = cell_number(L, ds, cl, r, &i, &f);
        b->lca[r] = k == 1 ? (double)i : k == 2 ? f : NAN;
        b->source[r] = source_kind(b, ds, cs, r);
        b->uid[r] = TL_NOUID;
        if (b->source[r] != TL_FUSION_SRC_T1) continue;
        k = cell_number(L, ds, cu, r, &i, &f); /* an integer, or a float math.tointeger takes, naming an event */
        if (k == 1 && i >= 0 && (uint64_t)i < t->es.n) b->uid[r] = (uint32_t)i;
        else if (k == 2 && f >= 0 && f < (double)t->es.n && f == floor(f)) b->uid[r] = (uint32_t)f;
    }
    tl_fusion_diff_rows rows = {n, b->lca, b->source, b->uid};
    tl_fusion_diff_nodes(&b->d, t, &rows, max > 0 ? (size_t)max : 0);
    const tl_fusion_diff *d = &b->d;
    b->kid = tl_big_realloc(NULL, (n + 1) * sizeof *b->kid); /* zero-filled */
    size_t nn = d->nodes.n;
    lua_createtable(L, 0, 6);
    tl_lset_int(L, "n", (lua_Integer)nn);
    lua_createtable(L, (int)nn, 0);
    for (size_t j = 0; j < nn; j++) {
        lua_pushinteger(L, d->nodes.v[j].uid);
        lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    lua_setfield(L, -2, "uid");
    /* t1 / t2 and their offsets: node j's rows are list[off[j] .. off[j + 1] - 1] */
    lua_createtable(L, (int)d->t1_rows.n, 0);
    lua_createtable(L, (int)nn + 1, 0);
    lua_Integer at = 1;
    for (size_t j = 0; j < nn; j++) {
        const tl_fusion_diff_node *nd = &d->nodes.v[j];
        lua_pushinteger(L, at);
        lua_rawseti(L, -2, (lua_Integer)j + 1);
        for (size_t q = 0; q < nd->n1; q++) {
            lua_pushinteger(L, row_ref(b, d->t1_rows.v[nd->t1_first + q]));
            lua_rawseti(L, -3, at++);
        }
    }
    lua_pushinteger(L, at);
    lua_rawseti(L, -2, (lua_Integer)nn + 1);
    lua_setfield(L, -3, "t1_off");
    lua_setfield(L, -2, "t1");
    lua_createtable(L, (int)d->t2_rows.n, 0);
    lua_createtable(L, (int)nn + 1, 0);
    at = 1;
    for (size_t j = 0; j < nn; j++) {
        const tl_fusion_diff_node *nd = &d->nodes.v[j];
        lua_pushinteger(L, at);
        lua_rawseti(L, -2, (lua_Integer)j + 1);
        for (size_t q = 0; q < nd->n2; q++) {
            lua_pushinteger(L, row_ref(b, d->t2_rows.v[nd->t2_first + q]));
            lua_rawseti(L, -3, at++);
        }
    }
    lua_pushinteger(L, at);
    lua_rawseti(L, -2, (lua_Integer)nn + 1);
    lua_setfield(L, -3, "t2_off");
    lua_setfield(L, -2, "t2");
    size_t nk = b->krow.n;
    lua_createtable(L, 0, 6);
    tl_lset_int(L, "n", (lua_Integer)nk);
    lua_createtable(L, (int)nk, 0);
    for (size_t k = 0; k < nk; k++) {
        lua_pushinteger(L, (lua_Integer)b->krow.v[k] + 1);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "row");
    set_names(L, b, ds, cn);
    lua_createtable(L, (int)nk, 0);
    for (size_t k = 0; k < nk; k++) {
        lua_Integer i = 0;
        double f = 0;
        int kind = cell_number(L, ds, ct, b->krow.v[k], &i, &f);
        if (!kind) continue;
        if (kind == 1) lua_pushinteger(L, i);
        else lua_pushnumber(L, f);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -2, "kernel_time");
    lua_createtable(L, (int)nk, 0);
    lua_createtable(L, (int)nk, 0);
    for (size_t k = 0; k < nk; k++) {
        uint32_t r = b->krow.v[k];
        if (b->source[r] != TL_FUSION_SRC_T1) continue;
        lua_pushnumber(L, b->lca[r]);
        lua_rawseti(L, -3, (lua_Integer)k + 1);
        lua_pushinteger(L, b->uid[r]);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, -3, "gpu_op_uid");
    lua_setfield(L, -2, "lca_id");
    return 2;
}

/* trace:kernel_slices(nodes, from, lo, hi) -> {uid, ...}: for each node
 * nodes[from], nodes[from + 1], ... (up to the first nil), the GPU events
 * of category "kernel" among its kernels (node:kernels(), in that order)
 * at positions lo..hi (1-based; a node with fewer gives what it has), node
 * after node: the GPU events a fusion candidate claims in its instances
 * (lua/tracelens/fusion/overlap.lua). */
/* The lists these functions walk (1, 2, ... to the first nil) are read raw
 * (lua_rawgeti), never through an __index: one that is a C function
 * (rawlen) would feed the loop forever without a Lua instruction, so
 * without a look at the clock or the memory cap (redteam2). */
int tl_l_trace_kernel_slices(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer from = luaL_checkinteger(L, 3), lo = luaL_checkinteger(L, 4), hi = luaL_checkinteger(L, 5);
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    uint32_t kcat = tl_strpool_find(&es->cats, "kernel", 6);
    lua_newtable(L);
    lua_Integer n = 0;
    for (lua_Integer i = from;; i++) {
        if (lua_rawgeti(L, 2, i) == LUA_TNIL) {
            lua_pop(L, 1);
            break;
        }
        lua_Integer node = luaL_checkinteger(L, -1);
        lua_pop(L, 1);
        if (node < 0 || (size_t)node >= es->n) return luaL_error(L, "kernel_slices: no event %d", (int)node);
        if (i == LUA_MAXINTEGER) luaL_error(L, "kernel_slices: the list reaches math.maxinteger");
        if (lo < 1) continue; /* position lo holds nothing: the slice stops at once */
        lua_Integer pos = 0;  /* position among the node's kernel-category events */
        tl_span gs = tl_tree_gpu_span(tr, (uint32_t)node);
        for (uint32_t k = gs.b; k < gs.e && pos < hi; k++) {
            uint32_t g = tr->gpus.v[k];
            if (kcat == UINT32_MAX || es->cat_id[g] != kcat || es->cat[g] == TL_CAT_NONE) continue;
            if (++pos < lo) continue;
            lua_pushinteger(L, g);
            lua_rawseti(L, -2, ++n);
        }
    }
    return 1;
}

/* trace:dur_us(uid) -> what trace:node(uid).dur or 0 gives: the duration
 * in µs (a float) of an event that has one, else the integer 0. */
int tl_l_trace_dur_us(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    lua_Integer u = luaL_checkinteger(L, 2);
    const tl_event_store *es = &t->es;
    if (u < 0 || (size_t)u >= es->n) return luaL_error(L, "dur_us: no event %d", (int)u);
    if (es->flags[u] & TL_F_DUR) lua_pushnumber(L, (double)es->dur[u] / 1000.0);
    else lua_pushinteger(L, 0);
    return 1;
}

/* The uids of list i (the table at stack index idx) into *v, as ipairs
 * reads it: integers, or floats with an integer value (the same table
 * key); 0 when an entry is anything else. */
static int read_uid_list(lua_State *L, int idx, int64_t **v, size_t *n, size_t *cap)
{
    *n = 0;
    for (lua_Integer i = 1;; i++) {
        int ty = lua_rawgeti(L, idx, i);
        if (ty == LUA_TNIL) {
            lua_pop(L, 1);
            return 1;
        }
        int ok = 0;
        lua_Integer u = ty == LUA_TNUMBER ? lua_tointegerx(L, -1, &ok) : 0;
        lua_pop(L, 1);
        if (!ok) return 0;
        TL_GROW(*v, *cap, *n + 1);
        (*v)[(*n)++] = u;
    }
}

/* tl.uid_repeats(lists) -> list_of, uid: every uid met again after its
 * first time, in order over lists[1], lists[2], ... (each as ipairs reads
 * it), with the number of the list it is in; nil when a list holds
 * something other than integers (lua/tracelens/fusion/overlap.lua's
 * union_time_us). */
int tl_l_uid_repeats(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    lua_newtable(L); /* 2: list numbers */
    lua_newtable(L); /* 3: uids */
    tl_map seen;
    tl_map_init(&seen, 1024);
    int64_t *v = NULL;
    size_t n, cap = 0;
    lua_Integer out = 0, nl = 0;
    int ok = 1;
    for (lua_Integer li = 1; ok; li++) {
        if (lua_rawgeti(L, 1, li) != LUA_TTABLE) {
            ok = lua_isnil(L, -1);
            lua_pop(L, 1);
            break;
        }
        nl = li;
        ok = read_uid_list(L, lua_gettop(L), &v, &n, &cap);
        lua_pop(L, 1);
        for (size_t i = 0; ok && i < n; i++) {
            if (tl_map_get(&seen, (uint64_t)v[i], 0) == UINT32_MAX) {
                tl_map_put(&seen, (uint64_t)v[i], 0, 1);
                continue;
            }
            out++;
            lua_pushinteger(L, li);
            lua_rawseti(L, 2, out);
            lua_pushinteger(L, v[i]);
            lua_rawseti(L, 3, out);
        }
    }
    (void)nl;
    free(v);
    tl_map_free(&seen);
    if (!ok) {
        lua_pushnil(L);
        return 1;
    }
    return 2;
}

/* tl.uid_claims(lists) -> by, hits: lists taken in order; list k claims
 * its uids unless one of them is claimed already, in which case by[k] is
 * the list holding the most of its uids (the first to get ahead, counting
 * repeats) and hits[k] that count; by[k] = 0 when list k claims. nil when
 * a list holds something other than integers (overlap.lua's resolve). */
int tl_l_uid_claims(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    size_t nl = (size_t)luaL_len(L, 1);
    lua_createtable(L, (int)nl, 0); /* 2: by */
    lua_createtable(L, (int)nl, 0); /* 3: hits */
    tl_map owner; /* uid -> claiming list (1-based) */
    tl_map_init(&owner, 1024);
    uint32_t *cnt = tl_xcalloc(nl + 1, sizeof *cnt), *touched = tl_xmalloc((nl + 1) * sizeof *touched);
    int64_t *v = NULL;
    size_t n, cap = 0;
    int ok = 1;
    for (size_t k = 1; ok && k <= nl; k++) {
        if (lua_rawgeti(L, 1, (lua_Integer)k) != LUA_TTABLE) {
            ok = 0;
            lua_pop(L, 1);
            break;
        }
        ok = read_uid_list(L, lua_gettop(L), &v, &n, &cap);
        lua_pop(L, 1);
        if (!ok) break;
        size_t nt = 0;
        uint32_t by = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t o = tl_map_get(&owner, (uint64_t)v[i], 0);
            if (o == UINT32_MAX) continue;
            if (cnt[o]++ == 0) touched[nt++] = o;
            if (by == 0 || cnt[o] > cnt[by]) by = o;
        }
        lua_pushinteger(L, by);
        lua_rawseti(L, 2, (lua_Integer)k);
        lua_pushinteger(L, by ? cnt[by] : 0);
        lua_rawseti(L, 3, (lua_Integer)k);
        for (size_t i = 0; i < nt; i++) cnt[touched[i]] = 0;
        if (!by)
            for (size_t i = 0; i < n; i++) tl_map_put(&owner, (uint64_t)v[i], 0, (uint32_t)k);
    }
    free(v);
    free(cnt);
    free(touched);
    tl_map_free(&owner);
    if (!ok) {
        lua_pushnil(L);
        return 1;
    }
    return 2;
}

/* trace:durs_us(uids) -> {trace:dur_us(uid), ...} for a list of uids (as
 * ipairs reads it). */
int tl_l_trace_durs_us(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    const tl_event_store *es = &t->es;
    lua_newtable(L);
    for (lua_Integer i = 1;; i++) {
        if (lua_rawgeti(L, 2, i) == LUA_TNIL) {
            lua_pop(L, 1);
            break;
        }
        int ok = 0;
        lua_Integer u = lua_tointegerx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok || u < 0 || (size_t)u >= es->n) return luaL_error(L, "durs_us: no event at position %d", (int)i);
        if (es->flags[u] & TL_F_DUR) lua_pushnumber(L, (double)es->dur[u] / 1000.0);
        else lua_pushinteger(L, 0);
        lua_rawseti(L, -2, i);
    }
    return 1;
}

/* tl.join_ints(list, sep) -> the integers of list (as ipairs reads a plain table (raw)) in
 * decimal, joined by sep (table.concat's text); nil when an entry is not
 * an integer. */
int tl_l_join_ints(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    size_t nsep;
    const char *sep = luaL_checklstring(L, 2, &nsep);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (lua_Integer i = 1;; i++) {
        int ty = lua_rawgeti(L, 1, i);
        if (ty == LUA_TNIL) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isinteger(L, -1)) return 0; /* nothing pushed after the buffer: returns nil */
        lua_Integer v = lua_tointeger(L, -1);
        lua_pop(L, 1);
        char num[32];
        int len = snprintf(num, sizeof num, LUA_INTEGER_FMT, (LUAI_UACINT)v);
        if (i > 1) luaL_addlstring(&b, sep, nsep);
        luaL_addlstring(&b, num, (size_t)len);
    }
    luaL_pushresult(&b);
    return 1;
}
