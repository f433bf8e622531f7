/* test_gzsegments.c — a gzip trace scanned by several threads in segments of
 * its decompressed bytes (kineto_scan.c, scan_gzip_segments) gives exactly
 * what the sequential scan of the same file gives: the same store (every
 * column, pool, args blob and top-level key) or the same error (message,
 * byte offset, event number). Documents are random, with arrays of objects
 * inside args (`},{"` outside strings that is not an event start, the cuts
 * that must not be trusted), long strings and whitespace across segment
 * edges, and mutated copies for the error paths; segments of 64 bytes to
 * 8 KiB make each document span many, with 2 to 4 threads and read
 * buffers of 1 to 100 bytes. Also: an empty gzip file, a truncated one,
 * multi-member files, and a value limit small enough to be hit.
 * Usage: test_gzsegments [CASES] [SEED] */
#include <isa-l/igzip_lib.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json/kineto_scan.h"
#include "test.h"

tl_test_ctx tl_test_state;

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned below(unsigned n) { return (unsigned)(rnd() % n); }

typedef struct doc {
    char *p;
    size_t n, cap;
} doc;

static void put(doc *d, const char *s, size_t n)
{
    if (d->n + n + 1 > d->cap) {
        d->cap = (d->n + n + 1) * 2;
        d->p = realloc(d->p, d->cap);
        if (!d->p) abort();
    }
    memcpy(d->p + d->n, s, n);
    d->n += n;
    d->p[d->n] = 0;
}

static void puts_(doc *d, const char *s) { put(d, s, strlen(s)); }

static void event(doc *d, unsigned i)
{
    char b[256];
    snprintf(b, sizeof b, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"op%u", below(2) ? "kernel" : "cpu_op", below(40));
    puts_(d, b);
    if (below(6) == 0) { /* a long name, with escapes */
        unsigned n = below(300);
        for (unsigned k = 0; k < n; k++) puts_(d, below(20) ? "x" : "\\\"},{\\\"");
    }
    snprintf(b, sizeof b, "\",\"pid\":%u,\"tid\":%u,\"ts\":%u.%03u,\"dur\":%u", below(3), below(5), 1000 + i * 7,
             below(1000), below(50));
    puts_(d, b);
    if (below(2)) {
        puts_(d, ",\"args\":{\"External id\":");
        snprintf(b, sizeof b, "%u", i);
        puts_(d, b);
        if (below(3) == 0) { /* objects inside an array: cuts that are not event starts */
            puts_(d, ",\"list\":[");
            unsigned n = 1 + below(20);
            for (unsigned k = 0; k < n; k++) {
                if (k) puts_(d, below(2) ? "," : ", \n ");
                puts_(d, "{\"a\":1,\"b\":[{\"c\":2},{\"d\":\"}\"}]}");
            }
            puts_(d, "]");
        }
        if (below(3) == 0) puts_(d, ",\"correlation\":77");
        puts_(d, "}");
    }
    puts_(d, "}");
}

static void make_doc(doc *d, unsigned events)
{
    d->n = 0;
    int bare = below(6) == 0;
    puts_(d, bare ? "[" : "{\"schemaVersion\":1,\"traceEvents\":[");
    for (unsigned i = 0; i < events; i++) {
        if (i) puts_(d, below(8) ? "," : ",\n  ");
        event(d, i);
    }
    puts_(d, "]");
    if (!bare) puts_(d, below(2) ? ",\"deviceProperties\":[{\"id\":0}]}" : "}");
}

/* gzip of src (members: 1 or 2, split at a random byte). */
static size_t gzip_to(const char *src, size_t n, uint8_t *out, size_t cap, int members)
{
    size_t total = 0, at = members > 1 && n ? below((unsigned)n) : n;
    for (int m = 0; m < members; m++) {
        struct isal_zstream z;
        isal_deflate_init(&z);
        z.gzip_flag = IGZIP_GZIP;
        z.end_of_stream = 1;
        z.flush = NO_FLUSH;
        z.next_in = (uint8_t *)(m == 0 ? src : src + at);
        z.avail_in = (uint32_t)(m == 0 ? at : n - at);
        z.next_out = out + total;
        z.avail_out = (uint32_t)(cap - total);
        if (isal_deflate(&z) != COMP_OK || z.internal_state.state != ZSTATE_END) abort();
        total += z.total_out;
        if (members == 1) break;
    }
    return total;
}

static int same_pool(const tl_strpool *a, const tl_strpool *b)
{
    if (a->n != b->n) return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->len[i] != b->len[i] || memcmp(tl_strpool_get(a, i), tl_strpool_get(b, i), a->len[i]) != 0) return 0;
    return 1;
}

