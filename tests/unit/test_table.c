/* The Table engine against hand-computed pandas results: group-by with
 * sorted or first-appearance groups, dropna, sum/mean/median/std (ddof 1
 * and 0)/min/max/count/size/first (first non-missing)/sorted set, stable
 * multi-key sort with missing values last, take/head/select, and the CSV
 * text of every cell type. */
#include <math.h>
#include <stdlib.h>

#include "table/table.h"
#include "util/pyfmt.h"
#include "test.h"

static tl_table *sample(void)
{
    /* k     v     s      i
     * b     1.0   x      3
     * a     NaN   y      -
     * b     3.0   -      1
     * -     5.0   z      2
     * a     2.0   y      7 */
    tl_table *t = tl_table_new("sample");
    size_t k = tl_table_add_col(t, "k", TL_COL_STR), v = tl_table_add_col(t, "v", TL_COL_F64),
           s = tl_table_add_col(t, "s", TL_COL_STR), i = tl_table_add_col(t, "i", TL_COL_I64);
    const char *ks[] = {"b", "a", "b", NULL, "a"}, *ss[] = {"x", "y", NULL, "z", "y"};
    double vs[] = {1.0, NAN, 3.0, 5.0, 2.0};
    int64_t is[] = {3, -1, 1, 2, 7};
    for (int r = 0; r < 5; r++) {
        size_t row = tl_table_add_row(t);
        tl_table_set_str(t, k, row, ks[r]);
        tl_table_set_f64(t, v, row, vs[r]);
        tl_table_set_str(t, s, row, ss[r]);
        if (is[r] >= 0) tl_table_set_i64(t, i, row, is[r]);
    }
    return t;
}

static double num(const tl_table *t, const char *col, size_t r)
{
    return tl_table_num(t, (size_t)tl_table_col(t, col), r);
}

static void group_sorted(void)
{
    tl_table *t = sample();
    static const char *const keys[] = {"k"};
    const tl_agg aggs[] = {
        {"v", TL_AGG_SUM, "sum", NULL, NULL},      {"v", TL_AGG_MEAN, "mean", NULL, NULL},
        {"v", TL_AGG_MEDIAN, "median", NULL, NULL}, {"v", TL_AGG_STD, "std", NULL, NULL},
        {"v", TL_AGG_STD0, "std0", NULL, NULL},    {"v", TL_AGG_COUNT, "count", NULL, NULL},
        {NULL, TL_AGG_SIZE, "size", NULL, NULL},   {"s", TL_AGG_FIRST, "first", NULL, NULL},
        {"s", TL_AGG_SET, "set", NULL, NULL},      {"i", TL_AGG_SUM, "isum", NULL, NULL},
        {"i", TL_AGG_MAX, "imax", NULL, NULL},     {"s", TL_AGG_COUNT, "scount", NULL, NULL},
    };
    tl_groupby g = {keys, 1, 1, 1, aggs, sizeof aggs / sizeof *aggs};
    tl_table *o = tl_table_group(t, "g", &g);
    CHECK_I64(o->nrows, 2); /* the missing key is dropped (dropna) */
    CHECK_STR(tl_table_str(o, 0, 0), "a");
    CHECK_STR(tl_table_str(o, 0, 1), "b");
    CHECK(num(o, "sum", 0) == 2.0);          /* NaN skipped */
    CHECK(num(o, "mean", 0) == 2.0);
    CHECK(isnan(num(o, "std", 0)));          /* one value: ddof 1 undefined */
    CHECK(num(o, "std0", 0) == 0.0);
    CHECK_I64(num(o, "count", 0), 1);
    CHECK_I64(num(o, "size", 0), 2);
    CHECK(num(o, "mean", 1) == 2.0);
    CHECK(num(o, "median", 1) == 2.0);       /* (1 + 3) / 2 */
    CHECK(fabs(num(o, "std", 1) - sqrt(2.0)) < 1e-15);
    CHECK(num(o, "std0", 1) == 1.0);
    CHECK_STR(tl_table_str(o, (size_t)tl_table_col(o, "first"), 1), "x");
    CHECK_STR(tl_table_str(o, (size_t)tl_table_col(o, "set"), 0), "['y']");
    CHECK_STR(tl_table_str(o, (size_t)tl_table_col(o, "set"), 1), "['x']");
    CHECK_I64(num(o, "isum", 0), 7);         /* missing int skipped */
    CHECK(o->cols[tl_table_col(o, "isum")].type == TL_COL_I64);
    CHECK_I64(num(o, "imax", 1), 3);
    CHECK_I64(num(o, "scount", 1), 1);       /* text counts: non-missing only */
    tl_table_free(o);
    tl_table_free(t);
}

