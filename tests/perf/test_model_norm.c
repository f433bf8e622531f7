/* test_model_norm.c — normalization perf models against the reference
 * Normalization.csv rows (Falconsai, timesformer, owlv2 layer norms) and
 * hand-computed values for the other norms, the backward ops and the
 * [FIX] affine/bias/training parsing. */
#include <stdio.h>
#include <string.h>

#include "perf/model_norm.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

static void test_classes(void)
{
    static const struct {
        const tl_perf_class *c;
        const char *name, *category;
        int has_bwd;
    } t[] = {
        {&tl_pc_BatchNorm, "BatchNorm", "NORM_fwd", 0},
        {&tl_pc_BatchNormBwd, "BatchNormBwd", "NORM_bwd", 1},
        {&tl_pc_LayerNorm, "LayerNorm", "NORM_fwd", 1},
        {&tl_pc_LayerNormBwd, "LayerNormBwd", "NORM_bwd", 1},
        {&tl_pc_GroupNorm, "GroupNorm", "NORM_fwd", 1},
        {&tl_pc_GroupNormBwd, "GroupNormBwd", "NORM_bwd", 1},
        {&tl_pc_InstanceNorm, "InstanceNorm", "NORM_fwd", 1},
        {&tl_pc_InstanceNormBwd, "InstanceNormBwd", "NORM_bwd", 0},
        {&tl_pc_RMSNorm, "RMSNorm", "NORM_fwd", 1},
        {&tl_pc_RMSNormBwd, "RMSNormBwd", "NORM_bwd", 1},
        {&tl_pc_FusedLnModulate, "FusedLnModulate", "NORM_fwd", 0},
        {&tl_pc_FusedLnModulateBackward, "FusedLnModulateBackward", "NORM_bwd", 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        CHECK_STR(t[i].c->name, t[i].name);
        CHECK_STR(t[i].c->category, t[i].category);
        CHECK_STR(t[i].c->bwd_category, "NORM_bwd");
        CHECK_STR(t[i].c->sheet, "Normalization");
        CHECK_I64(t[i].c->has_bwd, t[i].has_bwd);
    }
}

#define LN_TYPES "[\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]"

/* E7: Falconsai aten::layer_norm [4,197,768]; then native_layer_norm and
 * owlv2 rows of Normalization.csv. */
static void test_layer_norm_rows(void)
{
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[4, 197, 768], [], [768], [768], [], []]",
                              LN_TYPES, "[[151296, 768, 1], [], [1], [1], [], []]",
                              "[\"\", \"[768]\", \"\", \"\", \"9.9999999999999998e-13\", \"True\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f.r, 0.003030528);
    CHECK_MB(&f.r, 2.3173828125);
    CHECK_STR(tl_pt_keys(&f.r),
              "op_shape,dtype_in_out,stride_input,stride_output,num_channels,has_bias,is_affine,is_training");
    CHECK_STR(tl_pt_param(&f.r, "op_shape"), "(4, 197, 768)");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "('c10::BFloat16', None)");
    CHECK_STR(tl_pt_param(&f.r, "stride_input"), "(151296, 768, 1)");
    CHECK_STR(tl_pt_param(&f.r, "stride_output"), "None");
    CHECK_STR(tl_pt_param(&f.r, "num_channels"), "768");
    CHECK_STR(tl_pt_param(&f.r, "has_bias"), "True");
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "True");
    CHECK_STR(tl_pt_param(&f.r, "is_training"), "True");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
    tl_pt_run_lists(&f, &tl_pc_LayerNorm, 0, "aten::native_layer_norm", "[[3136, 8, 768], [], [768], [768], []]",
                    "[\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]",
                    "[[6144, 768, 1], [], [1], [1], []]", "[\"\", \"[768]\", \"\", \"\", \"9.9999999999999995e-07\"]");
    CHECK_GFLOPS(&f.r, 0.096342528);
    CHECK_MB(&f.r, 73.5087890625);
    tl_pt_done(&f);
    tl_pt_run_lists(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[1, 1024], [], [1024], [1024], [], []]", LN_TYPES,
                    "[[5309440, 1], [], [1], [1], [], []]",
                    "[\"\", \"[1024]\", \"\", \"\", \"1.0000000000000001e-05\", \"True\"]");
    CHECK_GFLOPS(&f.r, 1.1264e-05);
    CHECK_MB(&f.r, 0.015625);
    tl_pt_done(&f);
}

