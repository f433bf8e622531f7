#include "iteration.h"

#include <math.h>
#include <string.h>

#include "steps.h"
#include "../util/msort.h"
#include "../util/vec.h"

/* ------------------------------------------------------------ scanning */

enum { MAX_DIGITS = 15 };

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_word(char c) { return is_digit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* Reads \d+ at *p into *v, advancing *p; 0 when there is no digit or more
 * than MAX_DIGITS of them. */
static int digits(const char **p, int64_t *v)
{
    const char *s = *p;
    int64_t x = 0;
    int n = 0;
    while (is_digit(*s)) {
        if (++n > MAX_DIGITS) return 0;
        x = x * 10 + (*s++ - '0');
    }
    if (!n) return 0;
    *v = x;
    *p = s;
    return 1;
}

/* Matches the literal lit at *p, advancing. */
static int lit(const char **p, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0) return 0;
    *p += n;
    return 1;
}

/* Python int(text[0..n)) for a token without blanks: optional sign, digits
 * with single underscores between them. 1 when valid (and small enough). */
static int py_int(const char *s, size_t n, int64_t *v)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    int64_t x = 0;
    int nd = 0;
    if (i >= n || !is_digit(s[i])) return 0;
    for (; i < n; i++) {
        if (s[i] == '_' && i + 1 < n && is_digit(s[i + 1]) && is_digit(s[i - 1])) continue;
        if (!is_digit(s[i]) || ++nd > MAX_DIGITS) return 0;
        x = x * 10 + (s[i] - '0');
    }
    *v = neg ? -x : x;
    return 1;
}

/* _first_int: the first run of digits in the text; 0 when none; -1 when the
 * run is too long. */
static int first_int(const char *s, size_t n, int64_t *v)
{
    *v = 0;
    for (size_t i = 0; i < n; i++)
        if (is_digit(s[i])) {
            int64_t x = 0;
            int nd = 0;
            for (; i < n && is_digit(s[i]); i++) {
                if (++nd > MAX_DIGITS) return -1;
                x = x * 10 + (s[i] - '0');
            }
            *v = x;
            return 1;
        }
    return 0;
}

/* One `key=value` pair found by a scanner over body[0..n). */
typedef struct kv {
    size_t k, klen, v, vlen;
} kv;

/* The next match of Python's findall over body from *pos, with value
 * grammar atom (1: `\[[^\]]*\](?:\.\.\.\+\d+)?|\S+`) or not (0: `\d+`).
 * \w+ is greedy and '=' is not a word character, so a match at a position
 * needs the whole word run there to be followed by '=' and a value. */
static int next_kv(const char *b, size_t n, size_t *pos, int atom, kv *out)
{
    for (size_t i = *pos; i < n; i++) {
        if (!is_word(b[i])) continue;
        size_t j = i;
        while (j < n && is_word(b[j])) j++;
        size_t v = j + 1, e = v;
        if (j < n && b[j] == '=' && v < n) {
            if (!atom) {
                while (e < n && is_digit(b[e])) e++;
            } else if (b[v] == '[' && memchr(b + v + 1, ']', n - v - 1)) {
                e = (size_t)((const char *)memchr(b + v + 1, ']', n - v - 1) - b) + 1;
                if (e + 4 < n && !strncmp(b + e, "...+", 4) && is_digit(b[e + 4])) {
                    e += 4;
                    while (e < n && is_digit(b[e])) e++;
                }
            } else {
                while (e < n && !is_space(b[e])) e++;
            }
        }
        if (e > v) {
            *out = (kv){i, j - i, v, e - v};
            *pos = e;
            return 1;
        }
        i = j; /* every start inside this word run fails alike */
    }
    *pos = n;
    return 0;
}

static int key_is(const char *b, const kv *p, const char *k)
{
    return p->klen == strlen(k) && !strncmp(b + p->k, k, p->klen);
}

/* ------------------------------------------------------------ the formats */

static void defaults(tl_iter_ann *a)
{
    memset(a, 0, sizeof *a);
    a->batch_size = 1;
}