static void group_appearance(void)
{
    tl_table *t = sample();
    static const char *const keys[] = {"k"};
    const tl_agg aggs[] = {{NULL, TL_AGG_SIZE, "n", NULL, NULL}};
    tl_groupby g = {keys, 1, 0, 0, aggs, 1}; /* sort=False, dropna=False */
    tl_table *o = tl_table_group(t, "g", &g);
    CHECK_I64(o->nrows, 3);
    CHECK_STR(tl_table_str(o, 0, 0), "b");
    CHECK_STR(tl_table_str(o, 0, 1), "a");
    CHECK(tl_table_is_null(o, 0, 2));
    CHECK_I64(num(o, "n", 2), 1);
    tl_table_free(o);
    tl_table_free(t);
}

static void sorting_and_text(void)
{
    tl_table *t = sample();
    tl_sortkey sk[2] = {{"v", 1}, {"i", 0}};
    tl_table_sort(t, sk, 2);
    /* v desc: 5, 3, 2, 1, then the missing one last */
    CHECK(num(t, "v", 0) == 5.0);
    CHECK(num(t, "v", 3) == 1.0);
    CHECK(isnan(num(t, "v", 4)));
    size_t rows[2] = {4, 0};
    tl_table *tk = tl_table_take(t, "take", rows, 2);
    CHECK(isnan(num(tk, "v", 0)));
    CHECK(num(tk, "v", 1) == 5.0);
    static const char *const order[] = {"i", "k"};
    tl_table_select(tk, order, 2);
    CHECK_I64(tk->ncols, 2);
    CHECK_STR(tk->cols[0].name, "i");
    size_t c = tl_table_add_col(tk, "b", TL_COL_BOOL), q = tl_table_add_col(tk, "q", TL_COL_STR);
    tl_table_set_bool(tk, c, 0, 1);
    tl_table_set_str(tk, q, 0, "a,\"b\"");
    tl_table_set_str(tk, q, 1, "((1,), (2, 3))");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tl_table_write_csv(tk, f);
    fclose(f);
    CHECK_STR(buf, "i,k,b,q\n,a,True,\"a,\"\"b\"\"\"\n2,,,\"((1,), (2, 3))\"\n");
    free(buf);
    tl_table_head(tk, 1);
    CHECK_I64(tk->nrows, 1);
    tl_table_free(tk);
    tl_table_free(t);
}

/* Python's repr of floats (what pandas writes in a CSV), on both sides of
 * the short-decimal fast path: the texts are CPython 3.11's. */
