/* split_cli.c — `tracelens split TRACE -o DIR [...]` (split.h, docs/split.md):
 * option parsing, loading the trace, running the splitter. Owns nothing
 * after it returns. */
#include "split_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../util/clock.h"
#include "split.h"

static const char *const SPLIT_HELP =
    "usage: tracelens split TRACE -o DIR [-i all|N|START:END] [--store-single-iteration]\n"
    "                       [--find-steady-state | --divide-phases] [--num-steps N]\n"
    "                       [--CONC N --OSL X --R X]\n"
    "\n"
    "Splits a serving trace (vLLM, SGLang, ATOM, xDiT) into smaller traces by its\n"
    "iterations: the iteration annotations (detailed grammars first, then the\n"
    "native ones), or, when there are none, the repeating block of host work that\n"
    "launches GPU work. Each output is a gzip JSON trace with the trace's\n"
    "top-level keys and the events of its iterations: the host events inside each\n"
    "iteration on its thread, their flow events and the GPU events they launched\n"
    "(by correlation), and the events without a timestamp. DIR also gets\n"
    "execution_details.json and execution_details.csv, one entry per output\n"
    "(docs/split.md). .zip traces are not supported (unzip first).\n"
    "\n"
    "options:\n"
    "  -o, --output-dir DIR         output directory (required)\n"
    "  -i, --iterations SPEC        all (default), N (iteration N) or START:END\n"
    "                               (END exclusive, clamped to the count); N or\n"
    "                               START:END alone is written as one file, `all`\n"
    "                               alone writes only execution_details\n"
    "  --store-single-iteration     one file per selected iteration\n"
    "  --find-steady-state          the steady-state windows: mixed, decode-only and\n"
    "                               prefill+decode (one file each when found)\n"
    "  --divide-phases              the steady-state regions cut into runs of\n"
    "                               prefill+decode (mixed) and decode-only steps,\n"
    "                               under DIR/prefilldecodemix/ and DIR/decode_only/\n"
    "                               (wins over --find-steady-state)\n"
    "  --num-steps N                steady-state window size (default 32)\n"
    "  --CONC N, --OSL X, --R X     expected peak concurrency, output sequence length\n"
    "                               and OSL window ratio: with all three the mixed\n"
    "                               window aims at the P/D ratio 2 CONC / (OSL (1 + R))\n"
    "  -q, --quiet                  no line per file written\n"
    "  -h, --help                   this help\n"
    "\n"
    "Exit status: 0 success, 1 input error (unreadable trace, nothing to split,\n"
    "an empty range), 2 usage error.\n";

static int parse_size(const char *s, size_t *out)
{
    if (!*s || *s == '-' || *s == '+') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v > (unsigned long long)SIZE_MAX / 2) return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || v != v) return -1;
    *out = v;
    return 0;
}

/* all | N | START:END */
static int parse_iterations(const char *s, tl_split_opts *o)
{
    if (!strcmp(s, "all")) {
        o->range = 0;
        return 0;
    }
    const char *colon = strchr(s, ':');
    if (!colon) {
        size_t n;
        if (parse_size(s, &n) != 0) return -1;
        o->range = 1, o->start = n, o->end = n + 1;
        return 0;
    }
    char a[32];
    size_t la = (size_t)(colon - s);
    if (la == 0 || la >= sizeof a) return -1;
    memcpy(a, s, la);
    a[la] = 0;
    size_t x, y;
    if (parse_size(a, &x) != 0 || parse_size(colon + 1, &y) != 0 || y <= x) return -1;
    o->range = 1, o->start = x, o->end = y;
    return 0;
}

static int usage(const char *msg) { return tl_usage_error("split", msg); }

int tl_split_cli(int argc, char **argv)
{
    tl_split_opts o = {.num_steps = 32};
    const char *trace = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define NEEDS(name)                                                    \
    do {                                                               \
        if (i + 1 >= argc) return usage(name " needs a value");        \
        val = argv[++i];                                               \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(SPLIT_HELP, stdout);
            return 0;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output-dir") || !strcmp(a, "--output_dir")) {
            NEEDS("-o/--output-dir");
            o.out_dir = val;
        } else if (!strcmp(a, "-i") || !strcmp(a, "--iterations")) {
            NEEDS("-i/--iterations");
            if (parse_iterations(val, &o) != 0) {
                char msg[160];
                snprintf(msg, sizeof msg, "-i/--iterations: '%.60s' is not all, N or START:END (START < END)", val);
                return usage(msg);
            }
        } else if (!strcmp(a, "--store-single-iteration")) {
            o.store_single = 1;
        } else if (!strcmp(a, "--find-steady-state")) {
            o.find_steady_state = 1;
        } else if (!strcmp(a, "--divide-phases")) {
            o.divide_phases = 1;
        } else if (!strcmp(a, "--num-steps")) {
            NEEDS("--num-steps");
            if (parse_size(val, &o.num_steps) != 0 || o.num_steps == 0) return usage("--num-steps: not a positive integer");
        } else if (!strcmp(a, "--CONC")) {
            NEEDS("--CONC");
            size_t c;
            if (parse_size(val, &c) != 0 || c > (size_t)INT64_MAX) return usage("--CONC: not a non-negative integer");
            o.have_conc = 1, o.conc = (int64_t)c;
        } else if (!strcmp(a, "--OSL")) {
            NEEDS("--OSL");
            if (parse_double(val, &o.osl) != 0) return usage("--OSL: not a number");
            o.have_osl = 1;
        } else if (!strcmp(a, "--R")) {
            NEEDS("--R");
            if (parse_double(val, &o.r) != 0) return usage("--R: not a number");
            o.have_r = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o.quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown option '%.60s'", a);
            return usage(msg);
        } else if (!trace) {
            trace = a;
        } else {
            return usage("more than one trace given");
        }
#undef NEEDS
    }
    if (!trace) return usage("no trace given");
    if (!o.out_dir) return usage("-o/--output-dir is required");
    size_t tl = strlen(trace);
    if (tl >= 4 && !strcmp(trace + tl - 4, ".zip")) {
        fprintf(stderr, "tracelens: %s: .zip traces are not supported by split (unzip it and give the .json)\n", trace);
        return TL_EXIT_INPUT;
    }
    tl_load_opts lo = {.with_python = 1};
    tl_error err = {{0}};
    double t0 = tl_now_s();
    tl_trace *t = tl_trace_load(trace, &lo, &err);
    if (!t) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_INPUT;
    }
    size_t n = 0;
    int rc = tl_split_run(t, trace, &o, &n, &err);
    tl_trace_release(t);
    if (rc != 0) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        return TL_EXIT_INPUT;
    }
    if (!o.quiet && !o.range && !o.store_single && !o.find_steady_state && !o.divide_phases)
        printf("split: all iterations and no output option: no trace written (give -i N or START:END, "
               "--store-single-iteration, --find-steady-state or --divide-phases)\n");
    if (!o.quiet)
        printf("split: %zu trace file%s and execution_details.{json,csv} in %s (%.2f s)\n", n, n == 1 ? "" : "s",
               o.out_dir, tl_now_s() - t0);
    return 0;
}
