#include "launchers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../perf/categorize.h"
#include "extension.h"
#include "../trace/timeline.h"
#include "../util/hashmap.h"
#include "../util/msort.h"
#include "../util/numsort.h"
#include "../util/vec.h"

void tl_event_cols_add(tl_table *t, tl_event_cols *c, int list_form)
{
    c->pn = tl_table_add_col(t, "process_name", TL_COL_STR);
    c->pl = tl_table_add_col(t, "process_label", TL_COL_STR);
    c->tn = tl_table_add_col(t, "thread_name", TL_COL_STR);
    c->dims = tl_table_add_col(t, "Input Dims", TL_COL_STR);
    c->type = tl_table_add_col(t, "Input type", TL_COL_STR);
    c->strides = tl_table_add_col(t, "Input Strides", TL_COL_STR);
    c->conc = tl_table_add_col(t, "Concrete Inputs", TL_COL_STR);
    c->list_form = list_form;
    c->memo = (tl_str_memo){0};
}

void tl_event_cols_free(tl_event_cols *c) { tl_str_memo_free(&c->memo); }

void tl_event_cols_set(tl_table *t, tl_event_cols *c, size_t row, tl_argtext *at, uint32_t ev)
{
    tl_table_set_str_memo(t, c->pn, row, &c->memo, &at->text, tl_argtext_meta_id(at, ev, TL_META_PROCESS_NAME));
    tl_table_set_str_memo(t, c->pl, row, &c->memo, &at->text, tl_argtext_meta_id(at, ev, TL_META_PROCESS_LABEL));
    tl_table_set_str_memo(t, c->tn, row, &c->memo, &at->text, tl_argtext_meta_id(at, ev, TL_META_THREAD_NAME));
    uint32_t ids[4];
    tl_argtext_shape_ids(at, ev, !c->list_form, ids);
    const size_t cols[4] = {c->dims, c->type, c->strides, c->conc};
    for (int k = 0; k < 4; k++) tl_table_set_str_memo(t, cols[k], row, &c->memo, &at->text, ids[k]);
}

/* -------------------------------------------------- category memo */

void tl_category_memo_init(tl_category_memo *m, const struct tl_extension *ext)
{
    memset(m, 0, sizeof *m);
    m->ext = ext;
    tl_map_init(&m->index, 256);
}

void tl_category_memo_free(tl_category_memo *m)
{
    tl_map_free(&m->index);
    free(m->cats);
}

const char *tl_category_of(tl_category_memo *m, const tl_event_store *es, uint32_t ev, uint32_t first_kernel)
{
    uint64_t k = first_kernel == TL_NOUID ? 0 : (uint64_t)es->name[first_kernel] + 1;
    uint32_t i = tl_map_get(&m->index, es->name[ev], k);
    if (i == UINT32_MAX) {
        TL_GROW(m->cats, m->cap, m->n + 1);
        m->cats[m->n] = tl_extension_categorize(m->ext, tl_es_name(es, ev),
                                                first_kernel == TL_NOUID ? NULL : tl_es_name(es, first_kernel));
        i = (uint32_t)m->n++;
        tl_map_put(&m->index, es->name[ev], k, i);
    }
    return m->cats[i];
}

/* --------------------------------------------------------- launchers */

typedef struct lsort {
    const tl_event_store *es;
    const tl_launcher *v;
} lsort;

static int launcher_by_ts(void *ctx, size_t a, size_t b)
{
    const lsort *c = ctx;
    int64_t x = c->es->ts[c->v[a].uid], y = c->es->ts[c->v[b].uid];
    return (x > y) - (x < y);
}

