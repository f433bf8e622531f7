/* cli.c — `tracelens ranks`: resolves the rank traces (spec multi-rank.md
 * §2), runs the per-rank pass one trace at a time (each trace released
 * before the next is loaded), builds the cross-rank sheets and writes
 * OUT/collective_report_csvs/ and OUT/collective_report.xlsx (cli.h). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../report/report.h"
#include "../util/clock.h"
#include "../util/vec.h"
#include "collect.h"
#include "mapreduce.h"
#include "rank_stats.h"
#include "records.h"
#include "report.h"
#include "resolve.h"
#include "summary_file.h"

static const char *const RANKS_HELP =
    "usage: tracelens ranks (DIR | --trace_pattern P | --trace_glob G [--rank_regex R])\n"
    "                       [--world_size N] [--gpus_per_node G] [--all2allv_heatmap] -o OUT\n"
    "       tracelens ranks summarize TRACE [--rank R] -o R.tls   (map: one rank)\n"
    "       tracelens ranks reduce A.tls B.tls ... [options] -o OUT (reduce: the report)\n"
    "\n"
    "The multi-rank collective report: matches every collective across the rank\n"
    "traces (one Kineto trace per rank) and writes OUT/collective_report.xlsx and\n"
    "OUT/collective_report_csvs/<sheet>.csv: nccl_summary_implicit_sync,\n"
    "nccl_summary_long, nccl_summary_all2allv, nccl_all2allv_heatmap, nccl_long,\n"
    "nccl_implicit_sync, nccl_all2allv, straggler_summary, then per-rank sheets\n"
    "beyond the reference: rank_temporal_breakdown, rank_comm_overlap,\n"
    "rank_step_times, rank_stragglers (HTA's late start), collective_skew_outliers,\n"
    "node_bandwidth, missing_ranks (docs/ranks.md).\n"
    "\n"
    "inputs (exactly one):\n"
    "  DIR, --trace_dir DIR     DIR/rank<i>_trace.json or .json.gz, i = 0..N-1\n"
    "  --trace_pattern P        P with one '*' replaced by the rank\n"
    "  --trace_glob G           the files matching G ('**' crosses directories); the\n"
    "                           rank from --rank_regex (default rank[\\[\\-_/]?(?P<rank>\\d+)),\n"
    "                           on the file name, then on the whole path\n"
    "options:\n"
    "  -o, --output_dir OUT     output directory (required)\n"
    "  --output_xlsx_path PATH  workbook path (default OUT/collective_report.xlsx)\n"
    "  --no-xlsx                CSVs only\n"
    "  --world_size N           number of ranks (default: DIR / pattern: ranks found\n"
    "                           from 0 up; glob: highest rank + 1)\n"
    "  --gpus_per_node G        node_id = rank / G (default: the length of rank 0's\n"
    "                           deviceProperties; none: no node columns)\n"
    "  --all2allv_heatmap       add nccl_all2allv_heatmap\n"
    "  --agg_metrics A [A ...]  summary aggregations (mean median min max std sum count;\n"
    "                           default mean median min max)\n"
    "  --no_detailed_analysis   omit nccl_long, nccl_implicit_sync, nccl_all2allv\n"
    "  --no-strict-metadata     a metadata mismatch is a warning (lowest rank's values)\n"
    "  --allow-missing-ranks    report without the ranks whose trace is missing or\n"
    "                           unreadable (named in the sheet missing_ranks); DIR and\n"
    "                           --trace_pattern then need --world_size\n"
    "  --per-rank-columns auto|wide|long\n"
    "                           wide: rank_<r>_* columns in nccl_implicit_sync and\n"
    "                           nccl_all2allv (the reference's layout); long: those\n"
    "                           values in nccl_implicit_sync_ranks / nccl_all2allv_ranks,\n"
    "                           one row per collective and rank; auto (default): wide up\n"
    "                           to 64 ranks, long beyond\n"
    "  --rank-from name|distinfo  where a file's rank comes from (default name, checked\n"
    "                           against distributedInfo.rank when the trace has it)\n"
    "  -j, --jobs N             rank traces loaded at a time, in threads (default: the\n"
    "                           cores; 1: one trace in memory at a time)\n"
    "  -q, --quiet              no progress lines\n";

/* msg names the command ("ranks: ...", "ranks reduce: ..."): one line, as
 * every command's usage errors (tl_usage_error) */
