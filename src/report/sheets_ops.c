#include "sheets_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../util/vec.h"

void tl_add_percentages(tl_table *t, const char *col)
{
    long c = tl_table_col(t, col);
    size_t pc = tl_table_add_col(t, "Percentage (%)", TL_COL_F64);
    size_t cc = tl_table_add_col(t, "Cumulative Percentage (%)", TL_COL_F64);
    if (c < 0) return;
    double total = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        double v = tl_table_num(t, (size_t)c, r);
        if (!isnan(v)) total += v;
    }
    double run = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        double v = tl_table_num(t, (size_t)c, r);
        double p = v / total * 100;
        tl_table_set_f64(t, pc, r, p);
        if (!isnan(p)) run += p;
        tl_table_set_f64(t, cc, r, run);
    }
}

/* new column `to` = `from` / div */
static void derive_div(tl_table *t, const char *from, const char *to, double div)
{
    long c = tl_table_col(t, from);
    size_t d = tl_table_add_col(t, to, TL_COL_F64);
    for (size_t r = 0; c >= 0 && r < t->nrows; r++) tl_table_set_f64(t, d, r, tl_table_num(t, (size_t)c, r) / div);
}

/* Launchers grouped by a key, with module (the inference report's module
 * variants, §1.6) parent_module, and with --detect_recompute is_recompute
 * (keys the table lacks are skipped; sorted keys, missing keys dropped),
 * sorted by total direct kernel time, with the time in ms added; NULL if
 * empty. */
static tl_table *by_direct_time(const tl_table *launchers, const char *name, const char *key, int module,
                                const tl_agg *aggs, size_t naggs)
{
    const char *keys[3];
    size_t nk = 0;
    keys[nk++] = key;
    if (module) keys[nk++] = "parent_module";
    keys[nk++] = "is_recompute";
    tl_groupby g = {keys, nk, 1, 1, aggs, naggs};
    tl_table *t = tl_table_group(launchers, name, &g);
    if (!t->nrows) {
        tl_table_free(t);
        return NULL;
    }
    tl_sortkey sk = {"total_direct_kernel_time_sum", 1};
    tl_table_sort(t, &sk, 1);
    derive_div(t, "total_direct_kernel_time_sum", "total_direct_kernel_time_ms", 1000.0);
    return t;
}

tl_table *tl_sheet_ops_summary_by_category(const tl_table *launchers, int inference)
{
    /* the module variant adds call_stack_first when the table has call_stack */
    int cs = inference && tl_table_col(launchers, "call_stack") >= 0;
    const tl_agg aggs[] = {
        {"total_direct_kernel_time", TL_AGG_SUM, "total_direct_kernel_time_sum", NULL, NULL},
        {"total_direct_kernel_time", TL_AGG_COUNT, "Count", NULL, NULL},
        {"call_stack", TL_AGG_FIRST, "call_stack_first", NULL, NULL},
    };
    tl_table *t = by_direct_time(launchers, "ops_summary_by_category", "op category", inference, aggs, cs ? 3 : 2);
    if (!t) return NULL;
    tl_table_drop(t, "total_direct_kernel_time_sum");
    tl_add_percentages(t, "total_direct_kernel_time_ms");
    return t;
}

