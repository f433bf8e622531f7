/* test_model_gemm.c — the GEMM perf models (perf-model spec §4.1, §4.7,
 * the GEMM classes of §4.9) and kernel-name parsing (§8): every h100 GEMM.csv
 * row bit for bit, mi300 / inference rows with `param: transpose`, the
 * worked examples of §7, the [FIX] cases and the error paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/kernel_name.h"
#include "perf/model_gemm.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

/* bit-exact equality with the value Python prints (text read back) */
static void check_bits(const char *file, int line, const char *what, double got, const char *want)
{
    double w = strtod(want, NULL);
    tl_test_state.checks++;
    if (memcmp(&got, &w, sizeof got) != 0) {
        tl_test_state.failures++;
        fprintf(stderr, "%s:%d: %s == %.17g, expected %s\n", file, line, what, got, want);
    }
}
#define CHECK_NUM(got, want) check_bits(__FILE__, __LINE__, #got, (got), (want))

/* One op event from JSON texts (NULL: the args key is absent). */
typedef struct tcase {
    const char *name, *dims, *types, *strides, *concrete;
    const char *const *kernels;
    size_t n_kernels;
} tcase;

#define EV(n, d, t) (&(tcase){.name = (n), .dims = (d), .types = (t)})
#define EVS(n, d, t, s) (&(tcase){.name = (n), .dims = (d), .types = (t), .strides = (s)})
#define EVC(n, d, t, c) (&(tcase){.name = (n), .dims = (d), .types = (t), .concrete = (c)})

static int run(const tl_perf_class *c, const tcase *t, tl_perf_result *r)
{
    tl_perf_event ev = tl_pt_event(t->name, t->dims, t->types, t->strides, t->concrete, NULL);
    ev.kernels = t->kernels;
    ev.n_kernels = t->n_kernels;
    return tl_pt_run(c, &ev, 0, r);
}

/* flops and bytes as exact integers, and the params. */
#define CHECK_MODEL(r, flops_, bytes_, params_)                   \
    do {                                                          \
        CHECK_I64((r)->status, TL_PERF_OK);                       \
        CHECK_I64((long long)(r)->flops, (flops_));               \
        CHECK((r)->has_bytes);                                    \
        CHECK_I64((long long)(r)->bytes, (bytes_));               \
        CHECK_STR(tl_pt_params(r), (params_));                    \
    } while (0)

static void expect_error(const tl_perf_class *c, const tcase *t)
{
    tl_perf_result r;
    CHECK_I64(run(c, t, &r), TL_PERF_ERROR);
    CHECK_I64(r.n_params, 0);
    CHECK(r.error[0] != '\0');
    tl_perf_result_free(&r);
}

#define BF16 "\"c10::BFloat16\""
#define FP8 "\"c10::Float8_e4m3fnuz\""
#define FP4 "\"c10::Float4_e2m1fn_x2\""
#define E8M0 "\"c10::Float8_e8m0fnu\""

/* --- §8 kernel names ------------------------------------------------------ */

static const char *const TENSILE_NT =
    "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT128x224x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_"
    "CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA512_LBSPPB128_LBSPPM0_"
    "LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_7_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_"
    "PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW4_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA4_"
    "VWB1_WSGRA0_WSGRB0_WS64_WG32_8_1";
static const char *const TENSILE_NN =
    "Cijk_Ailk_Bljk_S_B_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_"
    "DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA2_GRVWB2_GSUAMB_GLS0_ISA942_IU1_K1_LBSPPA256_LBSPPB512_LBSPPM0_LPA16_LPB8_"
    "LPM0_LRVW4_LWPMn1_MIAV0_MIWT1_1_MO40_NTn1_NTA4_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_"
    "SIA3_SS1_SPO0_SRVW0_SSO0_SVW1_SK0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_"
    "WS64_WG16_4_4";
static const char *const SM90 =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";

static void test_kname_tensile(void)
{
    tl_gemm_kname k;
    CHECK(tl_kname_parse_gemm(TENSILE_NT, &k));
    CHECK_I64(k.trans_a, 1);
    CHECK_I64(k.trans_b, 0);
    CHECK_I64(k.mt_m, 128);
    CHECK_I64(k.mt_n, 224);
    CHECK_I64(k.depth_u, 64);
    CHECK(tl_kname_parse_gemm(TENSILE_NN, &k));
    CHECK_I64(k.trans_a, 0);
    CHECK_I64(k.trans_b, 0);
    CHECK_I64(k.mt_m, 16);
    CHECK(tl_kname_parse_gemm("void foo<Cijk_Alik_Bjlk_HHS_BH_MT64x64x32_MI32>", &k)); /* any prefix */
    CHECK_I64(k.trans_a, 1);
    CHECK_I64(k.trans_b, 1);
    CHECK_I64(k.mt_n, 64);
    /* the marker matches, the layouts are neither: None; no macro tile */
    CHECK(tl_kname_parse_gemm("Cijk_Axyz_Bxyz_HHS", &k));
    CHECK_I64(k.trans_a, TL_KN_NONE);
    CHECK_I64(k.trans_b, TL_KN_NONE);
    CHECK_I64(k.mt_m, TL_KN_NONE);
    CHECK(tl_kname_parse_gemm("Cijk_Alik_Bljk_MTx_MT8x16_MT1x2x3", &k)); /* first complete MT */
    CHECK_I64(k.mt_m, 1);
    CHECK_I64(k.depth_u, 3);
    CHECK(!tl_kname_parse_gemm("Cijk_AliK_Bljk", &k));  /* [a-z] only */
    CHECK(!tl_kname_parse_gemm("Cijk_Alik_Blj", &k));   /* too short */
    CHECK(!tl_kname_parse_gemm("x\nCijk_Alik_Bljk", &k)); /* `.` stops at a newline */
    CHECK(tl_kname_parse_gemm("Cijk_Alik_Bljk\n", &k));  /* `$` before a final newline */
    CHECK(!tl_kname_parse_gemm(SM90, &k));
    CHECK(!tl_kname_parse_gemm("Memset (Device)", &k));
    CHECK(!tl_kname_parse_gemm(NULL, &k));
    CHECK_I64(k.trans_a, TL_KN_NONE);
}

static void test_kname_nvjet(void)
{
    tl_gemm_kname k;
    CHECK(tl_kname_parse_gemm("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT", &k));
    CHECK_I64(k.trans_a, 1);
    CHECK_I64(k.trans_b, 0);
    CHECK_I64(k.mt_m, TL_KN_NONE);
    CHECK(tl_kname_parse_gemm("nvjet_hsh_64x8_NT", &k));
    CHECK_I64(k.trans_a, 0);
    CHECK_I64(k.trans_b, 1);
    CHECK(tl_kname_parse_gemm("nvjetTT", &k)); /* no '_': the whole name is the token */
    CHECK_I64(k.trans_a, 0);
    CHECK_I64(k.trans_b, 0);
    CHECK(!tl_kname_parse_gemm("nvjet_x_T", &k)); /* token too short */
    CHECK(!tl_kname_parse_gemm("void nvjet_tst_TN", &k));
    const char *const names[] = {"Memset (Device)", SM90, "nvjet_a_NN", TENSILE_NT};
    CHECK_I64(tl_kname_first_gemm(names, 4, &k), 2);
    CHECK_I64(k.trans_a, 0);
    CHECK_I64(tl_kname_first_gemm(names, 2, &k), -1);
    CHECK_I64(tl_kname_first_gemm(NULL, 0, &k), -1);
}

