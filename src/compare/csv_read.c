#include "csv_read.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../util/sbuf.h"
#include "../util/vec.h"

/* ------------------------------------------------------------ tokens */

#define NO_CELL SIZE_MAX /* a cell past the end of a short record */

typedef struct cell {
    size_t off, len; /* in the parser's text buffer; len NO_CELL = absent */
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
    size_t line = 1;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n') line++;
        if (c == 0) {
            tl_error_set(err, "%s: line %zu: a NUL byte: expected CSV text", what, line);
            return -1;
        }
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
        int ok = len && i + len <= n;
        for (size_t k = 1; ok && k < len; k++) ok = ((unsigned char)s[i + k] & 0xC0) == 0x80;
        if (ok && len == 3) {
            unsigned char d = (unsigned char)s[i + 1];
            ok = !(c == 0xE0 && d < 0xA0) && !(c == 0xED && d >= 0xA0);
        }
        if (ok && len == 4) {
            unsigned char d = (unsigned char)s[i + 1];
            ok = !(c == 0xF0 && d < 0x90) && !(c == 0xF4 && d >= 0x90);
        }
        if (!ok) {
            tl_error_set(err, "%s: line %zu: byte 0x%02X is not UTF-8 text: expected a UTF-8 CSV file", what, line, c);
            return -1;
        }
        i += len;
    }
    return 0;
}

/* ------------------------------------------------------------ values */

static int is_na(const char *s)
{
    static const char *const na[] = {"",     "#N/A",  "#N/A N/A", "#NA",     "-1.#IND", "-1.#QNAN", "-NaN",
                                     "-nan", "1.#IND", "1.#QNAN", "<NA>",    "N/A",     "NA",       "NULL",
                                     "NaN",  "None",  "n/a",      "nan",     "null"};
    for (size_t i = 0; i < sizeof na / sizeof *na; i++)
        if (!strcmp(s, na[i])) return 1;
    return 0;
}

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v') s++;
    return s;
}

/* [ws][+-]digits[ws] fitting int64. */
static int parse_int(const char *s, int64_t *out)
{
    s = skip_ws(s);
    int neg = *s == '-';
    if (*s == '+' || *s == '-') s++;
    if (*s < '0' || *s > '9') return 0;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (lim - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (*skip_ws(s)) return 0;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}

/* [ws][+-](digits[.digits]|.digits)[(e|E)[+-]digits][ws], or [+-]inf/infinity. */
static int parse_float(const char *s, double *out)
{
    const char *b = skip_ws(s), *p = b;
    if (*p == '+' || *p == '-') p++;
    if (!strncasecmp(p, "inf", 3)) {
        const char *q = p + 3;
        if (!strncasecmp(q, "inity", 5)) q += 5;
        if (*skip_ws(q)) return 0;
        *out = *b == '-' ? -INFINITY : INFINITY;
        return 1;
    }
    size_t digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++, digits++;
    }
    if (!digits) return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (*p < '0' || *p > '9') return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*skip_ws(p)) return 0;
    *out = strtod(b, NULL); /* correctly rounded; overflow gives +-inf as pandas */
    return 1;
}

static int parse_bool(const char *s, int *out)
{
    if (!strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "true")) return *out = 1, 1;
    if (!strcmp(s, "False") || !strcmp(s, "FALSE") || !strcmp(s, "false")) return *out = 0, 1;
    return 0;
}

/* ------------------------------------------------------------ header */

/* pandas' names: "Unnamed: i" for empty ones, then "x.1", "x.2" for repeats. */
static char **header_names(const parser *ps, const cell *h, size_t n)
{
    char **names = tl_xcalloc(n + 1, sizeof *names);
    size_t *count = tl_xcalloc(2 * n + 1, sizeof *count); /* per distinct name seen */
    char **seen = tl_xcalloc(2 * n + 1, sizeof *seen);
    size_t nseen = 0;
    for (size_t i = 0; i < n; i++) {
        tl_sbuf nm;
        tl_sb_init(&nm);
        if (h[i].len == 0) tl_sb_printf(&nm, "Unnamed: %zu", i);
        else tl_sb_putn(&nm, ps->text.s + h[i].off, h[i].len);
        char *col = tl_sb_take(&nm);
        for (;;) {
            size_t k = 0;
            while (k < nseen && strcmp(seen[k], col)) k++;
            if (k == nseen) {
                seen[nseen] = tl_xstrdup(col);
                count[nseen++] = 1;
                break;
            }
            size_t c = count[k]++;
            tl_sbuf nx;
            tl_sb_init(&nx);
            tl_sb_printf(&nx, "%s.%zu", col, c);
            free(col);
            col = tl_sb_take(&nx);
        }
        names[i] = col;
    }
    for (size_t k = 0; k < nseen; k++) free(seen[k]);
    free(seen);
    free(count);
    return names;
}

