/* sparse_csr.h — lists of node ids for n nodes of which most have none
 * (the tree's children and GPU events: 2.5 M events, a few hundred
 * thousand lists). Stored as a bitmap of the nodes that have a list, the
 * number of set bits before each 64-bit word (rank), and offsets for those
 * nodes only: ~0.2 bytes per node plus 4 per non-empty list, where plain CSR
 * takes 4 bytes per node. Owns its arrays; read-only once built, so any
 * number of threads may read it. */
#ifndef TL_SPARSE_CSR_H
#define TL_SPARSE_CSR_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_csr {
    size_t n;          /* nodes */
    uint32_t k;        /* nodes with a non-empty list */
    uint64_t *has;     /* bit u: node u has a list */
    uint32_t *rank;    /* per word of has: set bits in the words before it */
    uint32_t *off;     /* k + 1 offsets into v, in node order */
    uint32_t *v;       /* the lists, one after the other */
} tl_csr;

/* A list as positions in v: v[b .. e); b == e when the node has none. */
typedef struct tl_span {
    uint32_t b, e;
} tl_span;

/* A (node, item) pair of a list to build. */
typedef struct tl_edge {
    uint32_t p, c;
} tl_edge;

/* Set bits of x (inline: without -mpopcnt the builtin is a libgcc call). */
static inline uint32_t tl_popcount64(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

/* The index among the nodes with a list of node u, which has one. */
static inline uint32_t tl_csr_rank(const tl_csr *c, uint32_t u)
{
    return c->rank[u >> 6] + tl_popcount64(c->has[u >> 6] & (((uint64_t)1 << (u & 63)) - 1));
}

static inline tl_span tl_csr_span(const tl_csr *c, uint32_t u)
{
    if (!((c->has[u >> 6] >> (u & 63)) & 1)) return (tl_span){0, 0};
    uint32_t r = tl_csr_rank(c, u);
    return (tl_span){c->off[r], c->off[r + 1]};
}

/* The list of u and its length (*len = 0: the pointer is not to be read). */
static inline const uint32_t *tl_csr_list(const tl_csr *c, uint32_t u, size_t *len)
{
    tl_span s = tl_csr_span(c, u);
    *len = s.e - s.b;
    return c->v + s.b;
}

static inline int tl_csr_nonempty(const tl_csr *c, uint32_t u)
{
    return (int)((c->has[u >> 6] >> (u & 63)) & 1);
}

static inline size_t tl_csr_len(const tl_csr *c, uint32_t u)
{
    tl_span s = tl_csr_span(c, u);
    return s.e - s.b;
}

/* The lists of m edges over n nodes, each list in the order of its edges. */
void tl_csr_from_edges(tl_csr *c, size_t n, const tl_edge *edges, size_t m);
/* The lists list(ctx, u, out) gives for every u < n (out NULL: the length
 * only; else written there). */
typedef size_t (*tl_csr_list_fn)(void *ctx, uint32_t u, uint32_t *out);
void tl_csr_from_fn(tl_csr *c, size_t n, tl_csr_list_fn list, void *ctx);
void tl_csr_copy(tl_csr *dst, const tl_csr *src);
void tl_csr_free(tl_csr *c);

#endif
