#include "xlsx_sheet_xml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/pyfmt.h"
#include "../util/sbuf.h"
#include "../util/vec.h"

enum {
    MAX_CELL = 32767,  /* Excel's longest text cell */
    FLUSH_AT = 256 << 10,
    ROW_BOUND = 32,    /* <row r="1048576"></row> */
    CELL_BOUND = 56,   /* <c r="XFD1048576" t="s"><v>4294967295</v></c>, or a number */
};

void tl_xlsx_sst_init(tl_xlsx_sst *s)
{
    tl_strpool_init(&s->pool);
    s->refs = 0;
}

void tl_xlsx_sst_free(tl_xlsx_sst *s) { tl_strpool_free(&s->pool); }

void tl_xlsx_col_name(size_t c, char out[4])
{
    char rev[4];
    int n = 0;
    c++;
    while (c && n < 3) {
        rev[n++] = (char)('A' + (c - 1) % 26);
        c = (c - 1) / 26;
    }
    for (int i = 0; i < n; i++) out[i] = rev[n - 1 - i];
    out[n] = 0;
}

void tl_xlsx_col_widths(const tl_table *t, size_t r0, size_t r1, double *width)
{
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_col *col = &t->cols[c];
        double w = (double)strlen(col->name) + 2;
        double typed = col->type == TL_COL_F64 ? 12 : col->type == TL_COL_I64 ? 8 : 6;
        for (size_t r = r0; r < r1; r++) {
            if (tl_table_is_null(t, c, r)) continue;
            double cw = col->type == TL_COL_STR ? (double)tl_strpool_len(&t->pool, col->v.s[r]) + 2 : typed;
            if (cw > w) w = cw;
        }
        width[c] = w;
    }
}

