/* source.h — a byte source over a trace file.
 * Owns the file descriptor and, for gzip input, the decoder state and a
 * background thread that decompresses ahead into a small ring of chunks, so
 * that decompression and JSON scanning overlap on two cores (plain files are
 * read straight into the caller's buffer). gzip is detected
 * by its magic bytes (1f 8b), never by the file name; multi-member gzip files
 * are read to the end. Memory: a fixed ring (a few MiB), independent of the
 * file size, plus the chunks a caller has taken whole (tl_source_take) and
 * not yet handed back. Not shared between threads by callers. */
#ifndef TL_SOURCE_H
#define TL_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

typedef struct tl_source tl_source;

/* Opens path; on failure returns NULL and fills err ("PATH: reason"). */
tl_source *tl_source_open(const char *path, tl_error *err);

/* Copies up to cap bytes of decompressed data into buf. Returns the number
 * of bytes, 0 at the end of the data, or -1 with err filled (truncated or
 * corrupt gzip, read error). */
long tl_source_read(tl_source *src, char *buf, size_t cap, tl_error *err);

/* gzip only, before the first read or take: the size of the chunks the
 * decompressing thread fills (1 MiB by default), and pad (at most 4096)
 * zero bytes after each chunk's data (a taken buffer has bytes + pad). */
void tl_source_set_chunk(tl_source *src, size_t bytes, size_t pad);

/* gzip only, before the first read or take: once the decompressed data
 * passes max bytes (0 = no limit), reading fails with "PATH: decompressed
 * data past N bytes, the most this load may read" (a small file cannot
 * expand without bound). */
void tl_source_set_max_bytes(tl_source *src, uint64_t max);
#define TL_SOURCE_TOO_LARGE "the most this load may read"

/* gzip only, instead of tl_source_read (never after it): the next chunk of
 * decompressed data, whole, without a copy. The caller owns *buf (of the
 * chunk size) and hands it back with tl_source_give once read. Returns its
 * length (the chunk size, less only for the last), 0 at the end of the
 * data, or -1 with err filled. */
long tl_source_take(tl_source *src, char **buf, tl_error *err);
/* A buffer from tl_source_take, for the thread to fill again (or freed). */
void tl_source_give(tl_source *src, char *buf);

/* Plain files only: continue reading at byte offset off. */
int tl_source_seek(tl_source *src, uint64_t off, tl_error *err);
/* Plain files only: up to cap bytes at offset off, without moving. */
long tl_source_pread(tl_source *src, char *buf, size_t cap, uint64_t off);

int tl_source_is_gzip(const tl_source *src);
uint64_t tl_source_file_size(const tl_source *src);
void tl_source_close(tl_source *src);

#endif
