/* main.c — the `tracelens` command line: subcommand dispatch, option
 * parsing, exit statuses (0 ok, 1 input or analysis error, 2 usage). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare/compare.h"
#include "diff/diff_beside.h"
#include "lua/host.h"
#include "lua/lextension.h"
#include "lua/repl.h"
#include "ranks/cli.h"
#include "split/critical_path_cli.h"
#include "split/match.h"
#include "split/split_cli.h"
#include "report/platform.h"
#include "report/report.h"
#include "trace/capture.h"
#include "trace/timeline.h"
#include "trace/trace.h"
#include "trace/tree.h"
#include "util/malloc_tune.h"

static const char *const MAIN_HELP =
    "usage: tracelens COMMAND [ARGS...]\n"
    "\n"
    "Analyse a PyTorch profiler (Kineto) trace, .json or .json.gz.\n"
    "\n"
    "commands:\n"
    "  run SCRIPT [ARGS...]   run a Lua script with the tracelens module loaded\n"
    "                         (e.g. `tracelens run orchestrator.lua TRACE`)\n"
    "  report TRACE -o DIR    write the perf report: DIR/perf_report.xlsx and\n"
    "                         DIR/perf_report_csvs/<sheet>.csv\n"
    "  repl [TRACE]           interactive Lua prompt with `trace` bound\n"
    "  diff T1 T2 -o DIR      TraceDiff of two traces: the merged call tree, diff_stats,\n"
    "                         the cpu_op maps (`tracelens diff --help`)\n"
    "  validate DIR           structural checks of an analysis output directory\n"
    "  check TRACE...         trace health check: what limits the analysis, records\n"
    "                         that cannot be right, and what to change in the\n"
    "                         profiler call (`tracelens check --help`)\n"
    "  compare R1 R2 [...]    compare perf reports (CSV dirs or .xlsx) with the first\n"
    "                         (docs/compare.md)\n"
    "  ranks DIR -o OUT       multi-rank collective report from one trace per rank\n"
    "                         (docs/ranks.md; also `ranks summarize` / `ranks reduce`,\n"
    "                         and under mpirun in an MPI build)\n"
    "  split TRACE -o DIR     split a serving trace by its iterations (steady state,\n"
    "                         phases; docs/split.md)\n"
    "  match-blocks A B -o OUT\n"
    "                         the best-matching blocks of iterations of two serving\n"
    "                         traces, per phase (docs/split.md)\n"
    "  critical-path TRACE -o OUT.json.gz\n"
    "                         the critical path of a step (HTA's algorithm) and the\n"
    "                         trace with it overlaid (docs/critical-path.md)\n"
    "\n"
    "options:\n"
    "  -h, --help             this help; `tracelens COMMAND --help` for a command\n"
    "  --version              print the version\n"
    "\n"
    "Exit status: 0 success, 1 input or analysis error, 2 usage error.\n";

static const char *const REPORT_HELP =
    "usage: tracelens report TRACE -o DIR [options]\n"
    "\n"
    "Loads TRACE, builds the CPU-op -> launch -> GPU-kernel tree and writes the\n"
    "perf report: DIR/perf_report.xlsx and DIR/perf_report_csvs/<sheet>.csv\n"
    "(gpu_timeline, ops_summary_by_category, ops_summary, ops_unique_args,\n"
    "unified_perf_summary, the roofline sheets of each op family (GEMM,\n"
    "SDPA_fwd/bwd, CONV_fwd/bwd, UnaryElementwise, BinaryElementwise,\n"
    "Normalization, Reduce_fwd, ...), kernel_summary, short_kernel_histogram,\n"
    "short_kernels_summary, coll_analysis). docs/report-columns.md explains\n"
    "every column. The reference's flag names are accepted too (in brackets).\n"
    "\n"
    "output:\n"
    "  -o, --output DIR               output directory (required) [--output_csvs_dir]\n"
    "  --xlsx PATH                    workbook path (default DIR/perf_report.xlsx)\n"
    "                                 [--output_xlsx_path]\n"
    "  --no-xlsx, --no-csv            skip one of the two outputs\n"
    "inference (serving traces: vLLM, SGLang, ATOM, xDiT):\n"
    "  --inference                    the inference report: ops_summary with the subtree\n"
    "                                 count, per-category sheets <Cat>_fwd (single sheets\n"
    "                                 GEMM, UnaryElementwise, BinaryElementwise only), the\n"
    "                                 attention ops get the iteration annotation's\n"
    "                                 sequence statistics; kernel_summary and the\n"
    "                                 short-kernel sheets only when asked\n"
    "                                 (--enable_kernel_summary, --short_kernel_study)\n"
    "  --group-by-parent-module       parent_module and call_stack in ops_summary,\n"
    "                                 ops_summary_by_category and ops_unique_args\n"
    "                                 (python functions join the tree)\n"
    "                                 [--group_by_parent_module]\n"
    "  --capture-folder DIR           merge the graph-capture traces in DIR into each\n"
    "                                 graph launch (hipGraphLaunch/cudaGraphLaunch) of\n"
    "                                 TRACE, so replayed kernels get CPU ops, shapes,\n"
    "                                 call stacks and nn.Module parents [--capture_folder].\n"
    "                                 DIR is never modified, except that\n"
    "                                 DIR/execution_details.json is written when it is\n"
    "                                 absent (as the reference does)\n"
    "  --comparison-capture-folder DIR  the same for the comparison trace (needs\n"
    "                                 --comparison_json_path) [--comparison_capture_folder]\n"
    "comparison:\n"
    "  --comparison-json-path T2      TraceDiff against trace T2 (loaded with the same\n"
    "                                 options): unified_perf_summary gets speedup, delta,\n"
    "                                 lca_count_trace2, lca_id, lca_name and the LCA totals\n"
    "                                 after Kernel Time (us)_sum, and a diff_stats sheet\n"
    "                                 [--comparison_json_path]\n"
    "extension:\n"
    "  --extension-file F.lua         a Lua module adding op categories, perf models\n"
    "                                 and sheets (docs/report-columns.md)\n"
    "                                 [--extension_file]\n"
    "roofline:\n"
    "  --platform NAME                a shipped GPU spec (arch/*.json: A100 H100 H200\n"
    "                                 B200 GB200 A10 L4 L40S V100-SXM2 V100-PCIe MI210\n"
    "                                 MI250X MI300X MI325X MI355X), or none\n"
    "                                 [--gpu_arch_platform];\n"
    "                                 default: detected from the trace's device\n"
    "  --arch FILE                    a GPU spec JSON of your own [--gpu_arch_json_path]\n"
    "  --topk-roofline-ops N          keep N rows of each perf sheet [--topk_roofline_ops]\n"
    "timeline:\n"
    "  --micro-idle-thresh-us T       split idle time into micro (< T us) and\n"
    "                                 macro (>= T us) gaps [--micro_idle_thresh_us]\n"
    "  --include-unlinked-kernels     count GPU events no launch links to\n"
    "                                 [--include_unlinked_kernels]\n"
    "tree:\n"
    "  --include-call-stack           python functions join the call tree\n"
    "                                 [--include_call_stack]\n"
    "  --detect-recompute             mark activation-checkpoint recomputation: the\n"
    "                                 is_recompute column in gpu_timeline (two blocks),\n"
    "                                 the ops, unified and perf sheets (python functions\n"
    "                                 join the tree) [--detect_recompute]\n"
    "  --enable-pseudo-ops            split fused or multi-kernel ops into pseudo ops\n"
    "                                 with their own perf models (vLLM MoE: matmul_ogs,\n"
    "                                 aiter fused, GPTQ/AWQ; aiter flydsl MoE stages, MLA\n"
    "                                 decode/prefill, DeepSeek-V4 paged decode; the\n"
    "                                 frame-based ones need --include-call-stack) and\n"
    "                                 rename sglang_profiler::X_123 to sglang_profiler::X\n"
    "                                 [--enable_pseudo_ops]\n"
    "sheets:\n"
    "  --no-step-breakdown            omit step_breakdown (tracelens's own sheet: one row\n"
    "                                 per ProfilerStep#N with the GPU work it launched;\n"
    "                                 written when the trace has steps)\n"
    "  --no-idle-breakdown            omit idle_breakdown (tracelens's own: GPU idle time\n"
    "                                 per stream by cause, host / kernel / other wait,\n"
    "                                 the micro/macro split and the launch queue)\n"
    "  --no-launch-stats              omit launch_stats (tracelens's own: CPU launch time,\n"
    "                                 launch-to-start delay and GPU time per kernel name)\n"
    "  --no-user-annotations          omit user_annotations (tracelens's own: time per\n"
    "                                 record_function range name on CPU and GPU)\n"
    "  --no-kernel-sequences          omit kernel_sequences (tracelens's own: the kernel\n"
    "                                 sequences repeated on each stream, by GPU time)\n"
    "  --no-memcpy-summary            omit memcpy_summary (tracelens's own: copies and sets\n"
    "                                 by direction and host memory against the links)\n"
    "  --no-memory-timeline           omit memory_peak and memory_timeline (tracelens's\n"
    "                                 own: profile_memory traces' allocated / reserved\n"
    "                                 memory per device)\n"
    "  --no-kernel-summary            omit kernel_summary (on by default; off with\n"
    "                                 --inference) [--enable_kernel_summary turns it on]\n"
    "  --no-short-kernel-study        omit the short-kernel sheets (on by default; off\n"
    "                                 with --inference) [--short_kernel_study turns it on]\n"
    "  --short-kernel-threshold-us N  short means < N us (10) [--short_kernel_threshold_us]\n"
    "  --short-kernel-histogram-bins B  (100) [--short_kernel_histogram_bins]\n"
    "  --topk-short-kernels N         keep N rows of short_kernels_summary\n"
    "                                 [--topk_short_kernels]\n"
    "  --topk-ops N                   keep N rows of ops_unique_args [--topk_ops]\n"
    "  --group-by-num-kernels         num_kernels as a grouping key\n"
    "                                 [--group_by_num_kernels]\n"
    "  --no-coll-analysis             omit coll_analysis (with --inference also the\n"
    "                                 NCCL ops of unified_perf_summary) [--disable_coll_analysis]\n"
    "  --include-overlap-info         add the *_kl_overlap sheets: the op sheets also\n"
    "                                 grouped by the kernels on other streams that\n"
    "                                 overlap the op's [--include_overlap_info]\n"
    "  --include-first-occurrence-time  ops_unique_args gets first_occurrence_time (us\n"
    "                                 after the earliest group) [--include_first_occurrence_time]\n"
    "other:\n"
    "  --threads N                    threads that scan a plain .json file\n"
    "                                 (default: one per core for files >= 64 MB)\n"
    "  --max-value-mb N               the largest single JSON value (a string, an\n"
    "                                 event) the trace may hold, in MiB (default 64,\n"
    "                                 at most 4095): a bigger one is an input error\n"
    "  -q, --quiet                    no progress messages\n"
    "  -h, --help                     this help\n";

static const char *const RUN_HELP =
    "usage: tracelens run [-j N] SCRIPT [ARGS...]\n"
    "\n"
    "Runs the Lua 5.4 script SCRIPT with `require \"tracelens\"` available (also\n"
    "the global `tl`). Inside the script `arg` and `...` hold ARGS as in `lua`.\n"
    "SCRIPT is looked up as given, then in the installed lua/ directory, so\n"
    "`tracelens run orchestrator.lua TRACE` works from any directory.\n"
    "\n"
    "options:\n"
    "  -j N        threads for tl.parallel (default: number of cores)\n"
    "  -h, --help  this help\n";

static const char *const REPL_HELP =
    "usage: tracelens repl [TRACE]\n"
    "\n"
    "Interactive Lua prompt; with TRACE, `trace` is bound to the loaded trace.\n"
    "Type :help at the prompt. When stdin is not a terminal the piped\n"
    "statements are evaluated and their results printed.\n";

/* A usage error: one line, pointing to the command's --help (the command
 * is read off the help text's "usage: tracelens CMD" line). */
