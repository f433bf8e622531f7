/* test_model_elementwise.c — unary/binary elementwise perf models against
 * hand-checked values and rows of the reference CSVs (h100 Qwen, owlv2,
 * timesformer: UnaryElementwise.csv / BinaryElementwise.csv). */
#include <stdio.h>
#include <string.h>

#include "perf/model_elementwise.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

/* --- fixture: an event built from the four args lists ----------------- */

typedef struct fx {
    tl_pv_arena *a;
    tl_perf_event ev;
    tl_perf_result r;
    tl_sbuf s;
} fx;

static const tl_pv *arg(const tl_pv *args, const char *key)
{
    for (size_t i = 0; i + 1 < args->n; i += 2)
        if (!strcmp(args->items[i].s, key)) return &args->items[i + 1];
    return NULL;
}

/* Runs class c (bwd) on an event whose args are the JSON texts given
 * (NULL: the key is absent). */
static int run(fx *f, const tl_perf_class *c, int bwd, const char *name, const char *dims, const char *types,
               const char *strides, const char *concrete)
{
    tl_sbuf j;
    tl_sb_init(&j);
    tl_sb_puts(&j, "{\"_\":0");
    if (dims) tl_sb_printf(&j, ",\"Input Dims\":%s", dims);
    if (types) tl_sb_printf(&j, ",\"Input type\":%s", types);
    if (strides) tl_sb_printf(&j, ",\"Input Strides\":%s", strides);
    if (concrete) tl_sb_printf(&j, ",\"Concrete Inputs\":%s", concrete);
    tl_sb_putc(&j, '}');
    f->a = tl_pv_arena_new();
    const tl_pv *args = tl_pv_parse(f->a, j.s);
    tl_sb_free(&j);
    memset(&f->ev, 0, sizeof f->ev);
    f->ev.name = name;
    f->ev.args = args;
    f->ev.dims = arg(args, "Input Dims");
    f->ev.types = arg(args, "Input type");
    f->ev.strides = arg(args, "Input Strides");
    f->ev.concrete = arg(args, "Concrete Inputs");
    tl_perf_result_init(&f->r);
    tl_sb_init(&f->s);
    return tl_perf_run(c, &f->ev, bwd, &f->r);
}

static void done(fx *f)
{
    tl_perf_result_free(&f->r);
    tl_pv_arena_free(f->a);
    tl_sb_free(&f->s);
}

/* Python str() of a param value (a top-level str is its text), "<absent>"
 * when the key is missing. */
static const char *param(fx *f, const char *key)
{
    tl_sb_clear(&f->s);
    tl_perf_param *p = tl_pm_find(&f->r, key);
    if (!p) return "<absent>";
    if (p->value.kind == TL_PV_STR) return p->value.s;
    tl_pv_str_tuple(&f->s, &p->value);
    return f->s.s;
}

/* The param keys in order, comma-separated. */
static const char *keys(fx *f)
{
    tl_sb_clear(&f->s);
    for (int i = 0; i < f->r.n_params; i++) tl_sb_printf(&f->s, "%s%s", i ? "," : "", f->r.params[i].key);
    return f->s.s;
}

#define CHECK_DBL(a, b)                                                                                  \
    do {                                                                                                 \
        double a_ = (a), b_ = (b);                                                                       \
        tl_test_state.checks++;                                                                          \
        if (a_ != b_) {                                                                                  \
            tl_test_state.failures++;                                                                    \
            fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); \
        }                                                                                                \
    } while (0)

/* GFLOPS and Data Moved (MB) as the report computes them. */
#define CHECK_GFLOPS(f, g) CHECK_DBL((f)->r.flops / 1e9, g)
#define CHECK_MB(f, mb)                         \
    do {                                        \
        CHECK((f)->r.has_bytes);                \
        CHECK_DBL((f)->r.bytes / 1048576, mb); \
    } while (0)

/* ===================================================================== */

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
    fx f;
    CHECK_I64(run(&f, u, 1, "aten::neg", "[[4]]", "[\"float\"]", "[[1]]", "[\"\"]"), TL_PERF_NOT_IMPLEMENTED);
    done(&f);
}

