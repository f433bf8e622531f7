#include "xlsx_read.h"

#include <math.h>
#include <minizip/unzip.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/sbuf.h"
#include "../util/vec.h"
#include "pandas_cells.h"
#include "xml_scan.h"

#define MAX_ROWS 1048576u
#define MAX_COLS 16384u

typedef struct sheet_ref {
    char *name, *part;
} sheet_ref;

struct tl_xlsx_book {
    char *path;
    unzFile zip;
    TL_VEC(sheet_ref) sheets;
    tl_sbuf sst_text;            /* the shared strings, each NUL-terminated */
    TL_VEC(size_t) sst_off, sst_len;
};

/* ------------------------------------------------------------ parts */

/* "FILE: part P" for error messages. */
static char *part_what(const tl_xlsx_book *b, const char *part)
{
    tl_sbuf s;
    tl_sb_init(&s);
    tl_sb_printf(&s, "%s: part %s", b->path, part);
    return tl_sb_take(&s);
}

/* The uncompressed bytes of a part (NUL-terminated); NULL with *absent = 1
 * when the archive has no such part, NULL with err set when it cannot be
 * read. */
static char *read_part(tl_xlsx_book *b, const char *part, size_t *len, int *absent, tl_error *err)
{
    *absent = 0;
    unz_file_info64 ui;
    if (unzLocateFile(b->zip, part, 1) != UNZ_OK) {
        *absent = 1;
        tl_error_set(err, "%s: no part %s: expected an .xlsx workbook", b->path, part);
        return NULL;
    }
    if (unzGetCurrentFileInfo64(b->zip, &ui, NULL, 0, NULL, 0, NULL, 0) != UNZ_OK) {
        tl_error_set(err, "%s: part %s: unreadable zip entry", b->path, part);
        return NULL;
    }
    if (ui.uncompressed_size > TL_XLSX_MAX_PART) {
        tl_error_set(err, "%s: part %s: %llu bytes uncompressed: expected at most %zu", b->path, part,
                     (unsigned long long)ui.uncompressed_size, TL_XLSX_MAX_PART);
        return NULL;
    }
    if (unzOpenCurrentFile(b->zip) != UNZ_OK) {
        tl_error_set(err, "%s: part %s: cannot open the zip entry (unsupported compression or encryption)", b->path,
                     part);
        return NULL;
    }
    size_t n = (size_t)ui.uncompressed_size, got = 0;
    char *buf = tl_xmalloc(n + 1);
    int k = 1;
    while (got < n && (k = unzReadCurrentFile(b->zip, buf + got, (unsigned)(n - got > (1u << 30) ? 1u << 30 : n - got))) > 0)
        got += (size_t)k;
    int close_rc = unzCloseCurrentFile(b->zip);
    if (k < 0 || got != n || close_rc != UNZ_OK) {
        free(buf);
        tl_error_set(err, "%s: part %s: %s: expected a sound zip entry", b->path, part,
                     close_rc == UNZ_CRCERROR ? "CRC mismatch"
                     : k < 0                  ? "corrupt compressed data"
                                              : "shorter than its declared size");
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* A part's text under the XML scanner (x), with the name errors give it;
 * part_close frees the three. */
typedef struct part_xml {
    char *data, *what;
    tl_xml x;
} part_xml;

static int part_open(tl_xlsx_book *b, const char *part, part_xml *p, int *absent, tl_error *err)
{
    size_t len;
    p->data = read_part(b, part, &len, absent, err);
    if (!p->data) return -1;
    p->what = part_what(b, part);
    tl_xml_init(&p->x, p->data, len, p->what, err);
    return 0;
}

static void part_close(part_xml *p)
{
    tl_xml_free(&p->x);
    free(p->what);
    free(p->data);
}

/* A relationship target, relative to xl/ (or absolute: "/xl/..."), as a
 * part name with "." and ".." segments resolved. NULL when it leaves the
 * package. */
static char *resolve_target(const char *target)
{
    tl_sbuf path;
    tl_sb_init(&path);
    if (target[0] == '/') target++;
    else tl_sb_puts(&path, "xl/");
    const char *p = target;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 1 && p[0] == '.') {
            /* nothing */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (path.len == 0) {
                tl_sb_free(&path);
                return NULL;
            }
            size_t k = path.len - 1; /* path ends in '/' */
            while (k > 0 && path.s[k - 1] != '/') k--;
            path.len = k;
            path.s[k] = 0;
        } else if (n) {
            tl_sb_putn(&path, p, n);
            if (e) tl_sb_putc(&path, '/');
        }
        p = e ? e + 1 : p + n;
    }
    return tl_sb_take(&path);
}