static int usage_error(const char *msg, const char *help)
{
    const char *u = strstr(help, "usage: tracelens ");
    int n = 0;
    if (u) {
        u += strlen("usage: tracelens ");
        while (u[n] && u[n] != ' ' && u[n] != '\n') n++;
    }
    if (u && n && u[0] != '[' && strncmp(u, "COMMAND", 7))
        fprintf(stderr, "tracelens: %s (see `tracelens %.*s --help`)\n", msg, n, u);
    else
        fprintf(stderr, "tracelens: %s (see `tracelens --help`)\n", msg);
    return TL_EXIT_USAGE;
}

static int wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--")) return 0;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    }
    return 0;
}

/* Option value parsing for `report`; returns 0 or prints a usage error. */
static int opt_number(int argc, char **argv, int *i, double *out)
{
    if (++*i >= argc) return -1;
    char *end;
    *out = strtod(argv[*i], &end);
    return *end || *out < 0 ? -1 : 0;
}

static int is_opt(const char *a, const char *ours, const char *ref)
{
    return !strcmp(a, ours) || (ref && !strcmp(a, ref));
}

/* Reference flags tracelens does not offer (yet): why, or NULL. */
static const char *unsupported_reference_flag(const char *a)
{
    static const struct { const char *flag, *why; } t[] = {
        {"--enable-origami", "this build has no GEMM/SDPA simulator"},
        {"--python_path", "this build has no external GEMM simulator"},
        {"--inductor_cache_dir", "the Triton model reads the trace args only"},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(a, t[i].flag)) return t[i].why;
    return NULL;
}

