/* copies.h — memory copies and sets by direction (issue 16): the GPU
 * memcpy / memset events of a trace grouped by direction (H2D, D2H, D2D,
 * P2P, memset) and, for host copies, by the host memory (pageable, pinned,
 * not said), with their bytes and achieved bandwidth. Owns nothing: fills a
 * value struct.
 *
 * Rules (docs/compat.md "Memory copies and sets"):
 *   - every gpu_memcpy / gpu_memset event with a ts, linked or not;
 *   - the direction from the name, case-blind: PtoP / peer -> P2P; DtoH /
 *     "device -> host" / DeviceToHost / device_to_host -> D2H; the same
 *     spellings for H2D and D2D (the multi-kernel analysis's rule, with
 *     P2P first); a gpu_memset is a set; the rest of the copies is other;
 *   - the host memory of a host copy from the words in its parentheses
 *     ("Memcpy HtoD (Pageable -> Device)"): pageable, pinned, else not said
 *     ("Host", AMD names);
 *   - bytes: args.bytes when an integer > 0; the bandwidth of a group is
 *     Σ bytes / Σ dur over the events that have bytes (GB/s = bytes/ns). */
#ifndef TL_COPIES_H
#define TL_COPIES_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

enum { TL_CP_H2D = 0, TL_CP_D2H, TL_CP_D2D, TL_CP_P2P, TL_CP_MEMSET, TL_CP_OTHER, TL_CP_NDIR };
enum { TL_HOSTMEM_NONE = 0, TL_HOSTMEM_PAGEABLE, TL_HOSTMEM_PINNED, TL_HOSTMEM_UNSAID, TL_HOSTMEM_N };

typedef struct tl_copy_group {
    size_t count;
    int64_t dur_ns;        /* Σ dur */
    size_t n_bytes;        /* events with bytes */
    int64_t bytes;         /* Σ of their bytes */
    int64_t bytes_ns;      /* Σ of their dur */
    int64_t max_bytes;     /* the largest transfer */
} tl_copy_group;

typedef struct tl_copies {
    /* [direction][host memory]: H2D and D2H use PAGEABLE, PINNED, UNSAID;
     * the others NONE only */
    tl_copy_group g[TL_CP_NDIR][TL_HOSTMEM_N];
    size_t n;              /* events counted */
} tl_copies;

/* "H2D", "D2H", "D2D", "P2P", "memset", "other" */
const char *tl_copy_dir_name(int dir);
/* "", "pageable", "pinned", "not said" */
const char *tl_hostmem_name(int mem);
/* The direction of a copy by its lowercased name s, by the spellings above:
 * TL_CP_D2H, TL_CP_H2D, TL_CP_D2D or TL_CP_OTHER; with peer, a PtoP / peer
 * name is TL_CP_P2P first; without it, it goes by its other words (the
 * reference's multi-kernel rule: "PtoP (Device -> Device)" is D2D). */
int tl_copy_direction(const char *s, int peer);

/* The direction and host memory of a GPU copy / set event. */
void tl_copy_classify(uint8_t cat, const char *name, int *dir, int *mem);
void tl_copies_compute(const tl_trace *t, tl_copies *out);

#endif
