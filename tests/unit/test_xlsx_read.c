/* The workbook reader (src/compare/xlsx_read.h) against pandas.read_excel:
 * tests/unit/xlsx_read_make.py builds a workbook with python3-openpyxl
 * (every kind of cell: shared, rich-text, phonetic and inline strings,
 * _xHHHH_ escapes, entities, CDATA, numbers, booleans, errors, formulas,
 * empty cells, cells without r, a missing header cell and row, repeated
 * names, trailing empty cells and rows). Each sheet read is written as CSV
 * and compared with the text pandas 1.5 gives (written down here), and, when
 * python3-pandas is installed, with pandas' own output too; the column
 * types are checked. Then the errors: a file that is not a zip, a zip
 * without a workbook, malformed XML, a hostile sheet. Skipped (exit 77)
 * without openpyxl. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/xlsx_read.h"
#include "openpyxl_python.h"
#include "table/table.h"

static int fails, passes;

#define CHECK(c, ...)                                                                                                 \
    do {                                                                                                              \
        if (c) passes++;                                                                                              \
        else {                                                                                                        \
            fails++;                                                                                                  \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                      \
            fprintf(stderr, __VA_ARGS__);                                                                             \
            fputc('\n', stderr);                                                                                      \
        }                                                                                                             \
    } while (0)

static const struct {
    const char *sheet, *csv;
} WANT[] = {
    {"typed",
     "int,int_missing,float,integral_floats,bool,bool_missing,bool_int,text,text_numbers,text_bools,text_bool_cells,"
     "na_text,mixed,bool_text,empty,Unnamed: 15,text.1,text.2\n"
     "1,1.0,0.5,1,True,1.0,1,a,5,True,True,,1,True,,1,u,0\n"
     "2,,1e-05,2,False,,5,b,6,False,True,4.0,abc,x,,2,v,1\n"
     "3,3.0,1e+20,3,True,0.0,0,c,7,,False,,2.5,False,,3,w,2\n"
     "4,4.0,-2.25,4,False,1.0,0,d,8,True,False,5.0,100000000000000000000,,,4,z,3\n"},
    {"raw", "text,inline,dup,Unnamed: 3,f,dup.1,err,mixed\n"
            "rich text,ab,1.0,2.5,2.0,1.0,,7\n"
            "_x0041_ a&b <c> \xc3\xa9,<cdata> & ,,1500.0,3.0,0.0,4.0,x\n"
            ",,,,,,,\n"
            "ctl_x0001_,  spaced  ,3.0,-0.125,4.0,1.0,5.0,0.5\n"
            "kanji,\"\xe2\x98\xba & <>\"\"'\",4.0,0.001,5.0,0.0,6.0,True\n"},
    {"empty", "\n"},
    {"header", "a,b,Unnamed: 2,a.1\n"},
};

/* pandas' dtypes of the typed sheet (object columns of booleans and NaN
 * are BOOL here: the same CSV text). */
static const tl_coltype TYPED[] = {TL_COL_I64, TL_COL_F64, TL_COL_F64, TL_COL_I64,  TL_COL_BOOL, TL_COL_F64,
                                   TL_COL_I64, TL_COL_STR, TL_COL_I64, TL_COL_BOOL, TL_COL_BOOL, TL_COL_F64,
                                   TL_COL_STR, TL_COL_STR, TL_COL_F64, TL_COL_I64,  TL_COL_STR,  TL_COL_I64};

static char *csv_text(const tl_table *t)
{
    if (t->ncols == 0) return strdup("\n"); /* pandas: an empty frame is one newline */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    tl_table_write_csv(t, f);
    fclose(f);
    return buf;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int c;
    while ((c = fgetc(f)) != EOF) fputc(c, m);
    fclose(m);
    fclose(f);
    return buf;
}

static void write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

/* Reading `path` fails with an error containing `want`. */
static void expect_error(const char *path, const char *want, const char *what)
{
    tl_error err = {{0}};
    size_t n = 0;
    tl_table **t = tl_xlsx_read_all(path, &n, &err);
    CHECK(!t, "%s: read, expected an error", what);
    CHECK(strstr(err.msg, want) != NULL, "%s: error '%s', expected '%s'", what, err.msg, want);
    if (t) {
        for (size_t i = 0; i < n; i++) tl_table_free(t[i]);
        free(t);
    }
}