/* Joined parts intern strings in another order: compare by value. */
static int same_text(const tl_strpool *pa, uint32_t a, const tl_strpool *pb, uint32_t b)
{
    return tl_strpool_len(pa, a) == tl_strpool_len(pb, b) &&
           memcmp(tl_strpool_get(pa, a), tl_strpool_get(pb, b), tl_strpool_len(pa, a)) == 0;
}

static int same_store(const tl_event_store *a, const tl_event_store *b)
{
    if (a->n != b->n || a->n_top != b->n_top || a->n_meta != b->n_meta || a->n_seq != b->n_seq ||
        a->bare_array != b->bare_array || a->bytes != b->bytes)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        if (a->ts[i] != b->ts[i] || a->dur[i] != b->dur[i] || tl_es_corr(a, i) != tl_es_corr(b, i) || a->cat[i] != b->cat[i] ||
            a->ph[i] != b->ph[i] || a->flags[i] != b->flags[i] || !same_text(&a->names, a->name[i], &b->names, b->name[i]) ||
            !same_text(&a->cats, a->cat_id[i], &b->cats, b->cat_id[i]))
            return 0;
        tl_idval pa = a->idvals[tl_es_pid(a, i)], pb = b->idvals[tl_es_pid(b, i)];
        if (pa.kind != pb.kind || (pa.kind == 0 ? pa.i != pb.i : !same_text(&a->names, (uint32_t)pa.i, &b->names, (uint32_t)pb.i)))
            return 0;
        tl_arg_iter ia, ib;
        tl_arg xa, xb;
        tl_es_args_begin(a, i, &ia);
        tl_es_args_begin(b, i, &ib);
        for (;;) {
            int ha = tl_es_args_next(&ia, &xa), hb = tl_es_args_next(&ib, &xb);
            if (ha != hb) return 0;
            if (!ha) break;
            if (xa.tag != xb.tag || !same_text(&a->keys, xa.key, &b->keys, xb.key)) return 0;
            if (xa.tag == TL_AV_INT ? xa.i != xb.i : !same_text(&a->values, (uint32_t)xa.i, &b->values, (uint32_t)xb.i))
                return 0;
        }
    }
    for (size_t i = 0; i < a->n_seq; i++)
        if (a->seq_pairs[i].seq != b->seq_pairs[i].seq || a->seq_pairs[i].uid != b->seq_pairs[i].uid) return 0;
    for (size_t i = 0; i < a->n_top; i++)
        if (!same_text(&a->keys, a->top[i].key, &b->keys, b->top[i].key) || a->top[i].len != b->top[i].len ||
            memcmp(a->top[i].raw, b->top[i].raw, a->top[i].len) != 0)
            return 0;
    (void)same_pool;
    return 1;
}

/* The sequential scan of file against segmented scans with several
 * threads and segment sizes. */
static int compare(const char *file, size_t bufsz, size_t max_value, long c)
{
    tl_event_store ref;
    tl_error rerr;
    tl_es_init(&ref);
    tl_scan_opts ro = {.parts = 1, .buffer_bytes = bufsz, .max_value_bytes = max_value};
    int rrc = tl_scan_file(file, &ref, &ro, &rerr);
    int ok = 1;
    for (int t = 0; t < 3 && ok; t++) {
        tl_event_store es;
        tl_error err;
        tl_es_init(&es);
        size_t seg = t == 2 ? (ref.n < 200 ? 1 + below(64) : 256 + below(256)) : 64 + below(8192);
        tl_scan_opts o = {.parts = 2 + t % 3, .buffer_bytes = bufsz, .segment_bytes = seg, .max_value_bytes = max_value};
        int rc = tl_scan_file(file, &es, &o, &err);
        int same = rc == rrc && (rc ? strcmp(err.msg, rerr.msg) == 0 : same_store(&ref, &es));
        CHECK(same);
        if (!same) {
            fprintf(stderr, "  case %ld, %d threads, segments of %zu, buffer %zu: %s | %s (%zu | %zu events)\n", c,
                    o.parts, seg, bufsz, rrc ? rerr.msg : "ok", rc ? err.msg : "ok", ref.n, es.n);
            ok = 0;
        } else if (rc == 0 && t < 2 && es.n >= 100 && seg <= 2048) {
            CHECK(es.parts_joined > 0); /* it did run in segments */
        }
        tl_es_free(&es);
    }
    tl_es_free(&ref);
    return ok;
}

