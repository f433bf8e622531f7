/* model_core_misc.c — other core perf models (perf-model spec §4.8) and the
 * helpers shared by the core model files (model_core_misc.h). */
#include "model_core_misc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* Python literals -> JSON text -> tl_pv                                  */
/* ===================================================================== */

/* A strict recursive-descent reader of the literal subset Concrete Inputs
 * hold (numbers, strings, True/False/None, lists, tuples). It writes JSON
 * text that tl_pv_parse then turns into values, so the output must be
 * well-formed: every failure aborts the whole parse. */
typedef struct lit_reader {
    const char *p;
    tl_sbuf *out;
} lit_reader;

enum { LIT_MAX_DEPTH = 64 };

static void lit_ws(lit_reader *l)
{
    while (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r') l->p++;
}

static int lit_value(lit_reader *l, int depth);

static int lit_word(lit_reader *l, const char *word, const char *json)
{
    size_t n = strlen(word);
    if (strncmp(l->p, word, n) != 0) return 0;
    char next = l->p[n];
    if (isalnum((unsigned char)next) || next == '_') return 0;
    l->p += n;
    tl_sb_puts(l->out, json);
    return 1;
}

/* Decimal digits with Python's single '_' separators, copied to buf. */
static const char *lit_digits(const char *s, char *buf, size_t *n, size_t cap, int *any)
{
    while (isdigit((unsigned char)*s)) {
        if (*n + 2 >= cap) return NULL;
        buf[(*n)++] = *s++;
        *any = 1;
        if (*s == '_' && isdigit((unsigned char)s[1])) s++;
    }
    return s;
}

/* [+-] int | float: "12", "-1", "0.", ".5", "1e-05", "1_000". */
static int lit_number(lit_reader *l)
{
    const char *s = l->p;
    int neg = 0;
    if (*s == '+' || *s == '-') {
        neg = *s == '-';
        s++;
        while (*s == ' ' || *s == '\t') s++;
    }
    char num[400];
    size_t n = 0;
    int is_float = 0, any = 0;
    if (!(s = lit_digits(s, num, &n, sizeof num, &any))) return 0;
    size_t int_len = n;
    if (*s == '.') {
        is_float = 1;
        num[n++] = '.';
        if (!(s = lit_digits(s + 1, num, &n, sizeof num, &any))) return 0;
    }
    if (!any) return 0;
    if (*s == 'e' || *s == 'E') {
        int exp_digits = 0;
        num[n++] = 'e';
        s++;
        if (*s == '+' || *s == '-') num[n++] = *s++;
        if (!(s = lit_digits(s, num, &n, sizeof num, &exp_digits)) || !exp_digits) return 0;
        is_float = 1;
    }
    num[n] = 0;
    if (isalnum((unsigned char)*s) || *s == '_' || *s == '.') return 0; /* 0x10, 1j, 1.2.3 */
    l->p = s;
    if (!is_float) {
        const char *d = num;
        while (int_len > 1 && *d == '0') d++, int_len--;
        if (*d != '0' && d != num) return 0; /* "007": Python has no leading zeros */
        if (neg) tl_sb_putc(l->out, '-');
        tl_sb_putn(l->out, d, int_len);
        return 1;
    }
    double v = strtod(num, NULL);
    if (neg) v = -v;
    if (isinf(v)) {
        tl_sb_puts(l->out, v > 0 ? "Infinity" : "-Infinity");
        return 1;
    }
    char text[40];
    snprintf(text, sizeof text, "%.17g", v);
    tl_sb_puts(l->out, text);
    if (!strpbrk(text, ".eE")) tl_sb_puts(l->out, ".0"); /* stays a float */
    return 1;
}

/* '...' or "..." (adjacent literals concatenate, as in Python). */
static int lit_string(lit_reader *l)
{
    char q = *l->p++;
    tl_sb_putc(l->out, '"');
    for (;;) {
        char c = *l->p++;
        if (!c || c == '\n') return 0;
        if (c == q) {
            const char *next = l->p;
            while (*next == ' ' || *next == '\t') next++;
            if (*next != '\'' && *next != '"') break;
            q = *next;
            l->p = next + 1;
            continue;
        }
        if (c == '\\') {
            char e = *l->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case '\\': case '\'': case '"': c = e; break;
            default: return 0; /* \x, \u, \N{...}: not needed here */
            }
        }
        if (c == '"' || c == '\\') {
            tl_sb_putc(l->out, '\\');
            tl_sb_putc(l->out, c);
        } else if ((unsigned char)c < 0x20) {
            tl_sb_printf(l->out, "\\u%04x", (unsigned char)c);
        } else {
            tl_sb_putc(l->out, c);
        }
    }
    tl_sb_putc(l->out, '"');
    return 1;
}

