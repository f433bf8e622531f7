/* categorize.c — categorize_torch_op (perf-report spec §6). */
#include <string.h>

#include "categorize.h"

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

const char *tl_categorize_op(const char *name, const char *first_kernel_name)
{
    if (name) {
        const char *cat = tl_op_registry_category(name);
        if (cat) return cat;
        if (starts_with(name, "triton")) return "triton";
        if (starts_with(name, "record_param_comms")) return "record_param_comms";
    }
    if (first_kernel_name && starts_with(first_kernel_name, "void at::native")) {
        if (strstr(first_kernel_name, "elementwise")) return "elementwise";
        if (strstr(first_kernel_name, "reduce")) return "reduce";
        if (strstr(first_kernel_name, "multi_tensor_apply")) return "multi_tensor_apply";
    }
    return "other";
}
