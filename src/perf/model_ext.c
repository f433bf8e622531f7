/* model_ext.c — extension perf models (perf-model spec §4.9): activations,
 * GroupQuant, RoPE, RMSNorm extensions, custom collectives, mHC and
 * mixed_sample_outer_exponential. (The §4.8 primus quantizers live with the
 * unary models in model_elementwise.c.)
 * Families of near-identical classes share one function driven by a small
 * per-class spec (input slots, flops per element, variant).
 *
 * Integer formulas are exact in int64_t and converted to double once;
 * where the spec has a true division (RMSNorm rows = E / C, the 0.5-byte
 * quantizer terms, the 2.59375 constant) the double steps follow the
 * spec's operation order. A dtype of unknown size makes bytes None
 * (has_bytes = 0) unless the spec gives a default ("bpe or 2"). */
#include <string.h>
#include <strings.h>

#include "model_ext.h"
#include "perf_util.h"

/* ======================================================================
 * Shared bits
 * ====================================================================== */

#define CLASS(cls, cat, sheet, fn) const tl_perf_class tl_pc_##cls = {#cls, cat, NULL, sheet, 0, fn, 0}

static void pm_dtypes(tl_perf_result *r, const char *key, const char *a, const char *b, const char *c, size_t n)
{
    const char *items[3] = {a, b, c};
    tl_pm_str_tuple(r, key, items, n);
}

/* ======================================================================
 * Activations: act_and_mul(out, input) — out = D[0] (inter_dim), input 2x wide
 * ====================================================================== */

static int act_and_mul(const tl_perf_event *ev, tl_perf_result *r, int64_t flops_per_elem)
{
    tl_px p;
    tl_px_init(&p, ev, r);
    const tl_pv *shape = tl_px_shape(&p, 0);
    const char *dout = tl_px_type(&p, 0), *din = tl_px_type(&p, 1);
    if (tl_px_done(&p)) return r->status;
    tl_pm_unary(r, shape, din, dout, tl_px_stride(&p, 1), tl_px_stride(&p, 0));
    int64_t n = tl_pv_prod(shape);
    int bi = tl_dtype_bpe(din), bo = dout ? tl_dtype_bpe(dout) : bi;
    r->flops = (double)(flops_per_elem * n);
    if (bi && bo) tl_perf_set_bytes(r, (double)(2 * n * bi + n * bo));
    return tl_perf_ok(r, "vector", din);
}

#define ACT_CLASS(cls, k)                                                        \
    static int cls##_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)     \
    {                                                                            \
        (void)bwd;                                                               \
        return act_and_mul(ev, r, k);                                            \
    }                                                                            \
    CLASS(cls, "elementwise", "UnaryElementwise", cls##_fn)

ACT_CLASS(aiter_silu_and_mul, 5);
ACT_CLASS(sgl_kernel_silu_and_mul, 5);
ACT_CLASS(aiter_gelu_and_mul, 8);
ACT_CLASS(aiter_gelu_tanh_and_mul, 10);

/* ======================================================================
 * GroupQuant
 * ====================================================================== */

/* per_group_quant(out, input, scales, ...): binary-elementwise params with
 * in1 = input, in2 = scales, out = out; flops = n_out * 2.59375. */
static int per_group_quant_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    const tl_pv *out = tl_px_shape(&p, 0), *in1 = tl_px_shape(&p, 1), *in2 = tl_px_shape(&p, 2);
    const char *dout = tl_px_type(&p, 0), *d1 = tl_px_type(&p, 1), *d2 = tl_px_type(&p, 2);
    if (tl_px_done(&p)) return r->status;
    tl_pm_pv(r, "shape_in1", in1);
    tl_pm_pv(r, "shape_in2", in2);
    pm_dtypes(r, "dtype_in1_in2_out", d1, d2, dout, 3);
    tl_pm_pv(r, "stride_input1", tl_px_stride(&p, 1));
    tl_pm_pv(r, "stride_input2", tl_px_stride(&p, 2));
    tl_pm_pv(r, "stride_output", tl_px_stride(&p, 0));
    int64_t n_out = tl_pv_prod(out);
    int bo = tl_dtype_bpe(dout), b1 = tl_dtype_bpe(d1), b2 = tl_dtype_bpe(d2);
    r->flops = (double)n_out * 2.59375;
    if (bo && b1 && b2) tl_perf_set_bytes(r, (double)(n_out * bo + tl_pv_prod(in1) * b1 + tl_pv_prod(in2) * b2));
    return tl_perf_ok(r, "vector", d1);
}

