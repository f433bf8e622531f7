-- A partly analysed trace gets no unqualified verdict and says what was not
-- analysed: on OWLv2 (H100) the `other` category (aten::_softmax, 47.6% of
-- kernel time) has no analyzer, so the Compute section's verdict is limited
-- to the analysed categories, and the coverage line names the largest
-- unanalysed operation with its kernel time (checked against the reference's
-- ops_summary.csv). The host-pipeline card names the transfer kind that
-- reaches its threshold (the reference's gpu_timeline.csv).
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local case = shared .. "/traces/h100/google_owlv2-large-patch14-ensemble__1016001"
if not T.file_exists(case .. ".json.gz") then T.skip(case .. ".json.gz is absent (../shared/data)") end
local tmp = T.tmpdir()
local out = tmp .. "/owlv2"
local _, code, _, stderr = T.run(string.format("%s run orchestrator.lua %s -o %s -q", T.q(bin),
  T.q(case .. ".json.gz"), T.q(out)))
T.eq(code, 0, "owlv2: exit 0 (" .. tostring(stderr) .. ")")
local md = T.read_file(out .. "/analysis.md") or ""

-- the reference's figures
local csv_rows = T.csv_records
local softmax_ms
for _, r in ipairs(csv_rows(case .. "_perf_report_csvs/ops_summary.csv")) do
  if r.name == "aten::_softmax" then softmax_ms = tonumber(r.total_direct_kernel_time_ms) end
end
local memcpy_pct
for _, r in ipairs(csv_rows(case .. "_perf_report_csvs/gpu_timeline.csv")) do
  if r.type == "exposed_memcpy_time" then memcpy_pct = tonumber(r.percent) end
end
T.check(softmax_ms and memcpy_pct, "reference figures read")

local cov = md:match("%*%*Analysis coverage%*%*: the per%-category analyzers covered ([%d.]+)%% of GPU kernel time")
T.check(cov and tonumber(cov) < 95, "owlv2: coverage under 95%: " .. tostring(cov))
T.check(md:find(string.format("Not analysed: other, [%%d.]+ ms %%([%%d.]+%%%%%%): operations that fit no category "
  .. "with an analyzer %%(mostly `aten::_softmax` %.2f ms, inside the fusion candidate `Owlv2Attention`%%)",
  softmax_ms)), "owlv2: the coverage line names aten::_softmax with its kernel time " .. string.format("%.2f",
  softmax_ms))
T.check(not md:find("All categories are within target", 1, true), "owlv2: no unqualified verdict")
local _, n = md:gsub("No compute kernel optimization opportunities identified in the analysed categories %("
  .. cov:gsub("%.", "%%.") .. "%% of GPU kernel time%); the rest was not analysed", "")
T.eq(n, 2, "owlv2: the verdict limited to the analysed share, in the summary and the detailed section")
T.check(md:find(string.format("Exposed memory copies take %.2f%% of the trace, more than 1.0%% (exposed "
  .. "communication: 0.0%%)", memcpy_pct), 1, true) ~= nil, "owlv2: the host-pipeline card names the copies: "
  .. string.format("%.2f", memcpy_pct))
T.finish()
