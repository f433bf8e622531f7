-- trace:idle_breakdown() and the idle_breakdown sheet: a trace built here
-- whose gaps are counted by hand (each cause, an overlap on a stream, a
-- second device, both thresholds); and on a shared trace, every stream's
-- gaps recomputed here from the raw JSON (cjson): per (pid, stream) in start
-- order, each gap classified by the rules of docs/compat.md.
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"
local dir = T.tmpdir()

-- events with fractional µs (gaps of a few ns)
local function X(cat, name, ts, dur, args, pid, tid)
  local a = {}
  for k, v in pairs(args or {}) do a[#a + 1] = string.format("%q:%s", k, v) end
  table.sort(a)
  return string.format('{"ph":"X","cat":"%s","name":%q,"pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{%s}}', cat,
    name, pid or 1, tid or 1, ts, dur, table.concat(a, ","))
end
local function F(ph, id, pid, tid, ts)
  return string.format('{"ph":"%s","cat":"ac2g","name":"ac2g","id":%d,"pid":%d,"tid":%d,"ts":%.3f%s}', ph, id, pid,
    tid, ts, ph == "f" and ',"bp":"e"' or "")
end
local function launch(corr, ts) return X("cuda_runtime", "cudaLaunchKernel", ts, 5, { correlation = tostring(corr) }), F("s", corr, 1, 1, ts) end
local function kernel(corr, name, ts, dur, pid, stream)
  return X("kernel", name, ts, dur, { correlation = tostring(corr), stream = tostring(stream) }, pid, stream),
      F("f", corr, pid, stream, ts)
end

local ev = {}
local function add(...) for _, e in ipairs({ ... }) do ev[#ev + 1] = e end end
-- device 0, stream 7
add(launch(1, 100)); add(kernel(1, "A", 1000, 100, 0, 7))
add(launch(2, 200)); add(kernel(2, "B", 1100.02, 49.98, 0, 7))      -- gap 20 ns: kernel wait
add(launch(3, 1300)); add(kernel(3, "C", 1310, 90, 0, 7))           -- gap 160 µs, launched after B ended: host wait
add(launch(4, 300)); add(kernel(4, "D", 1500, 20, 0, 7))            -- gap 100 µs, launched long before: other
add(X("kernel", "E", 1530, 10, { stream = "7" }, 0, 7))             -- gap 10 µs, no launch: other
add(X("gpu_memcpy", "Memcpy DtoD", 1535, 10, { stream = "7" }, 0, 7)) -- overlaps E: no gap, busy +5
-- device 0, stream 9: one kernel
add(launch(5, 400)); add(kernel(5, "G", 1050, 200, 0, 9))
-- device 1, stream 7
add(launch(6, 500)); add(kernel(6, "H", 2000, 10, 1, 7))
local path = T.write_trace(dir .. "/idle.json", ev)

local t = tl.load(path)
local s, all = t:idle_breakdown()
T.eq(#s, 3, "three (device, stream) pairs")
local s7, s9, d1 = s[1], s[2], s[3]
T.eq(s7.device, 0, "device from the pid")
T.eq(s7.stream, 7, "stream 7 first")
T.eq(s9.stream, 9, "then stream 9")
T.eq(d1.device, 1, "then device 1")
T.eq(s7.gpu_events, 6, "six events on stream 7")
T.close(s7.span_us, 545, "span 1000..1545", 0, 1e-6)
T.close(s7.busy_us, 274.98, "busy 100 + 49.98 + 90 + 20 + 10 + 5", 0, 1e-6)
T.close(s7.idle_us, 270.02, "idle = span - busy", 0, 1e-6)
T.close(s7.kernel_wait_us, 0.02, "kernel wait: the 20 ns gap (< 30 ns)", 0, 1e-9)
T.close(s7.host_wait_us, 160, "host wait: C launched after B ended", 0, 1e-6)
T.close(s7.other_wait_us, 110, "other: D launched early (100) and E unlinked (10)", 0, 1e-6)
T.eq(s7.kernel_wait_gaps, 1, "one kernel-wait gap")
T.eq(s7.host_wait_gaps, 1, "one host-wait gap")
T.eq(s7.other_wait_gaps, 2, "two other gaps")
T.eq(s7.gaps, 4, "the overlap leaves no gap")
T.close(s7.micro_idle_us, 0.02, "micro: gaps under 10 µs", 0, 1e-9)
T.close(s7.macro_idle_us, 270, "macro: 160 + 100 + 10 (10 is not under 10)", 0, 1e-6)
T.close(s9.idle_us, 0, "a single kernel: no idle", 0, 1e-9)
T.eq(all.kernel_wait_threshold_ns, 30, "HTA's consecutive_kernel_delay")
T.close(all.micro_idle_threshold_us, 10, "default micro threshold", 0, 1e-12)
T.eq(all.gpu_events, 8, "every GPU event in the union")
T.close(all.span_us, 1010, "union span 1000..2010", 0, 1e-6)
T.close(all.busy_us, 385, "union busy 250 + 90 + 20 + 15 + 10", 0, 1e-6)
T.close(all.idle_us, 625, "union gaps 60 + 100 + 10 + 455", 0, 1e-6)
T.eq(all.host_wait_us, nil, "no cause over the union")
-- host wait after a blocking call (by hand): A [1000, 1100) while thread 1 waits in cudaStreamSynchronize
-- [1050, 1102); B launched at 1120 runs [1130, 1150): its 30 µs gap opened during the wait (after a sync).
-- C launched at 1160 runs [1200, 1210): 50 µs, no blocking call. A cudaDeviceSynchronize on thread 2 spans
-- the moment C ends, and a cudaMemcpyAsync on thread 1 starts after it; D launched (thread 1) at 1230 runs
-- [1240, 1250): 30 µs, not after a sync (the blocked thread is not the launching one; the copy began later).
do
  local ev2 = {}
  local function add2(...) for _, e in ipairs({ ... }) do ev2[#ev2 + 1] = e end end
  add2(launch(1, 100)); add2(kernel(1, "A", 1000, 100, 0, 7))
  add2(X("cuda_runtime", "cudaStreamSynchronize", 1050, 52, { correlation = "10" }))
  add2(launch(2, 1120)); add2(kernel(2, "B", 1130, 20, 0, 7))
  add2(launch(3, 1160)); add2(kernel(3, "C", 1200, 10, 0, 7))
  add2(X("cuda_runtime", "cudaDeviceSynchronize", 1205, 15, { correlation = "11" }, 1, 2))
  add2(X("cuda_runtime", "cudaMemcpyAsync", 1215, 1, { correlation = "12" }))
  add2(launch(4, 1230)); add2(kernel(4, "D", 1240, 10, 0, 7))
  local st = tl.load(T.write_trace(dir .. "/idle_sync.json", ev2)):idle_breakdown()
  T.close(st[1].host_wait_us, 110, "sync trace: host wait 30 + 50 + 30", 0, 1e-6)
  T.close(st[1].host_sync_wait_us, 30, "after a sync: only B's gap (the launching thread blocked across A's end)",
    0, 1e-6)
  T.eq(st[1].host_sync_wait_gaps, 1, "one gap after a sync")
end

local s2, all2 = t:idle_breakdown{ kernel_wait_ns = 0, micro_idle_thresh_us = 15 }
T.close(s2[1].kernel_wait_us, 0, "threshold 0: no kernel wait", 0, 1e-12)
T.close(s2[1].other_wait_us, 110.02, "the 20 ns gap is then other (B launched before A ended)", 0, 1e-6)
T.close(s2[1].micro_idle_us, 10.02, "micro under 15 µs: 0.02 + 10", 0, 1e-6)
T.close(all2.micro_idle_us, 10, "union micro under 15 µs: 10", 0, 1e-6)
T.close(all2.macro_idle_us, 615, "union macro", 0, 1e-6)

-- idle time with launched work waiting: each linked event waits from its launch call's end to its
-- start; H (device 1, launched at 500) waits through every gap of the union: 625 µs
T.close(all.queued_idle_us, 625, "queued idle: H waits from 505 to 2000", 0, 1e-6)
T.eq(all.longest_queued, "H", "the longest wait")
T.close(all.longest_queued_idle_us, 625, "H's own wait covers every gap", 0, 1e-6)
do
  local e2 = {}
  local function add2(...) for _, e in ipairs({ ... }) do e2[#e2 + 1] = e end end
  add2(launch(11, 100)); add2(kernel(11, "K1", 1000, 100, 0, 7))
  add2(launch(12, 1150)); add2(kernel(12, "K2", 1200, 100, 0, 7))   -- gap 1100..1200, queued from 1155: 45
  add2(launch(13, 1250)); add2(kernel(13, "K3", 1500, 100, 0, 7))   -- gap 1300..1500, queued from 1255: 200
  add2(X("kernel", "K4", 1700, 10, { stream = "7" }, 0, 7))         -- gap 1600..1700, unlinked: nothing queued
  add2(launch(15, 1795)); add2(kernel(15, "K5", 1800, 10, 0, 7))    -- starts before its call ends: no wait
  local t2 = tl.load(T.write_trace(dir .. "/queued.json", e2))
  local _, a2 = t2:idle_breakdown()
  T.close(a2.idle_us, 490, "gaps 100 + 200 + 100 + 90", 0, 1e-6)
  T.close(a2.queued_idle_us, 245, "queued: 45 of the first gap, all 200 of the second", 0, 1e-6)
  T.eq(a2.longest_queued, "K3", "K3 waits longest")
  T.close(a2.longest_queued_idle_us, 200, "K3's wait", 0, 1e-6)
  local sh2 = t2:report{ platform = "none" }.idle_breakdown
  T.close(sh2:get(2, "queued_idle_ms"), 0.245, "sheet all row: queued idle (ms)", 0, 1e-12)
  T.eq(sh2:get(2, "longest_queued"), "K3", "sheet all row: the longest wait")
  T.close(sh2:get(2, "longest_queued_idle_ms"), 0.2, "sheet all row: its idle time", 0, 1e-12)
  T.eq(sh2:get(1, "queued_idle_ms"), nil, "no queued figure on a stream row")
end

-- the launch queue of stream 7: +1 at each call (100, 200, 300, 1300), -1 at each
-- launched event's end (1100, 1150, 1400, 1520); E and the memcpy are not launched
local q = t:queue_length{ full = 2, series = true }
T.eq(#q, 3, "three streams with launches")
local q7 = q[1]
T.eq(q7.stream, 7, "stream 7 first")
T.eq(q7.launches, 4, "four launches")
T.eq(q7.max_length, 3, "three outstanding at 300")
T.close(q7.mean_length, 3270 / 1420, "time-weighted mean over [100, 1520)", 1e-12, 0)
T.close(q7.full_queue_us, 1050, "two or more outstanding: [200, 1150) and [1300, 1400)", 0, 1e-9)
T.eq(q7.blocked_launches, 1, "the call at 300 starts with two outstanding")
T.close(q7.blocked_launch_us, 5, "its duration", 0, 1e-9)
T.eq(table.concat(q7.times, ","), "100.0,200.0,300.0,1100.0,1150.0,1300.0,1400.0,1520.0", "series times")
T.eq(table.concat(q7.lengths, ","), "1,2,3,2,1,2,1,0", "series lengths")
T.eq(q[2].max_length, 1, "stream 9: one at a time")
T.eq(t:queue_length()[1].full, 1024, "default full queue: 1024")
T.eq(t:queue_length()[1].blocked_launches, 0, "nothing blocks below 1024")

-- the sheet, after step_breakdown, with the report's micro threshold; and its option
local rep = t:report{ micro_idle_thresh_us = 15, platform = "none" }
local sh = rep.idle_breakdown
T.check(sh ~= nil, "idle_breakdown sheet written")
T.eq(sh:nrows(), 4, "three streams and the all row")
T.eq(sh:get(4, "stream"), "all", "all row last")
T.close(sh:get(1, "host_wait_ms"), 0.16, "sheet host wait (ms)", 0, 1e-9)
T.close(sh:get(1, "micro_idle_ms"), 0.01002, "sheet micro idle with the report's threshold", 0, 1e-9)
T.close(sh:get(1, "micro_idle_threshold_us"), 15, "the threshold stated", 0, 1e-12)
T.eq(sh:get(1, "kernel_wait_threshold_ns"), 30, "kernel-wait threshold stated")
T.eq(sh:get(1, "max_queue_length"), 3, "sheet queue length")
T.close(sh:get(1, "mean_queue_length"), 3270 / 1420, "sheet mean queue length", 1e-12, 0)
T.eq(sh:get(1, "queue_full_threshold"), 1024, "full-queue threshold stated")
T.eq(sh:get(4, "max_queue_length"), nil, "no queue on the all row")
T.check(t:report{ idle_breakdown = false, platform = "none" }.idle_breakdown == nil, "idle_breakdown = false omits it")

-- a shared trace, recomputed from the raw JSON
local shared = data and data .. "/multirank/world8/ranks/rank0_trace.json.gz"
if shared and T.file_exists(shared) then
  local ok, code, text = T.run("gzip -dc " .. T.q(shared))
  T.check(ok, "gzip -dc exit " .. tostring(code))
  local evs = cjson.decode(text).traceEvents
  -- integer ns: a double µs near 4e12 is within 0.49 ns of the file's value; whole µs
  -- and the fraction apart (v * 1000 would round once more), the nearest ns is the file's
  local function ns(v)
    local w = math.floor(v)
    return w * 1000 + math.floor((v - w) * 1000 + 0.5)
  end
  local launch_ts, launch_call, gpu = {}, {}, {}
  for _, e in ipairs(evs) do
    local a = e.args or {}
    if (e.cat == "cuda_runtime" or e.cat == "cuda_driver") and a.correlation then
      launch_ts[a.correlation] = ns(e.ts)
      launch_call[a.correlation] = e
    end
  end
  for _, e in ipairs(evs) do
    if e.ph == "X" and (e.cat == "kernel" or e.cat == "gpu_memcpy" or e.cat == "gpu_memset") then
      local a = e.args or {}
      local k = string.format("%d/%d", a.device or e.pid, a.stream or -1)
      gpu[k] = gpu[k] or {}
      local l = gpu[k]
      l[#l + 1] = { ts = ns(e.ts), e = ns(e.ts) + ns(e.dur), l = a.correlation and launch_ts[a.correlation], i = #l }
    end
  end
  local got = {}
  for _, x in ipairs(tl.load(shared):idle_breakdown()) do got[x.device .. "/" .. x.stream] = x end
  local n = 0
  for k, l in pairs(gpu) do
    n = n + 1
    table.sort(l, function(a, b) return a.ts < b.ts or (a.ts == b.ts and a.i < b.i) end) -- ties: file order
    local host, kern, other, fin = 0, 0, 0, l[1].e
    for i = 2, #l do
      local gap = l[i].ts - fin
      if gap > 0 then
        if gap < 30 then kern = kern + gap
        elseif l[i].l and l[i].l >= fin then host = host + gap
        else other = other + gap end
      end
      fin = math.max(fin, l[i].e)
    end
    local x = got[k]
    T.check(x ~= nil, "stream " .. k .. " reported")
    if x then
      T.eq(x.gpu_events, #l, k .. " events")
      T.eq(x.host_wait_us, host / 1000, k .. " host wait (exact ns)")
      T.eq(x.kernel_wait_us, kern / 1000, k .. " kernel wait")
      T.eq(x.other_wait_us, other / 1000, k .. " other wait")
    end
  end
  T.check(n > 1, "the shared trace has several streams")
  -- the launch queue: +1 at each call, -1 at each launched event's end (ends first at a tie)
  local chg = {}
  for _, e in ipairs(evs) do
    local a = e.args or {}
    local c = a.correlation and launch_call[a.correlation]
    if e.ph == "X" and (e.cat == "kernel" or e.cat == "gpu_memcpy" or e.cat == "gpu_memset") and c then
      local k = string.format("%d/%d", a.device or e.pid, a.stream or -1)
      chg[k] = chg[k] or {}
      local l = chg[k]
      l[#l + 1] = { t = ns(c.ts), d = 1, dur = ns(c.dur) }
      l[#l + 1] = { t = ns(e.ts) + ns(e.dur), d = -1 }
    end
  end
  local gq = {}
  for _, x in ipairs(tl.load(shared):queue_length{ full = 4 }) do gq[x.device .. "/" .. x.stream] = x end
  for k, l in pairs(chg) do
    table.sort(l, function(a, b) return a.t < b.t or (a.t == b.t and a.d < b.d) end)
    local len, mx, area, full, nb, blocked = 0, 0, 0, 0, 0, 0
    for i, c in ipairs(l) do
      if c.d > 0 and len >= 4 then nb, blocked = nb + 1, blocked + c.dur end
      len = len + c.d
      mx = math.max(mx, len)
      local nxt = l[i + 1] and l[i + 1].t or c.t
      area = area + len * (nxt - c.t)
      if len >= 4 then full = full + (nxt - c.t) end
    end
    local x = gq[k]
    T.check(x ~= nil, "queue of " .. k)
    if x then
      T.eq(x.launches, #l // 2, k .. " launches")
      T.eq(x.max_length, mx, k .. " max queue length")
      T.close(x.mean_length, area / (l[#l].t - l[1].t), k .. " mean queue length", 1e-12, 0)
      T.eq(x.full_queue_us, full / 1000, k .. " time at 4 or more")
      T.eq(x.blocked_launches, nb, k .. " calls on a queue of 4 or more")
      T.eq(x.blocked_launch_us, blocked / 1000, k .. " their time")
    end
  end
else
  print("note: ../shared/data not found: the shared-trace idle breakdown is skipped")
end
T.rmrf(dir)
T.finish()
