#include "sheets_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../perf/categorize.h"
#include "extension.h"
#include "../json/pyval.h"
#include "../trace/timeline.h"
#include "../util/hashmap.h"
#include "../util/vec.h"
#include "sheets_ops.h"
#include "../util/str.h"

/* Nearest cpu_op at or above ev (no `execute` skipping), or TL_NOUID. */
static uint32_t first_cpu_op(const tl_trace *t, uint32_t ev)
{
    for (uint32_t u = ev; u != TL_NOUID; u = t->tree.parent[u])
        if (t->es.cat[u] == TL_CAT_CPU_OP) return u;
    return TL_NOUID;
}

tl_table *tl_kernel_table(const tl_trace *t, const tl_launchers *l, tl_argtext *at)
{
    const tl_event_store *es = &t->es;
    tl_table *tb = tl_table_new("kernels");
    size_t c_uid = tl_table_add_col(tb, "UID", TL_COL_I64);
    size_t c_name = tl_table_add_col(tb, "Kernel name", TL_COL_STR);
    size_t c_dur = tl_table_add_col(tb, "Kernel duration (\xc2\xb5s)", TL_COL_F64);
    size_t c_stream = tl_table_add_col(tb, "Kernel stream", TL_COL_I64);
    size_t c_launcher = tl_table_add_col(tb, "Launcher", TL_COL_STR);
    size_t c_parent = tl_table_add_col(tb, "Parent cpu_op", TL_COL_STR);
    size_t c_dims = tl_table_add_col(tb, "Input dims", TL_COL_STR);
    size_t c_strides = tl_table_add_col(tb, "Input strides", TL_COL_STR);
    size_t c_conc = tl_table_add_col(tb, "Concrete Inputs", TL_COL_STR);
    size_t c_cat = tl_table_add_col(tb, "Parent op category", TL_COL_STR);
    /* names and arg texts repeat over the kernels: each distinct one is
     * interned into the table once */
    tl_str_memo names = {0}, args = {0};
    uint32_t shape_op = TL_NOUID, shape[4];
    size_t nk = 0;
    for (size_t k = 0; k < es->n; k++) nk += es->cat[k] == TL_CAT_KERNEL;
    tl_table_add_rows(tb, nk);
    for (size_t k = 0, next = 0; k < es->n; k++) {
        if (es->cat[k] != TL_CAT_KERNEL) continue;
        size_t r = next++;
        tl_table_set_i64(tb, c_uid, r, (int64_t)k);
        tl_table_set_str_memo(tb, c_name, r, &names, &es->names, es->name[k]);
        tl_table_set_f64(tb, c_dur, r, (double)es->dur[k] / 1000.0);
        int64_t s;
        if (tl_es_arg_int(es, k, TL_K_STREAM, &s)) tl_table_set_i64(tb, c_stream, r, s);
        uint32_t rt = t->tree.parent[k];
        if (rt == TL_NOUID) continue;
        tl_table_set_str_memo(tb, c_launcher, r, &names, &es->names, es->name[rt]);
        uint32_t op = first_cpu_op(t, rt);
        if (op != TL_NOUID) {
            tl_table_set_str_memo(tb, c_parent, r, &names, &es->names, es->name[op]);
            /* consecutive kernels often share their op: its texts once */
            if (op != shape_op) {
                tl_argtext_shape_ids(at, op, 1, shape);
                shape_op = op;
            }
            tl_table_set_str_memo(tb, c_dims, r, &args, &at->text, shape[0]);
            tl_table_set_str_memo(tb, c_strides, r, &args, &at->text, shape[2]);
            tl_table_set_str_memo(tb, c_conc, r, &args, &at->text, shape[3]);
            /* the category a cpu_op has: as a launcher (with its kernels) or by name */
            uint32_t li = l->index_of[op];
            tl_table_set_str(tb, c_cat, r,
                             li != UINT32_MAX ? l->v[li].category : tl_extension_categorize(l->ext, tl_es_name(es, op), NULL));
        }
    }
    tl_str_memo_free(&names);
    tl_str_memo_free(&args);
    return tb;
}

