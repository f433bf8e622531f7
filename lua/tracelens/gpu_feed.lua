--- tracelens.gpu_feed — the "GPU Feed and Memory" section of analysis.md
-- (issue 16): one line each when the idle time of the GPU streams is mostly
-- host wait (a CPU-bound launch), when launch delays have large outliers,
-- when host copies use pageable memory, and when a device's memory peak is
-- near its capacity. Owns these rules and their wording; the figures come
-- from C (trace:idle_breakdown, trace:launch_stats, trace:queue_length,
-- trace:memcpy_summary, trace:memory_timeline), or the same figures from
-- the perf report's idle_breakdown, launch_stats, memcpy_summary and
-- memory_peak sheets when the caller has them. Thresholds and wording:
-- docs/analyzers.md "GPU feed and memory".
local md = require "tracelens.md"
local kname = require "tracelens.kernel_name"
local sf = require "tracelens.system_findings"

local M = {}

M.HOST_WAIT_SHARE = 0.5   -- of the streams' idle time
M.MIN_IDLE_SHARE = 0.10   -- of the streams' spans
M.DELAY_RATIO = 10        -- the largest launch delay against the median
M.MIN_DELAY_US = 100      -- and at least this
M.PAGEABLE_MIN_MS = 1     -- pageable copies' time, and
M.PAGEABLE_MIN_SHARE = 0.01 -- of the streams' spans
M.MEMORY_SHARE = 0.90     -- of the device's memory
M.HOST_SYNC_SHARE = 0.5   -- of the busiest stream's idle time, host wait after a blocking call: the sync line
M.GRAPH_SHARE = 0.5       -- of the GPU events' time replayed by graph launches: graphs are not advised

-- The sheets hold the accessors' figures in other units: a time in ms is
-- ns / 1e6 of a whole number of ns, which gives the ns back exactly below
-- 2^51 ns, and then the accessors' µs (ns / 1000); bytes in MiB are bytes /
-- 2^20, exact below 2^53. So the section reads the same numbers either way;
-- a sheet with a figure beyond these is not used (nil: the accessor is).
local function us_of_ms(v)
  local ns = v * 1e6
  if not (math.abs(ns) < 2 ^ 51) then return nil end
  return math.floor(ns + 0.5) / 1000
end
local EXACT = 2 ^ 53
local function bytes_of_mib(v) return v and math.tointeger(v * 1048576) end

