/* test_model_ext.c — extension perf models (perf-model spec §4.9):
 * hand-checked FLOPs / bytes / params, reference CSV rows of
 * ../shared/data/inference (sglang_decode, vllm_decode_full), error paths. */
#include <stdio.h>
#include <string.h>

#include "perf/model_ext.h"
#include "perf/perf_util.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

/* Runs class c (fwd) on an event named after it, built from its args JSON. */
static int run(tl_pt_fx *f, const tl_perf_class *c, const char *args_json)
{
    return tl_pt_run_args(f, c, 0, c->name, args_json, NULL, 0);
}

#define CHECK_CLASS(c, nm, cat, sh)                                                                \
    do {                                                                                           \
        CHECK_STR((c).name, nm);                                                                   \
        CHECK_STR((c).category, cat);                                                              \
        CHECK_STR((c).sheet, sh);                                                                  \
        CHECK((c).bwd_category == NULL);                                                           \
        CHECK((c).has_bwd == 0);                                                                   \
    } while (0)

/* ---- activations ---------------------------------------- */

/* sglang_decode UnaryElementwise.csv: sgl_kernel::silu_and_mul (32, 12288),
 * GFLOPS 0.00196608, Data Moved 2.25 MB. */
static void test_silu_and_mul_reference_row(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_sgl_kernel_silu_and_mul, "sgl_kernel_silu_and_mul", "elementwise", "UnaryElementwise");
    int st = run(&f, &tl_pc_sgl_kernel_silu_and_mul,
                 "{\"Input Dims\": [[32, 12288], [32, 24576]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"],"
                 " \"Input Strides\": [[12288, 1], [24576, 1]], \"Concrete Inputs\": [\"\", \"\"]}");
    CHECK_I64(st, TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 0.00196608);
    CHECK(f.r.has_bytes);
    CHECK_DBL(f.r.bytes / 1048576, 2.25);
    CHECK_STR(tl_pt_keys(&f.r), "op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(tl_pt_param_repr(&f.r, "op_shape"), "(32, 12288)");
    CHECK_STR(tl_pt_param_repr(&f.r, "dtype_in_out"), "('c10::BFloat16', 'c10::BFloat16')");
    CHECK_STR(tl_pt_param_repr(&f.r, "stride_input"), "(24576, 1)");
    CHECK_STR(tl_pt_param_repr(&f.r, "stride_output"), "(12288, 1)");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
}

