/* main.c — the `tracelens` command line: subcommand dispatch, option
 * parsing, exit statuses (0 ok, 1 input or analysis error, 2 usage). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua/host.h"
#include "lua/repl.h"
#include "report/gpu_timeline_sheet.h"
#include "report/outfile.h"
#include "trace/timeline.h"
#include "trace/trace.h"

enum { EXIT_INPUT = 1, EXIT_USAGE = 2 };

static const char *const MAIN_HELP =
    "usage: tracelens COMMAND [ARGS...]\n"
    "\n"
    "Analyse a PyTorch profiler (Kineto) trace, .json or .json.gz.\n"
    "\n"
    "commands:\n"
    "  run SCRIPT [ARGS...]   run a Lua script with the tracelens module loaded\n"
    "                         (e.g. `tracelens run orchestrator.lua TRACE`)\n"
    "  report TRACE -o DIR    write the perf report (DIR/perf_report_csvs/*.csv)\n"
    "  repl [TRACE]           interactive Lua prompt with `trace` bound\n"
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
    "perf report sheets as CSV files under DIR/perf_report_csvs/.\n"
    "Sheets written now: gpu_timeline.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR               output directory (required)\n"
    "  --micro-idle-thresh-us T       split idle time into micro (< T us) and\n"
    "                                 macro (>= T us) gaps\n"
    "                                 (alias --micro_idle_thresh_us)\n"
    "  --include-unlinked-kernels     count GPU events that no launch links to\n"
    "                                 (alias --include_unlinked_kernels)\n"
    "  --include-call-stack           python functions join the call tree\n"
    "                                 (alias --include_call_stack)\n"
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

static int usage_error(const char *msg, const char *help)
{
    fprintf(stderr, "tracelens: %s\n\n%s", msg, help);
    return EXIT_USAGE;
}

static int wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--")) return 0;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    }
    return 0;
}

static int cmd_report(int argc, char **argv)
{
    if (wants_help(argc, argv)) {
        fputs(REPORT_HELP, stdout);
        return 0;
    }
    const char *trace = NULL, *out = NULL;
    int64_t micro = -1;
    int unlinked = 0, quiet = 0;
    tl_load_opts lo = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--output_dir")) {
            if (++i >= argc) return usage_error("-o needs a directory", REPORT_HELP);
            out = argv[i];
        } else if (!strcmp(a, "--micro-idle-thresh-us") || !strcmp(a, "--micro_idle_thresh_us")) {
            if (++i >= argc) return usage_error("--micro-idle-thresh-us needs a number", REPORT_HELP);
            char *end;
            double v = strtod(argv[i], &end);
            if (*end || v < 0) return usage_error("--micro-idle-thresh-us needs a non-negative number", REPORT_HELP);
            micro = (int64_t)(v * 1000.0 + 0.5);
        } else if (!strcmp(a, "--include-unlinked-kernels") || !strcmp(a, "--include_unlinked_kernels")) {
            unlinked = 1;
        } else if (!strcmp(a, "--include-call-stack") || !strcmp(a, "--include_call_stack")) {
            lo.with_python = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            char msg[256];
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
    lo.progress = !quiet;

    tl_error err = {{0}};
    tl_trace *t = tl_trace_load(trace, &lo, &err);
    if (!t) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return EXIT_INPUT;
    }
    tl_timeline tlv;
    if (tl_timeline_compute(&t->es, &t->tree, unlinked, micro, &tlv) != 0) {
        fprintf(stderr,
                "tracelens: %s: no GPU events found in the trace%s\n", trace,
                unlinked ? "" : " that a launch links to (try --include-unlinked-kernels)");
        tl_trace_release(t);
        return EXIT_INPUT;
    }
    size_t n = strlen(out) + 64;
    char *path = malloc(n);
    snprintf(path, n, "%s/perf_report_csvs/gpu_timeline.csv", out);
    tl_outfile of;
    int rc = 0;
    if (tl_outfile_open(&of, path, &err) != 0) {
        rc = EXIT_INPUT;
    } else {
        tl_write_gpu_timeline_csv(of.f, &tlv);
        if (tl_outfile_commit(&of, &err) != 0) rc = EXIT_INPUT;
    }
    if (rc) fprintf(stderr, "tracelens: %s\n", err.msg);
    else if (!quiet) fprintf(stderr, "tracelens: wrote %s\n", path);
    free(path);
    tl_trace_release(t);
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(MAIN_HELP, stderr);
        return EXIT_USAGE;
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
    char msg[256];
    snprintf(msg, sizeof msg, "unknown command '%s'", cmd);
    return usage_error(msg, MAIN_HELP);
}
