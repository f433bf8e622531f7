/* Tree building on a small hand-made trace: call stacks by containment,
 * the 1 us bleed rule, ac2g linking, graph launches, fwd/bwd links and
 * launcher resolution. */
#include "json/kineto_scan.h"
#include "test.h"
#include "trace/timeline.h"
#include "trace/tree.h"

#define X(cat, name, tid, ts, dur, args) \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":1,\"tid\":" tid ",\"ts\":" ts ",\"dur\":" dur ",\"args\":{" args "}},"
#define K(name, stream, ts, dur, corr) \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":" stream ",\"ts\":" ts ",\"dur\":" dur ",\"args\":{\"correlation\":" corr ",\"stream\":" stream "}},"
#define FLOW(ph, corr, pid, tid, ts) \
    "{\"ph\":\"" ph "\",\"id\":" corr ",\"pid\":" pid ",\"tid\":" tid ",\"ts\":" ts ",\"cat\":\"ac2g\",\"name\":\"ac2g\"},"

static const char *DOC =
    "{\"traceEvents\":["
    X("cpu_op", "aten::linear", "1", "100", "50", "\"Sequence number\":7")          /* 0 */
    X("cpu_op", "aten::addmm", "1", "110", "30", "")                                 /* 1 */
    X("cuda_runtime", "cudaLaunchKernel", "1", "115", "5", "\"correlation\":11")     /* 2 */
    FLOW("s", "11", "1", "1", "115")                                                 /* 3 */
    FLOW("f", "11", "0", "7", "200")                                                 /* 4 */
    K("gemm_kernel", "7", "200", "10", "11")                                         /* 5 */
    X("cpu_op", "execute", "1", "160", "20", "")                                     /* 6 */
    X("cuda_runtime", "cudaGraphLaunch", "1", "165", "5", "\"correlation\":12")      /* 7 */
    K("graph_k1", "7", "220", "5", "12")                                             /* 8 */
    K("graph_k2", "7", "230", "5", "12")                                             /* 9 */
    X("cpu_op", "aten::add", "1", "179.5", "10", "")                                 /* 10: bleeds 0.5us past execute */
    X("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", "2", "300", "20", "\"Sequence number\":7") /* 11 */
    X("cuda_runtime", "cudaLaunchKernel", "2", "305", "2", "\"correlation\":13")     /* 12 */
    FLOW("s", "13", "1", "2", "305")                                                 /* 13 */
    FLOW("f", "13", "0", "13", "310")                                                /* 14 */
    K("ncclDevKernel_AllReduce", "13", "205", "30", "13")                            /* 15 */
    X("cuda_runtime", "cudaDeviceSynchronize", "1", "400", "5", "\"correlation\":14") /* 16 */
    K("orphan", "7", "500", "5", "99")                                               /* 17: unlinked */
    "{\"ph\":\"i\",\"name\":\"end\"}"
    "]}";

void suite_tree(void)
{
    tl_event_store es;
    tl_error err;
    tl_es_init(&es);
    int rc = tl_scan_buffer("tree", DOC, strlen(DOC), &es, &err);
    CHECK_I64(rc, 0);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    tl_tree t;
    tl_tree_build(&t, &es, NULL);
    CHECK(!t.link_by_external_id);
    CHECK_I64(t.parent[0], TL_NOUID);
    CHECK_I64(t.parent[1], 0);
    CHECK_I64(t.parent[2], 1);
    CHECK_I64(t.parent[5], 2);
    CHECK_I64(t.parent[7], 6);
    CHECK_I64(t.parent[8], 7);
    CHECK_I64(t.parent[9], 7);
    CHECK_I64(t.parent[10], TL_NOUID); /* bleed at depth 1: discarded */
    CHECK_I64(t.n_discarded, 1);
    CHECK(t.in_tree[10]);
    CHECK_I64(t.parent[15], 12);
    CHECK_I64(t.parent[17], TL_NOUID);
    CHECK(!t.in_tree[17]);
    CHECK_I64(t.parent[6], 0 + TL_NOUID); /* execute starts after linear ends */

    /* gpu_events: the linear op sees the gemm kernel */
    size_t ng, nc;
    const uint32_t *gv = tl_tree_gpus(&t, 0, &ng);
    CHECK_I64(ng, 1);
    CHECK_I64(gv[0], 5);
    tl_tree_gpus(&t, 6, &ng);
    CHECK_I64(ng, 2);
    /* children of addmm: the runtime call */
    tl_tree_children(&t, 1, &nc);
    CHECK_I64(nc, 1);

    CHECK_I64(tl_tree_launcher(&t, &es, 5), 1);  /* addmm */
    CHECK_I64(tl_tree_launcher(&t, &es, 8), 7);  /* under "execute": the runtime itself */
    CHECK_I64(tl_tree_launcher(&t, &es, 15), 11);
    CHECK_I64(tl_tree_launcher(&t, &es, 17), TL_NOUID);

    CHECK_I64(tl_tree_fwd_of(&t, 11), 0);
    CHECK_I64(tl_tree_bwd_of(&t, 0), 11);

    tl_timeline tlv;
    CHECK_I64(tl_timeline_compute(&es, &t, 0, 2000, &tlv), 0);
    /* linked GPU: gemm [200,210], g1 [220,225], g2 [230,235], nccl [205,235] (us) */
    CHECK_I64(tlv.total, 35000);
    CHECK_I64(tlv.computation, 20000);
    CHECK_I64(tlv.total_comm, 30000);
    CHECK_I64(tlv.exposed_comm, 15000);
    CHECK_I64(tlv.busy, 35000);
    CHECK_I64(tlv.idle, 0);
    CHECK_I64(tlv.n_events, 4);
    CHECK_I64(tl_timeline_compute(&es, &t, 1, -1, &tlv), 0);
    CHECK_I64(tlv.total, 305000);
    CHECK_I64(tlv.idle, 305000 - 40000);
    tl_tree_free(&t);
    tl_es_free(&es);
}
