/* split.c — the trace splitter (split.h): selections, extraction, naming,
 * the gzip JSON writer and the execution_details summary. */
#include "split.h"

#include <isa-l/igzip_lib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/outfile.h"
#include "../trace/iteration.h"
#include "../util/msort.h"
#include "../util/sbuf.h"
#include "../util/vec.h"

/* ------------------------------------------------------------ names */

static void remove_all(char *s, const char *pat)
{
    size_t pl = strlen(pat);
    char *p;
    while ((p = strstr(s, pat))) memmove(p, p + pl, strlen(p + pl) + 1);
}

char *tl_split_base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    char *s = tl_xstrdup(b ? b + 1 : path);
    remove_all(s, ".pt.trace");
    remove_all(s, ".json.gz");
    remove_all(s, ".json");
    return s;
}

/* The single known annotation's name for a file name: '/' and '(' -> '_',
 * ')' and ':' removed, ' ' -> '_'. */
static void put_sanitized(tl_sbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '/' || *s == '(' || *s == ' ') tl_sb_putc(b, '_');
        else if (*s != ')' && *s != ':') tl_sb_putc(b, *s);
    }
}

/* ------------------------------------------------------------ JSON text */

static void put_jstr(tl_sbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    tl_sb_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            tl_sb_putc(b, '\\');
            tl_sb_putc(b, (char)c);
        } else if (c == '\n') {
            tl_sb_puts(b, "\\n");
        } else if (c == '\t') {
            tl_sb_puts(b, "\\t");
        } else if (c == '\r') {
            tl_sb_puts(b, "\\r");
        } else if (c < 0x20) {
            char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            tl_sb_puts(b, u);
        } else {
            tl_sb_putc(b, (char)c);
        }
    }
    tl_sb_putc(b, '"');
}

/* ns -> microseconds text: an integer when the file had one, else the
 * exact decimal (at most 3 fraction digits, trailing zeros dropped, at
 * least one kept so that it stays a float). */
static void put_us(tl_sbuf *b, int64_t ns, int was_int)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t whole = a / 1000, frac = a % 1000;
    if (ns < 0) tl_sb_putc(b, '-');
    tl_sb_printf(b, "%llu", (unsigned long long)whole);
    if (was_int && frac == 0) return;
    char f[5];
    snprintf(f, sizeof f, "%03u", (unsigned)frac);
    size_t k = 3;
    while (k > 1 && f[k - 1] == '0') k--;
    tl_sb_putc(b, '.');
    tl_sb_putn(b, f, k);
}

static void put_idval(tl_sbuf *b, const tl_event_store *es, uint32_t id)
{
    const tl_idval *v = &es->idvals[id];
    if (v->kind == 0) tl_sb_i64(b, v->i);
    else if (v->kind == 1) put_jstr(b, tl_strpool_get(&es->names, (uint32_t)v->i), tl_strpool_len(&es->names, (uint32_t)v->i));
    else tl_sb_putn(b, tl_strpool_get(&es->names, (uint32_t)v->i), tl_strpool_len(&es->names, (uint32_t)v->i));
}

/* One event of the store as a JSON object (critical: with the overlay's
 * "critical": 1 last in its args, which it gets when it has none). */
