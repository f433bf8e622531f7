-- tracelens.fusion.estimate — the per-candidate impact estimators of
-- kernel_fusion_metrics.json (analysis-layer spec §10): the standalone
-- roofline projection (subgroups split at matrix kernels; an epilogue saves
-- its non-matrix time, a memory-bound group the gap to its roofline time)
-- and the comparative measured gap (trace-1 time minus trace-2 time).
-- Each gives an estimate object, or nil and the reason (a phrase for the
-- user) when the candidate gives none.
local json = require "tracelens.json"
local common = require "tracelens.fusion.common"
local lookups = require "tracelens.fusion.lookup"
local confidence = require "tracelens.fusion.confidence"

local r, truthy, has_any, kname = common.r, common.truthy, common.has_any, common.kname
local shape_aware_lookup = lookups.shape_aware_lookup
local is_matrix, classify_confidence = confidence.is_matrix, confidence.classify_confidence

local M = {}

local NORM_TYPES = { LayerNorm = true, BatchNorm = true, GroupNorm = true, InstanceNorm = true, Norm = true }
local NORM_NAME_PATTERNS = { "batchnorm", "layernorm", "groupnorm", "instancenorm", "miopenbatchnorm", "rmsnorm" }

local function sum_dur(ks)
  local s = 0
  for _, k in ipairs(ks) do s = s + k.dur_us end
  return s
end

