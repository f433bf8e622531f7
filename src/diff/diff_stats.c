/* diff_stats.c — what is read off the merged tree (inference-and-comparative
 * spec §2.2): the per-GPU-op rows with their lowest common ancestors and the
 * busy time of the LCA's GPU events, the diff_stats Table made of them
 * (generate_diff_stats, after generate_tracediff_report), whether the trace1
 * and trace2 rows are identical, and diff_stats_unique_args_summary.
 *
 * Owns: the walk's state (visited nodes, scratch lists, the memo of LCA
 * names) while it runs; the rows and LCA names it hands to tl_trace_diff; the
 * Tables it returns (freed by the caller). */
#include "diff_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../trace/argtext.h"
#include "../trace/timeline.h"
#include "../util/msort.h"
#include "../util/pyfmt.h"

/* ========================================================= diff stats */

/* re.sub(r"\(\d+\)", "", s) */
static void strip_paren_digits(const char *s, tl_sbuf *out)
{
    size_t run = 0; /* start of the text not yet copied */
    for (size_t i = 0; s[i];) {
        if (s[i] == '(' && tl_diff_is_digit((unsigned char)s[i + 1])) {
            size_t k = i + 1;
            while (tl_diff_is_digit((unsigned char)s[k])) k++;
            if (s[k] == ')') {
                tl_sb_putn(out, s + run, i - run);
                i = run = k + 1;
                continue;
            }
        }
        i++;
    }
    tl_sb_putn(out, s + run, strlen(s + run));
}

/* _get_op_name: the name, or the UID when it is empty */
static void op_name(const tl_trace *t, uint32_t u, tl_sbuf *out)
{
    const char *nm = tl_es_name(&t->es, u);
    if (*nm) tl_sb_puts(out, nm);
    else tl_sb_printf(out, "%u", u);
}

typedef struct sctx {
    tl_trace_diff *d;
    side *s;
    uint8_t *visited;
    TL_VEC(tl_diff_row) rows;
    TL_VEC(tl_interval) iv;
    TL_VEC(uint32_t) g;
    TL_VEC(uint32_t) walk; /* the walk's (node, next child) pairs */
    tl_map lca_names; /* (name ids) -> LCA name id */
    tl_sbuf b1, b2, b3;
} sctx;

/* The LCA name of a combined node (e2 != NONE: "n1 | n2" when they differ)
 * or of one side's parent node, memoised by the names. */
static uint32_t lca_name(sctx *x, int sd, uint32_t e1, uint32_t e2)
{
    const tl_trace_diff *d = x->d;
    const tl_event_store *es1 = &d->t[sd]->es;
    uint32_t n1 = es1->name[e1], n2 = e2 != NONE ? d->t[1]->es.name[e2] : UINT32_MAX;
    int memo = tl_strpool_len(&es1->names, n1) && (e2 == NONE || tl_strpool_len(&d->t[1]->es.names, n2));
    uint64_t k1 = n1, k2 = e2 != NONE ? ((uint64_t)n2 | (1ULL << 40)) : ((uint64_t)(sd + 1) << 41);
    if (memo) {
        uint32_t v = tl_map_get(&x->lca_names, k1, k2);
        if (v != UINT32_MAX) return v;
    }
    tl_sb_clear(&x->b1);
    tl_sb_clear(&x->b2);
    tl_sb_clear(&x->b3);
    tl_sb_puts(&x->b1, "");
    op_name(d->t[sd], e1, &x->b3);
    strip_paren_digits(x->b3.s, &x->b1);
    if (e2 != NONE) {
        tl_sb_clear(&x->b3);
        op_name(d->t[1], e2, &x->b3);
        tl_sb_puts(&x->b2, "");
        strip_paren_digits(x->b3.s, &x->b2);
        if (strcmp(x->b1.s, x->b2.s)) {
            tl_sb_puts(&x->b1, " | ");
            tl_sb_puts(&x->b1, x->b2.s);
        }
    }
    uint32_t v = tl_strpool_intern(&x->d->names, x->b1.s, x->b1.len);
    if (memo) tl_map_put(&x->lca_names, k1, k2, v);
    return v;
}

