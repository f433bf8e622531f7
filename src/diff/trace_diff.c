/* trace_diff.c — TraceDiff (inference-and-comparative spec §2.2, §2.3).
 *
 * The merge walks both trees at once from the paired top roots. At every
 * pair of nodes the two child lists are aligned in phases (list collapse,
 * positional match or Wagner-Fischer with disambiguation of repeated names,
 * reconciliation of wrappers, canonicalisation of the leftovers) and the
 * alignment is recursed into. Everything a node needs lives in a stack arena
 * released when the node is done, so the merge allocates no memory per node;
 * Wagner-Fischer results are memoised by the two name sequences (repeated
 * layers give the same lists again and again). */
#include "trace_diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../report/launchers.h"
#include "../report/outfile.h"
#include "../trace/timeline.h"
#include "../util/clock.h"
#include "../util/msort.h"
#include "../util/pyfmt.h"
#include "../util/vec.h"

#define KT_SUM "Kernel Time (\xc2\xb5s)_sum"
#define NONE TL_NOUID

/* ================================================================ arena */

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

static void *aalloc(arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (!n) n = 8;
    if (!a->cur || a->cur->used + n > a->cur->cap) {
        ablock *b = NULL;
        if (a->spare && a->spare->cap >= n) {
            b = a->spare;
            a->spare = NULL;
        } else {
            size_t cap = n > ((size_t)1 << 20) ? n : ((size_t)1 << 20);
            b = tl_xmalloc(sizeof *b + cap);
            b->cap = cap;
        }
        b->used = 0;
        b->prev = a->cur;
        a->cur = b;
    }
    void *p = (unsigned char *)a->cur->data + a->cur->used;
    a->cur->used += n;
    return p;
}

static amark amark_get(const arena *a)
{
    amark m = {a->cur, a->cur ? a->cur->used : 0};
    return m;
}

static void arelease(arena *a, amark m)
{
    while (a->cur != m.b) {
        ablock *p = a->cur->prev;
        if (!a->spare) a->spare = a->cur;
        else if (a->spare->cap < a->cur->cap) {
            free(a->spare);
            a->spare = a->cur;
        } else free(a->cur);
        a->cur = p;
    }
    if (a->cur) a->cur->used = m.used;
}

static void afree(arena *a)
{
    arelease(a, (amark){NULL, 0});
    free(a->spare);
    a->spare = NULL;
}

/* A small open-addressing set/map of uint32 keys in the arena. */
typedef struct amap {
    uint32_t *k, *v;
    size_t mask;
} amap;

static void amap_init(arena *a, amap *m, size_t n)
{
    size_t cap = 8;
    while (cap < 2 * n + 2) cap *= 2;
    m->k = aalloc(a, cap * sizeof *m->k);
    m->v = aalloc(a, cap * sizeof *m->v);
    memset(m->k, 0xff, cap * sizeof *m->k);
    m->mask = cap - 1;
}

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* Slot of key (UINT32_MAX keys are not allowed). */
static size_t amap_slot(const amap *m, uint32_t key)
{
    size_t i = hash32(key) & m->mask;
    while (m->k[i] != UINT32_MAX && m->k[i] != key) i = (i + 1) & m->mask;
    return i;
}

static uint32_t amap_get(const amap *m, uint32_t key)
{
    size_t i = amap_slot(m, key);
    return m->k[i] == key ? m->v[i] : UINT32_MAX;
}

static void amap_put(amap *m, uint32_t key, uint32_t v)
{
    size_t i = amap_slot(m, key);
    m->k[i] = key;
    m->v[i] = v;
}

/* ======================================================= normalisation */

static int is_hex(int c) { return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'f'); }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
/* Python's \s on the ASCII range (str.isspace) */
static int is_space(int c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

void tl_diff_normalize_name(const char *s, size_t n, int strip, tl_sbuf *out)
{
    tl_sbuf a, b;
    tl_sb_init(&a);
    tl_sb_init(&b);
    /* 0x[0-9a-fA-F]+ -> 0xXXXX */
    for (size_t i = 0; i < n;) {
        if (s[i] == '0' && i + 2 < n + 0 && s[i + 1] == 'x' && is_hex((unsigned char)s[i + 2])) {
            tl_sb_puts(&a, "0xXXXX");
            i += 2;
            while (i < n && is_hex((unsigned char)s[i])) i++;
        } else {
            tl_sb_putc(&a, s[i++]);
        }
    }
    /* \.py\(\d+\): -> .py: */
    const char *p = a.s ? a.s : "";
    size_t m = a.len;
    for (size_t i = 0; i < m;) {
        if (i + 4 < m && !memcmp(p + i, ".py(", 4) && is_digit((unsigned char)p[i + 4])) {
            size_t k = i + 4;
            while (k < m && is_digit((unsigned char)p[k])) k++;
            if (k + 1 < m && p[k] == ')' && p[k + 1] == ':') {
                tl_sb_puts(&b, ".py:");
                i = k + 2;
                continue;
            }
        }
        tl_sb_putc(&b, p[i++]);
    }
    p = b.s ? b.s : "";
    m = b.len;
    tl_sb_clear(&a);
    if (strip) {
        /* :\s+\S+$ removed ($: the end, or before a final newline) */
        size_t end = m, cut = m;
        int nl = m && p[m - 1] == '\n';
        for (size_t i = 0; i < m && cut == m; i++) {
            if (p[i] != ':') continue;
            size_t k = i + 1;
            while (k < m && is_space((unsigned char)p[k])) k++;
            if (k == i + 1) continue;
            size_t e = k;
            while (e < m && !is_space((unsigned char)p[e])) e++;
            if (e == k) continue;
            if (e == m || (nl && e == m - 1)) {
                cut = i;
                end = e;
            }
        }
        tl_sb_putn(&a, p, cut);
        if (cut < m) tl_sb_putn(&a, p + end, m - end);
        /* ^.*\/([^/]+\.py)$ -> the file name */
        const char *q = a.s ? a.s : "";
        size_t qm = a.len, slash = SIZE_MAX;
        for (size_t i = 0; i < qm; i++)
            if (q[i] == '/') slash = i;
        int done = 0;
        if (slash != SIZE_MAX && !memchr(q, '\n', slash)) {
            size_t tail = slash + 1, tend = qm;
            int has_nl = qm && q[qm - 1] == '\n';
            /* $ at the end, else before a final newline */
            for (int pass = 0; pass < 2 && !done; pass++) {
                size_t e = pass == 0 ? tend : (has_nl ? tend - 1 : SIZE_MAX);
                if (e == SIZE_MAX || e < tail + 4) continue;
                if (memcmp(q + e - 3, ".py", 3) != 0) continue;
                tl_sb_clear(&b);
                tl_sb_putn(&b, q + tail, qm - tail);
                done = 1;
            }
        }
        if (!done) {
            tl_sb_clear(&b);
            tl_sb_putn(&b, q, qm);
        }
        p = b.s ? b.s : "";
        m = b.len;
    }
    if ((m == 21 && !memcmp(p, "hipModuleLaunchKernel", 21)) || (m == 14 && !memcmp(p, "cuLaunchKernel", 14)))
        tl_sb_puts(out, "__kernel_launch__");
    else
        tl_sb_putn(out, p, m);
    tl_sb_free(&a);
    tl_sb_free(&b);
}

/* ============================================================ context */

typedef struct side {
    const tl_event_store *es;
    const tl_tree *tr;
    tl_diff_overlay *ov;
    uint32_t *norm;  /* names id -> normalized id */
    uint32_t *strip; /* names id -> strip_details normalized id */
    uint8_t *graph;  /* names id -> a graph launch name */
} side;

enum { OP_MATCH = 0, OP_DELETE = 1, OP_INSERT = 2 };

typedef struct op {
    uint32_t i, j; /* NONE when absent */
    uint8_t k;
} op;

typedef struct oplist {
    op *v;
    size_t n;
} oplist;

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

static int is_gpu_path(const side *s, uint32_t u)
{
    return tl_is_gpu_cat(s->es->cat[u]) || s->tr->gpu_off[u + 1] > s->tr->gpu_off[u];
}

static int is_dispatch(const side *s, uint32_t u)
{
    uint8_t c = s->es->cat[u];
    return (c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) && !s->graph[s->es->name[u]];
}

static int is_kernel(const side *s, uint32_t u)
{
    uint8_t c = s->es->cat[u];
    return c == TL_CAT_KERNEL || c == TL_CAT_GPU_MEMCPY;
}

static int64_t ts_of(const side *s, uint32_t u) { return (s->es->flags[u] & TL_F_TS) ? s->es->ts[u] : 0; }

static uint32_t nname(const side *s, uint32_t u) { return s->norm[s->es->name[u]]; }

static const uint32_t *kids_of(const side *s, uint32_t u, size_t *n)
{
    if (s->ov->kids_of.n) {
        uint32_t c = tl_map_get(&s->ov->kids_of, u, 0);
        if (c != UINT32_MAX) u = c;
    }
    *n = s->tr->child_off[u + 1] - s->tr->child_off[u];
    return s->tr->child + s->tr->child_off[u];
}

static uint32_t parent_of(const side *s, uint32_t u)
{
    uint32_t p = s->tr->parent[u];
    if (p == NONE || !s->ov->parent_of.n) return p;
    uint32_t r = tl_map_get(&s->ov->parent_of, p, 0);
    return r == UINT32_MAX ? p : r;
}

/* GPU-path children of u into the arena. */
static ulist gpu_kids(ctx *c, const side *s, uint32_t u)
{
    size_t n;
    const uint32_t *ch = kids_of(s, u, &n);
    ulist l = {aalloc(&c->ar, (n + 1) * sizeof(uint32_t)), 0};
    for (size_t i = 0; i < n; i++)
        if (is_gpu_path(s, ch[i])) l.v[l.n++] = ch[i];
    return l;
}

/* Stable sort of uids by ts (insertion sort for short lists, else merge). */
static void sort_by_ts(ctx *c, const side *s, uint32_t *v, size_t n)
{
    if (n < 2) return;
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = v[i];
            int64_t t = ts_of(s, x);
            size_t j = i;
            while (j > 0 && ts_of(s, v[j - 1]) > t) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return;
    }
    amark m = amark_get(&c->ar);
    uint32_t *tmp = aalloc(&c->ar, n * sizeof *tmp);
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) tmp[k++] = ts_of(s, v[b]) < ts_of(s, v[a]) ? v[b++] : v[a++];
            while (a < mid) tmp[k++] = v[a++];
            while (b < hi) tmp[k++] = v[b++];
        }
        memcpy(v, tmp, n * sizeof *v);
    }
    arelease(&c->ar, m);
}

/* get_children_with_missing: GPU-path children of each side, plus, for a
 * name GPU-path on one side only, the other side's last child of that name;
 * each list sorted by ts. */
static void children_with_missing(ctx *c, uint32_t a, uint32_t b, ulist *o1, ulist *o2)
{
    const side *s1 = &c->s[0], *s2 = &c->s[1];
    size_t na = 0, nb = 0;
    const uint32_t *all1 = a != NONE ? kids_of(s1, a, &na) : NULL;
    const uint32_t *all2 = b != NONE ? kids_of(s2, b, &nb) : NULL;
    ulist g1 = {aalloc(&c->ar, (na + nb + 1) * sizeof(uint32_t)), 0};
    ulist g2 = {aalloc(&c->ar, (na + nb + 1) * sizeof(uint32_t)), 0};
    for (size_t i = 0; i < na; i++)
        if (is_gpu_path(s1, all1[i])) g1.v[g1.n++] = all1[i];
    for (size_t i = 0; i < nb; i++)
        if (is_gpu_path(s2, all2[i])) g2.v[g2.n++] = all2[i];
    if (na && nb) {
        amark m = amark_get(&c->ar);
        /* name -> bit 1: GPU-path on side 1, 2: on side 2 */
        amap gn, last1, last2;
        amap_init(&c->ar, &gn, g1.n + g2.n);
        amap_init(&c->ar, &last1, na);
        amap_init(&c->ar, &last2, nb);
        for (size_t i = 0; i < g1.n; i++) {
            uint32_t k = nname(s1, g1.v[i]), o = amap_get(&gn, k);
            amap_put(&gn, k, (o == UINT32_MAX ? 0 : o) | 1);
        }
        for (size_t i = 0; i < g2.n; i++) {
            uint32_t k = nname(s2, g2.v[i]), o = amap_get(&gn, k);
            amap_put(&gn, k, (o == UINT32_MAX ? 0 : o) | 2);
        }
        for (size_t i = 0; i < na; i++) amap_put(&last1, nname(s1, all1[i]), all1[i]);
        for (size_t i = 0; i < nb; i++) amap_put(&last2, nname(s2, all2[i]), all2[i]);
        size_t n1 = g1.n, n2 = g2.n;
        /* names on one side only, in the order they first appear there */
        for (size_t i = 0; i < n1; i++) {
            uint32_t k = nname(s1, g1.v[i]);
            size_t sl = amap_slot(&gn, k);
            if (gn.v[sl] != 1) continue;
            gn.v[sl] = 0; /* once */
            uint32_t x = amap_get(&last2, k);
            if (x != UINT32_MAX) g2.v[g2.n++] = x;
        }
        for (size_t i = 0; i < n2; i++) {
            uint32_t k = nname(s2, g2.v[i]);
            size_t sl = amap_slot(&gn, k);
            if (gn.v[sl] != 2) continue;
            gn.v[sl] = 0;
            uint32_t x = amap_get(&last1, k);
            if (x != UINT32_MAX) g1.v[g1.n++] = x;
        }
        arelease(&c->ar, m);
    }
    sort_by_ts(c, s1, g1.v, g1.n);
    sort_by_ts(c, s2, g2.v, g2.n);
    *o1 = g1;
    *o2 = g2;
}

/* collapse_single_gpu_child: descend through nodes with one GPU-path child;
 * stop at a dispatch, at a cpu_op with a dispatch child (kids empty), or at
 * a node whose GPU-path child count is not 1 (kids: those children). */
static uint32_t collapse(ctx *c, const side *s, uint32_t u, ulist *kids)
{
    uint32_t cur = u;
    kids->v = NULL;
    kids->n = 0;
    for (;;) {
        if (is_dispatch(s, cur)) break;
        size_t n;
        const uint32_t *ch = kids_of(s, cur, &n);
        if (s->es->cat[cur] == TL_CAT_CPU_OP) {
            int cr = 0;
            for (size_t i = 0; i < n && !cr; i++) cr = is_dispatch(s, ch[i]);
            if (cr) break;
        }
        size_t ng = 0;
        uint32_t one = NONE;
        for (size_t i = 0; i < n; i++)
            if (is_gpu_path(s, ch[i])) {
                ng++;
                one = ch[i];
            }
        if (ng != 1) {
            *kids = gpu_kids(c, s, cur);
            break;
        }
        cur = one;
    }
    return cur;
}

/* ====================================================== Wagner-Fischer */

