/* summary_file.h — the `.tls` rank summary (docs/ranks.md "The .tls
 * format"): what the per-rank pass of the multi-rank report keeps of one
 * rank trace — its collective records (records.h), the metadata tuples and
 * strings they use, the per-rank statistics (rank_stats.h, as the raw bytes
 * of tl_rank_stats, version and size checked), the few top-level facts the
 * cross-rank step needs, or the failure of that rank's pass. The same image
 * is the file written by `tracelens ranks summarize`, read by `tracelens
 * ranks reduce`, and the message an MPI process sends to process 0, so the
 * three paths reduce identical data. Owns the encoding and decoding; holds
 * no state between calls.
 *
 * Layout (integers little-endian, strings as u32 length + bytes):
 *   header (64 bytes): magic "\x89TLS\r\n\x1a\n", u32 format version,
 *   u32 header size, u32 flags (1 failed, 2 stats), u32 stats version, u32
 *   stats size, u32 byte-order tag of the stats bytes (0x01020304 in the
 *   writer's order), i64 rank (-1 unknown), u64 body size, u32 CRC-32 of
 *   the body, u32 0, u64 trace size in bytes;
 *   body: str trace path, str failure message, i64 distributedInfo
 *   world_size (-1 absent), i32 deviceProperties count, u32 n strings and
 *   the strings, u32 n tuples and per tuple 10 x (u32 string or
 *   0xffffffff, i64 integer value), u64 n records and per record (i64 ts,
 *   i64 dur, u32 position, u32 tuple), the stats bytes. */
#ifndef TL_RANKS_SUMMARY_FILE_H
#define TL_RANKS_SUMMARY_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "../util/sbuf.h"
#include "rank_stats.h"
#include "records.h"

#define TL_TLS_VERSION 1u
#define TL_TLS_HEADER_SIZE 64u

/* What the per-rank pass learns about one rank besides its records. */
typedef struct tl_rank_info {
    long rank;             /* -1: unknown (a failure before the rank was known) */
    int64_t dist_world;    /* distributedInfo.world_size, -1 when absent */
    int32_t device_count;  /* length of the top-level deviceProperties */
    uint64_t nrec;         /* collective records of the rank */
    uint64_t trace_bytes;  /* size of the trace file */
    int has_stats;         /* stats computed */
    tl_rank_stats stats;
} tl_rank_info;

/* Appends the image of one rank to out: every record of cs (a set holding
 * this rank only) with its tuples and strings, info, the trace path and, when
 * failure is not NULL, the failure message (then cs is not read). */
void tl_tls_encode(tl_sbuf *out, const tl_coll_set *cs, const tl_rank_info *info, const char *trace_path,
                   const char *failure);

/* The size of the image starting at buf (header checked: magic, version,
 * sizes): 0 with err set ("NAME: ...") when it is not one. */
size_t tl_tls_image_size(const uint8_t *buf, size_t len, const char *name, tl_error *err);

/* Decodes one image: appends its records to cs (its tuples and strings
 * interned into cs's, in the order the rank's own pass met them, so that
 * decoding the ranks in the order of a direct run gives the same set) and
 * fills info; *trace_path (when not NULL) gets a copy of the trace path.
 * Returns 0; 1 when the image records a failure (err = its message, info->rank
 * set, nothing appended); -1 with err naming `name` when the image is
 * invalid (bad magic, other format or stats version, truncated, checksum). */
int tl_tls_decode(const uint8_t *buf, size_t len, const char *name, tl_coll_set *cs, tl_rank_info *info,
                  char **trace_path, tl_error *err);

/* The same for a file (read whole). */
int tl_tls_read(const char *file, tl_coll_set *cs, tl_rank_info *info, tl_error *err);
/* The rank a .tls file holds, from its header only: 0, or -1 with err. */
int tl_tls_peek_rank(const char *file, long *rank, tl_error *err);

#endif
