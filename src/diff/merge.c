/* merge.c — the merged tree (inference-and-comparative spec §2.2): the
 * merge of a pair of nodes, whose child lists are aligned in phases (list
 * collapse, positional match or Wagner-Fischer with disambiguation,
 * reconciliation of wrappers, canonicalisation of the leftovers) and merged in
 * turn, depth-first on an explicit stack (no recursion: the trees can be any
 * depth); and the paired top roots (cpu_root_nodes, _get_top_level_root).
 *
 * Owns: the nodes and child lists being built (in the merge context, handed
 * to tl_trace_diff by run) and the top-root overlay entries. */
#include "diff_internal.h"

#include <stdlib.h>
#include <string.h>

#include "../util/msort.h"

/* ============================================================== merge */

static uint32_t memo_find(const ctx *c, uint32_t a, uint32_t b)
{
    int s = a != NONE ? 0 : 1;
    uint32_t key = s == 0 ? a : b;
    for (uint32_t m = c->first_of[s][key]; m != UINT32_MAX; m = c->next_of[s].v[m]) {
        const tl_merged_node *n = &c->nodes.v[m];
        if (n->key1 == a && n->key2 == b) return m;
    }
    return UINT32_MAX;
}

static uint32_t new_node(ctx *c, uint32_t a, uint32_t b)
{
    uint32_t id = (uint32_t)c->nodes.n;
    tl_merged_node nd = {a, b, a, b, 0, 0, TL_MERGED_COMBINED};
    TL_PUSH(c->nodes, nd);
    for (int s = 0; s < 2; s++) {
        uint32_t key = s == 0 ? a : b;
        TL_PUSH(c->next_of[s], UINT32_MAX);
        if (key == NONE) continue;
        /* append to the chain of key (creation order) */
        uint32_t m = c->first_of[s][key];
        if (m == UINT32_MAX) c->first_of[s][key] = id;
        else {
            while (c->next_of[s].v[m] != UINT32_MAX) m = c->next_of[s].v[m];
            c->next_of[s].v[m] = id;
        }
    }
    return id;
}

/* A node being merged: its pair's children aligned, merged one at a time.
 * Everything it allocates lives in the arena above mk, released when it is
 * done, after its children's (the merge's stack discipline). */
typedef struct mframe {
    uint32_t id, u1, u2;
    amark mk;
    uint32_t *xy;  /* per aligned child: its pair (x, y) to merge, NONE absent */
    uint32_t *ids; /* per aligned child: its merged node, once made */
    size_t n, k;   /* children, the next to merge */
} mframe;

/* The merged node of the pair (a, b), not in the memo: made (its id in
 * creation order, as the recursion made it) and its children aligned into
 * *f; they are merged by tl_diff_merge and the node finished by merge_close. */
