/* sheets_kernels.h — the kernel-based sheets (perf-report spec §7.7-7.9):
 * kernel_summary, short_kernel_histogram, short_kernels_summary and
 * coll_analysis, all built from one kernel table (cat "kernel", unlinked
 * included) on the Table engine. */
#ifndef TL_SHEETS_KERNELS_H
#define TL_SHEETS_KERNELS_H

#include "launchers.h"

/* The kernel table with launcher detail: one row per `kernel` event in UID
 * order (Kernel name, Kernel duration (µs), Kernel stream, Launcher,
 * Parent cpu_op, Input dims/strides, Concrete Inputs, Parent op category). */
tl_table *tl_kernel_table(const tl_trace *t, const tl_launchers *l, tl_argtext *at);

/* total_us: the gpu_timeline total_time in µs. */
tl_table *tl_sheet_kernel_summary(const tl_table *kernels, double total_us);

typedef struct tl_short_opts {
    double threshold_us;  /* --short_kernel_threshold_us (default 10), strict < */
    int bins;             /* --short_kernel_histogram_bins (default 100) */
    long topk;            /* --topk_short_kernels (0 = all) */
} tl_short_opts;

tl_table *tl_sheet_short_kernel_histogram(const tl_table *kernels, const tl_short_opts *o);
tl_table *tl_sheet_short_kernels_summary(const tl_table *kernels, double total_us, int gpu_only,
                                         const tl_short_opts *o);

/* NULL when the trace has no communication kernels (the sheet is omitted). */
tl_table *tl_sheet_coll_analysis(const tl_trace *t);
/* The collective summary of one row per NCCL kernel (columns In/Out msg
 * size (MB), dur, collective_id and the 11 keys): grouped by the keys,
 * first sizes, dur sum/mean/std/min/max and the count, by dur_sum
 * descending. coll_analysis and the multi-rank nccl_summary_long. */
tl_table *tl_coll_summary(const tl_table *rows, const char *name, const char *const keys[11]);

#endif