static void float_repr(void)
{
    static const struct {
        double x;
        const char *py;
    } cases[] = {
        {21.008, "21.008"}, {0.1, "0.1"}, {-2.5, "-2.5"}, {3.0, "3.0"}, {0.0001, "0.0001"}, {5e-05, "5e-05"},
        {123456789.5, "123456789.5"}, {999999999.999999, "999999999.999999"}, {1e9, "1000000000.0"},
        {0.30000000000000004, "0.30000000000000004"}, {1.0 / 3, "0.3333333333333333"}, {1e16, "1e+16"},
        {123.4567891, "123.4567891"}, {-0.000123, "-0.000123"}, {2.675, "2.675"}, {1e-7, "1e-07"},
        {100.0, "100.0"}, {0.5, "0.5"}, {-0.0, "-0.0"}, {12345.678901234, "12345.678901234"},
        /* powers of two: the shortest text lies on the wider side of the
         * interval, not where printf's rounding puts it */
        {5.9604644775390625e-08, "5.960464477539063e-08"}, {0x1p-1074, "5e-324"}, {0x1p60, "1.152921504606847e+18"},
        {0x1p-20, "9.5367431640625e-07"}, {1125899906842624.25, "1125899906842624.2"},
        {2251799813685247.5, "2251799813685247.5"}, {0.1 + 0.7, "0.7999999999999999"}, {1.5e-4, "0.00015"},
        {123456.78901234567, "123456.78901234567"}, {9007199254740993.0, "9007199254740992.0"},
        /* 16-17 digits, by the exact 128-bit search (pyfmt.c exact_shortest) */
        {0x1.81c8p-6, "0.023546218872070312"}, {2.0 / 3, "0.6666666666666666"}, {0x1.2f2a36ecd5555p+48, "333333333333333.3"},
        {0x1.58775b6db6db7p+17, "176366.7142857143"}, {0x1.2533fe68fd3d2p-35, "3.3333333333333335e-11"},
        {0x1.9999999999999p-4, "0.09999999999999999"}, {0x1.4f8b588e368f2p-17, "1.0000000000000003e-05"},
        {0x1.8ffffffffffffp+6, "99.99999999999999"}, {0x1.c6bf52633ffffp+49, "999999999999999.9"},
        {0x1.fffffffffffffp+1023, "1.7976931348623157e+308"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char buf[40];
        tl_pyfloat_repr(buf, sizeof buf, cases[i].x);
        CHECK_STR(buf, cases[i].py);
    }
}

/* The same definition checked on many values: the text reads back as x,
 * and no text with fewer significant digits does (for values that are not
 * powers of two, where printf's correctly rounded "%.{p}e" is the nearest
 * p-digit text, so trying each p in turn is the definition itself). */
static void float_repr_random(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    int bad = 0;
    for (int i = 0; i < 200000 && bad < 5; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double x;
        switch (i % 4) {
        case 0: memcpy(&x, &s, sizeof x); break;                                   /* any bit pattern */
        case 1: x = (double)(s >> 11) * 0x1p-53 * pow(10, (int)(s % 24) - 6); break; /* 1e-6 .. 1e17 */
        case 2: x = (double)(s % 100000000) / pow(10, (int)(s % 9)); break;          /* short decimals */
        default: x = (double)(int64_t)(s % 2000000001) / 1000.0; break;             /* microseconds */
        }
        if (!isfinite(x) || x == 0) continue;
        int ex;
        if (fabs(frexp(x, &ex)) == 0.5) continue;
        char got[40], want[40];
        tl_pyfloat_repr(got, sizeof got, x);
        int p;
        for (p = 0; p < 17; p++) {
            snprintf(want, sizeof want, "%.*e", p, x);
            if (strtod(want, NULL) == x) break;
        }
        char dig[40];
        int nd = 0;
        for (const char *c = got; *c && *c != 'e'; c++)
            if (*c >= '0' && *c <= '9' && (nd || *c != '0')) dig[nd++] = *c; /* no leading zeros */
        while (nd > 0 && dig[nd - 1] == '0') nd--;                         /* nor trailing ones */
        int sig = nd;
        if (strtod(got, NULL) != x || sig != p + 1) {
            fprintf(stderr, "repr(%a): got %s, %d digits; the shortest has %d\n", x, got, sig, p + 1);
            bad++;
        }
    }
    CHECK_I64(bad, 0);
}

void suite_table(void)
{
    float_repr();
    float_repr_random();
    group_sorted();
    group_appearance();
    sorting_and_text();
}
