/* diff_beside.h — TraceDiff for a perf report that asked for a comparison
 * (--comparison_json_path, trace:report{compare = t2}; inference-and-
 * comparative spec §2.3): the diff of the report's trace against t2 runs on
 * a thread of its own beside the report build, then adds its seven columns
 * to unified_perf_summary and hands back the diff_stats sheet. The report
 * knows nothing of it: its caller (src/cli, src/lua) plugs begin and end
 * into the report's unified hook (report.h), whose signatures these match.
 * Owns the diff, its thread, and the private copy of t2 with pseudo ops
 * when the report asks for them on a t2 loaded without. */
#ifndef TL_DIFF_BESIDE_H
#define TL_DIFF_BESIDE_H

#include <pthread.h>
#include <stdint.h>

#include "../table/table.h"
#include "../trace/trace.h"
#include "../util/error.h"
#include "trace_diff.h"

typedef struct tl_diff_beside {
    const tl_trace *t1, *t2; /* t2: the comparison trace or its copy */
    tl_trace *t2_copy;        /* the private copy with pseudo ops (owned), or NULL */
    pthread_t th;
    int state;                /* 0 not begun, 1 running (threaded or done in line), 2 ended */
    int threaded;
    tl_trace_diff d;
    tl_error err;
    int rc;
} tl_diff_beside;

/* pseudo_ops: the report's option (1: t2 gets the pseudo ops too, on a
 * private copy when it was loaded without). */
void tl_diff_beside_init(tl_diff_beside *b, const tl_trace *t2, int pseudo_ops);
/* Starts TraceDiff(t1, t2) on its own thread (in line when none can be
 * had); t1 is the trace the report is built on. ctx: a tl_diff_beside. */
void tl_diff_beside_begin(void *ctx, const tl_trace *t1);
/* Waits for the diff; adds its columns to unified (NULL: the report has
 * none) through kernel_row (tl_trace_diff_enrich_unified); *sheet: the
 * diff_stats table (a reference), NULL when it has no rows. 0, or -1 with
 * err set (the diff's error). */
int tl_diff_beside_end(void *ctx, tl_table *unified, const uint32_t *kernel_row, tl_table **sheet, tl_error *err);
void tl_diff_beside_free(tl_diff_beside *b);

#endif
