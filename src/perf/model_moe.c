/* model_moe.c — MoE perf models (perf-model spec §4.11) and topk_softplus.
 *
 * Every expert-GEMM class parses its op's args into one moe_gemm record
 * (tokens M, hidden K, inter N, experts E, topk, gated, dtypes and their
 * element sizes) and then applies one of four formula sets: fused (up +
 * down in one kernel), unfused up, unfused down, grouped (sglang's
 * invoke_fused_moe_kernel). Element sizes come from tl_dtype_bytes_moe
 * (DTYPE_TO_BYTES, then name2bpe [FIX §2.3], then the per-call default).
 * FLOPs are exact integers; bytes are doubles because of E_active and the
 * 0.5-byte fp4 weights, computed in the spec's operation order. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "../util/str.h"
#include "model_moe.h"
#include "perf_util.h"

__extension__ typedef __int128 i128;

typedef enum moe_form { MOE_FUSED, MOE_UP, MOE_DOWN, MOE_GROUPED } moe_form;

typedef struct moe_gemm {
    int64_t M, K, N, E, topk;
    int gated;
    const char *in_dtype, *w_dtype; /* the input_dtype / weight_dtype params */
    const char *prec_dtype;         /* dtype the Compute Spec precision comes from */
    const char *prec;               /* explicit precision (overrides prec_dtype) */
    double bpe_in, bpe_w, bpe_out;
} moe_gemm;

double tl_moe_active_experts(int64_t E, int64_t topk, int64_t M)
{
    return (double)E * (1.0 - pow((double)(E - topk) / (double)E, (double)M));
}

static void moe_params(tl_perf_result *r, const moe_gemm *g)
{
    tl_pm_int(r, "num_tokens", g->M);
    tl_pm_int(r, "hidden_dim", g->K);
    tl_pm_int(r, "inter_dim", g->N);
    tl_pm_int(r, "num_experts", g->E);
    tl_pm_int(r, "topk", g->topk);
    tl_pm_bool(r, "gated", g->gated);
    tl_pm_str(r, "input_dtype", g->in_dtype);
    tl_pm_str(r, "weight_dtype", g->w_dtype);
}

/* Applies the formula set `form` to a parsed record. */
static int moe_finish(tl_perf_result *r, const moe_gemm *g, moe_form form)
{
    if (g->E == 0) return tl_perf_error(r, "num_experts is 0");
    moe_params(r, g);
    int64_t M = g->M, K = g->K, N = g->N, t = g->topk, gm = g->gated ? 2 : 1;
    double Ea = tl_moe_active_experts(g->E, t, M);
    i128 mkn = (i128)2 * M * K * N;
    switch (form) {
    case MOE_FUSED:
        r->flops = (double)(mkn * t * gm + mkn * t + (i128)M * K * (2 * t - 1));
        r->bytes = (double)(M * K) * g->bpe_in + Ea * (double)N * (double)K * g->bpe_w * (double)gm +
                   Ea * (double)N * (double)K * g->bpe_w + (double)(M * K) * g->bpe_out;
        break;
    case MOE_UP:
        r->flops = (double)(mkn * t * gm);
        r->bytes = (double)(M * K) * g->bpe_in + Ea * (double)gm * (double)K * (double)N * g->bpe_w +
                   (double)(M * N * t) * g->bpe_out;
        break;
    case MOE_DOWN:
        r->flops = (double)(mkn * t);
        r->bytes = (double)(M * N * t) * g->bpe_in + Ea * (double)N * (double)K * g->bpe_w +
                   (double)(M * K) * g->bpe_out;
        break;
    case MOE_GROUPED: { /* M tokens, each routed to topk experts: Mw rows */
        int64_t Mw = M * t;
        r->flops = (double)((i128)2 * Mw * N * K);
        r->bytes = (double)(Mw * K) * g->bpe_in + Ea * (double)N * (double)K * g->bpe_w +
                   (double)(Mw * N) * g->bpe_out;
        break;
    }
    }
    r->has_bytes = 1;
    r->maf = "matrix";
    r->precision = g->prec ? g->prec : tl_dtype_precision(g->prec_dtype);
    return TL_PERF_OK;
}

