-- agents/cpu_idle.lua — the CPU/idle analyzer (agents-and-report.md §3.1).
--
-- ctx = {scope, out_dir, manifest = <category_manifest.json text>,
--        metrics = <cpu_idle_metrics.json text>,
--        host_calls = <JSON text of trace:host_calls()> or nil,
--        waits = <JSON text {idle_ms, queued_idle_ms, longest_queued,
--                 longest_queued_idle_ms}: the idle_breakdown sheet's all row;
--                 {stream, stream_idle_ms, host_wait_ms, host_sync_wait_ms,
--                 host_wait_gaps, host_sync_wait_gaps}: its busiest stream's;
--                 graph_share, compiled, with_stack: tracelens.gpu_feed's>
--                 or nil}
-- returns {findings = <system_findings/cpu_idle_findings.md text>}
--
-- Rules (docs/analyzers.md, "System analyzers and the report"):
--   * No card unless GPU idle time is above 15% of the GPU span.
--   * Idle card: when at least half of the GPU's idle time passes with
--     launched work waiting to start (ctx.waits), the host is not what the
--     GPU waits for: the queued-wait card (tracelens; the reference would
--     blame launch overhead). Else, when at least half of the busiest
--     stream's idle time opens while the host is blocked in a call that
--     waits for the GPU (host_sync_wait_ms): the sync-drain card (the host
--     drains the queue by waiting). Else exposed communication and exposed memory
--     copies both below 1% of the GPU span -> the host does not issue work fast
--     enough: launch overhead, fixed by a GPU graph (unless graph replays
--     run most of the GPU time already). Otherwise -> gaps in the
--     host pipeline, fixed by overlapping host work (the communication and
--     copies themselves belong to the multi-kernel analyzer).
--   * Sync card: some compute category spends host time in operations whose
--     duration exceeds 5x their kernel time (sync_time_ms > 0), or is marked
--     has_sync_bottleneck. It blames synchronization only when the runtime
--     calls that wait for the GPU (synchronizations, copies) inside such
--     operations hold at least half of that time (ctx.host_calls,
--     trace:host_calls()); otherwise the card says where the time went
--     instead (launch calls, other runtime calls, host work outside them:
--     the host-time card, tracelens; the reference always blames
--     synchronization).
--   * Order: the sync card first when any category has has_sync_bottleneck
--     (the host-time card, which blames no synchronization, only when its
--     host time is at least half of the GPU's idle time), else the idle card
--     first.
local sf = require "tracelens.system_findings"
local md = require "tracelens.md"
local kname = require "tracelens.kernel_name"
local feed = require "tracelens.gpu_feed"

local ctx = ...

local IDLE_THRESHOLD_PCT = 15
local NEGLIGIBLE_PCT = 1.0
local SHORT_KERNEL_US = 10
local QUEUED_SHARE = sf.QUEUED_IDLE_SHARE -- of the idle time: launched work waiting, not the host

local manifest = sf.decode(ctx.manifest) or {}
local metrics, metrics_error = sf.decode(ctx.metrics)
local waits = ctx.waits and sf.decode(ctx.waits) or nil
local host_calls = ctx.host_calls and sf.decode(ctx.host_calls) or nil
-- the share of the host time beyond kernel time that calls waiting for the
-- GPU must hold for the card to blame synchronization
local BLOCKING_SHARE = 0.5
-- a launch call this long is no launch overhead: the runtime did one-time work in it
local SLOW_LAUNCH_MS = 1

-- GPU utilization, from the metrics or (when they failed) from the manifest.
local function utilization()
  local g = metrics and metrics.status ~= "ERROR" and metrics.gpu_utilization
  if g then
    return {
      total_ms = sf.value(g.total_time_ms), idle_ms = sf.value(g.idle_time_ms), idle = sf.value(g.idle_time_percent),
      compute = sf.value(g.computation_percent), comm = sf.value(g.communication_percent),
      memcpy = sf.value(g.memcpy_percent),
    }
  end
  local m = manifest.gpu_utilization or {}
  local total = sf.value(m.total_time_ms)
  return {
    total_ms = total, idle_ms = total * sf.value(m.idle_time_percent) / 100, idle = sf.value(m.idle_time_percent),
    compute = sf.value(m.computation_time_percent), comm = sf.value(m.exposed_comm_time_percent),
    memcpy = sf.value(m.exposed_memcpy_time_percent),
  }
end

local u = utilization()
local kernels = metrics and metrics.kernel_analysis or {}

-- Host synchronization evidence of the compute categories, largest first.
local function sync_evidence()
  local cats, total, ops, bottleneck = {}, 0, 0, false
  for _, c in ipairs(sf.categories(manifest, "compute_kernel")) do
    local t = sf.value(c.sync_time_ms)
    if t > 0 or c.has_sync_bottleneck == true then
      cats[#cats + 1] = c
      total = total + t
      ops = ops + sf.value(c.sync_ops_count)
      bottleneck = bottleneck or c.has_sync_bottleneck == true
    end
  end
  table.sort(cats, function(a, b) return sf.value(a.sync_time_ms) > sf.value(b.sync_time_ms) end)
  return { categories = cats, total_ms = total, ops = ops, bottleneck = bottleneck }
end

local function pct_of_total(ms)
  if u.total_ms <= 0 then return 0 end
  return ms / u.total_ms * 100
end

local function kernel_rows(rows)
  local n = sf.value(kernels.total_kernel_count)
  if n <= 0 then return rows end
  local avg = sf.value(kernels.avg_kernel_time_us)
  rows[#rows + 1] = { "Launched operations", sf.count(n), false }
  rows[#rows + 1] = { "Average kernel time per operation",
    string.format("%s µs", sf.present(kernels.avg_kernel_time_us) and string.format("%.1f", avg) or "0.0"),
    avg < SHORT_KERNEL_US }
  rows[#rows + 1] = { "Calls of operations averaging under 10 µs of kernel time", sf.count(kernels.short_kernel_count),
    sf.value(kernels.short_kernel_count) > n / 2 }
  return rows
end

local function kernel_sentence()
  local n = sf.value(kernels.total_kernel_count)
  if n <= 0 then return "" end
  return string.format(" The trace launches %s operations averaging %.1f µs of kernel time each.", sf.count(n),
    sf.value(kernels.avg_kernel_time_us))
end

local function utilization_rows()
  return {
    { "Idle time", sf.ms_pct(u.idle_ms, u.idle), u.idle > IDLE_THRESHOLD_PCT },
    { "Computation", sf.ms_pct(u.total_ms * u.compute / 100, u.compute), false },
    { "Exposed communication", sf.pct(u.comm), u.comm >= NEGLIGIBLE_PCT },
    { "Exposed memory copies", sf.pct(u.memcpy), u.memcpy >= NEGLIGIBLE_PCT },
  }
end

-- The remedies for launch-bound gaps the trace does not already use
-- (tracelens.gpu_feed.fewer_launches' rule): no graph capture when graph
-- replays run most of the GPU time, torch.compile's CUDA-graph mode when
-- its kernels are there.
local function graphs_in_use() return waits and sf.value(waits.graph_share) >= feed.GRAPH_SHARE end
local function launch_action()
  if graphs_in_use() then
    return "The work already runs as GPU graph replays: cut the host work between replays, and fuse small kernels "
      .. "inside the captured region."
  end
  local compile = waits and waits.compiled and " (with `torch.compile`, whose kernels are here, "
    .. "`mode=\"reduce-overhead\"` does the capture)" or ""
  return "Capture the steady-state step as a GPU graph so that one launch replays the whole kernel sequence" .. compile
    .. ". Where capture is not possible, fuse small kernels to cut the number of launches."
end

local function launch_overhead_card()
  return {
    title = sf.TITLE.launch_overhead,
    insight = string.format("The GPU is idle for %s of the %s GPU span (first to last GPU event) while "
      .. "communication and memory copies are negligible, so the host does not issue kernels fast enough to keep it "
      .. "busy.%s", sf.pct(u.idle), sf.ms(u.total_ms), feed.stack_caveat({ with_stack = waits and waits.with_stack })),
    action = launch_action(),
    identification = string.format("GPU idle time is %s of the GPU span, above the %d%% threshold, and neither exposed "
      .. "communication (%s) nor exposed memory copies (%s) reach %s of the GPU span.%s (source: "
      .. "`cpu_idle_metrics.json` → `gpu_utilization`, `kernel_analysis`)", sf.pct(u.idle), IDLE_THRESHOLD_PCT,
      sf.pct(u.comm), sf.pct(u.memcpy), sf.pct(NEGLIGIBLE_PCT), kernel_sentence()),
    rows = kernel_rows(utilization_rows()),
    reasoning = string.format("The GPU waits %s between kernels without any transfer or collective to wait for. "
      .. "Each kernel launch costs host time, and when kernels are short the host cannot queue them ahead of the "
      .. "GPU.", sf.ms(u.idle_ms)),
    resolution = "A GPU graph records the kernel sequence once and replays it with a single launch, which removes "
      .. "the per-kernel host cost from the step. Fusing small kernels reduces the number of launches the host "
      .. "must issue.",
  }
end

-- The busiest stream's host wait that opens while the host is blocked in a
-- call waiting for the GPU (the idle_breakdown sheet's host_sync_wait_ms),
-- when it holds at least half of that stream's idle time:
-- {stream, idle_ms, host_ms, sync_ms, gaps, all_gaps}
-- (the GPU feed's line has the same rule: tracelens.gpu_feed.HOST_SYNC_SHARE)
local function sync_drain()
  if not waits then return nil end
  local idle, host, sync = sf.value(waits.stream_idle_ms), sf.value(waits.host_wait_ms), sf.value(waits.host_sync_wait_ms)
  if idle <= 0 or sync < feed.HOST_SYNC_SHARE * idle then return nil end
  return { stream = waits.stream, idle_ms = idle, host_ms = host, sync_ms = sync,
    gaps = sf.value(waits.host_sync_wait_gaps), all_gaps = sf.value(waits.host_wait_gaps) }
end

local function sync_drain_card(d)
  local rows = utilization_rows()
  rows[#rows + 1] = { string.format("Stream %s idle after a blocking call", tostring(d.stream)),
    sf.ms_pct(d.sync_ms, d.sync_ms / u.total_ms * 100), true }
  rows[#rows + 1] = { "Gaps opening during a blocking call", string.format("%s of %s host-wait gaps",
    sf.count(d.gaps), sf.count(d.all_gaps)), true }
  return {
    title = sf.TITLE.sync_drain,
    insight = string.format("The GPU is idle for %s of the %s GPU span, and on stream %s (the busiest) %s of idle "
      .. "time (%s gaps) opens while the host is blocked in a call that waits for the GPU (a synchronize, or a "
      .. "blocking copy such as `.item()` or `.cpu()`): the host lets the queue drain, then the GPU waits until the "
      .. "host's next launch, %s a gap on average.", sf.pct(u.idle), sf.ms(u.total_ms), tostring(d.stream),
      sf.ms(d.sync_ms), sf.count(d.gaps), sf.ms(d.gaps > 0 and d.sync_ms / d.gaps or 0)),
    action = "Stop waiting for the GPU inside the loop: keep values on the device, and read them back later (a "
      .. "non-blocking copy into pinned memory with an event, one step or iteration behind), so the host queues the "
      .. "next work while the GPU runs.",
    identification = string.format("GPU idle time is %s of the GPU span, above the %d%% threshold; on stream %s, "
      .. "%s of its %s of idle time is host wait, and %s of that opens during a blocking runtime call "
      .. "(`cudaStreamSynchronize`, `cudaDeviceSynchronize`, `cudaEventSynchronize`, `cudaEventQuery`, `cudaMemcpy`, "
      .. "`cudaMemcpyAsync` or their HIP names) on the thread of the next launch, which returns before that launch. "
      .. "(source: the `idle_breakdown` sheet → `host_wait_ms`, `host_sync_wait_ms`, `host_sync_wait_gaps`)",
      sf.pct(u.idle), IDLE_THRESHOLD_PCT, tostring(d.stream), sf.ms(d.host_ms), sf.ms(d.idle_ms), sf.ms(d.sync_ms)),
    rows = rows,
    reasoning = "A call that waits for the GPU returns only when the GPU has run everything queued before it, so "
      .. "the stream is empty when the host resumes; the time the host then takes to issue the next kernel is idle "
      .. "GPU time, every time the loop waits.",
    resolution = "Without the wait the host issues the next work while the GPU still runs the current one, and "
      .. "the gap disappears; faster launches or GPU graphs do not help while the host waits first.",
  }
end

-- The idle time with launched work waiting to start, when it is at least
-- QUEUED_SHARE of the idle time of the idle_breakdown sheet (every GPU
-- event) and the GPU is idle: {idle_ms, queued_ms, share, longest, longest_ms}
local function queued_waits()
  if not waits then return nil end
  local idle, queued = sf.value(waits.idle_ms), sf.value(waits.queued_idle_ms)
  if idle <= 0 or queued < QUEUED_SHARE * idle then return nil end
  return { idle_ms = idle, queued_ms = queued, share = queued / idle * 100,
    longest = type(waits.longest_queued) == "string" and waits.longest_queued or nil,
    longest_ms = sf.value(waits.longest_queued_idle_ms) }
end

local function queued_wait_card(q)
  local longest = q.longest and string.format(" The longest wait: %s, %s of idle GPU time between its launch and "
    .. "its start.", md.code(kname.short(q.longest)), sf.ms(q.longest_ms)) or ""
  local rows = utilization_rows()
  rows[#rows + 1] = { "Idle with launched work waiting to start", sf.ms_pct(q.queued_ms, q.share), true }
  if q.longest then
    rows[#rows + 1] = { "Longest wait: " .. md.cell(kname.short(q.longest)), sf.ms(q.longest_ms), true }
  end
  return {
    title = sf.TITLE.queued_wait,
    insight = string.format("The GPU is idle for %s of the %s GPU span (first to last GPU event), and for %s of "
      .. "its idle time (%s) kernels or copies had been launched and had not started: then the GPU was not waiting "
      .. "for the host, which had issued the work.%s For the other %s nothing launched was waiting.", sf.pct(u.idle),
      sf.ms(u.total_ms), sf.pct(q.share), sf.ms(q.queued_ms), longest, sf.ms(q.idle_ms - q.queued_ms)),
    action = "Find what the waiting work depends on: an event or another stream it waits for (a "
      .. "`cudaStreamWaitEvent`, a copy or a collective on another stream), the other ranks of a collective, or work "
      .. "this trace does not show (another process on the GPU, work queued before the profiling window, events a "
      .. "filtered or sampled trace left out). Faster launches (CUDA graphs, fewer kernels) would not close these "
      .. "gaps.",
    identification = string.format("GPU idle time is %s of the GPU span, above the %d%% threshold, and of the %s the "
      .. "GPU is idle (over every GPU event, unlinked ones included) %s (%s) pass with launched work not yet "
      .. "started, at least the %s this card needs. (source: `idle_breakdown` → `queued_idle_ms`, `longest_queued`, "
      .. "`longest_queued_idle_ms`; `cpu_idle_metrics.json` → `gpu_utilization`)", sf.pct(u.idle),
      IDLE_THRESHOLD_PCT, sf.ms(q.idle_ms), sf.ms(q.queued_ms), sf.pct(q.share), sf.pct(QUEUED_SHARE * 100)),
    rows = rows,
    reasoning = "An operation is queued from the end of its launch call until it starts. While launched work waits "
      .. "and the GPU runs nothing, the GPU is held by a dependency of that work, not by the rate at which the host "
      .. "launches.",
    resolution = "Removing the dependency, or moving it off the step's critical path, lets the queued work start as "
      .. "soon as it is launched, which closes the idle time.",
  }
end

-- Which of exposed communication and exposed memory copies reach the
-- negligible threshold (at least one does when this card is chosen).
local function transfers_sentence()
  local comm = (tonumber(u.comm) or 0) >= NEGLIGIBLE_PCT
  local copies = (tonumber(u.memcpy) or 0) >= NEGLIGIBLE_PCT
  if comm and copies then
    return string.format("Exposed communication (%s) and exposed memory copies (%s) both take more than %s of the "
      .. "trace", sf.pct(u.comm), sf.pct(u.memcpy), sf.pct(NEGLIGIBLE_PCT))
  end
  return string.format("Exposed %s take%s %s of the GPU span, more than %s (exposed %s: %s)",
    comm and "communication" or "memory copies", comm and "s" or "", sf.pct(comm and u.comm or u.memcpy),
    sf.pct(NEGLIGIBLE_PCT), comm and "memory copies" or "communication", sf.pct(comm and u.memcpy or u.comm))
end

local function host_pipeline_card()
  -- the inputs' copies are advised on only when the trace has exposed ones (nccl_data: communication, no copy)
  local copies = (tonumber(u.memcpy) or 0) >= NEGLIGIBLE_PCT
  return {
    title = sf.TITLE.host_pipeline,
    insight = string.format("The GPU is idle for %s of the %s GPU span (first to last GPU event), beside %s exposed "
      .. "communication and %s exposed memory copies.", sf.pct(u.idle), sf.ms(u.total_ms), sf.pct(u.comm),
      sf.pct(u.memcpy)),
    action = copies and ("Overlap host work with GPU execution: prepare the next inputs on a background worker and "
      .. "copy them asynchronously from pinned memory. Move host-side processing off the step's critical path.")
      or ("Overlap host work with GPU execution: keep the host launching ahead of the GPU (no waits on the GPU "
      .. "inside the step, fewer and larger kernels), and move host-side processing off the step's critical path."),
    identification = string.format("GPU idle time is %s of the GPU span, above the %d%% threshold. %s, so the idle "
      .. "gaps sit in a pipeline that also moves data. The transfers themselves are covered by the multi-kernel "
      .. "analysis.%s (source: `cpu_idle_metrics.json` → `gpu_utilization`, `kernel_analysis`)", sf.pct(u.idle),
      IDLE_THRESHOLD_PCT, transfers_sentence(), kernel_sentence()),
    rows = kernel_rows(utilization_rows()),
    reasoning = string.format("The GPU waits %s with no kernel to run. Idle time is time the GPU spends on neither "
      .. "computation, communication nor memory copies, so the host is not supplying work.", sf.ms(u.idle_ms)),
    resolution = copies and ("Preparing inputs ahead of time and copying them asynchronously lets the GPU start the "
      .. "next step as soon as the current one ends. This closes the gaps between batches of kernels.")
      or ("A host that launches ahead keeps work queued while the GPU computes, which closes the idle gaps; the "
      .. "exposed communication itself is the multi-kernel analysis' finding."),
  }
end

-- Where the host time beyond kernel time went (trace:host_calls(): the
-- runtime calls inside the operations taking more than 5x their GPU time,
-- by kind), or nil without the figures: {sync, copy, launch, setup (each
-- {key, ms, calls, longest, op, longest_ms}), blocking_ms (sync + copy),
-- rest_ms (what no runtime call holds)}.
local function host_split(total_ms)
  if type(host_calls) ~= "table" then return nil end
  local function part(key)
    local x = type(host_calls[key]) == "table" and host_calls[key] or {}
    return { key = key, ms = sf.value(x.us) / 1000, calls = sf.value(x.calls),
      longest = type(x.longest) == "string" and x.longest or nil, op = type(x.longest_op) == "string" and x.longest_op
        or nil, longest_ms = sf.value(x.longest_us) / 1000 }
  end
  local sync, copy, launch, setup = part("sync"), part("copy"), part("launch"), part("setup")
  return { sync = sync, copy = copy, launch = launch, setup = setup, blocking_ms = sync.ms + copy.ms,
    rest_ms = math.max(0, total_ms - sync.ms - copy.ms - launch.ms - setup.ms) }
end

-- " (the longest: `cudaFree` in `aten::cudnn_convolution`, 6008.692 ms)" when there are several
local function longest_text(p)
  if not p.longest then return "" end
  local where = md.code(p.longest) .. " in " .. md.code(p.op or "?") .. ", " .. sf.ms(p.longest_ms)
  return p.calls > 1 and (" (the longest: " .. where .. ")") or (" (" .. where .. ")")
end

local function calls_text(n, one, many) return sf.count(n) .. " " .. (n == 1 and one or many) end

local function blocking_sentence(h)
  local b = h.sync.ms >= h.copy.ms and h.sync or h.copy
  return string.format(" Of it, %s is in runtime calls that wait for the GPU: %s%s.", sf.ms(h.blocking_ms),
    calls_text(h.sync.calls + h.copy.calls, "synchronization or copy", "synchronizations and copies"), longest_text(b))
end

local function split_rows(rows, h, flag_blocking)
  rows[#rows + 1] = { "Synchronizations and copies inside these operations", sf.ms(h.blocking_ms), flag_blocking }
  rows[#rows + 1] = { "Kernel launch calls inside these operations", sf.ms(h.launch.ms), false }
  rows[#rows + 1] = { "Other runtime calls inside these operations (allocation, streams, context)", sf.ms(h.setup.ms),
    false }
  rows[#rows + 1] = { "Host work outside runtime calls", sf.ms(h.rest_ms), false }
  return rows
end

-- The card when the calls that wait for the GPU hold less than half of the
-- host time beyond kernel time: where the time went, and what to do about
-- the largest part.
local function host_time_card(s, h, names, rows, share)
  local parts = {}
  if h.launch.ms > 0 then
    parts[#parts + 1] = { ms = h.launch.ms, key = "launch", text = string.format("%s is in %s%s", sf.ms(h.launch.ms),
      calls_text(h.launch.calls, "launch call", "launch calls of kernels and asynchronous copies"),
      longest_text(h.launch)) }
  end
  if h.setup.ms > 0 then
    parts[#parts + 1] = { ms = h.setup.ms, key = "setup", text = string.format("%s is in %s for allocation, "
      .. "streams, context or device queries%s", sf.ms(h.setup.ms),
      calls_text(h.setup.calls, "other runtime call", "other runtime calls"), longest_text(h.setup)) }
  end
  if h.rest_ms > 0 then
    parts[#parts + 1] = { ms = h.rest_ms, key = "rest", text = string.format("%s is host work outside runtime "
      .. "calls (the framework's own code: dispatch, checks, allocation)", sf.ms(h.rest_ms)) }
  end
  table.sort(parts, function(a, b) return a.ms > b.ms end)
  local texts = {}
  for _, p in ipairs(parts) do texts[#texts + 1] = p.text end
  local top = parts[1] and parts[1].key or "rest"
  local one_slow_launch = top == "launch" and h.launch.longest_ms >= SLOW_LAUNCH_MS
  local action, resolution
  if one_slow_launch then
    action = "Measure steps after warm-up: a launch call of milliseconds is a first launch that loads the kernel's "
      .. "code (lazy module loading) or a library's one-time setup. Or load kernels at start-up "
      .. "(`CUDA_MODULE_LOADING=EAGER`; on ROCm `HIP_ENABLE_DEFERRED_LOADING=0`)."
    resolution = "Once the code is loaded a launch takes microseconds, so the steps after the first ones do not pay "
      .. "this time."
  elseif top == "launch" then
    action = "Launch fewer kernels from the host: capture the step as a GPU graph, or fuse small kernels."
    resolution = "A GPU graph replays the step's kernels with one launch, and fused kernels need fewer launches, so "
      .. "the host spends less time in launch calls."
  elseif top == "setup" then
    action = "Measure steps after warm-up, and keep allocation and stream or context creation out of the step: a "
      .. "`cudaMalloc`, `cudaFree` or stream creation inside an operation is one-time setup or a miss of the caching "
      .. "allocator (avoid `torch.cuda.empty_cache()` inside the step)."
    resolution = "After warm-up the caching allocator reuses its memory and the context and streams exist, so these "
      .. "calls leave the step."
  else
    action = "Cut the host work per operation: capture the step as a GPU graph or compile it (`torch.compile`), and "
      .. "move Python-side work out of the step."
    resolution = "A GPU graph or a compiled step runs the same kernels without the framework's per-operation host "
      .. "work, so the host keeps ahead of the GPU."
  end
  return {
    -- (the host's time is one-time work: first launches, allocation, setup)
    one_time = one_slow_launch or top == "setup",
    title = sf.TITLE.host_time,
    insight = h.blocking_ms > 0 and string.format("Operations in %s spend %s on the host beyond their GPU kernel "
      .. "time, mostly not waiting for the GPU: the runtime calls inside them that synchronize or copy (waits for the "
      .. "GPU) take %s, %s of it%s. The rest: %s.", sf.list(names), sf.ms(s.total_ms), sf.ms(h.blocking_ms),
        sf.pct(s.total_ms > 0 and h.blocking_ms / s.total_ms * 100 or 0),
        longest_text(h.sync.ms >= h.copy.ms and h.sync or h.copy), sf.list(texts))
      or string.format("Operations in %s spend %s on the host beyond their GPU kernel time, not waiting for the GPU "
        .. "(no runtime call inside them waits for it): %s.", sf.list(names), sf.ms(s.total_ms),
        sf.list(texts)),
    action = action,
    identification = string.format("%s operation signatures take more than 5x their kernel time on the host, "
      .. "adding up to %s (%s)%s; the runtime calls inside those operations that wait for the GPU hold less than "
      .. "half of it. (source: `category_manifest.json` → `categories[].sync_time_ms`, `categories[].sync_ops_count`, "
      .. "`categories[].has_sync_bottleneck`; the runtime calls of the trace)", sf.count(s.ops), sf.ms(s.total_ms),
      share, s.bottleneck and ", and at least one category exceeds both 10% of its kernel time and 1 ms" or ""),
    rows = split_rows(rows, h, false),
    reasoning = "An operation's host time beyond its kernel time points to synchronization only when the host waits "
      .. "in a synchronizing call or a copy. Here it is spent elsewhere, and while the host is busy it queues no new "
      .. "kernels.",
    resolution = resolution,
  }
end

local function sync_card(s, q)
  local names, rows = {}, {}
  -- operations on several host threads can together pass the GPU span: no share then
  local within = s.total_ms <= u.total_ms
  local share = within and string.format("%s of the GPU span", sf.pct(pct_of_total(s.total_ms)))
    or string.format("more than the %s GPU span: operations on several host threads overlap", sf.ms(u.total_ms))
  rows[1] = { "Host time beyond kernel time", within and sf.ms_pct(s.total_ms, pct_of_total(s.total_ms))
    or sf.ms(s.total_ms), true }
  rows[2] = { "Operation signatures with host time over 5x kernel time", sf.count(s.ops), s.ops > 0 }
  for _, c in ipairs(s.categories) do
    local name = c.display_name or c.name
    names[#names + 1] = md.text(name)
    rows[#rows + 1] = { md.cell(name) .. " host time beyond kernel time", sf.ms(c.sync_time_ms),
      c.has_sync_bottleneck == true }
  end
  local h = host_split(s.total_ms)
  if h and h.blocking_ms < BLOCKING_SHARE * s.total_ms then return host_time_card(s, h, names, rows, share) end
  -- most of the GPU's idle time had launched work waiting (q): the host's
  -- synchronization waits for that work, it does not hold the GPU back
  local remove = "keep scalars on the device instead of reading them on the host, and wait on events instead of "
    .. "blocking synchronizations"
  return {
    title = q and sf.TITLE.host_sync_queued or sf.TITLE.host_sync,
    insight = string.format("Operations in %s spend %s on the host beyond their GPU kernel time, a sign of device "
      .. "synchronization inside the step.", sf.list(names), sf.ms(s.total_ms))
      .. (h and blocking_sentence(h) or "")
      .. (q and string.format(" The GPU, though, idled with launched work waiting for %s of its idle time (\"%s\"): "
        .. "a host that synchronizes then waits for that work, so removing the synchronization frees the host but "
        .. "does not start the waiting work sooner.", sf.pct(q.share), sf.TITLE.queued_wait) or ""),
    action = q and ("First find what the waiting work waits for (\"" .. sf.TITLE.queued_wait .. "\"): the "
        .. "synchronization only waits for it. Then, so that the host queues the next work meanwhile, " .. remove .. ".")
      or ("Remove device synchronizations from the step: " .. remove .. ". Batch the host reads that remain."),
    identification = string.format("%s operation signatures take more than 5x their kernel time on the host, "
      .. "adding up to %s (%s)%s. (source: `category_manifest.json` → `categories[].sync_time_ms`, "
      .. "`categories[].sync_ops_count`, `categories[].has_sync_bottleneck`)", sf.count(s.ops), sf.ms(s.total_ms),
      share,
      s.bottleneck and ", and at least one category exceeds both 10% of its kernel time and 1 ms" or ""),
    rows = h and split_rows(rows, h, true) or rows,
    reasoning = "A synchronization makes the host wait until the GPU has drained its queue. While the host waits "
      .. "it queues no new kernels, so the GPU idles after the synchronization until new work arrives.",
    resolution = "Without synchronizations the host keeps queueing kernels ahead of the GPU. Reading values on "
      .. "the host only when they are needed, and in batches, keeps the queue full.",
  }
end

local function cards()
  if u.idle <= IDLE_THRESHOLD_PCT then return {} end
  local idle_card
  local q = queued_waits()
  local drain = not q and sync_drain()
  if q then
    idle_card = queued_wait_card(q)
  elseif drain then
    idle_card = sync_drain_card(drain)
  elseif u.comm < NEGLIGIBLE_PCT and u.memcpy < NEGLIGIBLE_PCT then
    idle_card = launch_overhead_card()
  else
    idle_card = host_pipeline_card()
  end
  local s = sync_evidence()
  if #s.categories == 0 then return { idle_card } end
  -- a synchronization bottleneck leads, unless the GPU's idle time is mostly
  -- launched work waiting: what that work waits for comes first
  -- (the host-time card, which blames no synchronization, leads only when its host time is at least half of the
  -- GPU's idle time: the minitoy's 6.5 ms first launch in 8.8 ms of idle, not gpt_train's 3.3 ms in 27 ms)
  local sc = sync_card(s, q)
  local leads = sc.title ~= sf.TITLE.host_time or s.total_ms >= 0.5 * u.idle_ms
  -- the idle is mostly that one-time host work (alexnet: a 6 s cudaFree and 3 s of first launches in 12.9 s):
  -- the idle card says so and defers to it, not a graph capture first
  if sc.one_time and leads and idle_card.title == sf.TITLE.launch_overhead then
    idle_card.insight = idle_card.insight .. string.format(" Most of that idle time, though, passes while the host "
      .. "does one-time work inside operations (%s; \"%s\"): measure steps after warm-up first.", sf.ms(s.total_ms),
      sf.TITLE.host_time)
    idle_card.action = "First measure steps after warm-up (\"" .. sf.TITLE.host_time .. "\"); if the GPU still idles "
      .. "between launches there, " .. idle_card.action:sub(1, 1):lower() .. idle_card.action:sub(2)
  end
  if s.bottleneck and not q and leads then return { sc, idle_card } end
  return { idle_card, sc }
end

local function status_lines()
  if metrics and metrics.status ~= "ERROR" then return { "**Status**: SUCCESS" } end
  local why = metrics and tostring(metrics.error or "unknown error") or ("cpu_idle_metrics.json " .. metrics_error)
  return { "**Status**: ERROR", "",
    "Status: ERROR — the CPU/idle metrics could not be computed (" .. why .. "). The recommendations below use the "
    .. "GPU utilization of the category manifest." }
end

local function document()
  local out = { "# CPU/Idle Time Analysis Findings", "", sf.NOTE, "" }
  for _, l in ipairs(status_lines()) do out[#out + 1] = l end
  out[#out + 1] = string.format("**Idle Time**: %s (%s out of %s total)", sf.pct(u.idle), sf.ms(u.idle_ms),
    sf.ms(u.total_ms))
  out[#out + 1] = ""
  out[#out + 1] = "## Utilization Breakdown"
  out[#out + 1] = ""
  out[#out + 1] = "| Metric | Value |"
  out[#out + 1] = "|--------|-------|"
  out[#out + 1] = "| Computation | " .. sf.pct(u.compute) .. " |"
  out[#out + 1] = "| Idle | " .. sf.pct(u.idle) .. " |"
  out[#out + 1] = "| Communication | " .. sf.pct(u.comm) .. " |"
  out[#out + 1] = "| MemCpy | " .. sf.pct(u.memcpy) .. " |"
  out[#out + 1] = ""
  local none = string.format("GPU idle time is %s, within the %d%% threshold. No action is needed.", sf.pct(u.idle),
    IDLE_THRESHOLD_PCT)
  for _, l in ipairs(sf.sections(cards(), none)) do out[#out + 1] = l end
  return table.concat(out, "\n")
end

return { findings = document() }
