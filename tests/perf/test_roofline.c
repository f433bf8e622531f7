/* test_roofline.c — derived metrics (perf-model spec §5), Compute Spec,
 * arch files (§5.1–§5.3): loading every shipped file, platform names,
 * device-name detection, bad files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/arch.h"
#include "perf/roofline.h"
#include "test.h"

tl_test_ctx tl_test_state;

#define CHECK_NEAR(a, b, tol)                                                                     \
    do {                                                                                          \
        double a_ = (a), b_ = (b);                                                                \
        tl_test_state.checks++;                                                                   \
        if (!(fabs(a_ - b_) <= (tol))) {                                                          \
            tl_test_state.failures++;                                                             \
            fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); \
        }                                                                                         \
    } while (0)

/* bit-exact equality with the value Python computes */
#define CHECK_BITS(a, b)                                                                          \
    do {                                                                                          \
        double a_ = (a), b_ = (b);                                                                \
        tl_test_state.checks++;                                                                   \
        if (memcmp(&a_, &b_, sizeof a_) != 0) {                                                   \
            tl_test_state.failures++;                                                             \
            fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); \
        }                                                                                         \
    } while (0)

static int load_text(const char *text, tl_arch *a, tl_error *err)
{
    return tl_arch_load_text("test.json", text, strlen(text), a, err);
}

static void test_compute_spec(void)
{
    char b[TL_COMPUTE_SPEC_MAX];
    CHECK_STR(tl_compute_spec("matrix", "bf16", b), "matrix_bf16");
    CHECK_STR(tl_compute_spec("vector", "fp32", b), "vector_fp32");
    CHECK_STR(tl_compute_spec("vector", "bfloat16", b), "vector_bfloat16");
    CHECK_STR(tl_compute_spec(NULL, "bf16", b), "");
    CHECK_STR(tl_compute_spec("matrix", NULL, b), "");
    CHECK_STR(tl_compute_spec(NULL, NULL, b), "");
    CHECK_STR(tl_compute_spec("matrix", "", b), "matrix_");
}

/* §5.4: Qwen aten::mm 8944x2816x1024 bf16 with the MI300X file. */
static void test_illustration(void)
{
    tl_arch a;
    tl_error err;
    int rc = tl_arch_load_platform("MI300X", NULL, &a, &err);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    const double F = 2.0 * 8944 * 2816 * 1024, B = 2.0 * (8944 * 1024 + 1024 * 2816 + 8944 * 2816);
    CHECK_BITS(F, 51581550592.0);
    CHECK_BITS(B, 74457088.0);
    tl_perf_metrics m;
    tl_perf_metrics_compute(&m, F, 1, B, 84.468, "matrix_bf16", &a);
    CHECK(m.has_roofline);
    CHECK_NEAR(m.compute_time_us, 72.855, 5e-4);
    CHECK_NEAR(m.memory_time_us, 14.049, 5e-4);
    CHECK_BITS(m.roofline_time_us, m.compute_time_us);
    CHECK_STR(m.roofline_bound, "COMPUTE_BOUND");
    CHECK_NEAR(m.pct_roofline, 72.855 / 84.468 * 100, 1e-3);
    CHECK_BITS(m.gflops, 51.581550592);
    CHECK_NEAR(m.tflops_s, 610.6657, 5e-3);
    CHECK_NEAR(m.tb_s, 0.88149, 5e-5);
    CHECK_NEAR(m.flops_per_byte, 692.769, 5e-4);
    CHECK_NEAR(m.tflops_s / m.tb_s, m.flops_per_byte, 1e-9);
    /* no peak for the spec: no roofline keys (no fallback) */
    tl_perf_metrics_compute(&m, F, 1, B, 84.468, "matrix_fp4", &a);
    CHECK(!m.has_roofline && !m.roofline_bound);
    tl_perf_metrics_compute(&m, F, 1, B, 84.468, "vector_bfloat16", &a);
    CHECK(!m.has_roofline);
    tl_perf_metrics_compute(&m, F, 1, B, 84.468, "", &a);
    CHECK(!m.has_roofline);
    tl_perf_metrics_compute(&m, F, 1, B, 84.468, NULL, &a);
    CHECK(!m.has_roofline);
    /* no arch (§5.3) */
    tl_perf_metrics_compute(&m, F, 1, B, 84.468, "matrix_bf16", NULL);
    CHECK(!m.has_roofline);
    CHECK_BITS(m.gflops, 51.581550592);
    tl_arch_free(&a);
}

