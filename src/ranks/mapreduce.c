/* mapreduce.c — the per-rank pass and `tracelens ranks summarize`
 * (mapreduce.h). */
#include "mapreduce.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../io/outfile.h"
#include "../util/msort.h"
#include "../util/vec.h"
#include "rank_stats.h"

int tl_ranks_rank_pass(const char *path, long name_rank, int from_distinfo, const tl_load_opts *lo, tl_coll_set *cs,
                       tl_rank_info *info, tl_error *err)
{
    memset(info, 0, sizeof *info);
    info->rank = from_distinfo ? -1 : name_rank;
    info->dist_world = -1;
    struct stat st;
    if (stat(path, &st) == 0) info->trace_bytes = (uint64_t)st.st_size;
    /* the pass reads the args of kernels, copies, launches and flows only
     * (collective metadata, streams, correlations): the host events' args,
     * much of a trace's bytes, are checked but not kept (unless
     * TRACELENS_RANKS_HOST_ARGS=1, for the test that the records and
     * statistics are the same either way) */
    tl_load_opts o = *lo;
    const char *keep = getenv("TRACELENS_RANKS_HOST_ARGS");
    o.skip_host_args = !(keep && strcmp(keep, "1") == 0);
    tl_trace *t = tl_trace_load(path, &o, err);
    if (!t) return -1;
    int64_t dr = -1, dw = -1;
    int has_dr = tl_trace_distinfo_int(t, "rank", &dr);
    long rank = name_rank;
    int rc = -1;
    if (from_distinfo) {
        if (!has_dr) {
            tl_error_set(err, "%s: no distributedInfo.rank to take the rank from (give it with --rank R, or a file name with the rank)", path);
            goto out;
        }
        rank = dr < -1 || dr > 0x7fffffff ? -1 : (long)dr;
        info->rank = rank;
    } else if (has_dr && dr != rank) {
        tl_error_set(err, "file %s says rank %lld, name says %ld", path, (long long)dr, rank);
        goto out;
    }
    if (tl_trace_distinfo_int(t, "world_size", &dw)) info->dist_world = dw;
    info->device_count = tl_trace_device_count(t);
    rc = 0;
    if (rank < 0) goto out; /* the caller reports the rank as out of range */
    info->nrec = tl_coll_extract(cs, t, (uint32_t)rank);
    if (tl_rank_stats_compute(t, (uint32_t)rank, &info->stats, err) != 0) rc = -1;
    else info->has_stats = 1;
out:
    tl_trace_release(t);
    return rc;
}

int tl_ranks_rank_image(const char *path, long name_rank, int from_distinfo, const tl_load_opts *lo, tl_sbuf *out,
                        tl_error *err)
{
    tl_coll_set cs;
    tl_coll_set_init(&cs);
    tl_rank_info info;
    int rc = tl_ranks_rank_pass(path, name_rank, from_distinfo, lo, &cs, &info, err);
    tl_tls_encode(out, &cs, &info, path, rc ? err->msg : NULL);
    tl_coll_set_free(&cs);
    return rc ? 1 : 0;
}

/* ------------------------------------------------------------ summarize */

static const char *const SUMMARIZE_HELP =
    "usage: tracelens ranks summarize TRACE [--rank R | --rank_regex RE | --rank-from distinfo] -o R.tls\n"
    "\n"
    "The per-rank pass of `tracelens ranks` on one rank trace (the map step): writes\n"
    "the rank's collective records and statistics as a compact binary summary, which\n"
    "`tracelens ranks reduce *.tls -o OUT` turns into the report (docs/ranks.md). A\n"
    "trace that cannot be read is recorded in the .tls as that rank's failure (exit\n"
    "status 3), so a job array goes on; reduce reports it.\n"
    "\n"
    "  -o, --output FILE     the .tls file (required)\n"
    "  --rank R              the rank (default: from the file name by --rank_regex,\n"
    "                        default rank[\\[\\-_/]?(?P<rank>\\d+), else distributedInfo.rank)\n"
    "  --rank-from distinfo  the rank from distributedInfo.rank alone\n"
    "exit status: 0 written; 3 written, recording the rank's failure; 1 not written; 2 usage\n";

