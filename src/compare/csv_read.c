#include "csv_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/sbuf.h"
#include "pandas_cells.h"
#include "utf8.h"
#include "../util/vec.h"

/* ------------------------------------------------------------ tokens */

typedef struct cell {
    size_t off, len; /* in the parser's text buffer */
} cell;

typedef struct parser {
    const char *p, *end;
    const char *what;
    size_t line;      /* 1-based line of p */
    tl_sbuf text;     /* every field's unquoted text, each followed by NUL */
    TL_VEC(cell) rec; /* the fields of the record being read */
} parser;

/* Consumes one line end at p (\n, \r\n or \r). */
static void eat_newline(parser *ps)
{
    if (*ps->p == '\r' && ps->p + 1 < ps->end && ps->p[1] == '\n') ps->p++;
    ps->p++;
    ps->line++;
}

/* Skips blank and whitespace-only lines; returns 0 at the end of data. */
static int skip_blank_lines(parser *ps)
{
    while (ps->p < ps->end) {
        const char *q = ps->p;
        while (q < ps->end && (*q == ' ' || *q == '\t')) q++;
        if (q == ps->end) {
            ps->p = q;
            return 0;
        }
        if (*q != '\n' && *q != '\r') return 1;
        ps->p = q;
        eat_newline(ps);
    }
    return 0;
}

static void end_field(parser *ps, size_t start)
{
    cell c = {start, ps->text.len - start};
    tl_sb_putc(&ps->text, 0);
    TL_PUSH(ps->rec, c);
}

enum { START_FIELD, IN_FIELD, IN_QUOTED, QUOTE_IN_QUOTED };

/* Reads one record into ps->rec; 1 = a record, 0 = end of data, -1 = error. */
static int next_record(parser *ps, size_t *rec_line, tl_error *err)
{
    ps->rec.n = 0;
    if (!skip_blank_lines(ps)) return 0;
    *rec_line = ps->line;
    size_t quote_line = 0, start = ps->text.len;
    int state = START_FIELD;
    while (ps->p < ps->end) {
        char c = *ps->p;
        if (state == IN_QUOTED) {
            if (c == '"') {
                state = QUOTE_IN_QUOTED;
                ps->p++;
            } else {
                /* line ends inside quotes are kept as they are */
                if (c == '\n' || (c == '\r' && !(ps->p + 1 < ps->end && ps->p[1] == '\n'))) ps->line++;
                tl_sb_putc(&ps->text, c);
                ps->p++;
            }
            continue;
        }
        if (c == '\n' || c == '\r') {
            end_field(ps, start);
            eat_newline(ps);
            return 1;
        }
        ps->p++;
        if (c == ',') {
            end_field(ps, start);
            start = ps->text.len;
            state = START_FIELD;
        } else if (c == '"' && state == START_FIELD) {
            state = IN_QUOTED;
            quote_line = ps->line;
        } else if (c == '"' && state == QUOTE_IN_QUOTED) {
            tl_sb_putc(&ps->text, '"'); /* "" inside quotes */
            state = IN_QUOTED;
        } else {
            tl_sb_putc(&ps->text, c);
            state = IN_FIELD;
        }
    }
    if (state == IN_QUOTED) {
        tl_error_set(err, "%s: line %zu: the quoted field opened here never ends: expected a closing '\"' before "
                     "the end of the file", ps->what, quote_line);
        return -1;
    }
    end_field(ps, start);
    return 1;
}

/* The first NUL or invalid UTF-8 sequence: 0 when the text is fine. */
static int check_text(const char *s, size_t n, const char *what, tl_error *err)
{
    size_t bad = tl_utf8_bad_at(s, n);
    if (bad == n) return 0;
    size_t line = 1;
    for (size_t i = 0; i < bad; i++) line += s[i] == '\n';
    if (s[bad] == 0)
        tl_error_set(err, "%s: line %zu: a NUL byte: expected CSV text", what, line);
    else
        tl_error_set(err, "%s: line %zu: byte 0x%02X is not UTF-8 text: expected a UTF-8 CSV file", what, line,
                     (unsigned char)s[bad]);
    return -1;
}

/* ------------------------------------------------------------ reading */

static tl_pcell text_cell(cell c)
{
    tl_pcell p = {{c.off}, c.len, TL_PC_TEXT};
    return p;
}

tl_table *tl_csv_parse(const char *data, size_t n, const char *what, const char *name, tl_error *err)
{
    if (n >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3)) data += 3, n -= 3;
    if (check_text(data, n, what, err) != 0) return NULL;
    parser ps = {.p = data, .end = data + n, .what = what, .line = 1};
    tl_sb_init(&ps.text);
    tl_table *t = NULL;
    tl_pcell *header = NULL, *cells = NULL;
    size_t ncols = 0, nrows = 0, capcells = 0, line = 0;
    int rc = next_record(&ps, &line, err);
    if (rc < 0) goto done;
    t = tl_table_new(name);
    if (rc == 0) goto done; /* no header: an empty table */
    ncols = ps.rec.n;
    header = tl_xmalloc(ncols * sizeof *header);
    for (size_t c = 0; c < ncols; c++) header[c] = text_cell(ps.rec.v[c]);
    while ((rc = next_record(&ps, &line, err)) > 0) {
        if (ps.rec.n > ncols) {
            tl_error_set(err, "%s: line %zu: expected %zu fields (as the header), saw %zu", what, line, ncols,
                         ps.rec.n);
            rc = -1;
            break;
        }
        TL_GROW(cells, capcells, (nrows + 1) * ncols);
        for (size_t c = 0; c < ncols; c++) {
            tl_pcell none = {{0}, 0, TL_PC_NONE}; /* past the end of a short record */
            cells[nrows * ncols + c] = c < ps.rec.n ? text_cell(ps.rec.v[c]) : none;
        }
        nrows++;
    }
    if (rc < 0) {
        tl_table_free(t);
        t = NULL;
        goto done;
    }
    char **names = tl_pd_header_names(header, ncols, ps.text.s);
    for (size_t c = 0; c < ncols; c++) {
        tl_table_add_col(t, names[c], tl_pd_column_type(cells, nrows, ncols, c, ps.text.s));
        free(names[c]);
    }
    free(names);
    for (size_t r = 0; r < nrows; r++) tl_table_add_row(t);
    for (size_t c = 0; c < ncols; c++) tl_pd_fill_column(t, c, cells, nrows, ncols, ps.text.s);
done:
    free(header);
    free(cells);
    free(ps.rec.v);
    tl_sb_free(&ps.text);
    return t;
}

tl_table *tl_csv_read(const char *path, const char *name, tl_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tl_error_set(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        tl_error_set(err, "%s: is a directory, expected a CSV file", path);
        return NULL;
    }
    tl_sbuf b;
    tl_sb_init(&b);
    char buf[65536];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) tl_sb_putn(&b, buf, k);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        tl_sb_free(&b);
        tl_error_set(err, "%s: read error", path);
        return NULL;
    }
    tl_table *t = tl_csv_parse(b.s ? b.s : "", b.len, path, name, err);
    tl_sb_free(&b);
    return t;
}
