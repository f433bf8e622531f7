/* test_model_conv.c — the convolution perf models (perf-model spec §4.2)
 * against hand-checked numbers: the h100 / agent-case reference CSV rows,
 * the bias FIX of §7 E5, backward formulas, ConvBias_ by sequence number,
 * error paths, and the literal parsers and Python numbers of perf_util.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "perf/model_conv.h"
#include "perf/perf_util.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

/* The aten::convolution args of the h100 Falconsai CONV_fwd row. */
static tl_perf_event falconsai(void)
{
    return tl_pt_event("aten::convolution", "[[4, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []]",
                       "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"ScalarList\", "
                       "\"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\"]",
                       "[[150528, 50176, 224, 1], [768, 256, 16, 1], [1], [], [], [], [], [], []]",
                       "[\"\", \"\", \"\", \"[16, 16]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]", NULL);
}

/* §7 E5 with the bias FIX: the reference shows 0.924844032 / 3.421875 / bias False. */
static void test_falconsai_bias_fix(void)
{
    tl_perf_event ev = falconsai();
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 925446144.0);
    CHECK_DBL(r.flops / 1e9, 0.925446144);
    CHECK(r.has_bytes);
    CHECK_DBL(r.bytes / 1048576, 3.42333984375);
    CHECK_DBL((r.flops / 1e9 * 1e9) / r.bytes, 257.8108686350021);
    CHECK_STR(r.maf, "matrix");
    CHECK_STR(r.precision, "bf16");
    CHECK_STR(tl_pt_keys(&r), "convNd,input_shape,filter_shape,dtype_input_weight,input_stride,weight_stride,bias,"
                              "stride,padding,dilation,transposed_conv,output_padding,groups");
    CHECK_STR(tl_pt_param_repr(&r, "convNd"), "'conv2d'");
    CHECK_STR(tl_pt_param_repr(&r, "input_shape"), "(4, 3, 224, 224)");
    CHECK_STR(tl_pt_param_repr(&r, "filter_shape"), "(768, 3, 16, 16)");
    CHECK_STR(tl_pt_param_repr(&r, "dtype_input_weight"), "('c10::BFloat16', 'c10::BFloat16')");
    CHECK_STR(tl_pt_param_repr(&r, "input_stride"), "(150528, 50176, 224, 1)");
    CHECK_STR(tl_pt_param_repr(&r, "weight_stride"), "(768, 256, 16, 1)");
    CHECK_STR(tl_pt_param_repr(&r, "bias"), "True");
    CHECK_STR(tl_pt_param_repr(&r, "stride"), "(16, 16)");
    CHECK_STR(tl_pt_param_repr(&r, "padding"), "(0, 0)");
    CHECK_STR(tl_pt_param_repr(&r, "dilation"), "(1, 1)");
    CHECK_STR(tl_pt_param_repr(&r, "transposed_conv"), "False");
    CHECK_STR(tl_pt_param_repr(&r, "output_padding"), "(0, 0)");
    CHECK_STR(tl_pt_param_repr(&r, "groups"), "1");
    tl_perf_result_free(&r);

    /* backward metrics of the same op (CONV_bwd), bias term times bpe (FIX) */
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 1, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 1850290176.0);
    CHECK_DBL(r.bytes, 8381952.0);
    tl_perf_result_free(&r);
}

/* timesformer CONV_fwd: the other shipped row the bias FIX changes. */
static void test_timesformer_bias_fix(void)
{
    tl_perf_event ev =
        tl_pt_event("aten::convolution", "[[128, 3, 224, 224], [768, 3, 16, 16], [768], [], [], [], [], [], []]",
                    "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"ScalarList\", "
                    "\"ScalarList\", \"Scalar\", \"ScalarList\", \"Scalar\"]",
                    "[[150528, 50176, 224, 1], [768, 256, 16, 1], [1], [], [], [], [], [], []]",
                    "[\"\", \"\", \"\", \"[16, 16]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]", NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 29.614276608); /* reference 29.595009024 without the bias */
    CHECK_DBL(r.bytes / 1048576, 74.62646484375); /* reference 74.625 */
    CHECK_STR(tl_pt_param_repr(&r, "bias"), "True");
    tl_perf_result_free(&r);
}

