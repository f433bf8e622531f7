/* model_ext.h — the extension perf models of perf-model spec §4.9 (quant,
 * activations, RoPE, RMSNorm extensions, custom collectives, mHC, misc),
 * except the GEMM-category and InferenceAttention classes (model_gemm /
 * model_attention) and the §4.8 primus quantizers (model_elementwise). */
#ifndef TL_MODEL_EXT_H
#define TL_MODEL_EXT_H

#include "perf_model.h"

/* --- classes -------------------------------------------------------------- */
/* activations, elementwise / UnaryElementwise */
extern const tl_perf_class tl_pc_aiter_silu_and_mul;
extern const tl_perf_class tl_pc_sgl_kernel_silu_and_mul;
extern const tl_perf_class tl_pc_aiter_gelu_and_mul;
extern const tl_perf_class tl_pc_aiter_gelu_tanh_and_mul;
/* GroupQuant */
extern const tl_perf_class tl_pc_per_group_quant;
extern const tl_perf_class tl_pc_vllm_triton_per_token_group_quant_fp8;
extern const tl_perf_class tl_pc_fused_flatten_mxfp4_quant;
extern const tl_perf_class tl_pc_sglang_quant_dynamic_mxfp4_quant;
extern const tl_perf_class tl_pc_fused_dynamic_mx_quant_moe_sort_hip;
extern const tl_perf_class tl_pc_aiter_fused_dynamic_mxfp4_quant_moe_sort_hip;
extern const tl_perf_class tl_pc_aiter_dynamic_per_group_scaled_quant_fp4;
/* RoPE_fwd (sheets RoPE and FusedRoPE) */
extern const tl_perf_class tl_pc_aiter_rope_cached_positions_2c_fwd_impl;
extern const tl_perf_class tl_pc_sgl_kernel_rotary_embedding;
extern const tl_perf_class tl_pc_aiter_fused_qk_rope_cat_and_cache_mla;
extern const tl_perf_class tl_pc_fused_qk_rope_concat_and_cache_mla;
/* RMSNorm */
extern const tl_perf_class tl_pc_aiter_rms_norm;
extern const tl_perf_class tl_pc_aiter_rmsnorm;
extern const tl_perf_class tl_pc_aiter_rmsnorm2d_fwd_with_add_ck;
extern const tl_perf_class tl_pc_aiter_rmsnorm2d_fwd_with_dynamicquant_ck;
extern const tl_perf_class tl_pc_aiter_rmsnorm_quant;
extern const tl_perf_class tl_pc_vllm_rocm_aiter_rmsnorm_fp8_group_quant;
extern const tl_perf_class tl_pc_vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant;
extern const tl_perf_class tl_pc_vllm_rocm_aiter_triton_add_rmsnorm_pad;
extern const tl_perf_class tl_pc_fused_rms_mxfp4_quant;
/* CustomCollective */
extern const tl_perf_class tl_pc_aiter_fused_allreduce_rmsnorm;
extern const tl_perf_class tl_pc_aiter_fused_allreduce_rmsnorm_;
extern const tl_perf_class tl_pc_custom_ar_all_reduce;
extern const tl_perf_class tl_pc_custom_ar_qr_all_reduce;
extern const tl_perf_class tl_pc_sgl_kernel_all_reduce_reg;
extern const tl_perf_class tl_pc_sgl_kernel_qr_all_reduce;
extern const tl_perf_class tl_pc_aiter_reduce_scatter;
extern const tl_perf_class tl_pc_aiter_all_gather_reg;
extern const tl_perf_class tl_pc_sgl_kernel_reg_all_gather_into_tensor;
/* mHC */
extern const tl_perf_class tl_pc_mhc_post;
extern const tl_perf_class tl_pc_mhc_pre_gemm_sqrsum;
extern const tl_perf_class tl_pc_mhc_pre_big_fuse_rmsnorm;
extern const tl_perf_class tl_pc_mhc_fused_post_pre_gemm_sqrsum;
/* elementwise / sheet elementwise */
extern const tl_perf_class tl_pc_mixed_sample_outer_exponential;

#endif
