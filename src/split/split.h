/* split.h — the trace splitter (inference-and-comparative spec §1.7):
 * picks iterations of a serving trace (every one, a range, the steady-state
 * windows, or the prefill/decode phase runs), extracts each selection's
 * events into a new gzip JSON trace (the trace's top-level keys and a new
 * traceEvents re-serialised from the store) and writes the summary,
 * execution_details.json / .csv.
 *
 * Reuses iteration.h for the roots (annotation tiers, then the generic
 * repeating block), the per-step details, the steady-state regions and
 * window and the phase counts. Owns nothing after tl_split_run returns;
 * every file is written atomically (outfile.h), and every selection is
 * planned before the first file is written, so an invalid option writes
 * nothing. */
#ifndef TL_SPLIT_H
#define TL_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/critical_path.h"
#include "../trace/iteration.h"
#include "../trace/trace.h"
#include "../util/error.h"
#include "../util/sbuf.h"

typedef struct tl_split_opts {
    const char *out_dir;
    int range;               /* -i N or START:END given (else all) */
    size_t start, end;       /* the range, end exclusive, before clamping */
    int store_single;        /* --store-single-iteration */
    int find_steady_state;   /* --find-steady-state */
    int divide_phases;       /* --divide-phases (wins over --find-steady-state) */
    size_t num_steps;        /* --num-steps (>= 1) */
    int have_conc, have_osl, have_r;
    int64_t conc;
    double osl, r;
    int quiet;               /* no per-file lines on stdout */
} tl_split_opts;

/* Splits t (loaded from trace_path; its basename names the outputs).
 * Returns 0, or -1 with err set (no iteration roots, an empty range,
 * CONC/OSL/R giving no ratio, a write error). *n_written (may be NULL)
 * gets the number of trace files written. */
int tl_split_run(const tl_trace *t, const char *trace_path, const tl_split_opts *o, size_t *n_written,
                 tl_error *err);

/* The whole trace re-serialised (the top-level keys, every event of es in
 * order) with "critical": 1 added to the args of each event flagged in
 * critical (NULL: none) and the flow events flows[0..n_flows) appended:
 * the critical-path overlay (critical_path.h, docs/critical-path.md).
 * Written gzip, atomically, to path. */
int tl_split_write_overlay(const tl_event_store *es, const uint8_t *critical, const tl_cp_flow *flows,
                           size_t n_flows, const char *path, tl_error *err);

/* The file's base name for outputs: the basename with ".pt.trace",
 * ".json.gz" and ".json" removed (every occurrence, in that order). */
char *tl_split_base_name(const char *path);
/* Appends s as one CSV cell (quoted when it holds , " or a line break). */
void tl_split_csv_cell(tl_sbuf *b, const char *s);

/* Shared with the block matcher (match.c): the splitter's event index of
 * one trace, the extraction of a list of roots into a gzip JSON trace, and
 * JSON string text. */
typedef struct tl_split_index tl_split_index;
tl_split_index *tl_split_index_new(const tl_event_store *es);
void tl_split_index_free(tl_split_index *ix);
/* Extracts roots[sel[0..n)] (§1.7 extract_iteration) and writes the trace
 * to path atomically; *event_count gets the number of events written. */
int tl_split_write(const tl_event_store *es, const tl_split_index *ix, const tl_iteration *roots, const size_t *sel,
                   size_t n, const char *path, size_t *event_count, tl_error *err);

#endif
