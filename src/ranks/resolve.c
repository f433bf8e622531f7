/* resolve.c — see resolve.h. */
#include "resolve.h"

#include <dirent.h>
#include <fnmatch.h>
#include <limits.h>
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/msort.h"
#include "../util/vec.h"
#include "mapreduce.h"

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

void tl_rank_files_add(tl_rank_files *l, const char *path, long rank)
{
    TL_GROW(l->v, l->cap, l->n + 1);
    l->v[l->n].path = tl_xstrdup(path);
    l->v[l->n].rank = rank;
    l->n++;
}

void tl_rank_files_free(tl_rank_files *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i].path);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static char *pattern_file(const char *pat, long i)
{
    const char *star = strchr(pat, '*');
    size_t n = strlen(pat) + 24;
    char *p = tl_xmalloc(n);
    snprintf(p, n, "%.*s%ld%s", (int)(star - pat), pat, i, star + 1);
    return p;
}

/* ---------------------------------------------------------------- glob */

typedef struct strv {
    char **v;
    size_t n, cap;
} strv;

static void walk(const char *dir, const char *pat, int deep, strv *out)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = tl_xmalloc(n);
        if (!strcmp(dir, ".")) snprintf(p, n, "%s", e->d_name);
        else snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
        struct stat st;
        if (stat(p, &st) != 0) {
            free(p);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            walk(p, pat, deep, out);
            free(p);
        } else if (S_ISREG(st.st_mode) && fnmatch(pat, p, deep ? 0 : FNM_PATHNAME) == 0) {
            TL_GROW(out->v, out->cap, out->n + 1);
            out->v[out->n++] = p;
        } else free(p);
    }
    closedir(d);
}

static int cmp_str(void *v, size_t a, size_t b)
{
    char **s = v;
    return strcmp(s[a], s[b]);
}

/* The files matching g, sorted by path. A '**' component lets '*' cross
 * directories. The walk starts at the directory part before the first
 * wildcard. */
static void glob_files(const char *g, strv *out)
{
    const char *w = strpbrk(g, "*?[");
    size_t plen = w ? (size_t)(w - g) : strlen(g);
    while (plen > 0 && g[plen - 1] != '/') plen--;
    char *root = plen ? tl_xmalloc(plen + 1) : tl_xstrdup(".");
    if (plen) {
        memcpy(root, g, plen);
        root[plen] = 0;
        if (plen > 1) root[plen - 1] = 0; /* strip the trailing slash */
    }
    /* "**\/" matches zero or more directories: try the pattern without it too */
    char *pat = tl_xstrdup(g);
    int deep = strstr(g, "**") != NULL;
    walk(root, pat, deep, out);
    if (deep) {
        char *alt = tl_xstrdup(g), *q;
        while ((q = strstr(alt, "**/")) != NULL) memmove(q, q + 3, strlen(q + 3) + 1);
        size_t before = out->n;
        strv more = {0};
        walk(root, alt, 0, &more);
        for (size_t i = 0; i < more.n; i++) {
            int dup = 0;
            for (size_t j = 0; j < before && !dup; j++) dup = !strcmp(out->v[j], more.v[i]);
            if (dup) free(more.v[i]);
            else {
                TL_GROW(out->v, out->cap, out->n + 1);
                out->v[out->n++] = more.v[i];
            }
        }
        free(more.v);
        free(alt);
    }
    size_t *idx = tl_xmalloc((out->n + 1) * sizeof *idx);
    for (size_t i = 0; i < out->n; i++) idx[i] = i;
    tl_msort(idx, out->n, cmp_str, out->v);
    char **sorted = tl_xmalloc((out->n + 1) * sizeof *sorted);
    for (size_t i = 0; i < out->n; i++) sorted[i] = out->v[idx[i]];
    free(out->v);
    out->v = sorted;
    out->cap = out->n + 1;
    free(idx);
    free(pat);
    free(root);
}

size_t tl_ranks_missing_list(const uint8_t *present, long world, char *buf, size_t cap)
{
    size_t nm = 0, len = 0;
    int cut = 0;
    buf[0] = 0;
    for (long r = 0; r < world; r++)
        if (!present[r]) {
            if (len + 24 < cap) len += (size_t)snprintf(buf + len, cap - len, "%s%ld", nm ? ", " : "", r);
            else if (!cut && len + 6 < cap) len += (size_t)snprintf(buf + len, cap - len, ", ..."), cut = 1;
            nm++;
        }
    return nm;
}

/* ------------------------------------------------------------ resolve */

