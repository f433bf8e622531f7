/* kineto_scan.h — the single-pass Kineto trace scanner.
 * Reads a trace file (plain or gzip, through io/source) and fills an
 * EventStore: one row per element of `traceEvents`, typed columns for the
 * fields the core reads, the remaining args as a compact blob. It is a
 * validating JSON scanner specialised for the Kineto layout: no DOM, no
 * allocation per event, no recursion (nesting depth is bounded only by
 * memory). Owns nothing after it returns. */
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
     * one per core for files of 64 MB and more, else 1. */
    int parts;
} tl_scan_opts;

/* Loads path into es (initialised by the caller). On failure returns -1
 * and sets err to "PATH: byte OFFSET (event N): what was expected". */
int tl_scan_file(const char *path, tl_event_store *es, const tl_scan_opts *opts, tl_error *err);

/* Scans an in-memory document (tests, fuzzing). name is used in messages. */
int tl_scan_buffer(const char *name, const char *data, size_t len, tl_event_store *es, tl_error *err);

/* Parses a JSON number's text exactly into int64 nanoseconds, reading it as
 * microseconds (ties to even beyond the third fraction digit). Returns 0 on
 * success, -1 if the text is not a number or does not fit. */
int tl_parse_us_to_ns(const char *s, size_t len, int64_t *out);

#endif