/* Reference values computed by Python with the formulas of §5. */
static const struct {
    long long F;
    double B, t, peak, bw;
    double g, tflops, mb, fpb, tbs, tc, tm, rt, pct;
    int compute_bound;
} py[] = {
    {51581550592LL, 74457088, 84.468, 708.0, 5300.0, 51.581550592, 610.6638086849457, 71.0078125, 692.7688414567059, 0.881482786380641, 72.85529744632768, 14.048507169811321, 72.85529744632768, 86.25195037922963, 1},
    {51581550592LL, 74457088, 72.0, 708.0, 5300.0, 51.581550592, 716.4104248888889, 71.0078125, 692.7688414567059, 1.034126222222222, 72.85529744632768, 14.048507169811321, 72.85529744632768, 101.18791311989956, 1},
    {1234567891234LL, 987654321, 3.25, 163.0, 5300.0, 1234.567891234, 379867.04345661536, 941.900559425354, 1249.9999898588, 303.89363723076923, 7574.036142539878, 186.34987188679247, 7574.036142539878, 233047.26592430394, 1},
    {13510798882111489LL, 12345, 1000.0, 989.4, 3350.0, 13510798.882111488, 13510798.882111488, 0.011773109436035156, 1094434903370.716, 1.2345000000000001e-05, 13655547.687600048, 0.0036850746268656718, 13655547.687600048, 1365554.7687600048, 1},
    {100LL, 7, 0.001, 81.0, 5300.0, 1e-07, 0.09999999999999998, 6.67572021484375e-06, 14.285714285714286, 0.006999999999999999, 1.234567901234568e-06, 1.3207547169811322e-06, 1.3207547169811322e-06, 0.1320754716981132, 0},
    {8LL, 1000000, 2.5, 163.0, 5300.0, 8e-09, 3.2e-06, 0.95367431640625, 8e-06, 0.39999999999999997, 4.907975460122699e-08, 0.18867924528301885, 0.18867924528301885, 7.547169811320755, 0},
};

static void test_bit_exact(void)
{
    for (size_t i = 0; i < sizeof py / sizeof *py; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"mem_bw_gbps\": %.17g, \"max_achievable_tflops\": {\"matrix_bf16\": %.17g}}",
                 py[i].bw, py[i].peak);
        tl_arch a;
        tl_error err;
        CHECK(load_text(text, &a, &err) == 0);
        tl_perf_metrics m;
        tl_perf_metrics_compute(&m, (double)py[i].F, 1, py[i].B, py[i].t, "matrix_bf16", &a);
        CHECK_BITS(m.gflops, py[i].g);
        CHECK_BITS(m.kernel_time_us, py[i].t);
        CHECK_BITS(m.tflops_s, py[i].tflops);
        CHECK_BITS(m.data_moved_mb, py[i].mb);
        CHECK_BITS(m.flops_per_byte, py[i].fpb);
        CHECK_BITS(m.tb_s, py[i].tbs);
        CHECK(m.has_roofline);
        CHECK_BITS(m.compute_time_us, py[i].tc);
        CHECK_BITS(m.memory_time_us, py[i].tm);
        CHECK_BITS(m.roofline_time_us, py[i].rt);
        CHECK_BITS(m.pct_roofline, py[i].pct);
        CHECK_STR(m.roofline_bound, py[i].compute_bound ? "COMPUTE_BOUND" : "MEMORY_BOUND");
        tl_arch_free(&a);
    }
}