void tl_launchers_build_ext(const tl_trace *t, const tl_extension *ext, tl_launchers *out)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    memset(out, 0, sizeof *out);
    out->ext = ext;
    /* 1. kernels in UID order -> launcher (first-appearance order) */
    tl_map index;
    tl_map_init(&index, 1024);
    TL_VEC(uint32_t) owner = {0}, kern = {0};
    TL_VEC(tl_launcher) ls = {0};
    for (size_t g = 0; g < es->n; g++) {
        if (!tl_is_gpu_cat(es->cat[g])) continue;
        if (tl_tree_is_comm(tr, es, (uint32_t)g)) continue;
        uint32_t l = tl_tree_launcher(tr, es, (uint32_t)g);
        if (l == TL_NOUID) continue;
        uint32_t li = tl_map_get(&index, l, 0);
        if (li == UINT32_MAX) {
            li = (uint32_t)ls.n;
            tl_map_put(&index, l, 0, li);
            tl_launcher nl = {.uid = l};
            TL_PUSH(ls, nl);
        }
        ls.v[li].nk++;
        TL_PUSH(owner, li);
        TL_PUSH(kern, (uint32_t)g);
    }
    tl_map_free(&index);
    /* 2. group kernels per launcher (UID order kept), then sort each by ts */
    uint32_t off = 0;
    for (size_t i = 0; i < ls.n; i++) {
        ls.v[i].first_k = off;
        off += ls.v[i].nk;
        ls.v[i].nk = 0;
    }
    out->kernels = tl_xmalloc((kern.n ? kern.n : 1) * sizeof *out->kernels);
    for (size_t k = 0; k < kern.n; k++) {
        tl_launcher *L = &ls.v[owner.v[k]];
        out->kernels[L->first_k + L->nk++] = kern.v[k];
    }
    free(owner.v);
    free(kern.v);
    size_t *idx = NULL, cap = 0;
    tl_category_memo cats;
    tl_category_memo_init(&cats, ext);
    for (size_t i = 0; i < ls.n; i++) {
        tl_launcher *L = &ls.v[i];
        uint32_t *k = out->kernels + L->first_k;
        TL_GROW(idx, cap, L->nk);
        for (uint32_t j = 0; j < L->nk; j++) idx[j] = k[j];
        tl_msort(idx, L->nk, tl_idx_cmp_i64, (void *)es->ts);
        for (uint32_t j = 0; j < L->nk; j++) k[j] = (uint32_t)idx[j];
        L->direct_ns = tl_busy_time(es, k, L->nk);
        size_t gn;
        const uint32_t *gv = tl_tree_gpus(tr, L->uid, &gn);
        L->subtree_ns = gn ? tl_busy_time(es, gv, gn) : 0;
        L->category = tl_category_of(&cats, es, L->uid, L->nk ? k[0] : TL_NOUID);
    }
    tl_category_memo_free(&cats);
    /* 3. launchers by ts (stable: ties keep first-appearance order) */
    TL_GROW(idx, cap, ls.n);
    for (size_t i = 0; i < ls.n; i++) idx[i] = i;
    lsort c = {es, ls.v};
    tl_msort(idx, ls.n, launcher_by_ts, &c);
    out->v = tl_xmalloc((ls.n ? ls.n : 1) * sizeof *out->v);
    for (size_t i = 0; i < ls.n; i++) out->v[i] = ls.v[idx[i]];
    out->n = ls.n;
    free(idx);
    free(ls.v);
    out->index_of = tl_xmalloc((es->n + 1) * sizeof *out->index_of);
    memset(out->index_of, 0xff, (es->n + 1) * sizeof *out->index_of);
    for (size_t i = 0; i < out->n; i++) out->index_of[out->v[i].uid] = (uint32_t)i;
}

void tl_launchers_free(tl_launchers *l)
{
    free(l->v);
    free(l->kernels);
    free(l->ov);
    free(l->index_of);
    tl_ovpool_free(&l->ovpool);
    memset(l, 0, sizeof *l);
}

static int by_uid(void *ctx, size_t a, size_t b)
{
    (void)ctx;
    return (a > b) - (a < b);
}

void tl_launchers_set_extras(tl_launchers *l, const tl_trace *t, const uint8_t *recompute, const tl_overlaps *ov)
{
    l->recompute = recompute;
    l->overlaps = ov;
    if (!ov) return;
    const tl_event_store *es = &t->es;
    l->ov = tl_xmalloc((l->n + 1) * sizeof *l->ov);
    size_t *k = NULL, cap = 0;
    uint32_t *ku = NULL;
    size_t capu = 0;
    for (size_t i = 0; i < l->n; i++) {
        const tl_launcher *L = &l->v[i];
        /* the reference scans a launcher's kernels in kernel-UID order */
        TL_GROW(k, cap, L->nk);
        TL_GROW(ku, capu, L->nk);
        for (uint32_t j = 0; j < L->nk; j++) k[j] = l->kernels[L->first_k + j];
        tl_msort(k, L->nk, by_uid, NULL);
        for (uint32_t j = 0; j < L->nk; j++) ku[j] = (uint32_t)k[j];
        tl_ovinfo_compute(es, ov, ku, L->nk, &l->ovpool, &l->ov[i]);
    }
    free(k);
    free(ku);
}

/* ----------------------------------------------------- kernel stats */

typedef struct kstat {
    const tl_kitem *tmpl; /* the template row's item at this position */
    double *durs;
    size_t n;
    double total, mean, median, std, min, max;
} kstat;

