#include "report.h"

#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../trace/idle.h"
#include "../trace/kernel_ngrams.h"
#include "../trace/timeline.h"
#include "../util/vec.h"
#include "extension.h"
#include "gpu_timeline_sheet.h"
#include "launchers.h"
#include "../io/outfile.h"
#include "sheets_kernels.h"
#include "sheets_ops.h"
#include "sheet_steps.h"
#include "sheets_gpu_stats.h"
#include "sheets_mem_seq.h"
#include "sheets_perf.h"
#include "xlsx_writer.h"

void tl_report_opts_default(tl_report_opts *o)
{
    memset(o, 0, sizeof *o);
    o->micro_idle_ns = -1;
    o->kernel_summary = 1;
    o->step_breakdown = 1;
    o->idle_breakdown = 1;
    o->launch_stats = 1;
    o->user_annotations = 1;
    o->kernel_sequences = 1;
    o->memcpy_summary = 1;
    o->memory_timeline = 1;
    o->short_kernel_study = 1;
    o->short_threshold_us = 10;
    o->short_bins = 100;
    o->coll_analysis = 1;
    o->call_stack = -1;
    o->pseudo_ops = -1;
    o->csv = 1;
    o->xlsx = 1;
}

static void add_sheet(tl_sheets *s, const char *name, tl_table *t, int empty_newline)
{
    if (!t) return;
    TL_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n].name = tl_xstrdup(name);
    s->v[s->n].table = t;
    s->v[s->n].write_empty_as_newline = empty_newline;
    s->n++;
}

