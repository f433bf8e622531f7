-- agents/multi_kernel.lua — the multi-kernel analyzer: memory copies and
-- collective communication (agents-and-report.md §3.2).
--
-- ctx = {scope, out_dir, manifest = <category_manifest.json text>,
--        data = <multi_kernel_data.json text>, metrics = <multi_kernel_metrics.json text>,
--        copies = <memcpy_bandwidth.json text> (optional)}
-- returns {findings = <system_findings/multi_kernel_findings.md text>}
--
-- Rules (docs/analyzers.md, "System analyzers and the report"): a card only
-- for an assessment the metrics flag, one card per mechanism:
--   * communication: nccl_blocking_assessment or overlap_assessment flagged
--     (exposed communication > 5% of the trace, or overlap < 70%); both are
--     one mechanism (communication not hidden under compute), so one card;
--   * device-to-host / host-to-device copies: one card per direction listed
--     in memcpy_assessment.issues (> 5% of the trace or > 10 transfers). Their
--     bandwidth is judged against the host link (memcpy_bandwidth.json; never
--     HBM), device-to-device copies' against HBM (tracelens.multi_kernel,
--     "Copy bandwidth").
-- Order (severity): the communication card first (it stalls compute
-- directly), then the copy cards by copy time, device-to-host first on a tie.
-- Synchronization and launch overhead are left to the CPU/idle analyzer.
local sf = require "tracelens.system_findings"
local mk = require "tracelens.multi_kernel"

local ctx = ...

local metrics, metrics_error = sf.decode(ctx.metrics)
local copies = sf.decode(ctx.copies) -- nil: no bandwidth judgement (a caller without it)
local DIRECTIONS = {
  D2H = { heading = "D2H (Device-to-Host) Transfers", noun = "device-to-host",
    cause = "Device-to-host copies usually come from host reads of device values inside the step, such as reading "
      .. "a scalar, moving a tensor to the host for logging, or checking a value in host code." },
  H2D = { heading = "H2D (Host-to-Device) Transfers", noun = "host-to-device",
    cause = "Host-to-device copies usually come from input batches or constant tensors created on the host every "
      .. "step." },
}
local PATTERN_ADVICE = {
  high_d2h_memcpy = "Keep values on the device and batch the host reads that remain.",
  high_h2d_memcpy = "Copy inputs asynchronously from pinned memory and create constant tensors on the device once.",
  nccl_blocking_compute = "Overlap collectives with independent compute on a separate stream.",
  poor_comm_compute_overlap = "Overlap collectives with independent compute on a separate stream.",
}

local function obj(v) return type(v) == "table" and v or {} end

local total_ms = sf.value(obj(metrics).total_time_ms)
local memcpy = obj(obj(metrics).memcpy_assessment)
local blocking = obj(obj(metrics).nccl_blocking_assessment)
local overlap = obj(obj(metrics).overlap_assessment)
local analysis = obj(obj(metrics).overlap_analysis)
local by_direction = obj(obj(obj(metrics).memcpy_summary).by_direction)

local function pct_of_total(ms)
  if total_ms <= 0 then return 0 end
  return ms / total_ms * 100
end

local function issue_of(dir)
  for _, i in ipairs(memcpy.issues or {}) do
    if i.direction == dir then return i end
  end
end

-- Count and time of one copy direction.
-- The direction's entry of memcpy_bandwidth.json (or an empty table).
local function bandwidth_of(dir)
  for _, b in ipairs(obj(obj(copies).directions)) do
    if b.direction == dir then return b end
  end
  return {}
end

local function direction_stats(dir)
  local d = obj(by_direction[dir])
  local ms = sf.value(d.total_time_us) / 1000
  return { count = sf.value(d.count), ms = ms, pct = pct_of_total(ms), avg_bytes = sf.value(d.avg_bytes),
    issue = issue_of(dir), bw = bandwidth_of(dir), bw_sentence = copies and mk.copy_sentence(copies, dir) }
