#include "table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/msort.h"
#include "../util/numsort.h"
#include "../util/pyfmt.h"
#include "../util/vec.h"

/* ------------------------------------------------------------ basics */

tl_table *tl_table_new(const char *name)
{
    tl_table *t = tl_xcalloc(1, sizeof *t);
    t->name = tl_xstrdup(name ? name : "");
    tl_strpool_init(&t->pool);
    atomic_init(&t->refs, 1);
    return t;
}

void tl_table_retain(tl_table *t) { atomic_fetch_add(&t->refs, 1); }

static void col_free(tl_col *c)
{
    free(c->name);
    free(c->v.i); /* union: one pointer */
    free(c->null);
}

void tl_table_free(tl_table *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1) return;
    for (size_t i = 0; i < t->ncols; i++) col_free(&t->cols[i]);
    free(t->cols);
    free(t->name);
    tl_strpool_free(&t->pool);
    free(t);
}

static size_t cell_size(tl_coltype ty)
{
    return ty == TL_COL_STR ? sizeof(uint32_t) : 8;
}

static void col_fill_null(tl_col *c, size_t from, size_t to)
{
    for (size_t r = from; r < to; r++) {
        if (c->type == TL_COL_STR) c->v.s[r] = TL_NULL_STR;
        else if (c->type == TL_COL_F64) c->v.f[r] = NAN;
        else {
            c->v.i[r] = 0;
            c->null[r] = 1;
        }
    }
}

static void col_reserve(tl_col *c, size_t cap)
{
    c->v.i = tl_xrealloc(c->v.i, (cap ? cap : 1) * cell_size(c->type));
    if (c->type == TL_COL_I64 || c->type == TL_COL_BOOL) c->null = tl_xrealloc(c->null, cap ? cap : 1);
}

size_t tl_table_add_col(tl_table *t, const char *name, tl_coltype type)
{
    TL_GROW(t->cols, t->capcols, t->ncols + 1);
    tl_col *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = tl_xstrdup(name);
    c->type = type;
    col_reserve(c, t->caprows);
    col_fill_null(c, 0, t->nrows);
    return t->ncols++;
}

long tl_table_col(const tl_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (!strcmp(t->cols[i].name, name)) return (long)i;
    return -1;
}

size_t tl_table_add_row(tl_table *t)
{
    if (t->nrows == t->caprows) {
        t->caprows = t->caprows ? t->caprows * 2 : 64;
        for (size_t i = 0; i < t->ncols; i++) col_reserve(&t->cols[i], t->caprows);
    }
    for (size_t i = 0; i < t->ncols; i++) col_fill_null(&t->cols[i], t->nrows, t->nrows + 1);
    return t->nrows++;
}

void tl_table_set_strn(tl_table *t, size_t col, size_t row, const char *s, size_t n)
{
    t->cols[col].v.s[row] = s ? tl_strpool_intern(&t->pool, s, n) : TL_NULL_STR;
}

void tl_table_set_str(tl_table *t, size_t col, size_t row, const char *s)
{
    tl_table_set_strn(t, col, row, s, s ? strlen(s) : 0);
}

void tl_table_set_i64(tl_table *t, size_t col, size_t row, int64_t v)
{
    t->cols[col].v.i[row] = v;
    t->cols[col].null[row] = 0;
}

void tl_table_set_bool(tl_table *t, size_t col, size_t row, int v) { tl_table_set_i64(t, col, row, v != 0); }

void tl_table_set_f64(tl_table *t, size_t col, size_t row, double v) { t->cols[col].v.f[row] = v; }

void tl_table_set_null(tl_table *t, size_t col, size_t row) { col_fill_null(&t->cols[col], row, row + 1); }

void tl_table_set_str_id(tl_table *t, size_t col, size_t row, uint32_t id) { t->cols[col].v.s[row] = id; }

