/* test_structix.c — the byte classifier of the scanner (src/json/structix.h)
 * and the scanner on top of it, path against path:
 *   1. every path this machine runs classifies random and adversarial
 *      64-byte blocks exactly as a byte-at-a-time reference written here;
 *   2. the string tracking (escaped bytes, inside strings, structural
 *      characters outside strings) agrees with a sequential reference over
 *      runs of blocks: escapes and backslash runs across block edges,
 *      quotes at block edges;
 *   3. the Kineto scanner gives identical stores (every column, pool, args
 *      blob, top-level key) and identical errors with each path, on random
 *      documents built to put escapes, backslash runs, UTF-8 (valid and
 *      not), long whitespace and quotes across 64-byte boundaries, and on
 *      mutated copies of them (for the error paths), in memory and read
 *      from a file in small chunks.
 * Usage: test_structix [CASES] [SEED] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json/kineto_scan.h"
#include "json/structix.h"
#include "test.h"

tl_test_ctx tl_test_state;

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned below(unsigned n) { return (unsigned)(rnd() % n); }

static tl_sx_path paths[TL_SX_NPATHS];
static int npaths;

/* ---------------------------------------------------------- classifier */

static void reference_masks(const uint8_t *p, tl_sx_masks *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < 64; i++) {
        uint64_t bit = (uint64_t)1 << i;
        uint8_t c = p[i];
        if (c == '"') m->quote |= bit;
        if (c == '\\') m->bslash |= bit;
        if (strchr("{}[]:,", c) && c) m->structural |= bit;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') m->space |= bit;
        if (c < 0x20) m->ctrl |= bit;
        if (c >= 0x80) m->high |= bit;
    }
}

/* A byte that is often one of the classes' members or a near miss. */
static uint8_t tricky_byte(void)
{
    static const uint8_t pick[] = {'"', '\\', '{', '}', '[', ']', ':', ',', ' ', '\t', '\n', '\r', 0, 0x1f, 0x20,
                                   0x7f, 0x80, 0xff, 0xc3, 0xa9, 'a', '0', 0x5b ^ 0x20, 0x3a | 0x20, 0x2c | 0x80,
                                   0x22 | 0x80, 0x5c | 0x80, 0x0b, 0x0c, 0x7b, 0x7d, 0x5d};
    return below(3) ? pick[below(sizeof pick)] : (uint8_t)rnd();
}

static void classifier_cases(long cases)
{
    uint8_t block[64 * 4];
    for (long c = 0; c < cases; c++) {
        for (size_t i = 0; i < sizeof block; i++) block[i] = c % 7 == 0 ? (uint8_t)(i + c) : tricky_byte();
        if (c == 0) memset(block, 0, sizeof block);
        if (c == 1) memset(block, 0xff, sizeof block);
        for (int b = 0; b < 4; b++) {
            tl_sx_masks want;
            reference_masks(block + 64 * b, &want);
            for (int k = 0; k < npaths; k++) {
                tl_sx_masks got;
                tl_sx_classify(paths[k], block + 64 * b, &got);
                int same = memcmp(&got, &want, sizeof got) == 0;
                CHECK(same);
                if (!same) {
                    fprintf(stderr, "  path %s, case %ld, block %d\n", tl_sx_name(paths[k]), c, b);
                    return;
                }
            }
        }
        for (int k = 0; k < npaths; k++) {
            tl_sx_scan_masks got[4];
            tl_sx_scan_blocks(paths[k], block, 4, got);
            for (int b = 0; b < 4; b++) {
                tl_sx_masks want;
                reference_masks(block + 64 * b, &want);
                uint64_t stop = want.quote | want.bslash | want.ctrl | want.high;
                if (got[b].stop != stop || got[b].nonspace != ~want.space) {
                    CHECK(got[b].stop == stop && got[b].nonspace == ~want.space);
                    fprintf(stderr, "  scan masks, path %s, case %ld, block %d\n", tl_sx_name(paths[k]), c, b);
                    return;
                }
            }
        }
    }
    CHECK(1);
}

/* ---------------------------------------------------- string tracking */

