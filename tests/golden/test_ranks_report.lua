-- Golden test: `tracelens ranks` (the multi-rank collective report) against
-- the reference's CSVs of both shared cases (../shared/data/multirank/<case>),
-- sheet by sheet, with the comparison rules of tests/lib/sheetcmp.lua and the
-- deviations keyed multirank/<case> in tests/golden/deviations.tsv
-- (docs/compat.md, "Multi-rank collective report").
local root, data, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local C = require "sheetcmp"
if not data or not T.dir_exists(data .. "/multirank") then
  T.skip("../shared/data/multirank not found: golden multi-rank test skipped")
end
bin = bin or T.tracelens_bin()

-- the sorted sheets: rows tied on the sort key compare as a set (spec §0.3, D9)
C.SORT_KEY.nccl_summary_long = "dur_sum"
C.SORT_KEY.nccl_summary_implicit_sync = "Total comm latency (ms)"
C.SORT_KEY.nccl_summary_all2allv = "Total wall_time (ms)"
C.SORT_KEY.nccl_all2allv = "total data communicated (MB)"
C.SORT_KEY.straggler_summary = "total_wait_time_us"

local cases = {
  {name = "world8", world = 8, opts = ""},
  {name = "tp_dp_16", world = 16, opts = "--all2allv_heatmap"},
}

-- The reference subtracts timestamps as doubles of ~1.7e12..4.5e12 us, whose
-- spacing (ulp) is 2.4e-4..9.8e-4 us: a difference of two ts (skews, waits)
-- carries up to a few ulps of noise, more than 1e-3 at 4.5e12. tracelens
-- subtracts exact int64 ns, so those columns get 4 ulps of the largest ts.
local function ulp(x)
  return 2.0 ^ (math.floor(math.log(x, 2)) - 52)
end

for _, c in ipairs(cases) do
  local dir = data .. "/multirank/" .. c.name
  local tname = "multirank/" .. c.name
  local out = T.tmpdir()
  local ok, code, _, err = T.run(T.q(bin) .. " ranks -q " .. c.opts .. " --trace_pattern "
    .. T.q(dir .. "/ranks/rank*_trace.json.gz") .. " --world_size " .. c.world .. " -o " .. T.q(out))
  if T.check(ok, tname .. ": ranks failed (" .. tostring(code) .. "): " .. tostring(err)) then
    local csvdir = out .. "/collective_report_csvs"
    T.check(T.file_exists(out .. "/collective_report.xlsx"), tname .. ": collective_report.xlsx written")
    -- the largest ts of the case, from our nccl_long
    local h, rows = T.read_csv(csvdir .. "/nccl_long.csv")
    local tsi
    for i, col in ipairs(h) do if col == "ts" then tsi = i end end
    local maxts = 0
    for _, r in ipairs(rows) do maxts = math.max(maxts, tonumber(r[tsi]) or 0) end
    T.check(maxts > 0, tname .. ": nccl_long has timestamps")
    local tol = math.max(1e-3, 4 * ulp(maxts))
    local cmp = C.new(T, {deviations = root .. "/tests/golden/deviations.tsv"})
    local base_kind, base_eq = cmp.kind_of, cmp.cell_eq
    function cmp:kind_of(col)
      if col:match("skew") or col:match("wait") then return "tsdiff" end
      return base_kind(self, col)
    end
    function cmp:cell_eq(kind, a, b)
      if kind == "tsdiff" then
        local x, y = tonumber(a), tonumber(b)
        if x and y then return math.abs(x - y) <= tol or math.abs(x - y) <= 1e-4 * math.abs(y) end
        return a == b
      end
      return base_eq(self, kind, a, b)
    end
    -- the same set of sheets
    local refs, mine = {}, {}
    for _, p in ipairs(T.glob(dir .. "/ref_csvs/*.csv")) do refs[#refs + 1] = p:match("([^/]+)%.csv$") end
    -- the sheets beyond the reference (docs/ranks.md; tests/lua/test_ranks_hta.lua) aside
    local extra = {rank_temporal_breakdown = true, rank_comm_overlap = true, rank_step_times = true,
      rank_stragglers = true, collective_skew_outliers = true, node_bandwidth = true, missing_ranks = true}
    for _, p in ipairs(T.glob(csvdir .. "/*.csv")) do
      local s = p:match("([^/]+)%.csv$")
      if not extra[s] then mine[#mine + 1] = s end
    end
    table.sort(refs)
    table.sort(mine)
    T.eq(table.concat(mine, " "), table.concat(refs, " "), tname .. ": sheets")
    T.check(#refs >= 5, tname .. ": reference sheets found: " .. #refs)
    for _, sheet in ipairs(refs) do
      local p = csvdir .. "/" .. sheet .. ".csv"
      if T.check(T.file_exists(p), tname .. ": sheet missing: " .. sheet) then
        cmp:compare_sheet(tname, sheet, p, dir .. "/ref_csvs/" .. sheet .. ".csv")
      end
    end
  end
  T.rmrf(out)
end
T.finish()
