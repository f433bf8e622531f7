/* xlsx_read.h — the worksheets of an .xlsx workbook read into Tables as
 * pandas.read_excel(path, sheet_name=None) (openpyxl engine) reads them.
 * A book owns its open zip archive, the sheet list and the shared strings;
 * each table it returns is the caller's. Not shared between threads.
 *
 * Parts (minizip): xl/workbook.xml (the sheets, in order, with their names),
 * xl/_rels/workbook.xml.rels (each sheet's part, and the shared strings'
 * part, else xl/sharedStrings.xml when present), xl/sharedStrings.xml and the
 * worksheets, scanned by xml_scan.h. Only worksheets are listed (chart and
 * dialog sheets are left out).
 * Cells (<c r=".." t=".."> with <v> or <is>), as openpyxl reads them:
 *   - t="s": the shared string <v>; t="inlineStr": the <is> text; t="str":
 *     the <v> text. A string is its <t> text followed by every rich-text
 *     run's <r><t> (phonetic <rPh> runs left out); in shared strings every
 *     "x005F_" is removed (openpyxl's only unescaping: "_x005F_x0041_" reads
 *     "_x0041_", "_x0001_" stays as it is);
 *   - t="n" (or none): a number: an integer, or a float when the text has
 *     '.', 'e' or 'E'; a float with an integral value within int64 is an
 *     integer (pandas' reader). Date styles are not applied (a date reads as
 *     its serial number);
 *   - t="b": a boolean (<v> nonzero); t="e": an error, read as NaN
 *     (missing, "nan" as a column name); t="d": the ISO text, as text;
 *   - no <v> (or an empty one): an empty cell. Formulas (<f>) are ignored:
 *     the cached <v> is the value.
 * Layout: a cell's column comes from its r (else the one after the previous
 * cell); a row's cells reach the column of its last cell; rows come from
 * their r (else the one after the previous row; a row at or before one
 * already read is skipped); missing rows are empty rows. Then pandas: trailing
 * empty cells and trailing empty rows are dropped, the rows are padded to
 * the widest, no blank row is skipped (read_excel passes
 * skip_blank_lines=False), and the first row is the header: str() of each
 * value, "Unnamed: i" for an empty one, repeats mangled "x.1", "x.2"
 * (pandas_cells.h). A sheet without any value is a table without columns.
 * Column types: pandas_cells.h (text cells as the CSV reader reads text;
 * numbers and booleans as they are: booleans with missing cells -> F64,
 * booleans with integers -> I64, numbers with text -> STR holding str() of
 * the numbers). Integers beyond int64 are floats (pandas: uint64 up to
 * 2^64 - 1).
 * Limits (a hostile file fails cleanly): each part at most
 * TL_XLSX_MAX_PART bytes uncompressed; cell references within Excel's
 * 1048576 rows x 16384 columns; a sheet's rows x columns at most
 * max(TL_XLSX_GRID_FLOOR, TL_XLSX_GRID_PER_VALUE x its values).
 * Errors: "FILE: part P: byte N: what was expected" (or "FILE: what"). */
#ifndef TL_XLSX_READ_H
#define TL_XLSX_READ_H

#include <stddef.h>

#include "../table/table.h"
#include "../util/error.h"

#define TL_XLSX_MAX_PART ((size_t)512 << 20)
#define TL_XLSX_GRID_FLOOR ((size_t)1 << 22)
#define TL_XLSX_GRID_PER_VALUE 16

typedef struct tl_xlsx_book tl_xlsx_book;

/* Opens the workbook: reads its sheet list and shared strings. NULL with
 * err set when it is not a readable workbook. */
tl_xlsx_book *tl_xlsx_open(const char *path, tl_error *err);
void tl_xlsx_close(tl_xlsx_book *b);

size_t tl_xlsx_sheet_count(const tl_xlsx_book *b);
const char *tl_xlsx_sheet_name(const tl_xlsx_book *b, size_t i);
/* The index of the sheet named exactly `name`, or -1. */
long tl_xlsx_sheet_index(const tl_xlsx_book *b, const char *name);

/* Reads sheet i into a table named after it; NULL with err set. */
tl_table *tl_xlsx_read_sheet(tl_xlsx_book *b, size_t i, tl_error *err);

/* Every worksheet, in workbook order: an array of *n tables (the caller
 * frees each and the array), or NULL with err set. */
tl_table **tl_xlsx_read_all(const char *path, size_t *n, tl_error *err);

#endif
