/* iteration.h — iteration (execution) annotations of serving traces
 * (inference-and-comparative spec §1.2-1.3, §1.7): the parse of every
 * annotation grammar (vLLM detailed/native, SGLang detailed/native with the
 * spec's FIX, ATOM detailed/native, diffusion) and of capture annotations,
 * the phase helpers, the iteration roots of a trace with their GPU busy
 * time, and the steady-state regions and window of the splitter.
 *
 * Owns nothing global: the grammars are compiled by annotation.h
 * (tl_ann_grammars, one set shared read-only), parses fill caller structs,
 * tl_trace_iterations returns an array the caller frees.
 *
 * Numbers: Python's int() is unbounded; here a count of more than 15
 * digits makes the parser fail (the annotation is then unmatched, one
 * decode-equivalent step), so every sum of two counts stays exact in int64. */
#ifndef TL_ITERATION_H
#define TL_ITERATION_H

#include <stddef.h>
#include <stdint.h>

#include "annotation.h"
#include "trace.h"

typedef enum tl_iter_format {
    TL_IT_NONE = 0, /* unmatched */
    TL_IT_VLLM_DETAILED,
    TL_IT_VLLM_NATIVE,
    TL_IT_SGLANG_DETAILED,
    TL_IT_SGLANG_NATIVE,
    TL_IT_ATOM_DETAILED,
    TL_IT_ATOM_NATIVE,
    TL_IT_DIFFUSION_NATIVE,
} tl_iter_format;

typedef enum tl_phase {
    TL_PHASE_NONE = 0,       /* idle: neither context nor generation requests */
    TL_PHASE_PREFILLDECODE,  /* mixed: both */
    TL_PHASE_PREFILL_ONLY,
    TL_PHASE_DECODE_ONLY,
} tl_phase;

/* IterationAnnotation (§1.2). Spans are offsets into the parsed name. */
typedef struct tl_iter_ann {
    int format;              /* tl_iter_format */
    int64_t batch_size;      /* 1 when unmatched */
    int64_t context_requests, context_sum, generation_requests, generation_sum;
    int64_t c_sq, c_sk, c_sqsq, c_sqsk, g_sq, g_sk, g_sqsq, g_sqsk;
    int has_sqsk;
    /* meta: ATOM ctx (raw text, prefill), p / d / spec (decode), tbo;
     * diffusion resolution ("1024x1024") */
    int has_ctx, has_p, has_d, has_spec, tbo, has_resolution;
    int64_t p, d, spec;
    size_t ctx_off, ctx_len, res_off, res_len;
} tl_iter_ann;

/* The per-step details the phase and steady-state logic read
 * (iter_details(); unmatched -> {1, 1, 0, 0, 1, 1}). */
typedef struct tl_iter_details {
    int64_t batch_size, num_requests, context_requests, context_sum, generation_requests, generation_sum;
} tl_iter_details;

/* Parses name with the formats in the reference's order; returns the
 * format (TL_IT_NONE when none both matches and parses; *out then holds
 * the defaults). */
int tl_iter_parse(const tl_ann_grammars *g, const char *name, tl_iter_ann *out);
/* "vllm_detailed", ... ; NULL for TL_IT_NONE. */
const char *tl_iter_format_name(int format);
void tl_iter_details_of(const tl_iter_ann *a, tl_iter_details *d);

/* CaptureAnnotation `capture_(\d+)_(.*)`: 1 with the batch size and the
 * mode span (up to the first newline), 0 when name is not one. */
int tl_capture_annotation_parse(const char *name, int64_t *batch_size, size_t *mode_off, size_t *mode_len);

/* classify_phase; "prefilldecode", "prefill_only", "decode_only" or NULL. */
int tl_iter_phase(const tl_iter_details *d);
const char *tl_phase_name(int phase);

/* find_phase_from_window: counts of prefill-only, mixed and decode-only
 * steps; avg_bs / avg_conc = int(mean) (truncation) of batch_size /
 * num_requests (0 for an empty window). */
typedef struct tl_phase_window {
    size_t num_prefill, num_prefilldecode, num_decode;
    int64_t avg_bs, avg_conc;
} tl_phase_window;
void tl_phase_from_window(const tl_iter_details *d, size_t n, tl_phase_window *out);

/* ------------------------------------------------ iteration roots of a trace */

typedef struct tl_iteration {
    uint32_t uid;            /* the user_annotation event (generic: the block's first event) */
    int tier;                /* 1 detailed, 2 native, 3 generic (a repeating block), 4 a ProfilerStep */
    int64_t ts, dur;         /* the annotation's (generic: first start to last end of the block) */
    tl_iter_ann ann;
    /* GPU work of the iteration: the GPU events linked to the runtime calls
     * (launches, graph launches, copies) on the annotation's (pid, tid)
     * that lie wholly inside [ts, ts + dur] — the events
     * the reference's splitter extracts for the iteration. busy = length of
     * the union of their intervals; first/last = earliest start / latest
     * end (TL_NONE when there are none). */
    int64_t gpu_busy, gpu_first, gpu_last;
    size_t n_gpu;
} tl_iteration;

