/* gpu_timeline_sheet.h — the `gpu_timeline` sheet (perf-report spec §4.6):
 * rows type / time ms / percent in the reference order. */
#ifndef TL_GPU_TIMELINE_SHEET_H
#define TL_GPU_TIMELINE_SHEET_H

#include "../trace/timeline.h"

typedef struct tl_timeline_row {
    const char *type;
    int64_t ns;
} tl_timeline_row;

/* Fills rows (up to 9) in sheet order; returns the count. */
int tl_timeline_rows(const tl_timeline *tl, tl_timeline_row *rows);

#endif