/* group_size = int(C[1]) when given (not empty, not "none"), else 128. */
static int64_t quant_group_size(tl_px *p)
{
    const char *c = tl_pe_concrete(p->ev, 1);
    if (!c || !*c || !strcasecmp(c, "none")) return 128;
    int64_t gs = 0;
    if (!tl_py_int(c, &gs)) tl_px_fail(p, "group_size %.40s is not an int", c);
    else if (gs == 0) tl_px_fail(p, "group_size is 0");
    return gs;
}

/* vllm::triton_per_token_group_quant_fp8(x, group_size, ...): x = [.., N]. */
static int per_token_group_quant_fp8_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    const tl_pv *x = tl_px_shape(&p, 0);
    const char *din = tl_px_type(&p, 0);
    int64_t gs = p.bad ? 0 : quant_group_size(&p);
    if (tl_px_done(&p)) return r->status;
    int64_t M = 1, N = 1;
    if (x->n >= 1) {
        tl_pv_int(tl_pv_item(x, -1), &N);
        for (size_t i = 0; i + 1 < x->n; i++) {
            int64_t d = 1;
            tl_pv_int(&x->items[i], &d);
            M *= d;
        }
    }
    int64_t ng = tl_ceil_div(N, gs);
    if (ng < 1) ng = 1;
    tl_pm_int(r, "M", M);
    tl_pm_int(r, "N", N);
    tl_pm_int(r, "group_size", gs);
    tl_pm_int(r, "num_groups", ng);
    tl_pm_str(r, "dtype_in", din);
    int bi = tl_dtype_bpe(din);
    r->flops = (double)(6 * M * N);
    if (bi) tl_perf_set_bytes(r, (double)(M * N * bi + M * N + M * ng * 4));
    return tl_perf_ok(r, "vector", din);
}

/* mxfp4 quantizers: n elements in, n/2 bytes of fp4 out, one e8m0 scale
 * per 32 elements. `in` is the input tensor's slot. */
static int mxfp4_quant(const tl_perf_event *ev, tl_perf_result *r, long in)
{
    tl_px p;
    tl_px_init(&p, ev, r);
    const tl_pv *x = tl_px_shape(&p, in);
    const char *din = tl_px_type(&p, in);
    if (tl_px_done(&p)) return r->status;
    int64_t n = tl_pv_prod(x);
    tl_pm_pv(r, "op_shape", x);
    tl_pm_int(r, "num_elements", n);
    tl_pm_str(r, "dtype_in", din);
    int bi = tl_dtype_bpe(din);
    r->flops = (double)(2 * n);
    if (bi) tl_perf_set_bytes(r, (double)(n * bi) + (double)n * 0.5 + (double)tl_floor_div(n, 32));
    return tl_perf_ok(r, "vector", din);
}

