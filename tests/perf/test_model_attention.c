/* test_model_attention.c — SDPA (perf-model spec §4.3) and inference
 * attention (§4.10) models against hand-checked numbers: the reference CSV
 * rows (h100 / agent cases SDPA_fwd, inference InferenceAttention_fwd),
 * the §4.10 worked example, the FIX cases (q's element size, dtype_A_B for
 * every class, tilelang d_h_v from args), varlen, GQA, error paths. */
#include <stdio.h>
#include <string.h>

#include "perf/model_attention.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

#define BF16 "\"c10::BFloat16\""
#define SDPA_KEYS "B,N_Q,H_Q,N_KV,H_KV,d_h_qk,d_h_v,dropout,causal,flash_impl,dtype_A_B"
#define IA_KEYS                                                                                               \
    "B,N_Q,H_Q,H_V,H_K,N_KV,H_KV,d_h_qk,d_h_v,dropout,causal,flash_impl,c_sq,c_sk,c_sqsq,c_sqsk,g_sq,g_sk," \
    "g_sqsq,g_sqsk,dtype_Q"

/* An aten::_scaled_dot_product_flash_attention event with q = k = v. */
static tl_perf_event sdpa_flash(const char *shape, const char *causal)
{
    static char dims[256], concrete[256];
    snprintf(dims, sizeof dims, "[%s, %s, %s, [], [], [], []]", shape, shape, shape);
    snprintf(concrete, sizeof concrete, "[\"\", \"\", \"\", \"0.\", \"%s\", \"False\", \"0.125\"]", causal);
    return tl_pt_event("aten::_scaled_dot_product_flash_attention", dims,
                       "[" BF16 ", " BF16 ", " BF16 ", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]", NULL, concrete,
                       NULL);
}

/* §7 E3: Qwen SDPA_fwd (causal). */
static void test_sdpa_qwen_causal(void)
{
    tl_perf_event ev = sdpa_flash("[16, 16, 559, 64]", "True");
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_flash_attention, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 10.239377408);
    CHECK_DBL(r.bytes / 1048576, 69.875);
    CHECK_DBL((r.flops / 1e9 * 1e9) / r.bytes, 139.75);
    CHECK_STR(r.maf, "matrix");
    CHECK_STR(r.precision, "bf16");
    CHECK_STR(tl_pt_keys(&r), SDPA_KEYS);
    CHECK_STR(tl_pt_param_repr(&r, "B"), "16");
    CHECK_STR(tl_pt_param_repr(&r, "N_Q"), "559");
    CHECK_STR(tl_pt_param_repr(&r, "H_Q"), "16");
    CHECK_STR(tl_pt_param_repr(&r, "d_h_v"), "64");
    CHECK_STR(tl_pt_param_repr(&r, "dropout"), "0.0");
    CHECK_STR(tl_pt_param_repr(&r, "causal"), "True");
    CHECK_STR(tl_pt_param_repr(&r, "flash_impl"), "True");
    CHECK_STR(tl_pt_param_repr(&r, "dtype_A_B"), "('c10::BFloat16', 'c10::BFloat16')");
    tl_perf_result_free(&r);
    /* SDPA_bwd metrics of the same op */
    CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_flash_attention, &ev, 1, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 25.59844352);
    CHECK_DBL(r.bytes / 1048576, 122.28125);
    tl_perf_result_free(&r);
}

/* Non-causal reference rows: Falconsai, bert-small, the agent case. */
static void test_sdpa_reference_rows(void)
{
    static const struct {
        const char *shape;
        double gflops, mb, intensity;
    } rows[] = {
        {"[4, 12, 197, 64]", 0.476884992, 4.6171875, 98.5},
        {"[1, 8, 141, 64]", 0.040716288, 0.55078125, 70.5},
        {"[1, 32, 32768, 128]", 17592.186044416, 1024.0, 16384.0},
        {"[8, 16, 4096, 128]", 1099.511627776, 512.0, 2048.0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        tl_perf_event ev = sdpa_flash(rows[i].shape, "False");
        tl_perf_result r;
        CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_flash_attention, &ev, 0, &r), TL_PERF_OK);
        CHECK_DBL(r.flops / 1e9, rows[i].gflops);
        CHECK_DBL(r.bytes / 1048576, rows[i].mb);
        CHECK_DBL((r.flops / 1e9 * 1e9) / r.bytes, rows[i].intensity);
        CHECK_STR(tl_pt_param_repr(&r, "causal"), "False");
        tl_perf_result_free(&r);
    }
}

/* Efficient attention in fp32: the FIX counts 4 bytes, and flash_impl is
 * True (the FIX: the backward recomputes QK^T). By hand, B=2, H=4, N=100,
 * d=32, not causal: forward 4·B·H·N²·d = 10240000 flops; backward 8·B·H·N²·d
 * (dV, dP, dQ, dK) = 20480000 plus the recompute 2·B·H·N²·d = 5120000. */
