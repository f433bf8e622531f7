/* context.c — the child lists one merge step aligns (inference-and-comparative
 * spec §2.2): a node's GPU-path children, get_children_with_missing for a
 * pair of nodes, the ts order, and collapse_single_gpu_child.
 *
 * Owns: nothing beyond the lists it returns, which live in the merge
 * context's arena (diff_internal.h). */
#include "diff_internal.h"

#include <string.h>

static int64_t ts_of(const side *s, uint32_t u) { return (s->es->flags[u] & TL_F_TS) ? s->es->ts[u] : 0; }

/* GPU-path children of u into the arena. */
ulist tl_diff_gpu_kids(ctx *c, const side *s, uint32_t u)
{
    size_t n;
    const uint32_t *ch = tl_diff_kids_of(s, u, &n);
    ulist l = {tl_diff_aalloc(&c->ar, (n + 1) * sizeof(uint32_t)), 0};
    for (size_t i = 0; i < n; i++)
        if (tl_diff_is_gpu_path(s, ch[i])) l.v[l.n++] = ch[i];
    return l;
}

/* Stable sort of uids by ts (insertion sort for short lists, else merge). */
void tl_diff_sort_by_ts(ctx *c, const side *s, uint32_t *v, size_t n)
{
    if (n < 2) return;
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = v[i];
            int64_t t = ts_of(s, x);
            size_t j = i;
            while (j > 0 && ts_of(s, v[j - 1]) > t) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return;
    }
    amark m = tl_diff_amark_get(&c->ar);
    uint32_t *tmp = tl_diff_aalloc(&c->ar, n * sizeof *tmp);
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = ts_of(s, v[b]) < ts_of(s, v[a]) ? v[b++] : v[a++];
            while (a < mid) tmp[k++] = v[a++];
            while (b < hi) tmp[k++] = v[b++];
        }
        memcpy(v, tmp, n * sizeof *v);
    }
    tl_diff_arelease(&c->ar, m);
}

/* get_children_with_missing: GPU-path children of each side, plus, for a
 * name GPU-path on one side only, the other side's last child of that name;
 * each list sorted by ts. */
void tl_diff_children_with_missing(ctx *c, uint32_t a, uint32_t b, ulist *o1, ulist *o2)
{
    const side *s1 = &c->s[0], *s2 = &c->s[1];
    size_t na = 0, nb = 0;
    const uint32_t *all1 = a != NONE ? tl_diff_kids_of(s1, a, &na) : NULL;
    const uint32_t *all2 = b != NONE ? tl_diff_kids_of(s2, b, &nb) : NULL;
    ulist g1 = {tl_diff_aalloc(&c->ar, (na + nb + 1) * sizeof(uint32_t)), 0};
    ulist g2 = {tl_diff_aalloc(&c->ar, (na + nb + 1) * sizeof(uint32_t)), 0};
    for (size_t i = 0; i < na; i++)
        if (tl_diff_is_gpu_path(s1, all1[i])) g1.v[g1.n++] = all1[i];
    for (size_t i = 0; i < nb; i++)
        if (tl_diff_is_gpu_path(s2, all2[i])) g2.v[g2.n++] = all2[i];
    if (na && nb) {
        amark m = tl_diff_amark_get(&c->ar);
        /* name -> bit 1: GPU-path on side 1, 2: on side 2 */
        amap gn, last1, last2;
        tl_diff_amap_init(&c->ar, &gn, g1.n + g2.n);
        tl_diff_amap_init(&c->ar, &last1, na);
        tl_diff_amap_init(&c->ar, &last2, nb);
        for (size_t i = 0; i < g1.n; i++) {
            uint32_t k = tl_diff_nname(s1, g1.v[i]), o = tl_diff_amap_get(&gn, k);
            tl_diff_amap_put(&gn, k, (o == UINT32_MAX ? 0 : o) | 1);
        }
        for (size_t i = 0; i < g2.n; i++) {
            uint32_t k = tl_diff_nname(s2, g2.v[i]), o = tl_diff_amap_get(&gn, k);
            tl_diff_amap_put(&gn, k, (o == UINT32_MAX ? 0 : o) | 2);
        }
        for (size_t i = 0; i < na; i++) tl_diff_amap_put(&last1, tl_diff_nname(s1, all1[i]), all1[i]);
        for (size_t i = 0; i < nb; i++) tl_diff_amap_put(&last2, tl_diff_nname(s2, all2[i]), all2[i]);
        size_t n1 = g1.n, n2 = g2.n;
        /* names on one side only, in the order they first appear there */
        for (size_t i = 0; i < n1; i++) {
            uint32_t k = tl_diff_nname(s1, g1.v[i]);
            size_t sl = tl_diff_amap_slot(&gn, k);
            if (gn.v[sl] != 1) continue;
            gn.v[sl] = 0; /* once */
            uint32_t x = tl_diff_amap_get(&last2, k);
            if (x != UINT32_MAX) g2.v[g2.n++] = x;
        }
        for (size_t i = 0; i < n2; i++) {
            uint32_t k = tl_diff_nname(s2, g2.v[i]);
            size_t sl = tl_diff_amap_slot(&gn, k);
            if (gn.v[sl] != 2) continue;
            gn.v[sl] = 0;
            uint32_t x = tl_diff_amap_get(&last1, k);
            if (x != UINT32_MAX) g1.v[g1.n++] = x;
        }
        tl_diff_arelease(&c->ar, m);
    }
    tl_diff_sort_by_ts(c, s1, g1.v, g1.n);
    tl_diff_sort_by_ts(c, s2, g2.v, g2.n);
    *o1 = g1;
    *o2 = g2;
}

/* collapse_single_gpu_child: descend through nodes with one GPU-path child;
 * stop at a dispatch, at a cpu_op with a dispatch child (kids empty), or at
 * a node whose GPU-path child count is not 1 (kids: those children). */
uint32_t tl_diff_collapse(ctx *c, const side *s, uint32_t u, ulist *kids)
{
    uint32_t cur = u;
    kids->v = NULL;
    kids->n = 0;
    for (;;) {
        if (tl_diff_is_dispatch(s, cur)) break;
        size_t n;
        const uint32_t *ch = tl_diff_kids_of(s, cur, &n);
        if (s->es->cat[cur] == TL_CAT_CPU_OP) {
            int cr = 0;
            for (size_t i = 0; i < n && !cr; i++) cr = tl_diff_is_dispatch(s, ch[i]);
            if (cr) break;
        }
        size_t ng = 0;
        uint32_t one = NONE;
        for (size_t i = 0; i < n; i++)
            if (tl_diff_is_gpu_path(s, ch[i])) {
                ng++;
                one = ch[i];
            }
        if (ng != 1) {
            *kids = tl_diff_gpu_kids(c, s, cur);
            break;
        }
        cur = one;
    }
    return cur;
}