/* ------------------------------------------------------------ rich text */

/* Collects a string item's text (<si> or <is>, the element just started at
 * depth d): its <t>, then each <r><t>; <rPh> runs are left out. Returns 0
 * at the item's END, -1 on an error. */
static int string_item(tl_xml *x, tl_sbuf *out)
{
    size_t d = tl_xml_depth(x);
    int in_t = 0, in_r = 0;
    for (;;) {
        tl_xml_ev ev = tl_xml_next(x);
        if (ev == TL_XML_ERR) return -1;
        if (ev == TL_XML_EOF) return tl_xml_fail(x, "the part ends inside a string item"), -1;
        size_t depth = tl_xml_depth(x);
        if (ev == TL_XML_START) {
            if (in_t) return tl_xml_fail(x, "an element inside <t>: expected text"), -1;
            if (depth == d + 1 && tl_xml_is(x, "r")) in_r = 1;
            else if (tl_xml_is(x, "t") && (depth == d + 1 || (in_r && depth == d + 2))) in_t = 1;
        } else if (ev == TL_XML_END) {
            if (depth < d) return 0;
            if (in_t) in_t = 0;
            else if (depth == d && in_r) in_r = 0;
        } else if (in_t) {
            tl_sb_putn(out, x->text.s, x->text.len);
        }
    }
}

/* ------------------------------------------------------------ workbook */

typedef struct rel {
    char *id, *type, *target;
} rel;

static void free_rels(rel *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].id);
        free(r[i].type);
        free(r[i].target);
    }
    free(r);
}

static int read_rels(tl_xlsx_book *b, const char *part, rel **out, size_t *nout, tl_error *err)
{
    int absent;
    part_xml p;
    if (part_open(b, part, &p, &absent, err) != 0) return -1;
    tl_xml *x = &p.x;
    TL_VEC(rel) rels = {0};
    tl_xml_ev ev = TL_XML_EOF;
    int rc = 0;
    while ((ev = tl_xml_next(x)) > 0) {
        if (ev != TL_XML_START || !tl_xml_is(x, "Relationship")) continue;
        const char *id = tl_xml_attr_get(x, "Id", NULL), *type = tl_xml_attr_get(x, "Type", NULL),
                   *target = tl_xml_attr_get(x, "Target", NULL), *mode = tl_xml_attr_get(x, "TargetMode", NULL);
        if (!id || !type || !target) {
            tl_xml_fail(x, "a <Relationship> without Id, Type or Target: expected all three");
            rc = -1;
            break;
        }
        if (mode && !strcmp(mode, "External")) continue;
        rel r = {tl_xstrdup(id), tl_xstrdup(type), resolve_target(target)};
        if (!r.target) {
            tl_xml_fail(x, "the target '%.200s' leaves the package: expected a part inside it", target);
            free(r.id);
            free(r.type);
            rc = -1;
            break;
        }
        TL_PUSH(rels, r);
    }
    if (ev == TL_XML_ERR) rc = -1;
    part_close(&p);
    if (rc) {
        free_rels(rels.v, rels.n);
        return -1;
    }
    *out = rels.v;
    *nout = rels.n;
    return 0;
}

static const rel *find_rel(const rel *r, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].id, id)) return &r[i];
    return NULL;
}

