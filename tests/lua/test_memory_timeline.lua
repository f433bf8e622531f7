-- trace:memory_timeline() and the memory_peak / memory_timeline sheets
-- (issue 16): the `[memory]` instant events of profile_memory traces per
-- device, their peaks, the op running at each peak and the max-downsampled
-- timeline. A trace built here with the samples worked out by hand; and on
-- a shared trace every figure recomputed here from the raw JSON (cjson).
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"
local dir = T.tmpdir()
local X = T.x_event

local function mem(ts, alloc, res, bytes, dtype, did)
  return string.format('{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":%d,'
    .. '"args":{"Total Reserved":%d,"Total Allocated":%d,"Bytes":%d,"Addr":1,"Device Id":%d,"Device Type":%d}}',
    ts, res, alloc, bytes, did, dtype)
end
local ev = {
  X("cpu_op", "outer", 0, 100, {}), X("cpu_op", "aten::empty", 10, 20, {}),
  mem(5, 100, 1000, 100, 1, 0),
  mem(15, 300, 2000, 200, 1, 0),  -- the peak, inside aten::empty
  mem(60, 300, 2000, 200, 1, 0),  -- the same level again: the first one is the peak (written before ts 40)
  mem(40, 100, 2000, -200, 1, 0),
  mem(90, 50, 2000, -250, 1, 0),
  mem(50, 8, 0, 8, 0, -1),        -- the CPU
  X("kernel", "k", 0, 5, { stream = "7" }, 0, 7), -- the report wants GPU work
}
local path = dir .. "/mem.json"
local f = assert(io.open(path, "w"))
f:write('{"traceEvents":[', table.concat(ev, ",\n"), "]}")
f:close()

