/* kernel_ngrams.c — see kernel_ngrams.h.
 *
 * Per stream and per length L, one pass over its windows with a hash table
 * (a rolling polynomial hash of the names, every hit verified name by name)
 * gives each distinct L-gram its windows as a linked list and its
 * non-overlapping count and time, an upper bound of what it covers later.
 * The tiling is a lazy greedy over a max-heap of candidates. A candidate's
 * key is an upper bound of what it can cover after any later marks: the time
 * of all its unmarked windows, overlapping ones included (marks only remove
 * windows). The non-overlapping time itself is no such bound: the greedy
 * left-to-right count of a sequence whose end repeats its start (A B A) can
 * pick other windows once some are marked. A candidate popped with a key
 * from before the last pick is evaluated again over its list and pushed
 * back; one evaluated since is pushed back keyed by its exact time, unless
 * that equals its bound; one popped with its exact time is the best there
 * is, and is taken: its kernels are marked. The result equals re-evaluating
 * every candidate at every pick. The count (the largest set of
 * non-overlapping windows, which the greedy gives) only falls as marks come,
 * so a candidate under min_count is dropped for good. */
#include "kernel_ngrams.h"

#include <stdlib.h>
#include <string.h>

#include "idle.h"
#include "../util/vec.h"

void tl_ngram_opts_default(tl_ngram_opts *o)
{
    o->min_len = TL_NGRAM_MIN_LEN;
    o->max_len = TL_NGRAM_MAX_LEN;
    o->top = TL_NGRAM_TOP;
    o->min_count = TL_NGRAM_MIN_COUNT;
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

#define HASH_BASE 0x100000001b3ull
#define NIL UINT32_MAX

/* One stream's sequence and its prefix arrays (m events). */
typedef struct seq {
    size_t m;
    uint32_t *name, *uid;
    int64_t *dur;
    uint64_t *ph;      /* ph[i] = hash of name[0..i) */
    uint32_t *nbreak;  /* copies and sets in [0..i) */
    int64_t *pdur;     /* Σ dur of [0..i) */
    uint8_t *mark;
} seq;

static uint64_t window_hash(const seq *s, size_t i, unsigned len, uint64_t pw)
{
    return s->ph[i + len] - s->ph[i] * pw;
}

static int same(const seq *s, size_t a, size_t b, unsigned len)
{
    for (unsigned j = 0; j < len; j++)
        if (s->name[a + j] != s->name[b + j]) return 0;
    return 1;
}

/* A repetition of a shorter sequence (period p dividing len). */
static int periodic(const seq *s, size_t a, unsigned len)
{
    for (unsigned p = 1; p < len; p++) {
        if (len % p) continue;
        if (same(s, a, a + p, len - p)) return 1;
    }
    return 0;
}

typedef struct entry {
    uint64_t h;
    uint32_t head, tail, last_end, count;
    int64_t ns, all_ns;  /* the counted windows' time; every window's */
} entry;

typedef struct cand {
    uint32_t head;     /* first window; windows linked through next[len] */
    unsigned len;
    size_t count, epoch;  /* epoch: the picks made when the figures were computed */
    int64_t ns, max_ns;   /* the counted windows' time, their longest kernel */
    int64_t ub;           /* the time of all unmarked windows */
    int exact;            /* keyed by ns (else by ub) */
    uint32_t first;    /* first counted window */
} cand;

static int64_t key(const cand *c) { return c->exact ? c->ns : c->ub; }

/* heap order: more time, more kernels, earlier first occurrence */
static int better(const cand *a, const cand *b)
{
    if (key(a) != key(b)) return key(a) > key(b);
    if (a->len != b->len) return a->len > b->len;
    return a->first < b->first;
}

typedef struct heap {
    uint32_t *v;
    size_t n, cap;
    const cand *c;
} heap;

static void heap_push(heap *h, uint32_t x)
{
    TL_GROW(h->v, h->cap, h->n + 1);
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!better(&h->c[x], &h->c[h->v[p]])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = x;
}

static uint32_t heap_pop(heap *h)
{
    uint32_t top = h->v[0], x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= h->n) break;
        if (k + 1 < h->n && better(&h->c[h->v[k + 1]], &h->c[h->v[k]])) k++;
        if (!better(&h->c[h->v[k]], &h->c[x])) break;
        h->v[i] = h->v[k];
        i = k;
    }
    if (h->n) h->v[i] = x;
    return top;
}