static int64_t busy_of(sctx *x, const tl_event_store *es, const uint32_t *g, size_t n)
{
    x->iv.n = 0;
    for (size_t i = 0; i < n; i++) {
        tl_interval v = {es->ts[g[i]], tl_es_end(es, g[i])};
        TL_PUSH(x->iv, v);
    }
    size_t m = tl_merge(x->iv.v, x->iv.n);
    return tl_length(x->iv.v, m);
}

static void add_rows(sctx *x, int sd, const uint32_t *g, size_t n, uint32_t lca, uint32_t lca_name, int64_t busy)
{
    const side *s = &x->s[sd];
    for (size_t i = 0; i < n; i++) {
        uint32_t p = tl_diff_parent_of(s, g[i]);
        while (p != NONE && s->es->cat[p] != TL_CAT_CPU_OP) p = tl_diff_parent_of(s, p);
        if (p == NONE) continue;
        tl_diff_row r = {g[i], p, lca, lca_name, busy, (uint8_t)sd};
        TL_PUSH(x->rows, r);
    }
}

/* The walk's visit of node mid (child of parent, NONE for a root): its rows;
 * 1 when the walk goes on to its children. */
static int stats_enter(sctx *x, uint32_t mid, uint32_t parent)
{
    tl_trace_diff *d = x->d;
    if (x->visited[mid]) return 0;
    const tl_merged_node *nd = &d->nodes[mid];
    const side *s1 = &x->s[0], *s2 = &x->s[1];
    if (nd->type == TL_MERGED_COMBINED) {
        uint32_t e1 = nd->uid1, e2 = nd->uid2;
        int g1 = tl_diff_is_gpu_path(s1, e1), g2 = tl_diff_is_gpu_path(s2, e2);
        if (g1 && g2) {
            const uint32_t *kids = d->kids + nd->kid_off;
            size_t nnc1 = 0, nnc2 = 0;
            for (uint32_t k = 0; k < nd->nkids; k++) {
                const tl_merged_node *ch = &d->nodes[kids[k]];
                if (ch->type == TL_MERGED_COMBINED) continue;
                if (ch->uid1 != NONE && tl_diff_is_gpu_path(s1, ch->uid1)) nnc1++;
                if (ch->uid2 != NONE && tl_diff_is_gpu_path(s2, ch->uid2)) nnc2++;
            }
            if (nnc1 || nnc2 || (tl_diff_is_kernel(s1, e1) && tl_diff_is_kernel(s2, e2))) {
                uint32_t name = lca_name(x, 0, e1, e2);
                for (int sd = 0; sd < 2; sd++) {
                    const side *s = &x->s[sd];
                    x->g.n = 0;
                    for (uint32_t k = 0; k < nd->nkids; k++) {
                        const tl_merged_node *ch = &d->nodes[kids[k]];
                        uint32_t u = sd == 0 ? ch->uid1 : ch->uid2;
                        if (ch->type == TL_MERGED_COMBINED || u == NONE || !tl_diff_is_gpu_path(s, u)) continue;
                        tl_span gs = tl_tree_gpu_span(s->tr, u);
                        for (uint32_t q = gs.b; q < gs.e; q++) TL_PUSH(x->g, s->tr->gpus.v[q]);
                        if (tl_diff_is_kernel(s, u)) TL_PUSH(x->g, u);
                    }
                    uint32_t e = sd == 0 ? e1 : e2;
                    if (tl_diff_is_kernel(s, e)) TL_PUSH(x->g, e);
                    int64_t busy = busy_of(x, s->es, x->g.v, x->g.n);
                    add_rows(x, sd, x->g.v, x->g.n, mid, name, busy);
                }
                x->visited[mid] = 1;
                for (uint32_t k = 0; k < nd->nkids; k++) {
                    const tl_merged_node *ch = &d->nodes[kids[k]];
                    if (ch->type == TL_MERGED_COMBINED) continue;
                    if ((ch->uid1 != NONE && tl_diff_is_gpu_path(s1, ch->uid1)) || (ch->uid2 != NONE && tl_diff_is_gpu_path(s2, ch->uid2)))
                        x->visited[kids[k]] = 1;
                }
            }
        }
        return g1 || g2;
    }
    int sd = nd->type == TL_MERGED_TRACE1 ? 0 : 1;
    const side *s = &x->s[sd];
    uint32_t e = sd == 0 ? nd->uid1 : nd->uid2;
    if (tl_diff_is_gpu_path(s, e)) {
        uint32_t lca = NONE, name = UINT32_MAX;
        if (parent != NONE) {
            const tl_merged_node *pn = &d->nodes[parent];
            name = lca_name(x, sd, sd == 0 ? pn->uid1 : pn->uid2, NONE);
            lca = parent;
        }
        size_t n;
        const uint32_t *g = tl_tree_gpus(s->tr, e, &n);
        add_rows(x, sd, g, n, lca == NONE ? UINT32_MAX : lca, name, busy_of(x, s->es, g, n));
    }
    x->visited[mid] = 1;
    return 0;
}