static int type_is(const char *type, const char *suffix)
{
    size_t n = strlen(type), m = strlen(suffix);
    return n > m && type[n - m - 1] == '/' && !strcmp(type + n - m, suffix);
}

static int read_workbook(tl_xlsx_book *b, const rel *rels, size_t nrels, tl_error *err)
{
    const char *part = "xl/workbook.xml";
    int absent;
    part_xml p;
    if (part_open(b, part, &p, &absent, err) != 0) return -1;
    tl_xml *x = &p.x;
    tl_xml_ev ev = TL_XML_EOF;
    int rc = 0, in_sheets = 0;
    while (!rc && (ev = tl_xml_next(x)) > 0) {
        if (ev == TL_XML_END && tl_xml_is(x, "sheets")) in_sheets = 0;
        if (ev != TL_XML_START) continue;
        if (tl_xml_is(x, "sheets")) in_sheets = 1;
        if (!in_sheets || !tl_xml_is(x, "sheet")) continue;
        const char *name = tl_xml_attr_get(x, "name", NULL), *id = tl_xml_attr_get(x, "id", NULL);
        if (!name || !id) {
            rc = tl_xml_fail(x, "a <sheet> without name or r:id: expected both");
            break;
        }
        const rel *r = find_rel(rels, nrels, id);
        if (!r) {
            rc = tl_xml_fail(x, "sheet '%.100s' names relationship '%.100s': expected it in "
                             "xl/_rels/workbook.xml.rels", name, id);
            break;
        }
        if (!type_is(r->type, "worksheet")) continue; /* a chart or dialog sheet */
        for (size_t i = 0; i < b->sheets.n; i++)
            if (!strcmp(b->sheets.v[i].name, name)) {
                rc = tl_xml_fail(x, "a second sheet named '%.100s': expected unique sheet names", name);
                break;
            }
        if (rc) break;
        sheet_ref s = {tl_xstrdup(name), tl_xstrdup(r->target)};
        TL_PUSH(b->sheets, s);
    }
    if (ev == TL_XML_ERR) rc = -1;
    part_close(&p);
    return rc ? -1 : 0;
}

static int read_shared_strings(tl_xlsx_book *b, const char *part, tl_error *err)
{
    int absent;
    part_xml p;
    if (part_open(b, part, &p, &absent, err) != 0) return -1;
    tl_xml *x = &p.x;
    tl_sbuf item;
    tl_sb_init(&item);
    tl_xml_ev ev = TL_XML_EOF;
    int rc = 0;
    while (!rc && (ev = tl_xml_next(x)) > 0) {
        if (ev != TL_XML_START || !tl_xml_is(x, "si")) continue;
        tl_sb_clear(&item);
        if (string_item(x, &item) != 0) {
            rc = -1;
            break;
        }
        /* openpyxl: text.replace('x005F_', '') */
        size_t off = b->sst_text.len;
        for (size_t i = 0; i < item.len;) {
            if (item.len - i >= 6 && !memcmp(item.s + i, "x005F_", 6)) {
                i += 6;
                continue;
            }
            tl_sb_putc(&b->sst_text, item.s[i++]);
        }
        TL_PUSH(b->sst_off, off);
        TL_PUSH(b->sst_len, b->sst_text.len - off);
        tl_sb_putc(&b->sst_text, 0);
    }
    if (ev == TL_XML_ERR) rc = -1;
    tl_sb_free(&item);
    part_close(&p);
    return rc;
}

