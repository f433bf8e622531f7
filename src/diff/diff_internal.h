/* diff_internal.h — private to src/diff: what the files of TraceDiff share
 * (inference-and-comparative spec §2.2, §2.3). Nothing outside src/diff
 * includes it; the public interface is trace_diff.h.
 *
 * Owns: the types of one merge (the stack arena and its uint32 maps, a
 * trace's side of the merge context, the edit operations and lists, the
 * merge context with its Wagner-Fischer memo), the per-side accessors every
 * stage reads the trees through (they honour the top-root overlay), and the
 * prototypes of the functions that cross files:
 *
 *   arena.c       the stack arena and amap
 *   context.c     the child lists of a pair of nodes (GPU path, missing names,
 *                 ts order) and the single-GPU-child collapse
 *   match.c       name normalisation, Wagner-Fischer with its memo,
 *                 disambiguation of repeated names, reconciliation of wrappers
 *   merge.c       the merge of two nodes (depth-first on an explicit stack)
 *                 and the paired top roots
 *   diff_stats.c  the diff_stats rows (LCAs, busy times), the diff_stats
 *                 Table and diff_stats_unique_args_summary
 *   cpu_op_map.c  the cpu_op_map JSON texts
 *   trace_diff.c  the public API: run, tree text, files, report (§2.3) */
#ifndef TL_DIFF_INTERNAL_H
#define TL_DIFF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "../util/vec.h"
#include "trace_diff.h"

#define NONE TL_NOUID

/* ------------------------------------------------------------ arena.c */

/* A stack of blocks: pointers stay valid until released to a mark. */
typedef struct ablock {
    struct ablock *prev;
    size_t cap, used;
    uint64_t data[];
} ablock;

typedef struct arena {
    ablock *cur;
    ablock *spare; /* one released block kept for reuse */
} arena;

typedef struct amark {
    ablock *b;
    size_t used;
} amark;

/* A small open-addressing set/map of uint32 keys in the arena. */
typedef struct amap {
    uint32_t *k, *v;
    size_t mask;
} amap;

void *tl_diff_aalloc(arena *a, size_t n);
amark tl_diff_amark_get(const arena *a);
void tl_diff_arelease(arena *a, amark m);
void tl_diff_afree(arena *a);
/* An amap for about n keys; keys UINT32_MAX are not allowed. */
void tl_diff_amap_init(arena *a, amap *m, size_t n);
size_t tl_diff_amap_slot(const amap *m, uint32_t key); /* the slot of key */
uint32_t tl_diff_amap_get(const amap *m, uint32_t key); /* UINT32_MAX when absent */
void tl_diff_amap_put(amap *m, uint32_t key, uint32_t v);

/* ---------------------------------------------------- the merge context */

/* One trace as the merge sees it: its events and tree, the top-root
 * overlay, and its names normalized (ids in ctx.npool). */
typedef struct side {
    const tl_event_store *es;
    const tl_tree *tr;
    tl_diff_overlay *ov;
    uint32_t *norm;  /* names id -> normalized id */
    uint32_t *strip; /* names id -> strip_details normalized id */
    uint8_t *graph;  /* names id -> a graph launch name */
} side;

/* An edit script: i indexes the first list, j the second. */
enum { OP_MATCH = 0, OP_DELETE = 1, OP_INSERT = 2 };

typedef struct op {
    uint32_t i, j; /* NONE when absent */
    uint8_t k;
} op;

typedef struct oplist {
    op *v;
    size_t n;
} oplist;

/* A list of one trace's UIDs. */
typedef struct ulist {
    uint32_t *v;
    size_t n;
} ulist;

/* memoised Wagner-Fischer results, keyed by the name sequences */
typedef struct wf_entry {
    uint64_t h;
    uint32_t *names; /* n1 then n2 */
    size_t n1, n2;
    op *ops;
    size_t nops;
    uint8_t strip;
} wf_entry;

/* One run's merge: the two sides, the nodes and child lists being built,
 * the arena of the node being merged, and the Wagner-Fischer memo. */
typedef struct ctx {
    tl_trace_diff *d;
    side s[2];
    tl_strpool npool;
    arena ar;
    TL_VEC(tl_merged_node) nodes;
    TL_VEC(uint32_t) kids;
    TL_VEC(uint32_t) next_of[2];
    uint32_t *first_of[2];
    /* WF memo */
    wf_entry *wf;
    size_t wf_cap, wf_n;
    uint8_t *bits; /* the DP's backtrack bits, reused */
    size_t bits_cap;
} ctx;

/* ------------------------------------------------- per-side accessors */

/* Every walk reads a tree through these (the overlay applied). */
static inline int tl_diff_is_gpu_path(const side *s, uint32_t u)
{
    return tl_is_gpu_cat(s->es->cat[u]) || tl_tree_has_gpus(s->tr, u);
}

