/* test_model_core_misc.c — the other core perf models (MoE comm, causal
 * conv1d, Mamba SSD, fused RoPE, cross entropy) with hand-computed values,
 * and the shared Concrete Inputs literal / shape helpers. */
#include <stdio.h>
#include <string.h>

#include "perf/model_core_misc.h"
#include "perf/perf_util.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

static void test_classes(void)
{
    static const struct {
        const tl_perf_class *c;
        const char *name, *category, *bwd_category, *sheet;
        int has_bwd;
    } t[] = {
        {&tl_pc_moe_dispatch, "moe_dispatch", "MoE_comm_fwd", "MoE_comm_bwd", "MoE_comm", 1},
        {&tl_pc_moe_combine, "moe_combine", "MoE_comm_fwd", "MoE_comm_bwd", "MoE_comm", 1},
        {&tl_pc_causal_conv1d_fwd, "causal_conv1d_fwd", "SSM_fwd", NULL, "SSM", 0},
        {&tl_pc_mamba_ssd_fwd, "mamba_ssd_fwd", "SSM_fwd", "SSM_bwd", "SSM", 1},
        {&tl_pc_fused_rope_fwd, "fused_rope_fwd", "RoPE_fwd", NULL, "RoPE", 0},
        {&tl_pc_cross_entropy_fwd, "cross_entropy_fwd", "CrossEntropy_fwd", NULL, "CrossEntropy", 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        CHECK_STR(t[i].c->name, t[i].name);
        CHECK_STR(t[i].c->category, t[i].category);
        if (t[i].bwd_category) CHECK_STR(t[i].c->bwd_category, t[i].bwd_category);
        else CHECK(t[i].c->bwd_category == NULL);
        CHECK_STR(t[i].c->sheet, t[i].sheet);
        CHECK_I64(t[i].c->has_bwd, t[i].has_bwd);
    }
}

/* Python literal of s rendered back with str(); "<none>" when it does not
 * parse. */
static const char *lit(tl_pt_fx *f, const char *s)
{
    const tl_pv *v = tl_py_literal(&f->r, s);
    return v ? tl_pt_repr(v) : "<none>";
}

static void test_literals(void)
{
    tl_pt_fx f;
    tl_pt_run_lists(&f, &tl_pc_fused_rope_fwd, 0, "x", "[[1]]", "[\"float\"]", NULL, NULL);
    CHECK_STR(lit(&f, "[16, 16]"), "(16, 16)");
    CHECK_STR(lit(&f, "[-1]"), "(-1,)");
    CHECK_STR(lit(&f, " ( 2 , ) "), "(2,)");
    CHECK_STR(lit(&f, "()"), "()");
    CHECK_STR(lit(&f, "(3)"), "3");
    CHECK_STR(lit(&f, "[[1, 2], (3,), []]"), "((1, 2), (3,), ())");
    CHECK_STR(lit(&f, "True"), "True");
    CHECK_STR(lit(&f, "False"), "False");
    CHECK_STR(lit(&f, "None"), "None");
    CHECK_STR(lit(&f, "1e-05"), "1e-05");
    CHECK_STR(lit(&f, "9.9999999999999998e-13"), "1e-12");
    CHECK_STR(lit(&f, "0."), "0.0");
    CHECK_STR(lit(&f, "2.0"), "2.0");
    CHECK_STR(lit(&f, "-128"), "-128");
    CHECK_STR(lit(&f, "+7"), "7");
    CHECK_STR(lit(&f, "007"), "<none>"); /* no leading zeros in Python ints */
    CHECK_STR(lit(&f, "00"), "0");
    CHECK_STR(lit(&f, "1_000"), "1000");
    CHECK_STR(lit(&f, "1, 2"), "(1, 2)"); /* a bare tuple */
    CHECK_STR(lit(&f, "'a' \"b\""), "'ab'");
    CHECK_STR(lit(&f, "123456789012345678901234"), "123456789012345678901234");
    CHECK_STR(lit(&f, "'a\"b'"), "'a\"b'");
    CHECK_STR(lit(&f, "\"it's\""), "\"it's\"");
    CHECK_STR(lit(&f, "['x', None, 1.5]"), "('x', None, 1.5)");
    CHECK_STR(lit(&f, ""), "<none>");
    CHECK_STR(lit(&f, "   "), "<none>");
    CHECK_STR(lit(&f, "[1, "), "<none>");
    CHECK_STR(lit(&f, "[1,,2]"), "<none>");
    CHECK_STR(lit(&f, "[,]"), "<none>");
    CHECK_STR(lit(&f, "1 2"), "<none>");
    CHECK_STR(lit(&f, "abc"), "<none>");
    CHECK_STR(lit(&f, "Truex"), "<none>");
    CHECK_STR(lit(&f, "inf"), "<none>");
    CHECK_STR(lit(&f, "0x10"), "<none>");
    CHECK_STR(lit(&f, "1e"), "<none>");
    CHECK_STR(lit(&f, "'open"), "<none>");
    CHECK_STR(lit(&f, "{1: 2}"), "<none>");
    char deep[401]; /* balanced but deeper than the reader's limit */
    memset(deep, '[', 200);
    memset(deep + 200, ']', 200);
    deep[400] = 0;
    CHECK_STR(lit(&f, deep), "<none>");
    CHECK_STR(lit(&f, deep + 190), "<none>"); /* unbalanced */
    CHECK_STR(lit(&f, "[[[[[[[[1]]]]]]]]"), "((((((((1,),),),),),),),)");
    CHECK(tl_py_literal(&f.r, NULL) == NULL);

    CHECK_I64(tl_py_literal_truth(&f.r, "False"), 0);
    CHECK_I64(tl_py_literal_truth(&f.r, "True"), 1);
    CHECK_I64(tl_py_literal_truth(&f.r, ""), 0);
    CHECK_I64(tl_py_literal_truth(&f.r, "0."), 0);
    CHECK_I64(tl_py_literal_truth(&f.r, "1"), 1);
    CHECK_I64(tl_py_literal_truth(&f.r, "x"), 1);
    CHECK_I64(tl_py_literal_truth(&f.r, NULL), 0);
    int64_t v = 0;
    CHECK(tl_py_literal_int(&f.r, "32", &v) && v == 32);
    CHECK(!tl_py_literal_int(&f.r, "True", &v));
    CHECK(!tl_py_literal_int(&f.r, "3.0", &v));
    int m[4];
    size_t n = 0;
    CHECK(tl_py_literal_bools(&f.r, "[True, False, 1]", m, 4, &n) && n == 3 && m[0] && !m[1] && m[2]);
    CHECK(!tl_py_literal_bools(&f.r, "True", m, 4, &n));
    tl_pt_done(&f);
}

static void test_shape_helpers(void)
{
    tl_pt_fx f;
    tl_pt_run_lists(&f, &tl_pc_fused_rope_fwd, 0, "x", "[[2, 3], [], [1, \"a\"], [4611686018427387904, 4]]",
                    "[\"float\"]", NULL, NULL);
    int64_t n = 0;
    CHECK(tl_shape_numel(tl_pe_dim(&f.ev, 0), &n) && n == 6);
    CHECK(tl_shape_numel(tl_pe_dim(&f.ev, 1), &n) && n == 1);
    CHECK(!tl_shape_numel(tl_pe_dim(&f.ev, 2), &n));
    CHECK(!tl_shape_numel(tl_pe_dim(&f.ev, 3), &n)); /* leaves int64 */
    CHECK(!tl_shape_numel(NULL, &n));
    CHECK(tl_shape_dim(tl_pe_dim(&f.ev, 0), -1, &n) && n == 3);
    CHECK(!tl_shape_dim(tl_pe_dim(&f.ev, 0), 2, &n));
    CHECK(!tl_shape_dim(tl_pe_dim(&f.ev, 0), -3, &n));
    CHECK(tl_pe_arg(&f.ev, "Input type") == f.ev.types);
    CHECK(tl_pe_arg(&f.ev, "Output type") == NULL);
    tl_pv_arena *a = tl_pv_arena_new();
    const tl_pv *d = tl_pv_parse(a, "{\"k\": 1, \"j\": 2, \"k\": 3}"); /* json.loads keeps the last k */
    int64_t v = 0;
    CHECK(tl_pv_int(tl_pv_dict_get(d, "k"), &v) && v == 3);
    CHECK(tl_pv_int(tl_pv_dict_get(d, "j"), &v) && v == 2);
    CHECK(tl_pv_dict_get(d, "x") == NULL && tl_pv_dict_get(tl_pv_parse(a, "[1]"), "k") == NULL);
    tl_pv_arena_free(a);
    tl_pt_done(&f);
}

static void test_moe_comm(void)
{
    tl_pt_fx f;
    for (int bwd = 0; bwd < 2; bwd++) {
        CHECK_I64(tl_pt_run_lists(&f, &tl_pc_moe_dispatch, bwd, "MoEDispatch", "[[128, 1024], [128, 2]]",
                                  "[\"c10::BFloat16\", \"long int\"]", NULL, NULL),
                  TL_PERF_OK);
        CHECK_DBL(f.r.flops, 0);
        CHECK_DBL(f.r.bytes, 128 * 1024 * 2);
        CHECK(f.r.maf == NULL);
        CHECK_STR(f.r.precision, "bf16");
        CHECK_STR(tl_pt_keys(&f.r), "num_tokens,hidden,dtype");
        CHECK_STR(tl_pt_param(&f.r, "num_tokens"), "128");
        CHECK_STR(tl_pt_param(&f.r, "dtype"), "c10::BFloat16");
        tl_pt_done(&f);
    }
    tl_pt_run_lists(&f, &tl_pc_moe_combine, 0, "MoECombine", "[[64, 512]]", "[\"bool\"]", NULL, NULL);
    CHECK(!f.r.has_bytes);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_moe_combine, 0, "MoECombine", "[[64]]", "[\"float\"]", NULL, NULL),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_causal_conv1d(void)
{
    tl_pt_fx f;
    /* x (2, 64, 100), w (64, 4), bias (64): 2·b·c·L·k; (2bcL + ck + c)·2 */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_causal_conv1d_fwd, 0, "DaoAILab::_causal_conv1d_fwd_cpp",
                              "[[2, 64, 100], [64, 4], [64], [], []]",
                              "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"\", \"\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 2 * 2 * 64 * 100 * 4);
    CHECK_DBL(f.r.bytes, (2 * 2 * 64 * 100 + 64 * 4 + 64) * 2);
    CHECK_STR(tl_pt_param(&f.r, "has_bias"), "True");
    CHECK_STR(f.r.maf, "matrix");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
    /* no bias; an unknown dtype counts 2 bytes */
    tl_pt_run_lists(&f, &tl_pc_causal_conv1d_fwd, 0, "DaoAILab::_causal_conv1d_fwd_cpp", "[[2, 64, 100], [64, 4]]",
                    "[\"BFloat16\", \"BFloat16\"]", NULL, NULL);
    CHECK_DBL(f.r.bytes, (2 * 2 * 64 * 100 + 64 * 4) * 2);
    CHECK(f.r.precision == NULL);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_causal_conv1d_fwd, 1, "DaoAILab::_causal_conv1d_fwd_cpp",
                              "[[2, 64, 100], [64, 4]]", "[\"float\", \"float\"]", NULL, NULL),
              TL_PERF_NOT_IMPLEMENTED);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_causal_conv1d_fwd, 0, "DaoAILab::_causal_conv1d_fwd_cpp", "[[2, 64], [64, 4]]",
                              "[\"float\", \"float\"]", NULL, NULL),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