static void test_nan_rules(void)
{
    tl_arch a;
    tl_error err;
    CHECK(load_text("{\"mem_bw_gbps\": 1000, \"max_achievable_tflops\": {\"matrix_bf16\": 100, "
                    "\"vector_fp32\": 10}}",
                    &a, &err) == 0);
    tl_perf_metrics m;
    /* t = 0 (no kernels): rates and Pct are NaN, the roofline keys exist */
    tl_perf_metrics_compute(&m, 2e12, 1, 4e9, 0, "matrix_bf16", &a);
    CHECK(isnan(m.tflops_s) && isnan(m.tb_s) && isnan(m.pct_roofline));
    CHECK(m.kernel_time_us == 0);
    CHECK(m.has_roofline);
    CHECK_BITS(m.compute_time_us, 20000.0);
    CHECK_BITS(m.memory_time_us, 4000.0);
    CHECK_STR(m.roofline_bound, "COMPUTE_BOUND");
    CHECK_BITS(m.data_moved_mb, 4e9 / 1048576.0);
    CHECK_BITS(m.flops_per_byte, 500.0);
    /* negative time counts as no time */
    tl_perf_metrics_compute(&m, 2e12, 1, 4e9, -1, "matrix_bf16", &a);
    CHECK(isnan(m.tflops_s) && isnan(m.tb_s) && isnan(m.pct_roofline));
    /* bytes None: the three byte metrics NaN, no roofline */
    tl_perf_metrics_compute(&m, 2e12, 0, 0, 10, "matrix_bf16", &a);
    CHECK(isnan(m.data_moved_mb) && isnan(m.flops_per_byte) && isnan(m.tb_s));
    CHECK_BITS(m.tflops_s, 199999.99999999997); /* (2000/1e3)/(10/1e6), as Python computes it */
    CHECK(!m.has_roofline && !m.roofline_bound);
    /* bytes 0: FLOPS/Byte NaN; Data Moved and TB/s 0; roofline with Tm = 0 */
    tl_perf_metrics_compute(&m, 2e12, 1, 0, 10, "matrix_bf16", &a);
    CHECK(isnan(m.flops_per_byte));
    CHECK(m.data_moved_mb == 0 && m.tb_s == 0);
    CHECK(m.has_roofline && m.memory_time_us == 0);
    CHECK_STR(m.roofline_bound, "COMPUTE_BOUND");
    /* g = 0: no roofline (g > 0 is required); TFLOPS/s is 0 */
    tl_perf_metrics_compute(&m, 0, 1, 4e9, 10, "matrix_bf16", &a);
    CHECK(!m.has_roofline);
    CHECK(m.tflops_s == 0 && m.gflops == 0);
    CHECK_BITS(m.flops_per_byte, 0.0);
    /* memory bound; Tc == Tm counts as compute bound */
    tl_perf_metrics_compute(&m, 1e9, 1, 4e9, 10, "vector_fp32", &a);
    CHECK(m.has_roofline);
    CHECK_STR(m.roofline_bound, "MEMORY_BOUND");
    CHECK_BITS(m.roofline_time_us, m.memory_time_us);
    tl_perf_metrics_compute(&m, 4e10, 1, 4e9, 10, "vector_fp32", &a);
    CHECK_BITS(m.compute_time_us, 4000.0);
    CHECK_BITS(m.compute_time_us, m.memory_time_us);
    CHECK_STR(m.roofline_bound, "COMPUTE_BOUND");
    tl_arch_free(&a);

    /* no mem_bw_gbps: no roofline */
    CHECK(load_text("{\"max_achievable_tflops\": {\"matrix_bf16\": 100}}", &a, &err) == 0);
    CHECK(!a.has_mem_bw);
    tl_perf_metrics_compute(&m, 2e12, 1, 4e9, 10, "matrix_bf16", &a);
    CHECK(!m.has_roofline);
    tl_arch_free(&a);
    CHECK(load_text("{\"mem_bw_gbps\": null, \"max_achievable_tflops\": {\"matrix_bf16\": 100}}", &a, &err) == 0);
    CHECK(!a.has_mem_bw);
    tl_arch_free(&a);

    /* from a model result */
    tl_perf_result r;
    memset(&r, 0, sizeof r);
    r.flops = 51581550592.0;
    r.has_bytes = 1;
    r.bytes = 74457088.0;
    r.maf = "matrix";
    r.precision = "bf16";
    char spec[TL_COMPUTE_SPEC_MAX];
    CHECK(tl_arch_load_platform("mi300x", NULL, &a, &err) == 0);
    tl_perf_metrics_from_result(&m, &r, 84.468, &a, spec);
    CHECK_STR(spec, "matrix_bf16");
    CHECK(m.has_roofline);
    CHECK_NEAR(m.roofline_time_us, 72.855, 5e-4);
    r.precision = NULL;
    tl_perf_metrics_from_result(&m, &r, 84.468, &a, spec);
    CHECK_STR(spec, "");
    CHECK(!m.has_roofline);
    tl_arch_free(&a);
}

