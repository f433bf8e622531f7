/* report.h — the cross-rank step of the multi-rank collective report (spec
 * multi-rank.md §4-§7): from the records of every rank (records.h), the
 * reference's sheets in its order — nccl_summary_implicit_sync,
 * nccl_summary_long, nccl_summary_all2allv, nccl_all2allv_heatmap, nccl_long,
 * nccl_implicit_sync, nccl_all2allv, straggler_summary (narrow layout: also
 * nccl_implicit_sync_ranks, nccl_all2allv_ranks) — with node_id /
 * node_span. Works on the records only: collectives are matched by sorting
 * (process group, index in group, rank), never by scanning the long table
 * per collective. Owns nothing after it returns but the sheets it added. */
#ifndef TL_RANKS_REPORT_H
#define TL_RANKS_REPORT_H

#include "../report/report.h"
#include "records.h"

typedef struct tl_ranks_opts {
    uint32_t world_size;
    int gpus_per_node;        /* > 0: node_id / node_span columns; 0: none */
    int heatmap;              /* --all2allv_heatmap */
    int detailed;             /* nccl_long, nccl_implicit_sync, nccl_all2allv (default 1) */
    const char *const *agg;   /* --agg_metrics (pandas names: mean median min max std sum count) */
    size_t nagg;
    int strict_metadata;      /* a metadata mismatch is an error (default 1); else a warning */
    int per_rank_long;        /* narrow layout (§11.2): nccl_implicit_sync / nccl_all2allv keep their
                                 general columns plus `last arrival rank` and `num_ranks`; the
                                 per-rank values go to nccl_implicit_sync_ranks / nccl_all2allv_ranks */
    int allow_missing;        /* --allow-missing-ranks (spec §11.4): nccl_implicit_sync and nccl_all2allv
                                 end with `missing_ranks`, the number of ranks of a collective's Process
                                 Group Ranks that are not among its members */
    const uint8_t *present;   /* optional, world_size entries: 1 = rank r's trace was read; ranks left out
                                 are not counted as a membership mismatch (check_membership's warning) */
} tl_ranks_opts;

/* Is `name` an aggregation --agg_metrics accepts? */
int tl_ranks_agg_known(const char *name);

/* Builds the sheets (appended to out, in the reference's order). Sets the
 * records' index_in_group. Returns 0, or -1 with err set (metadata mismatch:
 * "metadata mismatch in 'FIELD' for collective CID: V1 (ranks ...), V2 (rank ...)"). */
int tl_ranks_report_build(tl_coll_set *cs, const tl_ranks_opts *o, tl_sheets *out, tl_error *err);

/* One collective (records matched across ranks, as the sheets above match
 * them), for the sheets of rank_stats.h. Times in ns. */
typedef struct tl_ranks_coll {
    char *cid;                     /* collective_id */
    const char *pg;                /* effective Process Group Name (in cs->pool) */
    uint32_t meta;                 /* the lowest member rank's metadata tuple */
    uint32_t n;                    /* members */
    uint32_t min_rank, max_rank;
    uint32_t earliest_rank;        /* largest wait, ties the largest rank */
    uint32_t last_rank;            /* wait 0, ties the lowest rank */
    int implicit_sync;             /* a row of nccl_implicit_sync */
    int64_t estart, lstart, eend, lend, lat; /* earliest/latest start and end, comm_latency (min dur) */
    double full_mb, algo_bw, bus_bw;         /* as nccl_implicit_sync; NaN when unknown */
} tl_ranks_coll;

/* The collectives of cs in first-appearance order (nccl_long order);
 * coll_of_rec (optional, cs->n entries, caller frees) maps each record to
 * its collective. Sets index_in_group like tl_ranks_report_build. Free with
 * tl_ranks_colls_free. */
size_t tl_ranks_collectives(tl_coll_set *cs, const tl_ranks_opts *o, tl_ranks_coll **out, uint32_t **coll_of_rec);
void tl_ranks_colls_free(tl_ranks_coll *v, size_t n);

#endif
