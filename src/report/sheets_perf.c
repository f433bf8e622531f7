#include "sheets_perf.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../perf/categorize.h"
#include "extension.h"
#include "../trace/timeline.h"
#include "../util/msort.h"
#include "../util/vec.h"
#include "sheets_ops.h"

#define KT "Kernel Time (\xc2\xb5s)"
#define RT "Roofline Time (\xc2\xb5s)"

/* Kernel lists of the raw rows of a sheet (owned uid arrays). */
typedef struct klists {
    tl_klist *v;
    size_t n, cap;
} klists;

static size_t klists_add(klists *k, uint32_t *uids, size_t n)
{
    TL_GROW(k->v, k->cap, k->n + 1);
    k->v[k->n].uids = uids;
    k->v[k->n].n = (uint32_t)n;
    return k->n++;
}

static void klists_free(klists *k)
{
    for (size_t i = 0; i < k->n; i++) free((void *)k->v[i].uids);
    free(k->v);
    memset(k, 0, sizeof *k);
}

/* The metric columns of one instance (perf-model spec §5). */
typedef struct metric_cols {
    size_t gflops, kt, tflops, dm, fpb, tbs, spec, rt, rb, pct;
    int roofline;
} metric_cols;

static void add_metric_cols(tl_table *t, metric_cols *m, int roofline)
{
    m->gflops = tl_table_add_col(t, "GFLOPS", TL_COL_F64);
    m->kt = tl_table_add_col(t, KT, TL_COL_F64);
    m->tflops = tl_table_add_col(t, "TFLOPS/s", TL_COL_F64);
    m->dm = tl_table_add_col(t, "Data Moved (MB)", TL_COL_F64);
    m->fpb = tl_table_add_col(t, "FLOPS/Byte", TL_COL_F64);
    m->tbs = tl_table_add_col(t, "TB/s", TL_COL_F64);
    m->spec = tl_table_add_col(t, "Compute Spec", TL_COL_STR);
    m->roofline = roofline;
    if (roofline) {
        m->rt = tl_table_add_col(t, RT, TL_COL_F64);
        m->rb = tl_table_add_col(t, "Roofline Bound", TL_COL_STR);
        m->pct = tl_table_add_col(t, "Pct Roofline", TL_COL_F64);
    }
}

static void set_metrics(tl_table *t, const metric_cols *m, size_t r, const tl_perf_entry *e, double t_us,
                        const tl_arch *arch)
{
    tl_perf_metrics pm;
    tl_perf_metrics_compute(&pm, e->flops, e->has_bytes, e->bytes, t_us, e->compute_spec, arch);
    tl_table_set_f64(t, m->gflops, r, pm.gflops);
    tl_table_set_f64(t, m->kt, r, t_us);
    tl_table_set_f64(t, m->tflops, r, pm.tflops_s);
    tl_table_set_f64(t, m->dm, r, pm.data_moved_mb);
    tl_table_set_f64(t, m->fpb, r, pm.flops_per_byte);
    tl_table_set_f64(t, m->tbs, r, pm.tb_s);
    tl_table_set_str(t, m->spec, r, e->compute_spec);
    if (m->roofline && pm.has_roofline) {
        tl_table_set_f64(t, m->rt, r, pm.roofline_time_us);
        tl_table_set_str(t, m->rb, r, pm.roofline_bound);
        tl_table_set_f64(t, m->pct, r, pm.pct_roofline);
    }
}

/* Busy time in µs of a kernel list. */
static double busy_us(const tl_trace *t, const uint32_t *k, size_t n)
{
    return n ? (double)tl_busy_time(&t->es, k, n) / 1000.0 : 0.0;
}

/* ================================================= per-category sheets */

static const char *const SINGLE_SHEETS[] = {"GEMM", "UnaryElementwise", "BinaryElementwise", "Normalization", NULL};
/* the inference report's (§1.6): Normalization gets Normalization_fwd */
static const char *const SINGLE_SHEETS_INFERENCE[] = {"GEMM", "UnaryElementwise", "BinaryElementwise", NULL};
static const char *const MOVED_TO_BWD[] = {"flash_attn::_flash_attn_varlen_backward", "aten::convolution_backward",
                                           "ConvBias_Backward", "ConvBiasReLU_Backward", NULL};
static const char *const DROPPED_FROM_BWD[] = {"aten::convolution", "aten::miopen_convolution",
                                               "aten::cudnn_convolution", "ConvBias_", "ConvBiasReLU_", NULL};

static int in_list(const char *s, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(s, list[i])) return 1;
    return 0;
}

/* build(events, bwd): one raw row per event with a model result. With the
 * launchers' extras: is_recompute, and the event's overlap fields (those it
 * got as a launcher, §5; None for an op that launches nothing directly). */
static tl_table *build_rows(tl_perf_eval *pe, const tl_launchers *l, const uint32_t *evs, size_t n, int bwd,
                            tl_argtext *at, klists *kl)
{
    const tl_trace *t = pe->t;
    const tl_event_store *es = &t->es;
    tl_table *tb = tl_table_new("raw");
    size_t c_name = tl_table_add_col(tb, "name", TL_COL_STR);
    size_t c_uid = tl_table_add_col(tb, "UID", TL_COL_I64);
    tl_event_cols ec;
    tl_event_cols_add(tb, &ec, 1);
    metric_cols m;
    add_metric_cols(tb, &m, pe->arch != NULL);
    size_t c_kl = tl_table_add_col(tb, "__klist", TL_COL_I64);
    size_t c_nk = tl_table_add_col(tb, "num_kernels", TL_COL_STR);
    tl_extra_cols xc;
    tl_extra_cols_add(tb, &xc, l->recompute != NULL, l->ov != NULL);
    size_t first_param = tb->ncols;
    tl_sbuf buf;
    tl_sb_init(&buf);
    /* texts from the trace's names and the evaluator's param strings are
     * interned into the table once each; param_col: param key id -> column
     * + 1 (0: not added yet), instead of a column search by name per cell */
    tl_str_memo names = {0}, params = {0};
    uint32_t *param_col = NULL;
    size_t param_cap = 0;
    tl_table_reserve(tb, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t ev = evs[i];
        const tl_perf_class *cls = tl_perf_class_of(pe, ev);
        if (!cls) continue;
        uint32_t *ops = NULL;
        size_t nops;
        if (bwd) {
            nops = tl_perf_bwd_ops(t, ev, &ops);
            if (nops == 0) { /* no backward op: no row (and no model run) */
                free(ops);
                continue;
            }
        } else {
            ops = tl_xmalloc(sizeof *ops);
            ops[0] = ev;
            nops = 1;
        }
        uint32_t *k;
        size_t nk = tl_perf_kernels(t, ops, nops, &k);
        free(ops);
        const tl_perf_entry *e = tl_perf_eval_run(pe, cls, ev, bwd, k, nk);
        if (e->status != TL_PERF_OK) {
            free(k);
            continue;
        }
        size_t r = tl_table_add_row(tb);
        tl_table_set_str_memo(tb, c_name, r, &names, &es->names, es->name[ev]);
        tl_table_set_i64(tb, c_uid, r, ev);
        tl_event_cols_set(tb, &ec, r, at, ev);
        set_metrics(tb, &m, r, e, busy_us(t, k, nk), pe->arch);
        tl_sb_clear(&buf);
        tl_sb_i64(&buf, (long long)nk); /* "%zu" without a printf per row */
        tl_table_set_str(tb, c_nk, r, buf.s);
        if (l->recompute) tl_table_set_bool(tb, xc.rc, r, l->recompute[ev]);
        if (l->ov && l->index_of[ev] != UINT32_MAX)
            tl_extra_cols_set_overlap(tb, &xc, r, es, &l->ovpool, &l->ov[l->index_of[ev]], (int64_t)l->index_of[ev],
                                      &buf);
        for (int p = 0; p < e->n_params; p++) {
            uint32_t kid = e->param_keys[p];
            if (kid >= param_cap) {
                size_t nc = param_cap ? param_cap : 64;
                while (nc <= kid) nc *= 2;
                param_col = tl_xrealloc(param_col, nc * sizeof *param_col);
                memset(param_col + param_cap, 0, (nc - param_cap) * sizeof *param_col);
                param_cap = nc;
            }
            if (!param_col[kid]) {
                const char *key = tl_perf_param_key(pe, e, p);
                long c = tl_table_col(tb, key);
                if (c < 0) c = (long)tl_table_add_col(tb, key, TL_COL_STR);
                param_col[kid] = (uint32_t)c + 1;
            }
            tl_table_set_str_memo(tb, param_col[kid] - 1, r, &params, &pe->strings, e->param_str[p]);
        }
        tl_table_set_i64(tb, c_kl, r, (int64_t)klists_add(kl, k, nk));
    }
    tl_sb_free(&buf);
    tl_str_memo_free(&names);
    tl_str_memo_free(&params);
    free(param_col);
    tl_event_cols_free(&ec);
    /* a param a row lacks is the string 'nan' (str() of pandas' NaN),
     * interned once */
    uint32_t nan_id = TL_NULL_STR;
    for (size_t c = first_param; c < tb->ncols; c++)
        for (size_t r = 0; r < tb->nrows; r++)
            if (tb->cols[c].v.s[r] == TL_NULL_STR) {
                if (nan_id == TL_NULL_STR) nan_id = tl_strpool_intern(&tb->pool, "nan", 3);
                tl_table_set_str_id(tb, c, r, nan_id);
            }
    return tb;
}

