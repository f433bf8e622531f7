/* test_model_norm.c — normalization perf models against the reference
 * Normalization.csv rows (Falconsai, timesformer, owlv2 layer norms) and
 * hand-computed values for the other norms, the backward ops and the
 * [FIX] affine/bias/training parsing. */
#include <stdio.h>
#include <string.h>

#include "perf/model_norm.h"
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
    fx f;
    CHECK_I64(run(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[4, 197, 768], [], [768], [768], [], []]", LN_TYPES,
                  "[[151296, 768, 1], [], [1], [1], [], []]",
                  "[\"\", \"[768]\", \"\", \"\", \"9.9999999999999998e-13\", \"True\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f, 0.003030528);
    CHECK_MB(&f, 2.3173828125);
    CHECK_STR(keys(&f), "op_shape,dtype_in_out,stride_input,stride_output,num_channels,has_bias,is_affine,is_training");
    CHECK_STR(param(&f, "op_shape"), "(4, 197, 768)");
    CHECK_STR(param(&f, "dtype_in_out"), "('c10::BFloat16', None)");
    CHECK_STR(param(&f, "stride_input"), "(151296, 768, 1)");
    CHECK_STR(param(&f, "stride_output"), "None");
    CHECK_STR(param(&f, "num_channels"), "768");
    CHECK_STR(param(&f, "has_bias"), "True");
    CHECK_STR(param(&f, "is_affine"), "True");
    CHECK_STR(param(&f, "is_training"), "True");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);
    run(&f, &tl_pc_LayerNorm, 0, "aten::native_layer_norm", "[[3136, 8, 768], [], [768], [768], []]",
        "[\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]",
        "[[6144, 768, 1], [], [1], [1], []]", "[\"\", \"[768]\", \"\", \"\", \"9.9999999999999995e-07\"]");
    CHECK_GFLOPS(&f, 0.096342528);
    CHECK_MB(&f, 73.5087890625);
    done(&f);
    run(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[1, 1024], [], [1024], [1024], [], []]", LN_TYPES,
        "[[5309440, 1], [], [1], [1], [], []]", "[\"\", \"[1024]\", \"\", \"\", \"1.0000000000000001e-05\", \"True\"]");
    CHECK_GFLOPS(&f, 1.1264e-05);
    CHECK_MB(&f, 0.015625);
    done(&f);
}

/* [FIX] weight/bias presence at D[2]/D[3]; the bwd metrics (base
 * formulas, every gradient wanted); malformed normalized_shape. */
static void test_layer_norm_fix_and_bwd(void)
{
    fx f;
    /* no weight, no bias: W = 2 + 2 (training) */
    run(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[2, 4], [], [], [], [], []]",
        "[\"float\", \"ScalarList\", \"\", \"\", \"Scalar\", \"Scalar\"]", "[[4, 1], [], [], [], [], []]",
        "[\"\", \"[4]\", \"\", \"\", \"1e-05\", \"True\"]");
    CHECK_STR(param(&f, "is_affine"), "False");
    CHECK_STR(param(&f, "has_bias"), "False");
    CHECK_DBL(f.r.flops, 6 * 4 + 5 * 8);
    CHECK_DBL(f.r.bytes, 8 * 4 * 2 + 4 * 4 * 4);
    done(&f);
    /* weight only: W = 5 */
    run(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[2, 4], [], [4], [], [], []]",
        "[\"float\", \"ScalarList\", \"float\", \"\", \"Scalar\", \"Scalar\"]", "[[4, 1], [], [1], [], [], []]",
        "[\"\", \"[4]\", \"\", \"\", \"1e-05\", \"True\"]");
    CHECK_DBL(f.r.bytes, 8 * 4 * 2 + 5 * 4 * 4);
    done(&f);
    /* bwd: E = 8, C = 4, epc 2: C·(4·2 + 5·2) = 72; bytes 16 + 32 + 8 + (8 + 16) */
    CHECK_I64(run(&f, &tl_pc_LayerNorm, 1, "aten::layer_norm", "[[2, 4], [], [4], [4], [], []]", LN_TYPES,
                  "[[4, 1], [], [1], [1], [], []]", "[\"\", \"[4]\", \"\", \"\", \"1e-05\", \"True\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 72);
    CHECK_DBL(f.r.bytes, 80);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_LayerNorm, 0, "aten::layer_norm", "[[2, 4], [], [4], [4], [], []]", LN_TYPES,
                  "[[4, 1], [], [1], [1], [], []]", "[\"\", \"\", \"\", \"\", \"1e-05\", \"True\"]"),
              TL_PERF_ERROR);
    done(&f);
}