local t = tl.load(path)
local m = t:memory_timeline{ samples = 9 }
T.eq(#m, 2, "two devices")
local cpu, gpu = m[1], m[2]
T.eq(cpu.device_type, 0, "the CPU first (Device Type 0)")
T.eq(gpu.device_type, 1, "then CUDA")
T.eq(gpu.device_id, 0, "device 0")
T.eq(gpu.events, 5, "five GPU events")
T.eq(gpu.allocations, 3, "three allocations")
T.eq(gpu.frees, 2, "two frees")
T.eq(gpu.bytes_allocated, 500, "bytes allocated")
T.eq(gpu.bytes_freed, 450, "bytes freed")
T.eq(gpu.peak_allocated, 300, "peak allocated")
T.close(gpu.peak_allocated_ts, 15, "the first event to reach it", 0, 1e-9)
T.eq(gpu.peak_allocated_op, "aten::empty", "the innermost op then")
T.eq(gpu.peak_reserved, 2000, "peak reserved")
T.eq(gpu.peak_reserved_op, "aten::empty", "reserved peak op")
T.eq(gpu.end_allocated, 50, "at the end")
-- span 85001 ns in 9 samples of 9444.56 ns: each holds the carried level and its events' levels
local want = { 100, 300, 300, 300, 100, 300, 300, 300, 300 }
T.eq(#gpu.samples, 9, "nine samples")
for k, s in ipairs(gpu.samples) do T.eq(s.allocated, want[k], "sample " .. k) end
T.close(gpu.samples[2].ts, 14.444, "sample 2 starts at 5 us + 9444 ns", 0, 1e-9)
T.eq(gpu.samples[2].reserved, 2000, "reserved sampled too")
T.eq(#cpu.samples, 1, "one event: one sample")
T.eq(cpu.peak_allocated_op, "outer", "the CPU allocation inside outer only")

-- the same events in ts order in the file (grouped by device without sorting): the same figures
local ordered = { ev[1], ev[2], ev[3], ev[4], ev[6], ev[8], ev[5], ev[7], ev[9] }
local opath = dir .. "/mem_ordered.json"
f = assert(io.open(opath, "w"))
f:write('{"traceEvents":[', table.concat(ordered, ",\n"), "]}")
f:close()
local mo = tl.load(opath):memory_timeline{ samples = 9 }
T.eq(#mo, 2, "in order: two devices")
T.eq(mo[2].peak_allocated_op, "aten::empty", "in order: the peak's op")
T.close(mo[2].peak_allocated_ts, 15, "in order: the first event to reach the peak", 0, 1e-9)
for k, smp in ipairs(mo[2].samples) do T.eq(smp.allocated, want[k], "in order: sample " .. k) end
T.eq(mo[1].events, 1, "in order: the CPU's event")

local rep = t:report{ platform = "none" }
T.check(rep.memory_peak ~= nil and rep.memory_timeline ~= nil, "memory_peak and memory_timeline written")
if rep.memory_peak then
  local p = rep.memory_peak
  T.eq(p:get(2, "device"), "cuda:0", "sheet device label")
  T.close(p:get(2, "peak_allocated_mib"), 300 / 1048576, "sheet peak MiB", 1e-12, 0)
  T.close(p:get(2, "peak_allocated_at_ms"), 0.015, "sheet: ms from the trace's first event (ts 0)", 0, 1e-12)
  T.eq(p:get(2, "peak_allocated_op"), "aten::empty", "sheet op")
  T.eq(rep.memory_timeline:nrows(), 16 + 1, "16 samples for the GPU (5 events: at least 16), one for the CPU (1 ns)")
end
T.check(t:report{ memory_timeline = false, platform = "none" }.memory_peak == nil, "memory_timeline = false omits both")

-- the command line: written by default, omitted with --no-memory-timeline
for _, flag in ipairs({ "", "--no-memory-timeline" }) do
  local out = dir .. "/cli" .. #flag
  local okc, rc, _, se = T.run(T.q(T.tracelens_bin()) .. " report -q --no-xlsx --platform none " .. flag .. " "
    .. T.q(path) .. " -o " .. T.q(out))
  T.check(okc, "report " .. flag .. " exit " .. tostring(rc) .. ": " .. tostring(se))
  T.eq(T.file_exists(out .. "/perf_report_csvs/memory_peak.csv"), flag == "", "memory_peak.csv with [" .. flag .. "]")
end

-- A shared trace ------------------------------------------------------------------
local shared = data and data .. "/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
if shared and T.file_exists(shared) then
  local okz, code, text = T.run("gzip -dc " .. T.q(shared))
  T.check(okz, "gzip -dc exit " .. tostring(code))
  local evs = cjson.decode(text).traceEvents
  local function ns(v)
    local w = math.floor(v)
    return w * 1000 + math.floor((v - w) * 1000 + 0.5)
  end
  local devs, keys, ops = {}, {}, {}
  for uid, e in ipairs(evs) do
    local a = e.args or {}
    if e.name == "[memory]" and type(e.ts) == "number" and math.tointeger(a["Total Allocated"]) then
      local k = a["Device Type"] * 1000 + a["Device Id"]
      if not devs[k] then
        devs[k] = { ty = a["Device Type"], id = a["Device Id"], ev = {} }
        keys[#keys + 1] = k
      end
      local d = devs[k].ev
      d[#d + 1] = { ts = ns(e.ts), uid = uid, a = a["Total Allocated"], r = a["Total Reserved"], b = a.Bytes,
        pid = e.pid, tid = e.tid }
    elseif e.cat == "cpu_op" and type(e.ts) == "number" then
      ops[#ops + 1] = { ts = ns(e.ts), e = ns(e.ts) + ns(e.dur or 0), name = e.name, pid = e.pid, tid = e.tid }
    end
  end
  table.sort(keys)
  local function op_at(x)
    local best
    for _, o in ipairs(ops) do
      if o.pid == x.pid and o.tid == x.tid and o.ts <= x.ts and o.e >= x.ts then
        if not best or o.ts > best.ts or (o.ts == best.ts and o.e - o.ts < best.e - best.ts) then best = o end
      end
    end
    return best and best.name
  end
  local got = tl.load(shared):memory_timeline()
  T.eq(#got, #keys, "shared: devices")
  for i, k in ipairs(keys) do
    local d, g = devs[k], got[i] or {}
    table.sort(d.ev, function(x, y) if x.ts ~= y.ts then return x.ts < y.ts end return x.uid < y.uid end)
    local what = "shared: device " .. d.ty .. ":" .. d.id
    T.eq(g.device_type, d.ty, what .. " type")
    T.eq(g.device_id, d.id, what .. " id")
    T.eq(g.events, #d.ev, what .. " events")
    local pa, pr, na, nf, ba, bf = d.ev[1], d.ev[1], 0, 0, 0, 0
    for _, x in ipairs(d.ev) do
      if x.a > pa.a then pa = x end
      if x.r > pr.r then pr = x end
      if x.b > 0 then na, ba = na + 1, ba + x.b elseif x.b < 0 then nf, bf = nf + 1, bf - x.b end
    end
    T.eq(g.allocations, na, what .. " allocations")
    T.eq(g.frees, nf, what .. " frees")
    T.eq(g.bytes_allocated, ba, what .. " bytes allocated")
    T.eq(g.bytes_freed, bf, what .. " bytes freed")
    T.eq(g.peak_allocated, pa.a, what .. " peak allocated")
    T.close(g.peak_allocated_ts, pa.ts / 1000, what .. " peak allocated at", 0, 1e-6)
    T.eq(g.peak_allocated_op, op_at(pa), what .. " op at the allocated peak")
    T.eq(g.peak_reserved, pr.r, what .. " peak reserved")
    T.eq(g.peak_reserved_op, op_at(pr), what .. " op at the reserved peak")
    T.eq(g.end_allocated, d.ev[#d.ev].a, what .. " end allocated")
    -- the samples: the carried level and each event's, per equal part of the span
    local first, last = d.ev[1].ts, d.ev[#d.ev].ts
    local span = last - first + 1
    local nb = math.min(100, math.max(#d.ev, 16), span)
    local w = span / nb
    local j, lvl = 1, d.ev[1].a
    local okall = #(g.samples or {}) == nb
    for kk = 0, nb - 1 do
      local e = kk + 1 == nb and last + 1 or first + math.floor((kk + 1) * w)
      local mx = lvl
      while j <= #d.ev and d.ev[j].ts < e do
        lvl = d.ev[j].a
        mx = math.max(mx, lvl)
        j = j + 1
      end
      local s = (g.samples or {})[kk + 1]
      if not s or s.allocated ~= mx then okall = false end
    end
    T.check(okall, what .. " samples")
    d.pa, d.pr = pa, pr
  end
  -- the report's memory_peak sheet: the same peaks in MiB, their times from the trace's first timestamp
  local t0
  for _, e in ipairs(evs) do
    if type(e.ts) == "number" and (not t0 or ns(e.ts) < t0) then t0 = ns(e.ts) end
  end
  local out = dir .. "/r"
  local okr, rc, _, se = T.run(T.q(T.tracelens_bin()) .. " report -q --no-xlsx " .. T.q(shared) .. " -o " .. T.q(out))
  T.check(okr, "report exit " .. tostring(rc) .. ": " .. tostring(se))
  local rows = T.csv_records(out .. "/perf_report_csvs/memory_peak.csv")
  T.eq(#rows, #keys, "shared: memory_peak rows")
  for i, k in ipairs(keys) do
    local d, r = devs[k], rows[i] or {}
    local label = d.ty == 0 and "cpu" or ("cuda:" .. math.tointeger(d.id))
    T.eq(r.device, label, "shared: sheet device " .. label)
    T.close(tonumber(r.peak_allocated_mib), d.pa.a / 1048576, "shared: sheet peak allocated " .. label, 1e-12, 0)
    T.close(tonumber(r.peak_allocated_at_ms), (d.pa.ts - t0) / 1e6, "shared: sheet peak time " .. label, 1e-12, 1e-9)
    T.close(tonumber(r.peak_reserved_mib), d.pr.r / 1048576, "shared: sheet peak reserved " .. label, 1e-12, 0)
    T.eq(r.peak_allocated_op, op_at(d.pa), "shared: sheet op " .. label)
  end
else
  print("note: ../shared/data not found: the shared-trace memory timeline is skipped")
end
T.rmrf(dir)
T.finish()
