-- tracelens.rule — what a user rule needs to join the analysis: pick the
-- operations it is about, and say what to do about them. The numbers
-- (efficiency, impact estimates, the findings that become P-items) come from
-- the same machinery as the built-in analyzers, so a rule's findings are
-- ranked with theirs in priority_data.json and analysis.md.
--
-- A rule script (rules/<name>.lua; docs/rules.md):
--   local rule = require "tracelens.rule"
--   return rule.run(..., {
--     select = function(row) return <boolean> end,   -- rows of unified_perf_summary
--     advice = function(v) return { {action = "...", mechanism = "..."} } end,
--     -- optional, as for the analyzers (tracelens.findings): title, insight,
--     -- identify, reasoning, notes, noun, summary, missing
--   })
local findings = require "tracelens.findings"

local M = {}

--- Runs a rule: ctx is the task argument the orchestrator passes (category =
--- the rule's name, sheets = every report Table, trace, metadata, scope).
function M.run(ctx, spec)
  assert(type(spec) == "table" and type(spec.select) == "function" and type(spec.advice) == "function",
    "a rule needs select(row) and advice(v) functions")
  -- a rule's advice holds for its findings without a performance model too
  spec.advice_unmodeled = spec.advice_unmodeled or spec.advice
  local unified = ctx.sheets and ctx.sheets.unified_perf_summary
  if unified then
    local picked = unified:filter(spec.select)
    if #picked > 0 then ctx.ops = picked end
  end
  if ctx.ops == nil then
    -- nothing selected: an empty, valid findings file
    local metrics = require("tracelens.json").obj("category", ctx.category, "status", "OK",
      "comparison_scope", ctx.scope or "standalone", "total_time_ms", 0, "percent_of_compute", 0,
      "operation_count", 0, "operations", {}, "category_specific", {}, "impact_estimates", {},
      "category_findings", {})
    return { metrics = require("tracelens.json").encode(metrics), findings = findings.render(ctx, metrics, spec) }
  end
  return findings.run(ctx, spec)
end

return M
