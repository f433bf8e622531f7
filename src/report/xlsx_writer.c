#include "xlsx_writer.h"

#include <math.h>
#include <string.h>
#include <strings.h>
#include <xlsxwriter.h>

#include "../util/vec.h"
#include "report.h"

enum { MAX_CELL = 32767, MAX_WIDTH = 60 };
/* Excel's rows per worksheet, less the header row (overridable for tests). */
#ifndef TL_XLSX_MAX_DATA_ROWS
#define TL_XLSX_MAX_DATA_ROWS 1048575
#endif
static const size_t MAX_DATA_ROWS = TL_XLSX_MAX_DATA_ROWS;

/* Excel limits a string cell to 32767 characters: longer text is cut on a
 * UTF-8 boundary (only kernel-detail lists can get there). */
static void write_text(lxw_worksheet *ws, lxw_row_t r, lxw_col_t c, const char *s, size_t n)
{
    if (n <= MAX_CELL) {
        worksheet_write_string(ws, r, c, s, NULL);
        return;
    }
    size_t cut = MAX_CELL - 3;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
    char *t = tl_xmalloc(cut + 4);
    memcpy(t, s, cut);
    memcpy(t + cut, "...", 4);
    worksheet_write_string(ws, r, c, t, NULL);
    free(t);
}

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

/* Rows r0 .. r1 of a table as one worksheet named after the sheet (taken
 * names end in ~N). */
static int write_part(lxw_workbook *wb, lxw_format *hdr, const tl_sheet *sh, size_t r0, size_t r1,
                      tl_xlsx_hide_fn hide, void *ctx)
{
    char nm[NAME_CAP];
    sheet_name(nm, sizeof nm, sh->name);
    unique_sheet_name(wb, nm);
    lxw_worksheet *ws = workbook_add_worksheet(wb, nm);
    if (!ws) return -1;
    const tl_table *t = sh->table;
    double *width = tl_xcalloc(t->ncols + 1, sizeof *width);
    for (size_t c = 0; c < t->ncols; c++) {
        worksheet_write_string(ws, 0, (lxw_col_t)c, t->cols[c].name, hdr);
        width[c] = (double)strlen(t->cols[c].name) + 2;
    }
    tl_sbuf sb;
    tl_sb_init(&sb);
    for (size_t r = r0; r < r1; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (tl_table_is_null(t, c, r)) continue;
            lxw_row_t xr = (lxw_row_t)(r - r0 + 1);
            const tl_col *col = &t->cols[c];
            double w;
            switch (col->type) {
            case TL_COL_F64:
                worksheet_write_number(ws, xr, (lxw_col_t)c, col->v.f[r], NULL);
                w = 12;
                break;
            case TL_COL_I64:
                worksheet_write_number(ws, xr, (lxw_col_t)c, (double)col->v.i[r], NULL);
                w = 8;
                break;
            case TL_COL_BOOL:
                worksheet_write_boolean(ws, xr, (lxw_col_t)c, (int)col->v.i[r], NULL);
                w = 6;
                break;
            default: {
                tl_sb_clear(&sb);
                tl_table_cell_text(t, c, r, &sb);
                write_text(ws, xr, (lxw_col_t)c, sb.s ? sb.s : "", sb.len);
                w = (double)sb.len + 2;
            }
            }
            if (w > width[c]) width[c] = w;
        }
    }
    tl_sb_free(&sb);
    lxw_row_col_options hidden = {.hidden = 1, .level = 0, .collapsed = 0};
    for (size_t c = 0; c < t->ncols; c++)
        worksheet_set_column_opt(ws, (lxw_col_t)c, (lxw_col_t)c, width[c] > MAX_WIDTH ? MAX_WIDTH : width[c], NULL,
                                 hide && hide(ctx, sh->name, t->cols[c].name) ? &hidden : NULL);
    free(width);
    worksheet_freeze_panes(ws, 1, 0);
    if (t->ncols) worksheet_autofilter(ws, 0, 0, (lxw_row_t)(r1 - r0), (lxw_col_t)(t->ncols - 1));
    return 0;
}

/* A sheet longer than Excel's 1,048,576 rows goes on as "<name>~1", "~2", ...
 * (each with the header row), so no row is lost. */
static int write_sheet(lxw_workbook *wb, lxw_format *hdr, const tl_sheet *sh, tl_xlsx_hide_fn hide, void *ctx)
{
    size_t n = sh->table->nrows, r0 = 0;
    do {
        size_t r1 = n - r0 > MAX_DATA_ROWS ? r0 + MAX_DATA_ROWS : n;
        if (write_part(wb, hdr, sh, r0, r1, hide, ctx) != 0) return -1;
        r0 = r1;
    } while (r0 < n);
    return 0;
}

int tl_xlsx_write(const struct tl_sheets *s, const char *path, tl_error *err)
{
    return tl_xlsx_write_hiding(s, path, NULL, NULL, err);
}

int tl_xlsx_write_hiding(const struct tl_sheets *s, const char *path, tl_xlsx_hide_fn hide, void *ctx,
                         tl_error *err)
{
    /* constant memory: rows are streamed (they are written in order) and strings
     * are inline, so a sheet of a million rows costs neither memory nor a
     * shared-string table */
    lxw_workbook_options opt = {.constant_memory = LXW_TRUE, .tmpdir = NULL};
    lxw_workbook *wb = workbook_new_opt(path, &opt);
    if (!wb) {
        tl_error_set(err, "%s: cannot create the workbook", path);
        return -1;
    }
    lxw_format *hdr = workbook_add_format(wb);
    format_set_bold(hdr);
    for (size_t i = 0; i < s->n; i++) {
        if (write_sheet(wb, hdr, &s->v[i], hide, ctx) != 0) {
            tl_error_set(err, "%s: sheet %s: not a valid Excel sheet name", path, s->v[i].name);
            workbook_close(wb);
            return -1;
        }
    }
    lxw_error rc = workbook_close(wb);
    if (rc != LXW_NO_ERROR) {
        tl_error_set(err, "%s: cannot write the workbook: %s", path, lxw_strerror(rc));
        return -1;
    }
    return 0;
}
