/* diff_beside.c — TraceDiff beside a perf report build (diff_beside.h). */
#include "diff_beside.h"

#include <string.h>

void tl_diff_beside_init(tl_diff_beside *b, const tl_trace *t2, int pseudo_ops)
{
    memset(b, 0, sizeof *b);
    b->t2 = t2;
    if (pseudo_ops == 1 && !t2->opts.pseudo_ops) b->t2 = b->t2_copy = tl_trace_with_pseudo_ops(t2);
}

static void *diff_main(void *arg)
{
    tl_diff_beside *b = arg;
    b->rc = tl_trace_diff_run(&b->d, b->t1, b->t2, TL_DIFF_NO_SUMMARY, &b->err);
    return NULL;
}

void tl_diff_beside_begin(void *ctx, const tl_trace *t1)
{
    tl_diff_beside *b = ctx;
    b->t1 = t1;
    b->state = 1;
    b->threaded = pthread_create(&b->th, NULL, diff_main, b) == 0;
    if (!b->threaded) diff_main(b);
}

/* Joins the thread; the diff is then done. */
static void wait_diff(tl_diff_beside *b)
{
    if (b->threaded) pthread_join(b->th, NULL);
    b->threaded = 0;
}

int tl_diff_beside_end(void *ctx, tl_table *unified, const uint32_t *kernel_row, tl_table **sheet, tl_error *err)
{
    tl_diff_beside *b = ctx;
    *sheet = NULL;
    wait_diff(b);
    b->state = 2;
    if (b->rc != 0) {
        *err = b->err;
        return -1;
    }
    if (unified) tl_trace_diff_enrich_unified(&b->d, unified, kernel_row);
    if (b->d.diff_stats && b->d.diff_stats->nrows) {
        *sheet = b->d.diff_stats;
        tl_table_retain(*sheet);
    }
    tl_trace_diff_free(&b->d);
    return 0;
}

void tl_diff_beside_free(tl_diff_beside *b)
{
    if (b->state == 1) {
        /* begun and never ended (the report stopped early) */
        wait_diff(b);
        if (b->rc == 0) tl_trace_diff_free(&b->d);
    }
    if (b->t2_copy) tl_trace_release(b->t2_copy);
    memset(b, 0, sizeof *b);
}