static void strings_cases(long cases)
{
    enum { NB = 6 };
    uint8_t buf[64 * NB];
    for (long c = 0; c < cases; c++) {
        /* mostly quotes, backslashes and structure; runs of backslashes
         * placed to end at and across block edges */
        for (size_t i = 0; i < sizeof buf; i++) {
            static const uint8_t alpha[] = {'"', '\\', '\\', 'a', '{', '}', ':', ',', '[', ' '};
            buf[i] = alpha[below(sizeof alpha)];
        }
        int runs = (int)below(4);
        for (int r = 0; r < runs; r++) {
            size_t edge = 64 * (1 + below(NB - 1)), len = 1 + below(9);
            size_t at = edge - below((unsigned)len + 1);
            for (size_t i = 0; i < len && at + i < sizeof buf; i++) buf[at + i] = '\\';
            if (at + len < sizeof buf) buf[at + len] = '"';
        }
        for (int k = 0; k < npaths; k++) {
            tl_sx_strstate st = {0};
            int esc_ref = 0, in_ref = 0;
            for (int b = 0; b < NB; b++) {
                tl_sx_masks m;
                tl_sx_classify(paths[k], buf + 64 * b, &m);
                uint64_t escaped, inside, outside = tl_sx_strings(&m, &st, &escaped, &inside);
                uint64_t we = 0, wi = 0, wo = 0;
                for (int i = 0; i < 64; i++) {
                    uint8_t ch = buf[64 * b + i];
                    uint64_t bit = (uint64_t)1 << i;
                    if (esc_ref) we |= bit;
                    int was_escaped = esc_ref;
                    esc_ref = ch == '\\' && !was_escaped;
                    if (ch == '"' && !was_escaped) in_ref ^= 1;
                    if (in_ref) wi |= bit;
                    if (strchr("{}[]:,", ch) && !in_ref) wo |= bit;
                }
                if (escaped != we || inside != wi || outside != wo) {
                    CHECK(escaped == we && inside == wi && outside == wo);
                    fprintf(stderr, "  strings, path %s, case %ld, block %d\n", tl_sx_name(paths[k]), c, b);
                    return;
                }
            }
        }
    }
    CHECK(1);
}

/* ------------------------------------------------------ the scanner */

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

static void ws(doc *d)
{
    unsigned k = below(8);
    if (k == 0) { /* a long run, to cross block edges */
        unsigned n = 1 + below(150);
        for (unsigned i = 0; i < n; i++) put(d, &" \n\t\r"[below(4)], 1);
    } else if (k == 1) {
        put(d, " ", 1);
    }
}

/* A string body with hard bytes: escapes (some split by a block edge),
 * backslash runs, raw UTF-8 valid and not, long plain stretches. */
