/* test_model_moe.c — MoE perf models (perf-model spec §4.11, topk_softplus
 * of §4.9): the vllm_decode_full MoE_unfused_fwd rows, the agent_cases
 * moe_sorting_fwd row, hand-checked formulas, the §2.3 [FIX] (plain
 * `float` is 4 bytes), error paths. */
#include <stdio.h>
#include <string.h>

#include "perf/model_moe.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

/* Runs class c (fwd) on an event named after it, built from its args JSON
 * and kernel names. */
static int run_k(tl_pt_fx *f, const tl_perf_class *c, const char *args_json, const char *const *kernels, size_t nk)
{
    return tl_pt_run_args(f, c, 0, c->name, args_json, kernels, nk);
}

static int run(tl_pt_fx *f, const tl_perf_class *c, const char *args_json) { return run_k(f, c, args_json, NULL, 0); }

#define CHECK_CLASS(c, nm, cat)                                                                    \
    do {                                                                                           \
        CHECK_STR((c).name, nm);                                                                   \
        CHECK_STR((c).category, cat);                                                              \
        CHECK_STR((c).sheet, cat);                                                                 \
        CHECK((c).bwd_category == NULL && (c).has_bwd == 0);                                       \
    } while (0)

#define MOE_KEYS "num_tokens,hidden_dim,inter_dim,num_experts,topk,gated,input_dtype,weight_dtype"

/* ---- Triton unfused (matmul_ogs) ----------------------------------------- */

static const char *const ogs_fp4[] = {"_matmul_ogs_NNT_bf16xmxfp4xbf16_128x256x128x1_swiglu"};

static const char *unfused_args(const char *gated)
{
    static char buf[512];
    snprintf(buf, sizeof buf,
             "{\"Input Dims\": [[32, 3072], [32, 32], [], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"\", \"\"],"
             " \"Input Strides\": [[3072, 1], [32, 1], [], []], \"Concrete Inputs\": [\"\", \"\", \"\", \"\"],"
             " \"MoE topk\": 4, \"MoE GEMM gated\": %s}",
             gated);
    return buf;
}

/* vllm_decode_full MoE_unfused_fwd.csv: up 4.831838208 GFLOPS / 284.9228269331473 MB,
 * down 2.415919104 GFLOPS / 142.93016346657365 MB, Compute Spec matrix_fp4. */
static void test_triton_unfused_reference_rows(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_moe_triton_unfused_up, "moe_triton_unfused_up", "MoE_unfused");
    CHECK_I64(run_k(&f, &tl_pc_moe_triton_unfused_up, unfused_args("true"), ogs_fp4, 1), TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 4.831838208);
    CHECK(f.r.has_bytes);
    CHECK_DBL(f.r.bytes / 1048576, 284.9228269331473);
    CHECK_STR(tl_pt_keys(&f.r), MOE_KEYS);
    CHECK_STR(tl_pt_param_repr(&f.r, "num_tokens"), "32");
    CHECK_STR(tl_pt_param_repr(&f.r, "hidden_dim"), "3072");
    CHECK_STR(tl_pt_param_repr(&f.r, "inter_dim"), "3072");
    CHECK_STR(tl_pt_param_repr(&f.r, "num_experts"), "32");
    CHECK_STR(tl_pt_param_repr(&f.r, "topk"), "4");
    CHECK_STR(tl_pt_param_repr(&f.r, "gated"), "True");
    CHECK_STR(tl_pt_param_repr(&f.r, "input_dtype"), "'c10::BFloat16'");
    CHECK_STR(tl_pt_param_repr(&f.r, "weight_dtype"), "'FP4'");
    CHECK_STR(f.r.maf, "matrix");
    CHECK_STR(f.r.precision, "fp4");
    tl_pt_done(&f);

    CHECK_CLASS(tl_pc_moe_triton_unfused_down, "moe_triton_unfused_down", "MoE_unfused");
    CHECK_I64(run_k(&f, &tl_pc_moe_triton_unfused_down, unfused_args("false"), ogs_fp4, 1), TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 2.415919104);
    CHECK_DBL(f.r.bytes / 1048576, 142.93016346657365);
    CHECK_STR(tl_pt_param_repr(&f.r, "gated"), "False");
    tl_pt_done(&f);
}