-- trace:idle_breakdown() and the deepest launch queue (trace:queue_length())
-- from the idle_breakdown sheet: one row per stream, in the same order, then
-- the `all` row; every stream with launches has a row and its queue figures
local function idle_of(tb)
  local streams, all, maxq = {}, nil, 0
  for _, r in tb:rows() do
    local s = { span_us = us_of_ms(r.span_ms), busy_us = us_of_ms(r.busy_time_ms), idle_us = us_of_ms(r.idle_time_ms) }
    if r.stream == "all" then
      all = s
      s.queued_idle_us = us_of_ms(r.queued_idle_ms)
      s.longest_queued = r.longest_queued and tostring(r.longest_queued)
      s.longest_queued_idle_us = r.longest_queued_idle_ms and us_of_ms(r.longest_queued_idle_ms)
      if not s.queued_idle_us then return nil end
    else
      s.device, s.stream, s.host_wait_us = r.device, math.tointeger(tonumber(r.stream)), us_of_ms(r.host_wait_ms)
      s.host_sync_wait_us, s.host_sync_wait_gaps = us_of_ms(r.host_sync_wait_ms), r.host_sync_wait_gaps
      s.host_wait_gaps = r.host_wait_gaps
      if not (s.host_wait_us and s.host_sync_wait_us) then return nil end
      streams[#streams + 1] = s
      maxq = math.max(maxq, r.max_queue_length or 0)
    end
    if not (s.span_us and s.busy_us and s.idle_us) then return nil end
  end
  return streams, all, maxq
end

-- what delay_line reads of trace:launch_stats() from the launch_stats sheet
-- (row 1: all launches, then one row per kernel name); nil when the largest
-- delay is the largest of more than one name (the first in GPU event order
-- is the accessor's)
local function launch_of(tb)
  local all, worst = tb:row(1), nil
  local max = all.launch_delay_max_us
  for i, r in tb:rows() do
    if i > 1 and all.delay_outliers > 0 and r.launch_delay_max_us == max then
      if worst then return nil end
      worst = { launch_delay_us = max, name = r.name }
    end
  end
  return { all = { count = all.count, launch_delay = { median = all.launch_delay_median_us } },
    outlier_threshold_us = all.outlier_threshold_us, outlier_count = all.delay_outliers, worst = worst }
end

local function copies_of(tb)
  local out = {}
  for _, r in tb:rows() do
    out[#out + 1] = { direction = r.direction, host_memory = r.host_memory, count = r.count,
      time_us = us_of_ms(r.time_ms) }
    if not out[#out].time_us then return nil end
  end
  return out
end

-- the GPU devices of trace:memory_timeline() from the memory_peak sheet (its
-- labels cuda:N and hip:N); nil when a peak is too large to be exact
local DEVICE_TYPES = { cuda = 1, hip = 6 }
local function memory_of(tb)
  local out = {}
  for _, r in tb:rows() do
    local kind, id = tostring(r.device):match("^(%a+):(-?%d+)$")
    if DEVICE_TYPES[kind] then
      local m = { device_type = DEVICE_TYPES[kind], device_id = math.tointeger(tonumber(id)),
        peak_allocated = bytes_of_mib(r.peak_allocated_mib), peak_reserved = bytes_of_mib(r.peak_reserved_mib),
        -- a cell holding a whole number is read as one: tostring gives its text back
        peak_allocated_op = r.peak_allocated_op and tostring(r.peak_allocated_op),
        peak_reserved_op = r.peak_reserved_op and tostring(r.peak_reserved_op) }
      if not m.peak_allocated or math.abs(m.peak_allocated) >= EXACT
          or m.peak_reserved and math.abs(m.peak_reserved) >= EXACT then
        return nil
      end
      out[#out + 1] = m
    end
  end
  return out
end

-- Whether the trace's kernels include Triton kernels (torch.compile's): the
-- kernel_summary sheet's names, else the trace's kernels
local function compiled(trace, sheets)
  local tb = sheets.kernel_summary
  if tb then
    for _, r in tb:rows() do
      if tostring(r["Kernel name"] or ""):find("^triton_") then return true end
    end
    return false
  end
  for ev in trace:events{ cat = "kernel" } do
    if ev.name:find("^triton_") then return true end
  end
  return false
end

--- The figures the section needs from a trace (arch: the arch table or nil;
--- sheets: the trace's perf report, or nil: what it holds is read from its
--- sheets instead of being computed again; facts, from the trace health
--- check: {graph_share = the share of the GPU events' time that graph
--- launches replay, with_stack = the trace has python_function events}).
--- Any error leaves the section out (nil, error text).
function M.data(trace, arch, sheets, facts)
  sheets, facts = sheets or {}, facts or {}
  local ok, d = pcall(function()
    local streams, all, maxq
    if sheets.idle_breakdown then streams, all, maxq = idle_of(sheets.idle_breakdown) end
    if not streams then
      streams, all = trace:idle_breakdown()
      maxq = 0
      for _, q in ipairs(trace:queue_length()) do maxq = math.max(maxq, q.max_length or 0) end
    end
    local ls = sheets.launch_stats and launch_of(sheets.launch_stats) or trace:launch_stats()
    local copies = sheets.memcpy_summary and copies_of(sheets.memcpy_summary) or trace:memcpy_summary{ platform = "none" }
    local memory = sheets.memory_peak and memory_of(sheets.memory_peak) or trace:memory_timeline{ samples = 1 }
    local props = {}
    for _, p in ipairs(trace:info().device_properties or {}) do
      if type(p) == "table" and math.tointeger(p.id) then props[math.tointeger(p.id)] = p end
    end
    return { streams = streams, all = all, launch = ls, max_queue = maxq, copies = copies,
      memory = memory, props = props, memory_gb = arch and tonumber(arch.memory_gb) or nil,
      graph_share = facts.graph_share or 0, compiled = compiled(trace, sheets), with_stack = facts.with_stack }
  end)
  if ok then return d end
  return nil, tostring(d)
end

local function ms(us) return string.format("%.3f ms", us / 1000) end
local function pct(x) return string.format("%.1f%%", x * 100) end

--- The stream with the most GPU busy time (d: M.data's table): the one
--- whose gaps delay the work.
function M.busiest(d)
  local best
  for _, s in ipairs(d.streams or {}) do
    if not best or (s.busy_us or 0) > (best.busy_us or 0) then best = s end
  end
  return best
end

-- the share of the GPU's idle time (all streams) with launched work waiting
-- to start, when it reaches sf.QUEUED_IDLE_SHARE
local function queued_share(d)
  local all = d.all or {}
  local idle, queued = all.idle_us or 0, all.queued_idle_us or 0
  if idle <= 0 or queued < sf.QUEUED_IDLE_SHARE * idle then return nil end
  return queued / idle
end

local function host_wait_line(d)
  local s = M.busiest(d)
  if not s then return nil end
  local idle, host, span = s.idle_us or 0, s.host_wait_us or 0, s.span_us or 0
  if span <= 0 or idle < M.MIN_IDLE_SHARE * span or host < M.HOST_WAIT_SHARE * idle then return nil end
  -- and of the GPU's span (all streams): a short stream's gaps cost little of the whole (HTA's
  -- cuda_event_sync_multi_stream: 0.032 ms of a 19.5 ms span was a "CPU-bound launch")
  local gpu_span = d.all and d.all.span_us
  if gpu_span and gpu_span > 0 and idle < M.MIN_IDLE_SHARE * gpu_span then return nil end
  -- "CPU-bound launch" only when nothing else explains the gaps: else the stream's host wait is named as such
  local function head(label)
    return string.format("- **%s**: stream %d (the busiest) is idle %s, %s of its span, and %s of that is host "
      .. "wait: the stream had run dry and its next kernel's launch call had not started (the `idle_breakdown` "
      .. "sheet).", label, s.stream, ms(idle), pct(idle / span), pct(host / idle))
  end
  local WAIT = "Host wait on the busiest stream"
  local q = queued_share(d)
  if q then
    return head(WAIT) .. string.format(" Over all streams, though, %s of the GPU's idle time passed with launched "
      .. "work waiting to start (`queued_idle_ms`): faster launches are not the main remedy; what that work waited for "
      .. "is.", pct(q))
  end
  -- other streams' work in those gaps (tp_dp_16 rank 7: stream 7 idle 19.6 ms, the GPU 2.2% of its span)
  local all = d.all or {}
  if (all.span_us or 0) > 0 and all.idle_us and all.idle_us < M.MIN_IDLE_SHARE * all.span_us then
    return head(WAIT) .. string.format(" The GPU as a whole, though, is idle only %s of its span: other streams' "
      .. "work (communication, copies) runs in most of these gaps, so faster launches on this stream gain little until "
      .. "that work shrinks or overlaps better.", pct(all.idle_us / all.span_us))
  end
  -- the host blocked in a wait for the GPU when the stream ran dry (decode loops reading a token back)
  local sync = s.host_sync_wait_us or 0
  if sync >= M.HOST_SYNC_SHARE * idle then
    return head("Host wait after synchronisation") .. string.format(" %s of that host wait (%d of %d gaps) opens while "
      .. "the host is blocked in a call that waits for the GPU (a synchronize, or a blocking copy such as `.item()` or "
      .. "`.cpu()`; `host_sync_wait_ms`): the host lets the stream's queue drain, and the GPU then waits for its next "
      .. "launch. Fewer such waits close these gaps (keep values on the device; read them back later, with a "
      .. "non-blocking copy into pinned memory and an event), not faster launches.", pct(sync / host),
      s.host_sync_wait_gaps or 0, s.host_wait_gaps or 0)
  end
  return head("CPU-bound launch") .. " The host does not issue work fast enough; " .. M.fewer_launches(d)
    .. " close these gaps; while the stream waits for the host, faster kernels do not shorten the step, so the "
    .. "GPU-side findings below may gain less than their estimates." .. M.stack_caveat(d)
end

--- A sentence when the trace was recorded with Python stacks (d.with_stack):
--- the profiler's own host time is in every op, so host-bound gaps may be
--- partly its own; "" otherwise.
function M.stack_caveat(d)
  if not d.with_stack then return "" end
  return " The trace was recorded with `with_stack=True`, which adds the profiler's own host time to every op: "
    .. "time the step without the profiler before acting on the host's pace."
end

--- The remedies for launch-bound gaps that the trace does not already use
--- (d: M.data's table): CUDA graphs unless graph replays run most of the
--- GPU time, `torch.compile` with CUDA graphs when its kernels are there.
function M.fewer_launches(d)
  if (d.graph_share or 0) >= M.GRAPH_SHARE then
    return "the work already runs as graph replays, so less host work between the replays (or fused kernels inside "
      .. "the captured region)"
  end
  if d.compiled then
    return 'fewer and larger launches (`torch.compile(mode="reduce-overhead")`, which captures the compiled code '
      .. "here in CUDA graphs; fused kernels) or less host work between them"
  end
  return "fewer and larger launches (CUDA graphs, `torch.compile`, fused kernels) or less host work between them"
end

local function delay_line(d)
  local ls = d.launch or {}
  local all = ls.all
  -- the outliers: their count and the largest, the first of equals (from the
  -- sheet: outlier_count and worst)
  local n, worst = ls.outlier_count or #(ls.outliers or {}), ls.worst
  if not all or (all.count or 0) == 0 or n == 0 then return nil end
  if not worst then
    worst = ls.outliers[1]
    for _, o in ipairs(ls.outliers) do
      if o.launch_delay_us > worst.launch_delay_us then worst = o end
    end
  end
  local med = all.launch_delay.median
  if worst.launch_delay_us < M.MIN_DELAY_US or worst.launch_delay_us < M.DELAY_RATIO * math.max(med, 1) then
    return nil
  end
  return string.format("- **Launch delay outliers**: a kernel starts a median %.1f µs after its launch call; %d "
    .. "launch%s wait%s more than the p95 (%.1f µs), up to %s (%s). At most %d GPU operation%s %s queued on a stream, "
    .. "launched and not yet finished (`max_queue_length` in `idle_breakdown`; a graph launch queues all its kernels "
    .. "at once): with a deep queue a long delay is the host running ahead of a "
    .. "busy GPU; with a shallow one the kernel waited on another stream, an event or the driver (the "
    .. "`launch_stats` sheet).", med, n, n == 1 and "" or "es", n == 1 and "s" or "", ls.outlier_threshold_us,
    ms(worst.launch_delay_us), md.code(kname.short(worst.name)), d.max_queue, d.max_queue == 1 and "" or "s",
    d.max_queue == 1 and "was" or "were")
end

local function pageable_line(d)
  local n, us, dirs = 0, 0, {}
  for _, c in ipairs(d.copies or {}) do
    if c.host_memory == "pageable" then
      n, us = n + c.count, us + c.time_us
      dirs[#dirs + 1] = c.direction
    end
  end
  local span = d.all and d.all.span_us or 0
  if n == 0 or us < M.PAGEABLE_MIN_MS * 1000 or span <= 0 or us < M.PAGEABLE_MIN_SHARE * span then return nil end
  return string.format("- **Pageable host copies**: %d %s copies (%s, %s of the GPU span) use pageable host "
    .. "memory, which the driver stages through a pinned buffer while the host waits (for a device-to-host copy, "
    .. "until it completes); pinned host tensors (`pin_memory=True`, `tensor.pin_memory()`) copied with "
    .. "`non_blocking=True` let the host go on (the `memcpy_summary` sheet).", n, table.concat(dirs, " and "), ms(us),
    pct(us / span))
end

local GIB = 1024 * 1024 * 1024
local GPU_TYPES = { [1] = "cuda", [6] = "hip" } -- c10::DeviceType of GPU memory (ROCm's is HIP)

local function memory_lines(d)
  local out = {}
  for _, m in ipairs(d.memory or {}) do
    local kind = GPU_TYPES[m.device_type]
    if kind then
      local p = d.props[m.device_id]
      local cap = p and tonumber(p.totalGlobalMem)
      local src = "`totalGlobalMem` in the trace's deviceProperties"
      if not cap and d.memory_gb then
        cap, src = d.memory_gb * 1e9, "the arch file's memory_gb"
      end
      local peak = m.peak_reserved or m.peak_allocated
      if cap and cap > 0 and peak >= M.MEMORY_SHARE * cap then
        local what = m.peak_reserved and "reserves" or "allocates"
        local op = m.peak_reserved and m.peak_reserved_op or m.peak_allocated_op
        out[#out + 1] = string.format("- **Memory near capacity**: %s:%d %s up to %.2f GiB, %s of its %.2f GiB "
          .. "(%s)%s; tensors allocated at most %.2f GiB. A larger batch or sequence, or fragmentation, can run out "
          .. "of memory here (the `memory_peak` and `memory_timeline` sheets).", kind, m.device_id, what, peak / GIB,
          pct(peak / cap), cap / GIB, src, op and (", during " .. md.code(op)) or "", m.peak_allocated / GIB)
      end
    end
  end
  return out
end

--- The section's lines (empty when nothing qualifies or d is nil).
function M.section(d)
  if not d then return {} end
  local lines = {}
  for _, f in ipairs({ host_wait_line, delay_line, pageable_line }) do
    local l = f(d)
    if l then lines[#lines + 1] = l end
  end
  for _, l in ipairs(memory_lines(d)) do lines[#lines + 1] = l end
  if #lines == 0 then return {} end
  local out = { "## GPU Feed and Memory", "" }
  for _, l in ipairs(lines) do out[#out + 1] = l end
  out[#out + 1] = ""
  return out
end

return M