static void put_event(tl_sbuf *b, const tl_event_store *es, size_t e, int critical)
{
    int first = 1;
#define SEP() (first ? (void)(first = 0) : tl_sb_putc(b, ','))
    tl_sb_putc(b, '{');
    if (es->ph[e]) {
        SEP();
        tl_sb_puts(b, "\"ph\":");
        char ph = (char)es->ph[e];
        put_jstr(b, &ph, 1);
    }
    if (es->cat[e] != TL_CAT_NONE) {
        SEP();
        tl_sb_puts(b, "\"cat\":");
        put_jstr(b, tl_strpool_get(&es->cats, es->cat_id[e]), tl_strpool_len(&es->cats, es->cat_id[e]));
    }
    SEP();
    tl_sb_puts(b, "\"name\":");
    put_jstr(b, tl_es_name(es, e), tl_strpool_len(&es->names, es->name[e]));
    if (es->idvals[tl_es_pid(es, e)].kind != 2) {
        tl_sb_puts(b, ",\"pid\":");
        put_idval(b, es, tl_es_pid(es, e));
    }
    if (es->idvals[tl_es_tid(es, e)].kind != 2) {
        tl_sb_puts(b, ",\"tid\":");
        put_idval(b, es, tl_es_tid(es, e));
    }
    if (es->flags[e] & TL_F_TS) {
        tl_sb_puts(b, ",\"ts\":");
        put_us(b, es->ts[e], (es->flags[e] & TL_F_TS_INT) != 0);
    }
    if (es->flags[e] & TL_F_DUR) {
        tl_sb_puts(b, ",\"dur\":");
        put_us(b, es->dur[e], (es->flags[e] & TL_F_DUR_INT) != 0);
    }
    int flow = es->ph[e] == 's' || es->ph[e] == 'f';
    if (flow && tl_es_corr(es, e) != TL_NONE) {
        tl_sb_puts(b, ",\"id\":");
        tl_sb_i64(b, tl_es_corr(es, e));
    }
    if (es->ph[e] == 'f') tl_sb_puts(b, ",\"bp\":\"e\"");
    if (es->flags[e] & TL_F_ARGS) {
        tl_sb_puts(b, ",\"args\":{");
        int afirst = 1;
        if (!flow && tl_es_corr(es, e) != TL_NONE) {
            tl_sb_puts(b, "\"correlation\":");
            tl_sb_i64(b, tl_es_corr(es, e));
            afirst = 0;
        }
        tl_arg_iter it;
        tl_arg a;
        tl_es_args_begin(es, e, &it);
        while (tl_es_args_next(&it, &a)) {
            if (!afirst) tl_sb_putc(b, ',');
            afirst = 0;
            put_jstr(b, tl_strpool_get(&es->keys, a.key), tl_strpool_len(&es->keys, a.key));
            tl_sb_putc(b, ':');
            if (a.tag == TL_AV_INT) tl_sb_i64(b, a.i);
            else tl_sb_putn(b, tl_strpool_get(&es->values, (uint32_t)a.i), tl_strpool_len(&es->values, (uint32_t)a.i));
        }
        if (critical) tl_sb_puts(b, afirst ? "\"critical\":1" : ",\"critical\":1");
        tl_sb_putc(b, '}');
    } else if (critical) {
        tl_sb_puts(b, ",\"args\":{\"critical\":1}");
    }
    tl_sb_putc(b, '}');
#undef SEP
}

/* ------------------------------------------------------------ gzip file */

enum { GZ_OUT = 1 << 18, GZ_FLUSH = 1 << 20 };

typedef struct gzw {
    tl_outfile of;
    struct isal_zstream z;
    uint8_t *level_buf, *out;
    int failed;
} gzw;

static int gz_feed(gzw *g, const char *p, size_t n, int last)
{
    do {
        uint32_t k = n > (1u << 30) ? 1u << 30 : (uint32_t)n;
        g->z.next_in = (uint8_t *)p;
        g->z.avail_in = k;
        g->z.end_of_stream = (uint16_t)(last && k == n);
        for (;;) {
            g->z.next_out = g->out;
            g->z.avail_out = GZ_OUT;
            if (isal_deflate(&g->z) != COMP_OK) return g->failed = -1;
            size_t got = GZ_OUT - g->z.avail_out;
            if (got && fwrite(g->out, 1, got, g->of.f) != got) return g->failed = -1;
            int done = g->z.end_of_stream ? g->z.internal_state.state == ZSTATE_END : g->z.avail_in == 0;
            if (done) break;
        }
        p += k;
        n -= k;
    } while (n);
    return 0;
}

static int gz_open(gzw *g, const char *path, tl_error *err)
{
    memset(g, 0, sizeof *g);
    if (tl_outfile_open(&g->of, path, err) != 0) return -1;
    isal_deflate_init(&g->z);
    g->z.level = 1;
    g->z.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    g->level_buf = tl_xmalloc(ISAL_DEF_LVL1_DEFAULT);
    g->z.level_buf = g->level_buf;
    g->z.gzip_flag = IGZIP_GZIP;
    g->out = tl_xmalloc(GZ_OUT);
    return 0;
}

static int gz_close(gzw *g, int ok, tl_error *err)
{
    int rc = -1;
    if (ok && !g->failed && gz_feed(g, "", 0, 1) == 0) {
        rc = tl_outfile_commit(&g->of, err);
    } else {
        if (ok) tl_error_set(err, "%s: cannot write (disk full?)", g->of.path ? g->of.path : "output");
        tl_outfile_abort(&g->of);
    }
    free(g->level_buf);
    free(g->out);
    return rc;
}

/* ------------------------------------------------------------ indexes */

typedef struct pair {
    int64_t key;
    uint32_t uid;
} pair;

static int by_key_uid(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->uid > y->uid) - (x->uid < y->uid);
}

/* events on a thread: (pid, tid, ts, uid) */
typedef struct tev {
    uint32_t pid, tid;
    int64_t ts;
    uint32_t uid;
} tev;

static int by_thread_ts(const void *a, const void *b)
{
    const tev *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->uid > y->uid) - (x->uid < y->uid);
}

struct tl_split_index {
    pair *gpu, *flow;        /* by correlation / flow id, then file order */
    size_t n_gpu, n_flow;
    tev *timed;              /* events with ts and dur, by thread and ts */
    size_t n_timed;
    uint32_t *meta;          /* events without ts, file order */
    size_t n_meta;
};
typedef struct tl_split_index index_t;