/* [FIX] weight/bias presence at D[2]/D[3]; the bwd metrics (base
 * formulas, every gradient wanted); malformed normalized_shape. */
static void test_layer_norm_fix_and_bwd(void)
{
    tl_pt_fx f;
    /* no weight, no bias: W = 2 + 2 (training) */
    tl_pt_run_lists(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[2, 4], [], [], [], [], []]",
                    "[\"float\", \"ScalarList\", \"\", \"\", \"Scalar\", \"Scalar\"]", "[[4, 1], [], [], [], [], []]",
                    "[\"\", \"[4]\", \"\", \"\", \"1e-05\", \"True\"]");
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "False");
    CHECK_STR(tl_pt_param(&f.r, "has_bias"), "False");
    CHECK_DBL(f.r.flops, 6 * 4 + 5 * 8);
    CHECK_DBL(f.r.bytes, 8 * 4 * 2 + 4 * 4 * 4);
    tl_pt_done(&f);
    /* weight only: W = 5 */
    tl_pt_run_lists(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[2, 4], [], [4], [], [], []]",
                    "[\"float\", \"ScalarList\", \"float\", \"\", \"Scalar\", \"Scalar\"]",
                    "[[4, 1], [], [1], [], [], []]", "[\"\", \"[4]\", \"\", \"\", \"1e-05\", \"True\"]");
    CHECK_DBL(f.r.bytes, 8 * 4 * 2 + 5 * 4 * 4);
    tl_pt_done(&f);
    /* bwd: E = 8, C = 4, epc 2: C·(4·2 + 5·2) = 72; bytes 16 + 32 + 8 + (8 + 16) */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_LayerNorm, 1, "aten::layer_norm", "[[2, 4], [], [4], [4], [], []]", LN_TYPES,
                              "[[4, 1], [], [1], [1], [], []]", "[\"\", \"[4]\", \"\", \"\", \"1e-05\", \"True\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 72);
    CHECK_DBL(f.r.bytes, 80);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[2, 4], [], [4], [4], [], []]", LN_TYPES,
                              "[[4, 1], [], [1], [1], [], []]", "[\"\", \"\", \"\", \"\", \"1e-05\", \"True\"]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

#define LNB_DIMS "[[4, 197, 768], [4, 197, 768], [], [4, 197, 1], [4, 197, 1], [768], [768], []]"
#define LNB_TYPES                                                                                          \
    "[\"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"float\", \"float\", \"c10::BFloat16\", " \
    "\"c10::BFloat16\", \"ScalarList\"]"

static int run_lnb(tl_pt_fx *f, const char *mask)
{
    char concrete[128];
    snprintf(concrete, sizeof concrete, "[\"\", \"\", \"[768]\", \"\", \"\", \"\", \"\", \"%s\"]", mask);
    return tl_pt_run_lists(f, &tl_pc_LayerNormBwd, 0, "aten::native_layer_norm_backward", LNB_DIMS, LNB_TYPES, NULL,
                           concrete);
}

