/* sheets_mem_seq.c — see sheets_mem_seq.h. */
#include "sheets_mem_seq.h"

#include <stdint.h>
#include <stdio.h>

#include "../trace/copies.h"
#include "../trace/kernel_ngrams.h"
#include "../trace/mem_timeline.h"
#include "../util/sbuf.h"

static double ms(int64_t ns) { return (double)ns / 1e6; }
static double mib(int64_t b) { return (double)b / 1048576.0; }

tl_table *tl_sheet_kernel_sequences(const tl_trace *t)
{
    tl_kernel_ngrams k;
    tl_kernel_ngrams_compute(t, NULL, &k);
    tl_table *tb = tl_sheet_kernel_sequences_of(t, &k);
    tl_kernel_ngrams_free(&k);
    return tb;
}

tl_table *tl_sheet_kernel_sequences_of(const tl_trace *t, const tl_kernel_ngrams *kp)
{
    const tl_kernel_ngrams k = *kp; /* read only */
    if (!k.n) return NULL;
    tl_table *tb = tl_table_new("kernel_sequences");
    size_t c_dev = tl_table_add_col(tb, "device", TL_COL_I64);
    size_t c_str = tl_table_add_col(tb, "stream", TL_COL_STR);
    size_t c_rank = tl_table_add_col(tb, "rank", TL_COL_I64);
    size_t c_len = tl_table_add_col(tb, "kernels", TL_COL_I64);
    size_t c_n = tl_table_add_col(tb, "occurrences", TL_COL_I64);
    size_t c_t = tl_table_add_col(tb, "gpu_time_ms", TL_COL_F64);
    size_t c_pct = tl_table_add_col(tb, "percent_of_stream_kernel_time", TL_COL_F64);
    size_t c_occ = tl_table_add_col(tb, "time_per_occurrence_us", TL_COL_F64);
    size_t c_mean = tl_table_add_col(tb, "mean_kernel_us", TL_COL_F64);
    size_t c_max = tl_table_add_col(tb, "max_kernel_us", TL_COL_F64);
    size_t c_seq = tl_table_add_col(tb, "sequence", TL_COL_STR);
    tl_sbuf buf;
    tl_sb_init(&buf);
    for (size_t i = 0; i < k.n; i++) {
        const tl_ngram *g = &k.v[i];
        size_t r = tl_table_add_row(tb);
        char s[32];
        snprintf(s, sizeof s, "%lld", (long long)g->stream);
        tl_table_set_i64(tb, c_dev, r, g->device);
        tl_table_set_str(tb, c_str, r, s);
        tl_table_set_i64(tb, c_rank, r, g->rank);
        tl_table_set_i64(tb, c_len, r, g->len);
        tl_table_set_i64(tb, c_n, r, (int64_t)g->count);
        tl_table_set_f64(tb, c_t, r, ms(g->gpu_ns));
        tl_table_set_f64(tb, c_pct, r,
                         g->stream_kernel_ns > 0 ? (double)g->gpu_ns / (double)g->stream_kernel_ns * 100.0 : 0.0);
        tl_table_set_f64(tb, c_occ, r, (double)g->gpu_ns / 1e3 / (double)g->count);
        tl_table_set_f64(tb, c_mean, r, (double)g->gpu_ns / 1e3 / (double)(g->count * g->len));
        tl_table_set_f64(tb, c_max, r, (double)g->max_kernel_ns / 1e3);
        tl_sb_clear(&buf);
        for (unsigned j = 0; j < g->len; j++) {
            if (j) tl_sb_puts(&buf, " | ");
            tl_sb_puts(&buf, tl_strpool_get(&t->es.names, k.names[g->name_off + j]));
        }
        tl_table_set_str(tb, c_seq, r, buf.s);
    }
    tl_sb_free(&buf);
    return tb;
}

const char *tl_copy_reference(int dir, const tl_arch *arch, double *traffic_mult, double *gbps, const char **link)
{
    *traffic_mult = 1;
    *gbps = 0;
    *link = NULL;
    switch (dir) {
    case TL_CP_H2D:
    case TL_CP_D2H:
        if (arch && arch->has_host_link_bw) *gbps = arch->host_link_gbps;
        if (arch) *link = arch->host_link;
        return "host_link";
    case TL_CP_D2D:
        *traffic_mult = 2;
        /* fall through */
    case TL_CP_MEMSET:
        if (arch && arch->has_mem_bw) *gbps = arch->mem_bw_gbps;
        *link = "HBM";
        return "hbm";
    case TL_CP_P2P:
        if (arch && arch->has_gpu_link_bw) *gbps = arch->gpu_link_gbps;
        if (arch) *link = arch->gpu_link;
        return "gpu_link";
    default:
        return NULL;
    }
}

