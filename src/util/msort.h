/* msort.h — a stable merge sort of index arrays with a context-carrying
 * comparator (qsort has none in C11, and the core keeps no global state). */
#ifndef TL_MSORT_H
#define TL_MSORT_H

#include <stddef.h>

typedef int (*tl_idx_cmp)(void *ctx, size_t a, size_t b);

/* Sorts idx[0..n) stably by cmp. */
void tl_msort(size_t *idx, size_t n, tl_idx_cmp cmp, void *ctx);

/* A new array of 0..n-1 sorted stably by cmp (never NULL; the caller frees). */
size_t *tl_msort_order(size_t n, tl_idx_cmp cmp, void *ctx);

/* A tl_idx_cmp over an int64_t array ctx (timestamps): by value. */
int tl_idx_cmp_i64(void *ctx, size_t a, size_t b);

#endif