static void str_body(doc *d)
{
    unsigned parts = below(6);
    for (unsigned i = 0; i < parts; i++) {
        switch (below(12)) {
        case 0: puts_(d, "\\\""); break;
        case 1: {
            unsigned run = 1 + below(6);
            for (unsigned r = 0; r < run; r++) puts_(d, "\\\\");
            break;
        }
        case 2: puts_(d, "\\n\\t\\/\\b\\f\\r"); break;
        case 3: puts_(d, "\\u00e9\\ud83d\\ude00"); break;
        case 4: puts_(d, "\\ud800x"); break; /* lone surrogate */
        case 5: puts_(d, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"); break;
        case 6: puts_(d, "\xc3(\xff\xed\xa0\x80"); break; /* invalid UTF-8 */
        case 7: {
            unsigned n = below(90);
            for (unsigned k = 0; k < n; k++) put(d, &"abcdefgh:,{}[] 0123"[below(19)], 1);
            break;
        }
        case 8: puts_(d, "\\u0041"); break;
        default: puts_(d, "aten::mm"); break;
        }
    }
}

static void str(doc *d)
{
    put(d, "\"", 1);
    str_body(d);
    put(d, "\"", 1);
}

static void value(doc *d, int depth)
{
    switch (below(depth > 2 ? 4 : 7)) {
    case 0: str(d); break;
    case 1: {
        static const char *nums[] = {"0", "-1", "12345678901", "1.5", "-0.25e3", "2241346127369.958", "1e400",
                                     "9223372036854775807", "-9223372036854775808"};
        puts_(d, nums[below(9)]);
        break;
    }
    case 2: puts_(d, below(2) ? "true" : "null"); break;
    case 3: puts_(d, "false"); break;
    case 4:
    case 5: {
        put(d, "[", 1);
        unsigned n = below(4);
        for (unsigned i = 0; i < n; i++) {
            if (i) put(d, ",", 1);
            ws(d);
            value(d, depth + 1);
            ws(d);
        }
        put(d, "]", 1);
        break;
    }
    default: {
        put(d, "{", 1);
        unsigned n = below(4);
        for (unsigned i = 0; i < n; i++) {
            if (i) put(d, ",", 1);
            ws(d);
            str(d);
            ws(d);
            put(d, ":", 1);
            ws(d);
            value(d, depth + 1);
        }
        put(d, "}", 1);
    }
    }
}

static void event(doc *d)
{
    static const char *keys[] = {"ph", "name", "cat", "ts", "dur", "pid", "tid", "args", "id", "other"};
    put(d, "{", 1);
    unsigned n = 1 + below(9);
    for (unsigned i = 0; i < n; i++) {
        if (i) put(d, ",", 1);
        ws(d);
        const char *k = keys[below(10)];
        put(d, "\"", 1);
        puts_(d, k);
        put(d, "\"", 1);
        ws(d);
        put(d, ":", 1);
        ws(d);
        if (!strcmp(k, "ph")) puts_(d, below(2) ? "\"X\"" : "\"f\"");
        else if (!strcmp(k, "cat")) puts_(d, below(2) ? "\"kernel\"" : "\"cpu_op\"");
        else if (!strcmp(k, "ts") || !strcmp(k, "dur")) puts_(d, below(2) ? "12.5" : "1000");
        else if (!strcmp(k, "pid") || !strcmp(k, "tid")) {
            if (below(2)) puts_(d, "7");
            else str(d);
        } else if (!strcmp(k, "args")) {
            put(d, "{", 1);
            unsigned na = below(4);
            for (unsigned a = 0; a < na; a++) {
                if (a) put(d, ",", 1);
                if (below(3) == 0) puts_(d, "\"correlation\":");
                else {
                    str(d);
                    put(d, ":", 1);
                }
                value(d, 1);
            }
            put(d, "}", 1);
        } else if (!strcmp(k, "name")) str(d);
        else value(d, 1);
        ws(d);
    }
    put(d, "}", 1);
}

static void make_doc(doc *d)
{
    d->n = 0;
    if (below(5) == 0) {
        puts_(d, "[");
    } else {
        puts_(d, "{");
        ws(d);
        if (below(2)) {
            str(d);
            put(d, ":", 1);
            value(d, 1);
            put(d, ",", 1);
        }
        puts_(d, "\"traceEvents\":");
        ws(d);
        puts_(d, "[");
    }
    unsigned n = below(12);
    for (unsigned i = 0; i < n; i++) {
        if (i) put(d, ",", 1);
        ws(d);
        event(d);
        ws(d);
    }
    puts_(d, "]");
    if (d->p[0] == '{') puts_(d, "}");
    ws(d);
}

static int same_pool(const tl_strpool *a, const tl_strpool *b)
{
    if (a->n != b->n) return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->len[i] != b->len[i] || memcmp(tl_strpool_get(a, i), tl_strpool_get(b, i), a->len[i]) != 0) return 0;
    return 1;
}

#define SAME_COL(col, w) (memcmp(a->col, b->col, a->n * (w)) == 0)

static int same_store(const tl_event_store *a, const tl_event_store *b)
{
    if (a->n != b->n || a->blob_len != b->blob_len || a->n_top != b->n_top || a->n_meta != b->n_meta ||
        a->n_seq != b->n_seq || a->n_idvals != b->n_idvals || a->n_threads != b->n_threads ||
        a->bare_array != b->bare_array || a->dropped_metadata != b->dropped_metadata)
        return 0;
    if (a->n && !(SAME_COL(ts, 8) && SAME_COL(dur, 8) && SAME_COL(corr_lo, 4) && SAME_COL(name, 4) &&
                  SAME_COL(cat_id, 4) && SAME_COL(cat, 1) && SAME_COL(ph, 1) && SAME_COL(flags, 1) &&
                  SAME_COL(thr, 4)))
        return 0;
    if (a->n_threads && memcmp(a->threads, b->threads, a->n_threads * sizeof *a->threads) != 0) return 0;
    for (size_t i = 0; i <= a->n; i++)
        if (tl_es_args_at(a, i) != tl_es_args_at(b, i) || (i < a->n && tl_es_corr(a, i) != tl_es_corr(b, i))) return 0;
    if (a->blob_len && memcmp(a->blob, b->blob, a->blob_len) != 0) return 0;
    if (!same_pool(&a->names, &b->names) || !same_pool(&a->cats, &b->cats) || !same_pool(&a->keys, &b->keys) ||
        !same_pool(&a->values, &b->values))
        return 0;
    for (size_t i = 0; i < a->n_top; i++)
        if (a->top[i].key != b->top[i].key || a->top[i].len != b->top[i].len ||
            memcmp(a->top[i].raw, b->top[i].raw, a->top[i].len) != 0)
            return 0;
    return 1;
}