static void test_triton_unfused_errors(void)
{
    tl_pt_fx f;
    static const char *const fp8[] = {"_matmul_ogs_NNT_bf16xe4m3xbf16"};
    CHECK_I64(run_k(&f, &tl_pc_moe_triton_unfused_up, unfused_args("true"), fp8, 1), TL_PERF_OK);
    CHECK_STR(tl_pt_param_repr(&f.r, "weight_dtype"), "'FP8'");
    CHECK_STR(f.r.precision, "fp8");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_moe_triton_unfused_up, unfused_args("true")), TL_PERF_ERROR); /* no kernel */
    tl_pt_done(&f);
    static const char *const plain[] = {"_matmul_ogs_NNT_bf16xbf16xbf16"};
    CHECK_I64(run_k(&f, &tl_pc_moe_triton_unfused_up, unfused_args("true"), plain, 1), TL_PERF_ERROR);
    tl_pt_done(&f);
    CHECK_I64(run_k(&f, &tl_pc_moe_triton_unfused_up,
                    "{\"Input Dims\": [[32, 3072], [32, 32]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}",
                    ogs_fp4, 1),
              TL_PERF_ERROR); /* args['MoE topk'] missing */
    tl_pt_done(&f);
    CHECK_I64(run_k(&f, &tl_pc_moe_triton_unfused_up,
                    "{\"Input Dims\": [[32, 3072], [32, 32]], \"Input type\": [\"bool\", \"c10::BFloat16\"],"
                    " \"MoE topk\": 4, \"MoE GEMM gated\": true}",
                    ogs_fp4, 1),
              TL_PERF_ERROR); /* input dtype without a size */
    tl_pt_done(&f);
    /* [FIX §2.3] plain float is 4 bytes (name2bpe fallback), not a ValueError */
    CHECK_I64(run_k(&f, &tl_pc_moe_triton_unfused_down,
                    "{\"Input Dims\": [[32, 3072], [32, 32]], \"Input type\": [\"float\", \"float\"],"
                    " \"MoE topk\": \"4\", \"MoE GEMM gated\": \"False\"}",
                    ogs_fp4, 1),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 2.415919104);
    tl_pt_done(&f);
}

/* ---- aiter fused ------------------------------------------------------------ */

/* fused_1stage: x [16, 4096] fp32, w1 [8, 2048, 4096], w2 [8, 4096, 1024], topk 2:
 * N = 1024, gated. [FIX §2.3] x's `float` counts 4 bytes (the reference: 2). */
