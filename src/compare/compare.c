#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../util/sbuf.h"
#include "../util/vec.h"
#include "../util/str.h"
#include "csv_read.h"
#include "join.h"
#include "xlsx_read.h"

/* ------------------------------------------------------------ config */

#define MAXK 8

/* One entry of the reference's SHEETS_COMPARE_CONFIG. */
typedef struct sheet_cfg {
    const char *keys[MAXK];      /* NULL-terminated; roofline sheets compute theirs */
    const char *diff[MAXK];      /* difference columns, in order */
    const char *del_all[MAXK];   /* deleted from every report */
    const char *del_other[MAXK]; /* deleted from the non-baseline reports */
    const char *sort;            /* NULL: the rows stay in key order */
} sheet_cfg;

#define OPS_KEYS {"name", "Input type", "Input Dims", "Input Strides", "Concrete Inputs", NULL}

static const sheet_cfg CFG_GPU_TIMELINE = {{"type", NULL}, {"time ms", NULL}, {NULL}, {NULL}, NULL};
static const sheet_cfg CFG_OPS_SUMMARY = {{"name", NULL},
                                          {"total_direct_kernel_time_ms", "Count", NULL},
                                          {"total_direct_kernel_time_sum", NULL},
                                          {"Cumulative Percentage (%)", NULL},
                                          "total_direct_kernel_time_ms"};
static const sheet_cfg CFG_KERNEL_SUMMARY = {
    {"Kernel name", NULL},
    {"Kernel duration (µs)_sum", "Kernel duration (µs)_mean", "Kernel duration (µs)_count", NULL},
    {"Kernel duration (µs)_min", "Kernel duration (µs)_max", "Parent op category", NULL},
    {"Cumulative Percentage (%)", NULL},
    "Kernel duration (µs)_sum"};
static const sheet_cfg CFG_KERNEL_SUMMARY_LEGACY = {
    {"name", NULL},
    {"Total Kernel Time (ms)", "Mean Kernel Time (µs)", "Count", NULL},
    {"Total Kernel Time (µs)", "Median Kernel Time (µs)", "Std Kernel Time (µs)", "Min Kernel Time (µs)",
     "Max Kernel Time (µs)", "Category", NULL},
    {"Cumulative Percentage (%)", NULL},
    "Total Kernel Time (ms)"};
static const sheet_cfg CFG_OPS_UNIQUE_ARGS = {
    OPS_KEYS,
    {"total_direct_kernel_time_sum", "total_direct_kernel_time_mean", "operation_count", NULL},
    {NULL},
    {NULL},
    "total_direct_kernel_time_sum"};
static const sheet_cfg CFG_UNIFIED = {OPS_KEYS,
                                      {"Kernel Time (µs)_sum", "Kernel Time (µs)_mean", "operation_count", NULL},
                                      {NULL},
                                      {NULL},
                                      "Kernel Time (µs)_sum"};
static const sheet_cfg CFG_ROOFLINE = {
    {NULL},
    {"Kernel Time (µs)_sum", "Kernel Time (µs)_mean", "name_count", "TFLOPS/s_mean", "TB/s_mean", NULL},
    {NULL},
    {"GFLOPS_first", "Data Moved (MB)_first", "FLOPS/Byte_first", "Input type_first", "Input Dims_first",
     "Input Strides_first", "Concrete Inputs_first", NULL},
    "Kernel Time (µs)_sum"};

static const struct {
    const char *sheet;
    const sheet_cfg *cfg;
} OPS_GROUP[] = {
    {"ops_all", &CFG_OPS_UNIQUE_ARGS},
    {"ops_unique_args", &CFG_OPS_UNIQUE_ARGS},
    {"unified_perf_summary", &CFG_UNIFIED},
};

static const struct {
    const char *sheet, *short_name;
} ROOFLINE_GROUP[] = {
    {"GEMM", "GEMM"},         {"SDPA_fwd", "SDPA_fwd"},     {"SDPA_bwd", "SDPA_bwd"},
    {"CONV_fwd", "CONV_fwd"}, {"CONV_bwd", "CONV_bwd"},     {"UnaryElementwise", "un_eltwise"},
    {"BinaryElementwise", "bin_eltwise"},
};

