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
    int include_overlap_info; /* add the `_kl_overlap` sheets (needs l->ov) */
    int inference;            /* the inference report (inference-and-comparative spec §1.6):
                                 single sheets only GEMM, UnaryElementwise, BinaryElementwise;
                                 no backward pass: `<f>_bwd` holds only the rows moved out of
                                 `<f>_fwd` [FIX: the reference drops them] */
} tl_perf_sheet_opts;

/* Appends the perf sheets, in the reference's sheet order, to out (names and
 * tables; empty sheets are skipped): per family `<f>` (single sheets) or
 * `<f>_fwd`, `<f>_bwd`, each family followed by its `_kl_overlap` sheets
 * with include_overlap_info (`<f>_kl_overlap`, or `<f>_fwd_kl_overlap`,
 * `<f>_bwd_kl_overlap`). is_recompute is a key when l->recompute is set. */
typedef void (*tl_sheet_sink)(void *ctx, const char *name, tl_table *t);
void tl_perf_sheets(tl_perf_eval *pe, const tl_launchers *l, tl_argtext *at, const tl_perf_sheet_opts *o,
                    tl_sheet_sink sink, void *ctx);

typedef struct tl_unified_opts {
    int call_stack;   /* entry_point / call_stack_full (with python functions in the tree) */
    int kl_overlap;   /* also unified_perf_summary_kl_overlap (needs l->overlaps) */
    /* when set: *kernel_row receives, per event UID, the unified_perf_summary
     * row its raw row (a kernel of its kernel list) was summarised into, by
     * the text of the grouping columns as the reference's TraceDiff extension
     * maps them (inference-and-comparative spec §2.3 step 1); UINT32_MAX for
     * none. The caller frees it; NULL when there is no summary. */
    uint32_t **kernel_row;
    int include_comm; /* NCCL/RCCL ops are rows too (the inference report with collective
                         analysis on, inference-and-comparative spec §1.6); else skipped */
} tl_unified_opts;

/* One op of the unified perf collection (§7.6 step A, the reference's
 * collect_unified_perf_events): a collected event, or a synthetic op, which
 * is its parent event (the runtime call, or the nearest cpu_op) and its one
 * kernel. */
typedef struct tl_unified_row {
    uint32_t ev;      /* the event (a synthetic op: its parent) */
    uint32_t kernel;  /* a synthetic op: its kernel; else TL_NOUID */
} tl_unified_row;

/* The unified perf ops in the reference's order (the collected events, then
 * the synthetic ops), the rows unified_perf_summary is built from. Returns
 * their count; the caller frees *rows. */
size_t tl_unified_collect(tl_perf_eval *pe, tl_unified_row **rows);

/* unified_perf_summary and, with o->kl_overlap, its `_kl_overlap` variant
 * (§7.10) from the same rows; each NULL when empty (kl_overlap may be NULL
 * when not wanted). is_recompute is a key when l->recompute is set. */
void tl_sheets_unified(tl_perf_eval *pe, const tl_launchers *l, tl_argtext *at, const tl_unified_opts *o,
                       tl_table **summary, tl_table **kl_overlap);

#endif
