#include "perf_eval.h"

#include <stdlib.h>
#include <string.h>

#include "../perf/categorize.h"
#include "../perf/perf_util.h"
#include "../util/msort.h"
#include "../util/sbuf.h"
#include "../util/vec.h"
#include "extension.h"

static int by_seq_uid(const void *a, const void *b)
{
    const tl_seq_uid *x = a, *y = b;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return (x->uid > y->uid) - (x->uid < y->uid);
}

void tl_perf_eval_init(tl_perf_eval *pe, const tl_trace *t, const tl_arch *arch)
{
    memset(pe, 0, sizeof *pe);
    pe->t = t;
    pe->arch = arch;
    tl_map_init(&pe->cache, 1024);
    tl_strpool_init(&pe->strings);
    tl_annotations_init(&pe->ann, t);
    const tl_event_store *es = &t->es;
    pe->volatile_key = tl_xcalloc(es->keys.n + 1, 1);
    static const char *const vol[] = {"External id", "Record function id", "Ev Idx", "Sequence number",
                                      "Fwd thread id", NULL};
    for (int i = 0; vol[i]; i++) {
        uint32_t k = tl_strpool_find(&es->keys, vol[i], strlen(vol[i]));
        if (k != UINT32_MAX) pe->volatile_key[k] = 1;
    }
    pe->cls_of_name = tl_xcalloc(es->names.n + 1, sizeof *pe->cls_of_name);
    pe->cls_known = tl_xcalloc(es->names.n + 1, 1);
    pe->n_seq = es->n_seq;
    pe->seq_index = tl_xmalloc((es->n_seq + 1) * sizeof *pe->seq_index);
    for (size_t i = 0; i < es->n_seq; i++) pe->seq_index[i] = (tl_seq_uid){es->seq_pairs[i].seq, es->seq_pairs[i].uid};
    qsort(pe->seq_index, pe->n_seq, sizeof *pe->seq_index, by_seq_uid);
}

void tl_perf_eval_free(tl_perf_eval *pe)
{
    for (size_t i = 0; i < pe->n; i++) {
        free(pe->entries[i].param_keys);
        free(pe->entries[i].param_str);
        free(pe->entries[i].perf_params);
    }
    free(pe->entries);
    free(pe->volatile_key);
    free(pe->cls_of_name);
    free(pe->cls_known);
    free(pe->seq_index);
    tl_map_free(&pe->cache);
    tl_strpool_free(&pe->strings);
    tl_annotations_free(&pe->ann);
    memset(pe, 0, sizeof *pe);
}

const tl_perf_class *tl_perf_class_of(tl_perf_eval *pe, uint32_t ev)
{
    uint32_t id = pe->t->es.name[ev];
    if (!pe->cls_known[id]) {
        const char *name = tl_strpool_get(&pe->t->es.names, id);
        const tl_perf_class *c = tl_extension_model(pe->ext, name);
        if (!c) c = tl_perf_lookup(name);
        pe->cls_of_name[id] = c && c->fn ? c : NULL;
        pe->cls_known[id] = 1;
    }
    return pe->cls_of_name[id];
}

uint32_t tl_perf_seq_forward(const tl_perf_eval *pe, uint32_t ev)
{
    static const char suffix[] = "Backward";
    const size_t ns = sizeof suffix - 1;
    const tl_event_store *es = &pe->t->es;
    const char *name = tl_es_name(es, ev);
    size_t n = strlen(name);
    int64_t seq, s;
    if (n < ns || strcmp(name + n - ns, suffix) || !tl_es_arg_int(es, ev, TL_K_SEQUENCE_NUMBER, &seq)) return TL_NOUID;
    uint32_t want = tl_strpool_find(&es->names, name, n - ns);
    if (want == UINT32_MAX) return TL_NOUID;
    size_t lo = 0, hi = pe->n_seq; /* the first entry not below (seq, ev) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const tl_seq_uid *m = &pe->seq_index[mid];
        if (m->seq < seq || (m->seq == seq && m->uid < ev)) lo = mid + 1;
        else hi = mid;
    }
    while (lo-- > 0 && pe->seq_index[lo].seq == seq) { /* latest first */
        uint32_t u = pe->seq_index[lo].uid;
        if (es->name[u] == want && tl_es_arg_int(es, u, TL_K_SEQUENCE_NUMBER, &s) && s == seq) return u;
    }
    return TL_NOUID;
}

