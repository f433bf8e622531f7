/* perf_util.h — the helpers every perf model family shares (perf-model spec
 * §0-§2), so that the model_*.c files hold only their classes' formulas:
 *   - reading an event the way the reference indexes it: args[key], Python
 *     list indexing, and the strict accessors (tl_px_*) whose misses fail
 *     the model as the reference's IndexError / KeyError / TypeError do;
 *   - Python texts of Concrete Inputs: int(), float(), bool(literal), an
 *     int tuple, and ast.literal_eval into a tl_pv (tl_py_*);
 *   - Python numbers: floor / ceil division and tl_pn, an exact int that
 *     turns float where Python's would;
 *   - shapes (tl_shape_*) and the few result helpers several families use.
 * Owns no state: what a helper allocates lives in the caller's result
 * arena (tl_perf_result.arena). */
#ifndef TL_PERF_UTIL_H
#define TL_PERF_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "perf_model.h"

/* --- args lookups ----------------------------------------------------------- */

/* dict[key] of a DICT value, NULL when absent; of a repeated key the last
 * one, as json.loads keeps it. */
const tl_pv *tl_pv_dict_get(const tl_pv *dict, const char *key);
/* args[key] of the event (its args dict), NULL when absent. */
const tl_pv *tl_pe_arg(const tl_perf_event *ev, const char *key);
/* `x[i]` of a list value with Python's negative index; NULL when out of range. */
const tl_pv *tl_pv_item(const tl_pv *list, long i);
/* An int arg: an int (or bool) value, or a text that int() accepts. */
int tl_pv_int_text(const tl_pv *v, int64_t *out);
/* A LIST whose items are all int64 ints (TL_PV_INT; an empty list counts). */
int tl_pv_is_int64_list(const tl_pv *v);

/* --- strict accessors -------------------------------------------------------
 * A parse in progress: the first failure is kept, later reads return 0 /
 * NULL, and tl_px_done() turns a failure into TL_PERF_ERROR. Negative
 * indices count from the end, as in Python. */
typedef struct tl_px {
    const tl_perf_event *ev;
    tl_perf_result *r;
    int bad;
    char why[96];
} tl_px;

