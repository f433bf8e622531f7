/* table_join.c — Table joins and text previews (see table.h). */
#include <string.h>

#include "table.h"
#include "../util/vec.h"

/* The key of row r (the key columns' cell texts, each with a type tag so
 * that a missing cell and an empty text differ) into b. */
static void row_key(const tl_table *t, const size_t *kc, size_t nk, size_t r, tl_sbuf *b, tl_sbuf *cell)
{
    tl_sb_clear(b);
    for (size_t k = 0; k < nk; k++) {
        if (tl_table_is_null(t, kc[k], r)) {
            tl_sb_puts(b, "\x1e");
            continue;
        }
        tl_sb_clear(cell);
        tl_table_cell_text(t, kc[k], r, cell);
        tl_sb_putc(b, '\x1f');
        tl_sb_putn(b, cell->s ? cell->s : "", cell->len);
    }
}

/* Key column indices of t; -1 with *missing set to the first absent name. */
static int key_cols(const tl_table *t, const char *const *on, size_t n, size_t *kc, const char **missing)
{
    for (size_t k = 0; k < n; k++) {
        long c = tl_table_col(t, on[k]);
        if (c < 0) {
            *missing = on[k];
            return -1;
        }
        kc[k] = (size_t)c;
    }
    return 0;
}

tl_table *tl_table_join(const tl_table *l, const tl_table *r, const char *name, const char *const *on, size_t non,
                        int left_outer, const char **err)
{
    if (non == 0 || non > 32) {
        *err = "join: 1 to 32 key columns";
        return NULL;
    }
    size_t lk[32], rk[32];
    const char *missing = NULL;
    if (key_cols(l, on, non, lk, &missing) || key_cols(r, on, non, rk, &missing)) {
        *err = missing;
        return NULL;
    }
    for (size_t k = 0; k < non; k++)
        if (l->cols[lk[k]].type != r->cols[rk[k]].type) {
            *err = on[k];
            return NULL;
        }
    /* the right rows of each key, in row order: head[key] -> next[row] */
    tl_strpool keys;
    tl_strpool_init(&keys);
    tl_sbuf b, cell;
    tl_sb_init(&b);
    tl_sb_init(&cell);
    TL_VEC(size_t) head = {0}, tail = {0};
    size_t *next = tl_xmalloc((r->nrows + 1) * sizeof *next);
    for (size_t i = 0; i < r->nrows; i++) {
        row_key(r, rk, non, i, &b, &cell);
        uint32_t id = tl_strpool_intern(&keys, b.s ? b.s : "", b.len);
        next[i] = SIZE_MAX;
        if (id == head.n) {
            TL_PUSH(head, i);
            TL_PUSH(tail, i);
        } else {
            next[tail.v[id]] = i;
            tail.v[id] = i;
        }
    }
    /* the output: l's columns, then r's other columns (a name l has gets "_right") */
    tl_table *out = tl_table_new(name);
    for (size_t c = 0; c < l->ncols; c++) tl_table_add_col(out, l->cols[c].name, l->cols[c].type);
    TL_VEC(size_t) rcols = {0}, ocols = {0};
    for (size_t c = 0; c < r->ncols; c++) {
        int is_key = 0;
        for (size_t k = 0; k < non; k++) is_key |= rk[k] == c;
        if (is_key) continue;
        tl_sbuf nm;
        tl_sb_init(&nm);
        tl_sb_puts(&nm, r->cols[c].name);
        while (tl_table_col(out, nm.s) >= 0) tl_sb_puts(&nm, "_right");
        TL_PUSH(rcols, c);
        TL_PUSH(ocols, tl_table_add_col(out, nm.s, r->cols[c].type));
        tl_sb_free(&nm);
    }
    for (size_t i = 0; i < l->nrows; i++) {
        row_key(l, lk, non, i, &b, &cell);
        uint32_t id = tl_strpool_find(&keys, b.s ? b.s : "", b.len);
        size_t j = id == UINT32_MAX ? SIZE_MAX : head.v[id];
        if (j == SIZE_MAX && !left_outer) continue;
        do {
            size_t o = tl_table_add_row(out);
            for (size_t c = 0; c < l->ncols; c++) tl_table_copy_cell(out, c, o, l, c, i);
            if (j != SIZE_MAX)
                for (size_t c = 0; c < rcols.n; c++) tl_table_copy_cell(out, ocols.v[c], o, r, rcols.v[c], j);
            j = j == SIZE_MAX ? SIZE_MAX : next[j];
        } while (j != SIZE_MAX);
    }
    free(next);
    free(head.v);
    free(tail.v);
    free(rcols.v);
    free(ocols.v);
    tl_sb_free(&b);
    tl_sb_free(&cell);
    tl_strpool_free(&keys);
    return out;
}

