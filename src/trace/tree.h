/* tree.h — the CPU-op -> runtime launch -> GPU work tree of a trace.
 * Owns index arrays over event UIDs (no pointers): parent, children and
 * gpu_events of every node (sparse CSR lists, util/sparse_csr.h; gpu_events
 * in runtime-UID order as the reference builds them), the in-tree flag,
 * and the forward<->backward links. Built once from an immutable
 * EventStore (and reworked by the pseudo-op pass, pseudo_ops.h, while the
 * trace is still private to its loader), read-only afterwards (thread-safe).
 * Rules: perf-report spec §3 (linking key, call stacks with the 1 us bleed
 * tolerance, ac2g flows, graph launches, fwd/bwd by Sequence number) with its
 * FIX list; launcher resolution §5. */
#ifndef TL_TREE_H
#define TL_TREE_H

#include <stdint.h>

#include "../util/sparse_csr.h"
#include "event_store.h"

#define TL_NOUID UINT32_MAX

typedef struct tl_tree {
    size_t n;
    uint32_t *parent;               /* TL_NOUID = none */
    tl_csr children;                /* children of u: tl_tree_children(t, u, &n) */
    tl_csr gpus;                    /* gpu_events of u: tl_tree_gpus(t, u, &n) */
    uint8_t *in_tree;               /* the reference's tree=True (2: discarded by the bleed rule) */
    struct { uint32_t a, b; } *fwd_links;   /* (bwd, fwd) sorted by bwd */
    struct { uint32_t a, b; } *bwd_links;   /* (fwd, bwd) sorted by fwd */
    size_t n_links;
    int link_by_external_id;        /* linking key: 0 correlation, 1 External id */
    int with_python;                /* python_function events are tree nodes */
    size_t n_discarded;             /* events dropped by the bleed rule */
    size_t n_linked_gpu, n_gpu;     /* GPU-set events linked / total */
    size_t n_linked_by_corr;        /* of them, linked by correlation alone: the trace has no ac2g flow */
    int gpu_only;                   /* no cpu_op nor python_function event */
    /* start of the first runtime call that enqueues GPU work (a kernel,
     * copy, memset or graph launch); INT64_MAX when there is none */
    int64_t first_launch_ns;
    /* the smallest correlation id of those launch calls: an unlinked GPU
     * event with a lower one was launched before all of them (a process's
     * correlation ids grow with each runtime call, on CUDA and ROCm). 0, no
     * such rule, unless every launch call has an id above 0, all of them
     * are of one pid (GPU events carry no process) and links go by
     * correlation (not External id) */
    int64_t first_launch_corr;
    uint8_t *name_comm;             /* per names id: matches the communication regexes */
} tl_tree;

typedef struct tl_tree_opts {
    int with_python;                /* --include_call_stack */
} tl_tree_opts;

void tl_tree_build(tl_tree *t, const tl_event_store *es, const tl_tree_opts *opts);
void tl_tree_free(tl_tree *t);
/* A deep copy (n_names: the size of the store's names pool, for name_comm). */
void tl_tree_copy(tl_tree *dst, const tl_tree *src, size_t n_names);

static inline int tl_is_gpu_cat(uint8_t c)
{
    return c == TL_CAT_KERNEL || c == TL_CAT_GPU_MEMCPY || c == TL_CAT_GPU_MEMSET;
}

/* The children and the gpu_events of u, as a pointer and a length (the
 * pointer is not to be read when the length is 0), or as positions in
 * t->children.v / t->gpus.v. */
static inline const uint32_t *tl_tree_children(const tl_tree *t, uint32_t u, size_t *n)
{
    return tl_csr_list(&t->children, u, n);
}
static inline const uint32_t *tl_tree_gpus(const tl_tree *t, uint32_t u, size_t *n)
{
    return tl_csr_list(&t->gpus, u, n);
}
static inline tl_span tl_tree_child_span(const tl_tree *t, uint32_t u) { return tl_csr_span(&t->children, u); }
static inline tl_span tl_tree_gpu_span(const tl_tree *t, uint32_t u) { return tl_csr_span(&t->gpus, u); }
/* Does u have GPU events (itself launched or below it)? */
static inline int tl_tree_has_gpus(const tl_tree *t, uint32_t u) { return tl_csr_nonempty(&t->gpus, u); }

