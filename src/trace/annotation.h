/* annotation.h — iteration annotations (inference spec §1.2-1.3) and the
 * annotation step of the perf report (perf-report spec §3.12 with its FIX):
 * which user_annotation encloses an op. Owns the compiled grammars and the
 * ts-sorted candidate list of one trace; build one per thread. */
#ifndef TL_ANNOTATION_H
#define TL_ANNOTATION_H

#include <regex.h>
#include <stdint.h>

#include "trace.h"

enum { TL_ANN_TIER1 = 3, TL_ANN_TIER2 = 4 };

/* The iteration grammars (§1.2), tier 1 then tier 2, in the order of the
 * reference's tier lists; iteration.h parses what they match. */
enum tl_ann_grammar {
    TL_G_VLLM_DETAILED, TL_G_ATOM_DETAILED, TL_G_SGLANG_DETAILED,                   /* tier 1 */
    TL_G_VLLM_NATIVE, TL_G_SGLANG_NATIVE, TL_G_ATOM_NATIVE, TL_G_DIFFUSION_NATIVE, /* tier 2 */
    TL_G_COUNT
};

/* The compiled grammars (POSIX EREs, prefix-anchored as Python's re.match);
 * read-only after init, so one may serve several threads. */
typedef struct tl_ann_grammars {
    regex_t re[TL_G_COUNT];
} tl_ann_grammars;

void tl_ann_grammars_init(tl_ann_grammars *g);
void tl_ann_grammars_free(tl_ann_grammars *g);
/* 1 when grammar which (enum tl_ann_grammar) matches a prefix of name. */
int tl_ann_grammar_match(const tl_ann_grammars *g, int which, const char *name);

typedef struct tl_annotations {
    const tl_trace *t;
    tl_ann_grammars g;
    uint32_t *cands;   /* cat == "user_annotation" events, by ts (stable) */
    size_t n;
} tl_annotations;

void tl_annotations_init(tl_annotations *a, const tl_trace *t);
void tl_annotations_free(tl_annotations *a);
/* 1 for a tier-1 (detailed) grammar, 2 for tier 2 (native), 0 otherwise. */
int tl_annotation_tier(const tl_annotations *a, const char *name);
/* The annotation of event ev: among the candidates enclosing it
 * (ann.ts <= ts, ts + dur < ann.ts + ann.dur), the first (by start) of tier
 * 1, else of tier 2, else the first; "NA" when none encloses it. */
const char *tl_event_annotation(const tl_annotations *a, uint32_t ev);

#endif