#define LNB_DIMS "[[4, 197, 768], [4, 197, 768], [], [4, 197, 1], [4, 197, 1], [768], [768], []]"
#define LNB_TYPES                                                                                          \
    "[\"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"float\", \"float\", \"c10::BFloat16\", " \
    "\"c10::BFloat16\", \"ScalarList\"]"

static int run_lnb(fx *f, const char *mask)
{
    char concrete[128];
    snprintf(concrete, sizeof concrete, "[\"\", \"\", \"[768]\", \"\", \"\", \"\", \"\", \"%s\"]", mask);
    return run(f, &tl_pc_LayerNormBwd, 0, "aten::native_layer_norm_backward", LNB_DIMS, LNB_TYPES, NULL, concrete);
}

/* native_layer_norm_backward: affine and bias from output_mask. */
static void test_layer_norm_bwd(void)
{
    fx f;
    const int64_t E = 605184, C = 768;
    CHECK_I64(run_lnb(&f, "[True, True, True]"), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 9 * E);
    CHECK_DBL(f.r.bytes, E * 2 + 2 * E * 2 + C * 2 + C * 2 + 2 * C * 2);
    CHECK_STR(keys(&f),
              "op_shape,dtype_in_out,stride_input,stride_output,num_channels,has_bias,is_affine,is_training,output_mask");
    CHECK_STR(param(&f, "output_mask"), "(True, True, True)");
    CHECK_STR(param(&f, "num_channels"), "768");
    CHECK_STR(param(&f, "stride_input"), "None");
    done(&f);
    run_lnb(&f, "[True, False, False]");
    CHECK_STR(param(&f, "is_affine"), "False");
    CHECK_STR(param(&f, "has_bias"), "False");
    CHECK_DBL(f.r.flops, 9 * E);
    CHECK_DBL(f.r.bytes, E * 2 + 2 * E * 2 + C * 2);
    done(&f);
    /* no input grad: C·(4·epc + 2·epc) = 6E; one read of x */
    run_lnb(&f, "[False, True, True]");
    CHECK_DBL(f.r.flops, 6 * E);
    CHECK_DBL(f.r.bytes, E * 2 + E * 2 + C * 2 + (C * 2 + C * 2 * 2));
    done(&f);
    CHECK_I64(run_lnb(&f, "[True]"), TL_PERF_ERROR);
    done(&f);
    CHECK_I64(run_lnb(&f, ""), TL_PERF_ERROR);
    done(&f);
}

#define BN_DIMS "[[8, 16, 4, 4], [16], [16], [16], [16], [], [], [], []]"
#define BN_TYPES "[\"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]"

/* [FIX] batch_norm training is the literal of C[5] ("False" is False). */
static void test_batch_norm(void)
{
    fx f;
    const int64_t E = 2048, C = 16;
    CHECK_I64(run(&f, &tl_pc_BatchNorm, 0, "aten::batch_norm", BN_DIMS, BN_TYPES, NULL,
                  "[\"\", \"\", \"\", \"\", \"\", \"False\", \"0.10000000000000001\", \"1.0000000000000001e-05\", \"True\"]"),
              TL_PERF_OK);
    CHECK_STR(param(&f, "is_training"), "False");
    CHECK_STR(param(&f, "num_channels"), "16");
    CHECK_DBL(f.r.flops, 6 * C + 2 * E);
    CHECK_DBL(f.r.bytes, 2 * E * 4 + 4 * C * 4);
    CHECK_STR(f.r.precision, "fp32");
    done(&f);
    run(&f, &tl_pc_BatchNorm, 0, "aten::batch_norm", BN_DIMS, BN_TYPES, NULL,
        "[\"\", \"\", \"\", \"\", \"\", \"True\", \"0.1\", \"1e-05\", \"True\"]");
    CHECK_STR(param(&f, "is_training"), "True");
    CHECK_DBL(f.r.flops, 6 * C + 5 * E);
    CHECK_DBL(f.r.bytes, 2 * E * 4 + 6 * C * 4);
    done(&f);
    /* [FIX] no weight/bias: W = 2 */
    run(&f, &tl_pc_BatchNorm, 0, "aten::native_batch_norm", "[[8, 16, 4, 4], [], [], [16], [16], [], [], []]",
        BN_TYPES, NULL, "[\"\", \"\", \"\", \"\", \"\", \"False\", \"0.1\", \"1e-05\"]");
    CHECK_STR(param(&f, "is_affine"), "False");
    CHECK_STR(param(&f, "has_bias"), "False");
    CHECK_DBL(f.r.bytes, 2 * E * 4 + 2 * C * 4);
    done(&f);
    /* bwd metrics: NotImplementedError */
    CHECK_I64(run(&f, &tl_pc_BatchNorm, 1, "aten::batch_norm", BN_DIMS, BN_TYPES, NULL,
                  "[\"\", \"\", \"\", \"\", \"\", \"True\", \"0.1\", \"1e-05\", \"True\"]"),
              TL_PERF_NOT_IMPLEMENTED);
    done(&f);
    /* training flag missing: IndexError */
    CHECK_I64(run(&f, &tl_pc_BatchNorm, 0, "aten::batch_norm", "[[8, 16, 4, 4]]", "[\"float\"]", NULL, "[\"\"]"),
              TL_PERF_ERROR);
    done(&f);
}

