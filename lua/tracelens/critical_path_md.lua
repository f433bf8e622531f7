--- tracelens.critical_path_md — the "Critical Path" line of analysis.md
-- (issue 16): whether the representative step is CPU-bound or GPU-bound by
-- its critical path (HTA's algorithm, trace:critical_path; docs/critical-path.md),
-- with the path's split by category, and which findings that makes matter.
-- Owns the choice of the step and the wording; the path comes from C.
-- Only traces with ProfilerStep#N annotations get the line: one step is
-- analysed (the steady step of median wall time), so the analysis of a
-- large trace stays cheap.
local M = {}

local LABEL = {
  { "cpu", "CPU ops and runtime calls" },
  { "gpu_compute", "GPU compute" },
  { "communication", "communication" },
  { "launch_delay", "launch delay" },
  { "kernel_gap", "gaps between kernels" },
}

--- The representative step of trace:steps(): the steady steps (neither
--- warm-up nor partial, and not running GPU work launched before the
--- trace: its path starts behind work the trace does not show; all of them
--- when none is) of median wall time, the upper median, the first of
--- equals. nil when there are no steps.
function M.representative(steps)
  local pool = {}
  for _, s in ipairs(steps or {}) do
    if not s.warmup and not s.partial and not ((s.before_trace_us or 0) > 0) then pool[#pool + 1] = s end
  end
  if #pool == 0 then for _, s in ipairs(steps or {}) do pool[#pool + 1] = s end end
  if #pool == 0 then return nil end
  local order = {}
  for i, s in ipairs(pool) do order[i] = { s = s, i = i } end
  table.sort(order, function(a, b)
    if a.s.wall_us ~= b.s.wall_us then return a.s.wall_us < b.s.wall_us end
    return a.i < b.i
  end)
  return order[#order // 2 + 1].s
end

-- A CPU-bound split of a path without sync edges (blind) is no verdict when
-- calls that wait for the GPU hold at least this share of its CPU time.
M.BLOCKING_SHARE = 0.5

-- Graph launches replaying at least this share of the window's GPU time: the path cannot see the step.
M.GRAPH_SHARE = 0.5

-- A path covering less of the step's wall time than this is said to describe that part only.
local PARTIAL_COVER = 0.6

-- A step whose GPU-free stretches (before its first and after its last GPU work) take at least this share of
-- its wall time is called host-bound whatever the path's split.
M.HOST_STEP_SHARE = 0.5
local HOST_STEP_SHARE = M.HOST_STEP_SHARE

-- Launched work that waits at least this share of the step's wall time before its first kernel runs is told
-- apart from the host's time before the launch.
local QUEUED_SHARE = 0.05

--- The figures of the line (steps: trace:steps()); nil when the trace has
--- no steps or the path cannot be built (the line is then left out).
function M.data(trace, steps)
  local rep = M.representative(steps)
  if not rep then return nil end
  local ok, cp = pcall(trace.critical_path, trace, { step = rep.number, summary = true })
  if not ok or type(cp) ~= "table" or not (cp.length_us > 0) then return nil end
  -- the step's time before and after any GPU work runs (trace:steps(): every GPU event of the trace, the
  -- previous step's tail and work launched before the trace too): the GPU has nothing to do there
  local lead, tail, queued = rep.wall_us, 0, 0
  if rep.any_gpu_start and rep.any_gpu_end then
    lead = math.max(0, rep.any_gpu_start - rep.ts)
    tail = math.max(0, rep.ts + rep.wall_us - rep.any_gpu_end)
  end
  -- launched work waiting to start is not the host's time: the host-only start ends at the step's first launch
  -- call (HTA's backward_thread: its one kernel starts 64 ms after its launch), and no end is claimed when the
  -- step launches work after the last GPU work in it (that work runs after the step, queued meanwhile)
  if rep.first_launch and rep.first_launch - rep.ts < lead then
    local host = math.max(0, rep.first_launch - rep.ts)
    -- (a wait of a few per cent of the step, an ordinary launch latency, stays in the GPU-free start)
    if lead - host >= QUEUED_SHARE * rep.wall_us then queued, lead = lead - host, host end
  end
  if rep.last_launch and rep.any_gpu_end and rep.last_launch > rep.any_gpu_end then tail = 0 end
  -- a host-bound step: the longest host calls in its GPU-free stretches (the system section names them)
  local host_calls
  if lead + tail >= M.HOST_STEP_SHARE * rep.wall_us then
    local ok_calls, calls = pcall(require("tracelens.host_stretch").longest, trace,
      { { rep.ts, rep.ts + lead }, { rep.ts + rep.wall_us - tail, rep.ts + rep.wall_us } }, 3)
    host_calls = ok_calls and calls or nil
  end
  return { step = cp.step, name = rep.name, length_us = cp.length_us, wall_us = cp.wall_us,
    by_category = cp.by_category, bound = cp.bound, events = cp.n_events,
    -- GPU work in the step but no edge back to the CPU: the trace has no cuda_sync events; host_missing: and the
    -- host waited, and the path leaves some of the step uncovered
    blind = cp.blind, host_missing = cp.host_missing, blocking_us = cp.blocking_us, copies_us = cp.copies_us,
    gpu_us = cp.gpu_us, graph_gpu_us = cp.graph_gpu_us, path_threads = cp.path_threads,
    window_threads = cp.window_threads,
    -- the path is shorter than one stream's serial GPU work: not the critical path, no bound
    below_stream = cp.below_stream, stream_busy_us = cp.stream_busy_us, busy_stream = cp.busy_stream,
    gpu_lead_us = lead, gpu_tail_us = tail, gpu_queued_us = queued, host_calls = host_calls,
    no_gpu_at_all = not rep.any_gpu_start }
end

-- A GPU-free stretch at either end of the step worth a sentence: at least this share of its wall time.
local NO_GPU_SHARE = 0.1

local function ms(us) return string.format("%.3f", us / 1000) end

--- The time of the step without GPU work (before its first and after its
--- last GPU work) when it is worth a sentence: µs and share of the wall time,
--- or nil (d: M.data's table or nil).
function M.no_gpu(d)
  if not d or not (d.wall_us > 0) then return nil end
  local t = (d.gpu_lead_us or 0) + (d.gpu_tail_us or 0)
  if t < NO_GPU_SHARE * d.wall_us then return nil end
  return t, t / d.wall_us
end

-- (Kineto writes cuda_sync events only when asked: PyTorch 2.11 without the option writes none)
local NO_SYNC = "The trace records no synchronisation events (`cuda_sync`; the profiler writes them only when given "
  .. "`experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True)`, PyTorch 2.1 and "
  .. "later on CUDA), so the path cannot pass from the GPU back to the CPU where the host waited for it."

-- The GPU-free time of the step (M.no_gpu) as a sentence, or nil.
local function no_gpu_sentence(d, name)
  local lead, tail, wall = d.gpu_lead_us or 0, d.gpu_tail_us or 0, d.wall_us > 0 and d.wall_us or 1
  if not M.no_gpu(d) then return nil end
  local where
  if d.no_gpu_at_all and (d.gpu_queued_us or 0) == 0 then
    where = string.format("all of %s (no GPU work runs in it)", name)
  elseif lead >= NO_GPU_SHARE * wall and tail >= NO_GPU_SHARE * wall then
    where = string.format("the first %s ms and the last %s ms of %s", ms(lead), ms(tail), name)
  elseif lead >= tail then
    where = string.format("the first %s ms of %s (%s)", ms(lead), name, (d.gpu_queued_us or 0) > 0
      and string.format("until its first launch call, whose work then waits %s ms to start", ms(d.gpu_queued_us))
      or "the first GPU work runs then")
  else
    where = string.format("the last %s ms of %s (the last GPU work ends before them)", ms(tail), name)
  end
  return string.format("the GPU has no work for %s, %.0f%% of the step's wall time in which only the "
    .. "host runs: faster kernels cannot shorten that time, shortening that host work (input loading and "
    .. "preprocessing are typical) or overlapping it with GPU work can.", where, (lead + tail) / wall * 100)
end

--- The time of the step without GPU work when the step is host-bound by it
--- (at least HOST_STEP_SHARE of the wall time): µs and share, or nil.
function M.host_bound(d)
  local t, share = M.no_gpu(d)
  if t and share >= HOST_STEP_SHARE then return t, share end
  return nil
end

--- The line when HTA's path is shorter than the busiest stream's serial GPU
--- work (d.below_stream): the path is not the step's critical path, so no
--- CPU- or GPU-bound verdict is drawn from it (owlv2 H100: a 227.517 ms path
--- against 566.759 ms of work on stream 7).
function M.below_stream_line(d, name, path)
  local stream = d.busy_stream and ("stream " .. tostring(d.busy_stream)) or "a stream (no stream id)"
  local s = string.format("HTA's longest path through %s (`tracelens critical-path`) is %s, but %s is busy "
    .. "%s ms (%.0f%% of the step's wall time) with the GPU work the step launched, run in order, so the step's "
    .. "critical path is at least that long: this path is not it, and no CPU- or GPU-bound verdict follows from its "
    .. "split.", name, path, stream, ms(d.stream_busy_us), d.stream_busy_us / d.wall_us * 100)
  if d.blind then s = s .. " " .. NO_SYNC end
  local idle = no_gpu_sentence(d, name)
  local lead, tail = d.gpu_lead_us or 0, d.gpu_tail_us or 0
  if idle and lead + tail >= HOST_STEP_SHARE * d.wall_us then
    -- most of the step has no GPU work: that is the headline, as for a path that gives a bound
    return "**Host-bound step**: " .. idle .. " " .. s
  end
  s = "**No bound from the critical path**: " .. s
  if idle then s = s .. " Besides, " .. idle end
  return s
end

--- The section's lines (d: M.data's table or nil).
function M.section(d)
  if not d then return {} end
  local name = d.name or ("ProfilerStep#" .. tostring(d.step))
  local parts = {}
  local copies = d.copies_us or 0
  for _, l in ipairs(LABEL) do
    parts[#parts + 1] = string.format("%s %.1f%%", l[2], (d.by_category[l[1]] or 0) / d.length_us * 100)
    -- (said from 1% of the path: a few small copies are no part of the verdict)
    if l[1] == "gpu_compute" and copies >= 0.01 * d.length_us then
      parts[#parts] = parts[#parts] .. string.format(" (memory copies and sets %.1f%%)", copies / d.length_us * 100)
    end
  end
  -- a path held mostly by launch delays (a kernel starting long after its
  -- launch call on an idle stream) is neither the host's work nor the
  -- GPU's: the verdict says so instead of calling the step CPU- or GPU-bound
  local by = d.by_category
  local launch = by.launch_delay or 0
  local wall = d.wall_us > 0 and d.wall_us or 1
  local lead, tail = d.gpu_lead_us or 0, d.gpu_tail_us or 0
  local no_gpu = M.no_gpu(d) ~= nil
  local verdict = d.bound
  if launch > (by.cpu or 0) and launch > (by.gpu_compute or 0) + (by.communication or 0) then
    verdict = "Launch-delay"
  end
  local why
  if verdict == "Launch-delay" then
    why = "most of the path is time between launch calls and the start of their kernels, with nothing queued "
      .. "ahead of them on their stream: the work waited elsewhere (driver or runtime latency such as first-launch "
      .. "module loading or JIT compilation, an event wait, other streams' work occupying the GPU). Neither faster "
      .. "kernels nor less host work shortens that part of the step; the `launch_stats` sheet lists the longest "
      .. "launch delays."
  elseif d.bound == "GPU" and copies >= 0.5 * ((by.gpu_compute or 0) + (by.communication or 0)) then
    -- (streams capture: two 256 MiB PCIe copies, 4.872 of the path's 6.04 ms of "GPU compute")
    why = string.format("the memory copies on the path (%s ms) shorten the step more than the kernel findings below: "
      .. "copy fewer bytes, or overlap the copies with compute on another stream.", ms(copies))
  elseif d.bound == "GPU" and no_gpu then
    why = "the kernel and communication findings below shorten the part of the step in which the GPU works."
  elseif d.bound == "GPU" then
    why = "the kernel and communication findings below shorten the step; host-side overhead is hidden behind "
      .. "the GPU's work."
  else
    why = "the host-side findings (CPU idle time, launch overhead, kernel fusion to launch fewer kernels) shorten "
      .. "the step; faster kernels shorten it only where the GPU is on the path."
  end
  local path = string.format("%s of its %s ms (%s)", ms(d.length_us), ms(d.wall_us), table.concat(parts, ", "))
  local line
  if d.below_stream then
    return { "## Critical Path", "", M.below_stream_line(d, name, path), "" }
  end
  -- GPU work mostly replayed by graph launches, which HTA's graph does not enter (graph_decode: every kernel)
  local graph = d.graph_gpu_us or 0
  if d.gpu_us and d.gpu_us > 0 and graph >= M.GRAPH_SHARE * d.gpu_us then
    return { "## Critical Path", "", string.format("**No bound from the critical path**: HTA's longest path through "
      .. "%s (`tracelens critical-path`) is %s, but graph launches replay %.0f%% of the step's GPU time, and HTA's "
      .. "graph has no edge from a graph launch to the kernels it replays (HTA issue #290): the path cannot pass "
      .. "through that work, so its split does not show whether the host or the GPU limits the step.", name, path,
      graph / d.gpu_us * 100), "" }
  end
  -- a CPU-bound split held mostly by calls that wait for the GPU, on a path that cannot follow the wait
  -- (an `.item()` whose device-to-host copy holds most of the path's CPU time): the host waited, no bound
  local blocking = d.blocking_us or 0
  if verdict == "CPU" and d.blind and blocking >= M.BLOCKING_SHARE * (by.cpu or 0) and blocking > 0 then
    return { "## Critical Path", "", string.format("**No bound from the critical path**: HTA's longest path through "
      .. "%s (`tracelens critical-path`) is %s, but %s ms of its CPU time (%.0f%%) is in calls that wait for the GPU "
      .. "(synchronizations and blocking copies such as `.item()` or `.cpu()`): there the host waited for GPU work, "
      .. "which the path cannot follow, so the split does not show whether the host or the GPU limits the step. %s",
      name, path, ms(blocking), blocking / by.cpu * 100, NO_SYNC), "" }
  end
  if no_gpu then
    local idle = no_gpu_sentence(d, name)
    if lead + tail >= HOST_STEP_SHARE * wall then
      -- most of the step has no GPU work: that, not the path's split, is the headline
      line = string.format("**Host-bound step**: %s Where the GPU works, the critical path (HTA's algorithm; "
        .. "`tracelens critical-path`) is %s, %s-bound, so %s", idle, path, verdict, why)
    else
      line = string.format("**%s-bound**: the critical path of %s (HTA's algorithm; `tracelens critical-path`) is "
        .. "%s, so %s Besides, %s", verdict, name, path, why, idle)
    end
  else
    line = string.format("**%s-bound**: the critical path of %s (HTA's algorithm; `tracelens critical-path`) is "
      .. "%s, so %s", verdict, name, path, why)
  end
  local cover = d.wall_us > 0 and d.length_us / d.wall_us or 1
  -- a path on fewer CPU threads than the step uses: HTA's graph has no edge between threads (gpt_train,
  -- resnet_train: the path stays on the autograd thread, the forward on the main thread is left out)
  local threads = (d.path_threads or 0) > 0 and (d.window_threads or 0) > d.path_threads and cover < PARTIAL_COVER
  if threads then
    line = line .. string.format(" The path stays on %d of the %d CPU threads with work in the step: HTA's graph has "
      .. "no edge between threads (a training step's main thread, for one, waits in `backward()` for the autograd "
      .. "thread), so the path covers %.0f%% of the step's wall time and its %s-bound verdict describes that part "
      .. "only.", d.path_threads, d.window_threads, cover * 100, verdict == "Launch-delay" and "launch-delay" or verdict)
  end
  if d.host_missing then
    line = line .. " " .. NO_SYNC:sub(1, -2) .. ": host work after such a wait is missing from the path, which may "
      .. "then be shorter than the step's real critical path."
    if cover < PARTIAL_COVER and not threads then
      -- the GPU-free time said above: most of what the path leaves out, or not
      local most = no_gpu and (lead + tail) >= 0.5 * (d.wall_us - d.length_us)
      line = line .. string.format(" Here the path covers %.0f%% of the step's wall time, so the path's %s-bound "
        .. "verdict describes that part of the step only%s.", cover * 100,
        verdict == "Launch-delay" and "launch-delay" or verdict, most and " (the time without GPU work above is "
        .. "most of the rest)" or "")
    end
  end
  return { "## Critical Path", "", line, "" }
end

return M
