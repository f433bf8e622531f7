/* test_iteration.c — iteration annotations (inference spec §1.2): every
 * example string of the spec through every grammar, the SGLang native FIX,
 * capture annotations, the phase helpers; the iteration roots of a small
 * trace (tiers, GPU busy time); the steady-state regions and windows
 * (§1.7) with the reference's unit tests (the region end with the FIX). */
#include <stdlib.h>

#include "json/kineto_scan.h"
#include "test.h"
#include "trace/iteration.h"

tl_test_ctx tl_test_state;

static tl_ann_grammars G;

static tl_iter_ann parse(const char *name, int format)
{
    tl_iter_ann a;
    CHECK_I64(tl_iter_parse(&G, name, &a), format);
    if (a.format != format) fprintf(stderr, "  (for %s)\n", name);
    return a;
}

static void vllm(void)
{
    tl_iter_ann a = parse("execute_6147_context_2(sq6144sk7144sqsq20971520sqsk23019520)_generation_3("
                          "sq3sk6144sqsq3sqsk6144)",
                          TL_IT_VLLM_DETAILED);
    CHECK_I64(a.context_requests, 2);
    CHECK_I64(a.c_sq, 6144);
    CHECK_I64(a.c_sk, 7144);
    CHECK_I64(a.c_sqsq, 20971520);
    CHECK_I64(a.c_sqsk, 23019520);
    CHECK_I64(a.generation_requests, 3);
    CHECK_I64(a.g_sq, 3);
    CHECK_I64(a.g_sk, 6144);
    CHECK_I64(a.g_sqsq, 3);
    CHECK_I64(a.g_sqsk, 6144);
    CHECK_I64(a.context_sum, 6144);
    CHECK_I64(a.generation_sum, 3);
    CHECK_I64(a.batch_size, 6147); /* c_sq + g_sq */
    CHECK(a.has_sqsk);
    tl_iter_details d;
    tl_iter_details_of(&a, &d);
    CHECK_I64(d.num_requests, 5);
    CHECK_I64(tl_iter_phase(&d), TL_PHASE_PREFILLDECODE);

    a = parse("execute_context_2(6144)_generation_3(3)", TL_IT_VLLM_NATIVE);
    CHECK_I64(a.context_requests, 2);
    CHECK_I64(a.context_sum, 6144);
    CHECK_I64(a.generation_requests, 3);
    CHECK_I64(a.generation_sum, 3);
    CHECK_I64(a.c_sq, 6144);
    CHECK_I64(a.g_sq, 3);
    CHECK_I64(a.batch_size, 6147);
    CHECK(!a.has_sqsk);
    /* prefix match: trailing text is ignored */
    a = parse("execute_context_0(0)_generation_64(64) tail", TL_IT_VLLM_NATIVE);
    CHECK_I64(a.generation_requests, 64);
    /* the shared serving traces' annotation */
    a = parse("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)", TL_IT_VLLM_DETAILED);
    CHECK_I64(a.batch_size, 32);
    CHECK_I64(a.g_sk, 32785);
    /* a count of more than 15 digits: unparsed, hence unmatched */
    a = parse("execute_context_1234567890123456(1)_generation_0(0)", TL_IT_NONE);
    CHECK_I64(a.batch_size, 1);
}

