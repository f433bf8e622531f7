/* launch_stats.h — kernel launch statistics (issue 16; HTA's launch
 * statistics are the anchor): per launch the CPU launch duration, the
 * launch-to-start delay and the GPU duration, their distribution per GPU
 * event name, and the launches whose delay is above the trace's p95.
 * Owns the arrays it returns (free with tl_launch_stats_free).
 *
 * Rules (docs/compat.md "Beyond the reference"):
 *   - a launch is a GPU event (kernel, gpu_memcpy, gpu_memset with a ts)
 *     linked to its runtime / driver call (tree.h), that call having no
 *     other GPU event: the kernels a graph launch replays are counted
 *     apart (n_multi) and left out, their delay from the one call is not
 *     a launch delay; so are those a capture merge links to its copied
 *     capture calls (tl_trace_is_copy), which carry the graph launch's ts;
 *   - cpu = the call's dur, delay = GPU event ts - call ts, gpu = the GPU
 *     event's dur (ns);
 *   - median and p95 interpolate linearly between the sorted values at
 *     q x (n - 1) (numpy's and pandas's default);
 *   - an outlier is a launch whose delay is above the p95 of all launches. */
#ifndef TL_LAUNCH_STATS_H
#define TL_LAUNCH_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

typedef struct tl_launch {
    uint32_t gpu, call;          /* uids */
    int64_t cpu, delay, gpu_dur; /* ns */
} tl_launch;

typedef struct tl_dist {
    double mean, median, p95;    /* ns */
    int64_t min, max, sum;
} tl_dist;

typedef struct tl_launch_group {
    uint32_t name;               /* names id of the GPU events (all: UINT32_MAX) */
    size_t n, n_outliers;
    tl_dist cpu, delay, gpu;
} tl_launch_group;

typedef struct tl_launch_stats {
    tl_launch *v;                /* every launch, by GPU event uid */
    size_t n;
    tl_launch_group *g;          /* per name: by gpu.sum descending, then name */
    size_t ng;
    tl_launch_group all;
    size_t n_multi;              /* GPU events of calls with several (graph replays) */
    size_t n_unlinked;           /* GPU events no call links to */
} tl_launch_stats;

void tl_launch_stats_compute(const tl_trace *t, tl_launch_stats *out);
void tl_launch_stats_free(tl_launch_stats *s);
/* Linear-interpolation quantile of n sorted values (q in [0, 1]); 0 when n is 0. */
double tl_quantile_sorted(const int64_t *v, size_t n, double q);

#endif
