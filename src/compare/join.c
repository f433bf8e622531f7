#include "join.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/msort.h"
#include "../util/sbuf.h"
#include "../util/vec.h"

#define NONE SIZE_MAX

/* One key cell of the combined rows (left rows, then right rows), in the
 * key column's result type. */
typedef struct keyval {
    uint8_t na;
    int64_t i;   /* I64, BOOL */
    double d;    /* F64 */
    const char *s; /* STR */
} keyval;

typedef struct keycol {
    tl_coltype type;
    keyval *v;
} keycol;

typedef struct join_ctx {
    const keycol *k;
    size_t nk;
    TL_VEC(char *) owned; /* texts of numeric cells in a text key column */
} join_ctx;

static int has_values(const tl_table *t, size_t c)
{
    for (size_t r = 0; r < t->nrows; r++)
        if (!tl_table_is_null(t, c, r)) return 1;
    return 0;
}

static tl_coltype key_type(const tl_table *l, size_t lc, const tl_table *r, size_t rc)
{
    tl_coltype lt = l->cols[lc].type, rt = r->cols[rc].type;
    int lv = has_values(l, lc), rv = has_values(r, rc);
    if (!lv && !rv) return lt == rt ? lt : TL_COL_F64;
    if (!lv) return rt;
    if (!rv) return lt;
    if (lt == rt) return lt;
    if (lt == TL_COL_STR || rt == TL_COL_STR) return TL_COL_STR;
    return TL_COL_F64;
}

static void fill_keys(join_ctx *j, keyval *out, tl_coltype ty, const tl_table *t, size_t c)
{
    tl_sbuf sb;
    tl_sb_init(&sb);
    for (size_t r = 0; r < t->nrows; r++) {
        keyval *v = &out[r];
        memset(v, 0, sizeof *v);
        if (tl_table_is_null(t, c, r)) {
            v->na = 1;
            continue;
        }
        const tl_col *col = &t->cols[c];
        switch (ty) {
        case TL_COL_STR:
            if (col->type == TL_COL_STR) {
                v->s = tl_table_str(t, c, r);
            } else {
                tl_sb_clear(&sb);
                tl_table_cell_text(t, c, r, &sb);
                char *s = tl_xstrdup(sb.s ? sb.s : "");
                TL_PUSH(j->owned, s);
                v->s = s;
            }
            break;
        case TL_COL_I64:
        case TL_COL_BOOL: v->i = col->v.i[r]; break;
        case TL_COL_F64: v->d = tl_table_num(t, c, r); break;
        }
    }
    tl_sb_free(&sb);
}

static int keyval_cmp(tl_coltype ty, const keyval *a, const keyval *b)
{
    if (a->na || b->na) return (int)a->na - (int)b->na; /* missing last, equal to missing */
    switch (ty) {
    case TL_COL_STR: return strcmp(a->s, b->s);
    case TL_COL_F64: return (a->d > b->d) - (a->d < b->d);
    default: return (a->i > b->i) - (a->i < b->i);
    }
}

static int row_cmp(void *ctx, size_t a, size_t b)
{
    const join_ctx *j = ctx;
    for (size_t k = 0; k < j->nk; k++) {
        int c = keyval_cmp(j->k[k].type, &j->k[k].v[a], &j->k[k].v[b]);
        if (c) return c;
    }
    return 0;
}

static void set_key(tl_table *t, size_t c, size_t r, tl_coltype ty, const keyval *v)
{
    if (v->na) return;
    switch (ty) {
    case TL_COL_STR: tl_table_set_str(t, c, r, v->s); break;
    case TL_COL_I64: tl_table_set_i64(t, c, r, v->i); break;
    case TL_COL_BOOL: tl_table_set_bool(t, c, r, (int)v->i); break;
    case TL_COL_F64: tl_table_set_f64(t, c, r, v->d); break;
    }
}

/* Copies one side's non-key columns into the result rows `rows` (NONE =
 * no row of this side). */
