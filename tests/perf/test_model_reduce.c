/* test_model_reduce.c — the aten reduce perf model against the reference
 * CSV rows (h100 Qwen/timesformer/owlv2 Reduce_fwd.csv, sglang decode) and
 * the [FIX] dim/keepdim parsing computed by hand. */
#include <stdio.h>
#include <string.h>

#include "perf/model_reduce.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

static void test_class(void)
{
    const tl_perf_class *c = &tl_pc_aten_reduce;
    CHECK_STR(c->name, "aten_reduce");
    CHECK_STR(c->category, "reduce");
    CHECK(c->bwd_category == NULL);
    CHECK_STR(c->sheet, "Reduce");
    CHECK(c->has_bwd);
}

/* E6: Qwen aten::mean over dim [-1] with keepdim. Reference: 1 output
 * element (34.937503814697266 MB); [FIX] [16, 559, 1] -> 8944. */
static void test_mean_keepdim(void)
{
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::mean", "[[16, 559, 1024], [], [], []]",
                              "[\"float\", \"ScalarList\", \"Scalar\", \"\"]", "[[572416, 1024, 1], [], [], []]",
                              "[\"\", \"[-1]\", \"True\", \"\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f.r, 0.009158656);
    CHECK_MB(&f.r, 34.97161865234375);
    CHECK_DBL((f.r.flops / 1e9 * 1e9) / f.r.bytes, 0.2497560975609756);
    CHECK_STR(tl_pt_keys(&f.r), "num_input_elems,num_output_elems,dtype_in_out,reduce_type");
    CHECK_STR(tl_pt_param(&f.r, "num_input_elems"), "9158656");
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "8944");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "('float', None)");
    CHECK_STR(tl_pt_param(&f.r, "reduce_type"), "mean");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "fp32");
    tl_pt_done(&f);
    /* bwd metrics: flops_bwd = in, bytes_bwd = out·bpe + in·bpe */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_reduce, 1, "aten::mean", "[[16, 559, 1024], [], [], []]",
                              "[\"float\", \"ScalarList\", \"Scalar\", \"\"]", "[[572416, 1024, 1], [], [], []]",
                              "[\"\", \"[-1]\", \"True\", \"\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f.r, 0.009158656);
    CHECK_MB(&f.r, 34.97161865234375);
    tl_pt_done(&f);
    /* timesformer mean over dim [1] of [1, 8, 768]: 768 outputs */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::mean", "[[1, 8, 768], [], [], []]",
                    "[\"c10::BFloat16\", \"ScalarList\", \"Scalar\", \"\"]", "[[19273728, 2409216, 1], [], [], []]",
                    "[\"\", \"[1]\", \"True\", \"\"]");
    CHECK_GFLOPS(&f.r, 6.144e-06);
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "768");
    CHECK_DBL(f.r.bytes, 6144 * 2 + 768 * 2);
    tl_pt_done(&f);
}

/* owlv2 rows: linalg_norm (ord, dim, keepdim, dtype) and max.dim. */
static void test_norm_and_max(void)
{
    tl_pt_fx f;
    /* [1, 768] over [-1] keeps 1 element: the reference row is unchanged */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::linalg_norm", "[[1, 768], [], [], [], []]",
                    "[\"c10::BFloat16\", \"Scalar\", \"ScalarList\", \"Scalar\", \"\"]", "[[768, 1], [], [], [], []]",
                    "[\"\", \"2\", \"[-1]\", \"True\", \"\"]");
    CHECK_GFLOPS(&f.r, 7.68e-07);
    CHECK_MB(&f.r, 0.0014667510986328125);
    CHECK_STR(tl_pt_param(&f.r, "reduce_type"), "norm");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "('c10::BFloat16', None)");
    tl_pt_done(&f);
    /* [1, 5184, 768] over [-1]: [FIX] 5184 outputs */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::linalg_norm", "[[1, 5184, 768], [], [], [], []]",
                    "[\"c10::BFloat16\", \"\", \"ScalarList\", \"Scalar\", \"\"]",
                    "[[3981312, 768, 1], [], [], [], []]", "[\"\", \"\", \"[-1]\", \"True\", \"\"]");
    CHECK_GFLOPS(&f.r, 0.003981312);
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "5184");
    CHECK_MB(&f.r, 7.6036376953125);
    tl_pt_done(&f);
    /* max.dim(self, -1, False) of [1, 5184, 1]: an int dim */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::max", "[[1, 5184, 1], [], []]",
                    "[\"float\", \"Scalar\", \"Scalar\"]", "[[5184, 1, 1], [], []]", "[\"\", \"-1\", \"False\"]");
    CHECK_GFLOPS(&f.r, 5.184e-06);
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "5184");
    CHECK_STR(tl_pt_param(&f.r, "reduce_type"), "max");
    CHECK_MB(&f.r, 0.03955078125);
    tl_pt_done(&f);
    /* max.other(int [1], int [1]): elementwise, 1 output (reference row) */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::max", "[[1], [1]]", "[\"int\", \"int\"]", "[[2], [2]]",
                    "[\"\", \"\"]");
    CHECK_GFLOPS(&f.r, 1e-09);
    CHECK_MB(&f.r, 7.62939453125e-06);
    CHECK(f.r.precision == NULL);
    tl_pt_done(&f);
    /* max.other with a real tensor: output elements = input elements */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::max", "[[4, 8], [4, 8]]", "[\"float\", \"float\"]",
                    "[[8, 1], [8, 1]]", "[\"\", \"\"]");
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "32");
    tl_pt_done(&f);
}