/* The walk from root, depth-first in child order, on an explicit stack of
 * (node, next child) pairs: the merged tree can be any depth. */
static void stats_walk(sctx *x, uint32_t root)
{
    const tl_trace_diff *d = x->d;
    x->walk.n = 0;
    if (stats_enter(x, root, NONE)) {
        TL_PUSH(x->walk, root);
        TL_PUSH(x->walk, 0);
    }
    while (x->walk.n) {
        uint32_t mid = x->walk.v[x->walk.n - 2], k = x->walk.v[x->walk.n - 1];
        const tl_merged_node *nd = &d->nodes[mid];
        if (k == nd->nkids) {
            x->walk.n -= 2;
            continue;
        }
        x->walk.v[x->walk.n - 1] = k + 1;
        uint32_t ch = d->kids[nd->kid_off + k];
        if (stats_enter(x, ch, mid)) {
            TL_PUSH(x->walk, ch);
            TL_PUSH(x->walk, 0);
        }
    }
}

/* The rows: stats_walk from every root of the merged tree. */
void tl_diff_collect_rows(tl_trace_diff *d, side *s)
{
    sctx x;
    memset(&x, 0, sizeof x);
    x.d = d;
    x.s = s;
    x.visited = tl_xcalloc(d->n_nodes + 1, 1);
    tl_map_init(&x.lca_names, 256);
    tl_sb_init(&x.b1);
    tl_sb_init(&x.b2);
    tl_sb_init(&x.b3);
    for (size_t i = 0; i < d->n_roots; i++) stats_walk(&x, d->roots[i]);
    free(x.visited);
    free(x.walk.v);
    free(x.iv.v);
    free(x.g.v);
    tl_map_free(&x.lca_names);
    tl_sb_free(&x.b1);
    tl_sb_free(&x.b2);
    tl_sb_free(&x.b3);
    d->rows = x.rows.v;
    d->n_rows = x.rows.n;
}

/* ------------------------------------------------- the diff_stats Table */

static const char *const DS_COLS[] = {"name", "cpu_op_name", "cpu_op_uid", "source", "Input Dims", "Input Strides",
                                      "Input type", "Concrete Inputs", "kernel_time", "busy_time",
                                      "lowest_common_ancestor_name", "lowest_common_ancestor_id", "gpu_op_uid",
                                      "nn_module_stack", "nn_module_parent"};

/* nn_module_stack of a host event: the enclosing nn.Module python events'
 * names, outermost first, trailing _<digits> removed; ["root"] when none. */
static void module_stack(const tl_trace *t, uint32_t u, tl_sbuf *stack, tl_sbuf *parent)
{
    const tl_event_store *es = &t->es;
    TL_VEC(uint32_t) mods = {0};
    for (uint32_t p = t->tree.parent[u]; p != NONE; p = t->tree.parent[p]) {
        if (es->cat[p] != TL_CAT_PYTHON_FUNCTION) continue;
        if (strncmp(tl_es_name(es, p), "nn.Module:", 10) != 0) continue;
        TL_PUSH(mods, p);
    }
    if (!mods.n) {
        tl_sb_puts(stack, "root");
        tl_sb_puts(parent, "root");
    }
    for (size_t k = mods.n; k-- > 0;) {
        const char *nm = tl_es_name(es, mods.v[k]);
        size_t len = strlen(nm), e = len;
        while (e > 0 && tl_diff_is_digit((unsigned char)nm[e - 1])) e--;
        if (e < len && e > 0 && nm[e - 1] == '_') len = e - 1;
        if (k + 1 < mods.n) tl_sb_putc(stack, ';');
        tl_sb_putn(stack, nm, len);
        if (k == 0) tl_sb_putn(parent, nm, len);
    }
    free(mods.v);
}

/* The pool id of s in t (its text interned once). */
static uint32_t tid(tl_table *t, const char *s) { return tl_strpool_intern(&t->pool, s, strlen(s)); }