/* ------------------------------------------------------------ kernels */

static int by_ts_then_uid(void *ctx, size_t a, size_t b)
{
    const int64_t *ts = ctx;
    if (ts[a] != ts[b]) return ts[a] < ts[b] ? -1 : 1;
    return (a > b) - (a < b);
}

size_t tl_perf_kernels(const tl_trace *t, const uint32_t *ops, size_t nops, uint32_t **out)
{
    const tl_tree *tr = &t->tree;
    size_t total = 0;
    for (size_t i = 0; i < nops; i++) total += tl_csr_len(&tr->gpus, ops[i]);
    size_t *idx = tl_xmalloc((total + 1) * sizeof *idx);
    size_t n = 0;
    for (size_t i = 0; i < nops; i++) {
        tl_span gs = tl_tree_gpu_span(tr, ops[i]);
        for (uint32_t k = gs.b; k < gs.e; k++) idx[n++] = tr->gpus.v[k];
    }
    tl_msort(idx, n, by_ts_then_uid, (void *)t->es.ts);
    uint32_t *o = tl_xmalloc((n + 1) * sizeof *o);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int dup = 0;
        /* duplicates sit next to each other (same ts, same uid) */
        if (m && o[m - 1] == idx[i]) dup = 1;
        if (!dup) o[m++] = (uint32_t)idx[i];
    }
    free(idx);
    *out = o;
    return m;
}

size_t tl_perf_bwd_ops(const tl_trace *t, uint32_t ev, uint32_t **out)
{
    const tl_tree *tr = &t->tree;
    TL_VEC(uint32_t) res = {0}, stack = {0};
    TL_PUSH(stack, ev);
    while (stack.n) {
        uint32_t u = stack.v[--stack.n];
        uint32_t b = tl_tree_bwd_of(tr, u);
        if (b != TL_NOUID) {
            int seen = 0;
            for (size_t i = 0; i < res.n && !seen; i++) seen = res.v[i] == b;
            if (!seen) TL_PUSH(res, b);
        }
        tl_span ch = tl_tree_child_span(tr, u);
        for (uint32_t k = ch.b; k < ch.e; k++) TL_PUSH(stack, tr->children.v[k]);
    }
    free(stack.v);
    *out = res.v;
    return res.n;
}

/* ---------------------------------------------------------- the model */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xbf58476d1ce4e5b9ull;
}

/* Mixes the args of ev that can change a model's result (all but the
 * per-instance ids) into the two halves of a signature. */
static void mix_args(const tl_perf_eval *pe, uint32_t ev, uint64_t *a, uint64_t *b)
{
    const tl_event_store *es = &pe->t->es;
    tl_arg_iter it;
    tl_arg arg;
    tl_es_args_begin(es, ev, &it);
    while (tl_es_args_next(&it, &arg)) {
        if (pe->volatile_key[arg.key]) continue;
        *a = mix(*a, arg.key);
        *b = mix(*b, (uint64_t)arg.tag ^ ((uint64_t)arg.i << 1));
        *a = mix(*a, (uint64_t)arg.i);
    }
}

/* The signature of everything a model can read: its class, direction, the
 * event's name and args, the kernel names, and the forward op's name and
 * args for a seq_forward class (fwd, TL_NOUID when none). */