/* h100 Qwen UnaryElementwise.csv: aten::copy_ bf16 -> bf16 (transpose). */
static void test_unary_copy(void)
{
    fx f;
    CHECK_I64(run(&f, &tl_pc_aten_unary_elementwise, 0, "aten::copy_",
                  "[[16, 16, 559, 64], [16, 16, 559, 64], []]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]",
                  "[[572416, 35776, 64, 1], [572416, 64, 1024, 1], []]", "[\"\", \"\", \"False\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f, 0.009158656);
    CHECK_MB(&f, 34.9375);
    CHECK_STR(keys(&f), "op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(param(&f, "op_shape"), "(16, 16, 559, 64)");
    CHECK_STR(param(&f, "dtype_in_out"), "('c10::BFloat16', 'c10::BFloat16')");
    CHECK_STR(param(&f, "stride_input"), "(572416, 35776, 64, 1)");
    CHECK_STR(param(&f, "stride_output"), "(572416, 64, 1024, 1)");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);

    /* copy_ float <- long int: bytes n·4 + n·8; the precision is the destination's */
    run(&f, &tl_pc_aten_unary_elementwise, 0, "aten::copy_", "[[1, 1, 559], [1, 1, 559], []]",
        "[\"float\", \"long int\", \"Scalar\"]", "[[559, 559, 1], [559, 559, 1], []]", "[\"\", \"\", \"False\"]");
    CHECK_GFLOPS(&f, 5.59e-07);
    CHECK_MB(&f, 0.006397247314453125);
    CHECK_STR(f.r.precision, "fp32");
    done(&f);
}

/* Qwen aten::pow(float, Scalar) and aten::rsqrt: out None -> 2n·bpe. */
static void test_unary_scalar_args(void)
{
    fx f;
    run(&f, &tl_pc_aten_unary_elementwise, 0, "aten::pow", "[[16, 559, 1024], []]", "[\"float\", \"Scalar\"]",
        "[[572416, 1024, 1], []]", "[\"\", \"2\"]");
    CHECK_GFLOPS(&f, 0.009158656);
    CHECK_MB(&f, 69.875);
    CHECK_STR(param(&f, "dtype_in_out"), "('float', None)");
    CHECK_STR(param(&f, "stride_output"), "None");
    done(&f);

    run(&f, &tl_pc_aten_unary_elementwise, 0, "aten::rsqrt", "[[16, 559, 1]]", "[\"float\"]", "[[559, 1, 1]]",
        "[\"\"]");
    CHECK_GFLOPS(&f, 8.944e-06);
    CHECK_MB(&f, 0.0682373046875);
    done(&f);

    /* sglang aten::neg on long int: bytes known, no Compute Spec precision */
    run(&f, &tl_pc_aten_unary_elementwise, 0, "aten::neg", "[[32]]", "[\"long int\"]", "[[1]]", "[\"\"]");
    CHECK_MB(&f, 0.00048828125);
    CHECK(f.r.precision == NULL);
    done(&f);
}

static void test_unary_errors(void)
{
    fx f;
    /* bool has no bpe: bytes None, not an error */
    CHECK_I64(run(&f, &tl_pc_aten_unary_elementwise, 0, "aten::neg", "[[8]]", "[\"bool\"]", "[[1]]", "[\"\"]"),
              TL_PERF_OK);
    CHECK(!f.r.has_bytes);
    CHECK_DBL(f.r.flops, 8);
    done(&f);
    /* Input Strides is required (KeyError) */
    CHECK_I64(run(&f, &tl_pc_aten_unary_elementwise, 0, "aten::neg", "[[8]]", "[\"float\"]", NULL, "[\"\"]"),
              TL_PERF_ERROR);
    done(&f);
    /* out tensor present but its type missing (IndexError) */
    CHECK_I64(run(&f, &tl_pc_aten_unary_elementwise, 0, "aten::copy_", "[[8], [8]]", "[\"float\"]", "[[1], [1]]",
                  "[\"\", \"\"]"),
              TL_PERF_ERROR);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_aten_unary_elementwise, 0, "aten::neg", NULL, "[\"float\"]", "[[1]]", "[\"\"]"),
              TL_PERF_ERROR);
    done(&f);
}