static void sglang(void)
{
    tl_iter_ann a = parse("step[EXTEND bs=2 toks=14721 c_sq=14721 c_sqsq=108745533 c_sqsk=108745533 c_sk=14721]",
                          TL_IT_SGLANG_DETAILED);
    CHECK_I64(a.context_requests, 2);
    CHECK_I64(a.context_sum, 14721);
    CHECK_I64(a.c_sq, 14721);
    CHECK_I64(a.c_sk, 14721);
    CHECK_I64(a.c_sqsq, 108745533);
    CHECK_I64(a.c_sqsk, 108745533);
    CHECK_I64(a.generation_requests, 0);
    CHECK_I64(a.batch_size, 14721);
    CHECK(a.has_sqsk);

    a = parse("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]", TL_IT_SGLANG_DETAILED);
    CHECK_I64(a.generation_requests, 64);
    CHECK_I64(a.generation_sum, 128); /* MTP: g_sq > bs */
    CHECK_I64(a.g_sk, 131072);
    CHECK_I64(a.g_sqsk, 262144);
    CHECK_I64(a.batch_size, 128);

    a = parse("step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40\n    g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]",
              TL_IT_SGLANG_DETAILED);
    CHECK_I64(a.context_requests, 1);
    CHECK_I64(a.generation_requests, 1);
    CHECK_I64(a.context_sum, 5);
    CHECK_I64(a.generation_sum, 1);
    CHECK_I64(a.batch_size, 6);
    tl_iter_details d;
    tl_iter_details_of(&a, &d);
    CHECK_I64(tl_iter_phase(&d), TL_PHASE_PREFILLDECODE);
    /* detailed without any count: toks, then bs */
    a = parse("step[EXTEND bs=3 toks=99 c_sqsq=0]", TL_IT_SGLANG_DETAILED);
    CHECK_I64(a.batch_size, 99);
    a = parse("step[EXTEND bs=3 c_sqsq=0]", TL_IT_SGLANG_DETAILED);
    CHECK_I64(a.batch_size, 3);

    a = parse("step[DECODE bs=64]", TL_IT_SGLANG_NATIVE);
    CHECK_I64(a.generation_requests, 64);
    CHECK_I64(a.generation_sum, 64);
    CHECK_I64(a.g_sq, 64);
    CHECK_I64(a.batch_size, 64);
    CHECK(!a.has_sqsk);
    a = parse("step[DECODE bs=32]", TL_IT_SGLANG_NATIVE); /* the shared SGLang trace */
    CHECK_I64(a.batch_size, 32);
    a = parse("step[EXTEND bs=2 toks=14721]", TL_IT_SGLANG_NATIVE);
    CHECK_I64(a.context_requests, 2);
    CHECK_I64(a.context_sum, 14721);
    CHECK_I64(a.c_sq, 14721);
    CHECK_I64(a.batch_size, 14721);
    a = parse("step[MIXED bs=2]", TL_IT_SGLANG_NATIVE);
    CHECK_I64(a.context_requests, 2);
    CHECK_I64(a.batch_size, 2);
    /* [FIX] the reference's parser rejects extra fields (unmatched) */
    a = parse("step[MIXED bs=2 c=1 g=1]", TL_IT_SGLANG_NATIVE);
    CHECK_I64(a.context_requests, 1);
    CHECK_I64(a.generation_requests, 1);
    CHECK_I64(a.batch_size, 2);
    a = parse("step[DECODE bs=8 foo=bar]", TL_IT_SGLANG_NATIVE);
    CHECK_I64(a.generation_requests, 8);
    /* \b after the mode word */
    parse("step[DECODEX bs=64]", TL_IT_NONE);
}

static void atom(void)
{
    tl_iter_ann a = parse("prefill[bs=2 tok=14721 ctx=[7803, 6918]]", TL_IT_ATOM_NATIVE);
    const char *n1 = "prefill[bs=2 tok=14721 ctx=[7803, 6918]]";
    CHECK_I64(a.context_requests, 2);
    CHECK_I64(a.context_sum, 14721);
    CHECK_I64(a.c_sq, 14721);
    CHECK_I64(a.batch_size, 14721);
    CHECK(!a.has_sqsk);
    CHECK(a.has_ctx);
    CHECK(a.ctx_len == 12 && !strncmp(n1 + a.ctx_off, "[7803, 6918]", 12));

    const char *n2 = "prefill[bs=6 tok=17408 ctx=[4096, 4096, 4096]...+3]";
    a = parse(n2, TL_IT_ATOM_NATIVE);
    CHECK_I64(a.context_requests, 6);
    CHECK_I64(a.batch_size, 17408);
    CHECK(a.ctx_len == 23 && !strncmp(n2 + a.ctx_off, "[4096, 4096, 4096]...+3", 23));

    a = parse("decode[bs=117/128 tok=117 d=117]", TL_IT_ATOM_NATIVE);
    CHECK_I64(a.generation_requests, 117); /* CUDA-graph padding: the real bs */
    CHECK_I64(a.generation_sum, 117);
    CHECK_I64(a.g_sq, 117);
    CHECK(a.has_d && a.d == 117 && !a.has_p && !a.has_spec && !a.tbo && !a.has_ctx);

    a = parse("decode[bs=128 tok=384 p=2 d=126 sqsq=400 sqsk=5000 sk=6000 tbo=1]", TL_IT_ATOM_DETAILED);
    CHECK_I64(a.generation_requests, 128);
    CHECK_I64(a.generation_sum, 384);
    CHECK_I64(a.g_sq, 384);
    CHECK_I64(a.g_sk, 6000);
    CHECK_I64(a.g_sqsq, 400);
    CHECK_I64(a.g_sqsk, 5000);
    CHECK_I64(a.batch_size, 384);
    CHECK(a.has_sqsk);
    CHECK(a.has_p && a.p == 2 && a.has_d && a.d == 126 && a.tbo);
    /* sqsq without sqsk: detailed grammar, has_sqsk false */
    a = parse("decode[bs=4 tok=4 sqsq=4]", TL_IT_ATOM_DETAILED);
    CHECK(!a.has_sqsk);
    /* a value that is not an int: 0 (_safe_int) */
    a = parse("decode[bs=4 tok=x]", TL_IT_ATOM_NATIVE);
    CHECK_I64(a.generation_sum, 0);
    CHECK_I64(a.batch_size, 0);
}

