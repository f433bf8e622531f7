/* argtext.h — the text of an event's args as the reference prints them:
 * str() of the tuple form (Input Dims, Concrete Inputs, ...), the list form,
 * and the process / thread names of its metadata events. A property of the
 * trace's events, used by the report's op sheets and by TraceDiff's
 * diff_stats. Owns the rendered strings, cached per raw value id and per
 * (pid, tid); one tl_argtext per thread (not shared). */
#ifndef TL_ARGTEXT_H
#define TL_ARGTEXT_H

#include <stdint.h>

#include "../util/hashmap.h"
#include "../util/strpool.h"
#include "trace.h"

/* Rendered text of an event's args: the Python str() of the tuple form, per
 * raw value (cached by value id), and the metadata names. */
typedef struct tl_argtext {
    const tl_trace *t;
    tl_strpool text;           /* rendered strings */
    uint32_t *tuple_of_value;  /* values id -> text id (UINT32_MAX = not yet) */
    uint32_t *list_of_value;   /* values id -> text id, list form [[1, 2]] */
    tl_map meta;               /* (pid, tid) -> index of 3 text ids in meta_ids */
    uint32_t *meta_ids;
    size_t n_meta, cap_meta;
} tl_argtext;

void tl_argtext_init(tl_argtext *a, const tl_trace *t);
void tl_argtext_free(tl_argtext *a);
/* str() of args[key] in tuple form, NULL when the key is absent. */
const char *tl_argtext_tuple(tl_argtext *a, uint32_t ev, uint32_t key);
/* repr of args[key] with lists kept (perf sheets' *_first columns). */
const char *tl_argtext_list(tl_argtext *a, uint32_t ev, uint32_t key);
/* process_name (0), process_label (1) or thread_name (2) of an event,
 * "Unknown" by default, cached per (pid, tid). */
enum { TL_META_PROCESS_NAME, TL_META_PROCESS_LABEL, TL_META_THREAD_NAME };
const char *tl_argtext_meta(tl_argtext *a, uint32_t ev, int which);
/* The same as a text id in a->text. */
uint32_t tl_argtext_meta_id(tl_argtext *a, uint32_t ev, int which);
/* The text ids of Input Dims, Input type, Input Strides and Concrete Inputs
 * (tuple or list form; UINT32_MAX when absent), in one pass over the args. */
void tl_argtext_shape_ids(tl_argtext *a, uint32_t ev, int tuple, uint32_t ids[4]);

#endif
