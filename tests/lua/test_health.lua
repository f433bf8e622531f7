-- `tracelens check` and trace:check(): a trace built here with one of each
-- problem, its figures hand-counted; the healthy demo; a CPU-only trace;
-- the sampled HTA trace (no flow events) and the Qwen trace (GPU events
-- with no launch) from ../shared/data when present; exit statuses.
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local health = require "tracelens.health"
local bin = T.tracelens_bin()
local dir = T.tmpdir()
local X, F = T.x_event, T.flow_event

local function write(name, events)
  local path = dir .. "/" .. name
  local f = assert(io.open(path, "w"))
  f:write('{"traceEvents":[', table.concat(events, ",\n"), "]}")
  f:close()
  return path
end

-- Thread 1: a step holding two ops; each op launches one kernel (with its
-- flow); a third launch has no flow; a fourth kernel has no launch at all;
-- a graph launch replays two kernels; a memset call without GPU memset.
-- GPU stream 7: k1 [1000, 1100), k2 [1095, 1200) overlaps k1 by 5 us;
-- k3 (no flow) [1300, 1310); k4 (no launch) [1400, 1420) after the step;
-- graph kernels g1 [1500,1510), g2 [1510, 1530) on stream 8; k2 starts
-- 3 us before its launch call (clock offset).
local ev = {
  X("user_annotation", "ProfilerStep#1", 900, 500, {}),
  X("cpu_op", "aten::mm", 950, 100, { ["Input Dims"] = "[[2, 2], [2, 2]]" }),
  X("cuda_runtime", "cudaLaunchKernel", 960, 10, { correlation = "1" }),
  F("s", 1, 1, 1, 960),
  X("cpu_op", "aten::add", 1060, 100, {}),
  X("cuda_runtime", "cudaLaunchKernel", 1098, 10, { correlation = "2" }),
  F("s", 2, 1, 1, 1098),
  X("cuda_runtime", "cudaLaunchKernel", 1150, 5, { correlation = "3" }),
  X("cuda_runtime", "cudaGraphLaunch", 1200, 20, { correlation = "5" }),
  X("cuda_runtime", "cudaMemsetAsync", 1250, 5, { correlation = "6" }),
  X("kernel", "k1", 1000, 100, { correlation = "1", stream = "7", device = "0" }, 0, 7),
  F("f", 1, 0, 7, 1000),
  X("kernel", "k2", 1095, 105, { correlation = "2", stream = "7", device = "0" }, 0, 7),
  F("f", 2, 0, 7, 1095),
  X("kernel", "k3", 1300, 10, { correlation = "3", stream = "7", device = "0" }, 0, 7),
  X("kernel", "k4", 1400, 20, { correlation = "4", stream = "7", device = "0" }, 0, 7),
  X("kernel", "g1", 1500, 10, { correlation = "5", stream = "8", device = "0" }, 0, 8),
  X("kernel", "g2", 1510, 20, { correlation = "5", stream = "8", device = "0" }, 0, 8),
}
local sick = write("sick.json", ev)
local t = tl.load(sick)
local h = t:check()
T.eq(h.gpu_events, 6, "GPU events")
T.close(h.gpu_us, 100 + 105 + 10 + 20 + 10 + 20, "GPU time (us)", 0, 1e-9)
T.eq(h.gpu_unlinked, 2, "unlinked: k3 (no flow) and k4 (no launch)")
T.eq(h.gpu_unlinked_launched, 1, "k3 has a launch call but no flow")
T.close(h.gpu_unlinked_launched_us, 10, "k3's time", 0, 1e-9)
T.eq(h.flow_events, 4, "flow events")
T.eq(h.graph_launches, 1, "graph launches")
T.eq(h.gpu_graph, 2, "graph kernels")
T.close(h.gpu_graph_us, 30, "graph kernel time", 0, 1e-9)
T.eq(h.cpu_ops, 2, "cpu ops")
T.eq(h.cpu_ops_with_shapes, 1, "cpu ops with shapes")
T.eq(h.steps, 1, "steps")
T.eq(h.gpu_after_steps, 1, "k4 (no launch) starts after the step ends (1400); g1, g2 run after it, launched in it")
T.close(h.gpu_after_steps_us, 20, "GPU time launched after the step", 0, 1e-9)
T.eq(h.gpu_before_steps, 0, "nothing before the step")
T.eq(h.streams, 2, "two streams")
T.eq(h.stream_overlaps, 1, "k2 overlaps k1")
T.close(h.max_stream_overlap_us, 5, "by 5 us", 0, 1e-9)
T.eq(h.gpu_before_launch, 1, "k2 starts before its launch")
T.close(h.max_gpu_before_launch_us, 3, "by 3 us", 0, 1e-9)
T.eq(h.launches, 4, "kernel and graph launch calls")
T.eq(h.launches_without_gpu, 0, "every launch call has GPU work")
T.eq(h.memset_calls, 1, "memset calls")
T.eq(h.memset_calls_without_gpu, 1, "the memset call has no GPU memset")
local levels = {}
for _, c in ipairs(health.checks(t)) do levels[c.id] = c.level end
for id, want in pairs { gpu_work = "ok", unlinked_flows = "warn", unlinked_missing = "warn", graph_replay = "warn",
  window = "note", stream_overlap = "warn", clocks = "warn", memsets = "note", stacks = "note", shapes = "ok" } do
  T.eq(levels[id], want, "check " .. id)
