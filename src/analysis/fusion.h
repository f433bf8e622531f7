/* fusion.h — the tree walks of the fusion-candidate extraction
 * (analysis-layer spec §3.6): standalone steps 1-2, the module pass over
 * every tree node (instances grouped by strip_module_index(name)) and the
 * sibling pass over the unified perf ops (single-kernel ops grouped by
 * parent), each record one base and one kernel-name sequence ([FIX]: the
 * reference keys by base alone, docs/compat.md); comparative Case A, the nodes whose trace-1 kernels map through
 * TraceDiff's diff_stats rows to fewer trace-2 rows. Owns the records, their
 * kernel/sequence/row lists and the base-name pool; built from an immutable
 * trace by one thread, read-only afterwards. The kernel types, candidate
 * gates, post-processing and JSON are Lua (lua/tracelens/fusion/). */
#ifndef TL_ANALYSIS_FUSION_H
#define TL_ANALYSIS_FUSION_H

#include <stddef.h>
#include <stdint.h>

#include "../report/sheets_perf.h"
#include "../trace/trace.h"
#include "../util/strpool.h"
#include "../util/vec.h"

/* A sum of kernel durations, kept as the reference adds them. */
typedef struct tl_fusion_time {
    double us;      /* per instance Σ dur (µs, list order), instances added in trace order */
    int64_t ns;     /* exact */
    int all_int;    /* every dur was a JSON integer: the reference's total is an int */
} tl_fusion_time;

/* One module base and kernel-name sequence (step 1). */
typedef struct tl_fusion_module {
    uint32_t uid;          /* the first instance */
    uint32_t base;         /* id in tl_fusion.bases */
    uint32_t instances;
    tl_fusion_time total;  /* kernel-category GPU events of every instance */
    size_t k_first, nk;    /* the first instance's kernels: kernels[k_first .. k_first + nk) */
    size_t eligible;       /* of those, the fusion-eligible ones */
    int has_fused;         /* some kernel name has an already-fused pattern */
    size_t i_first, ni;    /* every instance's node, trace order: inst[i_first .. i_first + ni) */
} tl_fusion_module;

/* One op of a sibling sequence. */
typedef struct tl_fusion_op {
    uint32_t ev;           /* the unified op (a synthetic op: its parent event) */
    uint32_t kernel;       /* its one kernel */
    int synthetic;         /* "<ev name>-><kernel name> (Synthetic Op)" */
} tl_fusion_op;

/* One sibling-sequence base and kernel-name sequence (step 2). */
typedef struct tl_fusion_sequence {
    uint32_t parent;       /* the first instance's parent */
    uint32_t base;         /* id in tl_fusion.bases */
    uint32_t instances;
    tl_fusion_time total;
    size_t first, n;       /* the first instance's ops: ops[first .. first + n) */
    size_t i_first;        /* every instance's kernel count (instances of them, trace order):
                            * inst_len[i_first .. i_first + instances) */
    size_t k_first;        /* and their kernels, instance after instance: inst_kernels[k_first ..) */
} tl_fusion_sequence;

typedef struct tl_fusion {
    tl_strpool bases;                    /* strip_module_index(name) texts */
    TL_VEC(tl_fusion_module) modules;    /* records (>= 2 kernels), first-seen order */
    TL_VEC(uint32_t) kernels;
    TL_VEC(tl_fusion_sequence) sequences; /* parents with >= 2 single-kernel ops, first-seen order */
    TL_VEC(tl_fusion_op) ops;
    /* Every instance of a record, so a candidate's GPU events can be told
     * from another's (overlapping candidates, lua/tracelens/fusion/overlap.lua):
     * the instance nodes of the modules, the kernels of each instance of the
     * sequences (each sibling op is in one group: at most one entry per op). */
    TL_VEC(uint32_t) inst;
    TL_VEC(uint32_t) inst_len;
    TL_VEC(uint32_t) inst_kernels;
} tl_fusion;

/* The diff_stats rows as the comparative walk reads them (one entry per
 * row, 0-based): a row without an LCA id is ignored. */
enum { TL_FUSION_SRC_OTHER, TL_FUSION_SRC_T1, TL_FUSION_SRC_T2 };
typedef struct tl_fusion_diff_rows {
    size_t n;
    const double *lca;      /* lowest_common_ancestor_id as a float; NaN = missing */
    const uint8_t *source;  /* TL_FUSION_SRC_* */
    const uint32_t *uid;    /* trace-1 rows: gpu_op_uid, an event of the trace; TL_NOUID = none */
} tl_fusion_diff_rows;

/* One node of the comparative walk (Case A count gate passed). */
typedef struct tl_fusion_diff_node {
    uint32_t uid;          /* the trace-1 node */
    size_t t1_first, n1;   /* the rows of its mapped GPU events: t1_rows[t1_first .. t1_first + n1) */
    size_t t2_first, n2;   /* the trace-2 rows of their LCA ids: t2_rows[t2_first .. t2_first + n2) */
} tl_fusion_diff_node;

typedef struct tl_fusion_diff {
    TL_VEC(tl_fusion_diff_node) nodes;   /* file order */
    TL_VEC(uint32_t) t1_rows;            /* per node: the row of each mapped GPU event (the last row with its
                                          * UID), gpu_events order, first seen */
    TL_VEC(uint32_t) t2_rows;            /* per node: ascending distinct LCA id, rows in row order */
} tl_fusion_diff;

/* strip_module_index: drop a leading "nn.Module: ", then one trailing
 * "_<digits>". Returns the length of the base, which starts at *start. */
size_t tl_fusion_base(const char *name, const char **start);

/* Fusion eligibility of a kernel name (no excluded and no already-fused
 * pattern) and the already-fused test alone. */
int tl_fusion_eligible(const char *kernel_name);
int tl_fusion_is_fused(const char *kernel_name);

void tl_fusion_init(tl_fusion *f);
void tl_fusion_free(tl_fusion *f);
/* Step 1 over every event of the trace. */
void tl_fusion_modules(tl_fusion *f, const tl_trace *t);
/* Step 2 over the unified perf ops (tl_unified_collect). */
void tl_fusion_siblings(tl_fusion *f, const tl_trace *t, const tl_unified_row *rows, size_t n);

/* Comparative Case A (§3.6) without its rules: every event in file order
 * (but GPU and runtime/driver events) with n1 mapped GPU events, 2 <= n1 <=
 * max_n1, where a GPU event is mapped when a trace-1 row has its UID; n2 is
 * the number of trace-2 rows over the distinct LCA ids of those rows
 * (compared as floats). Only nodes with n1 > n2 are kept: the others cannot
 * pass gate G1. The walk stops a node after max_n1 + 1 hits, so it costs
 * O(events x max_n1). */
void tl_fusion_diff_init(tl_fusion_diff *d);
void tl_fusion_diff_free(tl_fusion_diff *d);
void tl_fusion_diff_nodes(tl_fusion_diff *d, const tl_trace *t, const tl_fusion_diff_rows *rows, size_t max_n1);

#endif
