/* model_attention.c — SDPA perf models (perf-model spec §4.3) and the
 * inference attention models (§4.10).
 *
 * SDPA: every class is one sdpa_op row (where q/k/v, dropout, causal and the
 * varlen arguments sit) run through the shared parser and the canonical
 * formulas. Arithmetic follows Python: exact integers until a float (the
 * varlen max_seqlen, a causal halving) enters, then doubles in the spec's
 * operation order (tl_pn, perf_util.h).
 * FIXes: bytes use q's element size (2 when unknown), every class sets
 * dtype_A_B (so all get a Compute Spec), and the efficient and cuDNN
 * backends count the backward's QK^T recompute (flash_impl True).
 *
 * Inference attention: the InferenceAttention base (annotation workload
 * sums, §4.10) with per-class geometry (ia_kind), plus the stand-alone
 * pa_sparse_prefill_opus_fwd, gdn_attention_core and sglang_store_cache. */
#include "model_attention.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "perf_util.h"

/* ------------------------------------------------------------------------
 * Python numbers (tl_pn of perf_util.h) under short names
 * ------------------------------------------------------------------------ */

typedef tl_pn pn;

static pn pi(int64_t v) { return tl_pn_int(v); }
static pn pf(double v) { return tl_pn_float(v); }
static double pd(pn a) { return tl_pn_double(a); }
static pn mul(pn a, pn b) { return tl_pn_mul(a, b); }
static pn add(pn a, pn b) { return tl_pn_add(a, b); }
static pn sub(pn a, pn b) { return tl_pn_sub(a, b); }
static pn mul3(pn a, pn b, pn c) { return mul(mul(a, b), c); }
static int floordiv(pn a, pn b, pn *out) { return tl_pn_floordiv(a, b, out); }

/* ------------------------------------------------------------------------
 * Shared event helpers
 * ------------------------------------------------------------------------ */

/* D[i][j]; a negative j counts from the end (Python indexing). */
static int dim(const tl_perf_event *ev, size_t i, long j, int64_t *out)
{
    return tl_pv_int(tl_pv_item(tl_pe_dim(ev, i), j), out);
}

/* int(args[key]) (an int or its text), or dflt. */
static int64_t int_arg(const tl_perf_event *ev, const char *key, int64_t dflt)
{
    int64_t x;
    return tl_pv_int_text(tl_pe_arg(ev, key), &x) ? x : dflt;
}

/* dtype_A_B: up to n Input types from index i (a Python slice). */
static void dtype_tuple(const tl_perf_event *ev, const char *key, size_t i, size_t n, tl_perf_result *r)
{
    const char *t[2] = {NULL, NULL};
    size_t have = tl_pv_len(ev->types);
    size_t k = have > i ? (have - i < n ? have - i : n) : 0;
    for (size_t j = 0; j < k; j++) t[j] = tl_pe_type(ev, i + j);
    tl_pm_str_tuple(r, key, t, k);
}

static void set_work(tl_perf_result *r, pn flops, int has_bytes, pn bytes)
{
    r->flops = pd(flops);
    r->has_bytes = has_bytes;
    r->bytes = has_bytes ? pd(bytes) : 0;
}

/* An int param from a Python number: exact when it fits int64 (a float beyond). */
static void pm_pn(tl_perf_result *r, const char *key, pn v)
{
    int64_t i;
    if (tl_pn_int64(v, &i)) tl_pm_int(r, key, i);
    else tl_pm_float(r, key, pd(v));
}

static pn pmin(pn a, pn b)
{
    int b_less = a.is_f || b.is_f ? pd(b) < pd(a) : b.i < a.i;
    return b_less ? b : a;
}

/* ------------------------------------------------------------------------
 * SDPA formulas
 * ------------------------------------------------------------------------ */

typedef struct sdpa_cfg {
    pn B, NQ, HQ, NKV, HKV, dqk, dv;
    int causal, flash;
} sdpa_cfg;

/* Causal halves the work, only defined for N_Q == N_KV (ValueError, KEEP). */
static int halve_if_causal(const sdpa_cfg *c, pn *f, tl_perf_result *r)
{
    if (!c->causal) return TL_PERF_OK;
    if (!tl_pn_eq(c->NQ, c->NKV)) return tl_perf_error(r, "causal attention with N_Q != N_KV is not supported");
    *f = pf(pd(*f) / 2.0);
    return TL_PERF_OK;
}

static int flops_fwd(const sdpa_cfg *c, pn *out, tl_perf_result *r)
{
    pn bh = mul(c->B, c->HQ), two = pi(2);
    pn qk = mul(bh, mul3(mul(two, c->NQ), c->NKV, c->dqk));
    pn pv = mul(bh, mul3(mul(two, c->NQ), c->dv, c->NKV));
    *out = add(qk, pv);
    return halve_if_causal(c, out, r);
}

static int flops_bwd(const sdpa_cfg *c, pn *out, tl_perf_result *r)
{
    pn gqa;
    if (!floordiv(c->HQ, c->HKV, &gqa)) return tl_perf_error(r, "H_KV is 0");
    gqa = sub(gqa, pi(1));
    pn bh2 = mul3(c->B, c->HQ, pi(2));
    pn terms[7] = {
        c->flash ? mul3(mul(bh2, c->NQ), c->NKV, c->dqk) : pi(0), /* recompute QK^T */
        mul3(mul(bh2, c->NKV), c->NQ, c->dv),                     /* dV */
        mul3(mul(c->B, c->NKV), c->dv, gqa),                      /* GQA reduction of dV */
        mul3(mul(bh2, c->NQ), c->NKV, c->dv),                     /* dP */
        mul3(mul(bh2, c->NQ), c->NKV, c->dqk),                    /* dQ */
        mul3(mul(bh2, c->NKV), c->NQ, c->dqk),                    /* dK */
        mul3(mul(c->B, c->NKV), c->dqk, gqa),                     /* GQA reduction of dK */
    };
    *out = terms[0]; /* one left-to-right sum, as written */
    for (int i = 1; i < 7; i++) *out = add(*out, terms[i]);
    return halve_if_causal(c, out, r);
}