static void push_stats(tl_agg *aggs, size_t *na, const char *col, char names[][72], size_t *nn, int with_sum)
{
    static const tl_aggfn fns[] = {TL_AGG_MEAN, TL_AGG_MEDIAN, TL_AGG_STD, TL_AGG_MIN, TL_AGG_MAX, TL_AGG_SUM};
    static const char *const sfx[] = {"mean", "median", "std", "min", "max", "sum"};
    for (int i = 0; i < (with_sum ? 6 : 5); i++) {
        snprintf(names[*nn], 72, "%s_%s", col, sfx[i]);
        aggs[(*na)++] = (tl_agg){col, fns[i], names[(*nn)++], NULL, NULL};
    }
}

/* summarize(df) of §7.5; with ov (the `_kl_overlap` variant, §7.10)
 * overlapping_kernel_names joins the keys (shown second, as
 * overlapping_kernel_names_first), the overlap summaries and overlap_pct
 * statistics follow trunc_kernel_details, and the sort and rounding are
 * those of the overlap sheets. */
static tl_table *summarize(const tl_table *raw, const char *name, const tl_trace *t, const klists *kl,
                           const tl_perf_sheet_opts *o, int roofline, const tl_launchers *l, int ov)
{
    const char *keys[TL_PERF_MAX_PARAMS * 4];
    size_t nk = 0;
    keys[nk++] = "name";
    for (size_t c = 0; c < raw->ncols; c++)
        if (!strncmp(raw->cols[c].name, "param: ", 7)) keys[nk++] = raw->cols[c].name;
    if (o->group_by_num_kernels) keys[nk++] = "num_kernels";
    if (ov) keys[nk++] = "overlapping_kernel_names";
    if (l->recompute) keys[nk++] = "is_recompute";
    tl_kstats_ctx full = {t, kl->v, 0};
    tl_ovstats_ctx ofull = {t, &l->ovpool, l->ov, "__ovl", 0}, otrunc = {t, &l->ovpool, l->ov, "__ovl", 1};
    tl_agg aggs[72];
    char names[64][72];
    size_t na = 0, nn = 0;
    aggs[na++] = (tl_agg){"GFLOPS", TL_AGG_FIRST, "GFLOPS_first", NULL, NULL};
    aggs[na++] = (tl_agg){"Data Moved (MB)", TL_AGG_FIRST, "Data Moved (MB)_first", NULL, NULL};
    aggs[na++] = (tl_agg){"FLOPS/Byte", TL_AGG_FIRST, "FLOPS/Byte_first", NULL, NULL};
    push_stats(aggs, &na, "TB/s", names, &nn, 0);
    push_stats(aggs, &na, "TFLOPS/s", names, &nn, 0);
    aggs[na++] = (tl_agg){"process_name", TL_AGG_FIRST, "process_name_first", NULL, NULL};
    aggs[na++] = (tl_agg){"process_label", TL_AGG_FIRST, "process_label_first", NULL, NULL};
    aggs[na++] = (tl_agg){"thread_name", TL_AGG_FIRST, "thread_name_first", NULL, NULL};
    aggs[na++] = (tl_agg){"Compute Spec", TL_AGG_FIRST, "Compute Spec", NULL, NULL};
    if (roofline) {
        aggs[na++] = (tl_agg){RT, TL_AGG_FIRST, RT "_first", NULL, NULL};
        aggs[na++] = (tl_agg){"Roofline Bound", TL_AGG_FIRST, "Roofline Bound_first", NULL, NULL};
        push_stats(aggs, &na, "Pct Roofline", names, &nn, 0);
    }
    aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "kernel_details__summarize_kernel_stats", tl_agg_kernel_stats, &full};
    tl_kstats_ctx trunc = {t, kl->v, 1};
    aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "trunc_kernel_details", tl_agg_kernel_stats, &trunc};
    if (ov) {
        aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "overlapping_kernels_details__summarize_kernel_stats",
                              tl_agg_overlap_stats, &ofull};
        aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "trunc_overlapping_kernels_details", tl_agg_overlap_stats, &otrunc};
        push_stats(aggs, &na, "overlap_pct", names, &nn, 0);
    }
    aggs[na++] = (tl_agg){"Input Dims", TL_AGG_FIRST, "Input Dims_first", NULL, NULL};
    aggs[na++] = (tl_agg){"Input type", TL_AGG_FIRST, "Input type_first", NULL, NULL};
    aggs[na++] = (tl_agg){"Input Strides", TL_AGG_FIRST, "Input Strides_first", NULL, NULL};
    aggs[na++] = (tl_agg){"Concrete Inputs", TL_AGG_FIRST, "Concrete Inputs_first", NULL, NULL};
    push_stats(aggs, &na, KT, names, &nn, 1);
    aggs[na++] = (tl_agg){"name", TL_AGG_COUNT, "name_count", NULL, NULL};
    aggs[na++] = (tl_agg){"UID", TL_AGG_FIRST, "UID_first", NULL, NULL};
    tl_groupby g = {keys, nk, 1, 0, aggs, na};
    tl_table *s = tl_table_group(raw, name, &g);
    if (ov) {
        /* the group keys of the sort: every key but overlapping_kernel_names */
        const char *gk[TL_PERF_MAX_PARAMS * 4];
        size_t ng = 0;
        for (size_t k = 0; k < nk; k++)
            if (strcmp(keys[k], "overlapping_kernel_names")) gk[ng++] = keys[k];
        tl_kl_sort(s, gk, ng, KT "_sum", "UID_first");
        tl_kl_round(s);
        tl_table_move(s, "overlapping_kernel_names", 1);
        tl_table_rename(s, "overlapping_kernel_names", "overlapping_kernel_names_first");
    } else {
        tl_sortkey sk[2] = {{KT "_sum", 1}, {"UID_first", 0}};
        tl_table_sort(s, sk, 2);
    }
    if (o->topk_roofline_ops > 0) tl_table_head(s, (size_t)o->topk_roofline_ops);
    return s;
}

/* Appends row r of `from` to `to`, adding missing columns at the end (the
 * column union of pandas' concat: `to`'s columns first). */
static void copy_row(tl_table *to, const tl_table *from, size_t r)
{
    size_t o = tl_table_add_row(to);
    for (size_t c = 0; c < from->ncols; c++) {
        long tc = tl_table_col(to, from->cols[c].name);
        if (tc < 0) tc = (long)tl_table_add_col(to, from->cols[c].name, from->cols[c].type);
        tl_table_copy_cell(to, (size_t)tc, o, from, c, r);
    }
}

/* Moves the rows of `from` named in `names` to the end of `to`. */
static void move_rows(tl_table *from, tl_table *to, const char *const *names)
{
    size_t cn = (size_t)tl_table_col(from, "name");
    size_t *keep = tl_xmalloc((from->nrows + 1) * sizeof *keep), nkeep = 0;
    for (size_t r = 0; r < from->nrows; r++) {
        if (in_list(tl_table_str(from, cn, r), names)) copy_row(to, from, r);
        else keep[nkeep++] = r;
    }
    /* a stable filter: sort on a temporary rank column, then cut */
    size_t rk = tl_table_add_col(from, "__rank", TL_COL_I64);
    for (size_t r = 0; r < from->nrows; r++) tl_table_set_i64(from, rk, r, (int64_t)from->nrows + (int64_t)r);
    for (size_t i = 0; i < nkeep; i++) tl_table_set_i64(from, rk, keep[i], (int64_t)i);
    tl_sortkey sk = {"__rank", 0};
    tl_table_sort(from, &sk, 1);
    tl_table_head(from, nkeep);
    tl_table_drop(from, "__rank");
    free(keep);
}

static void drop_rows(tl_table *t, const char *const *names)
{
    tl_table *sink = tl_table_new("dropped");
    move_rows(t, sink, names);
    tl_table_free(sink);
}

static void emit(tl_sheet_sink sink, void *ctx, const char *name, tl_table *t)
{
    if (t && t->nrows) sink(ctx, name, t);
    else tl_table_free(t);
}