static int parse_vllm_detailed(const char *s, tl_iter_ann *a)
{
    int64_t total, v[8];
    if (!lit(&s, "execute_") || !digits(&s, &total) || !lit(&s, "_context_") || !digits(&s, &a->context_requests))
        return 0;
    for (int half = 0; half < 2; half++) {
        if (half && (!lit(&s, "_generation_") || !digits(&s, &a->generation_requests))) return 0;
        if (!lit(&s, "(sq") || !digits(&s, &v[4 * half]) || !lit(&s, "sk") || !digits(&s, &v[4 * half + 1]) ||
            !lit(&s, "sqsq") || !digits(&s, &v[4 * half + 2]) || !lit(&s, "sqsk") || !digits(&s, &v[4 * half + 3]) ||
            !lit(&s, ")"))
            return 0;
    }
    a->c_sq = v[0], a->c_sk = v[1], a->c_sqsq = v[2], a->c_sqsk = v[3];
    a->g_sq = v[4], a->g_sk = v[5], a->g_sqsq = v[6], a->g_sqsk = v[7];
    a->context_sum = a->c_sq;
    a->generation_sum = a->g_sq;
    a->batch_size = a->c_sq + a->g_sq; /* the leading execute_N is not used */
    a->has_sqsk = 1;
    return 1;
}

static int parse_vllm_native(const char *s, tl_iter_ann *a)
{
    if (!lit(&s, "execute_context_") || !digits(&s, &a->context_requests) || !lit(&s, "(") ||
        !digits(&s, &a->context_sum) || !lit(&s, ")_generation_") || !digits(&s, &a->generation_requests) ||
        !lit(&s, "(") || !digits(&s, &a->generation_sum) || !lit(&s, ")"))
        return 0;
    a->c_sq = a->context_sum;
    a->g_sq = a->generation_sum;
    a->batch_size = a->c_sq + a->g_sq;
    return 1;
}

/* The SGLang body: between the first '[' and the last ']' of the name. */
static int sglang_body(const char *s, const char **b, size_t *n)
{
    const char *o = strchr(s, '['), *c = strrchr(s, ']');
    if (!o || !c || c < o) return 0;
    *b = o + 1;
    *n = (size_t)(c - o - 1);
    return 1;
}

/* Every `key=int` pair of the body (the last of a key wins, as a dict). */
typedef struct sgl_keys {
    int64_t bs, toks, c, g, v[8];
    int has_c, has_g;
} sgl_keys;

static int sglang_scan(const char *b, size_t n, sgl_keys *k)
{
    static const char *const names[8] = {"c_sq", "c_sk", "c_sqsq", "c_sqsk", "g_sq", "g_sk", "g_sqsq", "g_sqsk"};
    memset(k, 0, sizeof *k);
    size_t pos = 0;
    kv p;
    while (next_kv(b, n, &pos, 0, &p)) {
        int64_t x;
        if (!py_int(b + p.v, p.vlen, &x)) return 0; /* more than MAX_DIGITS */
        if (key_is(b, &p, "bs")) k->bs = x;
        else if (key_is(b, &p, "toks")) k->toks = x;
        else if (key_is(b, &p, "c")) k->c = x, k->has_c = 1;
        else if (key_is(b, &p, "g")) k->g = x, k->has_g = 1;
        else
            for (int i = 0; i < 8; i++)
                if (key_is(b, &p, names[i])) k->v[i] = x;
    }
    return 1;
}

static int parse_sglang_detailed(const char *s, tl_iter_ann *a)
{
    const char *b;
    size_t n;
    sgl_keys k;
    if (!sglang_body(s, &b, &n) || !sglang_scan(b, n, &k)) return 0;
    size_t m0 = 0;
    while (m0 < n && is_space(b[m0])) m0++;
    size_t m1 = m0;
    while (m1 < n && !is_space(b[m1])) m1++;
    /* mode = body.split()[0], compared whole */
    int decode = m1 - m0 == 6 && !strncmp(b + m0, "DECODE", 6);
    int extend = m1 - m0 == 6 && !strncmp(b + m0, "EXTEND", 6);
    a->c_sq = k.v[0], a->c_sk = k.v[1], a->c_sqsq = k.v[2], a->c_sqsk = k.v[3];
    a->g_sq = k.v[4], a->g_sk = k.v[5], a->g_sqsq = k.v[6], a->g_sqsk = k.v[7];
    if (decode) {
        a->generation_requests = k.bs;
        a->generation_sum = a->g_sq;
    } else if (extend) {
        a->context_requests = k.bs;
        a->context_sum = a->c_sq;
    } else { /* MIXED: c= / g= are the request counts of each group */
        a->context_requests = k.c;
        a->generation_requests = k.g;
        a->context_sum = a->c_sq;
        a->generation_sum = a->g_sq;
    }
    a->batch_size = a->c_sq + a->g_sq ? a->c_sq + a->g_sq : k.toks ? k.toks : k.bs;
    a->has_sqsk = 1;
    return 1;
}

