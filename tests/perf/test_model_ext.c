/* test_model_ext.c — extension perf models (perf-model spec §4.9):
 * hand-checked FLOPs / bytes / params, reference CSV rows of
 * ../shared/data/inference (sglang_decode, vllm_decode_full), error paths. */
#include <stdio.h>
#include <string.h>

#include "perf/model_ext.h"
#include "perf/perf_util.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

/* ---- helpers ------------------------------------------------------------ */

typedef struct fixture {
    tl_pv_arena *a;
    tl_perf_event ev;
    tl_perf_result r;
} fixture;

static const tl_pv *dict_get(const tl_pv *d, const char *key)
{
    for (size_t i = 0; d && d->kind == TL_PV_DICT && i + 1 < d->n; i += 2)
        if (tl_pv_cstr(&d->items[i]) && !strcmp(d->items[i].s, key)) return &d->items[i + 1];
    return NULL;
}

/* Runs class c on an event built from its args JSON. */
static int run(fixture *f, const tl_perf_class *c, const char *args_json)
{
    f->a = tl_pv_arena_new();
    memset(&f->ev, 0, sizeof f->ev);
    f->ev.name = c->name;
    f->ev.args = tl_pv_parse(f->a, args_json);
    f->ev.dims = dict_get(f->ev.args, "Input Dims");
    f->ev.types = dict_get(f->ev.args, "Input type");
    f->ev.strides = dict_get(f->ev.args, "Input Strides");
    f->ev.concrete = dict_get(f->ev.args, "Concrete Inputs");
    tl_perf_result_init(&f->r);
    return tl_perf_run(c, &f->ev, 0, &f->r);
}

static void done(fixture *f)
{
    tl_perf_result_free(&f->r);
    tl_pv_arena_free(f->a);
}

/* str() of param `key` as the `param:` column shows it ("<absent>" when missing). */
static const char *param(fixture *f, const char *key)
{
    static char buf[512];
    tl_perf_param *p = tl_pm_find(&f->r, key);
    if (!p) return "<absent>";
    tl_sbuf b;
    tl_sb_init(&b);
    tl_pv_str_tuple(&b, &p->value);
    snprintf(buf, sizeof buf, "%s", b.s ? b.s : "");
    tl_sb_free(&b);
    return buf;
}

/* Param keys joined by ',' in order. */
static const char *keys(fixture *f)
{
    static char buf[512];
    buf[0] = 0;
    for (int i = 0; i < f->r.n_params; i++) {
        if (i) strncat(buf, ",", sizeof buf - strlen(buf) - 1);
        strncat(buf, f->r.params[i].key, sizeof buf - strlen(buf) - 1);
    }
    return buf;
}

#define CHECK_F(a, b)                                                                             \
    do {                                                                                          \
        double a_ = (a), b_ = (b);                                                                \
        tl_test_state.checks++;                                                                   \
        if (a_ != b_) {                                                                           \
            tl_test_state.failures++;                                                             \
            fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); \
        }                                                                                         \
    } while (0)

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
    fixture f;
    CHECK_CLASS(tl_pc_sgl_kernel_silu_and_mul, "sgl_kernel_silu_and_mul", "elementwise", "UnaryElementwise");
    int st = run(&f, &tl_pc_sgl_kernel_silu_and_mul,
                 "{\"Input Dims\": [[32, 12288], [32, 24576]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"],"
                 " \"Input Strides\": [[12288, 1], [24576, 1]], \"Concrete Inputs\": [\"\", \"\"]}");
    CHECK_I64(st, TL_PERF_OK);
    CHECK_F(f.r.flops / 1e9, 0.00196608);
    CHECK(f.r.has_bytes);
    CHECK_F(f.r.bytes / 1048576, 2.25);
    CHECK_STR(keys(&f), "op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(param(&f, "op_shape"), "(32, 12288)");
    CHECK_STR(param(&f, "dtype_in_out"), "('c10::BFloat16', 'c10::BFloat16')");
    CHECK_STR(param(&f, "stride_input"), "(24576, 1)");
    CHECK_STR(param(&f, "stride_output"), "(12288, 1)");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);
}

