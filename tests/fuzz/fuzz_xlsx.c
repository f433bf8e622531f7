/* fuzz_xlsx.c — libFuzzer target for the workbook reader of `tracelens
 * compare` (src/compare/xlsx_read.c, xml_scan.c). The input is split at the
 * first NUL byte into a shared-string part and a worksheet part; both go
 * into a minimal, otherwise valid workbook (written with minizip to a memfd)
 * which tl_xlsx_read_all reads. Any outcome but a crash, a sanitizer report
 * or a leak is fine: a malformed part must give an error, never more. The
 * scanner alone is also run over the whole input. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <minizip/zip.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compare/xlsx_read.h"
#include "compare/xml_scan.h"
#include "table/table.h"

static const char *const CONTENT_TYPES =
    "<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
    "<Default Extension=\"xml\" ContentType=\"application/xml\"/></Types>";
static const char *const WORKBOOK =
    "<?xml version=\"1.0\"?><workbook xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
    "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"><sheets>"
    "<sheet name=\"s\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>";
static const char *const RELS =
    "<?xml version=\"1.0\"?><Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
    "<Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet\" "
    "Target=\"worksheets/sheet1.xml\"/>"
    "<Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings\" "
    "Target=\"sharedStrings.xml\"/></Relationships>";

static void add(zipFile zf, const char *name, const void *data, size_t n)
{
    zip_fileinfo zi;
    memset(&zi, 0, sizeof zi);
    if (zipOpenNewFileInZip(zf, name, &zi, NULL, 0, NULL, 0, NULL, Z_DEFLATED, 1) != ZIP_OK) abort();
    if (n && zipWriteInFileInZip(zf, data, (unsigned)n) != ZIP_OK) abort();
    zipCloseFileInZip(zf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tl_error err;
    /* the scanner on its own */
    tl_xml x;
    tl_xml_init(&x, (const char *)data, size, "fuzz", &err);
    for (int i = 0; i < 100000 && tl_xml_next(&x) > 0; i++) {
    }
    tl_xml_free(&x);

    const uint8_t *cut = memchr(data, 0, size);
    size_t sst_n = cut ? (size_t)(cut - data) : 0;
    const uint8_t *sheet = cut ? cut + 1 : data;
    size_t sheet_n = cut ? size - sst_n - 1 : size;
    int fd = memfd_create("fuzz_xlsx", 0);
    if (fd < 0) abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    zipFile zf = zipOpen(path, APPEND_STATUS_CREATE);
    if (!zf) abort();
    add(zf, "[Content_Types].xml", CONTENT_TYPES, strlen(CONTENT_TYPES));
    add(zf, "xl/workbook.xml", WORKBOOK, strlen(WORKBOOK));
    add(zf, "xl/_rels/workbook.xml.rels", RELS, strlen(RELS));
    add(zf, "xl/sharedStrings.xml", data, sst_n);
    add(zf, "xl/worksheets/sheet1.xml", sheet, sheet_n);
    zipClose(zf, NULL);

    size_t n = 0;
    tl_table **t = tl_xlsx_read_all(path, &n, &err);
    if (t) {
        for (size_t i = 0; i < n; i++) {
            tl_table *tb = t[i];
            for (size_t c = 0; c < tb->ncols; c++)
                for (size_t r = 0; r < tb->nrows; r++) (void)tl_table_is_null(tb, c, r);
            tl_table_free(tb);
        }
        free(t);
    }
    close(fd);
    return 0;
}
