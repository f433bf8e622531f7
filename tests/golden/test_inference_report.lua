-- Golden test: the inference report (inference-and-comparative spec §1.6) of
-- each shared serving case, the replay trace merged with its capture traces,
-- against the reference's perf_csvs/: the same set of sheets, each compared
-- with the golden rules (tests/lib/sheetcmp.lua) plus the inference test's:
-- columns containing "UID" tolerate |diff| < 10 (capture-merge UIDs depend
-- on copy order), the Non-Data-Mov columns are not compared. Deviations:
-- tests/golden/deviations.tsv. The capture folders are copied first, and
-- ../shared is checked to be unchanged afterwards: it is never written.
local root, data, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local C = require "sheetcmp"
if not data or not T.dir_exists(data .. "/inference") then
  T.skip("../shared/data/inference not found: golden inference report test skipped")
end
bin = bin or T.tracelens_bin()

local cmp = C.new(T, {
  deviations = root .. "/tests/golden/deviations.tsv",
  uid_tol = 10,
  ignore = {["Non-Data-Mov TFLOPS/s_mean"] = true, ["Non-Data-Mov Kernel Time (\194\181s)_sum"] = true,
            ["Non-Data-Mov Kernel Time (\194\181s)_mean"] = true},
})

local OPTS = "--inference --enable_pseudo_ops --group_by_parent_module --group_by_num_kernels --include_call_stack "
  .. "--disable_coll_analysis --platform none"

local function listing(dir)
  local ok, _, out = T.run("ls -la --time-style=+%s " .. T.q(dir))
  return ok and out or ""
end

local cases = T.glob(data .. "/inference/*")
T.check(#cases >= 2, "inference cases found: " .. #cases)
for _, case in ipairs(cases) do
  local name = case:match("([^/]+)$")
  local trace = T.glob(case .. "/*.json.gz")[1]
  local refdir = case .. "/perf_csvs"
  if T.check(trace and T.dir_exists(refdir) and T.dir_exists(case .. "/capture_traces"), name .. ": case layout") then
    local before = listing(case .. "/capture_traces")
    local out = T.tmpdir()
    T.run("cp -r " .. T.q(case .. "/capture_traces") .. " " .. T.q(out .. "/capture") .. " && chmod -R u+w "
      .. T.q(out .. "/capture"))
    local ok, code, _, err = T.run(T.q(bin) .. " report -q --no-xlsx " .. OPTS .. " --capture_folder "
      .. T.q(out .. "/capture") .. " " .. T.q(trace) .. " -o " .. T.q(out .. "/r"))
    if T.check(ok, name .. ": report failed (" .. tostring(code) .. "): " .. err) then
      local mine_dir = out .. "/r/perf_report_csvs"
      local refs, mine = {}, {}
      for _, p in ipairs(T.glob(refdir .. "/*.csv")) do refs[#refs + 1] = p:match("([^/]+)%.csv$") end
      -- tracelens's own sheets (docs/report-columns.md) have no reference
      local own = {step_breakdown = 1, idle_breakdown = 1, launch_stats = 1, user_annotations = 1,
        kernel_sequences = 1, memcpy_summary = 1, memory_peak = 1, memory_timeline = 1}
      for _, p in ipairs(T.glob(mine_dir .. "/*.csv")) do
        local s = p:match("([^/]+)%.csv$")
        if not own[s] then mine[#mine + 1] = s end
      end
      table.sort(refs)
      table.sort(mine)
      T.eq(table.concat(mine, " "), table.concat(refs, " "), name .. ": sheets")
      for _, sheet in ipairs(refs) do
        local m = mine_dir .. "/" .. sheet .. ".csv"
        if T.check(T.file_exists(m), name .. ": sheet missing: " .. sheet) then
          cmp:compare_sheet(name, sheet, m, refdir .. "/" .. sheet .. ".csv")
        end
      end
    end
    T.eq(listing(case .. "/capture_traces"), before, name .. ": the shared capture folder is unchanged")
    T.rmrf(out)
  end
end
T.finish()
