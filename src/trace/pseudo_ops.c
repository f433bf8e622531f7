#include "pseudo_ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../json/json_text.h"
#include "../util/bigmem.h"
#include "../util/hashmap.h"
#include "../util/msort.h"
#include "../util/sbuf.h"
#include "../util/vec.h"
#include "timeline.h"
#include "../util/str.h"

typedef TL_VEC(uint32_t) u32vec;

enum { MAX_NOTES = 20 };

/* The pass's working state. The tree's CSR arrays stay as built for the
 * events that existed before the pass (uid < n0); the children lists it
 * changes live in `lists` (found through `over`), the gpu_events of the
 * events it adds in `gpu_new`. Parent pointers and in_tree are edited in
 * place (grown as events are added). The CSR arrays are rebuilt at the end. */
typedef struct work {
    tl_event_store *es;
    tl_tree *t;
    const tl_pseudo_opts *o;
    size_t n0;
    tl_map over;               /* uid -> index in lists */
    TL_VEC(u32vec) lists;
    TL_VEC(u32vec) gpu_new;    /* by uid - n0 */
    uint32_t cat_cpu_op;       /* cats id of "cpu_op" */
    tl_pseudo_summary *sum;
    tl_sbuf notes;
    size_t n_notes;
    const char *ext;           /* the running extension */
    int failed;
} work;