/* The diff_stats Table of the rows. Text cells repeat a lot (one cpu op's
 * args and module stack for all its kernels), so each distinct text is
 * interned once and the rows get its pool id. */
tl_table *tl_diff_stats_table(tl_trace_diff *d, const tl_diff_row *rows, size_t n)
{
    tl_table *t = tl_table_new("diff_stats");
    size_t col[15];
    for (int k = 0; k < 15; k++) {
        tl_coltype ty = TL_COL_STR;
        if (k == 2 || k == 11 || k == 12) ty = TL_COL_I64;
        if (k == 8 || k == 9) ty = TL_COL_F64;
        col[k] = tl_table_add_col(t, DS_COLS[k], ty);
    }
    tl_argtext at[2];
    tl_argtext_init(&at[0], d->t[0]);
    tl_argtext_init(&at[1], d->t[1]);
    /* per (side, cpu op): the pool ids of its 7 text cells; per (side, name):
     * the pool id of the kernel name (dense arrays holding the value + 1, 0 =
     * not yet) */
    typedef struct opcells {
        uint32_t v[7];
    } opcells;
    TL_VEC(opcells) ops = {0};
    uint32_t *op_of[2], *name_of[2];
    for (int k = 0; k < 2; k++) {
        op_of[k] = tl_xcalloc(d->t[k]->es.n + 1, sizeof *op_of[k]);
        name_of[k] = tl_xcalloc((size_t)d->t[k]->es.names.n + 1, sizeof *name_of[k]);
    }
    uint32_t *lca_ix = tl_xmalloc((d->names.n + 1) * sizeof *lca_ix);
    memset(lca_ix, 0xff, (d->names.n + 1) * sizeof *lca_ix);
    tl_sbuf sb, pb;
    tl_sb_init(&sb);
    tl_sb_init(&pb);
    uint32_t src_id[2] = {tid(t, "trace1"), tid(t, "trace2")};
    static const uint32_t keys[4] = {TL_K_INPUT_DIMS, TL_K_INPUT_STRIDES, TL_K_INPUT_TYPE, TL_K_CONCRETE_INPUTS};
    for (size_t i = 0; i < n; i++) {
        const tl_diff_row *r = &rows[i];
        const tl_trace *tr = d->t[r->src];
        const tl_event_store *es = &tr->es;
        size_t row = tl_table_add_row(t);
        uint32_t *k = &name_of[r->src][es->name[r->gpu]];
        if (!*k) *k = tid(t, tl_es_name(es, r->gpu)) + 1;
        t->cols[col[0]].v.s[row] = *k - 1;
        uint32_t o = op_of[r->src][r->cpu_op] - 1;
        if (o == UINT32_MAX) {
            opcells c;
            c.v[0] = tid(t, tl_es_name(es, r->cpu_op));
            for (int a = 0; a < 4; a++) {
                const char *v = tl_argtext_tuple(&at[r->src], r->cpu_op, keys[a]);
                c.v[1 + a] = tid(t, v ? v : "");
            }
            tl_sb_clear(&sb);
            tl_sb_clear(&pb);
            tl_sb_puts(&sb, "");
            tl_sb_puts(&pb, "");
            module_stack(tr, r->cpu_op, &sb, &pb);
            c.v[5] = tid(t, sb.s);
            c.v[6] = tid(t, pb.s);
            o = (uint32_t)ops.n;
            TL_PUSH(ops, c);
            op_of[r->src][r->cpu_op] = o + 1;
        }
        const opcells *c = &ops.v[o];
        t->cols[col[1]].v.s[row] = c->v[0];
        tl_table_set_i64(t, col[2], row, r->cpu_op);
        t->cols[col[3]].v.s[row] = src_id[r->src];
        for (int a = 0; a < 4; a++) t->cols[col[4 + a]].v.s[row] = c->v[1 + a];
        tl_table_set_f64(t, col[8], row, (es->flags[r->gpu] & TL_F_DUR) ? (double)es->dur[r->gpu] / 1000.0 : 0.0);
        tl_table_set_f64(t, col[9], row, (double)r->busy_ns / 1000.0);
        if (r->lca_name != UINT32_MAX) {
            if (lca_ix[r->lca_name] == UINT32_MAX) lca_ix[r->lca_name] = tid(t, tl_strpool_get(&d->names, r->lca_name));
            t->cols[col[10]].v.s[row] = lca_ix[r->lca_name];
        }
        if (r->lca != UINT32_MAX) tl_table_set_i64(t, col[11], row, r->lca);
        tl_table_set_i64(t, col[12], row, r->gpu);
        t->cols[col[13]].v.s[row] = c->v[5];
        t->cols[col[14]].v.s[row] = c->v[6];
    }
    tl_sb_free(&sb);
    tl_sb_free(&pb);
    free(ops.v);
    free(lca_ix);
    for (int j = 0; j < 2; j++) {
        free(op_of[j]);
        free(name_of[j]);
    }
    tl_argtext_free(&at[0]);
    tl_argtext_free(&at[1]);
    return t;
}