static void test_shipped(void)
{
    static const struct {
        const char *platform;
        double bw, mem, bf16;
        const char *kind;
    } want[] = {
        {"A100", 2039, 80, 312, "datasheet_peak"},   {"B200", 8000, 180, 2250, "datasheet_peak"},
        {"H100", 3350, 80, 989.4, "datasheet_peak"}, {"H200", 4800, 141, 989.4, "datasheet_peak"},
        {"MI300X", 5300, 192, 708, "max_achievable"}, {"MI325X", 6000, 256, 843, "max_achievable"},
        {"MI355X", 8000, 288, 2516.6, "datasheet_peak"},
    };
    char dir[4096];
    CHECK(tl_arch_dir(dir, sizeof dir) == 0);
    printf("arch dir: %s\n", dir);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        tl_arch a;
        tl_error err;
        int rc = tl_arch_load_platform(want[i].platform, NULL, &a, &err);
        CHECK(rc == 0);
        if (rc) {
            fprintf(stderr, "%s\n", err.msg);
            continue;
        }
        CHECK_STR(a.name, want[i].platform);
        CHECK(a.has_mem_bw && a.mem_bw_gbps == want[i].bw);
        CHECK(a.has_memory_gb && a.memory_gb == want[i].mem);
        CHECK_STR(a.kind, want[i].kind);
        CHECK(a.source && *a.source);
        CHECK(a.n_peaks >= 7);
        CHECK(tl_arch_peak(&a, "matrix_bf16") == want[i].bf16);
        CHECK(isnan(tl_arch_peak(&a, "matrix_bfloat16")));
        CHECK(isnan(tl_arch_peak(&a, "MATRIX_BF16")));
        CHECK(isnan(tl_arch_peak(&a, NULL)));
        for (size_t k = 0; k < a.n_peaks; k++) CHECK(tl_arch_peak(&a, a.peaks[k].key) == a.peaks[k].tflops);
        tl_arch_free(&a);
    }
    CHECK(isnan(tl_arch_peak(NULL, "matrix_bf16")));

    /* MI300X values of §5.2, in file order */
    tl_arch a;
    tl_error err;
    CHECK(tl_arch_load_platform("mi300x", NULL, &a, &err) == 0);
    static const char *const keys[] = {"matrix_fp16", "matrix_bf16", "matrix_fp32", "matrix_fp64", "matrix_fp8",
                                       "matrix_int8", "vector_fp16", "vector_bf16", "vector_fp32", "vector_fp64"};
    static const double vals[] = {654, 708, 163, 81, 1273, 2600, 163, 163, 81, 40};
    CHECK_I64(a.n_peaks, 10);
    for (size_t k = 0; k < 10 && k < a.n_peaks; k++) {
        CHECK_STR(a.peaks[k].key, keys[k]);
        CHECK(a.peaks[k].tflops == vals[k]);
    }
    CHECK(isnan(tl_arch_peak(&a, "matrix_fp4")));
    CHECK(isnan(tl_arch_peak(&a, "vector_fp8")));
    CHECK(isnan(tl_arch_peak(&a, "vector_int8")));
    tl_arch_free(&a);

    /* platform names: case-insensitive stems */
    char path[4096];
    CHECK(tl_arch_find_platform("h100", NULL, path, sizeof path, &err) == 0);
    CHECK(strlen(path) > 9 && strcmp(path + strlen(path) - 9, "H100.json") == 0);
    CHECK(tl_arch_find_platform("Mi355x", dir, path, sizeof path, &err) == 0);
    CHECK(strstr(path, "MI355X.json") != NULL);
    CHECK(tl_arch_find_platform("MI999", NULL, path, sizeof path, &err) == -1);
    CHECK(strstr(err.msg, "unknown GPU platform 'MI999'") && strstr(err.msg, "MI300X") && !strchr(err.msg, '\n'));
    CHECK(tl_arch_find_platform("MI300X.json", NULL, path, sizeof path, &err) == -1);
    CHECK(tl_arch_find_platform("../arch/MI300X", NULL, path, sizeof path, &err) == -1);
    CHECK(tl_arch_find_platform("", NULL, path, sizeof path, &err) == -1);
    CHECK(tl_arch_find_platform(NULL, NULL, path, sizeof path, &err) == -1);
    CHECK(tl_arch_load_platform("nope", NULL, &a, &err) == -1);
    CHECK(a.n_peaks == 0 && !a.name);
    CHECK(tl_arch_find_platform("MI300X", "/nonexistent/arch", path, sizeof path, &err) == -1);
    CHECK(strstr(err.msg, "/nonexistent/arch") != NULL);
}

