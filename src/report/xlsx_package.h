/* xlsx_package.h — rewrites an xlsx package (a zip): the entries of a
 * skeleton workbook are copied as they are (still compressed), except the
 * ones named, whose new text is produced by the caller and deflated as it
 * comes (ISA-L, fast level) into the new zip (minizip; ZIP64 where an entry
 * may pass 4 GiB); a large entry (over 1 MB of text) is deflated on a thread
 * of its own while the caller writes the text, in the same blocks, so the
 * bytes are the same.
 *
 * Owns the two zip handles, the deflate stream and its buffers, and the
 * deflate thread for one call.
 * Replaced entries are written first, in the order given, then the others in
 * the skeleton's order. */
#ifndef TL_XLSX_PACKAGE_H
#define TL_XLSX_PACKAGE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

/* One replaced entry being written. */
typedef struct tl_xlsx_entry tl_xlsx_entry;

/* Appends n bytes of the entry's text; non-zero on a write error. Usable as
 * a tl_xlsx_sink with the entry as its context. */
int tl_xlsx_entry_write(void *entry, const char *p, size_t n);

typedef struct tl_xlsx_replace {
    const char *name; /* the zip entry, e.g. "xl/worksheets/sheet1.xml" */
    /* An upper bound on the new text's size given the skeleton's text of the
     * entry (old, old_len), called just before the entry is opened. */
    uint64_t (*bound)(void *ctx, size_t i, const char *old, size_t old_len);
    /* Writes the new text with tl_xlsx_entry_write; non-zero fails. */
    int (*fill)(void *ctx, size_t i, const char *old, size_t old_len, tl_xlsx_entry *out);
} tl_xlsx_replace;

/* Writes path from the skeleton workbook at skeleton with entries
 * repl[0..n) replaced (each must exist in the skeleton). */
int tl_xlsx_repack(const char *skeleton, const char *path, const tl_xlsx_replace *repl, size_t n, void *ctx,
                   tl_error *err);

#endif
