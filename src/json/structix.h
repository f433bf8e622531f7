/* structix.h — stage 1 of the JSON scanner: the byte classifier.
 * Classifies 64 bytes at a time into bit masks (bit i = byte i of the
 * block): quotes, backslashes, structural characters ({ } [ ] : ,),
 * whitespace, control bytes (< 0x20, which includes the zero sentinel the
 * scanner pads its buffer with) and bytes >= 0x80. One implementation per
 * instruction set — AVX2 and SSE4.2 on x86-64 (compiled with target
 * attributes, picked at run time from the CPU), NEON on arm64, and a
 * portable one — all giving the same masks; TRACELENS_SCAN (or the
 * scanner's option) forces one, so tests and fuzzing cover each.
 * On top of the masks, portable string tracking: which bytes are escaped
 * (after an odd run of backslashes), which are inside strings, and the
 * structural characters outside strings, carried from one block to the
 * next. Owns nothing; no state outside the caller's. */
#ifndef TL_STRUCTIX_H
#define TL_STRUCTIX_H

#include <stddef.h>
#include <stdint.h>

typedef enum tl_sx_path {
    TL_SX_AUTO = 0, /* TRACELENS_SCAN if set, else the best the CPU has */
    TL_SX_FALLBACK,
    TL_SX_SSE42,
    TL_SX_AVX2,
    TL_SX_NEON,
    TL_SX_NPATHS
} tl_sx_path;

typedef struct tl_sx_masks {
    uint64_t quote, bslash, structural, space, ctrl, high;
} tl_sx_masks;

/* The scanner's two per-block masks: `stop` = quote | backslash | control |
 * high (where a string's fast scan stops), `nonspace` = ~whitespace. */
typedef struct tl_sx_scan_masks {
    uint64_t stop, nonspace;
} tl_sx_scan_masks;

/* "fallback", "sse4.2", "avx2", "neon" (and "auto"). */
const char *tl_sx_name(tl_sx_path path);

/* Does this machine (CPU and build) run the path? Auto and fallback: always. */
int tl_sx_supported(tl_sx_path path);

/* The path to use: `want` when it is not auto; else TRACELENS_SCAN (auto,
 * fallback, sse4.2 or sse, avx2, neon) when set; else the best supported.
 * Returns -1 with a one-line message in msg for an unknown name or a path
 * this machine cannot run. */
int tl_sx_resolve(tl_sx_path want, tl_sx_path *out, char *msg, size_t cap);

/* All masks of the 64 bytes at p (all readable) with `path` (not auto). */
void tl_sx_classify(tl_sx_path path, const uint8_t *p, tl_sx_masks *out);

/* The scanner's masks of n blocks of 64 bytes at p (n * 64 bytes readable). */
void tl_sx_scan_blocks(tl_sx_path path, const uint8_t *p, size_t n, tl_sx_scan_masks *out);

/* String tracking across blocks: start with {0}. */
typedef struct tl_sx_strstate {
    uint64_t escaped_next; /* 1: the first byte of the next block is escaped */
    uint64_t in_string;    /* all ones: the next block starts inside a string */
} tl_sx_strstate;

/* From one block's masks: *escaped (bytes after an odd run of
 * backslashes), *inside (bytes inside strings, opening quotes included,
 * closing quotes not), and the return value: structural characters outside
 * strings. Updates st for the next block. */
uint64_t tl_sx_strings(const tl_sx_masks *m, tl_sx_strstate *st, uint64_t *escaped, uint64_t *inside);

#endif