tl_table *tl_sheet_ops_summary(const tl_table *launchers, int inference)
{
    if (inference) {
        /* get_df_kernel_launchers_summary_module: subtree sum and count,
         * call_stack first, no subtree ms */
        int cs = tl_table_col(launchers, "call_stack") >= 0;
        const tl_agg aggs[] = {
            {"total_direct_kernel_time", TL_AGG_SUM, "total_direct_kernel_time_sum", NULL, NULL},
            {"total_direct_kernel_time", TL_AGG_COUNT, "Count", NULL, NULL},
            {"op category", TL_AGG_SET, "Categories", NULL, NULL},
            {"total_subtree_kernel_time", TL_AGG_SUM, "total_subtree_kernel_time_sum", NULL, NULL},
            {"total_subtree_kernel_time", TL_AGG_COUNT, "total_subtree_kernel_time_count", NULL, NULL},
            {"call_stack", TL_AGG_FIRST, "call_stack_first", NULL, NULL},
        };
        tl_table *t = by_direct_time(launchers, "ops_summary", "name", 1, aggs, cs ? 6 : 5);
        if (!t) return NULL;
        tl_add_percentages(t, "total_direct_kernel_time_ms");
        static const char *const order[] = {"name",
                                            "parent_module",
                                            "is_recompute",
                                            "total_direct_kernel_time_sum",
                                            "total_subtree_kernel_time_sum",
                                            "total_subtree_kernel_time_count",
                                            "total_direct_kernel_time_ms",
                                            "Count",
                                            "Categories",
                                            "call_stack_first",
                                            "Percentage (%)",
                                            "Cumulative Percentage (%)"};
        tl_table_select(t, order, sizeof order / sizeof *order);
        return t;
    }
    const tl_agg aggs[] = {
        {"total_direct_kernel_time", TL_AGG_SUM, "total_direct_kernel_time_sum", NULL, NULL},
        {"total_direct_kernel_time", TL_AGG_COUNT, "Count", NULL, NULL},
        {"op category", TL_AGG_SET, "Categories", NULL, NULL},
        {"total_subtree_kernel_time", TL_AGG_SUM, "total_subtree_kernel_time_sum", NULL, NULL},
    };
    tl_table *t = by_direct_time(launchers, "ops_summary", "name", 0, aggs, 4);
    if (!t) return NULL;
    tl_add_percentages(t, "total_direct_kernel_time_ms");
    derive_div(t, "total_subtree_kernel_time_sum", "total_subtree_kernel_time_ms", 1000.0);
    static const char *const order[] = {"name",
                                        "is_recompute",
                                        "total_direct_kernel_time_sum",
                                        "total_subtree_kernel_time_sum",
                                        "total_direct_kernel_time_ms",
                                        "total_subtree_kernel_time_ms",
                                        "Count",
                                        "Categories",
                                        "Percentage (%)",
                                        "Cumulative Percentage (%)"};
    tl_table_select(t, order, sizeof order / sizeof *order);
    return t;
}

tl_klist *tl_launcher_klists(const tl_launchers *l)
{
    tl_klist *k = tl_xmalloc((l->n ? l->n : 1) * sizeof *k);
    for (size_t i = 0; i < l->n; i++) {
        k[i].uids = l->kernels + l->v[i].first_k;
        k[i].n = l->v[i].nk;
    }
    return k;
}

int tl_agg_kernel_stats(const tl_table *src, const size_t *rows, size_t n, void *ctx, tl_sbuf *out)
{
    const tl_kstats_ctx *c = ctx;
    long li = tl_table_col(src, "__klist");
    tl_klist *kl = tl_xmalloc((n ? n : 1) * sizeof *kl);
    for (size_t i = 0; i < n; i++) kl[i] = c->lists[src->cols[li].v.i[rows[i]]];
    int r = tl_kernel_stats_text(c->t, kl, n, c->trunc, out);
    free(kl);
    return r;
}

/* ops_unique_args (§7.4), or with kl its overlap variant (§7.10):
 * overlapping_kernel_names as a key after name, the summary of
 * overlapping_kernels_details and the overlap_pct statistics. */
