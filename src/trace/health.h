/* health.h — the figures of a trace's health check (`tracelens check`,
 * trace:check()): what in the trace limits what an analysis can say, and
 * what looks broken. Computed in one pass over the store and the tree;
 * the verdicts and the advice are written from these figures in Lua
 * (lua/tracelens/health.lua). tl_health owns nothing (a value type);
 * tl_unlinked_gpu owns its group array. */
#ifndef TL_HEALTH_H
#define TL_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

/* Thresholds the checks use (ns). */
enum {
    TL_HEALTH_OVERLAP_NS = 1000,  /* two GPU events of one stream overlapping by more */
    TL_HEALTH_CLOCK_NS = 1000,    /* a GPU event starting this much before its launch */
};

typedef struct tl_health {
    int64_t t0, t1;                   /* first start and last end over all timed events */
    size_t n_events;
    /* GPU work */
    size_t n_gpu, n_gpu_unlinked;
    int64_t gpu_ns, gpu_unlinked_ns;  /* sums of durations */
    /* unlinked GPU events whose launch call (same correlation id) is in the
     * trace: the ac2g flow between the two is missing (filtered or sampled
     * traces); and the flow events of the trace */
    size_t n_gpu_unlinked_launched, n_flows;
    int64_t gpu_unlinked_launched_ns;
    /* unlinked GPU events without a launch call that were launched before
     * the trace (tl_tree_before_trace); of them, those that started at or
     * after its first launch call (told by their correlation id alone) */
    size_t n_gpu_before_trace, n_gpu_before_trace_by_id;
    int64_t gpu_before_trace_ns, gpu_before_trace_by_id_ns;
    /* GPU events linked to their launch call by correlation alone (the
     * trace has no ac2g flow: tree.h n_linked_by_corr) */
    size_t n_gpu_linked_by_corr;
    /* CPU ops: shapes and stacks */
    size_t n_cpu_ops, n_cpu_ops_shapes, n_python;
    /* CUDA calls a cuda_sync event would record (cudaDeviceSynchronize,
     * cudaStreamSynchronize, cudaEventSynchronize, cudaStreamWaitEvent), and
     * the cuda_sync events (written only with enable_cuda_sync_events) */
    size_t n_cuda_sync_calls, n_cuda_sync;
    /* "Stream Wait Event" records whose wait_on_cuda_event_record_corr_id is
     * absent or negative (PyTorch 2.11's, recording with
     * cudaEventRecordWithFlags): the wait cannot be linked to its record */
    size_t n_stream_waits_unlinked;
    /* graph replays */
    size_t n_graph_launches, n_gpu_graph;
    int64_t gpu_graph_ns;             /* GPU events linked to a graph launch */
    /* ProfilerStep#N and the profiling window */
    size_t n_steps;
    int64_t steps_t0, steps_t1;       /* first step start, last step end */
    size_t n_gpu_before_steps, n_gpu_after_steps;
    int64_t gpu_before_steps_ns, gpu_after_steps_ns;
    /* streams */
    size_t n_streams, n_stream_overlaps;
    int64_t max_stream_overlap_ns;
    /* overlaps of an event launched with an extended launch (cudaLaunchKernelEx,
     * cudaLaunchKernelExC, cuLaunchKernelEx): programmatic dependent launch can
     * make them real; not in n_stream_overlaps */
    size_t n_stream_overlaps_ex;
    int64_t max_stream_overlap_ex_ns;
    /* durations */
    size_t n_negative_dur, n_zero_dur_gpu, n_zero_dur_cpu_ops;
    /* clocks: GPU events starting before their launch */
    size_t n_gpu_before_launch;
    int64_t max_gpu_before_launch_ns;
    /* kernel, copy and graph launch calls whose GPU work is not in the trace
     * (at_end: after the last GPU event started; captured: inside a stream
     * capture on their thread, from a *StreamBeginCapture call to the next
     * *StreamEndCapture: recorded into a graph, never run; neither is in
     * n_launches_orphan); memset calls likewise (the runtime does not always
     * record a GPU memset for one) */
    size_t n_launches, n_launches_orphan, n_launches_orphan_at_end, n_launches_captured;
    size_t n_memsets, n_memsets_orphan;
} tl_health;

void tl_health_compute(const tl_trace *t, tl_health *h);

/* The GPU events no launching CPU op is above: those no launch links to
 * (tree parent none), and in a trace without CPU ops (tree gpu_only: launch
 * calls at the top level) every one; grouped by
 * (category, name): the events whose category text is exactly "kernel",
 * "gpu_memcpy" or "gpu_memset", taken category by category in that order
 * and in UID order within one; durations below 0 count as 0. Groups in
 * order of first appearance. The events launched before the trace
 * (tl_tree_before_trace: before the profiling window opened) are counted
 * apart, in no group and in neither total. Owns its group array
 * (tl_unlinked_gpu_free). */
typedef struct tl_unlinked_group {
    uint32_t first;          /* UID of the group's first event */
    uint32_t cat_id, name;   /* ids in es.cats, es.names */
    size_t count;
    int64_t sum_ns, min_ns, max_ns;
} tl_unlinked_group;

typedef struct tl_unlinked_gpu {
    int64_t total_ns, unlinked_ns; /* over every such event; over the unlinked ones */
    size_t count;                  /* unlinked events */
    int64_t before_trace_ns;       /* over the events launched before the trace */
    size_t n_before_trace;
    tl_unlinked_group *g;
    size_t ng;
} tl_unlinked_gpu;

void tl_unlinked_gpu_compute(const tl_trace *t, tl_unlinked_gpu *u);
void tl_unlinked_gpu_free(tl_unlinked_gpu *u);

#endif
