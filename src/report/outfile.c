#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/pyfmt.h"
#include "../util/vec.h"

int tl_mkdirs(const char *dir, tl_error *err)
{
    char *d = tl_xstrdup(dir);
    size_t n = strlen(d);
    for (size_t i = 1; i <= n; i++) {
        if (d[i] == '/' || d[i] == 0) {
            char c = d[i];
            d[i] = 0;
            if (mkdir(d, 0777) != 0 && errno != EEXIST) {
                tl_error_set(err, "%s: cannot create directory: %s", d, strerror(errno));
                free(d);
                return -1;
            }
            struct stat st;
            if (stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
                tl_error_set(err, "%s: exists and is not a directory", d);
                free(d);
                return -1;
            }
            d[i] = c;
        }
    }
    free(d);
    return 0;
}

int tl_outfile_open(tl_outfile *o, const char *path, tl_error *err)
{
    memset(o, 0, sizeof *o);
    char *dir = tl_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (tl_mkdirs(dir, err) != 0) {
            free(dir);
            return -1;
        }
    }
    free(dir);
    size_t n = strlen(path) + 32;
    o->tmp = tl_xmalloc(n);
    snprintf(o->tmp, n, "%s.tmp-%ld", path, (long)getpid());
    o->f = fopen(o->tmp, "wb");
    if (!o->f) {
        tl_error_set(err, "%s: cannot write: %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    o->path = tl_xstrdup(path);
    return 0;
}

int tl_outfile_commit(tl_outfile *o, tl_error *err)
{
    int bad = ferror(o->f);
    if (fclose(o->f) != 0) bad = 1;
    o->f = NULL;
    if (bad || rename(o->tmp, o->path) != 0) {
        tl_error_set(err, "%s: write failed: %s", o->path, strerror(errno));
        unlink(o->tmp);
        free(o->tmp);
        free(o->path);
        memset(o, 0, sizeof *o);
        return -1;
    }
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
    return 0;
}

void tl_outfile_abort(tl_outfile *o)
{
    if (o->f) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}

