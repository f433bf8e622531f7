/* registry.c — op name → perf-model class (perf-model spec §3.4, Appendix
 * A), the flat op-category registry (perf-model §3.1 rule 1, perf-report §6
 * rule 1) and the sheet-family order (perf-report §7.5).
 *
 * The tables below were generated from the spec's Appendix A (245 rows, in
 * order) and its category-only table (48 rows); keep them in spec order.
 * Model classes live in model_*.c as `const tl_perf_class tl_pc_<Class>`.
 * They are referenced weakly so that the registry links while some are not
 * written yet: a missing class has address NULL and means "no model".
 * NOTE: a weak reference does not pull an object out of a static archive;
 * build with -DTL_PERF_STRONG_CLASSES once every class exists (or link the
 * perf objects whole) so that lookups see the classes.
 *
 * Lookups are binary searches over name-sorted index arrays built once
 * (pthread_once); owns nothing else. Thread-safe. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "categorize.h"
#include "perf_model.h"

#ifdef TL_PERF_STRONG_CLASSES
#define TL_WEAK
#else
#define TL_WEAK __attribute__((weak))
#endif

#define TL_CLASS(c) extern const tl_perf_class tl_pc_##c TL_WEAK;
/* The 139 model classes of Appendix A in order of first appearance, then
 * the Triton pattern class (perf-model §9). */
TL_CLASS(aten_mm)
TL_CLASS(aten_addmm)
TL_CLASS(aten_scaled_mm)
TL_CLASS(aten_bmm)
TL_CLASS(tex_ts_te_gemm_ts)
TL_CLASS(aten_baddbmm)
TL_CLASS(vllm_gemm_with_dynamic_quant)
TL_CLASS(flash_attention)
TL_CLASS(flash_attention_backward)
TL_CLASS(flash_attention_varlen_forward)
TL_CLASS(flash_attention_varlen_backward)
TL_CLASS(aten__scaled_dot_product_cudnn_attention)
TL_CLASS(aten__scaled_dot_product_efficient_attention)
TL_CLASS(aten__scaled_dot_product_flash_attention)
TL_CLASS(aten_conv)
TL_CLASS(aten_conv_bwd)
TL_CLASS(ConvBias_)
TL_CLASS(ConvBiasReLU_)
TL_CLASS(ConvBias_Backward)
TL_CLASS(ConvBiasReLU_Backward)
TL_CLASS(aiter__flash_attn_forward)
TL_CLASS(aiter__flash_attn_backward)
TL_CLASS(aiter__fmha_v3_forward)
TL_CLASS(aiter__fmha_v3_backward)
TL_CLASS(aiter__mha_fwd)
TL_CLASS(aiter__fmha_v3_fwd)
TL_CLASS(aiter__mha_bwd)
TL_CLASS(flash_attn_v3_forward)
TL_CLASS(vllm_unified_attention_with_output)
TL_CLASS(evoformer_attention)
TL_CLASS(liger_silu_mul_function)
TL_CLASS(primus_turbo_grouped_gemm)
TL_CLASS(primus_turbo_grouped_gemm_variable_k)
TL_CLASS(tev2_pseudo_gemm)
TL_CLASS(moe_dispatch)
TL_CLASS(moe_combine)
TL_CLASS(causal_conv1d_fwd)
TL_CLASS(fused_rope_fwd)
TL_CLASS(cross_entropy_fwd)
TL_CLASS(mamba_ssd_fwd)
TL_CLASS(hipblaslt_gemm_fp8)
TL_CLASS(primus_turbo_quantize_fp8)
TL_CLASS(hipblaslt_gemm_fp4)
TL_CLASS(primus_turbo_quantize_mxfp4_dual)
TL_CLASS(aiter_gemm_a4w4)
TL_CLASS(moe_aiter_fused_1stage)
TL_CLASS(moe_aiter_unfused_up)
TL_CLASS(moe_aiter_unfused_down)
TL_CLASS(moe_aiter_ck_stage1)
TL_CLASS(moe_aiter_ck_stage2)
TL_CLASS(moe_aiter_fused_blockscale)
TL_CLASS(moe_triton_unfused_up)
TL_CLASS(moe_triton_unfused_down)
TL_CLASS(moe_gptq_awq_up)
TL_CLASS(moe_gptq_awq_down)
TL_CLASS(moe_flydsl_stage1)
TL_CLASS(moe_flydsl_stage2)
TL_CLASS(moe_triton_invoke_grouped_gemm)
TL_CLASS(BiasedGroupedTopk)
TL_CLASS(MoeSortScatterGather)
TL_CLASS(mha_varlen_fwd)
TL_CLASS(aiter_fmha_v3_varlen_fwd)
TL_CLASS(aiter_mha_batch_prefill)
TL_CLASS(aiter_paged_attention_ragged)
TL_CLASS(mla_decode_fwd)
TL_CLASS(pseudo_mla_prefill_fwd)
TL_CLASS(pa_decode_gluon)
TL_CLASS(pseudo_v4_paged_decode_swa)
TL_CLASS(pseudo_v4_paged_decode_csa)
TL_CLASS(pseudo_v4_paged_decode_hca)
TL_CLASS(pa_sparse_prefill_opus_fwd)
TL_CLASS(mla_tilelang_sparse_fwd)
TL_CLASS(batched_gemm_a16wfp4)
TL_CLASS(per_group_quant)
TL_CLASS(vllm_rocm_aiter_triton_add_rmsnorm_pad)
TL_CLASS(mixed_sample_outer_exponential)
TL_CLASS(gemm_a8w8_blockscale)
TL_CLASS(vllm_rocm_unquantized_gemm)
TL_CLASS(gemm_a16w16)
TL_CLASS(fused_dynamic_mx_quant_moe_sort_hip)
TL_CLASS(fused_qk_rope_concat_and_cache_mla)
TL_CLASS(gemm_a16w16_atomic_)
TL_CLASS(gemm_a16w16_asm)
TL_CLASS(gemm_afp4wfp4)
TL_CLASS(batched_gemm_a8w8)
TL_CLASS(vllm_triton_per_token_group_quant_fp8)
TL_CLASS(fused_flatten_mxfp4_quant)
TL_CLASS(aiter_rope_cached_positions_2c_fwd_impl)
TL_CLASS(sgl_kernel_rotary_embedding)
TL_CLASS(aiter_silu_and_mul)
TL_CLASS(sgl_kernel_silu_and_mul)
TL_CLASS(aiter_gelu_and_mul)
TL_CLASS(aiter_gelu_tanh_and_mul)
TL_CLASS(aiter_rms_norm)
TL_CLASS(aiter_rmsnorm)
TL_CLASS(aiter_rmsnorm2d_fwd_with_add_ck)
TL_CLASS(aiter_rmsnorm2d_fwd_with_dynamicquant_ck)
TL_CLASS(vllm_rocm_aiter_rmsnorm_fp8_group_quant)
TL_CLASS(vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant)
TL_CLASS(fused_rms_mxfp4_quant)
TL_CLASS(aiter_fused_allreduce_rmsnorm)
TL_CLASS(aiter_fused_allreduce_rmsnorm_)
TL_CLASS(custom_ar_all_reduce)
TL_CLASS(aiter_reduce_scatter)
TL_CLASS(aiter_all_gather_reg)
TL_CLASS(sgl_kernel_all_reduce_reg)
TL_CLASS(sgl_kernel_qr_all_reduce)
TL_CLASS(sgl_kernel_reg_all_gather_into_tensor)
TL_CLASS(custom_ar_qr_all_reduce)
TL_CLASS(gdn_attention_core)
TL_CLASS(sglang_store_cache)
TL_CLASS(aiter_fused_qk_rope_cat_and_cache_mla)
TL_CLASS(sglang_fused_append_shared_experts)
TL_CLASS(sglang_quant_dynamic_mxfp4_quant)
TL_CLASS(aiter_fused_dynamic_mxfp4_quant_moe_sort_hip)
TL_CLASS(aiter_dynamic_per_group_scaled_quant_fp4)
TL_CLASS(mhc_post)
TL_CLASS(mhc_pre_gemm_sqrsum)
TL_CLASS(mhc_pre_big_fuse_rmsnorm)
TL_CLASS(mhc_fused_post_pre_gemm_sqrsum)
TL_CLASS(topk_softplus)
TL_CLASS(aiter_rmsnorm_quant)
TL_CLASS(GroupNorm)
TL_CLASS(aten_unary_elementwise)
TL_CLASS(aten_binary_elementwise)
TL_CLASS(BatchNorm)
TL_CLASS(LayerNorm)
TL_CLASS(InstanceNorm)
TL_CLASS(RMSNorm)
TL_CLASS(BatchNormBwd)
TL_CLASS(LayerNormBwd)
TL_CLASS(GroupNormBwd)
TL_CLASS(InstanceNormBwd)
TL_CLASS(RMSNormBwd)
TL_CLASS(FusedLnModulate)
TL_CLASS(FusedLnModulateBackward)
TL_CLASS(aten_reduce)
TL_CLASS(aten_replication_pad)
TL_CLASS(aten_upsample_nearest)
TL_CLASS(TritonCompiledPerfModel)
#undef TL_CLASS