/* --- h100 GEMM.csv: every distinct row, bit for bit ------------------------ */

typedef struct csv_row {
    const char *name, *dims, *types, *strides, *gflops, *mb, *spec, *params;
} csv_row;

/* name, Input Dims, Input type, Input Strides, GFLOPS_first, Data Moved (MB)_first,
 * Compute Spec, the row's `param:` cells in the class's order. Generated from
 * ../shared/data/traces/h100/ * /GEMM.csv. */
static const csv_row H100[] = {
    {"aten::addmm", "[[768],[788,768],[768,768],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[768,1],[1,768],[],[]]", "0.930167808", "3.43505859375", "matrix_bf16",
     "M=788|N=768|K=768|bias=True|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* Falconsai_nsfw_image_detection */
    {"aten::addmm", "[[3072],[788,768],[768,3072],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[768,1],[1,768],[],[]]", "3.720671232", "10.27734375", "matrix_bf16",
     "M=788|N=3072|K=768|bias=True|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* Falconsai_nsfw_image_detection */
    {"aten::addmm", "[[768],[788,3072],[3072,768],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[3072,1],[1,3072],[],[]]", "3.71885568", "10.27294921875", "matrix_bf16",
     "M=788|N=768|K=3072|bias=True|stride_A=(3072, 1)|stride_B=(1, 3072)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* Falconsai_nsfw_image_detection */
    {"aten::addmm", "[[768],[4,768],[768,768],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[151296,1],[1,768],[],[]]", "0.004721664", "1.13818359375", "matrix_bf16",
     "M=4|N=768|K=768|bias=True|stride_A=(151296, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* Falconsai_nsfw_image_detection */
    {"aten::mm", "[[8944,1024],[1024,2816]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[1024,1],[1,1024]]", "51.581550592", "71.0078125", "matrix_bf16",
     "M=8944|N=2816|K=1024|bias=False|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* Qwen_Qwen1.5-0.5B-Chat */
    {"aten::addmm", "[[1024],[8944,1024],[1024,1024],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[1024,1],[1,1024],[],[]]", "18.766086144", "36.939453125", "matrix_bf16",
     "M=8944|N=1024|K=1024|bias=True|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* Qwen_Qwen1.5-0.5B-Chat */
    {"aten::mm", "[[8944,2816],[2816,1024]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[2816,1],[1,2816]]", "51.581550592", "71.0078125", "matrix_bf16",
     "M=8944|N=1024|K=2816|bias=False|stride_A=(2816, 1)|stride_B=(1, 2816)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* Qwen_Qwen1.5-0.5B-Chat */
    {"aten::mm", "[[8944,1024],[1024,1024]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[1024,1],[1,1024]]", "18.756927488", "36.9375", "matrix_bf16",
     "M=8944|N=1024|K=1024|bias=False|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* Qwen_Qwen1.5-0.5B-Chat */
    {"aten::bmm", "[[1,32,1],[1,1,559]]", "[\"float\", \"float\"]", "[[32,1,1],[559,559,1]]", "3.5776e-05", "0.07049179077148438", "matrix_fp32",
     "B=1|M=32|N=559|K=1|bias=False|stride_A=(32, 1, 1)|stride_B=(559, 559, 1)|dtype_A_B=('float', 'float')"}, /* Qwen_Qwen1.5-0.5B-Chat */
    {"aten::bmm", "[[96,3137,64],[96,64,3137]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[200768,64,1],[200768,3137,1]]", "120.923369472", "1875.4220581054688", "matrix_bf16",
     "B=96|M=3137|N=3137|K=64|bias=False|stride_A=(200768, 64, 1)|stride_B=(200768, 3137, 1)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::bmm", "[[96,3137,3137],[96,3137,64]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[9840769,3137,1],[200768,64,1]]", "120.923369472", "1875.4220581054688", "matrix_bf16",
     "B=96|M=3137|N=64|K=3137|bias=False|stride_A=(9840769, 3137, 1)|stride_B=(200768, 64, 1)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::addmm", "[[3072],[25089,768],[768,3072],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[768,1],[1,768],[],[]]", "118.461828096", "188.26318359375", "matrix_bf16",
     "M=25089|N=3072|K=768|bias=True|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::addmm", "[[768],[25089,3072],[3072,768],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[3072,1],[1,3072],[],[]]", "118.40402304", "188.2587890625", "matrix_bf16",
     "M=25089|N=768|K=3072|bias=True|stride_A=(3072, 1)|stride_B=(1, 3072)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::addmm", "[[2304],[25096,768],[768,2304],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[768,1],[1,768],[],[]]", "88.871159808", "150.42626953125", "matrix_bf16",
     "M=25096|N=2304|K=768|bias=True|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::addmm", "[[2304],[25088,768],[768,2304],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[768,1],[1,768],[],[]]", "88.842829824", "150.37939453125", "matrix_bf16",
     "M=25088|N=2304|K=768|bias=True|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::bmm", "[[37632,8,8],[37632,8,64]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[64,8,1],[512,64,1]]", "0.308281344", "78.09375", "matrix_bf16",
     "B=37632|M=8|N=64|K=8|bias=False|stride_A=(64, 8, 1)|stride_B=(512, 64, 1)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::addmm", "[[768],[25088,768],[768,768],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[768,1],[1,768],[],[]]", "29.614276608", "74.62646484375", "matrix_bf16",
     "M=25088|N=768|K=768|bias=True|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::addmm", "[[768],[25096,768],[768,768],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[768,1],[1,768],[],[]]", "29.623719936", "74.64990234375", "matrix_bf16",
     "M=25096|N=768|K=768|bias=True|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::bmm", "[[37632,8,64],[37632,64,8]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[512,64,1],[512,8,1]]", "0.308281344", "78.09375", "matrix_bf16",
     "B=37632|M=8|N=8|K=64|bias=False|stride_A=(512, 64, 1)|stride_B=(512, 8, 1)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::addmm", "[[400],[1,768],[768,400],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[19268352,1],[1,768],[],[]]", "0.0006148", "0.58892822265625", "matrix_bf16",
     "M=1|N=400|K=768|bias=True|stride_A=(19268352, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* facebook_timesformer-base-finetuned-k400 */
    {"aten::addmm", "[[512],[141,512],[512,512],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[512,1],[1,512],[],[]]", "0.0739968", "0.7763671875", "matrix_bf16",
     "M=141|N=512|K=512|bias=True|stride_A=(512, 1)|stride_B=(1, 512)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* gaunernst_bert-small-uncased */
    {"aten::addmm", "[[30522],[141,512],[512,30522],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[512,1],[1,512],[],[]]", "4.41119205", "38.211021423339844", "matrix_bf16",
     "M=141|N=30522|K=512|bias=True|stride_A=(512, 1)|stride_B=(1, 512)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* gaunernst_bert-small-uncased */
    {"aten::addmm", "[[512],[141,2048],[2048,512],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[2048,1],[1,2048],[],[]]", "0.295770624", "2.689453125", "matrix_bf16",
     "M=141|N=512|K=2048|bias=True|stride_A=(2048, 1)|stride_B=(1, 2048)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* gaunernst_bert-small-uncased */
    {"aten::addmm", "[[2048],[141,512],[512,2048],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[512,1],[1,512],[],[]]", "0.2959872", "2.6923828125", "matrix_bf16",
     "M=141|N=2048|K=512|bias=True|stride_A=(512, 1)|stride_B=(1, 512)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* gaunernst_bert-small-uncased */
    {"aten::bmm", "[[16,5185,64],[16,64,5185]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[331840,64,1],[331840,1,64]]", "55.0588928", "840.6953430175781", "matrix_bf16",
     "B=16|M=5185|N=5185|K=64|bias=False|stride_A=(331840, 64, 1)|stride_B=(331840, 1, 64)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::bmm", "[[16,5185,5185],[16,5185,64]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[26884225,5185,1],[331840,64,1]]", "55.0588928", "840.6953430175781", "matrix_bf16",
     "B=16|M=5185|N=64|K=5185|bias=False|stride_A=(26884225, 5185, 1)|stride_B=(331840, 64, 1)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[1024],[5185,1024],[1024,1024],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[1024,1],[1,1024],[],[]]", "10.87904256", "22.255859375", "matrix_bf16",
     "M=5185|N=1024|K=1024|bias=True|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[1024],[5185,4096],[4096,1024],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[4096,1],[1,4096],[],[]]", "43.50024192", "58.63671875", "matrix_bf16",
     "M=5185|N=1024|K=4096|bias=True|stride_A=(4096, 1)|stride_B=(1, 4096)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[4096],[5185,1024],[1024,4096],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[1024,1],[1,1024],[],[]]", "43.51617024", "58.642578125", "matrix_bf16",
     "M=5185|N=4096|K=1024|bias=True|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[768],[5,768],[768,768],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[768,1],[1,768],[],[]]", "0.00590208", "1.14111328125", "matrix_bf16",
     "M=5|N=768|K=768|bias=True|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[768],[5,3072],[3072,768],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[3072,1],[1,3072],[],[]]", "0.0235968", "4.5380859375", "matrix_bf16",
     "M=5|N=768|K=3072|bias=True|stride_A=(3072, 1)|stride_B=(1, 3072)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[1024],[5184,1024],[1024,1024],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[1024,1],[1,1024],[],[]]", "10.876944384", "22.251953125", "matrix_bf16",
     "M=5184|N=1024|K=1024|bias=True|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[3072],[5,768],[768,3072],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[768,1],[1,768],[],[]]", "0.02360832", "4.54248046875", "matrix_bf16",
     "M=5|N=3072|K=768|bias=True|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::bmm", "[[12,5,64],[12,64,5]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[320,64,1],[320,1,64]]", "3.84e-05", "0.01522064208984375", "matrix_bf16",
     "B=12|M=5|N=5|K=64|bias=False|stride_A=(320, 64, 1)|stride_B=(320, 1, 64)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::bmm", "[[12,5,5],[12,5,64]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[25,5,1],[320,64,1]]", "3.84e-05", "0.01522064208984375", "matrix_bf16",
     "B=12|M=5|N=64|K=5|bias=False|stride_A=(25, 5, 1)|stride_B=(320, 64, 1)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[1],[5184,1024],[1024,1],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[1024,1],[1,1024],[],[]]", "0.010622016", "10.136842727661133", "matrix_bf16",
     "M=5184|N=1|K=1024|bias=True|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[768],[5184,1024],[1024,768],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[1024,1],[1,1024],[],[]]", "8.157708288", "19.22021484375", "matrix_bf16",
     "M=5184|N=768|K=1024|bias=True|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::addmm", "[[4],[5184,1024],[1024,4],[],[]]", "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\", \"Scalar\"]", "[[1],[1024,1],[1,1024],[],[]]", "0.042488064", "10.172370910644531", "matrix_bf16",
     "M=5184|N=4|K=1024|bias=True|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::bmm", "[[1,5184,768],[1,768,1]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[3981312,768,1],[768,1,1]]", "0.007962624", "7.6051025390625", "matrix_bf16",
     "B=1|M=5184|N=1|K=768|bias=False|stride_A=(3981312, 768, 1)|stride_B=(768, 1, 1)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::mm", "[[1,768],[768,1]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[768,1],[1,768]]", "1.536e-06", "0.0029315948486328125", "matrix_bf16",
     "M=1|N=1|K=768|bias=False|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::mm", "[[1,768],[768,768]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[768,1],[1,768]]", "0.001179648", "1.1279296875", "matrix_bf16",
     "M=1|N=768|K=768|bias=False|stride_A=(768, 1)|stride_B=(1, 768)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
    {"aten::mm", "[[1,1024],[1024,768]]", "[\"c10::BFloat16\", \"c10::BFloat16\"]", "[[1024,1],[1,1024]]", "0.001572864", "1.50341796875", "matrix_bf16",
     "M=1|N=768|K=1024|bias=False|stride_A=(1024, 1)|stride_B=(1, 1024)|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"}, /* google_owlv2-large-patch14-ensemble */
};

static void check_row(const csv_row *row, const char *const *kernels, size_t nk, const char *extra)
{
    const tl_perf_class *c = !strcmp(row->name, "aten::mm")      ? &tl_pc_aten_mm
                             : !strcmp(row->name, "aten::addmm") ? &tl_pc_aten_addmm
                             : !strcmp(row->name, "aten::bmm")   ? &tl_pc_aten_bmm
                             : !strcmp(row->name, "aiter::gemm_a16w16") ? &tl_pc_gemm_a16w16
                                                                        : &tl_pc_vllm_rocm_unquantized_gemm;
    tcase t = {row->name, row->dims, row->types, row->strides, NULL, kernels, nk};
    tl_perf_result r;
    CHECK_I64(run(c, &t, &r), TL_PERF_OK);
    CHECK_NUM(r.flops / 1e9, row->gflops);
    CHECK(r.has_bytes);
    CHECK_NUM(r.bytes / (1024 * 1024), row->mb);
    CHECK_STR(tl_pt_compute_spec(&r), row->spec);
    char want[1024];
    snprintf(want, sizeof want, "%s%s", row->params, extra);
    CHECK_STR(tl_pt_params(&r), want);
    tl_perf_result_free(&r);
}

static void test_h100_rows(void)
{
    /* h100 kernels (cuBLAS sm90 / CUTLASS) never give a transpose */
    const char *const kernels[] = {"Memset (Device)", SM90};
    for (size_t i = 0; i < sizeof H100 / sizeof *H100; i++) check_row(&H100[i], kernels, 2, "");
}

/* §7 E1, E2 and the bert single-instance row. */
static void test_worked_examples(void)
{
    tl_perf_result r;
    run(&tl_pc_aten_mm, EV("aten::mm", "[[8944,1024],[1024,2816]]", "[" BF16 "," BF16 "]"), &r);
    CHECK_MODEL(&r, 51581550592LL, 74457088,
                "M=8944|N=2816|K=1024|bias=False|stride_A=None|stride_B=None|"
                "dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1");
    CHECK_NUM(r.flops / 1e9, "51.581550592");
    CHECK_NUM(r.bytes / 1048576, "71.0078125");
    CHECK_NUM(r.flops / 1e9 * 1e9 / r.bytes, "692.7688414567059");
    CHECK_STR(r.maf, "matrix");
    CHECK_STR(r.precision, "bf16");
    tl_perf_result_free(&r);

    run(&tl_pc_aten_addmm, EV("aten::addmm", "[[1024],[8944,1024],[1024,1024],[],[]]", "[" BF16 "," BF16 "," BF16 ",\"Scalar\",\"Scalar\"]"), &r);
    CHECK_I64((long long)r.flops, 18766086144LL);
    CHECK_I64((long long)r.bytes, 38733824);
    CHECK_NUM(r.flops / 1e9, "18.766086144");
    CHECK_NUM(r.bytes / 1048576, "36.939453125");
    tl_perf_result_free(&r);

    run(&tl_pc_aten_addmm, EV("aten::addmm", "[[30522],[141,512],[512,30522],[],[]]", "[" BF16 "," BF16 "," BF16 ",\"Scalar\",\"Scalar\"]"), &r);
    CHECK_NUM(r.flops / 1e9, "4.41119205");
    CHECK_I64((long long)r.bytes, 40067160);
    CHECK_NUM(r.bytes / 1048576, "38.211021423339844");
    tl_perf_result_free(&r);
}

/* mi300 GEMM.csv: ROCm Tensile names give `param: transpose` after B. */
static void test_mi300_transpose(void)
{
    const char *const nt[] = {TENSILE_NT}, *const nn[] = {TENSILE_NN};
    const csv_row mm = {"aten::mm", "[[8944,1024],[1024,2816]]", "[" BF16 "," BF16 "]", "[[1024,1],[1,1024]]",
                        "51.581550592", "71.0078125", "matrix_bf16",
                        "M=8944|N=2816|K=1024|bias=False|stride_A=(1024, 1)|stride_B=(1, 1024)|"
                        "dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1"};
    check_row(&mm, nt, 1, "|transpose=(True, False)");
    const csv_row bmm = {"aten::bmm", "[[1,32,1],[1,1,559]]", "[\"float\",\"float\"]", "[[32,1,1],[559,559,1]]",
                         "3.5776e-05", "0.07049179077148438", "matrix_fp32",
                         "B=1|M=32|N=559|K=1|bias=False|stride_A=(32, 1, 1)|stride_B=(559, 559, 1)|"
                         "dtype_A_B=('float', 'float')"};
    check_row(&bmm, nn, 1, "|transpose=(False, False)");
    /* the first name that parses wins; nvjet too */
    const char *const mixed[] = {"Memset (Device)", "nvjet_tst_64x8_TNT", TENSILE_NN};
    check_row(&mm, mixed, 3, "|transpose=(True, False)");
    const char *const none_flags[] = {"Cijk_Axyz_Bjlk_X"};
    check_row(&mm, none_flags, 1, "|transpose=(None, True)");
}

/* inference GEMM.csv rows (sglang aiter::gemm_a16w16, vllm rocm_unquantized_gemm). */
static void test_inference_rows(void)
{
    const char *const k[] = {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN"};
    const csv_row a16 = {"aiter::gemm_a16w16", "[[32,4096],[24576,4096],[],[],[],[],[]]",
                         "[" BF16 "," BF16 ",\"\",\"Scalar\",\"\",\"\",\"\"]", "[[4096,1],[4096,1],[],[],[],[],[]]",
                         "6.442450944", "193.75", "matrix_bf16",
                         "B=1|M=32|N=24576|K=4096|bias=False|"
                         "dtype_A_B=('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')"};
    check_row(&a16, k, 1, "|transpose=(True, False)");
    const csv_row rocm = {"vllm::rocm_unquantized_gemm", "[[32,2880],[5120,2880],[5120]]",
                          "[" BF16 "," BF16 "," BF16 "]", NULL, "0.94388224", "28.623046875", "matrix_bf16",
                          "M=32|N=5120|K=2880|bias=True|"
                          "dtype_A_B=('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')|B=1"};
    check_row(&rocm, k, 1, "|transpose=(True, False)");
}

/* [FIX] addmm / baddbmm count the added `self` as numel(D[0]) once. */
static void test_bias_fix(void)
{
    tl_perf_result r;
    /* addmm with a full [M, N] input: (MK + KN + MN)·2 + MN·2 (reference: + N·2 = 28928) */
    run(&tl_pc_aten_addmm, EV("aten::addmm", "[[64,128],[64,32],[32,128],[],[]]", "[" BF16 "," BF16 "," BF16 ",\"Scalar\",\"Scalar\"]"), &r);
    CHECK_I64((long long)r.flops, 532480);
    CHECK_I64((long long)r.bytes, 45056);
    tl_perf_result_free(&r);
    /* baddbmm with a [N] bias: B(MK + KN + MN)·2 + N·2 (reference: B·(... + N)·2 = 115712) */
    run(&tl_pc_aten_baddbmm, EV("aten::baddbmm", "[[128],[4,64,32],[4,32,128],[],[]]", "[" BF16 "," BF16 "," BF16 ",\"Scalar\",\"Scalar\"]"), &r);
    CHECK_MODEL(&r, 2129920, 114944,
                "B=4|M=64|N=128|K=32|bias=True|stride_A=None|stride_B=None|"
                "dtype_A_B=('c10::BFloat16', 'c10::BFloat16')");
    tl_perf_result_free(&r);
    /* baddbmm with a [B, M, N] input: + B·M·N·2 */
    run(&tl_pc_aten_baddbmm, EV("aten::baddbmm", "[[4,64,128],[4,64,32],[4,32,128],[],[]]", "[" BF16 "," BF16 "," BF16 ",\"Scalar\",\"Scalar\"]"), &r);
    CHECK_I64((long long)r.bytes, 180224);
    tl_perf_result_free(&r);
}

static void test_scaled_mm(void)
{
    tl_perf_result r;
    const char *dims = "[[128,256],[256,512],[],[],[512],[],[],[]]";
    const char *types = "[\"c10::Float8_e4m3fn\",\"c10::Float8_e4m3fn\",\"float\",\"float\"," BF16 ",\"\",\"\",\"\"]";
    /* [FIX] _scaled_mm's bias is D[4], its bytes bpe(T[4]); fp8 output is 2 bytes */
    run(&tl_pc_aten_scaled_mm, EV("aten::_scaled_mm", dims, types), &r);
    CHECK_MODEL(&r, 33619968, 295936,
                "M=128|N=512|K=256|bias=True|stride_A=None|stride_B=None|"
                "dtype_A_B=('c10::Float8_e4m3fn', 'c10::Float8_e4m3fn')|B=1");
    CHECK_STR(r.precision, "fp8");
    tl_perf_result_free(&r);
    /* trtllm keeps bias = False */
    run(&tl_pc_aten_scaled_mm, EV("trtllm::cublas_scaled_mm", dims, types), &r);
    CHECK_I64((long long)r.flops, 33554432);
    CHECK_I64((long long)r.bytes, 294912);
    tl_perf_result_free(&r);
    /* [FIX] bitsandbytes' weight is [N, K]; int8 precision (§2.2 FIX) */
    run(&tl_pc_aten_scaled_mm, EV("bitsandbytes::int8_linear_matmul", "[[128,256],[512,256]]", "[\"signed char\",\"signed char\"]"), &r);
    CHECK_I64((long long)r.flops, 33554432);
    CHECK_I64((long long)r.bytes, 294912);
    CHECK_STR(r.precision, "int8");
    tl_perf_result_free(&r);
    /* bf16 inputs: output bpe = input bpe; e5m2 is fp8 */
    run(&tl_pc_aten_scaled_mm, EV("aten::_scaled_mm", "[[2,4],[4,8]]", "[" BF16 "," BF16 "]"), &r);
    CHECK_I64((long long)r.bytes, (2 * 4 + 4 * 8 + 2 * 8) * 2);
    tl_perf_result_free(&r);
    run(&tl_pc_aten_scaled_mm, EV("aten::_scaled_mm", "[[2,4],[4,8]]", "[\"c10::Float8_e5m2\",\"c10::Float8_e5m2\"]"), &r);
    CHECK_STR(r.precision, "fp8");
    tl_perf_result_free(&r);
    /* an 8-byte input has no output size: bytes None */
    run(&tl_pc_aten_scaled_mm, EV("aten::_scaled_mm", "[[2,4],[4,8]]", "[\"double\",\"double\"]"), &r);
    CHECK_I64(r.status, TL_PERF_OK);
    CHECK(!r.has_bytes);
    tl_perf_result_free(&r);
    /* AssertionError on an unknown A or B dtype */
    expect_error(&tl_pc_aten_scaled_mm, EV("aten::_scaled_mm", "[[2,4],[4,8]]", "[\"bool\"," BF16 "]"));
    expect_error(&tl_pc_aten_scaled_mm, EV("aten::_scaled_mm", "[[2,4],[4,8]]", "[" BF16 ",\"\"]"));
}

#define TE_TYPES(t18) "[" BF16 ",\"\",\"\",\"\",\"\"," BF16 ",\"\",\"\",\"\",\"\"," BF16 ",\"\",\"\",\"\",\"\",\"\",\"\",\"\"," t18 "]"
#define TE_CONC(ta, tb, bias) "[\"\",\"\",\"\",\"\",\"" ta "\",\"\",\"\",\"\",\"\",\"" tb "\",\"\",\"\",\"\",\"\",\"" bias "\",\"\",\"\",\"\",\"\"]"

static void test_te_gemm_ts(void)
{
    const char *dims = "[[256,64],[],[],[],[],[128,64],[],[],[],[],[256,128],[],[],[],[],[],[],[],[]]";
    tl_perf_result r;
    /* transA: M = A[0], K = A[1]; no transB: N = B[0]; bias from C[14] */
    run(&tl_pc_tex_ts_te_gemm_ts, EVC("tex_ts::te_gemm_ts", dims, TE_TYPES(BF16), TE_CONC("1", "0", "t")), &r);
    CHECK_MODEL(&r, 4194304 + 256 * 128, 114688 + 128 * 2,
                "M=256|N=128|K=64|bias=True|stride_A=None|stride_B=None|"
                "dtype_A_B=('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')|B=1");
    tl_perf_result_free(&r);
    /* no transA: M = A[1] = 64, K = A[0] = 256; transB: N = B[1] = 64 */
    run(&tl_pc_tex_ts_te_gemm_ts, EVC("tex_ts::te_gemm_ts", dims, TE_TYPES(BF16), TE_CONC("0", "1", "")), &r);
    CHECK_I64((long long)r.flops, 2LL * 64 * 64 * 256);
    CHECK_I64((long long)r.bytes, (64 * 256 + 256 * 64 + 64 * 64) * 2);
    tl_perf_result_free(&r);
    /* the bias dtype T[18] is one of the four sizes: unknown gives None */
    run(&tl_pc_tex_ts_te_gemm_ts, EVC("tex_ts::te_gemm_ts", dims, TE_TYPES("\"\""), TE_CONC("1", "0", "")), &r);
    CHECK_I64(r.status, TL_PERF_OK);
    CHECK(!r.has_bytes);
    tl_perf_result_free(&r);
    /* Concrete Inputs are read: absent is a KeyError */
    expect_error(&tl_pc_tex_ts_te_gemm_ts, EV("tex_ts::te_gemm_ts", dims, TE_TYPES(BF16)));
}

static void test_dynamic_quant(void)
{
    tl_perf_result r;
    run(&tl_pc_vllm_gemm_with_dynamic_quant,
        EV("vllm::gemm_with_dynamic_quant", "[[],[32,4096],[],[11008,2048]]", "[" BF16 "," BF16 ",\"float\",\"unsigned char\"]"), &r);
    CHECK_MODEL(&r, 2885681152LL, 91144192,
                "M=32|N=11008|K=4096|bias=False|dtype_A_B=('c10::BFloat16', 'c10::BFloat16')|B=1");
    tl_perf_result_free(&r);
    /* fewer than two 2-D entries: D[0], D[1], which must be 2-D (ValueError) */
    expect_error(&tl_pc_vllm_gemm_with_dynamic_quant,
                 EV("vllm::gemm_with_dynamic_quant", "[[32,4096,1],[5,6]]", "[" BF16 "," BF16 "]"));
    expect_error(&tl_pc_vllm_gemm_with_dynamic_quant,
                 EV("vllm::gemm_with_dynamic_quant", "[[32,4096],[5,6]]", "[" BF16 "]"));
}

static void test_tev2(void)
{
    tl_perf_result r;
    run(&tl_pc_tev2_pseudo_gemm, EV("_Linear_yfwd_mm", "[[16,32],[32,64]]", "[\"float\",\"float\"]"), &r);
    CHECK_MODEL(&r, 65536, 16 * 32 * 4 + 32 * 64 * 4 + 16 * 64 * 2,
                "M=16|N=64|K=32|bias=False|stride_A=None|stride_B=None|dtype_A_B=('float', 'float')|B=1");
    CHECK_STR(r.precision, "fp32");
    tl_perf_result_free(&r);
    expect_error(&tl_pc_tev2_pseudo_gemm, EV("_Linear_yfwd_mm", "[[16,32],[32,64]]", "[\"float\"," BF16 "]"));
}

#define HIP_TYPES "[" FP8 ",\"float\"," FP8 ",\"float\",\"\",\"\",\"\",\"\",\"\"]"

static void test_hipblaslt_fp8(void)
{
    tl_perf_result r;
    run(&tl_pc_hipblaslt_gemm_fp8,
        EVC("primus_turbo::hipblaslt_gemm_fp8", "[[128,256],[],[512,256],[],[],[],[],[],[]]", HIP_TYPES, "[\"\",\"\",\"\",\"\",\"\",\"False\",\" TRUE \",\"0\",\"\"]"), &r);
    CHECK_MODEL(&r, 33554432, 294912,
                "M=128|N=512|K=256|bias=False|transA=False|transB=True|transC=False|"
                "dtype_A_B=('c10::Float8_e4m3fnuz', 'c10::Float8_e4m3fnuz')|dtype_scaleA=float|dtype_scaleB=float|B=1");
    CHECK_STR(r.precision, "fp8");
    tl_perf_result_free(&r);
    /* transC swaps A and B and flips: (transA, transB) = (not transB, not transA) */
    run(&tl_pc_hipblaslt_gemm_fp8,
        EVC("primus_turbo::hipblaslt_gemm_fp8", "[[512,256],[],[128,256],[],[],[],[],[],[]]", HIP_TYPES, "[\"\",\"\",\"\",\"\",\"\",\"true\",\"0\",\"1\",\"\"]"), &r);
    CHECK_I64((long long)r.flops, 2LL * 256 * 256 * 128);
    CHECK_I64((long long)r.bytes, 256 * 128 + 128 * 256 + 256 * 256 * 2);
    tl_perf_result_free(&r);
    /* no Concrete Inputs: every flag False */
    run(&tl_pc_hipblaslt_gemm_fp8, EV("primus_turbo::hipblaslt_gemm_fp8", "[[8,16],[],[16,32]]", HIP_TYPES), &r);
    CHECK_I64((long long)r.flops, 2LL * 8 * 32 * 16);
    tl_perf_result_free(&r);
    expect_error(&tl_pc_hipblaslt_gemm_fp8,
                 EV("primus_turbo::hipblaslt_gemm_fp8", "[[8,16],[],[16,32]]", "[\"bool\",\"\",\"bool\",\"\"]"));
}

/* FP4: K = 2·K_packed; bytes M·(K//2) + N·(K//2) + (M + N)·ceil(K/32) + MN·2 */
static void test_fp4(void)
{
    tl_perf_result r;
    run(&tl_pc_hipblaslt_gemm_fp4,
        EV("primus_turbo::hipblaslt_gemm_fp4", "[[128,128],[],[128,512],[]]", "[" FP4 "," E8M0 "," FP4 ",\"\"]"), &r); /* unknown scale dtype counts 1 */
    CHECK_MODEL(&r, 33554432, 218112,
                "M=128|N=512|K=256|bias=False|transA=False|transB=False|transC=False|"
                "dtype_A_B=('c10::Float4_e2m1fn_x2', 'c10::Float4_e2m1fn_x2')|"
                "dtype_scaleA=c10::Float8_e8m0fnu|dtype_scaleB=|B=1");
    CHECK_STR(r.precision, "fp4");
    tl_perf_result_free(&r);
    run(&tl_pc_aiter_gemm_a4w4, EV("aiter::gemm_a4w4", "[[128,128],[512,128],[128,8],[512,8],[128,512]]", "[" FP4 "," FP4 "," E8M0 "," E8M0 "," BF16 "]"), &r);
    CHECK_MODEL(&r, 33554432, 218112,
                "M=128|N=512|K=256|bias=False|"
                "dtype_A_B=('c10::Float4_e2m1fn_x2', 'c10::Float4_e2m1fn_x2')|"
                "dtype_scaleA=c10::Float8_e8m0fnu|dtype_scaleB=c10::Float8_e8m0fnu|B=1");
    tl_perf_result_free(&r);
    /* K not a multiple of 32 or 2: K = 2·33 = 66 -> K//2 = 33, ceil(66/32) = 3 */
    run(&tl_pc_aiter_gemm_a4w4, EV("aiter::gemm_a4w4", "[[2,33],[4,33]]", "[" FP4 "," FP4 "," E8M0 "," E8M0 "]"),
        &r);
    CHECK_I64((long long)r.bytes, 2 * 33 + 4 * 33 + 2 * 3 + 4 * 3 + 2 * 4 * 2);
    tl_perf_result_free(&r);
    expect_error(&tl_pc_aiter_gemm_a4w4, EV("aiter::gemm_a4w4", "[[2,33],[4,33]]", "[\"\"," FP4 ",\"\",\"\"]"));
}

static void test_a8w8_blockscale(void)
{
    tl_perf_result r;
    run(&tl_pc_gemm_a8w8_blockscale,
        EV("aiter::gemm_a8w8_blockscale_ck", "[[64,1024],[2048,1024],[64,8],[16,8],[64,2048]]", "[" FP8 "," FP8 ",\"float\",\"float\"," BF16 "]"), &r);
    CHECK_MODEL(&r, 268435456, 2424832,
                "B=1|M=64|N=2048|K=1024|bias=False|"
                "dtype_A_B=('c10::Float8_e4m3fnuz', 'c10::Float8_e4m3fnuz', 'c10::bfloat16')|"
                "quant_scheme=a8w8_blockscale|quant_granularity=per_block|block_k=128|block_n=128|"
                "scale_dtype=float|output_shape=(64, 2048)|output_dtype=c10::bfloat16");
    CHECK_STR(r.precision, "fp8");
    tl_perf_result_free(&r);
    /* no scales (len(D) <= 3): no extras; block sizes round up; "" scale dtype is float32 */
    run(&tl_pc_gemm_a8w8_blockscale, EV("aiter::gemm_a8w8_ck", "[[64,1000],[2000,1000]]", "[" FP8 "," FP8 "]"),
        &r);
    CHECK_STR(tl_pt_params(&r), "B=1|M=64|N=2000|K=1000|bias=False|"
                                "dtype_A_B=('c10::Float8_e4m3fnuz', 'c10::Float8_e4m3fnuz', 'c10::bfloat16')");
    tl_perf_result_free(&r);
    run(&tl_pc_gemm_a8w8_blockscale,
        EV("aiter::gemm_a8w8_ck", "[[64,1000],[2000,1000],[64,8],[16,8]]", "[" FP8 "," FP8 ",\"\",\"\"]"), &r);
    CHECK(strstr(tl_pt_params(&r), "|block_k=125|block_n=125|scale_dtype=float32|") != NULL);
    tl_perf_result_free(&r);
    expect_error(&tl_pc_gemm_a8w8_blockscale, EV("aiter::gemm_a8w8_ck", "[[64,1000],[2000,1000]]", "[\"\"," FP8 "]"));
    expect_error(&tl_pc_gemm_a8w8_blockscale, /* D[2][-1] of an empty shape */
                 EV("aiter::gemm_a8w8_ck", "[[64,1000],[2000,1000],[],[16,8]]", "[" FP8 "," FP8 ",\"\",\"\"]"));
}

static void test_a16w16_family(void)
{
    tl_perf_result r;
    /* rocm_unquantized_gemm without bias: output bpe = bpe(T[1]) */
    run(&tl_pc_vllm_rocm_unquantized_gemm,
        EV("vllm::rocm_unquantized_gemm", "[[16,32],[64,32]]", "[\"float\",\"c10::Half\"]"), &r);
    CHECK_MODEL(&r, 65536, 16 * 32 * 4 + 32 * 64 * 2 + 16 * 64 * 2,
                "M=16|N=64|K=32|bias=False|dtype_A_B=('float', 'c10::Half', '')|B=1");
    tl_perf_result_free(&r);
    /* gemm_a16w16 with a bias [N] */
    run(&tl_pc_gemm_a16w16, EV("aiter::gemm_a16w16", "[[16,32],[64,32],[64]]", "[" BF16 "," BF16 "," BF16 "]"),
        &r);
    CHECK_MODEL(&r, 65536 + 16 * 64, (16 * 32 + 32 * 64 + 16 * 64 + 64) * 2,
                "B=1|M=16|N=64|K=32|bias=True|dtype_A_B=('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')");
    tl_perf_result_free(&r);
    /* atomic_: output T[3] when len(T) > 3, else bf16; never a bias */
    run(&tl_pc_gemm_a16w16_atomic_, EV("aiter::gemm_a16w16_atomic_", "[[16,32],[64,32],[64]]", "[\"float\",\"float\"," BF16 ",\"float\"]"), &r);
    CHECK_MODEL(&r, 65536, (16 * 32 + 32 * 64 + 16 * 64) * 4,
                "B=1|M=16|N=64|K=32|bias=False|dtype_A_B=('float', 'float', 'float')");
    tl_perf_result_free(&r);
    run(&tl_pc_gemm_a16w16_atomic_, EV("sglang_profiler::gemm_kernels_flydsl_hgemm", "[[16,32],[64,32]]", "[\"float\",\"float\"]"), &r);
    CHECK_I64((long long)r.bytes, (16 * 32 + 32 * 64) * 4 + 16 * 64 * 2);
    CHECK(strstr(tl_pt_params(&r), "'c10::bfloat16')") != NULL);
    tl_perf_result_free(&r);
    run(&tl_pc_gemm_a16w16_atomic_, EV("aiter::gemm_a16w16_atomic_", "[[16,32],[64,32],[],[]]", "[\"float\",\"float\",\"\",\"\"]"), &r);
    CHECK(!r.has_bytes); /* T[3] = "" has no size */
    tl_perf_result_free(&r);
    /* _gemm_a16w16_asm: output T[2] when it has a size, else T[0] */
    run(&tl_pc_gemm_a16w16_asm, EV("aiter::_gemm_a16w16_asm", "[[16,32],[64,32],[]]", "[" BF16 "," BF16 ",\"float\"]"), &r);
    CHECK_I64((long long)r.bytes, (16 * 32 + 32 * 64) * 2 + 16 * 64 * 4);
    tl_perf_result_free(&r);
    run(&tl_pc_gemm_a16w16_asm, EV("aiter::_gemm_a16w16_asm", "[[16,32],[64,32],[]]", "[" BF16 "," BF16 ",\"\"]"), &r);
    CHECK_I64((long long)r.bytes, (16 * 32 + 32 * 64 + 16 * 64) * 2);
    CHECK(strstr(tl_pt_params(&r), "'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')") != NULL);
    tl_perf_result_free(&r);
}

static void test_fp4_and_batched_ext(void)
{
    tl_perf_result r;
    run(&tl_pc_gemm_afp4wfp4, EV("aiter::gemm_afp4wfp4_", "[[32,512],[256,512]]", "[" FP4 "," FP4 "]"), &r);
    CHECK_MODEL(&r, 16777216, 163840,
                "B=1|M=32|N=256|K=1024|bias=False|"
                "dtype_A_B=('c10::Float4_e2m1fn_x2', 'c10::Float4_e2m1fn_x2')");
    CHECK_STR(r.precision, "fp4");
    tl_perf_result_free(&r);
    run(&tl_pc_batched_gemm_a16wfp4, EV("aiter::batched_gemm_a16wfp4_", "[[4,32,512],[4,256,256]]", "[" BF16 ",\"unsigned char\"]"), &r);
    CHECK_MODEL(&r, 33554432, 458752, "B=4|M=32|N=256|K=512|bias=False|dtype_A_B=('c10::BFloat16', 'unsigned char')");
    CHECK_STR(r.precision, "fp4");
    tl_perf_result_free(&r);
    const char *a8 = "sglang_profiler::batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant_"
                     "batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant";
    run(&tl_pc_batched_gemm_a8w8, EV(a8, "[[32,4,128],[4,256,128]]", "[\"c10::Float8_e4m3fn\"," FP8 "]"), &r);
    CHECK_MODEL(&r, 8388608, 212992,
                "B=4|M=32|N=256|K=128|bias=False|dtype_A_B=('c10::Float8_e4m3fn', 'c10::Float8_e4m3fnuz')");
    CHECK_STR(r.precision, "fp8"); /* prec(T[1]) */
    tl_perf_result_free(&r);
    run(&tl_pc_batched_gemm_a8w8, EV(a8, "[[4,32,128],[4,256,128]]", "[" BF16 ",\"float\"]"), &r);
    CHECK_I64((long long)r.flops, 8388608); /* x [B, M, K]: M = D[0][1] */
    CHECK_STR(r.precision, "fp32");
    tl_perf_result_free(&r);
}

static void test_grouped(void)
{
    tl_perf_result r;
    const tl_perf_class *c = &tl_pc_primus_turbo_grouped_gemm;
    run(c, EV("primus_turbo::grouped_gemm", "[[1024,512],[8,512,256]]", "[" BF16 "," BF16 "]"), &r);
    CHECK_MODEL(&r, 268435456, 3670016, "M=1024|K=512|N=256|G=8|bpe_in=2|bpe_out=2");
    CHECK_STR(r.maf, "matrix");
    CHECK_STR(r.precision, "bf16");
    tl_perf_result_free(&r);
    run(c, EV("primus_turbo::grouped_gemm", "[[1024,512],[8,256,512]]", "[" BF16 "]"), &r); /* [G, N, K] */
    CHECK_MODEL(&r, 268435456, 3670016, "M=1024|K=512|N=256|G=8|bpe_in=2|bpe_out=2");
    tl_perf_result_free(&r);
    /* zipped: (M_i, K) pairs and (K, N) pairs; bpe_out from T[1] */
    run(c, EV("primus_turbo::grouped_gemm", "[[[100,512],[200,512]],[[512,256],[512,256]]]", "[" BF16 ",\"float\"]"), &r);
    CHECK_MODEL(&r, 78643200, (300 * 512 + 2 * 512 * 256) * 2 + 300 * 256 * 4,
                "M=300|K=512|N=256|G=2|bpe_in=2|bpe_out=4");
    tl_perf_result_free(&r);
    expect_error(c, EV("primus_turbo::grouped_gemm", "[[1024,512],[8,100,200]]", "[" BF16 "]"));
    expect_error(c, EV("primus_turbo::grouped_gemm", "[[[100,512],[200,64]],[[512,256],[512,256]]]", "[" BF16 "]")); /* K not uniform */
    expect_error(c, EV("primus_turbo::grouped_gemm", "[[1024,512],[8,512,256]]", "[\"bool\"]"));

    c = &tl_pc_primus_turbo_grouped_gemm_variable_k;
    run(c, EV("primus_turbo::grouped_gemm_variable_k", "[[1024,512],[1024,256]]", "[" BF16 "," BF16 "]"), &r);
    CHECK_MODEL(&r, 268435456, 1835008,
                "M=1024|K=512|N=256|G=1|bpe_in=2|bpe_out=2|group_pairs=((1024, 512, 256),)");
    tl_perf_result_free(&r);
    run(c, EV("primus_turbo::grouped_gemm_variable_k", "[[[100,64],[200,32]],[[64,16],[32,8]]]", "[" BF16 "]"), &r);
    CHECK_MODEL(&r, 307200, 34560,
                "M=300|K=64|N=16|G=2|bpe_in=2|bpe_out=2|group_pairs=((100, 64, 16), (200, 32, 8))");
    tl_perf_result_free(&r);
    expect_error(c, EV("primus_turbo::grouped_gemm_variable_k", "[[[100,64]],[[32,8]]]", "[" BF16 "]"));
}

/* Wrong arity, missing keys, unknown dtypes, bwd, out-of-range dims. */
static void test_errors(void)
{
    tl_perf_result r;
    expect_error(&tl_pc_aten_mm, EV("aten::mm", "[[8944,1024]]", "[" BF16 "," BF16 "]"));
    expect_error(&tl_pc_aten_mm, EV("aten::mm", NULL, "[" BF16 "," BF16 "]"));
    expect_error(&tl_pc_aten_mm, EV("aten::mm", "[[8,16],[16,4]]", NULL));
    expect_error(&tl_pc_aten_mm, EV("aten::mm", "[[8,16],[16,4]]", "[" BF16 "]"));
    expect_error(&tl_pc_aten_mm, EV("aten::mm", "[[8,\"16\"],[16,4]]", "[" BF16 "," BF16 "]"));
    expect_error(&tl_pc_aten_mm, EVS("aten::mm", "[[8,16],[16,4]]", "[" BF16 "," BF16 "]", "[[16,1]]"));
    expect_error(&tl_pc_aten_mm, EV("aten::mm", "[[8,16],[16,4294967296]]", "[" BF16 "," BF16 "]"));
    expect_error(&tl_pc_aten_bmm, EV("aten::bmm", "[[32,1],[1,1,559]]", "[\"float\",\"float\"]"));
    expect_error(&tl_pc_aten_addmm, EV("aten::addmm", "[[1024],[8944,1024]]", "[" BF16 "," BF16 "]"));

    /* an unknown dtype: bytes None (has_bytes = 0), no Compute Spec; flops stand */
    run(&tl_pc_aten_mm, EV("aten::mm", "[[8,16],[16,4]]", "[\"c10::complex<float>\",\"bool\"]"), &r);
    CHECK_I64(r.status, TL_PERF_OK);
    CHECK_I64((long long)r.flops, 1024);
    CHECK(!r.has_bytes);
    CHECK(r.precision == NULL);
    CHECK_STR(tl_pt_compute_spec(&r), "");
    tl_perf_result_free(&r);
    run(&tl_pc_aten_bmm, EV("aten::bmm", "[[2,8,16],[2,16,4]]", "[\"BFloat16\",\"BFloat16\"]"), &r);
    CHECK(!r.has_bytes); /* no c10:: prefix: not in the table */
    tl_perf_result_free(&r);

    /* no registered GEMM class defines bwd metrics */
    tl_perf_event ev = tl_pt_event("aten::mm", "[[8,16],[16,4]]", "[" BF16 "," BF16 "]", NULL, NULL, NULL);
    tl_perf_result_init(&r);
    CHECK_I64(tl_perf_run(&tl_pc_aten_mm, &ev, 1, &r), TL_PERF_NOT_IMPLEMENTED);
    tl_perf_result_free(&r);
    tl_perf_result_init(&r);
    CHECK_I64(tl_pc_primus_turbo_grouped_gemm.fn(&ev, 1, &r), TL_PERF_NOT_IMPLEMENTED);
    tl_perf_result_free(&r);
}

/* Class descriptors: names, categories, sheets of Appendix A. */
static void test_descriptors(void)
{
    const tl_perf_class *gemm[] = {
        &tl_pc_aten_mm, &tl_pc_aten_addmm, &tl_pc_aten_scaled_mm, &tl_pc_aten_bmm, &tl_pc_aten_baddbmm,
        &tl_pc_tex_ts_te_gemm_ts, &tl_pc_vllm_gemm_with_dynamic_quant, &tl_pc_tev2_pseudo_gemm,
        &tl_pc_hipblaslt_gemm_fp8, &tl_pc_hipblaslt_gemm_fp4, &tl_pc_aiter_gemm_a4w4, &tl_pc_gemm_a8w8_blockscale,
        &tl_pc_vllm_rocm_unquantized_gemm, &tl_pc_gemm_a16w16, &tl_pc_gemm_a16w16_atomic_, &tl_pc_gemm_a16w16_asm,
        &tl_pc_gemm_afp4wfp4, &tl_pc_batched_gemm_a16wfp4, &tl_pc_batched_gemm_a8w8};
    for (size_t i = 0; i < sizeof gemm / sizeof *gemm; i++) {
        CHECK_STR(gemm[i]->category, "GEMM");
        CHECK(gemm[i]->bwd_category == NULL);
        CHECK_STR(gemm[i]->sheet, "GEMM");
        CHECK_I64(gemm[i]->has_bwd, 0);
        CHECK(gemm[i]->fn != NULL);
    }
    CHECK_STR(tl_pc_aten_mm.name, "aten_mm");
    CHECK_STR(tl_pc_gemm_a16w16_atomic_.name, "gemm_a16w16_atomic_");
    CHECK_STR(tl_pc_vllm_rocm_unquantized_gemm.name, "vllm_rocm_unquantized_gemm");
    const tl_perf_class *gg[] = {&tl_pc_primus_turbo_grouped_gemm, &tl_pc_primus_turbo_grouped_gemm_variable_k};
    for (size_t i = 0; i < 2; i++) {
        CHECK_STR(gg[i]->category, "GroupedGEMM_fwd");
        CHECK_STR(gg[i]->bwd_category, "GroupedGEMM_bwd");
        CHECK_STR(gg[i]->sheet, "GroupedGEMM");
        CHECK_I64(gg[i]->has_bwd, 0);
    }
    CHECK_STR(tl_pc_primus_turbo_grouped_gemm_variable_k.name, "primus_turbo_grouped_gemm_variable_k");
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_kname_tensile, test_kname_nvjet, test_h100_rows, test_worked_examples, test_mi300_transpose,
        test_inference_rows, test_bias_fix, test_scaled_mm, test_te_gemm_ts, test_dynamic_quant, test_tev2,
        test_hipblaslt_fp8, test_fp4, test_a8w8_blockscale, test_a16w16_family, test_fp4_and_batched_ext,
        test_grouped, test_errors, test_descriptors
    };
    return TL_PERF_TEST_RUN(tests, tl_pt_arena_new, tl_pt_arena_free);
}
