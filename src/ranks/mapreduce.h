/* mapreduce.h — the per-rank pass of the multi-rank report as a map step
 * (docs/ranks.md "Map and reduce"): tl_ranks_rank_pass, which every path
 * runs on one rank trace (the direct `tracelens ranks`, `tracelens ranks
 * summarize`, each MPI process), the `summarize` command, the rank a file
 * name gives (tl_ranks_path_rank), and the interface by which another
 * driver (the MPI one, mpi_driver.c) hands the per-rank summaries to
 * `tracelens ranks`. Owns nothing after a call returns. */
#ifndef TL_RANKS_MAPREDUCE_H
#define TL_RANKS_MAPREDUCE_H

#include <pcre2.h>
#include <stddef.h>

#include "../trace/trace.h"
#include "../util/error.h"
#include "records.h"
#include "summary_file.h"

/* Loads the trace at path, resolves its rank (name_rank: from the file
 * name, -1 when unknown; checked against distributedInfo.rank, or taken from
 * it with from_distinfo), appends its collective records to cs, computes its
 * statistics, and fills info. Returns 0, or -1 with err set (info->rank is
 * then the rank when known, else -1). The trace is released before return. */
int tl_ranks_rank_pass(const char *path, long name_rank, int from_distinfo, const tl_load_opts *lo, tl_coll_set *cs,
                       tl_rank_info *info, tl_error *err);

/* The same pass for one rank in a set of its own, as a .tls image appended
 * to out (a failure becomes a failure image). Returns 0, or 1 when the pass
 * failed (err set; the failure is in the image). */
int tl_ranks_rank_image(const char *path, long name_rank, int from_distinfo, const tl_load_opts *lo, tl_sbuf *out,
                        tl_error *err);

/* The rank in path by the rank regex re (its named group "rank", else group
 * 1): in the file's base name, else anywhere in path; -1 when it finds none
 * or the number is above max. */
long tl_ranks_path_rank(pcre2_code *re, const char *path, long max);

/* `tracelens ranks summarize TRACE [--rank R] [--rank_regex RE] -o R.tls`
 * (argv after "summarize"). Exit status 0; 3 when the rank's pass failed
 * (the failure is recorded in the .tls); 1 when no .tls could be written; 2
 * usage. */
int tl_ranks_summarize_cli(int argc, char **argv);

/* A source of per-rank summaries other than loading the traces in this
 * process: after the files are resolved, `map` is called once with them
 * (paths, the ranks from their names or -1, and --rank-from distinfo); then
 * `take` gives file i's summary, as tl_ranks_rank_pass would have. */
typedef struct tl_ranks_source {
    int (*map)(struct tl_ranks_source *s, const char *const *paths, const long *name_ranks, size_t n,
               int from_distinfo, tl_error *err);
    int (*take)(struct tl_ranks_source *s, size_t i, const char *path, tl_coll_set *cs, tl_rank_info *info,
                tl_error *err);
    /* optional: stops what map started and frees it (also after an error) */
    void (*done)(struct tl_ranks_source *s);
    void *impl;
    int quiet; /* set by tl_ranks_cli_with before map: -q, no progress lines */
} tl_ranks_source;

/* A source that runs the per-rank pass of up to `jobs` traces at a time in
 * threads of this process (largest trace first; each thread loads with one
 * scan thread) while `take` decodes them in file order, so the report is the
 * same bytes as one trace at a time. Returns 0 (s not set up) when jobs or n
 * is below 2: then the caller runs the pass itself. */
int tl_ranks_thread_source(tl_ranks_source *s, int jobs, size_t n);

#endif