void tl_perf_sheets(tl_perf_eval *pe, const tl_launchers *l, tl_argtext *at, const tl_perf_sheet_opts *o,
                    tl_sheet_sink sink, void *ctx)
{
    int ov = o->include_overlap_info && l->ov;
    int roof = pe->arch != NULL;
    const tl_trace *t = pe->t;
    const tl_event_store *es = &t->es;
    /* the sheet family of every distinct name, then the events of each
     * family in UID order (one pass over the events) */
    const char *const *families = tl_sheet_families();
    size_t nfam = 0;
    while (families[nfam]) nfam++;
    int16_t *fam = tl_xmalloc((es->names.n + 1) * sizeof *fam);
    for (uint32_t id = 0; id < es->names.n; id++) {
        const char *nm = tl_strpool_get(&es->names, id);
        const tl_perf_class *xc = tl_extension_model(pe->ext, nm); /* the extension's models first */
        const tl_perf_op_entry *e = xc ? NULL : tl_perf_op_find(nm);
        const char *sheet = xc ? xc->sheet : e && e->cls ? e->sheet : NULL;
        fam[id] = -1;
        for (size_t f = 0; sheet && f < nfam; f++)
            if (!strcmp(sheet, families[f])) fam[id] = (int16_t)f;
    }
    size_t *count = tl_xcalloc(nfam + 1, sizeof *count), *start = tl_xcalloc(nfam + 1, sizeof *start);
    for (size_t i = 0; i < es->n; i++)
        if (fam[es->name[i]] >= 0) count[fam[es->name[i]]]++;
    for (size_t f = 1; f <= nfam; f++) start[f] = start[f - 1] + count[f - 1];
    uint32_t *bucket = tl_xmalloc((start[nfam] + 1) * sizeof *bucket);
    size_t *fill = tl_xcalloc(nfam + 1, sizeof *fill);
    for (size_t i = 0; i < es->n; i++) {
        int f = fam[es->name[i]];
        if (f >= 0) bucket[start[f] + fill[f]++] = (uint32_t)i;
    }
    uint32_t *evs = tl_xmalloc((start[nfam] + 1) * sizeof *evs);
    for (size_t f = 0; f < nfam; f++) {
        size_t n = count[f], nb = 0;
        if (!n) continue;
        memcpy(evs, bucket + start[f], n * sizeof *evs);
        klists kl = {0};
        tl_table *raw = build_rows(pe, l, evs, n, 0, at, &kl);
        tl_table *fwd = summarize(raw, families[f], t, &kl, o, roof, l, 0);
        tl_table *fwd_ov = ov ? summarize(raw, families[f], t, &kl, o, roof, l, 1) : NULL;
        tl_table_free(raw);
        char nm[96];
        if (in_list(families[f], o->inference ? SINGLE_SHEETS_INFERENCE : SINGLE_SHEETS)) {
            emit(sink, ctx, families[f], fwd);
            if (ov) {
                snprintf(nm, sizeof nm, "%s_kl_overlap", families[f]);
                emit(sink, ctx, nm, fwd_ov);
            }
            klists_free(&kl);
            continue;
        }
        tl_table *moved = tl_table_new("moved"), *moved_ov = tl_table_new("moved");
        move_rows(fwd, moved, MOVED_TO_BWD);
        if (ov) move_rows(fwd_ov, moved_ov, MOVED_TO_BWD);
        klists klb = {0};
        tl_table *bwd, *bwd_ov = NULL;
        if (o->inference) {
            /* no backward pass: the moved rows alone */
            bwd = tl_table_new(families[f]);
            if (ov) bwd_ov = tl_table_new(families[f]);
        } else {
            for (size_t i = 0; i < n; i++)
                if (strcmp(tl_es_name(es, evs[i]), "vllm::unified_attention_with_output") != 0) evs[nb++] = evs[i];
            tl_table *rawb = build_rows(pe, l, evs, nb, 1, at, &klb);
            bwd = summarize(rawb, families[f], t, &klb, o, roof, l, 0);
            bwd_ov = ov ? summarize(rawb, families[f], t, &klb, o, roof, l, 1) : NULL;
            tl_table_free(rawb);
        }
        for (size_t r = 0; r < moved->nrows; r++) copy_row(bwd, moved, r); /* appended, not re-sorted */
        for (size_t r = 0; ov && r < moved_ov->nrows; r++) copy_row(bwd_ov, moved_ov, r);
        tl_table_free(moved);
        tl_table_free(moved_ov);
        drop_rows(bwd, DROPPED_FROM_BWD);
        if (ov) drop_rows(bwd_ov, DROPPED_FROM_BWD);
        snprintf(nm, sizeof nm, "%s_fwd", families[f]);
        emit(sink, ctx, nm, fwd);
        snprintf(nm, sizeof nm, "%s_bwd", families[f]);
        emit(sink, ctx, nm, bwd);
        if (ov) {
            snprintf(nm, sizeof nm, "%s_fwd_kl_overlap", families[f]);
            emit(sink, ctx, nm, fwd_ov);
            snprintf(nm, sizeof nm, "%s_bwd_kl_overlap", families[f]);
            emit(sink, ctx, nm, bwd_ov);
        }
        klists_free(&kl);
        klists_free(&klb);
    }
    free(evs);
    free(bucket);
    free(fill);
    free(count);
    free(start);
    free(fam);
}

/* ============================================== unified_perf_summary */

/* One node of the unified visit whose children are being visited. */
struct visit_frame {
    uint32_t u, k, e; /* the node, its next child and the end of its children (in tree.children.v) */
    uint8_t only;     /* only the modelled, launching cpu_op children */
    uint8_t popframe; /* a call-stack frame was pushed for it */
};

typedef struct unified {
    tl_perf_eval *pe;
    const tl_trace *t;
    uint8_t *visited;
    TL_VEC(uint32_t) collected;
    int8_t *model_memo; /* -1 unknown, 0/1 */
    int8_t *desc_memo;  /* desc_has_model per event: -1 unknown, 0/1 */
    int include_comm;   /* NCCL ops are rows too (tl_unified_opts.include_comm) */
    /* --include_call_stack (§7.6.1): the running stack of frame names
     * (ids into `frames`), and the stack each collected event saw */
    int callstack;
    tl_strpool frames;
    uint32_t *frame_of_name;   /* per names id: frames id + 1, 0 = not yet */
    uint8_t *name_is_frame;    /* per names id: 0 unknown, 1 a frame name, 2 not */
    TL_VEC(uint32_t) stack;
    TL_VEC(uint32_t) bases;     /* concatenated stacks of the collected events */
    TL_VEC(size_t) base_off;    /* per collected event: offset in bases (n+1) */
    /* the walks' explicit stacks (the call tree can be any depth): the
     * visit's frames, and desc_has_model's (node, next child) pairs */
    TL_VEC(struct visit_frame) walk;
    TL_VEC(uint32_t) dstack;
} unified;

/* A frame of the call stack: re.sub(r"_\d+", "", name), for cpu_ops and
 * for names containing "nn.Module", "::" or "/"; UINT32_MAX for others. */
static uint32_t frame_of(unified *U, uint32_t u)
{
    /* both tests and the text depend on the name only: memoized per name id */
    uint32_t nid = U->t->es.name[u];
    const char *nm = tl_strpool_get(&U->t->es.names, nid);
    if (!U->name_is_frame[nid])
        U->name_is_frame[nid] = strstr(nm, "nn.Module") || strstr(nm, "::") || strchr(nm, '/') ? 1 : 2;
    if (U->t->es.cat[u] != TL_CAT_CPU_OP && U->name_is_frame[nid] != 1) return UINT32_MAX;
    if (U->frame_of_name[nid]) return U->frame_of_name[nid] - 1;
    tl_sbuf b;
    tl_sb_init(&b);
    for (const char *c = nm; *c;) {
        if (c[0] == '_' && c[1] >= '0' && c[1] <= '9') {
            c++;
            while (*c >= '0' && *c <= '9') c++;
            continue;
        }
        tl_sb_putc(&b, *c++);
    }
    uint32_t id = tl_strpool_intern(&U->frames, b.s ? b.s : "", b.len);
    tl_sb_free(&b);
    U->frame_of_name[nid] = id + 1;
    return id;
}

static void collect(unified *U, uint32_t u)
{
    TL_PUSH(U->collected, u);
    if (!U->callstack) return;
    TL_GROW(U->bases.v, U->bases.cap, U->bases.n + U->stack.n); /* the running stack in one copy */
    if (U->stack.n) memcpy(U->bases.v + U->bases.n, U->stack.v, U->stack.n * sizeof *U->stack.v);
    U->bases.n += U->stack.n;
    TL_PUSH(U->base_off, U->bases.n);
}

static int launches(const tl_trace *t, uint32_t u) { return tl_tree_has_gpus(&t->tree, u); }

