/* model_gemm.c — the GEMM perf models (perf-model spec §4.1, §4.7, the
 * GEMM-category classes of §4.9) and the kernel-name `transpose` param (§8).
 *
 * Every GEMM class is "read the operands, then the shared base": a parse
 * step turns the args into a `gemm` (B, M, N, K, bias, bytes per element of
 * A, B, bias and output) and appends the class's params in the reference's
 * order; gemm_run() then appends `B` (when the class did not set it) and
 * `transpose`, and computes flops = B·(2MNK + MN·bias) and the bytes.
 * Integers stay exact (__int128) and become a double once; dims are bounded
 * (|d| < 2^31) so that no product can overflow. */
#include "model_gemm.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../util/vec.h"
#include "kernel_name.h"
#include "perf_util.h"

__extension__ typedef __int128 i128;

enum { DIM_LIMIT = 2147483647 };

/* --- reading the args the way the reference indexes them --------------- */

/* The first missing or malformed value is what the reference raises
 * (KeyError, IndexError, ValueError, AssertionError, TypeError): the model
 * fails with TL_PERF_ERROR and that message. Later reads are no-ops. */
typedef struct rd {
    const tl_perf_event *ev;
    tl_perf_result *r;
    int bad;
} rd;

static void fail(rd *a, const char *what, long i)
{
    if (a->bad) return;
    a->bad = 1;
    if (i >= 0) tl_perf_error(a->r, "%s: %s[%ld]", a->ev->name ? a->ev->name : "GEMM", what, i);
    else tl_perf_error(a->r, "%s: %s", a->ev->name ? a->ev->name : "GEMM", what);
}

/* D[i]: must be a list (a shape). */
static const tl_pv *shape(rd *a, size_t i)
{
    const tl_pv *s = tl_pv_at(a->ev->dims, i);
    if (!tl_pv_is_list(s)) fail(a, a->ev->dims ? "Input Dims" : "no Input Dims", (long)i);
    return s;
}

/* An int of a shape, bounded so that the formulas stay inside __int128. */
static int64_t elem(rd *a, const tl_pv *shape_, long j)
{
    int64_t v = 0;
    const tl_pv *x = tl_pv_item(shape_, j);
    if (a->bad) return 0;
    if (!tl_pv_int(x, &v)) fail(a, x ? "not an int: dim" : "missing dim", j);
    else if (v > DIM_LIMIT || v < -DIM_LIMIT) fail(a, "dimension out of range: dim", j);
    return a->bad ? 0 : v;
}

static int64_t dim(rd *a, size_t i, long j) { return elem(a, shape(a, i), j); }

/* prod(D[i]) (1 for []), bounded like the dims. */
static int64_t numel(rd *a, size_t i)
{
    const tl_pv *s = shape(a, i);
    i128 p = 1;
    for (size_t j = 0; j < tl_pv_len(s) && !a->bad; j++) {
        p *= elem(a, s, (long)j);
        if (p > INT64_MAX / 16 || p < -(INT64_MAX / 16)) fail(a, "tensor too large: Input Dims", (long)i);
    }
    return a->bad ? 0 : (int64_t)p;
}

/* `x, y, z = D[i]`: exactly n entries, or ValueError. */
static void unpack(rd *a, size_t i, size_t n)
{
    const tl_pv *s = shape(a, i);
    if (!a->bad && tl_pv_len(s) != n) fail(a, "wrong number of dims to unpack: Input Dims", (long)i);
}

/* T[i] (NULL when the entry is not a string); absence is an error. */
static const char *type(rd *a, size_t i)
{
    if (!tl_pv_at(a->ev->types, i)) fail(a, a->ev->types ? "Input type" : "no Input type", (long)i);
    return tl_pe_type(a->ev, i);
}

/* T[i] or NULL, never an error. */
static const char *type_opt(const rd *a, size_t i) { return tl_pe_type(a->ev, i); }

/* `T[i] or ""`. */
static const char *type_or_empty(rd *a, size_t i)
{
    const char *t = type(a, i);
    return t ? t : "";
}

/* S[i]: NULL (None) when the event has no strides; absence is an error. */
static const tl_pv *stride(rd *a, size_t i)
{
    if (!a->ev->strides) return NULL;
    const tl_pv *s = tl_pv_at(a->ev->strides, i);
    if (!s) fail(a, "Input Strides", (long)i);
    return s;
}

/* C[i]: must exist. */
static const tl_pv *concrete(rd *a, size_t i)
{
    const tl_pv *c = tl_pv_at(a->ev->concrete, i);
    if (!c) fail(a, a->ev->concrete ? "Concrete Inputs" : "no Concrete Inputs", (long)i);
    return c;
}

/* `len(D) > i and D[i]` (a non-empty shape: an optional tensor is present). */
static int has_tensor(const rd *a, size_t i) { return tl_pv_nonempty(tl_pv_at(a->ev->dims, i)); }

