-- tracelens.multi_kernel — the multi-kernel system analysis
-- (analysis-layer spec §3.5 multi_kernel_data.json, §9 multi_kernel_metrics.json).
--
-- Owns the JSON shaping only: the walk over every GPU event (classification,
-- memcpy directions, communication events, interval unions) is C
-- (src/analysis/multi_kernel.c, trace:multi_kernel_stats()). Numbers keep the
-- reference's kinds: sums over integer durations and empty sums are integers,
-- py.round keeps integers.
local json = require "tracelens.json"
local py = require "tracelens.py"

local M = {}

local r2 = function(x) return py.round(x, 2) end
local r3 = function(x) return py.round(x, 3) end
local r4 = function(x) return py.round(x, 4) end

-- Python truthiness of a JSON value (args.stream or None)
local function truthy(v)
  return v ~= nil and v ~= false and v ~= 0 and v ~= "" and not json.is_null(v)
end

local function memcpy_summary(mem)
  local by_direction = json.obj()
  local total = 0 -- the sum of the rounded per-direction totals (int 0 when none)
  for _, d in ipairs(mem.directions) do
    local t = r2(d.total)
    by_direction[d.direction] = json.obj(
      "count", d.count,
      "total_time_us", t,
      "avg_time_us", r2(d.total / d.count),
      "max_time_us", r2(d.max),
      "total_bytes", d.bytes,
      "avg_bytes", d.any_bytes and r2(d.bytes / d.count) or 0)
    total = total + t
  end
  return json.obj("total_count", mem.count, "total_time_us", r2(total), "by_direction", by_direction)
end

local function nccl_summary(comm)
  local s = json.obj("total_count", comm.count, "total_time_us", 0)
  if comm.count > 0 then
    s.total_time_us = r2(comm.total)
    s.avg_time_us = r2(comm.total / comm.count)
    s.max_time_us = r2(comm.max)
    local top = json.arr()
    for i, e in ipairs(comm.top) do
      top[i] = json.obj("name", e.name, "duration_us", r2(e.dur),
        "stream", truthy(e.stream) and e.stream or json.null)
    end
    s.top_ops = top
  end
  return s
end

local function overlap_analysis(ov)
  if not ov then return json.obj() end
  local total, comm, ecomm = ov.total, ov.total_comm, ov.exposed_comm
  local mem, emem = ov.total_memcpy, ov.exposed_memcpy
  return json.obj(
    "total_time_us", r2(total),
    "computation_time_us", r2(ov.computation),
    "total_comm_time_us", r2(comm),
    "exposed_comm_time_us", r2(ecomm),
    "total_memcpy_time_us", r2(mem),
    "exposed_memcpy_time_us", r2(emem),
    "comm_overlap_ratio", comm > 0 and r4(1 - ecomm / comm) or json.null,
    "memcpy_overlap_ratio", mem > 0 and r4(1 - emem / mem) or json.null,
    "comm_percent_of_total", total > 0 and r2(ecomm / total * 100) or 0,
    "memcpy_percent_of_total", total > 0 and r2(emem / total * 100) or 0)
end

--- The fallback of §3.5 step 6 (any error while building the data).
function M.error_data(err)
  return json.obj(
    "memcpy_summary", json.obj("total_count", 0, "total_time_us", 0, "by_direction", json.obj()),
    "nccl_summary", json.obj("total_count", 0, "total_time_us", 0),
    "overlap_analysis", json.obj(),
    "error", tostring(err))
end

