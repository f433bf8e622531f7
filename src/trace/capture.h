/* capture.h — graph-replay traces merged with their capture traces
 * (inference-and-comparative spec §1.4 classification, §1.5 merge).
 *
 * A serving trace replays captured CUDA/HIP graphs: one graph launch
 * stands for hundreds of kernels with no CPU op, shape or stack. The
 * capture traces (one profiler trace of the capture phase per batch size)
 * hold the ops that were captured. The merge copies each capture root's
 * subtree under the graph launch it replays and pairs each capture
 * dispatch with the replayed kernel it produced, so that kernels get
 * launchers with shapes, dtypes, call stacks and nn.Module parents.
 *
 * Owns: the capture index read from (or classified into)
 * execution_details.json, the capture traces it loads (freed before it
 * returns), and the merged trace it returns (a new trace; the replay
 * trace is only read). */
#ifndef TL_CAPTURE_H
#define TL_CAPTURE_H

#include <stddef.h>

#include "trace.h"
#include "../util/error.h"

/* One entry of execution_details.json (§1.4). */
typedef struct tl_capture_entry {
    char *file;          /* basename inside the folder */
    long batch_size;     /* -1 = null */
    char *mode;          /* "FULL", "PIECEWISE", ... */
} tl_capture_entry;

typedef struct tl_capture_index {
    tl_capture_entry *v;
    size_t n;
    int classified;      /* 1: execution_details.json was absent and was classified */
    int written;         /* 1: ... and written into the folder (write was set and it could be) */
    char *note;          /* why it was not written (owned), NULL when it was or write was not set */
    uint64_t max_text_bytes; /* the most trace text (decompressed) one capture trace may have, and the
                              * merge hold at once; 0 = no limit (a memory-capped caller's budget) */
} tl_capture_index;

/* Reads DIR/execution_details.json, or classifies the capture traces in
 * DIR when it is absent (§1.4) and, when write is set, writes it as the
 * reference does (whole or not at all; a folder that cannot take it leaves
 * the classification in memory and says so in out->note). Errors (one
 * line, file named): DIR missing or without traces, a corrupt
 * execution_details.json, an unreadable capture trace. max_text_bytes
 * (0 = none): each capture trace classified is read only up to that much
 * text (a gzip bomb stops there, with TL_SOURCE_TOO_LARGE in the error), and
 * the merge keeps to it (out->max_text_bytes). */
int tl_capture_index_load(const char *dir, int write, uint64_t max_text_bytes, tl_capture_index *out, tl_error *err);
void tl_capture_index_free(tl_capture_index *ix);

typedef struct tl_capture_summary {
    size_t n_graph_launches;     /* graph launches in the replay trace */
    size_t n_exec_roots;         /* iteration (execution) roots */
    size_t n_merged;             /* (capture root, graph launch) pairs grafted */
    size_t n_skipped;            /* pairs or roots skipped (see notes) */
    size_t n_kernels_linked;     /* replay GPU events given a capture dispatch */
    size_t n_events_added;       /* events copied into the replay store */
    double seconds;              /* the merge's wall time, capture loads included */
    int failed;                  /* the merge failed as a whole (multistream without kernel names; then an error) */
    char *notes;                 /* newline-separated warnings (owned), NULL when none */
} tl_capture_summary;

/* The merged trace (refs = 1), built from replay (loaded without pseudo
 * ops; its tree is rebuilt with python functions when it has none) and the
 * capture traces of idx in dir; the pseudo-op pass runs on the merged
 * trace when pseudo_ops is set. The merged trace keeps a copy of *sum in
 * its `capture` field. NULL with err set (one line) on an input error: a
 * capture trace that cannot be loaded, a merge that fails as a whole
 * (multistream graphs without kernel names in the capture), or a replay
 * with graph launches of which none could be merged (no annotation, no
 * capture batch size, capture traces that match nothing: the first note
 * says why). A replay without graph launches gives a copy and a note. */
tl_trace *tl_trace_merge_capture(const tl_trace *replay, const char *dir, const tl_capture_index *idx,
                                 int pseudo_ops, tl_capture_summary *sum, tl_error *err);
void tl_capture_summary_copy(tl_capture_summary *dst, const tl_capture_summary *src);
void tl_capture_summary_free(tl_capture_summary *s);

#endif
