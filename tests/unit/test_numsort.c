/* test_numsort.c — tl_sort_f64 / tl_sort_i64 (src/util/numsort.h) against a
 * stable insertion sort with the comparator (x > y) - (x < y), compared
 * bit for bit (so -0.0 and +0.0 must keep their input order): every length
 * 0..300 and some up to 5000, values with many ties, both zeros,
 * infinities, subnormals and the int64 extremes; arrays with a NaN against
 * qsort with that comparator; tl_order_by_keys against qsort by the keys
 * and the item number (the stable order); tl_stats_f64 (min, max, median)
 * against the same reads of the sorted array, bit for bit, on those arrays
 * and on sorted, reversed, constant and organ-pipe ones. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/numsort.h"

static int failures, checks;

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void ref_f64(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

static void ref_i64(int64_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        int64_t x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

static int cmp_f64(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double value(int kind)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, 5e-324, -5e-324, 1e308, 2.5};
    switch (kind) {
    case 0: return special[next() % 10];
    case 1: return (double)(next() % 7) - 3.0; /* many ties, zeros of both signs below */
    case 2: return ((double)(int64_t)next()) / 1024.0;
    default: return (double)(next() % 100000) / 1000.0; /* durations in µs */
    }
}

static void one_f64(size_t n, int kind, int with_nan)
{
    double *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        a[i] = value(kind);
        if (kind == 1 && a[i] == 0.0 && (next() & 1)) a[i] = -0.0;
    }
    if (with_nan && n) a[next() % n] = NAN;
    memcpy(b, a, n * sizeof *a);
    tl_sort_f64(a, n);
    if (with_nan) qsort(b, n, sizeof *b, cmp_f64);
    else ref_f64(b, n);
    checks++;
    if (n && memcmp(a, b, n * sizeof *a) != 0) {
        failures++;
        fprintf(stderr, "tl_sort_f64: n=%zu kind=%d nan=%d differs\n", n, kind, with_nan);
    }
    free(a);
    free(b);
}

static void one_i64(size_t n, int kind)
{
    int64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next();
        a[i] = kind == 0 ? (int64_t)r : kind == 1 ? (int64_t)(r % 5) - 2 : (r & 1) ? INT64_MIN : INT64_MAX - (int64_t)(r % 3);
    }
    memcpy(b, a, n * sizeof *a);
    tl_sort_i64(a, n);
    ref_i64(b, n);
    checks++;
    if (n && memcmp(a, b, n * sizeof *a) != 0) {
        failures++;
        fprintf(stderr, "tl_sort_i64: n=%zu kind=%d differs\n", n, kind);
    }
    free(a);
    free(b);
}

/* tl_stats_f64 against min/max/median read from the sorted copy (the
 * reference sort of one_f64), compared as bits. shape: 0 random values of
 * `kind`, 1 ascending, 2 descending, 3 constant, 4 organ pipe, 5 two values */
static int same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0; }
static void one_stats(size_t n, int kind, int shape, int with_nan)
{
    double *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        switch (shape) {
        case 0:
            a[i] = value(kind);
            if (kind == 1 && a[i] == 0.0 && (next() & 1)) a[i] = -0.0;
            break;
        case 1: a[i] = (double)i * 0.5; break;
        case 2: a[i] = (double)(n - i) * 0.25; break;
        case 3: a[i] = 3.0; break;
        case 4: a[i] = (double)(i < n / 2 ? i : n - i); break;
        default: a[i] = (next() & 1) ? 1.5 : 2.5; break;
        }
    }
    if (with_nan && n) a[next() % n] = NAN;
    memcpy(b, a, n * sizeof *a);
    if (with_nan) qsort(b, n, sizeof *b, cmp_f64);
    else ref_f64(b, n);
    double mn, mx, md, md2;
    tl_stats_f64(a, n, &mn, &mx, &md);
    double want = n % 2 ? b[n / 2] : (b[n / 2 - 1] + b[n / 2]) / 2;
    /* the median alone (min and max not asked) of another order of the same
     * values: the same result when the order cannot matter (no NaN, no -0.0) */
    int order_free = 1;
    for (size_t i = 0; i < n; i++) order_free &= b[i] == b[i] && !same_bits(b[i], -0.0);
    memcpy(a, b, n * sizeof *a);
    for (size_t i = 0; i + 1 < n; i += 2) { double x = a[i]; a[i] = a[n - 1 - i]; a[n - 1 - i] = x; }
    md2 = want;
    if (order_free) tl_stats_f64(a, n, NULL, NULL, &md2);
    checks++;
    if (!same_bits(mn, b[0]) || !same_bits(mx, b[n - 1]) || !same_bits(md, want) || !same_bits(md2, want)) {
        failures++;
        fprintf(stderr, "tl_stats_f64: n=%zu kind=%d shape=%d nan=%d differs\n", n, kind, shape, with_nan);
    }
    free(a);
    free(b);
}