/* A plain integer as Python writes one: -?(0|[1-9][0-9]*), at most 18 digits. */
static int plain_int(const char *s, size_t n)
{
    size_t i = n && s[0] == '-';
    if (i == n || n - i > 18) return 0;
    if (s[i] == '0') return n - i == 1;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

/* Does name contain any of the words (case-insensitive)? */
static int name_has(const char *name, const char *const *words)
{
    for (; *words; words++) {
        size_t wn = strlen(*words);
        for (const char *p = name; *p; p++)
            if (!strncasecmp(p, *words, wn)) return 1;
    }
    return 0;
}

void tl_xlsx_col_kinds(const tl_table *t, size_t r0, size_t r1, tl_xlsx_kind *kind)
{
    static const char *const PERCENT[] = {"%", "percent", NULL};
    static const char *const TFLOPS[] = {"TFLOPS", NULL};
    static const char *const TIME[] = {"time", "duration", "_us", "(us", "\xc2\xb5s", "_ms", " ms", "(ms", NULL};
    for (size_t c = 0; c < t->ncols; c++) {
        const tl_col *col = &t->cols[c];
        switch (col->type) {
        case TL_COL_I64:
            kind[c] = TL_XK_INT;
            break;
        case TL_COL_F64:
            kind[c] = name_has(col->name, PERCENT) ? TL_XK_PERCENT
                      : name_has(col->name, TFLOPS) ? TL_XK_TFLOPS
                      : name_has(col->name, TIME)   ? TL_XK_TIME
                                                    : TL_XK_FLOAT;
            break;
        case TL_COL_STR: {
            size_t ints = 0, other = 0;
            for (size_t r = r0; r < r1 && !other; r++) {
                if (tl_table_is_null(t, c, r)) continue;
                uint32_t id = col->v.s[r];
                size_t n = tl_strpool_len(&t->pool, id);
                if (!n) continue;
                if (plain_int(tl_strpool_get(&t->pool, id), n)) ints++;
                else other++;
            }
            kind[c] = ints && !other ? TL_XK_INT_TEXT : TL_XK_TEXT;
            break;
        }
        default:
            kind[c] = TL_XK_TEXT;
        }
    }
}

uint64_t tl_xlsx_rows_xml_bound(const tl_table *t, size_t r0, size_t r1)
{
    uint64_t rows = (uint64_t)(r1 - r0) + 1;
    return rows * (ROW_BOUND + (uint64_t)t->ncols * CELL_BOUND);
}

/* The decimal text of v at p (no terminator); returns its length. */
static int u64_text(char *p, unsigned long long v)
{
    char rev[24];
    int n = 0;
    do rev[n++] = (char)('0' + v % 10), v /= 10;
    while (v);
    for (int i = 0; i < n; i++) p[i] = rev[n - 1 - i];
    return n;
}

/* The shared-string index of a text. */
static uint32_t sst_index(tl_xlsx_sst *sst, const char *s, size_t n)
{
    sst->refs++;
    return tl_strpool_intern(&sst->pool, s, n);
}

typedef struct row_writer {
    tl_sbuf b;
    tl_xlsx_sink sink;
    void *ctx;
    int failed;
} row_writer;

static void maybe_flush(row_writer *w, int force)
{
    if (w->failed || (!force && w->b.len < FLUSH_AT)) return;
    if (w->b.len && w->sink(w->ctx, w->b.s, w->b.len) != 0) w->failed = 1;
    tl_sb_clear(&w->b);
}

/* <c r="B7"[ s="1"][ t="T"]><v>V</v></c>, opening part up to <v>. */
static void cell_open(tl_sbuf *b, const char *col, const char *row, int style, const char *type)
{
    tl_sb_puts(b, "<c r=\"");
    tl_sb_puts(b, col);
    tl_sb_puts(b, row);
    tl_sb_putc(b, '"');
    if (style >= 0) {
        tl_sb_puts(b, " s=\"");
        tl_sb_i64(b, style);
        tl_sb_putc(b, '"');
    }
    if (type) {
        tl_sb_puts(b, " t=\"");
        tl_sb_puts(b, type);
        tl_sb_putc(b, '"');
    }
    tl_sb_puts(b, "><v>");
}

static void shared_string_cell(tl_sbuf *b, const char *col, const char *row, int style, uint32_t idx)
{
    cell_open(b, col, row, style, "s");
    tl_sb_i64(b, idx);
    tl_sb_puts(b, "</v></c>");
}

int tl_xlsx_rows_xml(const tl_table *t, size_t r0, size_t r1, int hdr_xf, const tl_xlsx_kind *kind,
                     const int *xf, tl_xlsx_sst *sst, tl_xlsx_sink sink, void *ctx)
{
    if (t->ncols == 0) return 0;
    row_writer w = {{0}, sink, ctx, 0};
    tl_sb_init(&w.b);
    char(*cols)[4] = tl_xmalloc(t->ncols * sizeof *cols);
    for (size_t c = 0; c < t->ncols; c++) tl_xlsx_col_name(c, cols[c]);
    /* a table text's shared-string index, looked up once per distinct text */
    uint32_t *sid = tl_xmalloc(((size_t)t->pool.n + 1) * sizeof *sid);
    memset(sid, 0xff, ((size_t)t->pool.n + 1) * sizeof *sid);

    char rowtxt[24];
    tl_sb_puts(&w.b, "<row r=\"1\">");
    for (size_t c = 0; c < t->ncols; c++) {
        const char *name = t->cols[c].name;
        shared_string_cell(&w.b, cols[c], "1", hdr_xf, sst_index(sst, name, strlen(name)));
    }
    tl_sb_puts(&w.b, "</row>");
    /* per column, what cell_open writes around the row number: the head
     * `<c r="COL` and the tail `"[ s="N"][ t="T"]><v>` of its value cells
     * (numbers in the column's style, texts as shared strings, booleans) */
    typedef struct colfix {
        char head[12], num[24];
        uint8_t nhead, nnum;
    } colfix;
    colfix *fx = tl_xmalloc(t->ncols * sizeof *fx);
    for (size_t c = 0; c < t->ncols; c++) {
        int style = kind && xf ? xf[kind[c]] : -1;
        fx[c].nhead = (uint8_t)snprintf(fx[c].head, sizeof fx[c].head, "<c r=\"%s", cols[c]);
        if (style >= 0) fx[c].nnum = (uint8_t)snprintf(fx[c].num, sizeof fx[c].num, "\" s=\"%d\"><v>", style);
        else fx[c].nnum = (uint8_t)snprintf(fx[c].num, sizeof fx[c].num, "\"><v>");
    }
    static const char STR_TAIL[] = "\" t=\"s\"><v>", BOOL_TAIL[] = "\" t=\"b\"><v>", CLOSE[] = "</v></c>";
    enum { CELL_MAX = 12 + 24 + 24 + 32 + 8 }; /* head, row, tail, value (a float: 24), close */
#define PUT(p, s, n) (memcpy((p), (s), (n)), (p) += (n))
    for (size_t r = r0; r < r1 && !w.failed; r++) {
        int nrow = 0;
        {
            char rev[24];
            size_t v = r - r0 + 2;
            do rev[nrow++] = (char)('0' + v % 10), v /= 10;
            while (v);
            for (int i = 0; i < nrow; i++) rowtxt[i] = rev[nrow - 1 - i];
            rowtxt[nrow] = 0;
        }
        TL_GROW(w.b.s, w.b.cap, w.b.len + 32 + t->ncols * (size_t)CELL_MAX + 1);
        char *o = w.b.s + w.b.len;
        PUT(o, "<row r=\"", 8);
        PUT(o, rowtxt, (size_t)nrow);
        PUT(o, "\">", 2);
        for (size_t c = 0; c < t->ncols; c++) {
            if (tl_table_is_null(t, c, r)) continue;
            const tl_col *col = &t->cols[c];
            switch (col->type) {
            case TL_COL_STR: {
                uint32_t id = col->v.s[r];
                size_t n = tl_strpool_len(&t->pool, id);
                if (n == 0) break; /* an empty text is an empty cell */
                PUT(o, fx[c].head, fx[c].nhead);
                PUT(o, rowtxt, (size_t)nrow);
                if (kind && kind[c] == TL_XK_INT_TEXT) { /* a plain integer: at most 19 bytes */
                    PUT(o, fx[c].num, fx[c].nnum);
                    PUT(o, tl_strpool_get(&t->pool, id), n);
                    PUT(o, CLOSE, 8);
                    break;
                }
                if (sid[id] == UINT32_MAX)
                    sid[id] = tl_strpool_intern(&sst->pool, tl_strpool_get(&t->pool, id), tl_strpool_len(&t->pool, id));
                sst->refs++;
                PUT(o, STR_TAIL, sizeof STR_TAIL - 1);
                o += u64_text(o, sid[id]);
                PUT(o, CLOSE, 8);
                break;
            }
            case TL_COL_F64: {
                double v = col->v.f[r];
                PUT(o, fx[c].head, fx[c].nhead);
                PUT(o, rowtxt, (size_t)nrow);
                if (isinf(v)) {
                    PUT(o, STR_TAIL, sizeof STR_TAIL - 1);
                    o += u64_text(o, sst_index(sst, v < 0 ? "-inf" : "inf", v < 0 ? 4 : 3));
                    PUT(o, CLOSE, 8);
                    break;
                }
                PUT(o, fx[c].num, fx[c].nnum);
                o += tl_pyfloat_repr(o, 40, v);
                PUT(o, CLOSE, 8);
                break;
            }
            case TL_COL_I64: {
                PUT(o, fx[c].head, fx[c].nhead);
                PUT(o, rowtxt, (size_t)nrow);
                PUT(o, fx[c].num, fx[c].nnum);
                long long v = (long long)col->v.i[r];
                if (v < 0) *o++ = '-';
                o += u64_text(o, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v);
                PUT(o, CLOSE, 8);
                break;
            }
            case TL_COL_BOOL:
                PUT(o, fx[c].head, fx[c].nhead);
                PUT(o, rowtxt, (size_t)nrow);
                PUT(o, BOOL_TAIL, sizeof BOOL_TAIL - 1);
                *o++ = col->v.i[r] ? '1' : '0';
                PUT(o, CLOSE, 8);
                break;
            }
        }
        PUT(o, "</row>", 6);
#undef PUT
        w.b.len = (size_t)(o - w.b.s);
        w.b.s[w.b.len] = 0;
        maybe_flush(&w, 0);
    }
    free(fx);
    maybe_flush(&w, 1);
    free(sid);
    free(cols);
    tl_sb_free(&w.b);
    return w.failed ? -1 : 0;
}

/* "_xHHHH_" in a text would read back as an escaped character. */
static int looks_escaped(const char *s, size_t n)
{
    if (n < 7 || s[0] != '_' || s[1] != 'x' || s[6] != '_') return 0;
    for (int i = 2; i < 6; i++)
        if (!s[i] || !strchr("0123456789abcdefABCDEF", s[i])) return 0;
    return 1;
}

/* Element text: & < > escaped, control characters (not allowed in XML) as
 * Excel's _xHHHH_ form, and an underscore that would start that form too. */
static void xml_text(tl_sbuf *b, const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *esc = NULL;
        char tmp[8];
        if (ch == '&') esc = "&amp;";
        else if (ch == '<') esc = "&lt;";
        else if (ch == '>') esc = "&gt;";
        else if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
            static const char HEX[] = "0123456789ABCDEF";
            memcpy(tmp, "_x00", 4);
            tmp[4] = HEX[ch >> 4];
            tmp[5] = HEX[ch & 15];
            tmp[6] = '_';
            tmp[7] = 0;
            esc = tmp;
        } else if (ch == '_' && looks_escaped(s + i, n - i)) {
            esc = "_x005F_";
        }
        if (!esc) continue;
        tl_sb_putn(b, s + run, i - run);
        tl_sb_puts(b, esc);
        run = i + 1;
    }
    tl_sb_putn(b, s + run, n - run);
}