/* A known element size, or the reference's exception (TypeError on a
 * None operand, AssertionError where the class asserts it). */
static int need_bpe(rd *a, int bpe, const char *what)
{
    if (!bpe) fail(a, what, -1);
    return bpe;
}

/* --- the GEMM base -------------------------------------------------------- */

typedef struct gemm gemm;
/* Writes the bytes; 0 for the reference's None. */
typedef int (*gemm_bytes_fn)(const gemm *g, double *out);

struct gemm {
    int64_t B, M, N, K;
    int bias;
    int bias_self;                       /* [FIX] bias bytes = numel(self)·bpe once (addmm, baddbmm) */
    int64_t bias_numel;                  /* else the reference's N elements per batch */
    int bpe_a, bpe_b, bpe_bias, bpe_out; /* 0: None */
    int bpe_sa, bpe_sb;                  /* fp4 scale tensors */
    const char *precision;
    gemm_bytes_fn bytes;
};

static void set_bpe(gemm *g, int a, int b, int bias, int out)
{
    g->bpe_a = a, g->bpe_b = b, g->bpe_bias = bias, g->bpe_out = out;
}

static double gemm_flops(const gemm *g)
{
    i128 mn = (i128)g->M * g->N;
    return (double)((i128)g->B * (2 * mn * g->K + (g->bias ? mn : 0)));
}

/* bytes_base: MK·a + KN·b + MN·out + (N if bias)·bias, per batch; None if
 * any of the four sizes is None. */
static int bytes_base(const gemm *g, double *out)
{
    if (!g->bpe_a || !g->bpe_b || !g->bpe_bias || !g->bpe_out) return 0;
    i128 per = (i128)g->M * g->K * g->bpe_a + (i128)g->K * g->N * g->bpe_b + (i128)g->M * g->N * g->bpe_out;
    i128 total;
    if (g->bias_self) total = g->B * per + (g->bias ? (i128)g->bias_numel * g->bpe_bias : 0);
    else total = g->B * (per + (g->bias ? (i128)g->N * g->bpe_bias : 0));
    *out = (double)total;
    return 1;
}

/* FP4 (K logical): M·(K//2)·a + N·(K//2)·b + M·ceil(K/32)·sA + N·ceil(K/32)·sB + MN·2. */
static int bytes_fp4(const gemm *g, double *out)
{
    int64_t kh = tl_floor_div(g->K, 2), ks = tl_ceil_div(g->K, 32);
    i128 t = (i128)g->M * kh * g->bpe_a + (i128)g->N * kh * g->bpe_b + (i128)g->M * ks * g->bpe_sa +
             (i128)g->N * ks * g->bpe_sb + (i128)g->M * g->N * 2;
    *out = (double)t;
    return 1;
}

/* gemm_afp4wfp4: M·K·0.5 + K·N·0.5 + M·N·2 (scales not counted). */
static int bytes_afp4wfp4(const gemm *g, double *out)
{
    *out = (double)((i128)g->M * g->K) * 0.5 + (double)((i128)g->K * g->N) * 0.5 + (double)((i128)g->M * g->N * 2);
    return 1;
}

/* batched_gemm_a16wfp4: B·(MK·bpe(T0) + KN·0.5 + MN·2). */
static int bytes_a16wfp4(const gemm *g, double *out)
{
    double per = (double)((i128)g->M * g->K * g->bpe_a) + (double)((i128)g->K * g->N) * 0.5 +
                 (double)((i128)g->M * g->N * 2);
    *out = (double)g->B * per;
    return 1;
}

/* --- params ----------------------------------------------------------- */

static void p_mnk(tl_perf_result *r, const gemm *g)
{
    tl_pm_int(r, "M", g->M);
    tl_pm_int(r, "N", g->N);
    tl_pm_int(r, "K", g->K);
    tl_pm_bool(r, "bias", g->bias);
}

static void p_bmnk(tl_perf_result *r, const gemm *g)
{
    tl_pm_int(r, "B", g->B);
    p_mnk(r, g);
}

static void p_strides(tl_perf_result *r, const tl_pv *sa, const tl_pv *sb)
{
    tl_pm_pv(r, "stride_A", sa);
    tl_pm_pv(r, "stride_B", sb);
}

static void p_types(tl_perf_result *r, const char *key, const char *const *t, size_t n)
{
    tl_pm_str_tuple(r, key, t, n);
}

static const char *flag(int v) { return v == TL_KN_NONE ? "null" : v ? "true" : "false"; }

/* §8: the first kernel name that parses gives `transpose`. */
static void p_transpose(const tl_perf_event *ev, tl_perf_result *r)
{
    tl_gemm_kname k;
    if (tl_kname_first_gemm(ev->kernels, ev->kernels ? ev->n_kernels : 0, &k) < 0) return;
    char json[32];
    snprintf(json, sizeof json, "[%s,%s]", flag(k.trans_a), flag(k.trans_b));
    tl_pm_pv(r, "transpose", tl_pv_parse(r->arena, json));
}

