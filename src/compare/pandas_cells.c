#include "pandas_cells.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/strpool.h"
#include "../util/vec.h"

/* ------------------------------------------------------------ text values */

int tl_pd_is_na(const char *s)
{
    static const char *const na[] = {"",     "#N/A",  "#N/A N/A", "#NA",     "-1.#IND", "-1.#QNAN", "-NaN",
                                     "-nan", "1.#IND", "1.#QNAN", "<NA>",    "N/A",     "NA",       "NULL",
                                     "NaN",  "None",  "n/a",      "nan",     "null"};
    for (size_t i = 0; i < sizeof na / sizeof *na; i++)
        if (!strcmp(s, na[i])) return 1;
    return 0;
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v') s++;
    return s;
}

/* [ws][+-]digits[ws] fitting int64. */
int tl_pd_parse_int(const char *s, int64_t *out)
{
    s = skip_ws(s);
    int neg = *s == '-';
    if (*s == '+' || *s == '-') s++;
    if (*s < '0' || *s > '9') return 0;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (lim - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (*skip_ws(s)) return 0;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

/* [ws][+-](digits[.digits]|.digits)[(e|E)[+-]digits][ws], or [+-]inf/infinity. */
int tl_pd_parse_float(const char *s, double *out)
{
    const char *b = skip_ws(s), *p = b;
    if (*p == '+' || *p == '-') p++;
    if (!strncasecmp(p, "inf", 3)) {
        const char *q = p + 3;
        if (!strncasecmp(q, "inity", 5)) q += 5;
        if (*skip_ws(q)) return 0;
        *out = *b == '-' ? -INFINITY : INFINITY;
        return 1;
    }
    size_t digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (*p < '0' || *p > '9') return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*skip_ws(p)) return 0;
    *out = strtod(b, NULL); /* correctly rounded; overflow gives +-inf as pandas */
    return 1;
}

int tl_pd_parse_bool(const char *s, int *out)
{
    if (!strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "true")) return *out = 1, 1;
    if (!strcmp(s, "False") || !strcmp(s, "FALSE") || !strcmp(s, "false")) return *out = 0, 1;
    return 0;
}

/* ------------------------------------------------------------ typing */

/* What one cell is to the typing: a text cell is read as its value. */
enum { V_MISSING, V_INT, V_FLOAT, V_BOOL, V_BOOL_TEXT, V_TEXT };

static int value_class(const tl_pcell *c, const char *text)
{
    switch (c->kind) {
    case TL_PC_INT: return V_INT;
    case TL_PC_FLOAT: return V_FLOAT;
    case TL_PC_BOOL: return V_BOOL;
    case TL_PC_TEXT: break;
    default: return V_MISSING;
    }
    const char *s = text + c->v.off;
    int64_t i;
    double d;
    int b;
    if (tl_pd_is_na(s)) return V_MISSING;
    if (tl_pd_parse_int(s, &i)) return V_INT;
    if (tl_pd_parse_float(s, &d)) return V_FLOAT;
    return tl_pd_parse_bool(s, &b) ? V_BOOL_TEXT : V_TEXT;
}

tl_coltype tl_pd_column_type(const tl_pcell *cells, size_t nrows, size_t ncols, size_t col, const char *text)
{
    int seen[V_TEXT + 1] = {0};
    for (size_t r = 0; r < nrows; r++) {
        int k = value_class(&cells[r * ncols + col], text);
        seen[k] = 1;
        if (k == V_TEXT) return TL_COL_STR;
    }
    if (seen[V_BOOL_TEXT]) /* the numeric reading failed: booleans or text */
        return seen[V_INT] || seen[V_FLOAT] ? TL_COL_STR : TL_COL_BOOL;
    if (seen[V_MISSING] || seen[V_FLOAT]) return TL_COL_F64;
    if (seen[V_INT]) return TL_COL_I64;
    return seen[V_BOOL] ? TL_COL_BOOL : TL_COL_F64;
}

void tl_pd_cell_text(const tl_pcell *c, const char *text, tl_sbuf *out)
{
    switch (c->kind) {
    case TL_PC_TEXT: tl_sb_putn(out, text + c->v.off, c->len); break;
    case TL_PC_INT: tl_sb_i64(out, (long long)c->v.i); break;
    case TL_PC_BOOL: tl_sb_puts(out, c->v.i ? "True" : "False"); break;
    case TL_PC_FLOAT:
        /* an integral float is a Python int there (pandas' reader makes it
         * one): every digit */
        if (isfinite(c->v.f) && c->v.f == floor(c->v.f)) tl_sb_printf(out, "%.0f", c->v.f);
        else tl_sb_pyfloat(out, c->v.f);
        break;
    default: break;
    }
}

