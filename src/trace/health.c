/* health.c — see health.h. */
#include "health.h"
#include "steps.h"
#include "args_walk.h"

#include <stdlib.h>
#include <string.h>

#include "../util/idset.h"
#include "../util/numsort.h"
#include "../util/vec.h"

typedef struct sev {
    int64_t stream, ts, end;
    uint32_t dev, uid;
} sev;

/* A stream capture on a thread: from a *StreamBeginCapture call's start to
 * the end of the next *StreamEndCapture call of the same thread. */
typedef struct capwin {
    uint64_t thread;
    int64_t t0, t1;
} capwin;

static int cmp_capwin(const void *a, const void *b)
{
    const capwin *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Event u's (pid, tid) as one key: the store's thread index. */
static uint64_t thread_of(const tl_event_store *es, size_t u) { return es->thr[u]; }

/* The capture windows of the trace, sorted by (thread, start); *n their count. */
static capwin *capture_windows(const tl_event_store *es, size_t *n)
{
    *n = 0;
    /* per names id: 1 a begin-capture call, 2 an end-capture call */
    uint8_t *role = tl_xcalloc(es->names.n + 1, 1);
    int any = 0;
    for (uint32_t id = 0; id < es->names.n; id++) {
        const char *nm = tl_strpool_get(&es->names, id);
        if (strstr(nm, "StreamBeginCapture")) role[id] = 1, any = 1;
        else if (strstr(nm, "StreamEndCapture")) role[id] = 2, any = 1;
    }
    TL_VEC(capwin) marks = {0}; /* t0 = ts, t1 = end, thread; role in the sign of t1 - t0 below */
    if (any)
        for (size_t u = 0; u < es->n; u++) {
            uint8_t c = es->cat[u];
            if ((c != TL_CAT_CUDA_RUNTIME && c != TL_CAT_CUDA_DRIVER) || !role[es->name[u]] || !(es->flags[u] & TL_F_TS))
                continue;
            capwin m = {thread_of(es, u), es->ts[u], role[es->name[u]] == 1 ? INT64_MIN : tl_es_end(es, u)};
            TL_PUSH(marks, m);
        }
    free(role);
    if (marks.n > 1) qsort(marks.v, marks.n, sizeof *marks.v, cmp_capwin);
    /* pair each begin with the next end of its thread */
    size_t k = 0;
    for (size_t i = 0; i < marks.n; i++) {
        if (marks.v[i].t1 != INT64_MIN) continue;
        size_t j = i + 1;
        while (j < marks.n && marks.v[j].thread == marks.v[i].thread && marks.v[j].t1 == INT64_MIN) j++;
        if (j < marks.n && marks.v[j].thread == marks.v[i].thread)
            marks.v[k++] = (capwin){marks.v[i].thread, marks.v[i].t0, marks.v[j].t1};
    }
    *n = k;
    return marks.v;
}

/* Is event u (a call) inside one of the capture windows w[0..n)? */
static int in_capture(const capwin *w, size_t n, const tl_event_store *es, size_t u)
{
    uint64_t th = thread_of(es, u);
    int64_t ts = es->ts[u];
    size_t lo = 0, hi = n; /* the first window of a later thread, or of this thread starting after ts */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w[mid].thread < th || (w[mid].thread == th && w[mid].t0 <= ts)) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && w[lo - 1].thread == th && ts <= w[lo - 1].t1;
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
    uint32_t sync_cat = tl_strpool_find(&es->cats, "cuda_sync", 9);
    uint32_t wait_name = tl_strpool_find(&es->names, "Stream Wait Event", 17);
    uint32_t wait_key = tl_strpool_find(&es->keys, "wait_on_cuda_event_record_corr_id", 33);
    uint8_t *sync_call = tl_xcalloc(es->names.n + 1, 1);
    static const char *const sync_names[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
                                             "cudaStreamWaitEvent"};
    for (size_t i = 0; i < sizeof sync_names / sizeof *sync_names; i++) {
        uint32_t id = tl_strpool_find(&es->names, sync_names[i], strlen(sync_names[i]));
        if (id != UINT32_MAX) sync_call[id] = 1;
    }
    TL_VEC(sev) gpu = {0};
    /* correlations of GPU events, of launch calls: listed in pass 1, sets for pass 2 */
    TL_VEC(int64_t) seen_ids = {0}, launch_ids = {0};
    int64_t last_gpu_start = INT64_MIN;
    /* pass 1: ranges, counts, steps, GPU events */
    for (size_t u = 0; u < es->n; u++) {
        uint8_t c = es->cat[u];
        if (es->flags[u] & TL_F_NEGDUR) h->n_negative_dur++;
        if (c == TL_CAT_AC2G) h->n_flows++;
        if (c == TL_CAT_OTHER && sync_cat != UINT32_MAX && es->cat_id[u] == sync_cat) {
            h->n_cuda_sync++;
            /* a wait whose event record is not named: no edge can follow it */
            int64_t rec = -1;
            if (wait_name != UINT32_MAX && es->name[u] == wait_name &&
                (wait_key == UINT32_MAX || !tl_es_arg_int(es, u, wait_key, &rec) || rec < 0))
                h->n_stream_waits_unlinked++;
        }
        if (c == TL_CAT_CUDA_RUNTIME && sync_call[es->name[u]]) h->n_cuda_sync_calls++;
        if (es->ph[u] == 'X' && (es->flags[u] & TL_F_TS)) {
            if (es->ts[u] < h->t0) h->t0 = es->ts[u];
            if (tl_es_end(es, u) > h->t1) h->t1 = tl_es_end(es, u);
        }
        if (c == TL_CAT_CPU_OP) {
            h->n_cpu_ops++;
            /* Input Dims present, whatever its value */
            if (tl_args_has(es, u, TL_K_INPUT_DIMS)) h->n_cpu_ops_shapes++;
            if (es->dur[u] == 0 && !(es->flags[u] & TL_F_NEGDUR)) h->n_zero_dur_cpu_ops++;
        } else if (c == TL_CAT_PYTHON_FUNCTION) {
            h->n_python++;
        }
        if ((c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) && kind[es->name[u]] == TL_LAUNCH_GRAPH) h->n_graph_launches++;
        int64_t id = tl_es_corr(es, u);
        if ((c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) && kind[es->name[u]] && id != TL_NONE)
            TL_PUSH(launch_ids, id);
        if (!tl_is_gpu_cat(c) || !(es->flags[u] & TL_F_TS)) continue;
        h->n_gpu++;
        h->gpu_ns += es->dur[u];
        if (es->dur[u] == 0 && !(es->flags[u] & TL_F_NEGDUR)) h->n_zero_dur_gpu++;
        if (es->ts[u] > last_gpu_start) last_gpu_start = es->ts[u];
        if (id != TL_NONE) TL_PUSH(seen_ids, id);
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
        /* stream and device in one walk of the args: each the value of
         * the key's last integer occurrence, as tl_es_arg_int leaves it */
        int64_t stream = INT64_MIN, dev = INT64_MIN;
        tl_arg_iter it;
        tl_arg a;
        tl_es_args_begin(es, u, &it);
        while (tl_es_args_next(&it, &a)) {
            if (a.tag != TL_AV_INT) continue;
            if (a.key == TL_K_STREAM) stream = a.i;
            else if (a.key == dev_key) dev = a.i;
        }
        /* the device from args, else the process (kept apart by the top bit) */
        uint32_t where = dev == INT64_MIN ? 0x80000000u | tl_es_pid(es, u) : (uint32_t)dev & 0x7fffffffu;
        sev s = {stream, es->ts[u], tl_es_end(es, u), where, (uint32_t)u};
        TL_PUSH(gpu, s);
    }
    tl_idset corr_seen, corr_launch;
    tl_idset_build(&corr_seen, seen_ids.v, seen_ids.n);
    tl_idset_build(&corr_launch, launch_ids.v, launch_ids.n);
    free(seen_ids.v);
    free(launch_ids.v);
    size_t n_win;
    capwin *win = capture_windows(es, &n_win);
    /* pass 2: launches without GPU work, GPU work outside the steps */
    for (size_t u = 0; u < es->n; u++) {
        uint8_t c = es->cat[u];
        int64_t id = tl_es_corr(es, u);
        /* a capture merge's copies of the captured launches are not launch calls of this trace */
        if ((c == TL_CAT_CUDA_RUNTIME || c == TL_CAT_CUDA_DRIVER) && kind[es->name[u]] && id != TL_NONE &&
            !tl_trace_is_copy(t, u)) {
            /* (a graph launch a capture merge grafted: its kernels took the captured calls' ids) */
            int found = tl_idset_has(&corr_seen, id) || tl_tree_has_gpus(tr, (uint32_t)u);
            if (kind[es->name[u]] == TL_LAUNCH_MEMSET) {
                h->n_memsets++;
                h->n_memsets_orphan += !found;
            } else {
                h->n_launches++;
                if (!found && n_win && in_capture(win, n_win, es, u)) {
                    h->n_launches_captured++;
                } else if (!found) {
                    h->n_launches_orphan++;
                    if (es->ts[u] >= last_gpu_start) h->n_launches_orphan_at_end++;
                }
            }
        }
        if (tl_is_gpu_cat(c) && (es->flags[u] & TL_F_TS) && tr->parent[u] == TL_NOUID) {
            if (id != TL_NONE && tl_idset_has(&corr_launch, id)) {
                h->n_gpu_unlinked_launched++;
                h->gpu_unlinked_launched_ns += es->dur[u];
            } else if (tl_tree_before_trace(tr, es, u)) {
                h->n_gpu_before_trace++;
                h->gpu_before_trace_ns += es->dur[u];
                if (es->ts[u] >= tr->first_launch_ns) {
                    h->n_gpu_before_trace_by_id++;
                    h->gpu_before_trace_by_id_ns += es->dur[u];
                }
            }
        }
        /* GPU work launched outside the steps (as trace:steps() assigns it: by its launch call's start, an
         * unlinked event by its own): the asynchronous tail of a step's work runs after the step's annotation
         * ends, and work launched before the trace is its own warning */
        if (h->n_steps && tl_is_gpu_cat(c) && (es->flags[u] & TL_F_TS)) {
            uint32_t rt = tr->parent[u];
            int64_t at = rt != TL_NOUID ? es->ts[rt] : es->ts[u];
            if (rt == TL_NOUID && tl_tree_before_trace(tr, es, u)) {
                /* counted above */
            } else if (at < h->steps_t0) {
                h->n_gpu_before_steps++;
                h->gpu_before_steps_ns += es->dur[u];
            } else if (at >= h->steps_t1) {
                h->n_gpu_after_steps++;
                h->gpu_after_steps_ns += es->dur[u];
            }
        }
    }
    /* streams: events of one (device, stream) must not overlap */
    if (gpu.n) {
        /* by (device, stream, ts); equal ones keep their order (UIDs) */
        int64_t *k = tl_xmalloc(3 * gpu.n * sizeof *k);
        for (size_t i = 0; i < gpu.n; i++) {
            k[i] = gpu.v[i].dev;
            k[gpu.n + i] = gpu.v[i].stream;
            k[2 * gpu.n + i] = gpu.v[i].ts;
        }
        tl_sort_rows_by_keys(gpu.v, gpu.n, sizeof *gpu.v, k, 3);
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
                /* launched with cudaLaunchKernelEx(C) / cuLaunchKernelEx: the launch attributes
                 * (programmatic dependent launch, Hopper and later) may let it start before the
                 * previous kernel ends, so the overlap can be real */
                uint32_t rt = tr->parent ? tr->parent[gpu.v[i].uid] : TL_NOUID;
                const char *how = rt != TL_NOUID ? tl_es_name(es, rt) : "";
                if (strstr(how, "LaunchKernelEx")) {
                    h->n_stream_overlaps_ex++;
                    if (ov > h->max_stream_overlap_ex_ns) h->max_stream_overlap_ex_ns = ov;
                } else {
                    h->n_stream_overlaps++;
                    if (ov > h->max_stream_overlap_ns) h->max_stream_overlap_ns = ov;
                }
            }
            if (gpu.v[i].end > end) end = gpu.v[i].end;
        }
    }
    if (h->t0 == INT64_MAX) h->t0 = h->t1 = 0;
    if (!h->n_steps) h->steps_t0 = h->steps_t1 = 0;
    free(gpu.v);
    free(kind);
    free(sync_call);
    free(win);
    tl_idset_free(&corr_seen);
    tl_idset_free(&corr_launch);
}