/* --- the shared run ---------------------------------------------------- */

typedef void (*gemm_parse)(rd *a, gemm *g);

static int gemm_run(const tl_perf_event *ev, int bwd, tl_perf_result *r, gemm_parse parse)
{
    if (bwd) return tl_perf_not_implemented(r); /* every registered GEMM raises for bwd */
    rd a = {ev, r, 0};
    gemm g = {.B = 1, .bytes = bytes_base};
    parse(&a, &g);
    if (a.bad) {
        r->n_params = 0;
        return r->status;
    }
    if (!tl_pm_find(r, "B")) tl_pm_int(r, "B", 1);
    p_transpose(ev, r);
    r->flops = gemm_flops(&g);
    r->has_bytes = g.bytes(&g, &r->bytes);
    if (!r->has_bytes) r->bytes = 0;
    r->maf = "matrix";
    r->precision = g.precision;
    r->status = TL_PERF_OK;
    return TL_PERF_OK;
}

#define GEMM_CLASS(cls, parse)                                                    \
    static int fn_##cls(const tl_perf_event *ev, int bwd, tl_perf_result *r)      \
    {                                                                             \
        return gemm_run(ev, bwd, r, parse);                                       \
    }                                                                             \
    const tl_perf_class tl_pc_##cls = {#cls, "GEMM", NULL, "GEMM", 0, fn_##cls, 0}

/* --- aten::mm / addmm / bmm / baddbmm ------------------------------------- */

/* Where A and B sit, whether they are batched, whether D[0] is the added
 * `self` (bias = True, [FIX] counted as numel(D[0]) once). */
typedef struct aten_layout {
    size_t ia, ib;
    int batched, has_self;
} aten_layout;

static void parse_aten(rd *a, gemm *g, const aten_layout *L)
{
    if (L->batched) {
        unpack(a, L->ia, 3);
        g->B = dim(a, L->ia, 0), g->M = dim(a, L->ia, 1), g->K = dim(a, L->ia, 2);
        g->N = dim(a, L->ib, 2);
    } else {
        g->M = dim(a, L->ia, 0), g->K = dim(a, L->ia, 1);
        g->N = dim(a, L->ib, 1);
    }
    if (L->has_self) {
        g->bias = g->bias_self = 1;
        g->bias_numel = numel(a, 0);
    }
    const char *t[2] = {type(a, L->ia), type(a, L->ib)};
    const tl_pv *sa = stride(a, L->ia), *sb = stride(a, L->ib);
    if (a->bad) return;
    int b = tl_dtype_bpe(t[0]);
    set_bpe(g, b, b, b, b);
    g->precision = tl_dtype_precision(t[0]);
    if (L->batched) p_bmnk(a->r, g);
    else p_mnk(a->r, g);
    p_strides(a->r, sa, sb);
    p_types(a->r, "dtype_A_B", t, 2);
}

static void parse_mm(rd *a, gemm *g) { parse_aten(a, g, &(aten_layout){0, 1, 0, 0}); }
static void parse_addmm(rd *a, gemm *g) { parse_aten(a, g, &(aten_layout){1, 2, 0, 1}); }
static void parse_bmm(rd *a, gemm *g) { parse_aten(a, g, &(aten_layout){0, 1, 1, 0}); }
static void parse_baddbmm(rd *a, gemm *g) { parse_aten(a, g, &(aten_layout){1, 2, 1, 1}); }

GEMM_CLASS(aten_mm, parse_mm);
GEMM_CLASS(aten_addmm, parse_addmm);
GEMM_CLASS(aten_bmm, parse_bmm);
GEMM_CLASS(aten_baddbmm, parse_baddbmm);

/* TEv2 pseudo ops: shapes as mm, T[0] == T[1] or ValueError, output 2 bytes. */
static void parse_tev2(rd *a, gemm *g)
{
    parse_mm(a, g);
    if (a->bad) return;
    const char *t0 = type_opt(a, 0), *t1 = type_opt(a, 1);
    if ((t0 || t1) && !(t0 && t1 && !strcmp(t0, t1))) fail(a, "ValueError: A and B dtypes differ", -1);
    g->bpe_out = 2;
}

GEMM_CLASS(tev2_pseudo_gemm, parse_tev2);

/* --- aten::_scaled_mm, trtllm::cublas_scaled_mm, bitsandbytes::int8_linear_matmul */

static int name_is(const rd *a, const char *name) { return a->ev->name && !strcmp(a->ev->name, name); }