tl_table *tl_sheet_memcpy_summary(const tl_trace *t, const tl_arch *arch)
{
    tl_copies c;
    tl_copies_compute(t, &c);
    if (!c.n) return NULL;
    tl_table *tb = tl_table_new("memcpy_summary");
    size_t c_dir = tl_table_add_col(tb, "direction", TL_COL_STR);
    size_t c_mem = tl_table_add_col(tb, "host_memory", TL_COL_STR);
    size_t c_n = tl_table_add_col(tb, "count", TL_COL_I64);
    size_t c_t = tl_table_add_col(tb, "time_ms", TL_COL_F64);
    size_t c_nb = tl_table_add_col(tb, "transfers_with_bytes", TL_COL_I64);
    size_t c_b = tl_table_add_col(tb, "bytes", TL_COL_I64);
    size_t c_mean = tl_table_add_col(tb, "mean_transfer_mib", TL_COL_F64);
    size_t c_max = tl_table_add_col(tb, "max_transfer_mib", TL_COL_F64);
    size_t c_gbps = tl_table_add_col(tb, "achieved_gbps", TL_COL_F64);
    size_t c_ag = tl_table_add_col(tb, "judged_against", TL_COL_STR);
    size_t c_link = tl_table_add_col(tb, "link", TL_COL_STR);
    size_t c_tr = tl_table_add_col(tb, "traffic_gbps", TL_COL_F64);
    size_t c_ref = tl_table_add_col(tb, "reference_gbps", TL_COL_F64);
    size_t c_pct = tl_table_add_col(tb, "percent_of_reference", TL_COL_F64);
    for (int d = 0; d < TL_CP_NDIR; d++) {
        for (int m = 0; m < TL_HOSTMEM_N; m++) {
            const tl_copy_group *g = &c.g[d][m];
            if (!g->count) continue;
            size_t r = tl_table_add_row(tb);
            tl_table_set_str(tb, c_dir, r, tl_copy_dir_name(d));
            tl_table_set_str(tb, c_mem, r, tl_hostmem_name(m));
            tl_table_set_i64(tb, c_n, r, (int64_t)g->count);
            tl_table_set_f64(tb, c_t, r, ms(g->dur_ns));
            tl_table_set_i64(tb, c_nb, r, (int64_t)g->n_bytes);
            double mult, ref;
            const char *link;
            const char *against = tl_copy_reference(d, arch, &mult, &ref, &link);
            if (against) tl_table_set_str(tb, c_ag, r, against);
            if (link) tl_table_set_str(tb, c_link, r, link);
            if (ref > 0) tl_table_set_f64(tb, c_ref, r, ref);
            if (!g->n_bytes) continue;
            tl_table_set_i64(tb, c_b, r, g->bytes);
            tl_table_set_f64(tb, c_mean, r, mib(g->bytes) / (double)g->n_bytes);
            tl_table_set_f64(tb, c_max, r, mib(g->max_bytes));
            if (g->bytes_ns <= 0) continue;
            double gbps = (double)g->bytes / (double)g->bytes_ns; /* bytes per ns = GB/s */
            tl_table_set_f64(tb, c_gbps, r, gbps);
            if (!against) continue;
            tl_table_set_f64(tb, c_tr, r, gbps * mult);
            if (ref > 0) tl_table_set_f64(tb, c_pct, r, gbps * mult / ref * 100.0);
        }
    }
    return tb;
}

/* PyTorch's names of c10::DeviceType values: cpu, cuda:N, hip:N (ROCm), xpu:N */
static void device_label(char *buf, size_t cap, int64_t type, int64_t id)
{
    if (type == 0) snprintf(buf, cap, "cpu");
    else if (type == 1) snprintf(buf, cap, "cuda:%lld", (long long)id);
    else if (type == 6) snprintf(buf, cap, "hip:%lld", (long long)id);
    else if (type == 12) snprintf(buf, cap, "xpu:%lld", (long long)id);
    else snprintf(buf, cap, "type %lld:%lld", (long long)type, (long long)id);
}

static void set_op(tl_table *tb, size_t col, size_t r, const tl_trace *t, uint32_t op)
{
    if (op != TL_NOUID) tl_table_set_str(tb, col, r, tl_es_name(&t->es, op));
}

/* The time origin of the memory sheets: the trace's first timestamp. */
static int64_t origin(const tl_trace *t)
{
    const tl_event_store *es = &t->es;
    int64_t o = INT64_MAX;
    for (size_t u = 0; u < es->n; u++)
        if ((es->flags[u] & TL_F_TS) && es->ts[u] < o) o = es->ts[u];
    return o;
}

