/* test_model_reduce.c — the aten reduce perf model against the reference
 * CSV rows (h100 Qwen/timesformer/owlv2 Reduce_fwd.csv, sglang decode) and
 * the [FIX] dim/keepdim parsing computed by hand. */
#include <stdio.h>
#include <string.h>

#include "perf/model_reduce.h"
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
 * (NULL: the key is absent); extra: more `"key": value` pairs. */
static int run_x(fx *f, const tl_perf_class *c, int bwd, const char *name, const char *dims, const char *types,
                 const char *strides, const char *concrete, const char *extra)
{
    tl_sbuf j;
    tl_sb_init(&j);
    tl_sb_puts(&j, "{\"_\":0");
    if (dims) tl_sb_printf(&j, ",\"Input Dims\":%s", dims);
    if (types) tl_sb_printf(&j, ",\"Input type\":%s", types);
    if (strides) tl_sb_printf(&j, ",\"Input Strides\":%s", strides);
    if (concrete) tl_sb_printf(&j, ",\"Concrete Inputs\":%s", concrete);
    if (extra) tl_sb_printf(&j, ",%s", extra);
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

static int run(fx *f, const tl_perf_class *c, int bwd, const char *name, const char *dims, const char *types,
               const char *strides, const char *concrete)
{
    return run_x(f, c, bwd, name, dims, types, strides, concrete, NULL);
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
    fx f;
    CHECK_I64(run(&f, &tl_pc_aten_reduce, 0, "aten::mean", "[[16, 559, 1024], [], [], []]",
                  "[\"float\", \"ScalarList\", \"Scalar\", \"\"]", "[[572416, 1024, 1], [], [], []]",
                  "[\"\", \"[-1]\", \"True\", \"\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f, 0.009158656);
    CHECK_MB(&f, 34.97161865234375);
    CHECK_DBL((f.r.flops / 1e9 * 1e9) / f.r.bytes, 0.2497560975609756);
    CHECK_STR(keys(&f), "num_input_elems,num_output_elems,dtype_in_out,reduce_type");
    CHECK_STR(param(&f, "num_input_elems"), "9158656");
    CHECK_STR(param(&f, "num_output_elems"), "8944");
    CHECK_STR(param(&f, "dtype_in_out"), "('float', None)");
    CHECK_STR(param(&f, "reduce_type"), "mean");
    CHECK_STR(f.r.maf, "vector");
    CHECK_STR(f.r.precision, "fp32");
    done(&f);
    /* bwd metrics: flops_bwd = in, bytes_bwd = out·bpe + in·bpe */
    CHECK_I64(run(&f, &tl_pc_aten_reduce, 1, "aten::mean", "[[16, 559, 1024], [], [], []]",
                  "[\"float\", \"ScalarList\", \"Scalar\", \"\"]", "[[572416, 1024, 1], [], [], []]",
                  "[\"\", \"[-1]\", \"True\", \"\"]"),
              TL_PERF_OK);
    CHECK_GFLOPS(&f, 0.009158656);
    CHECK_MB(&f, 34.97161865234375);
    done(&f);
    /* timesformer mean over dim [1] of [1, 8, 768]: 768 outputs */
    run(&f, &tl_pc_aten_reduce, 0, "aten::mean", "[[1, 8, 768], [], [], []]",
        "[\"c10::BFloat16\", \"ScalarList\", \"Scalar\", \"\"]", "[[19273728, 2409216, 1], [], [], []]",
        "[\"\", \"[1]\", \"True\", \"\"]");
    CHECK_GFLOPS(&f, 6.144e-06);
    CHECK_STR(param(&f, "num_output_elems"), "768");
    CHECK_DBL(f.r.bytes, 6144 * 2 + 768 * 2);
    done(&f);
}

/* owlv2 rows: linalg_norm (ord, dim, keepdim, dtype) and max.dim. */
static void test_norm_and_max(void)
{
    fx f;
    /* [1, 768] over [-1] keeps 1 element: the reference row is unchanged */
    run(&f, &tl_pc_aten_reduce, 0, "aten::linalg_norm", "[[1, 768], [], [], [], []]",
        "[\"c10::BFloat16\", \"Scalar\", \"ScalarList\", \"Scalar\", \"\"]", "[[768, 1], [], [], [], []]",
        "[\"\", \"2\", \"[-1]\", \"True\", \"\"]");
    CHECK_GFLOPS(&f, 7.68e-07);
    CHECK_MB(&f, 0.0014667510986328125);
    CHECK_STR(param(&f, "reduce_type"), "norm");
    CHECK_STR(param(&f, "dtype_in_out"), "('c10::BFloat16', None)");
    done(&f);
    /* [1, 5184, 768] over [-1]: [FIX] 5184 outputs */
    run(&f, &tl_pc_aten_reduce, 0, "aten::linalg_norm", "[[1, 5184, 768], [], [], [], []]",
        "[\"c10::BFloat16\", \"\", \"ScalarList\", \"Scalar\", \"\"]", "[[3981312, 768, 1], [], [], [], []]",
        "[\"\", \"\", \"[-1]\", \"True\", \"\"]");
    CHECK_GFLOPS(&f, 0.003981312);
    CHECK_STR(param(&f, "num_output_elems"), "5184");
    CHECK_MB(&f, 7.6036376953125);
    done(&f);
    /* max.dim(self, -1, False) of [1, 5184, 1]: an int dim */
    run(&f, &tl_pc_aten_reduce, 0, "aten::max", "[[1, 5184, 1], [], []]", "[\"float\", \"Scalar\", \"Scalar\"]",
        "[[5184, 1, 1], [], []]", "[\"\", \"-1\", \"False\"]");
    CHECK_GFLOPS(&f, 5.184e-06);
    CHECK_STR(param(&f, "num_output_elems"), "5184");
    CHECK_STR(param(&f, "reduce_type"), "max");
    CHECK_MB(&f, 0.03955078125);
    done(&f);
    /* max.other(int [1], int [1]): elementwise, 1 output (reference row) */
    run(&f, &tl_pc_aten_reduce, 0, "aten::max", "[[1], [1]]", "[\"int\", \"int\"]", "[[2], [2]]", "[\"\", \"\"]");
    CHECK_GFLOPS(&f, 1e-09);
    CHECK_MB(&f, 7.62939453125e-06);
    CHECK(f.r.precision == NULL);
    done(&f);
    /* max.other with a real tensor: output elements = input elements */
    run(&f, &tl_pc_aten_reduce, 0, "aten::max", "[[4, 8], [4, 8]]", "[\"float\", \"float\"]", "[[8, 1], [8, 1]]",
        "[\"\", \"\"]");
    CHECK_STR(param(&f, "num_output_elems"), "32");
    done(&f);
}

/* sglang decode rows: cumsum keeps every element; a bare max reduces all. */
static void test_cumsum_and_full(void)
{
    fx f;
    run(&f, &tl_pc_aten_reduce, 0, "aten::cumsum", "[[32], [], []]", "[\"int\", \"Scalar\", \"\"]",
        "[[1], [], []]", "[\"\", \"0\", \"\"]");
    CHECK_GFLOPS(&f, 3.2e-08);
    CHECK_MB(&f, 0.000244140625);
    CHECK_STR(param(&f, "num_output_elems"), "32");
    CHECK_STR(param(&f, "reduce_type"), "sum");
    done(&f);
    run(&f, &tl_pc_aten_reduce, 0, "aten::max", "[[32]]", "[\"int\"]", "[[1]]", "[\"\"]");
    CHECK_MB(&f, 0.000125885009765625);
    CHECK_STR(param(&f, "num_output_elems"), "1");
    done(&f);
    run(&f, &tl_pc_aten_reduce, 0, "aten::cumprod", "[[4, 5], [], []]", "[\"float\", \"Scalar\", \"\"]",
        "[[5, 1], [], []]", "[\"\", \"1\", \"\"]");
    CHECK_STR(param(&f, "num_output_elems"), "20");
    done(&f);
}

/* [FIX] dim/keepdim walk details. */
static void test_dim_walk(void)
{
    fx f;
    /* std(self, dim, unbiased, keepdim): the unbiased bool is not the dim */
    run(&f, &tl_pc_aten_reduce, 0, "aten::std", "[[4, 6], [], [], []]", "[\"float\", \"\", \"Scalar\", \"Scalar\"]",
        "[[6, 1], [], [], []]", "[\"\", \"[1]\", \"True\", \"False\"]");
    CHECK_STR(param(&f, "num_output_elems"), "4");
    CHECK_STR(param(&f, "reduce_type"), "sum");
    done(&f);
    /* amax's default dim [] means all dims */
    run(&f, &tl_pc_aten_reduce, 0, "aten::amax", "[[4, 6], [], []]", "[\"float\", \"\", \"Scalar\"]",
        "[[6, 1], [], []]", "[\"\", \"[]\", \"False\"]");
    CHECK_STR(param(&f, "num_output_elems"), "1");
    CHECK_STR(param(&f, "reduce_type"), "max");
    done(&f);
    /* a dim outside [-ndim, ndim): full reduction */
    run(&f, &tl_pc_aten_reduce, 0, "aten::amin", "[[4, 6], [], []]", "[\"float\", \"\", \"Scalar\"]",
        "[[6, 1], [], []]", "[\"\", \"[2]\", \"False\"]");
    CHECK_STR(param(&f, "num_output_elems"), "1");
    CHECK_STR(param(&f, "reduce_type"), "min");
    done(&f);
    /* several dims, negative ones normalised, tuple literal */
    run(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[[4, 6, 8], [], [], []]",
        "[\"float\", \"\", \"Scalar\", \"\"]", "[[48, 8, 1], [], [], []]", "[\"\", \"(-1, 0)\", \"True\", \"\"]");
    CHECK_STR(param(&f, "num_output_elems"), "6");
    CHECK_DBL(f.r.bytes, 192 * 4 + 6 * 4);
    done(&f);
    /* no bool anywhere: no dim, full reduction */
    run(&f, &tl_pc_aten_reduce, 0, "aten::logsumexp", "[[4, 6], []]", "[\"float\", \"\"]", "[[6, 1], []]",
        "[\"\", \"[1]\"]");
    CHECK_STR(param(&f, "num_output_elems"), "1");
    done(&f);
}

static void test_dtypes_and_errors(void)
{
    fx f;
    /* an "Output type" arg sets the output dtype */
    run_x(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[[4, 6], [], []]", "[\"float\", \"\", \"Scalar\"]",
          "[[6, 1], [], []]", "[\"\", \"[1]\", \"False\"]", "\"Output type\": [\"c10::BFloat16\"]");
    CHECK_STR(param(&f, "dtype_in_out"), "('float', 'c10::BFloat16')");
    CHECK_DBL(f.r.bytes, 24 * 4 + 4 * 2);
    done(&f);
    /* bool input: bytes None */
    run(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[[4, 6]]", "[\"bool\"]", "[[6, 1]]", "[\"\"]");
    CHECK(!f.r.has_bytes);
    CHECK_DBL(f.r.flops, 24);
    done(&f);
    /* no Input Dims: everything 0, dtypes None */
    CHECK_I64(run(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[]", "[]", "[]", "[]"), TL_PERF_OK);
    CHECK_DBL(f.r.flops, 0);
    CHECK(!f.r.has_bytes);
    CHECK_STR(param(&f, "num_input_elems"), "0");
    CHECK_STR(param(&f, "dtype_in_out"), "(None, None)");
    done(&f);
    /* Input Dims[0] is not a shape */
    CHECK_I64(run(&f, &tl_pc_aten_reduce, 0, "aten::sum", "[[[2], [3]]]", "[\"TensorList\"]", "[[]]", "[\"\"]"),
              TL_PERF_ERROR);
    done(&f);
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_class, test_mean_keepdim, test_norm_and_max, test_cumsum_and_full, test_dim_walk,
        test_dtypes_and_errors
    };
    return TL_PERF_TEST_RUN(tests, NULL, NULL);
}