/* Counts c's unmarked non-overlapping windows (marking them when mark). */
static void evaluate(const seq *s, uint32_t *const *next, unsigned min_len, cand *c, int mark)
{
    const uint32_t *nx = next[c->len - min_len];
    size_t last_end = 0;
    c->count = 0;
    c->ns = c->max_ns = c->ub = 0;
    c->first = NIL;
    for (uint32_t i = c->head; i != NIL; i = nx[i]) {
        unsigned j = 0;
        while (j < c->len && !s->mark[i + j]) j++;
        if (j < c->len) continue;
        c->ub += s->pdur[i + c->len] - s->pdur[i];
        if (i < last_end) continue;
        c->count++;
        c->ns += s->pdur[i + c->len] - s->pdur[i];
        for (j = 0; j < c->len; j++) {
            if (s->dur[i + j] > c->max_ns) c->max_ns = s->dur[i + j];
            if (mark) s->mark[i + j] = 1;
        }
        if (c->first == NIL) c->first = i;
        last_end = i + c->len;
    }
}

typedef TL_VEC(tl_ngram) ngram_vec;
typedef TL_VEC(uint32_t) u32_vec;

static void one_stream(const seq *s, int64_t device, int64_t stream, const tl_ngram_opts *o, ngram_vec *out,
                       u32_vec *names)
{
    size_t m = s->m;
    if (m < o->min_len) return;
    unsigned max_len = o->max_len < m ? o->max_len : (unsigned)m;
    unsigned nl = max_len - o->min_len + 1;
    uint32_t **next = tl_xcalloc(nl, sizeof *next);
    size_t nslot = 16;
    while (nslot < 2 * m) nslot *= 2;
    uint32_t *slot = tl_xmalloc(nslot * sizeof *slot);
    TL_VEC(entry) ent = {0};
    TL_VEC(cand) cs = {0};
    uint64_t pw = 1;
    for (unsigned k = 1; k < o->min_len; k++) pw *= HASH_BASE;
    for (unsigned len = o->min_len; len <= max_len; len++) {
        pw *= HASH_BASE;
        uint32_t *nx = next[len - o->min_len] = tl_xmalloc(m * sizeof *nx);
        memset(slot, 0xff, nslot * sizeof *slot);
        ent.n = 0;
        for (size_t i = 0; i + len <= m; i++) {
            nx[i] = NIL;
            if (s->nbreak[i + len] != s->nbreak[i]) continue;
            uint64_t h = window_hash(s, i, len, pw);
            size_t b = (size_t)mix64(h) & (nslot - 1);
            while (slot[b] != NIL) {
                entry *e = &ent.v[slot[b]];
                if (e->h == h && same(s, e->head, i, len)) break;
                b = (b + 1) & (nslot - 1);
            }
            if (slot[b] == NIL) {
                int64_t w = s->pdur[i + len] - s->pdur[i];
                entry e = {h, (uint32_t)i, (uint32_t)i, (uint32_t)(i + len), 1, w, w};
                slot[b] = (uint32_t)ent.n;
                TL_PUSH(ent, e);
                continue;
            }
            entry *e = &ent.v[slot[b]];
            nx[e->tail] = (uint32_t)i;
            e->tail = (uint32_t)i;
            e->all_ns += s->pdur[i + len] - s->pdur[i];
            if (i >= e->last_end) {
                e->count++;
                e->ns += s->pdur[i + len] - s->pdur[i];
                e->last_end = (uint32_t)(i + len);
            }
        }
        for (size_t k = 0; k < ent.n; k++) {
            const entry *e = &ent.v[k];
            if (e->count < o->min_count || periodic(s, e->head, len)) continue;
            cand c = {e->head, len, e->count, 0, e->ns, 0, e->all_ns, 0, e->head};
            TL_PUSH(cs, c);
        }
    }
    free(ent.v);
    free(slot);
    /* the tiling (epoch: picks made when the candidate's figures were computed) */
    heap hp = {NULL, 0, 0, cs.v};
    for (size_t k = 0; k < cs.n; k++) heap_push(&hp, (uint32_t)k);
    size_t picks = 0;
    int64_t all_ns = s->pdur[m];
    while (hp.n && picks < o->top) {
        uint32_t k = heap_pop(&hp);
        cand *c = &cs.v[k];
        if (c->epoch != picks) {
            evaluate(s, next, o->min_len, c, 0);
            c->epoch = picks;
            c->exact = 0;
            if (c->count >= o->min_count) heap_push(&hp, k);
            continue;
        }
        if (!c->exact && c->ns != c->ub) {
            c->exact = 1;
            heap_push(&hp, k);
            continue;
        }
        evaluate(s, next, o->min_len, c, 1);
        picks++;
        tl_ngram g;
        memset(&g, 0, sizeof g);
        g.device = device;
        g.stream = stream;
        g.rank = (unsigned)picks;
        g.len = c->len;
        g.name_off = names->n;
        for (unsigned j = 0; j < c->len; j++) TL_PUSH(*names, s->name[c->first + j]);
        g.count = c->count;
        g.gpu_ns = c->ns;
        g.max_kernel_ns = c->max_ns;
        g.first_uid = s->uid[c->first];
        g.stream_kernel_ns = all_ns;
        TL_PUSH(*out, g);
    }
    free(hp.v);
    free(cs.v);
    for (unsigned k = 0; k < nl; k++) free(next[k]);
    free(next);
}

