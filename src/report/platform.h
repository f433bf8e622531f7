/* platform.h — choosing the GPU arch of a report: --arch FILE, --platform
 * NAME (a shipped arch file; "none" disables the roofline), else detection
 * from the trace's deviceProperties name. */
#ifndef TL_PLATFORM_H
#define TL_PLATFORM_H

#include "../perf/arch.h"
#include "../trace/trace.h"

typedef struct tl_platform_choice {
    int have_arch;          /* out holds an arch */
    char how[192];          /* "platform MI300X (max-achievable)", "detected from ...", "none" */
    char path[4096];        /* the arch file read, when have_arch */
} tl_platform_choice;

/* Returns 0 (with choice filled; out valid when have_arch) or -1 with err. */
int tl_platform_resolve(const tl_trace *t, const char *platform, const char *arch_path, tl_arch *out,
                        tl_platform_choice *choice, tl_error *err);

/* The name of the trace's first deviceProperties entry into buf, or NULL. */
const char *tl_trace_device_name(const tl_trace *t, char *buf, size_t cap);

#endif