/* perf-model Appendix A: op name, class, category, bwd_category, sheet family. */
#define OP(name, cls, cat, bwd, sheet) {name, #cls, &tl_pc_##cls, cat, bwd, sheet}
static const tl_perf_op_entry op_table[] = {
    OP("aten::mm", aten_mm, "GEMM", NULL, "GEMM"),
    OP("aten::addmm", aten_addmm, "GEMM", NULL, "GEMM"),
    OP("aten::_scaled_mm", aten_scaled_mm, "GEMM", NULL, "GEMM"),
    OP("trtllm::cublas_scaled_mm", aten_scaled_mm, "GEMM", NULL, "GEMM"),
    OP("bitsandbytes::int8_linear_matmul", aten_scaled_mm, "GEMM", NULL, "GEMM"),
    OP("aten::bmm", aten_bmm, "GEMM", NULL, "GEMM"),
    OP("tex_ts::te_gemm_ts", tex_ts_te_gemm_ts, "GEMM", NULL, "GEMM"),
    OP("aten::baddbmm", aten_baddbmm, "GEMM", NULL, "GEMM"),
    OP("vllm::gemm_with_dynamic_quant", vllm_gemm_with_dynamic_quant, "GEMM", NULL, "GEMM"),
    OP("FlashAttnFunc", flash_attention, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("flash_attn::_flash_attn_forward", flash_attention, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("flash_attn::_flash_attn_backward", flash_attention_backward, "SDPA_bwd", "SDPA_bwd", "SDPA"),
    OP("flash_attn::_flash_attn_varlen_forward", flash_attention_varlen_forward, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("flash_attn::_flash_attn_varlen_backward", flash_attention_varlen_backward, "SDPA_bwd", "SDPA_bwd", "SDPA"),
    OP("aten::_scaled_dot_product_cudnn_attention", aten__scaled_dot_product_cudnn_attention, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("aten::_scaled_dot_product_efficient_attention", aten__scaled_dot_product_efficient_attention, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("aten::_scaled_dot_product_flash_attention", aten__scaled_dot_product_flash_attention, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("aten::convolution", aten_conv, "CONV_fwd", "CONV_bwd", "CONV"),
    OP("aten::convolution_backward", aten_conv_bwd, "CONV_bwd", "CONV_bwd", "CONV"),
    OP("ConvBias_", ConvBias_, "CONV_fwd", "CONV_bwd", "CONV"),
    OP("ConvBiasReLU_", ConvBiasReLU_, "CONV_fwd", "CONV_bwd", "CONV"),
    OP("ConvBias_Backward", ConvBias_Backward, "CONV_bwd", "CONV_bwd", "CONV"),
    OP("ConvBiasReLU_Backward", ConvBiasReLU_Backward, "CONV_bwd", "CONV_bwd", "CONV"),
    OP("aiter::_flash_attn_forward", aiter__flash_attn_forward, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("aiter::_flash_attn_backward", aiter__flash_attn_backward, "SDPA_bwd", "SDPA_bwd", "SDPA"),
    OP("aiter::wrapper_fmha_v3_fwd", aiter__fmha_v3_forward, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("aiter::wrapper_fmha_v3_bwd", aiter__fmha_v3_backward, "SDPA_bwd", "SDPA_bwd", "SDPA"),
    OP("aiter::mha_fwd", aiter__mha_fwd, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("aiter::fmha_v3_fwd", aiter__fmha_v3_fwd, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("aiter::mha_bwd", aiter__mha_bwd, "SDPA_bwd", "SDPA_bwd", "SDPA"),
    OP("flash_attn_3::fwd", flash_attn_v3_forward, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("vllm::unified_attention_with_output", vllm_unified_attention_with_output, "InferenceAttention", NULL, "InferenceAttention"),
    OP("EvoformerAttention", evoformer_attention, "SDPA_fwd", "SDPA_bwd", "SDPA"),
    OP("LigerSiLUMulFunction", liger_silu_mul_function, "elementwise", NULL, "BinaryElementwise"),
    OP("primus_turbo::grouped_gemm", primus_turbo_grouped_gemm, "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM"),
    OP("primus_turbo::grouped_gemm_impl", primus_turbo_grouped_gemm, "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM"),
    OP("primus_turbo_cpp_extension::grouped_gemm", primus_turbo_grouped_gemm, "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM"),
    OP("primus_turbo::grouped_gemm_variable_k", primus_turbo_grouped_gemm_variable_k, "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM"),
    OP("primus_turbo::grouped_gemm_variable_k_impl", primus_turbo_grouped_gemm_variable_k, "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM"),
    OP("primus_turbo_cpp_extension::grouped_gemm_variable_k", primus_turbo_grouped_gemm_variable_k, "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM"),
    OP("_Linear_yfwd_mm", tev2_pseudo_gemm, "GEMM", NULL, "GEMM"),
    OP("_LinearBackward_xgrad_mm", tev2_pseudo_gemm, "GEMM", NULL, "GEMM"),
    OP("_LinearBackward_wgrad_mm", tev2_pseudo_gemm, "GEMM", NULL, "GEMM"),
    OP("_LayerNormLinear_yfwd_mm", tev2_pseudo_gemm, "GEMM", NULL, "GEMM"),
    OP("_LayerNormLinearBackward_xgrad_mm", tev2_pseudo_gemm, "GEMM", NULL, "GEMM"),
    OP("_LayerNormLinearBackward_wgrad_mm", tev2_pseudo_gemm, "GEMM", NULL, "GEMM"),
    OP("primus_turbo_cpp_extension::ck_grouped_gemm", primus_turbo_grouped_gemm, "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM"),
    OP("primus_turbo_cpp_extension::ck_grouped_gemm_variable_k", primus_turbo_grouped_gemm_variable_k, "GroupedGEMM_fwd", "GroupedGEMM_bwd", "GroupedGEMM"),
    OP("MoEDispatch", moe_dispatch, "MoE_comm_fwd", "MoE_comm_bwd", "MoE_comm"),
    OP("MoECombine", moe_combine, "MoE_comm_fwd", "MoE_comm_bwd", "MoE_comm"),
    OP("DaoAILab::_causal_conv1d_fwd_cpp", causal_conv1d_fwd, "SSM_fwd", NULL, "SSM"),
    OP("FusedRoPEFunc", fused_rope_fwd, "RoPE_fwd", NULL, "RoPE"),
    OP("CrossEntropyFunction", cross_entropy_fwd, "CrossEntropy_fwd", NULL, "CrossEntropy"),
    OP("MambaSplitConv1dScanCombinedFn", mamba_ssd_fwd, "SSM_fwd", "SSM_bwd", "SSM"),
    OP("primus_turbo_cpp_extension::hipblaslt_gemm_fp8", hipblaslt_gemm_fp8, "GEMM", NULL, "GEMM"),
    OP("primus_turbo::hipblaslt_gemm_fp8", hipblaslt_gemm_fp8, "GEMM", NULL, "GEMM"),
    OP("primus_turbo_cpp_extension::quantize_fp8_tensorwise", primus_turbo_quantize_fp8, "elementwise", NULL, "UnaryElementwise"),
    OP("primus_turbo::quantize_fp8_tensorwise", primus_turbo_quantize_fp8, "elementwise", NULL, "UnaryElementwise"),
    OP("primus_turbo_cpp_extension::hipblaslt_gemm_fp4", hipblaslt_gemm_fp4, "GEMM", NULL, "GEMM"),
    OP("primus_turbo::hipblaslt_gemm_fp4", hipblaslt_gemm_fp4, "GEMM", NULL, "GEMM"),
    OP("primus_turbo_cpp_extension::quantize_mxfp4_dual", primus_turbo_quantize_mxfp4_dual, "elementwise", NULL, "UnaryElementwise"),
    OP("primus_turbo::quantize_mxfp4_dual", primus_turbo_quantize_mxfp4_dual, "elementwise", NULL, "UnaryElementwise"),
    OP("primus::quantize_mxfp4_dual", primus_turbo_quantize_mxfp4_dual, "elementwise", NULL, "UnaryElementwise"),
    OP("aiter::gemm_a4w4", aiter_gemm_a4w4, "GEMM", NULL, "GEMM"),
    OP("aiter::_gemm_a4w4_asm", aiter_gemm_a4w4, "GEMM", NULL, "GEMM"),
    OP("pseudo_op::moe_aiter_fused_1stage", moe_aiter_fused_1stage, "MoE_fused", NULL, "MoE_fused"),
    OP("aiter::moe_cktile2stages_gemm1_ck", moe_aiter_unfused_up, "MoE_unfused", NULL, "MoE_unfused"),
    OP("aiter::moe_cktile2stages_gemm2_ck", moe_aiter_unfused_down, "MoE_unfused", NULL, "MoE_unfused"),
    OP("aiter::ck_moe_stage1", moe_aiter_ck_stage1, "MoE_unfused", NULL, "MoE_unfused"),
    OP("aiter::ck_moe_stage2", moe_aiter_ck_stage2, "MoE_unfused", NULL, "MoE_unfused"),
    OP("aiter::fmoe_fp8_blockscale_g1u1", moe_aiter_fused_blockscale, "MoE_fused", NULL, "MoE_fused"),
    OP("aiter::fmoe_g1u1", moe_aiter_fused_blockscale, "MoE_fused", NULL, "MoE_fused"),
    OP("pseudo_op::moe_triton_unfused_up", moe_triton_unfused_up, "MoE_unfused", NULL, "MoE_unfused"),
    OP("pseudo_op::moe_triton_unfused_down", moe_triton_unfused_down, "MoE_unfused", NULL, "MoE_unfused"),
    OP("pseudo_op::moe_gptq_awq_up", moe_gptq_awq_up, "MoE_unfused", NULL, "MoE_unfused"),
    OP("pseudo_op::moe_gptq_awq_down", moe_gptq_awq_down, "MoE_unfused", NULL, "MoE_unfused"),
    OP("pseudo_op::moe_flydsl_stage1", moe_flydsl_stage1, "MoE_unfused", NULL, "MoE_unfused"),
    OP("pseudo_op::moe_flydsl_stage2", moe_flydsl_stage2, "MoE_unfused", NULL, "MoE_unfused"),
    OP("sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel", moe_triton_invoke_grouped_gemm, "MoE_unfused", NULL, "MoE_unfused"),
    OP("aiter::biased_grouped_topk_hip", BiasedGroupedTopk, "MoE_aux", NULL, "MoE_aux"),
    OP("aiter::moe_sorting_fwd", MoeSortScatterGather, "MoE_aux", NULL, "MoE_aux"),
    OP("aiter::mxfp4_moe_sort_hip", MoeSortScatterGather, "MoE_aux", NULL, "MoE_aux"),
    OP("aiter::mha_varlen_fwd", mha_varlen_fwd, "InferenceAttention", NULL, "InferenceAttention"),
    OP("aiter::fmha_v3_varlen_fwd", aiter_fmha_v3_varlen_fwd, "InferenceAttention", NULL, "InferenceAttention"),
    OP("aiter::mha_batch_prefill", aiter_mha_batch_prefill, "InferenceAttention", NULL, "InferenceAttention"),
    OP("sglang_profiler::attention_paged_attention_ragged", aiter_paged_attention_ragged, "InferenceAttention", NULL, "InferenceAttention"),
    OP("pseudo_mla_decode_fwd", mla_decode_fwd, "InferenceAttention", NULL, "InferenceAttention"),
    OP("pseudo_mla_prefill_fwd", pseudo_mla_prefill_fwd, "InferenceAttention", NULL, "InferenceAttention"),
    OP("aiter::pa_decode_gluon", pa_decode_gluon, "InferenceAttention", NULL, "InferenceAttention"),
    OP("pseudo_v4_paged_decode_swa", pseudo_v4_paged_decode_swa, "InferenceAttention", NULL, "InferenceAttention"),
    OP("pseudo_v4_paged_decode_csa", pseudo_v4_paged_decode_csa, "InferenceAttention", NULL, "InferenceAttention"),
    OP("pseudo_v4_paged_decode_hca", pseudo_v4_paged_decode_hca, "InferenceAttention", NULL, "InferenceAttention"),
    OP("aiter::pa_sparse_prefill_opus_fwd", pa_sparse_prefill_opus_fwd, "InferenceAttention", NULL, "InferenceAttention"),
    OP("sglang_profiler::tilelang_kernel_tilelang_sparse_fwd", mla_tilelang_sparse_fwd, "InferenceAttention", NULL, "InferenceAttention"),
    OP("aiter::batched_gemm_a16wfp4_", batched_gemm_a16wfp4, "GEMM", NULL, "GEMM"),
    OP("aiter::dynamic_per_token_scaled_quant", per_group_quant, "GroupQuant", NULL, "BinaryElementwise"),
    OP("aiter::dynamic_per_group_scaled_quant", per_group_quant, "GroupQuant", NULL, "BinaryElementwise"),
    OP("aiter::fused_add_rmsnorm_pad_", vllm_rocm_aiter_triton_add_rmsnorm_pad, "RMSNorm", NULL, "RMSNorm"),
    OP("aiter::mixed_sample_outer_exponential", mixed_sample_outer_exponential, "elementwise", NULL, "elementwise"),
    OP("sglang_profiler::fp8_utils_gemm_a8w8_blockscale", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("sglang_profiler::gemm_a8w8_blockscale_gemm_a8w8_blockscale", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("vllm::rocm_aiter_triton_gemm_a8w8_blockscale", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::gemm_a8w8_blockscale_ck", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::gemm_a8w8_blockscale_cktile", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::gemm_a8w8_blockscale_bpreshuffle_ck", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::gemm_a8w8_blockscale_bpreshuffle_cktile", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::flatmm_a8w8_blockscale_asm", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::gfx950_a8w8_blockscale_asm", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::gemm_a8w8_ck", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::gemm_a8w8_bpreshuffle_ck", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::gemm_a8w8_bpreshuffle", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("vllm::_rocm_aiter_preshuffled_per_token_w8a8_gemm", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("vllm::rocm_unquantized_gemm", vllm_rocm_unquantized_gemm, "GEMM", NULL, "GEMM"),
    OP("aiter::gemm_a16w16", gemm_a16w16, "GEMM", NULL, "GEMM"),
    OP("aiter::fused_dynamic_mx_quant_moe_sort_hip", fused_dynamic_mx_quant_moe_sort_hip, "GroupQuant", NULL, "GroupQuant"),
    OP("aiter::fused_qk_rope_concat_and_cache_mla", fused_qk_rope_concat_and_cache_mla, "RoPE_fwd", NULL, "FusedRoPE"),
    OP("aiter::gemm_a16w16_atomic_", gemm_a16w16_atomic_, "GEMM", NULL, "GEMM"),
    OP("aiter::_gemm_a16w16_asm", gemm_a16w16_asm, "GEMM", NULL, "GEMM"),
    OP("sglang_profiler::gemm_kernels_flydsl_hgemm", gemm_a16w16_atomic_, "GEMM", NULL, "GEMM"),
    OP("aiter::gemm_afp4wfp4_", gemm_afp4wfp4, "GEMM", NULL, "GEMM"),
    OP("sglang_profiler::batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant_batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant", batched_gemm_a8w8, "GEMM", NULL, "GEMM"),
    OP("vllm::triton_per_token_group_quant_fp8", vllm_triton_per_token_group_quant_fp8, "GroupQuant", NULL, "BinaryElementwise"),
    OP("sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant", fused_flatten_mxfp4_quant, "GroupQuant", NULL, "GroupQuant"),
    OP("aiter::dynamic_per_tensor_quant", per_group_quant, "GroupQuant", NULL, "BinaryElementwise"),
    OP("aiter::rope_cached_positions_2c_fwd_impl", aiter_rope_cached_positions_2c_fwd_impl, "RoPE_fwd", NULL, "RoPE"),
    OP("sgl_kernel::rotary_embedding", sgl_kernel_rotary_embedding, "RoPE_fwd", NULL, "RoPE"),
    OP("aiter::silu_and_mul", aiter_silu_and_mul, "elementwise", NULL, "UnaryElementwise"),
    OP("_C::silu_and_mul", aiter_silu_and_mul, "elementwise", NULL, "UnaryElementwise"),
    OP("sgl_kernel::silu_and_mul", sgl_kernel_silu_and_mul, "elementwise", NULL, "UnaryElementwise"),
    OP("aiter::gelu_and_mul", aiter_gelu_and_mul, "elementwise", NULL, "UnaryElementwise"),
    OP("aiter::gelu_tanh_and_mul", aiter_gelu_tanh_and_mul, "elementwise", NULL, "UnaryElementwise"),
    OP("aiter::rms_norm", aiter_rms_norm, "RMSNorm", NULL, "RMSNorm"),
    OP("aiter::rmsnorm", aiter_rmsnorm, "RMSNorm", NULL, "RMSNorm"),
    OP("aiter::rmsnorm2d_fwd_ck", aiter_rms_norm, "RMSNorm", NULL, "RMSNorm"),
    OP("aiter::rmsnorm2d_fwd_with_add_ck", aiter_rmsnorm2d_fwd_with_add_ck, "RMSNorm", NULL, "RMSNorm"),
    OP("aiter::add_rmsnorm", aiter_rmsnorm2d_fwd_with_add_ck, "RMSNorm", NULL, "RMSNorm"),
    OP("aiter::rmsnorm2d_fwd_with_dynamicquant_ck", aiter_rmsnorm2d_fwd_with_dynamicquant_ck, "RMSNorm", NULL, "RMSNorm"),
    OP("vllm::rocm_aiter_rmsnorm_fp8_group_quant", vllm_rocm_aiter_rmsnorm_fp8_group_quant, "RMSNorm", NULL, "RMSNorm"),
    OP("vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant", vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant, "RMSNorm", NULL, "RMSNorm"),
    OP("vllm::rocm_aiter_triton_add_rmsnorm_pad", vllm_rocm_aiter_triton_add_rmsnorm_pad, "RMSNorm", NULL, "RMSNorm"),
    OP("sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant", fused_rms_mxfp4_quant, "RMSNorm", NULL, "RMSNorm"),
    OP("aiter::_fuse_rmsnorm_fp4_quant", fused_rms_mxfp4_quant, "RMSNorm", NULL, "RMSNorm"),
    OP("aiter::fused_allreduce_rmsnorm", aiter_fused_allreduce_rmsnorm, "CustomCollective", NULL, "CustomCollective"),
    OP("aiter::fused_allreduce_rmsnorm_", aiter_fused_allreduce_rmsnorm_, "CustomCollective", NULL, "CustomCollective"),
    OP("_C_custom_ar::all_reduce", custom_ar_all_reduce, "CustomCollective", NULL, "CustomCollective"),
    OP("aiter::reduce_scatter", aiter_reduce_scatter, "CustomCollective", NULL, "CustomCollective"),
    OP("aiter::all_gather_reg", aiter_all_gather_reg, "CustomCollective", NULL, "CustomCollective"),
    OP("sgl_kernel::all_reduce_reg", sgl_kernel_all_reduce_reg, "CustomCollective", NULL, "CustomCollective"),
    OP("sgl_kernel::qr_all_reduce", sgl_kernel_qr_all_reduce, "CustomCollective", NULL, "CustomCollective"),
    OP("sglang::reg_all_gather_into_tensor", sgl_kernel_reg_all_gather_into_tensor, "CustomCollective", NULL, "CustomCollective"),
    OP("_C_custom_ar::qr_all_reduce", custom_ar_qr_all_reduce, "CustomCollective", NULL, "CustomCollective"),
    OP("vllm::gdn_attention_core", gdn_attention_core, "InferenceAttention", NULL, "InferenceAttention"),
    OP("aiter::linear_attention_with_output_base", gdn_attention_core, "InferenceAttention", NULL, "InferenceAttention"),
    OP("sglang::store_cache", sglang_store_cache, "InferenceAttention", NULL, "InferenceAttention"),
    OP("aiter::fused_qk_rope_cat_and_cache_mla", aiter_fused_qk_rope_cat_and_cache_mla, "RoPE_fwd", NULL, "FusedRoPE"),
    OP("sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts", sglang_fused_append_shared_experts, "MoE_aux", NULL, "MoE_aux"),
    OP("sglang_profiler::quant_dynamic_mxfp4_quant", sglang_quant_dynamic_mxfp4_quant, "GroupQuant", NULL, "GroupQuant"),
    OP("aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", aiter_fused_dynamic_mxfp4_quant_moe_sort_hip, "GroupQuant", NULL, "GroupQuant"),
    OP("aiter::dynamic_per_group_scaled_quant_fp4", aiter_dynamic_per_group_scaled_quant_fp4, "GroupQuant", NULL, "GroupQuant"),
    OP("aiter::_gemm_a8w8_blockscale_bpreshuffle_asm", gemm_a8w8_blockscale, "GEMM", NULL, "GEMM"),
    OP("aiter::mhc_post", mhc_post, "mHC", NULL, "mHC"),
    OP("aiter::mhc_pre_gemm_sqrsum", mhc_pre_gemm_sqrsum, "mHC", NULL, "mHC"),
    OP("aiter::mhc_pre_big_fuse_rmsnorm", mhc_pre_big_fuse_rmsnorm, "mHC", NULL, "mHC"),
    OP("aiter::mhc_fused_post_pre_gemm_sqrsum", mhc_fused_post_pre_gemm_sqrsum, "mHC", NULL, "mHC"),
    OP("aiter::topk_softplus", topk_softplus, "MoE_aux", NULL, "MoE_aux"),
    OP("aiter::rmsnorm_quant", aiter_rmsnorm_quant, "RMSNorm", NULL, "RMSNorm"),
    OP("aiter::_groupnorm_run", GroupNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::copy", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::copy_", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::clamp_min", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::clamp_min_", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::clamp_max", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::clamp_max_", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::sigmoid", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::rsqrt", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::silu", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::neg", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::pow", aten_unary_elementwise, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::div", aten_binary_elementwise, "elementwise", NULL, "BinaryElementwise"),
    OP("aten::div_", aten_binary_elementwise, "elementwise", NULL, "BinaryElementwise"),
    OP("aten::mul", aten_binary_elementwise, "elementwise", NULL, "BinaryElementwise"),
    OP("aten::mul_", aten_binary_elementwise, "elementwise", NULL, "BinaryElementwise"),
    OP("aten::add", aten_binary_elementwise, "elementwise", NULL, "BinaryElementwise"),
    OP("aten::add_", aten_binary_elementwise, "elementwise", NULL, "BinaryElementwise"),
    OP("aten::sigmoid_backward", aten_binary_elementwise, "elementwise", NULL, "BinaryElementwise"),
    OP("aten::threshold_backward", aten_binary_elementwise, "elementwise", NULL, "BinaryElementwise"),
    OP("aten::batch_norm", BatchNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::native_batch_norm", BatchNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::miopen_batch_norm", BatchNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::cudnn_batch_norm", BatchNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::layer_norm", LayerNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::native_layer_norm", LayerNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::miopen_layer_norm", LayerNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::cudnn_layer_norm", LayerNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::group_norm", GroupNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::native_group_norm", GroupNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::miopen_group_norm", GroupNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::cudnn_group_norm", GroupNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::instance_norm", InstanceNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::native_instance_norm", InstanceNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::miopen_instance_norm", InstanceNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::cudnn_instance_norm", InstanceNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::_fused_rms_norm", RMSNorm, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("aten::batch_norm_backward", BatchNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::native_batch_norm_backward", BatchNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::miopen_batch_norm_backward", BatchNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::cudnn_batch_norm_backward", BatchNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::layer_norm_backward", LayerNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::native_layer_norm_backward", LayerNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::miopen_layer_norm_backward", LayerNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::cudnn_layer_norm_backward", LayerNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::group_norm_backward", GroupNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::native_group_norm_backward", GroupNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::miopen_group_norm_backward", GroupNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::cudnn_group_norm_backward", GroupNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::instance_norm_backward", InstanceNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::native_instance_norm_backward", InstanceNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::miopen_instance_norm_backward", InstanceNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::cudnn_instance_norm_backward", InstanceNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::rms_norm_backward", RMSNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::native_rms_norm_backward", RMSNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::miopen_rms_norm_backward", RMSNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::cudnn_rms_norm_backward", RMSNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::_fused_rms_norm_backward", RMSNormBwd, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("primus::fused_ln_modulate", FusedLnModulate, "NORM_fwd", "NORM_bwd", "Normalization"),
    OP("primus::fused_ln_modulate_backward", FusedLnModulateBackward, "NORM_bwd", "NORM_bwd", "Normalization"),
    OP("aten::sum", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::mean", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::max", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::min", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::norm", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::linalg_norm", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::std", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::var", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::logsumexp", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::cumsum", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::cumprod", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::amin", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::amax", aten_reduce, "reduce", NULL, "Reduce"),
    OP("aten::replication_pad1d", aten_replication_pad, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::replication_pad2d", aten_replication_pad, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::replication_pad3d", aten_replication_pad, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::upsample_nearest1d", aten_upsample_nearest, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::upsample_nearest2d", aten_upsample_nearest, "elementwise", NULL, "UnaryElementwise"),
    OP("aten::upsample_nearest3d", aten_upsample_nearest, "elementwise", NULL, "UnaryElementwise"),
};
#undef OP

/* CATEGORY_ONLY_OP_MAPPING (perf-model §3.5 / Appendix A second table):
 * applied after the class categories, so it wins (one overlap:
 * aiter::fused_dynamic_mxfp4_quant_moe_sort_hip -> MoE_aux). */
static const tl_category_only_entry cat_only_table[] = {
    {"aten::miopen_convolution", "CONV_fwd"},
    {"aten::cudnn_convolution", "CONV_fwd"},
    {"FlashAttnFuncBackward", "SDPA_bwd"},
    {"FusedAttnFuncBackward", "SDPA_bwd"},
    {"aten::_scaled_dot_product_cudnn_attention_backward", "SDPA_bwd"},
    {"aten::_scaled_dot_product_efficient_attention_backward", "SDPA_bwd"},
    {"aten::_scaled_dot_product_flash_attention_backward", "SDPA_bwd"},
    {"aten::_efficient_attention_forward", "SDPA_fwd"},
    {"aten::_efficient_attention_backward", "SDPA_bwd"},
    {"MambaSplitConv1dScanCombinedFnBackward", "SSM_bwd"},
    {"DaoAILab::_causal_conv1d_bwd_cpp", "SSM_bwd"},
    {"TokenPermuteMaskMap", "MoE_comm_fwd"},
    {"_OperationFuserAutogradFunction", "MoE_comm_fwd"},
    {"MoEDispatchBackward", "MoE_comm_bwd"},
    {"MoECombineBackward", "MoE_comm_bwd"},
    {"TokenPermuteMaskMapBackward", "MoE_comm_bwd"},
    {"_OperationFuserAutogradFunctionBackward", "MoE_comm_bwd"},
    {"FusedRoPEFuncBackward", "RoPE_bwd"},
    {"CrossEntropyFunctionBackward", "CrossEntropy_bwd"},
    {"aiter::moe_sorting_opus_fwd", "MoE_aux"},
    {"aiter::moe_align_block_size", "MoE_aux"},
    {"_moe_C::moe_align_block_size", "MoE_aux"},
    {"aiter::fused_moe_->_fused_dynamic_mxfp4_quant_moe_sort_kernel (Synthetic Op)", "MoE_aux"},
    {"aiter::moe_sum", "MoE_aux"},
    {"aiter::topk_softmax", "MoE_aux"},
    {"aiter::topk_softmax_asm", "MoE_aux"},
    {"aiter::topk_sigmoid", "MoE_aux"},
    {"aiter::grouped_topk", "MoE_aux"},
    {"aiter::moe_fused_gate", "MoE_aux"},
    {"_C_cache_ops::reshape_and_cache_flash", "InferenceAttention"},
    {"_C_cache_ops::concat_and_cache_mla", "InferenceAttention"},
    {"aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", "MoE_aux"},
    {"aiter::unified_attention_with_output_base->_fused_qk_rope_reshape_and_cache_kernel (Synthetic Op)", "FusedRoPE"},
    {"hipModuleLaunchKernel->kv_indices_generate_kernel (Synthetic Op)", "InferenceAttention"},
    {"aiter::get_mla_metadata_v1", "InferenceAttention"},
    {"aiter::indexer_score_topk", "InferenceAttention"},
    {"aiter::v4_attention_with_output->_inverse_rope_gptj_kernel (Synthetic Op)", "FusedRoPE"},
    {"aiter::v4_attention_with_output->_update_compressor_states_kernel (Synthetic Op)", "InferenceAttention"},
    {"aiter::v4_attention_with_output->_swa_write_kernel (Synthetic Op)", "InferenceAttention"},
    {"aiter::v4_attention_with_output->qk_norm_rope_H32_D512_RD64_flydsl (Synthetic Op)", "FusedRoPE"},
    {"aiter::v4_attention_with_output->qk_norm_rope_H64_D512_RD64_flydsl (Synthetic Op)", "FusedRoPE"},
    {"aiter::v4_attention_with_output->hca_norm_rope_scatter_D512_RD64_R128_KB1_rmsbf16_flydsl (Synthetic Op)", "FusedRoPE"},
    {"aiter::v4_attention_with_output->fused_compress_attn_D512_RD64_R4_OVL_SS8_KB32_rmsbf16_pf_flydsl (Synthetic Op)", "InferenceAttention"},
    {"aiter::v4_attention_with_output->fused_compress_attn_D128_RD64_R4_OVL_SS8_KB32_Q_ue8m0_psh_rmsbf16_pf_flydsl (Synthetic Op)", "InferenceAttention"},
    {"aiter::v4_attention_with_output->hca_compress_forward_D512_R128_NW4_SL256_S128_flydsl (Synthetic Op)", "InferenceAttention"},
    {"aiter::v4_attention_with_output->hca_compress_forward_D512_R128_NW8_SL128_S128_flydsl (Synthetic Op)", "InferenceAttention"},
    {"aiter::allgather_lastdim<std::bfloat16_t, 2>(aiter::RankData*, aiter::RankSignals, aiter::Signal*, std::bfloat16_t*, int, int, int) (Synthetic Op)", "CustomCollective"},
    {"aiter::allgather_lastdim<std::bfloat16_t, 4>(aiter::RankData*, aiter::RankSignals, aiter::Signal*, std::bfloat16_t*, int, int, int) (Synthetic Op)", "CustomCollective"},
};

/* perf-report §7.5: sheet categories in first-appearance order of the
 * Appendix A table (the output order of the per-category perf sheets). */
static const char *const sheet_families[] = {
    "GEMM", "SDPA", "CONV", "InferenceAttention", "BinaryElementwise", "GroupedGEMM", "MoE_comm", "SSM",
    "RoPE", "CrossEntropy", "UnaryElementwise", "MoE_fused", "MoE_unfused", "MoE_aux", "RMSNorm",
    "elementwise", "GroupQuant", "FusedRoPE", "CustomCollective", "mHC", "Normalization", "Reduce",
    NULL,
};

enum {
    N_OPS = sizeof op_table / sizeof *op_table,
    N_CAT_ONLY = sizeof cat_only_table / sizeof *cat_only_table,
};

/* Name-sorted indexes into the two tables. */
static uint16_t op_index[N_OPS];
static uint16_t cat_only_index[N_CAT_ONLY];
static pthread_once_t index_once = PTHREAD_ONCE_INIT;

static int cmp_op(const void *a, const void *b)
{
    return strcmp(op_table[*(const uint16_t *)a].name, op_table[*(const uint16_t *)b].name);
}

static int cmp_cat_only(const void *a, const void *b)
{
    return strcmp(cat_only_table[*(const uint16_t *)a].name, cat_only_table[*(const uint16_t *)b].name);
}

static void build_index(void)
{
    for (size_t i = 0; i < N_OPS; i++) op_index[i] = (uint16_t)i;
    for (size_t i = 0; i < N_CAT_ONLY; i++) cat_only_index[i] = (uint16_t)i;
    qsort(op_index, N_OPS, sizeof *op_index, cmp_op);
    qsort(cat_only_index, N_CAT_ONLY, sizeof *cat_only_index, cmp_cat_only);
}

/* Binary search of name in a sorted index; returns the table row or -1. */
#define FIND(table, index, n, key)                                 \
    do {                                                           \
        size_t lo_ = 0, hi_ = (n);                                 \
        while (lo_ < hi_) {                                        \
            size_t mid_ = lo_ + (hi_ - lo_) / 2;                   \
            int c_ = strcmp((key), (table)[(index)[mid_]].name);   \
            if (c_ == 0) return &(table)[(index)[mid_]];           \
            if (c_ < 0) hi_ = mid_;                                \
            else lo_ = mid_ + 1;                                   \
        }                                                          \
        return NULL;                                               \
    } while (0)

const tl_perf_op_entry *tl_perf_op_find(const char *name)
{
    if (!name) return NULL;
    pthread_once(&index_once, build_index);
    FIND(op_table, op_index, N_OPS, name);
}

static const tl_category_only_entry *cat_only_find(const char *name)
{
    pthread_once(&index_once, build_index);
    FIND(cat_only_table, cat_only_index, N_CAT_ONLY, name);
}

const tl_perf_op_entry *tl_perf_op_table(size_t *n)
{
    if (n) *n = N_OPS;
    return op_table;
}

const tl_category_only_entry *tl_category_only_table(size_t *n)
{
    if (n) *n = N_CAT_ONLY;
    return cat_only_table;
}

int tl_perf_is_triton_name(const char *name)
{
    return name && (strncmp(name, "triton_poi_", 11) == 0 || strncmp(name, "triton_red_", 11) == 0 ||
                    strncmp(name, "triton_per_", 11) == 0);
}

const tl_perf_class *tl_perf_lookup(const char *name)
{
    const tl_perf_op_entry *e = tl_perf_op_find(name);
    if (e) return e->cls;
    if (tl_perf_is_triton_name(name)) return &tl_pc_TritonCompiledPerfModel;
    return NULL;
}

const char *tl_op_registry_category(const char *name)
{
    if (!name) return NULL;
    const tl_category_only_entry *c = cat_only_find(name);
    if (c) return c->category;
    const tl_perf_op_entry *e = tl_perf_op_find(name);
    return e ? e->category : NULL;
}

const char *const *tl_sheet_families(void) { return sheet_families; }
