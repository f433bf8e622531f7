/* timeline.h — GPU busy/idle/overlap accounting in integer nanoseconds.
 * Owns nothing persistent: it computes a tl_timeline value from the linked
 * GPU events of a tree (perf-report spec §4): interval union/subtraction,
 * the computation / communication / memcpy buckets and the micro/macro idle
 * split. Also the bucket classifier of GPU event names. */
#ifndef TL_TIMELINE_H
#define TL_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "event_store.h"
#include "tree.h"

typedef enum tl_bucket { TL_B_COMP = 0, TL_B_COMM, TL_B_MEMCPY } tl_bucket;

typedef struct tl_timeline {
    int64_t computation, exposed_comm, exposed_memcpy, busy, idle, total, total_comm, total_memcpy;
    int64_t micro_idle, macro_idle;     /* when micro_idle_thresh_ns >= 0 */
    int have_micro;
    size_t n_events;
} tl_timeline;

typedef struct tl_interval {
    int64_t s, e;
} tl_interval;

/* Name-based rules: communication regexes (nccl|rccl|cross_device_reduce,
 * case-insensitive), ROCm legacy copy / fill kernels. */
int tl_name_is_comm(const char *name);
tl_bucket tl_gpu_bucket(uint8_t cat, const char *name);

/* Sorts and merges in place (touching intervals merge); returns new count. */
size_t tl_merge(tl_interval *iv, size_t n);
/* out = b − a (both merged); out must hold na + nb entries; returns count. */
size_t tl_subtract(const tl_interval *a, size_t na, const tl_interval *b, size_t nb, tl_interval *out);
int64_t tl_length(const tl_interval *iv, size_t n);

/* include_unlinked, for the functions below: which GPU events no launch
 * links to join the linked ones. */
enum {
    TL_UNLINKED_NONE = 0,     /* none (the reference's timeline) */
    TL_UNLINKED_ALL = 1,      /* every one (--include_unlinked_kernels) */
    TL_UNLINKED_LAUNCHED = 2, /* all but those launched before the trace (tl_tree_before_trace) */
};

/* Does the timeline's set (include_unlinked: TL_UNLINKED_*) hold GPU event i? */
static inline int tl_timeline_holds(const tl_event_store *es, const tl_tree *t, int include_unlinked, size_t i)
{
    if (t->in_tree[i] || include_unlinked == TL_UNLINKED_ALL) return 1;
    return include_unlinked == TL_UNLINKED_LAUNCHED && !tl_tree_before_trace(t, es, i);
}

/* The bucket (TL_B_*) of every GPU event with a timestamp into bk (es->n
 * entries; 0xff for the others, for unlinked ones unless include_unlinked,
 * and where flags[i] != want when flags is given); events per bucket into
 * cnt. Returns the number of events bucketed. */
size_t tl_gpu_buckets(const tl_event_store *es, const tl_tree *t, int include_unlinked, const uint8_t *flags,
                      uint8_t want, uint8_t *bk, size_t cnt[3]);

/* Interval-union figures of bucketed events (ns), with the number of merged
 * intervals behind each length. */
typedef struct tl_unions {
    int64_t computation, total_comm, total_memcpy, exposed_comm, exposed_memcpy, busy, total;
    int64_t micro_idle, macro_idle; /* gaps between busy intervals shorter / not shorter than the threshold */
    size_t n_comp, n_comm, n_memcpy, n_exposed_comm, n_exposed_memcpy, n_events;
} tl_unions;

/* The unions of the n events bucketed in bk (tl_gpu_buckets); micro_thresh_ns
 * < 0 skips the idle split. All zero when n is 0. */
void tl_bucket_unions(const tl_event_store *es, const uint8_t *bk, size_t n,
                      int64_t micro_thresh_ns, tl_unions *u);

/* The same unions over the GPU events uids[0..n) (each with a bucket in
 * bk, indexed by uid): per-step and other subsets without a pass over the
 * whole store. */
void tl_unions_of(const tl_event_store *es, const uint32_t *uids, const uint8_t *bk, size_t n,
                  int64_t micro_thresh_ns, tl_unions *u);

/* The GPU timeline over the linked GPU events (all when include_unlinked).
 * micro_idle_thresh_ns < 0 disables the micro/macro split. Returns -1 when
 * there are no GPU events. */
int tl_timeline_compute(const tl_event_store *es, const tl_tree *t, int include_unlinked,
                        int64_t micro_idle_thresh_ns, tl_timeline *out);

/* The same over a subset: only the events with flags[uid] == want count
 * (flags NULL: all). --detect_recompute builds one timeline per value of
 * the recompute flag (perf-report spec §4.6). Returns -1 when the subset
 * has no GPU events. */
int tl_timeline_compute_subset(const tl_event_store *es, const tl_tree *t, int include_unlinked,
                               int64_t micro_idle_thresh_ns, const uint8_t *flags, uint8_t want, tl_timeline *out);

/* The kernel overlap sweep (perf-report spec §4.7): for every GPU event of
 * the timeline's set (linked ones, or all with include_unlinked) the other
 * events it overlaps by at least 1 µs, excluding pairs on the same stream
 * (both streams known and equal). Touching intervals do not overlap. With
 * `block` (per event uid, may be NULL) only events of the same block pair
 * up: the reference sweeps each --detect_recompute timeline subset on its
 * own. Owns its arrays; read-only once built. */
typedef struct tl_overlaps {
    size_t n;          /* events in the sweep set */
    uint32_t *uid;     /* their uids, ascending */
    uint32_t *off;     /* n + 1 offsets into adj */
    uint32_t *adj;     /* overlapping uids of uid[i]: adj[off[i] .. off[i+1]), ascending (ts, uid) */
    size_t n_pairs;    /* overlapping pairs (each counted once) */
} tl_overlaps;

void tl_overlap_sweep(const tl_event_store *es, const tl_tree *t, int include_unlinked, const uint8_t *block,
                      tl_overlaps *out);
void tl_overlaps_free(tl_overlaps *o);
/* The events that GPU event g overlaps (ascending ts, then uid); returns
 * their count (0 when g is not in the sweep set). */
size_t tl_overlaps_of(const tl_overlaps *o, uint32_t g, const uint32_t **list);

/* Busy time (union length) of a list of event uids. */
int64_t tl_busy_time(const tl_event_store *es, const uint32_t *uids, size_t n);

#endif
