/* test_model_elementwise.c — unary/binary elementwise perf models against
 * hand-checked values and rows of the reference CSVs (h100 Qwen, owlv2,
 * timesformer: UnaryElementwise.csv / BinaryElementwise.csv). */
#include <stdio.h>
#include <string.h>

#include "perf/model_elementwise.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

static void test_classes(void)
{
    const tl_perf_class *u = &tl_pc_aten_unary_elementwise, *b = &tl_pc_aten_binary_elementwise;
    CHECK_STR(u->name, "aten_unary_elementwise");
    CHECK_STR(u->category, "elementwise");
    CHECK(u->bwd_category == NULL);
    CHECK_STR(u->sheet, "UnaryElementwise");
    CHECK_STR(b->name, "aten_binary_elementwise");
    CHECK_STR(b->sheet, "BinaryElementwise");
    CHECK_STR(tl_pc_aten_replication_pad.name, "aten_replication_pad");
    CHECK_STR(tl_pc_aten_replication_pad.sheet, "UnaryElementwise");
    CHECK_STR(tl_pc_aten_upsample_nearest.name, "aten_upsample_nearest");
    CHECK_STR(tl_pc_aten_upsample_nearest.sheet, "UnaryElementwise");
    CHECK_STR(tl_pc_liger_silu_mul_function.name, "liger_silu_mul_function");
    CHECK_STR(tl_pc_liger_silu_mul_function.sheet, "BinaryElementwise");
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, u, 1, "aten::neg", "[[4]]", "[\"float\"]", "[[1]]", "[\"\"]"),
              TL_PERF_NOT_IMPLEMENTED);
    tl_pt_done(&f);
}

/* h100 Qwen UnaryElementwise.csv: aten::copy_ bf16 -> bf16 (transpose). */
static void test_unary_copy(void)
{
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_unary_elementwise, 0, "aten::copy_",
                              "[[16, 16, 559, 64], [16, 16, 559, 64], []]",
                              "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]",
                              "[[572416, 35776, 64, 1], [572416, 64, 1024, 1], []]", "[\"\", \"\", \"False\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f.r, 0.009158656);
    CHECK_MB(&f.r, 34.9375);
    CHECK_STR(tl_pt_keys(&f.r), "op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(tl_pt_param(&f.r, "op_shape"), "(16, 16, 559, 64)");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "('c10::BFloat16', 'c10::BFloat16')");
    CHECK_STR(tl_pt_param(&f.r, "stride_input"), "(572416, 35776, 64, 1)");
    CHECK_STR(tl_pt_param(&f.r, "stride_output"), "(572416, 64, 1024, 1)");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);

    /* copy_ float <- long int: bytes n·4 + n·8; the precision is the destination's */
    tl_pt_run_lists(&f, &tl_pc_aten_unary_elementwise, 0, "aten::copy_", "[[1, 1, 559], [1, 1, 559], []]",
                    "[\"float\", \"long int\", \"Scalar\"]", "[[559, 559, 1], [559, 559, 1], []]",
                    "[\"\", \"\", \"False\"]");
    CHECK_GFLOPS(&f.r, 5.59e-07);
    CHECK_MB(&f.r, 0.006397247314453125);
    CHECK_STR(f.r.precision, "fp32");
    tl_pt_done(&f);
}

/* Qwen aten::pow(float, Scalar) and aten::rsqrt: out None -> 2n·bpe. */
static void test_unary_scalar_args(void)
{
    tl_pt_fx f;
    tl_pt_run_lists(&f, &tl_pc_aten_unary_elementwise, 0, "aten::pow", "[[16, 559, 1024], []]",
                    "[\"float\", \"Scalar\"]", "[[572416, 1024, 1], []]", "[\"\", \"2\"]");
    CHECK_GFLOPS(&f.r, 0.009158656);
    CHECK_MB(&f.r, 69.875);
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "('float', None)");
    CHECK_STR(tl_pt_param(&f.r, "stride_output"), "None");
    tl_pt_done(&f);

    tl_pt_run_lists(&f, &tl_pc_aten_unary_elementwise, 0, "aten::rsqrt", "[[16, 559, 1]]", "[\"float\"]",
                    "[[559, 1, 1]]", "[\"\"]");
    CHECK_GFLOPS(&f.r, 8.944e-06);
    CHECK_MB(&f.r, 0.0682373046875);
    tl_pt_done(&f);

    /* sglang aten::neg on long int: bytes known, no Compute Spec precision */
    tl_pt_run_lists(&f, &tl_pc_aten_unary_elementwise, 0, "aten::neg", "[[32]]", "[\"long int\"]", "[[1]]", "[\"\"]");
    CHECK_MB(&f.r, 0.00048828125);
    CHECK(f.r.precision == NULL);
    tl_pt_done(&f);
}

