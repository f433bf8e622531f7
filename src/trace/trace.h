/* trace.h — a loaded trace: the EventStore plus its tree.
 * Owns both; immutable after tl_trace_load returns, and reference-counted so
 * that Lua states on several threads can share one trace (the count is the
 * only mutable field, updated atomically). */
#ifndef TL_TRACE_H
#define TL_TRACE_H

#include <stdatomic.h>

#include "event_store.h"
#include "tree.h"
#include "../util/error.h"

typedef struct tl_load_opts {
    int with_python;        /* python functions in the tree (--include_call_stack) */
    int progress;           /* print progress to stderr */
    int threads;            /* scan threads for plain files (0 = one per core) */
} tl_load_opts;

typedef struct tl_trace {
    tl_event_store es;
    tl_tree tree;
    char *path;
    tl_load_opts opts;
    double load_seconds, tree_seconds;
    atomic_int refs;
} tl_trace;

/* Loads and builds the tree; NULL with err set on failure. refs = 1. */
tl_trace *tl_trace_load(const char *path, const tl_load_opts *opts, tl_error *err);
void tl_trace_retain(tl_trace *t);
void tl_trace_release(tl_trace *t);

#endif
