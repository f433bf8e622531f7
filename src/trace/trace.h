/* trace.h — a loaded trace: the EventStore plus its tree.
 * Owns both, and the summary of the pseudo-op pass when it ran; immutable
 * after tl_trace_load (or tl_trace_with_pseudo_ops) returns, and
 * reference-counted so that Lua states on several threads can share one
 * trace (the count is the only mutable field, updated atomically). */
#ifndef TL_TRACE_H
#define TL_TRACE_H

#include <stdatomic.h>

#include "event_store.h"
#include "pseudo_ops.h"
#include "tree.h"
#include "../util/error.h"

typedef struct tl_load_opts {
    int with_python;        /* python functions in the tree (--include_call_stack) */
    int progress;           /* print progress to stderr */
    int threads;            /* scan threads for plain files (0 = one per core) */
    int pseudo_ops;         /* run the pseudo-op pass after the tree (--enable_pseudo_ops) */
    int max_value_mb;       /* the largest single JSON value in MiB, 1..TL_MAX_VALUE_MB_MAX (0 = 64) */
    int skip_host_args;     /* host events without their args (tl_scan_opts.skip_host_args): the multi-rank pass */
    uint64_t max_text_bytes; /* the most bytes of trace text read, decompressed (tl_scan_opts); 0 = no limit */
} tl_load_opts;

#define TL_MAX_VALUE_MB_DEFAULT 64
#define TL_MAX_VALUE_MB_MAX 4095

typedef struct tl_trace {
    tl_event_store es;
    tl_tree tree;
    char *path;
    tl_load_opts opts;
    double load_seconds, tree_seconds;
    tl_pseudo_summary pseudo; /* when opts.pseudo_ops */
    struct tl_capture_summary *capture; /* a trace merged with capture traces (capture.h): the merge's summary, else NULL */
    /* [copied_from, copied_to): the events such a merge copied from the
     * capture traces under the graph launches they replay. Each carries its
     * graph launch's ts and dur, not a time of its own: their host time was
     * spent at capture, not in this trace (empty when nothing was merged) */
    uint32_t copied_from, copied_to;
    atomic_int refs;
} tl_trace;

/* Is event u a capture merge's copy (above)? */
static inline int tl_trace_is_copy(const tl_trace *t, size_t u) { return u >= t->copied_from && u < t->copied_to; }

/* Loads and builds the tree; NULL with err set on failure. refs = 1. */
tl_trace *tl_trace_load(const char *path, const tl_load_opts *opts, tl_error *err);
/* A new trace (refs = 1): a copy of t with the pseudo-op pass applied, for
 * a report that asks for pseudo ops on a trace loaded without them. t is
 * only read. */
tl_trace *tl_trace_with_pseudo_ops(const tl_trace *t);
/* Runs the pseudo-op pass on t, which must still be private to its
 * maker (the capture merge's new trace); sets opts.pseudo_ops. */
void tl_trace_apply_pseudo_ops(tl_trace *t);
/* The error for a trace with no GPU event at all (no kernel, memory copy
 * or memset): "PATH: no GPU events found in the trace: none of its N
 * events (11 user_annotation, 4 cpu_op, ..., 12 metadata) is a kernel, ..."
 * with the advice to record the GPU. Counts every event by category, the
 * five most frequent named. */
void tl_trace_no_gpu_error(const tl_trace *t, tl_error *err);
void tl_trace_retain(tl_trace *t);
void tl_trace_release(tl_trace *t);

#endif
