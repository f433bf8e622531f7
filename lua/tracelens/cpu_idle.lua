-- tracelens.cpu_idle — the numbers behind the CPU/idle analyzer
-- (analysis-layer.md §8, cpu_idle_analysis.py), from the perf report's
-- gpu_timeline, ops_summary and ops_summary_by_category sheets.
local json = require "tracelens.json"
local py = require "tracelens.py"

local M = {}

M.IDLE_THRESHOLD_PERCENT = 15

local function num(v) return type(v) == "number" and v == v and v or 0 end

-- [FIX Q7] the columns the perf report really writes: launch-op counts and
-- direct kernel time per op.
local function kernel_analysis(ops_summary, by_category)
  local ka = json.obj("short_kernel_count", 0, "total_kernel_count", 0, "avg_kernel_time_us", 0,
    "kernel_count_by_category", json.obj())
  if ops_summary and #ops_summary > 0 then
    local count, time, short = 0, 0.0, 0
    for _, row in ops_summary:rows() do
      local c, t = num(row.Count), num(row.total_direct_kernel_time_sum)
      count, time = count + c, time + t
      if c > 0 and t / c < 10 then short = short + c end
    end
    ka.short_kernel_count = math.tointeger(short) or short
    ka.total_kernel_count = math.tointeger(count) or count
    ka.avg_kernel_time_us = count > 0 and time / count or 0
  end
  if by_category then
    local counts, names = {}, {}
    for _, row in by_category:rows() do
      local cat = tostring(row["op category"])
      if counts[cat] == nil then names[#names + 1] = cat end
      counts[cat] = (counts[cat] or 0) + num(row.Count)
    end
    table.sort(names)
    for _, cat in ipairs(names) do ka.kernel_count_by_category[cat] = math.tointeger(counts[cat]) or counts[cat] end
  end
  return ka
end

--- metrics(sheets) -> the cpu_idle_metrics.json object.
function M.metrics(sheets)
  local cell = require("tracelens.prepare").timeline_getter(sheets.gpu_timeline)
  local function get(kind, col) return num(cell(kind, col)) end
  local idle = get("idle_time", "percent")
  return json.obj(
    "status", "OK",
    "idle_flagged", idle > M.IDLE_THRESHOLD_PERCENT,
    "gpu_utilization", json.obj(
      "total_time_ms", py.round(get("total_time", "time ms"), 3),
      "idle_time_ms", py.round(get("idle_time", "time ms"), 3),
      "idle_time_percent", py.round(idle, 2),
      "computation_percent", py.round(get("computation_time", "percent"), 2),
      "communication_percent", py.round(get("exposed_comm_time", "percent"), 2),
      "memcpy_percent", py.round(get("exposed_memcpy_time", "percent"), 2)),
    "kernel_analysis", kernel_analysis(sheets.ops_summary, sheets.ops_summary_by_category),
    "impact_estimates", json.arr())
end

return M
