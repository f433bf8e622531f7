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
local py = require "tracelens.py"

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

-- The strides of a contiguous tensor of these dims.
local function contiguous(dims)
  local out, step = {}, 1
  for i = #dims, 1, -1 do
    out[i] = step
    step = step * (tonumber(dims[i]) or 1)
  end
  return out
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if tonumber(a[i]) ~= tonumber(b[i]) then return false end
  end
  return true
end

-- A copy whose two tensors have the same dims, one contiguous and the other
-- strided without broadcasting (a `.contiguous()` after a permute or
-- transpose; Qwen's attention copy_, source strides (572416, 64, 1024, 1)):
-- {dims, strides (the strided one's)}, or nil.
local function layout_copy(op)
  if class(op) ~= "baseline" or not say.base_name(op.name):find("copy") then return nil end
  local dims, strides = F.op_dims_strides(ctx, op)
  if not dims then return nil end
  for i = 1, #dims do
    for j = i + 1, #dims do
      local a, b, sa, sb = dims[i], dims[j], strides[i], strides[j]
      if type(a) == "table" and type(b) == "table" and #a >= 2 and same(a, b) and type(sa) == "table"
        and type(sb) == "table" and #sa == #a and #sb == #b then
        local c = contiguous(a)
        local ca, cb = same(sa, c), same(sb, c)
        if ca ~= cb then
          local other = ca and sb or sa
          local moved = true
          for k = 1, #other do
            if tonumber(other[k]) == 0 then moved = false end -- a broadcast, not a layout
          end
          if moved then return { dims = a, strides = other } end
        end
      end
    end
  end
  return nil
end

local function efficiency(op) return (op.efficiency or {}).efficiency_percent end

local DTYPE_BYTES = { fp64 = 8, fp32 = 4, bf16 = 2, fp16 = 2, fp8 = 1 }
-- A short call (prose SHORT_CALL_US) whose bytes at the peak HBM bandwidth take under this share of it is
-- launch-bound: launch and ramp-up, not memory access, take its time.
local LAUNCH_BOUND_SHARE = 0.1

-- The bytes of an op's tensors: its non-scalar inputs read once and an output as large as the largest of them
-- written once; nil when a shape or an element type is unknown.
local function bytes_moved(op)
  local dims, types = say.input_dims(op), say.input_types(op)
  if not dims or not types then return nil end
  local sum, largest = 0, 0
  for i, d in ipairs(dims) do
    if type(d) ~= "table" then return nil end
    if #d > 0 then
      local n = 1
      for _, x in ipairs(d) do
        if type(x) ~= "number" then return nil end -- a TensorList or an odd entry
        n = n * x
      end
      local size = DTYPE_BYTES[py.torch_dtype(types[i] or "") or py.torch_dtype("c10::" .. tostring(types[i])) or ""]
      if not size then return nil end
      sum, largest = sum + n * size, math.max(largest, n * size)
    end
  end
  if sum <= 0 then return nil end
  return sum + largest
end

-- A launch-bound op (Qwen MI300X vs H100: `aten::add` of one 16×559×1 FP32 tensor, 4.6 µs a call, 71552 bytes
-- that take 0.0135 µs at 5.3 TB/s): {per_call_us, ideal_us, peak_tbs}, or nil.
local function launch_bound(op)
  local per_call = say.per_call_us(op)
  local peak = (op.efficiency or {}).resolved_peak_hbm_bw
  local bytes = bytes_moved(op)
  if not (per_call and per_call < say.SHORT_CALL_US and F.present(peak) and peak > 0 and bytes) then return nil end
  local ideal = bytes / (peak * 1e6) -- bytes / (TB/s) in µs
  if ideal >= LAUNCH_BOUND_SHARE * per_call then return nil end
  return { per_call_us = per_call, ideal_us = ideal, peak_tbs = peak }
end

-- The action for a launch-bound lead (lever: whether a fusion or batching action follows with the lever).
local function fewer_launches(v, lb, lever)
  local ideal = tonumber(F.round(lb.ideal_us, 2))
  return { action = "Do not tune the memory access of " .. say.code(v.lead.name) .. " (" .. say.tensors_text(v.lead)
      .. "): each call lasts " .. F.round(lb.per_call_us, 1) .. " µs, while reading its inputs and writing its "
      .. "output at the " .. F.num(lb.peak_tbs) .. " TB/s peak takes " .. (ideal > 0 and ("about " .. F.num(ideal))
      or "under 0.01") .. " µs, so launch and ramp-up take nearly all of its time and only fewer launches shorten it."
      .. (lever and "" or " Fuse it into a neighbouring kernel or batch its calls."),
    mechanism = "A kernel this small moves its bytes in a fraction of its launch and ramp-up time, so no access "
      .. "pattern shortens it; only fewer launches recover that time." }
end

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
  local lc = layout_copy(v.lead)
  if lc then
    local st = {}
    for i, x in ipairs(lc.strides) do st[i] = tostring(math.tointeger(tonumber(x)) or x) end
    out[#out + 1] = say.code(v.lead.name) .. " copies between a contiguous " .. say.shape_text(lc.dims)
      .. " tensor and a strided one (strides (" .. table.concat(st, ", ") .. ")): a layout change, the "
      .. "`.contiguous()` of a permuted or transposed view, whose strided side reaches less bandwidth than a plain "
      .. "copy, so a plain op's efficiency is no yardstick for it."
  elseif not v.comparative and weak_baseline(v.lead) then
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

local function avoid_layout_change(v)
  return { action = "Avoid the layout change of " .. say.code(v.lead.name) .. ": let its consumer read the permuted "
      .. "view, or produce the tensor in the layout it is read in, instead of copying it into a contiguous one.",
    mechanism = "A copy that only reorders dimensions moves every byte twice for no arithmetic; without it the "
      .. "consumer reads the data once, in whatever order its kernel supports." }
end

function rules.advice(v)
  if v.bound == "compute" then return { say.remedy.tile_tuning(v), misclassified_check(v) } end
  local layer = chain_layer(v)
  local lb = not layout_copy(v.lead) and launch_bound(v.lead)
  local advice = { layout_copy(v.lead) and avoid_layout_change(v)
    or (lb and fewer_launches(v, lb, layer or (v.lead.count or 0) > MANY_CALLS)) or say.remedy.memory_access(v) }
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