void tl_table_set_str_memo(tl_table *t, size_t col, size_t row, tl_str_memo *m, const tl_strpool *src,
                           uint32_t src_id)
{
    if (src_id == TL_NULL_STR) {
        t->cols[col].v.s[row] = TL_NULL_STR;
        return;
    }
    if (src_id >= m->cap) {
        size_t nc = m->cap ? m->cap : 256;
        while (nc <= src_id) nc *= 2;
        m->id = tl_xrealloc(m->id, nc * sizeof *m->id);
        memset(m->id + m->cap, 0, (nc - m->cap) * sizeof *m->id);
        m->cap = nc;
    }
    if (!m->id[src_id]) {
        /* strlen, as tl_table_set_str measures the text */
        const char *text = tl_strpool_get(src, src_id);
        m->id[src_id] = tl_strpool_intern(&t->pool, text, strlen(text)) + 1;
    }
    t->cols[col].v.s[row] = m->id[src_id] - 1;
}

void tl_str_memo_free(tl_str_memo *m)
{
    free(m->id);
    m->id = NULL;
    m->cap = 0;
}

void tl_table_reserve(tl_table *t, size_t n)
{
    if (n <= t->caprows) return;
    t->caprows = n;
    for (size_t i = 0; i < t->ncols; i++) col_reserve(&t->cols[i], t->caprows);
}

size_t tl_table_add_rows(tl_table *t, size_t n)
{
    size_t first = t->nrows;
    tl_table_reserve(t, first + n);
    for (size_t i = 0; i < t->ncols; i++) col_fill_null(&t->cols[i], first, first + n);
    t->nrows = first + n;
    return first;
}

int tl_table_copy_cell(tl_table *dst, size_t dc, size_t dr, const tl_table *src, size_t sc, size_t sr)
{
    if (tl_table_is_null(src, sc, sr)) return 0;
    const tl_col *c = &src->cols[sc];
    if (c->type == TL_COL_STR) tl_table_set_str(dst, dc, dr, tl_table_str(src, sc, sr));
    else if (c->type == TL_COL_F64) tl_table_set_f64(dst, dc, dr, c->v.f[sr]);
    else tl_table_set_i64(dst, dc, dr, c->v.i[sr]);
    return 1;
}

const char *tl_table_str(const tl_table *t, size_t col, size_t row)
{
    const tl_col *c = &t->cols[col];
    if (c->type != TL_COL_STR || c->v.s[row] == TL_NULL_STR) return NULL;
    return tl_strpool_get(&t->pool, c->v.s[row]);
}

/* ----------------------------------------------------------- compare */

/* Compares two cells of the same column: missing last, strings by bytes. */
static int cell_cmp(const tl_table *t, size_t col, size_t a, size_t b)
{
    int na = tl_table_is_null(t, col, a), nb = tl_table_is_null(t, col, b);
    if (na || nb) return na - nb;
    const tl_col *c = &t->cols[col];
    switch (c->type) {
    case TL_COL_STR:
        if (c->v.s[a] == c->v.s[b]) return 0;
        return strcmp(tl_strpool_get(&t->pool, c->v.s[a]), tl_strpool_get(&t->pool, c->v.s[b]));
    case TL_COL_F64: return (c->v.f[a] > c->v.f[b]) - (c->v.f[a] < c->v.f[b]);
    default: return (c->v.i[a] > c->v.i[b]) - (c->v.i[a] < c->v.i[b]);
    }
}

static int cell_eq(const tl_table *t, size_t col, size_t a, size_t b)
{
    int na = tl_table_is_null(t, col, a), nb = tl_table_is_null(t, col, b);
    if (na || nb) return na && nb;
    const tl_col *c = &t->cols[col];
    if (c->type == TL_COL_STR) return c->v.s[a] == c->v.s[b];
    if (c->type == TL_COL_F64) return c->v.f[a] == c->v.f[b];
    return c->v.i[a] == c->v.i[b];
}

static uint64_t cell_hash(const tl_table *t, size_t col, size_t r)
{
    const tl_col *c = &t->cols[col];
    if (tl_table_is_null(t, col, r)) return 0x51ed27ull;
    uint64_t v;
    if (c->type == TL_COL_STR) v = c->v.s[r];
    else if (c->type == TL_COL_F64) {
        double d = c->v.f[r] == 0 ? 0.0 : c->v.f[r];
        memcpy(&v, &d, 8);
    } else v = (uint64_t)c->v.i[r];
    v *= 0x9E3779B97F4A7C15ull;
    return v ^ (v >> 29);
}

