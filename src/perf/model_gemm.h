/* model_gemm.h — the GEMM and grouped-GEMM perf-model classes
 * (perf-model spec §4.1, §4.7, the GEMM-category classes of §4.9, §8). */
#ifndef TL_MODEL_GEMM_H
#define TL_MODEL_GEMM_H

#include "perf_model.h"

/* Core GEMMs (category GEMM, sheet GEMM, no bwd). */
extern const tl_perf_class tl_pc_aten_mm;
extern const tl_perf_class tl_pc_aten_addmm;
extern const tl_perf_class tl_pc_aten_scaled_mm;
extern const tl_perf_class tl_pc_aten_bmm;
extern const tl_perf_class tl_pc_aten_baddbmm;
extern const tl_perf_class tl_pc_tex_ts_te_gemm_ts;
extern const tl_perf_class tl_pc_vllm_gemm_with_dynamic_quant;
extern const tl_perf_class tl_pc_tev2_pseudo_gemm;
extern const tl_perf_class tl_pc_hipblaslt_gemm_fp8;
extern const tl_perf_class tl_pc_hipblaslt_gemm_fp4;
extern const tl_perf_class tl_pc_aiter_gemm_a4w4;

/* Extension GEMMs (category GEMM, sheet GEMM, no bwd). */
extern const tl_perf_class tl_pc_gemm_a8w8_blockscale;
extern const tl_perf_class tl_pc_vllm_rocm_unquantized_gemm;
extern const tl_perf_class tl_pc_gemm_a16w16;
extern const tl_perf_class tl_pc_gemm_a16w16_atomic_;
extern const tl_perf_class tl_pc_gemm_a16w16_asm;
extern const tl_perf_class tl_pc_gemm_afp4wfp4;
extern const tl_perf_class tl_pc_batched_gemm_a16wfp4;
extern const tl_perf_class tl_pc_batched_gemm_a8w8;

/* Grouped GEMM (GroupedGEMM_fwd / GroupedGEMM_bwd, sheet GroupedGEMM, no bwd). */
extern const tl_perf_class tl_pc_primus_turbo_grouped_gemm;
extern const tl_perf_class tl_pc_primus_turbo_grouped_gemm_variable_k;

#endif
