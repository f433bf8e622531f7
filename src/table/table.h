/* table.h — the columnar Table every report sheet is made of.
 * A table owns its columns and one string pool: text cells are ids into the
 * pool, so a raw per-event table repeats no string. Operations: append rows,
 * group-by with pandas-compatible aggregates (sum, mean, median, std with
 * ddof 1 or 0, min, max, count, first, sorted set, custom), stable multi-key
 * sort (missing values last), derived columns, joins, and rendering of a
 * cell as pandas' to_csv writes it (or a preview of the table for people). A table is not shared between threads while it
 * is being built. */
#ifndef TL_TABLE_H
#define TL_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <math.h>
#include <stdio.h>

#include "../util/sbuf.h"
#include "../util/strpool.h"

typedef enum tl_coltype { TL_COL_STR, TL_COL_I64, TL_COL_F64, TL_COL_BOOL } tl_coltype;

#define TL_NULL_STR UINT32_MAX

typedef struct tl_col {
    char *name;
    tl_coltype type;
    union {
        uint32_t *s;   /* STR: pool ids, TL_NULL_STR = missing */
        int64_t *i;    /* I64, BOOL */
        double *f;     /* F64: NaN = missing */
    } v;
    uint8_t *null;     /* I64 / BOOL: 1 = missing */
} tl_col;

typedef struct tl_table {
    char *name;
    tl_col *cols;
    size_t ncols, capcols;
    size_t nrows, caprows;
    tl_strpool pool;
    atomic_int refs;   /* shared read-only tables (Lua states on several threads) */
} tl_table;

tl_table *tl_table_new(const char *name);
/* Drops one reference (the creator holds the first); frees at zero. */
void tl_table_free(tl_table *t);
/* Adds a reference: the table is then shared and must not be modified. */
void tl_table_retain(tl_table *t);
/* Adds a column (all missing for existing rows); returns its index. */
size_t tl_table_add_col(tl_table *t, const char *name, tl_coltype type);
/* Index of a column by name, or -1. */
long tl_table_col(const tl_table *t, const char *name);
/* Appends one row of missing values; returns its index. */
size_t tl_table_add_row(tl_table *t);

void tl_table_set_str(tl_table *t, size_t col, size_t row, const char *s); /* NULL = missing */
void tl_table_set_strn(tl_table *t, size_t col, size_t row, const char *s, size_t n);
void tl_table_set_i64(tl_table *t, size_t col, size_t row, int64_t v);
void tl_table_set_f64(tl_table *t, size_t col, size_t row, double v);
void tl_table_set_bool(tl_table *t, size_t col, size_t row, int v);
void tl_table_set_null(tl_table *t, size_t col, size_t row);

/* Sets a text cell to an id of t's own pool (one tl_strpool_intern(&t->pool,
 * ...) returned). */
void tl_table_set_str_id(tl_table *t, size_t col, size_t row, uint32_t id);
/* A memo from the ids of another string pool (the trace's names, rendered
 * args) to the ids of one table's pool: a table filled from that pool
 * interns each distinct string once instead of once per cell. One memo
 * serves every column of its table; zero-initialise it, free it with
 * tl_str_memo_free. */
typedef struct tl_str_memo {
    uint32_t *id;   /* source id -> table id + 1, 0 = not yet */
    size_t cap;
} tl_str_memo;
/* Sets cell (col, row) to the string src_id of src (TL_NULL_STR: missing). */
void tl_table_set_str_memo(tl_table *t, size_t col, size_t row, tl_str_memo *m, const tl_strpool *src,
                           uint32_t src_id);
void tl_str_memo_free(tl_str_memo *m);
/* Makes room for n rows in all, so that a table whose size is known (or
 * bounded) is not regrown row by row. */
void tl_table_reserve(tl_table *t, size_t n);
/* Appends n rows of missing values (a column at a time); returns the index
 * of the first. */
size_t tl_table_add_rows(tl_table *t, size_t n);

/* (inline: every aggregate and comparison asks it per cell) */
static inline int tl_table_is_null(const tl_table *t, size_t col, size_t row)
{
    const tl_col *c = &t->cols[col];
    switch (c->type) {
    case TL_COL_STR: return c->v.s[row] == TL_NULL_STR;
    case TL_COL_F64: return c->v.f[row] != c->v.f[row]; /* NaN */
    default: return c->null[row];
    }
}
/* Copies cell (sc, sr) of src into cell (dc, dr) of dst (columns of the
 * same type); returns 0, leaving dst's cell alone, when the source is null. */
