/* host_calls.h — where the host time of slow operations goes: the runtime
 * calls inside the CPU ops whose duration is more than 5x the GPU time they
 * launch (the op instances behind the analysis' "host time beyond kernel
 * time", tracelens.prepare sync_time_ms), by kind. A synchronizing call or a
 * synchronous copy makes the host wait for the GPU; a launch, an
 * asynchronous copy or a setup call (allocation, streams, context, device
 * queries) does not, so only the first kind is evidence of synchronization
 * (agents/cpu_idle.lua). One pass over the store and the tree; tl_host_calls
 * owns nothing (a value type). */
#ifndef TL_HOST_CALLS_H
#define TL_HOST_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

enum {
    TL_HC_SYNC = 0,  /* *Synchronize*, and copies without "Async" (cudaMemcpy, hipMemcpyWithStream) */
    TL_HC_COPY,      /* asynchronous copies that wait (tl_blocking_call: device-to-host, pageable host memory) */
    TL_HC_LAUNCH,    /* kernel, graph and memset launches, and the asynchronous copies that do not wait */
    TL_HC_SETUP,     /* every other runtime or driver call (allocation, streams, context, queries) */
    TL_HC_KINDS
};

/* An op instance counts when its duration is more than TL_HC_FACTOR times
 * the GPU time under it and that GPU time is above zero (the analysis'
 * rule, per signature there, per instance here). */
#define TL_HC_FACTOR 5

typedef struct tl_host_calls {
    size_t n[TL_HC_KINDS];            /* calls inside them (at any depth: the nearest enclosing op that counts), by kind */
    int64_t ns[TL_HC_KINDS];          /* their durations, summed */
    uint32_t longest[TL_HC_KINDS];    /* UID of the longest call of each kind, TL_NOUID none */
    int64_t longest_ns[TL_HC_KINDS];
    uint32_t longest_op[TL_HC_KINDS]; /* its enclosing op */
} tl_host_calls;

/* The kind of a runtime or driver call, by name. */
int tl_host_call_kind(const char *name);

/* only_name (NULL: every op): per names id, nonzero for the op names that
 * count (the analysis' flagged signatures' names, so that the breakdown is
 * of the ops its total is of); an op of another name is left out. */
void tl_host_calls_compute(const tl_trace *t, const uint8_t *only_name, tl_host_calls *h);

#endif
