-- A trace with no ac2g flow at all (a sampled or filtered trace) links each
-- GPU event to its launch call by correlation id, but only when exactly one
-- kernel/copy/memset launch call and exactly one GPU event carry the id
-- (src/trace/tree.c); a trace with any flow links through flows only, as the
-- reference does. Hand-built traces, expected links counted by hand.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local health = require "tracelens.health"

local ev, flow = T.x_event, T.flow_event
local tmp = T.tmpdir()
local DEV = '"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}]'

local function kernel(name, ts, corr) return ev("kernel", name, ts, 10, { correlation = corr, stream = 7, device = 0 }, 0, 7) end
local function launch(ts, corr, name) return ev("cuda_runtime", name or "cudaLaunchKernel", ts, 5, { correlation = corr }) end
local function op(name, ts, dur) return ev("cpu_op", name, ts, dur, { ["External id"] = ts }) end

local function load(name, events)
  local path = tmp .. "/" .. name .. ".json"
  tl.fs.write_file(path, "{" .. DEV .. ',"traceEvents":[\n' .. table.concat(events, ",\n") .. "\n]}\n")
  return tl.load(path)
end

-- launcher name of each kernel, in file order
local function launchers(trace)
  local out = {}
  for k in trace:events{ cat = "kernel" } do
    local o = k:launcher()
    out[#out + 1] = o and o.name or "-"
  end
  return out
end

-- 1. no flows: ids 1 and 2 link; id 3 has two kernels, id 4 two launch calls,
-- id 5 only a synchronisation call (not a launch): none of those link
local t1 = load("noflow", {
  op("aten::mm", 100, 50), launch(110, 1),
  op("aten::add", 200, 50), launch(210, 2),
  op("aten::mul", 300, 50), launch(310, 3),
  op("aten::sub", 400, 50), launch(410, 4), launch(420, 4),
  op("aten::item", 500, 50), launch(510, 5, "cudaStreamSynchronize"),
  kernel("k1", 1000, 1), kernel("k2", 1100, 2), kernel("k3a", 1200, 3), kernel("k3b", 1300, 3),
  kernel("k4", 1400, 4), kernel("k5", 1500, 5),
})
T.eq(table.concat(launchers(t1), " "), "aten::mm aten::add - - - -", "no flows: unique ids link, ambiguous ones do not")
T.eq(t1:check().gpu_linked_by_correlation, 2, "no flows: trace:check() counts the 2 linked events")
local linked_note
for _, c in ipairs(health.checks(t1)) do if c.id == "linked_by_correlation" then linked_note = c end end
T.check(linked_note and linked_note.level == "note" and linked_note.detail:find("so 2 GPU events were linked", 1, true),
  "no flows: the health note counts the 2 linked events: " .. tostring(linked_note and linked_note.detail))

-- 2. one flow in the trace: k2's launch has no flow and stays unlinked
local t2 = load("oneflow", {
  op("aten::mm", 100, 50), launch(110, 1), flow("s", 1, 1, 1, 110),
  op("aten::add", 200, 50), launch(210, 2),
  kernel("k1", 1000, 1), flow("f", 1, 0, 7, 1000), kernel("k2", 1100, 2),
})
T.eq(table.concat(launchers(t2), " "), "aten::mm -", "with flows: no linking by correlation")
T.eq(t2:check().gpu_linked_by_correlation, 0, "with flows: nothing linked by correlation")
for _, c in ipairs(health.checks(t2)) do
  T.check(c.id ~= "linked_by_correlation", "with flows: no linked-by-correlation note")
end
T.rmrf(tmp)
T.finish()