static pn elems(pn B, pn N, pn H, pn d) { return mul(mul3(B, N, H), d); }

static pn bytes_fwd(const sdpa_cfg *c, int bpe)
{
    pn q = elems(c->B, c->NQ, c->HQ, c->dqk), k = elems(c->B, c->NKV, c->HKV, c->dqk);
    pn v = elems(c->B, c->NKV, c->HKV, c->dv), o = elems(c->B, c->NQ, c->HQ, c->dv);
    return mul(add(add(add(q, k), v), o), pi(bpe));
}

static pn bytes_bwd(const sdpa_cfg *c, int bpe)
{
    pn q = elems(c->B, c->NQ, c->HQ, c->dqk), k = elems(c->B, c->NKV, c->HKV, c->dqk);
    pn v = elems(c->B, c->NKV, c->HKV, c->dv), dout = elems(c->B, c->NQ, c->HQ, c->dv);
    pn all = add(add(add(add(add(add(q, k), v), dout), q), k), v); /* + dq, dk, dv */
    return mul(all, pi(bpe));
}

static int flops_any(const sdpa_cfg *c, int bwd, pn *out, tl_perf_result *r)
{
    return bwd ? flops_bwd(c, out, r) : flops_fwd(c, out, r);
}

/* ------------------------------------------------------------------------
 * SDPA classes
 * ------------------------------------------------------------------------ */

enum { L_BHND, L_BNHD, L_HND, L_EVO };
/* dropout: none (0.0); float(C[i]); aten ("", "None", parse failure: 0.0);
 * optional (absent or "": 0.0, else float). */
enum { DROP_NONE, DROP_FLOAT, DROP_ATEN, DROP_OPTIONAL };
/* causal: none (False); aten ("" / "None": False, else lower() == "true");
 * lower() == "true"; Python literal; literal, True when absent or "". */
enum { CAUSAL_NONE, CAUSAL_ATEN, CAUSAL_LOWER, CAUSAL_LITERAL, CAUSAL_LITERAL_DEFAULT_TRUE };

/* Where one op keeps its SDPA arguments. */
typedef struct sdpa_op {
    int layout;
    int qi, ti;                 /* Input Dims index of q (k, v follow); Input type index of q */
    int drop_mode, drop_ci;
    int causal_mode, causal_ci;
    int flash, bwd_work;        /* flash_impl; flops()/bytes() are the backward formulas */
    int strides_required;       /* Input Strides of q, k, v must exist (KeyError) */
    int varlen;                 /* cu_seqlens at Input Dims cu_q / cu_k, max_seqlen_q / _k at C[max_ci], C[max_ci+1] */
    int cu_q, cu_k, max_ci;
} sdpa_op;

typedef struct varlen {
    int64_t nq, nk;             /* num_seqs_q, num_seqs_kv */
    double max_q, max_k;
} varlen;

static const int idx_bhnd[4] = {0, 1, 2, 3}, idx_bnhd[4] = {0, 2, 1, 3}, idx_hnd[4] = {-1, 1, 0, 2};

/* (B, H, N, d) of q, k, v at the layout's index order, with the
 * extract_sdpa_cfg checks. */
static int sdpa_dims(const tl_perf_event *ev, const sdpa_op *op, sdpa_cfg *c, tl_perf_result *r)
{
    const int *idx = op->layout == L_BHND ? idx_bhnd : op->layout == L_BNHD ? idx_bnhd : idx_hnd;
    int64_t v[3][4];
    for (int t = 0; t < 3; t++)
        for (int j = 0; j < 4; j++) {
            v[t][j] = 1;
            if (idx[j] >= 0 && !dim(ev, (size_t)(op->qi + t), idx[j], &v[t][j]))
                return tl_perf_error(r, "%s: q/k/v shapes missing", ev->name);
        }
    if (v[0][0] != v[1][0] || v[0][0] != v[2][0]) return tl_perf_error(r, "%s: batch sizes differ", ev->name);
    if (v[1][1] != v[2][1] || v[1][2] != v[2][2]) return tl_perf_error(r, "%s: k and v disagree", ev->name);
    if (v[0][3] != v[1][3]) return tl_perf_error(r, "%s: q and k head dims differ", ev->name);
    *c = (sdpa_cfg){.B = pi(v[0][0]), .HQ = pi(v[0][1]), .NQ = pi(v[0][2]), .dqk = pi(v[0][3]),
                    .HKV = pi(v[1][1]), .NKV = pi(v[1][2]), .dv = pi(v[2][3])};
    return TL_PERF_OK;
}

/* EvoformerAttention: Q = [Batch, N_seq, N_res, Head, Dim]. */
static int evo_dims(const tl_perf_event *ev, sdpa_cfg *c, tl_perf_result *r)
{
    int64_t q[5];
    for (int j = 0; j < 5; j++)
        if (!dim(ev, 0, j, &q[j])) return tl_perf_error(r, "%s: Q is not 5-d", ev->name);
    *c = (sdpa_cfg){.B = mul(pi(q[0]), pi(q[1])), .NQ = pi(q[2]), .NKV = pi(q[2]), .HQ = pi(q[3]), .HKV = pi(q[3]),
                    .dqk = pi(q[4]), .dv = pi(q[4])};
    return TL_PERF_OK;
}