/* A copy of the workbook with one part's bytes replaced (python3's zipfile). */
static int replace_part(const char *py, const char *dir, const char *src, const char *dst, const char *part,
                        const char *text)
{
    char bytes[600], cmd[2048];
    snprintf(bytes, sizeof bytes, "%s/part.bin", dir);
    write_file(bytes, text, strlen(text));
    snprintf(cmd, sizeof cmd,
             "%s -c \"import sys, zipfile\n"
             "zin = zipfile.ZipFile(sys.argv[1]); zout = zipfile.ZipFile(sys.argv[2], 'w', zipfile.ZIP_DEFLATED)\n"
             "new = open(sys.argv[4], 'rb').read()\n"
             "[zout.writestr(i, new if i.filename == sys.argv[3] else zin.read(i.filename)) for i in zin.infolist()]\n"
             "zout.close()\" '%s' '%s' '%s' '%s'",
             py, src, dst, part, bytes);
    return system(cmd);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_xlsx_read MAKE_SCRIPT\n");
        return 2;
    }
    const char *py = tl_test_openpyxl_python();
    if (!py) return 77;
    char dir[] = "/tmp/tl_xlsx_read_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char book[512], cmd[2048], path[600];
    snprintf(book, sizeof book, "%s/t.xlsx", dir);
    snprintf(cmd, sizeof cmd, "%s '%s' '%s'", py, argv[1], book);
    if (system(cmd) != 0) {
        fprintf(stderr, "FAIL: %s\n", cmd);
        return 1;
    }
    snprintf(cmd, sizeof cmd, "%s -c 'import pandas' 2>/dev/null", py);
    int have_pandas = system(cmd) == 0;
    if (have_pandas) {
        snprintf(cmd, sizeof cmd, "%s '%s' --pandas '%s' '%s'", py, argv[1], book, dir);
        have_pandas = system(cmd) == 0;
        CHECK(have_pandas, "pandas.read_excel of the workbook");
    }

    tl_error err = {{0}};
    size_t n = 0;
    tl_table **t = tl_xlsx_read_all(book, &n, &err);
    CHECK(t != NULL, "read: %s", err.msg);
    CHECK(n == sizeof WANT / sizeof *WANT, "%zu sheets", n);
    for (size_t i = 0; t && i < n && i < sizeof WANT / sizeof *WANT; i++) {
        CHECK(!strcmp(t[i]->name, WANT[i].sheet), "sheet %zu is '%s', expected '%s'", i, t[i]->name, WANT[i].sheet);
        char *got = csv_text(t[i]);
        CHECK(!strcmp(got, WANT[i].csv), "sheet %s:\n%s\nexpected\n%s", WANT[i].sheet, got, WANT[i].csv);
        if (have_pandas) {
            snprintf(path, sizeof path, "%s/%s.csv", dir, WANT[i].sheet);
            char *pd = slurp(path);
            CHECK(pd && !strcmp(got, pd), "sheet %s:\n%s\npandas gives\n%s", WANT[i].sheet, got, pd ? pd : "(none)");
            free(pd);
        }
        free(got);
    }
    if (t && n > 0) {
        CHECK(t[0]->ncols == sizeof TYPED / sizeof *TYPED, "typed: %zu columns", t[0]->ncols);
        for (size_t c = 0; c < t[0]->ncols && c < sizeof TYPED / sizeof *TYPED; c++)
            CHECK(t[0]->cols[c].type == TYPED[c], "typed: column %s has type %d, expected %d", t[0]->cols[c].name,
                  (int)t[0]->cols[c].type, (int)TYPED[c]);
    }
    for (size_t i = 0; t && i < n; i++) tl_table_free(t[i]);
    free(t);

    /* the book API: sheet names, lookup */
    tl_xlsx_book *b = tl_xlsx_open(book, &err);
    CHECK(b && tl_xlsx_sheet_count(b) == 4 && tl_xlsx_sheet_index(b, "raw") == 1 &&
              tl_xlsx_sheet_index(b, "Raw") == -1 && !strcmp(tl_xlsx_sheet_name(b, 3), "header"),
          "book: sheet names and lookup");
    tl_xlsx_close(b);

    /* errors */
    snprintf(path, sizeof path, "%s/notzip.xlsx", dir);
    write_file(path, "type,time ms\n", 13);
    expect_error(path, "not a zip archive: expected an .xlsx workbook", "not a zip");
    snprintf(path, sizeof path, "%s/missing.xlsx", dir);
    expect_error(path, "missing.xlsx: cannot open", "no file");
    snprintf(path, sizeof path, "%s/noworkbook.xlsx", dir);
    snprintf(cmd, sizeof cmd, "%s -c \"import zipfile; zipfile.ZipFile('%s', 'w').writestr('a.txt', 'hi')\"", py, path);
    if (system(cmd) == 0) expect_error(path, "noworkbook.xlsx: no part xl/workbook.xml: expected an .xlsx workbook",
                                       "zip without a workbook");
    static const struct {
        const char *part, *text, *want;
    } BAD[] = {
        {"xl/sharedStrings.xml", "<sst><si><t>a</si></sst>", "part xl/sharedStrings.xml: byte 13: expected </t>, saw </si>"},
        {"xl/sharedStrings.xml", "<sst><si><t>&bogus;</t></si></sst>", "byte 12: an unknown entity"},
        {"xl/sharedStrings.xml", "<!DOCTYPE x [<!ENTITY a 'b'>]><sst/>", "byte 0: a DOCTYPE"},
        {"xl/sharedStrings.xml", "<sst><si><t>&#0;</t></si></sst>", "not an XML character"},
        {"xl/sharedStrings.xml", "<sst><si><t>a</t></si>", "the part ends inside <sst>"},
        {"xl/sharedStrings.xml", "<sst a='1' a='2'/>", "a repeated attribute"},
        {"xl/sharedStrings.xml", "<sst/><sst/>", "a second root element"},
        {"xl/sharedStrings.xml", "<sst>\xff</sst>", "byte 5: byte 0xFF is not UTF-8 text"},
        {"xl/workbook.xml", "<workbook><sheets><sheet name='s'/></sheets></workbook>", "without name or r:id"},
        {"xl/workbook.xml", "<workbook><sheets><sheet name='s' r:id='rId99'/></sheets></workbook>",
         "names relationship 'rId99'"},
        {"xl/worksheets/sheet2.xml", "<worksheet><sheetData><row><c t='s'><v>99</v></c></row></sheetData></worksheet>",
         "part xl/worksheets/sheet2.xml: byte 27: a shared-string cell holds '99': expected an index below 8"},
        {"xl/worksheets/sheet2.xml", "<worksheet><sheetData><row><c><v>abc</v></c></row></sheetData></worksheet>",
         "a number cell holds 'abc'"},
        {"xl/worksheets/sheet2.xml", "<worksheet><sheetData><row><c r='XFE1'><v>1</v></c></row></sheetData></worksheet>",
         "a cell reference r=\"XFE1\""},
        {"xl/worksheets/sheet2.xml", "<worksheet><sheetData><row r='1048577'/></sheetData></worksheet>",
         "a row number r=\"1048577\""},
        {"xl/worksheets/sheet2.xml", "<worksheet><sheetData><row><c t='q'><v>1</v></c></row></sheetData></worksheet>",
         "a cell of type t=\"q\""},
        /* one value in the last cell of the sheet: 1048576 x 16384 cells */
        {"xl/worksheets/sheet2.xml",
         "<worksheet><sheetData><row r='1'><c r='A1'><v>1</v></c></row><row r='1048576'><c r='XFD1048576'><v>1</v></c>"
         "</row></sheetData></worksheet>",
         "the sheet spans 1048576 rows x 16384 columns for 2 values"},
        {"xl/_rels/workbook.xml.rels", "<Relationships><Relationship Id='rId1'/></Relationships>",
         "without Id, Type or Target"},
    };
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad.xlsx", dir);
    for (size_t i = 0; i < sizeof BAD / sizeof *BAD; i++) {
        if (replace_part(py, dir, book, bad, BAD[i].part, BAD[i].text) != 0) {
            CHECK(0, "cannot build the bad workbook %zu", i);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "bad workbook %zu", i);
        expect_error(bad, BAD[i].want, what);
    }
    /* rows out of order (r=3, then r=1 which is skipped, then one without r,
     * which is row 2): an empty header row (Unnamed: 0, Unnamed: 1) and rows
     * 2 and 3, every cell read held (found by fuzz_xlsx: a write past the
     * cell grid before) */
    if (replace_part(py, dir, book, bad, "xl/worksheets/sheet2.xml",
                     "<worksheet><sheetData><row r='3'><c r='A3'><v>7</v></c><c r='B3'><v>8</v></c></row>"
                     "<row r='1'><c r='A1'><v>1</v></c></row><row><c r='A2'><v>5</v></c></row></sheetData>"
                     "</worksheet>") == 0) {
        size_t n = 0;
        tl_error e;
        tl_table **tt = tl_xlsx_read_all(bad, &n, &e);
        CHECK(tt != NULL, "rows out of order: read: %s", tt ? "" : e.msg);
        if (tt) {
            const tl_table *s2 = n > 1 ? tt[1] : NULL;
            CHECK(s2 && s2->ncols == 2 && s2->nrows == 2 && tl_table_num(s2, 0, 0) == 5 &&
                      tl_table_num(s2, 0, 1) == 7 && tl_table_num(s2, 1, 1) == 8,
                  "rows out of order: 2 columns, rows 2 and 3 (5; 7, 8)");
            for (size_t i = 0; i < n; i++) tl_table_free(tt[i]);
            free(tt);
        }
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "note: %s failed\n", cmd);
    printf("%d passed, %d failed%s\n", passes, fails, have_pandas ? "" : " (pandas not installed: its cross-check skipped)");
    return fails ? 1 : 0;
}