/* gelu 8n, gelu_tanh 10n, aiter silu 5n; a bool output has no size: bytes None. */
static void test_activation_variants(void)
{
    static const char *args = "{\"Input Dims\": [[4, 100], [4, 200]], \"Input type\": [\"float\", \"c10::Half\"]}";
    const tl_perf_class *cls[] = {&tl_pc_aiter_silu_and_mul, &tl_pc_aiter_gelu_and_mul, &tl_pc_aiter_gelu_tanh_and_mul};
    const double per[] = {5, 8, 10};
    for (int i = 0; i < 3; i++) {
        tl_pt_fx f;
        CHECK_I64(run(&f, cls[i], args), TL_PERF_OK);
        CHECK_DBL(f.r.flops, per[i] * 400);
        CHECK_DBL(f.r.bytes, 2 * 400 * 2 + 400 * 4); /* in fp16 twice as wide, out fp32 */
        CHECK_STR(f.r.precision, "fp16");
        CHECK_STR(tl_pt_param_repr(&f.r, "stride_input"), "None");
        tl_pt_done(&f);
    }
    CHECK_CLASS(tl_pc_aiter_gelu_tanh_and_mul, "aiter_gelu_tanh_and_mul", "elementwise", "UnaryElementwise");
    tl_pt_fx f;
    CHECK_I64(run(&f, &tl_pc_aiter_silu_and_mul,
                  "{\"Input Dims\": [[4, 100], [4, 200]], \"Input type\": [\"bool\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK(!f.r.has_bytes);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_silu_and_mul, "{\"Input Dims\": [[4, 100]], \"Input type\": [\"float\"]}"),
              TL_PERF_ERROR); /* no input slot */
    tl_pt_done(&f);
}

/* ---- GroupQuant ---------------------------------------------------------- */

static void test_per_group_quant(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_per_group_quant, "per_group_quant", "GroupQuant", "BinaryElementwise");
    CHECK_I64(run(&f, &tl_pc_per_group_quant,
                  "{\"Input Dims\": [[64, 512], [64, 512], [64, 4], []],"
                  " \"Input type\": [\"c10::Float8_e4m3fnuz\", \"c10::BFloat16\", \"float\", \"Scalar\"],"
                  " \"Input Strides\": [[512, 1], [512, 1], [4, 1], []]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 32768 * 2.59375);
    CHECK_DBL(f.r.bytes, 99328); /* 32768*1 + 32768*2 + 256*4 */
    CHECK_STR(tl_pt_keys(&f.r), "shape_in1,shape_in2,dtype_in1_in2_out,stride_input1,stride_input2,stride_output");
    CHECK_STR(tl_pt_param_repr(&f.r, "dtype_in1_in2_out"), "('c10::BFloat16', 'float', 'c10::Float8_e4m3fnuz')");
    CHECK_STR(tl_pt_param_repr(&f.r, "shape_in2"), "(64, 4)");
    CHECK_STR(f.r.precision, "bf16");
    CHECK_STR(f.r.maf, "vector");
    tl_pt_done(&f);
}

static void test_per_token_group_quant_fp8(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_vllm_triton_per_token_group_quant_fp8, "vllm_triton_per_token_group_quant_fp8", "GroupQuant",
                "BinaryElementwise");
    CHECK_I64(run(&f, &tl_pc_vllm_triton_per_token_group_quant_fp8,
                  "{\"Input Dims\": [[16, 1000], []], \"Input type\": [\"c10::BFloat16\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"128\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 96000);
    CHECK_DBL(f.r.bytes, 48512); /* 16000*2 + 16000 + 16*8*4 */
    CHECK_STR(tl_pt_param_repr(&f.r, "num_groups"), "8");
    tl_pt_done(&f);
    /* "None" group size: default 128; leading dims fold into M = 6 */
    CHECK_I64(run(&f, &tl_pc_vllm_triton_per_token_group_quant_fp8,
                  "{\"Input Dims\": [[2, 3, 256], []], \"Input type\": [\"c10::BFloat16\", \"\"],"
                  " \"Concrete Inputs\": [\"\", \"None\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 9216);
    CHECK_DBL(f.r.bytes, 4656);
    CHECK_STR(tl_pt_param_repr(&f.r, "group_size"), "128");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_vllm_triton_per_token_group_quant_fp8,
                  "{\"Input Dims\": [[16, 1000], []], \"Input type\": [\"c10::BFloat16\", \"\"],"
                  " \"Concrete Inputs\": [\"\", \"1.5\"]}"),
              TL_PERF_ERROR); /* int('1.5') */
    tl_pt_done(&f);
}

static void test_mxfp4_quant_family(void)
{
    struct { const tl_perf_class *c; const char *name; const char *args; } t[] = {
        {&tl_pc_fused_flatten_mxfp4_quant, "fused_flatten_mxfp4_quant",
         "{\"Input Dims\": [[4, 1000]], \"Input type\": [\"c10::BFloat16\"]}"},
        {&tl_pc_sglang_quant_dynamic_mxfp4_quant, "sglang_quant_dynamic_mxfp4_quant",
         "{\"Input Dims\": [[4, 1000]], \"Input type\": [\"c10::BFloat16\"]}"},
        {&tl_pc_fused_dynamic_mx_quant_moe_sort_hip, "fused_dynamic_mx_quant_moe_sort_hip",
         "{\"Input Dims\": [[9], [9], [4, 1000]], \"Input type\": [\"int\", \"int\", \"c10::BFloat16\"]}"},
        {&tl_pc_aiter_fused_dynamic_mxfp4_quant_moe_sort_hip, "aiter_fused_dynamic_mxfp4_quant_moe_sort_hip",
         "{\"Input Dims\": [[9], [9], [4, 1000]], \"Input type\": [\"int\", \"int\", \"c10::BFloat16\"]}"},
        {&tl_pc_aiter_dynamic_per_group_scaled_quant_fp4, "aiter_dynamic_per_group_scaled_quant_fp4",
         "{\"Input Dims\": [[4, 500], [4, 1000]], \"Input type\": [\"c10::Float4_e2m1fn_x2\", \"c10::BFloat16\"]}"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        tl_pt_fx f;
        CHECK_CLASS(*t[i].c, t[i].name, "GroupQuant", "GroupQuant");
        CHECK_I64(run(&f, t[i].c, t[i].args), TL_PERF_OK);
        CHECK_DBL(f.r.flops, 8000);
        CHECK_DBL(f.r.bytes, 10125); /* 4000*2 + 4000*0.5 + floor(4000/32) */
        CHECK_STR(f.r.precision, "bf16");
        CHECK_STR(tl_pt_param_repr(&f.r, "num_elements"), "4000");
        tl_pt_done(&f);
    }
}

/* ---- RoPE ------------------------------------------------------------------ */

/* sglang_decode RoPE_fwd.csv: num_elements 163840, GFLOPS 0.00049152, 0.625 MB. */
static void test_rotary_embedding_reference_row(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_sgl_kernel_rotary_embedding, "sgl_kernel_rotary_embedding", "RoPE_fwd", "RoPE");
    CHECK_I64(run(&f, &tl_pc_sgl_kernel_rotary_embedding,
                  "{\"Input Dims\": [[32], [32, 4096], [32, 1024], [], [41216, 128], []],"
                  " \"Input type\": [\"long int\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"128\", \"\", \"True\"]}"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_keys(&f.r), "num_elements");
    CHECK_STR(tl_pt_param_repr(&f.r, "num_elements"), "163840");
    CHECK_DBL(f.r.flops / 1e9, 0.00049152);
    CHECK_DBL(f.r.bytes / 1048576, 0.625);
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
    /* head size from q[-1] when C[3] is empty; rot_dim from the cache; unknown dtype -> 2 bytes */
    CHECK_I64(run(&f, &tl_pc_sgl_kernel_rotary_embedding,
                  "{\"Input Dims\": [[4], [4, 64], [4, 64], [], [100, 32]],"
                  " \"Input type\": [\"long int\", \"BFloat16\", \"BFloat16\", \"Scalar\", \"float\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"\", \"\"]}"),
              TL_PERF_OK);
    CHECK_STR(tl_pt_param_repr(&f.r, "num_elements"), "256"); /* 4 * (1 + 1) * 32 */
    CHECK_DBL(f.r.bytes, 256 * 2 * 2);
    CHECK(f.r.precision == NULL);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_sgl_kernel_rotary_embedding,
                  "{\"Input Dims\": [[4], [4, 64], [4, 64], []], \"Input type\": [\"long int\", \"float\", \"float\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"0\"]}"),
              TL_PERF_ERROR); /* head_size 0: ZeroDivisionError */
    tl_pt_done(&f);
}

static void test_rope_cached(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_aiter_rope_cached_positions_2c_fwd_impl, "aiter_rope_cached_positions_2c_fwd_impl", "RoPE_fwd",
                "RoPE");
    CHECK_I64(run(&f, &tl_pc_aiter_rope_cached_positions_2c_fwd_impl,
                  "{\"Input Dims\": [[8, 4, 64], [8, 2, 64], [8, 4, 64], [8, 2, 64]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 9216);
    CHECK_DBL(f.r.bytes, 12288);
    CHECK_STR(tl_pt_param_repr(&f.r, "num_elements"), "3072");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_rope_cached_positions_2c_fwd_impl,
                  "{\"Input Dims\": [[8, 4, 64], [8, 2, 64], [8, 4, 64]], \"Input type\": []}"),
              TL_PERF_ERROR); /* y = D[3] missing */
    tl_pt_done(&f);
}