-- Copy bandwidth [FIX copies] ---------------------------------------------------
-- Copies between host and device cross the host link (PCIe, NVLink-C2C,
-- Infinity Fabric): their achieved bandwidth is judged against the link's
-- GB/s per direction (the arch file's host_link_gbps), never against HBM.
-- Device-to-device copies read and write HBM: their traffic (twice the bytes
-- copied) is judged against the HBM peak. The bytes come from the copy
-- events' args.bytes; a direction without them has no bandwidth ("unknown").
-- docs/analyzers.md, "Copy bandwidth".

local AGAINST = { D2H = "host_link", H2D = "host_link", D2D = "hbm" }
M.LOW_LINK_PERCENT = 50           -- below this share of the host link, with
M.LOW_LINK_MIN_AVG_BYTES = 1048576 -- transfers of at least 1 MiB on average, a direction is flagged

--- link = {name, gbps, source, hbm_gbps} (any may be nil): the object of
--- category_data/memcpy_bandwidth.json from trace:multi_kernel_stats()'s
--- memcpy directions; host = trace:memcpy_summary()'s rows or nil, for each
--- direction's pinned copies and largest transfer (what a card's advice
--- must fit: pinned copies need no advice to pin, bulk copies are no
--- scalar reads).
function M.copy_bandwidth(mem, link, host)
  link = link or {}
  local pinned, largest = {}, {}
  for _, r in ipairs(host or {}) do
    local d = r.direction
    if r.host_memory == "pinned" then pinned[d] = (pinned[d] or 0) + (r.count or 0) end
    if r.max_bytes and r.max_bytes > (largest[d] or 0) then largest[d] = r.max_bytes end
  end
  local dirs = json.arr()
  for _, d in ipairs(mem and mem.directions or {}) do
    local against = AGAINST[d.direction]
    if against then
      local n, ns = d.bytes_count or 0, d.bytes_time_ns or 0
      local bytes = d.bytes or 0
      local gbps = n > 0 and ns > 0 and bytes / ns or nil -- bytes per ns = GB/s
      local ref = link.hbm_gbps
      if against == "host_link" then ref = link.gbps end -- never HBM for a host copy
      -- what the reference bandwidth carries: the bytes once over the link, twice (read, write) in HBM
      local traffic = gbps and (against == "hbm" and 2 * gbps or gbps)
      local pct = traffic and ref and ref > 0 and traffic / ref * 100 or nil
      local avg = n > 0 and bytes / n or nil
      dirs[#dirs + 1] = json.obj(
        "direction", d.direction,
        "count", d.count,
        "time_ms", r3(d.total / 1000),
        "bytes", bytes,
        "events_with_bytes", n,
        "achieved_gbps", gbps and r2(gbps) or json.null,
        "judged_against", against,
        "traffic_gbps", traffic and r2(traffic) or json.null,
        "reference_gbps", ref or json.null,
        "percent_of_reference", pct and r2(pct) or json.null,
        "flagged", against == "host_link" and pct ~= nil and pct < M.LOW_LINK_PERCENT
          and avg >= M.LOW_LINK_MIN_AVG_BYTES or false,
        "pinned_count", host and (pinned[d.direction] or 0) or json.null,
        "max_bytes", largest[d.direction] or json.null)
    end
  end
  return json.obj(
    "host_link", link.name or json.null,
    "host_link_gbps", link.gbps or json.null,
    "host_link_source", link.source or json.null,
    "hbm_gbps", link.hbm_gbps or json.null,
    "directions", dirs)
end

-- "137.4 MB" (decimal, as GB/s is)
local function size_text(b)
  if b < 1e3 then return string.format("%d B", math.floor(b + 0.5)) end
  if b < 1e6 then return string.format("%.1f kB", b / 1e3) end
  if b < 1e9 then return string.format("%.1f MB", b / 1e6) end
  return string.format("%.2f GB", b / 1e9)
end

local function value(v) return (v ~= nil and not json.is_null(v)) and v or nil end

-- 64, 3350, 4.8: a figure as its arch file writes it
local function figure(x)
  if x == math.floor(x) and math.abs(x) < 1e15 then return string.format("%d", math.floor(x)) end
  return string.format("%g", x)
end

--- The sentence that judges one direction of copy_bandwidth's object (bw):
--- its bandwidth against the host link (D2H, H2D) or HBM (D2D), or why it is
--- not judged. nil when the direction has no copies.
function M.copy_sentence(bw, dir)
  local d
  for _, x in ipairs(bw and bw.directions or {}) do
    if x.direction == dir then d = x end
  end
  if not d or (d.count or 0) == 0 then return nil end
  local gbps = value(d.achieved_gbps)
  if not gbps then
    return "Their bandwidth is unknown: the trace's copy events record no byte count (`args.bytes`)."
  end
  local partial = d.events_with_bytes < d.count
    and string.format(" (over the %d of %d transfers whose events record their bytes)", d.events_with_bytes, d.count)
    or ""
  local moved = string.format("They move %s at %.2f GB/s%s", size_text(d.bytes), gbps, partial)
  local ref, pct = value(d.reference_gbps), value(d.percent_of_reference)
  if d.judged_against == "hbm" then
    if not ref then return moved .. "; the GPU's HBM bandwidth is not known, so the rate is not judged." end
    return string.format("%s, %.2f GB/s of HBM traffic (each byte read and written), %.2f%% of the %s GB/s HBM "
      .. "peak.", moved, d.traffic_gbps, pct, figure(ref))
  end
  if not ref then
    return moved .. "; the host link's bandwidth is not known for this GPU (no `host_link_gbps` in its arch file), "
      .. "so the rate is not judged."
  end
  local link = value(bw.host_link)
  return string.format("%s, %.2f%% of the host link's %s GB/s per direction%s.", moved, pct, figure(ref),
    link and (" (" .. link .. ")") or "")