static void test_sdpa_efficient_fp32(void)
{
    tl_perf_event ev = tl_pt_event("aten::_scaled_dot_product_efficient_attention",
                                   "[[2, 4, 100, 32], [2, 4, 100, 32], [2, 4, 100, 32], [], [], [], [], []]",
                                   "[\"float\", \"float\", \"float\", \"\", \"Scalar\", \"Scalar\", \"Scalar\"]", NULL,
                                   "[\"\", \"\", \"\", \"\", \"False\", \"None\", \"\", \"\"]", NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_efficient_attention, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 10240000.0);
    CHECK_DBL(r.bytes, 409600.0); /* the reference: 204800 (2 bytes) */
    CHECK_STR(r.precision, "fp32");
    CHECK_STR(tl_pt_param_repr(&r, "flash_impl"), "True"); /* the reference: False */
    CHECK_STR(tl_pt_param_repr(&r, "dropout"), "0.0");
    CHECK_STR(tl_pt_param_repr(&r, "causal"), "False");
    tl_perf_result_free(&r);
    CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_efficient_attention, &ev, 1, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 25600000.0); /* the reference: 20480000, no recompute */
    CHECK_DBL(r.bytes, 716800.0);
    tl_perf_result_free(&r);
    CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_cudnn_attention, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 10240000.0);
    tl_perf_result_free(&r);
}

/* cuDNN attention as the H200 capture gpt_train records it (PyTorch 2.11:
 * q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal,
 * return_debug_mask, scale), causal, B=8, H=16, N=1023, d=64 bf16. By hand,
 * B·H·N²·d = 8·16·1046529·64 = 8573165568: forward 4·that/2 = 17146331136
 * flops (causal halves); backward with the QK^T recompute its
 * ..._flash_bprop_... kernel runs, 10·that/2 = 42865827840 (2.5 times the
 * forward; the reference's flash_impl False gives 8·that/2 = 34292662272);
 * bytes: forward 4 tensors, backward 7, of 8·16·1023·64 = 8380416 elements
 * at 2 bytes = 67043328 and 117325824. */
static void test_sdpa_cudnn_backward_recompute(void)
{
    const char *shape = "[8, 16, 1023, 64]";
    char dims[256];
    snprintf(dims, sizeof dims, "[%s, %s, %s, [], [], [], [], [], []]", shape, shape, shape);
    tl_perf_event ev = tl_pt_event("aten::_scaled_dot_product_cudnn_attention", dims,
                                   "[" BF16 ", " BF16 ", " BF16 ", \"\", \"Scalar\", \"Scalar\", \"Scalar\", "
                                   "\"Scalar\", \"\"]",
                                   NULL, "[\"\", \"\", \"\", \"\", \"True\", \"0.\", \"True\", \"False\", \"\"]", NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_cudnn_attention, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 17146331136.0);
    CHECK_DBL(r.bytes, 67043328.0);
    CHECK_STR(tl_pt_param_repr(&r, "causal"), "True");
    CHECK_STR(tl_pt_param_repr(&r, "flash_impl"), "True");
    tl_perf_result_free(&r);
    CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_cudnn_attention, &ev, 1, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 42865827840.0);
    CHECK_DBL(r.bytes, 117325824.0);
    tl_perf_result_free(&r);
}