/* gelu 8n, gelu_tanh 10n, aiter silu 5n; a bool output has no size: bytes None. */
static void test_activation_variants(void)
{
    static const char *args = "{\"Input Dims\": [[4, 100], [4, 200]], \"Input type\": [\"float\", \"c10::Half\"]}";
    const tl_perf_class *cls[] = {&tl_pc_aiter_silu_and_mul, &tl_pc_aiter_gelu_and_mul, &tl_pc_aiter_gelu_tanh_and_mul};
    const double per[] = {5, 8, 10};
    for (int i = 0; i < 3; i++) {
        fixture f;
        CHECK_I64(run(&f, cls[i], args), TL_PERF_OK);
        CHECK_F(f.r.flops, per[i] * 400);
        CHECK_F(f.r.bytes, 2 * 400 * 2 + 400 * 4); /* in fp16 twice as wide, out fp32 */
        CHECK_STR(f.r.precision, "fp16");
        CHECK_STR(param(&f, "stride_input"), "None");
        done(&f);
    }
    CHECK_CLASS(tl_pc_aiter_gelu_tanh_and_mul, "aiter_gelu_tanh_and_mul", "elementwise", "UnaryElementwise");
    fixture f;
    CHECK_I64(run(&f, &tl_pc_aiter_silu_and_mul,
                  "{\"Input Dims\": [[4, 100], [4, 200]], \"Input type\": [\"bool\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK(!f.r.has_bytes);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_silu_and_mul, "{\"Input Dims\": [[4, 100]], \"Input type\": [\"float\"]}"),
              TL_PERF_ERROR); /* no input slot */
    done(&f);
}

/* ---- GroupQuant ---------------------------------------------------------- */

static void test_per_group_quant(void)
{
    fixture f;
    CHECK_CLASS(tl_pc_per_group_quant, "per_group_quant", "GroupQuant", "BinaryElementwise");
    CHECK_I64(run(&f, &tl_pc_per_group_quant,
                  "{\"Input Dims\": [[64, 512], [64, 512], [64, 4], []],"
                  " \"Input type\": [\"c10::Float8_e4m3fnuz\", \"c10::BFloat16\", \"float\", \"Scalar\"],"
                  " \"Input Strides\": [[512, 1], [512, 1], [4, 1], []]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 32768 * 2.59375);
    CHECK_F(f.r.bytes, 99328); /* 32768*1 + 32768*2 + 256*4 */
    CHECK_STR(keys(&f), "shape_in1,shape_in2,dtype_in1_in2_out,stride_input1,stride_input2,stride_output");
    CHECK_STR(param(&f, "dtype_in1_in2_out"), "('c10::BFloat16', 'float', 'c10::Float8_e4m3fnuz')");
    CHECK_STR(param(&f, "shape_in2"), "(64, 4)");
    CHECK_STR(f.r.precision, "bf16");
    CHECK_STR(f.r.maf, "vector");
    done(&f);
}

static void test_per_token_group_quant_fp8(void)
{
    fixture f;
    CHECK_CLASS(tl_pc_vllm_triton_per_token_group_quant_fp8, "vllm_triton_per_token_group_quant_fp8", "GroupQuant",
                "BinaryElementwise");
    CHECK_I64(run(&f, &tl_pc_vllm_triton_per_token_group_quant_fp8,
                  "{\"Input Dims\": [[16, 1000], []], \"Input type\": [\"c10::BFloat16\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"128\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 96000);
    CHECK_F(f.r.bytes, 48512); /* 16000*2 + 16000 + 16*8*4 */
    CHECK_STR(param(&f, "num_groups"), "8");
    done(&f);
    /* "None" group size: default 128; leading dims fold into M = 6 */
    CHECK_I64(run(&f, &tl_pc_vllm_triton_per_token_group_quant_fp8,
                  "{\"Input Dims\": [[2, 3, 256], []], \"Input type\": [\"c10::BFloat16\", \"\"],"
                  " \"Concrete Inputs\": [\"\", \"None\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 9216);
    CHECK_F(f.r.bytes, 4656);
    CHECK_STR(param(&f, "group_size"), "128");
    done(&f);
    CHECK_I64(run(&f, &tl_pc_vllm_triton_per_token_group_quant_fp8,
                  "{\"Input Dims\": [[16, 1000], []], \"Input type\": [\"c10::BFloat16\", \"\"],"
                  " \"Concrete Inputs\": [\"\", \"1.5\"]}"),
              TL_PERF_ERROR); /* int('1.5') */
    done(&f);
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
        fixture f;
        CHECK_CLASS(*t[i].c, t[i].name, "GroupQuant", "GroupQuant");
        CHECK_I64(run(&f, t[i].c, t[i].args), TL_PERF_OK);
        CHECK_F(f.r.flops, 8000);
        CHECK_F(f.r.bytes, 10125); /* 4000*2 + 4000*0.5 + floor(4000/32) */
        CHECK_STR(f.r.precision, "bf16");
        CHECK_STR(param(&f, "num_elements"), "4000");
        done(&f);
    }
}

/* ---- RoPE ------------------------------------------------------------------ */

/* sglang_decode RoPE_fwd.csv: num_elements 163840, GFLOPS 0.00049152, 0.625 MB. */
static void test_rotary_embedding_reference_row(void)
{
    fixture f;
    CHECK_CLASS(tl_pc_sgl_kernel_rotary_embedding, "sgl_kernel_rotary_embedding", "RoPE_fwd", "RoPE");
    CHECK_I64(run(&f, &tl_pc_sgl_kernel_rotary_embedding,
                  "{\"Input Dims\": [[32], [32, 4096], [32, 1024], [], [41216, 128], []],"
                  " \"Input type\": [\"long int\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"128\", \"\", \"True\"]}"),
              TL_PERF_OK);
    CHECK_STR(keys(&f), "num_elements");
    CHECK_STR(param(&f, "num_elements"), "163840");
    CHECK_F(f.r.flops / 1e9, 0.00049152);
    CHECK_F(f.r.bytes / 1048576, 0.625);
    CHECK_STR(f.r.precision, "bf16");
    done(&f);
    /* head size from q[-1] when C[3] is empty; rot_dim from the cache; unknown dtype -> 2 bytes */
    CHECK_I64(run(&f, &tl_pc_sgl_kernel_rotary_embedding,
                  "{\"Input Dims\": [[4], [4, 64], [4, 64], [], [100, 32]],"
                  " \"Input type\": [\"long int\", \"BFloat16\", \"BFloat16\", \"Scalar\", \"float\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"\", \"\"]}"),
              TL_PERF_OK);
    CHECK_STR(param(&f, "num_elements"), "256"); /* 4 * (1 + 1) * 32 */
    CHECK_F(f.r.bytes, 256 * 2 * 2);
    CHECK(f.r.precision == NULL);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_sgl_kernel_rotary_embedding,
                  "{\"Input Dims\": [[4], [4, 64], [4, 64], []], \"Input type\": [\"long int\", \"float\", \"float\", \"Scalar\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"0\"]}"),
              TL_PERF_ERROR); /* head_size 0: ZeroDivisionError */
    done(&f);
}

static void test_rope_cached(void)
{
    fixture f;
    CHECK_CLASS(tl_pc_aiter_rope_cached_positions_2c_fwd_impl, "aiter_rope_cached_positions_2c_fwd_impl", "RoPE_fwd",
                "RoPE");
    CHECK_I64(run(&f, &tl_pc_aiter_rope_cached_positions_2c_fwd_impl,
                  "{\"Input Dims\": [[8, 4, 64], [8, 2, 64], [8, 4, 64], [8, 2, 64]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 9216);
    CHECK_F(f.r.bytes, 12288);
    CHECK_STR(param(&f, "num_elements"), "3072");
    done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_rope_cached_positions_2c_fwd_impl,
                  "{\"Input Dims\": [[8, 4, 64], [8, 2, 64], [8, 4, 64]], \"Input type\": []}"),
              TL_PERF_ERROR); /* y = D[3] missing */
    done(&f);
}

static void test_fused_qk_rope(void)
{
    static const char *args =
        "{\"Input Dims\": [[4, 16, 512], [4, 16, 64], [4, 1, 512], [4, 1, 64], [100, 1, 576], [4, 16, 576]],"
        " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\","
        " \"c10::Float8_e4m3fnuz\", \"c10::Float8_e4m3fnuz\"]}";
    fixture f;
    CHECK_CLASS(tl_pc_aiter_fused_qk_rope_cat_and_cache_mla, "aiter_fused_qk_rope_cat_and_cache_mla", "RoPE_fwd",
                "FusedRoPE");
    CHECK_I64(run(&f, &tl_pc_aiter_fused_qk_rope_cat_and_cache_mla, args), TL_PERF_OK);
    CHECK_F(f.r.flops, 13056);
    CHECK_F(f.r.bytes, 154368); /* kv cache written as fp8 (T[4]) */
    CHECK_STR(keys(&f), "T,QH,KH,D_lora,D_pe,dtype_in,dtype_kv");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);
    CHECK_CLASS(tl_pc_fused_qk_rope_concat_and_cache_mla, "fused_qk_rope_concat_and_cache_mla", "RoPE_fwd",
                "FusedRoPE");
    CHECK_I64(run(&f, &tl_pc_fused_qk_rope_concat_and_cache_mla, args), TL_PERF_OK);
    CHECK_F(f.r.flops, 13056);
    CHECK_F(f.r.bytes, 117504); /* KH = 1; q_out fp8 (T[5]), kv cache fp8 (T[4]) */
    CHECK_STR(param(&f, "dtype_out"), "'c10::Float8_e4m3fnuz'");
    done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_fused_qk_rope_cat_and_cache_mla,
                  "{\"Input Dims\": [[4, 512], [4, 16, 64], [4, 1, 512]], \"Input type\": [\"c10::BFloat16\"]}"),
              TL_PERF_ERROR); /* (T, QH, D_lora) = D[0] needs 3 dims */
    done(&f);
}

