/* outfile.h — the one place that creates output files and directories.
 * Owns: output files that appear whole or not at all (a temporary created
 * exclusively, O_CREAT|O_EXCL|O_NOFOLLOW, under an unpredictable name next to
 * the destination, renamed over it when complete), staging directories for
 * outputs made of several files (a private mkdtemp directory inside the
 * output directory, moved into place when everything is written), and the
 * removal of what an output replaces, which never follows a symbolic link:
 * a planted link is removed or replaced itself, never what it points to.
 * Used by report, render, diff, compare and the Lua bindings alike. */
#ifndef TL_OUTFILE_H
#define TL_OUTFILE_H

#include <stdio.h>

#include "../util/error.h"

typedef struct tl_outfile {
    FILE *f;
    char *path, *tmp;
} tl_outfile;

/* Creates parent directories as needed, then the temporary. */
int tl_outfile_open(tl_outfile *o, const char *path, tl_error *err);
/* Closes the temporary and renames it over path (atomically replacing a file
 * or a link there); on a write error the temporary is removed instead. */
int tl_outfile_commit(tl_outfile *o, tl_error *err);
void tl_outfile_abort(tl_outfile *o);
/* The whole of data[0..len) as the file path, the same way (atomically). */
int tl_outfile_write_all(const char *path, const void *data, size_t len, tl_error *err);

/* mkdir -p (a directory named by the user may itself be a link). */
int tl_mkdirs(const char *dir, tl_error *err);

/* A staging directory: parent/.tracelens-XXXXXX, mode 0700, created with
 * mkdtemp, so nothing can be planted in it. Outputs are written under
 * tl_stage_path(...) and moved into place with tl_stage_commit. */
typedef struct tl_stage {
    char *dir;
} tl_stage;

/* Creates parent (mkdir -p) and the staging directory in it. */
int tl_stage_open(tl_stage *st, const char *parent, tl_error *err);
/* stage/name, malloc'd. */
char *tl_stage_path(const tl_stage *st, const char *name);
/* Moves stage/name to dest. A file replaces whatever file or link is at dest.
 * A directory replaces a directory at dest (the old one is moved into the
 * stage and removed with it) or a link (the link itself); any other file at
 * dest is an error. */
int tl_stage_commit(tl_stage *st, const char *name, const char *dest, tl_error *err);
/* Removes the staging directory and whatever is left in it. */
void tl_stage_close(tl_stage *st);

/* Removes path; when it is a directory (not a link to one), everything
 * under it first. Links are removed, never followed. Missing path: 0. */
int tl_remove_tree(const char *path, tl_error *err);

#endif
