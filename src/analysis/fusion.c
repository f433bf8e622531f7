#include "fusion.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util/bigmem.h"
#include "../util/hashmap.h"

static const char *const excluded[] = {"nccl", "rccl", "memcpy", "memset", NULL};
static const char *const already_fused[] = {"attn_fwd",        "attn_bwd",   "fmha",      "unified_attention",
                                            "paged_attention", "flash_attn", "flash_fwd", "silu_and_mul",
                                            NULL};

size_t tl_fusion_base(const char *name, const char **start)
{
    static const char prefix[] = "nn.Module: ";
    if (!strncmp(name, prefix, sizeof prefix - 1)) name += sizeof prefix - 1;
    size_t n = strlen(name), e = n;
    while (e > 0 && name[e - 1] >= '0' && name[e - 1] <= '9') e--;
    if (e < n && e > 0 && name[e - 1] == '_') n = e - 1;
    *start = name;
    return n;
}

static int any_in(const char *name, const char *const *pats)
{
    size_t n = strlen(name);
    char *s = tl_xmalloc(n + 1);
    for (size_t i = 0; i <= n; i++) s[i] = (char)tolower((unsigned char)name[i]);
    int hit = 0;
    for (int i = 0; pats[i] && !hit; i++) hit = strstr(s, pats[i]) != NULL;
    free(s);
    return hit;
}

int tl_fusion_is_fused(const char *kernel_name) { return any_in(kernel_name, already_fused); }

int tl_fusion_eligible(const char *kernel_name)
{
    return !any_in(kernel_name, excluded) && !any_in(kernel_name, already_fused);
}

void tl_fusion_init(tl_fusion *f)
{
    memset(f, 0, sizeof *f);
    tl_strpool_init(&f->bases);
}

void tl_fusion_free(tl_fusion *f)
{
    tl_strpool_free(&f->bases);
    free(f->modules.v);
    free(f->kernels.v);
    free(f->sequences.v);
    free(f->ops.v);
    free(f->inst.v);
    free(f->inst_len.v);
    free(f->inst_kernels.v);
    memset(f, 0, sizeof *f);
}

static int skipped_cat(uint8_t c)
{
    return c == TL_CAT_KERNEL || c == TL_CAT_GPU_MEMCPY || c == TL_CAT_GPU_MEMSET || c == TL_CAT_CUDA_RUNTIME ||
           c == TL_CAT_CUDA_DRIVER;
}

static void time_add(tl_fusion_time *t, const tl_event_store *es, uint32_t u, double *inst_us)
{
    *inst_us += (double)es->dur[u] / 1000.0;
    t->ns += es->dur[u];
    if (!(es->flags[u] & TL_F_DUR_INT)) t->all_int = 0;
}

/* Per names id, computed on first use. */
typedef struct name_info {
    uint32_t *base;     /* base id + 1 in f->bases; 0 = not computed; UINT32_MAX = empty base */
    uint8_t *kflags;    /* 1 = computed, 2 = eligible, 4 = already fused */
} name_info;

static uint32_t base_of(tl_fusion *f, name_info *ni, const tl_event_store *es, uint32_t u)
{
    uint32_t nm = es->name[u];
    if (!ni->base[nm]) {
        const char *s;
        size_t n = tl_fusion_base(tl_es_name(es, u), &s);
        ni->base[nm] = n ? tl_strpool_intern(&f->bases, s, n) + 1 : UINT32_MAX;
    }
    return ni->base[nm] == UINT32_MAX ? UINT32_MAX : ni->base[nm] - 1;
}

static uint8_t kflags_of(name_info *ni, const tl_event_store *es, uint32_t g)
{
    uint32_t nm = es->name[g];
    if (!ni->kflags[nm]) {
        const char *s = tl_es_name(es, g);
        ni->kflags[nm] = (uint8_t)(1 | (tl_fusion_eligible(s) ? 2 : 0) | (tl_fusion_is_fused(s) ? 4 : 0));
    }
    return ni->kflags[nm];
}

/* An instance seen by a walk: its record and what it adds (a node, or the
 * start and count of its kernels in a scratch list). */
typedef struct inst_ref {
    uint32_t rec;
    uint32_t a, n;
} inst_ref;
typedef TL_VEC(inst_ref) inst_refs;

/* The instances grouped by record (a counting sort that keeps trace order):
 * first[r] = the index of record r's first instance; returns the instances'
 * order, refs indices, record after record. */