static void merge_open(ctx *c, uint32_t a, uint32_t b, arena *memo, mframe *f)
{
    uint32_t id = new_node(c, a, b);
    amark mk = tl_diff_amark_get(&c->ar);
    const side *s1 = &c->s[0], *s2 = &c->s[1];
    ulist c1, c2;
    tl_diff_children_with_missing(c, a, b, &c1, &c2);
    uint32_t u1 = a, u2 = b;

    /* Phase 1: list collapse */
    if (c1.n != c2.n) {
        ulist deep;
        if (c1.n == 1) {
            uint32_t r = tl_diff_collapse(c, s1, c1.v[0], &deep);
            if (deep.n) {
                u1 = r;
                c1 = deep;
            }
        } else if (c2.n == 1) {
            uint32_t r = tl_diff_collapse(c, s2, c2.v[0], &deep);
            if (deep.n) {
                u2 = r;
                c2 = deep;
            }
        }
    }

    /* Phase 2: alignment */
    oplist ops = tl_diff_align(c, &c1, &c2, memo);

    /* Phase 3: reconcile wrappers */
    int unmatched = 0;
    for (size_t k = 0; k < ops.n && !unmatched; k++) unmatched = ops.v[k].k != OP_MATCH;
    if (unmatched) {
        ulist r1, r2;
        if (tl_diff_reconcile(c, &ops, &c1, &c2, &r1, &r2)) {
            amap at1, at2;
            tl_diff_amap_init(&c->ar, &at1, r1.n);
            tl_diff_amap_init(&c->ar, &at2, r2.n);
            for (size_t i = 0; i < r1.n; i++) tl_diff_amap_put(&at1, r1.v[i], (uint32_t)i);
            for (size_t j = 0; j < r2.n; j++) tl_diff_amap_put(&at2, r2.v[j], (uint32_t)j);
            op *nv = tl_diff_aalloc(&c->ar, (r1.n + r2.n + 1) * sizeof *nv);
            size_t nn = 0;
            uint8_t *p1 = tl_diff_aalloc(&c->ar, r1.n + 1), *p2 = tl_diff_aalloc(&c->ar, r2.n + 1);
            memset(p1, 0, r1.n + 1);
            memset(p2, 0, r2.n + 1);
            for (size_t k = 0; k < ops.n; k++) {
                if (ops.v[k].k != OP_MATCH) continue;
                uint32_t ri = tl_diff_amap_get(&at1, c1.v[ops.v[k].i]), rj = tl_diff_amap_get(&at2, c2.v[ops.v[k].j]);
                if (ri == UINT32_MAX || rj == UINT32_MAX) continue;
                nv[nn++] = (op){ri, rj, OP_MATCH};
                p1[ri] = p2[rj] = 1;
            }
            ulist f1 = {tl_diff_aalloc(&c->ar, (r1.n + 1) * sizeof(uint32_t)), 0}, f2 = {tl_diff_aalloc(&c->ar, (r2.n + 1) * sizeof(uint32_t)), 0};
            uint32_t *fi = tl_diff_aalloc(&c->ar, (r1.n + 1) * sizeof *fi), *fj = tl_diff_aalloc(&c->ar, (r2.n + 1) * sizeof *fj);
            for (size_t i = 0; i < r1.n; i++)
                if (!p1[i]) {
                    fi[f1.n] = (uint32_t)i;
                    f1.v[f1.n++] = r1.v[i];
                }
            for (size_t j = 0; j < r2.n; j++)
                if (!p2[j]) {
                    fj[f2.n] = (uint32_t)j;
                    f2.v[f2.n++] = r2.v[j];
                }
            if (f1.n && f2.n) {
                oplist fo = tl_diff_align(c, &f1, &f2, memo);
                for (size_t k = 0; k < fo.n; k++) {
                    const op *o = &fo.v[k];
                    if (o->k == OP_MATCH) nv[nn++] = (op){fi[o->i], fj[o->j], OP_MATCH};
                    else if (o->k == OP_DELETE) nv[nn++] = (op){fi[o->i], NONE, OP_DELETE};
                    else nv[nn++] = (op){NONE, fj[o->j], OP_INSERT};
                }
            } else {
                for (size_t i = 0; i < f1.n; i++) nv[nn++] = (op){fi[i], NONE, OP_DELETE};
                for (size_t j = 0; j < f2.n; j++) nv[nn++] = (op){NONE, fj[j], OP_INSERT};
            }
            ops.v = nv;
            ops.n = nn;
            c1 = r1;
            c2 = r2;
        }
    }

    /* Phase 4: canonicalise the leftovers (collapse, WF, then WF on stripped names) */
    size_t nu1 = 0, nu2 = 0;
    for (size_t k = 0; k < ops.n; k++) {
        if (ops.v[k].k == OP_DELETE) nu1++;
        if (ops.v[k].k == OP_INSERT) nu2++;
    }
    if (nu1 && nu2) {
        uint32_t *ui = tl_diff_aalloc(&c->ar, nu1 * sizeof *ui), *uj = tl_diff_aalloc(&c->ar, nu2 * sizeof *uj);
        ulist k1 = {tl_diff_aalloc(&c->ar, nu1 * sizeof(uint32_t)), 0}, k2 = {tl_diff_aalloc(&c->ar, nu2 * sizeof(uint32_t)), 0};
        for (size_t k = 0; k < ops.n; k++) {
            ulist dummy;
            if (ops.v[k].k == OP_DELETE) {
                ui[k1.n] = ops.v[k].i;
                k1.v[k1.n++] = tl_diff_collapse(c, s1, c1.v[ops.v[k].i], &dummy);
            } else if (ops.v[k].k == OP_INSERT) {
                uj[k2.n] = ops.v[k].j;
                k2.v[k2.n++] = tl_diff_collapse(c, s2, c2.v[ops.v[k].j], &dummy);
            }
        }
        oplist p1 = tl_diff_aligned_wf(c, &k1, &k2, 0, memo);
        size_t sd = 0, si = 0;
        for (size_t k = 0; k < p1.n; k++) {
            if (p1.v[k].k == OP_DELETE) sd++;
            if (p1.v[k].k == OP_INSERT) si++;
        }
        oplist co = p1;
        if (sd && si) {
            uint32_t *ci = tl_diff_aalloc(&c->ar, sd * sizeof *ci), *cj = tl_diff_aalloc(&c->ar, si * sizeof *cj);
            ulist l1 = {tl_diff_aalloc(&c->ar, sd * sizeof(uint32_t)), 0}, l2 = {tl_diff_aalloc(&c->ar, si * sizeof(uint32_t)), 0};
            for (size_t k = 0; k < p1.n; k++) {
                if (p1.v[k].k == OP_DELETE) {
                    ci[l1.n] = p1.v[k].i;
                    l1.v[l1.n++] = k1.v[p1.v[k].i];
                } else if (p1.v[k].k == OP_INSERT) {
                    cj[l2.n] = p1.v[k].j;
                    l2.v[l2.n++] = k2.v[p1.v[k].j];
                }
            }
            oplist p2 = tl_diff_aligned_wf(c, &l1, &l2, 1, memo);
            co.v = tl_diff_aalloc(&c->ar, (p1.n + p2.n + 1) * sizeof(op));
            co.n = 0;
            for (size_t k = 0; k < p1.n; k++)
                if (p1.v[k].k == OP_MATCH) co.v[co.n++] = p1.v[k];
            for (size_t k = 0; k < p2.n; k++) {
                const op *o = &p2.v[k];
                if (o->k == OP_MATCH) co.v[co.n++] = (op){ci[o->i], cj[o->j], OP_MATCH};
                else if (o->k == OP_DELETE) co.v[co.n++] = (op){ci[o->i], NONE, OP_DELETE};
                else co.v[co.n++] = (op){NONE, cj[o->j], OP_INSERT};
            }
        }
        op *nv = tl_diff_aalloc(&c->ar, (ops.n + co.n + 1) * sizeof *nv);
        size_t nn = 0;
        for (size_t k = 0; k < ops.n; k++)
            if (ops.v[k].k == OP_MATCH) nv[nn++] = ops.v[k];
        for (size_t k = 0; k < co.n; k++) {
            const op *o = &co.v[k];
            if (o->k == OP_MATCH) {
                c1.v[ui[o->i]] = k1.v[o->i];
                c2.v[uj[o->j]] = k2.v[o->j];
                nv[nn++] = (op){ui[o->i], uj[o->j], OP_MATCH};
            } else if (o->k == OP_DELETE) {
                c1.v[ui[o->i]] = k1.v[o->i];
                nv[nn++] = (op){ui[o->i], NONE, OP_DELETE};
            } else {
                c2.v[uj[o->j]] = k2.v[o->j];
                nv[nn++] = (op){NONE, uj[o->j], OP_INSERT};
            }
        }
        ops.v = nv;
        ops.n = nn;
    }

    /* the children to merge, in order */
    f->id = id;
    f->u1 = u1;
    f->u2 = u2;
    f->mk = mk;
    f->n = ops.n;
    f->k = 0;
    f->ids = tl_diff_aalloc(&c->ar, (ops.n + 1) * sizeof *f->ids);
    f->xy = tl_diff_aalloc(&c->ar, (2 * ops.n + 1) * sizeof *f->xy);
    for (size_t k = 0; k < ops.n; k++) {
        const op *o = &ops.v[k];
        f->xy[2 * k] = o->k == OP_INSERT ? NONE : c1.v[o->i];
        f->xy[2 * k + 1] = o->k == OP_DELETE ? NONE : c2.v[o->j];
    }
}