static void test_batch_norm_bwd(void)
{
    fx f;
    const int64_t E = 2048, C = 16;
    /* native: input at 1, train = C[7], mask = [has_output]: flops 9E */
    CHECK_I64(run(&f, &tl_pc_BatchNormBwd, 0, "aten::native_batch_norm_backward",
                  "[[8, 16, 4, 4], [8, 16, 4, 4], [16], [16], [16], [16], [16], [], [], []]",
                  "[\"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", "
                  "\"Scalar\", \"ScalarList\"]",
                  NULL, "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"True\", \"1e-05\", \"[True, True, True]\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 9 * E);
    CHECK_DBL(f.r.bytes, E * 4 + E * 4 * 2 + C * 4 + (C * 4 + C * 4 * 2));
    CHECK_STR(param(&f, "output_mask"), "(True,)");
    CHECK_STR(param(&f, "is_training"), "True");
    done(&f);
    /* cudnn: input at 0, never training: C·(3 + 4·epc) */
    CHECK_I64(run(&f, &tl_pc_BatchNormBwd, 1, "aten::cudnn_batch_norm_backward",
                  "[[8, 16, 4, 4], [8, 16, 4, 4], [16], [16], [16], [16], [16], [], []]",
                  "[\"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"float\", \"Scalar\", \"\"]",
                  NULL, "[\"\", \"\", \"\", \"\", \"\", \"\", \"\", \"1e-05\", \"\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, C * 3 + 4 * E);
    CHECK_DBL(f.r.bytes, E * 4 + E * 4 + C * 4);
    CHECK_STR(param(&f, "is_training"), "False");
    done(&f);
}

#define GN_TYPES "[\"c10::BFloat16\", \"Scalar\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]"

static void test_group_norm(void)
{
    fx f;
    const int64_t E = 4096, C = 32;
    CHECK_I64(run(&f, &tl_pc_GroupNorm, 0, "aten::group_norm", "[[2, 32, 8, 8], [], [32], [32], [], []]", GN_TYPES,
                  NULL, "[\"\", \"4\", \"\", \"\", \"1e-05\", \"True\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 6 * C + 5 * E);
    CHECK_DBL(f.r.bytes, 2 * E * 2 + 6 * C * 2);
    CHECK_STR(param(&f, "num_channels"), "32");
    done(&f);
    /* [FIX] native_group_norm(input, weight?, bias?, N, C, HxW, group, eps): weight only */
    run(&f, &tl_pc_GroupNorm, 0, "aten::native_group_norm", "[[2, 32, 8, 8], [32], [], [], [], [], [], []]",
        GN_TYPES, NULL, "[\"\", \"\", \"\", \"2\", \"32\", \"64\", \"4\", \"1e-05\"]");
    CHECK_STR(param(&f, "is_affine"), "True");
    CHECK_STR(param(&f, "has_bias"), "False");
    CHECK_DBL(f.r.bytes, 2 * E * 2 + 5 * C * 2);
    done(&f);
    /* aiter::_groupnorm_run keeps the reference rule */
    run(&f, &tl_pc_GroupNorm, 0, "aiter::_groupnorm_run", "[[2, 32, 8, 8], [], []]", GN_TYPES, NULL, NULL);
    CHECK_STR(param(&f, "is_affine"), "True");
    CHECK_DBL(f.r.bytes, 2 * E * 2 + 6 * C * 2);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_GroupNorm, 0, "aiter::_groupnorm_run", "[[2, 32, 8, 8], []]", GN_TYPES, NULL, NULL),
              TL_PERF_ERROR);
    done(&f);
}

/* native_group_norm_backward: C = 32 / 4 groups = 8.0 (a float). */
static void test_group_norm_bwd(void)
{
    fx f;
    const char *types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"float\", \"float\", \"c10::BFloat16\", \"Scalar\", "
                        "\"Scalar\", \"Scalar\", \"Scalar\", \"ScalarList\"]";
    CHECK_I64(run(&f, &tl_pc_GroupNormBwd, 0, "aten::native_group_norm_backward",
                  "[[2, 32, 8, 8], [2, 32, 8, 8], [2, 4], [2, 4], [32], [], [], [], [], []]", types, NULL,
                  "[\"\", \"\", \"\", \"\", \"\", \"2\", \"32\", \"64\", \"4\", \"[True, True, True]\"]"),
              TL_PERF_OK);
    CHECK_STR(param(&f, "num_channels"), "8.0");
    CHECK_DBL(f.r.flops, 8.0 * (2048 + 2560));
    CHECK_DBL(f.r.bytes, 8192 + 16384 + 16 + (16 + 32));
    CHECK_STR(param(&f, "is_affine"), "True");
    done(&f);
    /* [FIX] the weight is D[4]; absent here */
    run(&f, &tl_pc_GroupNormBwd, 0, "aten::native_group_norm_backward",
        "[[2, 32, 8, 8], [2, 32, 8, 8], [2, 4], [2, 4], [], [], [], [], [], []]", types, NULL,
        "[\"\", \"\", \"\", \"\", \"\", \"2\", \"32\", \"64\", \"4\", \"[True, False, False]\"]");
    CHECK_STR(param(&f, "is_affine"), "False");
    CHECK_DBL(f.r.bytes, 8192 + 16384 + 16);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_GroupNormBwd, 0, "aten::native_group_norm_backward",
                  "[[2, 32, 8, 8], [2, 32, 8, 8], [2, 4], [2, 4], [32], [], [], [], [], []]", types, NULL,
                  "[\"\", \"\", \"\", \"\", \"\", \"2\", \"32\", \"64\", \"0\", \"[True, True, True]\"]"),
              TL_PERF_ERROR);
    done(&f);
}

static void test_instance_norm(void)
{
    fx f;
    CHECK_I64(run(&f, &tl_pc_InstanceNorm, 0, "aten::instance_norm", "[[2, 3, 4, 4], [], [], [], [], [], [], [], []]",
                  "[\"float\", \"\", \"\", \"\", \"\", \"Scalar\", \"Scalar\", \"Scalar\", \"Scalar\"]", NULL,
                  "[\"\", \"\", \"\", \"\", \"\", \"True\", \"0.1\", \"1e-05\", \"False\"]"),
              TL_PERF_OK);
    CHECK_STR(param(&f, "is_affine"), "False");
    CHECK_STR(param(&f, "is_training"), "True");
    CHECK_DBL(f.r.flops, 6 * 3 + 5 * 96);
    CHECK_DBL(f.r.bytes, 2 * 96 * 4 + 4 * 3 * 4);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_InstanceNormBwd, 0, "aten::instance_norm_backward", "[[2, 3, 4, 4]]", "[\"float\"]",
                  NULL, "[\"\"]"),
              TL_PERF_NOT_IMPLEMENTED);
    done(&f);
}

