/* event_store.h — the columnar, immutable-after-load store of trace events.
 * Owns: one struct-of-arrays with a row per element of `traceEvents` (the row
 * index is the event's UID), the string pools (names, categories, args keys,
 * raw args values), the pid/tid value table and the table of (pid, tid)
 * pairs, the compact per-event args blob, the top-level keys of the document
 * (raw JSON text, secrets removed) and the metadata (ph "M") table. After
 * loading nothing is written, so any number of threads may read it
 * concurrently. (Loading includes the optional pseudo-op
 * pass, pseudo_ops.h, which appends events before the store is shared.) */
#ifndef TL_EVENT_STORE_H
#define TL_EVENT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/hashmap.h"
#include "../util/strpool.h"

#define TL_NONE INT64_MIN /* an absent int64 value */

/* Categories the core reasons about; any other category string keeps its
 * interned id in cat_id and gets TL_CAT_OTHER here. */
typedef enum tl_cat {
    TL_CAT_NONE = 0,      /* no "cat" field */
    TL_CAT_CPU_OP,
    TL_CAT_CUDA_RUNTIME,
    TL_CAT_CUDA_DRIVER,
    TL_CAT_PYTHON_FUNCTION,
    TL_CAT_KERNEL,
    TL_CAT_GPU_MEMCPY,
    TL_CAT_GPU_MEMSET,
    TL_CAT_AC2G,
    TL_CAT_USER_ANNOTATION,
    TL_CAT_GPU_USER_ANNOTATION,
    TL_CAT_OTHER,
} tl_cat;

/* Event flags */
enum {
    TL_F_TS = 1,      /* has a numeric ts */
    TL_F_DUR = 2,     /* has a numeric dur */
    TL_F_ARGS = 4,    /* has an args object */
    TL_F_NEGDUR = 8,  /* dur was negative in the file (stored as 0) */
    TL_F_TS_INT = 16, /* ts was a plain JSON integer (older traces: integer us) */
    TL_F_DUR_INT = 32, /* dur was a plain JSON integer (the reference keeps a Python int) */
};

/* Well-known args keys: interned first, so their ids are these constants. */
typedef enum tl_key {
    TL_K_CORRELATION = 0,
    TL_K_EXTERNAL_ID,
    TL_K_SEQUENCE_NUMBER,
    TL_K_STREAM,
    TL_K_INPUT_DIMS,
    TL_K_INPUT_TYPE,
    TL_K_INPUT_STRIDES,
    TL_K_CONCRETE_INPUTS,
    TL_K_NAME,
    TL_K_LABELS,
    TL_K_SORT_INDEX,
    TL_K_FWD_THREAD_ID,
    TL_K_KERNEL_FILE,
    TL_K_OUTPUT_TYPE,
    TL_K_GRID,
    TL_K_BLOCK,
    TL_K_BYTES,
    TL_K__COUNT
} tl_key;

/* pid/tid values: ints and strings are different identities (7 != "7"). */
typedef struct tl_idval {
    int64_t i;      /* the integer, or the names id of the text */
    uint8_t kind;   /* 0 = int, 1 = string, 2 = absent/null, 3 = other JSON value (text) */
} tl_idval;

/* args blob encoding (per event, consecutive): varint key id, then a tag:
 *   TL_AV_INT  : zigzag varint (an integer that fits int64, except INT64_MIN,
 *                which is TL_NONE in the typed columns and so stays raw text)
 *   TL_AV_RAW  : varint id into `values` (raw JSON text of any other value,
 *                exactly as in the file: strings keep their quotes)        */
enum { TL_AV_INT = 0, TL_AV_RAW = 1 };

/* A thread of the trace: its pid and tid, as idvals ids. */
typedef struct tl_thread_ref {
    uint32_t pid, tid;
} tl_thread_ref;

typedef struct tl_meta_entry {
    uint32_t pid, tid;  /* idval ids */
    uint32_t name;      /* interned M-event name, e.g. process_name */
    uint32_t value;     /* values id: raw JSON text of args[label] */
} tl_meta_entry;

typedef struct tl_top_entry {
    uint32_t key;       /* keys id */
    char *raw;          /* raw JSON text of the value (owned) */
    size_t len;
} tl_top_entry;

