/* test_store_narrow.c — the narrow forms of the event store and the tree:
 *  - tl_csr (src/util/sparse_csr.h) against plain per-node lists built from
 *    the same random edges (empty, dense and sparse nodes, nodes at word
 *    edges, lists in edge order), from edges and from a list function;
 *  - the 32-bit correlation column with its side list (tl_es_corr /
 *    tl_es_set_corr): small, absent, negative and 64-bit values, overwrites,
 *    out-of-order writes, and their copy through tl_es_copy;
 *  - the args offsets kept modulo 2^bits (TRACELENS_ARGS_OFF_BITS): a store
 *    whose offsets wrap many times reads back every event's args. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/event_store.h"
#include "util/sparse_csr.h"

static int failures, checks;

#define EXPECT(cond, ...)                          \
    do {                                           \
        checks++;                                  \
        if (!(cond)) {                             \
            failures++;                            \
            fprintf(stderr, __VA_ARGS__);          \
            fputc('\n', stderr);                   \
        }                                          \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* reference lists: per node, its items in edge order */
typedef struct { uint32_t *v; size_t n, cap; } list;

static void push(list *l, uint32_t x)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = x;
}

static void check_same(const tl_csr *c, const list *ref, size_t n, const char *what)
{
    size_t total = 0;
    for (size_t u = 0; u < n; u++) {
        size_t len;
        const uint32_t *v = tl_csr_list(c, (uint32_t)u, &len);
        tl_span s = tl_csr_span(c, (uint32_t)u);
        EXPECT(len == ref[u].n && s.e - s.b == len, "%s: node %zu has %zu items, expected %zu", what, u, len, ref[u].n);
        EXPECT(tl_csr_nonempty(c, (uint32_t)u) == (ref[u].n > 0), "%s: node %zu nonempty", what, u);
        if (len == ref[u].n && len) EXPECT(!memcmp(v, ref[u].v, len * sizeof *v), "%s: node %zu items differ", what, u);
        total += ref[u].n;
    }
    EXPECT(c->off[c->k] == total, "%s: %u items, expected %zu", what, c->off[c->k], total);
}

static const list *fn_ref;
static size_t list_fn(void *ctx, uint32_t u, uint32_t *out)
{
    (void)ctx;
    if (out && fn_ref[u].n) memcpy(out, fn_ref[u].v, fn_ref[u].n * sizeof *out);
    return fn_ref[u].n;
}

static void csr_case(size_t n, size_t m, unsigned hot_mod)
{
    tl_edge *e = malloc((m ? m : 1) * sizeof *e);
    list *ref = calloc(n ? n : 1, sizeof *ref);
    for (size_t k = 0; k < m; k++) {
        /* parents drawn from a subset (every hot_mod-th node, and the word
         * edges 63, 64, n - 1) so most nodes stay empty */
        uint32_t p = (uint32_t)(next() % n);
        if (hot_mod > 1) p -= p % hot_mod;
        if (next() % 16 == 0) p = (uint32_t)((next() % 3 == 0 ? 63 : next() % 2 ? 64 : n - 1) % n);
        e[k] = (tl_edge){p, next()};
        push(&ref[p], e[k].c);
    }
    char what[80];
    snprintf(what, sizeof what, "csr n=%zu m=%zu mod=%u", n, m, hot_mod);
    tl_csr c, d;
    tl_csr_from_edges(&c, n, e, m);
    check_same(&c, ref, n, what);
    tl_csr_copy(&d, &c);
    tl_csr_free(&c);
    check_same(&d, ref, n, what);
    tl_csr_free(&d);
    fn_ref = ref;
    tl_csr_from_fn(&c, n, list_fn, NULL);
    check_same(&c, ref, n, what);
    tl_csr_free(&c);
    for (size_t u = 0; u < n; u++) free(ref[u].v);
    free(ref);
    free(e);
}

