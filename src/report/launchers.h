/* launchers.h — the kernel-launcher table (perf-report spec §5) and the
 * per-event text columns every op sheet shares.
 * Owns: the launcher list (each launcher's direct kernels sorted by ts, its
 * direct and subtree busy times) and the text columns' string memo (the
 * arg text itself is the trace layer's: trace/argtext.h). Built from an
 * immutable trace; read-only after. */
#ifndef TL_LAUNCHERS_H
#define TL_LAUNCHERS_H

#include <stdint.h>

#include "../table/table.h"
#include "../trace/argtext.h"
#include "../trace/trace.h"
#include "../util/hashmap.h"
#include "../util/sbuf.h"
#include "overlap.h"

typedef struct tl_launcher {
    uint32_t uid;          /* the launching op (or runtime call) */
    uint32_t first_k;      /* offset of its direct kernels in tl_launchers.kernels */
    uint32_t nk;
    int64_t direct_ns;     /* busy time of the direct kernels */
    int64_t subtree_ns;    /* busy time of all GPU events of its subtree */
    const char *category;  /* categorize(event) with these kernels */
} tl_launcher;

/* The per-event text columns every raw op table carries: process_name,
 * process_label, thread_name and the four shape args (tuple form, or list
 * form for the perf sheets' *_first columns). */
typedef struct tl_event_cols {
    size_t pn, pl, tn, dims, type, strides, conc;
    int list_form;
    tl_str_memo memo; /* argtext ids -> the table's ids (owned) */
} tl_event_cols;
void tl_event_cols_add(tl_table *t, tl_event_cols *c, int list_form);
void tl_event_cols_set(tl_table *t, tl_event_cols *c, size_t row, tl_argtext *at, uint32_t ev);
void tl_event_cols_free(tl_event_cols *c);

/* The per-report extra columns of the raw op tables, each added only when
 * its option is on: is_recompute (--detect_recompute), and
 * overlapping_kernel_names, overlap_pct and "__ovl" (--include_overlap_info;
 * "__ovl" holds the row's index into its tl_ovinfo list, standing for
 * overlapping_kernels_details). */
typedef struct tl_extra_cols {
    size_t rc, ovn, ovp, ovl;
} tl_extra_cols;
void tl_extra_cols_add(tl_table *t, tl_extra_cols *c, int recompute, int overlap);
/* Sets the overlap fields of a row from inf (names None when it has none). */
void tl_extra_cols_set_overlap(tl_table *t, const tl_extra_cols *c, size_t row, const tl_event_store *es,
                               const tl_ovpool *pool, const tl_ovinfo *inf, int64_t index, tl_sbuf *buf);

/* Op categories memoized per (name, first kernel name) pair of names ids:
 * tl_extension_categorize reads nothing else, and the pairs repeat over
 * the events. Per call (not shared between threads). */
typedef struct tl_category_memo {
    const struct tl_extension *ext;
    tl_map index;        /* (name id, first kernel name id + 1 or 0) -> index in cats */
    const char **cats;
    size_t n, cap;
} tl_category_memo;
void tl_category_memo_init(tl_category_memo *m, const struct tl_extension *ext);
void tl_category_memo_free(tl_category_memo *m);
/* tl_extension_categorize(ext, name of ev, name of first_kernel), first_kernel
 * TL_NOUID for none. */
const char *tl_category_of(tl_category_memo *m, const tl_event_store *es, uint32_t ev, uint32_t first_kernel);

typedef struct tl_launchers {
    tl_launcher *v;
    size_t n;
    uint32_t *kernels;     /* all direct kernels, grouped per launcher */
    uint32_t *index_of;    /* per event uid: its launcher index, or UINT32_MAX */
    /* per-report extras (tl_launchers_set_extras), NULL when the option is off */
    const uint8_t *recompute;    /* --detect_recompute: per-event flag (borrowed) */
    const tl_overlaps *overlaps; /* --include_overlap_info: the sweep (borrowed) */
    tl_ovinfo *ov;               /* per launcher: its overlap fields (owned) */
    tl_ovpool ovpool;            /* their details (owned) */
    const struct tl_extension *ext; /* the report's extension (categories, models), NULL: none (borrowed) */
} tl_launchers;

/* The launchers, with the extension's category overrides (ext may be NULL); l->ext = ext. */
void tl_launchers_build_ext(const tl_trace *t, const struct tl_extension *ext, tl_launchers *out);
void tl_launchers_free(tl_launchers *l);
/* Attaches the report's recompute flags and overlap sweep (either may be
 * NULL) and computes each launcher's overlap fields (§7.10, over its direct
 * kernels in kernel-UID order). Call before sharing l between threads. */
void tl_launchers_set_extras(tl_launchers *l, const tl_trace *t, const uint8_t *recompute, const tl_overlaps *ov);

/* A list of GPU event uids (one row's kernels, sorted by ts). */
typedef struct tl_klist {
    const uint32_t *uids;
    uint32_t n;
} tl_klist;

/* One entry of a kernel-stats row: the event shown (name, stream), the
 * duration the statistics are over, and (overlap details) its pct. */
typedef struct tl_kitem {
    uint32_t uid;
    double dur_us;
    double pct;
} tl_kitem;
typedef struct tl_krow {
    const tl_kitem *v;
    uint32_t n;
} tl_krow;

/* The kernel-stats summary (§7.4) of a group's rows of items (with_pct: an
 * 'overlap_pct' key after 'stream', the overlap details' variant). */
int tl_kstats_render(const tl_trace *t, const tl_krow *rows, size_t n, int trunc, int with_pct, tl_sbuf *out);

/* The kernel-stats summary (§7.4) of a group's kernel lists, as the Python
 * list-of-dicts text; trunc = 1 gives trunc_kernel_details. Returns 0 when
 * the cell is empty (trunc of an empty summary). */
int tl_kernel_stats_text(const tl_trace *t, const tl_klist *rows, size_t n, int trunc, tl_sbuf *out);

/* The kernel positions of a group's summary in summary order (into the
 * template row's list); returns the template row index (-1: no kernels).
 * The caller frees *order. */
long tl_kernel_stats_order(const tl_trace *t, const tl_klist *rows, size_t n, size_t **order, size_t *m);

/* The raw launcher table: one row per launcher in launcher order, with the
 * columns of §5 (kernel_details replaced by the hidden "__klist" index:
 * the launcher index). With the extras: is_recompute, and the overlap
 * fields overlapping_kernel_names, overlap_pct and "__ovl" (the launcher
 * index into l->ov, standing for overlapping_kernels_details). */
tl_table *tl_launcher_table(const tl_trace *t, const tl_launchers *l, tl_argtext *at);

/* Adds the inference report's module columns (inference-and-comparative
 * spec §1.6, --group_by_parent_module) to a launcher table built from l:
 * "call_stack", the Python list repr of [launcher name] + the names of its
 * ancestors containing "nn.Module" (innermost first, each cut to 256
 * characters + ".."), and "parent_module", its second element with every
 * "_<digits>" removed ("NA" when there is none). */
void tl_launcher_table_add_modules(tl_table *tb, const tl_trace *t, const tl_launchers *l);

#endif