static uint64_t mix64(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

/* The edit script of names a (m) and b (n): dp with unit costs; backtrack
 * from (m, n): equal names -> match, else delete when i > 0 and (j == 0 or
 * dp[i][j] == dp[i-1][j] + 1), else insert. */
static oplist wf_compute(ctx *c, const uint32_t *a, size_t m, const uint32_t *b, size_t n, arena *out)
{
    size_t k = 0; /* the common suffix is matched by the first backtrack steps */
    while (k < m && k < n && a[m - 1 - k] == b[n - 1 - k]) k++;
    size_t M = m - k, N = n - k;
    oplist r = {aalloc(out, (m + n + 1) * sizeof(op)), 0};
    if (M && N) {
        size_t need = (M * N + 7) / 8;
        if (need > c->bits_cap) {
            free(c->bits);
            c->bits = tl_xmalloc(need);
            c->bits_cap = need;
        }
        memset(c->bits, 0, need);
        amark mk = amark_get(&c->ar);
        uint32_t *prev = aalloc(&c->ar, (N + 1) * sizeof *prev), *cur = aalloc(&c->ar, (N + 1) * sizeof *cur);
        for (size_t j = 0; j <= N; j++) prev[j] = (uint32_t)j;
        for (size_t i = 1; i <= M; i++) {
            cur[0] = (uint32_t)i;
            uint32_t ai = a[i - 1];
            size_t row = (i - 1) * N;
            for (size_t j = 1; j <= N; j++) {
                uint32_t del = prev[j] + 1, ins = cur[j - 1] + 1, sub = prev[j - 1] + (ai == b[j - 1] ? 0 : 1);
                uint32_t v = del < ins ? del : ins;
                if (sub < v) v = sub;
                cur[j] = v;
                if (v == del) {
                    size_t bit = row + (j - 1);
                    c->bits[bit >> 3] |= (uint8_t)(1u << (bit & 7));
                }
            }
            uint32_t *t = prev;
            prev = cur;
            cur = t;
        }
        arelease(&c->ar, mk);
    }
    /* backtrack (reversed into r) */
    size_t i = M, j = N;
    op *rev = r.v;
    size_t nr = 0;
    while (i > 0 || j > 0) {
        if (i > 0 && j > 0 && a[i - 1] == b[j - 1]) {
            rev[nr++] = (op){(uint32_t)(i - 1), (uint32_t)(j - 1), OP_MATCH};
            i--;
            j--;
        } else if (i > 0 && (j == 0 || ((c->bits[((i - 1) * N + (j - 1)) >> 3] >> (((i - 1) * N + (j - 1)) & 7)) & 1))) {
            rev[nr++] = (op){(uint32_t)(i - 1), NONE, OP_DELETE};
            i--;
        } else {
            rev[nr++] = (op){NONE, (uint32_t)(j - 1), OP_INSERT};
            j--;
        }
    }
    for (size_t x = 0, y = nr; x + 1 < y; x++, y--) {
        op t = rev[x];
        rev[x] = rev[y - 1];
        rev[y - 1] = t;
    }
    for (size_t s = 0; s < k; s++) rev[nr++] = (op){(uint32_t)(M + s), (uint32_t)(N + s), OP_MATCH};
    r.n = nr;
    return r;
}

static oplist wf(ctx *c, const side *s1, const uint32_t *u1, size_t m, const side *s2, const uint32_t *u2, size_t n,
                 int strip, arena *memo_ar)
{
    amark mk = amark_get(&c->ar);
    uint32_t *a = aalloc(&c->ar, (m + 1) * sizeof *a), *b = aalloc(&c->ar, (n + 1) * sizeof *b);
    uint64_t h = mix64(0x12345u + (uint64_t)strip, m);
    for (size_t i = 0; i < m; i++) {
        a[i] = strip ? s1->strip[s1->es->name[u1[i]]] : nname(s1, u1[i]);
        h = mix64(h, a[i]);
    }
    h = mix64(h, 0xabcdefu + n);
    for (size_t j = 0; j < n; j++) {
        b[j] = strip ? s2->strip[s2->es->name[u2[j]]] : nname(s2, u2[j]);
        h = mix64(h, b[j]);
    }
    c->d->wf_runs++;
    if (c->wf_cap) {
        size_t i = h & (c->wf_cap - 1);
        while (c->wf[i].names) {
            wf_entry *e = &c->wf[i];
            if (e->h == h && e->n1 == m && e->n2 == n && e->strip == strip && !memcmp(e->names, a, m * sizeof *a) &&
                !memcmp(e->names + m, b, n * sizeof *b)) {
                c->d->wf_memo_hits++;
                arelease(&c->ar, mk);
                oplist r = {aalloc(&c->ar, (e->nops + 1) * sizeof(op)), e->nops};
                memcpy(r.v, e->ops, e->nops * sizeof(op));
                return r;
            }
            i = (i + 1) & (c->wf_cap - 1);
        }
    }
    oplist mem = wf_compute(c, a, m, b, n, memo_ar);
    /* store */
    if (2 * (c->wf_n + 1) > c->wf_cap) {
        size_t ncap = c->wf_cap ? 2 * c->wf_cap : 1024;
        wf_entry *nv = tl_xcalloc(ncap, sizeof *nv);
        for (size_t i = 0; i < c->wf_cap; i++) {
            if (!c->wf[i].names) continue;
            size_t k = c->wf[i].h & (ncap - 1);
            while (nv[k].names) k = (k + 1) & (ncap - 1);
            nv[k] = c->wf[i];
        }
        free(c->wf);
        c->wf = nv;
        c->wf_cap = ncap;
    }
    uint32_t *names = aalloc(memo_ar, (m + n + 1) * sizeof *names);
    memcpy(names, a, m * sizeof *a);
    memcpy(names + m, b, n * sizeof *b);
    size_t i = h & (c->wf_cap - 1);
    while (c->wf[i].names) i = (i + 1) & (c->wf_cap - 1);
    c->wf[i] = (wf_entry){h, names, m, n, mem.v, mem.n, (uint8_t)strip};
    c->wf_n++;
    arelease(&c->ar, mk);
    oplist r = {aalloc(&c->ar, (mem.n + 1) * sizeof(op)), mem.n};
    memcpy(r.v, mem.v, mem.n * sizeof(op));
    return r;
}

/* ====================================================== disambiguation */

/* BFS signature of u: per level (1..4) the sorted normalized names of the
 * GPU-path children of the frontier; stops after an empty level. */
typedef struct sig {
    uint32_t *names; /* all levels' names, level by level */
    uint32_t off[5]; /* level l: names[off[l] .. off[l+1]) */
    uint32_t nlev;
    uint64_t h;
} sig;

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

static void sig_of(ctx *c, const side *s, uint32_t u, sig *g)
{
    TL_VEC(uint32_t) frontier = {0}, next = {0}, names = {0};
    TL_PUSH(frontier, u);
    g->nlev = 0;
    g->off[0] = 0;
    for (int d = 0; d < 4; d++) {
        next.n = 0;
        size_t start = names.n;
        for (size_t f = 0; f < frontier.n; f++) {
            size_t n;
            const uint32_t *ch = kids_of(s, frontier.v[f], &n);
            for (size_t i = 0; i < n; i++)
                if (is_gpu_path(s, ch[i])) {
                    TL_PUSH(next, ch[i]);
                    TL_PUSH(names, nname(s, ch[i]));
                }
        }
        if (names.n - start > 1) qsort(names.v + start, names.n - start, sizeof *names.v, cmp_u32);
        g->nlev++;
        g->off[g->nlev] = (uint32_t)names.n;
        if (!next.n) break;
        uint32_t *t = frontier.v;
        size_t tc = frontier.cap;
        frontier.v = next.v;
        frontier.n = next.n;
        frontier.cap = next.cap;
        next.v = t;
        next.cap = tc;
    }
    g->names = aalloc(&c->ar, (names.n + 1) * sizeof *g->names);
    if (names.n) memcpy(g->names, names.v, names.n * sizeof *names.v);
    uint64_t h = mix64(0x5151u, g->nlev);
    for (uint32_t l = 0; l < g->nlev; l++) {
        h = mix64(h, g->off[l + 1] - g->off[l]);
        for (uint32_t k = g->off[l]; k < g->off[l + 1]; k++) h = mix64(h, g->names[k]);
    }
    g->h = h;
    free(frontier.v);
    free(next.v);
    free(names.v);
}

static int level_eq(const sig *a, uint32_t la, const sig *b, uint32_t lb)
{
    uint32_t na = la < a->nlev ? a->off[la + 1] - a->off[la] : 0;
    uint32_t nb = lb < b->nlev ? b->off[lb + 1] - b->off[lb] : 0;
    if (na != nb) return 0;
    return !na || !memcmp(a->names + a->off[la], b->names + b->off[lb], na * sizeof(uint32_t));
}

static int sig_eq(const sig *a, const sig *b)
{
    if (a->h != b->h || a->nlev != b->nlev) return 0;
    for (uint32_t l = 0; l < a->nlev; l++)
        if (!level_eq(a, l, b, l)) return 0;
    return 1;
}

/* (levels equal before the first difference, multiset overlap there),
 * packed so that a larger value is a better match. */
static uint64_t match_depth(const sig *a, const sig *b)
{
    uint32_t maxd = a->nlev > b->nlev ? a->nlev : b->nlev;
    for (uint32_t d = 0; d < maxd; d++) {
        if (level_eq(a, d, b, d)) continue;
        uint64_t ov = 0;
        if (d < a->nlev && d < b->nlev) {
            const uint32_t *x = a->names + a->off[d], *y = b->names + b->off[d];
            uint32_t nx = a->off[d + 1] - a->off[d], ny = b->off[d + 1] - b->off[d], i = 0, j = 0;
            while (i < nx && j < ny) {
                if (x[i] == y[j]) {
                    ov++;
                    i++;
                    j++;
                } else if (x[i] < y[j]) i++;
                else j++;
            }
        }
        return ((uint64_t)d << 40) | ov;
    }
    return (uint64_t)maxd << 40;
}

/* Classes of equal signatures: cl[p] the class of sg[p], rep[k] the first
 * member of class k; returns the number of classes. */
static size_t classify(ctx *c, const sig *sg, size_t n, uint32_t *cl, uint32_t *rep)
{
    amark m = amark_get(&c->ar);
    amap first; /* 32 bits of the hash -> first class with it */
    amap_init(&c->ar, &first, n);
    uint32_t *next = aalloc(&c->ar, (n + 1) * sizeof *next); /* class -> next class with the same key */
    size_t k = 0;
    for (size_t p = 0; p < n; p++) {
        uint32_t key = (uint32_t)(sg[p].h ^ (sg[p].h >> 32));
        if (key == UINT32_MAX) key = 0;
        uint32_t r = amap_get(&first, key), last = UINT32_MAX;
        while (r != UINT32_MAX && !sig_eq(&sg[rep[r]], &sg[p])) {
            last = r;
            r = next[r];
        }
        if (r == UINT32_MAX) {
            r = (uint32_t)k++;
            rep[r] = (uint32_t)p;
            next[r] = UINT32_MAX;
            if (last == UINT32_MAX) amap_put(&first, key, r);
            else next[last] = r;
        }
        cl[p] = r;
    }
    arelease(&c->ar, m);
    return k;
}

static int cmp_u64_desc(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a < b) - (a > b);
}

static int cmp_op_match(const void *x, const void *y)
{
    const op *a = x, *b = y;
    if (a->i != b->i) return (a->i > b->i) - (a->i < b->i);
    return (a->j > b->j) - (a->j < b->j);
}

/* _disambiguate_same_name_candidates: for every name on both sides, in at
 * least one match and repeated on one side, re-pair its nodes greedily by
 * BFS-signature similarity (ties: WF's pairs, then by position). */