static int is_gpu_cat(int c)
{
    return c == TL_CAT_KERNEL || c == TL_CAT_GPU_MEMCPY || c == TL_CAT_GPU_MEMSET || c == TL_CAT_GPU_USER_ANNOTATION;
}

/* preprocess (§1.7 step 1), plus the timed events by thread */
static void build_index(const tl_event_store *es, index_t *ix)
{
    memset(ix, 0, sizeof *ix);
    TL_VEC(pair) gpu = {0}, flow = {0};
    TL_VEC(tev) timed = {0};
    TL_VEC(uint32_t) meta = {0};
    for (size_t i = 0; i < es->n; i++) {
        uint32_t u = (uint32_t)i;
        /* [FIX] metadata: the reference keeps the events without a ts;
         * PyTorch 2.11 gives "M" events one, and they were lost */
        if (!(es->flags[i] & TL_F_TS) || es->ph[i] == 'M') {
            TL_PUSH(meta, u);
            continue;
        }
        if (es->flags[i] & TL_F_DUR) TL_PUSH(timed, ((tev){tl_es_pid(es, i), tl_es_tid(es, i), es->ts[i], u}));
        int64_t c = tl_es_corr(es, i);
        if (es->ph[i] == 's' || es->ph[i] == 'f') {
            if (c != TL_NONE) TL_PUSH(flow, ((pair){c, u}));
        } else if (is_gpu_cat(es->cat[i]) && c != TL_NONE) {
            TL_PUSH(gpu, ((pair){c, u}));
        }
    }
    if (gpu.n) qsort(gpu.v, gpu.n, sizeof *gpu.v, by_key_uid);
    if (flow.n) qsort(flow.v, flow.n, sizeof *flow.v, by_key_uid);
    if (timed.n) qsort(timed.v, timed.n, sizeof *timed.v, by_thread_ts);
    ix->gpu = gpu.v, ix->n_gpu = gpu.n;
    ix->flow = flow.v, ix->n_flow = flow.n;
    ix->timed = timed.v, ix->n_timed = timed.n;
    ix->meta = meta.v, ix->n_meta = meta.n;
}

static void free_index(index_t *ix)
{
    free(ix->gpu);
    free(ix->flow);
    free(ix->timed);
    free(ix->meta);
}

static size_t lower_pair(const pair *v, size_t n, int64_t key)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (v[m].key < key) a = m + 1;
        else b = m;
    }
    return a;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------ extraction */

typedef TL_VEC(uint32_t) u32vec;

typedef struct extract {
    u32vec events;           /* the new traceEvents, in order */
    size_t num_gpu;
    int64_t gpu_dur, gpu_busy; /* ns: Σ per-root GPU spans, Σ GPU durations */
    int64_t *batch;          /* per root: the attention op's first dim, or -1 */
} extract;

/* The first dim of the first Input Dims entry ("[[32, ...], ...]"), -1 if none. */
static int64_t first_dim(const tl_event_store *es, uint32_t e)
{
    int is_int = 0;
    uint32_t v = tl_es_arg_raw(es, e, TL_K_INPUT_DIMS, &is_int);
    if (v == UINT32_MAX) return -1;
    const char *p = tl_strpool_get(&es->values, v);
    while (*p == ' ') p++;
    if (*p++ != '[') return -1;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    if (*p++ != '[') return -1;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
        char *end;
        long long x = strtoll(p, &end, 10);
        if (*end == '.' || *end == 'e' || *end == 'E') return -1;
        return x;
    }
    return -1;
}

static int batch_name(const char *n)
{
    return strstr(n, "vllm::unified_attention_with_output") || strstr(n, "sgl_kernel::sgl_per_token_group_quant_8bit");
}

