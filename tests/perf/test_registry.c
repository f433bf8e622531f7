/* test_registry.c — the op registry (perf-model spec §3, Appendix A), the
 * category rules (perf-report spec §6) and the sheet-family order
 * (perf-report §7.5). Model classes that are not written yet are listed,
 * not failed. */
#include <stdio.h>
#include <string.h>

#include "perf/categorize.h"
#include "perf/perf_model.h"
#include "test.h"

tl_test_ctx tl_test_state;

/* perf-model Appendix A, transcribed independently of registry.c:
 * op name, class, category column. */
static const struct {
    const char *name, *cls, *category;
} appendix_a[] = {
    {"aten::mm", "aten_mm", "GEMM"},
    {"aten::addmm", "aten_addmm", "GEMM"},
    {"aten::_scaled_mm", "aten_scaled_mm", "GEMM"},
    {"trtllm::cublas_scaled_mm", "aten_scaled_mm", "GEMM"},
    {"bitsandbytes::int8_linear_matmul", "aten_scaled_mm", "GEMM"},
    {"aten::bmm", "aten_bmm", "GEMM"},
    {"tex_ts::te_gemm_ts", "tex_ts_te_gemm_ts", "GEMM"},
    {"aten::baddbmm", "aten_baddbmm", "GEMM"},
    {"vllm::gemm_with_dynamic_quant", "vllm_gemm_with_dynamic_quant", "GEMM"},
    {"FlashAttnFunc", "flash_attention", "SDPA_fwd"},
    {"flash_attn::_flash_attn_forward", "flash_attention", "SDPA_fwd"},
    {"flash_attn::_flash_attn_backward", "flash_attention_backward", "SDPA_bwd"},
    {"flash_attn::_flash_attn_varlen_forward", "flash_attention_varlen_forward", "SDPA_fwd"},
    {"flash_attn::_flash_attn_varlen_backward", "flash_attention_varlen_backward", "SDPA_bwd"},
    {"aten::_scaled_dot_product_cudnn_attention", "aten__scaled_dot_product_cudnn_attention", "SDPA_fwd"},
    {"aten::_scaled_dot_product_efficient_attention", "aten__scaled_dot_product_efficient_attention", "SDPA_fwd"},
    {"aten::_scaled_dot_product_flash_attention", "aten__scaled_dot_product_flash_attention", "SDPA_fwd"},
    {"aten::convolution", "aten_conv", "CONV_fwd"},
    {"aten::convolution_backward", "aten_conv_bwd", "CONV_bwd"},
    {"ConvBias_", "ConvBias_", "CONV_fwd"},
    {"ConvBiasReLU_", "ConvBiasReLU_", "CONV_fwd"},
    {"ConvBias_Backward", "ConvBias_Backward", "CONV_bwd"},
    {"ConvBiasReLU_Backward", "ConvBiasReLU_Backward", "CONV_bwd"},
    {"aiter::_flash_attn_forward", "aiter__flash_attn_forward", "SDPA_fwd"},
    {"aiter::_flash_attn_backward", "aiter__flash_attn_backward", "SDPA_bwd"},
    {"aiter::wrapper_fmha_v3_fwd", "aiter__fmha_v3_forward", "SDPA_fwd"},
    {"aiter::wrapper_fmha_v3_bwd", "aiter__fmha_v3_backward", "SDPA_bwd"},
    {"aiter::mha_fwd", "aiter__mha_fwd", "SDPA_fwd"},
    {"aiter::fmha_v3_fwd", "aiter__fmha_v3_fwd", "SDPA_fwd"},
    {"aiter::mha_bwd", "aiter__mha_bwd", "SDPA_bwd"},
    {"flash_attn_3::fwd", "flash_attn_v3_forward", "SDPA_fwd"},
    {"vllm::unified_attention_with_output", "vllm_unified_attention_with_output", "InferenceAttention"},
    {"EvoformerAttention", "evoformer_attention", "SDPA_fwd"},
    {"LigerSiLUMulFunction", "liger_silu_mul_function", "elementwise"},
    {"primus_turbo::grouped_gemm", "primus_turbo_grouped_gemm", "GroupedGEMM_fwd"},
    {"primus_turbo::grouped_gemm_impl", "primus_turbo_grouped_gemm", "GroupedGEMM_fwd"},
    {"primus_turbo_cpp_extension::grouped_gemm", "primus_turbo_grouped_gemm", "GroupedGEMM_fwd"},
    {"primus_turbo::grouped_gemm_variable_k", "primus_turbo_grouped_gemm_variable_k", "GroupedGEMM_fwd"},
    {"primus_turbo::grouped_gemm_variable_k_impl", "primus_turbo_grouped_gemm_variable_k", "GroupedGEMM_fwd"},
    {"primus_turbo_cpp_extension::grouped_gemm_variable_k", "primus_turbo_grouped_gemm_variable_k", "GroupedGEMM_fwd"},
    {"_Linear_yfwd_mm", "tev2_pseudo_gemm", "GEMM"},
    {"_LinearBackward_xgrad_mm", "tev2_pseudo_gemm", "GEMM"},
    {"_LinearBackward_wgrad_mm", "tev2_pseudo_gemm", "GEMM"},
    {"_LayerNormLinear_yfwd_mm", "tev2_pseudo_gemm", "GEMM"},
    {"_LayerNormLinearBackward_xgrad_mm", "tev2_pseudo_gemm", "GEMM"},
    {"_LayerNormLinearBackward_wgrad_mm", "tev2_pseudo_gemm", "GEMM"},
    {"primus_turbo_cpp_extension::ck_grouped_gemm", "primus_turbo_grouped_gemm", "GroupedGEMM_fwd"},
    {"primus_turbo_cpp_extension::ck_grouped_gemm_variable_k", "primus_turbo_grouped_gemm_variable_k", "GroupedGEMM_fwd"},
    {"MoEDispatch", "moe_dispatch", "MoE_comm_fwd"},
    {"MoECombine", "moe_combine", "MoE_comm_fwd"},
    {"DaoAILab::_causal_conv1d_fwd_cpp", "causal_conv1d_fwd", "SSM_fwd"},
    {"FusedRoPEFunc", "fused_rope_fwd", "RoPE_fwd"},
    {"CrossEntropyFunction", "cross_entropy_fwd", "CrossEntropy_fwd"},
    {"MambaSplitConv1dScanCombinedFn", "mamba_ssd_fwd", "SSM_fwd"},
    {"primus_turbo_cpp_extension::hipblaslt_gemm_fp8", "hipblaslt_gemm_fp8", "GEMM"},
    {"primus_turbo::hipblaslt_gemm_fp8", "hipblaslt_gemm_fp8", "GEMM"},
    {"primus_turbo_cpp_extension::quantize_fp8_tensorwise", "primus_turbo_quantize_fp8", "elementwise"},
    {"primus_turbo::quantize_fp8_tensorwise", "primus_turbo_quantize_fp8", "elementwise"},
    {"primus_turbo_cpp_extension::hipblaslt_gemm_fp4", "hipblaslt_gemm_fp4", "GEMM"},
    {"primus_turbo::hipblaslt_gemm_fp4", "hipblaslt_gemm_fp4", "GEMM"},
    {"primus_turbo_cpp_extension::quantize_mxfp4_dual", "primus_turbo_quantize_mxfp4_dual", "elementwise"},
    {"primus_turbo::quantize_mxfp4_dual", "primus_turbo_quantize_mxfp4_dual", "elementwise"},
    {"primus::quantize_mxfp4_dual", "primus_turbo_quantize_mxfp4_dual", "elementwise"},
    {"aiter::gemm_a4w4", "aiter_gemm_a4w4", "GEMM"},
    {"aiter::_gemm_a4w4_asm", "aiter_gemm_a4w4", "GEMM"},
    {"pseudo_op::moe_aiter_fused_1stage", "moe_aiter_fused_1stage", "MoE_fused"},
    {"aiter::moe_cktile2stages_gemm1_ck", "moe_aiter_unfused_up", "MoE_unfused"},
    {"aiter::moe_cktile2stages_gemm2_ck", "moe_aiter_unfused_down", "MoE_unfused"},
    {"aiter::ck_moe_stage1", "moe_aiter_ck_stage1", "MoE_unfused"},
    {"aiter::ck_moe_stage2", "moe_aiter_ck_stage2", "MoE_unfused"},
    {"aiter::fmoe_fp8_blockscale_g1u1", "moe_aiter_fused_blockscale", "MoE_fused"},
    {"aiter::fmoe_g1u1", "moe_aiter_fused_blockscale", "MoE_fused"},
    {"pseudo_op::moe_triton_unfused_up", "moe_triton_unfused_up", "MoE_unfused"},
    {"pseudo_op::moe_triton_unfused_down", "moe_triton_unfused_down", "MoE_unfused"},
    {"pseudo_op::moe_gptq_awq_up", "moe_gptq_awq_up", "MoE_unfused"},
    {"pseudo_op::moe_gptq_awq_down", "moe_gptq_awq_down", "MoE_unfused"},
    {"pseudo_op::moe_flydsl_stage1", "moe_flydsl_stage1", "MoE_unfused"},
    {"pseudo_op::moe_flydsl_stage2", "moe_flydsl_stage2", "MoE_unfused"},
    {"sglang_profiler::fused_moe_triton_kernels_invoke_fused_moe_kernel", "moe_triton_invoke_grouped_gemm", "MoE_unfused"},
    {"aiter::biased_grouped_topk_hip", "BiasedGroupedTopk", "MoE_aux"},
    {"aiter::moe_sorting_fwd", "MoeSortScatterGather", "MoE_aux"},
    {"aiter::mxfp4_moe_sort_hip", "MoeSortScatterGather", "MoE_aux"},
    {"aiter::mha_varlen_fwd", "mha_varlen_fwd", "InferenceAttention"},
    {"aiter::fmha_v3_varlen_fwd", "aiter_fmha_v3_varlen_fwd", "InferenceAttention"},
    {"aiter::mha_batch_prefill", "aiter_mha_batch_prefill", "InferenceAttention"},
    {"sglang_profiler::attention_paged_attention_ragged", "aiter_paged_attention_ragged", "InferenceAttention"},
    {"pseudo_mla_decode_fwd", "mla_decode_fwd", "InferenceAttention"},
    {"pseudo_mla_prefill_fwd", "pseudo_mla_prefill_fwd", "InferenceAttention"},
    {"aiter::pa_decode_gluon", "pa_decode_gluon", "InferenceAttention"},
    {"pseudo_v4_paged_decode_swa", "pseudo_v4_paged_decode_swa", "InferenceAttention"},
    {"pseudo_v4_paged_decode_csa", "pseudo_v4_paged_decode_csa", "InferenceAttention"},
    {"pseudo_v4_paged_decode_hca", "pseudo_v4_paged_decode_hca", "InferenceAttention"},
    {"aiter::pa_sparse_prefill_opus_fwd", "pa_sparse_prefill_opus_fwd", "InferenceAttention"},
    {"sglang_profiler::tilelang_kernel_tilelang_sparse_fwd", "mla_tilelang_sparse_fwd", "InferenceAttention"},
    {"aiter::batched_gemm_a16wfp4_", "batched_gemm_a16wfp4", "GEMM"},
    {"aiter::dynamic_per_token_scaled_quant", "per_group_quant", "GroupQuant"},
    {"aiter::dynamic_per_group_scaled_quant", "per_group_quant", "GroupQuant"},
    {"aiter::fused_add_rmsnorm_pad_", "vllm_rocm_aiter_triton_add_rmsnorm_pad", "RMSNorm"},
    {"aiter::mixed_sample_outer_exponential", "mixed_sample_outer_exponential", "elementwise"},
    {"sglang_profiler::fp8_utils_gemm_a8w8_blockscale", "gemm_a8w8_blockscale", "GEMM"},
    {"sglang_profiler::gemm_a8w8_blockscale_gemm_a8w8_blockscale", "gemm_a8w8_blockscale", "GEMM"},
    {"vllm::rocm_aiter_triton_gemm_a8w8_blockscale", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::gemm_a8w8_blockscale_ck", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::gemm_a8w8_blockscale_cktile", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::gemm_a8w8_blockscale_bpreshuffle_ck", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::gemm_a8w8_blockscale_bpreshuffle_cktile", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::flatmm_a8w8_blockscale_asm", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::gfx950_a8w8_blockscale_asm", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::gemm_a8w8_ck", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::gemm_a8w8_bpreshuffle_ck", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::gemm_a8w8_bpreshuffle", "gemm_a8w8_blockscale", "GEMM"},
    {"vllm::_rocm_aiter_preshuffled_per_token_w8a8_gemm", "gemm_a8w8_blockscale", "GEMM"},
    {"vllm::rocm_unquantized_gemm", "vllm_rocm_unquantized_gemm", "GEMM"},
    {"aiter::gemm_a16w16", "gemm_a16w16", "GEMM"},
    {"aiter::fused_dynamic_mx_quant_moe_sort_hip", "fused_dynamic_mx_quant_moe_sort_hip", "GroupQuant"},
    {"aiter::fused_qk_rope_concat_and_cache_mla", "fused_qk_rope_concat_and_cache_mla", "RoPE_fwd"},
    {"aiter::gemm_a16w16_atomic_", "gemm_a16w16_atomic_", "GEMM"},
    {"aiter::_gemm_a16w16_asm", "gemm_a16w16_asm", "GEMM"},
    {"sglang_profiler::gemm_kernels_flydsl_hgemm", "gemm_a16w16_atomic_", "GEMM"},
    {"aiter::gemm_afp4wfp4_", "gemm_afp4wfp4", "GEMM"},
    {"sglang_profiler::batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant_batched_gemm_a8w8_a_per_token_group_prequant_w_per_batched_tensor_quant", "batched_gemm_a8w8", "GEMM"},
    {"vllm::triton_per_token_group_quant_fp8", "vllm_triton_per_token_group_quant_fp8", "GroupQuant"},
    {"sglang_profiler::fused_mxfp4_quant_fused_flatten_mxfp4_quant", "fused_flatten_mxfp4_quant", "GroupQuant"},
    {"aiter::dynamic_per_tensor_quant", "per_group_quant", "GroupQuant"},
    {"aiter::rope_cached_positions_2c_fwd_impl", "aiter_rope_cached_positions_2c_fwd_impl", "RoPE_fwd"},
    {"sgl_kernel::rotary_embedding", "sgl_kernel_rotary_embedding", "RoPE_fwd"},
    {"aiter::silu_and_mul", "aiter_silu_and_mul", "elementwise"},
    {"_C::silu_and_mul", "aiter_silu_and_mul", "elementwise"},
    {"sgl_kernel::silu_and_mul", "sgl_kernel_silu_and_mul", "elementwise"},
    {"aiter::gelu_and_mul", "aiter_gelu_and_mul", "elementwise"},
    {"aiter::gelu_tanh_and_mul", "aiter_gelu_tanh_and_mul", "elementwise"},
    {"aiter::rms_norm", "aiter_rms_norm", "RMSNorm"},
    {"aiter::rmsnorm", "aiter_rmsnorm", "RMSNorm"},
    {"aiter::rmsnorm2d_fwd_ck", "aiter_rms_norm", "RMSNorm"},
    {"aiter::rmsnorm2d_fwd_with_add_ck", "aiter_rmsnorm2d_fwd_with_add_ck", "RMSNorm"},
    {"aiter::add_rmsnorm", "aiter_rmsnorm2d_fwd_with_add_ck", "RMSNorm"},
    {"aiter::rmsnorm2d_fwd_with_dynamicquant_ck", "aiter_rmsnorm2d_fwd_with_dynamicquant_ck", "RMSNorm"},
    {"vllm::rocm_aiter_rmsnorm_fp8_group_quant", "vllm_rocm_aiter_rmsnorm_fp8_group_quant", "RMSNorm"},
    {"vllm::rocm_aiter_rmsnorm_with_add_fp8_group_quant", "vllm_rocm_aiter_rmsnorm_with_add_fp8_group_quant", "RMSNorm"},
    {"vllm::rocm_aiter_triton_add_rmsnorm_pad", "vllm_rocm_aiter_triton_add_rmsnorm_pad", "RMSNorm"},
    {"sglang_profiler::fused_mxfp4_quant_fused_rms_mxfp4_quant", "fused_rms_mxfp4_quant", "RMSNorm"},
    {"aiter::_fuse_rmsnorm_fp4_quant", "fused_rms_mxfp4_quant", "RMSNorm"},
    {"aiter::fused_allreduce_rmsnorm", "aiter_fused_allreduce_rmsnorm", "CustomCollective"},
    {"aiter::fused_allreduce_rmsnorm_", "aiter_fused_allreduce_rmsnorm_", "CustomCollective"},
    {"_C_custom_ar::all_reduce", "custom_ar_all_reduce", "CustomCollective"},
    {"aiter::reduce_scatter", "aiter_reduce_scatter", "CustomCollective"},
    {"aiter::all_gather_reg", "aiter_all_gather_reg", "CustomCollective"},
    {"sgl_kernel::all_reduce_reg", "sgl_kernel_all_reduce_reg", "CustomCollective"},
    {"sgl_kernel::qr_all_reduce", "sgl_kernel_qr_all_reduce", "CustomCollective"},
    {"sglang::reg_all_gather_into_tensor", "sgl_kernel_reg_all_gather_into_tensor", "CustomCollective"},
    {"_C_custom_ar::qr_all_reduce", "custom_ar_qr_all_reduce", "CustomCollective"},
    {"vllm::gdn_attention_core", "gdn_attention_core", "InferenceAttention"},
    {"aiter::linear_attention_with_output_base", "gdn_attention_core", "InferenceAttention"},
    {"sglang::store_cache", "sglang_store_cache", "InferenceAttention"},
    {"aiter::fused_qk_rope_cat_and_cache_mla", "aiter_fused_qk_rope_cat_and_cache_mla", "RoPE_fwd"},
    {"sglang_profiler::fused_moe_triton_kernels_fused_append_shared_experts", "sglang_fused_append_shared_experts", "MoE_aux"},
    {"sglang_profiler::quant_dynamic_mxfp4_quant", "sglang_quant_dynamic_mxfp4_quant", "GroupQuant"},
    {"aiter::fused_dynamic_mxfp4_quant_moe_sort_hip", "aiter_fused_dynamic_mxfp4_quant_moe_sort_hip", "GroupQuant"},
    {"aiter::dynamic_per_group_scaled_quant_fp4", "aiter_dynamic_per_group_scaled_quant_fp4", "GroupQuant"},
    {"aiter::_gemm_a8w8_blockscale_bpreshuffle_asm", "gemm_a8w8_blockscale", "GEMM"},
    {"aiter::mhc_post", "mhc_post", "mHC"},
    {"aiter::mhc_pre_gemm_sqrsum", "mhc_pre_gemm_sqrsum", "mHC"},
    {"aiter::mhc_pre_big_fuse_rmsnorm", "mhc_pre_big_fuse_rmsnorm", "mHC"},
    {"aiter::mhc_fused_post_pre_gemm_sqrsum", "mhc_fused_post_pre_gemm_sqrsum", "mHC"},
    {"aiter::topk_softplus", "topk_softplus", "MoE_aux"},
    {"aiter::rmsnorm_quant", "aiter_rmsnorm_quant", "RMSNorm"},
    {"aiter::_groupnorm_run", "GroupNorm", "NORM_fwd"},
    {"aten::copy", "aten_unary_elementwise", "elementwise"},
    {"aten::copy_", "aten_unary_elementwise", "elementwise"},
    {"aten::clamp_min", "aten_unary_elementwise", "elementwise"},
    {"aten::clamp_min_", "aten_unary_elementwise", "elementwise"},
    {"aten::clamp_max", "aten_unary_elementwise", "elementwise"},
    {"aten::clamp_max_", "aten_unary_elementwise", "elementwise"},
    {"aten::sigmoid", "aten_unary_elementwise", "elementwise"},
    {"aten::rsqrt", "aten_unary_elementwise", "elementwise"},
    {"aten::silu", "aten_unary_elementwise", "elementwise"},
    {"aten::neg", "aten_unary_elementwise", "elementwise"},
    {"aten::pow", "aten_unary_elementwise", "elementwise"},
    {"aten::div", "aten_binary_elementwise", "elementwise"},
    {"aten::div_", "aten_binary_elementwise", "elementwise"},
    {"aten::mul", "aten_binary_elementwise", "elementwise"},
    {"aten::mul_", "aten_binary_elementwise", "elementwise"},
    {"aten::add", "aten_binary_elementwise", "elementwise"},
    {"aten::add_", "aten_binary_elementwise", "elementwise"},
    {"aten::sigmoid_backward", "aten_binary_elementwise", "elementwise"},
    {"aten::threshold_backward", "aten_binary_elementwise", "elementwise"},
    {"aten::batch_norm", "BatchNorm", "NORM_fwd"},
    {"aten::native_batch_norm", "BatchNorm", "NORM_fwd"},
    {"aten::miopen_batch_norm", "BatchNorm", "NORM_fwd"},
    {"aten::cudnn_batch_norm", "BatchNorm", "NORM_fwd"},
    {"aten::layer_norm", "LayerNorm", "NORM_fwd"},
    {"aten::native_layer_norm", "LayerNorm", "NORM_fwd"},
    {"aten::miopen_layer_norm", "LayerNorm", "NORM_fwd"},
    {"aten::cudnn_layer_norm", "LayerNorm", "NORM_fwd"},
    {"aten::group_norm", "GroupNorm", "NORM_fwd"},
    {"aten::native_group_norm", "GroupNorm", "NORM_fwd"},
    {"aten::miopen_group_norm", "GroupNorm", "NORM_fwd"},
    {"aten::cudnn_group_norm", "GroupNorm", "NORM_fwd"},
    {"aten::instance_norm", "InstanceNorm", "NORM_fwd"},
    {"aten::native_instance_norm", "InstanceNorm", "NORM_fwd"},
    {"aten::miopen_instance_norm", "InstanceNorm", "NORM_fwd"},
    {"aten::cudnn_instance_norm", "InstanceNorm", "NORM_fwd"},
    {"aten::_fused_rms_norm", "RMSNorm", "NORM_fwd"},
    {"aten::batch_norm_backward", "BatchNormBwd", "NORM_bwd"},
    {"aten::native_batch_norm_backward", "BatchNormBwd", "NORM_bwd"},
    {"aten::miopen_batch_norm_backward", "BatchNormBwd", "NORM_bwd"},
    {"aten::cudnn_batch_norm_backward", "BatchNormBwd", "NORM_bwd"},
    {"aten::layer_norm_backward", "LayerNormBwd", "NORM_bwd"},
    {"aten::native_layer_norm_backward", "LayerNormBwd", "NORM_bwd"},
    {"aten::miopen_layer_norm_backward", "LayerNormBwd", "NORM_bwd"},
    {"aten::cudnn_layer_norm_backward", "LayerNormBwd", "NORM_bwd"},
    {"aten::group_norm_backward", "GroupNormBwd", "NORM_bwd"},
    {"aten::native_group_norm_backward", "GroupNormBwd", "NORM_bwd"},
    {"aten::miopen_group_norm_backward", "GroupNormBwd", "NORM_bwd"},
    {"aten::cudnn_group_norm_backward", "GroupNormBwd", "NORM_bwd"},
    {"aten::instance_norm_backward", "InstanceNormBwd", "NORM_bwd"},
    {"aten::native_instance_norm_backward", "InstanceNormBwd", "NORM_bwd"},
    {"aten::miopen_instance_norm_backward", "InstanceNormBwd", "NORM_bwd"},
    {"aten::cudnn_instance_norm_backward", "InstanceNormBwd", "NORM_bwd"},
    {"aten::rms_norm_backward", "RMSNormBwd", "NORM_bwd"},
    {"aten::native_rms_norm_backward", "RMSNormBwd", "NORM_bwd"},
    {"aten::miopen_rms_norm_backward", "RMSNormBwd", "NORM_bwd"},
    {"aten::cudnn_rms_norm_backward", "RMSNormBwd", "NORM_bwd"},
    {"aten::_fused_rms_norm_backward", "RMSNormBwd", "NORM_bwd"},
    {"primus::fused_ln_modulate", "FusedLnModulate", "NORM_fwd"},
    {"primus::fused_ln_modulate_backward", "FusedLnModulateBackward", "NORM_bwd"},
    {"aten::sum", "aten_reduce", "reduce"},
    {"aten::mean", "aten_reduce", "reduce"},
    {"aten::max", "aten_reduce", "reduce"},
    {"aten::min", "aten_reduce", "reduce"},
    {"aten::norm", "aten_reduce", "reduce"},
    {"aten::linalg_norm", "aten_reduce", "reduce"},
    {"aten::std", "aten_reduce", "reduce"},
    {"aten::var", "aten_reduce", "reduce"},
    {"aten::logsumexp", "aten_reduce", "reduce"},
    {"aten::cumsum", "aten_reduce", "reduce"},
    {"aten::cumprod", "aten_reduce", "reduce"},
    {"aten::amin", "aten_reduce", "reduce"},
    {"aten::amax", "aten_reduce", "reduce"},
    {"aten::replication_pad1d", "aten_replication_pad", "elementwise"},
    {"aten::replication_pad2d", "aten_replication_pad", "elementwise"},
    {"aten::replication_pad3d", "aten_replication_pad", "elementwise"},
    {"aten::upsample_nearest1d", "aten_upsample_nearest", "elementwise"},
    {"aten::upsample_nearest2d", "aten_upsample_nearest", "elementwise"},
    {"aten::upsample_nearest3d", "aten_upsample_nearest", "elementwise"},
};

static const char *const category_only_sample[][2] = {
    {"aten::miopen_convolution", "CONV_fwd"},
    {"aten::cudnn_convolution", "CONV_fwd"},
    {"FlashAttnFuncBackward", "SDPA_bwd"},
    {"aten::_scaled_dot_product_flash_attention_backward", "SDPA_bwd"},
    {"aten::_efficient_attention_forward", "SDPA_fwd"},
    {"aten::_efficient_attention_backward", "SDPA_bwd"},
    {"DaoAILab::_causal_conv1d_bwd_cpp", "SSM_bwd"},
    {"_OperationFuserAutogradFunction", "MoE_comm_fwd"},
    {"MoECombineBackward", "MoE_comm_bwd"},
    {"FusedRoPEFuncBackward", "RoPE_bwd"},
    {"CrossEntropyFunctionBackward", "CrossEntropy_bwd"},
    {"aiter::fused_moe_->_fused_dynamic_mxfp4_quant_moe_sort_kernel (Synthetic Op)", "MoE_aux"},
    {"hipModuleLaunchKernel->kv_indices_generate_kernel (Synthetic Op)", "InferenceAttention"},
    {"aiter::unified_attention_with_output_base->_fused_qk_rope_reshape_and_cache_kernel (Synthetic Op)",
     "FusedRoPE"},
    {"aiter::v4_attention_with_output->hca_compress_forward_D512_R128_NW8_SL128_S128_flydsl (Synthetic Op)",
     "InferenceAttention"},
    {"aiter::allgather_lastdim<std::bfloat16_t, 4>(aiter::RankData*, aiter::RankSignals, aiter::Signal*, "
     "std::bfloat16_t*, int, int, int) (Synthetic Op)",
     "CustomCollective"},
};

static const char *const overridden = "aiter::fused_dynamic_mxfp4_quant_moe_sort_hip";

static int streq(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

static void test_appendix_a(void)
{
    size_t n = 0;
    const tl_perf_op_entry *t = tl_perf_op_table(&n);
    CHECK_I64(n, 245);
    CHECK_I64(sizeof appendix_a / sizeof *appendix_a, 245);
    for (size_t i = 0; i < n && i < 245; i++) {
        /* same order as the spec */
        CHECK_STR(t[i].name, appendix_a[i].name);
        const tl_perf_op_entry *e = tl_perf_op_find(appendix_a[i].name);
        CHECK(e == &t[i]);
        if (!e) continue;
        CHECK_STR(e->class_name, appendix_a[i].cls);
        CHECK_STR(e->category, appendix_a[i].category);
        CHECK(tl_perf_lookup(appendix_a[i].name) == e->cls);
        const char *want = strcmp(appendix_a[i].name, overridden) ? appendix_a[i].category : "MoE_aux";
        CHECK_STR(tl_op_registry_category(appendix_a[i].name), want);
        CHECK_STR(tl_categorize_op(appendix_a[i].name, NULL), want);
        CHECK(e->sheet != NULL);
    }
    /* names are unique */
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) CHECK(strcmp(t[i].name, t[j].name) != 0);
    /* not found */
    CHECK(tl_perf_op_find("aten::linear") == NULL);
    CHECK(tl_perf_op_find("aten::mm ") == NULL);
    CHECK(tl_perf_op_find("ATEN::MM") == NULL);
    CHECK(tl_perf_op_find("") == NULL);
    CHECK(tl_perf_op_find(NULL) == NULL);
    CHECK(tl_perf_lookup("aten::matmul") == NULL);
    CHECK(tl_perf_lookup("aten::_flash_attention_forward") == NULL);
    CHECK(tl_op_registry_category("aten::linear") == NULL);
    CHECK(tl_op_registry_category(NULL) == NULL);
}

static void test_samples(void)
{
    const tl_perf_op_entry *e = tl_perf_op_find("aten::mm");
    CHECK(e && streq(e->class_name, "aten_mm") && streq(e->category, "GEMM") && !e->bwd_category &&
          streq(e->sheet, "GEMM"));
    e = tl_perf_op_find("flash_attn::_flash_attn_backward");
    CHECK(e && streq(e->class_name, "flash_attention_backward") && streq(e->category, "SDPA_bwd") &&
          streq(e->bwd_category, "SDPA_bwd") && streq(e->sheet, "SDPA"));
    e = tl_perf_op_find("aten::native_layer_norm");
    CHECK(e && streq(e->class_name, "LayerNorm") && streq(e->category, "NORM_fwd") &&
          streq(e->bwd_category, "NORM_bwd") && streq(e->sheet, "Normalization"));
    e = tl_perf_op_find("aiter::dynamic_per_token_scaled_quant");
    CHECK(e && streq(e->category, "GroupQuant") && streq(e->sheet, "BinaryElementwise"));
    e = tl_perf_op_find("aiter::fused_qk_rope_cat_and_cache_mla");
    CHECK(e && streq(e->category, "RoPE_fwd") && streq(e->sheet, "FusedRoPE"));
    e = tl_perf_op_find("vllm::unified_attention_with_output");
    CHECK(e && streq(e->class_name, "vllm_unified_attention_with_output") &&
          streq(e->category, "InferenceAttention"));
    e = tl_perf_op_find("aiter::_groupnorm_run");
    CHECK(e && streq(e->class_name, "GroupNorm"));
    CHECK_STR(tl_op_registry_category("aten::convolution_backward"), "CONV_bwd");
    CHECK_STR(tl_op_registry_category("flash_attn::_flash_attn_backward"), "SDPA_bwd");
    CHECK_STR(tl_op_registry_category("aten::sum"), "reduce");
    CHECK_STR(tl_op_registry_category("aten::copy_"), "elementwise");
    CHECK_STR(tl_op_registry_category("LigerSiLUMulFunction"), "elementwise");
    CHECK_STR(tl_op_registry_category("aiter::rmsnorm"), "RMSNorm");
    CHECK_STR(tl_op_registry_category("aiter::mhc_post"), "mHC");
    CHECK_STR(tl_op_registry_category("MoEDispatch"), "MoE_comm_fwd");
    CHECK_STR(tl_op_registry_category("aten::_scaled_dot_product_flash_attention"), "SDPA_fwd");
    /* the category-only table wins over the class category */
    e = tl_perf_op_find(overridden);
    CHECK(e && streq(e->category, "GroupQuant") && streq(e->sheet, "GroupQuant") &&
          streq(e->class_name, "aiter_fused_dynamic_mxfp4_quant_moe_sort_hip"));
    CHECK_STR(tl_op_registry_category(overridden), "MoE_aux");

    size_t n = 0;
    const tl_category_only_entry *c = tl_category_only_table(&n);
    CHECK_I64(n, 48);
    for (size_t i = 0; i < n; i++) {
        CHECK_STR(tl_op_registry_category(c[i].name), c[i].category);
        /* category-only names have no model (except the overridden one) */
        if (strcmp(c[i].name, overridden)) CHECK(tl_perf_op_find(c[i].name) == NULL);
    }
    for (size_t i = 0; i < sizeof category_only_sample / sizeof *category_only_sample; i++) {
        CHECK_STR(tl_op_registry_category(category_only_sample[i][0]), category_only_sample[i][1]);
        CHECK(tl_perf_lookup(category_only_sample[i][0]) == NULL);
    }
}

static void test_triton(void)
{
    CHECK(tl_perf_is_triton_name("triton_poi_fused__unsafe_view_add_3"));
    CHECK(tl_perf_is_triton_name("triton_red_fused_sum_0"));
    CHECK(tl_perf_is_triton_name("triton_per_fused_native_layer_norm_1"));
    CHECK(!tl_perf_is_triton_name("triton_tem_fused_mm_0"));
    CHECK(!tl_perf_is_triton_name("triton_for_fused_0"));
    CHECK(!tl_perf_is_triton_name("triton_spl_fused_0"));
    CHECK(!tl_perf_is_triton_name("triton_0"));
    CHECK(!tl_perf_is_triton_name("triton_poi"));
    CHECK(!tl_perf_is_triton_name("Triton_poi_x"));
    CHECK(!tl_perf_is_triton_name(NULL));
    /* not in the exact table; the pattern picks the Triton class (NULL
     * until it is defined) */
    CHECK(tl_perf_op_find("triton_poi_fused_add_0") == NULL);
    CHECK(tl_perf_lookup("triton_tem_fused_mm_0") == NULL);
    const tl_perf_class *tc = tl_perf_lookup("triton_poi_fused_add_0");
    CHECK(tl_perf_lookup("triton_red_fused_sum_0") == tc);
    CHECK(tl_perf_lookup("triton_per_fused_sum_0") == tc);
    if (tc) CHECK_STR(tc->name, "TritonCompiledPerfModel");
    CHECK(tl_op_registry_category("triton_poi_fused_add_0") == NULL);
}

static void test_categorize(void)
{
    /* rule 1 */
    CHECK_STR(tl_categorize_op("aten::mm", "void at::native::elementwise_kernel<...>"), "GEMM");
    CHECK_STR(tl_categorize_op("aten::_efficient_attention_forward", NULL), "SDPA_fwd");
    /* rule 2: prefix matches, after the registry */
    CHECK_STR(tl_categorize_op("triton_poi_fused_add_0", NULL), "triton");
    CHECK_STR(tl_categorize_op("triton_tem_fused_mm_0", "void at::native::reduce_kernel"), "triton");
    CHECK_STR(tl_categorize_op("triton", NULL), "triton");
    CHECK_STR(tl_categorize_op("record_param_comms", NULL), "record_param_comms");
    CHECK_STR(tl_categorize_op("record_param_comms_x", NULL), "record_param_comms");
    CHECK_STR(tl_categorize_op("my_triton_op", NULL), "other");
    CHECK_STR(tl_categorize_op("Triton_x", NULL), "other");
    /* rule 3: the first kernel */
    CHECK_STR(tl_categorize_op("aten::cat",
                               "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<...>>"),
              "elementwise");
    CHECK_STR(tl_categorize_op("aten::linalg_vector_norm",
                               "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>"),
              "reduce");
    CHECK_STR(tl_categorize_op("aten::_foreach_add_",
                               "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<...>"),
              "multi_tensor_apply");
    /* elementwise wins over reduce when both occur */
    CHECK_STR(tl_categorize_op("x", "void at::native::vectorized_elementwise_kernel<reduce>"), "elementwise");
    CHECK_STR(tl_categorize_op("x", "void at::native::unrolled_reduce_then_multi_tensor_apply"), "reduce");
    /* not at::native, or no match */
    CHECK_STR(tl_categorize_op("aten::index_select",
                               "void at::native::(anonymous namespace)::indexSelectLargeIndex<...>"),
              "other");
    CHECK_STR(tl_categorize_op("aten::cat", "void at::native_x::elementwise"), "elementwise");
    CHECK_STR(tl_categorize_op("aten::cat", " void at::native::elementwise_kernel"), "other");
    CHECK_STR(tl_categorize_op("aten::cat", "at::native::elementwise_kernel"), "other");
    CHECK_STR(tl_categorize_op("aten::cat", "void at::native::Elementwise"), "other");
    CHECK_STR(tl_categorize_op("aten::cat", "void cutlass::elementwise_reduce"), "other");
    CHECK_STR(tl_categorize_op("aten::cat", NULL), "other");
    CHECK_STR(tl_categorize_op("aten::cat", ""), "other");
    /* perf-report §6: not registered; its kernel is pytorch_flash:: */
    CHECK_STR(tl_categorize_op("aten::_flash_attention_forward",
                               "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>"),
              "other");
    CHECK_STR(tl_categorize_op("aten::_flash_attention_forward", NULL), "other");
    CHECK_STR(tl_categorize_op("aten::linear", NULL), "other");
    CHECK_STR(tl_categorize_op(NULL, "void at::native::reduce_kernel"), "reduce");
    CHECK_STR(tl_categorize_op(NULL, NULL), "other");
}

static void test_sheets(void)
{
    static const char *const want[] = {
        "GEMM",          "SDPA",       "CONV",     "InferenceAttention", "BinaryElementwise", "GroupedGEMM",
        "MoE_comm",      "SSM",        "RoPE",     "CrossEntropy",       "UnaryElementwise",  "MoE_fused",
        "MoE_unfused",   "MoE_aux",    "RMSNorm",  "elementwise",        "GroupQuant",        "FusedRoPE",
        "CustomCollective", "mHC",     "Normalization", "Reduce",
    };
    const char *const *s = tl_sheet_families();
    size_t k = 0;
    while (s[k]) k++;
    CHECK_I64(k, sizeof want / sizeof *want);
    for (size_t i = 0; i < k && i < sizeof want / sizeof *want; i++) CHECK_STR(s[i], want[i]);
    /* the order is the first appearance of each sheet in Appendix A order,
     * and every row's sheet is one of the families */
    size_t n = 0;
    const tl_perf_op_entry *t = tl_perf_op_table(&n);
    const char *seen[64];
    size_t n_seen = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < n_seen && strcmp(seen[j], t[i].sheet)) j++;
        if (j == n_seen && n_seen < 64) seen[n_seen++] = t[i].sheet;
    }
    CHECK_I64(n_seen, k);
    for (size_t i = 0; i < n_seen && i < k; i++) CHECK_STR(seen[i], s[i]);
}