/* native_layer_norm_backward: affine and bias from output_mask. */
static void test_layer_norm_bwd(void)
{
    tl_pt_fx f;
    const int64_t E = 605184, C = 768;
    CHECK_I64(run_lnb(&f, "[True, True, True]"), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 9 * E);
    CHECK_DBL(f.r.bytes, E * 2 + 2 * E * 2 + C * 2 + C * 2 + 2 * C * 2);
    CHECK_STR(tl_pt_keys(&f.r),
              "op_shape,dtype_in_out,stride_input,stride_output,num_channels,has_bias,is_affine,is_training,output_mask");
    CHECK_STR(tl_pt_param(&f.r, "output_mask"), "[True, True, True]");
    CHECK_STR(tl_pt_param(&f.r, "num_channels"), "768");
    CHECK_STR(tl_pt_param(&f.r, "stride_input"), "None");
    tl_pt_done(&f);
    run_lnb(&f, "[True, False, False]");
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "False");
    CHECK_STR(tl_pt_param(&f.r, "has_bias"), "False");
    CHECK_DBL(f.r.flops, 9 * E);
    CHECK_DBL(f.r.bytes, E * 2 + 2 * E * 2 + C * 2);
    tl_pt_done(&f);
    /* no input grad: C·(4·epc + 2·epc) = 6E; one read of x */
    run_lnb(&f, "[False, True, True]");
    CHECK_DBL(f.r.flops, 6 * E);
    CHECK_DBL(f.r.bytes, E * 2 + E * 2 + C * 2 + (C * 2 + C * 2 * 2));
    tl_pt_done(&f);
    CHECK_I64(run_lnb(&f, "[True]"), TL_PERF_ERROR);
    tl_pt_done(&f);
    CHECK_I64(run_lnb(&f, ""), TL_PERF_ERROR);
    tl_pt_done(&f);
}

#define BN_DIMS "[[8, 16, 4, 4], [16], [16], [16], [16], [], [], [], []]"
#define BN_TYPES "[\"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]"

