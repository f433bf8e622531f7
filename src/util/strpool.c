#include "strpool.h"

#include <string.h>

#include "vec.h"

static inline uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

static inline uint64_t word(const char *s)
{
    uint64_t w;
    memcpy(&w, s, 8);
    return w;
}

/* Two independent multiply lanes over 8-byte words (good instruction-level
 * parallelism), folded with a final avalanche. */
uint32_t tl_hash_bytes(const char *s, size_t len)
{
    uint64_t a = 0x9E3779B97F4A7C15ull ^ len, b = 0xff51afd7ed558ccdull;
    while (len >= 16) {
        a = (a ^ word(s)) * 0xbf58476d1ce4e5b9ull;
        b = (b ^ word(s + 8)) * 0x94d049bb133111ebull;
        s += 16;
        len -= 16;
    }
    if (len >= 8) {
        a = mix(a, word(s));
        s += 8;
        len -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, s, len);
    b = mix(b, w);
    uint64_t h = mix(a ^ (b >> 29), b);
    h *= 0x94d049bb133111ebull;
    h ^= h >> 32;
    return (uint32_t)h;
}

void tl_strpool_init(tl_strpool *p)
{
    memset(p, 0, sizeof *p);
    p->nslots = 1024;
    p->slots = tl_xcalloc(p->nslots, sizeof *p->slots);
}

void tl_strpool_free(tl_strpool *p)
{
    free(p->arena);
    free(p->off);
    free(p->len);
    free(p->slots);
    free(p->hashes);
    memset(p, 0, sizeof *p);
}

static void rehash(tl_strpool *p)
{
    uint32_t ns = p->nslots * 2;
    uint32_t *slots = tl_xcalloc(ns, sizeof *slots);
    for (uint32_t id = 0; id < p->n; id++) {
        uint32_t i = p->hashes[id] & (ns - 1);
        while (slots[i]) i = (i + 1) & (ns - 1);
        slots[i] = id + 1;
    }
    free(p->slots);
    p->slots = slots;
    p->nslots = ns;
}

static uint32_t lookup(const tl_strpool *p, const char *s, size_t len, uint32_t h, uint32_t *slot)
{
    uint32_t i = h & (p->nslots - 1);
    for (;;) {
        uint32_t v = p->slots[i];
        if (!v) break;
        uint32_t id = v - 1;
        if (p->hashes[id] == h && p->len[id] == len && memcmp(p->arena + p->off[id], s, len) == 0) {
            *slot = i;
            return id;
        }
        i = (i + 1) & (p->nslots - 1);
    }
    *slot = i;
    return UINT32_MAX;
}

uint32_t tl_strpool_find(const tl_strpool *p, const char *s, size_t len)
{
    uint32_t slot;
    return lookup(p, s, len, tl_hash_bytes(s, len), &slot);
}

uint32_t tl_strpool_intern(tl_strpool *p, const char *s, size_t len)
{
    uint32_t h = tl_hash_bytes(s, len), slot;
    uint32_t id = lookup(p, s, len, h, &slot);
    if (id != UINT32_MAX) return id;
    if ((p->n + 1) * 4 > p->nslots * 3) {
        rehash(p);
        lookup(p, s, len, h, &slot);
    }
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        p->off = tl_xrealloc(p->off, p->cap * sizeof *p->off);
        p->len = tl_xrealloc(p->len, p->cap * sizeof *p->len);
        p->hashes = tl_xrealloc(p->hashes, p->cap * sizeof *p->hashes);
    }
    TL_GROW(p->arena, p->arena_cap, p->arena_len + len + 1);
    memcpy(p->arena + p->arena_len, s, len);
    p->arena[p->arena_len + len] = 0;
    id = p->n++;
    p->off[id] = p->arena_len;
    p->len[id] = (uint32_t)len;
    p->hashes[id] = h;
    p->arena_len += len + 1;
    p->slots[slot] = id + 1;
    return id;
}

uint32_t tl_strpool_intern_miss(tl_strpool *p, tl_icache *c, uint32_t slot, const char *s, size_t len)
{
    uint32_t got = tl_strpool_intern(p, s, len);
    c->id[slot] = got + 1;
    return got;
}