static void corr_case(void)
{
    tl_event_store es, cp;
    tl_es_init(&es);
    enum { N = 5000 };
    tl_es_grow(&es, N);
    static int64_t want[N];
    int64_t specials[] = {TL_NONE, 0, 1, (int64_t)TL_CORR_BIG - 1, (int64_t)TL_CORR_BIG, (int64_t)TL_CORR_ABSENT,
                          (int64_t)1 << 32, -1, -5000000000ll, INT64_MAX, INT64_MIN + 1};
    size_t ns = sizeof specials / sizeof *specials;
    for (size_t i = 0; i < N; i++) {
        want[i] = next() % 4 ? (int64_t)(next() % 100000) : specials[next() % ns];
        tl_es_set_corr(&es, i, want[i]);
    }
    /* overwrites, out of order: big -> small, small -> big, big -> big */
    for (int r = 0; r < 2000; r++) {
        size_t i = next() % N;
        want[i] = next() % 2 ? specials[next() % ns] : (int64_t)next();
        tl_es_set_corr(&es, i, want[i]);
    }
    es.n = N;
    for (size_t i = 0; i < N; i++)
        EXPECT(tl_es_corr(&es, i) == want[i], "corr %zu: %lld, expected %lld", i, (long long)tl_es_corr(&es, i),
               (long long)want[i]);
    tl_es_copy(&cp, &es);
    for (size_t i = 0; i < N; i++)
        EXPECT(tl_es_corr(&cp, i) == want[i], "copied corr %zu: %lld, expected %lld", i, (long long)tl_es_corr(&cp, i),
               (long long)want[i]);
    tl_es_free(&cp);
    tl_es_free(&es);
}

static void args_case(int bits)
{
    char b[8];
    snprintf(b, sizeof b, "%d", bits);
    setenv("TRACELENS_ARGS_OFF_BITS", b, 1);
    tl_event_store es, cp;
    tl_es_init(&es);
    unsetenv("TRACELENS_ARGS_OFF_BITS");
    enum { N = 3000 };
    tl_es_grow(&es, N);
    es.blob = malloc(1);
    es.blob_cap = 0;
    static uint32_t nargs[N];
    for (size_t i = 0; i < N; i++) {
        /* some events with none, some with many (a jump over several wraps) */
        nargs[i] = next() % 5 == 0 ? 0 : next() % 50 == 0 ? 300 : next() % 6;
        size_t need = es.blob_len + nargs[i] * 24;
        if (need > es.blob_cap) {
            es.blob_cap = 2 * need;
            es.blob = realloc(es.blob, es.blob_cap);
        }
        for (uint32_t a = 0; a < nargs[i]; a++) {
            uint8_t *o = es.blob + es.blob_len;
            size_t k = tl_put_varint(o, a % TL_K__COUNT);
            o[k++] = TL_AV_INT;
            k += tl_put_varint(o + k, tl_zigzag((int64_t)i * 1000 + a));
            es.blob_len += k;
        }
        tl_es_set_args_end(&es, i + 1, es.blob_len);
        tl_es_set_corr(&es, i, TL_NONE);
    }
    es.n = N;
    /* the blob came from malloc: hand it to a copy (tl_es_copy re-encodes
     * into its own blob), then read both */
    tl_es_copy(&cp, &es);
    for (int w = 0; w < 2; w++) {
        const tl_event_store *s = w ? &cp : &es;
        for (size_t i = 0; i < N; i++) {
            tl_arg_iter it;
            tl_arg a;
            tl_es_args_begin(s, i, &it);
            uint32_t got = 0;
            int ok = 1;
            while (tl_es_args_next(&it, &a)) {
                ok &= a.tag == TL_AV_INT && a.i == (int64_t)i * 1000 + got;
                got++;
            }
            EXPECT(ok && got == nargs[i], "bits %d %s: event %zu has %u args (expected %u)%s", bits, w ? "copy" : "store", i,
                   got, nargs[i], ok ? "" : ", wrong values");
        }
    }
    EXPECT(bits >= 32 || es.n_args_wraps > 10, "bits %d: only %u wraps", bits, es.n_args_wraps);
    free(es.blob);
    es.blob = NULL;
    tl_es_free(&cp);
    tl_es_free(&es);
}

int main(void)
{
    size_t sizes[] = {1, 63, 64, 65, 1000, 4097, 100000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        csr_case(sizes[i], 0, 1);
        csr_case(sizes[i], sizes[i] / 3 + 1, 1);
        csr_case(sizes[i], sizes[i] * 2, 1);
        csr_case(sizes[i], sizes[i], 37);
    }
    corr_case();
    args_case(32);
    args_case(8);
    args_case(5);
    printf("store_narrow: %d checks, %d failed\n", checks, failures);
    return failures != 0;
}