end

--- data(trace[, link]) -> the object of category_data/multi_kernel_data.json
--- (§3.5), and copy_bandwidth's object (link: see M.copy_bandwidth).
function M.data(trace, link)
  local bw
  local ok, res = pcall(function()
    local st = trace:multi_kernel_stats()
    bw = M.copy_bandwidth(st.memcpy, link, trace:memcpy_summary{ platform = "none" })
    return json.obj(
      "memcpy_summary", memcpy_summary(st.memcpy),
      "nccl_summary", nccl_summary(st.comm),
      "overlap_analysis", overlap_analysis(st.overlap))
  end)
  if ok then return res, bw end
  return M.error_data(res), M.copy_bandwidth(nil, link)
end

-- §9 ----------------------------------------------------------------------

local function num(v) -- a missing value counts as 0
  if v == nil or json.is_null(v) then return 0 end
  return v
end

local function memcpy_assessment(mem, total_ms)
  if not (total_ms > 0) then
    return json.obj("flagged", false, "details", "No timeline data available")
  end
  local total_us = num(mem.total_time_us)
  local pct = total_us / 1000 / total_ms * 100
  local issues, flagged = json.arr(), false
  local by = mem.by_direction or json.obj()
  for _, dir in ipairs { "D2H", "H2D" } do
    local d = by[dir]
    if d and num(d.count) > 0 then
      local ms = num(d.total_time_us) / 1000
      local dpct = ms / total_ms * 100
      if dpct > 5 or d.count > 10 then
        flagged = true
        issues[#issues + 1] = json.obj(
          "direction", dir,
          "count", d.count,
          "time_ms", r3(ms),
          "percent_of_total", r2(dpct),
          "avg_bytes", d.avg_bytes,
          "description", string.format("%s memcpy: %d transfers, %.3fms (%.2f%% of total)", dir, d.count, ms, dpct))
      end
    end
  end
  return json.obj(
    "flagged", flagged,
    "total_count", mem.total_count,
    "total_time_ms", r3(total_us / 1000),
    "percent_of_total", r2(pct),
    "issues", issues)
end

local function nccl_assessment(ov)
  if num(ov.total_comm_time_us) == 0 then
    return json.obj("flagged", false, "details", "No communication events detected")
  end
  local pct = num(ov.comm_percent_of_total)
  return json.obj(
    "flagged", pct > 5,
    "exposed_comm_time_ms", r3(num(ov.exposed_comm_time_us) / 1000),
    "total_comm_time_ms", r3(num(ov.total_comm_time_us) / 1000),
    "exposed_percent_of_total", r2(pct),
    "description", string.format("Exposed (non-overlapped) communication: %.1f%% of total GPU time", pct))
end

local function overlap_assessment(ov)
  local ratio = ov.comm_overlap_ratio
  if ratio == nil or json.is_null(ratio) or num(ov.total_comm_time_us) < 100 then
    return json.obj("flagged", false, "details", "Insufficient communication data for overlap analysis")
  end
  return json.obj(
    "flagged", ratio < 0.7,
    "overlap_ratio", r4(ratio),
    "overlap_percent", r2(ratio * 100),
    "target_percent", 70,
    "description", string.format("Compute/communication overlap: %.1f%% (target > 70%%)", ratio * 100))
end

local CHECKS = {
  { "computation_time_us", "computation_time", "Computation time" },
  { "exposed_comm_time_us", "exposed_comm_time", "Exposed communication time" },
  { "exposed_memcpy_time_us", "exposed_memcpy_time", "Exposed memcpy time" },
  { "total_time_us", "total_time", "Total GPU time" },
}

-- The timeline's rows: a Table, or a plain array of row tables.
local function timeline_rows(timeline)
  if type(timeline) == "table" and getmetatable(timeline) == nil then return ipairs(timeline) end
  return timeline:rows()
end

