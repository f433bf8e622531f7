/* report.c — the cross-rank sheets of the multi-rank collective report
 * (report.h; spec multi-rank.md §4-§7). */
#include "report.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/sheets_kernels.h"
#include "../util/msort.h"
#include "../util/sbuf.h"
#include "../util/vec.h"

/* ------------------------------------------------------------ tables */

enum { T_NONE, T_ALLREDUCE, T_REDUCESCATTER, T_ALLGATHER, T_ALLTOALL, T_ALLTOALLV };

static int coll_type(const char *name)
{
    static const struct { const char *n; int t; } tab[] = {
        {"allreduce", T_ALLREDUCE},
        {"allreduce_coalesced", T_ALLREDUCE},
        {"reducescatter", T_REDUCESCATTER},
        {"_reduce_scatter_base", T_REDUCESCATTER},
        {"reduce_scatter_tensor_coalesced", T_REDUCESCATTER},
        {"allgather", T_ALLGATHER},
        {"all_gather", T_ALLGATHER},
        {"_allgather_base", T_ALLGATHER},
        {"all_gather_into_tensor_coalesced", T_ALLGATHER},
        {"allgather_into_tensor_coalesced", T_ALLGATHER},
        {"all_to_all", T_ALLTOALL},
        {"all_to_allv", T_ALLTOALLV},
    };
    for (size_t i = 0; name && i < sizeof tab / sizeof *tab; i++)
        if (!strcmp(name, tab[i].n)) return tab[i].t;
    return T_NONE;
}

static int implicit_sync_type(int t) { return t >= T_ALLREDUCE && t <= T_ALLTOALL; }

static double bus_factor(int t, int64_t n)
{
    if (n <= 0) return NAN;
    if (t == T_ALLREDUCE) return 2.0 * (double)(n - 1) / (double)n;
    return (double)(n - 1) / (double)n;
}

/* Bytes per element (§3.5, with tracelens' extended table [FIX]); 0 = unknown. */
static int dtype_bytes(const char *d)
{
    static const struct { const char *n; int b; } tab[] = {
        {"Float", 4}, {"Int", 4},  {"Long", 8},  {"BFloat16", 2}, {"Bool", 1},          {"Byte", 1},
        {"Double", 8}, {"Half", 2}, {"Short", 2}, {"Char", 1},    {"ComplexFloat", 8}, {"ComplexDouble", 16},
        {"ComplexHalf", 4}, {"UInt16", 2}, {"UInt32", 4}, {"UInt64", 8},
    };
    if (!d) return 0;
    if (!strncmp(d, "Float8_", 7)) return 1;
    for (size_t i = 0; i < sizeof tab / sizeof *tab; i++)
        if (!strcmp(d, tab[i].n)) return tab[i].b;
    return 0;
}

/* Python's round(x, 1): the exact binary value rounded, ties to even. */
static double py_round1(double x)
{
    if (!isfinite(x)) return x;
    char buf[512];
    snprintf(buf, sizeof buf, "%.1f", x);
    return strtod(buf, NULL);
}

/* The integers of a printed rank list / split list ("[0, 1]", "(0, 1)"):
 * the number of values, or -1 when the text is not a list of integers. */
static long parse_int_list(const char *s, int64_t **out)
{
    *out = NULL;
    if (!s || (s[0] != '[' && s[0] != '(')) return -1;
    char close = s[0] == '[' ? ']' : ')';
    const char *p = s + 1;
    size_t n = 0, cap = 0;
    int64_t *v = NULL;
    for (;;) {
        while (*p == ' ') p++;
        if (*p == close) break;
        char *end;
        long long x = strtoll(p, &end, 10);
        if (end == p) {
            free(v);
            return -1;
        }
        TL_GROW(v, cap, n + 1);
        v[n++] = x;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',') p++;
        else if (*p != close) {
            free(v);
            return -1;
        }
    }
    *out = v;
    return (long)n;
}

/* ----------------------------------------------------------- context */

typedef struct grp {
    size_t start, n;   /* members: ctx.by_grp[start .. start + n), ascending rank */
    size_t first;      /* smallest record index (= long-table position) */
    uint32_t pg;
} grp;

typedef struct ctx {
    tl_coll_set *cs;
    const tl_ranks_opts *o;
    int simplified;
    uint32_t *pg_of_meta;   /* effective Process Group Name (pool id) */
    double *in_mb, *out_mb; /* per meta; NaN = None */
    int *type_of_meta;
    size_t *by_grp;         /* record indices grouped */
    grp *g;
    size_t ng;
    size_t *order;          /* group ids in first-appearance order */
    uint32_t *grp_of_rec;
    char **cid;             /* collective_id per group */
    uint32_t nranks;        /* max rank + 1 */
} ctx;

static const char *pstr(const ctx *c, uint32_t id) { return id == UINT32_MAX ? NULL : tl_strpool_get(&c->cs->pool, id); }
static const tl_coll_meta *meta_of(const ctx *c, size_t rec) { return &c->cs->meta[c->cs->rec[rec].meta]; }
static double us(int64_t ns) { return (double)ns / 1000.0; }