typedef struct kst_sort {
    const kstat *k;
    const tl_event_store *es;
} kst_sort;

static int kstat_order(void *ctx, size_t a, size_t b)
{
    const kst_sort *c = ctx;
    const kstat *x = &c->k[a], *y = &c->k[b];
    if (x->total != y->total) return x->total < y->total ? -1 : 1;
    return strcmp(tl_es_name(c->es, x->tmpl->uid), tl_es_name(c->es, y->tmpl->uid));
}

static void put_stream(tl_sbuf *out, const tl_event_store *es, uint32_t uid)
{
    int64_t s;
    if (tl_es_arg_int(es, uid, TL_K_STREAM, &s)) tl_sb_printf(out, "%lld", (long long)s);
    else tl_sb_puts(out, "None");
}

/* The per-position statistics of a group's item lists and their summary
 * order (total, then name, ascending). Returns the template row index, or -1
 * when every list is empty. */
static long kstats_compute(const tl_trace *t, const tl_krow *rows, size_t n, kstat **ks_out, size_t *m_out,
                           size_t **order_out)
{
    long ti = -1;
    for (size_t i = 0; i < n && ti < 0; i++)
        if (rows[i].n) ti = (long)i;
    if (ti < 0) return -1;
    size_t m = rows[ti].n;
    kstat *ks = tl_xcalloc(m, sizeof *ks);
    for (size_t p = 0; p < m; p++) {
        ks[p].tmpl = &rows[ti].v[p];
        ks[p].durs = tl_xmalloc((n + 1) * sizeof(double));
    }
    for (size_t i = 0; i < n; i++) {
        if (rows[i].n != m) continue; /* a row with another count is skipped [KEEP] */
        for (size_t p = 0; p < m; p++) ks[p].durs[ks[p].n++] = rows[i].v[p].dur_us;
    }
    for (size_t p = 0; p < m; p++) {
        kstat *k = &ks[p];
        double s = 0;
        for (size_t i = 0; i < k->n; i++) s += k->durs[i];
        k->total = s;
        k->mean = k->n ? s / (double)k->n : NAN;
        double ss = 0;
        for (size_t i = 0; i < k->n; i++) ss += (k->durs[i] - k->mean) * (k->durs[i] - k->mean);
        k->std = k->n ? sqrt(ss / (double)k->n) : NAN;
        k->min = k->max = k->median = NAN;
        if (k->n) tl_stats_f64(k->durs, k->n, &k->min, &k->max, &k->median);
    }
    size_t *order = tl_xmalloc(m * sizeof *order);
    for (size_t p = 0; p < m; p++) order[p] = p;
    kst_sort sc = {ks, &t->es};
    tl_msort(order, m, kstat_order, &sc);
    *ks_out = ks;
    *m_out = m;
    *order_out = order;
    return ti;
}

static void kstats_free(kstat *ks, size_t m, size_t *order)
{
    for (size_t p = 0; p < m; p++) free(ks[p].durs);
    free(ks);
    free(order);
}

/* Item rows of kernel lists: each kernel with its raw duration. */
static tl_krow *klist_rows(const tl_trace *t, const tl_klist *rows, size_t n, tl_kitem **items_out)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += rows[i].n;
    tl_kitem *items = tl_xmalloc((total + 1) * sizeof *items);
    tl_krow *kr = tl_xmalloc((n + 1) * sizeof *kr);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        kr[i].v = items + o;
        kr[i].n = rows[i].n;
        for (uint32_t k = 0; k < rows[i].n; k++, o++)
            items[o] = (tl_kitem){rows[i].uids[k], (double)t->es.dur[rows[i].uids[k]] / 1000.0, 0};
    }
    *items_out = items;
    return kr;
}

long tl_kernel_stats_order(const tl_trace *t, const tl_klist *rows, size_t n, size_t **order, size_t *m)
{
    tl_kitem *items;
    tl_krow *kr = klist_rows(t, rows, n, &items);
    kstat *ks;
    long ti = kstats_compute(t, kr, n, &ks, m, order);
    if (ti >= 0) {
        for (size_t p = 0; p < *m; p++) free(ks[p].durs);
        free(ks);
    }
    free(kr);
    free(items);
    return ti;
}

