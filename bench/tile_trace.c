/*
 * tile_trace - make a large synthetic Kineto / Chrome-trace JSON by repeating
 * a real trace's events along the time axis.
 *
 * Usage: tile_trace IN.json[.gz] OUT.json TARGET_MB [--gzip]
 *
 *   IN        Kineto trace, plain or gzip (detected by the magic bytes 1f 8b).
 *   OUT       output path; with --gzip it is written gzip-compressed
 *             (zlib deflate, level 6, gzip wrapper).
 *   TARGET_MB desired uncompressed output size in MB (10^6 bytes).
 *
 * The output's "traceEvents" array holds N = ceil(TARGET_MB*1e6 / input size)
 * copies of the input events.  Copy k (k = 0..N-1):
 *   - every "ts" value is shifted by k*SPAN microseconds, where
 *     SPAN = ceil(max(ts+dur) - min(ts)) + 1000 (whole microseconds, taken
 *     over all input events that carry a numeric ts);
 *   - every non-negative integer value of the keys "id", "External id",
 *     "correlation", "Sequence number", "Python id", "Python parent id",
 *     "Record function id", "Ev Idx" is shifted by k*IDSTRIDE, where
 *     IDSTRIDE = 10^(number of digits of the largest such id), so it is always
 *     bigger than every id and copies never collide.  Negative, fractional,
 *     string and null values are left as they are.
 *   - events with "ph":"M" (metadata) are emitted only in copy 0.
 * Everything outside the traceEvents array (schemaVersion, deviceProperties,
 * ...) is copied once, byte for byte.  Copy 0 is the input events verbatim.
 *
 * The rewrite is pure text processing: a small scanner walks the JSON text,
 * tracking strings (with escapes) and the object/array nesting, so a key is
 * only recognised where a real object key stands.  Numbers are rewritten with
 * exact integer arithmetic: the offsets are whole microseconds, so a ts like
 * 1419247333291.708 becomes (1419247333291 + k*SPAN) followed by the original
 * fraction digits ".708" unchanged; an integer ts stays an integer.  Only
 * values in exponent notation (never produced by Kineto) fall back to double
 * arithmetic and are printed with "%.3f".
 *
 * The input is assumed to be valid JSON.  Output is streamed through a large
 * buffer.  Prints to stderr: copies, output bytes (uncompressed), and more.
 *
 * Build: cc -O2 -std=c11 -Wall -Wextra -Werror bench/tile_trace.c -lz -o build/tile_trace
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#ifndef GZ_LEVEL
#define GZ_LEVEL 6 /* override with -DGZ_LEVEL=1 for speed */
#endif
#define OUTBUF_SIZE (8u << 20)

static FILE *g_out;            /* output file, once created */
static const char *g_out_path;

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "tile_trace: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    if (g_out) { /* do not leave a truncated output behind */
        fclose(g_out);
        remove(g_out_path);
    }
    exit(1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ input */

static char *read_input(const char *path, size_t *len_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s", path);
    unsigned char magic[2] = {0, 0};
    size_t got = fread(magic, 1, 2, f);
    fclose(f);

    size_t cap = 1u << 24, len = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        die("out of memory%s", "");

    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        gzFile gz = gzopen(path, "rb");
        if (!gz)
            die("cannot open %s", path);
        gzbuffer(gz, 1u << 20);
        for (;;) {
            if (cap - len < (1u << 20)) {
                cap *= 2;
                buf = realloc(buf, cap + 1);
                if (!buf)
                    die("out of memory%s", "");
            }
            unsigned want = (unsigned)((cap - len) > (1u << 30) ? (1u << 30) : (cap - len));
            int n = gzread(gz, buf + len, want);
            if (n < 0) {
                int err;
                const char *msg = gzerror(gz, &err);
                die("gzip read error: %s", msg);
            }
            if (n == 0)
                break;
            len += (size_t)n;
        }
        gzclose(gz);
    } else {
        f = fopen(path, "rb");
        if (!f)
            die("cannot open %s", path);
        for (;;) {
            if (cap - len < (1u << 20)) {
                cap *= 2;
                buf = realloc(buf, cap + 1);
                if (!buf)
                    die("out of memory%s", "");
            }
            size_t n = fread(buf + len, 1, cap - len, f);
            if (n == 0) {
                if (ferror(f))
                    die("read error on %s", path);
                break;
            }
            len += n;
        }
        fclose(f);
    }
    buf[len] = '\0'; /* sentinel: scanners may stop at NUL */
    *len_out = len;
    return buf;
}