/* Loads a trace on its own thread (the comparison trace beside the first). */
typedef struct load_job {
    const char *path;
    tl_load_opts lo;
    tl_trace *t;
    tl_error err;
} load_job;

static void *load_main(void *arg)
{
    load_job *j = arg;
    j->t = tl_trace_load(j->path, &j->lo, &j->err);
    return NULL;
}

/* Events whose lower-cased name contains "graphlaunch" (inference spec
 * §1.6 step 3), tested once per distinct name. */
static size_t count_graph_launches(const tl_trace *t)
{
    const tl_event_store *es = &t->es;
    uint8_t *kind = tl_launch_kinds(es);
    size_t n = 0;
    for (size_t i = 0; i < es->n; i++) n += kind[es->name[i]] == TL_LAUNCH_GRAPH;
    free(kind);
    return n;
}

/* The inference report's capture merge (§1.4-1.5): the capture index of dir
 * (classified, and execution_details.json written, when absent), then the
 * merged trace, which replaces *t. A trace with graph launches none of
 * which was merged is an input error (the capture folder belongs to another
 * run), as is a merge that failed as a whole. Returns 0 or -1 with err set. */
static int merge_capture(tl_trace **t, const char *dir, int pseudo_ops, int quiet, tl_error *err)
{
    tl_capture_index idx;
    if (tl_capture_index_load(dir, 1, 0, &idx, err) != 0) return -1;
    if (idx.classified && !quiet) {
        if (idx.written) fprintf(stderr, "tracelens: classified the capture traces: wrote %s/execution_details.json\n", dir);
        else fprintf(stderr, "tracelens: classified the capture traces%s%s\n", idx.note ? ": " : "", idx.note ? idx.note : "");
    }
    tl_capture_summary sum;
    memset(&sum, 0, sizeof sum);
    tl_trace *m = tl_trace_merge_capture(*t, dir, &idx, pseudo_ops, &sum, err);
    tl_capture_index_free(&idx);
    if (!m) {
        tl_capture_summary_free(&sum);
        return -1;
    }
    const char *why = sum.notes ? sum.notes : "no capture trace matched";
    int wl = (int)strcspn(why, "\n");
    if (sum.failed || (sum.n_graph_launches > 0 && sum.n_merged == 0)) {
        tl_error_set(err, "%s: none of its %zu graph launches was merged with the capture traces in %s (%.*s)",
                     (*t)->path, sum.n_graph_launches, dir, wl, why);
        tl_capture_summary_free(&sum);
        tl_trace_release(m);
        return -1;
    }
    if (!quiet) {
        fprintf(stderr, "tracelens: capture merge: %zu graph launches, %zu merged, %zu kernels linked\n",
                sum.n_graph_launches, sum.n_merged, sum.n_kernels_linked);
        for (const char *c = sum.notes; c && *c;) {
            size_t n = strcspn(c, "\n");
            if (n) fprintf(stderr, "tracelens: capture: %.*s\n", (int)n, c);
            c += n + (c[n] == '\n');
        }
    }
    tl_capture_summary_free(&sum);
    tl_trace_release(*t);
    *t = m;
    return 0;
}

