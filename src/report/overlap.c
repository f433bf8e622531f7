#include "overlap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/msort.h"
#include "../util/strpool.h"
#include "../util/vec.h"
#include "launchers.h"

void tl_ovpool_free(tl_ovpool *p)
{
    free(p->v);
    memset(p, 0, sizeof *p);
}

double tl_py_round2(double x)
{
    if (!isfinite(x)) return x;
    /* printf rounds the exact binary value, ties to even: Python's round() */
    char buf[512];
    snprintf(buf, sizeof buf, "%.2f", x);
    return strtod(buf, NULL);
}

double tl_np_round2(double x) { return nearbyint(x * 100.0) / 100.0; }

/* one name's overlap entries while an op is scanned */
typedef struct ovacc {
    uint32_t name, uid;
    double dur_sum, pct_sum;
    size_t n;
} ovacc;

void tl_ovinfo_compute(const tl_event_store *es, const tl_overlaps *ov, const uint32_t *kernels, size_t nk,
                       tl_ovpool *pool, tl_ovinfo *out)
{
    out->first = (uint32_t)pool->n;
    out->n = 0;
    out->pct = NAN;
    if (!ov || !nk) return;
    int64_t total = tl_busy_time(es, kernels, nk);
    TL_VEC(ovacc) acc = {0};
    TL_VEC(tl_interval) iv = {0};
    int64_t covered = 0;
    for (size_t i = 0; i < nk; i++) {
        uint32_t k = kernels[i];
        const uint32_t *list;
        size_t nl = tl_overlaps_of(ov, k, &list);
        int64_t ks = es->ts[k], ke = tl_es_end(es, k);
        iv.n = 0;
        for (size_t j = 0; j < nl; j++) {
            uint32_t o = list[j];
            int64_t lo = ks > es->ts[o] ? ks : es->ts[o];
            int64_t hi = ke < tl_es_end(es, o) ? ke : tl_es_end(es, o);
            int64_t common = hi > lo ? hi - lo : 0;
            double pct = total > 0 ? tl_py_round2((double)common / (double)total) : 0.0;
            size_t a = 0;
            while (a < acc.n && acc.v[a].name != es->name[o]) a++;
            if (a == acc.n) {
                ovacc na = {es->name[o], o, 0, 0, 0};
                TL_PUSH(acc, na);
            }
            acc.v[a].dur_sum += (double)es->dur[o] / 1000.0;
            acc.v[a].pct_sum += pct;
            acc.v[a].n++;
            if (hi > lo) {
                tl_interval x = {lo, hi};
                TL_PUSH(iv, x);
            }
        }
        size_t m = tl_merge(iv.v, iv.n);
        covered += tl_length(iv.v, m);
    }
    for (size_t a = 0; a < acc.n; a++) {
        tl_ovdetail d = {acc.v[a].uid, tl_py_round2(acc.v[a].dur_sum / (double)acc.v[a].n),
                         tl_py_round2(acc.v[a].pct_sum / (double)acc.v[a].n)};
        TL_PUSH(*pool, d);
    }
    out->n = (uint32_t)acc.n;
    if (acc.n) out->pct = total > 0 ? tl_py_round2((double)covered / (double)total) : 0.0;
    free(acc.v);
    free(iv.v);
}

int tl_ovinfo_names_text(const tl_event_store *es, const tl_ovpool *pool, const tl_ovinfo *info, tl_sbuf *out)
{
    if (!info || !info->n) return 0;
    tl_sb_putc(out, '[');
    for (uint32_t i = 0; i < info->n; i++) {
        const char *nm = tl_es_name(es, pool->v[info->first + i].uid);
        if (i) tl_sb_puts(out, ", ");
        tl_sb_pystr(out, nm, strlen(nm));
    }
    tl_sb_putc(out, ']');
    return 1;
}

/* ----------------------------------------------- details summaries */

int tl_agg_overlap_stats(const tl_table *src, const size_t *rows, size_t n, void *ctx, tl_sbuf *out)
{
    const tl_ovstats_ctx *c = ctx;
    long col = tl_table_col(src, c->col);
    /* each row's details as kernel-stats items (None: an empty row) */
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        if (col >= 0 && !tl_table_is_null(src, (size_t)col, rows[i]))
            total += c->infos[src->cols[col].v.i[rows[i]]].n;
    tl_kitem *items = tl_xmalloc((total + 1) * sizeof *items);
    tl_krow *kr = tl_xcalloc(n + 1, sizeof *kr);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (col < 0 || tl_table_is_null(src, (size_t)col, rows[i])) continue;
        const tl_ovinfo *inf = &c->infos[src->cols[col].v.i[rows[i]]];
        kr[i].v = items + o;
        kr[i].n = (uint32_t)inf->n;
        for (size_t p = 0; p < inf->n; p++, o++) {
            const tl_ovdetail *d = &c->pool->v[inf->first + p];
            items[o] = (tl_kitem){d->uid, d->dur_us, d->pct};
        }
    }
    int r = tl_kstats_render(c->t, kr, n, c->trunc, 1, out);
    free(kr);
    free(items);
    return r;
}

