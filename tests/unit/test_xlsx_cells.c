/* Every kind of cell survives the workbook writer: a table with texts that
 * need escaping (& < > and quotes, control characters, a literal "_x0041_",
 * leading/trailing blanks, non-ASCII), a text longer than Excel's 32767
 * characters (cut with "..."), repeated texts (one shared string), floats
 * (NaN as an empty cell, infinities as text), integers and booleans; plus a
 * sheet with columns but no rows and one with no columns. The workbook is
 * read back with python3-openpyxl by tests/unit/xlsx_cells_check.py (skipped,
 * exit 77, without it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "openpyxl_python.h"
#include "report/report.h"
#include "report/xlsx_writer.h"
#include "table/table.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_xlsx_cells CHECK_SCRIPT\n");
        return 2;
    }
    tl_table *t = tl_table_new("cells");
    size_t cs = tl_table_add_col(t, "text & <more>", TL_COL_STR), cf = tl_table_add_col(t, "f", TL_COL_F64),
           ci = tl_table_add_col(t, "i", TL_COL_I64), cb = tl_table_add_col(t, "b", TL_COL_BOOL);
    char *longtext = malloc(40001);
    for (int i = 0; i < 40000; i++) longtext[i] = (char)('a' + i % 26);
    longtext[39998] = (char)0xC3; /* é across the cut does not matter: the cut is far before */
    longtext[39999] = (char)0xA9;
    longtext[40000] = 0;
    const char *texts[] = {"a&b<c>\"d'", "ctl\x01" "x\x1f", "_x0041_", " padded ", "naïve – ✓", NULL, longtext,
                           "a&b<c>\"d'", "", "line\nbreak"};
    double fs[] = {1.5, NAN, INFINITY, -INFINITY, 21.008, 0.1 + 0.2, -0.0, 1e300, 3.0, 123456789.125};
    for (int r = 0; r < 10; r++) {
        size_t row = tl_table_add_row(t);
        tl_table_set_str(t, cs, row, texts[r]);
        tl_table_set_f64(t, cf, row, fs[r]);
        if (r != 3) tl_table_set_i64(t, ci, row, r == 5 ? -9007199254740993LL : r * 1000);
        if (r < 2) tl_table_set_bool(t, cb, row, r == 0);
    }
    free(longtext);
    tl_table *empty = tl_table_new("empty");
    tl_table_add_col(empty, "x", TL_COL_F64);
    tl_table_add_col(empty, "y", TL_COL_STR);
    tl_table *nocols = tl_table_new("nocols");
    tl_sheet v[3] = {{(char *)"cells", t, 0}, {(char *)"empty", empty, 0}, {(char *)"nocols", nocols, 0}};
    tl_sheets s = {v, 3, 3};
    char path[] = "/tmp/tl_xlsx_cells_XXXXXX.xlsx";
    int fd = mkstemps(path, 5);
    if (fd < 0) return 1;
    close(fd);
    tl_error err;
    int rc = tl_xlsx_write(&s, path, &err);
    tl_table_free(t);
    tl_table_free(empty);
    tl_table_free(nocols);
    if (rc != 0) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return 1;
    }
    const char *py = tl_test_openpyxl_python();
    if (!py) {
        unlink(path);
        return 77;
    }
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s '%s' '%s'", py, argv[1], path);
    rc = system(cmd);
    unlink(path);
    return rc == 0 ? 0 : 1;
}
