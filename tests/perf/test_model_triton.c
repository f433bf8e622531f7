/* test_model_triton.c — TritonCompiledPerfModel (perf-model spec §9, E8):
 * the torch_compile_triton and vllm_decode_full unified_perf_summary Triton
 * rows, the [FIX]es (name2bpe sizes for `float`, Compute Spec `vector_bf16`),
 * the name segmentation over KNOWN_OPS, can_model. */
#include <stdio.h>
#include <string.h>

#include "perf/model_triton.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

/* Runs TritonCompiledPerfModel on the event `name` built from its args JSON. */
static int run(tl_pt_fx *f, const char *name, const char *args_json)
{
    return tl_pt_run_args(f, &tl_pc_TritonCompiledPerfModel, 0, name, args_json, NULL, 0);
}

static const char *fused_ops(const char *name)
{
    static char buf[512];
    tl_sbuf b;
    tl_sb_init(&b);
    tl_triton_fused_ops(name, &b, NULL);
    snprintf(buf, sizeof buf, "%s", b.s ? b.s : "");
    tl_sb_free(&b);
    return buf;
}

/* E8: triton_poi_fused__unsafe_view_add_3 — 0.067108864 GFLOPS, 512.0 MB,
 * FLOPS/Byte 0.125; Compute Spec vector_bf16 ([FIX], reference vector_bfloat16). */