/* Appends s cut or padded to w display columns (UTF-8 aware; a cut ends in "…"). */
static void cell_fit(tl_sbuf *out, const char *s, size_t n, size_t w, int right)
{
    size_t chars = 0, cut = n;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (chars == w) {
                cut = i;
                break;
            }
            chars++;
        }
    int ell = cut < n;
    if (ell) { /* room for the ellipsis: drop one more character */
        size_t i = cut;
        do i--;
        while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80);
        cut = i;
        chars = w - 1;
    }
    if (right)
        for (size_t i = chars + (size_t)ell; i < w; i++) tl_sb_putc(out, ' ');
    tl_sb_putn(out, s, cut);
    if (ell) tl_sb_puts(out, "\xe2\x80\xa6");
    if (!right)
        for (size_t i = chars + (size_t)ell; i < w; i++) tl_sb_putc(out, ' ');
}

static size_t text_width(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

void tl_table_preview(const tl_table *t, size_t max_rows, size_t width, tl_sbuf *out)
{
    enum { MAX_COL = 40 };
    size_t rows = t->nrows < max_rows ? t->nrows : max_rows;
    tl_sb_printf(out, "table %s (%zu rows x %zu columns)\n", t->name, t->nrows, t->ncols);
    if (!t->ncols) return;
    /* column widths: header and shown cells, at most MAX_COL each */
    size_t *w = tl_xcalloc(t->ncols, sizeof *w);
    tl_sbuf cell;
    tl_sb_init(&cell);
    for (size_t c = 0; c < t->ncols; c++) {
        w[c] = text_width(t->cols[c].name, strlen(t->cols[c].name));
        for (size_t r = 0; r < rows; r++) {
            tl_sb_clear(&cell);
            tl_table_cell_text(t, c, r, &cell);
            size_t cw = text_width(cell.s ? cell.s : "", cell.len);
            if (cw > w[c]) w[c] = cw;
        }
        if (w[c] > MAX_COL) w[c] = MAX_COL;
        if (w[c] < 3) w[c] = 3;
    }
    /* the columns that fit the width (at least one) */
    size_t shown = 0, used = 0;
    while (shown < t->ncols && (shown == 0 || used + 2 + w[shown] <= width)) {
        used += (shown ? 2 : 0) + w[shown];
        shown++;
    }
    for (size_t line = 0; line <= rows; line++) {
        for (size_t c = 0; c < shown; c++) {
            if (c) tl_sb_puts(out, "  ");
            int num = t->cols[c].type != TL_COL_STR;
            if (line == 0) {
                cell_fit(out, t->cols[c].name, strlen(t->cols[c].name), w[c], num);
            } else {
                tl_sb_clear(&cell);
                tl_table_cell_text(t, c, line - 1, &cell);
                cell_fit(out, cell.s ? cell.s : "", cell.len, w[c], num);
            }
        }
        tl_sb_putc(out, '\n');
    }
    if (rows < t->nrows || shown < t->ncols) {
        tl_sb_puts(out, "(");
        if (rows < t->nrows) tl_sb_printf(out, "%zu more rows", t->nrows - rows);
        if (rows < t->nrows && shown < t->ncols) tl_sb_puts(out, "; ");
        if (shown < t->ncols) {
            tl_sb_printf(out, "%zu more columns:", t->ncols - shown);
            for (size_t c = shown; c < t->ncols; c++) tl_sb_printf(out, "%s %s", c > shown ? "," : "", t->cols[c].name);
        }
        tl_sb_puts(out, ")\n");
    }
    tl_sb_free(&cell);
    free(w);
}