static void test_unary_errors(void)
{
    tl_pt_fx f;
    /* bool has no bpe: bytes None, not an error */
    CHECK_I64(
        tl_pt_run_lists(&f, &tl_pc_aten_unary_elementwise, 0, "aten::neg", "[[8]]", "[\"bool\"]", "[[1]]", "[\"\"]"),
        TL_PERF_OK);
    CHECK(!f.r.has_bytes);
    CHECK_DBL(f.r.flops, 8);
    tl_pt_done(&f);
    /* Input Strides is required (KeyError) */
    CHECK_I64(
        tl_pt_run_lists(&f, &tl_pc_aten_unary_elementwise, 0, "aten::neg", "[[8]]", "[\"float\"]", NULL, "[\"\"]"),
        TL_PERF_ERROR);
    tl_pt_done(&f);
    /* out tensor present but its type missing (IndexError) */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_unary_elementwise, 0, "aten::copy_", "[[8], [8]]", "[\"float\"]",
                              "[[1], [1]]", "[\"\", \"\"]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
    CHECK_I64(
        tl_pt_run_lists(&f, &tl_pc_aten_unary_elementwise, 0, "aten::neg", NULL, "[\"float\"]", "[[1]]", "[\"\"]"),
        TL_PERF_ERROR);
    tl_pt_done(&f);
}

/* h100 timesformer UnaryElementwise.csv: aten::upsample_nearest1d. */
static void test_upsample_output_size(void)
{
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_upsample_nearest, 0, "aten::upsample_nearest1d", "[[1, 768, 8], [], []]",
                              "[\"c10::BFloat16\", \"ScalarList\", \"\"]", "[[6144, 1, 768], [], []]",
                              "[\"\", \"[128]\", \"\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f.r, 9.8304e-05);
    CHECK_MB(&f.r, 0.19921875);
    /* the order of the unified perf_params of this row */
    CHECK_STR(tl_pt_keys(&f.r), "input_shape,output_shape,op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(tl_pt_param(&f.r, "op_shape"), "(1, 768, 128)");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "('c10::BFloat16', 'c10::BFloat16')");
    CHECK_STR(tl_pt_param(&f.r, "stride_input"), "(6144, 1, 768)");
    CHECK_STR(tl_pt_param(&f.r, "stride_output"), "None");
    CHECK_STR(tl_pt_param(&f.r, "input_shape"), "(1, 768, 8)");
    CHECK_STR(tl_pt_param(&f.r, "output_shape"), "(1, 768, 128)");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
}

/* [FIX] scale-factor forms: out spatial = floor(in · scale). */
static void test_upsample_scales(void)
{
    tl_pt_fx f;
    /* .vec overload: (input, output_size=None, scale_factors=[2.0, 1.5]) */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_upsample_nearest, 0, "aten::upsample_nearest2d",
                              "[[2, 3, 10, 21], [], []]", "[\"float\", \"\", \"\"]", "[[630, 210, 21, 1], [], []]",
                              "[\"\", \"\", \"[2.0, 1.5]\"]"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param(&f.r, "output_shape"), "(2, 3, 20, 31)");
    CHECK_DBL(f.r.flops, 2 * 3 * 20 * 31);
    CHECK_DBL(f.r.bytes, (1260 + 3720) * 4);
    tl_pt_done(&f);
    /* scales_h / scales_w overload */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_upsample_nearest, 0, "aten::upsample_nearest2d",
                              "[[2, 3, 10, 21], [], [], []]", "[\"float\", \"\", \"double\", \"double\"]",
                              "[[630, 210, 21, 1], [], [], []]", "[\"\", \"\", \"2.\", \"1.5\"]"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param(&f.r, "output_shape"), "(2, 3, 20, 31)");
    tl_pt_done(&f);
    /* neither an output size nor scales: the row fails as in the reference */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_upsample_nearest, 0, "aten::upsample_nearest2d",
                              "[[2, 3, 10, 21], [], []]", "[\"float\", \"\", \"\"]", "[[630, 210, 21, 1], [], []]",
                              "[\"\", \"\", \"\"]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_replication_pad(void)
{
    tl_pt_fx f;
    /* pad (left 1, right 2, top 3, bottom 4): W 8 -> 11, H 8 -> 15 */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_replication_pad, 0, "aten::replication_pad2d", "[[1, 3, 8, 8], []]",
                              "[\"float\", \"ScalarList\"]", "[[192, 64, 8, 1], []]", "[\"\", \"[1, 2, 3, 4]\"]"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_keys(&f.r), "input_shape,output_shape,padding,op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(tl_pt_param(&f.r, "op_shape"), "(1, 3, 15, 11)");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "('float', 'float')");
    CHECK_STR(tl_pt_param(&f.r, "input_shape"), "(1, 3, 8, 8)");
    CHECK_STR(tl_pt_param(&f.r, "padding"), "(1, 2, 3, 4)");
    CHECK_DBL(f.r.flops, 495);
    CHECK_DBL(f.r.bytes, (192 + 495) * 4);
    tl_pt_done(&f);
    /* more padding pairs than dims: IndexError */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_replication_pad, 0, "aten::replication_pad2d", "[[8], []]",
                              "[\"float\", \"ScalarList\"]", "[[1], []]", "[\"\", \"[1, 1, 1, 1]\"]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_replication_pad, 0, "aten::replication_pad1d", "[[8, 8], []]",
                              "[\"float\", \"ScalarList\"]", "[[8, 1], []]", "[\"\", \"\"]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

/* E4: owlv2 aten::mul with a Python scalar (0-dim, double). */
static void test_binary_scalar(void)
{
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[1, 5185, 4096], []]",
                              "[\"c10::BFloat16\", \"double\"]", "[[21237760, 4096, 1], []]", "[\"\", \"\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f.r, 0.02123776);
    CHECK_MB(&f.r, 81.01563262939453);
    CHECK_DBL((f.r.flops / 1e9 * 1e9) / f.r.bytes, 0.2499999764570297);
    CHECK_STR(tl_pt_keys(&f.r), "shape_in1,shape_in2,dtype_in1_in2_out,stride_input1,stride_input2,stride_output");
    CHECK_STR(tl_pt_param(&f.r, "shape_in1"), "(1, 5185, 4096)");
    CHECK_STR(tl_pt_param(&f.r, "shape_in2"), "()");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in1_in2_out"), "('c10::BFloat16', 'double', None)");
    CHECK_STR(tl_pt_param(&f.r, "stride_input2"), "()");
    CHECK_STR(tl_pt_param(&f.r, "stride_output"), "None");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
}