static size_t *group_instances(const inst_refs *refs, size_t nrec, size_t *first)
{
    memset(first, 0, (nrec + 1) * sizeof *first);
    for (size_t i = 0; i < refs->n; i++) first[refs->v[i].rec + 1]++;
    for (size_t r = 0; r < nrec; r++) first[r + 1] += first[r];
    size_t *order = tl_xmalloc((refs->n + 1) * sizeof *order);
    size_t *fill = tl_xcalloc(nrec + 1, sizeof *fill);
    for (size_t i = 0; i < refs->n; i++) {
        uint32_t r = refs->v[i].rec;
        order[first[r] + fill[r]++] = i;
    }
    free(fill);
    return order;
}

/* A kernel-name sequence: FNV-1a over the name ids, to tell records of one
 * base apart quickly (equal hashes are then compared id by id). */
static uint64_t seq_hash(const tl_event_store *es, const uint32_t *gpu, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= es->name[gpu[i]];
        h *= 1099511628211ull;
    }
    return h;
}

static int seq_equal(const tl_event_store *es, const uint32_t *a, const uint32_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (es->name[a[i]] != es->name[b[i]]) return 0;
    return 1;
}

/* The records by (base, sequence hash): head maps the pair to its first
 * record; next[record] is the next record with the same pair (a hash
 * collision), UINT32_MAX at the end. */
typedef struct rec_chain {
    tl_map head;
    TL_VEC(uint32_t) next;
} rec_chain;

static void rec_chain_init(rec_chain *c)
{
    memset(c, 0, sizeof *c);
    tl_map_init(&c->head, 1024);
}

static uint32_t rec_chain_first(const rec_chain *c, uint32_t base, uint64_t h)
{
    return tl_map_get(&c->head, base, h);
}

static void rec_chain_add(rec_chain *c, uint32_t base, uint64_t h, uint32_t record)
{
    while (c->next.n <= record) TL_PUSH(c->next, UINT32_MAX);
    uint32_t r = tl_map_get(&c->head, base, h);
    if (r == UINT32_MAX) {
        tl_map_put(&c->head, base, h, record);
        return;
    }
    while (c->next.v[r] != UINT32_MAX) r = c->next.v[r];
    c->next.v[r] = record;
}

static void rec_chain_free(rec_chain *c)
{
    tl_map_free(&c->head);
    free(c->next.v);
}

/* [FIX] A record is a base *and* the kernel-name sequence of its instances:
 * the reference keys by base alone and describes every instance by the
 * first one's kernels (instances * the first one's time), so a module whose
 * instances launch different kernels (timesformer's temporal and spatial
 * attention, 0.5 ms and 11 ms an instance) is estimated from its first
 * instance only. Instances with the same sequence are the same record, as
 * in the reference; a sequence of fewer than 2 kernels is no record. */
