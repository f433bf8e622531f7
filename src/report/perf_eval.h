/* perf_eval.h — running the perf model on trace events (perf-report spec
 * §7.5 build / §7.6 step B): the kernels an op's metrics are measured on
 * (its subtree, or for backward the kernels of its linked backward ops),
 * and the model result, cached per distinct (name, args, kernel names) so a
 * model runs once per unique op signature, not once per instance; and for
 * the classes that read a forward op by Sequence number (tl_perf_class
 * .seq_forward) that forward event, found through a (seq, uid) index.
 * Owns the cache, the index and the parsed-args arenas; used by one thread. */
#ifndef TL_PERF_EVAL_H
#define TL_PERF_EVAL_H

#include "../perf/arch.h"
#include "../perf/perf_model.h"
#include "../perf/roofline.h"
#include "../trace/annotation.h"
#include "../trace/trace.h"
#include "../util/hashmap.h"

/* A cached model outcome; texts are rendered once. */
typedef struct tl_perf_entry {
    int status;                 /* TL_PERF_* */
    double flops;
    int has_bytes;
    double bytes;
    char compute_spec[TL_COMPUTE_SPEC_MAX];
    int n_params;
    uint32_t *param_keys;       /* ids in tl_perf_eval.strings: "param: <key>" column names */
    uint32_t *param_str;        /* ids in tl_perf_eval.strings: str() of each value */
    char *perf_params;          /* repr of the params dict, NULL when none */
} tl_perf_entry;

/* An event with an integer args["Sequence number"]. */
typedef struct tl_seq_uid {
    int64_t seq;
    uint32_t uid;
} tl_seq_uid;

typedef struct tl_perf_eval {
    const tl_trace *t;
    const tl_arch *arch;        /* NULL: no roofline columns */
    tl_map cache;               /* key hash -> entry index */
    tl_perf_entry *entries;
    size_t n, cap;
    tl_strpool strings;         /* param keys and texts */
    tl_annotations ann;         /* the annotation step's candidates (§3.12) */
    uint8_t *volatile_key;      /* per args key id: differs per instance (External id, ...) */
    const tl_perf_class **cls_of_name; /* per names id, filled on first use */
    uint8_t *cls_known;
    tl_seq_uid *seq_index;      /* sorted by (seq, uid) */
    size_t n_seq;
    int inference_annotations;  /* the inference report's annotation filters (inference-and-
                                   comparative spec §1.6 step 4); else the standard report's one */
    struct tl_extension *ext;   /* the report's extension models, consulted first (borrowed; its Lua
                                   models run on this evaluator's thread only), NULL: none */
} tl_perf_eval;

void tl_perf_eval_init(tl_perf_eval *pe, const tl_trace *t, const tl_arch *arch);
void tl_perf_eval_free(tl_perf_eval *pe);

/* The model class of an event name (exact table then Triton), honouring the
 * Triton can_model rule; NULL when the op has no model. */
const tl_perf_class *tl_perf_class_of(tl_perf_eval *pe, uint32_t ev);

/* Kernels of the ops in `ops` (their subtree GPU events), sorted by ts,
 * deduplicated. The caller frees *out. */
size_t tl_perf_kernels(const tl_trace *t, const uint32_t *ops, size_t nops, uint32_t **out);
/* The backward ops linked to ev's subtree (fwd->bwd links of ev and every
 * descendant). The caller frees *out. */
size_t tl_perf_bwd_ops(const tl_trace *t, uint32_t ev, uint32_t **out);

/* The param column name / value text of an entry (the pool may grow while
 * more entries are made, so texts are looked up by id). */
static inline const char *tl_perf_param_key(const tl_perf_eval *pe, const tl_perf_entry *e, int i)
{
    return tl_strpool_get(&pe->strings, e->param_keys[i]);
}
static inline const char *tl_perf_param_str(const tl_perf_eval *pe, const tl_perf_entry *e, int i)
{
    return tl_strpool_get(&pe->strings, e->param_str[i]);
}

/* Runs (or recalls) the model of `cls` for ev, forward or backward, with the
 * given kernels (their names feed GEMM kernel-name parsing). For a class
 * with seq_forward set the model also sees tl_perf_seq_forward(pe, ev). */
/* The forward op of a backward op by Sequence number (perf-model spec
 * §4.2): the latest event before ev (a smaller UID) with the same integer
 * args["Sequence number"] whose name is ev's without its trailing
 * "Backward" ("ConvBias_Backward" -> "ConvBias_"); TL_NOUID when none. */
uint32_t tl_perf_seq_forward(const tl_perf_eval *pe, uint32_t ev);

const tl_perf_entry *tl_perf_eval_run(tl_perf_eval *pe, const tl_perf_class *cls, uint32_t ev, int bwd,
                                      const uint32_t *kernels, size_t nk);

#endif
