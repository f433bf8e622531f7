-- tracelens.validate.outputs — Level 2: the warn-only cross-checks over all
-- subagent outputs (analysis-layer.md §12.4, agents-and-report.md §6.2).
-- Three checks, as the code has them [KEEP, Q8]; each is
-- {status = "PASS" | "WARN", messages = {...}}.
local json = require "tracelens.json"
local outdir = require "tracelens.validate.outdir"
local rules = require "tracelens.validate.rules"
local text = require "tracelens.validate.text"

local M = {}

-- The checks in the order the summary prints them.
M.CHECKS = { "time_check", "coverage_check", "priority_check" }

local function result(messages)
  return { status = #messages > 0 and "WARN" or "PASS", messages = messages }
end

local function number_or_zero(v) return type(v) == "number" and v or 0 end

--- time_check: the compute categories' GPU kernel time against the
--- manifest's computation time (WARN beyond 10%).
function M.time_check(manifest)
  local cat_sum = 0
  for _, cat in ipairs(outdir.list(manifest, "categories")) do
    if outdir.field(cat, "tier") == "compute_kernel" then
      cat_sum = cat_sum + number_or_zero(outdir.field(cat, "gpu_kernel_time_ms"))
    end
  end
  local util = outdir.field(manifest, "gpu_utilization")
  local comp = number_or_zero(outdir.field(util, "total_time_ms"))
    * number_or_zero(outdir.field(util, "computation_time_percent")) / 100
  if comp <= 0 then return result({ "No computation time in manifest" }) end
  local discrepancy = math.abs(cat_sum - comp) / comp * 100
  if discrepancy > rules.TIME_DISCREPANCY_THRESHOLD then
    return result({ string.format("Category sum (%.1fms) vs Computation time (%.1fms) = %.1f%% difference",
      cat_sum, comp, discrepancy) })
  end
  return result({})
end

-- The manifest's category names of a tier, in manifest order, once each
-- ([DROP, Q15]: the reference joins them in set order).
local function names_of_tier(manifest, tier)
  local names, seen = {}, {}
  for _, cat in ipairs(outdir.list(manifest, "categories")) do
    local name = outdir.field(cat, "name")
    if outdir.field(cat, "tier") == tier and name ~= nil and not seen[name] then
      seen[name] = true
      names[#names + 1] = name
    end
  end
  return names
end

local function missing_names(out, subdir, expected)
  local found = {}
  for _, f in ipairs(outdir.findings_files(out, subdir)) do found[f.stem] = true end
  local missing = {}
  for _, name in ipairs(expected) do
    if not found[name] then missing[#missing + 1] = text.str(name) end
  end
  return missing
end

--- coverage_check: every system and compute category of the manifest has a
--- findings file (a "Status: ERROR" file counts as present).
function M.coverage_check(out, manifest)
  local messages = {}
  local sys = missing_names(out, "system_findings", names_of_tier(manifest, "system"))
  if #sys > 0 then messages[#messages + 1] = "Missing system findings: " .. table.concat(sys, ", ") end
  local comp = missing_names(out, "category_findings", names_of_tier(manifest, "compute_kernel"))
  if #comp > 0 then messages[#messages + 1] = "Missing compute findings: " .. table.concat(comp, ", ") end
  return result(messages)
end

-- Python `v != n` for a rank read from JSON (True and False are 1 and 0).
local function rank_is(v, n)
  if v == true then v = 1 elseif v == false then v = 0 end
  return v == n
end

local function check_sorted(findings, messages)
  local scored = {}
  for i, f in ipairs(findings) do
    local s = outdir.field(f, "impact_score")
    if type(s) == "number" then scored[#scored + 1] = { i = i - 1, s = s } end
  end
  for k = 1, #scored - 1 do
    local a, b = scored[k], scored[k + 1]
    if a.s < b.s then
      messages[#messages + 1] = string.format("INV1: findings[] not sorted desc by impact_score at index %d->%d (%s < %s)",
        a.i, b.i, text.str(a.s), text.str(b.s))
      return
    end
  end
end

local function check_ranks(list, key, label, messages)
  for i, item in ipairs(list) do
    local v = outdir.field(item, key)
    if not rank_is(v, i) then
      messages[#messages + 1] = string.format("%s[%d].%s=%s expected %d", label, i - 1, key, text.str(v), i)
      return
    end
  end
end

-- INV7': a findings_rollup priority's impact_score is the sum of its
-- category's non-heuristic scored findings (within 0.02).
local function check_rollups(findings, priorities, messages)
  for _, p in ipairs(priorities) do
    if outdir.field(p, "source") == "findings_rollup" then
      local cat = outdir.field(p, "category")
      local expected = 0
      for _, f in ipairs(findings) do
        local s = outdir.field(f, "impact_score")
        if outdir.field(f, "category") == cat and type(s) == "number"
          and outdir.field(f, "estimate_method") ~= "heuristic" then
          expected = expected + s
        end
      end
      local actual = number_or_zero(outdir.field(p, "impact_score"))
      if math.abs(actual - expected) > rules.ROLLUP_IMPACT_TOL then
        messages[#messages + 1] = string.format(
          "INV7': priorities[category=%s].impact_score=%.4f != sum(findings[].impact_score)=%.4f",
          text.str(cat), actual, expected)
      end
    end
  end
end

--- priority_check on decoded priority_data.json: INV1, INV2, INV3, INV7'.
function M.priority_invariants(pd)
  local findings, priorities = outdir.list(pd, "findings"), outdir.list(pd, "priorities")
  local messages = {}
  check_sorted(findings, messages)
  check_ranks(findings, "global_rank", "INV2: findings", messages)
  check_ranks(priorities, "rank", "INV3: priorities", messages)
  check_rollups(findings, priorities, messages)
  return result(messages)
end

--- priority_check: out/priority_data.json's invariants.
function M.priority_check(out)
  local path = text.join(out, "priority_data.json")
  if not outdir.kind(path) then return result({ "priority_data.json not found" }) end
  local pd, err = outdir.load_json(path)
  if pd ~= nil and not json.is_obj(pd) then pd, err = nil, "not a JSON object" end
  if pd == nil then return result({ "priority_data.json unreadable: " .. tostring(err) }) end
  return M.priority_invariants(pd)
end

--- validate_subagent_outputs(out) -> {time_check=, coverage_check=,
--- priority_check=}. Raises when the manifest is missing or invalid (as the
--- reference's load_manifest does).
function M.validate(out)
  local path = outdir.manifest_path(out)
  local manifest, err = outdir.load_json(path)
  if manifest == nil then error(path .. ": " .. tostring(err), 0) end
  return {
    time_check = M.time_check(manifest),
    coverage_check = M.coverage_check(out, manifest),
    priority_check = M.priority_check(out),
  }
end

--- The summary the reference prints: the checks between lines of 60 "=".
function M.format(results)
  local bar = string.rep("=", 60)
  local lines = { bar, "VALIDATION SUMMARY", bar }
  for _, name in ipairs(M.CHECKS) do
    local r = results[name]
    lines[#lines + 1] = string.format("  %s: %s", name, r.status)
    for _, msg in ipairs(r.messages or {}) do lines[#lines + 1] = "    " .. msg end
  end
  lines[#lines + 1] = bar
  return table.concat(lines, "\n") .. "\n"
end

return M
