/* trace_diff.h — TraceDiff: the alignment of two traces' call trees into one
 * merged tree, and what is read off it (inference-and-comparative spec §2.2):
 * merged_tree_output.txt, the per-GPU-op diff_stats rows with their lowest
 * common ancestors, diff_stats_unique_args_summary and the cpu_op maps; and
 * the seven TraceDiff columns of a report's unified_perf_summary (§2.3).
 *
 * Owns: the merged tree (nodes, child lists, roots), the rows and the tables
 * and texts made from them. Reads the two traces only. The reference
 * re-parents the children of a top root when it skips a single-child chain
 * under it (§2.2 "Roots"); tracelens keeps that re-parenting in this
 * structure (an overlay consulted by every walk here), never in the shared,
 * immutable traces. A tl_trace_diff is built by one thread and read-only
 * afterwards. */
#ifndef TL_TRACE_DIFF_H
#define TL_TRACE_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "../table/table.h"
#include "../trace/trace.h"
#include "../util/error.h"
#include "../util/hashmap.h"
#include "../util/sbuf.h"

enum { TL_MERGED_COMBINED = 0, TL_MERGED_TRACE1 = 1, TL_MERGED_TRACE2 = 2 };

/* One node of the merged tree; its merged_id is its index (pre-order). */
typedef struct tl_merged_node {
    uint32_t uid1, uid2;    /* the events shown (after a list collapse); TL_NOUID when absent */
    uint32_t key1, key2;    /* the pair the node was created for (merged_uid_map, memo) */
    uint32_t kid_off, nkids; /* children: kids[kid_off .. kid_off + nkids) */
    uint8_t type;           /* TL_MERGED_* */
} tl_merged_node;

/* One diff_stats row before it becomes a Table cell. */
typedef struct tl_diff_row {
    uint32_t gpu;       /* gpu_op_uid */
    uint32_t cpu_op;    /* the first cpu_op above it */
    uint32_t lca;       /* merged_id of its lowest common ancestor; UINT32_MAX when none */
    uint32_t lca_name;  /* id in tl_trace_diff.names; UINT32_MAX when none */
    int64_t busy_ns;    /* busy time of the LCA's GPU events on this row's side */
    uint8_t src;        /* 0: trace1, 1: trace2 */
} tl_diff_row;

/* The reference's top-root re-parenting, per trace (see above). */
typedef struct tl_diff_overlay {
    tl_map kids_of;     /* R -> C: R's children are C's */
    tl_map parent_of;   /* C -> R: the parent of C's children is R */
    uint64_t *kids_bits, *parent_bits; /* per event: a key of kids_of / parent_of
                                          (every walk asks; few are) */
} tl_diff_overlay;

typedef struct tl_trace_diff {
    const tl_trace *t[2];
    tl_diff_overlay ov[2];
    tl_merged_node *nodes;
    size_t n_nodes;
    uint32_t *kids;
    size_t n_kids;
    uint32_t *roots;    /* merged ids of the paired top roots */
    size_t n_roots;
    uint32_t *first_of[2]; /* per side, uid -> first merged node created for it (UINT32_MAX) */
    uint32_t *next_of[2];  /* per merged node: the next one created for the same key uid */

    tl_diff_row *rows;  /* every row, trace1 and trace2 (identical traces included) */
    size_t n_rows;
    tl_strpool names;   /* LCA names */
    int identical;      /* the trace1 and trace2 rows are equal (or there are none) */

    tl_table *diff_stats;    /* the reference's diff_stats_df after generate_tracediff_report; NULL when empty */
    tl_table *summary;       /* diff_stats_unique_args_summary; NULL when empty */
    char *cpu_op_map_trace1; /* JSON texts as json.dump(indent=2, ensure_ascii=False) writes them; */
    char *cpu_op_map_trace2; /* NULL when there is no summary (the reference writes no file) */
    char *cpu_op_map;

    /* matching statistics (for tests and timing) */
    size_t wf_runs, wf_memo_hits, disambiguations;
    double seconds_merge, seconds_stats, seconds_tables; /* wall time of the three stages */
} tl_trace_diff;

/* Runs TraceDiff(t1 baseline, t2 variant) and generate_tracediff_report():
 * the merged tree, the rows, the tables and the JSON texts (flags:
 * TL_DIFF_NO_SUMMARY skips the unique-args summary and the cpu_op maps, which
 * a report does not use). Returns 0, or -1 with err set (a trace without
 * cpu_op roots, as the reference's ValueError) and nothing to free. */
enum { TL_DIFF_NO_SUMMARY = 1 };
int tl_trace_diff_run(tl_trace_diff *d, const tl_trace *t1, const tl_trace *t2, int flags, tl_error *err);
void tl_trace_diff_free(tl_trace_diff *d);
/* The bytes of d's own arrays and texts (the merged tree, the per-event
 * indexes, the rows, the cpu_op maps; not the diff_stats Tables): what a
 * task's memory cap is charged for the diff it holds. */
size_t tl_trace_diff_bytes(const tl_trace_diff *d);

/* merged_tree_output.txt (lines end with "\n"); prune_non_gpu drops the roots
 * whose events are both off the GPU path. Returns 0, or -1 with err set and
 * nothing written when the text would be over 2 GiB (every line is indented
 * by its depth: a chain of 150,000 nested ops would make 45 GB). */
int tl_trace_diff_tree_text(const tl_trace_diff *d, int prune_non_gpu, tl_sbuf *out, tl_error *err);

/* merged_uid_map[(tree, uid)] (tree 1 or 2): the other trace's UID, -1 when
 * the node is one trace's only, -2 when the UID is not in the merged tree. */
int64_t tl_trace_diff_other_uid(const tl_trace_diff *d, int tree, uint32_t uid);

/* Writes the reference's files into dir (created): merged_tree_output.txt,
 * diff_stats.csv, diff_stats_unique_args_summary.csv, cpu_op_map_trace1.json,
 * cpu_op_map_trace2.json, cpu_op_map.json (each only when it has content, as
 * print_tracediff_report_files). */
int tl_trace_diff_write(const tl_trace_diff *d, const char *dir, int prune_non_gpu, tl_error *err);

/* §2.3: inserts the seven TraceDiff columns after "Kernel Time (µs)_sum" of
 * unified_perf_summary. kernel_row maps trace 1's GPU event UIDs to summary
 * rows (UINT32_MAX: none; sheets_perf.h). Returns 1 when the columns were
 * added (0: no summary row has an LCA, and the sheet is left alone, as the
 * reference does). */
int tl_trace_diff_enrich_unified(const tl_trace_diff *d, tl_table *summary, const uint32_t *kernel_row);

/* Name normalisation (exposed for the unit tests): writes
 * _normalize_name_for_comparison(name, strip_details) into out. */
void tl_diff_normalize_name(const char *name, size_t len, int strip_details, tl_sbuf *out);

#endif