static oplist disambiguate(ctx *c, oplist ops, const ulist *c1, const ulist *c2)
{
    const side *s1 = &c->s[0], *s2 = &c->s[1];
    if (!ops.n) return ops;
    amark mk = amark_get(&c->ar);
    /* groups by normalized name */
    amap gix;
    amap_init(&c->ar, &gix, ops.n);
    typedef struct grp {
        uint32_t name, n1, n2, matched, f1, f2; /* f: first index in the chains */
    } grp;
    grp *g = aalloc(&c->ar, (ops.n * 2 + 1) * sizeof *g);
    size_t ng = 0;
    uint32_t *next1 = aalloc(&c->ar, (c1->n + 1) * sizeof *next1), *next2 = aalloc(&c->ar, (c2->n + 1) * sizeof *next2);
    uint32_t *last1 = aalloc(&c->ar, (ops.n * 2 + 1) * sizeof *last1), *last2 = aalloc(&c->ar, (ops.n * 2 + 1) * sizeof *last2);
    uint32_t *wfj = aalloc(&c->ar, (c1->n + 1) * sizeof *wfj);
    for (size_t i = 0; i < c1->n; i++) wfj[i] = NONE;
    for (size_t k = 0; k < ops.n; k++) {
        const op *o = &ops.v[k];
        for (int side_ = 0; side_ < 2; side_++) {
            uint32_t idx = side_ == 0 ? o->i : o->j;
            if (idx == NONE) continue;
            uint32_t name = side_ == 0 ? nname(s1, c1->v[idx]) : nname(s2, c2->v[idx]);
            uint32_t gi = amap_get(&gix, name);
            if (gi == UINT32_MAX) {
                gi = (uint32_t)ng++;
                g[gi] = (grp){name, 0, 0, 0, NONE, NONE};
                amap_put(&gix, name, gi);
            }
            if (o->k == OP_MATCH) g[gi].matched = 1;
            if (side_ == 0) {
                if (g[gi].f1 == NONE) g[gi].f1 = idx;
                else next1[last1[gi]] = idx;
                next1[idx] = NONE;
                last1[gi] = idx;
                g[gi].n1++;
            } else {
                if (g[gi].f2 == NONE) g[gi].f2 = idx;
                else next2[last2[gi]] = idx;
                next2[idx] = NONE;
                last2[gi] = idx;
                g[gi].n2++;
            }
        }
        if (o->k == OP_MATCH) wfj[o->i] = o->j;
    }
    uint8_t *h1 = aalloc(&c->ar, c1->n + 1), *h2 = aalloc(&c->ar, c2->n + 1);
    memset(h1, 0, c1->n + 1);
    memset(h2, 0, c2->n + 1);
    uint8_t *as1 = aalloc(&c->ar, c1->n + 1), *as2 = aalloc(&c->ar, c2->n + 1);
    memset(as1, 0, c1->n + 1);
    memset(as2, 0, c2->n + 1);
    op *newm = aalloc(&c->ar, (c1->n + 1) * sizeof *newm);
    size_t nnew = 0;
    int any = 0, outside = 0;
    for (size_t gi = 0; gi < ng; gi++) {
        grp *G = &g[gi];
        if (!G->n1 || !G->n2 || !G->matched || (G->n1 < 2 && G->n2 < 2)) continue;
        any = 1;
        c->d->disambiguations++;
        /* indices ascending */
        uint32_t *i1 = aalloc(&c->ar, G->n1 * sizeof *i1), *i2 = aalloc(&c->ar, G->n2 * sizeof *i2);
        size_t n1 = 0, n2 = 0;
        for (uint32_t x = G->f1; x != NONE; x = next1[x]) i1[n1++] = x;
        for (uint32_t x = G->f2; x != NONE; x = next2[x]) i2[n2++] = x;
        qsort(i1, n1, sizeof *i1, cmp_u32);
        qsort(i2, n2, sizeof *i2, cmp_u32);
        for (size_t p = 0; p < n1; p++) h1[i1[p]] = 1;
        for (size_t q = 0; q < n2; q++) h2[i2[q]] = 1;
        /* signatures, grouped into classes of equal signatures */
        sig *sg1 = aalloc(&c->ar, n1 * sizeof *sg1), *sg2 = aalloc(&c->ar, n2 * sizeof *sg2);
        uint32_t *cl1 = aalloc(&c->ar, n1 * sizeof *cl1), *cl2 = aalloc(&c->ar, n2 * sizeof *cl2);
        uint32_t *rep1 = aalloc(&c->ar, n1 * sizeof *rep1), *rep2 = aalloc(&c->ar, n2 * sizeof *rep2);
        for (size_t p = 0; p < n1; p++) sig_of(c, s1, c1->v[i1[p]], &sg1[p]);
        for (size_t q = 0; q < n2; q++) sig_of(c, s2, c2->v[i2[q]], &sg2[q]);
        size_t k1 = classify(c, sg1, n1, cl1, rep1), k2 = classify(c, sg2, n2, cl2, rep2);
        size_t want = n1 < n2 ? n1 : n2, got = 0;
        if (k1 * k2 > ((size_t)1 << 22)) {
            /* millions of distinct signature pairs under one name: WF's pairing is kept */
            for (size_t p = 0; p < n1 && got < want; p++) {
                uint32_t i = i1[p], j = wfj[i];
                if (j == NONE || !h2[j] || as2[j]) continue;
                as1[i] = as2[j] = 1;
                newm[nnew++] = (op){i, j, OP_MATCH};
                got++;
            }
            continue;
        }
        uint64_t *score = aalloc(&c->ar, k1 * k2 * sizeof *score), *distinct = aalloc(&c->ar, k1 * k2 * sizeof *distinct);
        for (size_t x = 0; x < k1; x++)
            for (size_t y = 0; y < k2; y++) distinct[x * k2 + y] = score[x * k2 + y] = match_depth(&sg1[rep1[x]], &sg2[rep2[y]]);
        size_t nd = k1 * k2;
        qsort(distinct, nd, sizeof *distinct, cmp_u64_desc);
        size_t w = 0;
        for (size_t x = 0; x < nd; x++)
            if (!w || distinct[w - 1] != distinct[x]) distinct[w++] = distinct[x];
        nd = w;
        /* position of an index in i2 (for its class) */
        amap pos2;
        amap_init(&c->ar, &pos2, n2);
        for (size_t q = 0; q < n2; q++) amap_put(&pos2, i2[q], (uint32_t)q);
        for (size_t sd = 0; sd < nd && got < want; sd++) {
            uint64_t sv = distinct[sd];
            /* WF's own pairs first */
            for (size_t p = 0; p < n1 && got < want; p++) {
                uint32_t i = i1[p], j = wfj[i];
                if (j == NONE || !h2[j] || as1[i] || as2[j]) continue;
                uint32_t q = amap_get(&pos2, j);
                if (q == UINT32_MAX || score[cl1[p] * k2 + cl2[q]] != sv) continue;
                as1[i] = as2[j] = 1;
                newm[nnew++] = (op){i, j, OP_MATCH};
                got++;
            }
            /* then by position */
            for (size_t p = 0; p < n1 && got < want; p++) {
                uint32_t i = i1[p];
                if (as1[i]) continue;
                for (size_t q = 0; q < n2; q++) {
                    uint32_t j = i2[q];
                    if (as2[j] || score[cl1[p] * k2 + cl2[q]] != sv) continue;
                    as1[i] = as2[j] = 1;
                    newm[nnew++] = (op){i, j, OP_MATCH};
                    got++;
                    break;
                }
            }
        }
    }
    if (!any) {
        arelease(&c->ar, mk);
        return ops;
    }
    for (size_t k = 0; k < nnew; k++)
        if (wfj[newm[k].i] != newm[k].j) outside = 1;
    if (!outside) {
        arelease(&c->ar, mk);
        return ops;
    }
    /* kept ops, then the new matches, then the leftovers (by index) */
    qsort(newm, nnew, sizeof *newm, cmp_op_match);
    op *fin = aalloc(&c->ar, (ops.n + c1->n + c2->n + 1) * sizeof *fin);
    size_t nf = 0;
    for (size_t k = 0; k < ops.n; k++) {
        const op *o = &ops.v[k];
        int handled = (o->k == OP_MATCH && (h1[o->i] || h2[o->j])) || (o->k == OP_DELETE && h1[o->i]) ||
                      (o->k == OP_INSERT && h2[o->j]);
        if (!handled) fin[nf++] = *o;
    }
    for (size_t k = 0; k < nnew; k++) fin[nf++] = newm[k];
    for (size_t i = 0; i < c1->n; i++)
        if (h1[i] && !as1[i]) fin[nf++] = (op){(uint32_t)i, NONE, OP_DELETE};
    for (size_t j = 0; j < c2->n; j++)
        if (h2[j] && !as2[j]) fin[nf++] = (op){NONE, (uint32_t)j, OP_INSERT};
    /* the result outlives this frame's scratch: copy below the mark */
    op *keep = tl_xmalloc((nf + 1) * sizeof *keep);
    memcpy(keep, fin, nf * sizeof *fin);
    arelease(&c->ar, mk);
    oplist r = {aalloc(&c->ar, (nf + 1) * sizeof(op)), nf};
    memcpy(r.v, keep, nf * sizeof *keep);
    free(keep);
    return r;
}

/* WF then disambiguation (aligned_wf). */
static oplist aligned_wf(ctx *c, const ulist *c1, const ulist *c2, int strip, arena *memo)
{
    oplist o = wf(c, &c->s[0], c1->v, c1->n, &c->s[1], c2->v, c2->n, strip, memo);
    return disambiguate(c, o, c1, c2);
}

static int any_dispatch(const side *s, const ulist *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (is_dispatch(s, l->v[i])) return 1;
    return 0;
}

/* Phase 2 logic: positional when equal lengths and no dispatch, else WF. */
static oplist align(ctx *c, const ulist *c1, const ulist *c2, arena *memo)
{
    if (c1->n == c2->n && !any_dispatch(&c->s[0], c1) && !any_dispatch(&c->s[1], c2)) {
        oplist o = {aalloc(&c->ar, (c1->n + 1) * sizeof(op)), c1->n};
        for (size_t i = 0; i < c1->n; i++) o.v[i] = (op){(uint32_t)i, (uint32_t)i, OP_MATCH};
        return o;
    }
    return aligned_wf(c, c1, c2, 0, memo);
}

/* ======================================================== reconcile */

/* Phase 3: substitute wrapper nodes among the delete/insert pairs by their
 * GPU-path children. Returns 1 and the new lists when anything changed. */
static int reconcile(ctx *c, const oplist *ops, const ulist *c1, const ulist *c2, ulist *r1, ulist *r2)
{
    const side *s1 = &c->s[0], *s2 = &c->s[1];
    size_t nd = 0, ni = 0;
    for (size_t k = 0; k < ops->n; k++) {
        if (ops->v[k].k == OP_DELETE) nd++;
        if (ops->v[k].k == OP_INSERT) ni++;
    }
    if (!nd || !ni) return 0;
    /* the pairs skip kernels and dispatches (graph launches exempt) on either side */
    uint32_t *D = aalloc(&c->ar, nd * sizeof *D), *I = aalloc(&c->ar, ni * sizeof *I);
    size_t dn = 0, in = 0;
    for (size_t k = 0; k < ops->n; k++) {
        const op *o = &ops->v[k];
        if (o->k == OP_DELETE) {
            uint32_t u = c1->v[o->i];
            uint8_t cat = s1->es->cat[u];
            if ((cat == TL_CAT_KERNEL || cat == TL_CAT_CUDA_RUNTIME || cat == TL_CAT_CUDA_DRIVER) && !s1->graph[s1->es->name[u]])
                continue;
            D[dn++] = o->i;
        } else if (o->k == OP_INSERT) {
            uint32_t u = c2->v[o->j];
            uint8_t cat = s2->es->cat[u];
            if ((cat == TL_CAT_KERNEL || cat == TL_CAT_CUDA_RUNTIME || cat == TL_CAT_CUDA_DRIVER) && !s2->graph[s2->es->name[u]])
                continue;
            I[in++] = o->j;
        }
    }
    if (!dn || !in) return 0;
    ulist *imm1 = aalloc(&c->ar, dn * sizeof *imm1), *imm2 = aalloc(&c->ar, in * sizeof *imm2);
    for (size_t x = 0; x < dn; x++) imm1[x] = gpu_kids(c, s1, c1->v[D[x]]);
    for (size_t y = 0; y < in; y++) imm2[y] = gpu_kids(c, s2, c2->v[I[y]]);
    uint8_t *sub1 = aalloc(&c->ar, c1->n + 1), *sub2 = aalloc(&c->ar, c2->n + 1);
    memset(sub1, 0, c1->n + 1);
    memset(sub2, 0, c2->n + 1);
    int anysub = 0;
    /* 1: a deleted node's name among an inserted node's children; 2: the converse */
    amap dn_names, in_names;
    amap_init(&c->ar, &dn_names, dn);
    amap_init(&c->ar, &in_names, in);
    for (size_t x = 0; x < dn; x++) {
        uint32_t u = c1->v[D[x]];
        if (tl_strpool_len(&s1->es->names, s1->es->name[u])) amap_put(&dn_names, nname(s1, u), 1);
    }
    for (size_t y = 0; y < in; y++) {
        uint32_t u = c2->v[I[y]];
        if (tl_strpool_len(&s2->es->names, s2->es->name[u])) amap_put(&in_names, nname(s2, u), 1);
    }
    for (size_t y = 0; y < in; y++)
        for (size_t k = 0; k < imm2[y].n && !sub2[I[y]]; k++)
            if (amap_get(&dn_names, nname(s2, imm2[y].v[k])) != UINT32_MAX) sub2[I[y]] = anysub = 1;
    for (size_t x = 0; x < dn; x++)
        for (size_t k = 0; k < imm1[x].n && !sub1[D[x]]; k++)
            if (amap_get(&in_names, nname(s1, imm1[x].v[k])) != UINT32_MAX) sub1[D[x]] = anysub = 1;
    /* 3: both have children with the same name lists */
    for (size_t x = 0; x < dn; x++) {
        if (!imm1[x].n) continue;
        for (size_t y = 0; y < in; y++) {
            if (imm2[y].n != imm1[x].n || (sub1[D[x]] && sub2[I[y]])) continue;
            size_t k = 0;
            while (k < imm1[x].n && nname(s1, imm1[x].v[k]) == nname(s2, imm2[y].v[k])) k++;
            if (k == imm1[x].n) sub1[D[x]] = sub2[I[y]] = anysub = 1;
        }
    }
    if (!anysub) return 0;
    size_t t1 = 0, t2 = 0;
    for (size_t i = 0; i < c1->n; i++) t1 += 1;
    for (size_t x = 0; x < dn; x++)
        if (sub1[D[x]]) t1 += imm1[x].n;
    for (size_t j = 0; j < c2->n; j++) t2 += 1;
    for (size_t y = 0; y < in; y++)
        if (sub2[I[y]]) t2 += imm2[y].n;
    r1->v = aalloc(&c->ar, (t1 + 1) * sizeof(uint32_t));
    r2->v = aalloc(&c->ar, (t2 + 1) * sizeof(uint32_t));
    r1->n = r2->n = 0;
    /* the replacement lists by index */
    ulist **by1 = aalloc(&c->ar, (c1->n + 1) * sizeof *by1), **by2 = aalloc(&c->ar, (c2->n + 1) * sizeof *by2);
    for (size_t x = 0; x < dn; x++) by1[D[x]] = &imm1[x];
    for (size_t y = 0; y < in; y++) by2[I[y]] = &imm2[y];
    for (size_t i = 0; i < c1->n; i++) {
        if (sub1[i])
            for (size_t k = 0; k < by1[i]->n; k++) r1->v[r1->n++] = by1[i]->v[k];
        else r1->v[r1->n++] = c1->v[i];
    }
    for (size_t j = 0; j < c2->n; j++) {
        if (sub2[j])
            for (size_t k = 0; k < by2[j]->n; k++) r2->v[r2->n++] = by2[j]->v[k];
        else r2->v[r2->n++] = c2->v[j];
    }
    sort_by_ts(c, s1, r1->v, r1->n);
    sort_by_ts(c, s2, r2->v, r2->n);
    return 1;
}

/* ============================================================== merge */

static uint32_t memo_find(const ctx *c, uint32_t a, uint32_t b)
{
    int s = a != NONE ? 0 : 1;
    uint32_t key = s == 0 ? a : b;
    for (uint32_t m = c->first_of[s][key]; m != UINT32_MAX; m = c->next_of[s].v[m]) {
        const tl_merged_node *n = &c->nodes.v[m];
        if (n->key1 == a && n->key2 == b) return m;
    }
    return UINT32_MAX;
}

static uint32_t new_node(ctx *c, uint32_t a, uint32_t b)
{
    uint32_t id = (uint32_t)c->nodes.n;
    tl_merged_node nd = {a, b, a, b, 0, 0, TL_MERGED_COMBINED};
    TL_PUSH(c->nodes, nd);
    for (int s = 0; s < 2; s++) {
        uint32_t key = s == 0 ? a : b;
        TL_PUSH(c->next_of[s], UINT32_MAX);
        if (key == NONE) continue;
        /* append to the chain of key (creation order) */
        uint32_t m = c->first_of[s][key];
        if (m == UINT32_MAX) c->first_of[s][key] = id;
        else {
            while (c->next_of[s].v[m] != UINT32_MAX) m = c->next_of[s].v[m];
            c->next_of[s].v[m] = id;
        }
    }
    return id;
}