/* B 2, T 128, H 8 heads of P 64, G 1, d_state 16: conv_dim =
 * 2·512 + 8 + 2·16 = 1064, conv channels 544, d_conv 4. */
#define MAMBA_DIMS "[[2, 128, 1064], [544, 4], [544], [8], [8], [8]]"
#define MAMBA_TYPES "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"float\", \"float\", \"\"]"

static void test_mamba_ssd(void)
{
    tl_pt_fx f;
    const char *concrete = "[\"\", \"\", \"\", \"\", \"\", \"\", \"256\", \"\", \"\", \"\", \"\", \"\", \"\", \"\", "
                           "\"\", \"64\", \"1\"]";
    for (int bwd = 0; bwd < 2; bwd++) {
        CHECK_I64(tl_pt_run_lists(&f, &tl_pc_mamba_ssd_fwd, bwd, "MambaSplitConv1dScanCombinedFn", MAMBA_DIMS,
                                  MAMBA_TYPES, NULL, concrete),
                  TL_PERF_OK);
        CHECK_DBL(f.r.flops, 78708736);
        CHECK_DBL(f.r.bytes, 812432);
        CHECK_STR(tl_pt_param(&f.r, "d_state"), "16");
        CHECK_STR(tl_pt_param(&f.r, "chunk_size"), "256");
        CHECK_STR(f.r.maf, "matrix");
        CHECK_STR(f.r.precision, "bf16");
        tl_pt_done(&f);
    }
    /* chunk size, headdim and ngroups absent: 128, 64, 1 */
    tl_pt_run_lists(&f, &tl_pc_mamba_ssd_fwd, 0, "MambaSplitConv1dScanCombinedFn", MAMBA_DIMS, MAMBA_TYPES, NULL, "[]");
    CHECK_DBL(f.r.flops, 44105728);
    CHECK_STR(tl_pt_param(&f.r, "chunk_size"), "128");
    tl_pt_done(&f);
    /* conv_dim not 2·d_inner + H + 2·G·N: ValueError */
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_mamba_ssd_fwd, 0, "MambaSplitConv1dScanCombinedFn",
                              "[[2, 128, 1065], [544, 4], [544], [8], [8], [8]]", MAMBA_TYPES, NULL, "[]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_mamba_ssd_fwd, 0, "MambaSplitConv1dScanCombinedFn",
                              "[[2, 128, 1032], [544, 4], [544], [8], [8], [8]]", MAMBA_TYPES, NULL, "[]"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_fused_rope(void)
{
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_fused_rope_fwd, 0, "FusedRoPEFunc", "[[128, 2, 16, 64], [128, 1, 1, 64]]",
                              "[\"c10::BFloat16\", \"float\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 3 * 262144);
    CHECK_DBL(f.r.bytes, 2 * 262144 * 2);
    CHECK_STR(tl_pt_param(&f.r, "input_shape"), "(128, 2, 16, 64)");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_fused_rope_fwd, 0, "FusedRoPEFunc", "[]", "[]", NULL, NULL), TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_cross_entropy(void)
{
    tl_pt_fx f;
    CHECK_I64(tl_pt_run_lists(&f, &tl_pc_cross_entropy_fwd, 0, "CrossEntropyFunction", "[[4096, 32000], [4096]]",
                              "[\"c10::BFloat16\", \"long int\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 5.0 * 4096 * 32000);
    CHECK_DBL(f.r.bytes, 4096.0 * 32000 * 2 + 4096 * 8 + 4096 * 4);
    CHECK_STR(tl_pt_param(&f.r, "vocab_size"), "32000");
    CHECK_STR(f.r.maf, "vector");
    tl_pt_done(&f);
    CHECK_I64(
        tl_pt_run_lists(&f, &tl_pc_cross_entropy_fwd, 0, "CrossEntropyFunction", "[[]]", "[\"float\"]", NULL, NULL),
        TL_PERF_ERROR);
    tl_pt_done(&f);
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_classes, test_literals, test_shape_helpers, test_moe_comm, test_causal_conv1d, test_mamba_ssd,
        test_fused_rope, test_cross_entropy
    };
    return TL_PERF_TEST_RUN(tests, NULL, NULL);
}
