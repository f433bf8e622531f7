/* categorize.h — op categories (perf-report spec §6, perf-model spec §3.1)
 * and the registry tables behind them (registry.c): the 245-row op → model
 * class table of perf-model Appendix A and the 48 category-only names. The
 * three core registry functions (tl_perf_lookup, tl_op_registry_category,
 * tl_sheet_families) are declared in perf_model.h. Owns nothing; every
 * string returned is static. Thread-safe. */
#ifndef TL_CATEGORIZE_H
#define TL_CATEGORIZE_H

#include <stddef.h>

#include "perf_model.h"

/* One row of perf-model Appendix A (op_to_perf_model_class_map). */
typedef struct tl_perf_op_entry {
    const char *name;           /* exact cpu_op name, e.g. "aten::mm" */
    const char *class_name;     /* reference class name, e.g. "aten_mm" */
    const tl_perf_class *cls;   /* &tl_pc_<class_name>, NULL while that class is not linked in */
    const char *category;       /* the class's `category` column, e.g. "GEMM", "SDPA_bwd" */
    const char *bwd_category;   /* NULL for "-" */
    const char *sheet;          /* sheet family, e.g. "GEMM", "SDPA", "UnaryElementwise" */
} tl_perf_op_entry;

/* One row of the category-only table (perf-model §3.5). */
typedef struct tl_category_only_entry {
    const char *name;
    const char *category;
} tl_category_only_entry;

/* The whole Appendix A table in spec order (insertion order of the
 * reference map = sheet order); *n = 245. */
const tl_perf_op_entry *tl_perf_op_table(size_t *n);
/* The Appendix A row of an exact name, or NULL (no pattern matching). */
const tl_perf_op_entry *tl_perf_op_find(const char *name);
/* The category-only table in spec order; *n = 48. */
const tl_category_only_entry *tl_category_only_table(size_t *n);
/* The Triton pattern of perf-model §9: the name starts with triton_poi_,
 * triton_red_ or triton_per_. */
int tl_perf_is_triton_name(const char *name);

/* categorize_torch_op (perf-report §6), the first rule that matches:
 * 1. the exact-name registry (tl_op_registry_category);
 * 2. prefix "triton" -> "triton", prefix "record_param_comms" -> "record_param_comms";
 * 3. first_kernel_name (the first kernel_details entry, kernels sorted by ts;
 *    NULL when there is none) starting with "void at::native" and containing
 *    "elementwise" -> "elementwise", else "reduce" -> "reduce", else
 *    "multi_tensor_apply" -> "multi_tensor_apply";
 * 4. "other".
 * Never NULL. The unified table's sole-backward rule is not applied here. */
const char *tl_categorize_op(const char *name, const char *first_kernel_name);

#endif