/* Every class that is linked in must agree with its Appendix A rows; the
 * classes still missing are printed (not a failure while they are being
 * written). */
static void test_classes(void)
{
    size_t n = 0;
    const tl_perf_op_entry *t = tl_perf_op_table(&n);
    const char *missing[256];
    size_t n_missing = 0, n_classes = 0;
    for (size_t i = 0; i < n; i++) {
        int first = 1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(t[j].class_name, t[i].class_name) == 0) first = 0;
        if (first) n_classes++;
        const tl_perf_class *c = t[i].cls;
        if (!c) {
            if (first && n_missing < 256) missing[n_missing++] = t[i].class_name;
            continue;
        }
        /* rows of one class share one descriptor */
        for (size_t j = 0; j < i; j++)
            if (strcmp(t[j].class_name, t[i].class_name) == 0) CHECK(t[j].cls == c);
        CHECK_STR(c->name, t[i].class_name);
        CHECK_STR(c->category, t[i].category);
        CHECK(streq(c->bwd_category, t[i].bwd_category));
        if (!streq(c->bwd_category, t[i].bwd_category))
            fprintf(stderr, "  %s: bwd_category %s, expected %s\n", c->name,
                    c->bwd_category ? c->bwd_category : "NULL",
                    t[i].bwd_category ? t[i].bwd_category : "NULL");
        CHECK_STR(c->sheet, t[i].sheet);
        CHECK(c->fn != NULL);
    }
    CHECK_I64(n_classes, 139);
    const tl_perf_class *tc = tl_perf_lookup("triton_poi_x");
    if (tc) {
        CHECK_STR(tc->name, "TritonCompiledPerfModel");
        CHECK(tc->fn != NULL);
    }
    printf("model classes linked: %zu of %zu (+ Triton: %s)\n", n_classes - n_missing, n_classes,
           tc ? "yes" : "no");
    if (n_missing) {
        printf("not yet defined (no model):");
        for (size_t i = 0; i < n_missing; i++) printf(" %s", missing[i]);
        printf("\n");
    }
}

int main(void)
{
    test_appendix_a();
    test_samples();
    test_triton();
    test_categorize();
    test_sheets();
    test_classes();
    int failed = tl_test_state.failures;
    printf("%d passed, %d failed\n", tl_test_state.checks - failed, failed);
    return failed ? 1 : 0;
}
