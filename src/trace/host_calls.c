/* host_calls.c — see host_calls.h. */
#include "host_calls.h"

#include <stdlib.h>
#include <string.h>

#include "../util/str.h"
#include "../util/vec.h"

int tl_host_call_kind(const char *name)
{
    if (tl_contains_ci(name, "synchronize")) return TL_HC_SYNC;
    if (tl_contains_ci(name, "memcpy")) return tl_contains_ci(name, "async") ? TL_HC_COPY : TL_HC_SYNC;
    if (tl_launch_call_kind(name) != TL_LAUNCH_NONE) return TL_HC_LAUNCH;
    return TL_HC_SETUP;
}

/* The GPU time under op u (every GPU event of its subtree). */
static int64_t gpu_ns_under(const tl_trace *t, uint32_t u)
{
    size_t n;
    const uint32_t *g = tl_tree_gpus(&t->tree, u, &n);
    int64_t s = 0;
    for (size_t k = 0; k < n; k++) s += t->es.dur[g[k]] > 0 ? t->es.dur[g[k]] : 0;
    return s;
}

void tl_host_calls_compute(const tl_trace *t, const uint8_t *only_name, tl_host_calls *h)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    memset(h, 0, sizeof *h);
    for (int k = 0; k < TL_HC_KINDS; k++) h->longest[k] = h->longest_op[k] = TL_NOUID;
    uint8_t *kind = tl_xmalloc(es->names.n + 1);
    uint8_t *block = tl_blocking_calls(es);
    memset(kind, 0xff, es->names.n + 1); /* not classified yet */
    /* whether an op counts, decided once: 0 unknown, 1 counts, 2 does not */
    uint8_t *state = tl_xcalloc(es->n ? es->n : 1, 1);
    for (size_t u = 0; u < es->n; u++) {
        uint8_t c = es->cat[u];
        if (c != TL_CAT_CUDA_RUNTIME && c != TL_CAT_CUDA_DRIVER) continue;
        if (!tr->in_tree[u] || tl_trace_is_copy(t, u)) continue; /* a capture's call: no host time here */
        /* the nearest enclosing CPU op that counts (python functions,
         * annotations and ops that do not count passed): a call inside a
         * child op (alexnet's cudaFree inside aten::cudnn_convolution, under
         * the flagged aten::conv2d) is part of the counting op's host time */
        uint32_t p = tr->parent[u];
        for (; p != TL_NOUID; p = tr->parent[p]) {
            if (es->cat[p] != TL_CAT_CPU_OP) continue;
            if (!state[p]) {
                int64_t g = gpu_ns_under(t, p), d = es->dur[p] > 0 ? es->dur[p] : 0;
                state[p] = g > 0 && d > TL_HC_FACTOR * g && (!only_name || only_name[es->name[p]]) ? 1 : 2;
            }
            if (state[p] == 1) break;
        }
        if (p == TL_NOUID) continue;
        uint32_t nm = es->name[u];
        if (kind[nm] == 0xff) kind[nm] = (uint8_t)tl_host_call_kind(tl_strpool_get(&es->names, nm));
        int k = kind[nm];
        /* an asynchronous copy that does not wait (device-to-device, pinned host-to-device) enqueues like a launch */
        if (k == TL_HC_COPY && !tl_blocking_call(tr, es, block, (uint32_t)u)) k = TL_HC_LAUNCH;
        int64_t d = es->dur[u] > 0 ? es->dur[u] : 0;
        h->n[k]++;
        h->ns[k] += d;
        if (h->longest[k] == TL_NOUID || d > h->longest_ns[k]) {
            h->longest[k] = (uint32_t)u;
            h->longest_ns[k] = d;
            h->longest_op[k] = p;
        }
    }
    free(state);
    free(kind);
    free(block);
}