#define MXFP4_CLASS(cls, in)                                                     \
    static int cls##_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)     \
    {                                                                            \
        (void)bwd;                                                               \
        return mxfp4_quant(ev, r, in);                                           \
    }                                                                            \
    CLASS(cls, "GroupQuant", "GroupQuant", cls##_fn)

CLASS(per_group_quant, "GroupQuant", "BinaryElementwise", per_group_quant_fn);
CLASS(vllm_triton_per_token_group_quant_fp8, "GroupQuant", "BinaryElementwise", per_token_group_quant_fp8_fn);
MXFP4_CLASS(fused_flatten_mxfp4_quant, 0);
MXFP4_CLASS(sglang_quant_dynamic_mxfp4_quant, 0);
MXFP4_CLASS(fused_dynamic_mx_quant_moe_sort_hip, 2);
MXFP4_CLASS(aiter_fused_dynamic_mxfp4_quant_moe_sort_hip, 2);
MXFP4_CLASS(aiter_dynamic_per_group_scaled_quant_fp4, 1);

/* ======================================================================
 * RoPE
 * ====================================================================== */

static int rope_finish(tl_perf_result *r, int64_t n, const char *dtype)
{
    tl_pm_int(r, "num_elements", n);
    r->flops = (double)(3 * n);
    tl_perf_set_bytes(r, (double)(2 * n * tl_dtype_bpe_or(dtype, 2)));
    return tl_perf_ok(r, "vector", dtype);
}

/* aiter::rope_cached_positions_2c_fwd_impl: x = D[2], y = D[3]. */
static int rope_cached_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    const tl_pv *x = tl_px_shape(&p, 2), *y = tl_px_shape(&p, 3);
    if (tl_px_done(&p)) return r->status;
    return rope_finish(r, tl_pv_prod(x) + tl_pv_prod(y), tl_pe_type(ev, 0));
}

/* head_size = int(C[3]) when given, else q[-1]. */
static int64_t rotary_head_size(tl_px *p)
{
    const char *c = tl_pe_concrete(p->ev, 3);
    int64_t h = 0;
    if (c && *c) {
        if (!tl_py_int(c, &h)) tl_px_fail(p, "head_size %.40s is not an int", c);
    } else {
        h = tl_px_dim(p, 1, -1);
    }
    if (!p->bad && h == 0) tl_px_fail(p, "head_size is 0");
    return h;
}

/* sgl_kernel::rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox). */
static int rotary_embedding_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    int64_t q0 = tl_px_dim(&p, 1, 0), q1 = tl_px_dim(&p, 1, 1), k1 = tl_px_dim(&p, 2, 1);
    int64_t head = p.bad ? 1 : rotary_head_size(&p);
    int64_t rot = head;
    const tl_pv *cache = tl_pv_item(ev->dims, 4);
    if (tl_pv_len(cache) > 1) rot = tl_px_dim(&p, 4, 1);
    if (tl_px_done(&p)) return r->status;
    int64_t n = q0 * (tl_floor_div(q1, head) + tl_floor_div(k1, head)) * rot;
    return rope_finish(r, n, tl_pe_type(ev, 1));
}

/* fused_qk_rope_{cat,concat}_and_cache_mla: q_nope (T, QH, D_lora) = D[0],
 * D_pe = D[1][2]; reads q and k (nope + pe), writes q_out and the kv cache. */
typedef struct qk_rope_spec {
    int concat; /* KH = 1 and a separate q_out dtype (T[5]) */
} qk_rope_spec;

static int qk_rope(const tl_perf_event *ev, tl_perf_result *r, const qk_rope_spec *s)
{
    tl_px p;
    tl_px_init(&p, ev, r);
    int64_t tqd[3];
    tl_px_unpack(&p, 0, tqd, 3);
    int64_t Dpe = tl_px_dim(&p, 1, 2), KH = s->concat ? 1 : tl_px_dim(&p, 2, 1);
    const char *din = tl_px_type(&p, 0);
    if (tl_px_done(&p)) return r->status;
    const char *dkv = tl_px_type_opt(ev, 4), *dout = s->concat ? tl_px_type_opt(ev, 5) : NULL;
    if (!dkv) dkv = din;
    if (!dout) dout = din;
    int64_t T = tqd[0], QH = tqd[1], Dl = tqd[2], D = Dl + Dpe;
    tl_pm_int(r, "T", T);
    tl_pm_int(r, "QH", QH);
    tl_pm_int(r, "KH", KH);
    tl_pm_int(r, "D_lora", Dl);
    tl_pm_int(r, "D_pe", Dpe);
    tl_pm_str(r, "dtype_in", din);
    tl_pm_str(r, "dtype_kv", dkv);
    if (s->concat) tl_pm_str(r, "dtype_out", dout);
    int bi = tl_dtype_bpe(din), bkv = tl_dtype_bpe(dkv), bo = tl_dtype_bpe(dout);
    r->flops = (double)(3 * (T * QH * Dpe + T * KH * Dpe));
    if (bi && bkv && bo)
        tl_perf_set_bytes(r, (double)((T * QH * D + T * KH * D) * bi + T * QH * D * bo + T * KH * D * bkv));
    return tl_perf_ok(r, "vector", din);
}