tl_xlsx_book *tl_xlsx_open(const char *path, tl_error *err)
{
    tl_xlsx_book *b = tl_xcalloc(1, sizeof *b);
    b->path = tl_xstrdup(path);
    tl_sb_init(&b->sst_text);
    b->zip = unzOpen64(path);
    if (!b->zip) {
        FILE *f = fopen(path, "rb");
        if (f) fclose(f);
        tl_error_set(err, "%s: %s", path, f ? "not a zip archive: expected an .xlsx workbook" : "cannot open");
        tl_xlsx_close(b);
        return NULL;
    }
    if (unzLocateFile(b->zip, "xl/workbook.xml", 1) != UNZ_OK) {
        tl_error_set(err, "%s: no part xl/workbook.xml: expected an .xlsx workbook", path);
        tl_xlsx_close(b);
        return NULL;
    }
    rel *rels = NULL;
    size_t nrels = 0;
    if (read_rels(b, "xl/_rels/workbook.xml.rels", &rels, &nrels, err) != 0 || read_workbook(b, rels, nrels, err) != 0) {
        free_rels(rels, nrels);
        tl_xlsx_close(b);
        return NULL;
    }
    const char *sst = "xl/sharedStrings.xml";
    for (size_t i = 0; i < nrels; i++)
        if (type_is(rels[i].type, "sharedStrings")) sst = rels[i].target;
    int has_sst = unzLocateFile(b->zip, sst, 1) == UNZ_OK;
    int rc = has_sst ? read_shared_strings(b, sst, err) : 0;
    free_rels(rels, nrels);
    if (rc != 0) {
        tl_xlsx_close(b);
        return NULL;
    }
    return b;
}

void tl_xlsx_close(tl_xlsx_book *b)
{
    if (!b) return;
    if (b->zip) unzClose(b->zip);
    for (size_t i = 0; i < b->sheets.n; i++) {
        free(b->sheets.v[i].name);
        free(b->sheets.v[i].part);
    }
    free(b->sheets.v);
    tl_sb_free(&b->sst_text);
    free(b->sst_off.v);
    free(b->sst_len.v);
    free(b->path);
    free(b);
}

size_t tl_xlsx_sheet_count(const tl_xlsx_book *b) { return b->sheets.n; }

const char *tl_xlsx_sheet_name(const tl_xlsx_book *b, size_t i) { return b->sheets.v[i].name; }

long tl_xlsx_sheet_index(const tl_xlsx_book *b, const char *name)
{
    for (size_t i = 0; i < b->sheets.n; i++)
        if (!strcmp(b->sheets.v[i].name, name)) return (long)i;
    return -1;
}

/* ------------------------------------------------------------ worksheet */

/* A cell with a value, placed. */
typedef struct placed {
    uint32_t row, col; /* 0-based */
    size_t seq;        /* document order within the row (later wins) */
    tl_pcell v;
} placed;

typedef struct sheet_reader {
    tl_xlsx_book *b;
    tl_xml x;
    tl_sbuf text; /* the cells' texts, each NUL-terminated */
    tl_sbuf val;  /* the <v> / <is> text of the cell being read */
    TL_VEC(placed) row;   /* the cells of the row being read */
    TL_VEC(placed) cells; /* every kept cell with a value */
    uint32_t nrows, ncols; /* after pandas' trimming */
} sheet_reader;

/* "B7" -> column 1 (0-based); -1 when it is not a cell reference. */
static long ref_column(const char *r)
{
    long col = 0;
    size_t letters = 0;
    for (; *r >= 'A' && *r <= 'Z'; r++, letters++) {
        col = col * 26 + (*r - 'A' + 1);
        if (col > (long)MAX_COLS) return -1;
    }
    if (!letters || *r < '1' || *r > '9') return -1;
    int64_t row;
    if (!tl_pd_parse_int(r, &row) || row < 1 || row > MAX_ROWS) return -1;
    for (; *r; r++)
        if (*r < '0' || *r > '9') return -1;
    return col - 1;
}

static tl_pcell text_value(sheet_reader *s, const char *t, size_t n)
{
    tl_pcell c = {{s->text.len}, n, TL_PC_TEXT};
    tl_sb_putn(&s->text, t, n);
    tl_sb_putc(&s->text, 0);
    return c;
}

/* The value of a <c> of type t whose <v> (or <is>) text is in s->val;
 * kind TL_PC_NONE for an empty cell; -1 on an error. */