/* Comma-separated items up to `close` ('\0': a bare top-level tuple such
 * as "1, 2"), written as a JSON list. With tuple_rule, one item and no
 * comma is that item itself: "(x)" and "x" are x. */
static int lit_items(lit_reader *l, int depth, char close, int tuple_rule)
{
    size_t mark = l->out->len;
    tl_sb_putc(l->out, '[');
    size_t n = 0;
    int comma = 0;
    for (;;) {
        lit_ws(l);
        if (*l->p == close) break;
        if (n && !comma) return 0;
        if (n) tl_sb_putc(l->out, ',');
        if (!lit_value(l, depth + 1)) return 0;
        n++;
        lit_ws(l);
        comma = *l->p == ',';
        if (comma) l->p++;
        else if (*l->p != close) return 0;
    }
    if (!close && !n) return 0; /* empty text */
    if (tuple_rule && n == 1 && !comma) {
        memmove(l->out->s + mark, l->out->s + mark + 1, l->out->len - mark - 1);
        l->out->len--;
        l->out->s[l->out->len] = 0;
        return 1;
    }
    tl_sb_putc(l->out, ']');
    return 1;
}

static int lit_sequence(lit_reader *l, int depth)
{
    char close = *l->p == '[' ? ']' : ')';
    l->p++;
    if (!lit_items(l, depth, close, close == ')')) return 0;
    l->p++;
    return 1;
}

static int lit_value(lit_reader *l, int depth)
{
    if (depth > LIT_MAX_DEPTH) return 0;
    lit_ws(l);
    char c = *l->p;
    if (c == '[' || c == '(') return lit_sequence(l, depth);
    if (c == '\'' || c == '"') return lit_string(l);
    if (c == 'T') return lit_word(l, "True", "true");
    if (c == 'F') return lit_word(l, "False", "false");
    if (c == 'N') return lit_word(l, "None", "null");
    return lit_number(l);
}

const tl_pv *tl_core_literal(tl_perf_result *r, const char *text)
{
    if (!text) return NULL;
    tl_sbuf json;
    tl_sb_init(&json);
    lit_reader l = {text, &json};
    int ok = lit_items(&l, 0, '\0', 1);
    const tl_pv *v = ok ? tl_pv_parse(r->arena, json.s) : NULL;
    tl_sb_free(&json);
    return v;
}

int tl_core_truth(const tl_pv *v) { return tl_pv_nonempty(v); }

int tl_core_is_int(const tl_pv *v) { return v && (v->kind == TL_PV_INT || v->kind == TL_PV_BIGINT); }

int tl_core_is_int_list(const tl_pv *v)
{
    if (!tl_pv_is_list(v)) return 0;
    for (size_t i = 0; i < v->n; i++)
        if (!tl_core_is_int(&v->items[i])) return 0;
    return 1;
}

int tl_core_literal_truth(tl_perf_result *r, const char *text)
{
    if (!text) return 0;
    const tl_pv *v = tl_core_literal(r, text);
    return v ? tl_core_truth(v) : text[0] != 0;
}

int tl_core_literal_int(tl_perf_result *r, const char *text, int64_t *out)
{
    const tl_pv *v = tl_core_literal(r, text);
    if (!v || v->kind != TL_PV_INT) return 0;
    *out = v->i;
    return 1;
}

int tl_core_literal_bools(tl_perf_result *r, const char *text, int *out, size_t max, size_t *n)
{
    const tl_pv *v = tl_core_literal(r, text);
    if (!tl_pv_is_list(v)) return 0;
    *n = v->n;
    for (size_t i = 0; i < v->n && i < max; i++) out[i] = tl_core_truth(&v->items[i]);
    return 1;
}

int tl_core_size_ok(const tl_pv *v) { return v && v->kind == TL_PV_INT && v->i >= 0 && v->i <= TL_CORE_MAX_DIM; }

