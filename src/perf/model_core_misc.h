/* model_core_misc.h — the other core perf models (perf-model spec §4.8:
 * MoE dispatch/combine, causal conv1d, Mamba SSD, fused RoPE, cross
 * entropy) and the small helpers the core model files share (Python
 * literals of Concrete Inputs, shape products, args lookups). */
#ifndef TL_MODEL_CORE_MISC_H
#define TL_MODEL_CORE_MISC_H

#include <stddef.h>
#include <stdint.h>

#include "perf_model.h"

extern const tl_perf_class tl_pc_moe_dispatch;
extern const tl_perf_class tl_pc_moe_combine;
extern const tl_perf_class tl_pc_causal_conv1d_fwd;
extern const tl_perf_class tl_pc_mamba_ssd_fwd;
extern const tl_perf_class tl_pc_fused_rope_fwd;
extern const tl_perf_class tl_pc_cross_entropy_fwd;

/* --- helpers shared by the core model files -------------------------- */

/* ast.literal_eval of a Concrete Inputs string ("[16, 16]", "True",
 * "1e-05", "(2,)", "'x'", "None"), parsed into r->arena; tuples become
 * lists. NULL when text is NULL or is not a literal ("" included): the
 * reference's SyntaxError / ValueError. */
const tl_pv *tl_core_literal(tl_perf_result *r, const char *text);
/* Python truthiness of the literal of text, or of the raw string when it
 * does not parse; 0 for NULL. ("False" -> 0, "" -> 0, "1" -> 1, "x" -> 1) */
int tl_core_literal_truth(tl_perf_result *r, const char *text);
/* The literal of text as a Python int (not a bool); 0 when it is none. */
int tl_core_literal_int(tl_perf_result *r, const char *text, int64_t *out);
/* [bool(x) for x in literal(text)]: 0 unless text is a list/tuple literal;
 * keeps at most max items, *n = the list's length. */
int tl_core_literal_bools(tl_perf_result *r, const char *text, int *out, size_t max, size_t *n);

/* Python truthiness / int check of a parsed value. */
int tl_core_truth(const tl_pv *v);
int tl_core_is_int(const tl_pv *v); /* INT, not BOOL */
/* A list of Python ints (an empty list counts). */
int tl_core_is_int_list(const tl_pv *v);

/* A tensor size outside [0, TL_CORE_MAX_DIM] is not a real shape: models
 * fail on it (this keeps every exact formula inside __int128). */
#define TL_CORE_MAX_DIM ((int64_t)1 << 48)
int tl_core_size_ok(const tl_pv *v);

/* prod(shape) for a list of sizes (1 when empty); 0 when shape is not such
 * a list or the product leaves int64. */
int tl_core_numel(const tl_pv *shape, int64_t *out);
/* shape[i] as a size, Python indexing (i < 0 counts from the end). */
int tl_core_dim(const tl_pv *shape, long i, int64_t *out);
/* The value of key in the event's args dict, or NULL. */
const tl_pv *tl_core_arg(const tl_perf_event *ev, const char *key);

/* A list of Python bools as a param value (a tuple when rendered). */
void tl_core_pm_bools(tl_perf_result *r, const char *key, const int *v, size_t n);

#endif
