/* critical_path.h — the critical path of one step of a trace, by Holistic
 * Trace Analysis' lightweight algorithm (issue 16; docs/critical-path.md).
 * Owns the tl_cpath it fills (free with tl_cpath_free); reads the trace only.
 *
 * The graph (HTA's CPGraph): a start and an end node for every CPU op,
 * runtime call and launched GPU event of the window; edges
 *   - operator: along each CPU thread's call stack (start of an op -> start
 *     of its first child, child end -> next child start, last child end ->
 *     op end), weighted by the time between the two nodes; the exit edge of
 *     a blocking call (cudaDeviceSynchronize, cudaStreamSynchronize,
 *     cudaEventQuery, cudaEventSynchronize, cudaMemcpy, cudaMemcpyAsync) weighs
 *     0; a GPU event's own start -> end;
 *   - dependency (weight 0): the end of a top-level op -> the start of the
 *     next one on the same thread; calls taking the CUDA runtime lock
 *     (cudaLaunchKernel, cudaMemcpyAsync, cudaHostAlloc) in the order they
 *     end, across threads;
 *   - kernel launch delay: runtime call start -> GPU event start, when the
 *     stream's queue was empty at the launch and the GPU event started with
 *     nothing queued behind it (HTA's queue length 1 at the launch, 0 at the
 *     start) after the previous event on its stream ended;
 *   - kernel-kernel delay: previous event on the stream end -> start,
 *     otherwise, when that event still ran at the launch call's start (one
 *     that ended before gets no edge: inferred from HTA's output,
 *     docs/compat.md "Critical path");
 *   - sync (weight 0): the last GPU event of a stream (every stream for
 *     cudaDeviceSynchronize) -> the end of cudaStreamSynchronize /
 *     cudaDeviceSynchronize; the GPU event before the cudaEventRecord that a
 *     cudaEventSynchronize waits for -> its end; that GPU event -> the start
 *     of the first GPU event launched on the waiting stream after a
 *     cudaStreamWaitEvent (the cuda_sync events' wait_on_* args name the
 *     record).
 * The path is the longest over this DAG, with networkx's dag_longest_path
 * tie-breaking (first predecessor, first node of the topological order), so
 * the events on it are those of HTA's overlaid trace. */
#ifndef TL_CRITICAL_PATH_H
#define TL_CRITICAL_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"
#include "../util/error.h"

typedef enum tl_cp_edge_type {
    TL_CPE_OPERATOR = 0,    /* critical_path_operator */
    TL_CPE_DEPENDENCY,      /* critical_path_dependency */
    TL_CPE_LAUNCH,          /* critical_path_kernel_launch_delay */
    TL_CPE_KERNEL_KERNEL,   /* critical_path_kernel_kernel_delay */
    TL_CPE_SYNC,            /* critical_path_sync_dependency */
    TL_CPE__COUNT
} tl_cp_edge_type;

/* HTA's names of the edge types ("critical_path_operator", ...). */
const char *tl_cp_edge_type_name(int type);

/* Where the path's time goes (HTA's bound_by, one per weighted edge). */
typedef enum tl_cp_cat {
    TL_CPC_CPU = 0,         /* cpu_bound: CPU ops and runtime calls */
    TL_CPC_GPU_COMPUTE,     /* gpu_compute_bound */
    TL_CPC_COMM,            /* gpu_communication_bound (nccl/rccl kernels) */
    TL_CPC_LAUNCH,          /* gpu_kernel_launch_overhead */
    TL_CPC_KERNEL_GAP,      /* gpu_kernel_kernel_overhead */
    TL_CPC__COUNT
} tl_cp_cat;
const char *tl_cp_cat_name(int cat);

typedef struct tl_cp_node {
    uint32_t ev;            /* event UID */
    uint8_t is_start;
    int64_t ts;             /* ns */
} tl_cp_node;

typedef struct tl_cp_edge {
    uint32_t from, to;      /* node indices */
    int64_t weight;         /* ns (negative differences count as 0, as HTA) */
    uint8_t type;           /* tl_cp_edge_type */
    uint8_t cat;            /* tl_cp_cat of a weighted edge on the path */
    uint32_t attr;          /* the event an operator / kernel-kernel edge is attributed to, or TL_NOUID */
} tl_cp_edge;

