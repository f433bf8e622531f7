/* cpu_op_map.c — the cpu_op map JSON texts (inference-and-comparative spec
 * §2.2): cpu_op_map_trace1.json and cpu_op_map_trace2.json (per side, the
 * summary's cpu_op names by their kernels) and cpu_op_map.json (the trace1 to
 * trace2 renames), as json.dump(indent=2, ensure_ascii=False) writes them.
 *
 * Owns: the texts it returns (malloc'd, freed by the caller); reads the
 * diff_stats Table and the summary only. */
#include "diff_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/msort.h"

/* ---------------------------------------------------------------- JSON */

static void js_str(tl_sbuf *b, const char *s)
{
    tl_sb_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': tl_sb_puts(b, "\\\""); break;
        case '\\': tl_sb_puts(b, "\\\\"); break;
        case '\n': tl_sb_puts(b, "\\n"); break;
        case '\r': tl_sb_puts(b, "\\r"); break;
        case '\t': tl_sb_puts(b, "\\t"); break;
        case '\b': tl_sb_puts(b, "\\b"); break;
        case '\f': tl_sb_puts(b, "\\f"); break;
        default:
            if (*p < 0x20) tl_sb_printf(b, "\\u%04x", *p);
            else tl_sb_putc(b, (char)*p);
        }
    }
    tl_sb_putc(b, '"');
}

static void js_nl(tl_sbuf *b, int level)
{
    tl_sb_putc(b, '\n');
    for (int i = 0; i < level; i++) tl_sb_puts(b, "  ");
}

static void js_list(tl_sbuf *b, const char *const *v, size_t n, int level)
{
    if (!n) {
        tl_sb_puts(b, "[]");
        return;
    }
    tl_sb_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) tl_sb_putc(b, ',');
        js_nl(b, level + 1);
        js_str(b, v[i]);
    }
    js_nl(b, level);
    tl_sb_putc(b, ']');
}

static int cmp_cstr(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

/* Sorted unique strings (Python's sorted(set(...)): code point order, which
 * is the byte order of UTF-8); v is sorted in place, returns the count. */
static size_t sort_unique(const char **v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_cstr);
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (!w || strcmp(v[w - 1], v[i])) v[w++] = v[i];
    return w;
}

/* Rows grouped by a uint32 key: groups in order of first appearance, rows in
 * table order within a group. */
typedef struct groups {
    size_t n;          /* groups */
    uint32_t *key;     /* per group */
    size_t *off;       /* group g: rows[off[g] .. off[g+1]) */
    size_t *rows;
} groups;

static void groups_make(groups *g, const uint32_t *keys, const size_t *rows, size_t n)
{
    tl_map ix;
    tl_map_init(&ix, n + 1);
    uint32_t *gi = tl_xmalloc((n + 1) * sizeof *gi);
    g->key = tl_xmalloc((n + 1) * sizeof *g->key);
    g->n = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t x = tl_map_get(&ix, keys[i], 0);
        if (x == UINT32_MAX) {
            x = (uint32_t)g->n++;
            g->key[x] = keys[i];
            tl_map_put(&ix, keys[i], 0, x);
        }
        gi[i] = x;
    }
    g->off = tl_xcalloc(g->n + 2, sizeof *g->off);
    for (size_t i = 0; i < n; i++) g->off[gi[i] + 2]++;
    for (size_t k = 2; k < g->n + 2; k++) g->off[k] += g->off[k - 1];
    g->rows = tl_xmalloc((n + 1) * sizeof *g->rows);
    for (size_t i = 0; i < n; i++) g->rows[g->off[gi[i] + 1]++] = rows ? rows[i] : i;
    free(gi);
    tl_map_free(&ix);
}

static void groups_free(groups *g)
{
    free(g->key);
    free(g->off);
    free(g->rows);
}

/* The table's pool id of a string cell (TL_NULL_STR when missing). */
static uint32_t sid(const tl_table *t, size_t col, size_t row) { return t->cols[col].v.s[row]; }
static const char *sstr(const tl_table *t, uint32_t id) { return id == TL_NULL_STR ? "" : tl_strpool_get(&t->pool, id); }