/* sglang decode rows: cumsum keeps every element; a bare max reduces all. */
static void test_cumsum_and_full(void)
{
    tl_pt_fx f;
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::cumsum", "[[32], [], []]", "[\"int\", \"Scalar\", \"\"]",
                    "[[1], [], []]", "[\"\", \"0\", \"\"]");
    CHECK_GFLOPS(&f.r, 3.2e-08);
    CHECK_MB(&f.r, 0.000244140625);
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "32");
    CHECK_STR(tl_pt_param(&f.r, "reduce_type"), "sum");
    tl_pt_done(&f);
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::max", "[[32]]", "[\"int\"]", "[[1]]", "[\"\"]");
    CHECK_MB(&f.r, 0.000125885009765625);
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "1");
    tl_pt_done(&f);
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::cumprod", "[[4, 5], [], []]", "[\"float\", \"Scalar\", \"\"]",
                    "[[5, 1], [], []]", "[\"\", \"1\", \"\"]");
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "20");
    tl_pt_done(&f);
}

/* [FIX] dim/keepdim walk details. */
static void test_dim_walk(void)
{
    tl_pt_fx f;
    /* std(self, dim, unbiased, keepdim): the unbiased bool is not the dim */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::std", "[[4, 6], [], [], []]",
                    "[\"float\", \"\", \"Scalar\", \"Scalar\"]", "[[6, 1], [], [], []]",
                    "[\"\", \"[1]\", \"True\", \"False\"]");
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "4");
    CHECK_STR(tl_pt_param(&f.r, "reduce_type"), "sum");
    tl_pt_done(&f);
    /* amax's default dim [] means all dims */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::amax", "[[4, 6], [], []]", "[\"float\", \"\", \"Scalar\"]",
                    "[[6, 1], [], []]", "[\"\", \"[]\", \"False\"]");
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "1");
    CHECK_STR(tl_pt_param(&f.r, "reduce_type"), "max");
    tl_pt_done(&f);
    /* a dim outside [-ndim, ndim): full reduction */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::amin", "[[4, 6], [], []]", "[\"float\", \"\", \"Scalar\"]",
                    "[[6, 1], [], []]", "[\"\", \"[2]\", \"False\"]");
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "1");
    CHECK_STR(tl_pt_param(&f.r, "reduce_type"), "min");
    tl_pt_done(&f);
    /* several dims, negative ones normalised, tuple literal */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[[4, 6, 8], [], [], []]",
                    "[\"float\", \"\", \"Scalar\", \"\"]", "[[48, 8, 1], [], [], []]",
                    "[\"\", \"(-1, 0)\", \"True\", \"\"]");
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "6");
    CHECK_DBL(f.r.bytes, 192 * 4 + 6 * 4);
    tl_pt_done(&f);
    /* no bool anywhere: no dim, full reduction */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::logsumexp", "[[4, 6], []]", "[\"float\", \"\"]", "[[6, 1], []]",
                    "[\"\", \"[1]\"]");
    CHECK_STR(tl_pt_param(&f.r, "num_output_elems"), "1");
    tl_pt_done(&f);
}

static void test_dtypes_and_errors(void)
{
    tl_pt_fx f;
    /* an "Output type" arg sets the output dtype */
    tl_pt_run_lists_x(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[[4, 6], [], []]", "[\"float\", \"\", \"Scalar\"]",
                      "[[6, 1], [], []]", "[\"\", \"[1]\", \"False\"]", "\"Output type\": [\"c10::BFloat16\"]");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "('float', 'c10::BFloat16')");
    CHECK_DBL(f.r.bytes, 24 * 4 + 4 * 2);
    tl_pt_done(&f);
    /* bool input: bytes None */
    tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[[4, 6]]", "[\"bool\"]", "[[6, 1]]", "[\"\"]");
    CHECK(!f.r.has_bytes);
    CHECK_DBL(f.r.flops, 24);
    tl_pt_done(&f);
    /* no Input Dims: everything 0, dtypes None */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[]", "[]", "[]", "[]"), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 0);
    CHECK(!f.r.has_bytes);
    CHECK_STR(tl_pt_param(&f.r, "num_input_elems"), "0");
    CHECK_STR(tl_pt_param(&f.r, "dtype_in_out"), "(None, None)");
    tl_pt_done(&f);
    /* Input Dims[0] is not a shape */
    CHECK_I64(
        tl_pt_run_lists(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[[[2], [3]]]", "[\"TensorList\"]", "[[]]", "[\"\"]"),
        TL_PERF_ERROR);
    tl_pt_done(&f);
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_class, test_mean_keepdim, test_norm_and_max, test_cumsum_and_full, test_dim_walk,
        test_dtypes_and_errors
    };
    return TL_PERF_TEST_RUN(tests, NULL, NULL);
}