/* Broadcasting: Qwen mul [16,559,1024] x [16,559,1] (E4) and
 * (1024,) x (16,559,1024); owlv2 mixed dtypes take the larger bpe. */
static void test_binary_broadcast(void)
{
    tl_pt_fx f;
    tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[16, 559, 1024], [16, 559, 1]]",
                    "[\"float\", \"float\"]", "[[572416, 1024, 1], [559, 1, 1]]", "[\"\", \"\"]");
    CHECK_GFLOPS(&f.r, 0.009158656);
    CHECK_MB(&f.r, 69.90911865234375);
    tl_pt_done(&f);
    tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[1024], [16, 559, 1024]]",
                    "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[1], [572416, 1024, 1]]", "[\"\", \"\"]");
    CHECK_GFLOPS(&f.r, 0.009158656);
    CHECK_MB(&f.r, 34.939453125);
    CHECK_STR(tl_pt_param(&f.r, "shape_in1"), "(1024,)");
    tl_pt_done(&f);
    tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[1, 5184, 4], [1, 1, 4]]",
                    "[\"c10::BFloat16\", \"int\"]", "[[20736, 4, 1], [4, 4, 1]]", "[\"\", \"\"]");
    CHECK_GFLOPS(&f.r, 2.0736e-05);
    CHECK_MB(&f.r, 0.1186676025390625);
    tl_pt_done(&f);
    tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::add_", "[[1, 5184, 4], [5184, 4], []]",
                    "[\"c10::BFloat16\", \"float\", \"Scalar\"]", "[[20736, 4, 1], [4, 1], []]", "[\"\", \"\", \"1\"]");
    CHECK_MB(&f.r, 0.19775390625);
    tl_pt_done(&f);
    /* Falconsai add_ [4,768,14,14] + [1,768,1,1] */
    tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::add_", "[[4, 768, 14, 14], [1, 768, 1, 1], []]",
                    "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]", "[[150528, 196, 14, 1], [768, 1, 1, 1], []]",
                    "[\"\", \"\", \"1\"]");
    CHECK_GFLOPS(&f.r, 0.000602112);
    CHECK_MB(&f.r, 2.29833984375);
    tl_pt_done(&f);
    /* incompatible shapes: ValueError */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::add", "[[2, 3], [4, 3], []]",
                              "[\"float\", \"float\", \"Scalar\"]", "[[3, 1], [3, 1], []]", "[\"\", \"\", \"1\"]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_binary_out_and_errors(void)
{
    tl_pt_fx f;
    /* an out tensor at D[2] sets the output dtype (half: 2 bytes) */
    tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::add", "[[4, 4], [4, 4], [4, 4]]",
                    "[\"float\", \"float\", \"c10::Half\"]", "[[4, 1], [4, 1], [4, 1]]", "[\"\", \"\", \"\"]");
    CHECK_DBL(f.r.bytes, 16 * 4 + 16 * 4 + 16 * 2);
    CHECK_STR(tl_pt_param(&f.r, "dtype_in1_in2_out"), "('float', 'float', 'c10::Half')");
    CHECK_STR(tl_pt_param(&f.r, "stride_output"), "(4, 1)");
    tl_pt_done(&f);
    /* an unknown operand dtype: bytes None */
    tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[4], [4]]", "[\"float\", \"bool\"]",
                    "[[1], [1]]", "[\"\", \"\"]");
    CHECK(!f.r.has_bytes);
    CHECK_DBL(f.r.flops, 4);
    tl_pt_done(&f);
    /* a single operand: IndexError */
    CHECK_I64(
        tl_pt_run_lists(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[4]]", "[\"float\"]", "[[1]]", "[\"\"]"),
        TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_liger_silu_mul(void)
{
    tl_pt_fx f;
    /* no strides recorded: the stride params are None */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_liger_silu_mul_function, 0, "LigerSiLUMulFunction", "[[2, 8], [2, 8]]",
                              "[\"c10::BFloat16\", \"c10::BFloat16\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 16);
    CHECK_DBL(f.r.bytes, 96);
    CHECK_STR(tl_pt_param(&f.r, "dtype_in1_in2_out"), "('c10::BFloat16', 'c10::BFloat16', None)");
    CHECK_STR(tl_pt_param(&f.r, "stride_input1"), "None");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
}

static void test_primus_quantizers(void)
{
    tl_pt_fx f;
    CHECK_STR(tl_pc_primus_turbo_quantize_fp8.name, "primus_turbo_quantize_fp8");
    CHECK_STR(tl_pc_primus_turbo_quantize_fp8.sheet, "UnaryElementwise");
    CHECK_STR(tl_pc_primus_turbo_quantize_mxfp4_dual.name, "primus_turbo_quantize_mxfp4_dual");
    CHECK_STR(tl_pc_primus_turbo_quantize_mxfp4_dual.category, "elementwise");
    /* fp8: n·bpe_in + n·1 */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_primus_turbo_quantize_fp8, 0, "primus_turbo::quantize_fp8_tensorwise",
                              "[[4, 8]]", "[\"c10::BFloat16\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 32);
    CHECK_DBL(f.r.bytes, 32 * 2 + 32 * 1);
    CHECK_STR(tl_pt_keys(&f.r), "op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "('c10::BFloat16', 'c10::Float8_e4m3fnuz')");
    CHECK_STR(tl_pt_param(&f.r, "stride_input"), "None");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);

    /* (64, 100) bf16: 6400·2 + 2·3200 + 64·ceil(100/32) + 100·ceil(64/32) */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_primus_turbo_quantize_mxfp4_dual, 0, "primus::quantize_mxfp4_dual",
                              "[[64, 100]]", "[\"c10::BFloat16\"]", "[[100, 1]]", NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 6400);
    CHECK_DBL(f.r.bytes, 12800 + 6400 + 64 * 4 + 100 * 2);
    CHECK_STR(tl_pt_param(&f.r, "op_shape"), "(64, 100)");
    CHECK_STR(tl_pt_param(&f.r, "stride_input"), "(100, 1)");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
    /* odd element count: 2·floor((15 + 1)/2) = 16 */
    tl_pt_run_lists(&f, &tl_pc_primus_turbo_quantize_mxfp4_dual, 0, "primus::quantize_mxfp4_dual", "[[3, 5]]",
                    "[\"float\"]", NULL, NULL);
    CHECK_DBL(f.r.bytes, 15 * 4 + 16 + 3 * 1 + 5 * 1);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_primus_turbo_quantize_mxfp4_dual, 0, "primus::quantize_mxfp4_dual",
                              "[[2, 3, 4]]", "[\"float\"]", NULL, NULL),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_classes, test_unary_copy, test_unary_scalar_args, test_unary_errors, test_upsample_output_size,
        test_upsample_scales, test_replication_pad, test_binary_scalar, test_binary_broadcast,
        test_binary_out_and_errors, test_liger_silu_mul, test_primus_quantizers
    };
    return TL_PERF_TEST_RUN(tests, NULL, NULL);
}
