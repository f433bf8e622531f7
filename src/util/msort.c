#include "msort.h"

#include <string.h>

#include "vec.h"

static void rec(size_t *idx, size_t *tmp, size_t n, tl_idx_cmp cmp, void *ctx)
{
    if (n < 2) return;
    if (n <= 12) { /* insertion sort: stable */
        for (size_t i = 1; i < n; i++) {
            size_t x = idx[i], j = i;
            while (j > 0 && cmp(ctx, x, idx[j - 1]) < 0) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    rec(idx, tmp, h, cmp, ctx);
    rec(idx + h, tmp, n - h, cmp, ctx);
    if (cmp(ctx, idx[h], idx[h - 1]) >= 0) return;
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cmp(ctx, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}

void tl_msort(size_t *idx, size_t n, tl_idx_cmp cmp, void *ctx)
{
    size_t *tmp = tl_xmalloc((n + 1) * sizeof *tmp);
    rec(idx, tmp, n, cmp, ctx);
    free(tmp);
}

size_t *tl_msort_order(size_t n, tl_idx_cmp cmp, void *ctx)
{
    size_t *idx = tl_xmalloc((n ? n : 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    tl_msort(idx, n, cmp, ctx);
    return idx;
}

int tl_idx_cmp_i64(void *ctx, size_t a, size_t b)
{
    const int64_t *v = ctx;
    return (v[a] > v[b]) - (v[a] < v[b]);
}
