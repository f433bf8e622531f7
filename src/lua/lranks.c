/* lranks.c — tl.ranks(dir [, {world_size = N, gpus_per_node = G}]) -> sheets, ranks
 *             tl.ranks(nil, {glob = G [, rank_regex = R], ...})
 *
 * DIR holds rank<i>_trace.json (else .json.gz), i = 0..N-1, as `tracelens
 * ranks DIR`; a glob's files get their rank from R on the name, as
 * `tracelens ranks --trace_glob` (resolve.h). Every rank 0..N-1 once. Each
 * trace goes through the per-rank pass (tl_ranks_rank_pass: its collective
 * records and its summary, rank_stats.h) and is released before the next one is
 * loaded.
 * sheets: the ranks report in the Lua form of trace:report (lreport.h);
 * ranks: one table per rank in rank order, {rank, path, steps, step_time_us
 * (mean wall time of its ProfilerSteps; nil without steps), busy_us,
 * total_us, total_comm_us, exposed_comm_us, compute_us, overlap_us,
 * memcpy_us, idle_us (the per-rank temporal breakdown of rank_stats.h over
 * every GPU event, unlinked ones included; nil without GPU events),
 * collectives, world_size (the trace's distributedInfo.world_size; nil
 * when absent)}. The sheets include those of rank_stats.h.
 * Refused in sandboxed states (rules and analyzers read the
 * one trace they are given; a metadata-mismatch error would echo values read
 * from any file). Errors are one line. */
#include "lranks.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ranks/mapreduce.h"
#include "../ranks/rank_stats.h"
#include "../ranks/records.h"
#include "../ranks/resolve.h"
#include "../ranks/report.h"
#include "../util/vec.h"
#include "host.h"
#include "lfields.h"
#include "lreport.h"

typedef struct rank_info {
    char *path;
    size_t ncoll;
    int64_t dist_world; /* distributedInfo.world_size, -1 when absent */
} rank_info;

static long opt_int(lua_State *L, const char *k, long lo, long hi)
{
    if (lua_type(L, 2) != LUA_TTABLE) return -1;
    lua_getfield(L, 2, k);
    long v = -1;
    if (!lua_isnil(L, -1)) {
        int ok;
        lua_Integer x = lua_tointegerx(L, -1, &ok);
        if (!ok || x < lo || x > hi)
            luaL_error(L, "tl.ranks: %s must be an integer from %d to %d", k, (int)lo, (int)hi);
        v = (long)x;
    }
    lua_pop(L, 1);
    return v;
}

static void free_infos(rank_info *ri, size_t n)
{
    for (size_t i = 0; i < n; i++) free(ri[i].path);
    free(ri);
}

static const char *opt_str(lua_State *L, const char *k)
{
    if (lua_type(L, 2) != LUA_TTABLE) return NULL;
    lua_getfield(L, 2, k);
    const char *v = NULL;
    if (!lua_isnil(L, -1)) {
        if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "tl.ranks: %s must be a string", k);
        v = lua_tostring(L, -1); /* kept alive by the options table */
    }
    lua_pop(L, 1);
    return v;
}

