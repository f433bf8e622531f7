/* records.h — the per-rank pass of the multi-rank collective report
 * (spec multi-rank.md §3, §11.1): from one loaded rank trace, the compact
 * records of its collective kernels. Owns the record set: an array of
 * fixed-size records (rank, file position, ts, dur in int64 ns, metadata
 * id) plus the interned metadata tuples and their strings, shared by all
 * ranks, so that its size grows with the number of collective kernels and
 * not with the size of the traces (the caller releases each trace after
 * tl_coll_extract). Also reads the two top-level fields the report needs
 * from a trace: distributedInfo.rank and the deviceProperties count. */
#ifndef TL_RANKS_RECORDS_H
#define TL_RANKS_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/trace.h"
#include "../util/error.h"
#include "../util/hashmap.h"
#include "../util/strpool.h"

/* The 10 metadata args of a collective kernel (§3.2), in the reference's order. */
enum {
    TL_CM_PG_NAME, TL_CM_PG_RANKS, TL_CM_COLL_NAME, TL_CM_GROUP_SIZE, TL_CM_DTYPE,
    TL_CM_IN_NELEMS, TL_CM_OUT_NELEMS, TL_CM_IN_SPLIT, TL_CM_OUT_SPLIT, TL_CM_STREAM,
    TL_CM_N
};
extern const char *const tl_cm_names[TL_CM_N];

/* One distinct metadata tuple. */
typedef struct tl_coll_meta {
    uint32_t text[TL_CM_N]; /* pool id of the value as the reference prints it; UINT32_MAX = None */
    int64_t num[TL_CM_N];   /* the integer value of an integer arg, else TL_NONE */
} tl_coll_meta;

/* One collective kernel of one rank. */
typedef struct tl_coll_rec {
    int64_t ts, dur;  /* ns */
    uint32_t rank;
    uint32_t pos;     /* position among the rank's collective kernels (file order) */
    uint32_t meta;    /* index into tl_coll_set.meta */
    uint32_t index;   /* index_in_group, set by the report */
} tl_coll_rec;

typedef struct tl_coll_set {
    tl_coll_rec *rec;
    size_t n, cap;
    tl_coll_meta *meta;
    size_t nmeta, capmeta;
    tl_strpool pool;     /* metadata strings */
    tl_strpool keys;     /* tuple keys -> meta index (same ids) */
} tl_coll_set;

void tl_coll_set_init(tl_coll_set *cs);
void tl_coll_set_free(tl_coll_set *cs);

/* Appends the records of t's collective kernels (§3.1: cat kernel, name
 * containing nccl / rccl / cross_device_reduce case-insensitively, with a
 * correlation or an External id), in file order, as rank `rank`. Returns
 * the number of records added. */
size_t tl_coll_extract(tl_coll_set *cs, const tl_trace *t, uint32_t rank);

/* Orders the records rank-major, keeping the file order within a rank
 * (stable), whatever order the ranks were loaded in. */
void tl_coll_set_sort_by_rank(tl_coll_set *cs);

/* An integer field of the trace's distributedInfo (rank, world_size): 1
 * with *out set, 0 when absent or not an integer. */
int tl_trace_distinfo_int(const tl_trace *t, const char *field, int64_t *out);
/* Length of the top-level deviceProperties list (0 when absent or empty). */
int tl_trace_device_count(const tl_trace *t);

#endif