static int parse_dropout(const tl_perf_event *ev, const sdpa_op *op, double *d, tl_perf_result *r)
{
    *d = 0.0;
    if (op->drop_mode == DROP_NONE) return TL_PERF_OK;
    const char *s = tl_pe_concrete(ev, (size_t)op->drop_ci);
    if (op->drop_mode == DROP_OPTIONAL && (!s || !*s)) return TL_PERF_OK;
    if (!s) return tl_perf_error(r, "%s: dropout missing", ev->name);
    if (op->drop_mode == DROP_ATEN) { /* "", "None" and parse failures give 0.0 */
        if (!tl_py_float(s, d)) *d = 0.0;
        return TL_PERF_OK;
    }
    return tl_py_float(s, d) ? TL_PERF_OK : tl_perf_error(r, "%s: dropout %s is not a float", ev->name, s);
}

static int parse_causal(const tl_perf_event *ev, const sdpa_op *op, int *causal, tl_perf_result *r)
{
    *causal = 0;
    if (op->causal_mode == CAUSAL_NONE) return TL_PERF_OK;
    const char *s = tl_pe_concrete(ev, (size_t)op->causal_ci);
    if (op->causal_mode == CAUSAL_LITERAL_DEFAULT_TRUE && (!s || !*s)) return *causal = 1, TL_PERF_OK;
    if (!s) return tl_perf_error(r, "%s: causal missing", ev->name);
    if (op->causal_mode == CAUSAL_ATEN && (!*s || !strcmp(s, "None"))) return TL_PERF_OK;
    if (op->causal_mode == CAUSAL_ATEN || op->causal_mode == CAUSAL_LOWER) {
        *causal = !strcasecmp(s, "true");
        return TL_PERF_OK;
    }
    return tl_py_truth(s, causal) ? TL_PERF_OK : tl_perf_error(r, "%s: causal %s is not a literal", ev->name, s);
}

static int parse_varlen(const tl_perf_event *ev, const sdpa_op *op, varlen *v, tl_perf_result *r)
{
    int64_t cq, ck;
    if (!dim(ev, (size_t)op->cu_q, 0, &cq) || !dim(ev, (size_t)op->cu_k, 0, &ck))
        return tl_perf_error(r, "%s: cu_seqlens missing", ev->name);
    v->nq = cq - 1;
    v->nk = ck - 1;
    if (!tl_py_float(tl_pe_concrete(ev, (size_t)op->max_ci), &v->max_q) ||
        !tl_py_float(tl_pe_concrete(ev, (size_t)op->max_ci + 1), &v->max_k))
        return tl_perf_error(r, "%s: max_seqlen is not a float", ev->name);
    return TL_PERF_OK;
}

/* A lower-bound estimate: one sequence of max length plus (num_seqs_q - 1)
 * sequences of the average remaining length. */
static int varlen_flops(const sdpa_cfg *c, const varlen *v, int bwd, pn *out, tl_perf_result *r)
{
    sdpa_cfg one = *c;
    one.B = pi(1);
    one.NQ = pf(v->max_q);
    one.NKV = pf(v->max_k);
    int st = flops_any(&one, bwd, out, r);
    if (st || v->nq <= 1) return st;
    if (!floordiv(sub(c->NQ, pf(v->max_q)), pi(v->nq - 1), &one.NQ) ||
        !floordiv(sub(c->NKV, pf(v->max_k)), pi(v->nk - 1), &one.NKV))
        return tl_perf_error(r, "varlen: a single key sequence");
    pn rest;
    if ((st = flops_any(&one, bwd, &rest, r))) return st;
    *out = add(*out, mul(pi(v->nq - 1), rest));
    return TL_PERF_OK;
}

static void sdpa_params(const tl_perf_event *ev, const sdpa_op *op, const sdpa_cfg *c, double dropout,
                        const varlen *v, tl_perf_result *r)
{
    const char *keys[7] = {"B", "N_Q", "H_Q", "N_KV", "H_KV", "d_h_qk", "d_h_v"};
    const pn vals[7] = {c->B, c->NQ, c->HQ, c->NKV, c->HKV, c->dqk, c->dv};
    for (int i = 0; i < 7; i++) pm_pn(r, keys[i], vals[i]);
    tl_pm_float(r, "dropout", dropout);
    tl_pm_bool(r, "causal", c->causal);
    tl_pm_bool(r, "flash_impl", c->flash);
    dtype_tuple(ev, "dtype_A_B", (size_t)op->ti, op->layout == L_EVO ? 1 : 2, r);
    if (!v) return;
    tl_pm_int(r, "num_seqs_q", v->nq);
    tl_pm_int(r, "num_seqs_kv", v->nk);
    tl_pm_float(r, "max_seqlen_q", v->max_q);
    tl_pm_float(r, "max_seqlen_kv", v->max_k);
}

static int sdpa_strides_present(const tl_perf_event *ev, const sdpa_op *op)
{
    for (int t = 0; t < 3; t++)
        if (!tl_pe_stride(ev, (size_t)(op->qi + t))) return 0;
    return 1;
}

static int sdpa_run(const sdpa_op *op, const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    sdpa_cfg c;
    double dropout;
    varlen v, *vl = op->varlen ? &v : NULL;
    int st = op->layout == L_EVO ? evo_dims(ev, &c, r) : sdpa_dims(ev, op, &c, r);
    if (!st && op->strides_required && !sdpa_strides_present(ev, op))
        st = tl_perf_error(r, "%s: Input Strides missing", ev->name);
    if (!st) st = parse_dropout(ev, op, &dropout, r);
    if (!st) st = parse_causal(ev, op, &c.causal, r);
    if (!st && vl) st = parse_varlen(ev, op, vl, r);
    if (st) return st;
    c.flash = op->flash;
    sdpa_params(ev, op, &c, dropout, vl, r);

    int bwd_work = bwd || op->bwd_work;
    pn flops;
    st = vl ? varlen_flops(&c, vl, bwd_work, &flops, r) : flops_any(&c, bwd_work, &flops, r);
    if (st) return st;
    const char *dtype = tl_pe_type(ev, (size_t)op->ti);
    int bpe = tl_dtype_bpe_or(dtype, 2); /* FIX: q's element size, not always 2 */
    set_work(r, flops, 1, bwd_work ? bytes_bwd(&c, bpe) : bytes_fwd(&c, bpe));
    return tl_perf_ok(r, "matrix", dtype);
}

