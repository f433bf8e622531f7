/* outfile.h — output files that appear whole or not at all.
 * Owns a FILE* on a temporary name next to the destination; commit renames
 * it into place, abort (or a failed write) removes it. Also the text rules
 * of CSV cells as pandas writes them. */
#ifndef TL_OUTFILE_H
#define TL_OUTFILE_H

#include <stdio.h>

#include "../util/error.h"

typedef struct tl_outfile {
    FILE *f;
    char *path, *tmp;
} tl_outfile;

/* Creates parent directories as needed. */
int tl_outfile_open(tl_outfile *o, const char *path, tl_error *err);
int tl_outfile_commit(tl_outfile *o, tl_error *err);
void tl_outfile_abort(tl_outfile *o);

/* mkdir -p */
int tl_mkdirs(const char *dir, tl_error *err);


#endif
