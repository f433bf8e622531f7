/* kineto_scan.h — the single-pass Kineto trace scanner.
 * Reads a trace file (plain or gzip, through io/source) and fills an
 * EventStore: one row per element of `traceEvents`, typed columns for the
 * fields the core reads, the remaining args as a compact blob. It is a
 * validating JSON scanner specialised for the Kineto layout: no DOM, no
 * allocation per event, no recursion (nesting depth is bounded only by
 * memory). Its stage 1 is the byte classifier of structix.h. Large plain
 * files are scanned in parts and large gzip files in segments, one thread
 * per core, with the result of a sequential scan. Owns nothing after it
 * returns.
 *
 * Input limits (hostile input fails with a one-line error instead of
 * exhausting memory or overflowing later arithmetic):
 *   - one JSON value (an element of traceEvents, or a top-level value) may
 *     span at most max_value_bytes (default 64 MiB): only one such value is
 *     ever held in the read buffer, and whitespace between values is
 *     consumed as it streams by, so the buffer stays near that size whatever
 *     the file holds;
 *   - ts must lie in [TL_TS_MIN_NS, TL_TS_MAX_NS] and dur in
 *     [-TL_DUR_MAX_NS, TL_DUR_MAX_NS], and the (non-negative) durations of
 *     all events together stay at most TL_DUR_MAX_NS, so every end time,
 *     span, gap and sum of durations fits int64;
 *   - names, categories, pid/tid strings and keys may not hold a \u0000
 *     escape (they are C strings downstream); args values may (kept raw). */
#ifndef TL_KINETO_SCAN_H
#define TL_KINETO_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/event_store.h"
#include "../util/error.h"

typedef struct tl_scan_opts {
    /* Called about every 64 MiB of uncompressed input; may be NULL. */
    void (*progress)(void *ud, uint64_t bytes_done, uint64_t file_bytes, int gzip);
    void *progress_ud;
    /* Initial read-buffer size (0 = 4 MiB); tests use tiny buffers to
     * exercise every refill boundary. */
    size_t buffer_bytes;
    /* Plain files are scanned in this many parts on as many threads; 0 =
     * one per core for files of 64 MB and more, else 1. A gzip file with
     * parts > 1 (0: one per core from 8 MB of compressed file) is scanned by
     * that many threads, in segments of its decompressed bytes. */
    int parts;
    /* Segment size of a gzip file scanned in parallel (0 = 2 MiB); tests
     * use tiny ones. */
    size_t segment_bytes;
    /* The most bytes of trace text read (decompressed for gzip; a plain
     * file larger than that is refused at once); 0 = no limit. */
    uint64_t max_text_bytes;
    /* The largest single JSON value, in bytes (0 = TL_SCAN_MAX_VALUE_DEFAULT). */
    uint64_t max_value_bytes;
    /* The byte classifier (a tl_sx_path of structix.h): 0 = the
     * TRACELENS_SCAN environment variable (fallback, sse4.2, avx2, neon)
     * when set, else the best the CPU runs. */
    int scan_path;
    /* The args of host events (categories cpu_op, python_function,
     * user_annotation, cpu_instant_event) are checked as JSON but not
     * kept: their events have no args. For a pass that reads only the
     * args of GPU events, launches and flows (the multi-rank pass), which
     * then skips much of a trace's bytes without interning them. */
    int skip_host_args;
} tl_scan_opts;

/* 64 MiB; callers keep it below 4 GiB (a string's length is a uint32 in
 * the pools): tl_load_opts.max_value_mb is 1..4095. */
#define TL_SCAN_MAX_VALUE_DEFAULT ((uint64_t)64 << 20)

/* Time bounds in ns (1e15 us is about 31.7 years). */
#define TL_TS_MIN_NS (-(int64_t)1000000000000000000)   /* -1e15 us */
#define TL_TS_MAX_NS ((int64_t)4000000000000000000)     /* 4e15 us */
#define TL_DUR_MAX_NS ((int64_t)1000000000000000000)    /* 1e15 us, also the sum */

/* Loads path into es (initialised by the caller). On failure returns -1
 * and sets err to "PATH: byte OFFSET (event N): what was expected". */
int tl_scan_file(const char *path, tl_event_store *es, const tl_scan_opts *opts, tl_error *err);

/* Scans an in-memory document (tests, fuzzing). name is used in messages;
 * opts may be NULL (only max_value_bytes and scan_path are read). */
int tl_scan_buffer(const char *name, const char *data, size_t len, tl_event_store *es, tl_error *err);
int tl_scan_buffer_opts(const char *name, const char *data, size_t len, const tl_scan_opts *opts,
                        tl_event_store *es, tl_error *err);

/* Parses a JSON number's text exactly into int64 nanoseconds, reading it as
 * microseconds (ties to even beyond the third fraction digit). Returns 0 on
 * success, -1 if the text is not a number or does not fit. */
int tl_parse_us_to_ns(const char *s, size_t len, int64_t *out);

#endif