static int usage(const char *msg)
{
    fprintf(stderr, "tracelens: %s (see `tracelens ranks --help`)\n", msg);
    return TL_EXIT_USAGE;
}

/* ------------------------------------------------------------ command */

/* TRACELENS_RANKS_STAGES=1: each stage's wall and CPU time (the process's,
 * all threads) on stderr, "tracelens: ranks stage NAME wall W s cpu C s". */
typedef struct stages {
    int on;
    double wall, cpu;
} stages;

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void stage_start(stages *s)
{
    const char *e = getenv("TRACELENS_RANKS_STAGES");
    s->on = e && *e && strcmp(e, "0") != 0;
    s->wall = tl_now_s();
    s->cpu = cpu_s();
}

static void stage(stages *s, const char *name)
{
    if (!s->on) return;
    double w = tl_now_s(), c = cpu_s();
    fprintf(stderr, "tracelens: ranks stage %s wall %.3f s cpu %.3f s\n", name, w - s->wall, c - s->cpu);
    s->wall = w;
    s->cpu = c;
}

/* `tracelens ranks`, or with reduce `tracelens ranks reduce` (argv after
 * "reduce"; the inputs are .tls rank summaries, collected into tlsv, which
 * has room for argc entries); src, when not NULL, gives the per-rank
 * summaries instead of this process's own pass (MPI). */
