/* model_core_misc.c — other core perf models (perf-model spec §4.8). */
#include "model_core_misc.h"

#include "perf_util.h"

/* ===================================================================== */
/* The models                                                             */
/* ===================================================================== */

/* bpe of Input type[i], or dflt when unknown (the reference's `or`). */
static int bpe_or(const tl_perf_event *ev, size_t i, int dflt) { return tl_dtype_bpe_or(tl_pe_type(ev, i), dflt); }

/* A shape of exactly n ints, copied to out. */
static int shape_n(const tl_pv *shape, size_t n, int64_t *out)
{
    if (tl_pv_len(shape) != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (!tl_shape_dim(shape, (long)i, &out[i])) return 0;
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
    if (!tl_shape_dim(x, 0, &tokens) || !tl_shape_dim(x, 1, &hidden))
        return tl_perf_error(r, "%s: Input Dims[0] needs (tokens, hidden)", ev->name);
    const char *dtype = tl_pe_type(ev, 0);
    tl_pm_int(r, "num_tokens", tokens);
    tl_pm_int(r, "hidden", hidden);
    tl_pm_str(r, "dtype", dtype);
    int bpe = tl_dtype_bpe(dtype);
    r->flops = 0;
    if (bpe) tl_perf_set_bytes(r, (double)((__int128)tokens * hidden * bpe));
    return tl_perf_ok(r, NULL, dtype); /* no compute unit: no Compute Spec */
}

const tl_perf_class tl_pc_moe_dispatch = {"moe_dispatch", "MoE_comm_fwd", "MoE_comm_bwd", "MoE_comm", 1, moe_comm, 0};
const tl_perf_class tl_pc_moe_combine = {"moe_combine", "MoE_comm_fwd", "MoE_comm_bwd", "MoE_comm", 1, moe_comm, 0};

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
    tl_perf_set_bytes(r, (double)(((__int128)2 * b * c * L + (__int128)c * k + (has_bias ? c : 0)) * bpe));
    return tl_perf_ok(r, "matrix", tl_pe_type(ev, 0));
}

const tl_perf_class tl_pc_causal_conv1d_fwd = {"causal_conv1d_fwd", "SSM_fwd", NULL, "SSM", 0, causal_conv1d, 0};

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
    if (!tl_py_literal_int(r, s, &v)) return 0;
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
        !tl_shape_dim(tl_pe_dim(ev, 3), 0, &H))
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
    tl_perf_set_bytes(r, (double)bytes);
    return tl_perf_ok(r, "matrix", tl_pe_type(ev, 0));
}

const tl_perf_class tl_pc_mamba_ssd_fwd = {"mamba_ssd_fwd", "SSM_fwd", "SSM_bwd", "SSM", 1, mamba_ssd, 0};

/* --- FusedRoPEFunc ---------------------------------------------------- */

static int fused_rope(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    const tl_pv *x = tl_pe_dim(ev, 0);
    int64_t n;
    if (!tl_shape_numel(x, &n)) return tl_perf_error(r, "%s: Input Dims[0] is not a shape", ev->name);
    int bpe = bpe_or(ev, 0, 2);
    tl_pm_pv(r, "input_shape", x);
    tl_pm_str(r, "dtype", tl_pe_type(ev, 0));
    r->flops = (double)((__int128)3 * n);
    tl_perf_set_bytes(r, (double)((__int128)2 * n * bpe));
    return tl_perf_ok(r, "vector", tl_pe_type(ev, 0));
}

const tl_perf_class tl_pc_fused_rope_fwd = {"fused_rope_fwd", "RoPE_fwd", NULL, "RoPE", 0, fused_rope, 0};

/* --- CrossEntropyFunction --------------------------------------------- */

/* Reads the logits, writes a float loss (4 B) and reads int64 targets
 * (8 B) per row. */
static int cross_entropy(const tl_perf_event *ev, int bwd, tl_perf_result *r)
{
    (void)bwd;
    const tl_pv *logits = tl_pe_dim(ev, 0);
    int64_t batch, V, n;
    if (!tl_shape_numel(logits, &n) || !tl_shape_dim(logits, 0, &batch) || !tl_shape_dim(logits, -1, &V))
        return tl_perf_error(r, "%s: Input Dims[0] needs (batch, ..., vocab)", ev->name);
    int bpe = bpe_or(ev, 0, 2);
    tl_pm_int(r, "batch", batch);
    tl_pm_int(r, "vocab_size", V);
    tl_pm_str(r, "dtype", tl_pe_type(ev, 0));
    r->flops = (double)((__int128)5 * batch * V);
    tl_perf_set_bytes(r, (double)((__int128)n * bpe + (__int128)batch * 8 + (__int128)batch * 4));
    return tl_perf_ok(r, "vector", tl_pe_type(ev, 0));
}

const tl_perf_class tl_pc_cross_entropy_fwd = {"cross_entropy_fwd", "CrossEntropy_fwd", NULL, "CrossEntropy", 0,
                                               cross_entropy, 0};
