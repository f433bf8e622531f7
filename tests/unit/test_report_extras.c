/* --detect_recompute and --include_overlap_info on small hand-made traces:
 * recompute marking (perf-report spec §3.11), the per-block timelines
 * (§4.6), the overlap sweep (§4.7: stream exclusion, the 1 us threshold,
 * touching intervals) and an op's overlap fields (§7.10). Every expected
 * value is worked out by hand in the comments. */
#include <math.h>
#include <stdlib.h>

#include "json/kineto_scan.h"
#include "report/overlap.h"
#include "test.h"
#include "trace/timeline.h"
#include "trace/tree.h"

#define CHECK_F(a, b)                                                                          \
    do {                                                                                       \
        double a_ = (a), b_ = (b);                                                             \
        tl_test_state.checks++;                                                                \
        if (!(a_ == b_)) {                                                                     \
            tl_test_state.failures++;                                                          \
            fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); \
        }                                                                                      \
    } while (0)

#define PY(name, ts, dur)                                                                          \
    "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" ts \
    ",\"dur\":" dur "},"
#define OP(name, ts, dur)                                                                          \
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1,\"ts\":" ts ",\"dur\":" dur \
    ",\"args\":{}},"
/* a launch: runtime call, its two flow ends, and the GPU event (4 events) */
#define LAUNCH(ts, corr, cat, kname, tid, stream_arg, kts, kdur)                                   \
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"      \
    "\"ts\":" ts ",\"dur\":1,\"args\":{\"correlation\":" corr "}},"                                \
    "{\"ph\":\"s\",\"id\":" corr ",\"pid\":1,\"tid\":1,\"ts\":" ts ",\"cat\":\"ac2g\","              \
    "\"name\":\"ac2g\"},"                                                                          \
    "{\"ph\":\"f\",\"id\":" corr ",\"pid\":0,\"tid\":" tid ",\"ts\":" kts ",\"cat\":\"ac2g\","        \
    "\"name\":\"ac2g\"},"                                                                          \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" kname "\",\"pid\":0,\"tid\":" tid ",\"ts\":" kts \
    ",\"dur\":" kdur ",\"args\":{\"correlation\":" corr stream_arg "}},"

/* UIDs in the comments; kernels in us */
static const char *DOC =
    "{\"traceEvents\":["
    PY("train.py(1): <module>", "0", "1000")                            /* 0 */
    OP("aten::mm", "10", "20")                                          /* 1 */
    LAUNCH("12", "1", "kernel", "k1", "7", ",\"stream\":7", "100", "10") /* 2..5: k1 = 5 [100,110] s7 */
    LAUNCH("14", "2", "kernel", "k2", "8", ",\"stream\":8", "104", "10") /* 6..9: k2 = 9 [104,114] s8 */
    LAUNCH("16", "3", "kernel", "k3", "7", ",\"stream\":7", "105", "3") /* 10..13: k3 = 13 [105,108] s7 */
    PY("torch/utils/checkpoint.py(1024): recompute_fn", "200", "100")   /* 14 */
    OP("aten::mm", "210", "40")                                         /* 15 */
    LAUNCH("212", "4", "kernel", "k4", "9", ",\"stream\":9", "114", "5") /* 16..19: k4 = 19 [114,119] s9 */
    LAUNCH("214", "5", "kernel", "k5", "7", ",\"stream\":7", "118.5", "5") /* 20..23: k5 = 23 [118.5,123.5] s7 */
    LAUNCH("216", "6", "kernel", "k6", "7", ",\"stream\":7", "130", "10") /* 24..27: k6 = 27 [130,140] s7 */
    OP("aten::add", "400", "20")                                        /* 28 */
    LAUNCH("402", "7", "kernel", "x_k", "8", ",\"stream\":8", "139", "11") /* 29..32: x_k = 32 [139,150] s8 */
    LAUNCH("404", "8", "gpu_memcpy", "x_k", "10", "", "131", "4")       /* 33..36: x_k = 36 [131,135] no stream */
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"unlinked\",\"pid\":0,\"tid\":8,\"ts\":100,\"dur\":50,"
    "\"args\":{\"stream\":8}},"                                         /* 37: no launch */
    "{\"ph\":\"i\",\"name\":\"end\"}"
    "]}";

static int has(const tl_overlaps *o, uint32_t a, uint32_t b)
{
    const uint32_t *l;
    size_t n = tl_overlaps_of(o, a, &l);
    for (size_t i = 0; i < n; i++)
        if (l[i] == b) return 1;
    return 0;
}