/* N = N0 * (K // w1[-1]) (int4 packing factor); gated = (w1[1] == 2N). */
static void packed_inter(tl_px *p, moe_gemm *g, long w1, int64_t N0)
{
    int64_t k1 = tl_px_dim(p, w1, -1), rows = tl_px_dim(p, w1, 1);
    if (p->bad) return;
    if (k1 == 0) {
        tl_px_fail(p, "Input Dims[%ld][-1] is 0", w1);
        return;
    }
    g->N = N0 * tl_floor_div(g->K, k1);
    g->gated = rows == 2 * g->N;
}

/* Every expert-GEMM class: a parser filling the record (0, or the failure
 * status it set on r), then one formula set. */
typedef int (*moe_parse)(tl_px *p, moe_gemm *g);

static int moe_run(const tl_perf_event *ev, tl_perf_result *r, moe_parse parse, moe_form form)
{
    tl_px p;
    tl_px_init(&p, ev, r);
    moe_gemm g = {0};
    if (parse(&p, &g)) return r->status;
    return moe_finish(r, &g, form);
}

#define CLASS(cls, cat, fn) const tl_perf_class tl_pc_##cls = {#cls, cat, NULL, cat, 0, fn, 0}

#define MOE_CLASS(cls, cat, parse, form)                                         \
    static int cls##_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)     \
    {                                                                            \
        (void)bwd;                                                               \
        return moe_run(ev, r, parse, form);                                      \
    }                                                                            \
    CLASS(cls, cat, cls##_fn)

/* M = D[0][0], (E, K, N0) = w2 = D[w2], and the packed inter size from
 * w1 = D[w2 - 1] (the fused_1stage, blockscale and ck_moe_stage1 layout). */
static void expert_dims(tl_px *p, moe_gemm *g, long w2)
{
    int64_t ekn[3];
    g->M = tl_px_dim(p, 0, 0);
    tl_px_unpack(p, w2, ekn, 3);
    g->E = ekn[0];
    g->K = ekn[1];
    packed_inter(p, g, w2 - 1, ekn[2]);
}

/* ---- fused_1stage, flydsl stage1/2: x = D[0], w1 = D[1], w2 = D[2] = [E, K, N0], topk = D[3][1] */
static int parse_1stage(tl_px *p, moe_gemm *g)
{
    const tl_perf_event *ev = p->ev;
    expert_dims(p, g, 2);
    g->topk = tl_px_dim(p, 3, 1);
    g->in_dtype = tl_pe_type(ev, 0);
    g->w_dtype = tl_pe_type(ev, 1);
    g->bpe_in = tl_dtype_bytes_moe(g->in_dtype, 2);
    g->bpe_w = tl_dtype_bytes_moe(g->w_dtype, 1);
    g->bpe_out = g->bpe_in;
    return tl_px_done(p);
}

/* fused_1stage: precision from the input dtype */
static int parse_fused_1stage(tl_px *p, moe_gemm *g)
{
    g->prec_dtype = tl_pe_type(p->ev, 0);
    return parse_1stage(p, g);
}

/* flydsl: precision from the weight dtype */
static int parse_flydsl(tl_px *p, moe_gemm *g)
{
    g->prec_dtype = tl_pe_type(p->ev, 1);
    return parse_1stage(p, g);
}

/* ---- fmoe_fp8_blockscale_g1u1 / fmoe_g1u1: (out, input, w1, w2, ...), topk = int(C[8]) */
static int parse_blockscale(tl_px *p, moe_gemm *g)
{
    const tl_perf_event *ev = p->ev;
    expert_dims(p, g, 3);
    g->topk = tl_px_concrete_int(p, 8);
    if (tl_px_done(p)) return p->r->status;
    g->in_dtype = tl_pe_type(ev, 1);
    g->w_dtype = tl_pe_type(ev, 2);
    g->bpe_in = tl_dtype_bytes_moe(g->in_dtype, 1);
    g->bpe_w = tl_dtype_bytes_moe(g->w_dtype, 1);
    g->bpe_out = tl_dtype_bytes_moe(tl_pe_type(ev, 0), 2);
    int literal_fp8 = g->in_dtype && (!strcmp(g->in_dtype, "fp8") || !strcmp(g->in_dtype, "bf16"));
    g->prec = literal_fp8 ? "fp8" : NULL;
    g->prec_dtype = g->in_dtype;
    return TL_PERF_OK;
}

/* ---- cktile 2-stage and ck_moe_stage1/2: input dtype T[0], weight T[w]; the
 * output element size bpe(T[2]) or 2 (out_slot), or a fixed 2 (ck_moe) */
static int ck_finish(tl_px *p, moe_gemm *g, long w, int out_slot)
{
    if (tl_px_done(p)) return p->r->status;
    const tl_perf_event *ev = p->ev;
    g->in_dtype = tl_pe_type(ev, 0);
    g->w_dtype = tl_pe_type(ev, w);
    g->bpe_in = tl_dtype_bytes_moe(g->in_dtype, 2);
    g->bpe_w = tl_dtype_bytes_moe(g->w_dtype, 1);
    g->prec_dtype = g->in_dtype;
    g->bpe_out = out_slot ? tl_dtype_bytes_moe(tl_pe_type(ev, 2), 2) : 2;
    return TL_PERF_OK;
}

/* cktile gemm1 (up): (M, K) = D[0], (E, rows) = D[1][0..1], (., topk, N) = D[2] */
static int parse_cktile_gemm1(tl_px *p, moe_gemm *g)
{
    int64_t mk[2], out[3];
    tl_px_unpack(p, 0, mk, 2);
    g->E = tl_px_dim(p, 1, 0);
    int64_t rows = tl_px_dim(p, 1, 1);
    tl_px_unpack(p, 2, out, 3);
    g->M = mk[0], g->K = mk[1], g->topk = out[1], g->N = out[2];
    g->gated = rows == 2 * g->N;
    return ck_finish(p, g, 1, 1);
}

/* cktile gemm2 (down): (M, topk, N) = D[0], (E, K, .) = D[1] */
static int parse_cktile_gemm2(tl_px *p, moe_gemm *g)
{
    int64_t mtn[3], w2[3];
    tl_px_unpack(p, 0, mtn, 3);
    tl_px_unpack(p, 1, w2, 3);
    g->M = mtn[0], g->topk = mtn[1], g->N = mtn[2], g->E = w2[0], g->K = w2[1];
    return ck_finish(p, g, 1, 1);
}

/* ---- ck_moe_stage1 (up): M = D[0][0], (E, K, N0) = D[2], w1 = D[1], topk = D[6][1] */
static int parse_ck_stage1(tl_px *p, moe_gemm *g)
{
    expert_dims(p, g, 2);
    g->topk = tl_px_dim(p, 6, 1);
    return ck_finish(p, g, 1, 0);
}

/* ---- ck_moe_stage2 (down): (M, topk, N0) = D[0], w1 = D[1], (E, K, .) = D[2]; w dtype T[2] */
static int parse_ck_stage2(tl_px *p, moe_gemm *g)
{
    int64_t mtn[3], w2[3];
    tl_px_unpack(p, 0, mtn, 3);
    tl_px_unpack(p, 2, w2, 3);
    g->M = mtn[0], g->topk = mtn[1], g->E = w2[0], g->K = w2[1];
    packed_inter(p, g, 1, mtn[2]);
    return ck_finish(p, g, 2, 0);
}

/* ---- Triton unfused (matmul_ogs) pseudo ops ----------------------------- */

/* A bool arg: a bool/int, or the text True/False/1/0. */
static int arg_bool(const tl_pv *v, int *out)
{
    int64_t i;
    if (tl_pv_int(v, &i)) return *out = i != 0, 1;
    const char *s = tl_pv_cstr(v);
    if (!s) return 0;
    if (!strcasecmp(s, "true") || !strcmp(s, "1")) return *out = 1, 1;
    if (!strcasecmp(s, "false") || !strcmp(s, "0")) return *out = 0, 1;
    return 0;
}

/* The weight dtype named by the first kernel: FP4 (fp4 / mxfp4) or FP8
 * (fp8 / e4m3); NULL when there is no kernel or no such marker. */
static const char *kernel_weight_dtype(const tl_perf_event *ev)
{
    if (!ev->n_kernels || !ev->kernels || !ev->kernels[0]) return NULL;
    const char *k = ev->kernels[0];
    if (tl_contains_ci(k, "fp4")) return "FP4"; /* also matches mxfp4 */
    if (tl_contains_ci(k, "fp8") || tl_contains_ci(k, "e4m3")) return "FP8";
    return NULL;
}

/* (M, K) = D[0], E = D[1][1]; topk and gated from the args the pseudo-op
 * pass injects (an int or its text). */
static int parse_triton_unfused(tl_px *p, moe_gemm *g)
{
    const tl_perf_event *ev = p->ev;
    tl_perf_result *r = p->r;
    int64_t mk[2];
    tl_px_unpack(p, 0, mk, 2);
    g->E = tl_px_dim(p, 1, 1);
    const char *din = tl_px_type(p, 0);
    if (tl_px_done(p)) return r->status;
    g->M = mk[0], g->K = mk[1], g->N = mk[1]; /* N = K: the inter size is not in the args */
    if (!tl_pv_int_text(tl_pe_arg(ev, "MoE topk"), &g->topk)) return tl_perf_error(r, "args['MoE topk'] is missing");
    if (!arg_bool(tl_pe_arg(ev, "MoE GEMM gated"), &g->gated))
        return tl_perf_error(r, "args['MoE GEMM gated'] is missing");
    g->w_dtype = kernel_weight_dtype(ev);
    if (!g->w_dtype) return tl_perf_error(r, "cannot tell the MoE weight dtype from the kernel names");
    g->in_dtype = din;
    g->bpe_in = tl_dtype_bytes_moe(din, 0);
    if (g->bpe_in == 0) return tl_perf_error(r, "unknown input dtype %.40s", din ? din : "None");
    g->bpe_w = tl_dtype_bytes_moe(g->w_dtype, 0);
    g->bpe_out = g->bpe_in;
    g->prec_dtype = g->w_dtype;
    return TL_PERF_OK;
}

/* ---- GPTQ / AWQ (int4 weights, 0.5 byte) pseudo ops ---------------------- */

/* (M, K) = mk; topk (default 8) and gated from the args; weight dtype T[w]. */
static int gptq_common(tl_px *p, moe_gemm *g, const int64_t *mk, int gated_default, long w)
{
    if (tl_px_done(p)) return p->r->status;
    const tl_perf_event *ev = p->ev;
    int64_t topk = 8;
    int gated = gated_default;
    tl_pv_int_text(tl_pe_arg(ev, "MoE topk"), &topk);
    arg_bool(tl_pe_arg(ev, "MoE GEMM gated"), &gated);
    g->M = mk[0], g->K = mk[1];
    g->topk = topk;
    g->gated = gated;
    g->in_dtype = tl_pe_type(ev, 0);
    g->w_dtype = tl_pe_type(ev, w);
    g->bpe_in = g->bpe_out = tl_dtype_bytes_moe(g->in_dtype, 2);
    g->bpe_w = 0.5;
    g->prec_dtype = g->in_dtype;
    return TL_PERF_OK;
}

/* up: (M, K) = D[0], (E, N_rows) = D[1][0..1]; N = N_rows // 2 when gated */
static int parse_gptq_up(tl_px *p, moe_gemm *g)
{
    int64_t mk[2];
    tl_px_unpack(p, 0, mk, 2);
    g->E = tl_px_dim(p, 1, 0);
    int64_t rows = tl_px_dim(p, 1, 1);
    int st = gptq_common(p, g, mk, 1, 1);
    g->N = g->gated ? tl_floor_div(rows, 2) : rows;
    return st;
}

/* down: (M, K) = D[0], E = D[2][0], N = 2 * D[2][2] (packed int4 pairs) */
static int parse_gptq_down(tl_px *p, moe_gemm *g)
{
    int64_t mk[2];
    tl_px_unpack(p, 0, mk, 2);
    g->E = tl_px_dim(p, 2, 0);
    g->N = 2 * tl_px_dim(p, 2, 2);
    return gptq_common(p, g, mk, 0, 2);
}

/* ---- sglang invoke_fused_moe_kernel: (E, N, K) = D[1], (tokens, topk) = D[8] */
static int parse_invoke_grouped_gemm(tl_px *p, moe_gemm *g)
{
    const tl_perf_event *ev = p->ev;
    if (tl_pv_len(ev->dims) < 9) return tl_perf_error(p->r, "expected at least 9 Input Dims");
    int64_t enk[3], tt[2];
    tl_px_unpack(p, 1, enk, 3);
    tl_px_unpack(p, 8, tt, 2);
    if (tl_px_done(p)) return p->r->status;
    g->E = enk[0], g->N = enk[1], g->K = enk[2], g->M = tt[0], g->topk = tt[1];
    g->in_dtype = tl_pe_type(ev, 0);
    g->w_dtype = tl_pe_type(ev, 1);
    const char *dout = tl_px_type_opt(ev, 3);
    g->bpe_in = tl_dtype_bytes_moe(g->in_dtype, 2);
    g->bpe_w = tl_dtype_bytes_moe(g->w_dtype, 1);
    g->bpe_out = dout ? tl_dtype_bytes_moe(dout, 2) : g->bpe_in;
    g->prec_dtype = g->in_dtype;
    return TL_PERF_OK;
}

MOE_CLASS(moe_aiter_fused_1stage, "MoE_fused", parse_fused_1stage, MOE_FUSED);
MOE_CLASS(moe_aiter_fused_blockscale, "MoE_fused", parse_blockscale, MOE_FUSED);
MOE_CLASS(moe_aiter_unfused_up, "MoE_unfused", parse_cktile_gemm1, MOE_UP);
MOE_CLASS(moe_aiter_unfused_down, "MoE_unfused", parse_cktile_gemm2, MOE_DOWN);
MOE_CLASS(moe_aiter_ck_stage1, "MoE_unfused", parse_ck_stage1, MOE_UP);
MOE_CLASS(moe_aiter_ck_stage2, "MoE_unfused", parse_ck_stage2, MOE_DOWN);
MOE_CLASS(moe_triton_unfused_up, "MoE_unfused", parse_triton_unfused, MOE_UP);
MOE_CLASS(moe_triton_unfused_down, "MoE_unfused", parse_triton_unfused, MOE_DOWN);
MOE_CLASS(moe_gptq_awq_up, "MoE_unfused", parse_gptq_up, MOE_UP);
MOE_CLASS(moe_gptq_awq_down, "MoE_unfused", parse_gptq_down, MOE_DOWN);
MOE_CLASS(moe_flydsl_stage1, "MoE_unfused", parse_flydsl, MOE_UP);
MOE_CLASS(moe_flydsl_stage2, "MoE_unfused", parse_flydsl, MOE_DOWN);
MOE_CLASS(moe_triton_invoke_grouped_gemm, "MoE_unfused", parse_invoke_grouped_gemm, MOE_GROUPED);

/* ======================================================================
 * MoE_aux (maf vector)
 * ====================================================================== */

static int all_ints(const tl_pv *shape)
{
    if (!tl_pv_is_list(shape) || !shape->n) return 0;
    for (size_t i = 0; i < shape->n; i++)
        if (shape->items[i].kind != TL_PV_INT) return 0;
    return 1;
}

/* biased_grouped_topk / moe_sorting / mxfp4_moe_sort: every non-empty
 * all-int shape of Input Dims is an operand (shape, dtype); flops = the
 * largest operand's size, bytes = the sizes of the operands of known
 * dtype. The `operands` param is a Python list of (shape, dtype) tuples:
 * [((4096, 8192), 'c10::bfloat16'), ...]. */
static int operands_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_sbuf j;
    tl_sb_init(&j);
    tl_sb_putc(&j, '[');
    int64_t best = -1, bytes = 0;
    const char *best_dtype = NULL;
    size_t n = 0;
    for (size_t i = 0; i < tl_pv_len(ev->dims); i++) {
        const tl_pv *s = &ev->dims->items[i];
        if (!all_ints(s)) continue;
        const tl_pv *t = tl_pv_at(ev->types, i);
        int64_t size = tl_pv_prod(s);
        bytes += size * tl_dtype_bpe(tl_pv_cstr(t));
        if (size > best) best = size, best_dtype = tl_pv_cstr(t);
        tl_sb_puts(&j, n++ ? ",[" : "[");
        tl_pv_to_json(&j, s);
        tl_sb_putc(&j, ',');
        tl_pv_to_json(&j, t && t->kind == TL_PV_STR ? t : NULL);
        tl_sb_putc(&j, ']');
    }
    tl_sb_putc(&j, ']');
    if (!n) {
        tl_sb_free(&j);
        return tl_perf_error(r, "no tensor operands");
    }
    tl_pm_pylist(r, "operands", tl_pv_parse(r->arena, j.s));
    tl_sb_free(&j);
    r->flops = (double)best;
    if (bytes) tl_perf_set_bytes(r, (double)bytes);
    return tl_perf_ok(r, "vector", best_dtype);
}