/* Scans d with every path (in memory, and from a file in chunks of
 * bufsz bytes) and checks each against the fallback path in memory. */
static int scan_all_paths(const doc *d, const char *file, size_t bufsz, long c)
{
    tl_event_store ref;
    tl_error rerr;
    tl_es_init(&ref);
    tl_scan_opts o = {.scan_path = TL_SX_FALLBACK};
    int rrc = tl_scan_buffer_opts("doc", d->p, d->n, &o, &ref, &rerr);
    FILE *f = fopen(file, "wb");
    if (!f || fwrite(d->p, 1, d->n, f) != d->n || fclose(f) != 0) {
        CHECK(!"cannot write the test file");
        tl_es_free(&ref);
        return 0;
    }
    int ok = 1;
    for (int k = 0; k < npaths && ok; k++) {
        for (int chunked = 0; chunked < 2 && ok; chunked++) {
            tl_event_store es;
            tl_error err;
            tl_es_init(&es);
            tl_scan_opts po = {.scan_path = paths[k], .buffer_bytes = bufsz, .parts = 1};
            int rc = chunked ? tl_scan_file(file, &es, &po, &err) : tl_scan_buffer_opts("doc", d->p, d->n, &po, &es, &err);
            /* messages start with the name ("doc" or the file path) */
            const char *m1 = rrc ? strstr(rerr.msg, ": ") : "", *m2 = rc ? strstr(err.msg, ": ") : "";
            int same = rc == rrc && (rc ? m1 && m2 && strcmp(m1, m2) == 0 : same_store(&ref, &es));
            /* a chunked read may tell a truncated document's error apart
             * (known, tests/fuzz/fuzz_scan.c): compare chunked with chunked */
            if (!same && chunked && rc && rrc) same = 1;
            CHECK(same);
            if (!same) {
                fprintf(stderr, "  scanner, path %s, %s, case %ld: %s | %s\n", tl_sx_name(paths[k]),
                        chunked ? "chunked" : "in memory", c, rrc ? rerr.msg : "ok", rc ? err.msg : "ok");
                ok = 0;
            }
            tl_es_free(&es);
        }
    }
    /* chunked scans of every path against the fallback's chunked scan */
    if (ok) {
        tl_event_store cref;
        tl_error cerr;
        tl_es_init(&cref);
        tl_scan_opts co = {.scan_path = TL_SX_FALLBACK, .buffer_bytes = bufsz, .parts = 1};
        int crc = tl_scan_file(file, &cref, &co, &cerr);
        for (int k = 0; k < npaths && ok; k++) {
            tl_event_store es;
            tl_error err;
            tl_es_init(&es);
            tl_scan_opts po = {.scan_path = paths[k], .buffer_bytes = bufsz, .parts = 1};
            int rc = tl_scan_file(file, &es, &po, &err);
            int same = rc == crc && (rc ? strcmp(err.msg, cerr.msg) == 0 : same_store(&cref, &es));
            CHECK(same);
            if (!same) {
                fprintf(stderr, "  scanner chunked, path %s, case %ld: %s | %s\n", tl_sx_name(paths[k]), c,
                        crc ? cerr.msg : "ok", rc ? err.msg : "ok");
                ok = 0;
            }
            tl_es_free(&es);
        }
        tl_es_free(&cref);
    }
    tl_es_free(&ref);
    return ok;
}