static void test_detect(void)
{
    static const char *const cases[][2] = {
        {"NVIDIA H100 80GB HBM3", "H100"},
        {"NVIDIA H100 PCIe", "H100"},
        {"NVIDIA H100-SXM5-80GB", "H100"},
        {"NVIDIA H200", "H200"},
        {"NVIDIA H200 NVL", "H200"},
        {"NVIDIA B200", "B200"},
        {"NVIDIA A100-SXM4-80GB", "A100"},
        {"NVIDIA A100 80GB PCIe", "A100"},
        {"AMD Instinct MI300X", "MI300X"},
        {"AMD Instinct MI300X VF", "MI300X"},
        {"AMD Instinct MI325X", "MI325X"},
        {"AMD Instinct MI355X", "MI355X"},
        {"amd instinct mi300x", "MI300X"},
        {"Tesla V100-SXM2-32GB", "V100-SXM2"},
        {"Tesla V100-SXM2-16GB", "V100-SXM2"},
        {"Tesla V100-PCIE-16GB", "V100-PCIe"},
        {"NVIDIA A10", "A10"},
        {"NVIDIA L4", "L4"},
        {"NVIDIA L40S", "L40S"},
        {"NVIDIA GB200", "GB200"},
        {"AMD Instinct MI210", "MI210"},
        {"AMD Instinct MI250X", "MI250X"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) CHECK_STR(tl_arch_detect(cases[i][0]), cases[i][1]);
    static const char *const unknown[] = {
        "", "AMD Instinct MI300A", "AMD Instinct MI350X", "NVIDIA GH200 480GB", "NVIDIA H20", "NVIDIA H800",
        "NVIDIA A1000", "NVIDIA A10G", "NVIDIA L40", "Tesla V100S-PCIE-32GB", "Tesla V100-SXM3-32GB",
        "AMD Instinct MI250", "AMD Radeon Graphics", "gfx942",
    };
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
        const char *p = tl_arch_detect(unknown[i]);
        CHECK(p == NULL);
        if (p) fprintf(stderr, "  detect(\"%s\") = %s\n", unknown[i], p);
    }
    CHECK(tl_arch_detect(NULL) == NULL);
    /* every detected platform has a shipped file */
    static const char *const all[] = {"H100", "H200", "B200", "A100", "MI300X", "MI325X", "MI355X", "GB200", "A10",
                                      "L4", "L40S", "V100-SXM2", "V100-PCIE", "MI210", "MI250X"};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        char path[4096];
        tl_error err;
        CHECK(tl_arch_find_platform(tl_arch_detect(all[i]), NULL, path, sizeof path, &err) == 0);
    }
}

