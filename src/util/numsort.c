/* numsort.c — see numsort.h. */
#include "numsort.h"

#include <stdlib.h>
#include <string.h>

#include "vec.h"

enum { SHORT = 48 }; /* insertion sort up to this length */

static int cmp_f64(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The unsigned key ordering doubles as < does, with -0.0 as +0.0. */
static inline uint64_t f64_key(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    if (b == UINT64_C(0x8000000000000000)) b = 0; /* -0.0 */
    return (b >> 63) ? ~b : b | UINT64_C(0x8000000000000000);
}

static inline uint64_t i64_key(int64_t x) { return (uint64_t)x ^ UINT64_C(0x8000000000000000); }

/* Stable LSD radix sort of the n 8-byte items at base (doubles, or int64)
 * by their keys, 8 bits a pass; a pass whose byte is the same in every key
 * is skipped. Items are moved as bit patterns (memcpy: no aliasing). */
static void radix(void *base, size_t n, int is_f64)
{
    uint64_t *key = tl_xmalloc(2 * n * sizeof *key), *tmpk = key + n;
    uint64_t *bits = tl_xmalloc(2 * n * sizeof *bits), *tmpb = bits + n;
    size_t (*count)[256] = tl_xcalloc(8, sizeof *count);
    memcpy(bits, base, n * sizeof *bits);
    for (size_t i = 0; i < n; i++) {
        uint64_t k;
        if (is_f64) {
            double d;
            memcpy(&d, &bits[i], sizeof d);
            k = f64_key(d);
        } else {
            k = i64_key((int64_t)bits[i]);
        }
        key[i] = k;
        for (int p = 0; p < 8; p++) count[p][(k >> (8 * p)) & 0xff]++;
    }
    uint64_t *sk = key, *sv = bits, *dk = tmpk, *dv = tmpb;
    for (int p = 0; p < 8; p++) {
        size_t *c = count[p];
        int shift = 8 * p;
        if (c[(sk[0] >> shift) & 0xff] == n) continue; /* one byte value: the order stays */
        size_t pos = 0;
        for (int b = 0; b < 256; b++) {
            size_t k = c[b];
            c[b] = pos;
            pos += k;
        }
        for (size_t i = 0; i < n; i++) {
            size_t to = c[(sk[i] >> shift) & 0xff]++;
            dk[to] = sk[i];
            dv[to] = sv[i];
        }
        uint64_t *t = sk;
        sk = dk;
        dk = t;
        t = sv;
        sv = dv;
        dv = t;
    }
    memcpy(base, sv, n * sizeof *sv);
    free(count);
    free(bits);
    free(key);
}

void tl_sort_f64(double *v, size_t n)
{
    if (n < 2) return;
    for (size_t i = 0; i < n; i++) {
        if (v[i] != v[i]) {
            qsort(v, n, sizeof *v, cmp_f64);
            return;
        }
    }
    if (n <= SHORT) {
        for (size_t i = 1; i < n; i++) {
            double x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    radix(v, n, 1);
}

void tl_sort_i64(int64_t *v, size_t n)
{
    if (n < 2) return;
    if (n <= SHORT) {
        for (size_t i = 1; i < n; i++) {
            int64_t x = v[i];
            size_t j = i;
            for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    radix(v, n, 0);
}

/* The k-th smallest of v[0..n) (no NaN) moved to v[k], with v[0..k) <= v[k]
 * <= v(k..n): quickselect (median of three), falling back to a full sort
 * when the partitions shrink too slowly (adversarial input). */
static void select_f64(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1; /* inclusive */
    int budget = 64;
    while (hi > lo + SHORT) {
        if (--budget == 0) {
            radix(v + lo, hi - lo + 1, 1);
            return;
        }
        size_t mid = lo + (hi - lo) / 2;
        /* median of three into v[mid]; v[lo] <= v[mid] <= v[hi] */
        if (v[mid] < v[lo]) { double x = v[mid]; v[mid] = v[lo]; v[lo] = x; }
        if (v[hi] < v[lo]) { double x = v[hi]; v[hi] = v[lo]; v[lo] = x; }
        if (v[hi] < v[mid]) { double x = v[hi]; v[hi] = v[mid]; v[mid] = x; }
        double p = v[mid];
        size_t i = lo, j = hi;
        for (;;) { /* Hoare partition: [lo, j] <= p <= [j + 1, hi] */
            while (v[i] < p) i++;
            while (p < v[j]) j--;
            if (i >= j) break;
            double x = v[i];
            v[i] = v[j];
            v[j] = x;
            i++;
            j--;
        }
        if (k <= j) hi = j;
        else lo = j + 1;
    }
    for (size_t i = lo + 1; i <= hi; i++) { /* insertion sort of the rest */
        double x = v[i];
        size_t j = i;
        for (; j > lo && v[j - 1] > x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

void tl_stats_f64(double *v, size_t n, double *min, double *max, double *median)
{
    int plain = n > SHORT;
    double lo = v[0], hi = v[0];
    for (size_t i = 0; i < n && plain; i++) {
        uint64_t b;
        memcpy(&b, &v[i], sizeof b);
        if (v[i] != v[i] || b == UINT64_C(0x8000000000000000)) plain = 0;
        if (v[i] < lo) lo = v[i];
        if (v[i] > hi) hi = v[i];
    }
    if (!plain) { /* short, or the order of equal values matters: sorted */
        tl_sort_f64(v, n);
        if (min) *min = v[0];
        if (max) *max = v[n - 1];
        *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        return;
    }
    /* no NaN, no -0.0: equal values have equal bits, so any order with the
     * right values at the median's positions reads what the sort would */
    if (min) *min = lo;
    if (max) *max = hi;
    size_t k = n / 2;
    select_f64(v, n, k);
    if (n % 2) {
        *median = v[k];
        return;
    }
    double below = v[0]; /* the largest of v[0..k): the (k-1)-th smallest */
    for (size_t i = 1; i < k; i++)
        if (v[i] > below) below = v[i];
    *median = (below + v[k]) / 2;
}

/* Sorts idx[0..n) stably by key[idx[i]] (LSD radix, 8 bits a pass, passes
 * with one byte value skipped). */
static void radix_idx(size_t *idx, size_t n, const int64_t *key)
{
    uint64_t *k = tl_xmalloc(2 * n * sizeof *k), *tk = k + n;
    size_t *ti = tl_xmalloc(n * sizeof *ti);
    size_t (*count)[256] = tl_xcalloc(8, sizeof *count);
    for (size_t i = 0; i < n; i++) {
        k[i] = i64_key(key[idx[i]]);
        for (int p = 0; p < 8; p++) count[p][(k[i] >> (8 * p)) & 0xff]++;
    }
    uint64_t *sk = k, *dk = tk;
    size_t *si = idx, *di = ti;
    for (int p = 0; p < 8; p++) {
        size_t *c = count[p];
        int shift = 8 * p;
        if (c[(sk[0] >> shift) & 0xff] == n) continue;
        size_t pos = 0;
        for (int b = 0; b < 256; b++) {
            size_t m = c[b];
            c[b] = pos;
            pos += m;
        }
        for (size_t i = 0; i < n; i++) {
            size_t to = c[(sk[i] >> shift) & 0xff]++;
            dk[to] = sk[i];
            di[to] = si[i];
        }
        uint64_t *t = sk;
        sk = dk;
        dk = t;
        size_t *u = si;
        si = di;
        di = u;
    }
    if (si != idx) memcpy(idx, si, n * sizeof *idx);
    free(count);
    free(ti);
    free(k);
}

size_t *tl_order_by_keys(size_t n, const int64_t *k1, const int64_t *k2, const int64_t *k3, const int64_t *k4)
{
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    if (n < 2) return idx;
    const int64_t *keys[4] = {k4, k3, k2, k1}; /* least significant first */
    for (int j = 0; j < 4; j++)
        if (keys[j]) radix_idx(idx, n, keys[j]);
    return idx;
}

void tl_sort_rows_by_keys(void *rows, size_t n, size_t size, int64_t *k, int nkeys)
{
    size_t *o = tl_order_by_keys(n, k, nkeys > 1 ? k + n : NULL, nkeys > 2 ? k + 2 * n : NULL,
                                 nkeys > 3 ? k + 3 * n : NULL);
    char *sorted = tl_xmalloc((n ? n : 1) * size);
    for (size_t i = 0; i < n; i++) memcpy(sorted + i * size, (char *)rows + o[i] * size, size);
    memcpy(rows, sorted, n * size);
    free(sorted);
    free(o);
    free(k);
}
