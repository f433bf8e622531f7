/* model_triton.c — TritonCompiledPerfModel, V2 (trace args) only (spec §9).
 *
 * Name → fused ATen ops: `triton_<kind>_fused_<ops>_<n>`; <ops> is split on
 * '_' and segmented into KNOWN_OPS names (dynamic programming over token
 * boundaries, backtracking from the end through the longest candidate).
 * Args → xnumel / rnumel (the integer Concrete Inputs) and bytes (every
 * tensor argument once, plus the in/out buffer written back by a pointwise
 * kernel). FLOPs = Σ per-element op FLOPs · xnumel · rnumel.
 *
 * [FIX §9] element sizes fall back to name2bpe (`float` is 4 bytes, not 0),
 * and the precision is the §2.2 map of the first sized tensor's full type
 * (`vector_bf16`, not `vector_bfloat16`). */
#include <stdlib.h>
#include <string.h>

#include "model_triton.h"
#include "perf_util.h"

typedef enum triton_kind { TK_NONE, TK_POINTWISE, TK_REDUCTION } triton_kind;

static triton_kind kind_of(const char *name)
{
    if (!name || strncmp(name, "triton_", 7)) return TK_NONE;
    const char *k = name + 7;
    if (!strncmp(k, "poi_", 4)) return TK_POINTWISE;
    if (!strncmp(k, "red_", 4) || !strncmp(k, "per_", 4)) return TK_REDUCTION;
    return TK_NONE;
}

int tl_triton_name_matches(const char *name) { return kind_of(name) != TK_NONE; }

/* ---- fused ops from the name ------------------------------------------- */

static int64_t op_flops_per_elem(const char *op)
{
    static const struct { const char *op; int64_t f; } t[] = {
        {"add", 1},  {"sub", 1},     {"mul", 1},  {"div", 1},  {"pow", 2},  {"sqrt", 2},
        {"rsqrt", 2}, {"exp", 4},    {"log", 4},  {"sigmoid", 4}, {"tanh", 4}, {"relu", 1},
        {"silu", 4}, {"gelu", 8},    {"mean", 1}, {"sum", 1},  {"var", 2},  {"abs", 1},
        {"neg", 1},  {"reciprocal", 2}, {"ne", 1}, {"eq", 1},  {"lt", 1},   {"gt", 1},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(op, t[i].op)) return t[i].f;
    return 0;
}

/* The <ops> part of `^triton_(?:poi|red|per)_fused_(.+)_(\d+)$`: start and
 * length, or 0 when the name does not match. */
static size_t ops_span(const char *name, const char **start)
{
    if (kind_of(name) == TK_NONE || strncmp(name + 11, "fused_", 6)) return 0;
    const char *s = name + 17, *us = strrchr(s, '_');
    if (!us || us == s || !us[1]) return 0;
    for (const char *d = us + 1; *d; d++)
        if (*d < '0' || *d > '9') return 0;
    *start = s;
    return (size_t)(us - s);
}

/* Segments text (len bytes, '_'-separated tokens) into known ops. Fills
 * ops[] with NUL-terminated names carved out of buf (a copy of text) and
 * returns their count (0 when no full segmentation exists). */
static size_t segment(const char *text, size_t len, char *buf, char **ops)
{
    size_t ntok = 1;
    for (size_t i = 0; i < len; i++) ntok += text[i] == '_';
    size_t *tok = malloc((ntok + 1) * sizeof *tok); /* token i starts at tok[i]; tok[ntok] = len + 1 */
    long *best = malloc((ntok + 1) * sizeof *best); /* best[i]: smallest j with tokens[j:i] known, or -1 */
    tok[0] = 0;
    for (size_t i = 0, t = 1; i < len; i++)
        if (text[i] == '_') tok[t++] = i + 1;
    tok[ntok] = len + 1;
    best[0] = 0;
    for (size_t i = 1; i <= ntok; i++) {
        best[i] = -1;
        for (size_t j = 0; j < i && best[i] < 0; j++) {
            if (best[j] < 0) continue;
            size_t a = tok[j], n = tok[i] - 1 - a;
            memcpy(buf, text + a, n);
            buf[n] = 0;
            if (tl_triton_known_op(buf)) best[i] = (long)j;
        }
    }
    size_t nops = 0;
    if (best[ntok] >= 0) {
        memcpy(buf, text, len);
        buf[len] = 0;
        for (size_t i = ntok; i > 0; i = (size_t)best[i]) { /* backtrack, then reverse */
            size_t j = (size_t)best[i];
            buf[tok[i] - 1] = 0;
            ops[nops++] = buf + tok[j];
        }
        for (size_t a = 0, b = nops - 1; a < b; a++, b--) {
            char *t = ops[a];
            ops[a] = ops[b];
            ops[b] = t;
        }
    }
    free(tok);
    free(best);
    return nops;
}