/* For the passes that add events to a private trace (pseudo ops, the
 * capture merge): replaces the children and gpu_events CSR arrays with the
 * lists list() gives for every event of es (which: 0 children, 1
 * gpu_events; out NULL: the length only, else the list written there),
 * sets t->n = es->n and gives the names added to es since the tree was
 * built their communication flag. parent and in_tree are the caller's
 * (already es->n long). */
typedef size_t (*tl_tree_list_fn)(void *ctx, uint32_t u, int which, uint32_t *out);
void tl_tree_relist(tl_tree *t, const tl_event_store *es, tl_tree_list_fn list, void *ctx);

/* What a runtime (or driver) call puts on the GPU, from its name (ASCII
 * case ignored): a graph ("graphlaunch"), a kernel or a copy ("launch",
 * "memcpy"), a memset ("memset"), or nothing the checks count. */
typedef enum tl_launch_kind {
    TL_LAUNCH_NONE = 0,
    TL_LAUNCH_GRAPH,
    TL_LAUNCH_WORK,
    TL_LAUNCH_MEMSET,
} tl_launch_kind;
tl_launch_kind tl_launch_call_kind(const char *name);
/* The tl_launch_kind of every names id of es (names.n + 1 entries; the
 * caller frees): the test once per distinct name. */
uint8_t *tl_launch_kinds(const tl_event_store *es);

/* 1 for every names id of es (names.n + 1 entries; the caller frees) that
 * names a runtime call which can block the host until the GPU has done
 * its work: HTA's list of CUDA calls (cudaDeviceSynchronize,
 * cudaStreamSynchronize, cudaEventQuery, cudaEventSynchronize, cudaMemcpy,
 * cudaMemcpyAsync) and their HIP names, with hipMemcpyWithStream. */
uint8_t *tl_blocking_calls(const tl_event_store *es);

/* Whether runtime call e (with block = tl_blocking_calls(es)) waited for
 * the GPU: a call of that list, except an asynchronous copy (*MemcpyAsync)
 * whose copy is neither device-to-host nor from or to pageable host memory
 * (a device-to-device or pinned host-to-device copy returns at once; a
 * device-to-host one returns when the copy is done, as PyTorch's .item()
 * and .cpu() make them, and a pageable one is staged while the host waits). */
int tl_blocking_call(const tl_tree *t, const tl_event_store *es, const uint8_t *block, uint32_t e);

/* GPU event i has a correlation id above 0 below first_launch_corr. */
static inline int tl_tree_corr_before_trace(const tl_tree *t, const tl_event_store *es, size_t i)
{
    int64_t c = tl_es_corr(es, i);
    return t->first_launch_corr > 0 && c > 0 && c < t->first_launch_corr;
}

/* No launch links to GPU event i, and it started before the trace's first
 * launch call or its correlation id is below every launch call's
 * (tl_tree_corr_before_trace): work launched before the profiling window
 * opened (the tail of the previous step, running while the first profiled
 * step waits; without a synchronisation at the end of a step, it runs on
 * past the first launch call). */
static inline int tl_tree_before_trace(const tl_tree *t, const tl_event_store *es, size_t i)
{
    return !t->in_tree[i] && (es->ts[i] < t->first_launch_ns || tl_tree_corr_before_trace(t, es, i));
}

/* The op that launched GPU event g (§5): the nearest cpu_op above its
 * runtime call (skipping cpu_ops named "execute", passing python functions),
 * else the runtime call itself; TL_NOUID when g is not linked. */
uint32_t tl_tree_launcher(const tl_tree *t, const tl_event_store *es, uint32_t g);

/* Is GPU event g's name a communication kernel's (nccl|rccl|cross_device_reduce)? */
static inline int tl_tree_is_comm(const tl_tree *t, const tl_event_store *es, uint32_t g)
{
    return t->name_comm[es->name[g]];
}

/* Recompute marking (perf-report spec §3.11, --detect_recompute): a new
 * array of es->n flags (the caller frees it), 1 for every python_function
 * whose name contains both "torch/utils/checkpoint.py" and "recompute_fn"
 * and for all its descendants through children, GPU events included. The
 * tree is not modified: the flags belong to whoever asked (a report).
 * *n_roots (may be NULL) receives the number of such python functions. */
uint8_t *tl_tree_recompute_flags(const tl_tree *t, const tl_event_store *es, size_t *n_roots);

uint32_t tl_tree_fwd_of(const tl_tree *t, uint32_t bwd);
uint32_t tl_tree_bwd_of(const tl_tree *t, uint32_t fwd);

#endif
