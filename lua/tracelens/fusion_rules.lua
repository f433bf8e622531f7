-- tracelens.fusion_rules — the decisions of the kernel-fusion analyzer
-- (agents-and-report.md §3.3) that the reference left to an LLM, as rules:
--   Decision 1  reject(candidate)  -> nil, or the reason a candidate is set aside
--   Decision 2  pattern(candidate) -> {name=, kind=, ...} from kernel composition and module hints
--   Decision 3  action(candidate, pattern) -> the recommended fix for that pattern in its context
-- plus the reason behind a confidence level. docs/analyzers.md lists the
-- tables below in words.
local M = {}

-- Kernels -------------------------------------------------------------------

-- Operation labels read from a kernel name: the first row whose substring
-- (lower-cased) occurs wins. Rows are ordered from specific to generic.
local OP_LABELS = {
  -- mixture-of-experts stages: the kernel classifier types few of them (AITER's
  -- ck_moe_stage1/2 GEMMs, moe_sorting and moe_sum are "Unknown"), and a MoE GEMM
  -- is no elementwise work
  { "MoE GEMM", { "ck_moe_stage", "moe_gemm", "moegemm" } },
  { "MoE Sorting", { "moe_sorting", "moesorting", "moe_align" } },
  { "MoE Sum", { "moe_sum" } },
  { "Softmax", { "softmax" } },
  { "LayerNorm", { "layer_norm", "layernorm" } },
  { "RMSNorm", { "rmsnorm", "rms_norm" } },
  { "BatchNorm", { "batch_norm", "batchnorm" } },
  { "GroupNorm", { "group_norm", "groupnorm" } },
  { "Rsqrt", { "rsqrt" } },
  { "GELU", { "gelu" } },
  { "SiLU", { "silu" } },
  { "Sigmoid", { "sigmoid" } },
  { "Tanh", { "tanh" } },
  { "ReLU", { "relu" } },
  { "Dropout", { "dropout" } },
  { "Cat", { "catarray", "cat_" } },
  { "Neg", { "neg_kernel", "negfunctor", "_neg" } },
  { "Pow", { "pow_", "powfunctor" } },
  { "Mean", { "meanops", "mean_" } },
  -- a LayerNorm/GroupNorm backward's weight and bias (γ/β) gradients: a
  -- column reduction over the batch, no elementwise step
  { "Reduce", { "reduce_kernel", "reduction", "gammabeta", "gamma_beta" } },
  { "Add", { "functor_add", "functoronself_add", "addfunctor", "add_kernel" } },
  { "Mul", { "mulfunctor", "functor_mul", "functoronself_mul", "mul_kernel" } },
  { "Sub", { "subfunctor", "functor_sub", "functoronself_sub", "sub_kernel" } },
  { "Div", { "divfunctor", "functor_div", "functoronself_div", "div_kernel", "div_true" } },
  { "Compare", { "compare" } },
  { "Index", { "index" } },
  { "Copy", { "copy_kernel", "to_copy", "direct_copy" } },
  { "Fill", { "fill_kernel", "fillfunctor" } },
}

local NORM_LABELS = { LayerNorm = true, RMSNorm = true, BatchNorm = true, GroupNorm = true }
local ACTIVATION_LABELS = { GELU = true, SiLU = true, Sigmoid = true, Tanh = true, ReLU = true }

--- The name of a candidate kernel (module and sibling candidates spell it differently).
function M.kernel_name(k) return k.name or k.kernel_name or "" end

--- The classified type of a candidate kernel.
function M.kernel_type(k) return k.type or k.kernel_type or "Unknown" end

-- GEMM kernels the classifier's rules miss (analysis-layer.md §4: R111
-- matches `nvjet_tst`, not cuBLASLt's `nvjet_sm90_tst_…` / `nvjet_sm90_qqtst_…`,
-- which PyTorch 2.11 on H200 launches for mm and _scaled_mm): typed
-- "Unknown", they are GEMMs by their names.
local GEMM_NAMES = { "nvjet_", "scaled_mm" }

