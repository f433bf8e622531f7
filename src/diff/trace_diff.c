/* trace_diff.c — TraceDiff's public API (inference-and-comparative spec
 * §2.2, §2.3; trace_diff.h): tl_trace_diff_run (the merge of the paired top
 * roots, then the rows, the tables and the JSON texts), the merged tree's
 * text, merged_uid_map, the reference's files, and the seven TraceDiff
 * columns of a report's unified_perf_summary.
 *
 * Owns: the merge context of a run (the two sides' normalized names, the
 * arenas, the Wagner-Fischer memo) until the run hands the merged tree to
 * the tl_trace_diff. The stages live in the other files of src/diff
 * (diff_internal.h lists them). */
#include "trace_diff.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/outfile.h"
#include "../util/clock.h"
#include "../util/msort.h"
#include "diff_internal.h"

#define KT_SUM "Kernel Time (\xc2\xb5s)_sum"

/* ================================================================= run */

/* Drops the trace2 rows and the source column, in place. */
static void drop_trace2(tl_table *t)
{
    long cs = tl_table_col(t, "source");
    size_t *idx = tl_xmalloc((t->nrows + 1) * sizeof *idx), n = 0;
    for (size_t r = 0; r < t->nrows; r++)
        if (strcmp(tl_table_str(t, (size_t)cs, r), "trace2")) idx[n++] = r;
    tl_table_keep_rows(t, idx, n);
    tl_table_drop(t, "source");
    free(idx);
}

static void side_init(ctx *c, int k, const tl_trace *t)
{
    side *s = &c->s[k];
    s->es = &t->es;
    s->tr = &t->tree;
    s->ov = &c->d->ov[k];
    size_t nn = t->es.names.n;
    s->norm = tl_xmalloc((nn + 1) * sizeof *s->norm);
    s->strip = tl_xmalloc((nn + 1) * sizeof *s->strip);
    s->graph = tl_xcalloc(nn + 1, 1);
    tl_sbuf b;
    tl_sb_init(&b);
    for (uint32_t id = 0; id < nn; id++) {
        const char *nm = tl_strpool_get(&t->es.names, id);
        size_t len = tl_strpool_len(&t->es.names, id);
        tl_sb_clear(&b);
        tl_diff_normalize_name(nm, len, 0, &b);
        s->norm[id] = tl_strpool_intern(&c->npool, b.s ? b.s : "", b.len);
        tl_sb_clear(&b);
        tl_diff_normalize_name(nm, len, 1, &b);
        s->strip[id] = tl_strpool_intern(&c->npool, b.s ? b.s : "", b.len);
        s->graph[id] = !strcmp(nm, "hipGraphLaunch") || !strcmp(nm, "cudaGraphLaunch");
    }
    tl_sb_free(&b);
}

static void side_free(side *s)
{
    free(s->norm);
    free(s->strip);
    free(s->graph);
}