static inline int tl_diff_is_dispatch(const side *s, uint32_t u)
{
    uint8_t c = s->es->cat[u];
    return (c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) && !s->graph[s->es->name[u]];
}

static inline int tl_diff_is_kernel(const side *s, uint32_t u)
{
    uint8_t c = s->es->cat[u];
    return c == TL_CAT_KERNEL || c == TL_CAT_GPU_MEMCPY;
}

static inline uint32_t tl_diff_nname(const side *s, uint32_t u) { return s->norm[s->es->name[u]]; }

static inline const uint32_t *tl_diff_kids_of(const side *s, uint32_t u, size_t *n)
{
    if (s->ov->kids_bits[u >> 6] >> (u & 63) & 1) {
        uint32_t c = tl_map_get(&s->ov->kids_of, u, 0);
        if (c != UINT32_MAX) u = c;
    }
    return tl_tree_children(s->tr, u, n);
}

static inline uint32_t tl_diff_parent_of(const side *s, uint32_t u)
{
    uint32_t p = s->tr->parent[u];
    if (p == NONE || !(s->ov->parent_bits[p >> 6] >> (p & 63) & 1)) return p;
    uint32_t r = tl_map_get(&s->ov->parent_of, p, 0);
    return r == UINT32_MAX ? p : r;
}

/* shared by the name normalisation and diff_stats, and by the hashes */
static inline int tl_diff_is_digit(int c) { return c >= '0' && c <= '9'; }

static inline uint64_t tl_diff_mix64(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

/* ---------------------------------------------------------- context.c */

/* GPU-path children of u (in the arena). */
ulist tl_diff_gpu_kids(ctx *c, const side *s, uint32_t u);
/* Stable sort of uids by ts (scratch in c's arena). */
void tl_diff_sort_by_ts(ctx *c, const side *s, uint32_t *v, size_t n);
/* get_children_with_missing of the pair (a, b). */
void tl_diff_children_with_missing(ctx *c, uint32_t a, uint32_t b, ulist *o1, ulist *o2);
/* collapse_single_gpu_child of u; kids: the GPU-path children where it stopped. */
uint32_t tl_diff_collapse(ctx *c, const side *s, uint32_t u, ulist *kids);

/* ------------------------------------------------------------ match.c */

/* WF of the (strip_details when strip) normalized names, then disambiguation. */
oplist tl_diff_aligned_wf(ctx *c, const ulist *c1, const ulist *c2, int strip, arena *memo);
/* Phase 2: positional when equal lengths and no dispatch, else aligned_wf. */
oplist tl_diff_align(ctx *c, const ulist *c1, const ulist *c2, arena *memo);
/* Phase 3: wrappers among the delete/insert pairs replaced by their GPU-path
 * children; 1 and the new lists when anything changed. */
int tl_diff_reconcile(ctx *c, const oplist *ops, const ulist *c1, const ulist *c2, ulist *r1, ulist *r2);

/* ------------------------------------------------------------ merge.c */

/* The merged node of the pair (a, b) (NONE: absent), made with its subtree
 * (memoised by the pair); memo holds the Wagner-Fischer memo's entries. */
uint32_t tl_diff_merge(ctx *c, uint32_t a, uint32_t b, arena *memo);
/* cpu_root_nodes in (ts, UID) order into *out (malloc'd); returns the count. */
size_t tl_diff_cpu_roots(const tl_trace *t, size_t **out);
/* _get_top_level_root of start, recording the re-parenting in s's overlay;
 * top: per event of s, its topmost ancestor once known (UINT32_MAX before). */
uint32_t tl_diff_top_root(side *s, uint32_t start, uint32_t *top);

/* ------------------------------------------------------- diff_stats.c */

/* Walks the merged tree from its roots: d->rows and d->n_rows, with the LCA
 * names in d->names (s: the two sides the tree was merged with). */
void tl_diff_collect_rows(tl_trace_diff *d, side *s);
/* The diff_stats Table of the rows. */
tl_table *tl_diff_stats_table(tl_trace_diff *d, const tl_diff_row *rows, size_t n);
/* The trace1 and trace2 rows of the Table are equal (source aside). */
int tl_diff_rows_identical(const tl_table *t);
/* diff_stats_unique_args_summary of the diff_stats Table. */
tl_table *tl_diff_unique_args_summary(const tl_table *ds);

/* ------------------------------------------------------- cpu_op_map.c */

/* cpu_op_map_trace1/2.json of the summary (source: "trace1" or "trace2"). */
char *tl_diff_cpu_op_map_side(const tl_table *s, const char *source);
/* cpu_op_map.json of diff_stats and the summary. */
char *tl_diff_cpu_op_map_json(const tl_table *ds, const tl_table *s, int identical);

#endif
