/* idset.h — a set of int64 ids (correlation ids of GPU events and launch
 * calls) built once from a list and then only asked: a bitmap over the ids'
 * range when it takes no more memory than a hash set (at most 384 bits per
 * listed id: Kineto numbers its correlations in order, so the range is
 * small), else a hash set. Owns its bitmap or map (tl_idset_free). */
#ifndef TL_IDSET_H
#define TL_IDSET_H

#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"

typedef struct tl_idset {
    int64_t lo;          /* bitmap: the smallest id */
    uint64_t span;       /* bitmap: the number of bits (0: hash set or empty) */
    uint64_t *bits;
    tl_map map;          /* without a bitmap, when n > 0 */
    int hashed;
} tl_idset;

/* The set of ids[0..n) (repeats allowed). */
void tl_idset_build(tl_idset *s, const int64_t *ids, size_t n);
void tl_idset_free(tl_idset *s);

static inline int tl_idset_has(const tl_idset *s, int64_t id)
{
    if (s->hashed) return tl_map_get(&s->map, (uint64_t)id, 0) != UINT32_MAX;
    uint64_t off = (uint64_t)id - (uint64_t)s->lo;
    if (!s->span || id < s->lo || off >= s->span) return 0;
    return (int)((s->bits[off >> 6] >> (off & 63)) & 1);
}

#endif
