/* idle.h — GPU idle time by cause, per stream (issue 16; HTA's idle-time
 * breakdown is the anchor), with the micro/macro split of timeline.h, and
 * the launch-queue length of each stream (below). Owns the arrays it
 * returns (free with tl_idle_free, tl_queue_free).
 *
 * Rules (docs/compat.md "Beyond the reference"):
 *   - the GPU events (kernel, gpu_memcpy, gpu_memset with a ts), unlinked
 *     ones included, grouped by (device, stream): the device from
 *     args.device, else the process id; the stream from args.stream (-1
 *     when absent);
 *   - on a stream, in start order, a gap is the time from the latest end so
 *     far to the next event's start (overlapping events leave no gap); the
 *     stream's idle time is the sum of its gaps = span - busy;
 *   - each gap gets one cause, tested in this order: kernel wait (shorter
 *     than kernel_wait_ns, HTA's consecutive_kernel_delay, 30 ns by
 *     default), host wait (the next event's launch call, or graph launch,
 *     starts at or after the end the gap starts from: the GPU waited for
 *     the host), other (the launch came earlier, or no launch links to the
 *     event: the stream waited for something else, e.g. an event or
 *     another stream); a host wait whose gap opens while the launching
 *     thread is blocked in a call that waits for the GPU is also counted
 *     as a host wait after a sync (host_sync_wait);
 *   - micro / macro: gaps shorter / not shorter than micro_ns, per stream
 *     and over the union of all streams (the `all` figures). */
#ifndef TL_IDLE_H
#define TL_IDLE_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define TL_IDLE_KERNEL_WAIT_NS 30       /* HTA's consecutive_kernel_delay */
#define TL_IDLE_MICRO_NS 10000          /* 10 µs unless the report sets --micro-idle-thresh-us */

typedef struct tl_idle_stream {
    int64_t device, stream;          /* all: both -1 */
    size_t n_events, n_gaps;
    int64_t start, end, busy;        /* span = end - start, idle = span - busy */
    int64_t host_wait, kernel_wait, other_wait; /* sum = idle (per stream only) */
    size_t n_host_wait, n_kernel_wait, n_other_wait;
    /* of host_wait, the gaps that open while the next launch's thread is
     * blocked in a call that waits for the GPU (tl_blocking_calls: a
     * synchronize, a blocking copy such as .item() or .cpu()) and that
     * returns before that launch: the host drained the stream's queue by
     * waiting for it, and the GPU then waited for the next launch */
    int64_t host_sync_wait;
    size_t n_host_sync_wait;
    int64_t micro_idle, macro_idle;  /* sum = idle */
} tl_idle_stream;

typedef struct tl_idle {
    tl_idle_stream *v;   /* by (device, stream) */
    size_t n;
    tl_idle_stream all;  /* the union of every stream's events; no causes */
    /* of all's idle time, the part during which some GPU event had been
     * launched (its launch call, or graph launch, had returned) and had not
     * started: the GPU idled with work queued, so the host was not what it
     * waited for (an event, another stream, the driver, work outside the
     * trace). GPU events no launch links to count for nothing here. */
    int64_t queued_idle;
    uint32_t longest_queued_uid; /* the GPU event whose own wait covers the most of it (UINT32_MAX: none) */
    int64_t longest_queued;      /* how much */
    int64_t kernel_wait_ns, micro_ns;
} tl_idle;

void tl_idle_compute(const tl_trace *t, int64_t kernel_wait_ns, int64_t micro_ns, tl_idle *out);
void tl_idle_free(tl_idle *b);
struct tl_gpu_at;
/* The same from t's GPU events as tl_idle_gpu_events lists them (g, ng:
 * the caller's, read only; a report builds the list once for this and the
 * kernel sequences). */
void tl_idle_compute_with(const tl_trace *t, int64_t kernel_wait_ns, int64_t micro_ns, const struct tl_gpu_at *g,
                          size_t ng, tl_idle *out);

/* The (device, stream) of GPU event u as above (dev_key: the keys id of
 * "device", or UINT32_MAX when no event has one). */
void tl_idle_where(const tl_event_store *es, uint32_t dev_key, size_t u, int64_t *device, int64_t *stream);

/* A GPU event (as above) where it runs: its (device, stream), start and uid. */
typedef struct tl_gpu_at {
    int64_t device, stream, ts;
    uint32_t uid;
} tl_gpu_at;

/* The GPU events (as above: a GPU category with a ts) in (device, stream,
 * ts, uid) order; *n is their count. The array is the caller's to free;
 * NULL when there are none. */
tl_gpu_at *tl_idle_gpu_events(const tl_event_store *es, size_t *n);

/* Launch-queue length per (device, stream) (issue 16; HTA's queue-length
 * summary is the anchor): every GPU event linked to a launch call (a graph
 * kernel: to the graph launch) is outstanding from the call's start to
 * its own end; at one instant ends count before starts. The host is
 * blocked on a full queue while a launch call that starts with `full` or
 * more outstanding on its stream runs (CUDA's launch queue holds about
 * 1024 entries; HTA's default). */
#define TL_QUEUE_FULL 1024

typedef struct tl_queue_point {
    int64_t t;
    uint32_t len;            /* the queue length from t on */
} tl_queue_point;

typedef struct tl_queue_stream {
    int64_t device, stream;
    size_t n_launches, max_len;
    int64_t start, end;      /* first call start, last end */
    double mean_len;         /* time-weighted over [start, end) */
    int64_t full_ns;         /* time with length >= full */
    size_t n_blocked;        /* launch calls that started on a full queue */
    int64_t blocked_ns;      /* their durations */
    tl_queue_point *series;  /* with_series: every change, in time order */
    size_t n_series;
} tl_queue_stream;

typedef struct tl_queue {
    tl_queue_stream *v;      /* by (device, stream) */
    size_t n;
    size_t full;
} tl_queue;

void tl_queue_compute(const tl_trace *t, size_t full, int with_series, tl_queue *out);
void tl_queue_free(tl_queue *q);

#endif
