/* extension.c — the report's calls into an extension (extension.h). */
#include "extension.h"

#include <stdlib.h>

#include "../perf/categorize.h"

void tl_extension_free(tl_extension *x)
{
    if (!x) return;
    x->ops->free(x->ctx);
    free(x);
}

const char *tl_extension_categorize(const tl_extension *x, const char *name, const char *first_kernel_name)
{
    if (x && name) {
        const char *c = x->ops->category(x->ctx, name);
        if (c) return c;
    }
    return tl_categorize_op(name, first_kernel_name);
}

const tl_perf_class *tl_extension_model(const tl_extension *x, const char *name)
{
    return x && name ? x->ops->model(x->ctx, name) : NULL;
}

int tl_extension_owns(const tl_extension *x, const tl_perf_class *cls)
{
    return x && cls && x->ops->owns(x->ctx, cls);
}

int tl_extension_run(tl_extension *x, const tl_perf_class *cls, const tl_perf_event *ev, int bwd,
                     tl_perf_result *r)
{
    return x->ops->run(x->ctx, cls, ev, bwd, r);
}

int tl_extension_sheets(tl_extension *x, const tl_trace *t, struct tl_sheets *out, tl_error *err)
{
    return x ? x->ops->sheets(x->ctx, t, out, err) : 0;
}