static int qk_rope_cat_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    static const qk_rope_spec s = {0};
    return qk_rope(ev, r, &s);
}

static int qk_rope_concat_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    static const qk_rope_spec s = {1};
    return qk_rope(ev, r, &s);
}

CLASS(aiter_rope_cached_positions_2c_fwd_impl, "RoPE_fwd", "RoPE", rope_cached_fn);
CLASS(sgl_kernel_rotary_embedding, "RoPE_fwd", "RoPE", rotary_embedding_fn);
CLASS(aiter_fused_qk_rope_cat_and_cache_mla, "RoPE_fwd", "FusedRoPE", qk_rope_cat_fn);
CLASS(fused_qk_rope_concat_and_cache_mla, "RoPE_fwd", "FusedRoPE", qk_rope_concat_fn);

/* ======================================================================
 * RMSNorm extensions: the §4.6 RMSNorm (affine) plus per-variant extras
 * ====================================================================== */

typedef enum rms_kind {
    RMS_PLAIN,      /* rms; 2E + C */
    RMS_ADD,        /* E + rms; 4E + C */
    RMS_DYNQUANT,   /* rms + 2E; E + C + E*1 + rows*4 */
    RMS_QUANT,      /* rms + 2E; group scales, gs = int(C[arg]) or C */
    RMS_FP8_GROUP,  /* rms + 2E; group scales, gs = int(C[arg]) */
    RMS_FP8_GROUP_ADD, /* rms + 3E; 3E + C + group scales */
    RMS_PAD,        /* E + rms; padded output, pad = int(C[arg]) */
    RMS_MXFP4,      /* fused_rms_mxfp4_quant */
} rms_kind;

typedef struct rms_spec {
    long in, weight; /* input slot; weight slot (C = D[weight][0]) */
    rms_kind kind;
    long arg;        /* Concrete Inputs slot of group_size / pad */
} rms_spec;

typedef struct rms_ctx {
    int64_t E, C, rows_int, bpe;
    double rms;      /* RMSNorm forward flops with affine */
} rms_ctx;

/* int(C[slot]); lenient: 0 when absent or unparseable. */
static int64_t concrete_int_or0(const tl_perf_event *ev, long slot)
{
    int64_t v = 0;
    return tl_py_int(tl_pe_concrete(ev, slot), &v) ? v : 0;
}

/* Bytes of the per-group scales: rows * ceil(C / gs) * 4. */
static int64_t group_scale_bytes(const rms_ctx *c, int64_t gs) { return c->rows_int * tl_ceil_div(c->C, gs) * 4; }

