/* mem_timeline.h — the memory timeline of a profile_memory trace (issue
 * 16): the `[memory]` instant events (args Total Allocated, Total Reserved,
 * Bytes, Device Type, Device Id) per device, their peaks, the CPU op
 * running at each peak and a timeline downsampled to a fixed number of
 * samples. Owns the arrays it returns (free with tl_mem_timeline_free).
 *
 * Rules (docs/compat.md "Memory timeline"):
 *   - the events named `[memory]` with a ts and integer Total Allocated,
 *     grouped by (Device Type, Device Id) (absent: -1), in (ts, uid) order;
 *   - a peak is the largest value and the first event (in that order) that
 *     reaches it; the op at a peak is the innermost cpu_op of the event's
 *     pid and tid whose [ts, ts + dur] holds it (the latest start, then the
 *     shorter);
 *   - the samples cut [first ts, last ts] into nb equal parts, nb =
 *     min(buckets, the device's events but at least 16, span + 1 in ns):
 *     sample k covers [first + k w, first + (k+1) w) with w = (span + 1) /
 *     nb (the last one up to last ts), and holds the largest level in
 *     it: the level carried in from the event before it, and each event in
 *     it (the timeline is a step function; max-downsampling keeps peaks). */
#ifndef TL_MEM_TIMELINE_H
#define TL_MEM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define TL_MEM_SAMPLES 100

typedef struct tl_mem_sample {
    int64_t ts;                /* ns: the sample's start */
    int64_t allocated, reserved; /* the largest level in it (reserved -1: never given) */
} tl_mem_sample;

typedef struct tl_mem_device {
    int64_t type, id;          /* Device Type (0 CPU, 1 CUDA), Device Id */
    size_t n_events, n_alloc, n_free; /* Bytes > 0, Bytes < 0 */
    int64_t bytes_alloc, bytes_freed; /* Σ Bytes > 0, Σ -Bytes < 0 (saturating) */
    int64_t first_ts, last_ts;
    int64_t peak_alloc, peak_alloc_ts;
    uint32_t peak_alloc_uid, peak_alloc_op;       /* op TL_NOUID: none holds it */
    int64_t peak_reserved, peak_reserved_ts;      /* -1: no Total Reserved */
    uint32_t peak_reserved_uid, peak_reserved_op;
    int64_t end_alloc, end_reserved;              /* the last event's levels */
    size_t sample_off, n_samples;
} tl_mem_device;

typedef struct tl_mem_timeline {
    tl_mem_device *v;          /* by (type, id) */
    size_t n;
    tl_mem_sample *s;
    size_t n_samples;
} tl_mem_timeline;

/* buckets 0: TL_MEM_SAMPLES. */
void tl_mem_timeline_compute(const tl_trace *t, unsigned buckets, tl_mem_timeline *out);
void tl_mem_timeline_free(tl_mem_timeline *m);

#endif
