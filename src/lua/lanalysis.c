#include "lanalysis.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "../analysis/fusion.h"
#include "../analysis/multi_kernel.h"
#include "../report/perf_eval.h"
#include "../report/sheets_perf.h"
#include "../util/vec.h"
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

static void set_int(lua_State *L, const char *k, lua_Integer v)
{
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

/* count, total, max of a set of durations into the table on top */
static void set_durs(lua_State *L, const tl_event_store *es, const tl_mk_durs *d)
{
    set_int(L, "count", (lua_Integer)d->count);
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
    set_int(L, "n_gpu", (lua_Integer)m.n_gpu);
    lua_pushboolean(L, m.all_int);
    lua_setfield(L, -2, "all_int");

    static const char *const dirs[TL_MK_NDIR] = {"D2H", "H2D", "D2D", "other"};
    lua_createtable(L, 0, 2);
    set_int(L, "count", (lua_Integer)m.n_memcpy);
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
        set_int(L, "uid", u);
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
    fbox *b = lua_newuserdatauv(L, sizeof *b, 0);
    tl_fusion_init(&b->f);
    b->idx = NULL;
    if (luaL_newmetatable(L, "tracelens.fusion_walk")) {
        lua_pushcfunction(L, fbox_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
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
        set_int(L, "uid", m->uid);
        lua_pushlstring(L, tl_strpool_get(&f.bases, m->base), tl_strpool_len(&f.bases, m->base));
        lua_setfield(L, -2, "base");
        set_int(L, "instances", m->instances);
        push_time(L, &m->total, m->nk);
        lua_setfield(L, -2, "total");
        lua_pushboolean(L, m->has_fused);
        lua_setfield(L, -2, "has_fused");
        set_int(L, "eligible", (lua_Integer)m->eligible);
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
        set_int(L, "parent", s->parent);
        lua_pushlstring(L, tl_strpool_get(&f.bases, s->base), tl_strpool_len(&f.bases, s->base));
        lua_setfield(L, -2, "base");
        set_int(L, "instances", s->instances);
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
            set_int(L, "kernel", op->kernel);
            push_name_ref(L, &ni, es, op->kernel);
            lua_setfield(L, -2, "name");
            push_dur(L, es, op->kernel);
            lua_setfield(L, -2, "dur");
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -2, "ops");
        lua_rawseti(L, -3, (lua_Integer)i + 1);
    }
    return 2;
}

/* trace:mapped_gpu_lists(mapped, max): the events in file order (but GPU and
 * runtime/driver events) whose GPU events include between 2 and max UIDs of
 * the set `mapped` (a table uid -> any true value); an array of {uid =, gpus = {the
 * mapped UIDs, gpu_events order, first seen}}. Nodes over the bound are
 * skipped after max + 1 hits, so the walk costs O(events x max), not the
 * size of every subtree. (The comparative fusion extraction, analysis-layer
 * §3.6 Case A: its gate needs n1 <= 30.) */
int tl_l_trace_mapped_gpu_lists(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer max = luaL_checkinteger(L, 3);
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    uint8_t *is_mapped = tl_xcalloc(es->n + 1, 1);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        if (lua_isinteger(L, -2)) {
            lua_Integer u = lua_tointeger(L, -2);
            if (u >= 0 && (size_t)u < es->n && lua_toboolean(L, -1)) is_mapped[u] = 1;
        }
        lua_pop(L, 1);
    }
    uint32_t *hits = tl_xmalloc((size_t)(max > 0 ? max + 1 : 1) * sizeof *hits);
    lua_newtable(L);
    lua_Integer n_out = 0;
    for (size_t u = 0; u < es->n && max >= 2; u++) {
        uint8_t c = es->cat[u];
        if (tl_is_gpu_cat(c) || c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) continue;
        lua_Integer nh = 0;
        for (uint32_t k = tr->gpu_off[u]; k < tr->gpu_off[u + 1] && nh <= max; k++) {
            uint32_t g = tr->gpu[k];
            if (!is_mapped[g]) continue;
            int seen = 0;
            for (lua_Integer j = 0; j < nh && !seen; j++) seen = hits[j] == g;
            if (!seen) hits[nh++] = g;
        }
        if (nh < 2 || nh > max) continue;
        lua_createtable(L, 0, 2);
        lua_pushinteger(L, (lua_Integer)u);
        lua_setfield(L, -2, "uid");
        lua_createtable(L, (int)nh, 0);
        for (lua_Integer j = 0; j < nh; j++) {
            lua_pushinteger(L, hits[j]);
            lua_rawseti(L, -2, j + 1);
        }
        lua_setfield(L, -2, "gpus");
        lua_rawseti(L, -2, ++n_out);
    }
    free(hits);
    free(is_mapped);
    return 1;
}