/* ---------------------------------------------------------------- scanner */

static const char *g_buf;
static size_t g_len;

static void bad_json(size_t pos)
{
    char msg[64];
    snprintf(msg, sizeof msg, "%zu", pos);
    die("unexpected JSON structure near byte %s", msg);
}

static size_t skip_ws(size_t p)
{
    while (p < g_len && (g_buf[p] == ' ' || g_buf[p] == '\n' || g_buf[p] == '\r' || g_buf[p] == '\t'))
        p++;
    return p;
}

/* p at the opening quote; returns the index just past the closing quote. */
static size_t skip_string(size_t p)
{
    p++;
    for (;;) {
        const char *q = memchr(g_buf + p, '"', g_len - p);
        if (!q)
            bad_json(p);
        size_t e = (size_t)(q - g_buf);
        /* count backslashes directly before the quote */
        size_t b = e;
        while (b > p && g_buf[b - 1] == '\\')
            b--;
        if (((e - b) & 1) == 0)
            return e + 1;
        p = e + 1;
    }
}

/* p at the start of a primitive token (number/true/false/null); returns end. */
static size_t skip_token(size_t p)
{
    while (p < g_len) {
        char c = g_buf[p];
        if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == ':')
            break;
        p++;
    }
    return p;
}

/* skip any JSON value starting at p (p already past whitespace). */
static size_t skip_value(size_t p)
{
    if (p >= g_len)
        bad_json(p);
    char c = g_buf[p];
    if (c == '"')
        return skip_string(p);
    if (c != '{' && c != '[')
        return skip_token(p);
    int depth = 0;
    while (p < g_len) {
        c = g_buf[p];
        if (c == '"') {
            p = skip_string(p);
            continue;
        }
        if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth == 0)
                return p + 1;
        }
        p++;
    }
    bad_json(p);
    return p;
}

/* ------------------------------------------------------------ edit points */

enum { K_TS = 0, K_TS_DBL = 1, K_ID = 2 };

typedef struct {
    size_t off;      /* start of the number token in the input */
    uint32_t len;    /* token length */
    uint32_t sfx;    /* ts: offset inside token where the verbatim suffix (".708") starts */
    uint8_t kind;
    uint8_t neg;     /* ts: value is negative */
    int64_t ival;    /* ts: integer part magnitude; id: value */
    double dval;     /* ts in exponent form */
} edit_t;

typedef struct {
    size_t start, end; /* [start, end) of the event text */
    size_t first_edit, n_edits;
    int meta;
} event_t;

static edit_t *g_edits;
static size_t g_nedits, g_capedits;
static event_t *g_events;
static size_t g_nevents, g_capevents;

static int64_t g_min_ts_ns = INT64_MAX, g_max_end_ns = INT64_MIN;
static int64_t g_max_id = -1;

static edit_t *new_edit(void)
{
    if (g_nedits == g_capedits) {
        g_capedits = g_capedits ? g_capedits * 2 : 1u << 16;
        g_edits = realloc(g_edits, g_capedits * sizeof *g_edits);
        if (!g_edits)
            die("out of memory%s", "");
    }
    return &g_edits[g_nedits++];
}

static const char *const ID_KEYS[] = {
    "id", "External id", "correlation", "Sequence number",
    "Python id", "Python parent id", "Record function id", "Ev Idx",
};

enum { KEY_OTHER = 0, KEY_TS, KEY_DUR, KEY_PH, KEY_ID };

static int classify_key(const char *k, size_t n)
{
    if (n == 2 && k[0] == 't' && k[1] == 's')
        return KEY_TS;
    if (n == 3 && memcmp(k, "dur", 3) == 0)
        return KEY_DUR;
    if (n == 2 && k[0] == 'p' && k[1] == 'h')
        return KEY_PH;
    for (size_t i = 0; i < sizeof ID_KEYS / sizeof ID_KEYS[0]; i++)
        if (strlen(ID_KEYS[i]) == n && memcmp(ID_KEYS[i], k, n) == 0)
            return KEY_ID;
    return KEY_OTHER;
}

/* Parse a decimal number token to integer nanoseconds (µs input, fraction
 * digits beyond 3 truncated).  Returns 0 if not a plain decimal. */