static int cmd_report(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(REPORT_HELP, stdout);
        return 0;
    }
    const char *trace = NULL, *out = NULL, *platform = NULL, *arch_path = NULL, *compare = NULL;
    int quiet = 0;
    tl_load_opts lo = {0};
    tl_report_opts ro;
    tl_report_opts_default(&ro);
    /* the call-stack columns are --include-call-stack's alone, even when
     * --detect-recompute brings the python functions into the tree (FIX §7.6.1) */
    ro.call_stack = 0;
    /* unset: on, off with --inference */
    ro.kernel_summary = -1;
    ro.short_kernel_study = -1;
    const char *capture = NULL, *compare_capture = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        double v;
        char msg[256];
        if (!strcmp(a, "-o") || is_opt(a, "--output", "--output_csvs_dir")) {
            if (++i >= argc) return usage_error("-o needs a directory", REPORT_HELP);
            out = argv[i];
        } else if (is_opt(a, "--xlsx", "--output_xlsx_path")) {
            if (++i >= argc) return usage_error("--xlsx needs a path", REPORT_HELP);
            ro.xlsx_path = argv[i];
        } else if (is_opt(a, "--comparison-json-path", "--comparison_json_path")) {
            if (++i >= argc) return usage_error("--comparison_json_path needs a trace", REPORT_HELP);
            compare = argv[i];
        } else if (is_opt(a, "--inference", NULL)) {
            ro.inference = 1;
        } else if (is_opt(a, "--group-by-parent-module", "--group_by_parent_module")) {
            ro.group_by_parent_module = 1;
        } else if (is_opt(a, "--capture-folder", "--capture_folder")) {
            if (++i >= argc) return usage_error("--capture_folder needs a directory", REPORT_HELP);
            capture = argv[i];
        } else if (is_opt(a, "--comparison-capture-folder", "--comparison_capture_folder")) {
            if (++i >= argc) return usage_error("--comparison_capture_folder needs a directory", REPORT_HELP);
            compare_capture = argv[i];
        } else if (is_opt(a, "--extension-file", "--extension_file")) {
            if (++i >= argc) return usage_error("--extension-file needs a Lua file", REPORT_HELP);
            ro.extension_path = argv[i];
            ro.load_extension = tl_lua_extension_load;
        } else if (is_opt(a, "--no-xlsx", NULL)) {
            ro.xlsx = 0;
        } else if (is_opt(a, "--no-csv", NULL)) {
            ro.csv = 0;
        } else if (is_opt(a, "--micro-idle-thresh-us", "--micro_idle_thresh_us")) {
            if (opt_number(argc, argv, &i, &v)) return usage_error("--micro-idle-thresh-us needs a number", REPORT_HELP);
            ro.micro_idle_ns = (int64_t)(v * 1000.0 + 0.5);
        } else if (is_opt(a, "--include-unlinked-kernels", "--include_unlinked_kernels")) {
            ro.include_unlinked = 1;
        } else if (is_opt(a, "--include-call-stack", "--include_call_stack")) {
            lo.with_python = 1;
            ro.call_stack = 1;
        } else if (is_opt(a, "--detect-recompute", "--detect_recompute")) {
            /* python functions join the tree (spec §3.11) */
            ro.detect_recompute = 1;
            lo.with_python = 1;
        } else if (is_opt(a, "--enable-pseudo-ops", "--enable_pseudo_ops")) {
            lo.pseudo_ops = 1;
            ro.pseudo_ops = 1;
        } else if (is_opt(a, "--include-overlap-info", "--include_overlap_info")) {
            ro.include_overlap_info = 1;
        } else if (is_opt(a, "--no-step-breakdown", NULL)) {
            ro.step_breakdown = 0;
        } else if (is_opt(a, "--no-idle-breakdown", NULL)) {
            ro.idle_breakdown = 0;
        } else if (is_opt(a, "--no-launch-stats", NULL)) {
            ro.launch_stats = 0;
        } else if (is_opt(a, "--no-user-annotations", NULL)) {
            ro.user_annotations = 0;
        } else if (is_opt(a, "--no-kernel-sequences", NULL)) {
            ro.kernel_sequences = 0;
        } else if (is_opt(a, "--no-memcpy-summary", NULL)) {
            ro.memcpy_summary = 0;
        } else if (is_opt(a, "--no-memory-timeline", NULL)) {
            ro.memory_timeline = 0;
        } else if (is_opt(a, "--no-kernel-summary", NULL)) {
            ro.kernel_summary = 0;
        } else if (is_opt(a, "--enable-kernel-summary", "--enable_kernel_summary")) {
            ro.kernel_summary = 1;
        } else if (is_opt(a, "--no-short-kernel-study", NULL)) {
            ro.short_kernel_study = 0;
        } else if (is_opt(a, "--short-kernel-study", "--short_kernel_study")) {
            ro.short_kernel_study = 1;
        } else if (is_opt(a, "--short-kernel-threshold-us", "--short_kernel_threshold_us")) {
            if (opt_number(argc, argv, &i, &v)) return usage_error("--short-kernel-threshold-us needs a number", REPORT_HELP);
            ro.short_threshold_us = v;
        } else if (is_opt(a, "--short-kernel-histogram-bins", "--short_kernel_histogram_bins")) {
            if (opt_number(argc, argv, &i, &v) || v < 1) return usage_error("--short-kernel-histogram-bins needs a count", REPORT_HELP);
            ro.short_bins = (int)v;
        } else if (is_opt(a, "--topk-short-kernels", "--topk_short_kernels")) {
            if (opt_number(argc, argv, &i, &v)) return usage_error("--topk-short-kernels needs a count", REPORT_HELP);
            ro.topk_short = (long)v;
        } else if (is_opt(a, "--topk-ops", "--topk_ops")) {
            if (opt_number(argc, argv, &i, &v)) return usage_error("--topk-ops needs a count", REPORT_HELP);
            ro.topk_ops = (long)v;
        } else if (is_opt(a, "--platform", "--gpu_arch_platform")) {
            if (++i >= argc) return usage_error("--platform needs a name", REPORT_HELP);
            platform = argv[i];
        } else if (is_opt(a, "--arch", "--gpu_arch_json_path")) {
            if (++i >= argc) return usage_error("--arch needs a file", REPORT_HELP);
            arch_path = argv[i];
        } else if (is_opt(a, "--topk-roofline-ops", "--topk_roofline_ops")) {
            if (opt_number(argc, argv, &i, &v)) return usage_error("--topk-roofline-ops needs a count", REPORT_HELP);
            ro.topk_roofline_ops = (long)v;
        } else if (is_opt(a, "--include-first-occurrence-time", "--include_first_occurrence_time")) {
            ro.first_occurrence_time = 1;
        } else if (is_opt(a, "--group-by-num-kernels", "--group_by_num_kernels")) {
            ro.group_by_num_kernels = 1;
        } else if (is_opt(a, "--no-coll-analysis", "--disable_coll_analysis")) {
            ro.coll_analysis = 0;
        } else if (is_opt(a, "--profile_json_path", NULL)) {
            if (++i >= argc) return usage_error("--profile_json_path needs a trace", REPORT_HELP);
            trace = argv[i];
        } else if (is_opt(a, "--threads", NULL)) {
            if (opt_number(argc, argv, &i, &v) || !(v >= 1 && v <= 1024)) return usage_error("--threads needs a count from 1 to 1024", REPORT_HELP);
            lo.threads = (int)v;
        } else if (is_opt(a, "--max-value-mb", "--max_value_mb")) {
            if (opt_number(argc, argv, &i, &v) || !(v >= 1 && v <= TL_MAX_VALUE_MB_MAX) || v != (double)(int)v)
                return usage_error("--max-value-mb needs a whole number of MiB from 1 to 4095", REPORT_HELP);
            lo.max_value_mb = (int)v;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (unsupported_reference_flag(a)) {
            snprintf(msg, sizeof msg, "report: %s is not supported yet (%s)", a, unsupported_reference_flag(a));
            return usage_error(msg, REPORT_HELP);
        } else if (a[0] == '-' && a[1]) {
            snprintf(msg, sizeof msg, "report: unknown option '%s'", a);
            return usage_error(msg, REPORT_HELP);
        } else if (!trace) {
            trace = a;
        } else {
            return usage_error("report: more than one trace given", REPORT_HELP);
        }
    }
    if (!trace) return usage_error("report: no trace given", REPORT_HELP);
    if (!out) return usage_error("report: no output directory given (-o DIR)", REPORT_HELP);
    if (platform && arch_path) return usage_error("report: --platform and --arch are mutually exclusive", REPORT_HELP);
    if (compare_capture && !compare)
        return usage_error("report: --comparison_capture_folder requires --comparison_json_path", REPORT_HELP);
    /* the output folder's path, before the trace loads (a large trace takes a while) */
    struct stat ost;
    if (stat(out, &ost) == 0 && !S_ISDIR(ost.st_mode)) {
        fprintf(stderr, "tracelens: %s: exists and is not a directory\n", out);
        return TL_EXIT_INPUT;
    }
    if (!ro.inference && (ro.group_by_parent_module || capture || compare_capture))
        return usage_error(ro.group_by_parent_module ? "report: --group_by_parent_module needs --inference"
                           : capture              ? "report: --capture_folder needs --inference"
                                                  : "report: --comparison_capture_folder needs --inference",
                           REPORT_HELP);
    /* the platform and the arch file are checked before the trace loads:
     * an unknown platform name is a usage error, an unreadable arch file an
     * input error */
    if (platform || arch_path) {
        tl_arch a;
        memset(&a, 0, sizeof a);
        tl_platform_choice pc0;
        tl_error perr = {{0}};
        if (tl_platform_resolve(NULL, platform, arch_path, &a, &pc0, &perr) != 0) {
            if (platform) return usage_error(perr.msg, REPORT_HELP);
            fprintf(stderr, "tracelens: %s\n", perr.msg);
            return TL_EXIT_INPUT;
        }
        if (pc0.have_arch) tl_arch_free(&a);
    }
    if (ro.kernel_summary < 0) ro.kernel_summary = !ro.inference;
    if (ro.short_kernel_study < 0) ro.short_kernel_study = !ro.inference;
    /* the reference's add_python_func (§1.6 step 2); with a capture folder
     * the traces load without pseudo ops: the merge runs the pass */
    int pseudo_ops = lo.pseudo_ops;
    if (ro.group_by_parent_module || capture || compare_capture) lo.with_python = 1;
    if (capture || compare_capture) lo.pseudo_ops = 0;
    lo.progress = !quiet;

    tl_error err = {{0}};
    /* the comparison trace loads with the same options, beside the first */
    load_job cj = {compare, lo, NULL, {{0}}};
    pthread_t cth;
    int cthreaded = compare && pthread_create(&cth, NULL, load_main, &cj) == 0;
    tl_trace *t = tl_trace_load(trace, &lo, &err);
    if (compare) {
        if (cthreaded) pthread_join(cth, NULL);
        else load_main(&cj);
    }
    if (!t || (compare && !cj.t)) {
        fprintf(stderr, "tracelens: %s\n", !t ? err.msg : cj.err.msg);
        if (t) tl_trace_release(t);
        if (cj.t) tl_trace_release(cj.t);
        return TL_EXIT_INPUT;
    }
    if (ro.inference) {
        int mrc = 0;
        if (capture) mrc = merge_capture(&t, capture, pseudo_ops, quiet, &err);
        if (!mrc && compare_capture) mrc = merge_capture(&cj.t, compare_capture, pseudo_ops, quiet, &err);
        if (mrc) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            tl_trace_release(t);
            if (cj.t) tl_trace_release(cj.t);
            return TL_EXIT_INPUT;
        }
        size_t ngl = capture ? 0 : count_graph_launches(t);
        if (ngl)
            fprintf(stderr,
                    "tracelens: warning: %s has %zu graph launches but no --capture_folder: their kernels have no "
                    "CPU op, shapes or call stacks and are reported under the launch; collect the capture traces "
                    "(vLLM --profiler-config.capture_torch_profiler True, SGLang --enable-profile-cuda-graph, xDiT "
                    "--profile_capture_phase) and pass their folder with --capture_folder\n",
                    t->path, ngl);
    }
    tl_arch arch;
    memset(&arch, 0, sizeof arch);
    tl_platform_choice pc;
    if (tl_platform_resolve(t, platform, arch_path, &arch, &pc, &err) != 0) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        tl_trace_release(t);
        if (cj.t) tl_trace_release(cj.t);
        return TL_EXIT_INPUT;
    }
    ro.arch = pc.have_arch ? &arch : NULL;
    tl_sheets sheets;
    /* --comparison_json_path: TraceDiff beside the report build adds its
     * columns to unified_perf_summary and the diff_stats sheet */
    tl_diff_beside db;
    if (cj.t) {
        tl_diff_beside_init(&db, cj.t, ro.pseudo_ops);
        ro.unified_hook = (tl_report_unified_hook){&db, tl_diff_beside_begin, tl_diff_beside_end, "diff_stats"};
    }
    int rc = tl_report_build(t, &ro, &sheets, &err) == 0 ? 0 : TL_EXIT_INPUT;
    if (cj.t) tl_diff_beside_free(&db);
    if (pc.have_arch) tl_arch_free(&arch);
    if (!rc && tl_report_write(&sheets, out, &ro, &err) != 0) rc = TL_EXIT_INPUT;
    if (rc) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
    } else if (!quiet) {
        /* said once the report is written: a failed run prints its error alone */
        fprintf(stderr, "tracelens: roofline: %s\n", pc.how);
        fprintf(stderr, "tracelens: wrote %zu sheets to %s\n", sheets.n, out);
    }
    if (!rc || sheets.v) tl_sheets_free(&sheets);
    tl_trace_release(t);
    if (cj.t) tl_trace_release(cj.t);
    return rc;
}

