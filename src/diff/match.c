/* match.c — how two child lists are matched (inference-and-comparative spec
 * §2.2): name normalisation (_normalize_name_for_comparison), the
 * Wagner-Fischer edit script with its memo keyed by the two name sequences
 * (repeated layers give the same lists again and again), disambiguation of
 * repeated names by BFS signatures, and the reconciliation of wrappers.
 *
 * Owns: the memo's table (in the merge context) and its entries (in the memo
 * arena); the edit scripts it returns live in the context's arena. */
#include "diff_internal.h"

#include <stdlib.h>
#include <string.h>

/* ======================================================= normalisation */

static int is_hex(int c) { return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'f'); }
/* Python's \s on the ASCII range (str.isspace) */
static int is_space(int c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

void tl_diff_normalize_name(const char *s, size_t n, int strip, tl_sbuf *out)
{
    tl_sbuf a, b;
    tl_sb_init(&a);
    tl_sb_init(&b);
    /* 0x[0-9a-fA-F]+ -> 0xXXXX */
    for (size_t i = 0; i < n;) {
        if (s[i] == '0' && i + 2 < n + 0 && s[i + 1] == 'x' && is_hex((unsigned char)s[i + 2])) {
            tl_sb_puts(&a, "0xXXXX");
            i += 2;
            while (i < n && is_hex((unsigned char)s[i])) i++;
        } else {
            tl_sb_putc(&a, s[i++]);
        }
    }
    /* \.py\(\d+\): -> .py: */
    const char *p = a.s ? a.s : "";
    size_t m = a.len;
    for (size_t i = 0; i < m;) {
        if (i + 4 < m && !memcmp(p + i, ".py(", 4) && tl_diff_is_digit((unsigned char)p[i + 4])) {
            size_t k = i + 4;
            while (k < m && tl_diff_is_digit((unsigned char)p[k])) k++;
            if (k + 1 < m && p[k] == ')' && p[k + 1] == ':') {
                tl_sb_puts(&b, ".py:");
                i = k + 2;
                continue;
            }
        }
        tl_sb_putc(&b, p[i++]);
    }
    p = b.s ? b.s : "";
    m = b.len;
    tl_sb_clear(&a);
    if (strip) {
        /* :\s+\S+$ removed ($: the end, or before a final newline) */
        size_t end = m, cut = m;
        int nl = m && p[m - 1] == '\n';
        for (size_t i = 0; i < m && cut == m; i++) {
            if (p[i] != ':') continue;
            size_t k = i + 1;
            while (k < m && is_space((unsigned char)p[k])) k++;
            if (k == i + 1) continue;
            size_t e = k;
            while (e < m && !is_space((unsigned char)p[e])) e++;
            if (e == k) continue;
            if (e == m || (nl && e == m - 1)) {
                cut = i;
                end = e;
            }
        }
        tl_sb_putn(&a, p, cut);
        if (cut < m) tl_sb_putn(&a, p + end, m - end);
        /* ^.*\/([^/]+\.py)$ -> the file name */
        const char *q = a.s ? a.s : "";
        size_t qm = a.len, slash = SIZE_MAX;
        for (size_t i = 0; i < qm; i++)
            if (q[i] == '/') slash = i;
        int done = 0;
        if (slash != SIZE_MAX && !memchr(q, '\n', slash)) {
            size_t tail = slash + 1, tend = qm;
            int has_nl = qm && q[qm - 1] == '\n';
            /* $ at the end, else before a final newline */
            for (int pass = 0; pass < 2 && !done; pass++) {
                size_t e = pass == 0 ? tend : (has_nl ? tend - 1 : SIZE_MAX);
                if (e == SIZE_MAX || e < tail + 4) continue;
                if (memcmp(q + e - 3, ".py", 3) != 0) continue;
                tl_sb_clear(&b);
                tl_sb_putn(&b, q + tail, qm - tail);
                done = 1;
            }
        }
        if (!done) {
            tl_sb_clear(&b);
            tl_sb_putn(&b, q, qm);
        }
        p = b.s ? b.s : "";
        m = b.len;
    }
    if ((m == 21 && !memcmp(p, "hipModuleLaunchKernel", 21)) || (m == 14 && !memcmp(p, "cuLaunchKernel", 14)))
        tl_sb_puts(out, "__kernel_launch__");
    else
        tl_sb_putn(out, p, m);
    tl_sb_free(&a);
    tl_sb_free(&b);
}

/* ====================================================== Wagner-Fischer */

/* The edit script of names a (m) and b (n): dp with unit costs; backtrack
 * from (m, n): equal names -> match, else delete when i > 0 and (j == 0 or
 * dp[i][j] == dp[i-1][j] + 1), else insert. */
static oplist wf_compute(ctx *c, const uint32_t *a, size_t m, const uint32_t *b, size_t n, arena *out)
{
    size_t k = 0; /* the common suffix is matched by the first backtrack steps */
    while (k < m && k < n && a[m - 1 - k] == b[n - 1 - k]) k++;
    size_t M = m - k, N = n - k;
    oplist r = {tl_diff_aalloc(out, (m + n + 1) * sizeof(op)), 0};
    if (M && N) {
        size_t need = (M * N + 7) / 8;
        if (need > c->bits_cap) {
            free(c->bits);
            c->bits = tl_xmalloc(need);
            c->bits_cap = need;
        }
        memset(c->bits, 0, need);
        amark mk = tl_diff_amark_get(&c->ar);
        uint32_t *prev = tl_diff_aalloc(&c->ar, (N + 1) * sizeof *prev), *cur = tl_diff_aalloc(&c->ar, (N + 1) * sizeof *cur);
        for (size_t j = 0; j <= N; j++) prev[j] = (uint32_t)j;
        for (size_t i = 1; i <= M; i++) {
            cur[0] = (uint32_t)i;
            uint32_t ai = a[i - 1];
            size_t row = (i - 1) * N;
            for (size_t j = 1; j <= N; j++) {
                uint32_t del = prev[j] + 1, ins = cur[j - 1] + 1, sub = prev[j - 1] + (ai == b[j - 1] ? 0 : 1);
                uint32_t v = del < ins ? del : ins;
                if (sub < v) v = sub;
                cur[j] = v;
                if (v == del) {
                    size_t bit = row + (j - 1);
                    c->bits[bit >> 3] |= (uint8_t)(1u << (bit & 7));
                }
            }
            uint32_t *t = prev;
            prev = cur;
            cur = t;
        }
        tl_diff_arelease(&c->ar, mk);
    }
    /* backtrack (reversed into r) */
    size_t i = M, j = N;
    op *rev = r.v;
    size_t nr = 0;
    while (i > 0 || j > 0) {
        if (i > 0 && j > 0 && a[i - 1] == b[j - 1]) {
            rev[nr++] = (op){(uint32_t)(i - 1), (uint32_t)(j - 1), OP_MATCH};
            i--;
            j--;
        } else if (i > 0 && (j == 0 || ((c->bits[((i - 1) * N + (j - 1)) >> 3] >> (((i - 1) * N + (j - 1)) & 7)) & 1))) {
            rev[nr++] = (op){(uint32_t)(i - 1), NONE, OP_DELETE};
            i--;
        } else {
            rev[nr++] = (op){NONE, (uint32_t)(j - 1), OP_INSERT};
            j--;
        }
    }
    for (size_t x = 0, y = nr; x + 1 < y; x++, y--) {
        op t = rev[x];
        rev[x] = rev[y - 1];
        rev[y - 1] = t;
    }
    for (size_t s = 0; s < k; s++) rev[nr++] = (op){(uint32_t)(M + s), (uint32_t)(N + s), OP_MATCH};
    r.n = nr;
    return r;
}

static oplist wf(ctx *c, const side *s1, const uint32_t *u1, size_t m, const side *s2, const uint32_t *u2, size_t n,
                 int strip, arena *memo_ar)
{
    amark mk = tl_diff_amark_get(&c->ar);
    uint32_t *a = tl_diff_aalloc(&c->ar, (m + 1) * sizeof *a), *b = tl_diff_aalloc(&c->ar, (n + 1) * sizeof *b);
    uint64_t h = tl_diff_mix64(0x12345u + (uint64_t)strip, m);
    for (size_t i = 0; i < m; i++) {
        a[i] = strip ? s1->strip[s1->es->name[u1[i]]] : tl_diff_nname(s1, u1[i]);
        h = tl_diff_mix64(h, a[i]);
    }
    h = tl_diff_mix64(h, 0xabcdefu + n);
    for (size_t j = 0; j < n; j++) {
        b[j] = strip ? s2->strip[s2->es->name[u2[j]]] : tl_diff_nname(s2, u2[j]);
        h = tl_diff_mix64(h, b[j]);
    }
    c->d->wf_runs++;
    if (c->wf_cap) {
        size_t i = h & (c->wf_cap - 1);
        while (c->wf[i].names) {
            wf_entry *e = &c->wf[i];
            if (e->h == h && e->n1 == m && e->n2 == n && e->strip == strip && !memcmp(e->names, a, m * sizeof *a) &&
                !memcmp(e->names + m, b, n * sizeof *b)) {
                c->d->wf_memo_hits++;
                tl_diff_arelease(&c->ar, mk);
                oplist r = {tl_diff_aalloc(&c->ar, (e->nops + 1) * sizeof(op)), e->nops};
                memcpy(r.v, e->ops, e->nops * sizeof(op));
                return r;
            }
            i = (i + 1) & (c->wf_cap - 1);
        }
    }
    oplist mem = wf_compute(c, a, m, b, n, memo_ar);
    /* store */
    if (2 * (c->wf_n + 1) > c->wf_cap) {
        size_t ncap = c->wf_cap ? 2 * c->wf_cap : 1024;
        wf_entry *nv = tl_xcalloc(ncap, sizeof *nv);
        for (size_t i = 0; i < c->wf_cap; i++) {
            if (!c->wf[i].names) continue;
            size_t k = c->wf[i].h & (ncap - 1);
            while (nv[k].names) k = (k + 1) & (ncap - 1);
            nv[k] = c->wf[i];
        }
        free(c->wf);
        c->wf = nv;
        c->wf_cap = ncap;
    }
    uint32_t *names = tl_diff_aalloc(memo_ar, (m + n + 1) * sizeof *names);
    memcpy(names, a, m * sizeof *a);
    memcpy(names + m, b, n * sizeof *b);
    size_t i = h & (c->wf_cap - 1);
    while (c->wf[i].names) i = (i + 1) & (c->wf_cap - 1);
    c->wf[i] = (wf_entry){h, names, m, n, mem.v, mem.n, (uint8_t)strip};
    c->wf_n++;
    tl_diff_arelease(&c->ar, mk);
    oplist r = {tl_diff_aalloc(&c->ar, (mem.n + 1) * sizeof(op)), mem.n};
    memcpy(r.v, mem.v, mem.n * sizeof(op));
    return r;
}

/* ====================================================== disambiguation */

/* BFS signature of u: per level (1..4) the sorted normalized names of the
 * GPU-path children of the frontier; stops after an empty level. */
typedef struct sig {
    uint32_t *names; /* all levels' names, level by level */
    uint32_t off[5]; /* level l: names[off[l] .. off[l+1]) */
    uint32_t nlev;
    uint64_t h;
} sig;

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

static void sig_of(ctx *c, const side *s, uint32_t u, sig *g)
{
    TL_VEC(uint32_t) frontier = {0}, next = {0}, names = {0};
    TL_PUSH(frontier, u);
    g->nlev = 0;
    g->off[0] = 0;
    for (int d = 0; d < 4; d++) {
        next.n = 0;
        size_t start = names.n;
        for (size_t f = 0; f < frontier.n; f++) {
            size_t n;
            const uint32_t *ch = tl_diff_kids_of(s, frontier.v[f], &n);
            for (size_t i = 0; i < n; i++)
                if (tl_diff_is_gpu_path(s, ch[i])) {
                    TL_PUSH(next, ch[i]);
                    TL_PUSH(names, tl_diff_nname(s, ch[i]));
                }
        }
        if (names.n - start > 1) qsort(names.v + start, names.n - start, sizeof *names.v, cmp_u32);
        g->nlev++;
        g->off[g->nlev] = (uint32_t)names.n;
        if (!next.n) break;
        uint32_t *t = frontier.v;
        size_t tc = frontier.cap;
        frontier.v = next.v;
        frontier.n = next.n;
        frontier.cap = next.cap;
        next.v = t;
        next.cap = tc;
    }
    g->names = tl_diff_aalloc(&c->ar, (names.n + 1) * sizeof *g->names);
    if (names.n) memcpy(g->names, names.v, names.n * sizeof *names.v);
    uint64_t h = tl_diff_mix64(0x5151u, g->nlev);
    for (uint32_t l = 0; l < g->nlev; l++) {
        h = tl_diff_mix64(h, g->off[l + 1] - g->off[l]);
        for (uint32_t k = g->off[l]; k < g->off[l + 1]; k++) h = tl_diff_mix64(h, g->names[k]);
    }
    g->h = h;
    free(frontier.v);
    free(next.v);
    free(names.v);
}

static int level_eq(const sig *a, uint32_t la, const sig *b, uint32_t lb)
{
    uint32_t na = la < a->nlev ? a->off[la + 1] - a->off[la] : 0;
    uint32_t nb = lb < b->nlev ? b->off[lb + 1] - b->off[lb] : 0;
    if (na != nb) return 0;
    return !na || !memcmp(a->names + a->off[la], b->names + b->off[lb], na * sizeof(uint32_t));
}

static int sig_eq(const sig *a, const sig *b)
{
    if (a->h != b->h || a->nlev != b->nlev) return 0;
    for (uint32_t l = 0; l < a->nlev; l++)
        if (!level_eq(a, l, b, l)) return 0;
    return 1;
}

/* (levels equal before the first difference, multiset overlap there),
 * packed so that a larger value is a better match. */
static uint64_t match_depth(const sig *a, const sig *b)
{
    uint32_t maxd = a->nlev > b->nlev ? a->nlev : b->nlev;
    for (uint32_t d = 0; d < maxd; d++) {
        if (level_eq(a, d, b, d)) continue;
        uint64_t ov = 0;
        if (d < a->nlev && d < b->nlev) {
            const uint32_t *x = a->names + a->off[d], *y = b->names + b->off[d];
            uint32_t nx = a->off[d + 1] - a->off[d], ny = b->off[d + 1] - b->off[d], i = 0, j = 0;
            while (i < nx && j < ny) {
                if (x[i] == y[j]) {
                    ov++;
                    i++;
                    j++;
                } else if (x[i] < y[j]) i++;
                else j++;
            }
        }
        return ((uint64_t)d << 40) | ov;
    }
    return (uint64_t)maxd << 40;
}

/* Classes of equal signatures: cl[p] the class of sg[p], rep[k] the first
 * member of class k; returns the number of classes. */
static size_t classify(ctx *c, const sig *sg, size_t n, uint32_t *cl, uint32_t *rep)
{
    amark m = tl_diff_amark_get(&c->ar);
    amap first; /* 32 bits of the hash -> first class with it */
    tl_diff_amap_init(&c->ar, &first, n);
    uint32_t *next = tl_diff_aalloc(&c->ar, (n + 1) * sizeof *next); /* class -> next class with the same key */
    size_t k = 0;
    for (size_t p = 0; p < n; p++) {
        uint32_t key = (uint32_t)(sg[p].h ^ (sg[p].h >> 32));
        if (key == UINT32_MAX) key = 0;
        uint32_t r = tl_diff_amap_get(&first, key), last = UINT32_MAX;
        while (r != UINT32_MAX && !sig_eq(&sg[rep[r]], &sg[p])) {
            last = r;
            r = next[r];
        }
        if (r == UINT32_MAX) {
            r = (uint32_t)k++;
            rep[r] = (uint32_t)p;
            next[r] = UINT32_MAX;
            if (last == UINT32_MAX) tl_diff_amap_put(&first, key, r);
            else next[last] = r;
        }
        cl[p] = r;
    }
    tl_diff_arelease(&c->ar, m);
    return k;
}

static int cmp_u64_desc(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a < b) - (a > b);
}

