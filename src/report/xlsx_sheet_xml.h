/* xlsx_sheet_xml.h — a table's cells as SpreadsheetML text: the <row>/<c>
 * elements of a worksheet (the header row first, in a given cell style, then
 * the data rows), every text cell a shared string, and the shared-string
 * table (xl/sharedStrings.xml) the cells index.
 *
 * Owns the shared-string pool of one workbook; reads the tables only. The
 * text goes to the caller's sink in blocks of a few hundred KiB. */
#ifndef TL_XLSX_SHEET_XML_H
#define TL_XLSX_SHEET_XML_H

#include <stddef.h>
#include <stdint.h>

#include "../table/table.h"
#include "../util/strpool.h"

/* Receives the next n bytes of text; non-zero stops the writer. */
typedef int (*tl_xlsx_sink)(void *ctx, const char *p, size_t n);

typedef struct tl_xlsx_sst {
    tl_strpool pool; /* distinct texts; a text's id is its shared-string index */
    uint64_t refs;   /* text cells that refer to the table (its count attribute) */
} tl_xlsx_sst;

void tl_xlsx_sst_init(tl_xlsx_sst *s);
void tl_xlsx_sst_free(tl_xlsx_sst *s);

/* Excel's widest worksheet. */
enum { TL_XLSX_MAX_COLS = 16384 };

/* The spreadsheet column name of column c (0 -> "A", 26 -> "AA"); out has
 * room for 4 bytes. */
void tl_xlsx_col_name(size_t c, char out[4]);

/* Column widths in characters fitted to the header and rows r0..r1 (text:
 * length + 2; numbers 12, integers 8, booleans 6), uncapped. */
void tl_xlsx_col_widths(const tl_table *t, size_t r0, size_t r1, double *width);

/* How a column's cells are shown: the number format the workbook gives
 * them (the values are written in full either way). */
typedef enum tl_xlsx_kind {
    TL_XK_TEXT = 0,  /* text, booleans: no format */
    TL_XK_INT,       /* integers, "0" */
    TL_XK_INT_TEXT,  /* a text column whose every value is a plain integer (param: M,
                        num_kernels in the reference's text form): written as numbers, "0" */
    TL_XK_TIME,      /* times and durations (us, ms, time, duration): "#,##0.000" */
    TL_XK_PERCENT,   /* percentages on a 0-100 scale: "0.00" */
    TL_XK_TFLOPS,    /* TFLOPS/s: "0.00" */
    TL_XK_FLOAT,     /* any other float: "0.000###" */
    TL_XK__COUNT
} tl_xlsx_kind;

/* The kind of every column of t over rows r0..r1, from its type, its name
 * and (text columns) its values. */
void tl_xlsx_col_kinds(const tl_table *t, size_t r0, size_t r1, tl_xlsx_kind *kind);

/* Writes the header row (cells in style hdr_xf) and rows r0..r1 of t as
 * worksheet rows 1, 2, ...: numbers as numbers (a float as Python's repr;
 * NaN as an empty cell, infinities as the text inf / -inf), booleans as
 * booleans, texts (cut to Excel's 32767 characters) as shared strings of
 * sst (an empty text as an empty cell, as in the CSV); a TL_XK_INT_TEXT
 * column's texts as numbers. Column c's cells get style xf[kind[c]] (-1:
 * none); kind and xf may be NULL (every column as its type, no styles).
 * Returns non-zero when the sink did. */
int tl_xlsx_rows_xml(const tl_table *t, size_t r0, size_t r1, int hdr_xf, const tl_xlsx_kind *kind,
                     const int *xf, tl_xlsx_sst *sst, tl_xlsx_sink sink, void *ctx);

/* An upper bound on the bytes tl_xlsx_rows_xml writes for these rows. */
uint64_t tl_xlsx_rows_xml_bound(const tl_table *t, size_t r0, size_t r1);

/* Writes xl/sharedStrings.xml for the texts of sst. */
int tl_xlsx_sst_xml(const tl_xlsx_sst *sst, tl_xlsx_sink sink, void *ctx);
uint64_t tl_xlsx_sst_xml_bound(const tl_xlsx_sst *sst);

#endif
