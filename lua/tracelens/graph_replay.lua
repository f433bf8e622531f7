--- tracelens.graph_replay — which ops of a trace merged with its capture
-- traces (`--capture_folder`) a graph launch replays: the captured ops are
-- grafted under their graph launch and retimed to it. Owns that rule; used
-- by the category data (tracelens.prepare), the rules' helper
-- (tracelens.rule) and the cards' wording (tracelens.prose).
local kernel_name = require "tracelens.kernel_name"

local M = {}

--- The runtime calls that replay a graph.
M.LAUNCH = { cudaGraphLaunch = true, hipGraphLaunch = true }

--- Whether an op name is a graph launch's synthetic op (`cudaGraphLaunch->kernel
--- (Synthetic Op)`, the perf report's name for a replayed kernel without a
--- captured op).
function M.synthetic(name)
  return kernel_name.is_synthetic(name) and M.LAUNCH[name:match("^(.-)%->") or ""] == true
end

--- For a trace with capture traces merged in (trace:capture_summary()): a
--- predicate telling an op row whose example event (`ex_UID`) sits under a
--- graph launch; nil for any other trace (no op is replayed that way).
function M.under_launch(trace)
  if not (trace and trace:capture_summary()) then return nil end
  local memo = {}
  return function(row)
    local uid = math.tointeger(tonumber(row.ex_UID))
    if not uid then return false end
    if memo[uid] == nil then
      local ev, hit, depth = trace:node(uid), false, 0
      while ev and not hit and depth < 1000 do
        hit = M.LAUNCH[ev.name] == true
        ev, depth = ev:parent(), depth + 1
      end
      memo[uid] = hit
    end
    return memo[uid]
  end
end

return M