static void copy_side(tl_table *out, const tl_table *t, const uint8_t *is_key, const size_t *rows, size_t n)
{
    int gaps = 0;
    for (size_t i = 0; i < n && !gaps; i++) gaps = rows[i] == NONE;
    for (size_t c = 0; c < t->ncols; c++) {
        if (is_key[c]) continue;
        tl_coltype ty = t->cols[c].type;
        int widen = ty == TL_COL_I64 && gaps;
        size_t oc = tl_table_add_col(out, t->cols[c].name, widen ? TL_COL_F64 : ty);
        for (size_t i = 0; i < n; i++) {
            if (rows[i] == NONE) continue;
            if (widen) {
                if (!tl_table_is_null(t, c, rows[i])) tl_table_set_f64(out, oc, i, (double)t->cols[c].v.i[rows[i]]);
            } else {
                tl_table_copy_cell(out, oc, i, t, c, rows[i]);
            }
        }
    }
}

tl_table *tl_join_outer(const tl_table *l, const tl_table *r, const char *const *keys, size_t nkeys,
                        const char *name, tl_error *err)
{
    size_t *lk = tl_xcalloc(nkeys + 1, sizeof *lk), *rk = tl_xcalloc(nkeys + 1, sizeof *rk);
    for (size_t k = 0; k < nkeys; k++) {
        long a = tl_table_col(l, keys[k]), b = tl_table_col(r, keys[k]);
        if (a < 0 || b < 0) {
            tl_error_set(err, "join: no key column '%s' in %s", keys[k], a < 0 ? l->name : r->name);
            free(lk);
            free(rk);
            return NULL;
        }
        lk[k] = (size_t)a;
        rk[k] = (size_t)b;
    }
    size_t nl = l->nrows, nr = r->nrows, n = nl + nr;
    join_ctx j = {0};
    keycol *kc = tl_xcalloc(nkeys + 1, sizeof *kc);
    for (size_t k = 0; k < nkeys; k++) {
        kc[k].type = key_type(l, lk[k], r, rk[k]);
        kc[k].v = tl_xcalloc(n + 1, sizeof *kc[k].v);
        fill_keys(&j, kc[k].v, kc[k].type, l, lk[k]);
        fill_keys(&j, kc[k].v + nl, kc[k].type, r, rk[k]);
    }
    j.k = kc;
    j.nk = nkeys;

    /* combined rows sorted stably by key: each group lists its left rows
     * (in order), then its right rows (in order) */
    size_t *idx = tl_xmalloc((n + 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    tl_msort(idx, n, row_cmp, &j);
    TL_VEC(size_t) li = {0}, ri = {0};
    for (size_t g = 0; g < n;) {
        size_t e = g + 1;
        while (e < n && row_cmp(&j, idx[g], idx[e]) == 0) e++;
        size_t m = g;
        while (m < e && idx[m] < nl) m++; /* [g, m) left rows, [m, e) right rows */
        if (m == g || m == e) {
            for (size_t x = g; x < e; x++) {
                TL_PUSH(li, idx[x] < nl ? idx[x] : NONE);
                TL_PUSH(ri, idx[x] < nl ? NONE : idx[x] - nl);
            }
        } else {
            for (size_t a = g; a < m; a++)
                for (size_t b = m; b < e; b++) {
                    TL_PUSH(li, idx[a]);
                    TL_PUSH(ri, idx[b] - nl);
                }
        }
        g = e;
    }
    size_t nout = li.n;

    tl_table *out = tl_table_new(name);
    for (size_t i = 0; i < nout; i++) tl_table_add_row(out);
    for (size_t k = 0; k < nkeys; k++) {
        size_t oc = tl_table_add_col(out, keys[k], kc[k].type);
        for (size_t i = 0; i < nout; i++)
            set_key(out, oc, i, kc[k].type, li.v[i] != NONE ? &kc[k].v[li.v[i]] : &kc[k].v[nl + ri.v[i]]);
    }
    uint8_t *lkey = tl_xcalloc(l->ncols + 1, 1), *rkey = tl_xcalloc(r->ncols + 1, 1);
    for (size_t k = 0; k < nkeys; k++) lkey[lk[k]] = rkey[rk[k]] = 1;
    copy_side(out, l, lkey, li.v, nout);
    copy_side(out, r, rkey, ri.v, nout);

    free(lkey);
    free(rkey);
    free(li.v);
    free(ri.v);
    free(idx);
    for (size_t k = 0; k < nkeys; k++) free(kc[k].v);
    free(kc);
    for (size_t i = 0; i < j.owned.n; i++) free(j.owned.v[i]);
    free(j.owned.v);
    free(lk);
    free(rk);
    return out;
}
