/* args_walk.h — inline lookups of a few keys in one walk of an event's args
 * blob (the encoding of event_store.h), for the loops that ask every GPU
 * event or cpu_op for the same keys: no call per argument, one walk for
 * two keys. Each result is what tl_es_arg_int / tl_es_arg_raw give (the
 * key's last occurrence decides). Owns nothing. */
#ifndef TL_ARGS_WALK_H
#define TL_ARGS_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "event_store.h"

/* The integer values of keys k1 and k2 (neither TL_K_CORRELATION, whose
 * value may live in the corr column; UINT32_MAX: not asked) of event ev:
 * *f1 / *f2 set to 1 when the key's last occurrence is an integer (then
 * *v1 / *v2 hold it), else 0, as tl_es_arg_int. */
static inline void tl_args_int2(const tl_event_store *es, size_t ev, uint32_t k1, int64_t *v1, int *f1,
                                uint32_t k2, int64_t *v2, int *f2)
{
    *f1 = *f2 = 0;
    if (!es->blob) return;
    const uint8_t *p = es->blob + tl_es_args_at(es, ev), *end = es->blob + tl_es_args_at(es, ev + 1);
    while (p < end) {
        uint64_t key = *p < 0x80 ? *p++ : tl_get_varint(&p);
        int tag = *p++;
        uint64_t v = *p < 0x80 ? *p++ : tl_get_varint(&p);
        if (key == k1) {
            *f1 = tag == TL_AV_INT;
            if (*f1) *v1 = tl_unzigzag(v);
        } else if (key == k2) {
            *f2 = tag == TL_AV_INT;
            if (*f2) *v2 = tl_unzigzag(v);
        }
    }
}

/* Whether event ev's args hold key k at all (any value: tl_es_arg_raw's
 * "raw text or an integer"; k not TL_K_CORRELATION). */
static inline int tl_args_has(const tl_event_store *es, size_t ev, uint32_t k)
{
    if (!es->blob) return 0;
    const uint8_t *p = es->blob + tl_es_args_at(es, ev), *end = es->blob + tl_es_args_at(es, ev + 1);
    while (p < end) {
        uint64_t key = *p < 0x80 ? *p++ : tl_get_varint(&p);
        if (key == k) return 1;
        p++; /* the tag */
        while (*p++ & 0x80) {} /* the value's varint */
    }
    return 0;
}

#endif
