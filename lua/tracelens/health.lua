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

-- "1 GPU event ... has", "2 GPU events ... have"
local function events(x) return n(x) .. (x == 1 and " GPU event" or " GPU events") end
local function have(x) return x == 1 and "has" or "have" end

local FIX = {
  activities = "profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] (ROCm too)",
  shapes = "profile with record_shapes=True",
  stacks = "profile with with_stack=True (call stacks, nn.Module parents and entry points need it)",
  flows = "keep the ac2g flow events (the launch-to-GPU arrows) when filtering or sampling a trace "
    .. "(HTA's trace_filter drops them); the profiler writes them by default",
  dropped = "profile every thread (the default) and start the active window after warm-up "
    .. "(torch.profiler.schedule(wait=1, warmup=1, active=N)); a full activity buffer also drops runtime "
    .. "records: profile fewer steps per trace",
  capture = "run `tracelens report TRACE --inference --capture_folder DIR` with the capture traces "
    .. "(vLLM: --profiler-config.capture_torch_profiler True; SGLang: --enable-profile-cuda-graph)",
  steps = "call prof.step() once per iteration, with torch.profiler.schedule(wait, warmup, active)",
  window = "let the schedule's active window cover whole steps (call prof.step() at the end of each)",
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
  add("gpu_work", "ok", "GPU work", n(h.gpu_events) .. " GPU events, " .. ms(h.gpu_us) .. " of GPU time over "
    .. n(h.streams) .. " stream(s), in a " .. ms(h.span) .. " window")

  -- GPU events without a launching CPU op
  local nested = h.gpu_unlinked_launched
  local missing = h.gpu_unlinked - nested
  local missing_us = h.gpu_unlinked_us - h.gpu_unlinked_launched_us
  if nested > 0 then
    add("unlinked_flows", "warn", "GPU events without a launch flow", events(nested) .. " ("
      .. ms(h.gpu_unlinked_launched_us) .. ", " .. pct(h.gpu_unlinked_launched_us, h.gpu_us)
      .. " of GPU time) " .. have(nested) .. " a launch call with their correlation id but no ac2g flow event linking the two "
      .. (h.flow_events == 0 and "(the trace has no flow events at all)" or "(" .. n(h.flow_events)
        .. " flow events in the trace)")
      .. ": launches are linked to GPU work through these flows (as the reference does), so these events "
      .. "have no launching op, shape or stack and are analysed by kernel name only", FIX.flows)
  end
  if missing > 0 then
    add("unlinked_missing", "warn", "GPU events without a launch", events(missing) .. " ("
      .. ms(missing_us) .. ", " .. pct(missing_us, h.gpu_us) .. " of GPU time) " .. have(missing)
      .. " no launch call in the "
      .. "trace (no runtime event has their correlation id): they are analysed by kernel name only", FIX.dropped)
  end
  if h.gpu_unlinked == 0 then add("unlinked", "ok", "every GPU event has its launch under a CPU op", "") end

  -- launches whose GPU work is missing
  local orphan = h.launches_without_gpu - h.launches_without_gpu_at_end
  if orphan > 0 then
    add("launches_dropped", "warn", "launches without GPU work", n(orphan) .. " of " .. n(h.launches)
      .. " kernel, copy or graph launch calls have no GPU event with their correlation id: their GPU "
      .. "records are missing", FIX.dropped)
  end
  if h.memset_calls_without_gpu > 0 then
    add("memsets", "note", "memset calls without a GPU record", n(h.memset_calls_without_gpu) .. " of "
      .. n(h.memset_calls) .. " memset calls have no GPU memset event with their correlation id: their GPU "
      .. "time, if any, is not in the GPU figures")
  end
  if h.launches_without_gpu_at_end > 0 then
    add("launches_at_end", "note", "launches after the last GPU record", n(h.launches_without_gpu_at_end)
      .. " launch calls come after the last GPU event started and have no GPU event: the profiler stopped "
      .. "before they ran")
  end

  -- shapes and stacks
  if h.cpu_ops > 0 and h.cpu_ops_with_shapes == 0 then
    add("shapes", "warn", "no input shapes", "none of the " .. n(h.cpu_ops) .. " CPU ops records its input "
      .. "shapes: FLOPs, bytes and the roofline cannot be computed", FIX.shapes)
  elseif h.cpu_ops > 0 then
    add("shapes", "ok", "input shapes", n(h.cpu_ops_with_shapes) .. " of " .. n(h.cpu_ops)
      .. " CPU ops record their input shapes")
  end
  if h.python_functions == 0 then
    add("stacks", "note", "no Python stacks", "the trace has no python_function events: call stacks, "
      .. "nn.Module parents and entry points stay empty", FIX.stacks)
  end

  -- graph replays
  if h.graph_launches > 0 and not merged then
    add("graph_replay", "warn", "graph replays without capture traces", n(h.graph_launches)
      .. " graph launches replay " .. n(h.gpu_graph) .. " GPU events (" .. ms(h.gpu_graph_us) .. ", "
      .. pct(h.gpu_graph_us, h.gpu_us) .. " of GPU time) with no CPU op, shape or stack: their time is "
      .. "attributed to the graph launch, not to named ops", FIX.capture)
  end

  -- steps and the profiling window
  if h.steps == 0 then
    add("steps", "note", "no ProfilerStep#N", "no step annotations: per-step figures are not available",
      FIX.steps)
  else
    local before, after = h.gpu_before_steps, h.gpu_after_steps
    if before + after > 0 then
      add("window", "note", "GPU work outside the steps", n(before) .. " GPU events (" .. ms(h.gpu_before_steps_us)
        .. ") start before the first of " .. n(h.steps) .. " steps and " .. n(after) .. " ("
        .. ms(h.gpu_after_steps_us) .. ") after the last: the profiling window cuts a step", FIX.window)
    else
      add("window", "ok", "steps", n(h.steps) .. " steps; all GPU work inside them")
    end
  end

  -- records that cannot be right
  if h.stream_overlaps > 0 then
    add("stream_overlap", "warn", "overlapping work on one stream", n(h.stream_overlaps)
      .. " GPU events overlap the previous event of their stream by more than "
      .. string.format("%g", h.stream_overlap_threshold_us) .. " us (up to "
      .. string.format("%.1f", h.max_stream_overlap_us) .. " us): busy and idle times are approximate", FIX.overlap)
  end
  if h.negative_durations > 0 then
    add("negative_durations", "warn", "negative durations", n(h.negative_durations)
      .. " events have a negative duration (read as 0)", FIX.overlap)
  end
  if h.zero_duration_gpu > 0 then
    add("zero_durations", "note", "zero-length GPU events", n(h.zero_duration_gpu)
      .. " GPU events last 0 us (they add no time)")
  end
  if h.gpu_before_launch > 0 then
    add("clocks", "warn", "GPU work before its launch", n(h.gpu_before_launch)
      .. " GPU events start more than " .. string.format("%g", h.clock_threshold_us)
      .. " us before their launch call (up to " .. string.format("%.1f", h.max_gpu_before_launch_us)
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

--- The checks as text lines for a terminal.
function M.format(path, checks)
  local lines = { "tracelens check: " .. path }
  for _, c in ipairs(checks) do
    local line = string.format("  %-6s %s", "[" .. c.level .. "]", c.title)
    if c.detail ~= "" then line = line .. ": " .. c.detail end
    lines[#lines + 1] = line
    if c.fix then lines[#lines + 1] = "         fix: " .. c.fix end
  end
  local t = M.tally(checks)
  local verdict = t.fail > 0 and "unusable for a GPU analysis"
    or t.warn > 0 and "usable, with the limits above"
    or "healthy"
  lines[#lines + 1] = string.format("verdict: %s (%d failed, %d warnings, %d notes)", verdict, t.fail, t.warn, t.note)
  return table.concat(lines, "\n") .. "\n"
end

return M