end

-- The bandwidth cell of a copy card: "10.65 GB/s (16.64% of 64 GB/s, PCIe Gen5 x16)".
local function bandwidth_cell(s)
  local b = s.bw
  if not sf.present(b.achieved_gbps) then return "unknown (no byte counts)" end
  local v = string.format("%.2f GB/s", b.achieved_gbps)
  if not sf.present(b.percent_of_reference) then return v .. " (host link bandwidth unknown)" end
  local link = sf.present(copies.host_link) and (", " .. copies.host_link) or ""
  return string.format("%s (%.2f%% of %s GB/s%s)", v, b.percent_of_reference, sf.value(b.reference_gbps) ==
    math.floor(sf.value(b.reference_gbps)) and string.format("%d", math.floor(sf.value(b.reference_gbps)))
    or tostring(b.reference_gbps), link)
end

local function bytes_text(b)
  if b < 1024 then return string.format("%d B", math.floor(b + 0.5)) end
  if b < 1024 * 1024 then return string.format("%.1f KiB", b / 1024) end
  return string.format("%.1f MiB", b / (1024 * 1024))
end

local function comm_exposed_ms() return sf.value(analysis.exposed_comm_time_us) / 1000 end
local function comm_total_ms() return sf.value(analysis.total_comm_time_us) / 1000 end

local function overlap_text()
  if sf.present(overlap.overlap_percent) then return sf.pct(overlap.overlap_percent) .. " (target > 70%)" end
  if comm_total_ms() <= 0 then return "not assessed (no communication)" end
  return "not assessed (under 100 µs of communication)"
end

-- Cards ---------------------------------------------------------------------

local function longest_collective()
  local top = obj(obj(obj(metrics).nccl_summary).top_ops)[1]
  if not top then return "" end
  return string.format(" The longest collective is %s (%s µs).", require("tracelens.md").code(top.name),
    sf.value(top.duration_us) == math.floor(sf.value(top.duration_us)) and sf.count(top.duration_us)
      or string.format("%.1f", sf.value(top.duration_us)))
end

-- The GPU's idle share of the span (nothing running: neither compute, communication nor copies), from
-- overlap_analysis; nil without its figures.
local IDLE_FIRST_PCT = 15 -- the CPU/idle analyzer's threshold
local function idle_pct()
  local t = sf.value(analysis.total_time_us)
  if t <= 0 then return nil end
  local busy = sf.value(analysis.computation_time_us) + sf.value(analysis.exposed_comm_time_us)
    + sf.value(analysis.exposed_memcpy_time_us)
  return math.max(0, (t - busy) / t * 100)
end

