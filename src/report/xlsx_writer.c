#include "xlsx_writer.h"

#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <xlsxwriter.h>

#include "../util/vec.h"
#include "report.h"
#include "xlsx_package.h"
#include "xlsx_sheet_xml.h"

enum { MAX_WIDTH = 60 };
/* Excel's rows per worksheet, less the header row (overridable for tests). */
#ifndef TL_XLSX_MAX_DATA_ROWS
#define TL_XLSX_MAX_DATA_ROWS 1048575
#endif
static const size_t MAX_DATA_ROWS = TL_XLSX_MAX_DATA_ROWS;

enum { NAME_CAP = 31 * 4 + 1 }; /* 31 characters of UTF-8 */

/* Excel's sheet name rules: 31 characters, none of []:*?/\ */
static void sheet_name(char *out, size_t cap, const char *name)
{
    size_t j = 0, chars = 0;
    for (size_t i = 0; name[i] && j + 5 < cap; i++) {
        int lead = ((unsigned char)name[i] & 0xC0) != 0x80;
        if (lead && chars++ == 31) break;
        out[j++] = strchr("[]:*?/\\", name[i]) ? '_' : name[i];
    }
    out[j] = 0;
    if (!j) snprintf(out, cap, "Sheet");
    if (out[0] == '\'') out[0] = '_'; /* nor start or end with an apostrophe */
    if (out[strlen(out) - 1] == '\'') out[strlen(out) - 1] = '_';
}

/* A name no sheet of wb has yet (Excel compares them ignoring case): a
 * taken one ends in "~N" instead, within 31 characters. */
static void unique_sheet_name(lxw_workbook *wb, char nm[NAME_CAP])
{
    char base[NAME_CAP];
    memcpy(base, nm, NAME_CAP);
    for (int k = 1; k < 100000; k++) {
        int taken = 0;
        lxw_sheet *sh;
        STAILQ_FOREACH(sh, wb->sheets, list_pointers) {
            if (!sh->is_chartsheet && !strcasecmp(sh->u.worksheet->name, nm)) taken = 1;
        }
        if (!taken) return;
        char tail[16];
        int tn = snprintf(tail, sizeof tail, "~%d", k);
        size_t keep = 0, chars = 0;
        for (size_t i = 0; base[i]; i++) { /* the first 31 - tn characters */
            if (((unsigned char)base[i] & 0xC0) != 0x80 && chars++ == 31 - (size_t)tn) break;
            keep = i + 1;
        }
        memcpy(nm, base, keep);
        memcpy(nm + keep, tail, (size_t)tn + 1);
    }
}

/* One worksheet of the workbook: rows r0 .. r1 of a table. */
typedef struct part {
    const tl_table *t;
    size_t r0, r1;
    tl_xlsx_kind *kind; /* per column (owned) */
    char entry[48];     /* its zip entry */
} part;

typedef struct book {
    TL_VEC(part) parts;
    int hdr_xf;
    lxw_format *fmt[TL_XK__COUNT]; /* the cell format of each column kind (NULL: none) */
    int xf[TL_XK__COUNT];          /* their style indices (-1: none) */
    tl_xlsx_sst sst;
} book;

/* The number format of each column kind (the header is bold on a light fill). */
static void add_formats(lxw_workbook *wb, book *bk)
{
    static const char *const NUM_FORMAT[TL_XK__COUNT] = {
        [TL_XK_TEXT] = NULL,          [TL_XK_INT] = "0",           [TL_XK_INT_TEXT] = "0",
        [TL_XK_TIME] = "#,##0.000",   [TL_XK_PERCENT] = "0.00",    [TL_XK_TFLOPS] = "0.00",
        [TL_XK_FLOAT] = "0.000###",
    };
    for (int k = 0; k < TL_XK__COUNT; k++) {
        bk->fmt[k] = NULL;
        if (!NUM_FORMAT[k]) continue;
        bk->fmt[k] = workbook_add_format(wb);
        format_set_num_format(bk->fmt[k], NUM_FORMAT[k]);
    }
}

/* Wide sheets keep their first column in view when it names the row. */
enum { FREEZE_NAME_FROM = 6 };

/* Rows r0 .. r1 of a table as one worksheet of the skeleton, named after the
 * sheet (taken names end in ~N): the header row, column widths, hidden
 * columns, the frozen header and the autofilter; the rows come later. */