static void parse_scaled_mm(rd *a, gemm *g)
{
    g->M = dim(a, 0, 0), g->K = dim(a, 0, 1);
    /* [FIX] bitsandbytes' weight is [N, K] */
    g->N = name_is(a, "bitsandbytes::int8_linear_matmul") ? dim(a, 1, 0) : dim(a, 1, 1);
    /* [FIX] _scaled_mm(self, mat2, scale_a, scale_b, bias?, ...) */
    g->bias = name_is(a, "aten::_scaled_mm") && has_tensor(a, 4);
    const char *t[2] = {type(a, 0), type(a, 1)};
    const tl_pv *sa = stride(a, 0), *sb = stride(a, 1);
    int ba = tl_dtype_bpe(t[0]);
    need_bpe(a, ba && tl_dtype_bpe(t[1]), "AssertionError: unknown A/B dtype");
    if (a->bad) return;
    int out = ba == 1 ? 2 : (ba == 2 || ba == 4) ? ba : 0;
    int bias_bpe = g->bias && tl_dtype_bpe(type_opt(a, 4)) ? tl_dtype_bpe(type_opt(a, 4)) : ba;
    set_bpe(g, ba, ba, bias_bpe, out);
    g->precision = tl_dtype_precision(t[0]);
    p_mnk(a->r, g);
    p_strides(a->r, sa, sb);
    p_types(a->r, "dtype_A_B", t, 2);
}

GEMM_CLASS(aten_scaled_mm, parse_scaled_mm);

/* --- tex_ts::te_gemm_ts (A = D[0], B = D[5], out = D[10]) --------------- */

static int concrete_is(rd *a, size_t i, const char *text)
{
    const char *s = tl_pv_cstr(concrete(a, i));
    return s && !strcmp(s, text);
}

static void parse_te_gemm_ts(rd *a, gemm *g)
{
    const tl_pv *A = shape(a, 0), *B = shape(a, 5);
    int ta = concrete_is(a, 4, "1"), tb = concrete_is(a, 9, "1");
    const tl_pv *cb = concrete(a, 14);
    g->M = elem(a, A, ta ? 0 : 1), g->K = elem(a, A, ta ? 1 : 0);
    g->N = elem(a, B, tb ? 1 : 0);
    g->bias = !(cb && cb->kind == TL_PV_STR && cb->n == 0); /* C[14] != "" */
    const char *t[4] = {type(a, 0), type(a, 5), type(a, 10), type(a, 18)};
    const tl_pv *sa = stride(a, 0), *sb = stride(a, 5);
    if (a->bad) return;
    set_bpe(g, tl_dtype_bpe(t[0]), tl_dtype_bpe(t[1]), tl_dtype_bpe(t[3]), tl_dtype_bpe(t[2]));
    g->precision = tl_dtype_precision(t[0]);
    p_mnk(a->r, g);
    p_strides(a->r, sa, sb);
    p_types(a->r, "dtype_A_B", t, 4);
}

GEMM_CLASS(tex_ts_te_gemm_ts, parse_te_gemm_ts);

/* --- vllm::gemm_with_dynamic_quant: the first two 2-D entries ----------- */

static int is_2d(const tl_pv *s) { return tl_pv_is_list(s) && s->n == 2; }

static void parse_dynamic_quant(rd *a, gemm *g)
{
    size_t found[2] = {0, 1}, nf = 0;
    for (size_t i = 0; i < tl_pv_len(a->ev->dims) && nf < 2; i++)
        if (is_2d(tl_pv_at(a->ev->dims, i))) found[nf++] = i;
    if (nf < 2) found[0] = 0, found[1] = 1;
    const tl_pv *A = shape(a, found[0]), *B = shape(a, found[1]);
    if (!a->bad && !(is_2d(A) && is_2d(B))) fail(a, "ValueError: A and B must be 2-D", -1);
    g->M = elem(a, A, 0), g->K = elem(a, A, 1), g->N = elem(a, B, 0);
    if (!a->bad && tl_pv_len(a->ev->types) < 2) fail(a, "ValueError: fewer than 2 input types", -1);
    if (a->bad) return;
    const char *t[2] = {type_opt(a, 0), type_opt(a, 1)};
    int b = tl_dtype_bpe(t[0]);
    set_bpe(g, b, b, b, b);
    g->precision = tl_dtype_precision(t[0]);
    p_mnk(a->r, g);
    p_types(a->r, "dtype_A_B", t, 2);
}

GEMM_CLASS(vllm_gemm_with_dynamic_quant, parse_dynamic_quant);

/* --- FP8 / FP4 scaled GEMMs ------------------------------------------ */

/* parse_bool of hipblaslt: bools stay, None/absent -> False, strings by
 * text ("true"/"1" True, "false"/"0"/"" False), else Python truthiness. */
static int parse_bool(const tl_pv *v)
{
    if (!v || v->kind == TL_PV_NULL) return 0;
    if (v->kind != TL_PV_STR) return tl_pv_nonempty(v);
    const char *s = v->s, *e = v->s + v->n;
    while (s < e && (*s == ' ' || (*s >= '\t' && *s <= '\r'))) s++;
    while (e > s && (e[-1] == ' ' || (e[-1] >= '\t' && e[-1] <= '\r'))) e--;
    size_t n = (size_t)(e - s);
    if ((n == 4 && !strncasecmp(s, "true", 4)) || (n == 1 && *s == '1')) return 1;
    if ((n == 5 && !strncasecmp(s, "false", 5)) || (n == 1 && *s == '0') || n == 0) return 0;
    return 1;
}

