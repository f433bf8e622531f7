#include "vec.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* What this thread is working for (a tl.parallel task's name), named in the
 * out-of-memory message. Thread-local, not shared: each thread sets its own,
 * so the trace and the other threads never see it. */
static _Thread_local const char *oom_context;

const char *tl_oom_context_set(const char *what)
{
    const char *prev = oom_context;
    oom_context = what;
    return prev;
}

void tl_oom(size_t n)
{
    const char *ctx = oom_context;
    fprintf(stderr, "tracelens: out of memory (allocating %zu bytes%s%s)\n", n, ctx ? " in task " : "",
            ctx ? ctx : "");
    _exit(1);
}

void *tl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) tl_oom(n);
    return p;
}

void *tl_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) tl_oom(n * size);
    return p;
}

void *tl_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) tl_oom(n);
    return q;
}

char *tl_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = tl_xmalloc(n);
    memcpy(d, s, n);
    return d;
}