/* Two cells of one table hold the same value (missing equals missing). */
static int cell_eq(const tl_table *t, size_t c, size_t a, size_t b)
{
    const tl_col *col = &t->cols[c];
    switch (col->type) {
    case TL_COL_STR: return col->v.s[a] == col->v.s[b];
    case TL_COL_F64: {
        double x = col->v.f[a], y = col->v.f[b];
        return x == y || (isnan(x) && isnan(y));
    }
    default: return col->null[a] == col->null[b] && (col->null[a] || col->v.i[a] == col->v.i[b]);
    }
}

/* The trace1 and trace2 rows are equal column for column (source aside),
 * as DataFrame.equals after reset_index. */
int tl_diff_rows_identical(const tl_table *t)
{
    long src = tl_table_col(t, "source");
    TL_VEC(size_t) a = {0}, b = {0};
    for (size_t r = 0; r < t->nrows; r++) {
        if (!strcmp(tl_table_str(t, (size_t)src, r), "trace1")) TL_PUSH(a, r);
        else TL_PUSH(b, r);
    }
    int same = a.n == b.n;
    for (size_t k = 0; k < a.n && same; k++)
        for (size_t c = 0; c < t->ncols && same; c++)
            if ((long)c != src) same = cell_eq(t, c, a.v[k], b.v[k]);
    free(a.v);
    free(b.v);
    return same;
}

/* ------------------------------------------------- the unique-args summary */


/* Python str() of a cell, for the summary's tie-breaking sorts. */
static const char *py_str(const tl_table *t, size_t c, size_t r, char *buf, size_t cap)
{
    const tl_col *col = &t->cols[c];
    if (tl_table_is_null(t, c, r)) return col->type == TL_COL_F64 ? "nan" : "None";
    switch (col->type) {
    case TL_COL_STR: return tl_strpool_get(&t->pool, col->v.s[r]);
    case TL_COL_F64: tl_pyfloat_repr(buf, cap, col->v.f[r]); return buf;
    case TL_COL_BOOL: return col->v.i[r] ? "True" : "False";
    default: snprintf(buf, cap, "%lld", (long long)col->v.i[r]); return buf;
    }
}

typedef struct sum_sort {
    const tl_table *t;
    size_t sum_col;
    uint32_t **rank; /* per column, made when first needed: rank of the cell's str() in the column */
} sum_sort;

typedef struct rank_ctx {
    const tl_strpool *pool;
    const uint32_t *ids;
} rank_ctx;

static int by_text(void *ctx, size_t a, size_t b)
{
    const rank_ctx *c = ctx;
    const char *x = c->ids[a] == TL_NULL_STR ? "None" : tl_strpool_get(c->pool, c->ids[a]);
    const char *y = c->ids[b] == TL_NULL_STR ? "None" : tl_strpool_get(c->pool, c->ids[b]);
    return strcmp(x, y);
}