int tl_trace_diff_run(tl_trace_diff *d, const tl_trace *t1, const tl_trace *t2, int flags, tl_error *err)
{
    memset(d, 0, sizeof *d);
    d->t[0] = t1;
    d->t[1] = t2;
    tl_strpool_init(&d->names);
    for (int k = 0; k < 2; k++) {
        tl_map_init(&d->ov[k].kids_of, 8);
        tl_map_init(&d->ov[k].parent_of, 8);
        size_t words = d->t[k]->es.n / 64 + 1;
        d->ov[k].kids_bits = tl_xcalloc(words, sizeof(uint64_t));
        d->ov[k].parent_bits = tl_xcalloc(words, sizeof(uint64_t));
    }
    double t0 = tl_now_s();
    size_t *r[2];
    size_t nr[2];
    for (int k = 0; k < 2; k++) nr[k] = tl_diff_cpu_roots(d->t[k], &r[k]);
    if (!nr[0] || !nr[1]) {
        tl_error_set(err, "%s: TraceDiff needs cpu_op roots in both traces (none in trace %d)",
                     d->t[!nr[0] ? 0 : 1]->path, !nr[0] ? 1 : 2);
        free(r[0]);
        free(r[1]);
        tl_trace_diff_free(d);
        return -1;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.d = d;
    tl_strpool_init(&c.npool);
    side_init(&c, 0, t1);
    side_init(&c, 1, t2);
    /* unique top roots per trace, in order */
    uint32_t *roots[2];
    size_t nroots[2];
    for (int k = 0; k < 2; k++) {
        roots[k] = tl_xmalloc((nr[k] + 1) * sizeof *roots[k]);
        nroots[k] = 0;
        tl_map seen;
        tl_map_init(&seen, nr[k] + 1);
        uint32_t *top = tl_xmalloc((d->t[k]->es.n + 1) * sizeof *top);
        memset(top, 0xff, (d->t[k]->es.n + 1) * sizeof *top);
        for (size_t i = 0; i < nr[k]; i++) {
            uint32_t rt = tl_diff_top_root(&c.s[k], (uint32_t)r[k][i], top);
            if (tl_map_get(&seen, rt, 0) != UINT32_MAX) continue;
            tl_map_put(&seen, rt, 0, 1);
            roots[k][nroots[k]++] = rt;
        }
        free(top);
        tl_map_free(&seen);
        free(r[k]);
    }
    for (int k = 0; k < 2; k++) {
        c.first_of[k] = tl_xmalloc((d->t[k]->es.n + 1) * sizeof(uint32_t));
        memset(c.first_of[k], 0xff, (d->t[k]->es.n + 1) * sizeof(uint32_t));
    }
    arena memo = {0};
    size_t n = nroots[0] > nroots[1] ? nroots[0] : nroots[1];
    d->roots = tl_xmalloc((n + 1) * sizeof *d->roots);
    for (size_t i = 0; i < n; i++) {
        uint32_t a = i < nroots[0] ? roots[0][i] : NONE, b = i < nroots[1] ? roots[1][i] : NONE;
        d->roots[d->n_roots++] = tl_diff_merge(&c, a, b, &memo);
    }
    free(roots[0]);
    free(roots[1]);
    tl_diff_afree(&memo);
    tl_diff_afree(&c.ar);
    free(c.wf);
    free(c.bits);
    d->nodes = c.nodes.v;
    d->n_nodes = c.nodes.n;
    d->kids = c.kids.v;
    d->n_kids = c.kids.n;
    for (int k = 0; k < 2; k++) {
        d->first_of[k] = c.first_of[k];
        d->next_of[k] = c.next_of[k].v;
    }

    double tm = tl_now_s();
    d->seconds_merge = tm - t0;
    /* diff stats */
    tl_diff_collect_rows(d, c.s);
    side_free(&c.s[0]);
    side_free(&c.s[1]);
    tl_strpool_free(&c.npool);

    double ts = tl_now_s();
    d->seconds_stats = ts - tm;
    if (!d->n_rows) {
        d->identical = 1;
        return 0;
    }
    tl_table *full = tl_diff_stats_table(d, d->rows, d->n_rows);
    d->identical = tl_diff_rows_identical(full);
    tl_table *sum = NULL;
    if (!(flags & TL_DIFF_NO_SUMMARY)) {
        sum = tl_diff_unique_args_summary(full);
        if (sum->nrows) {
            d->cpu_op_map_trace1 = tl_diff_cpu_op_map_side(sum, "trace1");
            d->cpu_op_map_trace2 = tl_diff_cpu_op_map_side(sum, "trace2");
            d->cpu_op_map = tl_diff_cpu_op_map_json(full, sum, d->identical);
        } else {
            tl_table_free(sum);
            sum = NULL;
        }
    }
    if (d->identical) {
        drop_trace2(full);
        if (sum) drop_trace2(sum);
    }
    d->diff_stats = full;
    d->summary = sum;
    d->seconds_tables = tl_now_s() - ts;
    return 0;
}

void tl_trace_diff_free(tl_trace_diff *d)
{
    free(d->nodes);
    free(d->kids);
    free(d->roots);
    for (int k = 0; k < 2; k++) {
        free(d->first_of[k]);
        free(d->next_of[k]);
        tl_map_free(&d->ov[k].kids_of);
        tl_map_free(&d->ov[k].parent_of);
        free(d->ov[k].kids_bits);
        free(d->ov[k].parent_bits);
    }
    free(d->rows);
    tl_strpool_free(&d->names);
    tl_table_free(d->diff_stats);
    tl_table_free(d->summary);
    free(d->cpu_op_map_trace1);
    free(d->cpu_op_map_trace2);
    free(d->cpu_op_map);
    memset(d, 0, sizeof *d);
}

size_t tl_trace_diff_bytes(const tl_trace_diff *d)
{
    size_t b = sizeof *d + d->n_nodes * (sizeof *d->nodes + 2 * sizeof(uint32_t)) + d->n_kids * sizeof *d->kids +
               d->n_roots * sizeof *d->roots + d->n_rows * sizeof *d->rows;
    for (int k = 0; k < 2; k++) {
        size_t n = d->t[k] ? d->t[k]->es.n : 0;
        b += n * sizeof(uint32_t) + 2 * ((n + 63) / 64) * sizeof(uint64_t); /* first_of, the overlay bitmaps */
    }
    const char *texts[] = {d->cpu_op_map_trace1, d->cpu_op_map_trace2, d->cpu_op_map};
    for (int i = 0; i < 3; i++) b += texts[i] ? strlen(texts[i]) : 0;
    return b;
}

int64_t tl_trace_diff_other_uid(const tl_trace_diff *d, int tree, uint32_t uid)
{
    if (tree != 1 && tree != 2) return -2;
    int s = tree - 1;
    if (uid >= d->t[s]->es.n) return -2;
    uint32_t last = UINT32_MAX;
    for (uint32_t m = d->first_of[s][uid]; m != UINT32_MAX; m = d->next_of[s][m]) last = m;
    if (last == UINT32_MAX) return -2;
    uint32_t o = s == 0 ? d->nodes[last].key2 : d->nodes[last].key1;
    return o == NONE ? -1 : (int64_t)o;
}

/* ========================================================= tree text */

/* _get_op_name as text: the name, or the UID when it is empty */
static const char *op_name_text(const tl_trace *t, uint32_t u, char *buf, size_t cap)
{
    const char *nm = tl_es_name(&t->es, u);
    if (*nm) return nm;
    snprintf(buf, cap, "%u", u);
    return buf;
}

/* The text is built only when it stays under this size: every line is
 * indented by its node's depth (4 or 6 bytes a level), so a chain of N nested
 * ops makes about 2N^2 bytes (45 GB for 150,000). */
#define TREE_TEXT_MAX ((uint64_t)2 << 30)

/* The walk writing (or, out NULL, measuring) the text: per node on the path
 * from the root, its next child (by type, then position) and the prefix
 * length to restore. */
typedef struct tframe {
    uint32_t mid, k, done;
    uint8_t ty;
    size_t plen;
} tframe;

typedef struct twalk {
    const tl_trace_diff *d;
    tl_sbuf prefix;
    tl_sbuf *out;   /* NULL: only measure */
    uint64_t size;  /* bytes so far */
    size_t depth;   /* the deepest line's depth */
    TL_VEC(tframe) st;
} twalk;

static void tw_put(twalk *w, const char *s, size_t n)
{
    w->size += n;
    if (w->out) tl_sb_putn(w->out, s, n);
}

static void tw_puts(twalk *w, const char *s) { tw_put(w, s, strlen(s)); }

/* The line of mid; its frame pushed, its children's prefix in place. */
static void tree_line(twalk *w, uint32_t mid, int last)
{
    const tl_trace_diff *d = w->d;
    const tl_merged_node *nd = &d->nodes[mid];
    tw_put(w, w->prefix.s ? w->prefix.s : "", w->prefix.len);
    tw_puts(w, last ? "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80 " : "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 ");
    char b1[16], b2[16];
    const char *a = nd->uid1 != NONE ? op_name_text(d->t[0], nd->uid1, b1, sizeof b1) : "None";
    const char *b = nd->uid2 != NONE ? op_name_text(d->t[1], nd->uid2, b2, sizeof b2) : "None";
    if (nd->type == TL_MERGED_COMBINED) {
        if (strcmp(a, b)) {
            tw_puts(w, "combined: ");
            tw_puts(w, a);
            tw_puts(w, " | ");
        }
        tw_puts(w, b);
    } else if (nd->type == TL_MERGED_TRACE1) {
        tw_puts(w, ">> trace1: ");
        tw_puts(w, a);
    } else {
        tw_puts(w, "<< trace2: ");
        tw_puts(w, b);
    }
    tw_put(w, "\n", 1);
    tframe f = {mid, 0, 0, 0, w->prefix.len};
    TL_PUSH(w->st, f);
    if (w->st.n > w->depth) w->depth = w->st.n;
    tl_sb_puts(&w->prefix, last ? "    " : "\xe2\x94\x82   ");
}

/* The subtree of root, depth-first: a node's line, then its children's
 * subtrees (combined, then trace1's, then trace2's, each in order). An
 * explicit stack: the merged tree can be any depth. */
static void tree_lines(twalk *w, uint32_t root, int last)
{
    const tl_trace_diff *d = w->d;
    w->st.n = 0;
    tree_line(w, root, last);
    while (w->st.n) {
        tframe *f = &w->st.v[w->st.n - 1];
        const tl_merged_node *nd = &d->nodes[f->mid];
        uint32_t next = NONE;
        while (f->ty < 3 && next == NONE) {
            if (f->k == nd->nkids) {
                f->ty++;
                f->k = 0;
                continue;
            }
            uint32_t ch = d->kids[nd->kid_off + f->k++];
            if (d->nodes[ch].type == f->ty) next = ch;
        }
        if (next == NONE) {
            w->prefix.len = f->plen;
            if (w->prefix.s) w->prefix.s[f->plen] = 0;
            w->st.n--;
            continue;
        }
        f->done++;
        tree_line(w, next, f->done == nd->nkids); /* f is not used after */
    }
}

/* The text (out NULL: its size only) of every root's subtree. */
static uint64_t tree_text(const tl_trace_diff *d, int prune_non_gpu, tl_sbuf *out, size_t *depth)
{
    twalk w = {.d = d, .out = out};
    tl_sb_init(&w.prefix);
    for (size_t i = 0; i < d->n_roots; i++) {
        const tl_merged_node *nd = &d->nodes[d->roots[i]];
        if (prune_non_gpu) {
            int gpu = 0;
            for (int s = 0; s < 2 && !gpu; s++) {
                uint32_t u = s == 0 ? nd->uid1 : nd->uid2;
                if (u == NONE) continue;
                const tl_trace *t = d->t[s];
                gpu = tl_is_gpu_cat(t->es.cat[u]) || tl_tree_has_gpus(&t->tree, u);
            }
            if (!gpu) continue;
        }
        tl_sb_clear(&w.prefix);
        tree_lines(&w, d->roots[i], i + 1 == d->n_roots);
    }
    if (depth) *depth = w.depth;
    tl_sb_free(&w.prefix);
    free(w.st.v);
    return w.size;
}

int tl_trace_diff_tree_text(const tl_trace_diff *d, int prune_non_gpu, tl_sbuf *out, tl_error *err)
{
    size_t depth;
    if (tree_text(d, prune_non_gpu, NULL, &depth) > TREE_TEXT_MAX) {
        tl_error_set(err, "the merged tree's text would be over %llu GiB (each line is indented by its node's "
                          "depth, and nodes are %zu levels deep): not written",
                     (unsigned long long)(TREE_TEXT_MAX >> 30), depth);
        return -1;
    }
    tree_text(d, prune_non_gpu, out, NULL);
    return 0;
}

/* ============================================================ files */

static int write_text(const char *dir, const char *name, const char *text, size_t len, tl_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tl_outfile o;
    if (tl_outfile_open(&o, path, err) != 0) return -1;
    if (len && fwrite(text, 1, len, o.f) != len) {
        tl_error_set(err, "%s: write failed: %s", path, strerror(errno));
        tl_outfile_abort(&o);
        return -1;
    }
    return tl_outfile_commit(&o, err);
}

static int write_csv(const char *dir, const char *name, const tl_table *t, tl_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tl_outfile o;
    if (tl_outfile_open(&o, path, err) != 0) return -1;
    tl_table_write_csv(t, o.f);
    return tl_outfile_commit(&o, err);
}

int tl_trace_diff_write(const tl_trace_diff *d, const char *dir, int prune_non_gpu, tl_error *err)
{
    tl_sbuf b;
    tl_sb_init(&b);
    if (tl_trace_diff_tree_text(d, prune_non_gpu, &b, err) != 0 || tl_mkdirs(dir, err) != 0) {
        tl_sb_free(&b);
        return -1;
    }
    int rc = write_text(dir, "merged_tree_output.txt", b.s ? b.s : "", b.len, err);
    tl_sb_free(&b);
    if (rc) return -1;
    const tl_table *tabs[2] = {d->diff_stats, d->summary};
    const char *names[2] = {"diff_stats.csv", "diff_stats_unique_args_summary.csv"};
    for (int k = 0; k < 2; k++) {
        if (!tabs[k] || !tabs[k]->nrows) continue;
        if (write_csv(dir, names[k], tabs[k], err) != 0) return -1;
    }
    const char *js[3] = {d->cpu_op_map_trace1, d->cpu_op_map_trace2, d->cpu_op_map};
    const char *jn[3] = {"cpu_op_map_trace1.json", "cpu_op_map_trace2.json", "cpu_op_map.json"};
    for (int k = 0; k < 3; k++)
        if (js[k] && write_text(dir, jn[k], js[k], strlen(js[k]), err) != 0) return -1;
    return 0;
}

/* ======================================================= report (§2.3) */

typedef struct meta {
    TL_VEC(uint32_t) ids;
    TL_VEC(uint32_t) names; /* UINT32_MAX: None */
    double t1, t2, count;
    int set;
} meta;

static int cmp_row_lca(void *ctx, size_t a, size_t b)
{
    const tl_diff_row *r = ctx;
    return (r[a].lca > r[b].lca) - (r[a].lca < r[b].lca);
}

int tl_trace_diff_enrich_unified(const tl_trace_diff *d, tl_table *summary, const uint32_t *kernel_row)
{
    long kt = tl_table_col(summary, KT_SUM);
    if (kt < 0 || !d->n_rows || !kernel_row) return 0;
    const tl_diff_row *rows = d->rows;
    size_t n = d->n_rows;
    /* per LCA: the first trace2 busy time, and whether trace2 has rows */
    size_t nn = d->n_nodes + 1;
    double *t2first = tl_xmalloc(nn * sizeof *t2first);
    uint8_t *has2 = tl_xcalloc(nn, 1);
    for (size_t r = 0; r < n; r++) {
        if (rows[r].src != 1 || rows[r].lca == UINT32_MAX) continue;
        if (!has2[rows[r].lca]) t2first[rows[r].lca] = (double)rows[r].busy_ns / 1000.0;
        has2[rows[r].lca] = 1;
    }
    /* trace1 rows with an LCA, grouped by LCA id ascending (stable) */
    size_t *idx = tl_xmalloc((n + 1) * sizeof *idx), m = 0;
    for (size_t r = 0; r < n; r++)
        if (rows[r].src == 0 && rows[r].lca != UINT32_MAX) idx[m++] = r;
    tl_msort(idx, m, cmp_row_lca, (void *)rows);
    meta *mt = tl_xcalloc(summary->nrows + 1, sizeof *mt);
    uint32_t *seen = tl_xmalloc((summary->nrows + 1) * sizeof *seen);
    memset(seen, 0xff, (summary->nrows + 1) * sizeof *seen);
    int any = 0;
    for (size_t a = 0; a < m;) {
        uint32_t lca = rows[idx[a]].lca;
        size_t b = a;
        while (b < m && rows[idx[b]].lca == lca) b++;
        double t1 = (double)rows[idx[a]].busy_ns / 1000.0, t2 = has2[lca] ? t2first[lca] : 0.0;
        uint32_t name = UINT32_MAX;
        for (size_t k = a; k < b && name == UINT32_MAX; k++) name = rows[idx[k]].lca_name;
        if (name != UINT32_MAX && !tl_strpool_len(&d->names, name)) name = UINT32_MAX;
        for (size_t k = a; k < b; k++) {
            uint32_t key = kernel_row[rows[idx[k]].gpu];
            if (key == UINT32_MAX || key >= summary->nrows || seen[key] == lca) continue;
            seen[key] = lca;
            meta *e = &mt[key];
            any = 1;
            if (!e->set) {
                e->set = 1;
                e->t1 = t1;
                e->t2 = t2;
                e->count = has2[lca] ? 1 : 0;
            } else {
                e->t1 += t1;
                e->t2 += t2;
                if (has2[lca]) e->count += 1;
            }
            TL_PUSH(e->ids, lca);
            TL_PUSH(e->names, name);
        }
        a = b;
    }
    free(seen);
    free(idx);
    free(t2first);
    free(has2);
    if (any) {
        static const char *const cols[7] = {"speedup (trace2/trace1)", "delta_us (trace2 - trace1)", "lca_count_trace2",
                                            "lca_id", "lca_name", "lca_total_kernel_time_trace1_us",
                                            "lca_total_kernel_time_trace2_us"};
        size_t c[7];
        for (int k = 0; k < 7; k++) c[k] = tl_table_add_col(summary, cols[k], (k == 3 || k == 4) ? TL_COL_STR : TL_COL_F64);
        tl_sbuf b;
        tl_sb_init(&b);
        for (size_t r = 0; r < summary->nrows; r++) {
            const meta *e = &mt[r];
            if (!e->set) continue;
            double rowt = tl_table_num(summary, (size_t)kt, r);
            tl_table_set_f64(summary, c[0], r, e->t1 != 0 ? e->t2 / e->t1 : NAN);
            tl_table_set_f64(summary, c[1], r, e->t2 - rowt);
            tl_table_set_f64(summary, c[2], r, e->count);
            tl_sb_clear(&b);
            for (size_t k = 0; k < e->ids.n; k++) tl_sb_printf(&b, "%s%u", k ? "; " : "", e->ids.v[k]);
            tl_table_set_str(summary, c[3], r, b.s ? b.s : "");
            tl_sb_clear(&b);
            int first = 1;
            for (size_t k = 0; k < e->names.n; k++) {
                if (e->names.v[k] == UINT32_MAX) continue;
                if (!first) tl_sb_puts(&b, "; ");
                tl_sb_puts(&b, tl_strpool_get(&d->names, e->names.v[k]));
                first = 0;
            }
            tl_table_set_str(summary, c[4], r, b.s ? b.s : "");
            tl_table_set_f64(summary, c[5], r, e->t1);
            tl_table_set_f64(summary, c[6], r, e->t2);
        }
        tl_sb_free(&b);
        for (int k = 0; k < 7; k++) tl_table_move(summary, cols[k], (size_t)kt + 1 + (size_t)k);
    }
    for (size_t r = 0; r < summary->nrows; r++) {
        free(mt[r].ids.v);
        free(mt[r].names.v);
    }
    free(mt);
    return any;
}
