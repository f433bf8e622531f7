/* summary_file.c — encoding and decoding of the `.tls` rank summary
 * (summary_file.h). Every read is bounds-checked: a damaged or hostile
 * file gives a one-line error, never a read past the buffer. */
#include "summary_file.h"

#include <errno.h>
#include <isa-l/crc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"

static const char TLS_MAGIC[8] = {'\x89', 'T', 'L', 'S', '\r', '\n', '\x1a', '\n'};
enum { FLAG_FAILED = 1, FLAG_STATS = 2 };
#define ORDER_TAG 0x01020304u

/* ------------------------------------------------------------ writing */

static void put_u32(tl_sbuf *b, uint32_t v)
{
    char c[4];
    for (int i = 0; i < 4; i++) c[i] = (char)(v >> (8 * i));
    tl_sb_putn(b, c, 4);
}

static void put_u64(tl_sbuf *b, uint64_t v)
{
    char c[8];
    for (int i = 0; i < 8; i++) c[i] = (char)(v >> (8 * i));
    tl_sb_putn(b, c, 8);
}

static void put_str(tl_sbuf *b, const char *s, size_t n)
{
    put_u32(b, (uint32_t)n);
    tl_sb_putn(b, s, n);
}

static void set_u32(char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (char)(v >> (8 * i));
}

static void set_u64(char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (char)(v >> (8 * i));
}

void tl_tls_encode(tl_sbuf *out, const tl_coll_set *cs, const tl_rank_info *info, const char *trace_path,
                   const char *failure)
{
    size_t start = out->len;
    uint32_t flags = (failure ? FLAG_FAILED : 0) | (!failure && info->has_stats ? FLAG_STATS : 0);
    char zero[TL_TLS_HEADER_SIZE] = {0};
    tl_sb_putn(out, zero, sizeof zero); /* the header, filled in below */
    const char *tp = trace_path ? trace_path : "";
    put_str(out, tp, strlen(tp));
    const char *fm = failure ? failure : "";
    put_str(out, fm, strlen(fm));
    put_u64(out, (uint64_t)info->dist_world);
    put_u32(out, (uint32_t)info->device_count);
    if (failure) {
        put_u32(out, 0);
        put_u32(out, 0);
        put_u64(out, 0);
    } else {
        put_u32(out, cs->pool.n);
        for (uint32_t i = 0; i < cs->pool.n; i++) put_str(out, tl_strpool_get(&cs->pool, i), tl_strpool_len(&cs->pool, i));
        put_u32(out, (uint32_t)cs->nmeta);
        for (size_t m = 0; m < cs->nmeta; m++)
            for (int f = 0; f < TL_CM_N; f++) {
                put_u32(out, cs->meta[m].text[f]);
                put_u64(out, (uint64_t)cs->meta[m].num[f]);
            }
        put_u64(out, cs->n);
        for (size_t i = 0; i < cs->n; i++) {
            put_u64(out, (uint64_t)cs->rec[i].ts);
            put_u64(out, (uint64_t)cs->rec[i].dur);
            put_u32(out, cs->rec[i].pos);
            put_u32(out, cs->rec[i].meta);
        }
        if (flags & FLAG_STATS) tl_sb_putn(out, (const char *)&info->stats, sizeof info->stats);
    }
    char *h = out->s + start;
    uint64_t body = out->len - start - TL_TLS_HEADER_SIZE;
    uint32_t order = ORDER_TAG;
    memcpy(h, TLS_MAGIC, 8);
    set_u32(h + 8, TL_TLS_VERSION);
    set_u32(h + 12, TL_TLS_HEADER_SIZE);
    set_u32(h + 16, flags);
    set_u32(h + 20, (flags & FLAG_STATS) ? TL_RANK_STATS_VERSION : 0);
    set_u32(h + 24, (flags & FLAG_STATS) ? (uint32_t)sizeof(tl_rank_stats) : 0);
    memcpy(h + 28, &order, 4); /* native order: the stats bytes are native */
    set_u64(h + 32, (uint64_t)(int64_t)info->rank);
    set_u64(h + 40, body);
    set_u32(h + 48, crc32_gzip_refl(0, (const unsigned char *)h + TL_TLS_HEADER_SIZE, body));
    set_u32(h + 52, 0);
    set_u64(h + 56, info->trace_bytes);
}

/* ------------------------------------------------------------ reading */

static uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

typedef struct cursor {
    const uint8_t *p, *end;
    int bad;
} cursor;

static const uint8_t *take(cursor *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return NULL;
    }
    const uint8_t *r = c->p;
    c->p += n;
    return r;
}

static uint32_t rd_u32(cursor *c)
{
    const uint8_t *p = take(c, 4);
    return p ? get_u32(p) : 0;
}

static uint64_t rd_u64(cursor *c)
{
    const uint8_t *p = take(c, 8);
    return p ? get_u64(p) : 0;
}

static const char *rd_str(cursor *c, uint32_t *n)
{
    *n = rd_u32(c);
    return (const char *)take(c, *n);
}

