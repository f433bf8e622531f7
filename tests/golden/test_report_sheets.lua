-- Golden test: `tracelens report` against the reference perf-report CSVs of
-- every shared trace, sheet by sheet, column by column, with the comparison
-- rules of perf-report spec §0.3 (tests/lib/sheetcmp.lua). Known deviations
-- (the spec's FIX list) come from tests/golden/deviations.tsv.
local root, data, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local C = require "sheetcmp"
if not data or not T.dir_exists(data .. "/traces") then
  T.skip("../shared/data not found: golden report test skipped")
end
bin = bin or T.tracelens_bin()

-- the sheets tracelens writes today; the others are reported, not failed
local IMPLEMENTED = {
  gpu_timeline = true, ops_summary_by_category = true, ops_summary = true, ops_unique_args = true,
  kernel_summary = true, short_kernel_histogram = true, short_kernels_summary = true, coll_analysis = true,
  unified_perf_summary = true, GEMM = true, SDPA_fwd = true, SDPA_bwd = true, CONV_fwd = true, CONV_bwd = true,
  UnaryElementwise = true, BinaryElementwise = true, Normalization = true, Reduce_fwd = true, Reduce_bwd = true,
}

local cmp = C.new(T, {deviations = root .. "/tests/golden/deviations.tsv"})

-- the perf-report references: the shared traces (reference defaults, no
-- platform), and the agent cases (made by the analysis pipeline with the
-- MI300X arch, --group_by_num_kernels and --include_call_stack)
local cases = {}
for _, dir in ipairs(T.glob(data .. "/traces/*/*_perf_report_csvs")) do
  cases[#cases + 1] = {trace = dir:gsub("_perf_report_csvs$", "") .. ".json.gz", refdir = dir, opts = "--platform none"}
end
for _, dir in ipairs(T.glob(data .. "/traces/*/*/*_perf_report_csvs")) do
  cases[#cases + 1] = {trace = dir:gsub("_perf_report_csvs$", "") .. ".json.gz", refdir = dir, opts = "--platform none"}
end
for _, case in ipairs(T.glob(data .. "/agent_cases/standalone/*")) do
  cases[#cases + 1] = {trace = case .. "/trace.json", refdir = case .. "/ref/perf_report_csvs",
                       opts = "--platform MI300X --group-by-num-kernels --include-call-stack"}
end
T.check(#cases >= 20, "reference directories found: " .. #cases)

for _, c in ipairs(cases) do
  local trace_path, refdir = c.trace, c.refdir
  local tname = trace_path:match("([^/]+/[^/]+)%.json%.gz$") or trace_path:match("([^/]+)/trace%.json$")
  local out = T.tmpdir()
  local ok, code, _, err = T.run(T.q(bin) .. " report -q --no-xlsx " .. c.opts .. " " .. T.q(trace_path) .. " -o " .. T.q(out))
  if T.check(ok, tname .. ": report failed (" .. tostring(code) .. "): " .. err) then
    for _, ref in ipairs(T.glob(refdir .. "/*.csv")) do
      local sheet = ref:match("([^/]+)%.csv$")
      local mine = out .. "/perf_report_csvs/" .. sheet .. ".csv"
      if not IMPLEMENTED[sheet] then
        io.stderr:write("note: ", tname, " ", sheet, ": sheet not implemented yet\n")
      elseif T.check(T.file_exists(mine), tname .. ": sheet missing: " .. sheet) then
        cmp:compare_sheet(tname, sheet, mine, ref)
      end
    end
  end
  T.rmrf(out)
end
T.finish()