/* [FIX] of the spec: the reference accepts only step[WORD bs=N( toks=M)?];
 * here every key=int pair is scanned (other keys ignored). */
static int parse_sglang_native(const char *s, tl_iter_ann *a)
{
    const char *b;
    size_t n;
    sgl_keys k;
    if (!sglang_body(s, &b, &n) || !sglang_scan(b, n, &k)) return 0;
    const char *mode = s + 5; /* after "step[", as the grammar matched */
    if (!strncmp(mode, "DECODE", 6)) {
        a->generation_requests = a->generation_sum = a->g_sq = k.bs;
    } else {
        int mixed = !strncmp(mode, "MIXED", 5);
        a->context_requests = mixed && (k.has_c || k.has_g) ? k.c : k.bs;
        if (mixed && (k.has_c || k.has_g)) a->generation_requests = k.g;
        a->context_sum = a->c_sq = k.toks;
    }
    a->batch_size = a->c_sq + a->g_sq ? a->c_sq + a->g_sq : k.bs;
    return 1;
}

/* ATOM: ^(prefill|decode)\[(.*)\] — the body runs to the last ']' before
 * the first newline (Python's '.' stops at newlines). */
static int parse_atom(const char *s, tl_iter_ann *a)
{
    int prefill = !strncmp(s, "prefill[", 8);
    if (!prefill && strncmp(s, "decode[", 7) != 0) return 0;
    const char *b = s + (prefill ? 8 : 7);
    const char *nl = strchr(b, '\n');
    size_t lim = nl ? (size_t)(nl - b) : strlen(b), n = lim;
    while (n > 0 && b[n - 1] != ']') n--;
    if (n == 0) return 0;
    n--; /* the body ends before that ']' */
    int64_t bs = 0, tok = 0, sk = 0, sqsq = 0, sqsk = 0;
    int has_sqsq = 0, has_sqsk = 0;
    size_t pos = 0;
    kv p, bs_kv = {0, 0, 0, 0}, tok_kv = bs_kv, sk_kv = bs_kv, sqsq_kv = bs_kv, sqsk_kv = bs_kv;
    kv pk = bs_kv, dk = bs_kv, speck = bs_kv;
    int has_bs = 0, has_tok = 0, has_sk = 0, has_p = 0, has_d = 0, has_spec = 0;
    a->tbo = 0;
    while (next_kv(b, n, &pos, 1, &p)) { /* a dict: the last of a key wins */
        if (key_is(b, &p, "bs")) bs_kv = p, has_bs = 1;
        else if (key_is(b, &p, "tok")) tok_kv = p, has_tok = 1;
        else if (key_is(b, &p, "sk")) sk_kv = p, has_sk = 1;
        else if (key_is(b, &p, "sqsq")) sqsq_kv = p, has_sqsq = 1;
        else if (key_is(b, &p, "sqsk")) sqsk_kv = p, has_sqsk = 1;
        else if (key_is(b, &p, "p")) pk = p, has_p = 1;
        else if (key_is(b, &p, "d")) dk = p, has_d = 1;
        else if (key_is(b, &p, "spec")) speck = p, has_spec = 1;
        else if (key_is(b, &p, "tbo")) a->tbo = 1;
        else if (key_is(b, &p, "ctx")) {
            a->has_ctx = 1;
            a->ctx_off = (size_t)(b - s) + p.v;
            a->ctx_len = p.vlen;
        }
    }
    /* _safe_int: int(text), 0 when it is not one; _first_int for bs */
#define SAFE(has, k, dst)                                                    \
    do {                                                                     \
        dst = 0;                                                             \
        if ((has) && !py_int(b + (k).v, (k).vlen, &(dst))) (dst) = 0;        \
    } while (0)
    if (has_bs && first_int(b + bs_kv.v, bs_kv.vlen, &bs) < 0) return 0;
    SAFE(has_tok, tok_kv, tok);
    SAFE(has_sk, sk_kv, sk);
    SAFE(has_sqsq, sqsq_kv, sqsq);
    SAFE(has_sqsk, sqsk_kv, sqsk);
    if (prefill) {
        a->context_requests = bs;
        a->context_sum = a->c_sq = tok;
        a->c_sk = sk, a->c_sqsq = sqsq, a->c_sqsk = sqsk;
    } else {
        a->has_ctx = 0; /* ctx is kept for prefill only */
        a->generation_requests = bs;
        a->generation_sum = a->g_sq = tok;
        a->g_sk = sk, a->g_sqsq = sqsq, a->g_sqsk = sqsk;
        a->has_p = has_p, a->has_d = has_d, a->has_spec = has_spec;
        SAFE(has_p, pk, a->p);
        SAFE(has_d, dk, a->d);
        SAFE(has_spec, speck, a->spec);
    }
#undef SAFE
    a->batch_size = tok; /* tok= is the whole batch dimension */
    a->has_sqsk = has_sqsq && has_sqsk;
    return 1;
}