size_t tl_tls_image_size(const uint8_t *buf, size_t len, const char *name, tl_error *err)
{
    if (len < 8 || memcmp(buf, TLS_MAGIC, 8) != 0) {
        tl_error_set(err, "%s: not a tracelens rank summary (.tls): bad magic", name);
        return 0;
    }
    if (len < TL_TLS_HEADER_SIZE) {
        tl_error_set(err, "%s: truncated rank summary (%zu bytes, the header alone is %u)", name, len,
                     TL_TLS_HEADER_SIZE);
        return 0;
    }
    uint32_t version = get_u32(buf + 8), hsize = get_u32(buf + 12);
    if (version != TL_TLS_VERSION || hsize != TL_TLS_HEADER_SIZE) {
        tl_error_set(err, "%s: rank summary format version %u, this tracelens reads version %u: rerun tracelens ranks summarize",
                     name, version, TL_TLS_VERSION);
        return 0;
    }
    uint64_t body = get_u64(buf + 40);
    if (body > len - TL_TLS_HEADER_SIZE) {
        tl_error_set(err, "%s: truncated rank summary (%zu bytes, the header announces %llu)", name, len,
                     (unsigned long long)(body + TL_TLS_HEADER_SIZE));
        return 0;
    }
    return (size_t)body + TL_TLS_HEADER_SIZE;
}

/* The counts and indices of the stats stay within their arrays (a file is
 * input: the sheets index with them). */
static int stats_sane(const tl_rank_stats *st, long rank)
{
    if (st->version != TL_RANK_STATS_VERSION || (long)st->rank != rank || st->n_steps > TL_RS_MAX_STEPS ||
        st->n_late > TL_RS_MAX_LATE)
        return 0;
    for (uint32_t i = 0; i < st->n_late; i++)
        if (st->late[i].step >= st->n_steps) return 0;
    for (int k = 0; k < TL_RS_MAX_NAMES; k++)
        if (!memchr(st->late_name[k], 0, TL_RS_NAME_LEN)) return 0;
    return 1;
}