static int parse_us_to_ns(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && s[i] == '-') {
        neg = 1;
        i++;
    }
    if (i >= n || s[i] < '0' || s[i] > '9')
        return 0;
    if (memchr(s, 'e', n) || memchr(s, 'E', n)) { /* exponent form: rare */
        char tmp[64];
        if (n >= sizeof tmp)
            return 0;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        char *endp;
        double d = strtod(tmp, &endp);
        if (*endp != '\0' || !(d < 9e15 && d > -9e15))
            return 0;
        *out = (int64_t)(d * 1000.0 + (d >= 0 ? 0.5 : -0.5));
        return 1;
    }
    int64_t ip = 0;
    int nd = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (++nd > 15)
            return 0;
        ip = ip * 10 + (s[i] - '0');
        i++;
    }
    int64_t frac = 0;
    int fd = 0;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (fd < 3) {
                frac = frac * 10 + (s[i] - '0');
                fd++;
            }
            i++;
        }
    }
    if (i != n)
        return 0;
    while (fd < 3) {
        frac *= 10;
        fd++;
    }
    int64_t v = ip * 1000 + frac;
    *out = neg ? -v : v;
    return 1;
}

static void record_ts(size_t off, size_t n)
{
    const char *s = g_buf + off;
    edit_t e;
    memset(&e, 0, sizeof e);
    e.off = off;
    e.len = (uint32_t)n;
    size_t i = 0;
    if (s[0] == '-') {
        e.neg = 1;
        i = 1;
    }
    int nd = 0;
    int64_t ip = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        ip = ip * 10 + (s[i] - '0');
        nd++;
        i++;
    }
    int plain = nd > 0 && nd <= 17;
    size_t sfx = i;
    if (plain && i < n) {
        if (s[i] != '.')
            plain = 0;
        else {
            i++;
            size_t fstart = i;
            while (i < n && s[i] >= '0' && s[i] <= '9')
                i++;
            if (i != n || i == fstart)
                plain = 0;
        }
    }
    if (plain) {
        e.kind = K_TS;
        e.ival = ip;
        e.sfx = (uint32_t)sfx;
    } else {
        char tmp[64];
        if (n >= sizeof tmp)
            return; /* not something we can rewrite; leave it */
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        char *endp;
        errno = 0;
        double d = strtod(tmp, &endp);
        if (*endp != '\0' || errno)
            return; /* not a number (true/null/...): leave unchanged */
        e.kind = K_TS_DBL;
        e.dval = d;
    }
    *new_edit() = e;
}

static void record_id(size_t off, size_t n)
{
    const char *s = g_buf + off;
    if (n == 0 || n > 18)
        return;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return; /* negative, fractional, null, ...: leave unchanged */
        v = v * 10 + (s[i] - '0');
    }
    edit_t *e = new_edit();
    memset(e, 0, sizeof *e);
    e->off = off;
    e->len = (uint32_t)n;
    e->kind = K_ID;
    e->ival = v;
    if (v > g_max_id)
        g_max_id = v;
}

#define MAX_DEPTH 256

/* Scan one event object starting at p ('{'); fills an event_t; returns end. */
static size_t scan_event(size_t p, event_t *ev)
{
    char stack[MAX_DEPTH];
    int depth = 0;
    int expect_key = 0;
    int pending = KEY_OTHER;    /* class of the key whose value comes next */
    int pending_depth = 0;      /* depth at which that key was seen */
    int64_t ts_ns = 0, dur_ns = 0;
    int have_ts = 0, have_dur = 0;

    ev->start = p;
    ev->first_edit = g_nedits;
    ev->meta = 0;

    while (p < g_len) {
        char c = g_buf[p];
        switch (c) {
        case ' ': case '\n': case '\r': case '\t':
            p++;
            continue;
        case '{':
        case '[':
            if (depth >= MAX_DEPTH)
                bad_json(p);
            stack[depth++] = c;
            expect_key = (c == '{');
            pending = KEY_OTHER;
            p++;
            continue;
        case '}':
        case ']':
            depth--;
            p++;
            expect_key = 0;
            pending = KEY_OTHER;
            if (depth == 0)
                goto done;
            continue;
        case ',':
            expect_key = (stack[depth - 1] == '{');
            pending = KEY_OTHER;
            p++;
            continue;
        case ':':
            expect_key = 0;
            p++;
            continue;
        case '"': {
            size_t e = skip_string(p);
            if (expect_key && stack[depth - 1] == '{') {
                pending = classify_key(g_buf + p + 1, e - p - 2);
                pending_depth = depth;
                expect_key = 0;
            } else {
                if (pending == KEY_PH && pending_depth == 1 && e - p == 3 && g_buf[p + 1] == 'M')
                    ev->meta = 1;
                pending = KEY_OTHER;
            }
            p = e;
            continue;
        }
        default: {
            size_t e = skip_token(p);
            if (e == p)
                bad_json(p);
            switch (pending) {
            case KEY_TS:
                record_ts(p, e - p);
                if (pending_depth == 1 && parse_us_to_ns(g_buf + p, e - p, &ts_ns))
                    have_ts = 1;
                break;
            case KEY_DUR:
                if (pending_depth == 1 && parse_us_to_ns(g_buf + p, e - p, &dur_ns))
                    have_dur = 1;
                break;
            case KEY_ID:
                record_id(p, e - p);
                break;
            default:
                break;
            }
            pending = KEY_OTHER;
            p = e;
            continue;
        }
        }
    }
    bad_json(p);
done:
    ev->end = p;
    ev->n_edits = g_nedits - ev->first_edit;
    if (have_ts) {
        if (ts_ns < g_min_ts_ns)
            g_min_ts_ns = ts_ns;
        int64_t end = ts_ns + (have_dur && dur_ns > 0 ? dur_ns : 0);
        if (end > g_max_end_ns)
            g_max_end_ns = end;
    }
    return p;
}

