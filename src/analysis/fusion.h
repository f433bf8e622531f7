/* fusion.h — the tree walks of the standalone fusion-candidate extraction
 * (analysis-layer spec §3.6 steps 1-2): the module pass over every tree
 * node (instances grouped by strip_module_index(name)) and the sibling pass
 * over the unified perf ops (single-kernel ops grouped by parent). Owns the
 * records, their kernel/sequence lists and the base-name pool; built from an
 * immutable trace by one thread, read-only afterwards. The kernel types,
 * candidate filters, post-processing and JSON are Lua
 * (lua/tracelens/fusion.lua). */
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

/* One module base (step 1). */
typedef struct tl_fusion_module {
    uint32_t uid;          /* the first instance */
    uint32_t base;         /* id in tl_fusion.bases */
    uint32_t instances;
    tl_fusion_time total;  /* kernel-category GPU events of every instance */
    size_t k_first, nk;    /* the first instance's kernels: kernels[k_first .. k_first + nk) */
    size_t eligible;       /* of those, the fusion-eligible ones */
    int has_fused;         /* some kernel name has an already-fused pattern */
} tl_fusion_module;

/* One op of a sibling sequence. */
typedef struct tl_fusion_op {
    uint32_t ev;           /* the unified op (a synthetic op: its parent event) */
    uint32_t kernel;       /* its one kernel */
    int synthetic;         /* "<ev name>-><kernel name> (Synthetic Op)" */
} tl_fusion_op;

/* One sibling-sequence base (step 2). */
typedef struct tl_fusion_sequence {
    uint32_t parent;       /* the first instance's parent */
    uint32_t base;         /* id in tl_fusion.bases */
    uint32_t instances;
    tl_fusion_time total;
    size_t first, n;       /* the first instance's ops: ops[first .. first + n) */
} tl_fusion_sequence;

typedef struct tl_fusion {
    tl_strpool bases;                    /* strip_module_index(name) texts */
    TL_VEC(tl_fusion_module) modules;    /* recorded bases (>= 2 kernels), first-seen order */
    TL_VEC(uint32_t) kernels;
    TL_VEC(tl_fusion_sequence) sequences; /* parents with >= 2 single-kernel ops, first-seen base order */
    TL_VEC(tl_fusion_op) ops;
} tl_fusion;

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

#endif