unsigned tl_compare_sheet_bit(const char *w)
{
    if (!strcmp(w, "gpu_timeline")) return TL_CMP_GPU_TIMELINE;
    if (!strcmp(w, "ops_summary")) return TL_CMP_OPS_SUMMARY;
    if (!strcmp(w, "kernel_summary")) return TL_CMP_KERNEL_SUMMARY;
    if (!strcmp(w, "ops_all")) return TL_CMP_OPS_ALL;
    if (!strcmp(w, "roofline")) return TL_CMP_ROOFLINE;
    if (!strcmp(w, "all")) return TL_CMP_ALL;
    return 0;
}

static size_t count_list(const char *const *l)
{
    size_t n = 0;
    while (n < MAXK && l[n]) n++;
    return n;
}

/* ------------------------------------------------------------ reports */

typedef struct report {
    const char *path;   /* as given */
    char *dir;          /* where its <sheet>.csv files are (NULL for a workbook) */
    tl_xlsx_book *book; /* an .xlsx report (NULL for a directory) */
    const char *tag;
} report;

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static char *path_join(const char *dir, const char *name, const char *ext)
{
    tl_sbuf b;
    tl_sb_init(&b);
    tl_sb_printf(&b, "%s/%s%s", dir, name, ext);
    return tl_sb_take(&b);
}

/* A report's sheets: an .xlsx workbook, or its CSV directory: the path
 * itself, or its perf_report_csvs/ when the path is a `tracelens report -o
 * DIR` directory. */
static int resolve_report(report *r, tl_error *err)
{
    if (is_file(r->path) && tl_ends_with_ci(r->path, ".xlsx")) {
        r->book = tl_xlsx_open(r->path, err);
        return r->book ? 0 : -1;
    }
    if (!is_dir(r->path)) {
        struct stat st;
        if (stat(r->path, &st) != 0)
            tl_error_set(err, "%s: cannot open: %s", r->path, strerror(errno));
        else
            tl_error_set(err, "%s: expected an .xlsx workbook or a report directory of <sheet>.csv files", r->path);
        return -1;
    }
    char *sub = path_join(r->path, "perf_report_csvs", "");
    char *probe = path_join(r->path, "gpu_timeline", ".csv");
    if (!is_file(probe) && is_dir(sub)) {
        r->dir = sub;
    } else {
        free(sub);
        r->dir = tl_xstrdup(r->path);
    }
    free(probe);
    return 0;
}

/* A report's default tag (trailing slashes ignored): a directory's whole
 * name (Qwen_Qwen1.5-0.5B-Chat_h100, where the reference's splitext(basename)
 * cuts at the last dot: a directory has no extension); a file's name as
 * splitext(basename) leaves it (perf_report for perf_report.xlsx). */
static char *file_stem(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') b--;
    size_t e = n;
    for (size_t i = is_dir(path) ? b : n; i > b + 1; i--)
        if (path[i - 1] == '.') {
            size_t j = b;
            while (j < i - 1 && path[j] == '.') j++;
            if (j < i - 1) e = i - 1; /* not only leading dots */
            break;
        }
    char *s = tl_xmalloc(e - b + 1);
    memcpy(s, path + b, e - b);
    s[e - b] = 0;
    return s;
}

/* The name of the directory holding path ("a" for a/perf_report.xlsx, the
 * current directory's name for a bare file name); NULL when it has none. */
static char *parent_name(const char *path)
{
    char *full = realpath(path, NULL);
    if (!full) return NULL;
    char *slash = strrchr(full, '/');
    if (slash) *slash = 0; /* the directory */
    char *base = strrchr(full, '/');
    char *name = base && base[1] ? tl_xstrdup(base + 1) : NULL;
    free(full);
    return name;
}

/* Default tags: each report's file stem, or when two stems are the same
 * (a/perf_report.xlsx b/perf_report.xlsx) each report's directory name,
 * when those are all different. */
static void default_tags(const tl_compare_opts *o, char **stems)
{
    int clash = 0;
    for (size_t i = 0; i < o->n && !clash; i++)
        for (size_t j = 0; j < i && !clash; j++) clash = !strcmp(stems[i], stems[j]);
    if (!clash) return;
    char **dirs = tl_xcalloc(o->n, sizeof *dirs);
    int ok = 1;
    for (size_t i = 0; i < o->n && ok; i++) {
        dirs[i] = parent_name(o->reports[i]);
        ok = dirs[i] != NULL;
        for (size_t j = 0; j < i && ok; j++) ok = strcmp(dirs[i], dirs[j]) != 0;
    }
    for (size_t i = 0; i < o->n; i++) {
        if (ok) {
            free(stems[i]);
            stems[i] = dirs[i];
        } else {
            free(dirs[i]);
        }
    }
    free(dirs);
}