/* Locate "traceEvents" at the top level and scan its events.
 * Sets *arr_open (index of '[') and *arr_close (index of ']'). */
static void scan_document(size_t *arr_open, size_t *arr_close)
{
    size_t p = skip_ws(0);
    if (p >= g_len || g_buf[p] != '{')
        die("input is not a JSON object%s", "");
    p++;
    for (;;) {
        p = skip_ws(p);
        if (p >= g_len)
            bad_json(p);
        if (g_buf[p] == '}')
            die("no top-level \"traceEvents\" array in input%s", "");
        if (g_buf[p] == ',') {
            p++;
            continue;
        }
        if (g_buf[p] != '"')
            bad_json(p);
        size_t ke = skip_string(p);
        int is_te = (ke - p - 2 == 11 && memcmp(g_buf + p + 1, "traceEvents", 11) == 0);
        p = skip_ws(ke);
        if (p >= g_len || g_buf[p] != ':')
            bad_json(p);
        p = skip_ws(p + 1);
        if (!is_te) {
            p = skip_value(p);
            continue;
        }
        if (g_buf[p] != '[')
            die("\"traceEvents\" is not an array%s", "");
        *arr_open = p;
        p++;
        for (;;) {
            p = skip_ws(p);
            if (p >= g_len)
                bad_json(p);
            if (g_buf[p] == ']') {
                *arr_close = p;
                return;
            }
            if (g_buf[p] == ',') {
                p++;
                continue;
            }
            if (g_nevents == g_capevents) {
                g_capevents = g_capevents ? g_capevents * 2 : 1u << 15;
                g_events = realloc(g_events, g_capevents * sizeof *g_events);
                if (!g_events)
                    die("out of memory%s", "");
            }
            event_t *ev = &g_events[g_nevents++];
            if (g_buf[p] == '{') {
                p = scan_event(p, ev);
            } else { /* not an object: copy opaquely */
                ev->start = p;
                ev->first_edit = g_nedits;
                ev->n_edits = 0;
                ev->meta = 0;
                p = skip_value(p);
                ev->end = p;
            }
        }
    }
}

/* ----------------------------------------------------------------- output */

static int g_gzip;
static z_stream g_zs;
static unsigned char *g_zbuf;
static char *g_obuf;
static size_t g_olen;
static uint64_t g_out_bytes, g_out_written;

static void write_raw(const void *p, size_t n)
{
    if (fwrite(p, 1, n, g_out) != n)
        die("write error on %s", g_out_path);
    g_out_written += n;
}

static void deflate_chunk(const char *p, size_t n, int flush)
{
    g_zs.next_in = (Bytef *)(uintptr_t)p;
    g_zs.avail_in = (uInt)n;
    do {
        g_zs.next_out = g_zbuf;
        g_zs.avail_out = OUTBUF_SIZE;
        int rc = deflate(&g_zs, flush);
        if (rc == Z_STREAM_ERROR)
            die("deflate failed%s", "");
        write_raw(g_zbuf, OUTBUF_SIZE - g_zs.avail_out);
    } while (g_zs.avail_out == 0 || (flush == Z_FINISH && g_zs.avail_in > 0));
}