/* ------------------------------------------------ kl_overlap sheets */

void tl_kl_sort(tl_table *t, const char *const *keys, size_t nk, const char *time_col, const char *uid_col)
{
    long tc = tl_table_col(t, time_col), uc = tl_table_col(t, uid_col);
    if (tc < 0 || uc < 0 || !t->nrows) return;
    long *kc = tl_xmalloc((nk + 1) * sizeof *kc);
    for (size_t k = 0; k < nk; k++) kc[k] = tl_table_col(t, keys[k]);
    /* each row's group: the interned text of its key tuple (each value's
     * str(), length-prefixed so that distinct tuples never collide) */
    tl_strpool groups;
    tl_strpool_init(&groups);
    uint32_t *gid = tl_xmalloc(t->nrows * sizeof *gid);
    tl_sbuf key, cell;
    tl_sb_init(&key);
    tl_sb_init(&cell);
    for (size_t r = 0; r < t->nrows; r++) {
        tl_sb_clear(&key);
        for (size_t k = 0; k < nk; k++) {
            tl_sb_clear(&cell);
            if (kc[k] < 0 || tl_table_is_null(t, (size_t)kc[k], r)) tl_sb_puts(&cell, "None");
            else tl_table_cell_text(t, (size_t)kc[k], r, &cell);
            tl_sb_printf(&key, "%zu:", cell.len);
            tl_sb_putn(&key, cell.s ? cell.s : "", cell.len);
        }
        gid[r] = tl_strpool_intern(&groups, key.s ? key.s : "", key.len);
    }
    tl_sb_free(&key);
    tl_sb_free(&cell);
    size_t ng = groups.n;
    tl_strpool_free(&groups);
    double *gtot = tl_xcalloc(ng + 1, sizeof *gtot);
    int64_t *gmin = tl_xmalloc((ng + 1) * sizeof *gmin);
    for (size_t g = 0; g < ng; g++) gmin[g] = INT64_MAX;
    for (size_t r = 0; r < t->nrows; r++) {
        double v = tl_table_num(t, (size_t)tc, r);
        if (!isnan(v)) gtot[gid[r]] += v;
        double u = tl_table_num(t, (size_t)uc, r);
        if (!isnan(u) && (int64_t)u < gmin[gid[r]]) gmin[gid[r]] = (int64_t)u;
    }
    size_t ct = tl_table_add_col(t, "__kl_gtot", TL_COL_F64), cm = tl_table_add_col(t, "__kl_gmin", TL_COL_I64);
    for (size_t r = 0; r < t->nrows; r++) {
        tl_table_set_f64(t, ct, r, gtot[gid[r]]);
        tl_table_set_i64(t, cm, r, gmin[gid[r]]);
    }
    free(gid);
    free(gtot);
    free(gmin);
    free(kc);
    tl_sortkey sk[4] = {{"__kl_gtot", 1}, {"__kl_gmin", 0}, {time_col, 1}, {uid_col, 0}};
    tl_table_sort(t, sk, 4);
    tl_table_drop(t, "__kl_gtot");
    tl_table_drop(t, "__kl_gmin");
}

void tl_kl_round(tl_table *t)
{
    long mean = tl_table_col(t, "overlap_pct_mean");
    for (size_t c = 0; c < t->ncols; c++) {
        if (!strstr(t->cols[c].name, "overlap_pct") || t->cols[c].type != TL_COL_F64) continue;
        size_t len = strlen(t->cols[c].name);
        int is_std = len >= 4 && !strcmp(t->cols[c].name + len - 4, "_std");
        for (size_t r = 0; r < t->nrows; r++) {
            double v = t->cols[c].v.f[r];
            if (!isnan(v)) tl_table_set_f64(t, c, r, tl_np_round2(v));
            else if (is_std && mean >= 0 && !isnan(tl_table_num(t, (size_t)mean, r))) tl_table_set_f64(t, c, r, 0.0);
        }
    }
}
