-- trace:annotation_times() and the user_annotations sheet: a trace built here
-- (nested and repeated ranges, a launch from another thread of the process
-- and one from another process, a GPU-only annotation) with hand-counted
-- figures; and on a shared trace, every name's figures recomputed here from
-- the raw JSON (cjson).
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"
local dir = T.tmpdir()
local X, F = T.x_event, T.flow_event

local ev = {}
local function add(...) for _, e in ipairs({ ... }) do ev[#ev + 1] = e end end
local function launched(corr, pid, tid, lts, kts, kdur)
  add(X("cuda_runtime", "cudaLaunchKernel", lts, 5, { correlation = tostring(corr) }, pid, tid), F("s", corr, pid, tid, lts))
  add(X("kernel", "k" .. corr, kts, kdur, { correlation = tostring(corr), stream = "7" }, 0, 7), F("f", corr, 0, 7, kts))
end
add(X("user_annotation", "fwd", 0, 1000, {}, 1, 1))
add(X("user_annotation", "fwd", 50, 50, {}, 1, 1))      -- nested in the first: counted, its launches once
add(X("user_annotation", "inner", 100, 200, {}, 1, 1))
add(X("user_annotation", "bwd", 1000, 800, {}, 1, 2))
add(X("user_annotation", "fwd", 2000, 500, {}, 1, 1))
add(X("gpu_user_annotation", "fwd", 400, 300, {}, 0, 7))
add(X("gpu_user_annotation", "gpuonly", 10, 10, {}, 0, 7))
launched(1, 1, 1, 150, 400, 100)   -- in fwd and inner
launched(2, 1, 1, 600, 450, 250)   -- in fwd; overlaps k1: union [400, 700)
launched(3, 1, 3, 1200, 1300, 100) -- another thread of the process, in bwd's range
launched(4, 5, 1, 2100, 2200, 100) -- another process, in fwd's time range: not fwd's
launched(5, 1, 1, 2400, 2450, 20)  -- in the second fwd
local path = dir .. "/annot.json"
local f = assert(io.open(path, "w"))
f:write('{"traceEvents":[', table.concat(ev, ",\n"), "]}")
f:close()

local t = tl.load(path)
local a = t:annotation_times()
T.eq(#a, 4, "four names")
local by = {}
for i, x in ipairs(a) do by[x.name] = x; x.i = i end
T.eq(by.fwd.i, 1, "by CPU time: fwd first")
T.eq(by.bwd.i, 2, "bwd second")
T.eq(by.inner.i, 3, "inner third")
T.eq(by.gpuonly.i, 4, "the GPU-only name last")
T.eq(by.fwd.cpu_count, 3, "three fwd ranges")
T.close(by.fwd.cpu_us, 1550, "1000 + 50 + 500 (nested ones add up)", 0, 1e-9)
T.eq(by.fwd.gpu_annotation_count, 1, "one GPU-side fwd")
T.close(by.fwd.gpu_annotation_us, 300, "its duration", 0, 1e-9)
T.eq(by.fwd.gpu_events_launched, 3, "k1, k2, k5 (k4 is another process's)")
T.close(by.fwd.gpu_launched_busy_us, 320, "union [400, 700) + [2450, 2470)", 0, 1e-9)
T.eq(by.inner.gpu_events_launched, 1, "inner launched k1")
T.close(by.inner.gpu_launched_busy_us, 100, "k1", 0, 1e-9)
T.eq(by.bwd.gpu_events_launched, 1, "bwd: k3, launched by another thread")
T.eq(by.gpuonly.cpu_count, 0, "no CPU range")
T.close(by.gpuonly.gpu_annotation_us, 10, "GPU-only annotation", 0, 1e-9)

local sh = t:report{ platform = "none" }.user_annotations
T.check(sh ~= nil, "user_annotations sheet written")
T.eq(sh:nrows(), 4, "a row per name")
T.eq(sh:get(1, "name"), "fwd", "fwd first")
T.close(sh:get(1, "cpu_time_ms"), 1.55, "sheet CPU time (ms)", 0, 1e-12)
T.close(sh:get(1, "gpu_launched_busy_ms"), 0.32, "sheet launched busy (ms)", 0, 1e-12)
T.eq(sh:get(4, "cpu_time_ms"), nil, "no CPU time without a CPU range")
T.check(t:report{ user_annotations = false, platform = "none" }.user_annotations == nil,
  "user_annotations = false omits it")

-- only GPU-side annotations, no launch: no CPU range to sort (UBSan: qsort of nothing)
local p2 = dir .. "/gpu_only.json"
f = assert(io.open(p2, "w"))
f:write('{"traceEvents":[', X("gpu_user_annotation", "g", 0, 10, {}, 0, 7), ",",
  X("kernel", "k", 0, 5, { stream = "7" }, 0, 7), "]}")
f:close()
local a2 = tl.load(p2):annotation_times()
T.eq(#a2, 1, "a GPU-only trace: one name")
T.eq(a2[1].cpu_count, 0, "no CPU range")
T.eq(a2[1].gpu_events_launched, 0, "nothing launched")

local shared = data and data .. "/multirank/world8/ranks/rank0_trace.json.gz"
if shared and T.file_exists(shared) then
  local ok, code, text = T.run("gzip -dc " .. T.q(shared))
  T.check(ok, "gzip -dc exit " .. tostring(code))
  local evs = cjson.decode(text).traceEvents
  local function ns(v)
    local w = math.floor(v)
    return w * 1000 + math.floor((v - w) * 1000 + 0.5)
  end
  local call, names, gpu = {}, {}, {}
  local function rec(n)
    names[n] = names[n] or { cpu = 0, ncpu = 0, gpu = 0, ngpu = 0, ranges = {} }
    return names[n]
  end
  for _, e in ipairs(evs) do
    local a = e.args or {}
    if (e.cat == "cuda_runtime" or e.cat == "cuda_driver") and a.correlation then call[a.correlation] = e end
    if e.ph == "X" and e.cat == "user_annotation" then
      local r = rec(e.name)
      r.ncpu, r.cpu = r.ncpu + 1, r.cpu + ns(e.dur)
      r.ranges[#r.ranges + 1] = { pid = e.pid, s = ns(e.ts), e = ns(e.ts) + ns(e.dur) }
    elseif e.ph == "X" and e.cat == "gpu_user_annotation" then
      local r = rec(e.name)
      r.ngpu, r.gpu = r.ngpu + 1, r.gpu + ns(e.dur)
    end
  end
  for _, e in ipairs(evs) do
    local a = e.args or {}
    if e.ph == "X" and (e.cat == "kernel" or e.cat == "gpu_memcpy" or e.cat == "gpu_memset") and a.correlation
        and call[a.correlation] then
      local c = call[a.correlation]
      gpu[#gpu + 1] = { pid = c.pid, l = ns(c.ts), s = ns(e.ts), e = ns(e.ts) + ns(e.dur) }
    end
  end
  local got = {}
  for _, x in ipairs(tl.load(shared):annotation_times()) do got[x.name] = x end
  local n = 0
  for name, r in pairs(names) do
    n = n + 1
    local iv = {}
    for _, g in ipairs(gpu) do
      for _, rg in ipairs(r.ranges) do
        if g.pid == rg.pid and g.l >= rg.s and g.l < rg.e then iv[#iv + 1] = g break end
      end
    end
    table.sort(iv, function(p, q) return p.s < q.s end)
    local busy, cs, ce = 0, nil, nil
    for _, g in ipairs(iv) do
      if cs and g.s <= ce then ce = math.max(ce, g.e)
      else
        if cs then busy = busy + ce - cs end
        cs, ce = g.s, g.e
      end
    end
    if cs then busy = busy + ce - cs end
    local x = got[name]
    T.check(x ~= nil, "shared: " .. name .. " reported")
    if x then
      T.eq(x.cpu_count, r.ncpu, "shared: " .. name .. " CPU count")
      T.eq(x.cpu_us, r.cpu / 1000, "shared: " .. name .. " CPU time")
      T.eq(x.gpu_annotation_count, r.ngpu, "shared: " .. name .. " GPU annotations")
      T.eq(x.gpu_annotation_us, r.gpu / 1000, "shared: " .. name .. " GPU annotation time")
      T.eq(x.gpu_events_launched, #iv, "shared: " .. name .. " GPU events launched")
      T.eq(x.gpu_launched_busy_us, busy / 1000, "shared: " .. name .. " launched busy")
    end
  end
  local m = 0
  for _ in pairs(got) do m = m + 1 end
  T.eq(m, n, "shared: as many names")
  T.check(n > 3, "shared: the trace has annotations")
else
  print("note: ../shared/data not found: the shared-trace annotation times are skipped")
end
T.rmrf(dir)
T.finish()