static void diffusion_capture(void)
{
    const char *n = "execute_diffusion_1_1024x1024";
    tl_iter_ann a = parse(n, TL_IT_DIFFUSION_NATIVE);
    CHECK_I64(a.batch_size, 1);
    CHECK(a.has_resolution && a.res_len == 9 && !strncmp(n + a.res_off, "1024x1024", 9));
    tl_iter_details d;
    tl_iter_details_of(&a, &d);
    CHECK_I64(d.num_requests, 0);
    CHECK_I64(tl_iter_phase(&d), TL_PHASE_NONE); /* matched, no requests: idle */
    CHECK_STR(tl_iter_format_name(a.format), "diffusion_native");

    a = parse("ProfilerStep#3", TL_IT_NONE); /* unmatched: one decode-equivalent step */
    tl_iter_details_of(&a, &d);
    CHECK_I64(d.batch_size, 1);
    CHECK_I64(d.num_requests, 1);
    CHECK_I64(d.generation_requests, 1);
    CHECK_I64(d.generation_sum, 1);
    CHECK_I64(tl_iter_phase(&d), TL_PHASE_DECODE_ONLY);
    CHECK(tl_iter_format_name(a.format) == NULL);

    int64_t bs;
    size_t off, len;
    const char *c = "capture_8192_PIECEWISE";
    CHECK(tl_capture_annotation_parse(c, &bs, &off, &len));
    CHECK_I64(bs, 8192);
    CHECK(len == 9 && !strncmp(c + off, "PIECEWISE", 9));
    CHECK(tl_capture_annotation_parse("capture_32_DECODE", &bs, &off, &len) && bs == 32);
    CHECK(!tl_capture_annotation_parse("capture_x_FULL", &bs, &off, &len));
    CHECK(!tl_capture_annotation_parse("execute_diffusion_1_1024x1024", &bs, &off, &len));
}

static void phases(void)
{
    tl_iter_details d[5] = {
        {10, 2, 2, 10, 0, 0}, /* prefill only */
        {12, 3, 1, 9, 2, 3},  /* mixed */
        {4, 4, 0, 0, 4, 4},   /* decode */
        {5, 5, 0, 0, 5, 5},   /* decode */
        {0, 0, 0, 0, 0, 0},   /* idle */
    };
    CHECK_STR(tl_phase_name(tl_iter_phase(&d[0])), "prefill_only");
    CHECK_STR(tl_phase_name(tl_iter_phase(&d[1])), "prefilldecode");
    CHECK_STR(tl_phase_name(tl_iter_phase(&d[2])), "decode_only");
    CHECK(tl_phase_name(tl_iter_phase(&d[4])) == NULL);
    tl_phase_window w;
    tl_phase_from_window(d, 5, &w);
    CHECK_I64(w.num_prefill, 1);
    CHECK_I64(w.num_prefilldecode, 1);
    CHECK_I64(w.num_decode, 2);
    CHECK_I64(w.avg_bs, 6);   /* int(31 / 5) */
    CHECK_I64(w.avg_conc, 2); /* int(14 / 5) */
}