int tl_tls_decode(const uint8_t *buf, size_t len, const char *name, tl_coll_set *cs, tl_rank_info *info,
                  char **trace_path, tl_error *err)
{
    memset(info, 0, sizeof *info);
    info->rank = -1;
    info->dist_world = -1;
    if (trace_path) *trace_path = NULL;
    size_t size = tl_tls_image_size(buf, len, name, err);
    if (!size) return -1;
    uint32_t flags = get_u32(buf + 16), sver = get_u32(buf + 20), ssize = get_u32(buf + 24), order;
    memcpy(&order, buf + 28, 4);
    uint64_t body = size - TL_TLS_HEADER_SIZE;
    if (get_u32(buf + 48) != crc32_gzip_refl(0, buf + TL_TLS_HEADER_SIZE, body)) {
        tl_error_set(err, "%s: corrupt rank summary (checksum mismatch)", name);
        return -1;
    }
    if ((flags & FLAG_STATS) && (sver != TL_RANK_STATS_VERSION || ssize != sizeof(tl_rank_stats))) {
        tl_error_set(err, "%s: rank statistics version %u (%u bytes), this tracelens has version %u (%zu bytes): rerun tracelens ranks summarize",
                     name, sver, ssize, TL_RANK_STATS_VERSION, sizeof(tl_rank_stats));
        return -1;
    }
    if ((flags & FLAG_STATS) && order != ORDER_TAG) {
        tl_error_set(err, "%s: rank summary written on a machine of the other byte order", name);
        return -1;
    }
    int64_t rank = (int64_t)get_u64(buf + 32);
    info->rank = rank >= 0 && rank <= 0x7fffffff ? (long)rank : -1;
    info->trace_bytes = get_u64(buf + 56);
    cursor c = {buf + TL_TLS_HEADER_SIZE, buf + size, 0};
    uint32_t n;
    const char *tp = rd_str(&c, &n);
    if (tp && trace_path) {
        *trace_path = tl_xmalloc((size_t)n + 1);
        memcpy(*trace_path, tp, n);
        (*trace_path)[n] = 0;
    }
    uint32_t nfail;
    const char *fail = rd_str(&c, &nfail);
    info->dist_world = (int64_t)rd_u64(&c);
    info->device_count = (int32_t)rd_u32(&c);
    if (c.bad) goto truncated;
    if (flags & FLAG_FAILED) {
        tl_error_set(err, "%.*s", (int)(nfail < 1000 ? nfail : 1000), fail ? fail : "");
        return 1;
    }
    /* the strings, then the tuples re-interned into cs in their order */
    uint32_t nstr = rd_u32(&c);
    if (c.bad || nstr > body / 4) goto truncated;
    uint32_t *smap = tl_xmalloc(((size_t)nstr + 1) * sizeof *smap);
    for (uint32_t i = 0; i < nstr; i++) {
        uint32_t sl;
        const char *s = rd_str(&c, &sl);
        if (!s) {
            free(smap);
            goto truncated;
        }
        smap[i] = tl_strpool_intern(&cs->pool, s, sl);
    }
    uint32_t nmeta = rd_u32(&c);
    if (c.bad || nmeta > body / (TL_CM_N * 12)) {
        free(smap);
        goto truncated;
    }
    uint32_t *mmap_ = tl_xmalloc(((size_t)nmeta + 1) * sizeof *mmap_);
    char key[TL_CM_N * 9 + 1];
    for (uint32_t m = 0; m < nmeta; m++) {
        tl_coll_meta cm;
        for (int f = 0; f < TL_CM_N; f++) {
            uint32_t t = rd_u32(&c);
            cm.num[f] = (int64_t)rd_u64(&c);
            if (t != UINT32_MAX && t >= nstr) c.bad = 1;
            cm.text[f] = t == UINT32_MAX || c.bad ? UINT32_MAX : smap[t];
        }
        if (c.bad) break;
        size_t kn = 0;
        for (int f = 0; f < TL_CM_N; f++) { /* "%x," each, as records.c's keys */
            char rev[8];
            int nd = 0;
            uint32_t v = cm.text[f];
            do rev[nd++] = "0123456789abcdef"[v & 15], v >>= 4;
            while (v);
            while (nd) key[kn++] = rev[--nd];
            key[kn++] = ',';
        }
        uint32_t before = cs->keys.n;
        uint32_t id = tl_strpool_intern(&cs->keys, key, kn);
        if (id == before) {
            TL_GROW(cs->meta, cs->capmeta, cs->nmeta + 1);
            cs->meta[cs->nmeta++] = cm;
        }
        mmap_[m] = id;
    }
    free(smap);
    uint64_t nrec = rd_u64(&c);
    if (c.bad || nrec > body / 24) {
        free(mmap_);
        goto truncated;
    }
    size_t base = cs->n;
    TL_GROW(cs->rec, cs->cap, cs->n + nrec);
    for (uint64_t i = 0; i < nrec; i++) {
        tl_coll_rec r;
        r.ts = (int64_t)rd_u64(&c);
        r.dur = (int64_t)rd_u64(&c);
        r.pos = rd_u32(&c);
        uint32_t m = rd_u32(&c);
        if (c.bad || m >= nmeta) {
            c.bad = 1;
            break;
        }
        r.meta = mmap_[m];
        r.rank = (uint32_t)info->rank;
        r.index = 0;
        cs->rec[cs->n++] = r;
    }
    free(mmap_);
    if (!c.bad && (flags & FLAG_STATS)) {
        const uint8_t *s = take(&c, sizeof info->stats);
        if (s) {
            memcpy(&info->stats, s, sizeof info->stats);
            info->has_stats = 1;
            if (!stats_sane(&info->stats, info->rank)) c.bad = 1;
        }
    }
    if (c.bad || info->rank < 0) {
        cs->n = base;
        if (info->rank < 0 && !c.bad) {
            tl_error_set(err, "%s: rank summary without a rank", name);
            return -1;
        }
        goto truncated;
    }
    info->nrec = nrec;
    return 0;
truncated:
    free(trace_path ? *trace_path : NULL);
    if (trace_path) *trace_path = NULL;
    tl_error_set(err, "%s: corrupt rank summary (truncated or inconsistent contents)", name);
    return -1;
}

/* The whole file, or NULL with err set. */
static uint8_t *slurp(const char *file, size_t *len, tl_error *err)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        tl_error_set(err, "%s: %s", file, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = tl_xmalloc(cap);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = tl_xrealloc(buf, cap);
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        tl_error_set(err, "%s: read error", file);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int tl_tls_read(const char *file, tl_coll_set *cs, tl_rank_info *info, tl_error *err)
{
    size_t len;
    uint8_t *buf = slurp(file, &len, err);
    if (!buf) {
        memset(info, 0, sizeof *info);
        info->rank = -1;
        return -1;
    }
    int rc = tl_tls_decode(buf, len, file, cs, info, NULL, err);
    free(buf);
    return rc;
}

int tl_tls_peek_rank(const char *file, long *rank, tl_error *err)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        tl_error_set(err, "%s: %s", file, strerror(errno));
        return -1;
    }
    uint8_t h[TL_TLS_HEADER_SIZE];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n < 8 || memcmp(h, TLS_MAGIC, 8) != 0) {
        tl_error_set(err, "%s: not a tracelens rank summary (.tls): bad magic", file);
        return -1;
    }
    if (n < sizeof h) {
        tl_error_set(err, "%s: truncated rank summary (%zu bytes, the header alone is %u)", file, n, TL_TLS_HEADER_SIZE);
        return -1;
    }
    if (get_u32(h + 8) != TL_TLS_VERSION || get_u32(h + 12) != TL_TLS_HEADER_SIZE) {
        tl_error_set(err, "%s: rank summary format version %u, this tracelens reads version %u: rerun tracelens ranks summarize",
                     file, get_u32(h + 8), TL_TLS_VERSION);
        return -1;
    }
    int64_t r = (int64_t)get_u64(h + 32);
    *rank = r >= 0 && r <= 0x7fffffff ? (long)r : -1;
    return 0;
}