static void write_file(const char *file, const void *p, size_t n)
{
    FILE *f = fopen(file, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) abort();
}

int main(int argc, char **argv)
{
    alarm(300); /* a deadlock fails the test instead of hanging it */
    long cases = argc > 1 ? atol(argv[1]) : 200;
    rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    char file[64];
    snprintf(file, sizeof file, "/tmp/tl_gzseg_%ld.json.gz", (long)getpid());
    doc d = {0};
    size_t cap = 1 << 16;
    uint8_t *gz = malloc(cap);
    long valid = 0, failed = 0;
    for (long c = 0; c < cases; c++) {
        make_doc(&d, below(c % 20 == 0 ? 2000 : 150));
        int mutated = c % 3 == 2;
        if (mutated && d.n) {
            size_t at = below((unsigned)d.n);
            if (below(2)) d.p[at] = "\"{}[],:x\\\0"[below(10)];
            else d.n = at; /* truncated JSON */
        }
        if (cap < d.n * 2 + 1024) {
            cap = d.n * 2 + 1024;
            gz = realloc(gz, cap);
        }
        size_t n = gzip_to(d.p, d.n, gz, cap, below(4) == 0 ? 2 : 1);
        if (c % 17 == 5 && n > 20) n -= 1 + below(12); /* truncated gzip */
        write_file(file, gz, n);
        size_t max_value = c % 7 == 3 ? 64 + below(400) : 0;
        if (!compare(file, 1 + below(100), max_value, c)) break;
        tl_event_store es;
        tl_error err;
        tl_es_init(&es);
        tl_scan_opts o = {.parts = 1};
        if (tl_scan_file(file, &es, &o, &err) == 0) valid++;
        else failed++;
        tl_es_free(&es);
    }
    CHECK(valid > 0 && failed > 0);
    /* one value longer than the pool of segments (8 of them): both workers
     * read ahead into it and wait for a buffer; the pool grows instead of
     * waiting for ever (a deadlock fuzz_scan found: "{" and 90 NUL bytes
     * before a trace, in segments of 8 bytes). Valid and invalid. */
    for (int v = 0; v < 4; v++) {
        d.n = 0;
        if (v == 3) {
            puts_(&d, "{");
            for (int k = 0; k < 90; k++) put(&d, "", 1);
        }
        puts_(&d, "{\"traceEvents\":[");
        for (unsigned i = 0; i < 20; i++) {
            if (i) puts_(&d, ",");
            if (i == 7 || (v == 2 && i == 13)) {
                puts_(&d, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"long\",\"pid\":1,\"tid\":1,\"ts\":1,\"args\":{\"v\":\"");
                for (int k = 0; k < 3000 * (v + 1); k++) put(&d, "abcdefgh" + k % 8, 1);
                puts_(&d, v == 1 ? "\"}" : "\"}}");
            } else {
                event(&d, i);
            }
        }
        puts_(&d, "]}");
        if (cap < d.n * 2 + 1024) {
            cap = d.n * 2 + 1024;
            gz = realloc(gz, cap);
        }
        size_t n = gzip_to(d.p, d.n, gz, cap, 1);
        write_file(file, gz, n);
        for (size_t seg = 8; seg <= 64; seg *= 2) {
            tl_event_store ref, es;
            tl_error rerr, err;
            tl_es_init(&ref);
            tl_es_init(&es);
            tl_scan_opts ro = {.parts = 1}, o = {.parts = 2, .segment_bytes = seg};
            int rrc = tl_scan_file(file, &ref, &ro, &rerr), rc = tl_scan_file(file, &es, &o, &err);
            CHECK_I64(rc, rrc);
            CHECK(rc ? strcmp(err.msg, rerr.msg) == 0 : same_store(&ref, &es));
            CHECK_I64(rrc, v == 0 || v == 2 ? 0 : -1);
            tl_es_free(&ref);
            tl_es_free(&es);
        }
    }
    /* an empty gzip file, and a file of one empty member */
    write_file(file, "", 0);
    compare(file, 64, 0, -1);
    size_t n = gzip_to("", 0, gz, cap, 1);
    write_file(file, gz, n);
    compare(file, 64, 0, -2);
    unlink(file);
    free(gz);
    free(d.p);
    printf("%d checks, %d failed (%ld documents scanned whole, %ld failing)\n", tl_test_state.checks,
           tl_test_state.failures, valid, failed);
    printf("%d passed, %d failed\n", tl_test_state.failures ? 0 : 1, tl_test_state.failures ? 1 : 0);
    return tl_test_state.failures != 0;
}