/* h100 timesformer UnaryElementwise.csv: aten::upsample_nearest1d. */
static void test_upsample_output_size(void)
{
    fx f;
    CHECK_I64(run(&f, &tl_pc_aten_upsample_nearest, 0, "aten::upsample_nearest1d", "[[1, 768, 8], [], []]",
                  "[\"c10::BFloat16\", \"ScalarList\", \"\"]", "[[6144, 1, 768], [], []]", "[\"\", \"[128]\", \"\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f, 9.8304e-05);
    CHECK_MB(&f, 0.19921875);
    /* the order of the unified perf_params of this row */
    CHECK_STR(keys(&f), "input_shape,output_shape,op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(param(&f, "op_shape"), "(1, 768, 128)");
    CHECK_STR(param(&f, "dtype_in_out"), "('c10::BFloat16', 'c10::BFloat16')");
    CHECK_STR(param(&f, "stride_input"), "(6144, 1, 768)");
    CHECK_STR(param(&f, "stride_output"), "None");
    CHECK_STR(param(&f, "input_shape"), "(1, 768, 8)");
    CHECK_STR(param(&f, "output_shape"), "(1, 768, 128)");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);
}

/* [FIX] scale-factor forms: out spatial = floor(in · scale). */
static void test_upsample_scales(void)
{
    fx f;
    /* .vec overload: (input, output_size=None, scale_factors=[2.0, 1.5]) */
    CHECK_I64(run(&f, &tl_pc_aten_upsample_nearest, 0, "aten::upsample_nearest2d", "[[2, 3, 10, 21], [], []]",
                  "[\"float\", \"\", \"\"]", "[[630, 210, 21, 1], [], []]", "[\"\", \"\", \"[2.0, 1.5]\"]"),
              TL_PERF_OK);
    CHECK_STR(param(&f, "output_shape"), "(2, 3, 20, 31)");
    CHECK_DBL(f.r.flops, 2 * 3 * 20 * 31);
    CHECK_DBL(f.r.bytes, (1260 + 3720) * 4);
    done(&f);
    /* scales_h / scales_w overload */
    CHECK_I64(run(&f, &tl_pc_aten_upsample_nearest, 0, "aten::upsample_nearest2d", "[[2, 3, 10, 21], [], [], []]",
                  "[\"float\", \"\", \"double\", \"double\"]", "[[630, 210, 21, 1], [], [], []]",
                  "[\"\", \"\", \"2.\", \"1.5\"]"),
              TL_PERF_OK);
    CHECK_STR(param(&f, "output_shape"), "(2, 3, 20, 31)");
    done(&f);
    /* neither an output size nor scales: the row fails as in the reference */
    CHECK_I64(run(&f, &tl_pc_aten_upsample_nearest, 0, "aten::upsample_nearest2d", "[[2, 3, 10, 21], [], []]",
                  "[\"float\", \"\", \"\"]", "[[630, 210, 21, 1], [], []]", "[\"\", \"\", \"\"]"),
              TL_PERF_ERROR);
    done(&f);
}

static void test_replication_pad(void)
{
    fx f;
    /* pad (left 1, right 2, top 3, bottom 4): W 8 -> 11, H 8 -> 15 */
    CHECK_I64(run(&f, &tl_pc_aten_replication_pad, 0, "aten::replication_pad2d", "[[1, 3, 8, 8], []]",
                  "[\"float\", \"ScalarList\"]", "[[192, 64, 8, 1], []]", "[\"\", \"[1, 2, 3, 4]\"]"),
              TL_PERF_OK);
    CHECK_STR(keys(&f), "input_shape,output_shape,padding,op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(param(&f, "op_shape"), "(1, 3, 15, 11)");
    CHECK_STR(param(&f, "dtype_in_out"), "('float', 'float')");
    CHECK_STR(param(&f, "input_shape"), "(1, 3, 8, 8)");
    CHECK_STR(param(&f, "padding"), "(1, 2, 3, 4)");
    CHECK_DBL(f.r.flops, 495);
    CHECK_DBL(f.r.bytes, (192 + 495) * 4);
    done(&f);
    /* more padding pairs than dims: IndexError */
    CHECK_I64(run(&f, &tl_pc_aten_replication_pad, 0, "aten::replication_pad2d", "[[8], []]",
                  "[\"float\", \"ScalarList\"]", "[[1], []]", "[\"\", \"[1, 1, 1, 1]\"]"),
              TL_PERF_ERROR);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_aten_replication_pad, 0, "aten::replication_pad1d", "[[8, 8], []]",
                  "[\"float\", \"ScalarList\"]", "[[8, 1], []]", "[\"\", \"\"]"),
              TL_PERF_ERROR);
    done(&f);
}

/* E4: owlv2 aten::mul with a Python scalar (0-dim, double). */
static void test_binary_scalar(void)
{
    fx f;
    CHECK_I64(run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[1, 5185, 4096], []]",
                  "[\"c10::BFloat16\", \"double\"]", "[[21237760, 4096, 1], []]", "[\"\", \"\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f, 0.02123776);
    CHECK_MB(&f, 81.01563262939453);
    CHECK_DBL((f.r.flops / 1e9 * 1e9) / f.r.bytes, 0.2499999764570297);
    CHECK_STR(keys(&f), "shape_in1,shape_in2,dtype_in1_in2_out,stride_input1,stride_input2,stride_output");
    CHECK_STR(param(&f, "shape_in1"), "(1, 5185, 4096)");
    CHECK_STR(param(&f, "shape_in2"), "()");
    CHECK_STR(param(&f, "dtype_in1_in2_out"), "('c10::BFloat16', 'double', None)");
    CHECK_STR(param(&f, "stride_input2"), "()");
    CHECK_STR(param(&f, "stride_output"), "None");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);
}

