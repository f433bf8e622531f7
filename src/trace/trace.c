#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../json/kineto_scan.h"
#include "capture.h"
#include "../util/memstat.h"
#include "../util/sbuf.h"
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

/* The pass, with the reference's environment knobs of the DeepSeek-V4
 * extension (TL_MODEL, TL_TP); its failures (and, with progress on, its
 * notes) go to stderr as the reference logs them. */
static void apply_pseudo_ops(tl_trace *t)
{
    tl_pseudo_opts po = {.v4_model_name = getenv("TL_MODEL"), .v4_tp = 1};
    const char *tp = getenv("TL_TP");
    if (tp) {
        char *end;
        long v = strtol(tp, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\n') end++;
        if (end != tp && !*end) po.v4_tp = v;
    }
    tl_pseudo_ops_apply(&t->es, &t->tree, &po, &t->pseudo);
    t->opts.pseudo_ops = 1;
    const char *w = t->pseudo.warnings;
    while (w && *w) {
        const char *nl = strchr(w, '\n');
        size_t len = nl ? (size_t)(nl - w) : strlen(w);
        char line[640];
        snprintf(line, sizeof line, "%.*s", (int)len, w);
        if (t->opts.progress || strstr(line, ": failed: ")) fprintf(stderr, "tracelens: warning: pseudo ops: %s\n", line);
        w += len + (nl != NULL);
    }
    if (t->opts.progress && isatty(2)) {
        fprintf(stderr, "tracelens: pseudo ops: %zu injected", t->pseudo.n_injected);
        for (size_t i = 0; i < t->pseudo.n_ext; i++)
            fprintf(stderr, "%s %s %zu%s", i ? "," : ":", t->pseudo.ext[i].name, t->pseudo.ext[i].injected,
                    t->pseudo.ext[i].failed ? " (failed)" : "");
        fputc('\n', stderr);
    }
}

tl_trace *tl_trace_load(const char *path, const tl_load_opts *opts, tl_error *err)
{
    tl_trace *t = tl_xcalloc(1, sizeof *t);
    if (opts) t->opts = *opts;
    t->path = tl_xstrdup(path);
    tl_es_init(&t->es);
    tl_scan_opts so = {0};
    so.parts = t->opts.threads;
    so.skip_host_args = t->opts.skip_host_args;
    so.max_text_bytes = t->opts.max_text_bytes;
    if (t->opts.max_value_mb < 0 || t->opts.max_value_mb > TL_MAX_VALUE_MB_MAX) {
        tl_error_set(err, "max_value_mb must be from 1 to %d, not %d", TL_MAX_VALUE_MB_MAX, t->opts.max_value_mb);
        tl_es_free(&t->es);
        free(t->path);
        free(t);
        return NULL;
    }
    so.max_value_bytes = (uint64_t)(t->opts.max_value_mb ? t->opts.max_value_mb : TL_MAX_VALUE_MB_DEFAULT) << 20;
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
    if (t->opts.pseudo_ops) apply_pseudo_ops(t);
    t->load_seconds = t1 - t0;
    t->tree_seconds = now() - t1;
    const char *st = getenv("TRACELENS_SCAN_STAGES");
    if (st && *st && strcmp(st, "0") != 0) {
        double rss, peak;
        tl_mem_status(&rss, &peak);
        fprintf(stderr, "tracelens: stage load %.3f s (%.0f MB/s), tree%s %.3f s, RSS %.1f MB, peak so far %.1f MB\n",
                t->load_seconds, t->load_seconds > 0 ? t->es.bytes / 1e6 / t->load_seconds : 0.0,
                t->opts.pseudo_ops ? " + pseudo ops" : "", t->tree_seconds, rss, peak);
    }
    atomic_init(&t->refs, 1);
    return t;
}

tl_trace *tl_trace_with_pseudo_ops(const tl_trace *src)
{
    tl_trace *t = tl_xcalloc(1, sizeof *t);
    t->opts = src->opts;
    t->opts.progress = 0; /* the loader already spoke; failures are still shown */
    t->path = tl_xstrdup(src->path);
    double t0 = now();
    tl_es_copy(&t->es, &src->es);
    tl_tree_copy(&t->tree, &src->tree, src->es.names.n);
    apply_pseudo_ops(t);
    t->copied_from = src->copied_from;
    t->copied_to = src->copied_to;
    if (src->capture) { /* a merged trace's copy keeps the merge's summary */
        t->capture = tl_xmalloc(sizeof *t->capture);
        tl_capture_summary_copy(t->capture, src->capture);
    }
    t->load_seconds = src->load_seconds;
    t->tree_seconds = src->tree_seconds + (now() - t0);
    atomic_init(&t->refs, 1);
    return t;
}

void tl_trace_apply_pseudo_ops(tl_trace *t) { apply_pseudo_ops(t); }

void tl_trace_retain(tl_trace *t) { atomic_fetch_add(&t->refs, 1); }

void tl_trace_release(tl_trace *t)
{
    if (!t) return;
    if (atomic_fetch_sub(&t->refs, 1) != 1) return;
    tl_tree_free(&t->tree);
    tl_es_free(&t->es);
    tl_pseudo_summary_free(&t->pseudo);
    if (t->capture) tl_capture_summary_free(t->capture);
    free(t->capture);
    free(t->path);
    free(t);
}

/* A category name from the trace, as printable ASCII of at most 40 bytes
 * (a hostile trace's bytes stay out of the terminal). */
static void put_label(tl_sbuf *b, const char *s)
{
    if (!*s) {
        tl_sb_puts(b, "(no category)");
        return;
    }
    size_t n = 0;
    for (; s[n] && n < 40; n++) tl_sb_putc(b, s[n] >= 0x20 && s[n] < 0x7f ? s[n] : '?');
    if (s[n]) tl_sb_puts(b, "...");
}

void tl_trace_no_gpu_error(const tl_trace *t, tl_error *err)
{
    const tl_event_store *es = &t->es;
    size_t ncat = es->cats.n, meta = 0;
    size_t *count = tl_xcalloc(ncat + 1, sizeof *count);
    for (size_t i = 0; i < es->n; i++) {
        if (es->ph[i] == 'M') meta++;
        else count[es->cat_id[i]]++;
    }
    tl_sbuf b;
    tl_sb_init(&b);
    /* the five most frequent categories, then the rest together */
    size_t shown = 0, rest = 0;
    for (int k = 0; k < 5; k++) {
        size_t best = ncat;
        for (size_t c = 0; c < ncat; c++)
            if (count[c] && (best == ncat || count[c] > count[best])) best = c;
        if (best == ncat) break;
        tl_sb_printf(&b, "%s%zu ", shown ? ", " : "", count[best]);
        put_label(&b, tl_strpool_get(&es->cats, (uint32_t)best));
        shown++;
        count[best] = 0;
    }
    for (size_t c = 0; c < ncat; c++) rest += count[c];
    if (rest) tl_sb_printf(&b, "%s%zu other", shown ? ", " : "", rest);
    if (meta) tl_sb_printf(&b, "%s%zu metadata", shown || rest ? ", " : "", meta);
    tl_error_set(err,
                 "%s: no GPU events found in the trace: none of its %zu events (%s) is a kernel, memory copy "
                 "or memset; the profiler recorded no GPU activity (profile with "
                 "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] to record it)",
                 t->path, es->n, b.len ? b.s : "none");
    tl_sb_free(&b);
    free(count);
}
