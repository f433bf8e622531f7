#include "vec.h"

#include <stdio.h>
#include <string.h>

static void oom(size_t n)
{
    fprintf(stderr, "tracelens: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *tl_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *tl_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *tl_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *tl_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = tl_xmalloc(n);
    memcpy(d, s, n);
    return d;
}
