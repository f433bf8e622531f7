/* capture.c — see capture.h. (Skeleton: being implemented.) */
#include "capture.h"

#include <stdlib.h>
#include <string.h>

int tl_capture_index_load(const char *dir, int write, tl_capture_index *out, tl_error *err)
{
    (void)write;
    memset(out, 0, sizeof *out);
    tl_error_set(err, "%s: capture folders are not supported yet", dir);
    return -1;
}

void tl_capture_index_free(tl_capture_index *ix)
{
    for (size_t i = 0; i < ix->n; i++) {
        free(ix->v[i].file);
        free(ix->v[i].mode);
    }
    free(ix->v);
    memset(ix, 0, sizeof *ix);
}

tl_trace *tl_trace_merge_capture(const tl_trace *replay, const char *dir, const tl_capture_index *idx,
                                 int pseudo_ops, tl_capture_summary *sum, tl_error *err)
{
    (void)replay;
    (void)idx;
    (void)pseudo_ops;
    memset(sum, 0, sizeof *sum);
    tl_error_set(err, "%s: capture merge not supported yet", dir);
    return NULL;
}

void tl_capture_summary_free(tl_capture_summary *s)
{
    free(s->notes);
    s->notes = NULL;
}