void tl_unlinked_gpu_compute(const tl_trace *t, tl_unlinked_gpu *u)
{
    const tl_event_store *es = &t->es;
    memset(u, 0, sizeof *u);
    static const char *const cats[3] = {"kernel", "gpu_memcpy", "gpu_memset"};
    uint32_t cid[3];
    for (int c = 0; c < 3; c++) cid[c] = tl_strpool_find(&es->cats, cats[c], strlen(cats[c]));
    tl_map groups; /* (category, name) -> group */
    tl_map_init(&groups, 64);
    size_t cap = 0;
    for (int c = 0; c < 3; c++) {
        if (cid[c] == UINT32_MAX) continue;
        for (size_t e = 0; e < es->n; e++) {
            if (es->cat_id[e] != cid[c]) continue;
            int64_t d = es->dur[e] > 0 ? es->dur[e] : 0;
            if ((es->flags[e] & TL_F_TS) && tl_is_gpu_cat(es->cat[e]) && tl_tree_before_trace(&t->tree, es, e)) {
                u->before_trace_ns += d;
                u->n_before_trace++;
                continue;
            }
            u->total_ns += d;
            /* linked, under a launch call that some CPU op may enclose */
            if (tl_is_gpu_cat(es->cat[e]) && t->tree.parent[e] != TL_NOUID && !t->tree.gpu_only) continue;
            u->unlinked_ns += d;
            u->count++;
            uint32_t gi = tl_map_get(&groups, cid[c], es->name[e]);
            if (gi == UINT32_MAX) {
                TL_GROW(u->g, cap, u->ng + 1);
                gi = (uint32_t)u->ng++;
                u->g[gi] = (tl_unlinked_group){(uint32_t)e, cid[c], es->name[e], 0, 0, d, d};
                tl_map_put(&groups, cid[c], es->name[e], gi);
            }
            tl_unlinked_group *g = &u->g[gi];
            g->count++;
            g->sum_ns += d;
            if (d < g->min_ns) g->min_ns = d;
            if (d > g->max_ns) g->max_ns = d;
        }
    }
    tl_map_free(&groups);
}

void tl_unlinked_gpu_free(tl_unlinked_gpu *u)
{
    free(u->g);
    memset(u, 0, sizeof *u);
}
