#include "trace.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../json/kineto_scan.h"
#include "../util/vec.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(void *ud, uint64_t done, uint64_t file_bytes, int gzip)
{
    (void)ud;
    if (gzip)
        fprintf(stderr, "\rtracelens: loading: %.0f MB decompressed", done / 1e6);
    else
        fprintf(stderr, "\rtracelens: loading: %.0f of %.0f MB", done / 1e6, file_bytes / 1e6);
    fflush(stderr);
}

tl_trace *tl_trace_load(const char *path, const tl_load_opts *opts, tl_error *err)
{
    tl_trace *t = tl_xcalloc(1, sizeof *t);
    if (opts) t->opts = *opts;
    t->path = tl_xstrdup(path);
    tl_es_init(&t->es);
    tl_scan_opts so = {0};
    so.parts = t->opts.threads;
    int show = t->opts.progress && isatty(2);
    if (show) so.progress = progress;
    double t0 = now();
    if (tl_scan_file(path, &t->es, &so, err) != 0) {
        if (show) fputc('\n', stderr);
        tl_es_free(&t->es);
        free(t->path);
        free(t);
        return NULL;
    }
    if (show) fprintf(stderr, "\rtracelens: loaded %zu events (%.0f MB) in %.2f s          \n", t->es.n,
                      t->es.bytes / 1e6, now() - t0);
    double t1 = now();
    tl_tree_opts to = {.with_python = t->opts.with_python};
    tl_tree_build(&t->tree, &t->es, &to);
    t->load_seconds = t1 - t0;
    t->tree_seconds = now() - t1;
    atomic_init(&t->refs, 1);
    return t;
}

void tl_trace_retain(tl_trace *t) { atomic_fetch_add(&t->refs, 1); }

void tl_trace_release(tl_trace *t)
{
    if (!t) return;
    if (atomic_fetch_sub(&t->refs, 1) != 1) return;
    tl_tree_free(&t->tree);
    tl_es_free(&t->es);
    free(t->path);
    free(t);
}