/* cpu_op_map_trace1/2.json: {cpu_op_name: sorted unique kernel names}, keys sorted. */
char *tl_diff_cpu_op_map_side(const tl_table *s, const char *source)
{
    size_t cn = (size_t)tl_table_col(s, "name"), cc = (size_t)tl_table_col(s, "cpu_op_name"),
           cs = (size_t)tl_table_col(s, "source");
    size_t *rows = tl_xmalloc((s->nrows + 1) * sizeof *rows), n = 0;
    uint32_t *keys = tl_xmalloc((s->nrows + 1) * sizeof *keys);
    for (size_t r = 0; r < s->nrows; r++)
        if (!strcmp(sstr(s, sid(s, cs, r)), source)) {
            keys[n] = sid(s, cc, r);
            rows[n++] = r;
        }
    groups g;
    groups_make(&g, keys, rows, n);
    /* groups by op name, sorted */
    size_t *ord = tl_xmalloc((g.n + 1) * sizeof *ord);
    const char **nm = tl_xmalloc((g.n + 1) * sizeof *nm);
    for (size_t k = 0; k < g.n; k++) nm[k] = sstr(s, g.key[k]);
    for (size_t k = 0; k < g.n; k++) ord[k] = k;
    for (size_t i = 1; i < g.n; i++) { /* insertion sort of group indices by name */
        size_t x = ord[i], j = i;
        while (j > 0 && strcmp(nm[ord[j - 1]], nm[x]) > 0) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = x;
    }
    const char **vals = tl_xmalloc((n + 1) * sizeof *vals);
    tl_sbuf b;
    tl_sb_init(&b);
    if (!g.n) tl_sb_puts(&b, "{}");
    else {
        tl_sb_putc(&b, '{');
        for (size_t k = 0; k < g.n; k++) {
            size_t gk = ord[k], m = 0;
            for (size_t i = g.off[gk]; i < g.off[gk + 1]; i++) vals[m++] = sstr(s, sid(s, cn, g.rows[i]));
            m = sort_unique(vals, m);
            if (k) tl_sb_putc(&b, ',');
            js_nl(&b, 1);
            js_str(&b, nm[gk]);
            tl_sb_puts(&b, ": ");
            js_list(&b, vals, m, 1);
        }
        js_nl(&b, 0);
        tl_sb_putc(&b, '}');
    }
    groups_free(&g);
    free(ord);
    free(nm);
    free(vals);
    free(rows);
    free(keys);
    return tl_sb_take(&b);
}

/* the text after the last "::" of a left-to-right split */
static const char *after_ns(const char *s)
{
    const char *last = s, *p = s;
    while ((p = strstr(p, "::"))) {
        p += 2;
        last = p;
    }
    return last;
}

/* the first 20 characters (code points) */
static size_t prefix20(const char *s)
{
    size_t i = 0;
    for (int ch = 0; s[i] && ch < 20; ch++) {
        i++;
        while (((unsigned char)s[i] & 0xc0) == 0x80) i++;
    }
    return i;
}

typedef TL_VEC(uint32_t) idlist;

static int in_ids(const idlist *l, uint32_t x)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == x) return 1;
    return 0;
}

static void push_unique_id(idlist *l, uint32_t x)
{
    if (!in_ids(l, x)) TL_PUSH(*l, x);
}

static void remove_id(idlist *l, uint32_t x)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i] == x) {
            memmove(l->v + i, l->v + i + 1, (l->n - i - 1) * sizeof *l->v);
            l->n--;
            return;
        }
}

/* get_cpu_op_map's rename map over the diff_stats rows (ids of ds's pool). */
typedef struct rename_ctx {
    const tl_table *ds;
    tl_map mods;        /* cpu op id -> index into mod_lists */
    TL_VEC(idlist) mod_lists;
    tl_map to;          /* cpu op id -> index into names (the new name) */
    TL_VEC(char *) names;
} rename_ctx;

