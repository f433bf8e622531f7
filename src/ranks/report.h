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
} tl_ranks_opts;

/* Is `name` an aggregation --agg_metrics accepts? */
int tl_ranks_agg_known(const char *name);

/* Builds the sheets (appended to out, in the reference's order). Sets the
 * records' index_in_group. Returns 0, or -1 with err set (metadata mismatch:
 * "metadata mismatch in 'FIELD' for collective CID: V1 (ranks ...), V2 (rank ...)"). */
int tl_ranks_report_build(tl_coll_set *cs, const tl_ranks_opts *o, tl_sheets *out, tl_error *err);

#endif