typedef struct tl_event_store {
    size_t n, cap;
    int64_t *ts, *dur;      /* ns; dur >= 0 (negative in file -> 0 + TL_F_NEGDUR) */
    /* args.correlation, or the flow `id` for ph s/f (integers; INT64_MIN
     * stays raw), read with tl_es_corr and written with tl_es_set_corr:
     * values 0 .. 2^32-3 in corr_lo itself, TL_CORR_ABSENT for none, and
     * TL_CORR_BIG for any other value, which corr_big holds (by uid, in uid
     * order). */
    uint32_t *corr_lo;
    struct tl_corr_big { uint32_t uid; int64_t v; } *corr_big;
    size_t n_corr_big, cap_corr_big;
    uint32_t *name;         /* names id */
    uint32_t *cat_id;       /* cats id (the category string) */
    uint8_t *cat;           /* tl_cat */
    uint8_t *ph;            /* the ph character, 0 when absent */
    uint8_t *flags;
    /* the (pid, tid) of event i: threads[thr[i]], read with tl_es_pid /
     * tl_es_tid and written with tl_es_set_thread; each distinct pair is
     * kept once (a trace has a few dozen), so an event costs 4 bytes */
    uint32_t *thr;
    /* args of event i: blob[tl_es_args_at(i) .. tl_es_args_at(i + 1)). The
     * n+1 offsets are kept modulo 2^args_off_bits (32; fewer only when a test
     * asks, TRACELENS_ARGS_OFF_BITS): args_wraps lists, in order, the event
     * indices from which the offsets carry one more 2^args_off_bits (empty
     * while the blob is under 4 GiB). Written only by tl_es_set_args_end. */
    uint32_t *args_off;
    uint32_t *args_wraps;
    uint32_t n_args_wraps, cap_args_wraps;
    uint8_t args_off_bits;
    uint64_t args_base, args_next_wrap; /* the writer's window: n_args_wraps << bits, one wrap further */

    uint8_t *blob;
    size_t blob_len, blob_cap;

    tl_strpool names, cats, keys, values;
    tl_thread_ref *threads;
    uint32_t n_threads, cap_threads;
    uint32_t thread_hint;   /* the last pair found or added: events come in runs of one thread */
    tl_map thread_ix;       /* (pid, tid) -> threads index */
    tl_idval *idvals;
    uint32_t n_idvals, cap_idvals;
    uint32_t *idval_slots;  /* hash of idvals: index+1 */
    uint32_t n_idval_slots;

    /* (seq, uid) for every event whose args carry an integer Sequence number */
    struct { int64_t seq; uint32_t uid; } *seq_pairs;
    size_t n_seq, cap_seq;

    tl_meta_entry *meta;
    size_t n_meta, cap_meta;

    tl_top_entry *top;
    size_t n_top, cap_top;
    int bare_array;         /* the document was a bare array of events */
    int dropped_metadata;   /* a top-level `metadata` block was seen and dropped */
    int parts_joined;       /* parallel scan: parts joined after the first */

    uint64_t bytes;         /* uncompressed bytes scanned */
    uint64_t file_bytes;
    int gzip;
} tl_event_store;

void tl_es_init(tl_event_store *es);
void tl_es_free(tl_event_store *es);
/* Moves every event of src after those of dst (ids remapped), taking over
 * its metadata and top-level keys; src is freed. Used to join the parts of a
 * file scanned in parallel. */
void tl_es_append(tl_event_store *dst, tl_event_store *src);
/* The same, but src is then emptied (tl_es_clear) rather than freed. */
void tl_es_append_clear(tl_event_store *dst, tl_event_store *src);
/* Empties es, keeping the memory of its columns and args blob for the next
 * events (a segmented scan reuses a few stores). */
void tl_es_clear(tl_event_store *es);
/* A deep copy of src into dst (uninitialised); every id of the copy equals
 * the source's. Used to derive a store that may then be extended (pseudo ops
 * for one report) while the original stays shared and unchanged. */
void tl_es_copy(tl_event_store *dst, const tl_event_store *src);
/* Grows every column to hold nc events (the scanner's append path). */
void tl_es_grow(tl_event_store *es, size_t nc);
/* Returns the memory past the events (unused capacity, the rest of the
 * huge pages the columns end in) to the kernel; the store stays usable and
 * can grow again. */
void tl_es_trim(tl_event_store *es);

uint32_t tl_es_idval(tl_event_store *es, uint8_t kind, int64_t i);

/* The threads index of the pair (pid, tid) (idvals ids), added if new. */
uint32_t tl_es_thread_slow(tl_event_store *es, uint32_t pid, uint32_t tid);
static inline uint32_t tl_es_thread(tl_event_store *es, uint32_t pid, uint32_t tid)
{
    uint32_t h = es->thread_hint;
    if (h < es->n_threads && es->threads[h].pid == pid && es->threads[h].tid == tid) return h;
    return tl_es_thread_slow(es, pid, tid);
}
/* Event i's pid and tid (idvals ids), and setting both. */
static inline uint32_t tl_es_pid(const tl_event_store *es, size_t i) { return es->threads[es->thr[i]].pid; }
static inline uint32_t tl_es_tid(const tl_event_store *es, size_t i) { return es->threads[es->thr[i]].tid; }
static inline void tl_es_set_thread(tl_event_store *es, size_t i, uint32_t pid, uint32_t tid)
{
    es->thr[i] = tl_es_thread(es, pid, tid);
}
/* Finds without inserting; UINT32_MAX when absent. */
uint32_t tl_es_find_idval(const tl_event_store *es, uint8_t kind, int64_t i);