/* Broadcasting: Qwen mul [16,559,1024] x [16,559,1] (E4) and
 * (1024,) x (16,559,1024); owlv2 mixed dtypes take the larger bpe. */
static void test_binary_broadcast(void)
{
    fx f;
    run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[16, 559, 1024], [16, 559, 1]]",
        "[\"float\", \"float\"]", "[[572416, 1024, 1], [559, 1, 1]]", "[\"\", \"\"]");
    CHECK_GFLOPS(&f, 0.009158656);
    CHECK_MB(&f, 69.90911865234375);
    done(&f);
    run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[1024], [16, 559, 1024]]",
        "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[1], [572416, 1024, 1]]", "[\"\", \"\"]");
    CHECK_GFLOPS(&f, 0.009158656);
    CHECK_MB(&f, 34.939453125);
    CHECK_STR(param(&f, "shape_in1"), "(1024,)");
    done(&f);
    run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[1, 5184, 4], [1, 1, 4]]",
        "[\"c10::BFloat16\", \"int\"]", "[[20736, 4, 1], [4, 4, 1]]", "[\"\", \"\"]");
    CHECK_GFLOPS(&f, 2.0736e-05);
    CHECK_MB(&f, 0.1186676025390625);
    done(&f);
    run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::add_", "[[1, 5184, 4], [5184, 4], []]",
        "[\"c10::BFloat16\", \"float\", \"Scalar\"]", "[[20736, 4, 1], [4, 1], []]", "[\"\", \"\", \"1\"]");
    CHECK_MB(&f, 0.19775390625);
    done(&f);
    /* Falconsai add_ [4,768,14,14] + [1,768,1,1] */
    run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::add_", "[[4, 768, 14, 14], [1, 768, 1, 1], []]",
        "[\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]", "[[150528, 196, 14, 1], [768, 1, 1, 1], []]",
        "[\"\", \"\", \"1\"]");
    CHECK_GFLOPS(&f, 0.000602112);
    CHECK_MB(&f, 2.29833984375);
    done(&f);
    /* incompatible shapes: ValueError */
    CHECK_I64(run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::add", "[[2, 3], [4, 3], []]",
                  "[\"float\", \"float\", \"Scalar\"]", "[[3, 1], [3, 1], []]", "[\"\", \"\", \"1\"]"),
              TL_PERF_ERROR);
    done(&f);
}