static int resolve_numbered(const tl_ranks_input *in, tl_rank_files *files, long world, tl_error *err)
{
    const char *dir = in->dir, *pattern = in->pattern;
    struct stat st;
    if (dir && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        tl_error_set(err, "%s: not a directory", dir);
        return -1;
    }
    for (long i = 0; world < 0 || i < world; i++) {
        char *p = dir ? tl_ranks_dir_file(dir, i) : pattern_file(pattern, i);
        if (!file_exists(p)) {
            if (world >= 0 && in->allow_missing) { /* named in missing_ranks */
                free(p);
                continue;
            }
            if (world >= 0) {
                tl_error_set(err, "expected trace file not found: %s", p);
                free(p);
                return -1;
            }
            free(p);
            break;
        }
        tl_rank_files_add(files, p, i);
        free(p);
    }
    if (!files->n) {
        char *p = dir ? tl_ranks_dir_file(dir, 0) : pattern_file(pattern, 0);
        char hint[1200] = "";
        if (dir) tl_ranks_dir_hint(dir, hint, sizeof hint);
        tl_error_set(err, "no rank traces found: %s does not exist%s", p, hint);
        free(p);
        return -1;
    }
    return 0;
}

static int resolve_glob(const tl_ranks_input *in, tl_rank_files *files, long *world, tl_error *err)
{
    const char *gpat = in->glob, *rank_regex = in->rank_regex ? in->rank_regex : TL_RANK_REGEX_DEFAULT;
    strv m = {0};
    glob_files(gpat, &m);
    if (!m.n) {
        tl_error_set(err, "no files matched --trace_glob: %s", gpat);
        free(m.v);
        return -1;
    }
    int ecode;
    PCRE2_SIZE eoff;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)rank_regex, PCRE2_ZERO_TERMINATED, 0, &ecode, &eoff, NULL);
    if (!re) {
        tl_error_set(err, "--rank_regex '%s': invalid at offset %zu", rank_regex, (size_t)eoff);
        for (size_t i = 0; i < m.n; i++) free(m.v[i]);
        free(m.v);
        return -1;
    }
    long maxr = -1;
    for (size_t i = 0; i < m.n; i++) {
        long r = tl_ranks_path_rank(re, m.v[i], LONG_MAX);
        if (r < 0 && !in->from_distinfo) continue;
        if (*world >= 0 && r >= *world) continue; /* ranks >= W are ignored */
        size_t dup = SIZE_MAX;
        for (size_t j = 0; j < files->n && dup == SIZE_MAX && r >= 0 && !in->from_distinfo; j++)
            if (files->v[j].rank == r) dup = j;
        if (dup != SIZE_MAX) { /* the first path in sorted order wins (as the reference), said */
            fprintf(stderr, "tracelens: warning: %s ignored: rank %ld is already %s (--trace_glob)\n", m.v[i], r,
                    files->v[dup].path);
            continue;
        }
        tl_rank_files_add(files, m.v[i], in->from_distinfo ? -1 : r);
        if (r > maxr) maxr = r;
    }
    pcre2_code_free(re);
    int rc = 0;
    if (!files->n) {
        tl_error_set(err, "--trace_glob matched %zu file(s), but none matched --rank_regex '%s'", m.n, rank_regex);
        rc = -1;
    }
    for (size_t i = 0; i < m.n; i++) free(m.v[i]);
    free(m.v);
    if (rc == 0 && *world < 0 && !in->from_distinfo) *world = maxr + 1;
    return rc;
}

int tl_ranks_resolve(const tl_ranks_input *in, tl_rank_files *out, long *world, tl_error *err)
{
    *world = in->world;
    if (in->dir || in->pattern) return resolve_numbered(in, out, in->world, err);
    return resolve_glob(in, out, world, err);
}

char *tl_ranks_dir_file(const char *dir, long i)
{
    size_t n = strlen(dir) + 48;
    char *p = tl_xmalloc(n);
    struct stat st;
    snprintf(p, n, "%s/rank%ld_trace.json", dir, i);
    if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) return p;
    snprintf(p, n, "%s/rank%ld_trace.json.gz", dir, i);
    return p;
}

void tl_ranks_dir_hint(const char *dir, char *buf, size_t cap)
{
    buf[0] = 0;
    DIR *d = opendir(dir);
    if (!d) return;
    size_t n = 0;
    char first[256] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        int json = len > 5 && strcmp(e->d_name + len - 5, ".json") == 0;
        int gz = len > 8 && strcmp(e->d_name + len - 8, ".json.gz") == 0;
        if ((!json && !gz) || e->d_name[0] == '.' || len >= sizeof first) continue;
        n++;
        if (!first[0] || strcmp(e->d_name, first) < 0) memcpy(first, e->d_name, len + 1);
    }
    closedir(d);
    if (!n) return;
    /* the example's printable bytes only (a name is not trusted text) */
    for (char *c = first; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    const char *ext = strlen(first) > 8 && strcmp(first + strlen(first) - 8, ".json.gz") == 0 ? "*.json.gz" : "*.json";
    snprintf(buf, cap, " (%s holds %zu trace file%s named otherwise, e.g. %s: give %s with --trace_glob '%s/%s', "
             "the rank from --rank_regex)", dir, n, n == 1 ? "" : "s", first, n == 1 ? "it" : "them", dir, ext);
}
