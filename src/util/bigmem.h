/* bigmem.h — allocation of the large per-event columns.
 * Blocks come straight from mmap with transparent huge pages requested
 * (madvise), and grow with mremap: filling multi-hundred-MB columns then
 * costs one page fault per 2 MiB instead of one per 4 KiB. Each block keeps
 * its mapped size in a small header; nothing global. */
#ifndef TL_BIGMEM_H
#define TL_BIGMEM_H

#include <stddef.h>

/* Like realloc (p may be NULL); aborts on failure. Contents are kept;
 * new memory is zero-filled. */
void *tl_big_realloc(void *p, size_t bytes);
void tl_big_free(void *p);
/* Gives back to the kernel the pages of p past its first `used` bytes
 * (the unused capacity of a grown column, and the rest of the transparent
 * huge page its data ends in); they read as zeros again if touched. */
void tl_big_trim(void *p, size_t used);
/* Gives back the pages of p's first `done` bytes, which the caller has
 * finished reading (a column consumed front to back); they read as zeros
 * if touched again. The block keeps its size and can still be freed. */
void tl_big_release_front(void *p, size_t done);

#endif
