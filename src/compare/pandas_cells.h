/* pandas_cells.h — how pandas turns the cells of a sheet into typed columns:
 * the NA strings, the text of numbers and booleans, the column types and the
 * header names (mangling). Shared by the CSV reader (csv_read.h, every cell
 * text) and the workbook reader (xlsx_read.h, cells with numbers and booleans
 * of their own). Owns nothing: the cells point into the caller's text buffer.
 *
 * A cell is missing, text (NUL-terminated, in the reader's buffer), or, from
 * a workbook, an integer (fits int64), a float or a boolean.
 * Text: pandas' default NA strings ("", "NaN", "nan", "NA", "N/A", "n/a",
 * "NULL", "null", "None", "<NA>", "#N/A", "#NA", "-NaN", "-nan", "1.#IND",
 * "-1.#IND", "1.#QNAN", "-1.#QNAN", "#N/A N/A") are missing; [ws][+-]digits
 * [ws] fitting int64 is an integer; a decimal number or [+-]inf/infinity is a
 * float (correctly rounded); True/TRUE/true/False/FALSE/false is boolean text.
 * Column type (pandas' maybe_convert_numeric, then maybe_convert_bool):
 *   - no value at all -> F64 (all missing);
 *   - some text that is not a number: BOOL when every value is a boolean or
 *     boolean text (missing cells allowed), else STR;
 *   - otherwise (numbers and booleans only): F64 when a cell is missing or a
 *     value is a float (booleans become 1.0 / 0.0), I64 when a value is an
 *     integer (booleans become 1 / 0), BOOL when every value is a boolean.
 * In a STR column the cells hold the text pandas' object column holds:
 * text as it is, numbers as Python's str() (integers in decimal, floats as
 * repr, integral floats beyond int64 in full decimal), booleans as
 * True / False. */
#ifndef TL_PANDAS_CELLS_H
#define TL_PANDAS_CELLS_H

#include <stddef.h>
#include <stdint.h>

#include "../table/table.h"
#include "../util/sbuf.h"

typedef enum tl_pc_kind { TL_PC_NONE, TL_PC_TEXT, TL_PC_INT, TL_PC_FLOAT, TL_PC_BOOL } tl_pc_kind;

typedef struct tl_pcell {
    union {
        size_t off; /* TEXT: offset of the NUL-terminated text in the buffer */
        int64_t i;  /* INT, BOOL (0 / 1) */
        double f;   /* FLOAT */
    } v;
    size_t len;     /* TEXT: its length in bytes */
    int kind;       /* tl_pc_kind */
} tl_pcell;

/* pandas' default NA strings. */
int tl_pd_is_na(const char *s);

/* The text rules above; 1 when s is such a value (stored in *out). */
int tl_pd_parse_int(const char *s, int64_t *out);
int tl_pd_parse_float(const char *s, double *out);
int tl_pd_parse_bool(const char *s, int *out);

/* The type of column `col` of a row-major grid of nrows x ncols cells
 * whose texts are in `text`. */
tl_coltype tl_pd_column_type(const tl_pcell *cells, size_t nrows, size_t ncols, size_t col, const char *text);

/* Fills column `col` of t (rows 0..nrows-1 exist, all missing) from the
 * grid, converting each value to the column's type. */
void tl_pd_fill_column(tl_table *t, size_t col, const tl_pcell *cells, size_t nrows, size_t ncols,
                       const char *text);

/* Appends the text pandas holds for a cell in an object (STR) column, or as
 * a column name: str() of the value; nothing for a missing cell. */
void tl_pd_cell_text(const tl_pcell *c, const char *text, tl_sbuf *out);

/* pandas' column names from a header row of n cells: str() of each, an
 * empty one "Unnamed: i", then repeats mangled to "x.1", "x.2", ... (the
 * named columns first, a name already taken skipped, as pandas does).
 * Returns n malloc'd names in a malloc'd array (the caller frees both). */
char **tl_pd_header_names(const tl_pcell *h, size_t n, const char *text);

#endif
