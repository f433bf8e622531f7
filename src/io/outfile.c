#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* 16 hex digits nobody can guess (getrandom; the clock when it is not
 * available, which exclusive creation still makes safe, only guessable). */
static void random_hex(char out[17])
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^ (uintptr_t)out;
    }
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) out[i] = hex[(r >> (4 * i)) & 15];
    out[16] = 0;
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
    int fd = -1;
    /* a name already taken (by anything, a link included) is never opened:
     * draw another */
    for (int tries = 0; tries < 100 && fd < 0; tries++) {
        char r[17];
        random_hex(r);
        snprintf(o->tmp, n, "%s.tmp-%s", path, r);
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd >= 0 && !(o->f = fdopen(fd, "wb"))) {
        unlink(o->tmp);
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
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

/* ------------------------------------------------------------ removal */

enum { RM_MAX_DEPTH = 128 };

typedef struct rm_frame {
    DIR *d;
    char *name; /* the entry name in the parent frame (NULL at the top) */
} rm_frame;

static int rm_fail(tl_error *err, int *failed, const char *path, const char *name, const char *why)
{
    if (!*failed) tl_error_set(err, "%s: cannot remove %s: %s", path, name ? name : "it", why);
    *failed = 1;
    return -1;
}

/* Opens a directory without following a link to one; *is_link when the
 * name turned out not to be a directory (a link or a file raced in). */
static DIR *open_dir_nofollow(int at, const char *name, int *not_dir)
{
    *not_dir = 0;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        *not_dir = errno == ELOOP || errno == ENOTDIR;
        return NULL;
    }
    DIR *d = fdopendir(fd);
    if (!d) close(fd);
    return d;
}

int tl_remove_tree(const char *path, tl_error *err)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        tl_error_set(err, "%s: cannot remove: %s", path, strerror(errno));
        return -1;
    }
    int not_dir = 0;
    DIR *top = S_ISDIR(st.st_mode) ? open_dir_nofollow(AT_FDCWD, path, &not_dir) : NULL;
    if (!top) {
        if (S_ISDIR(st.st_mode) && !not_dir) {
            tl_error_set(err, "%s: cannot remove: %s", path, strerror(errno));
            return -1;
        }
        if (unlink(path) != 0 && errno != ENOENT) {
            tl_error_set(err, "%s: cannot remove: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    /* depth-first with an explicit stack of open directories: every entry
     * is removed through its directory's descriptor (unlinkat), so a
     * directory swapped for a link on the way is never entered */
    rm_frame stack[RM_MAX_DEPTH];
    size_t depth = 1;
    stack[0] = (rm_frame){top, NULL};
    int failed = 0;
    while (depth > 0) {
        rm_frame *f = &stack[depth - 1];
        int fd = dirfd(f->d);
        struct dirent *e = readdir(f->d);
        if (!e) {
            closedir(f->d);
            if (depth > 1 && unlinkat(dirfd(stack[depth - 2].d), f->name, AT_REMOVEDIR) != 0 && errno != ENOENT)
                rm_fail(err, &failed, path, f->name, strerror(errno));
            free(f->name);
            depth--;
            continue;
        }
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        int is_dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat est;
            is_dir = fstatat(fd, e->d_name, &est, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(est.st_mode);
        }
        if (is_dir) {
            if (depth == RM_MAX_DEPTH) {
                rm_fail(err, &failed, path, e->d_name, "too deeply nested");
                continue;
            }
            DIR *sub = open_dir_nofollow(fd, e->d_name, &not_dir);
            if (sub) {
                stack[depth++] = (rm_frame){sub, tl_xstrdup(e->d_name)};
                continue;
            }
            if (!not_dir) {
                rm_fail(err, &failed, path, e->d_name, strerror(errno));
                continue;
            }
        }
        if (unlinkat(fd, e->d_name, 0) != 0 && errno != ENOENT) rm_fail(err, &failed, path, e->d_name, strerror(errno));
    }
    /* the top itself: rmdir never follows a link that replaced it */
    if (rmdir(path) != 0 && errno != ENOENT) rm_fail(err, &failed, path, NULL, strerror(errno));
    return failed ? -1 : 0;
}

/* ------------------------------------------------------------ staging */

int tl_stage_open(tl_stage *st, const char *parent, tl_error *err)
{
    st->dir = NULL;
    if (tl_mkdirs(parent, err) != 0) return -1;
    size_t n = strlen(parent) + 32;
    char *tmpl = tl_xmalloc(n);
    snprintf(tmpl, n, "%s/.tracelens-XXXXXX", parent);
    if (!mkdtemp(tmpl)) {
        tl_error_set(err, "%s: cannot create a staging directory: %s", parent, strerror(errno));
        free(tmpl);
        return -1;
    }
    st->dir = tmpl;
    return 0;
}

char *tl_stage_path(const tl_stage *st, const char *name)
{
    size_t n = strlen(st->dir) + strlen(name) + 2;
    char *p = tl_xmalloc(n);
    snprintf(p, n, "%s/%s", st->dir, name);
    return p;
}

int tl_stage_commit(tl_stage *st, const char *name, const char *dest, tl_error *err)
{
    char *src = tl_stage_path(st, name);
    int rc = 0;
    struct stat ss, ds;
    int src_dir = lstat(src, &ss) == 0 && S_ISDIR(ss.st_mode);
    if (!src_dir || lstat(dest, &ds) != 0) {
        /* a file replaces a file or a link atomically; a directory goes
         * where nothing is */
        if (rename(src, dest) != 0) {
            tl_error_set(err, "%s: cannot create: %s", dest, strerror(errno));
            rc = -1;
        }
    } else if (!S_ISDIR(ds.st_mode) && !S_ISLNK(ds.st_mode)) {
        tl_error_set(err, "%s: exists and is not a directory", dest);
        rc = -1;
    } else if (renameat2(AT_FDCWD, src, AT_FDCWD, dest, RENAME_EXCHANGE) != 0) {
        /* no atomic exchange on this file system: move the old one (a
         * directory, or the link itself) into the stage, then the new in */
        size_t n = strlen(name) + 16;
        char *oldname = tl_xmalloc(n);
        snprintf(oldname, n, "%s.replaced", name);
        char *old = tl_stage_path(st, oldname);
        if (rename(dest, old) != 0) {
            tl_error_set(err, "%s: cannot replace: %s", dest, strerror(errno));
            rc = -1;
        } else if (rename(src, dest) != 0) {
            tl_error_set(err, "%s: cannot replace: %s", dest, strerror(errno));
            rename(old, dest);
            rc = -1;
        }
        free(old);
        free(oldname);
    }
    /* after an exchange the old directory (or link) is at src, in the stage,
     * and goes with it */
    free(src);
    return rc;
}

void tl_stage_close(tl_stage *st)
{
    if (!st->dir) return;
    tl_error ignored;
    tl_remove_tree(st->dir, &ignored);
    free(st->dir);
    st->dir = NULL;
}

int tl_outfile_write_all(const char *path, const void *data, size_t len, tl_error *err)
{
    tl_outfile of;
    if (tl_outfile_open(&of, path, err) != 0) return -1;
    if (len && fwrite(data, 1, len, of.f) != len) {
        tl_outfile_abort(&of);
        tl_error_set(err, "%s: cannot write (disk full?)", path);
        return -1;
    }
    return tl_outfile_commit(&of, err);
}
