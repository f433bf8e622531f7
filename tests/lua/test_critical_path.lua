-- trace:critical_path (HTA's lightweight critical path, docs/critical-path.md):
--   * a trace built here whose path is worked out by hand;
--   * on HTA's simple_add trace, the events and flows marked critical equal
--     those of HTA's own overlaid trace (both files read here);
--   * on alexnet and the two cuda_event_sync traces, properties checked edge
--     by edge against the raw events (same-thread nesting and order, launch
--     -> GPU event by correlation, same-stream order, sync calls), the
--     length against the window, and HTA's own test assertions on the graph.
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"
local X = T.x_event
local dir = T.tmpdir()

local function read_json(path)
  local ok, code, out = T.run("gzip -dc " .. T.q(path))
  T.check(ok, path .. ": gzip -dc exit " .. tostring(code))
  return cjson.decode(out or "null")
end

local function num(v) return tonumber(v) end

-- ---------------------------------------------------------------- by hand
-- An op [0,1000) launches a 600 us kernel [150,750) at 100 and waits for it
-- in cudaDeviceSynchronize [200,760). Path: op start -> launch start (100,
-- CPU) -> kernel start (50, launch delay) -> kernel end (600, GPU) -> sync
-- -> cudaDeviceSynchronize end (0) -> op end (240, CPU) = 990 us; the CPU
-- alone would give 100 + 10 + 90 + 0 (the blocking call) + 240 = 440.
do
  local ev = {
    X("cpu_op", "aten::step", 0, 1000, {}),
    X("cuda_runtime", "cudaLaunchKernel", 100, 10, { correlation = "1" }),
    X("kernel", "gemm", 150, 600, { correlation = "1", stream = "7", device = "0" }, 0, 7),
    X("cuda_runtime", "cudaDeviceSynchronize", 200, 560, { correlation = "2" }),
    X("cuda_sync", "Context Sync", 745, 15, { correlation = "2", stream = "-1", device = "0" }, 0, 99),
  }
  local path = dir .. "/hand.json"
  local f = assert(io.open(path, "w"))
  f:write('{"traceEvents":[', table.concat(ev, ",\n"), "]}")
  f:close()
  local t = tl.load(path)
  local cp = t:critical_path{overlay = dir .. "/hand_cp.json.gz"}
  T.eq(cp.step, nil, "no ProfilerStep: the whole trace")
  T.close(cp.wall_us, 1000, "window 0..1000", 0, 1e-9)
  T.close(cp.length_us, 990, "path length", 0, 1e-9)
  T.eq(#cp.events, 4, "op, launch, kernel, cudaDeviceSynchronize")
  T.eq(#cp.edges, 5, "five edges")
  local types = {}
  for i, e in ipairs(cp.edges) do types[i] = e.type:gsub("critical_path_", "") end
  T.eq(table.concat(types, " "), "operator kernel_launch_delay operator sync_dependency operator", "edge types in order")
  T.close(cp.by_category.cpu, 340, "CPU: 100 + 240", 0, 1e-9)
  T.close(cp.by_category.launch_delay, 50, "launch delay", 0, 1e-9)
  T.close(cp.by_category.gpu_compute, 600, "GPU compute", 0, 1e-9)
  T.close(cp.by_category.sync, 560, "the blocking call the path crosses", 0, 1e-9)
  T.eq(cp.bound, "GPU", "GPU-bound")
  T.eq(cp.blind, false, "a sync edge back to the host: not blind")
  local o = read_json(dir .. "/hand_cp.json.gz")
  local crit, flows = 0, 0
  for _, e in ipairs(o.traceEvents) do
    if e.args and e.args.critical ~= nil then
      if e.ph == "s" or e.ph == "f" then flows = flows + 1 else crit = crit + 1 end
    end
  end
  T.eq(crit, 4, "overlay: four events marked critical")
  T.eq(flows, 4, "overlay: a flow pair for the launch and the sync edge")
  T.eq(#o.traceEvents, 9, "overlay: the five events and four flow events")
  local ok, err = pcall(function() return t:critical_path{step = 3} end)
  T.check(not ok and tostring(err):find("no ProfilerStep#3", 1, true), "unknown step: " .. tostring(err))
end

-- ---------------------------------------------------------------- queued from the step before
-- HTA's launch edge needs an empty queue: the launch makes its stream's
-- queue 1 and the kernel's start makes it 0. Step 1 launches kernel A at 100
-- (stream 7), which runs only at [1200, 2000); step 2's op [1050, 1500)
-- launches B at 1100, which runs at [2000, 2300). At B's launch A is still
-- queued (queue 2): no launch edge, and B is not on a path back to the host.
-- Step 2's path is its op: op start -> launch (50) -> launch end (10) -> op
-- end (390) = 450 us, CPU. Were A's launch, which lies before the window,
-- left out of the queue, B's launch would find an empty queue and the path
-- would be op start -> launch (50) -> B start (900, launch delay) -> B end
-- (300) = 1250 us.
do
  local ev = {
    X("user_annotation", "ProfilerStep#1", 0, 1000, {}),
    X("cpu_op", "aten::mm", 50, 250, {}),
    X("cuda_runtime", "cudaLaunchKernel", 100, 10, { correlation = "1" }),
    X("kernel", "gemm_a", 1200, 800, { correlation = "1", stream = "7", device = "0" }, 0, 7),
    X("user_annotation", "ProfilerStep#2", 1000, 1500, {}),
    X("cpu_op", "aten::mm", 1050, 450, {}),
    X("cuda_runtime", "cudaLaunchKernel", 1100, 10, { correlation = "2" }),
    X("kernel", "gemm_b", 2000, 300, { correlation = "2", stream = "7", device = "0" }, 0, 7),
  }
  local t = tl.load(T.write_trace(dir .. "/queued_before.json", ev))
  local cp = t:critical_path{ step = 2 }
  T.close(cp.wall_us, 1500, "queued from the step before: step 2's window", 0, 1e-9)
  T.close(cp.length_us, 450, "queued from the step before: the path is step 2's op", 0, 1e-9)
  T.eq(cp.by_category.launch_delay or 0, 0, "queued from the step before: no launch edge to B")
  T.eq(cp.bound, "CPU", "queued from the step before: CPU-bound")
end

-- ---------------------------------------------------------------- ROCm names
-- The same step without its cuda_sync event, once with CUDA's call names and
-- once with ROCm's: HTA's lists of blocking calls (zero weight: the host's
-- wait) and of launch calls are CUDA's, and a ROCm trace's hip* calls must
-- count as theirs. Through the host alone: op start -> launch (100) ->
-- launch end (10) -> synchronize start (90) -> its end (0, blocking) -> op
-- end (240) = 440 us, so the longest path runs through the kernel: op start
-- -> launch (100, CPU) -> kernel start (50, launch delay) -> kernel end (600)
-- = 750 us, GPU-bound. With the synchronize counted as host work the host
-- path would be 1000 us and the step CPU-bound.
do
  local function step(launch, sync)
    return {
      X("cpu_op", "aten::step", 0, 1000, {}),
      X("cuda_runtime", launch, 100, 10, { correlation = "1" }),
      X("kernel", "gemm", 150, 600, { correlation = "1", stream = "7", device = "0" }, 0, 7),
      X("cuda_runtime", sync, 200, 560, { correlation = "2" }),
    }
  end
  local lengths = {}
  for _, v in ipairs({ { "cuda", "cudaLaunchKernel", "cudaDeviceSynchronize" },
    { "hip", "hipLaunchKernel", "hipDeviceSynchronize" }, { "hipcopy", "hipLaunchKernel", "hipMemcpyWithStream" } }) do
    local path = dir .. "/" .. v[1] .. "_nosync.json"
    local f = assert(io.open(path, "w"))
    f:write('{"traceEvents":[', table.concat(step(v[2], v[3]), ",\n"), "]}")
    f:close()
    local cp = tl.load(path):critical_path{}
    lengths[v[1]] = cp.length_us
    T.close(cp.length_us, 750, v[1] .. ": the blocking call weighs nothing", 0, 1e-9)
    T.close(cp.by_category.cpu, 100, v[1] .. ": CPU up to the launch", 0, 1e-9)
    T.close(cp.by_category.gpu_compute, 600, v[1] .. ": the kernel", 0, 1e-9)
    T.eq(cp.bound, "GPU", v[1] .. ": GPU-bound")
    T.eq(cp.blind, true, v[1] .. ": no cuda_sync event, no way back to the host: blind")
  end
  T.eq(lengths.hip, lengths.cuda, "hip names: the path of the CUDA names")
end

-- ---------------------------------------------------------------- analysis.md's line
do
  local cpmd = require "tracelens.critical_path_md"
  local steps = { { number = 1, wall_us = 100, warmup = true }, { number = 2, wall_us = 10 },
    { number = 3, wall_us = 30 }, { number = 4, wall_us = 20 }, { number = 5, wall_us = 20, partial = true } }
  T.eq(cpmd.representative(steps).number, 4, "representative: the median of the steady steps 10, 30, 20")
  T.eq(cpmd.representative({ { number = 7, wall_us = 5, warmup = true } }).number, 7, "no steady step: all count")
  T.eq(cpmd.representative({}), nil, "no steps: no representative")
  -- a step running GPU work launched before the trace is not representative while another step is
  T.eq(cpmd.representative({ { number = 3, wall_us = 40, before_trace_us = 5 }, { number = 4, wall_us = 28,
    before_trace_us = 0 } }).number, 4, "representative: not the step behind earlier work")
  T.eq(cpmd.representative({ { number = 6, wall_us = 40, before_trace_us = 5 } }).number, 6,
    "representative: the only step, even behind earlier work")
  local function trace_with(sync)
    local ev = {
      X("user_annotation", "ProfilerStep#3", 0, 1000, {}),
      X("cpu_op", "aten::step", 0, 1000, {}),
      X("cuda_runtime", "cudaLaunchKernel", 100, 10, { correlation = "1" }),
      X("kernel", "gemm", 150, 600, { correlation = "1", stream = "7", device = "0" }, 0, 7),
      X("cuda_runtime", "cudaDeviceSynchronize", 200, 560, { correlation = "2" }),
    }
    if sync then ev[#ev + 1] = X("cuda_sync", "Context Sync", 745, 15, { correlation = "2", stream = "-1" }, 0, 99) end
    local path = dir .. (sync and "/md_sync.json" or "/md_nosync.json")
    local f = assert(io.open(path, "w"))
    f:write('{"traceEvents":[', table.concat(ev, ",\n"), "]}")
    f:close()
    local t = tl.load(path)
    return t, t:steps()
  end
  local t, st = trace_with(true)
  local d = cpmd.data(t, st)
  T.eq(d and d.step, 3, "the line analyses ProfilerStep#3")
  local line = table.concat(cpmd.section(d), "\n")
  T.check(line:find("**GPU-bound**: the critical path of ProfilerStep#3", 1, true), "GPU-bound verdict: " .. line)
  T.check(line:find("is 0.990 of its 1.000 ms (CPU ops and runtime calls 34.3%, GPU compute 60.6%, communication "
    .. "0.0%, launch delay 5.1%, gaps between kernels 0.0%)", 1, true), "the split of 990 us: " .. line)
  local t2, st2 = trace_with(false)
  local line2 = table.concat(cpmd.section(cpmd.data(t2, st2)), "\n")
  T.check(line2:find("records no synchronisation events", 1, true) and line2:find("**GPU-bound**", 1, true),
    "GPU work without cuda_sync events: the verdict (the path ends on the GPU) and the caveat: " .. line2)
  T.check(not line:find("records no synchronisation events", 1, true), "no caveat when the sync edge is there")
  T.eq(#cpmd.section(cpmd.data(t, {})), 0, "no steps: no section")
  -- a blind path that covers under 60% of the step: the verdict is said to
  -- describe that part only (timesformer: 160 of 382 ms)
  local function line_of(blind, length, wall)
    return table.concat(cpmd.section({ step = 6, bound = "GPU", blind = blind, host_missing = blind, length_us = length,
      wall_us = wall,
      by_category = { cpu = length / 4, gpu_compute = length * 3 / 4 } }), "\n")
  end
  T.check(line_of(true, 160e3, 382e3):find("Here the path covers 42% of the step's wall time, so the path's GPU-bound "
    .. "verdict describes that part of the step only.", 1, true), "partial blind path: " .. line_of(true, 160e3, 382e3))
  T.check(not line_of(true, 300e3, 382e3):find("Here the path covers", 1, true), "79% covered: no such sentence")
  T.check(not line_of(false, 160e3, 382e3):find("Here the path covers", 1, true),
    "a path with its sync edges: no such sentence (the skipped time is idle or waiting)")
  -- the GPU without work at the start of the step (timesformer: its first kernel 218 ms into a 382 ms step, after
  -- the host's preprocessing): said, and the step called host-bound when that is most of it; a kernel of the
  -- step before still running then is GPU work (Qwen: the previous step's tail), so nothing is said
  local function lead_trace(name, prev_tail)
    local ev = {
      X("user_annotation", "ProfilerStep#1", 0, 1000, {}),
      X("cpu_op", "aten::first", 100, 100, {}),
      X("cuda_runtime", "cudaLaunchKernel", 120, 10, { correlation = "1" }),
      X("kernel", "k1", 150, prev_tail and 1200 or 300, { correlation = "1", stream = "7", device = "0" }, 0, 7),
      X("user_annotation", "ProfilerStep#2", 1000, 2000, {}),
      X("python_function", "preprocess", 1000, 1500, {}),
      -- inside it: a wrapper (__call__) whose one sub-call takes 99% of it, and a shorter call
      X("python_function", "read_video", 1010, 80, {}),
      X("python_function", "__call__", 1100, 1000, {}),
      X("python_function", "image_processor.preprocess", 1105, 990, {}),
      X("cpu_op", "aten::mm", 2500, 300, {}),
      X("cuda_runtime", "cudaLaunchKernel", 2510, 10, { correlation = "2" }),
      X("kernel", "gemm", 2550, 400, { correlation = "2", stream = "7", device = "0" }, 0, 7),
    }
    local t = tl.load(T.write_trace(dir .. "/" .. name .. ".json", ev))
    local st = t:steps()
    local d = cpmd.data(t, { st[2] })
    return d, table.concat(cpmd.section(d), "\n"), st[2]
  end
  local d, lline, s2 = lead_trace("lead", false)
  T.close(s2.any_gpu_start, 2550, "steps: the first GPU work in step 2's window", 0, 1e-9)
  T.close(s2.any_gpu_end, 2950, "steps: the last GPU work in step 2's window", 0, 1e-9)
  T.close(d.gpu_lead_us, 1550, "the step's GPU-free start", 0, 1e-9)
  T.close(d.gpu_tail_us, 50, "the step's GPU-free end", 0, 1e-9)
  -- a host-bound step (1.6 of 2 ms without GPU work): its longest host calls in [1000, 2550] and [2950, 3000],
  -- longest first, the wrapper __call__ named by the call inside it, aten::mm (to 2800) not wholly inside
  T.eq(#d.host_calls, 3, "host-bound: three host calls")
  T.eq(d.host_calls[1].name, "preprocess", "the longest host call")
  T.close(d.host_calls[1].us, 1500, "its time", 0, 1e-9)
  T.eq(d.host_calls[2].name, "image_processor.preprocess", "the wrapper named by the call inside it")
  T.close(d.host_calls[2].us, 990, "its time", 0, 1e-9)
  T.eq(d.host_calls[3].name, "read_video", "third")
  T.close(select(2, cpmd.host_bound(d)), 0.8, "host-bound share", 0, 1e-9)
  T.check(lline:find("**Host-bound step**: the GPU has no work for the first 1.550 ms of ProfilerStep#2 (the first "
    .. "GPU work runs then), 80% of the step's wall time in which only the host runs", 1, true)
    and lline:find("Where the GPU works, the critical path", 1, true)
    and not lline:find("hidden behind", 1, true), "a GPU-free start: " .. lline)
  local d2, tline, t2 = lead_trace("tail", true)
  T.close(t2.any_gpu_start, 1000, "steps: step 1's kernel still runs when step 2 begins", 0, 1e-9)
  T.close(d2.gpu_lead_us, 0, "no GPU-free start", 0, 1e-9)
  T.check(not tline:find("no work for", 1, true) and not tline:find("Host-bound", 1, true),
    "the previous step's kernel fills the start: " .. tline)
  T.eq(cpmd.no_gpu(d2), nil, "no GPU-free time for the summary")
  T.eq(d2.host_calls, nil, "not host-bound: no host calls looked up")
  T.eq(cpmd.host_bound(d2), nil, "not host-bound")
  -- a kernel launched early that waits to start (HTA's backward_thread: 64 ms of launch delay): the waiting is
  -- not host time, so the GPU-free start ends at the launch call
  do
    local ev = {
      X("user_annotation", "ProfilerStep#1", 0, 2000, {}),
      X("cpu_op", "aten::mm", 400, 100, {}),
      X("cuda_runtime", "cudaLaunchKernel", 410, 10, { correlation = "1" }),
      X("kernel", "gemm", 1800, 100, { correlation = "1", stream = "7", device = "0" }, 0, 7),
    }
    local tq = tl.load(T.write_trace(dir .. "/queued.json", ev))
    local dq = cpmd.data(tq, tq:steps())
    T.close(dq.gpu_lead_us, 410, "queued: the host-only start ends at the launch call", 0, 1e-9)
    T.close(dq.gpu_queued_us, 1390, "queued: then the kernel waits", 0, 1e-9)
    T.check(table.concat(cpmd.section(dq), "\n"):find("the GPU has no work for the first 0.410 ms of ProfilerStep#1 "
      .. "(until its first launch call, whose work then waits 1.390 ms to start)", 1, true), "queued: said")
  end
  -- a step without any GPU work: all of it, not "the first … ms (the first GPU work runs then)"
  local none = table.concat(cpmd.section({ step = 4, bound = "CPU", length_us = 900, wall_us = 1000, blind = false,
    by_category = { cpu = 900 }, gpu_lead_us = 1000, gpu_tail_us = 0, gpu_queued_us = 0, no_gpu_at_all = true }), "\n")
  T.check(none:find("**Host-bound step**: the GPU has no work for all of ProfilerStep#4 (no GPU work runs in it), "
    .. "100% of the step's wall time", 1, true), "no GPU work in the step: " .. none)
  local nt, share = cpmd.no_gpu(d)
  T.close(nt, 1600, "the summary's GPU-free time", 0, 1e-9)
  T.close(share, 0.8, "and its share", 0, 1e-9)
  -- a path held by launch delays (HTA's backward_thread trace: 99.8% of 64 ms) is neither CPU- nor GPU-bound
  local function split_line(by)
    return table.concat(cpmd.section({ step = 552, bound = "CPU", blind = true, host_missing = true, length_us = 64232,
      wall_us = 413451, by_category = by }), "\n")
  end
  local ld = split_line({ cpu = 64, gpu_compute = 45, communication = 0, launch_delay = 64100, kernel_gap = 23 })
  T.check(ld:find("**Launch-delay-bound**: the critical path of ProfilerStep#552", 1, true)
    and ld:find("launch delay 99.8%, gaps between kernels 0.0%), so most of the path is time between launch calls and "
      .. "the start of their "
      .. "kernels, with nothing queued ahead of them on their stream", 1, true)
    and ld:find("so the path's launch-delay-bound verdict describes that part of the step only.", 1, true)
    and not ld:find("host-side findings", 1, true), "launch-delay verdict: " .. ld)
  -- launch delays that do not outweigh the GPU's work (or the host's) leave the verdict as it was
  local cpu = split_line({ cpu = 40000, gpu_compute = 100, launch_delay = 24000 })
  T.check(cpu:find("**CPU-bound**", 1, true) and cpu:find("host-side findings", 1, true), "CPU-bound kept: " .. cpu)
end

-- ---------------------------------------------------------------- shorter than a stream's work
-- ProfilerStep#1 [0, 500). aten::a [0, 20) launches k1 at 1 (k1 [10, 100) on
-- stream 7); aten::b [195, 215) launches k2 at 200 and k3 at 205 (k2 [210,
-- 300), k3 [300, 400)); cudaDeviceSynchronize [220, 405); no cuda_sync event.
-- k1: queue 1 at its launch, 0 at its start: launch edge. k2: its launch finds
-- the queue empty (1), but k3 is queued when k2 starts (1, not 0): no launch
-- edge; k1 ended (100) before k2's launch call (200): no kernel-kernel edge.
-- So nothing leads into k2. k3: queue 2 at its launch, k2 still runs at 205:
-- kernel-kernel edge k2 end -> k3 start (0). Longest path: k2 (90) -> k3
-- (100) = 190 us, all GPU compute; the host's chain is 40 us, op a -> k1 100.
-- Stream 7 is busy 90 + 90 + 100 = 280 us with the step's GPU work, in
-- order, so the step's critical path is at least 280 us: HTA's 190 us path
-- is not it (owlv2 H100: 227.517 ms against 566.759 ms on stream 7).
do
  local ev = {
    X("user_annotation", "ProfilerStep#1", 0, 500, {}),
    X("cpu_op", "aten::a", 0, 20, {}),
    X("cuda_runtime", "cudaLaunchKernel", 1, 4, { correlation = "1" }),
    X("kernel", "k1", 10, 90, { correlation = "1", stream = "7", device = "0" }, 0, 7),
    X("cpu_op", "aten::b", 195, 20, {}),
    X("cuda_runtime", "cudaLaunchKernel", 200, 5, { correlation = "2" }),
    X("kernel", "k2", 210, 90, { correlation = "2", stream = "7", device = "0" }, 0, 7),
    X("cuda_runtime", "cudaLaunchKernel", 205, 5, { correlation = "3" }),
    X("kernel", "k3", 300, 100, { correlation = "3", stream = "7", device = "0" }, 0, 7),
    X("cuda_runtime", "cudaDeviceSynchronize", 220, 185, { correlation = "4" }),
  }
  local t = tl.load(T.write_trace(dir .. "/below.json", ev))
  local cp = t:critical_path{}
  T.close(cp.length_us, 190, "below: HTA's path k2 -> k3", 0, 1e-9)
  T.eq(#cp.events, 2, "below: k2 and k3")
  T.close(cp.by_category.gpu_compute, 190, "below: all GPU compute", 0, 1e-9)
  T.eq(cp.bound, "GPU", "below: HTA's split alone would say GPU")
  T.close(cp.stream_busy_us, 280, "below: stream 7 busy 90 + 90 + 100", 0, 1e-9)
  T.eq(cp.busy_stream, 7, "below: the busiest stream")
  T.eq(cp.below_stream, true, "below: 190 < 280 us")
  T.eq(cp.blind, true, "below: no cuda_sync: blind")
  T.eq(cp.waits, 1, "below: one blocking call that lasted")
  T.eq(cp.host_missing, true, "below: the host waited and 310 of 500 us are off the path")
  local cpmd = require "tracelens.critical_path_md"
  local line = table.concat(cpmd.section(cpmd.data(t, t:steps())), "\n")
  T.check(line:find("**No bound from the critical path**: HTA's longest path through ProfilerStep#1 (`tracelens "
    .. "critical-path`) is 0.190 of its 0.500 ms (CPU ops and runtime calls 0.0%, GPU compute 100.0%, communication "
    .. "0.0%, launch delay 0.0%, gaps between kernels 0.0%), but stream 7 is busy 0.280 ms (56% of the step's wall time) "
    .. "with the GPU work the step launched, run in order, so the step's critical path is at least that long: this path is not it, and no CPU- "
    .. "or GPU-bound verdict follows from its split. The trace records no synchronisation events", 1, true)
    and not line:find("-bound**", 1, true) and not line:find("verdict describes", 1, true),
    "below: analysis.md draws no bound: " .. line)
  -- a path that holds its stream's work is not below: the by-hand trace at the top (990 us, 600 us of stream work)
  local cp0 = tl.load(dir .. "/hand.json"):critical_path{}
  T.close(cp0.stream_busy_us, 600, "hand: stream 7 busy 600 us", 0, 1e-9)
  T.eq(cp0.below_stream, false, "hand: a 990 us path is not shorter than 600 us of stream work")
  T.eq(cp0.host_missing, false, "hand: not blind, nothing missing")
end

-- ---------------------------------------------------------------- a path held by a wait for the GPU
-- ProfilerStep#1 [0, 300): aten::a [0, 20) launches k1 at 5 (k1 [10, 100)); .item()'s
-- aten::_local_scalar_dense [20, 150) holds cudaMemcpyAsync [25, 140) whose copy runs [100, 102); aten::b
-- [150, 170) launches k2 at 155 (k2 [160, 200)). By hand, the path: a (20) -> _local_scalar_dense (130) ->
-- b until the launch (5) -> launch delay (5) -> k2 (40) = 200 us, CPU 155, of it the copy call's 115 us.
-- A device-to-host copy: the host waited for the GPU there (a wait, and no CPU-bound verdict); a
-- device-to-device copy returns at once: no wait, and the CPU-bound verdict stands.
do
  local function build(copy)
    return {
      X("user_annotation", "ProfilerStep#1", 0, 300, {}),
      X("cpu_op", "aten::a", 0, 20, {}),
      X("cuda_runtime", "cudaLaunchKernel", 5, 4, { correlation = "1" }),
      X("kernel", "k1", 10, 90, { correlation = "1", stream = "7", device = "0" }, 0, 7),
      X("cpu_op", "aten::_local_scalar_dense", 20, 130, {}),
      X("cuda_runtime", "cudaMemcpyAsync", 25, 115, { correlation = "2" }),
      X("gpu_memcpy", copy, 100, 2, { correlation = "2", stream = "7", device = "0" }, 0, 7),
      X("cpu_op", "aten::b", 150, 20, {}),
      X("cuda_runtime", "cudaLaunchKernel", 155, 4, { correlation = "3" }),
      X("kernel", "k2", 160, 40, { correlation = "3", stream = "7", device = "0" }, 0, 7),
    }
  end
  local cpmd = require "tracelens.critical_path_md"
  local t = tl.load(T.write_trace(dir .. "/item.json", build("Memcpy DtoH (Device -> Pageable)")))
  local cp = t:critical_path{ step = 1, summary = true }
  T.close(cp.length_us, 200, "item: the path by hand", 0, 1e-9)
  T.close(cp.by_category.cpu, 155, "item: CPU 20 + 130 + 5", 0, 1e-9)
  T.close(cp.blocking_us, 115, "item: the blocking copy call on the path", 0, 1e-9)
  T.eq(cp.waits, 1, "item: the device-to-host copy call waited")
  local line = table.concat(cpmd.section(cpmd.data(t, t:steps())), "\n")
  T.check(line:find("**No bound from the critical path**", 1, true) and line:find("but 0.115 ms of its CPU time (74%) "
    .. "is in calls that wait for the GPU", 1, true) and not line:find("CPU-bound", 1, true),
    "item: no CPU-bound verdict from a path held by a wait: " .. line)
  local t2 = tl.load(T.write_trace(dir .. "/dtod.json", build("Memcpy DtoD (Device -> Device)")))
  local cp2 = t2:critical_path{ step = 1, summary = true }
  T.close(cp2.blocking_us, 0, "dtod: an asynchronous device-to-device copy does not wait", 0, 1e-9)
  T.eq(cp2.waits, 0, "dtod: no wait")
  T.eq(cp2.host_missing, false, "dtod: nothing missing")
  T.check(table.concat(cpmd.section(cpmd.data(t2, t2:steps())), "\n"):find("**CPU-bound**", 1, true),
    "dtod: the CPU-bound verdict stands")
  -- GPU work mostly replayed by graph launches: no verdict, whatever the split (on figures)
  local function graph_line(graph)
    return table.concat(cpmd.section({ step = 3, bound = "CPU", length_us = 1000, wall_us = 1200, blind = false,
      host_missing = false, by_category = { cpu = 1000, gpu_compute = 0, communication = 0, launch_delay = 0,
      kernel_gap = 0 }, gpu_us = 800, graph_gpu_us = graph }), "\n")
  end
  T.check(graph_line(400):find("but graph launches replay 50% of the step's GPU time, and HTA's graph has no edge from "
    .. "a graph launch to the kernels it replays", 1, true), "graph replays: half the GPU time, no verdict")
  T.check(graph_line(399):find("**CPU-bound**", 1, true), "graph replays under half: the verdict stands")
  -- a path on fewer CPU threads than the step's, covering under 60% of it: said (on figures)
  local function threads_line(path_threads, length)
    return table.concat(cpmd.section({ step = 3, bound = "CPU", length_us = length, wall_us = 1000, blind = false,
      host_missing = false, by_category = { cpu = length, gpu_compute = 0, communication = 0, launch_delay = 0,
      kernel_gap = 0 }, path_threads = path_threads, window_threads = 2 }), "\n")
  end
  T.check(threads_line(1, 510):find("The path stays on 1 of the 2 CPU threads with work in the step: HTA's graph has no "
    .. "edge between threads", 1, true) and threads_line(1, 510):find("covers 51% of the step's wall time", 1, true),
    "one of two threads, 51%: said")
  T.check(not threads_line(2, 510):find("The path stays on", 1, true), "both threads: nothing to say")
  T.check(not threads_line(1, 600):find("The path stays on", 1, true), "60% covered: nothing to say")
  -- a GPU-bound path held by memory copies says so (by the section's rule, on figures)
  local copy_line = table.concat(cpmd.section({ step = 3, bound = "GPU", length_us = 1000, wall_us = 1000, blind = false,
    host_missing = false, by_category = { cpu = 0, gpu_compute = 600, communication = 0, launch_delay = 0,
    kernel_gap = 400 }, copies_us = 490 }), "\n")
  T.check(copy_line:find("GPU compute 60.0% (memory copies and sets 49.0%)", 1, true) and copy_line:find("so the "
    .. "memory copies on the path (0.490 ms) shorten the step more than the kernel findings below", 1, true),
    "copies: named in the split and the verdict: " .. copy_line)
end

-- ---------------------------------------------------------------- a blind path covering the window
-- ProfilerStep#1 [0, 200): aten::a [0, 30) launches k1 at 1 (k1 [10, 200));
-- cudaDeviceSynchronize [40, 199). Blind (no cuda_sync), the host waited,
-- but the path op start -> launch (1) -> k1 start (9) -> k1 end (190) is
-- 200 us, the whole window: no host work can be missing from it.
do
  local ev = {
    X("user_annotation", "ProfilerStep#1", 0, 200, {}),
    X("cpu_op", "aten::a", 0, 30, {}),
    X("cuda_runtime", "cudaLaunchKernel", 1, 5, { correlation = "1" }),
    X("kernel", "k1", 10, 190, { correlation = "1", stream = "7", device = "0" }, 0, 7),
    X("cuda_runtime", "cudaDeviceSynchronize", 40, 159, { correlation = "2" }),
  }
  local cp = tl.load(T.write_trace(dir .. "/covered.json", ev)):critical_path{}
  T.close(cp.length_us, 200, "covered: the path is the window", 0, 1e-9)
  T.eq(cp.blind, true, "covered: blind")
  T.eq(cp.waits, 1, "covered: the host waited")
  T.eq(cp.host_missing, false, "covered: nothing of the window is off the path")
  T.eq(cp.below_stream, false, "covered: 200 us against 190 us of stream work")
end

if not (data and T.dir_exists(data .. "/hta/critical_path")) then
  print("SKIP (shared data): ../shared/data/hta/critical_path is absent")
  T.finish()
end
local base = data .. "/hta/critical_path/"

-- ---------------------------------------------------------------- simple_add vs HTA
do
  local out = dir .. "/simple_add_cp.json.gz"
  local t = tl.load(base .. "simple_add/benchmark_result_493459_1694039959_trace.json.gz")
  local cp = t:critical_path{overlay = out}
  local function critical(path)
    local doc = read_json(path)
    local evs, fl, n = {}, {}, 0
    for i, e in ipairs(doc.traceEvents) do
      local a = e.args
      if a and a.critical ~= nil then
        n = n + 1
        if e.ph == "s" or e.ph == "f" then
          local k = string.format("%s|%s|%s|%.0f|%s|%.0f", e.ph, tostring(e.pid), tostring(e.tid), num(e.ts),
            a.type, num(a.weight))
          fl[k] = (fl[k] or 0) + 1
        else
          evs[#evs + 1] = i
        end
      end
    end
    return evs, fl, n, doc
  end
  local ee, ef, en, edoc = critical(base .. "end_to_end/simple_add/output/overlaid_critical_path_trace.json.gz")
  local ge, gf, gn, gdoc = critical(out)
  T.eq(en, 1008, "HTA's overlay marks 1,008 events critical")
  T.eq(gn, en, "as many critical events and flows as HTA")
  T.eq(#ge, #ee, "critical trace events")
  local same = #ge == #ee
  for i = 1, math.min(#ge, #ee) do
    if ge[i] ~= ee[i] then same = false; T.check(false, "critical event differs at position " .. ee[i]); break end
  end
  T.check(same, "the same events are critical")
  local fsame = true
  for k, c in pairs(ef) do if gf[k] ~= c then fsame = false; T.check(false, "flow missing: " .. k) break end end
  for k, c in pairs(gf) do if ef[k] ~= c then fsame = false; T.check(false, "flow extra: " .. k) break end end
  T.check(fsame, "the same flow events (ph, pid, tid, ts, type, weight)")
  T.eq(#cp.events, #ee, "trace:critical_path's events are the critical ones")
  -- the rest of the trace is the input's
  local n_in = #edoc.traceEvents - 384
  T.eq(#gdoc.traceEvents, #edoc.traceEvents, "same number of events as HTA's overlay")
  local names_same = true
  for i = 1, n_in do
    local a, b = edoc.traceEvents[i], gdoc.traceEvents[i]
    if a.name ~= b.name or num(a.ts) ~= num(b.ts) or a.ph ~= b.ph then names_same = false; break end
  end
  T.check(names_same, "the trace's events in order, unchanged")
end

-- ---------------------------------------------------------------- properties
local SYNC_CALLS = { cudaDeviceSynchronize = true, cudaStreamSynchronize = true, cudaEventSynchronize = true,
  cudaEventQuery = true }
local LOCK_CALLS = { cudaLaunchKernel = true, cudaMemcpyAsync = true, cudaHostAlloc = true }
local GPU_CAT = { kernel = true, gpu_memcpy = true, gpu_memset = true }

local function same_thread(a, b) return a.pid == b.pid and a.tid == b.tid end
local function stream(e) local a = e.args return a and a.stream end
local function corr(e) local a = e.args return a and a.correlation end

local function check_path(label, t, cp, raw)
  local ev = raw.traceEvents
  local function R(e) return ev[e.uid + 1] end
  local zero_span, sum, bad = 0, 0, {}
  local function fail(i, why) if #bad < 3 then bad[#bad + 1] = string.format("edge %d: %s", i, why) end end
  for i, e in ipairs(cp.edges) do
    local a, b = R(e.from), R(e.to)
    local span = e.to_ts - e.from_ts
    sum = sum + e.weight_us
    -- absolute times in us as doubles hold 0.25 us at 1.7e15: compare within 0.5 us
    if span < -0.5 then fail(i, "goes back in time") end
    if math.abs(e.weight_us - span) > 0.5 then
      zero_span = zero_span + span
      if e.weight_us ~= 0 then fail(i, "weight is neither the span nor 0") end
    end
    if i > 1 then
      local p = cp.edges[i - 1]
      if p.to ~= e.from or p.to_start ~= e.from_start then fail(i, "does not continue the previous edge") end
    end
    local ty = e.type:gsub("critical_path_", "")
    if ty == "operator" then
      if e.from == e.to then
        if not (e.from_start and not e.to_start) then fail(i, "operator edge of one event is not start -> end") end
      elseif GPU_CAT[a.cat] or GPU_CAT[b.cat] then
        fail(i, "operator edge between two GPU events")
      elseif not (same_thread(a, b) or (LOCK_CALLS[a.name] and LOCK_CALLS[b.name])) then
        fail(i, "operator edge across threads")
      else
        local ae, be = num(a.ts) + num(a.dur), num(b.ts) + num(b.dur)
        local ok
        if e.from_start and e.to_start then ok = num(a.ts) <= num(b.ts) and be <= ae        -- parent -> child
        elseif not e.from_start and not e.to_start then ok = num(b.ts) <= num(a.ts) and ae <= be -- child -> parent
        elseif not e.from_start and e.to_start then ok = ae <= num(b.ts)                     -- sibling order
        else ok = false end
        if not ok then fail(i, "operator edge is not nesting or order on the thread") end
      end
    elseif ty == "dependency" then
      if not ((same_thread(a, b) and not e.from_start and e.to_start and num(a.ts) + num(a.dur) <= num(b.ts))
          or (LOCK_CALLS[a.name] and LOCK_CALLS[b.name])) then
        fail(i, "dependency edge is not end -> next start on one thread")
      end
    elseif ty == "kernel_launch_delay" then
      if not (a.cat == "cuda_runtime" and e.from_start and GPU_CAT[b.cat] and e.to_start and corr(a) == corr(b)) then
        fail(i, "launch edge is not runtime start -> its GPU event by correlation")
      end
    elseif ty == "kernel_kernel_delay" then
      if not (GPU_CAT[a.cat] and GPU_CAT[b.cat] and a.pid == b.pid and stream(a) == stream(b) and not e.from_start
          and e.to_start and num(a.ts) + num(a.dur) <= num(b.ts)) then
        fail(i, "kernel-kernel edge is not end -> later start on one stream")
      end
    elseif ty == "sync_dependency" then
      local ok = GPU_CAT[a.cat] and not e.from_start
      if b.cat == "cuda_runtime" then ok = ok and SYNC_CALLS[b.name] and not e.to_start
      else ok = ok and GPU_CAT[b.cat] and e.to_start and stream(a) ~= stream(b) end
      if not ok then fail(i, "sync edge is not GPU end -> sync call end / GPU start on another stream") end
    else
      fail(i, "unknown type " .. e.type)
    end
  end
  for _, b in ipairs(bad) do T.check(false, label .. ": " .. b) end
  T.check(#bad == 0, label .. ": every edge is a real dependency")
  T.close(cp.length_us, sum, label .. ": length = sum of the edge weights", 0, 1e-6)
  local first, last = cp.edges[1], cp.edges[#cp.edges]
  T.check(first.from_ts >= cp.window_start and last.to_ts <= cp.window_end + 1e-6, label .. ": the path lies in the window")
  -- HTA's definition: the path's span less the time its zero-weight edges skip
  T.close(cp.length_us, (last.to_ts - first.from_ts) - zero_span, label .. ": length = span - skipped time", 0,
    0.5 * #cp.edges)
  T.check(cp.length_us <= cp.wall_us, label .. ": length <= wall time")
  local cats = 0
  for k, v in pairs(cp.by_category) do if k ~= "sync" then cats = cats + v end end
  T.close(cats, cp.length_us, label .. ": the categories add up to the length", 0, 1e-6)
  local set, n = {}, 0
  for _, e in ipairs(cp.edges) do set[e.from.uid] = true; set[e.to.uid] = true end
  for _ in pairs(set) do n = n + 1 end
  T.eq(#cp.events, n, label .. ": the events are those of the edges")
end

local function has_edge(cp, from_uid, from_start, to_uid, to_start, ty)
  for _, e in ipairs(cp.graph) do
    if e.from.uid == from_uid and e.to.uid == to_uid and e.from_start == from_start and e.to_start == to_start
        and e.type == ty then
      return true
    end
  end
  return false
end

local SYNC = "critical_path_sync_dependency"
do -- alexnet: a GPU -> GPU edge from cudaEventRecord + cudaStreamWaitEvent (HTA's test: 1109 -> 1161)
  local path = base .. "alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
  local t = tl.load(path)
  local cp = t:critical_path{graph = true}
  check_path("alexnet", t, cp, read_json(path))
  T.check(has_edge(cp, 1109, false, 1161, true, SYNC), "alexnet: fft2d_c2r (stream 20) end -> elementwise (stream 7) start")
  local on_path = false
  for _, e in ipairs(cp.edges) do if e.from.uid == 1109 and e.to.uid == 1161 then on_path = true end end
  T.check(on_path, "alexnet: that stream wait is on the path")
end
do -- cuda_event_sync: cudaEventSynchronize and cudaDeviceSynchronize wait for the spin kernel (33 -> 41, 33 -> 51)
  local path = base .. "cuda_event_sync/event_sync_trace.json.gz"
  local t = tl.load(path)
  local cp = t:critical_path{graph = true}
  T.eq(cp.step, 100, "cuda_event_sync: the representative step is the only one")
  local cp2 = t:critical_path{step = 100}
  T.close(cp2.length_us, cp.length_us, "cuda_event_sync: step = 100 is the same path", 0, 1e-9)
  T.close(cp.wall_us, 3154, "cuda_event_sync: ProfilerStep#100 lasts 3154 us", 0, 1e-9)
  check_path("cuda_event_sync", t, cp, read_json(path))
  T.check(has_edge(cp, 33, false, 41, false, SYNC), "cuda_event_sync: spin kernel end -> cudaEventSynchronize end")
  T.check(has_edge(cp, 33, false, 51, false, SYNC), "cuda_event_sync: spin kernel end -> cudaDeviceSynchronize end")
  local all = t:critical_path{all = true}
  T.check(all.step == nil and all.wall_us >= cp.wall_us, "cuda_event_sync: all = true is the whole trace")
end
do -- multi-stream: the cudaEventRecord on stream 20 syncs back to kernel 1, not kernel 2 (24 -> 84)
  local path = base .. "cuda_event_sync_multi_stream/event_sync_trace.json.gz"
  local t = tl.load(path)
  local cp = t:critical_path{graph = true}
  check_path("cuda_event_sync_multi_stream", t, cp, read_json(path))
  T.check(has_edge(cp, 24, false, 84, true, SYNC), "multi_stream: sgemm (stream 20) end -> memset (stream 24) start")
  T.check(not has_edge(cp, 54, false, 84, true, SYNC), "multi_stream: not from the sgemm of stream 28")
end

-- shared traces: owlv2 H100's path is shorter than its stream's work (the GPU events launched in ProfilerStep#6,
-- their union on stream 7 by a Python script over the JSON: 566.759 ms); backward_thread's host never waits
-- (one cudaLaunchKernel, no blocking call), so no host work after a wait can be missing from its blind path
do
  local owl = data .. "/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz"
  if T.file_exists(owl) then
    local cp = tl.load(owl):critical_path{}
    T.eq(cp.step, 6, "owlv2: ProfilerStep#6")
    T.close(cp.length_us, 227517, "owlv2: HTA's path 227.517 ms", 0, 0.5)
    T.close(cp.stream_busy_us, 566759, "owlv2: stream 7 busy 566.759 ms", 0, 0.5)
    T.eq(cp.busy_stream, 7, "owlv2: stream 7")
    T.eq(cp.below_stream, true, "owlv2: the path is not the critical path")
  end
  local bw = data .. "/hta/call_stack/backward_thread.json"
  if T.file_exists(bw) then
    local cp = tl.load(bw):critical_path{}
    T.eq(cp.blind, true, "backward_thread: blind")
    T.eq(cp.waits, 0, "backward_thread: no blocking call")
    T.eq(cp.host_missing, false, "backward_thread: no wait, nothing missing after one")
  end
end

T.rmrf(dir)
T.finish()