static int add_part(lxw_workbook *wb, lxw_format *hdr, book *bk, const tl_sheet *sh, size_t r0, size_t r1,
                    tl_xlsx_hide_fn hide, void *ctx)
{
    char nm[NAME_CAP];
    sheet_name(nm, sizeof nm, sh->name);
    unique_sheet_name(wb, nm);
    lxw_worksheet *ws = workbook_add_worksheet(wb, nm);
    if (!ws) return -1;
    const tl_table *t = sh->table;
    if (t->ncols > TL_XLSX_MAX_COLS) return -1;
    double *width = tl_xcalloc(t->ncols + 1, sizeof *width);
    tl_xlsx_col_widths(t, r0, r1, width);
    tl_xlsx_kind *kind = tl_xcalloc(t->ncols + 1, sizeof *kind);
    tl_xlsx_col_kinds(t, r0, r1, kind);
    lxw_row_col_options hidden = {.hidden = 1, .level = 0, .collapsed = 0};
    for (size_t c = 0; c < t->ncols; c++) {
        worksheet_write_string(ws, 0, (lxw_col_t)c, t->cols[c].name, hdr);
        worksheet_set_column_opt(ws, (lxw_col_t)c, (lxw_col_t)c, width[c] > MAX_WIDTH ? MAX_WIDTH : width[c], NULL,
                                 hide && hide(ctx, sh->name, t->cols[c].name) ? &hidden : NULL);
    }
    free(width);
    int freeze_name = t->ncols >= FREEZE_NAME_FROM && !strcmp(t->cols[0].name, "name");
    worksheet_freeze_panes(ws, 1, freeze_name ? 1 : 0);
    if (t->ncols) worksheet_autofilter(ws, 0, 0, (lxw_row_t)(r1 - r0), (lxw_col_t)(t->ncols - 1));
    part p = {t, r0, r1, kind, ""};
    snprintf(p.entry, sizeof p.entry, "xl/worksheets/sheet%zu.xml", bk->parts.n + 1);
    TL_PUSH(bk->parts, p);
    return 0;
}

/* A sheet longer than Excel's 1,048,576 rows goes on as "<name>~1", "~2", ...
 * (each with the header row), so no row is lost. */
static int add_sheet(lxw_workbook *wb, lxw_format *hdr, book *bk, const tl_sheet *sh, tl_xlsx_hide_fn hide,
                     void *ctx)
{
    size_t n = sh->table->nrows, r0 = 0;
    do {
        size_t r1 = n - r0 > MAX_DATA_ROWS ? r0 + MAX_DATA_ROWS : n;
        if (add_part(wb, hdr, bk, sh, r0, r1, hide, ctx) != 0) return -1;
        r0 = r1;
    } while (r0 < n);
    return 0;
}

/* ---- the skeleton's worksheets and shared strings, written anew */

static uint64_t sheet_bound(void *ctx, size_t i, const char *old, size_t old_len)
{
    (void)old, (void)old_len;
    const part *p = &((book *)ctx)->parts.v[i];
    return tl_xlsx_rows_xml_bound(p->t, p->r0, p->r1) + 64;
}

/* The skeleton's worksheet with the full <dimension> and every row in
 * <sheetData>. */
static int sheet_fill(void *ctx, size_t i, const char *old, size_t old_len, tl_xlsx_entry *out)
{
    book *bk = ctx;
    const part *p = &bk->parts.v[i];
    if (p->t->ncols == 0) return tl_xlsx_entry_write(out, old, old_len); /* no cells */
    const char *dim = strstr(old, "<dimension ref=\"");
    const char *sd = strstr(old, "<sheetData");
    if (!dim || !sd || dim > sd) return -1;
    dim += strlen("<dimension ref=\"");
    const char *dim_end = strchr(dim, '"');
    const char *sd_end = strstr(sd, "</sheetData>");
    if (sd_end) sd_end += strlen("</sheetData>");
    else if (!strncmp(sd, "<sheetData/>", 12)) sd_end = sd + 12;
    if (!dim_end || !sd_end) return -1;
    char last[4], ref[32];
    tl_xlsx_col_name(p->t->ncols - 1, last);
    size_t rows = p->r1 - p->r0 + 1;
    if (rows == 1 && p->t->ncols == 1) snprintf(ref, sizeof ref, "A1");
    else snprintf(ref, sizeof ref, "A1:%s%zu", last, rows);
    if (tl_xlsx_entry_write(out, old, (size_t)(dim - old)) || tl_xlsx_entry_write(out, ref, strlen(ref)) ||
        tl_xlsx_entry_write(out, dim_end, (size_t)(sd - dim_end)) || tl_xlsx_entry_write(out, "<sheetData>", 11) ||
        tl_xlsx_rows_xml(p->t, p->r0, p->r1, bk->hdr_xf, p->kind, bk->xf, &bk->sst, tl_xlsx_entry_write, out) ||
        tl_xlsx_entry_write(out, "</sheetData>", 12))
        return -1;
    return tl_xlsx_entry_write(out, sd_end, old_len - (size_t)(sd_end - old));
}

