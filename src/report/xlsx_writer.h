/* xlsx_writer.h — the perf report as one .xlsx workbook (libxlsxwriter):
 * one worksheet per sheet in report order, numbers as numbers, a bold frozen
 * header row, an autofilter and column widths fitted to the content. */
#ifndef TL_XLSX_WRITER_H
#define TL_XLSX_WRITER_H

#include "../util/error.h"

struct tl_sheets;
int tl_xlsx_write(const struct tl_sheets *s, const char *path, tl_error *err);

#endif
