#include "platform.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../json/pyval.h"

const char *tl_trace_device_name(const tl_trace *t, char *buf, size_t cap)
{
    const tl_event_store *es = &t->es;
    for (size_t i = 0; i < es->n_top; i++) {
        if (strcmp(tl_strpool_get(&es->keys, es->top[i].key), "deviceProperties") != 0) continue;
        tl_pv_arena *ar = tl_pv_arena_new();
        const tl_pv *v = tl_pv_parse(ar, es->top[i].raw);
        const tl_pv *first = tl_pv_at(v, 0);
        const char *found = NULL;
        if (first && first->kind == TL_PV_DICT)
            for (size_t k = 0; k + 1 < first->n; k += 2)
                if (first->items[k].kind == TL_PV_STR && !strcmp(first->items[k].s, "name") &&
                    first->items[k + 1].kind == TL_PV_STR) {
                    snprintf(buf, cap, "%s", first->items[k + 1].s);
                    found = buf;
                }
        tl_pv_arena_free(ar);
        return found;
    }
    return NULL;
}

static void describe(tl_platform_choice *c, const char *what, const tl_arch *a)
{
    const char *kind = a->kind && !strcmp(a->kind, "datasheet_peak") ? "datasheet peak figures"
                                                                        : "max-achievable compute figures";
    snprintf(c->how, sizeof c->how, "%s (%s)", what, kind);
}

int tl_platform_resolve(const tl_trace *t, const char *platform, const char *arch_path, tl_arch *out,
                        tl_platform_choice *choice, tl_error *err)
{
    memset(choice, 0, sizeof *choice);
    if (arch_path && platform) {
        tl_error_set(err, "--arch and --platform are mutually exclusive");
        return -1;
    }
    if (platform && !strcasecmp(platform, "none")) {
        snprintf(choice->how, sizeof choice->how, "none (--platform none)");
        return 0;
    }
    char dir[4096], what[128];
    if (arch_path) {
        if (tl_arch_load_file(arch_path, out, err) != 0) return -1;
        snprintf(what, sizeof what, "arch file %s", arch_path);
        snprintf(choice->path, sizeof choice->path, "%s", arch_path);
    } else {
        const char *name = platform;
        char dev[256];
        if (!name) {
            const char *d = tl_trace_device_name(t, dev, sizeof dev);
            name = d ? tl_arch_detect(d) : NULL;
            if (!name) {
                if (d && *d)
                    snprintf(choice->how, sizeof choice->how,
                             "none (no arch file for the trace's device \"%.80s\"; use --platform or --arch)", d);
                else
                    snprintf(choice->how, sizeof choice->how,
                             "none (the trace does not name its GPU; use --platform or --arch)");
                return 0;
            }
            snprintf(what, sizeof what, "platform %s, detected from the trace's device \"%s\"", name, d);
        } else {
            snprintf(what, sizeof what, "platform %s", name);
        }
        if (tl_arch_dir(dir, sizeof dir) != 0) {
            tl_error_set(err, "the tracelens arch directory was not found (set TRACELENS_ARCH_DIR)");
            return -1;
        }
        if (tl_arch_find_platform(name, dir, choice->path, sizeof choice->path, err) != 0) return -1;
        if (tl_arch_load_file(choice->path, out, err) != 0) return -1;
    }
    choice->have_arch = 1;
    describe(choice, what, out);
    return 0;
}