static int has_model(unified *U, uint32_t u)
{
    if (U->model_memo[u] >= 0) return U->model_memo[u];
    const tl_perf_class *cls = tl_perf_class_of(U->pe, u);
    int ok = cls != NULL;
    if (ok && !tl_extension_owns(U->pe->ext, cls) && tl_perf_is_triton_name(tl_es_name(&U->t->es, u))) {
        /* can_model: the Triton model applies only when its trace args parse */
        uint32_t *k;
        size_t nk = tl_perf_kernels(U->t, &u, 1, &k);
        ok = tl_perf_eval_run(U->pe, cls, u, 0, k, nk)->status != TL_PERF_NOT_IMPLEMENTED;
        free(k);
    }
    U->model_memo[u] = (int8_t)ok;
    return ok;
}

static int is_gpu(const tl_trace *t, uint32_t u) { return tl_is_gpu_cat(t->es.cat[u]); }

static int leaf_search(const tl_trace *t, uint32_t u, int depth)
{
    if (depth > 10) return 0;
    const tl_tree *tr = &t->tree;
    tl_span ch = tl_tree_child_span(tr, u);
    for (uint32_t k = ch.b; k < ch.e; k++) {
        uint32_t c = tr->children.v[k];
        if (is_gpu(t, c)) return 1;
        uint8_t cat = t->es.cat[c];
        if ((cat == TL_CAT_CUDA_RUNTIME || cat == TL_CAT_PYTHON_FUNCTION) && leaf_search(t, c, depth + 1)) return 1;
    }
    return 0;
}

static int is_leaf(const tl_trace *t, uint32_t u)
{
    return t->es.cat[u] == TL_CAT_CPU_OP && leaf_search(t, u, 0);
}

/* Whether a cpu_op below u (through cpu_op and python_function children)
 * has a model and launches. Memoized: the visit asks it again of every node
 * below one it asked of. Depth-first in child order, stopping at the first
 * hit, on an explicit stack of (node, next child) pairs: the recursion this
 * replaces overflowed the thread's stack on a call tree 150,000 deep. */
static int desc_has_model(unified *U, uint32_t u)
{
    if (U->desc_memo[u] >= 0) return U->desc_memo[u];
    const tl_tree *tr = &U->t->tree;
    U->dstack.n = 0;
    tl_span ch = tl_tree_child_span(tr, u);
    TL_PUSH(U->dstack, u);
    TL_PUSH(U->dstack, ch.b);
    TL_PUSH(U->dstack, ch.e);
    while (U->dstack.n) { /* (node, next child, end of its children) */
        size_t top = U->dstack.n - 3;
        uint32_t v = U->dstack.v[top], k = U->dstack.v[top + 1];
        if (k == U->dstack.v[top + 2]) { /* no child of v has one */
            U->desc_memo[v] = 0;
            U->dstack.n = top;
            continue;
        }
        U->dstack.v[top + 1] = k + 1;
        uint32_t c = tr->children.v[k];
        uint8_t cat = U->t->es.cat[c];
        if (cat != TL_CAT_CPU_OP && cat != TL_CAT_PYTHON_FUNCTION) continue;
        int hit = cat == TL_CAT_CPU_OP && has_model(U, c) && launches(U->t, c);
        if (!hit && U->desc_memo[c] < 0) { /* ask c first */
            tl_span cc = tl_tree_child_span(tr, c);
            TL_PUSH(U->dstack, c);
            TL_PUSH(U->dstack, cc.b);
            TL_PUSH(U->dstack, cc.e);
            continue;
        }
        if (!hit && !U->desc_memo[c]) continue;
        /* a hit below v: v and every node under which it was asked have one */
        for (size_t i = 0; i < U->dstack.n; i += 3) U->desc_memo[U->dstack.v[i]] = 1;
        U->dstack.n = 0;
    }
    return U->desc_memo[u];
}

/* The launching cpu_ops below u (through cpu_op children only) named main
 * (any name when NULL); an explicit stack, as the tree can be any depth. */
static size_t count_named(const tl_trace *t, uint32_t u, const char *main)
{
    size_t n = 0;
    const tl_tree *tr = &t->tree;
    TL_VEC(uint32_t) st = {0};
    TL_PUSH(st, u);
    while (st.n) {
        uint32_t v = st.v[--st.n];
        tl_span ch = tl_tree_child_span(tr, v);
        for (uint32_t k = ch.b; k < ch.e; k++) {
            uint32_t c = tr->children.v[k];
            if (t->es.cat[c] != TL_CAT_CPU_OP) continue;
            if (launches(t, c) && (!main || !strcmp(tl_es_name(&t->es, c), main))) n++;
            TL_PUSH(st, c);
        }
    }
    free(st.v);
    return n;
}

/* §7.6 sole_bwd: returns the forward op, or TL_NOUID. */
static uint32_t sole_bwd(unified *U, uint32_t u)
{
    const tl_trace *t = U->t;
    uint32_t wrapper = TL_NOUID, p = t->tree.parent[u];
    for (int i = 0; i < 5 && p != TL_NOUID && wrapper == TL_NOUID; i++, p = t->tree.parent[p])
        if (tl_tree_fwd_of(&t->tree, p) != TL_NOUID) wrapper = p;
    if (wrapper == TL_NOUID) return TL_NOUID;
    uint32_t fwd = tl_tree_fwd_of(&t->tree, wrapper);
    if (!has_model(U, fwd)) return TL_NOUID;
    const char *wn = tl_es_name(&t->es, wrapper), *sep = strstr(wn, ": ");
    if (count_named(t, wrapper, sep ? sep + 2 : NULL) != 1) return TL_NOUID;
    const tl_perf_op_entry *e = tl_perf_op_find(tl_es_name(&t->es, fwd));
    if (!e || !e->bwd_category) return TL_NOUID;
    uint32_t *ops, *k;
    size_t nops = tl_perf_bwd_ops(t, fwd, &ops);
    size_t nk = tl_perf_kernels(t, ops, nops, &k);
    free(ops);
    int st = tl_perf_eval_run(U->pe, tl_perf_class_of(U->pe, fwd), fwd, 1, k, nk)->status;
    free(k);
    return st == TL_PERF_OK ? fwd : TL_NOUID;
}

static int launches_comm(const tl_trace *t, uint32_t u)
{
    const tl_tree *tr = &t->tree;
    tl_span gs = tl_tree_gpu_span(tr, u);
    for (uint32_t k = gs.b; k < gs.e; k++)
        if (tl_tree_is_comm(tr, &t->es, tr->gpus.v[k])) return 1;
    return 0;
}

/* §7.6 for a node the visit enters (its call-stack frame already pushed):
 * collects it or not, and says which of its children the visit goes on to:
 * -1 none, 0 all, 1 only the modelled, launching cpu_ops. */
static int visit_node(unified *U, uint32_t u)
{
    const tl_trace *t = U->t;
    if (!launches(t, u)) return -1;
    if (has_model(U, u)) {
        collect(U, u);
        return -1;
    }
    if (sole_bwd(U, u) != TL_NOUID) {
        if (desc_has_model(U, u)) return 0;
        collect(U, u);
        return -1;
    }
    if (desc_has_model(U, u)) return 0;
    if (is_leaf(t, u)) {
        const tl_tree *tr = &t->tree;
        int direct_model = 0;
        tl_span ch = tl_tree_child_span(tr, u);
        for (uint32_t k = ch.b; k < ch.e && !direct_model; k++) {
            uint32_t c = tr->children.v[k];
            direct_model = t->es.cat[c] == TL_CAT_CPU_OP && has_model(U, c) && launches(t, c);
        }
        if (direct_model) return 1;
        if (U->include_comm || !launches_comm(t, u)) collect(U, u);
        return -1;
    }
    return 0;
}

/* Enters u: marked visited, its call-stack frame pushed, decided; a node
 * whose children are to be visited goes on the walk's stack. */
static void visit_enter(unified *U, uint32_t u)
{
    if (U->visited[u]) return;
    U->visited[u] = 1;
    uint32_t f = UINT32_MAX;
    if (!U->t->tree.with_python) {
        if (U->t->es.cat[u] != TL_CAT_CPU_OP) return;
    } else {
        f = U->callstack ? frame_of(U, u) : UINT32_MAX;
        if (f != UINT32_MAX) TL_PUSH(U->stack, f);
    }
    int only = visit_node(U, u);
    if (only < 0) {
        if (f != UINT32_MAX) U->stack.n--;
        return;
    }
    tl_span ch = tl_tree_child_span(&U->t->tree, u);
    struct visit_frame fr = {u, ch.b, ch.e, (uint8_t)only, f != UINT32_MAX};
    TL_PUSH(U->walk, fr);
}

/* The visit of §7.6 from root, depth-first in child order: iterative (an
 * explicit stack of frames), as the call tree can be any depth. */