/* hipblaslt_gemm_fp8/fp4 (A, scaleA_inv, B, scaleB_inv, out_dtype, transA,
 * transB, transC, granularity); fp4 doubles the packed K. */
static void parse_hipblaslt(rd *a, gemm *g, int fp4)
{
    const tl_pv *A = shape(a, 0), *B = shape(a, 2);
    int ta = parse_bool(tl_pv_at(a->ev->concrete, 5)), tb = parse_bool(tl_pv_at(a->ev->concrete, 6));
    int tc = parse_bool(tl_pv_at(a->ev->concrete, 7));
    const tl_pv *x = tc ? B : A, *y = tc ? A : B;
    int ea = tc ? !tb : ta, eb = tc ? !ta : tb;
    g->M = elem(a, x, ea ? 1 : 0), g->K = elem(a, x, ea ? 0 : 1);
    g->N = elem(a, y, eb ? 0 : 1);
    const char *t[2] = {type(a, 0), type(a, 2)};
    const char *sa = type(a, 1), *sb = type(a, 3);
    int ba = tl_dtype_bpe(t[0]), bb = tl_dtype_bpe(t[1]);
    need_bpe(a, ba && bb, fp4 ? "TypeError: unknown A/B dtype" : "AssertionError: unknown A/B dtype");
    if (a->bad) return;
    if (fp4) {
        g->K *= 2;
        g->bpe_a = ba, g->bpe_b = bb, g->bpe_sa = tl_dtype_bpe_or(sa, 1), g->bpe_sb = tl_dtype_bpe_or(sb, 1);
        g->bytes = bytes_fp4;
    } else {
        set_bpe(g, ba, bb, ba, ba == 1 ? 2 : ba);
    }
    g->precision = tl_dtype_precision(t[0]);
    p_mnk(a->r, g);
    tl_pm_bool(a->r, "transA", ta);
    tl_pm_bool(a->r, "transB", tb);
    tl_pm_bool(a->r, "transC", tc);
    p_types(a->r, "dtype_A_B", t, 2);
    tl_pm_str(a->r, "dtype_scaleA", sa);
    tl_pm_str(a->r, "dtype_scaleB", sb);
}

static void parse_hipblaslt_fp8(rd *a, gemm *g) { parse_hipblaslt(a, g, 0); }
static void parse_hipblaslt_fp4(rd *a, gemm *g) { parse_hipblaslt(a, g, 1); }

GEMM_CLASS(hipblaslt_gemm_fp8, parse_hipblaslt_fp8);
GEMM_CLASS(hipblaslt_gemm_fp4, parse_hipblaslt_fp4);

/* aiter::gemm_a4w4 (A, B, scaleA, scaleB, out, ...): NT, K = 2·A[1]. */
static void parse_a4w4(rd *a, gemm *g)
{
    g->M = dim(a, 0, 0), g->K = 2 * dim(a, 0, 1), g->N = dim(a, 1, 0);
    const char *t[2] = {type(a, 0), type(a, 1)};
    const char *sa = type(a, 2), *sb = type(a, 3);
    g->bpe_a = need_bpe(a, tl_dtype_bpe(t[0]), "TypeError: unknown A dtype");
    g->bpe_b = need_bpe(a, tl_dtype_bpe(t[1]), "TypeError: unknown B dtype");
    if (a->bad) return;
    g->bpe_sa = tl_dtype_bpe_or(sa, 1), g->bpe_sb = tl_dtype_bpe_or(sb, 1);
    g->bytes = bytes_fp4;
    g->precision = tl_dtype_precision(t[0]);
    p_mnk(a->r, g);
    p_types(a->r, "dtype_A_B", t, 2);
    tl_pm_str(a->r, "dtype_scaleA", sa);
    tl_pm_str(a->r, "dtype_scaleB", sb);
}

GEMM_CLASS(aiter_gemm_a4w4, parse_a4w4);

/* --- extension GEMMs (§4.9) ---------------------------------------------- */

/* x = [M, K], weight = [N, K]. */
static void dims_nt(rd *a, gemm *g)
{
    g->M = dim(a, 0, 0), g->K = dim(a, 0, 1), g->N = dim(a, 1, 0);
}

/* The a8w8 blockscale extras (only when len(D) > 3). */
static void p_blockscale(rd *a, const gemm *g)
{
    int64_t kb = dim(a, 2, -1), nb = dim(a, 3, 0);
    if (!a->bad && (!kb || !nb)) fail(a, "ZeroDivisionError: scale dims", -1);
    if (a->bad) return;
    const char *st = type_opt(a, 2);
    tl_pm_str(a->r, "quant_scheme", "a8w8_blockscale");
    tl_pm_str(a->r, "quant_granularity", "per_block");
    tl_pm_int(a->r, "block_k", tl_ceil_div(g->K, kb));
    tl_pm_int(a->r, "block_n", tl_ceil_div(g->N, nb));
    tl_pm_str(a->r, "scale_dtype", st && *st ? st : "float32");
    tl_pm_int_tuple(a->r, "output_shape", (const int64_t[]){g->M, g->N}, 2);
    tl_pm_str(a->r, "output_dtype", "c10::bfloat16");
}