static int parse_jobs(const char *s, int *jobs)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 1 || v > 1024) return -1;
    *jobs = (int)v;
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    int jobs = 0, i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(RUN_HELP, stdout);
            return 0;
        } else if (!strcmp(a, "-j")) {
            if (++i >= argc || parse_jobs(argv[i], &jobs)) return usage_error("-j needs a thread count", RUN_HELP);
        } else if (!strncmp(a, "-j", 2) && a[2]) {
            if (parse_jobs(a + 2, &jobs)) return usage_error("-j needs a thread count", RUN_HELP);
        } else if (!strcmp(a, "--")) {
            i++;
            break;
        } else {
            break;
        }
    }
    if (i >= argc) return usage_error("run: no script given", RUN_HELP);
    tl_host_opts ho = {.jobs = jobs};
    return tl_host_run_script(argv[i], argc - i - 1, argv + i + 1, &ho);
}

static int cmd_repl(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(REPL_HELP, stdout);
        return 0;
    }
    if (argc > 1) return usage_error("repl: at most one trace", REPL_HELP);
    tl_host_opts ho = {0};
    return tl_host_repl(argc ? argv[0] : NULL, &ho);
}

/* `tracelens validate` and `tracelens diff`: lua/<name>_cmd.lua parses its
 * own arguments. */
