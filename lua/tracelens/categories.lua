-- tracelens.categories — which analyzer serves a category and the numbers
-- that are particular to it (analysis-layer.md §3.7 CATEGORY_SKILL_MAP, §7).
--
-- Owns: the category -> analyzer map and, per analyzer, the settings the
-- shared machinery (tracelens.analysis) runs with: extra operation fields,
-- the operation classifier, category_specific, and the no-data / error shapes.
local json = require "tracelens.json"
local py = require "tracelens.py"
local analysis = require "tracelens.analysis"

local M = {}

local r2 = function(x) return py.round(x, 2) end
local r3 = function(x) return py.round(x, 3) end

-- manifest category name -> {skill, agent script stem}
local ANALYZERS = {
  cpu_idle = "cpu_idle",
  gemm = "gemm", groupedgemm_fwd = "gemm", groupedgemm_bwd = "gemm",
  moe_fused = "moe", moe_unfused = "moe",
  sdpa_fwd = "sdpa", sdpa_bwd = "sdpa", inferenceattention = "sdpa",
  elementwise = "elementwise", reduce = "reduce", triton = "triton",
  norm = "norm", norm_fwd = "norm", norm_bwd = "norm", rmsnorm = "norm",
  convolution = "convolution", conv_fwd = "convolution", conv_bwd = "convolution",
}
local SKILLS = {
  cpu_idle = "cpu-idle-analyzer", gemm = "gemm-analyzer", moe = "moe-analyzer", sdpa = "sdpa-analyzer",
  elementwise = "elementwise-analyzer", reduce = "reduce-analyzer", triton = "triton-analyzer",
  norm = "norm-analyzer", convolution = "convolution-analyzer", generic = "generic-op-analyzer",
}

--- The agent script stem (agents/<stem>.lua) that analyses a category.
function M.agent(category) return ANALYZERS[category] or "generic" end
--- The reference's skill name of a category (the manifest's "skill").
function M.skill(category) return SKILLS[M.agent(category)] end

--- enhanced_category of an `op category` cell: "other" when empty.
function M.enhanced(op_category)
  if type(op_category) ~= "string" or op_category == "" then return "other" end
  return (op_category:gsub("[ /]", "_"):lower())
end
--- display_name of an `op category` cell.
function M.display(op_category)
  if type(op_category) ~= "string" or op_category == "" then return "Other" end
  return op_category
end

local num = py.num
local function lower(s) return tostring(s or ""):lower() end
local function has_any(s, words)
  for _, w in ipairs(words) do
    if s:find(w, 1, true) then return true end
  end
  return false
end

local function peak_specs(meta, obj)
  local maf = meta.max_achievable_tflops
  obj.peak_maf_tflops = type(maf) == "table" and maf.matrix_bf16 or meta.peak_bf16_maf_tflops or json.null
  obj.peak_hbm_bw_tbs = meta.peak_hbm_bw_tbs or json.null
  return obj
end

local function count_rows(rows, pred)
  local n = 0
  for _, row in ipairs(rows) do
    if pred(row) then n = n + 1 end
  end
  return n
end

local BASE_FIELDS = { "Input Dims", "Input type" }

-- GEMM ------------------------------------------------------------------------
-- (and torch._scaled_mm, PyTorch's scaled FP8 matrix product: the streams capture's `aten::_scaled_mm` was
-- called "regular (not quantized) weights")
local QUANT_MARKERS = { "w8a8", "int8", "fp8", "w4a16", "w4a4", "fp4", "mxfp4", "scaled_mm" }
local function is_quantized(name) return has_any(lower(name), QUANT_MARKERS) end

local gemm = {
  extra_fields = { "Input Dims", "Input type", "has_perf_model" },
  classifier = function(name)
    local q = is_quantized(name)
    return json.obj("is_quantized", q, "gemm_type", q and "quantized" or "regular")
  end,
  category_specific = function(rows, cols, meta)
    return peak_specs(meta, json.obj(
      "quantized_count", count_rows(rows, function(r) return is_quantized(r.name) end),
      "missing_perf_model_count", cols["TFLOPS/s_mean"] and count_rows(rows, function(r)
        return num(r["TFLOPS/s_mean"]) == nil end) or 0))
  end,
}