/* ---------------------------------------------------------- sorting */

typedef struct sort_ctx {
    const tl_table *t;
    const size_t *cols;
    const int *desc;
    size_t n;
} sort_ctx;

static int row_cmp(void *ctx, size_t a, size_t b)
{
    const sort_ctx *c = ctx;
    for (size_t k = 0; k < c->n; k++) {
        int na = tl_table_is_null(c->t, c->cols[k], a), nb = tl_table_is_null(c->t, c->cols[k], b);
        if (na || nb) {
            if (na != nb) return na - nb; /* missing last in both directions */
            continue;
        }
        int r = cell_cmp(c->t, c->cols[k], a, b);
        if (r) return c->desc[k] ? -r : r;
    }
    return 0;
}

void tl_table_keep_rows(tl_table *t, const size_t *idx, size_t n)
{
    for (size_t c = 0; c < t->ncols; c++) {
        tl_col *col = &t->cols[c];
        size_t w = cell_size(col->type);
        char *nv = tl_xmalloc((t->caprows ? t->caprows : 1) * w);
        uint8_t *nn = col->null ? tl_xmalloc(t->caprows ? t->caprows : 1) : NULL;
        for (size_t r = 0; r < n; r++) {
            memcpy(nv + r * w, (char *)col->v.i + idx[r] * w, w);
            if (nn) nn[r] = col->null[idx[r]];
        }
        free(col->v.i);
        free(col->null);
        col->v.i = (int64_t *)(void *)nv;
        col->null = nn;
    }
    t->nrows = n;
}

void tl_table_sort(tl_table *t, const tl_sortkey *keys, size_t n)
{
    size_t cols[16];
    int desc[16];
    size_t m = 0;
    for (size_t k = 0; k < n && m < 16; k++) {
        long c = tl_table_col(t, keys[k].col);
        if (c < 0) continue;
        cols[m] = (size_t)c;
        desc[m++] = keys[k].desc;
    }
    size_t *idx = tl_xmalloc((t->nrows + 1) * sizeof *idx);
    for (size_t r = 0; r < t->nrows; r++) idx[r] = r;
    sort_ctx c = {t, cols, desc, m};
    tl_msort(idx, t->nrows, row_cmp, &c);
    tl_table_keep_rows(t, idx, t->nrows);
    free(idx);
}

tl_table *tl_table_take(const tl_table *t, const char *name, const size_t *rows, size_t n)
{
    tl_table *d = tl_table_new(name);
    for (size_t c = 0; c < t->ncols; c++) tl_table_add_col(d, t->cols[c].name, t->cols[c].type);
    for (size_t i = 0; i < n; i++) {
        size_t r = rows[i], o = tl_table_add_row(d);
        for (size_t c = 0; c < t->ncols; c++) tl_table_copy_cell(d, c, o, t, c, r);
    }
    return d;
}

void tl_table_head(tl_table *t, size_t n)
{
    if (n < t->nrows) t->nrows = n;
}

void tl_table_select(tl_table *t, const char *const *names, size_t n)
{
    tl_col *nc = tl_xcalloc(n + 1, sizeof *nc);
    uint8_t *used = tl_xcalloc(t->ncols + 1, 1);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        long c = tl_table_col(t, names[k]);
        if (c < 0 || used[c]) continue;
        used[c] = 1;
        nc[m++] = t->cols[c];
    }
    for (size_t c = 0; c < t->ncols; c++)
        if (!used[c]) col_free(&t->cols[c]);
    free(t->cols);
    free(used);
    t->cols = nc;
    t->ncols = m;
    t->capcols = n + 1;
}

void tl_table_rename(tl_table *t, const char *from, const char *to)
{
    long c = tl_table_col(t, from);
    if (c < 0) return;
    free(t->cols[c].name);
    t->cols[c].name = tl_xstrdup(to);
}