static void parse_a8w8_blockscale(rd *a, gemm *g)
{
    dims_nt(a, g);
    const char *t[3] = {type_or_empty(a, 0), type_or_empty(a, 1), "c10::bfloat16"};
    int b0 = need_bpe(a, tl_dtype_bpe(t[0]), "TypeError: unknown A dtype");
    int b1 = need_bpe(a, tl_dtype_bpe(t[1]), "TypeError: unknown B dtype");
    if (a->bad) return;
    set_bpe(g, b0, b1, 2, 2);
    g->precision = tl_dtype_precision(t[0]);
    p_bmnk(a->r, g);
    p_types(a->r, "dtype_A_B", t, 3);
    if (tl_pv_len(a->ev->dims) > 3) p_blockscale(a, g);
}

GEMM_CLASS(gemm_a8w8_blockscale, parse_a8w8_blockscale);

/* vllm::rocm_unquantized_gemm (x [M,K], weight [N,K], bias [N]?). */
static void parse_rocm_unquantized(rd *a, gemm *g)
{
    dims_nt(a, g);
    g->bias = has_tensor(a, 2);
    const char *t2 = type_opt(a, 2);
    const char *t[3] = {type(a, 0), type(a, 1), t2 ? t2 : ""};
    if (a->bad) return;
    int out = tl_dtype_bpe(g->bias ? t[2] : t[1]);
    set_bpe(g, tl_dtype_bpe(t[0]), tl_dtype_bpe(t[1]), out, out);
    g->precision = tl_dtype_precision(t[0]);
    p_mnk(a->r, g);
    p_types(a->r, "dtype_A_B", t, 3);
}

GEMM_CLASS(vllm_rocm_unquantized_gemm, parse_rocm_unquantized);

/* The aiter a16w16 family differ only in the bias slot and output dtype. */
typedef enum { A16_PLAIN, A16_ATOMIC, A16_ASM } a16_kind;

static const char *a16_out_dtype(const rd *a, a16_kind kind)
{
    const char *t0 = type_opt(a, 0), *t2 = type_opt(a, 2);
    switch (kind) {
    case A16_ATOMIC: return tl_pv_len(a->ev->types) > 3 ? type_opt(a, 3) : "c10::bfloat16";
    case A16_ASM: return tl_dtype_bpe(t2) ? t2 : t0;
    default: return t0;
    }
}

static void parse_a16w16(rd *a, gemm *g, a16_kind kind)
{
    dims_nt(a, g);
    g->bias = kind != A16_ATOMIC && has_tensor(a, 2);
    const char *t[3] = {type(a, 0), type(a, 1), NULL};
    if (a->bad) return;
    t[2] = a16_out_dtype(a, kind);
    int out = tl_dtype_bpe(t[2]);
    set_bpe(g, tl_dtype_bpe(t[0]), tl_dtype_bpe(t[1]), g->bias ? tl_dtype_bpe(type_opt(a, 2)) : out, out);
    g->precision = tl_dtype_precision(t[0]);
    p_bmnk(a->r, g);
    p_types(a->r, "dtype_A_B", t, 3);
}

static void parse_a16w16_plain(rd *a, gemm *g) { parse_a16w16(a, g, A16_PLAIN); }
static void parse_a16w16_atomic(rd *a, gemm *g) { parse_a16w16(a, g, A16_ATOMIC); }
static void parse_a16w16_asm(rd *a, gemm *g) { parse_a16w16(a, g, A16_ASM); }

GEMM_CLASS(gemm_a16w16, parse_a16w16_plain);
GEMM_CLASS(gemm_a16w16_atomic_, parse_a16w16_atomic);
GEMM_CLASS(gemm_a16w16_asm, parse_a16w16_asm);

/* aiter::gemm_afp4wfp4_: K = 2·D[0][1], precision fp4. */
static void parse_afp4wfp4(rd *a, gemm *g)
{
    dims_nt(a, g);
    g->K *= 2;
    const char *t[2] = {type(a, 0), type(a, 1)};
    if (a->bad) return;
    g->bytes = bytes_afp4wfp4;
    g->precision = "fp4";
    p_bmnk(a->r, g);
    p_types(a->r, "dtype_A_B", t, 2);
}

GEMM_CLASS(gemm_afp4wfp4, parse_afp4wfp4);

