-- tracelens.prose — the sentences every compute-tier analyzer shares: card
-- title, Insight, the flagging reason, backend and model-layer sentences, the
-- `(source: ...)` parenthetical, the measured facts behind Reasoning, the
-- summary bullets, and the remedies an Action is built from (each with the
-- mechanism its Resolution explains).
--
-- `v` is the view of one category_findings entry (tracelens.findings): v.rows
-- (members joined to operations), v.lead (the operation of the member with the
-- largest impact), v.bound, v.bucket, v.library, v.heuristic, v.comparative,
-- v.noun. Wording rules are in docs/analyzers.md. Names from the trace go
-- into code spans (code = tracelens.md's code span, safe for any name) or
-- through md.text.
local F = require "tracelens.findings"
local json = require "tracelens.json"
local kname = require "tracelens.kernel_name"
local graph_replay = require "tracelens.graph_replay"
local md = require "tracelens.md"
local py = require "tracelens.py"

local M = {}

local present = F.present

-- A finite number: not NaN, not ±inf (pandas' missing cell, a 0/0 ratio).
local function finite(x) return type(x) == "number" and x == x and x ~= math.huge and x ~= -math.huge end

--- A metrics number as Python prints it, or — when absent or not finite:
--- no `nan` / `inf` in the text.
local function num(v)
  if type(v) == "number" and not finite(v) then return F.DASH end
  return F.num(v)
end

local code = md.code
M.code = code

local function plural(n, one, many) return n == 1 and one or (many or one .. "s") end
M.plural = plural

--- "a", "a and b", "a, b and c", then "and N more" past `max`.
function M.list(items, max)
  max = max or #items
  local shown = {}
  for i = 1, math.min(#items, max) do shown[i] = items[i] end
  if #items > max then shown[#shown + 1] = (#items - max) .. " more" end
  if #shown <= 1 then return shown[1] or "" end
  return table.concat(shown, ", ", 1, #shown - 1) .. " and " .. shown[#shown]
end

-- Facts of the members -------------------------------------------------------

local function sum(v, get)
  local s, any = 0.0, false
  for _, r in ipairs(v.rows) do
    local x = get(r.op)
    if finite(x) then s, any = s + x, true end
  end
  return any and s or nil
end

--- Total kernel time (ms, 3 dp), E2E share (%, 2 dp), calls, Trace 2 time.
function M.totals(v)
  local t = sum(v, function(op) return op.time_ms end)
  local p = sum(v, function(op) return op.percent_of_total end)
  local t2 = sum(v, function(op) return op.t2_time_ms end)
  local calls = 0
  for _, r in ipairs(v.rows) do calls = calls + (present(r.op.count) and r.op.count or 0) end
  return {
    time = t and F.round(t, 3) or F.DASH, pct = p and F.round(p, 2) or F.DASH, calls = math.tointeger(calls) or calls,
    t1_raw = t, t2_raw = t2, t2 = t2 and F.round(t2, 3) or nil,
  }
end

--- The distinct operation names of the members, in member order.
function M.names(v)
  local seen, out = {}, {}
  for _, r in ipairs(v.rows) do
    if not seen[r.op.name] then seen[r.op.name] = true; out[#out + 1] = r.op.name end
  end
  return out
end

--- "`aten::mm` (M=256, N=512, K=131072)": the op name and, when the analyzer
--- can describe its shapes, that description.
function M.label(v, op)
  local d = v.describe(op)
  return code(op.name) .. (d and (" (" .. d .. ")") or "")
end

--- The subject of the Insight: one op, or "4 `aten::addmm` signatures".
function M.subject(v)
  if #v.rows == 1 then return M.label(v, v.lead), false end
  local names = M.names(v)
  if #names == 1 then return #v.rows .. " " .. code(names[1]) .. " signatures", true end
  local quoted = {}
  for i, n in ipairs(names) do quoted[i] = code(n) end
  return #v.rows .. " " .. v.noun .. " signatures (" .. M.list(quoted, 3) .. ")", true
end

local function efficiencies(v)
  local lo, hi
  for _, r in ipairs(v.rows) do
    local e = (r.op.efficiency or {}).efficiency_percent
    if finite(e) then
      if not lo or e < lo then lo = e end
      if not hi or e > hi then hi = e end
    end
  end
  return lo, hi
end

--- "3.2–4.272" as "3.200–4.272": a range's two ends (number texts) with as
--- many decimals as the more precise one, so the pair reads at one precision.
function M.range(lo_text, hi_text)
  local function decimals(t) return #(t:match("^-?%d+%.(%d+)$") or "") end
  local d = math.max(decimals(lo_text), decimals(hi_text))
  local function pad(t)
    if not t:match("^-?%d+%.?%d*$") then return t end
    local have = decimals(t)
    if have >= d then return t end
    return (have == 0 and t .. "." or t) .. string.rep("0", d - have)
  end
  return pad(lo_text) .. "–" .. pad(hi_text)
end

--- "4.46%" or "3.05–29.60%" over the members.
function M.efficiency_range(v)
  local lo, hi = efficiencies(v)
  if not lo then return nil end
  if lo == hi then return num(lo) .. "%" end
  return M.range(num(lo), num(hi)) .. "%"
end

local UNIT = { compute = "TFLOPS", memory = "TB/s" }

local function peak_of(op, bound)
  local e = op.efficiency or {}
  if bound == "compute" then return e.resolved_peak_maf end
  if bound == "memory" then return e.resolved_peak_hbm_bw end
end

--- Which figure a peak is, from the arch file's kind (ctx.peak_kind): NVIDIA
--- files give datasheet peaks, AMD's MI300X/MI325X files max-achievable
--- (measured) TFLOPS, so a % of peak does not compare across vendors unless
--- it says which. HBM bandwidth is the datasheet figure in every arch file.
--- "" when the kind is not known (an --arch file without one).
function M.peak_kind(ctx, bound)
  local kind = type(ctx) == "table" and ctx.peak_kind or nil
  if kind == nil then return "" end
  if bound == "memory" then return " datasheet" end
  if kind == "max_achievable" then return " max-achievable" end
  if kind == "datasheet_peak" then return " datasheet" end
  return ""
end

--- "the 708 TFLOPS max-achievable peak" when every member shares it, else
--- "their roofline".
function M.peak_phrase(v)
  local peak = peak_of(v.lead, v.bound)
  for _, r in ipairs(v.rows) do
    if peak_of(r.op, v.bound) ~= peak then peak = nil end
  end
  if present(peak) then return "the " .. num(peak) .. " " .. UNIT[v.bound] .. M.peak_kind(v.ctx, v.bound) .. " peak" end
  return #v.rows == 1 and "its roofline" or "their roofline"
end

--- The element type of the members' roofline ("BF16" from `matrix_bf16`), when shared.
function M.dtype(v)
  local spec
  for i, r in ipairs(v.rows) do
    local s = (r.op.efficiency or {}).compute_spec
    if not present(s) or (i > 1 and s ~= spec) then return nil end
    spec = s
  end
  local t = spec and spec:match("_(%w+)$")
  return t and t:upper() or nil
end

--- Trace 1 slower by X% (relative to Trace 2's time), from the rounded times.
function M.slower_pct(t1, t2)
  if not (finite(t1) and finite(t2)) or t2 <= 0 then return nil end
  return F.round((t1 - t2) / t2 * 100, 1)
end

--- The kernel an Action points at: "the `attn_fwd.kd` kernel of `op`" or "the kernels of `op`".
function M.target(v)
  local op, k = v.lead, v.lead.kernel_name
  local s
  -- several members: name the largest (a restrictive appositive, so the
  -- phrase fits mid-sentence without commas)
  local who = #v.rows > 1 and ("the largest-impact member " .. M.label(v, op)) or code(op.name)
  if present(k) and k == op.name then
    s = #v.rows > 1 and ("the kernel of the largest-impact member " .. M.label(v, op)) or ("the " .. code(k) .. " kernel")
  elseif present(k) and k ~= "" and not k:find("<br>", 1, true) and #k <= 60 then
    s = "the " .. code(k) .. " kernel of " .. who
  else
    s = "the kernels of " .. who
  end
  return s
end

-- Model context -------------------------------------------------------------

--- The innermost `n` model layers of an op ("BertSdpaSelfAttention > Linear"), or nil.
function M.layer(op, n)
  local chain = op.module_chain
  if type(chain) ~= "table" or #chain == 0 then return nil end
  n = n or 2
  local from = math.max(1, #chain - n + 1)
  return table.concat(chain, " > ", from, #chain)
end

--- The frames of an op's call chain above the op itself (kernels excluded).
function M.callers(op)
  local chain, out = op.call_chain, {}
  if type(chain) ~= "table" then return out end
  local last = 0
  for i, frame in ipairs(chain) do
    if frame == op.name then last = i end
  end
  for i = 1, last - 1 do out[#out + 1] = chain[i] end
  return out
end

--- Operations of this category that run in the same model layer as `op`
--- (same full module chain), `op` excluded.
function M.same_layer_ops(v, op)
  local key = type(op.module_chain) == "table" and #op.module_chain > 0 and table.concat(op.module_chain, ">")
  local out = {}
  if not key then return out end
  for _, other in ipairs(v.metrics.operations or {}) do
    if other ~= op and other ~= op.original and type(other.module_chain) == "table" and table.concat(other.module_chain, ">") == key then
      out[#out + 1] = other
    end
  end
  return out
end

--- Lower-cased text of an op's model layers and call chain, for keyword rules.
function M.context_text(op)
  local parts = {}
  for _, list in ipairs({ op.module_chain, op.call_chain }) do
    if type(list) == "table" then
      for _, s in ipairs(list) do parts[#parts + 1] = tostring(s) end
    end
  end
  return table.concat(parts, " "):lower()
end

--- The bare op name, lower-cased: "aten::add_" -> "add", "aten::add.Tensor" -> "add".
function M.base_name(name)
  local base = tostring(name):match("([^:]+)$") or tostring(name)
  base = base:gsub("%..*$", "")
  if base:sub(-1) == "_" and base:sub(1, 1) ~= "_" then base = base:sub(1, -2) end
  return base:lower()
end

--- The label of the first class whose words match `text`: `exact` compares
--- whole words, otherwise a word matches as a substring. classes = {{label, {words}}, ...}.
function M.class_of(text, classes, exact)
  text = tostring(text):lower()
  for _, c in ipairs(classes) do
    for _, w in ipairs(c[2]) do
      if (exact and text == w) or (not exact and text:find(w, 1, true)) then return c[1] end
    end
  end
end

--- The parsed `Input Dims` of an op (a list of shapes), or nil.
function M.input_dims(op)
  local dims = op["Input Dims"]
  if type(dims) ~= "string" then return nil end
  local v = py.literal(dims)
  return type(v) == "table" and v or nil
end

--- The torch type names of `Input type`, or nil.
function M.input_types(op)
  local types = op["Input type"]
  if type(types) ~= "string" then return nil end
  local v = py.literal(types)
  return type(v) == "table" and v or nil
end

--- "BF16" for the first input's torch type, or nil.
function M.input_dtype(op)
  local types = M.input_types(op)
  local first = types and types[1]
  local t = type(first) == "string" and (py.torch_dtype(first) or py.torch_dtype("c10::" .. tostring(first)))
  return t and t:upper() or nil
end

local WORDS = { "one", "two", "three", "four", "five", "six", "seven", "eight", "nine" }

--- "two" for 2 (one to nine in words, then digits).
function M.count_word(n) return WORDS[n] or tostring(n) end

-- A shape is a list of dimensions (numbers); a TensorList input is a list
-- of shapes (`[[8, 1, 768], [8, 3136, 768]]`), nested no deeper in Kineto
-- traces, though any nesting is walked.
local function is_dims(v)
  if type(v) ~= "table" then return false end
  for _, d in ipairs(v) do
    if type(d) == "table" and not json.is_null(d) then return false end
  end
  return true
end

-- Appends the non-empty shapes of one `Input Dims` entry to out: the entry
-- itself, or each tensor of a TensorList.
local function collect_shapes(v, out, depth)
  if type(v) ~= "table" or depth > 8 then return end
  if is_dims(v) then
    if #v > 0 then out[#out + 1] = v end
    return
  end
  for _, x in ipairs(v) do collect_shapes(x, out, depth + 1) end
end

--- "two 8192×8192 BF16 tensors" / "(141,512) and (512,512) BF16 tensors": the
--- non-scalar input shapes of an op, or nil. The tensors of a TensorList
--- input (`aten::cat`, `aten::stack`) count one by one: "8×1×768 and
--- 8×3136×768 tensors".
function M.tensors_text(op)
  local found, shapes, seen, unique = {}, {}, {}, {}
  -- each shape's element type, from its input's `Input type`
  local types, of, mixed, known = M.input_types(op) or {}, {}, false, nil
  for i, d in ipairs(M.input_dims(op) or {}) do
    local n0 = #found
    collect_shapes(d, found, 1)
    local t = type(types[i]) == "string" and (py.torch_dtype(types[i]) or py.torch_dtype("c10::" .. types[i])) or nil
    for k = n0 + 1, #found do
      of[k] = t and t:upper() or nil
      if of[k] and known and of[k] ~= known then mixed = true end -- two element types named
      known = known or of[k]
    end
  end
  for i, d in ipairs(found) do
    local t = M.shape_text(d)
    if mixed and of[i] then t = t .. " " .. of[i] end -- (MoE: BF16 activations beside an FP32 router weight)
    shapes[i] = t
    if not seen[t] then seen[t] = true; unique[#unique + 1] = t end
  end
  if #shapes == 0 then return nil end
  local dtype = not mixed and M.input_dtype(op) or nil
  local kind = (dtype and (dtype .. " ") or "") .. plural(#shapes, "tensor")
  if #unique == 1 then return M.count_word(#shapes) .. " " .. unique[1] .. " " .. kind end
  return M.list(unique, mixed and 6 or 3) .. " " .. kind
end

-- One dimension as text: an integer's digits (an integral float too), a
-- symbolic name as it is; "?" for anything else (NaN, ±inf, None, a bool),
-- so no interpreter value reaches the text.
local function dim_text(d)
  if type(d) == "number" then
    if d ~= d or d == math.huge or d == -math.huge then return "?" end
    local i = math.tointeger(d)
    if i then return string.format("%d", i) end
    return json.number_text(d)
  end
  if type(d) == "string" and d:match("^[%w_]+$") then return d end
  return "?"
end

--- "8192×8192" for a shape list; a list of shapes (a TensorList) gives
--- "8×1×768 and 8×3136×768".
function M.shape_text(shape)
  if type(shape) ~= "table" then return dim_text(shape) end
  if not is_dims(shape) then
    local found, texts = {}, {}
    collect_shapes(shape, found, 1)
    for i, d in ipairs(found) do texts[i] = M.shape_text(d) end
    return #texts > 0 and M.list(texts, 3) or "?"
  end
  local parts = {}
  for i, d in ipairs(shape) do parts[i] = dim_text(d) end
  return table.concat(parts, "×")
end

-- Title, Insight, Identification -------------------------------------------

local BAND = {
  compute = { ["0-30"] = "far below the compute roofline", ["30-60"] = "well below the compute roofline",
    ["60-100"] = "short of the compute roofline" },
  memory = { ["0-30"] = "far below peak memory bandwidth", ["30-60"] = "well below peak memory bandwidth",
    ["60-100"] = "short of peak memory bandwidth" },
  unknown = { ["0-30"] = "far below its roofline", ["30-60"] = "well below its roofline",
    ["60-100"] = "short of its roofline" },
}

local function capital(s) return (s:gsub("^%l", string.upper)) end

--- The bound phrase of a title: "Compute-bound ", "Memory-bound " or "".
function M.bound_prefix(v)
  if v.bound == "compute" or v.bound == "memory" then return capital(v.bound) .. "-bound " end
  return ""
end

--- The subject of a title: bound type, qualifier, element type, category
--- noun ("Compute-bound long-sequence BF16 Flash Attention").
function M.title_subject(v)
  local dtype, prefix = M.dtype(v), M.bound_prefix(v)
  local noun = (#v.rows > 1 and v.noun:sub(-3) == " op") and (v.noun .. "s") or v.noun
  local words = (v.qualifier and (v.qualifier .. " ") or "") .. (dtype and (dtype .. " ") or "") .. noun
  return prefix ~= "" and (prefix .. words) or capital(words)
end

--- Title = bound type + element type + category noun + efficiency band
--- (standalone) or "slower in Trace 1" (comparative); heuristic findings
--- name the op and its time share. The library suffix is added by the caller.
function M.title(v)
  if v.heuristic then
    return code(v.lead.name) .. " takes " .. num(v.finding.percent_of_total) .. "% of GPU time with no "
      .. (F.unmodelled(v) ~= "no_model" and "roofline" or "performance model")
  end
  local what = M.title_subject(v)
  if v.comparative then return what .. " slower in Trace 1 than in Trace 2" end
  local band = (BAND[v.bound] or BAND.unknown)[v.bucket] or "below its roofline"
  return what .. " " .. band
end

--- " no roofline (why)" or " no performance model", after "has" (a heuristic finding).
function M.unmodelled_phrase(v)
  local why, e = F.unmodelled(v)
  if why == "no_arch" then return " no roofline (the GPU's peak figures are unknown)" end
  if why == "no_peak" then
    return " a performance model but no roofline (the arch file has no peak for its compute spec "
      .. code(e.compute_spec) .. ")"
  end
  return " no performance model"
end

--- One-sentence Insight: what is wrong, with the numbers that show it.
function M.insight(v)
  local subject, many = M.subject(v)
  local t = M.totals(v)
  local calls = " over " .. t.calls .. " " .. plural(t.calls, "call")
  local share = t.time .. " ms (" .. t.pct .. "% of end-to-end GPU time)"
  if v.heuristic then
    return subject .. (many and " have" or " has") .. M.unmodelled_phrase(v) .. ", yet "
      .. (many and "take " or "takes ") .. share .. calls .. "."
  end
  if v.comparative then
    local pct = M.slower_pct(t.t1_raw, t.t2_raw)
    if not pct then
      return subject .. (many and " take " or " takes ") .. t.time .. " ms in Trace 1" .. calls
        .. (many and " and run" or " and runs") .. " slower than in Trace 2."
    end
    return subject .. (many and " take " or " takes ") .. t.time .. " ms in Trace 1 against " .. t.t2
      .. " ms in Trace 2" .. calls .. ", so Trace 1 is " .. pct .. "% slower."
  end
  local only = (v.bucket == "0-30" or v.bucket == "30-60") and not v.meets_expectation and "only " or ""
  local reach = (many and "reach " or "reaches ") .. only .. M.efficiency_range(v) .. " of " .. M.peak_phrase(v)
  local bound = (v.bound == "compute" or v.bound == "memory")
    and ((many and " are " or " is ") .. v.bound .. "-bound and ") or " "
  return subject .. bound .. reach .. ", taking " .. share .. calls .. "."
end

local FLAG_BAND = {
  ["0-30"] = "below 30% of", ["30-60"] = "between 30% and 60% of", ["60-100"] = "at 60% or more of, but still short of,",
}

--- The first Identification sentence: why this group was flagged.
function M.flag_reason(v)
  local n = #v.rows
  local count = n == 1 and "one" or tostring(n)
  local what = count .. " " .. v.noun .. " " .. plural(n, "signature")
  if v.heuristic then
    return "This finding covers " .. code(v.lead.name) .. ", which has" .. M.unmodelled_phrase(v) .. ", yet takes "
      .. num(v.finding.percent_of_total) .. "% of end-to-end GPU time, enough to report from its time share alone."
  end
  if v.comparative then
    return "This finding covers " .. what .. " that " .. plural(n, "runs", "run") .. " slower in Trace 1 than in Trace 2."
  end
  local bound = (v.bound == "compute" or v.bound == "memory") and (v.bound .. "-bound ") or ""
  return "This finding covers " .. count .. " " .. bound .. v.noun .. " " .. plural(n, "signature") .. " that "
    .. plural(n, "runs", "run") .. " " .. (FLAG_BAND[v.bucket] or "below") .. " " .. plural(n, "its", "their")
    .. " roofline."
end

-- What the kernels of each library are, in vendor-agnostic words.
local BACKEND = {
  Tensile = "come from the vendor GEMM library", rocBLAS = "come from the vendor BLAS library",
  CK = "come from the vendor kernel-template library", AITER = "come from the vendor operator library",
  MIOpen = "come from the vendor DNN primitives library", rocPRIM = "come from the vendor parallel-primitives library",
  Triton = "are generated by the Triton compiler", FBGEMM = "come from the FBGEMM operator library",
  cuDNN = "come from the vendor DNN primitives library", cuBLAS = "come from the vendor BLAS library",
  CUTLASS = "are instances of the CUTLASS GEMM templates", FlashAttention = "are FlashAttention kernels",
  ["PyTorch Native"] = "are the framework's own native kernels",
  AOTriton = "are AOTriton's precompiled Triton attention kernels (PyTorch's fused attention on ROCm)",
}

--- Which backend runs the kernels.
function M.backend(v)
  local shown = v.kernels_library or v.library
  if not shown then return "No backend library can be identified from the kernel names." end
  local lib = md.text(shown)
  local s = "The kernels " .. (BACKEND[shown] or ("come from the " .. lib .. " library")) .. " (" .. lib .. ")."
  if v.library and v.library ~= shown then
    -- §6.8 names the first marker of any kernel: a fill or copy kernel beside the main one
    s = s .. " The library in the title, " .. md.text(v.library) .. ", is that of a smaller kernel beside them."
  end
  return s
end

--- Which model layers the members run in, else the end of their call chain.
function M.layers(v)
  local seen, layers = {}, {}
  for _, r in ipairs(v.rows) do
    local l = M.layer(r.op)
    if l and not seen[l] then seen[l] = true; layers[#layers + 1] = code(l) end
  end
  if #layers > 0 then
    return (#v.rows == 1 and "It runs" or "They run") .. " in the model " .. plural(#layers, "layer") .. " "
      .. M.list(layers, 3) .. "."
  end
  local callers = M.callers(v.lead)
  if #callers > 0 then
    local tail = {}
    for i = math.max(1, #callers - 1), #callers do tail[#tail + 1] = code(callers[i]) end
    tail[#tail + 1] = code(v.lead.name)
    return "No model layer is recorded. The call chain ends in " .. table.concat(tail, " → ") .. "."
  end
  return "No model layer or calling code is recorded for it in the trace."
end

--- The JSON keys behind the shared Identification sentences.
function M.source_keys(v)
  local keys = { "category_findings[].members[]" }
  if v.heuristic then
    keys[#keys + 1] = "category_findings[].percent_of_total"
  elseif v.comparative then
    keys[#keys + 1] = "operations[].t2_time_ms"
    keys[#keys + 1] = "operations[].difference_ms"
  else
    keys[#keys + 1] = "operations[].efficiency.efficiency_percent"
    keys[#keys + 1] = "operations[].efficiency.bound_type"
  end
  keys[#keys + 1] = "operations[].library"
  keys[#keys + 1] = "operations[].module_chain"
  return keys
end

--- "(source: `gemm_metrics.json` → `a`, `b`)", the keys deduplicated.
function M.source(v, keys)
  local seen, quoted = {}, {}
  for _, k in ipairs(keys) do
    if not seen[k] then seen[k] = true; quoted[#quoted + 1] = code(k) end
  end
  return "(source: " .. code(v.source) .. " → " .. table.concat(quoted, ", ") .. ")"
end

-- Reasoning: what the trace measured ----------------------------------------

local function standalone_facts(v, op)
  local e = op.efficiency or {}
  local out, who = {}, M.label(v, op)
  local intensity = present(e.flops_per_byte) and (" does " .. num(e.flops_per_byte) .. " FLOPS per byte, so it") or ""
  if e.bound_type == "compute" then
    out[1] = who .. intensity .. " is compute-bound."
    local achieved = present(e.tflops_achieved) and (num(e.tflops_achieved) .. " TFLOPS, ") or ""
    out[2] = "It achieves " .. achieved .. num(e.efficiency_percent) .. "% of the " .. num(e.resolved_peak_maf)
      .. " TFLOPS" .. M.peak_kind(v.ctx, "compute") .. " peak."
  elseif e.bound_type == "memory" then
    out[1] = who .. intensity .. " is memory-bound."
    local achieved = present(e.tb_s_achieved) and (num(e.tb_s_achieved) .. " TB/s, ") or ""
    out[2] = "It moves " .. achieved .. num(e.efficiency_percent) .. "% of the " .. num(e.resolved_peak_hbm_bw)
      .. " TB/s" .. M.peak_kind(v.ctx, "memory") .. " peak."
  else
    out[1] = who .. " reaches " .. num(e.efficiency_percent) .. "% of its roofline."
  end
  return out
end

-- An operation compared with Trace 2's own calls of its signature
-- (tracelens.analysis trace2_side): what the Trace 2 figure is, and why not
-- the aligned one.
local function same_signature_fact(op)
  local calls = num(op.count_trace2) .. " " .. plural(op.count_trace2, "call")
  local scaled = op.count_trace2 ~= op.count
    and ("; " .. num(op.t2_time_ms) .. " ms for as many calls as Trace 1's " .. num(op.count)) or ""
  local head = "The Trace 2 time is that of its own calls with the same name and shapes (" .. calls .. ", "
    .. num(op.t2_same_signature_ms) .. " ms" .. scaled .. ")"
  if present(op.t2_aligned_ms) then
    return head .. ": the Trace 2 regions TraceDiff aligns with these calls hold " .. num(op.t2_aligned_ms)
      .. " ms of GPU work, which would make the gap more than twice what it is against Trace 2's own calls."
  end
  return head .. ": TraceDiff aligns these calls with no Trace 2 GPU work."
end

local function comparative_facts(v, op)
  local out = {}
  local pct = M.slower_pct(op.time_ms, op.t2_time_ms)
  if pct then
    out[1] = "In Trace 1, " .. M.label(v, op) .. " takes " .. num(op.time_ms) .. " ms against " .. num(op.t2_time_ms)
      .. " ms in Trace 2, so Trace 1 is " .. pct .. "% slower."
  else
    out[1] = "In Trace 1, " .. M.label(v, op) .. " takes " .. num(op.time_ms) .. " ms and has no matching Trace 2 time."
  end
  if present(op.difference_ms) then
    out[#out + 1] = "The absolute gap is " .. F.round(math.abs(op.difference_ms), 3) .. " ms."
  end
  if op.trace2_basis == "same_signature" then
    out[#out + 1] = same_signature_fact(op)
  -- count_trace2 is TraceDiff's count of aligned regions (the rows' lowest
  -- common ancestors with Trace 2 work), not Trace 2's number of calls
  elseif present(op.count_trace2) and op.count_trace2 ~= op.count then
    out[#out + 1] = "Its " .. num(op.count) .. " " .. (op.count == 1 and "call" or "calls") .. " in Trace 1 align with "
      .. num(op.count_trace2) .. " " .. (op.count_trace2 == 1 and "region" or "regions") .. " of Trace 2 (TraceDiff's "
      .. "lowest common ancestors, the Count column's second figure): the Trace 2 time covers "
      .. (op.count_trace2 == 1 and "that region" or "those regions") .. ", not a call-by-call match."
  end
  local e = op.efficiency or {}
  if present(e.bound_type) then
    local intensity = present(e.flops_per_byte) and (" at " .. num(e.flops_per_byte) .. " FLOPS per byte") or ""
    out[#out + 1] = "In Trace 1 it is " .. e.bound_type .. "-bound" .. intensity .. "."
  end
  return out
end

local function heuristic_facts(v, op)
  local why, e = F.unmodelled(v)
  local first = "No FLOPs or byte count is modelled for " .. M.label(v, op) .. ", so the trace cannot place it on "
    .. "the roofline."
  if why == "no_arch" then
    first = "Without the GPU's peak figures there is no roofline to place " .. M.label(v, op) .. " on."
  elseif why == "no_peak" then
    first = "Its performance model gives " .. num(e.flops_per_byte) .. " FLOPs per byte"
      .. (present(e.tflops_achieved) and present(e.tb_s_achieved) and (" (" .. num(e.tflops_achieved)
        .. " TFLOPS and " .. num(e.tb_s_achieved) .. " TB/s achieved)") or "") .. ", but the arch file has no peak "
      .. "for its compute spec " .. code(e.compute_spec) .. ", so no efficiency is computed for " .. M.label(v, op)
      .. "."
  end
  local out = { first }
  out[2] = "Its weight is its time: " .. num(op.time_ms) .. " ms over " .. num(op.count) .. " "
    .. plural(op.count, "call") .. ", " .. num(op.percent_of_total) .. "% of end-to-end GPU time."
  if (op.efficiency or {}).is_anomaly then
    out[3] = "Its measured efficiency of " .. num(op.efficiency.efficiency_percent)
      .. "% of roofline is implausible: [ANOMALY] - verify measurement."
  end
  return out
end

local SHORT_CALL_US = 10
M.SHORT_CALL_US = SHORT_CALL_US

--- Mean kernel time of one call of `op` in µs, or nil.
function M.per_call_us(op)
  if not (present(op.time_ms) and present(op.count)) or op.count <= 0 then return nil end
  return op.time_ms * 1000 / op.count
end

-- Trace 1 at least this many times Trace 2's time (tracelens.analysis)
local EXTREME_RATIO = require("tracelens.analysis").EXTREME_RATIO

local function extreme_gaps(v)
  local names, others, told = {}, {}, {}
  for i = 1, math.min(#v.rows, 3) do
    local op = v.rows[i].op
    if op.trace2_basis ~= "same_signature" and finite(op.time_ms) and finite(op.t2_time_ms) and op.t2_time_ms > 0
      and op.time_ms >= EXTREME_RATIO * op.t2_time_ms then
      names[#names + 1] = M.label(v, op)
      -- what Trace 2 runs of the same name under other shapes (its whole
      -- trace, once per name)
      local o = op.t2_other_shapes
      if type(o) == "table" and finite(o.time_ms) and o.time_ms > op.t2_time_ms and not told[op.name] then
        told[op.name] = true
        others[#others + 1] = code(op.name) .. " " .. num(o.count) .. " " .. plural(o.count, "time") .. " for "
          .. num(o.time_ms) .. " ms"
      end
    end
  end
  if #names == 0 then return nil end
  local s = "For " .. M.list(names) .. ", Trace 2 takes under a tenth of Trace 1's time: before reading the gap as "
    .. "slower kernels, check that the region of Trace 2 TraceDiff aligned " .. (#names == 1 and "it" or "each")
    .. " with runs the same work (another shape or a partial alignment gives such gaps)."
  if #others > 0 then
    s = s .. " Under other shapes, Trace 2 runs " .. M.list(others) .. "."
  end
  return s
end

-- At or above this share of trace 1's peak bandwidth, tuning an op's memory
-- access cannot close much of a gap to a GPU with more bandwidth.
local NEAR_PEAK = 0.8

-- Comparative, a memory-bound card: trace 2's GPU has more HBM bandwidth
-- (the arch files' figures): the gap is partly the hardware's, and members
-- near trace 1's peak cannot close it by tuning (Qwen H100 against MI300X:
-- 1.58 times; aten::add at 92% of H100's peak). One sentence, or nil.
local function bandwidth_context(v)
  if v.bound ~= "memory" then return nil end
  local ok, a2 = pcall(json.decode, type(v.ctx) == "table" and v.ctx.trace2_arch or "null")
  local bw1 = tonumber(F.metadata(v.ctx).peak_hbm_bw_tbs)
  local bw2 = ok and type(a2) == "table" and tonumber(a2.mem_bw_gbps) and tonumber(a2.mem_bw_gbps) / 1000
  if not bw1 or not bw2 or bw1 <= 0 or bw2 <= bw1 * 1.05 then return nil end
  local near = {}
  for _, r in ipairs(v.rows) do
    local e = r.op.efficiency or {}
    local tbs = tonumber(e.tb_s_achieved)
    if tbs and tbs >= NEAR_PEAK * bw1 then
      near[#near + 1] = string.format("%s at %s TB/s, %.0f%%", M.label(v, r.op), num(tbs), tbs / bw1 * 100)
    end
  end
  local s = string.format("Trace 2's GPU (%s) has %.2f times Trace 1's HBM bandwidth (%.2f against %.2f TB/s, the "
    .. "arch files' figures), so memory-bound work can run up to that much faster there with no change to it",
    md.text(tostring(a2.name or "Trace 2")), bw2 / bw1, bw2, bw1)
  if #near > 0 then
    s = s .. string.format("; %s already %s 80%% or more of Trace 1's peak (%s), where tuning cannot close the gap",
      #near == 1 and "one member" or (#near .. " members"), #near == 1 and "reaches" or "reach",
      table.concat(near, "; ", 1, math.min(#near, 3)) .. (#near > 3 and "; ..." or ""))
  end
  return s .. "."
end

--- The measured facts of the members (up to three, largest impact first), then
--- variance warnings. Comparative prose uses times and gaps, never the
--- trace-2-relative efficiency.
function M.measurements(v)
  local out = {}
  local facts = v.heuristic and heuristic_facts or (v.comparative and comparative_facts or standalone_facts)
  for i = 1, math.min(#v.rows, 3) do
    for _, s in ipairs(facts(v, v.rows[i].op)) do out[#out + 1] = s end
  end
  local extreme = v.comparative and not v.heuristic and extreme_gaps(v)
  if extreme then out[#out + 1] = extreme end
  local hw = v.comparative and not v.heuristic and bandwidth_context(v)
  if hw then out[#out + 1] = hw end
  local per_call = M.per_call_us(v.lead)
  if per_call and per_call < SHORT_CALL_US then
    -- a graph replay's node is not launched on its own: only its ramp-up weighs (graph_decode's kernels)
    local replayed = graph_replay.synthetic(v.lead.name)
    out[#out + 1] = "Each call of " .. code(v.lead.name) .. " lasts " .. F.round(per_call, 1)
      .. " µs on average, short enough that " .. (replayed and "its ramp-up time weighs on the achieved rate (a node "
      .. "of a graph replay, it has no launch of its own)." or "launch and ramp-up time weigh on the achieved rate.")
  end
  if #v.rows > 3 then
    local rest = #v.rows - 3
    out[#out + 1] = rest .. " more " .. plural(rest, "member") .. " of this group " .. plural(rest, "is", "are")
      .. " listed in the table."
  end
  for _, r in ipairs(v.rows) do
    if r.op.high_variance then
      out[#out + 1] = code(r.op.name) .. " has a kernel-time CoV of " .. num(r.op.cov)
        .. ", so part of its time may be a profiler artifact."
    end
  end
  return out
end

-- Summary section ---------------------------------------------------------

--- The bullets of the `## Summary` section.
function M.summary(ctx, metrics, extra)
  local out = {}
  if metrics.comparison_scope == "comparative" then
    out[#out + 1] = "- Scope: comparative. Trace 1 is compared with Trace 2, and a finding means Trace 1 is slower."
  else
    out[#out + 1] = "- Scope: standalone. Efficiency is the percentage of its roofline an operation reaches."
  end
  local nops = #(metrics.operations or {})
  out[#out + 1] = "- Category time: " .. num(metrics.total_time_ms) .. " ms (" .. num(metrics.percent_of_compute)
    .. "% of end-to-end GPU time) over " .. num(metrics.operation_count) .. " "
    .. plural(metrics.operation_count, "call") .. " of " .. nops .. " "
    .. plural(nops, "signature") .. "."
  local cs = metrics.category_specific or {}
  local peaks = {}
  local function kind(bound) return (M.peak_kind(ctx, bound):gsub("^ ", "")) end
  local function label(what, bound) return "(" .. what .. (kind(bound) ~= "" and (", " .. kind(bound)) or "") .. ")" end
  if present(cs.peak_maf_tflops) then
    peaks[#peaks + 1] = num(cs.peak_maf_tflops) .. " TFLOPS " .. label("matrix BF16", "compute")
  end
  if present(cs.peak_hbm_bw_tbs) then peaks[#peaks + 1] = num(cs.peak_hbm_bw_tbs) .. " TB/s " .. label("HBM", "memory") end
  if #peaks > 0 then out[#out + 1] = "- Peak references: " .. table.concat(peaks, " and ") .. "." end
  for _, line in ipairs(extra or {}) do out[#out + 1] = "- " .. line end
  for _, op in ipairs(metrics.operations or {}) do
    if op.fusion_flagged then
      out[#out + 1] = "- Left to the kernel fusion analysis: " .. code(op.name) .. " (candidate "
        .. code(op.fusion_candidate_name) .. ")."
    end
  end
  for _, op in ipairs(metrics.operations or {}) do
    if op.high_variance then
      out[#out + 1] = "- High kernel-time variance: " .. code(op.name) .. " (CoV " .. num(op.cov) .. ")."
    end
  end
  local n = #(metrics.category_findings or {})
  out[#out + 1] = "- Findings: " .. n .. " (operation groups with an impact score of 0.5 or more)."
  return out
end

function M.nothing_to_report(ctx, metrics)
  return "No " .. md.text(ctx.display_name or metrics.category) .. " operation group reaches the reporting threshold "
    .. "(an impact score of 0.5), so there is nothing to recommend."
end

-- Remedies: an Action sentence and the mechanism its Resolution explains ----

M.remedy = {}

--- Tile/occupancy tuning of `target` (default: the kernel of the largest member).
function M.remedy.tile_tuning(v, target)
  return { action = "Profile " .. (target or M.target(v)) .. " for tile-size and wave-occupancy tuning.",
    mechanism = "A tile shape matched to the problem keeps every compute unit busy until the last wave, so the same "
      .. "arithmetic finishes in less time." }
end

--- Memory-access tuning of `target` (default: the kernel of the largest member).
function M.remedy.memory_access(v, target)
  return { action = "Optimize the memory-access pattern of " .. (target or M.target(v)) .. ".",
    mechanism = "A memory-bound kernel runs as fast as it moves bytes. Coalesced, vectorized loads and stores raise "
      .. "the achieved bandwidth toward the HBM peak, so the same bytes move in less time." }
end

function M.remedy.narrow_precision(v, from, to)
  return { action = "If the model tolerates it, run these operations in " .. to .. " instead of " .. from .. ".",
    mechanism = to .. " halves the bytes per element and runs on faster low-precision matrix units, which lowers "
      .. "both the compute floor and the data moved." }
end

function M.remedy.batch_upstream(v)
  return { action = "Batch the " .. num(v.lead.count) .. " small calls of " .. code(v.lead.name)
      .. " upstream into fewer, larger calls.",
    mechanism = "Every launch pays a fixed cost, and a small problem cannot fill the device. Fewer, larger calls "
      .. "amortize the launch cost and give each kernel enough work to fill the compute units." }
end

-- (an op in a finding is in no fusion candidate: tracelens.analysis leaves
-- the ops a candidate covers to the kernel fusion analysis, fusion_flagged)
-- (comparative: that analysis looks only for work Trace 2 fuses, so it says so)
function M.remedy.fuse_in_layer(v, where)
  local none = v.comparative and "the comparative kernel fusion analysis, which looks only for work that Trace 2 "
      .. "fuses and Trace 1 does not, proposes no candidate that covers it (fusion within Trace 1 is what the "
      .. "standalone analysis of Trace 1 reports)"
    or "the kernel fusion analysis proposes no candidate that covers it"
  return { action = "Fuse " .. code(v.lead.name) .. " with its neighbouring operations in " .. where
      .. " (`torch.compile` fuses such chains); " .. none .. ".",
    mechanism = "Fusing a chain of memory-bound operations keeps the intermediates on chip instead of writing them "
      .. "to memory and reading them back, which removes traffic that no single-kernel tuning can." }
end
M.remedy.defer_fusion = M.remedy.fuse_in_layer -- its former name (rules may call it: docs/rules.md)

-- Without an arch file, the lead op's FLOPs per byte below the lowest ridge
-- point of every shipped arch file with its compute spec (ctx.shipped_ridges,
-- the orchestrator's): {fpb, spec, ridge, name}, or nil. Only for the formats
-- every such GPU runs natively: FP8, FP4 or INT8 work on a GPU whose file has
-- no peak for it (MXFP4 GEMMs on MI300X) runs in another format.
local NATIVE_FORMAT = { bf16 = true, fp16 = true, tf32 = true, fp32 = true, fp64 = true }

local function below_every_ridge(v)
  local enc = type(v.ctx) == "table" and v.ctx.shipped_ridges
  local e = type(v.lead.efficiency) == "table" and v.lead.efficiency or {}
  local fpb, spec = tonumber(e.flops_per_byte), e.compute_spec
  if type(enc) ~= "string" or not fpb or type(spec) ~= "string" or F.unmodelled(v) ~= "no_arch" then return nil end
  if not NATIVE_FORMAT[spec:match("_(%w+)$") or ""] then return nil end
  local ok, ridges = pcall(json.decode, enc)
  local r = ok and type(ridges) == "table" and ridges[spec]
  if type(r) ~= "table" or not tonumber(r.ridge) or fpb >= tonumber(r.ridge) then return nil end
  return { fpb = fpb, spec = spec, ridge = tonumber(r.ridge), name = r.name }
end

function M.remedy.profile_unmodeled(v)
  local low = below_every_ridge(v)
  if low then
    return { action = "Make " .. M.target(v) .. " move fewer bytes (a narrower data type, fusing it with the op "
        .. "that produces or consumes its tensors) or read them more efficiently; profile it with hardware counters "
        .. "for the achieved bandwidth.",
      mechanism = string.format("Its %s FLOP/B is below the ridge point of every shipped arch file with a %s peak "
        .. "(the lowest, %s's, is about %s FLOP/B): whichever of those GPUs this is, the op is memory-bound, so the bytes "
        .. "it moves set its time.", num(low.fpb), low.spec, md.text(tostring(low.name)), string.format("%.0f", low.ridge)) }
  end
  return { action = "Profile " .. M.target(v) .. " with hardware counters to learn whether it is compute-bound or "
      .. "memory-bound.",
    mechanism = "Without " .. (({ no_arch = "the GPU's peak figures", no_peak = "a peak for its compute spec" })
      [F.unmodelled(v)] or "a performance model") .. " the trace shows how long the op takes but not what limits it. "
      .. "Counter data gives the bound, and with it the direction: tile and occupancy tuning when compute-bound, "
      .. "memory-access tuning when memory-bound." }
end

function M.remedy.channels_last(v)
  return { action = "Switch the model to the channels-last memory layout "
      .. "(`model.to(memory_format=torch.channels_last)`).",
    mechanism = "The kernels of " .. code(v.lead.name) .. " work best on channels-last tensors. With channels-first "
      .. "input, every call pays layout transposes and their memory traffic, which a channels-last model removes." }
end

-- Where an op without input shapes could get them: a graph replay's
-- synthetic op (`cudaGraphLaunch->kernel (Synthetic Op)`) from the capture
-- traces, any other op from a trace recorded with shapes.
local function shapes_source(name)
  if graph_replay.synthetic(name) then
    return "a graph replay records none; for a vLLM or SGLang trace, `--inference --capture_folder` with the graph's "
      .. "capture traces gives them, for a graph your own code captures, a profile of the same step run eagerly"
  end
  if kname.is_unlinked(name) then
    return "no op of the trace launches it, so none is known"
  end
  if name:find("^Torch%-Compiled Region") then
    return "a `torch.compile` region records none of its own; `TORCH_LOGS=output_code` prints the code Inductor "
      .. "generated for it, with its kernels"
  end
  return "record them with the profiler's `record_shapes=True`"
end

function M.remedy.reroute(v, category)
  local article = category:match("^[AEIOUaeiou]") and "an " or "a "
  local how = "time " .. article .. category .. " kernel of the same shape in isolation and compare"
  if not M.tensors_text(v.lead) then
    how = "the trace gives no input shapes for it (" .. shapes_source(v.lead.name) .. "): with them, " .. how
  end
  return { action = "Treat " .. code(v.lead.name) .. " as " .. category .. " work: " .. how
      .. ", to learn how far this op is from what the GPU reaches on that work.",
    mechanism = "The op's name and kernels match " .. category .. " work, but no "
      .. (F.unmodelled(v) == "no_model" and "performance model" or "roofline") .. " covers it here, so "
      .. "its impact is estimated from its share of GPU time rather than from a roofline gap." }
end

--- The note on the tile a kernel's name states (t: kernel_name.tile's) and,
--- with a GEMM shape s ({m, n, batch}, or nil), how many tiles its output
--- makes (the name does not say which output dimension the tile's first side
--- covers: both counts when they differ).
-- How the work items fill the compute units in waves: {waves, fill} with
-- fill the share of the units busy in the last wave.
local function waves_of(items, cus)
  local full = items % cus
  return { waves = items / cus, fill = full == 0 and 1 or full / cus }
end

-- A wave fill this full leaves few units idle at the end: another tile shape
-- gains little from filling the last wave.
local FULL_LAST_WAVE = 0.75

--- The tile a GEMM kernel's name states, the work items it makes of the
--- output (t: kernel_name.tile's, s: the op's {m, n, batch} or nil) and,
--- with the compute units the trace's device reports (cus, or nil), the
--- waves they make.
function M.tile_note(t, s, cus)
  local out = string.format("The kernel name states its tile, %d x %d with a K step of %d (`%s`)", t.m, t.n, t.k,
    md.text(t.text))
  if t.split then out = out .. string.format(", and a split of K in %d parts", t.split) end
  local tail = ". A kernel profiler (Nsight Compute, rocprofv3) shows whether another tile shape would fill more "
    .. "compute units."
  if s and s.m and s.n then
    local a = math.ceil(s.m / t.m) * math.ceil(s.n / t.n)
    local b = math.ceil(s.m / t.n) * math.ceil(s.n / t.m)
    local lo, hi = math.min(a, b), math.max(a, b)
    local batch = tonumber(s.batch) or 1
    local mult = batch * (t.split or 1)
    local function range(x, y) return x == y and tostring(x) or string.format("%d to %d", x, y) end
    local count = range(lo * mult, hi * mult)
    if t.split then
      -- the output tiles, then the work-groups the split of K makes of them (gemm_01: 4 tiles, 8 work-groups)
      out = out .. string.format(": its %d x %d output%s makes %s output tile%s, %s work-groups with the split of K",
        s.m, s.n, batch > 1 and string.format(" (%d batches)", batch) or "", range(lo * batch, hi * batch),
        hi * batch == 1 and "" or "s", count)
    else
      out = out .. string.format(": its %d x %d output%s makes %s tiles", s.m, s.n,
        batch > 1 and string.format(" (%d batches)", batch) or "", count)
    end
    cus = tonumber(cus)
    if cus and cus > 0 then
      local w1, w2 = waves_of(lo * mult, cus), waves_of(hi * mult, cus)
      local wv = lo == hi and string.format("%.2f waves", w1.waves)
        or string.format("%.2f to %.2f waves", math.min(w1.waves, w2.waves), math.max(w1.waves, w2.waves))
      local f1, f2 = math.min(w1.fill, w2.fill), math.max(w1.fill, w2.fill)
      local fill = f1 == f2 and string.format("%.0f%%", f1 * 100)
        or string.format("%.0f%% to %.0f%%", f1 * 100, f2 * 100)
      out = out .. string.format(", %s on the %d compute units the trace's device reports, the last one %s full",
        wv, cus, fill)
      if f1 >= FULL_LAST_WAVE then
        tail = ": few units idle in the last wave, so a tile shape chosen to fill it gains little; a kernel profiler "
          .. "(Nsight Compute, rocprofv3) shows what limits each tile instead."
      end
    end
  end
  return out .. tail
end

return M