static void signature(const tl_perf_eval *pe, const tl_perf_class *cls, uint32_t ev, uint32_t fwd, int bwd,
                      const char *annotation, const uint32_t *k, size_t nk, uint64_t *h1, uint64_t *h2)
{
    const tl_event_store *es = &pe->t->es;
    uint64_t a = mix(0x1234, (uint64_t)(uintptr_t)cls), b = mix(0x9876, es->name[ev]);
    a = mix(a, (uint64_t)bwd);
    if (annotation) b = mix(b, tl_hash_bytes(annotation, strlen(annotation)));
    mix_args(pe, ev, &a, &b);
    if (cls->seq_forward) {
        a = mix(a, fwd == TL_NOUID ? 1 : 2);
        if (fwd != TL_NOUID) {
            b = mix(b, es->name[fwd]);
            mix_args(pe, fwd, &a, &b);
        }
    }
    for (size_t i = 0; i < nk; i++) {
        a = mix(a, es->name[k[i]]);
        b = mix(b, es->name[k[i]] * 31u + 7);
    }
    *h1 = a;
    *h2 = b ^ (uint64_t)nk;
}

static void json_str(tl_sbuf *b, const char *s)
{
    tl_sb_putc(b, '"');
    for (const char *c = s; *c; c++) {
        if (*c == '"' || *c == '\\') tl_sb_putc(b, '\\');
        tl_sb_putc(b, *c);
    }
    tl_sb_putc(b, '"');
}

/* The args object of an event as JSON text (typed columns included), plus
 * "annotation" for the ops of the annotation step (perf-report §3.12). */
static void args_json(const tl_event_store *es, uint32_t ev, const char *annotation, tl_sbuf *b)
{
    tl_sb_putc(b, '{');
    int first = 1;
    if (annotation) {
        tl_sb_puts(b, "\"annotation\":");
        json_str(b, annotation);
        first = 0;
    }
    if (tl_es_corr(es, ev) != TL_NONE && es->ph[ev] != 's' && es->ph[ev] != 'f') {
        tl_sb_printf(b, "\"correlation\":%lld", (long long)tl_es_corr(es, ev));
        first = 0;
    }
    tl_arg_iter it;
    tl_arg a;
    tl_es_args_begin(es, ev, &it);
    while (tl_es_args_next(&it, &a)) {
        if (!first) tl_sb_putc(b, ',');
        first = 0;
        json_str(b, tl_strpool_get(&es->keys, a.key));
        tl_sb_putc(b, ':');
        if (a.tag == TL_AV_INT) tl_sb_printf(b, "%lld", (long long)a.i);
        else tl_sb_puts(b, tl_strpool_get(&es->values, (uint32_t)a.i));
    }
    tl_sb_putc(b, '}');
}

/* An event as a model sees it, its args parsed into ar (no kernels). */
static tl_perf_event perf_event(const tl_event_store *es, uint32_t ev, const char *annotation, tl_pv_arena *ar)
{
    tl_sbuf b;
    tl_sb_init(&b);
    args_json(es, ev, annotation, &b);
    const tl_pv *args = tl_pv_parse(ar, b.s);
    tl_sb_free(&b);
    return (tl_perf_event){
        .name = tl_es_name(es, ev),
        .dims = tl_pv_dict_get(args, "Input Dims"),
        .types = tl_pv_dict_get(args, "Input type"),
        .strides = tl_pv_dict_get(args, "Input Strides"),
        .concrete = tl_pv_dict_get(args, "Concrete Inputs"),
        .args = args,
    };
}

/* str() of a param value: a top-level string is raw, containers as tuples. */
static void param_str(tl_sbuf *b, const tl_pv *v)
{
    if (v->kind == TL_PV_STR) tl_sb_putn(b, v->s, v->n);
    else tl_pv_str_tuple(b, v);
}