/* extract_iteration (§1.7) over roots[sel[0..n)]. */
static void extract_roots(const tl_event_store *es, const index_t *ix, const tl_iteration *roots, const size_t *sel,
                          size_t n, extract *x)
{
    memset(x, 0, sizeof *x);
    x->batch = tl_xmalloc((n ? n : 1) * sizeof *x->batch);
    u32vec in = {0};
    TL_VEC(int64_t) corrs = {0};
    for (size_t k = 0; k < n; k++) {
        const tl_iteration *r = &roots[sel[k]];
        uint32_t pid = tl_es_pid(es, r->uid), tid = tl_es_tid(es, r->uid);
        int64_t lo = r->ts, hi = r->ts + r->dur;
        /* the events on the root's thread starting at or after lo */
        size_t a = 0, b = ix->n_timed;
        tev key = {pid, tid, lo, 0};
        while (a < b) {
            size_t m = a + (b - a) / 2;
            if (by_thread_ts(&ix->timed[m], &key) < 0) a = m + 1;
            else b = m;
        }
        in.n = 0;
        for (size_t i = a; i < ix->n_timed && ix->timed[i].pid == pid && ix->timed[i].tid == tid && ix->timed[i].ts <= hi;
             i++) {
            uint32_t e = ix->timed[i].uid;
            if (tl_es_end(es, e) <= hi) TL_PUSH(in, e);
        }
        if (in.n) qsort(in.v, in.n, sizeof *in.v, cmp_u32); /* file order */
        x->batch[k] = -1;
        corrs.n = 0;
        for (size_t i = 0; i < in.n; i++) {
            uint32_t e = in.v[i];
            TL_PUSH(x->events, e);
            if (es->ph[e] != 's' && es->ph[e] != 'f' && tl_es_corr(es, e) != TL_NONE) TL_PUSH(corrs, tl_es_corr(es, e));
            if (x->batch[k] < 0 && batch_name(tl_es_name(es, e))) x->batch[k] = first_dim(es, e);
        }
        /* each correlation once (a set), ascending */
        if (corrs.n) qsort(corrs.v, corrs.n, sizeof *corrs.v, cmp_i64);
        size_t m = 0;
        for (size_t i = 0; i < corrs.n; i++)
            if (!m || corrs.v[m - 1] != corrs.v[i]) corrs.v[m++] = corrs.v[i];
        corrs.n = m;
        for (size_t i = 0; i < corrs.n; i++)
            for (size_t j = lower_pair(ix->flow, ix->n_flow, corrs.v[i]); j < ix->n_flow && ix->flow[j].key == corrs.v[i]; j++)
                TL_PUSH(x->events, ix->flow[j].uid);
        int64_t first = INT64_MAX, last = INT64_MIN;
        for (size_t i = 0; i < corrs.n; i++)
            for (size_t j = lower_pair(ix->gpu, ix->n_gpu, corrs.v[i]); j < ix->n_gpu && ix->gpu[j].key == corrs.v[i]; j++) {
                uint32_t g = ix->gpu[j].uid;
                TL_PUSH(x->events, g);
                x->num_gpu++;
                x->gpu_busy += es->dur[g];
                if (es->ts[g] < first) first = es->ts[g];
                if (tl_es_end(es, g) > last) last = tl_es_end(es, g);
            }
        if (first != INT64_MAX) x->gpu_dur += last - first;
    }
    for (size_t i = 0; i < ix->n_meta; i++) TL_PUSH(x->events, ix->meta[i]);
    free(in.v);
    free(corrs.v);
}

/* The start of an output trace: the input's top-level keys, then the
 * opening of traceEvents. */
static void put_head(tl_sbuf *b, const tl_event_store *es)
{
    tl_sb_putc(b, '{');
    for (size_t i = 0; i < es->n_top; i++) {
        const tl_top_entry *t = &es->top[i];
        put_jstr(b, tl_strpool_get(&es->keys, t->key), tl_strpool_len(&es->keys, t->key));
        tl_sb_puts(b, ": ");
        tl_sb_putn(b, t->raw, t->len);
        tl_sb_puts(b, ",\n");
    }
    tl_sb_puts(b, "\"traceEvents\": [\n");
}

/* Closes traceEvents, writes what b holds, frees b and closes g. */
static int put_tail(gzw *g, tl_sbuf *b, tl_error *err)
{
    tl_sb_puts(b, "\n]}\n");
    if (!g->failed) gz_feed(g, b->s, b->len, 0);
    tl_sb_free(b);
    return gz_close(g, 1, err);
}

/* The output trace: the top-level keys, then the new traceEvents. */
static int write_trace(const tl_event_store *es, const extract *x, const char *path, tl_error *err)
{
    gzw g;
    if (gz_open(&g, path, err) != 0) return -1;
    tl_sbuf b;
    tl_sb_init(&b);
    put_head(&b, es);
    for (size_t i = 0; i < x->events.n && !g.failed; i++) {
        if (i) tl_sb_puts(&b, ",\n");
        put_event(&b, es, x->events.v[i], 0);
        if (b.len >= GZ_FLUSH) {
            gz_feed(&g, b.s, b.len, 0);
            tl_sb_clear(&b);
        }
    }
    return put_tail(&g, &b, err);
}

