-- tracelens.callstack — reading a unified_perf_summary `call_stack_full` cell
-- (a Python list repr: frames, then the kernel name or one sub-list per
-- kernel) into the model layers, the user-code chain and the kernel names
-- (analysis-layer.md §6.8).
local py = require "tracelens.py"

local M = {}

local KERNEL_NAME_TRUNC_LEN = 75
local NOISE_FRAMES = { "torch/nn/modules/module.py", "torch/utils/_device.py", "torch/overrides.py", "torch/_ops.py",
  "multiprocessing/spawn.py", "torch/_dynamo/eval_frame.py", "torch/_functorch/", "torch/autograd/function.py",
  "torch/_inductor/", "torch/cuda/graphs.py", "torch/utils/_contextlib.py" }
local MODULE_PREFIX = "nn.Module: "

local function starts(s, p) return s:sub(1, #p) == p end

local function is_user_frame(frame)
  for _, noise in ipairs(NOISE_FRAMES) do
    if frame:find(noise, 1, true) then return false end
  end
  return starts(frame, "nn.Module:") or frame:find(".py", 1, true) ~= nil or frame:find("::", 1, true) ~= nil
end

local function trunc(k)
  if #k > KERNEL_NAME_TRUNC_LEN then return k:sub(1, KERNEL_NAME_TRUNC_LEN) .. "..." end
  return k
end

local function kernel_names(list)
  local subs = {}
  for _, v in ipairs(list) do
    if type(v) == "table" then subs[#subs + 1] = v end
  end
  local out = {}
  if #subs == 0 then
    if type(list[#list]) == "string" then out[1] = list[#list] end
  else
    for _, sub in ipairs(subs) do
      if #sub > 0 and type(sub[#sub]) == "string" then out[#out + 1] = sub[#sub] end
    end
  end
  return out
end

-- The short form lists this many kernels, then how many more (a table cell
-- of an op with 15 kernels would be 1,200 characters long).
local SHORT_KERNELS = 3

--- parse(cell) -> {module_chain = {...}, call_chain = {...}, kernel_name = s, kernel_name_trunc = s}
function M.parse(cell)
  local r = { module_chain = {}, call_chain = {}, kernel_name = "", kernel_name_trunc = "" }
  if type(cell) ~= "string" or cell == "nan" or cell == "Not found" then return r end
  local list = py.literal(cell)
  if type(list) ~= "table" then return r end
  for _, v in ipairs(list) do
    if type(v) == "string" then
      if starts(v, MODULE_PREFIX) then r.module_chain[#r.module_chain + 1] = v:sub(#MODULE_PREFIX + 1) end
      if is_user_frame(v) then r.call_chain[#r.call_chain + 1] = v end
    end
  end
  local kernels = kernel_names(list)
  if #kernels == 1 then
    r.kernel_name, r.kernel_name_trunc = kernels[1], trunc(kernels[1])
  elseif #kernels > 1 then
    local full, short = {}, {}
    for i, k in ipairs(kernels) do
      full[i] = string.format("Kernel %d: %s", i, k)
      if i <= SHORT_KERNELS then short[i] = string.format("Kernel %d: %s", i, trunc(k)) end
    end
    if #kernels > SHORT_KERNELS then
      short[#short + 1] = string.format("… %d more kernels (kernel_name has all %d)", #kernels - SHORT_KERNELS, #kernels)
    end
    r.kernel_name, r.kernel_name_trunc = table.concat(full, "<br>"), table.concat(short, "<br>")
  end
  return r
end

--- The nn.Module class names in a call_stack_full cell (regex of §11.4).
function M.module_names(cell)
  if type(cell) ~= "string" then return {} end
  return tl.re.findall("nn\\.Module:\\s*([^\\s',\\]]+)", cell)
end

return M