size_t tl_triton_fused_ops(const char *name, tl_sbuf *out, int64_t *flops_per_elem)
{
    const char *text = NULL;
    size_t len = ops_span(name, &text), nops = 0;
    int64_t fpe = 0;
    if (len) {
        char *buf = malloc(len + 1);
        char **ops = malloc((len + 2) * sizeof *ops);
        nops = segment(text, len, buf, ops);
        for (size_t i = 0; i < nops; i++) {
            tl_sb_printf(out, "%saten.%s", i ? ", " : "", ops[i]);
            fpe += op_flops_per_elem(ops[i]);
        }
        free(ops);
        free(buf);
    }
    if (flops_per_elem) *flops_per_elem = fpe;
    return nops;
}

/* ---- V2: the trace args ------------------------------------------------- */

typedef struct triton_v2 {
    int64_t xnumel, rnumel;
    int64_t bytes;
    const char *dtype; /* full type of the first tensor with a known size */
} triton_v2;

/* The exact-string table of §9, then [FIX] name2bpe. */
static int64_t triton_bpe(const char *t)
{
    static const struct { const char *t; int64_t b; } tab[] = {
        {"c10::BFloat16", 2}, {"c10::Half", 2}, {"c10::Float", 4}, {"c10::Double", 8},
        {"c10::Byte", 1},     {"c10::Char", 1}, {"c10::Int", 4},   {"c10::Long", 8},
    };
    if (!t) return 0;
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        if (!strcmp(t, tab[i].t)) return tab[i].b;
    return tl_dtype_bpe(t);
}

/* xnumel / rnumel from the integer Concrete Inputs (ints, or text that
 * int() accepts): the last one or the last two. Returns how many exist. */
static size_t concrete_ints(const tl_pv *concrete, int64_t last2[2])
{
    size_t n = 0;
    for (size_t i = 0; i < tl_pv_len(concrete); i++) {
        const tl_pv *c = &concrete->items[i];
        int64_t v;
        if (c->kind == TL_PV_INT) v = c->i;
        else if (!(c->kind == TL_PV_STR && c->n && tl_py_int(c->s, &v))) continue;
        last2[0] = last2[1];
        last2[1] = v;
        n++;
    }
    return n;
}

static int parse_v2(const tl_perf_event *ev, triton_v2 *v)
{
    memset(v, 0, sizeof *v);
    triton_kind kind = kind_of(ev->name);
    if (kind == TK_NONE || !tl_pv_nonempty(ev->concrete) || !tl_pv_nonempty(ev->dims) ||
        !tl_pv_nonempty(ev->types) || !tl_pv_is_list(ev->concrete) || !tl_pv_is_list(ev->dims) ||
        !tl_pv_is_list(ev->types))
        return 0;
    int64_t last2[2] = {0, 0};
    size_t n = concrete_ints(ev->concrete, last2);
    if (!n) return 0;
    if (kind == TK_REDUCTION && n >= 2) v->xnumel = last2[0], v->rnumel = last2[1];
    else v->xnumel = last2[1], v->rnumel = 1;
    int64_t first_bpe = -1;
    size_t m = tl_pv_len(ev->dims) < tl_pv_len(ev->types) ? tl_pv_len(ev->dims) : tl_pv_len(ev->types);
    for (size_t i = 0; i < m; i++) {
        const tl_pv *d = &ev->dims->items[i];
        const char *t = tl_pv_cstr(&ev->types->items[i]);
        if ((t && !strcmp(t, "Scalar")) || !tl_pv_nonempty(d)) continue;
        if (!tl_pv_is_int64_list(d)) return 0; /* prod() of a non-shape: the parse fails */
        int64_t b = triton_bpe(t);
        if (first_bpe < 0) first_bpe = b;
        v->bytes += tl_pv_prod(d) * b;
        if (b > 0 && !v->dtype) v->dtype = t;
    }
    if (kind == TK_POINTWISE && first_bpe > 0) v->bytes += first_bpe * v->xnumel;
    return 1;
}

int tl_triton_can_model(const tl_perf_event *ev)
{
    triton_v2 v;
    return parse_v2(ev, &v);
}

static int triton_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    triton_v2 v;
    if (!parse_v2(ev, &v)) return tl_perf_not_implemented(r); /* V1 (Inductor cache) is not read */
    tl_sbuf ops;
    tl_sb_init(&ops);
    int64_t fpe = 0;
    tl_triton_fused_ops(ev->name, &ops, &fpe);
    tl_pm_str(r, "fused_ops", ops.s ? ops.s : "");
    tl_sb_free(&ops);
    tl_pm_int(r, "xnumel", v.xnumel);
    tl_pm_int(r, "rnumel", v.rnumel);
    r->flops = (double)((__int128)fpe * v.xnumel * v.rnumel);
    tl_perf_set_bytes(r, (double)v.bytes);
    return tl_perf_ok(r, "vector", v.dtype);
}

const tl_perf_class tl_pc_TritonCompiledPerfModel = {"TritonCompiledPerfModel", "triton", NULL, NULL, 0, triton_fn, 0};