static tl_iter_details req(int64_t n, int64_t ctx)
{
    tl_iter_details d = {n, n, ctx, ctx, n - ctx, n - ctx};
    return d;
}

static void steady(void)
{
    /* reference: [2]*4 + [20]*30, num_steps 32 -> [(4, 33)]; [FIX] (4, 34) */
    tl_iter_details d[40];
    for (int i = 0; i < 34; i++) d[i] = req(i < 4 ? 2 : 20, 0);
    tl_region *r;
    int64_t g;
    size_t n = tl_steady_state_regions(d, 34, 32, &r, &g, NULL);
    CHECK_I64(n, 1);
    CHECK_I64(g, 20);
    CHECK_I64(r[0].start, 4);
    CHECK_I64(r[0].end, 34);
    tl_ss_opts o = {.num_steps = 32, .mode = TL_SS_DECODE_ONLY};
    tl_region w;
    tl_ss_info info;
    CHECK_I64(tl_steady_state_window(d, 34, r, n, &o, &w, &info), 1);
    CHECK_I64(w.start, 4);
    CHECK_I64(w.end, 34); /* the run is 30 steps, under num_steps */
    o.mode = TL_SS_MAX_PREFILLDECODE;
    CHECK_I64(tl_steady_state_window(d, 34, r, n, &o, &w, &info), 0); /* no prefill step */
    o.mode = TL_SS_MIXED;
    CHECK_I64(tl_steady_state_window(d, 34, r, n, &o, &w, &info), 1);
    CHECK_I64(w.start, 4); /* region shorter than num_steps: the whole region */
    CHECK_I64(w.end, 34);
    free(r);

    /* reference: alternating 20/2 x 10, num_steps 12 -> fallback [(4, 6)] */
    for (int i = 0; i < 10; i++) d[i] = req(i % 2 == 0 ? 20 : 2, 0);
    int fb = 0;
    n = tl_steady_state_regions(d, 10, 12, &r, &g, &fb);
    CHECK(fb);
    CHECK_I64(n, 1);
    CHECK_I64(r[0].start, 4);
    CHECK_I64(r[0].end, 6);
    free(r);

    /* a region that ends: 6 near steps start it, far steps count it down */
    for (int i = 0; i < 40; i++) d[i] = req(i < 20 ? 30 : 3, 0);
    n = tl_steady_state_regions(d, 40, 32, &r, &g, NULL);
    CHECK_I64(n, 1);
    CHECK_I64(r[0].start, 0);
    CHECK_I64(r[0].end, 25); /* c = 6 at i = 5 (start 0), then 6 far steps 20..25 */
    free(r);

    /* mixed: 40 steps at peak, a prefill step every 4th (ratio 0.25);
     * windows of 8 from region (0, 40) step 2; the first window with the
     * reference ratio wins */
    for (int i = 0; i < 40; i++) d[i] = req(16, i % 4 == 3 ? 1 : 0);
    n = tl_steady_state_regions(d, 40, 8, &r, &g, NULL);
    CHECK_I64(n, 1);
    CHECK_I64(r[0].end, 40);
    o = (tl_ss_opts){.num_steps = 8, .mode = TL_SS_MIXED};
    CHECK_I64(tl_steady_state_window(d, 40, r, n, &o, &w, &info), 1);
    CHECK(info.reference_ratio == 0.25);
    CHECK_I64(w.start, 0);
    CHECK_I64(w.end, 8);
    o.mode = TL_SS_DECODE_ONLY; /* the first longest decode-only run: 0..3 */
    CHECK_I64(tl_steady_state_window(d, 40, r, n, &o, &w, &info), 1);
    CHECK_I64(w.start, 0);
    CHECK_I64(w.end, 3);
    /* CONC/OSL/R: ideal = 2*16 / (64 * 2) = 0.25, num_steps raised to 4 */
    o = (tl_ss_opts){.num_steps = 2, .mode = TL_SS_MIXED, .have_conc = 1, .conc = 16, .have_osl = 1, .osl = 64,
                     .have_r = 1, .r = 1.5};
    CHECK_I64(tl_steady_state_window(d, 40, r, n, &o, &w, &info), 1);
    CHECK(info.r_clamped);
    CHECK(info.ideal_ratio == 0.25);
    CHECK_I64(info.num_steps, 4);
    CHECK_I64(w.end - w.start, 4);
    CHECK(!info.conc_mismatch);
    o.osl = 0; /* no ratio */
    CHECK_I64(tl_steady_state_window(d, 40, r, n, &o, &w, &info), -1);
    free(r);

    n = tl_steady_state_regions(d, 0, 8, &r, &g, NULL);
    CHECK_I64(n, 0);
    CHECK(r == NULL);
}