/* aiter::batched_gemm_a16wfp4_: x [B, M, K], w [B, N, K/2]. */
static void parse_batched_a16wfp4(rd *a, gemm *g)
{
    g->B = dim(a, 0, 0), g->M = dim(a, 0, 1), g->K = dim(a, 0, 2), g->N = dim(a, 1, 1);
    const char *t[2] = {type(a, 0), type(a, 1)};
    g->bpe_a = need_bpe(a, tl_dtype_bpe(t[0]), "TypeError: unknown A dtype");
    if (a->bad) return;
    g->bytes = bytes_a16wfp4;
    g->precision = "fp4";
    p_bmnk(a->r, g);
    p_types(a->r, "dtype_A_B", t, 2);
}

GEMM_CLASS(batched_gemm_a16wfp4, parse_batched_a16wfp4);

/* sglang batched a8w8: w [B, N, K]; x [B, M, K] or [M, B, K]. */
static void parse_batched_a8w8(rd *a, gemm *g)
{
    g->B = dim(a, 1, 0), g->N = dim(a, 1, 1), g->K = dim(a, 0, 2);
    g->M = dim(a, 0, 0) == g->B ? dim(a, 0, 1) : dim(a, 0, 0);
    const char *t[2] = {type(a, 0), type(a, 1)};
    int b0 = need_bpe(a, tl_dtype_bpe(t[0]), "TypeError: unknown A dtype");
    int b1 = need_bpe(a, tl_dtype_bpe(t[1]), "TypeError: unknown B dtype");
    if (a->bad) return;
    set_bpe(g, b0, b1, 2, 2);
    g->precision = tl_dtype_precision(t[1]);
    p_bmnk(a->r, g);
    p_types(a->r, "dtype_A_B", t, 2);
}

GEMM_CLASS(batched_gemm_a8w8, parse_batched_a8w8);

/* --- grouped GEMM (§4.7) -------------------------------------------------- */

typedef struct gg_group {
    int64_t m, k, n;
} gg_group;

typedef TL_VEC(gg_group) gg_groups;

/* A positive int of a pair or compact shape. */
static int pos_int(const tl_pv *v, int64_t *out)
{
    return tl_pv_int(v, out) && *out > 0 && *out <= DIM_LIMIT;
}

/* Every [x, y] of positive ints found recursively (stored as m = x, k = y). */
static void find_pairs(const tl_pv *v, gg_groups *out, int depth)
{
    if (!tl_pv_is_list(v) || depth > 64) return;
    int64_t x, y;
    if (v->n == 2 && pos_int(&v->items[0], &x) && pos_int(&v->items[1], &y)) {
        TL_PUSH(*out, ((gg_group){x, y, 0}));
        return;
    }
    for (size_t i = 0; i < v->n; i++) find_pairs(&v->items[i], out, depth + 1);
}

/* Compact grouped_gemm: D[0] = [M, K, ...], D[1] = [G, K, N] or [G, N, K]. */
static int gg_compact(const tl_pv *d0, const tl_pv *d1, int64_t *M, int64_t *K, int64_t *N, int64_t *G)
{
    int64_t g, x, y;
    if (tl_pv_len(d0) < 2 || tl_pv_len(d1) != 3) return 0;
    if (!pos_int(&d0->items[0], M) || !pos_int(&d0->items[1], K)) return 0;
    if (!pos_int(&d1->items[0], &g) || !pos_int(&d1->items[1], &x) || !pos_int(&d1->items[2], &y)) return 0;
    if (x == *K) *N = y;
    else if (y == *K) *N = x;
    else return 0;
    *G = g;
    return 1;
}

/* Zipped grouped_gemm: pairs (M_i, K) in D[0], (K, N) in D[1]. */
static int gg_zipped(const tl_pv *d0, const tl_pv *d1, int64_t *M, int64_t *K, int64_t *N, int64_t *G)
{
    gg_groups p = {0}, q = {0};
    find_pairs(d0, &p, 0);
    find_pairs(d1, &q, 0);
    int ok = p.n && p.n == q.n;
    int64_t sum = 0;
    for (size_t i = 0; ok && i < p.n; i++) {
        ok = p.v[i].k == p.v[0].k && q.v[i].m == p.v[0].k && q.v[i].k == q.v[0].k;
        sum += p.v[i].m;
    }
    if (ok) *M = sum, *K = p.v[0].k, *N = q.v[0].k, *G = (int64_t)p.n;
    free(p.v);
    free(q.v);
    return ok;
}

/* Variable-K groups: compact [[M, K], [M, N]] is one group; zipped pairs
 * a_i = (M_i, K_i), b_i = (K_i, N_i) with a_i[1] == b_i[0]. */
static int gg_variable_k(const tl_pv *d0, const tl_pv *d1, gg_groups *out)
{
    int64_t m, k, m2, n;
    if (tl_pv_len(d0) == 2 && tl_pv_len(d1) == 2 && pos_int(&d0->items[0], &m) && pos_int(&d0->items[1], &k) &&
        pos_int(&d1->items[0], &m2) && pos_int(&d1->items[1], &n) && m == m2) {
        TL_PUSH(*out, ((gg_group){m, k, n}));
        return 1;
    }
    gg_groups p = {0}, q = {0};
    find_pairs(d0, &p, 0);
    find_pairs(d1, &q, 0);
    int ok = p.n && p.n == q.n;
    for (size_t i = 0; ok && i < p.n; i++) {
        ok = p.v[i].k == q.v[i].m;
        if (ok) TL_PUSH(*out, ((gg_group){p.v[i].m, p.v[i].k, q.v[i].k}));
    }
    free(p.v);
    free(q.v);
    return ok;
}

