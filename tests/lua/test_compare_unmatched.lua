-- A comparative analysis of two traces that did not run the same work (HTA's
-- sampled ranks 0 and 1: different windows of a recommendation model's
-- training): an operation of trace 1 whose TraceDiff counterpart ran no GPU
-- work in trace 2 (lca_count_trace2 = 0) is not called slower in trace 1
-- (the reference projects 0% efficiency there, the whole time as the gap).
-- It gets no comparative efficiency and no finding; the Analysis coverage
-- line counts those operations, and the count and time are checked against
-- trace 1's unified_perf_summary.csv, read here (docs/compat.md, "operations
-- without a counterpart in trace 2").
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "cjson"

local dir = (shared or "") .. "/hta/trace_filter"
local t1, t2 = dir .. "/sampled_rank-0.json.gz", dir .. "/sampled_rank-1.json.gz"
if not (T.file_exists(t1) and T.file_exists(t2)) then T.skip("no " .. dir .. " (../shared/data)") end

local bin = T.tracelens_bin()
local tmp = T.tmpdir()
local out = tmp .. "/cmp"
local ok, code, so, se = T.run(string.format("cd %s && %s run orchestrator.lua %s --compare %s -o %s -q",
  T.q(root .. "/lua"), T.q(bin), T.q(t1), T.q(t2), T.q(out)))
T.check(ok, "orchestrator exit " .. tostring(code) .. "\n" .. so .. se)

-- what the perf report says: the rows with no trace-2 work in their LCAs
local n, ms = 0, 0
for _, r in ipairs(T.csv_records(out .. "/perf_report_trace1_csvs/unified_perf_summary.csv")) do
  if tonumber(r.lca_count_trace2) == 0 then
    n = n + 1
    ms = ms + tonumber(r["Kernel Time (µs)_sum"]) / 1000
  end
end
T.check(n > 0, "the sampled ranks have operations without a counterpart (found " .. n .. ")")

-- the metrics: those operations are flagged and have no efficiency; no
-- finding has one as a member
local flagged, flagged_ms = 0, 0
for _, f in ipairs(T.glob(out .. "/category_data/*_metrics.json")) do
  local m = json.decode(T.read_file(f))
  for _, op in ipairs(type(m.operations) == "table" and m.operations or {}) do
    if op.count_trace2 == 0 then
      flagged, flagged_ms = flagged + 1, flagged_ms + op.time_ms
      T.check(op.no_trace2_counterpart == true, f .. ": " .. op.name .. " flagged no_trace2_counterpart")
      T.check(op.efficiency.efficiency_percent == json.null, f .. ": " .. op.name .. " has no comparative efficiency")
    end
  end
  for _, cf in ipairs(type(m.category_findings) == "table" and m.category_findings or {}) do
    for _, mem in ipairs(cf.members or {}) do
      T.check(mem.efficiency_pct ~= 0, f .. ": no finding member at 0% (" .. tostring(mem.operation) .. ")")
    end
  end
end
T.eq(flagged, n, "every row without trace-2 work is flagged in the metrics")

local md = T.read_file(out .. "/analysis.md") or ""
local line = md:match("%*%*Analysis coverage%*%*:[^\n]*") or ""
local said_n, said_ms = line:match("Not compared: (%d+) operation signatures of Trace 1 %(([%d.]+) ms")
T.eq(tonumber(said_n), n, "coverage line: the count of operations not compared\n" .. line)
T.close(tonumber(said_ms), ms, "coverage line: their kernel time", nil, 0.006)
T.check(line:find("ran no GPU work in Trace 2", 1, true), "coverage line says why they are not compared")
-- no Data-table row compares with nothing ("| 1 / 0 |")
T.check(not md:find("| %d+ / 0 |"), "no finding lists an operation with no calls in trace 2")
-- a tenfold gap is questioned: fbgemm's embedding backward, 40.424 ms in
-- trace 1 against 0.023 ms in the region TraceDiff aligned it with (trace 2
-- runs the op under another shape)
local extreme = 0
for _, r in ipairs(T.csv_records(out .. "/perf_report_trace1_csvs/unified_perf_summary.csv")) do
  local t1, t2 = tonumber(r["Kernel Time (µs)_sum"]), tonumber(r.lca_total_kernel_time_trace2_us)
  if r.name:find("SplitLookupFunction", 1, true) and t2 and t2 > 0 and t1 >= 10 * t2 then extreme = extreme + 1 end
end
T.check(extreme > 0, "the perf report has a tenfold gap for the embedding backward")
T.check(md:find("Trace 2 takes under a tenth of Trace 1's time: before reading the gap as slower kernels", 1, true),
  "the tenfold gap is questioned in the findings")
-- the `other` cards are comparative here, not time-share estimates
T.check(not line:find("share of GPU time alone", 1, true), "comparative: the other cards are not called heuristic")

T.rmrf(tmp)
T.finish()
