/* test_perf_eval.c — report/perf_eval.c on a small hand-made trace: the
 * forward op a ConvBias_Backward finds by Sequence number (the latest
 * earlier event of the same integer Sequence number and the name without
 * "Backward"), the model result it gives, and the result cache keeping
 * backward ops of different forwards apart. */
#include <stdio.h>
#include <string.h>

#include "json/kineto_scan.h"
#include "perf/model_conv.h"
#include "report/perf_eval.h"
#include "perf_test.h"

tl_test_ctx tl_test_state;

#define OP(name, tid, ts, args)                                                                          \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":" tid ",\"ts\":" ts        \
    ",\"dur\":10,\"args\":{" args "}},"
#define CONV(batch)                                                                                      \
    "\"Input Dims\":[[" batch ",64,56,56],[64,64,3,3],[1,64,1,1],[],[]],"                                \
    "\"Input type\":[\"c10::Half\",\"c10::Half\",\"c10::Half\",\"Scalar\",\"Scalar\"],"                  \
    "\"Concrete Inputs\":[\"\",\"\",\"\",\"1\",\"1\"]"
#define SEQ(n) "\"Sequence number\":" n

static const char *DOC =
    "{\"traceEvents\":["
    OP("ConvBias_", "1", "100", CONV("8") "," SEQ("5"))              /* 0 */
    OP("ConvBias_", "1", "200", CONV("4") "," SEQ("5"))              /* 1: the latest ConvBias_ of 5 */
    OP("ConvBiasReLU_", "1", "250", CONV("2") "," SEQ("5"))          /* 2 */
    OP("ConvBias_Backward", "2", "300", SEQ("5"))                    /* 3 -> 1 */
    OP("ConvBias_", "1", "400", CONV("8") "," SEQ("6"))              /* 4 */
    OP("ConvBias_Backward", "2", "500", SEQ("6"))                    /* 5 -> 4 */
    OP("ConvBias_Backward", "2", "600", SEQ("9"))                    /* 6: its forward comes later */
    OP("ConvBias_", "1", "700", CONV("8") "," SEQ("9"))              /* 7 */
    OP("ConvBiasReLU_Backward", "2", "800", SEQ("5"))                /* 8 -> 2 */
    OP("ConvBias_Backward", "2", "900", "\"External id\":3")         /* 9: no Sequence number */
    OP("ConvBias_Backward", "2", "950", "\"Sequence number\":\"5\"") /* 10: not an integer */
    OP("ConvBias_", "1", "960", CONV("8") "," SEQ("5") ",\"Sequence number\":\"x\"") /* 11: not an int (last wins) */
    OP("ConvBias_Backward", "2", "970", SEQ("5"))                    /* 12 -> 1 (11 is skipped) */
    "{\"ph\":\"i\",\"name\":\"end\"}"
    "]}";

static void test_seq_forward(void)
{
    tl_trace t;
    tl_error err;
    memset(&t, 0, sizeof t);
    tl_es_init(&t.es);
    int rc = tl_scan_buffer("seq", DOC, strlen(DOC), &t.es, &err);
    CHECK_I64(rc, 0);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        tl_es_free(&t.es);
        return;
    }
    tl_tree_build(&t.tree, &t.es, NULL);
    tl_perf_eval pe;
    tl_perf_eval_init(&pe, &t, NULL);

    CHECK_I64(tl_perf_seq_forward(&pe, 3), 1);
    CHECK_I64(tl_perf_seq_forward(&pe, 5), 4);
    CHECK_I64(tl_perf_seq_forward(&pe, 6), TL_NOUID);
    CHECK_I64(tl_perf_seq_forward(&pe, 8), 2);
    CHECK_I64(tl_perf_seq_forward(&pe, 9), TL_NOUID);
    CHECK_I64(tl_perf_seq_forward(&pe, 10), TL_NOUID);
    CHECK_I64(tl_perf_seq_forward(&pe, 12), 1);
    CHECK_I64(tl_perf_seq_forward(&pe, 1), TL_NOUID); /* not a backward op */

    /* 3 and 5 have the same args but for the Sequence number (not part of
     * a signature): their forwards tell them apart */
    const tl_perf_class *cls = tl_perf_class_of(&pe, 3);
    CHECK(cls == &tl_pc_ConvBias_Backward);
    const tl_perf_entry *e3 = tl_perf_eval_run(&pe, cls, 3, 0, NULL, 0);
    const tl_perf_entry *e5 = tl_perf_eval_run(&pe, cls, 5, 0, NULL, 0);
    const tl_perf_entry *e12 = tl_perf_eval_run(&pe, cls, 12, 0, NULL, 0);
    CHECK_I64(e3->status, TL_PERF_OK);
    CHECK_I64(e5->status, TL_PERF_OK);
    CHECK_I64((long long)(e3->flops + 0.5), 1850490880); /* batch 4 */
    CHECK_I64((long long)(e5->flops + 0.5), 3700981760); /* batch 8 */
    CHECK(e12 == e3); /* the same forward: one cached result */
    CHECK_STR(e3->compute_spec, "matrix_fp16");
    CHECK_I64(tl_perf_eval_run(&pe, cls, 6, 0, NULL, 0)->status, TL_PERF_ERROR);
    CHECK_I64(tl_perf_eval_run(&pe, cls, 9, 0, NULL, 0)->status, TL_PERF_ERROR);
    const tl_perf_entry *e8 = tl_perf_eval_run(&pe, tl_perf_class_of(&pe, 8), 8, 0, NULL, 0);
    CHECK_I64((long long)(e8->flops + 0.5), 925245440); /* batch 2 */

    tl_perf_eval_free(&pe);
    tl_tree_free(&t.tree);
    tl_es_free(&t.es);
}

int main(void)
{
    static const tl_perf_test_fn tests[] = {
        test_seq_forward
    };
    return TL_PERF_TEST_RUN(tests, NULL, NULL);
}
