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
uint32_t tl_hash_bytes(const char *s, size_t len);

/* Two words that, with the length, determine a string of up to 16 bytes
 * (longer ones: its first and last 8 bytes); reads only s[0..len). */
static inline void tl_str_words(const char *s, size_t len, uint64_t *head, uint64_t *tail)
{
    if (len >= 8) {
        memcpy(head, s, 8);
        memcpy(tail, s + len - 8, 8);
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + len - 4, 4);
        *head = a | (uint64_t)b << 32;
        *tail = 0;
    } else {
        const unsigned char *u = (const unsigned char *)s;
        *head = len ? u[0] | (uint64_t)u[len / 2] << 8 | (uint64_t)u[len - 1] << 16 : 0;
        *tail = 0;
    }
}

uint32_t tl_strpool_intern_miss(tl_strpool *p, tl_icache *c, uint32_t slot, const char *s, size_t len);

__attribute__((always_inline)) static inline uint32_t tl_strpool_intern_cached(tl_strpool *p, tl_icache *c, const char *s, size_t len)
{
    uint64_t head, tail;
    tl_str_words(s, len, &head, &tail);
    uint64_t h = (head * 0x9E3779B97F4A7C15ull) ^ (tail * 0xbf58476d1ce4e5b9ull) ^ (len * 0x94d049bb133111ebull);
    uint32_t slot = (uint32_t)(h >> 52) & (TL_ICACHE_SIZE - 1);
    uint32_t id = c->id[slot];
    if (id && p->len[id - 1] == len) {
        const char *a = p->arena + p->off[id - 1];
        if (len <= 16) {
            uint64_t ah, at;
            tl_str_words(a, len, &ah, &at);
            if (ah == head && at == tail) return id - 1;
        } else if (memcmp(a, s, len) == 0) {
            return id - 1;
        }
    }
    return tl_strpool_intern_miss(p, c, slot, s, len);
}

#endif