void tl_table_drop(tl_table *t, const char *name)
{
    long c = tl_table_col(t, name);
    if (c < 0) return;
    col_free(&t->cols[c]);
    memmove(&t->cols[c], &t->cols[c + 1], (t->ncols - (size_t)c - 1) * sizeof *t->cols);
    t->ncols--;
}

void tl_table_move(tl_table *t, const char *name, size_t pos)
{
    long c = tl_table_col(t, name);
    if (c < 0 || pos >= t->ncols) return;
    tl_col tmp = t->cols[c];
    memmove(&t->cols[c], &t->cols[c + 1], (t->ncols - (size_t)c - 1) * sizeof *t->cols);
    memmove(&t->cols[pos + 1], &t->cols[pos], (t->ncols - 1 - pos) * sizeof *t->cols);
    t->cols[pos] = tmp;
}

/* ---------------------------------------------------------- group-by */

typedef struct group {
    size_t first;          /* first row */
    size_t *v;             /* the group's rows, in row order (a part of one array) */
    size_t n, cap;
} group;

static int rows_same_key(const tl_table *t, const size_t *kc, size_t nk, size_t a, size_t b)
{
    for (size_t k = 0; k < nk; k++)
        if (!cell_eq(t, kc[k], a, b)) return 0;
    return 1;
}

double tl_sum_compensated(const double *x, size_t n)
{
    double s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        double t = s + x[i];
        c += fabs(s) >= fabs(x[i]) ? (s - t) + x[i] : (x[i] - t) + s;
        s = t;
    }
    return s + c;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void agg_set(const tl_table *src, size_t col, const group *g, tl_sbuf *out)
{
    const char **v = tl_xmalloc((g->n + 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        const char *s = tl_table_str(src, col, g->v[i]);
        if (s) v[n++] = s;
    }
    qsort(v, n, sizeof *v, cmp_str);
    tl_sb_putc(out, '[');
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && !strcmp(v[i], v[i - 1])) continue;
        if (w++) tl_sb_puts(out, ", ");
        tl_sb_pystr(out, v[i], strlen(v[i]));
    }
    tl_sb_putc(out, ']');
    free(v);
}

static tl_coltype agg_type(const tl_table *src, long col, tl_aggfn fn)
{
    if (fn == TL_AGG_COUNT || fn == TL_AGG_SIZE) return TL_COL_I64;
    if (fn == TL_AGG_SET || fn == TL_AGG_CUSTOM) return TL_COL_STR;
    tl_coltype in = col >= 0 ? src->cols[col].type : TL_COL_F64;
    if (fn == TL_AGG_FIRST) return in;
    if ((fn == TL_AGG_SUM || fn == TL_AGG_MIN || fn == TL_AGG_MAX) && in == TL_COL_I64) return TL_COL_I64;
    return TL_COL_F64;
}

/* A group's numbers of one column, as the numeric aggregates read them:
 * filled once per (group, column) and kept in row order (the median
 * selects on a copy), so the statistics of one column (mean, median, std,
 * min, max, sum) read the rows once. */
typedef struct agg_buf {
    double *v, *scratch;
    long col; /* the column v holds (-1: none yet for this group) */
    size_t n;
    int64_t isum, imin, imax;
} agg_buf;