static void test_fused_1stage(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_moe_aiter_fused_1stage, "moe_aiter_fused_1stage", "MoE_fused");
    CHECK_I64(run(&f, &tl_pc_moe_aiter_fused_1stage,
                  "{\"Input Dims\": [[16, 4096], [8, 2048, 4096], [8, 4096, 1024], [16, 2]],"
                  " \"Input type\": [\"float\", \"c10::BFloat16\", \"c10::BFloat16\", \"int\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 805502976);
    CHECK_DBL(f.r.bytes, 199833064.953125);
    CHECK_DBL(tl_moe_active_experts(8, 2, 16), 7.919819233939052);
    CHECK_STR(tl_pt_param_repr(&f.r, "gated"), "True");
    CHECK_STR(tl_pt_param_repr(&f.r, "inter_dim"), "1024");
    CHECK_STR(f.r.precision, "fp32");
    CHECK_STR(f.r.maf, "matrix");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_moe_aiter_fused_1stage, "{\"Input Dims\": [[16, 4096], [8, 2048, 4096]], \"Input type\": []}"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_fused_blockscale(void)
{
    static const char *fmt =
        "{\"Input Dims\": [[16, 4096], [16, 4096], [8, 2048, 4096], [8, 4096, 1024], [], [], [], [], []],"
        " \"Input type\": [\"c10::BFloat16\", \"%s\", \"c10::Float8_e4m3fnuz\", \"c10::Float8_e4m3fnuz\", \"\", \"\", \"\", \"\", \"int\"],"
        " \"Concrete Inputs\": [\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", \"%s\"]}";
    char buf[1024];
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_moe_aiter_fused_blockscale, "moe_aiter_fused_blockscale", "MoE_fused");
    snprintf(buf, sizeof buf, fmt, "c10::Float8_e4m3fnuz", "2");
    CHECK_I64(run(&f, &tl_pc_moe_aiter_fused_blockscale, buf), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 805502976);
    CHECK_DBL(f.r.bytes, 99850996.4765625);
    CHECK_STR(f.r.precision, "fp8");
    CHECK_STR(tl_pt_param_repr(&f.r, "input_dtype"), "'c10::Float8_e4m3fnuz'");
    tl_pt_done(&f);
    snprintf(buf, sizeof buf, fmt, "bf16", "2"); /* the literal `bf16` reads as fp8 */
    CHECK_I64(run(&f, &tl_pc_moe_aiter_fused_blockscale, buf), TL_PERF_OK);
    CHECK_STR(f.r.precision, "fp8");
    tl_pt_done(&f);
    snprintf(buf, sizeof buf, fmt, "c10::BFloat16", "2");
    CHECK_I64(run(&f, &tl_pc_moe_aiter_fused_blockscale, buf), TL_PERF_OK);
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
    snprintf(buf, sizeof buf, fmt, "c10::Float8_e4m3fnuz", "");
    CHECK_I64(run(&f, &tl_pc_moe_aiter_fused_blockscale, buf), TL_PERF_ERROR); /* int('') */
    tl_pt_done(&f);
}

/* ---- aiter unfused ---------------------------------------------------------- */

static void test_cktile_two_stage(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_moe_aiter_unfused_up, "moe_aiter_unfused_up", "MoE_unfused");
    CHECK_I64(run(&f, &tl_pc_moe_aiter_unfused_up,
                  "{\"Input Dims\": [[16, 4096], [8, 2048, 4096], [16, 2, 1024]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::Float8_e4m3fn\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 536870912);
    CHECK_DBL(f.r.bytes, 66632866.984375);
    CHECK_STR(tl_pt_param_repr(&f.r, "gated"), "True");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
    CHECK_CLASS(tl_pc_moe_aiter_unfused_down, "moe_aiter_unfused_down", "MoE_unfused");
    CHECK_I64(run(&f, &tl_pc_moe_aiter_unfused_down,
                  "{\"Input Dims\": [[16, 2, 1024], [8, 4096, 1024], [16, 4096]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::Float8_e4m3fn\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 268435456);
    CHECK_DBL(f.r.bytes, 33414737.4921875);
    tl_pt_done(&f);
}

/* agent_cases test01 (trace1): the synthetic ck_moe_stage1/2 ops carry only
 * two shapes, so the reference fails (unified row with empty metrics). */
static void test_ck_stage(void)
{
    static const char *synthetic =
        "{\"Input Dims\": [[4096, 8192], [8, 8192, 22016]], \"Input type\": [\"c10::bfloat16\", \"c10::bfloat16\"]}";
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_moe_aiter_ck_stage1, "moe_aiter_ck_stage1", "MoE_unfused");
    CHECK_CLASS(tl_pc_moe_aiter_ck_stage2, "moe_aiter_ck_stage2", "MoE_unfused");
    CHECK_I64(run(&f, &tl_pc_moe_aiter_ck_stage1, synthetic), TL_PERF_ERROR);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_moe_aiter_ck_stage2, synthetic), TL_PERF_ERROR);
    tl_pt_done(&f);
    /* stage1(hidden, w1, w2, sorted_ids, ..., topk_ids D[6]) with int4-packed w1 (K1 = 512: x8) */
    CHECK_I64(run(&f, &tl_pc_moe_aiter_ck_stage1,
                  "{\"Input Dims\": [[16, 4096], [8, 2048, 512], [8, 4096, 128], [], [], [], [16, 2]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::Float8_e4m3fn\", \"c10::Float8_e4m3fn\", \"\", \"\", \"\", \"int\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 536870912);
    CHECK_DBL(f.r.bytes, 66632866.984375);
    CHECK_STR(tl_pt_param_repr(&f.r, "inter_dim"), "1024");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_moe_aiter_ck_stage2,
                  "{\"Input Dims\": [[16, 2, 128], [8, 2048, 512], [8, 4096, 128]],"
                  " \"Input type\": [\"c10::BFloat16\", \"\", \"c10::Float8_e4m3fn\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 268435456);
    CHECK_DBL(f.r.bytes, 33414737.4921875);
    tl_pt_done(&f);
}

static void test_flydsl(void)
{
    static const char *args = "{\"Input Dims\": [[16, 4096], [8, 2048, 512], [8, 4096, 128], [16, 2]],"
                              " \"Input type\": [\"c10::BFloat16\", \"c10::Float8_e4m3fn\", \"c10::Float8_e4m3fn\", \"int\"]}";
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_moe_flydsl_stage1, "moe_flydsl_stage1", "MoE_unfused");
    CHECK_I64(run(&f, &tl_pc_moe_flydsl_stage1, args), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 536870912);
    CHECK_DBL(f.r.bytes, 66632866.984375);
    CHECK_STR(f.r.precision, "fp8"); /* the weight dtype */
    tl_pt_done(&f);
    CHECK_CLASS(tl_pc_moe_flydsl_stage2, "moe_flydsl_stage2", "MoE_unfused");
    CHECK_I64(run(&f, &tl_pc_moe_flydsl_stage2, args), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 268435456);
    CHECK_DBL(f.r.bytes, 33414737.4921875);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_moe_flydsl_stage1,
                  "{\"Input Dims\": [[16, 4096], [8, 2048, 0], [8, 4096, 128], [16, 2]], \"Input type\": []}"),
              TL_PERF_ERROR); /* K // 0 */
    tl_pt_done(&f);
}

