/* arena.c — the stack arena of one TraceDiff merge and the small uint32 maps
 * allocated in it (inference-and-comparative spec §2.2; diff_internal.h).
 *
 * Owns: the arena's blocks (a stack released to a mark, one spare block kept
 * for reuse) and the open-addressing probing of an amap. Everything a merge
 * node needs lives here and is released when the node is done, so the merge
 * allocates no memory per node. */
#include "diff_internal.h"

#include <stdlib.h>
#include <string.h>

void *tl_diff_aalloc(arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (!n) n = 8;
    if (!a->cur || a->cur->used + n > a->cur->cap) {
        ablock *b = NULL;
        if (a->spare && a->spare->cap >= n) {
            b = a->spare;
            a->spare = NULL;
        } else {
            size_t cap = n > ((size_t)1 << 20) ? n : ((size_t)1 << 20);
            b = tl_xmalloc(sizeof *b + cap);
            b->cap = cap;
        }
        b->used = 0;
        b->prev = a->cur;
        a->cur = b;
    }
    void *p = (unsigned char *)a->cur->data + a->cur->used;
    a->cur->used += n;
    return p;
}

amark tl_diff_amark_get(const arena *a)
{
    amark m = {a->cur, a->cur ? a->cur->used : 0};
    return m;
}

void tl_diff_arelease(arena *a, amark m)
{
    while (a->cur != m.b) {
        ablock *p = a->cur->prev;
        if (!a->spare) a->spare = a->cur;
        else if (a->spare->cap < a->cur->cap) {
            free(a->spare);
            a->spare = a->cur;
        } else free(a->cur);
        a->cur = p;
    }
    if (a->cur) a->cur->used = m.used;
}

void tl_diff_afree(arena *a)
{
    tl_diff_arelease(a, (amark){NULL, 0});
    free(a->spare);
    a->spare = NULL;
}

void tl_diff_amap_init(arena *a, amap *m, size_t n)
{
    size_t cap = 8;
    while (cap < 2 * n + 2) cap *= 2;
    m->k = tl_diff_aalloc(a, cap * sizeof *m->k);
    m->v = tl_diff_aalloc(a, cap * sizeof *m->v);
    memset(m->k, 0xff, cap * sizeof *m->k);
    m->mask = cap - 1;
}

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Slot of key (UINT32_MAX keys are not allowed). */
size_t tl_diff_amap_slot(const amap *m, uint32_t key)
{
    size_t i = hash32(key) & m->mask;
    while (m->k[i] != UINT32_MAX && m->k[i] != key) i = (i + 1) & m->mask;
    return i;
}

uint32_t tl_diff_amap_get(const amap *m, uint32_t key)
{
    size_t i = tl_diff_amap_slot(m, key);
    return m->k[i] == key ? m->v[i] : UINT32_MAX;
}

void tl_diff_amap_put(amap *m, uint32_t key, uint32_t v)
{
    size_t i = tl_diff_amap_slot(m, key);
    m->k[i] = key;
    m->v[i] = v;
}