static int cmp_op_match(const void *x, const void *y)
{
    const op *a = x, *b = y;
    if (a->i != b->i) return (a->i > b->i) - (a->i < b->i);
    return (a->j > b->j) - (a->j < b->j);
}

/* _disambiguate_same_name_candidates: for every name on both sides, in at
 * least one match and repeated on one side, re-pair its nodes greedily by
 * BFS-signature similarity (ties: WF's pairs, then by position). */
static oplist disambiguate(ctx *c, oplist ops, const ulist *c1, const ulist *c2)
{
    const side *s1 = &c->s[0], *s2 = &c->s[1];
    if (!ops.n) return ops;
    amark mk = tl_diff_amark_get(&c->ar);
    /* groups by normalized name */
    amap gix;
    tl_diff_amap_init(&c->ar, &gix, ops.n);
    typedef struct grp {
        uint32_t name, n1, n2, matched, f1, f2; /* f: first index in the chains */
    } grp;
    grp *g = tl_diff_aalloc(&c->ar, (ops.n * 2 + 1) * sizeof *g);
    size_t ng = 0;
    uint32_t *next1 = tl_diff_aalloc(&c->ar, (c1->n + 1) * sizeof *next1), *next2 = tl_diff_aalloc(&c->ar, (c2->n + 1) * sizeof *next2);
    uint32_t *last1 = tl_diff_aalloc(&c->ar, (ops.n * 2 + 1) * sizeof *last1), *last2 = tl_diff_aalloc(&c->ar, (ops.n * 2 + 1) * sizeof *last2);
    uint32_t *wfj = tl_diff_aalloc(&c->ar, (c1->n + 1) * sizeof *wfj);
    for (size_t i = 0; i < c1->n; i++) wfj[i] = NONE;
    for (size_t k = 0; k < ops.n; k++) {
        const op *o = &ops.v[k];
        for (int side_ = 0; side_ < 2; side_++) {
            uint32_t idx = side_ == 0 ? o->i : o->j;
            if (idx == NONE) continue;
            uint32_t name = side_ == 0 ? tl_diff_nname(s1, c1->v[idx]) : tl_diff_nname(s2, c2->v[idx]);
            uint32_t gi = tl_diff_amap_get(&gix, name);
            if (gi == UINT32_MAX) {
                gi = (uint32_t)ng++;
                g[gi] = (grp){name, 0, 0, 0, NONE, NONE};
                tl_diff_amap_put(&gix, name, gi);
            }
            if (o->k == OP_MATCH) g[gi].matched = 1;
            if (side_ == 0) {
                if (g[gi].f1 == NONE) g[gi].f1 = idx;
                else next1[last1[gi]] = idx;
                next1[idx] = NONE;
                last1[gi] = idx;
                g[gi].n1++;
            } else {
                if (g[gi].f2 == NONE) g[gi].f2 = idx;
                else next2[last2[gi]] = idx;
                next2[idx] = NONE;
                last2[gi] = idx;
                g[gi].n2++;
            }
        }
        if (o->k == OP_MATCH) wfj[o->i] = o->j;
    }
    uint8_t *h1 = tl_diff_aalloc(&c->ar, c1->n + 1), *h2 = tl_diff_aalloc(&c->ar, c2->n + 1);
    memset(h1, 0, c1->n + 1);
    memset(h2, 0, c2->n + 1);
    uint8_t *as1 = tl_diff_aalloc(&c->ar, c1->n + 1), *as2 = tl_diff_aalloc(&c->ar, c2->n + 1);
    memset(as1, 0, c1->n + 1);
    memset(as2, 0, c2->n + 1);
    op *newm = tl_diff_aalloc(&c->ar, (c1->n + 1) * sizeof *newm);
    size_t nnew = 0;
    int any = 0, outside = 0;
    for (size_t gi = 0; gi < ng; gi++) {
        grp *G = &g[gi];
        if (!G->n1 || !G->n2 || !G->matched || (G->n1 < 2 && G->n2 < 2)) continue;
        any = 1;
        c->d->disambiguations++;
        /* indices ascending */
        uint32_t *i1 = tl_diff_aalloc(&c->ar, G->n1 * sizeof *i1), *i2 = tl_diff_aalloc(&c->ar, G->n2 * sizeof *i2);
        size_t n1 = 0, n2 = 0;
        for (uint32_t x = G->f1; x != NONE; x = next1[x]) i1[n1++] = x;
        for (uint32_t x = G->f2; x != NONE; x = next2[x]) i2[n2++] = x;
        qsort(i1, n1, sizeof *i1, cmp_u32);
        qsort(i2, n2, sizeof *i2, cmp_u32);
        for (size_t p = 0; p < n1; p++) h1[i1[p]] = 1;
        for (size_t q = 0; q < n2; q++) h2[i2[q]] = 1;
        /* signatures, grouped into classes of equal signatures */
        sig *sg1 = tl_diff_aalloc(&c->ar, n1 * sizeof *sg1), *sg2 = tl_diff_aalloc(&c->ar, n2 * sizeof *sg2);
        uint32_t *cl1 = tl_diff_aalloc(&c->ar, n1 * sizeof *cl1), *cl2 = tl_diff_aalloc(&c->ar, n2 * sizeof *cl2);
        uint32_t *rep1 = tl_diff_aalloc(&c->ar, n1 * sizeof *rep1), *rep2 = tl_diff_aalloc(&c->ar, n2 * sizeof *rep2);
        for (size_t p = 0; p < n1; p++) sig_of(c, s1, c1->v[i1[p]], &sg1[p]);
        for (size_t q = 0; q < n2; q++) sig_of(c, s2, c2->v[i2[q]], &sg2[q]);
        size_t k1 = classify(c, sg1, n1, cl1, rep1), k2 = classify(c, sg2, n2, cl2, rep2);
        size_t want = n1 < n2 ? n1 : n2, got = 0;
        if (k1 * k2 > ((size_t)1 << 22)) {
            /* millions of distinct signature pairs under one name: WF's pairing is kept */
            for (size_t p = 0; p < n1 && got < want; p++) {
                uint32_t i = i1[p], j = wfj[i];
                if (j == NONE || !h2[j] || as2[j]) continue;
                as1[i] = as2[j] = 1;
                newm[nnew++] = (op){i, j, OP_MATCH};
                got++;
            }
            continue;
        }
        uint64_t *score = tl_diff_aalloc(&c->ar, k1 * k2 * sizeof *score), *distinct = tl_diff_aalloc(&c->ar, k1 * k2 * sizeof *distinct);
        for (size_t x = 0; x < k1; x++)
            for (size_t y = 0; y < k2; y++) distinct[x * k2 + y] = score[x * k2 + y] = match_depth(&sg1[rep1[x]], &sg2[rep2[y]]);
        size_t nd = k1 * k2;
        qsort(distinct, nd, sizeof *distinct, cmp_u64_desc);
        size_t w = 0;
        for (size_t x = 0; x < nd; x++)
            if (!w || distinct[w - 1] != distinct[x]) distinct[w++] = distinct[x];
        nd = w;
        /* position of an index in i2 (for its class) */
        amap pos2;
        tl_diff_amap_init(&c->ar, &pos2, n2);
        for (size_t q = 0; q < n2; q++) tl_diff_amap_put(&pos2, i2[q], (uint32_t)q);
        for (size_t sd = 0; sd < nd && got < want; sd++) {
            uint64_t sv = distinct[sd];
            /* WF's own pairs first */
            for (size_t p = 0; p < n1 && got < want; p++) {
                uint32_t i = i1[p], j = wfj[i];
                if (j == NONE || !h2[j] || as1[i] || as2[j]) continue;
                uint32_t q = tl_diff_amap_get(&pos2, j);
                if (q == UINT32_MAX || score[cl1[p] * k2 + cl2[q]] != sv) continue;
                as1[i] = as2[j] = 1;
                newm[nnew++] = (op){i, j, OP_MATCH};
                got++;
            }
            /* then by position */
            for (size_t p = 0; p < n1 && got < want; p++) {
                uint32_t i = i1[p];
                if (as1[i]) continue;
                for (size_t q = 0; q < n2; q++) {
                    uint32_t j = i2[q];
                    if (as2[j] || score[cl1[p] * k2 + cl2[q]] != sv) continue;
                    as1[i] = as2[j] = 1;
                    newm[nnew++] = (op){i, j, OP_MATCH};
                    got++;
                    break;
                }
            }
        }
    }
    if (!any) {
        tl_diff_arelease(&c->ar, mk);
        return ops;
    }
    for (size_t k = 0; k < nnew; k++)
        if (wfj[newm[k].i] != newm[k].j) outside = 1;
    if (!outside) {
        tl_diff_arelease(&c->ar, mk);
        return ops;
    }
    /* kept ops, then the new matches, then the leftovers (by index) */
    qsort(newm, nnew, sizeof *newm, cmp_op_match);
    op *fin = tl_diff_aalloc(&c->ar, (ops.n + c1->n + c2->n + 1) * sizeof *fin);
    size_t nf = 0;
    for (size_t k = 0; k < ops.n; k++) {
        const op *o = &ops.v[k];
        int handled = (o->k == OP_MATCH && (h1[o->i] || h2[o->j])) || (o->k == OP_DELETE && h1[o->i]) ||
                      (o->k == OP_INSERT && h2[o->j]);
        if (!handled) fin[nf++] = *o;
    }
    for (size_t k = 0; k < nnew; k++) fin[nf++] = newm[k];
    for (size_t i = 0; i < c1->n; i++)
        if (h1[i] && !as1[i]) fin[nf++] = (op){(uint32_t)i, NONE, OP_DELETE};
    for (size_t j = 0; j < c2->n; j++)
        if (h2[j] && !as2[j]) fin[nf++] = (op){NONE, (uint32_t)j, OP_INSERT};
    /* the result outlives this frame's scratch: copy below the mark */
    op *keep = tl_xmalloc((nf + 1) * sizeof *keep);
    memcpy(keep, fin, nf * sizeof *fin);
    tl_diff_arelease(&c->ar, mk);
    oplist r = {tl_diff_aalloc(&c->ar, (nf + 1) * sizeof(op)), nf};
    memcpy(r.v, keep, nf * sizeof *keep);
    free(keep);
    return r;
}