/* FlashAttnFunc: BNHD layout, GQA (H_KV < H_Q), N_Q != N_KV, strides required. */
static void test_flash_attention_gqa(void)
{
    const char *dims = "[[2, 128, 8, 64], [2, 256, 2, 64], [2, 256, 2, 64], [], [], []]";
    const char *concrete = "[\"\", \"\", \"\", \"0.0\", \"0.125\", \"False\"]";
    tl_perf_event ev = tl_pt_event("FlashAttnFunc", dims, "[" BF16 ", " BF16 ", " BF16 "]",
                                   "[[65536, 512, 64, 1], [32768, 128, 64, 1], [32768, 128, 64, 1]]", concrete, NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_flash_attention, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.134217728);
    CHECK_DBL(r.bytes / 1048576, 0.75);
    CHECK_STR(tl_pt_param_repr(&r, "N_Q"), "128");
    CHECK_STR(tl_pt_param_repr(&r, "H_Q"), "8");
    CHECK_STR(tl_pt_param_repr(&r, "N_KV"), "256");
    CHECK_STR(tl_pt_param_repr(&r, "H_KV"), "2");
    tl_perf_result_free(&r);
    CHECK_I64(tl_pt_run(&tl_pc_flash_attention, &ev, 1, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 335740928.0); /* includes the GQA reduction terms */
    CHECK_DBL(r.bytes, 1310720.0);
    tl_perf_result_free(&r);

    ev = tl_pt_event("FlashAttnFunc", dims, "[" BF16 ", " BF16 ", " BF16 "]", NULL, concrete, NULL);
    CHECK_I64(tl_pt_run(&tl_pc_flash_attention, &ev, 0, &r), TL_PERF_ERROR); /* KeyError: no strides */
    tl_perf_result_free(&r);

    /* causal with N_Q != N_KV: ValueError [KEEP] */
    ev = tl_pt_event("FlashAttnFunc", dims, "[" BF16 ", " BF16 ", " BF16 "]",
                     "[[65536, 512, 64, 1], [32768, 128, 64, 1], [32768, 128, 64, 1]]",
                     "[\"\", \"\", \"\", \"0.0\", \"0.125\", \"True\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_flash_attention, &ev, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
}

/* flash_attn::_flash_attn_backward: q = D[1]; causal defaults to True when absent. */
static void test_flash_attention_backward(void)
{
    const char *s = "[2, 256, 8, 128]";
    char dims[256];
    snprintf(dims, sizeof dims, "[%s, %s, %s, %s]", s, s, s, s);
    tl_perf_event ev = tl_pt_event("flash_attn::_flash_attn_backward", dims, "[" BF16 ", " BF16 ", " BF16 ", " BF16 "]",
                                   NULL, "[\"\", \"\", \"\", \"\"]", NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_flash_attention_backward, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.67108864);
    CHECK_DBL(r.bytes / 1048576, 7.0);
    CHECK_STR(tl_pt_param_repr(&r, "causal"), "True");
    CHECK_STR(tl_pt_param_repr(&r, "dropout"), "0.0");
    CHECK_STR(tl_pc_flash_attention_backward.category, "SDPA_bwd");
    tl_perf_result_free(&r);
}

/* flash_attn varlen forward / backward: the max + average decomposition. */
static void test_flash_attention_varlen(void)
{
    tl_perf_event ev =
        tl_pt_event("flash_attn::_flash_attn_varlen_forward",
                    "[[1000, 8, 64], [1000, 8, 64], [1000, 8, 64], [5], [5], [], [], [], [], []]",
                    "[" BF16 ", " BF16 ", " BF16 ", \"int\", \"int\"]", NULL,
                    "[\"\", \"\", \"\", \"\", \"\", \"400\", \"400\", \"0.0\", \"0.125\", \"True\"]", NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_flash_attention_varlen_forward, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 286720000.0);
    CHECK_DBL(r.bytes, 4096000.0);
    CHECK_STR(tl_pt_keys(&r), SDPA_KEYS ",num_seqs_q,num_seqs_kv,max_seqlen_q,max_seqlen_kv");
    CHECK_STR(tl_pt_param_repr(&r, "B"), "1");
    CHECK_STR(tl_pt_param_repr(&r, "N_Q"), "1000");
    CHECK_STR(tl_pt_param_repr(&r, "num_seqs_q"), "4");
    CHECK_STR(tl_pt_param_repr(&r, "max_seqlen_q"), "400.0");
    tl_perf_result_free(&r);

    /* non-causal, unequal averages (float floor division) */
    ev = tl_pt_event("flash_attn::_flash_attn_varlen_forward",
                     "[[1001, 8, 64], [999, 2, 64], [999, 2, 64], [4], [4], [], [], [], [], []]",
                     "[" BF16 ", " BF16 ", " BF16 "]", NULL,
                     "[\"\", \"\", \"\", \"\", \"\", \"500\", \"480\", \"0.0\", \"0.125\", \"False\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_flash_attention_varlen_forward, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.756736);
    CHECK_DBL(r.bytes, 2561536.0);
    tl_perf_result_free(&r);

    ev = tl_pt_event("flash_attn::_flash_attn_varlen_backward",
                     "[[1000, 8, 64], [1000, 8, 64], [1000, 8, 64], [1000, 8, 64], [1000, 8, 64], [8, 1000], "
                     "[1000, 8, 64], [1000, 8, 64], [1000, 8, 64], [5], [5]]",
                     "[" BF16 ", " BF16 ", " BF16 ", " BF16 "]", NULL,
                     "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"400\", \"400\", \"0.0\", "
                     "\"0.125\", \"True\"]",
                     NULL);
    CHECK_I64(tl_pt_run(&tl_pc_flash_attention_varlen_backward, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.7168);
    CHECK_DBL(r.bytes, 7168000.0);
    tl_perf_result_free(&r);
}

/* aiter and flash_attn_3 classes: dtype_A_B now set (FIX), q index per op. */
static void test_aiter_classes(void)
{
    const char *s = "[1, 300, 16, 128]", *kv = "[1, 300, 4, 128]", *v = "[1, 300, 4, 64]";
    char dims[256], dims1[256], concrete[512];
    snprintf(dims, sizeof dims, "[%s, %s, %s]", s, kv, v);
    snprintf(dims1, sizeof dims1, "[[1, 300, 16, 64], %s, %s, %s]", s, kv, v);
    tl_perf_result r;

    tl_perf_event ev = tl_pt_event("aiter::mha_fwd", dims, "[" BF16 ", " BF16 ", " BF16 "]", NULL,
                                   "[\"\", \"\", \"\", \"0.0\", \"0.08\", \"true\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aiter__mha_fwd, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.27648);
    CHECK_DBL(r.bytes / 1048576, 2.197265625);
    CHECK_STR(tl_pt_param_repr(&r, "dtype_A_B"), "('c10::BFloat16', 'c10::BFloat16')");
    CHECK_STR(tl_pt_param_repr(&r, "d_h_v"), "64");
    CHECK_STR(r.precision, "bf16");
    tl_perf_result_free(&r);

    ev = tl_pt_event("aiter::mha_bwd", dims1, "[" BF16 ", " BF16 ", " BF16 ", " BF16 "]", NULL,
                     "[\"\", \"\", \"\", \"\", \"\", \"\", \"0.0\", \"0.08\", \"True\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aiter__mha_bwd, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.7373664);
    CHECK_DBL(r.bytes / 1048576, 3.80859375);
    tl_perf_result_free(&r);

    snprintf(concrete, sizeof concrete, "[\"\", \"\", \"\", \"\", \"0.0\", \"0.08\", \"True\"]");
    ev = tl_pt_event("aiter::wrapper_fmha_v3_fwd", dims1, "[" BF16 ", " BF16 ", " BF16 ", " BF16 "]", NULL, concrete,
                     NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aiter__fmha_v3_forward, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.27648);
    tl_perf_result_free(&r);

    /* flash_attn_3::fwd: causal at C[24], no dropout argument */
    char c24[512] = "[";
    for (int i = 0; i < 24; i++) strcat(c24, "\"\", ");
    strcat(c24, "\"True\"]");
    ev = tl_pt_event("flash_attn_3::fwd", dims, "[" BF16 ", " BF16 ", " BF16 "]", NULL, c24, NULL);
    CHECK_I64(tl_pt_run(&tl_pc_flash_attn_v3_forward, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.27648);
    CHECK_STR(tl_pt_param_repr(&r, "causal"), "True");
    CHECK_STR(tl_pt_param_repr(&r, "dropout"), "0.0");
    tl_perf_result_free(&r);

    /* causal index beyond the list: IndexError */
    ev = tl_pt_event("aiter::_flash_attn_forward", dims, "[" BF16 ", " BF16 ", " BF16 "]", NULL, "[\"\", \"\", \"\"]",
                     NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aiter__flash_attn_forward, &ev, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
}

static void test_evoformer_and_checks(void)
{
    tl_perf_event ev = tl_pt_event("EvoformerAttention", "[[2, 3, 50, 4, 16], [2, 3, 50, 4, 16], [2, 3, 50, 4, 16]]",
                                   "[" BF16 ", " BF16 ", " BF16 "]", NULL, NULL, NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_evoformer_attention, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 3840000.0);
    CHECK_DBL(r.bytes, 153600.0);
    CHECK_STR(tl_pt_param_repr(&r, "B"), "6");
    CHECK_STR(tl_pt_param_repr(&r, "dtype_A_B"), "('c10::BFloat16',)");
    CHECK_STR(tl_pt_param_repr(&r, "flash_impl"), "False");
    tl_perf_result_free(&r);

    /* extract_sdpa_cfg checks: batch mismatch, k/v mismatch, q/k head dims */
    const char *bad[] = {
        "[[2, 4, 8, 16], [1, 4, 8, 16], [2, 4, 8, 16], [], [], [], []]",
        "[[2, 4, 8, 16], [2, 4, 8, 16], [2, 4, 9, 16], [], [], [], []]",
        "[[2, 4, 8, 16], [2, 4, 8, 32], [2, 4, 8, 32], [], [], [], []]",
        "[[2, 4, 8], [2, 4, 8], [2, 4, 8], [], [], [], []]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ev = tl_pt_event("aten::_scaled_dot_product_flash_attention", bad[i], "[" BF16 ", " BF16 ", " BF16 "]", NULL,
                         "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"\"]", NULL);
        CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_flash_attention, &ev, 0, &r), TL_PERF_ERROR);
        tl_perf_result_free(&r);
    }
    /* an unknown dtype falls back to 2 bytes (and no precision) */
    ev = tl_pt_event("aten::_scaled_dot_product_flash_attention",
                     "[[1, 8, 141, 64], [1, 8, 141, 64], [1, 8, 141, 64], [], [], [], []]",
                     "[\"BFloat16\", \"BFloat16\", \"BFloat16\"]", NULL,
                     "[\"\", \"\", \"\", \"0.\", \"False\", \"False\", \"0.125\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten__scaled_dot_product_flash_attention, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.bytes / 1048576, 0.55078125);
    CHECK(r.precision == NULL);
    tl_perf_result_free(&r);
}

/* ------------------------------------------------------------------------ */

#define VLLM_DECODE "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)"

/* vllm_decode_full InferenceAttention_fwd row. */
static void test_vllm_unified_attention(void)
{
    tl_perf_event ev = tl_pt_event("vllm::unified_attention_with_output",
                                   "[[32, 64, 64], [32, 8, 64], [32, 8, 64], [32, 64, 64], [], [], [], [0]]",
                                   "[" BF16 ", " BF16 ", " BF16 ", " BF16 ", \"\", \"\", \"\", " BF16 "]", NULL,
                                   "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\"]",
                                   "{\"annotation\": \"" VLLM_DECODE "\"}");
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_vllm_unified_attention_with_output, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.902529024);
    CHECK_DBL(r.bytes / 1048576, 108.08984375);
    CHECK_DBL((r.flops / 1e9 * 1e9) / r.bytes, 7.962993747967186);
    CHECK_STR(r.maf, "matrix");
    CHECK_STR(r.precision, "bf16");
    CHECK_STR(tl_pt_keys(&r), IA_KEYS ",dtype_KV");
    CHECK_STR(tl_pt_param_repr(&r, "N_Q"), "32");
    CHECK_STR(tl_pt_param_repr(&r, "H_V"), "8");
    CHECK_STR(tl_pt_param_repr(&r, "N_KV"), "32");
    CHECK_STR(tl_pt_param_repr(&r, "g_sk"), "55086");
    CHECK_STR(tl_pt_param_repr(&r, "dropout"), "0.0");
    CHECK_STR(tl_pt_param_repr(&r, "flash_impl"), "True");
    CHECK_STR(tl_pt_param_repr(&r, "dtype_KV"), "'c10::BFloat16'");
    tl_perf_result_free(&r);

    /* the same workload in the SGLang and ATOM grammars */
    static const char *const anns[] = {
        "step[DECODE bs=32 g_sq=32 g_sk=55086 g_sqsq=32 g_sqsk=55086]",
        "decode[bs=32 tok=32 d=32 sqsq=32 sqsk=55086 sk=55086]",
    };
    for (int i = 0; i < 2; i++) {
        char args[256];
        snprintf(args, sizeof args, "{\"annotation\": \"%s\"}", anns[i]);
        ev.args = tl_pt_pv(args);
        CHECK_I64(tl_pt_run(&tl_pc_vllm_unified_attention_with_output, &ev, 0, &r), TL_PERF_OK);
        CHECK_DBL(r.flops / 1e9, 0.902529024);
        CHECK_DBL(r.bytes / 1048576, 108.08984375);
        tl_perf_result_free(&r);
    }

    /* no annotation / a native one: no workload data, metrics fail (KEEP) */
    static const char *const none[] = {"{}", "{\"annotation\": \"NA\"}",
                                       "{\"annotation\": \"execute_context_2(6144)_generation_3(3)\"}",
                                       "{\"annotation\": \"step[DECODE bs=64]\"}"};
    for (int i = 0; i < 4; i++) {
        ev.args = tl_pt_pv(none[i]);
        CHECK_I64(tl_pt_run(&tl_pc_vllm_unified_attention_with_output, &ev, 0, &r), TL_PERF_ERROR);
        tl_perf_result_free(&r);
    }
    /* an idle step: NotImplementedError */
    ev.args = tl_pt_pv("{\"annotation\": \"execute_0_context_0(sq0sk0sqsq0sqsk0)_generation_0(sq0sk0sqsq0sqsk0)\"}");
    CHECK_I64(tl_pt_run(&tl_pc_vllm_unified_attention_with_output, &ev, 0, &r), TL_PERF_NOT_IMPLEMENTED);
    tl_perf_result_free(&r);
    CHECK_STR(tl_pc_vllm_unified_attention_with_output.category, "InferenceAttention");
    CHECK(tl_pc_vllm_unified_attention_with_output.bwd_category == NULL);
}

/* §4.10 example: a mixed prefill + decode step. */
static void test_inference_worked_example(void)
{
    tl_perf_event ev = tl_pt_event("aiter::mha_varlen_fwd", "[[6147, 32, 128], [6147, 8, 128], [6147, 8, 128]]",
                                   "[" BF16 ", " BF16 ", " BF16 "]", NULL, NULL,
                                   "{\"annotation\": \"execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_"
                                   "generation_3(sq3sk6144sqsq3sqsk6144)\"}");
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_mha_varlen_fwd, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 205453787136.0);
    CHECK_DBL(r.bytes, 155140096.0);
    CHECK_STR(tl_pt_param_repr(&r, "c_sqsk"), "23019520");
    CHECK_STR(tl_pt_param_repr(&r, "g_sq"), "3");
    tl_perf_result_free(&r);
}

/* sglang_decode InferenceAttention_fwd rows: paged attention ragged, store_cache. */
static void test_sglang_rows(void)
{
    tl_perf_event ev = tl_pt_event(
        "sglang_profiler::attention_paged_attention_ragged",
        "[[32, 32, 128], [10905190400], [32, 32, 128], [835874, 1, 8, 128], [835874, 1, 8, 128], [33], "
        "[20971520], [4096], [], [1], [1], []]",
        "[" BF16 ", \"unsigned char\", " BF16 ", " BF16 ", " BF16
        ", \"int\", \"int\", \"int\", \"\", \"float\", \"float\", \"\"]",
        NULL, "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\"]",
        "{\"annotation\": \"execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)\"}");
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aiter_paged_attention_ragged, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.53714944);
    CHECK_DBL(r.bytes / 1048576, 128.56640625);
    CHECK_DBL((r.flops / 1e9 * 1e9) / r.bytes, 3.9844438367818187);
    CHECK_STR(tl_pt_keys(&r), IA_KEYS); /* no dtype_KV */
    CHECK_STR(tl_pt_param_repr(&r, "N_KV"), "32785");
    CHECK_STR(tl_pt_param_repr(&r, "H_KV"), "8");
    CHECK_STR(tl_pt_param_repr(&r, "dtype_Q"), "'c10::BFloat16'");
    tl_perf_result_free(&r);

    ev = tl_pt_event("sglang::store_cache", "[[32, 1024], [32, 1024], [835874, 1024], [835874, 1024], [32], [], []]",
                     "[" BF16 ", " BF16 ", " BF16 ", " BF16 ", \"long int\", \"Scalar\", \"Scalar\"]", NULL,
                     "[\"\", \"\", \"\", \"\", \"\", \"2048\", \"0\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_sglang_store_cache, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.0);
    CHECK_DBL(r.bytes / 1048576, 0.25);
    CHECK_STR(r.maf, "vector");
    CHECK_STR(r.precision, "bf16");
    CHECK_STR(tl_pt_keys(&r), "op_shape,nelems,dtype");
    CHECK_STR(tl_pt_param_repr(&r, "op_shape"), "(32, 1024)");
    CHECK_STR(tl_pt_param_repr(&r, "nelems"), "32768");
    CHECK_STR(tl_pt_param_repr(&r, "dtype"), "'c10::BFloat16'");
    tl_perf_result_free(&r);
}

/* d_h_v variants: fmha_v3_varlen (D[2][-1]) and tilelang (C[4], FIX, else 512). */
static void test_dv_variants(void)
{
    tl_perf_event ev =
        tl_pt_event("aiter::fmha_v3_varlen_fwd", "[[4096, 16, 192], [4096, 16, 192], [4096, 16, 128]]",
                    "[" BF16 ", " BF16 ", " BF16 "]", NULL, NULL,
                    "{\"annotation\": \"step[EXTEND bs=1 c_sq=4096 c_sk=4096 c_sqsq=8388608 c_sqsk=8390656]\"}");
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aiter_fmha_v3_varlen_fwd, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 42.97064448);
    CHECK_DBL(r.bytes / 1048576, 80.0);
    CHECK_STR(tl_pt_param_repr(&r, "d_h_v"), "128");
    tl_perf_result_free(&r);

    const char *ann = "{\"annotation\": \"" "execute_64_context_0(sq0sk0sqsq0sqsk0)_generation_64("
                      "sq64sk131072sqsq64sqsk131072)\"}";
    const char *types = "[" BF16 ", \"c10::Float8_e4m3fn\"]";
    ev = tl_pt_event("sglang_profiler::tilelang_kernel_tilelang_sparse_fwd", "[[64, 128, 576], [10000, 1, 576]]", types,
                     NULL, NULL, ann);
    CHECK_I64(tl_pt_run(&tl_pc_mla_tilelang_sparse_fwd, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 36.507222016);
    CHECK_DBL(r.bytes / 1048576, 153.06640625);
    CHECK_STR(tl_pt_param_repr(&r, "d_h_v"), "512");
    CHECK_STR(tl_pt_param_repr(&r, "dtype_KV"), "'c10::Float8_e4m3fn'");
    tl_perf_result_free(&r);
    ev = tl_pt_event("sglang_profiler::tilelang_kernel_tilelang_sparse_fwd", "[[64, 128, 576], [10000, 1, 576]]", types,
                     NULL, "[\"\", \"\", \"\", \"\", \"256\"]", ann);
    CHECK_I64(tl_pt_run(&tl_pc_mla_tilelang_sparse_fwd, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 27.917287424);
    CHECK_DBL(r.bytes / 1048576, 117.05078125);
    tl_perf_result_free(&r);
}

/* pa_decode_gluon: decode only, H_KV = D[2][1], dtype_KV = T[2], sliding window C[19]. */
static void test_pa_decode_gluon(void)
{
    char concrete[512] = "[";
    for (int i = 0; i < 19; i++) strcat(concrete, "\"\", ");
    strcat(concrete, "\"256\"]");
    tl_perf_event ev = tl_pt_event("aiter::pa_decode_gluon", "[[4, 16, 128], [4, 16, 128], [100, 2, 16, 16, 8]]",
                                   "[" BF16 ", " BF16 ", \"c10::Float8_e4m3fnuz\"]", NULL, concrete,
                                   "{\"annotation\": \"execute_10_context_1(sq6sk6sqsq36sqsk36)_generation_4("
                                   "sq4sk4000sqsq4sqsk4000)\"}");
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_pa_decode_gluon, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 8388608.0);
    CHECK_DBL(r.bytes, 559104.0);
    CHECK_STR(tl_pt_param_repr(&r, "c_sq"), "0"); /* context forced to 0 */
    CHECK_STR(tl_pt_param_repr(&r, "H_KV"), "2");
    CHECK_STR(tl_pt_param_repr(&r, "sliding_window"), "256");
    tl_perf_result_free(&r);
}

/* DeepSeek-V4 paged decode pseudo ops. */
static void test_v4_paged_decode(void)
{
    const char *ann = "\"annotation\": \"execute_8_context_0(sq0sk0sqsq0sqsk0)_generation_8("
                      "sq8sk80000sqsq8sqsk80000)\"";
    char args[512];
    snprintf(args, sizeof args, "{%s, \"v4_mode\": \"csa\"}", ann);
    tl_perf_event ev = tl_pt_event("pseudo_v4_paged_decode_csa", "[[8, 64, 512]]", "[" BF16 "]", NULL, NULL, args);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_pseudo_v4_paged_decode_csa, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.67108864);
    CHECK_DBL(r.bytes / 1048576, 11.0);
    CHECK_STR(tl_pt_param_repr(&r, "sliding_window"), "640");
    CHECK_STR(tl_pt_param_repr(&r, "H_Q"), "64");
    CHECK_STR(r.precision, "bf16");
    tl_perf_result_free(&r);

    CHECK_I64(tl_pt_run(&tl_pc_pseudo_v4_paged_decode_hca, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.217055232);
    CHECK_DBL(r.bytes / 1048576, 4.234375);
    CHECK_STR(tl_pt_param_repr(&r, "sliding_window"), "207");
    tl_perf_result_free(&r);

    CHECK_I64(tl_pt_run(&tl_pc_pseudo_v4_paged_decode_swa, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.134217728);
    CHECK_DBL(r.bytes / 1048576, 3.0);
    tl_perf_result_free(&r);

    /* V4-Pro at TP 8: 128 / 8 heads, index_topk 1024 */
    snprintf(args, sizeof args, "{%s, \"v4_model_name\": \"DeepSeek-V4-Pro\", \"v4_tp\": 8}", ann);
    ev.args = tl_pt_pv(args);
    CHECK_I64(tl_pt_run(&tl_pc_pseudo_v4_paged_decode_csa, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 0.301989888);
    CHECK_DBL(r.bytes / 1048576, 18.25);
    CHECK_STR(tl_pt_param_repr(&r, "H_Q"), "16");
    tl_perf_result_free(&r);
}

static void test_pa_sparse_and_gdn(void)
{
    tl_perf_event ev = tl_pt_event("aiter::pa_sparse_prefill_opus_fwd",
                                   "[[1024, 16, 576], [20000, 1, 512], [300000], [], [], [5000]]",
                                   "[" BF16 ", \"c10::Float8_e4m3fn\"]", NULL, NULL, NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_pa_sparse_prefill_opus_fwd, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 10618880000.0);
    CHECK_DBL(r.bytes, 193908736.0);
    CHECK_STR(tl_pt_param_repr(&r, "pairs"), "305000");
    CHECK_STR(tl_pt_param_repr(&r, "H_KV"), "1");
    tl_perf_result_free(&r);

    const char *dims = "[[32, 8192], [32, 32], [32, 32], [32, 32, 128]]";
    ev = tl_pt_event("vllm::gdn_attention_core", dims, "[" BF16 "]", NULL, NULL,
                     "{\"annotation\": \"" VLLM_DECODE "\"}");
    CHECK_I64(tl_pt_run(&tl_pc_gdn_attention_core, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 117440512.0);
    CHECK_DBL(r.bytes, 790528.0);
    CHECK_STR(tl_pt_param_repr(&r, "d_k"), "128");
    CHECK_STR(tl_pt_param_repr(&r, "H_K"), "16");
    tl_perf_result_free(&r);
    /* without a detailed annotation the reference's NotImplementedError escapes */
    ev.args = tl_pt_pv("{\"annotation\": \"step[DECODE bs=32]\"}");
    CHECK_I64(tl_pt_run(&tl_pc_gdn_attention_core, &ev, 0, &r), TL_PERF_NOT_IMPLEMENTED);
    tl_perf_result_free(&r);
}

/* Python ints do not overflow: huge workloads give float values, never UB. */
static void test_huge_values(void)
{
    tl_perf_event ev = tl_pt_event("aiter::mha_varlen_fwd",
                                   "[[9000000000000000000, 9000000000000000000, 9000000000000000000], "
                                   "[1, 9000000000000000000, 9000000000000000000]]",
                                   "[" BF16 ", " BF16 "]", NULL, NULL,
                                   "{\"annotation\": \"execute_1_context_1(sq9000000000000000000sk9000000000000000000"
                                   "sqsq9000000000000000000sqsk9000000000000000000)_generation_0(sq0sk0sqsq0sqsk0)\"}");
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_mha_varlen_fwd, &ev, 0, &r), TL_PERF_OK);
    CHECK(r.flops > 1.45e57 && r.flops < 1.47e57);
    CHECK(r.bytes > 5.8e57 && r.bytes < 5.9e57);
    tl_perf_result_free(&r);
    /* a sum beyond int64 does not parse: no workload data */
    ev.args = tl_pt_pv("{\"annotation\": \"execute_1_context_1(sq99999999999999999999sk1sqsq1sqsk1)_generation_0("
                       "sq0sk0sqsq0sqsk0)\"}");
    CHECK_I64(tl_pt_run(&tl_pc_mha_varlen_fwd, &ev, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
    ev = tl_pt_event("EvoformerAttention",
                     "[[9000000000000000000, 9000000000000000000, 4, 4, 4], [1], [1]]", "[" BF16 "]", NULL, NULL, NULL);
    CHECK_I64(tl_pt_run(&tl_pc_evoformer_attention, &ev, 0, &r), TL_PERF_OK);
    CHECK_STR(tl_pt_param_repr(&r, "B"), "8.1e+37");
    tl_perf_result_free(&r);
}

static void test_chunk_stats(void)
{
    int64_t st[8];
    CHECK(tl_attention_chunk_stats("execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_generation_3("
                                   "sq3sk6144sqsq3sqsk6144) trailing text",
                                   st));
    CHECK_I64(st[0], 6144);
    CHECK_I64(st[3], 23019520);
    CHECK_I64(st[7], 6144);
    CHECK(tl_attention_chunk_stats("step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=9 c_sqsq=25 c_sqsk=45 g_sq=1 g_sk=7]", st));
    CHECK_I64(st[0], 5);
    CHECK_I64(st[2], 25);
    CHECK_I64(st[4], 1);
    CHECK_I64(st[6], 0); /* missing keys count as 0 */
    CHECK(tl_attention_chunk_stats("prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=100 sqsk=200 sk=14721]", st));
    CHECK_I64(st[0], 14721);
    CHECK_I64(st[1], 14721);
    CHECK_I64(st[3], 200);
    CHECK_I64(st[4], 0);
    CHECK(!tl_attention_chunk_stats("prefill[bs=2 tok=14721 ctx=[7803, 6918]]", st));   /* no sqsq/sqsk */
    CHECK(!tl_attention_chunk_stats("decode[bs=4 tok=4 d=x sqsq=4 sqsk=8 sk=8]", st)); /* d not an int */
    CHECK(!tl_attention_chunk_stats("step[DECODEX sqsq=1]", st));
    CHECK(!tl_attention_chunk_stats("step[DECODE bs=1] sqsq=1]", st)); /* sqsq after the first ']' */
    CHECK(!tl_attention_chunk_stats("ProfilerStep#3", st));
    CHECK(!tl_attention_chunk_stats(NULL, st));
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_sdpa_qwen_causal, test_sdpa_reference_rows, test_sdpa_efficient_fp32,
        test_sdpa_cudnn_backward_recompute, test_flash_attention_gqa,
        test_flash_attention_backward, test_flash_attention_varlen, test_aiter_classes,
        test_evoformer_and_checks, test_vllm_unified_attention, test_inference_worked_example,
        test_sglang_rows, test_dv_variants, test_pa_decode_gluon, test_v4_paged_decode, test_pa_sparse_and_gdn,
        test_huge_values, test_chunk_stats
    };
    return TL_PERF_TEST_RUN(tests, tl_pt_arena_new, tl_pt_arena_free);
}