/* [FIX] batch_norm training is the literal of C[5] ("False" is False). */
static void test_batch_norm(void)
{
    tl_pt_fx f;
    const int64_t E = 2048, C = 16;
    CHECK_I64(
        tl_pt_run_lists(
            &f, &tl_pc_BatchNorm, 0, "aten::batch_norm", BN_DIMS, BN_TYPES, NULL,
            "[\"\", \"\", \"\", \"\", \"\", \"False\", \"0.10000000000000001\", \"1.0000000000000001e-05\", \"True\"]"),
        TL_PERF_OK);
    CHECK_STR(tl_pt_param(&f.r, "is_training"), "False");
    CHECK_STR(tl_pt_param(&f.r, "num_channels"), "16");
    CHECK_DBL(f.r.flops, 6 * C + 2 * E);
    CHECK_DBL(f.r.bytes, 2 * E * 4 + 4 * C * 4);
    CHECK_STR(f.r.precision, "fp32");
    tl_pt_done(&f);
    tl_pt_run_lists(&f, &tl_pc_BatchNorm, 0, "aten::batch_norm", BN_DIMS, BN_TYPES, NULL,
                    "[\"\", \"\", \"\", \"\", \"\", \"True\", \"0.1\", \"1e-05\", \"True\"]");
    CHECK_STR(tl_pt_param(&f.r, "is_training"), "True");
    CHECK_DBL(f.r.flops, 6 * C + 5 * E);
    CHECK_DBL(f.r.bytes, 2 * E * 4 + 6 * C * 4);
    tl_pt_done(&f);
    /* [FIX] no weight/bias: W = 2 */
    tl_pt_run_lists(&f, &tl_pc_BatchNorm, 0, "aten::native_batch_norm",
                    "[[8, 16, 4, 4], [], [], [16], [16], [], [], []]", BN_TYPES, NULL,
                    "[\"\", \"\", \"\", \"\", \"\", \"False\", \"0.1\", \"1e-05\"]");
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "False");
    CHECK_STR(tl_pt_param(&f.r, "has_bias"), "False");
    CHECK_DBL(f.r.bytes, 2 * E * 4 + 2 * C * 4);
    tl_pt_done(&f);
    /* bwd metrics: NotImplementedError */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_BatchNorm, 1, "aten::batch_norm", BN_DIMS, BN_TYPES, NULL,
                              "[\"\", \"\", \"\", \"\", \"\", \"True\", \"0.1\", \"1e-05\", \"True\"]"),
              TL_PERF_NOT_IMPLEMENTED);
    tl_pt_done(&f);
    /* training flag missing: IndexError */
    CHECK_I64(
        tl_pt_run_lists(&f, &tl_pc_BatchNorm, 0, "aten::batch_norm", "[[8, 16, 4, 4]]", "[\"float\"]", NULL, "[\"\"]"),
        TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_batch_norm_bwd(void)
{
    tl_pt_fx f;
    const int64_t E = 2048, C = 16;
    /* native: input at 1, train = C[7], mask = [has_output]: flops 9E */
    CHECK_I64(tl_pt_run_lists(
                  &f, &tl_pc_BatchNormBwd, 0, "aten::native_batch_norm_backward",
                  "[[8, 16, 4, 4], [8, 16, 4, 4], [16], [16], [16], [16], [16], [], [], []]",
                  "[\"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", "
                  "\"Scalar\", \"ScalarList\"]",
                  NULL, "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"True\", \"1e-05\", \"[True, True, True]\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 9 * E);
    CHECK_DBL(f.r.bytes, E * 4 + E * 4 * 2 + C * 4 + (C * 4 + C * 4 * 2));
    CHECK_STR(tl_pt_param(&f.r, "output_mask"), "[True]");
    CHECK_STR(tl_pt_param(&f.r, "is_training"), "True");
    tl_pt_done(&f);
    /* cudnn: input at 0, never training: C·(3 + 4·epc) */
    CHECK_I64(tl_pt_run_lists(
                  &f, &tl_pc_BatchNormBwd, 1, "aten::cudnn_batch_norm_backward",
                  "[[8, 16, 4, 4], [8, 16, 4, 4], [16], [16], [16], [16], [16], [], []]",
                  "[\"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", \"\"]",
                  NULL, "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"1e-05\", \"\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, C * 3 + 4 * E);
    CHECK_DBL(f.r.bytes, E * 4 + E * 4 + C * 4);
    CHECK_STR(tl_pt_param(&f.r, "is_training"), "False");
    tl_pt_done(&f);
}

#define GN_TYPES "[\"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]"

static void test_group_norm(void)
{
    tl_pt_fx f;
    const int64_t E = 4096, C = 32;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_GroupNorm, 0, "aten::group_norm", "[[2, 32, 8, 8], [], [32], [32], [], []]",
                              GN_TYPES, NULL, "[\"\", \"4\", \"\", \"\", \"1e-05\", \"True\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 6 * C + 5 * E);
    CHECK_DBL(f.r.bytes, 2 * E * 2 + 6 * C * 2);
    CHECK_STR(tl_pt_param(&f.r, "num_channels"), "32");
    tl_pt_done(&f);
    /* [FIX] native_group_norm(input, weight?, bias?, N, C, HxW, group, eps): weight only */
    tl_pt_run_lists(&f, &tl_pc_GroupNorm, 0, "aten::native_group_norm", "[[2, 32, 8, 8], [32], [], [], [], [], [], []]",
                    GN_TYPES, NULL, "[\"\", \"\", \"\", \"2\", \"32\", \"64\", \"4\", \"1e-05\"]");
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "True");
    CHECK_STR(tl_pt_param(&f.r, "has_bias"), "False");
    CHECK_DBL(f.r.bytes, 2 * E * 2 + 5 * C * 2);
    tl_pt_done(&f);
    /* aiter::_groupnorm_run keeps the reference rule */
    tl_pt_run_lists(&f, &tl_pc_GroupNorm, 0, "aiter::_groupnorm_run", "[[2, 32, 8, 8], [], []]", GN_TYPES, NULL, NULL);
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "True");
    CHECK_DBL(f.r.bytes, 2 * E * 2 + 6 * C * 2);
    tl_pt_done(&f);
    CHECK_I64(
        tl_pt_run_lists(&f, &tl_pc_GroupNorm, 0, "aiter::_groupnorm_run", "[[2, 32, 8, 8], []]", GN_TYPES, NULL, NULL),
        TL_PERF_ERROR);
    tl_pt_done(&f);
}

/* native_group_norm_backward: C = 32 / 4 groups = 8.0 (a float). */
static void test_group_norm_bwd(void)
{
    tl_pt_fx f;
    const char *types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"float\", \"float\", \"c10::BFloat16\", \"Scalar\", "
                        "\"Scalar\", \"Scalar\", \"Scalar\", \"ScalarList\"]";
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_GroupNormBwd, 0, "aten::native_group_norm_backward",
                              "[[2, 32, 8, 8], [2, 32, 8, 8], [2, 4], [2, 4], [32], [], [], [], [], []]", types, NULL,
                              "[\"\", \"\", \"\", \"\", \"\", \"2\", \"32\", \"64\", \"4\", \"[True, True, True]\"]"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param(&f.r, "num_channels"), "8.0");
    CHECK_DBL(f.r.flops, 8.0 * (2048 + 2560));
    CHECK_DBL(f.r.bytes, 8192 + 16384 + 16 + (16 + 32));
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "True");
    tl_pt_done(&f);
    /* [FIX] the weight is D[4]; absent here */
    tl_pt_run_lists(&f, &tl_pc_GroupNormBwd, 0, "aten::native_group_norm_backward",
                    "[[2, 32, 8, 8], [2, 32, 8, 8], [2, 4], [2, 4], [], [], [], [], [], []]", types, NULL,
                    "[\"\", \"\", \"\", \"\", \"\", \"2\", \"32\", \"64\", \"4\", \"[True, False, False]\"]");
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "False");
    CHECK_DBL(f.r.bytes, 8192 + 16384 + 16);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_GroupNormBwd, 0, "aten::native_group_norm_backward",
                              "[[2, 32, 8, 8], [2, 32, 8, 8], [2, 4], [2, 4], [32], [], [], [], [], []]", types, NULL,
                              "[\"\", \"\", \"\", \"\", \"\", \"2\", \"32\", \"64\", \"0\", \"[True, True, True]\"]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_instance_norm(void)
{
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_InstanceNorm, 0, "aten::instance_norm",
                              "[[2, 3, 4, 4], [], [], [], [], [], [], [], []]",
                              "[\"float\", \"\", \"\", \"\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]",
                              NULL, "[\"\", \"\", \"\", \"\", \"\", \"True\", \"0.1\", \"1e-05\", \"False\"]"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "False");
    CHECK_STR(tl_pt_param(&f.r, "is_training"), "True");
    CHECK_DBL(f.r.flops, 6 * 3 + 5 * 96);
    CHECK_DBL(f.r.bytes, 2 * 96 * 4 + 4 * 3 * 4);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_InstanceNormBwd, 0, "aten::instance_norm_backward", "[[2, 3, 4, 4]]",
                              "[\"float\"]", NULL, "[\"\"]"),
              TL_PERF_NOT_IMPLEMENTED);
    tl_pt_done(&f);
}