typedef struct tl_cpath {
    long step;              /* ProfilerStep number, -1: the whole trace */
    int64_t win_start, win_end;     /* the window (ns) */
    tl_cp_node *nodes;      /* every node of the graph, by (ts, event, start first) */
    size_t n_nodes;
    tl_cp_edge *edges;      /* every edge of the graph, in the order HTA adds them */
    size_t n_edges;
    size_t n_by_type[TL_CPE__COUNT]; /* the graph's edges by type */
    uint32_t *path;         /* node indices on the path, in order */
    size_t n_path;
    tl_cp_edge *path_edges; /* the n_path - 1 edges between them */
    uint32_t *events;       /* the distinct events on the path, ascending UID */
    size_t n_events;
    int64_t length;         /* sum of the path's weights (ns) */
    int64_t by_cat[TL_CPC__COUNT];
    int64_t sync_wait;      /* blocking-call time the path crosses through sync edges (ns; not in by_cat) */
    int64_t copies;         /* of by_cat[GPU_COMPUTE], the memory copies and memsets (ns) */
    /* the window's GPU events' durations, and of them those a graph launch
     * replays: the path cannot enter them, no launch edge leads to them (ns) */
    int64_t gpu_ns, graph_gpu_ns;
    /* the threads of the CPU ops and runtime calls on the path, and of those
     * with nodes in the window: HTA's graph has no edge between threads, so
     * a path can stay on one (a training step's autograd thread) */
    size_t path_threads, window_threads;
    int64_t blocking;       /* of by_cat[CPU], the operator edges of calls that can block the host until the
                             * GPU is done (tl_blocking_calls; ns): host time that may be a wait for the GPU */
    /* the busiest stream among the window's GPU events (those with nodes):
     * the union of its events' [ts, end) (ns) and its stream id (-1 when
     * the window has no GPU event). One stream runs its work in order, so
     * the step's real critical path is at least this long */
    int64_t stream_busy, busy_stream;
    size_t n_waits;         /* calls of the window that waited for the GPU (tl_blocking_call), lasting more than 0 */
} tl_cpath;

/* The window: ProfilerStep#step when has_step; the whole trace when whole
 * or when the trace has no ProfilerStep; else the representative step, the
 * one of median wall time (the upper median; the first of equals). */
typedef struct tl_cp_opts {
    int has_step;
    long step;
    int whole;
} tl_cp_opts;

/* Builds the graph of the window and its longest path. Returns 0, or -1
 * with err set (no such step, nothing to analyse in the window). */
int tl_critical_path(const tl_trace *t, const tl_cp_opts *o, tl_cpath *out, tl_error *err);
void tl_cpath_free(tl_cpath *p);

/* The path cannot return from the GPU to the host: the window has GPU work
 * (launch or kernel-to-kernel edges) but no sync edge, as in a trace without
 * cuda_sync events (older PyTorch, ROCm); host work after a wait for the GPU
 * is then missing from the path. */
static inline int tl_cpath_blind(const tl_cpath *p)
{
    return p->n_by_type[TL_CPE_LAUNCH] + p->n_by_type[TL_CPE_KERNEL_KERNEL] > 0 && p->n_by_type[TL_CPE_SYNC] == 0;
}

/* The path is shorter than the busiest stream's serial GPU work in the
 * window: it cannot be the step's critical path (a blind graph misses the
 * dependencies that hold the rest), and no CPU/GPU bound follows from it. */
static inline int tl_cpath_below_stream(const tl_cpath *p)
{
    return p->length < p->stream_busy;
}

/* The blind path's gap matters: the host waited for the GPU in the window
 * and the path leaves at least 0.5% of the window's wall time uncovered
 * (below what prints as 100%), so host work after such a wait is missing
 * from it. */
static inline int tl_cpath_host_missing(const tl_cpath *p)
{
    int64_t wall = p->win_end - p->win_start;
    return tl_cpath_blind(p) && p->n_waits > 0 && (wall - p->length) * 200 >= wall;
}

/* A flow event of the overlay (HTA's overlaid trace): the start ('s') or
 * finish ('f') of path edge `edge` placed on event ev at ts. */
typedef struct tl_cp_flow {
    uint32_t ev;
    int64_t ts;             /* ns */
    uint32_t id;            /* flow id */
    uint8_t is_start;
    uint8_t type;
    int64_t weight;         /* ns */
} tl_cp_flow;

/* The overlay's flows: two per dependency, launch-delay and sync edge of
 * the path (HTA's default edge types); an end node sits at the event's end,
 * less min(1 us, dur) on a GPU event. *n gets the count; free the array. */
tl_cp_flow *tl_cpath_flows(const tl_cpath *p, const tl_event_store *es, size_t *n);

#endif