static void test_e8_pointwise(void)
{
    tl_pt_fx f;
    CHECK_STR(tl_pc_TritonCompiledPerfModel.name, "TritonCompiledPerfModel");
    CHECK_STR(tl_pc_TritonCompiledPerfModel.category, "triton");
    CHECK(tl_pc_TritonCompiledPerfModel.sheet == NULL);
    CHECK(tl_pc_TritonCompiledPerfModel.has_bwd == 0);
    CHECK_I64(run(&f, "triton_poi_fused__unsafe_view_add_3",
                  "{\"Input Dims\": [[8, 4096, 2048], [8, 4096, 2048], [32768, 2048], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"67108864\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 0.067108864);
    CHECK_DBL(f.r.bytes / 1048576, 512.0);
    CHECK_DBL((f.r.flops / 1e9 * 1e9) / f.r.bytes, 0.125);
    CHECK_STR(tl_pt_param(&f.r, "fused_ops"), "aten._unsafe_view, aten.add");
    CHECK_STR(tl_pt_param_repr(&f.r, "xnumel"), "67108864");
    CHECK_STR(tl_pt_param_repr(&f.r, "rnumel"), "1");
    CHECK_STR(f.r.params[0].key, "fused_ops");
    CHECK_I64(f.r.n_params, 3);
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    CHECK(tl_triton_can_model(&f.ev));
    tl_pt_done(&f);
}

/* The other torch_compile_triton rows (the §9 walkthrough's SwiGLU and RMSNorm). */
static void test_reference_rows(void)
{
    tl_pt_fx f;
    CHECK_I64(run(&f, "triton_poi_fused__unsafe_view_mul_silu_2",
                  "{\"Input Dims\": [[8, 4096, 8192], [32768, 8192], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"268435456\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 1.34217728);
    CHECK_DBL(f.r.bytes / 1048576, 1536.0);
    CHECK_STR(tl_pt_param(&f.r, "fused_ops"), "aten._unsafe_view, aten.mul, aten.silu");
    tl_pt_done(&f);
    CHECK_I64(run(&f, "triton_red_fused_add_mean_mul_pow_rsqrt_0",
                  "{\"Input Dims\": [[8, 4096, 2048], [2048], [8, 4096, 2048], [], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"32768\", \"2048\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 0.469762048);
    CHECK_DBL(f.r.bytes / 1048576, 256.00390625);
    CHECK_STR(tl_pt_param_repr(&f.r, "xnumel"), "32768");
    CHECK_STR(tl_pt_param_repr(&f.r, "rnumel"), "2048");
    tl_pt_done(&f);
    CHECK_I64(run(&f, "triton_red_fused__unsafe_view_add_mean_mul_pow_rsqrt_1",
                  "{\"Input Dims\": [[8, 4096, 2048], [32768, 2048], [2048], [8, 4096, 2048], [], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"\", \"32768\", \"2048\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 0.469762048);
    CHECK_DBL(f.r.bytes / 1048576, 384.00390625);
    CHECK_DBL((f.r.flops / 1e9 * 1e9) / f.r.bytes, 1.1666547988403437);
    tl_pt_done(&f);
}

/* The reference's byte rule (§9, kept for parity with the torch_compile_triton
 * CSVs) on the H200 capture compiled (PyTorch 2.11). The trace does not say
 * which arguments a kernel writes, so: every tensor once, plus
 * ptr_bytes[0]·xnumel for a pointwise kernel only. By hand:
 * - triton_red_fused_gelu_gelu_backward_sum_view_1: 16·512·8192·2 B = 128 MiB
 *   + 8192·8192·2 B = 128 MiB + 8192·16·4 B = 0.5 MiB = 256.5 MiB (its first
 *   argument, updated in place, moves 128 MiB more: not counted); flops
 *   (gelu 8 + sum 1)·131072·512 = 603979776.
 * - triton_poi_fused_gelu_view_3: 128 + 128 + 2·67108864 B (128 MiB) = 384 MiB
 *   (its first argument is read only: 128 MiB more than it moves); flops
 *   8·67108864 = 536870912.
 * - triton_poi_fused__to_copy_1: 8192·2048·4 B = 64 MiB + 32 MiB + 4·16777216 B
 *   = 64 MiB, 160 MiB; flops 0. agents/triton.lua states this basis. */
static void test_capture_reference_rule(void)
{
    tl_pt_fx f;
    CHECK_I64(run(&f, "triton_red_fused_gelu_gelu_backward_sum_view_1",
                  "{\"Input Dims\": [[16, 512, 8192], [8192, 8192], [1, 8192, 16], [], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"float\", \"Scalar\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"131072\", \"512\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.bytes / 1048576, 256.5);
    CHECK_DBL(f.r.flops, 603979776.0);
    tl_pt_done(&f);
    CHECK_I64(run(&f, "triton_poi_fused_gelu_view_3",
                  "{\"Input Dims\": [[8192, 8192], [16, 512, 8192], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"67108864\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.bytes / 1048576, 384.0);
    CHECK_DBL(f.r.flops, 536870912.0);
    tl_pt_done(&f);
    CHECK_I64(run(&f, "triton_poi_fused__to_copy_1",
                  "{\"Input Dims\": [[8192, 2048], [8192, 2048], []],"
                  " \"Input type\": [\"float\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"16777216\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.bytes / 1048576, 160.0);
    CHECK_DBL(f.r.flops, 0.0);
    tl_pt_done(&f);
}

/* vllm_decode_full unified rows. _to_copy: the reference counts the float
 * tensor as 0 bytes (16.0 MB, vector_bfloat16); [FIX] float is 4 bytes and
 * is then the first sized tensor: 80 MB, vector_fp32. */
static void test_float_fix_and_unknown_ops(void)
{
    tl_pt_fx f;
    CHECK_I64(run(&f, "triton_poi_fused__to_copy_1",
                  "{\"Input Dims\": [[131072, 64], [131072, 64], []], \"Input type\": [\"float\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"8388608\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 0); /* _to_copy counts no FLOPs */
    CHECK_DBL(f.r.bytes / 1048576, 80.0);
    CHECK_STR(f.r.precision, "fp32");
    CHECK_STR(tl_pt_param(&f.r, "fused_ops"), "aten._to_copy");
    tl_pt_done(&f);
    /* moe_forward is no ATen op: no segmentation, no ops, 0 FLOPs (reference 0.55078125 MB) */
    CHECK_I64(run(&f, "triton_poi_fused_constant_pad_nd_moe_forward_0",
                  "{\"Input Dims\": [[32, 2880], [32, 3072], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"98304\"]}"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param(&f.r, "fused_ops"), "");
    CHECK_DBL(f.r.flops, 0);
    CHECK_DBL(f.r.bytes / 1048576, 0.55078125);
    tl_pt_done(&f);
    /* the exact table's c10:: names; c10::Float has no §2.2 precision (empty Compute Spec) */
    CHECK_I64(run(&f, "triton_poi_fused_add_0",
                  "{\"Input Dims\": [[10], [10]], \"Input type\": [\"c10::Float\", \"c10::Long\"],"
                  " \"Concrete Inputs\": [\"\", \"10\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.bytes, 10 * 4 + 10 * 8 + 4 * 10);
    CHECK(f.r.precision == NULL);
    tl_pt_done(&f);
    /* nothing sized: bytes 0 and no precision */
    CHECK_I64(run(&f, "triton_poi_fused_add_0",
                  "{\"Input Dims\": [[10]], \"Input type\": [\"bool\"], \"Concrete Inputs\": [\"\", \"10\"]}"),
              TL_PERF_OK);
    CHECK(f.r.has_bytes);
    CHECK_DBL(f.r.bytes, 0);
    CHECK(f.r.precision == NULL);
    tl_pt_done(&f);
}

static void test_numel_rules(void)
{
    tl_pt_fx f;
    /* a reduction with one integer: xnumel = it, rnumel = 1 */
    CHECK_I64(run(&f, "triton_per_fused_sum_0",
                  "{\"Input Dims\": [[4096, 8], [4096]], \"Input type\": [\"float\", \"float\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"4096\", \"False\", \"1e-05\"]}"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param_repr(&f.r, "xnumel"), "4096");
    CHECK_STR(tl_pt_param_repr(&f.r, "rnumel"), "1");
    CHECK_DBL(f.r.flops, 4096);
    CHECK_DBL(f.r.bytes, 4096 * 8 * 4 + 4096 * 4); /* no pointwise write-back */
    tl_pt_done(&f);
    /* pointwise with two integers: the last is xnumel */
    CHECK_I64(run(&f, "triton_poi_fused_mul_5",
                  "{\"Input Dims\": [[64], [64]], \"Input type\": [\"c10::Half\", \"c10::Half\"],"
                  " \"Concrete Inputs\": [\"7\", \" 64 \"]}"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param_repr(&f.r, "xnumel"), "64");
    CHECK_STR(tl_pt_param_repr(&f.r, "rnumel"), "1");
    CHECK_STR(f.r.precision, "fp16");
    tl_pt_done(&f);
}

/* V2 fails -> NotImplemented (no V1 in tracelens), can_model false. */
static void test_not_modelled(void)
{
    tl_pt_fx f;
    CHECK_I64(run(&f, "triton_poi_fused_add_0",
                  "{\"Input Dims\": [[10]], \"Input type\": [\"float\"], \"Concrete Inputs\": [\"\", \"1.5\", \"True\"]}"),
              TL_PERF_NOT_IMPLEMENTED);
    CHECK(!tl_triton_can_model(&f.ev));
    tl_pt_done(&f);
    CHECK_I64(run(&f, "triton_poi_fused_add_0", "{\"Input Dims\": [[10]], \"Input type\": [\"float\"], \"Concrete Inputs\": []}"),
              TL_PERF_NOT_IMPLEMENTED);
    tl_pt_done(&f);
    CHECK_I64(run(&f, "triton_poi_fused_add_0", "{\"Concrete Inputs\": [\"10\"]}"), TL_PERF_NOT_IMPLEMENTED);
    tl_pt_done(&f);
    CHECK_I64(run(&f, "triton_poi_fused_add_0",
                  "{\"Input Dims\": [[[2, 3], [4]]], \"Input type\": [\"TensorList\"], \"Concrete Inputs\": [\"10\"]}"),
              TL_PERF_NOT_IMPLEMENTED); /* a TensorList: prod() fails */
    tl_pt_done(&f);
    CHECK(tl_triton_name_matches("triton_poi_fused_add_0"));
    CHECK(tl_triton_name_matches("triton_red_x"));
    CHECK(tl_triton_name_matches("triton_per_x"));
    CHECK(!tl_triton_name_matches("triton_tem_fused_mm_0"));
    CHECK(!tl_triton_name_matches("triton_0"));
    CHECK(!tl_triton_name_matches(NULL));
}

static void test_segmentation(void)
{
    CHECK_STR(fused_ops("triton_per_fused__to_copy_add_native_layer_norm_3"),
              "aten._to_copy, aten.add, aten.native_layer_norm");
    /* the longest candidate wins at each backtracking step */
    CHECK_STR(fused_ops("triton_red_fused_var_mean_3"), "aten.var_mean");
    CHECK_STR(fused_ops("triton_poi_fused_clamp_min_mul_12"), "aten.clamp_min, aten.mul");
    int64_t fpe = -1;
    tl_sbuf b;
    tl_sb_init(&b);
    CHECK_I64(tl_triton_fused_ops("triton_poi_fused_add_div_exp_gelu_neg_rsqrt_sigmoid_9", &b, &fpe), 7);
    CHECK_I64(fpe, 1 + 1 + 4 + 8 + 1 + 2 + 4);
    tl_sb_free(&b);
    /* no trailing number, another kind or no 'fused_': no ops */
    CHECK_STR(fused_ops("triton_poi_fused_add"), "");
    CHECK_STR(fused_ops("triton_poi_fused_add_x1"), "");
    CHECK_STR(fused_ops("triton_poi_fused__3"), "");
    CHECK_STR(fused_ops("triton_tem_fused_mm_0"), "");
    CHECK_STR(fused_ops("triton_poi_add_0"), "");
    CHECK_STR(fused_ops("triton_poi_fused_add_mul_2_11"), ""); /* '2' is no op */
}

static void test_known_ops(void)
{
    CHECK_I64(tl_triton_known_op_count(), 960);
    CHECK(tl_triton_known_op("_adaptive_avg_pool2d"));
    CHECK(tl_triton_known_op("zeta"));
    CHECK(tl_triton_known_op("_unsafe_view"));
    CHECK(tl_triton_known_op("native_layer_norm"));
    CHECK(!tl_triton_known_op("moe_forward"));
    CHECK(!tl_triton_known_op("unsafe"));
    CHECK(!tl_triton_known_op(""));
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_e8_pointwise, test_reference_rows, test_float_fix_and_unknown_ops, test_numel_rules,
        test_not_modelled, test_segmentation, test_known_ops, test_capture_reference_rule
    };
    return TL_PERF_TEST_RUN(tests, NULL, NULL);
}