/* Where a report's sheet is, for messages: "DIR/SHEET.csv" or
 * "FILE.xlsx: sheet SHEET". */
static char *sheet_where(const report *r, const char *sheet)
{
    tl_sbuf b;
    tl_sb_init(&b);
    if (r->book) tl_sb_printf(&b, "%s: sheet %s", r->path, sheet);
    else tl_sb_printf(&b, "%s/%s.csv", r->dir, sheet);
    return tl_sb_take(&b);
}

/* "the report has no such sheet" (`why` says what to do about it). */
static void no_sheet(const report *r, const char *sheet, const char *why, tl_error *err)
{
    if (r->book) tl_error_set(err, "%s: no sheet %s in this workbook (%s)", r->path, sheet, why);
    else tl_error_set(err, "%s: no %s.csv in this report (%s)", r->dir, sheet, why);
}

/* Reads a report's sheet (<dir>/<sheet>.csv, or the workbook's sheet);
 * NULL with *missing = 1 when there is no such sheet, NULL with err set
 * when it cannot be read. */
static tl_table *load_sheet(const report *r, const char *sheet, int *missing, tl_error *err)
{
    if (r->book) {
        long i = tl_xlsx_sheet_index(r->book, sheet);
        *missing = i < 0;
        return *missing ? NULL : tl_xlsx_read_sheet(r->book, (size_t)i, err);
    }
    char *p = path_join(r->dir, sheet, ".csv");
    *missing = !is_file(p) && !is_dir(p);
    tl_table *t = *missing ? NULL : tl_csv_read(p, sheet, err);
    free(p);
    return t;
}

/* ------------------------------------------------------------ build */

typedef struct ctx {
    const tl_compare_opts *o;
    report *r;
    size_t n;
    tl_sheets *out;
} ctx;

static void add_sheet(tl_sheets *s, const char *name, tl_table *t)
{
    TL_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n].name = tl_xstrdup(name);
    s->v[s->n].table = t;
    s->v[s->n].write_empty_as_newline = 0;
    s->n++;
}

static void free_tables(tl_table **t, size_t n)
{
    for (size_t i = 0; i < n; i++) tl_table_free(t[i]);
}

/* Loads one sheet of every report; 0, or -1 with err (missing_ok: a
 * missing sheet is a NULL table, not an error). */
static int load_all(const ctx *c, const char *sheet, int missing_ok, tl_table **t, tl_error *err)
{
    for (size_t i = 0; i < c->n; i++) {
        int missing;
        t[i] = load_sheet(&c->r[i], sheet, &missing, err);
        if (t[i] || (missing && missing_ok)) continue;
        if (missing) no_sheet(&c->r[i], sheet, "leave the sheet out with --sheets", err);
        free_tables(t, i);
        return -1;
    }
    return 0;
}

/* Column roles in a comparison table, for the split. */
enum { ROLE_KEY, ROLE_TAG, ROLE_DIFF };
typedef struct role {
    int kind;
    size_t tag; /* report index of ROLE_TAG / ROLE_DIFF */
} role;

typedef struct dff {
    tl_table *t;
    role *roles; /* one per column of t */
} dff;

static int is_numeric(const tl_table *t, long c) { return c >= 0 && t->cols[c].type != TL_COL_STR; }