static int summarize_usage(const char *msg)
{
    fprintf(stderr, "tracelens: %s\n\n%s", msg, SUMMARIZE_HELP);
    return 2;
}

/* The rank the regex finds in s (the named group "rank", else group 1),
 * when at most max; -1. */
static long regex_rank(pcre2_code *re, const char *s, long max)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    long rank = -1;
    if (pcre2_match(re, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 0) {
        PCRE2_UCHAR *buf = NULL;
        PCRE2_SIZE len;
        int rc = pcre2_substring_get_byname(md, (PCRE2_SPTR) "rank", &buf, &len);
        if (rc != 0) rc = pcre2_substring_get_bynumber(md, 1, &buf, &len);
        if (rc == 0) {
            char *end;
            long v = strtol((char *)buf, &end, 10);
            if (len > 0 && *end == 0 && v >= 0 && v <= max) rank = v;
            pcre2_substring_free(buf);
        }
    }
    pcre2_match_data_free(md);
    return rank;
}

long tl_ranks_path_rank(pcre2_code *re, const char *path, long max)
{
    const char *base = strrchr(path, '/');
    long rank = regex_rank(re, base ? base + 1 : path, max);
    return rank >= 0 ? rank : regex_rank(re, path, max);
}

int tl_ranks_summarize_cli(int argc, char **argv)
{
    const char *trace = NULL, *out = NULL, *regex = "rank[\\[\\-_/]?(?P<rank>\\d+)";
    long rank = -1;
    int from_distinfo = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(SUMMARIZE_HELP, stdout);
            return 0;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && has) out = argv[++i];
        else if (!strcmp(a, "--rank") && has) {
            char *end;
            rank = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || rank < 0 || rank > 0x7fffffff)
                return summarize_usage("ranks summarize: --rank must be a non-negative integer");
        } else if (!strcmp(a, "--rank_regex") && has) regex = argv[++i];
        else if (!strcmp(a, "--rank-from") && has) {
            const char *v = argv[++i];
            if (!strcmp(v, "distinfo")) from_distinfo = 1;
            else if (strcmp(v, "name") != 0) return summarize_usage("ranks summarize: --rank-from takes name or distinfo");
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) continue;
        else if (a[0] != '-' && !trace) trace = a;
        else {
            char msg[200];
            snprintf(msg, sizeof msg, "ranks summarize: unknown option or extra argument '%.100s'", a);
            return summarize_usage(msg);
        }
    }
    if (!trace) return summarize_usage("ranks summarize: no rank trace given");
    if (!out) return summarize_usage("ranks summarize: no output file given (-o R.tls)");
    if (rank < 0 && !from_distinfo) {
        int ecode;
        PCRE2_SIZE eoff;
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)regex, PCRE2_ZERO_TERMINATED, 0, &ecode, &eoff, NULL);
        if (!re) {
            fprintf(stderr, "tracelens: --rank_regex '%s': invalid at offset %zu\n", regex, (size_t)eoff);
            return 2;
        }
        rank = tl_ranks_path_rank(re, trace, 0x7fffffff);
        pcre2_code_free(re);
        if (rank < 0) from_distinfo = 1; /* no rank in the name: the trace's own */
    }
    tl_load_opts lo;
    memset(&lo, 0, sizeof lo);
    tl_sbuf img;
    tl_sb_init(&img);
    tl_error err, werr;
    int failed = tl_ranks_rank_image(trace, rank, from_distinfo, &lo, &img, &err);
    int rc = failed ? 3 : 0;
    if (tl_outfile_write_all(out, img.s, img.len, &werr) != 0) {
        if (failed) fprintf(stderr, "tracelens: %s\n", err.msg);
        fprintf(stderr, "tracelens: %s\n", werr.msg);
        rc = 1;
    } else if (failed) fprintf(stderr, "tracelens: %s (recorded in %s)\n", err.msg, out);
    tl_sb_free(&img);
    return rc;
}

/* ------------------------------------------------------------ threads */

