/* strpool.h — interned byte strings.
 * A strpool owns one arena of NUL-terminated strings and a hash index; each
 * distinct string gets a dense uint32 id in first-seen order. Ids are stable
 * for the life of the pool; the pool is append-only while a trace loads and
 * read-only (thread-safe for lookups by id) afterwards. */
#ifndef TL_STRPOOL_H
#define TL_STRPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct tl_strpool {
    char *arena;          /* all strings, each followed by NUL */
    size_t arena_len, arena_cap;
    uint64_t *off;        /* id -> offset in arena */
    uint32_t *len;        /* id -> length in bytes */
    uint32_t n, cap;      /* number of strings */
    uint32_t *slots;      /* hash index: id+1, 0 = empty */
    uint32_t *hashes;     /* id -> hash */
    uint32_t nslots;      /* power of two */
} tl_strpool;

void tl_strpool_init(tl_strpool *p);
void tl_strpool_free(tl_strpool *p);
uint32_t tl_strpool_intern(tl_strpool *p, const char *s, size_t len);
/* Returns UINT32_MAX when absent. */
uint32_t tl_strpool_find(const tl_strpool *p, const char *s, size_t len);
static inline const char *tl_strpool_get(const tl_strpool *p, uint32_t id)
{
    return p->arena + p->off[id];
}
static inline uint32_t tl_strpool_len(const tl_strpool *p, uint32_t id) { return p->len[id]; }

/* A direct-mapped front cache for interning strings that recur (event
 * names, args keys, raw args values): a hit costs one memcmp instead of a
 * full hash and probe. Owned by whoever interns (e.g. one scanner). */
enum { TL_ICACHE_SIZE = 4096 };
typedef struct tl_icache {
    uint32_t id[TL_ICACHE_SIZE]; /* id + 1, 0 = empty */
} tl_icache;
uint32_t tl_strpool_intern_cached(tl_strpool *p, tl_icache *c, const char *s, size_t len);
uint32_t tl_hash_bytes(const char *s, size_t len);

#endif