static int cmd_lua(const char *name, int argc, char **argv)
{
    char dir[2048], path[4096];
    if (tl_host_lua_dir(dir, sizeof dir) != 0) {
        fprintf(stderr, "tracelens: %s: the tracelens lua/ directory was not found\n", name);
        return TL_EXIT_INPUT;
    }
    snprintf(path, sizeof path, "%s/%s_cmd.lua", dir, name);
    tl_host_opts ho = {0};
    return tl_host_run_script(path, argc, argv, &ho);
}

/* glibc's malloc asks the kernel for transparent huge pages for its own
 * memory only when the tunable glibc.malloc.hugetlb=1 is set before the
 * process starts (the common kernel THP mode is "madvise"). A large trace's
 * tables and trees are filled once, page by page, so huge pages cut the page
 * faults ~500-fold: 40% less system time and ~10% less wall time on a
 * two-trace comparison. The command re-executes itself once with the tunable
 * unless GLIBC_TUNABLES is set already (the user's value wins; an empty one
 * turns this off). When the re-execution fails it goes on as it is.
 * The same string fixes malloc's mmap threshold (1 MiB): left dynamic, glibc
 * raises it (and its trim threshold with it) after the first large block
 * is freed, so the analysis's large scratch arrays of three threads (the
 * report's two and the main state's) and the 2 MiB segments of a gzip scan
 * stay in their arenas once freed; fixed, they go back to the kernel: peak
 * RSS of the standalone analysis of the 614 MB tile 359 -> 285 MB (8 MiB:
 * 296 MB) and of loading the 626 MB gzip tile 0.34x the JSON (8 MiB: 0.375x),
 * with no measurable change in time. */