/* sglang fused_append_shared_experts: ids = D[0], weights = D[1] (or ids). */
static int append_shared_experts_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    const tl_pv *ids = tl_px_shape(&p, 0);
    if (tl_px_done(&p)) return r->status;
    const tl_pv *wts = tl_px_shape_opt(ev, 1);
    const char *dids = tl_pe_type(ev, 0), *dwts = wts ? tl_pe_type(ev, 1) : dids;
    if (!wts) wts = ids;
    tl_pm_pv(r, "ids_shape", ids);
    tl_pm_pv(r, "weights_shape", wts);
    tl_pm_str(r, "ids_dtype", dids);
    tl_pm_str(r, "weights_dtype", dwts);
    int bi = tl_dtype_bpe(dids), bw = tl_dtype_bpe(dwts);
    int64_t ni = tl_pv_prod(ids), nw = tl_pv_prod(wts);
    r->flops = (double)ni;
    tl_perf_set_bytes(r, (double)(2 * (ni * (bi ? bi : 4) + nw * (bw ? bw : 4))));
    return tl_perf_ok(r, "vector", dids);
}

/* aiter::topk_softplus(topk_weights, topk_ids, gating_output, ...): (M, E) = D[2], topk = D[0][1]. */
static int topk_softplus_fn(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    tl_px p;
    tl_px_init(&p, ev, r);
    int64_t me[2];
    tl_px_unpack(&p, 2, me, 2);
    int64_t topk = tl_px_dim(&p, 0, 1);
    const char *d = tl_px_type(&p, 2);
    if (tl_px_done(&p)) return r->status;
    int64_t M = me[0], E = me[1], b = tl_dtype_bpe(d);
    tl_pm_int(r, "num_tokens", M);
    tl_pm_int(r, "num_experts", E);
    tl_pm_int(r, "topk", topk);
    tl_pm_str(r, "dtype", d);
    r->flops = (double)(6 * M * E);
    if (b) tl_perf_set_bytes(r, (double)(M * E * b + E * 4 + M * topk * 4 + M * topk * 4));
    return tl_perf_ok(r, "vector", d);
}

CLASS(BiasedGroupedTopk, "MoE_aux", operands_fn);
CLASS(MoeSortScatterGather, "MoE_aux", operands_fn);
CLASS(sglang_fused_append_shared_experts, "MoE_aux", append_shared_experts_fn);
CLASS(topk_softplus, "MoE_aux", topk_softplus_fn);
