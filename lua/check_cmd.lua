-- check_cmd.lua — `tracelens check TRACE...`: the trace health check
-- (lua/tracelens/health.lua). Returns the exit status: 0 healthy (notes
-- only), 3 a warning or a failed check, 1 input error, 2 usage error.
local health = require "tracelens.health"
local json = require "tracelens.json"

local USAGE = [[
usage: tracelens check TRACE... [--json] [-q]

A health check of a PyTorch profiler trace: what limits what an analysis
can say, and records that cannot be right, each with what to change in the
profiler call. Checks: GPU work present; GPU events whose launch runs under
no CPU op (older or sampled traces) or is not in the trace; launch calls
without GPU work; input shapes (record_shapes); Python stacks (with_stack);
graph replays without capture traces; ProfilerStep#N and GPU work outside
the steps; overlapping work on one stream (> 1 us); negative and zero
durations; GPU work starting before its launch (> 1 us: clock offsets).

options:
  --json      JSON instead of text: one object (path, checks, figures) for one
              trace, an array of them for several
  -q          print only the verdict line of each trace
  -h, --help  this help

Exit status: 0 healthy (notes only), 3 some check warned or failed,
1 a trace could not be read, 2 usage error.
]]

local function main(argv)
  local traces, as_json, quiet = {}, false, false
  for _, a in ipairs(argv) do
    if a == "-h" or a == "--help" then
      io.write(USAGE)
      return 0
    elseif a == "--json" then
      as_json = true
    elseif a == "-q" or a == "--quiet" then
      quiet = true
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      io.stderr:write("tracelens: check: unknown option '", a, "' (see `tracelens check --help`)\n")
      return 2
    else
      traces[#traces + 1] = a
    end
  end
  if #traces == 0 then
    io.stderr:write("tracelens: check: no trace given (see `tracelens check --help`)\n")
    return 2
  end
  local status = 0
  local objects = {} -- --json: the traces' objects, written at the end
  for _, path in ipairs(traces) do
    local ok, trace = pcall(tl.load, path)
    if not ok then
      io.stderr:write("tracelens: ", tostring(trace):gsub("^tracelens: ", ""), "\n")
      return 1
    end
    local checks, figures = health.checks(trace)
    local t = health.tally(checks)
    if t.warn + t.fail > 0 then status = 3 end
    if as_json then
      local arr = {}
      for i, c in ipairs(checks) do
        arr[i] = json.obj("id", c.id, "level", c.level, "title", c.title, "detail", c.detail, "fix", c.fix or json.null)
      end
      local keys, fig = {}, json.obj()
      for k in pairs(figures) do keys[#keys + 1] = k end
      table.sort(keys)
      for _, k in ipairs(keys) do fig[k] = figures[k] end
      objects[#objects + 1] = json.obj("path", path, "checks", json.arr(arr), "figures", fig)
    elseif quiet then
      io.write(health.verdict(checks, true), "  ", path, "\n")
    else
      io.write(health.format(path, checks))
    end
  end
  if as_json then io.write(json.encode(#objects == 1 and objects[1] or json.arr(objects)), "\n") end
  return status
end

return main({ ... })
