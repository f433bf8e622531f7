/* roofline.c — derived per-instance metrics (perf-model spec §5). Every
 * formula keeps the reference's operation order; do not "simplify" (e.g.
 * FLOPS/Byte uses g*1e9, not F: they differ in the last ulp). */
#include <math.h>
#include <stdio.h>

#include "roofline.h"

const char *tl_compute_spec(const char *maf, const char *precision, char buf[TL_COMPUTE_SPEC_MAX])
{
    if (!maf || !precision)
        buf[0] = 0;
    else
        snprintf(buf, TL_COMPUTE_SPEC_MAX, "%s_%s", maf, precision);
    return buf;
}

void tl_perf_metrics_compute(tl_perf_metrics *m, double flops, int has_bytes, double bytes,
                             double t_us, const char *compute_spec, const tl_arch *arch)
{
    const double g = flops / 1e9;
    m->gflops = g;
    m->kernel_time_us = t_us;
    m->tflops_s = t_us > 0 ? (g / 1e3) / (t_us / 1e6) : NAN;
    if (has_bytes) {
        m->data_moved_mb = bytes / (1024.0 * 1024.0);
        m->flops_per_byte = bytes != 0 ? (g * 1e9) / bytes : NAN;
        m->tb_s = t_us > 0 ? (bytes / 1e12) / (t_us / 1e6) : NAN;
    } else {
        m->data_moved_mb = m->flops_per_byte = m->tb_s = NAN;
    }
    m->has_roofline = 0;
    m->roofline_time_us = m->pct_roofline = m->compute_time_us = m->memory_time_us = NAN;
    m->roofline_bound = NULL;
    if (!arch || !arch->has_mem_bw || !has_bytes || !(g > 0)) return;
    const double peak = tl_arch_peak(arch, compute_spec);
    if (isnan(peak)) return;
    const double tc = (g * 1e9 / (peak * 1e12)) * 1e6;
    const double tm = (bytes / (arch->mem_bw_gbps * 1e9)) * 1e6;
    m->has_roofline = 1;
    m->compute_time_us = tc;
    m->memory_time_us = tm;
    m->roofline_time_us = tm > tc ? tm : tc; /* Python max(Tc, Tm) */
    m->roofline_bound = tc >= tm ? "COMPUTE_BOUND" : "MEMORY_BOUND";
    m->pct_roofline = t_us > 0 ? (m->roofline_time_us / t_us) * 100 : NAN;
}

void tl_perf_metrics_from_result(tl_perf_metrics *m, const tl_perf_result *r, double t_us,
                                 const tl_arch *arch, char spec_buf[TL_COMPUTE_SPEC_MAX])
{
    tl_compute_spec(r->maf, r->precision, spec_buf);
    tl_perf_metrics_compute(m, r->flops, r->has_bytes, r->bytes, t_us, spec_buf, arch);
}
