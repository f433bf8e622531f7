/* sheets_ops.h — the launcher-based sheets (perf-report spec §7.2-7.4,
 * §7.10): ops_summary_by_category, ops_summary, ops_unique_args (each with
 * is_recompute as a key when the launcher table has it, --detect_recompute)
 * and ops_unique_args_kl_overlap, declared on the
 * Table engine from the launcher table. Each returns a new table (caller
 * frees), or NULL when the sheet would be empty (not written, §1). */
#ifndef TL_SHEETS_OPS_H
#define TL_SHEETS_OPS_H

#include "launchers.h"

typedef struct tl_ops_opts {
    int group_by_num_kernels;  /* --group_by_num_kernels */
    long topk_ops;             /* --topk_ops N (0 = all) [FIX: the reference ignores it] */
    int first_occurrence_time; /* --include_first_occurrence_time */
} tl_ops_opts;

/* inference: the module variants of the inference report (inference-and-
 * comparative spec §1.6): parent_module a key and call_stack_first a column
 * when the launcher table has them (tl_launcher_table_add_modules);
 * ops_summary with total_subtree_kernel_time_count and without the subtree
 * ms. ops_unique_args takes parent_module (a key after op category) and
 * call_stack (first, after ex_UID) whenever the table has them. */
tl_table *tl_sheet_ops_summary_by_category(const tl_table *launchers, int inference);
tl_table *tl_sheet_ops_summary(const tl_table *launchers, int inference);
tl_table *tl_sheet_ops_unique_args(const tl_trace *t, const tl_launchers *l, const tl_table *launchers,
                                   const tl_ops_opts *o);
/* ops_unique_args_kl_overlap (§7.10, --include_overlap_info): ops_unique_args
 * with overlapping_kernel_names as a key after name, then
 * overlapping_kernels_details_summary, trunc_overlapping_kernels_details and
 * overlap_pct_{mean,median,std,min,max} after trunc_kernel_details; same sort.
 * NULL without the launchers' overlap fields or when empty. */
tl_table *tl_sheet_ops_unique_args_kl_overlap(const tl_trace *t, const tl_launchers *l, const tl_table *launchers,
                                              const tl_ops_opts *o);

/* Appends "Percentage (%)" = col / Σcol * 100 and its running sum
 * "Cumulative Percentage (%)" (shared by several sheets). */
void tl_add_percentages(tl_table *t, const char *col);

/* The kernel-stats custom aggregation over rows that carry a "__klist"
 * index into `lists` (ctx: tl_kstats_ctx). */
typedef struct tl_kstats_ctx {
    const tl_trace *t;
    const tl_klist *lists;
    int trunc;
} tl_kstats_ctx;
/* The direct-kernel list of every launcher (index = launcher index). */
tl_klist *tl_launcher_klists(const tl_launchers *l);
int tl_agg_kernel_stats(const tl_table *src, const size_t *rows, size_t n, void *ctx, tl_sbuf *out);

#endif