static int rms_variant(const tl_perf_event *ev, tl_perf_result *r, const rms_spec *s, tl_px *p, const rms_ctx *c)
{
    int64_t E = c->E, C = c->C, b = c->bpe, rows = c->rows_int;
    double rms = c->rms;
    switch (s->kind) {
    case RMS_PLAIN:
        r->flops = rms;
        if (b) tl_perf_set_bytes(r, (double)(E * b + E * b + C * b));
        break;
    case RMS_ADD:
        r->flops = (double)E + rms;
        if (b) tl_perf_set_bytes(r, (double)(4 * E * b + C * b));
        break;
    case RMS_DYNQUANT:
        r->flops = rms + (double)(2 * E);
        if (b) tl_perf_set_bytes(r, (double)(E * b + C * b + E + rows * 4));
        break;
    case RMS_QUANT: {
        int64_t gs = concrete_int_or0(ev, s->arg);
        if (gs <= 0) gs = C;
        r->flops = rms + (double)(2 * E);
        if (b) tl_perf_set_bytes(r, (double)(E * b + C * b + E + group_scale_bytes(c, gs)));
        break;
    }
    case RMS_FP8_GROUP:
    case RMS_FP8_GROUP_ADD: {
        int64_t gs = tl_px_concrete_int(p, s->arg);
        if (!p->bad && gs == 0) tl_px_fail(p, "group_size is 0");
        if (p->bad) return tl_px_done(p);
        int add = s->kind == RMS_FP8_GROUP_ADD;
        r->flops = rms + (double)((add ? 3 : 2) * E);
        if (b) tl_perf_set_bytes(r, (double)((add ? 3 : 1) * E * b + C * b + E + group_scale_bytes(c, gs)));
        break;
    }
    case RMS_PAD: {
        int64_t pad = tl_px_concrete_int(p, s->arg);
        if (p->bad) return tl_px_done(p);
        int64_t n_out = pad > 0 ? tl_ceil_div(C, pad) * pad : C;
        r->flops = (double)E + rms;
        if (b) tl_perf_set_bytes(r, (double)(2 * E * b + C * b + rows * n_out * b + rows * C * b));
        break;
    }
    case RMS_MXFP4: {
        /* x2 (a second, un-normed input) when D[3] is 2-D; res1 (residual
         * add) when D[6] is 2-D */
        const tl_pv *x2 = tl_pv_item(ev->dims, 3), *res = tl_pv_item(ev->dims, 6);
        int has_x2 = tl_pv_len(x2) == 2, has_res = tl_pv_len(res) == 2;
        int64_t n2 = has_x2 ? tl_px_dim(p, 3, 1) : 0;
        if (p->bad) return tl_px_done(p);
        double f = rms;
        if (has_res) f += (double)(rows * C);
        if (has_x2) f += (double)(int64_t)(rms * (double)rows * (double)n2 / (double)(E > 1 ? E : 1));
        r->flops = f + (double)(2 * E);
        if (b) {
            double by = (double)(E * b + C * b) + (double)E * 0.5 + (double)tl_floor_div(E, 32);
            if (has_res) by += (double)(2 * E * b);
            if (has_x2) by += (double)(rows * n2 * b + n2 * b + rows * n2 * b);
            tl_perf_set_bytes(r, by);
        }
        break;
    }
    }
    return TL_PERF_OK;
}

static int rms_ext(const tl_perf_event *ev, tl_perf_result *r, const rms_spec *s)
{
    tl_px p;
    tl_px_init(&p, ev, r);
    const tl_pv *x = tl_px_shape(&p, s->in);
    int64_t C = tl_px_dim(&p, s->weight, 0);
    const char *din = tl_px_type(&p, s->in);
    if (!p.bad && C == 0) tl_px_fail(&p, "num_channels is 0");
    if (tl_px_done(&p)) return r->status;
    tl_pm_pv(r, "op_shape", x);
    pm_dtypes(r, "dtype_in_out", din, NULL, NULL, 2);
    tl_pm_pv(r, "stride_input", tl_px_stride(&p, s->in));
    tl_pm_none(r, "stride_output");
    tl_pm_int(r, "num_channels", C);
    tl_pm_bool(r, "has_bias", 0);
    tl_pm_bool(r, "is_affine", 1);
    tl_pm_bool(r, "is_training", 0);
    rms_ctx c = {.E = tl_pv_prod(x), .C = C, .bpe = tl_dtype_bpe(din)};
    c.rows_int = tl_floor_div(c.E, C);
    c.rms = (double)c.E / (double)C * (double)(2 * C + 2) + (double)(c.E * 2);
    r->maf = "vector";
    r->precision = tl_dtype_precision(din);
    return rms_variant(ev, r, s, &p, &c);
}