static uint32_t merge(ctx *c, uint32_t a, uint32_t b, arena *memo)
{
    uint32_t hit = memo_find(c, a, b);
    if (hit != UINT32_MAX) return hit;
    uint32_t id = new_node(c, a, b);
    amark mk = amark_get(&c->ar);
    const side *s1 = &c->s[0], *s2 = &c->s[1];
    ulist c1, c2;
    children_with_missing(c, a, b, &c1, &c2);
    uint32_t u1 = a, u2 = b;

    /* Phase 1: list collapse */
    if (c1.n != c2.n) {
        ulist deep;
        if (c1.n == 1) {
            uint32_t r = collapse(c, s1, c1.v[0], &deep);
            if (deep.n) {
                u1 = r;
                c1 = deep;
            }
        } else if (c2.n == 1) {
            uint32_t r = collapse(c, s2, c2.v[0], &deep);
            if (deep.n) {
                u2 = r;
                c2 = deep;
            }
        }
    }

    /* Phase 2: alignment */
    oplist ops = align(c, &c1, &c2, memo);

    /* Phase 3: reconcile wrappers */
    int unmatched = 0;
    for (size_t k = 0; k < ops.n && !unmatched; k++) unmatched = ops.v[k].k != OP_MATCH;
    if (unmatched) {
        ulist r1, r2;
        if (reconcile(c, &ops, &c1, &c2, &r1, &r2)) {
            amap at1, at2;
            amap_init(&c->ar, &at1, r1.n);
            amap_init(&c->ar, &at2, r2.n);
            for (size_t i = 0; i < r1.n; i++) amap_put(&at1, r1.v[i], (uint32_t)i);
            for (size_t j = 0; j < r2.n; j++) amap_put(&at2, r2.v[j], (uint32_t)j);
            op *nv = aalloc(&c->ar, (r1.n + r2.n + 1) * sizeof *nv);
            size_t nn = 0;
            uint8_t *p1 = aalloc(&c->ar, r1.n + 1), *p2 = aalloc(&c->ar, r2.n + 1);
            memset(p1, 0, r1.n + 1);
            memset(p2, 0, r2.n + 1);
            for (size_t k = 0; k < ops.n; k++) {
                if (ops.v[k].k != OP_MATCH) continue;
                uint32_t ri = amap_get(&at1, c1.v[ops.v[k].i]), rj = amap_get(&at2, c2.v[ops.v[k].j]);
                if (ri == UINT32_MAX || rj == UINT32_MAX) continue;
                nv[nn++] = (op){ri, rj, OP_MATCH};
                p1[ri] = p2[rj] = 1;
            }
            ulist f1 = {aalloc(&c->ar, (r1.n + 1) * sizeof(uint32_t)), 0}, f2 = {aalloc(&c->ar, (r2.n + 1) * sizeof(uint32_t)), 0};
            uint32_t *fi = aalloc(&c->ar, (r1.n + 1) * sizeof *fi), *fj = aalloc(&c->ar, (r2.n + 1) * sizeof *fj);
            for (size_t i = 0; i < r1.n; i++)
                if (!p1[i]) {
                    fi[f1.n] = (uint32_t)i;
                    f1.v[f1.n++] = r1.v[i];
                }
            for (size_t j = 0; j < r2.n; j++)
                if (!p2[j]) {
                    fj[f2.n] = (uint32_t)j;
                    f2.v[f2.n++] = r2.v[j];
                }
            if (f1.n && f2.n) {
                oplist fo = align(c, &f1, &f2, memo);
                for (size_t k = 0; k < fo.n; k++) {
                    const op *o = &fo.v[k];
                    if (o->k == OP_MATCH) nv[nn++] = (op){fi[o->i], fj[o->j], OP_MATCH};
                    else if (o->k == OP_DELETE) nv[nn++] = (op){fi[o->i], NONE, OP_DELETE};
                    else nv[nn++] = (op){NONE, fj[o->j], OP_INSERT};
                }
            } else {
                for (size_t i = 0; i < f1.n; i++) nv[nn++] = (op){fi[i], NONE, OP_DELETE};
                for (size_t j = 0; j < f2.n; j++) nv[nn++] = (op){NONE, fj[j], OP_INSERT};
            }
            ops.v = nv;
            ops.n = nn;
            c1 = r1;
            c2 = r2;
        }
    }

    /* Phase 4: canonicalise the leftovers (collapse, WF, then WF on stripped names) */
    size_t nu1 = 0, nu2 = 0;
    for (size_t k = 0; k < ops.n; k++) {
        if (ops.v[k].k == OP_DELETE) nu1++;
        if (ops.v[k].k == OP_INSERT) nu2++;
    }
    if (nu1 && nu2) {
        uint32_t *ui = aalloc(&c->ar, nu1 * sizeof *ui), *uj = aalloc(&c->ar, nu2 * sizeof *uj);
        ulist k1 = {aalloc(&c->ar, nu1 * sizeof(uint32_t)), 0}, k2 = {aalloc(&c->ar, nu2 * sizeof(uint32_t)), 0};
        for (size_t k = 0; k < ops.n; k++) {
            ulist dummy;
            if (ops.v[k].k == OP_DELETE) {
                ui[k1.n] = ops.v[k].i;
                k1.v[k1.n++] = collapse(c, s1, c1.v[ops.v[k].i], &dummy);
            } else if (ops.v[k].k == OP_INSERT) {
                uj[k2.n] = ops.v[k].j;
                k2.v[k2.n++] = collapse(c, s2, c2.v[ops.v[k].j], &dummy);
            }
        }
        oplist p1 = aligned_wf(c, &k1, &k2, 0, memo);
        size_t sd = 0, si = 0;
        for (size_t k = 0; k < p1.n; k++) {
            if (p1.v[k].k == OP_DELETE) sd++;
            if (p1.v[k].k == OP_INSERT) si++;
        }
        oplist co = p1;
        if (sd && si) {
            uint32_t *ci = aalloc(&c->ar, sd * sizeof *ci), *cj = aalloc(&c->ar, si * sizeof *cj);
            ulist l1 = {aalloc(&c->ar, sd * sizeof(uint32_t)), 0}, l2 = {aalloc(&c->ar, si * sizeof(uint32_t)), 0};
            for (size_t k = 0; k < p1.n; k++) {
                if (p1.v[k].k == OP_DELETE) {
                    ci[l1.n] = p1.v[k].i;
                    l1.v[l1.n++] = k1.v[p1.v[k].i];
                } else if (p1.v[k].k == OP_INSERT) {
                    cj[l2.n] = p1.v[k].j;
                    l2.v[l2.n++] = k2.v[p1.v[k].j];
                }
            }
            oplist p2 = aligned_wf(c, &l1, &l2, 1, memo);
            co.v = aalloc(&c->ar, (p1.n + p2.n + 1) * sizeof(op));
            co.n = 0;
            for (size_t k = 0; k < p1.n; k++)
                if (p1.v[k].k == OP_MATCH) co.v[co.n++] = p1.v[k];
            for (size_t k = 0; k < p2.n; k++) {
                const op *o = &p2.v[k];
                if (o->k == OP_MATCH) co.v[co.n++] = (op){ci[o->i], cj[o->j], OP_MATCH};
                else if (o->k == OP_DELETE) co.v[co.n++] = (op){ci[o->i], NONE, OP_DELETE};
                else co.v[co.n++] = (op){NONE, cj[o->j], OP_INSERT};
            }
        }
        op *nv = aalloc(&c->ar, (ops.n + co.n + 1) * sizeof *nv);
        size_t nn = 0;
        for (size_t k = 0; k < ops.n; k++)
            if (ops.v[k].k == OP_MATCH) nv[nn++] = ops.v[k];
        for (size_t k = 0; k < co.n; k++) {
            const op *o = &co.v[k];
            if (o->k == OP_MATCH) {
                c1.v[ui[o->i]] = k1.v[o->i];
                c2.v[uj[o->j]] = k2.v[o->j];
                nv[nn++] = (op){ui[o->i], uj[o->j], OP_MATCH};
            } else if (o->k == OP_DELETE) {
                c1.v[ui[o->i]] = k1.v[o->i];
                nv[nn++] = (op){ui[o->i], NONE, OP_DELETE};
            } else {
                c2.v[uj[o->j]] = k2.v[o->j];
                nv[nn++] = (op){NONE, uj[o->j], OP_INSERT};
            }
        }
        ops.v = nv;
        ops.n = nn;
    }

    /* recurse */
    uint32_t *ids = aalloc(&c->ar, (ops.n + 1) * sizeof *ids);
    for (size_t k = 0; k < ops.n; k++) {
        const op *o = &ops.v[k];
        uint32_t x = o->k == OP_INSERT ? NONE : c1.v[o->i], y = o->k == OP_DELETE ? NONE : c2.v[o->j];
        ids[k] = merge(c, x, y, memo);
    }
    tl_merged_node *nd = &c->nodes.v[id];
    nd->uid1 = u1;
    nd->uid2 = u2;
    nd->type = u1 != NONE && u2 != NONE ? TL_MERGED_COMBINED : (u1 != NONE ? TL_MERGED_TRACE1 : TL_MERGED_TRACE2);
    nd->kid_off = (uint32_t)c->kids.n;
    nd->nkids = (uint32_t)ops.n;
    for (size_t k = 0; k < ops.n; k++) TL_PUSH(c->kids, ids[k]);
    arelease(&c->ar, mk);
    return id;
}

/* ============================================================== roots */

static int root_by_ts(void *ctx, size_t a, size_t b)
{
    const tl_event_store *es = ctx;
    int64_t x = (es->flags[a] & TL_F_TS) ? es->ts[a] : 0, y = (es->flags[b] & TL_F_TS) ? es->ts[b] : 0;
    return (x > y) - (x < y);
}

/* cpu_root_nodes: cpu_ops in the tree without a cpu_op above, in (ts, UID) order. */
static size_t cpu_roots(const tl_trace *t, size_t **out)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    /* 0 unknown, 1 has a cpu_op ancestor, 2 has none */
    uint8_t *st = tl_xcalloc(es->n + 1, 1);
    TL_VEC(uint32_t) path = {0};
    TL_VEC(size_t) roots = {0};
    for (size_t u = 0; u < es->n; u++) {
        if (es->cat[u] != TL_CAT_CPU_OP || tr->in_tree[u] != 1) continue;
        path.n = 0;
        uint32_t p = tr->parent[u];
        uint8_t res = 2;
        while (p != NONE) {
            if (es->cat[p] == TL_CAT_CPU_OP) {
                res = 1;
                break;
            }
            if (st[p]) {
                res = st[p];
                break;
            }
            TL_PUSH(path, p);
            p = tr->parent[p];
        }
        for (size_t k = 0; k < path.n; k++) st[path.v[k]] = res;
        if (res == 2) TL_PUSH(roots, u);
    }
    free(path.v);
    free(st);
    tl_msort(roots.v, roots.n, root_by_ts, (void *)es);
    *out = roots.v;
    return roots.n;
}

/* _get_top_level_root, with the re-parenting recorded in the overlay. */
static uint32_t top_root(side *s, uint32_t start)
{
    uint32_t cur = start;
    for (;;) {
        uint32_t p = parent_of(s, cur);
        if (p == NONE) break;
        cur = p;
    }
    uint32_t root = cur;
    for (;;) {
        size_t n;
        const uint32_t *ch = kids_of(s, cur, &n);
        if (n != 1) break;
        uint32_t x = ch[0];
        uint8_t cat = s->es->cat[x];
        if ((cat == TL_CAT_CPU_OP || cat == TL_CAT_CUDA_RUNTIME || cat == TL_CAT_CUDA_DRIVER) && !s->graph[s->es->name[x]])
            break;
        cur = x;
    }
    if (cur != root) {
        tl_map_put(&s->ov->kids_of, root, 0, cur);
        tl_map_put(&s->ov->parent_of, cur, 0, root);
    }
    return cur;
}

/* ========================================================= diff stats */

/* re.sub(r"\(\d+\)", "", s) */
static void strip_paren_digits(const char *s, tl_sbuf *out)
{
    size_t run = 0; /* start of the text not yet copied */
    for (size_t i = 0; s[i];) {
        if (s[i] == '(' && is_digit((unsigned char)s[i + 1])) {
            size_t k = i + 1;
            while (is_digit((unsigned char)s[k])) k++;
            if (s[k] == ')') {
                tl_sb_putn(out, s + run, i - run);
                i = run = k + 1;
                continue;
            }
        }
        i++;
    }
    tl_sb_putn(out, s + run, strlen(s + run));
}

/* _get_op_name: the name, or the UID when it is empty */
static void op_name(const tl_trace *t, uint32_t u, tl_sbuf *out)
{
    const char *nm = tl_es_name(&t->es, u);
    if (*nm) tl_sb_puts(out, nm);
    else tl_sb_printf(out, "%u", u);
}

typedef struct sctx {
    tl_trace_diff *d;
    side *s;
    uint8_t *visited;
    TL_VEC(tl_diff_row) rows;
    TL_VEC(tl_interval) iv;
    TL_VEC(uint32_t) g;
    tl_map lca_names; /* (name ids) -> LCA name id */
    tl_sbuf b1, b2, b3;
} sctx;

/* The LCA name of a combined node (e2 != NONE: "n1 | n2" when they differ)
 * or of one side's parent node, memoised by the names. */
static uint32_t lca_name(sctx *x, int sd, uint32_t e1, uint32_t e2)
{
    const tl_trace_diff *d = x->d;
    const tl_event_store *es1 = &d->t[sd]->es;
    uint32_t n1 = es1->name[e1], n2 = e2 != NONE ? d->t[1]->es.name[e2] : UINT32_MAX;
    int memo = tl_strpool_len(&es1->names, n1) && (e2 == NONE || tl_strpool_len(&d->t[1]->es.names, n2));
    uint64_t k1 = n1, k2 = e2 != NONE ? ((uint64_t)n2 | (1ULL << 40)) : ((uint64_t)(sd + 1) << 41);
    if (memo) {
        uint32_t v = tl_map_get(&x->lca_names, k1, k2);
        if (v != UINT32_MAX) return v;
    }
    tl_sb_clear(&x->b1);
    tl_sb_clear(&x->b2);
    tl_sb_clear(&x->b3);
    tl_sb_puts(&x->b1, "");
    op_name(d->t[sd], e1, &x->b3);
    strip_paren_digits(x->b3.s, &x->b1);
    if (e2 != NONE) {
        tl_sb_clear(&x->b3);
        op_name(d->t[1], e2, &x->b3);
        tl_sb_puts(&x->b2, "");
        strip_paren_digits(x->b3.s, &x->b2);
        if (strcmp(x->b1.s, x->b2.s)) {
            tl_sb_puts(&x->b1, " | ");
            tl_sb_puts(&x->b1, x->b2.s);
        }
    }
    uint32_t v = tl_strpool_intern(&x->d->names, x->b1.s, x->b1.len);
    if (memo) tl_map_put(&x->lca_names, k1, k2, v);
    return v;
}

static int64_t busy_of(sctx *x, const tl_event_store *es, const uint32_t *g, size_t n)
{
    x->iv.n = 0;
    for (size_t i = 0; i < n; i++) {
        tl_interval v = {es->ts[g[i]], tl_es_end(es, g[i])};
        TL_PUSH(x->iv, v);
    }
    size_t m = tl_merge(x->iv.v, x->iv.n);
    return tl_length(x->iv.v, m);
}

static void add_rows(sctx *x, int sd, const uint32_t *g, size_t n, uint32_t lca, uint32_t lca_name, int64_t busy)
{
    const side *s = &x->s[sd];
    for (size_t i = 0; i < n; i++) {
        uint32_t p = parent_of(s, g[i]);
        while (p != NONE && s->es->cat[p] != TL_CAT_CPU_OP) p = parent_of(s, p);
        if (p == NONE) continue;
        tl_diff_row r = {g[i], p, lca, lca_name, busy, (uint8_t)sd};
        TL_PUSH(x->rows, r);
    }
}