static void visit(unified *U, uint32_t root)
{
    const tl_tree *tr = &U->t->tree;
    U->walk.n = 0;
    visit_enter(U, root);
    while (U->walk.n) {
        struct visit_frame *fr = &U->walk.v[U->walk.n - 1];
        if (fr->k == fr->e) {
            if (fr->popframe) U->stack.n--;
            U->walk.n--;
            continue;
        }
        uint32_t c = tr->children.v[fr->k++];
        if (fr->only && !(U->t->es.cat[c] == TL_CAT_CPU_OP && has_model(U, c) && launches(U->t, c))) continue;
        visit_enter(U, c); /* may grow the stack: fr is not used after */
    }
}

static int by_ts(void *ctx, size_t a, size_t b)
{
    const int64_t *ts = ctx;
    return (ts[a] > ts[b]) - (ts[a] < ts[b]);
}

/* One unified row; synthetic ops carry their source event and kernel. */
typedef tl_unified_row urow;
typedef TL_VEC(urow) urows;

static const char *launcher_first_kernel(const tl_trace *t, const tl_launchers *l, uint32_t u)
{
    uint32_t i = l->index_of[u];
    if (i == UINT32_MAX || !l->v[i].nk) return NULL;
    return tl_es_name(&t->es, l->kernels[l->v[i].first_k]);
}

/* The same kernel as an event (TL_NOUID when none). */
static uint32_t launcher_first_kernel_uid(const tl_launchers *l, uint32_t u)
{
    uint32_t i = l->index_of[u];
    if (i == UINT32_MAX || !l->v[i].nk) return TL_NOUID;
    return l->kernels[l->v[i].first_k];
}

/* Call stacks of every unified row's kernels (§7.6.1): per row, per kernel
 * (gpu_events order), the frame ids. */
typedef struct callstacks {
    TL_VEC(uint32_t) frames;
    TL_VEC(size_t) kernel_off;  /* per kernel: start in frames; one extra at the end */
    TL_VEC(size_t) row_off;     /* per row: first kernel index; one extra at the end */
} callstacks;

typedef struct cs_ctx {
    const tl_trace *t;
    const klists *kl;
    const unified *U;
    const callstacks *cs;
    int entry_point; /* 0: call_stack_full, 1: entry_point */
} cs_ctx;

/* Appends the stack of row `row`'s kernels: base, then the frames from each
 * kernel up to (not including) `top`. */
static void add_row_stacks(unified *U, callstacks *cs, const uint32_t *base, size_t nbase, uint32_t top,
                           const uint32_t *gk, size_t ng)
{
    TL_PUSH(cs->row_off, cs->kernel_off.n);
    for (size_t k = 0; k < ng; k++) {
        TL_PUSH(cs->kernel_off, cs->frames.n);
        TL_GROW(cs->frames.v, cs->frames.cap, cs->frames.n + nbase); /* the base in one copy */
        if (nbase) memcpy(cs->frames.v + cs->frames.n, base, nbase * sizeof *base);
        cs->frames.n += nbase;
        size_t from = cs->frames.n;
        for (uint32_t p = U->t->tree.parent[gk[k]]; p != TL_NOUID && p != top; p = U->t->tree.parent[p]) {
            uint32_t f = frame_of(U, p);
            if (f != UINT32_MAX) TL_PUSH(cs->frames, f);
        }
        for (size_t a = from, b = cs->frames.n; a + 1 < b; a++, b--) { /* root -> leaf */
            uint32_t x = cs->frames.v[a];
            cs->frames.v[a] = cs->frames.v[b - 1];
            cs->frames.v[b - 1] = x;
        }
    }
}

/* The chains (stack + kernel name) of a group, in kernel-summary order;
 * returns the count, fills per-chain frame ranges (kernel name last). */
typedef struct chain {
    const uint32_t *f;
    size_t n;
    const char *kernel;
} chain;

static size_t group_chains(const cs_ctx *c, const tl_table *src, const size_t *rows, size_t n, chain **out)
{
    long li = tl_table_col(src, "__klist");
    tl_klist *kl = tl_xmalloc((n + 1) * sizeof *kl);
    for (size_t i = 0; i < n; i++) kl[i] = c->kl->v[src->cols[li].v.i[rows[i]]];
    size_t *order, m = 0;
    long ti = tl_kernel_stats_order(c->t, kl, n, &order, &m);
    free(kl);
    if (ti < 0) return 0;
    size_t row = (size_t)src->cols[li].v.i[rows[ti]];
    size_t k0 = c->cs->row_off.v[row];
    chain *ch = tl_xmalloc(m * sizeof *ch);
    for (size_t q = 0; q < m; q++) {
        size_t k = k0 + order[q];
        ch[q].f = c->cs->frames.v + c->cs->kernel_off.v[k];
        ch[q].n = c->cs->kernel_off.v[k + 1] - c->cs->kernel_off.v[k];
        ch[q].kernel = tl_es_name(&c->t->es, c->kl->v[row].uids[order[q]]);
    }
    free(order);
    *out = ch;
    return m;
}

static const char *chain_item(const cs_ctx *c, const chain *ch, size_t i)
{
    return i < ch->n ? tl_strpool_get(&c->U->frames, ch->f[i]) : ch->kernel;
}

static int items_eq(const cs_ctx *c, const chain *a, const chain *b, size_t i)
{
    return !strcmp(chain_item(c, a, i), chain_item(c, b, i));
}

/* call_stack_full: one chain as a list; several as the common prefix
 * followed by the distinct tails as sub-lists. Also its flattening. */
typedef TL_VEC(const char *) strvec;

static void render_stack(const cs_ctx *c, const chain *ch, size_t m, tl_sbuf *out, strvec *flat)
{
    size_t pre = ch[0].n + 1;
    for (size_t q = 1; q < m; q++) {
        size_t len = ch[q].n + 1, i = 0;
        while (i < pre && i < len && items_eq(c, &ch[0], &ch[q], i)) i++;
        pre = i;
    }
    if (m == 1) pre = ch[0].n + 1;
    tl_sb_putc(out, '[');
    size_t w = 0;
    for (size_t i = 0; i < pre; i++) {
        const char *it = chain_item(c, &ch[0], i);
        if (w++) tl_sb_puts(out, ", ");
        tl_sb_pystr(out, it, strlen(it));
        TL_PUSH(*flat, it);
    }
    for (size_t q = 0; m > 1 && q < m; q++) {
        int dup = 0; /* a tail equal to an earlier one is listed once */
        for (size_t r = 0; r < q && !dup; r++) {
            if (ch[r].n != ch[q].n) continue;
            size_t i = pre;
            while (i < ch[q].n + 1 && items_eq(c, &ch[r], &ch[q], i)) i++;
            dup = i == ch[q].n + 1;
        }
        if (dup) continue;
        if (w++) tl_sb_puts(out, ", ");
        tl_sb_putc(out, '[');
        for (size_t i = pre; i < ch[q].n + 1; i++) {
            const char *it = chain_item(c, &ch[q], i);
            if (i > pre) tl_sb_puts(out, ", ");
            tl_sb_pystr(out, it, strlen(it));
            TL_PUSH(*flat, it);
        }
        tl_sb_putc(out, ']');
    }
    tl_sb_putc(out, ']');
}

static int is_wrapper(const char *f)
{
    static const char *const prefix[] = {"<built-in", "pybind11_builtins", "nn.Module:", NULL};
    static const char *const path[] = {"torch/_ops.py", "torch/nn/modules/module.py", "torch/utils/_contextlib.py",
                                       "torch/utils/_device.py", "torch/_tensor.py", "torch/functional.py",
                                       "torch/overrides.py", "torch/_inductor/", "torch/_functorch/",
                                       "torch/distributed/c10d_logger.py", "triton/backends/", NULL};
    static const char *const fn[] = {"__torch_function__", "_call_impl", "_wrapped_call_impl", "decorate_context",
                                     "dispatch_wrapper", "handle_torch_function", "wrapper", "custom_wrapper",
                                     "wrapper_custom", "outer_wrapper", NULL};
    for (int i = 0; prefix[i]; i++)
        if (!strncmp(f, prefix[i], strlen(prefix[i]))) return 1;
    for (int i = 0; path[i]; i++)
        if (strstr(f, path[i])) return 1;
    const char *sep = strstr(f, "): ");
    for (int i = 0; sep && fn[i]; i++)
        if (!strcmp(sep + 3, fn[i])) return 1;
    return 0;
}