int tl_split_write_overlay(const tl_event_store *es, const uint8_t *critical, const tl_cp_flow *flows,
                           size_t n_flows, const char *path, tl_error *err)
{
    gzw g;
    if (gz_open(&g, path, err) != 0) return -1;
    tl_sbuf b;
    tl_sb_init(&b);
    put_head(&b, es);
    for (size_t i = 0; i < es->n + n_flows && !g.failed; i++) {
        if (i) tl_sb_puts(&b, ",\n");
        if (i < es->n) {
            put_event(&b, es, i, critical && critical[i]);
        } else {
            const tl_cp_flow *f = &flows[i - es->n];
            tl_sb_printf(&b, "{\"ph\":\"%c\",\"id\":%u,\"pid\":", f->is_start ? 's' : 'f', (unsigned)f->id);
            put_idval(&b, es, tl_es_pid(es, f->ev));
            tl_sb_puts(&b, ",\"tid\":");
            put_idval(&b, es, tl_es_tid(es, f->ev));
            tl_sb_puts(&b, ",\"ts\":");
            put_us(&b, f->ts, 1);
            tl_sb_puts(&b, ",\"cat\":\"critical_path\",\"name\":\"critical_path\",\"args\":{\"weight\":");
            put_us(&b, f->weight, 1);
            tl_sb_printf(&b, ",\"critical\":true,\"type\":\"%s\"}", tl_cp_edge_type_name(f->type));
            if (!f->is_start) tl_sb_puts(&b, ",\"bp\":\"e\"");
            tl_sb_putc(&b, '}');
        }
        if (b.len >= GZ_FLUSH) {
            gz_feed(&g, b.s, b.len, 0);
            tl_sb_clear(&b);
        }
    }
    return put_tail(&g, &b, err);
}

tl_split_index *tl_split_index_new(const tl_event_store *es)
{
    index_t *ix = tl_xmalloc(sizeof *ix);
    build_index(es, ix);
    return ix;
}

void tl_split_index_free(tl_split_index *ix)
{
    if (!ix) return;
    free_index(ix);
    free(ix);
}

int tl_split_write(const tl_event_store *es, const tl_split_index *ix, const tl_iteration *roots, const size_t *sel,
                   size_t n, const char *path, size_t *event_count, tl_error *err)
{
    extract x;
    extract_roots(es, ix, roots, sel, n, &x);
    int rc = write_trace(es, &x, path, err);
    if (event_count) *event_count = x.events.n;
    free(x.events.v);
    free(x.batch);
    return rc;
}

/* ------------------------------------------------------------ selections */

typedef struct plan {
    size_t idx;              /* index (into all roots) of the first step */
    size_t *sel;             /* root indices */
    size_t n;
    char *label;             /* NULL: unlabelled */
    const char *subdir;      /* NULL or the phase directory */
} plan;

typedef TL_VEC(plan) planvec;

static void add_plan(planvec *pv, size_t idx, size_t first, size_t n, const char *label, const char *subdir)
{
    plan p = {.idx = idx, .n = n, .label = label ? tl_xstrdup(label) : NULL, .subdir = subdir};
    p.sel = tl_xmalloc((n ? n : 1) * sizeof *p.sel);
    for (size_t i = 0; i < n; i++) p.sel[i] = first + i;
    TL_PUSH(*pv, p);
}

typedef struct summary {
    size_t idx;
    char *path;
    size_t event_count, num_gpu;
    double gpu_dur, gpu_busy; /* us */
    tl_iter_details *steps;
    size_t n_steps;
    tl_phase_window phase;
} summary;

/* divide_phases_and_save's runs: inside the regions, has_context steps are
 * prefilldecodemix, generation-only steps decode_only; idle steps are
 * skipped (they do not end a run); a run ends at a phase change or at the
 * end of its region. */
static void plan_phases(planvec *pv, const tl_iter_details *d, size_t off, const tl_region *reg, size_t n_reg)
{
    static const char *const PH[2] = {"prefilldecodemix", "decode_only"};
    size_t chunk[2] = {0, 0};
    for (size_t r = 0; r < n_reg; r++) {
        int cur = -1;
        size_t *run = tl_xmalloc((reg[r].end - reg[r].start + 1) * sizeof *run), nrun = 0;
        for (size_t i = reg[r].start; i <= reg[r].end; i++) {
            int p = -1;
            if (i < reg[r].end) {
                if (d[i].context_requests > 0) p = 0;
                else if (d[i].generation_requests > 0) p = 1;
                else continue;
            }
            if (p != cur && nrun) {
                tl_iter_details *w = tl_xmalloc(nrun * sizeof *w);
                for (size_t k = 0; k < nrun; k++) w[k] = d[run[k]];
                tl_phase_window pw;
                tl_phase_from_window(w, nrun, &pw);
                free(w);
                char label[160];
                snprintf(label, sizeof label, "%s_chunk%zu_steps%zu_bs%lld_conc%lld", PH[cur], chunk[cur], nrun,
                         (long long)pw.avg_bs, (long long)pw.avg_conc);
                chunk[cur]++;
                plan pl = {.idx = off + run[0], .n = nrun, .label = tl_xstrdup(label), .subdir = PH[cur]};
                pl.sel = tl_xmalloc(nrun * sizeof *pl.sel);
                for (size_t k = 0; k < nrun; k++) pl.sel[k] = off + run[k];
                TL_PUSH(*pv, pl);
                nrun = 0;
            }
            cur = p;
            if (p >= 0) run[nrun++] = i;
        }
        free(run);
    }
}

/* ------------------------------------------------------------ summary files */