static void scanner_cases(long cases)
{
    char file[64];
    snprintf(file, sizeof file, "/tmp/tl_structix_%ld.json", (long)getpid());
    doc d = {0};
    long valid = 0;
    for (long c = 0; c < cases; c++) {
        make_doc(&d);
        int mutations = c % 3 == 0 ? 0 : (int)below(3) + 1;
        for (int m = 0; m < mutations && d.n; m++) {
            size_t at = below((unsigned)d.n);
            switch (below(3)) {
            case 0: d.p[at] = (char)tricky_byte(); break;
            case 1: memmove(d.p + at, d.p + at + 1, d.n - at), d.n--; break; /* delete */
            default: d.n = at; d.p[d.n] = 0; /* truncate */
            }
        }
        size_t bufsz = 1 + below(80);
        if (!scan_all_paths(&d, file, bufsz, c)) break;
        valid += mutations == 0;
    }
    unlink(file);
    free(d.p);
    CHECK(valid > 0);
}

/* Documents chosen by hand: an escape or a quote on each side of a block
 * edge, backslash runs ending at one, NUL and control bytes. */
static void edge_cases(void)
{
    char file[64];
    snprintf(file, sizeof file, "/tmp/tl_structix_e%ld.json", (long)getpid());
    const char *tails[] = {"\\\"", "\\\\", "\\\\\\\"", "\\u00e9", "\xc3\xa9", "\\\\\\\\", "\"", "\\n"};
    for (size_t t = 0; t < sizeof tails / sizeof *tails; t++) {
        for (int pad = 0; pad < 140; pad++) {
            doc d = {0};
            puts_(&d, "{\"traceEvents\":[{\"name\":\"");
            for (int i = 0; i < pad; i++) put(&d, "x", 1);
            puts_(&d, tails[t]);
            puts_(&d, "\",\"ph\":\"X\",\"ts\":1,\"dur\":2,\"args\":{\"k\":\"");
            for (int i = 0; i < pad % 67; i++) put(&d, " ", 1);
            puts_(&d, tails[(t + 1) % 8]);
            puts_(&d, "\"}}]}");
            scan_all_paths(&d, file, 1 + (size_t)pad % 70, pad);
            /* the same with a raw control byte and a NUL in the string */
            d.p[27 + pad / 2] = pad % 2 ? '\x01' : '\0';
            scan_all_paths(&d, file, 64, pad);
            free(d.p);
        }
    }
    unlink(file);
}

int main(int argc, char **argv)
{
    long cases = argc > 1 ? atol(argv[1]) : 1500;
    rng_state = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    for (int p = TL_SX_FALLBACK; p < TL_SX_NPATHS; p++)
        if (tl_sx_supported((tl_sx_path)p)) paths[npaths++] = (tl_sx_path)p;
    printf("paths:");
    for (int k = 0; k < npaths; k++) printf(" %s", tl_sx_name(paths[k]));
    printf("\n");
    /* the forced path of the environment, and its errors */
    char msg[160];
    tl_sx_path got;
    CHECK(tl_sx_resolve(TL_SX_FALLBACK, &got, msg, sizeof msg) == 0 && got == TL_SX_FALLBACK);
    setenv("TRACELENS_SCAN", "fallback", 1);
    CHECK(tl_sx_resolve(TL_SX_AUTO, &got, msg, sizeof msg) == 0 && got == TL_SX_FALLBACK);
    setenv("TRACELENS_SCAN", "avx3", 1);
    CHECK(tl_sx_resolve(TL_SX_AUTO, &got, msg, sizeof msg) == -1 && strstr(msg, "TRACELENS_SCAN=avx3") != NULL);
    tl_event_store es;
    tl_error err;
    tl_es_init(&es);
    CHECK(tl_scan_buffer("x", "[]", 2, &es, &err) == -1 && strstr(err.msg, "not a scanner path") != NULL);
    tl_es_free(&es);
    unsetenv("TRACELENS_SCAN");
    if (!tl_sx_supported(TL_SX_NEON)) CHECK(tl_sx_resolve(TL_SX_NEON, &got, msg, sizeof msg) == -1);

    classifier_cases(cases * 10);
    strings_cases(cases * 10);
    edge_cases();
    scanner_cases(cases);
    printf("%d checks, %d failed\n", tl_test_state.checks, tl_test_state.failures);
    printf("%d passed, %d failed\n", tl_test_state.failures ? 0 : 1, tl_test_state.failures ? 1 : 0);
    return tl_test_state.failures != 0;
}
