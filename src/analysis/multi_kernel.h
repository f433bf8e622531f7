/* multi_kernel.h — the numbers behind category_data/multi_kernel_data.json
 * (analysis-layer spec §3.5): every GPU event of the trace (kernel,
 * gpu_memcpy, gpu_memset; linked or not, unlike gpu_timeline) classified as
 * computation / communication / memcpy by the timeline's bucket rule
 * (tl_gpu_bucket), the memcpy transfers by direction, the communication
 * events and the interval metrics over the merged unions (integer ns, with
 * tl_merge / tl_subtract). Owns nothing persistent: one pass over the store
 * fills a value struct; the Lua side (lua/tracelens/multi_kernel.lua) shapes
 * the JSON. */
#ifndef TL_ANALYSIS_MULTI_KERNEL_H
#define TL_ANALYSIS_MULTI_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/trace.h"

/* Memcpy directions, in the order the JSON lists them. */
enum { TL_MK_D2H = 0, TL_MK_H2D, TL_MK_D2D, TL_MK_OTHER, TL_MK_NDIR };
#define TL_MK_TOP 10

/* The durations of a set of GPU events, summed as the reference sums them. */
typedef struct tl_mk_durs {
    size_t count;
    double sum_us;      /* Σ dur in µs, left to right in trace order (each dur is
                           the double of its JSON text, so this is the reference's
                           float sum) */
    int64_t sum_ns;     /* exact */
    uint32_t max_uid;   /* the first event with the largest dur; TL_NOUID when empty */
    int all_int;        /* every dur was a JSON integer: the reference's sum is an int */
} tl_mk_durs;

typedef struct tl_mk_dir {
    tl_mk_durs d;
    int64_t bytes_i;    /* Σ of the truthy integer args.bytes */
    double bytes_f;     /* Σ of the truthy non-integer ones */
    int bytes_float;    /* some truthy args.bytes was not an integer */
    int any_bytes;      /* some args.bytes was truthy */
    size_t n_bytes;     /* the events with a truthy args.bytes */
    int64_t bytes_ns;   /* Σ of their durations (ns): the time those bytes took */
} tl_mk_dir;

/* A union's length; n_iv == 0 is the empty union (the reference's int 0). */
typedef struct tl_mk_len {
    int64_t ns;
    size_t n_iv;
} tl_mk_len;

typedef struct tl_multi_kernel {
    size_t n_gpu;                   /* events in all_gpu */
    int all_int;                    /* every GPU event had integer ts and dur */
    size_t n_memcpy;
    tl_mk_dir dir[TL_MK_NDIR];
    tl_mk_durs comm;
    uint32_t top[TL_MK_TOP];        /* the longest communication events, dur descending (stable) */
    size_t n_top;
    /* interval metrics (valid when n_gpu > 0) */
    int64_t total_ns;               /* last merged end − first start */
    tl_mk_len computation, total_comm, exposed_comm, total_memcpy, exposed_memcpy;
} tl_multi_kernel;

/* The memcpy direction of a name (§3.5 step 2, with the [FIX, Q35]
 * underscore spellings): copies.h's tl_copy_direction without its P2P
 * class, so "PtoP (Device -> Device)" is D2D, as in the reference. */
int tl_mk_direction(const char *name);

void tl_multi_kernel_compute(const tl_trace *t, tl_multi_kernel *out);

#endif
