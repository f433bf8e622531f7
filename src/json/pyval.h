/* pyval.h — args values (Input Dims, Input type, Input Strides, Concrete
 * Inputs, ...) parsed from their raw JSON text into a small tree, the way the
 * reference sees them after json.loads. Owns nothing global: a tl_pv_arena
 * holds every node of the values parsed into it and frees them at once.
 * Also renders values as Python's str() does after the reference turns lists
 * into tuples: ((512,), (141, 512), (), ()), except the lists a model marks
 * as Python lists (pylist): [((4096, 8192), 'c10::bfloat16')]. */
#ifndef TL_PYVAL_H
#define TL_PYVAL_H

#include <stddef.h>
#include <stdint.h>

#include "../util/sbuf.h"

typedef enum tl_pv_kind {
    TL_PV_NULL = 0,  /* JSON null -> None */
    TL_PV_BOOL,
    TL_PV_INT,       /* integer that fits int64 */
    TL_PV_BIGINT,    /* integer beyond int64: text kept in s */
    TL_PV_FLOAT,
    TL_PV_STR,
    TL_PV_LIST,      /* JSON array (a tuple after the reference's conversion) */
    TL_PV_DICT,      /* JSON object: items alternate key, value */
} tl_pv_kind;

typedef struct tl_pv {
    uint8_t kind;
    uint8_t pylist;      /* LIST: a Python list, shown [..] by tl_pv_str_tuple too */
    int64_t i;           /* INT, BOOL */
    double f;            /* FLOAT */
    const char *s;       /* STR, BIGINT (NUL-terminated, in the arena) */
    size_t n;            /* STR length; LIST/DICT item count (DICT: 2 * pairs) */
    struct tl_pv *items;
} tl_pv;

typedef struct tl_pv_arena tl_pv_arena;

tl_pv_arena *tl_pv_arena_new(void);
void tl_pv_arena_free(tl_pv_arena *a);
/* Parses validated JSON text; never fails on text the scanner accepted. */
const tl_pv *tl_pv_parse(tl_pv_arena *a, const char *json);

/* A LIST of n items, all None, for the caller to fill. */
tl_pv *tl_pv_new_list(tl_pv_arena *a, size_t n);
/* A LIST of n ints. */
const tl_pv *tl_pv_int_list(tl_pv_arena *a, const int64_t *v, size_t n);

/* Accessors that tolerate absence: NULL/out of range give NULL. */
const tl_pv *tl_pv_at(const tl_pv *v, size_t i);
size_t tl_pv_len(const tl_pv *v);                 /* 0 unless LIST */
int tl_pv_is_list(const tl_pv *v);
int tl_pv_nonempty(const tl_pv *v);               /* Python truthiness */
/* Product of a shape (list of ints); 1 for an empty list. */
int64_t tl_pv_prod(const tl_pv *shape);
int tl_pv_int(const tl_pv *v, int64_t *out);      /* INT (or BOOL) */
const char *tl_pv_cstr(const tl_pv *v);           /* STR text or NULL */

/* Python str() of the value with lists shown as tuples (the reference's
 * list_to_tuple): ((512,), (141, 512)); strings quoted as repr does. Lists
 * marked pylist stay lists: [(512,), (141, 512)]. */
void tl_pv_str_tuple(tl_sbuf *b, const tl_pv *v);
/* JSON text of the value (round-trips through tl_pv_parse, but for the
 * pylist marks: tl_pv_copy_marks puts them back). */
void tl_pv_to_json(tl_sbuf *b, const tl_pv *v);
/* Copies the pylist marks of src onto dst, a copy of it of the same
 * structure (e.g. parsed from its JSON text); stops where they differ. */
void tl_pv_copy_marks(tl_pv *dst, const tl_pv *src);
/* Python repr with lists kept as lists: [[512, 1], []]. */
void tl_pv_str_list(tl_sbuf *b, const tl_pv *v);

#endif