static int parse_diffusion(const char *s, tl_iter_ann *a)
{
    const char *p = s;
    int64_t w, h;
    if (!lit(&p, "execute_diffusion_") || !digits(&p, &a->batch_size) || !lit(&p, "_")) return 0;
    const char *r = p;
    if (!digits(&p, &w) || !lit(&p, "x") || !digits(&p, &h)) return 0;
    a->has_resolution = 1;
    a->res_off = (size_t)(r - s);
    a->res_len = (size_t)(p - r);
    return 1;
}

int tl_iter_parse(const tl_ann_grammars *g, const char *name, tl_iter_ann *out)
{
    static const struct {
        int format, grammar;
        int (*parse)(const char *, tl_iter_ann *);
    } order[] = {
        {TL_IT_VLLM_DETAILED, TL_G_VLLM_DETAILED, parse_vllm_detailed},
        {TL_IT_VLLM_NATIVE, TL_G_VLLM_NATIVE, parse_vllm_native},
        {TL_IT_SGLANG_DETAILED, TL_G_SGLANG_DETAILED, parse_sglang_detailed},
        {TL_IT_SGLANG_NATIVE, TL_G_SGLANG_NATIVE, parse_sglang_native},
        {TL_IT_ATOM_DETAILED, TL_G_ATOM_DETAILED, parse_atom},
        {TL_IT_ATOM_NATIVE, TL_G_ATOM_NATIVE, parse_atom},
        {TL_IT_DIFFUSION_NATIVE, TL_G_DIFFUSION_NATIVE, parse_diffusion},
    };
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        if (!tl_ann_grammar_match(g, order[i].grammar, name)) continue;
        defaults(out);
        if (order[i].parse(name, out)) {
            out->format = order[i].format;
            return out->format;
        }
    }
    defaults(out);
    return TL_IT_NONE;
}

const char *tl_iter_format_name(int format)
{
    static const char *const names[] = {NULL, "vllm_detailed", "vllm_native", "sglang_detailed", "sglang_native",
                                        "atom_detailed", "atom_native", "diffusion_native"};
    return format > 0 && format < (int)(sizeof names / sizeof *names) ? names[format] : NULL;
}

void tl_iter_details_of(const tl_iter_ann *a, tl_iter_details *d)
{
    if (a->format == TL_IT_NONE) { /* one decode-equivalent step */
        *d = (tl_iter_details){1, 1, 0, 0, 1, 1};
        return;
    }
    d->batch_size = a->batch_size;
    d->num_requests = a->context_requests + a->generation_requests;
    d->context_requests = a->context_requests;
    d->context_sum = a->context_sum;
    d->generation_requests = a->generation_requests;
    d->generation_sum = a->generation_sum;
}

int tl_capture_annotation_parse(const char *name, int64_t *batch_size, size_t *mode_off, size_t *mode_len)
{
    const char *p = name;
    int64_t bs;
    if (!lit(&p, "capture_") || !digits(&p, &bs) || !lit(&p, "_")) return 0;
    *batch_size = bs;
    *mode_off = (size_t)(p - name);
    const char *nl = strchr(p, '\n');
    *mode_len = nl ? (size_t)(nl - p) : strlen(p);
    return 1;
}

/* ------------------------------------------------------------ phases */

int tl_iter_phase(const tl_iter_details *d)
{
    int ctx = d->context_requests > 0, gen = d->generation_requests > 0;
    return ctx && gen ? TL_PHASE_PREFILLDECODE : ctx ? TL_PHASE_PREFILL_ONLY : gen ? TL_PHASE_DECODE_ONLY : TL_PHASE_NONE;
}