static void roots(void)
{
    /* two tier-2 roots on thread 1 and a ProfilerStep; launches inside / outside / on another thread; a graph
     * launch with two kernels (one overlapping another launch's) */
    const char *doc =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":500},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"step[DECODE bs=4]\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"execute_context_1(7)_generation_2(2)\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5,\"args\":{\"correlation\":1}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaGraphLaunch\",\"pid\":1,\"tid\":1,\"ts\":30,\"dur\":5,\"args\":{\"correlation\":2}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":40,\"dur\":5,\"args\":{\"correlation\":3}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":105,\"dur\":10,\"args\":{\"correlation\":4}},"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":20},"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"id\":1,\"pid\":0,\"tid\":7,\"ts\":50,\"bp\":\"e\"},"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":3,\"pid\":1,\"tid\":2,\"ts\":40},"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"id\":3,\"pid\":0,\"tid\":7,\"ts\":100,\"bp\":\"e\"},"
        "{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":4,\"pid\":1,\"tid\":1,\"ts\":105},"
        "{\"ph\":\"f\",\"cat\":\"ac2g\",\"id\":4,\"pid\":0,\"tid\":7,\"ts\":120,\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k1\",\"pid\":0,\"tid\":7,\"ts\":50,\"dur\":10,\"args\":{\"correlation\":1}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"g1\",\"pid\":0,\"tid\":7,\"ts\":55,\"dur\":10,\"args\":{\"correlation\":2}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"g2\",\"pid\":0,\"tid\":7,\"ts\":80,\"dur\":20,\"args\":{\"correlation\":2}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"other_thread\",\"pid\":0,\"tid\":7,\"ts\":100,\"dur\":3,\"args\":{\"correlation\":3}},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"late\",\"pid\":0,\"tid\":7,\"ts\":120,\"dur\":3,\"args\":{\"correlation\":4}}"
        "]}";
    tl_trace t;
    memset(&t, 0, sizeof t);
    tl_es_init(&t.es);
    tl_error err;
    CHECK_I64(tl_scan_buffer("iter", doc, strlen(doc), &t.es, &err), 0);
    tl_tree_opts to = {0};
    tl_tree_build(&t.tree, &t.es, &to);
    tl_iteration *it;
    size_t n = tl_trace_iterations(&t, &it);
    CHECK_I64(n, 2); /* by ts; ProfilerStep is no root */
    if (n == 2) {
        CHECK_I64(it[0].uid, 2);
        CHECK_I64(it[0].ann.format, TL_IT_VLLM_NATIVE);
        CHECK_I64(it[0].tier, 2);
        CHECK_I64(it[0].n_gpu, 3);          /* k1, g1, g2: not other_thread, not late */
        CHECK_I64(it[0].gpu_busy, 35000);   /* [50,65) + [80,100) ns*1000 */
        CHECK_I64(it[0].gpu_first, 50000);
        CHECK_I64(it[0].gpu_last, 100000);
        CHECK_I64(it[1].uid, 1);
        CHECK_I64(it[1].ann.format, TL_IT_SGLANG_NATIVE);
        CHECK_I64(it[1].n_gpu, 0);
        CHECK_I64(it[1].gpu_busy, 0);
    }
    free(it);
    tl_tree_free(&t.tree);
    tl_es_free(&t.es);

    /* a tier-1 root hides every tier-2 one */
    const char *doc2 =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"step[DECODE bs=4]\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"step[DECODE bs=4 g_sqsq=4]\",\"pid\":0,\"tid\":1,\"ts\":0,\"dur\":100},"
        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"decode[bs=4 tok=4 sqsq=4 sqsk=8]\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":100}"
        "]}";
    memset(&t, 0, sizeof t);
    tl_es_init(&t.es);
    CHECK_I64(tl_scan_buffer("iter2", doc2, strlen(doc2), &t.es, &err), 0);
    tl_tree_build(&t.tree, &t.es, &to);
    n = tl_trace_iterations(&t, &it);
    CHECK_I64(n, 1);
    if (n == 1) {
        CHECK_I64(it[0].uid, 2);
        CHECK_I64(it[0].tier, 1);
        CHECK_I64(it[0].ann.format, TL_IT_ATOM_DETAILED);
        CHECK(it[0].ann.has_sqsk);
    }
    free(it);
    tl_tree_free(&t.tree);
    tl_es_free(&t.es);
}

