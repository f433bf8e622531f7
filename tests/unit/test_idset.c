/* test_idset.c — tl_idset (src/util/idset.h) against a plain membership
 * scan: dense ids (the bitmap), sparse ones and the int64 extremes (the
 * hash set), repeats, the empty set and ids just outside the range. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/idset.h"

static int failures, checks;

static int member(const int64_t *ids, size_t n, int64_t x)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == x) return 1;
    return 0;
}

static void one(const int64_t *ids, size_t n, int expect_hashed, const char *what)
{
    tl_idset s;
    tl_idset_build(&s, ids, n);
    checks++;
    if (n && s.hashed != expect_hashed) {
        failures++;
        fprintf(stderr, "%s: hashed %d, expected %d\n", what, s.hashed, expect_hashed);
    }
    int64_t probes[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, 63, 64, 65, 1000, INT64_MAX - 1, INT64_MAX};
    for (size_t i = 0; i < n; i++) {
        for (int d = -2; d <= 2; d++) {
            int64_t x = ids[i];
            if ((d < 0 && x < INT64_MIN - d) || (d > 0 && x > INT64_MAX - d)) continue;
            x += d;
            checks++;
            if (tl_idset_has(&s, x) != member(ids, n, x)) {
                failures++;
                fprintf(stderr, "%s: id %lld\n", what, (long long)x);
            }
        }
    }
    for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
        checks++;
        if (tl_idset_has(&s, probes[i]) != member(ids, n, probes[i])) {
            failures++;
            fprintf(stderr, "%s: probe %lld\n", what, (long long)probes[i]);
        }
    }
    tl_idset_free(&s);
}

int main(void)
{
    int64_t dense[3000], sparse[200], extremes[] = {INT64_MIN, INT64_MAX, 0, -5};
    for (size_t i = 0; i < 3000; i++) dense[i] = 1000 + (int64_t)(i * 7 % 2999) * 3; /* repeats, gaps */
    for (size_t i = 0; i < 200; i++) sparse[i] = (int64_t)(i * 1000003) * 100000 - 7; /* 384 bits an id is far exceeded */
    int64_t neg[] = {-64, -1, -128, -64};
    one(dense, 3000, 0, "dense");
    one(sparse, 200, 1, "sparse");
    one(extremes, 4, 1, "extremes");
    one(neg, 4, 0, "negative");
    one(NULL, 0, 0, "empty");
    printf("idset: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