/* f's children are merged: its node gets them, its arena space is released. */
static uint32_t merge_close(ctx *c, const mframe *f)
{
    tl_merged_node *nd = &c->nodes.v[f->id];
    nd->uid1 = f->u1;
    nd->uid2 = f->u2;
    nd->type = f->u1 != NONE && f->u2 != NONE ? TL_MERGED_COMBINED : (f->u1 != NONE ? TL_MERGED_TRACE1 : TL_MERGED_TRACE2);
    nd->kid_off = (uint32_t)c->kids.n;
    nd->nkids = (uint32_t)f->n;
    for (size_t k = 0; k < f->n; k++) TL_PUSH(c->kids, f->ids[k]);
    tl_diff_arelease(&c->ar, f->mk);
    return f->id;
}

/* The merge of (a, b) with its subtree, depth-first in child order as the
 * reference's recursion, on an explicit stack of frames: the trees can be
 * any depth (a chain of 200,000 nested ops overflowed the C stack). */
uint32_t tl_diff_merge(ctx *c, uint32_t a, uint32_t b, arena *memo)
{
    uint32_t hit = memo_find(c, a, b);
    if (hit != UINT32_MAX) return hit;
    TL_VEC(mframe) st = {0};
    TL_GROW(st.v, st.cap, 1);
    merge_open(c, a, b, memo, &st.v[st.n++]);
    uint32_t id = UINT32_MAX;
    while (st.n) {
        mframe *f = &st.v[st.n - 1];
        if (f->k < f->n) {
            uint32_t x = f->xy[2 * f->k], y = f->xy[2 * f->k + 1];
            hit = memo_find(c, x, y);
            if (hit != UINT32_MAX) {
                f->ids[f->k++] = hit;
                continue;
            }
            TL_GROW(st.v, st.cap, st.n + 1); /* f is not used after */
            merge_open(c, x, y, memo, &st.v[st.n++]);
            continue;
        }
        id = merge_close(c, f);
        st.n--;
        if (st.n) {
            mframe *p = &st.v[st.n - 1];
            p->ids[p->k++] = id;
        }
    }
    free(st.v);
    return id;
}