tl_table *tl_sheet_kernel_summary(const tl_table *kernels, double total_us)
{
    /* work on a copy: the fill-ins belong to this sheet only */
    size_t c_launcher = (size_t)tl_table_col(kernels, "Launcher");
    size_t c_parent = (size_t)tl_table_col(kernels, "Parent cpu_op");
    size_t c_cat = (size_t)tl_table_col(kernels, "Parent op category");
    size_t c_dur = (size_t)tl_table_col(kernels, "Kernel duration (\xc2\xb5s)");
    int have_parent = 0;
    for (size_t r = 0; r < kernels->nrows && !have_parent; r++)
        have_parent = !tl_table_is_null(kernels, c_parent, r);
    tl_table *w = tl_table_new("kernel_summary_input");
    size_t w_cat = tl_table_add_col(w, "Parent op category", TL_COL_STR);
    size_t w_parent = have_parent ? tl_table_add_col(w, "Parent cpu_op", TL_COL_STR) : 0;
    size_t w_name = tl_table_add_col(w, "Kernel name", TL_COL_STR);
    size_t w_stream = tl_table_add_col(w, "Kernel stream", TL_COL_I64);
    size_t w_dur = tl_table_add_col(w, "Kernel duration (\xc2\xb5s)", TL_COL_F64);
    size_t c_kname = (size_t)tl_table_col(kernels, "Kernel name");
    size_t cs = (size_t)tl_table_col(kernels, "Kernel stream");
    const uint32_t *launcher_id = kernels->cols[c_launcher].v.s, *parent_id = kernels->cols[c_parent].v.s;
    const uint32_t *cat_id = kernels->cols[c_cat].v.s;
    /* the texts repeat over the kernels: each distinct one is interned into w once */
    tl_str_memo memo = {0};
    double all = 0;
    tl_table_add_rows(w, kernels->nrows);
    for (size_t r = 0; r < kernels->nrows; r++) {
        size_t o = r;
        const char *launcher = tl_table_str(kernels, c_launcher, r);
        if (have_parent)
            tl_table_set_str_memo(w, w_parent, o, &memo, &kernels->pool,
                                  parent_id[r] != TL_NULL_STR ? parent_id[r] : launcher_id[r]);
        if (cat_id[r] == TL_NULL_STR && launcher && *launcher)
            tl_table_set_str(w, w_cat, o,
                             tl_contains_ci(launcher, "cudagraph") || tl_contains_ci(launcher, "graphlaunch")
                                 ? "graph"
                                 : "runtime");
        else tl_table_set_str_memo(w, w_cat, o, &memo, &kernels->pool, cat_id[r]);
        tl_table_set_str_memo(w, w_name, o, &memo, &kernels->pool, kernels->cols[c_kname].v.s[r]);
        if (!tl_table_is_null(kernels, cs, r)) tl_table_set_i64(w, w_stream, o, kernels->cols[cs].v.i[r]);
        double d = tl_table_num(kernels, c_dur, r);
        tl_table_set_f64(w, w_dur, o, d);
        all += d;
    }
    tl_str_memo_free(&memo);
    const char *keys[4] = {"Parent op category", "Parent cpu_op", "Kernel name", "Kernel stream"};
    const char *keys_np[3] = {"Parent op category", "Kernel name", "Kernel stream"};
    const char *dur = "Kernel duration (\xc2\xb5s)";
    const tl_agg aggs[] = {
        {dur, TL_AGG_SUM, "Kernel duration (\xc2\xb5s)_sum", NULL, NULL},
        {dur, TL_AGG_COUNT, "Kernel duration (\xc2\xb5s)_count", NULL, NULL},
        {dur, TL_AGG_MEAN, "Kernel duration (\xc2\xb5s)_mean", NULL, NULL},
        {dur, TL_AGG_MIN, "Kernel duration (\xc2\xb5s)_min", NULL, NULL},
        {dur, TL_AGG_MAX, "Kernel duration (\xc2\xb5s)_max", NULL, NULL},
    };
    tl_groupby g = {have_parent ? keys : keys_np, have_parent ? 4 : 3, 1, 0, aggs, 5};
    tl_table *t = tl_table_group(w, "kernel_summary", &g);
    tl_table_free(w);
    if (!t->nrows) {
        tl_table_free(t);
        return NULL;
    }
    tl_sortkey sk = {"Kernel duration (\xc2\xb5s)_sum", 1};
    tl_table_sort(t, &sk, 1);
    size_t sc = (size_t)tl_table_col(t, "Kernel duration (\xc2\xb5s)_sum");
    size_t pk = tl_table_add_col(t, "Percent of kernels time (%)", TL_COL_F64);
    size_t pt = tl_table_add_col(t, "Percent of total time (%)", TL_COL_F64);
    for (size_t r = 0; r < t->nrows; r++) {
        double s = tl_table_num(t, sc, r);
        tl_table_set_f64(t, pk, r, s / all * 100);
        tl_table_set_f64(t, pt, r, s / total_us * 100);
    }
    return t;
}

