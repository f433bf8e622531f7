/* annot_times.h — time per user-annotation range name (issue 16):
 * record_function / user_annotation ranges on the CPU and their GPU side.
 * Owns the array it returns (free with tl_annot_times_free).
 *
 * Rules (docs/compat.md "Beyond the reference"), per name:
 *   - cpu: the user_annotation events (ph X) of that name: count and the
 *     sum of their durations (nested ranges of one name count twice, as
 *     HTA sums them);
 *   - gpu annotation: the gpu_user_annotation events of that name: count
 *     and the sum of their durations;
 *   - gpu launched: the GPU events (kernel, gpu_memcpy, gpu_memset) whose
 *     launch call (tree.h) starts inside one of the name's CPU ranges,
 *     [ts, ts + dur), in the same process (pid; any thread: the backward
 *     pass launches from autograd's thread inside the main thread's
 *     range): their count and the length of the union of their intervals
 *     (busy time). */
#ifndef TL_ANNOT_TIMES_H
#define TL_ANNOT_TIMES_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

typedef struct tl_annot_time {
    uint32_t name;            /* names id */
    size_t n_cpu, n_gpu_ann, n_launched;
    int64_t cpu_ns, gpu_ann_ns, launched_busy_ns;
} tl_annot_time;

typedef struct tl_annot_times {
    tl_annot_time *v;         /* by cpu_ns descending, then gpu_ann_ns, then name */
    size_t n;
} tl_annot_times;

void tl_annot_times_compute(const tl_trace *t, tl_annot_times *out);
void tl_annot_times_free(tl_annot_times *a);

#endif