const char *tl_phase_name(int phase)
{
    switch (phase) {
    case TL_PHASE_PREFILLDECODE: return "prefilldecode";
    case TL_PHASE_PREFILL_ONLY: return "prefill_only";
    case TL_PHASE_DECODE_ONLY: return "decode_only";
    default: return NULL;
    }
}

/* int(sum / n) of Python: float division, truncated toward zero. */
static int64_t int_mean(int64_t sum, size_t n)
{
    return n ? (int64_t)((double)sum / (double)n) : 0;
}

void tl_phase_from_window(const tl_iter_details *d, size_t n, tl_phase_window *out)
{
    memset(out, 0, sizeof *out);
    int64_t bs = 0, conc = 0;
    for (size_t i = 0; i < n; i++) {
        int ph = tl_iter_phase(&d[i]);
        out->num_prefill += ph == TL_PHASE_PREFILL_ONLY;
        out->num_prefilldecode += ph == TL_PHASE_PREFILLDECODE;
        out->num_decode += ph == TL_PHASE_DECODE_ONLY;
        bs += d[i].batch_size;
        conc += d[i].num_requests;
    }
    out->avg_bs = int_mean(bs, n);
    out->avg_conc = int_mean(conc, n);
}

/* ------------------------------------------------------------ roots */

static int by_start(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The GPU work under root r (see tl_iteration). launches: runtime events
 * with GPU events, sorted by ts. buf: scratch of (start, end) pairs. */
static void measure(const tl_trace *t, const size_t *launches, size_t nl, tl_iteration *it, int64_t **buf,
                    size_t *cap)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    uint32_t r = it->uid;
    int64_t lo = it->ts, hi = it->ts + it->dur;
    size_t a = 0, b = nl; /* first launch with ts >= lo */
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (es->ts[launches[m]] < lo) a = m + 1;
        else b = m;
    }
    size_t n = 0;
    for (size_t i = a; i < nl && es->ts[launches[i]] <= hi; i++) {
        size_t l = launches[i];
        if (es->thr[l] != es->thr[r] || tl_es_end(es, l) > hi) continue; /* another thread, or past the window */
        tl_span gs = tl_tree_gpu_span(tr, (uint32_t)l);
        for (uint32_t k = gs.b; k < gs.e; k++) {
            uint32_t g = tr->gpus.v[k];
            TL_GROW(*buf, *cap, 2 * (n + 1));
            (*buf)[2 * n] = es->ts[g];
            (*buf)[2 * n + 1] = tl_es_end(es, g);
            n++;
        }
    }
    it->n_gpu = n;
    it->gpu_busy = 0;
    it->gpu_first = it->gpu_last = TL_NONE;
    if (!n) return;
    qsort(*buf, n, 2 * sizeof **buf, by_start);
    int64_t s = (*buf)[0], e = (*buf)[1], last = e;
    for (size_t i = 1; i < n; i++) {
        int64_t s2 = (*buf)[2 * i], e2 = (*buf)[2 * i + 1];
        if (e2 > last) last = e2;
        if (s2 > e) {
            it->gpu_busy += e - s;
            s = s2, e = e2;
        } else if (e2 > e) {
            e = e2;
        }
    }
    it->gpu_busy += e - s;
    it->gpu_first = (*buf)[0];
    it->gpu_last = last;
}

static void measure_all(const tl_trace *t, tl_iteration *v, size_t n);

size_t tl_trace_iterations(const tl_trace *t, tl_iteration **out)
{
    *out = NULL;
    tl_annotations a; /* the user_annotation candidates, by ts (stable) */
    tl_annotations_init(&a, t);
    const tl_event_store *es = &t->es;
    TL_VEC(tl_iteration) v = {0};
    for (int tier = 1; tier <= 2 && !v.n; tier++)
        for (size_t i = 0; i < a.n; i++) {
            uint32_t c = a.cands[i];
            const char *name = tl_es_name(es, c);
            if (tl_annotation_tier(&a, name) != tier) continue;
            tl_iteration it = {.uid = c, .tier = tier, .ts = es->ts[c], .dur = es->dur[c]};
            tl_iter_parse(&a.g, name, &it.ann);
            TL_PUSH(v, it);
        }
    tl_annotations_free(&a);
    if (!v.n) return 0;
    measure_all(t, v.v, v.n);
    *out = v.v;
    return v.n;
}