/* find_common_name; NULL when none (the result is malloc'd) */
static char *common_name(const rename_ctx *rc, uint32_t i1, uint32_t i2)
{
    const char *n1 = sstr(rc->ds, i1), *n2 = sstr(rc->ds, i2);
    const char *a = after_ns(n1), *b = after_ns(n2);
    if (!strcmp(a, b)) return tl_xstrdup(a);
    if (strstr(b, a)) return tl_xstrdup(a);
    if (strstr(a, b)) return tl_xstrdup(b);
    size_t pa = prefix20(a), pb = prefix20(b);
    if (pa == pb && !memcmp(a, b, pa)) {
        tl_sbuf s;
        tl_sb_init(&s);
        tl_sb_printf(&s, "%s/%s", a, b);
        return tl_sb_take(&s);
    }
    uint32_t m1 = tl_map_get(&rc->mods, i1, 0), m2 = tl_map_get(&rc->mods, i2, 0);
    if (m1 != UINT32_MAX && m2 != UINT32_MAX && rc->mod_lists.v[m1].n == 1 && rc->mod_lists.v[m2].n == 1 &&
        rc->mod_lists.v[m1].v[0] == rc->mod_lists.v[m2].v[0]) {
        tl_sbuf s;
        tl_sb_init(&s);
        tl_sb_puts(&s, "");
        for (const char *p = sstr(rc->ds, rc->mod_lists.v[m1].v[0]); *p; p++)
            if (*p != ' ') tl_sb_putc(&s, *p);
        return tl_sb_take(&s);
    }
    return NULL;
}

static void add_rename(rename_ctx *rc, uint32_t from, const char *to)
{
    uint32_t k = tl_map_get(&rc->to, from, 0);
    if (k != UINT32_MAX) {
        free(rc->names.v[k]);
        rc->names.v[k] = tl_xstrdup(to);
        return;
    }
    tl_map_put(&rc->to, from, 0, (uint32_t)rc->names.n);
    TL_PUSH(rc->names, tl_xstrdup(to));
}