#define BNHD .layout = L_BNHD
#define DROP(ci) .drop_mode = DROP_FLOAT, .drop_ci = ci
#define LOWER(ci) .causal_mode = CAUSAL_LOWER, .causal_ci = ci
static const sdpa_op op_flash_attention = {BNHD, DROP(3), .causal_mode = CAUSAL_LITERAL, .causal_ci = 5,
                                           .flash = 1, .strides_required = 1};
static const sdpa_op op_flash_attention_backward = {BNHD, .qi = 1, .ti = 1, .drop_mode = DROP_OPTIONAL, .drop_ci = 8,
                                                    .causal_mode = CAUSAL_LITERAL_DEFAULT_TRUE, .causal_ci = 10,
                                                    .flash = 1, .bwd_work = 1};
static const sdpa_op op_varlen_forward = {.layout = L_HND, DROP(7), .causal_mode = CAUSAL_LITERAL, .causal_ci = 9,
                                          .flash = 1, .varlen = 1, .cu_q = 3, .cu_k = 4, .max_ci = 5};
static const sdpa_op op_varlen_backward = {.layout = L_HND, .qi = 1, .ti = 1, DROP(13), .causal_mode = CAUSAL_LITERAL,
                                           .causal_ci = 15, .flash = 1, .bwd_work = 1, .varlen = 1, .cu_q = 9,
                                           .cu_k = 10, .max_ci = 11};
static const sdpa_op op_sdpa_flash = {.layout = L_BHND, .drop_mode = DROP_ATEN, .drop_ci = 3,
                                      .causal_mode = CAUSAL_ATEN, .causal_ci = 4, .flash = 1};
/* [FIX] flash_impl True: the reference sets it False for the efficient and
 * cuDNN backends, leaving the QK^T recompute out of their backward FLOPs,
 * but both keep only the log-sum-exp from the forward pass and recompute the
 * scores in the backward kernel, as Flash Attention does (cuDNN's kernels are
 * named ..._sdpa_sm90_flash_fprop / _flash_bprop_...). docs/compat.md. */
static const sdpa_op op_sdpa_efficient = {.layout = L_BHND, .drop_mode = DROP_ATEN, .drop_ci = 5,
                                          .causal_mode = CAUSAL_ATEN, .causal_ci = 6, .flash = 1};
static const sdpa_op op_aiter_flash_fwd = {BNHD, DROP(3), LOWER(5), .flash = 1};
static const sdpa_op op_aiter_flash_bwd = {BNHD, DROP(10), LOWER(12), .flash = 1, .bwd_work = 1};
static const sdpa_op op_aiter_v3_wrapper_fwd = {BNHD, .qi = 1, .ti = 1, DROP(4), LOWER(6), .flash = 1};
static const sdpa_op op_aiter_v3_wrapper_bwd = {BNHD, .qi = 1, .ti = 1, DROP(7), LOWER(9), .flash = 1, .bwd_work = 1};
static const sdpa_op op_aiter_mha_fwd = {BNHD, DROP(3), LOWER(5), .flash = 1};
static const sdpa_op op_aiter_mha_bwd = {BNHD, .qi = 1, .ti = 1, DROP(6), LOWER(8), .flash = 1, .bwd_work = 1};
static const sdpa_op op_flash_attn_v3 = {BNHD, LOWER(24), .flash = 1};
static const sdpa_op op_evoformer = {.layout = L_EVO};

#define SDPA_CLASS(cls, op, category)                                                   \
    static int fn_##cls(const tl_perf_event *ev, int bwd, tl_perf_result *r)           \
    {                                                                                   \
        return sdpa_run(&op, ev, bwd, r);                                               \
    }                                                                                   \
    const tl_perf_class tl_pc_##cls = {#cls, category, "SDPA_bwd", "SDPA", 1, fn_##cls, 0};

SDPA_CLASS(flash_attention, op_flash_attention, "SDPA_fwd")
SDPA_CLASS(flash_attention_backward, op_flash_attention_backward, "SDPA_bwd")
SDPA_CLASS(flash_attention_varlen_forward, op_varlen_forward, "SDPA_fwd")
SDPA_CLASS(flash_attention_varlen_backward, op_varlen_backward, "SDPA_bwd")
SDPA_CLASS(aten__scaled_dot_product_cudnn_attention, op_sdpa_efficient, "SDPA_fwd")
SDPA_CLASS(aten__scaled_dot_product_efficient_attention, op_sdpa_efficient, "SDPA_fwd")
SDPA_CLASS(aten__scaled_dot_product_flash_attention, op_sdpa_flash, "SDPA_fwd")
SDPA_CLASS(aiter__flash_attn_forward, op_aiter_flash_fwd, "SDPA_fwd")
SDPA_CLASS(aiter__flash_attn_backward, op_aiter_flash_bwd, "SDPA_bwd")
SDPA_CLASS(aiter__fmha_v3_forward, op_aiter_v3_wrapper_fwd, "SDPA_fwd")
SDPA_CLASS(aiter__fmha_v3_backward, op_aiter_v3_wrapper_bwd, "SDPA_bwd")
SDPA_CLASS(aiter__mha_fwd, op_aiter_mha_fwd, "SDPA_fwd")
SDPA_CLASS(aiter__fmha_v3_fwd, op_aiter_mha_fwd, "SDPA_fwd")
SDPA_CLASS(aiter__mha_bwd, op_aiter_mha_bwd, "SDPA_bwd")
SDPA_CLASS(flash_attn_v3_forward, op_flash_attn_v3, "SDPA_fwd")
SDPA_CLASS(evoformer_attention, op_evoformer, "SDPA_fwd")

