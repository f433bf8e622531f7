/* resolve.h — which file holds which rank (multi-rank.md §2, docs/ranks.md
 * "Finding the rank traces"): a folder of rank<i>_trace.json[.gz], a
 * pattern with one '*' for the rank, or a glob whose files get their rank
 * from a regex on the name. Shared by `tracelens ranks` (cli.c) and
 * tl.ranks (the orchestrator's --ranks). Owns the lists it fills
 * (tl_rank_files_free); nothing after a call returns. */
#ifndef TL_RANKS_RESOLVE_H
#define TL_RANKS_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

typedef struct tl_rank_file {
    char *path;
    long rank; /* from the name; -1 when unknown (--rank-from distinfo) */
} tl_rank_file;

typedef struct tl_rank_files {
    tl_rank_file *v;
    size_t n, cap;
} tl_rank_files;

void tl_rank_files_add(tl_rank_files *l, const char *path, long rank);
void tl_rank_files_free(tl_rank_files *l);

/* Exactly one of dir, pattern, glob. */
typedef struct tl_ranks_input {
    const char *dir, *pattern, *glob;
    const char *rank_regex; /* glob: the rank's regex (NULL: TL_RANK_REGEX_DEFAULT) */
    long world;             /* --world_size, -1 when not given */
    int allow_missing;      /* dir/pattern with world: a missing file is skipped, not an error */
    int from_distinfo;      /* glob: files without a rank in the name are kept (rank -1) */
} tl_ranks_input;

#define TL_RANK_REGEX_DEFAULT "rank[\\[\\-_/]?(?P<rank>\\d+)"

/* Appends the rank files to out and sets *world (the given one; a glob
 * without it: the highest rank + 1; else -1). Returns 0, or -1 with err set
 * (one line without the "tracelens: " prefix: nothing found, a file
 * expected but absent, a bad regex). A rank a glob matches twice keeps the
 * first path in sorted order, with a warning on stderr. */
int tl_ranks_resolve(const tl_ranks_input *in, tl_rank_files *out, long *world, tl_error *err);

/* The ranks 0..world-1 without present[r], as "1, 3, 7" (", ..." once
 * buf is nearly full) into buf; returns how many there are. */
size_t tl_ranks_missing_list(const uint8_t *present, long world, char *buf, size_t cap);

/* DIR/rank<i>_trace.json when it exists, else DIR/rank<i>_trace.json.gz
 * (the caller frees it). */
char *tl_ranks_dir_file(const char *dir, long i);

/* For the error of a DIR without rank<i>_trace files: when DIR holds trace
 * files named otherwise (*.json, *.json.gz), " (DIR holds N trace files
 * named otherwise, e.g. NAME: give them with --trace_glob and their pattern,
 * the rank from --rank_regex)", else "". Written into buf (cap bytes,
 * truncated). */
void tl_ranks_dir_hint(const char *dir, char *buf, size_t cap);

#endif
