-- trace:steps(): a trace built here with three steps (a slow first one, a
-- partial last one) and hand-counted figures; and on a shared multi-step
-- trace, every step's figures recomputed here from the events (launch time
-- of each GPU event's runtime parent, interval unions in Lua).
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local dir = T.tmpdir()
local X, F = T.x_event, T.flow_event

local ev = {
  -- step 1 [0, 3000): two kernels launched, one overlapping the other; slow
  X("user_annotation", "ProfilerStep#1", 0, 3000, {}),
  X("gpu_user_annotation", "ProfilerStep#1", 100, 2000, {}, 0, 7),
  X("cuda_runtime", "cudaLaunchKernel", 100, 10, { correlation = "1" }),
  F("s", 1, 1, 1, 100),
  X("cuda_runtime", "cudaLaunchKernel", 200, 10, { correlation = "2" }),
  F("s", 2, 1, 1, 200),
  X("kernel", "gemm_a", 1000, 400, { correlation = "1", stream = "7" }, 0, 7),
  F("f", 1, 0, 7, 1000),
  X("kernel", "ncclAllReduce", 1200, 500, { correlation = "2", stream = "9" }, 0, 9),
  F("f", 2, 0, 9, 1200),
  -- step 2 [3000, 4000): one kernel launched in it runs after it ends; an unlinked kernel at 3500
  X("user_annotation", "ProfilerStep#2", 3000, 1000, {}),
  X("cuda_runtime", "cudaLaunchKernel", 3100, 10, { correlation = "3" }),
  F("s", 3, 1, 1, 3100),
  X("kernel", "gemm_b", 4100, 300, { correlation = "3", stream = "7" }, 0, 7),
  F("f", 3, 0, 7, 4100),
  X("kernel", "orphan", 3500, 50, { stream = "7" }, 0, 7),
  -- step 3 [4000, 5000): a launch whose kernel is not in the trace
  X("user_annotation", "ProfilerStep#3", 4000, 1000, {}),
  X("cuda_runtime", "cudaLaunchKernel", 4900, 10, { correlation = "4" }),
  -- outside every step
  X("kernel", "late", 6000, 25, { stream = "7" }, 0, 7),
}
local path = dir .. "/steps.json"
local f = assert(io.open(path, "w"))
f:write('{"traceEvents":[', table.concat(ev, ",\n"), "]}")
f:close()
local t = tl.load(path)
local steps, out = t:steps()
T.eq(#steps, 3, "three steps (the GPU-side annotation is not one)")
local s1, s2, s3 = steps[1], steps[2], steps[3]
T.eq(s1.number, 1, "step number")
T.close(s1.wall_us, 3000, "wall time", 0, 1e-9)
T.eq(s1.gpu_events, 2, "step 1 launched two kernels")
T.close(s1.span_us, 700, "span 1000..1700", 0, 1e-9)
T.close(s1.busy_us, 700, "busy: union of [1000,1400) and [1200,1700)", 0, 1e-9)
T.close(s1.computation_us, 400, "computation: the GEMM", 0, 1e-9)
T.close(s1.total_comm_us, 500, "communication", 0, 1e-9)
T.close(s1.exposed_comm_us, 300, "exposed communication: [1400,1700)", 0, 1e-9)
T.close(s1.idle_us, 0, "no idle inside the span", 0, 1e-9)
T.eq(s1.warmup, true, "3000 us > 1.5 x the median 1000 us: warm-up")
T.eq(s2.gpu_events, 2, "step 2: its launch (run later) and the unlinked kernel starting inside it")
T.eq(s2.unlinked_gpu_events, 1, "one unlinked")
T.close(s2.span_us, 900, "span 3500..4400", 0, 1e-9)
T.close(s2.busy_us, 350, "busy 50 + 300", 0, 1e-9)
T.close(s2.idle_us, 550, "idle = span - busy", 0, 1e-9)
T.eq(s2.warmup, false, "step 2 is not warm-up")
T.eq(s3.gpu_events, 0, "step 3 ran no GPU work in the trace")
T.eq(s3.partial, true, "its launch has no GPU event: partial")
T.eq(s3.busy_us, nil, "no GPU figures without GPU work")
T.eq(out.outside_gpu_events, 1, "one GPU event outside every step")
T.close(out.outside_gpu_us, 25, "its time", 0, 1e-9)

-- a shared two-step trace, recomputed from the events
local shared = data and data .. "/multirank/world8/ranks/rank0_trace.json.gz"
if shared and T.file_exists(shared) then
  local tr = tl.load(shared)
  local st = tr:steps()
  local spans = {}
  for e in tr:events() do
    if e.ph == "X" and e.name:match("^ProfilerStep#%d+$") and e.cat ~= "gpu_user_annotation" then
      spans[#spans + 1] = { ts = e.ts, t1 = e.ts + e.dur, iv = {} }
    end
  end
  table.sort(spans, function(a, b) return a.ts < b.ts end)
  T.eq(#st, #spans, "as many steps as ProfilerStep annotations")
  for e in tr:events() do
    if e.cat == "kernel" or e.cat == "gpu_memcpy" or e.cat == "gpu_memset" then
      local rt = e:parent()
      local key = rt and rt.ts or e.ts
      for _, s in ipairs(spans) do
        if key >= s.ts and key < s.t1 then s.iv[#s.iv + 1] = { e.ts, e.ts + e.dur } break end
      end
    end
  end
  for i, s in ipairs(spans) do
    table.sort(s.iv, function(a, b) return a[1] < b[1] end)
    local busy, cs, ce, lo, hi = 0, nil, nil, math.huge, -math.huge
    for _, iv in ipairs(s.iv) do
      lo, hi = math.min(lo, iv[1]), math.max(hi, iv[2])
      if cs and iv[1] <= ce then ce = math.max(ce, iv[2])
      else
        if cs then busy = busy + (ce - cs) end
        cs, ce = iv[1], iv[2]
      end
    end
    if cs then busy = busy + (ce - cs) end
    T.eq(st[i].gpu_events, #s.iv, "step " .. i .. " GPU events")
    T.close(st[i].busy_us, busy, "step " .. i .. " busy (Lua sums µs floats)", 1e-9, 0.1)
    T.close(st[i].span_us, hi - lo, "step " .. i .. " span", 1e-9, 0.01)
  end
else
  print("note: ../shared/data not found: the shared-trace steps are skipped")
end
T.rmrf(dir)
T.finish()