/* One line naming the file, for every kind of bad file. */
static void check_bad(const char *dir, const char *text, const char *expect)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fwrite(text, 1, strlen(text), f);
    fclose(f);
    tl_arch a;
    tl_error err;
    int rc = tl_arch_load_file(path, &a, &err);
    CHECK(rc == -1);
    if (rc == 0) {
        fprintf(stderr, "  accepted: %s\n", text);
        tl_arch_free(&a);
        return;
    }
    CHECK(a.n_peaks == 0 && !a.peaks && !a.name && !a.path);
    CHECK(strncmp(err.msg, path, strlen(path)) == 0);
    CHECK(!strchr(err.msg, '\n'));
    CHECK(strstr(err.msg, expect) != NULL);
    if (!strstr(err.msg, expect)) fprintf(stderr, "  message: %s (expected \"%s\")\n", err.msg, expect);
    unlink(path);
}

static void test_bad_files(void)
{
    char dir[] = "/tmp/tl_arch_test_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    check_bad(dir, "", "byte 0: invalid JSON: expected a value");
    check_bad(dir, "{\"name\": \"X\" \"mem_bw_gbps\": 1}", "byte 13: invalid JSON: expected ',' or '}' in object");
    check_bad(dir, "{\"name\": \"X\",}", "invalid JSON: expected a string key");
    check_bad(dir, "{\"name\": \"X\"} x", "extra data");
    check_bad(dir, "{\"name\": \"X", "unterminated string");
    check_bad(dir, "{\"mem_bw_gbps\": NaN}", "invalid JSON");
    check_bad(dir, "{\"mem_bw_gbps\": 01}", "invalid JSON");
    check_bad(dir, "{\"mem_bw_gbps\": 1.}", "invalid number");
    check_bad(dir, "{\"name\": \"a\\qb\"}", "invalid escape");
    check_bad(dir, "{\"name\": \"a\\u12\"}", "invalid \\u escape");
    check_bad(dir, "\xEF\xBB\xBF{}", "byte order mark");
    check_bad(dir, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "nesting too deep");
    check_bad(dir, "[1, 2]", "must hold a JSON object");
    check_bad(dir, "{\"mem_bw_gbps\": \"5300\"}", "\"mem_bw_gbps\" must be a positive number");
    check_bad(dir, "{\"mem_bw_gbps\": 0}", "\"mem_bw_gbps\" must be a positive number");
    check_bad(dir, "{\"mem_bw_gbps\": -5}", "\"mem_bw_gbps\" must be a positive number");
    check_bad(dir, "{\"mem_bw_gbps\": 1e999}", "\"mem_bw_gbps\" must be a positive number");
    check_bad(dir, "{\"memory_gb\": true}", "\"memory_gb\" must be a number");
    check_bad(dir, "{\"name\": 5}", "\"name\" must be a string");
    check_bad(dir, "{\"max_achievable_tflops\": [1]}", "\"max_achievable_tflops\" must be an object");
    check_bad(dir, "{\"max_achievable_tflops\": {\"matrix_bf16\": \"708\"}}",
              "\"max_achievable_tflops\".\"matrix_bf16\" must be a positive number");
    check_bad(dir, "{\"max_achievable_tflops\": {\"matrix_fp16\": 1, \"matrix_bf16\": null}}",
              "\"matrix_bf16\" must be a positive number");

    tl_arch a;
    tl_error err;
    char path[4200];
    snprintf(path, sizeof path, "%s/missing.json", dir);
    CHECK(tl_arch_load_file(path, &a, &err) == -1);
    CHECK(strncmp(err.msg, path, strlen(path)) == 0 && strstr(err.msg, "cannot open") && !strchr(err.msg, '\n'));
    CHECK(tl_arch_load_file(dir, &a, &err) == -1); /* a directory */
    CHECK(strncmp(err.msg, dir, strlen(dir)) == 0 && !strchr(err.msg, '\n'));
    CHECK(tl_arch_load_text("mem.json", "{\"a\": 1}\0x", 10, &a, &err) == -1);
    CHECK(strstr(err.msg, "mem.json: byte 8: NUL byte") != NULL);
    rmdir(dir);
}