typedef struct tsrc {
    char **paths;
    long *ranks;
    size_t n, next;   /* next: position in order of the next trace to start */
    size_t *order;    /* largest first */
    int from_distinfo, stop, nth, started;
    tl_sbuf *img;     /* file i's image */
    uint8_t *ready;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t *th;
} tsrc;

static void *tsrc_worker(void *arg)
{
    tsrc *w = arg;
    tl_load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.threads = 1; /* the parallelism is across traces */
    for (;;) {
        pthread_mutex_lock(&w->mu);
        if (w->stop || w->next >= w->n) {
            pthread_mutex_unlock(&w->mu);
            return NULL;
        }
        size_t i = w->order[w->next++];
        pthread_mutex_unlock(&w->mu);
        tl_sbuf b;
        tl_sb_init(&b);
        tl_error err;
        tl_ranks_rank_image(w->paths[i], w->ranks[i], w->from_distinfo, &lo, &b, &err);
        pthread_mutex_lock(&w->mu);
        w->img[i] = b;
        w->ready[i] = 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
}

static int cmp_size_desc(void *v, size_t a, size_t b)
{
    const uint64_t *s = v;
    return s[a] > s[b] ? -1 : s[a] < s[b]; /* ties: file order (stable sort) */
}

static int tsrc_map(tl_ranks_source *s, const char *const *paths, const long *name_ranks, size_t n, int from_distinfo,
                    tl_error *err)
{
    tsrc *w = s->impl;
    (void)err;
    w->n = n;
    w->from_distinfo = from_distinfo;
    w->paths = tl_xcalloc(n + 1, sizeof *w->paths);
    w->ranks = tl_xmalloc((n + 1) * sizeof *w->ranks);
    w->order = tl_xmalloc((n + 1) * sizeof *w->order);
    w->img = tl_xcalloc(n + 1, sizeof *w->img);
    w->ready = tl_xcalloc(n + 1, 1);
    uint64_t *size = tl_xmalloc((n + 1) * sizeof *size);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        w->paths[i] = tl_xstrdup(paths[i]);
        w->ranks[i] = name_ranks[i];
        w->order[i] = i;
        size[i] = stat(paths[i], &st) == 0 ? (uint64_t)st.st_size : 0;
    }
    tl_msort(w->order, n, cmp_size_desc, size);
    free(size);
    if ((size_t)w->nth > n) w->nth = (int)n;
    w->th = tl_xmalloc((size_t)w->nth * sizeof *w->th);
    for (w->started = 0; w->started < w->nth; w->started++)
        if (pthread_create(&w->th[w->started], NULL, tsrc_worker, w) != 0) break;
    if (!w->started) tsrc_worker(w); /* no thread could start: do it here */
    return 0;
}

static int tsrc_take(tl_ranks_source *s, size_t i, const char *path, tl_coll_set *cs, tl_rank_info *info,
                     tl_error *err)
{
    tsrc *w = s->impl;
    pthread_mutex_lock(&w->mu);
    while (!w->ready[i]) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    int rc = tl_tls_decode((const uint8_t *)w->img[i].s, w->img[i].len, path, cs, info, NULL, err);
    tl_sb_free(&w->img[i]);
    return rc;
}

static void tsrc_done(tl_ranks_source *s)
{
    tsrc *w = s->impl;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_mutex_unlock(&w->mu);
    for (int t = 0; t < w->started; t++) pthread_join(w->th[t], NULL);
    for (size_t i = 0; i < w->n; i++) {
        free(w->paths[i]);
        tl_sb_free(&w->img[i]);
    }
    free(w->paths);
    free(w->ranks);
    free(w->order);
    free(w->img);
    free(w->ready);
    free(w->th);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
    s->impl = NULL;
}

int tl_ranks_thread_source(tl_ranks_source *s, int jobs, size_t n)
{
    if (jobs < 2 || n < 2) return 0;
    tsrc *w = tl_xcalloc(1, sizeof *w);
    w->nth = jobs;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    memset(s, 0, sizeof *s);
    s->map = tsrc_map;
    s->take = tsrc_take;
    s->done = tsrc_done;
    s->impl = w;
    return 1;
}