static void flush_out(void)
{
    if (g_olen == 0)
        return;
    if (g_gzip)
        deflate_chunk(g_obuf, g_olen, Z_NO_FLUSH);
    else
        write_raw(g_obuf, g_olen);
    g_olen = 0;
}

static inline void put(const char *p, size_t n)
{
    g_out_bytes += n;
    while (n) {
        size_t room = OUTBUF_SIZE - g_olen;
        if (room == 0) {
            flush_out();
            room = OUTBUF_SIZE;
        }
        size_t k = n < room ? n : room;
        memcpy(g_obuf + g_olen, p, k);
        g_olen += k;
        p += k;
        n -= k;
    }
}

static inline void put_i64(int64_t v)
{
    char tmp[24];
    int i = sizeof tmp;
    uint64_t u;
    int neg = v < 0;
    u = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (neg)
        tmp[--i] = '-';
    put(tmp + i, sizeof tmp - (size_t)i);
}

/* Emit a ts token shifted by off_us (a non-negative whole number of µs). */
static void put_ts(const edit_t *e, int64_t off_us)
{
    const char *tok = g_buf + e->off;
    const char *sfx = tok + e->sfx;
    size_t sfxlen = e->len - e->sfx;

    if (e->kind == K_TS_DBL) {
        char tmp[64];
        int n = snprintf(tmp, sizeof tmp, "%.3f", e->dval + (double)off_us);
        put(tmp, (size_t)n);
        return;
    }
    if (!e->neg) {
        put_i64(e->ival + off_us);
        put(sfx, sfxlen);
        return;
    }
    /* negative input: value = -(I + f), result = off - I - f */
    int frac_nonzero = 0;
    for (size_t i = 1; i < sfxlen; i++)
        if (sfx[i] != '0')
            frac_nonzero = 1;
    int64_t ip = off_us - e->ival;
    if (!frac_nonzero) {
        put_i64(ip);
        put(sfx, sfxlen);
        return;
    }
    if (ip >= 1) {
        /* (ip - 1) + (1 - f): decimal complement of the fraction digits */
        char tmp[64];
        size_t nd = sfxlen - 1;
        if (nd + 1 > sizeof tmp) { /* absurdly long fraction: use double */
            snprintf(tmp, sizeof tmp, "%.3f", (double)off_us - strtod(tok + 1, NULL));
            put(tmp, strlen(tmp));
            return;
        }
        tmp[0] = '.';
        /* 10^nd - f: digits before the last non-zero one are 9-d, the last
           non-zero one is 10-d, trailing zeros stay 0 */
        size_t last = nd;
        while (last >= 1 && sfx[last] == '0')
            last--;
        for (size_t i = 1; i <= nd; i++) {
            int fd = sfx[i] - '0';
            if (i < last)
                tmp[i] = (char)('0' + 9 - fd);
            else if (i == last)
                tmp[i] = (char)('0' + 10 - fd);
            else
                tmp[i] = '0';
        }
        put_i64(ip - 1);
        put(tmp, nd + 1);
    } else {
        /* result still negative: -(I - off) . f */
        put("-", 1);
        put_i64(e->ival - off_us);
        put(sfx, sfxlen);
    }
}

static void emit_event(const event_t *ev, int64_t ts_off, int64_t id_off)
{
    size_t pos = ev->start;
    if (ts_off == 0 && id_off == 0) {
        put(g_buf + pos, ev->end - pos);
        return;
    }
    const edit_t *e = g_edits + ev->first_edit;
    for (size_t i = 0; i < ev->n_edits; i++, e++) {
        put(g_buf + pos, e->off - pos);
        if (e->kind == K_ID)
            put_i64(e->ival + id_off);
        else
            put_ts(e, ts_off);
        pos = e->off + e->len;
    }
    put(g_buf + pos, ev->end - pos);
}

/* ------------------------------------------------------------------- main */