#define RMS_TYPES "[\"c10::BFloat16\", \"ScalarList\", \"c10::BFloat16\", \"Scalar\"]"

static void test_rms_norm(void)
{
    fx f;
    /* rows = 16: flops 16·(2·64 + 2) + 2E; bytes 2E·2 + C·2 */
    CHECK_I64(run(&f, &tl_pc_RMSNorm, 0, "aten::_fused_rms_norm", "[[2, 8, 64], [], [64], []]", RMS_TYPES, NULL,
                  "[\"\", \"[64]\", \"\", \"1e-06\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 16 * 130 + 2 * 1024);
    CHECK_DBL(f.r.bytes, 2 * 1024 * 2 + 64 * 2);
    CHECK_STR(param(&f, "has_bias"), "False");
    CHECK_STR(param(&f, "is_training"), "False");
    CHECK_STR(param(&f, "num_channels"), "64");
    done(&f);
    /* [FIX] no weight; rows = 10 / 4 = 2.5 */
    run(&f, &tl_pc_RMSNorm, 0, "aten::_fused_rms_norm", "[[10], [], [], []]", RMS_TYPES, NULL,
        "[\"\", \"[4]\", \"\", \"None\"]");
    CHECK_STR(param(&f, "is_affine"), "False");
    CHECK_DBL(f.r.flops, 2.5 * 10 + 10);
    CHECK_DBL(f.r.bytes, 10 * 2 * 2);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_RMSNorm, 0, "aten::_fused_rms_norm", "[[2, 8, 64], [], [64], []]", RMS_TYPES, NULL,
                  "[\"\", \"[0]\", \"\", \"1e-06\"]"),
              TL_PERF_ERROR);
    done(&f);
}

