-- Normalization analyzer (categories norm, norm_fwd, norm_bwd, rmsnorm):
-- agents-and-report.md §3.11, rules in docs/analyzers.md.
--
-- Memory-bound groups (the normal case): tune the memory access of the
-- dominant kernel; a BatchNorm over 4-D (image) tensors adds the channels-last
-- layout, and a norm sharing its model layer with other norm ops is left to the
-- kernel fusion analysis. Compute-bound norms are rare: tile/occupancy tuning.
local json = require "tracelens.json"
local F = require "tracelens.findings"
local say = require "tracelens.prose"

local ctx = ...

local WEAK_NORM = 20 -- % of peak bandwidth below which the norm kernel itself is the limit

local CLASSES = {
  { "BatchNorm", { "batch_norm", "batchnorm" } },
  { "LayerNorm", { "layer_norm", "layernorm" } },
  { "GroupNorm", { "group_norm", "groupnorm" } },
  { "InstanceNorm", { "instance_norm", "instancenorm" } },
  { "RMSNorm", { "rms_norm", "rmsnorm" } },
}

local function class(op) return say.class_of(op.name, CLASSES) end

-- A BatchNorm over (N, C, H, W) input: the convolutional-network case.
local function image_batchnorm(op)
  local dims = say.input_dims(op)
  return class(op) == "BatchNorm" and type(dims) == "table" and type(dims[1]) == "table" and #dims[1] == 4
end

local rules = { missing = "No normalization operations found in trace" }

function rules.noun(v)
  local c = class(v.lead)
  for _, r in ipairs(v.rows) do
    if class(r.op) ~= c then c = nil end
  end
  return c or "normalization"
end

function rules.describe(op) return say.tensors_text(op) end

function rules.identify(v)
  local c = class(v.lead)
  local out = { "The variant is " .. (c or "a normalization without a recognised name") .. " ("
    .. say.code(v.lead.name) .. ")." }
  if image_batchnorm(v.lead) then out[2] = "It normalizes 4-D image tensors, as in a convolutional network." end
  return out
end

function rules.source_keys() return { "operations[].Input Dims" } end

function rules.reasoning(v)
  local e = (v.lead.efficiency or {}).efficiency_percent
  if v.heuristic or v.comparative or v.bound ~= "memory" or not F.present(e) or e >= WEAK_NORM then return {} end
  return { "A normalization streams its input and output with little arithmetic, so it should reach a good share "
    .. "of peak bandwidth.", "Below " .. WEAK_NORM .. "% of peak, the norm kernel itself is the limit." }
end

function rules.advice(v)
  if v.bound == "compute" then return { say.remedy.tile_tuning(v) } end
  local advice = { say.remedy.memory_access(v) }
  if image_batchnorm(v.lead) then
    advice[2] = say.remedy.channels_last(v)
  elseif #say.same_layer_ops(v, v.lead) > 0 then
    advice[2] = say.remedy.fuse_in_layer(v, say.code(say.layer(v.lead)))
  end
  return advice
end

function rules.notes(v)
  if v.heuristic then return { F.FALLBACK.root_cause } end
  return { "The trace does not show which reduction variant the kernel uses (one block per row, a split across "
    .. "blocks, warp shuffles); a kernel profiler shows it." }
end

local metrics = F.analyze(ctx)
return { metrics = json.encode(metrics), findings = F.render(ctx, metrics, rules) }
