-- health.lua — the trace health check: verdicts and advice from the
-- figures of trace:check() (src/trace/health.c). Each check is
-- {id, level = "ok" | "note" | "warn" | "fail", title, detail, fix}; a
-- warning or failure limits what an analysis of the trace can say.
-- Used by `tracelens check` (lua/check_cmd.lua) and the orchestrator.
local M = {}

local function ms(us) return string.format("%.1f ms", us / 1000) end
local function pct(part, whole) return whole > 0 and string.format("%.1f%%", part / whole * 100) or "0%" end
local function n(x)
  local s = tostring(math.floor(x))
  return s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
end

-- The word that agrees with a count x: one (x == 1) or many.
local function pick(x, one, many) return x == 1 and one or many end

-- A count and its noun, and optionally a verb agreeing with it: every count
-- in a message is written with this. The plural adds "es" after "ch", "sh",
-- "s" or "x", "s" otherwise; verb: the singular and plural forms.
--   count(1, "GPU event", "has", "have") -> "1 GPU event has"
--   count(2, "graph launch")             -> "2 graph launches"
local function count(x, noun, verb_one, verb_many)
  local plural = noun .. ((noun:find("[cs]h$") or noun:find("[sx]$")) and "es" or "s")
  local s = n(x) .. " " .. pick(x, noun, plural)
  if verb_one then s = s .. " " .. pick(x, verb_one, verb_many) end
  return s
end

local FIX = {
  activities = "profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] (ROCm too)",
  shapes = "profile with record_shapes=True",
  stacks = "profile with with_stack=True (call stacks, nn.Module parents and entry points need it)",
  flows = "keep the ac2g flow events (the launch-to-GPU arrows) when filtering or sampling a trace "
    .. "(HTA's trace_filter drops them); the profiler writes them by default",
  before_trace = "synchronize (torch.cuda.synchronize()) before the profiler's active window opens, e.g. at the "
    .. "end of each step, so no earlier work runs inside it",
  dropped = "profile every thread (the default) and start the active window after warm-up "
    .. "(torch.profiler.schedule(wait=1, warmup=1, active=N)); a full activity buffer also drops runtime "
    .. "records: profile fewer steps per trace",
  capture = "for a vLLM or SGLang trace, run `tracelens run orchestrator.lua TRACE --inference --capture_folder DIR` "
    .. "(or `tracelens report`) with the capture traces (vLLM: --profiler-config.capture_torch_profiler True; SGLang: "
    .. "--enable-profile-cuda-graph); the merge needs their iteration annotations, so for a graph your own code "
    .. "captures (`torch.cuda.graph`), profile the same step run eagerly to see its ops",
  steps = "call prof.step() once per iteration, with torch.profiler.schedule(wait, warmup, active)",
  window = "let the schedule's active window cover whole steps (call prof.step() at the end of each)",
  sync = "profile with experimental_config=torch._C._profiler._ExperimentalConfig(enable_cuda_sync_events=True) "
    .. "(PyTorch 2.1 and later)",
  clocks = "a known Kineto/driver issue on some systems; launch-to-start delays from this trace are "
    .. "unreliable: compare with a trace from another driver version",
  overlap = "update the profiler/driver (one stream runs its work in order: overlapping records are "
    .. "timestamp errors)",
}