static void aggregate(const tl_table *src, tl_table *dst, size_t oc, size_t orow, const tl_agg *a, long col,
                      const group *g, agg_buf *ab)
{
    if (a->fn == TL_AGG_SIZE) {
        tl_table_set_i64(dst, oc, orow, (int64_t)g->n);
        return;
    }
    if (a->fn == TL_AGG_FIRST) {
        for (size_t i = 0; i < g->n; i++)
            if (tl_table_copy_cell(dst, oc, orow, src, (size_t)col, g->v[i])) return;
        return;
    }
    if (a->fn == TL_AGG_SET || a->fn == TL_AGG_CUSTOM) {
        tl_sbuf sb;
        tl_sb_init(&sb);
        int ok = 1;
        if (a->fn == TL_AGG_SET) agg_set(src, (size_t)col, g, &sb);
        else ok = a->custom(src, g->v, g->n, a->ctx, &sb);
        if (ok) tl_table_set_strn(dst, oc, orow, sb.s ? sb.s : "", sb.len);
        tl_sb_free(&sb);
        return;
    }
    const tl_col *c = &src->cols[col];
    size_t n = 0;
    if (a->fn == TL_AGG_COUNT) {
        for (size_t i = 0; i < g->n; i++) n += !tl_table_is_null(src, (size_t)col, g->v[i]);
        tl_table_set_i64(dst, oc, orow, (int64_t)n);
        return;
    }
    if (c->type == TL_COL_STR) return; /* numeric aggregates of text: missing */
    if (ab->col != col) {
        int64_t isum = 0, imin = INT64_MAX, imax = INT64_MIN;
        for (size_t i = 0; i < g->n; i++) {
            size_t r = g->v[i];
            if (tl_table_is_null(src, (size_t)col, r)) continue;
            if (c->type != TL_COL_F64) {
                isum = (int64_t)((uint64_t)isum + (uint64_t)c->v.i[r]); /* wraps as numpy's int64 sum does, no UB */
                if (c->v.i[r] < imin) imin = c->v.i[r];
                if (c->v.i[r] > imax) imax = c->v.i[r];
            }
            ab->v[n++] = tl_table_num(src, (size_t)col, r);
        }
        ab->col = col;
        ab->n = n;
        ab->isum = isum, ab->imin = imin, ab->imax = imax;
    }
    n = ab->n;
    const double *buf = ab->v;
    int64_t isum = ab->isum, imin = ab->imin, imax = ab->imax;
    int int_out = dst->cols[oc].type == TL_COL_I64;
    switch (a->fn) {
    case TL_AGG_SUM:
        if (int_out) tl_table_set_i64(dst, oc, orow, isum);
        else tl_table_set_f64(dst, oc, orow, tl_sum_compensated(buf, n));
        break;
    case TL_AGG_MEAN:
        if (n) tl_table_set_f64(dst, oc, orow, tl_sum_compensated(buf, n) / (double)n);
        break;
    case TL_AGG_MEDIAN:
        if (n) {
            double med;
            memcpy(ab->scratch, buf, n * sizeof *buf); /* buf stays in row order */
            tl_stats_f64(ab->scratch, n, NULL, NULL, &med);
            tl_table_set_f64(dst, oc, orow, med);
        }
        break;
    case TL_AGG_STD:
    case TL_AGG_STD0: {
        size_t ddof = a->fn == TL_AGG_STD ? 1 : 0;
        if (n > ddof) {
            double m = tl_sum_compensated(buf, n) / (double)n, ss = 0;
            for (size_t i = 0; i < n; i++) ss += (buf[i] - m) * (buf[i] - m);
            tl_table_set_f64(dst, oc, orow, sqrt(ss / (double)(n - ddof)));
        }
        break;
    }
    case TL_AGG_MIN:
    case TL_AGG_MAX:
        if (!n) break;
        if (int_out) {
            tl_table_set_i64(dst, oc, orow, a->fn == TL_AGG_MIN ? imin : imax);
        } else {
            double v = buf[0];
            for (size_t i = 1; i < n; i++) v = a->fn == TL_AGG_MIN ? fmin(v, buf[i]) : fmax(v, buf[i]);
            tl_table_set_f64(dst, oc, orow, v);
        }
        break;
    default: break;
    }
}

typedef struct gsort_ctx {
    const tl_table *t;
    const size_t *kc;
    size_t nk;
    const group *groups;
} gsort_ctx;

static int group_cmp(void *ctx, size_t ga, size_t gb)
{
    const gsort_ctx *c = ctx;
    size_t ra = c->groups[ga].first, rb = c->groups[gb].first;
    for (size_t k = 0; k < c->nk; k++) {
        int r = cell_cmp(c->t, c->kc[k], ra, rb);
        if (r) return r;
    }
    return 0;
}