static void test_fused_qk_rope(void)
{
    static const char *args =
        "{\"Input Dims\": [[4, 16, 512], [4, 16, 64], [4, 1, 512], [4, 1, 64], [100, 1, 576], [4, 16, 576]],"
        " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\","
        " \"c10::Float8_e4m3fnuz\", \"c10::Float8_e4m3fnuz\"]}";
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_aiter_fused_qk_rope_cat_and_cache_mla, "aiter_fused_qk_rope_cat_and_cache_mla", "RoPE_fwd",
                "FusedRoPE");
    CHECK_I64(run(&f, &tl_pc_aiter_fused_qk_rope_cat_and_cache_mla, args), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 13056);
    CHECK_DBL(f.r.bytes, 154368); /* kv cache written as fp8 (T[4]) */
    CHECK_STR(tl_pt_keys(&f.r), "T,QH,KH,D_lora,D_pe,dtype_in,dtype_kv");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);
    CHECK_CLASS(tl_pc_fused_qk_rope_concat_and_cache_mla, "fused_qk_rope_concat_and_cache_mla", "RoPE_fwd",
                "FusedRoPE");
    CHECK_I64(run(&f, &tl_pc_fused_qk_rope_concat_and_cache_mla, args), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 13056);
    CHECK_DBL(f.r.bytes, 117504); /* KH = 1; q_out fp8 (T[5]), kv cache fp8 (T[4]) */
    CHECK_STR(tl_pt_param_repr(&f.r, "dtype_out"), "'c10::Float8_e4m3fnuz'");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_fused_qk_rope_cat_and_cache_mla,
                  "{\"Input Dims\": [[4, 512], [4, 16, 64], [4, 1, 512]], \"Input type\": [\"c10::BFloat16\"]}"),
              TL_PERF_ERROR); /* (T, QH, D_lora) = D[0] needs 3 dims */
    tl_pt_done(&f);
}