#define RMS_CLASS(cls, ...)                                                      \
    static int cls##_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)     \
    {                                                                            \
        (void)bwd;                                                               \
        static const rms_spec s = {__VA_ARGS__};                                 \
        return rms_ext(ev, r, &s);                                               \
    }                                                                            \
    CLASS(cls, "RMSNorm", "RMSNorm", cls##_fn)

RMS_CLASS(aiter_rms_norm, 0, 1, RMS_PLAIN, 0);
RMS_CLASS(aiter_rmsnorm, 1, 2, RMS_PLAIN, 0);
RMS_CLASS(aiter_rmsnorm2d_fwd_with_add_ck, 1, 4, RMS_ADD, 0);
RMS_CLASS(aiter_rmsnorm2d_fwd_with_dynamicquant_ck, 1, 3, RMS_DYNQUANT, 0);
RMS_CLASS(aiter_rmsnorm_quant, 1, 3, RMS_QUANT, 5);
RMS_CLASS(vllm_rocm_aiter_rmsnorm_fp8_group_quant, 0, 1, RMS_FP8_GROUP, 3);
RMS_CLASS(vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant, 0, 2, RMS_FP8_GROUP_ADD, 4);
RMS_CLASS(vllm_rocm_aiter_triton_add_rmsnorm_pad, 0, 1, RMS_PAD, 4);
RMS_CLASS(fused_rms_mxfp4_quant, 0, 1, RMS_MXFP4, 0);

/* ======================================================================
 * Custom collectives: no maf, no precision (no Compute Spec, no roofline)
 * ====================================================================== */

typedef enum coll_kind {
    COLL_ALLREDUCE_RMSNORM, /* in, weight (C = D[weight][0]) */
    COLL_ALLREDUCE,         /* in */
    COLL_GATHER,            /* in, out; dtype slot */
} coll_kind;

typedef struct coll_spec {
    coll_kind kind;
    long in, other, dtype; /* other: weight (rmsnorm) or out (gather) */
} coll_spec;

static int coll_gather(tl_px *p, tl_perf_result *r, const coll_spec *s)
{
    const tl_pv *in = tl_px_shape(p, s->in), *out = tl_px_shape(p, s->other);
    const char *d = tl_px_type(p, s->dtype);
    if (tl_px_done(p)) return r->status;
    tl_pm_pv(r, "input_shape", in);
    tl_pm_pv(r, "output_shape", out);
    tl_pm_str(r, "dtype", d);
    int b = tl_dtype_bpe(d);
    r->flops = 0;
    if (b) tl_perf_set_bytes(r, (double)((tl_pv_prod(in) + tl_pv_prod(out)) * b));
    return TL_PERF_OK;
}

static int collective(const tl_perf_event *ev, tl_perf_result *r, const coll_spec *s)
{
    tl_px p;
    tl_px_init(&p, ev, r);
    if (s->kind == COLL_GATHER) return coll_gather(&p, r, s);
    const tl_pv *in = tl_px_shape(&p, s->in);
    const char *d = tl_px_type(&p, s->in);
    int rmsnorm = s->kind == COLL_ALLREDUCE_RMSNORM;
    int64_t C = rmsnorm ? tl_px_dim(&p, s->other, 0) : 0;
    if (rmsnorm && !p.bad && C == 0) tl_px_fail(&p, "num_channels is 0");
    if (tl_px_done(&p)) return r->status;
    tl_pm_pv(r, "op_shape", in);
    if (rmsnorm) tl_pm_int(r, "num_channels", C);
    tl_pm_str(r, "dtype", d);
    int64_t E = tl_pv_prod(in), b = tl_dtype_bpe(d);
    r->flops = rmsnorm ? (double)(E + tl_floor_div(E, C) * (2 * C + 2) + 2 * E) : 0.0;
    if (b) tl_perf_set_bytes(r, rmsnorm ? (double)(4 * E * b + C * b) : (double)(2 * E * b));
    return TL_PERF_OK;
}

#define COLL_CLASS(cls, ...)                                                     \
    static int cls##_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)     \
    {                                                                            \
        (void)bwd;                                                               \
        static const coll_spec s = {__VA_ARGS__};                                \
        return collective(ev, r, &s);                                            \
    }                                                                            \
    CLASS(cls, "CustomCollective", "CustomCollective", cls##_fn)

COLL_CLASS(aiter_fused_allreduce_rmsnorm, COLL_ALLREDUCE_RMSNORM, 2, 6, 2);
COLL_CLASS(aiter_fused_allreduce_rmsnorm_, COLL_ALLREDUCE_RMSNORM, 0, 2, 0);
COLL_CLASS(custom_ar_all_reduce, COLL_ALLREDUCE, 1, 0, 1);
COLL_CLASS(custom_ar_qr_all_reduce, COLL_ALLREDUCE, 1, 0, 1);
COLL_CLASS(sgl_kernel_all_reduce_reg, COLL_ALLREDUCE, 1, 0, 1);
COLL_CLASS(sgl_kernel_qr_all_reduce, COLL_ALLREDUCE, 1, 0, 1);
COLL_CLASS(aiter_reduce_scatter, COLL_GATHER, 1, 2, 1);
COLL_CLASS(aiter_all_gather_reg, COLL_GATHER, 1, 2, 1);
COLL_CLASS(sgl_kernel_reg_all_gather_into_tensor, COLL_GATHER, 1, 0, 0);

/* ======================================================================
 * mHC (manifold hyper-connections): M tokens, n streams, C hidden,
 * hc3 fn rows, K = n*C, split_k partial sums
 * ====================================================================== */

typedef struct mhc_dims {
    int64_t M, n, C, hc3, K, split_k;
    int has_hc3, has_K, has_split;
    const char *dtype;
} mhc_dims;

static void mhc_params(tl_perf_result *r, const mhc_dims *d)
{
    tl_pm_int(r, "M", d->M);
    tl_pm_int(r, "n", d->n);
    tl_pm_int(r, "C", d->C);
    if (d->has_hc3) tl_pm_int(r, "hc3", d->hc3);
    if (d->has_K) tl_pm_int(r, "K", d->K);
    if (d->has_split) tl_pm_int(r, "split_k", d->split_k);
    tl_pm_str(r, "dtype", d->dtype);
}

/* Common tail: params, maf, precision; bytes only with a known dtype size. */
static int mhc_finish(tl_perf_result *r, const mhc_dims *d, const char *maf, int64_t flops, int64_t bytes_fixed,
                      int64_t bytes_per_bpe)
{
    mhc_params(r, d);
    int64_t b = tl_dtype_bpe(d->dtype);
    r->flops = (double)flops;
    if (b) tl_perf_set_bytes(r, (double)(bytes_per_bpe * b + bytes_fixed));
    return tl_perf_ok(r, maf, d->dtype);
}

/* mhc_post: (M, C) = D[1], n = D[0][1], dtype T[1]. */
static int mhc_post_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    int64_t mc[2];
    tl_px_unpack(&p, 1, mc, 2);
    mhc_dims d = {.M = mc[0], .C = mc[1], .n = tl_px_dim(&p, 0, 1), .dtype = tl_px_type(&p, 1)};
    if (tl_px_done(&p)) return r->status;
    int64_t M = d.M, n = d.n, C = d.C;
    return mhc_finish(r, &d, "vector", 2 * M * n * C * (n + 1), M * n * 4 + M * n * n * 4, M * C + 2 * M * n * C);
}

/* mhc_pre_gemm_sqrsum: (M, n, C) = D[2], (hc3, K) = D[3], split_k = D[0][0], dtype T[2]. */
static int mhc_pre_gemm_sqrsum_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    int64_t mnc[3], hk[2];
    tl_px_unpack(&p, 2, mnc, 3);
    tl_px_unpack(&p, 3, hk, 2);
    mhc_dims d = {.M = mnc[0], .n = mnc[1], .C = mnc[2], .hc3 = hk[0], .K = hk[1],
                  .split_k = tl_px_dim(&p, 0, 0), .has_hc3 = 1, .has_K = 1, .has_split = 1,
                  .dtype = tl_px_type(&p, 2)};
    if (tl_px_done(&p)) return r->status;
    int64_t M = d.M, h = d.hc3, K = d.K, s = d.split_k;
    return mhc_finish(r, &d, "matrix", 2 * M * h * K, h * K * 4 + s * M * h * 4 + s * M * 4, M * d.n * d.C);
}