static inline const char *tl_es_name(const tl_event_store *es, size_t ev)
{
    return tl_strpool_get(&es->names, es->name[ev]);
}
static inline int64_t tl_es_end(const tl_event_store *es, size_t ev)
{
    return es->ts[ev] + es->dur[ev];
}

/* The offset in the blob where the args of event i start (i == n: where
 * they end). */
uint64_t tl_es_args_wrapped(const tl_event_store *es, size_t i);
static inline uint64_t tl_es_args_at(const tl_event_store *es, size_t i)
{
    if (__builtin_expect(es->n_args_wraps != 0, 0)) return tl_es_args_wrapped(es, i);
    return es->args_off[i];
}
/* Records that the args of event i - 1 end at blob offset `end`: calls come
 * in order (i and end never decrease; the last i may be written again). */
void tl_es_args_wrap(tl_event_store *es, size_t i, uint64_t end);
static inline void tl_es_set_args_end(tl_event_store *es, size_t i, uint64_t end)
{
    if (__builtin_expect(end < es->args_next_wrap, 1)) es->args_off[i] = (uint32_t)(end - es->args_base);
    else tl_es_args_wrap(es, i, end);
}

enum { TL_CORR_BIG = 0xFFFFFFFEu, TL_CORR_ABSENT = 0xFFFFFFFFu };
int64_t tl_es_corr_big(const tl_event_store *es, size_t i);
void tl_es_set_corr_big(tl_event_store *es, size_t i, int64_t v);
/* The correlation (or flow id) of event i, TL_NONE when it has none. */
static inline int64_t tl_es_corr(const tl_event_store *es, size_t i)
{
    uint32_t v = es->corr_lo[i];
    if (__builtin_expect(v < TL_CORR_BIG, 1)) return v;
    return v == TL_CORR_ABSENT ? TL_NONE : tl_es_corr_big(es, i);
}
static inline void tl_es_set_corr(tl_event_store *es, size_t i, int64_t v)
{
    if (v >= 0 && v < (int64_t)TL_CORR_BIG) es->corr_lo[i] = (uint32_t)v;
    else if (v == TL_NONE) es->corr_lo[i] = TL_CORR_ABSENT;
    else tl_es_set_corr_big(es, i, v);
}
/* Appends to dst's corr_big the values of src's events [from, from + n)
 * as those of dst's events from `at` on (after every uid dst has). */
void tl_es_copy_corr_big(tl_event_store *dst, size_t at, const tl_event_store *src, size_t from, size_t n);

/* Args lookup in the blob. Returns 1 and sets *out when the key holds an
 * integer; 0 otherwise. */
int tl_es_arg_int(const tl_event_store *es, size_t ev, uint32_t key, int64_t *out);
/* Returns the raw JSON text (values id) of a non-integer value, or
 * UINT32_MAX; *is_int tells when the key exists as an integer instead. */
uint32_t tl_es_arg_raw(const tl_event_store *es, size_t ev, uint32_t key, int *is_int);

/* Iterates the blob of one event. */
typedef struct tl_arg_iter {
    const uint8_t *p, *end;
} tl_arg_iter;
typedef struct tl_arg {
    uint32_t key;
    int tag;
    int64_t i;      /* TL_AV_INT value, or values id for TL_AV_RAW */
} tl_arg;
static inline void tl_es_args_begin(const tl_event_store *es, size_t ev, tl_arg_iter *it)
{
    if (!es->blob) { /* no event has args yet */
        it->p = it->end = NULL;
        return;
    }
    it->p = es->blob + tl_es_args_at(es, ev);
    it->end = es->blob + tl_es_args_at(es, ev + 1);
}

/* Varint helpers shared by the writer (scanner) and readers. */
static inline size_t tl_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}
/* Signed ints are stored zigzag-coded (small magnitudes, small varints). */
static inline uint64_t tl_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t tl_unzigzag(uint64_t z) { return (int64_t)((z >> 1) ^ (~(z & 1) + 1)); }
static inline uint64_t tl_get_varint(const uint8_t **pp)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    int shift = 0;
    while (*p & 0x80) {
        v |= (uint64_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    v |= (uint64_t)(*p++) << shift;
    *pp = p;
    return v;
}

/* The next argument of the iteration (0 at the end); one-byte varints, the
 * common case, without a call. */
static inline int tl_es_args_next(tl_arg_iter *it, tl_arg *a)
{
    if (it->p >= it->end) return 0;
    a->key = (uint32_t)(*it->p < 0x80 ? *it->p++ : tl_get_varint(&it->p));
    a->tag = *it->p++;
    uint64_t v = *it->p < 0x80 ? *it->p++ : tl_get_varint(&it->p);
    a->i = a->tag == TL_AV_INT ? tl_unzigzag(v) : (int64_t)v;
    return 1;
}

/* Metadata lookup (§9.3 of the trace-format spec): the raw JSON value of the
 * M event `name` at (pid, tid), last one in file order; UINT32_MAX if none. */
uint32_t tl_es_meta(const tl_event_store *es, uint32_t pid, uint32_t tid, const char *name);

#endif
