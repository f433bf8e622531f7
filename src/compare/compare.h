/* compare.h — `tracelens compare`: perf reports compared with the first one
 * (the baseline), as the reference's compare_perf_reports_pytorch (spec
 * inference-and-comparative.md §2.1, docs/compare.md).
 *
 * Inputs are .xlsx workbooks (each sheet read with xlsx_read.h) or report
 * directories of <sheet>.csv (csv_read.h); the reports are outer-joined on the sheet's keys (join.h),
 * the difference columns are added and the split sheets are cut. Owns the
 * sheets it builds (a tl_sheets list, freed with tl_sheets_free); nothing is
 * written until every sheet is built, and then outputs appear whole or not
 * at all. */
#ifndef TL_COMPARE_H
#define TL_COMPARE_H

#include <stddef.h>

#include "../report/report.h"
#include "../util/error.h"

enum {
    TL_CMP_GPU_TIMELINE = 1,
    TL_CMP_OPS_SUMMARY = 2,
    TL_CMP_KERNEL_SUMMARY = 4,
    TL_CMP_OPS_ALL = 8,  /* ops_all, ops_unique_args, unified_perf_summary: split sheets */
    TL_CMP_ROOFLINE = 16, /* GEMM, SDPA_fwd/bwd, CONV_fwd/bwd, elementwise: split sheets */
    TL_CMP_ALL = 31,
};

typedef struct tl_compare_opts {
    const char *const *reports; /* >= 2 paths; the first is the baseline */
    size_t n;
    const char *const *names;   /* n unique tags, or NULL: each report's file stem */
    unsigned sheets;            /* TL_CMP_* bits */
    int quiet;                  /* no notes on stderr (skipped roofline sheets) */
} tl_compare_opts;

/* Parses a --sheets word; 0 when unknown. */
unsigned tl_compare_sheet_bit(const char *word);

/* Builds every comparison sheet in the reference's order. */
int tl_compare_build(const tl_compare_opts *o, tl_sheets *out, tl_error *err);

typedef struct tl_compare_out {
    const char *xlsx_path; /* NULL: no workbook */
    const char *csv_dir;   /* NULL: no CSVs */
    int csv_dir_owned;     /* 1: csv_dir is ours (OUT/comparison_csvs) and replaced whole;
                              0: the files are added to (or replaced in) it */
} tl_compare_out;

/* Writes the sheets: <csv_dir>/<sheet>.csv and the workbook (sheet names cut
 * to Excel's 31 characters, kept unique; the columns the reference hides
 * are hidden). Everything goes to temporary names first. */
int tl_compare_write(const tl_sheets *s, const tl_compare_out *o, tl_error *err);

/* The `tracelens compare` command line; returns the exit status (0 ok,
 * 1 input error, 2 usage error). */
int tl_compare_cli(int argc, char **argv);

#endif