tl_table *tl_table_group(const tl_table *src, const char *name, const tl_groupby *g)
{
    size_t kc[32], nk = 0;
    for (size_t k = 0; k < g->nkeys && nk < 32; k++) {
        long c = tl_table_col(src, g->keys[k]);
        if (c >= 0) kc[nk++] = (size_t)c;
    }
    /* hash rows into groups (first-appearance order) */
    size_t nslots = 64;
    while (nslots < src->nrows * 2) nslots *= 2;
    size_t *slots = tl_xmalloc(nslots * sizeof *slots);
    memset(slots, 0xff, nslots * sizeof *slots);
    TL_VEC(group) groups = {0};
    size_t *gid = tl_xmalloc((src->nrows + 1) * sizeof *gid); /* each row's group (SIZE_MAX: dropped) */
    size_t kept = 0;
    for (size_t r = 0; r < src->nrows; r++) {
        int skip = 0;
        uint64_t h = 0x12345;
        for (size_t k = 0; k < nk; k++) {
            if (g->dropna && tl_table_is_null(src, kc[k], r)) skip = 1;
            h = (h ^ cell_hash(src, kc[k], r)) * 0xbf58476d1ce4e5b9ull;
        }
        gid[r] = SIZE_MAX;
        if (skip) continue;
        size_t s = (size_t)(h ^ (h >> 31)) & (nslots - 1);
        while (slots[s] != SIZE_MAX && !rows_same_key(src, kc, nk, groups.v[slots[s]].first, r))
            s = (s + 1) & (nslots - 1);
        if (slots[s] == SIZE_MAX) {
            group ng = {r, NULL, 0, 0};
            slots[s] = groups.n;
            TL_PUSH(groups, ng);
        }
        gid[r] = slots[s];
        groups.v[slots[s]].n++;
        kept++;
    }
    free(slots);
    /* the groups' rows, in row order, in one array */
    size_t *members = tl_xmalloc((kept + 1) * sizeof *members);
    size_t off = 0;
    for (size_t i = 0; i < groups.n; i++) {
        groups.v[i].v = members + off;
        off += groups.v[i].n;
        groups.v[i].n = 0;
    }
    for (size_t r = 0; r < src->nrows; r++) {
        if (gid[r] == SIZE_MAX) continue;
        group *gr = &groups.v[gid[r]];
        gr->v[gr->n++] = r;
    }
    free(gid);
    size_t ng = groups.n;
    size_t *order = tl_xmalloc((ng + 1) * sizeof *order);
    for (size_t i = 0; i < ng; i++) order[i] = i;
    if (g->sort && ng > 1) {
        gsort_ctx c = {src, kc, nk, groups.v};
        tl_msort(order, ng, group_cmp, &c);
    }
    /* output */
    tl_table *dst = tl_table_new(name);
    for (size_t k = 0; k < nk; k++) tl_table_add_col(dst, src->cols[kc[k]].name, src->cols[kc[k]].type);
    long *acol = tl_xmalloc((g->naggs + 1) * sizeof *acol);
    for (size_t a = 0; a < g->naggs; a++) {
        acol[a] = g->aggs[a].col ? tl_table_col(src, g->aggs[a].col) : -1;
        tl_table_add_col(dst, g->aggs[a].out, agg_type(src, acol[a], g->aggs[a].fn));
    }
    size_t maxn = 1;
    for (size_t i = 0; i < ng; i++)
        if (groups.v[i].n > maxn) maxn = groups.v[i].n;
    agg_buf ab = {0};
    ab.v = tl_xmalloc(2 * maxn * sizeof *ab.v);
    ab.scratch = ab.v + maxn;
    for (size_t oi = 0; oi < ng; oi++) {
        const group *gr = &groups.v[order[oi]];
        size_t row = tl_table_add_row(dst);
        for (size_t k = 0; k < nk; k++) tl_table_copy_cell(dst, k, row, src, kc[k], gr->first);
        ab.col = -1; /* a new group */
        for (size_t a = 0; a < g->naggs; a++) {
            if (acol[a] < 0 && g->aggs[a].fn != TL_AGG_SIZE && g->aggs[a].fn != TL_AGG_CUSTOM) continue;
            aggregate(src, dst, nk + a, row, &g->aggs[a], acol[a], gr, &ab);
        }
    }
    free(ab.v);
    free(acol);
    free(members);
    free(groups.v);
    free(order);
    return dst;
}

