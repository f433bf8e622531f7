/* hashmap.h — open-addressing maps from a pair of 64-bit keys to a uint32
 * value (last insert wins). Used by the tree builder for correlation and
 * flow lookups. Owns its slot arrays; not thread-safe while being built. */
#ifndef TL_HASHMAP_H
#define TL_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_map_slot {
    uint64_t k1, k2;
    uint32_t val;    /* UINT32_MAX = empty slot */
} tl_map_slot;       /* one slot, keys and value together: a lookup reads one cache line */
typedef struct tl_map {
    tl_map_slot *slot;
    size_t cap, n;   /* cap is a power of two */
} tl_map;

/* The slot where a lookup or insert of the key starts. */
static inline size_t tl_map_home(const tl_map *m, uint64_t k1, uint64_t k2)
{
    uint64_t h = (k1 * 0x9E3779B97F4A7C15ull) ^ (k2 + 0x632BE59BD9B4E019ull + (k1 << 6));
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (size_t)h & (m->cap - 1);
}
/* Starts loading that slot: a loop that knows its keys some iterations
 * ahead hides the cache misses of a large map (the tree's link maps). */
static inline void tl_map_prefetch(const tl_map *m, uint64_t k1, uint64_t k2)
{
    __builtin_prefetch(&m->slot[tl_map_home(m, k1, k2)], 1);
}

void tl_map_init(tl_map *m, size_t expected);
void tl_map_free(tl_map *m);
void tl_map_put(tl_map *m, uint64_t k1, uint64_t k2, uint32_t v);
/* Returns UINT32_MAX when absent. */
uint32_t tl_map_get(const tl_map *m, uint64_t k1, uint64_t k2);

/* The same for one 64-bit key, in 12-byte slots (half the memory of a
 * tl_map: the tree's flow maps hold hundreds of thousands of ids). */
typedef struct tl_map64_slot {
    uint32_t klo, khi, val; /* val UINT32_MAX = empty slot */
} tl_map64_slot;
typedef struct tl_map64 {
    tl_map64_slot *slot;
    size_t cap, n;
} tl_map64;

static inline size_t tl_map64_home(const tl_map64 *m, uint64_t k)
{
    uint64_t h = k * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (size_t)h & (m->cap - 1);
}
static inline void tl_map64_prefetch(const tl_map64 *m, uint64_t k)
{
    __builtin_prefetch(&m->slot[tl_map64_home(m, k)], 1);
}

void tl_map64_init(tl_map64 *m, size_t expected);
void tl_map64_free(tl_map64 *m);
void tl_map64_put(tl_map64 *m, uint64_t k, uint32_t v);
uint32_t tl_map64_get(const tl_map64 *m, uint64_t k);

#endif
