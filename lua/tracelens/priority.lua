-- tracelens.priority — priority_data.json (analysis-layer.md §11.5): every
-- category finding ranked globally, the per-category roll-up that orders the
-- report's Top Operations, and the plot's recommendations.
--
-- Owns: the ranking rules. Input is what the analyzers wrote: the manifest
-- and each category's metrics (decoded), in file-name order.
local json = require "tracelens.json"
local py = require "tracelens.py"
local analysis = require "tracelens.analysis"

local M = {}

M.MAX_RECOMMENDATIONS = 6
local FALLBACK_SHARE = 0.05 -- of computation time, for categories without findings
M.FALLBACK_SHARE = FALLBACK_SHARE

--- Is the finding an estimate without a gap projection (no performance
--- model: ranked by time share), left out of the roll-ups and priorities?
function M.estimated(f) return f.estimate_method == "heuristic" end

local r2 = function(x) return py.round(x, 2) end
local r3 = function(x) return py.round(x, 3) end
local num = py.num

--- build(manifest, metrics_by_file) -> the priority_data object.
--- metrics_by_file = array of {file = "<cat>_metrics.json", metrics = decoded}.
function M.build(manifest, metrics_by_file)
  local util = manifest.gpu_utilization or {}
  local baseline = util.total_time_ms or 0
  local computation_ms = baseline * (util.computation_time_percent or 0) / 100
  local threshold_ms = FALLBACK_SHARE * computation_ms

  table.sort(metrics_by_file, function(a, b) return a.file < b.file end)
  local findings, all_estimates = json.arr(), json.arr()
  for _, m in ipairs(metrics_by_file) do
    local metrics = m.metrics
    if metrics.status ~= "ERROR" and metrics.status ~= "NO_DATA" then
      for _, est in ipairs(metrics.impact_estimates or {}) do all_estimates[#all_estimates + 1] = est end
      for _, f in ipairs(metrics.category_findings or {}) do
        local entry = json.obj()
        for k, v in pairs(f) do
          if k ~= "rank" then entry[k] = v end
        end
        entry.category = metrics.category
        entry.category_rank = f.rank
        findings[#findings + 1] = entry
      end
    end
  end

  -- roll-up of the quantified findings, per category in first-seen order
  local rollups, order, heuristic_cats = {}, {}, {}
  for _, f in ipairs(findings) do
    if not M.estimated(f) then
      local r = rollups[f.category]
      if not r then
        r = { category = f.category, s = 0, lo = 0, hi = 0, n = 0 }
        rollups[f.category] = r
        order[#order + 1] = r
      end
      r.s, r.lo, r.hi = r.s + (num(f.impact_score) or 0), r.lo + (num(f.impact_score_low) or 0),
        r.hi + (num(f.impact_score_high) or 0)
      r.n = r.n + (f.member_count or 0) -- [FIX Q5] findings carry member_count
    else
      heuristic_cats[f.category] = true
    end
  end
  local recs = json.arr()
  for _, r in ipairs(order) do
    recs[#recs + 1] = json.obj("category", r.category, "impact_score", r2(r.s), "impact_score_low", r2(r.lo),
      "impact_score_high", r2(r.hi), "operation_count", r.n, "type", "kernel_tuning")
  end
  recs = analysis.stable_sort_desc(recs, "impact_score")
  local top = json.arr()
  for i = 1, math.min(#recs, M.MAX_RECOMMENDATIONS) do top[i] = recs[i] end

  local entries = {}
  for _, e in ipairs(manifest.categories or {}) do entries[e.name] = e end
  local priorities = json.arr()
  for i, rec in ipairs(top) do
    local e = entries[rec.category]
    priorities[i] = json.obj("rank", i, "category", rec.category, "display_name", e and e.display_name or rec.category,
      "impact_score", rec.impact_score, "impact_score_low", rec.impact_score_low,
      "impact_score_high", rec.impact_score_high, "source", "findings_rollup")
  end
  local fallback = {}
  for _, e in ipairs(manifest.categories or {}) do
    if e.tier == "compute_kernel" and not rollups[e.name] and not heuristic_cats[e.name]
        and (num(e.gpu_kernel_time_ms) or 0) >= threshold_ms then
      fallback[#fallback + 1] = e
    end
  end
  for _, e in ipairs(analysis.stable_sort_desc(fallback, "gpu_kernel_time_ms")) do
    priorities[#priorities + 1] = json.obj("rank", #priorities + 1, "category", e.name, "display_name", e.display_name,
      "impact_score", json.null, "gpu_kernel_time_ms", r3(e.gpu_kernel_time_ms or 0), "source", "manifest_fallback")
  end

  findings = analysis.stable_sort_desc(findings, "impact_score")
  for i, f in ipairs(findings) do f.global_rank = i end
  return json.obj("baseline_ms", baseline, "priorities", priorities, "recommendations", top,
    "findings", findings, "all_estimates", all_estimates)
end

--- The object written when building fails (the reference's catch-all).
function M.empty()
  return json.obj("baseline_ms", 0, "priorities", json.arr(), "recommendations", json.arr(), "findings", json.arr(),
    "all_estimates", json.arr())
end

return M