#define RMS_TYPES "[\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\", \"Scalar\"]"

static void test_rms_norm(void)
{
    tl_pt_fx f;
    /* rows = 16: flops 16·(2·64 + 2) + 2E; bytes 2E·2 + C·2 */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_RMSNorm, 0, "aten::_fused_rms_norm", "[[2, 8, 64], [], [64], []]", RMS_TYPES,
                              NULL, "[\"\", \"[64]\", \"\", \"1e-06\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 16 * 130 + 2 * 1024);
    CHECK_DBL(f.r.bytes, 2 * 1024 * 2 + 64 * 2);
    CHECK_STR(tl_pt_param(&f.r, "has_bias"), "False");
    CHECK_STR(tl_pt_param(&f.r, "is_training"), "False");
    CHECK_STR(tl_pt_param(&f.r, "num_channels"), "64");
    tl_pt_done(&f);
    /* [FIX] no weight; rows = 10 / 4 = 2.5 */
    tl_pt_run_lists(&f, &tl_pc_RMSNorm, 0, "aten::_fused_rms_norm", "[[10], [], [], []]", RMS_TYPES, NULL,
                    "[\"\", \"[4]\", \"\", \"None\"]");
    CHECK_STR(tl_pt_param(&f.r, "is_affine"), "False");
    CHECK_DBL(f.r.flops, 2.5 * 10 + 10);
    CHECK_DBL(f.r.bytes, 10 * 2 * 2);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_RMSNorm, 0, "aten::_fused_rms_norm", "[[2, 8, 64], [], [64], []]", RMS_TYPES,
                              NULL, "[\"\", \"[0]\", \"\", \"1e-06\"]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_rms_norm_bwd(void)
{
    tl_pt_fx f;
    const char *types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"float\", \"c10::BFloat16\", "
                        "\"ScalarList\"]";
    /* affine, mask [T, T], rows 16 > 1: 10E; bytes 3E·2 + 2C·2 */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_RMSNormBwd, 0, "aten::_fused_rms_norm_backward",
                              "[[2, 8, 64], [2, 8, 64], [], [2, 8, 1], [64], []]", types, NULL,
                              "[\"\", \"\", \"[64]\", \"\", \"\", \"[True, True]\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 10 * 1024);
    CHECK_DBL(f.r.bytes, 1024 * 2 + 2 * 1024 * 2 + 2 * 64 * 2);
    CHECK_STR(tl_pt_param(&f.r, "output_mask"), "[True, True]");
    tl_pt_done(&f);
    /* one row (rows = 1): no second E for the weight grad */
    tl_pt_run_lists(&f, &tl_pc_RMSNormBwd, 1, "aten::_fused_rms_norm_backward", "[[64], [64], [], [1], [64], []]",
                    types, NULL, "[\"\", \"\", \"[64]\", \"\", \"\", \"[True, True]\"]");
    CHECK_DBL(f.r.flops, 9 * 64);
    tl_pt_done(&f);
    /* [FIX] no weight at D[4] */
    tl_pt_run_lists(&f, &tl_pc_RMSNormBwd, 0, "aten::_fused_rms_norm_backward",
                    "[[2, 8, 64], [2, 8, 64], [], [2, 8, 1], [], []]", types, NULL,
                    "[\"\", \"\", \"[64]\", \"\", \"\", \"[False, True]\"]");
    CHECK_DBL(f.r.flops, 1024);
    CHECK_DBL(f.r.bytes, 1024 * 2 + 2 * 1024 * 2);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_RMSNormBwd, 0, "aten::_fused_rms_norm_backward",
                              "[[2, 8, 64], [2, 8, 64], [], [2, 8, 1], [64], []]", types, NULL,
                              "[\"\", \"\", \"[64]\", \"\", \"\", \"[True]\"]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

/* x = [T=4, B=2, H=8] bf16, E = 64. */
static void test_fused_ln_modulate(void)
{
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_FusedLnModulate, 0, "primus::fused_ln_modulate", "[[4, 2, 8], [2, 8], [2, 8]]",
                              "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 12 * 64);
    CHECK_DBL(f.r.bytes, 2 * 64 * 2 + 2 * 2 * 8 * 2 + 2 * 4 * 2 * 4);
    CHECK_STR(tl_pt_param(&f.r, "num_channels"), "8");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_FusedLnModulateBackward, 0, "primus::fused_ln_modulate_backward",
                              "[[4, 2, 8], [4, 2, 8], [2, 8], [2, 8]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", NULL,
                              NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 15 * 64);
    CHECK_DBL(f.r.bytes, 2 * 64 * 2 + 2 * 2 * 4 * 4 + 64 * 2 + 2 * 2 * 8 * 2 + 2 * 8 * 2);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_FusedLnModulate, 0, "primus::fused_ln_modulate", "[[4, 16]]",
                              "[\"c10::BFloat16\"]", NULL, NULL),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_classes, test_layer_norm_rows, test_layer_norm_fix_and_bwd, test_layer_norm_bwd, test_batch_norm,
        test_batch_norm_bwd, test_group_norm, test_group_norm_bwd, test_instance_norm, test_rms_norm,
        test_rms_norm_bwd, test_fused_ln_modulate
    };
    return TL_PERF_TEST_RUN(tests, NULL, NULL);
}
