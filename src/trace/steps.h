/* steps.h — the per-step breakdown (issue 16): each ProfilerStep#N of a
 * trace with the GPU work it launched, that work's busy / computation /
 * communication / memcpy / idle figures, and which steps are warm-up or
 * partial. Owns the array it returns (free with tl_steps_free).
 *
 * Rules (docs/compat.md "Step breakdown"):
 *   - steps are the ProfilerStep#N events on the CPU (any category but
 *     gpu_user_annotation), one per N (the first), in start order;
 *   - a GPU event belongs to the step whose [ts, ts + dur) holds the start
 *     of its launch call (a graph kernel: the graph launch); a GPU event no
 *     launch links to, by its own start; events outside every step belong
 *     to none;
 *   - span = first start to last end of the step's GPU work, idle = span -
 *     busy; the unions are those of gpu_timeline (timeline.h) over the
 *     step's events (unlinked ones included: the step's work is all of it);
 *   - partial: a launch call in the step has no GPU event of its
 *     correlation id (the trace ends before it ran, or began after);
 *   - warm-up: the leading steps (before the first that is not) whose wall
 *     time exceeds 1.5 x the median wall time of all steps. */
#ifndef TL_STEPS_H
#define TL_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "timeline.h"
#include "trace.h"

typedef struct tl_step {
    uint32_t uid;            /* the ProfilerStep event */
    long number;             /* N */
    int64_t ts, dur;         /* the annotation on the CPU (wall time = dur) */
    int64_t gpu_start, gpu_end;
    /* the first and the last moment of the step's window [ts, ts + dur) in
     * which any GPU work runs: every GPU event of the trace, whichever step
     * launched it (work launched before the trace too); INT64_MIN when none
     * runs in it */
    int64_t any_gpu_start, any_gpu_end;
    /* the time in the window during which GPU work launched before the trace
     * (tl_tree_before_trace) runs: the step inherits work the trace cannot
     * show (the sum over those events of their overlap with the window) */
    int64_t before_trace_ns;
    /* the first and the last start of the launch calls of the step's GPU
     * work (INT64_MIN when none of it has one) */
    int64_t first_launch, last_launch;
    tl_unions u;             /* of the step's GPU work */
    size_t n_gpu, n_unlinked, n_launches_missing;
    int warmup, partial;
} tl_step;

typedef struct tl_steps {
    tl_step *v;
    size_t n;
    size_t n_gpu_outside;    /* GPU events in no step */
    int64_t gpu_outside_ns;
} tl_steps;

void tl_steps_compute(const tl_trace *t, tl_steps *out);
/* The steps alone (uid, number, ts, dur; no GPU figures), in start order,
 * one per N: the count, with the array in *out (free it; may be NULL or
 * empty when there is none). */
size_t tl_steps_find(const tl_trace *t, tl_step **out);
void tl_steps_free(tl_steps *s);

#endif
