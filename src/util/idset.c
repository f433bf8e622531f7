/* idset.c — see idset.h. */
#include "idset.h"

#include <string.h>

#include "vec.h"

void tl_idset_build(tl_idset *s, const int64_t *ids, size_t n)
{
    memset(s, 0, sizeof *s);
    if (!n) return;
    int64_t lo = ids[0], hi = ids[0];
    for (size_t i = 1; i < n; i++) {
        if (ids[i] < lo) lo = ids[i];
        if (ids[i] > hi) hi = ids[i];
    }
    /* the range in bits, computed without overflow */
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    /* a bitmap when it takes no more memory than the hash set would (about
     * 48 bytes an id), up to 2^34 bits */
    if (range < (uint64_t)384 * n + 4096 && range < ((uint64_t)1 << 34)) {
        s->lo = lo;
        s->span = range + 1;
        s->bits = tl_xcalloc((size_t)(s->span + 63) / 64, sizeof *s->bits);
        for (size_t i = 0; i < n; i++) {
            uint64_t off = (uint64_t)ids[i] - (uint64_t)lo;
            s->bits[off >> 6] |= (uint64_t)1 << (off & 63);
        }
        return;
    }
    s->hashed = 1;
    tl_map_init(&s->map, n);
    for (size_t i = 0; i < n; i++) tl_map_put(&s->map, (uint64_t)ids[i], 0, 1);
}

void tl_idset_free(tl_idset *s)
{
    free(s->bits);
    if (s->hashed) tl_map_free(&s->map);
    memset(s, 0, sizeof *s);
}