/* numpy histogram edges and bin of x (the comparison rule of §7.8). */
tl_table *tl_sheet_short_kernel_histogram(const tl_table *kernels, const tl_short_opts *o)
{
    size_t c_dur = (size_t)tl_table_col(kernels, "Kernel duration (\xc2\xb5s)");
    tl_table *t = tl_table_new("short_kernel_histogram");
    size_t cs = tl_table_add_col(t, "bin_start", TL_COL_F64);
    size_t ce = tl_table_add_col(t, "bin_end", TL_COL_F64);
    size_t cc = tl_table_add_col(t, "count", TL_COL_I64);
    double lo = INFINITY, hi = -INFINITY;
    size_t n = 0;
    for (size_t r = 0; r < kernels->nrows; r++) {
        double d = tl_table_num(kernels, c_dur, r);
        if (!(d < o->threshold_us)) continue;
        if (d < lo) lo = d;
        if (d > hi) hi = d;
        n++;
    }
    if (!n) return t;
    if (lo == hi) {
        lo -= 0.5;
        hi += 0.5;
    }
    int B = o->bins > 0 ? o->bins : 100;
    double *edge = tl_xmalloc((size_t)(B + 1) * sizeof *edge);
    double step = (hi - lo) / B;
    for (int i = 0; i < B; i++) edge[i] = i * step + lo;
    edge[B] = hi;
    int64_t *cnt = tl_xcalloc((size_t)B, sizeof *cnt);
    for (size_t r = 0; r < kernels->nrows; r++) {
        double x = tl_table_num(kernels, c_dur, r);
        if (!(x < o->threshold_us)) continue;
        int b = (int)((x - lo) / (hi - lo) * B);
        if (b >= B) b = B - 1;
        if (b < 0) b = 0;
        while (b > 0 && x < edge[b]) b--;
        while (b < B - 1 && x >= edge[b + 1]) b++;
        cnt[b]++;
    }
    for (int i = 0; i < B; i++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_f64(t, cs, r, edge[i]);
        tl_table_set_f64(t, ce, r, edge[i + 1]);
        tl_table_set_i64(t, cc, r, cnt[i]);
    }
    free(edge);
    free(cnt);
    return t;
}

