/* vec.h — growable arrays and the checked allocation helpers of the core.
 * Allocation failure ends the process with a one-line message and exit
 * status 1 (tl_oom): the core has no partial-state recovery for
 * out-of-memory, and a clean exit beats undefined behaviour. Output files
 * are never partial (they are renamed into place only when complete). */
#ifndef TL_VEC_H
#define TL_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

void *tl_xmalloc(size_t n);
void *tl_xcalloc(size_t n, size_t size);
void *tl_xrealloc(void *p, size_t n);
char *tl_xstrdup(const char *s);
/* "tracelens: out of memory (allocating N bytes[ in task NAME])", exit 1. */
_Noreturn void tl_oom(size_t n);
/* Names what the calling thread works for in that message (NULL: nothing);
 * the string must outlive the setting. Returns the previous name. */
const char *tl_oom_context_set(const char *what);

/* Grow *pcap so that it holds at least need elements (doubling). */
#define TL_GROW(ptr, cap, need)                                                  \
    do {                                                                         \
        if ((size_t)(need) > (size_t)(cap)) {                                    \
            size_t tl_nc_ = (cap) ? (size_t)(cap) : 16;                          \
            while (tl_nc_ < (size_t)(need)) {                                    \
                if (tl_nc_ > SIZE_MAX / 2 / sizeof *(ptr)) tl_oom(SIZE_MAX);     \
                tl_nc_ *= 2;                                                     \
            }                                                                    \
            (ptr) = tl_xrealloc((ptr), tl_nc_ * sizeof *(ptr));                  \
            (cap) = tl_nc_;                                                      \
        }                                                                        \
    } while (0)

/* A plain vector of T: { T *v; size_t n, cap; } */
#define TL_VEC(T) struct { T *v; size_t n, cap; }
#define TL_PUSH(vec, x)                                                          \
    do {                                                                         \
        TL_GROW((vec).v, (vec).cap, (vec).n + 1);                                \
        (vec).v[(vec).n++] = (x);                                                \
    } while (0)

#endif