void tl_fusion_modules(tl_fusion *f, const tl_trace *t)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    name_info ni = {tl_xcalloc(es->names.n + 1, sizeof(uint32_t)), tl_xcalloc(es->names.n + 1, 1)};
    rec_chain rec;
    rec_chain_init(&rec);
    inst_refs refs = {0};
    TL_VEC(uint32_t) ks = {0}; /* the instance's kernel-category GPU events */
    for (size_t i = 0; i < es->n; i++) {
        uint32_t u = (uint32_t)i;
        if (skipped_cat(es->cat[u])) continue;
        tl_span gs = tl_tree_gpu_span(tr, u);
        uint32_t g0 = gs.b, g1 = gs.e;
        if (g1 - g0 < 2) continue;
        uint32_t base = base_of(f, &ni, es, u);
        if (base == UINT32_MAX) continue;
        ks.n = 0;
        for (uint32_t k = g0; k < g1; k++)
            if (es->cat[tr->gpus.v[k]] == TL_CAT_KERNEL) TL_PUSH(ks, tr->gpus.v[k]);
        if (ks.n < 2) continue;
        uint64_t h = seq_hash(es, ks.v, ks.n);
        uint32_t r = rec_chain_first(&rec, base, h);
        while (r != UINT32_MAX) {
            const tl_fusion_module *m = &f->modules.v[r];
            if (m->nk == ks.n && seq_equal(es, f->kernels.v + m->k_first, ks.v, ks.n)) break;
            r = rec.next.v[r];
        }
        if (r != UINT32_MAX) {
            tl_fusion_module *m = &f->modules.v[r];
            double inst = 0;
            for (size_t k = 0; k < ks.n; k++) time_add(&m->total, es, ks.v[k], &inst);
            m->instances++;
            m->total.us += inst;
            inst_ref ir = {r, u, 1};
            TL_PUSH(refs, ir);
            continue;
        }
        tl_fusion_module m = {.uid = u, .base = base, .instances = 1, .k_first = f->kernels.n, .nk = ks.n};
        m.total.all_int = 1;
        double inst = 0;
        for (size_t k = 0; k < ks.n; k++) {
            uint32_t g = ks.v[k];
            TL_PUSH(f->kernels, g);
            uint8_t kf = kflags_of(&ni, es, g);
            if (kf & 2) m.eligible++;
            if (kf & 4) m.has_fused = 1;
            time_add(&m.total, es, g, &inst);
        }
        m.total.us = inst;
        TL_PUSH(f->modules, m);
        rec_chain_add(&rec, base, h, (uint32_t)(f->modules.n - 1));
        inst_ref ir = {(uint32_t)(f->modules.n - 1), u, 1};
        TL_PUSH(refs, ir);
    }
    free(ks.v);
    size_t *first = tl_xmalloc((f->modules.n + 1) * sizeof *first);
    size_t *order = group_instances(&refs, f->modules.n, first);
    for (size_t i = 0; i < refs.n; i++) TL_PUSH(f->inst, refs.v[order[i]].a);
    for (size_t r = 0; r < f->modules.n; r++) {
        f->modules.v[r].i_first = first[r];
        f->modules.v[r].ni = first[r + 1] - first[r];
    }
    free(order);
    free(first);
    free(refs.v);
    rec_chain_free(&rec);
    free(ni.base);
    free(ni.kflags);
}