void tl_px_init(tl_px *p, const tl_perf_event *ev, tl_perf_result *r);
/* Records the first failure (printf-style); always returns 0. */
int tl_px_fail(tl_px *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 when the parse is clean, else sets r's TL_PERF_ERROR and returns it. */
int tl_px_done(tl_px *p);

/* Input Dims[i] as a list (a shape); NULL + failure when absent. */
const tl_pv *tl_px_shape(tl_px *p, long i);
/* Input Dims[i][j] as an int. */
int64_t tl_px_dim(tl_px *p, long i, long j);
/* `a, b, ... = Input Dims[i]`: exactly n ints, else failure. */
void tl_px_unpack(tl_px *p, long i, int64_t *out, size_t n);
/* Input type[i] text ("" stays ""); NULL + failure when absent or not text. */
const char *tl_px_type(tl_px *p, long i);
/* Concrete Inputs[i] text; NULL + failure when absent or not text. */
const char *tl_px_concrete(tl_px *p, long i);
/* Input Strides[i] (NULL, no failure, when the key or entry is absent). */
const tl_pv *tl_px_stride(tl_px *p, long i);
/* int(Concrete Inputs[i]); 0 + failure when absent or not an int text. */
int64_t tl_px_concrete_int(tl_px *p, long i);

/* Input type[i] when present and non-empty, else NULL (the "if present" reads). */
const char *tl_px_type_opt(const tl_perf_event *ev, long i);
/* Input Dims[i] when present and non-empty, else NULL. */
const tl_pv *tl_px_shape_opt(const tl_perf_event *ev, long i);

/* --- Python texts (Concrete Inputs are strings: "[16, 16]", "False", "0.") --- */

/* int(s): optional blanks and sign, digits with single '_' separators.
 * Returns 1 and sets *out on success (int64 range only); 0 for NULL. */
int tl_py_int(const char *s, int64_t *out);
/* float(s): decimal / exponent forms, inf, infinity, nan. */
int tl_py_float(const char *s, double *out);
/* bool(ast.literal_eval(s)) for the literals Concrete Inputs hold: True,
 * False, None, numbers, quoted strings, [..] / (..) / {..} (judged by their
 * brackets, without reading the items). 0 when s is not such a literal
 * (SyntaxError / ValueError in the reference). */
int tl_py_truth(const char *s, int *truth);
/* A tuple of ints from "[16, 16]" or "(2,2)": strip the brackets, split on
 * commas, int() each piece. An empty text (or "[]") gives *n = 0. 0 on a
 * bad piece or more than max items. */
int tl_py_int_tuple(const char *s, int64_t *v, size_t max, size_t *n);

/* ast.literal_eval of a Concrete Inputs string ("[16, 16]", "True",
 * "1e-05", "(2,)", "'x'", "None"), parsed into r->arena; tuples become
 * lists. NULL when text is NULL or is not a literal ("" included): the
 * reference's SyntaxError / ValueError. */
const tl_pv *tl_py_literal(tl_perf_result *r, const char *text);
/* tl_py_literal of Concrete Inputs[i]. */
const tl_pv *tl_pe_literal(tl_perf_result *r, const tl_perf_event *ev, size_t i);
/* Python truthiness of the literal of text, or of the raw string when it
 * does not parse; 0 for NULL. ("False" -> 0, "" -> 0, "1" -> 1, "x" -> 1) */
int tl_py_literal_truth(tl_perf_result *r, const char *text);
/* The literal of text as a Python int (not a bool); 0 when it is none. */
int tl_py_literal_int(tl_perf_result *r, const char *text, int64_t *out);
/* [bool(x) for x in literal(text)]: 0 unless text is a list/tuple literal;
 * keeps at most max items, *n = the list's length. */
int tl_py_literal_bools(tl_perf_result *r, const char *text, int *out, size_t max, size_t *n);
/* A parsed value is a Python int (INT or BIGINT, not BOOL) / a list of them
 * (an empty list counts). */
int tl_py_is_int(const tl_pv *v);
int tl_py_is_int_list(const tl_pv *v);

/* --- Python numbers ------------------------------------------------------- */

/* a // b (floor division) and math.ceil(a / b) on exact ints, b != 0
 * (INT64_MIN // -1 wraps to INT64_MIN). */
int64_t tl_floor_div(int64_t a, int64_t b);
int64_t tl_ceil_div(int64_t a, int64_t b);

/* The reference computes with unbounded ints and converts to float once (or
 * when a float enters a formula). tl_pn is an exact int while it fits in
 * __int128 and a double from the first float operand (or overflow) on, so
 * formulas keep the reference's operation order. */
typedef struct tl_pn {
    __int128 i;
    double f;
    int is_f;
} tl_pn;

tl_pn tl_pn_int(int64_t v);
tl_pn tl_pn_float(double v);
double tl_pn_double(tl_pn a);
tl_pn tl_pn_mul(tl_pn a, tl_pn b);
tl_pn tl_pn_add(tl_pn a, tl_pn b);
tl_pn tl_pn_sub(tl_pn a, tl_pn b);
int tl_pn_eq(tl_pn a, tl_pn b);
/* a // b as Python computes it; 0 on division by zero. */
int tl_pn_floordiv(tl_pn a, tl_pn b, tl_pn *out);
/* The value as an int64 when it is an int in range. */
int tl_pn_int64(tl_pn a, int64_t *out);

/* --- shapes ------------------------------------------------------------------ */

/* A tensor size outside [0, TL_SHAPE_MAX_DIM] is not a real shape: the
 * models that use these fail on it (this keeps exact formulas in __int128). */
#define TL_SHAPE_MAX_DIM ((int64_t)1 << 48)
int tl_shape_size_ok(const tl_pv *v);
/* prod(shape) for a list of sizes (1 when empty); 0 when shape is not such
 * a list or the product leaves int64. */
int tl_shape_numel(const tl_pv *shape, int64_t *out);
/* shape[i] as a size, Python indexing (i < 0 counts from the end). */
int tl_shape_dim(const tl_pv *shape, long i, int64_t *out);

/* --- results ---------------------------------------------------------------- */

/* tl_dtype_bpe, or dflt when the size is unknown (the reference's `bpe or 2`). */
int tl_dtype_bpe_or(const char *dtype, int dflt);
/* bytes() returned a number. */
void tl_perf_set_bytes(tl_perf_result *r, double bytes);
/* A model's successful end: maf ("matrix", "vector" or NULL: no compute
 * unit) and the precision of dtype (tl_dtype_precision). Returns TL_PERF_OK. */
int tl_perf_ok(tl_perf_result *r, const char *maf, const char *dtype);
/* The unary elementwise params (spec §4.4): op_shape, dtype_in_out = (din,
 * dout), stride_input, stride_output. */
void tl_pm_unary(tl_perf_result *r, const tl_pv *shape, const char *din, const char *dout, const tl_pv *stride_in,
                 const tl_pv *stride_out);

#endif