end

-- the command: text, exit status 3 on warnings, --json with the figures
local ok, code, out = T.run(T.q(bin) .. " check " .. T.q(sick))
T.eq(code, 3, "check exits 3 on warnings")
T.check(out:find("verdict: usable, with the limits above %(0 failed, 5 warnings, 3 notes%)"), "verdict line: " .. out)
T.check(out:find("fix: profile with with_stack=True", 1, true), "advice printed")
ok, code, out = T.run(T.q(bin) .. " check --json " .. T.q(sick))
T.eq(code, 3, "--json exit status")
local doc = require("tracelens.json").decode(out)
T.eq(doc.figures.gpu_unlinked, 2, "--json figures")
T.eq(#doc.checks, #health.checks(t), "--json checks")
-- several traces: one JSON document, an array of their objects
ok, code, out = T.run(T.q(bin) .. " check --json " .. T.q(sick) .. " " .. T.q(root .. "/examples/demo_trace.json"))
local okd, docs = pcall(require("tracelens.json").decode, out)
T.check(okd and #docs == 2 and docs[1].path == sick and docs[2].figures ~= nil, "--json, two traces: an array of two")
-- -q: the verdict alone does not point at limits it did not print
ok, code, out = T.run(T.q(bin) .. " check -q " .. T.q(sick))
T.check(out:find("^verdict: usable, with limits %(run without %-q to see them%) %(0 failed, 5 warnings, 3 notes%)  "),
  "-q verdict: " .. out)

ok, code, out = T.run(T.q(bin) .. " check " .. T.q(root .. "/examples/demo_trace.json"))
T.eq(code, 0, "the demo is healthy")
T.check(out:find("verdict: healthy"), "healthy verdict")

-- a graph capture trace: launches between hipStreamBeginCapture and the next
-- hipStreamEndCapture of their thread were recorded into a graph, never run
do
  local cap = write("capture.json", {
    X("cuda_runtime", "hipLaunchKernel", 10, 5, { correlation = "1" }),
    X("kernel", "warmup_kernel", 20, 10, { correlation = "1", stream = "7", device = "0" }, 0, 7),
    F("s", 1, 1, 1, 10), F("f", 1, 0, 7, 20),
    X("cuda_runtime", "hipStreamBeginCapture", 100, 5, {}),
    X("cuda_runtime", "hipLaunchKernel", 110, 5, { correlation = "2" }),
    X("cuda_runtime", "hipLaunchKernel", 120, 5, { correlation = "3" }),
    X("cuda_runtime", "hipStreamEndCapture", 130, 5, {}),
    -- on another thread, outside any capture: a launch whose GPU record is missing
    X("cuda_runtime", "hipLaunchKernel", 115, 5, { correlation = "4" }, 1, 2),
    X("cuda_runtime", "hipLaunchKernel", 190, 5, { correlation = "5" }),
    X("kernel", "later_kernel", 200, 10, { correlation = "5", stream = "7", device = "0" }, 0, 7),
    F("s", 5, 1, 1, 190), F("f", 5, 0, 7, 200),
  })
  local _, _, o = T.run(T.q(bin) .. " check " .. T.q(cap))
  T.check(o:find("[note] launches recorded into a graph: 2 launch calls fall inside a stream capture", 1, true),
    "capture: two captured launches: " .. o)
  T.check(o:find("[warn] launches without GPU work: 1 of 5 kernel, copy or graph launch calls has no GPU event", 1, true),
    "capture: the launch on the other thread is still missing its GPU record: " .. o)
end

-- counts and their nouns and verbs agree, one and many
local function has(text, want, what) T.check(text:find(want, 1, true), what .. ": " .. want .. "\n" .. text) end
ok, code, out = T.run(T.q(bin) .. " check " .. T.q(sick))
has(out, "GPU work: 6 GPU events, 0.3 ms of GPU time over 2 streams,", "many events, many streams")
has(out, "1 GPU event (0.0 ms, 3.8% of all GPU event time) has a launch call with its correlation id but no ac2g flow event "
  .. "linking the two (4 flow events in the trace)", "one event without a flow")
has(out, "so this event has no launching op, shape or stack and is analysed by kernel name only", "this event")
has(out, "1 GPU event (0.0 ms, 7.5% of all GPU event time) has no launch call in the trace (no runtime event has its "
  .. "correlation id): it is analysed by kernel name only", "one event without a launch")
has(out, "1 of 1 memset call has no GPU memset event with its correlation id: its GPU time", "one memset call")
has(out, "1 of 2 CPU ops records its input shapes", "one of two ops with shapes")
has(out, "1 graph launch replays 2 GPU events (0.0 ms, 11.3% of all GPU event time) with no CPU op, shape or stack: their time",
  "one graph launch, two events")
-- by their launch calls: g1 and g2 run after the step but its graph launch is in it (a step's asynchronous tail
-- is the step's work); k4, without a launch, after it by its own start
has(out, "0 GPU events (0.0 ms) were launched before the only step and 1 (0.0 ms) after it:", "one step")
has(out, "1 GPU event overlaps the previous event of its stream by more than", "one overlap")
has(out, "1 GPU event starts more than", "one early start")
has(out, "before its launch call", "its launch call")
has(out, "(0 failed, 5 warnings, 3 notes)", "verdict counts")

-- one of each: a launch without GPU work, one op without shapes, one
-- zero-length kernel, one negative duration, one step, one stream
local one = write("one.json", {
  X("user_annotation", "ProfilerStep#1", 900, 500, {}),
  X("cpu_op", "aten::relu", 950, 100, {}),
  X("cuda_runtime", "cudaLaunchKernel", 955, 5, { correlation = "9" }),
  X("cuda_runtime", "cudaLaunchKernel", 960, 10, { correlation = "1" }),
  F("s", 1, 1, 1, 960),
  X("user_annotation", "mark", 980, -5, {}),
  X("kernel", "k1", 1000, 0, { correlation = "1", stream = "7", device = "0" }, 0, 7),
  F("f", 1, 0, 7, 1000),
})
ok, code, out = T.run(T.q(bin) .. " check " .. T.q(one))
has(out, "GPU work: 1 GPU event, 0.0 ms of GPU time over 1 stream,", "one event, one stream")
has(out, "1 of 2 kernel, copy or graph launch calls has no GPU event with its correlation id: its GPU record is "
  .. "missing", "one launch without GPU work")
has(out, "the only CPU op does not record its input shapes", "the only op")
has(out, "1 step; all GPU work was launched inside it", "one step, all launched inside")
has(out, "1 event has a negative duration", "one negative duration")
has(out, "1 GPU event lasts 0 us (it adds no time)", "one zero-length event")
has(out, "(0 failed, 3 warnings, 2 notes)", "verdict counts")

-- work launched before the trace is in no step: k0 (no launch) runs at 800, before the first launch call (960)
-- and before the step's annotation; k1 and k2 are launched inside the step, k2 running past its end
local early = write("early.json", {
  X("user_annotation", "ProfilerStep#1", 900, 200, {}),
  X("cuda_runtime", "cudaLaunchKernel", 960, 10, { correlation = "1" }),
  F("s", 1, 1, 1, 960),
  X("cuda_runtime", "cudaLaunchKernel", 1000, 10, { correlation = "2" }),
  F("s", 2, 1, 1, 1000),
  X("kernel", "k0", 800, 50, { correlation = "7", stream = "7", device = "0" }, 0, 7),
  X("kernel", "k1", 970, 30, { correlation = "1", stream = "7", device = "0" }, 0, 7),
  F("f", 1, 0, 7, 970),
  X("kernel", "k2", 1050, 100, { correlation = "2", stream = "7", device = "0" }, 0, 7),
  F("f", 2, 0, 7, 1050),
})
ok, code, out = T.run(T.q(bin) .. " check " .. T.q(early))
has(out, "[warn] GPU work launched before the trace: 1 GPU event (0.1 ms, 27.8% of all GPU event time) starts before",
  "k0 launched before the trace")
has(out, "[ok]   steps: 1 step; all 2 GPU events launched in the trace were launched inside it; the 1 launched "
  .. "before the trace (above) is in no step", "steps: k1 and k2 in the step, k0 in none")
T.check(not out:find("all GPU work", 1, true), "no 'all GPU work' while k0 is outside the step: " .. out)
-- the same with k3 launched after the step (at 1200): the note counts it and names k0 apart
local late = write("late.json", {
  X("user_annotation", "ProfilerStep#1", 900, 200, {}),
  X("cuda_runtime", "cudaLaunchKernel", 960, 10, { correlation = "1" }),
  F("s", 1, 1, 1, 960),
  X("cuda_runtime", "cudaLaunchKernel", 1200, 10, { correlation = "3" }),
  F("s", 3, 1, 1, 1200),
  X("kernel", "k0", 800, 50, { correlation = "7", stream = "7", device = "0" }, 0, 7),
  X("kernel", "k1", 970, 30, { correlation = "1", stream = "7", device = "0" }, 0, 7),
  F("f", 1, 0, 7, 970),
  X("kernel", "k3", 1250, 10, { correlation = "3", stream = "7", device = "0" }, 0, 7),
  F("f", 3, 0, 7, 1250),
})
ok, code, out = T.run(T.q(bin) .. " check " .. T.q(late))
has(out, "[note] GPU work outside the steps: 0 GPU events (0.0 ms) were launched before the only step and 1 (0.0 ms) "
  .. "after it (besides the 1 launched before the trace, above): the profiling window cuts a step",
  "k3 after the step, k0 before the trace")

-- work launched before the trace that runs past its first launch call (no synchronisation at the end of the
-- warm-up step): no launch links to ka, it starts at 1010, after the first launch call (960), but its
-- correlation id, 5, is below every launch call's (10, 11), so it was launched before them; kb, unlinked too
-- and also after the first launch call, has a higher id (12): its launch is missing. k0 starts before the first
-- launch call. GPU time: k0 40 + ka 60 + k1 30 + k2 100 + kb 20 = 250 us.
local function tail_events(o)
  o = o or {}
  return {
    X("user_annotation", "ProfilerStep#1", 900, 400, {}),
    X("cuda_runtime", "cudaLaunchKernel", 960, 10, { correlation = "10" }),
    F("s", 10, 1, 1, 960),
    X("cuda_runtime", "cudaLaunchKernel", 1000, 10, { correlation = "11" }, o.pid2 or 1, 1),
    F("s", 11, o.pid2 or 1, 1, 1000),
    o.extra or X("cpu_op", "aten::relu", 950, 100, {}),
    X("kernel", "k0", 800, 40, { correlation = "3", stream = "7", device = "0" }, 0, 7),
    X("kernel", "ka", 1010, 60, { correlation = o.ka or "5", stream = "7", device = "0" }, 0, 7),
    X("kernel", "k1", 1070, 30, { correlation = "10", stream = "7", device = "0" }, 0, 7),
    F("f", 10, 0, 7, 1070),
    X("kernel", "k2", 1100, 100, { correlation = "11", stream = "7", device = "0" }, 0, 7),
    F("f", 11, 0, 7, 1100),
    X("kernel", "kb", 1200, 20, { correlation = "12", stream = "7", device = "0" }, 0, 7),
  }
end
do
  local tail = write("tail.json", tail_events())
  local tt = tl.load(tail)
  local th = tt:check()
  T.eq(th.gpu_before_trace, 2, "tail: k0 and ka launched before the trace")
  T.close(th.gpu_before_trace_us, 100, "tail: k0 + ka = 100 us", 0, 1e-9)
  T.eq(th.gpu_before_trace_by_id, 1, "tail: ka told by its correlation id")
  T.close(th.gpu_before_trace_by_id_us, 60, "tail: ka's 60 us", 0, 1e-9)
  T.eq(th.gpu_unlinked - th.gpu_unlinked_launched - th.gpu_before_trace, 1, "tail: kb alone without a launch")
  -- the analysis' exclusion: the utilisation and the unlinked rows leave ka out, kb stays
  local u = tt:unlinked_gpu()
  T.eq(u.before_trace_count, 2, "tail: unlinked_gpu counts k0 and ka apart")
  T.eq(u.count, 1, "tail: kb the only unlinked event analysed")
  T.eq(u.unlinked_ns, 20000, "tail: kb's 20 us")
  T.eq(u.total_ns, 150000, "tail: k1 + k2 + kb")
  local tline = tt:timeline({ include_unlinked = true, before_trace = false })
  T.close(tline.total_time, 150, "tail: the analysis' timeline spans k1 to kb, [1070, 1220)", 0, 1e-9)
  -- the steps: k1, k2 and kb in the step, busy [1070, 1220)
  local st = tt:steps()[1]
  T.eq(st.gpu_events, 3, "tail: the step's GPU events, ka not among them")
  T.eq(st.unlinked_gpu_events, 1, "tail: kb the step's only unlinked event")
  T.close(st.busy_us, 150, "tail: the step's busy time without ka", 0, 1e-9)
  ok, code, out = T.run(T.q(bin) .. " check " .. T.q(tail))
  has(out, "[warn] GPU work launched before the trace: 2 GPU events (0.1 ms, 40.0% of all GPU event time) have no launch call "
    .. "in the trace: 1 starts before its first launch call and 1 (0.1 ms) after it but carries a correlation id "
    .. "below every launch call's in the trace (a process's correlation ids grow with each runtime call), so they "
    .. "were launched before the profiling window opened", "tail: k0 and ka launched before the trace, said apart")
  has(out, "[warn] GPU events without a launch: 1 GPU event (0.0 ms, 8.0% of all GPU event time) has no launch call in the "
    .. "trace", "tail: kb without a launch")
  has(out, "[ok]   steps: 1 step; all 3 GPU events launched in the trace were launched inside it; the 2 launched "
    .. "before the trace (above) are in no step", "tail: k1, k2 and kb in the step, k0 and ka in none")
  -- ka alone (k0 at 1300, after everything, with id 13): "starts after the trace's first launch call"
  local only = tail_events()
  only[7] = X("kernel", "k0", 1300, 40, { correlation = "13", stream = "7", device = "0" }, 0, 7)
  ok, code, out = T.run(T.q(bin) .. " check " .. T.q(write("tail_only.json", only)))
  has(out, "[warn] GPU work launched before the trace: 1 GPU event (0.1 ms, 24.0% of all GPU event time) starts after the "
    .. "trace's first launch call but carries a correlation id below every launch call's in the trace",
    "tail_only: ka alone")
end
-- no rule where ids do not compare: launch calls of two pids (GPU events carry no process), a launch call
-- without a correlation id, a GPU event with id 0: ka is then a GPU event without a launch, like kb
for _, c in ipairs({
  { "tail_pids", { pid2 = 2 } },
  { "tail_nocorr", { extra = X("cuda_runtime", "cudaLaunchKernel", 1250, 5, {}) } },
  { "tail_zero", { ka = "0" } },
}) do
  local th = tl.load(write(c[1] .. ".json", tail_events(c[2]))):check()
  T.eq(th.gpu_before_trace, 1, c[1] .. ": k0 alone launched before the trace")
  T.eq(th.gpu_before_trace_by_id, 0, c[1] .. ": none told by its correlation id")
  T.eq(th.gpu_unlinked - th.gpu_unlinked_launched - th.gpu_before_trace, 2, c[1] .. ": ka and kb without a launch")
end

local cpu = write("cpu.json", { X("cpu_op", "aten::mm", 0, 10, {}) })
ok, code, out = T.run(T.q(bin) .. " check " .. T.q(cpu))
T.eq(code, 3, "a CPU-only trace fails the check")
T.check(out:find("%[fail%] no GPU work"), "no GPU work: " .. out)

local bad = write("bad.json", {})
local f = assert(io.open(bad, "w")); f:write('{"traceEvents": [ {"ph": '); f:close()
local _, c1, _, e1 = T.run(T.q(bin) .. " check " .. T.q(bad))
T.eq(c1, 1, "unreadable trace: exit 1")
T.check(select(2, e1:gsub("\n", "")) == 1 and e1:find("bad.json"), "one line naming the file: " .. e1)
local _, c2 = T.run(T.q(bin) .. " check")
T.eq(c2, 2, "no trace: usage error")
local _, c3, _, e3 = T.run(T.q(bin) .. " check --bogus " .. T.q(sick))
T.eq(c3, 2, "unknown option: usage error")
T.check(e3:find("see `tracelens check --help`", 1, true), "usage error points to --help")

-- shared traces: the sampled HTA trace has no flows (linked by correlation); Qwen's unlinked GPU events ran before the trace
if data and T.file_exists(data .. "/hta/trace_filter/sampled_rank-0.json.gz") then
  local _, _, o = T.run(T.q(bin) .. " check " .. T.q(data .. "/hta/trace_filter/sampled_rank-0.json.gz"))
  -- no flow at all: linked by correlation id (tree.c), said as a note
  T.check(o:find("[note] GPU events linked by correlation id: the trace has no ac2g flow event, so 1,204 GPU events "
    .. "were linked to their launch calls by correlation id alone", 1, true)
    and o:find("[ok]   every GPU event is linked to its launch call", 1, true),
    "sampled trace: linked by correlation, said as a note: " .. o)
  -- launch calls at the top level, no CPU op (562 GPU events, 0 cpu_op events in the file)
  local gpu_only = data .. "/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz"
  if T.file_exists(gpu_only) then
    _, _, o = T.run(T.q(bin) .. " check " .. T.q(gpu_only))
    T.check(o:find("[warn] no CPU operations: the trace has no cpu_op event", 1, true)
      and o:find("[ok]   every GPU event is linked to its launch call", 1, true)
      and not o:find("input shapes", 1, true), "gpu-only trace: no CPU operations said, linked launches ok: " .. o)
  end
  _, _, o = T.run(T.q(bin) .. " check " .. T.q(data .. "/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"))
  -- Qwen's GPU events without a launch all ran before its first launch call
  -- (the previous step's tail): launched before the trace, not lost records
  T.check(o:find("[warn] GPU work launched before the trace: 509 GPU events (13.7 ms, 30.1% of all GPU event time) start "
    .. "before the trace's first launch call", 1, true) and not o:find("have no launch call", 1, true),
    "Qwen: GPU work launched before the trace named: " .. o)
  -- and its step line says so (1,707 GPU events; 1,198 linked to launch calls inside ProfilerStep#6's
  -- [ts, ts + dur), the 509 others unlinked and before the first launch call: counted from the JSON)
  T.check(o:find("[ok]   steps: 1 step; all 1,198 GPU events launched in the trace were launched inside it; the 509 "
    .. "launched before the trace (above) are in no step", 1, true) and not o:find("all GPU work inside", 1, true),
    "Qwen: the steps line names the 509 events outside the step: " .. o)
else
  print("note: ../shared/data not found: the shared-trace checks are skipped")
end
-- overlaps on one stream: after a plain launch a timestamp error (warn); after an extended launch
-- (cudaLaunchKernelExC: programmatic dependent launch can start a kernel early) possibly real (a note)
do
  local function overlap_checks(launch_name)
    local events = {
      X("cuda_runtime", "cudaLaunchKernel", 100, 5, { correlation = "1" }),
      X("kernel", "k1", 110, 50, { correlation = "1", stream = "7", device = "0" }, 0, 7),
      X("cuda_runtime", launch_name, 120, 5, { correlation = "2" }),
      X("kernel", "k2", 150, 30, { correlation = "2", stream = "7", device = "0" }, 0, 7),
    }
    local ids = {}
    for _, c in ipairs(health.checks(tl.load(write("overlap.json", events)))) do ids[c.id] = c end
    return ids
  end
  local plain = overlap_checks("cudaLaunchKernel")
  T.check(plain.stream_overlap and plain.stream_overlap.level == "warn" and not plain.stream_overlap_ex,
    "a 10 us overlap after a plain launch: the warning")
  local ex = overlap_checks("cudaLaunchKernelExC")
  T.check(ex.stream_overlap_ex and ex.stream_overlap_ex.level == "note" and not ex.stream_overlap
    and ex.stream_overlap_ex.detail:find("^1 GPU event launched with an extended launch") and
    ex.stream_overlap_ex.detail:find("(up to 10.0 us)", 1, true), "after cudaLaunchKernelExC: a note: "
    .. tostring(ex.stream_overlap_ex and ex.stream_overlap_ex.detail))
end

-- synchronisation records: a launch, then the host waits in cudaStreamSynchronize; without a cuda_sync event
-- the check notes it (and names the profiler option), with one it does not
do
  local base = {
    X("cpu_op", "aten::mm", 100, 50, {}),
    X("cuda_runtime", "cudaLaunchKernel", 110, 10, { correlation = "1" }),
    F("s", 1, 1, 1, 110),
    X("kernel", "k1", 130, 200, { correlation = "1", stream = "7", device = "0" }, 0, 7),
    F("f", 1, 0, 7, 130),
    X("cuda_runtime", "cudaStreamSynchronize", 160, 175, { correlation = "2" }),
  }
  local function note_of(events)
    for _, c in ipairs(health.checks(tl.load(write("sync.json", events)))) do
      if c.id == "sync_events" then return c end
    end
  end
  local c = note_of(base)
  T.check(c and c.level == "note" and c.detail:find("^1 call of cudaDeviceSynchronize, cudaStreamSynchronize, "
    .. "cudaEventSynchronize or cudaStreamWaitEvent but no cuda_sync event") and c.fix:find("enable_cuda_sync_events=True",
    1, true), "no cuda_sync event: noted, with the profiler option: " .. tostring(c and c.detail))
  local with = { table.unpack(base) }
  with[#with + 1] = X("cuda_sync", "Stream Sync", 330, 5, { correlation = "2", stream = "7", device = "0" }, 0, 7)
  T.check(note_of(with) == nil, "a cuda_sync event: no note")
end

T.rmrf(dir)
T.finish()