static size_t count(const tl_overlaps *o, uint32_t a)
{
    const uint32_t *l;
    return tl_overlaps_of(o, a, &l);
}

void suite_report_extras(void)
{
    tl_event_store es;
    tl_error err;
    tl_es_init(&es);
    int rc = tl_scan_buffer("extras", DOC, strlen(DOC), &es, &err);
    CHECK_I64(rc, 0);
    if (rc) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    tl_tree_opts to = {.with_python = 1};
    tl_tree t;
    tl_tree_build(&t, &es, &to);
    CHECK_I64(t.parent[1], 0);
    CHECK_I64(t.parent[14], 0);
    CHECK_I64(t.parent[15], 14);
    CHECK_I64(t.parent[28], 0);

    /* recompute: the checkpoint function 14 and everything below it (op 15,
     * its three runtime calls and their kernels k4, k5, k6), nothing else */
    size_t roots = 0;
    uint8_t *rc_flags = tl_tree_recompute_flags(&t, &es, &roots);
    CHECK_I64(roots, 1);
    static const uint32_t marked[] = {14, 15, 16, 19, 20, 23, 24, 27};
    size_t nmarked = 0;
    for (size_t i = 0; i < es.n; i++) nmarked += rc_flags[i];
    CHECK_I64(nmarked, 8);
    for (size_t i = 0; i < sizeof marked / sizeof *marked; i++) CHECK(rc_flags[marked[i]]);
    CHECK(!rc_flags[0] && !rc_flags[1] && !rc_flags[5] && !rc_flags[28] && !rc_flags[32] && !rc_flags[37]);

    /* the two timeline blocks (linked events only):
     * False: k1 k2 k3 x_k(32) x_k(36) = [100,114] u [131,135] u [139,150]:
     *        busy 14 + 4 + 11 = 29, total 50, memcpy 4 (exposed 4), comp 25
     * True:  k4 k5 k6 = [114,123.5] u [130,140]: busy 19.5, total 26 */
    tl_timeline a, b;
    CHECK_I64(tl_timeline_compute_subset(&es, &t, 0, -1, rc_flags, 0, &a), 0);
    CHECK_I64(tl_timeline_compute_subset(&es, &t, 0, -1, rc_flags, 1, &b), 0);
    CHECK_I64(a.busy, 29000);
    CHECK_I64(a.total, 50000);
    CHECK_I64(a.total_memcpy, 4000);
    CHECK_I64(a.exposed_memcpy, 4000);
    CHECK_I64(a.computation, 25000);
    CHECK_I64(a.n_events, 5);
    CHECK_I64(b.busy, 19500);
    CHECK_I64(b.total, 26000);
    CHECK_I64(b.idle, 6500);
    CHECK_I64(b.n_events, 3);
    uint8_t none[64] = {0};
    CHECK_I64(tl_timeline_compute_subset(&es, &t, 0, -1, none, 1, &b), -1); /* an empty subset */

    /* the sweep over all linked events */
    tl_overlaps ov;
    tl_overlap_sweep(&es, &t, 0, NULL, &ov);
    CHECK_I64(ov.n, 8);
    CHECK(has(&ov, 5, 9) && has(&ov, 9, 5)); /* k1 k2: 6 us, streams 7 / 8 */
    CHECK(!has(&ov, 5, 13));                 /* k1 k3: 3 us but the same stream */
    CHECK(has(&ov, 13, 9));                  /* k3 k2: 3 us */
    CHECK(!has(&ov, 9, 19));                 /* k2 k4 touch at 114: not an overlap */
    CHECK(!has(&ov, 19, 23));                /* k4 k5: 0.5 us < 1 us */
    CHECK(has(&ov, 27, 32));                 /* k6 x_k(32): exactly 1 us counts */
    CHECK(has(&ov, 27, 36));                 /* k6 x_k(36): 4 us, memcpy without stream */
    CHECK(!has(&ov, 32, 36));                /* no common time */
    CHECK_I64(count(&ov, 5), 1);
    CHECK_I64(count(&ov, 9), 2);
    CHECK_I64(count(&ov, 27), 2);
    CHECK_I64(count(&ov, 37), 0); /* unlinked: not swept */
    CHECK_I64(ov.n_pairs, 4);
    /* k6's list in (ts, uid) order: x_k(36) at 131 before x_k(32) at 139 */
    const uint32_t *l;
    CHECK_I64(tl_overlaps_of(&ov, 27, &l), 2);
    CHECK_I64(l[0], 36);
    CHECK_I64(l[1], 32);

    /* op fields. Op 1 launches k1, k2, k3 (busy [100,114] = 14 us):
     * pairs k1-k2 6/14 -> 0.43, k2-k1 6/14 -> 0.43, k2-k3 3/14 -> 0.21,
     * k3-k2 3/14 -> 0.21; names k2, k1, k3 in first-seen order;
     * k2: dur (10+10)/2 = 10.0, pct (0.43+0.21)/2 = 0.32; k1: 10.0, 0.43;
     * k3: 3.0, 0.21; overlap_pct = (6 + 6 + 3) / 14 = 1.0714... -> 1.07 */
    tl_ovpool pool = {0};
    tl_ovinfo inf;
    const uint32_t op1[] = {5, 9, 13};
    tl_ovinfo_compute(&es, &ov, op1, 3, &pool, &inf);
    CHECK_I64(inf.n, 3);
    CHECK_F(inf.pct, 1.07);
    CHECK_STR(tl_es_name(&es, pool.v[inf.first].uid), "k2");
    CHECK_F(pool.v[inf.first].dur_us, 10.0);
    CHECK_F(pool.v[inf.first].pct, 0.32);
    CHECK_STR(tl_es_name(&es, pool.v[inf.first + 1].uid), "k1");
    CHECK_F(pool.v[inf.first + 1].pct, 0.43);
    CHECK_F(pool.v[inf.first + 2].dur_us, 3.0);
    CHECK_F(pool.v[inf.first + 2].pct, 0.21);
    tl_sbuf sb;
    tl_sb_init(&sb);
    CHECK(tl_ovinfo_names_text(&es, &pool, &inf, &sb));
    CHECK_STR(sb.s, "['k2', 'k1', 'k3']");

    /* k6 alone (busy 10): x_k(36) 4 us -> 0.4, x_k(32) 1 us -> 0.1; one
     * name: dur (4 + 11) / 2 = 7.5, pct 0.25, shown with the first entry's
     * stream (the memcpy's: None); overlap_pct = (4 + 1) / 10 = 0.5 */
    const uint32_t op2[] = {27};
    tl_ovinfo_compute(&es, &ov, op2, 1, &pool, &inf);
    CHECK_I64(inf.n, 1);
    CHECK_I64(pool.v[inf.first].uid, 36);
    CHECK_F(pool.v[inf.first].dur_us, 7.5);
    CHECK_F(pool.v[inf.first].pct, 0.25);
    CHECK_F(inf.pct, 0.5);
    /* k4 and k5 overlap nothing: None */
    const uint32_t op3[] = {19, 23};
    tl_ovinfo_compute(&es, &ov, op3, 2, &pool, &inf);
    CHECK_I64(inf.n, 0);
    CHECK(isnan(inf.pct));
    tl_sb_clear(&sb);
    CHECK(!tl_ovinfo_names_text(&es, &pool, &inf, &sb));
    tl_overlaps_free(&ov);

    /* swept per recompute block: k4..k6 never pair with the others, so k6
     * loses both x_k partners */
    tl_overlap_sweep(&es, &t, 0, rc_flags, &ov);
    CHECK(has(&ov, 5, 9));
    CHECK_I64(count(&ov, 27), 0);
    CHECK_I64(ov.n_pairs, 2);
    tl_overlaps_free(&ov);
    /* with the unlinked kernel (s8 [100,150]): it overlaps k1, k3, k6, the
     * memcpy and k4, k5 (not k2, x_k(32): same stream 8) */
    tl_overlap_sweep(&es, &t, 1, NULL, &ov);
    CHECK_I64(count(&ov, 37), 6);
    CHECK(!has(&ov, 37, 9));
    tl_overlaps_free(&ov);

    /* Python's round(x, 2) vs numpy's rint(x*100)/100 */
    CHECK_F(tl_py_round2(2.675), 2.67);
    CHECK_F(tl_py_round2(0.015), 0.01);
    CHECK_F(tl_py_round2(0.125), 0.12);
    CHECK_F(tl_py_round2(0.44999999999999996), 0.45);

    tl_sb_free(&sb);
    tl_ovpool_free(&pool);
    free(rc_flags);
    tl_tree_free(&t);
    tl_es_free(&es);
}
