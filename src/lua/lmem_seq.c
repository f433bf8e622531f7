/* lmem_seq.c — see lmem_seq.h. */
#include "lmem_seq.h"

#include <lauxlib.h>
#include <string.h>

#include "../report/platform.h"
#include "../report/sheets_mem_seq.h"
#include "../trace/copies.h"
#include "../trace/kernel_ngrams.h"
#include "../trace/mem_timeline.h"
#include "lfields.h"
#include "lopts.h"
#include "ltrace.h"

/* trace:kernel_sequences{min_len =, max_len =, top =, min_count =} -> array of
 * {device, stream, rank, kernels = {names}, count, gpu_us, max_kernel_us,
 * stream_kernel_us, first_uid} by (device, stream), then rank */
int tl_l_trace_kernel_sequences(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    tl_ngram_opts o;
    tl_ngram_opts_default(&o);
    o.min_len = (unsigned)tl_lopt_int(L, 2, "min_len", o.min_len, 2, 64, "kernel_sequences");
    o.max_len = (unsigned)tl_lopt_int(L, 2, "max_len", o.max_len, o.min_len, 64, "kernel_sequences");
    o.top = (unsigned)tl_lopt_int(L, 2, "top", o.top, 1, 1000000, "kernel_sequences");
    o.min_count = (size_t)tl_lopt_int(L, 2, "min_count", (lua_Integer)o.min_count, 2, (lua_Integer)1 << 40,
                                      "kernel_sequences");
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow (trace:kernel_sequences)");
    tl_kernel_ngrams k;
    tl_kernel_ngrams_compute(t, &o, &k);
    tl_l_push_kernel_ngrams(L, t, &k);
    tl_kernel_ngrams_free(&k);
    return 1;
}