static tl_table *memory_peak(const tl_trace *t, const tl_mem_timeline *mt, int64_t t0)
{
    tl_table *tb = tl_table_new("memory_peak");
    size_t c_dev = tl_table_add_col(tb, "device", TL_COL_STR);
    size_t c_n = tl_table_add_col(tb, "events", TL_COL_I64);
    size_t c_na = tl_table_add_col(tb, "allocations", TL_COL_I64);
    size_t c_nf = tl_table_add_col(tb, "frees", TL_COL_I64);
    size_t c_pa = tl_table_add_col(tb, "peak_allocated_mib", TL_COL_F64);
    size_t c_pat = tl_table_add_col(tb, "peak_allocated_at_ms", TL_COL_F64);
    size_t c_pao = tl_table_add_col(tb, "peak_allocated_op", TL_COL_STR);
    size_t c_pr = tl_table_add_col(tb, "peak_reserved_mib", TL_COL_F64);
    size_t c_prt = tl_table_add_col(tb, "peak_reserved_at_ms", TL_COL_F64);
    size_t c_pro = tl_table_add_col(tb, "peak_reserved_op", TL_COL_STR);
    size_t c_ea = tl_table_add_col(tb, "end_allocated_mib", TL_COL_F64);
    size_t c_er = tl_table_add_col(tb, "end_reserved_mib", TL_COL_F64);
    for (size_t i = 0; i < mt->n; i++) {
        const tl_mem_device *d = &mt->v[i];
        size_t r = tl_table_add_row(tb);
        char lb[64];
        device_label(lb, sizeof lb, d->type, d->id);
        tl_table_set_str(tb, c_dev, r, lb);
        tl_table_set_i64(tb, c_n, r, (int64_t)d->n_events);
        tl_table_set_i64(tb, c_na, r, (int64_t)d->n_alloc);
        tl_table_set_i64(tb, c_nf, r, (int64_t)d->n_free);
        tl_table_set_f64(tb, c_pa, r, mib(d->peak_alloc));
        tl_table_set_f64(tb, c_pat, r, ms(d->peak_alloc_ts - t0));
        set_op(tb, c_pao, r, t, d->peak_alloc_op);
        if (d->peak_reserved >= 0) {
            tl_table_set_f64(tb, c_pr, r, mib(d->peak_reserved));
            tl_table_set_f64(tb, c_prt, r, ms(d->peak_reserved_ts - t0));
            set_op(tb, c_pro, r, t, d->peak_reserved_op);
        }
        tl_table_set_f64(tb, c_ea, r, mib(d->end_alloc));
        if (d->end_reserved >= 0) tl_table_set_f64(tb, c_er, r, mib(d->end_reserved));
    }
    return tb;
}

static tl_table *memory_timeline(const tl_mem_timeline *mt, int64_t t0)
{
    tl_table *tb = tl_table_new("memory_timeline");
    size_t c_dev = tl_table_add_col(tb, "device", TL_COL_STR);
    size_t c_k = tl_table_add_col(tb, "sample", TL_COL_I64);
    size_t c_t = tl_table_add_col(tb, "time_ms", TL_COL_F64);
    size_t c_a = tl_table_add_col(tb, "allocated_mib", TL_COL_F64);
    size_t c_r = tl_table_add_col(tb, "reserved_mib", TL_COL_F64);
    for (size_t i = 0; i < mt->n; i++) {
        const tl_mem_device *d = &mt->v[i];
        char lb[64];
        device_label(lb, sizeof lb, d->type, d->id);
        for (size_t k = 0; k < d->n_samples; k++) {
            const tl_mem_sample *s = &mt->s[d->sample_off + k];
            size_t r = tl_table_add_row(tb);
            tl_table_set_str(tb, c_dev, r, lb);
            tl_table_set_i64(tb, c_k, r, (int64_t)k);
            tl_table_set_f64(tb, c_t, r, ms(s->ts - t0));
            tl_table_set_f64(tb, c_a, r, mib(s->allocated));
            if (s->reserved >= 0) tl_table_set_f64(tb, c_r, r, mib(s->reserved));
        }
    }
    return tb;
}

void tl_sheets_memory(const tl_trace *t, tl_table **peak, tl_table **timeline)
{
    tl_mem_timeline m;
    tl_mem_timeline_compute(t, 0, &m);
    *peak = *timeline = NULL;
    if (m.n) {
        int64_t t0 = origin(t);
        *peak = memory_peak(t, &m, t0);
        *timeline = memory_timeline(&m, t0);
    }
    tl_mem_timeline_free(&m);
}