/* ---- RMSNorm --------------------------------------------------------------- */

static void check_norm_params(tl_pt_fx *f, const char *shape, const char *stride, const char *channels)
{
    CHECK_STR(tl_pt_keys(&f->r),
              "op_shape,dtype_in_out,stride_input,stride_output,num_channels,has_bias,is_affine,is_training");
    CHECK_STR(tl_pt_param_repr(&f->r, "op_shape"), shape);
    CHECK_STR(tl_pt_param_repr(&f->r, "dtype_in_out"), "('c10::BFloat16', None)");
    CHECK_STR(tl_pt_param_repr(&f->r, "stride_input"), stride);
    CHECK_STR(tl_pt_param_repr(&f->r, "stride_output"), "None");
    CHECK_STR(tl_pt_param_repr(&f->r, "num_channels"), channels);
    CHECK_STR(tl_pt_param_repr(&f->r, "has_bias"), "False");
    CHECK_STR(tl_pt_param_repr(&f->r, "is_affine"), "True");
    CHECK_STR(tl_pt_param_repr(&f->r, "is_training"), "False");
    CHECK_STR(f->r.maf, "vector");
    CHECK_STR(f->r.precision, "bf16");
}

/* The RMSNorm_fwd.csv rows of vllm_decode_full and sglang_decode. */
static void test_rmsnorm_reference_rows(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_aiter_rms_norm, "aiter_rms_norm", "RMSNorm", "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_aiter_rms_norm,
                  "{\"Input Dims\": [[32, 2880], [2880], [], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"],"
                  " \"Input Strides\": [[2880, 1], [1], [], []], \"Concrete Inputs\": [\"\", \"\", \"1.0000000000000001e-05\", \"0\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 0.000368704);
    CHECK_DBL(f.r.bytes / 1048576, 0.3570556640625);
    check_norm_params(&f, "(32, 2880)", "(2880, 1)", "2880");
    tl_pt_done(&f);

    CHECK_CLASS(tl_pc_aiter_rmsnorm2d_fwd_with_add_ck, "aiter_rmsnorm2d_fwd_with_add_ck", "RMSNorm", "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm2d_fwd_with_add_ck,
                  "{\"Input Dims\": [[32, 2880], [32, 2880], [32, 2880], [32, 2880], [2880], [], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"],"
                  " \"Input Strides\": [[2880, 1], [3072, 1], [2880, 1], [2880, 1], [1], [], []]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 0.000460864);
    CHECK_DBL(f.r.bytes / 1048576, 0.7086181640625);
    check_norm_params(&f, "(32, 2880)", "(3072, 1)", "2880");
    tl_pt_done(&f);

    CHECK_CLASS(tl_pc_aiter_rmsnorm, "aiter_rmsnorm", "RMSNorm", "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm,
                  "{\"Input Dims\": [[256, 128], [256, 128], [128], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Input Strides\": [[128, 1], [128, 1], [1], []]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 0.000131584);
    CHECK_DBL(f.r.bytes / 1048576, 0.125244140625);
    check_norm_params(&f, "(256, 128)", "(128, 1)", "128");
    tl_pt_done(&f);

    /* aiter::add_rmsnorm shares aiter_rmsnorm2d_fwd_with_add_ck */
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm2d_fwd_with_add_ck,
                  "{\"Input Dims\": [[32, 4096], [32, 4096], [32, 4096], [32, 4096], [4096], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Input Strides\": [[4096, 1], [4096, 1], [4096, 1], [4096, 1], [1], []]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops / 1e9, 0.000655424);
    CHECK_DBL(f.r.bytes / 1048576, 1.0078125);
    tl_pt_done(&f);
}

