#include "hashmap.h"

#include <string.h>

#include "vec.h"

static inline size_t slot_of(const tl_map *m, uint64_t k1, uint64_t k2)
{
    uint64_t h = (k1 * 0x9E3779B97F4A7C15ull) ^ (k2 + 0x632BE59BD9B4E019ull + (k1 << 6));
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (size_t)h & (m->cap - 1);
}

void tl_map_init(tl_map *m, size_t expected)
{
    size_t cap = 64;
    while (cap * 3 < expected * 4) cap *= 2; /* room for `expected` at the 3/4 load that put() keeps */
    m->cap = cap;
    m->n = 0;
    m->slot = tl_xmalloc(cap * sizeof *m->slot);
    for (size_t i = 0; i < cap; i++) m->slot[i].val = UINT32_MAX;
}

void tl_map_free(tl_map *m)
{
    free(m->slot);
    memset(m, 0, sizeof *m);
}

static void grow(tl_map *m)
{
    tl_map old = *m;
    tl_map_init(m, old.cap); /* doubles: room for old.cap at 3/4 load */
    for (size_t i = 0; i < old.cap; i++)
        if (old.slot[i].val != UINT32_MAX) tl_map_put(m, old.slot[i].k1, old.slot[i].k2, old.slot[i].val);
    tl_map_free(&old);
}

void tl_map_put(tl_map *m, uint64_t k1, uint64_t k2, uint32_t v)
{
    if ((m->n + 1) * 4 > m->cap * 3) grow(m);
    size_t i = slot_of(m, k1, k2);
    tl_map_slot *sl = m->slot;
    while (sl[i].val != UINT32_MAX) {
        if (sl[i].k1 == k1 && sl[i].k2 == k2) {
            sl[i].val = v;
            return;
        }
        i = (i + 1) & (m->cap - 1);
    }
    sl[i].k1 = k1;
    sl[i].k2 = k2;
    sl[i].val = v;
    m->n++;
}

uint32_t tl_map_get(const tl_map *m, uint64_t k1, uint64_t k2)
{
    size_t i = slot_of(m, k1, k2);
    const tl_map_slot *sl = m->slot;
    while (sl[i].val != UINT32_MAX) {
        if (sl[i].k1 == k1 && sl[i].k2 == k2) return sl[i].val;
        i = (i + 1) & (m->cap - 1);
    }
    return UINT32_MAX;
}