/* bpe_in = bpe(T[0]); bpe_out = bpe(T[1]) when T[1] is given, else bpe_in. */
static void gg_bpe(rd *a, int *in, int *out)
{
    const char *t1 = type_opt(a, 1);
    *in = tl_dtype_bpe(type(a, 0));
    *out = t1 && *t1 ? tl_dtype_bpe(t1) : *in;
    need_bpe(a, *in && *out, "TypeError: unknown grouped GEMM dtype");
}

static int gg_finish(tl_perf_result *r, const rd *a, i128 flops, i128 bytes)
{
    r->flops = (double)flops;
    tl_perf_set_bytes(r, (double)bytes);
    return tl_perf_ok(r, "matrix", type_opt(a, 0));
}

static int gg_fail(tl_perf_result *r)
{
    r->n_params = 0;
    return r->status;
}

static int fn_grouped(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    if (bwd) return tl_perf_not_implemented(r);
    rd a = {ev, r, 0};
    const tl_pv *d0 = shape(&a, 0), *d1 = shape(&a, 1);
    int64_t M = 0, K = 0, N = 0, G = 0;
    if (!a.bad && !gg_compact(d0, d1, &M, &K, &N, &G) && !gg_zipped(d0, d1, &M, &K, &N, &G))
        fail(&a, "ValueError: unrecognised grouped GEMM shapes", -1);
    int bin = 0, bout = 0;
    gg_bpe(&a, &bin, &bout);
    if (a.bad) return gg_fail(r);
    tl_pm_int(r, "M", M);
    tl_pm_int(r, "K", K);
    tl_pm_int(r, "N", N);
    tl_pm_int(r, "G", G);
    tl_pm_int(r, "bpe_in", bin);
    tl_pm_int(r, "bpe_out", bout);
    i128 flops = 2 * (i128)M * K * N;
    i128 bytes = ((i128)M * K + (i128)G * K * N) * bin + (i128)M * N * bout;
    return gg_finish(r, &a, flops, bytes);
}

/* group_pairs: ((M_1, K_1, N_1), ...). */
static void p_groups(tl_perf_result *r, const gg_groups *gs)
{
    tl_sbuf j;
    tl_sb_init(&j);
    tl_sb_putc(&j, '[');
    for (size_t i = 0; i < gs->n; i++)
        tl_sb_printf(&j, "%s[%lld,%lld,%lld]", i ? "," : "", (long long)gs->v[i].m, (long long)gs->v[i].k,
                     (long long)gs->v[i].n);
    tl_sb_putc(&j, ']');
    tl_pm_pv(r, "group_pairs", tl_pv_parse(r->arena, j.s));
    tl_sb_free(&j);
}

static int fn_grouped_variable_k(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    if (bwd) return tl_perf_not_implemented(r);
    rd a = {ev, r, 0};
    gg_groups gs = {0};
    const tl_pv *d0 = shape(&a, 0), *d1 = shape(&a, 1);
    if (!a.bad && !gg_variable_k(d0, d1, &gs)) fail(&a, "ValueError: unrecognised variable-K shapes", -1);
    int bin = 0, bout = 0;
    gg_bpe(&a, &bin, &bout);
    if (a.bad) {
        free(gs.v);
        return gg_fail(r);
    }
    i128 flops = 0, bytes = 0;
    int64_t M = 0;
    for (size_t i = 0; i < gs.n; i++) {
        const gg_group *g = &gs.v[i];
        M += g->m;
        flops += 2 * (i128)g->m * g->k * g->n;
        bytes += ((i128)g->m * g->k + (i128)g->k * g->n) * bin + (i128)g->m * g->n * bout;
    }
    tl_pm_int(r, "M", M);
    tl_pm_int(r, "K", gs.v[0].k);
    tl_pm_int(r, "N", gs.v[0].n);
    tl_pm_int(r, "G", (int64_t)gs.n);
    tl_pm_int(r, "bpe_in", bin);
    tl_pm_int(r, "bpe_out", bout);
    p_groups(r, &gs);
    free(gs.v);
    return gg_finish(r, &a, flops, bytes);
}

const tl_perf_class tl_pc_primus_turbo_grouped_gemm = {
    "primus_turbo_grouped_gemm", "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM", 0, fn_grouped, 0};
const tl_perf_class tl_pc_primus_turbo_grouped_gemm_variable_k = {
    "primus_turbo_grouped_gemm_variable_k", "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM", 0,
    fn_grouped_variable_k, 0};
