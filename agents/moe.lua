-- Mixture-of-Experts analyzer (categories moe_fused, moe_unfused):
-- agents-and-report.md §3.10, rules in docs/analyzers.md.
--
-- An unfused multi-stage MoE path (separate stage-1/stage-2 expert GEMMs)
-- switches to a fused MoE kernel. Otherwise compute-bound groups get
-- tile/occupancy tuning and, unless the weights are already FP4, the next
-- narrower matrix type the platform has a peak for; memory-bound groups raise
-- the tokens per expert upstream and tune the expert-weight reads. Byte counts
-- assume uniform routing, which memory-bound findings say.
local json = require "tracelens.json"
local F = require "tracelens.findings"
local say = require "tracelens.prose"

local ctx = ...

local NARROWER = { FP32 = { "BF16", "matrix_bf16" }, FP16 = { "FP8", "matrix_fp8" }, BF16 = { "FP8", "matrix_fp8" },
  FP8 = { "FP4", "matrix_fp4" } }
local STAGE_WORDS = { "gemm1", "gemm2", "stage1", "stage2" }
local UNIFORM = "TB/s, FLOPS/Byte, and efficiency are uniform-routing approximations."

local function multi_stage(v)
  if ctx.category == "moe_unfused" then return true end
  local kernel = tostring(v.lead.kernel_name or ""):lower()
  return say.class_of(kernel, { { true, STAGE_WORDS } }) or false
end

-- Tokens, hidden size and experts from the shapes: the first 2-D input is
-- (tokens, hidden), the first 3-D input is (experts, ...).
local function geometry(op)
  local g = {}
  for _, d in ipairs(say.input_dims(op) or {}) do
    if type(d) == "table" and #d == 2 and not g.tokens then g.tokens, g.hidden = d[1], d[2] end
    if type(d) == "table" and #d == 3 and not g.experts then g.experts = d[1] end
  end
  return g
end

local function more_tokens(v)
  return { action = "Route more tokens to each expert per call by batching more requests upstream.",
    mechanism = "Each expert's weights are read once per call whatever the number of tokens. More tokens per expert "
      .. "reuse every weight read and raise the arithmetic intensity of the expert GEMMs." }
end

local function fused_moe(v)
  return { action = "Switch the multi-stage MoE path of " .. say.code(v.lead.name) .. " to a fused MoE expert kernel.",
    mechanism = "A fused MoE kernel runs routing, both expert GEMMs and the combine in one launch, so the "
      .. "intermediate activations stay on chip instead of going through memory between stages." }
end

local rules = { missing = "No MoE operations found in trace - model does not use Mixture of Experts" }

function rules.noun(v) return multi_stage(v) and "multi-stage MoE" or "fused MoE" end

function rules.describe(op)
  local g, parts = geometry(op), {}
  if g.experts then parts[#parts + 1] = g.experts .. " experts" end
  if g.tokens then parts[#parts + 1] = g.tokens .. " tokens" end
  if g.hidden then parts[#parts + 1] = "hidden size " .. g.hidden end
  return #parts > 0 and table.concat(parts, ", ") or nil
end

function rules.identify(v)
  local out = { multi_stage(v) and "The experts run as separate stages (one GEMM launch per stage)."
    or "The experts run in a fused MoE kernel." }
  if v.bound == "memory" then out[2] = UNIFORM end
  return out
end

function rules.source_keys() return { "operations[].Input Dims", "operations[].efficiency.compute_spec" } end

function rules.reasoning(v)
  local g, out = geometry(v.lead), {}
  if g.experts and g.tokens then
    out[1] = "With " .. g.tokens .. " tokens over " .. g.experts .. " experts, each expert receives few tokens per "
      .. "weight read when tokens are spread evenly."
  end
  out[#out + 1] = "Cannot assess expert load balance from trace data."
  return out
end

function rules.advice(v)
  if multi_stage(v) then return { fused_moe(v) } end
  if v.bound == "memory" then return { more_tokens(v), say.remedy.memory_access(v) } end
  local advice = { say.remedy.tile_tuning(v) }
  local dtype = say.dtype(v)
  local narrower = NARROWER[dtype or ""]
  if not v.comparative and dtype ~= "FP4" and narrower and F.platform_has(ctx, narrower[2]) then
    advice[2] = say.remedy.narrow_precision(v, dtype, narrower[1])
  end
  return advice
end

function rules.notes(v)
  local notes = { "Cannot assess routing quality from trace data.", "Cannot assess token distribution from trace data." }
  if v.heuristic then notes[#notes + 1] = F.FALLBACK.root_cause end
  return notes
end

local metrics = F.analyze(ctx)
return { metrics = json.encode(metrics), findings = F.render(ctx, metrics, rules) }
