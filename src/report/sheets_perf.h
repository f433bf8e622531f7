/* sheets_perf.h — the roofline sheets: the per-category perf-model sheets
 * (perf-report spec §7.5: GEMM, SDPA_fwd/bwd, CONV_fwd/bwd,
 * UnaryElementwise, ...) and unified_perf_summary (§7.6), declared on the
 * Table engine over the perf model's per-instance metrics. */
#ifndef TL_SHEETS_PERF_H
#define TL_SHEETS_PERF_H

#include "launchers.h"
#include "perf_eval.h"

typedef struct tl_perf_sheet_opts {
    int group_by_num_kernels;
    long topk_roofline_ops;   /* 0 = all [FIX: the reference ignores the flag] */
} tl_perf_sheet_opts;

/* Appends the perf sheets, in the reference's sheet order, to out (names and
 * tables; empty sheets are skipped). */
typedef void (*tl_sheet_sink)(void *ctx, const char *name, tl_table *t);
void tl_perf_sheets(tl_perf_eval *pe, tl_argtext *at, const tl_perf_sheet_opts *o, tl_sheet_sink sink, void *ctx);

/* unified_perf_summary; NULL when empty. */
tl_table *tl_sheet_unified(tl_perf_eval *pe, const tl_launchers *l, tl_argtext *at);

#endif
