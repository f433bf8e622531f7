/* numsort.h — sorting without comparator calls, faster than qsort: plain
 * arrays of doubles or int64 in place, and the order of items by up to four
 * int64 keys. A stable LSD radix sort on the values' ordered bit patterns
 * (insertion sort for short arrays); the result is what qsort's stable merge
 * sort gives with the comparator (x > y) - (x < y) (for doubles: -0.0 and
 * +0.0 are equal and keep their input order). Owns nothing (scratch memory
 * is allocated and freed per call). */
#ifndef TL_NUMSORT_H
#define TL_NUMSORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts v[0..n) ascending. An array holding a NaN, for which that comparator
 * is no order, is sorted by qsort with it, as before. */
void tl_sort_f64(double *v, size_t n);

/* Sorts v[0..n) ascending. */
void tl_sort_i64(int64_t *v, size_t n);

/* The order statistics of v[0..n) (n >= 1) that tl_sort_f64 followed by a
 * read of v[0], v[n - 1] and the median would give, bit for bit: *min,
 * *max and *median ((v[n/2 - 1] + v[n/2]) / 2 for even n); min or max may
 * be NULL. v is reordered (a partial sort, O(n) on average): what is in it
 * afterwards is unspecified. Arrays holding a NaN or a -0.0, whose sorted
 * order the values alone do not decide, are sorted with tl_sort_f64. */
void tl_stats_f64(double *v, size_t n, double *min, double *max, double *median);

/* The stable order of n items by the keys (k1[i], k2[i], k3[i], k4[i])
 * ascending, k1 first (any key may be NULL: not a key): a new array of the
 * item numbers 0..n-1 in that order (the caller frees). Items with equal
 * keys keep their order, as qsort's merge sort does with a comparator of
 * those keys. */
size_t *tl_order_by_keys(size_t n, const int64_t *k1, const int64_t *k2, const int64_t *k3, const int64_t *k4);

/* Reorders n rows of `size` bytes in place by their keys (row i's are
 * k[i], k[n + i], ... k[(nkeys - 1) n + i], most significant first; 1 to 4
 * of them), equal keys keeping their order; k is freed. */
void tl_sort_rows_by_keys(void *rows, size_t n, size_t size, int64_t *k, int nkeys);

#endif