--- The checks of one trace (a tl.load handle): an array, in a fixed order.
function M.checks(trace)
  local h = trace:check()
  local merged = trace.capture_summary and trace:capture_summary()
  local out = {}
  local function add(id, level, title, detail, fix)
    out[#out + 1] = { id = id, level = level, title = title, detail = detail, fix = fix }
  end

  -- GPU work
  if h.gpu_events == 0 then
    add("gpu_work", "fail", "no GPU work", "the trace holds no kernel, memcpy or memset event: there is "
      .. "nothing for a GPU analysis", FIX.activities)
    return out, h
  end
  add("gpu_work", "ok", "GPU work", count(h.gpu_events, "GPU event") .. ", " .. ms(h.gpu_us) .. " of GPU time over "
    .. count(h.streams, "stream") .. ", in a " .. ms(h.span) .. " window")

  -- GPU events without a launching CPU op
  local nested = h.gpu_unlinked_launched
  local before = h.gpu_before_trace or 0
  local missing = h.gpu_unlinked - nested - before
  local missing_us = h.gpu_unlinked_us - h.gpu_unlinked_launched_us - (h.gpu_before_trace_us or 0)
  if before > 0 then
    -- before the first launch call, or after it with a correlation id below every launch call's (by_id)
    local by_id = h.gpu_before_trace_by_id or 0
    local early = before - by_id
    local ids = pick(by_id, "carries a correlation id", "carry correlation ids") .. " below every launch call's in "
      .. "the trace (a process's correlation ids grow with each runtime call)"
    local why = pick(before, "starts", "start") .. " before the trace's first launch call"
    if by_id > 0 and early == 0 then
      why = pick(before, "starts", "start") .. " after the trace's first launch call but " .. ids
    elseif by_id > 0 then
      why = pick(before, "has", "have") .. " no launch call in the trace: " .. n(early) .. " "
        .. pick(early, "starts", "start") .. " before its first launch call and " .. n(by_id) .. " ("
        .. ms(h.gpu_before_trace_by_id_us) .. ") after it but " .. ids
    end
    add("gpu_before_trace", "warn", "GPU work launched before the trace", count(before, "GPU event") .. " ("
      .. ms(h.gpu_before_trace_us) .. ", " .. pct(h.gpu_before_trace_us, h.gpu_us) .. " of all GPU event time) "
      .. why .. ", so "
      .. pick(before, "it was", "they were") .. " launched before the profiling window opened (typically the "
      .. "previous step's tail, running while the first profiled step waits for it): the analysis leaves "
      .. pick(before, "it", "them") .. " out, as work of no profiled op", FIX.before_trace)
  end
  if nested > 0 then
    add("unlinked_flows", "warn", "GPU events without a launch flow", count(nested, "GPU event") .. " ("
      .. ms(h.gpu_unlinked_launched_us) .. ", " .. pct(h.gpu_unlinked_launched_us, h.gpu_us)
      .. " of all GPU event time) " .. pick(nested, "has", "have") .. " a launch call with " .. pick(nested, "its", "their")
      .. " correlation id but no ac2g flow event linking the two "
      .. (h.flow_events == 0 and "(the trace has no flow events at all)" or "("
        .. count(h.flow_events, "flow event") .. " in the trace)")
      .. ": launches are linked to GPU work through these flows (as the reference does), so "
      .. pick(nested, "this event has", "these events have") .. " no launching op, shape or stack and "
      .. pick(nested, "is", "are") .. " analysed by kernel name only", FIX.flows)
  end
  local by_corr = h.gpu_linked_by_correlation or 0
  if by_corr > 0 then
    add("linked_by_correlation", "note", "GPU events linked by correlation id", "the trace has no ac2g flow event, "
      .. "so " .. count(by_corr, "GPU event") .. " " .. pick(by_corr, "was", "were") .. " linked to "
      .. pick(by_corr, "its launch call", "their launch calls") .. " by correlation id alone (each id on one launch "
      .. "call and one GPU event); the reference links only through flows and would leave "
      .. pick(by_corr, "it", "them") .. " without a launching op", FIX.flows)
  end
  if missing > 0 then
    add("unlinked_missing", "warn", "GPU events without a launch", count(missing, "GPU event") .. " ("
      .. ms(missing_us) .. ", " .. pct(missing_us, h.gpu_us) .. " of all GPU event time) " .. pick(missing, "has", "have")
      .. " no launch call in the trace (no runtime event has " .. pick(missing, "its", "their") .. " correlation id): "
      .. pick(missing, "it is", "they are") .. " analysed by kernel name only", FIX.dropped)
  end
  if h.gpu_unlinked == 0 then add("unlinked", "ok", "every GPU event is linked to its launch call", "") end

  -- launches whose GPU work is missing
  local orphan = h.launches_without_gpu - h.launches_without_gpu_at_end
  if orphan > 0 then
    add("launches_dropped", "warn", "launches without GPU work", n(orphan) .. " of "
      .. count(h.launches, "kernel, copy or graph launch call") .. " " .. pick(orphan, "has", "have")
      .. " no GPU event with " .. pick(orphan, "its", "their") .. " correlation id: " .. pick(orphan, "its", "their")
      .. " GPU " .. pick(orphan, "record is", "records are") .. " missing", FIX.dropped)
  end
  if h.memset_calls_without_gpu > 0 then
    local m = h.memset_calls_without_gpu
    add("memsets", "note", "memset calls without a GPU record", n(m) .. " of " .. count(h.memset_calls, "memset call")
      .. " " .. pick(m, "has", "have") .. " no GPU memset event with " .. pick(m, "its", "their")
      .. " correlation id: " .. pick(m, "its", "their") .. " GPU time, if any, is not in the GPU figures")
  end
  if (h.launches_captured or 0) > 0 then
    local cap = h.launches_captured
    add("launches_captured", "note", "launches recorded into a graph", count(cap, "launch call") .. " "
      .. pick(cap, "falls", "fall") .. " inside a stream capture (between a StreamBeginCapture and the next "
      .. "StreamEndCapture of its thread): captured into a GPU graph, " .. pick(cap, "it", "they")
      .. " never ran, so " .. pick(cap, "it has", "they have") .. " no GPU event. This is a graph capture trace: "
      .. "pass its folder to `tracelens report REPLAY_TRACE --inference --capture_folder DIR` to give the graph "
      .. "replays their ops and shapes")
  end
  if h.launches_without_gpu_at_end > 0 then
    local late = h.launches_without_gpu_at_end
    add("launches_at_end", "note", "launches after the last GPU record", count(late, "launch call", "comes", "come")
      .. " after the last GPU event started and " .. pick(late, "has", "have") .. " no GPU event: the profiler "
      .. "stopped before " .. pick(late, "it", "they") .. " ran")
  end

  -- shapes and stacks
  if h.cpu_ops == 0 and h.gpu_events > 0 then
    add("cpu_ops", "warn", "no CPU operations", "the trace has no cpu_op event: its GPU work belongs to no "
      .. "operation (no op names, shapes or modules), so the analysis groups the kernels by their names only and "
      .. "has no roofline for them", FIX.activities)
  elseif h.cpu_ops > 0 and h.cpu_ops_with_shapes == 0 then
    add("shapes", "warn", "no input shapes", pick(h.cpu_ops, "the only CPU op does not record",
      "none of the " .. count(h.cpu_ops, "CPU op") .. " records") .. " its input "
      .. "shapes: FLOPs, bytes and the roofline cannot be computed", FIX.shapes)
  elseif h.cpu_ops > 0 then
    local with = h.cpu_ops_with_shapes
    add("shapes", "ok", "input shapes", n(with) .. " of " .. count(h.cpu_ops, "CPU op") .. " "
      .. pick(with, "records its", "record their") .. " input shapes")
  end
  if h.python_functions == 0 then
    add("stacks", "note", "no Python stacks", "the trace has no python_function events: call stacks, "
      .. "nn.Module parents and entry points stay empty", FIX.stacks)
  end

  -- synchronisation records: without them the critical path cannot return from the GPU to a waiting host
  if h.cuda_sync_calls > 0 and h.cuda_sync_events == 0 then
    add("sync_events", "note", "no synchronisation records", count(h.cuda_sync_calls, "call")
      .. " of cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize or cudaStreamWaitEvent but no "
      .. "cuda_sync event: the critical path (`tracelens critical-path`) cannot pass from the GPU back to the host "
      .. "where it waited", FIX.sync)
  end

  -- cross-stream waits the trace does not link to their event record (PyTorch 2.11: -1)
  local unlinked_waits = h.stream_waits_unlinked or 0
  if unlinked_waits > 0 then
    add("stream_waits_unlinked", "note", "cross-stream waits without their event record",
      count(unlinked_waits, "Stream Wait Event record") .. " " .. pick(unlinked_waits, "names", "name")
      .. " no event record (`wait_on_cuda_event_record_corr_id` -1 or absent): the critical path cannot follow "
      .. pick(unlinked_waits, "that wait", "those waits") .. " to the work " .. pick(unlinked_waits, "it waits",
      "they wait") .. " for on another stream, so a stream's time waiting shows as a gap between its kernels")
  end

  -- graph replays
  if h.graph_launches > 0 and not merged then
    add("graph_replay", "warn", "graph replays without capture traces",
      count(h.graph_launches, "graph launch", "replays", "replay") .. " " .. count(h.gpu_graph, "GPU event") .. " ("
      .. ms(h.gpu_graph_us) .. ", " .. pct(h.gpu_graph_us, h.gpu_us) .. " of all GPU event time) with no CPU op, shape or stack: "
      .. pick(h.gpu_graph, "its", "their") .. " time is attributed to the graph launch, not to named ops", FIX.capture)
  end

  -- steps and the profiling window
  if h.steps == 0 then
    add("steps", "note", "no ProfilerStep#N", "no step annotations: per-step figures are not available",
      FIX.steps)
  else
    -- as trace:steps() places GPU work: by its launch call's start; the work launched before the trace
    -- (its own warning above) is in no step
    local before, after = h.gpu_before_steps, h.gpu_after_steps
    local early = h.gpu_before_trace or 0
    local also = early > 0 and " (besides the " .. n(early) .. " launched before the trace, above)" or ""
    if before + after > 0 then
      add("window", "note", "GPU work outside the steps", count(before, "GPU event") .. " ("
        .. ms(h.gpu_before_steps_us) .. ") " .. pick(before, "was", "were") .. " launched before "
        .. pick(h.steps, "the only step", "the first of " .. count(h.steps, "step")) .. " and " .. n(after) .. " ("
        .. ms(h.gpu_after_steps_us) .. ") after " .. pick(h.steps, "it", "the last") .. also
        .. ": the profiling window cuts a step", FIX.window)
    elseif early > 0 then
      local inside = h.gpu_events - early
      add("window", "ok", "steps", count(h.steps, "step") .. "; " .. pick(inside, "the ", "all ")
        .. count(inside, "GPU event") .. " launched in the trace " .. pick(inside, "was", "were")
        .. " launched inside " .. pick(h.steps, "it", "them") .. "; the " .. n(early)
        .. " launched before the trace (above) " .. pick(early, "is", "are") .. " in no step")
    else
      add("window", "ok", "steps", count(h.steps, "step") .. "; all GPU work was launched inside "
        .. pick(h.steps, "it", "them"))
    end
  end

  -- records that cannot be right
  if h.stream_overlaps > 0 then
    add("stream_overlap", "warn", "overlapping work on one stream",
      count(h.stream_overlaps, "GPU event", "overlaps", "overlap") .. " the previous event of "
      .. pick(h.stream_overlaps, "its", "their") .. " stream by more than "
      .. string.format("%g", h.stream_overlap_threshold_us) .. " us (up to "
      .. string.format("%.1f", h.max_stream_overlap_us) .. " us): busy and idle times are approximate", FIX.overlap)
  end
  -- after an extended launch the overlap can be real (resnet_train: 9 cuDNN sm90 kernels via cudaLaunchKernelExC)
  if (h.stream_overlaps_ex or 0) > 0 then
    add("stream_overlap_ex", "note", "overlapping kernels after extended launches",
      count(h.stream_overlaps_ex, "GPU event") .. " launched with an extended launch (cudaLaunchKernelEx or "
      .. "cudaLaunchKernelExC) " .. pick(h.stream_overlaps_ex, "overlaps", "overlap") .. " the previous event of "
      .. pick(h.stream_overlaps_ex, "its", "their") .. " stream by more than "
      .. string.format("%g", h.stream_overlap_threshold_us) .. " us (up to "
      .. string.format("%.1f", h.max_stream_overlap_ex_us) .. " us): such a launch can let a kernel start before the "
      .. "previous one ends (programmatic dependent launch, Hopper and later), so the overlap may be real; busy "
      .. "time counts it once")
  end
  if h.negative_durations > 0 then
    add("negative_durations", "warn", "negative durations",
      count(h.negative_durations, "event", "has", "have") .. " a negative duration (read as 0)", FIX.overlap)
  end
  if h.zero_duration_gpu > 0 then
    add("zero_durations", "note", "zero-length GPU events", count(h.zero_duration_gpu, "GPU event", "lasts", "last")
      .. " 0 us (" .. pick(h.zero_duration_gpu, "it adds", "they add") .. " no time)")
  end
  if h.gpu_before_launch > 0 then
    add("clocks", "warn", "GPU work before its launch", count(h.gpu_before_launch, "GPU event", "starts", "start")
      .. " more than " .. string.format("%g", h.clock_threshold_us)
      .. " us before " .. pick(h.gpu_before_launch, "its", "their") .. " launch call (up to " .. string.format("%.1f", h.max_gpu_before_launch_us)
      .. " us): the CPU and GPU clocks disagree", FIX.clocks)
  end
  return out, h
end

--- counts of each level
function M.tally(checks)
  local t = { ok = 0, note = 0, warn = 0, fail = 0 }
  for _, c in ipairs(checks) do t[c.level] = t[c.level] + 1 end
  return t
end

--- The verdict line of the checks; quiet: the checks themselves are not
--- shown (`check -q`).
function M.verdict(checks, quiet)
  local t = M.tally(checks)
  local verdict = t.fail > 0 and "unusable for a GPU analysis"
    or t.warn > 0 and (quiet and "usable, with limits (run without -q to see them)" or "usable, with the limits above")
    or "healthy"
  return string.format("verdict: %s (%d failed, %s, %s)", verdict, t.fail, count(t.warn, "warning"),
    count(t.note, "note"))
end

--- The checks as text lines for a terminal.
function M.format(path, checks)
  local lines = { "tracelens check: " .. path }
  for _, c in ipairs(checks) do
    local line = string.format("  %-6s %s", "[" .. c.level .. "]", c.title)
    if c.detail ~= "" then line = line .. ": " .. c.detail end
    lines[#lines + 1] = line
    if c.fix then lines[#lines + 1] = "         fix: " .. c.fix end
  end
  lines[#lines + 1] = M.verdict(checks)
  return table.concat(lines, "\n") .. "\n"
end

return M