/* rank[r]: the position of str(cell r) among the column's distinct texts */
static uint32_t *text_ranks(const tl_table *t, size_t c)
{
    size_t n = t->nrows;
    tl_strpool texts;
    tl_strpool_init(&texts);
    const tl_strpool *pool = &texts;
    uint32_t *tx = tl_xmalloc((n + 1) * sizeof *tx);
    size_t m;
    if (t->cols[c].type == TL_COL_STR) {
        /* the pool ids themselves; None for missing */
        pool = &t->pool;
        m = t->pool.n + 1;
        for (size_t r = 0; r < n; r++) tx[r] = t->cols[c].v.s[r] == TL_NULL_STR ? (uint32_t)t->pool.n : t->cols[c].v.s[r];
    } else {
        char buf[48];
        for (size_t r = 0; r < n; r++) {
            const char *v = py_str(t, c, r, buf, sizeof buf);
            tx[r] = tl_strpool_intern(&texts, v, strlen(v));
        }
        m = texts.n;
    }
    /* the distinct values used, sorted by text */
    uint8_t *used = tl_xcalloc(m + 1, 1);
    for (size_t r = 0; r < n; r++) used[tx[r]] = 1;
    uint32_t *ids = tl_xmalloc((m + 1) * sizeof *ids);
    size_t *ord = tl_xmalloc((m + 1) * sizeof *ord), k = 0;
    for (size_t i = 0; i < m; i++)
        if (used[i]) {
            ids[k] = pool == &t->pool && i == t->pool.n ? TL_NULL_STR : (uint32_t)i;
            ord[k] = k;
            k++;
        }
    rank_ctx rc = {pool, ids};
    tl_msort(ord, k, by_text, &rc);
    uint32_t *rank_of = tl_xmalloc((m + 1) * sizeof *rank_of);
    for (size_t i = 0; i < k; i++) {
        uint32_t v = ids[ord[i]];
        rank_of[v == TL_NULL_STR ? t->pool.n : v] = (uint32_t)i;
    }
    for (size_t r = 0; r < n; r++) tx[r] = rank_of[tx[r]];
    free(used);
    free(ids);
    free(ord);
    free(rank_of);
    tl_strpool_free(&texts);
    return tx;
}

/* kernel_time_sum descending, ties by the str() of the other columns, left to right */
static int sum_cmp(void *ctx, size_t a, size_t b)
{
    sum_sort *s = ctx;
    double x = s->t->cols[s->sum_col].v.f[a], y = s->t->cols[s->sum_col].v.f[b];
    int xn = isnan(x), yn = isnan(y);
    if (xn != yn) return xn ? 1 : -1;
    if (!xn && x != y) return x > y ? -1 : 1;
    for (size_t c = 0; c < s->t->ncols; c++) {
        if (c == s->sum_col || cell_eq(s->t, c, a, b)) continue;
        if (!s->rank[c]) s->rank[c] = text_ranks(s->t, c);
        uint32_t p = s->rank[c][a], q = s->rank[c][b];
        if (p != q) return p < q ? -1 : 1;
    }
    return 0;
}

/* Cell value of a key column as a 64-bit identity (pool id, integer or
 * double bits; missing: a value no cell has). */
static uint64_t cell_key(const tl_table *t, size_t c, size_t r)
{
    const tl_col *col = &t->cols[c];
    if (tl_table_is_null(t, c, r)) return 0xfff8dead5151ULL;
    if (col->type == TL_COL_STR) return col->v.s[r];
    if (col->type == TL_COL_F64) {
        double v = col->v.f[r] == 0 ? 0.0 : col->v.f[r];
        uint64_t u;
        memcpy(&u, &v, 8);
        return u;
    }
    return (uint64_t)col->v.i[r];
}

/* diff_stats_unique_args_summary (get_df_diff_stats_unique_args): the rows
 * grouped by every column but kernel_time, lowest_common_ancestor_id and
 * gpu_op_uid (dropna=False), with kernel_time_mean, kernel_time_sum and
 * operation_count; sorted by kernel_time_sum descending, ties by the str()
 * of the other columns left to right. The group-by is the Table engine's
 * semantics on the cells' pool ids, so no text is hashed again. */