static void rename_map(const tl_table *ds, rename_ctx *rc)
{
    size_t cc = (size_t)tl_table_col(ds, "cpu_op_name"), cs = (size_t)tl_table_col(ds, "source"),
           cl = (size_t)tl_table_col(ds, "lowest_common_ancestor_id"), cm = (size_t)tl_table_col(ds, "nn_module_parent");
    size_t n = ds->nrows;
    uint32_t *keys = tl_xmalloc((n + 1) * sizeof *keys);
    size_t *rows = tl_xmalloc((n + 1) * sizeof *rows);
    /* module_map: per cpu op, the unique nn_module_parents of its last source */
    for (int src = 0; src < 2; src++) {
        size_t m = 0;
        for (size_t r = 0; r < n; r++)
            if (!strcmp(sstr(ds, sid(ds, cs, r)), src ? "trace2" : "trace1")) {
                keys[m] = sid(ds, cc, r);
                rows[m++] = r;
            }
        groups g;
        groups_make(&g, keys, rows, m);
        for (size_t k = 0; k < g.n; k++) {
            idlist mods = {0};
            for (size_t i = g.off[k]; i < g.off[k + 1]; i++) push_unique_id(&mods, sid(ds, cm, g.rows[i]));
            uint32_t x = tl_map_get(&rc->mods, g.key[k], 0);
            if (x == UINT32_MAX) {
                tl_map_put(&rc->mods, g.key[k], 0, (uint32_t)rc->mod_lists.n);
                TL_PUSH(rc->mod_lists, mods);
            } else {
                free(rc->mod_lists.v[x].v);
                rc->mod_lists.v[x] = mods;
            }
        }
        groups_free(&g);
    }
    /* the LCA ids in order of first appearance */
    size_t m = 0;
    for (size_t r = 0; r < n; r++)
        if (!tl_table_is_null(ds, cl, r)) {
            keys[m] = (uint32_t)ds->cols[cl].v.i[r];
            rows[m++] = r;
        }
    groups g;
    groups_make(&g, keys, rows, m);
    tl_map visited;
    tl_map_init(&visited, 64);
    for (size_t k = 0; k < g.n; k++) {
        idlist n1 = {0}, n2 = {0};
        for (size_t i = g.off[k]; i < g.off[k + 1]; i++) {
            size_t r = g.rows[i];
            if (!strcmp(sstr(ds, sid(ds, cs, r)), "trace1")) push_unique_id(&n1, sid(ds, cc, r));
            else push_unique_id(&n2, sid(ds, cc, r));
        }
        if (n1.n && n2.n) {
            int all = 1;
            for (size_t i = 0; i < n1.n && all; i++) all = tl_map_get(&visited, n1.v[i], 0) != UINT32_MAX;
            for (size_t i = 0; i < n2.n && all; i++) all = tl_map_get(&visited, n2.v[i], 0) != UINT32_MAX;
            if (!all) {
                for (size_t i = 0; i < n1.n; i++) tl_map_put(&visited, n1.v[i], 0, 1);
                for (size_t i = 0; i < n2.n; i++) tl_map_put(&visited, n2.v[i], 0, 1);
                if (n1.n == n2.n) {
                    for (size_t i = 0; i < n1.n; i++) {
                        if (n1.v[i] == n2.v[i]) continue;
                        char *cn = common_name(rc, n1.v[i], n2.v[i]);
                        if (cn) {
                            add_rename(rc, n2.v[i], cn);
                            add_rename(rc, n1.v[i], cn);
                            free(cn);
                        }
                    }
                } else {
                    idlist copy = {0};
                    for (size_t i = 0; i < n1.n; i++) TL_PUSH(copy, n1.v[i]);
                    for (size_t i = 0; i < n1.n; i++)
                        if (in_ids(&n2, n1.v[i])) {
                            remove_id(&copy, n1.v[i]);
                            remove_id(&n2, n1.v[i]);
                        }
                    for (size_t i = 0; i < copy.n; i++)
                        for (size_t j = 0; j < n2.n; j++) {
                            char *cn = common_name(rc, copy.v[i], n2.v[j]);
                            if (!cn) continue;
                            add_rename(rc, copy.v[i], cn);
                            add_rename(rc, n2.v[j], cn);
                            free(cn);
                            memmove(n2.v + j, n2.v + j + 1, (n2.n - j - 1) * sizeof *n2.v);
                            n2.n--;
                            break;
                        }
                    free(copy.v);
                }
            }
        }
        free(n1.v);
        free(n2.v);
    }
    tl_map_free(&visited);
    groups_free(&g);
    free(keys);
    free(rows);
}

/* cpu_op_map.json: per (renamed) cpu op, per source, its kernels and
 * (space-free) nn_module_parents; the renaming is applied to a copy
 * ([FIX]: the summary keeps the real names). */