/* owlv2 CONV_fwd: no bias (Input Dims[2] empty): the reference row unchanged. */
static void test_owlv2_reference_row(void)
{
    tl_perf_event ev =
        tl_pt_event("aten::convolution", "[[1, 3, 1008, 1008], [1024, 3, 14, 14], [], [], [], [], [], [], []]",
                    "[\"c10::BFloat16\", \"c10::BFloat16\", \"\", \"ScalarList\", \"ScalarList\", \"ScalarList\", "
                    "\"Scalar\", \"ScalarList\", \"Scalar\"]",
                    "[[3048192, 1016064, 1008, 1], [588, 196, 14, 1], [], [], [], [], [], [], []]",
                    "[\"\", \"\", \"\", \"[14, 14]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]", NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 6.242697216);
    CHECK_DBL(r.bytes / 1048576, 17.08740234375);
    CHECK_DBL((r.flops / 1e9 * 1e9) / r.bytes, 348.4145735105015);
    CHECK_STR(tl_pt_param_repr(&r, "bias"), "False");
    CHECK_STR(tl_pt_param_repr(&r, "stride"), "(14, 14)");
    CHECK_STR(tl_pt_param_repr(&r, "weight_stride"), "(588, 196, 14, 1)");
    tl_perf_result_free(&r);
}

/* agent-case rows: two Input Dims only, 'Float' types, "(2,2)" tuples. */
static void test_agent_case_rows(void)
{
    tl_perf_event ev =
        tl_pt_event("aten::convolution", "[[1, 3, 2048, 2048], [64, 3, 7, 7]]", "[\"Float\", \"Float\"]",
                    "[[1, 1, 1, 1], [1, 1, 1, 1]]",
                    "[\"\", \"\", \"\", \"(2,2)\", \"(3,3)\", \"(1,1)\", \"False\", \"(0,0)\", \"1\"]", NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 19.730006016);
    CHECK_DBL(r.bytes / 1048576, 304.035888671875);
    CHECK_DBL((r.flops / 1e9 * 1e9) / r.bytes, 61.88743073126743);
    CHECK_STR(r.precision, "fp32");
    CHECK_STR(tl_pt_param_repr(&r, "dtype_input_weight"), "('Float', 'Float')");
    CHECK_STR(tl_pt_param_repr(&r, "stride"), "(2, 2)");
    CHECK_STR(tl_pt_param_repr(&r, "padding"), "(3, 3)");
    CHECK_STR(tl_pt_param_repr(&r, "bias"), "False");
    tl_perf_result_free(&r);

    ev = tl_pt_event("aten::convolution", "[[2, 256, 56, 56], [512, 256, 1, 7]]", "[\"Float\", \"Float\"]",
                     "[[1, 1, 1, 1], [1, 1, 1, 1]]",
                     "[\"\", \"\", \"\", \"(1,1)\", \"(0,3)\", \"(1,1)\", \"False\", \"(0,0)\", \"1\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 11.509170176);
    CHECK_DBL(r.bytes / 1048576, 21.875);
    CHECK_STR(tl_pt_param_repr(&r, "padding"), "(0, 3)");
    tl_perf_result_free(&r);
}

/* conv1d, 1-tuples repeated, groups, empty texts take the defaults. */
static void test_conv1d_and_defaults(void)
{
    tl_perf_event ev = tl_pt_event("aten::convolution", "[[2, 4, 50], [8, 2, 5], [8], [], [], [], [], [], []]",
                                   "[\"float\", \"float\", \"float\"]", NULL,
                                   "[\"\", \"\", \"\", \"[2]\", \"[1]\", \"[2]\", \"False\", \"\", \"2\"]", NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 7392.0);
    CHECK_DBL(r.bytes, 3360.0);
    CHECK_STR(tl_pt_param_repr(&r, "convNd"), "'conv1d'");
    CHECK_STR(tl_pt_param_repr(&r, "stride"), "(2,)");
    CHECK_STR(tl_pt_param_repr(&r, "output_padding"), "(0,)");
    CHECK_STR(tl_pt_param_repr(&r, "groups"), "2");
    CHECK_STR(tl_pt_param_repr(&r, "input_stride"), "None");
    tl_perf_result_free(&r);
}

/* Transposed convolution: out = (x-1)s - 2p + d(k-1) + op + 1, channels from w[1]. */
static void test_transposed(void)
{
    tl_perf_event ev =
        tl_pt_event("aten::convolution", "[[2, 16, 10, 10], [16, 8, 3, 3], [], [], [], [], [], [], []]",
                    "[\"c10::Half\", \"c10::Half\"]", NULL,
                    "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"True\", \"[1, 1]\", \"1\"]", NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 460800.0);
    CHECK_DBL(r.bytes, 21504.0);
    CHECK_STR(tl_pt_param_repr(&r, "transposed_conv"), "True");
    CHECK_STR(r.precision, "fp16");
    tl_perf_result_free(&r);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 1, &r), TL_PERF_OK);
    CHECK_DBL(r.flops, 921600.0);
    CHECK_DBL(r.bytes, 43008.0);
    tl_perf_result_free(&r);
}

