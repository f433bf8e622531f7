/* categorize.c — categorize_torch_op (perf-report spec §6). */
#include <string.h>

#include "../util/str.h"
#include "categorize.h"

const char *tl_categorize_op(const char *name, const char *first_kernel_name)
{
    if (name) {
        const char *cat = tl_op_registry_category(name);
        if (cat) return cat;
        if (tl_starts_with(name, "triton")) return "triton";
        if (tl_starts_with(name, "record_param_comms")) return "record_param_comms";
    }
    if (first_kernel_name && tl_starts_with(first_kernel_name, "void at::native")) {
        if (strstr(first_kernel_name, "elementwise")) return "elementwise";
        if (strstr(first_kernel_name, "reduce")) return "reduce";
        if (strstr(first_kernel_name, "multi_tensor_apply")) return "multi_tensor_apply";
    }
    return "other";
}