static void malloc_huge_pages(char **argv)
{
    if (getenv("GLIBC_TUNABLES")) return;
    /* Not for `ranks`: its threads load one rank trace after another, and
     * with the threshold fixed each trace's buffers went back to the
     * kernel, to be faulted in (and zeroed) again by the next: 256 ranks of
     * 6.5 MB took 1.05-1.45 s of system time, 0.6-0.8 s with the threshold
     * left dynamic, at about the same peak RSS (bench/README.md). The
     * per-rank stage itself raises it further while it runs, in any command
     * (tl_malloc_many_traces, util/malloc_tune.h). */
    int ranks = argv[1] && strcmp(argv[1], "ranks") == 0;
    const char *tunables = ranks ? TL_MALLOC_TUNABLES_RANKS : TL_MALLOC_TUNABLES_ONE_TRACE;
    if (setenv("GLIBC_TUNABLES", tunables, 1) != 0) return;
    execv("/proc/self/exe", argv);
    unsetenv("GLIBC_TUNABLES");
}

int main(int argc, char **argv)
{
    malloc_huge_pages(argv);
    if (argc < 2) {
        fputs(MAIN_HELP, stderr);
        return TL_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(MAIN_HELP, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("tracelens %s\n", TL_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "report")) return cmd_report(argc - 2, argv + 2);
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "repl")) return cmd_repl(argc - 2, argv + 2);
    if (!strcmp(cmd, "validate")) return cmd_lua("validate", argc - 2, argv + 2);
    if (!strcmp(cmd, "diff")) return cmd_lua("diff", argc - 2, argv + 2);
    if (!strcmp(cmd, "check")) return cmd_lua("check", argc - 2, argv + 2);
    if (!strcmp(cmd, "compare")) return tl_compare_cli(argc - 2, argv + 2);
    if (!strcmp(cmd, "ranks")) return tl_ranks_cli(argc - 2, argv + 2);
    if (!strcmp(cmd, "split")) return tl_split_cli(argc - 2, argv + 2);
    if (!strcmp(cmd, "match-blocks")) return tl_match_cli(argc - 2, argv + 2);
    if (!strcmp(cmd, "critical-path")) return tl_critical_path_cli(argc - 2, argv + 2);
    char msg[256];
    snprintf(msg, sizeof msg, "unknown command '%s'", cmd);
    return usage_error(msg, MAIN_HELP);
}