static void test_gptq_awq(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_moe_gptq_awq_up, "moe_gptq_awq_up", "MoE_unfused");
    CHECK_I64(run(&f, &tl_pc_moe_gptq_awq_up,
                  "{\"Input Dims\": [[16, 4096], [8, 2048, 512]], \"Input type\": [\"c10::BFloat16\", \"int\"]}"),
              TL_PERF_OK); /* topk 8 and gated by default */
    CHECK_DBL(f.r.flops, 2147483648.0);
    CHECK_DBL(f.r.bytes, 33947648);
    CHECK_STR(tl_pt_param_repr(&f.r, "topk"), "8");
    CHECK_STR(tl_pt_param_repr(&f.r, "inter_dim"), "1024");
    tl_pt_done(&f);
    CHECK_CLASS(tl_pc_moe_gptq_awq_down, "moe_gptq_awq_down", "MoE_unfused");
    CHECK_I64(run(&f, &tl_pc_moe_gptq_awq_down,
                  "{\"Input Dims\": [[16, 4096], [16, 2], [8, 4096, 512]], \"Input type\": [\"c10::BFloat16\", \"int\", \"int\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 1073741824);
    CHECK_DBL(f.r.bytes, 17170432);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_moe_gptq_awq_up,
                  "{\"Input Dims\": [[16, 4096], [8, 2048, 512]], \"Input type\": [\"c10::BFloat16\", \"int\"],"
                  " \"MoE topk\": 2, \"MoE GEMM gated\": false}"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param_repr(&f.r, "inter_dim"), "2048");
    CHECK_STR(tl_pt_param_repr(&f.r, "topk"), "2");
    tl_pt_done(&f);
}