static void stats_walk(sctx *x, uint32_t mid, uint32_t parent)
{
    tl_trace_diff *d = x->d;
    if (x->visited[mid]) return;
    const tl_merged_node *nd = &d->nodes[mid];
    const side *s1 = &x->s[0], *s2 = &x->s[1];
    if (nd->type == TL_MERGED_COMBINED) {
        uint32_t e1 = nd->uid1, e2 = nd->uid2;
        int g1 = is_gpu_path(s1, e1), g2 = is_gpu_path(s2, e2);
        if (g1 && g2) {
            const uint32_t *kids = d->kids + nd->kid_off;
            size_t nnc1 = 0, nnc2 = 0;
            for (uint32_t k = 0; k < nd->nkids; k++) {
                const tl_merged_node *ch = &d->nodes[kids[k]];
                if (ch->type == TL_MERGED_COMBINED) continue;
                if (ch->uid1 != NONE && is_gpu_path(s1, ch->uid1)) nnc1++;
                if (ch->uid2 != NONE && is_gpu_path(s2, ch->uid2)) nnc2++;
            }
            if (nnc1 || nnc2 || (is_kernel(s1, e1) && is_kernel(s2, e2))) {
                uint32_t name = lca_name(x, 0, e1, e2);
                for (int sd = 0; sd < 2; sd++) {
                    const side *s = &x->s[sd];
                    x->g.n = 0;
                    for (uint32_t k = 0; k < nd->nkids; k++) {
                        const tl_merged_node *ch = &d->nodes[kids[k]];
                        uint32_t u = sd == 0 ? ch->uid1 : ch->uid2;
                        if (ch->type == TL_MERGED_COMBINED || u == NONE || !is_gpu_path(s, u)) continue;
                        for (uint32_t q = s->tr->gpu_off[u]; q < s->tr->gpu_off[u + 1]; q++) TL_PUSH(x->g, s->tr->gpu[q]);
                        if (is_kernel(s, u)) TL_PUSH(x->g, u);
                    }
                    uint32_t e = sd == 0 ? e1 : e2;
                    if (is_kernel(s, e)) TL_PUSH(x->g, e);
                    int64_t busy = busy_of(x, s->es, x->g.v, x->g.n);
                    add_rows(x, sd, x->g.v, x->g.n, mid, name, busy);
                }
                x->visited[mid] = 1;
                for (uint32_t k = 0; k < nd->nkids; k++) {
                    const tl_merged_node *ch = &d->nodes[kids[k]];
                    if (ch->type == TL_MERGED_COMBINED) continue;
                    if ((ch->uid1 != NONE && is_gpu_path(s1, ch->uid1)) || (ch->uid2 != NONE && is_gpu_path(s2, ch->uid2)))
                        x->visited[kids[k]] = 1;
                }
            }
        }
        if (g1 || g2)
            for (uint32_t k = 0; k < nd->nkids; k++) stats_walk(x, d->kids[nd->kid_off + k], mid);
        return;
    }
    int sd = nd->type == TL_MERGED_TRACE1 ? 0 : 1;
    const side *s = &x->s[sd];
    uint32_t e = sd == 0 ? nd->uid1 : nd->uid2;
    if (is_gpu_path(s, e)) {
        uint32_t lca = NONE, name = UINT32_MAX;
        if (parent != NONE) {
            const tl_merged_node *pn = &d->nodes[parent];
            name = lca_name(x, sd, sd == 0 ? pn->uid1 : pn->uid2, NONE);
            lca = parent;
        }
        const uint32_t *g = s->tr->gpu + s->tr->gpu_off[e];
        size_t n = s->tr->gpu_off[e + 1] - s->tr->gpu_off[e];
        add_rows(x, sd, g, n, lca == NONE ? UINT32_MAX : lca, name, busy_of(x, s->es, g, n));
    }
    x->visited[mid] = 1;
}

/* ------------------------------------------------- the diff_stats Table */

static const char *const DS_COLS[] = {"name", "cpu_op_name", "cpu_op_uid", "source", "Input Dims", "Input Strides",
                                      "Input type", "Concrete Inputs", "kernel_time", "busy_time",
                                      "lowest_common_ancestor_name", "lowest_common_ancestor_id", "gpu_op_uid",
                                      "nn_module_stack", "nn_module_parent"};

/* nn_module_stack of a host event: the enclosing nn.Module python events'
 * names, outermost first, trailing _<digits> removed; ["root"] when none. */
static void module_stack(const tl_trace *t, uint32_t u, tl_sbuf *stack, tl_sbuf *parent)
{
    const tl_event_store *es = &t->es;
    TL_VEC(uint32_t) mods = {0};
    for (uint32_t p = t->tree.parent[u]; p != NONE; p = t->tree.parent[p]) {
        if (es->cat[p] != TL_CAT_PYTHON_FUNCTION) continue;
        if (strncmp(tl_es_name(es, p), "nn.Module:", 10) != 0) continue;
        TL_PUSH(mods, p);
    }
    if (!mods.n) {
        tl_sb_puts(stack, "root");
        tl_sb_puts(parent, "root");
    }
    for (size_t k = mods.n; k-- > 0;) {
        const char *nm = tl_es_name(es, mods.v[k]);
        size_t len = strlen(nm), e = len;
        while (e > 0 && is_digit((unsigned char)nm[e - 1])) e--;
        if (e < len && e > 0 && nm[e - 1] == '_') len = e - 1;
        if (k + 1 < mods.n) tl_sb_putc(stack, ';');
        tl_sb_putn(stack, nm, len);
        if (k == 0) tl_sb_putn(parent, nm, len);
    }
    free(mods.v);
}

/* The pool id of s in t (its text interned once). */
static uint32_t tid(tl_table *t, const char *s) { return tl_strpool_intern(&t->pool, s, strlen(s)); }

/* The diff_stats Table of the rows. Text cells repeat a lot (one cpu op's
 * args and module stack for all its kernels), so each distinct text is
 * interned once and the rows get its pool id. */
static tl_table *diff_stats_table(tl_trace_diff *d, const tl_diff_row *rows, size_t n)
{
    tl_table *t = tl_table_new("diff_stats");
    size_t col[15];
    for (int k = 0; k < 15; k++) {
        tl_coltype ty = TL_COL_STR;
        if (k == 2 || k == 11 || k == 12) ty = TL_COL_I64;
        if (k == 8 || k == 9) ty = TL_COL_F64;
        col[k] = tl_table_add_col(t, DS_COLS[k], ty);
    }
    tl_argtext at[2];
    tl_argtext_init(&at[0], d->t[0]);
    tl_argtext_init(&at[1], d->t[1]);
    /* per (side, cpu op): the pool ids of its 7 text cells */
    typedef struct opcells {
        uint32_t v[7];
    } opcells;
    TL_VEC(opcells) ops = {0};
    tl_map op_ix, name_ix;
    tl_map_init(&op_ix, 1024);
    tl_map_init(&name_ix, 1024);
    uint32_t *lca_ix = tl_xmalloc((d->names.n + 1) * sizeof *lca_ix);
    memset(lca_ix, 0xff, (d->names.n + 1) * sizeof *lca_ix);
    tl_sbuf sb, pb;
    tl_sb_init(&sb);
    tl_sb_init(&pb);
    uint32_t src_id[2] = {tid(t, "trace1"), tid(t, "trace2")};
    static const uint32_t keys[4] = {TL_K_INPUT_DIMS, TL_K_INPUT_STRIDES, TL_K_INPUT_TYPE, TL_K_CONCRETE_INPUTS};
    for (size_t i = 0; i < n; i++) {
        const tl_diff_row *r = &rows[i];
        const tl_trace *tr = d->t[r->src];
        const tl_event_store *es = &tr->es;
        size_t row = tl_table_add_row(t);
        uint32_t k = tl_map_get(&name_ix, es->name[r->gpu], r->src);
        if (k == UINT32_MAX) {
            k = tid(t, tl_es_name(es, r->gpu));
            tl_map_put(&name_ix, es->name[r->gpu], r->src, k);
        }
        t->cols[col[0]].v.s[row] = k;
        uint32_t o = tl_map_get(&op_ix, r->cpu_op, r->src);
        if (o == UINT32_MAX) {
            opcells c;
            c.v[0] = tid(t, tl_es_name(es, r->cpu_op));
            for (int a = 0; a < 4; a++) {
                const char *v = tl_argtext_tuple(&at[r->src], r->cpu_op, keys[a]);
                c.v[1 + a] = tid(t, v ? v : "");
            }
            tl_sb_clear(&sb);
            tl_sb_clear(&pb);
            tl_sb_puts(&sb, "");
            tl_sb_puts(&pb, "");
            module_stack(tr, r->cpu_op, &sb, &pb);
            c.v[5] = tid(t, sb.s);
            c.v[6] = tid(t, pb.s);
            o = (uint32_t)ops.n;
            TL_PUSH(ops, c);
            tl_map_put(&op_ix, r->cpu_op, r->src, o);
        }
        const opcells *c = &ops.v[o];
        t->cols[col[1]].v.s[row] = c->v[0];
        tl_table_set_i64(t, col[2], row, r->cpu_op);
        t->cols[col[3]].v.s[row] = src_id[r->src];
        for (int a = 0; a < 4; a++) t->cols[col[4 + a]].v.s[row] = c->v[1 + a];
        tl_table_set_f64(t, col[8], row, (es->flags[r->gpu] & TL_F_DUR) ? (double)es->dur[r->gpu] / 1000.0 : 0.0);
        tl_table_set_f64(t, col[9], row, (double)r->busy_ns / 1000.0);
        if (r->lca_name != UINT32_MAX) {
            if (lca_ix[r->lca_name] == UINT32_MAX) lca_ix[r->lca_name] = tid(t, tl_strpool_get(&d->names, r->lca_name));
            t->cols[col[10]].v.s[row] = lca_ix[r->lca_name];
        }
        if (r->lca != UINT32_MAX) tl_table_set_i64(t, col[11], row, r->lca);
        tl_table_set_i64(t, col[12], row, r->gpu);
        t->cols[col[13]].v.s[row] = c->v[5];
        t->cols[col[14]].v.s[row] = c->v[6];
    }
    tl_sb_free(&sb);
    tl_sb_free(&pb);
    free(ops.v);
    free(lca_ix);
    tl_map_free(&op_ix);
    tl_map_free(&name_ix);
    tl_argtext_free(&at[0]);
    tl_argtext_free(&at[1]);
    return t;
}

/* Two cells of one table hold the same value (missing equals missing). */
static int cell_eq(const tl_table *t, size_t c, size_t a, size_t b)
{
    const tl_col *col = &t->cols[c];
    switch (col->type) {
    case TL_COL_STR: return col->v.s[a] == col->v.s[b];
    case TL_COL_F64: {
        double x = col->v.f[a], y = col->v.f[b];
        return x == y || (isnan(x) && isnan(y));
    }
    default: return col->null[a] == col->null[b] && (col->null[a] || col->v.i[a] == col->v.i[b]);
    }
}

/* The trace1 and trace2 rows are equal column for column (source aside),
 * as DataFrame.equals after reset_index. */
static int rows_identical(const tl_table *t)
{
    long src = tl_table_col(t, "source");
    TL_VEC(size_t) a = {0}, b = {0};
    for (size_t r = 0; r < t->nrows; r++) {
        if (!strcmp(tl_table_str(t, (size_t)src, r), "trace1")) TL_PUSH(a, r);
        else TL_PUSH(b, r);
    }
    int same = a.n == b.n;
    for (size_t k = 0; k < a.n && same; k++)
        for (size_t c = 0; c < t->ncols && same; c++)
            if ((long)c != src) same = cell_eq(t, c, a.v[k], b.v[k]);
    free(a.v);
    free(b.v);
    return same;
}

/* ------------------------------------------------- the unique-args summary */


/* Python str() of a cell, for the summary's tie-breaking sorts. */
static const char *py_str(const tl_table *t, size_t c, size_t r, char *buf, size_t cap)
{
    const tl_col *col = &t->cols[c];
    if (tl_table_is_null(t, c, r)) return col->type == TL_COL_F64 ? "nan" : "None";
    switch (col->type) {
    case TL_COL_STR: return tl_strpool_get(&t->pool, col->v.s[r]);
    case TL_COL_F64: tl_pyfloat_repr(buf, cap, col->v.f[r]); return buf;
    case TL_COL_BOOL: return col->v.i[r] ? "True" : "False";
    default: snprintf(buf, cap, "%lld", (long long)col->v.i[r]); return buf;
    }
}

typedef struct sum_sort {
    const tl_table *t;
    size_t sum_col;
    uint32_t **rank; /* per column, made when first needed: rank of the cell's str() in the column */
} sum_sort;

typedef struct rank_ctx {
    const tl_strpool *pool;
    const uint32_t *ids;
} rank_ctx;

static int by_text(void *ctx, size_t a, size_t b)
{
    const rank_ctx *c = ctx;
    const char *x = c->ids[a] == TL_NULL_STR ? "None" : tl_strpool_get(c->pool, c->ids[a]);
    const char *y = c->ids[b] == TL_NULL_STR ? "None" : tl_strpool_get(c->pool, c->ids[b]);
    return strcmp(x, y);
}

/* rank[r]: the position of str(cell r) among the column's distinct texts */
static uint32_t *text_ranks(const tl_table *t, size_t c)
{
    size_t n = t->nrows;
    tl_strpool texts;
    tl_strpool_init(&texts);
    const tl_strpool *pool = &texts;
    uint32_t *tx = tl_xmalloc((n + 1) * sizeof *tx);
    size_t m;
    if (t->cols[c].type == TL_COL_STR) {
        /* the pool ids themselves; None for missing */
        pool = &t->pool;
        m = t->pool.n + 1;
        for (size_t r = 0; r < n; r++) tx[r] = t->cols[c].v.s[r] == TL_NULL_STR ? (uint32_t)t->pool.n : t->cols[c].v.s[r];
    } else {
        char buf[48];
        for (size_t r = 0; r < n; r++) {
            const char *v = py_str(t, c, r, buf, sizeof buf);
            tx[r] = tl_strpool_intern(&texts, v, strlen(v));
        }
        m = texts.n;
    }
    /* the distinct values used, sorted by text */
    uint8_t *used = tl_xcalloc(m + 1, 1);
    for (size_t r = 0; r < n; r++) used[tx[r]] = 1;
    uint32_t *ids = tl_xmalloc((m + 1) * sizeof *ids);
    size_t *ord = tl_xmalloc((m + 1) * sizeof *ord), k = 0;
    for (size_t i = 0; i < m; i++)
        if (used[i]) {
            ids[k] = pool == &t->pool && i == t->pool.n ? TL_NULL_STR : (uint32_t)i;
            ord[k] = k;
            k++;
        }
    rank_ctx rc = {pool, ids};
    tl_msort(ord, k, by_text, &rc);
    uint32_t *rank_of = tl_xmalloc((m + 1) * sizeof *rank_of);
    for (size_t i = 0; i < k; i++) {
        uint32_t v = ids[ord[i]];
        rank_of[v == TL_NULL_STR ? t->pool.n : v] = (uint32_t)i;
    }
    for (size_t r = 0; r < n; r++) tx[r] = rank_of[tx[r]];
    free(used);
    free(ids);
    free(ord);
    free(rank_of);
    tl_strpool_free(&texts);
    return tx;
}