int tl_kstats_render(const tl_trace *t, const tl_krow *rows, size_t n, int trunc, int with_pct, tl_sbuf *out)
{
    const tl_event_store *es = &t->es;
    kstat *ks;
    size_t m, *order;
    if (kstats_compute(t, rows, n, &ks, &m, &order) < 0) {
        if (trunc) return 0;
        tl_sb_puts(out, "[]");
        return 1;
    }
    tl_sb_putc(out, '[');
    for (size_t q = 0; q < m; q++) {
        const kstat *k = &ks[order[q]];
        const char *name = tl_es_name(es, k->tmpl->uid);
        if (q) tl_sb_puts(out, ", ");
        tl_sb_puts(out, "{'name': ");
        size_t nl = strlen(name);
        if (trunc && nl > 64) {
            tl_sbuf cut;
            tl_sb_init(&cut);
            tl_sb_putn(&cut, name, 64);
            tl_sb_puts(&cut, "...");
            tl_sb_pystr(out, cut.s, cut.len);
            tl_sb_free(&cut);
        } else {
            tl_sb_pystr(out, name, nl);
        }
        tl_sb_puts(out, ", 'stream': ");
        put_stream(out, es, k->tmpl->uid);
        if (trunc) {
            tl_sb_puts(out, ", 'mean_duration_us': ");
            tl_sb_pyfloat(out, tl_np_round2(k->mean));
        } else {
            if (with_pct) {
                tl_sb_puts(out, ", 'overlap_pct': ");
                tl_sb_pyfloat(out, k->tmpl->pct);
            }
            tl_sb_printf(out, ", 'count': %zu, 'total_duration_us': ", k->n);
            tl_sb_pyfloat(out, k->total);
            tl_sb_puts(out, ", 'mean_duration_us': ");
            tl_sb_pyfloat(out, k->mean);
            tl_sb_puts(out, ", 'median_duration_us': ");
            tl_sb_pyfloat(out, k->median);
            tl_sb_puts(out, ", 'std_dev_duration_us': ");
            tl_sb_pyfloat(out, k->std);
            tl_sb_puts(out, ", 'min_duration_us': ");
            tl_sb_pyfloat(out, k->min);
            tl_sb_puts(out, ", 'max_duration_us': ");
            tl_sb_pyfloat(out, k->max);
        }
        tl_sb_putc(out, '}');
    }
    tl_sb_putc(out, ']');
    kstats_free(ks, m, order);
    return 1;
}

int tl_kernel_stats_text(const tl_trace *t, const tl_klist *rows, size_t n, int trunc, tl_sbuf *out)
{
    tl_kitem *items;
    tl_krow *kr = klist_rows(t, rows, n, &items);
    int r = tl_kstats_render(t, kr, n, trunc, 0, out);
    free(kr);
    free(items);
    return r;
}

void tl_extra_cols_add(tl_table *t, tl_extra_cols *c, int recompute, int overlap)
{
    *c = (tl_extra_cols){0};
    if (recompute) c->rc = tl_table_add_col(t, "is_recompute", TL_COL_BOOL);
    if (overlap) {
        c->ovn = tl_table_add_col(t, "overlapping_kernel_names", TL_COL_STR);
        c->ovp = tl_table_add_col(t, "overlap_pct", TL_COL_F64);
        c->ovl = tl_table_add_col(t, "__ovl", TL_COL_I64);
    }
}

void tl_extra_cols_set_overlap(tl_table *t, const tl_extra_cols *c, size_t row, const tl_event_store *es,
                               const tl_ovpool *pool, const tl_ovinfo *inf, int64_t index, tl_sbuf *buf)
{
    tl_sb_clear(buf);
    if (tl_ovinfo_names_text(es, pool, inf, buf)) tl_table_set_strn(t, c->ovn, row, buf->s, buf->len);
    tl_table_set_f64(t, c->ovp, row, inf->pct);
    tl_table_set_i64(t, c->ovl, row, index);
}

/* ---------------------------------------------------- launcher table */

