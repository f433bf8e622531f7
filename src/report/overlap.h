/* overlap.h — kernel-overlap information of an op (perf-report spec §7.10,
 * --include_overlap_info) and the helpers of the `*_kl_overlap` sheets.
 * Owns: per-op overlap records (tl_ovinfo) whose detail entries live in a
 * tl_ovpool. They are derived per report from the immutable trace and the
 * overlap sweep (timeline.h), never stored in the core. */
#ifndef TL_OVERLAP_H
#define TL_OVERLAP_H

#include <stdint.h>

#include "../table/table.h"
#include "../trace/timeline.h"
#include "../trace/trace.h"
#include "../util/sbuf.h"

/* One entry of `overlapping_kernels_details`: the overlapping events of one
 * name, as the reference groups them. */
typedef struct tl_ovdetail {
    uint32_t uid;     /* the first overlapping event of this name (its name and stream are shown) */
    double dur_us;    /* mean dur of the name's overlap entries, Python round(x, 2) */
    double pct;       /* mean per-pair overlap fraction, Python round(x, 2) */
} tl_ovdetail;

typedef struct tl_ovpool {
    tl_ovdetail *v;
    size_t n, cap;
} tl_ovpool;

/* The overlap fields of one op: overlapping_kernel_names (the detail names,
 * in order), overlapping_kernels_details (the details) and overlap_pct. All
 * three are None when n == 0. */
typedef struct tl_ovinfo {
    uint32_t first, n; /* details: pool.v[first .. first + n) */
    double pct;        /* overlap_pct: a fraction of the kernels' busy time, Python round(x, 2) */
} tl_ovinfo;

void tl_ovpool_free(tl_ovpool *p);

/* _compute_overlap_info over an op's kernels (in the order given): every
 * (kernel, overlapping event) pair from the sweep, grouped by the
 * overlapping event's name in first-seen order. */
void tl_ovinfo_compute(const tl_event_store *es, const tl_overlaps *ov, const uint32_t *kernels, size_t nk,
                       tl_ovpool *pool, tl_ovinfo *out);

/* overlapping_kernel_names as Python writes the list (['a', 'b']); returns
 * 0 (nothing written) when there are none (None). */
int tl_ovinfo_names_text(const tl_event_store *es, const tl_ovpool *pool, const tl_ovinfo *info, tl_sbuf *out);

/* The kernel-stats summary of a group's overlapping_kernels_details lists
 * (rows carry the index of their tl_ovinfo in column `col`, missing for
 * None): custom aggregation with ctx tl_ovstats_ctx; trunc gives the
 * trunc_overlapping_kernels_details cell. */
typedef struct tl_ovstats_ctx {
    const tl_trace *t;
    const tl_ovpool *pool;
    const tl_ovinfo *infos;
    const char *col;
    int trunc;
} tl_ovstats_ctx;
int tl_agg_overlap_stats(const tl_table *src, const size_t *rows, size_t n, void *ctx, tl_sbuf *out);

/* Python's round(x, 2) (correctly rounded, ties to even on the exact value). */
double tl_py_round2(double x);
/* numpy's round(x, 2): rint(x * 100) / 100, half to even on the double product. */
double tl_np_round2(double x);

/* The sort of the unified and perf `_kl_overlap` sheets: rows sharing the
 * group keys (the sheet's grouping columns without overlapping_kernel_names,
 * compared as their str(); a missing value is 'None') form a group; groups
 * by their total `time_col` descending, then their smallest `uid_col`
 * ascending (unique per group, so the group keys never decide); rows of a
 * group by `time_col` descending, then `uid_col` ascending. */
void tl_kl_sort(tl_table *t, const char *const *keys, size_t nk, const char *time_col, const char *uid_col);

/* Rounds every column whose name contains "overlap_pct" to 2 decimals the
 * numpy way (rint(x * 100) / 100) and sets overlap_pct_std to 0.0 where it
 * is missing and overlap_pct_mean is not. */
void tl_kl_round(tl_table *t);

#endif