/* The spec's search, literally: every start, every p up to m / 2; with
 * need, a block must hold a needed index. */
static int brute_period(const uint32_t *x0, size_t n, const uint8_t *need, size_t *start, size_t *period)
{
    for (size_t s = 0; s < n; s++) {
        const uint32_t *x = x0 + s;
        size_t m = n - s;
        for (size_t p = 1; p <= m / 2; p++) {
            size_t count = 1, held = !need;
            for (size_t k = s; k < s + p && !held; k++) held = need[k];
            if (!held) continue;
            while ((count + 1) * p <= m && !memcmp(x + count * p, x, p * sizeof *x)) count++;
            if (count >= 3 && 2 * count * p > m) {
                *start = s;
                *period = p;
                return 1;
            }
        }
    }
    return 0;
}

static void generic(void)
{
    uint32_t seed = 12345, r[40];
    uint8_t need[40];
    int agree = 1;
    for (int k = 0; k < 40000 && agree; k++) { /* the indexed search against the literal one */
        size_t n = (seed = seed * 1103515245u + 12345u) >> 16 & 31;
        for (size_t i = 0; i < n; i++) {
            r[i] = ((seed = seed * 1103515245u + 12345u) >> 16) % (k % 3 + 2);
            need[i] = ((seed = seed * 1103515245u + 12345u) >> 16) % (k % 4 + 2) == 0;
        }
        const uint8_t *nd = k & 1 ? need : NULL; /* half the runs with a need */
        size_t s1 = 0, p1 = 0, s2 = 0, p2 = 0;
        int f1 = tl_repeating_period(r, n, nd, &s1, &p1), f2 = brute_period(r, n, nd, &s2, &p2);
        agree = f1 == f2 && (!f1 || (s1 == s2 && p1 == p2));
    }
    CHECK(agree);

    const uint32_t a[] = {9, 1, 2, 3, 1, 2, 3, 1, 2, 3, 7};
    size_t s, p;
    CHECK(tl_repeating_period(a, 11, NULL, &s, &p));
    CHECK_I64(s, 1);
    CHECK_I64(p, 3);
    const uint32_t b[] = {1, 1, 1, 5, 6, 7, 8, 9, 10}; /* 3 repeats cover 3 of 9: not more than half */
    CHECK(!tl_repeating_period(b, 9, NULL, &s, &p));
    const uint32_t c[] = {1, 1, 1, 5, 6}; /* 3 of 5 */
    CHECK(tl_repeating_period(c, 5, NULL, &s, &p) && s == 0 && p == 1);
    const uint32_t d[] = {4, 5, 4, 5}; /* two repeats only */
    CHECK(!tl_repeating_period(d, 4, NULL, &s, &p));
    /* the first repeat (9 x 8, 16 of 14 > half) holds no needed index: the
     * later 1 2 block does */
    const uint32_t e[] = {9, 9, 9, 9, 9, 9, 9, 9, 1, 2, 1, 2, 1, 2};
    const uint8_t ne[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0};
    CHECK(tl_repeating_period(e, 14, NULL, &s, &p) && s == 0 && p == 1);
    CHECK(tl_repeating_period(e, 14, ne, &s, &p) && s == 8 && p == 2);
    const uint8_t none[14] = {0};
    CHECK(!tl_repeating_period(e, 14, none, &s, &p));

    /* forward [0, 1000] holds mm, relu three times (each one launch and
     * one kernel), then a lone copy_ without GPU work */
    char doc[8192];
    size_t n = (size_t)snprintf(doc, sizeof doc, "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"forward\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1000}");
    for (int i = 0; i < 6; i++) {
        int t0 = 10 + i * 100;
        n += (size_t)snprintf(doc + n, sizeof doc - n,
            ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":50}"
            ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":5,\"args\":{\"correlation\":%d}}"
            ",{\"ph\":\"s\",\"cat\":\"ac2g\",\"id\":%d,\"pid\":1,\"tid\":1,\"ts\":%d}"
            ",{\"ph\":\"f\",\"cat\":\"ac2g\",\"id\":%d,\"pid\":0,\"tid\":7,\"ts\":%d,\"bp\":\"e\"}"
            ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":%d,\"args\":{\"correlation\":%d}}",
            i % 2 ? "aten::relu" : "aten::mm", t0, t0 + 10, i + 1, i + 1, t0 + 10, i + 1, t0 + 60, i, t0 + 60, 20 + i, i + 1);
    }
    n += (size_t)snprintf(doc + n, sizeof doc - n,
        ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::copy_\",\"pid\":1,\"tid\":1,\"ts\":900,\"dur\":10}]}");
    CHECK(n < sizeof doc);
    tl_trace t;
    memset(&t, 0, sizeof t);
    tl_es_init(&t.es);
    tl_error err;
    CHECK_I64(tl_scan_buffer("generic", doc, strlen(doc), &t.es, &err), 0);
    tl_tree_opts to = {0};
    tl_tree_build(&t.tree, &t.es, &to);
    tl_iteration *it;
    CHECK_I64(tl_trace_iterations(&t, &it), 0); /* no annotation */
    size_t k = tl_trace_generic_iterations(&t, &it);
    CHECK_I64(k, 3);
    for (size_t i = 0; i < k && k == 3; i++) {
        CHECK_STR(tl_es_name(&t.es, it[i].uid), "aten::mm");
        CHECK_I64(it[i].tier, 3);
        CHECK_I64(it[i].ann.format, TL_IT_NONE);
        CHECK_I64(it[i].ts, (int64_t)(10 + 200 * i) * 1000);
        CHECK_I64(it[i].dur, 150 * 1000);             /* mm start to relu end */
        CHECK_I64(it[i].n_gpu, 2);                    /* its two kernels */
        CHECK_I64(it[i].gpu_busy, (int64_t)(41 + 4 * i) * 1000); /* 20+2i and 21+2i, disjoint */
    }
    free(it);
    tl_tree_free(&t.tree);
    tl_es_free(&t.es);

    /* forward's children: four aten::view without GPU work, then one mm and
     * one relu, each with a kernel. The views repeat (the reference's first
     * period: four iterations of nothing, bert's transpose + as_strided);
     * no block with GPU work repeats: no iteration */
    n = (size_t)snprintf(doc, sizeof doc, "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"forward\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1000}");
    for (int i = 0; i < 4; i++)
        n += (size_t)snprintf(doc + n, sizeof doc - n,
            ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::view\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":5}",
            10 + 10 * i);
    for (int i = 0; i < 2; i++) {
        int t0 = 100 + i * 100;
        n += (size_t)snprintf(doc + n, sizeof doc - n,
            ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":50}"
            ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":5,\"args\":{\"correlation\":%d}}"
            ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":20,\"args\":{\"correlation\":%d}}",
            i ? "aten::relu" : "aten::mm", t0, t0 + 10, i + 1, i, t0 + 60, i + 1);
    }
    n += (size_t)snprintf(doc + n, sizeof doc - n, "]}");
    CHECK(n < sizeof doc);
    memset(&t, 0, sizeof t);
    tl_es_init(&t.es);
    CHECK_I64(tl_scan_buffer("generic_views", doc, strlen(doc), &t.es, &err), 0);
    tl_tree_build(&t.tree, &t.es, &to);
    CHECK_I64(tl_trace_generic_iterations(&t, &it), 0);
    CHECK(it == NULL);
    tl_tree_free(&t.tree);
    tl_es_free(&t.es);
}

int main(void)
{
    tl_ann_grammars_init(&G);
    vllm();
    sglang();
    atom();
    diffusion_capture();
    phases();
    steady();
    roots();
    generic();
    tl_ann_grammars_free(&G);
    printf("%d checks, %d failed\n", tl_test_state.checks, tl_test_state.failures);
    return tl_test_state.failures != 0;
}
