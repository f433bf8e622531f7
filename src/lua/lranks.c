/* lranks.c — tl.ranks(dir [, opts]) -> sheets, ranks
 *             tl.ranks(nil, {glob = G [, rank_regex = R], ...})
 * opts: world_size = N, gpus_per_node = G (0: no node columns; default: rank 0's
 * deviceProperties count), rank_from = "name" | "distinfo",
 * jobs = J (traces at a time; default one per core).
 *
 * DIR holds rank<i>_trace.json (else .json.gz), i = 0..N-1, as `tracelens
 * ranks DIR`; a glob's files get their rank from R on the name, as
 * `tracelens ranks --trace_glob` (resolve.h), or from their
 * distributedInfo.rank with rank_from = "distinfo". Every rank 0..N-1 once.
 * The per-rank stage is that of `tracelens ranks` (collect.h: each trace
 * through the per-rank pass, J at a time in threads, released once
 * summarised; the same checks and warnings on stderr).
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
#include <unistd.h>

#include "../ranks/collect.h"
#include "../ranks/rank_stats.h"
#include "../ranks/records.h"
#include "../ranks/resolve.h"
#include "../ranks/report.h"
#include "../util/vec.h"
#include "host.h"
#include "lfields.h"
#include "lreport.h"

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

static void free_paths(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
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
    int world_given = world >= 0;
    long gpn = opt_int(L, "gpus_per_node", 0, 1000000);
    long jobs = opt_int(L, "jobs", 1, 4096);
    const char *glob = opt_str(L, "glob"), *regex = opt_str(L, "rank_regex"), *from = opt_str(L, "rank_from");
    if ((dir != NULL) == (glob != NULL)) return luaL_error(L, "tl.ranks: give a directory or {glob = G}, one of them");
    if (from && strcmp(from, "name") != 0 && strcmp(from, "distinfo") != 0)
        return luaL_error(L, "tl.ranks: rank_from must be \"name\" or \"distinfo\"");
    int from_distinfo = from && !strcmp(from, "distinfo");
    if (jobs < 0) jobs = sysconf(_SC_NPROCESSORS_ONLN);
    /* the files (resolve.h), then every rank 0..world-1 once (collect.h), as `tracelens ranks` */
    tl_ranks_input in = {.dir = dir, .glob = glob, .rank_regex = regex, .world = world, .from_distinfo = from_distinfo};
    tl_rank_files files = {0};
    tl_error err;
    if (tl_ranks_resolve(&in, &files, &world, &err) != 0) {
        tl_rank_files_free(&files);
        return luaL_error(L, "%s", err.msg);
    }
    if (world < 0) world = (long)files.n;
    tl_ranks_collect_opts co = {.world = world, .world_given = world_given, .from_distinfo = from_distinfo,
                                .quiet = 1, .jobs = jobs};
    tl_ranks_collection col;
    int rc = tl_ranks_collect(&files, &co, &col, &err);
    size_t n = (size_t)world;
    char **paths = tl_xcalloc(n + 1, sizeof *paths); /* by rank */
    for (size_t r = 0; r < n && rc == 0; r++) paths[r] = tl_xstrdup(files.v[col.file[r]].path);
    tl_rank_files_free(&files);
    tl_sheets sheets = {0};
    if (rc == 0) {
        static const char *const agg[] = {"mean", "median", "min", "max"};
        tl_ranks_opts ro = {.world_size = (uint32_t)world,
                            .gpus_per_node = (int)(gpn >= 0 ? gpn : tl_ranks_gpus_per_node(-1, &col, 1)),
                            .heatmap = 0,
                            .detailed = 1,
                            .agg = agg,
                            .nagg = 4,
                            .strict_metadata = 1,
                            .per_rank_long = world > 64};
        rc = tl_ranks_report_build(&col.cs, &ro, &sheets, &err);
        if (rc == 0) rc = tl_rank_stats_sheets(&col.cs, col.stats, n, &ro, &sheets, &err);
    }
    if (rc != 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s", err.msg);
        tl_sheets_free(&sheets);
        free_paths(paths, n);
        tl_ranks_collection_free(&col);
        return luaL_error(L, "%s", msg);
    }
    /* the sheets first (taken over by Lua, freed also on an error), then
     * the rank figures; a Lua error from here on is out of memory only */
    tl_lreport_push_sheets(L, &sheets);
    if (!lua_checkstack(L, 8)) {
        free_paths(paths, n);
        tl_ranks_collection_free(&col);
        return luaL_error(L, "stack overflow (tl.ranks)");
    }
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 14);
        const tl_rank_stats *s = &col.stats[i];
        tl_lset_int(L, "rank", (lua_Integer)i);
        tl_lset_str(L, "path", paths[i]);
        tl_lset_int(L, "steps", (lua_Integer)s->n_steps_total);
        tl_lset_int(L, "collectives", (lua_Integer)col.ncoll[i]);
        if (col.dist_world[i] >= 0) tl_lset_int(L, "world_size", (lua_Integer)col.dist_world[i]);
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
    free_paths(paths, n);
    tl_ranks_collection_free(&col);
    return 2;
}

void tl_lranks_register(lua_State *L)
{
    lua_pushcfunction(L, l_ranks);
    lua_setfield(L, -2, "ranks");
}
