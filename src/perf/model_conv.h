/* model_conv.h — the convolution perf models (perf-model spec §4.2) and the
 * small Python-literal parsers they share with the attention models
 * (Concrete Inputs are strings: "[16, 16]", "False", "0.", "128"). */
#ifndef TL_MODEL_CONV_H
#define TL_MODEL_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "perf_model.h"

extern const tl_perf_class tl_pc_aten_conv;
extern const tl_perf_class tl_pc_aten_conv_bwd;
extern const tl_perf_class tl_pc_ConvBias_;
extern const tl_perf_class tl_pc_ConvBiasReLU_;
extern const tl_perf_class tl_pc_ConvBias_Backward;
extern const tl_perf_class tl_pc_ConvBiasReLU_Backward;

/* ConvBias_ / ConvBiasReLU_ remember their inputs by args["Sequence number"]
 * so that ConvBias_Backward / ConvBiasReLU_Backward can find them (the
 * reference caches them the same way, process-wide). Thread-safe. Clear it
 * between traces. */
void tl_conv_seq_cache_clear(void);

/* --- Python literal parsing of Concrete Inputs strings ------------------ */
/* int(s): surrounding whitespace, a sign, digits (and '_' between digits). */
int tl_lit_int(const char *s, int64_t *out);
/* float(s): decimal / exponent forms, inf, infinity, nan. */
int tl_lit_float(const char *s, double *out);
/* bool(ast.literal_eval(s)) for the literals Concrete Inputs hold: True,
 * False, None, numbers, quoted strings, [..] / (..) / {..}. 0 when s is not
 * such a literal (SyntaxError / ValueError in the reference). */
int tl_lit_truth(const char *s, int *truth);
/* A tuple of ints from "[16, 16]" or "(2,2)": strip the brackets, split on
 * commas, int() each piece. An empty text (or "[]") gives *n = 0. 0 on a
 * bad piece or more than max items. */
int tl_lit_int_tuple(const char *s, int64_t *v, size_t max, size_t *n);
/* args[key] of the event (the args dict), or NULL. */
const tl_pv *tl_lit_arg(const tl_perf_event *ev, const char *key);

/* --- Python numbers ------------------------------------------------------
 * The reference computes with unbounded ints and converts to float once (or
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

#endif
