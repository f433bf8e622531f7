/* datadir.h — where the files tracelens ships (lua/, arch/) are found.
 * Owns nothing: pure path helpers over the file system. */
#ifndef TL_DATADIR_H
#define TL_DATADIR_H

#include <stddef.h>

/* Is p an existing directory? */
int tl_is_dir(const char *p);

/* The installed location of a shipped folder, next to the running binary:
 * <prefix>/bin/tracelens -> <prefix>/share/tracelens/<sub>. Writes the path
 * into buf and returns 1 when that folder exists, else 0. */
int tl_installed_dir(const char *sub, char *buf, size_t cap);

#endif