/* tl_order_by_keys against qsort by (k1, k2, k3, k4, item number): the
 * stable order. */
typedef struct item {
    int64_t k[4];
    size_t i;
} item;
static int nkeys_used = 4;
static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    for (int j = 0; j < nkeys_used; j++)
        if (x->k[j] != y->k[j]) return x->k[j] < y->k[j] ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static void one_order(size_t n, int nk, int kind)
{
    int64_t *k = malloc((4 * n + 1) * sizeof *k);
    item *it = malloc((n + 1) * sizeof *it);
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < 4; j++) {
            uint64_t r = next();
            int64_t v = kind == 0 ? (int64_t)(r % 3) - 1 : kind == 1 ? (int64_t)r : (int64_t)(r % 1000) * 1000000;
            if (j == 0 && kind == 1 && (r & 7) == 0) v = INT64_MIN;
            k[j * n + i] = v;
            it[i].k[j] = j < nk ? v : 0;
        }
        it[i].i = i;
    }
    nkeys_used = nk;
    qsort(it, n, sizeof *it, cmp_item);
    const int64_t *keys[4] = {NULL, NULL, NULL, NULL};
    for (int j = 0; j < nk; j++) keys[j] = k + j * n;
    size_t *o = tl_order_by_keys(n, keys[0], keys[1], keys[2], keys[3]);
    int ok = 1;
    for (size_t i = 0; i < n; i++) ok &= o[i] == it[i].i;
    checks++;
    if (!ok) {
        failures++;
        fprintf(stderr, "tl_order_by_keys: n=%zu keys=%d kind=%d differs\n", n, nk, kind);
    }
    free(o);
    free(it);
    free(k);
}

int main(void)
{
    static const size_t big[] = {511, 512, 1000, 4096, 5000};
    for (size_t n = 0; n <= 300; n++) {
        for (int kind = 0; kind < 4; kind++) {
            one_f64(n, kind, 0);
            one_f64(n, kind, 1);
        }
        for (int kind = 0; kind < 3; kind++) one_i64(n, kind);
    }
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
        for (int kind = 0; kind < 4; kind++) {
            one_f64(big[i], kind, 0);
            one_f64(big[i], kind, 1);
        }
        for (int kind = 0; kind < 3; kind++) one_i64(big[i], kind);
    }
    static const size_t sn[] = {1, 2, 3, 47, 48, 49, 50, 51, 97, 100, 255, 256, 1000, 1001, 4096, 5001};
    for (size_t i = 0; i < sizeof sn / sizeof *sn; i++)
        for (int shape = 0; shape < 6; shape++)
            for (int kind = 0; kind < (shape ? 1 : 4); kind++)
                for (int rep = 0; rep < (shape ? 1 : sn[i] > 1001 ? 2 : 8); rep++) {
                    one_stats(sn[i], kind, shape, 0);
                    if (!shape && !rep) one_stats(sn[i], kind, shape, 1);
                }
    static const size_t on[] = {0, 1, 2, 3, 17, 300, 4000};
    for (size_t i = 0; i < sizeof on / sizeof *on; i++)
        for (int nk = 1; nk <= 4; nk++)
            for (int kind = 0; kind < 3; kind++) one_order(on[i], nk, kind);
    printf("numsort: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