/* ============================================================== roots */

static int root_by_ts(void *ctx, size_t a, size_t b)
{
    const tl_event_store *es = ctx;
    int64_t x = (es->flags[a] & TL_F_TS) ? es->ts[a] : 0, y = (es->flags[b] & TL_F_TS) ? es->ts[b] : 0;
    return (x > y) - (x < y);
}

/* cpu_root_nodes: cpu_ops in the tree without a cpu_op above, in (ts, UID) order. */
size_t tl_diff_cpu_roots(const tl_trace *t, size_t **out)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    /* 0 unknown, 1 has a cpu_op ancestor, 2 has none */
    uint8_t *st = tl_xcalloc(es->n + 1, 1);
    TL_VEC(uint32_t) path = {0};
    TL_VEC(size_t) roots = {0};
    for (size_t u = 0; u < es->n; u++) {
        if (es->cat[u] != TL_CAT_CPU_OP || tr->in_tree[u] != 1) continue;
        path.n = 0;
        uint32_t p = tr->parent[u];
        uint8_t res = 2;
        while (p != NONE) {
            if (es->cat[p] == TL_CAT_CPU_OP) {
                res = 1;
                break;
            }
            if (st[p]) {
                res = st[p];
                break;
            }
            TL_PUSH(path, p);
            p = tr->parent[p];
        }
        for (size_t k = 0; k < path.n; k++) st[path.v[k]] = res;
        if (res == 2) TL_PUSH(roots, u);
    }
    free(path.v);
    free(st);
    tl_msort(roots.v, roots.n, root_by_ts, (void *)es);
    *out = roots.v;
    return roots.n;
}

/* _get_top_level_root, with the re-parenting recorded in the overlay. The
 * topmost ancestor of every event on the way up is memoised in top[]
 * (UINT32_MAX: not known; the overlay only shortcuts a path to the same
 * top), so many roots under one deep stack cost one walk. */
uint32_t tl_diff_top_root(side *s, uint32_t start, uint32_t *top)
{
    uint32_t root = start;
    for (;;) {
        if (top[root] != UINT32_MAX) {
            root = top[root];
            break;
        }
        uint32_t p = tl_diff_parent_of(s, root);
        if (p == NONE) break;
        root = p;
    }
    for (uint32_t x = start; x != root && top[x] != root; x = tl_diff_parent_of(s, x)) top[x] = root;
    uint32_t cur = root;
    for (;;) {
        size_t n;
        const uint32_t *ch = tl_diff_kids_of(s, cur, &n);
        if (n != 1) break;
        uint32_t x = ch[0];
        uint8_t cat = s->es->cat[x];
        if ((cat == TL_CAT_CPU_OP || cat == TL_CAT_CUDA_RUNTIME || cat == TL_CAT_CUDA_DRIVER) && !s->graph[s->es->name[x]])
            break;
        cur = x;
    }
    if (cur != root) {
        tl_map_put(&s->ov->kids_of, root, 0, cur);
        tl_map_put(&s->ov->parent_of, cur, 0, root);
        s->ov->kids_bits[root >> 6] |= 1ull << (root & 63);
        s->ov->parent_bits[cur >> 6] |= 1ull << (cur & 63);
    }
    return cur;
}
