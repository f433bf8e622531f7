/* health.c — see health.h. */
#include "health.h"
#include "steps.h"

#include <stdlib.h>
#include <string.h>

#include "../util/hashmap.h"
#include "../util/vec.h"

typedef struct sev {
    int64_t stream, ts, end;
    uint32_t dev;
} sev;

static int cmp_sev(const void *a, const void *b)
{
    const sev *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

void tl_health_compute(const tl_trace *t, tl_health *h)
{
    const tl_event_store *es = &t->es;
    const tl_tree *tr = &t->tree;
    memset(h, 0, sizeof *h);
    h->n_events = es->n;
    h->t0 = INT64_MAX;
    h->t1 = INT64_MIN;
    h->steps_t0 = INT64_MAX;
    h->steps_t1 = INT64_MIN;
    uint8_t *kind = tl_launch_kinds(es);
    h->n_gpu_linked_by_corr = tr->n_linked_by_corr;
    /* the steps as the step breakdown finds them (the annotations only) */
    tl_step *sv;
    h->n_steps = tl_steps_find(t, &sv);
    for (size_t i = 0; i < h->n_steps; i++) {
        if (sv[i].ts < h->steps_t0) h->steps_t0 = sv[i].ts;
        if (sv[i].ts + sv[i].dur > h->steps_t1) h->steps_t1 = sv[i].ts + sv[i].dur;
    }
    free(sv);
    uint32_t dev_key = tl_strpool_find(&es->keys, "device", 6);
    TL_VEC(sev) gpu = {0};
    tl_map corr_seen, corr_launch; /* correlations of GPU events, of launch calls */
    tl_map_init(&corr_seen, 1024);
    tl_map_init(&corr_launch, 1024);
    int64_t last_gpu_start = INT64_MIN;
    /* pass 1: ranges, counts, steps, GPU events */
    for (size_t u = 0; u < es->n; u++) {
        uint8_t c = es->cat[u];
        if (es->flags[u] & TL_F_NEGDUR) h->n_negative_dur++;
        if (c == TL_CAT_AC2G) h->n_flows++;
        if (es->ph[u] == 'X' && (es->flags[u] & TL_F_TS)) {
            if (es->ts[u] < h->t0) h->t0 = es->ts[u];
            if (tl_es_end(es, u) > h->t1) h->t1 = tl_es_end(es, u);
        }
        if (c == TL_CAT_CPU_OP) {
            h->n_cpu_ops++;
            int isint;
            int64_t v;
            if (tl_es_arg_raw(es, u, TL_K_INPUT_DIMS, &isint) != UINT32_MAX ||
                tl_es_arg_int(es, u, TL_K_INPUT_DIMS, &v))
                h->n_cpu_ops_shapes++;
            if (es->dur[u] == 0 && !(es->flags[u] & TL_F_NEGDUR)) h->n_zero_dur_cpu_ops++;
        } else if (c == TL_CAT_PYTHON_FUNCTION) {
            h->n_python++;
        }
        if ((c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) && kind[es->name[u]] == TL_LAUNCH_GRAPH) h->n_graph_launches++;
        if ((c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) && kind[es->name[u]] && es->corr[u] != INT64_MIN)
            tl_map_put(&corr_launch, (uint64_t)es->corr[u], 0, 1);
        if (!tl_is_gpu_cat(c) || !(es->flags[u] & TL_F_TS)) continue;
        h->n_gpu++;
        h->gpu_ns += es->dur[u];
        if (es->dur[u] == 0 && !(es->flags[u] & TL_F_NEGDUR)) h->n_zero_dur_gpu++;
        if (es->ts[u] > last_gpu_start) last_gpu_start = es->ts[u];
        if (es->corr[u] != INT64_MIN) tl_map_put(&corr_seen, (uint64_t)es->corr[u], 0, 1);
        uint32_t rt = tr->parent[u];
        if (rt == TL_NOUID) {
            h->n_gpu_unlinked++;
            h->gpu_unlinked_ns += es->dur[u];
        } else {
            if (kind[es->name[rt]] == TL_LAUNCH_GRAPH) {
                h->n_gpu_graph++;
                h->gpu_graph_ns += es->dur[u];
            }
            /* one launch for many graph kernels: only the first kernel can be checked */
            int64_t early = es->ts[rt] - es->ts[u];
            if (early > TL_HEALTH_CLOCK_NS && (es->cat[rt] == TL_CAT_CUDA_RUNTIME || es->cat[rt] == TL_CAT_CUDA_DRIVER)) {
                h->n_gpu_before_launch++;
                if (early > h->max_gpu_before_launch_ns) h->max_gpu_before_launch_ns = early;
            }
        }
        int64_t stream = INT64_MIN, dev = INT64_MIN;
        tl_es_arg_int(es, u, TL_K_STREAM, &stream);
        if (dev_key != UINT32_MAX) tl_es_arg_int(es, u, dev_key, &dev);
        /* the device from args, else the process (kept apart by the top bit) */
        uint32_t where = dev == INT64_MIN ? 0x80000000u | es->pid[u] : (uint32_t)dev & 0x7fffffffu;
        sev s = {stream, es->ts[u], tl_es_end(es, u), where};
        TL_PUSH(gpu, s);
    }
    /* pass 2: launches without GPU work, GPU work outside the steps */
    for (size_t u = 0; u < es->n; u++) {
        uint8_t c = es->cat[u];
        if ((c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) && kind[es->name[u]] && es->corr[u] != INT64_MIN) {
            int found = tl_map_get(&corr_seen, (uint64_t)es->corr[u], 0) != UINT32_MAX;
            if (kind[es->name[u]] == TL_LAUNCH_MEMSET) {
                h->n_memsets++;
                h->n_memsets_orphan += !found;
            } else {
                h->n_launches++;
                if (!found) {
                    h->n_launches_orphan++;
                    if (es->ts[u] >= last_gpu_start) h->n_launches_orphan_at_end++;
                }
            }
        }
        if (tl_is_gpu_cat(c) && (es->flags[u] & TL_F_TS) && tr->parent[u] == TL_NOUID && es->corr[u] != INT64_MIN &&
            tl_map_get(&corr_launch, (uint64_t)es->corr[u], 0) != UINT32_MAX) {
            h->n_gpu_unlinked_launched++;
            h->gpu_unlinked_launched_ns += es->dur[u];
        }
        if (h->n_steps && tl_is_gpu_cat(c) && (es->flags[u] & TL_F_TS)) {
            if (es->ts[u] < h->steps_t0) {
                h->n_gpu_before_steps++;
                h->gpu_before_steps_ns += es->dur[u];
            } else if (es->ts[u] >= h->steps_t1) {
                h->n_gpu_after_steps++;
                h->gpu_after_steps_ns += es->dur[u];
            }
        }
    }
    /* streams: events of one (device, stream) must not overlap */
    if (gpu.n) {
        qsort(gpu.v, gpu.n, sizeof *gpu.v, cmp_sev);
        int64_t end = INT64_MIN;
        for (size_t i = 0; i < gpu.n; i++) {
            int first = i == 0 || gpu.v[i].dev != gpu.v[i - 1].dev || gpu.v[i].stream != gpu.v[i - 1].stream;
            if (first) {
                h->n_streams++;
                end = gpu.v[i].end;
                continue;
            }
            int64_t ov = end - gpu.v[i].ts;
            if (ov > TL_HEALTH_OVERLAP_NS) {
                h->n_stream_overlaps++;
                if (ov > h->max_stream_overlap_ns) h->max_stream_overlap_ns = ov;
            }
            if (gpu.v[i].end > end) end = gpu.v[i].end;
        }
    }
    if (h->t0 == INT64_MAX) h->t0 = h->t1 = 0;
    if (!h->n_steps) h->steps_t0 = h->steps_t1 = 0;
    free(gpu.v);
    free(kind);
    tl_map_free(&corr_seen);
    tl_map_free(&corr_launch);
}
