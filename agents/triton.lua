-- Triton-kernel analyzer (category triton): agents-and-report.md §3.9, rules
-- in docs/analyzers.md.
--
-- A compiler-generated kernel fuses several ATen ops (named after its prefix:
-- triton_poi_ pointwise, triton_red_ reduction, triton_per_ persistent
-- reduction). Memory-bound groups get memory-access tuning; a fused norm or
-- reduction below 30% of roofline is compared with a dedicated library kernel,
-- and three or more short kernels point at the compiler's fusion strategy.
-- Compute-bound kernels are rare: tile/occupancy tuning.
local json = require "tracelens.json"
local F = require "tracelens.findings"
local say = require "tracelens.prose"

local ctx = ...

local WEAK_FUSED_NORM = 30 -- % of roofline
local SHORT_KERNEL_US, MANY_SHORT = 10, 3

local KIND_TEXT = { pointwise = "pointwise", reduction = "reduction", persistent = "persistent reduction",
  other = "other" }

local function kind(op) return (op.classification or {}).kernel_type or "other" end

-- "add_native_layer_norm_backward" from "triton_red_fused_add_native_layer_norm_backward_20".
local function fused_ops(op)
  local rest = op.name:lower():match("^triton_%a+_fused_(.-)_?%d*$")
  return rest ~= "" and rest or nil
end

local function weak_fused_norm(v)
  local e = (v.lead.efficiency or {}).efficiency_percent
  local norm_like = kind(v.lead) ~= "pointwise" or (fused_ops(v.lead) or ""):find("norm")
  return norm_like and F.present(e) and e < WEAK_FUSED_NORM and not v.comparative
end

local function many_short(v)
  local short = 0
  for _, r in ipairs(v.rows) do
    local us = say.per_call_us(r.op)
    if us and us < SHORT_KERNEL_US then short = short + 1 end
  end
  return short >= MANY_SHORT
end

local function library_kernel(v)
  return { action = "Compare " .. say.target(v) .. " with a dedicated library normalization or reduction kernel on "
      .. "the same shapes.",
    mechanism = "Library normalization and reduction kernels are hand-tuned for these access patterns. When one is "
      .. "faster, calling it for this op removes the gap." }
end

local function compile_strategy(v)
  return { action = "Review the compiler's fusion settings so that the short neighbouring kernels fuse into fewer "
      .. "launches.",
    mechanism = "Each short kernel pays its own launch and writes its result to memory. Broader fusion keeps the "
      .. "intermediates on chip and pays the launch once." }
end

local rules = { missing = "No Triton operations found in trace" }

-- The kind in the noun only when every member has it ("3 Triton pointwise
-- kernel signatures" must not cover a triton_red_ reduction).
function rules.noun(v)
  local k = kind(v.lead)
  for _, r in ipairs(v.rows) do
    if kind(r.op) ~= k then return "Triton kernel" end
  end
  return "Triton " .. KIND_TEXT[k] .. " kernel"
end

function rules.describe(op)
  local ops = fused_ops(op)
  return ops and ("fusing " .. ops) or nil
end

function rules.identify(v)
  local ops = fused_ops(v.lead)
  return { "The dominant kernel is a compiler-generated " .. KIND_TEXT[kind(v.lead)] .. " kernel"
    .. (ops and (" that fuses " .. say.code(ops)) or "") .. "." }
end

function rules.source_keys() return { "operations[].classification.kernel_type" } end

function rules.reasoning(v)
  local out = { "Individual sub-op timings within the fused kernel are not separable from the trace." }
  if many_short(v) then
    out[#out + 1] = "At least " .. MANY_SHORT .. " members run for less than " .. SHORT_KERNEL_US .. " µs per call."
  end
  return out
end

function rules.advice(v)
  if v.bound == "compute" then return { say.remedy.tile_tuning(v) } end
  local advice = { say.remedy.memory_access(v) }
  if weak_fused_norm(v) then
    advice[2] = library_kernel(v)
  elseif many_short(v) then
    advice[2] = compile_strategy(v)
  end
  return advice
end

function rules.notes(v)
  local notes = { "The trace does not show why the compiler split the work into these kernels; "
    .. "torch.compile's fusion log (TORCH_LOGS=\"fusion\") shows its fusion decisions." }
  if v.heuristic then notes[2] = F.FALLBACK.root_cause end
  return notes
end

function rules.summary(metrics)
  local cs = metrics.category_specific or {}
  return { "Kernels by kind: pointwise " .. F.num(cs.pointwise_count) .. ", reduction " .. F.num(cs.reduction_count)
    .. ", persistent reduction " .. F.num(cs.persistent_count) .. ", other " .. F.num(cs.other_count) .. "." }
end

local metrics = F.analyze(ctx)
return { metrics = json.encode(metrics), findings = F.render(ctx, metrics, rules) }