/* kernel_time_sum descending, ties by the str() of the other columns, left to right */
static int sum_cmp(void *ctx, size_t a, size_t b)
{
    sum_sort *s = ctx;
    double x = s->t->cols[s->sum_col].v.f[a], y = s->t->cols[s->sum_col].v.f[b];
    int xn = isnan(x), yn = isnan(y);
    if (xn != yn) return xn ? 1 : -1;
    if (!xn && x != y) return x > y ? -1 : 1;
    for (size_t c = 0; c < s->t->ncols; c++) {
        if (c == s->sum_col || cell_eq(s->t, c, a, b)) continue;
        if (!s->rank[c]) s->rank[c] = text_ranks(s->t, c);
        uint32_t p = s->rank[c][a], q = s->rank[c][b];
        if (p != q) return p < q ? -1 : 1;
    }
    return 0;
}

/* Cell value of a key column as a 64-bit identity (pool id, integer or
 * double bits; missing: a value no cell has). */
static uint64_t cell_key(const tl_table *t, size_t c, size_t r)
{
    const tl_col *col = &t->cols[c];
    if (tl_table_is_null(t, c, r)) return 0xfff8dead5151ULL;
    if (col->type == TL_COL_STR) return col->v.s[r];
    if (col->type == TL_COL_F64) {
        double v = col->v.f[r] == 0 ? 0.0 : col->v.f[r];
        uint64_t u;
        memcpy(&u, &v, 8);
        return u;
    }
    return (uint64_t)col->v.i[r];
}

/* Neumaier-compensated sum (the Table engine's and pandas' groupby sum) */
static double csum(const double *x, size_t n)
{
    double s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        double t = s + x[i];
        c += fabs(s) >= fabs(x[i]) ? (s - t) + x[i] : (x[i] - t) + s;
        s = t;
    }
    return s + c;
}

/* diff_stats_unique_args_summary (get_df_diff_stats_unique_args): the rows
 * grouped by every column but kernel_time, lowest_common_ancestor_id and
 * gpu_op_uid (dropna=False), with kernel_time_mean, kernel_time_sum and
 * operation_count; sorted by kernel_time_sum descending, ties by the str()
 * of the other columns left to right. The group-by is the Table engine's
 * semantics on the cells' pool ids, so no text is hashed again. */
static tl_table *unique_args_summary(const tl_table *ds)
{
    static const char *const keys[] = {"name", "cpu_op_name", "cpu_op_uid", "source", "Input Dims", "Input Strides",
                                       "Input type", "Concrete Inputs", "busy_time", "lowest_common_ancestor_name",
                                       "nn_module_stack", "nn_module_parent"};
    enum { NK = 12 };
    size_t kc[NK];
    for (int k = 0; k < NK; k++) kc[k] = (size_t)tl_table_col(ds, keys[k]);
    size_t ckt = (size_t)tl_table_col(ds, "kernel_time");
    size_t n = ds->nrows, nslots = 64;
    while (nslots < 2 * n + 2) nslots *= 2;
    uint32_t *slot = tl_xmalloc(nslots * sizeof *slot);
    memset(slot, 0xff, nslots * sizeof *slot);
    uint32_t *gof = tl_xmalloc((n + 1) * sizeof *gof); /* row -> group */
    TL_VEC(size_t) first = {0};
    for (size_t r = 0; r < n; r++) {
        uint64_t h = 0x12345;
        for (int k = 0; k < NK; k++) h = mix64(h, cell_key(ds, kc[k], r));
        size_t sl = h & (nslots - 1);
        for (;;) {
            uint32_t g = slot[sl];
            if (g == UINT32_MAX) {
                slot[sl] = (uint32_t)first.n;
                gof[r] = (uint32_t)first.n;
                TL_PUSH(first, r);
                break;
            }
            int same = 1;
            for (int k = 0; k < NK && same; k++) same = cell_key(ds, kc[k], first.v[g]) == cell_key(ds, kc[k], r);
            if (same) {
                gof[r] = g;
                break;
            }
            sl = (sl + 1) & (nslots - 1);
        }
    }
    free(slot);
    size_t ng = first.n;
    /* kernel_time per group, in row order */
    size_t *off = tl_xcalloc(ng + 2, sizeof *off);
    for (size_t r = 0; r < n; r++) off[gof[r] + 2]++;
    for (size_t g = 2; g < ng + 2; g++) off[g] += off[g - 1];
    double *kt = tl_xmalloc((n + 1) * sizeof *kt);
    for (size_t r = 0; r < n; r++) kt[off[gof[r] + 1]++] = ds->cols[ckt].v.f[r];
    free(gof);
    static const char *const order[] = {"name", "operation_count", "cpu_op_name", "cpu_op_uid", "source", "Input Dims",
                                        "Input Strides", "Input type", "Concrete Inputs", "busy_time",
                                        "lowest_common_ancestor_name", "nn_module_stack", "nn_module_parent",
                                        "kernel_time_mean", "kernel_time_sum"};
    tl_table *s = tl_table_new("diff_stats_unique_args_summary");
    size_t oc[15];
    for (int k = 0; k < 15; k++) {
        long c = tl_table_col(ds, order[k]);
        tl_coltype ty = c >= 0 ? ds->cols[c].type : (k == 1 ? TL_COL_I64 : TL_COL_F64);
        oc[k] = tl_table_add_col(s, order[k], ty);
    }
    uint32_t *pid = tl_xmalloc((ds->pool.n + 1) * sizeof *pid); /* ds pool id -> s pool id */
    memset(pid, 0xff, (ds->pool.n + 1) * sizeof *pid);
    for (size_t g = 0; g < ng; g++) {
        size_t row = tl_table_add_row(s), r = first.v[g];
        for (int k = 0; k < 15; k++) {
            long c = tl_table_col(ds, order[k]);
            if (c < 0 || tl_table_is_null(ds, (size_t)c, r)) continue;
            const tl_col *col = &ds->cols[c];
            if (col->type == TL_COL_STR) {
                uint32_t id = col->v.s[r];
                if (pid[id] == UINT32_MAX) {
                    const char *txt = tl_strpool_get(&ds->pool, id);
                    pid[id] = tl_strpool_intern(&s->pool, txt, tl_strpool_len(&ds->pool, id));
                }
                s->cols[oc[k]].v.s[row] = pid[id];
            } else {
                tl_table_copy_cell(s, oc[k], row, ds, (size_t)c, r);
            }
        }
        size_t m = off[g + 1] - off[g];
        double sum = csum(kt + off[g], m);
        tl_table_set_i64(s, oc[1], row, (int64_t)m);
        tl_table_set_f64(s, oc[13], row, sum / (double)m);
        tl_table_set_f64(s, oc[14], row, sum);
    }
    free(pid);
    free(off);
    free(kt);
    free(first.v);
    sum_sort ss = {s, oc[14], tl_xcalloc(s->ncols, sizeof(uint32_t *))};
    size_t *idx = tl_xmalloc((s->nrows + 1) * sizeof *idx);
    for (size_t r = 0; r < s->nrows; r++) idx[r] = r;
    tl_msort(idx, s->nrows, sum_cmp, &ss);
    tl_table_keep_rows(s, idx, s->nrows);
    free(idx);
    for (size_t c = 0; c < s->ncols; c++) free(ss.rank[c]);
    free(ss.rank);
    return s;
}

/* ---------------------------------------------------------------- JSON */

static void js_str(tl_sbuf *b, const char *s)
{
    tl_sb_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': tl_sb_puts(b, "\\\""); break;
        case '\\': tl_sb_puts(b, "\\\\"); break;
        case '\n': tl_sb_puts(b, "\\n"); break;
        case '\r': tl_sb_puts(b, "\\r"); break;
        case '\t': tl_sb_puts(b, "\\t"); break;
        case '\b': tl_sb_puts(b, "\\b"); break;
        case '\f': tl_sb_puts(b, "\\f"); break;
        default:
            if (*p < 0x20) tl_sb_printf(b, "\\u%04x", *p);
            else tl_sb_putc(b, (char)*p);
        }
    }
    tl_sb_putc(b, '"');
}

static void js_nl(tl_sbuf *b, int level)
{
    tl_sb_putc(b, '\n');
    for (int i = 0; i < level; i++) tl_sb_puts(b, "  ");
}

static void js_list(tl_sbuf *b, const char *const *v, size_t n, int level)
{
    if (!n) {
        tl_sb_puts(b, "[]");
        return;
    }
    tl_sb_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) tl_sb_putc(b, ',');
        js_nl(b, level + 1);
        js_str(b, v[i]);
    }
    js_nl(b, level);
    tl_sb_putc(b, ']');
}

static int cmp_cstr(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

/* Sorted unique strings (Python's sorted(set(...)): code point order, which
 * is the byte order of UTF-8); v is sorted in place, returns the count. */
static size_t sort_unique(const char **v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_cstr);
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (!w || strcmp(v[w - 1], v[i])) v[w++] = v[i];
    return w;
}

/* Rows grouped by a uint32 key: groups in order of first appearance, rows in
 * table order within a group. */
typedef struct groups {
    size_t n;          /* groups */
    uint32_t *key;     /* per group */
    size_t *off;       /* group g: rows[off[g] .. off[g+1]) */
    size_t *rows;
} groups;

static void groups_make(groups *g, const uint32_t *keys, const size_t *rows, size_t n)
{
    tl_map ix;
    tl_map_init(&ix, n + 1);
    uint32_t *gi = tl_xmalloc((n + 1) * sizeof *gi);
    g->key = tl_xmalloc((n + 1) * sizeof *g->key);
    g->n = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t x = tl_map_get(&ix, keys[i], 0);
        if (x == UINT32_MAX) {
            x = (uint32_t)g->n++;
            g->key[x] = keys[i];
            tl_map_put(&ix, keys[i], 0, x);
        }
        gi[i] = x;
    }
    g->off = tl_xcalloc(g->n + 2, sizeof *g->off);
    for (size_t i = 0; i < n; i++) g->off[gi[i] + 2]++;
    for (size_t k = 2; k < g->n + 2; k++) g->off[k] += g->off[k - 1];
    g->rows = tl_xmalloc((n + 1) * sizeof *g->rows);
    for (size_t i = 0; i < n; i++) g->rows[g->off[gi[i] + 1]++] = rows ? rows[i] : i;
    free(gi);
    tl_map_free(&ix);
}

static void groups_free(groups *g)
{
    free(g->key);
    free(g->off);
    free(g->rows);
}

/* The table's pool id of a string cell (TL_NULL_STR when missing). */
static uint32_t sid(const tl_table *t, size_t col, size_t row) { return t->cols[col].v.s[row]; }
static const char *sstr(const tl_table *t, uint32_t id) { return id == TL_NULL_STR ? "" : tl_strpool_get(&t->pool, id); }

/* cpu_op_map_trace1/2.json: {cpu_op_name: sorted unique kernel names}, keys sorted. */
static char *cpu_op_map_side(const tl_table *s, const char *source)
{
    size_t cn = (size_t)tl_table_col(s, "name"), cc = (size_t)tl_table_col(s, "cpu_op_name"),
           cs = (size_t)tl_table_col(s, "source");
    size_t *rows = tl_xmalloc((s->nrows + 1) * sizeof *rows), n = 0;
    uint32_t *keys = tl_xmalloc((s->nrows + 1) * sizeof *keys);
    for (size_t r = 0; r < s->nrows; r++)
        if (!strcmp(sstr(s, sid(s, cs, r)), source)) {
            keys[n] = sid(s, cc, r);
            rows[n++] = r;
        }
    groups g;
    groups_make(&g, keys, rows, n);
    /* groups by op name, sorted */
    size_t *ord = tl_xmalloc((g.n + 1) * sizeof *ord);
    const char **nm = tl_xmalloc((g.n + 1) * sizeof *nm);
    for (size_t k = 0; k < g.n; k++) nm[k] = sstr(s, g.key[k]);
    for (size_t k = 0; k < g.n; k++) ord[k] = k;
    for (size_t i = 1; i < g.n; i++) { /* insertion sort of group indices by name */
        size_t x = ord[i], j = i;
        while (j > 0 && strcmp(nm[ord[j - 1]], nm[x]) > 0) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = x;
    }
    const char **vals = tl_xmalloc((n + 1) * sizeof *vals);
    tl_sbuf b;
    tl_sb_init(&b);
    if (!g.n) tl_sb_puts(&b, "{}");
    else {
        tl_sb_putc(&b, '{');
        for (size_t k = 0; k < g.n; k++) {
            size_t gk = ord[k], m = 0;
            for (size_t i = g.off[gk]; i < g.off[gk + 1]; i++) vals[m++] = sstr(s, sid(s, cn, g.rows[i]));
            m = sort_unique(vals, m);
            if (k) tl_sb_putc(&b, ',');
            js_nl(&b, 1);
            js_str(&b, nm[gk]);
            tl_sb_puts(&b, ": ");
            js_list(&b, vals, m, 1);
        }
        js_nl(&b, 0);
        tl_sb_putc(&b, '}');
    }
    groups_free(&g);
    free(ord);
    free(nm);
    free(vals);
    free(rows);
    free(keys);
    return tl_sb_take(&b);
}

/* the text after the last "::" of a left-to-right split */
static const char *after_ns(const char *s)
{
    const char *last = s, *p = s;
    while ((p = strstr(p, "::"))) {
        p += 2;
        last = p;
    }
    return last;
}

/* the first 20 characters (code points) */
static size_t prefix20(const char *s)
{
    size_t i = 0;
    for (int ch = 0; s[i] && ch < 20; ch++) {
        i++;
        while (((unsigned char)s[i] & 0xc0) == 0x80) i++;
    }
    return i;
}

typedef TL_VEC(uint32_t) idlist;

static int in_ids(const idlist *l, uint32_t x)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == x) return 1;
    return 0;
}

static void push_unique_id(idlist *l, uint32_t x)
{
    if (!in_ids(l, x)) TL_PUSH(*l, x);
}

static void remove_id(idlist *l, uint32_t x)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == x) {
            memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof *l->v);
            l->n--;
            return;
        }
}

/* get_cpu_op_map's rename map over the diff_stats rows (ids of ds's pool). */
typedef struct rename_ctx {
    const tl_table *ds;
    tl_map mods;        /* cpu op id -> index into mod_lists */
    TL_VEC(idlist) mod_lists;
    tl_map to;          /* cpu op id -> index into names (the new name) */
    TL_VEC(char *) names;
} rename_ctx;