/* aten::convolution_backward: x = D[1], w = D[2], bias from output_mask C[10] (FIX). */
static void test_convolution_backward(void)
{
    const char *dims = "[[4, 768, 14, 14], [4, 3, 224, 224], [768, 3, 16, 16], [], [], [], [], [], [], [], []]";
    const char *types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\"]";
    tl_perf_event ev = tl_pt_event("aten::convolution_backward", dims, types, NULL,
                                   "[\"\", \"\", \"\", \"[768]\", \"[16, 16]\", \"[0, 0]\", \"[1, 1]\", \"False\", "
                                   "\"[0, 0]\", \"1\", \"[True, True, True]\"]",
                                   NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv_bwd, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 1.850290176);
    CHECK_DBL(r.bytes / 1048576, 7.99365234375);
    CHECK_STR(tl_pt_param_repr(&r, "bias"), "True");
    CHECK_STR(tl_pt_param_repr(&r, "input_shape"), "(4, 3, 224, 224)");
    tl_perf_result_free(&r);

    ev = tl_pt_event("aten::convolution_backward", dims, types, NULL,
                     "[\"\", \"\", \"\", \"None\", \"[16, 16]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\", "
                     "\"[True, True, False]\"]",
                     NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv_bwd, &ev, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 1.849688064);
    CHECK_DBL(r.bytes / 1048576, 6.84375);
    CHECK_STR(tl_pt_param_repr(&r, "bias"), "False");
    tl_perf_result_free(&r);
}

/* A bias-less backward convolution (ResNet, activation checkpointing):
 * bias_sizes [0], output_mask [True, True, False]; §4.2 as corrected. 3x3,
 * pad 1: x = out = [2, 64, 8, 8], w = [64, 64, 3, 3], bf16. By hand:
 * prod(x) = prod(out) = 8192, prod(w) = 36864;
 * input grad = 8192·2·(64·9) = 9437184, weight grad = 36864·2·(2·64) =
 * 9437184, so flops 18874368 (+ prod(out) 8192 with a bias);
 * bytes = 2·(8192 + 36864 + 8192)·2 = 212992 (+ (8192 + 64)·2 = 16512).
 * With one of the two gradients masked off (output_mask [False, True, ...]
 * or [True, False, ...], [FIX]) half of each: 9437184 flops, 106496 bytes. */
