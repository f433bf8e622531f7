-- tracelens.fusion.confidence — the confidence of a fusion estimate
-- (analysis-layer spec §10): a name signal (the family hinted by the
-- candidate's base/module name) and a composition signal (matrix kernels,
-- softmax, rsqrt, neg+cat ...); both give "high", one "medium", none "low".
-- Also is_matrix, the matrix-kernel test the estimators share.
local common = require "tracelens.fusion.common"

local has_any = common.has_any

local M = {}

local MATRIX_SPECS = { matrix_fp16 = true, matrix_bf16 = true, matrix_fp32 = true, matrix_fp64 = true,
  matrix_fp8 = true, matrix_int8 = true }
local NAME_HINTS = {
  { "attention", { "attention", "sdpa", "self_attn" } },
  { "norm", { "rmsnorm", "rms_norm", "layernorm", "layer_norm", "batchnorm", "batch_norm" } },
  { "mlp", { "mlp" } },
  { "rope", { "rotary", "rope", "apply_rotary" } },
  { "siglu", { "silu", "swiglu" } },
}

local function is_matrix(k)
  if k.compute_spec and MATRIX_SPECS[k.compute_spec] then return true end
  local t = tostring(k.type or ""):upper()
  return t:find("GEMM", 1, true) ~= nil or t:find("CONV", 1, true) ~= nil
end
M.is_matrix = is_matrix

local function classify_confidence(c, kernels)
  local label = (tostring(c.base_name or "") .. "\0" .. tostring(c.module_name or "")):lower()
  local name_signal
  for _, fam in ipairs(NAME_HINTS) do
    if has_any(label, fam[2]) then
      name_signal = fam[1]
      break
    end
  end
  local n_matrix, n_other = 0, 0
  local any_softmax, any_rsqrt, any_neg, any_cat = false, false, false, false
  for _, k in ipairs(kernels) do
    if is_matrix(k) then n_matrix = n_matrix + 1 else n_other = n_other + 1 end
    local l = tostring(k.name or ""):lower()
    any_softmax = any_softmax or l:find("softmax", 1, true) ~= nil
    any_rsqrt = any_rsqrt or l:find("rsqrt", 1, true) ~= nil
    any_neg = any_neg or l:find("neg", 1, true) ~= nil
    any_cat = any_cat or l:find("catarray", 1, true) ~= nil or l:find("cat_", 1, true) ~= nil
  end
  local comp_signal
  if n_matrix >= 2 and any_softmax then
    comp_signal = "attention"
  elseif any_rsqrt then
    comp_signal = "norm"
  elseif n_matrix >= 2 and n_other >= 1 then
    comp_signal = "mlp"
  elseif any_neg and any_cat then
    comp_signal = "rope"
  elseif n_matrix == 0 and #kernels >= 3 then
    comp_signal = "elementwise_chain"
  end
  if name_signal and comp_signal then return "high" end
  if name_signal or comp_signal then return "medium" end
  return "low"
end
M.classify_confidence = classify_confidence

return M