/* Measures every iteration: the runtime calls with GPU events, by ts. */
static void measure_all(const tl_trace *t, tl_iteration *v, size_t n)
{
    const tl_event_store *es = &t->es;
    TL_VEC(size_t) l = {0};
    for (size_t i = 0; i < es->n; i++)
        if ((es->cat[i] == TL_CAT_CUDA_RUNTIME || es->cat[i] == TL_CAT_CUDA_DRIVER) && (es->flags[i] & TL_F_TS) &&
            tl_tree_has_gpus(&t->tree, (uint32_t)i))
            TL_PUSH(l, i);
    tl_msort(l.v, l.n, tl_idx_cmp_i64, (void *)es->ts);
    int64_t *buf = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) measure(t, l.v, l.n, &v[i], &buf, &cap);
    free(buf);
    free(l.v);
}

static int by_name_then_index(void *ctx, size_t a, size_t b)
{
    const uint32_t *names = ctx;
    if (names[a] != names[b]) return names[a] < names[b] ? -1 : 1;
    return (a > b) - (a < b);
}

int tl_repeating_period(const uint32_t *names, size_t n, const uint8_t *need, size_t *start, size_t *period)
{
    /* A period p can repeat only if names[s + p] == names[s], and 3
     * repeats need 3p <= m: so only the later occurrences of names[s]
     * within m / 3 are tried, in increasing p (the reference's order). */
    size_t *idx = tl_msort_order(n, by_name_then_index, (void *)names);
    size_t *next = tl_xmalloc((n ? n : 1) * sizeof *next);
    for (size_t i = 0; i < n; i++)
        next[idx[i]] = i + 1 < n && names[idx[i + 1]] == names[idx[i]] ? idx[i + 1] : SIZE_MAX;
    free(idx);
    /* with need: the first needed index at or after each start */
    size_t *first_need = NULL;
    if (need) {
        first_need = tl_xmalloc((n + 1) * sizeof *first_need);
        first_need[n] = SIZE_MAX;
        for (size_t i = n; i-- > 0;) first_need[i] = need[i] ? i : first_need[i + 1];
    }
    int found = 0;
    for (size_t s = 0; s < n && !found; s++) {
        if (first_need && first_need[s] == SIZE_MAX) break; /* no later block can hold one */
        const uint32_t *x = names + s;
        size_t m = n - s;
        for (size_t j = next[s]; j != SIZE_MAX && 3 * (j - s) <= m; j = next[j]) {
            size_t p = j - s, count = 1;
            if (first_need && first_need[s] >= j) continue; /* the block [s, j) holds none */
            while ((count + 1) * p <= m && !memcmp(x + count * p, x, p * sizeof *x)) count++;
            if (count >= 3 && 2 * count * p > m) {
                *start = s;
                *period = p;
                found = 1;
                break;
            }
        }
    }
    free(next);
    free(first_need);
    return found;
}

size_t tl_trace_generic_iterations(const tl_trace *t, tl_iteration **out)
{
    *out = NULL;
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    TL_VEC(size_t) roots = {0};
    for (size_t i = 0; i < es->n; i++)
        if (tr->in_tree[i] == 1 && tr->parent[i] == TL_NOUID && !tl_is_gpu_cat(es->cat[i]) &&
            (es->flags[i] & TL_F_TS))
            TL_PUSH(roots, i);
    tl_msort(roots.v, roots.n, tl_idx_cmp_i64, (void *)es->ts);
    TL_VEC(uint32_t) queue = {0}; /* breadth first: the whole queue is kept, head advances */
    for (size_t i = 0; i < roots.n; i++) TL_PUSH(queue, (uint32_t)roots.v[i]);
    free(roots.v);
    TL_VEC(uint32_t) names = {0};
    TL_VEC(uint8_t) gpu_child = {0};
    TL_VEC(tl_iteration) v = {0};
    for (size_t head = 0; head < queue.n && !v.n; head++) {
        uint32_t u = queue.v[head];
        size_t nc;
        const uint32_t *ch = tl_tree_children(tr, u, &nc);
        int gpu = 0;
        for (size_t k = 0; k < nc && !gpu; k++) gpu = tl_tree_has_gpus(tr, ch[k]);
        if (!gpu) continue;
        names.n = 0;
        gpu_child.n = 0;
        for (size_t k = 0; k < nc; k++) {
            TL_PUSH(names, es->name[ch[k]]);
            TL_PUSH(gpu_child, (uint8_t)tl_tree_has_gpus(tr, ch[k]));
        }
        /* a repeating block without GPU work is no iteration (the reference
         * takes the first repeat, e.g. transpose + as_strided: docs/compat.md) */
        size_t s, p;
        if (!tl_repeating_period(names.v, nc, gpu_child.v, &s, &p)) {
            for (size_t k = 0; k < nc; k++)
                if (tl_tree_has_gpus(tr, ch[k])) TL_PUSH(queue, ch[k]);
            continue;
        }
        /* the n-th occurrence (from start) of the first name to the n-th of the last */
        uint32_t first = names.v[s], last = names.v[s + p - 1];
        size_t fi = s, li = s;
        for (;;) {
            while (fi < nc && names.v[fi] != first) fi++;
            while (li < nc && names.v[li] != last) li++;
            if (fi >= nc || li >= nc || li < fi) break;
            uint32_t a = ch[fi], b = ch[li];
            tl_iteration it = {.uid = a, .tier = 3, .ts = es->ts[a], .dur = tl_es_end(es, b) - es->ts[a]};
            defaults(&it.ann);
            TL_PUSH(v, it);
            fi++, li++;
        }
    }
    free(queue.v);
    free(names.v);
    free(gpu_child.v);
    if (!v.n) return 0;
    measure_all(t, v.v, v.n);
    *out = v.v;
    return v.n;
}

