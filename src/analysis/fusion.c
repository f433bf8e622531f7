#include "fusion.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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

/* rec[base] = record index + 1 (0 = none), grown with the pool */
typedef TL_VEC(uint32_t) recmap;

static uint32_t *rec_slot(recmap *m, uint32_t base)
{
    while (m->n <= base) TL_PUSH(*m, 0);
    return &m->v[base];
}

void tl_fusion_modules(tl_fusion *f, const tl_trace *t)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    name_info ni = {tl_xcalloc(es->names.n + 1, sizeof(uint32_t)), tl_xcalloc(es->names.n + 1, 1)};
    recmap rec = {0};
    for (size_t i = 0; i < es->n; i++) {
        uint32_t u = (uint32_t)i;
        if (skipped_cat(es->cat[u])) continue;
        uint32_t g0 = tr->gpu_off[u], g1 = tr->gpu_off[u + 1];
        if (g1 - g0 < 2) continue;
        uint32_t base = base_of(f, &ni, es, u);
        if (base == UINT32_MAX) continue;
        uint32_t *slot = rec_slot(&rec, base);
        if (*slot) {
            tl_fusion_module *m = &f->modules.v[*slot - 1];
            double inst = 0;
            for (uint32_t k = g0; k < g1; k++)
                if (es->cat[tr->gpu[k]] == TL_CAT_KERNEL) time_add(&m->total, es, tr->gpu[k], &inst);
            m->instances++;
            m->total.us += inst;
            continue;
        }
        tl_fusion_module m = {.uid = u, .base = base, .instances = 1, .k_first = f->kernels.n};
        m.total.all_int = 1;
        double inst = 0;
        for (uint32_t k = g0; k < g1; k++) {
            uint32_t g = tr->gpu[k];
            if (es->cat[g] != TL_CAT_KERNEL) continue;
            TL_PUSH(f->kernels, g);
            uint8_t kf = kflags_of(&ni, es, g);
            if (kf & 2) m.eligible++;
            if (kf & 4) m.has_fused = 1;
            time_add(&m.total, es, g, &inst);
        }
        m.nk = f->kernels.n - m.k_first;
        if (m.nk < 2) { /* not recorded: a later instance may be */
            f->kernels.n = m.k_first;
            continue;
        }
        m.total.us = inst;
        TL_PUSH(f->modules, m);
        *slot = (uint32_t)f->modules.n;
    }
    free(rec.v);
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
            if (tr->gpu_off[ev + 1] - tr->gpu_off[ev] != 1) continue;
            kernel = tr->gpu[tr->gpu_off[ev]];
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
    recmap rec = {0};
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
        uint32_t *slot = rec_slot(&rec, base);
        if (*slot) {
            tl_fusion_sequence *s = &f->sequences.v[*slot - 1];
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
        *slot = (uint32_t)f->sequences.n;
    }
    free(rec.v);
    free(ni.base);
    free(ni.kflags);
    free(start);
    free(by_group);
    free(parents.v);
    free(counts.v);
}
