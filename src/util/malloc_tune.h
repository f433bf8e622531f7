/* malloc_tune.h — glibc malloc's settings for tracelens' two kinds of work
 * (performance only, never results). One large trace: the tunables the
 * command re-executes itself with (TL_MALLOC_TUNABLES_ONE_TRACE: huge pages,
 * and a fixed 1 MiB mmap threshold, so that large scratch arrays go back to
 * the kernel once freed and the peak stays low). Many rank traces one after
 * another (the per-rank stage of the multi-rank report): freed buffers are
 * kept for the next trace instead of being given back and faulted in (and
 * zeroed) again. Settings are the process's (malloc's own state); nothing
 * here holds any. */
#ifndef TL_MALLOC_TUNE_H
#define TL_MALLOC_TUNE_H

/* GLIBC_TUNABLES for the commands that read one or two large traces. */
#define TL_MALLOC_TUNABLES_ONE_TRACE "glibc.malloc.hugetlb=1:glibc.malloc.mmap_threshold=1048576"
/* ... and for `tracelens ranks` (mmap threshold left dynamic). */
#define TL_MALLOC_TUNABLES_RANKS "glibc.malloc.hugetlb=1"

/* on: keep freed blocks of up to 32 MiB for reuse (mmap threshold 32 MiB,
 * trim threshold 64 MiB: what glibc's dynamic threshold reaches), while
 * many rank traces are read. off: back to the one-trace settings, when the
 * process runs with TL_MALLOC_TUNABLES_ONE_TRACE (else nothing: a user's
 * GLIBC_TUNABLES, or `ranks`, keep theirs). */
void tl_malloc_many_traces(int on);

#endif