void tl_sheets_free(tl_sheets *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        tl_table_free(s->v[i].table);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

static void sheet_sink(void *ctx, const char *name, tl_table *t) { add_sheet(ctx, name, t, 0); }

/* gpu_timeline (§4.6): one block of rows per timeline; with blocks (two,
 * --detect_recompute) a 4th column is_recompute, False block first, each
 * block's percent relative to its own total; a NULL timeline is an empty
 * subset and is skipped. */
static tl_table *timeline_table(const tl_timeline *const *blocks, int nblocks, int recompute_col)
{
    tl_table *t = tl_table_new("gpu_timeline");
    size_t ct = tl_table_add_col(t, "type", TL_COL_STR);
    size_t cm = tl_table_add_col(t, "time ms", TL_COL_F64);
    size_t cp = tl_table_add_col(t, "percent", TL_COL_F64);
    size_t cr = recompute_col ? tl_table_add_col(t, "is_recompute", TL_COL_BOOL) : 0;
    for (int b = 0; b < nblocks; b++) {
        const tl_timeline *tlv = blocks[b];
        if (!tlv) continue;
        tl_timeline_row rows[9];
        int n = tl_timeline_rows(tlv, rows);
        double total_us = (double)tlv->total / 1000.0;
        for (int i = 0; i < n; i++) {
            size_t r = tl_table_add_row(t);
            double us = (double)rows[i].ns / 1000.0;
            tl_table_set_str(t, ct, r, rows[i].type);
            tl_table_set_f64(t, cm, r, us / 1e3);
            tl_table_set_f64(t, cp, r, total_us > 0 ? us / total_us * 100 : 0.0);
            if (recompute_col) tl_table_set_bool(t, cr, r, b);
        }
    }
    return t;
}

/* The roofline half of the report (unified_perf_summary and the perf
 * sheets) runs on a second thread, beside the launcher and kernel sheets:
 * both only read the trace and the launcher list; each has its own caches. */
typedef struct perf_job {
    const tl_trace *t;
    const tl_report_opts *o;
    const tl_launchers *l;
    tl_extension *ext; /* its Lua models run on this job's thread only */
    int call_stack;
    tl_sheets sheets;
    uint32_t *kernel_row; /* with the unified hook: GPU event -> unified_perf_summary row */
} perf_job;

static void *perf_job_main(void *arg)
{
    perf_job *j = arg;
    tl_argtext at;
    tl_argtext_init(&at, j->t);
    tl_perf_eval pe;
    tl_perf_eval_init(&pe, j->t, j->o->arch);
    pe.ext = j->ext;
    pe.inference_annotations = j->o->inference;
    /* the inference report's unified table has the NCCL ops with collective analysis (§1.6) */
    tl_unified_opts uo = {j->call_stack, j->o->include_overlap_info, j->o->unified_hook.end ? &j->kernel_row : NULL,
                          j->o->inference && j->o->coll_analysis};
    tl_table *unified, *unified_kl;
    tl_sheets_unified(&pe, j->l, &at, &uo, &unified, &unified_kl);
    add_sheet(&j->sheets, "unified_perf_summary", unified, 0);
    add_sheet(&j->sheets, "unified_perf_summary_kl_overlap", unified_kl, 0);
    tl_perf_sheet_opts po = {j->o->group_by_num_kernels, j->o->topk_roofline_ops, j->o->include_overlap_info,
                             j->o->inference};
    tl_perf_sheets(&pe, j->l, &at, &po, sheet_sink, &j->sheets);
    tl_perf_eval_free(&pe);
    tl_argtext_free(&at);
    return NULL;
}

int tl_report_build(const tl_trace *t, const tl_report_opts *o, tl_sheets *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (o->ngrams_out) memset(o->ngrams_out, 0, sizeof *o->ngrams_out);
    if (o->pseudo_ops == 1 && !t->opts.pseudo_ops) {
        /* pseudo ops for this report only: a private copy of the trace gets
         * them; the shared trace is never changed */
        tl_trace *d = tl_trace_with_pseudo_ops(t);
        tl_report_opts od = *o;
        od.pseudo_ops = -1;
        od.ngrams_out = NULL; /* the copy's, not the trace's */
        int rc = tl_report_build(d, &od, out, err);
        tl_trace_release(d);
        return rc;
    }
    if (o->pseudo_ops == 0 && t->opts.pseudo_ops) {
        tl_error_set(err, "%s: the trace was loaded with pseudo ops (enable_pseudo_ops): load it again without "
                          "them for a report without", t->path);
        return -1;
    }
    if (o->detect_recompute && !t->tree.with_python) {
        tl_error_set(err, "%s: --detect_recompute needs the python functions in the call tree: load the trace "
                          "with them (Lua: tl.load(path, {include_call_stack = true}))", t->path);
        return -1;
    }
    if (o->inference && o->group_by_parent_module && !t->tree.with_python) {
        tl_error_set(err, "%s: --group_by_parent_module needs the python functions in the call tree: load the "
                          "trace with them (Lua: tl.load(path, {include_call_stack = true}))", t->path);
        return -1;
    }
    /* the extension: loaded (and its override tables built) before any thread starts */
    tl_extension *ext = NULL;
    if (o->extension_path) {
        if (!o->load_extension) {
            tl_error_set(err, "extension %s: extensions are not available here", o->extension_path);
            return -1;
        }
        if (!(ext = o->load_extension(o->extension_path, err))) return -1;
    }
    /* per-report derived data: never stored in the shared trace */
    uint8_t *recompute = o->detect_recompute ? tl_tree_recompute_flags(&t->tree, &t->es, NULL) : NULL;
    tl_timeline tlv[2];
    const tl_timeline *blocks[2] = {NULL, NULL};
    int nblocks = recompute ? 2 : 1;
    /* [FIX] a trace where no GPU event links to a launch (sampled traces:
     * runtime calls outside every cpu_op) is reported over all its GPU
     * events, as with --include-unlinked-kernels; the reference stops
     * (docs/compat.md, "Unlinked GPU work"). The op sheets are then empty. */
    int unlinked = o->include_unlinked;
    for (int pass = 0; pass < 2 && !blocks[0] && !blocks[1]; pass++) {
        if (pass == 1) {
            if (unlinked) break;
            unlinked = 1;
        }
        for (int b = 0; b < nblocks; b++)
            if (tl_timeline_compute_subset(&t->es, &t->tree, unlinked, o->micro_idle_ns, recompute, (uint8_t)b,
                                           &tlv[b]) == 0)
                blocks[b] = &tlv[b];
    }
    if (!blocks[0] && !blocks[1]) {
        if (t->tree.n_gpu == 0) tl_trace_no_gpu_error(t, err);
        else tl_error_set(err, "%s: no GPU events found in the trace", t->path);
        free(recompute);
        tl_extension_free(ext);
        return -1;
    }
    /* total_time_ms of the other sheets: the first block's total_time */
    double total_us = (double)(blocks[0] ? blocks[0] : blocks[1])->total / 1000.0;
    add_sheet(out, "gpu_timeline", timeline_table(blocks, nblocks, recompute != NULL), 0);
    /* the overlap sweep over the timeline's events; the reference sweeps
     * each recompute block on its own (§4.7: later calls are no-ops) */
    tl_overlaps ovl;
    int have_ovl = o->include_overlap_info != 0;
    if (have_ovl) tl_overlap_sweep(&t->es, &t->tree, unlinked, recompute, &ovl);

    int gpu_only = t->tree.gpu_only;
    /* the caller's addition to unified_perf_summary (the comparison's
     * TraceDiff: not for GPU-only traces), started beside the sheets */
    const tl_report_unified_hook *hook = &o->unified_hook;
    int with_hook = hook->end && !gpu_only;
    if (with_hook && hook->begin) hook->begin(hook->ctx, t);
    tl_launchers l;
    tl_launchers_build_ext(t, ext, &l);
    tl_launchers_set_extras(&l, t, recompute, have_ovl ? &ovl : NULL);
    int call_stack = t->tree.with_python && (o->call_stack < 0 ? 1 : o->call_stack);
    perf_job job = {t, o, &l, ext, call_stack, {0}, NULL};
    pthread_t th;
    int threaded = 0;
    if (!gpu_only) {
        threaded = pthread_create(&th, NULL, perf_job_main, &job) == 0;
        if (!threaded) perf_job_main(&job);
    }
    tl_argtext at;
    tl_argtext_init(&at, t);
    tl_table *lt = tl_launcher_table(t, &l, &at);
    if (o->inference && o->group_by_parent_module) tl_launcher_table_add_modules(lt, t, &l);
    tl_sheets ops = {0}, kernels = {0};
    if (!gpu_only) {
        tl_ops_opts oo = {o->group_by_num_kernels, o->topk_ops, o->first_occurrence_time};
        add_sheet(&ops, "ops_summary_by_category", tl_sheet_ops_summary_by_category(lt, o->inference), 0);
        add_sheet(&ops, "ops_summary", tl_sheet_ops_summary(lt, o->inference), 0);
        add_sheet(&ops, "ops_unique_args", tl_sheet_ops_unique_args(t, &l, lt, &oo), 0);
        if (have_ovl)
            add_sheet(&ops, "ops_unique_args_kl_overlap", tl_sheet_ops_unique_args_kl_overlap(t, &l, lt, &oo), 0);
    }
    tl_table *kt = NULL;
    if (o->kernel_summary || o->short_kernel_study) kt = tl_kernel_table(t, &l, &at);
    if (o->kernel_summary)
        add_sheet(&kernels, "kernel_summary", tl_sheet_kernel_summary(kt, total_us), 0);
    if (o->short_kernel_study) {
        tl_short_opts so = {o->short_threshold_us, o->short_bins, o->topk_short};
        add_sheet(&kernels, "short_kernel_histogram", tl_sheet_short_kernel_histogram(kt, &so), 0);
        add_sheet(&kernels, "short_kernels_summary", tl_sheet_short_kernels_summary(kt, total_us, gpu_only, &so),
                  1);
    }
    if (o->coll_analysis && !gpu_only) add_sheet(&kernels, "coll_analysis", tl_sheet_coll_analysis(t), 0);
    /* tracelens's own sheets, after the reference's (none when the trace has no steps) */
    if (o->step_breakdown) add_sheet(&kernels, "step_breakdown", tl_sheet_step_breakdown(t), 0);
    /* the GPU events by (device, stream, ts): listed once for the idle
     * breakdown and the kernel sequences */
    size_t n_gpu_at = 0;
    tl_gpu_at *gpu_at = o->idle_breakdown || o->kernel_sequences ? tl_idle_gpu_events(&t->es, &n_gpu_at) : NULL;
    if (o->idle_breakdown)
        add_sheet(&kernels, "idle_breakdown", tl_sheet_idle_breakdown_with(t, o->micro_idle_ns, gpu_at, n_gpu_at), 0);
    if (o->launch_stats) add_sheet(&kernels, "launch_stats", tl_sheet_launch_stats(t), 0);
    if (o->user_annotations) add_sheet(&kernels, "user_annotations", tl_sheet_user_annotations(t), 0);
    if (o->kernel_sequences) {
        /* computed once: the caller may take them too (ngrams_out) */
        tl_kernel_ngrams ng;
        tl_kernel_ngrams_compute_with(t, NULL, gpu_at, n_gpu_at, &ng);
        add_sheet(&kernels, "kernel_sequences", tl_sheet_kernel_sequences_of(t, &ng), 0);
        if (o->ngrams_out) *o->ngrams_out = ng;
        else tl_kernel_ngrams_free(&ng);
    }
    free(gpu_at);
    if (o->memcpy_summary) add_sheet(&kernels, "memcpy_summary", tl_sheet_memcpy_summary(t, o->arch), 0);
    if (o->memory_timeline) {
        tl_table *peak, *timeline;
        tl_sheets_memory(t, &peak, &timeline);
        add_sheet(&kernels, "memory_peak", peak, 0);
        add_sheet(&kernels, "memory_timeline", timeline, 0);
    }
    tl_table_free(kt);
    tl_table_free(lt);
    tl_argtext_free(&at);
    if (threaded) pthread_join(th, NULL);
    tl_launchers_free(&l);
    if (have_ovl) tl_overlaps_free(&ovl);
    free(recompute);
    tl_table *hook_sheet = NULL; /* placed after unified_perf_summary */
    int hook_rc = 0;
    if (with_hook) {
        tl_table *unified = NULL;
        for (size_t i = 0; i < job.sheets.n; i++)
            if (!strcmp(job.sheets.v[i].name, "unified_perf_summary")) unified = job.sheets.v[i].table;
        hook_rc = hook->end(hook->ctx, unified, unified ? job.kernel_row : NULL, &hook_sheet, err);
    }
    free(job.kernel_row);
    /* the reference's sheet order: ops, unified, perf sheets, kernel sheets */
    const tl_sheets *parts[3] = {&ops, &job.sheets, &kernels};
    for (int p = 0; p < 3; p++) {
        for (size_t i = 0; i < parts[p]->n; i++) {
            add_sheet(out, parts[p]->v[i].name, parts[p]->v[i].table, parts[p]->v[i].write_empty_as_newline);
            if (hook_sheet && !strcmp(parts[p]->v[i].name, "unified_perf_summary")) {
                add_sheet(out, hook->sheet_name, hook_sheet, 0);
                hook_sheet = NULL;
            }
        }
        for (size_t i = 0; i < parts[p]->n; i++) free(parts[p]->v[i].name);
        free(parts[p]->v);
    }
    tl_table_free(hook_sheet); /* not placed (no unified_perf_summary) */
    if (hook_rc != 0) {
        tl_extension_free(ext);
        tl_sheets_free(out);
        return -1;
    }
    /* the extension's sheets come last (after the perf thread has ended) */
    int rc = tl_extension_sheets(ext, t, out, err);
    tl_extension_free(ext);
    if (rc != 0) {
        tl_sheets_free(out);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ writing */

static int write_csvs(const tl_sheets *s, const char *dir, tl_error *err)
{
    char path[8192];
    for (size_t i = 0; i < s->n; i++) {
        if ((size_t)snprintf(path, sizeof path, "%s/%s.csv", dir, s->v[i].name) >= sizeof path) {
            tl_error_set(err, "%s: path too long", dir);
            return -1;
        }
        FILE *f = fopen(path, "wb");
        if (!f) {
            tl_error_set(err, "%s: cannot write: %s", path, strerror(errno));
            return -1;
        }
        const tl_table *t = s->v[i].table;
        if (s->v[i].write_empty_as_newline && t->nrows == 0) fputc('\n', f);
        else tl_table_write_csv(t, f);
        if (fclose(f) != 0) {
            tl_error_set(err, "%s: write failed: %s", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

typedef struct csv_job {
    const tl_sheets *s;
    const char *dir;
    tl_error err;
    int rc;
} csv_job;

static void *csv_thread(void *arg)
{
    csv_job *j = arg;
    j->rc = write_csvs(j->s, j->dir, &j->err);
    return NULL;
}

/* Everything is written into private staging directories (tl_stage:
 * mkdtemp, so nothing can be planted there) and moved into place only when
 * complete: the CSV directory replaces the previous one (removed without
 * following links), the workbook replaces the previous file. A workbook
 * named elsewhere (xlsx_path) is staged in its own directory's stage, so
 * the final rename never crosses file systems. */
int tl_report_write(const tl_sheets *s, const char *outdir, const tl_report_opts *o, tl_error *err)
{
    const char *name = o->name ? o->name : "perf_report";
    size_t nlen = strlen(name) + 16;
    char *csv_name = tl_xmalloc(nlen), *xlsx_name = tl_xmalloc(nlen);
    snprintf(csv_name, nlen, "%s_csvs", name);
    snprintf(xlsx_name, nlen, "%s.xlsx", name);
    char *final_dir = NULL, *xlsx_final = NULL, *xlsx_parent = NULL, *stage_dir = NULL, *stage_xlsx = NULL;
    tl_stage st = {0}, xst = {0};
    tl_stage *xs = &st; /* where the workbook is staged */
    int rc = -1;
    if (tl_stage_open(&st, outdir, err) != 0) goto out;
    final_dir = tl_xmalloc(strlen(outdir) + nlen + 2);
    sprintf(final_dir, "%s/%s", outdir, csv_name);
    if (o->xlsx && o->xlsx_path) {
        xlsx_final = tl_xstrdup(o->xlsx_path);
        xlsx_parent = tl_xstrdup(o->xlsx_path);
        char *slash = strrchr(xlsx_parent, '/');
        if (!slash) strcpy(xlsx_parent, ".");
        else if (slash == xlsx_parent) slash[1] = 0;
        else *slash = 0;
        if (tl_stage_open(&xst, xlsx_parent, err) != 0) goto out;
        xs = &xst;
    } else if (o->xlsx) {
        xlsx_final = tl_xmalloc(strlen(outdir) + nlen + 2);
        sprintf(xlsx_final, "%s/%s", outdir, xlsx_name);
    }
    if (o->csv) {
        stage_dir = tl_stage_path(&st, csv_name);
        if (mkdir(stage_dir, 0777) != 0) {
            tl_error_set(err, "%s: cannot create directory: %s", stage_dir, strerror(errno));
            goto out;
        }
    }
    if (o->xlsx) stage_xlsx = tl_stage_path(xs, xlsx_name);
    /* the CSVs on a thread of their own while the workbook is written (both
     * only read the tables); in line when no thread can be had */
    csv_job cj = {s, stage_dir, {{0}}, 0};
    pthread_t th;
    int threaded = o->csv && o->xlsx && pthread_create(&th, NULL, csv_thread, &cj) == 0;
    if (o->csv && !threaded) csv_thread(&cj);
    int xrc = o->xlsx ? tl_xlsx_write(s, stage_xlsx, err) : 0;
    if (threaded) pthread_join(th, NULL);
    if (cj.rc != 0 || xrc != 0) {
        if (cj.rc != 0) *err = cj.err;
        goto out;
    }
    /* everything is written: move into place */
    if (o->csv && tl_stage_commit(&st, csv_name, final_dir, err) != 0) goto out;
    if (o->xlsx && tl_stage_commit(xs, xlsx_name, xlsx_final, err) != 0) goto out;
    rc = 0;
out:
    tl_stage_close(&st);
    tl_stage_close(&xst);
    free(csv_name);
    free(xlsx_name);
    free(final_dir);
    free(xlsx_final);
    free(xlsx_parent);
    free(stage_dir);
    free(stage_xlsx);
    return rc;
}