/* The quantizing variants, input [32, 4096] bf16 (E = 131072, C = 4096, 32 rows). */
static void test_rmsnorm_quant_variants(void)
{
    tl_pt_fx f;
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm2d_fwd_with_dynamicquant_ck,
                  "{\"Input Dims\": [[32, 4096], [32, 4096], [32, 1], [4096]], \"Input type\": [\"c10::Float8_e4m3fnuz\", \"c10::BFloat16\", \"float\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 786496);
    CHECK_DBL(f.r.bytes, 401536);
    tl_pt_done(&f);

    static const char *quant = "{\"Input Dims\": [[32, 4096], [32, 4096], [32, 32], [4096], [], []],"
                               " \"Input type\": [\"c10::Float8_e4m3fnuz\", \"c10::BFloat16\", \"float\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"],"
                               " \"Concrete Inputs\": [\"\", \"\", \"\", \"\", \"1e-06\", \"%s\"]}";
    char buf[512];
    snprintf(buf, sizeof buf, quant, "128");
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm_quant, buf), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 786496);
    CHECK_DBL(f.r.bytes, 405504); /* + 32 * ceil(4096/128) * 4 */
    tl_pt_done(&f);
    snprintf(buf, sizeof buf, quant, "");
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm_quant, buf), TL_PERF_OK); /* unparseable: gs = C */
    CHECK_DBL(f.r.bytes, 401536);
    tl_pt_done(&f);

    CHECK_I64(run(&f, &tl_pc_vllm_rocm_aiter_rmsnorm_fp8_group_quant,
                  "{\"Input Dims\": [[32, 4096], [4096], [], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"1e-06\", \"128\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 786496);
    CHECK_DBL(f.r.bytes, 405504);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_vllm_rocm_aiter_rmsnorm_fp8_group_quant,
                  "{\"Input Dims\": [[32, 4096], [4096], [], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"1e-06\", \"\"]}"),
              TL_PERF_ERROR); /* int('') */
    tl_pt_done(&f);

    CHECK_I64(run(&f, &tl_pc_vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant,
                  "{\"Input Dims\": [[32, 4096], [32, 4096], [4096], [], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"1e-06\", \"128\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 917568);
    CHECK_DBL(f.r.bytes, 929792);
    tl_pt_done(&f);
}

static void test_rmsnorm_pad_and_mxfp4(void)
{
    tl_pt_fx f;
    /* pad 256 on C = 2880: n_out = 3072 */
    CHECK_CLASS(tl_pc_vllm_rocm_aiter_triton_add_rmsnorm_pad, "vllm_rocm_aiter_triton_add_rmsnorm_pad", "RMSNorm",
                "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_vllm_rocm_aiter_triton_add_rmsnorm_pad,
                  "{\"Input Dims\": [[32, 2880], [2880], [], [32, 2880], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"1e-05\", \"\", \"256\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 460864);
    CHECK_DBL(f.r.bytes, 755328);
    tl_pt_done(&f);

    /* fused_rms_mxfp4_quant: x1 [32, 7168], x2 [32, 512] (D[3]), res1 [32, 7168] (D[6]) */
    CHECK_CLASS(tl_pc_fused_rms_mxfp4_quant, "fused_rms_mxfp4_quant", "RMSNorm", "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_fused_rms_mxfp4_quant,
                  "{\"Input Dims\": [[32, 7168], [7168], [], [32, 512], [512], [], [32, 7168]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 1671236);
    CHECK_DBL(f.r.bytes, 1579008);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_fused_rms_mxfp4_quant,
                  "{\"Input Dims\": [[32, 7168], [7168], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 1376320);
    CHECK_DBL(f.r.bytes, 594944);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_fused_rms_mxfp4_quant,
                  "{\"Input Dims\": [[32, 7168], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}"),
              TL_PERF_ERROR); /* weight D[1][0] missing */
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_rms_norm, "{\"Input Dims\": [[32, 2880], [0]], \"Input type\": [\"float\", \"float\"]}"),
              TL_PERF_ERROR); /* C = 0: E / C */
    tl_pt_done(&f);
}

