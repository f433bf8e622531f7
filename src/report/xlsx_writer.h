/* xlsx_writer.h — the perf report as one .xlsx workbook: one worksheet per
 * sheet in report order, numbers as numbers, a bold frozen header row, an
 * autofilter and column widths fitted to the content. libxlsxwriter builds
 * the workbook with the header rows (a skeleton, next to the output while it
 * is written); the rows are streamed into its worksheets as the package is
 * copied (xlsx_sheet_xml.h, xlsx_package.h). Owns nothing after a call. */
#ifndef TL_XLSX_WRITER_H
#define TL_XLSX_WRITER_H

#include "../util/error.h"

struct tl_sheets;
int tl_xlsx_write(const struct tl_sheets *s, const char *path, tl_error *err);

/* The same, hiding the columns for which hide(ctx, sheet, column) is 1.
 * Sheet names are cut to Excel's 31 characters; a name already used
 * (ignoring case) gets a "~N" tail instead. */
typedef int (*tl_xlsx_hide_fn)(void *ctx, const char *sheet, const char *col);
int tl_xlsx_write_hiding(const struct tl_sheets *s, const char *path, tl_xlsx_hide_fn hide, void *ctx,
                         tl_error *err);

#endif
