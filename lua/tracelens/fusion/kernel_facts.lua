-- tracelens.fusion.kernel_facts — what the trace says about each kernel a
-- fusion candidate lists, beyond its name and duration: the GPU stream it
-- ran on, the CPU operation that launched it and that operation's parent.
-- The fusion rules (tracelens.fusion_rules) read them to tell kernels on
-- different streams (no chain) and, in an autograd backward node, an add
-- that autograd launches to accumulate a gradient (not part of the node's
-- own backward function).
--
-- The facts travel beside fusion_candidates.json, not in it (its schema is
-- the reference's): a table keyed by the kernel's gpu_op_uid as a string,
-- {stream = <tid>, op = <launching op name>, op_parent = <its parent's name>}.
local M = {}

local function kernels_of(c)
  return c.kernels_trace1 or c.kernels or {}
end

--- facts(trace, candidates) -> {[tostring(uid)] = {stream=, op=, op_parent=}}
--- for every kernel (gpu_op_uid) the candidates list; kernels the trace
--- does not hold are left out.
function M.facts(trace, candidates)
  local out = {}
  if not trace then return out end
  for _, c in ipairs(candidates or {}) do
    for _, k in ipairs(kernels_of(c)) do
      local uid = math.tointeger(tonumber(k.gpu_op_uid))
      local key = uid and tostring(uid)
      if key and out[key] == nil then
        local ev = trace:node(uid)
        if ev then
          local op = ev:launcher()
          local parent = op and op:parent()
          out[key] = { stream = ev.tid, op = op and op.name or nil, op_parent = parent and parent.name or nil }
        end
      end
    end
  end
  return out
end

return M