/* _find_entry_point of §7.6.1 over the flattened stack. */
static void entry_point(const char *const *flat, size_t n, const char *name, tl_sbuf *out)
{
    char base[512];
    snprintf(base, sizeof base, "%s", name);
    size_t bl = strlen(base), k = bl;
    while (k > 0 && base[k - 1] >= '0' && base[k - 1] <= '9') k--;
    if (k < bl && k > 0 && base[k - 1] == '_') base[k - 1] = 0;
    long op = -1;
    for (size_t i = n; i-- > 0 && op < 0;)
        if (!strcmp(flat[i], name) || !strcmp(flat[i], base)) op = (long)i;
    if (op >= 0) {
        const char *local = strstr(name, "::");
        local = local ? local + 2 : name;
        char low[256];
        size_t j = 0;
        for (; local[j] && j + 1 < sizeof low; j++) low[j] = (char)tolower((unsigned char)local[j]);
        low[j] = 0;
        for (size_t i = (size_t)op + 1; i < n; i++) {
            const char *sep = strstr(flat[i], "): ");
            if (strstr(flat[i], ".py") && sep && strstr(sep + 3, low)) {
                tl_sb_puts(out, flat[i]);
                return;
            }
        }
        for (long i = op - 1; i >= 0; i--)
            if (strstr(flat[i], ".py") && !is_wrapper(flat[i])) {
                tl_sb_puts(out, flat[i]);
                return;
            }
    }
    tl_sb_puts(out, "Not found");
}

static void free_callstacks(callstacks *cs, unified *U)
{
    free(cs->frames.v);
    free(cs->kernel_off.v);
    free(cs->row_off.v);
    tl_strpool_free(&U->frames);
    free(U->frame_of_name);
    free(U->name_is_frame);
}

static int agg_call_stack(const tl_table *src, const size_t *rows, size_t n, void *ctx, tl_sbuf *out)
{
    const cs_ctx *c = ctx;
    chain *ch;
    size_t m = group_chains(c, src, rows, n, &ch);
    if (!m) {
        tl_sb_puts(out, "Not found");
        return 1;
    }
    strvec flat = {0};
    tl_sbuf text;
    tl_sb_init(&text);
    render_stack(c, ch, m, &text, &flat);
    if (c->entry_point) entry_point(flat.v, flat.n, tl_table_str(src, (size_t)tl_table_col(src, "name"), rows[0]), out);
    else tl_sb_putn(out, text.s, text.len);
    tl_sb_free(&text);
    free(flat.v);
    free(ch);
    return 1;
}

/* What step C of the unified table needs (§7.6, §7.10). */
typedef struct tl_unified_ctx {
    const tl_trace *t;
    const klists *kl;
    unified *U;
    const callstacks *cs;
    int any_metrics, any_roofline, recompute;
    const tl_ovpool *opool;
    const tl_ovinfo *oinfo;
} tl_unified_ctx;

/* summarize_df_unified_perf_table; with ov the `_kl_overlap` variant:
 * overlapping_kernel_names as the second key, the overlap summaries and
 * overlap_pct statistics after trunc_kernel_details, no call-stack
 * columns, the overlap sheets' sort and rounding. NULL when empty. */
static tl_table *unified_summary(const tl_table *tb, const tl_unified_ctx *c, int ov)
{
    const tl_trace *t = c->t;
    const char *keys[12];
    size_t nkeys = 0;
    keys[nkeys++] = "name";
    if (ov) keys[nkeys++] = "overlapping_kernel_names";
    static const char *const base[] = {"op category", "process_name", "process_label", "thread_name", "Input Dims",
                                       "Input type",  "Input Strides", "Concrete Inputs"};
    for (int i = 0; i < 8; i++) keys[nkeys++] = base[i];
    if (c->recompute) keys[nkeys++] = "is_recompute";
    int any_metrics = c->any_metrics, any_roofline = c->any_roofline, callstack = c->U->callstack && !ov;
    tl_kstats_ctx full = {t, c->kl->v, 0}, trunc = {t, c->kl->v, 1};
    tl_ovstats_ctx ofull = {t, c->opool, c->oinfo, "__ovl", 0}, otrunc = {t, c->opool, c->oinfo, "__ovl", 1};
    tl_agg aggs[72];
    char names[64][72];
    size_t na = 0, nn = 0;
    aggs[na++] = (tl_agg){"UID", TL_AGG_FIRST, "ex_UID", NULL, NULL};
    aggs[na++] = (tl_agg){"UID", TL_AGG_COUNT, "operation_count", NULL, NULL};
    aggs[na++] = (tl_agg){"duration_us", TL_AGG_SUM, "total_duration_us", NULL, NULL};
    aggs[na++] = (tl_agg){"duration_us", TL_AGG_MEAN, "mean_duration_us", NULL, NULL};
    aggs[na++] = (tl_agg){"duration_us", TL_AGG_MEDIAN, "duration_us_median", NULL, NULL};
    aggs[na++] = (tl_agg){"duration_us", TL_AGG_STD, "std_duration_us", NULL, NULL};
    aggs[na++] = (tl_agg){"duration_us", TL_AGG_MIN, "duration_us_min", NULL, NULL};
    aggs[na++] = (tl_agg){"duration_us", TL_AGG_MAX, "duration_us_max", NULL, NULL};
    aggs[na++] = (tl_agg){"GFLOPS", TL_AGG_FIRST, "GFLOPS", NULL, NULL};
    aggs[na++] = (tl_agg){"Data Moved (MB)", TL_AGG_FIRST, "Data Moved (MB)", NULL, NULL};
    aggs[na++] = (tl_agg){"FLOPS/Byte", TL_AGG_FIRST, "FLOPS/Byte", NULL, NULL};
    aggs[na++] = (tl_agg){"Compute Spec", TL_AGG_FIRST, "Compute Spec", NULL, NULL};
    if (any_roofline) aggs[na++] = (tl_agg){"Roofline Bound", TL_AGG_FIRST, "Roofline Bound", NULL, NULL};
    push_stats(aggs, &na, "TB/s", names, &nn, 0);
    push_stats(aggs, &na, "TFLOPS/s", names, &nn, 0);
    if (any_roofline) {
        aggs[na++] = (tl_agg){RT, TL_AGG_FIRST, RT "_first", NULL, NULL};
        push_stats(aggs, &na, "Pct Roofline", names, &nn, 0);
    }
    push_stats(aggs, &na, KT, names, &nn, 1);
    aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "kernel_details_summary", tl_agg_kernel_stats, &full};
    aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "trunc_kernel_details", tl_agg_kernel_stats, &trunc};
    if (ov) {
        aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "overlapping_kernels_details_summary", tl_agg_overlap_stats, &ofull};
        aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "trunc_overlapping_kernels_details", tl_agg_overlap_stats, &otrunc};
        push_stats(aggs, &na, "overlap_pct", names, &nn, 0);
    }
    aggs[na++] = (tl_agg){"perf_params", TL_AGG_FIRST, "perf_params", NULL, NULL};
    aggs[na++] = (tl_agg){"has_perf_model", TL_AGG_FIRST, "has_perf_model", NULL, NULL};
    cs_ctx csf = {t, c->kl, c->U, c->cs, 0}, cse = {t, c->kl, c->U, c->cs, 1};
    if (callstack) {
        aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "entry_point", agg_call_stack, &cse};
        aggs[na++] = (tl_agg){NULL, TL_AGG_CUSTOM, "call_stack_full", agg_call_stack, &csf};
    }
    tl_groupby g = {keys, nkeys, 0, 0, aggs, na};
    tl_table *s = tl_table_group(tb, ov ? "unified_perf_summary_kl_overlap" : "unified_perf_summary", &g);
    if (!s->nrows) {
        tl_table_free(s);
        return NULL;
    }
    if (ov) {
        const char *gk[12];
        size_t ng = 0;
        for (size_t k = 0; k < nkeys; k++)
            if (strcmp(keys[k], "overlapping_kernel_names")) gk[ng++] = keys[k];
        tl_kl_sort(s, gk, ng, KT "_sum", "ex_UID");
    } else {
        tl_sortkey sk[2] = {{KT "_sum", 1}, {"ex_UID", 0}};
        tl_table_sort(s, sk, 2);
    }
    const char *order[96];
    size_t no = 0;
    for (size_t i = 0; i < nkeys; i++) order[no++] = keys[i];
    static const char *const mid[] = {"ex_UID", "operation_count", "total_duration_us", "mean_duration_us",
                                      "std_duration_us"};
    for (int i = 0; i < 5; i++) order[no++] = mid[i];
    if (any_metrics) {
        order[no++] = "GFLOPS";
        order[no++] = "Data Moved (MB)";
        order[no++] = "FLOPS/Byte";
        order[no++] = "Compute Spec";
        if (any_roofline) order[no++] = "Roofline Bound";
        order[no++] = "TB/s_mean";
        order[no++] = "TB/s_std";
        order[no++] = "TFLOPS/s_mean";
        order[no++] = "TFLOPS/s_std";
    }
    order[no++] = KT "_mean";
    order[no++] = KT "_std";
    order[no++] = KT "_sum";
    order[no++] = "duration_us_median";
    order[no++] = "duration_us_min";
    order[no++] = "duration_us_max";
    if (any_metrics) {
        static const char *const tail[] = {"TB/s_median", "TB/s_min", "TB/s_max", "TFLOPS/s_median", "TFLOPS/s_min",
                                           "TFLOPS/s_max"};
        for (int i = 0; i < 6; i++) order[no++] = tail[i];
    }
    if (any_roofline) {
        static const char *const rf[] = {RT "_first", "Pct Roofline_mean", "Pct Roofline_median",
                                         "Pct Roofline_std", "Pct Roofline_min", "Pct Roofline_max"};
        for (int i = 0; i < 6; i++) order[no++] = rf[i];
    }
    order[no++] = KT "_median";
    order[no++] = KT "_min";
    order[no++] = KT "_max";
    order[no++] = "kernel_details_summary";
    order[no++] = "trunc_kernel_details";
    if (ov) {
        static const char *const oc[] = {"overlapping_kernels_details_summary", "trunc_overlapping_kernels_details",
                                         "overlap_pct_mean", "overlap_pct_median", "overlap_pct_std",
                                         "overlap_pct_min", "overlap_pct_max"};
        for (int i = 0; i < 7; i++) order[no++] = oc[i];
    }
    order[no++] = "perf_params";
    order[no++] = "has_perf_model";
    if (callstack) {
        order[no++] = "entry_point";
        order[no++] = "call_stack_full";
    }
    tl_table_select(s, order, no);
    tl_add_percentages(s, KT "_sum");
    if (ov) tl_kl_round(s);
    return s;
}

