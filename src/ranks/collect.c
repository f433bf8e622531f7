/* collect.c — the per-rank stage shared by `tracelens ranks` and tl.ranks
 * (collect.h). */
#include "collect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/malloc_tune.h"
#include "../util/vec.h"
#include "summary_file.h"

void tl_ranks_collection_free(tl_ranks_collection *c)
{
    tl_coll_set_free(&c->cs);
    free(c->seen);
    free(c->stats);
    free(c->ncoll);
    free(c->dist_world);
    free(c->file);
    memset(c, 0, sizeof *c);
}

static void collection_init(tl_ranks_collection *c, long world)
{
    memset(c, 0, sizeof *c);
    tl_coll_set_init(&c->cs);
    size_t n = (size_t)world + 1;
    c->world = world;
    c->seen = tl_xcalloc(n, 1);
    c->stats = tl_xcalloc(n, sizeof *c->stats);
    c->ncoll = tl_xcalloc(n, sizeof *c->ncoll);
    c->dist_world = tl_xmalloc(n * sizeof *c->dist_world);
    c->file = tl_xmalloc(n * sizeof *c->file);
    for (size_t r = 0; r < n; r++) c->dist_world[r] = -1, c->file[r] = SIZE_MAX;
}

/* Starts src's map over the files (the paths and the ranks from their names). */
static int start_map(tl_ranks_source *src, const tl_rank_files *files, const tl_ranks_collect_opts *o,
                     tl_error *err)
{
    const char **paths = tl_xmalloc((files->n + 1) * sizeof *paths);
    long *nranks = tl_xmalloc((files->n + 1) * sizeof *nranks);
    for (size_t i = 0; i < files->n; i++) paths[i] = files->v[i].path, nranks[i] = files->v[i].rank;
    src->quiet = o->quiet;
    int rc = src->map(src, paths, nranks, files->n, o->from_distinfo, err);
    free(paths);
    free(nranks);
    return rc;
}

/* Takes file i's summary into c: 0, 1 when it was left out (allow_missing),
 * -1 with err set. */
static int take_one(const tl_rank_files *files, size_t i, const tl_ranks_collect_opts *o, tl_ranks_source *src,
                    tl_ranks_collection *c, tl_error *err)
{
    const tl_rank_file *f = &files->v[i];
    long world = c->world;
    tl_load_opts lo;
    memset(&lo, 0, sizeof lo);
    tl_rank_info info = {.rank = -1};
    /* this rank's summary: a .tls (reduce), another pass's (src), or our own */
    int prc = o->reduce ? tl_tls_read(f->path, &c->cs, &info, err)
              : src     ? src->take(src, i, f->path, &c->cs, &info, err)
                        : tl_ranks_rank_pass(f->path, f->rank, o->from_distinfo, &lo, &c->cs, &info, err);
    if (prc != 0) {
        long fr = f->rank >= 0 ? f->rank : info.rank;
        if (o->allow_missing && fr >= 0 && fr < world && !c->seen[fr]) {
            c->stats[fr].flags = TL_RS_FAILED; /* named in missing_ranks */
            fprintf(stderr, "tracelens: warning: rank %ld left out (--allow-missing-ranks): %s\n", fr, err->msg);
            return 1;
        }
        return -1;
    }
    long rank = info.rank;
    if (rank < 0 || rank >= world) {
        tl_error_set(err, "%s: rank %ld is outside 0..%ld (--world_size %ld)", f->path, rank, world - 1, world);
        return -1;
    }
    if (c->seen[rank]) {
        tl_error_set(err, "%s: rank %ld given twice", f->path, rank);
        return -1;
    }
    c->seen[rank] = 1;
    c->file[rank] = i;
    c->ncoll[rank] = info.nrec;
    c->dist_world[rank] = info.dist_world;
    if (info.has_stats) c->stats[rank] = info.stats;
    c->stats[rank].flags |= TL_RS_PRESENT;
    if (info.dist_world >= 0 && info.dist_world != world)
        fprintf(stderr, "tracelens: warning: %s says world_size %lld, %s %ld\n", f->path, (long long)info.dist_world,
                o->world_given ? "--world_size is" : "the rank traces found make", world);
    if (rank == 0) c->detected_gpn = info.device_count;
    if (!o->quiet)
        fprintf(stderr, "tracelens: rank %ld: %llu collective kernels (%s)\n", rank, (unsigned long long)info.nrec,
                f->path);
    return 0;
}

/* A complete rank set 0..W-1, or with allow_missing at least one rank. */
static int check_complete(const tl_ranks_collection *c, int allow_missing, tl_error *err)
{
    char miss[256];
    size_t nm = tl_ranks_missing_list(c->seen, c->world, miss, sizeof miss);
    if (!nm) return 0;
    if (allow_missing && nm == (size_t)c->world) {
        tl_error_set(err, "no rank trace could be read (--allow-missing-ranks needs at least one)");
        return -1;
    }
    if (allow_missing) {
        fprintf(stderr, "tracelens: warning: %zu missing rank(s) left out: [%s] (sheet missing_ranks)\n", nm, miss);
        return 0;
    }
    tl_error_set(err, "missing ranks after resolution: [%s] (a complete rank set 0..%ld is required)", miss,
                 c->world - 1);
    return -1;
}

int tl_ranks_collect(const tl_rank_files *files, const tl_ranks_collect_opts *o, tl_ranks_collection *c,
                     tl_error *err)
{
    collection_init(c, o->world);
    tl_malloc_many_traces(1); /* one trace's freed buffers serve the next */
    tl_ranks_source threads, *src = o->reduce ? NULL : o->src;
    if (!src && !o->reduce && tl_ranks_thread_source(&threads, (int)(o->jobs > 4096 ? 4096 : o->jobs), files->n))
        src = &threads;
    int rc = src ? start_map(src, files, o, err) : 0;
    for (size_t i = 0; i < files->n && rc == 0; i++)
        if (take_one(files, i, o, src, c, err) < 0) rc = -1;
    if (src && src->done) src->done(src);
    tl_malloc_many_traces(0);
    if (rc == 0) rc = check_complete(c, o->allow_missing, err);
    /* records rank-major (file order within a rank) whatever the load order */
    if (rc == 0) tl_coll_set_sort_by_rank(&c->cs);
    return rc;
}

long tl_ranks_gpus_per_node(long given, const tl_ranks_collection *c, int quiet)
{
    if (given > 0) return given;
    long gpn = c->detected_gpn, world = c->world;
    if (gpn > 0 && !quiet) fprintf(stderr, "tracelens: gpus_per_node %ld (rank 0's deviceProperties)\n", gpn);
    if ((gpn == 1 && world > 1) || (gpn > 1 && world % gpn))
        fprintf(stderr, "tracelens: warning: gpus_per_node %ld detected for %ld ranks; give --gpus_per_node\n", gpn,
                world);
    return gpn;
}
