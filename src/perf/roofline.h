/* roofline.h — the derived per-instance metrics of perf-model spec §5:
 * GFLOPS, TFLOPS/s, Data Moved (MB), FLOPS/Byte, TB/s, Compute Spec and the
 * roofline keys, computed with the reference's operation order (IEEE
 * double) so the time-free values match it bit for bit. Owns nothing. */
#ifndef TL_ROOFLINE_H
#define TL_ROOFLINE_H

#include "arch.h"
#include "perf_model.h"

enum { TL_COMPUTE_SPEC_MAX = 64 };

/* "<maf>_<precision>" (e.g. "matrix_bf16") into buf, or "" when either part
 * is NULL (Python None). An empty string is not None: ("matrix", "") gives
 * "matrix_". Truncates beyond TL_COMPUTE_SPEC_MAX - 1 bytes. Returns buf. */
const char *tl_compute_spec(const char *maf, const char *precision, char buf[TL_COMPUTE_SPEC_MAX]);

typedef struct tl_perf_metrics {
    double gflops;           /* GFLOPS = F / 1e9 */
    double kernel_time_us;   /* Kernel Time (µs) = t */
    double tflops_s;         /* TFLOPS/s = (g/1e3)/(t/1e6); NaN if t <= 0 */
    double data_moved_mb;    /* Data Moved (MB) = Bm/(1024*1024); NaN if Bm is None */
    double flops_per_byte;   /* FLOPS/Byte = (g*1e9)/Bm; NaN if Bm is None or 0 */
    double tb_s;             /* TB/s = (Bm/1e12)/(t/1e6); NaN if Bm is None or t <= 0 */
    /* The three roofline keys exist only when has_roofline: an arch is
     * given, its peak for the compute spec is found, mem_bw_gbps is present,
     * Bm is not None and g > 0 (§5; otherwise the columns are absent). */
    int has_roofline;
    double roofline_time_us; /* max(Tc, Tm) */
    const char *roofline_bound; /* "COMPUTE_BOUND" if Tc >= Tm, else "MEMORY_BOUND" */
    double pct_roofline;     /* Roofline Time / t * 100; NaN if t <= 0 */
    double compute_time_us;  /* Tc = (g*1e9 / (peak*1e12))*1e6 (not a column) */
    double memory_time_us;   /* Tm = (Bm / (mem_bw_gbps*1e9))*1e6 (not a column) */
} tl_perf_metrics;

/* flops F, bytes Bm (has_bytes = 0: None), busy kernel time t in µs (0
 * when the op has no kernels), the Compute Spec string (NULL or "" never
 * matches a peak) and an optional arch (NULL: no roofline keys). */
void tl_perf_metrics_compute(tl_perf_metrics *m, double flops, int has_bytes, double bytes,
                             double t_us, const char *compute_spec, const tl_arch *arch);

/* The same from a model result (status TL_PERF_OK): Compute Spec from
 * r->maf/r->precision into spec_buf. */
void tl_perf_metrics_from_result(tl_perf_metrics *m, const tl_perf_result *r, double t_us,
                                 const tl_arch *arch, char spec_buf[TL_COMPUTE_SPEC_MAX]);

#endif