tl_table *tl_diff_unique_args_summary(const tl_table *ds)
{
    static const char *const keys[] = {"name", "cpu_op_name", "cpu_op_uid", "source", "Input Dims", "Input Strides",
                                       "Input type", "Concrete Inputs", "busy_time", "lowest_common_ancestor_name",
                                       "nn_module_stack", "nn_module_parent"};
    enum { NK = 12 };
    size_t kc[NK];
    for (int k = 0; k < NK; k++) kc[k] = (size_t)tl_table_col(ds, keys[k]);
    size_t ckt = (size_t)tl_table_col(ds, "kernel_time");
    size_t n = ds->nrows, nslots = 64;
    while (nslots < 2 * n + 2) nslots *= 2;
    uint32_t *slot = tl_xmalloc(nslots * sizeof *slot);
    memset(slot, 0xff, nslots * sizeof *slot);
    uint32_t *gof = tl_xmalloc((n + 1) * sizeof *gof); /* row -> group */
    TL_VEC(size_t) first = {0};
    for (size_t r = 0; r < n; r++) {
        uint64_t h = 0x12345;
        for (int k = 0; k < NK; k++) h = tl_diff_mix64(h, cell_key(ds, kc[k], r));
        size_t sl = h & (nslots - 1);
        for (;;) {
            uint32_t g = slot[sl];
            if (g == UINT32_MAX) {
                slot[sl] = (uint32_t)first.n;
                gof[r] = (uint32_t)first.n;
                TL_PUSH(first, r);
                break;
            }
            int same = 1;
            for (int k = 0; k < NK && same; k++) same = cell_key(ds, kc[k], first.v[g]) == cell_key(ds, kc[k], r);
            if (same) {
                gof[r] = g;
                break;
            }
            sl = (sl + 1) & (nslots - 1);
        }
    }
    free(slot);
    size_t ng = first.n;
    /* kernel_time per group, in row order */
    size_t *off = tl_xcalloc(ng + 2, sizeof *off);
    for (size_t r = 0; r < n; r++) off[gof[r] + 2]++;
    for (size_t g = 2; g < ng + 2; g++) off[g] += off[g - 1];
    double *kt = tl_xmalloc((n + 1) * sizeof *kt);
    for (size_t r = 0; r < n; r++) kt[off[gof[r] + 1]++] = ds->cols[ckt].v.f[r];
    free(gof);
    static const char *const order[] = {"name", "operation_count", "cpu_op_name", "cpu_op_uid", "source", "Input Dims",
                                        "Input Strides", "Input type", "Concrete Inputs", "busy_time",
                                        "lowest_common_ancestor_name", "nn_module_stack", "nn_module_parent",
                                        "kernel_time_mean", "kernel_time_sum"};
    tl_table *s = tl_table_new("diff_stats_unique_args_summary");
    size_t oc[15];
    for (int k = 0; k < 15; k++) {
        long c = tl_table_col(ds, order[k]);
        tl_coltype ty = c >= 0 ? ds->cols[c].type : (k == 1 ? TL_COL_I64 : TL_COL_F64);
        oc[k] = tl_table_add_col(s, order[k], ty);
    }
    uint32_t *pid = tl_xmalloc((ds->pool.n + 1) * sizeof *pid); /* ds pool id -> s pool id */
    memset(pid, 0xff, (ds->pool.n + 1) * sizeof *pid);
    for (size_t g = 0; g < ng; g++) {
        size_t row = tl_table_add_row(s), r = first.v[g];
        for (int k = 0; k < 15; k++) {
            long c = tl_table_col(ds, order[k]);
            if (c < 0 || tl_table_is_null(ds, (size_t)c, r)) continue;
            const tl_col *col = &ds->cols[c];
            if (col->type == TL_COL_STR) {
                uint32_t id = col->v.s[r];
                if (pid[id] == UINT32_MAX) {
                    const char *txt = tl_strpool_get(&ds->pool, id);
                    pid[id] = tl_strpool_intern(&s->pool, txt, tl_strpool_len(&ds->pool, id));
                }
                s->cols[oc[k]].v.s[row] = pid[id];
            } else {
                tl_table_copy_cell(s, oc[k], row, ds, (size_t)c, r);
            }
        }
        size_t m = off[g + 1] - off[g];
        double sum = tl_sum_compensated(kt + off[g], m);
        tl_table_set_i64(s, oc[1], row, (int64_t)m);
        tl_table_set_f64(s, oc[13], row, sum / (double)m);
        tl_table_set_f64(s, oc[14], row, sum);
    }
    free(pid);
    free(off);
    free(kt);
    free(first.v);
    sum_sort ss = {s, oc[14], tl_xcalloc(s->ncols, sizeof(uint32_t *))};
    size_t *idx = tl_xmalloc((s->nrows + 1) * sizeof *idx);
    for (size_t r = 0; r < s->nrows; r++) idx[r] = r;
    tl_msort(idx, s->nrows, sum_cmp, &ss);
    tl_table_keep_rows(s, idx, s->nrows);
    free(idx);
    for (size_t c = 0; c < s->ncols; c++) free(ss.rank[c]);
    free(ss.rank);
    return s;
}
