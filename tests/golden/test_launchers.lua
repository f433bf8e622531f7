-- Golden test: for every kernel, its launching op (ev:launcher()); the set of
-- launcher names equals the `name` column of the reference ops_summary.csv.
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
if not data or not T.dir_exists(data .. "/traces") then
  T.skip("../shared/data not found: golden launcher test skipped")
end

local function is_comm(name)
  local l = name:lower()
  return l:find("nccl", 1, true) or l:find("rccl", 1, true) or l:find("cross_device_reduce", 1, true)
end

local refs = T.glob(data .. "/traces/*/*_perf_report_csvs/ops_summary.csv")
for _, p in ipairs(T.glob(data .. "/traces/*/*/*_perf_report_csvs/ops_summary.csv")) do refs[#refs + 1] = p end
T.check(#refs >= 8, "found " .. #refs .. " reference ops_summary.csv files")
for _, ref in ipairs(refs) do
  local trace_path = ref:match("^(.*)_perf_report_csvs/") .. ".json.gz"
  local trace = tl.load(trace_path)
  local got, n = {}, 0
  for _, cat in ipairs({"kernel", "gpu_memcpy", "gpu_memset"}) do
    for ev in trace:events{cat = cat} do
      if not is_comm(ev.name) then
        local l = ev:launcher()
        if l then got[l.name] = true; n = n + 1 end
      end
    end
  end
  local header, rows = T.read_csv(ref)
  T.eq(header[1], "name", ref .. " first column")
  local want = {}
  for _, r in ipairs(rows) do want[r[1]] = true end
  for name in pairs(want) do T.check(got[name], trace_path .. ": launcher missing: " .. name) end
  for name in pairs(got) do T.check(want[name], trace_path .. ": unexpected launcher: " .. name) end
  T.check(n > 0, trace_path .. ": kernels with launchers")
end
T.finish()