int tl_core_numel(const tl_pv *shape, int64_t *out)
{
    if (!tl_pv_is_list(shape)) return 0;
    int64_t p = 1;
    for (size_t i = 0; i < shape->n; i++) {
        const tl_pv *d = &shape->items[i];
        if (!tl_core_size_ok(d) || __builtin_mul_overflow(p, d->i, &p)) return 0;
    }
    *out = p;
    return 1;
}

int tl_core_dim(const tl_pv *shape, long i, int64_t *out)
{
    size_t n = tl_pv_len(shape);
    if (i < 0) i += (long)n;
    if (i < 0 || (size_t)i >= n || !tl_core_size_ok(&shape->items[i])) return 0;
    *out = shape->items[i].i;
    return 1;
}

const tl_pv *tl_core_arg(const tl_perf_event *ev, const char *key)
{
    const tl_pv *a = ev->args;
    if (!a || a->kind != TL_PV_DICT) return NULL;
    for (size_t i = 0; i + 1 < a->n; i += 2) {
        const char *k = tl_pv_cstr(&a->items[i]);
        if (k && !strcmp(k, key)) return &a->items[i + 1];
    }
    return NULL;
}

void tl_core_pm_bools(tl_perf_result *r, const char *key, const int *v, size_t n)
{
    tl_sbuf j;
    tl_sb_init(&j);
    tl_sb_putc(&j, '[');
    for (size_t i = 0; i < n; i++) tl_sb_printf(&j, "%s%s", i ? "," : "", v[i] ? "true" : "false");
    tl_sb_putc(&j, ']');
    tl_pm_pv(r, key, tl_pv_parse(r->arena, j.s));
    tl_sb_free(&j);
}

/* ===================================================================== */
/* The models                                                             */
/* ===================================================================== */

/* bpe of Input type[i], or dflt when unknown (the reference's `or`). */
static int bpe_or(const tl_perf_event *ev, size_t i, int dflt)
{
    int b = tl_dtype_bpe(tl_pe_type(ev, i));
    return b ? b : dflt;
}

static void set_bytes(tl_perf_result *r, __int128 bytes)
{
    r->has_bytes = 1;
    r->bytes = (double)bytes;
}