local function comm_card()
  local exposed, total = comm_exposed_ms(), comm_total_ms()
  local title = blocking.flagged == true and sf.TITLE.comm_blocking or sf.TITLE.comm_overlap
  -- a GPU idle most of the time has little compute to hide communication under (HTA's nccl_data: idle 76%)
  local idle = idle_pct()
  local starved = idle and idle >= IDLE_FIRST_PCT and string.format(" The GPU is also idle for %s of the span, "
    .. "running nothing: communication can only hide under compute that has been launched, so the host's supply of "
    .. "work (the CPU/idle findings) bounds what overlap can recover here.", sf.pct(idle)) or ""
  return {
    title = title,
    insight = string.format("Collective communication runs without overlapping compute for %s (%s of the GPU span), "
      .. "and %s of the communication time overlaps computation.%s", sf.ms(exposed),
      sf.pct(analysis.comm_percent_of_total), overlap_text(), starved),
    action = "Issue collectives asynchronously on a separate stream so they run under independent compute, for "
      .. "example by reducing gradients in buckets during the backward pass or by overlapping tensor-parallel "
      .. "collectives with the next layer's compute. The metric to move is exposed communication time.",
    identification = string.format("Exposed communication is %s of the GPU span (flagged above 5%%) and the "
      .. "compute/communication overlap is %s.%s (source: `multi_kernel_metrics.json` → "
      .. "`nccl_blocking_assessment`, `overlap_assessment`, `nccl_summary.top_ops`)",
      sf.pct(analysis.comm_percent_of_total), overlap_text(), longest_collective()),
    rows = {
      { "Exposed communication", sf.ms_pct(exposed, analysis.comm_percent_of_total), blocking.flagged == true },
      { "Total communication", sf.ms(total), false },
      { "Compute/communication overlap", overlap_text(), overlap.flagged == true },
      { "Collective calls", sf.count(obj(obj(metrics).nccl_summary).total_count), false },
    },
    reasoning = string.format("While a collective runs with no compute beside it, the GPU's compute units wait "
      .. "for the data it delivers. Of %s of communication, %s is exposed in this way.", sf.ms(total),
      sf.ms(exposed)),
    resolution = "Launching a collective as soon as its input is ready, on its own stream, lets independent "
      .. "kernels run while the data moves. The exposed part then shrinks towards the part that has no independent "
      .. "work to hide under.",
  }
end

-- A device-to-host transfer this large is a bulk copy, not a read of a value.
local BULK_BYTES = 1048576

local function copy_card(dir, s)
  local d = DIRECTIONS[dir]
  local action, mechanism
  local bw = s.bw or {}
  local largest, pinned = sf.value(bw.max_bytes), bw.pinned_count
  if dir == "D2H" and largest >= BULK_BYTES then
    -- bulk copies back, not scalar reads (the streams capture: two 256 MiB copies beside two 4-byte reads)
    action = string.format("Copy less back: the largest transfer moves %s, a bulk copy, not a scalar read. Keep the "
      .. "data on the device, copy fewer bytes (a smaller dtype, only what the host needs) or less often, and make "
      .. "the copy non-blocking into pinned memory so the next step's work runs meanwhile. The metric to move is "
      .. "device-to-host copy time.", bytes_text(largest))
    mechanism = "A bulk copy's time is its bytes over the host link; a blocking one also keeps the host from "
      .. "queueing work until it ends."
  elseif dir == "D2H" then
    action = "Keep values on the device: reduce on the device, read results on the host only when they are needed, "
      .. "and batch the remaining reads. The metric to move is device-to-host copy time."
    mechanism = "Each host read of a device value waits for the GPU to reach it and then copies the value back. "
      .. "Reading less often, and many values at once, removes most of these waits."
  elseif type(pinned) == "number" and pinned >= s.count and s.count > 0 then
    -- already pinned (the streams capture: `Memcpy HtoD (Pinned -> Device)` on a side stream)
    action = "The copies already come from pinned host memory: copy fewer bytes (a smaller dtype, only what "
      .. "changed), create constant tensors on the device once, or issue the copies a step ahead on their own stream "
      .. "so they overlap compute. The metric to move is host-to-device copy time."
    mechanism = "A pinned copy runs at the link's rate on a copy engine; what remains is the bytes it moves and "
      .. "whether compute runs beside it."
  else
    action = "Stage inputs in pinned host memory and copy them asynchronously ahead of use. Create constant tensors "
      .. "on the device once instead of every step. The metric to move is host-to-device copy time."
    mechanism = "Asynchronous copies from pinned memory run on a copy engine beside compute, and tensors created on "
      .. "the device never cross the host link."
  end
  local rows = {
    { string.format("%s transfers", dir), sf.count(s.count), s.count > 10 },
    { string.format("%s copy time", dir), sf.ms_pct(s.ms, s.pct), s.pct > 5 },
    { "Average transfer size", bytes_text(s.avg_bytes), false },
  }
  local bw = s.bw_sentence and (" " .. s.bw_sentence) or ""
  local slow = ""
  if s.bw_sentence then
    rows[#rows + 1] = { string.format("%s copy bandwidth", dir), bandwidth_cell(s), s.bw.flagged == true }
    if s.bw.flagged == true then
      slow = string.format(" At %s per transfer the link's rate, not the per-copy latency, should bound these "
        .. "copies, yet they reach under %d%% of it: a copy from or to pageable (unpinned) host memory is staged "
        .. "through a driver buffer, and a link shared with other traffic delivers less.",
        bytes_text(sf.value(s.bw.bytes) / math.max(1, sf.value(s.bw.events_with_bytes))), mk.LOW_LINK_PERCENT)
    end
  end
  return {
    title = sf.TITLE[dir == "D2H" and "d2h_memcpy" or "h2d_memcpy"],
    insight = string.format("%s %s transfers take %s (%s of the GPU span).%s", sf.count(s.count), d.noun, sf.ms(s.ms),
      sf.pct(s.pct), bw),
    action = action,
    identification = string.format("The %s copies are flagged because they exceed 5%% of the GPU span or number more "
      .. "than 10. %s (source: `multi_kernel_metrics.json` → `memcpy_assessment.issues`, "
      .. "`memcpy_summary.by_direction`%s)", d.noun, d.cause,
      s.bw_sentence and "; `memcpy_bandwidth.json` → `directions`" or ""),
    rows = rows,
    reasoning = string.format("A copy between host and device occupies the transfer path and, when the host waits "
      .. "for it, stalls the queue of kernels behind it. The %s transfers add up to %s.%s", sf.count(s.count),
      sf.ms(s.ms), slow),
    resolution = mechanism,
  }
end

local function cards()
  local out = {}
  if blocking.flagged == true or overlap.flagged == true then out[#out + 1] = comm_card() end
  local copies = {}
  for _, dir in ipairs({ "D2H", "H2D" }) do
    local s = direction_stats(dir)
    if s.issue then copies[#copies + 1] = { dir = dir, s = s } end
  end
  table.sort(copies, function(a, b)
    if a.s.ms ~= b.s.ms then return a.s.ms > b.s.ms end
    return a.dir == "D2H" and b.dir ~= "D2H"
  end)
  for _, c in ipairs(copies) do out[#out + 1] = copy_card(c.dir, c.s) end
  return out
end

-- Sections --------------------------------------------------------------------

local function summary_table()
  local d2h, h2d = direction_stats("D2H"), direction_stats("H2D")
  return {
    "| Metric | Value | Flagged |",
    "|--------|-------|---------|",
    "| Total Memcpy Events | " .. sf.count(obj(obj(metrics).memcpy_summary).total_count) .. " | "
      .. sf.flag_text(memcpy.flagged == true) .. " |",
    "| D2H Transfers | " .. sf.count(d2h.count) .. " (" .. sf.ms(d2h.ms) .. ") | " .. sf.flag_text(d2h.issue ~= nil)
      .. " |",
    "| H2D Transfers | " .. sf.count(h2d.count) .. " (" .. sf.ms(h2d.ms) .. ") | " .. sf.flag_text(h2d.issue ~= nil)
      .. " |",
    "| Exposed Communication | " .. sf.pct(analysis.comm_percent_of_total) .. " of total | "
      .. sf.flag_text(blocking.flagged == true) .. " |",
    "| Compute/Comm Overlap | " .. overlap_text() .. " | " .. sf.flag_text(overlap.flagged == true) .. " |",
  }
end

local function direction_section(dir)
  local d, s = DIRECTIONS[dir], direction_stats(dir)
  local cause
  if s.issue then
    cause = d.cause
  elseif s.count == 0 then
    cause = "No " .. d.noun .. " transfers in the trace."
  else
    cause = "Below the flagging thresholds (more than 5% of the GPU span or more than 10 transfers)."
  end
  local out = {
    "### " .. d.heading, "",
    "- **Count**: " .. sf.count(s.count),
    "- **Total Time**: " .. sf.ms(s.ms) .. " (" .. sf.pct(s.pct) .. " of total)",
    "- **Flagged**: " .. sf.flag_text(s.issue ~= nil),
    "- **Root Cause**: " .. cause,
  }
  if s.bw_sentence then out[#out + 1] = "- **Bandwidth**: " .. s.bw_sentence end
  out[#out + 1] = ""
  return out
end

-- Device-to-device copies are reported but never flagged (the metrics do not
-- assess them); their bandwidth, when the copy data is there, is judged
-- against HBM.
local function d2d_line()
  local d = obj(by_direction.D2D)
  if sf.value(d.count) <= 0 then return {} end
  local ms = sf.value(d.total_time_us) / 1000
  local bw = copies and mk.copy_sentence(copies, "D2D")
  return { string.format("Device-to-device copies: %s (%s, %s of total), %s", sf.count(d.count), sf.ms(ms),
    sf.pct(pct_of_total(ms)), bw and ("not flagged. " .. bw) or "not assessed."), "" }
end

local function communication_section()
  return {
    "### Communication Blocking Compute", "",
    "- **Exposed Communication Time**: " .. sf.ms(comm_exposed_ms()) .. " (" .. sf.pct(analysis.comm_percent_of_total)
      .. " of total)",
    "- **Total Communication Time**: " .. sf.ms(comm_total_ms()),
    "- **Flagged**: " .. sf.flag_text(blocking.flagged == true), "",
    "### Compute/Communication Overlap", "",
    "- **Overlap Ratio**: " .. overlap_text(),
    "- **Flagged**: " .. sf.flag_text(overlap.flagged == true), "",
  }
end

local function patterns_section()
  local out = {}
  for i, p in ipairs(obj(metrics).patterns_detected or {}) do
    out[#out + 1] = string.format("%d. **%s**: Evidence: %s. Recommendation: %s", i, tostring(p.pattern),
      tostring(p.description), PATTERN_ADVICE[p.pattern] or "See the recommendations below.")
  end
  if #out == 0 then out[1] = "No multi-kernel pattern was detected." end
  out[#out + 1] = ""
  return out
end

local function nothing_flagged()
  return string.format("No multi-kernel issue is flagged: memory copies stay below 5%% of the GPU span and 10 "
    .. "transfers per direction, exposed communication is %s of the GPU span, and the compute/communication overlap is "
    .. "%s.", sf.pct(analysis.comm_percent_of_total), overlap_text())
end

local function append(dst, src)
  for _, l in ipairs(src) do dst[#dst + 1] = l end
end

local function error_document()
  local why = metrics and tostring(metrics.error or "unknown error") or ("multi_kernel_metrics.json " .. metrics_error)
  return table.concat({ "# Multi-Kernel Issue Analysis Findings", "", sf.NOTE, "", "Status: ERROR", "",
    "**Analysis Tier**: System-Level", "", "The multi-kernel analysis failed: " .. why, "",
    "## Recommendations", "", "No recommendations: the metrics could not be computed.", "",
    "## Detailed Analysis", "" }, "\n")
end

local function document()
  if not metrics or metrics.status == "ERROR" then return error_document() end
  local out = { "# Multi-Kernel Issue Analysis Findings", "", sf.NOTE, "", "**Status**: SUCCESS",
    "**Analysis Tier**: System-Level", "", "## Summary", "" }
  append(out, summary_table())
  append(out, { "", "## Memory Copy Analysis", "" })
  append(out, direction_section("D2H"))
  append(out, direction_section("H2D"))
  append(out, d2d_line())
  append(out, { "## Communication Blocking Analysis", "" })
  append(out, communication_section())
  append(out, { "## Detected Patterns", "" })
  append(out, patterns_section())
  append(out, sf.sections(cards(), nothing_flagged()))
  return table.concat(out, "\n")
end

return { findings = document() }
