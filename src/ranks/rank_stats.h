/* rank_stats.h — the per-rank summary of the multi-rank report (issue 15;
 * spec multi-rank.md §12, HTA's definitions) and the sheets built from it.
 * Owns tl_rank_stats: a fixed-size POD (no pointers; a version first) that
 * the per-rank pass fills while the rank's trace is loaded, so that the
 * cross-rank step (and the .tls summary files, which store it as raw bytes
 * of sizeof(tl_rank_stats), version checked) never needs the trace again.
 *
 * Per rank, over the GPU events (kernel, gpu_memcpy, gpu_memset with a
 * timestamp; unlinked ones included), classified by timeline.h's buckets
 * (COMMUNICATION: nccl / rccl / cross_device_reduce names; MEMORY: memcpy /
 * memset; the rest COMPUTATION):
 *   - kernel_time = last end - first start; busy = U(all); idle =
 *     kernel_time - busy; compute = U(COMP); comm = U(COMM); memcpy =
 *     U(MEMORY) (U = length of the merged intervals);
 *   - overlap = |U(COMM) ∩ U(COMP)| (HTA's comm/comp overlap), exposed_comm =
 *     comm - overlap;
 *   - the ProfilerStep#N steps (steps.h's tl_steps_find), with the span of
 *     the GPU work they launched (a GPU event belongs to the step holding
 *     its launch call's start, an unlinked one by its own start);
 *   - HTA's late-start candidates (get_potential_stragglers): for each
 *     (step with N > 0, stream > 0, kernel name) the last communication
 *     kernel of at least 1 % of the rank's mean iteration time.
 *
 * The sheets (tl_rank_stats_sheets): rank_temporal_breakdown,
 * rank_comm_overlap, rank_step_times, rank_stragglers (late start),
 * collective_skew_outliers, node_bandwidth, missing_ranks (docs/ranks.md). */
#ifndef TL_RANKS_RANK_STATS_H
#define TL_RANKS_RANK_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "../report/report.h"
#include "../trace/trace.h"
#include "../util/error.h"
#include "records.h"
#include "report.h"

#define TL_RANK_STATS_VERSION 1u
#define TL_RS_MAX_STEPS 64  /* steps kept per rank (the first in start order) */
#define TL_RS_MAX_LATE 128  /* late-start candidates kept per rank */
#define TL_RS_MAX_NAMES 16  /* distinct candidate kernel names kept per rank */
#define TL_RS_NAME_LEN 96

/* flags */
#define TL_RS_HAS_GPU 1u    /* the rank has GPU events */
#define TL_RS_PRESENT 2u    /* the stats were computed (a missing rank's slot is all zero) */
#define TL_RS_FAILED 4u     /* not present: the rank's trace could not be read (else: no trace file) */

typedef struct tl_rs_step {
    int64_t number;              /* N of ProfilerStep#N */
    int64_t ts, dur;             /* the CPU annotation (ns) */
    int64_t gpu_start, gpu_end;  /* the GPU work it launched; both 0 when none */
} tl_rs_step;

typedef struct tl_rs_late {
    uint64_t name_hash;          /* 64-bit FNV-1a of the kernel name */
    int64_t stream;
    int64_t ts, dur;             /* the last such kernel of the step (ns) */
    uint32_t step;               /* index into steps[] */
    uint32_t n_kernels;          /* candidate kernels of this (step, stream, name) */
} tl_rs_late;

typedef struct tl_rank_stats {
    uint32_t version;            /* TL_RANK_STATS_VERSION */
    uint32_t rank;
    uint32_t flags;              /* TL_RS_* */
    uint32_t n_steps;            /* in steps[] (<= TL_RS_MAX_STEPS) */
    uint32_t n_steps_total;      /* ProfilerSteps in the trace */
    uint32_t n_late;             /* in late[] */
    uint32_t n_late_dropped;     /* candidates beyond TL_RS_MAX_LATE */
    uint32_t reserved;
    /* temporal breakdown (ns) */
    int64_t first_start, last_end;
    int64_t busy, compute, comm, memcpy_time, overlap, exposed_comm;
    int64_t n_gpu_events, n_comm_kernels, n_memcpy_events;
    /* the late-start window: first start / last end of the events (CPU and
       GPU) in steps with N >= 0 */
    int64_t window_start, window_end;
    int64_t step_dur_sum;        /* Σ wall time (CPU annotation dur) of every step */
    tl_rs_step steps[TL_RS_MAX_STEPS];
    tl_rs_late late[TL_RS_MAX_LATE];
    /* the names of the late-start candidates (the first TL_RS_MAX_NAMES
       distinct ones; NUL-terminated, cut to TL_RS_NAME_LEN - 1 bytes) */
    uint64_t late_name_hash[TL_RS_MAX_NAMES];
    char late_name[TL_RS_MAX_NAMES][TL_RS_NAME_LEN];
} tl_rank_stats;

/* Fills *out for rank `rank` from the loaded trace. Returns 0 (-1 with err
 * set is reserved for failures; none today). */
int tl_rank_stats_compute(const tl_trace *t, uint32_t rank, tl_rank_stats *out, tl_error *err);

/* Appends the sheets above to out, from the records (after
 * tl_ranks_report_build; index_in_group is set again, same values) and the stats of every
 * rank (st[r] for r in 0..nranks-1; a slot without TL_RS_PRESENT is a
 * missing rank). Returns 0, or -1 with err set. */
int tl_rank_stats_sheets(tl_coll_set *cs, const tl_rank_stats *st, size_t nranks, const tl_ranks_opts *o,
                         tl_sheets *out, tl_error *err);

#endif