int tl_table_copy_cell(tl_table *dst, size_t dc, size_t dr, const tl_table *src, size_t sc, size_t sr);
const char *tl_table_str(const tl_table *t, size_t col, size_t row); /* NULL when missing */
/* Numeric value of any non-string cell (NaN when missing). */
static inline double tl_table_num(const tl_table *t, size_t col, size_t row)
{
    const tl_col *c = &t->cols[col];
    if (c->type == TL_COL_STR) return (double)NAN;
    if (c->type == TL_COL_F64) return c->v.f[row] != c->v.f[row] ? (double)NAN : c->v.f[row];
    return c->null[row] ? (double)NAN : (double)c->v.i[row];
}

/* ---- group-by ---- */
typedef enum tl_aggfn {
    TL_AGG_SUM,      /* pandas sum: 0 for no values */
    TL_AGG_MEAN,
    TL_AGG_MEDIAN,
    TL_AGG_STD,      /* sample std (ddof 1): missing for < 2 values */
    TL_AGG_STD0,     /* population std (ddof 0) */
    TL_AGG_MIN,
    TL_AGG_MAX,
    TL_AGG_COUNT,    /* non-missing values */
    TL_AGG_SIZE,     /* rows in the group */
    TL_AGG_FIRST,    /* first non-missing value in row order */
    TL_AGG_SET,      /* sorted distinct strings, as a Python list: ['a', 'b'] */
    TL_AGG_CUSTOM,   /* callback below, producing a string cell */
} tl_aggfn;

/* Writes the aggregated cell text for the group's rows (in row order) into
 * out; return 0 for a missing cell. */
typedef int (*tl_agg_custom_fn)(const tl_table *src, const size_t *rows, size_t n, void *ctx, tl_sbuf *out);

typedef struct tl_agg {
    const char *col;          /* source column (ignored by SIZE) */
    tl_aggfn fn;
    const char *out;          /* output column name */
    tl_agg_custom_fn custom;
    void *ctx;
} tl_agg;

typedef struct tl_groupby {
    const char *const *keys;  /* key columns, copied to the output first */
    size_t nkeys;
    int sort;                 /* 1: groups ordered by key (strings by bytes, numbers, missing last) */
    int dropna;               /* 1: rows with any missing key are dropped */
    const tl_agg *aggs;
    size_t naggs;
} tl_groupby;

/* Groups src; the result has the key columns then one column per agg. */
tl_table *tl_table_group(const tl_table *src, const char *name, const tl_groupby *g);

/* ---- ordering and shaping ---- */
typedef struct tl_sortkey {
    const char *col;
    int desc;
} tl_sortkey;
/* Stable sort; missing values last whatever the direction. */
void tl_table_sort(tl_table *t, const tl_sortkey *keys, size_t n);
/* Neumaier-compensated sum of x[0..n): the group-by sums and means (pandas'
 * groupby sum agrees with it to the last digit on report data). */
double tl_sum_compensated(const double *x, size_t n);
/* Keeps rows idx[0..n) of t, in that order, in place (a permutation or a
 * selection; the text stays in the table's pool). */
void tl_table_keep_rows(tl_table *t, const size_t *idx, size_t n);
/* A new table with the given rows of t (in that order), same columns. */
tl_table *tl_table_take(const tl_table *t, const char *name, const size_t *rows, size_t n);
/* Keeps the first n rows. */
void tl_table_head(tl_table *t, size_t n);
/* Reorders columns to the given names (names absent from t are skipped;
 * columns not named are dropped). */
void tl_table_select(tl_table *t, const char *const *names, size_t n);
void tl_table_rename(tl_table *t, const char *from, const char *to);
void tl_table_drop(tl_table *t, const char *name);
/* Moves column `name` to position pos. */
void tl_table_move(tl_table *t, const char *name, size_t pos);

/* ---- joins ---- */
/* The rows of l joined with the rows of r whose key columns `on` (present
 * in both, of the same types) hold the same values (compared as their cell
 * texts; missing equals missing): l's columns, then r's other columns (a
 * name l already has gets "_right" appended). Rows in l's order, each with
 * its matches in r's order; with left_outer, an l row without a match is
 * kept once with missing right cells. NULL with *err naming the key column
 * that is absent or of different types. */
tl_table *tl_table_join(const tl_table *l, const tl_table *r, const char *name, const char *const *on, size_t non,
                        int left_outer, const char **err);

/* ---- text ---- */
/* A preview for people: "table NAME (R rows x C columns)", then the header
 * and the first max_rows rows aligned (numbers to the right), cells cut to
 * 40 characters, as many columns as fit in width, and a line naming what
 * was left out. */
void tl_table_preview(const tl_table *t, size_t max_rows, size_t width, tl_sbuf *out);
/* A cell as pandas to_csv writes it (before CSV quoting); missing = "". */
void tl_table_cell_text(const tl_table *t, size_t col, size_t row, tl_sbuf *out);
/* Writes the whole table as CSV (pandas to_csv(index=False)). */
void tl_table_write_csv(const tl_table *t, FILE *f);

#endif