/* ------------------------------------------------------------------------
 * Annotation workload sums (chunk_stats)
 * ------------------------------------------------------------------------ */

enum { CSQ, CSK, CSQSQ, CSQSK, GSQ, GSK, GSQSQ, GSQSK, NSTATS };

static int is_word(char c) { return isalnum((unsigned char)c) || c == '_'; }

static int lit(const char **p, const char *s)
{
    size_t n = strlen(s);
    if (strncmp(*p, s, n)) return 0;
    *p += n;
    return 1;
}

/* \d+ into an int64 (0 on overflow). */
static int num(const char **p, int64_t *v)
{
    const char *s = *p;
    __int128 x = 0;
    while (isdigit((unsigned char)*s)) {
        x = x * 10 + (*s++ - '0');
        if (x > INT64_MAX) return 0;
    }
    if (s == *p) return 0;
    *v = (int64_t)x;
    *p = s;
    return 1;
}

/* (sq<a>sk<b>sqsq<c>sqsk<d>) */
static int vllm_phase(const char **p, int64_t *s)
{
    return lit(p, "(sq") && num(p, &s[0]) && lit(p, "sk") && num(p, &s[1]) && lit(p, "sqsq") && num(p, &s[2]) &&
           lit(p, "sqsk") && num(p, &s[3]) && lit(p, ")");
}

static int vllm_detailed(const char *p, int64_t *st)
{
    int64_t skip;
    return lit(&p, "execute_") && num(&p, &skip) && lit(&p, "_context_") && num(&p, &skip) && vllm_phase(&p, st) &&
           lit(&p, "_generation_") && num(&p, &skip) && vllm_phase(&p, st + 4);
}

/* One key=value pair of an annotation body: key = a \w run followed by '='.
 * atom: value = [..] (optionally "...+N") or \S+; otherwise \d+. Returns
 * the position after the pair, or NULL when none is left. */
static const char *next_pair(const char *p, const char *end, int atom, const char **k, size_t *kn, const char **v,
                             size_t *vn)
{
    while (p < end) {
        if (!is_word(*p)) {
            p++;
            continue;
        }
        const char *ks = p;
        while (p < end && is_word(*p)) p++;
        if (p >= end || *p != '=') continue;
        const char *vs = ++p, *ve = vs;
        if (!atom) {
            while (ve < end && isdigit((unsigned char)*ve)) ve++;
        } else if (vs < end && *vs == '[' && memchr(vs, ']', (size_t)(end - vs))) {
            ve = (const char *)memchr(vs, ']', (size_t)(end - vs)) + 1;
            if (end - ve >= 5 && !strncmp(ve, "...+", 4) && isdigit((unsigned char)ve[4]))
                for (ve += 4; ve < end && isdigit((unsigned char)*ve);) ve++;
        } else {
            while (ve < end && !isspace((unsigned char)*ve)) ve++;
        }
        if (ve == vs) continue;
        *k = ks, *kn = (size_t)(vs - 1 - ks), *v = vs, *vn = (size_t)(ve - vs);
        return ve;
    }
    return NULL;
}

static int key_is(const char *k, size_t kn, const char *name) { return strlen(name) == kn && !strncmp(k, name, kn); }

/* int(value) of a pair; 0 when it is not an int. */
static int pair_int(const char *v, size_t vn, int64_t *out)
{
    char buf[64];
    if (vn >= sizeof buf) return 0;
    memcpy(buf, v, vn);
    buf[vn] = 0;
    return tl_py_int(buf, out);
}

/* step[EXTEND|DECODE|MIXED ... sqsq=N ...] with c_sq=, c_sk=, ... keys (missing = 0). */
static int sglang_detailed(const char *s, int64_t *st)
{
    static const char *const keys[NSTATS] = {"c_sq", "c_sk", "c_sqsq", "c_sqsk", "g_sq", "g_sk", "g_sqsq", "g_sqsk"};
    const char *p = s;
    if (!lit(&p, "step[") || !(lit(&p, "EXTEND") || lit(&p, "DECODE") || lit(&p, "MIXED")) || is_word(*p)) return 0;
    const char *close = strchr(p, ']'), *q = p;
    for (;; q++) { /* sqsq=\d before the first ']' */
        q = strstr(q, "sqsq=");
        if (!q || !close || q > close) return 0;
        if (isdigit((unsigned char)q[5])) break;
    }
    const char *end = strrchr(s, ']'), *k, *v;
    size_t kn, vn;
    for (p = s + 5; (p = next_pair(p, end, 0, &k, &kn, &v, &vn));)
        for (int i = 0; i < NSTATS; i++)
            if (key_is(k, kn, keys[i]) && !pair_int(v, vn, &st[i])) return 0;
    return 1;
}

/* ATOM prefill[... tok=T sk= sqsq= sqsk= ...] / decode[...]: stats only when
 * both sqsq and sqsk are present. */
static int atom_detailed(const char *s, int64_t *st)
{
    int prefill = !strncmp(s, "prefill[", 8);
    if (!prefill && strncmp(s, "decode[", 7)) return 0;
    const char *p = s + (prefill ? 8 : 7), *end = strrchr(s, ']'), *k, *v;
    if (!end || end < p || memchr(s, '\n', (size_t)(end - s))) return 0;
    static const char *const keys[4] = {"tok", "sk", "sqsq", "sqsk"};
    static const char *const meta[3] = {"p", "d", "spec"};
    int64_t got[4] = {0, 0, 0, 0}, tmp;
    int seen = 0;
    size_t kn, vn;
    while ((p = next_pair(p, end, 1, &k, &kn, &v, &vn))) {
        for (int i = 0; i < 4; i++)
            if (key_is(k, kn, keys[i])) {
                if (!pair_int(v, vn, &got[i])) return 0;
                seen |= 1 << i;
            }
        for (int i = 0; i < 3 && !prefill; i++)
            if (key_is(k, kn, meta[i]) && !pair_int(v, vn, &tmp)) return 0;
    }
    if ((seen & 12) != 12) return 0;
    memcpy(st + (prefill ? CSQ : GSQ), got, sizeof got);
    return 1;
}