void tl_fusion_siblings(tl_fusion *f, const tl_trace *t, const tl_unified_row *rows, size_t n)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    /* the single-kernel ops with a parent, and their parent group (first-seen order) */
    uint32_t *group_of = tl_xmalloc((es->n + 1) * sizeof *group_of);
    memset(group_of, 0xff, (es->n + 1) * sizeof *group_of);
    TL_VEC(uint32_t) parents = {0};
    TL_VEC(uint32_t) counts = {0};
    TL_VEC(tl_fusion_op) cand = {0};
    TL_VEC(uint32_t) cand_group = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t ev = rows[i].ev, kernel;
        int synthetic = rows[i].kernel != TL_NOUID;
        if (synthetic) {
            kernel = rows[i].kernel;
        } else {
            size_t ng;
            const uint32_t *gv = tl_tree_gpus(tr, ev, &ng);
            if (ng != 1) continue;
            kernel = gv[0];
        }
        if (es->cat[kernel] != TL_CAT_KERNEL) continue;
        uint32_t p = tr->parent[ev]; /* a synthetic op copies its parent event's parent */
        if (p == TL_NOUID) continue;
        if (group_of[p] == UINT32_MAX) {
            group_of[p] = (uint32_t)parents.n;
            TL_PUSH(parents, p);
            TL_PUSH(counts, 0);
        }
        counts.v[group_of[p]]++;
        tl_fusion_op op = {ev, kernel, synthetic};
        TL_PUSH(cand, op);
        TL_PUSH(cand_group, group_of[p]);
    }
    free(group_of);
    /* each group's ops, in collection order (a counting sort by group) */
    size_t ng = parents.n;
    size_t *start = tl_xmalloc((ng + 1) * sizeof *start);
    start[0] = 0;
    for (size_t g = 0; g < ng; g++) start[g + 1] = start[g] + counts.v[g];
    tl_fusion_op *by_group = tl_xmalloc((cand.n + 1) * sizeof *by_group);
    size_t *fill = tl_xcalloc(ng + 1, sizeof *fill);
    for (size_t i = 0; i < cand.n; i++) {
        uint32_t g = cand_group.v[i];
        by_group[start[g] + fill[g]++] = cand.v[i];
    }
    free(fill);
    free(cand.v);
    free(cand_group.v);

    name_info ni = {tl_xcalloc(es->names.n + 1, sizeof(uint32_t)), tl_xcalloc(es->names.n + 1, 1)};
    rec_chain rec;
    rec_chain_init(&rec);
    inst_refs refs = {0};
    TL_VEC(uint32_t) scratch = {0}; /* every instance's kernels, visit order */
    uint32_t empty_base = UINT32_MAX; /* a parent whose base is "" (the reference keeps it) */
    for (size_t g = 0; g < ng; g++) {
        size_t cnt = start[g + 1] - start[g];
        if (cnt < 2) continue;
        const tl_fusion_op *ops = by_group + start[g];
        uint32_t base = base_of(f, &ni, es, parents.v[g]);
        if (base == UINT32_MAX) {
            if (empty_base == UINT32_MAX) empty_base = tl_strpool_intern(&f->bases, "", 0);
            base = empty_base;
        }
        inst_ref ir = {0, (uint32_t)scratch.n, (uint32_t)cnt};
        for (size_t k = 0; k < cnt; k++) TL_PUSH(scratch, ops[k].kernel);
        /* [FIX] keyed by base and kernel-name sequence, as the modules */
        const uint32_t *kv = scratch.v + ir.a;
        uint64_t h = seq_hash(es, kv, cnt);
        uint32_t r = rec_chain_first(&rec, base, h);
        while (r != UINT32_MAX) {
            const tl_fusion_sequence *s = &f->sequences.v[r];
            if (s->n == cnt) {
                size_t k = 0;
                while (k < cnt && es->name[f->ops.v[s->first + k].kernel] == es->name[kv[k]]) k++;
                if (k == cnt) break;
            }
            r = rec.next.v[r];
        }
        if (r != UINT32_MAX) {
            ir.rec = r;
            TL_PUSH(refs, ir);
            tl_fusion_sequence *s = &f->sequences.v[r];
            double inst = 0;
            for (size_t k = 0; k < cnt; k++) time_add(&s->total, es, ops[k].kernel, &inst);
            s->instances++;
            s->total.us += inst;
            continue;
        }
        tl_fusion_sequence s = {.parent = parents.v[g], .base = base, .instances = 1, .first = f->ops.n, .n = cnt};
        s.total.all_int = 1;
        double inst = 0;
        for (size_t k = 0; k < cnt; k++) {
            TL_PUSH(f->ops, ops[k]);
            time_add(&s.total, es, ops[k].kernel, &inst);
        }
        s.total.us = inst;
        TL_PUSH(f->sequences, s);
        ir.rec = (uint32_t)(f->sequences.n - 1);
        rec_chain_add(&rec, base, h, ir.rec);
        TL_PUSH(refs, ir);
    }
    size_t *first = tl_xmalloc((f->sequences.n + 1) * sizeof *first);
    size_t *order = group_instances(&refs, f->sequences.n, first);
    for (size_t r = 0; r < f->sequences.n; r++) {
        tl_fusion_sequence *s = &f->sequences.v[r];
        s->i_first = f->inst_len.n;
        s->k_first = f->inst_kernels.n;
        for (size_t i = first[r]; i < first[r + 1]; i++) {
            const inst_ref *ir = &refs.v[order[i]];
            TL_PUSH(f->inst_len, ir->n);
            for (uint32_t k = 0; k < ir->n; k++) TL_PUSH(f->inst_kernels, scratch.v[ir->a + k]);
        }
    }
    free(order);
    free(first);
    free(refs.v);
    free(scratch.v);
    rec_chain_free(&rec);
    free(ni.base);
    free(ni.kflags);
    free(start);
    free(by_group);
    free(parents.v);
    free(counts.v);
}

/* ------------------------------------------------ comparative (Case A) */

void tl_fusion_diff_init(tl_fusion_diff *d) { memset(d, 0, sizeof *d); }

void tl_fusion_diff_free(tl_fusion_diff *d)
{
    free(d->nodes.v);
    free(d->t1_rows.v);
    free(d->t2_rows.v);
    memset(d, 0, sizeof *d);
}

/* LCA id -> group: an id is a merged-tree node id, a small non-negative
 * integer, so those index an array; any other value (a float from a CSV,
 * say) goes through a hash map on its bits. Equal floats, equal keys
 * (-0.0 is 0.0). */
typedef struct lca_index {
    uint32_t *dense; /* group + 1, 0 = none */
    size_t cap;
    tl_map other;
} lca_index;

static void lca_index_init(lca_index *x, size_t nrows)
{
    x->cap = 4 * nrows + 1024;
    x->dense = tl_big_realloc(NULL, x->cap * sizeof *x->dense); /* zero-filled */
    tl_map_init(&x->other, 64);
}

static void lca_index_free(lca_index *x)
{
    tl_big_free(x->dense);
    tl_map_free(&x->other);
}