/* mhc_pre_big_fuse_rmsnorm: (M, C) = D[2], n = D[0][1], hc3 = D[6][0],
 * split_k = D[3][0], dtype T[7]. */
static int mhc_pre_big_fuse_rmsnorm_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    int64_t mc[2];
    tl_px_unpack(&p, 2, mc, 2);
    mhc_dims d = {.M = mc[0], .C = mc[1], .n = tl_px_dim(&p, 0, 1), .hc3 = tl_px_dim(&p, 6, 0),
                  .split_k = tl_px_dim(&p, 3, 0), .has_hc3 = 1, .has_split = 1, .dtype = tl_px_type(&p, 7)};
    if (tl_px_done(&p)) return r->status;
    int64_t M = d.M, n = d.n, C = d.C;
    return mhc_finish(r, &d, "vector", 2 * M * C * n + 5 * M * C,
                      d.split_k * M * d.hc3 * 4 + M * n * 4 + M * n * n * 4, M * n * C + C + M * C);
}

/* mhc_fused_post_pre_gemm_sqrsum: (M, C) = D[3], n = D[2][1], (hc3, K) = D[7],
 * split_k = D[0][0], dtype T[3]. */
static int mhc_fused_post_pre_gemm_sqrsum_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    int64_t mc[2], hk[2];
    tl_px_unpack(&p, 3, mc, 2);
    tl_px_unpack(&p, 7, hk, 2);
    mhc_dims d = {.M = mc[0], .C = mc[1], .n = tl_px_dim(&p, 2, 1), .hc3 = hk[0], .K = hk[1],
                  .split_k = tl_px_dim(&p, 0, 0), .has_hc3 = 1, .has_K = 1, .has_split = 1,
                  .dtype = tl_px_type(&p, 3)};
    if (tl_px_done(&p)) return r->status;
    int64_t M = d.M, n = d.n, C = d.C, h = d.hc3, K = d.K, s = d.split_k;
    return mhc_finish(r, &d, "matrix", 2 * M * n * C * (n + 1) + 2 * M * h * K,
                      M * n * 4 + M * n * n * 4 + h * K * 4 + s * M * h * 4 + s * M * 4, M * C + 3 * M * n * C);
}

