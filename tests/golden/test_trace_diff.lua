-- TraceDiff inside the perf report (spec inference-and-comparative §2.2,
-- §2.3) against the reference's outputs: for every comparative agent case
-- (../shared/data/agent_cases/comparative/<case>/trace1.json, trace2.json,
-- ref/perf_report_trace1_csvs/) and the bert comparative golden
-- (agent_golden/comparative: trace 1 the mi300 bert trace, trace 2 the h100
-- one), `tracelens report trace1 --comparison_json_path trace2` with the
-- orchestrator's flags (--group_by_num_kernels --include_call_stack
-- --enable_pseudo_ops, platform MI300X) must give
--   * diff_stats.csv: the reference's header and the same rows as a multiset
--     (text cells exactly; kernel_time, busy_time within the perf-report
--     tolerance, |a-b| <= 1e-3 or <= 1e-4 |ref|);
--   * unified_perf_summary.csv: the reference's header (the seven TraceDiff
--     columns right after Kernel Time (µs)_sum) and, per row, the seven
--     columns (lca_id and lca_name exactly, the numbers within tolerance);
--   * the diff_stats sheet in the workbook, after unified_perf_summary.
-- The same report through Lua (trace:report{compare = trace2}) gives the same
-- sheets, and tl.diff gives the same diff_stats rows.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local cases_dir = shared .. "/agent_cases/comparative"
if not tl.fs.listdir(cases_dir) then T.skip("no shared data at " .. cases_dir) end

local SEVEN = { "speedup (trace2/trace1)", "delta_us (trace2 - trace1)", "lca_count_trace2", "lca_id", "lca_name",
  "lca_total_kernel_time_trace1_us", "lca_total_kernel_time_trace2_us" }
local NUMERIC = { kernel_time = true, busy_time = true, ["speedup (trace2/trace1)"] = true,
  ["delta_us (trace2 - trace1)"] = true, lca_count_trace2 = true, lca_total_kernel_time_trace1_us = true,
  lca_total_kernel_time_trace2_us = true }
local KEYS = { "name", "op category", "process_name", "process_label", "thread_name", "Input Dims", "Input type",
  "Input Strides", "Concrete Inputs" }

