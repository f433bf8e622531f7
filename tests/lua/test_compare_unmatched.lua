-- A comparative analysis of two traces that did not run the same work (HTA's
-- sampled ranks 0 and 1: different windows of a recommendation model's
-- training), checked against both perf reports' unified_perf_summary.csv,
-- read here:
-- - an operation of trace 1 whose TraceDiff counterpart ran no GPU work in
--   trace 2 (lca_count_trace2 = 0) and whose signature trace 2 does not run
--   is not called slower in trace 1 (the reference projects 0% efficiency
--   there, the whole time as the gap): no comparative efficiency, no
--   finding, counted on the Analysis coverage line (docs/compat.md,
--   "operations without a counterpart in trace 2");
-- - an operation whose signature trace 2 runs, where TraceDiff aligned no
--   trace-2 work or work that makes the gap more than twice the gap to trace
--   2's own calls, is compared with those calls (docs/compat.md,
--   "Comparative: the same signature in Trace 2").
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

-- what the perf reports say. Trace 2's calls by signature (name, Input
-- Dims, Input type, Concrete Inputs), from its own unified_perf_summary.
local KT = "Kernel Time (µs)_sum"
local function key(r)
  return table.concat({ r.name, r["Input Dims"] or "", r["Input type"] or "", r["Concrete Inputs"] or "" }, "\1")
end
local sig2 = {}
for _, r in ipairs(T.csv_records(out .. "/perf_report_trace2_csvs/unified_perf_summary.csv")) do
  local c, us = tonumber(r.operation_count), tonumber(r[KT])
  if c and c > 0 and us then
    local e = sig2[key(r)] or { c = 0, us = 0 }
    e.c, e.us = e.c + c, e.us + us
    sig2[key(r)] = e
  end
end
-- not compared: no trace-2 work in their LCAs and no call of the signature
-- in trace 2; compared call for call: the signature runs in trace 2 and
-- the LCAs hold no trace-2 work or give more than twice the direct gap
local n, ms, rebased, rebased_ms, lca_zero = 0, 0, 0, 0, 0
for _, r in ipairs(T.csv_records(out .. "/perf_report_trace1_csvs/unified_perf_summary.csv")) do
  local t1, c1, e = tonumber(r[KT]), tonumber(r.operation_count), sig2[key(r)]
  local lc, l2 = tonumber(r.lca_count_trace2), tonumber(r.lca_total_kernel_time_trace2_us)
  if lc == 0 then lca_zero = lca_zero + 1 end
  if t1 and t1 > 0 then
    if e then
      local direct = e.us * c1 / e.c
      local aligned = lc ~= 0 and l2
      if not aligned or (t1 - l2 > 0 and t1 - direct < (t1 - l2) / 2) then
        rebased, rebased_ms = rebased + 1, rebased_ms + t1 / 1000
      end
    elseif lc == 0 then
      n, ms = n + 1, ms + t1 / 1000
    end
  end
end
T.check(n > 0, "the sampled ranks have operations without a counterpart (found " .. n .. ")")
T.check(lca_zero > n, "some operations without aligned trace-2 work run in trace 2 with the same shapes")
T.check(rebased > 100, "the sampled ranks' alignment pairs many operations with other work (found " .. rebased .. ")")

-- the metrics: those operations are flagged and have no efficiency; no
-- finding has one as a member
local flagged, flagged_ms = 0, 0
for _, f in ipairs(T.glob(out .. "/category_data/*_metrics.json")) do
  local m = json.decode(T.read_file(f))
  for _, op in ipairs(type(m.operations) == "table" and m.operations or {}) do
    if op.no_trace2_counterpart == true then
      flagged, flagged_ms = flagged + 1, flagged_ms + op.time_ms
      T.eq(op.count_trace2, 0, f .. ": " .. op.name .. " flagged no_trace2_counterpart has no aligned region")
      T.check(op.efficiency.efficiency_percent == json.null, f .. ": " .. op.name .. " has no comparative efficiency")
    end
    if op.trace2_basis == "same_signature" then
      T.check(op.t2_time_ms > 0 and op.count_trace2 > 0, f .. ": " .. op.name .. " compared with trace 2's calls")
      -- aten::mm (8192x512)(512x8192): 2.503 ms in trace 1, TraceDiff aligned
      -- 0.02 ms, trace 2 runs the same two calls for 2.611 ms
      if op.name == "aten::mm" and op.time_ms == 2.503 then
        T.eq(op.t2_time_ms, 2.611, "aten::mm 8192x512x8192: trace 2's own two calls")
        T.eq(op.t2_aligned_ms, 0.02, "aten::mm 8192x512x8192: what TraceDiff aligned")
      end
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
T.check(line:find("have no counterpart in Trace 2 (TraceDiff aligns them with no Trace 2 GPU work, and Trace 2 runs "
  .. "no call with the same name and shapes)", 1, true), "coverage line says why they are not compared")
local re_n, re_ms = line:match("Compared call for call: (%d+) operation signatures of Trace 1 %(([%d.]+) ms")
T.eq(tonumber(re_n), rebased, "coverage line: the count of operations compared call for call")
T.close(tonumber(re_ms), rebased_ms, "coverage line: their kernel time", nil, 0.006)
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
-- trace 2 runs the embedding backward with a 262144x1296 table: 2 calls, 106.57 ms
T.check(md:find("Under other shapes, Trace 2 runs `torch::autograd::CppNode<SplitLookupFunction_rowwise_adagrad_Op>` "
  .. "2 times for 106.57 ms", 1, true), "the tenfold gap: what trace 2 runs of the op under other shapes")
-- the `other` cards are comparative here, not time-share estimates
T.check(not line:find("share of GPU time alone", 1, true), "comparative: the other cards are not called heuristic")

T.rmrf(tmp)
T.finish()
