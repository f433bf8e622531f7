/* sheet_steps.h — the step_breakdown sheet: one row per ProfilerStep#N with
 * the GPU work it launched (trace/steps.h; tracelens's own sheet, not the
 * reference's). Owns nothing: returns a new table, or NULL when the trace
 * has no steps. */
#ifndef TL_SHEET_STEPS_H
#define TL_SHEET_STEPS_H

#include "../table/table.h"
#include "../trace/trace.h"

tl_table *tl_sheet_step_breakdown(const tl_trace *t);

#endif
