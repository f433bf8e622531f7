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

-- Element sizes of the Input type names a Triton kernel's tensors carry.
local ELEMENT_BYTES = { ["c10::bfloat16"] = 2, ["c10::half"] = 2, ["c10::float"] = 4, ["float"] = 4,
  ["c10::double"] = 8, ["double"] = 8, ["c10::byte"] = 1, ["c10::char"] = 1, ["unsigned char"] = 1,
  ["signed char"] = 1, ["bool"] = 1, ["c10::int"] = 4, ["int"] = 4, ["c10::long"] = 8, ["long int"] = 8 }

-- The kernel's first tensor argument as the Args column shows it
-- ("(16,512,8192) bf16") and its size in MiB (nil when the type is unknown),
-- or nil.
local function first_argument(op)
  local dims, types = say.input_dims(op), say.input_types(op)
  local shape, t = dims and dims[1], types and types[1]
  local text = tostring(op.args or ""):match("^(.-)<br>") or tostring(op.args or "")
  if type(shape) ~= "table" or #shape == 0 or text == "" then return nil end
  local bytes = ELEMENT_BYTES[tostring(t):lower()]
  for _, d in ipairs(shape) do
    if not bytes or math.type(d) ~= "integer" then return text end
    bytes = bytes * d
  end
  local mib = bytes / 1048576
  return text, mib == math.floor(mib) and string.format("%d", mib) or F.num(F.round(mib, 2))
end

-- The basis of a Triton kernel's bytes (perf-model §9, the reference's
-- rule, kept for parity): every tensor argument once, plus, for a pointwise
-- kernel, a second write of the first argument as if it were updated in
-- place. The trace does not say which arguments a kernel writes (Inductor
-- passes its in-place buffers first), so the figure can be off either way:
-- a bandwidth above the real one for a pointwise kernel whose first argument
-- is only read, below it for a reduction that updates a buffer in place.
local function bytes_basis(v)
  if #v.rows > 1 then -- a group: the rule for each kind it holds
    local poi, red = false, false
    for _, r in ipairs(v.rows) do
      if kind(r.op) == "pointwise" then poi = true else red = true end
    end
    local out = "The bandwidths count the bytes of every tensor argument once"
      .. (poi and (", plus a second write of the first one for " .. (red and "the pointwise kernels" or "these pointwise "
        .. "kernels") .. ", as if they updated it in place") or "")
      .. "; the trace does not say which arguments a kernel writes, so "
    if poi then out = out .. "a pointwise kernel whose first argument is only read moves fewer bytes than counted" end
    if poi and red then out = out .. ", and " end
    if red then
      out = out .. "a " .. (poi and "reduction" or "kernel") .. " that updates a buffer in place (Inductor passes such "
        .. "buffers first) moves more"
    end
    return out .. "."
  end
  local op = v.lead
  local first, mib = first_argument(op)
  if kind(op) == "pointwise" then
    return "The bandwidth counts the bytes of every tensor argument of " .. say.code(op.name) .. " once plus a "
      .. "second write of the first one" .. (first and (" (" .. first .. ")") or "") .. ", as if the kernel "
      .. "updated it in place; the trace does not say which arguments a kernel writes, so if the first one is only "
      .. "read, the kernel moves fewer bytes than counted and its real bandwidth is lower."
  end
  local here = first and (", here " .. first .. (mib and (", " .. mib .. " MiB") or "")) or ""
  return "The bandwidth counts the bytes of every tensor argument of " .. say.code(op.name) .. " once; the trace "
    .. "does not say which arguments a kernel writes, so if the kernel updates a buffer in place (Inductor passes "
    .. "such a buffer first" .. here .. "), it moves that buffer's bytes once more than counted and its real "
    .. "bandwidth is higher."
end

function rules.reasoning(v)
  local out = { "Individual sub-op timings within the fused kernel are not separable from the trace." }
  if v.bound == "memory" and not v.comparative and not v.heuristic then out[#out + 1] = bytes_basis(v) end
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