static void test_rms_norm_bwd(void)
{
    fx f;
    const char *types = "[\"c10::BFloat16\", \"c10::BFloat16\", \"ScalarList\", \"float\", \"c10::BFloat16\", "
                        "\"ScalarList\"]";
    /* affine, mask [T, T], rows 16 > 1: 10E; bytes 3E·2 + 2C·2 */
    CHECK_I64(run(&f, &tl_pc_RMSNormBwd, 0, "aten::_fused_rms_norm_backward",
                  "[[2, 8, 64], [2, 8, 64], [], [2, 8, 1], [64], []]", types, NULL,
                  "[\"\", \"\", \"[64]\", \"\", \"\", \"[True, True]\"]"),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 10 * 1024);
    CHECK_DBL(f.r.bytes, 1024 * 2 + 2 * 1024 * 2 + 2 * 64 * 2);
    CHECK_STR(param(&f, "output_mask"), "(True, True)");
    done(&f);
    /* one row (rows = 1): no second E for the weight grad */
    run(&f, &tl_pc_RMSNormBwd, 1, "aten::_fused_rms_norm_backward", "[[64], [64], [], [1], [64], []]", types, NULL,
        "[\"\", \"\", \"[64]\", \"\", \"\", \"[True, True]\"]");
    CHECK_DBL(f.r.flops, 9 * 64);
    done(&f);
    /* [FIX] no weight at D[4] */
    run(&f, &tl_pc_RMSNormBwd, 0, "aten::_fused_rms_norm_backward", "[[2, 8, 64], [2, 8, 64], [], [2, 8, 1], [], []]",
        types, NULL, "[\"\", \"\", \"[64]\", \"\", \"\", \"[False, True]\"]");
    CHECK_DBL(f.r.flops, 1024);
    CHECK_DBL(f.r.bytes, 1024 * 2 + 2 * 1024 * 2);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_RMSNormBwd, 0, "aten::_fused_rms_norm_backward",
                  "[[2, 8, 64], [2, 8, 64], [], [2, 8, 1], [64], []]", types, NULL,
                  "[\"\", \"\", \"[64]\", \"\", \"\", \"[True]\"]"),
              TL_PERF_ERROR);
    done(&f);
}

/* x = [T=4, B=2, H=8] bf16, E = 64. */
static void test_fused_ln_modulate(void)
{
    fx f;
    CHECK_I64(run(&f, &tl_pc_FusedLnModulate, 0, "primus::fused_ln_modulate", "[[4, 2, 8], [2, 8], [2, 8]]",
                  "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 12 * 64);
    CHECK_DBL(f.r.bytes, 2 * 64 * 2 + 2 * 2 * 8 * 2 + 2 * 4 * 2 * 4);
    CHECK_STR(param(&f, "num_channels"), "8");
    CHECK_STR(f.r.precision, "bf16");
    done(&f);
    CHECK_I64(run(&f, &tl_pc_FusedLnModulateBackward, 0, "primus::fused_ln_modulate_backward",
                  "[[4, 2, 8], [4, 2, 8], [2, 8], [2, 8]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", NULL, NULL),
              TL_PERF_OK);
    CHECK_DBL(f.r.flops, 15 * 64);
    CHECK_DBL(f.r.bytes, 2 * 64 * 2 + 2 * 2 * 4 * 4 + 64 * 2 + 2 * 2 * 8 * 2 + 2 * 8 * 2);
    done(&f);
    CHECK_I64(run(&f, &tl_pc_FusedLnModulate, 0, "primus::fused_ln_modulate", "[[4, 16]]", "[\"c10::BFloat16\"]",
                  NULL, NULL),
              TL_PERF_ERROR);
    done(&f);
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
