/* collect.h — the per-rank stage of the multi-rank report, shared by
 * `tracelens ranks` (direct, reduce and MPI forms, cli.c) and tl.ranks (the
 * orchestrator's --ranks, lranks.c): every resolved rank file through the
 * per-rank pass (one trace at a time, `jobs` traces at a time in threads,
 * another driver's summaries, or .tls files), the checks that make a rank
 * set 0..W-1 (each rank in range and given once, none missing unless
 * allowed), the world_size warnings, and the records in rank-major order;
 * then the gpus-per-node choice. Warnings and progress lines go to stderr
 * ("tracelens: ..."), errors into err as one line. Owns the collection
 * until tl_ranks_collection_free. */
#ifndef TL_RANKS_COLLECT_H
#define TL_RANKS_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "mapreduce.h"
#include "rank_stats.h"
#include "records.h"
#include "resolve.h"

typedef struct tl_ranks_collect_opts {
    long world;            /* ranks 0..world-1 (> 0) */
    int world_given;       /* world is --world_size (else: from the files found) */
    int from_distinfo;     /* --rank-from distinfo */
    int allow_missing;     /* --allow-missing-ranks: a failed or absent rank is left out */
    int quiet;             /* no "rank N: K collective kernels" lines */
    int reduce;            /* the files are .tls rank summaries */
    long jobs;             /* traces at a time in threads for the direct pass (< 2: one at a time) */
    tl_ranks_source *src;  /* another driver's summaries (MPI), or NULL */
} tl_ranks_collect_opts;

typedef struct tl_ranks_collection {
    tl_coll_set cs;        /* rank-major, file order within a rank */
    long world;
    uint8_t *seen;         /* by rank: 1 = its summary was read */
    tl_rank_stats *stats;  /* by rank; zero when missing (TL_RS_FAILED: its pass failed) */
    uint64_t *ncoll;       /* by rank: its collective kernels */
    int64_t *dist_world;   /* by rank: distributedInfo.world_size, -1 when absent */
    size_t *file;          /* by rank: index into the files, SIZE_MAX when missing */
    int detected_gpn;      /* rank 0's deviceProperties count (0 unknown) */
} tl_ranks_collection;

/* Runs the per-rank stage over files (resolved, resolve.h). Returns 0, or
 * -1 with err set (a rank's failure, a rank out of range or given twice, a
 * missing rank without allow_missing, or no rank readable with it). c is
 * set either way; free it with tl_ranks_collection_free. */
int tl_ranks_collect(const tl_rank_files *files, const tl_ranks_collect_opts *o, tl_ranks_collection *c,
                     tl_error *err);
void tl_ranks_collection_free(tl_ranks_collection *c);

/* The gpus per node: `given` when > 0, else rank 0's deviceProperties
 * count (said on stderr unless quiet; a count that does not divide the
 * world size is warned about). 0 when unknown. */
long tl_ranks_gpus_per_node(long given, const tl_ranks_collection *c, int quiet);

#endif