static void test_invoke_grouped_gemm(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_moe_triton_invoke_grouped_gemm, "moe_triton_invoke_grouped_gemm", "MoE_unfused");
    CHECK_I64(run(&f, &tl_pc_moe_triton_invoke_grouped_gemm,
                  "{\"Input Dims\": [[16, 4096], [8, 2048, 4096], [16, 2, 2048], [], [], [], [], [], [16, 2]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"\", \"float\", \"\", \"\", \"\", \"\", \"int\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 536870912);
    CHECK_DBL(f.r.bytes, 133396805.96875); /* out dtype T[3] float: 4 bytes */
    CHECK_STR(tl_pt_param_repr(&f.r, "num_tokens"), "16");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_moe_triton_invoke_grouped_gemm,
                  "{\"Input Dims\": [[16, 4096], [8, 2048, 4096]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}"),
              TL_PERF_ERROR); /* fewer than 9 dims */
    tl_pt_done(&f);
}

/* ---- MoE_aux ------------------------------------------------------------------ */

/* agent_cases test01 trace1 MoE_aux_fwd.csv: aiter::moe_sorting_fwd, GFLOPS
 * 1.442840576, Data Moved 2816.0 MB, vector_bf16. */
static void test_moe_sorting_reference_row(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_MoeSortScatterGather, "MoeSortScatterGather", "MoE_aux");
    CHECK_CLASS(tl_pc_BiasedGroupedTopk, "BiasedGroupedTopk", "MoE_aux");
    CHECK_I64(run(&f, &tl_pc_MoeSortScatterGather,
                  "{\"Input Dims\": [[4096, 8192], [8, 8192, 22016]], \"Input type\": [\"c10::bfloat16\", \"c10::bfloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 1.442840576);
    CHECK_DBL(f.r.bytes / 1048576, 2816.0);
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    CHECK_STR(tl_pt_keys(&f.r), "operands");
    /* the reference's text: a list of tuples */
    CHECK_STR(tl_pt_param_repr(&f.r, "operands"),
              "[((4096, 8192), 'c10::bfloat16'), ((8, 8192, 22016), 'c10::bfloat16')]");
    tl_pt_done(&f);
    /* scalars and empty shapes are not operands; unknown dtypes add no bytes */
    CHECK_I64(run(&f, &tl_pc_BiasedGroupedTopk,
                  "{\"Input Dims\": [[16, 256], [256], [16, 8], [16, 8], [], []],"
                  " \"Input type\": [\"float\", \"c10::BFloat16\", \"float\", \"int\", \"Scalar\", \"bool\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 4096);
    CHECK_DBL(f.r.bytes, 16 * 256 * 4 + 256 * 2 + 128 * 4 + 128 * 4);
    CHECK_STR(f.r.precision, "fp32");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_BiasedGroupedTopk, "{\"Input Dims\": [[16], [4]], \"Input type\": [\"bool\", \"bool\"]}"),
              TL_PERF_OK);
    CHECK(!f.r.has_bytes); /* nothing of known size: None */
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_MoeSortScatterGather, "{\"Input Dims\": [[], []], \"Input type\": [\"\", \"\"]}"),
              TL_PERF_ERROR); /* max() of nothing */
    tl_pt_done(&f);
    /* one operand: a one-item list (no tuple comma), its shape a 1-tuple */
    CHECK_I64(run(&f, &tl_pc_MoeSortScatterGather, "{\"Input Dims\": [[16], []], \"Input type\": [\"float\", \"\"]}"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param_repr(&f.r, "operands"), "[((16,), 'float')]");
    tl_pt_done(&f);
}

/* The pylist mark: kept by tl_pm_pv's copy (also inside other values),
 * shown [..] by tl_pv_str_tuple and tl_pv_str_list, not in JSON. */