/* ---------------------------------------------------------------- text */

void tl_table_cell_text(const tl_table *t, size_t col, size_t row, tl_sbuf *out)
{
    if (tl_table_is_null(t, col, row)) return;
    const tl_col *c = &t->cols[col];
    switch (c->type) {
    case TL_COL_STR: tl_sb_puts(out, tl_strpool_get(&t->pool, c->v.s[row])); break;
    case TL_COL_F64: tl_sb_pyfloat(out, c->v.f[row]); break;
    case TL_COL_BOOL: tl_sb_puts(out, c->v.i[row] ? "True" : "False"); break;
    case TL_COL_I64: tl_sb_i64(out, (long long)c->v.i[row]); break;
    }
}

/* CSV text is built in a buffer and handed to stdio in large blocks. */
enum { CSV_FLUSH = 1 << 20 };

static void csv_flush(tl_sbuf *b, FILE *f)
{
    if (b->len) fwrite(b->s, 1, b->len, f);
    tl_sb_clear(b);
}

static int csv_needs_quotes(const char *s, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (s[k] == ',' || s[k] == '"' || s[k] == '\n' || s[k] == '\r') return 1;
    return 0;
}

/* One CSV field, quoted (inner quotes doubled) when it holds , " \n or \r. */
static void csv_field(tl_sbuf *b, const char *s, size_t n)
{
    if (!csv_needs_quotes(s, n)) {
        tl_sb_putn(b, s, n);
        return;
    }
    tl_sb_putc(b, '"');
    const char *p = s, *end = s + n;
    while (p < end) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        if (!q) {
            tl_sb_putn(b, p, (size_t)(end - p));
            break;
        }
        tl_sb_putn(b, p, (size_t)(q - p + 1));
        tl_sb_putc(b, '"');
        p = q + 1;
    }
    tl_sb_putc(b, '"');
}

/* Whether a text needs quoting, decided once per distinct pool text (a long
 * table repeats few texts): 0 unknown, 1 plain, 2 quoted. */
static void csv_pool_field(tl_sbuf *b, const tl_strpool *p, uint32_t id, uint8_t *quote)
{
    const char *s = tl_strpool_get(p, id);
    size_t n = tl_strpool_len(p, id);
    if (quote[id] == 0) quote[id] = csv_needs_quotes(s, n) ? 2 : 1;
    if (quote[id] == 1) tl_sb_putn(b, s, n);
    else csv_field(b, s, n);
}

void tl_table_write_csv(const tl_table *t, FILE *f)
{
    tl_sbuf out, sb;
    tl_sb_init(&out);
    tl_sb_init(&sb);
    uint8_t *quote = tl_xcalloc((size_t)t->pool.n + 1, 1);
    for (size_t c = 0; c < t->ncols; c++) {
        if (c) tl_sb_putc(&out, ',');
        csv_field(&out, t->cols[c].name, strlen(t->cols[c].name));
    }
    tl_sb_putc(&out, '\n');
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (c) tl_sb_putc(&out, ',');
            const tl_col *col = &t->cols[c];
            if (col->type == TL_COL_STR && !tl_table_is_null(t, c, r)) {
                /* text straight from the pool, no copy */
                csv_pool_field(&out, &t->pool, col->v.s[r], quote);
                continue;
            }
            tl_sb_clear(&sb);
            tl_table_cell_text(t, c, r, &sb);
            if (sb.len) csv_field(&out, sb.s, sb.len);
        }
        tl_sb_putc(&out, '\n');
        if (out.len >= CSV_FLUSH) csv_flush(&out, f);
    }
    csv_flush(&out, f);
    free(quote);
    tl_sb_free(&out);
    tl_sb_free(&sb);
}