int tl_attention_chunk_stats(const char *ann, int64_t st[8])
{
    memset(st, 0, NSTATS * sizeof *st);
    if (!ann) return 0;
    if (vllm_detailed(ann, st) || sglang_detailed(ann, st) || atom_detailed(ann, st)) return 1;
    memset(st, 0, NSTATS * sizeof *st);
    return 0;
}

/* ------------------------------------------------------------------------
 * Inference attention (InferenceAttention base and subclasses)
 * ------------------------------------------------------------------------ */

typedef enum ia_kind {
    IA_BASE,     /* vllm unified attention, mha_varlen_fwd, mla_decode_fwd */
    IA_DV_FROM_V,/* d_h_v = D[2][-1] */
    IA_TILELANG, /* d_h_v = int(C[4]) or 512 */
    IA_RAGGED,   /* sglang paged attention ragged */
    IA_GLUON,    /* aiter::pa_decode_gluon */
    IA_V4_SWA,
    IA_V4_CSA,
    IA_V4_HCA,
} ia_kind;

typedef struct ia_cfg {
    int64_t NQ, HQ, NKV, HKV, dqk, dv;
    int64_t st[NSTATS];
    const char *dtype_q, *dtype_kv;
    int with_kv;       /* dtype_KV is a param */
    int64_t window;    /* sliding window (0: none) */
    int with_window;   /* sliding_window is a param */
} ia_cfg;

static const char *const BF16 = "c10::BFloat16";

/* attention_perf_meta.k_cache_dtype, else T[1] when set, else T[0]. */
static const char *kv_dtype(const tl_perf_event *ev)
{
    const char *k = tl_pv_cstr(tl_pv_dict_get(tl_pe_arg(ev, "attention_perf_meta"), "k_cache_dtype"));
    if (k && *k) return k;
    const char *t1 = tl_pe_type(ev, 1);
    return t1 && *t1 ? t1 : tl_pe_type(ev, 0);
}

/* q = D[qi] = (N_Q, H_Q, d_h_qk); (N_KV, H_KV, d_h_v) = the last three dims of D[1]. */
static int ia_base_dims(const tl_perf_event *ev, size_t qi, ia_cfg *c)
{
    if (tl_pv_len(tl_pe_dim(ev, qi)) != 3 || tl_pv_len(tl_pe_dim(ev, 1)) < 3) return 0;
    return dim(ev, qi, 0, &c->NQ) && dim(ev, qi, 1, &c->HQ) && dim(ev, qi, 2, &c->dqk) && dim(ev, 1, -3, &c->NKV) &&
           dim(ev, 1, -2, &c->HKV) && dim(ev, 1, -1, &c->dv);
}

static int v4_is_pro(const tl_perf_event *ev)
{
    const char *m = tl_pv_cstr(tl_pe_arg(ev, "v4_model_name"));
    return m && strcasestr(m, "pro");
}

/* DeepSeek-V4 paged decode: MQA (H_KV 1) over a windowed / compressed KV. */
static int v4_geometry(const tl_perf_event *ev, ia_cfg *c)
{
    pn hq;
    if (!tl_pe_arg(ev, "v4_H_Q")) { /* n_heads // v4_tp */
        if (!floordiv(pi(v4_is_pro(ev) ? 128 : 64), pi(int_arg(ev, "v4_tp", 1)), &hq)) return 0;
        c->HQ = (int64_t)hq.i;
    } else {
        c->HQ = int_arg(ev, "v4_H_Q", 0);
    }
    c->dqk = c->dv = int_arg(ev, "v4_d_h", 512);
    c->HKV = 1;
    if (!dim(ev, 0, 0, &c->NQ)) c->NQ = 0;
    if (!dim(ev, 1, -3, &c->NKV)) c->NKV = 0;
    c->dtype_q = c->dtype_kv = BF16;
    return 1;
}

/* swa: the window; csa: + the selected compressed entries; hca: + 1/128 of the KV. */
static int v4_window(const tl_perf_event *ev, ia_kind kind, const int64_t *st, int64_t *out)
{
    pn window = pi(int_arg(ev, "v4_window", 128));
    pn topk = pi(int_arg(ev, "v4_index_topk", v4_is_pro(ev) ? 1024 : 512));
    pn w = window;
    if (kind != IA_V4_SWA && st[GSQ] == 0) {
        w = kind == IA_V4_CSA ? add(window, topk) : pi(0);
    } else if (kind != IA_V4_SWA) { /* stats are >= 0, so the ceilings fit an int64 */
        double ratio = (double)st[GSK] / (double)st[GSQ];
        w = kind == IA_V4_CSA ? add(window, pmin(pi((int64_t)ceil(ratio / 4)), topk))
                              : add(window, pi((int64_t)ceil(ratio / 128)));
    }
    return tl_pn_int64(w, out);
}