/* ---- custom collectives ------------------------------------------------------ */

static void test_custom_collectives(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_aiter_fused_allreduce_rmsnorm, "aiter_fused_allreduce_rmsnorm", "CustomCollective",
                "CustomCollective");
    CHECK_I64(run(&f, &tl_pc_aiter_fused_allreduce_rmsnorm,
                  "{\"Input Dims\": [[], [], [32, 4096], [32, 4096], [32, 4096], [32, 4096], [4096]],"
                  " \"Input type\": [\"\", \"\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 655424);
    CHECK_DBL(f.r.bytes, 1056768);
    CHECK(f.r.maf == NULL && f.r.precision == NULL);
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_fused_allreduce_rmsnorm_,
                  "{\"Input Dims\": [[32, 4096], [32, 4096], [4096]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 655424);
    tl_pt_done(&f);
    const tl_perf_class *ar[] = {&tl_pc_custom_ar_all_reduce, &tl_pc_custom_ar_qr_all_reduce,
                                 &tl_pc_sgl_kernel_all_reduce_reg, &tl_pc_sgl_kernel_qr_all_reduce};
    for (int i = 0; i < 4; i++) {
        CHECK_STR(ar[i]->category, "CustomCollective");
        CHECK_I64(run(&f, ar[i], "{\"Input Dims\": [[], [32, 4096], [32, 4096]], \"Input type\": [\"int\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
                  TL_PERF_OK);
        CHECK_DBL(f.r.flops, 0);
        CHECK_DBL(f.r.bytes, 524288);
        tl_pt_done(&f);
    }
    CHECK_STR(tl_pc_custom_ar_all_reduce.name, "custom_ar_all_reduce");
    CHECK_STR(tl_pc_sgl_kernel_qr_all_reduce.name, "sgl_kernel_qr_all_reduce");
    const tl_perf_class *ga[] = {&tl_pc_aiter_reduce_scatter, &tl_pc_aiter_all_gather_reg};
    for (int i = 0; i < 2; i++) {
        CHECK_I64(run(&f, ga[i], "{\"Input Dims\": [[], [32, 1024], [256, 1024]], \"Input type\": [\"int\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
                  TL_PERF_OK);
        CHECK_DBL(f.r.bytes, 589824);
        tl_pt_done(&f);
    }
    CHECK_STR(tl_pc_sgl_kernel_reg_all_gather_into_tensor.name, "sgl_kernel_reg_all_gather_into_tensor");
    CHECK_I64(run(&f, &tl_pc_sgl_kernel_reg_all_gather_into_tensor,
                  "{\"Input Dims\": [[256, 1024], [32, 1024]], \"Input type\": [\"c10::BFloat16\", \"float\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.bytes, 589824); /* bpe of T[0] */
    CHECK_STR(tl_pt_keys(&f.r), "input_shape,output_shape,dtype");
    CHECK_STR(tl_pt_param_repr(&f.r, "input_shape"), "(32, 1024)");
    tl_pt_done(&f);
    CHECK_I64(run(&f, &tl_pc_custom_ar_all_reduce, "{\"Input Dims\": [[]], \"Input type\": [\"int\"]}"), TL_PERF_ERROR);
    tl_pt_done(&f);
}

/* ---- mHC ------------------------------------------------------------------- */

static void test_mhc(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_mhc_post, "mhc_post", "mHC", "mHC");
    CHECK_I64(run(&f, &tl_pc_mhc_post,
                  "{\"Input Dims\": [[64, 4, 4096], [64, 4096], [64, 4], [64, 4, 4]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"float\", \"float\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 10485760);
    CHECK_DBL(f.r.bytes, 4723712);
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(tl_pt_keys(&f.r), "M,n,C,dtype");
    tl_pt_done(&f);

    CHECK_CLASS(tl_pc_mhc_pre_gemm_sqrsum, "mhc_pre_gemm_sqrsum", "mHC", "mHC");
    CHECK_I64(run(&f, &tl_pc_mhc_pre_gemm_sqrsum,
                  "{\"Input Dims\": [[2, 64, 24], [2, 64], [64, 4, 4096], [24, 16384]],"
                  " \"Input type\": [\"float\", \"float\", \"c10::BFloat16\", \"float\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 50331648);
    CHECK_DBL(f.r.bytes, 3682816);
    CHECK_STR(f.r.maf, "matrix");
    CHECK_STR(f.r.precision, "bf16");
    tl_pt_done(&f);

    CHECK_I64(run(&f, &tl_pc_mhc_pre_big_fuse_rmsnorm,
                  "{\"Input Dims\": [[64, 4], [64, 4, 4], [64, 4096], [2, 64, 24], [2, 64], [4096], [24, 16384], [64, 4, 4096]],"
                  " \"Input type\": [\"float\", \"float\", \"c10::BFloat16\", \"float\", \"float\", \"c10::BFloat16\", \"float\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 3407872);
    CHECK_DBL(f.r.bytes, 2647040);
    CHECK_STR(f.r.maf, "vector");
    tl_pt_done(&f);

    CHECK_I64(run(&f, &tl_pc_mhc_fused_post_pre_gemm_sqrsum,
                  "{\"Input Dims\": [[2, 64, 24], [2, 64], [64, 4], [64, 4096], [64, 4, 4096], [64, 4, 4], [64, 4, 4096], [24, 16384]],"
                  " \"Input type\": [\"float\", \"float\", \"float\", \"c10::BFloat16\", \"c10::BFloat16\", \"float\", \"c10::BFloat16\", \"float\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 60817408);
    CHECK_DBL(f.r.bytes, 8406528);
    CHECK_STR(f.r.maf, "matrix");
    CHECK_STR(tl_pt_keys(&f.r), "M,n,C,hc3,K,split_k,dtype");
    tl_pt_done(&f);

    CHECK_I64(run(&f, &tl_pc_mhc_fused_post_pre_gemm_sqrsum, "{\"Input Dims\": [[2, 64, 24]], \"Input type\": []}"),
              TL_PERF_ERROR);
    tl_pt_done(&f);
}

static void test_mixed_sample(void)
{
    tl_pt_fx f;
    CHECK_CLASS(tl_pc_mixed_sample_outer_exponential, "mixed_sample_outer_exponential", "elementwise", "elementwise");
    CHECK_I64(run(&f, &tl_pc_mixed_sample_outer_exponential,
                  "{\"Input Dims\": [[32], [32, 151936], [32, 151936]], \"Input type\": [\"int\", \"float\", \"\"]}"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 9723904);
    CHECK_DBL(f.r.bytes, 38895744); /* the unknown exponential dtype defaults to float */
    CHECK_STR(f.r.precision, "fp32");
    tl_pt_done(&f);
}

/* Every extension class is forward only: bwd metrics are NotImplemented. */
static void test_no_bwd(void)
{
    tl_pt_fx f;
    f.a = tl_pv_arena_new();
    memset(&f.ev, 0, sizeof f.ev);
    tl_perf_result_init(&f.r);
    CHECK_I64(tl_perf_run(&tl_pc_aiter_rms_norm, &f.ev, 1, &f.r), TL_PERF_NOT_IMPLEMENTED);
    tl_pt_done(&f);
    /* no args at all: a reference KeyError -> error */
    f.a = tl_pv_arena_new();
    tl_perf_result_init(&f.r);
    CHECK_I64(tl_perf_run(&tl_pc_mhc_post, &f.ev, 0, &f.r), TL_PERF_ERROR);
    CHECK(f.r.error[0] != 0);
    tl_pt_done(&f);
}

static void test_py_int(void)
{
    int64_t v = 0;
    CHECK(tl_py_int(" 128 ", &v) && v == 128);
    CHECK(tl_py_int("-3", &v) && v == -3);
    CHECK(tl_py_int("1_000", &v) && v == 1000);
    CHECK(!tl_py_int("1__0", &v));
    CHECK(!tl_py_int("1.0", &v));
    CHECK(!tl_py_int("True", &v));
    CHECK(!tl_py_int("", &v));
    CHECK(!tl_py_int(NULL, &v));
    CHECK(!tl_py_int("99999999999999999999", &v));
    /* int() takes any number of leading zeros */
    CHECK(tl_py_int("0000000000000000000000000000000000000000000000000000000000000000000012", &v) && v == 12);
    CHECK(tl_py_int("-9223372036854775808", &v) && v == INT64_MIN);
    CHECK(!tl_py_int("9223372036854775808", &v));
    CHECK_I64(tl_ceil_div(4096, 128), 32);
    CHECK_I64(tl_ceil_div(2880, 256), 12);
    CHECK_I64(tl_floor_div(-7, 2), -4);
    CHECK_I64(tl_floor_div(7, -1), -7);
    CHECK_I64(tl_floor_div(INT64_MIN, -1), INT64_MIN); /* no SIGFPE */
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_silu_and_mul_reference_row, test_activation_variants, test_per_group_quant,
        test_per_token_group_quant_fp8, test_mxfp4_quant_family, test_rotary_embedding_reference_row,
        test_rope_cached, test_fused_qk_rope, test_rmsnorm_reference_rows, test_rmsnorm_quant_variants,
        test_rmsnorm_pad_and_mxfp4, test_custom_collectives, test_mhc, test_mixed_sample, test_no_bwd,
        test_py_int
    };
    return TL_PERF_TEST_RUN(tests, NULL, NULL);
}