size_t tl_trace_step_iterations(const tl_trace *t, tl_iteration **out)
{
    *out = NULL;
    tl_step *st = NULL;
    size_t ns = tl_steps_find(t, &st);
    if (ns < 2) {
        free(st);
        return 0;
    }
    tl_iteration *v = tl_xmalloc(ns * sizeof *v);
    for (size_t i = 0; i < ns; i++) {
        v[i] = (tl_iteration){.uid = st[i].uid, .tier = 4, .ts = st[i].ts, .dur = st[i].dur};
        defaults(&v[i].ann);
    }
    free(st);
    measure_all(t, v, ns);
    *out = v;
    return ns;
}

size_t tl_trace_split_roots(const tl_trace *t, tl_iteration **out)
{
    size_t n = tl_trace_iterations(t, out);
    if (!n) n = tl_trace_step_iterations(t, out);
    if (!n) n = tl_trace_generic_iterations(t, out);
    return n;
}

/* ------------------------------------------------------------ steady state */

static int near_max(int64_t x, int64_t g, double thresh)
{
    double tol = thresh * (double)g;
    if (tol < 1) tol = 1;
    return fabs((double)(x - g)) <= tol;
}

size_t tl_steady_state_regions(const tl_iter_details *d, size_t n, size_t num_steps, tl_region **out,
                               int64_t *global_max, int *fallback)
{
    *out = NULL;
    *global_max = 0;
    if (fallback) *fallback = 0;
    if (!n) return 0;
    double thresh = n >= num_steps ? 0.1 : 0.2;
    int64_t g = d[0].num_requests;
    for (size_t i = 1; i < n; i++)
        if (d[i].num_requests > g) g = d[i].num_requests;
    *global_max = g;
    TL_VEC(tl_region) r = {0};
    int64_t c = 0;
    int started = 0;
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        int near = near_max(d[i].num_requests, g, thresh);
        if (near && !started) c++;
        else if (!near && started) c--;
        if (c > 5 && !started) {
            started = 1;
            start = i - (size_t)c + 1;
        }
        if (c <= 0 && started) {
            tl_region x = {start, i};
            TL_PUSH(r, x);
            started = 0;
            c = 0;
        }
    }
    if (started) { /* [FIX] closes at n (the reference: n - 1) */
        tl_region x = {start, n};
        TL_PUSH(r, x);
    }
    if (!r.n) { /* drop the first and last steps, keep the middle */
        if (fallback) *fallback = 1;
        size_t want = num_steps > n ? num_steps - n : 0;
        size_t delta = want > 8 ? want : 8;
        if (delta > n) delta = n;
        size_t s = delta / 2, e = n - delta / 2;
        if (e < s + 1) e = s + 1;
        tl_region x = {s, e};
        TL_PUSH(r, x);
    }
    *out = r.v;
    return r.n;
}

static int has_context(const tl_iter_details *d) { return d->context_requests > 0; }