/* WF then disambiguation (aligned_wf). */
oplist tl_diff_aligned_wf(ctx *c, const ulist *c1, const ulist *c2, int strip, arena *memo)
{
    oplist o = wf(c, &c->s[0], c1->v, c1->n, &c->s[1], c2->v, c2->n, strip, memo);
    return disambiguate(c, o, c1, c2);
}

static int any_dispatch(const side *s, const ulist *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (tl_diff_is_dispatch(s, l->v[i])) return 1;
    return 0;
}

/* Phase 2 logic: positional when equal lengths and no dispatch, else WF. */
oplist tl_diff_align(ctx *c, const ulist *c1, const ulist *c2, arena *memo)
{
    if (c1->n == c2->n && !any_dispatch(&c->s[0], c1) && !any_dispatch(&c->s[1], c2)) {
        oplist o = {tl_diff_aalloc(&c->ar, (c1->n + 1) * sizeof(op)), c1->n};
        for (size_t i = 0; i < c1->n; i++) o.v[i] = (op){(uint32_t)i, (uint32_t)i, OP_MATCH};
        return o;
    }
    return tl_diff_aligned_wf(c, c1, c2, 0, memo);
}

/* ======================================================== reconcile */

/* Phase 3: substitute wrapper nodes among the delete/insert pairs by their
 * GPU-path children. Returns 1 and the new lists when anything changed. */