CLASS(mhc_post, "mHC", "mHC", mhc_post_fn);
CLASS(mhc_pre_gemm_sqrsum, "mHC", "mHC", mhc_pre_gemm_sqrsum_fn);
CLASS(mhc_pre_big_fuse_rmsnorm, "mHC", "mHC", mhc_pre_big_fuse_rmsnorm_fn);
CLASS(mhc_fused_post_pre_gemm_sqrsum, "mHC", "mHC", mhc_fused_post_pre_gemm_sqrsum_fn);

/* ======================================================================
 * aiter::mixed_sample_outer_exponential: (T, V) = D[1] logits, D[2] the
 * exponential noise; writes one int32 token per row
 * ====================================================================== */

static int mixed_sample_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    int64_t tv[2];
    tl_px_unpack(&p, 1, tv, 2);
    if (tl_px_done(&p)) return r->status;
    const char *dl = tl_pe_type(ev, 1), *dx = tl_pe_type(ev, 2);
    int64_t T = tv[0], V = tv[1];
    tl_pm_int(r, "num_tokens", T);
    tl_pm_int(r, "vocab_size", V);
    tl_pm_str(r, "dtype", dl);
    r->flops = (double)(2 * T * V);
    tl_perf_set_bytes(r, (double)(T * V * tl_dtype_bpe_or(dl, 2) + T * V * tl_dtype_bpe_or(dx, 4) + 4 * T));
    return tl_perf_ok(r, "vector", dl);
}

CLASS(mixed_sample_outer_exponential, "elementwise", "elementwise", mixed_sample_fn);
