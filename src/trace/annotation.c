#include "annotation.h"

#include <string.h>

#include "../util/msort.h"
#include "../util/vec.h"

/* The grammars as POSIX EREs, anchored; Python's \b after the SGLang mode
 * word becomes "the next character is not a word character". */
static const char *const GRAMMARS[TL_G_COUNT] = {
    /* tier 1: VLLM_DETAILED, ATOM_DETAILED, SGLANG_DETAILED */
    ("^execute_[0-9]+_context_[0-9]+\\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\\)_generation_[0-9]+"
     "\\(sq[0-9]+sk[0-9]+sqsq[0-9]+sqsk[0-9]+\\)"),
    "^(prefill|decode)\\[.*sqsq=[0-9]+.*\\]",
    "^step\\[(EXTEND|DECODE|MIXED)[^]A-Za-z0-9_][^]]*sqsq=[0-9]+[^]]*\\]",
    /* tier 2: VLLM_NATIVE, SGLANG_NATIVE, ATOM_NATIVE, DIFFUSION_NATIVE */
    "^execute_context_[0-9]+\\([0-9]+\\)_generation_[0-9]+\\([0-9]+\\)",
    "^step\\[(EXTEND|DECODE|MIXED)(\\]|[^A-Za-z0-9_].*\\])",
    "^(prefill|decode)\\[(.*)\\]",
    "^execute_diffusion_([0-9]+)_([0-9]+x[0-9]+)",
};

void tl_ann_grammars_init(tl_ann_grammars *g)
{
    for (int i = 0; i < TL_G_COUNT; i++) regcomp(&g->re[i], GRAMMARS[i], REG_EXTENDED | REG_NOSUB);
}

void tl_ann_grammars_free(tl_ann_grammars *g)
{
    for (int i = 0; i < TL_G_COUNT; i++) regfree(&g->re[i]);
}

int tl_ann_grammar_match(const tl_ann_grammars *g, int which, const char *name)
{
    return which >= 0 && which < TL_G_COUNT && regexec(&g->re[which], name, 0, NULL, 0) == 0;
}

void tl_annotations_init(tl_annotations *a, const tl_trace *t)
{
    memset(a, 0, sizeof *a);
    a->t = t;
    tl_ann_grammars_init(&a->g);
    const tl_event_store *es = &t->es;
    TL_VEC(size_t) c = {0};
    for (size_t i = 0; i < es->n; i++)
        if (es->cat[i] == TL_CAT_USER_ANNOTATION && (es->flags[i] & TL_F_TS)) TL_PUSH(c, i);
    tl_msort(c.v, c.n, tl_idx_cmp_i64, (void *)es->ts);
    a->cands = tl_xmalloc((c.n + 1) * sizeof *a->cands);
    for (size_t i = 0; i < c.n; i++) a->cands[i] = (uint32_t)c.v[i];
    a->n = c.n;
    free(c.v);
}

void tl_annotations_free(tl_annotations *a)
{
    tl_ann_grammars_free(&a->g);
    free(a->cands);
    memset(a, 0, sizeof *a);
}

int tl_annotation_tier(const tl_annotations *a, const char *name)
{
    for (int i = 0; i < TL_G_COUNT; i++)
        if (tl_ann_grammar_match(&a->g, i, name)) return i < TL_ANN_TIER1 ? 1 : 2;
    return 0;
}

const char *tl_event_annotation(const tl_annotations *a, uint32_t ev)
{
    const tl_event_store *es = &a->t->es;
    int64_t ts = es->ts[ev], end = tl_es_end(es, ev);
    uint32_t best[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX}; /* first of tier 1, tier 2, any */
    for (size_t i = 0; i < a->n && a->cands[i] != UINT32_MAX; i++) {
        uint32_t c = a->cands[i];
        if (es->ts[c] > ts) break; /* sorted by start */
        if (!(end < tl_es_end(es, c))) continue;
        if (best[2] == UINT32_MAX) best[2] = c;
        int tier = tl_annotation_tier(a, tl_es_name(es, c));
        if (tier && best[tier - 1] == UINT32_MAX) best[tier - 1] = c;
        if (best[0] != UINT32_MAX) break;
    }
    for (int k = 0; k < 3; k++)
        if (best[k] != UINT32_MAX) return tl_es_name(es, best[k]);
    return "NA";
}