static int l_ranks(lua_State *L)
{
    tl_lua_refuse_in_sandbox(L, "tl.ranks");
    const char *dir = lua_isnoneornil(L, 1) ? NULL : luaL_checkstring(L, 1);
    if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
    long world = opt_int(L, "world_size", 1, 1000000);
    long gpn = opt_int(L, "gpus_per_node", 0, 1000000);
    const char *glob = opt_str(L, "glob"), *regex = opt_str(L, "rank_regex");
    if ((dir != NULL) == (glob != NULL)) return luaL_error(L, "tl.ranks: give a directory or {glob = G}, one of them");
    /* the files (resolve.h, as `tracelens ranks`), then every rank 0..world-1 once */
    tl_ranks_input in = {.dir = dir, .glob = glob, .rank_regex = regex, .world = world};
    tl_rank_files files = {0};
    tl_error rerr;
    if (tl_ranks_resolve(&in, &files, &world, &rerr) != 0) {
        tl_rank_files_free(&files);
        return luaL_error(L, "%s", rerr.msg);
    }
    if (world < 0) world = (long)files.n;
    size_t n = (size_t)world;
    rank_info *ri = tl_xcalloc(n + 1, sizeof *ri); /* by rank */
    for (size_t i = 0; i < files.n; i++) {
        long r = files.v[i].rank;
        if (r >= 0 && r < world && !ri[r].path) ri[r].path = tl_xstrdup(files.v[i].path);
    }
    tl_rank_files_free(&files);
    char msg[1200], miss[256];
    msg[0] = 0;
    uint8_t *present = tl_xcalloc(n + 1, 1);
    for (size_t r = 0; r < n; r++) present[r] = ri[r].path != NULL;
    size_t nm = tl_ranks_missing_list(present, world, miss, sizeof miss);
    free(present);
    if (nm) {
        snprintf(msg, sizeof msg, "missing ranks after resolution: [%s] (a complete rank set 0..%ld is required)", miss,
                 world - 1);
        free_infos(ri, n);
        return luaL_error(L, "%s", msg);
    }

    /* the per-rank pass: one trace in memory at a time */
    tl_coll_set cs;
    tl_coll_set_init(&cs);
    tl_rank_stats *rst = tl_xcalloc(n + 1, sizeof *rst);
    tl_load_opts lo;
    memset(&lo, 0, sizeof lo);
    int detected_gpn = 0;
    for (size_t i = 0; i < n && !msg[0]; i++) {
        /* the pass of `tracelens ranks` (mapreduce.h): the rank from the name, checked against distributedInfo */
        tl_error err;
        tl_rank_info info;
        if (tl_ranks_rank_pass(ri[i].path, (long)i, 0, &lo, &cs, &info, &err) != 0) {
            snprintf(msg, sizeof msg, "%s", err.msg);
            break;
        }
        if (i == 0) detected_gpn = info.device_count;
        ri[i].ncoll = (size_t)info.nrec;
        ri[i].dist_world = info.dist_world;
        rst[i] = info.stats;
    }
    if (msg[0]) {
        tl_coll_set_free(&cs);
        free_infos(ri, n);
        free(rst);
        return luaL_error(L, "%s", msg);
    }
    /* records rank-major, file order within a rank */
    tl_coll_set_sort_by_rank(&cs);
    static const char *const agg[] = {"mean", "median", "min", "max"};
    tl_ranks_opts ro = {.world_size = (uint32_t)world,
                        .gpus_per_node = (int)(gpn >= 0 ? gpn : detected_gpn),
                        .heatmap = 0,
                        .detailed = 1,
                        .agg = agg,
                        .nagg = 4,
                        .strict_metadata = 1,
                        .per_rank_long = world > 64};
    tl_sheets sheets = {0};
    tl_error err;
    int rc = tl_ranks_report_build(&cs, &ro, &sheets, &err);
    if (rc == 0) rc = tl_rank_stats_sheets(&cs, rst, n, &ro, &sheets, &err);
    tl_coll_set_free(&cs);
    if (rc != 0) {
        tl_sheets_free(&sheets);
        free_infos(ri, n);
        free(rst);
        snprintf(msg, sizeof msg, "%s", err.msg);
        return luaL_error(L, "%s", msg);
    }
    /* the sheets first (taken over by Lua, freed also on an error), then
     * the rank figures; a Lua error from here on is out of memory only */
    tl_lreport_push_sheets(L, &sheets);
    if (!lua_checkstack(L, 8)) {
        free_infos(ri, n);
        free(rst);
        return luaL_error(L, "stack overflow (tl.ranks)");
    }
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 14);
        const tl_rank_stats *s = &rst[i];
        tl_lset_int(L, "rank", (lua_Integer)i);
        tl_lset_str(L, "path", ri[i].path);
        tl_lset_int(L, "steps", (lua_Integer)s->n_steps_total);
        tl_lset_int(L, "collectives", (lua_Integer)ri[i].ncoll);
        if (ri[i].dist_world >= 0) tl_lset_int(L, "world_size", (lua_Integer)ri[i].dist_world);
        if (s->n_steps_total) tl_lset_us(L, "step_time_us", (double)s->step_dur_sum / (double)s->n_steps_total);
        if (s->flags & TL_RS_HAS_GPU) {
            tl_lset_us(L, "busy_us", (double)s->busy);
            tl_lset_us(L, "total_us", (double)(s->last_end - s->first_start));
            tl_lset_us(L, "total_comm_us", (double)s->comm);
            tl_lset_us(L, "exposed_comm_us", (double)s->exposed_comm);
            tl_lset_us(L, "compute_us", (double)s->compute);
            tl_lset_us(L, "overlap_us", (double)s->overlap);
            tl_lset_us(L, "memcpy_us", (double)s->memcpy_time);
            tl_lset_us(L, "idle_us", (double)(s->last_end - s->first_start - s->busy));
        }
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    free_infos(ri, n);
    free(rst);
    return 2;
}

void tl_lranks_register(lua_State *L)
{
    lua_pushcfunction(L, l_ranks);
    lua_setfield(L, -2, "ranks");
}