/* ---- RMSNorm --------------------------------------------------------------- */

static void check_norm_params(fixture *f, const char *shape, const char *stride, const char *channels)
{
    CHECK_STR(keys(f), "op_shape,dtype_in_out,stride_input,stride_output,num_channels,has_bias,is_affine,is_training");
    CHECK_STR(param(f, "op_shape"), shape);
    CHECK_STR(param(f, "dtype_in_out"), "('c10::BFloat16', None)");
    CHECK_STR(param(f, "stride_input"), stride);
    CHECK_STR(param(f, "stride_output"), "None");
    CHECK_STR(param(f, "num_channels"), channels);
    CHECK_STR(param(f, "has_bias"), "False");
    CHECK_STR(param(f, "is_affine"), "True");
    CHECK_STR(param(f, "is_training"), "False");
    CHECK_STR(f->r.maf, "vector");
    CHECK_STR(f->r.precision, "bf16");
}

/* The RMSNorm_fwd.csv rows of vllm_decode_full and sglang_decode. */
static void test_rmsnorm_reference_rows(void)
{
    fixture f;
    CHECK_CLASS(tl_pc_aiter_rms_norm, "aiter_rms_norm", "RMSNorm", "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_aiter_rms_norm,
                  "{\"Input Dims\": [[32, 2880], [2880], [], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"],"
                  " \"Input Strides\": [[2880, 1], [1], [], []], \"Concrete Inputs\": [\"\", \"\", \"1.0000000000000001e-05\", \"0\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops / 1e9, 0.000368704);
    CHECK_F(f.r.bytes / 1048576, 0.3570556640625);
    check_norm_params(&f, "(32, 2880)", "(2880, 1)", "2880");
    done(&f);

    CHECK_CLASS(tl_pc_aiter_rmsnorm2d_fwd_with_add_ck, "aiter_rmsnorm2d_fwd_with_add_ck", "RMSNorm", "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm2d_fwd_with_add_ck,
                  "{\"Input Dims\": [[32, 2880], [32, 2880], [32, 2880], [32, 2880], [2880], [], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"],"
                  " \"Input Strides\": [[2880, 1], [3072, 1], [2880, 1], [2880, 1], [1], [], []]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops / 1e9, 0.000460864);
    CHECK_F(f.r.bytes / 1048576, 0.7086181640625);
    check_norm_params(&f, "(32, 2880)", "(3072, 1)", "2880");
    done(&f);

    CHECK_CLASS(tl_pc_aiter_rmsnorm, "aiter_rmsnorm", "RMSNorm", "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm,
                  "{\"Input Dims\": [[256, 128], [256, 128], [128], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Input Strides\": [[128, 1], [128, 1], [1], []]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops / 1e9, 0.000131584);
    CHECK_F(f.r.bytes / 1048576, 0.125244140625);
    check_norm_params(&f, "(256, 128)", "(128, 1)", "128");
    done(&f);

    /* aiter::add_rmsnorm shares aiter_rmsnorm2d_fwd_with_add_ck */
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm2d_fwd_with_add_ck,
                  "{\"Input Dims\": [[32, 4096], [32, 4096], [32, 4096], [32, 4096], [4096], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"],"
                  " \"Input Strides\": [[4096, 1], [4096, 1], [4096, 1], [4096, 1], [1], []]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops / 1e9, 0.000655424);
    CHECK_F(f.r.bytes / 1048576, 1.0078125);
    done(&f);
}