int tl_diff_reconcile(ctx *c, const oplist *ops, const ulist *c1, const ulist *c2, ulist *r1, ulist *r2)
{
    const side *s1 = &c->s[0], *s2 = &c->s[1];
    size_t nd = 0, ni = 0;
    for (size_t k = 0; k < ops->n; k++) {
        if (ops->v[k].k == OP_DELETE) nd++;
        if (ops->v[k].k == OP_INSERT) ni++;
    }
    if (!nd || !ni) return 0;
    /* the pairs skip kernels and dispatches (graph launches exempt) on either side */
    uint32_t *D = tl_diff_aalloc(&c->ar, nd * sizeof *D), *I = tl_diff_aalloc(&c->ar, ni * sizeof *I);
    size_t dn = 0, in = 0;
    for (size_t k = 0; k < ops->n; k++) {
        const op *o = &ops->v[k];
        if (o->k == OP_DELETE) {
            uint32_t u = c1->v[o->i];
            uint8_t cat = s1->es->cat[u];
            if ((cat == TL_CAT_KERNEL || cat == TL_CAT_CUDA_RUNTIME || cat == TL_CAT_CUDA_DRIVER) && !s1->graph[s1->es->name[u]])
                continue;
            D[dn++] = o->i;
        } else if (o->k == OP_INSERT) {
            uint32_t u = c2->v[o->j];
            uint8_t cat = s2->es->cat[u];
            if ((cat == TL_CAT_KERNEL || cat == TL_CAT_CUDA_RUNTIME || cat == TL_CAT_CUDA_DRIVER) && !s2->graph[s2->es->name[u]])
                continue;
            I[in++] = o->j;
        }
    }
    if (!dn || !in) return 0;
    ulist *imm1 = tl_diff_aalloc(&c->ar, dn * sizeof *imm1), *imm2 = tl_diff_aalloc(&c->ar, in * sizeof *imm2);
    for (size_t x = 0; x < dn; x++) imm1[x] = tl_diff_gpu_kids(c, s1, c1->v[D[x]]);
    for (size_t y = 0; y < in; y++) imm2[y] = tl_diff_gpu_kids(c, s2, c2->v[I[y]]);
    uint8_t *sub1 = tl_diff_aalloc(&c->ar, c1->n + 1), *sub2 = tl_diff_aalloc(&c->ar, c2->n + 1);
    memset(sub1, 0, c1->n + 1);
    memset(sub2, 0, c2->n + 1);
    int anysub = 0;
    /* 1: a deleted node's name among an inserted node's children; 2: the converse */
    amap dn_names, in_names;
    tl_diff_amap_init(&c->ar, &dn_names, dn);
    tl_diff_amap_init(&c->ar, &in_names, in);
    for (size_t x = 0; x < dn; x++) {
        uint32_t u = c1->v[D[x]];
        if (tl_strpool_len(&s1->es->names, s1->es->name[u])) tl_diff_amap_put(&dn_names, tl_diff_nname(s1, u), 1);
    }
    for (size_t y = 0; y < in; y++) {
        uint32_t u = c2->v[I[y]];
        if (tl_strpool_len(&s2->es->names, s2->es->name[u])) tl_diff_amap_put(&in_names, tl_diff_nname(s2, u), 1);
    }
    for (size_t y = 0; y < in; y++)
        for (size_t k = 0; k < imm2[y].n && !sub2[I[y]]; k++)
            if (tl_diff_amap_get(&dn_names, tl_diff_nname(s2, imm2[y].v[k])) != UINT32_MAX) sub2[I[y]] = anysub = 1;
    for (size_t x = 0; x < dn; x++)
        for (size_t k = 0; k < imm1[x].n && !sub1[D[x]]; k++)
            if (tl_diff_amap_get(&in_names, tl_diff_nname(s1, imm1[x].v[k])) != UINT32_MAX) sub1[D[x]] = anysub = 1;
    /* 3: both have children with the same name lists */
    for (size_t x = 0; x < dn; x++) {
        if (!imm1[x].n) continue;
        for (size_t y = 0; y < in; y++) {
            if (imm2[y].n != imm1[x].n || (sub1[D[x]] && sub2[I[y]])) continue;
            size_t k = 0;
            while (k < imm1[x].n && tl_diff_nname(s1, imm1[x].v[k]) == tl_diff_nname(s2, imm2[y].v[k])) k++;
            if (k == imm1[x].n) sub1[D[x]] = sub2[I[y]] = anysub = 1;
        }
    }
    if (!anysub) return 0;
    size_t t1 = 0, t2 = 0;
    for (size_t i = 0; i < c1->n; i++) t1 += 1;
    for (size_t x = 0; x < dn; x++)
        if (sub1[D[x]]) t1 += imm1[x].n;
    for (size_t j = 0; j < c2->n; j++) t2 += 1;
    for (size_t y = 0; y < in; y++)
        if (sub2[I[y]]) t2 += imm2[y].n;
    r1->v = tl_diff_aalloc(&c->ar, (t1 + 1) * sizeof(uint32_t));
    r2->v = tl_diff_aalloc(&c->ar, (t2 + 1) * sizeof(uint32_t));
    r1->n = r2->n = 0;
    /* the replacement lists by index */
    ulist **by1 = tl_diff_aalloc(&c->ar, (c1->n + 1) * sizeof *by1), **by2 = tl_diff_aalloc(&c->ar, (c2->n + 1) * sizeof *by2);
    for (size_t x = 0; x < dn; x++) by1[D[x]] = &imm1[x];
    for (size_t y = 0; y < in; y++) by2[I[y]] = &imm2[y];
    for (size_t i = 0; i < c1->n; i++) {
        if (sub1[i])
            for (size_t k = 0; k < by1[i]->n; k++) r1->v[r1->n++] = by1[i]->v[k];
        else r1->v[r1->n++] = c1->v[i];
    }
    for (size_t j = 0; j < c2->n; j++) {
        if (sub2[j])
            for (size_t k = 0; k < by2[j]->n; k++) r2->v[r2->n++] = by2[j]->v[k];
        else r2->v[r2->n++] = c2->v[j];
    }
    tl_diff_sort_by_ts(c, s1, r1->v, r1->n);
    tl_diff_sort_by_ts(c, s2, r2->v, r2->n);
    return 1;
}