/* The first longest run of steps of [s, e) where pred holds. */
static int longest_run(const tl_iter_details *d, size_t s, size_t e, int decode_only, tl_region *best)
{
    int found = 0;
    size_t run = SIZE_MAX;
    for (size_t i = s; i <= e; i++) {
        int in = i < e && (decode_only ? tl_iter_phase(&d[i]) == TL_PHASE_DECODE_ONLY : has_context(&d[i]));
        if (in && run == SIZE_MAX) run = i;
        if (!in && run != SIZE_MAX) {
            if (!found || i - run > best->end - best->start) *best = (tl_region){run, i};
            found = 1;
            run = SIZE_MAX;
        }
    }
    return found;
}

int tl_steady_state_window(const tl_iter_details *d, size_t n, const tl_region *regions, size_t n_regions,
                           const tl_ss_opts *o, tl_region *win, tl_ss_info *info)
{
    memset(info, 0, sizeof *info);
    info->ideal_ratio = -1;
    size_t num_steps = o->num_steps ? o->num_steps : 1;
    info->num_steps = num_steps;
    if (!n || !n_regions) return 0;
    int64_t g = d[0].num_requests;
    for (size_t i = 1; i < n; i++)
        if (d[i].num_requests > g) g = d[i].num_requests;
    info->global_max = g;

    /* compute_reference_pd_ratio: the largest region (first of the largest
     * size) and the all-regions P/D ratio */
    size_t tot = 0, tot_pd = 0;
    tl_region largest = regions[0];
    for (size_t k = 0; k < n_regions; k++) {
        size_t s = regions[k].start, e = regions[k].end < n ? regions[k].end : n;
        if (s > e) s = e;
        tot += e - s;
        for (size_t i = s; i < e; i++) tot_pd += has_context(&d[i]);
        if (k == 0 || e - s > largest.end - largest.start) largest = (tl_region){s, e};
    }
    info->largest = largest;
    double ref = tot ? (double)tot_pd / (double)tot : 0.0;

    if (o->have_conc && o->conc != g) info->conc_mismatch = 1;
    if (o->have_conc && o->have_osl && o->have_r) {
        double r = o->r;
        if (!(r >= 0.0 && r <= 1.0)) {
            info->r_clamped = 1;
            r = r < 0.0 || r != r ? 0.0 : 1.0;
        }
        double den = o->osl * (1.0 + r);
        if (o->conc <= 0 || !(den > 0) || !isfinite(den)) return -1;
        double ideal = ((double)o->conc * 2.0) / den;
        double need = ceil(1.0 / ideal);
        if (need > 1e15) need = 1e15;
        if ((double)num_steps < need) num_steps = (size_t)need;
        info->ideal_ratio = ref = ideal;
        info->num_steps = num_steps;
    }
    info->reference_ratio = ref;

    size_t s = largest.start, e = largest.end;
    if (o->mode == TL_SS_DECODE_ONLY || o->mode == TL_SS_MAX_PREFILLDECODE) {
        tl_region run = {0, 0};
        if (!longest_run(d, s, e, o->mode == TL_SS_DECODE_ONLY, &run)) return 0;
        win->start = run.start;
        win->end = run.end - run.start > num_steps ? run.start + num_steps : run.end;
        return 1;
    }

    /* mixed: candidate windows of the largest region */
    size_t divider = num_steps / 2 < 10 ? num_steps / 2 : 10;
    if (divider < 1) divider = 1;
    size_t step = num_steps / divider;
    if (step < 1) step = 1;
    int have = 0, have_pd = 0;
    tl_region best = {s, e};
    double best_dist = 0;
    int64_t best_req = 0;
    size_t len = e - s >= num_steps ? num_steps : e - s;
    size_t last = e - s >= num_steps ? e - num_steps : s;
    for (size_t s1 = s; s1 <= last; s1 += step) {
        size_t pd = 0;
        int64_t req = 0;
        for (size_t i = s1; i < s1 + len; i++) {
            pd += has_context(&d[i]);
            req += d[i].num_requests;
        }
        double ratio = len ? (double)pd / (double)len : 0.0;
        double dist = fabs(ratio - ref);
        /* the pool: windows with a prefill-bearing step, else all; then
         * min by (distance, -mean requests), the first on ties (every
         * candidate has the same length, so sums order as means) */
        int better;
        if (!have) better = 1;
        else if ((pd > 0) != have_pd) better = pd > 0;
        else better = dist < best_dist || (dist == best_dist && req > best_req);
        if (better) {
            best = (tl_region){s1, s1 + len};
            best_dist = dist;
            best_req = req;
            have_pd = pd > 0;
            have = 1;
        }
        if (e - s < num_steps) break;
    }
    *win = best;
    return 1;
}