static int lca_dense(const lca_index *x, double v, size_t *i)
{
    if (!(v >= 0 && v < (double)x->cap)) return 0;
    *i = (size_t)v;
    return (double)*i == v;
}

static uint64_t lca_bits(double v)
{
    uint64_t k;
    memcpy(&k, &v, sizeof k);
    return k;
}

/* UINT32_MAX when absent */
static uint32_t lca_get(const lca_index *x, double v)
{
    size_t i;
    if (lca_dense(x, v, &i)) return x->dense[i] - 1;
    return tl_map_get(&x->other, lca_bits(v), 0);
}

static void lca_put(lca_index *x, double v, uint32_t g)
{
    size_t i;
    if (lca_dense(x, v, &i)) x->dense[i] = g + 1;
    else tl_map_put(&x->other, lca_bits(v), 0, g);
}

/* The trace-2 rows grouped by LCA id (groups in first-seen order, rows in
 * row order: start[g] .. start[g + 1] of rows), and each trace-1 row's
 * group (NONE_GROUP when no trace-2 row has its LCA id). */
#define NONE_GROUP UINT32_MAX
typedef struct lca_groups {
    uint32_t *group;  /* per diff_stats row */
    double *lca;      /* per group */
    size_t *start;
    uint32_t *rows;
    size_t n;
} lca_groups;

static void lca_groups_build(lca_groups *lg, const tl_fusion_diff_rows *in)
{
    lca_index x;
    lca_index_init(&x, in->n);
    TL_VEC(double) lca = {0};
    TL_VEC(size_t) count = {0};
    lg->group = tl_xmalloc((in->n + 1) * sizeof *lg->group);
    for (size_t r = 0; r < in->n; r++) {
        lg->group[r] = NONE_GROUP;
        if (in->source[r] != TL_FUSION_SRC_T2 || isnan(in->lca[r])) continue;
        uint32_t g = lca_get(&x, in->lca[r]);
        if (g == NONE_GROUP) {
            g = (uint32_t)lca.n;
            lca_put(&x, in->lca[r], g);
            TL_PUSH(lca, in->lca[r]);
            TL_PUSH(count, 0);
        }
        count.v[g]++;
        lg->group[r] = g;
    }
    for (size_t r = 0; r < in->n; r++)
        if (in->source[r] == TL_FUSION_SRC_T1 && !isnan(in->lca[r])) lg->group[r] = lca_get(&x, in->lca[r]);
    lca_index_free(&x);
    lg->n = lca.n;
    lg->lca = lca.v;
    lg->start = tl_xmalloc((lg->n + 1) * sizeof *lg->start);
    lg->start[0] = 0;
    for (size_t g = 0; g < lg->n; g++) lg->start[g + 1] = lg->start[g] + count.v[g];
    lg->rows = tl_xmalloc((lg->start[lg->n] + 1) * sizeof *lg->rows);
    if (lg->n) memset(count.v, 0, lg->n * sizeof *count.v);
    for (size_t r = 0; r < in->n; r++)
        if (in->source[r] == TL_FUSION_SRC_T2 && lg->group[r] != NONE_GROUP) {
            uint32_t g = lg->group[r];
            lg->rows[lg->start[g] + count.v[g]++] = (uint32_t)r;
        }
    free(count.v);
}

static void lca_groups_free(lca_groups *lg)
{
    free(lg->group);
    free(lg->lca);
    free(lg->start);
    free(lg->rows);
}

/* trace-1 rows by GPU UID (the last row wins): a bitmap of the mapped
 * UIDs and the rows by rank among them, so the walk's test reads a bit, not
 * a word per event. */
typedef struct uid_rows {
    uint64_t *mapped;  /* bit u: a trace-1 row has UID u */
    uint32_t *rank;    /* per bitmap word: mapped UIDs in the words before it */
    uint32_t *row;     /* by rank */
} uid_rows;

static int bit_get(const uint64_t *b, uint32_t u) { return (int)((b[u >> 6] >> (u & 63)) & 1); }
static void bit_set(uint64_t *b, uint32_t u) { b[u >> 6] |= 1ull << (u & 63); }
static void bit_clear(uint64_t *b, uint32_t u) { b[u >> 6] &= ~(1ull << (u & 63)); }

static uint32_t *uid_row_slot(const uid_rows *m, uint32_t u)
{
    uint64_t before = m->mapped[u >> 6] & ((1ull << (u & 63)) - 1);
    return &m->row[m->rank[u >> 6] + (uint32_t)__builtin_popcountll(before)];
}