-- type -> time ms (the last row of a type wins, as in the reference's dict),
-- and the time of the first total_time row (the reference's total)
local function read_timeline(timeline)
  local m, total = {}, nil
  for _, row in timeline_rows(timeline) do
    if row.type ~= nil then m[row.type] = row["time ms"] end
    if row.type == "total_time" and total == nil then total = row["time ms"] end
  end
  return m, total
end

local function cross_validation(ov, tl_ms)
  local status, checks, warnings = "PASS", json.arr(), json.arr()
  for _, c in ipairs(CHECKS) do
    local key, tl_type, label = c[1], c[2], c[3]
    local mk = num(ov[key]) / 1000
    local tlv = tl_ms[tl_type]
    if tlv == nil then
      checks[#checks + 1] = json.obj("metric", label, "status", "SKIP",
        "reason", tl_type .. " not found in gpu_timeline.csv")
    elseif mk == 0 and tlv == 0 then
      checks[#checks + 1] = json.obj("metric", label, "status", "PASS", "mk_ms", 0, "tl_ms", 0, "diff_ms", 0)
    else
      local diff = math.abs(mk - tlv)
      local diff_pct = diff / math.max(mk, tlv, 1e-6) * 100
      local ok = diff_pct <= 2.0
      checks[#checks + 1] = json.obj("metric", label, "mk_ms", r3(mk), "tl_ms", r3(tlv), "diff_ms", r3(diff),
        "diff_pct", r2(diff_pct), "status", ok and "PASS" or "WARN")
      if not ok then
        status = "WARN"
        warnings[#warnings + 1] = string.format("%s: multi_kernel_data=%.3fms vs gpu_timeline=%.3fms (diff %.1f%%)",
          label, mk, tlv, diff_pct)
      end
    end
  end
  return json.obj("status", status, "checks", checks, "warnings", warnings)
end

--- The metrics written when multi_kernel_data.json is missing (§9).
function M.missing_data_metrics()
  return json.obj(
    "status", "ERROR",
    "error", "multi_kernel_data.json not found - run orchestrator_prepare.py first",
    "memcpy_assessment", json.obj("flagged", false),
    "nccl_blocking_assessment", json.obj("flagged", false),
    "overlap_assessment", json.obj("flagged", false),
    "patterns_detected", json.arr())
end

--- analyze(data, timeline) -> the object of multi_kernel_metrics.json (§9).
--- data: M.data's object (nil: the data file is missing); timeline: the
--- gpu_timeline Table (or an array of {type=, ["time ms"]=} rows), nil when
--- it cannot be read (then total time comes from the overlap data and
--- cross_validation is null).
function M.analyze(data, timeline)
  if data == nil then return M.missing_data_metrics() end
  local mem = data.memcpy_summary or json.obj()
  local nccl = data.nccl_summary or json.obj()
  local ov = data.overlap_analysis or json.obj()

  local tl_ms, total_ms
  if timeline ~= nil then
    local ok, m, total = pcall(read_timeline, timeline)
    if ok then tl_ms, total_ms = m, total end
  end
  if total_ms == nil then total_ms = num(ov.total_time_us) / 1000 end

  local mca = memcpy_assessment(mem, total_ms)
  local nba = nccl_assessment(ov)
  local ova = overlap_assessment(ov)
  local patterns = json.arr()
  if mca.flagged then
    for _, issue in ipairs(mca.issues) do
      patterns[#patterns + 1] = json.obj("pattern", "high_" .. issue.direction:lower() .. "_memcpy",
        "description", issue.description)
    end
  end
  if nba.flagged then
    patterns[#patterns + 1] = json.obj("pattern", "nccl_blocking_compute", "description", nba.description)
  end
  if ova.flagged then
    patterns[#patterns + 1] = json.obj("pattern", "poor_comm_compute_overlap", "description", ova.description)
  end

  return json.obj(
    "status", "SUCCESS",
    "total_time_ms", r3(total_ms),
    "memcpy_summary", json.obj(
      "total_count", mem.total_count,
      "total_time_ms", r3(num(mem.total_time_us) / 1000),
      "by_direction", mem.by_direction or json.obj()),
    "nccl_summary", json.obj(
      "total_count", nccl.total_count,
      "total_time_ms", r3(num(nccl.total_time_us) / 1000),
      "top_ops", nccl.top_ops or json.arr()),
    "overlap_analysis", ov,
    "memcpy_assessment", mca,
    "nccl_blocking_assessment", nba,
    "overlap_assessment", ova,
    "patterns_detected", patterns,
    "cross_validation", tl_ms and cross_validation(ov, tl_ms) or json.null,
    "impact_estimates", json.arr())
end

return M