static void test_load_details(void)
{
    tl_arch a;
    tl_error err;
    /* unknown keys ignored; repeated keys: first position, last value */
    CHECK(load_text(" {\"name\": \"X\", \"freq_mhz\": 2100, \"_reference\": {\"a\": [1, null]},\n"
                    "  \"max_achievable_tflops\": {\"matrix_fp16\": 1, \"matrix_bf16\": 2.5, \"matrix_fp16\": 3},"
                    "  \"mem_bw_gbps\": 1e3, \"name\": \"Y\\u00e9\"} \n",
                    &a, &err) == 0);
    CHECK_STR(a.name, "Y\xc3\xa9");
    CHECK_STR(a.path, "test.json");
    CHECK(a.has_mem_bw && a.mem_bw_gbps == 1000);
    CHECK(!a.has_memory_gb && !a.kind && !a.source);
    CHECK_I64(a.n_peaks, 2);
    if (a.n_peaks == 2) {
        CHECK_STR(a.peaks[0].key, "matrix_fp16");
        CHECK(a.peaks[0].tflops == 3);
        CHECK_STR(a.peaks[1].key, "matrix_bf16");
        CHECK(a.peaks[1].tflops == 2.5);
    }
    tl_arch_free(&a);
    tl_arch_free(&a); /* idempotent */
    CHECK(load_text("{}", &a, &err) == 0);
    CHECK(a.n_peaks == 0 && !a.has_mem_bw && isnan(tl_arch_peak(&a, "matrix_bf16")));
    tl_arch_free(&a);
    CHECK(load_text("{\"max_achievable_tflops\": {}, \"memory_gb\": 0, \"mem_bw_gbps\": 123456789012345678901234}",
                    &a, &err) == 0);
    CHECK(a.n_peaks == 0 && a.has_memory_gb && a.memory_gb == 0);
    CHECK(a.has_mem_bw && a.mem_bw_gbps == 123456789012345678901234.0);
    tl_arch_free(&a);
}

/* $TRACELENS_ARCH_DIR overrides the shipped directory. */
static void test_env_dir(void)
{
    char dir[] = "/tmp/tl_arch_env_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[4200];
    snprintf(path, sizeof path, "%s/Custom-GPU.json", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"name\": \"custom\", \"mem_bw_gbps\": 100, \"max_achievable_tflops\": {\"matrix_bf16\": 1}}", f);
    fclose(f);
    setenv("TRACELENS_ARCH_DIR", dir, 1);
    char got[4096];
    CHECK(tl_arch_dir(got, sizeof got) == 0);
    char *real = realpath(dir, NULL);
    CHECK(real && strcmp(got, real) == 0);
    free(real);
    tl_arch a;
    tl_error err;
    CHECK(tl_arch_load_platform("custom-gpu", NULL, &a, &err) == 0);
    CHECK_STR(a.name, "custom");
    CHECK(tl_arch_peak(&a, "matrix_bf16") == 1);
    tl_arch_free(&a);
    CHECK(tl_arch_load_platform("MI300X", NULL, &a, &err) == -1);
    CHECK(strstr(err.msg, "available in ") && strstr(err.msg, ": Custom-GPU)"));
    unsetenv("TRACELENS_ARCH_DIR");
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    /* the shipped files are under test, whatever the environment says */
    unsetenv("TRACELENS_ARCH_DIR");
    test_compute_spec();
    test_illustration();
    test_bit_exact();
    test_nan_rules();
    test_shipped();
    test_detect();
    test_bad_files();
    test_load_details();
    test_env_dir();
    int failed = tl_test_state.failures;
    printf("%d passed, %d failed\n", tl_test_state.checks - failed, failed);
    return failed ? 1 : 0;
}
