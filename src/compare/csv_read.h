/* csv_read.h — a CSV file read into a Table as pandas.read_csv (C engine,
 * default options) reads it. Owns nothing but the table it returns.
 *
 * Text: UTF-8 (a leading BOM is skipped), RFC 4180 quoting ("" inside quotes
 * is one quote; a quote after a closing quote or inside an unquoted field is
 * kept as a character, as pandas' tokenizer does), records end at "\n",
 * "\r\n" or "\r" outside quotes, blank and whitespace-only lines are skipped.
 * The first record is the header: an empty name becomes "Unnamed: i", a
 * repeated one "name.1", "name.2" (pandas' mangling, pandas_cells.h). A
 * shorter record is padded with missing cells; a longer one is an error.
 * Cells are text: pandas' NA strings are missing, quoted or not, and each
 * column gets pandas' type from its texts (pandas_cells.h): every value an
 * integer that fits int64 -> I64 (F64 when the column also has missing
 * cells); every value a decimal number or [+-]inf/infinity -> F64 (correctly
 * rounded, strtod); every value True/TRUE/true/False/FALSE/false -> BOOL;
 * otherwise STR (the text as is). A column without any value is F64.
 * An empty file (or only blank lines) is a table without columns or rows. */
#ifndef TL_CSV_READ_H
#define TL_CSV_READ_H

#include <stddef.h>

#include "../table/table.h"
#include "../util/error.h"

/* Reads the file at path; the table is named `name`. NULL with err set
 * ("PATH: line N: what was expected") on a bad file. */
tl_table *tl_csv_read(const char *path, const char *name, tl_error *err);

/* The same on bytes in memory; `what` names them in errors. */
tl_table *tl_csv_parse(const char *data, size_t n, const char *what, const char *name, tl_error *err);

#endif
