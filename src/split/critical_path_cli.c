/* critical_path_cli.c — `tracelens critical-path TRACE [--step N] -o OUT`:
 * the critical path of one step (trace/critical_path.h) and the trace
 * re-serialised with it overlaid (split.h's writer). Owns nothing after it
 * returns. */
#include "critical_path_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../trace/critical_path.h"
#include "../util/clock.h"
#include "../util/vec.h"
#include "split.h"

static const char *const CP_HELP =
    "usage: tracelens critical-path TRACE -o OUT.json.gz [--step N | --all]\n"
    "\n"
    "The critical path of one step, by Holistic Trace Analysis' lightweight\n"
    "algorithm: a graph of the start and end of every CPU op, runtime call and\n"
    "launched GPU event, with call-stack, kernel-launch, same-stream and\n"
    "synchronisation edges (cudaDeviceSynchronize, cudaStreamSynchronize,\n"
    "cudaEventSynchronize, cudaStreamWaitEvent), and its longest path. Prints\n"
    "the path's length and where its time goes, and writes OUT: the whole trace\n"
    "with \"critical\": 1 in the args of the events on the path and flow events\n"
    "(cat critical_path) along its dependency, launch and sync edges, as HTA's\n"
    "overlaid trace; it opens in Perfetto. docs/critical-path.md.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE    the overlaid trace (gzip JSON; required)\n"
    "  --step N             ProfilerStep#N (default: the step of median wall\n"
    "                       time, or the whole trace when it has no steps)\n"
    "  --all                the whole trace\n"
    "  -q, --quiet          no summary on stdout\n"
    "  -h, --help           this help\n"
    "\n"
    "Exit status: 0 success, 1 input error (unreadable trace, no such step,\n"
    "nothing to analyse), 2 usage error.\n";

static void print_summary(const tl_cpath *p, const char *out, double secs)
{
    /* a path shorter than one stream's serial GPU work is HTA's longest path, not the step's critical path */
    int below = tl_cpath_below_stream(p);
    printf("%s of ", below ? "HTA's longest path" : "critical path");
    if (p->step >= 0) printf("ProfilerStep#%ld", p->step);
    else printf("the whole trace");
    double wall = (double)(p->win_end - p->win_start) / 1000.0;
    printf(": %.3f ms of %.3f ms wall time, %zu events, %zu of %zu nodes (found in %.2f s)\n",
           (double)p->length / 1e6, wall / 1000.0, p->n_events, p->n_path, p->n_nodes, secs);
    if (below) {
        char stream[48] = "a stream (no stream id)";
        if (p->busy_stream >= 0) snprintf(stream, sizeof stream, "stream %lld", (long long)p->busy_stream);
        printf("not the critical path: %s is busy %.3f ms with the GPU events launched in the window, in\n"
               "order, so the critical path is at least that long; no CPU or GPU bound follows from this path's\n"
               "split:\n",
               stream, (double)p->stream_busy / 1e6);
    }
    for (int c = 0; c < TL_CPC__COUNT; c++) {
        double pct = p->length > 0 ? 100.0 * (double)p->by_cat[c] / (double)p->length : 0.0;
        printf("  %-28s %14.3f ms  %5.1f%%\n", tl_cp_cat_name(c), (double)p->by_cat[c] / 1e6, pct);
    }
    /* the parts of the split that are not what their names say: the host's time in calls that wait for the GPU,
     * the GPU's time in memory copies */
    if (p->blocking > 0)
        printf("    of cpu_bound, in calls that wait for the GPU (synchronizations, blocking copies): %.3f ms\n",
               (double)p->blocking / 1e6);
    if (p->copies > 0)
        printf("    of gpu_compute_bound, memory copies and sets: %.3f ms\n", (double)p->copies / 1e6);
    printf("overlaid trace: %s\n", out);
    if (tl_cpath_host_missing(p)) {
        double cover = p->win_end > p->win_start ? (double)p->length / (double)(p->win_end - p->win_start) : 1.0;
        printf("note: the trace records no synchronisation events (cuda_sync; the profiler writes them only when\n"
               "given experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True),\n"
               "PyTorch 2.1 and later on CUDA), so the path cannot pass from the GPU back to the CPU where the host\n"
               "waited for it: host work after such a wait is missing, and the path covers %.0f%% of the window's\n"
               "wall time.\n",
               100.0 * cover);
    }
}

static int usage(const char *msg) { return tl_usage_error("critical-path", msg); }

int tl_critical_path_cli(int argc, char **argv)
{
    tl_cp_opts o = {0};
    const char *trace = NULL, *out = NULL;
    int quiet = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(CP_HELP, stdout);
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) return usage("-o/--output needs a value");
            out = argv[++i];
        } else if (!strcmp(a, "--step")) {
            if (i + 1 >= argc) return usage("--step needs a value");
            const char *v = argv[++i];
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (!*v || *end || errno || n < 0) return usage("--step: not a step number (N of ProfilerStep#N)");
            o.has_step = 1, o.step = n;
        } else if (!strcmp(a, "--all")) {
            o.whole = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown option '%.60s'", a);
            return usage(msg);
        } else if (!trace) {
            trace = a;
        } else {
            return usage("more than one trace given");
        }
    }
    if (!trace) return usage("no trace given");
    if (!out) return usage("-o/--output is required");
    if (o.has_step && o.whole) return usage("--step and --all exclude each other");
    tl_load_opts lo = {0};
    tl_error err = {{0}};
    tl_trace *t = tl_trace_load(trace, &lo, &err);
    if (!t) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_INPUT;
    }
    tl_cpath p;
    double t0 = tl_now_s();
    int cprc = tl_critical_path(t, &o, &p, &err);
    double secs = tl_now_s() - t0;
    if (cprc != 0) {
        fprintf(stderr, "tracelens: %s: %s\n", trace, err.msg);
        tl_trace_release(t);
        return TL_EXIT_INPUT;
    }
    uint8_t *mark = tl_xcalloc(t->es.n ? t->es.n : 1, 1);
    for (size_t i = 0; i < p.n_events; i++) mark[p.events[i]] = 1;
    size_t nf = 0;
    tl_cp_flow *flows = tl_cpath_flows(&p, &t->es, &nf);
    int rc = tl_split_write_overlay(&t->es, mark, flows, nf, out, &err);
    free(mark);
    free(flows);
    if (rc != 0) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
    } else if (!quiet) {
        print_summary(&p, out, secs);
    }
    tl_cpath_free(&p);
    tl_trace_release(t);
    return rc != 0 ? TL_EXIT_INPUT : 0;
}