/* ------------------------------------------------------------ typing */

static tl_coltype infer_type(const parser *ps, const cell *cells, size_t nrows, size_t ncols, size_t c)
{
    int can_int = 1, can_float = 1, can_bool = 1, any = 0, missing = 0;
    for (size_t r = 0; r < nrows; r++) {
        const cell *x = &cells[r * ncols + c];
        const char *s = x->len == NO_CELL ? "" : ps->text.s + x->off;
        if (is_na(s)) {
            missing = 1;
            continue;
        }
        any = 1;
        int64_t i;
        double d;
        int b;
        if (can_int && !parse_int(s, &i)) can_int = 0;
        if (can_float && !can_int && !parse_float(s, &d)) can_float = 0;
        if (can_bool && !parse_bool(s, &b)) can_bool = 0;
        if (!can_int && !can_float && !can_bool) return TL_COL_STR;
    }
    if (!any) return TL_COL_F64;
    if (can_int) return missing ? TL_COL_F64 : TL_COL_I64;
    if (can_float) return TL_COL_F64;
    return can_bool ? TL_COL_BOOL : TL_COL_STR;
}

static void fill_column(tl_table *t, size_t col, const parser *ps, const cell *cells, size_t nrows, size_t ncols)
{
    tl_coltype ty = t->cols[col].type;
    for (size_t r = 0; r < nrows; r++) {
        const cell *x = &cells[r * ncols + col];
        const char *s = x->len == NO_CELL ? "" : ps->text.s + x->off;
        if (is_na(s)) continue; /* rows start missing */
        int64_t i;
        double d;
        int b;
        switch (ty) {
        case TL_COL_I64:
            parse_int(s, &i);
            tl_table_set_i64(t, col, r, i);
            break;
        case TL_COL_F64:
            if (!parse_float(s, &d)) d = NAN;
            tl_table_set_f64(t, col, r, d);
            break;
        case TL_COL_BOOL:
            parse_bool(s, &b);
            tl_table_set_bool(t, col, r, b);
            break;
        case TL_COL_STR: tl_table_set_strn(t, col, r, s, x->len); break;
        }
    }
}

/* ------------------------------------------------------------ reading */

tl_table *tl_csv_parse(const char *data, size_t n, const char *what, const char *name, tl_error *err)
{
    if (n >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3)) data += 3, n -= 3;
    if (check_text(data, n, what, err) != 0) return NULL;
    parser ps = {.p = data, .end = data + n, .what = what, .line = 1};
    tl_sb_init(&ps.text);
    tl_table *t = NULL;
    cell *header = NULL, *cells = NULL;
    size_t ncols = 0, nrows = 0, capcells = 0, line = 0;
    int rc = next_record(&ps, &line, err);
    if (rc < 0) goto done;
    t = tl_table_new(name);
    if (rc == 0) goto done; /* no header: an empty table */
    ncols = ps.rec.n;
    header = tl_xmalloc(ncols * sizeof *header);
    memcpy(header, ps.rec.v, ncols * sizeof *header);
    while ((rc = next_record(&ps, &line, err)) > 0) {
        if (ps.rec.n > ncols) {
            tl_error_set(err, "%s: line %zu: expected %zu fields (as the header), saw %zu", what, line, ncols,
                         ps.rec.n);
            rc = -1;
            break;
        }
        TL_GROW(cells, capcells, (nrows + 1) * ncols);
        for (size_t c = 0; c < ncols; c++) {
            cell none = {0, NO_CELL};
            cells[nrows * ncols + c] = c < ps.rec.n ? ps.rec.v[c] : none;
        }
        nrows++;
    }
    if (rc < 0) {
        tl_table_free(t);
        t = NULL;
        goto done;
    }
    char **names = header_names(&ps, header, ncols);
    for (size_t c = 0; c < ncols; c++) {
        tl_table_add_col(t, names[c], infer_type(&ps, cells, nrows, ncols, c));
        free(names[c]);
    }
    free(names);
    for (size_t r = 0; r < nrows; r++) tl_table_add_row(t);
    for (size_t c = 0; c < ncols; c++) fill_column(t, c, &ps, cells, nrows, ncols);
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