static int ia_geometry(const tl_perf_event *ev, ia_kind kind, ia_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->dtype_q = tl_pe_type(ev, 0);
    c->dtype_kv = kv_dtype(ev);
    c->with_kv = 1;
    int64_t v;
    switch (kind) {
    case IA_BASE: return ia_base_dims(ev, 0, c);
    case IA_DV_FROM_V: return ia_base_dims(ev, 0, c) && dim(ev, 2, -1, &c->dv);
    case IA_TILELANG: /* FIX: args' Concrete Inputs, not the event's top level */
        if (!ia_base_dims(ev, 0, c)) return 0;
        c->dv = tl_py_int(tl_pe_concrete(ev, 4), &v) ? v : 512;
        return 1;
    case IA_RAGGED:
        c->dtype_q = tl_pe_type(ev, 2);
        c->with_kv = 0;
        return tl_pv_len(tl_pe_dim(ev, 2)) == 3 && dim(ev, 2, 0, &c->NQ) && dim(ev, 2, 1, &c->HQ) &&
               dim(ev, 2, 2, &c->dqk) && dim(ev, 3, -2, &c->HKV) && dim(ev, 4, -1, &c->dv);
    case IA_GLUON:
        if (!ia_base_dims(ev, 0, c) || !dim(ev, 2, 1, &c->HKV)) return 0;
        c->dv = c->dqk;
        c->dtype_kv = tl_pe_type(ev, 2);
        c->window = tl_py_int(tl_pe_concrete(ev, 19), &v) ? v : 0;
        c->with_window = 1;
        return 1;
    default: return v4_geometry(ev, c);
    }
}

static void ia_params(const ia_cfg *c, tl_perf_result *r)
{
    static const char *const stat_keys[NSTATS] = {"c_sq", "c_sk", "c_sqsq", "c_sqsk",
                                                   "g_sq", "g_sk", "g_sqsq", "g_sqsk"};
    tl_pm_int(r, "B", 1);
    tl_pm_int(r, "N_Q", c->NQ);
    tl_pm_int(r, "H_Q", c->HQ);
    tl_pm_int(r, "H_V", c->HKV);
    tl_pm_int(r, "H_K", c->HKV);
    tl_pm_int(r, "N_KV", c->NKV);
    tl_pm_int(r, "H_KV", c->HKV);
    tl_pm_int(r, "d_h_qk", c->dqk);
    tl_pm_int(r, "d_h_v", c->dv);
    tl_pm_float(r, "dropout", 0.0);
    tl_pm_bool(r, "causal", 0);
    tl_pm_bool(r, "flash_impl", 1);
    for (int i = 0; i < NSTATS; i++) tl_pm_int(r, stat_keys[i], c->st[i]);
    tl_pm_str(r, "dtype_Q", c->dtype_q);
    if (c->with_kv) tl_pm_str(r, "dtype_KV", c->dtype_kv);
    if (c->with_window) tl_pm_int(r, "sliding_window", c->window);
}

/* Context: full attention to earlier chunks plus a causal block within the
 * chunk; decode: full attention, capped by a sliding window. */
static void ia_work(const ia_cfg *c, tl_perf_result *r)
{
    const int64_t *s = c->st;
    pn HQ = pi(c->HQ), HKV = pi(c->HKV), dqk = pi(c->dqk), dv = pi(c->dv), two = pi(2);
    pn gsqsk = pi(s[GSQSK]), gsk = pi(s[GSK]), csqsk = pi(s[CSQSK]), csqsq = pi(s[CSQSQ]);
    if (c->window > 0) {
        pn cap = mul(pi(s[GSQ]), pi(c->window));
        gsqsk = pmin(gsqsk, cap);
        gsk = pmin(gsk, cap);
    }
    pn ctx = sub(sub(add(mul3(two, csqsk, dqk), mul3(two, csqsk, dv)), mul(csqsq, dqk)), mul(csqsq, dv));
    pn gen = add(mul3(two, gsqsk, dqk), mul3(two, gsqsk, dv));
    pn flops = add(mul(HQ, ctx), mul(HQ, gen));

    int bpe = tl_dtype_bpe_or(c->dtype_q, 2), bpe_kv = c->with_kv ? tl_dtype_bpe_or(c->dtype_kv, bpe) : bpe;
    pn per_token = add(add(add(mul(HQ, dqk), mul(HQ, dv)), mul(HKV, dqk)), mul(HKV, dv));
    pn qkvo = mul(add(mul(pi(s[CSQ]), per_token), mul(pi(s[GSQ]), per_token)), pi(bpe));
    pn cached = add(sub(pi(s[CSK]), pi(s[CSQ])), sub(gsk, pi(s[GSQ])));
    pn kv = mul(mul3(cached, HKV, add(dqk, dv)), pi(bpe_kv));
    set_work(r, flops, 1, add(qkvo, kv));
}

static int ia_run(ia_kind kind, const tl_perf_event *ev, tl_perf_result *r)
{
    ia_cfg c;
    if (!ia_geometry(ev, kind, &c)) return tl_perf_error(r, "%s: unexpected Input Dims or args", ev->name);
    if (!tl_attention_chunk_stats(tl_pv_cstr(tl_pe_arg(ev, "annotation")), c.st))
        return tl_perf_error(r, "%s: no detailed iteration annotation (no workload data)", ev->name);
    if (kind == IA_GLUON || kind >= IA_V4_SWA) memset(c.st, 0, 4 * sizeof *c.st); /* decode only */
    if (kind == IA_RAGGED && !tl_pn_int64(add(pi(c.st[CSK]), pi(c.st[GSK])), &c.NKV))
        return tl_perf_error(r, "%s: N_KV out of range", ev->name);
    if (kind >= IA_V4_SWA) {
        if (!v4_window(ev, kind, c.st, &c.window)) return tl_perf_error(r, "%s: window out of range", ev->name);
        c.with_window = 1;
    }
    ia_params(&c, r);
    if (c.st[CSQ] == 0 && c.st[GSQ] == 0) return tl_perf_not_implemented(r);
    ia_work(&c, r);
    return tl_perf_ok(r, "matrix", c.dtype_q);
}

#define IA_CLASS(cls, kind)                                                                       \
    static int fn_##cls(const tl_perf_event *ev, int bwd, tl_perf_result *r)                     \
    {                                                                                             \
        (void)bwd;                                                                                \
        return ia_run(kind, ev, r);                                                               \
    }                                                                                             \
    const tl_perf_class tl_pc_##cls = {#cls, "InferenceAttention", NULL, "InferenceAttention", 0, fn_##cls, 0};