static void usage(void)
{
    fprintf(stderr,
            "usage: tile_trace IN.json[.gz] OUT.json TARGET_MB [--gzip]\n"
            "  repeats the events of a Kineto trace along time until the output\n"
            "  reaches ~TARGET_MB (10^6 bytes) of uncompressed JSON.\n"
            "  --gzip  write gzip output (zlib level %d)\n",
            GZ_LEVEL);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *in_path = NULL, *out_path = NULL, *target_s = NULL;
    int gzip_out = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gzip") == 0)
            gzip_out = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            usage();
        else if (!in_path)
            in_path = argv[i];
        else if (!out_path)
            out_path = argv[i];
        else if (!target_s)
            target_s = argv[i];
        else
            usage();
    }
    if (!target_s)
        usage();
    char *endp;
    double target_mb = strtod(target_s, &endp);
    if (*endp != '\0' || !(target_mb > 0) || target_mb > 1e7)
        die("bad TARGET_MB: %s", target_s);

    double t0 = now_s();
    size_t len;
    char *buf = read_input(in_path, &len);
    if (len == 0)
        die("empty input %s", in_path);
    g_buf = buf;
    g_len = len;
    double t1 = now_s();

    size_t arr_open = 0, arr_close = 0;
    scan_document(&arr_open, &arr_close);
    double t2 = now_s();

    /* copies = ceil(TARGET_MB*1e6 / input size), without libm */
    double want = target_mb * 1e6 / (double)len;
    uint64_t copies = (uint64_t)want;
    if ((double)copies < want)
        copies++;
    if (copies < 1)
        copies = 1;

    int64_t span_us = 1000;
    if (g_min_ts_ns != INT64_MAX) {
        int64_t span_ns = g_max_end_ns - g_min_ts_ns;
        span_us = (span_ns + 999) / 1000 + 1000;
    }
    int64_t id_stride = 10;
    while (id_stride <= g_max_id)
        id_stride *= 10;

    g_out = fopen(out_path, "wb");
    if (!g_out)
        die("cannot create %s", out_path);
    g_out_path = out_path;
    g_gzip = gzip_out;
    g_obuf = malloc(OUTBUF_SIZE);
    if (!g_obuf)
        die("out of memory%s", "");
    if (g_gzip) {
        g_zbuf = malloc(OUTBUF_SIZE);
        if (!g_zbuf)
            die("out of memory%s", "");
        memset(&g_zs, 0, sizeof g_zs);
        if (deflateInit2(&g_zs, GZ_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            die("deflateInit2 failed%s", "");
    }

    /* header: everything up to and including '[' */
    put(g_buf, arr_open + 1);
    int first = 1;
    for (uint64_t k = 0; k < copies; k++) {
        int64_t ts_off = (int64_t)k * span_us;
        int64_t id_off = (int64_t)k * id_stride;
        for (size_t i = 0; i < g_nevents; i++) {
            const event_t *ev = &g_events[i];
            if (k > 0 && ev->meta)
                continue;
            if (!first)
                put(",", 1);
            first = 0;
            emit_event(ev, ts_off, id_off);
        }
    }
    /* trailer: from ']' to the end of the input (whitespace between events and
       before ']' is not reproduced; events are joined with a bare ',') */
    put(g_buf + arr_close, len - arr_close);
    flush_out();
    if (g_gzip) {
        deflate_chunk(NULL, 0, Z_FINISH);
        deflateEnd(&g_zs);
    }
    FILE *f = g_out;
    g_out = NULL;
    if (fclose(f) != 0) {
        remove(out_path);
        die("write error on %s", out_path);
    }
    double t3 = now_s();

    size_t nmeta = 0;
    for (size_t i = 0; i < g_nevents; i++)
        nmeta += (size_t)g_events[i].meta;

    fprintf(stderr, "input: %s, %zu bytes uncompressed, %zu events (%zu metadata), %zu rewritable values\n",
            in_path, len, g_nevents, nmeta, g_nedits);
    fprintf(stderr, "span: %lld us per copy (incl. 1000 us gap), id stride: %lld\n",
            (long long)span_us, (long long)id_stride);
    fprintf(stderr, "copies: %llu\n", (unsigned long long)copies);
    fprintf(stderr, "output bytes (uncompressed): %llu (%.1f MB), events: %llu\n",
            (unsigned long long)g_out_bytes, (double)g_out_bytes / 1e6,
            (unsigned long long)((g_nevents - nmeta) * copies + nmeta));
    if (g_gzip)
        fprintf(stderr, "output bytes (gzip, level %d): %llu (%.1f MB)\n", GZ_LEVEL,
                (unsigned long long)g_out_written, (double)g_out_written / 1e6);
    fprintf(stderr, "time: read %.2fs, scan %.2fs, write %.2fs (%.0f MB/s uncompressed)\n",
            t1 - t0, t2 - t1, t3 - t2, (double)g_out_bytes / 1e6 / (t3 - t2));
    free(buf);
    free(g_obuf);
    free(g_zbuf);
    free(g_edits);
    free(g_events);
    return 0;
}