-- SDPA ------------------------------------------------------------------------
local function is_flash(name) return has_any(lower(name), { "flash", "fmha", "flash_attention", "flashattn" }) end
local function is_paged(name, kd)
  if has_any(lower(name), { "unified_attention", "paged_attention", "vllm" }) then return true end
  return type(kd) == "string" and kd ~= "" and has_any(kd:lower(), { "kernel_paged_attention", "paged_attention_2d" })
end

local breakdown_rx
local function kernel_breakdown(kd)
  local r = { kernels = json.arr(), total = 0, has_paged = false, has_fwd = false, has_reshape = false }
  if type(kd) ~= "string" then return r end
  kd = kd:gsub("np%.float64%(([^()]*)%)", "%1") -- [FIX Q11] unwrap only the numpy wrappers
  breakdown_rx = breakdown_rx or tl.re.compile("'name':\\s*'([^']+)'.*?'mean_duration_us':\\s*([0-9.]+)", "s")
  local total = 0
  for _, m in ipairs(breakdown_rx:findall(kd)) do
    local name, mean = m[1], tonumber(m[2])
    if mean then
      mean = mean + 0.0
      local kind = "other"
      if name:find("reshape_and_cache", 1, true) then
        kind, r.has_reshape = "reshape_cache", true
      elseif name:find("paged_attention", 1, true) then
        kind, r.has_paged = "paged_attention", true
      elseif name:find("fwd_kernel", 1, true) then
        kind, r.has_fwd = "fwd_kernel", true
      end
      r.kernels[#r.kernels + 1] = json.obj("name", name, "mean_us", mean, "kernel_type", kind)
      total = total + mean
    end
  end
  if total > 0 then
    for _, k in ipairs(r.kernels) do k.percent = r2(k.mean_us / total * 100) end
  end
  r.total = r2(total)
  return r
end

local PERF_PARAM_KEYS = { { "B", "batch_size" }, { "N_Q", "n_q" }, { "H_Q", "h_q" }, { "N_KV", "n_kv" },
  { "H_KV", "h_kv" }, { "d_h_qk", "d_h_qk" }, { "d_h_v", "d_h_v" }, { "dropout", "dropout" },
  { "causal", "causal" }, { "flash_impl", "flash_impl" } }

local function workload_type(ratio)
  if ratio > 0.8 then return "prefill_heavy" elseif ratio < 0.2 then return "decode_heavy" end
  return "mixed"
end

local function perf_params(pp)
  local p = { workload_type = "unknown" }
  if type(pp) ~= "string" or pp == "" then return p end
  local d = py.literal(pp)
  if type(d) ~= "table" then return p end
  for _, kv in ipairs(PERF_PARAM_KEYS) do
    local v = d[kv[1]]
    if v ~= nil and not json.is_null(v) then p[kv[2]] = v end
  end
  local ctx, gen = num(d.sum_ctx_tokens) or 0, num(d.sum_gen_tokens) or 0
  p.sum_ctx_tokens, p.sum_gen_tokens = d.sum_ctx_tokens or 0, d.sum_gen_tokens or 0
  if ctx + gen > 0 then
    p.ctx_ratio = r3(ctx / (ctx + gen))
    p.workload_type = workload_type(p.ctx_ratio)
  end
  local hq, hkv = num(p.h_q), num(p.h_kv)
  if hq and hkv and hq ~= 0 and hkv ~= 0 then
    if hkv < hq then
      p.attention_pattern, p.gqa_ratio = "GQA", hq // hkv
    elseif hkv == hq then
      p.attention_pattern = "MHA"
    else
      p.attention_pattern = "unknown"
    end
  end
  return p
end

local function nullable(v) if v == nil then return json.null end return v end

local sdpa = {
  extra_fields = { "Input Dims", "Input type", "has_perf_model", "perf_params", "kernel_details_summary" },
  classifier = function(name, row)
    local kd = row.kernel_details_summary
    local flash, paged = is_flash(name), is_paged(name, kd)
    local c = json.obj("is_flash_attention", flash, "is_paged_attention", paged,
      "has_perf_model", row.has_perf_model == true,
      "attention_type", paged and "paged" or flash and "flash" or "standard")
    local b = kernel_breakdown(kd)
    if paged and type(kd) == "string" and kd ~= "" and #b.kernels > 0 then
      c.kernel_breakdown = json.obj("has_paged_attention_kernel", b.has_paged, "has_fwd_kernel", b.has_fwd,
        "has_reshape_cache", b.has_reshape, "kernels", b.kernels)
    end
    if row.perf_params ~= "" then -- a missing cell is NaN, which the reference treats as truthy [KEEP Q12]
      local p = perf_params(row.perf_params)
      c.workload_profile = json.obj("n_q", nullable(p.n_q), "n_kv", nullable(p.n_kv), "h_q", nullable(p.h_q),
        "h_kv", nullable(p.h_kv), "sum_ctx_tokens", nullable(p.sum_ctx_tokens),
        "sum_gen_tokens", nullable(p.sum_gen_tokens), "ctx_ratio", nullable(p.ctx_ratio),
        "workload_type", p.workload_type, "attention_pattern", nullable(p.attention_pattern),
        "gqa_ratio", nullable(p.gqa_ratio))
    end
    return c
  end,
  category_specific = function(rows, cols, meta)
    local flash, paged, with_model = 0, 0, 0
    local sums, nbreak = { reshape_cache = 0, fwd_kernel = 0, paged_attention = 0 }, 0
    local ctx, gen = 0, 0
    for _, row in ipairs(rows) do
      local kd = row.kernel_details_summary
      if is_flash(row.name) then flash = flash + 1 end
      if is_paged(row.name, kd) then
        paged = paged + 1
        local b = kernel_breakdown(kd)
        if #b.kernels > 0 then
          nbreak = nbreak + 1
          for _, k in ipairs(b.kernels) do
            if sums[k.kernel_type] then sums[k.kernel_type] = sums[k.kernel_type] + (k.percent or 0) end
          end
        end
      end
      if row.has_perf_model == true then with_model = with_model + 1 end
      local p = perf_params(row.perf_params)
      ctx, gen = ctx + (num(p.sum_ctx_tokens) or 0), gen + (num(p.sum_gen_tokens) or 0)
    end
    local cs = json.obj("flash_attention_count", flash, "paged_attention_count", paged,
      "has_perf_model_count", cols.has_perf_model and with_model or 0,
      "flash_attention_detected", flash > 0, "paged_attention_detected", paged > 0)
    peak_specs(meta, cs)
    if nbreak > 0 then
      cs.kernel_breakdown_avg = json.obj("avg_reshape_cache_percent", r2(sums.reshape_cache / nbreak),
        "avg_fwd_kernel_percent", r2(sums.fwd_kernel / nbreak),
        "avg_paged_attention_percent", r2(sums.paged_attention / nbreak))
    end
    if ctx + gen > 0 then
      local ratio = r3(ctx / (ctx + gen))
      cs.workload_profile = json.obj("total_ctx_tokens", ctx, "total_gen_tokens", gen, "ctx_ratio", ratio,
        "profile_type", workload_type(ratio))
    end
    return cs
  end,
}

-- Memory-bound families ---------------------------------------------------------
local elementwise = {
  extra_fields = { "Input Dims", "Input type", "FLOPS/Byte" },
  category_specific = function(_, _, meta) return json.obj("peak_hbm_bw_tbs", meta.peak_hbm_bw_tbs or json.null) end,
}

local norm = {
  extra_fields = BASE_FIELDS,
  category_specific = elementwise.category_specific,
}

local reduce = {
  extra_fields = BASE_FIELDS,
  category_specific = function(rows, _, meta)
    return json.obj("softmax_count", count_rows(rows, function(r) return lower(r.name):find("softmax", 1, true) end),
      "peak_hbm_bw_tbs", meta.peak_hbm_bw_tbs or json.null)
  end,
}

local function kernel_ms(rows, pred)
  local s = 0
  for _, row in ipairs(rows) do
    if pred(row) then s = s + (num(row["Kernel Time (µs)_sum"]) or 0) end
  end
  return s / 1000
end

-- Kernels that convert a tensor between the NCHW and NHWC layouts (cuDNN's
-- nchwToNhwcKernel / nhwcToNchwKernel, MIOpen's batched_transpose_*): the
-- cost of a convolution run in a layout other than its input's.
local LAYOUT_KERNELS = { "nchwtonhwc", "nhwctonchw", "nchw2nhwc", "nhwc2nchw", "batched_transpose" }
local function is_layout_kernel(name) return has_any(name:lower(), LAYOUT_KERNELS) end
M.is_layout_kernel = is_layout_kernel

local convolution = {
  extra_fields = BASE_FIELDS,
  category_specific = function(rows, _, meta)
    local is_transpose = function(r) return lower(r.name):find("transpose", 1, true) ~= nil end
    local n = count_rows(rows, is_transpose)
    local t_ms = n > 0 and kernel_ms(rows, is_transpose) or 0
    local cat_ms = kernel_ms(rows, function() return true end)
    -- [FIX, docs/analyzers.md] the layout conversions inside the
    -- convolutions, which ops named "transpose" do not count
    local layout_us = 0
    for _, row in ipairs(rows) do layout_us = layout_us + analysis.kernel_time_us(row, is_layout_kernel) end
    return peak_specs(meta, json.obj("transpose_count", n, "transpose_time_ms", r3(t_ms),
      "transpose_overhead_percent", cat_ms > 0 and r2(t_ms / cat_ms * 100) or 0,
      "layout_kernel_time_ms", r3(layout_us / 1000),
      "layout_kernel_percent", cat_ms > 0 and r2(layout_us / 1000 / cat_ms * 100) or 0))
  end,
}

local moe = {
  extra_fields = BASE_FIELDS,
  category_specific = function(_, _, meta) return peak_specs(meta, json.obj()) end,
  no_data = function(category, scope)
    return json.obj("category", category, "status", "NO_DATA", "comparison_scope", scope,
      "message", "No MoE operations detected in this trace (" .. category .. " bucket)",
      "total_time_ms", 0, "percent_of_compute", 0, "operation_count", 0,
      "operations", json.arr(), "category_specific", json.obj())
  end,
}

local function triton_kind(name)
  local l = lower(name)
  if l:sub(1, 11) == "triton_poi_" then return "pointwise" end
  if l:sub(1, 11) == "triton_red_" then return "reduction" end
  if l:sub(1, 11) == "triton_per_" then return "persistent" end
  return "other"
end

local triton = {
  extra_fields = BASE_FIELDS,
  classifier = function(name) return json.obj("kernel_type", triton_kind(name)) end,
  category_specific = function(rows, _, meta)
    local n = { pointwise = 0, reduction = 0, persistent = 0, other = 0 }
    for _, row in ipairs(rows) do
      local k = triton_kind(row.name)
      n[k] = n[k] + 1
    end
    return peak_specs(meta, json.obj("pointwise_count", n.pointwise, "reduction_count", n.reduction,
      "persistent_count", n.persistent, "other_count", n.other))
  end,
}

-- Everything else (other_analysis.py) --------------------------------------------
local COMM_WORDS = { "all_reduce", "collective", "ncclkernel", "rccl", "broadcast", "allgather" }
local GRAPH_WORDS = { "graph", "hipgraph", "cudagraph" }
local function sub_category(name)
  local l = lower(name)
  if has_any(l, COMM_WORDS) then return "communication" end
  if has_any(l, GRAPH_WORDS) then return "graph" end
  return "miscellaneous"
end

local generic = {
  extra_fields = BASE_FIELDS,
  classifier = function(name) return json.obj("sub_category", sub_category(name)) end,
  -- only the "other" bucket sets its communication rows aside
  pre_process = function(rows, category)
    if category ~= "other" then return rows, nil end
    local kept, names = {}, json.arr()
    for _, row in ipairs(rows) do
      if sub_category(row.name) == "communication" then names[#names + 1] = row.name else kept[#kept + 1] = row end
    end
    return kept, { count = #names, op_names = names }
  end,
  category_specific = function(rows, _, meta, skipped)
    local graphs = count_rows(rows, function(r) return sub_category(r.name) == "graph" end)
    local cs = peak_specs(meta, json.obj("communication_count", 0, "graph_count", graphs,
      "miscellaneous_count", #rows - graphs))
    if skipped and skipped.count > 0 then
      cs.communication_ops_skipped = json.obj("count", skipped.count, "op_names", skipped.op_names,
        "message", "Communication kernels detected. Use TraceLens's NCCL Analyzer for detailed collective "
          .. "communication analysis (see TraceLens/NcclAnalyser/).")
    end
    return cs
  end,
  error_metrics = function(category, _, what) return json.obj("category", category, "status", "ERROR", "error", what) end,
}

local CONFIGS = { gemm = gemm, sdpa = sdpa, elementwise = elementwise, norm = norm, reduce = reduce,
  convolution = convolution, moe = moe, triton = triton, generic = generic }

--- The analysis settings of a category.
function M.config(category) return CONFIGS[M.agent(category)] or generic end

return M