static int run_bwd_bias(const char *bias_sizes, const char *mask, tl_perf_result *r)
{
    char concrete[256];
    if (mask)
        snprintf(concrete, sizeof concrete,
                 "[\"\", \"\", \"\", \"%s\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\", \"[0, 0]\", "
                 "\"1\", \"%s\"]",
                 bias_sizes, mask);
    else /* no output_mask entry at all */
        snprintf(concrete, sizeof concrete,
                 "[\"\", \"\", \"\", \"%s\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", \"False\", \"[0, 0]\", "
                 "\"1\"]",
                 bias_sizes);
    tl_perf_event ev = tl_pt_event(
        "aten::convolution_backward", "[[2, 64, 8, 8], [2, 64, 8, 8], [64, 64, 3, 3], [], [], [], [], [], [], [], []]",
        "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\"]", NULL, concrete, NULL);
    return tl_pt_run(&tl_pc_aten_conv_bwd, &ev, 0, r);
}

static void test_convolution_backward_no_bias(void)
{
    static const struct {
        const char *sizes, *mask;
        int bias, grads; /* grads: how many of input grad / weight grad are counted */
    } t[] = {
        {"[0]", "[True, True, False]", 0, 2},  /* the trace's bias-less convolution */
        {"[64]", "[True, True, False]", 0, 2}, /* output_mask decides */
        {"[0]", "[True, True, True]", 1, 2},
        {"[64]", "[False, True, True]", 1, 1}, /* no input grad [FIX] */
        {"[0]", "[False, True, False]", 0, 1}, /* a first layer: weight grad only */
        {"[0]", "[True, False, False]", 0, 1}, /* frozen weights: input grad only */
        {"[64]", "[False, False, True]", 1, 0},
        {"[64]", "[True, True]", 0, 2},        /* parses, no third entry */
        {"[64]", NULL, 1, 2},                  /* no output_mask: bias_sizes, both grads */
        {"[0]", NULL, 0, 2},
        {"[]", NULL, 0, 2},
        {"None", NULL, 0, 2},
        {"[64]", "", 1, 2},                    /* unparseable output_mask: bias_sizes */
        {"[0]", "", 0, 2},
        {"[64, 0]", "", 0, 2},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        tl_perf_result r;
        CHECK_I64(run_bwd_bias(t[i].sizes, t[i].mask, &r), TL_PERF_OK);
        CHECK_STR(tl_pt_param_repr(&r, "bias"), t[i].bias ? "True" : "False");
        CHECK_DBL(r.flops, 9437184.0 * t[i].grads + (t[i].bias ? 8192.0 : 0.0));
        CHECK_DBL(r.bytes, 106496.0 * t[i].grads + (t[i].bias ? 16512.0 : 0.0));
        tl_perf_result_free(&r);
    }
}

/* ResNet-50's first convolution in training (the H200 capture
 * resnet_train): its input, the image batch, needs no gradient, so
 * convolution_backward records output_mask [False, True, False]. x = [64, 3,
 * 224, 224], w = [64, 3, 7, 7], stride 2, padding 3: out = [64, 64, 112,
 * 112]. By hand: the weight grad is prod(t(w)) · 2 · prod(out[0], out[2:]) =
 * 9408 · 2 · 802816 = 15105785856 flops and (prod(out) + prod(x) + prod(w)) ·
 * 2 = (51380224 + 9633792 + 9408) · 2 = 122046848 bytes; the reference also
 * counts an input grad of the same size (30211571712 flops, 244093696 bytes). */
static void test_convolution_backward_weight_grad_only(void)
{
    const char *dims = "[[64, 64, 112, 112], [64, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], [], []]";
    const char *types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\"]";
    const char *masks[2] = {"[False, True, False]", "[True, True, False]"};
    for (int i = 0; i < 2; i++) {
        char concrete[256];
        snprintf(concrete, sizeof concrete,
                 "[\"\", \"\", \"\", \"[0]\", \"[2, 2]\", \"[3, 3]\", \"[1, 1]\", \"False\", \"[0, 0]\", "
                 "\"1\", \"%s\"]",
                 masks[i]);
        tl_perf_event ev = tl_pt_event("aten::convolution_backward", dims, types, NULL, concrete, NULL);
        tl_perf_result r;
        CHECK_I64(tl_pt_run(&tl_pc_aten_conv_bwd, &ev, 0, &r), TL_PERF_OK);
        CHECK_DBL(r.flops, 15105785856.0 * (i + 1));
        CHECK_DBL(r.bytes, 122046848.0 * (i + 1));
        CHECK_STR(tl_pt_param_repr(&r, "bias"), "False");
        tl_perf_result_free(&r);
    }
}