static tl_table *unique_args(const tl_trace *t, const tl_launchers *l, const tl_table *launchers,
                             const tl_ops_opts *o, int kl)
{
    const char *keys[14];
    size_t nkeys = 0;
    keys[nkeys++] = "name";
    if (kl) keys[nkeys++] = "overlapping_kernel_names";
    static const char *const base[] = {"op category", "process_name", "process_label", "thread_name", "Input Dims",
                                       "Input type",  "Input Strides", "Concrete Inputs"};
    /* the inference report's module columns (§1.6), when the table has them */
    int module = tl_table_col(launchers, "parent_module") >= 0 && tl_table_col(launchers, "call_stack") >= 0;
    for (int i = 0; i < 8; i++) {
        keys[nkeys++] = base[i];
        if (i == 0 && module) keys[nkeys++] = "parent_module";
    }
    if (o && o->group_by_num_kernels) keys[nkeys++] = "num_kernels";
    if (l->recompute) keys[nkeys++] = "is_recompute";
    tl_klist *lists = tl_launcher_klists(l);
    tl_kstats_ctx full = {t, lists, 0}, trunc = {t, lists, 1};
    tl_ovstats_ctx ofull = {t, &l->ovpool, l->ov, "__ovl", 0}, otrunc = {t, &l->ovpool, l->ov, "__ovl", 1};
    static const tl_aggfn stats[] = {TL_AGG_MEAN, TL_AGG_MEDIAN, TL_AGG_STD, TL_AGG_MIN, TL_AGG_MAX, TL_AGG_SUM};
    static const char *const sfx[] = {"mean", "median", "std", "min", "max", "sum"};
    static const char *const cols[] = {"total_direct_kernel_time", "total_subtree_kernel_time"};
    static const char *const ovcols[] = {"overlap_pct_mean", "overlap_pct_median", "overlap_pct_std", "overlap_pct_min",
                                         "overlap_pct_max"};
    char names[2][6][64];
    tl_agg aggs[32];
    size_t na = 0;
    for (int c = 0; c < 2; c++)
        for (int s = 0; s < 6; s++) {
            snprintf(names[c][s], sizeof names[c][s], "%s_%s", cols[c], sfx[s]);
            aggs[na++] = (tl_agg){cols[c], stats[s], names[c][s], NULL, NULL};
        }
    aggs[na++] = (tl_agg){"UID", TL_AGG_FIRST, "ex_UID", NULL, NULL};
    aggs[na++] = (tl_agg){"UID", TL_AGG_COUNT, "operation_count", NULL, NULL};
    if (module) aggs[na++] = (tl_agg){"call_stack", TL_AGG_FIRST, "call_stack", NULL, NULL};
    if (o && o->first_occurrence_time) aggs[na++] = (tl_agg){"ts", TL_AGG_MIN, "first_occurrence_time", NULL, NULL};
    aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "kernel_details_summary", tl_agg_kernel_stats, &full};
    aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "trunc_kernel_details", tl_agg_kernel_stats, &trunc};
    if (kl) {
        aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "overlapping_kernels_details_summary", tl_agg_overlap_stats, &ofull};
        aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "trunc_overlapping_kernels_details", tl_agg_overlap_stats, &otrunc};
        for (int s = 0; s < 5; s++) aggs[na++] = (tl_agg){"overlap_pct", stats[s], ovcols[s], NULL, NULL};
    }
    tl_groupby g = {keys, nkeys, 0, 0, aggs, na};
    tl_table *tb = tl_table_group(launchers, kl ? "ops_unique_args_kl_overlap" : "ops_unique_args", &g);
    free(lists);
    if (!tb->nrows) {
        tl_table_free(tb);
        return NULL;
    }
    if (o && o->first_occurrence_time) {
        /* minus the minimum over all groups (µs) */
        size_t fc = (size_t)tl_table_col(tb, "first_occurrence_time");
        double lo = INFINITY;
        for (size_t r = 0; r < tb->nrows; r++) lo = fmin(lo, tl_table_num(tb, fc, r));
        for (size_t r = 0; r < tb->nrows; r++) tl_table_set_f64(tb, fc, r, tl_table_num(tb, fc, r) - lo);
    }
    tl_sortkey sk[2] = {{"total_direct_kernel_time_sum", 1}, {"ex_UID", 0}};
    tl_table_sort(tb, sk, 2);
    const char *order[48];
    size_t no = 0;
    for (size_t k = 0; k < nkeys; k++) order[no++] = keys[k];
    order[no++] = "operation_count";
    if (o && o->first_occurrence_time) order[no++] = "first_occurrence_time";
    for (int s = 0; s < 6; s++)
        for (int c = 0; c < 2; c++) order[no++] = names[c][s];
    order[no++] = "ex_UID";
    if (module) order[no++] = "call_stack";
    order[no++] = "kernel_details_summary";
    order[no++] = "trunc_kernel_details";
    if (kl) {
        order[no++] = "overlapping_kernels_details_summary";
        order[no++] = "trunc_overlapping_kernels_details";
        for (int s = 0; s < 5; s++) order[no++] = ovcols[s];
    }
    tl_table_select(tb, order, no);
    tl_add_percentages(tb, "total_direct_kernel_time_sum");
    if (o && o->topk_ops > 0) tl_table_head(tb, (size_t)o->topk_ops);
    return tb;
}

tl_table *tl_sheet_ops_unique_args(const tl_trace *t, const tl_launchers *l, const tl_table *launchers,
                                   const tl_ops_opts *o)
{
    return unique_args(t, l, launchers, o, 0);
}

tl_table *tl_sheet_ops_unique_args_kl_overlap(const tl_trace *t, const tl_launchers *l, const tl_table *launchers,
                                              const tl_ops_opts *o)
{
    if (!l->ov) return NULL;
    return unique_args(t, l, launchers, o, 1);
}