/* ------------------------------------------------------------ text */

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
/* \w of a str pattern; bytes of multi-byte UTF-8 count as word characters */
static int is_word(unsigned char c) { return c >= 0x80 || c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'); }

/* At p: "(" \d+ ")" ; returns the position after it or NULL. */
static const char *paren_digits(const char *p)
{
    if (*p != '(' || !is_digit(p[1])) return NULL;
    p++;
    while (is_digit(*p)) p++;
    return *p == ')' ? p + 1 : NULL;
}

/* re.search(r"aiter/mla.py\(\d+\): mla_decode_fwd", s) with the
 * registry's prefilter ("mla.py" and "mla_decode_fwd" in the name). */
static int match_mla_decode(const char *s)
{
    if (!strstr(s, "mla.py") || !strstr(s, "mla_decode_fwd")) return 0;
    for (const char *p = strstr(s, "aiter/mla"); p; p = strstr(p + 1, "aiter/mla")) {
        const char *q = p + 9;
        if (!*q || *q == '\n' || strncmp(q + 1, "py", 2)) continue;
        q = paren_digits(q + 3);
        if (q && tl_starts_with(q, ": mla_decode_fwd")) return 1;
    }
    return 0;
}

/* r"\s*WORD\b" matches at q. */
static int spaced_word_at(const char *q, const char *word)
{
    while (is_space(*q)) q++;
    size_t n = strlen(word);
    if (strncmp(q, word, n)) return 0;
    q += n;
    return !*q || !is_word((unsigned char)*q);
}

/* re.search(r":\s*mla_fp8_prefill_attn(\b|$)", s) */
static int match_mla_prefill(const char *s)
{
    for (const char *p = strchr(s, ':'); p; p = strchr(p + 1, ':'))
        if (spaced_word_at(p + 1, "mla_fp8_prefill_attn")) return 1;
    return 0;
}

/* re.search(r"paged_decode\.py\(\d+\):\s*sparse_attn_v4_paged_decode\b", s) */
static int match_v4_decode(const char *s)
{
    for (const char *p = strstr(s, "paged_decode.py"); p; p = strstr(p + 1, "paged_decode.py")) {
        const char *q = paren_digits(p + 15);
        if (q && *q == ':' && spaced_word_at(q + 1, "sparse_attn_v4_paged_decode")) return 1;
    }
    return 0;
}

/* re.match(r"^(sglang_profiler::.+?)_\d+$", s): the length of group 1, or 0. */
static size_t sglang_prefix(const char *s)
{
    static const char pre[] = "sglang_profiler::";
    if (!tl_starts_with(s, pre)) return 0;
    size_t n = strlen(s), i = n;
    while (i > 0 && is_digit(s[i - 1])) i--;
    if (i == n || i == 0 || s[i - 1] != '_') return 0;
    /* the lazy group is everything before the final _digits; it needs one
     * character after the prefix */
    return i - 1 > sizeof pre - 1 ? i - 1 : 0;
}

/* re.search(r"qk_norm_rope_H(\d+)_D(\d+)_RD(\d+)", s): H and D. */
static int parse_qk_norm_rope(const char *s, int64_t *h, int64_t *d)
{
    static const char pre[] = "qk_norm_rope_H";
    for (const char *p = strstr(s, pre); p; p = strstr(p + 1, pre)) {
        const char *q = p + sizeof pre - 1;
        int64_t v[2] = {0, 0};
        int ok = 1;
        for (int k = 0; k < 3 && ok; k++) {
            if (k == 1) ok = tl_starts_with(q, "_D") && (q += 2);
            if (k == 2) ok = tl_starts_with(q, "_RD") && (q += 3);
            if (!ok || !is_digit(*q)) {
                ok = 0;
                break;
            }
            int64_t x = 0;
            for (; is_digit(*q); q++) x = x < INT64_MAX / 10 - 1 ? x * 10 + (*q - '0') : INT64_MAX;
            if (k < 2) v[k] = x;
        }
        if (ok) {
            *h = v[0];
            *d = v[1];
            return 1;
        }
    }
    return 0;
}

/* -------------------------------------------------------- JSON values */

/* The i-th element of the JSON array at p, or NULL (not an array, too short). */
static const char *json_at(const char *p, size_t i)
{
    if (!p) return NULL;
    p = tl_json_ws(p);
    if (*p != '[') return NULL;
    p = tl_json_ws(p + 1);
    if (*p == ']') return NULL;
    for (size_t k = 0;; k++) {
        if (k == i) return p;
        p = tl_json_ws(tl_json_skip(p));
        if (*p != ',') return NULL;
        p = tl_json_ws(p + 1);
    }
}

static size_t json_len(const char *p)
{
    if (!p || *(p = tl_json_ws(p)) != '[') return 0;
    p = tl_json_ws(p + 1);
    if (*p == ']') return 0;
    size_t n = 1;
    for (p = tl_json_ws(tl_json_skip(p)); *p == ','; p = tl_json_ws(tl_json_skip(tl_json_ws(p + 1)))) n++;
    return n;
}

/* Python int() of text: whitespace, a sign, digits (single underscores between). */
static int py_int_text(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    while (i < n && is_space(s[i])) i++;
    while (n > i && is_space(s[n - 1])) n--;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i >= n || !is_digit(s[i])) return 0;
    int64_t v = 0;
    for (; i < n; i++) {
        if (s[i] == '_' && i + 1 < n && is_digit(s[i + 1]) && is_digit(s[i - 1])) continue;
        if (!is_digit(s[i]) || v > (INT64_MAX - 9) / 10) return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

/* Python truthiness of a JSON value, then int() of it; 0 when falsy or when
 * int() would raise. */
static int py_int_value(const char *p, int64_t *out)
{
    if (!p) return 0;
    p = tl_json_ws(p);
    if (*p == '"') {
        size_t len = tl_json_string_span(p + 1);
        if (!len) return 0;
        char *buf = tl_xmalloc(len + 4);
        const char *after;
        size_t m = tl_json_decode_string(p + 1, buf, &after);
        int ok = py_int_text(buf, m, out);
        free(buf);
        return ok;
    }
    if (*p == 't') return *out = 1, 1;
    if (*p == '-' || is_digit(*p)) {
        const char *end = tl_json_skip(p);
        if (memchr(p, '.', (size_t)(end - p)) || memchr(p, 'e', (size_t)(end - p)) ||
            memchr(p, 'E', (size_t)(end - p))) {
            double d = strtod(p, NULL);
            if (d == 0 || d != d || d > 9.2e18 || d < -9.2e18) return 0;
            *out = (int64_t)d; /* int() truncates */
            return 1;
        }
        int64_t v;
        if (!py_int_text(p, (size_t)(end - p), &v) || v == 0) return 0;
        *out = v;
        return 1;
    }
    return 0; /* null, false, lists, objects */
}

/* ------------------------------------------------------- store access */

static const char *raw_text(const tl_event_store *es, uint32_t vid) { return tl_strpool_get(&es->values, vid); }

static const char *arg_json(const tl_event_store *es, uint32_t ev, uint32_t key)
{
    int isint;
    uint32_t vid = tl_es_arg_raw(es, ev, key, &isint);
    return vid == UINT32_MAX ? NULL : raw_text(es, vid);
}

/* -------------------------------------------------------- tree access */

static const uint32_t *children(const work *w, uint32_t u, size_t *n)
{
    uint32_t li = tl_map_get(&w->over, u, 0);
    if (li != UINT32_MAX) {
        *n = w->lists.v[li].n;
        return w->lists.v[li].v;
    }
    if (u < w->n0) return tl_tree_children(w->t, u, n);
    *n = 0;
    return NULL;
}

/* Replaces the children of u by a copy of v[0..n) (v may be u's own list). */
static void set_children(work *w, uint32_t u, const uint32_t *v, size_t n)
{
    uint32_t *copy = tl_xmalloc((n ? n : 1) * sizeof *copy);
    if (n) memcpy(copy, v, n * sizeof *copy);
    uint32_t li = tl_map_get(&w->over, u, 0);
    if (li == UINT32_MAX) {
        li = (uint32_t)w->lists.n;
        u32vec empty = {0};
        TL_PUSH(w->lists, empty);
        tl_map_put(&w->over, u, 0, li);
    }
    u32vec *l = &w->lists.v[li];
    free(l->v);
    l->v = copy;
    l->n = l->cap = n;
}

static const uint32_t *gpu_events(const work *w, uint32_t u, size_t *n)
{
    if (u < w->n0) return tl_tree_gpus(w->t, u, n);
    *n = w->gpu_new.v[u - w->n0].n;
    return w->gpu_new.v[u - w->n0].v;
}

static void set_gpu_events(work *w, uint32_t u, const uint32_t *v, size_t n)
{
    u32vec *g = &w->gpu_new.v[u - w->n0]; /* only added events get new lists */
    uint32_t *copy = tl_xmalloc((n ? n : 1) * sizeof *copy);
    if (n) memcpy(copy, v, n * sizeof *copy);
    free(g->v);
    g->v = copy;
    g->n = g->cap = n;
}

/* --------------------------------------------------------- reporting */

static void note(work *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(work *w, const char *fmt, ...)
{
    if (++w->n_notes > MAX_NOTES) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tl_sb_printf(&w->notes, "%s: %s\n", w->ext ? w->ext : "pseudo ops", buf);
}

/* An error that stops the running extension (the reference's exception). */
static int fail(work *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(work *w, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tl_sb_printf(&w->notes, "%s: failed: %s\n", w->ext, buf);
    w->failed = 1;
    return -1;
}

/* ------------------------------------------------------- new events */

static uint32_t key_id(work *w, const char *k) { return tl_strpool_intern(&w->es->keys, k, strlen(k)); }
static uint32_t value_id(work *w, const char *v) { return tl_strpool_intern(&w->es->values, v, strlen(v)); }

static void blob_reserve(tl_event_store *es, size_t more)
{
    if (es->blob_len + more <= es->blob_cap) return;
    size_t nc = es->blob_cap ? es->blob_cap * 2 : (1 << 16);
    while (nc < es->blob_len + more) nc *= 2;
    es->blob = tl_big_realloc(es->blob, nc);
    es->blob_cap = nc;
}

/* Appends one argument to the args of the last event ev. */
static void put_arg(work *w, uint32_t ev, uint32_t key, int tag, int64_t v)
{
    tl_event_store *es = w->es;
    blob_reserve(es, 32);
    uint8_t *o = es->blob + es->blob_len;
    size_t k = tl_put_varint(o, key);
    o[k++] = (uint8_t)tag;
    k += tl_put_varint(o + k, tag == TL_AV_INT ? tl_zigzag(v) : (uint64_t)v);
    es->blob_len += k;
    tl_es_set_args_end(es, ev + 1, es->blob_len);
    if (key == TL_K_SEQUENCE_NUMBER && tag == TL_AV_INT) {
        TL_GROW(es->seq_pairs, es->cap_seq, es->n_seq + 1);
        es->seq_pairs[es->n_seq].seq = v;
        es->seq_pairs[es->n_seq].uid = ev;
        es->n_seq++;
    }
}

static void put_int(work *w, uint32_t ev, const char *key, int64_t v) { put_arg(w, ev, key_id(w, key), TL_AV_INT, v); }
static void put_json(work *w, uint32_t ev, const char *key, const char *json)
{
    put_arg(w, ev, key_id(w, key), TL_AV_RAW, value_id(w, json));
}
static void put_bool(work *w, uint32_t ev, const char *key, int b) { put_json(w, ev, key, b ? "true" : "false"); }
static void put_str(work *w, uint32_t ev, const char *key, const char *s)
{
    tl_sbuf b;
    tl_sb_init(&b);
    tl_sb_putc(&b, '"');
    tl_sb_puts(&b, s); /* the texts put here need no escaping */
    tl_sb_putc(&b, '"');
    put_json(w, ev, key, b.s);
    tl_sb_free(&b);
}

/* Copies args[key] of the donor (left out when the donor has none: the
 * reference's None, which the report shows as an empty cell). */
static void copy_arg(work *w, uint32_t ev, uint32_t donor, uint32_t key)
{
    int isint;
    uint32_t vid = tl_es_arg_raw(w->es, donor, key, &isint);
    int64_t i;
    if (vid != UINT32_MAX) put_arg(w, ev, key, TL_AV_RAW, vid);
    else if (isint && tl_es_arg_int(w->es, donor, key, &i)) put_arg(w, ev, key, TL_AV_INT, i);
}

/* The donor's Sequence number, else `fallback` (a UID). */
static int64_t seq_or(const work *w, uint32_t donor, uint32_t fallback)
{
    int64_t s;
    return tl_es_arg_int(w->es, donor, TL_K_SEQUENCE_NUMBER, &s) ? s : (int64_t)fallback;
}

/* A new cpu_op (UID = the next free one) with pid/tid of `who` and, when
 * `timed` is an event, its ts/dur; its args start with the donor's shapes. */
static uint32_t new_op(work *w, const char *name, uint32_t who, uint32_t timed, uint32_t donor)
{
    tl_event_store *es = w->es;
    tl_tree *t = w->t;
    size_t i = es->n;
    if (i == es->cap) tl_es_grow(es, es->cap + es->cap / 4 + 64);
    uint8_t tf = timed != TL_NOUID ? es->flags[timed] & (TL_F_TS | TL_F_DUR | TL_F_NEGDUR) : 0;
    es->ts[i] = timed != TL_NOUID ? es->ts[timed] : 0;
    es->dur[i] = timed != TL_NOUID ? es->dur[timed] : 0;
    tl_es_set_corr(es, i, TL_NONE);
    es->name[i] = tl_strpool_intern(&es->names, name, strlen(name));
    es->cat_id[i] = w->cat_cpu_op;
    es->cat[i] = TL_CAT_CPU_OP;
    es->ph[i] = 'X';
    es->flags[i] = (uint8_t)(TL_F_ARGS | tf);
    es->thr[i] = es->thr[who];
    tl_es_set_args_end(es, i + 1, es->blob_len);
    es->n = i + 1;
    t->parent = tl_big_realloc(t->parent, es->n * sizeof *t->parent);
    t->in_tree = tl_big_realloc(t->in_tree, es->n);
    t->parent[i] = TL_NOUID;
    t->in_tree[i] = 1;
    u32vec empty = {0};
    TL_PUSH(w->gpu_new, empty);
    uint32_t ev = (uint32_t)i;
    copy_arg(w, ev, donor, TL_K_INPUT_DIMS);
    copy_arg(w, ev, donor, TL_K_INPUT_TYPE);
    copy_arg(w, ev, donor, TL_K_INPUT_STRIDES);
    copy_arg(w, ev, donor, TL_K_CONCRETE_INPUTS);
    w->sum->n_injected++;
    w->sum->ext[w->sum->n_ext - 1].injected++;
    return ev;
}

/* --------------------------------------------------- the three splices */

/* Extra args of one injection. */
typedef struct extras {
    int has_topk, has_gated;
    int64_t topk;
    int gated;
    const char *flydsl_stage;
    const char *v4_mode;
    int64_t v4_call_index, v4_H_Q, v4_d_h;
    int is_v4, has_v4_geometry;
} extras;

static void put_extras(work *w, uint32_t ev, const extras *x)
{
    if (!x) return;
    if (x->has_gated) put_bool(w, ev, "MoE GEMM gated", x->gated);
    if (x->has_topk) put_int(w, ev, "MoE topk", x->topk);
    if (x->flydsl_stage) put_str(w, ev, "MoE flydsl stage", x->flydsl_stage);
    if (x->is_v4) {
        put_str(w, ev, "v4_mode", x->v4_mode);
        put_int(w, ev, "v4_call_index", x->v4_call_index);
        if (w->o && w->o->v4_model_name) put_str(w, ev, "v4_model_name", w->o->v4_model_name);
        put_int(w, ev, "v4_tp", w->o ? w->o->v4_tp : 1);
        if (x->has_v4_geometry) {
            put_int(w, ev, "v4_H_Q", x->v4_H_Q);
            put_int(w, ev, "v4_d_h", x->v4_d_h);
        }
    }
}

/* inject_pseudo_op: orig -> pseudo -> launch -> kernel in the children
 * lists; the pseudo op has no ts/dur and gpu_events = [kernel]. */
static int inject(work *w, uint32_t kernel, const char *name, int64_t seq, uint32_t donor, const extras *x)
{
    tl_event_store *es = w->es;
    uint32_t launch = w->t->parent[kernel];
    uint32_t orig = launch == TL_NOUID ? TL_NOUID : w->t->parent[launch];
    if (orig == TL_NOUID)
        return fail(w, "%s: the launch of kernel UID %u has no parent op", name, (unsigned)kernel);
    if (tl_es_corr(es, kernel) == TL_NONE)
        return fail(w, "%s: kernel UID %u has no correlation id", name, (unsigned)kernel);
    size_t nc;
    const uint32_t *ch = children(w, orig, &nc);
    size_t at = nc;
    for (size_t k = 0; k < nc && at == nc; k++)
        if (ch[k] == launch) at = k;
    if (at == nc) /* list.remove raises */
        return fail(w, "%s: launch UID %u is no longer a child of UID %u", name, (unsigned)launch, (unsigned)orig);
    uint32_t p = new_op(w, name, orig, TL_NOUID, donor);
    put_int(w, p, "Sequence number", seq);
    put_int(w, p, "External id", tl_es_corr(es, kernel));
    put_bool(w, p, "Pseudo op", 1);
    put_extras(w, p, x);
    w->t->parent[p] = orig;
    set_children(w, p, &launch, 1);
    set_gpu_events(w, p, &kernel, 1);
    /* orig's children: the launch removed, the pseudo op appended */
    ch = children(w, orig, &nc);
    uint32_t *nv = tl_xmalloc((nc + 1) * sizeof *nv);
    size_t m = 0;
    for (size_t k = 0; k < nc; k++)
        if (k != at) nv[m++] = ch[k];
    nv[m++] = p;
    set_children(w, orig, nv, m);
    free(nv);
    return 0;
}

/* inject_pseudo_op_wrap_children: parent -> pseudo -> [all its children];
 * ts/dur/pid/tid of the parent, gpu_events a copy of the parent's. */
static void wrap_children(work *w, uint32_t parent, const char *name, uint32_t donor, const extras *x)
{
    size_t nc;
    const uint32_t *ch = children(w, parent, &nc);
    if (!nc) return;
    uint32_t p = new_op(w, name, parent, parent, donor);
    put_int(w, p, "Sequence number", seq_or(w, donor, parent));
    put_bool(w, p, "Pseudo op", 1);
    put_extras(w, p, x);
    ch = children(w, parent, &nc);
    set_children(w, p, ch, nc);
    size_t ng;
    const uint32_t *g = gpu_events(w, parent, &ng);
    set_gpu_events(w, p, g, ng);
    ch = children(w, p, &nc);
    for (size_t k = 0; k < nc; k++) w->t->parent[ch[k]] = p;
    set_children(w, parent, &p, 1);
    w->t->parent[p] = parent;
}

/* inject_pseudo_op_above_event: parent -> pseudo -> target, in the
 * target's place among the parent's children; ts/dur/pid/tid of the target. */
static int above_event(work *w, uint32_t target, const char *name, uint32_t donor, int64_t seq, const extras *x)
{
    uint32_t parent = w->t->parent[target];
    if (parent == TL_NOUID) {
        note(w, "%s: UID %u has no parent; not injected", name, (unsigned)target);
        return 0;
    }
    size_t nc;
    const uint32_t *ch = children(w, parent, &nc);
    size_t at = nc;
    for (size_t k = 0; k < nc && at == nc; k++)
        if (ch[k] == target) at = k;
    if (at == nc) /* list.index raises */
        return fail(w, "%s: UID %u is not among its parent's children", name, (unsigned)target);
    uint32_t p = new_op(w, name, target, target, donor);
    put_int(w, p, "Sequence number", seq);
    put_bool(w, p, "Pseudo op", 1);
    put_extras(w, p, x);
    set_children(w, p, &target, 1);
    size_t ng;
    const uint32_t *g = gpu_events(w, target, &ng);
    set_gpu_events(w, p, g, ng);
    ch = children(w, parent, &nc);
    uint32_t *nv = tl_xmalloc(nc * sizeof *nv);
    memcpy(nv, ch, nc * sizeof *nv);
    nv[at] = p;
    set_children(w, parent, nv, nc);
    free(nv);
    w->t->parent[p] = parent;
    w->t->parent[target] = p;
    return 0;
}

/* ------------------------------------------------------------ lookups */

/* The events (that existed before the pass: the reference's name index
 * does not list pseudo ops) named exactly `name`, in UID order. */
static void events_named(const work *w, const char *name, u32vec *out)
{
    out->n = 0;
    uint32_t id = tl_strpool_find(&w->es->names, name, strlen(name));
    if (id == UINT32_MAX) return;
    for (size_t u = 0; u < w->n0; u++)
        if (w->es->name[u] == id) TL_PUSH(*out, (uint32_t)u);
}

static int present(const work *w, const char *name)
{
    uint32_t id = tl_strpool_find(&w->es->names, name, strlen(name));
    if (id == UINT32_MAX) return 0;
    for (size_t u = 0; u < w->n0; u++)
        if (w->es->name[u] == id) return 1;
    return 0;
}

/* Is there a `kernel` event whose name contains needle (ci: case-insensitive)? */
static int any_kernel_contains(const work *w, const char *needle, int ci)
{
    const tl_event_store *es = w->es;
    uint8_t *memo = tl_xcalloc(es->names.n + 1, 1); /* 1 no, 2 yes */
    int found = 0;
    for (size_t u = 0; u < w->n0 && !found; u++) {
        if (es->cat[u] != TL_CAT_KERNEL) continue;
        uint32_t id = es->name[u];
        if (!memo[id]) {
            const char *nm = tl_strpool_get(&es->names, id);
            memo[id] = (ci ? tl_contains_ci(nm, needle) : strstr(nm, needle) != NULL) ? 2 : 1;
        }
        found = memo[id] == 2;
    }
    free(memo);
    return found;
}

typedef struct by_first {
    const uint32_t *first; /* per names id: first UID with that name */
    const uint32_t *name;
    const uint32_t *ev;
} by_first;

static int cmp_by_first(void *ctx, size_t a, size_t b)
{
    const by_first *c = ctx;
    uint32_t x = c->first[c->name[c->ev[a]]], y = c->first[c->name[c->ev[b]]];
    return (x > y) - (x < y);
}

/* The events of category `cat` whose name matches, in the reference's name
 * index order: names by first appearance, then UIDs. */
static void events_matching(const work *w, int (*match)(const char *), uint8_t cat, u32vec *out)
{
    const tl_event_store *es = w->es;
    out->n = 0;
    size_t nn = es->names.n;
    uint8_t *memo = tl_xcalloc(nn + 1, 1);
    uint32_t *first = tl_xmalloc((nn + 1) * sizeof *first);
    memset(first, 0xff, (nn + 1) * sizeof *first);
    for (size_t u = 0; u < w->n0; u++) {
        uint32_t id = es->name[u];
        if (first[id] == UINT32_MAX) first[id] = (uint32_t)u;
        if (es->cat[u] != cat) continue;
        if (!memo[id]) memo[id] = match(tl_strpool_get(&es->names, id)) ? 2 : 1;
        if (memo[id] == 2) TL_PUSH(*out, (uint32_t)u);
    }
    if (out->n > 1) {
        size_t *idx = tl_xmalloc(out->n * sizeof *idx);
        for (size_t i = 0; i < out->n; i++) idx[i] = i;
        by_first c = {first, es->name, out->v};
        tl_msort(idx, out->n, cmp_by_first, &c);
        uint32_t *v = tl_xmalloc(out->n * sizeof *v);
        for (size_t i = 0; i < out->n; i++) v[i] = out->v[idx[i]];
        memcpy(out->v, v, out->n * sizeof *v);
        free(v);
        free(idx);
    }
    free(memo);
    free(first);
}

static int any_name_matches(const work *w, int (*match)(const char *))
{
    const tl_event_store *es = w->es;
    uint8_t *memo = tl_xcalloc(es->names.n + 1, 1);
    int found = 0;
    for (size_t u = 0; u < w->n0 && !found; u++) {
        uint32_t id = es->name[u];
        if (!memo[id]) memo[id] = match(tl_strpool_get(&es->names, id)) ? 2 : 1;
        found = memo[id] == 2;
    }
    free(memo);
    return found;
}

/* The nearest ancestor named `name` (parent walk), or TL_NOUID. */
static uint32_t ancestor_named(const work *w, uint32_t u, const char *name)
{
    uint32_t id = tl_strpool_find(&w->es->names, name, strlen(name));
    if (id == UINT32_MAX) return TL_NOUID;
    for (uint32_t p = w->t->parent[u]; p != TL_NOUID; p = w->t->parent[p])
        if (w->es->name[p] == id) return p;
    return TL_NOUID;
}

/* Sorts UIDs by ts, stably. */
static void sort_uids_by_ts(const work *w, uint32_t *v, size_t n)
{
    if (n < 2) return;
    size_t *idx = tl_xmalloc(n * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = v[i];
    tl_msort(idx, n, tl_idx_cmp_i64, w->es->ts);
    for (size_t i = 0; i < n; i++) v[i] = (uint32_t)idx[i];
    free(idx);
}

/* The kernels among op's GPU events whose name contains needle (case-blind
 * when ci), in ts order, into out (emptied first). Notes why and returns 0
 * when op has no GPU events or no such kernel. */
static size_t op_kernels(work *w, uint32_t op, const char *needle, int ci, u32vec *out)
{
    const tl_event_store *es = w->es;
    size_t ng;
    const uint32_t *g = gpu_events(w, op, &ng);
    out->n = 0;
    if (!ng) {
        note(w, "no GPU events for %s UID %u", tl_es_name(es, op), (unsigned)op);
        return 0;
    }
    for (size_t k = 0; k < ng; k++) {
        const char *nm = tl_es_name(es, g[k]);
        if (es->cat[g[k]] == TL_CAT_KERNEL && (ci ? tl_contains_ci(nm, needle) : strstr(nm, needle) != NULL))
            TL_PUSH(*out, g[k]);
    }
    if (!out->n) note(w, "no %s kernels for %s UID %u", needle, tl_es_name(es, op), (unsigned)op);
    sort_uids_by_ts(w, out->v, out->n);
    return out->n;
}

/* ------------------------------------------------------- the extensions */

/* MoE_Fused: one aiter fused-MoE kernel per vllm::rocm_aiter_fused_moe. */
static int has_cpu_op_below(const work *w, uint32_t u, int depth)
{
    size_t nc;
    const uint32_t *ch = children(w, u, &nc);
    for (size_t k = 0; k < nc; k++) {
        if (w->es->cat[ch[k]] == TL_CAT_CPU_OP) return 1;
        if (depth < 64 && has_cpu_op_below(w, ch[k], depth + 1)) return 1;
    }
    return 0;
}

static int ext_moe_fused(work *w)
{
    const tl_event_store *es = w->es;
    u32vec ops = {0};
    events_named(w, "vllm::rocm_aiter_fused_moe", &ops);
    int rc = 0;
    for (size_t i = 0; i < ops.n && !rc; i++) {
        uint32_t op = ops.v[i];
        size_t ng;
        const uint32_t *g = gpu_events(w, op, &ng);
        if (!ng) {
            note(w, "no GPU events for UID %u", (unsigned)op);
            continue;
        }
        if (has_cpu_op_below(w, op, 0)) {
            note(w, "UID %u has cpu_op descendants; not injected", (unsigned)op);
            continue;
        }
        uint32_t kernel = TL_NOUID;
        size_t nk = 0;
        for (size_t k = 0; k < ng; k++) {
            const char *nm = tl_es_name(es, g[k]);
            if (es->cat[g[k]] == TL_CAT_KERNEL && strstr(nm, "aiter::") && strstr(nm, "fmoe") &&
                !strstr(nm, "MoeSorting") && !tl_contains_ci(nm, "quant")) {
                kernel = g[k];
                nk++;
            }
        }
        if (nk != 1) {
            note(w, "expected 1 MoE kernel, found %zu for UID %u", nk, (unsigned)op);
            continue;
        }
        rc = inject(w, kernel, "pseudo_op::moe_aiter_fused_1stage", seq_or(w, op, op), op, NULL);
    }
    free(ops.v);
    return rc;
}

/* topk of a vllm::moe_forward: Concrete Inputs[1] of the first `TopK` op
 * found below it (depth-first, GPU events skipped, at most 10 levels). */
static int topk_search(const work *w, uint32_t u, int depth, int64_t *out)
{
    if (depth > 10) return 0;
    if (strstr(tl_es_name(w->es, u), "TopK")) {
        const char *ci = arg_json(w->es, u, TL_K_CONCRETE_INPUTS);
        if (json_len(ci) > 1 && py_int_value(json_at(ci, 1), out)) return 1;
    }
    size_t nc;
    const uint32_t *ch = children(w, u, &nc);
    for (size_t k = 0; k < nc; k++) {
        if (tl_is_gpu_cat(w->es->cat[ch[k]])) continue;
        if (topk_search(w, ch[k], depth + 1, out)) return 1;
    }
    return 0;
}

/* MoE_Unfused_Triton: per vllm::moe_forward, its matmul_ogs kernels by ts:
 * the first is the up projection, the others down. */
static int ext_moe_unfused_triton(work *w)
{
    const tl_event_store *es = w->es;
    u32vec ops = {0}, mm = {0};
    events_named(w, "vllm::moe_forward", &ops);
    int rc = 0;
    for (size_t i = 0; i < ops.n && !rc; i++) {
        uint32_t op = ops.v[i];
        if (!op_kernels(w, op, "matmul_ogs", 1, &mm)) continue;
        size_t ng;
        const uint32_t *g = gpu_events(w, op, &ng);
        uint32_t scatter = TL_NOUID;
        size_t n_scatter = 0;
        for (size_t k = 0; k < ng; k++)
            if (tl_contains_ci(tl_es_name(es, g[k]), "matmul_scatter")) scatter = g[k], n_scatter++;
        extras x = {0};
        x.has_topk = x.has_gated = 1;
        x.topk = 4;
        size_t nc;
        const uint32_t *ch = children(w, op, &nc);
        int found = 0;
        for (size_t k = 0; k < nc && !found; k++) found = topk_search(w, ch[k], 0, &x.topk);
        if (!found) note(w, "no TopK op below vllm::moe_forward UID %u: topk 4", (unsigned)op);
        int64_t seq = seq_or(w, op, op);
        for (size_t k = 0; k < mm.n && !rc; k++) {
            const char *kn = tl_es_name(es, mm.v[k]);
            x.gated = tl_contains_ci(kn, "_swiglu") || tl_contains_ci(kn, "_glu");
            rc = inject(w, mm.v[k], k == 0 ? "pseudo_op::moe_triton_unfused_up" : "pseudo_op::moe_triton_unfused_down",
                        seq, op, &x);
        }
        if (rc) break;
        /* the finalize (scatter) kernel: not in spec §3.10, but the shipped
         * vLLM reference has these rows (category other, no perf model) */
        if (n_scatter > 1) note(w, "several matmul_scatter kernels for UID %u; none injected", (unsigned)op);
        else if (n_scatter == 1)
            rc = inject(w, scatter, "pseudo_op::moe_triton_unfused_finalize_matmul_scatter", seq, op, NULL);
    }
    free(mm.v);
    free(ops.v);
    return rc;
}

/* MoE_GPTQ_AWQ: the two fused_moe_kernel_gptq_awq kernels of each
 * vllm::outplace_fused_experts, by ts: up (gated) then down. */
static int ext_moe_gptq_awq(work *w)
{
    const tl_event_store *es = w->es;
    u32vec ops = {0}, kk = {0};
    events_named(w, "vllm::outplace_fused_experts", &ops);
    int rc = 0;
    for (size_t i = 0; i < ops.n && !rc; i++) {
        uint32_t op = ops.v[i];
        if (!op_kernels(w, op, "fused_moe_kernel_gptq_awq", 0, &kk)) continue;
        if (kk.n != 2) note(w, "expected 2 fused_moe_kernel_gptq_awq kernels, found %zu for UID %u", kk.n, (unsigned)op);
        extras x = {0};
        x.has_topk = x.has_gated = 1;
        /* topk = Input Dims[4][1] (topk_ids [T, topk]), default 8 */
        const char *dims = arg_json(es, op, TL_K_INPUT_DIMS);
        const char *ids = json_at(dims, 4);
        if (!(json_len(ids) >= 2 && py_int_value(json_at(ids, 1), &x.topk))) {
            x.topk = 8;
            note(w, "no topk in the Input Dims of UID %u: topk 8", (unsigned)op);
        }
        int64_t seq = seq_or(w, op, op);
        for (size_t k = 0; k < kk.n && !rc; k++) {
            x.gated = k == 0;
            rc = inject(w, kk.v[k], k == 0 ? "pseudo_op::moe_gptq_awq_up" : "pseudo_op::moe_gptq_awq_down", seq, op, &x);
        }
    }
    free(kk.v);
    free(ops.v);
    return rc;
}

static int match_flydsl_stage1(const char *s) { return tl_ends_with(s, ": flydsl_moe_stage1"); }
static int match_flydsl_stage2(const char *s) { return tl_ends_with(s, ": flydsl_moe_stage2"); }

/* MoE_Flydsl: a pseudo op above each flydsl stage frame that runs under an
 * aiter::fused_moe_ op (the shape donor). */
static int ext_moe_flydsl(work *w)
{
    static const struct {
        const char *pseudo, *marker;
        int (*match)(const char *);
    } stages[] = {
        {"pseudo_op::moe_flydsl_stage1", "flydsl_moe_stage1", match_flydsl_stage1},
        {"pseudo_op::moe_flydsl_stage2", "flydsl_moe_stage2", match_flydsl_stage2},
    };
    u32vec evs = {0};
    int rc = 0;
    for (size_t s = 0; s < 2 && !rc; s++) {
        events_matching(w, stages[s].match, TL_CAT_PYTHON_FUNCTION, &evs);
        for (size_t i = 0; i < evs.n && !rc; i++) {
            uint32_t st = evs.v[i];
            uint32_t moe = ancestor_named(w, st, "aiter::fused_moe_");
            if (moe == TL_NOUID) continue;
            extras x = {0};
            x.flydsl_stage = stages[s].marker;
            rc = above_event(w, st, stages[s].pseudo, moe, seq_or(w, moe, moe), &x);
        }
    }
    free(evs.v);
    return rc;
}

/* MLA_Decode / MLA_Prefill: wrap the children of each matching python
 * frame, with the shapes of the earliest (by ts; ties: UID order) op named
 * donor_name below it. The donors are indexed once, walking up from each
 * (wrapping a frame keeps every op below it below it). */
static int ext_mla(work *w, int (*match)(const char *), const char *donor_name, const char *pseudo)
{
    u32vec evs = {0}, cand = {0};
    events_matching(w, match, TL_CAT_PYTHON_FUNCTION, &evs);
    if (!evs.n) note(w, "no python_function matches");
    events_named(w, donor_name, &cand);
    tl_map slot; /* frame uid -> index in evs */
    tl_map_init(&slot, evs.n + 1);
    for (size_t i = 0; i < evs.n; i++) tl_map_put(&slot, evs.v[i], 0, (uint32_t)i);
    uint32_t *donor = tl_xmalloc((evs.n + 1) * sizeof *donor);
    memset(donor, 0xff, (evs.n + 1) * sizeof *donor);
    for (size_t c = 0; c < cand.n; c++)
        for (uint32_t p = w->t->parent[cand.v[c]]; p != TL_NOUID; p = w->t->parent[p]) {
            uint32_t i = tl_map_get(&slot, p, 0);
            if (i != UINT32_MAX && (donor[i] == TL_NOUID || w->es->ts[cand.v[c]] < w->es->ts[donor[i]]))
                donor[i] = cand.v[c];
        }
    for (size_t i = 0; i < evs.n; i++) {
        uint32_t py = evs.v[i];
        if (donor[i] == TL_NOUID) {
            note(w, "no %s below UID %u", donor_name, (unsigned)py);
            continue;
        }
        size_t ng;
        gpu_events(w, py, &ng);
        if (!ng) {
            note(w, "no GPU events for UID %u", (unsigned)py);
            continue;
        }
        wrap_children(w, py, pseudo, donor[i], NULL);
    }
    free(donor);
    tl_map_free(&slot);
    free(cand.v);
    free(evs.v);
    return 0;
}

static int cmp_idval(const tl_event_store *es, uint32_t a, uint32_t b)
{
    const tl_idval *x = &es->idvals[a], *y = &es->idvals[b];
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->kind == 1 || x->kind == 3) return strcmp(tl_strpool_get(&es->names, (uint32_t)x->i), tl_strpool_get(&es->names, (uint32_t)y->i));
    return (x->i > y->i) - (x->i < y->i);
}

static int by_pid_tid_ts(void *ctx, size_t a, size_t b)
{
    const tl_event_store *es = ctx;
    int c = cmp_idval(es, tl_es_pid(es, a), tl_es_pid(es, b));
    if (!c) c = cmp_idval(es, tl_es_tid(es, a), tl_es_tid(es, b));
    if (!c) c = (es->ts[a] > es->ts[b]) - (es->ts[a] < es->ts[b]);
    return c;
}

/* V4_Paged_Decode: wrap the children of each sparse_attn_v4_paged_decode
 * frame in pseudo_v4_paged_decode_{mode}, shapes from the enclosing
 * aiter::v4_attention_with_output. */
static int ext_v4_paged_decode(work *w)
{
    const tl_event_store *es = w->es;
    u32vec evs = {0};
    events_matching(w, match_v4_decode, TL_CAT_PYTHON_FUNCTION, &evs);
    if (!evs.n) note(w, "no python_function matches");
    /* program order: (pid, tid, ts) */
    size_t *idx = tl_xmalloc((evs.n ? evs.n : 1) * sizeof *idx);
    for (size_t i = 0; i < evs.n; i++) idx[i] = evs.v[i];
    tl_msort(idx, evs.n, by_pid_tid_ts, (void *)es);
    for (size_t i = 0; i < evs.n; i++) {
        uint32_t py = (uint32_t)idx[i];
        uint32_t attn = ancestor_named(w, py, "aiter::v4_attention_with_output");
        if (attn == TL_NOUID) {
            note(w, "no aiter::v4_attention_with_output above UID %u", (unsigned)py);
            continue;
        }
        size_t ng;
        gpu_events(w, py, &ng);
        if (!ng) {
            note(w, "no GPU events for UID %u", (unsigned)py);
            continue;
        }
        const uint32_t *g = gpu_events(w, attn, &ng);
        int hca = 0, csa = 0, geo = 0;
        extras x = {0};
        x.is_v4 = 1;
        x.v4_call_index = (int64_t)i;
        for (size_t k = 0; k < ng; k++) {
            const char *nm = tl_es_name(es, g[k]);
            if (tl_starts_with(nm, "hca_compress_forward") || tl_starts_with(nm, "hca_norm_rope_scatter") || tl_starts_with(nm, "hca_"))
                hca = 1;
            if (tl_starts_with(nm, "fused_compress_attn") || tl_starts_with(nm, "_update_compressor_states_kernel")) csa = 1;
            if (!geo) geo = parse_qk_norm_rope(nm, &x.v4_H_Q, &x.v4_d_h);
        }
        x.v4_mode = hca ? "hca" : csa ? "csa" : "swa";
        x.has_v4_geometry = geo;
        char name[64];
        snprintf(name, sizeof name, "pseudo_v4_paged_decode_%s", x.v4_mode);
        wrap_children(w, py, name, attn, &x);
    }
    free(idx);
    free(evs.v);
    return 0;
}

static int ext_mla_decode(work *w)
{
    return ext_mla(w, match_mla_decode, "aiter::mla_decode_stage1_asm_fwd", "pseudo_mla_decode_fwd");
}
static int ext_mla_prefill(work *w)
{
    return ext_mla(w, match_mla_prefill, "aiter::mla_prefill_ps_asm_fwd", "pseudo_mla_prefill_fwd");
}

/* ------------------------------------------------ sglang_profiler names */

typedef struct first_ctx {
    const uint32_t *first;
    const uint32_t *ids;
} first_ctx;

static int cmp_first(void *ctx, size_t a, size_t b)
{
    const first_ctx *c = ctx;
    uint32_t x = c->first[c->ids[a]], y = c->first[c->ids[b]];
    return (x > y) - (x < y);
}

static void normalize_sglang(work *w)
{
    tl_event_store *es = w->es;
    size_t nn = es->names.n;
    uint32_t *first = tl_xmalloc((nn + 1) * sizeof *first);
    memset(first, 0xff, (nn + 1) * sizeof *first);
    for (size_t u = 0; u < w->n0; u++)
        if (first[es->name[u]] == UINT32_MAX) first[es->name[u]] = (uint32_t)u;
    u32vec cand = {0};
    for (uint32_t id = 0; id < nn; id++)
        if (first[id] != UINT32_MAX && sglang_prefix(tl_strpool_get(&es->names, id))) TL_PUSH(cand, id);
    if (!cand.n) {
        free(first);
        return;
    }
    /* in the name index's order (first appearance) */
    size_t *idx = tl_xmalloc(cand.n * sizeof *idx);
    for (size_t i = 0; i < cand.n; i++) idx[i] = i;
    first_ctx fc = {first, cand.v};
    tl_msort(idx, cand.n, cmp_first, &fc);
    /* to[id]: the name the events of id were merged into (chains resolve
     * later merges of the merged-into name) */
    size_t cap = nn + cand.n + 1;
    uint32_t *to = tl_xmalloc(cap * sizeof *to);
    for (size_t i = 0; i < cap; i++) to[i] = (uint32_t)i;
    for (size_t i = 0; i < cand.n; i++) {
        uint32_t old = cand.v[idx[i]];
        if (es->cat[first[old]] != TL_CAT_CPU_OP) continue;
        /* a copy: interning may move the arena the name lives in */
        char *s = tl_xstrdup(tl_strpool_get(&es->names, old));
        to[old] = tl_strpool_intern(&es->names, s, sglang_prefix(s));
        free(s);
    }
    for (size_t u = 0; u < w->n0; u++) {
        uint32_t id = es->name[u], r = id;
        while (to[r] != r) r = to[r];
        if (r != id) {
            es->name[u] = r;
            w->sum->n_renamed++;
        }
    }
    free(to);
    free(idx);
    free(cand.v);
    free(first);
}

/* ---------------------------------------------------------- the pass */

/* The children and gpu_events CSR arrays over all events, from the lists
 * (names added, pseudo ops and sglang prefixes, get their comm flag). */
typedef struct relist {
    work *w;
    uint8_t *changed; /* per event: its children list is in w->lists (no map probe for the others) */
} relist;

static size_t list_of(void *ctx, uint32_t u, int which, uint32_t *out)
{
    relist *r = ctx;
    size_t n;
    const uint32_t *v;
    if (which) v = gpu_events(r->w, u, &n);
    else if (r->changed[u] || u >= r->w->n0) v = children(r->w, u, &n);
    else v = tl_tree_children(r->w->t, u, &n);
    if (out && n) memcpy(out, v, n * sizeof *out);
    return n;
}

static void rebuild_csr(work *w)
{
    relist r = {w, tl_xcalloc(w->es->n + 1, 1)};
    for (size_t s = 0; s < w->over.cap; s++)
        if (w->over.slot[s].val != UINT32_MAX) r.changed[w->over.slot[s].k1] = 1;
    tl_tree_relist(w->t, w->es, list_of, &r);
    free(r.changed);
}

typedef int (*ext_fn)(work *);

void tl_pseudo_ops_apply(tl_event_store *es, tl_tree *tree, const tl_pseudo_opts *o, tl_pseudo_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    work w = {0};
    w.es = es;
    w.t = tree;
    w.o = o;
    w.n0 = es->n;
    w.sum = sum;
    tl_map_init(&w.over, 64);
    tl_sb_init(&w.notes);
    w.cat_cpu_op = tl_strpool_intern(&es->cats, "cpu_op", 6);

    normalize_sglang(&w);

    /* detection first (the reference builds its list, then applies it) */
    struct {
        const char *name;
        ext_fn fn;
    } run[TL_PSEUDO_MAX_EXT];
    size_t nrun = 0;
#define ADD(n, f) (run[nrun].name = (n), run[nrun].fn = (f), nrun++)
    if (present(&w, "vllm::moe_forward")) {
        if (present(&w, "vllm::rocm_aiter_fused_moe")) ADD("MoE_Fused", ext_moe_fused);
        else if (any_kernel_contains(&w, "matmul_ogs", 1)) ADD("MoE_Unfused_Triton", ext_moe_unfused_triton);
    }
    if (present(&w, "vllm::outplace_fused_experts") && any_kernel_contains(&w, "fused_moe_kernel_gptq_awq", 0))
        ADD("MoE_GPTQ_AWQ", ext_moe_gptq_awq);
    if (present(&w, "aiter::fused_moe_")) ADD("MoE_Flydsl", ext_moe_flydsl);
    if (present(&w, "aiter::mla_decode_stage1_asm_fwd") && any_name_matches(&w, match_mla_decode))
        ADD("MLA_Decode", ext_mla_decode);
    if (present(&w, "aiter::mla_prefill_ps_asm_fwd") && any_name_matches(&w, match_mla_prefill))
        ADD("MLA_Prefill", ext_mla_prefill);
    if (any_name_matches(&w, match_v4_decode)) ADD("V4_Paged_Decode", ext_v4_paged_decode);
    /* _rocm_C::paged_attention / aiter::paged_attention_v1: skipped [FIX] */
#undef ADD

    for (size_t i = 0; i < nrun; i++) {
        sum->ext[sum->n_ext].name = run[i].name;
        sum->n_ext++;
        w.ext = run[i].name;
        w.failed = 0;
        run[i].fn(&w);
        sum->ext[sum->n_ext - 1].failed = w.failed;
    }
    if (w.n_notes > MAX_NOTES) tl_sb_printf(&w.notes, "pseudo ops: %zu more notes not shown\n", w.n_notes - MAX_NOTES);

    if (es->n > w.n0 || sum->n_renamed) rebuild_csr(&w);
    for (size_t i = 0; i < w.lists.n; i++) free(w.lists.v[i].v);
    free(w.lists.v);
    for (size_t i = 0; i < w.gpu_new.n; i++) free(w.gpu_new.v[i].v);
    free(w.gpu_new.v);
    tl_map_free(&w.over);
    sum->warnings = w.notes.len ? tl_sb_take(&w.notes) : NULL;
    tl_sb_free(&w.notes);
}

void tl_pseudo_summary_free(tl_pseudo_summary *s)
{
    free(s->warnings);
    memset(s, 0, sizeof *s);
}
