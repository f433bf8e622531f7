#include "sparse_csr.h"

#include <string.h>

#include "bigmem.h"

static size_t words(size_t n) { return (n + 63) / 64 + 1; }

/* has[] set: the rank index and the size of off[] */
static void index_bits(tl_csr *c)
{
    uint32_t r = 0;
    for (size_t w = 0; w < words(c->n); w++) {
        c->rank[w] = r;
        r += tl_popcount64(c->has[w]);
    }
    c->k = r;
    c->off = tl_big_realloc(NULL, ((size_t)r + 1) * sizeof *c->off);
}

static void init(tl_csr *c, size_t n)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->has = tl_big_realloc(NULL, words(n) * sizeof *c->has);
    c->rank = tl_big_realloc(NULL, words(n) * sizeof *c->rank);
}

void tl_csr_from_edges(tl_csr *c, size_t n, const tl_edge *edges, size_t m)
{
    init(c, n);
    for (size_t k = 0; k < m; k++) c->has[edges[k].p >> 6] |= (uint64_t)1 << (edges[k].p & 63);
    index_bits(c);
    /* counting sort into the slots of the nodes with a list: off[r + 1]
     * counts, then walks down to the start of list r while filling it from
     * its end (the order of the edges kept); one shift makes off[] the
     * start offsets */
    for (size_t k = 0; k < m; k++) c->off[tl_csr_rank(c, edges[k].p) + 1]++;
    for (uint32_t r = 0; r < c->k; r++) c->off[r + 1] += c->off[r];
    c->v = tl_big_realloc(NULL, (m ? m : 1) * sizeof *c->v);
    uint32_t *cursor = c->off + 1;
    for (size_t k = m; k-- > 0;) c->v[--cursor[tl_csr_rank(c, edges[k].p)]] = edges[k].c;
    memmove(c->off, c->off + 1, c->k * sizeof *c->off);
    c->off[c->k] = (uint32_t)m;
    tl_big_trim(c->v, m * sizeof *c->v); /* the rest of the huge page it ends in */
}

void tl_csr_from_fn(tl_csr *c, size_t n, tl_csr_list_fn list, void *ctx)
{
    init(c, n);
    size_t total = 0;
    for (size_t u = 0; u < n; u++) {
        size_t len = list(ctx, (uint32_t)u, NULL);
        if (len) c->has[u >> 6] |= (uint64_t)1 << (u & 63);
        total += len;
    }
    index_bits(c);
    c->v = tl_big_realloc(NULL, (total ? total : 1) * sizeof *c->v);
    size_t at = 0;
    uint32_t r = 0;
    for (size_t u = 0; u < n; u++) {
        if (!tl_csr_nonempty(c, (uint32_t)u)) continue;
        c->off[r++] = (uint32_t)at;
        at += list(ctx, (uint32_t)u, c->v + at);
    }
    c->off[c->k] = (uint32_t)at;
    tl_big_trim(c->v, at * sizeof *c->v);
}

static void *dup(const void *p, size_t bytes)
{
    void *d = tl_big_realloc(NULL, bytes ? bytes : 1);
    if (bytes) memcpy(d, p, bytes);
    return d;
}

void tl_csr_copy(tl_csr *dst, const tl_csr *src)
{
    *dst = *src;
    dst->has = dup(src->has, words(src->n) * sizeof *src->has);
    dst->rank = dup(src->rank, words(src->n) * sizeof *src->rank);
    dst->off = dup(src->off, ((size_t)src->k + 1) * sizeof *src->off);
    dst->v = dup(src->v, (size_t)src->off[src->k] * sizeof *src->v);
}

void tl_csr_free(tl_csr *c)
{
    tl_big_free(c->has);
    tl_big_free(c->rank);
    tl_big_free(c->off);
    tl_big_free(c->v);
    memset(c, 0, sizeof *c);
}