static void test_binary_out_and_errors(void)
{
    fx f;
    /* an out tensor at D[2] sets the output dtype (half: 2 bytes) */
    run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::add", "[[4, 4], [4, 4], [4, 4]]",
        "[\"float\", \"float\", \"c10::Half\"]", "[[4, 1], [4, 1], [4, 1]]", "[\"\", \"\", \"\"]");
    CHECK_DBL(f.r.bytes, 16 * 4 + 16 * 4 + 16 * 2);
    CHECK_STR(param(&f, "dtype_in1_in2_out"), "('float', 'float', 'c10::Half')");
    CHECK_STR(param(&f, "stride_output"), "(4, 1)");
    done(&f);
    /* an unknown operand dtype: bytes None */
    run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[4], [4]]", "[\"float\", \"bool\"]", "[[1], [1]]",
        "[\"\", \"\"]");
    CHECK(!f.r.has_bytes);
    CHECK_DBL(f.r.flops, 4);
    done(&f);
    /* a single operand: IndexError */
    CHECK_I64(run(&f, &tl_pc_aten_binary_elementwise, 0, "aten::mul", "[[4]]", "[\"float\"]", "[[1]]", "[\"\"]"),
              TL_PERF_ERROR);
    done(&f);
}

static void test_liger_silu_mul(void)
{
    fx f;
    /* no strides recorded: the stride params are None */
    CHECK_I64(run(&f, &tl_pc_liger_silu_mul_function, 0, "LigerSiLUMulFunction", "[[2, 8], [2, 8]]",
                  "[\"c10::BFloat16\", \"c10::BFloat16\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 16);
    CHECK_DBL(f.r.bytes, 96);
    CHECK_STR(param(&f, "dtype_in1_in2_out"), "('c10::BFloat16', 'c10::BFloat16', None)");
    CHECK_STR(param(&f, "stride_input1"), "None");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);
}

static void test_primus_quantizers(void)
{
    fx f;
    CHECK_STR(tl_pc_primus_turbo_quantize_fp8.name, "primus_turbo_quantize_fp8");
    CHECK_STR(tl_pc_primus_turbo_quantize_fp8.sheet, "UnaryElementwise");
    CHECK_STR(tl_pc_primus_turbo_quantize_mxfp4_dual.name, "primus_turbo_quantize_mxfp4_dual");
    CHECK_STR(tl_pc_primus_turbo_quantize_mxfp4_dual.category, "elementwise");
    /* fp8: n·bpe_in + n·1 */
    CHECK_I64(run(&f, &tl_pc_primus_turbo_quantize_fp8, 0, "primus_turbo::quantize_fp8_tensorwise", "[[4, 8]]",
                  "[\"c10::BFloat16\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 32);
    CHECK_DBL(f.r.bytes, 32 * 2 + 32 * 1);
    CHECK_STR(keys(&f), "op_shape,dtype_in_out,stride_input,stride_output");
    CHECK_STR(param(&f, "dtype_in_out"), "('c10::BFloat16', 'c10::Float8_e4m3fnuz')");
    CHECK_STR(param(&f, "stride_input"), "None");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);

    /* (64, 100) bf16: 6400·2 + 2·3200 + 64·ceil(100/32) + 100·ceil(64/32) */
    CHECK_I64(run(&f, &tl_pc_primus_turbo_quantize_mxfp4_dual, 0, "primus::quantize_mxfp4_dual", "[[64, 100]]",
                  "[\"c10::BFloat16\"]", "[[100, 1]]", NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 6400);
    CHECK_DBL(f.r.bytes, 12800 + 6400 + 64 * 4 + 100 * 2);
    CHECK_STR(param(&f, "op_shape"), "(64, 100)");
    CHECK_STR(param(&f, "stride_input"), "(100, 1)");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);
    /* odd element count: 2·floor((15 + 1)/2) = 16 */
    run(&f, &tl_pc_primus_turbo_quantize_mxfp4_dual, 0, "primus::quantize_mxfp4_dual", "[[3, 5]]", "[\"float\"]",
        NULL, NULL);
    CHECK_DBL(f.r.bytes, 15 * 4 + 16 + 3 * 1 + 5 * 1);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_primus_turbo_quantize_mxfp4_dual, 0, "primus::quantize_mxfp4_dual", "[[2, 3, 4]]",
                  "[\"float\"]", NULL, NULL),
              TL_PERF_ERROR);
    done(&f);
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