/* find_common_name; NULL when none (the result is malloc'd) */
static char *common_name(const rename_ctx *rc, uint32_t i1, uint32_t i2)
{
    const char *n1 = sstr(rc->ds, i1), *n2 = sstr(rc->ds, i2);
    const char *a = after_ns(n1), *b = after_ns(n2);
    if (!strcmp(a, b)) return tl_xstrdup(a);
    if (strstr(b, a)) return tl_xstrdup(a);
    if (strstr(a, b)) return tl_xstrdup(b);
    size_t pa = prefix20(a), pb = prefix20(b);
    if (pa == pb && !memcmp(a, b, pa)) {
        tl_sbuf s;
        tl_sb_init(&s);
        tl_sb_printf(&s, "%s/%s", a, b);
        return tl_sb_take(&s);
    }
    uint32_t m1 = tl_map_get(&rc->mods, i1, 0), m2 = tl_map_get(&rc->mods, i2, 0);
    if (m1 != UINT32_MAX && m2 != UINT32_MAX && rc->mod_lists.v[m1].n == 1 && rc->mod_lists.v[m2].n == 1 &&
        rc->mod_lists.v[m1].v[0] == rc->mod_lists.v[m2].v[0]) {
        tl_sbuf s;
        tl_sb_init(&s);
        tl_sb_puts(&s, "");
        for (const char *p = sstr(rc->ds, rc->mod_lists.v[m1].v[0]); *p; p++)
            if (*p != ' ') tl_sb_putc(&s, *p);
        return tl_sb_take(&s);
    }
    return NULL;
}

static void add_rename(rename_ctx *rc, uint32_t from, const char *to)
{
    uint32_t k = tl_map_get(&rc->to, from, 0);
    if (k != UINT32_MAX) {
        free(rc->names.v[k]);
        rc->names.v[k] = tl_xstrdup(to);
        return;
    }
    tl_map_put(&rc->to, from, 0, (uint32_t)rc->names.n);
    TL_PUSH(rc->names, tl_xstrdup(to));
}

static void rename_map(const tl_table *ds, rename_ctx *rc)
{
    size_t cc = (size_t)tl_table_col(ds, "cpu_op_name"), cs = (size_t)tl_table_col(ds, "source"),
           cl = (size_t)tl_table_col(ds, "lowest_common_ancestor_id"), cm = (size_t)tl_table_col(ds, "nn_module_parent");
    size_t n = ds->nrows;
    uint32_t *keys = tl_xmalloc((n + 1) * sizeof *keys);
    size_t *rows = tl_xmalloc((n + 1) * sizeof *rows);
    /* module_map: per cpu op, the unique nn_module_parents of its last source */
    for (int src = 0; src < 2; src++) {
        size_t m = 0;
        for (size_t r = 0; r < n; r++)
            if (!strcmp(sstr(ds, sid(ds, cs, r)), src ? "trace2" : "trace1")) {
                keys[m] = sid(ds, cc, r);
                rows[m++] = r;
            }
        groups g;
        groups_make(&g, keys, rows, m);
        for (size_t k = 0; k < g.n; k++) {
            idlist mods = {0};
            for (size_t i = g.off[k]; i < g.off[k + 1]; i++) push_unique_id(&mods, sid(ds, cm, g.rows[i]));
            uint32_t x = tl_map_get(&rc->mods, g.key[k], 0);
            if (x == UINT32_MAX) {
                tl_map_put(&rc->mods, g.key[k], 0, (uint32_t)rc->mod_lists.n);
                TL_PUSH(rc->mod_lists, mods);
            } else {
                free(rc->mod_lists.v[x].v);
                rc->mod_lists.v[x] = mods;
            }
        }
        groups_free(&g);
    }
    /* the LCA ids in order of first appearance */
    size_t m = 0;
    for (size_t r = 0; r < n; r++)
        if (!tl_table_is_null(ds, cl, r)) {
            keys[m] = (uint32_t)ds->cols[cl].v.i[r];
            rows[m++] = r;
        }
    groups g;
    groups_make(&g, keys, rows, m);
    tl_map visited;
    tl_map_init(&visited, 64);
    for (size_t k = 0; k < g.n; k++) {
        idlist n1 = {0}, n2 = {0};
        for (size_t i = g.off[k]; i < g.off[k + 1]; i++) {
            size_t r = g.rows[i];
            if (!strcmp(sstr(ds, sid(ds, cs, r)), "trace1")) push_unique_id(&n1, sid(ds, cc, r));
            else push_unique_id(&n2, sid(ds, cc, r));
        }
        if (n1.n && n2.n) {
            int all = 1;
            for (size_t i = 0; i < n1.n && all; i++) all = tl_map_get(&visited, n1.v[i], 0) != UINT32_MAX;
            for (size_t i = 0; i < n2.n && all; i++) all = tl_map_get(&visited, n2.v[i], 0) != UINT32_MAX;
            if (!all) {
                for (size_t i = 0; i < n1.n; i++) tl_map_put(&visited, n1.v[i], 0, 1);
                for (size_t i = 0; i < n2.n; i++) tl_map_put(&visited, n2.v[i], 0, 1);
                if (n1.n == n2.n) {
                    for (size_t i = 0; i < n1.n; i++) {
                        if (n1.v[i] == n2.v[i]) continue;
                        char *cn = common_name(rc, n1.v[i], n2.v[i]);
                        if (cn) {
                            add_rename(rc, n2.v[i], cn);
                            add_rename(rc, n1.v[i], cn);
                            free(cn);
                        }
                    }
                } else {
                    idlist copy = {0};
                    for (size_t i = 0; i < n1.n; i++) TL_PUSH(copy, n1.v[i]);
                    for (size_t i = 0; i < n1.n; i++)
                        if (in_ids(&n2, n1.v[i])) {
                            remove_id(&copy, n1.v[i]);
                            remove_id(&n2, n1.v[i]);
                        }
                    for (size_t i = 0; i < copy.n; i++)
                        for (size_t j = 0; j < n2.n; j++) {
                            char *cn = common_name(rc, copy.v[i], n2.v[j]);
                            if (!cn) continue;
                            add_rename(rc, copy.v[i], cn);
                            add_rename(rc, n2.v[j], cn);
                            free(cn);
                            memmove(n2.v + j, n2.v + j + 1, (n2.n - j - 1) * sizeof *n2.v);
                            n2.n--;
                            break;
                        }
                    free(copy.v);
                }
            }
        }
        free(n1.v);
        free(n2.v);
    }
    tl_map_free(&visited);
    groups_free(&g);
    free(keys);
    free(rows);
}

/* cpu_op_map.json: per (renamed) cpu op, per source, its kernels and
 * (space-free) nn_module_parents; the renaming is applied to a copy
 * ([FIX]: the summary keeps the real names). */
static char *cpu_op_map_json(const tl_table *ds, const tl_table *s, int identical)
{
    rename_ctx rc;
    memset(&rc, 0, sizeof rc);
    rc.ds = ds;
    tl_map_init(&rc.mods, 64);
    tl_map_init(&rc.to, 64);
    rename_map(ds, &rc);
    size_t cn = (size_t)tl_table_col(s, "name"), cc = (size_t)tl_table_col(s, "cpu_op_name"),
           cs = (size_t)tl_table_col(s, "source"), cm = (size_t)tl_table_col(s, "nn_module_parent");
    size_t dcc = (size_t)tl_table_col(ds, "cpu_op_name");
    size_t n = s->nrows;
    /* the renamed op of each summary row, interned */
    tl_strpool ops, mods;
    tl_strpool_init(&ops);
    tl_strpool_init(&mods);
    uint32_t *op = tl_xmalloc((n + 1) * sizeof *op), *mod = tl_xmalloc((n + 1) * sizeof *mod);
    tl_sbuf m;
    tl_sb_init(&m);
    for (size_t r = 0; r < n; r++) {
        const char *nm = sstr(s, sid(s, cc, r));
        /* the rename map is keyed by ds's pool ids */
        uint32_t did = tl_strpool_find(&ds->pool, nm, strlen(nm));
        uint32_t k = did == UINT32_MAX ? UINT32_MAX : tl_map_get(&rc.to, did, 0);
        const char *to = k == UINT32_MAX ? nm : rc.names.v[k];
        op[r] = tl_strpool_intern(&ops, to, strlen(to));
        tl_sb_clear(&m);
        tl_sb_puts(&m, "");
        for (const char *p = sstr(s, sid(s, cm, r)); *p; p++)
            if (*p != ' ') tl_sb_putc(&m, *p);
        mod[r] = tl_strpool_intern(&mods, m.s, m.len);
    }
    (void)dcc;
    tl_sb_free(&m);
    groups g;
    groups_make(&g, op, NULL, n);
    const char **vals = tl_xmalloc((n + 1) * sizeof *vals);
    size_t *rows = tl_xmalloc((n + 1) * sizeof *rows);
    tl_sbuf b;
    tl_sb_init(&b);
    if (!g.n) tl_sb_puts(&b, "{}");
    else {
        tl_sb_putc(&b, '{');
        for (size_t k = 0; k < g.n; k++) {
            if (k) tl_sb_putc(&b, ',');
            js_nl(&b, 1);
            js_str(&b, tl_strpool_get(&ops, g.key[k]));
            tl_sb_puts(&b, ": ");
            int nsrc = 0;
            for (int src = 0; src < 2; src++) {
                if (identical && src == 1) break;
                const char *sn = src ? "trace2" : "trace1";
                size_t nr = 0;
                for (size_t i = g.off[k]; i < g.off[k + 1]; i++)
                    if (!strcmp(sstr(s, sid(s, cs, g.rows[i])), sn)) rows[nr++] = g.rows[i];
                if (!nr) continue;
                int lvl = identical ? 1 : 2;
                if (!identical) {
                    tl_sb_puts(&b, nsrc ? "," : "{");
                    js_nl(&b, 2);
                    js_str(&b, sn);
                    tl_sb_puts(&b, ": ");
                }
                nsrc++;
                tl_sb_putc(&b, '{');
                js_nl(&b, lvl + 1);
                js_str(&b, "kernels");
                tl_sb_puts(&b, ": ");
                for (size_t i = 0; i < nr; i++) vals[i] = sstr(s, sid(s, cn, rows[i]));
                js_list(&b, vals, sort_unique(vals, nr), lvl + 1);
                tl_sb_putc(&b, ',');
                js_nl(&b, lvl + 1);
                js_str(&b, "nn_module_parents");
                tl_sb_puts(&b, ": ");
                for (size_t i = 0; i < nr; i++) vals[i] = tl_strpool_get(&mods, mod[rows[i]]);
                js_list(&b, vals, sort_unique(vals, nr), lvl + 1);
                js_nl(&b, lvl);
                tl_sb_putc(&b, '}');
            }
            if (!identical) {
                if (!nsrc) tl_sb_puts(&b, "{}");
                else {
                    js_nl(&b, 1);
                    tl_sb_putc(&b, '}');
                }
            }
        }
        js_nl(&b, 0);
        tl_sb_putc(&b, '}');
    }
    groups_free(&g);
    free(vals);
    free(rows);
    free(op);
    free(mod);
    tl_strpool_free(&ops);
    tl_strpool_free(&mods);
    for (size_t i = 0; i < rc.mod_lists.n; i++) free(rc.mod_lists.v[i].v);
    free(rc.mod_lists.v);
    for (size_t i = 0; i < rc.names.n; i++) free(rc.names.v[i]);
    free(rc.names.v);
    tl_map_free(&rc.mods);
    tl_map_free(&rc.to);
    return tl_sb_take(&b);
}

/* Drops the trace2 rows and the source column, in place. */
static void drop_trace2(tl_table *t)
{
    long cs = tl_table_col(t, "source");
    size_t *idx = tl_xmalloc((t->nrows + 1) * sizeof *idx), n = 0;
    for (size_t r = 0; r < t->nrows; r++)
        if (strcmp(tl_table_str(t, (size_t)cs, r), "trace2")) idx[n++] = r;
    tl_table_keep_rows(t, idx, n);
    tl_table_drop(t, "source");
    free(idx);
}

/* ================================================================= run */

static void side_init(ctx *c, int k, const tl_trace *t)
{
    side *s = &c->s[k];
    s->es = &t->es;
    s->tr = &t->tree;
    s->ov = &c->d->ov[k];
    size_t nn = t->es.names.n;
    s->norm = tl_xmalloc((nn + 1) * sizeof *s->norm);
    s->strip = tl_xmalloc((nn + 1) * sizeof *s->strip);
    s->graph = tl_xcalloc(nn + 1, 1);
    tl_sbuf b;
    tl_sb_init(&b);
    for (uint32_t id = 0; id < nn; id++) {
        const char *nm = tl_strpool_get(&t->es.names, id);
        size_t len = tl_strpool_len(&t->es.names, id);
        tl_sb_clear(&b);
        tl_diff_normalize_name(nm, len, 0, &b);
        s->norm[id] = tl_strpool_intern(&c->npool, b.s ? b.s : "", b.len);
        tl_sb_clear(&b);
        tl_diff_normalize_name(nm, len, 1, &b);
        s->strip[id] = tl_strpool_intern(&c->npool, b.s ? b.s : "", b.len);
        s->graph[id] = !strcmp(nm, "hipGraphLaunch") || !strcmp(nm, "cudaGraphLaunch");
    }
    tl_sb_free(&b);
}

static void side_free(side *s)
{
    free(s->norm);
    free(s->strip);
    free(s->graph);
}