/* The quantizing variants, input [32, 4096] bf16 (E = 131072, C = 4096, 32 rows). */
static void test_rmsnorm_quant_variants(void)
{
    fixture f;
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm2d_fwd_with_dynamicquant_ck,
                  "{\"Input Dims\": [[32, 4096], [32, 4096], [32, 1], [4096]], \"Input type\": [\"c10::Float8_e4m3fnuz\", \"c10::BFloat16\", \"float\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 786496);
    CHECK_F(f.r.bytes, 401536);
    done(&f);

    static const char *quant = "{\"Input Dims\": [[32, 4096], [32, 4096], [32, 32], [4096], [], []],"
                               " \"Input type\": [\"c10::Float8_e4m3fnuz\", \"c10::BFloat16\", \"float\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"],"
                               " \"Concrete Inputs\": [\"\", \"\", \"\", \"\", \"1e-06\", \"%s\"]}";
    char buf[512];
    snprintf(buf, sizeof buf, quant, "128");
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm_quant, buf), TL_PERF_OK);
    CHECK_F(f.r.flops, 786496);
    CHECK_F(f.r.bytes, 405504); /* + 32 * ceil(4096/128) * 4 */
    done(&f);
    snprintf(buf, sizeof buf, quant, "");
    CHECK_I64(run(&f, &tl_pc_aiter_rmsnorm_quant, buf), TL_PERF_OK); /* unparseable: gs = C */
    CHECK_F(f.r.bytes, 401536);
    done(&f);

    CHECK_I64(run(&f, &tl_pc_vllm_rocm_aiter_rmsnorm_fp8_group_quant,
                  "{\"Input Dims\": [[32, 4096], [4096], [], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"1e-06\", \"128\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 786496);
    CHECK_F(f.r.bytes, 405504);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_vllm_rocm_aiter_rmsnorm_fp8_group_quant,
                  "{\"Input Dims\": [[32, 4096], [4096], [], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"1e-06\", \"\"]}"),
              TL_PERF_ERROR); /* int('') */
    done(&f);

    CHECK_I64(run(&f, &tl_pc_vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant,
                  "{\"Input Dims\": [[32, 4096], [32, 4096], [4096], [], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"\", \"1e-06\", \"128\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 917568);
    CHECK_F(f.r.bytes, 929792);
    done(&f);
}

static void test_rmsnorm_pad_and_mxfp4(void)
{
    fixture f;
    /* pad 256 on C = 2880: n_out = 3072 */
    CHECK_CLASS(tl_pc_vllm_rocm_aiter_triton_add_rmsnorm_pad, "vllm_rocm_aiter_triton_add_rmsnorm_pad", "RMSNorm",
                "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_vllm_rocm_aiter_triton_add_rmsnorm_pad,
                  "{\"Input Dims\": [[32, 2880], [2880], [], [32, 2880], []],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\", \"int\"],"
                  " \"Concrete Inputs\": [\"\", \"\", \"1e-05\", \"\", \"256\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 460864);
    CHECK_F(f.r.bytes, 755328);
    done(&f);

    /* fused_rms_mxfp4_quant: x1 [32, 7168], x2 [32, 512] (D[3]), res1 [32, 7168] (D[6]) */
    CHECK_CLASS(tl_pc_fused_rms_mxfp4_quant, "fused_rms_mxfp4_quant", "RMSNorm", "RMSNorm");
    CHECK_I64(run(&f, &tl_pc_fused_rms_mxfp4_quant,
                  "{\"Input Dims\": [[32, 7168], [7168], [], [32, 512], [512], [], [32, 7168]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 1671236);
    CHECK_F(f.r.bytes, 1579008);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_fused_rms_mxfp4_quant,
                  "{\"Input Dims\": [[32, 7168], [7168], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 1376320);
    CHECK_F(f.r.bytes, 594944);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_fused_rms_mxfp4_quant,
                  "{\"Input Dims\": [[32, 7168], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}"),
              TL_PERF_ERROR); /* weight D[1][0] missing */
    done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_rms_norm, "{\"Input Dims\": [[32, 2880], [0]], \"Input type\": [\"float\", \"float\"]}"),
              TL_PERF_ERROR); /* C = 0: E / C */
    done(&f);
}