tl_table *tl_sheet_short_kernels_summary(const tl_table *kernels, double total_us, int gpu_only,
                                         const tl_short_opts *o)
{
    /* rows of short kernels only */
    tl_table *w = tl_table_new("short");
    static const char *const cols[] = {"Parent cpu_op", "Input dims", "Input strides", "Concrete Inputs",
                                       "Kernel name"};
    size_t wc[5], kc[5];
    for (int i = 0; i < 5; i++) {
        wc[i] = tl_table_add_col(w, cols[i], TL_COL_STR);
        kc[i] = (size_t)tl_table_col(kernels, cols[i]);
    }
    const char *dur = "Kernel duration (\xc2\xb5s)";
    size_t wd = tl_table_add_col(w, dur, TL_COL_F64), kd = (size_t)tl_table_col(kernels, dur);
    for (size_t r = 0; r < kernels->nrows; r++) {
        double d = tl_table_num(kernels, kd, r);
        if (!(d < o->threshold_us)) continue;
        size_t o2 = tl_table_add_row(w);
        for (int i = 0; i < 5; i++) tl_table_set_str(w, wc[i], o2, tl_table_str(kernels, kc[i], r));
        tl_table_set_f64(w, wd, o2, d);
    }
    const tl_agg aggs[] = {
        {dur, TL_AGG_SUM, "Short Kernel duration (\xc2\xb5s) sum", NULL, NULL},
        {dur, TL_AGG_COUNT, "Short Kernel count", NULL, NULL},
        {dur, TL_AGG_MEAN, "Short Kernel duration (\xc2\xb5s) mean", NULL, NULL},
    };
    static const char *const name_only[] = {"Kernel name"};
    tl_groupby g = {gpu_only ? name_only : cols, gpu_only ? 1 : 5, 0, 0, aggs, 3};
    tl_table *t = tl_table_group(w, "short_kernels_summary", &g);
    tl_table_free(w);
    size_t sc = (size_t)tl_table_col(t, "Short Kernel duration (\xc2\xb5s) sum");
    size_t pc = tl_table_add_col(t, "Short Kernel duration (\xc2\xb5s) percent of total time", TL_COL_F64);
    for (size_t r = 0; r < t->nrows; r++) tl_table_set_f64(t, pc, r, tl_table_num(t, sc, r) / total_us * 100);
    tl_sortkey sk[4] = {{"Short Kernel duration (\xc2\xb5s) sum", 1},
                        {"Short Kernel count", 0},
                        {"Short Kernel duration (\xc2\xb5s) mean", 0},
                        {"Short Kernel duration (\xc2\xb5s) percent of total time", 0}};
    tl_table_sort(t, sk, 4);
    if (o->topk > 0) tl_table_head(t, (size_t)o->topk);
    return t;
}

/* ------------------------------------------------------ coll_analysis */

static int coll_bpe(const char *dtype)
{
    static const struct { const char *n; int b; } t[] = {{"Float", 4}, {"Int", 4},    {"Long", 8},
                                                        {"BFloat16", 2}, {"Bool", 1}, {"Byte", 1},
                                                        {"Double", 8},   {"Half", 2}, {"Short", 2}};
    for (size_t i = 0; dtype && i < sizeof t / sizeof *t; i++)
        if (!strcmp(dtype, t[i].n)) return t[i].b;
    return 0;
}

tl_table *tl_coll_summary(const tl_table *rows, const char *name, const char *const keys[11])
{
    static const tl_agg aggs[] = {
        {"In msg size (MB)", TL_AGG_FIRST, "In msg size (MB)_first", NULL, NULL},
        {"Out msg size (MB)", TL_AGG_FIRST, "Out msg size (MB)_first", NULL, NULL},
        {"dur", TL_AGG_SUM, "dur_sum", NULL, NULL},
        {"dur", TL_AGG_MEAN, "dur_mean", NULL, NULL},
        {"dur", TL_AGG_STD, "dur_std", NULL, NULL},
        {"dur", TL_AGG_MIN, "dur_min", NULL, NULL},
        {"dur", TL_AGG_MAX, "dur_max", NULL, NULL},
        {"collective_id", TL_AGG_COUNT, "operation_count", NULL, NULL},
    };
    /* rows with a missing key are kept (dropna off) */
    tl_groupby g = {keys, 11, 1, 0, aggs, 8};
    tl_table *out = tl_table_group(rows, name, &g);
    tl_sortkey sk = {"dur_sum", 1};
    tl_table_sort(out, &sk, 1);
    return out;
}

/* An args value as a cell: integers as I64 text-free, others as str(). */
static void set_arg_cell(tl_table *tb, size_t col, size_t row, const tl_trace *t, uint32_t ev, const char *key,
                         tl_argtext *at, int64_t *iv, int *is_int)
{
    *is_int = 0;
    uint32_t k = tl_strpool_find(&t->es.keys, key, strlen(key));
    if (k == UINT32_MAX) return;
    if (tl_es_arg_int(&t->es, ev, k, iv)) {
        *is_int = 1;
        if (tb->cols[col].type == TL_COL_I64) tl_table_set_i64(tb, col, row, *iv);
        else {
            char num[32];
            snprintf(num, sizeof num, "%lld", (long long)*iv);
            tl_table_set_str(tb, col, row, num);
        }
        return;
    }
    const char *s = tl_argtext_tuple(at, ev, k);
    if (!s) return;
    /* strings print unquoted (a str cell), containers as their tuple str() */
    if (s[0] == '\'' || s[0] == '"') {
        tl_pv_arena *ar = tl_pv_arena_new();
        int dummy;
        uint32_t vid = tl_es_arg_raw(&t->es, ev, k, &dummy);
        const tl_pv *pv = tl_pv_parse(ar, tl_strpool_get(&t->es.values, vid));
        if (pv->kind == TL_PV_STR) tl_table_set_strn(tb, col, row, pv->s, pv->n);
        tl_pv_arena_free(ar);
    } else {
        tl_table_set_str(tb, col, row, s);
    }
}