static int cell_value(sheet_reader *s, const char *t, int has_v, tl_pcell *out)
{
    tl_xml *x = &s->x;
    const char *v = s->val.s ? s->val.s : "";
    tl_pcell none = {{0}, 0, TL_PC_NONE};
    *out = none;
    if (!strcmp(t, "inlineStr")) {
        if (has_v) *out = text_value(s, v, s->val.len);
        return 0;
    }
    if (!has_v || !s->val.len) return 0; /* openpyxl: findtext(v) or None */
    if (!strcmp(t, "n")) {
        int64_t i;
        double d;
        if (strpbrk(v, ".eE")) {
            if (!tl_pd_parse_float(v, &d)) return tl_xml_fail(x, "a number cell holds '%.60s': expected a number", v);
            if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
                out->kind = TL_PC_INT; /* pandas: int(v) == v */
                out->v.i = (int64_t)d;
            } else {
                out->kind = TL_PC_FLOAT;
                out->v.f = d;
            }
        } else if (tl_pd_parse_int(v, &i)) {
            out->kind = TL_PC_INT;
            out->v.i = i;
        } else if (tl_pd_parse_float(v, &d) && isfinite(d)) { /* an integer beyond int64 */
            out->kind = TL_PC_FLOAT;
            out->v.f = d;
        } else {
            return tl_xml_fail(x, "a number cell holds '%.60s': expected a number", v);
        }
    } else if (!strcmp(t, "s")) {
        int64_t i;
        if (!tl_pd_parse_int(v, &i) || i < 0 || (uint64_t)i >= s->b->sst_off.n)
            return tl_xml_fail(x, "a shared-string cell holds '%.60s': expected an index below %zu", v,
                               s->b->sst_off.n);
        *out = text_value(s, s->b->sst_text.s + s->b->sst_off.v[i], s->b->sst_len.v[i]);
    } else if (!strcmp(t, "b")) {
        int64_t i;
        if (!tl_pd_parse_int(v, &i)) return tl_xml_fail(x, "a boolean cell holds '%.60s': expected 0 or 1", v);
        out->kind = TL_PC_BOOL;
        out->v.i = i != 0;
    } else if (!strcmp(t, "str") || !strcmp(t, "d")) {
        *out = text_value(s, v, s->val.len);
    } else if (!strcmp(t, "e")) {
        *out = text_value(s, "nan", 3); /* NaN: missing, or "nan" as a column name */
    } else {
        return tl_xml_fail(x, "a cell of type t=\"%.20s\": expected s, inlineStr, str, n, b, e or d", t);
    }
    return 0;
}

/* Reads one <c> (just started); appends it to s->row. */
static int read_cell(sheet_reader *s, uint32_t *col_counter)
{
    tl_xml *x = &s->x;
    const char *t = tl_xml_attr_get(x, "t", NULL), *r = tl_xml_attr_get(x, "r", NULL);
    char type[16] = "n";
    size_t after_tag = x->pos;
    x->pos = x->at; /* errors about the tag name it */
    if (t) snprintf(type, sizeof type, "%s", strlen(t) < sizeof type ? t : "?");
    if (r) {
        long c = ref_column(r);
        if (c < 0) return tl_xml_fail(x, "a cell reference r=\"%.30s\": expected A1 .. XFD1048576", r);
        *col_counter = (uint32_t)c + 1;
    } else {
        if (*col_counter >= MAX_COLS) return tl_xml_fail(x, "a cell past column XFD: expected at most 16384 columns");
        ++*col_counter;
    }
    x->pos = after_tag;
    size_t d = tl_xml_depth(x), cell_at = x->at;
    int inline_str = !strcmp(type, "inlineStr"), has_v = 0, in_v = 0;
    tl_sb_clear(&s->val);
    for (;;) {
        tl_xml_ev ev = tl_xml_next(x);
        if (ev == TL_XML_ERR) return -1;
        if (ev == TL_XML_EOF) return tl_xml_fail(x, "the part ends inside a cell");
        if (ev == TL_XML_START && tl_xml_depth(x) == d + 1) {
            if (!inline_str && tl_xml_is(x, "v")) {
                in_v = 1;
                has_v = 1;
                tl_sb_clear(&s->val);
            } else if (inline_str && tl_xml_is(x, "is")) {
                has_v = 1;
                tl_sb_clear(&s->val);
                if (string_item(x, &s->val) != 0) return -1;
            }
        } else if (ev == TL_XML_START && in_v) {
            return tl_xml_fail(x, "an element inside <v>: expected text");
        } else if (ev == TL_XML_END) {
            if (tl_xml_depth(x) < d) break;
            in_v = 0;
        } else if (ev == TL_XML_TEXT && in_v) {
            tl_sb_putn(&s->val, x->text.s, x->text.len);
        }
    }
    placed p = {0, *col_counter - 1, s->row.n, {{0}, 0, TL_PC_NONE}};
    size_t pos = x->pos;
    x->pos = cell_at; /* errors name the cell's tag */
    if (cell_value(s, type, has_v, &p.v) != 0) return -1;
    x->pos = pos;
    TL_PUSH(s->row, p);
    return 0;
}