static void test_pylist_mark(void)
{
    tl_pt_fx f;
    CHECK_I64(run(&f, &tl_pc_topk_softplus, "{\"Input Dims\": [[4, 2], [4, 2], [4, 8]], \"Input type\": [\"\", \"\", \"float\"]}"),
              TL_PERF_OK);
    tl_pv *v = (tl_pv *)tl_pv_parse(f.a, "[[1, [2]], [3], []]");
    v->items[0].pylist = 1;
    v->items[2].pylist = 1;
    tl_pm_pv(&f.r, "nested", v);
    CHECK_STR(tl_pt_param_repr(&f.r, "nested"), "([1, (2,)], (3,), [])");
    tl_pm_pylist(&f.r, "top", v);
    CHECK_STR(tl_pt_param_repr(&f.r, "top"), "[[1, (2,)], (3,), []]");
    tl_pm_pylist(&f.r, "scalar", tl_pv_parse(f.a, "7")); /* not a list: no mark */
    CHECK_STR(tl_pt_param_repr(&f.r, "scalar"), "7");
    tl_sbuf b;
    tl_sb_init(&b);
    tl_pv_to_json(&b, &tl_pm_find(&f.r, "top")->value);
    CHECK_STR(b.s, "[[1,[2]],[3],[]]");
    tl_sb_clear(&b);
    tl_pv_str_list(&b, &tl_pm_find(&f.r, "top")->value);
    CHECK_STR(b.s, "[[1, [2]], [3], []]");
    tl_sb_free(&b);
    tl_pt_done(&f);
}

static void test_append_shared_experts(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_sglang_fused_append_shared_experts, "sglang_fused_append_shared_experts", "MoE_aux");
    CHECK_I64(run(&f, &tl_pc_sglang_fused_append_shared_experts,
                  "{\"Input Dims\": [[16, 3], [16, 3]], \"Input type\": [\"int\", \"float\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 48);
    CHECK_DBL(f.r.bytes, 768);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_sglang_fused_append_shared_experts,
                  "{\"Input Dims\": [[16, 3], []], \"Input type\": [\"long int\", \"\"]}"),
              TL_PERF_OK); /* no weights: counted as the ids */
    CHECK_DBL(f.r.bytes, 1536);
    CHECK_STR(tl_pt_param_repr(&f.r, "weights_shape"), "(16, 3)");
    tl_pt_done(&f);
}

static void test_topk_softplus(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_topk_softplus, "topk_softplus", "MoE_aux");
    CHECK_I64(run(&f, &tl_pc_topk_softplus,
                  "{\"Input Dims\": [[16, 2], [16, 2], [16, 8]], \"Input type\": [\"float\", \"int\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 768);
    CHECK_DBL(f.r.bytes, 544);
    CHECK_STR(tl_pt_keys(&f.r), "num_tokens,num_experts,topk,dtype");
    CHECK_STR(f.r.maf, "vector");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_topk_softplus, "{\"Input Dims\": [[16, 2], [16, 2], [16, 8, 1]], \"Input type\": []}"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_no_bwd(void)
{
    tl_pt_fx f;
    CHECK_I64(run(&f, &tl_pc_moe_aiter_fused_1stage, "{}"), TL_PERF_ERROR);
    tl_pt_done(&f);
    f.a = tl_pv_arena_new();
    tl_perf_result_init(&f.r);
    CHECK_I64(tl_perf_run(&tl_pc_moe_aiter_fused_1stage, &f.ev, 1, &f.r), TL_PERF_NOT_IMPLEMENTED);
    tl_pt_done(&f);
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_triton_unfused_reference_rows, test_triton_unfused_errors, test_fused_1stage,
        test_fused_blockscale, test_cktile_two_stage, test_ck_stage, test_flydsl, test_gptq_awq,
        test_invoke_grouped_gemm, test_moe_sorting_reference_row, test_pylist_mark, test_append_shared_experts,
        test_topk_softplus, test_no_bwd
    };
    return TL_PERF_TEST_RUN(tests, NULL, NULL);
}