static void add_diff_cols(dff *d, const ctx *c, const char *col, size_t v)
{
    tl_table *t = d->t;
    char *bn = NULL, *vn = NULL;
    tl_sbuf b;
    tl_sb_init(&b);
    tl_sb_printf(&b, "%s::%s", c->r[0].tag, col);
    bn = tl_sb_take(&b);
    tl_sb_printf(&b, "%s::%s", c->r[v].tag, col);
    vn = tl_sb_take(&b);
    size_t bc = (size_t)tl_table_col(t, bn), vc = (size_t)tl_table_col(t, vn);
    int ints = t->cols[bc].type == TL_COL_I64 && t->cols[vc].type == TL_COL_I64;
    tl_sb_printf(&b, "%s__%s_diff", col, c->r[v].tag);
    size_t dc = tl_table_add_col(t, b.s, ints ? TL_COL_I64 : TL_COL_F64);
    tl_sb_clear(&b);
    tl_sb_printf(&b, "%s__%s_pct", col, c->r[v].tag);
    size_t pc = tl_table_add_col(t, b.s, TL_COL_F64);
    tl_sb_free(&b);
    for (size_t r = 0; r < t->nrows; r++) {
        if (tl_table_is_null(t, bc, r) || tl_table_is_null(t, vc, r)) continue;
        double base = tl_table_num(t, bc, r), diff;
        if (ints) {
            int64_t di = (int64_t)((uint64_t)t->cols[vc].v.i[r] - (uint64_t)t->cols[bc].v.i[r]);
            tl_table_set_i64(t, dc, r, di);
            diff = (double)di;
        } else {
            diff = tl_table_num(t, vc, r) - base;
            tl_table_set_f64(t, dc, r, diff);
        }
        if (base != 0) tl_table_set_f64(t, pc, r, diff / base * 100.0);
    }
    free(bn);
    free(vn);
}

/* build_df_dff: every report's non-key columns renamed "tag::col", the
 * reports outer-joined in order, then "{d}__{tag}_diff" / "_pct" per diff
 * column and variant; columns ordered keys, diffs, the rest. The tables
 * are consumed. */
static int build_dff(const ctx *c, const char *sheet, tl_table **t, const char *const *keys, size_t nkeys,
                     const sheet_cfg *cfg, dff *out, tl_error *err)
{
    size_t ndiff = count_list(cfg->diff);
    size_t *nonkey = tl_xcalloc(c->n, sizeof *nonkey); /* each report's non-key columns */
    for (size_t i = 0; i < c->n; i++) {
        for (size_t k = 0; k < MAXK && cfg->del_all[k]; k++) tl_table_drop(t[i], cfg->del_all[k]);
        for (size_t k = 0; i && k < MAXK && cfg->del_other[k]; k++) tl_table_drop(t[i], cfg->del_other[k]);
        for (size_t k = 0; k < nkeys; k++)
            if (tl_table_col(t[i], keys[k]) < 0) {
                char *w = sheet_where(&c->r[i], sheet);
                tl_error_set(err, "%s: no column '%s' (a join key of the %s comparison)", w, keys[k], sheet);
                free(w);
                free(nonkey);
                return -1;
            }
        for (size_t k = 0; k < ndiff; k++) {
            long col = tl_table_col(t[i], cfg->diff[k]);
            if (col < 0 || !is_numeric(t[i], col)) {
                char *w = sheet_where(&c->r[i], sheet);
                tl_error_set(err, "%s: %s column '%s' (compared between the reports)", w,
                             col < 0 ? "no" : "expected numbers in", cfg->diff[k]);
                free(w);
                free(nonkey);
                return -1;
            }
        }
        tl_sbuf b;
        tl_sb_init(&b);
        for (size_t col = 0; col < t[i]->ncols; col++) {
            int key = 0;
            for (size_t k = 0; k < nkeys && !key; k++) key = !strcmp(t[i]->cols[col].name, keys[k]);
            if (key) continue;
            tl_sb_clear(&b);
            tl_sb_printf(&b, "%s::%s", c->r[i].tag, t[i]->cols[col].name);
            free(t[i]->cols[col].name);
            t[i]->cols[col].name = tl_xstrdup(b.s);
        }
        tl_sb_free(&b);
        nonkey[i] = t[i]->ncols - nkeys;
    }
    tl_table *acc = t[0];
    t[0] = NULL;
    for (size_t i = 1; i < c->n; i++) {
        tl_table *j = tl_join_outer(acc, t[i], keys, nkeys, sheet, err);
        tl_table_free(acc);
        tl_table_free(t[i]);
        t[i] = NULL;
        if (!j) {
            free(nonkey);
            return -1;
        }
        acc = j;
    }
    dff d = {acc, NULL};
    size_t first_diff = acc->ncols;
    for (size_t k = 0; k < ndiff; k++)
        for (size_t v = 1; v < c->n; v++) add_diff_cols(&d, c, cfg->diff[k], v);
    /* keys, diff/pct columns, the rest */
    size_t nc = acc->ncols, m = 0;
    const char **order = tl_xcalloc(nc + 1, sizeof *order);
    d.roles = tl_xcalloc(nc + 1, sizeof *d.roles);
    for (size_t k = 0; k < nkeys; k++) {
        d.roles[m].kind = ROLE_KEY;
        order[m++] = keys[k];
    }
    for (size_t col = first_diff; col < nc; col++) {
        size_t idx = col - first_diff;
        d.roles[m].kind = ROLE_DIFF;
        d.roles[m].tag = 1 + (idx / 2) % (c->n - 1);
        order[m++] = acc->cols[col].name;
    }
    /* the joined columns after the keys are the reports' own, in report order */
    for (size_t rep = 0, col = nkeys; rep < c->n; rep++)
        for (size_t j = 0; j < nonkey[rep]; j++, col++) {
            d.roles[m].kind = ROLE_TAG;
            d.roles[m].tag = rep;
            order[m++] = acc->cols[col].name;
        }
    free(nonkey);
    /* the names belong to acc's columns: select copies nothing, so take
     * copies first */
    char **names = tl_xcalloc(m + 1, sizeof *names);
    for (size_t i = 0; i < m; i++) names[i] = tl_xstrdup(order[i]);
    tl_table_select(acc, (const char *const *)names, m);
    for (size_t i = 0; i < m; i++) free(names[i]);
    free(names);
    free(order);
    *out = d;
    return 0;
}

