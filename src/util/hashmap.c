#include "hashmap.h"

#include <string.h>

#include "bigmem.h"
#include "vec.h"

/* Large slot arrays are mapped apart from the heap, so their memory goes
 * back to the system when the map is freed (the tree's maps are the peak of
 * a load); small ones come from malloc. */
enum { BIG_SLOTS = 1 << 20 };

static void *slots_alloc(size_t bytes)
{
    return bytes >= BIG_SLOTS ? tl_big_realloc(NULL, bytes) : tl_xmalloc(bytes);
}

static void slots_free(void *p, size_t bytes)
{
    if (bytes >= BIG_SLOTS) tl_big_free(p);
    else free(p);
}

static size_t cap_for(size_t expected)
{
    size_t cap = 64;
    while (cap * 3 < expected * 4) cap *= 2;
    return cap;
}

void tl_map_init(tl_map *m, size_t expected)
{
    m->cap = cap_for(expected); /* room for `expected` at the 3/4 load that put() keeps */
    m->n = 0;
    m->slot = slots_alloc(m->cap * sizeof *m->slot);
    for (size_t i = 0; i < m->cap; i++) m->slot[i].val = UINT32_MAX;
}

void tl_map_free(tl_map *m)
{
    slots_free(m->slot, m->cap * sizeof *m->slot);
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
    size_t i = tl_map_home(m, k1, k2);
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
    size_t i = tl_map_home(m, k1, k2);
    const tl_map_slot *sl = m->slot;
    while (sl[i].val != UINT32_MAX) {
        if (sl[i].k1 == k1 && sl[i].k2 == k2) return sl[i].val;
        i = (i + 1) & (m->cap - 1);
    }
    return UINT32_MAX;
}

void tl_map64_init(tl_map64 *m, size_t expected)
{
    m->cap = cap_for(expected);
    m->n = 0;
    m->slot = slots_alloc(m->cap * sizeof *m->slot);
    for (size_t i = 0; i < m->cap; i++) m->slot[i].val = UINT32_MAX;
}

void tl_map64_free(tl_map64 *m)
{
    slots_free(m->slot, m->cap * sizeof *m->slot);
    memset(m, 0, sizeof *m);
}

void tl_map64_put(tl_map64 *m, uint64_t k, uint32_t v)
{
    if ((m->n + 1) * 4 > m->cap * 3) {
        tl_map64 old = *m;
        tl_map64_init(m, old.cap);
        for (size_t i = 0; i < old.cap; i++)
            if (old.slot[i].val != UINT32_MAX)
                tl_map64_put(m, (uint64_t)old.slot[i].khi << 32 | old.slot[i].klo, old.slot[i].val);
        tl_map64_free(&old);
    }
    uint32_t lo = (uint32_t)k, hi = (uint32_t)(k >> 32);
    size_t i = tl_map64_home(m, k);
    tl_map64_slot *sl = m->slot;
    while (sl[i].val != UINT32_MAX) {
        if (sl[i].klo == lo && sl[i].khi == hi) {
            sl[i].val = v;
            return;
        }
        i = (i + 1) & (m->cap - 1);
    }
    sl[i].klo = lo;
    sl[i].khi = hi;
    sl[i].val = v;
    m->n++;
}

uint32_t tl_map64_get(const tl_map64 *m, uint64_t k)
{
    uint32_t lo = (uint32_t)k, hi = (uint32_t)(k >> 32);
    size_t i = tl_map64_home(m, k);
    const tl_map64_slot *sl = m->slot;
    while (sl[i].val != UINT32_MAX) {
        if (sl[i].klo == lo && sl[i].khi == hi) return sl[i].val;
        i = (i + 1) & (m->cap - 1);
    }
    return UINT32_MAX;
}