int tl_trace_diff_run(tl_trace_diff *d, const tl_trace *t1, const tl_trace *t2, int flags, tl_error *err)
{
    memset(d, 0, sizeof *d);
    d->t[0] = t1;
    d->t[1] = t2;
    tl_strpool_init(&d->names);
    for (int k = 0; k < 2; k++) {
        tl_map_init(&d->ov[k].kids_of, 8);
        tl_map_init(&d->ov[k].parent_of, 8);
    }
    double t0 = tl_now_s();
    size_t *r[2];
    size_t nr[2];
    for (int k = 0; k < 2; k++) nr[k] = cpu_roots(d->t[k], &r[k]);
    if (!nr[0] || !nr[1]) {
        tl_error_set(err, "%s: TraceDiff needs cpu_op roots in both traces (none in trace %d)",
                     d->t[!nr[0] ? 0 : 1]->path, !nr[0] ? 1 : 2);
        free(r[0]);
        free(r[1]);
        tl_trace_diff_free(d);
        return -1;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.d = d;
    tl_strpool_init(&c.npool);
    side_init(&c, 0, t1);
    side_init(&c, 1, t2);
    /* unique top roots per trace, in order */
    uint32_t *roots[2];
    size_t nroots[2];
    for (int k = 0; k < 2; k++) {
        roots[k] = tl_xmalloc((nr[k] + 1) * sizeof *roots[k]);
        nroots[k] = 0;
        tl_map seen;
        tl_map_init(&seen, nr[k] + 1);
        for (size_t i = 0; i < nr[k]; i++) {
            uint32_t rt = top_root(&c.s[k], (uint32_t)r[k][i]);
            if (tl_map_get(&seen, rt, 0) != UINT32_MAX) continue;
            tl_map_put(&seen, rt, 0, 1);
            roots[k][nroots[k]++] = rt;
        }
        tl_map_free(&seen);
        free(r[k]);
    }
    for (int k = 0; k < 2; k++) {
        c.first_of[k] = tl_xmalloc((d->t[k]->es.n + 1) * sizeof(uint32_t));
        memset(c.first_of[k], 0xff, (d->t[k]->es.n + 1) * sizeof(uint32_t));
    }
    arena memo = {0};
    size_t n = nroots[0] > nroots[1] ? nroots[0] : nroots[1];
    d->roots = tl_xmalloc((n + 1) * sizeof *d->roots);
    for (size_t i = 0; i < n; i++) {
        uint32_t a = i < nroots[0] ? roots[0][i] : NONE, b = i < nroots[1] ? roots[1][i] : NONE;
        d->roots[d->n_roots++] = merge(&c, a, b, &memo);
    }
    free(roots[0]);
    free(roots[1]);
    afree(&memo);
    afree(&c.ar);
    free(c.wf);
    free(c.bits);
    d->nodes = c.nodes.v;
    d->n_nodes = c.nodes.n;
    d->kids = c.kids.v;
    d->n_kids = c.kids.n;
    for (int k = 0; k < 2; k++) {
        d->first_of[k] = c.first_of[k];
        d->next_of[k] = c.next_of[k].v;
    }

    double tm = tl_now_s();
    d->seconds_merge = tm - t0;
    /* diff stats */
    sctx x;
    memset(&x, 0, sizeof x);
    x.d = d;
    x.s = c.s;
    x.visited = tl_xcalloc(d->n_nodes + 1, 1);
    tl_map_init(&x.lca_names, 256);
    tl_sb_init(&x.b1);
    tl_sb_init(&x.b2);
    tl_sb_init(&x.b3);
    for (size_t i = 0; i < d->n_roots; i++) stats_walk(&x, d->roots[i], NONE);
    free(x.visited);
    free(x.iv.v);
    free(x.g.v);
    tl_map_free(&x.lca_names);
    tl_sb_free(&x.b1);
    tl_sb_free(&x.b2);
    tl_sb_free(&x.b3);
    d->rows = x.rows.v;
    d->n_rows = x.rows.n;
    side_free(&c.s[0]);
    side_free(&c.s[1]);
    tl_strpool_free(&c.npool);

    double ts = tl_now_s();
    d->seconds_stats = ts - tm;
    if (!d->n_rows) {
        d->identical = 1;
        return 0;
    }
    tl_table *full = diff_stats_table(d, d->rows, d->n_rows);
    d->identical = rows_identical(full);
    tl_table *sum = NULL;
    if (!(flags & TL_DIFF_NO_SUMMARY)) {
        sum = unique_args_summary(full);
        if (sum->nrows) {
            d->cpu_op_map_trace1 = cpu_op_map_side(sum, "trace1");
            d->cpu_op_map_trace2 = cpu_op_map_side(sum, "trace2");
            d->cpu_op_map = cpu_op_map_json(full, sum, d->identical);
        } else {
            tl_table_free(sum);
            sum = NULL;
        }
    }
    if (d->identical) {
        drop_trace2(full);
        if (sum) drop_trace2(sum);
    }
    d->diff_stats = full;
    d->summary = sum;
    d->seconds_tables = tl_now_s() - ts;
    return 0;
}

void tl_trace_diff_free(tl_trace_diff *d)
{
    free(d->nodes);
    free(d->kids);
    free(d->roots);
    for (int k = 0; k < 2; k++) {
        free(d->first_of[k]);
        free(d->next_of[k]);
        tl_map_free(&d->ov[k].kids_of);
        tl_map_free(&d->ov[k].parent_of);
    }
    free(d->rows);
    tl_strpool_free(&d->names);
    tl_table_free(d->diff_stats);
    tl_table_free(d->summary);
    free(d->cpu_op_map_trace1);
    free(d->cpu_op_map_trace2);
    free(d->cpu_op_map);
    memset(d, 0, sizeof *d);
}

int64_t tl_trace_diff_other_uid(const tl_trace_diff *d, int tree, uint32_t uid)
{
    if (tree != 1 && tree != 2) return -2;
    int s = tree - 1;
    if (uid >= d->t[s]->es.n) return -2;
    uint32_t last = UINT32_MAX;
    for (uint32_t m = d->first_of[s][uid]; m != UINT32_MAX; m = d->next_of[s][m]) last = m;
    if (last == UINT32_MAX) return -2;
    uint32_t o = s == 0 ? d->nodes[last].key2 : d->nodes[last].key1;
    return o == NONE ? -1 : (int64_t)o;
}

/* ========================================================= tree text */

/* _get_op_name as text: the name, or the UID when it is empty */
static const char *op_name_text(const tl_trace *t, uint32_t u, char *buf, size_t cap)
{
    const char *nm = tl_es_name(&t->es, u);
    if (*nm) return nm;
    snprintf(buf, cap, "%u", u);
    return buf;
}

static void tree_lines(const tl_trace_diff *d, uint32_t mid, tl_sbuf *prefix, int last, tl_sbuf *out)
{
    const tl_merged_node *nd = &d->nodes[mid];
    tl_sb_putn(out, prefix->s ? prefix->s : "", prefix->len);
    tl_sb_puts(out, last ? "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 " : "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ");
    char b1[16], b2[16];
    const char *a = nd->uid1 != NONE ? op_name_text(d->t[0], nd->uid1, b1, sizeof b1) : "None";
    const char *b = nd->uid2 != NONE ? op_name_text(d->t[1], nd->uid2, b2, sizeof b2) : "None";
    if (nd->type == TL_MERGED_COMBINED) {
        if (strcmp(a, b)) {
            tl_sb_puts(out, "combined: ");
            tl_sb_puts(out, a);
            tl_sb_puts(out, " | ");
        }
        tl_sb_puts(out, b);
    } else if (nd->type == TL_MERGED_TRACE1) {
        tl_sb_puts(out, ">> trace1: ");
        tl_sb_puts(out, a);
    } else {
        tl_sb_puts(out, "<< trace2: ");
        tl_sb_puts(out, b);
    }
    tl_sb_putc(out, '\n');
    size_t plen = prefix->len;
    tl_sb_puts(prefix, last ? "    " : "\xe2\x94\x82   ");
    size_t total = nd->nkids, done = 0;
    for (int ty = 0; ty < 3; ty++)
        for (uint32_t k = 0; k < nd->nkids; k++) {
            uint32_t ch = d->kids[nd->kid_off + k];
            if (d->nodes[ch].type != ty) continue;
            done++;
            tree_lines(d, ch, prefix, done == total, out);
        }
    prefix->len = plen;
    if (prefix->s) prefix->s[plen] = 0;
}

void tl_trace_diff_tree_text(const tl_trace_diff *d, int prune_non_gpu, tl_sbuf *out)
{
    tl_sbuf prefix;
    tl_sb_init(&prefix);
    for (size_t i = 0; i < d->n_roots; i++) {
        const tl_merged_node *nd = &d->nodes[d->roots[i]];
        if (prune_non_gpu) {
            int gpu = 0;
            for (int s = 0; s < 2 && !gpu; s++) {
                uint32_t u = s == 0 ? nd->uid1 : nd->uid2;
                if (u == NONE) continue;
                const tl_trace *t = d->t[s];
                gpu = tl_is_gpu_cat(t->es.cat[u]) || t->tree.gpu_off[u + 1] > t->tree.gpu_off[u];
            }
            if (!gpu) continue;
        }
        tl_sb_clear(&prefix);
        tree_lines(d, d->roots[i], &prefix, i + 1 == d->n_roots, out);
    }
    tl_sb_free(&prefix);
}

/* ============================================================ files */

static int write_text(const char *dir, const char *name, const char *text, size_t len, tl_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tl_outfile o;
    if (tl_outfile_open(&o, path, err) != 0) return -1;
    if (len && fwrite(text, 1, len, o.f) != len) {
        tl_error_set(err, "%s: write failed: %s", path, strerror(errno));
        tl_outfile_abort(&o);
        return -1;
    }
    return tl_outfile_commit(&o, err);
}

static int write_csv(const char *dir, const char *name, const tl_table *t, tl_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tl_outfile o;
    if (tl_outfile_open(&o, path, err) != 0) return -1;
    tl_table_write_csv(t, o.f);
    return tl_outfile_commit(&o, err);
}

int tl_trace_diff_write(const tl_trace_diff *d, const char *dir, int prune_non_gpu, tl_error *err)
{
    if (tl_mkdirs(dir, err) != 0) return -1;
    tl_sbuf b;
    tl_sb_init(&b);
    tl_trace_diff_tree_text(d, prune_non_gpu, &b);
    int rc = write_text(dir, "merged_tree_output.txt", b.s ? b.s : "", b.len, err);
    tl_sb_free(&b);
    if (rc) return -1;
    const tl_table *tabs[2] = {d->diff_stats, d->summary};
    const char *names[2] = {"diff_stats.csv", "diff_stats_unique_args_summary.csv"};
    for (int k = 0; k < 2; k++) {
        if (!tabs[k] || !tabs[k]->nrows) continue;
        if (write_csv(dir, names[k], tabs[k], err) != 0) return -1;
    }
    const char *js[3] = {d->cpu_op_map_trace1, d->cpu_op_map_trace2, d->cpu_op_map};
    const char *jn[3] = {"cpu_op_map_trace1.json", "cpu_op_map_trace2.json", "cpu_op_map.json"};
    for (int k = 0; k < 3; k++)
        if (js[k] && write_text(dir, jn[k], js[k], strlen(js[k]), err) != 0) return -1;
    return 0;
}

/* ======================================================= report (§2.3) */

typedef struct meta {
    TL_VEC(uint32_t) ids;
    TL_VEC(uint32_t) names; /* UINT32_MAX: None */
    double t1, t2, count;
    int set;
} meta;

static int cmp_row_lca(void *ctx, size_t a, size_t b)
{
    const tl_diff_row *r = ctx;
    return (r[a].lca > r[b].lca) - (r[a].lca < r[b].lca);
}

int tl_trace_diff_enrich_unified(const tl_trace_diff *d, tl_table *summary, const uint32_t *kernel_row)
{
    long kt = tl_table_col(summary, KT_SUM);
    if (kt < 0 || !d->n_rows || !kernel_row) return 0;
    const tl_diff_row *rows = d->rows;
    size_t n = d->n_rows;
    /* per LCA: the first trace2 busy time, and whether trace2 has rows */
    size_t nn = d->n_nodes + 1;
    double *t2first = tl_xmalloc(nn * sizeof *t2first);
    uint8_t *has2 = tl_xcalloc(nn, 1);
    for (size_t r = 0; r < n; r++) {
        if (rows[r].src != 1 || rows[r].lca == UINT32_MAX) continue;
        if (!has2[rows[r].lca]) t2first[rows[r].lca] = (double)rows[r].busy_ns / 1000.0;
        has2[rows[r].lca] = 1;
    }
    /* trace1 rows with an LCA, grouped by LCA id ascending (stable) */
    size_t *idx = tl_xmalloc((n + 1) * sizeof *idx), m = 0;
    for (size_t r = 0; r < n; r++)
        if (rows[r].src == 0 && rows[r].lca != UINT32_MAX) idx[m++] = r;
    tl_msort(idx, m, cmp_row_lca, (void *)rows);
    meta *mt = tl_xcalloc(summary->nrows + 1, sizeof *mt);
    uint32_t *seen = tl_xmalloc((summary->nrows + 1) * sizeof *seen);
    memset(seen, 0xff, (summary->nrows + 1) * sizeof *seen);
    int any = 0;
    for (size_t a = 0; a < m;) {
        uint32_t lca = rows[idx[a]].lca;
        size_t b = a;
        while (b < m && rows[idx[b]].lca == lca) b++;
        double t1 = (double)rows[idx[a]].busy_ns / 1000.0, t2 = has2[lca] ? t2first[lca] : 0.0;
        uint32_t name = UINT32_MAX;
        for (size_t k = a; k < b && name == UINT32_MAX; k++) name = rows[idx[k]].lca_name;
        if (name != UINT32_MAX && !tl_strpool_len(&d->names, name)) name = UINT32_MAX;
        for (size_t k = a; k < b; k++) {
            uint32_t key = kernel_row[rows[idx[k]].gpu];
            if (key == UINT32_MAX || key >= summary->nrows || seen[key] == lca) continue;
            seen[key] = lca;
            meta *e = &mt[key];
            any = 1;
            if (!e->set) {
                e->set = 1;
                e->t1 = t1;
                e->t2 = t2;
                e->count = has2[lca] ? 1 : 0;
            } else {
                e->t1 += t1;
                e->t2 += t2;
                if (has2[lca]) e->count += 1;
            }
            TL_PUSH(e->ids, lca);
            TL_PUSH(e->names, name);
        }
        a = b;
    }
    free(seen);
    free(idx);
    free(t2first);
    free(has2);
    if (any) {
        static const char *const cols[7] = {"speedup (trace2/trace1)", "delta_us (trace2 - trace1)", "lca_count_trace2",
                                            "lca_id", "lca_name", "lca_total_kernel_time_trace1_us",
                                            "lca_total_kernel_time_trace2_us"};
        size_t c[7];
        for (int k = 0; k < 7; k++) c[k] = tl_table_add_col(summary, cols[k], (k == 3 || k == 4) ? TL_COL_STR : TL_COL_F64);
        tl_sbuf b;
        tl_sb_init(&b);
        for (size_t r = 0; r < summary->nrows; r++) {
            const meta *e = &mt[r];
            if (!e->set) continue;
            double rowt = tl_table_num(summary, (size_t)kt, r);
            tl_table_set_f64(summary, c[0], r, e->t1 != 0 ? e->t2 / e->t1 : NAN);
            tl_table_set_f64(summary, c[1], r, e->t2 - rowt);
            tl_table_set_f64(summary, c[2], r, e->count);
            tl_sb_clear(&b);
            for (size_t k = 0; k < e->ids.n; k++) tl_sb_printf(&b, "%s%u", k ? "; " : "", e->ids.v[k]);
            tl_table_set_str(summary, c[3], r, b.s ? b.s : "");
            tl_sb_clear(&b);
            int first = 1;
            for (size_t k = 0; k < e->names.n; k++) {
                if (e->names.v[k] == UINT32_MAX) continue;
                if (!first) tl_sb_puts(&b, "; ");
                tl_sb_puts(&b, tl_strpool_get(&d->names, e->names.v[k]));
                first = 0;
            }
            tl_table_set_str(summary, c[4], r, b.s ? b.s : "");
            tl_table_set_f64(summary, c[5], r, e->t1);
            tl_table_set_f64(summary, c[6], r, e->t2);
        }
        tl_sb_free(&b);
        for (int k = 0; k < 7; k++) tl_table_move(summary, cols[k], (size_t)kt + 1 + (size_t)k);
    }
    for (size_t r = 0; r < summary->nrows; r++) {
        free(mt[r].ids.v);
        free(mt[r].names.v);
    }
    free(mt);
    return any;
}