static void uid_rows_build(uid_rows *m, const tl_fusion_diff_rows *in, size_t n_events)
{
    size_t words = n_events / 64 + 1;
    m->mapped = tl_xcalloc(words, sizeof *m->mapped);
    m->rank = tl_xmalloc(words * sizeof *m->rank);
    for (size_t r = 0; r < in->n; r++)
        if (in->source[r] == TL_FUSION_SRC_T1 && !isnan(in->lca[r]) && in->uid[r] < n_events)
            bit_set(m->mapped, in->uid[r]);
    uint32_t n = 0;
    for (size_t w = 0; w < words; w++) {
        m->rank[w] = n;
        n += (uint32_t)__builtin_popcountll(m->mapped[w]);
    }
    m->row = tl_xmalloc(((size_t)n + 1) * sizeof *m->row);
    for (size_t r = 0; r < in->n; r++)
        if (in->source[r] == TL_FUSION_SRC_T1 && !isnan(in->lca[r]) && in->uid[r] < n_events)
            *uid_row_slot(m, in->uid[r]) = (uint32_t)r;
}

static void uid_rows_free(uid_rows *m)
{
    free(m->mapped);
    free(m->rank);
    free(m->row);
}

void tl_fusion_diff_nodes(tl_fusion_diff *d, const tl_trace *t, const tl_fusion_diff_rows *in, size_t max_n1)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    if (max_n1 < 2) return;
    lca_groups lg;
    lca_groups_build(&lg, in);
    uid_rows m;
    uid_rows_build(&m, in, es->n);
    uint64_t *seen = tl_xcalloc(es->n / 64 + 1, sizeof *seen); /* the GPU events counted for the node at hand */
    uint32_t *hits = tl_xmalloc((max_n1 + 1) * sizeof *hits);
    uint32_t *groups = tl_xmalloc((max_n1 + 1) * sizeof *groups);
    for (size_t i = 0; i < es->n; i++) {
        uint32_t u = (uint32_t)i;
        uint8_t c = es->cat[u];
        if (tl_is_gpu_cat(c) || c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) continue;
        size_t n1 = 0;
        tl_span gs = tl_tree_gpu_span(tr, u);
        for (uint32_t k = gs.b; k < gs.e && n1 <= max_n1; k++) {
            uint32_t g = tr->gpus.v[k];
            if (!bit_get(m.mapped, g) || bit_get(seen, g)) continue;
            bit_set(seen, g);
            hits[n1++] = g;
        }
        for (size_t j = 0; j < n1; j++) bit_clear(seen, hits[j]);
        if (n1 < 2 || n1 > max_n1) continue;
        for (size_t j = 0; j < n1; j++) hits[j] = *uid_row_slot(&m, hits[j]); /* now their rows */
        /* the distinct LCA ids' trace-2 rows (an id without any adds none) */
        size_t ng = 0, n2 = 0;
        for (size_t j = 0; j < n1 && n2 < n1; j++) {
            uint32_t g = lg.group[hits[j]];
            if (g == NONE_GROUP) continue;
            int dup = 0;
            for (size_t q = 0; q < ng && !dup; q++) dup = groups[q] == g;
            if (dup) continue;
            groups[ng++] = g;
            n2 += lg.start[g + 1] - lg.start[g];
        }
        if (n2 >= n1) continue;
        /* ascending LCA id (distinct, never NaN) */
        for (size_t a = 1; a < ng; a++)
            for (size_t b = a; b > 0 && lg.lca[groups[b]] < lg.lca[groups[b - 1]]; b--) {
                uint32_t x = groups[b];
                groups[b] = groups[b - 1];
                groups[b - 1] = x;
            }
        tl_fusion_diff_node node = {.uid = u, .t1_first = d->t1_rows.n, .n1 = n1, .t2_first = d->t2_rows.n, .n2 = n2};
        for (size_t j = 0; j < n1; j++) TL_PUSH(d->t1_rows, hits[j]);
        for (size_t q = 0; q < ng; q++)
            for (size_t k = lg.start[groups[q]]; k < lg.start[groups[q] + 1]; k++) TL_PUSH(d->t2_rows, lg.rows[k]);
        TL_PUSH(d->nodes, node);
    }
    free(seen);
    free(hits);
    free(groups);
    uid_rows_free(&m);
    lca_groups_free(&lg);
}