static void dff_free(dff *d)
{
    tl_table_free(d->t);
    free(d->roles);
}

/* The rows of one split part, sorted, pruned to the kept tags' columns,
 * without all-missing columns. */
static tl_table *split_part(const ctx *c, const dff *d, const char *name, const size_t *rows, size_t n,
                            const char *sort_col, size_t sort_tag, int keep_base, size_t keep_var)
{
    tl_table *p = tl_table_take(d->t, name, rows, n);
    if (sort_col) {
        tl_sbuf b;
        tl_sb_init(&b);
        tl_sb_printf(&b, "%s::%s", c->r[sort_tag].tag, sort_col);
        tl_sortkey k = {b.s, 1};
        tl_table_sort(p, &k, 1);
        tl_sb_free(&b);
    }
    const char **keep = tl_xcalloc(p->ncols + 1, sizeof *keep);
    size_t m = 0;
    for (size_t col = 0; col < p->ncols; col++) {
        const role *r = &d->roles[col];
        int kept = r->kind == ROLE_KEY || r->tag == keep_var || (r->kind == ROLE_TAG && r->tag == 0 && keep_base);
        if (!kept) continue;
        int any = 0;
        for (size_t row = 0; row < p->nrows && !any; row++) any = !tl_table_is_null(p, col, row);
        if (any) keep[m++] = p->cols[col].name;
    }
    char **names = tl_xcalloc(m + 1, sizeof *names);
    for (size_t i = 0; i < m; i++) names[i] = tl_xstrdup(keep[i]);
    tl_table_select(p, (const char *const *)names, m);
    for (size_t i = 0; i < m; i++) free(names[i]);
    free(names);
    free(keep);
    return p;
}

/* split_df_diff: per variant, {name}_intersect_{tag}, _only_baseline_{tag},
 * _only_variant_{tag}, by the first difference column. */