tl_table *tl_launcher_table(const tl_trace *t, const tl_launchers *l, tl_argtext *at)
{
    const tl_event_store *es = &t->es;
    tl_table *tb = tl_table_new("kernel_launchers");
    size_t c_name = tl_table_add_col(tb, "name", TL_COL_STR);
    size_t c_cat = tl_table_add_col(tb, "op category", TL_COL_STR);
    size_t c_uid = tl_table_add_col(tb, "UID", TL_COL_I64);
    size_t c_direct = tl_table_add_col(tb, "total_direct_kernel_time", TL_COL_F64);
    size_t c_sub = tl_table_add_col(tb, "total_subtree_kernel_time", TL_COL_F64);
    size_t c_cnt = tl_table_add_col(tb, "direct_kernel_count", TL_COL_I64);
    size_t c_ts = tl_table_add_col(tb, "ts", TL_COL_F64);
    tl_event_cols ec;
    tl_event_cols_add(tb, &ec, 0);
    size_t c_nk = tl_table_add_col(tb, "num_kernels", TL_COL_I64);
    size_t c_li = tl_table_add_col(tb, "__klist", TL_COL_I64);
    tl_extra_cols xc;
    tl_extra_cols_add(tb, &xc, l->recompute != NULL, l->ov != NULL);
    tl_sbuf names;
    tl_sb_init(&names);
    tl_str_memo name_memo = {0};
    tl_table_add_rows(tb, l->n);
    for (size_t i = 0; i < l->n; i++) {
        const tl_launcher *L = &l->v[i];
        uint32_t u = L->uid;
        size_t r = i;
        tl_table_set_str_memo(tb, c_name, r, &name_memo, &es->names, es->name[u]);
        tl_table_set_str(tb, c_cat, r, L->category);
        tl_table_set_i64(tb, c_uid, r, u);
        tl_table_set_f64(tb, c_direct, r, (double)L->direct_ns / 1000.0);
        tl_table_set_f64(tb, c_sub, r, (double)L->subtree_ns / 1000.0);
        tl_table_set_i64(tb, c_cnt, r, L->nk);
        tl_table_set_f64(tb, c_ts, r, (double)es->ts[u] / 1000.0);
        tl_event_cols_set(tb, &ec, r, at, u);
        tl_table_set_i64(tb, c_nk, r, L->nk);
        tl_table_set_i64(tb, c_li, r, (int64_t)i);
        if (l->recompute) tl_table_set_bool(tb, xc.rc, r, l->recompute[u]);
        if (l->ov) tl_extra_cols_set_overlap(tb, &xc, r, es, &l->ovpool, &l->ov[i], (int64_t)i, &names);
    }
    tl_sb_free(&names);
    tl_str_memo_free(&name_memo);
    tl_event_cols_free(&ec);
    return tb;
}

/* name cut to 256 characters (code points) + "..": the byte length kept */
static size_t cut_256(const char *s, int *cut)
{
    size_t i = 0, chars = 0;
    for (; s[i]; i++) {
        if (((unsigned char)s[i] & 0xC0) == 0x80) continue; /* a continuation byte */
        if (chars++ == 256) break;
    }
    *cut = s[i] != 0;
    return i;
}

void tl_launcher_table_add_modules(tl_table *tb, const tl_trace *t, const tl_launchers *l)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    size_t c_cs = tl_table_add_col(tb, "call_stack", TL_COL_STR);
    size_t c_pm = tl_table_add_col(tb, "parent_module", TL_COL_STR);
    tl_sbuf cs, frame, pm;
    tl_sb_init(&cs);
    tl_sb_init(&frame);
    tl_sb_init(&pm);
    for (size_t i = 0; i < l->n && i < tb->nrows; i++) {
        uint32_t u = l->v[i].uid;
        const char *nm = tl_es_name(es, u);
        tl_sb_clear(&cs);
        tl_sb_putc(&cs, '[');
        tl_sb_pystr(&cs, nm, strlen(nm));
        int have_parent = 0;
        tl_sb_clear(&pm);
        for (uint32_t p = tr->parent[u]; p != TL_NOUID; p = tr->parent[p]) {
            const char *pn = tl_es_name(es, p);
            int cut;
            size_t n = cut_256(pn, &cut);
            tl_sb_clear(&frame);
            tl_sb_putn(&frame, pn, n);
            if (cut) tl_sb_puts(&frame, "..");
            if (!frame.s || !strstr(frame.s, "nn.Module")) continue;
            tl_sb_puts(&cs, ", ");
            tl_sb_pystr(&cs, frame.s, frame.len);
            if (have_parent++) continue;
            /* re.sub(r"_\d+", "", name) */
            for (const char *c = frame.s; *c;) {
                if (c[0] == '_' && c[1] >= '0' && c[1] <= '9') {
                    for (c++; *c >= '0' && *c <= '9'; c++) {}
                    continue;
                }
                tl_sb_putc(&pm, *c++);
            }
        }
        tl_sb_putc(&cs, ']');
        tl_table_set_str(tb, c_cs, i, cs.s);
        tl_table_set_str(tb, c_pm, i, have_parent ? (pm.s ? pm.s : "") : "NA");
    }
    tl_sb_free(&cs);
    tl_sb_free(&frame);
    tl_sb_free(&pm);
}
