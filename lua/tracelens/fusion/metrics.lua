-- tracelens.fusion.metrics — the object of kernel_fusion_metrics.json
-- (analysis-layer spec §10): step 3 filtering and deduplication of the
-- candidates, the estimator per candidate (tracelens.fusion.estimate) over
-- the perf-model lookup, and the totals, warnings and the high-confidence
-- kernel map; ERROR / NO_DATA objects when there is nothing to estimate.
local json = require "tracelens.json"
local py = require "tracelens.py"
local common = require "tracelens.fusion.common"
local lookups = require "tracelens.fusion.lookup"
local estimate = require "tracelens.fusion.estimate"
local overlap = require "tracelens.fusion.overlap"
local rules = require "tracelens.fusion_rules"

local r, truthy = common.r, common.truthy

local M = {}

-- §10 step 3
local function filter_and_dedup(cands, baseline, comparative)
  local order, kept = {}, {}
  for _, c in ipairs(cands) do
    local kc = comparative and c.kernel_count_trace1 or c.kernel_count or 0
    local t = comparative and c.total_kernel_time_us_trace1 or c.total_kernel_time_us or 0
    if kc <= common.MAX_FUSION_KERNEL_COUNT and not (baseline > 0 and t < baseline * 10 * common.MIN_IMPACT_SCORE) then
      local sig = table.concat({ py.str(c.instance_count), py.str(kc), py.str(r(t, 1)) }, "\0")
      local prev = kept[sig]
      if prev == nil then
        order[#order + 1] = sig
        kept[sig] = c
      elseif #tostring(c.module_name or "") < #tostring(prev.module_name or "") then
        kept[sig] = c
      end
    end
  end
  local out = {}
  for i, sig in ipairs(order) do out[i] = kept[sig] end
  return out
end

local function error_metrics(msg)
  return json.obj("category", "kernel_fusion", "status", "ERROR", "error", msg)
end

local function warn(msg)
  if io and io.stderr then io.stderr:write(msg, "\n") end
end

local function analyze(cands, ctx)
  local comparative = ctx.scope == "comparative"
  local function time_of(c)
    return (comparative and c.total_kernel_time_us_trace1 or c.total_kernel_time_us) or 0
  end
  if cands == nil then return error_metrics("fusion_candidates.json not found - run orchestrator_prepare.py first") end
  if ctx.unified == nil then return error_metrics("unified_perf_summary.csv not found") end
  local baseline = ctx.baseline_ms or 0
  local filtered = filter_and_dedup(cands, baseline, comparative)
  if #filtered == 0 then
    return json.obj("category", "kernel_fusion", "status", "NO_DATA", "candidate_count", 0,
      "impact_estimates", json.arr())
  end
  local estimates = {}
  if baseline <= 0 then
    warn("kernel_fusion: no E2E baseline (gpu_utilization.total_time_ms); no impact estimates")
  else
    local maf = ctx.max_achievable_tflops or {}
    local arch = {
      vector_maf = maf.vector_bf16 or maf.matrix_bf16 or 1,
      matrix_maf = maf.matrix_bf16 or 1,
      peak_bw = (ctx.peak_hbm_bw_tbs or 0) * 1e12,
    }
    local lookup = lookups.perf_lookup(ctx.unified)
    for _, c in ipairs(filtered) do
      local e
      if comparative then e = estimate.estimate_comparative(c, baseline)
      else e = estimate.estimate_standalone(c, lookup, arch, baseline) end
      if e then estimates[#estimates + 1] = { estimate = e, candidate = c, time_us = time_of(c) } end
    end
  end
  -- [FIX] no GPU event in two estimates: the fusion rules' verdict first
  -- (a candidate they set aside never displaces one they keep), then the
  -- candidate covering more kernel time
  for _, it in ipairs(estimates) do
    local c = it.candidate
    it.set_aside = rules.reject({ base_name = c.base_name, module_name = c.module_name,
      parent_chain = c.parent_chain, kernels = comparative and c.kernels_trace1 or c.kernels,
      has_fused_kernel = c.has_fused_kernel }) ~= nil
  end
  local kept, dropped = overlap.resolve(estimates)
  estimates = {}
  for i, it in ipairs(kept) do estimates[i] = it.estimate end
  estimates = common.stable_sort_desc(estimates, function(e) return e.impact_score end)

  -- [FIX] the filtered candidates' kernel time, each GPU event once
  local total_t, total_impact = overlap.union_time_us(filtered, time_of), 0
  local warnings, map = json.arr(), json.obj()
  for _, e in ipairs(estimates) do
    total_impact = total_impact + e.impact_score
    if e.warning then warnings[#warnings + 1] = e.warning end
    if e.confidence == "high" then
      for _, k in ipairs(e.affected_gpu_kernels) do
        if truthy(k) then map[k] = e.operation end
      end
    end
  end
  local out = json.obj(
    "category", "kernel_fusion",
    "status", "OK",
    "total_time_ms", r(total_t / 1000, 3),
    "candidate_count", #filtered,
    "estimated_count", #estimates,
    "total_impact_score", r(total_impact, 2),
    "platform", ctx.platform,
    "peak_hbm_bw_tbs", ctx.peak_hbm_bw_tbs,
    "impact_estimates", estimates)
  if #warnings > 0 then out.warnings = warnings end
  if #dropped > 0 then out.dropped_overlapping = json.arr(dropped) end
  out.high_confidence_kernel_map = map
  return out
end

--- analyze(candidates, ctx) -> the object of kernel_fusion_metrics.json (§10).
--- candidates: the fusion_candidates array (nil: the file is missing -> ERROR);
--- ctx = {baseline_ms = gpu_utilization.total_time_ms, scope = "standalone" |
--- "comparative", platform = "MI300X", peak_hbm_bw_tbs = 5.3,
--- max_achievable_tflops = {matrix_bf16 = ..., vector_bf16 = ..., ...},
--- unified = the unified_perf_summary Table (nil -> ERROR)}.
function M.analyze(cands, ctx)
  ctx = ctx or {}
  local ok, res = pcall(analyze, cands, ctx)
  if ok then return res end
  return error_metrics(tostring(res))
end

return M
