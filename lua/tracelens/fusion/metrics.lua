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

local claimed = setmetatable({}, { __mode = "k" }) -- estimate -> GPU event uids
local join_ints = tl and tl.join_ints -- absent outside tracelens

--- The GPU events each reported estimate claims, in estimate order, as the
--- text of category_data/kernel_fusion_gpu_events.json:
--- {"estimates": [{"operation": ..., "gpu_event_uids": [...]}, ...]}. Written
--- by hand, not through json.encode: the lists are as long as the kernels,
--- and the text must be the same bytes on every run.
function M.gpu_events_file(metrics)
  local parts = {}
  for i, e in ipairs(metrics.impact_estimates or {}) do
    -- integers joined in C (tl.join_ints: "%d", as string.format); a list
    -- with anything else through string.format, as before
    local list = claimed[e] or {}
    local text = join_ints and join_ints(list, ", ")
    if not text then
      local uids = {}
      for k, u in ipairs(list) do uids[k] = string.format("%d", u) end
      text = table.concat(uids, ", ")
    end
    parts[i] = string.format('{"operation": %s, "gpu_event_uids": [%s]}', json.encode(e.operation or json.null),
      text)
  end
  return '{"estimates": [' .. table.concat(parts, ",\n  ") .. ']}\n'
end

-- A candidate the numeric step leaves out, with the reason (a phrase for the
-- user); the analyzer lists them in the findings' Overview.
local function drop(list, c, comparative, reason)
  local kc = comparative and c.kernel_count_trace1 or c.kernel_count
  local t = comparative and c.total_kernel_time_us_trace1 or c.total_kernel_time_us
  list[#list + 1] = json.obj("operation", c.base_name or c.module_name or "Unknown", "module_name", c.module_name,
    "kernel_count", kc, "instance_count", c.instance_count, "base_instance_count", c.base_instance_count,
    "time_ms", t and r(t / 1000, 3), "reason", reason)
end

-- §10 step 3
local function filter_and_dedup(cands, baseline, comparative, dropped)
  local order, kept = {}, {}
  for _, c in ipairs(cands) do
    local kc = comparative and c.kernel_count_trace1 or c.kernel_count or 0
    local t = comparative and c.total_kernel_time_us_trace1 or c.total_kernel_time_us or 0
    if kc > common.MAX_FUSION_KERNEL_COUNT then
      drop(dropped, c, comparative, string.format("%d kernels per instance, more than the %d one fused kernel can "
        .. "replace", kc, common.MAX_FUSION_KERNEL_COUNT))
    elseif baseline > 0 and t < baseline * 10 * common.MIN_IMPACT_SCORE then
      drop(dropped, c, comparative, string.format("under %s%% of end-to-end time", common.MIN_IMPACT_SCORE))
    else
      local sig = table.concat({ py.str(c.instance_count), py.str(kc), py.str(r(t, 1)) }, "\0")
      local prev = kept[sig]
      if prev == nil then
        order[#order + 1] = sig
        kept[sig] = c
      else
        local loser = prev
        if #tostring(c.module_name or "") < #tostring(prev.module_name or "") then kept[sig] = c else loser = c end
        drop(dropped, loser, comparative, "the same kernels as " .. tostring(kept[sig].module_name or "Unknown")
          .. ", reported once")
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
  local not_estimated = json.arr()
  local filtered = filter_and_dedup(cands, baseline, comparative, not_estimated)
  if #filtered == 0 then
    return json.obj("category", "kernel_fusion", "status", "NO_DATA", "candidate_count", 0,
      "impact_estimates", json.arr()), not_estimated
  end
  local estimates = {}
  if baseline <= 0 then
    warn("kernel_fusion: no E2E baseline (gpu_utilization.total_time_ms); no impact estimates")
    for _, c in ipairs(filtered) do
      drop(not_estimated, c, comparative, "no end-to-end GPU time to measure a saving against")
    end
  else
    local maf = ctx.max_achievable_tflops or {}
    local arch = {
      vector_maf = maf.vector_bf16 or maf.matrix_bf16 or 1,
      matrix_maf = maf.matrix_bf16 or 1,
      peak_bw = (ctx.peak_hbm_bw_tbs or 0) * 1e12,
    }
    local lookup = lookups.perf_lookup(ctx.unified)
    for _, c in ipairs(filtered) do
      local e, why
      if comparative then e, why = estimate.estimate_comparative(c, baseline)
      else e, why = estimate.estimate_standalone(c, lookup, arch, baseline) end
      if e then estimates[#estimates + 1] = { estimate = e, candidate = c, time_us = time_of(c) }
      else drop(not_estimated, c, comparative, why or "no estimate") end
    end
  end
  -- [FIX] no GPU event in two estimates: the fusion rules' verdict first
  -- (a candidate they set aside never displaces one they keep), then the
  -- candidate covering more kernel time
  for _, it in ipairs(estimates) do
    local c = it.candidate
    it.set_aside = rules.reject({ base_name = c.base_name, module_name = c.module_name,
      parent_chain = c.parent_chain, kernels = comparative and c.kernels_trace1 or c.kernels,
      has_fused_kernel = c.has_fused_kernel, facts = ctx.kernel_facts }) ~= nil
  end
  local kept, dropped = overlap.resolve(estimates)
  estimates = {}
  for i, it in ipairs(kept) do
    estimates[i] = it.estimate
    -- the GPU events it claims, for `tracelens validate`'s consistency level:
    -- kept beside the estimate (M.gpu_events_file), not in it, so the metrics
    -- and priority_data.json do not grow with the trace
    claimed[it.estimate] = overlap.gpu_events(it.candidate)
  end
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
  return out, not_estimated
end

--- analyze(candidates, ctx) -> the object of kernel_fusion_metrics.json (§10).
--- candidates: the fusion_candidates array (nil: the file is missing -> ERROR);
--- ctx = {baseline_ms = gpu_utilization.total_time_ms, scope = "standalone" |
--- "comparative", platform = "MI300X", peak_hbm_bw_tbs = 5.3,
--- max_achievable_tflops = {matrix_bf16 = ..., vector_bf16 = ..., ...},
--- unified = the unified_perf_summary Table (nil -> ERROR), kernel_facts =
--- tracelens.fusion.kernel_facts of the candidates (optional: Decision 1's
--- stream rule, so that a candidate the rules set aside displaces none)}.
--- The second result lists the candidates left out before estimation or
--- given no estimate, each {operation, module_name, kernel_count,
--- instance_count, time_ms, reason} (not part of the reference's file: the
--- analyzer gets it as `not_estimated`).
function M.analyze(cands, ctx)
  ctx = ctx or {}
  local ok, res, not_estimated = pcall(analyze, cands, ctx)
  if ok then return res, not_estimated or json.arr() end
  return error_metrics(tostring(res)), json.arr()
end

return M