local function roofline_savings(group, arch)
  local modeled, unmodeled_us = {}, 0
  for _, k in ipairs(group) do
    if k.has_perf_data then modeled[#modeled + 1] = k else unmodeled_us = unmodeled_us + k.dur_us end
  end
  if #modeled == 0 then return 0 end
  local first, last = modeled[1], modeled[#modeled]
  local din = first.data_in_mb
  if din == nil then din = first.data_moved_mb / 2 end
  local dout = last.data_out_mb
  if dout == nil then dout = last.data_moved_mb / 2 end
  local bytes = (din + dout) * 1e6
  if bytes <= 0 then return 0 end
  local mem_us = bytes / (arch.peak_bw * 1.0) * 1e6
  local mat_gflops, vec_gflops = 0, 0
  for _, k in ipairs(modeled) do
    if truthy(k.gflops) then
      if is_matrix(k) then mat_gflops = mat_gflops + k.gflops else vec_gflops = vec_gflops + k.gflops end
    end
  end
  local mat_us = mat_gflops > 0 and mat_gflops * 1e9 / (arch.matrix_maf * 1e12) * 1e6 or 0
  local vec_us = vec_gflops > 0 and vec_gflops * 1e9 / (arch.vector_maf * 1e12) * 1e6 or 0
  local mx = math.max(mem_us, mat_us, vec_us)
  local fused = mx + (1 - common.OVERLAP_EFFICIENCY) * (mem_us + mat_us + vec_us - mx)
  return math.max(0, sum_dur(group) - fused - unmodeled_us)
end

local function estimate_from_gaps(c, gap_high, time_ms, baseline)
  local gap_low, gap_mid = 0.75 * gap_high, 0.875 * gap_high
  local high = gap_high * time_ms / baseline * 100
  return gap_low * time_ms / baseline * 100, gap_mid * time_ms / baseline * 100, high
end

local function operation_name(c)
  if truthy(c.base_name) then return c.base_name end
  if truthy(c.module_name) then return c.module_name end
  return "Unknown"
end

-- The candidate's kernel time in ms: total_kernel_time_us (every instance,
-- measured), else the first instance's (current, µs) times the instances.
local function measured_ms(c, current)
  local t = tonumber(c.total_kernel_time_us)
  if t and t > 0 then return t / 1000 end
  return current * (c.instance_count or 1) / 1000
end

--- The standalone (roofline projection) estimator; nil when no estimate.
function M.estimate_standalone(c, lookup, arch, baseline)
  local kernels = c.kernels or {}
  if #kernels < 2 then return nil, "fewer than two kernels per instance" end
  if c.has_fused_kernel then return nil, "already runs a fused kernel" end
  local enriched = {}
  for i, k in ipairs(kernels) do
    local name = kname(k)
    local perf = shape_aware_lookup(lookup, name, c.input_dims)
    local dm, gf = perf["Data Moved (MB)"], perf.GFLOPS
    enriched[i] = {
      name = name,
      type = k.type or k.kernel_type or "Unknown",
      dur_us = k.dur_us,
      data_moved_mb = dm ~= nil and dm + 0.0 or nil,
      data_in_mb = k.data_in_mb,
      data_out_mb = k.data_out_mb,
      gflops = gf ~= nil and gf + 0.0 or nil,
      compute_spec = perf["Compute Spec"],
      has_perf_data = dm ~= nil,
    }
  end
  local n, n_modeled, n_matrix = #enriched, 0, 0
  for _, k in ipairs(enriched) do
    if k.has_perf_data then n_modeled = n_modeled + 1 end
    if is_matrix(k) then n_matrix = n_matrix + 1 end
    if k.name:sub(1, 7) == "triton_" then return nil, "already compiler-generated kernels (`triton_` names)" end
  end
  if n_modeled == 0 then return nil, "no kernel has a performance model, so no saving can be projected" end
  if n_matrix == n then return nil, "all kernels are GEMMs or convolutions" end
  if n_matrix > 0 then
    local all_norm = true
    for _, k in ipairs(enriched) do
      if not is_matrix(k) and not (NORM_TYPES[k.type] or has_any(k.name:lower(), NORM_NAME_PATTERNS)) then
        all_norm = false
        break
      end
    end
    if all_norm then return nil, "GEMM followed only by normalization" end
  end
  local min_frac = n < 5 and 0.5 or 0.75
  if n_modeled / n < min_frac then
    return nil, string.format("only %d of %d kernels have a performance model (at least %d%% needed)", n_modeled, n,
      math.floor(min_frac * 100))
  end
  local current = sum_dur(enriched)
  if current <= 0 then return nil, "its kernels take no measured time" end

  -- subgroups: a matrix kernel starts a new one
  local groups, cur = {}, {}
  for _, k in ipairs(enriched) do
    if is_matrix(k) and #cur > 0 then
      groups[#groups + 1] = cur
      cur = {}
    end
    cur[#cur + 1] = k
  end
  if #cur > 0 then groups[#groups + 1] = cur end
  local savings, epilogue = 0, false
  for _, g in ipairs(groups) do
    local nm, other = 0, 0
    for _, k in ipairs(g) do
      if is_matrix(k) then nm = nm + 1 else other = other + k.dur_us end
    end
    if nm > 0 and nm < #g then
      epilogue = true
      savings = savings + other
    elseif nm == 0 then
      savings = savings + roofline_savings(g, arch)
    end
  end

  local gap_high = savings / current
  -- [FIX] the time is the measured kernel time of every instance
  -- (total_kernel_time_us), not the first instance's times the instance
  -- count; the saving is the first instance's share of it
  local time_ms = measured_ms(c, current)
  local saved_ms = gap_high * time_ms
  if saved_ms < common.MIN_SAVINGS_MS then
    return nil, string.format("projected saving %s ms, under the %s ms floor", r(saved_ms, 3), common.MIN_SAVINGS_MS)
  end
  local low, mid, high = estimate_from_gaps(c, gap_high, time_ms, baseline)
  if high < common.MIN_IMPACT_SCORE then
    return nil, string.format("projected saving at most %s%% of end-to-end time (%s ms of the %s ms its kernels "
      .. "take), under the %s%% floor", r(high, 2), r(saved_ms, 3), r(time_ms, 3), common.MIN_IMPACT_SCORE)
  end
  local affected = json.arr()
  for i, k in ipairs(enriched) do affected[i] = k.name end
  local e = json.obj(
    "operation", operation_name(c),
    "category", "kernel_fusion",
    "type", "kernel_fusion",
    "impact_score", r(mid, 2),
    "impact_score_low", r(low, 2),
    "impact_score_high", r(high, 2),
    "estimation", n_modeled == n and "full" or "partial",
    "bound_type", epilogue and "compute" or "memory",
    "time_ms", r(time_ms, 3),
    "instance_count", c.instance_count,
    "kernel_count", n,
    "modeled_kernel_count", n_modeled,
    "confidence", classify_confidence(c, enriched),
    "affected_gpu_kernels", affected,
    "fusion_type", n_matrix > 0 and "matrix_compute" or "memory_bound")
  if n_modeled < n then
    e.warning = string.format("%d of %d kernels lack perf models; savings estimate uses trace time for unmodeled kernels",
      n - n_modeled, n)
  end
  return e
end

--- The comparative (measured gap) estimator; nil when no estimate.
function M.estimate_comparative(c, baseline)
  local t1 = c.kernels_trace1
  if not t1 or #t1 == 0 then return nil, "no trace-1 kernels" end
  local tot1, tot2 = c.total_kernel_time_us_trace1 or 0, c.total_kernel_time_us_trace2 or 0
  local gap = tot1 - tot2
  if gap <= 0 then return nil, "trace 1 is not slower than trace 2 on these kernels" end
  local high_ms = gap / 1000
  if high_ms < common.MIN_SAVINGS_MS then
    return nil, string.format("measured gap %s ms, under the %s ms floor", r(high_ms, 3), common.MIN_SAVINGS_MS)
  end
  local low_ms, mid_ms = 0.75 * high_ms, 0.875 * high_ms
  local high = high_ms / baseline * 100
  if high < common.MIN_IMPACT_SCORE then
    return nil, string.format("measured gap %s%% of end-to-end time, under the %s%% floor", r(high, 2),
      common.MIN_IMPACT_SCORE)
  end
  local kernels, affected, has_matrix = {}, json.arr(), false
  for i, k in ipairs(t1) do
    kernels[i] = { name = k.name, type = k.type }
    affected[i] = k.name
    if is_matrix({ type = k.type }) then has_matrix = true end
  end
  return json.obj(
    "operation", operation_name(c),
    "category", "kernel_fusion",
    "type", "kernel_fusion",
    "impact_score", r(mid_ms / baseline * 100, 2),
    "impact_score_low", r(low_ms / baseline * 100, 2),
    "impact_score_high", r(high, 2),
    "estimation", "measured",
    "bound_type", has_matrix and "compute" or "memory",
    "time_ms", r(tot1 / 1000, 3),
    "instance_count", c.instance_count,
    "kernel_count", #t1,
    "modeled_kernel_count", #t1,
    "delta_kernel_count", c.delta,
    "confidence", classify_confidence(c, kernels),
    "affected_gpu_kernels", affected,
    "fusion_type", has_matrix and "matrix_compute" or "memory_bound")
end

return M