static void split(const ctx *c, const dff *d, const char *name, const sheet_cfg *cfg)
{
    size_t n = d->t->nrows;
    size_t *both = tl_xmalloc((n + 1) * sizeof *both), *base_only = tl_xmalloc((n + 1) * sizeof *base_only),
           *var_only = tl_xmalloc((n + 1) * sizeof *var_only);
    tl_sbuf b;
    tl_sb_init(&b);
    tl_sb_printf(&b, "%s::%s", c->r[0].tag, cfg->diff[0]);
    long bc = tl_table_col(d->t, b.s);
    for (size_t v = 1; v < c->n; v++) {
        tl_sb_clear(&b);
        tl_sb_printf(&b, "%s::%s", c->r[v].tag, cfg->diff[0]);
        long vc = tl_table_col(d->t, b.s);
        size_t nb = 0, no_b = 0, no_v = 0;
        for (size_t r = 0; r < n; r++) {
            int hb = !tl_table_is_null(d->t, (size_t)bc, r), hv = !tl_table_is_null(d->t, (size_t)vc, r);
            if (hb && hv) both[nb++] = r;
            else if (hb) base_only[no_b++] = r;
            else if (hv) var_only[no_v++] = r;
        }
        const char *tag = c->r[v].tag;
        tl_sb_clear(&b);
        tl_sb_printf(&b, "%s_intersect_%s", name, tag);
        add_sheet(c->out, b.s, split_part(c, d, b.s, both, nb, cfg->sort, 0, 1, v));
        tl_sb_clear(&b);
        tl_sb_printf(&b, "%s_only_baseline_%s", name, tag);
        add_sheet(c->out, b.s, split_part(c, d, b.s, base_only, no_b, cfg->sort, 0, 1, SIZE_MAX));
        tl_sb_clear(&b);
        tl_sb_printf(&b, "%s_only_variant_%s", name, tag);
        add_sheet(c->out, b.s, split_part(c, d, b.s, var_only, no_v, cfg->sort, v, 0, v));
    }
    tl_sb_free(&b);
    free(both);
    free(base_only);
    free(var_only);
}

/* gpu_timeline, ops_summary, kernel_summary: one sheet each. */
static int plain_sheet(const ctx *c, const char *sheet, tl_error *err)
{
    tl_table **t = tl_xcalloc(c->n, sizeof *t);
    if (load_all(c, sheet, 0, t, err) != 0) {
        free(t);
        return -1;
    }
    const sheet_cfg *cfg = !strcmp(sheet, "gpu_timeline")  ? &CFG_GPU_TIMELINE
                           : !strcmp(sheet, "ops_summary") ? &CFG_OPS_SUMMARY
                           : tl_table_col(t[0], "Kernel name") >= 0 ? &CFG_KERNEL_SUMMARY
                                                                    : &CFG_KERNEL_SUMMARY_LEGACY;
    dff d;
    int rc = build_dff(c, sheet, t, cfg->keys, count_list(cfg->keys), cfg, &d, err);
    free_tables(t, c->n);
    free(t);
    if (rc != 0) return -1;
    if (cfg->sort) {
        tl_sbuf b;
        tl_sb_init(&b);
        tl_sb_printf(&b, "%s::%s", c->r[0].tag, cfg->sort);
        tl_sortkey k = {b.s, 1};
        tl_table_sort(d.t, &k, 1);
        tl_sb_free(&b);
    }
    free(d.t->name);
    d.t->name = tl_xstrdup(sheet);
    add_sheet(c->out, sheet, d.t);
    free(d.roles);
    return 0;
}