/* ---- custom collectives ------------------------------------------------------ */

static void test_custom_collectives(void)
{
    fixture f;
    CHECK_CLASS(tl_pc_aiter_fused_allreduce_rmsnorm, "aiter_fused_allreduce_rmsnorm", "CustomCollective",
                "CustomCollective");
    CHECK_I64(run(&f, &tl_pc_aiter_fused_allreduce_rmsnorm,
                  "{\"Input Dims\": [[], [], [32, 4096], [32, 4096], [32, 4096], [32, 4096], [4096]],"
                  " \"Input type\": [\"\", \"\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 655424);
    CHECK_F(f.r.bytes, 1056768);
    CHECK(f.r.maf == NULL && f.r.precision == NULL);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_aiter_fused_allreduce_rmsnorm_,
                  "{\"Input Dims\": [[32, 4096], [32, 4096], [4096]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 655424);
    done(&f);
    const tl_perf_class *ar[] = {&tl_pc_custom_ar_all_reduce, &tl_pc_custom_ar_qr_all_reduce,
                                 &tl_pc_sgl_kernel_all_reduce_reg, &tl_pc_sgl_kernel_qr_all_reduce};
    for (int i = 0; i < 4; i++) {
        CHECK_STR(ar[i]->category, "CustomCollective");
        CHECK_I64(run(&f, ar[i], "{\"Input Dims\": [[], [32, 4096], [32, 4096]], \"Input type\": [\"int\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
                  TL_PERF_OK);
        CHECK_F(f.r.flops, 0);
        CHECK_F(f.r.bytes, 524288);
        done(&f);
    }
    CHECK_STR(tl_pc_custom_ar_all_reduce.name, "custom_ar_all_reduce");
    CHECK_STR(tl_pc_sgl_kernel_qr_all_reduce.name, "sgl_kernel_qr_all_reduce");
    const tl_perf_class *ga[] = {&tl_pc_aiter_reduce_scatter, &tl_pc_aiter_all_gather_reg};
    for (int i = 0; i < 2; i++) {
        CHECK_I64(run(&f, ga[i], "{\"Input Dims\": [[], [32, 1024], [256, 1024]], \"Input type\": [\"int\", \"c10::BFloat16\", \"c10::BFloat16\"]}"),
                  TL_PERF_OK);
        CHECK_F(f.r.bytes, 589824);
        done(&f);
    }
    CHECK_STR(tl_pc_sgl_kernel_reg_all_gather_into_tensor.name, "sgl_kernel_reg_all_gather_into_tensor");
    CHECK_I64(run(&f, &tl_pc_sgl_kernel_reg_all_gather_into_tensor,
                  "{\"Input Dims\": [[256, 1024], [32, 1024]], \"Input type\": [\"c10::BFloat16\", \"float\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.bytes, 589824); /* bpe of T[0] */
    CHECK_STR(keys(&f), "input_shape,output_shape,dtype");
    CHECK_STR(param(&f, "input_shape"), "(32, 1024)");
    done(&f);
    CHECK_I64(run(&f, &tl_pc_custom_ar_all_reduce, "{\"Input Dims\": [[]], \"Input type\": [\"int\"]}"), TL_PERF_ERROR);
    done(&f);
}

/* ---- mHC ------------------------------------------------------------------- */

static void test_mhc(void)
{
    fixture f;
    CHECK_CLASS(tl_pc_mhc_post, "mhc_post", "mHC", "mHC");
    CHECK_I64(run(&f, &tl_pc_mhc_post,
                  "{\"Input Dims\": [[64, 4, 4096], [64, 4096], [64, 4], [64, 4, 4]],"
                  " \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"float\", \"float\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 10485760);
    CHECK_F(f.r.bytes, 4723712);
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(keys(&f), "M,n,C,dtype");
    done(&f);

    CHECK_CLASS(tl_pc_mhc_pre_gemm_sqrsum, "mhc_pre_gemm_sqrsum", "mHC", "mHC");
    CHECK_I64(run(&f, &tl_pc_mhc_pre_gemm_sqrsum,
                  "{\"Input Dims\": [[2, 64, 24], [2, 64], [64, 4, 4096], [24, 16384]],"
                  " \"Input type\": [\"float\", \"float\", \"c10::BFloat16\", \"float\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 50331648);
    CHECK_F(f.r.bytes, 3682816);
    CHECK_STR(f.r.maf, "matrix");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);

    CHECK_I64(run(&f, &tl_pc_mhc_pre_big_fuse_rmsnorm,
                  "{\"Input Dims\": [[64, 4], [64, 4, 4], [64, 4096], [2, 64, 24], [2, 64], [4096], [24, 16384], [64, 4, 4096]],"
                  " \"Input type\": [\"float\", \"float\", \"c10::BFloat16\", \"float\", \"float\", \"c10::BFloat16\", \"float\", \"c10::BFloat16\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 3407872);
    CHECK_F(f.r.bytes, 2647040);
    CHECK_STR(f.r.maf, "vector");
    done(&f);

    CHECK_I64(run(&f, &tl_pc_mhc_fused_post_pre_gemm_sqrsum,
                  "{\"Input Dims\": [[2, 64, 24], [2, 64], [64, 4], [64, 4096], [64, 4, 4096], [64, 4, 4], [64, 4, 4096], [24, 16384]],"
                  " \"Input type\": [\"float\", \"float\", \"float\", \"c10::BFloat16\", \"c10::BFloat16\", \"float\", \"c10::BFloat16\", \"float\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 60817408);
    CHECK_F(f.r.bytes, 8406528);
    CHECK_STR(f.r.maf, "matrix");
    CHECK_STR(keys(&f), "M,n,C,hc3,K,split_k,dtype");
    done(&f);

    CHECK_I64(run(&f, &tl_pc_mhc_fused_post_pre_gemm_sqrsum, "{\"Input Dims\": [[2, 64, 24]], \"Input type\": []}"),
              TL_PERF_ERROR);
    done(&f);
}

static void test_mixed_sample(void)
{
    fixture f;
    CHECK_CLASS(tl_pc_mixed_sample_outer_exponential, "mixed_sample_outer_exponential", "elementwise", "elementwise");
    CHECK_I64(run(&f, &tl_pc_mixed_sample_outer_exponential,
                  "{\"Input Dims\": [[32], [32, 151936], [32, 151936]], \"Input type\": [\"int\", \"float\", \"\"]}"),
              TL_PERF_OK);
    CHECK_F(f.r.flops, 9723904);
    CHECK_F(f.r.bytes, 38895744); /* the unknown exponential dtype defaults to float */
    CHECK_STR(f.r.precision, "fp32");
    done(&f);
}

/* Every extension class is forward only: bwd metrics are NotImplemented. */
static void test_no_bwd(void)
{
    fixture f;
    f.a = tl_pv_arena_new();
    memset(&f.ev, 0, sizeof f.ev);
    tl_perf_result_init(&f.r);
    CHECK_I64(tl_perf_run(&tl_pc_aiter_rms_norm, &f.ev, 1, &f.r), TL_PERF_NOT_IMPLEMENTED);
    done(&f);
    /* no args at all: a reference KeyError -> error */
    f.a = tl_pv_arena_new();
    tl_perf_result_init(&f.r);
    CHECK_I64(tl_perf_run(&tl_pc_mhc_post, &f.ev, 0, &f.r), TL_PERF_ERROR);
    CHECK(f.r.error[0] != 0);
    done(&f);
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