void tl_l_push_kernel_ngrams(lua_State *L, const tl_trace *t, const tl_kernel_ngrams *kp)
{
    const tl_kernel_ngrams k = *kp; /* read only */
    luaL_checkstack(L, 8, "kernel_sequences");
    lua_createtable(L, (int)k.n, 0);
    for (size_t i = 0; i < k.n; i++) {
        const tl_ngram *g = &k.v[i];
        lua_createtable(L, 0, 10);
        tl_lset_int(L, "device", g->device);
        tl_lset_int(L, "stream", g->stream);
        tl_lset_int(L, "rank", g->rank);
        lua_createtable(L, (int)g->len, 0);
        for (unsigned j = 0; j < g->len; j++) {
            lua_pushstring(L, tl_strpool_get(&t->es.names, k.names[g->name_off + j]));
            lua_rawseti(L, -2, (lua_Integer)j + 1);
        }
        lua_setfield(L, -2, "kernels");
        tl_lset_int(L, "count", (lua_Integer)g->count);
        tl_lset_us(L, "gpu_us", (double)g->gpu_ns);
        tl_lset_us(L, "max_kernel_us", (double)g->max_kernel_ns);
        tl_lset_us(L, "stream_kernel_us", (double)g->stream_kernel_ns);
        tl_lset_int(L, "first_uid", g->first_uid);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

/* trace:memcpy_summary{platform =, arch =} -> array of {direction,
 * host_memory, count, time_us, transfers_with_bytes, bytes, max_bytes,
 * achieved_gbps, judged_against, link, traffic_gbps, reference_gbps,
 * percent_of_reference}, platform (how it was chosen) */
int tl_l_trace_memcpy_summary(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    lua_settop(L, 2);
    const char *platform = tl_lopt_str(L, 2, "platform", "memcpy_summary");
    const char *arch_path = tl_lopt_str(L, 2, "arch", "memcpy_summary");
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow (trace:memcpy_summary)");
    tl_arch arch;
    memset(&arch, 0, sizeof arch);
    tl_platform_choice pc;
    tl_error err;
    if (tl_platform_resolve(t, platform, arch_path, &arch, &pc, &err) != 0) return luaL_error(L, "%s", err.msg);
    const tl_arch *a = pc.have_arch ? &arch : NULL;
    tl_copies c;
    tl_copies_compute(t, &c);
    lua_createtable(L, 8, 0);
    lua_Integer row = 0;
    for (int d = 0; d < TL_CP_NDIR; d++) {
        for (int m = 0; m < TL_HOSTMEM_N; m++) {
            const tl_copy_group *g = &c.g[d][m];
            if (!g->count) continue;
            lua_createtable(L, 0, 14);
            tl_lset_str(L, "direction", tl_copy_dir_name(d));
            if (m) tl_lset_str(L, "host_memory", tl_hostmem_name(m));
            tl_lset_int(L, "count", (lua_Integer)g->count);
            tl_lset_us(L, "time_us", (double)g->dur_ns);
            tl_lset_int(L, "transfers_with_bytes", (lua_Integer)g->n_bytes);
            tl_lset_int(L, "bytes", g->bytes);
            tl_lset_int(L, "max_bytes", g->max_bytes);
            double mult, ref;
            const char *link;
            const char *against = tl_copy_reference(d, a, &mult, &ref, &link);
            if (against) tl_lset_str(L, "judged_against", against);
            if (link) tl_lset_str(L, "link", link);
            if (ref > 0) tl_lset_num(L, "reference_gbps", ref);
            if (g->n_bytes && g->bytes_ns > 0) {
                double gbps = (double)g->bytes / (double)g->bytes_ns;
                tl_lset_num(L, "achieved_gbps", gbps);
                if (against) tl_lset_num(L, "traffic_gbps", gbps * mult);
                if (against && ref > 0) tl_lset_num(L, "percent_of_reference", gbps * mult / ref * 100.0);
            }
            lua_rawseti(L, -2, ++row);
        }
    }
    lua_pushstring(L, pc.how);
    tl_arch_free(&arch);
    return 2;
}

static void set_op(lua_State *L, const tl_trace *t, const char *k, uint32_t op)
{
    if (op != TL_NOUID) tl_lset_str(L, k, tl_es_name(&t->es, op));
}

/* trace:memory_timeline{samples =} -> array of devices {device_type,
 * device_id, events, allocations, frees, bytes_allocated, bytes_freed,
 * first_ts, last_ts, peak_allocated, peak_allocated_ts, peak_allocated_op,
 * peak_reserved, peak_reserved_ts, peak_reserved_op, end_allocated,
 * end_reserved, samples = {{ts, allocated, reserved}}} (ts in µs, bytes) */
int tl_l_trace_memory_timeline(lua_State *L)
{
    tl_trace *t = tl_ltrace_check(L, 1);
    unsigned nb = (unsigned)tl_lopt_int(L, 2, "samples", TL_MEM_SAMPLES, 1, 1000000, "memory_timeline");
    if (!lua_checkstack(L, 8)) return luaL_error(L, "stack overflow (trace:memory_timeline)");
    tl_mem_timeline m;
    tl_mem_timeline_compute(t, nb, &m);
    lua_createtable(L, (int)m.n, 0);
    for (size_t i = 0; i < m.n; i++) {
        const tl_mem_device *d = &m.v[i];
        lua_createtable(L, 0, 18);
        tl_lset_int(L, "device_type", d->type);
        tl_lset_int(L, "device_id", d->id);
        tl_lset_int(L, "events", (lua_Integer)d->n_events);
        tl_lset_int(L, "allocations", (lua_Integer)d->n_alloc);
        tl_lset_int(L, "frees", (lua_Integer)d->n_free);
        tl_lset_int(L, "bytes_allocated", d->bytes_alloc);
        tl_lset_int(L, "bytes_freed", d->bytes_freed);
        tl_lset_us(L, "first_ts", (double)d->first_ts);
        tl_lset_us(L, "last_ts", (double)d->last_ts);
        tl_lset_int(L, "peak_allocated", d->peak_alloc);
        tl_lset_us(L, "peak_allocated_ts", (double)d->peak_alloc_ts);
        set_op(L, t, "peak_allocated_op", d->peak_alloc_op);
        if (d->peak_reserved >= 0) {
            tl_lset_int(L, "peak_reserved", d->peak_reserved);
            tl_lset_us(L, "peak_reserved_ts", (double)d->peak_reserved_ts);
            set_op(L, t, "peak_reserved_op", d->peak_reserved_op);
        }
        tl_lset_int(L, "end_allocated", d->end_alloc);
        if (d->end_reserved >= 0) tl_lset_int(L, "end_reserved", d->end_reserved);
        lua_createtable(L, (int)d->n_samples, 0);
        for (size_t k = 0; k < d->n_samples; k++) {
            const tl_mem_sample *s = &m.s[d->sample_off + k];
            lua_createtable(L, 0, 3);
            tl_lset_us(L, "ts", (double)s->ts);
            tl_lset_int(L, "allocated", s->allocated);
            if (s->reserved >= 0) tl_lset_int(L, "reserved", s->reserved);
            lua_rawseti(L, -2, (lua_Integer)k + 1);
        }
        lua_setfield(L, -2, "samples");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    tl_mem_timeline_free(&m);
    return 1;
}