/* Step A (§7.6): the collected events in collection order, then the
 * synthetic ops (orphan groups by parent, then those under a cpu_op). */
static void unified_rows(unified *U, urows *rows)
{
    const tl_trace *t = U->t;
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    /* roots: parentless python functions with GPU work, then cpu_op roots by ts */
    if (tr->with_python)
        for (size_t u = 0; u < es->n; u++)
            if (es->cat[u] == TL_CAT_PYTHON_FUNCTION && tr->in_tree[u] == 1 && tr->parent[u] == TL_NOUID &&
                launches(t, (uint32_t)u))
                visit(U, (uint32_t)u);
    TL_VEC(size_t) roots = {0};
    /* per event off the cpu_ops: 1 a cpu_op above it, 2 none, 0 not known
     * yet; each parent walk stops at a known one (a deep python stack with
     * an op at every level stays linear) */
    uint8_t *above = tl_xcalloc(es->n + 1, 1);
    TL_VEC(uint32_t) path = {0};
    for (size_t u = 0; u < es->n; u++) {
        if (es->cat[u] != TL_CAT_CPU_OP || tr->in_tree[u] != 1) continue;
        uint8_t res = 2;
        path.n = 0;
        for (uint32_t p = tr->parent[u]; p != TL_NOUID; p = tr->parent[p]) {
            if (es->cat[p] == TL_CAT_CPU_OP) {
                res = 1;
                break;
            }
            if (above[p]) {
                res = above[p];
                break;
            }
            TL_PUSH(path, p);
        }
        for (size_t k = 0; k < path.n; k++) above[path.v[k]] = res;
        if (res == 2) TL_PUSH(roots, u);
    }
    free(path.v);
    free(above);
    tl_msort(roots.v, roots.n, by_ts, (void *)es->ts);
    for (size_t i = 0; i < roots.n; i++) visit(U, (uint32_t)roots.v[i]);
    free(roots.v);
    free(U->walk.v);
    free(U->dstack.v);
    memset(&U->walk, 0, sizeof U->walk);
    memset(&U->dstack, 0, sizeof U->dstack);

    /* rows: collected events, then synthetic ops for uncovered kernels */
    uint8_t *covered = tl_xcalloc(es->n + 1, 1);
    for (size_t i = 0; i < U->collected.n; i++) {
        uint32_t u = U->collected.v[i];
        urow r = {u, TL_NOUID};
        TL_PUSH(*rows, r);
        tl_span gs = tl_tree_gpu_span(tr, u);
        for (uint32_t k = gs.b; k < gs.e; k++) covered[tr->gpus.v[k]] = 1;
    }
    TL_VEC(urow) orphans = {0}, withop = {0};
    for (size_t g = 0; g < es->n; g++) {
        if (!is_gpu(t, (uint32_t)g) || covered[g] || (!U->include_comm && tl_tree_is_comm(tr, es, (uint32_t)g)))
            continue;
        uint32_t op = TL_NOUID;
        for (uint32_t p = tr->parent[g]; p != TL_NOUID && op == TL_NOUID; p = tr->parent[p])
            if (es->cat[p] == TL_CAT_CPU_OP) op = p;
        if (op != TL_NOUID) {
            urow r = {op, (uint32_t)g};
            TL_PUSH(withop, r);
        } else if (tr->parent[g] != TL_NOUID) {
            urow r = {tr->parent[g], (uint32_t)g};
            TL_PUSH(orphans, r);
        }
    }
    /* orphans grouped by their parent, in first-appearance order */
    uint8_t *done = tl_xcalloc(orphans.n + 1, 1);
    for (size_t i = 0; i < orphans.n; i++) {
        if (done[i]) continue;
        for (size_t j = i; j < orphans.n; j++)
            if (!done[j] && orphans.v[j].ev == orphans.v[i].ev) {
                done[j] = 1;
                TL_PUSH(*rows, orphans.v[j]);
            }
    }
    free(done);
    for (size_t i = 0; i < withop.n; i++) TL_PUSH(*rows, withop.v[i]);
    free(orphans.v);
    free(withop.v);
    free(covered);
}

size_t tl_unified_collect(tl_perf_eval *pe, tl_unified_row **out)
{
    const tl_trace *t = pe->t;
    unified U = {.pe = pe, .t = t};
    U.visited = tl_xcalloc(t->es.n + 1, 1);
    U.model_memo = tl_xmalloc(t->es.n + 1);
    memset(U.model_memo, 0xff, t->es.n + 1);
    U.desc_memo = tl_xmalloc(t->es.n + 1);
    memset(U.desc_memo, 0xff, t->es.n + 1);
    urows rows = {0};
    unified_rows(&U, &rows);
    free(U.visited);
    free(U.model_memo);
    free(U.desc_memo);
    free(U.collected.v);
    free(U.stack.v);
    *out = rows.v;
    return rows.n;
}

/* The summary row of each raw row's kernels: raw and summary rows meet on
 * the text of the grouping columns (the last summary row with a key wins). */
static uint32_t *kernel_rows(const tl_table *raw, const tl_table *sum, const klists *kl, size_t n_events)
{
    static const char *const keys[] = {"name", "op category", "process_name", "process_label", "thread_name",
                                       "Input Dims", "Input type", "Input Strides", "Concrete Inputs"};
    long kr[9], ks[9];
    size_t nk = 0;
    for (int k = 0; k < 9; k++) {
        long a = tl_table_col(sum, keys[k]), b = tl_table_col(raw, keys[k]);
        if (a < 0 || b < 0) continue;
        ks[nk] = a;
        kr[nk++] = b;
    }
    tl_strpool keytext;
    tl_strpool_init(&keytext);
    tl_sbuf b;
    tl_sb_init(&b);
    uint32_t *row_of_key = NULL;
    size_t cap = 0;
    for (size_t r = 0; r < sum->nrows; r++) {
        tl_sb_clear(&b);
        for (size_t k = 0; k < nk; k++) {
            tl_table_cell_text(sum, (size_t)ks[k], r, &b);
            tl_sb_putc(&b, '\x1f');
        }
        uint32_t id = tl_strpool_intern(&keytext, b.s, b.len);
        TL_GROW(row_of_key, cap, (size_t)id + 1);
        row_of_key[id] = (uint32_t)r;
    }
    uint32_t *out = tl_xmalloc((n_events + 1) * sizeof *out);
    memset(out, 0xff, (n_events + 1) * sizeof *out);
    long ckl = tl_table_col(raw, "__klist");
    for (size_t r = 0; r < raw->nrows; r++) {
        tl_sb_clear(&b);
        for (size_t k = 0; k < nk; k++) {
            tl_table_cell_text(raw, (size_t)kr[k], r, &b);
            tl_sb_putc(&b, '\x1f');
        }
        uint32_t id = tl_strpool_find(&keytext, b.s ? b.s : "", b.len);
        if (id == UINT32_MAX) continue;
        const tl_klist *k = &kl->v[(size_t)tl_table_num(raw, (size_t)ckl, r)];
        for (uint32_t i = 0; i < k->n; i++)
            if (k->uids[i] < n_events) out[k->uids[i]] = row_of_key[id];
    }
    free(row_of_key);
    tl_sb_free(&b);
    tl_strpool_free(&keytext);
    return out;
}