/* ConvBias_ forward; ConvBias_Backward reads it through ev->seq_forward (the
 * caller's lookup by Sequence number, report/perf_eval.c). */
static void test_conv_bias_sequence(void)
{
    const char *dims = "[[8, 64, 56, 56], [64, 64, 3, 3], [1, 64, 1, 1], [], []]";
    const char *types = "[\"c10::Half\", \"c10::Half\", \"c10::Half\", \"Scalar\", \"Scalar\"]";
    tl_perf_event fwd = tl_pt_event("ConvBiasReLU_", dims, types, NULL, "[\"\", \"\", \"\", \"1\", \"1\"]",
                                    "{\"Sequence number\": 4242, \"Fwd thread id\": 0}");
    tl_perf_event bwd = tl_pt_event("ConvBiasReLU_Backward", "[]", "[]", NULL, "[]", "{\"Sequence number\": 4242}");
    tl_perf_result r;

    CHECK(tl_pc_ConvBias_Backward.seq_forward && tl_pc_ConvBiasReLU_Backward.seq_forward);
    CHECK(!tl_pc_ConvBias_.seq_forward && !tl_pc_aten_conv_bwd.seq_forward);
    CHECK_I64(tl_pt_run(&tl_pc_ConvBiasReLU_Backward, &bwd, 0, &r), TL_PERF_ERROR); /* no forward op */
    tl_perf_result_free(&r);

    CHECK_I64(tl_pt_run(&tl_pc_ConvBiasReLU_, &fwd, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 1.851293696);
    CHECK_DBL(r.bytes / 1048576, 6.1954345703125);
    CHECK_STR(tl_pt_param_repr(&r, "bias"), "True");
    CHECK_STR(tl_pt_param_repr(&r, "stride"), "(1, 1)");
    CHECK_STR(tl_pt_param_repr(&r, "padding"), "(1, 1)");
    CHECK_STR(tl_pt_param_repr(&r, "groups"), "1");
    tl_perf_result_free(&r);

    bwd.seq_forward = &fwd;
    CHECK_I64(tl_pt_run(&tl_pc_ConvBiasReLU_Backward, &bwd, 0, &r), TL_PERF_OK);
    CHECK_DBL(r.flops / 1e9, 3.70098176);
    CHECK_DBL(r.bytes / 1048576, 15.4532470703125);
    CHECK_STR(tl_pt_param_repr(&r, "input_shape"), "(8, 64, 56, 56)");
    CHECK_STR(r.precision, "fp16");
    tl_perf_result_free(&r);
    CHECK_I64(tl_pt_run(&tl_pc_ConvBiasReLU_Backward, &bwd, 1, &r), TL_PERF_OK); /* the same work */
    CHECK_DBL(r.flops / 1e9, 3.70098176);
    tl_perf_result_free(&r);

    /* ConvBias_ with empty stride/padding texts: defaults 1 and 0 */
    tl_perf_event plain = tl_pt_event("ConvBias_", dims, types, NULL, "[\"\", \"\", \"\", \"\", \"\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_ConvBias_, &plain, 0, &r), TL_PERF_OK);
    CHECK_STR(tl_pt_param_repr(&r, "stride"), "(1, 1)");
    CHECK_STR(tl_pt_param_repr(&r, "padding"), "(0, 0)");
    tl_perf_result_free(&r);

    /* a forward whose shapes do not parse fails the backward too */
    tl_perf_event broken = tl_pt_event("ConvBias_", "[[8, 64], [64, 64]]", types, NULL, "[]", NULL);
    tl_perf_event other = tl_pt_event("ConvBias_Backward", "[]", "[]", NULL, "[]", "{\"Sequence number\": 7}");
    other.seq_forward = &broken;
    CHECK_I64(tl_pt_run(&tl_pc_ConvBias_Backward, &other, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
}

static void test_errors_and_unknown_dtype(void)
{
    const char *concrete = "[\"\", \"\", \"\", \"[1, 1]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]";
    tl_perf_result r;
    /* input and weight dtypes differ: ValueError */
    tl_perf_event ev = tl_pt_event("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]", "[\"float\", \"c10::Half\"]",
                                   NULL, concrete, NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
    /* a 2-d input has no convNd */
    ev = tl_pt_event("aten::convolution", "[[3, 8], [4, 3]]", "[\"float\", \"float\"]", NULL, concrete, NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
    /* groups is not an int */
    ev = tl_pt_event("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]", "[\"float\", \"float\"]", NULL,
                     "[\"\", \"\", \"\", \"[1, 1]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"x\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
    /* stride 0 */
    ev = tl_pt_event("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]", "[\"float\", \"float\"]", NULL,
                     "[\"\", \"\", \"\", \"[0, 0]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", \"1\"]", NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
    /* no Concrete Inputs at all: transposed cannot be read */
    ev = tl_pt_event("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]", "[\"float\", \"float\"]", NULL, NULL, NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
    /* an element size the table does not know: bytes None, flops still there */
    ev = tl_pt_event("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]",
                     "[\"c10::complex<float>\", \"c10::complex<float>\"]", NULL, concrete, NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_OK);
    CHECK(!r.has_bytes);
    CHECK_DBL(r.flops, 4.0 * 36 * 2 * 27);
    CHECK(r.precision == NULL);
    tl_perf_result_free(&r);
}

/* Python ints do not overflow: huge shapes give float values, never UB. */
static void test_huge_values(void)
{
    tl_perf_event ev = tl_pt_event("aten::convolution",
                                   "[[4611686018427387904, 3000000000, 9000000000, 9000000000], "
                                   "[4611686018427387904, 3000000000, 1, 1]]",
                                   "[\"float\", \"float\"]", NULL,
                                   "[\"\", \"\", \"\", \"[1, 1]\", \"[0, 0]\", \"[1, 1]\", \"False\", \"[0, 0]\", "
                                   "\"1\"]",
                                   NULL);
    tl_perf_result r;
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_OK);
    CHECK(r.flops > 1e50 && isfinite(r.flops));
    CHECK(r.bytes > 1e40 && isfinite(r.bytes));
    tl_perf_result_free(&r);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 1, &r), TL_PERF_OK);
    CHECK(r.flops > 1e50);
    tl_perf_result_free(&r);
    /* an output size beyond int64 */
    ev = tl_pt_event("aten::convolution", "[[1, 1, 9000000000000000000], [1, 1, 1]]", "[\"float\", \"float\"]", NULL,
                     "[\"\", \"\", \"\", \"[9000000000000000000]\", \"[0]\", \"[1]\", \"True\", \"[0]\", \"1\"]",
                     NULL);
    CHECK_I64(tl_pt_run(&tl_pc_aten_conv, &ev, 0, &r), TL_PERF_ERROR);
    tl_perf_result_free(&r);
}

static void test_python_numbers(void)
{
    tl_pn big = tl_pn_int(INT64_MAX), q;
    tl_pn sq = tl_pn_mul(big, big); /* exact in __int128 */
    CHECK(!sq.is_f);
    tl_pn cube = tl_pn_mul(sq, big); /* beyond: a double */
    CHECK(cube.is_f && cube.f > 7.8e56 && cube.f < 7.9e56);
    CHECK(tl_pn_floordiv(tl_pn_int(-7), tl_pn_int(2), &q) && !q.is_f && q.i == -4);
    CHECK(tl_pn_floordiv(tl_pn_float(600.0), tl_pn_int(3), &q) && q.is_f && q.f == 200.0);
    CHECK(tl_pn_floordiv(tl_pn_float(-7.5), tl_pn_int(2), &q) && q.f == -4.0);
    CHECK(!tl_pn_floordiv(tl_pn_int(1), tl_pn_int(0), &q));
    CHECK(tl_pn_eq(tl_pn_int(400), tl_pn_float(400.0)));
    int64_t v;
    CHECK(!tl_pn_int64(sq, &v) && tl_pn_int64(tl_pn_sub(sq, sq), &v) && v == 0);
}

static void test_descriptors(void)
{
    CHECK_STR(tl_pc_aten_conv.name, "aten_conv");
    CHECK_STR(tl_pc_aten_conv.category, "CONV_fwd");
    CHECK_STR(tl_pc_aten_conv.bwd_category, "CONV_bwd");
    CHECK_STR(tl_pc_aten_conv.sheet, "CONV");
    CHECK_STR(tl_pc_aten_conv_bwd.category, "CONV_bwd");
    CHECK_STR(tl_pc_ConvBias_.name, "ConvBias_");
    CHECK_STR(tl_pc_ConvBiasReLU_.category, "CONV_fwd");
    CHECK_STR(tl_pc_ConvBias_Backward.category, "CONV_bwd");
    CHECK_STR(tl_pc_ConvBiasReLU_Backward.name, "ConvBiasReLU_Backward");
}

static void test_literals(void)
{
    int64_t v[8], i;
    size_t n;
    double d;
    int t;
    CHECK(tl_py_int(" 12 ", &i) && i == 12);
    CHECK(tl_py_int("-1_000", &i) && i == -1000);
    CHECK(!tl_py_int("1.0", &i) && !tl_py_int("", &i) && !tl_py_int(NULL, &i) && !tl_py_int("1__0", &i));
    CHECK(tl_py_float("0.", &d) && d == 0.0);
    CHECK(tl_py_float("1e-05", &d) && d == 1e-05);
    CHECK(tl_py_float("-Infinity", &d) && isinf(d) && d < 0);
    CHECK(!tl_py_float("", &d) && !tl_py_float("None", &d) && !tl_py_float("0x10", &d));
    CHECK(tl_py_truth("True", &t) && t == 1);
    CHECK(tl_py_truth("False", &t) && t == 0);
    CHECK(tl_py_truth("None", &t) && t == 0);
    CHECK(tl_py_truth("[768]", &t) && t == 1);
    CHECK(tl_py_truth("[]", &t) && t == 0);
    CHECK(tl_py_truth("(0)", &t) && t == 0);
    CHECK(tl_py_truth("0.5", &t) && t == 1);
    CHECK(tl_py_truth("''", &t) && t == 0);
    CHECK(!tl_py_truth("", &t) && !tl_py_truth("true", &t));
    CHECK(tl_py_int_tuple("[16, 16]", v, 8, &n) && n == 2 && v[0] == 16 && v[1] == 16);
    CHECK(tl_py_int_tuple("(2,)", v, 8, &n) && n == 1 && v[0] == 2);
    CHECK(tl_py_int_tuple("3", v, 8, &n) && n == 1 && v[0] == 3);
    CHECK(tl_py_int_tuple("", v, 8, &n) && n == 0);
    CHECK(tl_py_int_tuple("[]", v, 8, &n) && n == 0);
    CHECK(!tl_py_int_tuple("[1, x]", v, 8, &n) && !tl_py_int_tuple("[1,,2]", v, 8, &n));
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_falconsai_bias_fix, test_timesformer_bias_fix, test_owlv2_reference_row, test_agent_case_rows,
        test_conv1d_and_defaults, test_transposed, test_convolution_backward, test_convolution_backward_no_bias,
        test_convolution_backward_weight_grad_only,
        test_conv_bias_sequence,
        test_errors_and_unknown_dtype, test_huge_values, test_python_numbers, test_descriptors, test_literals
    };
    return TL_PERF_TEST_RUN(tests, tl_pt_arena_new, tl_pt_arena_free);
}
