-- tracelens.fusion.common — what the kernel-fusion modules share
-- (analysis-layer spec §3.6, §10): the §3.6 exclusion lists, the §10
-- thresholds, kernel eligibility and fused-kernel tests, module-name
-- stripping, the tree reads of a candidate (parent chain, Input Dims) and
-- the small value helpers (Python truthiness and rounding, stable sort).
local json = require "tracelens.json"
local py = require "tracelens.py"
local classify = require "tracelens.classify_kernels"

local M = {}

-- §3.6 constants
local EXCLUDED = { "nccl", "rccl", "memcpy", "memset" }
local ALREADY_FUSED = { "attn_fwd", "attn_bwd", "fmha", "unified_attention", "paged_attention", "flash_attn",
  "flash_fwd", "silu_and_mul" }
M.EXCLUDED = EXCLUDED
M.NORM_KERNEL_PATTERNS = { "batchnorm", "layernorm", "groupnorm", "instancenorm", "rmsnorm" }

-- §10 constants
M.MAX_FUSION_KERNEL_COUNT = 15
M.MIN_IMPACT_SCORE = 2.0
M.OVERLAP_EFFICIENCY = 0.85
M.MIN_SAVINGS_MS = 0.1

function M.r(x, n) return py.round(x, n) end

local function is_null(v) return v == nil or json.is_null(v) end
M.is_null = is_null

local function has_any(s, pats)
  for _, p in ipairs(pats) do
    if s:find(p, 1, true) then return true end
  end
  return false
end
M.has_any = has_any

-- Python truthiness of the values we meet (numbers, strings, lists, None)
local function truthy(v)
  if is_null(v) or v == false or v == 0 or v == "" then return false end
  if type(v) == "table" and next(v) == nil then return false end
  return true
end

local function stable_sort_desc(list, key)
  local idx = {}
  for i, v in ipairs(list) do idx[i] = { v, key(v), i } end
  table.sort(idx, function(a, b)
    if a[2] ~= b[2] then return a[2] > b[2] end
    return a[3] < b[3]
  end)
  local out = json.arr()
  for i, e in ipairs(idx) do out[i] = e[1] end
  return out
end
M.truthy = truthy
M.stable_sort_desc = stable_sort_desc

--- strip_module_index(name): drop "nn.Module: ", then one trailing _<digits>.
function M.strip_module_index(name)
  name = tostring(name or "")
  if name:sub(1, 11) == "nn.Module: " then name = name:sub(12) end
  return (name:gsub("_%d+$", "", 1))
end

function M.is_fusion_eligible(name)
  local l = tostring(name):lower()
  return not has_any(l, EXCLUDED) and not has_any(l, ALREADY_FUSED)
end

function M.has_fused_kernel(kernels)
  for _, k in ipairs(kernels) do
    if has_any(tostring(k.name or k.kernel_name or ""):lower(), ALREADY_FUSED) then return true end
  end
  return false
end

-- parent_chain(ev): ancestor names, innermost first (nn.Module prefix
-- dropped; other names with "/" keep the part after the last "/")
local function parent_chain(trace, uid)
  local chain = json.arr()
  local ev = trace:node(uid)
  local p = ev and ev:parent()
  while p do
    local name = p.name
    if name and name ~= "" then
      if name:sub(1, 11) == "nn.Module: " then
        name = name:sub(12)
      elseif name:find("/", 1, true) then
        name = name:match("([^/]*)$")
      end
      chain[#chain + 1] = name
    end
    p = p:parent()
  end
  return chain
end

local function input_dims_of(trace, uid)
  local ev = trace:node(uid)
  local args = ev and ev.args
  local v = args and args["Input Dims"]
  if v == nil then return json.null end
  return v
end
M.parent_chain = parent_chain
M.input_dims_of = input_dims_of

-- a kernel's type (tracelens.classify_kernels) and name field
function M.kernel_type(name) return (classify.classify(name)) end
function M.kname(k) return k.name or k.kernel_name end

-- extract(...) as a candidate list, or [] and the error text on any error
-- (the reference writes "[]" when its extraction fails)
function M.candidates_or_empty(extract, ...)
  local ok, res = pcall(extract, ...)
  if ok then return res end
  return json.arr(), tostring(res)
end

return M