static int by_col_then_seq(const void *a, const void *b)
{
    const placed *p = a, *q = b;
    if (p->col != q->col) return p->col < q->col ? -1 : 1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static int empty_value(const tl_pcell *c)
{
    return c->kind == TL_PC_NONE || (c->kind == TL_PC_TEXT && c->len == 0);
}

/* The row just read (0-based `row`): cells up to its last cell's column
 * (openpyxl), the last of each column kept, trailing empty ones dropped
 * (pandas); the cells with values go to s->cells. */
static void end_row(sheet_reader *s, uint32_t row)
{
    if (!s->row.n) return;
    uint32_t width = s->row.v[s->row.n - 1].col + 1;
    qsort(s->row.v, s->row.n, sizeof *s->row.v, by_col_then_seq);
    uint32_t last = 0; /* trimmed width */
    for (size_t i = 0; i < s->row.n; i++) {
        placed *p = &s->row.v[i];
        if (p->col >= width || (i + 1 < s->row.n && s->row.v[i + 1].col == p->col)) continue;
        if (empty_value(&p->v)) continue;
        p->row = row;
        TL_PUSH(s->cells, *p);
        last = p->col + 1;
    }
    if (last) {
        if (last > s->ncols) s->ncols = last;
        /* a max: a row without r after a skipped one can come before rows
         * already read, and the grid must hold every cell */
        if (row + 1 > s->nrows) s->nrows = row + 1;
    }
    s->row.n = 0;
}

static int read_sheet_data(sheet_reader *s)
{
    tl_xml *x = &s->x;
    tl_xml_ev ev;
    uint32_t next_row = 0; /* 0-based index the next row without r gets */
    int in_data = 0;
    while ((ev = tl_xml_next(x)) > 0) {
        if (ev == TL_XML_END && tl_xml_is(x, "sheetData")) in_data = 0;
        if (ev != TL_XML_START) continue;
        if (tl_xml_is(x, "sheetData")) in_data = 1;
        if (!in_data || !tl_xml_is(x, "row")) continue;
        const char *r = tl_xml_attr_get(x, "r", NULL);
        uint32_t row = next_row;
        if (r) {
            int64_t v;
            double d;
            if (tl_pd_parse_int(r, &v)) d = (double)v;
            else if (!tl_pd_parse_float(r, &d) || d != floor(d)) d = 0;
            if (d < 1 || d > MAX_ROWS) {
                x->pos = x->at;
                return tl_xml_fail(x, "a row number r=\"%.30s\": expected 1 .. 1048576", r);
            }
            row = (uint32_t)d - 1;
        } else if (row >= MAX_ROWS) {
            return tl_xml_fail(x, "a row past 1048576: expected at most 1048576 rows");
        }
        int skip = row < next_row; /* openpyxl skips a row at or before one already read */
        next_row = row + 1;
        size_t d = tl_xml_depth(x);
        uint32_t col_counter = 0;
        s->row.n = 0;
        for (;;) {
            ev = tl_xml_next(x);
            if (ev <= 0) return -1; /* the end of the part inside <row> is an error too */
            if (ev == TL_XML_END && tl_xml_depth(x) < d) break;
            if (ev == TL_XML_START && tl_xml_depth(x) == d + 1 && tl_xml_is(x, "c") && read_cell(s, &col_counter) != 0)
                return -1;
        }
        if (skip) s->row.n = 0;
        end_row(s, row);
    }
    return ev == TL_XML_ERR ? -1 : 0;
}

tl_table *tl_xlsx_read_sheet(tl_xlsx_book *b, size_t i, tl_error *err)
{
    const char *part = b->sheets.v[i].part;
    size_t len;
    int absent;
    char *data = read_part(b, part, &len, &absent, err);
    if (!data) {
        if (absent)
            tl_error_set(err, "%s: no part %s (sheet '%s'): expected the worksheet the workbook names", b->path, part,
                         b->sheets.v[i].name);
        return NULL;
    }
    char *what = part_what(b, part);
    sheet_reader s = {0};
    s.b = b;
    tl_sb_init(&s.text);
    tl_sb_init(&s.val);
    tl_sb_putc(&s.text, 0); /* offset 0: the empty text */
    tl_xml_init(&s.x, data, len, what, err);
    tl_table *t = NULL;
    tl_pcell *grid = NULL;
    if (read_sheet_data(&s) != 0) goto done;
    size_t nr = s.nrows, nc = s.ncols, cells = nr * nc;
    size_t bound = TL_XLSX_GRID_PER_VALUE * s.cells.n;
    if (bound < TL_XLSX_GRID_FLOOR) bound = TL_XLSX_GRID_FLOOR;
    if (cells > bound) {
        tl_error_set(err, "%s: the sheet spans %zu rows x %zu columns for %zu values: expected a table (at most %d "
                     "cells per value)", what, nr, nc, s.cells.n, TL_XLSX_GRID_PER_VALUE);
        goto done;
    }
    t = tl_table_new(b->sheets.v[i].name);
    if (!nr) goto done; /* no value: a table without columns */
    grid = tl_xcalloc(cells + 1, sizeof *grid); /* zeroed: TL_PC_NONE */
    for (size_t k = 0; k < s.cells.n; k++) grid[(size_t)s.cells.v[k].row * nc + s.cells.v[k].col] = s.cells.v[k].v;
    char **names = tl_pd_header_names(grid, nc, s.text.s);
    const tl_pcell *body = grid + nc;
    for (size_t c = 0; c < nc; c++) {
        tl_table_add_col(t, names[c], tl_pd_column_type(body, nr - 1, nc, c, s.text.s));
        free(names[c]);
    }
    free(names);
    for (size_t r = 1; r < nr; r++) tl_table_add_row(t);
    for (size_t c = 0; c < nc; c++) tl_pd_fill_column(t, c, body, nr - 1, nc, s.text.s);
done:
    free(grid);
    free(s.row.v);
    free(s.cells.v);
    tl_sb_free(&s.text);
    tl_sb_free(&s.val);
    tl_xml_free(&s.x);
    free(what);
    free(data);
    return t;
}

tl_table **tl_xlsx_read_all(const char *path, size_t *n, tl_error *err)
{
    tl_xlsx_book *b = tl_xlsx_open(path, err);
    if (!b) return NULL;
    size_t k = tl_xlsx_sheet_count(b);
    tl_table **t = tl_xcalloc(k + 1, sizeof *t);
    for (size_t i = 0; i < k; i++) {
        t[i] = tl_xlsx_read_sheet(b, i, err);
        if (!t[i]) {
            for (size_t j = 0; j < i; j++) tl_table_free(t[j]);
            free(t);
            tl_xlsx_close(b);
            return NULL;
        }
    }
    tl_xlsx_close(b);
    *n = k;
    return t;
}
