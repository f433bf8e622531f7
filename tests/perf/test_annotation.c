/* The annotation step (perf-report §3.12 with its FIX) and the iteration
 * grammar tiers (inference spec §1.2): which user_annotation encloses an op. */
#include <stdlib.h>

#include "json/kineto_scan.h"
#include "test.h"
#include "trace/annotation.h"

tl_test_ctx tl_test_state;

static void tiers(const tl_annotations *a)
{
    CHECK_I64(tl_annotation_tier(a, "execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_generation_3(sq3sk6144sqsq3sqsk6144)"), 1);
    CHECK_I64(tl_annotation_tier(a, "execute_context_2(6144)_generation_3(3)"), 2);
    CHECK_I64(tl_annotation_tier(a, "step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]"), 1);
    CHECK_I64(tl_annotation_tier(a, "step[DECODE bs=64]"), 2);
    CHECK_I64(tl_annotation_tier(a, "step[DECODEX bs=64]"), 0); /* \\b after the mode word */
    CHECK_I64(tl_annotation_tier(a, "decode[bs=128 tok=384 p=2 d=126 sqsq=5 sqsk=6 sk=7 tbo=1]"), 1);
    CHECK_I64(tl_annotation_tier(a, "prefill[bs=2 tok=14721 ctx=[7803, 6918]]"), 2);
    CHECK_I64(tl_annotation_tier(a, "capture_8192_PIECEWISE"), 0);
    CHECK_I64(tl_annotation_tier(a, "execute_diffusion_1_1024x1024"), 2);
    CHECK_I64(tl_annotation_tier(a, "ProfilerStep#6"), 0);
}

int main(void)
{
    /* ProfilerStep#1 [0,100], execute_context_... [5,95] (tier 2) and
     * step[DECODE ... sqsq=] [10,90] (tier 1) all enclose the op at [20,30] */
    const char *doc =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"execute_context_1(5)_generation_2(3)\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":90},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"step[DECODE bs=32 g_sqsq=4]\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":80},"
        "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"execute_1_context_0(sq0sk0sqsq0sqsk0)_generation_1(sq1sk1sqsq1sqsk1)\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":98},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"vllm::unified_attention_with_output\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":10},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"late\",\"pid\":1,\"tid\":1,\"ts\":95,\"dur\":10},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"edge\",\"pid\":1,\"tid\":1,\"ts\":80,\"dur\":10}"
        "]}";
    tl_trace t;
    memset(&t, 0, sizeof t);
    tl_es_init(&t.es);
    tl_error err;
    CHECK_I64(tl_scan_buffer("ann", doc, strlen(doc), &t.es, &err), 0);
    tl_annotations a;
    tl_annotations_init(&a, &t);
    tiers(&a);
    CHECK_I64(a.n, 3); /* gpu_user_annotation is not a candidate (FIX) */
    /* tier 1 (step[... sqsq=]) wins over the earlier tier-2 execute_ and ProfilerStep */
    CHECK_STR(tl_event_annotation(&a, 4), "step[DECODE bs=32 g_sqsq=4]");
    CHECK_STR(tl_event_annotation(&a, 5), "NA");               /* ends after every candidate */
    CHECK_STR(tl_event_annotation(&a, 6), "execute_context_1(5)_generation_2(3)"); /* 90 < 90 fails for step */
    tl_annotations_free(&a);
    tl_es_free(&t.es);
    int failed = tl_test_state.failures != 0;
    printf("%d passed, %d failed\n", failed ? 0 : 1, failed ? 1 : 0);
    return failed;
}
