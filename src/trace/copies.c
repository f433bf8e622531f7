/* copies.c — see copies.h. */
#include "copies.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../util/vec.h"

const char *tl_copy_dir_name(int dir)
{
    static const char *const n[TL_CP_NDIR] = {"H2D", "D2H", "D2D", "P2P", "memset", "other"};
    return dir >= 0 && dir < TL_CP_NDIR ? n[dir] : "other";
}

const char *tl_hostmem_name(int mem)
{
    static const char *const n[TL_HOSTMEM_N] = {"", "pageable", "pinned", "not said"};
    return mem >= 0 && mem < TL_HOSTMEM_N ? n[mem] : "";
}

static int has(const char *s, const char *w) { return strstr(s, w) != NULL; }

int tl_copy_direction(const char *s, int peer)
{
    if (peer && (has(s, "ptop") || has(s, "peer"))) return TL_CP_P2P;
    if (has(s, "dtoh") || has(s, "device -> host") || has(s, "devicetohost") || has(s, "device_to_host"))
        return TL_CP_D2H;
    if (has(s, "htod") || has(s, "host -> device") || has(s, "hosttodevice") || has(s, "host_to_device"))
        return TL_CP_H2D;
    if (has(s, "dtod") || has(s, "device -> device") || has(s, "devicetodevice") || has(s, "device_to_device"))
        return TL_CP_D2D;
    return TL_CP_OTHER;
}

void tl_copy_classify(uint8_t cat, const char *name, int *dir, int *mem)
{
    *mem = TL_HOSTMEM_NONE;
    if (cat == TL_CAT_GPU_MEMSET) {
        *dir = TL_CP_MEMSET;
        return;
    }
    char s[256];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof s; n++) s[n] = (char)tolower((unsigned char)name[n]);
    s[n] = 0;
    *dir = tl_copy_direction(s, 1);
    if (*dir == TL_CP_H2D || *dir == TL_CP_D2H) {
        const char *p = strchr(s, '(');
        *mem = TL_HOSTMEM_UNSAID;
        if (p && has(p, "pageable")) *mem = TL_HOSTMEM_PAGEABLE;
        else if (p && has(p, "pinned")) *mem = TL_HOSTMEM_PINNED;
    }
}

void tl_copies_compute(const tl_trace *t, tl_copies *out)
{
    const tl_event_store *es = &t->es;
    memset(out, 0, sizeof *out);
    /* per names id: 1 + dir * TL_HOSTMEM_N + mem; 0 = not yet */
    uint8_t *memo = tl_xcalloc(es->names.n + 1, 1);
    for (size_t u = 0; u < es->n; u++) {
        uint8_t c = es->cat[u];
        if ((c != TL_CAT_GPU_MEMCPY && c != TL_CAT_GPU_MEMSET) || !(es->flags[u] & TL_F_TS)) continue;
        uint32_t nm = es->name[u];
        /* a name is a copy's or a set's, never both in a real trace; the category decides */
        int dir, mem;
        if (c == TL_CAT_GPU_MEMSET) {
            dir = TL_CP_MEMSET;
            mem = TL_HOSTMEM_NONE;
        } else {
            if (!memo[nm]) {
                tl_copy_classify(c, tl_es_name(es, u), &dir, &mem);
                memo[nm] = (uint8_t)(1 + dir * TL_HOSTMEM_N + mem);
            }
            dir = (memo[nm] - 1) / TL_HOSTMEM_N;
            mem = (memo[nm] - 1) % TL_HOSTMEM_N;
        }
        tl_copy_group *g = &out->g[dir][mem];
        g->count++;
        g->dur_ns += es->dur[u];
        int64_t b;
        if ((es->flags[u] & TL_F_ARGS) && tl_es_arg_int(es, u, TL_K_BYTES, &b) && b > 0) {
            g->n_bytes++;
            g->bytes = g->bytes > INT64_MAX - b ? INT64_MAX : g->bytes + b; /* saturates: hostile args */
            g->bytes_ns += es->dur[u];
            if (b > g->max_bytes) g->max_bytes = b;
        }
        out->n++;
    }
    free(memo);
}