--- A kernel the classifier leaves "Unknown" whose name shows a GEMM (cuBLASLt's nvjet kernels).
function M.name_gemm(k)
  if M.kernel_type(k) ~= "Unknown" then return false end
  local name = M.kernel_name(k):lower()
  for _, s in ipairs(GEMM_NAMES) do
    if name:find(s, 1, true) then return true end
  end
  return false
end

--- A matrix kernel: a GEMM or convolution type (as the fusion script's
--- is_matrix), or an untyped kernel whose name shows a GEMM (name_gemm).
function M.is_matrix(k)
  local t = M.kernel_type(k):upper()
  return t:find("GEMM", 1, true) ~= nil or t:find("CONV", 1, true) ~= nil or M.name_gemm(k)
end

local function is_conv(k) return M.kernel_type(k):upper():find("CONV", 1, true) ~= nil end

local MOE_GEMM = "MoE GEMM"

--- The operation a kernel performs, as a short label (`GEMM`, `Add`, `LayerNorm`, ...).
function M.op_label(k)
  if M.is_matrix(k) then return is_conv(k) and "Convolution" or "GEMM" end
  local name = M.kernel_name(k):lower()
  for _, row in ipairs(OP_LABELS) do
    for _, s in ipairs(row[2]) do
      if name:find(s, 1, true) then return row[1] end
    end
  end
  local t = M.kernel_type(k)
  if t ~= "Unknown" then return t end
  return "Elementwise"
end

--- The operation of a kernel as the findings write it, in the Insight's
--- composition and in the kernel table's Type column alike: op_label, or
--- "Unknown" when neither the classifier nor the name shows an operation.
function M.kernel_label(k)
  if M.kernel_type(k) == "Unknown" and M.op_label(k) == "Elementwise" then return "Unknown" end
  return M.op_label(k)
end

--- "1 Fill, 2 BatchNorm": the kernels counted by kernel_label, in first-seen order.
function M.label_counts(kernels)
  local seen, parts, count = {}, {}, {}
  for _, k in ipairs(kernels) do
    local l = M.kernel_label(k)
    count[l] = (count[l] or 0) + 1
    if not seen[l] then
      seen[l] = true
      parts[#parts + 1] = l
    end
  end
  for i, l in ipairs(parts) do parts[i] = string.format("%d %s", count[l], l) end
  return table.concat(parts, ", ")
end

--- A mixture-of-experts GEMM: its name shows it (op_label), or its type is a MoE GEMM type.
function M.is_moe_gemm(k)
  return M.op_label(k) == MOE_GEMM or (M.is_matrix(k) and M.kernel_type(k):upper():find("MOE", 1, true) ~= nil)
end

--- The kernels whose names show matrix work (MoE GEMMs) that the classifier gives no matrix type:
--- the estimator and its confidence rule, which go by type, do not count them as matrix kernels.
function M.untyped_matrix_count(c)
  local n = 0
  for _, k in ipairs(c.kernels or {}) do
    if M.is_moe_gemm(k) and not M.is_matrix(k) then n = n + 1 end
  end
  return n
end

-- The candidate's kernels summarised: labels in order, counts per label.
local function composition(c)
  local labels, count, matrix, conv, moe = {}, {}, 0, false, 0
  for i, k in ipairs(c.kernels or {}) do
    local l = M.op_label(k)
    labels[i] = l
    count[l] = (count[l] or 0) + 1
    if M.is_matrix(k) then matrix = matrix + 1 end
    if M.is_moe_gemm(k) then moe = moe + 1 end
    conv = conv or is_conv(k)
  end
  return { labels = labels, count = count, matrix = matrix, n = #labels, conv = conv, moe = moe }
end
M.composition = composition

-- The distinct labels of the non-matrix kernels, in order (at most four).
local function side_labels(comp)
  local seen, out = {}, {}
  for _, l in ipairs(comp.labels) do
    if l ~= "GEMM" and l ~= "Convolution" and not seen[l] then
      seen[l] = true
      out[#out + 1] = l
    end
  end
  while #out > 4 do out[#out] = nil end
  return out
end

-- Module names ----------------------------------------------------------------

--- strip_module_index: drop `nn.Module: ` and one trailing `_<digits>`.
function M.strip_module_index(name)
  name = tostring(name or ""):gsub("^nn%.Module: ", "")
  return (name:gsub("_%d+$", ""))
end

--- The name to show for a candidate's module: the class name of an nn.Module,
--- or a python frame without its directories
--- (`transformers/.../modeling_bert.py(638): feed_forward_chunk` -> `modeling_bert.py(638): feed_forward_chunk`).
function M.module_label(c)
  local base = M.strip_module_index(c.base_name or c.module_name or "Unknown")
  return base:match("^[^:]*/([^/]-%.py%(%d+%):.*)$") or base
end

--- The innermost nn.Module class around the candidate, from its parent chain.
function M.parent_module(c)
  for _, p in ipairs(c.parent_chain or {}) do
    if type(p) == "string" and p:match("^[%a][%w]*_%d+$") then return (p:gsub("_%d+$", "")) end
  end
end

local function is_class_name(c)
  local raw = tostring(c.module_name or "")
  local base = M.strip_module_index(c.base_name or raw)
  return raw:sub(1, 11) == "nn.Module: " or base:match("^[A-Z][%w]*$") ~= nil
end

local function hints(c)
  return (tostring(c.base_name or "") .. " " .. tostring(c.module_name or "")):lower()
end

local function has_hint(c, words)
  local h = hints(c)
  for _, w in ipairs(words) do
    if h:find(w, 1, true) then return true end
  end
  return false
end

-- Kernel facts ----------------------------------------------------------------------

-- What the trace says of a kernel beyond its name (tracelens.fusion.kernel_facts:
-- stream, launching op, that op's parent), from the candidate view's `facts`
-- keyed by gpu_op_uid; nil when none were given.
local function fact(c, k)
  local uid = c.facts and math.tointeger(tonumber(k.gpu_op_uid))
  return uid and c.facts[tostring(uid)] or nil
end
M.fact = fact

--- The GPU streams the candidate's kernels ran on, in ascending order (empty without facts).
function M.streams(c)
  local seen, out = {}, {}
  for _, k in ipairs(c.kernels or {}) do
    local f = fact(c, k)
    local s = f and f.stream
    if s ~= nil and not seen[tostring(s)] then
      seen[tostring(s)] = true
      out[#out + 1] = s
    end
  end
  table.sort(out, function(a, b)
    local x, y = tonumber(a), tonumber(b)
    if x and y then return x < y end
    return tostring(a) < tostring(b)
  end)
  return out
end

--- A candidate of an autograd backward node or a backward operation
--- (`autograd::engine::evaluate_function: NativeLayerNormBackward0`, `aten::native_batch_norm_backward`).
function M.is_backward(c) return hints(c):find("backward", 1, true) ~= nil end

local AUTOGRAD_NODE = "autograd::engine::evaluate_function: "
local ACCUMULATE_OPS = { ["aten::add_"] = true, ["aten::add"] = true }

--- Whether kernel k is autograd accumulating a gradient: an add launched by
--- `aten::add_` (or `aten::add`) directly under the autograd node (not under the node's
--- backward function), where autograd sums the gradients a tensor gets from
--- its consumers. Needs the kernel facts.
function M.accumulates(c, k)
  local f = fact(c, k)
  local node = tostring(c.module_name or "")
  return f ~= nil and ACCUMULATE_OPS[f.op] == true and node:sub(1, #AUTOGRAD_NODE) == AUTOGRAD_NODE
    and f.op_parent == node
end

local function name_has(k, words)
  local name = M.kernel_name(k):lower()
  for _, w in ipairs(words) do
    if name:find(w, 1, true) then return true end
  end
  return false
end

-- Normalization kernels by role, from their names (PyTorch's CUDA kernels):
-- a pass that reduces the whole input (statistics; in a backward, the sums
-- over the output gradient), the pass that reads it again to apply them, a
-- backward's input-gradient kernel and its weight/bias (γ/β) reduction.
local STATS_PASS = { "collect_statistics", "backward_reduce", "welford", "rowwisemoments", "batch_norm_reduce" }
local APPLY_PASS = { "transform_input", "backward_elemt", "batch_norm_elemt" }
local INPUT_GRAD = { "grad_input", "backward_elemt" }
local WEIGHT_GRAD = { "gammabeta", "gamma_beta" }

-- Decision 1 -----------------------------------------------------------------------

-- Container modules: a whole layer or stack, not one fusable operation.
local CONTAINER_NAMES = { Sequential = true, ModuleList = true, ModuleDict = true }
local CONTAINER_SUFFIXES = { "Layer", "Layers", "Block", "Blocks", "Encoder", "Decoder", "Model" }

--- Decision 1: nil when the candidate stays, else the reason it is set aside.
function M.reject(c)
  local comp = composition(c)
  local base = M.strip_module_index(c.base_name or c.module_name)
  if is_class_name(c) then
    if CONTAINER_NAMES[base] then return "container module" end
    for _, s in ipairs(CONTAINER_SUFFIXES) do
      if #base > #s and base:sub(-#s) == s then return "container module (a whole layer or stack)" end
    end
  end
  local streams = M.streams(c)
  if #streams > 1 then
    local list = {}
    for i, s in ipairs(streams) do list[i] = tostring(s) end
    return string.format("its kernels ran on GPU streams %s and %s: work split across streams is not one sequence "
      .. "of kernels that one fused kernel can replace", table.concat(list, ", ", 1, #list - 1), list[#list])
  end
  if c.has_fused_kernel == true then return "already contains a fused kernel" end
  if comp.n > 0 and comp.matrix == comp.n then return "all kernels are GEMMs" end
  for _, k in ipairs(c.kernels or {}) do
    if M.kernel_name(k):sub(1, 7) == "triton_" then return "already compiler-generated kernels (`triton_` names)" end
  end
  if comp.matrix > 0 then
    local only_norm = true
    for i, l in ipairs(comp.labels) do
      if l ~= "GEMM" and l ~= "Convolution" and not NORM_LABELS[l] then only_norm = false end
      if i > 1 and (l == "GEMM" or l == "Convolution") and (comp.labels[i - 1] == "GEMM"
          or comp.labels[i - 1] == "Convolution") and not comp.count.Softmax then
        local activation = false
        for a in pairs(ACTIVATION_LABELS) do activation = activation or comp.count[a] ~= nil end
        if not activation then return "independent GEMMs side by side (separate weights, no shared epilogue)" end
      end
    end
    if only_norm then return "GEMM followed only by normalization" end
  end
  return nil
end

-- Decision 2 ---------------------------------------------------------------------

local function joined(labels) return table.concat(labels, " + ") end

-- The normalization a candidate computes: the first norm label among its
-- kernels, else its module name's hint.
local function norm_of(c, comp)
  for _, l in ipairs(comp.labels) do
    if NORM_LABELS[l] then return l end
  end
  if has_hint(c, { "batchnorm", "batch_norm" }) then return "BatchNorm" end
  if has_hint(c, { "layernorm", "layer_norm" }) then return "LayerNorm" end
  if has_hint(c, { "groupnorm", "group_norm" }) then return "GroupNorm" end
  if has_hint(c, { "rmsnorm", "rms_norm" }) then return "RMSNorm" end
end

-- The kernels of a normalization by role (STATS_PASS ...): {stats=, apply=,
-- input_grad=, weight_grad=, accumulate=, others=, extra=}, each a list of
-- kernels; `others` holds those with no role, `extra` all but the stats and
-- apply passes.
local function norm_roles(c)
  local r = { stats = {}, apply = {}, input_grad = {}, weight_grad = {}, accumulate = {}, others = {}, extra = {} }
  for _, k in ipairs(c.kernels or {}) do
    local role = (name_has(k, STATS_PASS) and "stats") or (name_has(k, APPLY_PASS) and "apply")
      or (name_has(k, INPUT_GRAD) and "input_grad") or (name_has(k, WEIGHT_GRAD) and "weight_grad")
      or (M.accumulates(c, k) and "accumulate") or "others"
    r[role][#r[role] + 1] = k
    if role == "apply" and name_has(k, INPUT_GRAD) then r.input_grad[#r.input_grad + 1] = k end
    if role ~= "stats" and role ~= "apply" then r.extra[#r.extra + 1] = k end
  end
  return r
end

--- Decision 2: the pattern of a candidate. Returns {name=, kind=, sides=, base=}
--- where kind is one of moe, attention, rope, norm_passes, norm_backward, norm,
--- swiglu, gelu, epilogue, multi_epilogue, residual_norm, reduction, sequence,
--- chain. norm_passes and norm_backward also carry norm= (LayerNorm, ...),
--- backward= and roles= (norm_roles).
function M.pattern(c)
  local comp = composition(c)
  local n, has = comp.n, comp.count
  local sides = side_labels(comp)
  local base = (comp.conv or has_hint(c, { "conv2d", "conv" })) and "Convolution" or "GEMM"
  local p = { sides = sides, base = base, comp = comp }
  local norm = comp.matrix == 0 and norm_of(c, comp) or nil
  local roles = norm and norm_roles(c)
  local backward = M.is_backward(c)
  if comp.moe > 0 then
    -- expert GEMM stages with their routing and combining kernels (a gating softmax too)
    p.kind, p.name = "moe", "Unfused Mixture-of-Experts"
  elseif comp.matrix >= 2 and has.Softmax then
    p.kind, p.name = "attention", "Unfused Attention"
  elseif (has.Neg and has.Cat) or (has_hint(c, { "rotary", "rope", "apply_rotary" }) and comp.matrix == 0) then
    p.kind, p.name = "rope", "Unfused RoPE"
  elseif roles and #roles.stats > 0 and #roles.apply > 0 then
    -- a training normalization: a pass computing statistics over the whole
    -- input, a second pass applying them, and small kernels around them
    p.kind, p.norm, p.backward, p.roles = "norm_passes", norm, backward, roles
    p.name = "Unfused " .. norm .. (backward and " Backward" or "")
  elseif roles and backward and (#roles.input_grad > 0 or #roles.weight_grad > 0) then
    -- a normalization's backward: input gradient, weight/bias gradient
    -- reduction, and the add autograd may launch to accumulate the input
    -- gradient (no residual add, no forward normalization)
    p.kind, p.norm, p.backward, p.roles = "norm_backward", norm, true, roles
    p.name = "Unfused " .. norm .. " Backward" .. (#roles.accumulate > 0 and " + Gradient Accumulation" or "")
  elseif has.Rsqrt then
    p.kind = "norm"
    if has.Sub or has_hint(c, { "layernorm", "layer_norm" }) then
      p.norm, p.name = "LayerNorm", "Unfused LayerNorm"
    else
      p.norm, p.name = "RMSNorm", "Unfused RMSNorm"
    end
  elseif has_hint(c, { "batchnorm", "batch_norm" }) and has.Mul and has.Add and not has.BatchNorm then
    p.kind, p.norm, p.name = "norm", "BatchNorm", "Unfused BatchNorm"
  elseif has.SiLU and has.Mul then
    p.kind, p.name = "swiglu", "Unfused SwiGLU"
  elseif comp.matrix == 0 and ((has.GELU or 0) + (has.Tanh or 0) + (has.Pow or 0)) >= 2 then
    p.kind, p.name = "gelu", "Unfused GELU"
  elseif comp.matrix >= 2 then
    p.kind = "multi_epilogue"
    local what = has_hint(c, { "mlp", "feed_forward", "ffn", "intermediate" }) and "MLP" or base
    p.name = "Unfused " .. what .. " Epilogues (" .. joined(sides) .. ")"
  elseif comp.matrix == 1 then
    p.kind, p.name = "epilogue", base .. " Epilogue (" .. joined(sides) .. ")"
  elseif has.Reduce then
    p.kind, p.name = "reduction", "Unfused Reduction + Elementwise (" .. joined(sides) .. ")"
  elseif #sides == 1 and n >= 2 then
    -- kernels whose names show no operation are Elementwise already: no "Elementwise Elementwise"
    p.kind = "sequence"
    p.name = sides[1] == "Elementwise" and "Unfused Elementwise Sequence"
      or ("Unfused Elementwise " .. sides[1] .. " Sequence")
  else
    local side_norm
    for _, l in ipairs(sides) do
      if NORM_LABELS[l] then side_norm = l end
    end
    -- a backward's add is no residual add (its accumulation is norm_backward)
    if side_norm and has.Add and not backward then
      p.kind, p.norm, p.name = "residual_norm", side_norm, "Unfused Residual Add + " .. side_norm
    else
      p.kind, p.name = "chain", "Unfused Elementwise Chain (" .. joined(sides) .. ")"
    end
  end
  return p
end

-- Decision 3 ---------------------------------------------------------------------

local function lower_list(labels)
  local out = {}
  for i, l in ipairs(labels) do out[i] = (l == "GELU" or l == "SiLU" or NORM_LABELS[l] or l == "ReLU") and l
    or l:lower() end
  return table.concat(out, ", ")
end

--- Decision 3: the action for a candidate, by pattern and module context.
--- Vendor-agnostic: a custom fused kernel, a library epilogue, graph-level or
--- compiler fusion.
function M.action(c, p)
  local m = require("tracelens.md").code(M.module_label(c))
  local n = p.comp.n
  local base = p.base == "Convolution" and "convolution" or "GEMM"
  if p.kind == "moe" then
    return "Replace the " .. n .. " kernels of " .. m .. " with one fused MoE kernel, which routes the tokens to "
      .. "their experts, runs the expert GEMMs and combines their outputs in one launch, so the results passed "
      .. "between the stages are not written to memory and read back."
  elseif p.kind == "attention" then
    return "Replace the score GEMM, softmax and value GEMM in " .. m .. " with one fused attention kernel, so the "
      .. "score matrix stays on chip instead of making a round trip through memory."
  elseif p.kind == "rope" then
    return "Apply the rotary embedding in " .. m .. " with one fused kernel, or fold it into the kernel that "
      .. "consumes the query and key tensors."
  elseif p.kind == "norm" then
    return "Compute the " .. p.norm .. " in " .. m .. " with one fused normalization kernel instead of separate "
      .. "reduction and elementwise kernels."
  elseif p.kind == "swiglu" then
    return "Fuse the SiLU activation and the gating multiply in " .. m .. " into one kernel, or into the epilogue "
      .. "of the GEMM that produces their inputs."
  elseif p.kind == "gelu" then
    return "Compute the GELU in " .. m .. " with one fused activation kernel instead of " .. n .. " separate pieces."
  elseif p.kind == "epilogue" then
    return "Fold the " .. lower_list(p.sides) .. " after the " .. base .. " in " .. m .. " into the " .. base
      .. " epilogue, through the library's fused epilogue, a custom fused kernel or compiler fusion, so the "
      .. base .. " output is written once."
  elseif p.kind == "multi_epilogue" then
    return "Fold the " .. lower_list(p.sides) .. " kernels in " .. m .. " into the epilogues of the " .. base
      .. "s they follow, through a custom fused kernel or compiler fusion, so each intermediate is written once."
  elseif p.kind == "reduction" then
    return "Fuse the elementwise kernels into the reduction in " .. m .. " with a custom fused kernel or compiler "
      .. "fusion, so the input is read once."
  elseif p.kind == "norm_passes" then
    local r = p.roles
    local passes = p.backward and ("reduction and input-gradient kernels") or "statistics and normalization kernels"
    local upper = "The projected saving below assumes the fused kernel reads its input and writes its output once, "
      .. "so it is an upper bound."
    if #r.extra == 0 then
      return "Only a kernel that keeps the data on chip between the " .. passes .. " of " .. m .. " (one pass "
        .. "needs the statistics of the whole input before the second can start) can save memory traffic here. "
        .. upper
    end
    local md = require("tracelens.md")
    local extra = #r.extra == 1 and string.format("the other kernel (%s)", md.text(M.kernel_label(r.extra[1])))
      or string.format("the other %d kernels (%s)", #r.extra, md.text(M.label_counts(r.extra)))
    return "Fold " .. extra .. " into the " .. passes .. " of " .. m .. " (a custom fused normalization kernel "
      .. "or compiler fusion), which saves " .. (#r.extra == 1 and "its launch" or "their launches")
      .. " but not the second pass over the data. " .. upper
  elseif p.kind == "norm_backward" then
    local r = p.roles
    if #r.accumulate > 0 then
      return "Accumulate the input gradient inside the " .. p.norm .. " backward's input-gradient kernel in " .. m
        .. " (a fused " .. p.norm .. " backward that adds into the gradient its input already has: a custom fused "
        .. "kernel or compiler fusion), so the input gradient is not written to memory and read back by a separate "
        .. "add." .. (#r.weight_grad > 0 and (" The weight and bias (γ/β) gradient kernel is a reduction over the "
        .. "batch, not a step of that chain.") or "") .. " The projected saving below counts every kernel of the node "
        .. "as if one kernel read its inputs and wrote its outputs once; folding in the add saves about the add's own "
        .. "time, so the projection is an upper bound."
    end
    return "Compute the " .. p.norm .. " backward in " .. m .. " with fewer kernels (a custom fused backward kernel or "
      .. "compiler fusion), so the tensors its kernels share are read from memory once."
  elseif p.kind == "residual_norm" then
    return "Fuse the residual add into the " .. p.norm .. " kernel in " .. m .. " (a fused add-and-normalize "
      .. "kernel), so the sum is not written and read back."
  end
  return "Fuse the " .. n .. " " .. lower_list(p.sides) .. " kernels in " .. m .. " into one custom fused kernel, or "
    .. "enable graph-level or compiler fusion, so the chain makes one pass over memory instead of " .. n .. "."
end

-- Confidence ------------------------------------------------------------------------

-- The fusion script's confidence signals (analysis-layer.md §10): module-name
-- hints and kernel composition.
local NAME_HINTS = {
  { "an attention block", { "attention", "sdpa", "self_attn" } },
  { "a normalization", { "rmsnorm", "rms_norm", "layernorm", "layer_norm", "batchnorm", "batch_norm" } },
  { "an MLP", { "mlp" } },
  { "a rotary embedding", { "rotary", "rope", "apply_rotary" } },
  { "a gated activation", { "silu", "swiglu" } },
}

local function name_signal(c)
  for _, row in ipairs(NAME_HINTS) do
    if has_hint(c, row[2]) then return row[1] end
  end
end

local function composition_signal(c)
  local comp = composition(c)
  local names = {}
  for i, k in ipairs(c.kernels or {}) do names[i] = M.kernel_name(k):lower() end
  local function any(s)
    for _, nm in ipairs(names) do
      if nm:find(s, 1, true) then return true end
    end
    return false
  end
  if comp.matrix >= 2 and any("softmax") then return "an attention pattern (GEMM, softmax, GEMM)" end
  if any("rsqrt") then return "a normalization (rsqrt)" end
  if comp.matrix >= 2 and comp.n > comp.matrix then return "an MLP (GEMMs with elementwise kernels between them)" end
  if any("neg") and (any("catarray") or any("cat_")) then return "a rotary embedding (neg and cat)" end
  -- the rule counts kernels, not what they do: a reduction or a normalization
  -- pass counts as much as an elementwise kernel
  if comp.matrix == 0 and comp.n >= 3 then return comp.n .. " kernels with no GEMM or convolution among them" end
end

--- The confidence word (`High`) and the reason behind the level.
function M.confidence(c, level)
  level = tostring(level or "low"):lower()
  local word = level:sub(1, 1):upper() .. level:sub(2)
  local name, comp = name_signal(c), composition_signal(c)
  local untyped = M.untyped_matrix_count(c)
  local reason
  if level ~= "high" and untyped > 0 then
    -- the rule's level comes from kernel types it does not have: say so, not what it would have seen
    reason = string.format("the kernel names show a mixture-of-experts layer, but the kernel classifier gives %s "
      .. "no type, and the confidence rule counts matrix kernels by type, so it cannot confirm the pattern.",
      untyped == 1 and "its MoE GEMM kernel" or ("its " .. untyped .. " MoE GEMM kernels"))
  elseif level == "high" then
    reason = (name and comp) and ("the module name points to " .. name .. " and the kernel composition shows "
      .. comp .. ".") or "the module name and the kernel composition both point to a known fusable pattern."
  elseif level == "medium" then
    if comp and not name then
      reason = "the kernel composition shows " .. comp .. ", but the module name does not match a named fusable "
        .. "pattern."
    elseif name and not comp then
      reason = "the module name points to " .. name .. ", but the kernel composition does not confirm a known "
        .. "pattern."
    else
      reason = "one of module name and kernel composition matches a known fusable pattern."
    end
  else
    reason = "neither the module name nor the kernel composition matches a known fusable pattern, so the "
      .. "grouping rests on module structure only."
  end
  return word, reason
end

--- The report icon of a card's rank, as in every section of analysis.md:
--- P1 🔴, P2 🟡, later 🟢 (the confidence is written out, not iconed).
function M.icon_at(n)
  if n == 1 then return "🔴" elseif n == 2 then return "🟡" end
  return "🟢"
end

return M