-- a row's cells in the given columns, as one key
local function key_of(r, cols)
  local parts = {}
  for _, h in ipairs(cols) do parts[#parts + 1] = r[h] end
  return table.concat(parts, "\x1f")
end

-- rows grouped by key_of (lists in row order)
local function group_by(rows, cols)
  local groups = {}
  for _, r in ipairs(rows) do
    local k = key_of(r, cols)
    groups[k] = groups[k] or {}
    table.insert(groups[k], r)
  end
  return groups
end

local function read_rows(path)
  local header, rows = T.read_csv(path)
  local out = {}
  for _, r in ipairs(rows) do
    local m = {}
    for i, h in ipairs(header) do m[h] = r[i] or "" end
    out[#out + 1] = m
  end
  return header, out
end

-- numbers within the tolerance; empty cells (NaN, None) must both be empty
local function cell_ok(col, ours, ref)
  if ours == ref then return true end
  if not NUMERIC[col] then return false end
  local a, b = tonumber(ours), tonumber(ref)
  if not a or not b then return false end
  if a ~= a and b ~= b then return true end
  return math.abs(a - b) <= 1e-3 or math.abs(a - b) <= 1e-4 * math.abs(b)
end

local function same_header(ours, ref, what)
  T.eq(table.concat(ours, "|"), table.concat(ref, "|"), what .. ": header")
end

-- diff_stats rows as a multiset
local function compare_diff_stats(case, ours_path, ref_path)
  local hr, ref = read_rows(ref_path)
  local ho, ours = read_rows(ours_path)
  same_header(ho, hr, case .. " diff_stats")
  T.eq(#ours, #ref, case .. " diff_stats: rows")
  local exact = {}
  for _, h in ipairs(hr) do
    if not NUMERIC[h] then exact[#exact + 1] = h end
  end
  local pool = group_by(ours, exact)
  local missing = 0
  for _, r in ipairs(ref) do
    local cands, found = pool[key_of(r, exact)] or {}, nil
    for i, o in ipairs(cands) do
      if cell_ok("kernel_time", o.kernel_time, r.kernel_time) and cell_ok("busy_time", o.busy_time, r.busy_time) then
        found = i
        break
      end
    end
    if found then table.remove(cands, found)
    else
      missing = missing + 1
      if missing <= 5 then
        io.stderr:write(string.format("  %s: no row of ours for the reference's %s (gpu_op_uid %s, %s, lca %s)\n", case,
          r.name:sub(1, 60), r.gpu_op_uid, r.source or "", r.lowest_common_ancestor_id))
      end
    end
  end
  T.eq(missing, 0, case .. " diff_stats: reference rows without an equal row of ours")
end

-- the seven TraceDiff columns per unified_perf_summary row
local function compare_unified(case, ours_path, ref_path)
  local hr, ref = read_rows(ref_path)
  local ho, ours = read_rows(ours_path)
  same_header(ho, hr, case .. " unified_perf_summary")
  local kt
  for i, h in ipairs(hr) do
    if h == "Kernel Time (\xc2\xb5s)_sum" then kt = i end
  end
  for k, c in ipairs(SEVEN) do T.eq(hr[kt + k], c, case .. ": reference column after Kernel Time sum") end
  T.eq(#ours, #ref, case .. " unified_perf_summary: rows")
  local by_key = group_by(ours, KEYS)
  local bad = 0
  for _, r in ipairs(ref) do
    local cands, found = by_key[key_of(r, KEYS)] or {}, nil
    for i, o in ipairs(cands) do
      local all = true
      for _, c in ipairs(SEVEN) do all = all and cell_ok(c, o[c], r[c]) end
      if all then
        found = i
        break
      end
    end
    if found then table.remove(cands, found)
    else
      bad = bad + 1
      local o = cands[1] or {}
      for _, c in ipairs(SEVEN) do
        if not cell_ok(c, o[c], r[c]) then
          io.stderr:write(string.format("  %s %s: %s ours %s, reference %s\n", case, r.name, c, tostring(o[c]), r[c]))
        end
      end
    end
  end
  T.eq(bad, 0, case .. " unified_perf_summary: rows whose TraceDiff columns differ")
end

local function sheet_order(xlsx)
  local ok, code, out = T.run("unzip -p " .. T.q(xlsx) .. " xl/workbook.xml")
  if not ok then return nil end
  local names = {}
  for n in out:gmatch('<sheet name="([^"]+)"') do names[#names + 1] = n end
  return names
end

local FLAGS = "--group_by_num_kernels --include_call_stack --enable_pseudo_ops --platform MI300X -q"

local function run_case(case, t1, t2, ref_dir)
  local out = T.tmpdir()
  local ok, code, _, err = T.run(string.format("%s report %s --comparison_json_path %s %s -o %s", T.q(bin), T.q(t1),
    T.q(t2), FLAGS, T.q(out)))
  if not T.check(ok, case .. ": report exited " .. tostring(code) .. ": " .. err) then return end
  local csvs = out .. "/perf_report_csvs"
  compare_diff_stats(case, csvs .. "/diff_stats.csv", ref_dir .. "/diff_stats.csv")
  compare_unified(case, csvs .. "/unified_perf_summary.csv", ref_dir .. "/unified_perf_summary.csv")
  local names = sheet_order(out .. "/perf_report.xlsx")
  if names then
    local pos = {}
    for i, n in ipairs(names) do pos[n] = i end
    T.check(pos.diff_stats and pos.unified_perf_summary and pos.diff_stats == pos.unified_perf_summary + 1,
      case .. ": the workbook's diff_stats sheet follows unified_perf_summary")
  end
  T.rmrf(out)
end

-- the agent cases
local cases = tl.fs.listdir(cases_dir)
T.check(#cases >= 3, "comparative agent cases found")
for _, case in ipairs(cases) do
  local d = cases_dir .. "/" .. case
  run_case(case, d .. "/trace1.json", d .. "/trace2.json", d .. "/ref/perf_report_trace1_csvs")
end

-- the bert comparative golden
local bert1 = shared .. "/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz"
local bert2 = shared .. "/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
run_case("bert", bert1, bert2, shared .. "/agent_golden/comparative/perf_report_trace1_csvs")

-- the same through Lua: trace:report{compare = ...} and tl.diff
do
  local d = cases_dir .. "/" .. cases[1]
  local lo = { include_call_stack = true, enable_pseudo_ops = true }
  local t1, t2 = tl.load(d .. "/trace1.json", lo), tl.load(d .. "/trace2.json", lo)
  local r = t1:report({ compare = t2, group_by_num_kernels = true, platform = "MI300X" })
  local order = table.concat(r.__order, ",")
  T.check(order:find("unified_perf_summary,diff_stats", 1, true), "Lua report: diff_stats after unified_perf_summary")
  local tmp = T.tmpdir()
  r.diff_stats:write_csv(tmp .. "/diff_stats.csv")
  r.unified_perf_summary:write_csv(tmp .. "/unified_perf_summary.csv")
  compare_diff_stats("lua " .. cases[1], tmp .. "/diff_stats.csv", d .. "/ref/perf_report_trace1_csvs/diff_stats.csv")
  compare_unified("lua " .. cases[1], tmp .. "/unified_perf_summary.csv",
    d .. "/ref/perf_report_trace1_csvs/unified_perf_summary.csv")
  local diff = tl.diff(t1, t2)
  diff.diff_stats:write_csv(tmp .. "/tl_diff_stats.csv")
  compare_diff_stats("tl.diff " .. cases[1], tmp .. "/tl_diff_stats.csv", d .. "/ref/perf_report_trace1_csvs/diff_stats.csv")
  T.eq(diff.identical, false, "tl.diff: the traces differ")
  T.rmrf(tmp)
  -- the report without compare has neither
  local plain = t1:report({ group_by_num_kernels = true, platform = "MI300X" })
  T.eq(plain.diff_stats, nil, "no diff_stats sheet without compare")
  local cols = "," .. table.concat(plain.unified_perf_summary:columns(), ",") .. ","
  T.check(not cols:find(",lca_id,", 1, true) and not cols:find(",speedup (trace2/trace1),", 1, true),
    "no TraceDiff columns without compare")
end

T.finish()
