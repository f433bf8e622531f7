-- Reduction analyzer (category reduce): agents-and-report.md §3.8, rules in
-- docs/analyzers.md.
--
-- Memory-bound groups: a softmax inside an attention layer is unfused
-- attention, and a reduction inside a normalization layer is part of a
-- norm/reduce/scale chain; both are left to the kernel fusion analysis first.
-- Otherwise the dominant kernel gets memory-access tuning (an isolated sum,
-- mean or max should approach peak bandwidth). Compute-bound reductions are
-- rare: tune wave occupancy.
local json = require "tracelens.json"
local F = require "tracelens.findings"
local say = require "tracelens.prose"

local ctx = ...

local CLASSES = {
  { "softmax", { "softmax" } },
  { "sum", { "sum" } },
  { "mean", { "mean", "avg" } },
  { "max", { "max" } },
  { "min", { "min" } },
}
local ATTENTION_WORDS = { "attention", "attn", "sdpa" }
local NORM_WORDS = { "norm" }

local function class(op) return say.class_of(say.base_name(op.name), CLASSES) or "other" end

local function inside(op, words) return say.class_of(say.context_text(op), { { true, words } }) or false end

local function layer_text(op) return say.layer(op) and say.code(say.layer(op)) or "its layer" end

local function occupancy_tuning(v)
  return { action = "Profile " .. say.target(v) .. " for wave-occupancy tuning.",
    mechanism = "A reduction that is short of work per wave leaves compute units idle at each step of the tree. "
      .. "More waves in flight per unit keep the units busy through the reduction." }
end

local rules = { missing = "No reduce operations found in trace" }

function rules.noun(v)
  local names = say.names(v)
  if #names == 1 then
    -- "`aten::sum` reduction", not "`aten::sum` sum reduction": the class
    -- word only when the name does not say it already
    local c = class(v.lead)
    if c == "other" or say.base_name(names[1]):lower():find(c, 1, true) then return say.code(names[1]) .. " reduction" end
    return say.code(names[1]) .. " " .. c .. " reduction"
  end
  return "reduction"
end

function rules.describe(op) return say.tensors_text(op) end

function rules.identify(v)
  local out = {}
  local softmax = class(v.lead) == "softmax"
  if softmax then out[1] = "Softmax dominates this group." end
  if softmax and inside(v.lead, ATTENTION_WORDS) then
    out[#out + 1] = "It runs inside an attention layer, so it is the softmax of an unfused attention path."
  elseif inside(v.lead, NORM_WORDS) then
    out[#out + 1] = "It runs inside a normalization layer, next to the scale and shift of the norm."
  end
  return out
end

function rules.reasoning(v)
  local c = class(v.lead)
  if v.heuristic or v.comparative or v.bound ~= "memory" then return {} end
  if (c == "sum" or c == "mean" or c == "max" or c == "min") and not inside(v.lead, NORM_WORDS) then
    return { "An isolated " .. c .. " reads each input element once and should approach peak bandwidth, and "
      .. say.code(v.lead.name) .. " reaches " .. F.num(v.lead.efficiency.efficiency_percent) .. "%." }
  end
  return {}
end

function rules.advice(v)
  if v.bound == "compute" then return { occupancy_tuning(v) } end
  local tune = say.remedy.memory_access(v)
  if class(v.lead) == "softmax" and inside(v.lead, ATTENTION_WORDS) then
    return { say.remedy.fuse_in_layer(v, layer_text(v.lead)), tune }
  end
  if inside(v.lead, NORM_WORDS) then return { say.remedy.fuse_in_layer(v, layer_text(v.lead)), tune } end
  return { tune }
end

function rules.notes(v)
  if v.heuristic then return { F.FALLBACK.root_cause } end
  return { "The trace does not show which reduction variant the kernel uses (one block per row, a split across "
    .. "blocks, warp shuffles); a kernel profiler shows it." }
end

function rules.summary(metrics)
  return { "Softmax signatures: " .. F.num((metrics.category_specific or {}).softmax_count) .. "." }
end

local metrics = F.analyze(ctx)
return { metrics = json.encode(metrics), findings = F.render(ctx, metrics, rules) }