tl_table *tl_sheet_coll_analysis(const tl_trace *t)
{
    const tl_event_store *es = &t->es;
    static const char *const keys[] = {"Process Group Name", "Process Group Ranks", "Collective name",
                                       "Group size", "dtype", "In msg nelems", "Out msg nelems",
                                       "In split size", "Out split size", "stream"};
    static const int is_num[] = {0, 0, 0, 1, 0, 1, 1, 0, 0, 1};
    tl_argtext at;
    tl_argtext_init(&at, t);
    tl_table *w = tl_table_new("coll");
    size_t c_rank = tl_table_add_col(w, "rank", TL_COL_I64);
    size_t kc[10];
    for (int i = 0; i < 10; i++) kc[i] = tl_table_add_col(w, keys[i], is_num[i] ? TL_COL_I64 : TL_COL_STR);
    size_t c_in = tl_table_add_col(w, "In msg size (MB)", TL_COL_F64);
    size_t c_out = tl_table_add_col(w, "Out msg size (MB)", TL_COL_F64);
    size_t c_dur = tl_table_add_col(w, "dur", TL_COL_F64);
    size_t c_id = tl_table_add_col(w, "collective_id", TL_COL_I64);
    int any_pg = 0;
    for (size_t k = 0; k < es->n; k++) {
        if (es->cat[k] != TL_CAT_KERNEL || !tl_tree_is_comm(&t->tree, es, (uint32_t)k)) continue;
        size_t r = tl_table_add_row(w);
        tl_table_set_i64(w, c_rank, r, 0);
        int64_t iv[10];
        int isint;
        for (int i = 0; i < 10; i++) set_arg_cell(w, kc[i], r, t, (uint32_t)k, keys[i], &at, &iv[i], &isint);
        if (tl_table_is_null(w, kc[2], r) && strstr(tl_es_name(es, k), "cross_device_reduce"))
            tl_table_set_str(w, kc[2], r, "allreduce");
        const char *pg = tl_table_str(w, kc[0], r);
        if (pg && strcmp(pg, "Unknown_Group") != 0) any_pg = 1;
        if (!pg) tl_table_set_str(w, kc[0], r, "Unknown_Group");
        int bpe = coll_bpe(tl_table_str(w, kc[4], r));
        if (bpe && !tl_table_is_null(w, kc[5], r)) {
            tl_table_set_f64(w, c_in, r, (double)w->cols[kc[5]].v.i[r] * bpe / (1024.0 * 1024.0));
            if (!tl_table_is_null(w, kc[6], r))
                tl_table_set_f64(w, c_out, r, (double)w->cols[kc[6]].v.i[r] * bpe / (1024.0 * 1024.0));
        }
        tl_table_set_f64(w, c_dur, r, (double)es->dur[k] / 1000.0);
        tl_table_set_i64(w, c_id, r, (int64_t)r);
    }
    tl_argtext_free(&at);
    if (!w->nrows) {
        tl_table_free(w);
        return NULL;
    }
    /* simplified mode: no process group anywhere and one stream per rank */
    int one_stream = 1;
    for (size_t r = 1; r < w->nrows; r++)
        if (!tl_table_is_null(w, kc[9], r) && !tl_table_is_null(w, kc[9], 0) &&
            w->cols[kc[9]].v.i[r] != w->cols[kc[9]].v.i[0])
            one_stream = 0;
    if (!any_pg && one_stream)
        for (size_t r = 0; r < w->nrows; r++) tl_table_set_str(w, kc[0], r, "all");
    const char *gk[11] = {"rank"};
    for (int i = 0; i < 10; i++) gk[i + 1] = keys[i];
    tl_table *out = tl_coll_summary(w, "coll_analysis", gk);
    tl_table_free(w);
    return out;
}
