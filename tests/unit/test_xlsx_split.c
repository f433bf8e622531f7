/* A table longer than an Excel worksheet continues on "<name>~1", "~2", ...
 * with the header repeated, and no row is lost. Built with the row limit
 * lowered to 3 (TL_XLSX_MAX_DATA_ROWS), so 7 rows give sheets of 3, 3 and 1,
 * and with ZIP64 fields on every entry past 64 bytes (TL_XLSX_ZIP32_LIMIT:
 * the path a worksheet of more than 4 GiB of XML takes);
 * the workbook is read back with python3-openpyxl (skipped, exit 77, when it
 * is missing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "openpyxl_python.h"
#include "report/report.h"
#include "report/xlsx_writer.h"
#include "table/table.h"

int main(void)
{
    tl_table *t = tl_table_new("big");
    size_t cn = tl_table_add_col(t, "n", TL_COL_I64), cs = tl_table_add_col(t, "s", TL_COL_STR);
    for (int i = 0; i < 7; i++) {
        size_t r = tl_table_add_row(t);
        tl_table_set_i64(t, cn, r, i);
        char buf[16];
        snprintf(buf, sizeof buf, "row %d", i);
        tl_table_set_str(t, cs, r, buf);
    }
    tl_table *small = tl_table_new("small");
    size_t c0 = tl_table_add_col(small, "x", TL_COL_F64);
    tl_table_set_f64(small, c0, tl_table_add_row(small), 0.5);
    tl_sheet v[2] = {{(char *)"big", t, 0}, {(char *)"small", small, 0}};
    tl_sheets s = {v, 2, 2};
    char path[] = "/tmp/tl_xlsx_split_XXXXXX.xlsx";
    int fd = mkstemps(path, 5);
    if (fd < 0) return 1;
    close(fd);
    tl_error err;
    if (tl_xlsx_write(&s, path, &err) != 0) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return 1;
    }
    tl_table_free(t);
    tl_table_free(small);
    const char *py = tl_test_openpyxl_python();
    if (!py) {
        unlink(path);
        return 77;
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "%s -c \"import openpyxl; wb = openpyxl.load_workbook('%s'); "
             "print(';'.join('%%s:%%d:%%s:%%s' %% (ws.title, ws.max_row, ws.cell(1, 1).value, ws.cell(2, 2).value) "
             "for ws in wb.worksheets))\"",
             py, path);
    FILE *p = popen(cmd, "r");
    char out[256] = "";
    if (!p || !fgets(out, sizeof out, p)) return 1;
    pclose(p);
    unlink(path);
    out[strcspn(out, "\n")] = 0;
    /* max_row counts the header: 3 + 1, 3 + 1, 1 + 1 */
    const char *want = "big:4:n:row 0;big~1:4:n:row 3;big~2:2:n:row 6;small:2:x:None";
    if (strcmp(out, want) != 0) {
        fprintf(stderr, "FAIL: sheets %s, expected %s\n", out, want);
        return 1;
    }
    printf("1 passed, 0 failed\n");
    return 0;
}
