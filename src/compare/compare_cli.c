/* compare_cli.c — the `tracelens compare` command line (compare.h): the
 * reference's flags, our -o DIR spelling, exit statuses 0 / 1 input / 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/error.h"
#include "../util/str.h"
#include "../util/sbuf.h"
#include "../util/vec.h"
#include "compare.h"

static const char *const COMPARE_HELP =
    "usage: tracelens compare REPORT1 REPORT2 [REPORT...] [-o OUT] [options]\n"
    "\n"
    "Compares perf reports with the first one (the baseline), sheet by sheet:\n"
    "the reports are outer-joined on each sheet's keys, with\n"
    "\"<column>__<tag>_diff\" (variant - baseline) and \"<column>__<tag>_pct\"\n"
    "(100 * diff / baseline) columns. gpu_timeline, ops_summary and\n"
    "kernel_summary give one sheet each; ops_unique_args, unified_perf_summary\n"
    "and the roofline sheets (GEMM, SDPA_fwd/bwd, CONV_fwd/bwd, un_eltwise,\n"
    "bin_eltwise) give <sheet>_intersect_<tag>, <sheet>_only_baseline_<tag> and\n"
    "<sheet>_only_variant_<tag> per variant. docs/compare.md has the details.\n"
    "\n"
    "A REPORT is an .xlsx workbook (a perf_report.xlsx, read as\n"
    "pandas.read_excel reads it) or a directory of <sheet>.csv files: a\n"
    "report's perf_report_csvs/, or the directory `tracelens report -o DIR`\n"
    "wrote (its perf_report_csvs/ is used).\n"
    "\n"
    "output:\n"
    "  -o, --output OUT        OUT ending in .xlsx: the workbook (as the reference;\n"
    "                          default comparison.xlsx). Any other OUT is a\n"
    "                          directory: OUT/comparison.xlsx and\n"
    "                          OUT/comparison_csvs/<sheet>.csv\n"
    "  --output_csvs_dir DIR   (also) write the sheets as DIR/<sheet>.csv\n"
    "  --no-xlsx               no workbook\n"
    "options:\n"
    "  --names TAG...          one tag per report (default: a directory's whole\n"
    "                          name, e.g. Qwen1.5_h100 for Qwen1.5_h100/; a file's\n"
    "                          name without its extension (from the last dot),\n"
    "                          e.g. perf_report for DIR/perf_report.xlsx; the\n"
    "                          directory names, e.g. a and b for\n"
    "                          a/perf_report.xlsx b/perf_report.xlsx, when the\n"
    "                          file names are the same); tags name the columns\n"
    "  --sheets SHEET...       gpu_timeline ops_summary kernel_summary ops_all\n"
    "                          roofline all (default: all)\n"
    "  -q, --quiet             no progress or notes on stderr\n"
    "  -h, --help              this help\n"
    "\n"
    "Exit status: 0 success, 1 input error, 2 usage error.\n";

static int usage_error(const char *msg) { return tl_usage_error("compare", msg); }

int tl_compare_cli(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(COMPARE_HELP, stdout);
            return 0;
        }
    }
    TL_VEC(const char *) reports = {0}, names = {0};
    const char *out = NULL, *csv_dir = NULL;
    unsigned sheets = 0;
    int have_names = 0, have_sheets = 0, no_xlsx = 0, quiet = 0, rc = 0, only_pos = 0;
    char msg[512];
    for (int i = 0; i < argc && !rc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || !a[1]) {
            TL_PUSH(reports, a);
        } else if (!strcmp(a, "--")) {
            only_pos = 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc) rc = usage_error("-o needs a path");
            else out = argv[i];
        } else if (!strcmp(a, "--output_csvs_dir") || !strcmp(a, "--output-csvs-dir")) {
            if (++i >= argc) rc = usage_error("--output_csvs_dir needs a directory");
            else csv_dir = argv[i];
        } else if (!strcmp(a, "--names")) {
            have_names = 1;
            while (i + 1 < argc && argv[i + 1][0] != '-') TL_PUSH(names, argv[++i]);
            if (!names.n) rc = usage_error("--names needs one tag per report");
        } else if (!strcmp(a, "--sheets")) {
            have_sheets = 1;
            while (i + 1 < argc && argv[i + 1][0] != '-' && !rc) {
                unsigned bit = tl_compare_sheet_bit(argv[++i]);
                if (!bit) {
                    snprintf(msg, sizeof msg,
                             "--sheets: unknown sheet '%s' (choose from gpu_timeline, ops_summary, kernel_summary, "
                             "ops_all, roofline, all)", argv[i]);
                    rc = usage_error(msg);
                }
                sheets |= bit;
            }
            if (!rc && !sheets) rc = usage_error("--sheets needs at least one sheet");
        } else if (!strcmp(a, "--no-xlsx")) {
            no_xlsx = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else {
            snprintf(msg, sizeof msg, "unknown option '%s'", a);
            rc = usage_error(msg);
        }
    }
    if (!rc && reports.n < 2) rc = usage_error("at least two reports are needed (the first is the baseline)");
    if (!rc && have_names && names.n != reports.n) {
        snprintf(msg, sizeof msg, "--names gives %zu tags for %zu reports", names.n, reports.n);
        rc = usage_error(msg);
    }
    if (!rc && no_xlsx && !csv_dir && !(out && !tl_ends_with_ci(out, ".xlsx")))
        rc = usage_error("--no-xlsx leaves nothing to write: give -o DIR or --output_csvs_dir DIR");
    if (rc) {
        free(reports.v);
        free(names.v);
        return rc;
    }

    tl_compare_out co = {0};
    tl_sbuf xlsx, csvs;
    tl_sb_init(&xlsx);
    tl_sb_init(&csvs);
    if (out && !tl_ends_with_ci(out, ".xlsx")) {
        tl_sb_printf(&xlsx, "%s/comparison.xlsx", out);
        tl_sb_printf(&csvs, "%s/comparison_csvs", out);
        co.xlsx_path = xlsx.s;
        co.csv_dir = csvs.s;
        co.csv_dir_owned = 1;
    } else {
        co.xlsx_path = out ? out : "comparison.xlsx";
    }
    if (csv_dir) {
        co.csv_dir = csv_dir;
        co.csv_dir_owned = 0;
    }
    if (no_xlsx) co.xlsx_path = NULL;

    tl_compare_opts o = {reports.v, reports.n, have_names ? names.v : NULL, have_sheets ? sheets : TL_CMP_ALL, quiet};
    tl_sheets s;
    tl_error err = {{0}};
    rc = tl_compare_build(&o, &s, &err) == 0 ? 0 : TL_EXIT_INPUT;
    if (!rc) {
        if (tl_compare_write(&s, &co, &err) != 0) rc = TL_EXIT_INPUT;
        else if (!quiet) {
            fprintf(stderr, "tracelens: compare: %zu sheet%s", s.n, s.n == 1 ? "" : "s");
            if (co.csv_dir) fprintf(stderr, " in %s", co.csv_dir);
            if (co.xlsx_path) fprintf(stderr, "%s %s", co.csv_dir ? " and" : " in", co.xlsx_path);
            fputc('\n', stderr);
        }
        tl_sheets_free(&s);
    }
    if (rc) fprintf(stderr, "tracelens: %s\n", err.msg);
    tl_sb_free(&xlsx);
    tl_sb_free(&csvs);
    free(reports.v);
    free(names.v);
    return rc;
}