void tl_kernel_ngrams_compute(const tl_trace *t, const tl_ngram_opts *o, tl_kernel_ngrams *out)
{
    size_t ng;
    tl_gpu_at *g = tl_idle_gpu_events(&t->es, &ng);
    tl_kernel_ngrams_compute_with(t, o, g, ng, out);
    free(g);
}

void tl_kernel_ngrams_compute_with(const tl_trace *t, const tl_ngram_opts *o, const tl_gpu_at *g, size_t ng,
                                   tl_kernel_ngrams *out)
{
    const tl_event_store *es = &t->es;
    memset(out, 0, sizeof *out);
    tl_ngram_opts op;
    if (o) op = *o;
    else tl_ngram_opts_default(&op);
    if (op.min_len < 2) op.min_len = 2;
    if (op.max_len > 64) op.max_len = 64;
    if (op.max_len < op.min_len) op.max_len = op.min_len;
    if (op.top < 1) op.top = 1;
    if (op.min_count < 2) op.min_count = 2;
    out->opts = op;
    if (!ng) return;
    ngram_vec res = {0};
    u32_vec names = {0};
    seq s;
    s.name = tl_xmalloc(ng * sizeof *s.name);
    s.uid = tl_xmalloc(ng * sizeof *s.uid);
    s.dur = tl_xmalloc(ng * sizeof *s.dur);
    s.ph = tl_xmalloc((ng + 1) * sizeof *s.ph);
    s.nbreak = tl_xmalloc((ng + 1) * sizeof *s.nbreak);
    s.pdur = tl_xmalloc((ng + 1) * sizeof *s.pdur);
    s.mark = tl_xmalloc(ng);
    for (size_t a = 0; a < ng;) {
        size_t b = a;
        while (b < ng && g[b].device == g[a].device && g[b].stream == g[a].stream) b++;
        s.m = b - a;
        s.ph[0] = 0;
        s.nbreak[0] = 0;
        s.pdur[0] = 0;
        int any_kernel = 0;
        for (size_t i = 0; i < s.m; i++) {
            uint32_t u = g[a + i].uid;
            int kern = es->cat[u] == TL_CAT_KERNEL;
            any_kernel |= kern;
            s.uid[i] = u;
            s.name[i] = es->name[u];
            s.dur[i] = es->dur[u];
            s.ph[i + 1] = s.ph[i] * HASH_BASE + mix64(es->name[u]);
            s.nbreak[i + 1] = s.nbreak[i] + !kern;
            s.pdur[i + 1] = s.pdur[i] + (kern ? es->dur[u] : 0);
            s.mark[i] = 0;
        }
        if (any_kernel) {
            out->n_streams++;
            one_stream(&s, g[a].device, g[a].stream, &op, &res, &names);
        }
        a = b;
    }
    free(s.name);
    free(s.uid);
    free(s.dur);
    free(s.ph);
    free(s.nbreak);
    free(s.pdur);
    free(s.mark);
    out->v = res.v;
    out->n = res.n;
    out->names = names.v;
}

void tl_kernel_ngrams_free(tl_kernel_ngrams *k)
{
    free(k->v);
    free(k->names);
    memset(k, 0, sizeof *k);
}
