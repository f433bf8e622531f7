/* malloc_tune.c — see malloc_tune.h. */
#include "malloc_tune.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

void tl_malloc_many_traces(int on)
{
#ifdef M_MMAP_THRESHOLD
    if (on) {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        return;
    }
    const char *t = getenv("GLIBC_TUNABLES");
    if (!t || strcmp(t, TL_MALLOC_TUNABLES_ONE_TRACE) != 0) return;
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 10); /* glibc's default */
    malloc_trim(0);
#else
    (void)on;
#endif
}
