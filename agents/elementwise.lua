-- Elementwise analyzer (category elementwise): agents-and-report.md §3.7,
-- rules in docs/analyzers.md.
--
-- Memory-bound groups (the normal case): tune the memory access of the
-- dominant kernel; when other elementwise ops run in the same model layer the
-- chain is left to the kernel fusion analysis, and an op called more than 1000
-- times is batched upstream. Compute-bound elementwise ops are rare: tune the
-- tiles and check whether the op is really a reduction or a math-heavy body.
local json = require "tracelens.json"
local F = require "tracelens.findings"
local say = require "tracelens.prose"

local ctx = ...

local BASELINE_EXPECTED = 70 -- % of peak bandwidth a simple add/mul/copy/fill should reach
local WEAK_BASELINE = 50
local MANY_CALLS = 1000

-- Member classes by bare op name (exact match).
local CLASSES = {
  { "baseline", { "add", "mul", "copy", "fill" } },
  { "arithmetic", { "sub", "div", "remainder", "fmod", "neg", "abs", "clamp" } },
  { "activation", { "sigmoid", "relu", "gelu", "silu", "swish", "tanh", "mish", "hardswish", "leaky_relu" } },
  { "cast", { "to", "_to_copy", "type_as", "float", "half", "bfloat16" } },
  { "math", { "exp", "log", "pow", "sqrt", "rsqrt", "reciprocal", "erf" } },
  { "comparison", { "where", "masked_fill", "eq", "ne", "gt", "lt", "ge", "le" } },
}
local CLASS_TEXT = { baseline = "baseline", arithmetic = "arithmetic", activation = "activation",
  cast = "cast/convert", math = "math", comparison = "comparison/mask", other = "other" }

local function class(op) return say.class_of(say.base_name(op.name), CLASSES, true) or "other" end

local function efficiency(op) return (op.efficiency or {}).efficiency_percent end

local function weak_baseline(op)
  local e = efficiency(op)
  return class(op) == "baseline" and F.present(e) and e < WEAK_BASELINE
end

-- Another elementwise op in the lead's model layer makes a fusable chain.
local function chain_layer(v)
  if #say.same_layer_ops(v, v.lead) > 0 then return say.layer(v.lead) end
end

local function misclassified_check(v)
  return { action = "Check whether " .. say.code(v.lead.name) .. " is really elementwise, since a compute-bound "
      .. "elementwise op often hides a reduction or a transcendental-heavy body.",
    mechanism = "If it is a reduction or a math-heavy op, that kernel family and its tuning advice apply instead." }
end

local rules = { missing = "No elementwise operations found in trace" }

function rules.noun(v)
  local names = say.names(v)
  if #names == 1 then return say.code(names[1]) .. " " .. CLASS_TEXT[class(v.lead)] .. " op" end
  return "elementwise op"
end

function rules.describe(op) return say.tensors_text(op) end

function rules.identify(v)
  local by_class, order, seen = {}, {}, {}
  for _, r in ipairs(v.rows) do
    local c = class(r.op)
    if not by_class[c] then by_class[c] = {}; order[#order + 1] = c end
    if not seen[r.op.name] then -- several signatures of one op are named once
      seen[r.op.name] = true
      table.insert(by_class[c], say.code(r.op.name))
    end
  end
  local parts = {}
  for _, c in ipairs(order) do parts[#parts + 1] = CLASS_TEXT[c] .. " ops (" .. say.list(by_class[c], 3) .. ")" end
  return { "By class, the members are " .. say.list(parts) .. "." }
end

function rules.reasoning(v)
  local out = {}
  if not v.comparative and weak_baseline(v.lead) then
    out[#out + 1] = "A simple " .. say.base_name(v.lead.name) .. " should move data at more than " .. BASELINE_EXPECTED
      .. "% of peak bandwidth, and " .. say.code(v.lead.name) .. " reaches " .. F.num(efficiency(v.lead)) .. "%."
    for _, op in ipairs(v.metrics.operations or {}) do
      local e = efficiency(op)
      if class(op) ~= "baseline" and F.present(e) and e >= BASELINE_EXPECTED then
        out[#out + 1] = "A more complex op in this trace, " .. say.code(op.name) .. ", reaches " .. F.num(e)
          .. "%, so the gap points at the kernel of the simple op rather than the operation."
        break
      end
    end
  end
  if (v.lead.count or 0) > MANY_CALLS then
    out[#out + 1] = "Cannot separate per-launch overhead from memory stalls — high invocation count is a strong "
      .. "signal of launch-overhead dominance."
  end
  return out
end

function rules.advice(v)
  if v.bound == "compute" then return { say.remedy.tile_tuning(v), misclassified_check(v) } end
  local advice = { say.remedy.memory_access(v) }
  local layer = chain_layer(v)
  if layer then
    advice[2] = say.remedy.fuse_in_layer(v, say.code(layer))
  elseif (v.lead.count or 0) > MANY_CALLS then
    advice[2] = say.remedy.batch_upstream(v)
  end
  return advice
end

function rules.notes(v)
  if v.heuristic then return { F.FALLBACK.root_cause } end
  return {}
end

function rules.summary(metrics)
  local counts, order = {}, {}
  for _, op in ipairs(metrics.operations or {}) do
    local c = class(op)
    if not counts[c] then counts[c] = 0; order[#order + 1] = c end
    counts[c] = counts[c] + 1
  end
  local parts = {}
  for _, c in ipairs(order) do parts[#parts + 1] = CLASS_TEXT[c] .. " " .. counts[c] end
  return { "Signatures by class: " .. table.concat(parts, ", ") .. "." }
end

local metrics = F.analyze(ctx)
return { metrics = json.encode(metrics), findings = F.render(ctx, metrics, rules) }
