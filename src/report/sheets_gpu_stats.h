/* sheets_gpu_stats.h — tracelens's own sheets after step_breakdown (issue
 * 16; not the reference's): idle_breakdown (trace/idle.h, with each
 * stream's launch queue), launch_stats
 * (trace/launch_stats.h) and user_annotations (trace/annot_times.h).
 * Owns nothing: each returns a new table, or NULL when the trace has
 * nothing for it (no GPU events; no linked launches; no annotations). */
#ifndef TL_SHEETS_GPU_STATS_H
#define TL_SHEETS_GPU_STATS_H

#include "../table/table.h"
#include "../trace/trace.h"

/* micro_ns < 0: the default micro/macro threshold (TL_IDLE_MICRO_NS). */
tl_table *tl_sheet_idle_breakdown(const tl_trace *t, int64_t micro_ns);
/* The same from t's GPU events as tl_idle_gpu_events lists them (the
 * caller's, read only: the report lists them once for this sheet and the
 * kernel sequences). */
struct tl_gpu_at;
tl_table *tl_sheet_idle_breakdown_with(const tl_trace *t, int64_t micro_ns, const struct tl_gpu_at *g, size_t ng);
tl_table *tl_sheet_launch_stats(const tl_trace *t);
tl_table *tl_sheet_user_annotations(const tl_trace *t);

#endif