/* find_iteration_roots_by_priority (§1.3): the user_annotation events
 * (cat exactly "user_annotation") whose name matches a tier-1 grammar, or
 * when there is none a tier-2 grammar, stably sorted by ts; each parsed
 * and measured. Returns the count; *out (caller frees) is NULL when 0. */
size_t tl_trace_iterations(const tl_trace *t, tl_iteration **out);

/* The splitter's third fallback (find_iteration_roots_generic, §1.3), on
 * tracelens's tree (user annotations are no tree nodes here; python
 * functions are when the trace was loaded with them): breadth-first from
 * the parentless host events (by ts), the first node whose children hold
 * GPU work and repeat, in a block with GPU work, by tl_repeating_period
 * gives one synthetic root per
 * repeat: the children from an occurrence of the period's first name to
 * the matching occurrence of its last name, timed from the first start to
 * the last end. Tier 3, annotation unmatched (one decode-equivalent step
 * each), measured as the others. Returns the count (*out NULL when 0). */
size_t tl_trace_generic_iterations(const tl_trace *t, tl_iteration **out);

/* The profiler's steps as iteration roots (ProfilerStep#N, tl_steps_find)
 * when the trace has at least 2: a training loop's iterations. Tier 4,
 * annotation unmatched (one decode-equivalent step each), measured as the
 * others. Returns the count (*out NULL when 0). */
size_t tl_trace_step_iterations(const tl_trace *t, tl_iteration **out);

/* The splitter's roots: the iteration annotations (tl_trace_iterations);
 * else the profiler's steps when there are 2 or more
 * (tl_trace_step_iterations, not the reference's: docs/compat.md); else
 * the repeating block of GPU work (tl_trace_generic_iterations). The count
 * (*out NULL when 0). */
size_t tl_trace_split_roots(const tl_trace *t, tl_iteration **out);

/* The repeating-period search (min_repeats 3): the first start (0..n-1)
 * and period p (1..m/2, m = n - start) whose block names[start..start+p)
 * repeats back to back at least 3 times covering more than half of the
 * m names, and, when need is not NULL, holds an index k with need[k]
 * (the generic roots: a child with GPU work). 1 with *start and *period
 * set, 0 when none. */
int tl_repeating_period(const uint32_t *names, size_t n, const uint8_t *need, size_t *start, size_t *period);

/* ------------------------------------------------ steady state (§1.7) */

typedef struct tl_region {
    size_t start, end;       /* [start, end) step indices */
} tl_region;

/* identify_steady_state_regions with the FIX (a region still open at the
 * end closes at n). Returns the number of regions (at least 1 when n > 0:
 * the middle fallback, *fallback set to 1; fallback may be NULL), *out
 * allocated (caller frees); *global_max = the largest num_requests. n == 0
 * gives 0 regions. */
size_t tl_steady_state_regions(const tl_iter_details *d, size_t n, size_t num_steps, tl_region **out,
                               int64_t *global_max, int *fallback);

typedef enum tl_ss_mode { TL_SS_MIXED = 0, TL_SS_DECODE_ONLY, TL_SS_MAX_PREFILLDECODE } tl_ss_mode;

typedef struct tl_ss_opts {
    size_t num_steps;        /* requested window size (>= 1) */
    int mode;                /* tl_ss_mode */
    int have_conc, have_osl, have_r;
    int64_t conc;            /* expected peak concurrency */
    double osl, r;           /* output sequence length, OSL window ratio */
} tl_ss_opts;

typedef struct tl_ss_info {
    double reference_ratio;  /* the P/D ratio the mixed mode aims at */
    double ideal_ratio;      /* (2 CONC) / (OSL (1 + R)) when all three given, else -1 */
    size_t num_steps;        /* after raising to ceil(1 / ideal ratio) */
    int64_t global_max;
    int conc_mismatch;       /* CONC given and != global max */
    int r_clamped;           /* R outside [0, 1] was clamped */
    tl_region largest;       /* the largest region (first of the largest size) */
} tl_ss_info;

/* find_steady_state_window over the regions; returns 1 with *win set, 0
 * when the mode finds no window (decode_only / max_prefilldecode without a
 * run, or no steps), -1 on invalid options (CONC/OSL/R that give no ratio:
 * OSL (1 + R) <= 0 or CONC <= 0 with all three given). */
int tl_steady_state_window(const tl_iter_details *d, size_t n, const tl_region *regions, size_t n_regions,
                           const tl_ss_opts *o, tl_region *win, tl_ss_info *info);

#endif
