-- tracelens.classify_kernels — kernel-name classification (analysis-layer
-- spec §4, the reference's classify_kernels.py).
--
-- Owns: the rule table (order matters), the type -> perf category map, and a
-- per-state cache of classified names. classify(name) evaluates every rule as
-- a case-insensitive regex search (tl.re, Python re semantics), takes the
-- highest priority with ties to the earliest rule, and answers
-- ("Unknown", "Others", 0) when nothing matches or the best priority is below
-- MIN_CONFIDENCE (5).
local tl = require "tracelens"

local M = {}

M.MIN_CONFIDENCE = 5

-- { priority, kernel type, regex } in the reference's order (R001..R129)
local RULES = {
  { 20, "RMSNorm", [[Rmsnorm|rmsnorm2d]] }, -- R001
  { 20, "LayerNorm", [[layer_norm|layernorm]] }, -- R002
  { 20, "L2Norm", [[l2norm_fwd|l2norm_kernel]] }, -- R003
  { 20, "RMSNorm (fused triton)", [[rsqrt.*mean.*pow|mean.*mul.*pow.*rsqrt]] }, -- R004
  { 20, "RMSNorm (fused triton)", [[_to_copy_add.*mean.*rsqrt]] }, -- R005
  { 18, "RMSNorm (fused triton)", [[fused__to_copy_abs.*mean.*pow.*rsqrt]] }, -- R006
  { 18, "RMSNorm (fused triton)", [[fused__to_copy_add.*mean.*pow.*rsqrt]] }, -- R007
  { 18, "RMSNorm (fused triton residual)", [[fused_add_copy__mean.*pow]] }, -- R008
  { 18, "RMSNorm (fused triton residual)", [[fused__to_copy_add_copy__mean.*pow]] }, -- R009
  { 20, "RMSNorm (shared expert + norm)", [[fused__to_copy_add_mean_moe_forward_shared.*pow.*rsqrt]] }, -- R010
  { 18, "RMSNorm (fused triton)", [[fused__to_copy_add_mean.*mul.*pow.*rsqrt]] }, -- R011
  { 20, "Attention (AMD unified)", [[attention_[23]d|unified_attention]] }, -- R012
  { 20, "Attention (NVIDIA fmha)", [[fmha[Ss]m\d+|fmhaSm100f]] }, -- R013
  { 20, "Attention (paged)", [[paged_attention|PagedAttention]] }, -- R014
  { 20, "Attention (flash)", [[flash_attn|flash_fwd]] }, -- R015
  { 20, "Attention Reduce", [[reduce_segments]] }, -- R016
  { 20, "KV Cache Store", [[reshape_and_cache_flash|reshape_and_cache]] }, -- R017
  { 20, "Linear Attention (chunk delta)", [[chunk_gated_delta_rule_fwd]] }, -- R018
  { 20, "Linear Attention (chunk fwd)", [[chunk_fwd_kernel_o]] }, -- R019
  { 20, "Linear Attention (chunk kkt)", [[chunk_scaled_dot_kkt]] }, -- R020
  { 20, "Linear Attention (chunk cumsum)", [[chunk_local_cumsum]] }, -- R021
  { 20, "Linear Attention (recurrent delta)", [[fused_recurrent_gated_delta_rule]] }, -- R022
  { 20, "Linear Attention (recompute wu)", [[recompute_w_u_fwd]] }, -- R023
  { 20, "Linear Attention (merge inverse)", [[merge_\d+x\d+_to_\d+x\d+_inverse]] }, -- R024
  { 20, "Causal Conv1D", [[_causal_conv1d_fwd|_causal_conv1d_update]] }, -- R025
  { 20, "GDN Gating", [[fused_gdn_gating]] }, -- R026
  { 25, "MoE GateUp+SwiGLU GEMM", [[swiglu|swiGlu]] }, -- R027
  { 25, "MoE GEMM+SiLU (aiter)", [[fmoe.*g1u1.*silu|fmoe.*silu]] }, -- R028
  { 22, "MoE GEMM (CK)", [[kernel_moe_gemm|MoeGemmBlockScale]] }, -- R029
  { 20, "MoE Finalize", [[finalize.*scatter|_finalize_matmul|finalizeKernel]] }, -- R030
  { 20, "MoE TopK", [[topk_forward]] }, -- R031
  { 20, "MoE TopK Gating", [[topkGatingSoftmax]] }, -- R032
  { 20, "MoE BitMatrix", [[bitmatrix|_sum_bitmatrix]] }, -- R033
  { 20, "MoE Routing Memset", [[combined_routing_memset]] }, -- R034
  { 20, "MoE Routing Compute", [[combined_routing_compute]] }, -- R035
  { 20, "MoE Routing (fused)", [[routingIndicesCluster|routingRenormalize]] }, -- R036
  { 20, "MoE Sorting", [[MoeSorting]] }, -- R037
  { 20, "MoE Pad", [[constant_pad.*moe|moe_forward]] }, -- R038
  { 20, "MoE Quantize", [[quantize_with_block_size]] }, -- R039
  { 18, "Quantize (per-group)", [[per_token_group_quant|dynamic_per_group_scaled_quant]] }, -- R040
  { 20, "Activation (SiLU+Mul)", [[act_and_mul_kernel.*silu_kernel]] }, -- R041
  { 18, "Activation (SiLU+Mul)", [[silu_and_mul|silu_mul|SiluAndMul]] }, -- R042
  { 18, "Activation (DeepSeek fused)", [[activationDeepSeekKernel]] }, -- R043
  { 18, "Activation (SiLU)", [[fused_mul_sigmoid]] }, -- R044
  { 15, "Activation (SiLU)", [[\bsilu\b|swish]] }, -- R045
  { 15, "Activation (GELU)", [[\bgelu\b]] }, -- R046
  { 30, "MemCpy", [[memcpy]] }, -- R047
  { 25, "MoE GEMM", [[swiglu|swiGlu]] }, -- R048
  { 25, "MoE GEMM", [[fmoe.*g1u1.*silu|fmoe.*silu]] }, -- R049
  { 22, "MoE GEMM", [[kernel_moe_gemm|MoeGemmBlockScale]] }, -- R050
  { 20, "MoE Finalize", [[finalize.*scatter|_finalize_matmul|finalizeKernel]] }, -- R051
  { 20, "MoE Routing", [[topk_forward]] }, -- R052
  { 20, "MoE Routing", [[topkGatingSoftmax]] }, -- R053
  { 20, "MoE Routing", [[bitmatrix|_sum_bitmatrix]] }, -- R054
  { 20, "MoE Routing", [[combined_routing_memset]] }, -- R055
  { 20, "MoE Routing", [[combined_routing_compute]] }, -- R056
  { 20, "MoE Routing", [[routingIndicesCluster|routingRenormalize]] }, -- R057
  { 20, "MoE Routing", [[MoeSorting]] }, -- R058
  { 20, "MoE Routing", [[constant_pad.*moe|moe_forward]] }, -- R059
  { 20, "MoE Quantize", [[quantize_with_block_size]] }, -- R060
  { 20, "Normalization", [[Rmsnorm|rmsnorm2d]] }, -- R061
  { 20, "Normalization", [[layer_norm|layernorm]] }, -- R062
  { 20, "Normalization", [[l2norm_fwd|l2norm_kernel]] }, -- R063
  { 20, "Normalization", [[rsqrt.*mean.*pow|mean.*mul.*pow.*rsqrt]] }, -- R064
  { 20, "Normalization", [[_to_copy_add.*mean.*rsqrt]] }, -- R065
  { 18, "Normalization", [[fused__to_copy_abs.*mean.*pow.*rsqrt]] }, -- R066
  { 18, "Normalization", [[fused__to_copy_add.*mean.*pow.*rsqrt]] }, -- R067
  { 18, "Normalization", [[fused_add_copy__mean.*pow]] }, -- R068
  { 18, "Normalization", [[fused__to_copy_add_copy__mean.*pow]] }, -- R069
  { 20, "Normalization", [[fused__to_copy_add_mean_moe_forward_shared.*pow.*rsqrt]] }, -- R070
  { 18, "Normalization", [[fused__to_copy_add_mean.*mul.*pow.*rsqrt]] }, -- R071
  { 20, "Attention", [[attention_[23]d|unified_attention]] }, -- R072
  { 20, "Attention", [[fmha[Ss]m\d+|fmhaSm100f]] }, -- R073
  { 20, "Attention", [[paged_attention|PagedAttention]] }, -- R074
  { 20, "Attention", [[flash_attn|flash_fwd]] }, -- R075
  { 20, "Attention", [[reduce_segments]] }, -- R076
  { 20, "KV Cache Store", [[reshape_and_cache_flash|reshape_and_cache]] }, -- R077
  { 20, "Linear Attention", [[chunk_gated_delta_rule_fwd]] }, -- R078
  { 20, "Linear Attention", [[chunk_fwd_kernel_o]] }, -- R079
  { 20, "Linear Attention", [[chunk_scaled_dot_kkt]] }, -- R080
  { 20, "Linear Attention", [[chunk_local_cumsum]] }, -- R081
  { 20, "Linear Attention", [[fused_recurrent_gated_delta_rule]] }, -- R082
  { 20, "Linear Attention", [[recompute_w_u_fwd]] }, -- R083
  { 20, "Linear Attention", [[merge_\d+x\d+_to_\d+x\d+_inverse]] }, -- R084
  { 20, "Linear Attention", [[_causal_conv1d_fwd|_causal_conv1d_update]] }, -- R085
  { 20, "GDN Gating", [[fused_gdn_gating]] }, -- R086
  { 18, "Rotary Embedding", [[rotary|rope]] }, -- R087
  { 18, "Activation (DeepSeek fused)", [[activationDeepSeekKernel]] }, -- R088
  { 20, "Elementwise", [[act_and_mul_kernel.*silu_kernel]] }, -- R089
  { 20, "Elementwise", [[embedding]] }, -- R090
  { 20, "Elementwise", [[gather_kernel|vectorized_gather]] }, -- R091
  { 18, "Quantization", [[per_token_group_quant|dynamic_per_group_scaled_quant]] }, -- R092
  { 18, "Elementwise", [[silu_and_mul|silu_mul|SiluAndMul]] }, -- R093
  { 18, "Elementwise", [[fused_mul_sigmoid]] }, -- R094
  { 15, "Elementwise", [[\bsilu\b|swish]] }, -- R095
  { 15, "Elementwise", [[\bgelu\b]] }, -- R096
  { 15, "GEMM", [[splitKreduce|splitkreduce]] }, -- R097
  { 15, "Elementwise", [[top_k|top_p|sampling|topk_topp]] }, -- R098
  { 15, "Elementwise", [[CUDAFunctorOnSelf_add<int>]] }, -- R099
  { 12, "Elementwise", [[__amd_rocclr_copyBuffer]] }, -- R100
  { 12, "Elementwise", [[memcpy32_post]] }, -- R101
  { 12, "Elementwise", [[copy_page_indices]] }, -- R102
  { 10, "Elementwise", [[vectorized_elementwise_kernel.*FillFunctor]] }, -- R103
  { 10, "Elementwise", [[direct_copy_kernel|_to_copy\b]] }, -- R104
  { 10, "Elementwise", [[CatArrayBatchedCopy]] }, -- R105
  {  8, "Elementwise", [[elementwise.*add|FunctorOnSelf_add]] }, -- R106
  {  8, "Elementwise", [[elementwise.*mul]] }, -- R107
  {  5, "Elementwise", [[elementwise]] }, -- R108
  { 12, "GEMM", [[_matmul_ogs.*mxfp4]] }, -- R109
  { 12, "GEMM", [[_gemm_a16_w16]] }, -- R110
  { 12, "GEMM", [[nvjet_tst]] }, -- R111
  { 12, "GEMM", [[wvSplitK]] }, -- R112
  { 12, "GEMM", [[Cijk_]] }, -- R113
  { 12, "GEMM", [[kernel_gemm_xdl_cshuffle]] }, -- R114
  { 10, "GEMM", [[_gemm_a\d+w\d+]] }, -- R115
  { 10, "GEMM", [[bmm_MxE4m3.*MxE2m1]] }, -- R116
  { 10, "GEMM", [[bmm_Bfloat16.*MxE2m1]] }, -- R117
  { 10, "GEMM", [[cublasLt|cublas]] }, -- R118
  { 10, "GEMM", [[rocm_aiter_gemm_a8w8]] }, -- R119
  {  8, "GEMM", [[triton_poi_fused.*clamp.*div.*rocm_aiter_gemm]] }, -- R120
  {  8, "GEMM", [[triton_per_fused.*abs.*clamp.*div.*max.*rocm_aiter_gemm]] }, -- R121
  {  5, "GEMM", [[gemm|matmul|bmm]] }, -- R122
  {  4, "Quantization", [[quant]] }, -- R123
  {  3, "Elementwise", [[triton_poi_fused]] }, -- R124
  {  3, "Elementwise", [[triton_red_fused]] }, -- R125
  {  3, "Elementwise", [[triton_per_fused]] }, -- R126
  {  1, "Normalization", [[\bnorm\b]] }, -- R127
  {  1, "Elementwise", [[rocprim|hipcub]] }, -- R128
  {  1, "Elementwise", [[cub::DeviceScan|DeviceRadixSort|DeviceReduce]] }, -- R129
}

M.KERNEL_TYPE_TO_PERF_CATEGORY = {
  ["Normalization"] = "Normalization",
  ["Attention"] = "SDPA",
  ["Linear Attention"] = "SDPA",
  ["GDN Gating"] = "SDPA-GDN",
  ["KV Cache Store"] = "Elementwise",
  ["Rotary Embedding"] = "Elementwise",
  ["MoE GEMM"] = "GEMM-MoE",
  ["MoE Routing"] = "Elementwise-MoE",
  ["MoE Finalize"] = "Elementwise-MoE",
  ["MoE Quantize"] = "Elementwise-MoE",
  ["Activation (DeepSeek fused)"] = "Elementwise-MoE",
  ["GEMM"] = "GEMM",
  ["Quantization"] = "Quantization",
  ["Elementwise"] = "Elementwise",
  ["MemCpy"] = "MemCpy",
  ["Unknown"] = "Others",
}

local compiled -- the rules' regexes, compiled on first use (one set per Lua state)

local function regexes()
  if not compiled then
    compiled = {}
    for i, r in ipairs(RULES) do compiled[i] = tl.re.compile(r[3], "i") end
  end
  return compiled
end

local cache, cache_n, CACHE_MAX = {}, 0, 100000

--- classify(name) -> kernel_type, perf_category, confidence
function M.classify(name)
  name = tostring(name or "")
  local hit = cache[name]
  if hit then return hit[1], hit[2], hit[3] end
  local rx = regexes()
  local best_prio, best_type
  for i, r in ipairs(RULES) do
    -- only a strictly higher priority replaces: a tie keeps the earliest rule
    if (best_prio == nil or r[1] > best_prio) and rx[i]:test(name) then
      best_prio, best_type = r[1], r[2]
    end
  end
  local res
  if best_prio == nil or best_prio < M.MIN_CONFIDENCE then
    res = { "Unknown", "Others", 0 }
  else
    res = { best_type, M.KERNEL_TYPE_TO_PERF_CATEGORY[best_type] or "Others", best_prio }
  end
  if cache_n >= CACHE_MAX then cache, cache_n = {}, 0 end
  cache[name] = res
  cache_n = cache_n + 1
  return res[1], res[2], res[3]
end

--- The rule table, for reading: { {priority, type, regex}, ... } in order.
function M.rules() return RULES end

return M