char *tl_diff_cpu_op_map_json(const tl_table *ds, const tl_table *s, int identical)
{
    rename_ctx rc;
    memset(&rc, 0, sizeof rc);
    rc.ds = ds;
    tl_map_init(&rc.mods, 64);
    tl_map_init(&rc.to, 64);
    rename_map(ds, &rc);
    size_t cn = (size_t)tl_table_col(s, "name"), cc = (size_t)tl_table_col(s, "cpu_op_name"),
           cs = (size_t)tl_table_col(s, "source"), cm = (size_t)tl_table_col(s, "nn_module_parent");
    size_t dcc = (size_t)tl_table_col(ds, "cpu_op_name");
    size_t n = s->nrows;
    /* the renamed op of each summary row, interned */
    tl_strpool ops, mods;
    tl_strpool_init(&ops);
    tl_strpool_init(&mods);
    uint32_t *op = tl_xmalloc((n + 1) * sizeof *op), *mod = tl_xmalloc((n + 1) * sizeof *mod);
    tl_sbuf m;
    tl_sb_init(&m);
    for (size_t r = 0; r < n; r++) {
        const char *nm = sstr(s, sid(s, cc, r));
        /* the rename map is keyed by ds's pool ids */
        uint32_t did = tl_strpool_find(&ds->pool, nm, strlen(nm));
        uint32_t k = did == UINT32_MAX ? UINT32_MAX : tl_map_get(&rc.to, did, 0);
        const char *to = k == UINT32_MAX ? nm : rc.names.v[k];
        op[r] = tl_strpool_intern(&ops, to, strlen(to));
        tl_sb_clear(&m);
        tl_sb_puts(&m, "");
        for (const char *p = sstr(s, sid(s, cm, r)); *p; p++)
            if (*p != ' ') tl_sb_putc(&m, *p);
        mod[r] = tl_strpool_intern(&mods, m.s, m.len);
    }
    (void)dcc;
    tl_sb_free(&m);
    groups g;
    groups_make(&g, op, NULL, n);
    const char **vals = tl_xmalloc((n + 1) * sizeof *vals);
    size_t *rows = tl_xmalloc((n + 1) * sizeof *rows);
    tl_sbuf b;
    tl_sb_init(&b);
    if (!g.n) tl_sb_puts(&b, "{}");
    else {
        tl_sb_putc(&b, '{');
        for (size_t k = 0; k < g.n; k++) {
            if (k) tl_sb_putc(&b, ',');
            js_nl(&b, 1);
            js_str(&b, tl_strpool_get(&ops, g.key[k]));
            tl_sb_puts(&b, ": ");
            int nsrc = 0;
            for (int src = 0; src < 2; src++) {
                if (identical && src == 1) break;
                const char *sn = src ? "trace2" : "trace1";
                size_t nr = 0;
                for (size_t i = g.off[k]; i < g.off[k + 1]; i++)
                    if (!strcmp(sstr(s, sid(s, cs, g.rows[i])), sn)) rows[nr++] = g.rows[i];
                if (!nr) continue;
                int lvl = identical ? 1 : 2;
                if (!identical) {
                    tl_sb_puts(&b, nsrc ? "," : "{");
                    js_nl(&b, 2);
                    js_str(&b, sn);
                    tl_sb_puts(&b, ": ");
                }
                nsrc++;
                tl_sb_putc(&b, '{');
                js_nl(&b, lvl + 1);
                js_str(&b, "kernels");
                tl_sb_puts(&b, ": ");
                for (size_t i = 0; i < nr; i++) vals[i] = sstr(s, sid(s, cn, rows[i]));
                js_list(&b, vals, sort_unique(vals, nr), lvl + 1);
                tl_sb_putc(&b, ',');
                js_nl(&b, lvl + 1);
                js_str(&b, "nn_module_parents");
                tl_sb_puts(&b, ": ");
                for (size_t i = 0; i < nr; i++) vals[i] = tl_strpool_get(&mods, mod[rows[i]]);
                js_list(&b, vals, sort_unique(vals, nr), lvl + 1);
                js_nl(&b, lvl);
                tl_sb_putc(&b, '}');
            }
            if (!identical) {
                if (!nsrc) tl_sb_puts(&b, "{}");
                else {
                    js_nl(&b, 1);
                    tl_sb_putc(&b, '}');
                }
            }
        }
        js_nl(&b, 0);
        tl_sb_putc(&b, '}');
    }
    groups_free(&g);
    free(vals);
    free(rows);
    free(op);
    free(mod);
    tl_strpool_free(&ops);
    tl_strpool_free(&mods);
    for (size_t i = 0; i < rc.mod_lists.n; i++) free(rc.mod_lists.v[i].v);
    free(rc.mod_lists.v);
    for (size_t i = 0; i < rc.names.n; i++) free(rc.names.v[i]);
    free(rc.names.v);
    tl_map_free(&rc.mods);
    tl_map_free(&rc.to);
    return tl_sb_take(&b);
}