uint64_t tl_xlsx_sst_xml_bound(const tl_xlsx_sst *sst)
{
    /* each byte escapes to at most 7 ("_x005F_", "_x001F_") */
    return 256 + (uint64_t)sst->pool.arena_len * 7 + (uint64_t)sst->pool.n * 48;
}

int tl_xlsx_sst_xml(const tl_xlsx_sst *sst, tl_xlsx_sink sink, void *ctx)
{
    row_writer w = {{0}, sink, ctx, 0};
    tl_sb_init(&w.b);
    tl_sb_puts(&w.b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
                     "<sst xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" count=\"");
    tl_sb_i64(&w.b, (long long)sst->refs);
    tl_sb_puts(&w.b, "\" uniqueCount=\"");
    tl_sb_i64(&w.b, (long long)sst->pool.n);
    tl_sb_puts(&w.b, "\">");
    for (uint32_t i = 0; i < sst->pool.n && !w.failed; i++) {
        const char *s = tl_strpool_get(&sst->pool, i);
        size_t n = tl_strpool_len(&sst->pool, i);
        int cut = n > MAX_CELL;
        if (cut) { /* on a UTF-8 boundary, with "..." */
            n = MAX_CELL - 3;
            while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
        }
        int keep_space = n && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[n - 1] == ' ' ||
                               s[n - 1] == '\t' || s[n - 1] == '\n');
        tl_sb_puts(&w.b, keep_space ? "<si><t xml:space=\"preserve\">" : "<si><t>");
        xml_text(&w.b, s, n);
        if (cut) tl_sb_puts(&w.b, "...");
        tl_sb_puts(&w.b, "</t></si>");
        maybe_flush(&w, 0);
    }
    tl_sb_puts(&w.b, "</sst>");
    maybe_flush(&w, 1);
    tl_sb_free(&w.b);
    return w.failed ? -1 : 0;
}
