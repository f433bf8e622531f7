-- Golden test: gpu_timeline.csv of `tracelens report` equals the reference
-- perf report (time tolerance of perf-report spec §0.3) for every shared
-- trace that has one, and trace:timeline() agrees with the CSV.
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

if not data or not T.dir_exists(data .. "/traces") then
  T.skip("../shared/data not found: golden gpu_timeline test skipped")
end
local bin = arg[3] or T.tracelens_bin()

local refs = T.glob(data .. "/traces/*/*_perf_report_csvs/gpu_timeline.csv")
for _, p in ipairs(T.glob(data .. "/traces/*/*/*_perf_report_csvs/gpu_timeline.csv")) do refs[#refs + 1] = p end
T.check(#refs >= 9, "found " .. #refs .. " reference gpu_timeline.csv files")

for _, ref in ipairs(refs) do
  local dir = ref:match("^(.*)/[^/]+$")
  local trace = dir:gsub("_perf_report_csvs$", "") .. ".json.gz"
  local out = T.tmpdir()
  local ok, code, _, err = T.run(T.q(bin) .. " report -q " .. T.q(trace) .. " -o " .. T.q(out))
  if T.check(ok, trace .. ": report failed (" .. tostring(code) .. "): " .. err) then
    local h1, r1 = T.read_csv(out .. "/perf_report_csvs/gpu_timeline.csv")
    local h2, r2 = T.read_csv(ref)
    T.eq(table.concat(h1, ","), table.concat(h2, ","), trace .. " header")
    T.eq(#r1, #r2, trace .. " rows")
    for i = 1, math.min(#r1, #r2) do
      T.eq(r1[i][1], r2[i][1], trace .. " row " .. i .. " type")
      T.close(tonumber(r1[i][2]), tonumber(r2[i][2]), trace .. " " .. r2[i][1] .. " time ms")
      T.close(tonumber(r1[i][3]), tonumber(r2[i][3]), trace .. " " .. r2[i][1] .. " percent")
    end
    -- the Lua API gives the same figures in microseconds
    local t = tl.load(trace)
    local tlv = t:timeline()
    for i = 1, #r1 do
      local v = tlv[r1[i][1]]
      if v then T.close(v / 1e3, tonumber(r1[i][2]), trace .. " timeline() " .. r1[i][1], 1e-12, 1e-12) end
    end
  end
  T.rmrf(out)
end
T.finish()