static int ops_group(const ctx *c, tl_error *err)
{
    for (size_t g = 0; g < sizeof OPS_GROUP / sizeof *OPS_GROUP; g++) {
        tl_table **t = tl_xcalloc(c->n, sizeof *t);
        if (load_all(c, OPS_GROUP[g].sheet, 1, t, err) != 0) {
            free(t);
            return -1;
        }
        size_t lacking = 0; /* a sheet of the baseline must be in every report */
        while (lacking < c->n && t[lacking]) lacking++;
        if (lacking < c->n) {
            int in_baseline = t[0] != NULL;
            if (in_baseline)
                no_sheet(&c->r[lacking], OPS_GROUP[g].sheet,
                         "the baseline has one; leave the ops sheets out with --sheets", err);
            free_tables(t, c->n);
            free(t);
            if (in_baseline) return -1;
            continue;
        }
        const sheet_cfg *cfg = OPS_GROUP[g].cfg;
        dff d;
        int rc = build_dff(c, OPS_GROUP[g].sheet, t, cfg->keys, count_list(cfg->keys), cfg, &d, err);
        free_tables(t, c->n);
        free(t);
        if (rc != 0) return -1;
        split(c, &d, OPS_GROUP[g].sheet, cfg);
        dff_free(&d);
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int roofline_group(const ctx *c, tl_error *err)
{
    for (size_t g = 0; g < sizeof ROOFLINE_GROUP / sizeof *ROOFLINE_GROUP; g++) {
        const char *sheet = ROOFLINE_GROUP[g].sheet;
        tl_table **t = tl_xcalloc(c->n, sizeof *t);
        if (load_all(c, sheet, 1, t, err) != 0) {
            free(t);
            return -1;
        }
        if (!t[0]) { /* not in the baseline */
            free_tables(t, c->n);
            free(t);
            continue;
        }
        size_t empty = SIZE_MAX;
        for (size_t i = 0; i < c->n && empty == SIZE_MAX; i++)
            if (!t[i] || t[i]->nrows == 0) empty = i;
        if (empty != SIZE_MAX) {
            if (!c->o->quiet)
                fprintf(stderr, "tracelens: compare: %s skipped: %s in %s\n", sheet,
                        t[empty] ? "no rows" : "no such sheet", c->r[empty].path);
            free_tables(t, c->n);
            free(t);
            continue;
        }
        /* keys: name + the param: columns every report has, sorted */
        TL_VEC(const char *) keys = {0};
        for (size_t col = 0; col < t[0]->ncols; col++) {
            const char *nm = t[0]->cols[col].name;
            int all = !strncmp(nm, "param:", 6);
            for (size_t i = 1; i < c->n && all; i++) all = tl_table_col(t[i], nm) >= 0;
            if (all) TL_PUSH(keys, nm);
        }
        if (keys.n) qsort(keys.v, keys.n, sizeof *keys.v, cmp_str);
        char **kn = tl_xcalloc(keys.n + 2, sizeof *kn);
        kn[0] = tl_xstrdup("name");
        for (size_t k = 0; k < keys.n; k++) kn[k + 1] = tl_xstrdup(keys.v[k]);
        size_t nk = keys.n + 1;
        free(keys.v);
        dff d;
        int rc = build_dff(c, sheet, t, (const char *const *)kn, nk, &CFG_ROOFLINE, &d, err);
        for (size_t k = 0; k < nk; k++) free(kn[k]);
        free(kn);
        free_tables(t, c->n);
        free(t);
        if (rc != 0) return -1;
        split(c, &d, ROOFLINE_GROUP[g].short_name, &CFG_ROOFLINE);
        dff_free(&d);
    }
    return 0;
}

int tl_compare_build(const tl_compare_opts *o, tl_sheets *out, tl_error *err)
{
    memset(out, 0, sizeof *out);
    if (o->n < 2) {
        tl_error_set(err, "compare: at least two reports are needed");
        return -1;
    }
    report *r = tl_xcalloc(o->n, sizeof *r);
    char **stems = tl_xcalloc(o->n, sizeof *stems);
    int rc = 0;
    for (size_t i = 0; i < o->n; i++) stems[i] = file_stem(o->reports[i]);
    if (!o->names) default_tags(o, stems);
    for (size_t i = 0; i < o->n && !rc; i++) {
        r[i].path = o->reports[i];
        r[i].tag = o->names ? o->names[i] : stems[i];
        if (!*r[i].tag || strstr(r[i].tag, "::") || strchr(r[i].tag, '/')) {
            tl_error_set(err, "compare: the tag '%s' of %s cannot name columns and files (empty, or with '::' or "
                         "'/'): pass other --names", r[i].tag, r[i].path);
            rc = -1;
        }
        for (size_t j = 0; j < i && !rc; j++)
            if (!strcmp(r[i].tag, r[j].tag)) {
                tl_error_set(err, "compare: %s and %s have the same tag '%s': pass unique --names", r[j].path,
                             r[i].path, r[i].tag);
                rc = -1;
            }
    }
    for (size_t i = 0; i < o->n && !rc; i++) rc = resolve_report(&r[i], err);
    ctx c = {o, r, o->n, out};
    if (!rc && (o->sheets & TL_CMP_GPU_TIMELINE)) rc = plain_sheet(&c, "gpu_timeline", err);
    if (!rc && (o->sheets & TL_CMP_OPS_SUMMARY)) rc = plain_sheet(&c, "ops_summary", err);
    if (!rc && (o->sheets & TL_CMP_KERNEL_SUMMARY)) rc = plain_sheet(&c, "kernel_summary", err);
    if (!rc && (o->sheets & TL_CMP_OPS_ALL)) rc = ops_group(&c, err);
    if (!rc && (o->sheets & TL_CMP_ROOFLINE)) rc = roofline_group(&c, err);
    if (rc) tl_sheets_free(out);
    for (size_t i = 0; i < o->n; i++) {
        free(r[i].dir);
        tl_xlsx_close(r[i].book);
        free(stems[i]);
    }
    free(stems);
    free(r);
    return rc;
}
