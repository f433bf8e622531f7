-- analysis.md's "GPU Feed and Memory" lines (tracelens.gpu_feed) and the
-- repeated-kernel-sequence fusion hint (tracelens.fusion.sequences), issue
-- 16: each rule on both sides of its threshold, on figures built here, and
-- the figures read from a trace built here (host-wait idle, a launch-delay
-- outlier, pageable copies, a memory peak near the device's totalGlobalMem);
-- then the orchestrator writes the section, and the sequence hint, into
-- analysis.md.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local feed = require "tracelens.gpu_feed"
local seqmod = require "tracelens.fusion.sequences"
local dir = T.tmpdir()
local X, F = T.x_event, T.flow_event

local function text(lines) return table.concat(lines, "\n") end

-- 1. The rules on figures ------------------------------------------------------------
local base = {
  streams = { { stream = 7, busy_us = 100, idle_us = 900, host_wait_us = 600, span_us = 1000 },
    { stream = 9, busy_us = 10, idle_us = 990, host_wait_us = 0, span_us = 1000 } },
  all = { span_us = 1000 },
  launch = { all = { count = 10, launch_delay = { median = 10 } }, outlier_threshold_us = 50,
    outliers = { { launch_delay_us = 150, name = "k1" }, { launch_delay_us = 99, name = "k2" } } },
  max_queue = 3, copies = {}, memory = {}, props = {},
}
local s = text(feed.section(base))
T.check(s:find("## GPU Feed and Memory", 1, true), "section heading")
T.check(s:find("stream 7 (the busiest) is idle 0.900 ms, 90.0% of its span, and 66.7% of that is host wait", 1, true),
  "host wait: the busiest stream, 600 of 900 us: " .. s)
T.check(s:find("2 launches wait more than the p95 (50.0 µs), up to 0.150 ms (`k1`)", 1, true), "delay outliers: " .. s)
T.check(s:find("At most 3 GPU operations were queued on a stream", 1, true), "queue depth stated")
T.check(s:find("The host does not issue work fast enough", 1, true), "host wait: the host is blamed")
-- half of the GPU's idle time (all streams) with launched work waiting: the host is not blamed
base.all.idle_us, base.all.queued_idle_us = 800, 400
s = text(feed.section(base))
T.check(s:find("Over all streams, though, 50.0% of the GPU's idle time passed with launched work waiting to start", 1,
  true) and not s:find("The host does not issue work fast enough", 1, true), "queued idle: no blame on the host: " .. s)
base.all.queued_idle_us = 399
s = text(feed.section(base))
T.check(s:find("The host does not issue work fast enough", 1, true), "queued under half: the host is blamed")
base.all.idle_us, base.all.queued_idle_us = nil, nil
-- the busiest stream's idle under 10% of the GPU's span (all streams): no line
base.all.span_us = 9001
T.check(not text(feed.section(base)):find("CPU-bound launch", 1, true), "900 us of a 9001 us GPU span: no line")
base.all.span_us = 9000
T.check(text(feed.section(base)):find("CPU-bound launch", 1, true), "900 us of a 9000 us GPU span: the line")
base.all.span_us = 1000
-- what the trace already uses is not advised: graph replays run most of the GPU time; torch.compile's kernels
base.graph_share = 0.6
s = text(feed.section(base))
T.check(s:find("the work already runs as graph replays, so less host work between the replays", 1, true)
  and not s:find("CUDA graphs", 1, true), "graphs in use: not advised: " .. s)
base.graph_share, base.compiled = 0.4, true
s = text(feed.section(base))
T.check(s:find('`torch.compile(mode="reduce-overhead")`, which captures the compiled code here in CUDA graphs', 1,
  true) and not s:find("(CUDA graphs, `torch.compile`", 1, true), "compiled: its CUDA-graph mode: " .. s)
base.graph_share, base.compiled = nil, nil
T.check(not s:find("with_stack", 1, true), "no stacks: no profiler caveat")
base.with_stack = true
s = text(feed.section(base))
T.check(s:find("The trace was recorded with `with_stack=True`, which adds the profiler's own host time", 1, true),
  "stacks: the profiler's host time said: " .. s)
base.with_stack = nil
-- the host wait opens during a blocking call: the sync line, from half of the stream's idle time (450 of 900 us)
base.streams[1].host_sync_wait_us, base.streams[1].host_sync_wait_gaps, base.streams[1].host_wait_gaps = 450, 3, 4
s = text(feed.section(base))
T.check(s:find("**Host wait after synchronisation**", 1, true) and s:find("75.0% of that host wait (3 of 4 gaps) "
  .. "opens while the host is blocked in a call that waits for the GPU", 1, true)
  and not s:find("The host does not issue work fast enough", 1, true), "sync drain: said, no launch blame: " .. s)
base.streams[1].host_sync_wait_us = 449
s = text(feed.section(base))
T.check(s:find("CPU-bound launch", 1, true), "sync under half of the idle time: the CPU-bound line: " .. s)
base.streams[1].host_sync_wait_us, base.streams[1].host_sync_wait_gaps, base.streams[1].host_wait_gaps = nil, nil, nil
-- below the thresholds
base.streams[1].host_wait_us = 440 -- under half of the idle time
base.launch.outliers[1].launch_delay_us = 99 -- under 100 us
T.eq(#feed.section(base), 0, "host wait under half, delays under 100 us: no section")
base.streams[1].host_wait_us, base.streams[1].idle_us = 90, 95 -- idle under 10% of the span
T.eq(#feed.section(base), 0, "idle under 10% of the span: no line")
-- pageable copies: at least 1 ms and 1% of the span
base.all.span_us = 50000
base.copies = { { direction = "H2D", host_memory = "pageable", count = 4, time_us = 1200 },
  { direction = "H2D", host_memory = "pinned", count = 9, time_us = 9000 } }
s = text(feed.section(base))
T.check(s:find("4 H2D copies (1.200 ms, 2.4% of the GPU span) use pageable host memory", 1, true), "pageable: " .. s)
base.copies[1].time_us = 900
T.eq(#feed.section(base), 0, "pageable copies under 1 ms: no line")
base.copies = {}
-- memory: the peak reserved against totalGlobalMem, else the arch file's memory_gb
local GiB = 1024 ^ 3
base.memory = { { device_type = 1, device_id = 0, peak_reserved = 9.5 * GiB, peak_allocated = 8 * GiB,
  peak_reserved_op = "aten::mm" } }
base.props = { [0] = { totalGlobalMem = 10 * GiB } }
s = text(feed.section(base))
T.check(s:find("cuda:0 reserves up to 9.50 GiB, 95.0% of its 10.00 GiB (`totalGlobalMem` in the trace's "
  .. "deviceProperties), during `aten::mm`; tensors allocated at most 8.00 GiB", 1, true), "memory: " .. s)
base.memory[1].peak_reserved = 8.9 * GiB
T.eq(#feed.section(base), 0, "89% of capacity: no line")
base.props, base.memory_gb = {}, 9.5
base.memory[1].peak_reserved = 9 * GiB
s = text(feed.section(base))
T.check(s:find("of its 8.85 GiB (the arch file's memory_gb)", 1, true), "memory_gb x 1e9 bytes: " .. s)
base.memory[1].device_type = 6
T.check(text(feed.section(base)):find("hip:0 reserves", 1, true), "ROCm's HIP device type counts too")
T.eq(#feed.section(nil), 0, "no data: no section")

-- 2. The fusion hint on figures -------------------------------------------------------
local EW = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)"
local BN = "void at::native::batch_norm_collect_statistics_kernel<float>(float*)"
local GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas"
local seqs = {
  { stream = 7, kernels = { EW, BN }, count = 20, gpu_us = 200, stream_kernel_us = 1000, first_uid = 5 },
  { stream = 7, kernels = { GEMM, EW }, count = 20, gpu_us = 300, stream_kernel_us = 1000, first_uid = 1 },
  { stream = 7, kernels = { BN, EW }, count = 9, gpu_us = 100, stream_kernel_us = 1000, first_uid = 2 },
  { stream = 7, kernels = { EW, EW .. "x" }, count = 50, gpu_us = 1100, stream_kernel_us = 100000, first_uid = 3 },
}
local sel = seqmod.select(seqs, {})
T.eq(#sel, 1, "one qualifies: a GEMM is not absorbed, 9 times is too few, 11 us per kernel is not short")
local l = text(seqmod.lines(seqs, {}))
T.check(l:find("20 times, 0.200 ms in all (20.0% of the stream's kernel time), 5.00 µs per kernel", 1, true),
  "hint line: " .. l)
T.eq(#seqmod.lines(seqs, { { kernels = { { name = EW }, { name = BN }, { name = GEMM } } } }), 0,
  "a fusion candidate holding its kernels covers it")
T.eq(#seqmod.lines(seqs, { { kernels = { { kernel_name = EW } } } }), 2 + 1 + 1,
  "a candidate with one of them does not")

-- 3. From a trace ---------------------------------------------------------------------
local ev = {}
local function add(e) ev[#ev + 1] = e end
local corr = 0
-- kernels launched 1 ms apart that run 10 us: the stream waits on the host
local function launch(ts, kts, name, cat, args, dur)
  corr = corr + 1
  add(X("cuda_runtime", cat == "kernel" and "cudaLaunchKernel" or "cudaMemcpyAsync", ts, 5,
    { correlation = tostring(corr) }))
  add(F("s", corr, 1, 1, ts))
  local a = { correlation = tostring(corr), stream = "7", device = "0" }
  for k, v in pairs(args or {}) do a[k] = v end
  add(X(cat, name, kts, dur or 10, a, 0, 7))
  add(F("f", corr, 0, 7, kts))
end
-- (two short elementwise kernels in turn: a repeated sequence no fusion candidate covers)
for i = 0, 19 do
  launch(1000 * i, 1000 * i + 10, i % 2 == 0 and "elementwise_kernel_add" or "elementwise_kernel_mul", "kernel", nil, 5)
end
launch(20000, 20500, "slow", "kernel") -- a 500 us delay against a 10 us median
for i = 0, 9 do launch(21000 + 200 * i, 21010 + 200 * i, "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy",
  { bytes = "1000" }, 150) end
add(string.format('{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":100,'
  .. '"args":{"Total Reserved":%d,"Total Allocated":%d,"Bytes":1,"Device Id":0,"Device Type":1}}', 95 * 2 ^ 20,
  90 * 2 ^ 20))
local path = dir .. "/feed.json"
local f = assert(io.open(path, "w"))
f:write('{"deviceProperties":[{"id":0,"name":"Test GPU","totalGlobalMem":', 100 * 2 ^ 20, '}],"traceEvents":[',
  table.concat(ev, ",\n"), "]}")
f:close()
local t = tl.load(path)
local d = assert(feed.data(t, nil))
s = text(feed.section(d))
T.check(s:find("CPU-bound launch", 1, true), "trace: host wait line: " .. s)
-- the same stream's waits while other streams keep the GPU busy: not called CPU-bound
do
  local busy = require("tracelens.json").copy(d)
  busy.all = { span_us = 100000, idle_us = 2000, queued_idle_us = 0 }
  local sb = text(feed.section(busy))
  T.check(sb:find("**Host wait on the busiest stream**", 1, true) and sb:find("The GPU as a whole, though, is idle "
    .. "only 2.0% of its span", 1, true) and not sb:find("CPU-bound launch", 1, true), "a busy GPU: " .. sb)
end
T.check(s:find("1 launch waits more than the p95", 1, true) and s:find("`slow`", 1, true), "trace: delay line")
T.check(s:find("10 H2D copies", 1, true), "trace: pageable line")
T.check(s:find("cuda:0 reserves up to 0.09 GiB, 95.0% of its 0.10 GiB", 1, true), "trace: memory line")

-- 4. The orchestrator writes the section ------------------------------------------------
local out = dir .. "/o"
local ok, code, so, se = T.run(string.format("%s run orchestrator.lua %s --no-rules -q -o %s", T.q(bin), T.q(path),
  T.q(out)))
T.check(ok, "orchestrator exit " .. tostring(code) .. ": " .. tostring(so) .. tostring(se))
local md = T.read_file(out .. "/analysis.md") or ""
T.check(md:find("## GPU Feed and Memory", 1, true) and md:find("Memory near capacity", 1, true),
  "analysis.md has the section")
T.check(md:find("`elementwise_kernel_add` → `elementwise_kernel_mul` on stream 7: 10 times", 1, true),
  "analysis.md's fusion section names the repeated sequence")
T.rmrf(dir)
T.finish()