/* A shape of exactly n ints, copied to out. */
static int shape_n(const tl_pv *shape, size_t n, int64_t *out)
{
    if (tl_pv_len(shape) != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (!tl_core_dim(shape, (long)i, &out[i])) return 0;
    return 1;
}

/* --- MoEDispatch / MoECombine (MoE_comm) ------------------------------ */

/* Tokens moved between ranks: no compute, bytes = tokens·hidden·bpe; the
 * backward moves the same bytes. */
static int moe_comm(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    int64_t tokens, hidden;
    const tl_pv *x = tl_pe_dim(ev, 0);
    if (!tl_core_dim(x, 0, &tokens) || !tl_core_dim(x, 1, &hidden))
        return tl_perf_error(r, "%s: Input Dims[0] needs (tokens, hidden)", ev->name);
    const char *dtype = tl_pe_type(ev, 0);
    tl_pm_int(r, "num_tokens", tokens);
    tl_pm_int(r, "hidden", hidden);
    tl_pm_str(r, "dtype", dtype);
    int bpe = tl_dtype_bpe(dtype);
    r->flops = 0;
    if (bpe) set_bytes(r, (__int128)tokens * hidden * bpe);
    r->maf = NULL; /* no compute unit: no Compute Spec */
    r->precision = tl_dtype_precision(dtype);
    return r->status = TL_PERF_OK;
}

const tl_perf_class tl_pc_moe_dispatch = {"moe_dispatch", "MoE_comm_fwd", "MoE_comm_bwd", "MoE_comm", 1, moe_comm};
const tl_perf_class tl_pc_moe_combine = {"moe_combine", "MoE_comm_fwd", "MoE_comm_bwd", "MoE_comm", 1, moe_comm};

/* --- DaoAILab::_causal_conv1d_fwd_cpp --------------------------------- */

static int causal_conv1d(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    int64_t x[3], w[2];
    if (!shape_n(tl_pe_dim(ev, 0), 3, x) || !shape_n(tl_pe_dim(ev, 1), 2, w))
        return tl_perf_error(r, "%s: needs x = (b, c, L) and w = (c, k)", ev->name);
    int64_t b = x[0], c = x[1], L = x[2], k = w[1];
    const tl_pv *bias = tl_pe_dim(ev, 2);
    int has_bias = tl_pv_is_list(bias) && bias->n > 0;
    int bpe = bpe_or(ev, 0, 2);
    tl_pm_int(r, "b", b);
    tl_pm_int(r, "c", c);
    tl_pm_int(r, "L", L);
    tl_pm_int(r, "k", k);
    tl_pm_bool(r, "has_bias", has_bias);
    tl_pm_str(r, "dtype", tl_pe_type(ev, 0));
    r->flops = (double)((__int128)2 * b * c * L * k);
    set_bytes(r, ((__int128)2 * b * c * L + (__int128)c * k + (has_bias ? c : 0)) * bpe);
    r->maf = "matrix";
    r->precision = tl_dtype_precision(tl_pe_type(ev, 0));
    return r->status = TL_PERF_OK;
}

const tl_perf_class tl_pc_causal_conv1d_fwd = {"causal_conv1d_fwd", "SSM_fwd", NULL, "SSM", 0, causal_conv1d};

/* --- MambaSplitConv1dScanCombinedFn ----------------------------------- */

/* Exact products and sums of up to six factors can leave __int128 for
 * absurd inputs: these clear *ok instead. */
static __int128 prod(int *ok, size_t n, const __int128 *f)
{
    __int128 p = 1;
    for (size_t i = 0; i < n; i++)
        if (__builtin_mul_overflow(p, f[i], &p)) *ok = 0;
    return *ok ? p : 0;
}

static __int128 sum(int *ok, size_t n, const __int128 *t)
{
    __int128 s = 0;
    for (size_t i = 0; i < n; i++)
        if (__builtin_add_overflow(s, t[i], &s)) *ok = 0;
    return *ok ? s : 0;
}

#define NARGS(...) (sizeof((__int128[]){__VA_ARGS__}) / sizeof(__int128))
#define PROD(ok, ...) prod(ok, NARGS(__VA_ARGS__), (__int128[]){__VA_ARGS__})
#define SUM(ok, ...) sum(ok, NARGS(__VA_ARGS__), (__int128[]){__VA_ARGS__})

/* int(C[i]) or dflt: an absent/empty/zero value takes the default; any
 * other non-int text is the reference's ValueError. */
static int int_or(tl_perf_result *r, const tl_perf_event *ev, size_t i, int64_t dflt, int64_t *out)
{
    const char *s = tl_pe_concrete(ev, i);
    *out = dflt;
    if (!s || !*s) return 1;
    int64_t v;
    if (!tl_core_literal_int(r, s, &v)) return 0;
    if (v) *out = v;
    return 1;
}

/* (B, T, conv_dim) = D[0], (conv_ch, d_conv) = D[1], H = D[3][0];
 * chunk_size C[6], headdim C[15], ngroups C[16]; d_state from
 *   conv_dim = 2·H·P + H + 2·G·N. */
static int mamba_ssd(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd; /* flops_bwd = flops, bytes_bwd = bytes */
    int64_t x[3], conv[2], H, Cs, P, G;
    if (!shape_n(tl_pe_dim(ev, 0), 3, x) || !shape_n(tl_pe_dim(ev, 1), 2, conv) ||
        !tl_core_dim(tl_pe_dim(ev, 3), 0, &H))
        return tl_perf_error(r, "%s: needs (B, T, conv_dim), (conv_ch, d_conv) and D[3][0]", ev->name);
    if (!int_or(r, ev, 6, 128, &Cs) || !int_or(r, ev, 15, 64, &P) || !int_or(r, ev, 16, 1, &G))
        return tl_perf_error(r, "%s: chunk_size/headdim/ngroups are not ints", ev->name);
    __int128 B = x[0], T = x[1], cd = x[2], cc = conv[0], dconv = conv[1];
    __int128 d_inner = (__int128)H * P, num = cd - 2 * d_inner - H, den = 2 * (__int128)G;
    if (num <= 0 || den <= 0 || num % den != 0)
        return tl_perf_error(r, "%s: d_state = (conv_dim - 2*H*P - H) / 2G is not a positive integer", ev->name);
    __int128 N = num / den;
    int bpe = bpe_or(ev, 0, 2), ok = 1;
    __int128 flops = SUM(&ok, PROD(&ok, 2, B, cc, T, dconv), PROD(&ok, 2, B, G, T, Cs, N),
                         PROD(&ok, 2, B, H, T, Cs, P), PROD(&ok, 4, B, H, T, N, P));
    __int128 bytes = SUM(&ok, PROD(&ok, B, T, cd, bpe), PROD(&ok, cc, dconv, bpe), PROD(&ok, cc, bpe),
                         PROD(&ok, H, bpe_or(ev, 3, 4)), PROD(&ok, H, bpe_or(ev, 4, 4)), PROD(&ok, H, bpe_or(ev, 5, bpe)),
                         PROD(&ok, B, T, d_inner, bpe));
    if (!ok || N > INT64_MAX) return tl_perf_error(r, "%s: sizes out of range", ev->name);
    tl_pm_int(r, "batch", x[0]);
    tl_pm_int(r, "seqlen", x[1]);
    tl_pm_int(r, "conv_dim", x[2]);
    tl_pm_int(r, "conv_channels", conv[0]);
    tl_pm_int(r, "d_conv", conv[1]);
    tl_pm_int(r, "nheads", H);
    tl_pm_int(r, "headdim", P);
    tl_pm_int(r, "ngroups", G);
    tl_pm_int(r, "d_state", (int64_t)N);
    tl_pm_int(r, "chunk_size", Cs);
    tl_pm_str(r, "dtype", tl_pe_type(ev, 0));
    r->flops = (double)flops;
    set_bytes(r, bytes);
    r->maf = "matrix";
    r->precision = tl_dtype_precision(tl_pe_type(ev, 0));
    return r->status = TL_PERF_OK;
}

const tl_perf_class tl_pc_mamba_ssd_fwd = {"mamba_ssd_fwd", "SSM_fwd", "SSM_bwd", "SSM", 1, mamba_ssd};

/* --- FusedRoPEFunc ---------------------------------------------------- */

static int fused_rope(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    const tl_pv *x = tl_pe_dim(ev, 0);
    int64_t n;
    if (!tl_core_numel(x, &n)) return tl_perf_error(r, "%s: Input Dims[0] is not a shape", ev->name);
    int bpe = bpe_or(ev, 0, 2);
    tl_pm_pv(r, "input_shape", x);
    tl_pm_str(r, "dtype", tl_pe_type(ev, 0));
    r->flops = (double)((__int128)3 * n);
    set_bytes(r, (__int128)2 * n * bpe);
    r->maf = "vector";
    r->precision = tl_dtype_precision(tl_pe_type(ev, 0));
    return r->status = TL_PERF_OK;
}

const tl_perf_class tl_pc_fused_rope_fwd = {"fused_rope_fwd", "RoPE_fwd", NULL, "RoPE", 0, fused_rope};

/* --- CrossEntropyFunction --------------------------------------------- */

/* Reads the logits, writes a float loss (4 B) and reads int64 targets
 * (8 B) per row. */
static int cross_entropy(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    const tl_pv *logits = tl_pe_dim(ev, 0);
    int64_t batch, V, n;
    if (!tl_core_numel(logits, &n) || !tl_core_dim(logits, 0, &batch) || !tl_core_dim(logits, -1, &V))
        return tl_perf_error(r, "%s: Input Dims[0] needs (batch, ..., vocab)", ev->name);
    int bpe = bpe_or(ev, 0, 2);
    tl_pm_int(r, "batch", batch);
    tl_pm_int(r, "vocab_size", V);
    tl_pm_str(r, "dtype", tl_pe_type(ev, 0));
    r->flops = (double)((__int128)5 * batch * V);
    set_bytes(r, (__int128)n * bpe + (__int128)batch * 8 + (__int128)batch * 4);
    r->maf = "vector";
    r->precision = tl_dtype_precision(tl_pe_type(ev, 0));
    return r->status = TL_PERF_OK;
}

const tl_perf_class tl_pc_cross_entropy_fwd = {"cross_entropy_fwd", "CrossEntropy_fwd", NULL, "CrossEntropy", 0,
                                               cross_entropy};
