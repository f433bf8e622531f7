#include "bigmem.h"
#include "vec.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

enum { HDR = 64 };
#define HUGE_2M ((size_t)2 << 20)

static size_t round_up(size_t n)
{
    size_t unit = n >= HUGE_2M ? HUGE_2M : 4096;
    return (n + unit - 1) / unit * unit;
}

static void fail(size_t n)
{
    tl_oom(n);
}

void *tl_big_realloc(void *p, size_t bytes)
{
    size_t want = round_up(bytes + HDR);
    char *base;
    if (!p) {
        base = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) fail(want);
    } else {
        base = (char *)p - HDR;
        size_t have = *(size_t *)base;
        if (want <= have) return p;
        base = mremap(base, have, want, MREMAP_MAYMOVE);
        if (base == MAP_FAILED) fail(want);
    }
    if (want >= HUGE_2M) madvise(base, want, MADV_HUGEPAGE);
    *(size_t *)base = want;
    return base + HDR;
}

void tl_big_trim(void *p, size_t used)
{
    if (!p) return;
    char *base = (char *)p - HDR;
    size_t have = *(size_t *)base, keep = (HDR + used + 4095) / 4096 * 4096;
    if (keep < have) madvise(base + keep, have - keep, MADV_DONTNEED);
}

void tl_big_release_front(void *p, size_t done)
{
    if (!p) return;
    /* the first page holds the block's size: kept */
    char *base = (char *)p - HDR;
    size_t have = *(size_t *)base, end = (HDR + done) / 4096 * 4096;
    if (end > have) end = have;
    if (end > 4096) madvise(base + 4096, end - 4096, MADV_DONTNEED);
}

void tl_big_free(void *p)
{
    if (!p) return;
    char *base = (char *)p - HDR;
    munmap(base, *(size_t *)base);
}
