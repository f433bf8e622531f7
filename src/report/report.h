/* report.h — the perf report: every sheet in the reference's order, written
 * as DIR/perf_report_csvs/<sheet>.csv and DIR/perf_report.xlsx. Owns the
 * sheet list while it is built; all outputs go to temporary names and are
 * renamed at the end, so a failure leaves no report behind. */
#ifndef TL_REPORT_H
#define TL_REPORT_H

#include "../table/table.h"
#include "../trace/trace.h"
#include "../util/error.h"

/* A caller's addition to unified_perf_summary, run beside the report build:
 * the comparison of --comparison_json_path / trace:report{compare = t2}, whose
 * caller (src/cli, src/lua) plugs TraceDiff in here (diff/diff_beside.h), so
 * the report builds the same way with or without it and knows nothing of the
 * diff. Used only when the report has the unified sheet (not for a GPU-only
 * trace); end is called whenever begin was. */
typedef struct tl_report_unified_hook {
    void *ctx;
    /* before the sheets are built, with the trace they are built on (a
     * private copy with pseudo ops, say); NULL: nothing to start */
    void (*begin)(void *ctx, const tl_trace *t);
    /* once unified_perf_summary is built: may add columns to unified (NULL
     * when the report has none); kernel_row maps the trace's GPU event UIDs
     * to unified rows (UINT32_MAX: none; NULL without unified). *sheet: a
     * table placed right after unified_perf_summary as sheet_name (the
     * report takes the reference; NULL: none). 0, or -1 with err set (the
     * report then fails). NULL: no hook. */
    int (*end)(void *ctx, tl_table *unified, const uint32_t *kernel_row, tl_table **sheet, tl_error *err);
    const char *sheet_name;
} tl_report_unified_hook;

typedef struct tl_report_opts {
    int include_unlinked;      /* --include-unlinked-kernels */
    int64_t micro_idle_ns;     /* -1 = off */
    int kernel_summary;        /* default on */
    int step_breakdown;        /* step_breakdown (tracelens's own sheet; sheet_steps.h), default on */
    int idle_breakdown;        /* idle_breakdown, launch_stats, user_annotations (tracelens's own */
    int launch_stats;          /* sheets; sheets_gpu_stats.h), default on */
    int user_annotations;
    int kernel_sequences;      /* kernel_sequences, memcpy_summary, memory_peak + memory_timeline */
    int memcpy_summary;        /* (tracelens's own sheets; sheets_mem_seq.h), default on */
    int memory_timeline;
    int short_kernel_study;    /* default on */
    double short_threshold_us; /* 10 */
    int short_bins;            /* 100 */
    long topk_short;           /* 0 = all */
    long topk_ops;             /* 0 = all */
    long topk_roofline_ops;    /* 0 = all */
    const struct tl_arch *arch; /* roofline columns when set */
    int group_by_num_kernels;
    int first_occurrence_time; /* --include_first_occurrence_time */
    int coll_analysis;         /* default on */
    int detect_recompute;      /* --detect_recompute: is_recompute keys, two gpu_timeline blocks
                                  (the trace must have python functions in its tree) */
    int include_overlap_info;  /* --include_overlap_info: the `*_kl_overlap` sheets */
    int call_stack;            /* unified entry_point / call_stack_full: -1 (default) when the
                                  tree has python functions, 0 off, 1 on (needs them) */
    int pseudo_ops;            /* --enable_pseudo_ops: -1 (default) as the trace was loaded;
                                  1 with them (on a private copy of the trace when it was
                                  loaded without); 0 without (an error when it has them) */
    int csv;                   /* write CSVs (default on) */
    int xlsx;                  /* write the xlsx (default on) */
    const char *xlsx_path;     /* default DIR/<name>.xlsx */
    const char *name;          /* base name of the outputs: DIR/<name>_csvs/, DIR/<name>.xlsx (default "perf_report") */
    const char *extension_path; /* --extension-file: a Lua module (extension.h), NULL: none */
    /* loads extension_path (the Lua layer's tl_lua_extension_load, set by the
     * caller: the report runs no Lua itself); NULL: extensions are refused */
    struct tl_extension *(*load_extension)(const char *path, tl_error *err);
    tl_report_unified_hook unified_hook; /* the comparison's TraceDiff columns and diff_stats sheet
                                  (inference-and-comparative spec §2.3), set by the caller */
    int inference;             /* --inference: the inference report (inference-and-comparative
                                  spec §1.6): the module variants of the op sheets, per-category
                                  sheets `<Cat>_fwd` (single sheets GEMM, UnaryElementwise,
                                  BinaryElementwise only; `<Cat>_bwd` holds only the backward rows
                                  moved out of `_fwd`), the inference annotation filters, and
                                  NCCL ops in unified_perf_summary when coll_analysis is on */
    int group_by_parent_module; /* with inference: parent_module (+ call_stack) in the op sheets
                                  (the trace must have python functions in its tree) */
    struct tl_kernel_ngrams *ngrams_out; /* non-NULL: the kernel sequences of the kernel_sequences
                                  sheet (default options, on the trace itself) are handed over
                                  here (the caller frees them); left zeroed (opts.min_len 0) when
                                  the report did not compute them (sheet off, a private copy of
                                  the trace, an error before) */
} tl_report_opts;

void tl_report_opts_default(tl_report_opts *o);

/* One named sheet. */
typedef struct tl_sheet {
    char *name;
    tl_table *table;
    int write_empty_as_newline; /* an empty short_kernels_summary is "\n" [KEEP] */
} tl_sheet;

typedef struct tl_sheets {
    tl_sheet *v;
    size_t n, cap;
} tl_sheets;

/* Builds every sheet of the report (in order) from the trace. */
int tl_report_build(const tl_trace *t, const tl_report_opts *o, tl_sheets *out, tl_error *err);
void tl_sheets_free(tl_sheets *s);

/* Writes the sheets under outdir; returns 0 or -1 with err set. */
int tl_report_write(const tl_sheets *s, const char *outdir, const tl_report_opts *o, tl_error *err);

#endif