static uint64_t sst_bound(void *ctx, size_t i, const char *old, size_t old_len)
{
    (void)i, (void)old, (void)old_len;
    return tl_xlsx_sst_xml_bound(&((book *)ctx)->sst);
}

static int sst_fill(void *ctx, size_t i, const char *old, size_t old_len, tl_xlsx_entry *out)
{
    (void)i, (void)old, (void)old_len;
    return tl_xlsx_sst_xml(&((book *)ctx)->sst, tl_xlsx_entry_write, out);
}

int tl_xlsx_write(const struct tl_sheets *s, const char *path, tl_error *err)
{
    return tl_xlsx_write_hiding(s, path, NULL, NULL, err);
}

/* libxlsxwriter builds the workbook with the header rows only (styles,
 * widths, panes, filters: a small skeleton); the rows are then written
 * straight into the worksheets' XML while the package is copied, every text
 * a shared string (a long table repeats few texts), deflated at ISA-L's fast
 * level. A million-row sheet costs neither memory nor libxlsxwriter's
 * per-cell work and zlib's default level. */
int tl_xlsx_write_hiding(const struct tl_sheets *s, const char *path, tl_xlsx_hide_fn hide, void *ctx,
                         tl_error *err)
{
    size_t plen = strlen(path);
    char *skel = tl_xmalloc(plen + 16);
    snprintf(skel, plen + 16, "%s.skeleton", path);
    lxw_workbook *wb = workbook_new(skel);
    if (!wb) {
        tl_error_set(err, "%s: cannot create the workbook", path);
        free(skel);
        return -1;
    }
    lxw_format *hdr = workbook_add_format(wb);
    format_set_bold(hdr);
    format_set_bg_color(hdr, 0xDDE4EE);
    format_set_bottom(hdr, LXW_BORDER_THIN);
    book bk;
    memset(&bk, 0, sizeof bk);
    add_formats(wb, &bk);
    tl_xlsx_sst_init(&bk.sst);
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++) {
        if (add_sheet(wb, hdr, &bk, &s->v[i], hide, ctx) != 0) {
            tl_error_set(err, "%s: sheet %s: not a valid Excel sheet name or too many columns", path, s->v[i].name);
            rc = -1;
        }
    }
    bk.hdr_xf = lxw_format_get_xf_index(hdr);
    for (int k = 0; k < TL_XK__COUNT; k++) bk.xf[k] = bk.fmt[k] ? lxw_format_get_xf_index(bk.fmt[k]) : -1;
    lxw_error lrc = workbook_close(wb);
    if (rc == 0 && lrc != LXW_NO_ERROR) {
        tl_error_set(err, "%s: cannot write the workbook: %s", path, lxw_strerror(lrc));
        rc = -1;
    }
    if (rc == 0) {
        tl_xlsx_replace *repl = tl_xmalloc((bk.parts.n + 1) * sizeof *repl);
        size_t nr = 0;
        int any_cells = 0;
        for (size_t i = 0; i < bk.parts.n; i++) {
            repl[nr++] = (tl_xlsx_replace){bk.parts.v[i].entry, sheet_bound, sheet_fill};
            if (bk.parts.v[i].t->ncols) any_cells = 1;
        }
        /* the texts are known once every sheet is written (no column, no text) */
        if (any_cells) repl[nr++] = (tl_xlsx_replace){"xl/sharedStrings.xml", sst_bound, sst_fill};
        rc = tl_xlsx_repack(skel, path, repl, nr, &bk, err);
        free(repl);
    }
    unlink(skel);
    free(skel);
    for (size_t i = 0; i < bk.parts.n; i++) free(bk.parts.v[i].kind);
    free(bk.parts.v);
    tl_xlsx_sst_free(&bk.sst);
    return rc;
}
