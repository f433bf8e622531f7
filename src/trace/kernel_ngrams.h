/* kernel_ngrams.h — frequent kernel sequences (issue 16): the kernel n-grams
 * that repeat on each GPU stream, ranked by the GPU time they cover, as a
 * fusion hint. Owns the arrays it returns (free with tl_kernel_ngrams_free).
 *
 * Rules (docs/compat.md "Frequent kernel sequences"):
 *   - a stream's sequence is its GPU events with a ts (kernel, gpu_memcpy,
 *     gpu_memset; linked or not) in (ts, uid) order, per (device, stream)
 *     as idle.h places them; an n-gram is n consecutive events of it, all
 *     kernels (a copy or set breaks a sequence), compared by name;
 *   - n runs from min_len to max_len (default 2..8); an n-gram that is a
 *     repetition of a shorter one (A A, A B A B) is left out: the shorter
 *     one stands for it;
 *   - occurrences are counted left to right without overlap (an occurrence
 *     starts at or after the end of the previous one counted);
 *   - the ranking tiles each stream greedily: the n-gram covering the most
 *     GPU time (Σ of its kernels' durations over its counted occurrences) is
 *     taken first and its kernels are marked; every later n-gram counts only
 *     the occurrences whose kernels are all unmarked, so no kernel is
 *     counted twice and a part of a longer repeated sequence does not
 *     appear again beside it. Ties: more kernels, then the earlier first
 *     occurrence. Up to `top` n-grams per stream with at least min_count
 *     occurrences. */
#ifndef TL_KERNEL_NGRAMS_H
#define TL_KERNEL_NGRAMS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#define TL_NGRAM_MIN_LEN 2
#define TL_NGRAM_MAX_LEN 8
#define TL_NGRAM_TOP 10
#define TL_NGRAM_MIN_COUNT 2

typedef struct tl_ngram_opts {
    unsigned min_len, max_len; /* 1 < min_len <= max_len <= 64 */
    unsigned top;              /* per stream, >= 1 */
    size_t min_count;          /* >= 2 */
} tl_ngram_opts;

typedef struct tl_ngram {
    int64_t device, stream;
    unsigned rank;             /* 1.. within its stream */
    unsigned len;              /* kernels in the sequence */
    size_t name_off;           /* names[name_off .. name_off + len): names ids */
    size_t count;              /* occurrences counted (non-overlapping, unmarked) */
    int64_t gpu_ns;            /* Σ dur of their kernels */
    int64_t max_kernel_ns;     /* the longest kernel in them */
    uint32_t first_uid;        /* the first kernel of the first counted occurrence */
    int64_t stream_kernel_ns;  /* Σ dur of all the stream's kernels */
} tl_ngram;

typedef struct tl_kernel_ngrams {
    tl_ngram *v;               /* by (device, stream), then rank */
    size_t n;
    uint32_t *names;
    size_t n_streams;          /* streams with kernels */
    tl_ngram_opts opts;
} tl_kernel_ngrams;

void tl_ngram_opts_default(tl_ngram_opts *o);
/* o NULL: the defaults. Options outside their ranges are clamped. */
void tl_kernel_ngrams_compute(const tl_trace *t, const tl_ngram_opts *o, tl_kernel_ngrams *out);
/* The same from t's GPU events as tl_idle_gpu_events lists them (g, ng:
 * the caller's, read only). */
struct tl_gpu_at;
void tl_kernel_ngrams_compute_with(const tl_trace *t, const tl_ngram_opts *o, const struct tl_gpu_at *g, size_t ng,
                                   tl_kernel_ngrams *out);
void tl_kernel_ngrams_free(tl_kernel_ngrams *k);

#endif