static void put_details_json(tl_sbuf *b, const summary *s, size_t n)
{
    if (!n) {
        tl_sb_puts(b, "[]");
        return;
    }
    tl_sb_puts(b, "[\n");
    for (size_t i = 0; i < n; i++) {
        const summary *e = &s[i];
        tl_sb_printf(b, "  {\n    \"idx\": %zu,\n    \"output_path\": ", e->idx);
        put_jstr(b, e->path, strlen(e->path));
        tl_sb_printf(b, ",\n    \"event_count\": %zu,\n    \"num_gpu_events\": %zu,\n    \"gpu_duration\": ", e->event_count,
                     e->num_gpu);
        tl_sb_pyfloat(b, e->gpu_dur);
        tl_sb_puts(b, ",\n    \"gpu_busy_duration\": ");
        tl_sb_pyfloat(b, e->gpu_busy);
        tl_sb_puts(b, ",\n    \"steps\": ");
        if (!e->n_steps) tl_sb_puts(b, "[]");
        else {
            tl_sb_puts(b, "[\n");
            for (size_t k = 0; k < e->n_steps; k++) {
                const tl_iter_details *d = &e->steps[k];
                tl_sb_printf(b,
                             "      {\n        \"batch_size\": %lld,\n        \"num_requests\": %lld,\n"
                             "        \"context_requests\": %lld,\n        \"context_sum\": %lld,\n"
                             "        \"generation_requests\": %lld,\n        \"generation_sum\": %lld\n      }%s\n",
                             (long long)d->batch_size, (long long)d->num_requests, (long long)d->context_requests,
                             (long long)d->context_sum, (long long)d->generation_requests, (long long)d->generation_sum,
                             k + 1 < e->n_steps ? "," : "");
            }
            tl_sb_puts(b, "    ]");
        }
        tl_sb_printf(b,
                     ",\n    \"phase\": {\n      \"num_prefill\": %zu,\n      \"num_prefilldecode\": %zu,\n"
                     "      \"num_decode\": %zu,\n      \"avg_bs\": %lld,\n      \"avg_conc\": %lld\n    }\n  }%s\n",
                     e->phase.num_prefill, e->phase.num_prefilldecode, e->phase.num_decode, (long long)e->phase.avg_bs,
                     (long long)e->phase.avg_conc, i + 1 < n ? "," : "");
    }
    tl_sb_puts(b, "]");
}

void tl_split_csv_cell(tl_sbuf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        tl_sb_puts(b, s);
        return;
    }
    tl_sb_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"') tl_sb_putc(b, '"');
        tl_sb_putc(b, *s);
    }
    tl_sb_putc(b, '"');
}

static void put_details_csv(tl_sbuf *b, const summary *s, size_t n)
{
    tl_sb_puts(b, "idx,output_path,event_count,num_gpu_events,gpu_duration,gpu_busy_duration,phase_num_prefill,"
                  "phase_num_prefilldecode,phase_num_decode,phase_avg_bs,phase_avg_conc,num_steps\n");
    for (size_t i = 0; i < n; i++) {
        const summary *e = &s[i];
        tl_sb_printf(b, "%zu,", e->idx);
        tl_split_csv_cell(b, e->path);
        tl_sb_printf(b, ",%zu,%zu,%.2f,%.2f,%zu,%zu,%zu,%lld,%lld,%zu\n", e->event_count, e->num_gpu, e->gpu_dur,
                     e->gpu_busy, e->phase.num_prefill, e->phase.num_prefilldecode, e->phase.num_decode,
                     (long long)e->phase.avg_bs, (long long)e->phase.avg_conc, e->n_steps);
    }
}

static int write_text(const char *path, const tl_sbuf *b, tl_error *err)
{
    return tl_outfile_write_all(path, b->s, b->len, err);
}

/* ------------------------------------------------------------ the run */

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = tl_xmalloc(la + lb + 2);
    memcpy(s, a, la);
    size_t k = la;
    if (la && a[la - 1] != '/') s[k++] = '/';
    memcpy(s + k, b, lb + 1);
    return s;
}

/* extract_and_save: the file name (§1.7 naming) of a plan whose steps
 * (batch sizes already overwritten) are d[0..n). */
