/* vec.h — growable arrays and the checked allocation helpers of the core.
 * Allocation failure aborts with a message: the core has no partial-state
 * recovery for out-of-memory, and a clean abort beats undefined behaviour. */
#ifndef TL_VEC_H
#define TL_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

void *tl_xmalloc(size_t n);
void *tl_xcalloc(size_t n, size_t size);
void *tl_xrealloc(void *p, size_t n);
char *tl_xstrdup(const char *s);

/* Grow *pcap so that it holds at least need elements (doubling). */
#define TL_GROW(ptr, cap, need)                                                  \
    do {                                                                         \
        if ((size_t)(need) > (size_t)(cap)) {                                    \
            size_t tl_nc_ = (cap) ? (size_t)(cap) : 16;                          \
            while (tl_nc_ < (size_t)(need)) tl_nc_ *= 2;                         \
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
