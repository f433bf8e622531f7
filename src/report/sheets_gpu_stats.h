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
tl_table *tl_sheet_launch_stats(const tl_trace *t);
tl_table *tl_sheet_user_annotations(const tl_trace *t);

#endif