static int ranks_run(int argc, char **argv, tl_ranks_source *src, int reduce, const char **tlsv)
{
    size_t ntls = 0;
    stages stg;
    stage_start(&stg);
    const char *dir = NULL, *pattern = NULL, *gpat = NULL, *out = NULL, *xlsx_path = NULL;
    const char *rank_regex = TL_RANK_REGEX_DEFAULT;
    long world = -1, gpn = -1;
    int heatmap = 0, detailed = 1, strict = 1, from_distinfo = 0, quiet = 0, xlsx = 1, layout = -1;
    static const char *const default_agg[] = {"mean", "median", "min", "max"};
    const char **agg = NULL;
    size_t nagg = 0;
    int ninputs = 0;
    int allow_missing = 0;
    long jobs = sysconf(_SC_NPROCESSORS_ONLN); /* --jobs: traces at a time */
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(RANKS_HELP, stdout);
            free(agg);
            return 0;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output_dir")) && has) out = argv[++i];
        else if (!strcmp(a, "--output_xlsx_path") && has) xlsx_path = argv[++i];
        else if (!strcmp(a, "--no-xlsx")) xlsx = 0;
        else if (!strcmp(a, "--trace_dir") && has) dir = argv[++i], ninputs++;
        else if (!strcmp(a, "--trace_pattern") && has) pattern = argv[++i], ninputs++;
        else if (!strcmp(a, "--trace_glob") && has) gpat = argv[++i], ninputs++;
        else if (!strcmp(a, "--rank_regex") && has) rank_regex = argv[++i];
        else if ((!strcmp(a, "--world_size") || !strcmp(a, "--gpus_per_node")) && has) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || v <= 0 || v > 1000000) {
                char msg[160];
                snprintf(msg, sizeof msg, "ranks: %s must be a positive integer, got %s", a, argv[i]);
                free(agg);
                return usage(msg);
            }
            if (!strcmp(a, "--world_size")) world = v;
            else gpn = v;
        } else if (!strcmp(a, "--all2allv_heatmap")) heatmap = 1;
        else if (!strcmp(a, "--detailed_analysis")) detailed = 1;
        else if (!strcmp(a, "--no_detailed_analysis")) detailed = 0;
        else if (!strcmp(a, "--no-strict-metadata")) strict = 0;
        else if (!strcmp(a, "--allow-missing-ranks")) allow_missing = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) quiet = 1;
        else if ((!strcmp(a, "-j") || !strcmp(a, "--jobs")) && has) {
            char *end;
            jobs = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || jobs < 1 || jobs > 4096) {
                free(agg);
                return usage("ranks: --jobs must be from 1 to 4096");
            }
        }
        else if (!strcmp(a, "--rank-from") && has) {
            const char *v = argv[++i];
            if (!strcmp(v, "distinfo")) from_distinfo = 1;
            else if (!strcmp(v, "name")) from_distinfo = 0;
            else {
                free(agg);
                return usage("ranks: --rank-from takes name or distinfo");
            }
        } else if (!strcmp(a, "--per-rank-columns") && has) {
            const char *v = argv[++i];
            if (!strcmp(v, "auto")) layout = -1;
            else if (!strcmp(v, "wide")) layout = 0;
            else if (!strcmp(v, "long")) layout = 1;
            else {
                free(agg);
                return usage("ranks: --per-rank-columns takes auto, wide or long");
            }
        } else if (!strcmp(a, "--agg_metrics")) {
            free(agg);
            agg = tl_xmalloc((size_t)argc * sizeof *agg);
            nagg = 0;
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                if (!tl_ranks_agg_known(argv[i + 1])) {
                    char msg[200];
                    snprintf(msg, sizeof msg, "ranks: unknown aggregation '%.100s'", argv[i + 1]);
                    free(agg);
                    return usage(msg);
                }
                agg[nagg++] = argv[++i];
            }
            if (!nagg) {
                free(agg);
                return usage("ranks: --agg_metrics needs at least one aggregation");
            }
        } else if (reduce && a[0] != '-') {
            if (!ntls++) ninputs++;
            tlsv[ntls - 1] = a;
        } else if (a[0] != '-' && !dir && !pattern && !gpat) dir = a, ninputs++;
        else {
            char msg[200];
            snprintf(msg, sizeof msg, "ranks: unknown option or extra argument '%.100s'", a);
            free(agg);
            return usage(msg);
        }
    }
    if (ninputs != 1) {
        free(agg);
        if (reduce) return usage("ranks reduce: give the .tls rank summaries (and no DIR, --trace_pattern or --trace_glob)");
        return usage(ninputs ? "ranks: give exactly one of DIR, --trace_pattern, --trace_glob"
                             : "ranks: no rank traces given (DIR, --trace_pattern or --trace_glob)");
    }
    if (!out) {
        free(agg);
        return usage("ranks: no output directory given (-o OUT)");
    }
    if (pattern) {
        const char *s = strchr(pattern, '*');
        if (!s || strchr(s + 1, '*')) {
            free(agg);
            return usage("ranks: --trace_pattern must contain exactly one '*' (the rank)");
        }
    }
    if (allow_missing && (dir || pattern) && world < 0) {
        free(agg);
        return usage("ranks: --allow-missing-ranks needs --world_size with DIR or --trace_pattern");
    }
    long world_opt = world; /* -1 unless --world_size */
    /* ---- resolve the files (§2) */
    tl_rank_files files = {0};
    int rc = TL_EXIT_INPUT;
    if (reduce) {
        /* the rank of each .tls from its header; world: highest + 1 */
        long maxr = -1;
        for (size_t i = 0; i < ntls; i++) {
            long r;
            tl_error err;
            if (tl_tls_peek_rank(tlsv[i], &r, &err) != 0) {
                fprintf(stderr, "tracelens: %s\n", err.msg);
                goto out_free;
            }
            tl_rank_files_add(&files, tlsv[i], r);
            if (r > maxr) maxr = r;
        }
        if (world < 0) world = maxr + 1;
    } else {
        tl_ranks_input in = {.dir = dir, .pattern = pattern, .glob = gpat, .rank_regex = rank_regex,
                             .world = world, .allow_missing = allow_missing, .from_distinfo = from_distinfo};
        tl_error rerr;
        if (tl_ranks_resolve(&in, &files, &world, &rerr) != 0) {
            fprintf(stderr, "tracelens: %s\n", rerr.msg);
            goto out_free;
        }
    }
    int world_given = world_opt >= 0;
    if (world < 0) world = (long)files.n;
    /* ---- the per-rank pass (collect.h) */
    tl_ranks_collect_opts co = {.world = world, .world_given = world_given, .from_distinfo = from_distinfo,
                                .allow_missing = allow_missing, .quiet = quiet, .reduce = reduce, .jobs = jobs,
                                .src = src};
    tl_ranks_collection col;
    {
        tl_error err;
        if (tl_ranks_collect(&files, &co, &col, &err) != 0) {
            fprintf(stderr, "tracelens: %s\n", err.msg);
            goto out_cs;
        }
    }
    stage(&stg, "summaries");
    gpn = tl_ranks_gpus_per_node(gpn, &col, quiet);
    tl_ranks_opts ro = {.world_size = (uint32_t)world,
                        .gpus_per_node = (int)gpn,
                        .heatmap = heatmap,
                        .detailed = detailed,
                        .agg = agg ? agg : default_agg,
                        .nagg = agg ? nagg : 4,
                        .strict_metadata = strict,
                        .per_rank_long = layout < 0 ? world > 64 : layout,
                        .allow_missing = allow_missing,
                        .present = allow_missing ? col.seen : NULL};
    tl_sheets sheets = {0};
    tl_error err;
    if (tl_ranks_report_build(&col.cs, &ro, &sheets, &err) != 0 ||
        tl_rank_stats_sheets(&col.cs, col.stats, (size_t)world, &ro, &sheets, &err) != 0) {
        fprintf(stderr, "tracelens: %s\n", err.msg);
        tl_sheets_free(&sheets);
        goto out_cs;
    }
    stage(&stg, "build");
    tl_report_opts wo;
    tl_report_opts_default(&wo);
    wo.name = "collective_report";
    wo.xlsx_path = xlsx_path;
    wo.xlsx = xlsx;
    for (size_t i = 0; i < sheets.n && wo.xlsx; i++)
        if (sheets.v[i].table->nrows > 1048575 || sheets.v[i].table->ncols > 16384) {
            fprintf(stderr, "tracelens: warning: sheet %s (%zu rows x %zu columns) exceeds the xlsx limits: CSVs only\n",
                    sheets.v[i].name, sheets.v[i].table->nrows, sheets.v[i].table->ncols);
            wo.xlsx = 0;
        }
    int wrc = tl_report_write(&sheets, out, &wo, &err);
    stage(&stg, "write");
    if (wrc != 0) fprintf(stderr, "tracelens: %s\n", err.msg);
    else {
        if (!quiet) fprintf(stderr, "tracelens: wrote %zu sheets to %s\n", sheets.n, out);
        rc = 0;
    }
    tl_sheets_free(&sheets);
out_cs:
    tl_ranks_collection_free(&col);
out_free:
    tl_rank_files_free(&files);
    free(agg);
    return rc;
}

int tl_ranks_cli_with(int argc, char **argv, tl_ranks_source *src)
{
    int reduce = argc > 0 && !strcmp(argv[0], "reduce");
    if (reduce) argc--, argv++;
    const char **tlsv = tl_xmalloc(((size_t)argc + 1) * sizeof *tlsv);
    int rc = ranks_run(argc, argv, reduce ? NULL : src, reduce, tlsv);
    free(tlsv);
    return rc;
}

int tl_ranks_cli(int argc, char **argv)
{
    if (argc > 0 && !strcmp(argv[0], "summarize")) return tl_ranks_summarize_cli(argc - 1, argv + 1);
#ifdef TL_MPI
    if (argc == 0 || strcmp(argv[0], "reduce") != 0) {
        if (tl_mpi_launched()) return tl_ranks_mpi_cli(argc, argv);
    }
#endif
    return tl_ranks_cli_with(argc, argv, NULL);
}