static char *file_name(const tl_event_store *es, const tl_iteration *roots, const plan *p, const tl_iter_details *d,
                       const char *base)
{
    tl_sbuf app, nm;
    tl_sb_init(&app);
    tl_sb_init(&nm);
    if (p->label || p->n > 1) {
        tl_phase_window pw;
        tl_phase_from_window(d, p->n, &pw);
        tl_sb_printf(&app, "prefill_%zu_prefilldecode_%zu_decode_%zu_bs%lld_conc%lld", pw.num_prefill,
                     pw.num_prefilldecode, pw.num_decode, (long long)pw.avg_bs, (long long)pw.avg_conc);
    } else if (p->n == 1 && (roots[p->sel[0]].ann.format != TL_IT_NONE || roots[p->sel[0]].tier == 4)) {
        put_sanitized(&app, tl_es_name(es, roots[p->sel[0]].uid));
    }
    if (p->label) tl_sb_printf(&nm, "%s_%s_%s.json.gz", p->label, app.s ? app.s : "", base);
    else if (app.len) tl_sb_printf(&nm, "%s_annotation_iteration_%zu_%s.json.gz", base, p->idx, app.s);
    else tl_sb_printf(&nm, "%s_annotation_iteration_%zu.json.gz", base, p->idx);
    tl_sb_free(&app);
    return tl_sb_take(&nm);
}

static void free_plans(planvec *pv)
{
    for (size_t i = 0; i < pv->n; i++) {
        free(pv->v[i].sel);
        free(pv->v[i].label);
    }
    free(pv->v);
}

/* One line on what the iterations are (the roots come from one of three
 * sources; a reader must know which). */
static void say_roots(const tl_trace *t, const tl_iteration *roots, size_t nr)
{
    const tl_event_store *es = &t->es;
    printf("split: %zu iteration%s: ", nr, nr == 1 ? "" : "s");
    switch (roots[0].tier) {
    case 1: printf("the trace's iteration annotations (detailed: %s ...)\n", tl_es_name(es, roots[0].uid)); break;
    case 2: printf("the trace's iteration annotations (native: %s ...)\n", tl_es_name(es, roots[0].uid)); break;
    case 4:
        printf("the trace's profiler steps %s to %s (no iteration annotation)\n", tl_es_name(es, roots[0].uid),
               tl_es_name(es, roots[nr - 1].uid));
        break;
    default: {
        uint32_t parent = t->tree.parent ? t->tree.parent[roots[0].uid] : TL_NOUID;
        printf("a block of calls with GPU work that repeats under %s, from %s (no iteration annotation, fewer than "
               "2 ProfilerStep#N steps)\n",
               parent != TL_NOUID ? tl_es_name(es, parent) : "the top level", tl_es_name(es, roots[0].uid));
    }
    }
}