static int cmp_index(void *vc, size_t a, size_t b)
{
    const ctx *c = vc;
    const tl_coll_rec *x = &c->cs->rec[a], *y = &c->cs->rec[b];
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    uint32_t px = c->pg_of_meta[x->meta], py = c->pg_of_meta[y->meta];
    if (px != py) return px < py ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_group(void *vc, size_t a, size_t b)
{
    const ctx *c = vc;
    const tl_coll_rec *x = &c->cs->rec[a], *y = &c->cs->rec[b];
    uint32_t px = c->pg_of_meta[x->meta], py = c->pg_of_meta[y->meta];
    if (px != py) return px < py ? -1 : 1;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_first(void *vc, size_t a, size_t b)
{
    const ctx *c = vc;
    return c->g[a].first < c->g[b].first ? -1 : c->g[a].first > c->g[b].first;
}

/* Mode (§4.1), per-meta derived values, index_in_group (§4.2-4.3) and the
 * collectives (records grouped by (pg, index)). */
static void prepare(ctx *c)
{
    tl_coll_set *cs = c->cs;
    int no_pg = 1;
    for (size_t m = 0; m < cs->nmeta; m++) {
        const char *pg = pstr(c, cs->meta[m].text[TL_CM_PG_NAME]);
        if (pg && strcmp(pg, "Unknown_Group") != 0) no_pg = 0;
    }
    int one_stream = 1;
    if (no_pg) { /* records are rank-major: compare with the rank's first non-None stream */
        size_t i = 0;
        while (i < cs->n && one_stream) {
            uint32_t r = cs->rec[i].rank, s = UINT32_MAX;
            for (; i < cs->n && cs->rec[i].rank == r; i++) {
                uint32_t t = cs->meta[cs->rec[i].meta].text[TL_CM_STREAM];
                if (t == UINT32_MAX) continue;
                if (s == UINT32_MAX) s = t;
                else if (t != s) one_stream = 0;
            }
        }
    }
    c->simplified = no_pg && one_stream && cs->n > 0;
    uint32_t unknown = tl_strpool_intern(&cs->pool, "Unknown_Group", 13), all = tl_strpool_intern(&cs->pool, "all", 3);
    c->pg_of_meta = tl_xmalloc((cs->nmeta + 1) * sizeof *c->pg_of_meta);
    c->in_mb = tl_xmalloc((cs->nmeta + 1) * sizeof(double));
    c->out_mb = tl_xmalloc((cs->nmeta + 1) * sizeof(double));
    c->type_of_meta = tl_xmalloc((cs->nmeta + 1) * sizeof(int));
    for (size_t m = 0; m < cs->nmeta; m++) {
        const tl_coll_meta *mt = &cs->meta[m];
        uint32_t pg = mt->text[TL_CM_PG_NAME];
        c->pg_of_meta[m] = c->simplified ? all : pg == UINT32_MAX ? unknown : pg;
        int b = dtype_bytes(pstr(c, mt->text[TL_CM_DTYPE]));
        c->in_mb[m] = c->out_mb[m] = NAN;
        if (b && mt->num[TL_CM_IN_NELEMS] != TL_NONE) {
            c->in_mb[m] = (double)mt->num[TL_CM_IN_NELEMS] * b / (1024.0 * 1024.0);
            if (mt->num[TL_CM_OUT_NELEMS] != TL_NONE)
                c->out_mb[m] = (double)mt->num[TL_CM_OUT_NELEMS] * b / (1024.0 * 1024.0);
        }
        c->type_of_meta[m] = coll_type(pstr(c, mt->text[TL_CM_COLL_NAME]));
    }
    size_t n = cs->n;
    c->nranks = 0;
    for (size_t i = 0; i < n; i++)
        if (cs->rec[i].rank + 1 > c->nranks) c->nranks = cs->rec[i].rank + 1;
    size_t *idx = tl_xmalloc((n + 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    tl_msort(idx, n, cmp_index, c);
    for (size_t i = 0; i < n; i++) {
        const tl_coll_rec *p = i ? &cs->rec[idx[i - 1]] : NULL, *r = &cs->rec[idx[i]];
        int same = p && p->rank == r->rank && c->pg_of_meta[p->meta] == c->pg_of_meta[r->meta];
        cs->rec[idx[i]].index = same ? p->index + 1 : 0;
    }
    tl_msort(idx, n, cmp_group, c);
    c->by_grp = idx;
    c->g = NULL;
    c->ng = 0;
    size_t capg = 0;
    c->grp_of_rec = tl_xmalloc((n + 1) * sizeof *c->grp_of_rec);
    for (size_t i = 0; i < n;) {
        const tl_coll_rec *r = &cs->rec[idx[i]];
        uint32_t pg = c->pg_of_meta[r->meta];
        size_t j = i, first = idx[i];
        while (j < n && c->pg_of_meta[cs->rec[idx[j]].meta] == pg && cs->rec[idx[j]].index == r->index) {
            if (idx[j] < first) first = idx[j];
            c->grp_of_rec[idx[j]] = (uint32_t)c->ng;
            j++;
        }
        TL_GROW(c->g, capg, c->ng + 1);
        c->g[c->ng++] = (grp){i, j - i, first, pg};
        i = j;
    }
    c->order = tl_xmalloc((c->ng + 1) * sizeof *c->order);
    for (size_t k = 0; k < c->ng; k++) c->order[k] = k;
    tl_msort(c->order, c->ng, cmp_first, c);
    c->cid = tl_xcalloc(c->ng + 1, sizeof *c->cid);
    tl_sbuf b;
    tl_sb_init(&b);
    for (size_t k = 0; k < c->ng; k++) {
        tl_sb_clear(&b);
        uint32_t index = cs->rec[idx[c->g[k].start]].index;
        if (c->simplified) tl_sb_printf(&b, "%u", index);
        else tl_sb_printf(&b, "%s_%u", pstr(c, c->g[k].pg), index);
        c->cid[k] = tl_sb_take(&b);
    }
    tl_sb_free(&b);
}

static void ctx_free(ctx *c)
{
    for (size_t k = 0; k < c->ng; k++) free(c->cid[k]);
    free(c->cid);
    free(c->pg_of_meta);
    free(c->in_mb);
    free(c->out_mb);
    free(c->type_of_meta);
    free(c->by_grp);
    free(c->g);
    free(c->order);
    free(c->grp_of_rec);
}

/* ------------------------------------------------- metadata checks */

/* The first of `fields` whose value differs between the members of group
 * k; 0 when they agree, else -1 with err naming the field, the collective
 * and each value with its ranks. */
static int check_meta(const ctx *c, size_t k, const int *fields, size_t nf, tl_error *err)
{
    const grp *g = &c->g[k];
    for (size_t f = 0; f < nf; f++) {
        int fi = fields[f];
        uint32_t v0 = meta_of(c, c->by_grp[g->start])->text[fi];
        size_t m = 1;
        while (m < g->n && meta_of(c, c->by_grp[g->start + m])->text[fi] == v0) m++;
        if (m == g->n) continue;
        tl_sbuf b;
        tl_sb_init(&b);
        tl_sb_printf(&b, "metadata mismatch in '%s' for collective %s:", tl_cm_names[fi], c->cid[k]);
        uint8_t *done = tl_xcalloc(g->n, 1);
        for (size_t a = 0; a < g->n; a++) {
            if (done[a]) continue;
            uint32_t v = meta_of(c, c->by_grp[g->start + a])->text[fi];
            size_t cnt = 0;
            for (size_t x = a; x < g->n; x++) cnt += meta_of(c, c->by_grp[g->start + x])->text[fi] == v;
            tl_sb_printf(&b, "%s %s (rank%s ", a ? "," : "", v == UINT32_MAX ? "None" : pstr(c, v),
                         cnt > 1 ? "s" : "");
            int comma = 0;
            for (size_t x = a; x < g->n; x++)
                if (meta_of(c, c->by_grp[g->start + x])->text[fi] == v) {
                    done[x] = 1;
                    tl_sb_printf(&b, "%s%u", comma++ ? "," : "", c->cs->rec[c->by_grp[g->start + x]].rank);
                }
            tl_sb_putc(&b, ')');
        }
        free(done);
        tl_error_set(err, "%s", b.s);
        tl_sb_free(&b);
        return -1;
    }
    return 0;
}

/* Membership check (§4.2, tracelens addition): a collective whose ranks are
 * not its Process Group Ranks (a rank missed one in its profiling window, so
 * its later indices shifted) is counted; one warning names the first. */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Are the ranks a collective lists but lacks all outside the job given
 * (rank >= world size: no trace of theirs among the inputs, as with a glob
 * for part of the job), rather than ranks whose traces miss it? */
static int only_absent_missing(const int64_t *pr, long np, const ctx *c, const grp *g)
{
    int any = 0;
    for (long x = 0; x < np; x++) {
        int member = 0;
        for (size_t y = 0; y < g->n && !member; y++) member = pr[x] == c->cs->rec[c->by_grp[g->start + y]].rank;
        if (member) continue;
        if (pr[x] >= 0 && pr[x] < (int64_t)c->o->world_size) return 0;
        any = 1;
    }
    return any;
}

static void check_membership(const ctx *c)
{
    size_t bad = 0, absent = 0, n_unseen = 0;
    int64_t unseen[12];
    int more_unseen = 0;
    char first[256] = "", first_absent[256] = "";
    for (size_t o = 0; o < c->ng && !c->simplified; o++) {
        size_t k = c->order[o];
        const grp *g = &c->g[k];
        int64_t *pr;
        long np = parse_int_list(pstr(c, meta_of(c, c->by_grp[g->start])->text[TL_CM_PG_RANKS]), &pr);
        if (np < 0) continue;
        if (c->o->present) { /* ranks left out (--allow-missing-ranks) have no records to match */
            long kept = 0;
            for (long x = 0; x < np; x++)
                if (pr[x] < 0 || pr[x] >= (int64_t)c->o->world_size || c->o->present[pr[x]]) pr[kept++] = pr[x];
            np = kept;
        }
        if (np > 1) qsort(pr, (size_t)np, sizeof *pr, cmp_i64);
        int same = (size_t)np == g->n;
        for (size_t x = 0; same && x < g->n; x++) same = pr[x] == c->cs->rec[c->by_grp[g->start + x]].rank;
        if (!same) {
            int gone = only_absent_missing(pr, np, c, g);
            for (long x = 0; gone && x < np; x++) /* the ranks not given, listed once */
                if (pr[x] >= (int64_t)c->o->world_size) {
                    size_t y = 0;
                    while (y < n_unseen && unseen[y] != pr[x]) y++;
                    if (y == n_unseen && n_unseen < sizeof unseen / sizeof *unseen) unseen[n_unseen++] = pr[x];
                    else if (y == n_unseen) more_unseen = 1;
                }
            char *f = gone ? first_absent : first;
            if (!(gone ? absent++ : bad++)) {
                size_t n = (size_t)snprintf(f, sizeof first, "%s has ranks ", c->cid[k]);
                for (size_t x = 0; x < g->n && n < sizeof first - 40; x++)
                    n += (size_t)snprintf(f + n, sizeof first - n, "%s%u", x ? "," : "",
                                          c->cs->rec[c->by_grp[g->start + x]].rank);
                snprintf(f + n, sizeof first - n, " of %s",
                         pstr(c, meta_of(c, c->by_grp[g->start])->text[TL_CM_PG_RANKS]));
            }
        }
        free(pr);
    }
    if (absent) {
        char list[320] = "";
        size_t n = 0;
        qsort(unseen, n_unseen, sizeof *unseen, cmp_i64);
        for (size_t y = 0; y < n_unseen; y++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%lld", y ? "," : "", (long long)unseen[y]);
        if (more_unseen) snprintf(list + n, sizeof list - n, ",...");
        fprintf(stderr,
                "tracelens: warning: %zu collective(s) list ranks beyond the %u rank traces given (first: %s; ranks "
                "not given: %s): these collectives are matched over the ranks given only\n",
                absent, c->o->world_size, first_absent, list);
    }
    if (bad)
        fprintf(stderr,
                "tracelens: warning: %zu collective(s) whose ranks are not their Process Group Ranks (first: %s): a rank "
                "probably missed a collective in its profiling window, which shifts its later matches\n",
                bad, first);
}

/* The number of ranks of collective k's Process Group Ranks that are not
 * among its members (spec §11.4, --allow-missing-ranks); without a rank
 * list, Group size minus the members (simplified mode: the world size);
 * -1 when neither is known. */
static int64_t missing_members(const ctx *c, size_t k)
{
    const grp *g = &c->g[k];
    if (c->simplified) return g->n < c->o->world_size ? (int64_t)(c->o->world_size - g->n) : 0;
    const tl_coll_meta *m = meta_of(c, c->by_grp[g->start]);
    int64_t *pr;
    long np = parse_int_list(pstr(c, m->text[TL_CM_PG_RANKS]), &pr);
    if (np < 0) {
        int64_t gs = m->num[TL_CM_GROUP_SIZE];
        return gs == TL_NONE ? -1 : gs > (int64_t)g->n ? gs - (int64_t)g->n : 0;
    }
    if (np > 1) qsort(pr, (size_t)np, sizeof *pr, cmp_i64);
    /* members ascend by rank: a merge of the two sorted lists */
    int64_t miss = 0;
    size_t x = 0;
    for (long i = 0; i < np; i++) {
        if (i && pr[i] == pr[i - 1]) continue; /* a rank listed twice counts once */
        while (x < g->n && (int64_t)c->cs->rec[c->by_grp[g->start + x]].rank < pr[i]) x++;
        if (x == g->n || (int64_t)c->cs->rec[c->by_grp[g->start + x]].rank != pr[i]) miss++;
    }
    free(pr);
    return miss;
}

/* ---------------------------------------------------- table helpers */

static void set_str_or_null(tl_table *t, size_t col, size_t row, const char *s)
{
    if (s) tl_table_set_str(t, col, row, s);
}
static void set_i64_or_null(tl_table *t, size_t col, size_t row, int64_t v)
{
    if (v != TL_NONE) tl_table_set_i64(t, col, row, v);
}
static void set_f64(tl_table *t, size_t col, size_t row, double v)
{
    if (!isnan(v)) tl_table_set_f64(t, col, row, v);
}

/* A per-rank column created on first use (first-appearance column order). */
static size_t rank_col(tl_table *t, long *slot, uint32_t rank, const char *suffix, tl_coltype type)
{
    if (slot[rank] >= 0) return (size_t)slot[rank];
    char name[96];
    snprintf(name, sizeof name, "rank_%u_%s", rank, suffix);
    slot[rank] = (long)tl_table_add_col(t, name, type);
    return (size_t)slot[rank];
}

static long *new_slots(uint32_t n)
{
    long *s = tl_xmalloc((n + 1) * sizeof *s);
    for (uint32_t i = 0; i <= n; i++) s[i] = -1;
    return s;
}

static tl_aggfn agg_fn(const char *a)
{
    if (!strcmp(a, "mean")) return TL_AGG_MEAN;
    if (!strcmp(a, "median")) return TL_AGG_MEDIAN;
    if (!strcmp(a, "min")) return TL_AGG_MIN;
    if (!strcmp(a, "max")) return TL_AGG_MAX;
    if (!strcmp(a, "std")) return TL_AGG_STD;
    if (!strcmp(a, "sum")) return TL_AGG_SUM;
    return TL_AGG_COUNT;
}

int tl_ranks_agg_known(const char *a)
{
    static const char *const ok[] = {"mean", "median", "min", "max", "std", "sum", "count"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!strcmp(a, ok[i])) return 1;
    return 0;
}

typedef struct aggv {
    tl_agg *v;
    char **names;
    size_t n, cap;
} aggv;

static void agg_add(aggv *a, const char *col, tl_aggfn fn, const char *out)
{
    TL_GROW(a->v, a->cap, a->n + 1);
    a->names = tl_xrealloc(a->names, a->cap * sizeof *a->names);
    a->names[a->n] = tl_xstrdup(out);
    a->v[a->n] = (tl_agg){col, fn, a->names[a->n], NULL, NULL};
    a->n++;
}

static void agg_add_list(aggv *a, const char *col, const char *const *fns, size_t nf)
{
    for (size_t i = 0; i < nf; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s_%s", col, fns[i]);
        agg_add(a, col, agg_fn(fns[i]), name);
    }
}

static void agg_free(aggv *a)
{
    for (size_t i = 0; i < a->n; i++) free(a->names[i]);
    free(a->names);
    free(a->v);
}

/* Columns of t in the order the aggregations were listed, keys first. */
static void select_in_order(tl_table *t, const char *const *first, size_t nfirst, const aggv *a,
                            const char *const *last, size_t nlast)
{
    const char **names = tl_xmalloc((nfirst + a->n + nlast + 1) * sizeof *names);
    size_t n = 0;
    for (size_t i = 0; i < nfirst; i++) names[n++] = first[i];
    for (size_t i = 0; i < a->n; i++) names[n++] = a->v[i].out;
    for (size_t i = 0; i < nlast; i++) names[n++] = last[i];
    tl_table_select(t, names, n);
    free(names);
}

/* --------------------------------------------------------- nccl_long */

static tl_table *build_long(const ctx *c)
{
    const tl_coll_set *cs = c->cs;
    tl_table *t = tl_table_new("nccl_long");
    size_t ccid = tl_table_add_col(t, "collective_id", TL_COL_STR);
    size_t cidx = tl_table_add_col(t, "index_in_group", TL_COL_I64);
    size_t crank = tl_table_add_col(t, "rank", TL_COL_I64);
    size_t cpg = tl_table_add_col(t, "Process Group Name", TL_COL_STR);
    size_t cpr = tl_table_add_col(t, "Process Group Ranks", TL_COL_STR);
    size_t cname = tl_table_add_col(t, "Collective name", TL_COL_STR);
    size_t cgs = tl_table_add_col(t, "Group size", TL_COL_I64);
    size_t cdt = tl_table_add_col(t, "dtype", TL_COL_STR);
    size_t cin = tl_table_add_col(t, "In msg nelems", TL_COL_I64);
    size_t cinmb = tl_table_add_col(t, "In msg size (MB)", TL_COL_F64);
    size_t cout = tl_table_add_col(t, "Out msg nelems", TL_COL_I64);
    size_t coutmb = tl_table_add_col(t, "Out msg size (MB)", TL_COL_F64);
    size_t cis = tl_table_add_col(t, "In split size", TL_COL_STR);
    size_t cos = tl_table_add_col(t, "Out split size", TL_COL_STR);
    size_t cst = tl_table_add_col(t, "stream", TL_COL_I64);
    size_t cts = tl_table_add_col(t, "ts", TL_COL_F64);
    size_t cdur = tl_table_add_col(t, "dur", TL_COL_F64);
    tl_table_add_rows(t, cs->n);
    /* each distinct text interned once: the metadata texts through a memo
     * from cs->pool, the collective ids per collective (a 256-rank list is
     * 1 KB to hash on each of its rows) */
    tl_str_memo memo = {0};
    uint32_t *cid_id = tl_xmalloc((c->ng + 1) * sizeof *cid_id);
    memset(cid_id, 0xff, (c->ng + 1) * sizeof *cid_id);
    for (size_t i = 0; i < cs->n; i++) {
        const tl_coll_rec *r = &cs->rec[i];
        const tl_coll_meta *m = &cs->meta[r->meta];
        uint32_t g = c->grp_of_rec[i];
        if (cid_id[g] == UINT32_MAX) cid_id[g] = tl_strpool_intern(&t->pool, c->cid[g], strlen(c->cid[g]));
        tl_table_set_str_id(t, ccid, i, cid_id[g]);
        tl_table_set_i64(t, cidx, i, r->index);
        tl_table_set_i64(t, crank, i, r->rank);
        tl_table_set_str_memo(t, cpg, i, &memo, &cs->pool, c->pg_of_meta[r->meta]);
        tl_table_set_str_memo(t, cpr, i, &memo, &cs->pool, m->text[TL_CM_PG_RANKS]);
        tl_table_set_str_memo(t, cname, i, &memo, &cs->pool, m->text[TL_CM_COLL_NAME]);
        set_i64_or_null(t, cgs, i, m->num[TL_CM_GROUP_SIZE]);
        tl_table_set_str_memo(t, cdt, i, &memo, &cs->pool, m->text[TL_CM_DTYPE]);
        set_i64_or_null(t, cin, i, m->num[TL_CM_IN_NELEMS]);
        set_f64(t, cinmb, i, c->in_mb[r->meta]);
        set_i64_or_null(t, cout, i, m->num[TL_CM_OUT_NELEMS]);
        set_f64(t, coutmb, i, c->out_mb[r->meta]);
        tl_table_set_str_memo(t, cis, i, &memo, &cs->pool, m->text[TL_CM_IN_SPLIT]);
        tl_table_set_str_memo(t, cos, i, &memo, &cs->pool, m->text[TL_CM_OUT_SPLIT]);
        set_i64_or_null(t, cst, i, m->num[TL_CM_STREAM]);
        tl_table_set_f64(t, cts, i, us(r->ts));
        tl_table_set_f64(t, cdur, i, us(r->dur));
    }
    tl_str_memo_free(&memo);
    free(cid_id);
    return t;
}

/* ------------------------------------------------ nccl_summary_long */

static tl_table *build_summary_long(const tl_table *lt)
{
    static const char *const keys[] = {"rank",          "Process Group Name", "Process Group Ranks", "Collective name",
                                       "Group size",    "dtype",              "In msg nelems",       "Out msg nelems",
                                       "In split size", "Out split size",     "stream"};
    /* [FIX D1] rows with a None key are kept */
    return tl_coll_summary(lt, "nccl_summary_long", keys);
}

/* ----------------------------------------------- nccl_implicit_sync */

typedef struct strag {
    int64_t *wait_ns;      /* Σ wait per rank */
    int64_t *members, *last, *first, *dur_ns;
} strag;

static tl_table *build_implicit_sync(const ctx *c, strag *st, tl_table **src_out, tl_table **ranks_out, tl_error *err)
{
    int narrow = c->o->per_rank_long;
    tl_table *t = tl_table_new("nccl_implicit_sync");
    static const char *const gen[] = {"collective_id", "Process Group Name", "Process Group Ranks", "Collective name",
                                      "Group size", "dtype", "In msg nelems", "Out msg nelems", "In msg size (MB)",
                                      "Out msg size (MB)", "Full msg size (MB)", "comm_latency", "skew in start time",
                                      "earliest arrival rank", "avg_wait_time", "skew in end time", "algo bw (GB/s)",
                                      "bus bw (GB/s)"};
    static const tl_coltype gty[] = {TL_COL_STR, TL_COL_STR, TL_COL_STR, TL_COL_STR, TL_COL_I64, TL_COL_STR,
                                     TL_COL_I64, TL_COL_I64, TL_COL_F64, TL_COL_F64, TL_COL_F64, TL_COL_F64,
                                     TL_COL_F64, TL_COL_I64, TL_COL_F64, TL_COL_F64, TL_COL_F64, TL_COL_F64};
    for (size_t i = 0; i < 18; i++) tl_table_add_col(t, gen[i], gty[i]);
    /* narrow layout (§11.2): two more general columns, the per-rank values in a table of their own */
    size_t c_last = 0, c_num = 0, k_cid = 0, k_rank = 0, k_ts = 0, k_dur = 0, k_wait = 0, k_end = 0;
    tl_table *rk = NULL;
    if (narrow) {
        c_last = tl_table_add_col(t, "last arrival rank", TL_COL_I64);
        c_num = tl_table_add_col(t, "num_ranks", TL_COL_I64);
        rk = tl_table_new("nccl_implicit_sync_ranks");
        k_cid = tl_table_add_col(rk, "collective_id", TL_COL_STR);
        k_rank = tl_table_add_col(rk, "rank", TL_COL_I64);
        k_ts = tl_table_add_col(rk, "ts", TL_COL_F64);
        k_dur = tl_table_add_col(rk, "dur", TL_COL_F64);
        k_wait = tl_table_add_col(rk, "wait_time", TL_COL_F64);
        k_end = tl_table_add_col(rk, "end_skew", TL_COL_F64);
    }
    /* the summary's source: keys with None as "Unknown" (§5.2) */
    int unknown_nelems = 0;
    for (size_t o = 0; o < c->ng; o++) {
        const grp *g = &c->g[c->order[o]];
        const tl_coll_meta *m = meta_of(c, c->by_grp[g->start]);
        int ty = c->type_of_meta[c->cs->rec[c->by_grp[g->start]].meta];
        int inc = c->simplified ? (ty == T_NONE || implicit_sync_type(ty)) : implicit_sync_type(ty);
        if (inc && m->num[TL_CM_IN_NELEMS] == TL_NONE) unknown_nelems = 1;
    }
    tl_table *s = tl_table_new("isync");
    size_t s_name = tl_table_add_col(s, "Collective name", TL_COL_STR);
    size_t s_dt = tl_table_add_col(s, "dtype", TL_COL_STR);
    size_t s_in = tl_table_add_col(s, "In msg nelems", unknown_nelems ? TL_COL_STR : TL_COL_I64);
    size_t s_gs = tl_table_add_col(s, "Group size", TL_COL_I64);
    size_t s_pg = tl_table_add_col(s, "Process Group Name", TL_COL_STR);
    size_t s_full = tl_table_add_col(s, "Full msg size (MB)", TL_COL_F64);
    size_t s_lat = tl_table_add_col(s, "comm_latency", TL_COL_F64);
    size_t s_ss = tl_table_add_col(s, "skew in start time", TL_COL_F64);
    size_t s_se = tl_table_add_col(s, "skew in end time", TL_COL_F64);
    size_t s_ab = tl_table_add_col(s, "algo bw (GB/s)", TL_COL_F64);
    size_t s_bb = tl_table_add_col(s, "bus bw (GB/s)", TL_COL_F64);

    static const int check[] = {TL_CM_PG_RANKS, TL_CM_COLL_NAME, TL_CM_GROUP_SIZE, TL_CM_DTYPE, TL_CM_IN_NELEMS,
                                TL_CM_OUT_NELEMS};
    long *cts = new_slots(c->nranks), *cdur = new_slots(c->nranks), *cwait = new_slots(c->nranks);
    size_t c_miss = c->o->allow_missing ? tl_table_add_col(t, "missing_ranks", TL_COL_I64) : 0;
    long *wseq = new_slots(c->nranks); /* first-appearance order of the wait columns */
    long nseq = 0;
    int64_t *wait = tl_xmalloc((c->nranks + 1) * sizeof *wait);
    for (size_t o = 0; o < c->ng; o++) {
        size_t k = c->order[o];
        const grp *g = &c->g[k];
        size_t r0 = c->by_grp[g->start];
        const tl_coll_meta *m = meta_of(c, r0);
        uint32_t mid = c->cs->rec[r0].meta;
        int ty = c->type_of_meta[mid];
        int inc = c->simplified ? (ty == T_NONE || implicit_sync_type(ty)) : implicit_sync_type(ty);
        if (!inc) continue;
        if (!c->simplified && check_meta(c, k, check, sizeof check / sizeof *check, err) != 0) {
            if (c->o->strict_metadata) {
                free(cts), free(cdur), free(wait), free(wseq), free(cwait);
                tl_table_free(t);
                tl_table_free(s);
                if (rk) tl_table_free(rk);
                return NULL;
            }
            fprintf(stderr, "tracelens: warning: %s (the lowest rank's values are used)\n", err->msg);
        }
        int64_t lstart = INT64_MIN, estart = INT64_MAX, eend = INT64_MAX, lend = INT64_MIN, lat = INT64_MAX;
        for (size_t x = 0; x < g->n; x++) {
            const tl_coll_rec *r = &c->cs->rec[c->by_grp[g->start + x]];
            int64_t e = r->ts + r->dur;
            if (r->ts > lstart) lstart = r->ts;
            if (r->ts < estart) estart = r->ts;
            if (e < eend) eend = e;
            if (e > lend) lend = e;
            if (r->dur < lat) lat = r->dur;
        }
        size_t row = tl_table_add_row(t);
        tl_table_set_str(t, 0, row, c->cid[k]);
        tl_table_set_str(t, 1, row, pstr(c, c->pg_of_meta[mid]));
        set_str_or_null(t, 2, row, pstr(c, m->text[TL_CM_PG_RANKS]));
        set_str_or_null(t, 3, row, pstr(c, m->text[TL_CM_COLL_NAME]));
        set_i64_or_null(t, 4, row, m->num[TL_CM_GROUP_SIZE]);
        set_str_or_null(t, 5, row, pstr(c, m->text[TL_CM_DTYPE]));
        set_i64_or_null(t, 6, row, m->num[TL_CM_IN_NELEMS]);
        set_i64_or_null(t, 7, row, m->num[TL_CM_OUT_NELEMS]);
        set_f64(t, 8, row, c->in_mb[mid]);
        set_f64(t, 9, row, c->out_mb[mid]);
        double full = ty == T_NONE ? NAN : ty == T_ALLGATHER ? c->out_mb[mid] : c->in_mb[mid];
        if (ty != T_NONE && (isnan(c->in_mb[mid]) || isnan(c->out_mb[mid]))) full = NAN;
        set_f64(t, 10, row, full);
        double latus = us(lat);
        tl_table_set_f64(t, 11, row, latus);
        tl_table_set_f64(t, 12, row, us(lstart - estart));
        /* waits; earliest arrival = largest wait, ties the largest rank */
        int64_t sum = 0, maxw = -1;
        uint32_t earliest = 0;
        for (size_t x = 0; x < g->n; x++) {
            const tl_coll_rec *r = &c->cs->rec[c->by_grp[g->start + x]];
            wait[r->rank] = lstart - r->ts;
            sum += wait[r->rank];
            if (wait[r->rank] >= maxw) {
                maxw = wait[r->rank];
                earliest = r->rank;
            }
        }
        tl_table_set_i64(t, 13, row, earliest);
        tl_table_set_f64(t, 14, row, us(sum) / (double)g->n);
        tl_table_set_f64(t, 15, row, us(lend - eend));
        double algo = NAN, bus = NAN;
        if (!isnan(full) && lat > 0) algo = (full / 1024.0) / (latus / 1e6);
        if (!isnan(algo) && m->num[TL_CM_GROUP_SIZE] != TL_NONE) bus = algo * bus_factor(ty, m->num[TL_CM_GROUP_SIZE]);
        set_f64(t, 16, row, algo);
        set_f64(t, 17, row, bus);
        if (c->o->allow_missing) {
            int64_t miss = missing_members(c, k);
            if (miss >= 0) tl_table_set_i64(t, c_miss, row, miss);
        }
        for (size_t x = 0; x < g->n && !narrow; x++) {
            const tl_coll_rec *r = &c->cs->rec[c->by_grp[g->start + x]];
            size_t a = rank_col(t, cts, r->rank, "ts", TL_COL_F64);
            size_t b = rank_col(t, cdur, r->rank, "dur", TL_COL_F64);
            tl_table_set_f64(t, a, row, us(r->ts));
            tl_table_set_f64(t, b, row, us(r->dur));
        }
        /* times_arrived_last: the smallest wait; ties the first wait column
         * (first-appearance order, the same in either layout) */
        uint32_t lastr = 0, zero = UINT32_MAX;
        long lastseq = -1;
        int64_t minw = INT64_MAX;
        for (size_t x = 0; x < g->n; x++) {
            const tl_coll_rec *r = &c->cs->rec[c->by_grp[g->start + x]];
            if (wseq[r->rank] < 0) wseq[r->rank] = nseq++;
            if (narrow) {
                size_t kr = tl_table_add_row(rk);
                tl_table_set_str(rk, k_cid, kr, c->cid[k]);
                tl_table_set_i64(rk, k_rank, kr, r->rank);
                tl_table_set_f64(rk, k_ts, kr, us(r->ts));
                tl_table_set_f64(rk, k_dur, kr, us(r->dur));
                tl_table_set_f64(rk, k_wait, kr, us(wait[r->rank]));
                tl_table_set_f64(rk, k_end, kr, us(lend - (r->ts + r->dur)));
            } else {
                size_t wc = rank_col(t, cwait, r->rank, "wait_time", TL_COL_F64);
                tl_table_set_f64(t, wc, row, us(wait[r->rank]));
            }
            st->wait_ns[r->rank] += wait[r->rank];
            st->members[r->rank]++;
            if (wait[r->rank] == 0 && zero == UINT32_MAX) zero = r->rank;
            if (wait[r->rank] < minw || (wait[r->rank] == minw && wseq[r->rank] < lastseq)) {
                minw = wait[r->rank];
                lastseq = wseq[r->rank];
                lastr = r->rank;
            }
        }
        if (narrow) {
            tl_table_set_i64(t, c_last, row, zero);
            tl_table_set_i64(t, c_num, row, (int64_t)g->n);
        }
        st->last[lastr]++;
        st->first[earliest]++;
        /* the summary's row */
        size_t sr = tl_table_add_row(s);
        const char *nm = pstr(c, m->text[TL_CM_COLL_NAME]), *dt = pstr(c, m->text[TL_CM_DTYPE]);
        tl_table_set_str(s, s_name, sr, nm ? nm : "Unknown");
        tl_table_set_str(s, s_dt, sr, dt ? dt : "Unknown");
        if (unknown_nelems) {
            char num[32];
            if (m->num[TL_CM_IN_NELEMS] == TL_NONE) tl_table_set_str(s, s_in, sr, "Unknown");
            else {
                snprintf(num, sizeof num, "%lld", (long long)m->num[TL_CM_IN_NELEMS]);
                tl_table_set_str(s, s_in, sr, num);
            }
        } else tl_table_set_i64(s, s_in, sr, m->num[TL_CM_IN_NELEMS]);
        set_i64_or_null(s, s_gs, sr, m->num[TL_CM_GROUP_SIZE]);
        tl_table_set_str(s, s_pg, sr, pstr(c, c->pg_of_meta[mid]));
        set_f64(s, s_full, sr, full);
        tl_table_set_f64(s, s_lat, sr, latus);
        tl_table_set_f64(s, s_ss, sr, us(lstart - estart));
        tl_table_set_f64(s, s_se, sr, us(lend - eend));
        set_f64(s, s_ab, sr, algo);
        set_f64(s, s_bb, sr, bus);
    }
    free(cts);
    free(cdur);
    free(wait);
    free(wseq);
    free(cwait);
    *src_out = s;
    *ranks_out = rk;
    return t;
}

static int all_missing(const tl_table *t, const char *col)
{
    long c = tl_table_col(t, col);
    for (size_t r = 0; c >= 0 && r < t->nrows; r++)
        if (!tl_table_is_null(t, (size_t)c, r)) return 0;
    return 1;
}

static tl_table *build_summary_implicit(const ctx *c, const tl_table *s)
{
    const tl_ranks_opts *o = c->o;
    /* [FIX D3] Group size is a key: groups of different sizes never mix */
    static const char *const keys[] = {"Collective name", "dtype", "In msg nelems", "Group size"};
    aggv a = {0};
    agg_add_list(&a, "comm_latency", o->agg, o->nagg);
    agg_add(&a, "comm_latency", TL_AGG_SIZE, "count");
    agg_add(&a, "comm_latency", TL_AGG_SUM, "Total comm latency (ms)");
    agg_add_list(&a, "skew in start time", o->agg, o->nagg);
    agg_add_list(&a, "skew in end time", o->agg, o->nagg);
    if (!all_missing(s, "algo bw (GB/s)")) agg_add_list(&a, "algo bw (GB/s)", o->agg, o->nagg);
    if (!all_missing(s, "bus bw (GB/s)")) agg_add_list(&a, "bus bw (GB/s)", o->agg, o->nagg);
    agg_add(&a, "Process Group Name", TL_AGG_FIRST, "Process Group Name");
    agg_add(&a, "Full msg size (MB)", TL_AGG_FIRST, "Full msg size (MB)");
    tl_groupby g = {keys, 4, 1, 0, a.v, a.n};
    tl_table *t = tl_table_group(s, "nccl_summary_implicit_sync", &g);
    long tc = tl_table_col(t, "Total comm latency (ms)");
    for (size_t r = 0; r < t->nrows; r++)
        if (!tl_table_is_null(t, (size_t)tc, r)) t->cols[tc].v.f[r] /= 1000.0;
    /* column order: keys, PG, Group size, Full size, the aggregations, count, total */
    const char **names = tl_xmalloc((a.n + 8) * sizeof *names);
    size_t n = 0;
    static const char *const head[] = {"Collective name", "dtype",      "In msg nelems",
                                       "Process Group Name", "Group size", "Full msg size (MB)"};
    for (size_t i = 0; i < 6; i++) names[n++] = head[i];
    for (size_t i = 0; i < a.n; i++) {
        const char *nm = a.v[i].out;
        if (!strcmp(nm, "count") || !strcmp(nm, "Total comm latency (ms)") || !strcmp(nm, "Process Group Name") ||
            !strcmp(nm, "Full msg size (MB)"))
            continue;
        names[n++] = nm;
    }
    names[n++] = "count";
    names[n++] = "Total comm latency (ms)";
    tl_table_select(t, names, n);
    free(names);
    agg_free(&a);
    tl_sortkey sk = {"Total comm latency (ms)", 1};
    tl_table_sort(t, &sk, 1);
    return t;
}

/* ------------------------------------------------------ all_to_allv */

/* Σ In msg size (MB) over the members of group k; NaN when one is None. */
static double a2a_total_mb(const ctx *c, size_t k)
{
    const grp *g = &c->g[k];
    double tot = 0;
    for (size_t x = 0; x < g->n; x++) {
        const tl_coll_rec *r = &c->cs->rec[c->by_grp[g->start + x]];
        double mb = c->in_mb[r->meta];
        if (isnan(mb) || c->cs->meta[r->meta].num[TL_CM_IN_NELEMS] == TL_NONE) return NAN;
        tot += mb;
    }
    return tot;
}

typedef struct a2a_order {
    const size_t *grp;
    const double *tot;
} a2a_order;

/* total data descending, None last, ties in first-appearance order (stable) */
static int cmp_a2a(void *v, size_t a, size_t b)
{
    const a2a_order *o = v;
    double x = o->tot[a], y = o->tot[b];
    if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
    return x > y ? -1 : x < y;
}

/* The narrow layout's nccl_all2allv_ranks (§11.2): one row per member of
 * each all_to_allv collective, collectives in the sheet's order. */
static tl_table *build_all2allv_ranks(const ctx *c, const size_t *grps, size_t n)
{
    static const char *const cols[] = {"collective_id", "rank", "ts", "dur", "In msg nelems", "Out msg nelems",
                                       "In msg size (MB)", "Out msg size (MB)", "In split size", "Out split size",
                                       "skew in start time", "skew in end time"};
    static const tl_coltype ty[] = {TL_COL_STR, TL_COL_I64, TL_COL_F64, TL_COL_F64, TL_COL_I64, TL_COL_I64,
                                    TL_COL_F64, TL_COL_F64, TL_COL_STR, TL_COL_STR, TL_COL_F64, TL_COL_F64};
    tl_table *t = tl_table_new("nccl_all2allv_ranks");
    for (size_t i = 0; i < 12; i++) tl_table_add_col(t, cols[i], ty[i]);
    double *tot = tl_xmalloc((n + 1) * sizeof *tot);
    size_t *idx = tl_xmalloc((n + 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) {
        tot[i] = a2a_total_mb(c, grps[i]);
        idx[i] = i;
    }
    a2a_order ord = {grps, tot};
    tl_msort(idx, n, cmp_a2a, &ord);
    for (size_t i = 0; i < n; i++) {
        size_t k = grps[idx[i]];
        const grp *g = &c->g[k];
        int64_t estart = INT64_MAX, lend = INT64_MIN;
        for (size_t x = 0; x < g->n; x++) {
            const tl_coll_rec *r = &c->cs->rec[c->by_grp[g->start + x]];
            if (r->ts < estart) estart = r->ts;
            if (r->ts + r->dur > lend) lend = r->ts + r->dur;
        }
        for (size_t x = 0; x < g->n; x++) {
            const tl_coll_rec *r = &c->cs->rec[c->by_grp[g->start + x]];
            const tl_coll_meta *m = &c->cs->meta[r->meta];
            size_t row = tl_table_add_row(t);
            tl_table_set_str(t, 0, row, c->cid[k]);
            tl_table_set_i64(t, 1, row, r->rank);
            tl_table_set_f64(t, 2, row, us(r->ts));
            tl_table_set_f64(t, 3, row, us(r->dur));
            set_i64_or_null(t, 4, row, m->num[TL_CM_IN_NELEMS]);
            set_i64_or_null(t, 5, row, m->num[TL_CM_OUT_NELEMS]);
            set_f64(t, 6, row, c->in_mb[r->meta]);
            set_f64(t, 7, row, c->out_mb[r->meta]);
            set_str_or_null(t, 8, row, pstr(c, m->text[TL_CM_IN_SPLIT]));
            set_str_or_null(t, 9, row, pstr(c, m->text[TL_CM_OUT_SPLIT]));
            tl_table_set_f64(t, 10, row, us(r->ts - estart));
            tl_table_set_f64(t, 11, row, us(lend - (r->ts + r->dur)));
        }
    }
    free(tot);
    free(idx);
    return t;
}

static tl_table *build_all2allv(const ctx *c, tl_table **ranks_out, tl_error *err, int *failed)
{
    int narrow = c->o->per_rank_long;
    *ranks_out = NULL;
    static const char *const gen[] = {"collective_id", "Process Group Name", "Process Group Ranks", "Collective name",
                                      "Group size", "dtype", "stream", "total data communicated (MB)",
                                      "total nelems communicated", "wall_time (us)", "max_rank_dur (us)",
                                      "min_rank_dur (us)", "avg_rank_dur (us)", "throughput (GB/s)",
                                      "max_rank_throughput (GB/s)", "min_rank_throughput (GB/s)", "size_imbalance",
                                      "skew in start time", "skew in end time"};
    static const tl_coltype gty[] = {TL_COL_STR, TL_COL_STR, TL_COL_STR, TL_COL_STR, TL_COL_I64, TL_COL_STR, TL_COL_I64,
                                     TL_COL_F64, TL_COL_I64, TL_COL_F64, TL_COL_F64, TL_COL_F64, TL_COL_F64, TL_COL_F64,
                                     TL_COL_F64, TL_COL_F64, TL_COL_F64, TL_COL_F64, TL_COL_F64};
    static const char *const per[] = {"ts", "dur", "In msg nelems", "Out msg nelems", "In msg size (MB)",
                                      "Out msg size (MB)", "In split size", "Out split size",
                                      "skew in start time", "skew in end time"};
    static const tl_coltype pty[] = {TL_COL_F64, TL_COL_F64, TL_COL_I64, TL_COL_I64, TL_COL_F64,
                                     TL_COL_F64, TL_COL_STR, TL_COL_STR, TL_COL_F64, TL_COL_F64};
    /* [FIX D7] stream is not compared */
    static const int check[] = {TL_CM_PG_RANKS, TL_CM_COLL_NAME, TL_CM_GROUP_SIZE, TL_CM_DTYPE};
    *failed = 0;
    tl_table *t = tl_table_new("nccl_all2allv");
    for (size_t i = 0; i < 19; i++) tl_table_add_col(t, gen[i], gty[i]);
    size_t c_last = narrow ? tl_table_add_col(t, "last arrival rank", TL_COL_I64) : 0;
    size_t c_num = narrow ? tl_table_add_col(t, "num_ranks", TL_COL_I64) : 0;
    size_t c_miss = c->o->allow_missing ? tl_table_add_col(t, "missing_ranks", TL_COL_I64) : 0;
    size_t *grps = tl_xmalloc((c->ng + 1) * sizeof *grps), ngrps = 0;
    long *slots[10];
    for (int i = 0; i < 10; i++) slots[i] = new_slots(c->nranks);
    for (size_t o = 0; o < c->ng; o++) {
        size_t k = c->order[o];
        const grp *g = &c->g[k];
        size_t r0 = c->by_grp[g->start];
        const tl_coll_meta *m = meta_of(c, r0);
        const char *nm = pstr(c, m->text[TL_CM_COLL_NAME]);
        if (!nm || strcmp(nm, "all_to_allv") != 0) continue;
        if (!c->simplified && check_meta(c, k, check, sizeof check / sizeof *check, err) != 0) {
            if (c->o->strict_metadata) {
                *failed = 1;
                break;
            }
            fprintf(stderr, "tracelens: warning: %s (the lowest rank's values are used)\n", err->msg);
        }
        uint32_t mid = c->cs->rec[r0].meta;
        size_t row = tl_table_add_row(t);
        grps[ngrps++] = k;
        tl_table_set_str(t, 0, row, c->cid[k]);
        tl_table_set_str(t, 1, row, pstr(c, c->pg_of_meta[mid]));
        set_str_or_null(t, 2, row, pstr(c, m->text[TL_CM_PG_RANKS]));
        tl_table_set_str(t, 3, row, nm);
        set_i64_or_null(t, 4, row, m->num[TL_CM_GROUP_SIZE]);
        set_str_or_null(t, 5, row, pstr(c, m->text[TL_CM_DTYPE]));
        set_i64_or_null(t, 6, row, m->num[TL_CM_STREAM]);
        if (c->o->allow_missing) {
            int64_t miss = missing_members(c, k);
            if (miss >= 0) tl_table_set_i64(t, c_miss, row, miss);
        }
        int64_t lstart = INT64_MIN, estart = INT64_MAX, eend = INT64_MAX, lend = INT64_MIN;
        int64_t maxd = INT64_MIN, mind = INT64_MAX, sumd = 0, tot_n = 0;
        double tot_mb = 0, max_mb = -INFINITY, max_tp = NAN, min_tp = NAN;
        int none = 0;
        for (size_t x = 0; x < g->n; x++) {
            const tl_coll_rec *r = &c->cs->rec[c->by_grp[g->start + x]];
            const tl_coll_meta *rm = &c->cs->meta[r->meta];
            int64_t e = r->ts + r->dur;
            if (r->ts > lstart) lstart = r->ts;
            if (r->ts < estart) estart = r->ts;
            if (e < eend) eend = e;
            if (e > lend) lend = e;
            if (r->dur > maxd) maxd = r->dur;
            if (r->dur < mind) mind = r->dur;
            sumd += r->dur;
            double mb = c->in_mb[r->meta];
            if (isnan(mb) || rm->num[TL_CM_IN_NELEMS] == TL_NONE) none = 1;
            else {
                tot_mb += mb;
                tot_n += rm->num[TL_CM_IN_NELEMS];
                if (mb > max_mb) max_mb = mb;
                if (mb > 0 && r->dur > 0) {
                    double tp = (mb / 1024.0) / (us(r->dur) / 1e6);
                    if (isnan(max_tp) || tp > max_tp) max_tp = tp;
                    if (isnan(min_tp) || tp < min_tp) min_tp = tp;
                }
            }
            if (narrow) continue;
            const char *sp_in = pstr(c, rm->text[TL_CM_IN_SPLIT]), *sp_out = pstr(c, rm->text[TL_CM_OUT_SPLIT]);
            size_t col[8];
            for (int q = 0; q < 8; q++) col[q] = rank_col(t, slots[q], r->rank, per[q], pty[q]);
            tl_table_set_f64(t, col[0], row, us(r->ts));
            tl_table_set_f64(t, col[1], row, us(r->dur));
            set_i64_or_null(t, col[2], row, rm->num[TL_CM_IN_NELEMS]);
            set_i64_or_null(t, col[3], row, rm->num[TL_CM_OUT_NELEMS]);
            set_f64(t, col[4], row, c->in_mb[r->meta]);
            set_f64(t, col[5], row, c->out_mb[r->meta]);
            set_str_or_null(t, col[6], row, sp_in);
            set_str_or_null(t, col[7], row, sp_out);
        }
        uint32_t lastr = UINT32_MAX;
        for (size_t x = 0; x < g->n; x++) {
            const tl_coll_rec *r = &c->cs->rec[c->by_grp[g->start + x]];
            if (r->ts == lstart && lastr == UINT32_MAX) lastr = r->rank;
            if (narrow) continue;
            size_t a = rank_col(t, slots[8], r->rank, per[8], pty[8]);
            size_t b = rank_col(t, slots[9], r->rank, per[9], pty[9]);
            tl_table_set_f64(t, a, row, us(r->ts - estart));
            tl_table_set_f64(t, b, row, us(lend - (r->ts + r->dur)));
        }
        double wall = us(lend - estart);
        /* [FIX] a None size anywhere: the totals are empty (the reference crashes) */
        if (!none) {
            tl_table_set_f64(t, 7, row, tot_mb);
            tl_table_set_i64(t, 8, row, tot_n);
            if (wall > 0) tl_table_set_f64(t, 13, row, (tot_mb / 1024.0) / (wall / 1e6));
            double mean = tot_mb / (double)g->n;
            if (mean > 0) tl_table_set_f64(t, 16, row, max_mb / mean);
        }
        tl_table_set_f64(t, 9, row, wall);
        if (narrow) {
            tl_table_set_i64(t, c_last, row, lastr);
            tl_table_set_i64(t, c_num, row, (int64_t)g->n);
        }
        tl_table_set_f64(t, 10, row, us(maxd));
        tl_table_set_f64(t, 11, row, us(mind));
        tl_table_set_f64(t, 12, row, us(sumd) / (double)g->n);
        set_f64(t, 14, row, max_tp);
        set_f64(t, 15, row, min_tp);
        tl_table_set_f64(t, 17, row, us(lstart - estart));
        tl_table_set_f64(t, 18, row, us(lend - eend));
    }
    for (int i = 0; i < 10; i++) free(slots[i]);
    if (*failed) {
        free(grps);
        tl_table_free(t);
        return NULL;
    }
    if (narrow) *ranks_out = build_all2allv_ranks(c, grps, ngrps);
    free(grps);
    tl_sortkey sk = {"total data communicated (MB)", 1};
    tl_table_sort(t, &sk, 1);
    return t;
}

static tl_table *build_summary_all2allv(const ctx *c, const tl_table *d)
{
    static const char *const keys[] = {"Process Group Name", "dtype"};
    static const char *const mm[] = {"mean", "max"};
    aggv a = {0};
    agg_add_list(&a, "total data communicated (MB)", c->o->agg, c->o->nagg);
    agg_add_list(&a, "wall_time (us)", c->o->agg, c->o->nagg);
    agg_add(&a, "wall_time (us)", TL_AGG_SUM, "Total wall_time (us)");
    agg_add_list(&a, "throughput (GB/s)", c->o->agg, c->o->nagg);
    agg_add_list(&a, "size_imbalance", mm, 2);
    agg_add_list(&a, "max_rank_dur (us)", mm, 2);
    agg_add_list(&a, "skew in start time", mm, 2);
    agg_add_list(&a, "skew in end time", mm, 2);
    agg_add(&a, "collective_id", TL_AGG_COUNT, "count");
    agg_add(&a, "Process Group Ranks", TL_AGG_FIRST, "Process Group Ranks");
    agg_add(&a, "Collective name", TL_AGG_FIRST, "Collective name");
    agg_add(&a, "Group size", TL_AGG_FIRST, "Group size");
    tl_groupby g = {keys, 2, 1, 0, a.v, a.n};
    tl_table *t = tl_table_group(d, "nccl_summary_all2allv", &g);
    long us_col = tl_table_col(t, "Total wall_time (us)");
    size_t ms = tl_table_add_col(t, "Total wall_time (ms)", TL_COL_F64);
    for (size_t r = 0; r < t->nrows; r++)
        if (!tl_table_is_null(t, (size_t)us_col, r)) tl_table_set_f64(t, ms, r, t->cols[us_col].v.f[r] / 1000.0);
    static const char *const last[] = {"Total wall_time (ms)"};
    select_in_order(t, keys, 2, &a, last, 1);
    agg_free(&a);
    tl_sortkey sk = {"Total wall_time (ms)", 1};
    tl_table_sort(t, &sk, 1);
    return t;
}

/* Heatmap (§5.4): bytes per (src rank, dst rank) from the In split sizes.
 * [FIX D5] dst is the j-th rank of Process Group Ranks (j when unparseable);
 * [FIX D6] a split entry counts In msg nelems / Σ splits elements. */
typedef struct hcell {
    int64_t src, dst;
    double bytes;
    int64_t count;
} hcell;

static int cmp_hcell(void *v, size_t a, size_t b)
{
    const hcell *h = v;
    if (h[a].src != h[b].src) return h[a].src < h[b].src ? -1 : 1;
    return h[a].dst < h[b].dst ? -1 : h[a].dst > h[b].dst;
}

static tl_table *build_heatmap(const ctx *c)
{
    const tl_coll_set *cs = c->cs;
    hcell *cells = NULL;
    size_t n = 0, cap = 0;
    tl_map map;
    tl_map_init(&map, 64);
    for (size_t i = 0; i < cs->n; i++) {
        const tl_coll_rec *r = &cs->rec[i];
        const tl_coll_meta *m = &cs->meta[r->meta];
        const char *nm = pstr(c, m->text[TL_CM_COLL_NAME]);
        if (!nm || strcmp(nm, "all_to_allv") != 0) continue;
        int64_t *sp, *pr;
        long ns = parse_int_list(pstr(c, m->text[TL_CM_IN_SPLIT]), &sp);
        if (ns < 0) continue;
        int b = dtype_bytes(pstr(c, m->text[TL_CM_DTYPE]));
        if ((m->num[TL_CM_GROUP_SIZE] != TL_NONE && ns != m->num[TL_CM_GROUP_SIZE]) || !b) {
            free(sp);
            continue;
        }
        long np = parse_int_list(pstr(c, m->text[TL_CM_PG_RANKS]), &pr);
        int64_t tot = 0;
        for (long j = 0; j < ns; j++) tot += sp[j];
        double per = tot > 0 && m->num[TL_CM_IN_NELEMS] != TL_NONE ? (double)m->num[TL_CM_IN_NELEMS] / (double)tot : 1.0;
        for (long j = 0; j < ns; j++) {
            int64_t dst = np == ns ? pr[j] : j;
            uint32_t h = tl_map_get(&map, r->rank, (uint64_t)dst);
            if (h == UINT32_MAX) {
                TL_GROW(cells, cap, n + 1);
                cells[n] = (hcell){r->rank, dst, 0, 0};
                h = (uint32_t)n++;
                tl_map_put(&map, r->rank, (uint64_t)dst, h);
            }
            cells[h].bytes += (double)sp[j] * per * b;
            cells[h].count++;
        }
        free(sp);
        free(pr);
    }
    tl_map_free(&map);
    size_t *idx = tl_xmalloc((n + 1) * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    tl_msort(idx, n, cmp_hcell, cells);
    tl_table *t = tl_table_new("nccl_all2allv_heatmap");
    size_t cs_ = tl_table_add_col(t, "src_rank", TL_COL_I64), cd = tl_table_add_col(t, "dst_rank", TL_COL_I64);
    size_t ct = tl_table_add_col(t, "total_sent_MB", TL_COL_F64), ca = tl_table_add_col(t, "avg_sent_MB", TL_COL_F64);
    size_t cc = tl_table_add_col(t, "count", TL_COL_I64);
    tl_table_add_rows(t, n);
    for (size_t i = 0; i < n; i++) {
        const hcell *h = &cells[idx[i]];
        double mb = h->bytes / (1024.0 * 1024.0);
        tl_table_set_i64(t, cs_, i, h->src);
        tl_table_set_i64(t, cd, i, h->dst);
        tl_table_set_f64(t, ct, i, mb);
        tl_table_set_f64(t, ca, i, mb / (double)h->count);
        tl_table_set_i64(t, cc, i, h->count);
    }
    free(idx);
    free(cells);
    return t;
}

/* ------------------------------------------------ straggler_summary */

static tl_table *build_straggler(const ctx *c, const strag *st)
{
    tl_table *t = tl_table_new("straggler_summary");
    size_t cr = tl_table_add_col(t, "rank", TL_COL_I64);
    size_t ctw = tl_table_add_col(t, "total_wait_time_us", TL_COL_F64);
    size_t cmw = tl_table_add_col(t, "mean_wait_time_us", TL_COL_F64);
    size_t cl = tl_table_add_col(t, "times_arrived_last", TL_COL_I64);
    size_t cf = tl_table_add_col(t, "times_arrived_first", TL_COL_I64);
    size_t cp = tl_table_add_col(t, "pct_arrived_last", TL_COL_F64);
    size_t cn = tl_table_add_col(t, "num_collectives", TL_COL_I64);
    size_t cd = tl_table_add_col(t, "total_nccl_dur_us", TL_COL_F64);
    for (uint32_t r = 0; r < c->nranks; r++) {
        if (!st->members[r]) continue;
        size_t row = tl_table_add_row(t);
        tl_table_set_i64(t, cr, row, r);
        tl_table_set_f64(t, ctw, row, py_round1(us(st->wait_ns[r])));
        tl_table_set_f64(t, cmw, row, py_round1(us(st->wait_ns[r]) / (double)st->members[r]));
        tl_table_set_i64(t, cl, row, st->last[r]);
        tl_table_set_i64(t, cf, row, st->first[r]);
        /* [FIX D4] relative to the rank's own implicit-sync collectives */
        tl_table_set_f64(t, cp, row, py_round1(100.0 * (double)st->last[r] / (double)st->members[r]));
        tl_table_set_i64(t, cn, row, st->members[r]);
        tl_table_set_f64(t, cd, row, py_round1(us(st->dur_ns[r])));
    }
    tl_sortkey sk[2] = {{"total_wait_time_us", 0}, {"rank", 0}};
    tl_table_sort(t, sk, 2);
    return t;
}

/* ----------------------------------------------- node_id / node_span */

static void add_node_columns(tl_table *t, int gpn)
{
    if (gpn <= 0 || !t || !t->nrows) return;
    long rc = tl_table_col(t, "rank"), pc = tl_table_col(t, "Process Group Ranks");
    if (rc >= 0) {
        size_t c = tl_table_add_col(t, "node_id", TL_COL_I64);
        for (size_t r = 0; r < t->nrows; r++)
            if (!tl_table_is_null(t, (size_t)rc, r)) tl_table_set_i64(t, c, r, t->cols[rc].v.i[r] / gpn);
    }
    if (pc >= 0) {
        static const char *const SPAN[] = {"unknown", "intra_node", "inter_node"};
        /* one span per distinct rank list (a table text), not per row: the
         * lists of a 256-rank group repeat on every row of nccl_long */
        size_t npool = t->pool.n;
        uint8_t *span = tl_xcalloc(npool + 1, 1); /* 1 + SPAN index; 0: not yet */
        size_t c = tl_table_add_col(t, "node_span", TL_COL_STR);
        uint32_t span_id[3];
        for (int k = 0; k < 3; k++) span_id[k] = UINT32_MAX;
        for (size_t r = 0; r < t->nrows; r++) {
            uint32_t id = t->cols[pc].v.s[r];
            if (id < npool && span[id]) {
                int k = span[id] - 1;
                if (span_id[k] == UINT32_MAX) span_id[k] = tl_strpool_intern(&t->pool, SPAN[k], strlen(SPAN[k]));
                tl_table_set_str_id(t, c, r, span_id[k]);
                continue;
            }
            const char *s = tl_table_str(t, (size_t)pc, r);
            /* the digit runs of the rank list */
            int64_t node = -1;
            int mixed = 0, any = 0;
            for (const char *p = s; p && *p;) {
                if (*p >= '0' && *p <= '9') {
                    char *end;
                    long long v = strtoll(p, &end, 10);
                    p = end;
                    int64_t nd = v / gpn;
                    if (any && nd != node) mixed = 1;
                    node = nd;
                    any = 1;
                } else p++;
            }
            int k = !any ? 0 : mixed ? 2 : 1;
            if (id < npool) span[id] = (uint8_t)(k + 1);
            tl_table_set_str(t, c, r, SPAN[k]);
        }
        free(span);
    }
}

/* Moves column `name` (when t has it) after every other column. */
static void move_col_last(tl_table *t, const char *name)
{
    long c = t ? tl_table_col(t, name) : -1;
    if (c < 0) return;
    tl_col keep = t->cols[c];
    memmove(&t->cols[c], &t->cols[c + 1], (t->ncols - (size_t)c - 1) * sizeof *t->cols);
    t->cols[t->ncols - 1] = keep;
}

/* ------------------------------------------------------------- build */

/* records from which nccl_long is built on a thread of its own */
enum { LONG_THREAD_FROM = 4096 };

static void push_sheet(tl_sheets *s, tl_table *t)
{
    TL_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n].name = tl_xstrdup(t->name);
    s->v[s->n].table = t;
    s->v[s->n].write_empty_as_newline = 0;
    s->n++;
}

/* nccl_long and nccl_summary_long on a thread of their own while the other
 * sheets are built: both only read the context (set up by prepare) and
 * the records. */
typedef struct long_job {
    const ctx *c;
    tl_table *longt, *sum;
} long_job;

static void *long_thread(void *arg)
{
    long_job *j = arg;
    j->longt = build_long(j->c);
    j->sum = build_summary_long(j->longt);
    return NULL;
}

int tl_ranks_report_build(tl_coll_set *cs, const tl_ranks_opts *o, tl_sheets *out, tl_error *err)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.cs = cs;
    c.o = o;
    if (!cs->n) fprintf(stderr, "tracelens: warning: no NCCL collective events found in the rank traces\n");
    prepare(&c);
    check_membership(&c);
    uint32_t nr = c.nranks + 1;
    strag st;
    st.wait_ns = tl_xcalloc(nr, sizeof(int64_t));
    st.members = tl_xcalloc(nr, sizeof(int64_t));
    st.last = tl_xcalloc(nr, sizeof(int64_t));
    st.first = tl_xcalloc(nr, sizeof(int64_t));
    st.dur_ns = tl_xcalloc(nr, sizeof(int64_t));
    for (size_t i = 0; i < cs->n; i++) st.dur_ns[cs->rec[i].rank] += cs->rec[i].dur;
    tl_table *isrc = NULL, *longt = NULL, *a2a = NULL, *isync_rk = NULL, *a2a_rk = NULL;
    int rc = -1, failed = 0;
    long_job lj = {&c, NULL, NULL};
    pthread_t lth;
    int lthreaded = cs->n >= LONG_THREAD_FROM && pthread_create(&lth, NULL, long_thread, &lj) == 0;
    tl_table *isync = build_implicit_sync(&c, &st, &isrc, &isync_rk, err);
    if (isync) a2a = build_all2allv(&c, &a2a_rk, err, &failed);
    if (lthreaded) pthread_join(lth, NULL);
    else if (isync && !failed) long_thread(&lj);
    longt = lj.longt;
    if (!isync || failed) {
        tl_table_free(lj.sum);
        goto done;
    }
    tl_table *sum_is = build_summary_implicit(&c, isrc);
    tl_table *sum_long = lj.sum;
    tl_table *sum_a2a = a2a->nrows ? build_summary_all2allv(&c, a2a) : NULL;
    tl_table *heat = NULL;
    if (o->heatmap && a2a->nrows) {
        if (o->world_size > 1024)
            fprintf(stderr, "tracelens: warning: nccl_all2allv_heatmap skipped above 1024 ranks (world size %u)\n",
                    o->world_size);
        else {
            if (o->world_size > 256)
                fprintf(stderr, "tracelens: warning: nccl_all2allv_heatmap for %u ranks is large\n", o->world_size);
            heat = build_heatmap(&c);
            if (!heat->nrows) {
                tl_table_free(heat);
                heat = NULL;
            }
        }
    }
    tl_table *strag_t = build_straggler(&c, &st);
    int a2a_empty = !a2a->nrows, strag_empty = !strag_t->nrows;
    if (a2a_rk && !a2a_rk->nrows) {
        tl_table_free(a2a_rk);
        a2a_rk = NULL;
    }
    tl_table *all[] = {sum_is, sum_long, sum_a2a, heat, longt, isync, isync_rk, a2a->nrows ? a2a : NULL, a2a_rk,
                       strag_t->nrows ? strag_t : NULL};
    int detail[] = {0, 0, 0, 0, 1, 1, 1, 1, 1, 0};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        if (!all[i]) continue;
        if (detail[i] && !o->detailed) continue;
        add_node_columns(all[i], o->gpus_per_node);
        move_col_last(all[i], "missing_ranks"); /* last, after the per-rank and node columns */
        push_sheet(out, all[i]);
        all[i] = NULL;
    }
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i]) tl_table_free(all[i]);
    if (strag_empty) tl_table_free(strag_t);
    if (a2a_empty) tl_table_free(a2a);
    isync = longt = a2a = isync_rk = a2a_rk = NULL;
    rc = 0;
done:
    if (isync) tl_table_free(isync);
    if (a2a) tl_table_free(a2a);
    if (longt) tl_table_free(longt);
    if (isrc) tl_table_free(isrc);
    if (isync_rk) tl_table_free(isync_rk);
    if (a2a_rk) tl_table_free(a2a_rk);
    free(st.wait_ns);
    free(st.members);
    free(st.last);
    free(st.first);
    free(st.dur_ns);
    ctx_free(&c);
    return rc;
}

/* ------------------------------------- per-collective view (report.h) */

size_t tl_ranks_collectives(tl_coll_set *cs, const tl_ranks_opts *o, tl_ranks_coll **out, uint32_t **coll_of_rec)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.cs = cs;
    c.o = o;
    prepare(&c);
    tl_ranks_coll *v = tl_xcalloc(c.ng + 1, sizeof *v);
    uint32_t *pos = tl_xmalloc((c.ng + 1) * sizeof *pos); /* group id -> output position */
    for (size_t oi = 0; oi < c.ng; oi++) {
        size_t k = c.order[oi];
        const grp *g = &c.g[k];
        tl_ranks_coll *x = &v[oi];
        pos[k] = (uint32_t)oi;
        size_t r0 = c.by_grp[g->start];
        uint32_t mid = cs->rec[r0].meta;
        int ty = c.type_of_meta[mid];
        const tl_coll_meta *m = &cs->meta[mid];
        x->cid = c.cid[k];
        c.cid[k] = NULL;
        x->pg = pstr(&c, c.pg_of_meta[mid]);
        x->meta = mid;
        x->n = (uint32_t)g->n;
        x->implicit_sync = c.simplified ? (ty == T_NONE || implicit_sync_type(ty)) : implicit_sync_type(ty);
        x->lstart = INT64_MIN, x->estart = INT64_MAX, x->eend = INT64_MAX, x->lend = INT64_MIN, x->lat = INT64_MAX;
        x->min_rank = UINT32_MAX;
        for (size_t j = 0; j < g->n; j++) {
            const tl_coll_rec *r = &cs->rec[c.by_grp[g->start + j]];
            int64_t e = r->ts + r->dur;
            if (r->ts > x->lstart) x->lstart = r->ts;
            if (r->ts < x->estart) x->estart = r->ts;
            if (e < x->eend) x->eend = e;
            if (e > x->lend) x->lend = e;
            if (r->dur < x->lat) x->lat = r->dur;
            if (r->rank < x->min_rank) x->min_rank = r->rank;
            if (r->rank > x->max_rank) x->max_rank = r->rank;
        }
        int64_t maxw = -1;
        x->last_rank = UINT32_MAX;
        for (size_t j = 0; j < g->n; j++) { /* members in ascending rank */
            const tl_coll_rec *r = &cs->rec[c.by_grp[g->start + j]];
            int64_t w = x->lstart - r->ts;
            if (w >= maxw) maxw = w, x->earliest_rank = r->rank;
            if (w == 0 && x->last_rank == UINT32_MAX) x->last_rank = r->rank;
        }
        double full = ty == T_NONE ? NAN : ty == T_ALLGATHER ? c.out_mb[mid] : c.in_mb[mid];
        if (ty != T_NONE && (isnan(c.in_mb[mid]) || isnan(c.out_mb[mid]))) full = NAN;
        x->full_mb = full;
        x->algo_bw = x->bus_bw = NAN;
        if (!isnan(full) && x->lat > 0) x->algo_bw = (full / 1024.0) / (us(x->lat) / 1e6);
        if (!isnan(x->algo_bw) && m->num[TL_CM_GROUP_SIZE] != TL_NONE)
            x->bus_bw = x->algo_bw * bus_factor(ty, m->num[TL_CM_GROUP_SIZE]);
    }
    if (coll_of_rec) {
        uint32_t *cr = tl_xmalloc((cs->n + 1) * sizeof *cr);
        for (size_t i = 0; i < cs->n; i++) cr[i] = pos[c.grp_of_rec[i]];
        *coll_of_rec = cr;
    }
    size_t n = c.ng;
    free(pos);
    ctx_free(&c);
    *out = v;
    return n;
}

void tl_ranks_colls_free(tl_ranks_coll *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i].cid);
    free(v);
}