static void fill_entry(tl_perf_eval *pe, tl_perf_entry *e, const tl_perf_result *r)
{
    e->status = r->status;
    e->flops = r->flops;
    e->has_bytes = r->has_bytes;
    e->bytes = r->bytes;
    tl_compute_spec(r->maf, r->precision, e->compute_spec);
    if (r->status != TL_PERF_OK) return;
    e->n_params = r->n_params;
    e->param_keys = tl_xmalloc(((size_t)r->n_params + 1) * sizeof *e->param_keys);
    e->param_str = tl_xmalloc(((size_t)r->n_params + 1) * sizeof *e->param_str);
    tl_sbuf b, dict;
    tl_sb_init(&b);
    tl_sb_init(&dict);
    tl_sb_putc(&dict, '{');
    for (int i = 0; i < r->n_params; i++) {
        tl_sb_clear(&b);
        tl_sb_printf(&b, "param: %s", r->params[i].key);
        e->param_keys[i] = tl_strpool_intern(&pe->strings, b.s, b.len);
        tl_sb_clear(&b);
        param_str(&b, &r->params[i].value);
        e->param_str[i] = tl_strpool_intern(&pe->strings, b.s ? b.s : "", b.len);
        if (i) tl_sb_puts(&dict, ", ");
        tl_sb_pystr(&dict, r->params[i].key, strlen(r->params[i].key));
        tl_sb_puts(&dict, ": ");
        tl_pv_str_tuple(&dict, &r->params[i].value);
    }
    tl_sb_putc(&dict, '}');
    e->perf_params = r->n_params ? tl_sb_take(&dict) : NULL;
    tl_sb_free(&dict);
    tl_sb_free(&b);
}

/* The annotation step's name filters (prefixes): the standard report's
 * one, or the inference report's list (§1.6 step 4). */
static int annotated(const tl_perf_eval *pe, const char *name)
{
    static const char *const filters[] = {
        "vllm::unified_attention_with_output",
        "aiter::mha_varlen_fwd",
        "pseudo_mla_decode_fwd",
        "pseudo_mla_prefill_fwd",
        "vllm::gdn_attention_core",
        "aiter::fmha_v3_varlen_fwd",
        "sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
        "sglang_profiler::attention_paged_attention_ragged",
        "aiter::mha_batch_prefill",
        "aiter::pa_decode_gluon",
        "aiter::v4_attention_with_output",
        "pseudo_v4_paged_decode_swa",
        "pseudo_v4_paged_decode_csa",
        "pseudo_v4_paged_decode_hca",
    };
    size_t n = pe->inference_annotations ? sizeof filters / sizeof *filters : 1;
    for (size_t i = 0; i < n; i++)
        if (!strncmp(name, filters[i], strlen(filters[i]))) return 1;
    return 0;
}

const tl_perf_entry *tl_perf_eval_run(tl_perf_eval *pe, const tl_perf_class *cls, uint32_t ev, int bwd,
                                      const uint32_t *kernels, size_t nk)
{
    uint32_t fwd = cls->seq_forward ? tl_perf_seq_forward(pe, ev) : TL_NOUID;
    const char *ann = NULL;
    if (annotated(pe, tl_es_name(&pe->t->es, ev))) ann = tl_event_annotation(&pe->ann, ev);
    uint64_t h1, h2;
    signature(pe, cls, ev, fwd, bwd, ann, kernels, nk, &h1, &h2);
    uint32_t hit = tl_map_get(&pe->cache, h1, h2);
    if (hit != UINT32_MAX) return &pe->entries[hit];

    const tl_event_store *es = &pe->t->es;
    tl_pv_arena *ar = tl_pv_arena_new();
    const char **knames = tl_xmalloc((nk + 1) * sizeof *knames);
    for (size_t i = 0; i < nk; i++) knames[i] = tl_es_name(es, kernels[i]);
    tl_perf_event pev = perf_event(es, ev, ann, ar), fev;
    pev.kernels = knames;
    pev.n_kernels = nk;
    if (fwd != TL_NOUID) {
        fev = perf_event(es, fwd, NULL, ar);
        pev.seq_forward = &fev;
    }
    tl_perf_result r;
    tl_perf_result_init(&r);
    if (tl_extension_owns(pe->ext, cls)) tl_extension_run(pe->ext, cls, &pev, bwd, &r);
    else tl_perf_run(cls, &pev, bwd, &r);
    TL_GROW(pe->entries, pe->cap, pe->n + 1);
    tl_perf_entry *e = &pe->entries[pe->n];
    memset(e, 0, sizeof *e);
    fill_entry(pe, e, &r);
    tl_perf_result_free(&r);
    free(knames);
    tl_pv_arena_free(ar);
    tl_map_put(&pe->cache, h1, h2, (uint32_t)pe->n);
    return &pe->entries[pe->n++];
}
