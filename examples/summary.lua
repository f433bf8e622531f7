-- summary.lua — a small example script: GPU time per launching op, then the
-- roofline view of the top modelled ops.
-- Usage: tracelens run examples/summary.lua TRACE
local path = arg[1] or error("usage: tracelens run summary.lua TRACE")
local trace = tl.load(path)
local tlv = trace:timeline()
print(string.format("GPU busy %.1f us of %.1f us (%.1f%% idle), exposed communication %.1f us",
  tlv.busy_time, tlv.total_time, 100 * tlv.idle_time / tlv.total_time, tlv.exposed_comm_time))

local by_op, order = {}, {}
for _, cat in ipairs({"kernel", "gpu_memcpy", "gpu_memset"}) do
  for ev in trace:events{cat = cat} do
    local op = ev:launcher()
    local name = op and op.name or "(unlinked)"
    if not by_op[name] then by_op[name] = {time = 0, count = 0}; order[#order + 1] = name end
    by_op[name].time = by_op[name].time + ev.dur
    by_op[name].count = by_op[name].count + 1
  end
end
table.sort(order, function(a, b) return by_op[a].time > by_op[b].time end)
print("\nTop launching ops by GPU kernel time:")
for i = 1, math.min(10, #order) do
  local o = by_op[order[i]]
  print(string.format("  %10.1f us  %4d %-7s  %s", o.time, o.count, o.count == 1 and "kernel" or "kernels",
    order[i]))
end

-- the roofline view of the same trace: the top modelled ops of
-- unified_perf_summary (platform detected from the trace)
local report = trace:report()
print("\nRoofline, " .. report.__platform .. ":")
print(string.format("  %-40s %10s %9s %9s  %s", "op", "kernel us", "TFLOPS", "% of roof", "bound"))
local shown = 0
for _, row in report.unified_perf_summary:rows() do
  if row.has_perf_model and row["Pct Roofline_mean"] then
    print(string.format("  %-40s %10.1f %9.2f %9.1f  %s", row.name:sub(1, 40), row["Kernel Time (µs)_sum"],
      row["TFLOPS/s_mean"] or 0, row["Pct Roofline_mean"], row["Roofline Bound"] or ""))
    shown = shown + 1
    if shown == 8 then break end
  end
end