void tl_pd_fill_column(tl_table *t, size_t col, const tl_pcell *cells, size_t nrows, size_t ncols,
                       const char *text)
{
    tl_coltype ty = t->cols[col].type;
    tl_sbuf b;
    tl_sb_init(&b);
    for (size_t r = 0; r < nrows; r++) {
        const tl_pcell *c = &cells[r * ncols + col];
        if (value_class(c, text) == V_MISSING) continue; /* rows start missing */
        const char *s = c->kind == TL_PC_TEXT ? text + c->v.off : NULL;
        int64_t i = c->v.i;
        double d = c->kind == TL_PC_FLOAT ? c->v.f : (double)c->v.i;
        int bo = (int)c->v.i;
        switch (ty) {
        case TL_COL_I64:
            if (s) tl_pd_parse_int(s, &i);
            tl_table_set_i64(t, col, r, i);
            break;
        case TL_COL_F64:
            if (s && !tl_pd_parse_float(s, &d)) d = NAN;
            tl_table_set_f64(t, col, r, d);
            break;
        case TL_COL_BOOL:
            if (s) tl_pd_parse_bool(s, &bo);
            tl_table_set_bool(t, col, r, bo);
            break;
        case TL_COL_STR:
            if (s) {
                tl_table_set_strn(t, col, r, s, c->len);
            } else {
                tl_sb_clear(&b);
                tl_pd_cell_text(c, text, &b);
                tl_table_set_strn(t, col, r, b.s, b.len);
            }
            break;
        }
    }
    tl_sb_free(&b);
}

/* ------------------------------------------------------------ header */

/* Per distinct name (its pool id): how often it is in the header as it
 * stands, and pandas' running count. */
typedef struct name_counts {
    tl_strpool pool;
    TL_VEC(size_t) present, counts;
} name_counts;

static uint32_t name_id(name_counts *nc, const char *s)
{
    uint32_t id = tl_strpool_intern(&nc->pool, s, strlen(s));
    while (nc->present.n <= id) {
        TL_PUSH(nc->present, 0);
        TL_PUSH(nc->counts, 0);
    }
    return id;
}

/* pandas' _infer_columns: named columns first, then the unnamed ones; a
 * repeat of `old` becomes "old.k" for the first k not yet counted and not
 * a name in the header as it stands. */
char **tl_pd_header_names(const tl_pcell *h, size_t n, const char *text)
{
    char **names = tl_xcalloc(n + 1, sizeof *names);
    int *unnamed = tl_xcalloc(n + 1, sizeof *unnamed);
    tl_sbuf b;
    tl_sb_init(&b);
    for (size_t i = 0; i < n; i++) {
        tl_pd_cell_text(&h[i], text, &b);
        if (b.len == 0) {
            tl_sb_printf(&b, "Unnamed: %zu", i);
            unnamed[i] = 1;
        }
        names[i] = tl_sb_take(&b);
    }
    name_counts nc = {0};
    tl_strpool_init(&nc.pool);
    for (size_t i = 0; i < n; i++) {
        uint32_t id = name_id(&nc, names[i]); /* may grow nc.present */
        nc.present.v[id]++;
    }
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            if (unnamed[i] != pass) continue;
            uint32_t old = name_id(&nc, names[i]), id = old;
            size_t cur = nc.counts.v[old];
            char *col = NULL;
            while (cur > 0) {
                nc.counts.v[old] = cur + 1;
                tl_sb_printf(&b, "%s.%zu", names[i], cur);
                free(col);
                col = tl_sb_take(&b);
                id = name_id(&nc, col);
                cur = nc.present.v[id] > 0 ? cur + 1 : nc.counts.v[id];
            }
            if (col) {
                nc.present.v[old]--;
                nc.present.v[id]++;
                free(names[i]);
                names[i] = col;
            }
            nc.counts.v[id] = cur + 1;
        }
    tl_strpool_free(&nc.pool);
    free(nc.present.v);
    free(nc.counts.v);
    free(unnamed);
    tl_sb_free(&b);
    return names;
}
