-- The Lua API over a trace: filters, event fields and args, tree walks,
-- info() (never echoing secrets), awkward values.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local trace = tl.load(root .. "/examples/demo_trace.json")
T.eq(tostring(trace):match("^trace "), "trace ", "trace __tostring")

-- filters in C agree with filtering in Lua
local all, kernels, on7 = 0, 0, 0
for ev in trace:events() do
  all = all + 1
  if ev.cat == "kernel" then kernels = kernels + 1 end
  if ev.cat == "kernel" and ev.tid == 7 then on7 = on7 + 1 end
end
T.eq(all, #trace, "events() visits every event")
local n = 0
for _ in trace:events{cat = "kernel"} do n = n + 1 end
T.eq(n, kernels, "cat filter")
n = 0
for _ in trace:events{cat = "kernel", tid = 7} do n = n + 1 end
T.eq(n, on7, "cat + tid filter")
n = 0
for _ in trace:events{cat = "no such category"} do n = n + 1 end
T.eq(n, 0, "unknown category matches nothing")
n = 0
for _ in trace:events{tid = "7"} do n = n + 1 end
T.eq(n, 0, "string \"7\" is not the integer 7")
n = 0
for ev in trace:events{pid = "Spans", cat = "Trace"} do n = n + 1; T.eq(ev.tid, "PyTorch Profiler", "string tid") end
T.check(n >= 1, "string pid filter")
-- within = {from, to}: the events with ts and dur wholly inside, as Lua compares them
do
  local first, last
  for ev in trace:events{cat = "kernel"} do
    first = first or ev.ts
    last = ev.ts
  end
  local from, to = first, (first + last) / 2
  local want, got = {}, {}
  for ev in trace:events() do
    if ev.ts and ev.dur and ev.ts >= from and ev.ts + ev.dur <= to then want[#want + 1] = ev.uid end
  end
  for ev in trace:events{within = {from, to}} do got[#got + 1] = ev.uid end
  T.check(#want > 0, "within: the half window holds events")
  T.eq(table.concat(got, ","), table.concat(want, ","), "within filter = filtering in Lua")
  n = 0
  for _ in trace:events{cat = "kernel", within = {from, to}} do n = n + 1 end
  local k2 = 0
  for ev in trace:events{cat = "kernel"} do if ev.dur and ev.ts >= from and ev.ts + ev.dur <= to then k2 = k2 + 1 end end
  T.eq(n, k2, "within + cat")
  T.check(not pcall(function() for _ in trace:events{within = 5} do end end), "within must be a table")
end

-- fields and args of a kernel
local k
for ev in trace:events{cat = "kernel"} do k = ev break end
T.eq(type(k.ts), "number", "ts in us")
T.eq(k.dur_ns, math.floor(k.dur * 1000 + 0.5), "dur_ns")
T.eq(k.t_end, (k.ts_ns + k.dur_ns) / 1000, "t_end")
T.eq(type(k.args), "table", "args table")
T.eq(k.args.stream, k.tid, "args.stream")
T.eq(type(k.args.correlation), "number", "args.correlation")
T.eq(type(k.args.grid), "table", "array args")
local rt = k:parent()
T.eq(rt.cat, "cuda_runtime", "kernel parent is the runtime call")
T.eq(rt.args.correlation, k.args.correlation, "same correlation")
local found = false
for _, c in ipairs(rt:children()) do if c == k then found = true end end
T.check(found, "runtime children include the kernel")
local op = k:launcher()
T.eq(op.cat, "cpu_op", "launcher is a cpu_op")
found = false
for _, g in ipairs(op:kernels()) do if g == k then found = true end end
T.check(found, "launcher's kernels() include the kernel")
T.eq(trace:node(k.uid), k, "node(uid)")
T.eq(trace:node(-1), nil, "node out of range")
T.eq(trace:node(#trace), nil, "node past the end")

-- info(): counts, device properties, no secrets
local tmp = os.tmpname()
local f = assert(io.open(tmp, "w"))
f:write([==[{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","numSms":132}],
"metadata":{"HF_TOKEN":"hf_supersecret1","env":{"AWS_SECRET_ACCESS_KEY":"aws_supersecret2"}},
"distributedInfo":{"backend":"nccl","rank":0,"auth_token":"dist_supersecret3"},
"custom_blob":{"api_key":"blob_supersecret4"},
"traceEvents":[
 {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"correlation":1,"Comms Id":18446744073709551615,"blocks per SM":"inf","deep":[[[[[[[[[[1]]]]]]]]]]}},
 {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.5,"dur":0.2,"args":{"correlation":1,"token":"arg_supersecret5"}},
 {"ph":"s","id":1,"pid":1,"tid":1,"ts":0.5,"cat":"ac2g","name":"ac2g"},
 {"ph":"f","id":1,"pid":0,"tid":7,"ts":1,"cat":"ac2g","name":"ac2g","bp":"e"}]}]==])
f:close()
local t2 = tl.load(tmp)
os.remove(tmp)
local info = t2:info()
T.eq(info.num_events, 4, "info num_events")
T.eq(info.device_properties[1].name, "NVIDIA H100 80GB HBM3", "device properties")
T.eq(info.metadata.distributedInfo.backend, "nccl", "distributedInfo kept")
local seen = {}
local function walk(v, depth)
  if depth > 20 then return end
  if type(v) == "table" then for key, x in pairs(v) do walk(key, depth + 1) walk(x, depth + 1) end
  else seen[#seen + 1] = tostring(v) end
end
walk(info, 0)
local blob = table.concat(seen, "\n")
for i = 1, 4 do T.check(not blob:find("supersecret" .. i), "info() does not echo secret " .. i) end
T.check(blob:find("custom_blob", 1, true), "unknown top-level keys are listed by name")
local kev = t2:node(0)
T.eq(kev.args["Comms Id"], "18446744073709551615", "uint64 beyond int64 kept exactly as text")
T.eq(kev.args["blocks per SM"], "inf", "numeric-looking strings stay strings")
T.eq(kev.args.deep[1][1][1][1][1][1][1][1][1][1], 1, "nested args")
T.eq(kev:launcher().name, "cudaLaunchKernel", "launcher falls back to the runtime call")
T.finish()