int tl_split_run(const tl_trace *t, const char *trace_path, const tl_split_opts *o, size_t *n_written, tl_error *err)
{
    const tl_event_store *es = &t->es;
    if (n_written) *n_written = 0;
    tl_iteration *roots = NULL;
    size_t nr = tl_trace_split_roots(t, &roots);
    if (!nr) {
        tl_error_set(err, "%s: no iteration annotations (vLLM, SGLang, ATOM, diffusion), fewer than 2 "
                          "ProfilerStep#N steps and no repeating block of GPU work: nothing to split",
                     trace_path);
        return -1;
    }
    if (!o->quiet) say_roots(t, roots, nr);
    size_t start = 0, end = nr;
    if (o->range) {
        start = o->start;
        end = o->end < nr ? o->end : nr;
        if (start >= end) {
            if (o->end == o->start + 1)
                tl_error_set(err, "-i/--iterations: %zu selects no iteration (the trace has %zu: 0 to %zu)", o->start,
                             nr, nr - 1);
            else
                tl_error_set(err, "-i/--iterations: %zu:%zu selects no iteration (the trace has %zu: 0 to %zu)",
                             o->start, o->end, nr, nr - 1);
            free(roots);
            return -1;
        }
    }
    tl_iter_details *det = tl_xmalloc(nr * sizeof *det);
    for (size_t i = 0; i < nr; i++) tl_iter_details_of(&roots[i].ann, &det[i]);

    /* plan every output first: an invalid option writes nothing */
    planvec pv = {0};
    int rc = -1;
    tl_region *reg = NULL;
    size_t n_reg = 0;
    if (o->store_single)
        for (size_t i = start; i < end; i++) add_plan(&pv, i, i, 1, NULL, NULL);
    size_t off = start, wn = end - start; /* the working set */
    if (o->range) {
        reg = tl_xmalloc(sizeof *reg);
        reg[0] = (tl_region){0, wn};
        n_reg = 1;
    } else if (o->find_steady_state || o->divide_phases) {
        int64_t gmax;
        int fallback;
        n_reg = tl_steady_state_regions(det, nr, o->num_steps, &reg, &gmax, &fallback);
        if (fallback && n_reg && !o->quiet) {
            printf("split: no steady-state region (a run of more than 5 iterations near the peak of %lld "
                   "request%s): ",
                   (long long)gmax, gmax == 1 ? "" : "s");
            if (reg[0].end - reg[0].start == 1)
                printf("the middle iteration %zu (of %zu) stands for it\n", reg[0].start, nr);
            else
                printf("the middle iterations %zu to %zu (%zu of %zu) stand for it\n", reg[0].start, reg[0].end - 1,
                       reg[0].end - reg[0].start, nr);
        }
    }
    if (o->divide_phases) {
        plan_phases(&pv, det + off, off, reg, n_reg);
    } else if (o->find_steady_state) {
        static const struct {
            int mode;
            const char *label;
        } M[3] = {{TL_SS_MIXED, "mixed_steady_state"},
                  {TL_SS_DECODE_ONLY, "decode_only_steady_state"},
                  {TL_SS_MAX_PREFILLDECODE, "prefilldecode_steady_state"}};
        for (int m = 0; m < 3; m++) {
            tl_ss_opts so = {.num_steps = o->num_steps, .mode = M[m].mode};
            if (M[m].mode == TL_SS_MIXED) {
                so.have_conc = o->have_conc, so.have_osl = o->have_osl, so.have_r = o->have_r;
                so.conc = o->conc, so.osl = o->osl, so.r = o->r;
            }
            tl_region w;
            tl_ss_info info;
            int got = tl_steady_state_window(det + off, wn, reg, n_reg, &so, &w, &info);
            if (got < 0) {
                tl_error_set(err, "--CONC/--OSL/--R give no P/D ratio (need CONC > 0 and OSL (1 + R) > 0)");
                goto out;
            }
            if (M[m].mode == TL_SS_MIXED) {
                if (info.conc_mismatch)
                    fprintf(stderr, "tracelens: warning: --CONC %lld differs from the trace's peak concurrency %lld\n",
                            (long long)o->conc, (long long)info.global_max);
                if (info.r_clamped) fprintf(stderr, "tracelens: warning: --R clamped to [0, 1]\n");
            }
            if (got == 0 || w.end <= w.start) {
                if (!o->quiet) printf("%s: no window (no such steps in the largest steady-state region)\n", M[m].label);
                continue;
            }
            add_plan(&pv, off + w.start, off + w.start, w.end - w.start, M[m].label, NULL);
        }
    } else if (o->range && !o->store_single) {
        add_plan(&pv, start, start, wn, NULL, NULL); /* [FIX] the A:B range as one file */
    }

    {
        index_t ix;
        build_index(es, &ix);
        char *base = tl_split_base_name(trace_path);
        TL_VEC(summary) sv = {0};
        int ok = 1;
        for (size_t p = 0; p < pv.n && ok; p++) {
            const plan *pl = &pv.v[p];
            extract x;
            extract_roots(es, &ix, roots, pl->sel, pl->n, &x);
            summary s = {.idx = pl->idx, .n_steps = pl->n};
            s.steps = tl_xmalloc(pl->n * sizeof *s.steps);
            int all_batch = 1;
            for (size_t k = 0; k < pl->n; k++) {
                s.steps[k] = det[pl->sel[k]];
                if (x.batch[k] < 0) all_batch = 0;
            }
            /* [FIX] one batch entry per root, in root order: they replace the
             * steps' batch sizes when every root has one (structured names) */
            if (all_batch && (pl->label || pl->n > 1))
                for (size_t k = 0; k < pl->n; k++) s.steps[k].batch_size = x.batch[k];
            tl_phase_from_window(s.steps, s.n_steps, &s.phase);
            char *name = file_name(es, roots, pl, s.steps, base);
            char *dir = pl->subdir ? join(o->out_dir, pl->subdir) : tl_xstrdup(o->out_dir);
            s.path = join(dir, name);
            free(dir);
            free(name);
            s.event_count = x.events.n;
            s.num_gpu = x.num_gpu;
            s.gpu_dur = (double)x.gpu_dur / 1000.0;
            s.gpu_busy = (double)x.gpu_busy / 1000.0;
            if (write_trace(es, &x, s.path, err) != 0) ok = 0;
            else if (!o->quiet)
                printf("%s (%zu events, %zu step%s)\n", s.path, s.event_count, s.n_steps, s.n_steps == 1 ? "" : "s");
            free(x.events.v);
            free(x.batch);
            TL_PUSH(sv, s);
        }
        if (ok) {
            tl_sbuf b;
            tl_sb_init(&b);
            put_details_json(&b, sv.v, sv.n);
            char *jp = join(o->out_dir, "execution_details.json");
            ok = write_text(jp, &b, err) == 0;
            free(jp);
            if (ok) {
                tl_sb_clear(&b);
                put_details_csv(&b, sv.v, sv.n);
                char *cp = join(o->out_dir, "execution_details.csv");
                ok = write_text(cp, &b, err) == 0;
                free(cp);
            }
            tl_sb_free(&b);
        }
        if (ok && n_written) *n_written = pv.n;
        for (size_t i = 0; i < sv.n; i++) {
            free(sv.v[i].path);
            free(sv.v[i].steps);
        }
        free(sv.v);
        free(base);
        free_index(&ix);
        rc = ok ? 0 : -1;
    }
out:
    free_plans(&pv);
    free(reg);
    free(det);
    free(roots);
    return rc;
}