IA_CLASS(vllm_unified_attention_with_output, IA_BASE)
IA_CLASS(mha_varlen_fwd, IA_BASE)
IA_CLASS(mla_decode_fwd, IA_BASE)
IA_CLASS(aiter_fmha_v3_varlen_fwd, IA_DV_FROM_V)
IA_CLASS(aiter_mha_batch_prefill, IA_DV_FROM_V)
IA_CLASS(pseudo_mla_prefill_fwd, IA_DV_FROM_V)
IA_CLASS(mla_tilelang_sparse_fwd, IA_TILELANG)
IA_CLASS(aiter_paged_attention_ragged, IA_RAGGED)
IA_CLASS(pa_decode_gluon, IA_GLUON)
IA_CLASS(pseudo_v4_paged_decode_swa, IA_V4_SWA)
IA_CLASS(pseudo_v4_paged_decode_csa, IA_V4_CSA)
IA_CLASS(pseudo_v4_paged_decode_hca, IA_V4_HCA)

/* aiter::pa_sparse_prefill_opus_fwd: (query, key) pairs from D[2][0] + D[5][0];
 * no annotation. */
static int fn_pa_sparse_prefill_opus_fwd(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    ia_cfg c;
    int64_t p0, p1;
    if (!ia_geometry(ev, IA_BASE, &c) || !dim(ev, 2, 0, &p0) || !dim(ev, 5, 0, &p1))
        return tl_perf_error(r, "%s: unexpected Input Dims", ev->name);
    c.HKV = 1;
    pn pairs = add(pi(p0), pi(p1)), dqk = pi(c.dqk), dv = pi(c.dv);
    ia_params(&c, r);
    pm_pn(r, "pairs", pairs);
    int bpe = tl_dtype_bpe_or(c.dtype_q, 2), bpe_kv = tl_dtype_bpe_or(c.dtype_kv, bpe);
    pn flops = mul(mul3(pairs, pi(c.HQ), pi(2)), add(dqk, dv));
    pn q = mul(mul(mul3(pi(2), pi(c.NQ), pi(c.HQ)), dqk), pi(bpe));
    set_work(r, flops, 1, add(q, mul3(pairs, dv, pi(bpe_kv))));
    return tl_perf_ok(r, "matrix", c.dtype_q);
}

/* Gated Delta Net (vllm::gdn_attention_core, aiter::linear_attention_with_output_base). */
static int fn_gdn_attention_core(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    int64_t st[NSTATS], D, HV, dv;
    if (!tl_attention_chunk_stats(tl_pv_cstr(tl_pe_arg(ev, "annotation")), st))
        return tl_perf_not_implemented(r); /* chunk_stats' NotImplementedError escapes */
    if (!dim(ev, 0, 1, &D) || !dim(ev, 1, 1, &HV) || !dim(ev, 3, 2, &dv))
        return tl_perf_error(r, "%s: unexpected Input Dims", ev->name);
    pn HK, dk, t, tokens = add(pi(st[CSQ]), pi(st[GSQ]));
    if (!floordiv(pi(HV), pi(2), &HK) || !floordiv(sub(pi(D), mul(pi(HV), pi(dv))), pi(2), &t) ||
        !floordiv(t, HK, &dk))
        return tl_perf_error(r, "%s: H_V < 2", ev->name);
    pm_pn(r, "num_tokens", tokens);
    tl_pm_int(r, "D", D);
    pm_pn(r, "H_K", HK);
    tl_pm_int(r, "H_V", HV);
    pm_pn(r, "d_k", dk);
    tl_pm_int(r, "d_v", dv);
    tl_pm_int(r, "c_sq", st[CSQ]);
    tl_pm_int(r, "g_sq", st[GSQ]);
    tl_pm_str(r, "dtype", tl_pe_type(ev, 0));
    if (tl_pn_eq(tokens, pi(0))) return tl_perf_not_implemented(r);
    pn n = mul(tokens, pi(HV));
    pn flops = mul(mul3(n, pi(7), pi(dv)), dk);
    pn bytes = mul(mul(n, add(add(dk, mul(pi(2), pi(dv))), pi(2))), pi(2));
    set_work(r, flops, 1, bytes);
    return tl_perf_ok(r, "matrix", tl_pe_type(ev, 0));
}

/* sglang::store_cache: a KV-cache write, 4 tensors of prod(D[0]) elements. */
static int fn_sglang_store_cache(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    const tl_pv *shape = tl_pe_dim(ev, 0);
    if (!tl_pv_is_list(shape)) return tl_perf_error(r, "%s: Input Dims[0] missing", ev->name);
    pn n = pi(1);
    for (size_t i = 0; i < shape->n; i++) {
        int64_t d;
        if (!tl_pv_int(&shape->items[i], &d)) return tl_perf_error(r, "%s: bad shape", ev->name);
        n = mul(n, pi(d));
    }
    const char *dtype = tl_pe_type(ev, 0);
    tl_pm_pv(r, "op_shape", shape);
    pm_pn(r, "nelems", n);
    tl_pm_str(r, "dtype", dtype);
    set_work(r, pi(0), 1, mul3(pi(4), n, pi(tl_dtype_bpe_or(dtype, 2))));
    return tl_perf_ok(r, "vector", dtype);
}

const tl_perf_class tl_pc_pa_sparse_prefill_opus_fwd = {"pa_sparse_prefill_opus_fwd", "InferenceAttention", NULL,
                                                        "InferenceAttention", 0, fn_pa_sparse_prefill_opus_fwd, 0};
const tl_perf_class tl_pc_gdn_attention_core = {"gdn_attention_core", "InferenceAttention", NULL,
                                                "InferenceAttention", 0, fn_gdn_attention_core, 0};
const tl_perf_class tl_pc_sglang_store_cache = {"sglang_store_cache", "InferenceAttention", NULL,
                                                "InferenceAttention", 0, fn_sglang_store_cache, 0};