void tl_sheets_unified(tl_perf_eval *pe, const tl_launchers *l, tl_argtext *at, const tl_unified_opts *o,
                       tl_table **summary, tl_table **kl_overlap)
{
    const tl_trace *t = pe->t;
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    *summary = NULL;
    if (kl_overlap) *kl_overlap = NULL;
    unified U = {.pe = pe, .t = t, .callstack = tr->with_python && o->call_stack, .include_comm = o->include_comm};
    int ov = o->kl_overlap && l->overlaps && kl_overlap;
    tl_strpool_init(&U.frames);
    U.frame_of_name = tl_xcalloc(es->names.n + 1, sizeof *U.frame_of_name);
    U.name_is_frame = tl_xcalloc(es->names.n + 1, 1);
    TL_PUSH(U.base_off, 0);
    U.visited = tl_xcalloc(es->n + 1, 1);
    U.model_memo = tl_xmalloc(es->n + 1);
    memset(U.model_memo, 0xff, es->n + 1);
    U.desc_memo = tl_xmalloc(es->n + 1);
    memset(U.desc_memo, 0xff, es->n + 1);
    urows rows = {0};
    unified_rows(&U, &rows);

    /* step B: the raw rows */
    tl_table *tb = tl_table_new("unified_raw");
    size_t c_name = tl_table_add_col(tb, "name", TL_COL_STR);
    size_t c_cat = tl_table_add_col(tb, "op category", TL_COL_STR);
    size_t c_uid = tl_table_add_col(tb, "UID", TL_COL_I64);
    tl_event_cols ec;
    tl_event_cols_add(tb, &ec, 0);
    size_t c_dur = tl_table_add_col(tb, "duration_us", TL_COL_F64);
    size_t c_hpm = tl_table_add_col(tb, "has_perf_model", TL_COL_BOOL);
    metric_cols m;
    add_metric_cols(tb, &m, pe->arch != NULL);
    size_t c_pp = tl_table_add_col(tb, "perf_params", TL_COL_STR);
    size_t c_kl = tl_table_add_col(tb, "__klist", TL_COL_I64);
    tl_extra_cols xc;
    tl_extra_cols_add(tb, &xc, l->recompute != NULL, ov);
    tl_ovpool opool = {0};
    TL_VEC(tl_ovinfo) oinfo = {0};
    int any_metrics = 0, any_roofline = 0;
    klists kl = {0};
    callstacks cs = {0};
    tl_sbuf buf;
    tl_sb_init(&buf);
    tl_str_memo names = {0};
    tl_category_memo cats;
    tl_category_memo_init(&cats, l->ext);
    uint32_t next_uid = (uint32_t)es->n;
    tl_table_add_rows(tb, rows.n);
    for (size_t i = 0; i < rows.n; i++) {
        const urow *ur = &rows.v[i];
        uint32_t u = ur->ev;
        int synthetic = ur->kernel != TL_NOUID;
        size_t r = i;
        const char *cat;
        if (synthetic) {
            tl_sb_clear(&buf);
            tl_sb_printf(&buf, "%s->%s (Synthetic Op)", tl_es_name(es, u), tl_es_name(es, ur->kernel));
            tl_table_set_str(tb, c_name, r, buf.s);
            cat = tl_extension_categorize(l->ext, buf.s, launcher_first_kernel(t, l, u));
            tl_table_set_i64(tb, c_uid, r, next_uid++);
        } else {
            tl_table_set_str_memo(tb, c_name, r, &names, &es->names, es->name[u]);
            cat = tl_category_of(&cats, es, u, launcher_first_kernel_uid(l, u));
            tl_table_set_i64(tb, c_uid, r, u);
        }
        tl_event_cols_set(tb, &ec, r, at, u);
        if (es->flags[u] & TL_F_DUR) tl_table_set_f64(tb, c_dur, r, (double)es->dur[u] / 1000.0);
        /* the row's kernels: gpu_events order (not sorted), GPU-set only */
        uint32_t *gk;
        size_t ng;
        if (synthetic) {
            gk = tl_xmalloc(sizeof *gk);
            gk[0] = ur->kernel;
            ng = 1;
        } else {
            const uint32_t *gv = tl_tree_gpus(tr, u, &ng);
            gk = tl_xmalloc((ng + 1) * sizeof *gk);
            if (ng) memcpy(gk, gv, ng * sizeof *gk);
        }
        int own = !synthetic && has_model(&U, u);
        uint32_t fwd = !synthetic && !own ? sole_bwd(&U, u) : TL_NOUID;
        int hpm = own || fwd != TL_NOUID;
        const tl_perf_entry *e = NULL;
        double t_us = busy_us(t, gk, ng);
        if (own || fwd != TL_NOUID) {
            uint32_t target = own ? u : fwd;
            uint32_t *ops, *k;
            size_t nops;
            if (own) {
                ops = tl_xmalloc(sizeof *ops);
                ops[0] = u;
                nops = 1;
            } else {
                nops = tl_perf_bwd_ops(t, fwd, &ops);
            }
            size_t nk = tl_perf_kernels(t, ops, nops, &k);
            free(ops);
            e = tl_perf_eval_run(pe, tl_perf_class_of(pe, target), target, !own, k, nk);
            if (e->status == TL_PERF_OK) t_us = busy_us(t, k, nk);
            else if (e->status == TL_PERF_NOT_IMPLEMENTED && own) hpm = 0; /* FIX: kept, unmodelled */
            free(k);
            if (fwd != TL_NOUID) {
                const tl_perf_op_entry *fe = tl_perf_op_find(tl_es_name(es, fwd));
                if (fe && fe->bwd_category) cat = fe->bwd_category;
            }
        }
        tl_table_set_str(tb, c_cat, r, cat);
        tl_table_set_bool(tb, c_hpm, r, hpm);
        if (e && e->status == TL_PERF_OK) {
            set_metrics(tb, &m, r, e, t_us, pe->arch);
            any_metrics = 1;
            if (m.roofline && !tl_table_is_null(tb, m.rt, r)) any_roofline = 1;
            if (e->perf_params) tl_table_set_str(tb, c_pp, r, e->perf_params);
        } else {
            tl_table_set_f64(tb, m.kt, r, t_us);
        }
        if (U.callstack) {
            if (synthetic) {
                /* a synthetic op is a copy of an event the visit did not
                 * collect: no stored stack, so each chain is its kernel
                 * alone (the reference's sglang_decode inference rows) */
                add_row_stacks(&U, &cs, NULL, 0, ng ? tr->parent[gk[0]] : TL_NOUID, gk, ng);
            } else {
                add_row_stacks(&U, &cs, U.bases.v + U.base_off.v[i], U.base_off.v[i + 1] - U.base_off.v[i], u, gk, ng);
            }
        }
        /* a synthetic op is a copy of its parent: the parent's flag */
        if (l->recompute) tl_table_set_bool(tb, xc.rc, r, l->recompute[u]);
        if (ov) {
            /* the event's fields as a launcher (§5) when it has an overlap;
             * else computed on demand over its own GPU events (a synthetic
             * op: its one kernel), as the reference's unified build does */
            tl_ovinfo inf;
            uint32_t li = l->index_of[u];
            if (li != UINT32_MAX && l->ov[li].n) {
                inf = l->ov[li];
                inf.first = (uint32_t)opool.n;
                for (uint32_t d = 0; d < l->ov[li].n; d++) TL_PUSH(opool, l->ovpool.v[l->ov[li].first + d]);
            } else {
                tl_ovinfo_compute(es, l->overlaps, gk, ng, &opool, &inf);
            }
            tl_extra_cols_set_overlap(tb, &xc, r, es, &opool, &inf, (int64_t)oinfo.n, &buf);
            TL_PUSH(oinfo, inf);
        }
        tl_table_set_i64(tb, c_kl, r, (int64_t)klists_add(&kl, gk, ng));
    }
    if (U.callstack) {
        TL_PUSH(cs.row_off, cs.kernel_off.n);
        TL_PUSH(cs.kernel_off, cs.frames.n);
    }
    tl_sb_free(&buf);
    tl_str_memo_free(&names);
    tl_category_memo_free(&cats);
    tl_event_cols_free(&ec);
    free(rows.v);
    free(U.visited);
    free(U.model_memo);
    free(U.desc_memo);
    free(U.collected.v);
    free(U.stack.v);
    free(U.bases.v);
    free(U.base_off.v);

    /* step C: the summary, and its overlap variant from the same rows */
    tl_unified_ctx uc = {t, &kl, &U, &cs, any_metrics, any_roofline, l->recompute != NULL, &opool, oinfo.v};
    *summary = unified_summary(tb, &uc, 0);
    if (o->kernel_row) *o->kernel_row = *summary ? kernel_rows(tb, *summary, &kl, es->n) : NULL;
    if (ov && *summary) *kl_overlap = unified_summary(tb, &uc, 1);
    tl_table_free(tb);
    tl_ovpool_free(&opool);
    free(oinfo.v);
    klists_free(&kl);
    free_callstacks(&cs, &U);
}
